/*
 * Unit tests: doca_error_get_name / doca_error_get_descr.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_error.h>

#include "common.h"

/* The identifier text comes from the preprocessor, so a name that differs
 * from its enumerator by one letter fails. */
#define CODE(c) {c, #c}

static const struct {
	doca_error_t code;
	const char *name;
} codes[] = {
	CODE(DOCA_SUCCESS),
	CODE(DOCA_ERROR_UNKNOWN),
	CODE(DOCA_ERROR_NOT_PERMITTED),
	CODE(DOCA_ERROR_IN_USE),
	CODE(DOCA_ERROR_NOT_SUPPORTED),
	CODE(DOCA_ERROR_AGAIN),
	CODE(DOCA_ERROR_INVALID_VALUE),
	CODE(DOCA_ERROR_NO_MEMORY),
	CODE(DOCA_ERROR_INITIALIZATION),
	CODE(DOCA_ERROR_TIME_OUT),
	CODE(DOCA_ERROR_SHUTDOWN),
	CODE(DOCA_ERROR_CONNECTION_RESET),
	CODE(DOCA_ERROR_CONNECTION_ABORTED),
	CODE(DOCA_ERROR_CONNECTION_INPROGRESS),
	CODE(DOCA_ERROR_NOT_CONNECTED),
	CODE(DOCA_ERROR_NO_LOCK),
	CODE(DOCA_ERROR_NOT_FOUND),
	CODE(DOCA_ERROR_IO_FAILED),
	CODE(DOCA_ERROR_BAD_STATE),
	CODE(DOCA_ERROR_UNSUPPORTED_VERSION),
	CODE(DOCA_ERROR_OPERATING_SYSTEM),
	CODE(DOCA_ERROR_DRIVER),
	CODE(DOCA_ERROR_UNEXPECTED),
	CODE(DOCA_ERROR_ALREADY_EXIST),
	CODE(DOCA_ERROR_FULL),
	CODE(DOCA_ERROR_EMPTY),
	CODE(DOCA_ERROR_IN_PROGRESS),
	CODE(DOCA_ERROR_TOO_BIG),
	CODE(DOCA_ERROR_AUTHENTICATION),
	CODE(DOCA_ERROR_BAD_CONFIG),
	CODE(DOCA_ERROR_SKIPPED),
	CODE(DOCA_ERROR_DEVICE_FATAL_ERROR),
};

static void test_codes_are_dense(void **state)
{
	size_t i;

	(void)state;
	/* Every value 0..31 is listed exactly once, in order. */
	assert_int_equal(ARRAY_SIZE(codes), 32);
	for (i = 0; i < ARRAY_SIZE(codes); i++)
		assert_int_equal((int)codes[i].code, (int)i);
}

static void test_name_is_identifier(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		const char *name = doca_error_get_name(codes[i].code);

		assert_non_null(name);
		assert_string_equal(name, codes[i].name);
	}
}

static void test_names_distinct(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(codes); i++)
		for (j = i + 1; j < ARRAY_SIZE(codes); j++)
			assert_string_not_equal(doca_error_get_name(codes[i].code),
						doca_error_get_name(codes[j].code));
}

static void test_descr_present(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		const char *descr = doca_error_get_descr(codes[i].code);

		assert_non_null(descr);
		assert_true(strlen(descr) > 5);
		/* A description is prose, not the identifier again. */
		assert_string_not_equal(descr, codes[i].name);
		/* Error descriptions differ from one another too. */
		if (i > 0)
			assert_string_not_equal(descr, doca_error_get_descr(codes[i - 1].code));
	}
}

static void test_bad_state_says_what_to_check(void **state)
{
	(void)state;
	assert_non_null(strstr(doca_error_get_descr(DOCA_ERROR_BAD_STATE), "state"));
	assert_non_null(strstr(doca_error_get_descr(DOCA_ERROR_INVALID_VALUE), "argument"));
}

static void test_unknown_code_fallback(void **state)
{
	const doca_error_t unknown[] = {(doca_error_t)32, (doca_error_t)1000, (doca_error_t)-1,
					(doca_error_t)0x7fffffff};
	const char *name = doca_error_get_name((doca_error_t)32);
	const char *descr = doca_error_get_descr((doca_error_t)32);
	size_t i, j;

	(void)state;
	assert_non_null(name);
	assert_non_null(descr);
	assert_true(strlen(descr) > 0);
	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		/* The same fixed strings for every unknown value. */
		assert_ptr_equal(doca_error_get_name(unknown[i]), name);
		assert_ptr_equal(doca_error_get_descr(unknown[i]), descr);
	}
	/* The fallback is not mistaken for a real code. */
	for (j = 0; j < ARRAY_SIZE(codes); j++)
		assert_string_not_equal(name, codes[j].name);
}

/* The SOFTDOCA_* numbers: digits only, within the range, out untouched
 * on refusal. */
static void test_parse_uint(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_true(softdoca_parse_uint("0", 0, 10, &v));
	assert_int_equal(v, 0);
	assert_true(softdoca_parse_uint("0010", 0, 10, &v));
	assert_int_equal(v, 10);
	assert_true(softdoca_parse_uint("3600000", 100, 3600000, &v));
	assert_int_equal(v, 3600000);
	v = 7;
	assert_false(softdoca_parse_uint("3600001", 100, 3600000, &v));
	assert_false(softdoca_parse_uint("99", 100, 3600000, &v));
	assert_false(softdoca_parse_uint("0", 1, 10, &v));
	assert_false(softdoca_parse_uint("", 0, 10, &v));
	assert_false(softdoca_parse_uint(NULL, 0, 10, &v));
	assert_false(softdoca_parse_uint("12x", 0, 100, &v));
	assert_false(softdoca_parse_uint("+5", 0, 10, &v));
	assert_false(softdoca_parse_uint("-1", 0, 10, &v));
	assert_false(softdoca_parse_uint(" 5", 0, 10, &v));
	assert_false(softdoca_parse_uint("5 ", 0, 10, &v));
	assert_false(softdoca_parse_uint("99999999999999999999999", 0, UINT64_MAX / 10, &v));
	assert_int_equal(v, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes_are_dense),
		cmocka_unit_test(test_name_is_identifier),
		cmocka_unit_test(test_names_distinct),
		cmocka_unit_test(test_descr_present),
		cmocka_unit_test(test_bad_state_says_what_to_check),
		cmocka_unit_test(test_unknown_code_fallback),
		cmocka_unit_test(test_parse_uint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
