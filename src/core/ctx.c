/*
 * softdoca — the generic context state machine.
 *
 * Every state change goes through ctx_set_state, which fires the
 * state-changed callback. IDLE -> RUNNING (or STARTING) happens in
 * doca_ctx_start; RUNNING -> STOPPING in doca_ctx_stop or on a fatal error;
 * STOPPING -> IDLE once no task is in flight and the library has finished
 * its teardown — inside doca_ctx_stop when that is already true (it returns
 * DOCA_SUCCESS), otherwise from doca_pe_progress once the flushed tasks'
 * completions were delivered (doca_ctx_stop returned DOCA_ERROR_IN_PROGRESS).
 *
 * Tasks that are allocated but not in flight do not hold a stop: DOCA's
 * doca_ctx_stop returns IN_PROGRESS only when "some tasks are still in
 * progress" (doca_ctx.h), and programs written against hardware free
 * their reusable tasks after the context is idle (Tonny-Gu/dpa-bench);
 * such tasks stay valid until freed (task.c, core_task_pools_release).
 */
#include <stdio.h>
#include <string.h>

#include "bad_state.h"
#include "ctx.h"
#include "dev.h"
#include "live.h"
#include "log_internal.h"
#include "pe.h"
#include "trace.h"
#include "waker.h"

SDK_LOG_REGISTER(CTX)

SOFTDOCA_EXPORT const char *softdoca_ctx_state_name(enum doca_ctx_states state)
{
	switch (state) {
	case DOCA_CTX_STATE_IDLE:
		return "idle";
	case DOCA_CTX_STATE_STARTING:
		return "starting";
	case DOCA_CTX_STATE_RUNNING:
		return "running";
	case DOCA_CTX_STATE_STOPPING:
		return "stopping";
	}
	return "unknown";
}

static void ctx_set_state(struct doca_ctx *ctx, enum doca_ctx_states next)
{
	enum doca_ctx_states prev = ctx->state;

	ctx->state = next;
	if (unlikely(softdoca_trace_on))
		softdoca_trace_ctx_state(ctx, softdoca_ctx_state_name(prev), softdoca_ctx_state_name(next));
	SDK_LOG_TRC("%s ctx %p: %s -> %s", ctx->ops->name, (void *)ctx, softdoca_ctx_state_name(prev),
		    softdoca_ctx_state_name(next));
	if (ctx->state_cb != NULL)
		ctx->state_cb(ctx->user_data, ctx, prev, next);
}

SOFTDOCA_EXPORT doca_error_t softdoca_ctx_init(struct doca_ctx *ctx, const struct softdoca_ctx_ops *ops,
					       struct doca_dev *dev)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->ops = ops;
	ctx->dev = dev;
	ctx->state = DOCA_CTX_STATE_IDLE;
	ctx->trace_tid = softdoca_trace_new_track();
	if (softdoca_live_add(ctx, SOFTDOCA_LIVE_CTX) != DOCA_SUCCESS)
		return DOCA_ERROR_NO_MEMORY;
	/* The device must outlive the context: doca_dev_close says IN_USE. */
	if (dev != NULL)
		softdoca_dev_hold(dev);
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_ctx_fini(struct doca_ctx *ctx)
{
	if (ctx->state != DOCA_CTX_STATE_IDLE)
		return softdoca_ctx_check_state(ctx, SOFTDOCA_CTX_STATE_BIT(DOCA_CTX_STATE_IDLE), "context destroy",
						"stop it and progress its PE until it is idle before destroying it");
	if (ctx->pe != NULL) {
		core_pe_remove_ctx(ctx->pe, ctx);
		ctx->pe = NULL;
	}
	core_task_pools_destroy(ctx);
	if (ctx->dev != NULL) {
		softdoca_dev_release(ctx->dev);
		ctx->dev = NULL;
	}
	softdoca_live_remove(ctx);
	return DOCA_SUCCESS;
}

/* "idle or running": the states of mask, for a log line. */
static const char *ctx_states_text(unsigned int mask, char *text, size_t size)
{
	static const enum doca_ctx_states all[] = {DOCA_CTX_STATE_IDLE, DOCA_CTX_STATE_STARTING,
						   DOCA_CTX_STATE_RUNNING, DOCA_CTX_STATE_STOPPING};
	size_t used = 0;

	text[0] = '\0';
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if ((mask & SOFTDOCA_CTX_STATE_BIT(all[i])) == 0)
			continue;
		int n = snprintf(text + used, size - used, "%s%s", used > 0 ? " or " : "",
				 softdoca_ctx_state_name(all[i]));

		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	return text;
}

SOFTDOCA_EXPORT doca_error_t softdoca_ctx_check_state(const struct doca_ctx *ctx, unsigned int mask,
						      const char *func, const char *hint)
{
	char needs[48], object[48];

	if (mask & SOFTDOCA_CTX_STATE_BIT(ctx->state))
		return DOCA_SUCCESS;
	snprintf(object, sizeof(object), "%s context", ctx->ops->name);
	return softdoca_bad_state(func, object, softdoca_ctx_state_name(ctx->state),
				  ctx_states_text(mask, needs, sizeof(needs)), hint);
}

SOFTDOCA_EXPORT doca_error_t softdoca_ctx_check_idle(const struct doca_ctx *ctx, const char *what)
{
	return softdoca_ctx_check_state(ctx, SOFTDOCA_CTX_STATE_BIT(DOCA_CTX_STATE_IDLE), what,
					"configure it before doca_ctx_start or after it stopped");
}

DOCA_STABLE
doca_error_t doca_ctx_start(struct doca_ctx *ctx)
{
	doca_error_t status;

	if (ctx == NULL) {
		SDK_LOG_ERR("doca_ctx_start: ctx is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (ctx->state != DOCA_CTX_STATE_IDLE)
		return softdoca_ctx_check_state(ctx, SOFTDOCA_CTX_STATE_BIT(DOCA_CTX_STATE_IDLE), __func__,
						"it was started already; stop it and let it reach idle to restart it");
	/* DOCA's doca_ctx.h names this case: NOT_CONNECTED (only the CPU
	 * datapath exists here, so a PE is always needed). */
	if (ctx->pe == NULL) {
		SDK_LOG_ERR("doca_ctx_start: %s context is not connected to a progress engine (doca_pe_connect_ctx)",
			    ctx->ops->name);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	status = core_task_pools_create(ctx);
	if (status != DOCA_SUCCESS)
		return status;

	status = ctx->ops->start != NULL ? ctx->ops->start(ctx) : DOCA_SUCCESS;
	if (status == DOCA_SUCCESS) {
		ctx_set_state(ctx, DOCA_CTX_STATE_RUNNING);
		return DOCA_SUCCESS;
	}
	if (status == DOCA_ERROR_IN_PROGRESS) {
		ctx_set_state(ctx, DOCA_CTX_STATE_STARTING);
		return DOCA_ERROR_IN_PROGRESS;
	}
	core_task_pools_release(ctx);
	return status;
}

SOFTDOCA_EXPORT void softdoca_ctx_start_done(struct doca_ctx *ctx, doca_error_t status)
{
	if (ctx->state != DOCA_CTX_STATE_STARTING)
		return;
	if (status == DOCA_SUCCESS) {
		ctx_set_state(ctx, DOCA_CTX_STATE_RUNNING);
		return;
	}
	SDK_LOG_ERR("%s context failed to start: %s", ctx->ops->name, doca_error_get_descr(status));
	core_task_pools_release(ctx);
	ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
}

static void ctx_begin_stop(struct doca_ctx *ctx)
{
	ctx->stop_ns = softdoca_waker_now_ns();
	ctx->stop_explained = false;
	ctx_set_state(ctx, DOCA_CTX_STATE_STOPPING);
	if (ctx->ops->stop != NULL)
		ctx->ops->stop(ctx);
}

bool core_ctx_try_finish_stop(struct doca_ctx *ctx)
{
	if (ctx->num_inflight > 0)
		return false;
	if (ctx->ops->stop_finished != NULL && !ctx->ops->stop_finished(ctx))
		return false;
	if (ctx->ops->stopped != NULL)
		ctx->ops->stopped(ctx);
	/* Before the state change: the state callback may free the tasks
	 * still allocated, which then drop the pools themselves. */
	core_task_pools_release(ctx);
	ctx_set_state(ctx, DOCA_CTX_STATE_IDLE);
	return true;
}

void core_ctx_explain_stopping(struct doca_ctx *ctx)
{
	uint32_t after_ms = softdoca_explain_after_ms();
	uint64_t waited_ms;

	if (ctx->stop_explained || after_ms == 0)
		return;
	waited_ms = (softdoca_waker_now_ns() - ctx->stop_ns) / 1000000u;
	if (waited_ms < after_ms)
		return;
	ctx->stop_explained = true;
	if (ctx->num_inflight > 0) {
		SDK_LOG_WARN("%s context %p has been stopping for %llu ms: %zu task(s) still in flight; their flushed "
			     "completions are delivered by doca_pe_progress (said once per stop)",
			     ctx->ops->name, (void *)ctx, (unsigned long long)waited_ms, ctx->num_inflight);
		return;
	}
	SDK_LOG_WARN("%s context %p has been stopping for %llu ms: no task is in flight; the context is still "
		     "tearing down (its peers or connections are closing), which doca_pe_progress finishes (said once "
		     "per stop)",
		     ctx->ops->name, (void *)ctx, (unsigned long long)waited_ms);
}

DOCA_STABLE
doca_error_t doca_ctx_stop(struct doca_ctx *ctx)
{
	if (ctx == NULL) {
		SDK_LOG_ERR("doca_ctx_stop: ctx is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	switch (ctx->state) {
	case DOCA_CTX_STATE_IDLE:
		return DOCA_SUCCESS;
	case DOCA_CTX_STATE_STOPPING:
		return DOCA_ERROR_IN_PROGRESS;
	case DOCA_CTX_STATE_STARTING:
	case DOCA_CTX_STATE_RUNNING:
		break;
	}
	ctx_begin_stop(ctx);
	/* Inside a callback the stop finishes when doca_pe_progress resumes
	 * (as DOCA does: a stop from callback context is asynchronous). */
	if (!atomic_load_explicit(&ctx->pe->progressing, memory_order_relaxed) && core_ctx_try_finish_stop(ctx))
		return DOCA_SUCCESS;
	SDK_LOG_DBG("%s ctx %p stopping: %zu task(s) in flight; doca_pe_progress delivers their flushed completions "
		    "and finishes the stop",
		    ctx->ops->name, (void *)ctx, ctx->num_inflight);
	return DOCA_ERROR_IN_PROGRESS;
}

SOFTDOCA_EXPORT bool softdoca_task_may_wait(const struct doca_task *task)
{
	const struct doca_ctx *ctx = task->type->ctx;

	return task->no_flush ||
	       (ctx->pe != NULL && atomic_load_explicit(&ctx->pe->progressing, memory_order_relaxed));
}

SOFTDOCA_EXPORT void softdoca_ctx_fail(struct doca_ctx *ctx, doca_error_t reason)
{
	if (ctx->state != DOCA_CTX_STATE_RUNNING && ctx->state != DOCA_CTX_STATE_STARTING)
		return;
	SDK_LOG_ERR("%s context stops after a fatal error: %s", ctx->ops->name, doca_error_get_descr(reason));
	ctx_begin_stop(ctx);
}

SOFTDOCA_EXPORT void softdoca_ctx_end(struct doca_ctx *ctx, const char *why)
{
	if (ctx->state != DOCA_CTX_STATE_RUNNING && ctx->state != DOCA_CTX_STATE_STARTING)
		return;
	SDK_LOG_INFO("%s context stops: %s", ctx->ops->name, why);
	ctx_begin_stop(ctx);
}

DOCA_STABLE
doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks)
{
	if (ctx == NULL || num_inflight_tasks == NULL) {
		SDK_LOG_ERR("doca_ctx_get_num_inflight_tasks: %s is NULL", ctx == NULL ? "ctx" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*num_inflight_tasks = ctx->num_inflight;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data)
{
	if (ctx == NULL) {
		SDK_LOG_ERR("doca_ctx_set_user_data: ctx is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	ctx->user_data = user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data)
{
	if (ctx == NULL || user_data == NULL) {
		SDK_LOG_ERR("doca_ctx_get_user_data: %s is NULL", ctx == NULL ? "ctx" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = ctx->user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb)
{
	if (ctx == NULL) {
		SDK_LOG_ERR("doca_ctx_set_state_changed_cb: ctx is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (softdoca_ctx_check_idle(ctx, "doca_ctx_set_state_changed_cb") != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	ctx->state_cb = cb;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state)
{
	if (ctx == NULL || state == NULL) {
		SDK_LOG_ERR("doca_ctx_get_state: %s is NULL", ctx == NULL ? "ctx" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*state = ctx->state;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
void doca_ctx_flush_tasks(struct doca_ctx *ctx)
{
	(void)ctx; /* submissions are never held back, so nothing waits for a flush */
}

static doca_error_t ctx_not_supported(const char *what)
{
	SDK_LOG_ERR("%s: not supported on softdoca soft devices (no GPU/DPA datapath, no interrupt vectors)", what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev)
{
	(void)ctx;
	(void)gpu_dev;
	return ctx_not_supported("doca_ctx_set_datapath_on_gpu");
}

DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_dpa(struct doca_ctx *ctx, struct doca_dpa *dpa_dev)
{
	(void)ctx;
	(void)dpa_dev;
	return ctx_not_supported("doca_ctx_set_datapath_on_dpa");
}

DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_completion_vector(struct doca_ctx *ctx, uint32_t completion_vector)
{
	(void)ctx;
	(void)completion_vector;
	return ctx_not_supported("doca_ctx_set_completion_vector");
}

DOCA_EXPERIMENTAL
doca_error_t doca_ctx_cap_get_num_completion_vectors(const struct doca_devinfo *devinfo,
						     uint32_t *num_completion_vectors)
{
	if (devinfo == NULL || num_completion_vectors == NULL) {
		SDK_LOG_ERR("doca_ctx_cap_get_num_completion_vectors: %s is NULL",
			    devinfo == NULL ? "devinfo" : "num_completion_vectors");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* A capability query: its NOT_SUPPORTED is an answer, not a mistake,
	 * so info level (tools probing every query, doca_caps, stay quiet). */
	SDK_LOG_INFO("doca_ctx_cap_get_num_completion_vectors: not supported on softdoca soft devices (no"
		     " interrupt vectors)");
	return DOCA_ERROR_NOT_SUPPORTED;
}
