/*
 * Unit tests of DOCA DMA memcpy tasks end to end through the progress
 * engine: data, data_len rules, buffer lists, validation, error stop,
 * asynchronous stop, notification.
 */
#include <poll.h>
#include <stdbool.h>
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
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#define MEM_SIZE 8192

struct env {
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	char mem[MEM_SIZE];
};

static struct env E;
static int ok_calls, err_calls;
static doca_error_t statuses[64];
static int num_statuses;
static uint64_t done_order[64]; /* task user data, in completion order */
static bool stop_in_first_callback;
static doca_error_t stop_result;
static enum doca_ctx_states seen_states[8];
static int num_seen;

static void on_state(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	(void)ud;
	(void)ctx;
	(void)prev;
	seen_states[num_seen++ % 8] = next;
}

static void release_task(struct doca_dma_task_memcpy *task)
{
	struct doca_task *t = doca_dma_task_memcpy_as_task(task);

	statuses[num_statuses++ % 64] = doca_task_get_status(t);
	if (stop_in_first_callback && ok_calls + err_calls == 1)
		stop_result = doca_ctx_stop(E.ctx);
	doca_task_free(t);
}

static void on_ok(struct doca_dma_task_memcpy *task, union doca_data tu, union doca_data cu)
{
	assert_ptr_equal(cu.ptr, &E);
	done_order[ok_calls % 64] = tu.u64;
	ok_calls++;
	release_task(task);
}

static void on_err(struct doca_dma_task_memcpy *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	err_calls++;
	release_task(task);
}

static int setup(void **state)
{
	struct doca_devinfo **list;
	uint32_t n;
	union doca_data ud = {.ptr = &E};

	(void)state;
	memset(&E, 0, sizeof(E));
	ok_calls = err_calls = num_statuses = num_seen = 0;
	stop_in_first_callback = false;
	assert_int_equal(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	assert_true(n > 0);
	assert_int_equal(doca_dev_open(list[0], &E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_create(&E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(E.mmap, E.mem, MEM_SIZE), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_permissions(E.mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(E.mmap, E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_create(64, &E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_pe_create(&E.pe), DOCA_SUCCESS);
	assert_int_equal(doca_dma_create(E.dev, &E.dma), DOCA_SUCCESS);
	E.ctx = doca_dma_as_ctx(E.dma);
	assert_non_null(E.ctx);
	assert_int_equal(doca_ctx_set_user_data(E.ctx, ud), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_set_state_changed_cb(E.ctx, on_state), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(E.pe, E.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_dma_task_memcpy_set_conf(E.dma, on_ok, on_err, 16), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(E.ctx), DOCA_SUCCESS);
	return 0;
}

static int teardown(void **state)
{
	enum doca_ctx_states st;

	(void)state;
	(void)doca_ctx_stop(E.ctx);
	do {
		(void)doca_pe_progress(E.pe);
		assert_int_equal(doca_ctx_get_state(E.ctx, &st), DOCA_SUCCESS);
	} while (st != DOCA_CTX_STATE_IDLE);
	assert_int_equal(doca_dma_destroy(E.dma), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(E.pe), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_stop(E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_destroy(E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_stop(E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(E.dev), DOCA_SUCCESS);
	return 0;
}

static struct doca_buf *buf_data(size_t off, size_t len)
{
	struct doca_buf *b;

	assert_int_equal(doca_buf_inventory_buf_get_by_data(E.inv, E.mmap, E.mem + off, len, &b), DOCA_SUCCESS);
	return b;
}

static struct doca_buf *buf_empty(size_t off, size_t len)
{
	struct doca_buf *b;

	assert_int_equal(doca_buf_inventory_buf_get_by_addr(E.inv, E.mmap, E.mem + off, len, &b), DOCA_SUCCESS);
	return b;
}

static size_t data_len(struct doca_buf *b)
{
	size_t n;

	assert_int_equal(doca_buf_get_data_len(b, &n), DOCA_SUCCESS);
	return n;
}

static void run_until(int total)
{
	while (ok_calls + err_calls < total)
		(void)doca_pe_progress(E.pe);
}

static void fill(size_t off, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		E.mem[off + i] = (char)(seed + i * 7);
}

static void test_copy_appends_after_data(void **state)
{
	struct doca_buf *src, *dst;
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {.u64 = 9};

	(void)state;
	fill(0, 100, 1);
	memset(E.mem + 1000, 'x', 8);
	src = buf_data(0, 100);
	dst = buf_empty(1000, 200);
	assert_int_equal(doca_buf_set_data(dst, E.mem + 1000, 8), DOCA_SUCCESS);
	assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src, dst, ud, &task), DOCA_SUCCESS);
	assert_ptr_equal(doca_dma_task_memcpy_get_src(task), src);
	assert_ptr_equal(doca_dma_task_memcpy_get_dst(task), dst);
	assert_int_equal(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	assert_int_equal(ok_calls, 0); /* nothing happens before progress */
	run_until(1);
	assert_int_equal(ok_calls, 1);
	assert_int_equal(data_len(dst), 108);
	assert_memory_equal(E.mem + 1008, E.mem, 100);
	assert_int_equal(E.mem[1000], 'x');
	assert_int_equal(data_len(src), 100);
	doca_buf_dec_refcount(src, NULL);
	doca_buf_dec_refcount(dst, NULL);
}

static void test_many_in_flight_and_pool_limit(void **state)
{
	struct doca_buf *src[16], *dst[16];
	struct doca_dma_task_memcpy *task[17];
	union doca_data ud = {.u64 = 0};
	size_t inflight;
	int i;

	(void)state;
	for (i = 0; i < 16; i++) {
		fill(i * 64, 64, i);
		src[i] = buf_data(i * 64, 64);
		dst[i] = buf_empty(4096 + i * 64, 64);
		assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src[i], dst[i], ud, &task[i]), DOCA_SUCCESS);
	}
	assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src[0], dst[0], ud, &task[16]), DOCA_ERROR_NO_MEMORY);
	for (i = 0; i < 16; i++)
		assert_int_equal(doca_task_submit(doca_dma_task_memcpy_as_task(task[i])), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_get_num_inflight_tasks(E.ctx, &inflight), DOCA_SUCCESS);
	assert_int_equal(inflight, 16);
	run_until(16);
	assert_int_equal(ok_calls, 16);
	assert_memory_equal(E.mem + 4096, E.mem, 16 * 64);
	for (i = 0; i < 16; i++) {
		doca_buf_dec_refcount(src[i], NULL);
		doca_buf_dec_refcount(dst[i], NULL);
	}
}

static void test_buf_lists(void **state)
{
	struct doca_buf *s1, *s2, *s3, *d1, *d2;
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {.u64 = 0};
	char expect[30];

	(void)state;
	fill(0, 30, 3);
	memcpy(expect, E.mem, 30);
	s1 = buf_data(0, 10);
	s2 = buf_data(10, 5);
	s3 = buf_data(15, 15);
	assert_int_equal(doca_buf_chain_list(s1, s2), DOCA_SUCCESS);
	assert_int_equal(doca_buf_chain_list(s1, s3), DOCA_SUCCESS);
	d1 = buf_empty(2000, 12);
	d2 = buf_empty(3000, 100);
	assert_int_equal(doca_buf_chain_list(d1, d2), DOCA_SUCCESS);
	assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, s1, d1, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	run_until(1);
	assert_int_equal(ok_calls, 1);
	assert_int_equal(data_len(d1), 12);
	assert_int_equal(data_len(d2), 18);
	assert_memory_equal(E.mem + 2000, expect, 12);
	assert_memory_equal(E.mem + 3000, expect + 12, 18);
	doca_buf_dec_refcount(s1, NULL);
	doca_buf_dec_refcount(d1, NULL);
}

static void test_try_submit_validates(void **state)
{
	struct doca_buf *src, *small, *empty_src;
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {.u64 = 0};

	(void)state;
	src = buf_data(0, 100);
	small = buf_empty(1000, 50);
	empty_src = buf_empty(200, 100);
	assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src, small, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy_set_src(task, empty_src);
	assert_int_equal(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	doca_dma_task_memcpy_set_src(task, NULL);
	assert_int_equal(doca_task_try_submit(doca_dma_task_memcpy_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(data_len(small), 0); /* nothing written */
	doca_task_free(doca_dma_task_memcpy_as_task(task));
	doca_buf_dec_refcount(src, NULL);
	doca_buf_dec_refcount(small, NULL);
	doca_buf_dec_refcount(empty_src, NULL);
}

static void test_failed_task_stops_context(void **state)
{
	struct doca_buf *src[4], *dst[4];
	struct doca_dma_task_memcpy *task[4];
	union doca_data ud = {.u64 = 0};
	enum doca_ctx_states st;
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		src[i] = i == 1 ? buf_empty(i * 64, 64) : buf_data(i * 64, 64); /* task 1: empty source */
		dst[i] = buf_empty(4096 + i * 64, 64);
		assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src[i], dst[i], ud, &task[i]), DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(doca_dma_task_memcpy_as_task(task[i])), DOCA_SUCCESS);
	}
	run_until(4);
	assert_int_equal(ok_calls, 1);
	assert_int_equal(err_calls, 3);
	assert_int_equal(statuses[0], DOCA_SUCCESS);
	assert_int_equal(statuses[1], DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(statuses[2], DOCA_ERROR_IO_FAILED); /* flushed */
	assert_int_equal(statuses[3], DOCA_ERROR_IO_FAILED);
	assert_int_equal(data_len(dst[2]), 0);
	do {
		(void)doca_pe_progress(E.pe);
		assert_int_equal(doca_ctx_get_state(E.ctx, &st), DOCA_SUCCESS);
	} while (st != DOCA_CTX_STATE_IDLE);
	assert_int_equal(seen_states[num_seen - 2], DOCA_CTX_STATE_STOPPING);
	assert_int_equal(seen_states[num_seen - 1], DOCA_CTX_STATE_IDLE);
	for (i = 0; i < 4; i++) {
		doca_buf_dec_refcount(src[i], NULL);
		doca_buf_dec_refcount(dst[i], NULL);
	}
}

static void test_stop_in_callback_flushes_rest(void **state)
{
	struct doca_buf *src[8], *dst[8];
	struct doca_dma_task_memcpy *task[8];
	union doca_data ud = {.u64 = 0};
	int i;

	(void)state;
	stop_in_first_callback = true;
	for (i = 0; i < 8; i++) {
		src[i] = buf_data(i * 64, 64);
		dst[i] = buf_empty(4096 + i * 64, 64);
		assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src[i], dst[i], ud, &task[i]), DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(doca_dma_task_memcpy_as_task(task[i])), DOCA_SUCCESS);
	}
	run_until(8);
	/* The first batch already executed, so later completions in it are
	 * successes; the stop is asynchronous while tasks remain. */
	assert_int_equal(stop_result, DOCA_ERROR_IN_PROGRESS);
	assert_int_equal(ok_calls + err_calls, 8);
	for (i = 0; i < 8; i++) {
		doca_buf_dec_refcount(src[i], NULL);
		doca_buf_dec_refcount(dst[i], NULL);
	}
}

static void test_notification(void **state)
{
	struct doca_buf *src, *dst;
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {.u64 = 0};
	doca_notification_handle_t h;
	struct pollfd p;

	(void)state;
	src = buf_data(0, 16);
	dst = buf_empty(100, 16);
	assert_int_equal(doca_pe_get_notification_handle(E.pe, &h), DOCA_SUCCESS);
	assert_int_equal(doca_pe_request_notification(E.pe), DOCA_SUCCESS);
	p.fd = h;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src, dst, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(doca_pe_clear_notification(E.pe, 0), DOCA_SUCCESS);
	run_until(1);
	assert_int_equal(ok_calls, 1);
	doca_buf_dec_refcount(src, NULL);
	doca_buf_dec_refcount(dst, NULL);
}

static void test_caps_and_bad_args(void **state)
{
	struct doca_devinfo *info = doca_dev_as_devinfo(E.dev);
	uint32_t u32;
	uint64_t u64;
	struct doca_dma *dma;

	(void)state;
	assert_int_equal(doca_dma_cap_task_memcpy_is_supported(info), DOCA_SUCCESS);
	assert_int_equal(doca_dma_cap_task_memcpy_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dma_cap_task_memcpy_get_max_buf_list_len(info, &u32), DOCA_SUCCESS);
	assert_true(u32 >= 1);
	assert_int_equal(doca_dma_cap_task_memcpy_get_max_buf_size(info, &u64), DOCA_SUCCESS);
	assert_true(u64 >= 1 << 20);
	assert_int_equal(doca_dma_cap_get_max_num_tasks(E.dma, &u32), DOCA_SUCCESS);
	assert_true(u32 >= 16);
	assert_int_equal(doca_dma_create(NULL, &dma), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dma_create(E.dev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_dma_as_ctx(NULL));
	assert_int_equal(doca_dma_destroy(E.dma), DOCA_ERROR_BAD_STATE); /* running */
	assert_int_equal(doca_dma_task_memcpy_set_conf(E.dma, on_ok, on_err, 4), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_dma_task_memcpy_set_conf(NULL, on_ok, on_err, 4), DOCA_ERROR_INVALID_VALUE);
}

/* doca_dma_set_ordered_completions (DOCA 3.2+, NVIDIA's virtiofs sets it
 * before start): a setter of an idle context; softdoca's DMA completes in
 * submission order, so tasks of different sizes submitted together come
 * back in the order they went in. */
static void test_ordered_completions(void **state)
{
	struct doca_dma *dma;
	struct doca_gpu_dma *gpu = NULL;
	struct doca_buf *src[8], *dst[8];
	struct doca_dma_task_memcpy *task;
	int i;

	(void)state;
	assert_int_equal(doca_dma_create(E.dev, &dma), DOCA_SUCCESS);
	assert_int_equal(doca_dma_set_ordered_completions(dma, 1), DOCA_SUCCESS);
	assert_int_equal(doca_dma_set_ordered_completions(dma, 0), DOCA_SUCCESS);
	assert_int_equal(doca_dma_destroy(dma), DOCA_SUCCESS);
	assert_int_equal(doca_dma_set_ordered_completions(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dma_set_ordered_completions(E.dma, 1), DOCA_ERROR_BAD_STATE); /* running */
	assert_int_equal(doca_dma_get_gpu_handle(E.dma, &gpu), DOCA_ERROR_NOT_SUPPORTED);
	assert_null(gpu);

	for (i = 0; i < 8; i++) {
		union doca_data ud = {.u64 = 100 + (uint64_t)i};
		size_t len = (size_t)(8 - i) * 200; /* the first is the largest */

		src[i] = buf_data(0, len);
		dst[i] = buf_empty(4096, 2000);
		assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src[i], dst[i], ud, &task), DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(doca_dma_task_memcpy_as_task(task)), DOCA_SUCCESS);
	}
	run_until(8);
	assert_int_equal(err_calls, 0);
	for (i = 0; i < 8; i++) {
		assert_int_equal(done_order[i], 100 + (uint64_t)i);
		doca_buf_dec_refcount(src[i], NULL);
		doca_buf_dec_refcount(dst[i], NULL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_copy_appends_after_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_in_flight_and_pool_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_buf_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_try_submit_validates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_task_stops_context, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_in_callback_flushes_rest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notification, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caps_and_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ordered_completions, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
