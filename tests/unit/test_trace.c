/*
 * Unit tests of the timeline (SOFTDOCA_TRACE, src/core/trace.c) over the
 * loopback engine. meson sets SOFTDOCA_TRACE (the library reads it before
 * main) and TRACE_TEST_MODE picks the case:
 *   tasks  three writes (the second failed by SOFTDOCA_FAULTS), flushed:
 *          well-formed JSON with their allocations, submits, sends,
 *          arrivals at the target, completions and statuses, frees,
 *          context states and connection events, each on its track
 *          (the connection's, the target connection's, the context's);
 *   ring   the same run into SOFTDOCA_TRACE_EVENTS=8 slots: 8 events
 *          written, the rest counted as dropped in the metadata;
 *   off    a SOFTDOCA_TRACE that cannot be written: tracing stays off and
 *          a flush says so.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_ctx.h>
#include <doca_error.h>
#include <doca_rdma.h>

#include "rdma_pair.h"
#include "trace.h"

#define MEM_SIZE 16384
#define NUM_WRITES 3

static _Alignas(64) char mem[MEM_SIZE];
static struct doca_mmap *local_mm, *remote_mm;
static int done_count;
static doca_error_t done_status[8];

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	(void)ok;
	(void)ctx_user_data;
	assert_true(done_count < 8);
	done_status[done_count++] = doca_task_get_status(task);
	doca_task_free(task);
}

/* Connect A and B, write NUM_WRITES times from A, stop both. */
static void run_writes(void)
{
	assert_int_equal(rdma_pair_setup(), 0);
	local_mm = local_mmap(mem, sizeof(mem), ALL_RDMA_PERMS);
	remote_mm = remote_of(local_mm);
	side_create(&A);
	side_create(&B);
	assert_ok(doca_rdma_set_permissions(A.rdma, ALL_RDMA_PERMS));
	assert_ok(doca_rdma_set_permissions(B.rdma, ALL_RDMA_PERMS));
	side_conf_tasks(&A, 4, false);
	side_conf_tasks(&B, 4, false);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	pair_connect();
	for (int i = 0; i < NUM_WRITES; i++) {
		struct doca_buf *src = buf_on(local_mm, mem, 64, 64);
		struct doca_buf *dst = buf_on(remote_mm, mem + 8192, 64, 0);
		struct doca_rdma_task_write *wr;
		union doca_data ud = {.u64 = 0};

		assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src, dst, ud, &wr));
		assert_ok(doca_task_submit(doca_rdma_task_write_as_task(wr)));
		assert_true(progress_until(&done_count, i + 1));
		put(src);
		put(dst);
	}
	assert_int_equal(done_status[0], DOCA_SUCCESS);
	assert_int_equal(done_status[1], DOCA_ERROR_IO_FAILED);
	assert_int_equal(done_status[2], DOCA_SUCCESS);
	/* Export/connect: established (the trace says so) with no callback. */
	assert_int_equal(A.established + B.established, 0);
	side_destroy(&A);
	side_destroy(&B);
	assert_ok(doca_mmap_stop(remote_mm));
	assert_ok(doca_mmap_destroy(remote_mm));
	assert_ok(doca_mmap_destroy(local_mm));
	rdma_pair_teardown();
}

/* The whole trace file, NUL-terminated (the caller frees it). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text;
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0 && len < (64L << 20));
	rewind(f);
	text = malloc((size_t)len + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	text[len] = '\0';
	fclose(f);
	return text;
}

static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/*
 * A structural JSON check that needs nothing installed: brackets balance
 * outside strings, strings close, escapes are JSON's, no trailing comma
 * before a closing bracket, and nothing follows the top-level object.
 */
static bool json_shape_ok(const char *text)
{
	char stack[64];
	int depth = 0;
	bool in_str = false;
	char last = 0; /* last non-space character outside strings */
	const char *p = text;

	while (*p == ' ' || *p == '\n')
		p++;
	if (*p != '{')
		return false;
	for (; *p != '\0'; p++) {
		char c = *p;

		if (in_str) {
			if (c == '\\') {
				if (strchr("\"\\/bfnrtu", p[1]) == NULL)
					return false;
				p++;
			} else if (c == '"') {
				in_str = false;
			} else if ((unsigned char)c < 0x20) {
				return false;
			}
			continue;
		}
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
			continue;
		if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (depth == (int)sizeof(stack))
				return false;
			stack[depth++] = c;
		} else if (c == '}' || c == ']') {
			if (depth == 0 || stack[depth - 1] != (c == '}' ? '{' : '[') || last == ',')
				return false;
			if (--depth == 0) {
				for (p++; *p == ' ' || *p == '\n'; p++)
					;
				return *p == '\0';
			}
		}
		last = c;
	}
	return false;
}

/* python3 -m json.tool as a second opinion, when python3 is there. */
static void json_tool_check(const char *path)
{
	char cmd[4352];

	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		printf("note: python3 not found; only the built-in JSON check ran\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool '%s' >/dev/null", path);
	assert_int_equal(system(cmd), 0);
}

/* The "tid" of the first line that holds needle, or -1. */
static long tid_of(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);
	const char *t;

	if (p == NULL)
		return -1;
	t = strstr(p, "\"tid\":");
	if (t == NULL || strchr(p, '\n') < t)
		return -1;
	return strtol(t + 6, NULL, 10);
}

/* Every line with needle is on track tid. */
static bool all_on(const char *text, const char *needle, long tid)
{
	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		if (tid_of(p, needle) != tid)
			return false;
	return true;
}

/* A's writes sit on A's connection's track, their arrivals on B's, the
 * context states on the contexts' own tracks; each track is named. */
static void check_tracks(const char *text)
{
	long a_conn = tid_of(text, "\"name\":\"sent\"");
	long b_conn = tid_of(text, "\"name\":\"at_target\"");
	long a_ctx = tid_of(text, "\"name\":\"ctx_state\"");
	char want[128];

	assert_true(a_conn > 0 && b_conn > 0 && a_ctx > 0);
	assert_true(a_conn != b_conn && a_conn != a_ctx && b_conn != a_ctx);
	assert_true(all_on(text, "{\"name\":\"rdma write\"", a_conn));
	assert_true(all_on(text, "\"name\":\"allocated\"", a_conn));
	assert_true(all_on(text, "\"name\":\"submitted\"", a_conn));
	assert_true(all_on(text, "\"name\":\"done\"", a_conn));
	assert_true(all_on(text, "\"name\":\"freed\"", a_conn));
	assert_true(all_on(text, "\"name\":\"at_target\"", b_conn));
	snprintf(want, sizeof(want), "\"tid\":%ld,\"args\":{\"name\":\"rdma connection ", a_conn);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\"tid\":%ld,\"args\":{\"name\":\"rdma connection ", b_conn);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\"tid\":%ld,\"args\":{\"name\":\"ctx ", a_ctx);
	assert_non_null(strstr(text, want));
	assert_int_equal(count_of(text, "\"name\":\"process_name\""), 1);
}

static void test_tasks(void **state)
{
	const char *path = getenv(SOFTDOCA_TRACE_ENV);
	uint64_t recorded, dropped;
	char *text;

	(void)state;
	/* Tracing starts with the first context, not before main. */
	assert_false(softdoca_trace_on);
	run_writes();
	assert_true(softdoca_trace_on);
	assert_ok(softdoca_trace_flush());
	softdoca_trace_counts(&recorded, &dropped);
	assert_int_equal(dropped, 0);
	text = slurp(path);
	assert_true(json_shape_ok(text));
	json_tool_check(path);
	assert_non_null(strstr(text, "{\"traceEvents\":["));
	assert_int_equal(count_of(text, "{\"name\":\"rdma write\",\"cat\":\"task\",\"ph\":\"X\""), NUM_WRITES);
	assert_int_equal(count_of(text, "\"name\":\"submitted\",\"cat\":\"task\",\"ph\":\"i\",\"s\":\"t\""),
			 NUM_WRITES);
	assert_int_equal(count_of(text, "\"name\":\"freed\""), NUM_WRITES);
	assert_int_equal(count_of(text, "\"name\":\"allocated\",\"cat\":\"task\""), NUM_WRITES);
	/* The failed write never reached the engine: two sent, two at B. */
	assert_int_equal(count_of(text, "\"name\":\"sent\",\"cat\":\"task\""), NUM_WRITES - 1);
	assert_int_equal(count_of(text, "\"name\":\"at_target\""), NUM_WRITES - 1);
	assert_int_equal(count_of(text, "\"args\":{\"op\":\"write\",\"seq\":0,\"from_conn\":"), 1);
	assert_int_equal(count_of(text, "\"args\":{\"op\":\"write\",\"seq\":1,\"from_conn\":"), 1);
	check_tracks(text);
	assert_int_equal(count_of(text, "\"status\":\"DOCA_ERROR_IO_FAILED\"}}"), 2); /* done + completed */
	/* Both contexts: idle -> starting? -> running, then back to idle. */
	assert_true(count_of(text, "\"to\":\"running\"") >= 2);
	assert_true(count_of(text, "\"to\":\"idle\"") >= 2);
	/* The state change is on the timeline though no callback ran for it. */
	assert_int_equal(count_of(text, "\"name\":\"conn_established\""), 2);
	assert_true(count_of(text, "\"name\":\"thread_name\"") >= 3);
	assert_non_null(strstr(text, "\"dropped_events\":0,"));
	free(text);
}

static void test_ring(void **state)
{
	const char *path = getenv(SOFTDOCA_TRACE_ENV);
	uint64_t recorded, dropped;
	char want[64];
	char *text;

	(void)state;
	/* Tracing starts with the first context, not before main. */
	assert_false(softdoca_trace_on);
	run_writes();
	assert_true(softdoca_trace_on);
	assert_ok(softdoca_trace_flush());
	softdoca_trace_counts(&recorded, &dropped);
	assert_true(recorded > 8);
	assert_int_equal(dropped, recorded - 8);
	text = slurp(path);
	assert_true(json_shape_ok(text));
	json_tool_check(path);
	/* Events are every line with a "ts" but the metadata ("M") ones. */
	assert_int_equal(count_of(text, "\"ts\":"), 8);
	snprintf(want, sizeof(want), "\"dropped_events\":%llu,", (unsigned long long)dropped);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "\"ring_slots\":8,"));
	free(text);
}

static void test_off(void **state)
{
	(void)state;
	assert_false(softdoca_trace_on);
	assert_int_equal(softdoca_trace_flush(), DOCA_ERROR_BAD_STATE);
}

int main(void)
{
	const char *mode = getenv("TRACE_TEST_MODE");
	const struct CMUnitTest tasks[] = {cmocka_unit_test(test_tasks)};
	const struct CMUnitTest ring[] = {cmocka_unit_test(test_ring)};
	const struct CMUnitTest off[] = {cmocka_unit_test(test_off)};

	if (mode == NULL) {
		fprintf(stderr, "TRACE_TEST_MODE (tasks, ring or off) is not set\n");
		return 1;
	}
	/* The engine is read when the first context starts, not before main. */
	if (setenv("SOFTDOCA_ENGINE", "loopback", 1) != 0)
		return 1;
	if (strcmp(mode, "tasks") == 0)
		return cmocka_run_group_tests(tasks, NULL, NULL);
	if (strcmp(mode, "ring") == 0)
		return cmocka_run_group_tests(ring, NULL, NULL);
	if (strcmp(mode, "off") == 0)
		return cmocka_run_group_tests(off, NULL, NULL);
	fprintf(stderr, "TRACE_TEST_MODE=%s is not tasks, ring or off\n", mode);
	return 1;
}
