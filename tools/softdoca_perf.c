/*
 * softdoca_perf — DOCA RDMA performance between two processes, through the
 * public API only.
 *
 *   softdoca_perf --server [--port P] [--serve progress|block] [-d IBDEV]
 *   softdoca_perf --client HOST [--port P] [-d IBDEV] [--tests LIST]
 *                 [--sizes LIST] [--time SEC] [--reps N] [--window N]
 *                 [--lat-iters N] [--lat-warmup N] [--conns N]
 *                 [--alloc-size S] [--conns-size S]
 *   softdoca_perf --memcpy [--sizes LIST] [--time SEC] [--reps N]
 *
 * The server exports a memory region and serves; the client runs the tests
 * against it and prints one line per measurement:
 *
 *   write_bw size=65536 conns=1 window=32 serve=progress reps=1 msgs=40123
 *            secs=0.500 MB/s=5258.4 min=5258.4 max=5258.4 msgs_per_s=80246
 *            cpu_init_s_per_GB=0.190 cpu_tgt_s_per_GB=0.188 cpus_init=1.00
 *            cpus_tgt=0.99
 *   read_bw  size=65536 ... (same fields)
 *   write_alloc size=1024 ... (same fields)
 *   conns_bw size=65536 conns=1 ... and conns_bw size=65536 conns=8 ...
 *   write_lat size=8 serve=progress iters=20000 avg_us=2.31 median_us=2.10
 *             p99_us=3.90 min_us=1.80 submit_us=0.21
 *
 * MB/s is 10^6 bytes per second of completed tasks, measured over --time
 * seconds after a warm-up; with --reps N, N such measurements run back to
 * back and the line gives the median (its msgs and secs) and the lowest
 * and highest. Every bandwidth test keeps a window of tasks in flight and
 * resubmits each from its completion callback; write_alloc instead does
 * what simple DOCA programs do for every operation: two
 * doca_buf_inventory_buf_get_by_* and doca_rdma_task_write_allocate_init
 * before the submit, doca_task_free and two doca_buf_dec_refcount in the
 * callback (at --alloc-size, default 1K). conns_bw runs a write window on
 * one connection, then one such window on each of --conns connections of
 * the same context (at --conns-size, default 64K; the server opens as many
 * connections as the client asks for). The cpu_* fields are the
 * initiator's (client's) and the target's (server's) user+system CPU
 * seconds (getrusage, every thread) over the measured reps, per 10^9
 * bytes moved; cpus_* the same CPU time per second of the reps (about 1
 * for a side that busy-polls on a CPU of its own, less when it had to
 * share one).
 *
 * A latency is the round trip of one 8-byte write: doca_task_submit, then
 * doca_pe_progress in a busy loop until the completion callback has run;
 * submit_us is the part of it spent inside doca_task_submit.
 *
 * --memcpy needs no peer: one thread copies --sizes bytes between two
 * buffers of its own for --time seconds, --reps times, and prints
 * `memcpy size=N reps=R copies=C secs=S MB/s=X min=Y max=Z` (bytes copied
 * per second): the single-copy limit of the machine.
 *
 * Serving: with --serve progress the server calls doca_pe_progress in a
 * loop (a DOCA application that polls); with --serve block it sits in a
 * blocking read(2) on the control socket and never progresses, so the
 * library's service thread must do the target's work (as a NIC would for
 * a responder blocked in getchar()).
 *
 * Out of band: a TCP connection from the client to the server's port
 * carries the descriptors and the end of the run, as frames of one type
 * byte, a 4-byte big-endian length and the payload:
 *
 *   client -> server  'H' hello: magic, version, region length (8 bytes),
 *                         number of connections (4 bytes)
 *                     'C' the client's connection descriptor (one a connection)
 *                     'R' how much CPU have you used?
 *                     'D' done: the server tears down and exits
 *   server -> client  'I' info: how it serves (0 progress, 1 block)
 *                     'C' the server's connection descriptor (one a connection)
 *                     'M' the server's mmap descriptor
 *                     'U' answer to 'R': user and system CPU microseconds
 *                         of the whole process (8 bytes each)
 *
 * Every frame is checked (type, length bound) before use. The client
 * retries the TCP connect for a few seconds, so the server may start
 * second. Sizes take K, M and G suffixes (powers of 1024).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
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

#include "perf_common.h"

/* ------------------------------------------------------------------ */
/* Limits and defaults                                                  */

#define DEFAULT_PORT 18515
#define DEFAULT_DEVICE "soft_lo"
#define DEFAULT_SIZES "1K,4K,16K,64K,256K,1M,4M,16M"
#define DEFAULT_TESTS "write_bw,read_bw,write_lat"
#define DEFAULT_TIME_S 0.5
#define DEFAULT_LAT_ITERS 20000u
#define DEFAULT_LAT_WARMUP 2000u
#define LAT_SIZE 8u
#define DEFAULT_ALLOC_SIZE 1024u
#define DEFAULT_CONNS_SIZE (64u * 1024u)

#define MAX_SIZES 32u
#define MAX_REPS 15u
#define MAX_WINDOW 256u           /* tasks in flight, per test */
#define MAX_CONNS 16u             /* connections of one context */
#define MAX_REGION (1ull << 30)   /* what a client may ask the server for */
#define REGION_SPREAD_MAX ((size_t)256 << 20) /* the most the client asks for to give tasks ranges of their own */
#define HELLO_MAGIC 0x53445046u   /* "SDPF" */
#define HELLO_VERSION 2u
#define HELLO_LEN 20u

#define ESTABLISH_WAIT_S 20.0     /* the context reaching RUNNING */
#define DRAIN_WAIT_S 20.0         /* in-flight tasks after a measurement */
#define STOP_WAIT_S 10.0          /* doca_ctx_stop reaching IDLE */
#define SERVE_POLL_EVERY 1024u    /* server, progress mode: look at the socket this often */
#define CLOCK_EVERY 16u           /* bandwidth tests: read the clock this often */

/* ------------------------------------------------------------------ */
/* Types                                                                */

enum serve_mode { SERVE_PROGRESS = 0, SERVE_BLOCK = 1 };

enum test_kind { TEST_WRITE_BW, TEST_READ_BW, TEST_WRITE_ALLOC, TEST_CONNS_BW, TEST_WRITE_LAT, TEST_COUNT };

static const char *const test_names[TEST_COUNT] = {
	[TEST_WRITE_BW] = "write_bw",
	[TEST_READ_BW] = "read_bw",
	[TEST_WRITE_ALLOC] = "write_alloc",
	[TEST_CONNS_BW] = "conns_bw",
	[TEST_WRITE_LAT] = "write_lat",
};

/* One task of a measurement and the bufs it moves between. */
struct slot {
	struct perf *perf;
	struct doca_rdma_connection *conn;
	struct doca_task *task;
	struct doca_buf *local;
	struct doca_buf *remote;
	size_t roff;      /* where in the server's region its remote bytes are */
};

/* The measurement that is running. */
struct run {
	enum test_kind kind;
	size_t size;
	bool resubmit;         /* completion callbacks submit the task again */
	uint64_t completed;    /* successful completions */
	uint32_t inflight;
	doca_error_t error;    /* first failure, DOCA_SUCCESS if none */
	const char *error_where;
};

struct options {
	bool server;
	bool memcpy_only;
	const char *host;
	const char *port;
	const char *device;
	enum serve_mode serve;
	bool tests[TEST_COUNT];
	size_t sizes[MAX_SIZES];
	uint32_t num_sizes;
	double time_s;
	uint32_t reps;
	uint32_t window; /* 0: by size */
	uint32_t ranges; /* remote ranges the tasks of a window take in turn */
	uint32_t lat_iters;
	uint32_t lat_warmup;
	uint32_t conns;
	size_t alloc_size;
	size_t conns_size;
};

struct perf {
	const struct options *opt;
	int sock;

	struct perf_doca d; /* DOCA objects and our memory */
	struct doca_rdma_connection *conns[MAX_CONNS];
	uint32_t num_conns;
	bool conn_failed;

	/* The peer's memory, as its descriptor says. */
	uint8_t *raddr;
	size_t rlen;

	enum serve_mode peer_serve; /* client: how the server serves */
	struct run run;
	/* The tasks of the running measurement: here, not on a stack, since
	 * a task that outlives a failed measurement still calls back. */
	struct slot slots[MAX_WINDOW];
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */

/* "64K" -> 65536. */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	switch (*end) {
	case 'K':
	case 'k':
		v <<= 10;
		end++;
		break;
	case 'M':
	case 'm':
		v <<= 20;
		end++;
		break;
	case 'G':
	case 'g':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end != '\0' || v == 0 || v > MAX_REGION)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* Tasks in flight for a bandwidth test of this size: many small ones,
 * fewer large ones (a few are enough to keep a copy engine busy). */
static uint32_t window_for(const struct options *opt, size_t size)
{
	if (opt->window != 0)
		return opt->window;
	if (size <= 64 * 1024)
		return 32;
	if (size <= 1024 * 1024)
		return 16;
	return 4;
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                            */

static void state_cb(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct perf *p = user_data.ptr;

	(void)ctx;
	(void)prev;
	p->d.state = next;
}

static void conn_request_cb(struct doca_rdma_connection *conn, union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	(void)doca_rdma_connection_reject(conn);
}

/* Required by doca_rdma_set_connection_state_callbacks; DOCA calls it for
 * RDMA CM connections only, and this tool connects by export/connect. */
static void conn_established_cb(struct doca_rdma_connection *conn, union doca_data conn_user_data,
				union doca_data ctx_user_data)
{
	(void)conn;
	(void)conn_user_data;
	(void)ctx_user_data;
}

static void conn_failure_cb(struct doca_rdma_connection *conn, union doca_data conn_user_data,
			    union doca_data ctx_user_data)
{
	struct perf *p = ctx_user_data.ptr;

	(void)conn;
	(void)conn_user_data;
	p->conn_failed = true;
}

/* ------------------------------------------------------------------ */
/* Slots: one task and its two bufs                                     */

/* Take the slot's two bufs and allocate its task over [0, size) of both
 * regions, as a simple DOCA program does for each operation. Writes move
 * local data into remote room; reads remote data into local room. */
/* Slot i's remote bytes: range i % --ranges of the server's region.
 * The default, 1, is ucx_perftest's single buffer: the same cache
 * footprint as the reference. With 2 or more consecutive writes do not
 * overlap, so RC order lets them run at once (at 1 MiB the footprint
 * then outgrows this VM's 2 MiB L2, which costs more than that gains).
 * The local bytes are always shared. */
static size_t slot_remote_off(const struct perf *p, uint32_t i, size_t size)
{
	size_t fit = size == 0 ? 1 : p->rlen / size;
	size_t ranges = p->opt->ranges < fit ? p->opt->ranges : fit;

	return ranges <= 1 ? 0 : (size_t)(i % ranges) * size;
}

static doca_error_t slot_fill(struct slot *s, bool rd, size_t size, size_t roff, const char **where)
{
	struct perf *p = s->perf;
	union doca_data ud = {.ptr = s};
	uint8_t *raddr = p->raddr + roff;
	doca_error_t err;

	*where = "doca_buf_inventory_buf_get_by_*";
	if (rd) {
		err = doca_buf_inventory_buf_get_by_addr(p->d.inv, p->d.lmmap, p->d.region, size, &s->local);
		if (err == DOCA_SUCCESS)
			err = doca_buf_inventory_buf_get_by_data(p->d.inv, p->d.rmmap, raddr, size, &s->remote);
	} else {
		err = doca_buf_inventory_buf_get_by_data(p->d.inv, p->d.lmmap, p->d.region, size, &s->local);
		if (err == DOCA_SUCCESS)
			err = doca_buf_inventory_buf_get_by_addr(p->d.inv, p->d.rmmap, raddr, size, &s->remote);
	}
	if (err != DOCA_SUCCESS)
		return err;
	*where = "doca_rdma_task_*_allocate_init";
	if (rd) {
		struct doca_rdma_task_read *t;

		err = doca_rdma_task_read_allocate_init(p->d.rdma, s->conn, s->remote, s->local, ud, &t);
		if (err == DOCA_SUCCESS)
			s->task = doca_rdma_task_read_as_task(t);
	} else {
		struct doca_rdma_task_write *t;

		err = doca_rdma_task_write_allocate_init(p->d.rdma, s->conn, s->local, s->remote, ud, &t);
		if (err == DOCA_SUCCESS)
			s->task = doca_rdma_task_write_as_task(t);
	}
	return err;
}

/* Give back what slot_fill took (whatever part of it it got). */
static void slot_release(struct slot *s)
{
	if (s->task != NULL)
		doca_task_free(s->task);
	if (s->local != NULL)
		(void)doca_buf_dec_refcount(s->local, NULL);
	if (s->remote != NULL)
		(void)doca_buf_dec_refcount(s->remote, NULL);
	s->task = NULL;
	s->local = NULL;
	s->remote = NULL;
}

/* The next operation of a write_alloc slot: free everything of the last
 * one, take it all again, submit. */
static doca_error_t slot_redo(struct slot *s, const char **where)
{
	doca_error_t err;

	slot_release(s);
	err = slot_fill(s, false, s->perf->run.size, s->roff, where);
	if (err != DOCA_SUCCESS) {
		slot_release(s);
		return err;
	}
	*where = "doca_task_submit (resubmit)";
	err = doca_task_submit(s->task);
	if (err != DOCA_SUCCESS)
		slot_release(s);
	return err;
}

/* A task finished well: count it and, while the measurement runs, send
 * it again at once (DOCA allows resubmitting from the callback). */
static void task_done(struct slot *s)
{
	struct run *r = &s->perf->run;
	const char *where = "doca_task_submit (resubmit)";
	doca_error_t err;

	r->completed++;
	if (!r->resubmit || r->error != DOCA_SUCCESS) {
		r->inflight--;
		return;
	}
	if (r->kind == TEST_WRITE_ALLOC) {
		err = slot_redo(s, &where);
	} else {
		if (r->kind == TEST_READ_BW)
			(void)doca_buf_reset_data_len(s->local);
		err = doca_task_submit(s->task);
	}
	if (err != DOCA_SUCCESS) {
		r->inflight--;
		r->error = err;
		r->error_where = where;
	}
}

static void task_failed(struct slot *s, struct doca_task *task)
{
	struct run *r = &s->perf->run;

	r->inflight--;
	if (r->error == DOCA_SUCCESS) {
		r->error = doca_task_get_status(task);
		r->error_where = "completion";
	}
}

static void write_ok_cb(struct doca_rdma_task_write *task, union doca_data task_user_data,
			union doca_data ctx_user_data)
{
	(void)task;
	(void)ctx_user_data;
	task_done(task_user_data.ptr);
}

static void write_err_cb(struct doca_rdma_task_write *task, union doca_data task_user_data,
			 union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	task_failed(task_user_data.ptr, doca_rdma_task_write_as_task(task));
}

static void read_ok_cb(struct doca_rdma_task_read *task, union doca_data task_user_data,
		       union doca_data ctx_user_data)
{
	(void)task;
	(void)ctx_user_data;
	task_done(task_user_data.ptr);
}

static void read_err_cb(struct doca_rdma_task_read *task, union doca_data task_user_data,
			union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	task_failed(task_user_data.ptr, doca_rdma_task_read_as_task(task));
}

/* ------------------------------------------------------------------ */
/* Setup and teardown (both roles)                                      */

/* Device, PE, the local region's mmap, buf inventory and a started RDMA
 * context able to carry MAX_WINDOW writes and reads at once. */
static int setup(struct perf *p, size_t region_len)
{
	const uint32_t perms = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
			       DOCA_ACCESS_FLAG_RDMA_WRITE;
	union doca_data ud = {.ptr = p};
	doca_error_t err;

	if (perf_doca_open(&p->d, p->opt->device, region_len, 0xa5, perms, 2 * MAX_WINDOW + 8) != 0)
		return -1;
	CHECK(doca_rdma_set_max_num_connections(p->d.rdma, (uint16_t)p->num_conns));
	CHECK(doca_rdma_set_send_queue_size(p->d.rdma, MAX_WINDOW));
	CHECK(doca_rdma_task_write_set_conf(p->d.rdma, write_ok_cb, write_err_cb, MAX_WINDOW));
	CHECK(doca_rdma_task_read_set_conf(p->d.rdma, read_ok_cb, read_err_cb, MAX_WINDOW));
	CHECK(doca_rdma_set_connection_state_callbacks(p->d.rdma, conn_request_cb, conn_established_cb,
						       conn_failure_cb, conn_failure_cb));
	CHECK(doca_ctx_set_user_data(p->d.ctx, ud));
	CHECK(doca_ctx_set_state_changed_cb(p->d.ctx, state_cb));
	CHECK(doca_pe_connect_ctx(p->d.pe, p->d.ctx));
	err = doca_ctx_start(p->d.ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		return fail("doca_ctx_start returned %s", doca_error_get_name(err));
	return perf_doca_wait_state(&p->d, DOCA_CTX_STATE_RUNNING, ESTABLISH_WAIT_S);
}

static void teardown(struct perf *p)
{
	perf_doca_stop(&p->d, STOP_WAIT_S);
	perf_doca_release(&p->d);
}

/* Our descriptor of connection i to the peer; bind it to the peer's. */
static int exchange_conn(struct perf *p, uint32_t i)
{
	const void *desc;
	size_t desc_len, peer_len;
	uint8_t *peer;
	doca_error_t err;

	CHECK(doca_rdma_export(p->d.rdma, &desc, &desc_len, &p->conns[i]));
	if (oob_send(p->sock, 'C', desc, desc_len) != 0)
		return -1;
	if (oob_expect(p->sock, 'C', "its connection descriptor", &peer, &peer_len) != 0)
		return -1;
	err = doca_rdma_connect(p->d.rdma, peer, peer_len, p->conns[i]);
	free(peer);
	if (err != DOCA_SUCCESS)
		return fail("doca_rdma_connect of connection %u with the peer's %zu-byte descriptor returned %s", i,
			    peer_len, doca_error_get_name(err));
	return 0;
}

static int exchange_conns(struct perf *p)
{
	for (uint32_t i = 0; i < p->num_conns; i++)
		if (exchange_conn(p, i) != 0)
			return -1;
	return 0;
}

/* User and system CPU time of the whole process (every thread), in us. */
static void cpu_times_us(uint64_t *user, uint64_t *sys)
{
	struct rusage ru;

	memset(&ru, 0, sizeof(ru));
	(void)getrusage(RUSAGE_SELF, &ru);
	*user = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec;
	*sys = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
}

/* ------------------------------------------------------------------ */
/* Server                                                               */

/* One frame from the client: answer 'R' with our CPU time; 1 after 'D'. */
static int server_frame(struct perf *p)
{
	uint8_t *payload, cpu[16];
	uint64_t user, sys;
	size_t len;
	char type;
	int r;

	r = oob_recv_any(p->sock, &type, &payload, &len);
	if (r < 0)
		return -1;
	if (r > 0)
		return fail("the client closed the control connection before saying it was done");
	free(payload);
	if (type == 'D')
		return 1;
	if (type != 'R')
		return fail("control socket: unexpected frame 0x%02x while serving", (uint8_t)type);
	cpu_times_us(&user, &sys);
	put_be64(cpu, user);
	put_be64(cpu + 8, sys);
	return oob_send(p->sock, 'U', cpu, sizeof(cpu));
}

/* Serve until the client says 'D' (or goes away). */
static int server_serve(struct perf *p)
{
	int r;

	if (p->opt->serve == SERVE_BLOCK) {
		/* This read is where the server spends the whole run. */
		while ((r = server_frame(p)) == 0)
			;
		return r < 0 ? -1 : 0;
	}
	for (;;) {
		struct pollfd pfd = {.fd = p->sock, .events = POLLIN, .revents = 0};

		for (uint32_t i = 0; i < SERVE_POLL_EVERY; i++)
			(void)doca_pe_progress(p->d.pe);
		r = poll(&pfd, 1, 0);
		if (r < 0 && errno != EINTR)
			return fail("poll on the control socket: %s", strerror(errno));
		if (r <= 0)
			continue;
		r = server_frame(p);
		if (r != 0)
			return r < 0 ? -1 : 0;
	}
}

static int server_main(struct perf *p)
{
	uint8_t *hello, info;
	size_t len;
	const void *mdesc;
	size_t mdesc_len;
	uint64_t region_len;
	int r;

	p->sock = oob_listen_accept(p->opt->port, "# server listening on port");
	if (p->sock < 0)
		return -1;
	if (oob_expect(p->sock, 'H', "its hello", &hello, &len) != 0)
		return -1;
	if (len != HELLO_LEN || get_be32(hello) != HELLO_MAGIC || get_be32(hello + 4) != HELLO_VERSION) {
		free(hello);
		return fail("the client's hello is not from this softdoca_perf (length %zu)", len);
	}
	region_len = get_be64(hello + 8);
	p->num_conns = get_be32(hello + 16);
	free(hello);
	if (region_len == 0 || region_len > MAX_REGION)
		return fail("the client asks for a %" PRIu64 "-byte region (1 .. %llu)", region_len, MAX_REGION);
	if (p->num_conns == 0 || p->num_conns > MAX_CONNS)
		return fail("the client asks for %" PRIu32 " connections (1 .. %u)", p->num_conns, MAX_CONNS);
	if (setup(p, (size_t)region_len) != 0)
		return -1;
	info = (uint8_t)p->opt->serve;
	if (oob_send(p->sock, 'I', &info, 1) != 0)
		return -1;
	if (exchange_conns(p) != 0)
		return -1;
	CHECK(doca_mmap_export_rdma(p->d.lmmap, p->d.dev, &mdesc, &mdesc_len));
	if (oob_send(p->sock, 'M', mdesc, mdesc_len) != 0)
		return -1;
	r = server_serve(p);
	printf("# server done (%s)\n", p->opt->serve == SERVE_BLOCK ? "served without progress" : "progressed");
	return r;
}

/* ------------------------------------------------------------------ */
/* Client: measurements                                                 */

static const char *serve_name(enum serve_mode m)
{
	return m == SERVE_BLOCK ? "block" : "progress";
}

/* Fill n slots for the run's kind, slot i on connection i % nconns. */
static int slots_create(struct perf *p, struct slot *slots, uint32_t n, uint32_t nconns, size_t size)
{
	bool rd = p->run.kind == TEST_READ_BW;

	for (uint32_t i = 0; i < n; i++) {
		struct slot *s = &slots[i];
		const char *where;
		doca_error_t err;

		s->perf = p;
		s->conn = p->conns[i % nconns];
		s->roff = slot_remote_off(p, i, size);
		err = slot_fill(s, rd, size, s->roff, &where);
		if (err != DOCA_SUCCESS)
			return fail("%s returned %s (%s)", where, doca_error_get_name(err), doca_error_get_descr(err));
	}
	return 0;
}

static void slots_destroy(struct slot *slots, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		slot_release(&slots[i]);
		memset(&slots[i], 0, sizeof(slots[i]));
	}
}

static int run_error(struct perf *p, const char *test, size_t size)
{
	return fail("%s size=%zu: a task failed at %s with %s (%s)", test, size, p->run.error_where,
		    doca_error_get_name(p->run.error), doca_error_get_descr(p->run.error));
}

/* Let every task in flight finish (after a failure too: they complete
 * with an error status). */
static int run_drain(struct perf *p)
{
	double deadline = now_s() + DRAIN_WAIT_S;

	p->run.resubmit = false;
	while (p->run.inflight > 0) {
		if (now_s() > deadline)
			return fail("%u tasks still in flight %.0f s after the measurement%s", p->run.inflight,
				    DRAIN_WAIT_S, p->conn_failed ? " (the connection failed)" : "");
		(void)doca_pe_progress(p->d.pe);
	}
	if (p->conn_failed)
		return fail("the connection failed during the measurement");
	return 0;
}

/* CPU microseconds used so far by this process and by the server (asked
 * over the control socket; a blocked server wakes in read(2) to answer,
 * without progressing). Tasks stay in flight meanwhile. */
static int cpu_sample(struct perf *p, uint64_t *init_us, uint64_t *tgt_us)
{
	uint8_t *payload;
	uint64_t user, sys;
	size_t len;

	if (oob_send(p->sock, 'R', NULL, 0) != 0)
		return -1;
	if (oob_expect(p->sock, 'U', "its CPU time", &payload, &len) != 0)
		return -1;
	if (len != 16) {
		free(payload);
		return fail("the server's CPU time frame has %zu bytes, not 16", len);
	}
	*tgt_us = get_be64(payload) + get_be64(payload + 8);
	free(payload);
	cpu_times_us(&user, &sys);
	*init_us = user + sys;
	return 0;
}

/* One measurement of a bandwidth test. */
struct rep {
	uint64_t msgs;
	double secs;
	double mbps;
};

static int cmp_rep(const void *a, const void *b)
{
	double x = ((const struct rep *)a)->mbps, y = ((const struct rep *)b)->mbps;

	return x < y ? -1 : x > y;
}

/* Submit every slot of the window. */
static void run_start(struct perf *p, uint32_t n)
{
	p->run.resubmit = true;
	for (uint32_t i = 0; i < n; i++) {
		doca_error_t err = doca_task_submit(p->slots[i].task);

		if (err != DOCA_SUCCESS) {
			p->run.error = err;
			p->run.error_where = "doca_task_submit";
			return;
		}
		p->run.inflight++;
	}
}

/* Warm up: at least two windows' worth and warm_s seconds. The clock is
 * read every CLOCK_EVERY progress calls, not to weigh on the loop. */
static int run_warm_up(struct perf *p, const char *name, uint32_t n, double warm_s)
{
	double t = now_s();

	while (p->run.error == DOCA_SUCCESS && !p->conn_failed &&
	       (now_s() - t < warm_s || p->run.completed < 2ull * n)) {
		if (now_s() - t > DRAIN_WAIT_S)
			return fail("%s size=%zu: only %" PRIu64 " tasks completed in %.0f s of warm-up", name,
				    p->run.size, p->run.completed, DRAIN_WAIT_S);
		for (uint32_t i = 0; i < CLOCK_EVERY; i++)
			(void)doca_pe_progress(p->d.pe);
	}
	return 0;
}

/* Keep `window` tasks of `size` bytes in flight on each of nconns
 * connections: a warm-up, then count the bytes completed over opt->time_s
 * seconds of steady state, opt->reps times back to back; report the
 * median, the spread and the CPU time both sides used per GB. */
static int measure_bw(struct perf *p, enum test_kind kind, size_t size, uint32_t nconns)
{
	struct slot *slots = p->slots;
	uint32_t window = window_for(p->opt, size), n;
	const char *name = test_names[kind];
	uint32_t reps = p->opt->reps;
	struct rep rep[MAX_REPS], *med;
	uint64_t init0 = 0, init1 = 0, tgt0 = 0, tgt1 = 0, msgs = 0;
	double gb, secs = 0;
	int rc = -1;

	if (window * nconns > MAX_WINDOW)
		window = MAX_WINDOW / nconns;
	n = window * nconns;
	memset(&p->run, 0, sizeof(p->run));
	p->run.kind = kind;
	p->run.size = size;
	p->run.error = DOCA_SUCCESS;
	if (slots_create(p, slots, n, nconns, size) != 0)
		goto out;
	run_start(p, n);
	if (run_warm_up(p, name, n, p->opt->time_s / 5) != 0)
		goto drain;
	if (cpu_sample(p, &init0, &tgt0) != 0)
		goto drain;
	for (uint32_t r = 0; r < reps; r++) {
		double t0 = now_s(), t1 = t0;
		uint64_t c0 = p->run.completed;

		while (p->run.error == DOCA_SUCCESS && !p->conn_failed && t1 - t0 < p->opt->time_s) {
			for (uint32_t i = 0; i < CLOCK_EVERY; i++)
				(void)doca_pe_progress(p->d.pe);
			t1 = now_s();
		}
		rep[r].msgs = p->run.completed - c0;
		rep[r].secs = t1 - t0;
		rep[r].mbps = (double)rep[r].msgs * (double)size / rep[r].secs / 1e6;
		msgs += rep[r].msgs;
		secs += rep[r].secs;
	}
	if (cpu_sample(p, &init1, &tgt1) != 0)
		goto drain;
	if (run_drain(p) != 0)
		goto out;
	if (p->run.error != DOCA_SUCCESS) {
		run_error(p, name, size);
		goto out;
	}
	qsort(rep, reps, sizeof(rep[0]), cmp_rep);
	med = &rep[reps / 2];
	gb = (double)msgs * (double)size / 1e9;
	printf("%s size=%zu conns=%u window=%u serve=%s reps=%u msgs=%" PRIu64 " secs=%.3f MB/s=%.1f min=%.1f "
	       "max=%.1f msgs_per_s=%.0f cpu_init_s_per_GB=%.3f cpu_tgt_s_per_GB=%.3f cpus_init=%.2f cpus_tgt=%.2f\n",
	       name, size, nconns, window, serve_name(p->peer_serve), reps, med->msgs, med->secs, med->mbps,
	       rep[0].mbps, rep[reps - 1].mbps, (double)med->msgs / med->secs,
	       gb > 0 ? (double)(init1 - init0) / 1e6 / gb : 0.0, gb > 0 ? (double)(tgt1 - tgt0) / 1e6 / gb : 0.0,
	       secs > 0 ? (double)(init1 - init0) / 1e6 / secs : 0.0,
	       secs > 0 ? (double)(tgt1 - tgt0) / 1e6 / secs : 0.0);
	fflush(stdout);
	rc = 0;
	goto out;
drain:
	(void)run_drain(p);
out:
	p->run.resubmit = false;
	if (p->run.inflight == 0)
		slots_destroy(slots, n);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One 8-byte write at a time: submit, busy-progress until its callback
 * ran, repeat. */
static int measure_lat(struct perf *p)
{
	struct slot *slot = &p->slots[0];
	uint32_t iters = p->opt->lat_iters, total = p->opt->lat_warmup + iters;
	uint64_t *lat = calloc(iters, sizeof(*lat)), sum = 0, submit_sum = 0;
	int rc = -1;

	memset(&p->run, 0, sizeof(p->run));
	p->run.kind = TEST_WRITE_LAT;
	p->run.size = LAT_SIZE;
	p->run.error = DOCA_SUCCESS;
	if (lat == NULL) {
		fail("out of memory");
		goto out;
	}
	if (slots_create(p, slot, 1, 1, LAT_SIZE) != 0)
		goto out;
	for (uint32_t i = 0; i < total; i++) {
		uint64_t done = p->run.completed, t0 = now_ns(), t1, t2;
		doca_error_t err;

		err = doca_task_submit(slot->task);
		t1 = now_ns();
		if (err != DOCA_SUCCESS) {
			p->run.error = err;
			p->run.error_where = "doca_task_submit";
			break;
		}
		p->run.inflight = 1;
		/* A failed connection completes the task with an error; the
		 * clock bounds the wait in case it never does. */
		for (uint32_t spins = 1; p->run.completed == done && p->run.error == DOCA_SUCCESS; spins++) {
			(void)doca_pe_progress(p->d.pe);
			if (spins % 4096 == 0 && now_ns() - t0 > (uint64_t)(DRAIN_WAIT_S * 1e9)) {
				fail("write_lat: no completion %.0f s after submit", DRAIN_WAIT_S);
				goto out;
			}
		}
		t2 = now_ns();
		if (p->run.error != DOCA_SUCCESS)
			break;
		if (i >= p->opt->lat_warmup) {
			lat[i - p->opt->lat_warmup] = t2 - t0;
			sum += t2 - t0;
			submit_sum += t1 - t0;
		}
	}
	if (p->run.error != DOCA_SUCCESS) {
		run_error(p, "write_lat", LAT_SIZE);
		goto out;
	}
	qsort(lat, iters, sizeof(*lat), cmp_u64);
	printf("write_lat size=%u serve=%s iters=%u avg_us=%.3f median_us=%.3f p99_us=%.3f min_us=%.3f "
	       "submit_us=%.3f\n",
	       LAT_SIZE, serve_name(p->peer_serve), iters, (double)sum / iters / 1e3, (double)lat[iters / 2] / 1e3,
	       (double)lat[(uint64_t)iters * 99 / 100] / 1e3, (double)lat[0] / 1e3,
	       (double)submit_sum / iters / 1e3);
	fflush(stdout);
	rc = 0;
out:
	if (p->run.inflight == 0)
		slots_destroy(slot, 1);
	free(lat);
	return rc;
}

/* Room for --ranges ranges of the largest size (slot_remote_off), up
 * to REGION_SPREAD_MAX; past it ranges are shared. */
static size_t client_region_len(const struct options *opt)
{
	size_t len = LAT_SIZE, want;

	if (opt->tests[TEST_WRITE_BW] || opt->tests[TEST_READ_BW]) {
		for (uint32_t i = 0; i < opt->num_sizes; i++) {
			want = (size_t)opt->ranges * opt->sizes[i];
			if (want > REGION_SPREAD_MAX)
				want = opt->sizes[i] > REGION_SPREAD_MAX ? opt->sizes[i] : REGION_SPREAD_MAX;
			if (want > len)
				len = want;
		}
	}
	if (opt->tests[TEST_WRITE_ALLOC] && opt->alloc_size > len)
		len = opt->alloc_size;
	if (opt->tests[TEST_CONNS_BW]) {
		want = (size_t)opt->ranges * opt->conns_size;
		if (want > REGION_SPREAD_MAX)
			want = opt->conns_size > REGION_SPREAD_MAX ? opt->conns_size : REGION_SPREAD_MAX;
		if (want > len)
			len = want;
	}
	return len;
}

static int client_connect(struct perf *p)
{
	uint8_t hello[HELLO_LEN], *info, *mdesc;
	size_t len, mlen;
	void *addr = NULL;
	doca_error_t err;

	p->sock = oob_connect(p->opt->host, p->opt->port);
	if (p->sock < 0)
		return -1;
	put_be32(hello, HELLO_MAGIC);
	put_be32(hello + 4, HELLO_VERSION);
	put_be64(hello + 8, client_region_len(p->opt));
	put_be32(hello + 16, p->num_conns);
	if (oob_send(p->sock, 'H', hello, sizeof(hello)) != 0)
		return -1;
	if (setup(p, client_region_len(p->opt)) != 0)
		return -1;
	if (oob_expect(p->sock, 'I', "its info frame", &info, &len) != 0)
		return -1;
	if (len != 1 || info[0] > SERVE_BLOCK) {
		free(info);
		return fail("the server's info frame is malformed");
	}
	p->peer_serve = (enum serve_mode)info[0];
	free(info);
	if (exchange_conns(p) != 0)
		return -1;
	if (oob_expect(p->sock, 'M', "its mmap descriptor", &mdesc, &mlen) != 0)
		return -1;
	err = doca_mmap_create_from_export(NULL, mdesc, mlen, p->d.dev, &p->d.rmmap);
	free(mdesc);
	if (err != DOCA_SUCCESS)
		return fail("doca_mmap_create_from_export of the server's %zu-byte descriptor returned %s", mlen,
			    doca_error_get_name(err));
	CHECK(doca_mmap_get_memrange(p->d.rmmap, &addr, &p->rlen));
	if (p->rlen < p->d.region_len)
		return fail("the server exported %zu bytes, %zu asked", p->rlen, p->d.region_len);
	p->raddr = addr;
	/* No wait for the links: doca_rdma_connect gives no event (DOCA calls
	 * the established callback for RDMA CM only), and tasks submitted
	 * meanwhile wait for the link; every measurement's warm-up absorbs
	 * that, and a link that never comes up fails it in bounded time. */
	return 0;
}

static int client_main(struct perf *p)
{
	const struct options *opt = p->opt;
	int rc = 0;

	if (client_connect(p) != 0)
		return -1;
	printf("# softdoca_perf client: device %s, server serves by %s, UCX_TLS=%s\n", opt->device,
	       serve_name(p->peer_serve), getenv("UCX_TLS") != NULL ? getenv("UCX_TLS") : "(unset)");
	fflush(stdout);
	for (int k = TEST_WRITE_BW; k <= TEST_READ_BW && rc == 0; k++) {
		if (!opt->tests[k])
			continue;
		for (uint32_t i = 0; i < opt->num_sizes && rc == 0; i++)
			rc = measure_bw(p, (enum test_kind)k, opt->sizes[i], 1);
	}
	if (rc == 0 && opt->tests[TEST_WRITE_ALLOC])
		rc = measure_bw(p, TEST_WRITE_ALLOC, opt->alloc_size, 1);
	/* One connection, then all of them: the same window on each. */
	if (rc == 0 && opt->tests[TEST_CONNS_BW])
		rc = measure_bw(p, TEST_CONNS_BW, opt->conns_size, 1);
	if (rc == 0 && opt->tests[TEST_CONNS_BW] && p->num_conns > 1)
		rc = measure_bw(p, TEST_CONNS_BW, opt->conns_size, p->num_conns);
	if (rc == 0 && opt->tests[TEST_WRITE_LAT])
		rc = measure_lat(p);
	if (oob_send(p->sock, 'D', NULL, 0) != 0)
		rc = -1;
	return rc;
}

/* ------------------------------------------------------------------ */
/* memcpy: the machine's single-copy limit                              */

/* Copy size bytes from src to dst for about secs seconds; bytes/s. The
 * empty asm says dst is used, so the copies cannot be optimised away. */
static double memcpy_rate(uint8_t *dst, const uint8_t *src, size_t size, double secs, uint64_t *copies)
{
	double t0 = now_s(), t1 = t0;
	uint64_t n = 0;

	while (t1 - t0 < secs) {
		for (uint32_t i = 0; i < CLOCK_EVERY; i++) {
			memcpy(dst, src, size);
			__asm__ __volatile__("" : : "r"(dst) : "memory");
		}
		n += CLOCK_EVERY;
		t1 = now_s();
	}
	*copies = n;
	return (double)n * (double)size / (t1 - t0);
}

static int memcpy_main(const struct options *opt)
{
	for (uint32_t i = 0; i < opt->num_sizes; i++) {
		size_t size = opt->sizes[i];
		uint8_t *src = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
		uint8_t *dst = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
		struct rep rep[MAX_REPS], *med;
		uint64_t copies;

		if (src == NULL || dst == NULL) {
			free(src);
			free(dst);
			return fail("cannot allocate 2 x %zu bytes", size);
		}
		memset(src, 0x5a, size);
		memset(dst, 0xa5, size);
		(void)memcpy_rate(dst, src, size, opt->time_s / 5, &copies); /* warm-up */
		for (uint32_t r = 0; r < opt->reps; r++) {
			rep[r].mbps = memcpy_rate(dst, src, size, opt->time_s, &copies) / 1e6;
			rep[r].msgs = copies;
			rep[r].secs = (double)copies * (double)size / (rep[r].mbps * 1e6);
		}
		qsort(rep, opt->reps, sizeof(rep[0]), cmp_rep);
		med = &rep[opt->reps / 2];
		printf("memcpy size=%zu reps=%u copies=%" PRIu64 " secs=%.3f MB/s=%.1f min=%.1f max=%.1f\n", size,
		       opt->reps, med->msgs, med->secs, med->mbps, rep[0].mbps, rep[opt->reps - 1].mbps);
		free(src);
		free(dst);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Command line                                                         */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: softdoca_perf --server [--port P] [--serve progress|block] [-d IBDEV]\n"
		"       softdoca_perf --client HOST [--port P] [-d IBDEV] [--tests LIST] [--sizes LIST]\n"
		"                     [--time SEC] [--reps N] [--window N] [--lat-iters N] [--lat-warmup N]\n"
		"                     [--conns N] [--alloc-size S] [--conns-size S] [--ranges N]\n"
		"       softdoca_perf --memcpy [--sizes LIST] [--time SEC] [--reps N]\n"
		"  tests: write_bw,read_bw,write_alloc,conns_bw,write_lat (default " DEFAULT_TESTS ");\n"
		"  sizes default " DEFAULT_SIZES "\n"
		"  --time: seconds per measurement (default %.1f), --reps: measurements per size,\n"
		"  the median is reported (default 1); --window: tasks in flight per connection\n"
		"  (default 32 up to 64K, 16 up to 1M, 4 above); --conns: connections of the context\n"
		"  (default 1, at most %u; conns_bw compares 1 with all); --alloc-size: write_alloc's size\n"
		"  (default 1K); --conns-size: conns_bw's size (default 64K); --ranges: remote ranges the\n"
		"  tasks take in turn (default 1, as ucx_perftest); device default " DEFAULT_DEVICE
		", port %d\n",
		DEFAULT_TIME_S, MAX_CONNS, DEFAULT_PORT);
}

static int parse_tests(const char *s, struct options *opt)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int rc = 0;

	if (copy == NULL)
		return -1;
	memset(opt->tests, 0, sizeof(opt->tests));
	for (tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0; tok = strtok_r(NULL, ",", &save)) {
		size_t k;

		for (k = 0; k < sizeof(test_names) / sizeof(test_names[0]); k++)
			if (strcmp(tok, test_names[k]) == 0)
				break;
		if (k == sizeof(test_names) / sizeof(test_names[0]))
			rc = fail("unknown test %s (write_bw, read_bw, write_alloc, conns_bw, write_lat)", tok);
		else
			opt->tests[k] = true;
	}
	free(copy);
	return rc;
}

static int parse_sizes(const char *s, struct options *opt)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int rc = 0;

	if (copy == NULL)
		return -1;
	opt->num_sizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0; tok = strtok_r(NULL, ",", &save)) {
		if (opt->num_sizes == MAX_SIZES)
			rc = fail("at most %u sizes", MAX_SIZES);
		else if (parse_size(tok, &opt->sizes[opt->num_sizes]) != 0)
			rc = fail("bad size %s (1 .. 1G, suffixes K M G)", tok);
		else
			opt->num_sizes++;
	}
	free(copy);
	if (rc == 0 && opt->num_sizes == 0)
		rc = fail("no sizes given");
	return rc;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{"server", no_argument, NULL, 'S'},
		{"client", required_argument, NULL, 'C'},
		{"port", required_argument, NULL, 'p'},
		{"device", required_argument, NULL, 'd'},
		{"serve", required_argument, NULL, 'm'},
		{"tests", required_argument, NULL, 't'},
		{"sizes", required_argument, NULL, 's'},
		{"time", required_argument, NULL, 'T'},
		{"window", required_argument, NULL, 'w'},
		{"ranges", required_argument, NULL, 'g'},
		{"reps", required_argument, NULL, 'r'},
		{"lat-iters", required_argument, NULL, 'n'},
		{"lat-warmup", required_argument, NULL, 'W'},
		{"conns", required_argument, NULL, 'c'},
		{"alloc-size", required_argument, NULL, 'a'},
		{"conns-size", required_argument, NULL, 'z'},
		{"memcpy", no_argument, NULL, 'M'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int o;
	bool role = false;

	while ((o = getopt_long(argc, argv, "d:p:h", longopts, NULL)) != -1) {
		switch (o) {
		case 'S':
			opt->server = true;
			role = true;
			break;
		case 'C':
			opt->host = optarg;
			role = true;
			break;
		case 'M':
			opt->memcpy_only = true;
			role = true;
			break;
		case 'c':
			if (parse_u32(optarg, 1, MAX_CONNS, &opt->conns) != 0)
				return fail("bad --conns %s (1 .. %u)", optarg, MAX_CONNS);
			break;
		case 'a':
			if (parse_size(optarg, &opt->alloc_size) != 0)
				return fail("bad --alloc-size %s (1 .. 1G, suffixes K M G)", optarg);
			break;
		case 'z':
			if (parse_size(optarg, &opt->conns_size) != 0)
				return fail("bad --conns-size %s (1 .. 1G, suffixes K M G)", optarg);
			break;
		case 'p':
			opt->port = optarg;
			break;
		case 'd':
			opt->device = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "progress") == 0)
				opt->serve = SERVE_PROGRESS;
			else if (strcmp(optarg, "block") == 0)
				opt->serve = SERVE_BLOCK;
			else
				return fail("bad --serve %s (progress, block)", optarg);
			break;
		case 't':
			if (parse_tests(optarg, opt) != 0)
				return -1;
			break;
		case 's':
			if (parse_sizes(optarg, opt) != 0)
				return -1;
			break;
		case 'T': {
			char *end;

			opt->time_s = strtod(optarg, &end);
			if (*end != '\0' || !(opt->time_s >= 0.01 && opt->time_s <= 600))
				return fail("bad --time %s (0.01 .. 600 seconds)", optarg);
			break;
		}
		case 'w':
			if (parse_u32(optarg, 1, MAX_WINDOW, &opt->window) != 0)
				return fail("bad --window %s (1 .. %u)", optarg, MAX_WINDOW);
			break;
		case 'g':
			if (parse_u32(optarg, 1, MAX_WINDOW, &opt->ranges) != 0)
				return fail("bad --ranges %s (1 .. %u)", optarg, MAX_WINDOW);
			break;
		case 'r':
			if (parse_u32(optarg, 1, MAX_REPS, &opt->reps) != 0)
				return fail("bad --reps %s (1 .. %u)", optarg, MAX_REPS);
			break;
		case 'n':
			if (parse_u32(optarg, 1, 100000000u, &opt->lat_iters) != 0)
				return fail("bad --lat-iters %s", optarg);
			break;
		case 'W':
			if (parse_u32(optarg, 0, 100000000u, &opt->lat_warmup) != 0)
				return fail("bad --lat-warmup %s", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (!role || (int)opt->server + (opt->host != NULL) + (int)opt->memcpy_only != 1 || optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options opt = {
		.port = NULL,
		.device = DEFAULT_DEVICE,
		.serve = SERVE_PROGRESS,
		.time_s = DEFAULT_TIME_S,
		.ranges = 1,
		.reps = 1,
		.lat_iters = DEFAULT_LAT_ITERS,
		.lat_warmup = DEFAULT_LAT_WARMUP,
		.conns = 1,
		.alloc_size = DEFAULT_ALLOC_SIZE,
		.conns_size = DEFAULT_CONNS_SIZE,
	};
	static char default_port[16];
	struct perf p;
	struct doca_log_backend *sdk_log = NULL;
	int rc;

	snprintf(default_port, sizeof(default_port), "%d", DEFAULT_PORT);
	opt.port = default_port;
	if (parse_tests(DEFAULT_TESTS, &opt) != 0 || parse_sizes(DEFAULT_SIZES, &opt) != 0)
		return 2;
	if (parse_options(argc, argv, &opt) != 0)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (opt.memcpy_only)
		return memcpy_main(&opt) == 0 ? 0 : 1;
	memset(&p, 0, sizeof(p));
	p.num_conns = opt.conns;
	p.opt = &opt;
	p.sock = -1;
	p.d.state = DOCA_CTX_STATE_IDLE;
	signal(SIGPIPE, SIG_IGN);
	/* Library warnings and errors go to stderr. */
	if (doca_log_backend_create_with_file_sdk(stderr, &sdk_log) == DOCA_SUCCESS)
		(void)doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);

	rc = opt.server ? server_main(&p) : client_main(&p);
	teardown(&p);
	if (p.sock >= 0)
		close(p.sock);
	return rc == 0 ? 0 : 1;
}
