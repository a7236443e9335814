/*
 * Unit tests of fault injection (src/engine/fault.c, softdoca_fault.h)
 * over the loopback engine: two contexts of this process, no UCX.
 *
 * The parser: every malformed rule is refused with one ERROR line naming
 * its bad token, through softdoca_fault_set and through SOFTDOCA_FAULTS
 * (doca_rdma_create refuses). Then one test per rule: the N-th and every
 * N-th task failed with the chosen status, from doca_pe_progress, the
 * target untouched; a seeded fraction, the same for the same seed; FULL
 * at a depth; fixed and jittered delays that neither block the submitter
 * nor reorder a connection; a connection dropped after N operations and
 * after T ms, seen as a failure here and a disconnection by the peer,
 * with what was in flight flushed; a receiver-not-ready storm; held tasks flushed at stop; clearing
 * the rules on a running context. Then: a program asleep on the PE's
 * notification handle woken for a delayed write; a drop with sends in
 * flight both ways, flushed on both sides; /nth= and /id= choosing
 * connections; /client requests rejected and timed out (the loopback
 * engine has no CM, so a request that got past the rule would be refused
 * at once). The fixture is rdma_pair.c.
 */
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
#include <softdoca_fault.h>

#include "rdma_pair.h"

#define MEM_SIZE 65536
#define NUM_TASKS 32

static _Alignas(64) char mem[MEM_SIZE];
static struct doca_mmap *local_mm, *remote_mm;

#define MAX_DONE 128
struct done_rec {
	struct doca_task *task;
	bool ok;
	doca_error_t status;
};
static struct done_rec done_log[MAX_DONE];
static int done_count;

static struct side C; /* a third context, for A's second connection */

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	assert_true(ctx_user_data.ptr == &A || ctx_user_data.ptr == &B || ctx_user_data.ptr == &C);
	assert_true(done_count < MAX_DONE);
	done_log[done_count].task = task;
	done_log[done_count].ok = ok;
	done_log[done_count].status = doca_task_get_status(task);
	done_count++;
}

static bool progress_until_done(int n)
{
	return progress_until(&done_count, n);
}

static uint64_t count_of(enum softdoca_fault_kind kind)
{
	uint64_t n = 0;

	assert_ok(softdoca_fault_get_count(kind, &n));
	return n;
}

/* ---- contexts -------------------------------------------------------------- */

/* Every permission, RNR retry for ever, the library's queue and list
 * lengths unless send_queue_size says otherwise. */
static void side_make(struct side *s, uint32_t send_queue_size)
{
	const struct side_conf c = {ALL_RDMA_PERMS, 7, send_queue_size, 0};

	side_create(s);
	side_apply_conf(s, &c);
	side_conf_tasks(s, NUM_TASKS, false);
	side_start_export(s);
}

/* A and B connected, under the rules in force now. */
static void pair_up(void)
{
	done_count = 0;
	memset(mem, 0, sizeof(mem));
	side_make(&A, 0);
	side_make(&B, 0);
	pair_connect();
}

static void pair_down(void)
{
	side_destroy(&A);
	side_destroy(&B);
	softdoca_fault_clear();
}

/* ---- tasks ----------------------------------------------------------------- */

/* A write of 8 bytes of value from its own source place to offset off
 * of the peer's memory. */
struct op {
	struct doca_rdma_task_write *task;
	struct doca_buf *src, *dst;
};

static char src_mem[MEM_SIZE / 2];
static size_t src_next;

/* The same on A's connection conn. */
static struct doca_task *write_on(struct op *op, struct doca_rdma_connection *conn, size_t off, uint64_t value)
{
	union doca_data ud = {.u64 = 0};
	char *src = src_mem + (src_next++ % (sizeof(src_mem) / 64)) * 64;

	memcpy(src, &value, sizeof(value));
	op->src = buf_on(local_mm, src, 8, 8);
	op->dst = buf_on(remote_mm, mem + off, 8, 0);
	assert_ok(doca_rdma_task_write_allocate_init(A.rdma, conn, op->src, op->dst, ud, &op->task));
	return doca_rdma_task_write_as_task(op->task);
}

static struct doca_task *write_at(struct op *op, size_t off, uint64_t value)
{
	return write_on(op, A.conn, off, value);
}

/* Where task is in the done log (-1: not there). */
static int done_index(const struct doca_task *task)
{
	for (int i = 0; i < done_count; i++)
		if (done_log[i].task == task)
			return i;
	return -1;
}

static void op_free(struct op *op)
{
	doca_task_free(doca_rdma_task_write_as_task(op->task));
	put(op->src);
	put(op->dst);
}

static uint64_t mem_at(size_t off)
{
	uint64_t v;

	memcpy(&v, mem + off, sizeof(v));
	return v;
}

/* ---- the parser --------------------------------------------------------------- */

struct bad_case {
	const char *rules;
	const char *token; /* what the log line must name as the bad token */
};

static const struct bad_case bad_cases[] = {
	{"write", "write"},
	{"wrte:fail=nth:1:IO_FAILED", "wrte"},
	{"write:fial=nth:1:IO_FAILED", "fial"},
	{"write:fail", "fail"},
	{"write:fail=nht:1:IO_FAILED", "nht"},
	{"write:fail=nth:0:IO_FAILED", "0"},
	{"write:fail=nth:x1:IO_FAILED", "x1"},
	{"write:fail=nth:-1:IO_FAILED", "-1"},
	{"write:fail=nth:99999999999999999999:IO_FAILED", "99999999999999999999"},
	{"write:fail=nth:1:IO_FAIL", "IO_FAIL"},
	{"write:fail=nth:1:DOCA_SUCCESS", "DOCA_SUCCESS"},
	{"write:fail=nth:1", "nth:1"},
	{"write:fail=nth:1:IO_FAILED:again", "again"},
	{"write:fail=nth::IO_FAILED", "write:fail=nth::IO_FAILED"},
	{"read:fail=frac:1.5:TIME_OUT", "1.5"},
	{"read:fail=frac:.5:TIME_OUT", ".5"},
	{"read:fail=frac:0:TIME_OUT", "0"},
	{"any:delay=fixed:200", "200"},
	{"any:delay=fixed:0us", "0us"},
	{"any:delay=fixed:61s", "61s"},
	{"any:delay=fixed:2 ms", "2 ms"},
	{"any:delay=jitter:2ms..50us", "2ms..50us"},
	{"any:delay=jitter:50us-2ms", "50us-2ms"},
	{"any:delay=jitter:50xs..2ms", "50xs"},
	{"any:delay=wobble:1ms", "wobble"},
	{"send:full=depth:0", "0"},
	{"send:full=deep:4", "deep"},
	{"conn:drop=after_ops:0", "0"},
	{"conn:drop=after_seconds:5", "after_seconds"},
	{"write:drop=after_ops:5", "write"},
	{"conn:fail=nth:1:IO_FAILED", "conn"},
	{"send:rnr=storm:20ms:100ms", "send"},
	{"recv:rnr=storm:20ms", "storm:20ms"},
	{"recv:rnr=gale:20ms:100ms", "gale"},
	{"recv:rnr=storm:0ms:100ms", "0ms"},
	{"recv:rnr=storm:100ms:100ms", "100ms"},
	{"recv:rnr=storm:20ms:1min", "1min"},
	{"write:cm_reject=nth:1", "write"},
	{"conn:cm_reject=first:1", "first"},
	{"conn:cm_timeout=nth:0", "0"},
	{"conn:cm_timeout=every:2:3", "3"},
	{"seed=abc", "abc"},
	{"seed=1;seed=2", "seed=2"},
	{" write:fail=nth:1:IO_FAILED", " write"},
	{"write:fail=nth:1:IO_FAILED;bogus", "bogus"},
	{"conn/:drop=after_ops:1", "conn/"},
	{"conn/idx=2:drop=after_ops:1", "idx=2"},
	{"conn/id=0:drop=after_ops:1", "0"},
	{"conn/id=70000:drop=after_ops:1", "70000"},
	{"conn/nth=x:drop=after_ops:1", "x"},
	{"conn/nth=:drop=after_ops:1", "nth="},
	{"conn/id=1/nth=2:drop=after_ops:1", "id=1/nth=2"},
	{"conn/id=1:cm_reject=nth:1", "id=1"},
	{"conn/client:drop=after_ops:1", "client"},
	{"write/server:fail=nth:1:IO_FAILED", "server"},
	{"conn/cleint:cm_reject=nth:1", "cleint"},
	{"recv/id=1:delay=fixed:1ms", "id=1"},
	{"recv/nth=1:rnr=storm:20ms:100ms", "nth=1"},
	{"wrte/id=1:fail=nth:1:IO_FAILED", "wrte"},
	{"conn/client:cm_timeout=nth:0", "0"},
	{"write:fail=nth:1:IO_FAILED;;seed=1", ""},
};

static void expect_refused(const char *rules, const char *token)
{
	char want[256];
	int before = error_lines;

	assert_int_equal(softdoca_fault_set(rules), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(error_lines, before + 1);
	snprintf(want, sizeof(want), "bad token \"%s\"", token);
	if (strstr(last_error, want) == NULL)
		fail_msg("rules \"%s\": the log line does not name %s: %s", rules, want, last_error);
}

/* Before any softdoca_fault_set: the environment's rules, refused at
 * create when malformed, applied when well-formed. */
static void test_env_rules(void **state)
{
	struct doca_rdma *r = NULL;
	struct op ops[3];
	int before = error_lines;

	(void)state;
	assert_ok(setenv("SOFTDOCA_FAULTS", "write:fail=nth:2:IO_FAILD", 1));
	assert_int_equal(doca_rdma_create(dev, &r), DOCA_ERROR_INVALID_VALUE);
	assert_null(r);
	assert_int_equal(error_lines, before + 1);
	assert_non_null(strstr(last_error, "SOFTDOCA_FAULTS"));
	assert_non_null(strstr(last_error, "bad token \"IO_FAILD\""));

	assert_ok(setenv("SOFTDOCA_FAULTS", "write:fail=nth:2:DOCA_ERROR_IO_FAILED", 1));
	pair_up();
	for (int i = 0; i < 3; i++)
		assert_ok(doca_task_submit(write_at(&ops[i], 64 * (size_t)i, 100 + (uint64_t)i)));
	assert_true(progress_until_done(3));
	assert_true(done_log[0].ok);
	assert_int_equal(done_log[1].status, DOCA_ERROR_IO_FAILED);
	assert_true(done_log[2].ok);
	assert_int_equal(mem_at(64), 0);
	assert_int_equal(count_of(SOFTDOCA_FAULT_FAILED), 1);
	for (int i = 0; i < 3; i++)
		op_free(&ops[i]);
	side_destroy(&A);
	side_destroy(&B);
	assert_ok(unsetenv("SOFTDOCA_FAULTS"));
}

static void test_parser(void **state)
{
	static const char *const good[] = {
		"",
		("write:fail=nth:100:DOCA_ERROR_IO_FAILED;read:fail=frac:0.01:TIME_OUT;seed=42;conn:drop=after_ops:500;"
		 "any:delay=fixed:200us;any:delay=jitter:50us..2ms;send:full=depth:4"),
		"recv:delay=fixed:1s;",
		"atomic_cas:fail=every:3:NOT_PERMITTED;sync_add:full=depth:1;conn:drop=after_ms:250",
		"read:fail=frac:1:IO_FAILED;write_imm:delay=jitter:0ns..10ns;seed=18446744073709551615",
		"recv:rnr=storm:20ms:100ms",
		"conn:cm_reject=nth:1;conn:cm_timeout=every:3",
		("conn/client:cm_reject=nth:1;conn/server:cm_timeout=every:2;conn/client:cm_timeout=every:4;"
		 "conn/id=2:drop=after_ops:5;conn/nth=1:drop=after_ms:100;write/id=3:fail=nth:1:IO_FAILED;"
		 "any/nth=2:delay=fixed:1ms;send/id=65535:full=depth:2"),
	};
	char many[2048] = "";
	uint64_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (softdoca_fault_set(good[i]) != DOCA_SUCCESS)
			fail_msg("rules \"%s\" refused: %s", good[i], last_error);
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
		expect_refused(bad_cases[i].rules, bad_cases[i].token);
	/* The empty rule is named by its number. */
	assert_non_null(strstr(last_error, "rule 2"));
	for (int i = 0; i < 17; i++)
		strcat(many, "send:full=depth:4;");
	expect_refused(many, "send:full=depth:4");
	assert_int_equal(softdoca_fault_set(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_fault_get_count(SOFTDOCA_FAULT_KIND_NUM, &n), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_fault_get_count(SOFTDOCA_FAULT_FAILED, NULL), DOCA_ERROR_INVALID_VALUE);
	softdoca_fault_clear();
}

/* ---- fail ----------------------------------------------------------------------- */

/* The 3rd write fails with the chosen status; its callback runs from
 * doca_pe_progress, not inside submit; the target never sees it. */
static void test_fail_nth(void **state)
{
	struct op ops[5];

	(void)state;
	assert_ok(softdoca_fault_set("write:fail=nth:3:DOCA_ERROR_IO_FAILED"));
	pair_up();
	for (int i = 0; i < 5; i++) {
		assert_ok(doca_task_submit(write_at(&ops[i], 64 * (size_t)i, 1000 + (uint64_t)i)));
		assert_int_equal(done_count, i); /* nothing completes inside submit */
		assert_true(progress_until_done(i + 1));
	}
	for (int i = 0; i < 5; i++) {
		assert_ptr_equal(done_log[i].task, doca_rdma_task_write_as_task(ops[i].task));
		if (i == 2) {
			assert_false(done_log[i].ok);
			assert_int_equal(done_log[i].status, DOCA_ERROR_IO_FAILED);
			assert_int_equal(mem_at(64 * (size_t)i), 0);
		} else {
			assert_true(done_log[i].ok);
			assert_int_equal(mem_at(64 * (size_t)i), 1000 + (uint64_t)i);
		}
	}
	assert_int_equal(count_of(SOFTDOCA_FAULT_FAILED), 1);
	for (int i = 0; i < 5; i++)
		op_free(&ops[i]);
	pair_down();
}

/* Every 2nd write fails; a program that retries failed writes gets all
 * of its data across (the README's example). */
static void test_fail_every_and_retry(void **state)
{
	struct op ops[6];
	int failures = 0;

	(void)state;
	assert_ok(softdoca_fault_set("write:fail=every:2:TIME_OUT"));
	pair_up();
	for (int i = 0; i < 6; i++) {
		int before;

		assert_ok(doca_task_submit(write_at(&ops[i], 64 * (size_t)i, 7 + (uint64_t)i)));
		for (;;) {
			before = done_count;
			assert_true(progress_until_done(before + 1));
			if (done_log[before].ok)
				break;
			assert_int_equal(done_log[before].status, DOCA_ERROR_TIME_OUT);
			failures++;
			assert_ok(doca_task_submit(doca_rdma_task_write_as_task(ops[i].task)));
		}
	}
	for (int i = 0; i < 6; i++)
		assert_int_equal(mem_at(64 * (size_t)i), 7 + (uint64_t)i);
	/* Submissions 2, 4, 6, ...: 6 writes need 11 submissions, 5 of which fail. */
	assert_int_equal(failures, 5);
	assert_int_equal(count_of(SOFTDOCA_FAULT_FAILED), 5);
	for (int i = 0; i < 6; i++)
		op_free(&ops[i]);
	pair_down();
}

/* 32 writes under a seeded fraction: which ones fail depends on the seed only. */
static uint32_t frac_run(const char *rules)
{
	struct op ops[32];
	uint32_t pattern = 0;

	assert_ok(softdoca_fault_set(rules));
	pair_up();
	for (int i = 0; i < 32; i++)
		assert_ok(doca_task_submit(write_at(&ops[i], 8 * (size_t)i, 1)));
	assert_true(progress_until_done(32));
	for (int i = 0; i < 32; i++) {
		assert_ptr_equal(done_log[i].task, doca_rdma_task_write_as_task(ops[i].task));
		if (!done_log[i].ok) {
			assert_int_equal(done_log[i].status, DOCA_ERROR_AGAIN);
			pattern |= 1u << i;
		}
		assert_int_equal(mem_at(8 * (size_t)i), done_log[i].ok ? 1 : 0);
	}
	assert_int_equal(count_of(SOFTDOCA_FAULT_FAILED), (uint64_t)__builtin_popcount(pattern));
	for (int i = 0; i < 32; i++)
		op_free(&ops[i]);
	pair_down();
	return pattern;
}

static void test_fail_frac_seeded(void **state)
{
	uint32_t p42, again, p43;

	(void)state;
	p42 = frac_run("seed=42;write:fail=frac:0.5:AGAIN");
	again = frac_run("write:fail=frac:0.5:DOCA_ERROR_AGAIN;seed=42");
	p43 = frac_run("seed=43;write:fail=frac:0.5:AGAIN");
	assert_int_equal(p42, again);
	assert_int_not_equal(p42, p43);
	assert_true(__builtin_popcount(p42) > 4 && __builtin_popcount(p42) < 28);
}

/* ---- full ------------------------------------------------------------------------ */

/* Two sends wait at B (no receive yet): the third is refused with FULL,
 * stays the caller's, and goes once one completed. */
static void test_full_depth(void **state)
{
	struct doca_buf *src;
	struct doca_rdma_task_send *s[3];
	struct doca_rdma_task_receive *r[3];
	union doca_data ud = {.u64 = 0};

	(void)state;
	assert_ok(softdoca_fault_set("send:full=depth:2"));
	pair_up();
	src = buf_on(local_mm, src_mem, 8, 0); /* empty: it fits a receive without a buffer */
	for (int i = 0; i < 3; i++)
		assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &s[i]));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(s[0])));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(s[1])));
	assert_int_equal(doca_task_submit(doca_rdma_task_send_as_task(s[2])), DOCA_ERROR_FULL);
	assert_int_equal(doca_task_try_submit(doca_rdma_task_send_as_task(s[2])), DOCA_ERROR_FULL);
	assert_int_equal(count_of(SOFTDOCA_FAULT_FULL), 2);
	r[0] = post_receive(&B, NULL);
	assert_true(progress_until_done(2));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(s[2])));
	r[1] = post_receive(&B, NULL);
	r[2] = post_receive(&B, NULL);
	assert_true(progress_until_done(6));
	for (int i = 0; i < 6; i++)
		assert_true(done_log[i].ok);
	for (int i = 0; i < 3; i++) {
		doca_task_free(doca_rdma_task_send_as_task(s[i]));
		doca_task_free(doca_rdma_task_receive_as_task(r[i]));
	}
	put(src);
	pair_down();
}

/* ---- delay ------------------------------------------------------------------------- */

/* A 100 ms delay: submit returns at once, the target sees nothing until
 * the delay is over, and the write then lands. */
static void test_delay_fixed(void **state)
{
	struct op op;
	uint64_t t0, t1;

	(void)state;
	assert_ok(softdoca_fault_set("write:delay=fixed:100ms"));
	pair_up();
	t0 = now_ms();
	assert_ok(doca_task_submit(write_at(&op, 0, 42)));
	assert_true(now_ms() - t0 < 50); /* the submitter is not held */
	progress_rounds(50);
	if (now_ms() - t0 < 90) {
		assert_int_equal(done_count, 0);
		assert_int_equal(mem_at(0), 0);
	}
	assert_true(progress_until_done(1));
	t1 = now_ms();
	assert_true(done_log[0].ok);
	assert_true(t1 - t0 >= 100);
	assert_int_equal(mem_at(0), 42);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DELAYED), 1);
	op_free(&op);
	pair_down();
}

/* Jittered delays on one connection never reorder it: 16 writes to one
 * place complete in order and the last one's value stays. */
static void test_delay_jitter_keeps_order(void **state)
{
	struct op ops[16];

	(void)state;
	assert_ok(softdoca_fault_set("seed=7;write:delay=jitter:100us..20ms"));
	pair_up();
	for (int i = 0; i < 16; i++)
		assert_ok(doca_task_submit(write_at(&ops[i], 0, 500 + (uint64_t)i)));
	assert_int_equal(done_count, 0);
	assert_true(progress_until_done(16));
	for (int i = 0; i < 16; i++) {
		assert_true(done_log[i].ok);
		assert_ptr_equal(done_log[i].task, doca_rdma_task_write_as_task(ops[i].task));
	}
	assert_int_equal(mem_at(0), 515);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DELAYED), 16);
	for (int i = 0; i < 16; i++)
		op_free(&ops[i]);
	pair_down();
}

/* Held receives: B's receive is posted 100 ms late, so A's send waits
 * (receiver not ready) and then goes. */
static void test_delay_receive(void **state)
{
	struct doca_buf *src, *dst;
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_receive *recv;
	union doca_data ud = {.u64 = 0};
	uint64_t t0;

	(void)state;
	assert_ok(softdoca_fault_set("recv:delay=fixed:100ms"));
	pair_up();
	src = buf_on(local_mm, src_mem, 8, 8);
	dst = buf_on(local_mm, src_mem + 8192, 64, 0);
	t0 = now_ms();
	recv = post_receive(&B, dst);
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &send));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(send)));
	assert_true(progress_until_done(2));
	assert_true(now_ms() - t0 >= 100);
	assert_true(done_log[0].ok && done_log[1].ok);
	assert_int_equal(data_len_of(dst), 8);
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	put(src);
	put(dst);
	pair_down();
}

/* A receiver-not-ready storm of 200 ms every 10 s, starting with the
 * context: B's receive, posted inside it, waits for its end, and A's send
 * waits for that receive. */
static void test_rnr_storm(void **state)
{
	struct doca_buf *src, *dst;
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_receive *recv;
	union doca_data ud = {.u64 = 0};
	uint64_t t0 = now_ms();

	(void)state;
	assert_ok(softdoca_fault_set("recv:rnr=storm:200ms:10s"));
	pair_up();
	src = buf_on(local_mm, src_mem, 8, 8);
	dst = buf_on(local_mm, src_mem + 8192, 64, 0);
	recv = post_receive(&B, dst);
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &send));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(send)));
	if (now_ms() - t0 < 150) {
		progress_rounds(50);
		if (now_ms() - t0 < 190)
			assert_int_equal(done_count, 0);
	}
	assert_true(progress_until_done(2));
	assert_true(now_ms() - t0 >= 200);
	assert_true(done_log[0].ok && done_log[1].ok);
	assert_int_equal(data_len_of(dst), 8);
	assert_int_equal(count_of(SOFTDOCA_FAULT_RNR), 1);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DELAYED), 0);
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	put(src);
	put(dst);
	pair_down();
}

/* A held write when the context stops fails like any in flight, and
 * never lands. */
static void test_delay_flushed_at_stop(void **state)
{
	struct op op;

	(void)state;
	assert_ok(softdoca_fault_set("write:delay=fixed:10s"));
	pair_up();
	assert_ok(doca_task_submit(write_at(&op, 0, 9)));
	assert_int_equal(doca_ctx_stop(A.ctx), DOCA_ERROR_IN_PROGRESS);
	assert_true(progress_until_done(1));
	assert_false(done_log[0].ok);
	assert_int_equal(done_log[0].status, DOCA_ERROR_IO_FAILED);
	op_free(&op);
	side_stop(&A);
	assert_int_equal(state_of(&A), DOCA_CTX_STATE_IDLE);
	assert_int_equal(mem_at(0), 0);
	pair_down();
}

/* A program that sleeps on the PE's notification handle and progresses
 * only when woken still sees a held write go out when its delay ends
 * (the fault engine's timer wakes the PE), after the delay, and is not
 * woken over and over meanwhile. */
static void test_delay_wakes_sleeper(void **state)
{
	struct op op;
	int wakeups = 0;
	uint64_t t0;

	(void)state;
	assert_ok(softdoca_fault_set("write:delay=fixed:100ms"));
	pair_up();
	t0 = now_ms();
	assert_ok(doca_task_submit(write_at(&op, 0, 77)));
	assert_true(progress_notified_until(&done_count, 1, 5000, &wakeups));
	assert_true(now_ms() - t0 >= 100);
	assert_true(done_log[0].ok);
	assert_int_equal(mem_at(0), 77);
	assert_in_range(wakeups, 1, 10);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DELAYED), 1);
	op_free(&op);
	pair_down();
}

/* ---- drop ------------------------------------------------------------------------- */

/* A drop looks the same from both ends, as a dead peer: each side has a
 * send in flight that the other never receives (no receive posted); A's
 * connection drops at its 2nd operation; both sends fail with an error,
 * A hears a failure and B a disconnection, each naming its connection. */
static void test_drop_seen_by_both_sides(void **state)
{
	struct doca_rdma_task_send *asend, *bsend;
	struct doca_buf *asrc, *bsrc;
	union doca_data ud = {.u64 = 0};
	struct op op;
	int ai, bi;

	(void)state;
	/* B's connection has id 1 too, but B makes one operation only. */
	assert_ok(softdoca_fault_set("conn/id=1:drop=after_ops:2"));
	pair_up();
	bsrc = buf_on(local_mm, src_mem + 2048, 8, 8);
	assert_ok(doca_rdma_task_send_allocate_init(B.rdma, B.conn, bsrc, ud, &bsend));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(bsend)));
	asrc = buf_on(local_mm, src_mem + 1024, 8, 8);
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, asrc, ud, &asend));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(asend)));
	progress_rounds(50);
	assert_int_equal(done_count, 0);
	assert_int_equal(A.failed + A.disconnected + B.failed + B.disconnected, 0);
	assert_ok(doca_task_submit(write_at(&op, 0, 5)));
	assert_true(progress_until(&A.failed, 1));
	assert_true(progress_until(&B.disconnected, 1));
	assert_true(progress_until_done(3));
	assert_ptr_equal(A.failed_conn, A.conn);
	assert_ptr_equal(B.disconnected_conn, B.conn);
	assert_int_equal(A.disconnected + B.failed, 0);
	ai = done_index(doca_rdma_task_send_as_task(asend));
	bi = done_index(doca_rdma_task_send_as_task(bsend));
	assert_true(ai >= 0 && bi >= 0);
	assert_false(done_log[ai].ok);
	assert_false(done_log[bi].ok);
	assert_int_equal(done_log[ai].status, DOCA_ERROR_CONNECTION_RESET);
	assert_int_equal(done_log[bi].status, DOCA_ERROR_CONNECTION_RESET);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DROPPED), 1);
	op_free(&op);
	doca_task_free(doca_rdma_task_send_as_task(asend));
	doca_task_free(doca_rdma_task_send_as_task(bsend));
	put(asrc);
	put(bsrc);
	pair_down();
}

/* /nth= and /id= choose connections: A has two, to C (id 2, established
 * first) and to B (id 1, second). The drop rule for the 2nd established
 * drops B's after one operation and never C's; the fail rule for id 2
 * fails C's 2nd write only. The order of establishment is the point, so
 * the test waits for each connection to be up (conn_is_up: export/connect
 * gives no established callback). */
static void test_select_connection(void **state)
{
	struct doca_rdma_connection *a_to_c;
	const void *desc;
	size_t desc_len;
	struct op ops[4];

	(void)state;
	assert_ok(softdoca_fault_set("conn/nth=2:drop=after_ops:1;write/id=2:fail=nth:2:IO_FAILED"));
	done_count = 0;
	memset(mem, 0, sizeof(mem));
	side_create(&A);
	side_apply_conf(&A, &(const struct side_conf){ALL_RDMA_PERMS, 7, 0, 0});
	assert_ok(doca_rdma_set_max_num_connections(A.rdma, 2));
	side_conf_tasks(&A, NUM_TASKS, false);
	side_start_export(&A);
	assert_ok(doca_rdma_export(A.rdma, &desc, &desc_len, &a_to_c));
	side_make(&B, 0);
	side_make(&C, 0);
	assert_ok(doca_rdma_connect(A.rdma, C.desc, C.desc_len, a_to_c));
	assert_ok(doca_rdma_connect(C.rdma, desc, desc_len, C.conn));
	assert_true(progress_until_up(a_to_c));
	assert_true(progress_until_up(C.conn));
	assert_false(conn_is_up(A.conn));
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	assert_ok(doca_rdma_connect(B.rdma, A.desc, A.desc_len, B.conn));
	assert_true(progress_until_up(A.conn));
	assert_true(progress_until_up(B.conn));

	assert_ok(doca_task_submit(write_on(&ops[0], a_to_c, 0, 1)));
	assert_ok(doca_task_submit(write_on(&ops[1], a_to_c, 64, 2)));
	assert_true(progress_until_done(2));
	assert_true(done_log[0].ok);
	assert_int_equal(done_log[1].status, DOCA_ERROR_IO_FAILED);
	progress_rounds(20);
	assert_int_equal(A.failed + C.disconnected, 0);

	assert_ok(doca_task_submit(write_on(&ops[2], A.conn, 128, 3)));
	assert_true(progress_until(&A.failed, 1));
	assert_true(progress_until(&B.disconnected, 1));
	assert_true(progress_until_done(3));
	assert_ptr_equal(A.failed_conn, A.conn);

	assert_ok(doca_task_submit(write_on(&ops[3], a_to_c, 192, 4)));
	assert_true(progress_until_done(4));
	assert_true(done_log[3].ok);
	assert_int_equal(mem_at(0), 1);
	assert_int_equal(mem_at(64), 0);
	assert_int_equal(mem_at(192), 4);
	assert_int_equal(A.failed, 1);
	assert_int_equal(C.failed + C.disconnected, 0);
	assert_int_equal(A.established + B.established + C.established, 0);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DROPPED), 1);
	assert_int_equal(count_of(SOFTDOCA_FAULT_FAILED), 1);
	for (int i = 0; i < 4; i++)
		op_free(&ops[i]);
	side_destroy(&C);
	pair_down();
}

/* ---- connection requests of our own (/client) ------------------------------------ */

/* A client context alone (the loopback engine has no RDMA CM: a request
 * that reached it would be refused at once). */
static void client_make(uint16_t request_timeout_ms)
{
	side_create(&A);
	if (request_timeout_ms != 0)
		assert_ok(doca_rdma_set_connection_request_timeout(A.rdma, request_timeout_ms));
	side_conf_tasks(&A, NUM_TASKS, false);
	assert_ok(doca_ctx_start(A.ctx));
}

/* Our first request is rejected as a client sees a rejection: the
 * failure callback soon, with the connection's user data and the address
 * asked for, nothing established; the second request is not taken (it
 * reaches the engine, which has no CM). */
static void test_cm_client_reject(void **state)
{
	struct doca_rdma_addr *addr, *got;
	union doca_data ud = {.u64 = 4242}, got_ud;
	enum doca_rdma_addr_type type;
	const char *text;
	uint16_t port;
	uint64_t t0;

	(void)state;
	assert_ok(softdoca_fault_set("conn/client:cm_reject=nth:1"));
	client_make(0);
	assert_ok(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", 4791, &addr));
	t0 = now_ms();
	assert_ok(doca_rdma_connect_to_addr(A.rdma, addr, ud));
	assert_true(progress_until(&A.failed, 1));
	assert_true(now_ms() - t0 < 2000);
	progress_rounds(20);
	assert_int_equal(A.failed, 1);
	assert_int_equal(A.established + A.disconnected, 0);
	assert_ok(doca_rdma_connection_get_user_data(A.failed_conn, &got_ud));
	assert_int_equal(got_ud.u64, 4242);
	assert_ok(doca_rdma_connection_get_addr(A.failed_conn, &got));
	assert_ok(doca_rdma_addr_get_params(got, &type, &text, &port));
	assert_int_equal(type, DOCA_RDMA_ADDR_TYPE_IPv4);
	assert_string_equal(text, "127.0.0.1");
	assert_int_equal(port, 4791);
	assert_int_equal(count_of(SOFTDOCA_FAULT_CM), 1);
	assert_fails(doca_rdma_connect_to_addr(A.rdma, addr, ud), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(count_of(SOFTDOCA_FAULT_CM), 1);
	assert_ok(doca_rdma_addr_destroy(addr));
	side_destroy(&A);
	softdoca_fault_clear();
}

/* Every request of ours left unanswered: each fails at the request
 * timeout (200 ms), not before, for a program asleep on its PE's
 * notification handle too. */
static void test_cm_client_timeout(void **state)
{
	struct doca_rdma_addr *addr;
	union doca_data ud = {.u64 = 0};
	uint64_t t0;

	(void)state;
	assert_ok(softdoca_fault_set("conn/client:cm_timeout=every:1"));
	client_make(200);
	assert_ok(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", 4791, &addr));
	t0 = now_ms();
	assert_ok(doca_rdma_connect_to_addr(A.rdma, addr, ud));
	progress_rounds(20);
	if (now_ms() - t0 < 190)
		assert_int_equal(A.failed, 0);
	assert_true(progress_notified_until(&A.failed, 1, 5000, NULL));
	assert_true(now_ms() - t0 >= 200);
	assert_int_equal(A.established + A.disconnected, 0);

	assert_ok(doca_rdma_connect_to_addr(A.rdma, addr, ud));
	assert_true(progress_notified_until(&A.failed, 2, 5000, NULL));
	assert_int_equal(count_of(SOFTDOCA_FAULT_CM), 2);
	assert_ok(doca_rdma_addr_destroy(addr));
	side_destroy(&A);
	softdoca_fault_clear();
}


/* After its 3rd operation A's connection drops as if B died: the send
 * waiting at B (no receive posted) is flushed with an error, A hears a
 * failure, B a disconnection, and A's connection takes no more work
 * (its writes held 1 ms before that, to show held work counts too). */
static void test_drop_after_ops(void **state)
{
	struct doca_buf *src;
	struct doca_rdma_task_send *send;
	struct op ops[3];
	union doca_data ud = {.u64 = 0};

	(void)state;
	assert_ok(softdoca_fault_set("conn:drop=after_ops:3;write:delay=fixed:1ms"));
	pair_up();
	assert_ok(doca_task_submit(write_at(&ops[0], 0, 1)));
	assert_true(progress_until_done(1));
	assert_ok(doca_task_submit(write_at(&ops[1], 64, 2)));
	assert_true(progress_until_done(2));
	progress_rounds(10);
	assert_int_equal(A.failed + B.disconnected, 0);
	src = buf_on(local_mm, src_mem + 1024, 8, 8);
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, src, ud, &send));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(send)));
	assert_true(progress_until(&A.failed, 1));
	assert_true(progress_until(&B.disconnected, 1));
	assert_true(progress_until_done(3));
	assert_true(done_log[0].ok && done_log[1].ok);
	assert_int_equal(mem_at(64), 2);
	assert_ptr_equal(done_log[2].task, doca_rdma_task_send_as_task(send));
	assert_false(done_log[2].ok);
	assert_int_equal(done_log[2].status, DOCA_ERROR_CONNECTION_RESET);
	assert_int_equal(A.disconnected + B.failed, 0);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DROPPED), 1);
	/* No rule holds work for a connection that cannot carry it: the
	 * refusal comes at submit, as without faults. */
	(void)write_at(&ops[2], 128, 3);
	assert_fails(doca_task_try_submit(doca_rdma_task_write_as_task(ops[2].task)), DOCA_ERROR_NOT_CONNECTED);
	assert_fails(doca_task_submit(doca_rdma_task_write_as_task(ops[2].task)), DOCA_ERROR_NOT_CONNECTED);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DELAYED), 2);
	for (int i = 0; i < 3; i++)
		op_free(&ops[i]);
	doca_task_free(doca_rdma_task_send_as_task(send));
	put(src);
	pair_down();
}

/* 150 ms after it was established the connection drops: one side hears a
 * failure, the other a disconnection, once each. */
static void test_drop_after_ms(void **state)
{
	uint64_t t0;

	(void)state;
	assert_ok(softdoca_fault_set("conn:drop=after_ms:150"));
	t0 = now_ms();
	pair_up();
	progress_rounds(100);
	if (now_ms() - t0 < 140)
		assert_int_equal(A.failed + B.failed + A.disconnected + B.disconnected, 0);
	while (A.failed + B.failed == 0 && now_ms() - t0 < 10000)
		(void)doca_pe_progress(pe);
	assert_true(now_ms() - t0 >= 150);
	assert_int_equal(A.failed + B.failed, 1);
	while (A.disconnected + B.disconnected == 0 && now_ms() - t0 < 10000)
		(void)doca_pe_progress(pe);
	assert_int_equal(A.failed + A.disconnected, 1);
	assert_int_equal(B.failed + B.disconnected, 1);
	progress_rounds(1000);
	assert_int_equal(count_of(SOFTDOCA_FAULT_DROPPED), 1);
	pair_down();
}

/* ---- rules changed while running ------------------------------------------------------ */

/* Clearing the rules stops the faults of a running context at once. */
static void test_clear_while_running(void **state)
{
	struct op ops[2];

	(void)state;
	assert_ok(softdoca_fault_set("any:fail=every:1:IO_FAILED"));
	pair_up();
	assert_ok(doca_task_submit(write_at(&ops[0], 0, 5)));
	assert_true(progress_until_done(1));
	assert_false(done_log[0].ok);
	softdoca_fault_clear();
	assert_int_equal(count_of(SOFTDOCA_FAULT_FAILED), 0);
	assert_ok(doca_task_submit(write_at(&ops[1], 64, 6)));
	assert_true(progress_until_done(2));
	assert_true(done_log[1].ok);
	assert_int_equal(mem_at(64), 6);
	for (int i = 0; i < 2; i++)
		op_free(&ops[i]);
	pair_down();
}

/* ---- group ---------------------------------------------------------------------------------- */

static int group_setup(void **state)
{
	(void)state;
	if (rdma_pair_setup() != 0)
		return -1;
	local_mm = local_mmap(src_mem, sizeof(src_mem), ALL_RDMA_PERMS);
	{
		struct doca_mmap *target = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);

		remote_mm = remote_of(target);
		*state = target;
	}
	return 0;
}

static int group_teardown(void **state)
{
	assert_ok(doca_mmap_stop(remote_mm));
	assert_ok(doca_mmap_destroy(remote_mm));
	assert_ok(doca_mmap_destroy(*state));
	assert_ok(doca_mmap_destroy(local_mm));
	rdma_pair_teardown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* First: SOFTDOCA_FAULTS is read only until the API is used. */
		cmocka_unit_test(test_env_rules),
		cmocka_unit_test(test_parser),
		cmocka_unit_test(test_fail_nth),
		cmocka_unit_test(test_fail_every_and_retry),
		cmocka_unit_test(test_fail_frac_seeded),
		cmocka_unit_test(test_full_depth),
		cmocka_unit_test(test_delay_fixed),
		cmocka_unit_test(test_delay_jitter_keeps_order),
		cmocka_unit_test(test_delay_receive),
		cmocka_unit_test(test_delay_flushed_at_stop),
		cmocka_unit_test(test_rnr_storm),
		cmocka_unit_test(test_drop_after_ops),
		cmocka_unit_test(test_drop_after_ms),
		cmocka_unit_test(test_delay_wakes_sleeper),
		cmocka_unit_test(test_drop_seen_by_both_sides),
		cmocka_unit_test(test_select_connection),
		cmocka_unit_test(test_cm_client_reject),
		cmocka_unit_test(test_cm_client_timeout),
		cmocka_unit_test(test_clear_while_running),
	};

	if (setenv("SOFTDOCA_ENGINE", "loopback", 1) != 0 || setenv("UCX_TLS", "softdoca_no_such_transport", 1) != 0 ||
	    unsetenv("SOFTDOCA_FAULTS") != 0)
		return 1;
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
