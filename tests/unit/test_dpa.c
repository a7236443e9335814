/*
 * Unit tests of DOCA DPA (host side) on soft devices, which have no DPA:
 * no device says it has one, no DPA context can be made, and every call
 * a host program makes on the way (the ones dpa-bench's and NVIDIA's
 * doca_dpa samples make) returns DOCA_ERROR_NOT_SUPPORTED without touching
 * its outputs, so a program stops cleanly at its first DPA call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <doca_dev.h>
#include <doca_dpa.h>

#define NS DOCA_ERROR_NOT_SUPPORTED

static void test_no_device_has_a_dpa(void **state)
{
	struct doca_devinfo **list;
	uint32_t n, i;

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	assert_true(n > 0);
	for (i = 0; i < n; i++)
		assert_int_equal(doca_dpa_cap_is_supported(list[i]), NS);
	assert_int_equal(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	assert_int_equal(doca_dpa_cap_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
}

static void test_create_refused(void **state)
{
	struct doca_devinfo **list;
	struct doca_dev *dev;
	struct doca_dpa *dpa = (struct doca_dpa *)&dpa; /* must stay as it is */
	struct doca_dpa *before = dpa;
	uint32_t n;

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	assert_int_equal(doca_dev_open(list[0], &dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	assert_int_equal(doca_dpa_create(dev, &dpa), NS);
	assert_ptr_equal(dpa, before);
	assert_int_equal(doca_dpa_create(NULL, &dpa), NS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

static void entry(void)
{
}

/* What a host program calls after creating its DPA context, each refused. */
static void test_calls_refused(void **state)
{
	doca_dpa_dev_uintptr_t ptr = 5;
	doca_dpa_dev_t handle = 5;
	doca_dpa_dev_completion_t comp_handle = 5;
	struct doca_dpa_thread *thread = NULL;
	struct doca_dpa_completion *comp = NULL;
	struct doca_dpa_notification_completion *notify = NULL;
	struct doca_dpa_eu_affinity *aff = NULL;
	struct doca_dpa_tg *tg = NULL;
	uint64_t retval = 5, word = 1;
	unsigned long long max_run = 5;

	(void)state;
	assert_int_equal(doca_dpa_set_log_level(NULL, DOCA_DPA_DEV_LOG_LEVEL_INFO), NS);
	assert_int_equal(doca_dpa_start(NULL), NS);
	assert_int_equal(doca_dpa_get_dpa_handle(NULL, &handle), NS);
	assert_int_equal(doca_dpa_get_kernel_max_run_time(NULL, &max_run), NS);
	assert_int_equal(doca_dpa_mem_alloc(NULL, 64, &ptr), NS);
	assert_int_equal(doca_dpa_h2d_memcpy(NULL, ptr, &word, sizeof(word)), NS);
	assert_int_equal(doca_dpa_d2h_memcpy(NULL, &word, ptr, sizeof(word)), NS);
	assert_int_equal(doca_dpa_rpc(NULL, &entry, &retval, (uint64_t)1, (uint64_t)2), NS);
	assert_int_equal(doca_dpa_kernel_launch_update_set(NULL, NULL, 0, NULL, 0, 1, &entry, (uint64_t)1), NS);
	assert_int_equal(doca_dpa_kernel_launch_update_add(NULL, NULL, 0, NULL, 0, 1, &entry), NS);
	assert_int_equal(doca_dpa_peek_at_last_error(NULL), NS);
	assert_int_equal(doca_dpa_eu_affinity_create(NULL, &aff), NS);
	assert_int_equal(doca_dpa_thread_create(NULL, &thread), NS);
	assert_int_equal(doca_dpa_thread_set_func_arg(thread, &entry, 0), NS);
	assert_int_equal(doca_dpa_thread_start(thread), NS);
	assert_int_equal(doca_dpa_thread_group_create(NULL, 4, &tg), NS);
	assert_int_equal(doca_dpa_completion_create(NULL, 64, &comp), NS);
	assert_int_equal(doca_dpa_completion_get_dpa_handle(comp, &comp_handle), NS);
	assert_int_equal(doca_dpa_notification_completion_create(NULL, thread, &notify), NS);
	assert_int_equal(doca_dpa_mem_free(NULL, ptr), NS);
	assert_int_equal(doca_dpa_destroy(NULL), NS);
	/* outputs untouched */
	assert_int_equal(ptr, 5);
	assert_int_equal(handle, 5);
	assert_int_equal(comp_handle, 5);
	assert_int_equal(retval, 5);
	assert_int_equal(max_run, 5);
	assert_null(thread);
	assert_null(comp);
	assert_null(notify);
	assert_null(aff);
	assert_null(tg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_device_has_a_dpa),
		cmocka_unit_test(test_create_refused),
		cmocka_unit_test(test_calls_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
