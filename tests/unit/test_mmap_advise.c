/*
 * Unit tests of DOCA mmap advise: the cache invalidate task end to end
 * through the progress engine, its buffer checks (NULL, released, another
 * device's mmap, a from-export mmap), set_conf rules, stop flushing, and
 * the capability and NULL answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_mmap_advise.h>
#include <doca_pe.h>

#define MEM_SIZE 4096
#define POLL_BOUND 100000

struct env {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_pe *pe;
	struct doca_mmap_advise *advise;
	struct doca_ctx *ctx;
	char mem[MEM_SIZE];
};

static struct env E;
static int ok_calls, err_calls;
static doca_error_t last_status;
static struct doca_mmap_advise_task_invalidate_cache *last_task;

static void on_done(struct doca_mmap_advise_task_invalidate_cache *task, union doca_data tu, union doca_data cu,
		    bool ok)
{
	struct doca_task *t = doca_mmap_advise_task_invalidate_cache_as_doca_task(task);

	assert_ptr_equal(cu.ptr, &E);
	assert_int_equal(tu.u64, 77);
	last_status = doca_task_get_status(t);
	last_task = task;
	if (ok)
		ok_calls++;
	else
		err_calls++;
}

static void on_ok(struct doca_mmap_advise_task_invalidate_cache *task, union doca_data tu, union doca_data cu)
{
	on_done(task, tu, cu, true);
}

static void on_err(struct doca_mmap_advise_task_invalidate_cache *task, union doca_data tu, union doca_data cu)
{
	on_done(task, tu, cu, false);
}

static int setup(void **state)
{
	uint32_t n;
	union doca_data ud = {.ptr = &E};

	(void)state;
	memset(&E, 0, sizeof(E));
	ok_calls = err_calls = 0;
	last_task = NULL;
	assert_int_equal(doca_devinfo_create_list(&E.list, &n), DOCA_SUCCESS);
	assert_true(n > 0);
	assert_int_equal(doca_dev_open(E.list[0], &E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_create(&E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(E.mmap, E.mem, MEM_SIZE), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_permissions(E.mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE |
								   DOCA_ACCESS_FLAG_RDMA_READ),
			 DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(E.mmap, E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_create(16, &E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_pe_create(&E.pe), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_advise_create(E.dev, &E.advise), DOCA_SUCCESS);
	E.ctx = doca_mmap_advise_as_ctx(E.advise);
	assert_non_null(E.ctx);
	assert_int_equal(doca_ctx_set_user_data(E.ctx, ud), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(E.pe, E.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_set_conf(E.advise, on_ok, on_err, 4), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(E.ctx), DOCA_SUCCESS);
	return 0;
}

static void wait_idle(void)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	for (int i = 0; i < POLL_BOUND && st != DOCA_CTX_STATE_IDLE; i++) {
		(void)doca_pe_progress(E.pe);
		assert_int_equal(doca_ctx_get_state(E.ctx, &st), DOCA_SUCCESS);
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
}

static int teardown(void **state)
{
	(void)state;
	(void)doca_ctx_stop(E.ctx);
	wait_idle();
	assert_int_equal(doca_mmap_advise_destroy(E.advise), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(E.pe), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_destroy(E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(E.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(E.list), DOCA_SUCCESS);
	return 0;
}

static struct doca_buf *buf_at(struct doca_mmap *mmap, void *addr, size_t len)
{
	struct doca_buf *b = NULL;

	assert_int_equal(doca_buf_inventory_buf_get_by_data(E.inv, mmap, addr, len, &b), DOCA_SUCCESS);
	return b;
}

static struct doca_mmap_advise_task_invalidate_cache *task_for(struct doca_buf *buf)
{
	struct doca_mmap_advise_task_invalidate_cache *t = NULL;
	union doca_data ud = {.u64 = 77};

	assert_int_equal(doca_mmap_advise_task_invalidate_cache_alloc_init(E.advise, buf, ud, &t), DOCA_SUCCESS);
	assert_non_null(t);
	return t;
}

static void progress_until(int calls)
{
	for (int i = 0; i < POLL_BOUND && ok_calls + err_calls < calls; i++)
		(void)doca_pe_progress(E.pe);
	assert_int_equal(ok_calls + err_calls, calls);
}

static void free_task(struct doca_mmap_advise_task_invalidate_cache *t)
{
	doca_task_free(doca_mmap_advise_task_invalidate_cache_as_doca_task(t));
}

/* Submit never completes a task; doca_pe_progress does, with success. */
static void test_completes_through_progress(void **state)
{
	struct doca_buf *b = buf_at(E.mmap, E.mem + 64, 128);
	struct doca_mmap_advise_task_invalidate_cache *t = task_for(b);

	(void)state;
	ok_calls = err_calls = 0;
	assert_ptr_equal(doca_mmap_advise_task_invalidate_cache_get_buf(t), b);
	assert_int_equal(doca_task_get_ctx(doca_mmap_advise_task_invalidate_cache_as_doca_task(t)), E.ctx);
	assert_int_equal(doca_task_submit(doca_mmap_advise_task_invalidate_cache_as_doca_task(t)), DOCA_SUCCESS);
	assert_int_equal(ok_calls + err_calls, 0);
	progress_until(1);
	assert_int_equal(ok_calls, 1);
	assert_int_equal(last_status, DOCA_SUCCESS);
	assert_ptr_equal(last_task, t);
	/* the same task runs again after it came back */
	assert_int_equal(doca_task_try_submit(doca_mmap_advise_task_invalidate_cache_as_doca_task(t)), DOCA_SUCCESS);
	progress_until(2);
	assert_int_equal(ok_calls, 2);
	free_task(t);
	assert_int_equal(doca_buf_dec_refcount(b, NULL), DOCA_SUCCESS);
}

/* try_submit refuses a bad buffer at once; submit lets it complete with
 * the same error through the error callback. */
static void check_refused(struct doca_buf *good, struct doca_buf *bad, doca_error_t want)
{
	struct doca_mmap_advise_task_invalidate_cache *t = task_for(good);
	struct doca_task *task = doca_mmap_advise_task_invalidate_cache_as_doca_task(t);
	int before = err_calls;

	doca_mmap_advise_task_invalidate_cache_set_buf(t, bad);
	assert_ptr_equal(doca_mmap_advise_task_invalidate_cache_get_buf(t), bad);
	assert_int_equal(doca_task_try_submit(task), want);
	assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);
	progress_until(ok_calls + err_calls + 1);
	assert_int_equal(err_calls, before + 1);
	assert_int_equal(last_status, want);
	free_task(t);
}

static void test_null_and_released_buffers(void **state)
{
	struct doca_buf *good = buf_at(E.mmap, E.mem, 16);
	struct doca_buf *released = buf_at(E.mmap, E.mem, 32);

	(void)state;
	check_refused(good, NULL, DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_dec_refcount(released, NULL), DOCA_SUCCESS);
	check_refused(good, released, DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_dec_refcount(good, NULL), DOCA_SUCCESS);
	/* the context is still running after refused tasks */
	test_completes_through_progress(state);
}

/* A buf of an mmap the context's device was not added to (needs a second
 * soft device: opening the same one again gives the same handle). */
static void test_other_device_mmap(void **state)
{
	struct doca_dev *dev2 = NULL;
	struct doca_mmap *m2;
	struct doca_buf *b, *good;
	static char mem2[256];
	uint32_t n = 0;
	struct doca_devinfo **list;

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	if (n < 2) {
		print_message("only one soft device: nothing to compare with\n");
		skip();
	}
	assert_int_equal(doca_dev_open(E.list[1], &dev2), DOCA_SUCCESS);
	assert_ptr_not_equal(dev2, E.dev);
	assert_int_equal(doca_mmap_create(&m2), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(m2, mem2, sizeof(mem2)), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(m2, dev2), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(m2), DOCA_SUCCESS);
	b = buf_at(m2, mem2, 64);
	good = buf_at(E.mmap, E.mem, 16);
	check_refused(good, b, DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_dec_refcount(b, NULL), DOCA_SUCCESS);
	assert_int_equal(doca_buf_dec_refcount(good, NULL), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(m2), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev2), DOCA_SUCCESS);
}

/* Remote memory has no cache here to invalidate. */
static void test_from_export_mmap(void **state)
{
	const void *desc = NULL;
	size_t len = 0;
	struct doca_mmap *remote = NULL;
	struct doca_buf *b, *good = buf_at(E.mmap, E.mem, 16);

	(void)state;
	assert_int_equal(doca_mmap_export_rdma(E.mmap, E.dev, &desc, &len), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_create_from_export(NULL, desc, len, E.dev, &remote), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_buf_get_by_addr(E.inv, remote, E.mem, 64, &b), DOCA_SUCCESS);
	check_refused(good, b, DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_buf_dec_refcount(b, NULL), DOCA_SUCCESS);
	assert_int_equal(doca_buf_dec_refcount(good, NULL), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(remote), DOCA_SUCCESS);
}

static void test_set_conf_and_pool(void **state)
{
	struct doca_mmap_advise_task_invalidate_cache *t[4], *extra = NULL;
	struct doca_buf *b = buf_at(E.mmap, E.mem, 8);
	union doca_data ud = {.u64 = 77};

	(void)state;
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_set_conf(E.advise, on_ok, on_err, 4),
			 DOCA_ERROR_NOT_PERMITTED);
	for (int i = 0; i < 4; i++)
		t[i] = task_for(b);
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_alloc_init(E.advise, b, ud, &extra),
			 DOCA_ERROR_NO_MEMORY);
	assert_null(extra);
	for (int i = 0; i < 4; i++)
		free_task(t[i]);
	assert_int_equal(doca_buf_dec_refcount(b, NULL), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_stop(E.ctx), DOCA_SUCCESS);
	wait_idle();
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_set_conf(E.advise, NULL, on_err, 4),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_set_conf(E.advise, on_ok, on_err, 0),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_alloc_init(E.advise, b, ud, &extra),
			 DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_set_conf(E.advise, on_ok, on_err, 2), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(E.ctx), DOCA_SUCCESS);
}

/* A stop completes queued tasks with an error; a task in flight keeps its
 * buffer. */
static void test_stop_flushes_queue(void **state)
{
	struct doca_buf *b = buf_at(E.mmap, E.mem, 8), *other = buf_at(E.mmap, E.mem + 8, 8);
	struct doca_mmap_advise_task_invalidate_cache *t1 = task_for(b), *t2 = task_for(b);
	doca_error_t err;

	(void)state;
	assert_int_equal(doca_task_submit(doca_mmap_advise_task_invalidate_cache_as_doca_task(t1)), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_mmap_advise_task_invalidate_cache_as_doca_task(t2)), DOCA_SUCCESS);
	doca_mmap_advise_task_invalidate_cache_set_buf(t1, other);
	assert_ptr_equal(doca_mmap_advise_task_invalidate_cache_get_buf(t1), b);
	assert_int_equal(doca_mmap_advise_destroy(E.advise), DOCA_ERROR_BAD_STATE);
	err = doca_ctx_stop(E.ctx);
	assert_true(err == DOCA_SUCCESS || err == DOCA_ERROR_IN_PROGRESS);
	progress_until(2);
	assert_int_equal(ok_calls, 0);
	assert_int_equal(err_calls, 2);
	assert_int_not_equal(last_status, DOCA_SUCCESS);
	free_task(t1);
	free_task(t2);
	wait_idle();
	assert_int_equal(doca_buf_dec_refcount(b, NULL), DOCA_SUCCESS);
	assert_int_equal(doca_buf_dec_refcount(other, NULL), DOCA_SUCCESS);
}

static void test_caps_and_null_args(void **state)
{
	uint64_t max = 0;
	struct doca_mmap_advise *a = NULL;
	struct doca_mmap_advise_task_invalidate_cache *t = NULL;
	union doca_data ud = {.u64 = 0};

	(void)state;
	assert_int_equal(doca_mmap_advise_cap_task_cache_invalidate_is_supported(E.list[0]), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_advise_cap_task_cache_invalidate_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_task_cache_invalidate_get_max_buf_size(E.list[0], &max), DOCA_SUCCESS);
	assert_true(max >= MEM_SIZE);
	assert_int_equal(doca_mmap_advise_task_cache_invalidate_get_max_buf_size(NULL, &max), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_task_cache_invalidate_get_max_buf_size(E.list[0], NULL),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_create(NULL, &a), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_create(E.dev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_mmap_advise_as_ctx(NULL));
	assert_null(doca_mmap_advise_task_invalidate_cache_as_doca_task(NULL));
	assert_null(doca_mmap_advise_task_invalidate_cache_get_buf(NULL));
	doca_mmap_advise_task_invalidate_cache_set_buf(NULL, NULL);
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_set_conf(NULL, on_ok, on_err, 1),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_alloc_init(NULL, NULL, ud, &t),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_advise_task_invalidate_cache_alloc_init(E.advise, NULL, ud, NULL),
			 DOCA_ERROR_INVALID_VALUE);
	assert_null(a);
	assert_null(t);
	/* the device is held while the context exists */
	assert_int_equal(doca_dev_close(E.dev), DOCA_ERROR_IN_USE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_completes_through_progress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_null_and_released_buffers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_device_mmap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_export_mmap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_conf_and_pool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_flushes_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caps_and_null_args, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
