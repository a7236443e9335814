/*
 * DOCA Core calls of the 3.x API surface that a soft device answers with
 * DOCA_ERROR_NOT_SUPPORTED: the verbs bridge (doca_rdma_bridge.h, DOCA
 * Core's: this test links libdoca_common alone, as NVIDIA's doca_verbs
 * samples do), doca_mmap_get_mkey (3.2+) and doca_pe_set_notification_handle.
 * Each still checks its arguments first, and refusing leaves the object
 * usable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma_bridge.h>

static char mem[4096];

static struct doca_dev *open_first_dev(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev;
	uint32_t n;

	assert_int_equal(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	assert_true(n > 0);
	assert_int_equal(doca_dev_open(list[0], &dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	return dev;
}

static struct doca_mmap *started_mmap(struct doca_dev *dev)
{
	struct doca_mmap *mmap;

	assert_int_equal(doca_mmap_create(&mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(mmap, mem, sizeof(mem)), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(mmap, dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(mmap), DOCA_SUCCESS);
	return mmap;
}

static void test_rdma_bridge_in_core(void **state)
{
	struct doca_dev *dev = open_first_dev();
	struct doca_mmap *mmap = started_mmap(dev);
	struct doca_buf_inventory *inv;
	struct doca_buf *buf;
	struct ibv_pd *pd = NULL;
	struct doca_dev *from_pd = NULL;
	uint32_t mkey = 7;

	(void)state;
	assert_int_equal(doca_buf_inventory_create(4, &inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem, 64, &buf), DOCA_SUCCESS);

	assert_int_equal(doca_rdma_bridge_get_dev_pd(dev, &pd), DOCA_ERROR_NOT_SUPPORTED);
	assert_null(pd);
	assert_int_equal(doca_rdma_bridge_open_dev_from_pd((struct ibv_pd *)mem, &from_pd), DOCA_ERROR_NOT_SUPPORTED);
	assert_null(from_pd);
	assert_int_equal(doca_rdma_bridge_get_buf_mkey(buf, dev, &mkey), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_rdma_bridge_get_mmap_mkey_from_pd(mmap, (struct ibv_pd *)mem, &mkey),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(mkey, 7);

	assert_int_equal(doca_buf_dec_refcount(buf, NULL), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_stop(inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_destroy(inv), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_stop(mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

static void test_mmap_get_mkey(void **state)
{
	struct doca_dev *dev = open_first_dev();
	struct doca_mmap *mmap = started_mmap(dev);
	uint32_t mkey = 7;

	(void)state;
	assert_int_equal(doca_mmap_get_mkey(NULL, dev, &mkey), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_get_mkey(mmap, NULL, &mkey), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_get_mkey(mmap, dev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_get_mkey(mmap, dev, &mkey), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(mkey, 7);
	assert_int_equal(doca_mmap_stop(mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

static void test_pe_set_notification_handle(void **state)
{
	struct doca_pe *pe;
	doca_notification_handle_t own = -1;
	union doca_data key = {.u64 = 1};

	(void)state;
	assert_int_equal(doca_pe_set_notification_handle(NULL, 0, key), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_pe_set_notification_handle(pe, 0, key), DOCA_ERROR_NOT_SUPPORTED);
	/* the PE's own handle is untouched */
	assert_int_equal(doca_pe_get_notification_handle(pe, &own), DOCA_SUCCESS);
	assert_true(own > 0);
	assert_int_equal(doca_pe_request_notification(pe), DOCA_SUCCESS);
	assert_int_equal(doca_pe_clear_notification(pe, own), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rdma_bridge_in_core),
		cmocka_unit_test(test_mmap_get_mkey),
		cmocka_unit_test(test_pe_set_notification_handle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
