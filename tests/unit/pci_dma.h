/*
 * The importing side of the PCI export tests (test_mmap_pci.c,
 * test_mmap_pci_replace.c): this process imports the forked exporter's
 * descriptor (pci_peer.h) and copies with DMA memcpy tasks, each
 * submitted and waited for (bounded). Test programs only.
 */
#ifndef TEST_PCI_DMA_H_
#define TEST_PCI_DMA_H_

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
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "pci_peer.h"

struct dma_env {
	struct doca_dev *dev;
	struct doca_mmap *remote; /* from the PCI export */
	struct doca_mmap *local;
	struct doca_buf_inventory *inv;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	uint8_t mem[MEM_LEN];
	uint8_t *remote_addr;
	bool done;
	doca_error_t status;
};

static struct dma_env E;

static inline void on_done(struct doca_dma_task_memcpy *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	E.status = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	E.done = true;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static inline void dma_ctx_start(void)
{
	assert_int_equal(doca_ctx_start(E.ctx), DOCA_SUCCESS);
}

/* Bring the context back to running after a failed copy stopped it. */
static inline void dma_ctx_recover(void)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	for (int i = 0; i < 100000; i++) {
		assert_int_equal(doca_ctx_get_state(E.ctx, &st), DOCA_SUCCESS);
		if (st == DOCA_CTX_STATE_IDLE)
			break;
		(void)doca_pe_progress(E.pe);
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	dma_ctx_start();
}

/* Import the peer's descriptor (an export of want bytes) and set up a
 * DMA context around it. */
static inline doca_error_t dma_env_open(const struct peer *p, size_t want)
{
	size_t len;
	doca_error_t err;

	memset(&E, 0, sizeof(E));
	E.dev = open_dev();
	assert_non_null(E.dev);
	err = doca_mmap_create_from_export(NULL, p->desc, p->desc_len, E.dev, &E.remote);
	if (err != DOCA_SUCCESS) {
		doca_dev_close(E.dev);
		return err;
	}
	assert_int_equal(doca_mmap_get_memrange(E.remote, (void **)&E.remote_addr, &len), DOCA_SUCCESS);
	assert_int_equal(len, want);
	assert_int_equal(doca_mmap_create(&E.local), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(E.local, E.mem, MEM_LEN), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(E.local, E.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(E.local), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_create(16, &E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_pe_create(&E.pe), DOCA_SUCCESS);
	assert_int_equal(doca_dma_create(E.dev, &E.dma), DOCA_SUCCESS);
	E.ctx = doca_dma_as_ctx(E.dma);
	assert_int_equal(doca_pe_connect_ctx(E.pe, E.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_dma_task_memcpy_set_conf(E.dma, on_done, on_done, 4), DOCA_SUCCESS);
	dma_ctx_start();
	return DOCA_SUCCESS;
}

static inline void dma_env_close(void)
{
	enum doca_ctx_states st;

	(void)doca_ctx_stop(E.ctx);
	for (int i = 0; i < 100000; i++) {
		assert_int_equal(doca_ctx_get_state(E.ctx, &st), DOCA_SUCCESS);
		if (st == DOCA_CTX_STATE_IDLE)
			break;
		(void)doca_pe_progress(E.pe);
	}
	assert_int_equal(doca_dma_destroy(E.dma), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(E.pe), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_stop(E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_destroy(E.inv), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_stop(E.local), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(E.local), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(E.remote), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(E.dev), DOCA_SUCCESS);
}

static inline struct doca_buf *buf_data(struct doca_mmap *mmap, uint8_t *addr, size_t len)
{
	struct doca_buf *b;

	assert_int_equal(doca_buf_inventory_buf_get_by_data(E.inv, mmap, addr, len, &b), DOCA_SUCCESS);
	return b;
}

static inline struct doca_buf *buf_room(struct doca_mmap *mmap, uint8_t *addr, size_t len)
{
	struct doca_buf *b;

	assert_int_equal(doca_buf_inventory_buf_get_by_addr(E.inv, mmap, addr, len, &b), DOCA_SUCCESS);
	return b;
}

/* Submit one copy (try_submit: validation refusals come back at once)
 * and progress (bounded) until it completes; its status. A failed copy
 * stops the context (DMA does that): start it again for the next. */
static inline doca_error_t copy(struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {.u64 = 0};
	doca_error_t err;

	E.done = false;
	assert_int_equal(doca_dma_task_memcpy_alloc_init(E.dma, src, dst, ud, &task), DOCA_SUCCESS);
	err = doca_task_try_submit(doca_dma_task_memcpy_as_task(task));
	if (err != DOCA_SUCCESS) {
		doca_task_free(doca_dma_task_memcpy_as_task(task));
	} else {
		for (int i = 0; i < 1000000 && !E.done; i++)
			(void)doca_pe_progress(E.pe);
		assert_true(E.done);
		err = E.status;
		if (err != DOCA_SUCCESS)
			dma_ctx_recover();
	}
	doca_buf_dec_refcount(src, NULL);
	doca_buf_dec_refcount(dst, NULL);
	return err;
}

/* Skip (with the reason) where the kernel forbids reaching the child. */
static inline bool import_len_or_skip(const struct peer *p, size_t want)
{
	doca_error_t err = dma_env_open(p, want);

	if (err == DOCA_ERROR_NOT_PERMITTED) {
		print_message("skipped: this kernel refuses ptrace access to a child process\n");
		return false;
	}
	assert_int_equal(err, DOCA_SUCCESS);
	return true;
}

/* The same, for an export of MEM_LEN bytes. */
static inline bool import_or_skip(const struct peer *p)
{
	return import_len_or_skip(p, MEM_LEN);
}

#endif /* TEST_PCI_DMA_H_ */
