/*
 * cm_netfuzz — what an RDMA CM server does with hostile bytes on its
 * listening port, and that it still serves an honest client afterwards.
 *
 *   cm_netfuzz [--seed N]     the test (one line per case, exit 0/1/77)
 *   cm_netfuzz --serve        the server it runs (internal)
 *
 * The server is this program run again (`--serve`, a separate process, so
 * that its crash is seen as its death): a doca_rdma context on soft_lo,
 * RDMA CM on a loopback port, MAX_CONNS connection slots, a connection
 * request timeout of REQ_TIMEOUT_MS. It accepts every request (accepting
 * is what makes softdoca read the client's REQ frame, parse the descriptor
 * and create the UCX endpoint) and echoes every message it receives back
 * on its connection. It tells the test its port on stdout and ends when
 * its stdin closes (the test went away). cm_peer's server is no fit here:
 * it serves a fixed number of clients and fails on any other request.
 *
 * The test speaks softdoca's CM frame format by hand (src/engine/wire.h:
 * magic "SDCM", type, private data length, reserved, descriptor length,
 * then the descriptor), on raw TCP sockets, with a fixed seed:
 *   malformed   bad magic, bad type, wrong direction (REP, REJ), private
 *               data or reserved bits in a REQ, descriptor lengths below
 *               the minimum, and a length that disagrees with the
 *               descriptor's own
 *   truncated   part of a header or of a descriptor, then our end (FIN),
 *               or then silence with the socket held open
 *   oversized   descriptor lengths past the limit (header alone), and the
 *               largest allowed length followed by 1 MiB of bytes
 *   garbage     a valid header and descriptor header around a garbage UCX
 *               worker address: the 221-byte frame
 *   bitflip     a real descriptor (exported by a context of this process)
 *               in a REQ, with bits flipped
 *   slow        a whole REQ a few bytes at a time (it must be answered),
 *               and one that trickles for ever (the server must cut it off)
 *   idle        more silent connections than the server has slots, held
 *               open while an honest client connects and moves data
 *   honest      at the end: an honest client connects and completes an
 *               echo round trip, and the server process is still alive
 * What is asserted: a frame the server can judge from its bytes is closed
 * within FAST_CLOSE_MS of our last byte (an answer, REP, is allowed where
 * the frame is a valid request); a connection that never completes a
 * frame is closed within SLOW_CLOSE_MS of its connect; the server never
 * dies. A server that dies is started again, so the later cases still
 * say something; the case that killed it fails. The whole run is bounded
 * (BUDGET_S) and every wait has its own bound.
 *
 * Mutated UCX addresses may name any IP address: the test runs in a
 * private network namespace (only lo) when it can (root); otherwise it
 * limits UCX to shared memory (UCX_TLS=self,sm) so nothing leaves the
 * host either way.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
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

/* ---- limits ----------------------------------------------------------- */

#define MAX_CONNS 4            /* the server's connection slots */
#define IDLE_CONNS (MAX_CONNS + 4)
#define REQ_TIMEOUT_MS 2000    /* the server's connection request timeout */
#define FAST_CLOSE_MS 2000     /* a judged frame: closed by then after our last byte */
#define SLOW_CLOSE_MS (REQ_TIMEOUT_MS + 2000) /* no whole frame: closed by then after connect */
#define SERVER_START_MS 10000
#define CONNECT_WAIT_MS 8000   /* an honest client's established callback */
#define ECHO_WAIT_MS 8000      /* its round trip */
#define STOP_WAIT_MS 5000
#define BUDGET_S 40.0
#define MAX_RESTARTS 8
#define BITFLIP_FRAMES 48
#define GARBAGE_FRAMES 8

/* ---- wire format (src/engine/wire.h) ----------------------------------- */

#define CM_MAGIC 0x4d434453u /* "SDCM" */
#define CM_HDR_LEN 12
#define CM_REQ 1
#define CM_REP 2
#define CM_REJ 3
#define DESC_VERSION 4     /* WIRE_VERSION */
#define DESC_FIXED_LEN 112 /* WIRE_DESC_FIXED_LEN */
#define DESC_MAX_ADDR_LEN 8192
#define DESC_FLAG_SHM 0x2     /* WIRE_DESC_FLAG_SHM */
#define DESC_UCX_DEFAULTS 0xf /* WIRE_UCX_*: the UCX settings softdoca applies when none is set */
#define GARBAGE_ADDR_LEN 145 /* 12 + 112 + 145 = 269 bytes */

/* ---- data path ----------------------------------------------------------- */

#define NRECV 16
#define SLOT_LEN 1024
#define MSG_LEN 256

/* ---- small helpers ------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state;

/* xorshift64*: a fixed seed gives the same frames every run. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void cm_header(uint8_t *h, uint32_t magic, uint8_t type, uint8_t priv_len, uint16_t reserved,
		      uint32_t desc_len)
{
	put_u32(h, magic);
	h[4] = type;
	h[5] = priv_len;
	put_u16(h + 6, reserved);
	put_u32(h + 8, desc_len);
}

/* ======================================================================== */
/* A doca_rdma context on soft_lo: the server, an honest client, and the    */
/* source of a real descriptor are each one.                                */

struct node {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem; /* NRECV receive slots, then NRECV send slots */
	enum doca_ctx_states state;
	bool server;
	/* client */
	struct doca_rdma_connection *conn;
	int established, failed, disconnected;
	int sends_ok, sends_err, recvs_ok, recvs_err;
	uint32_t recv_len;
	/* server */
	int requests, accepts, echoes;
};

static int node_fail(const char *what, doca_error_t err)
{
	fprintf(stderr, "cm_netfuzz: %s: %s\n", what, doca_error_get_name(err));
	return -1;
}

#define TRY(call)                                                        \
	do {                                                             \
		doca_error_t err_ = (call);                              \
		if (err_ != DOCA_SUCCESS)                                \
			return node_fail(#call, err_);                   \
	} while (0)

static uint8_t *recv_slot(struct node *n, uint32_t i)
{
	return n->mem + (size_t)i * SLOT_LEN;
}

static uint8_t *send_slot(struct node *n, uint32_t i)
{
	return n->mem + (size_t)(NRECV + i) * SLOT_LEN;
}

static void progress_wait(struct node *n, int max_ms)
{
	doca_notification_handle_t fd;
	struct pollfd p;

	if (doca_pe_progress(n->pe))
		return;
	if (doca_pe_get_notification_handle(n->pe, &fd) != DOCA_SUCCESS ||
	    doca_pe_request_notification(n->pe) != DOCA_SUCCESS) {
		poll(NULL, 0, 1);
		return;
	}
	if (doca_pe_progress(n->pe) == 0) {
		p.fd = fd;
		p.events = POLLIN;
		p.revents = 0;
		(void)poll(&p, 1, max_ms);
	}
	(void)doca_pe_clear_notification(n->pe, fd);
}

static union doca_data ud_u64(uint64_t v)
{
	union doca_data d = {.u64 = v};

	return d;
}

static doca_error_t post_receive(struct node *n, uint32_t i)
{
	struct doca_rdma_task_receive *t;
	struct doca_buf *buf;
	doca_error_t err;

	err = doca_buf_inventory_buf_get_by_addr(n->inv, n->mmap, recv_slot(n, i), SLOT_LEN, &buf);
	if (err != DOCA_SUCCESS)
		return err;
	err = doca_rdma_task_receive_allocate_init(n->rdma, buf, ud_u64(i), &t);
	if (err == DOCA_SUCCESS) {
		err = doca_task_submit(doca_rdma_task_receive_as_task(t));
		if (err != DOCA_SUCCESS)
			doca_task_free(doca_rdma_task_receive_as_task(t));
	}
	if (err != DOCA_SUCCESS)
		(void)doca_buf_dec_refcount(buf, NULL);
	return err;
}

static doca_error_t post_send(struct node *n, struct doca_rdma_connection *conn, uint32_t i, size_t len)
{
	struct doca_rdma_task_send *t;
	struct doca_buf *buf;
	doca_error_t err;

	err = doca_buf_inventory_buf_get_by_data(n->inv, n->mmap, send_slot(n, i), len, &buf);
	if (err != DOCA_SUCCESS)
		return err;
	err = doca_rdma_task_send_allocate_init(n->rdma, conn, buf, ud_u64(i), &t);
	if (err == DOCA_SUCCESS) {
		err = doca_task_submit(doca_rdma_task_send_as_task(t));
		if (err != DOCA_SUCCESS)
			doca_task_free(doca_rdma_task_send_as_task(t));
	}
	if (err != DOCA_SUCCESS)
		(void)doca_buf_dec_refcount(buf, NULL);
	return err;
}

/* ---- task callbacks ------------------------------------------------------ */

static void receive_ok_cb(struct doca_rdma_task_receive *t, union doca_data tud, union doca_data cud)
{
	struct node *n = cud.ptr;
	uint32_t i = (uint32_t)tud.u64;
	uint32_t len = doca_rdma_task_receive_get_result_len(t);
	/* The connection the message came on: ours to answer on. */
	struct doca_rdma_connection *conn =
		(struct doca_rdma_connection *)doca_rdma_task_receive_get_result_rdma_connection(t);

	(void)doca_buf_dec_refcount(doca_rdma_task_receive_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_receive_as_task(t));
	n->recvs_ok++;
	n->recv_len = len;
	if (!n->server)
		return;
	/* Echo it, and give the slot a new receive. */
	if (len > SLOT_LEN)
		len = SLOT_LEN;
	memcpy(send_slot(n, i), recv_slot(n, i), len);
	if (conn != NULL && post_send(n, conn, i, len) == DOCA_SUCCESS)
		n->echoes++;
	(void)post_receive(n, i);
}

static void receive_err_cb(struct doca_rdma_task_receive *t, union doca_data tud, union doca_data cud)
{
	struct node *n = cud.ptr;

	(void)tud;
	(void)doca_buf_dec_refcount(doca_rdma_task_receive_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_receive_as_task(t));
	n->recvs_err++;
}

static void send_done(struct doca_rdma_task_send *t, union doca_data cud, bool ok)
{
	struct node *n = cud.ptr;

	(void)doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_send_get_src_buf(t), NULL);
	doca_task_free(doca_rdma_task_send_as_task(t));
	if (ok)
		n->sends_ok++;
	else
		n->sends_err++;
}

static void send_ok_cb(struct doca_rdma_task_send *t, union doca_data tud, union doca_data cud)
{
	(void)tud;
	send_done(t, cud, true);
}

static void send_err_cb(struct doca_rdma_task_send *t, union doca_data tud, union doca_data cud)
{
	(void)tud;
	send_done(t, cud, false);
}

/* ---- connection callbacks ------------------------------------------------ */

static void request_cb(struct doca_rdma_connection *conn, union doca_data cud)
{
	struct node *n = cud.ptr;

	n->requests++;
	if (doca_rdma_connection_accept(conn, NULL, 0) == DOCA_SUCCESS)
		n->accepts++;
}

static void established_cb(struct doca_rdma_connection *conn, union doca_data uud, union doca_data cud)
{
	struct node *n = cud.ptr;

	(void)uud;
	n->established++;
	if (!n->server)
		n->conn = conn;
}

static void failure_cb(struct doca_rdma_connection *conn, union doca_data uud, union doca_data cud)
{
	struct node *n = cud.ptr;

	(void)conn;
	(void)uud;
	n->failed++;
}

static void disconnect_cb(struct doca_rdma_connection *conn, union doca_data uud, union doca_data cud)
{
	struct node *n = cud.ptr;

	(void)uud;
	n->disconnected++;
	(void)doca_rdma_connection_disconnect(conn);
}

static void state_cb(const union doca_data cud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct node *n = cud.ptr;

	(void)ctx;
	(void)prev;
	n->state = next;
}

/* ---- set up and tear down -------------------------------------------------- */

/* 1 when there is no soft_lo device (the test then skips). */
static int node_open_dev(struct node *n)
{
	struct doca_devinfo **list = NULL;
	uint32_t count = 0;

	TRY(doca_devinfo_create_list(&list, &count));
	for (uint32_t i = 0; i < count && n->dev == NULL; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "soft_lo") == 0 && doca_dev_open(list[i], &n->dev) != DOCA_SUCCESS)
			n->dev = NULL;
	}
	doca_devinfo_destroy_list(list);
	return n->dev == NULL ? 1 : 0;
}

static int node_start(struct node *n, bool server)
{
	union doca_data cud = {.ptr = n};
	size_t mem_len = (size_t)2 * NRECV * SLOT_LEN;
	int rc;

	n->server = server;
	rc = node_open_dev(n);
	if (rc != 0)
		return rc;
	n->mem = aligned_alloc(4096, mem_len);
	if (n->mem == NULL)
		return node_fail("aligned_alloc", DOCA_ERROR_NO_MEMORY);
	memset(n->mem, 0, mem_len);
	TRY(doca_mmap_create(&n->mmap));
	TRY(doca_mmap_set_memrange(n->mmap, n->mem, mem_len));
	TRY(doca_mmap_set_permissions(n->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	TRY(doca_mmap_add_dev(n->mmap, n->dev));
	TRY(doca_mmap_start(n->mmap));
	TRY(doca_buf_inventory_create(4 * NRECV, &n->inv));
	TRY(doca_buf_inventory_start(n->inv));
	TRY(doca_pe_create(&n->pe));
	TRY(doca_rdma_create(n->dev, &n->rdma));
	n->ctx = doca_rdma_as_ctx(n->rdma);
	TRY(doca_rdma_set_max_num_connections(n->rdma, MAX_CONNS));
	TRY(doca_rdma_set_connection_request_timeout(n->rdma, REQ_TIMEOUT_MS));
	TRY(doca_rdma_task_receive_set_conf(n->rdma, receive_ok_cb, receive_err_cb, NRECV));
	TRY(doca_rdma_task_send_set_conf(n->rdma, send_ok_cb, send_err_cb, NRECV));
	TRY(doca_rdma_set_connection_state_callbacks(n->rdma, server ? request_cb : NULL, established_cb, failure_cb,
						     disconnect_cb));
	TRY(doca_ctx_set_user_data(n->ctx, cud));
	TRY(doca_ctx_set_state_changed_cb(n->ctx, state_cb));
	TRY(doca_pe_connect_ctx(n->pe, n->ctx));
	TRY(doca_ctx_start(n->ctx));
	for (double end = now_s() + STOP_WAIT_MS / 1000.0; n->state != DOCA_CTX_STATE_RUNNING;) {
		if (now_s() > end)
			return node_fail("the context did not reach RUNNING", DOCA_ERROR_TIME_OUT);
		progress_wait(n, 10);
	}
	return 0;
}

static void node_stop(struct node *n)
{
	if (n->ctx != NULL && n->state != DOCA_CTX_STATE_IDLE && doca_ctx_stop(n->ctx) != DOCA_ERROR_BAD_STATE) {
		double end = now_s() + STOP_WAIT_MS / 1000.0;

		while (n->state != DOCA_CTX_STATE_IDLE && now_s() < end)
			progress_wait(n, 10);
	}
	if (n->rdma != NULL && n->state == DOCA_CTX_STATE_IDLE)
		(void)doca_rdma_destroy(n->rdma);
	if (n->pe != NULL && n->state == DOCA_CTX_STATE_IDLE)
		(void)doca_pe_destroy(n->pe);
	if (n->inv != NULL) {
		(void)doca_buf_inventory_stop(n->inv);
		(void)doca_buf_inventory_destroy(n->inv);
	}
	if (n->mmap != NULL) {
		(void)doca_mmap_stop(n->mmap);
		(void)doca_mmap_destroy(n->mmap);
	}
	if (n->dev != NULL)
		(void)doca_dev_close(n->dev);
	free(n->mem);
	memset(n, 0, sizeof(*n));
}

/* ======================================================================== */
/* --serve                                                                  */

static int serve(void)
{
	struct node n = {0};
	uint16_t port = 0;
	int rc;

	rc = node_start(&n, true);
	if (rc != 0) {
		printf("%s\n", rc == 1 ? "NODEV" : "FAILED");
		fflush(stdout);
		return rc == 1 ? 77 : 1;
	}
	for (uint32_t i = 0; i < NRECV; i++)
		TRY(post_receive(&n, i));
	for (int i = 0; i < 200 && port == 0; i++) {
		uint16_t p = (uint16_t)(20000 + (getpid() * 11 + i * 137) % 40000);

		if (doca_rdma_start_listen_to_port(n.rdma, p) == DOCA_SUCCESS)
			port = p;
	}
	if (port == 0) {
		printf("FAILED\n");
		fflush(stdout);
		return 1;
	}
	printf("PORT %u\n", port);
	fflush(stdout);
	/* Until the test closes our stdin. */
	for (;;) {
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		char c;

		progress_wait(&n, 5);
		if (poll(&p, 1, 0) > 0 && read(STDIN_FILENO, &c, 1) <= 0)
			break;
	}
	fprintf(stderr, "cm_netfuzz server: %d requests, %d accepted, %d established, %d failed, %d echoes\n",
		n.requests, n.accepts, n.established, n.failed, n.echoes);
	node_stop(&n);
	return 0;
}

/* ======================================================================== */
/* The test                                                                 */

static struct {
	pid_t pid;
	int to_server;   /* its stdin */
	uint16_t port;
	int restarts;
	int deaths;
	const char *self;
} srv = {.pid = -1, .to_server = -1};

static int failures;
static double t_start;

__attribute__((format(printf, 2, 3))) static void verdict(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" [%.1fs]\n", now_s() - t_start);
	fflush(stdout);
	if (!ok)
		failures++;
}

/* Read "PORT n" from the server, bounded. */
static int server_read_port(int fd)
{
	char line[64];
	size_t len = 0;
	double end = now_s() + SERVER_START_MS / 1000.0;

	while (len + 1 < sizeof(line) && now_s() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t got;

		if (poll(&p, 1, 100) <= 0)
			continue;
		got = read(fd, line + len, 1);
		if (got <= 0)
			break;
		if (line[len] == '\n')
			break;
		len++;
	}
	line[len] = '\0';
	if (strcmp(line, "NODEV") == 0)
		return -77;
	if (strncmp(line, "PORT ", 5) != 0)
		return -1;
	return atoi(line + 5);
}

/* 0 started, 77 no soft_lo, -1 failed. */
static int server_start(void)
{
	int in[2], out[2];
	int port;

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return -1;
	srv.pid = fork();
	if (srv.pid < 0)
		return -1;
	if (srv.pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		execl(srv.self, srv.self, "--serve", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	srv.to_server = in[1];
	port = server_read_port(out[0]);
	close(out[0]);
	if (port == -77)
		return 77;
	if (port <= 0) {
		fprintf(stderr, "cm_netfuzz: the server did not say its port\n");
		return -1;
	}
	srv.port = (uint16_t)port;
	return 0;
}

/* Is the server process alive? If it died, say how (once). */
static bool server_alive(char *why, size_t len)
{
	int status;
	pid_t got;

	if (srv.pid <= 0) {
		snprintf(why, len, "no server");
		return false;
	}
	got = waitpid(srv.pid, &status, WNOHANG);
	if (got == 0)
		return true;
	if (got == srv.pid && WIFSIGNALED(status))
		snprintf(why, len, "the server died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (got == srv.pid)
		snprintf(why, len, "the server exited with status %d", WEXITSTATUS(status));
	else
		snprintf(why, len, "waitpid: %s", strerror(errno));
	srv.pid = -1;
	srv.deaths++;
	close(srv.to_server);
	srv.to_server = -1;
	return false;
}

/* A server for the next case: start it again if it died. */
static bool server_ensure(void)
{
	char why[128];

	if (server_alive(why, sizeof(why)))
		return true;
	if (srv.restarts >= MAX_RESTARTS)
		return false;
	srv.restarts++;
	return server_start() == 0;
}

/* Stop the server; how it ended is a note (a sanitizer's leak report on
 * UCX's own allocations makes its exit status non-zero), not a verdict. */
static void server_finish(void)
{
	double end = now_s() + STOP_WAIT_MS / 1000.0;
	int status;

	if (srv.pid <= 0)
		return;
	close(srv.to_server); /* its cue to stop */
	while (now_s() < end) {
		if (waitpid(srv.pid, &status, WNOHANG) == srv.pid) {
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				printf("note: the server ended with %s %d (see its stderr)\n",
				       WIFEXITED(status) ? "exit status" : "signal",
				       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			return;
		}
		poll(NULL, 0, 10);
	}
	printf("note: the server did not stop within %d ms of its stdin closing: killed\n", STOP_WAIT_MS);
	kill(srv.pid, SIGKILL);
	waitpid(srv.pid, &status, 0);
}

/* ---- raw CM sockets -------------------------------------------------------- */

static int cm_connect(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(srv.port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Write everything the server takes; a server that closed early is an
 * answer too (false: it did not take it all). */
static bool send_all(int fd, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		ssize_t n;

		if (poll(&p, 1, FAST_CLOSE_MS) <= 0)
			return false;
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

struct seen {
	bool answered;      /* the server sent bytes */
	bool closed;        /* end of stream or reset */
	uint8_t first_type; /* of the answer */
};

/* One look at the socket, without waiting. */
static void look(int fd, struct seen *s)
{
	uint8_t buf[4096];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0) {
			if (!s->answered && n >= 5)
				s->first_type = buf[4];
			s->answered = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || errno != EAGAIN)
			s->closed = true;
		return;
	}
}

/* Until the server closes the socket, or (answer_ends) answers, bounded. */
static struct seen wait_close(int fd, int bound_ms, bool answer_ends)
{
	struct seen s = {0};
	double end = now_s() + bound_ms / 1000.0;

	do {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (poll(&p, 1, 10) > 0)
			look(fd, &s);
	} while (!s.closed && !(answer_ends && s.answered) && now_s() < end);
	return s;
}

/* One hostile frame: connect, write it, end our side (or not), and see
 * the server close within the bound: without a word, or (answer_ok, the
 * frame may be a valid request) after a REP. */
static bool one_frame(const char *label, const uint8_t *frame, size_t len, bool fin, int bound_ms, bool answer_ok)
{
	char why[128];
	struct seen s;
	int fd;
	bool ok;

	if (!server_ensure()) {
		verdict(false, "%s: no server to test (it died %d times)", label, srv.deaths);
		return false;
	}
	fd = cm_connect();
	if (fd < 0) {
		verdict(false, "%s: cannot connect to the server's port %u: %s", label, srv.port, strerror(errno));
		return false;
	}
	(void)send_all(fd, frame, len);
	if (fin)
		shutdown(fd, SHUT_WR);
	s = wait_close(fd, bound_ms, false);
	close(fd);
	/* Give a crash the moment it needs to show. */
	poll(NULL, 0, 20);
	if (!server_alive(why, sizeof(why))) {
		verdict(false, "%s (%zu bytes): %s", label, len, why);
		return false;
	}
	ok = s.closed && (!s.answered || (answer_ok && s.first_type == CM_REP));
	if (!s.closed)
		verdict(false, "%s (%zu bytes): socket still open %.1f s after our last byte", label, len,
			bound_ms / 1000.0);
	else if (!ok)
		verdict(false, "%s (%zu bytes): answered with a frame of type %u", label, len, s.first_type);
	return ok;
}

/* ---- the cases ---------------------------------------------------------------- */

static uint8_t *real_desc;
static size_t real_desc_len;

/* A REQ frame around desc (desc_len as given, or the real length). */
static size_t req_frame(uint8_t *out, const uint8_t *desc, size_t len)
{
	cm_header(out, CM_MAGIC, CM_REQ, 0, 0, (uint32_t)len);
	memcpy(out + CM_HDR_LEN, desc, len);
	return CM_HDR_LEN + len;
}

struct frame_case {
	const char *label;
	uint8_t hdr[CM_HDR_LEN];
	bool with_desc; /* the real descriptor follows the header */
	bool fin;
	int bound_ms;
};

static void case_malformed(void)
{
	uint32_t dl = (uint32_t)real_desc_len;
	struct frame_case cases[] = {
		{"bad magic", {0}, true, true, FAST_CLOSE_MS},
		{"bad magic, no FIN", {0}, false, false, FAST_CLOSE_MS},
		{"type 0", {0}, true, true, FAST_CLOSE_MS},
		{"type 4", {0}, true, true, FAST_CLOSE_MS},
		{"type 255", {0}, true, true, FAST_CLOSE_MS},
		{"REP sent to the server", {0}, true, true, FAST_CLOSE_MS},
		{"REJ sent to the server", {0}, false, true, FAST_CLOSE_MS},
		{"REQ with private data", {0}, true, true, FAST_CLOSE_MS},
		{"REQ with reserved bits", {0}, true, true, FAST_CLOSE_MS},
		{"REQ, descriptor length 0", {0}, false, true, FAST_CLOSE_MS},
		{"REQ, descriptor length 63", {0}, true, true, FAST_CLOSE_MS},
		{"REQ, length 8 short of the descriptor's own", {0}, true, true, FAST_CLOSE_MS},
	};
	int n = (int)(sizeof(cases) / sizeof(cases[0])), ok = 0;

	cm_header(cases[0].hdr, 0x4d434454u, CM_REQ, 0, 0, dl);
	cm_header(cases[1].hdr, 0x47455420u, CM_REQ, 0, 0, dl); /* "GET " */
	cm_header(cases[2].hdr, CM_MAGIC, 0, 0, 0, dl);
	cm_header(cases[3].hdr, CM_MAGIC, 4, 0, 0, dl);
	cm_header(cases[4].hdr, CM_MAGIC, 255, 0, 0, dl);
	cm_header(cases[5].hdr, CM_MAGIC, CM_REP, 0, 0, dl);
	cm_header(cases[6].hdr, CM_MAGIC, CM_REJ, 0, 0, 0);
	cm_header(cases[7].hdr, CM_MAGIC, CM_REQ, 16, 0, dl);
	cm_header(cases[8].hdr, CM_MAGIC, CM_REQ, 0, 0x100, dl);
	cm_header(cases[9].hdr, CM_MAGIC, CM_REQ, 0, 0, 0);
	cm_header(cases[10].hdr, CM_MAGIC, CM_REQ, 0, 0, DESC_FIXED_LEN - 1);
	cm_header(cases[11].hdr, CM_MAGIC, CM_REQ, 0, 0, dl - 8);
	for (int i = 0; i < n; i++) {
		uint8_t frame[CM_HDR_LEN + DESC_FIXED_LEN + DESC_MAX_ADDR_LEN];
		size_t len = CM_HDR_LEN;
		char label[96];

		memcpy(frame, cases[i].hdr, CM_HDR_LEN);
		if (cases[i].with_desc) {
			memcpy(frame + CM_HDR_LEN, real_desc, real_desc_len);
			len += real_desc_len;
		}
		snprintf(label, sizeof(label), "malformed: %s", cases[i].label);
		if (one_frame(label, frame, len, cases[i].fin, cases[i].bound_ms, false))
			ok++;
	}
	verdict(ok == n, "malformed: %d of %d frames closed within %.1f s, server alive", ok, n,
		FAST_CLOSE_MS / 1000.0);
}

static void case_truncated(void)
{
	uint8_t frame[CM_HDR_LEN + DESC_FIXED_LEN + DESC_MAX_ADDR_LEN];
	size_t full = req_frame(frame, real_desc, real_desc_len);
	struct {
		const char *label;
		size_t len;
		bool fin;
	} cases[] = {
		{"5 header bytes, FIN", 5, true},
		{"header alone, FIN", CM_HDR_LEN, true},
		{"header and half the descriptor, FIN", CM_HDR_LEN + real_desc_len / 2, true},
		{"all but the last byte, FIN", full - 1, true},
		{"5 header bytes, then silence", 5, false},
		{"header and half the descriptor, then silence", CM_HDR_LEN + real_desc_len / 2, false},
	};
	int n = (int)(sizeof(cases) / sizeof(cases[0])), ok = 0;

	for (int i = 0; i < n; i++) {
		char label[96];

		snprintf(label, sizeof(label), "truncated: %s", cases[i].label);
		if (one_frame(label, frame, cases[i].len, cases[i].fin, cases[i].fin ? FAST_CLOSE_MS : SLOW_CLOSE_MS,
			      false))
			ok++;
	}
	verdict(ok == n, "truncated: %d of %d closed (after FIN within %.1f s, silent ones within %.1f s)", ok, n,
		FAST_CLOSE_MS / 1000.0, SLOW_CLOSE_MS / 1000.0);
}

static void case_oversized(void)
{
	static const uint32_t lens[] = {DESC_FIXED_LEN + DESC_MAX_ADDR_LEN + 1, 1u << 20, 0x7fffffffu, 0xffffffffu};
	size_t big = (size_t)1 << 20;
	uint8_t *frame = malloc(CM_HDR_LEN + big);
	int n = 0, ok = 0;

	if (frame == NULL) {
		verdict(false, "oversized: out of memory");
		return;
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char label[96];

		cm_header(frame, CM_MAGIC, CM_REQ, 0, 0, lens[i]);
		snprintf(label, sizeof(label), "oversized: descriptor length %" PRIu32 " (header alone)", lens[i]);
		n++;
		ok += one_frame(label, frame, CM_HDR_LEN, false, FAST_CLOSE_MS, false);
	}
	/* The largest allowed length, and 1 MiB of bytes after the header:
	 * the server reads its frame's worth, judges it, and closes. */
	for (size_t i = 0; i < big; i++)
		frame[CM_HDR_LEN + i] = (uint8_t)rng();
	cm_header(frame, CM_MAGIC, CM_REQ, 0, 0, DESC_FIXED_LEN + DESC_MAX_ADDR_LEN);
	n++;
	ok += one_frame("oversized: largest length, then 1 MiB of bytes", frame, CM_HDR_LEN + big, true, FAST_CLOSE_MS,
			false);
	/* A real request followed by 1 MiB more: the first frame may be
	 * answered; what follows must end the connection. */
	req_frame(frame, real_desc, real_desc_len);
	n++;
	ok += one_frame("oversized: a real REQ, then 1 MiB of bytes", frame, CM_HDR_LEN + big, true, FAST_CLOSE_MS,
			true);
	free(frame);
	verdict(ok == n, "oversized: %d of %d closed within %.1f s, server alive", ok, n, FAST_CLOSE_MS / 1000.0);
}

/* This host as a descriptor names it: the kernel's boot id (16 bytes
 * from its hex digits) and our pid namespace's inode. */
static void host_identity(uint8_t id[16], uint64_t *pid_ns)
{
	char text[64] = {0};
	struct stat st;
	size_t n = 0;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY);

	memset(id, 0, 16);
	*pid_ns = 0;
	if (fd >= 0) {
		ssize_t got = read(fd, text, sizeof(text) - 1);

		close(fd);
		for (ssize_t i = 0; i + 1 < got && n < 16; i++) {
			unsigned int byte;

			if (text[i] == '-')
				continue;
			if (sscanf(text + i, "%2x", &byte) != 1)
				break;
			id[n++] = (uint8_t)byte;
			i++;
		}
	}
	if (stat("/proc/self/ns/pid", &st) == 0)
		*pid_ns = (uint64_t)st.st_ino;
}

/* A descriptor header (wire.c's layout) for a UCX worker address of
 * addr_len bytes, of a process on this host that offers shared memory
 * with softdoca's UCX settings: the server then takes the UCX link, and
 * the address reaches its check. */
static void desc_header(uint8_t *d, uint32_t addr_len)
{
	uint64_t pid_ns;

	memcpy(d, "SDRC", 4);
	put_u16(d + 4, DESC_VERSION);
	put_u16(d + 6, DESC_FLAG_SHM);
	put_u32(d + 8, DESC_FIXED_LEN + addr_len);
	put_u32(d + 12, 1);
	for (int i = 16; i < 32; i++)
		d[i] = (uint8_t)rng();
	put_u32(d + 32, (uint32_t)getpid());
	put_u32(d + 36, addr_len);
	host_identity(d + 40, &pid_ns);
	memcpy(d + 56, &pid_ns, sizeof(pid_ns));
	memset(d + 64, 0, 16); /* process start, run, GID index and type: not said */
	memset(d + 80, 0, 20); /* no TCP link */
	put_u32(d + 100, DESC_UCX_DEFAULTS);
	memset(d + 104, 0, 8);
}

/* Valid CM and descriptor headers around GARBAGE_ADDR_LEN random bytes
 * as the UCX worker address: the 221-byte frame. Several of them (fixed
 * seed), since what UCX does with garbage depends on its first bytes. */
static void case_garbage(void)
{
	uint8_t frame[CM_HDR_LEN + DESC_FIXED_LEN + GARBAGE_ADDR_LEN];
	uint8_t *d = frame + CM_HDR_LEN;
	int ok = 0;

	for (int k = 0; k < GARBAGE_FRAMES; k++) {
		char label[96];

		cm_header(frame, CM_MAGIC, CM_REQ, 0, 0, DESC_FIXED_LEN + GARBAGE_ADDR_LEN);
		desc_header(d, GARBAGE_ADDR_LEN);
		for (size_t i = 0; i < GARBAGE_ADDR_LEN; i++)
			d[DESC_FIXED_LEN + i] = (uint8_t)rng();
		snprintf(label, sizeof(label), "garbage: frame %d, UCX address starting %02x %02x %02x %02x", k,
			 d[DESC_FIXED_LEN], d[DESC_FIXED_LEN + 1], d[DESC_FIXED_LEN + 2], d[DESC_FIXED_LEN + 3]);
		if (!one_frame(label, frame, sizeof(frame), true, FAST_CLOSE_MS, false))
			break; /* one crash tells it */
		ok++;
	}
	verdict(ok == GARBAGE_FRAMES, "garbage: %d of %d %zu-byte frames (valid headers, garbage UCX address) refused",
		ok, GARBAGE_FRAMES, sizeof(frame));
}

static void case_bitflip(void)
{
	uint8_t frame[CM_HDR_LEN + DESC_FIXED_LEN + DESC_MAX_ADDR_LEN];
	int ok = 0;

	for (int k = 0; k < BITFLIP_FRAMES; k++) {
		size_t len = req_frame(frame, real_desc, real_desc_len);
		int flips = 1 + (int)(rng() % 3);
		char label[96];

		/* Mostly in the worker address, sometimes in the header. */
		for (int f = 0; f < flips; f++) {
			size_t at = k % 4 == 0 ? CM_HDR_LEN + rng() % real_desc_len
					       : CM_HDR_LEN + DESC_FIXED_LEN + rng() % (real_desc_len - DESC_FIXED_LEN);

			frame[at] ^= (uint8_t)(1u << (rng() % 8));
		}
		snprintf(label, sizeof(label), "bitflip: frame %d (%d bits)", k, flips);
		if (!one_frame(label, frame, len, true, FAST_CLOSE_MS, true))
			break; /* one crash tells it; the server is started again for the rest */
		ok++;
	}
	verdict(ok == BITFLIP_FRAMES, "bitflip: %d of %d frames with flipped bits of a real descriptor refused or "
				      "answered, then closed after our FIN",
		ok, BITFLIP_FRAMES);
}

/* A whole REQ at 32 bytes per 100 ms (done well within the request
 * timeout) must still be read and answered; 2 bytes per 100 ms, never
 * finishing, must be cut off by the request timeout. */
static void case_slow(void)
{
	uint8_t frame[CM_HDR_LEN + DESC_FIXED_LEN + DESC_MAX_ADDR_LEN];
	size_t len = req_frame(frame, real_desc, real_desc_len);
	struct {
		const char *label;
		size_t chunk;
	} cases[] = {{"a whole REQ, 32 bytes per 100 ms", 32}, {"2 bytes per 100 ms, never done", 2}};
	char why[128];

	for (int i = 0; i < 2; i++) {
		double t0 = now_s(), end = t0 + SLOW_CLOSE_MS / 1000.0;
		size_t off = 0;
		struct seen s = {0};
		int fd;

		if (!server_ensure()) {
			verdict(false, "slow: no server");
			return;
		}
		fd = cm_connect();
		if (fd < 0) {
			verdict(false, "slow: cannot connect: %s", strerror(errno));
			continue;
		}
		/* The trickle never finishes in the second case: it sends
		 * the frame's bytes but stops short of the last. */
		while (now_s() < end && !s.closed && !s.answered) {
			size_t n = cases[i].chunk, stop = len - (i == 1 ? 1 : 0);

			if (off + n > stop)
				n = stop - off;
			if (n > 0 && !send_all(fd, frame + off, n)) {
				s.closed = true;
				break;
			}
			off += n;
			s = wait_close(fd, 100, true);
		}
		close(fd);
		poll(NULL, 0, 20);
		if (!server_alive(why, sizeof(why)))
			verdict(false, "slow: %s: %s", cases[i].label, why);
		else if (i == 0)
			verdict(s.answered && s.first_type == CM_REP, "slow: %s: %s after %.1f s", cases[i].label,
				s.answered ? (s.first_type == CM_REP ? "answered (REP)" : "answered, not with REP")
					   : s.closed ? "closed without an answer" : "no answer",
				now_s() - t0);
		else
			verdict(s.closed && !s.answered, "slow: %s: %s after %.1f s (%zu bytes sent; bound %.1f s)",
				cases[i].label, s.closed ? "cut off" : "still open", now_s() - t0, off,
				SLOW_CLOSE_MS / 1000.0);
	}
}

/* ---- an honest client --------------------------------------------------------- */

static bool honest_client(const char *label)
{
	struct node c = {0};
	struct doca_rdma_addr *addr = NULL;
	union doca_data cud = {.u64 = 0};
	char why[160] = "";
	double end;
	bool ok = false;

	if (node_start(&c, false) != 0) {
		snprintf(why, sizeof(why), "the client context could not start");
		goto out;
	}
	if (doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", srv.port, &addr) != DOCA_SUCCESS ||
	    doca_rdma_connect_to_addr(c.rdma, addr, cud) != DOCA_SUCCESS) {
		snprintf(why, sizeof(why), "doca_rdma_connect_to_addr failed");
		goto out;
	}
	for (end = now_s() + CONNECT_WAIT_MS / 1000.0; c.established == 0 && c.failed == 0 && now_s() < end;)
		progress_wait(&c, 10);
	if (c.established == 0) {
		snprintf(why, sizeof(why), "%s", c.failed ? "the connection failed (failure callback)"
							   : "not established in time");
		goto out;
	}
	for (uint32_t i = 0; i < MSG_LEN; i++)
		send_slot(&c, 0)[i] = (uint8_t)(i * 7 + 3);
	if (post_receive(&c, 0) != DOCA_SUCCESS || post_send(&c, c.conn, 0, MSG_LEN) != DOCA_SUCCESS) {
		snprintf(why, sizeof(why), "cannot post the round trip");
		goto out;
	}
	for (end = now_s() + ECHO_WAIT_MS / 1000.0;
	     (c.sends_ok + c.sends_err == 0 || c.recvs_ok + c.recvs_err == 0) && now_s() < end;)
		progress_wait(&c, 10);
	if (c.sends_ok != 1 || c.recvs_ok != 1) {
		snprintf(why, sizeof(why), "round trip: %d sends ok, %d failed; %d receives ok, %d failed", c.sends_ok,
			 c.sends_err, c.recvs_ok, c.recvs_err);
		goto out;
	}
	if (c.recv_len != MSG_LEN || memcmp(recv_slot(&c, 0), send_slot(&c, 0), MSG_LEN) != 0) {
		snprintf(why, sizeof(why), "the echo differs (%u bytes back)", c.recv_len);
		goto out;
	}
	ok = true;
	(void)doca_rdma_connection_disconnect(c.conn);
out:
	if (addr != NULL)
		(void)doca_rdma_addr_destroy(addr);
	node_stop(&c);
	verdict(ok, "%s: an honest client %s%s%s", label, ok ? "connected and completed a 256-byte echo" : "failed",
		ok ? "" : ": ", why);
	return ok;
}

static void case_idle(void)
{
	int fds[IDLE_CONNS];
	bool closed[IDLE_CONNS] = {false};
	double t0, due;
	int n = 0, nclosed = 0;
	char why[128];

	if (!server_ensure()) {
		verdict(false, "idle: no server");
		return;
	}
	t0 = now_s();
	for (int i = 0; i < IDLE_CONNS; i++) {
		fds[i] = cm_connect();
		if (fds[i] >= 0)
			n++;
	}
	/* While they are held open, an honest client must still get in. */
	honest_client("idle: with more silent connections held open than the server has slots");
	/* Each must be closed by SLOW_CLOSE_MS after its connect (or by now,
	 * if the client took longer). */
	due = t0 + SLOW_CLOSE_MS / 1000.0;
	if (due < now_s())
		due = now_s();
	while (nclosed < n && now_s() < due) {
		for (int i = 0; i < IDLE_CONNS; i++) {
			struct seen s = {0};

			if (fds[i] < 0 || closed[i])
				continue;
			look(fds[i], &s);
			if (s.closed) {
				closed[i] = true;
				nclosed++;
			}
		}
		poll(NULL, 0, 20);
	}
	for (int i = 0; i < IDLE_CONNS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (!server_alive(why, sizeof(why))) {
		verdict(false, "idle: %s", why);
		return;
	}
	verdict(nclosed == n && n == IDLE_CONNS,
		"idle: %d of %d silent connections (server slots: %d) closed by the server within %.1f s of their "
		"connect",
		nclosed, IDLE_CONNS, MAX_CONNS, due - t0);
}

/* ---- where nothing can leave the host ----------------------------------------- */

static bool private_network(void)
{
	struct ifreq ifr;
	int fd;

	if (unshare(CLONE_NEWNET) != 0)
		return false;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) == 0) {
			close(fd);
			return true;
		}
	}
	close(fd);
	fprintf(stderr, "cm_netfuzz: cannot bring lo up in the new network namespace: %s\n", strerror(errno));
	exit(1);
}

/* A real descriptor: exported by a context of this process, so that bit
 * flips start from what a client really sends. */
static int real_descriptor(struct node *src)
{
	struct doca_rdma_connection *conn;
	const void *desc;
	int rc = node_start(src, false);

	if (rc != 0)
		return rc;
	TRY(doca_rdma_export(src->rdma, &desc, &real_desc_len, &conn));
	real_desc = malloc(real_desc_len);
	if (real_desc == NULL)
		return -1;
	memcpy(real_desc, desc, real_desc_len);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = 0x5dc0de5eedull;
	struct node src = {0};
	int rc;

	signal(SIGPIPE, SIG_IGN);
	if (argc == 2 && strcmp(argv[1], "--serve") == 0)
		return serve();
	if (argc == 3 && strcmp(argv[1], "--seed") == 0)
		seed = strtoull(argv[2], NULL, 0);
	else if (argc != 1) {
		fprintf(stderr, "usage: cm_netfuzz [--seed N]\n");
		return 2;
	}
	rng_state = seed != 0 ? seed : 1;
	t_start = now_s();
	srv.self = "/proc/self/exe";
	if (private_network()) {
		printf("note: private network namespace (only lo)\n");
	} else {
		/* No network transport for UCX: mutated addresses reach nothing. */
		setenv("UCX_TLS", "self,sm", 1);
		printf("note: no private network namespace (not root?): UCX limited to shared memory (UCX_TLS=self,sm)\n");
	}
	printf("note: seed 0x%" PRIx64 ", server slots %d, request timeout %d ms\n", seed, MAX_CONNS, REQ_TIMEOUT_MS);
	fflush(stdout);
	rc = real_descriptor(&src);
	if (rc == 1) {
		printf("SKIP: no soft_lo device\n");
		return 77;
	}
	if (rc != 0)
		return 1;
	rc = server_start();
	if (rc == 77) {
		printf("SKIP: the server found no soft_lo device\n");
		return 77;
	}
	if (rc != 0)
		return 1;
	printf("note: server pid %d on port %u; %zu-byte real descriptor\n", (int)srv.pid, srv.port, real_desc_len);
	fflush(stdout);

	case_malformed();
	case_truncated();
	case_oversized();
	case_garbage();
	case_bitflip();
	case_slow();
	case_idle();
	if (server_ensure()) {
		char why[128];

		honest_client("honest, at the end");
		verdict(server_alive(why, sizeof(why)) && srv.deaths == 0,
			"server: %s, %d deaths and restarts during the run", srv.deaths == 0 ? "never died" : "died",
			srv.deaths);
	} else {
		verdict(false, "honest, at the end: no server (it died %d times)", srv.deaths);
	}
	server_finish();
	node_stop(&src);
	free(real_desc);
	verdict(now_s() - t_start < BUDGET_S, "time: the run took %.1f s (budget %.0f s)", now_s() - t_start, BUDGET_S);
	printf("cm_netfuzz: %d failed\n", failures);
	return failures == 0 ? 0 : 1;
}
