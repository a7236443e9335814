/*
 * Unit tests of doca_bitfield.h with values known only at run time: the
 * byte layout of converted words in memory, agreement with the socket
 * byte-order calls, and the in-place (pointer) forms of GENMASK and SET.
 * The constant forms are checked at compile time by tests/bitfield/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_bitfield.h>

/* Run-time values the compiler cannot fold: the macros' non-constant path. */
static volatile uint64_t opaque64 = 0x0102030405060708ull;
static volatile uint32_t opaque32 = 0x0a0b0c0du;
static volatile uint16_t opaque16 = 0xbeefu;

static void test_wire_layout(void **state)
{
	(void)state;
	uint8_t bytes[8];
	doca_be64_t be64 = DOCA_HTOBE64(opaque64);
	doca_be32_t be32 = DOCA_HTOBE32(opaque32);
	doca_be16_t be16 = DOCA_HTOBE16(opaque16);

	/* Big endian in memory: most significant byte first, on any host. */
	memcpy(bytes, &be64, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(bytes[i], i + 1);
	memcpy(bytes, &be32, 4);
	assert_int_equal(bytes[0], 0x0a);
	assert_int_equal(bytes[3], 0x0d);
	memcpy(bytes, &be16, 2);
	assert_int_equal(bytes[0], 0xbe);
	assert_int_equal(bytes[1], 0xef);

	assert_true(DOCA_BETOH64(be64) == opaque64);
	assert_int_equal(DOCA_BETOH32(be32), opaque32);
	assert_int_equal(DOCA_BETOH16(be16), opaque16);
}

static void test_agrees_with_sockets(void **state)
{
	(void)state;
	uint32_t v32 = opaque32;
	uint16_t v16 = opaque16;

	assert_int_equal(DOCA_HTOBE32(v32), htonl(v32));
	assert_int_equal(DOCA_HTOBE16(v16), htons(v16));
	assert_int_equal(DOCA_BETOH32(htonl(v32)), v32);
	assert_int_equal(DOCA_BETOH16(htons(v16)), v16);
}

static void test_pointer_genmask(void **state)
{
	(void)state;
	uint8_t u8 = 0x5a;
	doca_be16_t be16 = 0x1234;
	doca_be32_t be32 = 0x12345678u;

	/* The pointer forms overwrite the word with the mask. */
	DOCA_U8P_GENMASK(6, 1, &u8);
	assert_int_equal(u8, 0x7e);
	DOCA_BE16P_GENMASK(11, 4, &be16);
	assert_int_equal(DOCA_BETOH16(be16), 0x0ff0);
	DOCA_BE32P_GENMASK(23, 4, &be32);
	assert_int_equal(DOCA_BETOH32(be32), 0x00fffff0u);
}

static void test_pointer_set(void **state)
{
	(void)state;
	uint8_t u8 = 0x01;
	doca_be16_t be16 = DOCA_HTOBE16(0x8001);
	doca_be32_t be32 = DOCA_HTOBE32(0x80000001u);
	unsigned v = (unsigned)opaque16 & 0xf;	/* 0xf, not a constant */

	/* Fields are ORed in; the word's other bits stay. */
	DOCA_U8P_SET(DOCA_U8_GENMASK(7, 4), v, &u8);
	assert_int_equal(u8, 0xf1);
	DOCA_BE16P_SET(DOCA_BE16_GENMASK(11, 8), v, &be16);
	assert_int_equal(DOCA_BETOH16(be16), 0x8f01);
	DOCA_BE32P_SET(DOCA_BE32_GENMASK(19, 12), 0xa5, &be32);
	assert_int_equal(DOCA_BETOH32(be32), 0x800a5001u);

	/* And read back through GET. */
	assert_int_equal(DOCA_U8_GET(DOCA_U8_GENMASK(7, 4), u8), 0xf);
	assert_int_equal(DOCA_BE16_GET(DOCA_BE16_GENMASK(11, 8), be16), 0xf);
	assert_int_equal(DOCA_BE32_GET(DOCA_BE32_GENMASK(19, 12), be32), 0xa5);
	assert_int_equal(DOCA_BE32_GET(DOCA_BE32_GENMASK(31, 31), be32), 1);
}

static void test_statement_macros(void **state)
{
	(void)state;
	doca_be32_t word = 0;
	int taken = (int)(opaque32 & 1);	/* 1 */

	/* The pointer forms are single statements: safe in an unbraced if/else. */
	if (taken)
		DOCA_BE32P_SET(DOCA_BE32_GENMASK(7, 0), 0x42, &word);
	else
		DOCA_BE32P_GENMASK(31, 0, &word);
	assert_int_equal(DOCA_BETOH32(word), 0x42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_layout),
		cmocka_unit_test(test_agrees_with_sockets),
		cmocka_unit_test(test_pointer_genmask),
		cmocka_unit_test(test_pointer_set),
		cmocka_unit_test(test_statement_macros),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
