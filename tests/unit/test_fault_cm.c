/*
 * Unit tests of fault injection's RDMA CM rules over the UCX engine (the
 * loopback engine has no CM), in one process: A listens on 127.0.0.1, B
 * connects, both on one PE that the test only progresses when its
 * notification handle says so. A request that waits for a cm_ rule must
 * wake that PE: the rejection reaches B long before B's own request
 * timeout, and the next request, which no rule takes, is established.
 * The fixture is rdma_pair.c.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_ctx.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <softdoca_fault.h>

#include "rdma_pair.h"

#define NUM_TASKS 8
#define REQUEST_TIMEOUT_MS 10000 /* B's: far longer than the test waits */

static int requests; /* requests A's application saw */

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	(void)task;
	(void)ok;
	(void)ctx_user_data;
	fail_msg("no task runs in these tests");
}

static void on_request(struct doca_rdma_connection *conn, union doca_data ctxud)
{
	(void)ctxud;
	requests++;
	assert_ok(doca_rdma_connection_accept(conn, NULL, 0));
}

static void server_make(uint16_t *port)
{
	side_create(&A);
	side_conf_tasks(&A, NUM_TASKS, false);
	assert_ok(doca_rdma_set_connection_state_callbacks(A.rdma, on_request, on_established, on_failure,
							    on_disconnect));
	assert_ok(doca_ctx_start(A.ctx));
	/* A port nobody holds: a few tries in a range away from the others. */
	for (uint16_t p = (uint16_t)(21000 + getpid() % 2000), tries = 0; tries < 50; p++, tries++) {
		if (doca_rdma_start_listen_to_port(A.rdma, p) == DOCA_SUCCESS) {
			*port = p;
			return;
		}
	}
	fail_msg("no free port to listen on in 50 tries");
}

static void client_make(void)
{
	side_create(&B);
	assert_ok(doca_rdma_set_connection_request_timeout(B.rdma, REQUEST_TIMEOUT_MS));
	side_conf_tasks(&B, NUM_TASKS, false);
	assert_ok(doca_ctx_start(B.ctx));
}

static void test_cm_reject_wakes_sleeper(void **state)
{
	struct doca_rdma_addr *addr;
	union doca_data ud = {.u64 = 0};
	uint16_t port = 0;
	uint64_t count = 0, t0;

	(void)state;
	assert_ok(softdoca_fault_set("conn/server:cm_reject=nth:1"));
	server_make(&port);
	client_make();
	assert_ok(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", port, &addr));
	t0 = now_ms();
	assert_ok(doca_rdma_connect_to_addr(B.rdma, addr, ud));
	assert_true(progress_notified_until(&B.failed, 1, 4000, NULL));
	assert_true(now_ms() - t0 < 4000);
	assert_int_equal(requests, 0);
	assert_int_equal(A.established + B.established, 0);
	assert_ok(softdoca_fault_get_count(SOFTDOCA_FAULT_CM, &count));
	assert_int_equal(count, 1);

	assert_ok(doca_rdma_connect_to_addr(B.rdma, addr, ud));
	assert_true(progress_notified_until(&B.established, 1, 8000, NULL));
	assert_true(progress_notified_until(&A.established, 1, 8000, NULL));
	/* RDMA CM: exactly one established callback a side. */
	progress_rounds(20);
	assert_int_equal(A.established, 1);
	assert_int_equal(B.established, 1);
	assert_int_equal(requests, 1);
	assert_int_equal(B.failed, 1);
	assert_ok(doca_rdma_addr_destroy(addr));
	side_destroy(&B);
	side_destroy(&A);
	softdoca_fault_clear();
}

static int group_setup(void **state)
{
	(void)state;
	return rdma_pair_setup() == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	rdma_pair_teardown();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cm_reject_wakes_sleeper),
	};

	if (unsetenv("SOFTDOCA_ENGINE") != 0 || unsetenv("SOFTDOCA_FAULTS") != 0)
		return 1;
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
