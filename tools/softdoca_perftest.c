/*
 * softdoca_perftest — the perftest command line and result tables
 * (ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw and their _lat
 * variants) over DOCA RDMA, through the public API only, so scripts
 * written for perftest's output parse softdoca's numbers.
 *
 *   softdoca_perftest TEST [flags]          server (no address)
 *   softdoca_perftest TEST [flags] SERVER   client
 *   ib_write_bw [flags] [SERVER]            the same, TEST taken from the
 *                                           program name (a symlink)
 *
 * TEST is write_bw, read_bw, send_bw, atomic_bw, write_lat, read_lat,
 * send_lat or atomic_lat (an "ib_" prefix is accepted). Flags, as
 * perftest spells them: -d/--ib-dev, -x/--gid-index, -s/--size, -a/--all
 * (sizes 2 .. 2^23), -n/--iters, -D/--duration, -q/--qp, -p/--port
 * (default 18515), --report_gbits, -A/--atomic_type CMP_AND_SWAP|
 * FETCH_AND_ADD, -c RC, -i 1, -F (accepted, nothing to do), -h. A bad
 * flag prints a message and exits 1, as perftest does.
 *
 * Only the client measures and prints the table; the server prints the
 * test banner, serves (progressing its PE; for send tests it keeps
 * receives posted) until the client is done, and prints the closing line.
 *
 * Units are perftest's: MB/sec is 2^20 bytes per second, Gb/sec (with
 * --report_gbits) 10^9 bits per second, MsgRate 10^6 completions per
 * second; -n counts on each connection (-q) and #iterations shows -n. BW average is over the whole run (first submit to last
 * completion), BW peak the best rate over slices of the run. A latency
 * sample is one operation from doca_task_submit until its completion
 * callback ran (the initiator's view, as ib_read_lat and ib_atomic_lat
 * measure; perftest's write_lat and send_lat halve a ping-pong round
 * trip instead, so ours are not comparable one to one there).
 *
 * Out of band (perf_common's frames over TCP): the client sends 'H'
 * (magic, version, verb, shape, connections) and 'L' (the region length
 * it needs the server to export), both sides
 * swap one 'C' connection descriptor per connection, the server sends its
 * mmap descriptor 'M'; the client sends 'D' when done.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

#define PT_DEFAULT_PORT "18515"
#define PT_DEFAULT_DEVICE "soft_lo"
#define PT_DEFAULT_BW_SIZE 65536u
#define PT_DEFAULT_LAT_SIZE 2u
#define PT_ATOMIC_SIZE 8u
#define PT_DEFAULT_BW_ITERS 5000u
#define PT_DEFAULT_LAT_ITERS 1000u
#define PT_MIN_ITERS 5u
#define PT_MAX_ITERS 100000000u
#define PT_MAX_DURATION 3600u
#define PT_ALL_MIN_LOG2 1u  /* -a: 2 bytes .. */
#define PT_ALL_MAX_LOG2 23u /* .. 8 MiB */
#define PT_MAX_SIZE (1ull << 30)
#define PT_MAX_QPS 16u
#define PT_MAX_SLOTS 256u  /* tasks in flight */
#define PT_RECVS 256u      /* receives a send-test server keeps posted */
#define PT_WARMUP_OPS 64u
#define PT_PEAK_SLICES 16u /* BW peak: the best of this many slices of a run */
#define PT_HELLO_MAGIC 0x53445054u /* "SDPT" */
#define PT_HELLO_VERSION 1u
#define PT_HELLO_LEN 24u
#define PT_STALL_S 20.0    /* no completion for this long: give up */
#define PT_STOP_WAIT_S 10.0
#define PT_POLL_EVERY 1024u

/* 87 dashes, perftest's separator. */
#define PT_LINE "---------------------------------------------------------------------------------------"

enum pt_verb { PT_WRITE, PT_READ, PT_SEND, PT_ATOMIC };
enum pt_shape { PT_BW, PT_LAT };
enum pt_atomic { PT_FETCH_ADD, PT_CMP_SWAP };

struct pt_test {
	const char *name;
	enum pt_verb verb;
	enum pt_shape shape;
};

static const struct pt_test pt_tests[] = {
	{"write_bw", PT_WRITE, PT_BW},   {"read_bw", PT_READ, PT_BW},     {"send_bw", PT_SEND, PT_BW},
	{"atomic_bw", PT_ATOMIC, PT_BW}, {"write_lat", PT_WRITE, PT_LAT}, {"read_lat", PT_READ, PT_LAT},
	{"send_lat", PT_SEND, PT_LAT},   {"atomic_lat", PT_ATOMIC, PT_LAT},
};

struct pt_opts {
	const struct pt_test *test;
	const char *device;
	const char *port;
	const char *server; /* NULL: we are the server */
	int gid_index;      /* -1: not given */
	size_t size;
	bool size_set;
	bool all;
	uint32_t iters;
	uint32_t duration; /* seconds; 0: by iterations */
	uint32_t qps;
	bool gbits;
	enum pt_atomic atomic;
};

/* One task in flight and its bufs. */
struct pt_slot {
	struct pt *pt;
	struct doca_rdma_connection *conn;
	struct doca_task *task;
	struct doca_buf *local;  /* source, destination or atomic result */
	struct doca_buf *remote; /* NULL for send and receive */
};

/* The measurement that is running. */
struct pt_run {
	size_t size;
	uint64_t target;    /* completions wanted (iteration mode) */
	uint64_t end_ns;    /* resubmit until then (duration mode), else 0 */
	uint64_t posted;
	uint64_t completed;
	uint32_t inflight;
	uint64_t slice;     /* completions per peak slice */
	uint64_t slice_t0;
	double peak_bps;
	doca_error_t error;
};

struct pt {
	const struct pt_opts *opt;
	enum pt_verb verb; /* the client's, on the server too */
	int sock;
	struct perf_doca d; /* DOCA objects and our memory */
	struct doca_rdma_connection *conns[PT_MAX_QPS];
	uint32_t num_conns;
	bool conn_failed;
	bool stopping;
	uint8_t *raddr;
	size_t rlen;
	struct pt_run run;
	struct pt_slot slots[PT_MAX_SLOTS];
	struct pt_slot recvs[PT_RECVS];
	uint32_t recv_errors;
};

/* ------------------------------------------------------------------ */
/* Task completions                                                     */

/* The next operation of a slot: reset what the last one filled. */
static doca_error_t pt_slot_submit(struct pt_slot *s)
{
	if (s->pt->verb == PT_READ || s->pt->verb == PT_ATOMIC)
		(void)doca_buf_reset_data_len(s->local);
	return doca_task_submit(s->task);
}

static bool pt_run_wants_more(const struct pt_run *r)
{
	if (r->error != DOCA_SUCCESS)
		return false;
	if (r->end_ns != 0)
		return now_ns() < r->end_ns;
	return r->posted < r->target;
}

/* Peak: the rate of each slice of completions, the best kept. */
static void pt_run_slice(struct pt_run *r)
{
	uint64_t t;

	if (r->slice == 0 || r->completed % r->slice != 0)
		return;
	t = now_ns();
	if (t > r->slice_t0) {
		double bps = (double)r->slice * (double)r->size * 1e9 / (double)(t - r->slice_t0);

		if (bps > r->peak_bps)
			r->peak_bps = bps;
	}
	r->slice_t0 = t;
}

static void pt_task_ok(struct pt_slot *s)
{
	struct pt_run *r = &s->pt->run;
	doca_error_t err;

	r->completed++;
	pt_run_slice(r);
	if (!pt_run_wants_more(r)) {
		r->inflight--;
		return;
	}
	err = pt_slot_submit(s);
	if (err != DOCA_SUCCESS) {
		r->inflight--;
		r->error = err;
		return;
	}
	r->posted++;
}

static void pt_task_err(struct pt_slot *s, struct doca_task *task)
{
	struct pt_run *r = &s->pt->run;

	r->inflight--;
	if (r->error == DOCA_SUCCESS)
		r->error = doca_task_get_status(task);
}

/* One pair of callbacks per task type, all landing in pt_task_ok/err. */
#define PT_CALLBACKS(short_name, type)                                                                    \
	static void short_name##_ok_cb(struct type *t, union doca_data ud, union doca_data cd)            \
	{                                                                                                 \
		(void)t;                                                                                  \
		(void)cd;                                                                                 \
		pt_task_ok(ud.ptr);                                                                       \
	}                                                                                                 \
	static void short_name##_err_cb(struct type *t, union doca_data ud, union doca_data cd)           \
	{                                                                                                 \
		(void)cd;                                                                                 \
		pt_task_err(ud.ptr, type##_as_task(t));                                                   \
	}

PT_CALLBACKS(write, doca_rdma_task_write)
PT_CALLBACKS(read, doca_rdma_task_read)
PT_CALLBACKS(send, doca_rdma_task_send)
PT_CALLBACKS(fadd, doca_rdma_task_atomic_fetch_add)
PT_CALLBACKS(cswap, doca_rdma_task_atomic_cmp_swp)

/* Give back a slot's task and bufs (whatever part it has). */
static void pt_slot_release(struct pt_slot *s)
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

/* Server, send tests: a receive came; post it again at once. */
static void recv_ok_cb(struct doca_rdma_task_receive *t, union doca_data ud, union doca_data cd)
{
	struct pt_slot *s = ud.ptr;

	(void)t;
	(void)cd;
	if (s->pt->stopping) {
		pt_slot_release(s);
		return;
	}
	(void)doca_buf_reset_data_len(s->local);
	if (doca_task_submit(s->task) != DOCA_SUCCESS && s->pt->recv_errors++ == 0)
		fail("a receive could not be posted again");
}

/* Stopping flushes the posted receives; anything else is worth a line. */
static void recv_err_cb(struct doca_rdma_task_receive *t, union doca_data ud, union doca_data cd)
{
	struct pt_slot *s = ud.ptr;

	(void)cd;
	if (!s->pt->stopping && s->pt->recv_errors++ == 0)
		fail("a receive failed: %s",
		     doca_error_get_name(doca_task_get_status(doca_rdma_task_receive_as_task(t))));
	pt_slot_release(s);
}

/* ------------------------------------------------------------------ */
/* Context and connections                                              */

static void pt_state_cb(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
			enum doca_ctx_states next)
{
	struct pt *p = ud.ptr;

	(void)ctx;
	(void)prev;
	p->d.state = next;
}

static void pt_conn_request_cb(struct doca_rdma_connection *conn, union doca_data cd)
{
	(void)cd;
	(void)doca_rdma_connection_reject(conn);
}

/* Required by doca_rdma_set_connection_state_callbacks; DOCA calls it for
 * RDMA CM connections only, and this tool connects by export/connect. */
static void pt_conn_established_cb(struct doca_rdma_connection *conn, union doca_data ud, union doca_data cd)
{
	(void)conn;
	(void)ud;
	(void)cd;
}

static void pt_conn_failure_cb(struct doca_rdma_connection *conn, union doca_data ud, union doca_data cd)
{
	struct pt *p = cd.ptr;

	(void)conn;
	(void)ud;
	p->conn_failed = true;
}

/* Task pools and callbacks of every verb (the server learns the verb
 * from the hello, the pools cost little). */
static int pt_set_tasks(struct pt *p)
{
	CHECK(doca_rdma_set_send_queue_size(p->d.rdma, PT_MAX_SLOTS));
	CHECK(doca_rdma_task_write_set_conf(p->d.rdma, write_ok_cb, write_err_cb, PT_MAX_SLOTS));
	CHECK(doca_rdma_task_read_set_conf(p->d.rdma, read_ok_cb, read_err_cb, PT_MAX_SLOTS));
	CHECK(doca_rdma_task_send_set_conf(p->d.rdma, send_ok_cb, send_err_cb, PT_MAX_SLOTS));
	CHECK(doca_rdma_task_receive_set_conf(p->d.rdma, recv_ok_cb, recv_err_cb, PT_RECVS));
	CHECK(doca_rdma_task_atomic_fetch_add_set_conf(p->d.rdma, fadd_ok_cb, fadd_err_cb, PT_MAX_SLOTS));
	CHECK(doca_rdma_task_atomic_cmp_swp_set_conf(p->d.rdma, cswap_ok_cb, cswap_err_cb, PT_MAX_SLOTS));
	return 0;
}

static int pt_setup(struct pt *p, size_t region_len)
{
	const uint32_t perms = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
			       DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC;
	union doca_data ud = {.ptr = p};
	doca_error_t err;

	if (perf_doca_open(&p->d, p->opt->device, region_len, 0, perms, 2 * PT_MAX_SLOTS + PT_RECVS + 8) != 0)
		return -1;
	CHECK(doca_rdma_set_max_num_connections(p->d.rdma, (uint16_t)p->num_conns));
	if (pt_set_tasks(p) != 0)
		return -1;
	CHECK(doca_rdma_set_connection_state_callbacks(p->d.rdma, pt_conn_request_cb, pt_conn_established_cb,
						       pt_conn_failure_cb, pt_conn_failure_cb));
	CHECK(doca_ctx_set_user_data(p->d.ctx, ud));
	CHECK(doca_ctx_set_state_changed_cb(p->d.ctx, pt_state_cb));
	CHECK(doca_pe_connect_ctx(p->d.pe, p->d.ctx));
	err = doca_ctx_start(p->d.ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		return fail("doca_ctx_start returned %s", doca_error_get_name(err));
	return perf_doca_wait_state(&p->d, DOCA_CTX_STATE_RUNNING, PT_STALL_S);
}

static void pt_teardown(struct pt *p)
{
	p->stopping = true;
	perf_doca_stop(&p->d, PT_STOP_WAIT_S);
	/* Tasks go back only once the context no longer owns them. */
	for (uint32_t i = 0; i < PT_RECVS && p->d.state == DOCA_CTX_STATE_IDLE; i++)
		pt_slot_release(&p->recvs[i]);
	for (uint32_t i = 0; i < PT_MAX_SLOTS && p->d.state == DOCA_CTX_STATE_IDLE; i++)
		pt_slot_release(&p->slots[i]);
	perf_doca_release(&p->d);
}

/* Swap connection descriptors, one per connection, and connect. */
static int pt_exchange_conns(struct pt *p)
{
	for (uint32_t i = 0; i < p->num_conns; i++) {
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
			return fail("doca_rdma_connect of connection %u returned %s", i, doca_error_get_name(err));
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */

static const char *pt_title(const struct pt_opts *opt, char *buf, size_t len)
{
	static const char *const verbs[] = {"RDMA_Write", "RDMA_Read", "Send", "Atomic"};
	const char *shape = opt->test->shape == PT_BW ? "BW" : "Latency";

	if (opt->test->verb == PT_ATOMIC)
		snprintf(buf, len, "Atomic %s %s Test", opt->atomic == PT_CMP_SWAP ? "CMP_AND_SWAP" : "FETCH_AND_ADD",
			 shape);
	else
		snprintf(buf, len, "%s %s Test", verbs[opt->test->verb], shape);
	return buf;
}

static void pt_print_banner(const struct pt_opts *opt)
{
	char title[64];

	printf("%s\n", PT_LINE);
	printf("%*s%s\n", 20, "", pt_title(opt, title, sizeof(title)));
	printf(" softdoca %s | device %s | connections (qps) %u | RC over UCX", opt->server ? "client" : "server",
	       opt->device, opt->qps);
	if (opt->gid_index >= 0)
		printf(" | gid index %d", opt->gid_index);
	if (opt->duration > 0)
		printf(" | duration %u s\n", opt->duration);
	else
		printf(" | iterations %u\n", opt->iters);
}

static void pt_print_header(const struct pt_opts *opt)
{
	printf("%s\n", PT_LINE);
	if (opt->test->shape == PT_BW)
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
		       opt->gbits ? "Gb/sec" : "MB/sec", opt->gbits ? "Gb/sec" : "MB/sec");
	else if (opt->duration > 0)
		printf(" #bytes        #iterations       t_avg[usec]    tps average\n");
	else
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
		       "t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]\n");
}

/* Bytes per second in the table's unit. */
static double pt_bw_unit(const struct pt_opts *opt, double bps)
{
	return opt->gbits ? bps * 8.0 / 1e9 : bps / 1048576.0;
}

/* ------------------------------------------------------------------ */
/* Client: measurements                                                 */

static doca_error_t pt_slot_fill(struct pt *p, struct pt_slot *s, uint32_t i, size_t size)
{
	union doca_data ud = {.ptr = s};
	enum pt_verb v = p->verb;
	doca_error_t err;

	s->pt = p;
	s->conn = p->conns[i % p->num_conns];
	if (v == PT_ATOMIC) {
		/* Every slot on the same remote word; results side by side. */
		err = doca_buf_inventory_buf_get_by_addr(p->d.inv, p->d.lmmap, p->d.region + (size_t)i * 8, 8, &s->local);
		if (err == DOCA_SUCCESS)
			err = doca_buf_inventory_buf_get_by_data(p->d.inv, p->d.rmmap, p->raddr, 8, &s->remote);
	} else if (v == PT_READ) {
		err = doca_buf_inventory_buf_get_by_addr(p->d.inv, p->d.lmmap, p->d.region, size, &s->local);
		if (err == DOCA_SUCCESS)
			err = doca_buf_inventory_buf_get_by_data(p->d.inv, p->d.rmmap, p->raddr, size, &s->remote);
	} else {
		err = doca_buf_inventory_buf_get_by_data(p->d.inv, p->d.lmmap, p->d.region, size, &s->local);
		if (err == DOCA_SUCCESS && v == PT_WRITE)
			err = doca_buf_inventory_buf_get_by_addr(p->d.inv, p->d.rmmap, p->raddr, size, &s->remote);
	}
	if (err != DOCA_SUCCESS)
		return err;
	switch (v) {
	case PT_WRITE: {
		struct doca_rdma_task_write *t;

		err = doca_rdma_task_write_allocate_init(p->d.rdma, s->conn, s->local, s->remote, ud, &t);
		s->task = err == DOCA_SUCCESS ? doca_rdma_task_write_as_task(t) : NULL;
		break;
	}
	case PT_READ: {
		struct doca_rdma_task_read *t;

		err = doca_rdma_task_read_allocate_init(p->d.rdma, s->conn, s->remote, s->local, ud, &t);
		s->task = err == DOCA_SUCCESS ? doca_rdma_task_read_as_task(t) : NULL;
		break;
	}
	case PT_SEND: {
		struct doca_rdma_task_send *t;

		err = doca_rdma_task_send_allocate_init(p->d.rdma, s->conn, s->local, ud, &t);
		s->task = err == DOCA_SUCCESS ? doca_rdma_task_send_as_task(t) : NULL;
		break;
	}
	case PT_ATOMIC:
		if (p->opt->atomic == PT_CMP_SWAP) {
			struct doca_rdma_task_atomic_cmp_swp *t;

			err = doca_rdma_task_atomic_cmp_swp_allocate_init(p->d.rdma, s->conn, s->remote, s->local, 0, 0,
									  ud, &t);
			s->task = err == DOCA_SUCCESS ? doca_rdma_task_atomic_cmp_swp_as_task(t) : NULL;
		} else {
			struct doca_rdma_task_atomic_fetch_add *t;

			err = doca_rdma_task_atomic_fetch_add_allocate_init(p->d.rdma, s->conn, s->remote, s->local, 1,
									    ud, &t);
			s->task = err == DOCA_SUCCESS ? doca_rdma_task_atomic_fetch_add_as_task(t) : NULL;
		}
		break;
	}
	return err;
}

static int pt_slots_create(struct pt *p, uint32_t n, size_t size)
{
	for (uint32_t i = 0; i < n; i++) {
		doca_error_t err = pt_slot_fill(p, &p->slots[i], i, size);

		if (err != DOCA_SUCCESS)
			return fail("a %zu-byte task could not be prepared: %s (%s)", size, doca_error_get_name(err),
				    doca_error_get_descr(err));
	}
	return 0;
}

static void pt_slots_destroy(struct pt *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		pt_slot_release(&p->slots[i]);
}

/* Progress until nothing is in flight; a completion must come at least
 * every PT_STALL_S or the peer is gone. */
static int pt_run_drain(struct pt *p)
{
	uint64_t seen = p->run.completed;
	double last = now_s();

	for (uint32_t spins = 1; p->run.inflight > 0; spins++) {
		(void)doca_pe_progress(p->d.pe);
		if (spins % 1024 != 0)
			continue;
		if (p->run.completed != seen) {
			seen = p->run.completed;
			last = now_s();
		} else if (now_s() - last > PT_STALL_S) {
			return fail("no completion for %.0f s with %u tasks in flight%s", PT_STALL_S, p->run.inflight,
				    p->conn_failed ? " (the connection failed)" : "");
		}
	}
	if (p->run.error != DOCA_SUCCESS)
		return fail("size %zu: a task failed with %s (%s)", p->run.size, doca_error_get_name(p->run.error),
			    doca_error_get_descr(p->run.error));
	return 0;
}

/* One run of the slots: iterations completions, or duration seconds. */
static int pt_bw_run(struct pt *p, uint32_t n, size_t size, uint64_t iterations, uint32_t duration, double *secs)
{
	struct pt_run *r = &p->run;
	uint64_t t0;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->error = DOCA_SUCCESS;
	r->target = iterations;
	t0 = now_ns();
	r->end_ns = duration > 0 ? t0 + (uint64_t)duration * 1000000000ull : 0;
	/* A slice spans several windows: completions come in bursts. */
	r->slice = duration > 0 ? 4096 : iterations / PT_PEAK_SLICES;
	if (r->slice < 4 * (uint64_t)n)
		r->slice = 4 * (uint64_t)n;
	r->slice_t0 = t0;
	for (uint32_t i = 0; i < n && pt_run_wants_more(r); i++) {
		doca_error_t err = pt_slot_submit(&p->slots[i]);

		if (err != DOCA_SUCCESS) {
			r->error = err;
			break;
		}
		r->posted++;
		r->inflight++;
	}
	if (pt_run_drain(p) != 0)
		return -1;
	*secs = (double)(now_ns() - t0) / 1e9;
	return 0;
}

/* Tasks in flight: many small ones, fewer large ones, at least one per
 * connection, never more than the iterations. */
static uint32_t pt_window(const struct pt_opts *opt, size_t size)
{
	uint32_t w = size <= 65536 ? 64 : 16;

	if (w < opt->qps)
		w = opt->qps;
	if (opt->duration == 0 && w > opt->iters * opt->qps)
		w = opt->iters * opt->qps;
	return w;
}

static int pt_measure_bw(struct pt *p, size_t size)
{
	const struct pt_opts *opt = p->opt;
	uint32_t n = pt_window(opt, size);
	double secs = 0, bps;
	int rc = -1;

	if (pt_slots_create(p, n, size) != 0)
		goto out;
	if (pt_bw_run(p, n, size, PT_WARMUP_OPS, 0, &secs) != 0)
		goto out;
	/* As perftest: -n iterations on each connection, and the column
	 * says -n; with -D it says how many completed. */
	if (pt_bw_run(p, n, size, (uint64_t)opt->iters * opt->qps, opt->duration, &secs) != 0)
		goto out;
	bps = (double)p->run.completed * (double)size / secs;
	if (p->run.peak_bps < bps)
		p->run.peak_bps = bps;
	printf(" %-10zu %-14" PRIu64 " %-18.2f %-20.2f %.6f\n", size,
	       opt->duration > 0 ? p->run.completed : p->run.completed / opt->qps,
	       pt_bw_unit(opt, p->run.peak_bps), pt_bw_unit(opt, bps), (double)p->run.completed / secs / 1e6);
	rc = 0;
out:
	if (p->run.inflight == 0)
		pt_slots_destroy(p, n);
	return rc;
}

static int pt_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One operation: submit, progress until its callback ran; ns, or 0. */
static uint64_t pt_lat_once(struct pt *p)
{
	struct pt_run *r = &p->run;
	uint64_t t0, done = r->completed;
	doca_error_t err;

	t0 = now_ns();
	err = pt_slot_submit(&p->slots[0]);
	if (err != DOCA_SUCCESS) {
		r->error = err;
		return 0;
	}
	r->inflight = 1;
	for (uint32_t spins = 1; r->completed == done && r->inflight > 0; spins++) {
		(void)doca_pe_progress(p->d.pe);
		if (spins % 4096 == 0 && now_ns() - t0 > (uint64_t)(PT_STALL_S * 1e9)) {
			fail("no completion %.0f s after submit", PT_STALL_S);
			return 0;
		}
	}
	if (r->error != DOCA_SUCCESS)
		return 0;
	return now_ns() - t0;
}

static void pt_print_lat(size_t size, uint64_t *ns, uint32_t n)
{
	double sum = 0, var = 0, avg;

	qsort(ns, n, sizeof(*ns), pt_cmp_u64);
	for (uint32_t i = 0; i < n; i++)
		sum += (double)ns[i];
	avg = sum / n;
	for (uint32_t i = 0; i < n; i++)
		var += ((double)ns[i] - avg) * ((double)ns[i] - avg);
	printf(" %-7zu %-11u %-14.2f %-14.2f %-16.2f %-14.2f %-15.2f %-22.2f %.2f\n", size, n, ns[0] / 1e3,
	       ns[n - 1] / 1e3, ns[n / 2] / 1e3, avg / 1e3, sqrt(var / n) / 1e3,
	       ns[(uint64_t)n * 99 / 100] / 1e3, ns[(uint64_t)n * 999 / 1000] / 1e3);
}

static int pt_measure_lat(struct pt *p, size_t size)
{
	const struct pt_opts *opt = p->opt;
	uint64_t *ns = NULL, sum = 0, t, end;
	uint32_t n = 0;
	int rc = -1;

	memset(&p->run, 0, sizeof(p->run));
	p->run.size = size;
	p->run.error = DOCA_SUCCESS;
	if (pt_slots_create(p, 1, size) != 0)
		goto out;
	for (uint32_t i = 0; i < PT_WARMUP_OPS / 4; i++)
		if (pt_lat_once(p) == 0)
			goto fail_op;
	if (opt->duration > 0) {
		end = now_ns() + (uint64_t)opt->duration * 1000000000ull;
		while (now_ns() < end) {
			if ((t = pt_lat_once(p)) == 0)
				goto fail_op;
			sum += t;
			n++;
		}
		printf(" %-13zu %-17u %-14.2f %.2f\n", size, n, (double)sum / n / 1e3, n / (double)opt->duration);
		rc = 0;
		goto out;
	}
	ns = calloc(opt->iters, sizeof(*ns));
	if (ns == NULL) {
		fail("out of memory");
		goto out;
	}
	for (n = 0; n < opt->iters; n++)
		if ((ns[n] = pt_lat_once(p)) == 0)
			goto fail_op;
	pt_print_lat(size, ns, n);
	rc = 0;
	goto out;
fail_op:
	if (p->run.error != DOCA_SUCCESS)
		fail("size %zu: a task failed with %s (%s)", size, doca_error_get_name(p->run.error),
		     doca_error_get_descr(p->run.error));
out:
	if (p->run.inflight == 0)
		pt_slots_destroy(p, 1);
	free(ns);
	return rc;
}

static size_t pt_max_size(const struct pt_opts *opt)
{
	if (opt->test->verb == PT_ATOMIC)
		return PT_MAX_SLOTS * 8;
	return opt->all ? (size_t)1 << PT_ALL_MAX_LOG2 : opt->size;
}

static int pt_client_connect(struct pt *p)
{
	const struct pt_opts *opt = p->opt;
	uint8_t hello[PT_HELLO_LEN], *mdesc;
	size_t mlen, len = pt_max_size(opt);
	void *addr = NULL;
	doca_error_t err;

	p->sock = oob_connect(opt->server, opt->port);
	if (p->sock < 0)
		return -1;
	put_be32(hello, PT_HELLO_MAGIC);
	put_be32(hello + 4, PT_HELLO_VERSION);
	put_be32(hello + 8, (uint32_t)opt->test->verb);
	put_be32(hello + 12, (uint32_t)opt->test->shape);
	put_be32(hello + 16, 0); /* reserved */
	put_be32(hello + 20, opt->qps);
	if (oob_send(p->sock, 'H', hello, sizeof(hello)) != 0)
		return -1;
	put_be64(hello, len);
	if (oob_send(p->sock, 'L', hello, 8) != 0)
		return -1;
	if (pt_setup(p, len) != 0 || pt_exchange_conns(p) != 0)
		return -1;
	if (oob_expect(p->sock, 'M', "its mmap descriptor", &mdesc, &mlen) != 0)
		return -1;
	err = doca_mmap_create_from_export(NULL, mdesc, mlen, p->d.dev, &p->d.rmmap);
	free(mdesc);
	if (err != DOCA_SUCCESS)
		return fail("doca_mmap_create_from_export of the server's descriptor returned %s",
			    doca_error_get_name(err));
	CHECK(doca_mmap_get_memrange(p->d.rmmap, &addr, &p->rlen));
	if (p->rlen < len)
		return fail("the server exported %zu bytes, %zu asked", p->rlen, len);
	p->raddr = addr;
	/* No wait for the links: doca_rdma_connect gives no event (DOCA calls
	 * the established callback for RDMA CM only), and tasks submitted
	 * meanwhile wait for the link; the warm-up operations absorb that,
	 * and a link that never comes up fails the run in bounded time. */
	return 0;
}

static int pt_client_main(struct pt *p)
{
	const struct pt_opts *opt = p->opt;
	uint32_t lo = 0, hi = 0;
	int rc = 0;

	if (pt_client_connect(p) != 0)
		return -1;
	pt_print_header(opt);
	if (opt->all && opt->test->verb != PT_ATOMIC) {
		lo = PT_ALL_MIN_LOG2;
		hi = PT_ALL_MAX_LOG2;
	}
	for (uint32_t e = lo; e <= hi && rc == 0; e++) {
		size_t size = lo == 0 ? opt->size : (size_t)1 << e;

		rc = opt->test->shape == PT_BW ? pt_measure_bw(p, size) : pt_measure_lat(p, size);
	}
	printf("%s\n", PT_LINE);
	if (oob_send(p->sock, 'D', NULL, 0) != 0)
		rc = -1;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Server                                                               */

/* Send tests: every receive posted before the client may send. */
static int pt_post_receives(struct pt *p)
{
	for (uint32_t i = 0; i < PT_RECVS; i++) {
		struct pt_slot *s = &p->recvs[i];
		union doca_data ud = {.ptr = s};
		struct doca_rdma_task_receive *t;

		s->pt = p;
		CHECK(doca_buf_inventory_buf_get_by_addr(p->d.inv, p->d.lmmap, p->d.region, p->d.region_len, &s->local));
		CHECK(doca_rdma_task_receive_allocate_init(p->d.rdma, s->local, ud, &t));
		s->task = doca_rdma_task_receive_as_task(t);
		CHECK(doca_task_submit(s->task));
	}
	return 0;
}

/* The client's hello and region length: checked, never trusted. */
static int pt_server_hello(struct pt *p, uint64_t *len)
{
	uint8_t *h, *l;
	size_t hlen, llen;
	uint32_t verb, shape;

	if (oob_expect(p->sock, 'H', "its hello", &h, &hlen) != 0)
		return -1;
	if (hlen != PT_HELLO_LEN || get_be32(h) != PT_HELLO_MAGIC || get_be32(h + 4) != PT_HELLO_VERSION) {
		free(h);
		return fail("the client is not a softdoca_perftest of this version (hello of %zu bytes)", hlen);
	}
	verb = get_be32(h + 8);
	shape = get_be32(h + 12);
	p->num_conns = get_be32(h + 20);
	free(h);
	if (verb != (uint32_t)p->opt->test->verb || shape != (uint32_t)p->opt->test->shape)
		return fail("the client runs another test than this server's %s", p->opt->test->name);
	if (p->num_conns == 0 || p->num_conns > PT_MAX_QPS)
		return fail("the client asks for %u connections (1 .. %u)", p->num_conns, PT_MAX_QPS);
	if (oob_expect(p->sock, 'L', "its region length", &l, &llen) != 0)
		return -1;
	*len = llen == 8 ? get_be64(l) : 0;
	free(l);
	if (*len == 0 || *len > PT_MAX_SIZE)
		return fail("the client asks for a region of %" PRIu64 " bytes (1 .. %llu)", *len, PT_MAX_SIZE);
	return 0;
}

/* Progress until the client says 'D'. */
static int pt_server_serve(struct pt *p)
{
	for (;;) {
		struct pollfd pfd = {.fd = p->sock, .events = POLLIN, .revents = 0};
		uint8_t *payload;
		size_t len;
		char type;
		int r;

		for (uint32_t i = 0; i < PT_POLL_EVERY; i++)
			(void)doca_pe_progress(p->d.pe);
		r = poll(&pfd, 1, 0);
		if (r < 0 && errno != EINTR)
			return fail("poll on the control socket: %s", strerror(errno));
		if (r <= 0)
			continue;
		r = oob_recv_any(p->sock, &type, &payload, &len);
		if (r != 0)
			return r < 0 ? -1 : fail("the client closed the control connection before it was done");
		free(payload);
		if (type != 'D')
			return fail("control socket: unexpected frame 0x%02x", (uint8_t)type);
		return 0;
	}
}

static int pt_server_main(struct pt *p)
{
	const void *mdesc;
	size_t mdesc_len;
	uint64_t len = 0;
	int rc;

	p->sock = oob_listen_accept(p->opt->port, NULL);
	if (p->sock < 0 || pt_server_hello(p, &len) != 0)
		return -1;
	p->verb = p->opt->test->verb;
	if (pt_setup(p, (size_t)len) != 0)
		return -1;
	if (p->verb == PT_SEND && pt_post_receives(p) != 0)
		return -1;
	if (pt_exchange_conns(p) != 0)
		return -1;
	CHECK(doca_mmap_export_rdma(p->d.lmmap, p->d.dev, &mdesc, &mdesc_len));
	if (oob_send(p->sock, 'M', mdesc, mdesc_len) != 0)
		return -1;
	rc = pt_server_serve(p);
	if (rc == 0 && p->recv_errors > 0)
		rc = fail("%u receives failed", p->recv_errors);
	printf("%s\n", PT_LINE);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Command line                                                         */

static void pt_usage(FILE *f)
{
	fprintf(f,
		"usage: softdoca_perftest TEST [options] [SERVER]   (or as ib_<TEST> [options] [SERVER])\n"
		"  TEST: write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat atomic_lat\n"
		"  without SERVER: wait for a client; with it: connect and measure\n"
		"  -d, --ib-dev=DEV        device (default " PT_DEFAULT_DEVICE ")\n"
		"  -x, --gid-index=N       GID index (0 .. 255; softdoca picks the address by device)\n"
		"  -s, --size=BYTES        message size (default 65536 for bw, 2 for lat, 8 for atomic)\n"
		"  -a, --all               sizes 2 .. 2^23\n"
		"  -n, --iters=N           iterations (%u .. %u; default 5000 bw, 1000 lat)\n"
		"  -D, --duration=SEC      run for SEC seconds instead of -n\n"
		"  -q, --qp=N              connections (1 .. %u)\n"
		"  -p, --port=PORT         control port (default " PT_DEFAULT_PORT ")\n"
		"  -A, --atomic_type=T     CMP_AND_SWAP or FETCH_AND_ADD (default)\n"
		"  --report_gbits          bandwidth in Gb/sec\n"
		"  -c RC, -i 1, -F         accepted for perftest's command lines\n",
		PT_MIN_ITERS, PT_MAX_ITERS, PT_MAX_QPS);
}

/* "ib_write_bw", "write_bw", a path to either. */
static const struct pt_test *pt_find_test(const char *s)
{
	const char *base = strrchr(s, '/');

	base = base != NULL ? base + 1 : s;
	if (strncmp(base, "ib_", 3) == 0)
		base += 3;
	for (size_t i = 0; i < sizeof(pt_tests) / sizeof(pt_tests[0]); i++)
		if (strcmp(base, pt_tests[i].name) == 0)
			return &pt_tests[i];
	return NULL;
}

static int pt_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int pt_parse_opt(int o, const char *arg, struct pt_opts *opt)
{
	uint32_t v;

	switch (o) {
	case 'd':
		opt->device = arg;
		return 0;
	case 'x':
		if (pt_parse_u32(arg, 0, 255, &v) != 0)
			return fail("-x %s: a GID index is 0 .. 255", arg);
		opt->gid_index = (int)v;
		return 0;
	case 's': {
		char *end;
		unsigned long long s;

		errno = 0;
		s = strtoull(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || s == 0 || s > PT_MAX_SIZE)
			return fail("-s %s: a size is 1 .. %llu bytes", arg, PT_MAX_SIZE);
		opt->size = (size_t)s;
		opt->size_set = true;
		return 0;
	}
	case 'a':
		opt->all = true;
		return 0;
	case 'n':
		if (pt_parse_u32(arg, PT_MIN_ITERS, PT_MAX_ITERS, &opt->iters) != 0)
			return fail("-n %s: iterations are %u .. %u", arg, PT_MIN_ITERS, PT_MAX_ITERS);
		return 0;
	case 'D':
		if (pt_parse_u32(arg, 1, PT_MAX_DURATION, &opt->duration) != 0)
			return fail("-D %s: a duration is 1 .. %u seconds", arg, PT_MAX_DURATION);
		return 0;
	case 'q':
		if (pt_parse_u32(arg, 1, PT_MAX_QPS, &opt->qps) != 0)
			return fail("-q %s: connections are 1 .. %u", arg, PT_MAX_QPS);
		return 0;
	case 'p':
		if (pt_parse_u32(arg, 1, 65535, &v) != 0)
			return fail("-p %s: a port is 1 .. 65535", arg);
		opt->port = arg;
		return 0;
	case 'A':
		if (strcmp(arg, "CMP_AND_SWAP") == 0)
			opt->atomic = PT_CMP_SWAP;
		else if (strcmp(arg, "FETCH_AND_ADD") == 0)
			opt->atomic = PT_FETCH_ADD;
		else
			return fail("-A %s: CMP_AND_SWAP or FETCH_AND_ADD", arg);
		return 0;
	case 'c':
		return strcmp(arg, "RC") == 0 ? 0 : fail("-c %s: softdoca runs RC only", arg);
	case 'i':
		return strcmp(arg, "1") == 0 ? 0 : fail("-i %s: softdoca devices have port 1 only", arg);
	case 'G':
		opt->gbits = true;
		return 0;
	case 'F':
		return 0;
	default:
		return fail("unknown option (see -h)");
	}
}

/* Sizes and iterations perftest picks when not given, and what cannot
 * go together. */
static int pt_finish_opts(struct pt_opts *opt, bool iters_set)
{
	if (opt->test->verb == PT_ATOMIC) {
		if ((opt->size_set && opt->size != PT_ATOMIC_SIZE) || opt->all)
			return fail("atomic tests move 8 bytes: -s other than 8 and -a do not apply");
		opt->size = PT_ATOMIC_SIZE;
	} else if (!opt->size_set) {
		opt->size = opt->test->shape == PT_BW ? PT_DEFAULT_BW_SIZE : PT_DEFAULT_LAT_SIZE;
	}
	if (!iters_set)
		opt->iters = opt->test->shape == PT_BW ? PT_DEFAULT_BW_ITERS : PT_DEFAULT_LAT_ITERS;
	if (opt->duration > 0 && (iters_set || opt->all))
		return fail("-D runs for a time: it goes with neither -n nor -a");
	if (opt->test->shape == PT_LAT && opt->qps > 1)
		return fail("latency tests use one connection (-q 1)");
	return 0;
}

static int pt_parse(int argc, char **argv, struct pt_opts *opt)
{
	static const struct option longopts[] = {
		{"ib-dev", required_argument, NULL, 'd'},   {"gid-index", required_argument, NULL, 'x'},
		{"size", required_argument, NULL, 's'},     {"all", no_argument, NULL, 'a'},
		{"iters", required_argument, NULL, 'n'},    {"duration", required_argument, NULL, 'D'},
		{"qp", required_argument, NULL, 'q'},       {"port", required_argument, NULL, 'p'},
		{"atomic_type", required_argument, NULL, 'A'}, {"connection", required_argument, NULL, 'c'},
		{"ib-port", required_argument, NULL, 'i'},  {"CPU-freq", no_argument, NULL, 'F'},
		{"report_gbits", no_argument, NULL, 'G'},   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool iters_set = false;
	int o, first = 1;

	opt->test = pt_find_test(argv[0]);
	if (opt->test == NULL && argc > 1 && argv[1][0] != '-') {
		opt->test = pt_find_test(argv[1]);
		if (opt->test == NULL)
			return fail("unknown test %s (write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat "
				    "atomic_lat)", argv[1]);
		first = 2;
	}
	optind = first;
	while ((o = getopt_long(argc, argv, "d:x:s:an:D:q:p:A:c:i:Fh", longopts, NULL)) != -1) {
		if (o == 'h') {
			pt_usage(stdout);
			exit(0);
		}
		if (o == '?' || o == ':')
			return fail("bad command line (see -h)");
		if (o == 'n')
			iters_set = true;
		if (pt_parse_opt(o, optarg, opt) != 0)
			return -1;
	}
	if (opt->test == NULL)
		return fail("which test? give it first (softdoca_perftest write_bw ...) or run as ib_write_bw");
	if (argc - optind > 1)
		return fail("one server address at most, got %s and %s", argv[optind], argv[optind + 1]);
	opt->server = optind < argc ? argv[optind] : NULL;
	return pt_finish_opts(opt, iters_set);
}

int main(int argc, char **argv)
{
	struct pt_opts opt = {.device = PT_DEFAULT_DEVICE, .port = PT_DEFAULT_PORT, .gid_index = -1, .qps = 1};
	struct doca_log_backend *sdk_log = NULL;
	struct pt *p;
	int rc;

	perf_prog_name = "softdoca_perftest";
	if (pt_parse(argc, argv, &opt) != 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (doca_log_backend_create_with_file_sdk(stderr, &sdk_log) == DOCA_SUCCESS)
		(void)doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		fail("out of memory");
		return 1;
	}
	p->opt = &opt;
	p->sock = -1;
	p->num_conns = opt.qps;
	p->verb = opt.test->verb;
	p->d.state = DOCA_CTX_STATE_IDLE;
	pt_print_banner(&opt);
	rc = opt.server != NULL ? pt_client_main(p) : pt_server_main(p);
	pt_teardown(p);
	if (p->sock >= 0)
		close(p->sock);
	free(p);
	return rc == 0 ? 0 : 1;
}
