/*
 * softdoca — DOCA mmap advise: a context that takes hints about mapped
 * memory. Its one task, cache invalidate, asks that the cached copy of a
 * buffer's memory be dropped so the next read comes from memory.
 *
 * On a soft device the memory is the host's, which is cache coherent: the
 * task checks its buffer (a live buf of a started local mmap that has the
 * context's device, inside that mmap's range), issues a full memory
 * barrier, and completes through doca_pe_progress like every task.
 */
#ifndef DOCA_MMAP_ADVISE_H_
#define DOCA_MMAP_ADVISE_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_task;

struct doca_mmap_advise;
struct doca_mmap_advise_task_invalidate_cache;

typedef void (*doca_mmap_advise_task_invalidate_cache_completion_cb_t)(
	struct doca_mmap_advise_task_invalidate_cache *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

/* An mmap advise context on an open device. Errors: INVALID_VALUE (NULL),
 * NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_create(struct doca_dev *dev, struct doca_mmap_advise **mmap_advise);

/* Only while IDLE (DOCA_ERROR_BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_destroy(struct doca_mmap_advise *mmap_advise);

/* The context of mmap_advise (NULL for NULL). */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_mmap_advise_as_ctx(struct doca_mmap_advise *mmap_advise);

/* DOCA_SUCCESS when the device runs cache invalidate tasks (every soft
 * device does: host memory is coherent). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_cap_task_cache_invalidate_is_supported(const struct doca_devinfo *devinfo);

/* Largest buffer, in bytes, one cache invalidate task accepts. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_cache_invalidate_get_max_buf_size(const struct doca_devinfo *devinfo,
								     uint64_t *buf_size);

/* Callbacks (both required) and pool size of cache invalidate tasks.
 * Errors: INVALID_VALUE, NOT_PERMITTED (the context is not IDLE). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_invalidate_cache_set_conf(
	struct doca_mmap_advise *mmap_advise, doca_mmap_advise_task_invalidate_cache_completion_cb_t completion_cb,
	doca_mmap_advise_task_invalidate_cache_completion_cb_t error_cb, uint32_t num_tasks);

/* Take a task from the pool for buf (which may be set later with
 * _set_buf; it is checked at submit). The context must be RUNNING.
 * Errors: INVALID_VALUE, BAD_STATE, NO_MEMORY (pool empty). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_invalidate_cache_alloc_init(struct doca_mmap_advise *mmap_advise,
							       struct doca_buf *buf, union doca_data user_data,
							       struct doca_mmap_advise_task_invalidate_cache **task);

/* The generic task of a cache invalidate task (NULL for NULL). */
DOCA_EXPERIMENTAL
struct doca_task *doca_mmap_advise_task_invalidate_cache_as_doca_task(
	struct doca_mmap_advise_task_invalidate_cache *task);

/* Change the buffer of a task that is not in flight. */
DOCA_EXPERIMENTAL
void doca_mmap_advise_task_invalidate_cache_set_buf(struct doca_mmap_advise_task_invalidate_cache *task,
						    struct doca_buf *buf);

/* The task's buffer (NULL for NULL). */
DOCA_EXPERIMENTAL
struct doca_buf *doca_mmap_advise_task_invalidate_cache_get_buf(
	const struct doca_mmap_advise_task_invalidate_cache *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_ADVISE_H_ */
