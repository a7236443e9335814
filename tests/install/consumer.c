/*
 * An outside program built only with `pkg-config --cflags --libs doca`
 * against an installed softdoca: it copies a buffer with a DMA memcpy task,
 * driven by a progress engine, and checks the bytes.
 */
#include <stdio.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_version.h>

DOCA_LOG_REGISTER(INSTALL::CONSUMER);

static int done;

static void memcpy_done(struct doca_dma_task_memcpy *task, union doca_data task_user, union doca_data ctx_user)
{
	(void)task_user;
	(void)ctx_user;
	done = doca_task_get_status(doca_dma_task_memcpy_as_task(task)) == DOCA_SUCCESS ? 1 : -1;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

#define CHECK(call) \
	do { \
		doca_error_t r_ = (call); \
		if (r_ != DOCA_SUCCESS) { \
			fprintf(stderr, "%s failed: %s\n", #call, doca_error_get_name(r_)); \
			return 1; \
		} \
	} while (0)

int main(void)
{
	struct doca_devinfo **list;
	uint32_t n;
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {0};
	char mem[64] = "hello from an installed softdoca";

	CHECK(doca_log_backend_create_standard());
	CHECK(doca_devinfo_create_list(&list, &n));
	if (n == 0)
		return 1;
	CHECK(doca_dev_open(list[0], &dev));
	CHECK(doca_devinfo_destroy_list(list));
	CHECK(doca_mmap_create(&mmap));
	CHECK(doca_mmap_set_memrange(mmap, mem, sizeof(mem)));
	CHECK(doca_mmap_add_dev(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_create(2, &inv));
	CHECK(doca_buf_inventory_start(inv));
	CHECK(doca_buf_inventory_buf_get_by_data(inv, mmap, mem, 32, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + 32, 32, &dst));
	CHECK(doca_pe_create(&pe));
	CHECK(doca_dma_create(dev, &dma));
	CHECK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	CHECK(doca_dma_task_memcpy_set_conf(dma, memcpy_done, memcpy_done, 1));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &task));
	CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(task)));
	while (done == 0)
		(void)doca_pe_progress(pe);
	if (done != 1 || memcmp(mem, mem + 32, 32) != 0)
		return 1;
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_stop(mmap));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_dev_close(dev));
	DOCA_LOG_INFO("installed softdoca %s works", doca_version_runtime());
	return 0;
}
