/*
 * PCI-imported memory as the LOCAL buffer of RDMA tasks (softdoca issue
 * 20, item 3). A child process plays the host: it exports an mmap with
 * doca_mmap_export_pci. This process plays the BlueField: its context B
 * imports that export and uses the host's memory directly as the source
 * of writes and sends, the destination of reads and receives, the result
 * of atomics and the buffers of the remote sync event tasks, against its
 * peer A (local memory here). Then every refusal: a permission the export
 * lacks, a descriptor that claims more than the exporter published, the
 * export revoked while a receive waits, the exporter dead, the kernel
 * refusing the copy; and fds and heap flat over repeated operations.
 */
#include <linux/capability.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <dirent.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_mmap.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>

#include "mmap_pci.h"
#include "pci_peer.h"
#include "rdma_pair.h"

#define NUM_TASKS 16
#define HALF (MEM_LEN / 2)
#define HOST_RW (DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE)
#define HOST_RO (DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_ONLY)

/* Offsets of the descriptor fields a forger changes (mmap_pci.h). */
#define DESC_PERMS_AT 44
#define DESC_LEN_AT 80
/* The user data of a receive whose status a test looks at. */
#define RECV_TAG 0x5eceu

static int done_calls, err_calls;
static doca_error_t last_status, recv_status;

/* A task the test waits for by itself: its user data points here, and
 * its completion marks it. done_calls counts every completion, of any
 * task; where several tasks are in flight, only a watch says which of
 * them completed, so a test releases a task's buffers only once the
 * task's own watch is marked (the library is done with them then). */
struct watch {
	int done;
	doca_error_t status;
};

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	union doca_data ud = doca_task_get_user_data(task);

	(void)ctx_user_data;
	if (!ok)
		err_calls++;
	last_status = doca_task_get_status(task);
	if (ud.u64 == RECV_TAG) {
		recv_status = last_status;
	} else if (ud.ptr != NULL) {
		struct watch *w = ud.ptr;

		w->status = last_status;
		w->done++;
	}
	doca_task_free(task);
	done_calls++;
}

/* w unmarked, as the user data of task. */
static void watch_task(struct doca_task *task, struct watch *w)
{
	union doca_data ud = {.ptr = w};

	w->done = 0;
	w->status = DOCA_ERROR_UNKNOWN;
	doca_task_set_user_data(task, ud);
}

/* Progress until the task w watches completed; its status. */
static doca_error_t wait_for(struct watch *w)
{
	assert_true(progress_until(&w->done, 1));
	assert_int_equal(w->done, 1);
	return w->status;
}

/* Submit (try: with validation) and progress until it completed; its status. */
static doca_error_t run(struct doca_task *task, bool try)
{
	static struct watch w; /* static: outlives a failed test's jump */

	watch_task(task, &w);
	if (try)
		assert_ok(doca_task_try_submit(task));
	else
		assert_ok(doca_task_submit(task));
	return wait_for(&w);
}

/* A's memory (the peer's) and B's own local memory. */
static _Alignas(64) uint8_t mem[MEM_LEN];
static _Alignas(64) uint8_t bmem[4096];

/* ---- the host ---------------------------------------------------------------- */

const struct pci_child pci_children[] = {
	{"host", child_mmap_main},
	{NULL, NULL},
};

/* ---- the DPU ---------------------------------------------------------------- */

struct dpu {
	struct peer p;
	struct doca_mmap *hostm;  /* B's import of the host's export */
	uint8_t *host;		  /* its address in the host */
	struct doca_mmap *local;  /* A's memory */
	struct doca_mmap *remote; /* A's memory as B's peer mmap */
	struct doca_mmap *bown;	  /* B's own local memory */
	bool child_gone;
};

enum forge { FORGE_NONE, FORGE_LEN, FORGE_PERMS };

static void put_le(uint8_t *p, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Connect A's and B's exported connections to each other. On this path
 * (doca_rdma_export + doca_rdma_connect) the connection-established
 * callback is not to be waited for: DOCA calls it for RDMA CM
 * connections only. A task submitted now is held until its connection
 * is up, so an empty write each way, waited for, says both are up; the
 * tests' doca_task_try_submit refuses a connection not up yet. */
static void connect_by_export(void)
{
	struct side *sides[] = {&A, &B};
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	assert_ok(doca_rdma_connect(B.rdma, A.desc, A.desc_len, B.conn));
	for (size_t i = 0; i < 2; i++) {
		struct doca_rdma_task_write *t;

		assert_ok(doca_rdma_task_write_allocate_init(sides[i]->rdma, sides[i]->conn, NULL, NULL, ud, &t));
		assert_ok(run(doca_rdma_task_write_as_task(t), false));
	}
}

/* Host up with perms, both contexts connected, the export imported
 * (forged as asked). False (printed) when this machine cannot run it. */
static bool dpu_up(struct dpu *d, uint32_t perms, enum forge forge)
{
	doca_error_t err;
	size_t len;

	memset(d, 0, sizeof(*d));
	spawn_exec(&d->p, child_mmap_main, perms);
	if (rdma_pair_setup() != 0) {
		print_message("skipped: no soft loopback device\n");
		finish(&d->p);
		return false;
	}
	if (forge == FORGE_LEN) /* twice the range the exporter published */
		put_le(d->p.desc + DESC_LEN_AT, 2ull * MEM_LEN, 8);
	if (forge == FORGE_PERMS)
		put_le(d->p.desc + DESC_PERMS_AT, HOST_RW, 4);
	err = doca_mmap_create_from_export(NULL, d->p.desc, d->p.desc_len, dev, &d->hostm);
	if (err == DOCA_ERROR_NOT_PERMITTED) {
		print_message("skipped: this kernel refuses ptrace access to a child process\n");
		finish(&d->p);
		rdma_pair_teardown();
		return false;
	}
	assert_ok(err);
	assert_ok(doca_mmap_get_memrange(d->hostm, (void **)&d->host, &len));
	d->local = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);
	d->remote = remote_of(d->local);
	d->bown = local_mmap(bmem, sizeof(bmem), ALL_RDMA_PERMS);
	side_create(&A);
	side_create(&B);
	assert_ok(doca_rdma_set_permissions(A.rdma, ALL_RDMA_PERMS));
	assert_ok(doca_rdma_set_permissions(B.rdma, ALL_RDMA_PERMS));
	side_conf_tasks(&A, NUM_TASKS, true);
	side_conf_tasks(&B, NUM_TASKS, true);
	/* B's lists mix its own memory and the host's. */
	assert_ok(doca_rdma_set_max_send_buf_list_len(B.rdma, 4));
	assert_ok(doca_rdma_task_receive_set_dst_buf_list_len(B.rdma, 4));
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	connect_by_export();
	done_calls = err_calls = 0; /* the tests count from here */
	return true;
}

static void dpu_down(struct dpu *d)
{
	side_stop(&A);
	side_stop(&B);
	side_destroy(&A);
	side_destroy(&B);
	assert_ok(doca_mmap_stop(d->remote));
	assert_ok(doca_mmap_destroy(d->remote));
	assert_ok(doca_mmap_destroy(d->local));
	assert_ok(doca_mmap_destroy(d->bown));
	assert_ok(doca_mmap_destroy(d->hostm));
	rdma_pair_teardown();
	if (!d->child_gone)
		finish(&d->p);
}

/* A receive of s into dst (NULL: none) that w watches. */
static void post_watched_receive(struct side *s, struct doca_buf *dst, struct watch *w)
{
	struct doca_rdma_task_receive *r;
	union doca_data ud = {.ptr = NULL};

	assert_ok(doca_rdma_task_receive_allocate_init(s->rdma, dst, ud, &r));
	watch_task(doca_rdma_task_receive_as_task(r), w);
	assert_ok(doca_task_submit(doca_rdma_task_receive_as_task(r)));
}

static void post_tagged_receive(struct side *s, struct doca_buf *dst)
{
	struct doca_rdma_task_receive *r;
	union doca_data ud = {.u64 = RECV_TAG};

	recv_status = DOCA_ERROR_UNKNOWN;
	assert_ok(doca_rdma_task_receive_allocate_init(s->rdma, dst, ud, &r));
	assert_ok(doca_task_submit(doca_rdma_task_receive_as_task(r)));
}

/* Read the host's [at, +len) into out through the import (another path
 * than the RDMA tasks: core's PCI copy). */
static void host_peek(struct dpu *d, size_t at, void *out, size_t len)
{
	assert_ok(softdoca_mmap_copy(NULL, (uintptr_t)out, d->hostm, (uintptr_t)(d->host + at), len));
}

/* Where A's memory meets the host's offset at: the same offset, wrapped
 * for the offsets past the export that a forged descriptor reaches. */
#define MEM_AT(at) (mem + ((at) & (MEM_LEN - 1)))

/* B writes the host's [at, +len) to A's mem at the same offset. */
static doca_error_t write_from_host(struct dpu *d, size_t at, size_t len, bool try)
{
	struct doca_rdma_task_write *t;
	union doca_data ud = {.u64 = 0};
	struct doca_buf *src = buf_on(d->hostm, d->host + at, len, len);
	struct doca_buf *dst = buf_on(d->remote, MEM_AT(at), len, 0);
	doca_error_t st;

	assert_ok(doca_rdma_task_write_allocate_init(B.rdma, B.conn, src, dst, ud, &t));
	st = run(doca_rdma_task_write_as_task(t), try);
	put(src);
	put(dst);
	return st;
}

/* B reads A's mem [at, +len) into the host at the same offset. */
static doca_error_t read_into_host(struct dpu *d, size_t at, size_t len, bool try)
{
	struct doca_rdma_task_read *t;
	union doca_data ud = {.u64 = 0};
	struct doca_buf *src = buf_on(d->remote, MEM_AT(at), len, len);
	struct doca_buf *dst = buf_on(d->hostm, d->host + at, len, 0);
	doca_error_t st;

	assert_ok(doca_rdma_task_read_allocate_init(B.rdma, B.conn, src, dst, ud, &t));
	st = run(doca_rdma_task_read_as_task(t), try);
	put(src);
	put(dst);
	return st;
}

static void assert_mem_pattern(const uint8_t *p, size_t from, size_t len, uint8_t seed)
{
	for (size_t i = from; i < from + len; i++)
		if (p[i - from] != pattern(i, seed))
			fail_msg("byte %zu is %u, expected %u", i, p[i - from], pattern(i, seed));
}

/* ---- sources in the host ------------------------------------------------------- */

static void test_sources_from_host(void **state)
{
	struct dpu d;
	union doca_data ud = {.u64 = 0};
	size_t small = 64, large = 256u << 10;

	(void)state;
	if (!dpu_up(&d, HOST_RW, FORGE_NONE))
		return;
	memset(mem, 0, sizeof(mem));

	/* Writes, eager and rendezvous, both submit calls. */
	assert_ok(write_from_host(&d, 0, small, true));
	assert_mem_pattern(mem, 0, small, 1);
	assert_ok(write_from_host(&d, 4096, large, false));
	assert_mem_pattern(mem + 4096, 4096, large, 1);

	/* A send and a send with immediate into A's receives. */
	{
		struct doca_rdma_task_send *s;
		struct doca_rdma_task_send_imm *si;
		struct doca_buf *r1 = buf_on(d.local, mem + HALF, large, 0);
		struct doca_buf *r2 = buf_on(d.local, mem + HALF + large, small, 0);
		struct doca_buf *src1 = buf_on(d.hostm, d.host + 1000, large, large);
		struct doca_buf *src2 = buf_on(d.hostm, d.host + 7, small, small);
		int want = done_calls + 4;

		memset(mem + HALF, 0, HALF);
		post_receive(&A, r1);
		post_receive(&A, r2);
		assert_ok(doca_rdma_task_send_allocate_init(B.rdma, B.conn, src1, ud, &s));
		assert_ok(doca_task_try_submit(doca_rdma_task_send_as_task(s)));
		assert_ok(doca_rdma_task_send_imm_allocate_init(B.rdma, B.conn, src2, 0x01020304, ud, &si));
		assert_ok(doca_task_submit(doca_rdma_task_send_imm_as_task(si)));
		assert_true(progress_until(&done_calls, want));
		assert_int_equal(err_calls, 0);
		assert_int_equal(data_len_of(r1), large);
		assert_int_equal(data_len_of(r2), small);
		assert_mem_pattern(mem + HALF, 1000, large, 1);
		assert_mem_pattern(mem + HALF + large, 7, small, 1);
		put(r1);
		put(r2);
		put(src1);
		put(src2);
	}

	/* A write with immediate: the data to A's memory, the immediate to a
	 * receive of A's without a buffer. */
	{
		struct doca_rdma_task_write_imm *wi;
		struct doca_buf *src = buf_on(d.hostm, d.host + 333, small, small);
		struct doca_buf *dst = buf_on(d.remote, mem + 128, small, 0);
		int want = done_calls + 2;

		memset(mem, 0, 4096);
		post_receive(&A, NULL);
		assert_ok(doca_rdma_task_write_imm_allocate_init(B.rdma, B.conn, src, dst, 7, ud, &wi));
		assert_ok(doca_task_try_submit(doca_rdma_task_write_imm_as_task(wi)));
		assert_true(progress_until(&done_calls, want));
		assert_int_equal(err_calls, 0);
		assert_mem_pattern(mem + 128, 333, small, 1);
		put(src);
		put(dst);
	}

	/* A list mixing B's own memory and the host's. */
	{
		struct doca_rdma_task_write *t;
		struct doca_buf *head = buf_on(d.bown, bmem, 16, 16);
		struct doca_buf *tail = buf_on(d.hostm, d.host + 4000, 48, 48);
		struct doca_buf *dst = buf_on(d.remote, mem + 8192, small, 0);

		for (size_t i = 0; i < 16; i++)
			bmem[i] = pattern(i, 77);
		assert_ok(doca_buf_chain_list(head, tail));
		assert_ok(doca_rdma_task_write_allocate_init(B.rdma, B.conn, head, dst, ud, &t));
		assert_ok(run(doca_rdma_task_write_as_task(t), true));
		assert_mem_pattern(mem + 8192, 0, 16, 77);
		assert_mem_pattern(mem + 8192 + 16, 4000, 48, 1);
		assert_ok(doca_buf_unchain_list(head, tail));
		put(head);
		put(tail);
		put(dst);
	}
	assert_int_equal(err_calls, 0);
	dpu_down(&d);
}

/* ---- destinations in the host --------------------------------------------------- */

static void test_destinations_in_host(void **state)
{
	struct dpu d;
	union doca_data ud = {.u64 = 0};
	uint8_t back[64];
	uint64_t v;
	size_t i;

	(void)state;
	if (!dpu_up(&d, HOST_RW, FORGE_NONE))
		return;
	for (i = 0; i < MEM_LEN; i++)
		mem[i] = pattern(i, 50);

	/* Reads of A's second half into the host's: small, then the rest. */
	assert_ok(read_into_host(&d, HALF, 64, true));
	assert_ok(read_into_host(&d, HALF + 64, HALF - 64, false));
	assert_int_equal(ask(&d.p, 'v'), 1);

	/* A receive of B's into the host's second half. */
	{
		struct doca_rdma_task_send *s;
		struct doca_buf *r, *src = buf_on(d.local, mem + HALF, HALF, HALF);
		int want = done_calls + 2;

		assert_int_equal(ask(&d.p, 'z'), 1);
		assert_int_equal(ask(&d.p, 'v'), 0);
		r = buf_on(d.hostm, d.host + HALF, HALF, 0);
		post_receive(&B, r);
		assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &s));
		assert_ok(doca_task_try_submit(doca_rdma_task_send_as_task(s)));
		assert_true(progress_until(&done_calls, want));
		assert_int_equal(err_calls, 0);
		assert_int_equal(data_len_of(r), HALF);
		assert_int_equal(ask(&d.p, 'v'), 1);
		put(r);
		put(src);
	}

	/* A read into a list: 16 bytes into B's own memory, 48 into the host. */
	{
		struct doca_rdma_task_read *t;
		struct doca_buf *src = buf_on(d.remote, mem + 256, 64, 64);
		struct doca_buf *head = buf_on(d.bown, bmem, 16, 0);
		struct doca_buf *tail = buf_on(d.hostm, d.host + 100, 48, 0);

		assert_ok(doca_buf_chain_list(head, tail));
		assert_ok(doca_rdma_task_read_allocate_init(B.rdma, B.conn, src, head, ud, &t));
		assert_ok(run(doca_rdma_task_read_as_task(t), true));
		assert_mem_pattern(bmem, 256, 16, 50);
		host_peek(&d, 100, back, 48);
		assert_mem_pattern(back, 256 + 16, 48, 50);
		assert_int_equal(data_len_of(tail), 48);
		assert_ok(doca_buf_unchain_list(head, tail));
		put(head);
		put(tail);
		put(src);
	}

	/* Atomics whose old value lands in the host. */
	{
		struct doca_rdma_task_atomic_fetch_add *fa;
		struct doca_rdma_task_atomic_cmp_swp *cs;
		struct doca_buf *target = buf_on(d.remote, mem, 8, 8);
		struct doca_buf *res1 = buf_on(d.hostm, d.host + 512, 8, 0);
		struct doca_buf *res2 = buf_on(d.hostm, d.host + 520, 8, 0);

		v = 41;
		memcpy(mem, &v, 8);
		assert_ok(doca_rdma_task_atomic_fetch_add_allocate_init(B.rdma, B.conn, target, res1, 1, ud, &fa));
		assert_ok(run(doca_rdma_task_atomic_fetch_add_as_task(fa), true));
		assert_ok(doca_rdma_task_atomic_cmp_swp_allocate_init(B.rdma, B.conn, target, res2, 42, 99, ud, &cs));
		assert_ok(run(doca_rdma_task_atomic_cmp_swp_as_task(cs), false));
		memcpy(&v, mem, 8);
		assert_int_equal(v, 99);
		host_peek(&d, 512, &v, 8);
		assert_int_equal(v, 41);
		host_peek(&d, 520, &v, 8);
		assert_int_equal(v, 42);
		assert_int_equal(data_len_of(res1), 8);
		put(target);
		put(res1);
		put(res2);
	}

	/* A's sync event: get and notify_add results into the host, the
	 * notify_set value out of it. */
	{
		struct doca_sync_event *ev;
		struct doca_sync_event_remote_net *rev;
		struct doca_rdma_task_remote_net_sync_event_get *get;
		struct doca_rdma_task_remote_net_sync_event_notify_set *set;
		struct doca_rdma_task_remote_net_sync_event_notify_add *add;
		struct doca_buf *res = buf_on(d.hostm, d.host + 1024, 16, 0);
		struct doca_buf *src = buf_on(d.hostm, d.host + 2048, 8, 8);
		const uint8_t *desc;
		size_t desc_len;
		uint64_t set_to;

		assert_ok(doca_sync_event_create(&ev));
		assert_ok(doca_sync_event_add_publisher_location_remote_net(ev));
		assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
		assert_ok(doca_sync_event_start(ev));
		assert_ok(doca_sync_event_update_set(ev, 41));
		assert_ok(doca_sync_event_export_to_remote_net(ev, &desc, &desc_len));
		assert_ok(doca_sync_event_remote_net_create_from_export(dev, desc, desc_len, &rev));

		assert_ok(doca_rdma_task_remote_net_sync_event_get_allocate_init(B.rdma, B.conn, rev, res, ud, &get));
		assert_ok(run(doca_rdma_task_remote_net_sync_event_get_as_task(get), true));
		host_peek(&d, 1024, &v, 8);
		assert_int_equal(v, 41);

		host_peek(&d, 2048, &set_to, 8); /* whatever the host holds there */
		assert_ok(doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(B.rdma, B.conn, rev, src, ud,
											 &set));
		assert_ok(run(doca_rdma_task_remote_net_sync_event_notify_set_as_task(set), true));
		assert_ok(doca_sync_event_get(ev, &v));
		assert_int_equal(v, set_to);

		assert_ok(doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(B.rdma, B.conn, rev, res, 24,
											 ud, &add));
		assert_ok(run(doca_rdma_task_remote_net_sync_event_notify_add_as_task(add), false));
		host_peek(&d, 1032, &v, 8);
		assert_int_equal(v, set_to); /* the value before the addition */
		assert_ok(doca_sync_event_get(ev, &v));
		assert_int_equal(v, set_to + 24);

		assert_ok(doca_sync_event_remote_net_destroy(rev));
		assert_ok(doca_sync_event_stop(ev));
		assert_ok(doca_sync_event_destroy(ev));
		put(res);
		put(src);
	}
	assert_int_equal(err_calls, 0);
	dpu_down(&d);
}

/* ---- refusals ------------------------------------------------------------------- */

/* The export grants the host's memory read-only: B may send and write
 * from it, never place data in it. */
static void test_export_read_only(void **state)
{
	struct dpu d;
	struct doca_rdma_task_read *t;
	struct doca_rdma_task_receive *r;
	union doca_data ud = {.u64 = 0};
	struct doca_buf *src, *dst;
	uint8_t back[64];

	(void)state;
	if (!dpu_up(&d, HOST_RO, FORGE_NONE))
		return;
	for (size_t i = 0; i < MEM_LEN; i++)
		mem[i] = pattern(i, 50);
	src = buf_on(d.remote, mem + HALF, 64, 64);
	dst = buf_on(d.hostm, d.host + HALF, 64, 0);
	assert_ok(doca_rdma_task_read_allocate_init(B.rdma, B.conn, src, dst, ud, &t));
	error_needle = "DOCA_ACCESS_FLAG_PCI_READ_WRITE";
	error_needle_lines = 0;
	assert_fails(doca_task_try_submit(doca_rdma_task_read_as_task(t)), DOCA_ERROR_NOT_PERMITTED);
	assert_true(error_needle_lines > 0);
	assert_int_equal(run(doca_rdma_task_read_as_task(t), false), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_rdma_task_receive_allocate_init(B.rdma, dst, ud, &r));
	assert_fails(doca_task_try_submit(doca_rdma_task_receive_as_task(r)), DOCA_ERROR_NOT_PERMITTED);
	doca_task_free(doca_rdma_task_receive_as_task(r));
	error_needle = NULL;
	host_peek(&d, HALF, back, sizeof(back));
	assert_mem_pattern(back, HALF, sizeof(back), 1); /* untouched */
	put(src);
	put(dst);

	/* Reading the host's memory is granted. */
	memset(mem, 0, 4096);
	assert_ok(write_from_host(&d, 0, 4096, true));
	assert_mem_pattern(mem, 0, 4096, 1);
	dpu_down(&d);
}

/* A descriptor that claims twice the exported range: the exporter's
 * table is the authority, and a copy beyond what it published fails. */
static void test_forged_range(void **state)
{
	struct dpu d;

	(void)state;
	if (!dpu_up(&d, HOST_RW, FORGE_LEN))
		return;
	error_needle = "outside the exported range";
	error_needle_lines = 0;
	assert_int_equal(write_from_host(&d, MEM_LEN + 64, 64, true), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(read_into_host(&d, MEM_LEN + 64, 64, false), DOCA_ERROR_INVALID_VALUE);
	assert_true(error_needle_lines >= 2);
	error_needle = NULL;
	/* Inside the range the exporter published, all is well. */
	memset(mem, 0, 4096);
	assert_ok(write_from_host(&d, 0, 4096, true));
	assert_mem_pattern(mem, 0, 4096, 1);
	dpu_down(&d);
}

/* A descriptor that claims write permission the exporter never granted:
 * the read completes NOT_PERMITTED and the host's memory is untouched. */
static void test_forged_permission(void **state)
{
	struct dpu d;
	uint8_t back[64];

	(void)state;
	if (!dpu_up(&d, HOST_RO, FORGE_PERMS))
		return;
	for (size_t i = 0; i < MEM_LEN; i++)
		mem[i] = pattern(i, 50);
	error_needle = "PCI write refused";
	error_needle_lines = 0;
	assert_int_equal(read_into_host(&d, HALF, 64, true), DOCA_ERROR_NOT_PERMITTED);
	assert_true(error_needle_lines > 0);
	error_needle = NULL;
	host_peek(&d, HALF, back, sizeof(back));
	assert_mem_pattern(back, HALF, sizeof(back), 1);
	dpu_down(&d);
}

/* B's receive into the host waits; the host stops its mmap (revoke);
 * the message that then arrives cannot be placed: NOT_FOUND. Later
 * tasks on the import are refused at submit. */
static void test_revoked_while_posted(void **state)
{
	struct dpu d;
	struct doca_rdma_task_send *s;
	union doca_data ud = {.u64 = 0};
	struct doca_buf *r, *src;
	int want;

	(void)state;
	if (!dpu_up(&d, HOST_RW, FORGE_NONE))
		return;
	r = buf_on(d.hostm, d.host + HALF, 4096, 0);
	src = buf_on(d.local, mem, 4096, 4096);
	post_tagged_receive(&B, r);
	progress_rounds(10);
	assert_int_equal(done_calls, 0);
	assert_int_equal(ask(&d.p, 's'), 1);
	want = done_calls + 2;
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &s));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(s)));
	assert_true(progress_until(&done_calls, want));
	assert_int_equal(err_calls, 1); /* the receive; the send itself was delivered */
	assert_int_equal(recv_status, DOCA_ERROR_NOT_FOUND);
	assert_int_equal(data_len_of(r), 0);
	{
		struct doca_rdma_task_write *t;
		struct doca_buf *wsrc = buf_on(d.hostm, d.host, 64, 64);
		struct doca_buf *wdst = buf_on(d.remote, mem, 64, 0);

		assert_ok(doca_rdma_task_write_allocate_init(B.rdma, B.conn, wsrc, wdst, ud, &t));
		assert_fails(doca_task_try_submit(doca_rdma_task_write_as_task(t)), DOCA_ERROR_NOT_FOUND);
		assert_int_equal(run(doca_rdma_task_write_as_task(t), false), DOCA_ERROR_NOT_FOUND);
		put(wsrc);
		put(wdst);
	}
	assert_int_equal(read_into_host(&d, HALF, 64, false), DOCA_ERROR_NOT_FOUND);
	put(r);
	put(src);
	dpu_down(&d);
}

/* B's receive into the host waits; the host is killed; the message that
 * then arrives cannot be placed: CONNECTION_ABORTED, and so is every
 * later task on the import. */
static void test_exporter_died(void **state)
{
	struct dpu d;
	struct doca_rdma_task_send *s;
	union doca_data ud = {.u64 = 0};
	struct doca_buf *r, *src;
	int want;

	(void)state;
	if (!dpu_up(&d, HOST_RW, FORGE_NONE))
		return;
	r = buf_on(d.hostm, d.host + HALF, 4096, 0);
	src = buf_on(d.local, mem, 4096, 4096);
	post_tagged_receive(&B, r);
	kill_child(&d.p);
	d.child_gone = true;
	want = done_calls + 2;
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &s));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(s)));
	assert_true(progress_until(&done_calls, want));
	assert_int_equal(err_calls, 1); /* the receive */
	assert_int_equal(recv_status, DOCA_ERROR_CONNECTION_ABORTED);
	assert_int_equal(data_len_of(r), 0);
	assert_int_equal(write_from_host(&d, 0, 64, false), DOCA_ERROR_CONNECTION_ABORTED);
	{
		struct doca_rdma_task_write *t;
		struct doca_buf *wsrc = buf_on(d.hostm, d.host, 64, 64);
		struct doca_buf *wdst = buf_on(d.remote, mem, 64, 0);

		assert_ok(doca_rdma_task_write_allocate_init(B.rdma, B.conn, wsrc, wdst, ud, &t));
		assert_fails(doca_task_try_submit(doca_rdma_task_write_as_task(t)), DOCA_ERROR_CONNECTION_ABORTED);
		doca_task_free(doca_rdma_task_write_as_task(t));
		put(wsrc);
		put(wdst);
	}
	put(r);
	put(src);
	dpu_down(&d);
}

/* ---- the kernel refuses ---------------------------------------------------------- */

/* This thread's effective CAP_SYS_PTRACE on or off (kept permitted). */
static bool cap_ptrace(bool on)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct c[2];

	if (syscall(SYS_capget, &h, c) != 0)
		return false;
	if (on)
		c[0].effective |= c[0].permitted & (1u << CAP_SYS_PTRACE);
	else
		c[0].effective &= ~(1u << CAP_SYS_PTRACE);
	return syscall(SYS_capset, &h, c) == 0;
}

/* Whatever the test did, later tests run with the capability back. */
static int cap_restore(void **state)
{
	(void)state;
	error_needle = NULL;
	return cap_ptrace(true) ? 0 : -1;
}

/* The host turns non-dumpable and this thread gives up CAP_SYS_PTRACE:
 * the kernel refuses process_vm_readv, and the write that needed it
 * completes NOT_PERMITTED with the line naming the ptrace settings. */
static void test_kernel_refuses(void **state)
{
	struct dpu d;

	(void)state;
	if (!dpu_up(&d, HOST_RW, FORGE_NONE))
		return;
	assert_int_equal(ask(&d.p, 'd'), 1);
	assert_true(cap_ptrace(false));
	error_needle = "ptrace_scope";
	error_needle_lines = 0;
	assert_int_equal(write_from_host(&d, 0, 64, false), DOCA_ERROR_NOT_PERMITTED);
	assert_true(error_needle_lines > 0);
	error_needle = NULL;
	assert_true(cap_ptrace(true));
	memset(mem, 0, 64);
	if (write_from_host(&d, 0, 64, true) == DOCA_SUCCESS)
		assert_mem_pattern(mem, 0, 64, 1);
	else
		print_message("note: without CAP_SYS_PTRACE here, the non-dumpable host stays unreachable\n");
	dpu_down(&d);
}

/* ---- repeated runs ----------------------------------------------------------------- */

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(dir);
	while (readdir(dir) != NULL)
		n++;
	closedir(dir);
	return n;
}

/* Over many rounds of a write from and a read into the host, a send from
 * it and a receive into it (eager and rendezvous sizes), no fd and no
 * heap stays behind. */
static void test_flat_over_repeats(void **state)
{
	struct dpu d;
	struct mallinfo2 before, after;
	int fds;

	(void)state;
	if (!dpu_up(&d, HOST_RW, FORGE_NONE))
		return;
	for (size_t i = 0; i < MEM_LEN; i++)
		mem[i] = pattern(i, 50);
	assert_ok(read_into_host(&d, HALF, HALF, true)); /* what 'v' looks for at the end */
	for (int round = 0; round < 2; round++) {
		int n = round == 0 ? 20 : 300;

		if (round == 1) {
			fds = count_fds();
			before = mallinfo2();
		}
		for (int k = 0; k < n; k++) {
			size_t len = k % 2 ? 4096 : 96u << 10;
			struct doca_rdma_task_send *s;
			union doca_data ud = {.u64 = 0};
			struct doca_buf *r = buf_on(d.hostm, d.host + HALF, len, 0);
			struct doca_buf *ra = buf_on(d.local, mem + (128u << 10), len, 0);
			struct doca_buf *src = buf_on(d.hostm, d.host, len, len);
			struct doca_buf *srca = buf_on(d.local, mem + HALF, len, len);
			struct doca_rdma_task_send *sa;
			/* Static: the watched tasks may outlive a failed test. */
			static struct watch ra_w, r_w, s_w, sa_w;

			assert_ok(write_from_host(&d, 0, len, true));
			assert_ok(read_into_host(&d, HALF, len, false));
			/* B's send from the host to A, A's send into the host.
			 * Each task is waited for by its own watch: the order in
			 * which the four complete is the engine's (B's send often
			 * completes last), and a count of completions cannot say
			 * whose buffers may be released. */
			post_watched_receive(&A, ra, &ra_w);
			post_watched_receive(&B, r, &r_w);
			assert_ok(doca_rdma_task_send_allocate_init(B.rdma, B.conn, src, ud, &s));
			watch_task(doca_rdma_task_send_as_task(s), &s_w);
			assert_ok(doca_task_submit(doca_rdma_task_send_as_task(s)));
			assert_ok(wait_for(&ra_w));
			assert_int_equal(data_len_of(ra), len);
			assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, srca, ud, &sa));
			watch_task(doca_rdma_task_send_as_task(sa), &sa_w);
			assert_ok(doca_task_submit(doca_rdma_task_send_as_task(sa)));
			assert_ok(wait_for(&r_w));
			assert_int_equal(data_len_of(r), len);
			assert_ok(wait_for(&s_w));
			assert_ok(wait_for(&sa_w));
			assert_int_equal(err_calls, 0);
			put(r);
			put(ra);
			put(src);
			put(srca);
		}
	}
	after = mallinfo2();
	assert_int_equal(count_fds(), fds);
	if (after.uordblks > before.uordblks + (64u << 10))
		fail_msg("heap in use grew from %zu to %zu bytes over 300 rounds", before.uordblks, after.uordblks);
	assert_int_equal(ask(&d.p, 'v'), 1);
	dpu_down(&d);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sources_from_host),
		cmocka_unit_test(test_destinations_in_host),
		cmocka_unit_test(test_export_read_only),
		cmocka_unit_test(test_forged_range),
		cmocka_unit_test(test_forged_permission),
		cmocka_unit_test(test_revoked_while_posted),
		cmocka_unit_test(test_exporter_died),
		cmocka_unit_test_teardown(test_kernel_refuses, cap_restore),
		cmocka_unit_test(test_flat_over_repeats),
	};

	pci_child_run(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
