/*
 * softdoca — DOCA buffer arrays.
 *
 * A buffer array exists to hand a GPU or a DPA a table of buffers; a soft
 * device has neither, so what is kept here is the host-side half: the
 * object, its parameters (checked as DOCA checks them) and the hold on
 * its mmap. Everything that needs a target answers NOT_SUPPORTED; so
 * does start once the parameters pass DOCA's checks, as there is no
 * target it could build the array for.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <doca_buf_array.h>

#include "bad_state.h"
#include "log_internal.h"
#include "mmap.h"

SDK_LOG_REGISTER(BUF_ARRAY)

#define FAIL(err, ...) (SDK_LOG_ERR(__VA_ARGS__), (err))

struct doca_buf_arr {
	size_t num_elem;
	struct doca_mmap *mmap; /* held while set */
	size_t elem_size;
	uint64_t start_offset;
	bool started;		/* never true on a soft device; kept for stop */
};

static doca_error_t buf_arr_no_target(const char *caller, const char *what)
{
	SDK_LOG_ERR("%s: a soft device has no %s", caller, what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_create(size_t num_elem, struct doca_buf_arr **buf_arr)
{
	struct doca_buf_arr *arr;

	if (buf_arr == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_buf_arr_create: buf_arr output pointer is NULL");
	if (num_elem == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_buf_arr_create: num_elem must be above 0");
	arr = calloc(1, sizeof(*arr));
	if (arr == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "doca_buf_arr_create: out of memory");
	arr->num_elem = num_elem;
	*buf_arr = arr;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler)
{
	(void)buf_arr;
	(void)gpu_handler;
	return buf_arr_no_target(__func__, "GPU");
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_dpa(struct doca_buf_arr *buf_arr, struct doca_dpa *dpa_handler)
{
	(void)buf_arr;
	(void)dpa_handler;
	return buf_arr_no_target(__func__, "DPA");
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, struct doca_mmap *mmap, size_t elem_size,
				     uint64_t start_offset)
{
	if (buf_arr == NULL || mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_buf_arr_set_params: %s is NULL",
			    buf_arr == NULL ? "buf_arr" : "mmap");
	if (elem_size == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_buf_arr_set_params: elem_size must be above 0");
	if (buf_arr->started)
		return softdoca_bad_state("doca_buf_arr_set_params", "buf array", "started", "not started",
					  "set its parameters before doca_buf_arr_start");
	core_mmap_hold(mmap);
	if (buf_arr->mmap != NULL)
		core_mmap_buf_put(buf_arr->mmap);
	buf_arr->mmap = mmap;
	buf_arr->elem_size = elem_size;
	buf_arr->start_offset = start_offset;
	return DOCA_SUCCESS;
}

/* The elements [start_offset, start_offset + num_elem * elem_size) must fit
 * in the mmap; written so that nothing overflows. */
static doca_error_t buf_arr_check_fit(const struct doca_buf_arr *arr)
{
	uintptr_t addr;
	size_t len;
	doca_error_t err;

	err = core_mmap_started_range(arr->mmap, &addr, &len);
	if (err != DOCA_SUCCESS)
		return err;
	if (arr->start_offset > len || arr->num_elem > (len - arr->start_offset) / arr->elem_size)
		return FAIL(DOCA_ERROR_NO_MEMORY,
			    "doca_buf_arr_start: %zu elements of %zu bytes at offset %llu do not fit in the mmap's %zu bytes",
			    arr->num_elem, arr->elem_size, (unsigned long long)arr->start_offset, len);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr)
{
	doca_error_t err;

	if (buf_arr == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_buf_arr_start: buf_arr is NULL");
	if (buf_arr->started)
		return softdoca_bad_state("doca_buf_arr_start", "buf array", "started", "not started",
					  "it was started already; start it once");
	if (buf_arr->mmap == NULL)
		return softdoca_bad_state("doca_buf_arr_start", "buf array", "without parameters", "given them",
					  "call doca_buf_arr_set_params first");
	err = buf_arr_check_fit(buf_arr);
	if (err != DOCA_SUCCESS)
		return err;
	return FAIL(DOCA_ERROR_NOT_SUPPORTED,
		    "doca_buf_arr_start: no target device (a soft device has no GPU or DPA to build the array for)");
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr)
{
	if (buf_arr == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_buf_arr_stop: buf_arr is NULL");
	buf_arr->started = false;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr)
{
	if (buf_arr == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_buf_arr_destroy: buf_arr is NULL");
	if (buf_arr->mmap != NULL)
		core_mmap_buf_put(buf_arr->mmap);
	free(buf_arr);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr)
{
	(void)buf_arr;
	(void)gpu_buf_arr;
	return buf_arr_no_target(__func__, "GPU");
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_dpa_handle(const struct doca_buf_arr *buf_arr, doca_dpa_dev_buf_arr_t *dpa_buf_arr)
{
	(void)buf_arr;
	(void)dpa_buf_arr;
	return buf_arr_no_target(__func__, "DPA");
}
