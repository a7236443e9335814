/*
 * Receives posted on an RDMA context when its connections close. A
 * receive task names no connection; on hardware it sits in the receive
 * queue of the context's QP. When the application disconnects (the QP
 * goes to error) the queue is flushed: every posted receive completes
 * with an error in the next progress, and the context then stops at once.
 * Programs rely on that (dpa-bench's p2p_rtt server disconnects,
 * progresses, and expects doca_ctx_stop to return SUCCESS). A peer's
 * going away flushes nothing (the QP whose peer vanished still waits),
 * nor does closing a connection that never came up, and while another
 * connection could still deliver a send, the receives stay posted.
 *
 * Run over UCX, softdoca's TCP link and the loopback engine (meson.build).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_ctx.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

#include "rdma_pair.h"

#define NUM_TASKS 8

static _Alignas(64) char mem[8192];
static struct doca_mmap *mem_mmap;

/* Completions, per side. */
struct counts {
	int ok;
	int err;
	doca_error_t last_err;
};
static struct counts on_a, on_b, on_c;
static struct side C; /* a second peer of B */

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	struct counts *n = ctx_user_data.ptr == &A ? &on_a : ctx_user_data.ptr == &B ? &on_b : &on_c;

	if (ok) {
		n->ok++;
		return;
	}
	n->err++;
	n->last_err = doca_task_get_status(task);
}

static int group_setup(void **state)
{
	(void)state;
	if (rdma_pair_setup() != 0)
		return -1;
	mem_mmap = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	assert_ok(doca_mmap_destroy(mem_mmap));
	rdma_pair_teardown();
	return 0;
}

/* A disconnection callback that only counts: the program closes its end
 * later, by itself (rdma_pair's closes it at once). */
static void on_disconnect_count(struct doca_rdma_connection *conn, union doca_data cud, union doca_data ctxud)
{
	(void)conn;
	(void)cud;
	((struct side *)ctxud.ptr)->disconnected++;
}

static void side_ready(struct side *s, uint16_t max_conns)
{
	side_create(s);
	assert_ok(doca_rdma_set_permissions(s->rdma, ALL_RDMA_PERMS));
	assert_ok(doca_rdma_set_max_num_connections(s->rdma, max_conns));
	side_conf_tasks(s, NUM_TASKS, false);
	assert_ok(doca_rdma_set_connection_state_callbacks(s->rdma, NULL, on_established, on_failure,
							   on_disconnect_count));
	side_start_export(s);
}

static int setup_pair(void **state)
{
	(void)state;
	memset(&on_a, 0, sizeof(on_a));
	memset(&on_b, 0, sizeof(on_b));
	memset(&on_c, 0, sizeof(on_c));
	side_ready(&A, 1);
	side_ready(&B, 2);
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	assert_ok(doca_rdma_connect(B.rdma, A.desc, A.desc_len, B.conn));
	return 0;
}

static int setup_unconnected(void **state)
{
	(void)state;
	memset(&on_a, 0, sizeof(on_a));
	memset(&on_b, 0, sizeof(on_b));
	memset(&on_c, 0, sizeof(on_c));
	side_ready(&A, 1);
	side_ready(&B, 2);
	return 0;
}

static int teardown_sides(void **state)
{
	(void)state;
	side_stop(&A);
	side_stop(&B);
	side_stop(&C);
	side_destroy(&A);
	side_destroy(&B);
	side_destroy(&C);
	return 0;
}

/* from sends the 4 bytes of text over conn; a receive already posted on
 * the peer's context (its buf at mem + 4096) gets them. */
static void send_text(struct side *from, struct doca_rdma_connection *conn, struct counts *from_n,
		      struct counts *to_n, const char *text)
{
	struct doca_buf *src = buf_on(mem_mmap, mem, 64, 4);
	struct doca_rdma_task_send *send;
	union doca_data ud = {.u64 = 0};
	int from_ok = from_n->ok + 1, to_ok = to_n->ok + 1;

	memcpy(mem, text, 4);
	assert_ok(doca_rdma_task_send_allocate_init(from->rdma, conn, src, ud, &send));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(send)));
	assert_true(progress_until(&from_n->ok, from_ok));
	assert_true(progress_until(&to_n->ok, to_ok));
	assert_memory_equal(mem + 4096, text, 4);
	doca_task_free(doca_rdma_task_send_as_task(send));
	put(src);
}

/* A receive on to's context, then from's "ping" fills it. */
static void ping(struct side *from, struct doca_rdma_connection *conn, struct counts *from_n, struct side *to,
		 struct counts *to_n)
{
	struct doca_buf *dst = buf_on(mem_mmap, mem + 4096, 64, 0);
	struct doca_rdma_task_receive *recv = post_receive(to, dst);

	send_text(from, conn, from_n, to_n, "ping");
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	put(dst);
}

/* A new connection of B, to x's exported one (both sides connect). */
static struct doca_rdma_connection *connect_b_to(struct side *x)
{
	struct doca_rdma_connection *conn;
	const void *desc;
	size_t desc_len;

	assert_ok(doca_rdma_export(B.rdma, &desc, &desc_len, &conn));
	assert_ok(doca_rdma_connect(x->rdma, desc, desc_len, x->conn));
	assert_ok(doca_rdma_connect(B.rdma, x->desc, x->desc_len, conn));
	return conn;
}

/* Post n receives on s's context; their bufs go to bufs. */
static void post_receives(struct side *s, struct doca_rdma_task_receive **recvs, struct doca_buf **bufs, int n)
{
	for (int i = 0; i < n; i++) {
		bufs[i] = buf_on(mem_mmap, mem + 4096 + 512 * i, 512, 0);
		recvs[i] = post_receive(s, bufs[i]);
	}
}

static void free_receives(struct doca_rdma_task_receive **recvs, struct doca_buf **bufs, int n)
{
	for (int i = 0; i < n; i++) {
		doca_task_free(doca_rdma_task_receive_as_task(recvs[i]));
		put(bufs[i]);
	}
}

/* B stops right away: SUCCESS, IDLE, no completion left to wait for. */
static void assert_stops_at_once(struct side *s)
{
	assert_ok(doca_ctx_stop(s->ctx));
	assert_int_equal(state_of(s), DOCA_CTX_STATE_IDLE);
}

/* This side disconnects its only connection: its posted receives are
 * flushed (IO_FAILED, as by a stop), and stop needs no more progress. */
static void test_own_disconnect_flushes(void **state)
{
	struct doca_rdma_task_receive *recvs[3];
	struct doca_buf *bufs[3];

	(void)state;
	ping(&A, A.conn, &on_a, &B, &on_b);
	post_receives(&B, recvs, bufs, 3);
	progress_rounds(20);
	assert_int_equal(on_b.err, 0); /* still posted while connected */
	assert_ok(doca_rdma_connection_disconnect(B.conn));
	assert_true(progress_until(&on_b.err, 3));
	assert_int_equal(on_b.last_err, DOCA_ERROR_IO_FAILED);
	assert_stops_at_once(&B);
	free_receives(recvs, bufs, 3);
}

/* The peer disconnects: the receives stay posted (a QP does not hear of
 * its peer's end) until this side disconnects too, as a program does in
 * its disconnection callback or before its stop. */
static void test_peer_disconnect_then_own(void **state)
{
	struct doca_rdma_task_receive *recvs[2];
	struct doca_buf *bufs[2];

	(void)state;
	ping(&A, A.conn, &on_a, &B, &on_b);
	post_receives(&B, recvs, bufs, 2);
	assert_ok(doca_rdma_connection_disconnect(A.conn));
	assert_true(progress_until(&B.disconnected, 1));
	progress_rounds(50);
	assert_int_equal(on_b.err, 0);
	assert_ok(doca_rdma_connection_disconnect(B.conn));
	assert_true(progress_until(&on_b.err, 2));
	assert_int_equal(on_b.last_err, DOCA_ERROR_IO_FAILED);
	assert_stops_at_once(&B);
	free_receives(recvs, bufs, 2);
}

/* B has a second connection, to C: A's going away leaves B's receives
 * posted, and C's send fills one of them. */
static void test_other_connection_keeps_receives(void **state)
{
	struct doca_rdma_task_receive *recvs[2];
	struct doca_rdma_connection *b_to_c;
	struct doca_buf *bufs[2];

	(void)state;
	side_ready(&C, 1);
	b_to_c = connect_b_to(&C);
	ping(&C, C.conn, &on_c, &B, &on_b);
	ping(&A, A.conn, &on_a, &B, &on_b);

	post_receives(&B, recvs, bufs, 2);
	assert_ok(doca_rdma_connection_disconnect(A.conn));
	assert_true(progress_until(&B.disconnected, 1));
	assert_ok(doca_rdma_connection_disconnect(B.conn)); /* C's is still open */
	progress_rounds(50);
	assert_int_equal(on_b.err, 0);

	send_text(&C, C.conn, &on_c, &on_b, "from");
	/* The last connection closes: the receive left is flushed. */
	assert_ok(doca_rdma_connection_disconnect(b_to_c));
	assert_true(progress_until(&on_b.err, 1));
	assert_stops_at_once(&B);
	free_receives(recvs, bufs, 2);
}

/* Closing a connection that never came up (a client whose attempt was
 * rejected or timed out) flushes nothing: the program connects again and
 * its receives are still posted. */
static void test_connection_never_up_keeps_receives(void **state)
{
	struct doca_rdma_task_receive *recvs[1];
	struct doca_buf *bufs[1];

	(void)state;
	post_receives(&B, recvs, bufs, 1);
	assert_ok(doca_rdma_connection_disconnect(B.conn)); /* exported, never connected */
	progress_rounds(50);
	assert_int_equal(on_b.err, 0);

	(void)connect_b_to(&A);
	send_text(&A, A.conn, &on_a, &on_b, "late");
	free_receives(recvs, bufs, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_own_disconnect_flushes, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_peer_disconnect_then_own, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_other_connection_keeps_receives, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_connection_never_up_keeps_receives, setup_unconnected,
						teardown_sides),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
