/*
 * Unit tests of DOCA Compress on a soft device (no compression engine):
 * every capability says no, task configuration and allocation answer
 * NOT_SUPPORTED with an ERROR line naming the call and the missing engine,
 * NULL arguments are INVALID_VALUE with a line, and the context is a real
 * doca_ctx whose start is refused (NOT_SUPPORTED, DOCA's answer for a
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
#include <doca_compress.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "no_engine.h"

#define NO_ENGINE "softdoca has no compression engine"

/* ---- fixture ---- */

static struct {
	struct doca_pe *pe;
	struct doca_compress *compress;
} E;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(doca_pe_create(&E.pe), DOCA_SUCCESS);
	assert_int_equal(doca_compress_create(F.dev, &E.compress), DOCA_SUCCESS);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(doca_compress_destroy(E.compress), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(E.pe), DOCA_SUCCESS);
	return 0;
}

static void on_deflate(struct doca_compress_task_compress_deflate *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

static void on_inflate(struct doca_compress_task_decompress_deflate *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

static void on_lz4_stream(struct doca_compress_task_decompress_lz4_stream *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

static void on_lz4_block(struct doca_compress_task_decompress_lz4_block *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

/* ---- tests ---- */

/* Every capability query answers "no" and leaves its output alone. */
static void test_caps_say_no(void **state)
{
	uint64_t size = 77;
	uint32_t len = 77;

	(void)state;
	assert_int_equal(doca_compress_cap_task_compress_deflate_is_supported(F.devinfo), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_deflate_is_supported(F.devinfo), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_lz4_stream_is_supported(F.devinfo),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_lz4_block_is_supported(F.devinfo), DOCA_ERROR_NOT_SUPPORTED);

	assert_int_equal(doca_compress_cap_task_compress_deflate_get_max_buf_size(F.devinfo, &size),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_deflate_get_max_buf_size(F.devinfo, &size),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_lz4_stream_get_max_buf_size(F.devinfo, &size),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_lz4_block_get_max_buf_size(F.devinfo, &size),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_compress_deflate_get_max_buf_list_len(F.devinfo, &len),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_deflate_get_max_buf_list_len(F.devinfo, &len),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_lz4_stream_get_max_buf_list_len(F.devinfo, &len),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_task_decompress_lz4_block_get_max_buf_list_len(F.devinfo, &len),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_compress_cap_get_max_num_tasks(E.compress, &len), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(size, 77);
	assert_int_equal(len, 77);
}

/* Configuring a task kind is refused with a line naming the call. */
static void test_set_conf_refused(void **state)
{
	(void)state;
	assert_refused(doca_compress_task_compress_deflate_set_conf(E.compress, on_deflate, on_deflate, 4),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_compress_task_compress_deflate_set_conf", NO_ENGINE);
	assert_refused(doca_compress_task_decompress_deflate_set_conf(E.compress, on_inflate, on_inflate, 4),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_compress_task_decompress_deflate_set_conf", NO_ENGINE);
	assert_refused(doca_compress_task_decompress_lz4_stream_set_conf(E.compress, on_lz4_stream, on_lz4_stream, 4),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_compress_task_decompress_lz4_stream_set_conf", NO_ENGINE);
	assert_refused(doca_compress_task_decompress_lz4_block_set_conf(E.compress, on_lz4_block, on_lz4_block, 4),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_compress_task_decompress_lz4_block_set_conf", NO_ENGINE);
}

/* Allocating a task with valid arguments is refused; no task comes out. */
static void test_alloc_refused(void **state)
{
	struct doca_compress_task_compress_deflate *deflate = NULL;
	struct doca_compress_task_decompress_deflate *inflate = NULL;
	struct doca_compress_task_decompress_lz4_stream *stream = NULL;
	struct doca_compress_task_decompress_lz4_block *block = NULL;
	union doca_data ud = {.u64 = 1};

	(void)state;
	assert_refused(doca_compress_task_compress_deflate_alloc_init(E.compress, F.src, F.dst, ud, &deflate),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_compress_task_compress_deflate_alloc_init", NO_ENGINE);
	assert_refused(doca_compress_task_decompress_deflate_alloc_init(E.compress, F.src, F.dst, ud, &inflate),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_compress_task_decompress_deflate_alloc_init", NO_ENGINE);
	assert_refused(doca_compress_task_decompress_lz4_stream_alloc_init(E.compress, 0, 1, F.src, F.dst, ud, &stream),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_compress_task_decompress_lz4_stream_alloc_init", NO_ENGINE);
	assert_refused(doca_compress_task_decompress_lz4_block_alloc_init(E.compress, F.src, F.dst, ud, &block),
		       DOCA_ERROR_NOT_SUPPORTED, "doca_compress_task_decompress_lz4_block_alloc_init", NO_ENGINE);
	assert_null(deflate);
	assert_null(inflate);
	assert_null(stream);
	assert_null(block);
}

/* NULL where an object or an output is needed: INVALID_VALUE and a line. */
static void test_bad_args(void **state)
{
	struct doca_compress *other = NULL;
	struct doca_compress_task_decompress_lz4_stream *stream = NULL;
	union doca_data ud = {.u64 = 0};
	uint64_t size;

	(void)state;
	assert_refused(doca_compress_create(NULL, &other), DOCA_ERROR_INVALID_VALUE, "doca_compress_create", "dev");
	assert_refused(doca_compress_create(F.dev, NULL), DOCA_ERROR_INVALID_VALUE, "doca_compress_create", NULL);
	assert_null(other);
	assert_refused(doca_compress_destroy(NULL), DOCA_ERROR_INVALID_VALUE, "doca_compress_destroy", NULL);
	assert_null(doca_compress_as_ctx(NULL));
	assert_refused(doca_compress_cap_task_decompress_lz4_stream_is_supported(NULL), DOCA_ERROR_INVALID_VALUE,
		       "devinfo", NULL);
	assert_refused(doca_compress_cap_task_decompress_deflate_get_max_buf_size(F.devinfo, NULL),
		       DOCA_ERROR_INVALID_VALUE, "output", NULL);
	assert_refused(doca_compress_cap_task_decompress_deflate_get_max_buf_size(NULL, &size),
		       DOCA_ERROR_INVALID_VALUE, "devinfo", NULL);
	assert_refused(doca_compress_cap_get_max_num_tasks(NULL, NULL), DOCA_ERROR_INVALID_VALUE, NULL, NULL);
	assert_refused(doca_compress_task_decompress_lz4_stream_set_conf(NULL, on_lz4_stream, on_lz4_stream, 4),
		       DOCA_ERROR_INVALID_VALUE, "compress is NULL", NULL);
	assert_refused(doca_compress_task_decompress_lz4_stream_alloc_init(NULL, 0, 1, F.src, F.dst, ud, &stream),
		       DOCA_ERROR_INVALID_VALUE, "compress is NULL", NULL);
	assert_refused(doca_compress_task_decompress_lz4_stream_alloc_init(E.compress, 0, 1, NULL, F.dst, ud, &stream),
		       DOCA_ERROR_INVALID_VALUE, "source", NULL);
	assert_refused(doca_compress_task_decompress_lz4_stream_alloc_init(E.compress, 0, 1, F.src, NULL, ud, &stream),
		       DOCA_ERROR_INVALID_VALUE, "destination", NULL);
	assert_refused(doca_compress_task_decompress_lz4_stream_alloc_init(E.compress, 0, 1, F.src, F.dst, ud, NULL),
		       DOCA_ERROR_INVALID_VALUE, "task output", NULL);
	/* the accessors of a NULL task answer nothing and do nothing */
	assert_null(doca_compress_task_decompress_lz4_stream_as_task(NULL));
	assert_null(doca_compress_task_decompress_lz4_stream_get_src(NULL));
	assert_null(doca_compress_task_decompress_lz4_stream_get_dst(NULL));
	assert_int_equal(doca_compress_task_decompress_lz4_stream_get_crc_cs(NULL), 0);
	assert_int_equal(doca_compress_task_decompress_lz4_stream_get_has_block_checksum(NULL), 0);
	doca_compress_task_decompress_lz4_stream_set_src(NULL, F.src);
	doca_compress_task_compress_deflate_set_dst(NULL, F.dst);
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

/* A real context: user data, state callback, PE connection. Start is
 * refused with NOT_SUPPORTED and a line, and the context stays IDLE
 * (no state change reported); stop on IDLE and destroy succeed. */
static void test_ctx_start_refused(void **state)
{
	struct doca_ctx *ctx = doca_compress_as_ctx(E.compress);
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	union doca_data got = {.u64 = 0};
	int changes = 0;
	union doca_data ud = {.ptr = &changes};

	(void)state;
	assert_non_null(ctx);
	assert_int_equal(doca_ctx_set_user_data(ctx, ud), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_get_user_data(ctx, &got), DOCA_SUCCESS);
	assert_ptr_equal(got.ptr, &changes);
	assert_int_equal(doca_ctx_set_state_changed_cb(ctx, on_state), DOCA_SUCCESS);
	assert_refused(doca_ctx_start(ctx), DOCA_ERROR_NOT_CONNECTED, "progress engine", NULL);
	assert_int_equal(doca_pe_connect_ctx(E.pe, ctx), DOCA_SUCCESS);
	assert_refused(doca_ctx_start(ctx), DOCA_ERROR_NOT_SUPPORTED, "compress", NO_ENGINE);
	assert_int_equal(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	assert_int_equal(changes, 0);
	assert_int_equal(doca_pe_progress(E.pe), 0);
	assert_int_equal(doca_ctx_stop(ctx), DOCA_SUCCESS);
	/* refused again, the same way: nothing was left half started */
	assert_refused(doca_ctx_start(ctx), DOCA_ERROR_NOT_SUPPORTED, "compress", NO_ENGINE);
	assert_int_equal(changes, 0);
}

/* The context holds its device, as every context does (a second device:
 * the fixture's is held by its mmap already). */
static void test_ctx_holds_device(void **state)
{
	struct doca_dev *dev = NULL;
	struct doca_compress *compress = NULL;

	(void)state;
	if (F.num_devs < 2)
		skip();
	assert_int_equal(doca_dev_open(F.list[1], &dev), DOCA_SUCCESS);
	assert_int_equal(doca_compress_create(dev, &compress), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_compress_destroy(compress), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_caps_say_no, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_conf_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctx_start_refused, setup, teardown),
		cmocka_unit_test(test_ctx_holds_device),
	};

	return cmocka_run_group_tests(tests, no_engine_group_setup, no_engine_group_teardown);
}
