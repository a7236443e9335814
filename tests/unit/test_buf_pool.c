/*
 * Unit tests of buffer pools: create/start/stop/destroy rules, the slot
 * layout (element size, alignment, fit in the mmap), exhaustion and
 * return, properties, and the hold a pool keeps on its mmap. Failing
 * calls must log an ERROR line (captured).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_pool.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_mmap.h>

/* ---- SDK log capture ------------------------------------------------- */

static char log_line[2048];
static int error_lines;

static void log_flush(char *line)
{
	if (strstr(line, "[ERROR]") != NULL)
		error_lines++;
}

#define assert_fails(expr, code) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), (code)); \
		assert_true(error_lines > before_); \
	} while (0)

#define assert_ok(expr) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), DOCA_SUCCESS); \
		assert_int_equal(error_lines, before_); \
	} while (0)

/* ---- fixture ------------------------------------------------------------ */

static _Alignas(4096) uint8_t mem[8192];
static struct doca_devinfo **dev_list;
static struct doca_dev *dev;
static char sentinel_byte; /* an address that is no buf pool */

static int group_teardown(void **state)
{
	(void)state;
	if (dev != NULL)
		doca_dev_close(dev);
	if (dev_list != NULL)
		doca_devinfo_destroy_list(dev_list);
	return 0;
}

static int group_setup(void **state)
{
	struct doca_log_backend *backend;
	uint32_t nb = 0;

	(void)state;
	if (doca_devinfo_create_list(&dev_list, &nb) != DOCA_SUCCESS || nb == 0 ||
	    doca_dev_open(dev_list[0], &dev) != DOCA_SUCCESS)
		return -1;
	assert_int_equal(doca_log_backend_create_with_buf_sdk(log_line, sizeof(log_line), log_flush, &backend),
			 DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	return 0;
}

static struct doca_mmap *new_mmap(void *addr, size_t len, int start)
{
	struct doca_mmap *mmap = NULL;

	assert_ok(doca_mmap_create(&mmap));
	assert_ok(doca_mmap_set_memrange(mmap, addr, len));
	assert_ok(doca_mmap_add_dev(mmap, dev));
	if (start)
		assert_ok(doca_mmap_start(mmap));
	return mmap;
}

static uint32_t free_elems(const struct doca_buf_pool *pool)
{
	uint32_t n;

	assert_ok(doca_buf_pool_get_num_free_elements(pool, &n));
	return n;
}

static void *buf_head(const struct doca_buf *buf)
{
	void *p;

	assert_ok(doca_buf_get_head(buf, &p));
	return p;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_create_destroy(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, 1024, 1);
	struct doca_buf_pool *sentinel = (struct doca_buf_pool *)&sentinel_byte;
	struct doca_buf_pool *pool = sentinel;
	uint32_t n;

	(void)state;
	assert_fails(doca_buf_pool_create(0, 8, mmap, &pool), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_create(8, 0, mmap, &pool), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_create(8, 8, NULL, &pool), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_create(8, 8, mmap, NULL), DOCA_ERROR_INVALID_VALUE);
#if SIZE_MAX > UINT32_MAX
	assert_fails(doca_buf_pool_create((size_t)UINT32_MAX + 1, 1, mmap, &pool), DOCA_ERROR_INVALID_VALUE);
#endif
	assert_ptr_equal(pool, sentinel);
	assert_fails(doca_buf_pool_destroy(NULL), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_buf_pool_create(8, 16, mmap, &pool));
	assert_ok(doca_buf_pool_get_num_elements(pool, &n));
	assert_int_equal(n, 8);
	assert_int_equal(free_elems(pool), 8);
	/* Never started: destroy is still fine. */
	assert_ok(doca_buf_pool_destroy(pool));

	/* Destroy implies stop. */
	assert_ok(doca_buf_pool_create(8, 16, mmap, &pool));
	assert_ok(doca_buf_pool_start(pool));
	assert_ok(doca_buf_pool_destroy(pool));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_lifecycle(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, 1024, 0);
	struct doca_buf_pool *pool = NULL;
	struct doca_buf *buf = NULL;

	(void)state;
	/* An unstarted mmap may back a pool, but the pool cannot start. */
	assert_ok(doca_buf_pool_create(4, 64, mmap, &pool));
	assert_fails(doca_buf_pool_buf_alloc(pool, &buf), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_buf_pool_start(pool), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_buf_pool_stop(pool), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_mmap_start(mmap));
	assert_ok(doca_buf_pool_start(pool));
	assert_fails(doca_buf_pool_start(pool), DOCA_ERROR_BAD_STATE);

	/* Properties are fixed while started. */
	assert_fails(doca_buf_pool_set_element_alignment(pool, 8), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_buf_pool_set_user_data(pool, (union doca_data){.u64 = 1}), DOCA_ERROR_BAD_STATE);

	/* Bufs out: neither stop nor destroy. */
	assert_ok(doca_buf_pool_buf_alloc(pool, &buf));
	assert_fails(doca_buf_pool_stop(pool), DOCA_ERROR_IN_USE);
	assert_fails(doca_buf_pool_destroy(pool), DOCA_ERROR_IN_USE);
	assert_ok(doca_buf_dec_refcount(buf, NULL));

	/* Stopped: no bufs, properties settable, can start again. */
	assert_ok(doca_buf_pool_stop(pool));
	assert_fails(doca_buf_pool_buf_alloc(pool, &buf), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_buf_pool_set_element_alignment(pool, 128));
	assert_ok(doca_buf_pool_start(pool));
	assert_ok(doca_buf_pool_buf_alloc(pool, &buf));
	assert_int_equal((uintptr_t)buf_head(buf) % 128, 0);
	assert_ok(doca_buf_dec_refcount(buf, NULL));

	assert_fails(doca_buf_pool_buf_alloc(NULL, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_buf_alloc(pool, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_start(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_buf_pool_destroy(pool));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_layout_and_exhaustion(void **state)
{
	enum { N = 10, SIZE = 100, ALIGN = 64, STRIDE = 128 };
	/* The mmap starts 3 bytes past a 4096 boundary: the first slot is
	 * rounded up to the next multiple of 64. */
	uint8_t *start = mem + 3;
	uint8_t *first = mem + 64;
	struct doca_mmap *mmap = new_mmap(start, (size_t)(first - start) + (N - 1) * STRIDE + SIZE, 1);
	struct doca_buf_pool *pool = NULL;
	struct doca_buf *bufs[N];
	struct doca_buf *extra = NULL;
	uint8_t seen[N] = {0};
	void *p;
	size_t n;

	(void)state;
	assert_ok(doca_buf_pool_create(N, SIZE, mmap, &pool));
	assert_ok(doca_buf_pool_set_element_alignment(pool, ALIGN));
	assert_ok(doca_buf_pool_start(pool));

	for (unsigned i = 0; i < N; i++) {
		uint8_t *head;
		size_t off;

		assert_ok(doca_buf_pool_buf_alloc(pool, &bufs[i]));
		head = buf_head(bufs[i]);
		off = (size_t)(head - first);
		/* Each buf is one slot: on the grid, whole, empty. */
		assert_true(head >= first);
		assert_int_equal(off % STRIDE, 0);
		assert_true(off / STRIDE < N);
		assert_int_equal(seen[off / STRIDE], 0);
		seen[off / STRIDE] = 1;
		assert_ok(doca_buf_get_len(bufs[i], &n));
		assert_int_equal(n, SIZE);
		assert_ok(doca_buf_get_data(bufs[i], &p));
		assert_ptr_equal(p, head);
		assert_ok(doca_buf_get_data_len(bufs[i], &n));
		assert_int_equal(n, 0);
		assert_int_equal(free_elems(pool), N - 1 - i);
	}
	assert_fails(doca_buf_pool_buf_alloc(pool, &extra), DOCA_ERROR_EMPTY);
	assert_null(extra);

	/* The region is the slot: data may fill it, not pass it. */
	assert_ok(doca_buf_set_data(bufs[0], buf_head(bufs[0]), SIZE));
	assert_fails(doca_buf_set_data(bufs[0], buf_head(bufs[0]), SIZE + 1), DOCA_ERROR_INVALID_VALUE);

	/* A buf returns at refcount zero, and the slot comes back with it. */
	p = buf_head(bufs[3]);
	assert_ok(doca_buf_inc_refcount(bufs[3], NULL));
	assert_ok(doca_buf_dec_refcount(bufs[3], NULL));
	assert_int_equal(free_elems(pool), 0);
	assert_ok(doca_buf_dec_refcount(bufs[3], NULL));
	assert_int_equal(free_elems(pool), 1);
	assert_ok(doca_buf_pool_buf_alloc(pool, &bufs[3]));
	assert_ptr_equal(buf_head(bufs[3]), p);
	assert_ok(doca_buf_get_data_len(bufs[3], &n));
	assert_int_equal(n, 0);

	/* Pool bufs are ordinary bufs: they chain, and a list returns whole. */
	assert_ok(doca_buf_chain_list(bufs[0], bufs[1]));
	assert_ok(doca_buf_dec_refcount(bufs[0], NULL));
	assert_int_equal(free_elems(pool), 2);
	for (unsigned i = 2; i < N; i++)
		assert_ok(doca_buf_dec_refcount(bufs[i], NULL));
	assert_int_equal(free_elems(pool), N);

	assert_ok(doca_buf_pool_destroy(pool));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_fit(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, 1000, 1);
	struct doca_buf_pool *pool = NULL;

	(void)state;
	/* Exactly full. */
	assert_ok(doca_buf_pool_create(10, 100, mmap, &pool));
	assert_ok(doca_buf_pool_start(pool));
	assert_ok(doca_buf_pool_destroy(pool));
	/* One byte short. */
	assert_ok(doca_buf_pool_create(10, 101, mmap, &pool));
	assert_fails(doca_buf_pool_start(pool), DOCA_ERROR_INITIALIZATION);
	assert_ok(doca_buf_pool_destroy(pool));
	/* Alignment padding pushes it over (10 slots of 100 every 128). */
	assert_ok(doca_buf_pool_create(10, 100, mmap, &pool));
	assert_ok(doca_buf_pool_set_element_alignment(pool, 128));
	assert_fails(doca_buf_pool_start(pool), DOCA_ERROR_INITIALIZATION);
	/* ... and fewer slots fit: the last one needs only its 100 bytes. */
	assert_ok(doca_buf_pool_destroy(pool));
	assert_ok(doca_buf_pool_create(7, 100, mmap, &pool));
	assert_ok(doca_buf_pool_set_element_alignment(pool, 128));
	assert_ok(doca_buf_pool_start(pool));
	assert_ok(doca_buf_pool_destroy(pool));
	/* Sizes whose product overflows. */
	assert_ok(doca_buf_pool_create(3, SIZE_MAX / 2, mmap, &pool));
	assert_fails(doca_buf_pool_start(pool), DOCA_ERROR_INITIALIZATION);
	assert_ok(doca_buf_pool_destroy(pool));
	/* An alignment larger than the address space left. */
	assert_ok(doca_buf_pool_create(1, 1, mmap, &pool));
	assert_ok(doca_buf_pool_set_element_alignment(pool, (SIZE_MAX >> 1) + 1));
	assert_fails(doca_buf_pool_start(pool), DOCA_ERROR_INITIALIZATION);
	assert_ok(doca_buf_pool_destroy(pool));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_properties(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, 1024, 1);
	struct doca_buf_pool *pool = NULL;
	union doca_data ud = {.u64 = 99};
	size_t align = 0;
	uint32_t n;

	(void)state;
	assert_ok(doca_buf_pool_create(4, 16, mmap, &pool));
	assert_ok(doca_buf_pool_get_user_data(pool, &ud));
	assert_int_equal(ud.u64, 0);
	assert_ok(doca_buf_pool_set_user_data(pool, (union doca_data){.u64 = 0xfeed}));
	assert_ok(doca_buf_pool_get_user_data(pool, &ud));
	assert_int_equal(ud.u64, 0xfeed);

	assert_ok(doca_buf_pool_get_element_alignment(pool, &align));
	assert_int_equal(align, 1);
	assert_fails(doca_buf_pool_set_element_alignment(pool, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_set_element_alignment(pool, 3), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_set_element_alignment(pool, 48), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_buf_pool_set_element_alignment(pool, 1));
	assert_ok(doca_buf_pool_set_element_alignment(pool, 16));
	assert_ok(doca_buf_pool_get_element_alignment(pool, &align));
	assert_int_equal(align, 16);

	assert_fails(doca_buf_pool_set_user_data(NULL, ud), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_get_user_data(NULL, &ud), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_get_user_data(pool, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_set_element_alignment(NULL, 8), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_get_element_alignment(NULL, &align), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_get_element_alignment(pool, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_get_num_elements(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_get_num_elements(pool, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_get_num_free_elements(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_pool_get_num_free_elements(pool, NULL), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_buf_pool_destroy(pool));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_holds_mmap(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, 1024, 1);
	struct doca_buf_pool *pool = NULL;
	struct doca_buf *buf = NULL;

	(void)state;
	/* While the pool exists its mmap stays: no stop, no destroy. */
	assert_ok(doca_buf_pool_create(4, 16, mmap, &pool));
	assert_fails(doca_mmap_stop(mmap), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_buf_pool_destroy(pool));
	assert_ok(doca_mmap_destroy(mmap));

	/* A thread-safe mmap may be destroyed under the pool: its memory is no
	 * longer usable, so allocation is refused and nothing crashes. */
	mmap = new_mmap(mem, 1024, 0);
	assert_ok(doca_mmap_enable_thread_safety(mmap));
	assert_ok(doca_mmap_start(mmap));
	assert_ok(doca_buf_pool_create(4, 16, mmap, &pool));
	assert_ok(doca_buf_pool_start(pool));
	assert_ok(doca_mmap_destroy(mmap));
	assert_fails(doca_buf_pool_buf_alloc(pool, &buf), DOCA_ERROR_BAD_STATE);
	assert_int_equal(free_elems(pool), 4);
	assert_ok(doca_buf_pool_destroy(pool));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_destroy),
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_layout_and_exhaustion),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_properties),
		cmocka_unit_test(test_holds_mmap),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
