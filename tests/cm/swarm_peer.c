/*
 * swarm_peer — many RDMA CM clients connecting and disconnecting at once
 * against one long-lived server.
 *
 *   swarm_peer --role server --dir DIR [--max-conns N] [--watchdog S]
 *   swarm_peer --role client --dir DIR --name NAME [--seconds S]
 *              [--cycles N] [--family 4|6] [--watchdog S]
 *
 * Both roles speak only the public DOCA API, on soft_lo. The server keeps
 * one PE and one doca_rdma context for the whole run, listening with
 * doca_rdma_start_listen_to_port, as NVIDIA's rdma_cm samples do: request
 * callback -> doca_rdma_connection_accept, disconnection callback ->
 * doca_rdma_connection_disconnect (and the slot goes back). It keeps
 * SERVER_RECVS receives posted, each re-posted once it completed, and
 * checks every message byte for byte. A client loops until --seconds have
 * passed (or --cycles are done): fresh PE and context, connect_to_addr
 * (127.0.0.1 or ::1), established, one send, disconnect, stop, destroy.
 *
 * Every request must be accepted and every connection established: any
 * failure (an accept that fails, a failure callback, a connection never
 * established within CONNECT_WAIT_S, a send that fails, a message that is
 * wrong) is counted, the first few are printed, and the process exits 1.
 * A client keeps cycling after a failed cycle, so the counts say how
 * rare a failure is. A client writes DIR/NAME.result ("attempts
 * established failures"); once the script writes DIR/stop the server
 * waits for its open connections to end, sums every *.result and checks
 * its own counts against them: requests = attempts, and accepted,
 * established, disconnected and messages = established, exactly.
 *
 * The server's open fds: counted when the script writes DIR/warm (after
 * a warm-up client ran alone; the server waits for it to be gone) and
 * again after the last client, when they must be no more (bounded wait
 * for the last sockets to close, SETTLE_S).
 *
 * Files in DIR (written under a temporary name and renamed): server.port,
 * warm (script) -> baseline (server), NAME.result, stop (script).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_types.h>

#define MSG_SIZE 256u
#define SERVER_RECVS 64u       /* receives the server keeps posted */
#define CONNECT_WAIT_S 15.0    /* client: connect_to_addr -> established */
#define TASK_WAIT_S 15.0       /* client: the send's completion */
#define STOP_WAIT_S 10.0       /* doca_ctx_stop reaching IDLE */
#define QUIET_WAIT_S 15.0      /* server: open connections ending (warm, stop) */
#define SETTLE_S 5.0           /* server: fds back to the baseline */
#define POLL_MS 5              /* longest sleep on the PE's handle */
#define MAX_PRINTED 5          /* failures printed in full; the rest counted */
#define MAGIC 0x5357524du

/* ------------------------------------------------------------------ */

enum role { ROLE_SERVER, ROLE_CLIENT };

struct recv_slot {
	struct doca_buf *buf;
	uint8_t *mem;
	bool posted;
};

struct peer {
	enum role role;
	const char *dir;
	const char *name;
	int family;
	double seconds;
	uint32_t max_cycles;
	uint16_t max_conns;
	unsigned int watchdog_s;
	char tag[64];

	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	size_t mem_len;
	uint16_t port;

	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	enum doca_ctx_states state;

	/* Server. */
	struct recv_slot slots[SERVER_RECVS];
	uint64_t requests, accepted, accept_errors, established, disconnected, failures, messages, bad_messages,
		recv_errors, strays;
	long fds_base, fds_end;

	/* Client. */
	struct doca_buf *send_buf;
	uint32_t index; /* a number taken from the name, in every message */
	uint32_t cycle;
	struct doca_rdma_connection *conn;
	int c_established, c_failed, c_disconnected;
	bool established_now, task_done, disconnecting;
	doca_error_t task_status;
	uint64_t attempts, ok_cycles, cycle_failures;

	/* Failures that do not end the run (counted, the first printed). */
	uint64_t printed;
	bool fatal;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One FAIL line (only the first MAX_PRINTED of them). Returns -1. */
__attribute__((format(printf, 2, 3))) static int failf(struct peer *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (p->printed++ >= MAX_PRINTED)
		return -1;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("FAIL %s: %s\n", p->tag, msg);
	fflush(stdout);
	return -1;
}

__attribute__((format(printf, 2, 3))) static void note(struct peer *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("NOTE %s: %s\n", p->tag, msg);
	fflush(stdout);
}

/* A setup step that must work: its failure ends the run. */
#define CHECK(p, call)                                                                                    \
	do {                                                                                              \
		doca_error_t err_ = (call);                                                               \
		if (err_ != DOCA_SUCCESS) {                                                               \
			(p)->fatal = true;                                                                \
			return failf((p), "line %d: %s returned %s (%s)", __LINE__, #call,                \
				     doca_error_get_name(err_), doca_error_get_descr(err_));              \
		}                                                                                         \
	} while (0)

/* A library call that blocks for ever is named, not just timed out. */
static char watchdog_prefix[160];
static const char *volatile watchdog_step = "the test's own code";

static void watchdog_fire(int sig)
{
	static const char tail[] = " (watchdog)\n";
	const char *step = watchdog_step;

	(void)sig;
	(void)!write(STDOUT_FILENO, watchdog_prefix, strlen(watchdog_prefix));
	(void)!write(STDOUT_FILENO, step, strlen(step));
	(void)!write(STDOUT_FILENO, tail, sizeof(tail) - 1);
	_exit(3);
}

/* ------------------------------------------------------------------ */
/* Files                                                                */

static int write_file(struct peer *p, const char *name, const char *text)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	size_t len = strlen(text);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) != 0 || rename(tmp, path) != 0) {
		p->fatal = true;
		return failf(p, "writing %s: %s", path, strerror(errno));
	}
	return 0;
}

static bool file_exists(const struct peer *p, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	return stat(path, &st) == 0;
}

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own */
}

/* ------------------------------------------------------------------ */
/* Progress                                                             */

/* One round of progress; with nothing to do, sleep on the PE's handle
 * for at most max_ms (callers re-check their condition and deadline). */
static void progress_wait(struct peer *p, int max_ms)
{
	doca_notification_handle_t fd;
	struct pollfd pfd = {.events = POLLIN};
	const char *outer = watchdog_step;

	watchdog_step = "doca_pe_progress";
	if (doca_pe_progress(p->pe)) {
		watchdog_step = outer;
		return;
	}
	if (doca_pe_get_notification_handle(p->pe, &fd) != DOCA_SUCCESS ||
	    doca_pe_request_notification(p->pe) != DOCA_SUCCESS) {
		watchdog_step = outer;
		(void)poll(NULL, 0, 1);
		return;
	}
	if (doca_pe_progress(p->pe) == 0) {
		pfd.fd = fd;
		watchdog_step = "poll on the PE's notification handle";
		(void)poll(&pfd, 1, max_ms);
	}
	watchdog_step = outer;
	(void)doca_pe_clear_notification(p->pe, fd);
}

/* ------------------------------------------------------------------ */
/* The message                                                          */

static uint8_t pat_byte(uint32_t index, uint32_t cycle, size_t i)
{
	uint64_t x = ((uint64_t)index << 40) ^ ((uint64_t)cycle << 8) ^ i ^ 0x9e3779b97f4a7c15ull;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint8_t)x;
}

/* MAGIC, the client's index, its cycle, then the pattern. */
static void msg_fill(uint8_t *b, uint32_t index, uint32_t cycle)
{
	uint32_t hdr[3] = {MAGIC, index, cycle};

	for (size_t i = 0; i < MSG_SIZE; i++)
		b[i] = pat_byte(index, cycle, i);
	memcpy(b, hdr, sizeof(hdr));
}

static bool msg_ok(const uint8_t *b, uint32_t len)
{
	uint32_t hdr[3];

	if (len != MSG_SIZE)
		return false;
	memcpy(hdr, b, sizeof(hdr));
	if (hdr[0] != MAGIC)
		return false;
	for (size_t i = sizeof(hdr); i < MSG_SIZE; i++)
		if (b[i] != pat_byte(hdr[1], hdr[2], i))
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                            */

static void state_cb(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct peer *p = user_data.ptr;

	(void)ctx;
	(void)prev;
	p->state = next;
}

static void send_done(struct doca_rdma_task_send *t, union doca_data u, union doca_data c)
{
	struct peer *p = c.ptr;
	doca_error_t status = doca_task_get_status(doca_rdma_task_send_as_task(t));

	if (u.u64 == p->cycle && !p->task_done) {
		p->task_done = true;
		p->task_status = status;
	} else {
		failf(p, "a send completion of cycle %" PRIu64 " (%s) in cycle %u", u.u64, doca_error_get_name(status),
		      p->cycle);
	}
	doca_task_free(doca_rdma_task_send_as_task(t));
}

static void receive_done(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	struct peer *p = c.ptr;
	struct recv_slot *s = &p->slots[u.u64];
	doca_error_t status = doca_task_get_status(doca_rdma_task_receive_as_task(t));
	const struct doca_rdma_connection *conn = doca_rdma_task_receive_get_result_rdma_connection(t);

	s->posted = false;
	if (status != DOCA_SUCCESS) {
		/* Receives end in error only when the context stops. */
		if (p->state == DOCA_CTX_STATE_RUNNING) {
			p->recv_errors++;
			failf(p, "a receive failed with %s", doca_error_get_name(status));
		}
	} else if (doca_rdma_task_receive_get_result_opcode(t) != DOCA_RDMA_OPCODE_RECV_SEND || conn == NULL ||
		   !msg_ok(s->mem, doca_rdma_task_receive_get_result_len(t))) {
		p->bad_messages++;
		failf(p, "a message of %u bytes (opcode %d, connection %p) is not what a client sent",
		      doca_rdma_task_receive_get_result_len(t), (int)doca_rdma_task_receive_get_result_opcode(t),
		      (const void *)conn);
	} else {
		p->messages++;
	}
	doca_task_free(doca_rdma_task_receive_as_task(t));
}

static void server_request_cb(struct doca_rdma_connection *conn, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;
	union doca_data u = {.u64 = ++p->requests};
	doca_error_t err = doca_rdma_connection_accept(conn, NULL, 0);

	if (err != DOCA_SUCCESS) {
		p->accept_errors++;
		failf(p, "request %" PRIu64 ": doca_rdma_connection_accept returned %s", p->requests,
		      doca_error_get_name(err));
		return;
	}
	p->accepted++;
	err = doca_rdma_connection_set_user_data(conn, u);
	if (err != DOCA_SUCCESS) {
		p->strays++;
		failf(p, "request %" PRIu64 ": doca_rdma_connection_set_user_data returned %s", p->requests,
		      doca_error_get_name(err));
	}
}

/* A server callback must be about a connection it accepted. */
static bool server_knows(struct peer *p, union doca_data conn_ud, const char *what)
{
	if (conn_ud.u64 != 0 && conn_ud.u64 <= p->requests)
		return true;
	p->strays++;
	failf(p, "%s for a connection never accepted (user data %" PRIu64 ")", what, conn_ud.u64);
	return false;
}

static void established_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;

	if (p->role == ROLE_SERVER) {
		if (server_knows(p, conn_ud, "established callback"))
			p->established++;
		return;
	}
	if (conn_ud.u64 != p->cycle || p->conn != NULL) {
		failf(p, "cycle %u: established callback for user data %" PRIu64, p->cycle, conn_ud.u64);
		p->c_failed++;
		return;
	}
	p->conn = conn;
	p->c_established++;
	p->established_now = true;
}

static void failure_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;

	(void)conn;
	if (p->role == ROLE_SERVER) {
		p->failures++;
		failf(p, "failure callback of request %" PRIu64, conn_ud.u64);
		return;
	}
	p->c_failed++;
	failf(p, "cycle %u: failure callback (%s)", p->cycle,
	      p->c_established ? "after it was established" : "never established");
}

static void disconnect_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;
	doca_error_t err;

	if (p->role == ROLE_CLIENT) {
		/* Only the client disconnects: the server never does first. */
		if (!p->disconnecting) {
			p->c_failed++;
			failf(p, "cycle %u: the server disconnected", p->cycle);
		}
		return;
	}
	if (!server_knows(p, conn_ud, "disconnection callback"))
		return;
	p->disconnected++;
	/* As DOCA's samples do: disconnect in the disconnection callback. */
	err = doca_rdma_connection_disconnect(conn);
	if (err != DOCA_SUCCESS) {
		p->failures++;
		failf(p, "request %" PRIu64 ": doca_rdma_connection_disconnect in the disconnection callback "
			 "returned %s",
		      conn_ud.u64, doca_error_get_name(err));
	}
}

/* ------------------------------------------------------------------ */
/* Setup and teardown                                                   */

static int open_device(struct peer *p)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t err = DOCA_ERROR_NOT_FOUND;

	CHECK(p, doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "soft_lo") == 0) {
			err = doca_dev_open(list[i], &p->dev);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	CHECK(p, err);
	return 0;
}

/* The device and one mmap: the server's receive slots, or the client's
 * one message. */
static int setup_memory(struct peer *p)
{
	uint32_t nbufs = p->role == ROLE_SERVER ? SERVER_RECVS : 1;

	if (open_device(p) != 0)
		return -1;
	p->mem_len = (size_t)nbufs * MSG_SIZE;
	p->mem = aligned_alloc(4096, (p->mem_len + 4095) & ~(size_t)4095);
	if (p->mem == NULL) {
		p->fatal = true;
		return failf(p, "cannot allocate %zu bytes", p->mem_len);
	}
	memset(p->mem, 0, p->mem_len);
	CHECK(p, doca_mmap_create(&p->mmap));
	CHECK(p, doca_mmap_set_memrange(p->mmap, p->mem, p->mem_len));
	CHECK(p, doca_mmap_set_permissions(p->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(p, doca_mmap_add_dev(p->mmap, p->dev));
	CHECK(p, doca_mmap_start(p->mmap));
	CHECK(p, doca_buf_inventory_create(nbufs, &p->inv));
	CHECK(p, doca_buf_inventory_start(p->inv));
	if (p->role == ROLE_CLIENT) {
		CHECK(p, doca_buf_inventory_buf_get_by_args(p->inv, p->mmap, p->mem, MSG_SIZE, p->mem, MSG_SIZE,
							    &p->send_buf));
		return 0;
	}
	for (uint32_t i = 0; i < SERVER_RECVS; i++) {
		struct recv_slot *s = &p->slots[i];

		s->mem = p->mem + (size_t)i * MSG_SIZE;
		CHECK(p, doca_buf_inventory_buf_get_by_args(p->inv, p->mmap, s->mem, MSG_SIZE, s->mem, 0, &s->buf));
	}
	return 0;
}

static int ctx_create(struct peer *p)
{
	union doca_data cud = {.ptr = p};
	bool server = p->role == ROLE_SERVER;
	doca_error_t err;

	CHECK(p, doca_pe_create(&p->pe));
	CHECK(p, doca_rdma_create(p->dev, &p->rdma));
	p->ctx = doca_rdma_as_ctx(p->rdma);
	CHECK(p, p->ctx != NULL ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED);
	CHECK(p, doca_rdma_set_permissions(p->rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(p, doca_rdma_set_max_num_connections(p->rdma, server ? p->max_conns : 1));
	if (server)
		CHECK(p, doca_rdma_task_receive_set_conf(p->rdma, receive_done, receive_done, SERVER_RECVS));
	else
		CHECK(p, doca_rdma_task_send_set_conf(p->rdma, send_done, send_done, 2));
	CHECK(p, doca_rdma_set_connection_state_callbacks(p->rdma, server ? server_request_cb : NULL, established_cb,
							  failure_cb, disconnect_cb));
	CHECK(p, doca_ctx_set_user_data(p->ctx, cud));
	CHECK(p, doca_ctx_set_state_changed_cb(p->ctx, state_cb));
	CHECK(p, doca_pe_connect_ctx(p->pe, p->ctx));
	watchdog_step = "doca_ctx_start";
	err = doca_ctx_start(p->ctx);
	watchdog_step = "the test's own code";
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		CHECK(p, err);
	for (double deadline = now_s() + STOP_WAIT_S; p->state != DOCA_CTX_STATE_RUNNING;) {
		if (now_s() > deadline) {
			p->fatal = true;
			return failf(p, "the context did not reach RUNNING within %.0f s", STOP_WAIT_S);
		}
		progress_wait(p, POLL_MS);
	}
	return 0;
}

/* Stop (bounded), destroy the context and its PE. A context that does
 * not stop ends the run. */
static int ctx_destroy(struct peer *p)
{
	doca_error_t err;
	int rc = 0;

	if (p->ctx != NULL && p->state != DOCA_CTX_STATE_IDLE) {
		watchdog_step = "doca_ctx_stop";
		err = doca_ctx_stop(p->ctx);
		watchdog_step = "the test's own code";
		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS) {
			p->fatal = true;
			return failf(p, "doca_ctx_stop returned %s", doca_error_get_name(err));
		}
		for (double deadline = now_s() + STOP_WAIT_S; p->state != DOCA_CTX_STATE_IDLE;) {
			if (now_s() > deadline) {
				p->fatal = true;
				return failf(p, "the context did not reach IDLE within %.0f s of doca_ctx_stop",
					     STOP_WAIT_S);
			}
			progress_wait(p, POLL_MS);
		}
	}
	watchdog_step = "doca_rdma_destroy";
	if (p->rdma != NULL && (err = doca_rdma_destroy(p->rdma)) != DOCA_SUCCESS) {
		p->fatal = true;
		rc = failf(p, "doca_rdma_destroy returned %s", doca_error_get_name(err));
	}
	watchdog_step = "doca_pe_destroy";
	if (p->pe != NULL && (err = doca_pe_destroy(p->pe)) != DOCA_SUCCESS) {
		p->fatal = true;
		rc = failf(p, "doca_pe_destroy returned %s", doca_error_get_name(err));
	}
	watchdog_step = "the test's own code";
	p->rdma = NULL;
	p->ctx = NULL;
	p->pe = NULL;
	return rc;
}

static void teardown_memory(struct peer *p)
{
	if (p->send_buf != NULL)
		(void)doca_buf_dec_refcount(p->send_buf, NULL);
	for (uint32_t i = 0; i < SERVER_RECVS; i++)
		if (p->slots[i].buf != NULL)
			(void)doca_buf_dec_refcount(p->slots[i].buf, NULL);
	if (p->inv != NULL) {
		(void)doca_buf_inventory_stop(p->inv);
		(void)doca_buf_inventory_destroy(p->inv);
	}
	if (p->mmap != NULL) {
		(void)doca_mmap_stop(p->mmap);
		(void)doca_mmap_destroy(p->mmap);
	}
	if (p->dev != NULL)
		(void)doca_dev_close(p->dev);
	free(p->mem);
}

/* ------------------------------------------------------------------ */
/* Server                                                               */

static int server_listen(struct peer *p)
{
	uint16_t base = (uint16_t)(20000 + (getpid() * 7) % 30000);
	doca_error_t err = DOCA_ERROR_UNKNOWN;
	char text[16];

	for (int i = 0; i < 64 && p->port == 0; i++) {
		uint16_t port = (uint16_t)(base + i * 13);

		err = doca_rdma_start_listen_to_port(p->rdma, port);
		if (err == DOCA_SUCCESS)
			p->port = port;
		else if (err != DOCA_ERROR_IN_USE)
			CHECK(p, err);
	}
	if (p->port == 0)
		CHECK(p, err);
	snprintf(text, sizeof(text), "%u", p->port);
	return write_file(p, "server.port", text);
}

/* Every receive slot not waiting for a message gets a new receive. */
static int server_post_receives(struct peer *p)
{
	for (uint32_t i = 0; i < SERVER_RECVS; i++) {
		struct recv_slot *s = &p->slots[i];
		struct doca_rdma_task_receive *t = NULL;
		union doca_data u = {.u64 = i};
		doca_error_t err;

		if (s->posted)
			continue;
		CHECK(p, doca_buf_reset_data_len(s->buf));
		CHECK(p, doca_rdma_task_receive_allocate_init(p->rdma, s->buf, u, &t));
		err = doca_task_submit(doca_rdma_task_receive_as_task(t));
		if (err != DOCA_SUCCESS) {
			doca_task_free(doca_rdma_task_receive_as_task(t));
			CHECK(p, err);
		}
		s->posted = true;
	}
	return 0;
}

static uint64_t server_open(const struct peer *p)
{
	return p->accepted - p->disconnected - p->failures;
}

/* Progress until no accepted connection is open any more (bounded). */
static int server_quiesce(struct peer *p, const char *when)
{
	double deadline = now_s() + QUIET_WAIT_S;

	while (server_open(p) > 0) {
		if (now_s() > deadline) {
			p->fatal = true;
			return failf(p, "%s: %" PRIu64 " connections still open after %.0f s (accepted %" PRIu64
					", disconnected %" PRIu64 ", failed %" PRIu64 ")",
				     when, server_open(p), QUIET_WAIT_S, p->accepted, p->disconnected, p->failures);
		}
		if (server_post_receives(p) != 0)
			return -1;
		progress_wait(p, POLL_MS);
	}
	return server_post_receives(p);
}

/* The fds once the last sockets of the clients are closed: none more than
 * at the baseline (bounded wait; a leak never settles). */
static int server_fds_settle(struct peer *p)
{
	double deadline = now_s() + SETTLE_S;

	for (;;) {
		p->fds_end = count_fds();
		if (p->fds_end <= p->fds_base || now_s() > deadline)
			return 0;
		progress_wait(p, POLL_MS);
	}
}

/* The sum of every client's DIR/NAME.result. */
static int sum_results(struct peer *p, uint64_t *attempts, uint64_t *established, uint64_t *failures, int *files)
{
	DIR *d = opendir(p->dir);
	struct dirent *e;

	*attempts = *established = *failures = 0;
	*files = 0;
	if (d == NULL) {
		p->fatal = true;
		return failf(p, "cannot open %s: %s", p->dir, strerror(errno));
	}
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		char path[PATH_MAX];
		unsigned long long a, b, c;
		FILE *f;
		int got;

		if (len < 8 || strcmp(e->d_name + len - 7, ".result") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", p->dir, e->d_name);
		f = fopen(path, "re");
		got = f != NULL ? fscanf(f, "%llu %llu %llu", &a, &b, &c) : 0;
		if (f != NULL)
			fclose(f);
		if (got != 3) {
			closedir(d);
			p->fatal = true;
			return failf(p, "%s does not hold three numbers", path);
		}
		*attempts += a;
		*established += b;
		*failures += c;
		(*files)++;
	}
	closedir(d);
	return 0;
}

static int server_main(struct peer *p)
{
	uint64_t attempts = 0, established = 0, client_failures = 0;
	int files = 0, rc = -1;
	bool baseline = false, quiet;
	double t0 = 0, next_look = 0;

	if (setup_memory(p) != 0 || ctx_create(p) != 0 || server_post_receives(p) != 0 || server_listen(p) != 0)
		goto out;
	for (;;) {
		double t = now_s();

		if (p->fatal || server_post_receives(p) != 0)
			goto out;
		if (t >= next_look) {
			next_look = t + 0.05;
			if (!baseline && file_exists(p, "warm")) {
				/* The warm-up client is gone: what is open now is
				 * the server's working set. */
				if (server_quiesce(p, "after the warm-up") != 0)
					goto out;
				p->fds_base = count_fds();
				baseline = true;
				t0 = now_s();
				note(p, "baseline after the warm-up (%" PRIu64 " requests): %ld fds", p->requests,
				     p->fds_base);
				if (write_file(p, "baseline", "1") != 0)
					goto out;
			}
			if (baseline && file_exists(p, "stop"))
				break;
		}
		progress_wait(p, POLL_MS);
	}
	/* Connections that never end fail the run, after the counts. */
	quiet = server_quiesce(p, "after the last client") == 0;
	p->fatal = false;
	if (quiet && server_fds_settle(p) != 0)
		goto out;
	if (sum_results(p, &attempts, &established, &client_failures, &files) != 0)
		goto out;
	note(p, "%" PRIu64 " requests in %.1f s: %" PRIu64 " accepted, %" PRIu64 " accept errors, %" PRIu64
		" established, %" PRIu64 " disconnected, %" PRIu64 " failure callbacks, %" PRIu64 " messages (%" PRIu64
		" wrong, %" PRIu64 " receive errors), %" PRIu64 " stray callbacks",
	     p->requests, now_s() - t0, p->accepted, p->accept_errors, p->established, p->disconnected, p->failures,
	     p->messages, p->bad_messages, p->recv_errors, p->strays);
	note(p, "%d clients' results: %" PRIu64 " connection attempts, %" PRIu64 " established, %" PRIu64
		" failed cycles",
	     files, attempts, established, client_failures);
	if (quiet)
		note(p, "open fds: %ld at the baseline, %ld after the last client", p->fds_base, p->fds_end);
	/* The verdicts: each printed, however many failures came before. */
	p->printed = 0;
	rc = 0;
	if (!quiet)
		rc = failf(p, "%" PRIu64 " accepted connections never ended", server_open(p));
	if (p->accept_errors || p->failures || p->bad_messages || p->recv_errors || p->strays)
		rc = failf(p, "%" PRIu64 " accept errors, %" PRIu64 " failure callbacks, %" PRIu64 " wrong messages, "
			      "%" PRIu64 " receive errors, %" PRIu64 " stray callbacks",
			   p->accept_errors, p->failures, p->bad_messages, p->recv_errors, p->strays);
	if (p->requests != attempts || p->accepted != established || p->established != established ||
	    p->disconnected != established || p->messages != established)
		rc = failf(p, "the clients made %" PRIu64 " attempts, %" PRIu64 " established; the server saw %" PRIu64
			      " requests, accepted %" PRIu64 ", established %" PRIu64 ", disconnected %" PRIu64
			      ", received %" PRIu64 " messages",
			   attempts, established, p->requests, p->accepted, p->established, p->disconnected,
			   p->messages);
	if (files == 0 || attempts == 0)
		rc = failf(p, "no client results in %s", p->dir);
	if (p->fds_end > p->fds_base)
		rc = failf(p, "open fds grew from %ld to %ld", p->fds_base, p->fds_end);
out:
	if (ctx_destroy(p) != 0)
		rc = -1;
	teardown_memory(p);
	if (rc == 0 && !p->fatal)
		printf("PASS %s: %" PRIu64 " requests from %d clients, every one accepted, established, its message "
		       "checked and disconnected; fds flat (%ld)\n",
		       p->tag, p->requests, files, p->fds_end);
	return rc == 0 && !p->fatal ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* Client                                                               */

static int client_wait(struct peer *p, bool *done, double wait_s, const char *what)
{
	double deadline = now_s() + wait_s;

	while (!*done) {
		if (p->c_failed)
			return -1; /* failure_cb said why */
		if (now_s() > deadline)
			return failf(p, "cycle %u: %s within %.0f s", p->cycle, what, wait_s);
		progress_wait(p, POLL_MS);
	}
	return 0;
}

/* One cycle: fresh context, connect, established, send, disconnect. */
static int client_cycle(struct peer *p)
{
	enum doca_rdma_addr_type type = p->family == 6 ? DOCA_RDMA_ADDR_TYPE_IPv6 : DOCA_RDMA_ADDR_TYPE_IPv4;
	const char *host = p->family == 6 ? "::1" : "127.0.0.1";
	struct doca_rdma_addr *addr = NULL;
	struct doca_rdma_task_send *t = NULL;
	union doca_data u = {.u64 = p->cycle};
	doca_error_t err;

	p->conn = NULL;
	p->c_established = p->c_failed = p->c_disconnected = 0;
	p->established_now = p->task_done = p->disconnecting = false;
	if (ctx_create(p) != 0)
		return -1;
	CHECK(p, doca_rdma_addr_create(type, host, p->port, &addr));
	p->attempts++;
	err = doca_rdma_connect_to_addr(p->rdma, addr, u);
	(void)doca_rdma_addr_destroy(addr);
	if (err != DOCA_SUCCESS)
		return failf(p, "cycle %u: doca_rdma_connect_to_addr(%s port %u) returned %s", p->cycle, host, p->port,
			     doca_error_get_name(err));
	if (client_wait(p, &p->established_now, CONNECT_WAIT_S, "no established callback") != 0)
		return -1;
	msg_fill(p->mem, p->index, p->cycle);
	CHECK(p, doca_buf_reset_data_len(p->send_buf));
	CHECK(p, doca_buf_set_data_len(p->send_buf, MSG_SIZE));
	CHECK(p, doca_rdma_task_send_allocate_init(p->rdma, p->conn, p->send_buf, u, &t));
	err = doca_task_submit(doca_rdma_task_send_as_task(t));
	if (err != DOCA_SUCCESS) {
		doca_task_free(doca_rdma_task_send_as_task(t));
		return failf(p, "cycle %u: submitting the send returned %s", p->cycle, doca_error_get_name(err));
	}
	if (client_wait(p, &p->task_done, TASK_WAIT_S, "the send did not complete") != 0)
		return -1;
	if (p->task_status != DOCA_SUCCESS)
		return failf(p, "cycle %u: the send failed with %s", p->cycle, doca_error_get_name(p->task_status));
	p->disconnecting = true;
	err = doca_rdma_connection_disconnect(p->conn);
	if (err != DOCA_SUCCESS)
		return failf(p, "cycle %u: doca_rdma_connection_disconnect returned %s", p->cycle,
			     doca_error_get_name(err));
	return p->c_failed ? -1 : 0;
}

static int client_main(struct peer *p)
{
	char text[96], path[PATH_MAX];
	unsigned long port = 0;
	double t0, deadline;
	FILE *f;

	snprintf(path, sizeof(path), "%s/server.port", p->dir);
	f = fopen(path, "re");
	if (f == NULL || fscanf(f, "%lu", &port) != 1 || port == 0 || port > 65535) {
		if (f != NULL)
			fclose(f);
		p->fatal = true;
		failf(p, "no port in %s", path);
		return -1;
	}
	fclose(f);
	p->port = (uint16_t)port;
	if (setup_memory(p) != 0)
		goto out;
	t0 = now_s();
	deadline = t0 + p->seconds;
	for (p->cycle = 1; !p->fatal && (p->max_cycles == 0 || p->cycle <= p->max_cycles) &&
			   (p->seconds == 0 || now_s() < deadline);
	     p->cycle++) {
		int rc = client_cycle(p);

		if (ctx_destroy(p) != 0)
			rc = -1;
		if (rc == 0 && p->c_established == 1 && p->c_failed == 0) {
			p->ok_cycles++;
		} else {
			if (rc == 0)
				failf(p, "cycle %u: %d established and %d failure callbacks", p->cycle,
				      p->c_established, p->c_failed);
			p->cycle_failures++;
		}
	}
	note(p, "%" PRIu64 " attempts in %.1f s over IPv%d: %" PRIu64 " established and disconnected, %" PRIu64
		" failed",
	     p->attempts, now_s() - t0, p->family, p->ok_cycles, p->cycle_failures);
	snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p->attempts, p->ok_cycles,
		 p->cycle_failures);
	snprintf(path, sizeof(path), "%s.result", p->name);
	(void)write_file(p, path, text);
out:
	teardown_memory(p);
	if (p->fatal || p->cycle_failures > 0 || p->attempts == 0)
		return -1;
	printf("PASS %s: %" PRIu64 " cycles of a fresh context, connect, send, disconnect, destroy\n", p->tag,
	       p->ok_cycles);
	return 0;
}

/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: swarm_peer --role server --dir DIR [--max-conns N] [--watchdog S]\n"
		   "       swarm_peer --role client --dir DIR --name NAME [--seconds S] [--cycles N] [--family 4|6]\n"
		   "                  [--watchdog S]\n");
}

static int parse_num(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"role", required_argument, NULL, 'r'},	    {"dir", required_argument, NULL, 'd'},
		{"name", required_argument, NULL, 'N'},	    {"seconds", required_argument, NULL, 's'},
		{"cycles", required_argument, NULL, 'n'},   {"family", required_argument, NULL, 'f'},
		{"max-conns", required_argument, NULL, 'm'}, {"watchdog", required_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
	};
	struct peer p = {.family = 4, .max_conns = 128, .watchdog_s = 100, .state = DOCA_CTX_STATE_IDLE};
	struct doca_log_backend *sdk_log = NULL;
	const char *role = NULL;
	unsigned long v;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			role = optarg;
			break;
		case 'd':
			p.dir = optarg;
			break;
		case 'N':
			p.name = optarg;
			break;
		case 's':
			if (parse_num(optarg, 0, 3600, &v) != 0)
				goto bad;
			p.seconds = (double)v;
			break;
		case 'n':
			if (parse_num(optarg, 0, 10000000, &v) != 0)
				goto bad;
			p.max_cycles = (uint32_t)v;
			break;
		case 'f':
			if (strcmp(optarg, "4") != 0 && strcmp(optarg, "6") != 0)
				goto bad;
			p.family = optarg[0] - '0';
			break;
		case 'm':
			if (parse_num(optarg, 1, 1024, &v) != 0)
				goto bad;
			p.max_conns = (uint16_t)v;
			break;
		case 'W':
			if (parse_num(optarg, 1, 3600, &v) != 0)
				goto bad;
			p.watchdog_s = (unsigned int)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (role == NULL || p.dir == NULL || optind != argc)
		goto bad;
	if (strcmp(role, "server") == 0) {
		p.role = ROLE_SERVER;
		p.name = "server";
	} else if (strcmp(role, "client") == 0 && p.name != NULL && strchr(p.name, '/') == NULL &&
		   (p.seconds > 0 || p.max_cycles > 0)) {
		p.role = ROLE_CLIENT;
		for (const char *c = p.name; *c != '\0'; c++)
			p.index = p.index * 31u + (uint8_t)*c;
	} else {
		goto bad;
	}
	snprintf(p.tag, sizeof(p.tag), "%s pid %d", p.name, (int)getpid());
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Library messages at WARNING and above go to stderr (DEBUG with
	 * SWARM_PEER_DEBUG=1, to see why a request was dropped). */
	if (doca_log_backend_create_with_file_sdk(stderr, &sdk_log) == DOCA_SUCCESS)
		(void)doca_log_backend_set_sdk_level(sdk_log, getenv("SWARM_PEER_DEBUG") != NULL ?
								      DOCA_LOG_LEVEL_DEBUG :
								      DOCA_LOG_LEVEL_WARNING);
	snprintf(watchdog_prefix, sizeof(watchdog_prefix), "FAIL %s: the run did not finish within %u s; in ",
		 p.tag, p.watchdog_s);
	signal(SIGALRM, watchdog_fire);
	alarm(p.watchdog_s);
	rc = p.role == ROLE_SERVER ? server_main(&p) : client_main(&p);
	alarm(0);
	return rc == 0 ? 0 : 1;
bad:
	usage(stderr);
	return 2;
}
