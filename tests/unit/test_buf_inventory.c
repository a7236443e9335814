/*
 * Unit tests of buffer inventories: create/start/stop/destroy rules, the
 * range checks of buf_get_by_args, exhaustion, expand, user data,
 * buf_dup and buf_reuse_*. Failing calls must log an ERROR line (captured).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_dev.h>
#include <doca_buf_inventory.h>
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

static uint8_t mem[1024];
static struct doca_devinfo **dev_list;
static struct doca_dev *dev; /* a real soft device: the mmap holds it */
static char sentinel_byte;  /* an address that is no buf */

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
	uint32_t nb = 0;

	if (doca_devinfo_create_list(&dev_list, &nb) != DOCA_SUCCESS || nb == 0 ||
	    doca_dev_open(dev_list[0], &dev) != DOCA_SUCCESS)
		return -1;
	struct doca_log_backend *backend;

	(void)state;
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

static struct doca_buf_inventory *new_inventory(size_t n)
{
	struct doca_buf_inventory *inv = NULL;

	assert_ok(doca_buf_inventory_create(n, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	return inv;
}

static uint32_t free_elems(const struct doca_buf_inventory *inv)
{
	uint32_t n;

	assert_ok(doca_buf_inventory_get_num_free_elements(inv, &n));
	return n;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_create_destroy(void **state)
{
	struct doca_buf_inventory *inv = NULL;
	uint32_t n;

	(void)state;
	assert_fails(doca_buf_inventory_create(0, &inv), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_create(4, NULL), DOCA_ERROR_INVALID_VALUE);
#if SIZE_MAX > UINT32_MAX
	assert_fails(doca_buf_inventory_create((size_t)UINT32_MAX + 1, &inv), DOCA_ERROR_INVALID_VALUE);
#endif
	assert_fails(doca_buf_inventory_destroy(NULL), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_buf_inventory_create(7, &inv));
	assert_ok(doca_buf_inventory_get_num_elements(inv, &n));
	assert_int_equal(n, 7);
	assert_int_equal(free_elems(inv), 7);
	assert_fails(doca_buf_inventory_get_num_elements(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_get_num_free_elements(NULL, &n), DOCA_ERROR_INVALID_VALUE);

	assert_fails(doca_buf_inventory_stop(inv), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_buf_inventory_start(inv));
	assert_fails(doca_buf_inventory_start(inv), DOCA_ERROR_BAD_STATE);
	/* Destroy implies stop. */
	assert_ok(doca_buf_inventory_destroy(inv));
}

static void test_get_needs_started(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, sizeof(mem), 0);
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *buf = NULL;

	(void)state;
	assert_ok(doca_buf_inventory_create(2, &inv));
	assert_ok(doca_mmap_start(mmap));
	/* Inventory not started. */
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &buf), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_buf_inventory_start(inv));
	assert_ok(doca_mmap_stop(mmap));
	/* Mmap not started. */
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &buf), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_mmap_start(mmap));
	assert_ok(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &buf));

	/* A stopped inventory gives nothing; bufs out stay usable. */
	assert_ok(doca_buf_inventory_stop(inv));
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &buf), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_buf_set_data(buf, mem + 2, 4));
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_int_equal(free_elems(inv), 2);

	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_get_range_checks(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem + 100, 500, 1); /* [mem+100, mem+600) */
	struct doca_buf_inventory *inv = new_inventory(4);
	struct doca_buf *sentinel = (struct doca_buf *)&sentinel_byte;
	struct doca_buf *buf = sentinel;
	uint32_t n;

	(void)state;
	/* Region outside or straddling the mmap. */
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 99, 1, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 99, 10, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 590, 11, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 600, 1, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 100, 501, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 200, SIZE_MAX, &buf),
		     DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, (void *)(UINTPTR_MAX - 4), 4, &buf),
		     DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, NULL, 0, &buf), DOCA_ERROR_INVALID_VALUE);
	/* Window outside the region. */
	assert_fails(doca_buf_inventory_buf_get_by_args(inv, mmap, mem + 200, 50, mem + 199, 1, &buf),
		     DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_args(inv, mmap, mem + 200, 50, mem + 240, 11, &buf),
		     DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_args(inv, mmap, mem + 200, 50, mem + 200, SIZE_MAX, &buf),
		     DOCA_ERROR_INVALID_VALUE);
	/* NULL arguments. */
	assert_fails(doca_buf_inventory_buf_get_by_addr(NULL, mmap, mem + 200, 8, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, NULL, mem + 200, 8, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 200, 8, NULL), DOCA_ERROR_INVALID_VALUE);
	/* Nothing was taken, nothing was written. */
	assert_ptr_equal(buf, sentinel);
	assert_int_equal(free_elems(inv), 4);
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 0);

	/* The edges themselves are fine. */
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, mmap, mem + 100, 500, &buf));
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_ok(doca_buf_inventory_buf_get_by_args(inv, mmap, mem + 590, 10, mem + 600, 0, &buf));
	assert_ok(doca_buf_dec_refcount(buf, NULL));

	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_exhaustion(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, sizeof(mem), 1);
	struct doca_buf_inventory *inv = new_inventory(3);
	struct doca_buf *bufs[3], *extra = NULL;
	uint32_t n;

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_ok(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 8 * i, 8, &bufs[i]));
	assert_int_equal(free_elems(inv), 0);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &extra), DOCA_ERROR_NO_MEMORY);
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 3); /* the failed get left the mmap count alone */

	assert_fails(doca_buf_inventory_destroy(inv), DOCA_ERROR_IN_USE);

	assert_ok(doca_buf_dec_refcount(bufs[1], NULL));
	assert_ok(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 100, 8, &extra));
	assert_ptr_equal(extra, bufs[1]); /* the element came back and went out again */

	assert_ok(doca_buf_dec_refcount(bufs[0], NULL));
	assert_ok(doca_buf_dec_refcount(bufs[2], NULL));
	assert_fails(doca_buf_inventory_destroy(inv), DOCA_ERROR_IN_USE);
	assert_ok(doca_buf_dec_refcount(extra, NULL));
	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_expand(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, sizeof(mem), 1);
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *bufs[5];
	uint32_t n;

	(void)state;
	assert_ok(doca_buf_inventory_create(1, &inv));
	assert_fails(doca_buf_inventory_expand(inv, 4), DOCA_ERROR_BAD_STATE); /* not started */
	assert_ok(doca_buf_inventory_start(inv));
	assert_fails(doca_buf_inventory_expand(inv, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_expand(inv, UINT32_MAX), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_expand(NULL, 1), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &bufs[0]));
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &bufs[1]), DOCA_ERROR_NO_MEMORY);
	assert_ok(doca_buf_inventory_expand(inv, 4));
	assert_ok(doca_buf_inventory_get_num_elements(inv, &n));
	assert_int_equal(n, 5);
	assert_int_equal(free_elems(inv), 4);
	for (int i = 1; i < 5; i++)
		assert_ok(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 8 * i, 8, &bufs[i]));
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 8, &bufs[0]), DOCA_ERROR_NO_MEMORY);
	for (int i = 0; i < 5; i++)
		assert_ok(doca_buf_dec_refcount(bufs[i], NULL));
	assert_int_equal(free_elems(inv), 5);
	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_user_data(void **state)
{
	struct doca_buf_inventory *inv = NULL;
	union doca_data ud = {.u64 = 1};

	(void)state;
	assert_ok(doca_buf_inventory_create(1, &inv));
	assert_ok(doca_buf_inventory_get_user_data(inv, &ud));
	assert_int_equal(ud.u64, 0);
	ud.ptr = &ud;
	assert_ok(doca_buf_inventory_set_user_data(inv, ud));
	ud.ptr = NULL;
	assert_ok(doca_buf_inventory_get_user_data(inv, &ud));
	assert_ptr_equal(ud.ptr, &ud);
	assert_fails(doca_buf_inventory_set_user_data(NULL, ud), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_get_user_data(inv, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_buf_inventory_destroy(inv));
}

static void assert_same_buf(const struct doca_buf *a, const struct doca_buf *b)
{
	void *pa, *pb;
	size_t la, lb;

	assert_ok(doca_buf_get_head(a, &pa));
	assert_ok(doca_buf_get_head(b, &pb));
	assert_ptr_equal(pa, pb);
	assert_ok(doca_buf_get_len(a, &la));
	assert_ok(doca_buf_get_len(b, &lb));
	assert_int_equal(la, lb);
	assert_ok(doca_buf_get_data(a, &pa));
	assert_ok(doca_buf_get_data(b, &pb));
	assert_ptr_equal(pa, pb);
	assert_ok(doca_buf_get_data_len(a, &la));
	assert_ok(doca_buf_get_data_len(b, &lb));
	assert_int_equal(la, lb);
}

static void test_dup(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem, sizeof(mem), 1);
	struct doca_buf_inventory *inv = new_inventory(4);
	struct doca_buf_inventory *small = new_inventory(2);
	struct doca_buf *a = NULL, *b = NULL, *c = NULL, *copy = NULL, *p, *q;
	uint32_t n;
	uint16_t rc;

	(void)state;
	assert_ok(doca_buf_inventory_buf_get_by_args(inv, mmap, mem, 64, mem + 8, 16, &a));
	assert_ok(doca_buf_inc_refcount(a, NULL));

	/* One buf: same memory, its own refcount of 1. */
	assert_ok(doca_buf_inventory_buf_dup(small, a, &copy));
	assert_ptr_not_equal(copy, a);
	assert_same_buf(copy, a);
	assert_ok(doca_buf_get_refcount(copy, &rc));
	assert_int_equal(rc, 1);
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 2);
	assert_ok(doca_buf_dec_refcount(copy, NULL));
	assert_ok(doca_buf_dec_refcount(a, NULL));

	/* A list is duplicated element by element. */
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, mmap, mem + 100, 10, &b));
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, mmap, mem + 200, 20, &c));
	assert_ok(doca_buf_chain_list(a, b));
	assert_ok(doca_buf_chain_list(a, c));
	assert_fails(doca_buf_inventory_buf_dup(small, b, &copy), DOCA_ERROR_NOT_PERMITTED); /* not a head */
	/* Too few free elements: refused whole, nothing taken. */
	assert_fails(doca_buf_inventory_buf_dup(small, a, &copy), DOCA_ERROR_NO_MEMORY);
	assert_int_equal(free_elems(small), 2);
	assert_ok(doca_buf_inventory_expand(small, 1));
	assert_ok(doca_buf_inventory_buf_dup(small, a, &copy));
	assert_int_equal(free_elems(small), 0);
	{
		uint32_t len = 0;

		assert_ok(doca_buf_get_list_len(copy, &len));
		assert_int_equal(len, 3);
	}
	for (p = a, q = copy; p != NULL;) {
		assert_non_null(q);
		assert_same_buf(p, q);
		assert_ok(doca_buf_get_next_in_list(p, &p));
		assert_ok(doca_buf_get_next_in_list(q, &q));
	}
	assert_null(q);
	assert_ok(doca_buf_dec_refcount(copy, NULL));
	assert_int_equal(free_elems(small), 3);

	assert_fails(doca_buf_inventory_buf_dup(NULL, a, &copy), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_dup(small, NULL, &copy), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_buf_inventory_stop(small));
	assert_fails(doca_buf_inventory_buf_dup(small, a, &copy), DOCA_ERROR_BAD_STATE);

	assert_ok(doca_buf_dec_refcount(a, NULL));
	assert_fails(doca_buf_inventory_buf_dup(inv, a, &copy), DOCA_ERROR_BAD_STATE); /* released */
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 0);
	assert_ok(doca_buf_inventory_destroy(small));
	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(mmap));
}

/* Region and data window of buf, checked in one call. */
static void assert_buf_is(const struct doca_buf *buf, void *head, size_t len, void *data, size_t data_len)
{
	void *p;
	size_t n;

	assert_ok(doca_buf_get_head(buf, &p));
	assert_ptr_equal(p, head);
	assert_ok(doca_buf_get_len(buf, &n));
	assert_int_equal(n, len);
	assert_ok(doca_buf_get_data(buf, &p));
	assert_ptr_equal(p, data);
	assert_ok(doca_buf_get_data_len(buf, &n));
	assert_int_equal(n, data_len);
}

static void test_reuse(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem + 100, 500, 1); /* [mem+100, mem+600) */
	struct doca_buf_inventory *inv = new_inventory(3);
	struct doca_buf *buf = NULL;
	uint16_t rc = 0;
	uint32_t n;

	(void)state;
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, mmap, mem + 100, 10, &buf));

	/* by_addr: a destination, empty window at the new start. */
	assert_ok(doca_buf_inventory_buf_reuse_by_addr(buf, mem + 300, 40));
	assert_buf_is(buf, mem + 300, 40, mem + 300, 0);
	/* by_data: a source, region and window the same. */
	assert_ok(doca_buf_inventory_buf_reuse_by_data(buf, mem + 120, 16));
	assert_buf_is(buf, mem + 120, 16, mem + 120, 16);
	/* by_args: any window inside the region; the whole mmap is allowed. */
	assert_ok(doca_buf_inventory_buf_reuse_by_args(buf, mem + 100, 500, mem + 590, 10));
	assert_buf_is(buf, mem + 100, 500, mem + 590, 10);

	/* Still the same element, reference and mmap accounting. */
	assert_int_equal(free_elems(inv), 2);
	assert_ok(doca_buf_get_refcount(buf, &rc));
	assert_int_equal(rc, 1);
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 1);

	/* Later calls check against the new region, not the old one. */
	assert_ok(doca_buf_inventory_buf_reuse_by_addr(buf, mem + 300, 40));
	assert_ok(doca_buf_set_data(buf, mem + 310, 30));
	assert_fails(doca_buf_set_data(buf, mem + 120, 1), DOCA_ERROR_INVALID_VALUE);

	/* The storage pattern: one buf re-pointed for every I/O. */
	for (unsigned i = 0; i < 1000; i++) {
		uint8_t *at = mem + 100 + (i * 7) % 480;

		assert_ok(doca_buf_inventory_buf_reuse_by_data(buf, at, 20));
	}
	assert_int_equal(free_elems(inv), 2);

	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 0);
	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_reuse_refused(void **state)
{
	struct doca_mmap *mmap = new_mmap(mem + 100, 500, 1); /* [mem+100, mem+600) */
	struct doca_mmap *other = new_mmap(mem + 700, 100, 1);
	struct doca_buf_inventory *inv = new_inventory(3);
	struct doca_buf *buf = NULL;
	struct doca_buf *b2 = NULL;
	uint32_t len = 0;

	(void)state;
	assert_ok(doca_buf_inventory_buf_get_by_args(inv, mmap, mem + 200, 50, mem + 210, 5, &buf));

	assert_fails(doca_buf_inventory_buf_reuse_by_addr(NULL, mem + 200, 8), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_data(NULL, mem + 200, 8), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_args(NULL, mem + 200, 8, mem + 200, 8), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_addr(buf, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	/* Outside or straddling the buf's own mmap, and overflowing ranges. */
	assert_fails(doca_buf_inventory_buf_reuse_by_addr(buf, mem + 99, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_addr(buf, mem + 590, 11), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_data(buf, mem + 600, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_data(buf, mem + 200, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_addr(buf, (void *)(UINTPTR_MAX - 4), 4), DOCA_ERROR_INVALID_VALUE);
	/* Inside another mmap is still outside this buf's mmap. */
	assert_fails(doca_buf_inventory_buf_reuse_by_data(buf, mem + 700, 10), DOCA_ERROR_INVALID_VALUE);
	/* Window outside the region. */
	assert_fails(doca_buf_inventory_buf_reuse_by_args(buf, mem + 200, 50, mem + 199, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_args(buf, mem + 200, 50, mem + 240, 11), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inventory_buf_reuse_by_args(buf, mem + 200, 50, mem + 200, SIZE_MAX),
		     DOCA_ERROR_INVALID_VALUE);
	/* A refused reuse changes nothing. */
	assert_buf_is(buf, mem + 200, 50, mem + 210, 5);

	/* A list element is re-pointed in place; the list stays as it was. */
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, mmap, mem + 400, 8, &b2));
	assert_ok(doca_buf_chain_list(buf, b2));
	assert_ok(doca_buf_inventory_buf_reuse_by_data(b2, mem + 500, 16));
	assert_buf_is(b2, mem + 500, 16, mem + 500, 16);
	assert_ok(doca_buf_get_list_len(buf, &len));
	assert_int_equal(len, 2);
	assert_ok(doca_buf_unchain_list(buf, b2));
	assert_ok(doca_buf_dec_refcount(b2, NULL));

	/* A released buf is refused. */
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_fails(doca_buf_inventory_buf_reuse_by_addr(buf, mem + 200, 8), DOCA_ERROR_BAD_STATE);
	assert_int_equal(free_elems(inv), 3);

	/* The buf's mmap gone (a thread-safe mmap may be destroyed with bufs
	 * out): nothing to re-point into. */
	assert_ok(doca_mmap_destroy(other));
	other = new_mmap(mem + 700, 100, 0);
	assert_ok(doca_mmap_enable_thread_safety(other));
	assert_ok(doca_mmap_start(other));
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, other, mem + 700, 10, &buf));
	assert_ok(doca_mmap_destroy(other));
	assert_fails(doca_buf_inventory_buf_reuse_by_data(buf, mem + 700, 10), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_buf_dec_refcount(buf, NULL));

	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(mmap));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_destroy),
		cmocka_unit_test(test_get_needs_started),
		cmocka_unit_test(test_get_range_checks),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_user_data),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_reuse),
		cmocka_unit_test(test_reuse_refused),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
