/*
 * softdoca — tasks: per-type pools, submit, completion delivery.
 *
 * A pool is one calloc'ed array of the library's task structs, made when
 * the context starts and released when it is IDLE again; allocate and free
 * only move tasks on and off a free list.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bad_state.h"
#include "ctx.h"
#include "graph.h"
#include "log_internal.h"
#include "pe.h"
#include "trace.h"

SDK_LOG_REGISTER(TASK)

SOFTDOCA_EXPORT void softdoca_task_type_init(struct softdoca_task_type *type, struct doca_ctx *ctx,
					     const char *name, const struct softdoca_task_ops *ops,
					     size_t task_size)
{
	type->ctx = ctx;
	type->name = name;
	type->ops = ops;
	type->task_size = task_size;
	type->num_tasks = 0;
	type->pool = NULL;
	type->pool_tasks = 0;
	type->free_list = NULL;
	type->num_allocated = 0;
	if (ctx->num_task_types < SOFTDOCA_CTX_MAX_TASK_TYPES)
		ctx->task_types[ctx->num_task_types++] = type;
	else
		SDK_LOG_CRIT("%s: too many task types on one context", name);
}

SOFTDOCA_EXPORT doca_error_t softdoca_task_type_set_conf(struct softdoca_task_type *type,
							 doca_task_completion_cb_t success_cb,
							 doca_task_completion_cb_t error_cb, uint32_t num_tasks)
{
	if (type->ctx->state != DOCA_CTX_STATE_IDLE) {
		char what[64];

		snprintf(what, sizeof(what), "%s set_conf", type->name);
		return softdoca_ctx_check_idle(type->ctx, what);
	}
	if (success_cb == NULL || error_cb == NULL) {
		SDK_LOG_ERR("%s set_conf: both the success and the error callback are required", type->name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (num_tasks == 0 || num_tasks > SOFTDOCA_TASK_POOL_MAX) {
		SDK_LOG_ERR("%s set_conf: num_tasks %u out of range [1, %u]", type->name, num_tasks, SOFTDOCA_TASK_POOL_MAX);
		return DOCA_ERROR_INVALID_VALUE;
	}
	type->success_cb = success_cb;
	type->error_cb = error_cb;
	type->num_tasks = num_tasks;
	return DOCA_SUCCESS;
}

static doca_error_t task_pool_create(struct softdoca_task_type *type)
{
	uint32_t i;
	char *mem;

	if (type->num_tasks == 0)
		return DOCA_SUCCESS;
	mem = calloc(type->num_tasks, type->task_size);
	if (mem == NULL) {
		SDK_LOG_ERR("%s: no memory for a pool of %u tasks", type->name, type->num_tasks);
		return DOCA_ERROR_NO_MEMORY;
	}
	type->pool = mem;
	type->pool_tasks = type->num_tasks;
	type->free_list = NULL;
	/* Push in reverse so tasks come out in array order. */
	for (i = type->num_tasks; i-- > 0;) {
		struct doca_task *task = (struct doca_task *)(mem + (size_t)i * type->task_size);

		task->type = type;
		task->state = SOFTDOCA_TASK_FREE;
		task->next = type->free_list;
		type->free_list = task;
	}
	type->num_allocated = 0;
	return DOCA_SUCCESS;
}

static void task_pool_destroy(struct softdoca_task_type *type)
{
	free(type->pool);
	type->pool = NULL;
	type->pool_tasks = 0;
	type->free_list = NULL;
	type->num_allocated = 0;
}

/* The context is going away: every pool goes, allocated tasks or not. */
void core_task_pools_destroy(struct doca_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->num_task_types; i++)
		task_pool_destroy(ctx->task_types[i]);
	ctx->num_allocated = 0;
}

/* The context is IDLE: the pools go unless the application still holds
 * tasks from them. Programs written against DOCA stop a context whose
 * reusable tasks are allocated and free them after it is idle (DOCA's
 * stop waits only for tasks in flight); those tasks stay valid until
 * freed, the next start (which keeps their pool) or destroy. */
void core_task_pools_release(struct doca_ctx *ctx)
{
	if (ctx->num_allocated == 0) {
		core_task_pools_destroy(ctx);
		return;
	}
	SDK_LOG_INFO("%s context is idle with %u task(s) still allocated: they stay valid until doca_task_free "
		     "(or the context is destroyed)",
		     ctx->ops->name, ctx->num_allocated);
}

doca_error_t core_task_pools_create(struct doca_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->num_task_types; i++) {
		struct softdoca_task_type *type = ctx->task_types[i];

		type->empty_explained = false;
		if (type->pool != NULL && type->num_allocated > 0) {
			/* Tasks allocated before the last stop stay the
			 * application's: keep their pool (and its size). */
			SDK_LOG_WARN("%s: %u task(s) allocated before the last doca_ctx_stop are still allocated; they "
				     "stay valid and this start keeps their pool of %u tasks (free them with "
				     "doca_task_free)",
				     type->name, type->num_allocated, type->pool_tasks);
			type->num_tasks = type->pool_tasks; /* what libraries size by */
			continue;
		}
		task_pool_destroy(type);
		if (task_pool_create(type) != DOCA_SUCCESS) {
			core_task_pools_release(ctx);
			return DOCA_ERROR_NO_MEMORY;
		}
	}
	ctx->inflight_free_explained = false;
	ctx->stop_explained = false;
	return DOCA_SUCCESS;
}

static __attribute__((noinline, cold)) doca_error_t task_alloc_bad_state(const struct softdoca_task_type *type)
{
	char what[64];

	snprintf(what, sizeof(what), "%s alloc", type->name);
	return softdoca_ctx_check_state(type->ctx, SOFTDOCA_CTX_STATE_BIT(DOCA_CTX_STATE_RUNNING), what,
					"allocate tasks after doca_ctx_start succeeded or the state callback said running");
}

/* The pool ran dry: programs usually retry, so say why once per start. */
static __attribute__((noinline, cold)) void task_pool_explain_empty(struct softdoca_task_type *type)
{
	const struct doca_ctx *ctx = type->ctx;

	if (type->empty_explained) {
		SDK_LOG_DBG("%s alloc: all %u tasks are in use", type->name, type->pool_tasks);
		return;
	}
	type->empty_explained = true;
	SDK_LOG_WARN("%s alloc: DOCA_ERROR_NO_MEMORY: all %u tasks of its pool are allocated; %zu task(s) of this %s "
		     "context in flight. Free tasks once they complete (doca_task_free) or raise num_tasks in this "
		     "task type's set_conf before doca_ctx_start (said once per task type and start)",
		     type->name, type->pool_tasks, ctx->num_inflight, ctx->ops->name);
}

SOFTDOCA_EXPORT doca_error_t softdoca_task_alloc_on(struct softdoca_task_type *type, union doca_data user_data,
						    uint32_t trace_tid, struct doca_task **task_out)
{
	struct doca_ctx *ctx = type->ctx;
	struct doca_task *task;

	if (unlikely(ctx->state != DOCA_CTX_STATE_RUNNING))
		return task_alloc_bad_state(type);
	task = type->free_list;
	if (unlikely(task == NULL)) {
		if (type->num_tasks == 0)
			SDK_LOG_ERR("%s alloc: no task pool; call the task's set_conf before start", type->name);
		else
			task_pool_explain_empty(type);
		return DOCA_ERROR_NO_MEMORY;
	}
	type->free_list = task->next;
	task->next = NULL;
	task->state = SOFTDOCA_TASK_ALLOCATED;
	task->freed = false;
	task->status = DOCA_SUCCESS;
	task->user_data = user_data;
	task->graph_slot = NULL;
	task->trace_tid = trace_tid;
	type->num_allocated++;
	ctx->num_allocated++;
	if (unlikely(softdoca_trace_on))
		softdoca_trace_task_allocated(task);
	*task_out = task;
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_task_alloc(struct softdoca_task_type *type, union doca_data user_data,
						 struct doca_task **task_out)
{
	return softdoca_task_alloc_on(type, user_data, type->ctx->trace_tid, task_out);
}

/* Back to its pool. A context that is idle already drops its pools with
 * the last task the application held. */
static void task_release(struct doca_task *task)
{
	struct softdoca_task_type *type = task->type;
	struct doca_ctx *ctx = type->ctx;

	if (unlikely(softdoca_trace_on))
		softdoca_trace_task_freed(task);
	task->state = SOFTDOCA_TASK_FREE;
	task->freed = false;
	task->next = type->free_list;
	type->free_list = task;
	type->num_allocated--;
	ctx->num_allocated--;
	if (ctx->state == DOCA_CTX_STATE_IDLE && ctx->num_allocated == 0)
		core_task_pools_destroy(ctx);
}

/*
 * DOCA (doca_pe.h) says a task may be freed "as long as it is not
 * submitted", yet NVIDIA's secure_channel frees post-receive tasks it
 * keeps resubmitting, then stops the context: on hardware that works. So
 * a free of an in-flight task is taken as giving the task up: it returns
 * to its pool when its completion (normally stop's flush) is delivered,
 * and that completion runs no callback (the application may have
 * released what the callback would touch).
 */
static void task_free_inflight(struct doca_task *task)
{
	struct doca_ctx *ctx = task->type->ctx;

	if (task->freed) {
		SDK_LOG_ERR("doca_task_free: %s task %p was freed already (while in flight; it goes back to its pool "
			    "when it completes)",
			    task->type->name, (void *)task);
		return;
	}
	if (task->graph_slot != NULL) {
		SDK_LOG_ERR("doca_task_free: %s task %p is a node of a running graph instance; free it after the "
			    "instance completed",
			    task->type->name, (void *)task);
		return;
	}
	task->freed = true;
	if (ctx->inflight_free_explained) {
		SDK_LOG_DBG("doca_task_free: %s task %p is in flight: released when it completes", task->type->name,
			    (void *)task);
		return;
	}
	ctx->inflight_free_explained = true;
	SDK_LOG_INFO("doca_task_free: %s task %p is in flight: it goes back to its pool when it completes or "
		     "doca_ctx_stop flushes it, and no completion callback runs for it (said once per start)",
		     task->type->name, (void *)task);
}

DOCA_STABLE
void doca_task_free(struct doca_task *task)
{
	if (task == NULL) {
		SDK_LOG_ERR("doca_task_free: task is NULL");
		return;
	}
	switch (task->state) {
	case SOFTDOCA_TASK_ALLOCATED:
		task_release(task);
		return;
	case SOFTDOCA_TASK_INFLIGHT:
		task_free_inflight(task);
		return;
	default:
		SDK_LOG_ERR("doca_task_free: task %p is already free", (void *)task);
		return;
	}
}

/* For the PE stall monitor (pe_stall.c). Submits of one PE's contexts
 * come from the thread that progresses it: a plain load and store. */
static inline void task_count_submitted(struct doca_pe *pe, uint64_t delta)
{
	atomic_store_explicit(&pe->tasks_submitted,
			      atomic_load_explicit(&pe->tasks_submitted, memory_order_relaxed) + delta,
			      memory_order_relaxed);
}

static doca_error_t task_submit_flags(struct doca_task *task, bool flush)
{
	struct doca_ctx *ctx;
	doca_error_t status;

	if (unlikely(task == NULL)) {
		SDK_LOG_ERR("doca_task_submit: task is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (unlikely(task->state != SOFTDOCA_TASK_ALLOCATED))
		return softdoca_bad_state("doca_task_submit", "task",
					  task->state == SOFTDOCA_TASK_FREE ? "free (not allocated)" : "in flight",
					  "allocated and not in flight",
					  "submit a task once; submit it again only after its completion callback ran");
	ctx = task->type->ctx;
	if (unlikely(ctx->state != DOCA_CTX_STATE_RUNNING))
		return softdoca_ctx_check_state(ctx, SOFTDOCA_CTX_STATE_BIT(DOCA_CTX_STATE_RUNNING), "doca_task_submit",
						"a stopping context takes no new tasks");
	/* Count it in flight first: the engine may complete it on another
	 * thread before submit returns. */
	task->state = SOFTDOCA_TASK_INFLIGHT;
	task->status = DOCA_SUCCESS;
	ctx->num_inflight++;
	task_count_submitted(ctx->pe, 1);
	task->no_flush = !flush;
	/* Before the library's submit: the engine may complete it at once. */
	if (unlikely(softdoca_trace_on))
		softdoca_trace_task_submitted(task);
	status = task->type->ops->submit(task);
	if (unlikely(status != DOCA_SUCCESS)) {
		task->state = SOFTDOCA_TASK_ALLOCATED;
		ctx->num_inflight--;
		task_count_submitted(ctx->pe, (uint64_t)-1);
		if (unlikely(softdoca_trace_on))
			softdoca_trace_task_submit_failed(task, status);
		return status;
	}
	SDK_LOG_TRC("%s task %p submitted", task->type->name, (void *)task);
	return DOCA_SUCCESS;
}

static doca_error_t task_submit(struct doca_task *task)
{
	return task_submit_flags(task, true);
}

doca_error_t core_task_submit(struct doca_task *task)
{
	return task_submit(task);
}

DOCA_STABLE
doca_error_t doca_task_submit(struct doca_task *task)
{
	return task_submit(task);
}

DOCA_EXPERIMENTAL
doca_error_t doca_task_submit_ex(struct doca_task *task, uint32_t flags)
{
	const uint32_t known = DOCA_TASK_SUBMIT_FLAG_FLUSH | DOCA_TASK_SUBMIT_FLAG_OPTIMIZE_REPORTS;

	if (flags & ~known) {
		SDK_LOG_ERR("doca_task_submit_ex: unknown flags 0x%x", flags & ~known);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Without FLUSH the doorbell may wait (softdoca_task_may_wait). */
	return task_submit_flags(task, (flags & DOCA_TASK_SUBMIT_FLAG_FLUSH) != 0);
}

DOCA_STABLE
doca_error_t doca_task_try_submit(struct doca_task *task)
{
	doca_error_t status;

	if (task == NULL) {
		SDK_LOG_ERR("doca_task_try_submit: task is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (task->state == SOFTDOCA_TASK_ALLOCATED && task->type->ops->check != NULL) {
		status = task->type->ops->check(task);
		if (status != DOCA_SUCCESS)
			return status;
	}
	return task_submit(task);
}

SOFTDOCA_EXPORT void softdoca_task_complete(struct doca_task *task, doca_error_t status)
{
	task->status = status;
	if (unlikely(softdoca_trace_on))
		softdoca_trace_task_done(task, status);
	core_pe_enqueue_completion(task->type->ctx->pe, task);
}

void core_task_deliver(struct doca_task *task)
{
	struct softdoca_task_type *type = task->type;
	struct doca_ctx *ctx = type->ctx;
	doca_task_completion_cb_t cb;

	ctx->num_inflight--;
	task->state = SOFTDOCA_TASK_ALLOCATED;
	if (unlikely(softdoca_trace_on))
		softdoca_trace_task_completed(task);
	if (unlikely(task->freed)) {
		SDK_LOG_TRC("%s task %p completed after it was freed: %s; back to its pool", type->name, (void *)task,
			    doca_error_get_name(task->status));
		task_release(task);
		return;
	}
	if (unlikely(task->graph_slot != NULL)) {
		/* A graph node: DOCA does not call the task's own callbacks. */
		SDK_LOG_TRC("%s task %p completed in a graph: %s", type->name, (void *)task,
			    doca_error_get_name(task->status));
		core_graph_task_done(task);
		return;
	}
	cb = task->status == DOCA_SUCCESS ? type->success_cb : type->error_cb;
	SDK_LOG_TRC("%s task %p completed: %s", type->name, (void *)task, doca_error_get_name(task->status));
	cb(task, task->user_data, ctx->user_data);
}

DOCA_STABLE
doca_error_t doca_task_get_status(const struct doca_task *task)
{
	if (task == NULL) {
		SDK_LOG_ERR("doca_task_get_status: task is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return task->status;
}

DOCA_STABLE
void doca_task_set_user_data(struct doca_task *task, union doca_data user_data)
{
	if (task == NULL) {
		SDK_LOG_ERR("doca_task_set_user_data: task is NULL");
		return;
	}
	task->user_data = user_data;
}

DOCA_STABLE
union doca_data doca_task_get_user_data(const struct doca_task *task)
{
	union doca_data none = {.u64 = 0};

	if (task == NULL) {
		SDK_LOG_ERR("doca_task_get_user_data: task is NULL");
		return none;
	}
	return task->user_data;
}

DOCA_STABLE
struct doca_ctx *doca_task_get_ctx(const struct doca_task *task)
{
	if (task == NULL) {
		SDK_LOG_ERR("doca_task_get_ctx: task is NULL");
		return NULL;
	}
	return task->type->ctx;
}

/* Task batches: no softdoca context hands them out, so any pointer that
 * arrives here was not made by us. */
static doca_error_t task_batch_not_supported(const char *what)
{
	SDK_LOG_ERR("%s: task batches are not supported by softdoca contexts", what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_submit(struct doca_task_batch *task_batch)
{
	(void)task_batch;
	return task_batch_not_supported("doca_task_batch_submit");
}

DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_try_submit(struct doca_task_batch *task_batch)
{
	(void)task_batch;
	return task_batch_not_supported("doca_task_batch_try_submit");
}

DOCA_EXPERIMENTAL
void doca_task_batch_free(struct doca_task_batch *task_batch)
{
	(void)task_batch;
	(void)task_batch_not_supported("doca_task_batch_free");
}

DOCA_EXPERIMENTAL
void doca_task_batch_set_user_data(struct doca_task_batch *task_batch, union doca_data user_data)
{
	(void)task_batch;
	(void)user_data;
	(void)task_batch_not_supported("doca_task_batch_set_user_data");
}

DOCA_EXPERIMENTAL
uint16_t doca_task_batch_get_tasks_num(struct doca_task_batch *task_batch)
{
	(void)task_batch;
	(void)task_batch_not_supported("doca_task_batch_get_tasks_num");
	return 0;
}

DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_get_status(const struct doca_task_batch *task_batch)
{
	(void)task_batch;
	return task_batch_not_supported("doca_task_batch_get_status");
}

DOCA_EXPERIMENTAL
union doca_data doca_task_batch_get_user_data(const struct doca_task_batch *task_batch)
{
	union doca_data none = {.u64 = 0};

	(void)task_batch;
	(void)task_batch_not_supported("doca_task_batch_get_user_data");
	return none;
}

DOCA_EXPERIMENTAL
struct doca_ctx *doca_task_batch_get_ctx(const struct doca_task_batch *task_batch)
{
	(void)task_batch;
	(void)task_batch_not_supported("doca_task_batch_get_ctx");
	return NULL;
}

DOCA_EXPERIMENTAL
union doca_data doca_task_batch_get_ctx_user_data(const struct doca_task_batch *task_batch)
{
	union doca_data none = {.u64 = 0};

	(void)task_batch;
	(void)task_batch_not_supported("doca_task_batch_get_ctx_user_data");
	return none;
}
