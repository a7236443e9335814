/*
 * Unit tests of the loopback engine on its own (src/engine/loopback.c,
 * compiled into this program): its ops table driven directly with work
 * requests, as the RDMA layer drives it, without the DOCA RDMA layer and
 * without UCX. Memory regions and sync events are real Core objects
 * (through the same seam the UCX target uses), so the checks the target
 * makes are the real ones: what the RDMA layer would never send (an
 * address outside the region, a wrong key, a misaligned atomic) is
 * forged here and must be refused before any byte moves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <doca_dev.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_sync_event.h>

#include "engine/engine.h"
#include "mmap.h"
#include "sync_event.h"

#define assert_ok(expr) assert_int_equal((expr), DOCA_SUCCESS)

static const struct engine_ops *ops = &engine_loopback_ops;

/* ---- events and completions ---------------------------------------------- */

#define MAX_EVENTS 32
struct event_rec {
	void *arg;
	struct engine_conn *conn;
	enum engine_conn_event event;
};
static struct event_rec events[MAX_EVENTS];
static int num_events;

static void on_event(void *arg, struct engine_conn *conn, enum engine_conn_event event)
{
	assert_true(num_events < MAX_EVENTS);
	events[num_events].arg = arg;
	events[num_events].conn = conn;
	events[num_events].event = event;
	num_events++;
}

/* How many events of kind ev conn got. */
static int events_of(const struct engine_conn *conn, enum engine_conn_event ev)
{
	int n = 0;

	for (int i = 0; i < num_events; i++)
		n += events[i].conn == conn && events[i].event == ev;
	return n;
}

struct twr {
	struct engine_wr wr;
	int calls; /* done() must run exactly once per post */
	int order; /* when it ran, among all completions */
};
static int completions;

static void on_done(struct engine_wr *wr)
{
	struct twr *t = (struct twr *)wr;

	t->calls++;
	t->order = completions++;
}

static void twr_init(struct twr *t, enum engine_opcode op, struct engine_conn *conn)
{
	memset(t, 0, sizeof(*t));
	t->wr.opcode = (uint8_t)op;
	t->wr.conn = conn;
	t->wr.done = on_done;
	t->order = -1;
}

static void twr_sge(struct twr *t, void *addr, size_t len)
{
	t->wr.sge[t->wr.num_sge].addr = addr;
	t->wr.sge[t->wr.num_sge].len = len;
	t->wr.num_sge++;
}

/* ---- fixtures ------------------------------------------------------------------- */

static struct doca_devinfo **dev_list;
static struct doca_dev *dev;

#define MEM_SIZE 8192
static _Alignas(64) uint8_t mem[MEM_SIZE];
static _Alignas(64) uint8_t local[MEM_SIZE];
static struct doca_mmap *region_mm, *remote_mm;
static struct softdoca_mmap_desc region; /* what a peer's export grants */

struct pair {
	struct engine_worker *wa, *wb;
	struct engine_conn *ca, *cb;
	const void *da, *db;
	size_t la, lb;
};
static struct pair P;

static struct engine_worker *worker(uint32_t perms, uint8_t rnr, uint32_t sq, bool dc)
{
	struct engine_worker_conf conf = {
		.dc = dc,
		.max_connections = 4,
		.rnr_retry_count = rnr,
		.send_queue_size = sq,
		.permissions = perms,
		.conn_event = on_event,
		.arg = NULL,
	};
	struct engine_worker *w = NULL;

	assert_ok(ops->worker_create(dev, &conf, &w));
	assert_non_null(w);
	return w;
}

#define ALL_PERMS \
	(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | \
	 DOCA_ACCESS_FLAG_RDMA_ATOMIC)

/* A and B exported; connect as asked. */
static void pair_make(uint32_t perms_b, uint8_t rnr_a, uint32_t sq_a, bool connect_a, bool connect_b)
{
	memset(&P, 0, sizeof(P));
	num_events = 0;
	completions = 0;
	P.wa = worker(ALL_PERMS, rnr_a, sq_a, false);
	P.wb = worker(perms_b, 7, 16, false);
	assert_ok(ops->conn_export(P.wa, &P.ca, &P.da, &P.la));
	assert_ok(ops->conn_export(P.wb, &P.cb, &P.db, &P.lb));
	if (connect_a)
		assert_ok(ops->conn_connect(P.ca, P.db, P.lb));
	if (connect_b)
		assert_ok(ops->conn_connect(P.cb, P.da, P.la));
}

static void pair_destroy(void)
{
	if (P.wa != NULL)
		ops->worker_destroy(P.wa);
	if (P.wb != NULL)
		ops->worker_destroy(P.wb);
	P.wa = P.wb = NULL;
}

static int setup_pair(void **state)
{
	(void)state;
	pair_make(ALL_PERMS, 7, 16, true, true);
	return 0;
}

static int teardown_pair(void **state)
{
	(void)state;
	pair_destroy();
	return 0;
}

static int group_setup(void **state)
{
	uint32_t nb = 0;
	const void *desc;
	size_t len;

	(void)state;
	if (doca_devinfo_create_list(&dev_list, &nb) != DOCA_SUCCESS || nb == 0)
		return -1;
	if (doca_dev_open(dev_list[0], &dev) != DOCA_SUCCESS)
		return -1;
	assert_ok(doca_mmap_create(&region_mm));
	assert_ok(doca_mmap_set_memrange(region_mm, mem, sizeof(mem)));
	assert_ok(doca_mmap_set_permissions(region_mm, ALL_PERMS));
	assert_ok(doca_mmap_add_dev(region_mm, dev));
	assert_ok(doca_mmap_start(region_mm));
	assert_ok(doca_mmap_export_rdma(region_mm, dev, &desc, &len));
	assert_ok(doca_mmap_create_from_export(NULL, desc, len, dev, &remote_mm));
	assert_ok(softdoca_mmap_remote_info(remote_mm, &region));
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	assert_ok(doca_mmap_stop(remote_mm));
	assert_ok(doca_mmap_destroy(remote_mm));
	assert_ok(doca_mmap_destroy(region_mm));
	assert_ok(doca_dev_close(dev));
	assert_ok(doca_devinfo_destroy_list(dev_list));
	return 0;
}

/* The remote side of t names [region + off, +len). */
static void twr_remote(struct twr *t, uint64_t off, uint64_t len)
{
	t->wr.remote.region_id = region.region_id;
	memcpy(t->wr.remote.secret, region.secret, ENGINE_SECRET_LEN);
	t->wr.remote.addr = region.addr + off;
	t->wr.remote.len = len;
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_table_complete(void **state)
{
	(void)state;
	/* No empty slot: callers never test for NULL. */
	assert_string_equal(ops->name, "loopback");
	assert_non_null(ops->worker_create);
	assert_non_null(ops->worker_destroy);
	assert_non_null(ops->worker_progress);
	assert_non_null(ops->worker_flush);
	assert_non_null(ops->worker_outstanding);
	assert_non_null(ops->conn_export);
	assert_non_null(ops->conn_connect);
	assert_non_null(ops->conn_disconnect);
	assert_non_null(ops->conn_release);
	assert_non_null(ops->listen);
	assert_non_null(ops->listen_stop);
	assert_non_null(ops->conn_connect_addr);
	assert_non_null(ops->conn_accept);
	assert_non_null(ops->conn_reject);
	assert_non_null(ops->conn_peer_addr);
	assert_non_null(ops->flush_posts);
	assert_non_null(ops->conn_id);
	assert_non_null(ops->conn_set_user);
	assert_non_null(ops->conn_get_user);
	assert_non_null(ops->conn_is_usable);
	assert_non_null(ops->post);
	assert_non_null(ops->post_recv);
}

static void test_worker_conf_checked(void **state)
{
	struct engine_worker_conf conf = {.max_connections = 0, .send_queue_size = 8};
	struct engine_worker *w = NULL;

	(void)state;
	assert_int_equal(ops->worker_create(dev, &conf, &w), DOCA_ERROR_INVALID_VALUE);
	conf.max_connections = 1;
	conf.send_queue_size = 0;
	assert_int_equal(ops->worker_create(dev, &conf, &w), DOCA_ERROR_INVALID_VALUE);
	assert_null(w);
}

static void test_established_once_both_connected(void **state)
{
	(void)state;
	pair_make(ALL_PERMS, 7, 16, true, false);
	assert_true(ops->conn_is_usable(P.ca));
	assert_false(ops->conn_is_usable(P.cb));
	assert_int_equal(num_events, 0);
	assert_ok(ops->conn_connect(P.cb, P.da, P.la));
	assert_int_equal(events_of(P.ca, ENGINE_CONN_ESTABLISHED), 1);
	assert_int_equal(events_of(P.cb, ENGINE_CONN_ESTABLISHED), 1);
	assert_int_equal(num_events, 2);
	/* Connect works once. */
	assert_int_equal(ops->conn_connect(P.cb, P.da, P.la), DOCA_ERROR_BAD_STATE);
	assert_int_equal(ops->conn_id(P.ca), 1);
	ops->conn_set_user(P.ca, &P);
	assert_ptr_equal(ops->conn_get_user(P.ca), &P);
	pair_destroy();
}

static void test_max_connections(void **state)
{
	struct engine_worker *w = worker(ALL_PERMS, 7, 4, false);
	struct engine_conn *c;
	const void *d;
	size_t l;

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_ok(ops->conn_export(w, &c, &d, &l));
	assert_int_equal(ops->conn_export(w, &c, &d, &l), DOCA_ERROR_FULL);
	ops->worker_destroy(w);
}

/* Random and damaged descriptors never connect, never crash. */
static void test_hostile_descriptors(void **state)
{
	uint8_t buf[128];
	unsigned int seed = 12345;

	(void)state;
	pair_make(ALL_PERMS, 7, 16, false, false);
	assert_int_equal(ops->conn_connect(P.ca, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	for (int i = 0; i < 2000; i++) {
		size_t len = (size_t)(rand_r(&seed) % (int)sizeof(buf));

		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = (uint8_t)rand_r(&seed);
		/* Half of them start as the real thing, with one byte changed. */
		if (i % 2 == 0 && len >= P.lb) {
			memcpy(buf, P.db, P.lb);
			len = P.lb;
			buf[(size_t)rand_r(&seed) % len] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
		}
		assert_int_equal(ops->conn_connect(P.ca, buf, len), DOCA_ERROR_INVALID_VALUE);
	}
	assert_false(ops->conn_is_usable(P.ca));
	assert_ok(ops->conn_connect(P.ca, P.db, P.lb));
	assert_true(ops->conn_is_usable(P.ca));
	pair_destroy();
}

/* A descriptor of a slot's last life names nothing once the slot serves
 * a new connection (a fresh secret). */
static void test_stale_descriptor(void **state)
{
	uint8_t old[128];
	size_t old_len;

	(void)state;
	pair_make(ALL_PERMS, 7, 16, false, false);
	old_len = P.lb;
	memcpy(old, P.db, old_len);
	assert_ok(ops->conn_connect(P.cb, P.da, P.la));
	assert_ok(ops->conn_disconnect(P.cb));
	ops->conn_release(P.cb);
	assert_ok(ops->conn_export(P.wb, &P.cb, &P.db, &P.lb));
	assert_int_equal(ops->conn_id(P.cb), 1); /* the same slot */
	assert_int_equal(ops->conn_connect(P.ca, old, old_len), DOCA_ERROR_INVALID_VALUE);
	assert_ok(ops->conn_connect(P.ca, P.db, P.lb));
	pair_destroy();
}

static void test_post_checks(void **state)
{
	struct twr t;
	struct engine_conn *lonely;
	const void *d;
	size_t l;

	(void)state;
	twr_init(&t, ENGINE_OP_RECV, P.ca);
	assert_int_equal(ops->post(&t.wr), DOCA_ERROR_INVALID_VALUE);
	twr_init(&t, ENGINE_OP_SEND, NULL);
	assert_int_equal(ops->post(&t.wr), DOCA_ERROR_INVALID_VALUE);
	twr_init(&t, ENGINE_OP_SYNC_ADD + 1, P.ca);
	assert_int_equal(ops->post(&t.wr), DOCA_ERROR_INVALID_VALUE);
	twr_init(&t, ENGINE_OP_SEND, P.ca);
	t.wr.num_sge = ENGINE_MAX_SGE + 1;
	assert_int_equal(ops->post(&t.wr), DOCA_ERROR_INVALID_VALUE);
	twr_init(&t, ENGINE_OP_SEND, P.ca);
	assert_int_equal(ops->post_recv(P.wb, &t.wr), DOCA_ERROR_INVALID_VALUE);
	assert_ok(ops->conn_export(P.wa, &lonely, &d, &l));
	twr_init(&t, ENGINE_OP_SEND, lonely);
	assert_int_equal(ops->post(&t.wr), DOCA_ERROR_NOT_CONNECTED);
	assert_int_equal(t.calls, 0);
	assert_int_equal(ops->worker_outstanding(P.wa), 0);
}

/* Out-of-bounds, wrong keys, misalignment: refused, nothing touched. */
static void test_target_refusals(void **state)
{
	static const struct {
		enum engine_opcode op;
		uint64_t off, len;
		int key; /* 0 right, 1 wrong secret, 2 unknown region */
		doca_error_t want;
	} cases[] = {
		{ENGINE_OP_WRITE, MEM_SIZE - 4, 8, 0, DOCA_ERROR_INVALID_VALUE},
		{ENGINE_OP_WRITE, MEM_SIZE, 8, 0, DOCA_ERROR_INVALID_VALUE},
		{ENGINE_OP_WRITE, 0, 8, 1, DOCA_ERROR_NOT_PERMITTED},
		{ENGINE_OP_WRITE, 0, 8, 2, DOCA_ERROR_NOT_PERMITTED},
		{ENGINE_OP_READ, MEM_SIZE - 4, 8, 0, DOCA_ERROR_INVALID_VALUE},
		{ENGINE_OP_READ, 0, 8, 1, DOCA_ERROR_NOT_PERMITTED},
		{ENGINE_OP_ATOMIC_FADD, 4, 8, 0, DOCA_ERROR_INVALID_VALUE},
		{ENGINE_OP_ATOMIC_FADD, MEM_SIZE, 8, 0, DOCA_ERROR_INVALID_VALUE},
		{ENGINE_OP_ATOMIC_CAS, 0, 8, 2, DOCA_ERROR_NOT_PERMITTED},
		{ENGINE_OP_SYNC_GET, 0, 8, 2, DOCA_ERROR_NOT_PERMITTED},
	};
	uint8_t src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t dst[16];

	(void)state;
	memset(mem, 0x77, sizeof(mem));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct twr t;

		twr_init(&t, cases[i].op, P.ca);
		twr_remote(&t, cases[i].off, cases[i].len);
		if (cases[i].key == 1)
			t.wr.remote.secret[3] ^= 0x10;
		if (cases[i].key == 2)
			t.wr.remote.region_id += 1000;
		if (cases[i].op == ENGINE_OP_WRITE)
			twr_sge(&t, src, sizeof(src));
		else
			twr_sge(&t, dst, sizeof(dst));
		memset(dst, 0, sizeof(dst));
		assert_ok(ops->post(&t.wr));
		assert_int_equal(t.calls, 1);
		assert_int_equal(t.wr.status, cases[i].want);
		assert_int_equal(t.wr.result_len, 0);
		for (size_t k = 0; k < sizeof(dst); k++)
			assert_int_equal(dst[k], 0);
	}
	for (size_t k = 0; k < sizeof(mem); k++)
		assert_int_equal(mem[k], 0x77);
	assert_int_equal(ops->worker_outstanding(P.wa), 0);
}

/* A write and a read across a two-piece gather list and a scatter list. */
static void test_write_read_sge(void **state)
{
	struct twr w, r;

	(void)state;
	memcpy(local, "hello ", 6);
	memcpy(local + 100, "world", 5);
	twr_init(&w, ENGINE_OP_WRITE, P.ca);
	twr_sge(&w, local, 6);
	twr_sge(&w, local + 100, 5);
	twr_remote(&w, 1000, 11);
	assert_ok(ops->post(&w.wr));
	assert_int_equal(w.calls, 1);
	assert_int_equal(w.wr.status, DOCA_SUCCESS);
	assert_memory_equal(mem + 1000, "hello world", 11);

	twr_init(&r, ENGINE_OP_READ, P.ca);
	twr_sge(&r, local + 200, 4);
	twr_sge(&r, local + 300, 7);
	twr_remote(&r, 1000, 11);
	assert_ok(ops->post(&r.wr));
	assert_int_equal(r.wr.status, DOCA_SUCCESS);
	assert_int_equal(r.wr.result_len, 11);
	assert_memory_equal(local + 200, "hell", 4);
	assert_memory_equal(local + 300, "o world", 7);

	/* A read bigger than its destination: refused. */
	twr_init(&r, ENGINE_OP_READ, P.ca);
	twr_sge(&r, local + 200, 4);
	twr_remote(&r, 1000, 11);
	assert_ok(ops->post(&r.wr));
	assert_int_equal(r.wr.status, DOCA_ERROR_IO_FAILED);
}

/* B grants nothing: the context's permissions are checked first. */
static void test_context_permissions(void **state)
{
	struct twr t;
	uint8_t src[8] = {0};

	(void)state;
	pair_make(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ, 7, 16, true, true);
	twr_init(&t, ENGINE_OP_WRITE, P.ca);
	twr_sge(&t, src, sizeof(src));
	twr_remote(&t, 0, 8);
	assert_ok(ops->post(&t.wr));
	assert_int_equal(t.wr.status, DOCA_ERROR_NOT_PERMITTED);
	twr_init(&t, ENGINE_OP_READ, P.ca);
	twr_sge(&t, local, 8);
	twr_remote(&t, 0, 8);
	assert_ok(ops->post(&t.wr));
	assert_int_equal(t.wr.status, DOCA_SUCCESS);
	pair_destroy();
}

static void test_sync_event_ops(void **state)
{
	struct doca_sync_event *ev;
	struct doca_sync_event_remote_net *rev;
	struct softdoca_sync_event_desc d;
	const uint8_t *desc;
	size_t len;
	uint64_t v = 5, out = 0;
	struct twr t;

	(void)state;
	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_add_publisher_location_remote_net(ev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_ok(doca_sync_event_start(ev));
	assert_ok(doca_sync_event_export_to_remote_net(ev, &desc, &len));
	assert_ok(doca_sync_event_remote_net_create_from_export(dev, desc, len, &rev));
	assert_ok(softdoca_sync_event_remote_desc(rev, &d));

	twr_init(&t, ENGINE_OP_SYNC_SET, P.ca);
	t.wr.remote.region_id = d.event_id;
	memcpy(t.wr.remote.secret, d.secret, ENGINE_SECRET_LEN);
	twr_sge(&t, &v, 4); /* not 8 bytes: refused */
	assert_ok(ops->post(&t.wr));
	assert_int_equal(t.wr.status, DOCA_ERROR_INVALID_VALUE);
	t.wr.sge[0].len = 8;
	assert_ok(ops->post(&t.wr));
	assert_int_equal(t.wr.status, DOCA_SUCCESS);

	t.wr.opcode = ENGINE_OP_SYNC_ADD;
	t.wr.operand = 10;
	t.wr.sge[0].addr = &out;
	assert_ok(ops->post(&t.wr));
	assert_int_equal(t.wr.status, DOCA_SUCCESS);
	assert_int_equal(out, 5);
	t.wr.opcode = ENGINE_OP_SYNC_GET;
	assert_ok(ops->post(&t.wr));
	assert_int_equal(out, 15);
	assert_int_equal(t.wr.result_len, 8);
	assert_int_equal(t.calls, 4);

	assert_ok(doca_sync_event_remote_net_destroy(rev));
	assert_ok(doca_sync_event_stop(ev));
	assert_ok(doca_sync_event_destroy(ev));
}

/* Receives match sends in posting order, on any connection; a send waits
 * for a receive, and holds the operations behind it. */
static void test_rnr_and_order(void **state)
{
	struct twr s1, w, s2, r1, r2;
	uint8_t a[4] = {'o', 'n', 'e', 0}, b[4] = {'t', 'w', 'o', 0};
	uint8_t d1[8] = {0}, d2[8] = {0};

	(void)state;
	memset(mem, 0, 64);
	twr_init(&s1, ENGINE_OP_SEND_IMM, P.ca);
	twr_sge(&s1, a, 3);
	s1.wr.imm = 0xfeed;
	twr_init(&w, ENGINE_OP_WRITE, P.ca);
	twr_sge(&w, b, 3);
	twr_remote(&w, 0, 3);
	twr_init(&s2, ENGINE_OP_SEND, P.ca);
	twr_sge(&s2, b, 3);
	assert_ok(ops->post(&s1.wr));
	assert_ok(ops->post(&w.wr));
	assert_ok(ops->post(&s2.wr));
	for (int i = 0; i < 100; i++)
		(void)ops->worker_progress(P.wa);
	assert_int_equal(s1.calls + w.calls + s2.calls, 0);
	assert_int_equal(mem[0], 0);
	assert_int_equal(ops->worker_outstanding(P.wa), 3);

	twr_init(&r1, ENGINE_OP_RECV, NULL);
	twr_sge(&r1, d1, sizeof(d1));
	assert_ok(ops->post_recv(P.wb, &r1.wr));
	/* The first send and the write ran; the second send waits again. */
	assert_int_equal(r1.calls, 1);
	assert_int_equal(s1.calls, 1);
	assert_int_equal(w.calls, 1);
	assert_int_equal(s2.calls, 0);
	assert_true(r1.order < s1.order && s1.order < w.order);
	assert_memory_equal(d1, "one", 3);
	assert_int_equal(r1.wr.result_len, 3);
	assert_int_equal(r1.wr.result_kind, ENGINE_RECV_SEND_IMM);
	assert_int_equal(r1.wr.result_imm, 0xfeed);
	assert_ptr_equal(r1.wr.result_conn, P.cb);
	assert_memory_equal(mem, "two", 3);

	twr_init(&r2, ENGINE_OP_RECV, NULL);
	twr_sge(&r2, d2, sizeof(d2));
	assert_ok(ops->post_recv(P.wb, &r2.wr));
	assert_int_equal(s2.calls, 1);
	assert_int_equal(r2.wr.result_kind, ENGINE_RECV_SEND);
	assert_memory_equal(d2, "two", 3);
	assert_int_equal(ops->worker_outstanding(P.wa), 0);
	assert_int_equal(ops->worker_outstanding(P.wb), 0);
}

/* The target side has not connected: operations wait for it, then run. */
static void test_waits_for_target_connect(void **state)
{
	struct twr w;
	uint8_t src[4] = {9, 8, 7, 6};

	(void)state;
	pair_make(ALL_PERMS, 7, 16, true, false);
	memset(mem, 0, 8);
	twr_init(&w, ENGINE_OP_WRITE, P.ca);
	twr_sge(&w, src, 4);
	twr_remote(&w, 0, 4);
	assert_ok(ops->post(&w.wr));
	assert_int_equal(w.calls, 0);
	assert_int_equal(mem[0], 0);
	assert_ok(ops->conn_connect(P.cb, P.da, P.la));
	assert_int_equal(w.calls, 1);
	assert_int_equal(w.wr.status, DOCA_SUCCESS);
	assert_memory_equal(mem, src, 4);
	pair_destroy();
}

static void test_rnr_timeout(void **state)
{
	struct twr s;
	uint8_t a[2] = {1, 2};
	time_t give_up;

	(void)state;
	pair_make(ALL_PERMS, 0, 16, true, true);
	twr_init(&s, ENGINE_OP_SEND, P.ca);
	twr_sge(&s, a, 2);
	assert_ok(ops->post(&s.wr));
	/* 200 ms of RNR timer; polled for at most 10 s. */
	give_up = time(NULL) + 10;
	while (s.calls == 0 && time(NULL) < give_up)
		(void)ops->worker_progress(P.wb);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.wr.status, DOCA_ERROR_TIME_OUT);
	assert_int_equal(ops->worker_outstanding(P.wa), 0);
	pair_destroy();
}

static void test_send_queue_bound(void **state)
{
	struct twr s[3];
	uint8_t a = 1;

	(void)state;
	pair_make(ALL_PERMS, 7, 2, true, true);
	for (int i = 0; i < 3; i++) {
		twr_init(&s[i], ENGINE_OP_SEND, P.ca);
		twr_sge(&s[i], &a, 1);
	}
	assert_ok(ops->post(&s[0].wr));
	assert_ok(ops->post(&s[1].wr));
	assert_int_equal(ops->post(&s[2].wr), DOCA_ERROR_FULL);
	ops->worker_flush(P.wa);
	assert_int_equal(s[0].wr.status, DOCA_ERROR_IO_FAILED);
	assert_int_equal(s[1].wr.status, DOCA_ERROR_IO_FAILED);
	assert_int_equal(s[0].calls + s[1].calls + s[2].calls, 2);
	assert_ok(ops->post(&s[2].wr)); /* room again */
	pair_destroy();
	assert_int_equal(s[2].calls, 1);
}

/* A disconnect: what waits fails, the peer alone hears of it. */
static void test_disconnect(void **state)
{
	struct twr s, r;
	uint8_t a = 1, d[4];

	(void)state;
	twr_init(&s, ENGINE_OP_SEND, P.ca);
	twr_sge(&s, &a, 1);
	assert_ok(ops->post(&s.wr));
	twr_init(&r, ENGINE_OP_RECV, NULL);
	twr_sge(&r, d, sizeof(d));
	assert_ok(ops->post_recv(P.wa, &r.wr));
	num_events = 0;
	assert_ok(ops->conn_disconnect(P.cb));
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.wr.status, DOCA_ERROR_CONNECTION_RESET);
	assert_int_equal(events_of(P.ca, ENGINE_CONN_DISCONNECTED), 1);
	assert_int_equal(num_events, 1);
	assert_false(ops->conn_is_usable(P.ca));
	assert_false(ops->conn_is_usable(P.cb));
	/* The receive belongs to A's worker: it stays until flushed. */
	assert_int_equal(r.calls, 0);
	ops->worker_flush(P.wa);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.wr.status, DOCA_ERROR_IO_FAILED);
	/* Closed slots are free for new connections. */
	ops->conn_release(P.ca);
	ops->conn_release(P.cb);
	assert_ok(ops->conn_export(P.wa, &P.ca, &P.da, &P.la));
	assert_int_equal(ops->conn_id(P.ca), 1);
}

/* Destroying a worker disconnects its peers. */
static void test_destroy_disconnects_peer(void **state)
{
	(void)state;
	num_events = 0;
	ops->worker_destroy(P.wa);
	P.wa = NULL;
	assert_int_equal(events_of(P.cb, ENGINE_CONN_DISCONNECTED), 1);
	assert_false(ops->conn_is_usable(P.cb));
}

/* DC: the passive side never connects, and is established by the first
 * connect to it; operations land at once. */
static void test_dc_passive(void **state)
{
	struct engine_worker *wa = worker(ALL_PERMS, 7, 16, true);
	struct engine_worker *wb = worker(ALL_PERMS, 7, 16, true);
	struct engine_worker *rc = worker(ALL_PERMS, 7, 16, false);
	struct engine_conn *ca, *cb, *crc;
	const void *da, *db, *drc;
	size_t la, lb, lrc;
	uint8_t src[2] = {4, 2};
	struct twr w;

	(void)state;
	num_events = 0;
	assert_ok(ops->conn_export(wa, &ca, &da, &la));
	assert_ok(ops->conn_export(wb, &cb, &db, &lb));
	assert_ok(ops->conn_export(rc, &crc, &drc, &lrc));
	assert_int_equal(ops->conn_connect(crc, db, lb), DOCA_ERROR_DRIVER); /* RC to DC */
	assert_ok(ops->conn_connect(ca, db, lb));
	assert_int_equal(events_of(cb, ENGINE_CONN_ESTABLISHED), 1);
	twr_init(&w, ENGINE_OP_WRITE, ca);
	twr_sge(&w, src, 2);
	twr_remote(&w, 0, 2);
	assert_ok(ops->post(&w.wr));
	assert_int_equal(w.wr.status, DOCA_SUCCESS);
	assert_memory_equal(mem, src, 2);
	ops->worker_destroy(wa);
	assert_int_equal(events_of(cb, ENGINE_CONN_DISCONNECTED), 1);
	ops->worker_destroy(wb);
	ops->worker_destroy(rc);
}

static void test_no_cm(void **state)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	struct engine_conn *c = NULL;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	assert_int_equal(ops->listen(P.wa, 1), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(ops->listen_stop(P.wa, 1), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(ops->conn_connect_addr(P.wa, (struct sockaddr *)&sa, sl, NULL, NULL, &c),
			 DOCA_ERROR_NOT_SUPPORTED);
	assert_null(c);
	assert_int_equal(ops->conn_accept(P.ca, NULL, 0), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(ops->conn_reject(P.ca), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(ops->conn_peer_addr(P.ca, &sa, &sl), DOCA_ERROR_NOT_FOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_complete),
		cmocka_unit_test(test_worker_conf_checked),
		cmocka_unit_test(test_established_once_both_connected),
		cmocka_unit_test(test_max_connections),
		cmocka_unit_test(test_hostile_descriptors),
		cmocka_unit_test(test_stale_descriptor),
		cmocka_unit_test_setup_teardown(test_post_checks, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_target_refusals, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_write_read_sge, setup_pair, teardown_pair),
		cmocka_unit_test(test_context_permissions),
		cmocka_unit_test_setup_teardown(test_sync_event_ops, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_rnr_and_order, setup_pair, teardown_pair),
		cmocka_unit_test(test_waits_for_target_connect),
		cmocka_unit_test(test_rnr_timeout),
		cmocka_unit_test(test_send_queue_bound),
		cmocka_unit_test_setup_teardown(test_disconnect, setup_pair, teardown_pair),
		cmocka_unit_test_setup_teardown(test_destroy_disconnects_peer, setup_pair, teardown_pair),
		cmocka_unit_test(test_dc_passive),
		cmocka_unit_test_setup_teardown(test_no_cm, setup_pair, teardown_pair),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
