/*
 * softdoca — DOCA buffer array: a run of equal-sized buffers carved out of
 * one mmap, built for a GPU or DPA to address by index.
 *
 * A soft device has neither a GPU nor a DPA, so an array can be created,
 * configured (set_params), stopped and destroyed, but no target can be set:
 * set_target_gpu/_dpa and the handle getters answer
 * DOCA_ERROR_NOT_SUPPORTED with a log line, and doca_buf_arr_start, after
 * checking the configuration, answers DOCA_ERROR_BAD_STATE (no target).
 */
#ifndef DOCA_BUF_ARRAY_H_
#define DOCA_BUF_ARRAY_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dpa;
struct doca_gpu;
struct doca_mmap;

struct doca_buf_arr;
struct doca_gpu_buf_arr;

/* How a DPA program names a buffer array. */
typedef uint64_t doca_dpa_dev_buf_arr_t;

/* A buffer array of num_elem (> 0) elements. Errors: INVALID_VALUE,
 * NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_create(size_t num_elem, struct doca_buf_arr **buf_arr);

/* Build the array for a GPU. NOT_SUPPORTED: a soft device has no GPU. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler);

/* Build the array for a DPA. NOT_SUPPORTED: a soft device has no DPA. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_dpa(struct doca_buf_arr *buf_arr, struct doca_dpa *dpa_handler);

/* The memory of the elements: elem_size (> 0) bytes each, starting
 * start_offset bytes into mmap. The array keeps mmap from being destroyed
 * until the array is (or points elsewhere). Errors: INVALID_VALUE,
 * BAD_STATE (started). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, struct doca_mmap *mmap, size_t elem_size,
				     uint64_t start_offset);

/* Checks the configuration: BAD_STATE (already started, no params, mmap
 * not started), NO_MEMORY (the elements do not fit in the mmap); then
 * BAD_STATE, since no target device can be set on a soft device. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr);

/* Stop a started array (a no-op on one that is not). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr);

/* Free the array (stopping it first). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr);

/* The array's GPU handle. NOT_SUPPORTED on a soft device. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr);

/* The array's DPA handle. NOT_SUPPORTED on a soft device. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_dpa_handle(const struct doca_buf_arr *buf_arr, doca_dpa_dev_buf_arr_t *dpa_buf_arr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_ARRAY_H_ */
