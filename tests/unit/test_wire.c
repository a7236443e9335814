/*
 * Unit tests of the wire protocol (src/engine/wire.h): every status the
 * target answers with crosses the wire and comes back as the same
 * doca_error_t, the numbers are those wire version 1 carried, numbers
 * the wire does not know are refused by the decoder, and an answer
 * carrying one still passes the header check (so its request is failed
 * instead of left waiting); a refusal's reason crosses the wire in
 * numbers of the wire's own and comes back the same, and a reason the
 * decoder cannot read comes back as "unknown", never as a wrong one;
 * acknowledgements' framing; and the secret comparison every message
 * passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_types.h>

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

/* The target's reason, put into an answer and read back by the
 * initiator: same kind, permission, region. */
static struct engine_refusal refusal_round_trip(const struct engine_refusal *sent, doca_error_t status,
						 struct wire_resp *r)
{
	struct engine_refusal got;
	doca_error_t back = DOCA_SUCCESS;

	memset(r, 0, sizeof(*r));
	r->version = WIRE_VERSION;
	r->opcode = ENGINE_OP_WRITE;
	r->status = wire_status_from_doca(status);
	wire_refusal_put(sent, r);
	assert_int_equal(wire_check(WIRE_AM_RESP, r, sizeof(*r)), DOCA_SUCCESS);
	assert_true(wire_status_to_doca(r->status, &back));
	assert_int_equal(back, status); /* the task's status is the plain one */
	memset(&got, 0xa5, sizeof(got));
	wire_refusal_get(r, &got);
	return got;
}

static void test_refusal_round_trip(void **state)
{
	static const uint32_t perms[] = {DOCA_ACCESS_FLAG_RDMA_READ, DOCA_ACCESS_FLAG_RDMA_WRITE,
					 DOCA_ACCESS_FLAG_RDMA_ATOMIC};
	struct engine_refusal sent = {0}, got;
	struct wire_resp r;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		sent.kind = ENGINE_REFUSAL_CTX_PERM;
		sent.perm = perms[i];
		got = refusal_round_trip(&sent, DOCA_ERROR_NOT_PERMITTED, &r);
		assert_int_equal(got.kind, ENGINE_REFUSAL_CTX_PERM);
		assert_int_equal(got.perm, perms[i]);
		/* The wire's bit, not DOCA's number. */
		assert_int_equal(r.value, (uint64_t)1 << i);
		sent.kind = ENGINE_REFUSAL_REGION_PERM;
		got = refusal_round_trip(&sent, DOCA_ERROR_NOT_PERMITTED, &r);
		assert_int_equal(got.kind, ENGINE_REFUSAL_REGION_PERM);
		assert_int_equal(got.perm, perms[i]);
	}
	sent.kind = ENGINE_REFUSAL_REGION_KEY;
	assert_int_equal(refusal_round_trip(&sent, DOCA_ERROR_NOT_PERMITTED, &r).kind, ENGINE_REFUSAL_REGION_KEY);
	sent.kind = ENGINE_REFUSAL_SYNC_KEY;
	assert_int_equal(refusal_round_trip(&sent, DOCA_ERROR_NOT_PERMITTED, &r).kind, ENGINE_REFUSAL_SYNC_KEY);
	sent.kind = ENGINE_REFUSAL_RANGE;
	sent.region_start = 0x7f0000001000ull;
	sent.region_end = 0x7f0000003000ull;
	got = refusal_round_trip(&sent, DOCA_ERROR_INVALID_VALUE, &r);
	assert_int_equal(got.kind, ENGINE_REFUSAL_RANGE);
	assert_int_equal(got.region_start, sent.region_start);
	assert_int_equal(got.region_end, sent.region_end);
	/* No reason: the plain status, nothing else. */
	sent.kind = ENGINE_REFUSAL_NONE;
	got = refusal_round_trip(&sent, DOCA_ERROR_INVALID_VALUE, &r);
	assert_int_equal(got.kind, ENGINE_REFUSAL_NONE);
	assert_int_equal(r.status, WIRE_STATUS_INVALID_VALUE);
	assert_int_equal(r.value, 0);
}

/* Fixed like the others: an older peer's log names these numbers. */
static void test_refusal_numbers_fixed(void **state)
{
	(void)state;
	assert_int_equal(WIRE_STATUS_CTX_LACKS, 0x100);
	assert_int_equal(WIRE_STATUS_REGION_LACKS, 0x101);
	assert_int_equal(WIRE_STATUS_NO_REGION, 0x102);
	assert_int_equal(WIRE_STATUS_OUT_OF_RANGE, 0x103);
	assert_int_equal(WIRE_STATUS_NO_SYNC_EVENT, 0x104);
	assert_int_equal(WIRE_PERM_RDMA_READ, 1);
	assert_int_equal(WIRE_PERM_RDMA_WRITE, 2);
	assert_int_equal(WIRE_PERM_RDMA_ATOMIC, 4);
}

/* A hostile or newer peer's detail: "unknown", with its numbers kept
 * for the log, never a reason it did not give. */
static void test_refusal_unknown_detail(void **state)
{
	static const struct {
		int32_t status;
		uint64_t value, result_len;
	} bad[] = {
		{WIRE_STATUS_CTX_LACKS, 0, 0},
		{WIRE_STATUS_CTX_LACKS, 3, 0},           /* two bits */
		{WIRE_STATUS_CTX_LACKS, 8, 0},           /* a bit the wire has not named */
		{WIRE_STATUS_REGION_LACKS, DOCA_ACCESS_FLAG_RDMA_ATOMIC, 0}, /* DOCA's number (8), not the wire's */
		{WIRE_STATUS_REGION_LACKS, UINT64_MAX, 0},
		{WIRE_STATUS_REGION_LACKS, 2, 1},        /* result_len must be 0 */
		{WIRE_STATUS_NO_REGION, 1, 0},
		{WIRE_STATUS_NO_SYNC_EVENT, 0, 7},
		{WIRE_STATUS_OUT_OF_RANGE, 0x1000, 0},   /* an empty region */
		{WIRE_STATUS_OUT_OF_RANGE, UINT64_MAX - 4, 8}, /* wraps */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct wire_resp r = {0};
		struct engine_refusal got;

		r.status = bad[i].status;
		r.value = bad[i].value;
		r.result_len = bad[i].result_len;
		wire_refusal_get(&r, &got);
		assert_int_equal(got.kind, ENGINE_REFUSAL_UNKNOWN);
		assert_int_equal(got.wire, bad[i].status);
		assert_int_equal(got.wire_detail, bad[i].value);
	}
	/* A plain status says no reason at all. */
	for (int32_t st = 0; st < 0x100; st++) {
		struct wire_resp r = {.status = st, .value = 5, .result_len = 5};
		struct engine_refusal got;

		wire_refusal_get(&r, &got);
		assert_int_equal(got.kind, ENGINE_REFUSAL_NONE);
	}
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
		cmocka_unit_test(test_refusal_round_trip),
		cmocka_unit_test(test_refusal_numbers_fixed),
		cmocka_unit_test(test_refusal_unknown_detail),
		cmocka_unit_test(test_secret_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
