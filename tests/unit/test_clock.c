/*
 * Unit tests of DOCA clock on a soft device: the host clocks read as the
 * host's own clocks (compared with clock_gettime around the call), the
 * cycle counter moves forward, and every NIC clock, capability and
 * cross-timestamp answers NOT_SUPPORTED after the arguments are checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include <doca_clock.h>
#include <doca_dev.h>

struct env {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	struct doca_clock *clock;
};

static struct env E;

static int setup(void **state)
{
	uint32_t n = 0;

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&E.list, &n), DOCA_SUCCESS);
	assert_true(n > 0);
	assert_int_equal(doca_dev_open(E.list[0], &E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_clock_create(E.dev, &E.clock), DOCA_SUCCESS);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(doca_clock_destroy(E.clock), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(E.list), DOCA_SUCCESS);
	return 0;
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* The reading lies between two clock_gettime calls around it. */
static void check_host_clock(uint64_t type, clockid_t id)
{
	struct timespec before, after;
	union doca_clock_timespec_t ts;

	assert_int_equal(clock_gettime(id, &before), 0);
	assert_int_equal(doca_clock_get_timestamp(E.clock, type, &ts), DOCA_SUCCESS);
	assert_int_equal(clock_gettime(id, &after), 0);
	assert_true(ns_of(&before) <= ns_of(&ts.ts));
	assert_true(ns_of(&ts.ts) <= ns_of(&after));
}

static void test_host_clocks(void **state)
{
	union doca_clock_timespec_t a, b;
	doca_error_t err;

	(void)state;
	check_host_clock(DOCA_CLOCK_HOST_REAL_TIME, CLOCK_REALTIME);
	check_host_clock(DOCA_CLOCK_HOST_MONOTONIC, CLOCK_MONOTONIC);
	check_host_clock(DOCA_CLOCK_HOST_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW);
	err = doca_clock_get_timestamp(E.clock, DOCA_CLOCK_HOST_COUNTER_CYCLES, &a);
#if defined(__x86_64__) || defined(__aarch64__)
	assert_int_equal(err, DOCA_SUCCESS);
	assert_int_equal(doca_clock_get_timestamp(E.clock, DOCA_CLOCK_HOST_COUNTER_CYCLES, &b), DOCA_SUCCESS);
	assert_true(b.counter >= a.counter);
	assert_true(a.counter > 0);
#else
	(void)b;
	assert_int_equal(err, DOCA_ERROR_NOT_SUPPORTED);
#endif
}

static void test_nic_clocks_not_supported(void **state)
{
	const uint64_t nic[] = {DOCA_CLOCK_NIC_FREE_RUNNING, DOCA_CLOCK_NIC_REAL_TIME, DOCA_CLOCK_NIC_DPA_TIMER};
	union doca_clock_timespec_t p, n;
	uint64_t margin = 12345;

	(void)state;
	assert_int_equal(doca_clock_cap_nic_free_running_is_supported(E.list[0]), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_clock_cap_nic_real_time_is_supported(E.list[0]), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_clock_cap_nic_dpa_timer_is_supported(E.list[0]), DOCA_ERROR_NOT_SUPPORTED);
	for (size_t i = 0; i < sizeof(nic) / sizeof(nic[0]); i++) {
		assert_int_equal(doca_clock_get_timestamp(E.clock, nic[i], &p), DOCA_ERROR_NOT_SUPPORTED);
		assert_int_equal(doca_clock_get_crosstimestamp(E.clock, DOCA_CLOCK_HOST_REAL_TIME, nic[i], &p, &n, &margin),
				 DOCA_ERROR_NOT_SUPPORTED);
	}
	assert_int_equal(margin, 12345); /* nothing written on failure */
}

static void test_bad_arguments(void **state)
{
	union doca_clock_timespec_t p, n;
	uint64_t margin;
	struct doca_clock *c = NULL;

	(void)state;
	assert_int_equal(doca_clock_cap_nic_free_running_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_cap_nic_real_time_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_cap_nic_dpa_timer_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_create(NULL, &c), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_create(E.dev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_null(c);
	assert_int_equal(doca_clock_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	/* not exactly one known type */
	assert_int_equal(doca_clock_get_timestamp(E.clock, 0, &p), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_get_timestamp(E.clock, DOCA_CLOCK_HOST_REAL_TIME | DOCA_CLOCK_HOST_MONOTONIC, &p),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_get_timestamp(E.clock, 1ULL << 40, &p), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_get_timestamp(NULL, DOCA_CLOCK_HOST_REAL_TIME, &p), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_get_timestamp(E.clock, DOCA_CLOCK_HOST_REAL_TIME, NULL), DOCA_ERROR_INVALID_VALUE);
	/* the second clock of a cross-timestamp must be a NIC clock */
	assert_int_equal(doca_clock_get_crosstimestamp(E.clock, DOCA_CLOCK_HOST_REAL_TIME, DOCA_CLOCK_HOST_MONOTONIC,
						       &p, &n, &margin),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_get_crosstimestamp(E.clock, 3, DOCA_CLOCK_NIC_REAL_TIME, &p, &n, &margin),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_clock_get_crosstimestamp(E.clock, DOCA_CLOCK_HOST_REAL_TIME, DOCA_CLOCK_NIC_REAL_TIME,
						       &p, &n, NULL),
			 DOCA_ERROR_INVALID_VALUE);
	/* the device is held while the clock exists */
	assert_int_equal(doca_dev_close(E.dev), DOCA_ERROR_IN_USE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_host_clocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nic_clocks_not_supported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
