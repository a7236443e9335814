/*
 * softdoca — progress engine.
 *
 * doca_pe_progress does three things, in order: lets every connected
 * context progress its engine (which may complete tasks), delivers the
 * queued completions to their callbacks, and finishes contexts whose stop
 * is complete. Completions can be queued by any thread; they are only ever
 * delivered here, on the caller's thread.
 *
 * Notification: the handle is an eventfd. Once armed by
 * doca_pe_request_notification, the first queued completion (or
 * softdoca_pe_wake) makes it readable. Arm-then-check on one side and
 * queue-then-check-armed on the other, both sequentially consistent, make
 * sure a wake-up is never lost.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bad_state.h"
#include "ctx.h"
#include "graph.h"
#include "live.h"
#include "log_internal.h"
#include "pe.h"

SDK_LOG_REGISTER(PE)

DOCA_STABLE
doca_error_t doca_pe_create(struct doca_pe **pe)
{
	struct doca_pe *p;

	if (pe == NULL) {
		SDK_LOG_ERR("doca_pe_create: pe output pointer is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		SDK_LOG_ERR("doca_pe_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	p->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->event_fd < 0) {
		SDK_LOG_ERR("doca_pe_create: eventfd failed: %s", strerror(errno));
		free(p);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (softdoca_live_add(p, SOFTDOCA_LIVE_PE) != DOCA_SUCCESS) {
		close(p->event_fd);
		free(p);
		return DOCA_ERROR_NO_MEMORY;
	}
	atomic_init(&p->armed, false);
	atomic_init(&p->progressing, false);
	atomic_init(&p->cq_top, NULL);
	atomic_init(&p->cq_queued, 0);
	atomic_init(&p->cq_delivered, 0);
	atomic_init(&p->progress_calls, 0);
	atomic_init(&p->tasks_submitted, 0);
	atomic_init(&p->notify_requests, 0);
	p->event_mode = DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE;
	core_pe_stall_watch(p);
	SDK_LOG_TRC("pe %p created", (void *)p);
	*pe = p;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_pe_destroy(struct doca_pe *pe)
{
	if (pe == NULL) {
		SDK_LOG_ERR("doca_pe_destroy: pe is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(pe, SOFTDOCA_LIVE_PE, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (pe->ctxs != NULL)
		return softdoca_lifecycle_refuse(DOCA_ERROR_IN_USE, __func__, "pe", "connected to contexts",
						 "without any",
						 "destroy every context connected to it (doca_pe_connect_ctx) first");
	if (pe->graphs != NULL && pe->graphs->num_graphs > 0)
		return softdoca_lifecycle_refuse(DOCA_ERROR_IN_USE, __func__, "pe", "bound to graphs", "without any",
						 "doca_graph_destroy every graph created on it first");
	core_pe_stall_unwatch(pe);
	free(pe->graphs);
	close(pe->event_fd);
	softdoca_live_remove(pe);
	SDK_LOG_TRC("pe %p destroyed", (void *)pe);
	free(pe);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx)
{
	if (pe == NULL || ctx == NULL) {
		SDK_LOG_ERR("doca_pe_connect_ctx: %s is NULL", pe == NULL ? "pe" : "ctx");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(pe, SOFTDOCA_LIVE_PE, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (ctx->pe != NULL) {
		SDK_LOG_ERR("doca_pe_connect_ctx: %s context is already connected to a progress engine",
			    ctx->ops->name);
		return DOCA_ERROR_ALREADY_EXIST;
	}
	if (ctx->state != DOCA_CTX_STATE_IDLE)
		return softdoca_ctx_check_idle(ctx, "doca_pe_connect_ctx");
	ctx->pe = pe;
	ctx->pe_next = pe->ctxs;
	pe->ctxs = ctx;
	return DOCA_SUCCESS;
}

void core_pe_remove_ctx(struct doca_pe *pe, struct doca_ctx *ctx)
{
	struct doca_ctx **link;

	for (link = &pe->ctxs; *link != NULL; link = &(*link)->pe_next) {
		if (*link == ctx) {
			*link = ctx->pe_next;
			ctx->pe_next = NULL;
			return;
		}
	}
}

static void pe_signal(struct doca_pe *pe)
{
	uint64_t one = 1;

	/* EAGAIN means the counter is already non-zero: readable anyway. */
	if (write(pe->event_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		SDK_LOG_ERR("pe %p: eventfd write failed: %s", (void *)pe, strerror(errno));
}

SOFTDOCA_EXPORT void softdoca_pe_wake(struct doca_pe *pe)
{
	if (atomic_exchange(&pe->armed, false))
		pe_signal(pe);
}

/* Queue a completed task; called through softdoca_task_complete. */
void core_pe_enqueue_completion(struct doca_pe *pe, struct doca_task *task)
{
	struct doca_task *top = atomic_load_explicit(&pe->cq_top, memory_order_relaxed);

	atomic_fetch_add_explicit(&pe->cq_queued, 1, memory_order_relaxed);
	do {
		task->next = top;
	} while (!atomic_compare_exchange_weak_explicit(&pe->cq_top, &top, task, memory_order_release,
							memory_order_relaxed));
	softdoca_pe_wake(pe);
}

/* The consumer's own list, oldest first: what it held back, then
 * everything pushed since, reversed into arrival order. */
static struct doca_task *pe_collect(struct doca_pe *pe)
{
	struct doca_task *top, *fifo = NULL, **tail;

	if (atomic_load_explicit(&pe->cq_top, memory_order_relaxed) != NULL) {
		top = atomic_exchange_explicit(&pe->cq_top, NULL, memory_order_acquire);
		while (top != NULL) {
			struct doca_task *next = top->next;

			top->next = fifo;
			fifo = top;
			top = next;
		}
	}
	for (tail = &pe->cq_held; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = fifo;
	return pe->cq_held;
}

/* Take every queued completion at once; new ones wait for the next call. */
static struct doca_task *pe_take_completions(struct doca_pe *pe)
{
	struct doca_task *all;

	if (pe->cq_held == NULL && atomic_load_explicit(&pe->cq_top, memory_order_relaxed) == NULL)
		return NULL;
	all = pe_collect(pe);
	pe->cq_held = NULL;
	return all;
}

unsigned int core_pe_discard_ctx_completions(struct doca_pe *pe, struct doca_ctx *ctx)
{
	struct doca_task **link;
	unsigned int dropped = 0;

	(void)pe_collect(pe);
	for (link = &pe->cq_held; *link != NULL;) {
		if (softdoca_task_ctx(*link) == ctx) {
			*link = (*link)->next;
			dropped++;
			continue;
		}
		link = &(*link)->next;
	}
	atomic_fetch_add_explicit(&pe->cq_delivered, dropped, memory_order_relaxed);
	return dropped;
}

static unsigned int pe_progress_contexts(struct doca_pe *pe)
{
	struct doca_ctx *ctx, *next;
	unsigned int events = 0;

	for (ctx = pe->ctxs; ctx != NULL; ctx = next) {
		next = ctx->pe_next;
		if (ctx->state != DOCA_CTX_STATE_IDLE && ctx->ops->progress != NULL)
			events += ctx->ops->progress(ctx);
	}
	return events;
}

static unsigned int pe_deliver_completions(struct doca_pe *pe)
{
	struct doca_task *task, *next;
	unsigned int events = 0;

	for (task = pe_take_completions(pe); task != NULL; task = next) {
		next = task->next;
		core_task_deliver(task);
		events++;
	}
	if (events > 0)
		atomic_fetch_add_explicit(&pe->cq_delivered, events, memory_order_relaxed);
	return events;
}

static unsigned int pe_deliver_ctx_events(struct doca_pe *pe)
{
	struct doca_ctx *ctx, *next;
	unsigned int events = 0;

	for (ctx = pe->ctxs; ctx != NULL; ctx = next) {
		next = ctx->pe_next;
		if (ctx->state != DOCA_CTX_STATE_IDLE && ctx->ops->deliver != NULL)
			events += ctx->ops->deliver(ctx);
	}
	return events;
}

static unsigned int pe_finish_stops(struct doca_pe *pe)
{
	struct doca_ctx *ctx, *next;
	unsigned int events = 0;

	for (ctx = pe->ctxs; ctx != NULL; ctx = next) {
		next = ctx->pe_next;
		if (ctx->state != DOCA_CTX_STATE_STOPPING)
			continue;
		if (core_ctx_try_finish_stop(ctx))
			events++;
		else
			core_ctx_explain_stopping(ctx);
	}
	return events;
}

DOCA_STABLE
uint8_t doca_pe_progress(struct doca_pe *pe)
{
	unsigned int events;

	if (unlikely(pe == NULL)) {
		SDK_LOG_ERR("doca_pe_progress: pe is NULL");
		return 0;
	}
	atomic_store_explicit(&pe->progressing, true, memory_order_relaxed);
	/* One writer (this thread): a plain load and store, no locked add. */
	atomic_store_explicit(&pe->progress_calls,
			      atomic_load_explicit(&pe->progress_calls, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	events = pe_progress_contexts(pe);
	events += pe_deliver_completions(pe);
	if (unlikely(pe->graphs != NULL))
		events += core_graph_progress(pe);
	events += pe_deliver_ctx_events(pe);
	events += pe_finish_stops(pe);
	atomic_store_explicit(&pe->progressing, false, memory_order_relaxed);
	return events > 0;
}

static bool pe_has_work(struct doca_pe *pe)
{
	struct doca_ctx *ctx;

	if (pe->cq_held != NULL || atomic_load(&pe->cq_top) != NULL)
		return true;
	if (pe->graphs != NULL && core_graph_has_work(pe))
		return true;
	for (ctx = pe->ctxs; ctx != NULL; ctx = ctx->pe_next) {
		if (ctx->state == DOCA_CTX_STATE_STOPPING)
			return true;
		if (ctx->state != DOCA_CTX_STATE_IDLE && ctx->ops->has_work != NULL && ctx->ops->has_work(ctx))
			return true;
	}
	return false;
}

DOCA_STABLE
doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle)
{
	if (pe == NULL || handle == NULL) {
		SDK_LOG_ERR("doca_pe_get_notification_handle: %s is NULL", pe == NULL ? "pe" : "handle");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(pe, SOFTDOCA_LIVE_PE, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*handle = pe->event_fd;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_pe_set_notification_handle(struct doca_pe *pe, doca_notification_handle_t handle,
					     union doca_data completion_key)
{
	(void)completion_key;
	if (pe == NULL) {
		SDK_LOG_ERR("doca_pe_set_notification_handle: pe is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	SDK_LOG_ERR("doca_pe_set_notification_handle: a PE takes no outside handle on Linux (handle %lld refused); "
		    "wait on the PE's own one from doca_pe_get_notification_handle", (long long)handle);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_STABLE
doca_error_t doca_pe_request_notification(struct doca_pe *pe)
{
	if (pe == NULL) {
		SDK_LOG_ERR("doca_pe_request_notification: pe is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(pe, SOFTDOCA_LIVE_PE, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	atomic_fetch_add_explicit(&pe->notify_requests, 1, memory_order_relaxed);
	atomic_store(&pe->armed, true);
	/* Work that arrived before arming would never signal: check now. */
	if (pe_has_work(pe))
		softdoca_pe_wake(pe);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle)
{
	uint64_t value;

	(void)handle; /* Linux: the PE knows its own handle */
	if (pe == NULL) {
		SDK_LOG_ERR("doca_pe_clear_notification: pe is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(pe, SOFTDOCA_LIVE_PE, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	atomic_store(&pe->armed, false);
	if (read(pe->event_fd, &value, sizeof(value)) < 0 && errno != EAGAIN) {
		SDK_LOG_ERR("doca_pe_clear_notification: eventfd read failed: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_pe_set_event_mode(struct doca_pe *pe, enum doca_pe_event_mode event_mode)
{
	if (pe == NULL) {
		SDK_LOG_ERR("doca_pe_set_event_mode: pe is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(pe, SOFTDOCA_LIVE_PE, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (event_mode != DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE && event_mode != DOCA_PE_EVENT_MODE_PROGRESS_ALL) {
		SDK_LOG_ERR("doca_pe_set_event_mode: unknown mode %d", (int)event_mode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	pe->event_mode = event_mode;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks)
{
	const struct doca_ctx *ctx;
	size_t total = 0;

	if (pe == NULL || num_inflight_tasks == NULL) {
		SDK_LOG_ERR("doca_pe_get_num_inflight_tasks: %s is NULL", pe == NULL ? "pe" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(pe, SOFTDOCA_LIVE_PE, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	for (ctx = pe->ctxs; ctx != NULL; ctx = ctx->pe_next)
		total += ctx->num_inflight;
	*num_inflight_tasks = total;
	return DOCA_SUCCESS;
}
