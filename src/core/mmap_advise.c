/*
 * softdoca — DOCA mmap advise: the context and its cache invalidate task.
 *
 * A soft device's memory is the host's, and host caches are coherent, so
 * there is no stale line to drop; what a program may rely on after the
 * task completes is that every store made before it is visible, which a
 * sequentially consistent fence gives. A submitted task waits in the
 * context's queue and is carried out by doca_pe_progress, as a device runs
 * its queue: submit never runs callbacks, and a stop flushes queued tasks
 * with an error status. A task whose buffer is refused completes with that
 * error; the context keeps running (nothing was damaged).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include <doca_buf.h>
#include <doca_mmap_advise.h>

#include "buf.h"
#include "ctx.h"
#include "log_internal.h"
#include "mmap.h"

SDK_LOG_REGISTER(MMAP_ADVISE)

/* Largest buffer one task accepts: any mmap's length fits (a size_t). */
#define ADVISE_MAX_BUF_SIZE ((uint64_t)SIZE_MAX)

struct doca_mmap_advise_task_invalidate_cache {
	struct doca_task task; /* first: the PE calls callbacks with this pointer */
	struct doca_buf *buf;
};

struct doca_mmap_advise {
	struct doca_ctx ctx;
	struct softdoca_task_type invalidate_type;
	struct doca_task *queue_head; /* submitted, not yet carried out */
	struct doca_task *queue_tail;
};

_Static_assert(offsetof(struct doca_mmap_advise_task_invalidate_cache, task) == 0, "task must come first");

static struct doca_mmap_advise *advise_from_ctx(struct doca_ctx *ctx)
{
	return container_of(ctx, struct doca_mmap_advise, ctx);
}

static struct doca_mmap_advise_task_invalidate_cache *invalidate_from_task(const struct doca_task *task)
{
	return container_of(task, struct doca_mmap_advise_task_invalidate_cache, task);
}

/* The buffer must be a taken buf of a started local mmap that has the
 * context's device, and lie inside that mmap's range. */
static doca_error_t invalidate_validate(const struct doca_mmap_advise_task_invalidate_cache *t)
{
	const struct doca_buf *buf = t->buf;
	struct doca_mmap *mmap;
	uint32_t permissions;
	doca_error_t err;

	if (buf == NULL) {
		SDK_LOG_ERR("mmap advise cache invalidate: buffer is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	mmap = softdoca_buf_get_mmap(buf);
	if (mmap == NULL || buf->refcount == 0) {
		SDK_LOG_ERR("mmap advise cache invalidate: buffer %p was released to its inventory", (const void *)buf);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Logs what is wrong: from an export, not started, or without the
	 * context's device. */
	err = softdoca_mmap_local_info(mmap, softdoca_task_ctx(&t->task)->dev, &permissions);
	if (err != DOCA_SUCCESS)
		return err == DOCA_ERROR_NOT_FOUND ? DOCA_ERROR_INVALID_VALUE : err;
	return core_mmap_buf_check(mmap, buf->head, buf->len);
}

/* ---- the queue ---- */

static void advise_queue_push(struct doca_mmap_advise *advise, struct doca_task *task)
{
	task->next = NULL;
	if (advise->queue_tail == NULL)
		advise->queue_head = task;
	else
		advise->queue_tail->next = task;
	advise->queue_tail = task;
}

static struct doca_task *advise_queue_take_all(struct doca_mmap_advise *advise)
{
	struct doca_task *head = advise->queue_head;

	advise->queue_head = NULL;
	advise->queue_tail = NULL;
	return head;
}

/* ---- context ops ---- */

static void advise_flush(struct doca_ctx *ctx)
{
	struct doca_task *task, *next;

	for (task = advise_queue_take_all(advise_from_ctx(ctx)); task != NULL; task = next) {
		next = task->next;
		softdoca_task_complete(task, DOCA_ERROR_IO_FAILED);
	}
}

static unsigned int advise_progress(struct doca_ctx *ctx)
{
	struct doca_task *task, *next;
	unsigned int done = 0;

	for (task = advise_queue_take_all(advise_from_ctx(ctx)); task != NULL; task = next) {
		doca_error_t status;

		next = task->next;
		status = invalidate_validate(invalidate_from_task(task));
		if (status == DOCA_SUCCESS)
			atomic_thread_fence(memory_order_seq_cst);
		softdoca_task_complete(task, status);
		done++;
	}
	return done;
}

static bool advise_has_work(struct doca_ctx *ctx)
{
	return advise_from_ctx(ctx)->queue_head != NULL;
}

static const struct softdoca_ctx_ops advise_ctx_ops = {
	.name = "mmap advise",
	.stop = advise_flush,
	.progress = advise_progress,
	.has_work = advise_has_work,
};

static doca_error_t invalidate_submit(struct doca_task *task)
{
	struct doca_mmap_advise *advise = advise_from_ctx(softdoca_task_ctx(task));

	advise_queue_push(advise, task);
	softdoca_pe_wake(advise->ctx.pe);
	return DOCA_SUCCESS;
}

static doca_error_t invalidate_check(const struct doca_task *task)
{
	return invalidate_validate(invalidate_from_task(task));
}

static const struct softdoca_task_ops invalidate_ops = {
	.submit = invalidate_submit,
	.check = invalidate_check,
};

/* ---- public API ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_create(struct doca_dev *dev, struct doca_mmap_advise **mmap_advise)
{
	struct doca_mmap_advise *advise;

	if (dev == NULL || mmap_advise == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_create: %s is NULL", dev == NULL ? "dev" : "mmap_advise output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	advise = calloc(1, sizeof(*advise));
	if (advise == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	softdoca_ctx_init(&advise->ctx, &advise_ctx_ops, dev);
	softdoca_task_type_init(&advise->invalidate_type, &advise->ctx, "mmap advise cache invalidate",
				&invalidate_ops, sizeof(struct doca_mmap_advise_task_invalidate_cache));
	*mmap_advise = advise;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_destroy(struct doca_mmap_advise *mmap_advise)
{
	doca_error_t status;

	if (mmap_advise == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_destroy: mmap_advise is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = softdoca_ctx_fini(&mmap_advise->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	free(mmap_advise);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
struct doca_ctx *doca_mmap_advise_as_ctx(struct doca_mmap_advise *mmap_advise)
{
	if (mmap_advise == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_as_ctx: mmap_advise is NULL");
		return NULL;
	}
	return &mmap_advise->ctx;
}

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_cap_task_cache_invalidate_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_cap_task_cache_invalidate_is_supported: devinfo is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS; /* host memory is coherent on every soft device */
}

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_cache_invalidate_get_max_buf_size(const struct doca_devinfo *devinfo,
								     uint64_t *buf_size)
{
	if (devinfo == NULL || buf_size == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_task_cache_invalidate_get_max_buf_size: %s is NULL",
			    devinfo == NULL ? "devinfo" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*buf_size = ADVISE_MAX_BUF_SIZE;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_invalidate_cache_set_conf(
	struct doca_mmap_advise *mmap_advise, doca_mmap_advise_task_invalidate_cache_completion_cb_t completion_cb,
	doca_mmap_advise_task_invalidate_cache_completion_cb_t error_cb, uint32_t num_tasks)
{
	doca_error_t status;

	if (mmap_advise == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_task_invalidate_cache_set_conf: mmap_advise is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* The PE calls these with the struct doca_task pointer, which is also
	 * the invalidate task pointer (the task comes first). */
	status = softdoca_task_type_set_conf(&mmap_advise->invalidate_type, (doca_task_completion_cb_t)completion_cb,
					     (doca_task_completion_cb_t)error_cb, num_tasks);
	/* This header documents NOT_PERMITTED for a context that is not IDLE. */
	return status == DOCA_ERROR_BAD_STATE ? DOCA_ERROR_NOT_PERMITTED : status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_invalidate_cache_alloc_init(struct doca_mmap_advise *mmap_advise,
							       struct doca_buf *buf, union doca_data user_data,
							       struct doca_mmap_advise_task_invalidate_cache **task)
{
	struct doca_task *base;
	struct doca_mmap_advise_task_invalidate_cache *t;
	doca_error_t status;

	if (mmap_advise == NULL || task == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_task_invalidate_cache_alloc_init: %s is NULL",
			    mmap_advise == NULL ? "mmap_advise" : "task output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = softdoca_task_alloc(&mmap_advise->invalidate_type, user_data, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = invalidate_from_task(base);
	t->buf = buf;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
struct doca_task *doca_mmap_advise_task_invalidate_cache_as_doca_task(
	struct doca_mmap_advise_task_invalidate_cache *task)
{
	return task == NULL ? NULL : &task->task;
}

DOCA_EXPERIMENTAL
void doca_mmap_advise_task_invalidate_cache_set_buf(struct doca_mmap_advise_task_invalidate_cache *task,
						    struct doca_buf *buf)
{
	if (task == NULL) {
		SDK_LOG_ERR("doca_mmap_advise_task_invalidate_cache_set_buf: task is NULL");
		return;
	}
	if (task->task.state == SOFTDOCA_TASK_INFLIGHT) {
		SDK_LOG_ERR("doca_mmap_advise_task_invalidate_cache_set_buf: task %p is in flight", (void *)task);
		return;
	}
	task->buf = buf;
}

DOCA_EXPERIMENTAL
struct doca_buf *doca_mmap_advise_task_invalidate_cache_get_buf(
	const struct doca_mmap_advise_task_invalidate_cache *task)
{
	return task == NULL ? NULL : task->buf;
}
