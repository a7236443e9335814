/*
 * softdoca conformance — a DOCA graph over RDMA and DMA, written the way
 * a DOCA application writes it.
 *
 *   graph_dma_rdma [--device IBDEV] [--rounds N]
 *
 * One process plays two programs, each with its own device open, progress
 * engine and RDMA context, connected by export/connect over the soft
 * device (soft_lo by default). The initiator's graph is "write, then tell
 * the peer":
 *
 *     WRITE(4 KiB) --> SEND("round r") --> WRITE_IMM(256 B, imm = r) --+
 *     SYNC_EVENT_NOTIFY_SET(r + 1) --> SYNC_EVENT_GET ---------------+
 *     READ(4 KiB) ---------------------------------------------------+--> CHECK (user node)
 *     FETCH_ADD(+1) -------------------------------------------------+
 *     DMA memcpy(4 KiB, local) --------------------------------------+
 *
 * The target only posts receives. When the SEND arrives, the bytes of the
 * WRITE before it must already be in its memory (RC order); when the
 * write-with-immediate arrives, its bytes and immediate must be there. The
 * user node checks what the initiator got back (read data, the counter's
 * old value, the sync event's value, the DMA copy). One instance is resubmitted every round with
 * new data; the tasks' own callbacks must never run.
 *
 * Then a failing graph: a WRITE into a region the target exported
 * read-only, followed by a SEND. The write fails, the graph's error
 * callback runs, the write task says why, and the SEND never runs: the
 * next message the target receives is a marker sent afterwards by a plain
 * task.
 *
 * The connection is export/connect: as on hardware (doca_rdma_connect
 * moves the QP to RTS with no event) DOCA calls no established callback
 * for it, RDMA CM connections only; the graph is submitted right after
 * the connects, its first tasks waiting for the connection, and the
 * callback must never run.
 *
 * Exit 0 on success, 1 on a failure (a line says what), 77 when the device
 * is missing.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_graph.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>

#define WAIT_S 30.0
#define BIG 4096
#define MSG 64
#define IMM_LEN 256

/* Target memory: what the initiator writes, reads and adds to. */
struct target_mem {
	uint8_t wdst[BIG];
	uint8_t rsrc[BIG];
	uint8_t imm_dst[IMM_LEN];
	uint64_t counter;
	uint8_t recv[2][MSG];
};

struct initiator_mem {
	uint8_t wsrc[BIG];
	uint8_t rdst[BIG];
	uint8_t dma_dst[BIG];
	uint8_t imm_src[IMM_LEN];
	uint8_t msg[MSG];
	uint64_t old;
	uint64_t ev_set;
	uint64_t ev_got;
};

struct side {
	const char *role;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_rdma_connection *conn;
	enum doca_ctx_states state;
	int established; /* must stay 0: export/connect */
	int failed;
};

static const char *g_device = "soft_lo";
static unsigned int g_rounds = 50;

static struct side A = {.role = "initiator"}, B = {.role = "target"};
static struct target_mem *TM;
static struct initiator_mem *IM;
static uint8_t *g_ro; /* a target region exported read-only */

/* Initiator observations (callbacks run inside doca_pe_progress). */
static int g_task_cb_calls;
static int g_graph_done, g_graph_err;
static unsigned int g_checked;
static uint32_t g_round;

/* Target observations. */
static unsigned int g_sends_ok, g_imms_ok, g_msgs;
static char g_last_msg[MSG];
static int g_recv_bad;
static struct doca_rdma_task_receive *g_recv[2];
static struct doca_buf *g_recv_buf[2];

static int failf(const char *fmt, ...)
{
	va_list ap;

	fputs("graph_dma_rdma: FAIL: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

#define CHECK(call)                                                                                \
	do {                                                                                       \
		doca_error_t err_ = (call);                                                        \
		if (err_ != DOCA_SUCCESS)                                                          \
			return failf("%s:%d: %s returned %s", __FILE__, __LINE__, #call,           \
				     doca_error_get_name(err_));                                   \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t pat(size_t off, uint32_t round, uint32_t salt)
{
	uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)round << 40) ^ ((uint64_t)salt << 20);

	x ^= x >> 29;
	return (uint8_t)(x ^ (x >> 17));
}

static void fill(uint8_t *p, size_t len, uint32_t round, uint32_t salt)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pat(i, round, salt);
}

static bool same(const uint8_t *p, size_t len, uint32_t round, uint32_t salt)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pat(i, round, salt))
			return false;
	return true;
}

/* Progress both programs until cond holds or the deadline passes. */
static int wait_for(bool (*cond)(void), const char *what)
{
	double deadline = now_s() + WAIT_S;

	while (!cond()) {
		if (now_s() > deadline)
			return failf("timed out after %.0f s waiting for %s", WAIT_S, what);
		if ((doca_pe_progress(A.pe) | doca_pe_progress(B.pe)) == 0)
			usleep(50);
	}
	return 0;
}

/* ---- callbacks ---- */

static void state_cb(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	(void)ctx;
	(void)prev;
	((struct side *)ud.ptr)->state = next;
}

static void established_cb(struct doca_rdma_connection *conn, union doca_data cu, union doca_data ctxu)
{
	(void)conn;
	(void)cu;
	((struct side *)ctxu.ptr)->established++;
}

static void conn_failed_cb(struct doca_rdma_connection *conn, union doca_data cu, union doca_data ctxu)
{
	(void)conn;
	(void)cu;
	((struct side *)ctxu.ptr)->failed++;
}

/* The initiator's tasks run only inside graphs (except the marker send):
 * DOCA does not call a graph task's own callbacks. */
#define TASK_CB(name, type)                                                                          \
	static void name(struct type *task, union doca_data tu, union doca_data cu)                  \
	{                                                                                            \
		(void)task;                                                                          \
		(void)cu;                                                                            \
		if (tu.u64 != 0xAAAA)                                                                \
			g_task_cb_calls++;                                                           \
	}
TASK_CB(write_cb, doca_rdma_task_write)
TASK_CB(read_cb, doca_rdma_task_read)
TASK_CB(wimm_cb, doca_rdma_task_write_imm)
TASK_CB(fadd_cb, doca_rdma_task_atomic_fetch_add)
TASK_CB(evset_cb, doca_rdma_task_remote_net_sync_event_notify_set)
TASK_CB(evget_cb, doca_rdma_task_remote_net_sync_event_get)
TASK_CB(dma_cb, doca_dma_task_memcpy)

/* Sends: the marker (user data 0xAAAA) is the one plain task. */
static int marker_done;
static void send_cb(struct doca_rdma_task_send *task, union doca_data tu, union doca_data cu)
{
	(void)cu;
	if (tu.u64 != 0xAAAA) {
		g_task_cb_calls++;
		return;
	}
	marker_done = doca_task_get_status(doca_rdma_task_send_as_task(task)) == DOCA_SUCCESS ? 1 : -1;
}

static void graph_done_cb(struct doca_graph_instance *inst, union doca_data iu, union doca_data gu)
{
	(void)inst;
	(void)iu;
	(void)gu;
	g_graph_done++;
}

static void graph_err_cb(struct doca_graph_instance *inst, union doca_data iu, union doca_data gu)
{
	(void)inst;
	(void)iu;
	(void)gu;
	g_graph_err++;
}

/* The last node: everything the initiator got back for this round. */
static doca_error_t check_node(void *cookie)
{
	(void)cookie;
	if (!same(IM->rdst, BIG, g_round, 2)) {
		fprintf(stderr, "graph_dma_rdma: round %u: read data differ\n", g_round);
		return DOCA_ERROR_BAD_STATE;
	}
	if (memcmp(IM->dma_dst, IM->wsrc, BIG) != 0) {
		fprintf(stderr, "graph_dma_rdma: round %u: DMA copy differs\n", g_round);
		return DOCA_ERROR_BAD_STATE;
	}
	if (IM->old != g_round) {
		fprintf(stderr, "graph_dma_rdma: round %u: fetch-add returned %" PRIu64 "\n", g_round, IM->old);
		return DOCA_ERROR_BAD_STATE;
	}
	if (IM->ev_got != g_round + 1) {
		fprintf(stderr, "graph_dma_rdma: round %u: sync event get returned %" PRIu64 "\n", g_round, IM->ev_got);
		return DOCA_ERROR_BAD_STATE;
	}
	g_checked++;
	return DOCA_SUCCESS;
}

static void repost(int i)
{
	(void)doca_buf_reset_data_len(g_recv_buf[i]);
	if (doca_task_submit(doca_rdma_task_receive_as_task(g_recv[i])) != DOCA_SUCCESS)
		g_recv_bad++;
}

/* Target: at a receive, what came before it on the connection is there. */
static void recv_ok_cb(struct doca_rdma_task_receive *task, union doca_data tu, union doca_data cu)
{
	int i = (int)tu.u64;
	uint32_t len = doca_rdma_task_receive_get_result_len(task);

	(void)cu;
	switch (doca_rdma_task_receive_get_result_opcode(task)) {
	case DOCA_RDMA_OPCODE_RECV_SEND:
		g_msgs++;
		memcpy(g_last_msg, TM->recv[i], len < MSG ? len : MSG - 1);
		g_last_msg[len < MSG ? len : MSG - 1] = '\0';
		if (strncmp(g_last_msg, "round ", 6) == 0) {
			if (strtoul(g_last_msg + 6, NULL, 10) != g_round || !same(TM->wdst, BIG, g_round, 1)) {
				fprintf(stderr, "graph_dma_rdma: round %u: SEND \"%s\" arrived before the write's bytes\n",
					g_round, g_last_msg);
				g_recv_bad++;
			} else {
				g_sends_ok++;
			}
		}
		break;
	case DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM:
		if (ntohl(doca_rdma_task_receive_get_result_immediate_data(task)) != g_round ||
		    !same(TM->imm_dst, IMM_LEN, g_round, 3)) {
			fprintf(stderr, "graph_dma_rdma: round %u: write-with-immediate data or immediate wrong\n", g_round);
			g_recv_bad++;
		} else {
			g_imms_ok++;
		}
		break;
	default:
		g_recv_bad++;
	}
	repost(i);
}

static void recv_err_cb(struct doca_rdma_task_receive *task, union doca_data tu, union doca_data cu)
{
	(void)cu;
	/* Flushed by the target's stop: the context reaches idle once its
	 * tasks are freed. */
	doca_task_free(doca_rdma_task_receive_as_task(task));
	g_recv[tu.u64 & 1] = NULL;
}

/* ---- setup ---- */

static int open_device(struct side *s)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t err = DOCA_ERROR_NOT_FOUND;

	CHECK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, g_device) == 0) {
			err = doca_dev_open(list[i], &s->dev);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	return err == DOCA_SUCCESS ? 0 : 77;
}

static bool running(void)
{
	return A.state == DOCA_CTX_STATE_RUNNING && B.state == DOCA_CTX_STATE_RUNNING;
}

static int side_setup(struct side *s, void *mem, size_t len, bool target)
{
	const uint32_t perms = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE |
			       DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_ATOMIC;
	union doca_data ud = {.ptr = s};
	doca_error_t err;

	CHECK(doca_pe_create(&s->pe));
	CHECK(doca_mmap_create(&s->mmap));
	CHECK(doca_mmap_set_memrange(s->mmap, mem, len));
	CHECK(doca_mmap_set_permissions(s->mmap, perms));
	CHECK(doca_mmap_add_dev(s->mmap, s->dev));
	CHECK(doca_mmap_start(s->mmap));
	CHECK(doca_buf_inventory_create(32, &s->inv));
	CHECK(doca_buf_inventory_start(s->inv));
	CHECK(doca_rdma_create(s->dev, &s->rdma));
	s->ctx = doca_rdma_as_ctx(s->rdma);
	CHECK(doca_rdma_set_permissions(s->rdma, perms));
	CHECK(doca_rdma_set_connection_state_callbacks(s->rdma, NULL, established_cb, conn_failed_cb, conn_failed_cb));
	if (target) {
		CHECK(doca_rdma_task_receive_set_conf(s->rdma, recv_ok_cb, recv_err_cb, 2));
	} else {
		CHECK(doca_rdma_task_write_set_conf(s->rdma, write_cb, write_cb, 2));
		CHECK(doca_rdma_task_send_set_conf(s->rdma, send_cb, send_cb, 3));
		CHECK(doca_rdma_task_read_set_conf(s->rdma, read_cb, read_cb, 1));
		CHECK(doca_rdma_task_write_imm_set_conf(s->rdma, wimm_cb, wimm_cb, 1));
		CHECK(doca_rdma_task_atomic_fetch_add_set_conf(s->rdma, fadd_cb, fadd_cb, 1));
		CHECK(doca_rdma_task_remote_net_sync_event_notify_set_set_conf(s->rdma, evset_cb, evset_cb, 1));
		CHECK(doca_rdma_task_remote_net_sync_event_get_set_conf(s->rdma, evget_cb, evget_cb, 1));
	}
	CHECK(doca_ctx_set_user_data(s->ctx, ud));
	CHECK(doca_ctx_set_state_changed_cb(s->ctx, state_cb));
	CHECK(doca_pe_connect_ctx(s->pe, s->ctx));
	err = doca_ctx_start(s->ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		return failf("%s: doca_ctx_start returned %s", s->role, doca_error_get_name(err));
	return 0;
}

static int connect_sides(void)
{
	const void *da, *db;
	size_t la, lb;

	CHECK(doca_rdma_export(A.rdma, &da, &la, &A.conn));
	CHECK(doca_rdma_export(B.rdma, &db, &lb, &B.conn));
	CHECK(doca_rdma_connect(A.rdma, db, lb, A.conn));
	CHECK(doca_rdma_connect(B.rdma, da, la, B.conn));
	/* Nothing to wait for: the first round's tasks wait for the link. */
	return 0;
}

/* ---- the initiator's graph ---- */

struct plan {
	struct doca_dma *dma;
	struct doca_ctx *dma_ctx;
	struct doca_mmap *rmmap, *ro_rmmap, *ro;
	struct doca_graph *g, *g_fail;
	struct doca_graph_instance *gi, *gi_fail;
	struct doca_rdma_task_write *write, *bad_write;
	struct doca_rdma_task_send *send, *bad_send, *marker;
	struct doca_rdma_task_read *read;
	struct doca_rdma_task_write_imm *wimm;
	struct doca_rdma_task_atomic_fetch_add *fadd;
	struct doca_dma_task_memcpy *copy;
	struct doca_rdma_task_remote_net_sync_event_notify_set *evset;
	struct doca_rdma_task_remote_net_sync_event_get *evget;
	struct doca_sync_event *event;               /* the target's */
	struct doca_sync_event_remote_net *revent;   /* the initiator's handle on it */
	struct doca_buf *bufs[16];
	int nbufs;
};

static struct plan P;

static int buf(struct doca_mmap *m, void *addr, size_t len, bool with_data, struct doca_buf **out)
{
	if (with_data)
		CHECK(doca_buf_inventory_buf_get_by_data(A.inv, m, addr, len, out));
	else
		CHECK(doca_buf_inventory_buf_get_by_addr(A.inv, m, addr, len, out));
	P.bufs[P.nbufs++] = *out;
	return 0;
}

static int remote_mmaps(void)
{
	const void *desc;
	size_t len;
	CHECK(doca_mmap_export_rdma(B.mmap, B.dev, &desc, &len));
	CHECK(doca_mmap_create_from_export(NULL, desc, len, A.dev, &P.rmmap));
	/* a second target region, exported for reading only */
	CHECK(doca_mmap_create(&P.ro));
	CHECK(doca_mmap_set_memrange(P.ro, g_ro, BIG));
	CHECK(doca_mmap_set_permissions(P.ro, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ));
	CHECK(doca_mmap_add_dev(P.ro, B.dev));
	CHECK(doca_mmap_start(P.ro));
	CHECK(doca_mmap_export_rdma(P.ro, B.dev, &desc, &len));
	CHECK(doca_mmap_create_from_export(NULL, desc, len, A.dev, &P.ro_rmmap));
	return 0;
}

static int remote_event(void)
{
	const uint8_t *desc;
	size_t len;

	CHECK(doca_sync_event_create(&P.event));
	CHECK(doca_sync_event_add_publisher_location_remote_net(P.event));
	CHECK(doca_sync_event_add_subscriber_location_cpu(P.event, B.dev));
	CHECK(doca_sync_event_start(P.event));
	CHECK(doca_sync_event_export_to_remote_net(P.event, &desc, &len));
	CHECK(doca_sync_event_remote_net_create_from_export(A.dev, desc, len, &P.revent));
	return 0;
}

static int build_tasks(void)
{
	struct doca_buf *wsrc, *wdst, *msg, *rsrc, *rdst, *isrc, *idst, *cnt, *old, *ddst, *robuf, *evs, *evg;
	union doca_data none = {.u64 = 0};

	if (buf(A.mmap, IM->wsrc, BIG, true, &wsrc) || buf(P.rmmap, TM->wdst, BIG, false, &wdst) ||
	    buf(A.mmap, IM->msg, MSG, true, &msg) || buf(P.rmmap, TM->rsrc, BIG, true, &rsrc) ||
	    buf(A.mmap, IM->rdst, BIG, false, &rdst) || buf(A.mmap, IM->imm_src, IMM_LEN, true, &isrc) ||
	    buf(P.rmmap, TM->imm_dst, IMM_LEN, false, &idst) || buf(P.rmmap, &TM->counter, 8, false, &cnt) ||
	    buf(A.mmap, &IM->old, 8, false, &old) || buf(A.mmap, IM->dma_dst, BIG, false, &ddst) ||
	    buf(P.ro_rmmap, g_ro, BIG, false, &robuf) || buf(A.mmap, &IM->ev_set, 8, true, &evs) ||
	    buf(A.mmap, &IM->ev_got, 8, false, &evg))
		return -1;
	CHECK(doca_rdma_task_write_allocate_init(A.rdma, A.conn, wsrc, wdst, none, &P.write));
	CHECK(doca_rdma_task_send_allocate_init(A.rdma, A.conn, msg, none, &P.send));
	CHECK(doca_rdma_task_read_allocate_init(A.rdma, A.conn, rsrc, rdst, none, &P.read));
	CHECK(doca_rdma_task_write_imm_allocate_init(A.rdma, A.conn, isrc, idst, 0, none, &P.wimm));
	CHECK(doca_rdma_task_atomic_fetch_add_allocate_init(A.rdma, A.conn, cnt, old, 1, none, &P.fadd));
	CHECK(doca_dma_task_memcpy_alloc_init(P.dma, wsrc, ddst, none, &P.copy));
	CHECK(doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(A.rdma, A.conn, P.revent, evs, none,
									      &P.evset));
	CHECK(doca_rdma_task_remote_net_sync_event_get_allocate_init(A.rdma, A.conn, P.revent, evg, none, &P.evget));
	CHECK(doca_rdma_task_write_allocate_init(A.rdma, A.conn, wsrc, robuf, none, &P.bad_write));
	CHECK(doca_rdma_task_send_allocate_init(A.rdma, A.conn, msg, none, &P.bad_send));
	return 0;
}

static int build_graphs(void)
{
	struct doca_graph_node *w, *s, *wi, *r, *f, *d, *es, *eg, *chk, *bw, *bs;

	CHECK(doca_graph_create(A.pe, &P.g));
	CHECK(doca_graph_node_create_from_ctx(P.g, A.ctx, &w));
	CHECK(doca_graph_node_create_from_ctx(P.g, A.ctx, &s));
	CHECK(doca_graph_node_create_from_ctx(P.g, A.ctx, &wi));
	CHECK(doca_graph_node_create_from_ctx(P.g, A.ctx, &r));
	CHECK(doca_graph_node_create_from_ctx(P.g, A.ctx, &f));
	CHECK(doca_graph_node_create_from_ctx(P.g, P.dma_ctx, &d));
	CHECK(doca_graph_node_create_from_ctx(P.g, A.ctx, &es));
	CHECK(doca_graph_node_create_from_ctx(P.g, A.ctx, &eg));
	CHECK(doca_graph_node_create_from_user(P.g, check_node, &chk));
	CHECK(doca_graph_add_dependency(P.g, es, eg));
	CHECK(doca_graph_add_dependency(P.g, eg, chk));
	CHECK(doca_graph_add_dependency(P.g, w, s));
	CHECK(doca_graph_add_dependency(P.g, s, wi));
	CHECK(doca_graph_add_dependency(P.g, wi, chk));
	CHECK(doca_graph_add_dependency(P.g, r, chk));
	CHECK(doca_graph_add_dependency(P.g, f, chk));
	CHECK(doca_graph_add_dependency(P.g, d, chk));
	CHECK(doca_graph_set_conf(P.g, graph_done_cb, graph_err_cb, 1));
	CHECK(doca_graph_start(P.g));
	CHECK(doca_graph_instance_create(P.g, &P.gi));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi, w, doca_rdma_task_write_as_task(P.write)));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi, s, doca_rdma_task_send_as_task(P.send)));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi, wi, doca_rdma_task_write_imm_as_task(P.wimm)));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi, r, doca_rdma_task_read_as_task(P.read)));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi, f, doca_rdma_task_atomic_fetch_add_as_task(P.fadd)));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi, d, doca_dma_task_memcpy_as_task(P.copy)));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi, es,
						    doca_rdma_task_remote_net_sync_event_notify_set_as_task(P.evset)));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi, eg, doca_rdma_task_remote_net_sync_event_get_as_task(P.evget)));
	CHECK(doca_graph_instance_set_user_node_data(P.gi, chk, NULL));

	CHECK(doca_graph_create(A.pe, &P.g_fail));
	CHECK(doca_graph_node_create_from_ctx(P.g_fail, A.ctx, &bw));
	CHECK(doca_graph_node_create_from_ctx(P.g_fail, A.ctx, &bs));
	CHECK(doca_graph_add_dependency(P.g_fail, bw, bs));
	CHECK(doca_graph_set_conf(P.g_fail, graph_done_cb, graph_err_cb, 1));
	CHECK(doca_graph_start(P.g_fail));
	CHECK(doca_graph_instance_create(P.g_fail, &P.gi_fail));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi_fail, bw, doca_rdma_task_write_as_task(P.bad_write)));
	CHECK(doca_graph_instance_set_ctx_node_data(P.gi_fail, bs, doca_rdma_task_send_as_task(P.bad_send)));
	return 0;
}

static bool round_over(void)
{
	return g_graph_done + g_graph_err > 0 && g_sends_ok + g_recv_bad > g_round && g_imms_ok + g_recv_bad > g_round;
}

static int run_round(uint32_t r)
{
	uint64_t ev;

	g_round = r;
	g_graph_done = g_graph_err = 0;
	fill(IM->wsrc, BIG, r, 1);
	fill(TM->rsrc, BIG, r, 2);
	fill(IM->imm_src, IMM_LEN, r, 3);
	snprintf((char *)IM->msg, MSG, "round %u", r);
	CHECK(doca_buf_reset_data_len(P.bufs[4])); /* read destination */
	CHECK(doca_buf_reset_data_len(P.bufs[8])); /* fetch-add result */
	CHECK(doca_buf_reset_data_len(P.bufs[9])); /* DMA destination */
	CHECK(doca_buf_reset_data_len(P.bufs[12])); /* sync event get destination */
	IM->ev_set = r + 1;
	IM->ev_got = 0;
	doca_rdma_task_write_imm_set_immediate_data(P.wimm, htonl(r));
	CHECK(doca_graph_instance_submit(P.gi));
	if (wait_for(round_over, "a round of the graph") != 0)
		return -1;
	if (g_graph_err || g_recv_bad)
		return failf("round %u: graph error callbacks %d, bad receives %d", r, g_graph_err, g_recv_bad);
	if (g_graph_done != 1 || g_checked != r + 1)
		return failf("round %u: %d completions, %u checks", r, g_graph_done, g_checked);
	if (!same(TM->wdst, BIG, r, 1) || !same(TM->imm_dst, IMM_LEN, r, 3) || TM->counter != r + 1)
		return failf("round %u: target memory is not what the graph wrote", r);
	CHECK(doca_sync_event_get(P.event, &ev));
	if (ev != r + 1)
		return failf("round %u: the target's sync event is %" PRIu64 ", not %u", r, ev, r + 1);
	return 0;
}

static bool graph_reported(void)
{
	return g_graph_done + g_graph_err > 0;
}

static bool marker_arrived(void)
{
	return marker_done != 0 && (marker_done < 0 || strcmp(g_last_msg, "marker") == 0);
}

static int run_failing(void)
{
	static char marker_msg[] = "marker";
	struct doca_buf *mbuf;
	unsigned int msgs_before = g_msgs;
	doca_error_t st;

	g_graph_done = g_graph_err = 0;
	memset(g_ro, 0x5A, BIG);
	CHECK(doca_graph_instance_submit(P.gi_fail));
	if (wait_for(graph_reported, "the failing graph's callback") != 0)
		return -1;
	if (g_graph_err != 1 || g_graph_done != 0)
		return failf("failing graph: %d error callbacks, %d completions", g_graph_err, g_graph_done);
	st = doca_task_get_status(doca_rdma_task_write_as_task(P.bad_write));
	if (st == DOCA_SUCCESS)
		return failf("the write into a read-only region reports success");
	for (size_t i = 0; i < BIG; i++)
		if (g_ro[i] != 0x5A)
			return failf("the refused write changed the read-only region at byte %zu", i);

	/* RC order: had the graph's send run, the target would see it before
	 * this marker. */
	memcpy(IM->msg, marker_msg, sizeof(marker_msg));
	if (buf(A.mmap, IM->msg, strlen(marker_msg), true, &mbuf) != 0)
		return -1;
	CHECK(doca_rdma_task_send_allocate_init(A.rdma, A.conn, mbuf, (union doca_data){.u64 = 0xAAAA}, &P.marker));
	CHECK(doca_task_submit(doca_rdma_task_send_as_task(P.marker)));
	if (wait_for(marker_arrived, "the marker message") != 0)
		return -1;
	if (marker_done != 1)
		return failf("the marker send after the failed write failed");
	if (g_msgs != msgs_before + 1)
		return failf("the target received %u messages after the failed graph, not only the marker",
			     g_msgs - msgs_before);
	printf("# failing write: %s; its dependent send never ran\n", doca_error_get_name(st));
	return 0;
}

static int stop_side(struct side *s)
{
	double deadline = now_s() + WAIT_S;
	doca_error_t err = doca_ctx_stop(s->ctx);

	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		return failf("%s: doca_ctx_stop returned %s", s->role, doca_error_get_name(err));
	while (s->state != DOCA_CTX_STATE_IDLE) {
		if (now_s() > deadline)
			return failf("%s: the context did not stop", s->role);
		(void)doca_pe_progress(A.pe);
		(void)doca_pe_progress(B.pe);
	}
	return 0;
}

static int cleanup(void)
{
	int rc = 0;
	int i;

	if (P.gi != NULL)
		rc |= doca_graph_instance_destroy(P.gi) != DOCA_SUCCESS;
	if (P.gi_fail != NULL)
		rc |= doca_graph_instance_destroy(P.gi_fail) != DOCA_SUCCESS;
	if (P.g != NULL)
		rc |= doca_graph_stop(P.g) != DOCA_SUCCESS || doca_graph_destroy(P.g) != DOCA_SUCCESS;
	if (P.g_fail != NULL)
		rc |= doca_graph_stop(P.g_fail) != DOCA_SUCCESS || doca_graph_destroy(P.g_fail) != DOCA_SUCCESS;
	if (P.write)
		doca_task_free(doca_rdma_task_write_as_task(P.write));
	if (P.bad_write)
		doca_task_free(doca_rdma_task_write_as_task(P.bad_write));
	if (P.send)
		doca_task_free(doca_rdma_task_send_as_task(P.send));
	if (P.bad_send)
		doca_task_free(doca_rdma_task_send_as_task(P.bad_send));
	if (P.marker)
		doca_task_free(doca_rdma_task_send_as_task(P.marker));
	if (P.read)
		doca_task_free(doca_rdma_task_read_as_task(P.read));
	if (P.wimm)
		doca_task_free(doca_rdma_task_write_imm_as_task(P.wimm));
	if (P.fadd)
		doca_task_free(doca_rdma_task_atomic_fetch_add_as_task(P.fadd));
	if (P.copy)
		doca_task_free(doca_dma_task_memcpy_as_task(P.copy));
	if (P.evset)
		doca_task_free(doca_rdma_task_remote_net_sync_event_notify_set_as_task(P.evset));
	if (P.evget)
		doca_task_free(doca_rdma_task_remote_net_sync_event_get_as_task(P.evget));
	for (i = 0; i < P.nbufs; i++)
		(void)doca_buf_dec_refcount(P.bufs[i], NULL);
	for (i = 0; i < 2; i++)
		if (g_recv_buf[i] != NULL)
			(void)doca_buf_dec_refcount(g_recv_buf[i], NULL);
	if (A.ctx != NULL)
		rc |= stop_side(&A) != 0;
	if (B.ctx != NULL)
		rc |= stop_side(&B) != 0;
	for (i = 0; i < 2; i++)
		if (g_recv[i] != NULL) /* not flushed: never submitted */
			doca_task_free(doca_rdma_task_receive_as_task(g_recv[i]));
	if (P.dma != NULL) {
		(void)doca_ctx_stop(P.dma_ctx);
		rc |= doca_dma_destroy(P.dma) != DOCA_SUCCESS;
	}
	if (P.rmmap != NULL)
		rc |= doca_mmap_destroy(P.rmmap) != DOCA_SUCCESS;
	if (P.ro_rmmap != NULL)
		rc |= doca_mmap_destroy(P.ro_rmmap) != DOCA_SUCCESS;
	if (P.ro != NULL)
		rc |= doca_mmap_stop(P.ro) != DOCA_SUCCESS || doca_mmap_destroy(P.ro) != DOCA_SUCCESS;
	if (P.revent != NULL)
		rc |= doca_sync_event_remote_net_destroy(P.revent) != DOCA_SUCCESS;
	if (P.event != NULL)
		rc |= doca_sync_event_stop(P.event) != DOCA_SUCCESS || doca_sync_event_destroy(P.event) != DOCA_SUCCESS;
	for (struct side *s = &A; s != NULL; s = s == &A ? &B : NULL) {
		if (s->rdma != NULL)
			rc |= doca_rdma_destroy(s->rdma) != DOCA_SUCCESS;
		if (s->pe != NULL)
			rc |= doca_pe_destroy(s->pe) != DOCA_SUCCESS;
		if (s->inv != NULL)
			rc |= doca_buf_inventory_stop(s->inv) != DOCA_SUCCESS ||
			      doca_buf_inventory_destroy(s->inv) != DOCA_SUCCESS;
		if (s->mmap != NULL)
			rc |= doca_mmap_stop(s->mmap) != DOCA_SUCCESS || doca_mmap_destroy(s->mmap) != DOCA_SUCCESS;
		if (s->dev != NULL)
			rc |= doca_dev_close(s->dev) != DOCA_SUCCESS;
	}
	if (rc)
		failf("cleanup: a destroy call failed");
	return rc ? -1 : 0;
}

static int post_receives(void)
{
	for (int i = 0; i < 2; i++) {
		CHECK(doca_buf_inventory_buf_get_by_addr(B.inv, B.mmap, TM->recv[i], MSG, &g_recv_buf[i]));
		CHECK(doca_rdma_task_receive_allocate_init(B.rdma, g_recv_buf[i], (union doca_data){.u64 = (uint64_t)i},
							   &g_recv[i]));
		CHECK(doca_task_submit(doca_rdma_task_receive_as_task(g_recv[i])));
	}
	return 0;
}

static int run(void)
{
	int rc;

	rc = open_device(&A);
	if (rc == 0)
		rc = open_device(&B);
	if (rc == 77) {
		printf("SKIP: device %s not found\n", g_device);
		return 77;
	}
	if (side_setup(&A, IM, sizeof(*IM), false) != 0 || side_setup(&B, TM, sizeof(*TM), true) != 0)
		return -1;
	CHECK(doca_dma_create(A.dev, &P.dma));
	P.dma_ctx = doca_dma_as_ctx(P.dma);
	CHECK(doca_dma_task_memcpy_set_conf(P.dma, dma_cb, dma_cb, 1));
	CHECK(doca_pe_connect_ctx(A.pe, P.dma_ctx));
	CHECK(doca_ctx_start(P.dma_ctx));
	if (wait_for(running, "RUNNING") != 0 || connect_sides() != 0 || remote_mmaps() != 0 || remote_event() != 0 || post_receives() != 0 ||
	    build_tasks() != 0 || build_graphs() != 0)
		return -1;
	for (uint32_t r = 0; r < g_rounds; r++)
		if (run_round(r) != 0)
			return -1;
	if (g_task_cb_calls != 0)
		return failf("the tasks' own callbacks ran %d times inside the graph", g_task_cb_calls);
	printf("# %u rounds: write -> send -> write_imm, sync event set -> get, read, fetch_add, DMA memcpy;"
	       " every byte checked\n",
	       g_rounds);
	if (run_failing() != 0)
		return -1;
	if (g_task_cb_calls != 0)
		return failf("the tasks' own callbacks ran %d times inside the failing graph", g_task_cb_calls);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"device", required_argument, NULL, 'd'},
		{"rounds", required_argument, NULL, 'r'},
		{NULL, 0, NULL, 0},
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, "d:r:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			g_device = optarg;
			break;
		case 'r':
			g_rounds = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: %s [--device IBDEV] [--rounds N]\n", argv[0]);
			return 1;
		}
	}
	TM = aligned_alloc(4096, (sizeof(*TM) + 4095) & ~(size_t)4095);
	IM = aligned_alloc(4096, (sizeof(*IM) + 4095) & ~(size_t)4095);
	g_ro = aligned_alloc(4096, BIG);
	if (TM == NULL || IM == NULL || g_ro == NULL)
		return failf("out of memory"), 1;
	memset(TM, 0, sizeof(*TM));
	memset(IM, 0, sizeof(*IM));
	rc = run();
	if (rc == 77)
		return 77;
	if (cleanup() != 0)
		rc = -1;
	/* The contexts are IDLE: every connection callback has run. */
	if (A.established != 0 || B.established != 0)
		rc = failf("the established callback ran %d + %d times for an export/connect connection (DOCA "
			   "calls it for RDMA CM connections only)",
			   A.established, B.established);
	free(TM);
	free(IM);
	free(g_ro);
	if (rc != 0)
		return 1;
	printf("graph_dma_rdma: PASS\n");
	return 0;
}
