/*
 * Unit tests of DOCA Erasure Coding on a soft device (no erasure-coding
 * engine): every capability says no, task configuration, task allocation
 * and matrix creation answer NOT_SUPPORTED with an ERROR line naming the
 * call and the missing engine, NULL arguments are INVALID_VALUE with a
 * line, a matrix softdoca did not make is refused, and the context is a
 * real doca_ctx whose start is refused (NOT_SUPPORTED, DOCA's answer for a
 * device the context does not support) and which stays IDLE.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_erasure_coding.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "no_engine.h"

#define NO_ENGINE "softdoca has no erasure-coding engine"

/* ---- fixture ---- */

static struct {
	struct doca_pe *pe;
	struct doca_ec *ec;
} E;

/* Stands for a matrix a program got from elsewhere: never dereferenced. */
static char not_a_matrix[64];
#define FOREIGN_MATRIX ((struct doca_ec_matrix *)(void *)not_a_matrix)

static int setup(void **state)
{
	(void)state;
	assert_int_equal(doca_pe_create(&E.pe), DOCA_SUCCESS);
	assert_int_equal(doca_ec_create(F.dev, &E.ec), DOCA_SUCCESS);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(doca_ec_destroy(E.ec), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(E.pe), DOCA_SUCCESS);
	return 0;
}

static void on_create(struct doca_ec_task_create *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

static void on_recover(struct doca_ec_task_recover *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

static void on_update(struct doca_ec_task_update *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

static void on_mul(struct doca_ec_task_galois_mul *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

/* ---- tests ---- */

/* Every capability query answers "no" and leaves its output alone. */
static void test_caps_say_no(void **state)
{
	uint64_t block = 77;
	uint32_t len = 77;

	(void)state;
	assert_int_equal(doca_ec_cap_task_create_is_supported(F.devinfo), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_ec_cap_task_recover_is_supported(F.devinfo), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_ec_cap_task_update_is_supported(F.devinfo), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_ec_cap_task_galois_mul_is_supported(F.devinfo), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_ec_cap_get_max_block_size(F.devinfo, &block), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_ec_cap_get_max_buf_list_len(F.devinfo, &len), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(block, 77);
	assert_int_equal(len, 77);
}

/* DOCA's values, which programs store and compare. */
static void test_matrix_type_values(void **state)
{
	(void)state;
	assert_int_equal(DOCA_EC_MATRIX_TYPE_CAUCHY, 1);
	assert_int_equal(DOCA_EC_MATRIX_TYPE_VANDERMONDE, 2);
}

static void test_set_conf_refused(void **state)
{
	(void)state;
	assert_refused(doca_ec_task_create_set_conf(E.ec, on_create, on_create, 4), DOCA_ERROR_NOT_SUPPORTED,
		       "doca_ec_task_create_set_conf", NO_ENGINE);
	assert_refused(doca_ec_task_recover_set_conf(E.ec, on_recover, on_recover, 4), DOCA_ERROR_NOT_SUPPORTED,
		       "doca_ec_task_recover_set_conf", NO_ENGINE);
	assert_refused(doca_ec_task_update_set_conf(E.ec, on_update, on_update, 4), DOCA_ERROR_NOT_SUPPORTED,
		       "doca_ec_task_update_set_conf", NO_ENGINE);
	assert_refused(doca_ec_task_galois_mul_set_conf(E.ec, on_mul, on_mul, 4), DOCA_ERROR_NOT_SUPPORTED,
		       "doca_ec_task_galois_mul_set_conf", NO_ENGINE);
}

/* No matrix can be made; the output stays NULL. */
static void test_matrix_create_refused(void **state)
{
	struct doca_ec_matrix *m = NULL;
	uint8_t raw[4 * 2] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint32_t idx[1] = {0};

	(void)state;
	assert_refused(doca_ec_matrix_create(E.ec, DOCA_EC_MATRIX_TYPE_CAUCHY, 4, 2, &m), DOCA_ERROR_NOT_SUPPORTED,
		       "doca_ec_matrix_create", NO_ENGINE);
	assert_refused(doca_ec_matrix_create_from_raw(E.ec, raw, 4, 2, &m), DOCA_ERROR_NOT_SUPPORTED,
		       "doca_ec_matrix_create_from_raw", NO_ENGINE);
	assert_refused(doca_ec_matrix_create_recover(E.ec, FOREIGN_MATRIX, idx, 1, &m), DOCA_ERROR_NOT_SUPPORTED,
		       "doca_ec_matrix_create_recover", NO_ENGINE);
	assert_refused(doca_ec_matrix_create_update(E.ec, FOREIGN_MATRIX, idx, 1, &m), DOCA_ERROR_NOT_SUPPORTED,
		       "doca_ec_matrix_create_update", NO_ENGINE);
	assert_null(m);
	assert_refused(doca_ec_matrix_destroy(FOREIGN_MATRIX), DOCA_ERROR_INVALID_VALUE, "doca_ec_matrix_destroy",
		       "not a matrix");
}

/* Allocating a task with valid-looking arguments is refused. */
static void test_alloc_refused(void **state)
{
	struct doca_ec_task_create *create = NULL;
	struct doca_ec_task_recover *recover = NULL;
	struct doca_ec_task_update *update = NULL;
	struct doca_ec_task_galois_mul *mul = NULL;
	union doca_data ud = {.u64 = 1};

	(void)state;
	assert_refused(doca_ec_task_create_allocate_init(E.ec, FOREIGN_MATRIX, F.src, F.dst, ud, &create),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_ec_task_create_allocate_init", NO_ENGINE);
	assert_refused(doca_ec_task_recover_allocate_init(E.ec, FOREIGN_MATRIX, F.src, F.dst, ud, &recover),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_ec_task_recover_allocate_init", NO_ENGINE);
	assert_refused(doca_ec_task_update_allocate_init(E.ec, FOREIGN_MATRIX, F.src, F.dst, ud, &update),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_ec_task_update_allocate_init", NO_ENGINE);
	assert_refused(doca_ec_task_galois_mul_allocate_init(E.ec, FOREIGN_MATRIX, F.src, F.dst, ud, &mul),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_ec_task_galois_mul_allocate_init", NO_ENGINE);
	assert_null(create);
	assert_null(recover);
	assert_null(update);
	assert_null(mul);
}

static void test_bad_args(void **state)
{
	struct doca_ec *other = NULL;
	struct doca_ec_matrix *m = NULL;
	struct doca_ec_task_create *create = NULL;
	union doca_data ud = {.u64 = 0};
	uint32_t idx[1] = {0};
	uint64_t block;

	(void)state;
	assert_refused(doca_ec_create(NULL, &other), DOCA_ERROR_INVALID_VALUE, "doca_ec_create", "dev");
	assert_refused(doca_ec_create(F.dev, NULL), DOCA_ERROR_INVALID_VALUE, "doca_ec_create", NULL);
	assert_null(other);
	assert_refused(doca_ec_destroy(NULL), DOCA_ERROR_INVALID_VALUE, "doca_ec_destroy", NULL);
	assert_null(doca_ec_as_ctx(NULL));
	assert_refused(doca_ec_cap_task_create_is_supported(NULL), DOCA_ERROR_INVALID_VALUE, "devinfo", NULL);
	assert_refused(doca_ec_cap_get_max_block_size(NULL, &block), DOCA_ERROR_INVALID_VALUE, "devinfo", NULL);
	assert_refused(doca_ec_cap_get_max_block_size(F.devinfo, NULL), DOCA_ERROR_INVALID_VALUE, "output", NULL);
	assert_refused(doca_ec_task_create_set_conf(NULL, on_create, on_create, 4), DOCA_ERROR_INVALID_VALUE,
		       "ec is NULL", NULL);
	assert_refused(doca_ec_matrix_create(NULL, DOCA_EC_MATRIX_TYPE_CAUCHY, 4, 2, &m), DOCA_ERROR_INVALID_VALUE,
		       "ec is NULL", NULL);
	assert_refused(doca_ec_matrix_create(E.ec, DOCA_EC_MATRIX_TYPE_CAUCHY, 4, 2, NULL), DOCA_ERROR_INVALID_VALUE,
		       "matrix output", NULL);
	assert_refused(doca_ec_matrix_create_from_raw(E.ec, NULL, 4, 2, &m), DOCA_ERROR_INVALID_VALUE, "data", NULL);
	assert_refused(doca_ec_matrix_create_recover(E.ec, NULL, idx, 1, &m), DOCA_ERROR_INVALID_VALUE,
		       "coding_matrix", NULL);
	assert_refused(doca_ec_matrix_create_recover(E.ec, FOREIGN_MATRIX, NULL, 1, &m), DOCA_ERROR_INVALID_VALUE,
		       "missing_indices", NULL);
	assert_refused(doca_ec_matrix_destroy(NULL), DOCA_ERROR_INVALID_VALUE, "doca_ec_matrix_destroy", NULL);
	assert_refused(doca_ec_task_create_allocate_init(E.ec, NULL, F.src, F.dst, ud, &create),
		       DOCA_ERROR_INVALID_VALUE, "matrix", NULL);
	assert_refused(doca_ec_task_create_allocate_init(E.ec, FOREIGN_MATRIX, NULL, F.dst, ud, &create),
		       DOCA_ERROR_INVALID_VALUE, "source", NULL);
	assert_refused(doca_ec_task_create_allocate_init(E.ec, FOREIGN_MATRIX, F.src, NULL, ud, &create),
		       DOCA_ERROR_INVALID_VALUE, "destination", NULL);
	assert_refused(doca_ec_task_create_allocate_init(E.ec, FOREIGN_MATRIX, F.src, F.dst, ud, NULL),
		       DOCA_ERROR_INVALID_VALUE, "task output", NULL);
	assert_null(m);
	assert_null(create);
	/* the accessors of a NULL task answer nothing and do nothing */
	assert_null(doca_ec_task_create_as_task(NULL));
	assert_null(doca_ec_task_create_get_rdnc_blocks(NULL));
	assert_null(doca_ec_task_create_get_original_data_blocks(NULL));
	assert_null(doca_ec_task_recover_get_recovered_data(NULL));
	assert_null(doca_ec_task_recover_get_available_blocks(NULL));
	doca_ec_task_recover_set_recovered_data_blocks(NULL, F.dst);
	doca_ec_task_create_set_coding_matrix(NULL, FOREIGN_MATRIX);
}

static void on_state(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	int *changes = ud.ptr;

	(void)ctx;
	(void)prev;
	(void)next;
	(*changes)++;
}

/* A real context; start is refused with NOT_SUPPORTED and a line, and it
 * stays IDLE (no state change reported); stop on IDLE and destroy work. */
static void test_ctx_start_refused(void **state)
{
	struct doca_ctx *ctx = doca_ec_as_ctx(E.ec);
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	int changes = 0;
	union doca_data ud = {.ptr = &changes};

	(void)state;
	assert_non_null(ctx);
	assert_int_equal(doca_ctx_set_user_data(ctx, ud), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_set_state_changed_cb(ctx, on_state), DOCA_SUCCESS);
	assert_refused(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED, "progress engine", NULL);
	assert_int_equal(doca_pe_connect_ctx(E.pe, ctx), DOCA_SUCCESS);
	assert_refused(doca_ctx_start(ctx), DOCA_ERROR_NOT_SUPPORTED, "ec context", NO_ENGINE);
	assert_int_equal(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	assert_int_equal(changes, 0);
	assert_int_equal(doca_pe_progress(E.pe), 0);
	assert_int_equal(doca_ctx_stop(ctx), DOCA_SUCCESS);
	assert_refused(doca_ctx_start(ctx), DOCA_ERROR_NOT_SUPPORTED, "ec context", NO_ENGINE);
	assert_int_equal(changes, 0);
}

/* Destroy while connected to a PE works (IDLE), and then the PE is free. */
static void test_destroy_connected(void **state)
{
	struct doca_ec *ec = NULL;
	struct doca_pe *pe = NULL;

	(void)state;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_ec_create(F.dev, &ec), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, doca_ec_as_ctx(ec)), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_ec_destroy(ec), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_caps_say_no, setup, teardown),
		cmocka_unit_test(test_matrix_type_values),
		cmocka_unit_test_setup_teardown(test_set_conf_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_matrix_create_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctx_start_refused, setup, teardown),
		cmocka_unit_test(test_destroy_connected),
	};

	return cmocka_run_group_tests(tests, no_engine_group_setup, no_engine_group_teardown);
}
