/*
 * Unit tests of explained failures (docs/troubleshooting.md): for each
 * symptom, the status the call returns and the one line softdoca logs,
 * naming the object, the cause and the fix:
 *  - DOCA_ERROR_FULL from a submit: the send queue, its size, what is in
 *    flight and the property to raise, once per context;
 *  - DOCA_ERROR_BAD_STATE from lifecycle calls: the state the context (or
 *    connection) is in and the states the call needs;
 *  - completions waiting on a PE nobody progresses (or while the program
 *    progresses another PE), and submitted tasks waiting on a PE that is
 *    neither progressed nor armed: one WARNING per PE each. Run with
 *    SOFTDOCA_PE_STALL_MS=200 (meson.build); run with a malformed value
 *    (EXPLAIN_BAD_STALL_ENV=1) it checks the strict parser's line;
 *  - the two sides disagree (transport type, GID type) or the descriptor
 *    is stale (a context that stopped, a process that exited):
 *    doca_rdma_connect fails at once, or the connection soon, with the line
 *    (the exited process case runs alone: EXPLAIN_EXITED_PEER=1); a
 *    connection still waiting a period after doca_rdma_connect blames the
 *    peer, or this side when its PE was not progressed meanwhile;
 *  - a one-sided task that fails with DOCA_ERROR_NOT_PERMITTED (or
 *    INVALID_VALUE for a range): which of the four permission sets lacks
 *    which flag, or the range and the remote mmap's bounds, as the side
 *    that checked saw them; the target's reasons once per connection and
 *    reason. Descriptors are edited by hand (mmap.h documents the
 *    format) to make a target see what this side's checks let through.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_buf_pool.h>
#include <doca_dma.h>
#include <doca_graph.h>
#include <doca_sync_event.h>
#include <doca_ctx.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

#include "rdma_pair.h"

static char mem[16384];
static char far_mem[8192] __attribute__((aligned(64))); /* the refusal cases' peer memory */
static struct doca_mmap *mmap_rw, *remote_rw;
static int ok_calls, err_calls, done_calls;
static doca_error_t last_status; /* of the last task completed */

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	if (ok)
		ok_calls++;
	else
		err_calls++;
	last_status = doca_task_get_status(task);
	done_calls++;
	doca_task_free(task);
}

static int group_setup(void **state)
{
	(void)state;
	if (rdma_pair_setup() != 0)
		return -1;
	mmap_rw = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);
	remote_rw = remote_of(mmap_rw);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	assert_ok(doca_mmap_stop(remote_rw));
	assert_ok(doca_mmap_destroy(remote_rw));
	assert_ok(doca_mmap_stop(mmap_rw));
	assert_ok(doca_mmap_destroy(mmap_rw));
	rdma_pair_teardown();
	return 0;
}

/* A and B on the fixture's PE, started and connected; A's send queue
 * holds send_queue_size entries. */
static void pair_up(uint32_t send_queue_size)
{
	ok_calls = err_calls = 0;
	side_create(&A);
	side_create(&B);
	assert_ok(doca_rdma_set_send_queue_size(A.rdma, send_queue_size));
	assert_ok(doca_rdma_set_permissions(A.rdma, ALL_RDMA_PERMS));
	assert_ok(doca_rdma_set_permissions(B.rdma, ALL_RDMA_PERMS));
	side_conf_tasks(&A, 8, false);
	side_conf_tasks(&B, 8, false);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	pair_connect();
}

static int teardown_sides(void **state)
{
	(void)state;
	side_destroy(&A);
	side_destroy(&B);
	return 0;
}

static void assert_error_says(const char *needle)
{
	if (strstr(last_error, needle) == NULL)
		fail_msg("expected \"%s\" in the last ERROR line: %s", needle, last_error);
}

static void assert_warning_says(const char *needle)
{
	char line[2048];

	last_warning_copy(line, sizeof(line));
	if (strstr(line, needle) == NULL)
		fail_msg("expected \"%s\" in the last WARN line: %s", needle, line);
}

/* ---- (a) DOCA_ERROR_FULL ------------------------------------------------ */

static struct doca_task *new_send(struct doca_buf *src)
{
	struct doca_rdma_task_send *send;
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &send));
	return doca_rdma_task_send_as_task(send);
}

/* B posts no receive: A's first send waits for one (RNR retries for ever
 * by default) and keeps the only send queue entry; the next submits find
 * the queue full. Explained once, with the queue's size and what is in
 * flight; the refused task stays with the caller. */
static void test_full_send_queue_explained_once(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_task *first = new_send(src), *second = new_send(src), *third = new_send(src);
	int warnings;

	(void)state;
	assert_ok(doca_task_submit(first));
	warnings = warning_lines;
	assert_int_equal(doca_task_submit(second), DOCA_ERROR_FULL);
	assert_int_equal(warning_lines, warnings + 1);
	assert_warning_says("rdma send on connection");
	assert_warning_says("DOCA_ERROR_FULL: the connection's send queue (size 1) is full; 1 task(s) of this rdma "
			    "context in flight");
	assert_warning_says("raise doca_rdma_set_send_queue_size (up to 8192) before doca_ctx_start");
	/* Once per context: the retry is refused the same way, silently. */
	assert_int_equal(doca_task_submit(third), DOCA_ERROR_FULL);
	assert_int_equal(doca_task_submit(second), DOCA_ERROR_FULL);
	assert_int_equal(warning_lines, warnings + 1);
	doca_task_free(second);
	doca_task_free(third);
	put(src);
	/* teardown stops A: the waiting send completes with an error */
}

/* The task pool (8 tasks per type here) runs dry: DOCA's answer is
 * DOCA_ERROR_NO_MEMORY; explained once per task type. */
static void test_empty_pool_explained_once(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_rdma_task_send *send[8], *extra;
	union doca_data ud = {.u64 = 0};
	int warnings;

	(void)state;
	pair_up(256);
	for (int i = 0; i < 8; i++)
		assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &send[i]));
	warnings = warning_lines;
	assert_int_equal(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &extra), DOCA_ERROR_NO_MEMORY);
	assert_int_equal(warning_lines, warnings + 1);
	assert_warning_says("rdma send alloc: DOCA_ERROR_NO_MEMORY: all 8 tasks of its pool are allocated; 0 task(s) "
			    "of this rdma context in flight");
	assert_warning_says("raise num_tasks in this task type's set_conf before doca_ctx_start");
	assert_int_equal(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &extra), DOCA_ERROR_NO_MEMORY);
	assert_int_equal(warning_lines, warnings + 1);
	for (int i = 0; i < 8; i++)
		doca_task_free(doca_rdma_task_send_as_task(send[i]));
	put(src);
}

/* ---- (b) DOCA_ERROR_BAD_STATE ------------------------------------------- */

static void test_bad_state_names_both_states(void **state)
{
	struct doca_rdma_task_receive *recv;
	struct doca_buf *dst = buf_on(mmap_rw, mem + 4096, 64, 0);
	union doca_data ud = {.u64 = 0};
	const void *desc;
	size_t len;
	struct doca_rdma_connection *conn;

	(void)state;
	side_create(&A);
	side_create(&B);
	side_conf_tasks(&A, 4, false);
	side_conf_tasks(&B, 4, false);
	/* Idle: calls that need it running. */
	assert_fails(doca_rdma_export(A.rdma, &desc, &len, &conn), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_rdma_export: DOCA_ERROR_BAD_STATE: the rdma context is idle; this call needs it "
			  "running (call it after doca_ctx_start");
	assert_fails(doca_rdma_task_receive_allocate_init(A.rdma, dst, ud, &recv), DOCA_ERROR_BAD_STATE);
	assert_error_says("rdma receive alloc: DOCA_ERROR_BAD_STATE: the rdma context is idle; this call needs it "
			  "running "
			  "(allocate tasks after doca_ctx_start");

	/* Running: calls that need it idle. */
	assert_ok(doca_ctx_start(A.ctx));
	assert_fails(doca_rdma_set_send_queue_size(A.rdma, 64), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_rdma_set_send_queue_size: DOCA_ERROR_BAD_STATE: the rdma context is running; this "
			  "call needs it idle (configure it before doca_ctx_start or after it stopped)");
	assert_fails(doca_rdma_task_write_set_conf(A.rdma, on_ok_write, on_err_write, 4), DOCA_ERROR_BAD_STATE);
	assert_error_says("rdma write set_conf: DOCA_ERROR_BAD_STATE: the rdma context is running; this call needs it "
			  "idle");
	/* Connection callbacks set after start (then none would ever fire). */
	assert_fails(doca_rdma_set_connection_state_callbacks(A.rdma, NULL, on_established, on_failure, on_disconnect),
		     DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_rdma_set_connection_state_callbacks: DOCA_ERROR_BAD_STATE: the rdma context is "
			  "running; this call needs it idle (configure it before doca_ctx_start or after it stopped)");
	assert_fails(doca_ctx_start(A.ctx), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_ctx_start: DOCA_ERROR_BAD_STATE: the rdma context is running; this call needs it "
			  "idle");
	assert_fails(doca_rdma_destroy(A.rdma), DOCA_ERROR_BAD_STATE);
	assert_error_says("the rdma context is running; this call needs it idle (stop it");

	/* A connection: connect twice. */
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	assert_fails(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_rdma_connect: DOCA_ERROR_BAD_STATE: connection");
	assert_error_says("is connecting; this call needs it exported");
	put(dst);
}

/* The other objects with a lifecycle: the same kind of line, from one
 * helper, naming the object, its state, the state the call needs and
 * what to do. */
static void test_bad_state_mmap(void **state)
{
	static char region[4096];
	struct doca_mmap *m = local_mmap(region, sizeof(region), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	struct doca_mmap *fresh;
	void *addr;
	size_t len;

	(void)state;
	assert_fails(doca_mmap_set_permissions(m, DOCA_ACCESS_FLAG_RDMA_READ), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_mmap_set_permissions: DOCA_ERROR_BAD_STATE: the mmap is started; this call needs it "
			  "not started (set its properties before doca_mmap_start, or stop it first)");
	assert_fails(doca_mmap_start(m), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_mmap_start: DOCA_ERROR_BAD_STATE: the mmap is started; this call needs it not "
			  "started (it was started already; start it once)");
	assert_ok(doca_mmap_stop(m));
	assert_fails(doca_mmap_stop(m), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_mmap_stop: DOCA_ERROR_BAD_STATE: the mmap is stopped; this call needs it started");
	assert_ok(doca_mmap_destroy(m));
	assert_ok(doca_mmap_create(&fresh));
	assert_fails(doca_mmap_get_memrange(fresh, &addr, &len), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_mmap_get_memrange: DOCA_ERROR_BAD_STATE: the mmap is without a memory range; this "
			  "call needs it given one (call doca_mmap_set_memrange first)");
	assert_ok(doca_mmap_destroy(fresh));
}

static void test_bad_state_buf_inventory(void **state)
{
	static char region[4096];
	struct doca_mmap *m = local_mmap(region, sizeof(region), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	struct doca_buf_inventory *inv2;
	struct doca_buf *b;

	(void)state;
	assert_ok(doca_buf_inventory_create(4, &inv2));
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv2, m, region, 64, &b), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_buf_inventory_buf_get_by_*: DOCA_ERROR_BAD_STATE: the buf inventory is not started; "
			  "this call needs it started (call doca_buf_inventory_start before taking bufs)");
	assert_fails(doca_buf_inventory_stop(inv2), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_buf_inventory_stop: DOCA_ERROR_BAD_STATE: the buf inventory is not started; this "
			  "call needs it started");
	assert_ok(doca_buf_inventory_start(inv2));
	assert_fails(doca_buf_inventory_start(inv2), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_buf_inventory_start: DOCA_ERROR_BAD_STATE: the buf inventory is started; this call "
			  "needs it not started (it was started already; start it once)");
	assert_ok(doca_buf_inventory_stop(inv2));
	assert_ok(doca_buf_inventory_destroy(inv2));
	assert_ok(doca_mmap_stop(m));
	assert_ok(doca_mmap_destroy(m));
}

static void test_bad_state_buf_pool(void **state)
{
	static char region[4096];
	struct doca_mmap *m = local_mmap(region, sizeof(region), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	struct doca_buf_pool *pool;
	struct doca_buf *b;

	(void)state;
	assert_ok(doca_buf_pool_create(4, 64, m, &pool));
	assert_fails(doca_buf_pool_buf_alloc(pool, &b), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_buf_pool_buf_alloc: DOCA_ERROR_BAD_STATE: the buf pool is not started; this call "
			  "needs it started (call doca_buf_pool_start before allocating bufs)");
	assert_ok(doca_buf_pool_start(pool));
	assert_fails(doca_buf_pool_set_element_alignment(pool, 64), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_buf_pool_set_element_alignment: DOCA_ERROR_BAD_STATE: the buf pool is started; this "
			  "call needs it not started (set its properties before doca_buf_pool_start)");
	assert_ok(doca_buf_pool_stop(pool));
	assert_ok(doca_buf_pool_destroy(pool));
	assert_ok(doca_mmap_stop(m));
	assert_ok(doca_mmap_destroy(m));
}

static void test_bad_state_sync_event(void **state)
{
	struct doca_sync_event *ev;
	uint64_t value;

	(void)state;
	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_add_publisher_location_cpu(ev, dev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_fails(doca_sync_event_get(ev, &value), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_sync_event_get: DOCA_ERROR_BAD_STATE: the sync event is not started; this call "
			  "needs it started (call doca_sync_event_start (or doca_ctx_start) first)");
	assert_fails(doca_sync_event_stop(ev), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_sync_event_stop: DOCA_ERROR_BAD_STATE: the sync event is not started; this call "
			  "needs it started");
	assert_ok(doca_sync_event_start(ev));
	assert_fails(doca_sync_event_add_publisher_location_cpu(ev, dev), DOCA_ERROR_BAD_STATE);
	assert_error_says("DOCA_ERROR_BAD_STATE: the sync event is started; this call needs it not started "
			  "(configure it before doca_sync_event_start, or stop it first)");
	assert_ok(doca_sync_event_stop(ev));
	assert_ok(doca_sync_event_destroy(ev));
}

static void on_memcpy(struct doca_dma_task_memcpy *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

/* A dma context gets the context lines; a PE with a context connected
 * cannot be destroyed (DOCA: IN_USE), said the same way. */
static void test_bad_state_dma_and_pe(void **state)
{
	struct doca_pe *own_pe;
	struct doca_dma *dma;
	struct doca_ctx *ctx;

	(void)state;
	assert_ok(doca_pe_create(&own_pe));
	assert_ok(doca_dma_create(dev, &dma));
	ctx = doca_dma_as_ctx(dma);
	assert_ok(doca_dma_task_memcpy_set_conf(dma, on_memcpy, on_memcpy, 4));
	assert_ok(doca_pe_connect_ctx(own_pe, ctx));
	assert_fails(doca_pe_destroy(own_pe), DOCA_ERROR_IN_USE);
	assert_error_says("doca_pe_destroy: DOCA_ERROR_IN_USE: the pe is connected to contexts; this call needs it "
			  "without any (destroy every context connected to it (doca_pe_connect_ctx) first)");
	assert_ok(doca_ctx_start(ctx));
	assert_fails(doca_dma_task_memcpy_set_conf(dma, on_memcpy, on_memcpy, 8), DOCA_ERROR_BAD_STATE);
	assert_error_says("dma memcpy set_conf: DOCA_ERROR_BAD_STATE: the dma context is running; this call needs it "
			  "idle (configure it before doca_ctx_start or after it stopped)");
	assert_fails(doca_dma_destroy(dma), DOCA_ERROR_BAD_STATE);
	assert_error_says("context destroy: DOCA_ERROR_BAD_STATE: the dma context is running; this call needs it idle "
			  "(stop it and progress its PE until it is idle before destroying it)");
	assert_ok(doca_ctx_stop(ctx));
	assert_ok(doca_dma_destroy(dma));
	assert_ok(doca_pe_destroy(own_pe));
}

/* A task submitted twice. */
static void test_bad_state_task(void **state)
{
	struct doca_rdma_task_receive *recv;
	struct doca_buf *dst = buf_on(mmap_rw, mem + 8192, 64, 0);

	(void)state;
	pair_up(16);
	recv = post_receive(&B, dst);
	assert_fails(doca_task_submit(doca_rdma_task_receive_as_task(recv)), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_task_submit: DOCA_ERROR_BAD_STATE: the task is in flight; this call needs it "
			  "allocated and not in flight (submit a task once; submit it again only after its "
			  "completion callback ran)");
	side_destroy(&B); /* the receive completes with an error, freeing it */
	put(dst);
}

/* Bufs still in an mmap: DOCA's NOT_PERMITTED, said the same way; and
 * an export before start. */
static void test_lifecycle_mmap_bufs(void **state)
{
	static char region[4096];
	struct doca_mmap *m = local_mmap(region, sizeof(region), ALL_RDMA_PERMS);
	struct doca_mmap *idle;
	struct doca_buf *b = buf_on(m, region, 64, 0);
	const void *desc;
	size_t len;

	(void)state;
	assert_fails(doca_mmap_stop(m), DOCA_ERROR_NOT_PERMITTED);
	assert_error_says("doca_mmap_stop: DOCA_ERROR_NOT_PERMITTED: the mmap is started with 1 doca_buf(s) pointing "
			  "into it; this call needs it without bufs (release them (doca_buf_dec_refcount) first)");
	assert_fails(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	assert_error_says("doca_mmap_destroy: DOCA_ERROR_NOT_PERMITTED: the mmap is started with 1 doca_buf(s)");
	put(b);
	assert_ok(doca_mmap_stop(m));
	assert_ok(doca_mmap_destroy(m));
	assert_ok(doca_mmap_create(&idle));
	assert_ok(doca_mmap_set_memrange(idle, region, sizeof(region)));
	assert_ok(doca_mmap_add_dev(idle, dev));
	assert_fails(doca_mmap_export_rdma(idle, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	assert_error_says("doca_mmap_export_rdma: DOCA_ERROR_NOT_PERMITTED: the mmap is not started; this call needs "
			  "it started (export it after doca_mmap_start)");
	assert_ok(doca_mmap_destroy(idle));
}

static void test_bad_state_graph(void **state)
{
	struct doca_graph *graph;
	struct doca_graph_instance *inst;

	(void)state;
	assert_ok(doca_graph_create(pe, &graph));
	assert_fails(doca_graph_instance_create(graph, &inst), DOCA_ERROR_BAD_STATE);
	assert_error_says("doca_graph_instance_create: DOCA_ERROR_BAD_STATE: the graph is not started; this call "
			  "needs it started (doca_graph_start it first)");
	assert_ok(doca_graph_destroy(graph));
}

/* ---- (c) a PE nobody progresses ------------------------------------------- */

/* A writes into B's memory; the service threads complete it, and the
 * completion waits in the PE's queue. */
static struct doca_task *write_one(struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_rdma_task_write *wr;
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src, dst, ud, &wr));
	assert_ok(doca_task_submit(doca_rdma_task_write_as_task(wr)));
	return doca_rdma_task_write_as_task(wr);
}

/* Wait (bounded) for a WARN line about the stalled PE, progressing only
 * other (may be NULL) meanwhile. */
static bool wait_stall_warning(int before, struct doca_pe *other)
{
	uint64_t deadline = now_ms() + 10000;

	while (warning_lines == before) {
		if (now_ms() > deadline)
			return false;
		if (other != NULL)
			(void)doca_pe_progress(other);
		(void)poll(NULL, 0, 5);
	}
	return true;
}

static void stall_case(bool progress_another)
{
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_buf *dst = buf_on(remote_rw, mem + 4096, 64, 0);
	struct doca_pe *fixture_pe = pe, *mine, *other = NULL;
	char needle[128];
	int before;

	/* A fresh PE for the pair: the warning comes once per PE. */
	assert_ok(doca_pe_create(&mine));
	pe = mine;
	pair_up(16);
	if (progress_another)
		other = fixture_pe;
	before = warning_lines;
	(void)write_one(src, dst);
	assert_true(wait_stall_warning(before, other));
	snprintf(needle, sizeof(needle), "pe %p: 1 task completion(s) waited 200 ms undelivered", (void *)mine);
	assert_warning_says(needle);
	if (progress_another) {
		snprintf(needle, sizeof(needle), "not called on this PE, but it is on pe %p", (void *)other);
		assert_warning_says(needle);
		assert_warning_says("connect the context to the PE the program progresses (doca_pe_connect_ctx)");
	} else {
		assert_warning_says("doca_pe_progress is not called on this PE; call it in the program's loop");
	}
	/* The task itself is fine: progressing delivers its success. */
	assert_true(progress_until(&ok_calls, 1));
	assert_int_equal(err_calls, 0);
	/* Once per PE: a second stall says nothing more. */
	before = warning_lines;
	(void)write_one(src, dst);
	for (uint64_t until = now_ms() + 600; now_ms() < until;)
		(void)poll(NULL, 0, 20);
	assert_int_equal(warning_lines, before);
	assert_true(progress_until(&ok_calls, 2));
	side_destroy(&A);
	side_destroy(&B);
	pe = fixture_pe;
	assert_ok(doca_pe_destroy(mine));
	put(src);
	put(dst);
}

static void test_pe_not_progressed(void **state)
{
	(void)state;
	stall_case(false);
}

static void test_pe_other_one_progressed(void **state)
{
	(void)state;
	stall_case(true);
}

/* Submitted tasks (a receive nobody sends to) on a fresh PE nobody
 * progresses: no completion ever arrives, and the line says why, once
 * per PE. With progress_another, the program progresses the fixture's PE
 * meanwhile and the line names it. */
static void submitted_stall_case(bool progress_another)
{
	struct doca_buf *dst = buf_on(mmap_rw, mem + 8192, 64, 0);
	struct doca_pe *fixture_pe = pe, *mine, *other = NULL;
	char needle[160];
	int before;

	assert_ok(doca_pe_create(&mine));
	pe = mine;
	pair_up(16);
	if (progress_another)
		other = fixture_pe;
	before = warning_lines;
	(void)post_receive(&B, dst);
	assert_true(wait_stall_warning(before, other));
	snprintf(needle, sizeof(needle),
		 "pe %p: 1 submitted task(s) waited 200 ms for completion while doca_pe_progress was not called on "
		 "this PE",
		 (void *)mine);
	assert_warning_says(needle);
	if (progress_another) {
		snprintf(needle, sizeof(needle), "but it was on pe %p", (void *)other);
		assert_warning_says(needle);
		assert_warning_says("connect the context to the PE the program progresses (doca_pe_connect_ctx)");
	} else {
		assert_warning_says("a task moves and completes only inside doca_pe_progress; call it in the program's "
				    "loop after doca_task_submit");
	}
	assert_warning_says("(said once per PE; SOFTDOCA_PE_STALL_MS=200)");
	/* Once per PE: three more periods without progress say nothing more. */
	before = warning_lines;
	for (uint64_t until = now_ms() + 600; now_ms() < until;)
		(void)poll(NULL, 0, 20);
	assert_int_equal(warning_lines, before);
	/* The receive is flushed at stop (its error completion frees it). */
	side_destroy(&A);
	side_destroy(&B);
	pe = fixture_pe;
	assert_ok(doca_pe_destroy(mine));
	put(dst);
}

static void test_submitted_not_progressed(void **state)
{
	(void)state;
	submitted_stall_case(false);
}

static void test_submitted_other_one_progressed(void **state)
{
	(void)state;
	submitted_stall_case(true);
}

/* A program asleep on the PE's notification handle waits rightly: armed
 * with a receive posted, three periods pass without a line. */
static void test_submitted_armed_is_quiet(void **state)
{
	struct doca_buf *dst = buf_on(mmap_rw, mem + 8192, 64, 0);
	struct doca_pe *fixture_pe = pe, *mine;
	int before;

	(void)state;
	assert_ok(doca_pe_create(&mine));
	pe = mine;
	pair_up(16);
	before = warning_lines;
	(void)post_receive(&B, dst);
	assert_ok(doca_pe_request_notification(mine));
	for (uint64_t until = now_ms() + 600; now_ms() < until;)
		(void)poll(NULL, 0, 20);
	assert_int_equal(warning_lines, before);
	side_destroy(&A);
	side_destroy(&B);
	pe = fixture_pe;
	assert_ok(doca_pe_destroy(mine));
	put(dst);
}

/* ---- (d) a connection the peer never completes ---------------------------- */

/* A and B created (not started), task pools and callbacks configured. */
static void two_sides(void)
{
	ok_calls = err_calls = 0;
	side_create(&A);
	side_create(&B);
	side_conf_tasks(&A, 4, false);
	side_conf_tasks(&B, 4, false);
}

static void start_and_export(void)
{
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
}

/* A connects with B's descriptor; B never connects with A's. */
static void test_connect_never_answered(void **state)
{
	uint64_t deadline;
	char needle[96];
	uint32_t id;
	int before;

	(void)state;
	two_sides();
	start_and_export();
	before = warning_lines;
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	deadline = now_ms() + 10000;
	while (warning_lines == before) {
		assert_true(now_ms() < deadline);
		(void)doca_pe_progress(pe);
		(void)poll(NULL, 0, 1);
	}
	assert_false(conn_is_up(A.conn));
	assert_int_equal(A.established, 0);
	assert_int_equal(A.failed, 0);
	assert_ok(doca_rdma_connection_get_id(A.conn, &id));
	snprintf(needle, sizeof(needle), "rdma connection %u: doca_rdma_connect was called", id);
	assert_warning_says(needle);
	assert_warning_says("ms ago and the connection is still not established. Likely: the peer has not called "
			    "doca_rdma_connect with this side's descriptor");
	/* Once per connection. */
	before = warning_lines;
	for (uint64_t until = now_ms() + 500; now_ms() < until;)
		(void)doca_pe_progress(pe);
	assert_int_equal(warning_lines, before);
}

/* A connects with B's descriptor and then does not progress its PE for
 * longer than the period (NVIDIA's rdma_multi_conn_send blocks in getchar
 * there): the first progress says the wait is this side's, not the
 * peer's. B never connects, so a period of progress later the peer's
 * line comes too, each once. */
static void test_connect_this_side_idle(void **state)
{
	char needle[128];
	uint64_t t0, deadline;
	uint32_t id;
	int before;

	(void)state;
	two_sides();
	start_and_export();
	assert_ok(doca_rdma_connection_get_id(A.conn, &id));
	before = warning_lines;
	t0 = now_ms();
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	/* No progress for 1.5 periods (a clock condition, not a hope). */
	while (now_ms() - t0 < 300)
		(void)poll(NULL, 0, 10);
	(void)doca_pe_progress(pe);
	assert_int_equal(warning_lines, before + 1);
	snprintf(needle, sizeof(needle), "rdma connection %u: doca_rdma_connect was called", id);
	assert_warning_says(needle);
	assert_warning_says("ms ago and the connection is not established yet, but this side's PE was not progressed "
			    "for the last");
	assert_warning_says("a connection is made inside doca_pe_progress on both sides, so this side kept it "
			    "waiting; progress the PE right after doca_rdma_connect");
	/* Progressing now: the peer gets its own period, then is named. */
	deadline = now_ms() + 10000;
	while (warning_lines == before + 1) {
		assert_true(now_ms() < deadline);
		(void)doca_pe_progress(pe);
		(void)poll(NULL, 0, 1);
	}
	assert_int_equal(warning_lines, before + 2);
	assert_true(now_ms() - t0 >= 500);
	assert_warning_says(needle);
	assert_warning_says("ms ago and the connection is still not established. Likely: the peer has not called "
			    "doca_rdma_connect with this side's descriptor");
	assert_false(conn_is_up(A.conn));
	assert_int_equal(A.established, 0);
	/* Each once per connection. */
	for (uint64_t until = now_ms() + 500; now_ms() < until;)
		(void)doca_pe_progress(pe);
	assert_int_equal(warning_lines, before + 2);
}

/* A connects four connections and only then progresses (dpa-bench's
 * qp_post connects 128 before its first progress): one line for the
 * four, naming the first and the count, and none per connection. */
static void test_connect_this_side_idle_many(void **state)
{
	struct doca_rdma_connection *ac[4], *bc[4];
	const void *ad, *bd[4];
	size_t al, bl[4];
	char needle[128];
	uint64_t t0;
	uint32_t id;
	int before;

	(void)state;
	two_sides();
	assert_ok(doca_rdma_set_max_num_connections(A.rdma, 4));
	assert_ok(doca_rdma_set_max_num_connections(B.rdma, 4));
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	for (int i = 0; i < 4; i++) {
		assert_ok(doca_rdma_export(A.rdma, &ad, &al, &ac[i]));
		assert_ok(doca_rdma_export(B.rdma, &bd[i], &bl[i], &bc[i]));
	}
	assert_ok(doca_rdma_connection_get_id(ac[0], &id));
	before = warning_lines;
	t0 = now_ms();
	for (int i = 0; i < 4; i++)
		assert_ok(doca_rdma_connect(A.rdma, bd[i], bl[i], ac[i]));
	/* No progress for 1.5 periods (a clock condition, not a hope). */
	while (now_ms() - t0 < 300)
		(void)poll(NULL, 0, 10);
	(void)doca_pe_progress(pe);
	assert_int_equal(warning_lines, before + 1);
	snprintf(needle, sizeof(needle), "rdma connection %u and 3 more: doca_rdma_connect was called", id);
	assert_warning_says(needle);
	assert_warning_says("but this side's PE was not progressed for the last");
	/* The four are said: progressing now adds no other idle line. */
	for (uint64_t until = now_ms() + 50; now_ms() < until;)
		(void)doca_pe_progress(pe);
	assert_int_equal(warning_lines, before + 1);
}

/* ---- (e) the two sides disagree ------------------------------------------ */

static void assert_connect_refused_says(const void *desc, size_t len, doca_error_t want, const char *needle)
{
	char prefix[64];
	uint32_t id;

	assert_fails(doca_rdma_connect(A.rdma, desc, len, A.conn), want);
	assert_ok(doca_rdma_connection_get_id(A.conn, &id));
	snprintf(prefix, sizeof(prefix), "rdma connection %u: %s: ", id, doca_error_get_name(want));
	assert_error_says(prefix);
	assert_error_says(needle);
}

/* A is RC (the default), B is DC. */
static void test_disagree_transport(void **state)
{
	(void)state;
	two_sides();
	assert_ok(doca_rdma_set_transport_type(B.rdma, DOCA_RDMA_TRANSPORT_TYPE_DC));
	start_and_export();
	assert_connect_refused_says(B.desc, B.desc_len, DOCA_ERROR_DRIVER,
				    "the two sides disagree on the transport type: this context uses RC, the peer's "
				    "descriptor is from a DC context; call doca_rdma_set_transport_type with the same "
				    "type on both sides before doca_ctx_start");
}

static bool gid_is_ipv4(const struct doca_rdma_gid *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

/* A on an IPv4 GID, B on an IPv6 one (the loopback device has 127.0.0.1
 * and ::1 where the host has IPv6). */
static void test_disagree_gid_type(void **state)
{
	struct doca_rdma_gid gids[16];
	uint32_t n = 0, v4 = UINT32_MAX, v6 = UINT32_MAX;
	char needle[160];

	(void)state;
	assert_ok(doca_rdma_cap_get_gid_table_size(doca_dev_as_devinfo(dev), &n));
	if (n > 16)
		n = 16;
	if (n > 0)
		assert_ok(doca_rdma_cap_get_gid(doca_dev_as_devinfo(dev), 0, n, gids));
	for (uint32_t i = 0; i < n; i++) {
		if (gid_is_ipv4(&gids[i]) && v4 == UINT32_MAX)
			v4 = i;
		if (!gid_is_ipv4(&gids[i]) && v6 == UINT32_MAX)
			v6 = i;
	}
	if (v4 == UINT32_MAX || v6 == UINT32_MAX) {
		printf("# skipped: the device has no GIDs of both types (%u GIDs)\n", n);
		skip();
	}
	two_sides();
	assert_ok(doca_rdma_set_gid_index(A.rdma, v4));
	assert_ok(doca_rdma_set_gid_index(B.rdma, v6));
	start_and_export();
	snprintf(needle, sizeof(needle),
		 "the two sides disagree on the GID type: this side's GID index %u is an IPv4 (::ffff:a.b.c.d) GID, "
		 "the peer's GID index %u is an IPv6 GID",
		 v4, v6);
	assert_connect_refused_says(B.desc, B.desc_len, DOCA_ERROR_INVALID_VALUE, needle);
	assert_error_says("give doca_rdma_set_gid_index GIDs of the same type on both sides");
}

/* B's descriptor of its first run, given to A after B restarted. */
static void test_stale_descriptor_of_stopped_context(void **state)
{
	uint8_t old[1024];
	size_t len;

	(void)state;
	two_sides();
	start_and_export();
	len = B.desc_len;
	assert_true(len <= sizeof(old));
	memcpy(old, B.desc, len);
	side_stop(&B);
	assert_ok(doca_ctx_start(B.ctx));
	assert_connect_refused_says(old, len, DOCA_ERROR_INVALID_VALUE,
				    "the peer's descriptor is from an rdma context of this process that has stopped "
				    "since it exported it");
	assert_error_says("export again from the running context and pass the new descriptor");
}

/* The pid of a child that has exited (and been reaped). */
static uint32_t exited_pid(void)
{
	pid_t child = fork();
	int status;

	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, &status, 0), child);
	return (uint32_t)child;
}

/* A descriptor of a process that exited: B's, after B stopped (nothing
 * answers at its address), saying the pid of an exited child. The
 * claim alone decides nothing (tests/rdma forged_pid_*); the peer not
 * answering fails the connection, and the line says why. */
static void test_stale_descriptor_of_exited_process(void **state)
{
	uint8_t old[1024];
	uint32_t pid = exited_pid(), id;
	char needle[192];
	uint64_t deadline;
	doca_error_t err;
	size_t len;
	int before;

	(void)state;
	two_sides();
	start_and_export();
	len = B.desc_len;
	assert_true(len <= sizeof(old));
	memcpy(old, B.desc, len);
	side_destroy(&B);
	/* Offsets of src/engine/wire.c: pid at 32 (and the start time at 64:
	 * 0 = not said, as the exited child's cannot be read). */
	memcpy(old + 32, &pid, sizeof(pid));
	memset(old + 64, 0, 8);
	assert_ok(doca_rdma_connection_get_id(A.conn, &id));
	snprintf(needle, sizeof(needle), "rdma connection %u: DOCA_ERROR_CONNECTION_ABORTED: the peer's descriptor is "
		 "from process %u on this host, which has exited", id, pid);
	before = error_lines;
	err = doca_rdma_connect(A.rdma, old, len, A.conn);
	if (err == DOCA_SUCCESS) {
		/* UCX found out later: the connection fails. */
		deadline = now_ms() + 20000;
		while (A.failed == 0) {
			assert_true(now_ms() < deadline);
			(void)doca_pe_progress(pe);
			(void)poll(NULL, 0, 1);
		}
	} else {
		assert_int_equal(err, DOCA_ERROR_CONNECTION_ABORTED);
	}
	assert_true(error_lines > before);
	assert_error_says(needle);
	assert_error_says("have the peer export again and pass its new descriptor");
	assert_false(conn_is_up(A.conn));
	assert_int_equal(A.established, 0);
}

/* SOFTDOCA_PE_STALL_MS="12x": refused with a line naming it, at the
 * first doca_pe_create (the fixture's). */
static void test_bad_stall_env(void **state)
{
	(void)state;
	assert_error_says("SOFTDOCA_PE_STALL_MS=\"12x\" is not a whole number of milliseconds in [0, 3600000]");
	assert_error_says("using 3000");
}

/* ---- (e) a one-sided task refused: DOCA_ERROR_NOT_PERMITTED ------------- */

/* The last ERROR line ends with msg: the whole message after the log
 * prefix, not just a part of it. */
static void assert_error_line_is(const char *msg)
{
	const char *at = strstr(last_error, msg);

	if (at == NULL || (strcmp(at + strlen(msg), "\n") != 0 && at[strlen(msg)] != '\0'))
		fail_msg("expected the last ERROR line to be \"%s\": %s", msg, last_error);
}

/* A and B connected; B's context grants b_perms to its peers. */
static void pair_with_peer_perms(uint32_t b_perms)
{
	ok_calls = err_calls = done_calls = 0;
	side_create(&A);
	side_create(&B);
	assert_ok(doca_rdma_set_permissions(B.rdma, b_perms));
	side_conf_tasks(&A, 8, false);
	side_conf_tasks(&B, 8, false);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	pair_connect();
}

static uint32_t a_conn_id(void)
{
	uint32_t id;

	assert_ok(doca_rdma_connection_get_id(A.conn, &id));
	return id;
}

/* B's memory as A imports it, its export edited first: permissions
 * (descriptor offset 12) and length (offset 48) as given, 0 to keep. */
static struct doca_mmap *import_edited(struct doca_mmap *local, uint32_t perms, uint64_t len)
{
	uint8_t bytes[128];
	struct doca_mmap *m;
	const void *desc;
	size_t desc_len;

	assert_ok(doca_mmap_export_rdma(local, dev, &desc, &desc_len));
	assert_true(desc_len <= sizeof(bytes) && desc_len >= 56);
	memcpy(bytes, desc, desc_len);
	if (perms != 0)
		memcpy(bytes + 12, &perms, sizeof(perms)); /* little-endian host, as the format */
	if (len != 0)
		memcpy(bytes + 48, &len, sizeof(len));
	assert_ok(doca_mmap_create_from_export(NULL, bytes, desc_len, dev, &m));
	return m;
}

static void mmap_gone(struct doca_mmap *m)
{
	assert_ok(doca_mmap_stop(m));
	assert_ok(doca_mmap_destroy(m));
}

/* Submit (doca_task_submit: no validation up front) and wait for it. */
static doca_error_t run_task(struct doca_task *task)
{
	int before = done_calls;

	assert_ok(doca_task_submit(task));
	assert_true(progress_until(&done_calls, before + 1));
	return last_status;
}

static struct doca_task *new_write(struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_rdma_task_write *wr;
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src, dst, ud, &wr));
	return doca_rdma_task_write_as_task(wr);
}

static struct doca_task *new_read(struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_rdma_task_read *rd;
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_task_read_allocate_init(A.rdma, A.conn, src, dst, ud, &rd));
	return doca_rdma_task_read_as_task(rd);
}

/* A peer mmap that grants reads only. */
#define READ_ONLY_REMOTE (DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ)

/* The local mmap: a read's destination must be locally writable. */
static void test_refused_local_mmap(void **state)
{
	struct doca_mmap *ro = local_mmap(far_mem, 4096, DOCA_ACCESS_FLAG_RDMA_READ);
	struct doca_buf *src = buf_on(remote_rw, mem + 4096, 64, 16);
	struct doca_buf *dst = buf_on(ro, far_mem, 64, 0);

	(void)state;
	pair_with_peer_perms(ALL_RDMA_PERMS);
	assert_int_equal(run_task(new_read(src, dst)), DOCA_ERROR_NOT_PERMITTED);
	assert_error_line_is("rdma read: destination buffer 0: DOCA_ERROR_NOT_PERMITTED: the local mmap "
			     "(doca_mmap_set_permissions) lacks DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, which a buffer the "
			     "task writes into needs. Fix: grant it with doca_mmap_set_permissions before "
			     "doca_mmap_start");
	assert_int_equal(data_len_of(dst), 0);
	put(src);
	put(dst);
	mmap_gone(ro);
}

/* The local RDMA context: its permissions say what peers may do through
 * it, not what it may do to them (DOCA's requester samples set only
 * LOCAL_READ_WRITE): a write from a context with the default
 * permissions succeeds, and nothing is logged. */
static void test_local_context_not_checked(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_buf *dst = buf_on(remote_rw, mem + 4096, 64, 0);
	uint32_t perms = 0;
	int errors;

	(void)state;
	pair_with_peer_perms(ALL_RDMA_PERMS);
	assert_ok(doca_rdma_get_permissions(A.rdma, &perms));
	assert_int_equal(perms, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	errors = error_lines;
	assert_int_equal(run_task(new_write(src, dst)), DOCA_SUCCESS);
	assert_int_equal(error_lines, errors);
	put(src);
	put(dst);
}

/* The remote RDMA context: the peer's doca_rdma_set_permissions lacks
 * what the task needs. Explained once per connection and reason: a
 * second write adds no line, a read (another flag) does. */
static void test_refused_remote_context(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_buf *dst = buf_on(remote_rw, mem + 4096, 64, 0);
	struct doca_buf *rsrc = buf_on(remote_rw, mem + 8192, 64, 16);
	struct doca_buf *rdst = buf_on(mmap_rw, mem + 12288, 64, 0);
	char msg[512];
	uint32_t id;

	(void)state;
	pair_with_peer_perms(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	id = a_conn_id();
	error_needle = "the peer refused it";
	error_needle_lines = 0;
	assert_int_equal(run_task(new_write(src, dst)), DOCA_ERROR_NOT_PERMITTED);
	snprintf(msg, sizeof(msg),
		 "rdma write on connection %u: DOCA_ERROR_NOT_PERMITTED: the peer refused it: the remote RDMA "
		 "context (doca_rdma_set_permissions on the peer) lacks DOCA_ACCESS_FLAG_RDMA_WRITE. Fix: the peer "
		 "adds DOCA_ACCESS_FLAG_RDMA_WRITE to doca_rdma_set_permissions before doca_ctx_start (said once "
		 "per connection and reason)",
		 id);
	assert_error_line_is(msg);
	assert_int_equal(error_needle_lines, 1);
	assert_int_equal(run_task(new_write(src, dst)), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(error_needle_lines, 1);
	assert_int_equal(run_task(new_read(rsrc, rdst)), DOCA_ERROR_NOT_PERMITTED);
	snprintf(msg, sizeof(msg),
		 "rdma read on connection %u: DOCA_ERROR_NOT_PERMITTED: the peer refused it: the remote RDMA "
		 "context (doca_rdma_set_permissions on the peer) lacks DOCA_ACCESS_FLAG_RDMA_READ. Fix: the peer "
		 "adds DOCA_ACCESS_FLAG_RDMA_READ to doca_rdma_set_permissions before doca_ctx_start (said once "
		 "per connection and reason)",
		 id);
	assert_error_line_is(msg);
	assert_int_equal(error_needle_lines, 2);
	error_needle = NULL;
	put(src);
	put(dst);
	put(rsrc);
	put(rdst);
}

/* The remote mmap, as its export says: refused before anything is sent. */
static void test_refused_remote_mmap_export(void **state)
{
	struct doca_mmap *peer = local_mmap(far_mem, 4096, READ_ONLY_REMOTE);
	struct doca_mmap *imported = remote_of(peer);
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_buf *dst = buf_on(imported, far_mem, 64, 0);

	(void)state;
	pair_with_peer_perms(ALL_RDMA_PERMS);
	assert_int_equal(run_task(new_write(src, dst)), DOCA_ERROR_NOT_PERMITTED);
	assert_error_line_is("rdma write: DOCA_ERROR_NOT_PERMITTED: the remote mmap (doca_mmap_set_permissions on "
			     "the peer) lacks DOCA_ACCESS_FLAG_RDMA_WRITE, as its export says. Fix: the peer grants it "
			     "with doca_mmap_set_permissions before doca_mmap_start and exports the mmap again");
	put(src);
	put(dst);
	mmap_gone(imported);
	mmap_gone(peer);
}

/* The remote mmap as the target sees it: the export this side imported
 * claims RDMA_WRITE, the peer's mmap lacks it. */
static void test_refused_remote_mmap_target(void **state)
{
	struct doca_mmap *peer = local_mmap(far_mem, 4096, READ_ONLY_REMOTE);
	struct doca_mmap *imported = import_edited(peer, ALL_RDMA_PERMS, 0);
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_buf *dst = buf_on(imported, far_mem, 64, 0);
	char msg[640];

	(void)state;
	pair_with_peer_perms(ALL_RDMA_PERMS);
	error_needle = "the peer refused it";
	error_needle_lines = 0;
	assert_int_equal(run_task(new_write(src, dst)), DOCA_ERROR_NOT_PERMITTED);
	snprintf(msg, sizeof(msg),
		 "rdma write on connection %u: DOCA_ERROR_NOT_PERMITTED: the peer refused it: the remote mmap "
		 "(doca_mmap_set_permissions on the peer) lacks DOCA_ACCESS_FLAG_RDMA_WRITE, though the export this "
		 "side imported grants it (stale, or not the peer's). Fix: the peer grants DOCA_ACCESS_FLAG_RDMA_WRITE "
		 "with doca_mmap_set_permissions before doca_mmap_start, exports the mmap again and this side "
		 "imports that export (said once per connection and reason)",
		 a_conn_id());
	assert_error_line_is(msg);
	assert_int_equal(run_task(new_write(src, dst)), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(error_needle_lines, 1);
	error_needle = NULL;
	put(src);
	put(dst);
	mmap_gone(imported);
	mmap_gone(peer);
}

/* Out of range as the target sees it: the export this side imported
 * claims 8 KiB, the peer's mmap is 4 KiB. The task fails with
 * INVALID_VALUE, as it always has for a bad range. */
static void test_refused_out_of_range(void **state)
{
	struct doca_mmap *peer = local_mmap(far_mem, 4096, ALL_RDMA_PERMS);
	struct doca_mmap *imported = import_edited(peer, 0, 8192);
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_buf *dst = buf_on(imported, far_mem + 6144, 64, 0);
	uintptr_t base = (uintptr_t)far_mem;
	char msg[512];

	(void)state;
	pair_with_peer_perms(ALL_RDMA_PERMS);
	assert_int_equal(run_task(new_write(src, dst)), DOCA_ERROR_INVALID_VALUE);
	snprintf(msg, sizeof(msg),
		 "rdma write on connection %u: DOCA_ERROR_INVALID_VALUE: the peer refused it: range [%#llx, %#llx) "
		 "is outside the remote mmap's [%#llx, %#llx) as the peer sees it. Fix: keep remote buffers inside "
		 "the range the peer exported, and import its current export (said once per connection and reason)",
		 a_conn_id(), (unsigned long long)(base + 6144), (unsigned long long)(base + 6144 + 16),
		 (unsigned long long)base, (unsigned long long)(base + 4096));
	assert_error_line_is(msg);
	put(src);
	put(dst);
	mmap_gone(imported);
	mmap_gone(peer);
}

/* The peer stopped its mmap: it has no region for the key any more. */
static void test_refused_region_gone(void **state)
{
	struct doca_mmap *peer = local_mmap(far_mem, 4096, ALL_RDMA_PERMS);
	struct doca_mmap *imported = remote_of(peer);
	struct doca_buf *src = buf_on(mmap_rw, mem, 64, 16);
	struct doca_buf *dst = buf_on(imported, far_mem, 64, 0);
	char msg[512];

	(void)state;
	pair_with_peer_perms(ALL_RDMA_PERMS);
	mmap_gone(peer);
	assert_int_equal(run_task(new_write(src, dst)), DOCA_ERROR_NOT_PERMITTED);
	snprintf(msg, sizeof(msg),
		 "rdma write on connection %u: DOCA_ERROR_NOT_PERMITTED: the peer refused it: it has no memory region "
		 "for the remote mmap (the peer stopped or destroyed that mmap, or the export this side imported is "
		 "stale or not the peer's). Fix: keep the peer's mmap started while tasks use it, and import its "
		 "current export (said once per connection and reason)",
		 a_conn_id());
	assert_error_line_is(msg);
	put(src);
	put(dst);
	mmap_gone(imported);
}

static void test_full_case(void **state)
{
	(void)state;
	pair_up(1);
	test_full_send_queue_explained_once(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_full_case, teardown_sides),
		cmocka_unit_test_teardown(test_empty_pool_explained_once, teardown_sides),
		cmocka_unit_test_teardown(test_bad_state_names_both_states, teardown_sides),
		cmocka_unit_test(test_bad_state_mmap),
		cmocka_unit_test(test_bad_state_buf_inventory),
		cmocka_unit_test(test_bad_state_buf_pool),
		cmocka_unit_test(test_bad_state_sync_event),
		cmocka_unit_test(test_bad_state_graph),
		cmocka_unit_test(test_bad_state_dma_and_pe),
		cmocka_unit_test_teardown(test_bad_state_task, teardown_sides),
		cmocka_unit_test(test_lifecycle_mmap_bufs),
		cmocka_unit_test_teardown(test_pe_not_progressed, teardown_sides),
		cmocka_unit_test_teardown(test_pe_other_one_progressed, teardown_sides),
		cmocka_unit_test_teardown(test_submitted_not_progressed, teardown_sides),
		cmocka_unit_test_teardown(test_submitted_other_one_progressed, teardown_sides),
		cmocka_unit_test_teardown(test_submitted_armed_is_quiet, teardown_sides),
		cmocka_unit_test_teardown(test_connect_never_answered, teardown_sides),
		cmocka_unit_test_teardown(test_connect_this_side_idle, teardown_sides),
		cmocka_unit_test_teardown(test_connect_this_side_idle_many, teardown_sides),
		cmocka_unit_test_teardown(test_disagree_transport, teardown_sides),
		cmocka_unit_test_teardown(test_disagree_gid_type, teardown_sides),
		cmocka_unit_test_teardown(test_stale_descriptor_of_stopped_context, teardown_sides),
		cmocka_unit_test_teardown(test_refused_local_mmap, teardown_sides),
		cmocka_unit_test_teardown(test_local_context_not_checked, teardown_sides),
		cmocka_unit_test_teardown(test_refused_remote_context, teardown_sides),
		cmocka_unit_test_teardown(test_refused_remote_mmap_export, teardown_sides),
		cmocka_unit_test_teardown(test_refused_remote_mmap_target, teardown_sides),
		cmocka_unit_test_teardown(test_refused_out_of_range, teardown_sides),
		cmocka_unit_test_teardown(test_refused_region_gone, teardown_sides),
	};
	const struct CMUnitTest env_tests[] = {
		cmocka_unit_test(test_bad_stall_env),
	};
	/* Its own run (meson.build): UCX leaks a little on the way. */
	const struct CMUnitTest exited_peer_tests[] = {
		cmocka_unit_test_teardown(test_stale_descriptor_of_exited_process, teardown_sides),
	};

	if (getenv("EXPLAIN_BAD_STALL_ENV") != NULL)
		return cmocka_run_group_tests(env_tests, group_setup, group_teardown);
	if (getenv("EXPLAIN_EXITED_PEER") != NULL)
		return cmocka_run_group_tests(exited_peer_tests, group_setup, group_teardown);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
