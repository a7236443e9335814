/*
 * Unit tests of the DOCA RDMA API over the loopback engine
 * (SOFTDOCA_ENGINE=loopback, src/engine/loopback.c): two contexts of this
 * process, no UCX. main() sets SOFTDOCA_ENGINE=loopback and an unusable
 * UCX_TLS before anything else, and the first test checks that a context
 * on the UCX engine cannot even start here; so every other test passing
 * shows UCX was not used.
 *
 * Covered through the public API: the strict engine choice, descriptors
 * (hostile ones refused), send/receive with and without immediate,
 * write, write with immediate, read, atomics, remote sync events,
 * refusals by the target (context permissions, revoked region), the RNR
 * wait and its timeout, RC ordering behind a waiting send, the send
 * queue bound, disconnection, the flush at stop, and flat fds and memory
 * over many runs. Every failing call must leave an ERROR line in the SDK
 * log (TEST_RDMA_VERBOSE=1 prints it). The fixture (device, PE, mmaps,
 * sides A and B, callbacks) is rdma_pair.c, shared with test_rdma.c.
 */
#include <dirent.h>
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>

#include "rdma_pair.h"

/* ---- shared objects ------------------------------------------------------ */

#define MEM_SIZE 65536
#define NUM_TASKS 16

/* One process: the "peer's" memory is ours too, seen through a
 * from-export mmap as a peer would see it. */
static _Alignas(64) char mem[MEM_SIZE];
static struct doca_mmap *local_mm, *remote_mm;

/* Completions in the order doca_pe_progress delivered them. */
#define MAX_DONE 64
struct done_rec {
	struct doca_task *task;
	bool ok;
	doca_error_t status;
};
static struct done_rec done_log[MAX_DONE];
static int done_count;

/* ---- callbacks ---------------------------------------------------------- */

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	assert_true(ctx_user_data.ptr == &A || ctx_user_data.ptr == &B);
	assert_true(done_count < MAX_DONE);
	done_log[done_count].task = task;
	done_log[done_count].ok = ok;
	done_log[done_count].status = doca_task_get_status(task);
	done_count++;
}

static void on_request(struct doca_rdma_connection *conn, union doca_data ctxud)
{
	(void)ctxud;
	fail_msg("unexpected connection request on %p", (void *)conn);
}

/* ---- progress --------------------------------------------------------------- */

/* Progress until done_count reaches n; false after 10 s. */
static bool progress_until_done(int n)
{
	return progress_until(&done_count, n);
}

/* ---- contexts ------------------------------------------------------------------ */

static const struct side_conf default_conf = {ALL_RDMA_PERMS, 7, 0, 2};

static void side_create_conf(struct side *s, const struct side_conf *c)
{
	side_create(s);
	side_apply_conf(s, c);
	side_conf_tasks(s, NUM_TASKS, true);
}

/* A and B, configured by a and b, connected to each other. */
static void pair_up(const struct side_conf *a, const struct side_conf *b)
{
	done_count = 0;
	side_create_conf(&A, a);
	side_create_conf(&B, b);
	side_start_export(&A);
	side_start_export(&B);
	pair_connect();
}

static int setup_pair(void **state)
{
	(void)state;
	pair_up(&default_conf, &default_conf);
	return 0;
}

static int teardown_sides(void **state)
{
	(void)state;
	side_destroy(&A);
	side_destroy(&B);
	return 0;
}

/* ---- tasks ---------------------------------------------------------------------- */

static struct doca_rdma_task_send *submit_send(struct side *s, struct doca_buf *src)
{
	struct doca_rdma_task_send *send;
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_task_send_allocate_init(s->rdma, s->conn, src, ud, &send));
	assert_ok(doca_task_try_submit(doca_rdma_task_send_as_task(send)));
	return send;
}

static struct doca_rdma_task_write *submit_write(struct side *s, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_rdma_task_write *wr;
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_task_write_allocate_init(s->rdma, s->conn, src, dst, ud, &wr));
	assert_ok(doca_task_try_submit(doca_rdma_task_write_as_task(wr)));
	return wr;
}

static struct doca_rdma_task_read *submit_read(struct side *s, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_rdma_task_read *rd;
	union doca_data ud = {.u64 = 0};

	assert_ok(doca_rdma_task_read_allocate_init(s->rdma, s->conn, src, dst, ud, &rd));
	assert_ok(doca_task_try_submit(doca_rdma_task_read_as_task(rd)));
	return rd;
}

/* ---- group setup ------------------------------------------------------------------ */

static int group_setup(void **state)
{
	(void)state;
	if (rdma_pair_setup() != 0)
		return -1;
	local_mm = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);
	remote_mm = remote_of(local_mm);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	assert_ok(doca_mmap_stop(remote_mm));
	assert_ok(doca_mmap_destroy(remote_mm));
	assert_ok(doca_mmap_destroy(local_mm));
	rdma_pair_teardown();
	return 0;
}

/* ---- the engine choice ---------------------------------------------------------------- */

/* SOFTDOCA_ENGINE is checked strictly, and UCX cannot run in this
 * process: the UCX engine's context fails to start. */
static void test_engine_choice_and_no_ucx(void **state)
{
	struct doca_rdma *r = NULL;

	(void)state;
	assert_ok(setenv("SOFTDOCA_ENGINE", "loopbak", 1));
	assert_fails(doca_rdma_create(dev, &r), DOCA_ERROR_INVALID_VALUE);
	assert_null(r);
	assert_ok(setenv("SOFTDOCA_ENGINE", "", 1));
	assert_fails(doca_rdma_create(dev, &r), DOCA_ERROR_INVALID_VALUE);
	assert_ok(setenv("SOFTDOCA_ENGINE", "loopback ", 1));
	assert_fails(doca_rdma_create(dev, &r), DOCA_ERROR_INVALID_VALUE);

	/* The control: over UCX, with UCX_TLS naming no transport. */
	assert_ok(setenv("SOFTDOCA_ENGINE", "ucx", 1));
	side_create_conf(&A, &default_conf);
	assert_ok(setenv("SOFTDOCA_ENGINE", "loopback", 1));
	assert_int_not_equal(doca_ctx_start(A.ctx), DOCA_SUCCESS);
	assert_int_equal(state_of(&A), DOCA_CTX_STATE_IDLE);
	side_destroy(&A);

	/* The same configuration over loopback starts. */
	side_create_conf(&A, &default_conf);
	side_start_export(&A);
	assert_true(A.desc_len > 0);
	side_destroy(&A);
}

/* RDMA CM needs sockets: the loopback engine refuses it clearly. */
static void test_cm_not_supported(void **state)
{
	struct doca_rdma_addr *addr;
	union doca_data ud = {.u64 = 0};

	(void)state;
	side_create_conf(&A, &default_conf);
	assert_ok(doca_rdma_set_connection_state_callbacks(A.rdma, on_request, on_established, on_failure,
							   on_disconnect));
	assert_ok(doca_ctx_start(A.ctx));
	assert_fails(doca_rdma_start_listen_to_port(A.rdma, 18515), DOCA_ERROR_NOT_SUPPORTED);
	assert_ok(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", 18515, &addr));
	assert_fails(doca_rdma_connect_to_addr(A.rdma, addr, ud), DOCA_ERROR_NOT_SUPPORTED);
	assert_ok(doca_rdma_addr_destroy(addr));
	side_destroy(&A);
}

/* Descriptors are input from outside: each damaged one is refused with a
 * log line, and the connection can still connect with the real one. */
static void test_hostile_descriptors(void **state)
{
	uint8_t bad[256];
	size_t len;

	(void)state;
	done_count = 0;
	side_create_conf(&A, &default_conf);
	side_create_conf(&B, &default_conf);
	side_start_export(&A);
	side_start_export(&B);
	len = B.desc_len;
	assert_true(len <= sizeof(bad));
	for (size_t cut = 1; cut < len; cut++)
		assert_fails(doca_rdma_connect(A.rdma, B.desc, cut, A.conn), DOCA_ERROR_INVALID_VALUE);
	memcpy(bad, B.desc, len);
	bad[len] = 0;
	assert_fails(doca_rdma_connect(A.rdma, bad, len + 1, A.conn), DOCA_ERROR_INVALID_VALUE);
	/* Every single-byte change makes the descriptor name nothing. */
	for (size_t i = 0; i < len; i++) {
		memcpy(bad, B.desc, len);
		bad[i] ^= 0x01;
		assert_fails(doca_rdma_connect(A.rdma, bad, len, A.conn), DOCA_ERROR_INVALID_VALUE);
	}
	/* Not connected by any of them. */
	progress_rounds(20);
	assert_false(conn_is_up(A.conn) || conn_is_up(B.conn));
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	assert_fails(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_rdma_connect(B.rdma, A.desc, A.desc_len, B.conn));
	assert_true(progress_until_up(A.conn));
	assert_true(progress_until_up(B.conn));
	/* Export/connect: no established callback (RDMA CM's only). */
	assert_int_equal(A.established + B.established, 0);
	side_destroy(&A);
	side_destroy(&B);
}

/* ---- data tasks -------------------------------------------------------------------------- */

/* A send with immediate gathers a two-buffer list and lands after the
 * receive buffer's data; a plain send follows into the next receive. */
static void test_send_receive(void **state)
{
	struct doca_buf *s1 = buf_on(local_mm, mem, 16, 10);
	struct doca_buf *s2 = buf_on(local_mm, mem + 100, 16, 6);
	struct doca_buf *d1 = buf_on(local_mm, mem + 1024, 8, 2);
	struct doca_buf *d2 = buf_on(local_mm, mem + 2048, 64, 0);
	struct doca_buf *plain = buf_on(local_mm, mem + 200, 8, 3);
	struct doca_buf *d3 = buf_on(local_mm, mem + 3072, 8, 0);
	struct doca_rdma_task_receive *r1, *r2;
	struct doca_rdma_task_send_imm *simm;
	struct doca_rdma_task_send *send;
	union doca_data ud = {.u64 = 0};

	(void)state;
	memcpy(mem, "0123456789", 10);
	memcpy(mem + 100, "abcdef", 6);
	memcpy(mem + 1024, "HD", 2);
	memcpy(mem + 200, "xyz", 3);
	assert_ok(doca_buf_chain_list(s1, s2));
	assert_ok(doca_buf_chain_list(d1, d2));
	r1 = post_receive(&B, d1);
	r2 = post_receive(&B, d3);
	assert_ok(doca_rdma_task_send_imm_allocate_init(A.rdma, A.conn, s1, 0x11223344, ud, &simm));
	assert_ok(doca_task_try_submit(doca_rdma_task_send_imm_as_task(simm)));
	send = submit_send(&A, plain);
	assert_true(progress_until_done(4));
	for (int i = 0; i < 4; i++)
		assert_true(done_log[i].ok);
	/* d1 had room for 6 after its 2 bytes of data, d2 takes the rest. */
	assert_memory_equal(mem + 1024, "HD012345", 8);
	assert_memory_equal(mem + 2048, "6789abcdef", 10);
	assert_int_equal(data_len_of(d1), 8);
	assert_int_equal(data_len_of(d2), 10);
	assert_int_equal(doca_rdma_task_receive_get_result_len(r1), 16);
	assert_int_equal(doca_rdma_task_receive_get_result_opcode(r1), DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM);
	assert_int_equal(doca_rdma_task_receive_get_result_immediate_data(r1), 0x11223344);
	assert_ptr_equal(doca_rdma_task_receive_get_result_rdma_connection(r1), B.conn);
	assert_int_equal(doca_rdma_task_receive_get_result_len(r2), 3);
	assert_int_equal(doca_rdma_task_receive_get_result_opcode(r2), DOCA_RDMA_OPCODE_RECV_SEND);
	assert_memory_equal(mem + 3072, "xyz", 3);
	doca_task_free(doca_rdma_task_receive_as_task(r1));
	doca_task_free(doca_rdma_task_receive_as_task(r2));
	doca_task_free(doca_rdma_task_send_imm_as_task(simm));
	doca_task_free(doca_rdma_task_send_as_task(send));
	put(s1); /* a chained list goes back from its head */
	put(d1);
	put(plain);
	put(d3);
}

/* A send bigger than the receive: both fail (verbs: a local length error
 * at the responder, a remote one at the requester). */
static void test_send_too_big(void **state)
{
	struct doca_buf *src = buf_on(local_mm, mem, 64, 64);
	struct doca_buf *dst = buf_on(local_mm, mem + 1024, 16, 0);
	struct doca_rdma_task_receive *recv = post_receive(&B, dst);
	struct doca_rdma_task_send *send = submit_send(&A, src);

	(void)state;
	assert_true(progress_until_done(2));
	assert_false(done_log[0].ok);
	assert_false(done_log[1].ok);
	assert_int_equal(done_log[0].status, DOCA_ERROR_TOO_BIG);
	assert_int_equal(done_log[1].status, DOCA_ERROR_TOO_BIG);
	assert_int_equal(data_len_of(dst), 0);
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_send_as_task(send));
	put(src);
	put(dst);
}

static void test_write_write_imm_read(void **state)
{
	struct doca_buf *src = buf_on(local_mm, mem, 32, 32);
	struct doca_buf *rdst = buf_on(remote_mm, mem + 4096, 64, 8);
	struct doca_buf *rdst2 = buf_on(remote_mm, mem + 8192, 64, 0);
	struct doca_buf *rsrc = buf_on(remote_mm, mem + 4096, 64, 40);
	struct doca_buf *ldst = buf_on(local_mm, mem + 12288, 64, 0);
	struct doca_rdma_task_write_imm *wimm;
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_write *wr;
	struct doca_rdma_task_read *rd;
	union doca_data ud = {.u64 = 0};

	(void)state;
	for (int i = 0; i < 32; i++)
		mem[i] = (char)(0x40 + i);
	memset(mem + 4096, 0x5a, 64);
	memset(mem + 8192, 0, 64);
	wr = submit_write(&A, src, rdst);
	assert_true(progress_until_done(1));
	assert_true(done_log[0].ok);
	assert_memory_equal(mem + 4096 + 8, mem, 32);
	assert_int_equal((unsigned char)mem[4096 + 7], 0x5a);
	assert_int_equal((unsigned char)mem[4096 + 40], 0x5a);

	recv = post_receive(&B, NULL);
	assert_ok(doca_rdma_task_write_imm_allocate_init(A.rdma, A.conn, src, rdst2, 0xcafe, ud, &wimm));
	assert_ok(doca_task_try_submit(doca_rdma_task_write_imm_as_task(wimm)));
	assert_true(progress_until_done(3));
	assert_true(done_log[1].ok && done_log[2].ok);
	assert_memory_equal(mem + 8192, mem, 32);
	assert_int_equal(doca_rdma_task_receive_get_result_opcode(recv), DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM);
	assert_int_equal(doca_rdma_task_receive_get_result_immediate_data(recv), 0xcafe);
	assert_int_equal(doca_rdma_task_receive_get_result_len(recv), 32);

	rd = submit_read(&A, rsrc, ldst);
	assert_true(progress_until_done(4));
	assert_true(done_log[3].ok);
	assert_int_equal(doca_rdma_task_read_get_result_len(rd), 40);
	assert_int_equal(data_len_of(ldst), 40);
	assert_memory_equal(mem + 12288, mem + 4096, 40);
	doca_task_free(doca_rdma_task_write_as_task(wr));
	doca_task_free(doca_rdma_task_write_imm_as_task(wimm));
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_read_as_task(rd));
	put(src);
	put(rdst);
	put(rdst2);
	put(rsrc);
	put(ldst);
}

static void test_atomics(void **state)
{
	_Alignas(8) uint64_t v = 100, got;
	struct doca_buf *target = buf_on(remote_mm, mem + 4096, 8, 8);
	struct doca_buf *result = buf_on(local_mm, mem + 8192, 24, 0);
	struct doca_rdma_task_atomic_fetch_add *fadd;
	struct doca_rdma_task_atomic_cmp_swp *cas_hit, *cas_miss;
	union doca_data ud = {.u64 = 0};

	(void)state;
	memcpy(mem + 4096, &v, 8);
	assert_ok(doca_rdma_task_atomic_fetch_add_allocate_init(A.rdma, A.conn, target, result, 5, ud, &fadd));
	assert_ok(doca_task_try_submit(doca_rdma_task_atomic_fetch_add_as_task(fadd)));
	assert_true(progress_until_done(1));
	memcpy(&got, mem + 8192, 8);
	assert_int_equal(got, 100);
	memcpy(&got, mem + 4096, 8);
	assert_int_equal(got, 105);

	assert_ok(doca_rdma_task_atomic_cmp_swp_allocate_init(A.rdma, A.conn, target, result, 105, 7, ud, &cas_hit));
	assert_ok(doca_task_try_submit(doca_rdma_task_atomic_cmp_swp_as_task(cas_hit)));
	assert_true(progress_until_done(2));
	memcpy(&got, mem + 8200, 8);
	assert_int_equal(got, 105);
	memcpy(&got, mem + 4096, 8);
	assert_int_equal(got, 7);

	/* A miss swaps nothing and reports the current value. */
	assert_ok(doca_rdma_task_atomic_cmp_swp_allocate_init(A.rdma, A.conn, target, result, 105, 9, ud, &cas_miss));
	assert_ok(doca_task_try_submit(doca_rdma_task_atomic_cmp_swp_as_task(cas_miss)));
	assert_true(progress_until_done(3));
	for (int i = 0; i < 3; i++)
		assert_true(done_log[i].ok);
	memcpy(&got, mem + 8208, 8);
	assert_int_equal(got, 7);
	memcpy(&got, mem + 4096, 8);
	assert_int_equal(got, 7);
	assert_int_equal(data_len_of(result), 24);
	doca_task_free(doca_rdma_task_atomic_fetch_add_as_task(fadd));
	doca_task_free(doca_rdma_task_atomic_cmp_swp_as_task(cas_hit));
	doca_task_free(doca_rdma_task_atomic_cmp_swp_as_task(cas_miss));
	put(target);
	put(result);
}

static void test_sync_events(void **state)
{
	struct doca_sync_event *ev;
	struct doca_sync_event_remote_net *rev;
	struct doca_rdma_task_remote_net_sync_event_get *get;
	struct doca_rdma_task_remote_net_sync_event_notify_set *set;
	struct doca_rdma_task_remote_net_sync_event_notify_add *add;
	_Alignas(8) uint64_t val = 1000, got;
	struct doca_buf *src = buf_on(local_mm, mem, 8, 8);
	struct doca_buf *res = buf_on(local_mm, mem + 64, 16, 0);
	union doca_data ud = {.u64 = 0};
	const uint8_t *desc;
	size_t desc_len;

	(void)state;
	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_add_publisher_location_remote_net(ev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_ok(doca_sync_event_start(ev));
	assert_ok(doca_sync_event_update_set(ev, 41));
	assert_ok(doca_sync_event_export_to_remote_net(ev, &desc, &desc_len));
	assert_ok(doca_sync_event_remote_net_create_from_export(dev, desc, desc_len, &rev));

	assert_ok(doca_rdma_task_remote_net_sync_event_get_allocate_init(A.rdma, A.conn, rev, res, ud, &get));
	assert_ok(doca_task_try_submit(doca_rdma_task_remote_net_sync_event_get_as_task(get)));
	assert_true(progress_until_done(1));
	assert_true(done_log[0].ok);
	memcpy(&got, mem + 64, 8);
	assert_int_equal(got, 41);
	assert_int_equal(doca_rdma_task_remote_net_sync_event_get_get_result_len(get), 8);

	memcpy(mem, &val, 8);
	assert_ok(doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(A.rdma, A.conn, rev, src, ud, &set));
	assert_ok(doca_task_try_submit(doca_rdma_task_remote_net_sync_event_notify_set_as_task(set)));
	assert_true(progress_until_done(2));
	assert_true(done_log[1].ok);
	assert_ok(doca_sync_event_get(ev, &got));
	assert_int_equal(got, 1000);

	assert_ok(doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(A.rdma, A.conn, rev, res, 24, ud, &add));
	assert_ok(doca_task_try_submit(doca_rdma_task_remote_net_sync_event_notify_add_as_task(add)));
	assert_true(progress_until_done(3));
	assert_true(done_log[2].ok);
	memcpy(&got, mem + 72, 8);
	assert_int_equal(got, 1000); /* the value before the addition */
	assert_ok(doca_sync_event_get(ev, &got));
	assert_int_equal(got, 1024);

	doca_task_free(doca_rdma_task_remote_net_sync_event_get_as_task(get));
	doca_task_free(doca_rdma_task_remote_net_sync_event_notify_set_as_task(set));
	doca_task_free(doca_rdma_task_remote_net_sync_event_notify_add_as_task(add));
	assert_ok(doca_sync_event_remote_net_destroy(rev));
	assert_ok(doca_sync_event_stop(ev));
	assert_ok(doca_sync_event_destroy(ev));
	put(src);
	put(res);
}

/* ---- refusals by the target -------------------------------------------------------------- */

/* B's context grants peers nothing: every one-sided operation is refused
 * at the target, and no byte moves. */
static void test_context_permission_refused(void **state)
{
	const struct side_conf local_only = {DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, 7, 0, 2};
	_Alignas(8) uint64_t v = 77, got;
	struct doca_buf *src = buf_on(local_mm, mem, 16, 16);
	struct doca_buf *rdst = buf_on(remote_mm, mem + 4096, 64, 0);
	struct doca_buf *rsrc = buf_on(remote_mm, mem + 4096, 64, 16);
	struct doca_buf *ldst = buf_on(local_mm, mem + 8192, 64, 0);
	struct doca_buf *result = buf_on(local_mm, mem + 8192 + 64, 8, 0);
	struct doca_rdma_task_atomic_fetch_add *fadd;
	struct doca_rdma_task_write *wr;
	struct doca_rdma_task_read *rd;
	union doca_data ud = {.u64 = 0};
	int errors_before;

	(void)state;
	pair_up(&default_conf, &local_only);
	memset(mem, 0x11, 16);
	memset(mem + 4096, 0x22, 64);
	memcpy(mem + 4096, &v, 8);
	memset(mem + 8192, 0x33, 72);
	errors_before = error_lines;
	wr = submit_write(&A, src, rdst);
	rd = submit_read(&A, rsrc, ldst);
	assert_ok(doca_rdma_task_atomic_fetch_add_allocate_init(A.rdma, A.conn, rdst, result, 1, ud, &fadd));
	assert_ok(doca_task_try_submit(doca_rdma_task_atomic_fetch_add_as_task(fadd)));
	assert_true(progress_until_done(3));
	for (int i = 0; i < 3; i++) {
		assert_false(done_log[i].ok);
		assert_int_equal(done_log[i].status, DOCA_ERROR_NOT_PERMITTED);
	}
	assert_true(error_lines >= errors_before + 3);
	memcpy(&got, mem + 4096, 8);
	assert_int_equal(got, 77);
	assert_int_equal((unsigned char)mem[4096 + 8], 0x22);
	assert_int_equal((unsigned char)mem[8192], 0x33);
	assert_int_equal(data_len_of(ldst), 0);
	assert_int_equal(data_len_of(result), 0);
	doca_task_free(doca_rdma_task_write_as_task(wr));
	doca_task_free(doca_rdma_task_read_as_task(rd));
	doca_task_free(doca_rdma_task_atomic_fetch_add_as_task(fadd));
	put(src);
	put(rdst);
	put(rsrc);
	put(ldst);
	put(result);
	side_destroy(&A);
	side_destroy(&B);
}

/* The target stopped its mmap: the region is gone, the write is refused
 * and the memory (still ours) stays as it was. */
static void test_revoked_region_refused(void **state)
{
	static _Alignas(64) char other[4096];
	struct doca_mmap *m = local_mmap(other, sizeof(other), ALL_RDMA_PERMS);
	struct doca_mmap *rm = remote_of(m);
	struct doca_buf *src = buf_on(local_mm, mem, 16, 16);
	struct doca_buf *rdst = buf_on(rm, other, 64, 0);
	struct doca_rdma_task_write *wr;

	(void)state;
	memset(other, 0x44, sizeof(other));
	assert_ok(doca_mmap_stop(m));
	wr = submit_write(&A, src, rdst);
	assert_true(progress_until_done(1));
	assert_false(done_log[0].ok);
	assert_int_equal(done_log[0].status, DOCA_ERROR_NOT_PERMITTED);
	for (size_t i = 0; i < 64; i++)
		assert_int_equal((unsigned char)other[i], 0x44);
	doca_task_free(doca_rdma_task_write_as_task(wr));
	put(src);
	put(rdst);
	assert_ok(doca_mmap_stop(rm));
	assert_ok(doca_mmap_destroy(rm));
	assert_ok(doca_mmap_destroy(m));
}

/* ---- RNR, ordering, queues ------------------------------------------------------------------- */

/* A send waits for a receive posted after it (RNR retries for ever). */
static void test_rnr_wait_then_receive(void **state)
{
	struct doca_buf *src = buf_on(local_mm, mem, 8, 5);
	struct doca_buf *dst = buf_on(local_mm, mem + 1024, 16, 0);
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_receive *recv;

	(void)state;
	memcpy(mem, "later", 5);
	send = submit_send(&A, src);
	progress_rounds(1000);
	assert_int_equal(done_count, 0);
	recv = post_receive(&B, dst);
	assert_true(progress_until_done(2));
	assert_true(done_log[0].ok && done_log[1].ok);
	assert_memory_equal(mem + 1024, "later", 5);
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	put(src);
	put(dst);
}

/* rnr_retry_count 0: the send gives up after one RNR timer (about
 * 200 ms) with TIME_OUT; a receive posted afterwards is not consumed. */
static void test_rnr_timeout(void **state)
{
	const struct side_conf impatient = {ALL_RDMA_PERMS, 0, 0, 2};
	struct doca_buf *src = buf_on(local_mm, mem, 8, 8);
	struct doca_buf *dst = buf_on(local_mm, mem + 1024, 16, 0);
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_receive *recv;
	uint64_t t0, took;

	(void)state;
	pair_up(&impatient, &default_conf);
	t0 = now_ms();
	send = submit_send(&A, src);
	assert_true(progress_until_done(1));
	took = now_ms() - t0;
	assert_false(done_log[0].ok);
	assert_int_equal(done_log[0].status, DOCA_ERROR_TIME_OUT);
	assert_true(took >= 150);
	assert_true(took < 5000);
	recv = post_receive(&B, dst);
	progress_rounds(1000);
	assert_int_equal(done_count, 1);
	/* Stop flushes the receive that nothing took. */
	assert_int_equal(doca_ctx_stop(B.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_true(progress_until_done(2));
	assert_ptr_equal(done_log[1].task, doca_rdma_task_receive_as_task(recv));
	assert_false(done_log[1].ok);
	assert_int_equal(data_len_of(dst), 0);
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	put(src);
	put(dst);
	side_destroy(&A);
	side_destroy(&B);
}

/* RC ordering: a write and a read behind a send that waits for its
 * receive do not overtake it; once the receive comes, the three complete
 * in posting order and the read sees the write. */
static void test_ordering_behind_waiting_send(void **state)
{
	struct doca_buf *msg = buf_on(local_mm, mem, 8, 4);
	struct doca_buf *rdst = buf_on(remote_mm, mem + 4096, 16, 0);
	struct doca_buf *wsrc = buf_on(local_mm, mem + 64, 8, 8);
	struct doca_buf *rsrc = buf_on(remote_mm, mem + 4096, 16, 8);
	struct doca_buf *ldst = buf_on(local_mm, mem + 8192, 16, 0);
	struct doca_buf *rbuf = buf_on(local_mm, mem + 1024, 16, 0);
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_write *wr;
	struct doca_rdma_task_read *rd;

	(void)state;
	memcpy(mem, "note", 4);
	memcpy(mem + 64, "WRITTEN!", 8);
	memset(mem + 4096, 0, 16);
	memset(mem + 8192, 0, 16);
	send = submit_send(&A, msg);
	wr = submit_write(&A, wsrc, rdst);
	rd = submit_read(&A, rsrc, ldst);
	progress_rounds(1000);
	assert_int_equal(done_count, 0);
	assert_int_equal(mem[4096], 0); /* the write has not landed */
	recv = post_receive(&B, rbuf);
	assert_true(progress_until_done(4));
	for (int i = 0; i < 4; i++)
		assert_true(done_log[i].ok);
	/* The receive completes with its send; then the write, then the read. */
	assert_ptr_equal(done_log[0].task, doca_rdma_task_receive_as_task(recv));
	assert_ptr_equal(done_log[1].task, doca_rdma_task_send_as_task(send));
	assert_ptr_equal(done_log[2].task, doca_rdma_task_write_as_task(wr));
	assert_ptr_equal(done_log[3].task, doca_rdma_task_read_as_task(rd));
	assert_memory_equal(mem + 8192, "WRITTEN!", 8);
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_write_as_task(wr));
	doca_task_free(doca_rdma_task_read_as_task(rd));
	put(msg);
	put(rdst);
	put(wsrc);
	put(rsrc);
	put(ldst);
	put(rbuf);
}

/* The send queue holds send_queue_size operations: one more is refused
 * with FULL and the task stays the caller's. */
static void test_send_queue_full(void **state)
{
	const struct side_conf small_sq = {ALL_RDMA_PERMS, 7, 2, 2};
	struct doca_buf *src = buf_on(local_mm, mem, 8, 0);
	struct doca_rdma_task_send *s[3];
	struct doca_rdma_task_receive *r[3];
	union doca_data ud = {.u64 = 0};

	(void)state;
	pair_up(&small_sq, &default_conf);
	s[0] = submit_send(&A, src);
	s[1] = submit_send(&A, src);
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &s[2]));
	assert_int_equal(doca_task_try_submit(doca_rdma_task_send_as_task(s[2])), DOCA_ERROR_FULL);
	for (int i = 0; i < 2; i++)
		r[i] = post_receive(&B, NULL);
	assert_true(progress_until_done(4));
	assert_ok(doca_task_try_submit(doca_rdma_task_send_as_task(s[2])));
	r[2] = post_receive(&B, NULL);
	assert_true(progress_until_done(6));
	for (int i = 0; i < 6; i++)
		assert_true(done_log[i].ok);
	for (int i = 0; i < 3; i++) {
		doca_task_free(doca_rdma_task_send_as_task(s[i]));
		doca_task_free(doca_rdma_task_receive_as_task(r[i]));
	}
	put(src);
	side_destroy(&A);
	side_destroy(&B);
}

/* ---- disconnection and stop ------------------------------------------------------------------- */

/* B disconnects: A hears it, A's send waiting at B fails, A's connection
 * takes no more work. */
static void test_disconnect(void **state)
{
	struct doca_buf *src = buf_on(local_mm, mem, 8, 8);
	struct doca_rdma_task_send *send, *late;
	union doca_data ud = {.u64 = 0};

	(void)state;
	send = submit_send(&A, src);
	progress_rounds(100);
	assert_int_equal(done_count, 0);
	assert_ok(doca_rdma_connection_disconnect(B.conn));
	assert_true(progress_until(&A.disconnected, 1));
	/* The send the disconnection failed was delivered first: a program
	 * may free the connection's state in its disconnection callback. */
	assert_int_equal(done_count, 1);
	assert_true(progress_until_done(1));
	assert_false(done_log[0].ok);
	assert_int_equal(done_log[0].status, DOCA_ERROR_CONNECTION_RESET);
	assert_int_equal(B.disconnected, 0); /* no callback for one's own disconnect */
	assert_int_equal(A.failed + B.failed, 0);
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &late));
	assert_fails(doca_task_try_submit(doca_rdma_task_send_as_task(late)), DOCA_ERROR_NOT_CONNECTED);
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_send_as_task(late));
	put(src);
}

/* Stop A with a send waiting at B and a receive posted: both fail
 * through their error callbacks, A reaches IDLE, B hears A leave. */
static void test_flush_on_stop(void **state)
{
	struct doca_buf *src = buf_on(local_mm, mem, 8, 8);
	struct doca_buf *dst = buf_on(local_mm, mem + 1024, 8, 0);
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_receive *recv;

	(void)state;
	send = submit_send(&A, src);
	recv = post_receive(&A, dst);
	progress_rounds(100);
	assert_int_equal(done_count, 0);
	assert_int_equal(doca_ctx_stop(A.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_true(progress_until_done(2));
	for (int i = 0; i < 2; i++) {
		assert_false(done_log[i].ok);
		assert_int_equal(done_log[i].status, DOCA_ERROR_IO_FAILED);
	}
	assert_int_equal(data_len_of(dst), 0);
	/* IDLE with the tasks still allocated (only tasks in flight hold a
	 * stop); they are freed after, as programs written for DOCA do. */
	side_stop(&A);
	assert_int_equal(state_of(&A), DOCA_CTX_STATE_IDLE);
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	assert_true(progress_until(&B.disconnected, 1));
	put(src);
	put(dst);
}

/* NVIDIA's secure_channel pattern on RDMA: receives posted, freed while
 * in flight, then the context stopped: no error line per free, no
 * callback for them, and the stop reaches IDLE. */
static void test_free_posted_receives_then_stop(void **state)
{
	struct doca_buf *dst[2] = {buf_on(local_mm, mem + 2048, 8, 0), buf_on(local_mm, mem + 3072, 8, 0)};
	struct doca_rdma_task_receive *recv[2];

	(void)state;
	for (int i = 0; i < 2; i++)
		recv[i] = post_receive(&A, dst[i]);
	progress_rounds(10);
	for (int i = 0; i < 2; i++)
		doca_task_free(doca_rdma_task_receive_as_task(recv[i]));
	assert_int_equal(doca_ctx_stop(A.ctx), DOCA_ERROR_IN_PROGRESS);
	side_stop(&A);
	assert_int_equal(state_of(&A), DOCA_CTX_STATE_IDLE);
	assert_int_equal(done_count, 0);
	assert_true(progress_until(&B.disconnected, 1));
	for (int i = 0; i < 2; i++)
		put(dst[i]);
}

/* ---- leaks ---------------------------------------------------------------------------------------- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* One whole life: create, connect, move data both ways, disconnect, stop. */
static void one_run(void)
{
	struct doca_buf *src = buf_on(local_mm, mem, 16, 16);
	struct doca_buf *dst = buf_on(local_mm, mem + 1024, 16, 0);
	struct doca_buf *rdst = buf_on(remote_mm, mem + 4096, 16, 0);
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_write *wr;

	pair_up(&default_conf, &default_conf);
	recv = post_receive(&B, dst);
	send = submit_send(&A, src);
	wr = submit_write(&A, src, rdst);
	assert_true(progress_until_done(3));
	for (int i = 0; i < 3; i++)
		assert_true(done_log[i].ok);
	assert_ok(doca_rdma_connection_disconnect(A.conn));
	assert_true(progress_until(&B.disconnected, 1));
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_write_as_task(wr));
	put(src);
	put(dst);
	put(rdst);
	side_destroy(&A);
	side_destroy(&B);
}

/* Many lives leave fds and heap as they were (under ASan and TSan
 * mallinfo2 says nothing; LeakSanitizer checks the heap at exit instead). */
static void test_many_runs_flat(void **state)
{
	int fds;
	size_t heap;

	(void)state;
	one_run(); /* warm-up: first-use allocations of the libraries */
	fds = count_fds();
	heap = mallinfo2().uordblks;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	assert_true(heap > 0); /* the measure is live (sanitizers' allocators do not report to mallinfo2) */
#endif
	for (int i = 0; i < 100; i++)
		one_run();
	assert_int_equal(count_fds(), fds);
	/* Not one byte per run: a leak of any size shows. */
	if (getenv("TEST_RDMA_VERBOSE") != NULL)
		fprintf(stderr, "heap in use: %zu before, %zu after 100 runs\n", heap, mallinfo2().uordblks);
	assert_true(mallinfo2().uordblks < heap + 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_choice_and_no_ucx),
		cmocka_unit_test(test_cm_not_supported),
		cmocka_unit_test(test_hostile_descriptors),
		cmocka_unit_test_setup_teardown(test_send_receive, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_send_too_big, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_write_write_imm_read, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_atomics, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_sync_events, setup_pair, teardown_sides),
		cmocka_unit_test(test_context_permission_refused),
		cmocka_unit_test_setup_teardown(test_revoked_region_refused, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_rnr_wait_then_receive, setup_pair, teardown_sides),
		cmocka_unit_test(test_rnr_timeout),
		cmocka_unit_test_setup_teardown(test_ordering_behind_waiting_send, setup_pair, teardown_sides),
		cmocka_unit_test(test_send_queue_full),
		cmocka_unit_test_setup_teardown(test_disconnect, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_free_posted_receives_then_stop, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_flush_on_stop, setup_pair, teardown_sides),
		cmocka_unit_test(test_many_runs_flat),
	};

	/* Before any library call: this process runs the loopback engine,
	 * and UCX, should anything try it, finds no transport. */
	if (setenv("SOFTDOCA_ENGINE", "loopback", 1) != 0 || setenv("UCX_TLS", "softdoca_no_such_transport", 1) != 0)
		return 1;
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
