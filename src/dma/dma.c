/*
 * softdoca — DOCA DMA on the host CPU.
 *
 * A submitted memcpy waits in the context's queue and is carried out by
 * doca_pe_progress, like a device that executes work queue entries in
 * order. That keeps DOCA's behaviour visible: submit never runs callbacks,
 * a stop flushes queued copies with an error status, and a failed copy
 * stops the context (DMA does that on any task error) and flushes the rest.
 * A buffer in an mmap created from a PCI export lives in the exporting
 * process: softdoca_mmap_copy reaches it with process_vm_readv/writev.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_dma.h>

#include "buf.h"
#include "ctx.h"
#include "live.h"
#include "log_internal.h"
#include "mmap_pci.h"

SDK_LOG_REGISTER(DMA)

/* Longest source or destination buffer list a memcpy accepts. */
#define DMA_MAX_BUF_LIST_LEN 32
/* Largest single copy: what a 32-bit length field of a DMA engine holds. */
#define DMA_MAX_BUF_SIZE (1ULL << 31)

struct doca_dma_task_memcpy {
	struct doca_task task; /* first: the PE calls callbacks with this pointer */
	const struct doca_buf *src;
	struct doca_buf *dst;
};

struct doca_dma {
	struct doca_ctx ctx;
	struct softdoca_task_type memcpy_type;
	struct doca_task *queue_head; /* submitted, not yet executed */
	struct doca_task *queue_tail;
	/* doca_dma_set_ordered_completions: recorded; the queue above is FIFO
	 * and dma_progress completes it front to back, so completions are in
	 * submission order whether it is set or not. */
	bool ordered_completions;
};

_Static_assert(offsetof(struct doca_dma_task_memcpy, task) == 0, "task must come first");

static struct doca_dma *dma_from_ctx(struct doca_ctx *ctx)
{
	return container_of(ctx, struct doca_dma, ctx);
}

static struct doca_dma_task_memcpy *memcpy_from_task(const struct doca_task *task)
{
	return container_of(task, struct doca_dma_task_memcpy, task);
}

/* ---- buffer helpers ---- */

static struct doca_buf *buf_next(const struct doca_buf *buf)
{
	struct doca_buf *next = NULL;

	if (doca_buf_get_next_in_list((struct doca_buf *)buf, &next) != DOCA_SUCCESS)
		return NULL;
	return next;
}

/* Bytes free after the data window of buf: where a copy appends. */
static size_t buf_tail_room(const struct doca_buf *buf, char **tail)
{
	void *head, *data;
	size_t len, data_len;

	doca_buf_get_head(buf, &head);
	doca_buf_get_len(buf, &len);
	doca_buf_get_data(buf, &data);
	doca_buf_get_data_len(buf, &data_len);
	*tail = (char *)data + data_len;
	return (size_t)(((char *)head + len) - *tail);
}

/* Every buffer's memory must be reachable by DMA: local, or a PCI export
 * that grants the access (the exporter checks again at each copy). */
static doca_error_t memcpy_check_reach(const struct doca_dma_task_memcpy *t)
{
	const struct doca_buf *buf;
	doca_error_t err;

	for (buf = t->src; buf != NULL; buf = buf_next(buf)) {
		err = softdoca_mmap_dma_check(softdoca_buf_get_mmap(buf), false);
		if (err != DOCA_SUCCESS)
			return err;
	}
	for (buf = t->dst; buf != NULL; buf = buf_next(buf)) {
		err = softdoca_mmap_dma_check(softdoca_buf_get_mmap(buf), true);
		if (err != DOCA_SUCCESS)
			return err;
	}
	return DOCA_SUCCESS;
}

/* Validate a memcpy: what try_submit checks and what execution relies on. */
static doca_error_t memcpy_validate(const struct doca_dma_task_memcpy *t, uint64_t *total_out)
{
	const struct doca_buf *buf;
	uint64_t total = 0, room = 0;
	uint32_t n;

	if (t->src == NULL || t->dst == NULL) {
		SDK_LOG_ERR("dma memcpy: %s buffer is NULL", t->src == NULL ? "source" : "destination");
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (buf = t->src, n = 0; buf != NULL; buf = buf_next(buf), n++) {
		size_t data_len;

		doca_buf_get_data_len(buf, &data_len);
		total += data_len;
	}
	if (n > DMA_MAX_BUF_LIST_LEN) {
		SDK_LOG_ERR("dma memcpy: source list has %u buffers, at most %u", n, DMA_MAX_BUF_LIST_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (buf = t->dst, n = 0; buf != NULL; buf = buf_next(buf), n++) {
		char *tail;

		room += buf_tail_room(buf, &tail);
	}
	if (n > DMA_MAX_BUF_LIST_LEN) {
		SDK_LOG_ERR("dma memcpy: destination list has %u buffers, at most %u", n, DMA_MAX_BUF_LIST_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (total == 0) {
		SDK_LOG_ERR("dma memcpy: source holds no data (data length 0)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (total > DMA_MAX_BUF_SIZE) {
		SDK_LOG_ERR("dma memcpy: %llu bytes exceed the largest copy (%llu)", (unsigned long long)total,
			    (unsigned long long)DMA_MAX_BUF_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (total > room) {
		SDK_LOG_ERR("dma memcpy: source has %llu bytes but the destination has room for %llu after its data",
			    (unsigned long long)total, (unsigned long long)room);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*total_out = total;
	return memcpy_check_reach(t);
}

/* Copy the source list's data into the destination list's free tails.
 * A failed piece (a PCI export's exporter gone or revoked) fails the
 * copy; the destination keeps what was copied before it. */
static doca_error_t memcpy_execute(const struct doca_dma_task_memcpy *t)
{
	const struct doca_buf *src = t->src;
	struct doca_buf *dst = t->dst;
	size_t src_off = 0;
	doca_error_t status;

	while (src != NULL && dst != NULL) {
		void *src_data;
		size_t src_len, dst_len, chunk, room;
		char *tail;

		doca_buf_get_data(src, &src_data);
		doca_buf_get_data_len(src, &src_len);
		if (src_off == src_len) {
			src = buf_next(src);
			src_off = 0;
			continue;
		}
		room = buf_tail_room(dst, &tail);
		if (room == 0) {
			dst = buf_next(dst);
			continue;
		}
		chunk = src_len - src_off < room ? src_len - src_off : room;
		status = softdoca_mmap_copy(softdoca_buf_get_mmap(dst), (uintptr_t)tail, softdoca_buf_get_mmap(src),
					    (uintptr_t)src_data + src_off, chunk);
		if (status != DOCA_SUCCESS)
			return status;
		doca_buf_get_data_len(dst, &dst_len);
		doca_buf_set_data_len(dst, dst_len + chunk);
		src_off += chunk;
	}
	return DOCA_SUCCESS;
}

/* ---- context ops ---- */

static void dma_queue_push(struct doca_dma *dma, struct doca_task *task)
{
	task->next = NULL;
	if (dma->queue_tail == NULL)
		dma->queue_head = task;
	else
		dma->queue_tail->next = task;
	dma->queue_tail = task;
}

static struct doca_task *dma_queue_take_all(struct doca_dma *dma)
{
	struct doca_task *head = dma->queue_head;

	dma->queue_head = NULL;
	dma->queue_tail = NULL;
	return head;
}

static void dma_flush(struct doca_ctx *ctx)
{
	struct doca_task *task, *next;

	for (task = dma_queue_take_all(dma_from_ctx(ctx)); task != NULL; task = next) {
		next = task->next;
		softdoca_task_complete(task, DOCA_ERROR_IO_FAILED);
	}
}

static unsigned int dma_progress(struct doca_ctx *ctx)
{
	struct doca_dma *dma = dma_from_ctx(ctx);
	struct doca_task *task, *next;
	unsigned int done = 0;

	for (task = dma_queue_take_all(dma); task != NULL; task = next) {
		const struct doca_dma_task_memcpy *t = memcpy_from_task(task);
		uint64_t total;
		doca_error_t status;

		next = task->next;
		if (ctx->state != DOCA_CTX_STATE_RUNNING) {
			/* A failure earlier in this batch stopped the context. */
			softdoca_task_complete(task, DOCA_ERROR_IO_FAILED);
			continue;
		}
		status = memcpy_validate(t, &total);
		if (status == DOCA_SUCCESS)
			status = memcpy_execute(t);
		softdoca_task_complete(task, status);
		if (status != DOCA_SUCCESS)
			softdoca_ctx_fail(ctx, status);
		done++;
	}
	return done;
}

static bool dma_has_work(struct doca_ctx *ctx)
{
	return dma_from_ctx(ctx)->queue_head != NULL;
}

static const struct softdoca_ctx_ops dma_ctx_ops = {
	.name = "dma",
	.stop = dma_flush,
	.progress = dma_progress,
	.has_work = dma_has_work,
};

static doca_error_t memcpy_submit(struct doca_task *task)
{
	struct doca_dma *dma = dma_from_ctx(softdoca_task_ctx(task));

	dma_queue_push(dma, task);
	softdoca_pe_wake(dma->ctx.pe);
	return DOCA_SUCCESS;
}

static doca_error_t memcpy_check(const struct doca_task *task)
{
	uint64_t total;

	return memcpy_validate(memcpy_from_task(task), &total);
}

static const struct softdoca_task_ops memcpy_ops = {
	.submit = memcpy_submit,
	.check = memcpy_check,
};

/* ---- public API ---- */

DOCA_STABLE
doca_error_t doca_dma_create(struct doca_dev *dev, struct doca_dma **dma_out)
{
	struct doca_dma *dma;

	if (dev == NULL || dma_out == NULL) {
		SDK_LOG_ERR("doca_dma_create: %s is NULL", dev == NULL ? "dev" : "dma output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	dma = calloc(1, sizeof(*dma));
	if (dma == NULL) {
		SDK_LOG_ERR("doca_dma_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	if (softdoca_ctx_init(&dma->ctx, &dma_ctx_ops, dev) != DOCA_SUCCESS) {
		free(dma); /* softdoca_ctx_init said why */
		return DOCA_ERROR_NO_MEMORY;
	}
	softdoca_task_type_init(&dma->memcpy_type, &dma->ctx, "dma memcpy", &memcpy_ops,
				sizeof(struct doca_dma_task_memcpy));
	*dma_out = dma;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_dma_destroy(struct doca_dma *dma)
{
	doca_error_t status;

	if (dma == NULL) {
		SDK_LOG_ERR("doca_dma_destroy: dma is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(&dma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	status = softdoca_ctx_fini(&dma->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	free(dma);
	return DOCA_SUCCESS;
}

DOCA_STABLE
struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma)
{
	if (dma == NULL) {
		SDK_LOG_ERR("doca_dma_as_ctx: dma is NULL");
		return NULL;
	}
	return &dma->ctx;
}

DOCA_STABLE
doca_error_t doca_dma_cap_get_max_num_tasks(struct doca_dma *dma, uint32_t *max_num_tasks)
{
	if (dma == NULL || max_num_tasks == NULL) {
		SDK_LOG_ERR("doca_dma_cap_get_max_num_tasks: %s is NULL", dma == NULL ? "dma" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*max_num_tasks = SOFTDOCA_TASK_POOL_MAX;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL) {
		SDK_LOG_ERR("doca_dma_cap_task_memcpy_is_supported: devinfo is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS; /* the host CPU copies on every soft device */
}

DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							   uint32_t *max_buf_list_len)
{
	if (devinfo == NULL || max_buf_list_len == NULL) {
		SDK_LOG_ERR("doca_dma_cap_task_memcpy_get_max_buf_list_len: %s is NULL",
			    devinfo == NULL ? "devinfo" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*max_buf_list_len = DMA_MAX_BUF_LIST_LEN;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size)
{
	if (devinfo == NULL || buf_size == NULL) {
		SDK_LOG_ERR("doca_dma_cap_task_memcpy_get_max_buf_size: %s is NULL",
			    devinfo == NULL ? "devinfo" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*buf_size = DMA_MAX_BUF_SIZE;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma,
					   doca_dma_task_memcpy_completion_cb_t task_completion_cb,
					   doca_dma_task_memcpy_completion_cb_t task_error_cb,
					   uint32_t num_memcpy_tasks)
{
	if (dma == NULL) {
		SDK_LOG_ERR("doca_dma_task_memcpy_set_conf: dma is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* The PE calls these with the struct doca_task pointer, which is also
	 * the memcpy task pointer (the task comes first). */
	return softdoca_task_type_set_conf(&dma->memcpy_type, (doca_task_completion_cb_t)task_completion_cb,
					   (doca_task_completion_cb_t)task_error_cb, num_memcpy_tasks);
}

DOCA_STABLE
doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma, const struct doca_buf *src, struct doca_buf *dst,
					     union doca_data user_data, struct doca_dma_task_memcpy **task_out)
{
	struct doca_task *task;
	struct doca_dma_task_memcpy *t;
	doca_error_t status;

	if (dma == NULL || task_out == NULL) {
		SDK_LOG_ERR("doca_dma_task_memcpy_alloc_init: %s is NULL", dma == NULL ? "dma" : "task output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = softdoca_task_alloc(&dma->memcpy_type, user_data, &task);
	if (status != DOCA_SUCCESS)
		return status;
	t = memcpy_from_task(task);
	t->src = src;
	t->dst = dst;
	*task_out = t;
	return DOCA_SUCCESS;
}

DOCA_STABLE
struct doca_task *doca_dma_task_memcpy_as_task(struct doca_dma_task_memcpy *task)
{
	return task == NULL ? NULL : &task->task;
}

DOCA_STABLE
void doca_dma_task_memcpy_set_src(struct doca_dma_task_memcpy *task, const struct doca_buf *src)
{
	if (task != NULL)
		task->src = src;
}

DOCA_STABLE
const struct doca_buf *doca_dma_task_memcpy_get_src(const struct doca_dma_task_memcpy *task)
{
	return task == NULL ? NULL : task->src;
}

DOCA_STABLE
void doca_dma_task_memcpy_set_dst(struct doca_dma_task_memcpy *task, struct doca_buf *dst)
{
	if (task != NULL)
		task->dst = dst;
}

DOCA_STABLE
struct doca_buf *doca_dma_task_memcpy_get_dst(const struct doca_dma_task_memcpy *task)
{
	return task == NULL ? NULL : task->dst;
}

DOCA_EXPERIMENTAL
doca_error_t doca_dma_set_ordered_completions(struct doca_dma *dma, uint8_t enable)
{
	if (dma == NULL) {
		SDK_LOG_ERR("doca_dma_set_ordered_completions: dma is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(&dma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (softdoca_ctx_check_idle(&dma->ctx, "doca_dma_set_ordered_completions") != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	dma->ordered_completions = enable != 0;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_dma_get_gpu_handle(struct doca_dma *dma, struct doca_gpu_dma **gpu_dma)
{
	(void)dma;
	(void)gpu_dma;
	SDK_LOG_ERR("doca_dma_get_gpu_handle: soft devices have no GPU data path");
	return DOCA_ERROR_NOT_SUPPORTED;
}
