/*
 * libFuzzer target for what a peer writes to a LIVE doca_rdma context's
 * TCP link port (link_tcp.c), in process: coverage-guided, under ASan and
 * UBSan (run_fuzz.sh). link_netfuzz (tests/rdma) does the same from
 * another process, deterministically, as a meson test; both read the
 * corpus of tests/fuzz/corpus/link (format: link_seed.h).
 *
 * At startup (UCX_TLS=tcp: the TCP link is the only transport): the soft
 * loopback device, one PE, a server context with a REGION_LEN region
 * between two canaries, exported with RDMA read, write and atomic, and
 * receives posted; a client context on the same PE for the honest checks.
 * Per input (its first byte the way, mod 3; then the stream, whose
 * placeholders are filled with this input's values):
 *   raw   a fresh connection to the server's link port gets the stream
 *   auth  ... after our valid AUTH for a connection the server exported
 *   live  ... after our AUTH and HELLO, the server's connection having
 *         been connected to a peer of ours (a listener here, whose
 *         socket we read and drop)
 * then our end (shutdown), and the server must close the socket within
 * CLOSE_WAIT_MS (an unauthenticated one, or one whose connection failed
 * or that we left); the connection is disconnected. After every input
 * the canaries are unchanged and the open fds come back to where they
 * were (bounded wait); after every HONEST_EVERY inputs (and the first)
 * the client connects to a fresh server connection, writes 4 KiB and
 * 48 KiB into the region, reads them back and compares. Every connection
 * here is export/connect, for which DOCA calls no established callback
 * (RDMA CM only; on hardware doca_rdma_connect moves the QP to RTS with
 * no event): the client submits right after connecting, the first write
 * completing shows the connection is up, and the callback must never
 * run, on either side. Any failure aborts, which libFuzzer reports as a
 * crash with the input.
 *
 * The seeds are in the tree (tests/fuzz/corpus/link, written by
 * link_netfuzz --write-seeds); run_fuzz.sh copies them. UCX is not used
 * (UCX_TLS=tcp), and every address connected to is the server's own or
 * our peer's: no private namespace is needed.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
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

#include "link_seed.h"
#include "link_tcp_wire.h"
#include "mmap.h"
#include "wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CONNS 8
#define REGION_LEN (64u * 1024u)
#define CANARY_LEN 4096u
#define CANARY_BYTE 0xCA
#define NRECV 8
#define RECV_LEN 4096u
#define HONEST_SMALL 4096u
#define HONEST_LARGE (48u * 1024u)
#define HONEST_EVERY 16
#define WAIT_MS 2000       /* connects, the server's AUTH and HELLO, tasks */
#define CLOSE_WAIT_MS 2000 /* the server closes our socket after our end */
#define FD_WAIT_MS 2000
#define FD_SLACK 4
#define OUR_ID 0x4c46u

struct side {
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_mmap *mmap;
	enum doca_ctx_states state;
	int established, ended, tasks_ok, tasks_err;
};

static struct {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_buf_inventory *inv;
	uint8_t *mem;             /* canary, region, canary, receive buffers */
	uint8_t *cmem;            /* the client's: source, then destination */
	struct doca_mmap *rxmmap; /* the server's receive buffers */
	struct doca_mmap *rmmap;  /* the client's view of the region */
	struct side srv, cl;
	struct lt_addr link;      /* the server's link port */
	int peer_listen;
	struct lt_addr peer;      /* our peer's address (live) */
	struct link_seed_values v;
	int base_fds;
	unsigned long inputs;
} g = {.peer_listen = -1};

static void die(const char *fmt, const char *what)
{
	fprintf(stderr, "fuzz_link: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n");
	abort();
}

static void check(doca_error_t err, const char *what)
{
	if (err != DOCA_SUCCESS)
		die("setup: %s failed", what);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		die("cannot open %s", "/proc/self/fd");
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

static void progress(void)
{
	while (doca_pe_progress(g.pe) != 0)
		;
}

/* ---- callbacks ---------------------------------------------------------- */

static struct side *side_of(union doca_data cud)
{
	return cud.ptr;
}

static void post_receive(uint32_t i);

static void receive_cb(struct doca_rdma_task_receive *t, union doca_data tud, union doca_data cud)
{
	(void)doca_buf_dec_refcount(doca_rdma_task_receive_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_receive_as_task(t));
	if (side_of(cud)->state == DOCA_CTX_STATE_RUNNING)
		post_receive((uint32_t)tud.u64);
}

static void write_done(struct doca_rdma_task_write *t, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_write_get_src_buf(t), NULL);
	(void)doca_buf_dec_refcount(doca_rdma_task_write_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_write_as_task(t));
	side_of(cud)->tasks_ok++;
}

static void write_err(struct doca_rdma_task_write *t, union doca_data tud, union doca_data cud)
{
	write_done(t, tud, cud);
	side_of(cud)->tasks_ok--;
	side_of(cud)->tasks_err++;
}

static void read_done(struct doca_rdma_task_read *t, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_read_get_src_buf(t), NULL);
	(void)doca_buf_dec_refcount(doca_rdma_task_read_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_read_as_task(t));
	side_of(cud)->tasks_ok++;
}

static void read_err(struct doca_rdma_task_read *t, union doca_data tud, union doca_data cud)
{
	read_done(t, tud, cud);
	side_of(cud)->tasks_ok--;
	side_of(cud)->tasks_err++;
}

static void on_established(struct doca_rdma_connection *conn, union doca_data uud, union doca_data cud)
{
	(void)conn;
	(void)uud;
	side_of(cud)->established++;
}

static void on_end(struct doca_rdma_connection *conn, union doca_data uud, union doca_data cud)
{
	(void)conn;
	(void)uud;
	side_of(cud)->ended++;
}

static void on_state(const union doca_data cud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	(void)ctx;
	(void)prev;
	side_of(cud)->state = next;
}

/* ---- setup ------------------------------------------------------------------ */

static void post_receive(uint32_t i)
{
	struct doca_rdma_task_receive *t;
	struct doca_buf *buf;
	union doca_data ud = {.u64 = i};

	if (doca_buf_inventory_buf_get_by_addr(g.inv, g.rxmmap, g.mem + 2 * CANARY_LEN + REGION_LEN + i * RECV_LEN,
					       RECV_LEN, &buf) != DOCA_SUCCESS)
		return;
	if (doca_rdma_task_receive_allocate_init(g.srv.rdma, buf, ud, &t) != DOCA_SUCCESS) {
		(void)doca_buf_dec_refcount(buf, NULL);
		return;
	}
	if (doca_task_submit(doca_rdma_task_receive_as_task(t)) != DOCA_SUCCESS) {
		doca_task_free(doca_rdma_task_receive_as_task(t));
		(void)doca_buf_dec_refcount(buf, NULL);
	}
}

static struct doca_mmap *new_mmap(void *addr, size_t len, uint32_t perms)
{
	struct doca_mmap *m;

	check(doca_mmap_create(&m), "doca_mmap_create");
	check(doca_mmap_set_memrange(m, addr, len), "doca_mmap_set_memrange");
	check(doca_mmap_set_permissions(m, perms), "doca_mmap_set_permissions");
	check(doca_mmap_add_dev(m, g.dev), "doca_mmap_add_dev");
	check(doca_mmap_start(m), "doca_mmap_start");
	return m;
}

static void side_start(struct side *s, uint32_t perms, bool server)
{
	union doca_data cud = {.ptr = s};

	check(doca_rdma_create(g.dev, &s->rdma), "doca_rdma_create");
	s->ctx = doca_rdma_as_ctx(s->rdma);
	check(doca_rdma_set_permissions(s->rdma, perms), "doca_rdma_set_permissions");
	check(doca_rdma_set_max_num_connections(s->rdma, MAX_CONNS), "doca_rdma_set_max_num_connections");
	if (server)
		check(doca_rdma_task_receive_set_conf(s->rdma, receive_cb, receive_cb, NRECV), "receive conf");
	check(doca_rdma_task_write_set_conf(s->rdma, write_done, write_err, 8), "write conf");
	check(doca_rdma_task_read_set_conf(s->rdma, read_done, read_err, 8), "read conf");
	check(doca_rdma_set_connection_state_callbacks(s->rdma, NULL, on_established, on_end, on_end),
	      "doca_rdma_set_connection_state_callbacks");
	check(doca_ctx_set_user_data(s->ctx, cud), "doca_ctx_set_user_data");
	check(doca_ctx_set_state_changed_cb(s->ctx, on_state), "doca_ctx_set_state_changed_cb");
	check(doca_pe_connect_ctx(g.pe, s->ctx), "doca_pe_connect_ctx");
	check(doca_ctx_start(s->ctx), "doca_ctx_start");
	for (uint64_t end = now_ms() + WAIT_MS; s->state != DOCA_CTX_STATE_RUNNING && now_ms() < end;)
		progress();
	if (s->state != DOCA_CTX_STATE_RUNNING)
		die("%s", "a context did not reach RUNNING");
}

static void open_soft_lo(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;

	check(doca_devinfo_create_list(&list, &n), "doca_devinfo_create_list");
	for (uint32_t i = 0; i < n && g.dev == NULL; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "soft_lo") == 0)
			check(doca_dev_open(list[i], &g.dev), "doca_dev_open(soft_lo)");
	}
	doca_devinfo_destroy_list(list);
	if (g.dev == NULL)
		die("no device named %s", "soft_lo");
}

/* ---- sockets ------------------------------------------------------------------ */

static void sockaddr_of(const struct lt_addr *a, struct sockaddr_storage *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	if (a->family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		memcpy(&in->sin_addr, a->addr, 4);
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a->port);
		memcpy(&in6->sin6_addr, a->addr, 16);
		*len = sizeof(*in6);
	}
}

/* A socket connected to the server's link port, non-blocking. The PE is
 * progressed while waiting (the server's accept may need it). */
static int dial(void)
{
	struct sockaddr_storage sa;
	socklen_t len, el = sizeof(int);
	int fd, one = 1, err = 0;

	sockaddr_of(&g.link, &sa, &len);
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, len) != 0 && errno != EINPROGRESS && errno != EINTR)
		die("connect to the link port: %s", strerror(errno));
	for (uint64_t end = now_ms() + WAIT_MS; now_ms() < end;) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};

		progress();
		if (poll(&p, 1, 1) <= 0)
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0)
			die("connect to the link port: %s", strerror(err != 0 ? err : errno));
		return fd;
	}
	die("%s", "connect to the link port: not established in time");
	return -1;
}

/* Read and drop what fd has; false once it ended. */
static bool drain(int fd)
{
	uint8_t junk[16384];
	ssize_t n;

	while ((n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
		;
	return !(n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR));
}

/* All of b, unless the server hung up; the PE is progressed while the
 * socket is full (the service thread may be parked). */
static void send_all(int fd, int peer_fd, const uint8_t *b, size_t len)
{
	size_t done = 0;
	uint64_t end = now_ms() + WAIT_MS;

	while (done < len && now_ms() < end) {
		ssize_t n = send(fd, b + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return; /* closed on us */
		progress();
		if (peer_fd >= 0)
			(void)drain(peer_fd);
	}
}

/* Until the server closed fd (its end, or a reset); false if not in time. */
static bool wait_closed(int fd, int peer_fd)
{
	for (uint64_t end = now_ms() + CLOSE_WAIT_MS; now_ms() < end;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		progress();
		if (peer_fd >= 0)
			(void)drain(peer_fd);
		if (poll(&p, 1, 1) > 0 && !drain(fd))
			return true;
	}
	return false;
}

/* ---- the frames of our openings ------------------------------------------------ */

static size_t auth_frame(uint8_t *b)
{
	struct lt_frame f = {.type = LT_AUTH, .hdr_len = LT_AUTH_LEN};
	struct lt_auth a = {.conn_id = g.v.srv_id};

	memcpy(a.secret, g.v.srv_secret, ENGINE_SECRET_LEN);
	lt_frame_build(b, &f);
	lt_auth_build(b + LT_FRAME_HDR, &a);
	return LT_FRAME_HDR + LT_AUTH_LEN;
}

static size_t hello_frame(uint8_t *b)
{
	struct wire_hello h = {.version = WIRE_VERSION, .dst_conn_id = g.v.srv_id, .src_conn_id = g.v.our_id};
	struct lt_frame f = {.type = LT_MSG, .am_id = WIRE_AM_HELLO, .hdr_len = sizeof(h)};

	memcpy(h.dst_secret, g.v.srv_secret, ENGINE_SECRET_LEN);
	memcpy(h.src_secret, g.v.our_secret, ENGINE_SECRET_LEN);
	lt_frame_build(b, &f);
	memcpy(b + LT_FRAME_HDR, &h, sizeof(h));
	return LT_FRAME_HDR + sizeof(h);
}

/* ---- per input ----------------------------------------------------------------- */

/* A server connection for the input (its values into g.v), and a copy
 * of its descriptor if desc is not NULL (freed by the caller). */
static struct doca_rdma_connection *server_export(uint8_t **desc_out, size_t *len_out)
{
	struct doca_rdma_connection *conn = NULL;
	struct wire_desc d;
	const void *desc;
	size_t len;
	doca_error_t err;

	err = doca_rdma_export(g.srv.rdma, &desc, &len, &conn);
	if (err != DOCA_SUCCESS)
		die("doca_rdma_export failed (%s): a connection slot was not given back", doca_error_get_name(err));
	if (wire_desc_parse(desc, len, &d) != DOCA_SUCCESS || !d.has_tcp ||
	    lt_addr_parse(d.tcp_addr, sizeof(d.tcp_addr), &g.link) != DOCA_SUCCESS)
		die("%s", "the server's own descriptor names no tcp link");
	g.v.srv_id = d.conn_id;
	memcpy(g.v.srv_secret, d.secret, ENGINE_SECRET_LEN);
	if (desc_out != NULL) {
		*desc_out = malloc(len);
		if (*desc_out == NULL)
			die("%s", "out of memory");
		memcpy(*desc_out, desc, len);
		*len_out = len;
	}
	return conn;
}

/* Live: the server connects to our peer (its descriptor names our port). */
static void connect_server_to_peer(struct doca_rdma_connection *conn)
{
	struct wire_desc d = {.conn_id = g.v.our_id, .pid = (uint32_t)getpid(), .has_tcp = true};
	uint8_t *desc;
	size_t len;

	memcpy(d.secret, g.v.our_secret, ENGINE_SECRET_LEN);
	lt_addr_build(d.tcp_addr, &g.peer);
	if (wire_desc_build(&d, &desc, &len) != DOCA_SUCCESS)
		die("%s", "wire_desc_build");
	if (doca_rdma_connect(g.srv.rdma, desc, len, conn) != DOCA_SUCCESS)
		die("%s", "the server's doca_rdma_connect to our peer failed");
	free(desc);
}

/* The server writes to our peer on the one connection of the two sides:
 * one it opens to our peer's port (returned), or ours (fd: -1 is
 * returned, and fd is what to drain). Its first bytes tell. */
static int server_writes_on(int fd)
{
	for (uint64_t end = now_ms() + WAIT_MS; now_ms() < end;) {
		struct pollfd p[2] = {{.fd = g.peer_listen, .events = POLLIN}, {.fd = fd, .events = POLLIN}};

		progress();
		if (poll(p, 2, 1) <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			int peer_fd = accept4(g.peer_listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (peer_fd >= 0)
				return peer_fd;
		} else if (p[1].revents) {
			return -1;
		}
	}
	die("%s", "the server wrote to our peer on no connection");
	return -1;
}

static void fuzz_input(uint8_t way, const uint8_t *data, size_t size)
{
	static uint8_t stream[1 << 17];
	uint8_t pre[LT_FRAME_HDR * 2 + LT_AUTH_LEN + sizeof(struct wire_hello)];
	struct doca_rdma_connection *conn = server_export(NULL, NULL);
	int fd, peer_fd = -1;
	size_t n = 0;

	if (size > sizeof(stream))
		size = sizeof(stream);
	if (getrandom(g.v.our_secret, sizeof(g.v.our_secret), 0) != sizeof(g.v.our_secret))
		die("%s", "getrandom");
	memcpy(stream, data, size);
	link_seed_fill(stream, size, &g.v);
	if (way == LINK_WAY_LIVE)
		connect_server_to_peer(conn);
	fd = dial();
	if (way != LINK_WAY_RAW)
		n = auth_frame(pre);
	if (way == LINK_WAY_LIVE)
		n += hello_frame(pre + n);
	send_all(fd, -1, pre, n);
	if (way == LINK_WAY_LIVE)
		peer_fd = server_writes_on(fd);
	send_all(fd, peer_fd, stream, size);
	(void)shutdown(fd, SHUT_WR);
	if (!wait_closed(fd, peer_fd))
		die("%s", "the server did not close our socket after our end");
	close(fd);
	if (peer_fd >= 0)
		close(peer_fd);
	(void)doca_rdma_connection_disconnect(conn);
	progress();
}

static bool canaries_ok(void)
{
	const uint8_t *hi = g.mem + CANARY_LEN + REGION_LEN;

	for (size_t i = 0; i < CANARY_LEN; i++)
		if (g.mem[i] != CANARY_BYTE || hi[i] != CANARY_BYTE)
			return false;
	return true;
}

/* One task of the honest client; aborts unless it succeeds in time. */
static void honest_task(struct doca_rdma_connection *conn, bool write, size_t off, size_t len)
{
	struct doca_buf *local, *remote;
	union doca_data ud = {.u64 = 0};
	uint8_t *raddr = (uint8_t *)(uintptr_t)g.v.region_addr + off;
	struct doca_task *task;
	int done = g.cl.tasks_ok + g.cl.tasks_err;

	if (write) {
		struct doca_rdma_task_write *t;

		check(doca_buf_inventory_buf_get_by_data(g.inv, g.cl.mmap, g.cmem + off, len, &local), "local buf");
		check(doca_buf_inventory_buf_get_by_addr(g.inv, g.rmmap, raddr, len, &remote), "remote buf");
		check(doca_rdma_task_write_allocate_init(g.cl.rdma, conn, local, remote, ud, &t), "write task");
		task = doca_rdma_task_write_as_task(t);
	} else {
		struct doca_rdma_task_read *t;

		check(doca_buf_inventory_buf_get_by_data(g.inv, g.rmmap, raddr, len, &remote), "remote buf");
		check(doca_buf_inventory_buf_get_by_addr(g.inv, g.cl.mmap, g.cmem + REGION_LEN + off, len, &local),
		      "local buf");
		check(doca_rdma_task_read_allocate_init(g.cl.rdma, conn, remote, local, ud, &t), "read task");
		task = doca_rdma_task_read_as_task(t);
	}
	check(doca_task_submit(task), "doca_task_submit");
	for (uint64_t end = now_ms() + WAIT_MS; g.cl.tasks_ok + g.cl.tasks_err == done && now_ms() < end;)
		progress();
	if (g.cl.tasks_err > 0 || g.cl.tasks_ok == done)
		die("honest client: a %s failed or did not complete in time", write ? "write" : "read");
}

/* A fresh server connection, the client connected to it: 4 KiB and
 * 48 KiB written, read back, compared. */
static void honest_check(void)
{
	struct doca_rdma_connection *sconn, *cconn = NULL;
	size_t slen, clen, total = HONEST_SMALL + HONEST_LARGE;
	const void *cdesc;
	uint8_t *sdesc;

	sconn = server_export(&sdesc, &slen);
	check(doca_rdma_export(g.cl.rdma, &cdesc, &clen, &cconn), "the client's doca_rdma_export");
	check(doca_rdma_connect(g.srv.rdma, cdesc, clen, sconn), "the server's doca_rdma_connect to the client");
	check(doca_rdma_connect(g.cl.rdma, sdesc, slen, cconn), "the client's doca_rdma_connect to the server");
	free(sdesc);
	/* No waiting for the connection: the first write waits for it. */
	for (size_t i = 0; i < total; i++)
		g.cmem[i] = (uint8_t)(g.inputs * 131u + i * 7u + (i >> 9));
	memset(g.cmem + REGION_LEN, 0, total);
	honest_task(cconn, true, 0, HONEST_SMALL);
	honest_task(cconn, true, HONEST_SMALL, HONEST_LARGE);
	honest_task(cconn, false, 0, total);
	if (memcmp(g.cmem, g.cmem + REGION_LEN, total) != 0)
		die("%s", "honest client: the bytes read back are not the bytes written");
	if (g.cl.established != 0 || g.srv.established != 0)
		die("%s", "the established callback ran for an export/connect connection (DOCA calls it for RDMA CM "
			  "connections only)");
	(void)doca_rdma_connection_disconnect(cconn);
	(void)doca_rdma_connection_disconnect(sconn);
	progress();
}

/* Fds back to where they were, in a bounded wait. */
static void check_fds(void)
{
	for (uint64_t end = now_ms() + FD_WAIT_MS; count_fds() > g.base_fds + FD_SLACK;) {
		if (now_ms() > end) {
			char what[64];

			snprintf(what, sizeof(what), "%d open fds, %d at start", count_fds(), g.base_fds);
			die("fds grow with the inputs: %s", what);
		}
		progress();
		poll(NULL, 0, 1);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint32_t rdma_perms = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
			      DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC;
	struct softdoca_mmap_desc md;
	struct sockaddr_storage sa;
	socklen_t sa_len;
	const void *desc;
	size_t len;

	(void)argc;
	(void)argv;
	/* The TCP link only; refusals are the expected outcome: quiet. */
	setenv("UCX_TLS", "tcp", 1);
	setenv("UCX_NET_DEVICES", "lo", 1);
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	open_soft_lo();
	check(doca_pe_create(&g.pe), "doca_pe_create");
	check(doca_buf_inventory_create(64, &g.inv), "doca_buf_inventory_create");
	check(doca_buf_inventory_start(g.inv), "doca_buf_inventory_start");
	g.mem = aligned_alloc(4096, 2 * CANARY_LEN + REGION_LEN + NRECV * RECV_LEN);
	g.cmem = aligned_alloc(4096, 2 * REGION_LEN);
	if (g.mem == NULL || g.cmem == NULL)
		die("%s", "out of memory");
	memset(g.mem, CANARY_BYTE, 2 * CANARY_LEN + REGION_LEN);
	memset(g.mem + CANARY_LEN, 0, REGION_LEN);
	g.srv.mmap = new_mmap(g.mem + CANARY_LEN, REGION_LEN, rdma_perms);
	g.rxmmap = new_mmap(g.mem + 2 * CANARY_LEN + REGION_LEN, NRECV * RECV_LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	g.cl.mmap = new_mmap(g.cmem, 2 * REGION_LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	side_start(&g.srv, rdma_perms, true);
	side_start(&g.cl, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, false);
	for (uint32_t i = 0; i < NRECV; i++)
		post_receive(i);
	/* The region as a peer sees it. */
	check(doca_mmap_export_rdma(g.srv.mmap, g.dev, &desc, &len), "doca_mmap_export_rdma");
	check(softdoca_mmap_desc_parse(desc, len, &md), "softdoca_mmap_desc_parse");
	check(doca_mmap_create_from_export(NULL, desc, len, g.dev, &g.rmmap), "doca_mmap_create_from_export");
	g.v.region_id = md.region_id;
	memcpy(g.v.region_secret, md.secret, ENGINE_SECRET_LEN);
	g.v.region_addr = md.addr;
	g.v.our_id = OUR_ID;
	/* The link's address, and our peer's listener on it. */
	(void)doca_rdma_connection_disconnect(server_export(NULL, NULL));
	g.peer = g.link;
	g.peer.port = 0;
	sockaddr_of(&g.peer, &sa, &sa_len);
	g.peer_listen = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (g.peer_listen < 0 || bind(g.peer_listen, (struct sockaddr *)&sa, sa_len) != 0 ||
	    listen(g.peer_listen, 8) != 0 || getsockname(g.peer_listen, (struct sockaddr *)&sa, &sa_len) != 0)
		die("our peer's listener: %s", strerror(errno));
	g.peer.port = ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port :
						    ((struct sockaddr_in6 *)&sa)->sin6_port);
	honest_check();
	progress();
	g.base_fds = count_fds();
	fprintf(stderr, "fuzz_link: soft_lo server and client up, link port %u, %d fds\n", g.link.port, g.base_fds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	fuzz_input(data[0] % 3, data + 1, size - 1);
	if (!canaries_ok())
		die("%s", "the canaries around the server's region changed");
	if (++g.inputs % HONEST_EVERY == 0)
		honest_check();
	check_fds();
	return 0;
}
