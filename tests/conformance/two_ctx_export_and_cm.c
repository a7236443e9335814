/*
 * Conformance program — one process, two doca_rdma contexts connected two
 * different ways at the same time: one by export/connect (descriptors
 * over a socket), the other by RDMA CM (doca_rdma_start_listen_to_port /
 * doca_rdma_connect_to_addr on 127.0.0.1). The peer is a forked second
 * process with the same two kinds of context.
 *
 *   parent  ctx "exp"  --export/connect-->  child ctx "exp"
 *   parent  ctx "cm"   <----RDMA CM-------  child ctx "cm" (server)
 *
 * Traffic runs on both connections at once, in opposite directions: on
 * the export connection the parent streams, on the CM connection the
 * child streams. A stream is R rounds of "RDMA write 4 KiB into slice r
 * of the peer's memory, then send the round number"; the receiving side
 * has R receives posted and, on each, checks the message and every byte
 * of slice r (a receive completion means the earlier write has landed).
 * The parent puts both its contexts on one PE, the child one PE each.
 *
 * DOCA calls the established callback for RDMA CM connections only (on
 * hardware doca_rdma_connect moves the QP to RTS with no event): each
 * side waits for it on "cm", where the client learns its connection from
 * it, and it must run exactly once there and never on "exp", where the
 * stream is submitted right after doca_rdma_connect (the library holds
 * its tasks until the connection is up).
 *
 * Exit 0 on success, 1 with a line saying what failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

#define ROUNDS 32
#define SLICE 4096
#define REGION (ROUNDS * SLICE)
#define WAIT_S 60.0

static const char *who = "parent";
static int failures;

static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void complain(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[%s] FAIL: ", who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failures++;
}

#define CK(call)                                                                                          \
	do {                                                                                              \
		doca_error_t e_ = (call);                                                                 \
		if (e_ != DOCA_SUCCESS) {                                                                 \
			complain("%s:%d %s -> %s", __FILE__, __LINE__, #call, doca_error_get_name(e_));    \
			return -1;                                                                        \
		}                                                                                         \
	} while (0)

/* One context and its part in the traffic: a stream (writer + sender)
 * or a sink (receiver + checker). */
struct cx {
	const char *name;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	struct doca_rdma_connection *conn;
	enum doca_ctx_states state;
	int up, broken;
	bool streams;
	/* stream */
	struct doca_mmap *remote;
	uint8_t *src;
	struct doca_mmap *src_mmap;
	uint32_t round, sent;
	/* sink */
	uint8_t *region;
	struct doca_mmap *region_mmap;
	uint32_t received;
	/* shared */
	struct doca_buf_inventory *inv;
	struct doca_dev *dev;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint8_t byte_of(const char *name, uint32_t round, size_t i)
{
	return (uint8_t)(name[0] * 31 + round * 17 + i * 13 + (i >> 8));
}

/* ---- a tiny socket channel ---- */

static int io_all(int fd, void *p, size_t n, bool out)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t r = out ? write(fd, b, n) : read(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int put_msg(int fd, const void *p, uint32_t n)
{
	return io_all(fd, &n, 4, true) || io_all(fd, (void *)p, n, true) ? -1 : 0;
}

static void *get_msg(int fd, uint32_t *n)
{
	void *p;

	if (io_all(fd, n, 4, false) || *n > 65536 || (p = malloc(*n + 1)) == NULL)
		return NULL;
	if (io_all(fd, p, *n, false) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* ---- the traffic, driven from the completion callbacks ---- */

static int stream_write(struct cx *c);

static void on_send_ok(struct doca_rdma_task_send *t, union doca_data tu, union doca_data cu)
{
	struct cx *c = cu.ptr;

	(void)tu;
	doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_send_get_src_buf(t), NULL);
	doca_task_free(doca_rdma_task_send_as_task(t));
	c->sent++;
	if (++c->round < ROUNDS)
		(void)stream_write(c);
}

static void on_send_err(struct doca_rdma_task_send *t, union doca_data tu, union doca_data cu)
{
	complain("%s: send of round %" PRIu64 " failed: %s", ((struct cx *)cu.ptr)->name, tu.u64,
		 doca_error_get_name(doca_task_get_status(doca_rdma_task_send_as_task(t))));
	doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_send_get_src_buf(t), NULL);
	doca_task_free(doca_rdma_task_send_as_task(t));
}

/* The write of round r landed: tell the peer with a send of r. */
static void on_write_ok(struct doca_rdma_task_write *t, union doca_data tu, union doca_data cu)
{
	struct cx *c = cu.ptr;
	struct doca_rdma_task_send *s;
	struct doca_buf *b;
	uint8_t *msg = c->src + REGION + (tu.u64 % ROUNDS) * 4;
	uint32_t r = (uint32_t)tu.u64;
	doca_error_t err;

	doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_write_get_src_buf(t), NULL);
	doca_buf_dec_refcount(doca_rdma_task_write_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_write_as_task(t));
	memcpy(msg, &r, 4);
	err = doca_buf_inventory_buf_get_by_data(c->inv, c->src_mmap, msg, 4, &b);
	if (err == DOCA_SUCCESS)
		err = doca_rdma_task_send_allocate_init(c->rdma, c->conn, b, tu, &s);
	if (err == DOCA_SUCCESS)
		err = doca_task_submit(doca_rdma_task_send_as_task(s));
	if (err != DOCA_SUCCESS)
		complain("%s: the send of round %u could not be submitted: %s", c->name, r, doca_error_get_name(err));
}

static void on_write_err(struct doca_rdma_task_write *t, union doca_data tu, union doca_data cu)
{
	complain("%s: write of round %" PRIu64 " failed: %s", ((struct cx *)cu.ptr)->name, tu.u64,
		 doca_error_get_name(doca_task_get_status(doca_rdma_task_write_as_task(t))));
	doca_task_free(doca_rdma_task_write_as_task(t));
}

static int stream_write(struct cx *c)
{
	struct doca_rdma_task_write *t;
	struct doca_buf *src, *dst;
	union doca_data tu = {.u64 = c->round};
	uint8_t *slice = c->src + (size_t)c->round * SLICE;
	void *raddr;
	size_t rlen;

	for (size_t i = 0; i < SLICE; i++)
		slice[i] = byte_of(c->name, c->round, i);
	CK(doca_mmap_get_memrange(c->remote, &raddr, &rlen));
	if (rlen != REGION) {
		complain("%s: the peer's region is %zu bytes, expected %d", c->name, rlen, REGION);
		return -1;
	}
	CK(doca_buf_inventory_buf_get_by_data(c->inv, c->src_mmap, slice, SLICE, &src));
	CK(doca_buf_inventory_buf_get_by_addr(c->inv, c->remote, (uint8_t *)raddr + (size_t)c->round * SLICE, SLICE,
					      &dst));
	CK(doca_rdma_task_write_allocate_init(c->rdma, c->conn, src, dst, tu, &t));
	CK(doca_task_submit(doca_rdma_task_write_as_task(t)));
	return 0;
}

/* A message arrived: it names a round whose slice must now be complete
 * (the two ends of one connection share its name, hence its pattern). */
static void on_recv_ok(struct doca_rdma_task_receive *t, union doca_data tu, union doca_data cu)
{
	struct cx *c = cu.ptr;
	struct doca_buf *b = doca_rdma_task_receive_get_dst_buf(t);
	size_t len = 0;
	void *data = NULL;
	uint32_t r = UINT32_MAX;

	(void)tu;
	(void)doca_buf_get_data_len(b, &len);
	(void)doca_buf_get_data(b, &data);
	if (data != NULL && len == 4)
		memcpy(&r, data, 4);
	if (len != 4 || r != c->received)
		complain("%s: message %u says round %u (%zu bytes)", c->name, c->received, r, len);
	for (size_t i = 0; r < ROUNDS && i < SLICE; i++) {
		if (c->region[(size_t)r * SLICE + i] != byte_of(c->name, r, i)) {
			complain("%s: slice %u byte %zu is wrong after its receive", c->name, r, i);
			break;
		}
	}
	c->received++;
	doca_buf_dec_refcount(b, NULL);
	doca_task_free(doca_rdma_task_receive_as_task(t));
}

static void on_recv_err(struct doca_rdma_task_receive *t, union doca_data tu, union doca_data cu)
{
	struct cx *c = cu.ptr;

	/* Receives still posted when the context stops are flushed. */
	if (c->state == DOCA_CTX_STATE_RUNNING)
		complain("%s: receive %" PRIu64 " failed: %s", c->name, tu.u64,
			 doca_error_get_name(doca_task_get_status(doca_rdma_task_receive_as_task(t))));
	doca_buf_dec_refcount(doca_rdma_task_receive_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_receive_as_task(t));
}

/* ---- connection and context callbacks ---- */

static void on_state(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	(void)ctx;
	(void)prev;
	((struct cx *)ud.ptr)->state = next;
}

static void on_request(struct doca_rdma_connection *conn, union doca_data ud)
{
	struct cx *c = ud.ptr;
	doca_error_t err;

	if (c->conn != NULL) {
		(void)doca_rdma_connection_reject(conn);
		return;
	}
	err = doca_rdma_connection_accept(conn, NULL, 0);
	if (err != DOCA_SUCCESS)
		complain("%s: doca_rdma_connection_accept -> %s", c->name, doca_error_get_name(err));
}

static void on_up(struct doca_rdma_connection *conn, union doca_data cu, union doca_data ud)
{
	struct cx *c = ud.ptr;

	(void)cu;
	c->conn = conn;
	c->up++;
}

static void on_down(struct doca_rdma_connection *conn, union doca_data cu, union doca_data ud)
{
	(void)conn;
	(void)cu;
	((struct cx *)ud.ptr)->broken++;
}

/* ---- setup ---- */

static struct doca_dev *open_soft_lo(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "soft_lo") == 0 && doca_dev_open(list[i], &dev) != DOCA_SUCCESS)
			dev = NULL;
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

static int mmap_of(struct cx *c, struct doca_mmap **m, void *p, size_t n, uint32_t perm)
{
	CK(doca_mmap_create(m));
	CK(doca_mmap_set_memrange(*m, p, n));
	CK(doca_mmap_set_permissions(*m, perm));
	CK(doca_mmap_add_dev(*m, c->dev));
	CK(doca_mmap_start(*m));
	return 0;
}

static int cx_create(struct cx *c, const char *name, struct doca_dev *dev, struct doca_pe *pe,
		     struct doca_buf_inventory *inv, bool streams, bool cm)
{
	union doca_data ud = {.ptr = c};

	c->name = name;
	c->dev = dev;
	c->pe = pe;
	c->inv = inv;
	c->streams = streams;
	c->state = DOCA_CTX_STATE_IDLE;
	/* Stream: slices plus room for the round numbers it sends. */
	c->src = calloc(1, REGION + ROUNDS * 4);
	c->region = calloc(1, REGION);
	if (c->src == NULL || c->region == NULL)
		return -1;
	if (mmap_of(c, &c->src_mmap, c->src, REGION + ROUNDS * 4, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) != 0 ||
	    mmap_of(c, &c->region_mmap, c->region, REGION,
		    DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE) != 0)
		return -1;
	CK(doca_rdma_create(dev, &c->rdma));
	c->ctx = doca_rdma_as_ctx(c->rdma);
	CK(doca_rdma_set_permissions(c->rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE));
	/* DOCA sizes the receive queue on GPU/DPA datapaths only; on the CPU
	 * it answers NOT_SUPPORTED (receives are bounded by their pool). */
	if (doca_rdma_set_recv_queue_size(c->rdma, ROUNDS) != DOCA_ERROR_NOT_SUPPORTED)
		complain("%s: doca_rdma_set_recv_queue_size on the CPU datapath did not say NOT_SUPPORTED", name);
	CK(doca_rdma_task_write_set_conf(c->rdma, on_write_ok, on_write_err, 4));
	CK(doca_rdma_task_send_set_conf(c->rdma, on_send_ok, on_send_err, 4));
	CK(doca_rdma_task_receive_set_conf(c->rdma, on_recv_ok, on_recv_err, ROUNDS));
	CK(doca_rdma_set_connection_state_callbacks(c->rdma, cm ? on_request : NULL, on_up, on_down, on_down));
	CK(doca_ctx_set_user_data(c->ctx, ud));
	CK(doca_ctx_set_state_changed_cb(c->ctx, on_state));
	CK(doca_pe_connect_ctx(pe, c->ctx));
	if (doca_ctx_start(c->ctx) != DOCA_SUCCESS && c->state != DOCA_CTX_STATE_STARTING) {
		complain("%s: doca_ctx_start failed", name);
		return -1;
	}
	return 0;
}

/* Post the sink's receives before any traffic can reach it. */
static int sink_post(struct cx *c)
{
	for (uint32_t i = 0; i < ROUNDS; i++) {
		struct doca_rdma_task_receive *t;
		struct doca_buf *b;
		union doca_data tu = {.u64 = i};

		/* Each receive lands in its own 4 bytes (an empty buf). */
		CK(doca_buf_inventory_buf_get_by_addr(c->inv, c->src_mmap, c->src + REGION + i * 4, 4, &b));
		CK(doca_rdma_task_receive_allocate_init(c->rdma, b, tu, &t));
		CK(doca_task_submit(doca_rdma_task_receive_as_task(t)));
	}
	return 0;
}

static void cx_destroy(struct cx *c)
{
	double end = now() + WAIT_S;
	doca_error_t err;

	if (c->ctx != NULL) {
		err = doca_ctx_stop(c->ctx);
		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
			complain("%s: doca_ctx_stop -> %s", c->name, doca_error_get_name(err));
		while (c->state != DOCA_CTX_STATE_IDLE && now() < end)
			(void)doca_pe_progress(c->pe);
		if (c->state != DOCA_CTX_STATE_IDLE)
			complain("%s: the context did not reach IDLE", c->name);
		else if ((err = doca_rdma_destroy(c->rdma)) != DOCA_SUCCESS)
			complain("%s: doca_rdma_destroy -> %s", c->name, doca_error_get_name(err));
	}
	if (c->remote != NULL)
		(void)doca_mmap_destroy(c->remote);
	if (c->src_mmap != NULL && doca_mmap_destroy(c->src_mmap) != DOCA_SUCCESS)
		complain("%s: the source mmap could not be destroyed", c->name);
	if (c->region_mmap != NULL && doca_mmap_destroy(c->region_mmap) != DOCA_SUCCESS)
		complain("%s: the region mmap could not be destroyed", c->name);
	free(c->src);
	free(c->region);
}

/* ---- the two processes ---- */

struct proc {
	struct doca_dev *dev;
	struct doca_pe *pe[2];
	int npe;
	struct doca_buf_inventory *inv;
	struct cx exp, cm;
	int sock;
};

static int progress_until(struct proc *p, bool (*cond)(struct proc *), const char *what)
{
	double end = now() + WAIT_S;

	while (!cond(p)) {
		uint8_t any = 0;

		if (failures != 0)
			return -1;
		if (now() > end) {
			complain("timed out waiting for %s", what);
			return -1;
		}
		for (int i = 0; i < p->npe; i++)
			any |= doca_pe_progress(p->pe[i]);
		if (!any)
			usleep(20);
	}
	return 0;
}

static bool both_running(struct proc *p)
{
	return p->exp.state == DOCA_CTX_STATE_RUNNING && p->cm.state == DOCA_CTX_STATE_RUNNING;
}

/* The RDMA CM connection; "exp" has no event to wait for (see the top). */
static bool cm_up(struct proc *p)
{
	return p->cm.up || p->exp.broken || p->cm.broken;
}

static bool traffic_done(struct proc *p)
{
	struct cx *st = p->exp.streams ? &p->exp : &p->cm, *sk = p->exp.streams ? &p->cm : &p->exp;

	return st->sent == ROUNDS && sk->received == ROUNDS;
}

/* Common start: device, PEs (one shared, or one per context), inventory,
 * both contexts running. */
static int proc_start(struct proc *p, int npe, bool exp_streams)
{
	p->dev = open_soft_lo();
	if (p->dev == NULL) {
		complain("cannot open soft_lo");
		return -1;
	}
	p->npe = npe;
	for (int i = 0; i < npe; i++)
		CK(doca_pe_create(&p->pe[i]));
	CK(doca_buf_inventory_create(4 * ROUNDS + 16, &p->inv));
	CK(doca_buf_inventory_start(p->inv));
	if (cx_create(&p->exp, "exp", p->dev, p->pe[0], p->inv, exp_streams, false) != 0 ||
	    cx_create(&p->cm, "cm", p->dev, p->pe[npe - 1], p->inv, !exp_streams, true) != 0)
		return -1;
	if (progress_until(p, both_running, "both contexts RUNNING") != 0)
		return -1;
	return sink_post(exp_streams ? &p->cm : &p->exp);
}

static int send_mmap(struct proc *p, struct doca_mmap *m)
{
	const void *d;
	size_t n;

	CK(doca_mmap_export_rdma(m, p->dev, &d, &n));
	return put_msg(p->sock, d, (uint32_t)n);
}

static int recv_mmap(struct proc *p, struct cx *c)
{
	uint32_t n;
	void *d = get_msg(p->sock, &n);
	doca_error_t err;

	if (d == NULL) {
		complain("the peer's mmap descriptor did not arrive");
		return -1;
	}
	err = doca_mmap_create_from_export(NULL, d, n, p->dev, &c->remote);
	free(d);
	CK(err);
	return 0;
}

static int exp_export(struct proc *p)
{
	const void *d;
	size_t n;

	CK(doca_rdma_export(p->exp.rdma, &d, &n, &p->exp.conn));
	return put_msg(p->sock, d, (uint32_t)n);
}

static int exp_connect(struct proc *p)
{
	uint32_t n;
	void *d = get_msg(p->sock, &n);
	doca_error_t err;

	if (d == NULL) {
		complain("the peer's connection descriptor did not arrive");
		return -1;
	}
	err = doca_rdma_connect(p->exp.rdma, d, n, p->exp.conn);
	free(d);
	CK(err);
	return 0;
}

static int listen_somewhere(struct proc *p, uint16_t *port)
{
	doca_error_t err = DOCA_ERROR_UNKNOWN;

	for (int i = 0; i < 50; i++) {
		*port = (uint16_t)(30000 + (getpid() * 11 + i * 97) % 20000);
		err = doca_rdma_start_listen_to_port(p->cm.rdma, *port);
		if (err != DOCA_ERROR_IN_USE)
			break;
	}
	CK(err);
	return 0;
}

static int finish(struct proc *p)
{
	uint32_t n;
	char *m;

	if (progress_until(p, traffic_done, "the traffic on both connections") != 0)
		return -1;
	if (p->exp.broken || p->cm.broken) {
		complain("a connection broke during the traffic");
		return -1;
	}
	if (p->cm.up != 1 || p->exp.up != 0) {
		complain("established callbacks: %d on the RDMA CM connection (expected 1), %d on the export/connect "
			 "one (expected 0: DOCA calls it for RDMA CM connections only)",
			 p->cm.up, p->exp.up);
		return -1;
	}
	printf("[%s] %d rounds out and %d rounds in, every byte checked\n", who, ROUNDS, ROUNDS);
	if (put_msg(p->sock, "done", 4) != 0 || (m = get_msg(p->sock, &n)) == NULL) {
		complain("the peer did not finish");
		return -1;
	}
	n = n == 4 && memcmp(m, "done", 4) == 0;
	free(m);
	return n ? 0 : -1;
}

static void proc_stop(struct proc *p)
{
	cx_destroy(&p->exp);
	cx_destroy(&p->cm);
	if (p->inv != NULL) {
		(void)doca_buf_inventory_stop(p->inv);
		if (doca_buf_inventory_destroy(p->inv) != DOCA_SUCCESS)
			complain("doca_buf_inventory_destroy failed: bufs still out");
	}
	for (int i = 0; i < p->npe; i++)
		if (p->pe[i] != NULL && doca_pe_destroy(p->pe[i]) != DOCA_SUCCESS)
			complain("doca_pe_destroy failed");
	if (p->dev != NULL && doca_dev_close(p->dev) != DOCA_SUCCESS)
		complain("doca_dev_close failed");
}

/* Child: sinks on "exp", streams and serves RDMA CM on "cm"; one PE per
 * context. */
static int child_run(struct proc *p)
{
	uint16_t port;

	who = "child";
	if (proc_start(p, 2, false) != 0 || listen_somewhere(p, &port) != 0)
		return -1;
	if (exp_export(p) != 0 || send_mmap(p, p->exp.region_mmap) != 0 || put_msg(p->sock, &port, 2) != 0)
		return -1;
	if (exp_connect(p) != 0 || recv_mmap(p, &p->cm) != 0)
		return -1;
	if (progress_until(p, cm_up, "the RDMA CM connection") != 0)
		return -1;
	if (stream_write(&p->cm) != 0)
		return -1;
	return finish(p);
}

/* Parent: streams on "exp", RDMA CM client and sink on "cm"; one PE. */
static int parent_run(struct proc *p)
{
	struct doca_rdma_addr *addr;
	union doca_data cu = {.u64 = 7};
	uint16_t *port;
	uint32_t n;
	doca_error_t err;

	if (proc_start(p, 1, true) != 0)
		return -1;
	if (exp_export(p) != 0 || send_mmap(p, p->cm.region_mmap) != 0)
		return -1;
	if (exp_connect(p) != 0 || recv_mmap(p, &p->exp) != 0)
		return -1;
	port = get_msg(p->sock, &n);
	if (port == NULL || n != 2) {
		free(port);
		complain("the child's port did not arrive");
		return -1;
	}
	CK(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", *port, &addr));
	free(port);
	err = doca_rdma_connect_to_addr(p->cm.rdma, addr, cu);
	(void)doca_rdma_addr_destroy(addr);
	CK(err);
	if (progress_until(p, cm_up, "the RDMA CM connection") != 0)
		return -1;
	if (stream_write(&p->exp) != 0)
		return -1;
	return finish(p);
}

int main(void)
{
	struct proc p = {0};
	int sv[2], status = 0, rc;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || (pid = fork()) < 0) {
		perror("socketpair/fork");
		return 1;
	}
	if (pid == 0) {
		close(sv[0]);
		p.sock = sv[1];
		rc = child_run(&p);
		proc_stop(&p);
		_exit(rc == 0 && failures == 0 ? 0 : 1);
	}
	close(sv[1]);
	p.sock = sv[0];
	rc = parent_run(&p);
	proc_stop(&p);
	close(p.sock);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		complain("the child failed (status %#x)", status);
	if (rc != 0 || failures != 0) {
		printf("two_ctx_export_and_cm: FAIL\n");
		return 1;
	}
	printf("two_ctx_export_and_cm: PASS\n");
	return 0;
}
