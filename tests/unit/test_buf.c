/*
 * Unit tests of doca_buf: region and data window rules, reference counts,
 * lists (chain, unchain, length, last, flags) and the refcount rules of
 * list elements. Failing calls must log an ERROR line (captured).
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

#include "buf.h"

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

/* ---- fixture: one started mmap over mem, one started inventory -------- */

#define NUM_ELEMS 16

static uint8_t mem[4096];
static struct doca_devinfo **dev_list;
static struct doca_dev *dev; /* a real soft device: the mmap holds it */

struct fixture {
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
};

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

static int setup(void **state)
{
	static struct fixture f;

	assert_ok(doca_mmap_create(&f.mmap));
	assert_ok(doca_mmap_set_memrange(f.mmap, mem, sizeof(mem)));
	assert_ok(doca_mmap_add_dev(f.mmap, dev));
	assert_ok(doca_mmap_start(f.mmap));
	assert_ok(doca_buf_inventory_create(NUM_ELEMS, &f.inv));
	assert_ok(doca_buf_inventory_start(f.inv));
	*state = &f;
	return 0;
}

/* Teardown also proves every test returned all its bufs. */
static int teardown(void **state)
{
	struct fixture *f = *state;
	uint32_t n;

	assert_ok(doca_buf_inventory_get_num_free_elements(f->inv, &n));
	assert_int_equal(n, NUM_ELEMS);
	assert_ok(doca_mmap_get_num_bufs(f->mmap, &n));
	assert_int_equal(n, 0);
	assert_ok(doca_buf_inventory_destroy(f->inv));
	assert_ok(doca_mmap_stop(f->mmap));
	assert_ok(doca_mmap_destroy(f->mmap));
	return 0;
}

static struct doca_buf *get_buf(struct fixture *f, size_t off, size_t len)
{
	struct doca_buf *buf = NULL;

	assert_ok(doca_buf_inventory_buf_get_by_addr(f->inv, f->mmap, mem + off, len, &buf));
	return buf;
}

static uint32_t free_elems(struct fixture *f)
{
	uint32_t n;

	assert_ok(doca_buf_inventory_get_num_free_elements(f->inv, &n));
	return n;
}

static uint32_t list_len(const struct doca_buf *buf)
{
	uint32_t n = 0;

	assert_ok(doca_buf_get_list_len(buf, &n));
	return n;
}

static void assert_window(const struct doca_buf *buf, const void *data, size_t data_len)
{
	void *d = NULL;
	size_t dl = 0;

	assert_ok(doca_buf_get_data(buf, &d));
	assert_ok(doca_buf_get_data_len(buf, &dl));
	assert_ptr_equal(d, data);
	assert_int_equal(dl, data_len);
}

/* ---- region and window ---------------------------------------------------- */

static void test_getters(void **state)
{
	struct fixture *f = *state;
	struct doca_buf *a = NULL, *b = NULL, *c = NULL;
	void *head = NULL;
	size_t len = 0;

	assert_ok(doca_buf_inventory_buf_get_by_addr(f->inv, f->mmap, mem + 64, 128, &a));
	assert_ok(doca_buf_get_head(a, &head));
	assert_ok(doca_buf_get_len(a, &len));
	assert_ptr_equal(head, mem + 64);
	assert_int_equal(len, 128);
	assert_window(a, mem + 64, 0); /* a destination: empty window at the head */

	assert_ok(doca_buf_inventory_buf_get_by_data(f->inv, f->mmap, mem + 10, 20, &b));
	assert_window(b, mem + 10, 20); /* a source: window = region */

	assert_ok(doca_buf_inventory_buf_get_by_args(f->inv, f->mmap, mem, 100, mem + 40, 30, &c));
	assert_window(c, mem + 40, 30);

	assert_fails(doca_buf_get_head(NULL, &head), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_get_len(a, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_get_data(a, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_get_data_len(NULL, &len), DOCA_ERROR_INVALID_VALUE);
	assert_ptr_equal(softdoca_buf_get_mmap(a), f->mmap);

	assert_ok(doca_buf_dec_refcount(a, NULL));
	assert_ok(doca_buf_dec_refcount(b, NULL));
	assert_ok(doca_buf_dec_refcount(c, NULL));
}

static void test_window_rules(void **state)
{
	struct fixture *f = *state;
	struct doca_buf *buf = get_buf(f, 100, 50); /* region [mem+100, mem+150) */

	assert_ok(doca_buf_set_data(buf, mem + 100, 50));
	assert_ok(doca_buf_set_data(buf, mem + 120, 30));
	assert_ok(doca_buf_set_data(buf, mem + 150, 0)); /* empty window at the end */
	assert_ok(doca_buf_set_data(buf, mem + 110, 10));

	/* Refused windows leave the buf as it was. */
	assert_fails(doca_buf_set_data(buf, mem + 99, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_set_data(buf, mem + 120, 31), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_set_data(buf, mem + 151, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_set_data(buf, mem + 100, 51), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_set_data(buf, mem + 101, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_set_data(buf, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_set_data(NULL, mem + 100, 1), DOCA_ERROR_INVALID_VALUE);
	assert_window(buf, mem + 110, 10);

	/* data_len keeps the start and must end inside the region. */
	assert_ok(doca_buf_set_data_len(buf, 40));
	assert_window(buf, mem + 110, 40);
	assert_fails(doca_buf_set_data_len(buf, 41), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_set_data_len(buf, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	assert_window(buf, mem + 110, 40);
	assert_ok(doca_buf_reset_data_len(buf));
	assert_window(buf, mem + 110, 0);
	assert_fails(doca_buf_reset_data_len(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_set_data_len(NULL, 0), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_buf_dec_refcount(buf, NULL));
}

/* ---- reference counts ------------------------------------------------------- */

static void test_refcount(void **state)
{
	struct fixture *f = *state;
	struct doca_buf *buf = get_buf(f, 0, 8);
	uint16_t rc = 0;
	uint32_t n;

	assert_ok(doca_buf_get_refcount(buf, &rc));
	assert_int_equal(rc, 1);
	assert_ok(doca_buf_inc_refcount(buf, &rc));
	assert_int_equal(rc, 1); /* the count before */
	assert_ok(doca_buf_inc_refcount(buf, NULL));
	assert_ok(doca_buf_get_refcount(buf, &rc));
	assert_int_equal(rc, 3);
	assert_ok(doca_mmap_get_num_bufs(f->mmap, &n));
	assert_int_equal(n, 1); /* one buf however many references */

	assert_ok(doca_buf_dec_refcount(buf, &rc));
	assert_int_equal(rc, 3);
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_int_equal(free_elems(f), NUM_ELEMS - 1);
	assert_ok(doca_buf_dec_refcount(buf, &rc));
	assert_int_equal(rc, 1);
	/* At zero the element went back and the mmap forgot it. */
	assert_int_equal(free_elems(f), NUM_ELEMS);
	assert_ok(doca_mmap_get_num_bufs(f->mmap, &n));
	assert_int_equal(n, 0);

	/* A released buf cannot be released or referenced again. */
	assert_fails(doca_buf_dec_refcount(buf, NULL), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_buf_inc_refcount(buf, NULL), DOCA_ERROR_BAD_STATE);
	assert_int_equal(free_elems(f), NUM_ELEMS);
	assert_fails(doca_buf_dec_refcount(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_inc_refcount(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_get_refcount(NULL, &rc), DOCA_ERROR_INVALID_VALUE);
}

static void test_refcount_max(void **state)
{
	struct fixture *f = *state;
	struct doca_buf *buf = get_buf(f, 0, 8);
	uint16_t rc;

	for (uint32_t i = 1; i < UINT16_MAX; i++)
		assert_int_equal(doca_buf_inc_refcount(buf, NULL), DOCA_SUCCESS);
	assert_ok(doca_buf_get_refcount(buf, &rc));
	assert_int_equal(rc, UINT16_MAX);
	assert_fails(doca_buf_inc_refcount(buf, NULL), DOCA_ERROR_TOO_BIG);
	for (uint32_t i = 0; i < UINT16_MAX; i++)
		assert_int_equal(doca_buf_dec_refcount(buf, NULL), DOCA_SUCCESS);
	assert_int_equal(free_elems(f), NUM_ELEMS);
}

/* ---- lists ------------------------------------------------------------------- */

static void test_chain(void **state)
{
	struct fixture *f = *state;
	struct doca_buf *a = get_buf(f, 0, 10), *b = get_buf(f, 10, 10), *c = get_buf(f, 20, 10);
	struct doca_buf *d = get_buf(f, 30, 10), *e = get_buf(f, 40, 10);
	struct doca_buf *p = NULL;
	uint8_t flag;
	uint16_t rc;

	/* One-element lists. */
	assert_int_equal(list_len(a), 1);
	assert_ok(doca_buf_is_in_list(a, &flag));
	assert_int_equal(flag, 0);
	assert_ok(doca_buf_get_last_in_list(a, &p));
	assert_ptr_equal(p, a);

	/* a-b-c and d-e, then a-b-c-d-e. */
	assert_ok(doca_buf_chain_list(a, b));
	assert_ok(doca_buf_chain_list(a, c));
	assert_ok(doca_buf_chain_list(d, e));
	assert_int_equal(list_len(a), 3);
	assert_int_equal(list_len(d), 2);
	assert_ok(doca_buf_chain_list(a, d));
	assert_int_equal(list_len(a), 5);

	assert_ok(doca_buf_get_next_in_list(a, &p));
	assert_ptr_equal(p, b);
	assert_ok(doca_buf_get_next_in_list(c, &p));
	assert_ptr_equal(p, d);
	assert_ok(doca_buf_get_next_in_list(e, &p));
	assert_null(p);
	assert_ok(doca_buf_get_last_in_list(a, &p));
	assert_ptr_equal(p, e);
	assert_ok(doca_buf_get_last_in_list(c, &p));
	assert_ptr_equal(p, e);

	assert_ok(doca_buf_is_first_in_list(a, &flag));
	assert_int_equal(flag, 1);
	assert_ok(doca_buf_is_first_in_list(c, &flag));
	assert_int_equal(flag, 0);
	assert_ok(doca_buf_is_last_in_list(e, &flag));
	assert_int_equal(flag, 1);
	assert_ok(doca_buf_is_last_in_list(d, &flag));
	assert_int_equal(flag, 0);
	assert_ok(doca_buf_is_in_list(c, &flag));
	assert_int_equal(flag, 1);
	assert_ok(doca_buf_is_in_list(a, &flag));
	assert_int_equal(flag, 1);

	/* Inner elements count 1 and cannot be referenced on their own. */
	assert_ok(doca_buf_get_refcount(c, &rc));
	assert_int_equal(rc, 1);
	assert_fails(doca_buf_dec_refcount(c, NULL), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_buf_inc_refcount(d, NULL), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_buf_get_list_len(b, &(uint32_t){0}), DOCA_ERROR_NOT_PERMITTED);

	/* The head's last reference returns all five. */
	assert_int_equal(free_elems(f), NUM_ELEMS - 5);
	assert_ok(doca_buf_inc_refcount(a, NULL));
	assert_ok(doca_buf_dec_refcount(a, NULL));
	assert_int_equal(free_elems(f), NUM_ELEMS - 5);
	assert_ok(doca_buf_dec_refcount(a, NULL));
	assert_int_equal(free_elems(f), NUM_ELEMS);
}

static void test_chain_errors(void **state)
{
	struct fixture *f = *state;
	struct doca_buf *a = get_buf(f, 0, 10), *b = get_buf(f, 10, 10), *c = get_buf(f, 20, 10);
	struct doca_buf *d = get_buf(f, 30, 10);

	assert_fails(doca_buf_chain_list(a, a), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_chain_list(NULL, a), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_chain_list(a, NULL), DOCA_ERROR_INVALID_VALUE);

	/* list2 referenced twice. */
	assert_ok(doca_buf_inc_refcount(b, NULL));
	assert_fails(doca_buf_chain_list(a, b), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_buf_dec_refcount(b, NULL));

	assert_ok(doca_buf_chain_list(a, b));
	/* list2 already inside a list, list1 not a head, or a cycle. */
	assert_fails(doca_buf_chain_list(c, b), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_buf_chain_list(b, c), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_buf_chain_list(b, a), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(list_len(a), 2);

	/* chain_list_tail checks the tail. */
	assert_fails(doca_buf_chain_list_tail(a, a, c), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_chain_list_tail(a, d, c), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_chain_list_tail(a, NULL, c), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_buf_chain_list_tail(a, b, c));
	assert_ok(doca_buf_chain_list_tail(a, c, d));
	assert_int_equal(list_len(a), 4);

	assert_ok(doca_buf_dec_refcount(a, NULL));
	assert_int_equal(free_elems(f), NUM_ELEMS);
	/* Released bufs cannot be chained. */
	assert_fails(doca_buf_chain_list(a, b), DOCA_ERROR_BAD_STATE);
}

static void test_unchain(void **state)
{
	struct fixture *f = *state;
	struct doca_buf *a = get_buf(f, 0, 10), *b = get_buf(f, 10, 10), *c = get_buf(f, 20, 10);
	struct doca_buf *d = get_buf(f, 30, 10), *x = get_buf(f, 40, 10);
	struct doca_buf *p = NULL;
	uint8_t flag;
	uint16_t rc;

	assert_ok(doca_buf_chain_list(a, b));
	assert_ok(doca_buf_chain_list(a, c));
	assert_ok(doca_buf_chain_list(a, d));

	assert_fails(doca_buf_unchain_list(a, x), DOCA_ERROR_INVALID_VALUE);	/* not in list1 */
	assert_fails(doca_buf_unchain_list(a, a), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_unchain_list(b, c), DOCA_ERROR_NOT_PERMITTED);	/* list1 not a head */
	assert_fails(doca_buf_unchain_list(NULL, c), DOCA_ERROR_INVALID_VALUE);

	/* a-b-c-d -> a-b and c-d */
	assert_ok(doca_buf_unchain_list(a, c));
	assert_int_equal(list_len(a), 2);
	assert_int_equal(list_len(c), 2);
	assert_ok(doca_buf_get_last_in_list(a, &p));
	assert_ptr_equal(p, b);
	assert_ok(doca_buf_get_last_in_list(c, &p));
	assert_ptr_equal(p, d);
	assert_ok(doca_buf_is_first_in_list(c, &flag));
	assert_int_equal(flag, 1);
	assert_ok(doca_buf_get_refcount(c, &rc));
	assert_int_equal(rc, 1);

	/* Cut the last element: a and b alone. */
	assert_ok(doca_buf_unchain_list(a, b));
	assert_int_equal(list_len(a), 1);
	assert_ok(doca_buf_is_in_list(a, &flag));
	assert_int_equal(flag, 0);

	/* Each list now releases on its own. */
	assert_ok(doca_buf_dec_refcount(c, NULL));
	assert_int_equal(free_elems(f), NUM_ELEMS - 3);
	assert_ok(doca_buf_dec_refcount(a, NULL));
	assert_ok(doca_buf_dec_refcount(b, NULL));
	assert_ok(doca_buf_dec_refcount(x, NULL));
}

/* Elements of one list may come from different inventories and mmaps;
 * each goes back where it came from. */
static void test_mixed_list(void **state)
{
	struct fixture *f = *state;
	static uint8_t other_mem[256];
	struct doca_mmap *other_mmap = NULL;
	struct doca_buf_inventory *other_inv = NULL;
	struct doca_buf *a = get_buf(f, 0, 10), *b = NULL;
	uint32_t n;

	assert_ok(doca_mmap_create(&other_mmap));
	assert_ok(doca_mmap_set_memrange(other_mmap, other_mem, sizeof(other_mem)));
	assert_ok(doca_mmap_add_dev(other_mmap, dev));
	assert_ok(doca_mmap_start(other_mmap));
	assert_ok(doca_buf_inventory_create(1, &other_inv));
	assert_ok(doca_buf_inventory_start(other_inv));
	assert_ok(doca_buf_inventory_buf_get_by_data(other_inv, other_mmap, other_mem, 16, &b));

	assert_ok(doca_buf_chain_list(a, b));
	assert_ok(doca_buf_dec_refcount(a, NULL));
	assert_ok(doca_buf_inventory_get_num_free_elements(other_inv, &n));
	assert_int_equal(n, 1);
	assert_ok(doca_mmap_get_num_bufs(other_mmap, &n));
	assert_int_equal(n, 0);

	assert_ok(doca_buf_inventory_destroy(other_inv));
	assert_ok(doca_mmap_destroy(other_mmap));
}

static void test_list_null_args(void **state)
{
	struct fixture *f = *state;
	struct doca_buf *a = get_buf(f, 0, 10);
	struct doca_buf *p;
	uint8_t flag;
	uint32_t n;

	assert_fails(doca_buf_get_next_in_list(NULL, &p), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_get_next_in_list(a, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_get_last_in_list(NULL, &p), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_is_last_in_list(a, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_is_first_in_list(NULL, &flag), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_is_in_list(NULL, &flag), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_get_list_len(a, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_get_list_len(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_buf_unchain_list(a, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_buf_dec_refcount(a, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_getters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_window_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refcount, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refcount_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unchain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_null_args, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
