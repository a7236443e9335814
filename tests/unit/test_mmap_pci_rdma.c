/*
 * The zero-copy path of PCI exports: a forked "host" exports an mmap with
 * doca_mmap_export_pci; this process (the "DPU") imports it, re-exports it
 * with doca_mmap_export_rdma, and an RDMA peer (context A here, B the
 * DPU's own context) writes and reads the host's memory through it, eager
 * and rendezvous sizes, byte for byte. Atomics are refused; the host's
 * stop revokes. Several large writes and reads in flight at once share
 * the target's bounce pool, its budget set small here (one larger than
 * the budget runs alone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_mmap.h>
#include <doca_rdma.h>

#include "mmap_pci.h"
#include "pci_peer.h"
#include "rdma_pair.h"

#define NUM_TASKS 8
#define HOST_PERMS \
	(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | \
	 DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC)

static int ok_calls, err_calls, done_calls;
static doca_error_t last_status;

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	if (ok)
		ok_calls++;
	else
		err_calls++;
	done_calls++;
	last_status = doca_task_get_status(task);
	doca_task_free(task);
}

static uint8_t mem[MEM_LEN];

static void pair_up(void)
{
	side_create(&A);
	side_create(&B);
	assert_ok(doca_rdma_set_permissions(A.rdma, ALL_RDMA_PERMS));
	assert_ok(doca_rdma_set_permissions(B.rdma, ALL_RDMA_PERMS));
	side_conf_tasks(&A, NUM_TASKS, false);
	side_conf_tasks(&B, NUM_TASKS, false);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	pair_connect();
}

/* Submit task, progress until it completed, then drop its two bufs. */
static void submit_and_wait(struct doca_task *task, struct doca_buf *src, struct doca_buf *dst)
{
	int want = done_calls + 1;

	assert_ok(doca_task_try_submit(task));
	assert_true(progress_until(&done_calls, want));
	put(src);
	put(dst);
}

/* One write from mem[off, +len) to the host's [host + off, +len). */
static void rdma_write(struct doca_mmap *local, struct doca_mmap *remote, uint8_t *host, size_t off, size_t len)
{
	struct doca_rdma_task_write *t;
	union doca_data ud = {.u64 = 0};
	struct doca_buf *src = buf_on(local, mem + off, len, len);
	struct doca_buf *dst = buf_on(remote, host + off, len, 0);

	assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src, dst, ud, &t));
	submit_and_wait(doca_rdma_task_write_as_task(t), src, dst);
}

/* One read of the host's [host + off, +len) into mem[off, +len). */
static void rdma_read(struct doca_mmap *local, struct doca_mmap *remote, uint8_t *host, size_t off, size_t len)
{
	struct doca_rdma_task_read *t;
	union doca_data ud = {.u64 = 0};
	struct doca_buf *src = buf_on(remote, host + off, len, len);
	struct doca_buf *dst = buf_on(local, mem + off, len, 0);

	assert_ok(doca_rdma_task_read_allocate_init(A.rdma, A.conn, src, dst, ud, &t));
	submit_and_wait(doca_rdma_task_read_as_task(t), src, dst);
}

static void test_rdma_through_pci_import(void **state)
{
	struct peer p;
	struct doca_mmap *hostm, *remote, *local;
	struct doca_rdma_task_atomic_fetch_add *fadd;
	const void *desc;
	size_t desc_len, len, i, half = MEM_LEN / 2;
	uint8_t *host;
	union doca_data ud = {.u64 = 0};
	doca_error_t err;

	(void)state;
	/* The host first: fork before this process starts UCX. */
	spawn_exec(&p, child_mmap_main, HOST_PERMS);
	if (rdma_pair_setup() != 0) {
		print_message("skipped: no soft loopback device\n");
		finish(&p);
		return;
	}
	err = doca_mmap_create_from_export(NULL, p.desc, p.desc_len, dev, &hostm);
	if (err == DOCA_ERROR_NOT_PERMITTED) {
		print_message("skipped: this kernel refuses ptrace access to a child process\n");
		finish(&p);
		rdma_pair_teardown();
		return;
	}
	assert_ok(err);
	assert_ok(doca_mmap_get_memrange(hostm, (void **)&host, &len));
	assert_int_equal(len, MEM_LEN);
	local = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);
	/* The DPU re-exports the host's memory for RDMA; the peer imports it. */
	assert_ok(doca_mmap_export_rdma(hostm, dev, &desc, &desc_len));
	assert_ok(doca_mmap_create_from_export(NULL, desc, desc_len, dev, &remote));
	pair_up();

	/* Writes into the host's second half: one eager, one large. */
	for (i = 0; i < MEM_LEN; i++)
		mem[i] = pattern(i, 50);
	rdma_write(local, remote, host, half, 64);
	rdma_write(local, remote, host, half + 64, half - 64);
	assert_int_equal(err_calls, 0);
	assert_int_equal(ask(&p, 'v'), 1);

	/* Reads of the host's first half: small and large. */
	memset(mem, 0, sizeof(mem));
	rdma_read(local, remote, host, 0, 16);
	rdma_read(local, remote, host, 16, half - 16);
	assert_int_equal(err_calls, 0);
	for (i = 0; i < half; i++)
		assert_int_equal(mem[i], pattern(i, 1));

	/* The import as the local buffer of the DPU's own RDMA task: the
	 * source is staged out of the host (test_rdma_pci_local.c tests the
	 * rest), here into the host itself through the re-export. */
	{
		struct doca_rdma_task_write *t;
		struct doca_buf *src = buf_on(hostm, host, 64, 64);
		struct doca_buf *dst = buf_on(remote, host + 128, 64, 0);
		uint8_t back[64];

		assert_ok(doca_rdma_task_write_allocate_init(B.rdma, B.conn, src, dst, ud, &t));
		submit_and_wait(doca_rdma_task_write_as_task(t), src, dst);
		assert_int_equal(err_calls, 0);
		assert_ok(softdoca_mmap_copy(NULL, (uintptr_t)back, hostm, (uintptr_t)(host + 128), sizeof(back)));
		for (i = 0; i < sizeof(back); i++)
			assert_int_equal(back[i], pattern(i, 1));
	}

	/* An atomic cannot be done in another process's memory. */
	{
		struct doca_buf *target = buf_on(remote, host, 8, 8);
		struct doca_buf *result = buf_on(local, mem, 8, 0);

		assert_ok(doca_rdma_task_atomic_fetch_add_allocate_init(A.rdma, A.conn, target, result, 1, ud, &fadd));
		assert_ok(doca_task_try_submit(doca_rdma_task_atomic_fetch_add_as_task(fadd)));
		assert_true(progress_until(&err_calls, 1));
		put(target);
		put(result);
	}

	/* The host stops its mmap: the next read through the DPU fails. */
	assert_int_equal(ask(&p, 's'), 1);
	rdma_read(local, remote, host, 0, 16);
	assert_int_equal(err_calls, 2);
	assert_int_not_equal(last_status, DOCA_SUCCESS);

	side_stop(&A);
	side_stop(&B);
	side_destroy(&A);
	side_destroy(&B);
	assert_ok(doca_mmap_stop(remote));
	assert_ok(doca_mmap_destroy(remote));
	assert_ok(doca_mmap_destroy(hostm));
	assert_ok(doca_mmap_destroy(local));
	rdma_pair_teardown();
	finish(&p);
}

/* ---- several large operations in flight ---- */

#define IN_FLIGHT_MAX NUM_TASKS

struct in_flight {
	struct doca_buf *bufs[2 * IN_FLIGHT_MAX];
	int n;
};

/* Submit a write of mem[off, +len) to the host (or a read back into
 * mem) without waiting for it. */
static void submit(struct in_flight *f, bool write, struct doca_mmap *local, struct doca_mmap *remote, uint8_t *host,
		   size_t off, size_t len)
{
	union doca_data ud = {.u64 = 0};
	struct doca_buf *l = buf_on(local, mem + off, len, write ? len : 0);
	struct doca_buf *r = buf_on(remote, host + off, len, write ? 0 : len);

	assert_true(f->n < 2 * IN_FLIGHT_MAX);
	f->bufs[f->n++] = l;
	f->bufs[f->n++] = r;
	if (write) {
		struct doca_rdma_task_write *t;

		assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, l, r, ud, &t));
		assert_ok(doca_task_try_submit(doca_rdma_task_write_as_task(t)));
	} else {
		struct doca_rdma_task_read *t;

		assert_ok(doca_rdma_task_read_allocate_init(A.rdma, A.conn, r, l, ud, &t));
		assert_ok(doca_task_try_submit(doca_rdma_task_read_as_task(t)));
	}
}

static void complete_all(struct in_flight *f, int want)
{
	assert_true(progress_until(&done_calls, want));
	for (int i = 0; i < f->n; i++)
		put(f->bufs[i]);
	f->n = 0;
}

static void test_large_in_flight(void **state)
{
	struct peer p;
	struct doca_mmap *hostm, *remote, *local;
	struct in_flight f = {.n = 0};
	const void *desc;
	size_t desc_len, len, i, half = MEM_LEN / 2, piece = 64u << 10;
	uint8_t *host;
	doca_error_t err;
	int want;

	(void)state;
	spawn_exec(&p, child_mmap_main, HOST_PERMS);
	if (rdma_pair_setup() != 0) {
		print_message("skipped: no soft loopback device\n");
		finish(&p);
		return;
	}
	err = doca_mmap_create_from_export(NULL, p.desc, p.desc_len, dev, &hostm);
	if (err == DOCA_ERROR_NOT_PERMITTED) {
		print_message("skipped: this kernel refuses ptrace access to a child process\n");
		finish(&p);
		rdma_pair_teardown();
		return;
	}
	assert_ok(err);
	assert_ok(doca_mmap_get_memrange(hostm, (void **)&host, &len));
	local = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);
	assert_ok(doca_mmap_export_rdma(hostm, dev, &desc, &desc_len));
	assert_ok(doca_mmap_create_from_export(NULL, desc, desc_len, dev, &remote));
	pair_up();
	err_calls = 0;

	/* Four 64 KiB writes and one of 256 KiB (twice the budget) at once
	 * into the host's second half. */
	for (i = 0; i < MEM_LEN; i++)
		mem[i] = pattern(i, 50);
	want = done_calls + 5;
	for (i = 0; i < 4; i++)
		submit(&f, true, local, remote, host, half + i * piece, piece);
	submit(&f, true, local, remote, host, half + 4 * piece, half - 4 * piece);
	complete_all(&f, want);
	assert_int_equal(err_calls, 0);
	assert_int_equal(ask(&p, 'v'), 1);

	/* Eight 64 KiB reads of the first half at once, twice. */
	for (int round = 0; round < 2; round++) {
		memset(mem, 0, sizeof(mem));
		want = done_calls + 8;
		for (i = 0; i < 8; i++)
			submit(&f, false, local, remote, host, i * piece, piece);
		complete_all(&f, want);
		assert_int_equal(err_calls, 0);
		for (i = 0; i < half; i++)
			assert_int_equal(mem[i], pattern(i, 1));
	}

	side_stop(&A);
	side_stop(&B);
	side_destroy(&A);
	side_destroy(&B);
	assert_ok(doca_mmap_stop(remote));
	assert_ok(doca_mmap_destroy(remote));
	assert_ok(doca_mmap_destroy(hostm));
	assert_ok(doca_mmap_destroy(local));
	rdma_pair_teardown();
	finish(&p);
}

const struct pci_child pci_children[] = {
	{"mmap", child_mmap_main},
	{NULL, NULL},
};

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rdma_through_pci_import),
		cmocka_unit_test(test_large_in_flight),
	};

	pci_child_run(argc, argv);
	/* A small bounce budget (KiB): large operations queue for it. */
	setenv("SOFTDOCA_PCI_BOUNCE_KIB", "128", 1);
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
