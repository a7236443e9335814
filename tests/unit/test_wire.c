/*
 * Unit tests of the wire protocol (src/engine/wire.h): every status the
 * target answers with crosses the wire and comes back as the same
 * doca_error_t, the numbers are those wire version 1 carried, numbers
 * the wire does not know are refused by the decoder, and an answer
 * carrying one still passes the header check (so its request is failed
 * instead of left waiting); acknowledgements' framing; and the secret
 * comparison every message passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/secret.h"
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

/* Secrets are compared a word at a time: every length, every bit. */
static void test_secret_equal(void **state)
{
	uint8_t a[40], b[40];

	(void)state;
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 37 + 11);
	for (size_t len = 0; len <= sizeof(a); len++) {
		memcpy(b, a, sizeof(b));
		assert_true(softdoca_secret_equal(a, b, len));
		for (size_t bit = 0; bit < len * 8; bit++) {
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			assert_false(softdoca_secret_equal(a, b, len));
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		if (len < sizeof(a)) {
			b[len] ^= 0xff; /* past the length: not looked at */
			assert_true(softdoca_secret_equal(a, b, len));
		}
	}
}

static void test_ack_check(void **state)
{
	struct wire_ack a;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.version = WIRE_VERSION;
	a.wr_id = UINT64_MAX; /* any number: the window is checked by its receiver */
	assert_int_equal(wire_check(WIRE_AM_ACK, &a, sizeof(a)), DOCA_SUCCESS);
	assert_int_equal(wire_check(WIRE_AM_ACK, &a, sizeof(a) - 1), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(wire_check(WIRE_AM_ACK, &a, sizeof(a) + 1), DOCA_ERROR_INVALID_VALUE);
	a.flags = 1;
	assert_int_equal(wire_check(WIRE_AM_ACK, &a, sizeof(a)), DOCA_ERROR_INVALID_VALUE);
	a.flags = 0;
	a.version = 1; /* version 1 had no acknowledgements */
	assert_int_equal(wire_check(WIRE_AM_ACK, &a, sizeof(a)), DOCA_ERROR_UNSUPPORTED_VERSION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_numbers_fixed),
		cmocka_unit_test(test_unnamed_goes_generic),
		cmocka_unit_test(test_unknown_refused),
		cmocka_unit_test(test_header_check_leaves_status),
		cmocka_unit_test(test_ack_check),
		cmocka_unit_test(test_secret_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
