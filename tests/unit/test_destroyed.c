/*
 * Calls given an object that was already destroyed (issue 11, item 4): the
 * library keeps a set of live objects (src/core/live.c), so a second
 * destroy, or a control-path call on a destroyed doca_mmap,
 * doca_buf_inventory, doca_pe or context, is refused with
 * DOCA_ERROR_INVALID_VALUE and one log line instead of reading freed
 * memory. Between a destroy and the calls that follow no object is created,
 * so the freed address cannot have been handed to a new object. Run it
 * under ASan as well: a call that read the freed object would be reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>

static char log_line[2048];
static int error_lines;

static void log_flush(char *line)
{
	if (getenv("TEST_DESTROYED_VERBOSE") != NULL)
		fputs(line, stderr);
	if (strstr(line, "[ERROR]") != NULL)
		error_lines++;
}

/* The call is refused as an invalid value and says so in the log. */
#define assert_refused(expr) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), DOCA_ERROR_INVALID_VALUE); \
		assert_true(error_lines > before_); \
	} while (0)

#define assert_ok(expr) assert_int_equal((expr), DOCA_SUCCESS)

static struct doca_devinfo **dev_list;
static struct doca_dev *dev;
static char mem[4096];

static int group_setup(void **state)
{
	struct doca_log_backend *backend;
	uint32_t nb = 0;

	(void)state;
	if (doca_log_backend_create_with_buf_sdk(log_line, sizeof(log_line), log_flush, &backend) != DOCA_SUCCESS ||
	    doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_WARNING) != DOCA_SUCCESS)
		return -1;
	if (doca_devinfo_create_list(&dev_list, &nb) != DOCA_SUCCESS || nb == 0)
		return -1;
	return doca_dev_open(dev_list[0], &dev) == DOCA_SUCCESS ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	if (doca_dev_close(dev) != DOCA_SUCCESS)
		return -1;
	return doca_devinfo_destroy_list(dev_list) == DOCA_SUCCESS ? 0 : -1;
}

static void test_mmap_after_destroy(void **state)
{
	struct doca_mmap *mmap;
	uint32_t num_bufs;
	void *addr;
	size_t len;

	(void)state;
	assert_ok(doca_mmap_create(&mmap));
	assert_ok(doca_mmap_set_memrange(mmap, mem, sizeof(mem)));
	assert_ok(doca_mmap_add_dev(mmap, dev));
	assert_ok(doca_mmap_start(mmap));
	assert_ok(doca_mmap_destroy(mmap)); /* destroy stops it implicitly */
	assert_refused(doca_mmap_destroy(mmap));
	assert_refused(doca_mmap_start(mmap));
	assert_refused(doca_mmap_stop(mmap));
	assert_refused(doca_mmap_set_memrange(mmap, mem, sizeof(mem)));
	assert_refused(doca_mmap_get_memrange(mmap, &addr, &len));
	assert_refused(doca_mmap_get_num_bufs(mmap, &num_bufs));
	assert_refused(doca_mmap_add_dev(mmap, dev));
}

/* An mmap made from an export is tracked the same way. */
static void test_mmap_from_export_after_destroy(void **state)
{
	struct doca_mmap *local, *remote;
	const void *desc;
	size_t desc_len;

	(void)state;
	assert_ok(doca_mmap_create(&local));
	assert_ok(doca_mmap_set_memrange(local, mem, sizeof(mem)));
	assert_ok(doca_mmap_add_dev(local, dev));
	assert_ok(doca_mmap_set_permissions(local, DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	assert_ok(doca_mmap_start(local));
	assert_ok(doca_mmap_export_rdma(local, dev, &desc, &desc_len));
	assert_ok(doca_mmap_create_from_export(NULL, desc, desc_len, dev, &remote));
	assert_ok(doca_mmap_destroy(remote));
	assert_refused(doca_mmap_destroy(remote));
	assert_ok(doca_mmap_destroy(local));
	assert_refused(doca_mmap_export_rdma(local, dev, &desc, &desc_len));
}

static void test_inventory_after_destroy(void **state)
{
	struct doca_buf_inventory *inv;
	uint32_t n;

	(void)state;
	assert_ok(doca_buf_inventory_create(4, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	assert_ok(doca_buf_inventory_destroy(inv));
	assert_refused(doca_buf_inventory_destroy(inv));
	assert_refused(doca_buf_inventory_start(inv));
	assert_refused(doca_buf_inventory_stop(inv));
	assert_refused(doca_buf_inventory_get_num_elements(inv, &n));
	assert_refused(doca_buf_inventory_get_num_free_elements(inv, &n));
}

static void test_pe_after_destroy(void **state)
{
	struct doca_dma *dma;
	struct doca_pe *pe;
	size_t inflight;

	(void)state;
	assert_ok(doca_dma_create(dev, &dma));
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_destroy(pe));
	assert_refused(doca_pe_destroy(pe));
	assert_refused(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	assert_refused(doca_pe_request_notification(pe));
	assert_refused(doca_pe_get_num_inflight_tasks(pe, &inflight));
	assert_ok(doca_dma_destroy(dma));
}

static void test_rdma_after_destroy(void **state)
{
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	enum doca_ctx_states st;
	uint32_t u32;

	(void)state;
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_rdma_create(dev, &rdma));
	ctx = doca_rdma_as_ctx(rdma);
	assert_ok(doca_rdma_destroy(rdma));
	assert_refused(doca_rdma_destroy(rdma));
	assert_refused(doca_rdma_set_send_queue_size(rdma, 64));
	assert_refused(doca_rdma_get_send_queue_size(rdma, &u32));
	assert_refused(doca_ctx_start(ctx));
	assert_refused(doca_ctx_stop(ctx));
	assert_refused(doca_ctx_get_state(ctx, &st));
	assert_refused(doca_pe_connect_ctx(pe, ctx));
	assert_ok(doca_pe_destroy(pe)); /* the refused connect left nothing behind */
}

static void test_dma_and_sync_event_after_destroy(void **state)
{
	struct doca_sync_event *se;
	struct doca_dma *dma;

	(void)state;
	assert_ok(doca_dma_create(dev, &dma));
	assert_ok(doca_dma_destroy(dma));
	assert_refused(doca_dma_destroy(dma));
	assert_ok(doca_sync_event_create(&se));
	assert_ok(doca_sync_event_destroy(se));
	assert_refused(doca_sync_event_destroy(se));
}

/* The device, still referenced by a context, cannot be closed; once the
 * context is gone it can (our header: IN_USE, as DOCA's). A second close
 * is tested in test_null_args (the open-device registry answers it). */
static void test_dev_close_while_ctx_holds_it(void **state)
{
	struct doca_rdma *rdma;

	(void)state;
	assert_ok(doca_rdma_create(dev, &rdma));
	assert_int_equal(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	assert_ok(doca_rdma_destroy(rdma));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap_after_destroy),
		cmocka_unit_test(test_mmap_from_export_after_destroy),
		cmocka_unit_test(test_inventory_after_destroy),
		cmocka_unit_test(test_pe_after_destroy),
		cmocka_unit_test(test_rdma_after_destroy),
		cmocka_unit_test(test_dma_and_sync_event_after_destroy),
		cmocka_unit_test(test_dev_close_while_ctx_holds_it),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
