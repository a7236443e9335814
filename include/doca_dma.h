/*
 * softdoca — DOCA DMA: a context whose memcpy task copies the data of one
 * buffer (or buffer list) to the free tail of another, on the local host.
 */
#ifndef DOCA_DMA_H_
#define DOCA_DMA_H_

/* DOCA's doca_dma.h brings in <inttypes.h>, and DMA programs (NVIDIA's
 * dma_copy_host among them) print with PRIu64 without including it. */
#include <inttypes.h>
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

struct doca_dma;
struct doca_dma_task_memcpy;
struct doca_gpu_dma;

typedef void (*doca_dma_task_memcpy_completion_cb_t)(struct doca_dma_task_memcpy *task,
						     union doca_data task_user_data,
						     union doca_data ctx_user_data);

/* A DMA context on an open device. */
DOCA_STABLE
doca_error_t doca_dma_create(struct doca_dev *dev, struct doca_dma **dma);

/* Only while IDLE (DOCA_ERROR_BAD_STATE otherwise). */
DOCA_STABLE
doca_error_t doca_dma_destroy(struct doca_dma *dma);

DOCA_STABLE
struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma);

/* Most tasks one memcpy pool may hold. */
DOCA_STABLE
doca_error_t doca_dma_cap_get_max_num_tasks(struct doca_dma *dma, uint32_t *max_num_tasks);

/* DOCA_SUCCESS when the device runs memcpy tasks (every soft device does). */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo);

/* Longest buffer list a memcpy source or destination may be. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							   uint32_t *max_buf_list_len);

/* Largest number of bytes one memcpy copies. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size);

/* Callbacks and pool size of memcpy tasks. Only while IDLE. */
DOCA_STABLE
doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma,
					   doca_dma_task_memcpy_completion_cb_t task_completion_cb,
					   doca_dma_task_memcpy_completion_cb_t task_error_cb,
					   uint32_t num_memcpy_tasks);

/* Take a task from the pool (DOCA_ERROR_NO_MEMORY when empty; the context
 * must be RUNNING). The copy takes src's data and appends it after dst's
 * data; dst's data length grows by the bytes copied. */
DOCA_STABLE
doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma, const struct doca_buf *src, struct doca_buf *dst,
					     union doca_data user_data, struct doca_dma_task_memcpy **task);

DOCA_STABLE
struct doca_task *doca_dma_task_memcpy_as_task(struct doca_dma_task_memcpy *task);

DOCA_STABLE
void doca_dma_task_memcpy_set_src(struct doca_dma_task_memcpy *task, const struct doca_buf *src);

DOCA_STABLE
const struct doca_buf *doca_dma_task_memcpy_get_src(const struct doca_dma_task_memcpy *task);

DOCA_STABLE
void doca_dma_task_memcpy_set_dst(struct doca_dma_task_memcpy *task, struct doca_buf *dst);

DOCA_STABLE
struct doca_buf *doca_dma_task_memcpy_get_dst(const struct doca_dma_task_memcpy *task);

/* DOCA 3.2+: ask for (enable != 0) or release the guarantee that the
 * context's tasks complete in the order they were submitted. softdoca's DMA
 * executes and completes every task in submission order, so both are
 * honoured. Before doca_ctx_start only. Errors: INVALID_VALUE (NULL),
 * BAD_STATE (context not idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_dma_set_ordered_completions(struct doca_dma *dma, uint8_t enable);

/* GPU data path: soft devices have no GPU, DOCA_ERROR_NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_dma_get_gpu_handle(struct doca_dma *dma, struct doca_gpu_dma **gpu_dma);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DMA_H_ */
