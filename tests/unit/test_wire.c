/*
 * Unit tests of the wire protocol's status codes (src/engine/wire.h):
 * every status the target answers with crosses the wire and comes back
 * as the same doca_error_t, the numbers are those wire version 1 carried
 * (older peers read them alike), numbers the wire does not know are
 * refused by the decoder, and an answer carrying one still passes the
 * header check (so its request is failed instead of left waiting).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/wire.h"

static const doca_error_t answered[] = {
	DOCA_SUCCESS,		  DOCA_ERROR_NOT_PERMITTED, DOCA_ERROR_INVALID_VALUE, DOCA_ERROR_NO_MEMORY,
	DOCA_ERROR_TIME_OUT,	  DOCA_ERROR_NOT_CONNECTED, DOCA_ERROR_IO_FAILED,     DOCA_ERROR_TOO_BIG,
};

static void test_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(answered) / sizeof(answered[0]); i++) {
		doca_error_t back = DOCA_ERROR_UNEXPECTED;

		assert_true(wire_status_to_doca(wire_status_from_doca(answered[i]), &back));
		assert_int_equal(back, answered[i]);
	}
}

/* Version 1's numbers: changing one breaks interop with older peers. */
static void test_numbers_fixed(void **state)
{
	(void)state;
	assert_int_equal(wire_status_from_doca(DOCA_SUCCESS), 0);
	assert_int_equal(wire_status_from_doca(DOCA_ERROR_NOT_PERMITTED), 2);
	assert_int_equal(wire_status_from_doca(DOCA_ERROR_INVALID_VALUE), 6);
	assert_int_equal(wire_status_from_doca(DOCA_ERROR_NO_MEMORY), 7);
	assert_int_equal(wire_status_from_doca(DOCA_ERROR_TIME_OUT), 9);
	assert_int_equal(wire_status_from_doca(DOCA_ERROR_NOT_CONNECTED), 14);
	assert_int_equal(wire_status_from_doca(DOCA_ERROR_IO_FAILED), 17);
	assert_int_equal(wire_status_from_doca(DOCA_ERROR_TOO_BIG), 27);
}

/* A status the wire has no name for goes out as the generic failure. */
static void test_unnamed_goes_generic(void **state)
{
	doca_error_t back = DOCA_SUCCESS;

	(void)state;
	assert_int_equal(wire_status_from_doca(DOCA_ERROR_DRIVER), WIRE_STATUS_FAILED);
	assert_true(wire_status_to_doca(WIRE_STATUS_FAILED, &back));
	assert_int_not_equal(back, DOCA_SUCCESS);
}

static void test_unknown_refused(void **state)
{
	static const int32_t bad[] = {-1, 3, 5, 8, 10, 18, 26, 28, 31, 32, 1000, INT32_MIN, INT32_MAX};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		doca_error_t back = DOCA_SUCCESS;

		assert_false(wire_status_to_doca(bad[i], &back));
		assert_int_equal(back, DOCA_SUCCESS); /* untouched */
	}
}

static void test_header_check_leaves_status(void **state)
{
	struct wire_resp r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.version = WIRE_VERSION;
	r.opcode = ENGINE_OP_WRITE;
	r.status = 1000;
	assert_int_equal(wire_check(WIRE_AM_RESP, &r, sizeof(r)), DOCA_SUCCESS);
	r.reserved = 1; /* framing is still checked */
	assert_int_equal(wire_check(WIRE_AM_RESP, &r, sizeof(r)), DOCA_ERROR_INVALID_VALUE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_numbers_fixed),
		cmocka_unit_test(test_unnamed_goes_generic),
		cmocka_unit_test(test_unknown_refused),
		cmocka_unit_test(test_header_check_leaves_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
