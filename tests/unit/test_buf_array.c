/*
 * Unit tests of DOCA buffer arrays on a soft device: create and
 * set_params check their arguments as DOCA documents, the array holds its
 * mmap, start checks the configuration and then reports that no target
 * exists, and every GPU/DPA call answers NOT_SUPPORTED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <doca_buf_array.h>
#include <doca_dev.h>
#include <doca_mmap.h>

static char mem[4096];

struct env {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	struct doca_mmap *mmap;
};

static struct env E;

static int setup(void **state)
{
	uint32_t n = 0;

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&E.list, &n), DOCA_SUCCESS);
	assert_true(n > 0);
	assert_int_equal(doca_dev_open(E.list[0], &E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_create(&E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(E.mmap, mem, sizeof(mem)), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(E.mmap, E.dev), DOCA_SUCCESS);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(doca_mmap_destroy(E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(E.list), DOCA_SUCCESS);
	return 0;
}

static void test_create_and_params(void **state)
{
	struct doca_buf_arr *arr = NULL;
	uint32_t nbufs = 0;

	(void)state;
	assert_int_equal(doca_buf_arr_create(0, &arr), DOCA_ERROR_INVALID_VALUE);
	assert_null(arr);
	assert_int_equal(doca_buf_arr_create(4, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_arr_create(4, &arr), DOCA_SUCCESS);
	assert_non_null(arr);
	assert_int_equal(doca_buf_arr_set_params(arr, NULL, 64, 0), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_arr_set_params(arr, E.mmap, 0, 0), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_arr_set_params(NULL, E.mmap, 64, 0), DOCA_ERROR_INVALID_VALUE);
	/* no params yet */
	assert_int_equal(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_buf_arr_set_params(arr, E.mmap, 64, 0), DOCA_SUCCESS);
	/* the array holds the mmap: it cannot be destroyed under it */
	assert_int_equal(doca_mmap_get_num_bufs(E.mmap, &nbufs), DOCA_SUCCESS);
	assert_int_equal(nbufs, 1);
	assert_int_equal(doca_mmap_destroy(E.mmap), DOCA_ERROR_NOT_PERMITTED);
	/* setting params again moves the hold, it does not add one */
	assert_int_equal(doca_buf_arr_set_params(arr, E.mmap, 128, 64), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_get_num_bufs(E.mmap, &nbufs), DOCA_SUCCESS);
	assert_int_equal(nbufs, 1);
	assert_int_equal(doca_buf_arr_stop(arr), DOCA_SUCCESS);
	assert_int_equal(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_get_num_bufs(E.mmap, &nbufs), DOCA_SUCCESS);
	assert_int_equal(nbufs, 0);
	assert_int_equal(doca_buf_arr_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_arr_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_arr_start(NULL), DOCA_ERROR_INVALID_VALUE);
}

/* Start: mmap not started, elements not fitting, then no target. */
static void test_start_checks(void **state)
{
	struct doca_buf_arr *arr = NULL;

	(void)state;
	assert_int_equal(doca_buf_arr_create(4, &arr), DOCA_SUCCESS);
	assert_int_equal(doca_buf_arr_set_params(arr, E.mmap, 1024, 0), DOCA_SUCCESS);
	assert_int_equal(doca_buf_arr_start(arr), DOCA_ERROR_BAD_STATE); /* mmap not started */
	assert_int_equal(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(E.mmap), DOCA_SUCCESS);

	assert_int_equal(doca_buf_arr_create(4, &arr), DOCA_SUCCESS);
	/* 4 x 1024 fills 4096 exactly; one byte of offset does not fit */
	assert_int_equal(doca_buf_arr_set_params(arr, E.mmap, 1024, 1), DOCA_SUCCESS);
	assert_int_equal(doca_buf_arr_start(arr), DOCA_ERROR_NO_MEMORY);
	assert_int_equal(doca_buf_arr_set_params(arr, E.mmap, 1024, UINT64_MAX), DOCA_SUCCESS);
	assert_int_equal(doca_buf_arr_start(arr), DOCA_ERROR_NO_MEMORY);
	assert_int_equal(doca_buf_arr_set_params(arr, E.mmap, SIZE_MAX, 0), DOCA_SUCCESS);
	assert_int_equal(doca_buf_arr_start(arr), DOCA_ERROR_NO_MEMORY);
	assert_int_equal(doca_buf_arr_set_params(arr, E.mmap, 1024, 0), DOCA_SUCCESS);
	/* it fits, but no GPU or DPA target can exist on a soft device */
	assert_int_equal(doca_buf_arr_start(arr), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_stop(E.mmap), DOCA_SUCCESS);
}

static void test_gpu_dpa_not_supported(void **state)
{
	struct doca_buf_arr *arr = NULL;
	struct doca_gpu_buf_arr *gpu = NULL;
	doca_dpa_dev_buf_arr_t dpa = 0;

	(void)state;
	assert_int_equal(doca_buf_arr_create(1, &arr), DOCA_SUCCESS);
	assert_int_equal(doca_buf_arr_set_target_gpu(arr, NULL), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_buf_arr_set_target_dpa(arr, NULL), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_buf_arr_get_gpu_handle(arr, &gpu), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_buf_arr_get_dpa_handle(arr, &dpa), DOCA_ERROR_NOT_SUPPORTED);
	assert_null(gpu);
	assert_int_equal(dpa, 0);
	assert_int_equal(doca_buf_arr_destroy(arr), DOCA_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_and_params, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_dpa_not_supported, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
