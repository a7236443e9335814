/*
 * Tests of DOCA Comch's control path: a server and clients in one process
 * and in two (fork), ordered messages, size limits, a killed peer noticed
 * within a bound, hostile clients speaking the wire directly, and fds and
 * heap flat over many connect/disconnect cycles.
 *
 * Every run gets its own rendezvous directory (SOFTDOCA_PCIE_DIR).
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_log.h>
#include <doca_comch_producer.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_pe.h>

#include "channel.h"
#include "comch_test.h"
#include "dev_rep.h"
#include "log_internal.h"

#define NAME "softdoca-comch-test"
#define N_MSGS 2000
#define SLOTS 64
#define TASKS 32

static char dir[64];
static struct doca_dev *open_dev(void);

/* The representor of the first soft device's PCI function, opened once:
 * the server side of the function the clients' device (also the first)
 * is the host end of. */
static struct doca_dev_rep *test_rep(void)
{
	static struct doca_dev_rep *rep;
	static struct doca_dev *dpu_dev;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	struct doca_devinfo_rep **list;
	uint32_t n;

	if (rep != NULL)
		return rep;
	dpu_dev = open_dev();
	assert_non_null(dpu_dev);
	assert_int_equal(doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(dpu_dev), pci), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_rep_create_list(dpu_dev, DOCA_DEVINFO_REP_FILTER_NET, &list, &n), DOCA_SUCCESS);
	for (uint32_t i = 0; i < n && rep == NULL; i++) {
		uint8_t eq = 0;

		if (doca_devinfo_rep_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			assert_int_equal(doca_dev_rep_open(list[i], &rep), DOCA_SUCCESS);
	}
	doca_devinfo_rep_destroy_list(list);
	assert_non_null(rep);
	return rep;
}
#define TEST_REP test_rep()

static struct doca_dev *open_dev(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	if (n > 0 && doca_dev_open(list[0], &dev) != DOCA_SUCCESS)
		dev = NULL;
	doca_devinfo_destroy_list(list);
	return dev;
}

/* ---- message content: index first, then a pattern; sizes vary ---- */

static uint32_t msg_len(uint32_t i)
{
	return 4 + (i * 37u) % (COMCH_MAX_MSG_SIZE - 3);
}

static void msg_fill(uint8_t *p, uint32_t i)
{
	uint32_t len = msg_len(i);

	memcpy(p, &i, 4);
	for (uint32_t k = 4; k < len; k++)
		p[k] = (uint8_t)(i + k);
}

static bool msg_ok(const uint8_t *p, uint32_t len, uint32_t i)
{
	uint32_t got;

	if (len != msg_len(i))
		return false;
	memcpy(&got, p, 4);
	if (got != i)
		return false;
	for (uint32_t k = 4; k < len; k++)
		if (p[k] != (uint8_t)(i + k))
			return false;
	return true;
}

/* ---- server side state ---- */

struct srv {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_comch_server *server;
	struct doca_ctx *ctx;
	struct doca_comch_connection *last_conn;
	volatile int connects, disconnects, received, bad, sent_ok, sent_err;
	uint32_t acks[N_MSGS];
	bool echo;
	int only_one; /* disconnect any client beyond the first, from the connect callback */
	int disconnect_in_recv; /* disconnect from the receive callback, then read the message */
	int sends_done_at_disconnect; /* sent_ok + sent_err when the disconnection callback ran */
};

static struct srv S;

static void srv_connect(struct doca_comch_event_connection_status_changed *ev, struct doca_comch_connection *conn,
			uint8_t ok)
{
	(void)ev;
	assert_non_null(doca_comch_server_get_server_ctx(conn));
	assert_null(doca_comch_client_get_client_ctx(conn));
	if (ok)
		S.connects++;
	if (S.only_one && S.connects > 1) {
		/* What DOCA's applications/common does with a second client. */
		assert_int_equal(doca_comch_server_disconnect(S.server, conn), DOCA_SUCCESS);
		assert_int_equal(doca_comch_server_disconnect(S.server, conn), DOCA_ERROR_INVALID_VALUE);
		return;
	}
	S.last_conn = conn;
}

static void srv_disconnect(struct doca_comch_event_connection_status_changed *ev,
			   struct doca_comch_connection *conn, uint8_t ok)
{
	(void)ev;
	(void)conn;
	(void)ok;
	S.sends_done_at_disconnect = S.sent_ok + S.sent_err;
	S.disconnects++;
}

static void srv_sent(struct doca_comch_task_send *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	S.sent_ok++;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void srv_send_err(struct doca_comch_task_send *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	S.sent_err++;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void srv_recv(struct doca_comch_event_msg_recv *ev, uint8_t *buf, uint32_t len,
		     struct doca_comch_connection *conn)
{
	struct doca_comch_task_send *task;
	uint32_t i = (uint32_t)S.received;

	(void)ev;
	if (S.disconnect_in_recv &&
	    doca_comch_server_disconnect(S.server, conn) != DOCA_SUCCESS)
		S.bad++;
	/* The message stays readable for the whole callback, even then. */
	if (!msg_ok(buf, len, i))
		S.bad++;
	S.received++;
	if (!S.echo)
		return;
	S.acks[i % N_MSGS] = i; /* stays valid until the completion */
	if (doca_comch_server_task_send_alloc_init(S.server, conn, &S.acks[i % N_MSGS], 4, &task) != DOCA_SUCCESS ||
	    doca_task_submit(doca_comch_task_send_as_task(task)) != DOCA_SUCCESS)
		S.bad++;
}

static void srv_open(uint32_t max_msg)
{
	memset(&S, 0, sizeof(S));
	S.dev = open_dev();
	assert_non_null(S.dev);
	assert_int_equal(doca_pe_create(&S.pe), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_create(S.dev, TEST_REP, NAME, &S.server), DOCA_SUCCESS);
	S.ctx = doca_comch_server_as_ctx(S.server);
	assert_int_equal(doca_comch_server_set_max_msg_size(S.server, max_msg), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_task_send_set_conf(S.server, srv_sent, srv_send_err, 256), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_event_msg_recv_register(S.server, srv_recv), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_event_connection_status_changed_register(S.server, srv_connect,
										    srv_disconnect),
			 DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(S.pe, S.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(S.ctx), DOCA_SUCCESS);
}

static void srv_close(void)
{
	(void)doca_ctx_stop(S.ctx);
	assert_true(progress_until_state(S.pe, S.ctx, DOCA_CTX_STATE_IDLE, 3000));
	assert_int_equal(doca_comch_server_destroy(S.server), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(S.pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(S.dev), DOCA_SUCCESS);
}

/* ---- client side state ---- */

struct cli {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_comch_client *client;
	struct doca_ctx *ctx;
	volatile int acked, bad, sent_ok, sent_err;
	uint8_t slots[SLOTS][COMCH_MAX_MSG_SIZE];
};

static struct cli C;

static void cli_sent(struct doca_comch_task_send *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	C.sent_ok++;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void cli_send_err(struct doca_comch_task_send *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	C.sent_err++;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void cli_recv(struct doca_comch_event_msg_recv *ev, uint8_t *buf, uint32_t len,
		     struct doca_comch_connection *conn)
{
	uint32_t got;

	(void)ev;
	if (doca_comch_client_get_client_ctx(conn) != C.client || len != 4)
		C.bad++;
	memcpy(&got, buf, 4);
	if (got != (uint32_t)C.acked)
		C.bad++;
	C.acked++;
}

/* Returns 0 or the failed step (for a child's exit status). */
static int cli_open_n(struct doca_pe *shared_pe, uint32_t num_tasks)
{
	memset(&C, 0, sizeof(C));
	C.dev = open_dev();
	if (C.dev == NULL)
		return 1;
	if (shared_pe != NULL)
		C.pe = shared_pe;
	else if (doca_pe_create(&C.pe) != DOCA_SUCCESS)
		return 2;
	if (doca_comch_client_create(C.dev, NAME, &C.client) != DOCA_SUCCESS)
		return 3;
	C.ctx = doca_comch_client_as_ctx(C.client);
	if (doca_comch_client_task_send_set_conf(C.client, cli_sent, cli_send_err, num_tasks) != DOCA_SUCCESS ||
	    doca_comch_client_event_msg_recv_register(C.client, cli_recv) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(C.pe, C.ctx) != DOCA_SUCCESS)
		return 4;
	if (doca_ctx_start(C.ctx) != DOCA_ERROR_IN_PROGRESS)
		return 5; /* a client starts asynchronously */
	return 0;
}

static int cli_open(struct doca_pe *shared_pe)
{
	return cli_open_n(shared_pe, TASKS);
}

static int cli_close(bool own_pe)
{
	(void)doca_ctx_stop(C.ctx);
	if (!progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_IDLE, 3000))
		return 20;
	if (doca_comch_client_destroy(C.client) != DOCA_SUCCESS)
		return 21;
	if (own_pe && doca_pe_destroy(C.pe) != DOCA_SUCCESS)
		return 22;
	if (doca_dev_close(C.dev) != DOCA_SUCCESS)
		return 23;
	return 0;
}

/* The client of the two-process test: N_MSGS ordered messages of varying
 * sizes, each acknowledged by the server in order. */
static int client_child_main(void)
{
	struct doca_comch_connection *conn;
	uint32_t next = 0;
	uint64_t end;
	int rc = cli_open(NULL);

	if (rc != 0)
		return rc;
	if (!progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 5000))
		return 6;
	if (doca_comch_client_get_connection(C.client, &conn) != DOCA_SUCCESS)
		return 7;
	end = now_ms() + 30000;
	while (C.acked < N_MSGS && now_ms() < end) {
		struct doca_comch_task_send *task;

		while (next < N_MSGS && next - (uint32_t)C.sent_ok < TASKS) {
			uint8_t *slot = C.slots[next % SLOTS];

			msg_fill(slot, next);
			if (doca_comch_client_task_send_alloc_init(C.client, conn, slot, msg_len(next), &task) !=
			    DOCA_SUCCESS)
				break;
			if (doca_task_submit(doca_comch_task_send_as_task(task)) != DOCA_SUCCESS)
				return 8;
			next++;
		}
		if (doca_pe_progress(C.pe) == 0)
			usleep(50);
	}
	if (C.acked != N_MSGS || C.bad != 0 || C.sent_err != 0)
		return 9;
	return cli_close(true);
}

/* Children still running: a test that fails leaves none behind (an idle
 * child never exits, and would hold the test's output open). */
static pid_t children[8];

static pid_t spawn_child(const char *role)
{
	pid_t pid = comch_test_spawn("test_comch", role);

	for (size_t i = 0; i < sizeof(children) / sizeof(children[0]) && pid > 0; i++) {
		if (children[i] == 0) {
			children[i] = pid;
			break;
		}
	}
	return pid;
}

/* Kill and reap what a failed test left. Only a child of ours still
 * running is killed: one the test reaped is no child any more (ECHILD),
 * so a pid the system gave someone else since is left alone. */
static void children_reap(void)
{
	for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++) {
		if (children[i] > 0 && waitpid(children[i], NULL, WNOHANG) == 0) {
			(void)kill(children[i], SIGKILL);
			(void)waitpid(children[i], NULL, 0);
		}
		children[i] = 0;
	}
}

static int child_main(const char *role)
{
	if (strcmp(role, "client") == 0)
		return client_child_main();
	if (strcmp(role, "idle-client") == 0) {
		/* Connect, then keep progressing until killed. */
		if (cli_open(NULL) != 0)
			return 1;
		for (;;)
			if (doca_pe_progress(C.pe) == 0)
				usleep(1000);
	}
	if (strcmp(role, "idle-server") == 0) {
		srv_open(COMCH_MAX_MSG_SIZE);
		for (;;)
			if (doca_pe_progress(S.pe) == 0)
				usleep(1000);
	}
	return 126;
}

static int setup_dir(void **state)
{
	(void)state;
	comch_test_dir_make(dir, sizeof(dir), "/tmp/softdoca-comch-test-XXXXXX");
	return 0;
}

static int teardown_dir(void **state)
{
	(void)state;
	children_reap();
	assert_int_equal(rmdir(dir), 0); /* the server removed its socket and secret */
	return 0;
}

/* ---- tests ---- */

static void test_two_process_ordered(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = spawn_child("client");
	assert_true(pid > 0);
	srv_open(COMCH_MAX_MSG_SIZE);
	S.echo = true;
	assert_true(progress_until(S.pe, &S.connects, 1, 10000));
	assert_true(progress_until(S.pe, &S.received, N_MSGS, 30000));
	assert_true(progress_until(S.pe, &S.disconnects, 1, 10000)); /* the client stopped: BYE */
	assert_int_equal(S.bad, 0);
	assert_int_equal(S.sent_ok, N_MSGS);
	assert_int_equal(S.sent_err, 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	srv_close();
}

static void test_killed_client_noticed(void **state)
{
	uint64_t t0;
	int status;
	pid_t pid;

	(void)state;
	pid = spawn_child("idle-client");
	assert_true(pid > 0);
	srv_open(COMCH_MAX_MSG_SIZE);
	assert_true(progress_until(S.pe, &S.connects, 1, 10000));
	t0 = now_ms();
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_true(progress_until(S.pe, &S.disconnects, 1, 2000));
	assert_true(now_ms() - t0 <= 2000);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	srv_close();
}

static void test_killed_server_noticed(void **state)
{
	struct doca_comch_connection *conn;
	struct doca_comch_task_send *task;
	static const char msg[] = "are you there";
	uint64_t t0;
	int status;
	pid_t pid;

	(void)state;
	pid = spawn_child("idle-server");
	assert_true(pid > 0);
	assert_int_equal(cli_open(NULL), 0);
	assert_true(progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 10000));
	assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);
	t0 = now_ms();
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* The client's context fails and stops on its own, within a bound. */
	assert_true(progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_IDLE, 2000));
	assert_true(now_ms() - t0 <= 2000);
	/* A stopped client takes no new task. */
	assert_int_not_equal(doca_comch_client_task_send_alloc_init(C.client, conn, msg, sizeof(msg), &task),
			     DOCA_SUCCESS);
	assert_int_equal(cli_close(true), 0);
	/* The dead server's files stay behind; a new server replaces them. */
	srv_open(COMCH_MAX_MSG_SIZE);
	srv_close();
}

static void test_limits_and_unsupported(void **state)
{
	struct doca_comch_connection *conn;
	struct doca_comch_task_send *task;
	struct doca_comch_producer *producer;
	struct doca_comch_consumer *consumer;
	struct doca_comch_server *dup;
	static uint8_t big[COMCH_MAX_MSG_SIZE + 1];
	uint32_t v;

	(void)state;
	srv_open(64); /* the server accepts at most 64 bytes per message */
	assert_int_equal(doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(S.dev), &v), DOCA_SUCCESS);
	assert_int_equal(v, COMCH_MAX_MSG_SIZE);
	assert_int_equal(doca_comch_cap_get_max_name_len(doca_dev_as_devinfo(S.dev), &v), DOCA_SUCCESS);
	assert_int_equal(v, COMCH_MAX_NAME_LEN);
	assert_int_equal(doca_comch_server_set_max_msg_size(S.server, 32), DOCA_ERROR_BAD_STATE); /* running */
	/* A second server of the same name is refused while the first lives. */
	assert_int_equal(doca_comch_server_create(S.dev, TEST_REP, NAME, &dup), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(S.pe, doca_comch_server_as_ctx(dup)), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(doca_comch_server_as_ctx(dup)), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_comch_server_destroy(dup), DOCA_SUCCESS);

	assert_int_equal(cli_open(S.pe), 0);
	assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_comch_client_set_max_msg_size(C.client, COMCH_MAX_MSG_SIZE + 1), DOCA_ERROR_BAD_STATE);
	assert_true(progress_until_state(S.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 5000));
	assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);

	/* Above the context's own limit, or empty: refused at alloc_init. */
	assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, big, COMCH_MAX_MSG_SIZE + 1, &task),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, big, 0, &task),
			 DOCA_ERROR_INVALID_VALUE);
	/* Above what the server accepts (negotiated): refused at submit. */
	assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, big, 65, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_ERROR_INVALID_VALUE);
	doca_task_free(doca_comch_task_send_as_task(task));
	assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, big, 64, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
	assert_true(progress_until(S.pe, &C.sent_ok, 1, 3000));
	assert_true(progress_until(S.pe, &S.received, 1, 3000));

	/* Counters. */
	assert_int_equal(doca_comch_connection_update_info(conn), DOCA_SUCCESS);
	{
		uint64_t n;

		assert_int_equal(doca_comch_connection_get_counter(conn, DOCA_COMCH_COUNTER_SENT_MESSAGES, &n),
				 DOCA_SUCCESS);
		assert_int_equal(n, 1);
		assert_int_equal(doca_comch_connection_get_counter(conn, DOCA_COMCH_COUNTER_SENT_BYTES, &n),
				 DOCA_SUCCESS);
		assert_int_equal(n, 64);
		assert_int_equal(doca_comch_connection_get_counter(conn, (enum doca_comch_counter)9, &n),
				 DOCA_ERROR_INVALID_VALUE);
	}

	/* The fast path is there; its DPA variants say no, clearly. */
	assert_int_equal(doca_comch_producer_cap_is_supported(doca_dev_as_devinfo(S.dev)), DOCA_SUCCESS);
	assert_int_equal(doca_comch_consumer_cap_is_supported(doca_dev_as_devinfo(S.dev)), DOCA_SUCCESS);
	assert_int_equal(doca_comch_producer_create(conn, &producer), DOCA_SUCCESS);
	assert_int_equal(doca_comch_producer_set_dev_max_num_send(producer, 1), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_comch_producer_destroy(producer), DOCA_SUCCESS);
	assert_int_equal(doca_comch_consumer_create(conn, NULL, &consumer), DOCA_ERROR_INVALID_VALUE);

	assert_int_equal(cli_close(false), 0);
	assert_true(progress_until(S.pe, &S.disconnects, 1, 3000));
	srv_close();
}

static void test_client_waits_for_server(void **state)
{
	struct doca_pe *pe;
	enum doca_ctx_states st;
	uint64_t end;

	(void)state;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(cli_open(pe), 0);
	end = now_ms() + 100;
	while (now_ms() < end)
		(void)doca_pe_progress(pe);
	assert_int_equal(doca_ctx_get_state(C.ctx, &st), DOCA_SUCCESS);
	assert_int_equal(st, DOCA_CTX_STATE_STARTING);
	srv_open(COMCH_MAX_MSG_SIZE);
	end = now_ms() + 5000;
	while (S.connects < 1 && now_ms() < end) {
		(void)doca_pe_progress(pe);
		(void)doca_pe_progress(S.pe);
	}
	assert_int_equal(S.connects, 1);
	assert_true(progress_until_state(pe, C.ctx, DOCA_CTX_STATE_RUNNING, 3000));
	assert_int_equal(cli_close(false), 0);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_true(progress_until(S.pe, &S.disconnects, 1, 3000));
	srv_close();
}

/* Progress the server until fd reads EOF (the server dropped it). */
static bool dropped_within(int fd, uint64_t ms, uint8_t *first_frame, ssize_t *first_len)
{
	uint64_t end = now_ms() + ms;
	uint8_t b[COMCH_MAX_FRAME];

	*first_len = -1;
	while (now_ms() < end) {
		ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);

		if (n == 0)
			return true;
		if (n > 0 && *first_len < 0) {
			*first_len = n;
			memcpy(first_frame, b, (size_t)n);
		}
		if (n < 0 && errno != EAGAIN)
			return true; /* reset */
		if (doca_pe_progress(S.pe) == 0)
			usleep(100);
	}
	return false;
}

static int raw_connect(uint8_t secret[COMCH_SECRET_LEN])
{
	struct softdoca_pcie_link link;
	int fd = -1;

	assert_int_equal(softdoca_dev_pcie_link(S.dev, &link), DOCA_SUCCESS);
	assert_int_equal(comch_connect(&link, NAME, &fd, secret), DOCA_SUCCESS);
	return fd;
}

static void test_hostile_clients(void **state)
{
	uint8_t secret[COMCH_SECRET_LEN], bad_secret[COMCH_SECRET_LEN];
	uint8_t frame[COMCH_MAX_FRAME + 16], reply[COMCH_MAX_FRAME];
	uint8_t hello[COMCH_HELLO_FIXED_LEN + COMCH_MAX_NAME_LEN];
	struct comch_frame f;
	ssize_t reply_len;
	uint32_t len;
	int fd;

	(void)state;
	srv_open(COMCH_MAX_MSG_SIZE);

	/* Garbage instead of a HELLO. */
	fd = raw_connect(secret);
	memset(frame, 0x5a, 40);
	assert_int_equal(send(fd, frame, 40, 0), 40);
	assert_true(dropped_within(fd, 2000, reply, &reply_len));
	close(fd);

	/* A MSG before HELLO. */
	fd = raw_connect(secret);
	comch_frame_put_hdr(frame, COMCH_FRAME_MSG, 1, 4);
	assert_int_equal(send(fd, frame, COMCH_HDR_LEN + 4, 0), COMCH_HDR_LEN + 4);
	assert_true(dropped_within(fd, 2000, reply, &reply_len));
	close(fd);

	/* The wrong secret: a REJECT naming it, then the close. */
	fd = raw_connect(secret);
	memcpy(bad_secret, secret, sizeof(bad_secret));
	bad_secret[0] ^= 1;
	len = comch_hello_encode(hello, COMCH_MAX_MSG_SIZE, 16, NAME, (uint16_t)strlen(NAME), bad_secret);
	comch_frame_put_hdr(frame, COMCH_FRAME_HELLO, 1, len);
	memcpy(frame + COMCH_HDR_LEN, hello, len);
	assert_int_equal(send(fd, frame, COMCH_HDR_LEN + len, 0), (ssize_t)(COMCH_HDR_LEN + len));
	assert_true(dropped_within(fd, 2000, reply, &reply_len));
	assert_true(reply_len > 0);
	assert_int_equal(comch_frame_parse(reply, (size_t)reply_len, COMCH_MAX_MSG_SIZE, "test", &f), DOCA_SUCCESS);
	assert_int_equal(f.type, COMCH_FRAME_REJECT);
	assert_int_equal(f.u.reject.reason, COMCH_REJECT_SECRET);
	close(fd);

	/* Silence: dropped once the handshake time is up. */
	fd = raw_connect(secret);
	assert_true(dropped_within(fd, 4000, reply, &reply_len));
	close(fd);

	/* A proper HELLO, then an oversized message: established, then dropped. */
	fd = raw_connect(secret);
	len = comch_hello_encode(hello, COMCH_MAX_MSG_SIZE, 16, NAME, (uint16_t)strlen(NAME), secret);
	comch_frame_put_hdr(frame, COMCH_FRAME_HELLO, 1, len);
	memcpy(frame + COMCH_HDR_LEN, hello, len);
	assert_int_equal(send(fd, frame, COMCH_HDR_LEN + len, 0), (ssize_t)(COMCH_HDR_LEN + len));
	assert_true(progress_until(S.pe, &S.connects, 1, 2000));
	comch_frame_put_hdr(frame, COMCH_FRAME_MSG, 2, COMCH_MAX_MSG_SIZE + 1);
	assert_int_equal(send(fd, frame, COMCH_HDR_LEN + COMCH_MAX_MSG_SIZE + 1, 0),
			 (ssize_t)(COMCH_HDR_LEN + COMCH_MAX_MSG_SIZE + 1));
	assert_true(progress_until(S.pe, &S.disconnects, 1, 2000));
	close(fd);

	/* A frame out of sequence after a good HELLO. */
	fd = raw_connect(secret);
	comch_frame_put_hdr(frame, COMCH_FRAME_HELLO, 1, len);
	memcpy(frame + COMCH_HDR_LEN, hello, len);
	assert_int_equal(send(fd, frame, COMCH_HDR_LEN + len, 0), (ssize_t)(COMCH_HDR_LEN + len));
	assert_true(progress_until(S.pe, &S.connects, 2, 2000));
	comch_frame_put_hdr(frame, COMCH_FRAME_MSG, 5, 4);
	assert_int_equal(send(fd, frame, COMCH_HDR_LEN + 4, 0), COMCH_HDR_LEN + 4);
	assert_true(progress_until(S.pe, &S.disconnects, 2, 2000));
	close(fd);
	assert_int_equal(S.received, 0); /* nothing malformed reached the application */

	/* The server still serves a real client. */
	assert_int_equal(cli_open(S.pe), 0);
	assert_true(progress_until_state(S.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 3000));
	assert_int_equal(cli_close(false), 0);
	srv_close();
}

/* A burst far beyond what the socket holds: tasks wait in the backlog
 * and still arrive complete and in order once the server reads. */
static void test_backlog_keeps_order(void **state)
{
	const uint32_t n = 1000;
	struct doca_comch_connection *conn;
	struct doca_pe *pe;
	uint8_t *bufs;
	uint64_t end;

	(void)state;
	bufs = malloc((size_t)n * COMCH_MAX_MSG_SIZE);
	assert_non_null(bufs);
	srv_open(COMCH_MAX_MSG_SIZE);
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(cli_open_n(pe, n), 0);
	end = now_ms() + 5000;
	while (C.ctx != NULL && now_ms() < end) {
		enum doca_ctx_states st;

		(void)doca_pe_progress(pe);
		(void)doca_pe_progress(S.pe);
		assert_int_equal(doca_ctx_get_state(C.ctx, &st), DOCA_SUCCESS);
		if (st == DOCA_CTX_STATE_RUNNING && S.connects == 1)
			break;
	}
	assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);
	for (uint32_t i = 0; i < n; i++) {
		struct doca_comch_task_send *task;
		uint8_t *slot = bufs + (size_t)i * COMCH_MAX_MSG_SIZE;

		msg_fill(slot, i);
		assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, slot, msg_len(i), &task),
				 DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
	}
	/* The server does not read yet: the socket fills, the rest waits. */
	end = now_ms() + 50;
	while (now_ms() < end)
		(void)doca_pe_progress(pe);
	assert_true(C.sent_ok < (int)n);
	end = now_ms() + 20000;
	while ((S.received < (int)n || C.sent_ok < (int)n) && now_ms() < end) {
		(void)doca_pe_progress(pe);
		(void)doca_pe_progress(S.pe);
	}
	assert_int_equal(S.received, n);
	assert_int_equal(S.bad, 0); /* every message whole and in order */
	assert_int_equal(C.sent_ok, n);
	assert_int_equal(C.sent_err, 0);
	assert_int_equal(cli_close(false), 0);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_true(progress_until(S.pe, &S.disconnects, 1, 3000));
	srv_close();
	free(bufs);
}

static bool handle_readable(struct doca_pe *pe, int ms)
{
	doca_notification_handle_t h;
	struct pollfd pfd;

	assert_int_equal(doca_pe_get_notification_handle(pe, &h), DOCA_SUCCESS);
	pfd.fd = (int)h;
	pfd.events = POLLIN;
	pfd.revents = 0;
	return poll(&pfd, 1, ms) == 1;
}

/* A program sleeping on the PE's notification handle is woken by a
 * message (server side) and by room for a backlog (client side). */
static void test_notification(void **state)
{
	const uint32_t n = 400;
	struct doca_comch_connection *conn;
	struct doca_comch_task_send *task;
	doca_notification_handle_t h;
	struct doca_pe *pe;
	uint8_t *bufs;
	uint64_t end;

	(void)state;
	bufs = malloc((size_t)n * COMCH_MAX_MSG_SIZE);
	assert_non_null(bufs);
	srv_open(COMCH_MAX_MSG_SIZE);
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(cli_open_n(pe, n), 0);
	end = now_ms() + 5000;
	while ((S.connects < 1 || doca_comch_client_get_connection(C.client, &conn) != DOCA_SUCCESS) &&
	       now_ms() < end) {
		(void)doca_pe_progress(pe);
		(void)doca_pe_progress(S.pe);
	}
	assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);

	/* Server armed with nothing pending: quiet. */
	while (doca_pe_progress(S.pe) != 0)
		;
	assert_int_equal(doca_pe_get_notification_handle(S.pe, &h), DOCA_SUCCESS);
	assert_int_equal(doca_pe_request_notification(S.pe), DOCA_SUCCESS);
	assert_false(handle_readable(S.pe, 0));
	/* A message makes it readable, without the server progressing. */
	msg_fill(bufs, 0);
	assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, bufs, msg_len(0), &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
	assert_true(progress_until(pe, &C.sent_ok, 1, 2000));
	assert_true(handle_readable(S.pe, 2000));
	assert_int_equal(doca_pe_clear_notification(S.pe, h), DOCA_SUCCESS);
	assert_true(progress_until(S.pe, &S.received, 1, 2000));

	/* Client: fill the socket so tasks wait; armed, it sleeps until the
	 * server reads and makes room. */
	for (uint32_t i = 1; i < n; i++) {
		uint8_t *slot = bufs + (size_t)i * COMCH_MAX_MSG_SIZE;

		msg_fill(slot, i);
		assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, slot, msg_len(i), &task),
				 DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
	}
	while (doca_pe_progress(pe) != 0)
		;
	assert_true(C.sent_ok < (int)n);
	assert_int_equal(doca_pe_request_notification(pe), DOCA_SUCCESS);
	assert_false(handle_readable(pe, 0));
	end = now_ms() + 2000;
	while (!handle_readable(pe, 0) && now_ms() < end)
		(void)doca_pe_progress(S.pe); /* the server reads: room appears */
	assert_true(handle_readable(pe, 0));
	assert_int_equal(doca_pe_get_notification_handle(pe, &h), DOCA_SUCCESS);
	assert_int_equal(doca_pe_clear_notification(pe, h), DOCA_SUCCESS);
	end = now_ms() + 10000;
	while ((S.received < (int)n || C.sent_ok < (int)n) && now_ms() < end) {
		(void)doca_pe_progress(pe);
		(void)doca_pe_progress(S.pe);
	}
	assert_int_equal(S.received, n);
	assert_int_equal(S.bad, 0);
	assert_int_equal(cli_close(false), 0);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_true(progress_until(S.pe, &S.disconnects, 1, 3000));
	srv_close();
	free(bufs);
}

/* A server that disconnects a client from its connect callback: the
 * client gets WELCOME then BYE then the close; the first client is unhurt. */
static void test_disconnect_from_callback(void **state)
{
	uint8_t secret[COMCH_SECRET_LEN], frame[COMCH_MAX_FRAME], reply[COMCH_MAX_FRAME];
	uint8_t hello[COMCH_HELLO_FIXED_LEN + COMCH_MAX_NAME_LEN];
	struct comch_chan chan;
	struct comch_frame f;
	doca_error_t status;
	ssize_t reply_len;
	uint32_t len;
	uint64_t end;
	int fd;

	(void)state;
	srv_open(COMCH_MAX_MSG_SIZE);
	S.only_one = 1;
	assert_int_equal(cli_open(S.pe), 0);
	assert_true(progress_until_state(S.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 3000));
	fd = raw_connect(secret);
	len = comch_hello_encode(hello, COMCH_MAX_MSG_SIZE, 16, NAME, (uint16_t)strlen(NAME), secret);
	comch_frame_put_hdr(frame, COMCH_FRAME_HELLO, 1, len);
	memcpy(frame + COMCH_HDR_LEN, hello, len);
	assert_int_equal(send(fd, frame, COMCH_HDR_LEN + len, 0), (ssize_t)(COMCH_HDR_LEN + len));
	assert_true(dropped_within(fd, 2000, reply, &reply_len));
	assert_int_equal(comch_frame_parse(reply, (size_t)reply_len, COMCH_MAX_MSG_SIZE, "test", &f), DOCA_SUCCESS);
	assert_int_equal(f.type, COMCH_FRAME_WELCOME);
	close(fd);
	/* The same exchange through a channel sees WELCOME, BYE, then EOF in order. */
	fd = raw_connect(secret);
	assert_int_equal(comch_chan_init(&chan, fd), DOCA_SUCCESS);
	assert_int_equal(comch_chan_send(&chan, COMCH_FRAME_HELLO, hello, len), DOCA_SUCCESS);
	end = now_ms() + 2000;
	while (comch_chan_recv(&chan, COMCH_MAX_MSG_SIZE, "test", &f) != DOCA_SUCCESS && now_ms() < end)
		(void)doca_pe_progress(S.pe);
	assert_int_equal(f.type, COMCH_FRAME_WELCOME);
	end = now_ms() + 2000;
	while (comch_chan_recv(&chan, COMCH_MAX_MSG_SIZE, "test", &f) != DOCA_SUCCESS && now_ms() < end)
		(void)doca_pe_progress(S.pe);
	assert_int_equal(f.type, COMCH_FRAME_BYE);
	/* The close follows (the kernel may finish releasing the server's
	 * socket a moment later, when another thread held a reference). */
	end = now_ms() + 2000;
	while ((status = comch_chan_recv(&chan, COMCH_MAX_MSG_SIZE, "test", &f)) == DOCA_ERROR_AGAIN && now_ms() < end)
		usleep(100);
	assert_int_equal(status, DOCA_ERROR_CONNECTION_RESET);
	comch_chan_fini(&chan);
	assert_int_equal(S.disconnects, 0); /* the server's own disconnect fires no callback */
	/* The first client still works. */
	{
		struct doca_comch_connection *conn;
		struct doca_comch_task_send *task;
		static const char msg[] = "still here";

		assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);
		S.echo = false;
		assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, msg, sizeof(msg), &task),
				 DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
		assert_true(progress_until(S.pe, &S.received, 1, 2000));
	}
	assert_int_equal(cli_close(false), 0);
	assert_true(progress_until(S.pe, &S.disconnects, 1, 3000));
	srv_close();
}

/* What the SDK logged since sdk_log_start (INFO and up), for checks of
 * the level a line has. */
static FILE *sdk_log;

static void sdk_log_start(void)
{
	static struct doca_log_backend *backend;

	if (sdk_log == NULL) {
		sdk_log = tmpfile();
		assert_non_null(sdk_log);
		assert_int_equal(doca_log_backend_create_with_file_sdk(sdk_log, &backend), DOCA_SUCCESS);
		assert_int_equal(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_INFO), DOCA_SUCCESS);
	}
	fflush(sdk_log);
	assert_int_equal(ftruncate(fileno(sdk_log), 0), 0);
	rewind(sdk_log);
}

static bool sdk_log_has(const char *needle)
{
	char line[1024];
	bool found = false;

	fflush(sdk_log);
	rewind(sdk_log);
	while (!found && fgets(line, sizeof(line), sdk_log) != NULL)
		found = strstr(line, needle) != NULL;
	fseek(sdk_log, 0, SEEK_END);
	return found;
}

/* Disconnecting from inside the receive callback: the buffer stays valid,
 * the client is told (its context stops), the server goes on. */
static void test_disconnect_in_recv(void **state)
{
	struct doca_comch_connection *conn;
	struct doca_comch_task_send *task;
	static uint8_t msg[COMCH_MAX_MSG_SIZE];

	(void)state;
	sdk_log_start();
	srv_open(COMCH_MAX_MSG_SIZE);
	S.disconnect_in_recv = 1;
	assert_int_equal(cli_open(S.pe), 0);
	assert_true(progress_until_state(S.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 3000));
	assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);
	msg_fill(msg, 0);
	assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, msg, msg_len(0), &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
	assert_true(progress_until(S.pe, &S.received, 1, 2000));
	assert_int_equal(S.bad, 0);
	assert_true(progress_until_state(S.pe, C.ctx, DOCA_CTX_STATE_IDLE, 2000));
	/* An orderly end, not an error: the client's stop is no ERROR line. */
	assert_false(sdk_log_has("[ERROR]"));
	assert_true(sdk_log_has("comch_client context stops: its server closed the connection"));
	assert_int_equal(cli_close(false), 0);
	srv_close();
}

/* shoc's comch_data_server frees its connection's state in the
 * disconnection callback: a send on that connection whose completion was
 * queued must be delivered before that callback, within the same
 * doca_pe_progress that reads the client's goodbye. */
static void test_disconnect_after_queued_completions(void **state)
{
	struct doca_comch_task_send *task;
	static uint8_t msg[64];
	uint64_t end;

	(void)state;
	srv_open(COMCH_MAX_MSG_SIZE);

	assert_int_equal(cli_open(NULL), 0);
	end = now_ms() + 5000;
	while (S.connects < 1 && now_ms() < end) {
		(void)doca_pe_progress(C.pe);
		(void)doca_pe_progress(S.pe);
	}
	assert_int_equal(S.connects, 1);
	assert_true(progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 3000));
	msg_fill(msg, 0);
	assert_int_equal(doca_comch_server_task_send_alloc_init(S.server, S.last_conn, msg, msg_len(0), &task),
			 DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
	/* The client leaves before the server's PE runs again. */
	(void)doca_ctx_stop(C.ctx);
	assert_true(progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_IDLE, 3000));
	assert_true(progress_until(S.pe, &S.disconnects, 1, 3000));
	assert_int_equal(S.sent_ok + S.sent_err, 1);
	assert_int_equal(S.sends_done_at_disconnect, 1);
	assert_int_equal(doca_comch_client_destroy(C.client), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(C.pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(C.dev), DOCA_SUCCESS);
	srv_close();
}

static int cli_sends_done_at_stopping = -1;

static void cli_state_cb(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
			 enum doca_ctx_states next)
{
	(void)ud;
	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_STOPPING)
		cli_sends_done_at_stopping = C.sent_ok + C.sent_err;
}

/* The client's side of the same guarantee: a send completion queued
 * before the server's goodbye is read is delivered before the client's
 * context goes STOPPING (where programs tear down their state). */
static void test_client_end_after_queued_completions(void **state)
{
	struct doca_comch_connection *conn;
	struct doca_comch_task_send *task;
	static uint8_t msg[64];
	uint64_t end;

	(void)state;
	srv_open(COMCH_MAX_MSG_SIZE);
	memset(&C, 0, sizeof(C));
	C.dev = open_dev();
	assert_non_null(C.dev);
	assert_int_equal(doca_pe_create(&C.pe), DOCA_SUCCESS);
	assert_int_equal(doca_comch_client_create(C.dev, NAME, &C.client), DOCA_SUCCESS);
	C.ctx = doca_comch_client_as_ctx(C.client);
	assert_int_equal(doca_comch_client_task_send_set_conf(C.client, cli_sent, cli_send_err, 4), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_set_state_changed_cb(C.ctx, cli_state_cb), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(C.pe, C.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(C.ctx), DOCA_ERROR_IN_PROGRESS);
	end = now_ms() + 5000;
	while (S.connects < 1 && now_ms() < end) {
		(void)doca_pe_progress(C.pe);
		(void)doca_pe_progress(S.pe);
	}
	assert_int_equal(S.connects, 1);
	assert_true(progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 3000));
	assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);
	msg_fill(msg, 0);
	assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, msg, msg_len(0), &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
	/* The server leaves before the client's PE runs again. */
	(void)doca_ctx_stop(S.ctx);
	assert_true(progress_until_state(S.pe, S.ctx, DOCA_CTX_STATE_IDLE, 3000));
	assert_true(progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_IDLE, 3000));
	assert_int_equal(C.sent_ok + C.sent_err, 1);
	assert_int_equal(cli_sends_done_at_stopping, 1);
	assert_int_equal(doca_comch_client_destroy(C.client), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(C.pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(C.dev), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_destroy(S.server), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(S.pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(S.dev), DOCA_SUCCESS);
}

/* Many silent connections: beyond the handshake cap they are closed at
 * once instead of holding resources. */
static void test_pending_cap(void **state)
{
	enum { N = 80 };
	uint8_t secret[COMCH_SECRET_LEN], b[64];
	int fds[N], closed = 0;
	uint64_t end;

	(void)state;
	srv_open(COMCH_MAX_MSG_SIZE);
	for (int i = 0; i < N; i++) {
		fds[i] = raw_connect(secret);
		(void)doca_pe_progress(S.pe); /* accept as they come: the listen backlog is 64 too */
	}
	end = now_ms() + 500; /* well inside the 2 s handshake time */
	while (now_ms() < end)
		(void)doca_pe_progress(S.pe);
	for (int i = 0; i < N; i++) {
		if (recv(fds[i], b, sizeof(b), MSG_DONTWAIT) == 0)
			closed++;
		close(fds[i]);
	}
	assert_int_equal(closed, N - 64);
	srv_close();
}

static void dummy_send_cb(struct doca_comch_task_send *t, union doca_data a, union doca_data b)
{
	(void)t;
	(void)a;
	(void)b;
}

static void dummy_recv_cb(struct doca_comch_event_msg_recv *e, uint8_t *b, uint32_t n,
			  struct doca_comch_connection *c)
{
	(void)e;
	(void)b;
	(void)n;
	(void)c;
}

static void dummy_conn_cb(struct doca_comch_event_connection_status_changed *e, struct doca_comch_connection *c,
			  uint8_t ok)
{
	(void)e;
	(void)c;
	(void)ok;
}

static void dummy_consumer_cb(struct doca_comch_event_consumer *e, struct doca_comch_connection *c, uint32_t id)
{
	(void)e;
	(void)c;
	(void)id;
}

/* NULL in each pointer parameter of the control-path calls: a clear
 * DOCA_ERROR_INVALID_VALUE (or NULL), never a crash. */
static void test_null_args(void **state)
{
	struct doca_comch_server *srv;
	struct doca_comch_client *cli;
	struct doca_comch_connection *conn;
	struct doca_comch_task_send *task;
	struct doca_devinfo *di;
	struct doca_dev *dev = open_dev();
	struct doca_dev_rep *rep;
	union doca_data ud = {.u64 = 7};
	uint32_t v;
	uint64_t v64;
	const doca_error_t IV = DOCA_ERROR_INVALID_VALUE;

	(void)state;
	assert_non_null(dev);
	di = doca_dev_as_devinfo(dev);
	assert_int_equal(doca_comch_server_create(NULL, TEST_REP, NAME, &srv), IV);
	assert_int_equal(doca_comch_server_create(dev, NULL, NAME, &srv), IV);
	/* Not an open representor (never handed out): refused unread. */
	assert_int_equal(doca_comch_server_create(dev, (struct doca_dev_rep *)dir, NAME, &srv), IV);
	assert_int_equal(doca_comch_server_create(dev, TEST_REP, NULL, &srv), IV);
	assert_int_equal(doca_comch_server_create(dev, TEST_REP, NAME, NULL), IV);
	assert_int_equal(doca_comch_server_create(dev, TEST_REP, "", &srv), IV);
	assert_int_equal(doca_comch_client_create(NULL, NAME, &cli), IV);
	assert_int_equal(doca_comch_client_create(dev, NULL, &cli), IV);
	assert_int_equal(doca_comch_client_create(dev, NAME, NULL), IV);
	assert_int_equal(doca_comch_server_destroy(NULL), IV);
	assert_int_equal(doca_comch_client_destroy(NULL), IV);
	assert_null(doca_comch_server_as_ctx(NULL));
	assert_null(doca_comch_client_as_ctx(NULL));
	assert_null(doca_comch_task_send_as_task(NULL));
	assert_null(doca_comch_server_get_server_ctx(NULL));
	assert_null(doca_comch_client_get_client_ctx(NULL));
	assert_int_equal(doca_comch_connection_get_user_data(NULL).u64, 0);
	assert_int_equal(doca_comch_connection_set_user_data(NULL, ud), IV);
	assert_int_equal(doca_comch_connection_update_info(NULL), IV);
	assert_int_equal(doca_comch_connection_get_counter(NULL, DOCA_COMCH_COUNTER_SENT_BYTES, &v64), IV);
	assert_int_equal(doca_comch_cap_get_max_name_len(NULL, &v), IV);
	assert_int_equal(doca_comch_cap_get_max_name_len(di, NULL), IV);
	assert_int_equal(doca_comch_cap_get_max_msg_size(NULL, &v), IV);
	assert_int_equal(doca_comch_cap_get_max_msg_size(di, NULL), IV);
	assert_int_equal(doca_comch_cap_get_max_recv_queue_size(NULL, &v), IV);
	assert_int_equal(doca_comch_cap_get_max_recv_queue_size(di, NULL), IV);
	assert_int_equal(doca_comch_cap_get_max_clients(NULL, &v), IV);
	assert_int_equal(doca_comch_cap_get_max_clients(di, NULL), IV);
	assert_int_equal(doca_comch_cap_get_max_send_tasks(NULL, &v), IV);
	assert_int_equal(doca_comch_cap_get_max_send_tasks(di, NULL), IV);
	assert_int_equal(doca_comch_cap_server_is_supported(NULL), IV);
	assert_int_equal(doca_comch_cap_client_is_supported(NULL), IV);
	assert_int_equal(doca_comch_cap_server_is_supported(di), DOCA_SUCCESS);
	assert_int_equal(doca_comch_cap_client_is_supported(di), DOCA_SUCCESS);

	assert_int_equal(doca_comch_server_create(dev, TEST_REP, NAME, &srv), DOCA_SUCCESS);
	assert_int_equal(doca_comch_client_create(dev, NAME, &cli), DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_set_max_msg_size(NULL, 64), IV);
	assert_int_equal(doca_comch_server_set_max_msg_size(srv, 0), IV);
	assert_int_equal(doca_comch_server_set_max_msg_size(srv, COMCH_MAX_MSG_SIZE + 1), IV);
	assert_int_equal(doca_comch_client_set_max_msg_size(NULL, 64), IV);
	assert_int_equal(doca_comch_server_get_max_msg_size(NULL, &v), IV);
	assert_int_equal(doca_comch_server_get_max_msg_size(srv, NULL), IV);
	assert_int_equal(doca_comch_client_get_max_msg_size(NULL, &v), IV);
	assert_int_equal(doca_comch_client_get_max_msg_size(cli, NULL), IV);
	assert_int_equal(doca_comch_server_set_recv_queue_size(NULL, 8), IV);
	assert_int_equal(doca_comch_server_set_recv_queue_size(srv, 0), IV);
	assert_int_equal(doca_comch_client_set_recv_queue_size(NULL, 8), IV);
	assert_int_equal(doca_comch_client_set_recv_queue_size(cli, 1u << 20), IV);
	assert_int_equal(doca_comch_server_get_recv_queue_size(NULL, &v), IV);
	assert_int_equal(doca_comch_server_get_recv_queue_size(srv, NULL), IV);
	assert_int_equal(doca_comch_client_get_recv_queue_size(NULL, &v), IV);
	assert_int_equal(doca_comch_client_get_recv_queue_size(cli, NULL), IV);
	assert_int_equal(doca_comch_server_get_device(NULL, &dev), IV);
	assert_int_equal(doca_comch_server_get_device(srv, NULL), IV);
	assert_int_equal(doca_comch_client_get_device(NULL, &dev), IV);
	assert_int_equal(doca_comch_client_get_device(cli, NULL), IV);
	assert_int_equal(doca_comch_server_get_device_rep(NULL, &rep), IV);
	assert_int_equal(doca_comch_server_get_device_rep(srv, NULL), IV);
	assert_int_equal(doca_comch_server_get_device_rep(srv, &rep), DOCA_SUCCESS);
	assert_ptr_equal(rep, TEST_REP);
	assert_int_equal(doca_comch_client_get_connection(NULL, &conn), IV);
	assert_int_equal(doca_comch_client_get_connection(cli, NULL), IV);
	assert_int_equal(doca_comch_server_disconnect(NULL, (struct doca_comch_connection *)dir), IV);
	assert_int_equal(doca_comch_server_disconnect(srv, NULL), IV);
	/* A pointer that is no connection of this server is refused unread. */
	assert_int_equal(doca_comch_server_disconnect(srv, (struct doca_comch_connection *)dir), IV);
	assert_int_equal(doca_comch_server_task_send_set_conf(NULL, dummy_send_cb, dummy_send_cb, 4), IV);
	assert_int_equal(doca_comch_client_task_send_set_conf(NULL, dummy_send_cb, dummy_send_cb, 4), IV);
	assert_int_equal(doca_comch_server_task_send_alloc_init(NULL, NULL, "x", 1, &task), IV);
	assert_int_equal(doca_comch_server_task_send_alloc_init(srv, NULL, "x", 1, &task), IV);
	assert_int_equal(doca_comch_client_task_send_alloc_init(NULL, NULL, "x", 1, &task), IV);
	assert_int_equal(doca_comch_client_task_send_alloc_init(cli, NULL, "x", 1, &task), IV);
	assert_int_equal(doca_comch_server_event_msg_recv_register(NULL, dummy_recv_cb), IV);
	assert_int_equal(doca_comch_server_event_msg_recv_register(srv, NULL), IV);
	assert_int_equal(doca_comch_client_event_msg_recv_register(NULL, dummy_recv_cb), IV);
	assert_int_equal(doca_comch_client_event_msg_recv_register(cli, NULL), IV);
	assert_int_equal(doca_comch_server_event_connection_status_changed_register(NULL, dummy_conn_cb, dummy_conn_cb),
			 IV);
	assert_int_equal(doca_comch_server_event_connection_status_changed_register(srv, NULL, dummy_conn_cb), IV);
	assert_int_equal(doca_comch_server_event_connection_status_changed_register(srv, dummy_conn_cb, NULL), IV);
	assert_int_equal(doca_comch_server_event_consumer_register(NULL, dummy_consumer_cb, dummy_consumer_cb), IV);
	assert_int_equal(doca_comch_server_event_consumer_register(srv, NULL, dummy_consumer_cb), IV);
	assert_int_equal(doca_comch_client_event_consumer_register(NULL, dummy_consumer_cb, dummy_consumer_cb), IV);
	assert_int_equal(doca_comch_client_event_consumer_register(cli, dummy_consumer_cb, NULL), IV);
	assert_int_equal(doca_comch_client_event_consumer_register(cli, dummy_consumer_cb, dummy_consumer_cb),
			 DOCA_SUCCESS);
	assert_int_equal(doca_comch_server_destroy(srv), DOCA_SUCCESS);
	assert_int_equal(doca_comch_client_destroy(cli), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

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

static void cycle_once(int i)
{
	assert_int_equal(cli_open(S.pe), 0);
	assert_true(progress_until_state(S.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 3000));
	assert_true(progress_until(S.pe, &S.connects, i + 1, 3000));
	assert_int_equal(cli_close(false), 0);
	assert_true(progress_until(S.pe, &S.disconnects, i + 1, 3000));
}

/* ---- a peer killed while this side sends ---- */

enum { KILL_NOTICE_MS = 2000 };

/* The server sends to a client that is killed mid-stream: the
 * disconnection callback fires within the bound, however the loss shows
 * first (a failed send, a failed backlog flush, or the read). Returns
 * the kills that went unreported. */
static int kill_clients_while_sending(int kills)
{
	static const uint8_t msg[4] = {1, 2, 3, 4};
	int missed = 0;

	for (int i = 0; i < kills; i++) {
		int want = S.disconnects + 1, sent0;
		uint64_t t_kill = 0, end;
		pid_t pid = spawn_child("idle-client");

		assert_true(pid > 0);
		assert_true(progress_until(S.pe, &S.connects, S.connects + 1, 10000));
		sent0 = S.sent_ok;
		end = now_ms() + 10000;
		while (S.disconnects < want && now_ms() < end) {
			struct doca_comch_task_send *task;

			if (t_kill == 0 && S.sent_ok - sent0 >= 20 + i) {
				assert_int_equal(kill(pid, SIGKILL), 0);
				t_kill = now_ms();
				end = t_kill + KILL_NOTICE_MS;
			}
			if (doca_comch_server_task_send_alloc_init(S.server, S.last_conn, msg, sizeof(msg), &task) ==
			    DOCA_SUCCESS &&
			    doca_task_submit(doca_comch_task_send_as_task(task)) != DOCA_SUCCESS)
				doca_task_free(doca_comch_task_send_as_task(task));
			(void)doca_pe_progress(S.pe);
		}
		assert_true(t_kill != 0);
		if (S.disconnects < want) {
			missed++;
			S.disconnects = want; /* count on from here */
		}
		assert_int_equal(waitpid(pid, NULL, 0), pid);
	}
	return missed;
}

/* The client sends to a server that is killed mid-stream: its context
 * fails to IDLE within the bound, with an ERROR line, however the loss
 * shows first. Returns the kills that left the client RUNNING. */
static int kill_servers_while_sending(int kills)
{
	static const uint8_t msg[4] = {1, 2, 3, 4};
	int missed = 0;

	for (int i = 0; i < kills; i++) {
		struct doca_comch_connection *conn;
		enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
		uint64_t t_kill = 0, end;
		pid_t pid = spawn_child("idle-server");

		assert_true(pid > 0);
		assert_int_equal(cli_open(NULL), 0);
		assert_true(progress_until_state(C.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 10000));
		assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);
		sdk_log_start();
		end = now_ms() + 10000;
		while (st != DOCA_CTX_STATE_IDLE && now_ms() < end) {
			struct doca_comch_task_send *task;

			if (t_kill == 0 && C.sent_ok >= 20 + i) {
				assert_int_equal(kill(pid, SIGKILL), 0);
				t_kill = now_ms();
				end = t_kill + KILL_NOTICE_MS;
			}
			if (st == DOCA_CTX_STATE_RUNNING &&
			    doca_comch_client_task_send_alloc_init(C.client, conn, msg, sizeof(msg), &task) ==
				    DOCA_SUCCESS &&
			    doca_task_submit(doca_comch_task_send_as_task(task)) != DOCA_SUCCESS)
				doca_task_free(doca_comch_task_send_as_task(task));
			(void)doca_pe_progress(C.pe);
			assert_int_equal(doca_ctx_get_state(C.ctx, &st), DOCA_SUCCESS);
		}
		assert_true(t_kill != 0);
		if (st != DOCA_CTX_STATE_IDLE || !sdk_log_has("comch_client context stops after a fatal error"))
			missed++;
		assert_int_equal(cli_close(true), 0);
		assert_int_equal(waitpid(pid, NULL, 0), pid);
	}
	return missed;
}

/* 30 kills, half on each side; the first two of each half also warm up
 * whatever is opened once, then the fds must stay flat. */
static void test_kill_loop_while_sending(void **state)
{
	const int warm = 2, kills = 13;
	int fds_before, missed_server, missed_client;

	(void)state;
	srv_open(COMCH_MAX_MSG_SIZE);
	missed_server = kill_clients_while_sending(warm);
	fds_before = count_fds();
	missed_server += kill_clients_while_sending(kills);
	assert_int_equal(count_fds(), fds_before);
	srv_close();
	missed_client = kill_servers_while_sending(warm);
	fds_before = count_fds();
	missed_client += kill_servers_while_sending(kills);
	assert_int_equal(count_fds(), fds_before);
	if (missed_server + missed_client > 0)
		fail_msg("of %d kills, %d left the server without its disconnection callback and %d the client "
			 "RUNNING or without an ERROR line",
			 2 * (warm + kills), missed_server, missed_client);
	/* The killed servers' files: a new server replaces them, and removes
	 * them when it stops. */
	srv_open(COMCH_MAX_MSG_SIZE);
	srv_close();
}

/* Lines of the SDK log since sdk_log_start that hold needle. */
static int sdk_log_count(const char *needle)
{
	char line[1024];
	int n = 0;

	fflush(sdk_log);
	rewind(sdk_log);
	while (fgets(line, sizeof(line), sdk_log) != NULL)
		n += strstr(line, needle) != NULL;
	fseek(sdk_log, 0, SEEK_END);
	return n;
}

/* Descriptors enough for n more; false when the hard limit is lower. */
static bool fds_allow(rlim_t n)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur >= n)
		return true;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < n)
		return false;
	rl.rlim_cur = n;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

static int count_fds(void);

/* A client of ours that the full server refuses: its start fails, and
 * the idle context holds no descriptor of its start. */
static void refused_client(void)
{
	int fds_before = count_fds();

	assert_int_equal(cli_open(S.pe), 0);
	assert_true(progress_until_state(S.pe, C.ctx, DOCA_CTX_STATE_IDLE, 3000));
	assert_int_equal(count_fds(), fds_before);
	assert_int_equal(doca_comch_client_destroy(C.client), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(C.dev), DOCA_SUCCESS);
}

/* A full server refuses each further client (REJECT "too many clients"),
 * and the refusals, in the server and in the clients, cost a few log
 * lines a second, not one each. */
static void test_full_server_refusals_rate_limited(void **state)
{
	enum { MAX_CLIENTS = 512, REFUSALS = 60 };
	uint8_t secret[COMCH_SECRET_LEN], frame[COMCH_HDR_LEN + COMCH_HELLO_FIXED_LEN + COMCH_MAX_NAME_LEN];
	uint32_t len;
	int fds[MAX_CLIENTS], lines;
	uint64_t t0, secs;

	(void)state;
	if (!fds_allow(3 * MAX_CLIENTS + 256)) {
		skip(); /* a server and its clients in one process */
		return;
	}
	srv_open(COMCH_MAX_MSG_SIZE);
	for (int i = 0; i < MAX_CLIENTS; i++) {
		fds[i] = raw_connect(secret);
		len = comch_hello_encode(frame + COMCH_HDR_LEN, COMCH_MAX_MSG_SIZE, 16, NAME, (uint16_t)strlen(NAME),
					 secret);
		comch_frame_put_hdr(frame, COMCH_FRAME_HELLO, 1, len);
		assert_int_equal(send(fds[i], frame, COMCH_HDR_LEN + len, 0), (ssize_t)(COMCH_HDR_LEN + len));
		assert_true(progress_until(S.pe, &S.connects, i + 1, 3000));
	}
	sdk_log_start();
	t0 = now_ms();
	for (int i = 0; i < REFUSALS; i++)
		refused_client();
	secs = (now_ms() - t0) / 1000 + 1;
	assert_int_equal(S.connects, MAX_CLIENTS);
	/* Two call sites (server, client), each a burst and one line saying
	 * how many were held back, per second begun. */
	lines = sdk_log_count("refused");
	assert_true(lines >= 2);
	if ((uint64_t)lines > 2 * (SDK_LOG_RATE_BURST + 1) * (secs + 1))
		fail_msg("%d refusals in %llu s logged %d lines", REFUSALS, (unsigned long long)secs, lines);
	for (int i = 0; i < MAX_CLIENTS; i++)
		close(fds[i]);
	assert_true(progress_until(S.pe, &S.disconnects, MAX_CLIENTS, 5000));
	srv_close();
}

/* Directories under the test's own, down to a path of len characters;
 * the deepest into path. */
static void long_dir_make(char *path, size_t size, size_t len)
{
	size_t n = (size_t)snprintf(path, size, "%s", dir);

	assert_true(len < size);
	while (n < len) {
		size_t k = len - n - 1 < 100 ? len - n - 1 : 100;

		path[n++] = '/';
		memset(path + n, 'l', k);
		n += k;
		path[n] = '\0';
		assert_int_equal(mkdir(path, 0700), 0);
	}
}

static void long_dir_remove(char *path)
{
	while (strlen(path) > strlen(dir)) {
		assert_int_equal(rmdir(path), 0);
		*strrchr(path, '/') = '\0';
	}
}

/* SOFTDOCA_PCIE_DIR as long as it may be (255 characters, far more than
 * a socket address holds) serves a server and its client; one character
 * more is refused at start, with a line that says the limit. */
static void test_long_rendezvous_dir(void **state)
{
	char path[SOFTDOCA_PCIE_DIR_MAX + 8];
	struct doca_comch_connection *conn;
	struct doca_comch_task_send *task;
	static uint8_t msg[COMCH_MAX_MSG_SIZE];
	struct doca_comch_server *server = NULL;
	struct doca_comch_client *client;
	struct doca_dev *dev;
	struct doca_pe *pe;

	(void)state;
	long_dir_make(path, sizeof(path), SOFTDOCA_PCIE_DIR_MAX - 1);
	assert_int_equal(setenv("SOFTDOCA_PCIE_DIR", path, 1), 0);
	srv_open(COMCH_MAX_MSG_SIZE);
	assert_int_equal(cli_open(S.pe), 0);
	assert_true(progress_until_state(S.pe, C.ctx, DOCA_CTX_STATE_RUNNING, 3000));
	assert_int_equal(doca_comch_client_get_connection(C.client, &conn), DOCA_SUCCESS);
	msg_fill(msg, 0);
	assert_int_equal(doca_comch_client_task_send_alloc_init(C.client, conn, msg, msg_len(0), &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_comch_task_send_as_task(task)), DOCA_SUCCESS);
	assert_true(progress_until(S.pe, &S.received, 1, 3000));
	assert_int_equal(S.bad, 0);
	assert_int_equal(cli_close(false), 0);
	assert_true(progress_until(S.pe, &S.disconnects, 1, 3000));
	srv_close();

	/* One more: refused where the directory is taken, saying why. */
	sdk_log_start();
	strcat(path, "x");
	assert_int_equal(setenv("SOFTDOCA_PCIE_DIR", path, 1), 0);
	dev = open_dev();
	assert_non_null(dev);
	/* The server takes its representor's link at create already. */
	assert_int_equal(doca_comch_server_create(dev, TEST_REP, NAME, &server), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_comch_client_create(dev, NAME, &client), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, doca_comch_client_as_ctx(client)), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(doca_comch_client_as_ctx(client)), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_comch_client_destroy(client), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
	assert_true(sdk_log_has("SOFTDOCA_PCIE_DIR"));
	assert_true(sdk_log_has("at most 255"));
	path[strlen(path) - 1] = '\0';
	long_dir_remove(path);
	assert_int_equal(setenv("SOFTDOCA_PCIE_DIR", dir, 1), 0);
}

static void test_cycles_flat(void **state)
{
	const int warm = 10, cycles = 300;
	size_t heap_before, heap_after;
	int fds_before, fds_after;

	(void)state;
	srv_open(COMCH_MAX_MSG_SIZE);
	for (int i = 0; i < warm; i++)
		cycle_once(i);
	fds_before = count_fds();
	heap_before = mallinfo2().uordblks;
	for (int i = warm; i < warm + cycles; i++)
		cycle_once(i);
	fds_after = count_fds();
	heap_after = mallinfo2().uordblks;
	assert_int_equal(fds_after, fds_before);
	/* A leak of even one small object per cycle would pass 16 KiB. */
	assert_true(heap_after < heap_before + 16 * 1024);
	srv_close();
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_process_ordered, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_killed_client_noticed, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_killed_server_noticed, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_limits_and_unsupported, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_client_waits_for_server, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_hostile_clients, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_backlog_keeps_order, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_notification, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_disconnect_from_callback, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_disconnect_in_recv, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_disconnect_after_queued_completions, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_client_end_after_queued_completions, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_pending_cap, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_null_args, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_cycles_flat, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_kill_loop_while_sending, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_full_server_refusals_rate_limited, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_long_rendezvous_dir, setup_dir, teardown_dir),
	};

	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return child_main(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
