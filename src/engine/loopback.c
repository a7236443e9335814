/*
 * softdoca — the loopback engine: the ops table of engine.h for peers in
 * this process only, without UCX (SOFTDOCA_ENGINE=loopback; unit tests).
 *
 * It keeps the UCX engine's semantics where a program can see them:
 * export/connect with descriptors (its own format, parsed as hostile
 * input), established once both sides connected (the DC passive side
 * never connects), per-connection send queues (DOCA_ERROR_FULL), one
 * target queue per connection run strictly in arrival order (RC: an
 * operation that waits holds the ones behind it), sends matched to the
 * oldest posted receive with an RNR wait (a receive posted later still
 * takes the send; rnr_retry_count < 7 bounds the wait), one-sided
 * operations checked against the target's regions and sync events through
 * Core's seam (core_engine.h) before any byte moves, and a disconnection
 * seen by the peer as ENGINE_CONN_DISCONNECTED.
 *
 * There is no wire and no service thread: an operation runs on the
 * posting thread the moment it reaches the head of its target queue, or
 * later on the thread that posts the receive it waited for, connects the
 * side it waited for, or progresses past its deadline. All state sits
 * under one process-wide lock (operations cross workers); done() and
 * conn_event callbacks run under it and, as engine.h requires, only
 * record and queue work for doca_pe_progress. RDMA CM (listen,
 * connect_addr) is not supported: DOCA_ERROR_NOT_SUPPORTED.
 *
 * Links: a connection c that connected to p has c->peer == p and
 * p->from == c; c's operations wait in p's target queue, which holds
 * nothing else. Closing a connection severs its links both ways (the
 * linked peer closes too, with a disconnection event), so no pointer to
 * a closed or freed slot survives.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_types.h>

#include "bytes.h"
#include "core_engine.h"
#include "engine.h"

SDK_LOG_REGISTER(ENGINE::LOOPBACK)

_Static_assert(ENGINE_SECRET_LEN == SOFTDOCA_SECRET_LEN, "engine and Core secrets differ in size");

/* How long an operation waits for the target side to connect (the UCX
 * engine's value: RC hardware keeps retrying a queue pair not ready). */
#define LB_NOT_CONNECTED_RETRY_NS (30ULL * 1000000000ULL)

/* ---- descriptor: "SDLB", version, flags, reserved, worker, conn, secret */

#define LB_DESC_MAGIC "SDLB"
#define LB_DESC_VERSION 1u
#define LB_DESC_FLAG_DC 0x01u
#define LB_DESC_OFF_VERSION 4
#define LB_DESC_OFF_FLAGS 5
#define LB_DESC_OFF_RESERVED 6
#define LB_DESC_OFF_WORKER 8
#define LB_DESC_OFF_CONN 16
#define LB_DESC_OFF_SECRET 20
#define LB_DESC_LEN (LB_DESC_OFF_SECRET + ENGINE_SECRET_LEN)

enum lb_conn_state {
	LB_FREE = 0,
	LB_EXPORTED,  /* descriptor handed out, not connected */
	LB_CONNECTED, /* connected to a peer (c->peer) */
	LB_CLOSED,    /* disconnected or failed: nothing more moves */
};

struct lb_worker;

struct lb_conn {
	struct lb_worker *worker;
	uint32_t id; /* index + 1 */
	enum lb_conn_state state;
	bool established_reported;
	uint8_t secret[ENGINE_SECRET_LEN];
	struct lb_conn *peer;        /* whom we connected to */
	struct lb_conn *from;        /* who connected to us: its operations land here */
	uint32_t busy;               /* our operations posted, not done */
	uint64_t next_seq;           /* numbers our operations (the timeline's seq) */
	struct engine_wr *inq_head;  /* from's operations, in arrival order */
	struct engine_wr *inq_tail;
	uint64_t head_deadline_ns;   /* the head waits until then (0: it does not wait) */
	void *user;
	uint8_t desc[LB_DESC_LEN];
};

struct lb_worker {
	struct engine_worker_conf conf;
	uint64_t serial; /* names the worker in descriptors; never reused */
	struct lb_conn *conns;
	uint32_t num_conns; /* highest id handed out */
	struct engine_wr *recv_head;
	struct engine_wr *recv_tail;
	uint32_t outstanding; /* posted, done() not yet called */
	struct lb_worker *next;
};

static pthread_mutex_t lb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lb_worker *lb_workers;
static uint64_t lb_next_serial = 1;
/* Target queues whose head waits with a deadline; read without the lock
 * so that progress costs nothing when none does. */
static atomic_uint lb_parked;

static struct lb_worker *lb_worker_of(struct engine_worker *w)
{
	return (struct lb_worker *)w;
}

static struct lb_conn *lb_conn_of(struct engine_conn *c)
{
	return (struct lb_conn *)c;
}

static uint64_t lb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void lb_event(struct lb_conn *c, enum engine_conn_event ev)
{
	if (c->worker->conf.conn_event != NULL)
		c->worker->conf.conn_event(c->worker->conf.arg, (struct engine_conn *)c, ev);
}

/* ---- scatter/gather ---------------------------------------------------- */

static uint64_t lb_sge_total(const struct engine_sge *sge, uint32_t n)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		total += sge[i].len;
	return total;
}

/* Copy len bytes from the list src to the list dst; both hold at least
 * len. memmove: in one process the two may be the same memory. */
static void lb_sge_copy(const struct engine_sge *dst, uint32_t nd, const struct engine_sge *src, uint32_t ns,
			uint64_t len)
{
	uint32_t i = 0, j = 0;
	size_t doff = 0, soff = 0;

	while (len > 0 && i < nd && j < ns) {
		size_t take = dst[i].len - doff;

		if (src[j].len - soff < take)
			take = src[j].len - soff;
		if (len < take)
			take = (size_t)len;
		if (take > 0)
			memmove((uint8_t *)dst[i].addr + doff, (const uint8_t *)src[j].addr + soff, take);
		doff += take;
		soff += take;
		len -= take;
		if (doff == dst[i].len) {
			i++;
			doff = 0;
		}
		if (soff == src[j].len) {
			j++;
			soff = 0;
		}
	}
}

/* ---- completion -------------------------------------------------------- */

/* wr is no longer ours once done() ran: finish it last. Lock held. */
static void lb_wr_finish(struct engine_wr *wr, doca_error_t status)
{
	struct lb_conn *c = lb_conn_of(wr->conn);

	wr->status = status;
	wr->next = NULL;
	c->busy--;
	c->worker->outstanding--;
	wr->done(wr);
}

static void lb_recv_finish(struct lb_worker *w, struct engine_wr *recv, doca_error_t status)
{
	recv->status = status;
	recv->next = NULL;
	w->outstanding--;
	recv->done(recv);
}

static struct engine_wr *lb_recv_take(struct lb_worker *w)
{
	struct engine_wr *wr = w->recv_head;

	if (wr == NULL)
		return NULL;
	w->recv_head = wr->next;
	if (w->recv_head == NULL)
		w->recv_tail = NULL;
	return wr;
}

static void lb_recv_fail_all(struct lb_worker *w, doca_error_t status)
{
	struct engine_wr *wr;

	while ((wr = lb_recv_take(w)) != NULL)
		lb_recv_finish(w, wr, status);
}

/* The receive a send or write with immediate consumed. */
static void lb_recv_complete(struct lb_conn *p, struct engine_wr *recv, const struct engine_wr *wr,
			     doca_error_t status, uint64_t len)
{
	recv->result_len = status == DOCA_SUCCESS ? len : 0;
	recv->result_kind = wr->opcode == ENGINE_OP_SEND       ? ENGINE_RECV_SEND
			    : wr->opcode == ENGINE_OP_SEND_IMM ? ENGINE_RECV_SEND_IMM
							       : ENGINE_RECV_WRITE_IMM;
	recv->result_imm = wr->imm;
	recv->result_conn = (struct engine_conn *)p;
	lb_recv_finish(p->worker, recv, status);
}

/* ---- target queues ------------------------------------------------------ */

static void lb_park(struct lb_conn *p, uint64_t timeout_ns)
{
	if (p->head_deadline_ns != 0)
		return; /* a second wait keeps the first deadline */
	p->head_deadline_ns = timeout_ns == 0 ? UINT64_MAX : lb_now_ns() + timeout_ns;
	atomic_fetch_add(&lb_parked, 1);
}

static void lb_unpark(struct lb_conn *p)
{
	if (p->head_deadline_ns == 0)
		return;
	p->head_deadline_ns = 0;
	atomic_fetch_sub(&lb_parked, 1);
}

static struct engine_wr *lb_inq_pop(struct lb_conn *p)
{
	struct engine_wr *wr = p->inq_head;

	lb_unpark(p);
	p->inq_head = wr->next;
	if (p->inq_head == NULL)
		p->inq_tail = NULL;
	return wr;
}

/* Fail everything waiting in p's target queue (its initiator is over). */
static void lb_inq_fail(struct lb_conn *p, doca_error_t status)
{
	while (p->inq_head != NULL)
		lb_wr_finish(lb_inq_pop(p), status);
}

enum lb_result {
	LB_DONE, /* wr->status and results set: pop and finish it */
	LB_WAIT, /* holds the head of the queue */
};

struct lb_opdef {
	const char *name;
	uint32_t perm; /* what the target context (and a region) must grant; 0: none */
};

static const struct lb_opdef lb_opdefs[ENGINE_OP_SYNC_ADD + 1] = {
	[ENGINE_OP_SEND] = {"send", 0},
	[ENGINE_OP_SEND_IMM] = {"send with immediate", 0},
	[ENGINE_OP_WRITE] = {"write", DOCA_ACCESS_FLAG_RDMA_WRITE},
	[ENGINE_OP_WRITE_IMM] = {"write with immediate", DOCA_ACCESS_FLAG_RDMA_WRITE},
	[ENGINE_OP_READ] = {"read", DOCA_ACCESS_FLAG_RDMA_READ},
	[ENGINE_OP_ATOMIC_CAS] = {"atomic compare-and-swap", DOCA_ACCESS_FLAG_RDMA_ATOMIC},
	[ENGINE_OP_ATOMIC_FADD] = {"atomic fetch-and-add", DOCA_ACCESS_FLAG_RDMA_ATOMIC},
	[ENGINE_OP_SYNC_GET] = {"sync event get", DOCA_ACCESS_FLAG_RDMA_READ},
	[ENGINE_OP_SYNC_SET] = {"sync event set", DOCA_ACCESS_FLAG_RDMA_WRITE},
	[ENGINE_OP_SYNC_ADD] = {"sync event add", DOCA_ACCESS_FLAG_RDMA_ATOMIC},
};

static const struct lb_opdef *lb_def(const struct engine_wr *wr)
{
	return &lb_opdefs[wr->opcode];
}

/* The RNR wait the initiator's context asked for: 7 is for ever. */
static uint64_t lb_rnr_timeout_ns(const struct engine_wr *wr)
{
	uint8_t rnr = lb_conn_of(wr->conn)->worker->conf.rnr_retry_count;

	return rnr >= 7 ? 0 : (uint64_t)(rnr + 1) * 200ULL * 1000000ULL;
}

/* A refusal's reason goes to the initiator with its status (the UCX
 * engine's answer carries the same). */
static void lb_refuse(struct engine_wr *wr, enum engine_refusal_kind kind, uint32_t perm)
{
	wr->refusal.kind = (uint8_t)kind;
	wr->refusal.perm = perm;
}

static doca_error_t lb_ctx_permits(const struct lb_conn *p, struct engine_wr *wr)
{
	uint32_t perm = lb_def(wr)->perm;

	if (p->worker->conf.permissions & perm)
		return DOCA_SUCCESS;
	lb_refuse(wr, ENGINE_REFUSAL_CTX_PERM, perm);
	SDK_LOG_ERR_RL("connection %u: %s refused: this RDMA context's permissions (doca_rdma_set_permissions) lack %s",
		       p->id, lb_def(wr)->name, softdoca_access_flag_name(perm));
	return DOCA_ERROR_NOT_PERMITTED;
}

/* Find and hold the region wr names, check range and permission (the
 * UCX target's checks and errors). */
static doca_error_t lb_region(const struct lb_conn *p, struct engine_wr *wr, uint64_t len,
			      struct softdoca_mmap_region *region, void **local)
{
	const char *name = lb_def(wr)->name;
	uint32_t perm = lb_def(wr)->perm;
	doca_error_t status;

	status = lb_ctx_permits(p, wr);
	if (status != DOCA_SUCCESS)
		return status;
	if (softdoca_mmap_region_lookup(wr->remote.region_id, wr->remote.secret, region) != DOCA_SUCCESS) {
		lb_refuse(wr, ENGINE_REFUSAL_REGION_KEY, 0);
		SDK_LOG_ERR_RL("connection %u: %s refused: memory region %llu is unknown, stopped, or the key is wrong",
			       p->id, name, (unsigned long long)wr->remote.region_id);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	status = softdoca_mmap_region_check(region, wr->remote.addr, len, perm, local);
	if (status == DOCA_SUCCESS)
		return DOCA_SUCCESS;
	wr->refusal.addr = wr->remote.addr;
	wr->refusal.len = len;
	wr->refusal.region_start = region->addr;
	wr->refusal.region_end = region->addr + region->len;
	softdoca_mmap_region_release(region);
	if (status == DOCA_ERROR_NOT_PERMITTED) {
		lb_refuse(wr, ENGINE_REFUSAL_REGION_PERM, perm);
		SDK_LOG_ERR_RL("connection %u: %s refused: memory region %llu was not exported with %s", p->id, name,
			       (unsigned long long)wr->remote.region_id, softdoca_access_flag_name(perm));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	lb_refuse(wr, ENGINE_REFUSAL_RANGE, 0);
	SDK_LOG_ERR_RL("connection %u: %s refused: [%#llx, +%llu) is outside memory region %llu", p->id, name,
		       (unsigned long long)wr->remote.addr, (unsigned long long)len,
		       (unsigned long long)wr->remote.region_id);
	return DOCA_ERROR_INVALID_VALUE;
}

static enum lb_result lb_send(struct lb_conn *p, struct engine_wr *wr)
{
	struct lb_worker *tw = p->worker;
	uint64_t len = lb_sge_total(wr->sge, wr->num_sge);
	struct engine_wr *recv;
	uint64_t room;

	if (tw->recv_head == NULL) {
		/* Receiver not ready: wait, as the sender would keep retrying. */
		lb_park(p, lb_rnr_timeout_ns(wr));
		return LB_WAIT;
	}
	recv = lb_recv_take(tw);
	room = lb_sge_total(recv->sge, recv->num_sge);
	if (len > room) {
		SDK_LOG_ERR_RL("connection %u: a %llu-byte %s does not fit the posted receive (%llu bytes): both fail",
			       p->id, (unsigned long long)len, lb_def(wr)->name, (unsigned long long)room);
		lb_recv_complete(p, recv, wr, DOCA_ERROR_TOO_BIG, 0);
		wr->status = DOCA_ERROR_TOO_BIG;
		return LB_DONE;
	}
	lb_sge_copy(recv->sge, recv->num_sge, wr->sge, wr->num_sge, len);
	lb_recv_complete(p, recv, wr, DOCA_SUCCESS, len);
	wr->status = DOCA_SUCCESS;
	return LB_DONE;
}

static enum lb_result lb_write(struct lb_conn *p, struct engine_wr *wr)
{
	struct lb_worker *tw = p->worker;
	uint64_t len = lb_sge_total(wr->sge, wr->num_sge);
	struct softdoca_mmap_region region;
	struct engine_wr *recv = NULL;
	struct engine_sge dst;
	doca_error_t status = DOCA_SUCCESS;

	if (wr->opcode == ENGINE_OP_WRITE_IMM) {
		if (tw->recv_head == NULL) {
			lb_park(p, lb_rnr_timeout_ns(wr));
			return LB_WAIT;
		}
		recv = lb_recv_take(tw);
	}
	/* A zero-length write touches no memory, so no key is checked (as in
	 * InfiniBand); with immediate it still consumes a receive. */
	if (len > 0) {
		status = lb_region(p, wr, len, &region, &dst.addr);
		if (status == DOCA_SUCCESS) {
			dst.len = (size_t)len;
			lb_sge_copy(&dst, 1, wr->sge, wr->num_sge, len);
			softdoca_mmap_region_release(&region);
		}
	}
	if (recv != NULL)
		lb_recv_complete(p, recv, wr, status, len);
	wr->status = status;
	return LB_DONE;
}

static enum lb_result lb_read(struct lb_conn *p, struct engine_wr *wr)
{
	uint64_t len = wr->remote.len;
	struct softdoca_mmap_region region;
	struct engine_sge src;
	doca_error_t status;

	wr->status = DOCA_SUCCESS;
	if (len == 0)
		return LB_DONE; /* nothing to read, no key to check */
	if (len > lb_sge_total(wr->sge, wr->num_sge)) {
		SDK_LOG_ERR_RL("connection %u: read of %llu bytes into %llu bytes of destination: refused", p->id,
			       (unsigned long long)len, (unsigned long long)lb_sge_total(wr->sge, wr->num_sge));
		wr->status = DOCA_ERROR_IO_FAILED;
		return LB_DONE;
	}
	status = lb_region(p, wr, len, &region, &src.addr);
	if (status != DOCA_SUCCESS) {
		wr->status = status;
		return LB_DONE;
	}
	src.len = (size_t)len;
	lb_sge_copy(wr->sge, wr->num_sge, &src, 1, len);
	softdoca_mmap_region_release(&region);
	wr->result_len = len;
	return LB_DONE;
}

/* 8-byte results (atomics, sync event get and add) land in the sge list. */
static void lb_store_value(struct engine_wr *wr, uint64_t value)
{
	struct engine_sge src = {.addr = &value, .len = sizeof(value)};

	lb_sge_copy(wr->sge, wr->num_sge, &src, 1, sizeof(value));
	wr->result_len = sizeof(value);
}

static enum lb_result lb_atomic(struct lb_conn *p, struct engine_wr *wr)
{
	struct softdoca_mmap_region region;
	uint64_t *target, old;
	void *local;

	if (wr->remote.addr % 8 != 0) {
		SDK_LOG_ERR_RL("connection %u: %s refused: address %#llx is not 8-byte aligned", p->id, lb_def(wr)->name,
			       (unsigned long long)wr->remote.addr);
		wr->status = DOCA_ERROR_INVALID_VALUE;
		return LB_DONE;
	}
	wr->status = lb_region(p, wr, 8, &region, &local);
	if (wr->status != DOCA_SUCCESS)
		return LB_DONE;
	target = local;
	if (wr->opcode == ENGINE_OP_ATOMIC_CAS) {
		old = wr->compare;
		/* On mismatch old receives the current value, as RDMA reports. */
		__atomic_compare_exchange_n(target, &old, wr->operand, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		old = __atomic_fetch_add(target, wr->operand, __ATOMIC_SEQ_CST);
	}
	softdoca_mmap_region_release(&region);
	lb_store_value(wr, old);
	return LB_DONE;
}

static enum lb_result lb_sync(struct lb_conn *p, struct engine_wr *wr)
{
	struct softdoca_sync_event_ref ref;
	uint64_t value = 0;
	struct engine_sge dst = {.addr = &value, .len = sizeof(value)};

	wr->status = lb_ctx_permits(p, wr);
	if (wr->status != DOCA_SUCCESS)
		return LB_DONE;
	if (wr->opcode == ENGINE_OP_SYNC_SET && lb_sge_total(wr->sge, wr->num_sge) != sizeof(value)) {
		SDK_LOG_ERR_RL("connection %u: sync event set carries %llu bytes, not 8", p->id,
			       (unsigned long long)lb_sge_total(wr->sge, wr->num_sge));
		wr->status = DOCA_ERROR_INVALID_VALUE;
		return LB_DONE;
	}
	if (softdoca_sync_event_lookup(wr->remote.region_id, wr->remote.secret, &ref) != DOCA_SUCCESS) {
		lb_refuse(wr, ENGINE_REFUSAL_SYNC_KEY, 0);
		SDK_LOG_ERR_RL("connection %u: %s refused: sync event %llu is unknown, stopped, or the key is wrong",
			       p->id, lb_def(wr)->name, (unsigned long long)wr->remote.region_id);
		wr->status = DOCA_ERROR_NOT_PERMITTED;
		return LB_DONE;
	}
	switch (wr->opcode) {
	case ENGINE_OP_SYNC_GET:
		lb_store_value(wr, softdoca_sync_event_ref_get(&ref));
		break;
	case ENGINE_OP_SYNC_SET:
		lb_sge_copy(&dst, 1, wr->sge, wr->num_sge, sizeof(value));
		softdoca_sync_event_ref_set(&ref, value);
		break;
	default:
		lb_store_value(wr, softdoca_sync_event_ref_add(&ref, wr->operand));
		break;
	}
	softdoca_sync_event_release(&ref);
	return LB_DONE;
}

/* Run the head operation wr at its target p. */
static enum lb_result lb_exec(struct lb_conn *p, struct engine_wr *wr)
{
	if (p->state == LB_EXPORTED && !p->worker->conf.dc) {
		/* The target has not connected yet: the sender keeps retrying. */
		lb_park(p, LB_NOT_CONNECTED_RETRY_NS);
		return LB_WAIT;
	}
	switch (wr->opcode) {
	case ENGINE_OP_SEND:
	case ENGINE_OP_SEND_IMM:
		return lb_send(p, wr);
	case ENGINE_OP_WRITE:
	case ENGINE_OP_WRITE_IMM:
		return lb_write(p, wr);
	case ENGINE_OP_READ:
		return lb_read(p, wr);
	case ENGINE_OP_ATOMIC_CAS:
	case ENGINE_OP_ATOMIC_FADD:
		return lb_atomic(p, wr);
	default:
		return lb_sync(p, wr); /* lb_post admits no other opcode */
	}
}

/* Run p's target queue from the head until an operation has to wait. */
static void lb_run(struct lb_conn *p)
{
	while (p->inq_head != NULL && p->state != LB_CLOSED) {
		if (lb_exec(p, p->inq_head) == LB_WAIT)
			return;
		{
			struct engine_wr *wr = lb_inq_pop(p);

			lb_wr_finish(wr, wr->status);
		}
	}
}

/* A receive was posted on w: the operations waiting for one may run. */
static void lb_run_worker(struct lb_worker *w)
{
	for (uint32_t i = 0; i < w->num_conns && w->recv_head != NULL; i++)
		if (w->conns[i].inq_head != NULL)
			lb_run(&w->conns[i]);
}

/* Fail heads whose wait is over; returns how many. */
static unsigned int lb_expire(uint64_t now)
{
	unsigned int n = 0;

	for (struct lb_worker *w = lb_workers; w != NULL; w = w->next) {
		for (uint32_t i = 0; i < w->num_conns; i++) {
			struct lb_conn *p = &w->conns[i];
			struct engine_wr *wr;
			doca_error_t status;

			if (p->inq_head == NULL || p->head_deadline_ns == 0 || p->head_deadline_ns > now)
				continue;
			wr = lb_inq_pop(p);
			if (p->state == LB_EXPORTED && !w->conf.dc) {
				SDK_LOG_ERR_RL("connection %u: the peer's %s waited for this side to connect and timed out",
					       p->id, lb_def(wr)->name);
				status = DOCA_ERROR_NOT_CONNECTED;
			} else {
				SDK_LOG_ERR_RL("connection %u: receiver not ready: no receive was posted for the peer's %s "
					       "within its RNR retries",
					       p->id, lb_def(wr)->name);
				status = DOCA_ERROR_TIME_OUT;
			}
			lb_wr_finish(wr, status);
			lb_run(p);
			n++;
		}
	}
	return n;
}

/* ---- connections -------------------------------------------------------- */

static void lb_check_established(struct lb_conn *c)
{
	bool ours = c->state == LB_CONNECTED || (c->worker->conf.dc && c->state == LB_EXPORTED);

	if (c->established_reported || c->from == NULL || !ours)
		return;
	c->established_reported = true;
	SDK_LOG_TRC("loopback connection %u established", c->id);
	lb_event(c, ENGINE_CONN_ESTABLISHED);
}

static void lb_close(struct lb_conn *x, doca_error_t ops_status, enum engine_conn_event event, bool report);

/* A connection of w not closed yet (the loopback engine has no RDMA CM). */
static bool lb_worker_may_receive(const struct lb_worker *w)
{
	for (uint32_t i = 0; i < w->num_conns; i++)
		if (w->conns[i].state == LB_EXPORTED || w->conns[i].state == LB_CONNECTED)
			return true;
	return false;
}

/* x is closing: y, linked to it, loses its peer. A y that was only
 * exported (x connected to it, it never connected) just forgets x. */
static void lb_unlink(struct lb_conn *x, struct lb_conn *y)
{
	if (y == NULL || y == x)
		return;
	if (y->from == x)
		y->from = NULL;
	if (y->peer == x)
		y->peer = NULL;
	if (y->state == LB_CONNECTED || (y->established_reported && y->state != LB_CLOSED))
		lb_close(y, DOCA_ERROR_CONNECTION_RESET, ENGINE_CONN_DISCONNECTED, true);
}

/* Nothing more moves on x: its operations fail with ops_status, its
 * peer's waiting in x's queue with CONNECTION_RESET, the peer closes
 * too; report tells x's own context (not for a local disconnect). */
static void lb_close(struct lb_conn *x, doca_error_t ops_status, enum engine_conn_event event, bool report)
{
	struct lb_conn *peer = x->peer, *from = x->from;

	if (x->state == LB_CLOSED || x->state == LB_FREE)
		return;
	x->state = LB_CLOSED;
	if (peer != NULL && peer->from == x)
		lb_inq_fail(peer, ops_status);
	lb_inq_fail(x, DOCA_ERROR_CONNECTION_RESET);
	x->peer = NULL;
	x->from = NULL;
	lb_unlink(x, peer);
	if (from != peer)
		lb_unlink(x, from);
	if (report)
		lb_event(x, event);
}

static void lb_desc_build(const struct lb_conn *c)
{
	uint8_t *d = (uint8_t *)c->desc;
	uint64_t serial = c->worker->serial;

	memcpy(d, LB_DESC_MAGIC, 4);
	d[LB_DESC_OFF_VERSION] = LB_DESC_VERSION;
	d[LB_DESC_OFF_FLAGS] = c->worker->conf.dc ? LB_DESC_FLAG_DC : 0;
	put_u16(d + LB_DESC_OFF_RESERVED, 0);
	memcpy(d + LB_DESC_OFF_WORKER, &serial, sizeof(serial));
	put_u32(d + LB_DESC_OFF_CONN, c->id);
	memcpy(d + LB_DESC_OFF_SECRET, c->secret, ENGINE_SECRET_LEN);
}

/* The connection a descriptor names, checked field by field (it comes
 * from the application, i.e. from outside). Lock held. */
static doca_error_t lb_desc_resolve(const struct lb_conn *c, const void *desc, size_t desc_len,
				    struct lb_conn **peer_out)
{
	static const uint8_t zero[ENGINE_SECRET_LEN];
	const uint8_t *d = desc;
	struct engine_peer_side peer;
	uint64_t serial;
	uint32_t id;
	struct lb_worker *w;
	doca_error_t status;

	if (desc == NULL || desc_len != LB_DESC_LEN) {
		SDK_LOG_ERR("loopback descriptor of %zu bytes: it has %d (is the peer using SOFTDOCA_ENGINE=loopback too?)",
			    desc == NULL ? (size_t)0 : desc_len, LB_DESC_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (memcmp(d, LB_DESC_MAGIC, 4) != 0 || d[LB_DESC_OFF_VERSION] != LB_DESC_VERSION) {
		SDK_LOG_ERR("not a loopback descriptor of version %u (is the peer using SOFTDOCA_ENGINE=loopback too?)",
			    LB_DESC_VERSION);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((d[LB_DESC_OFF_FLAGS] & ~LB_DESC_FLAG_DC) != 0 || get_u16(d + LB_DESC_OFF_RESERVED) != 0) {
		SDK_LOG_ERR("loopback descriptor with unknown flags %#x or reserved bits set", d[LB_DESC_OFF_FLAGS]);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (memcmp(d + LB_DESC_OFF_SECRET, zero, ENGINE_SECRET_LEN) == 0) {
		SDK_LOG_ERR("loopback descriptor without a secret");
		return DOCA_ERROR_INVALID_VALUE;
	}
	serial = get_u64(d + LB_DESC_OFF_WORKER);
	id = get_u32(d + LB_DESC_OFF_CONN);
	for (w = lb_workers; w != NULL && w->serial != serial; w = w->next)
		;
	if (w == NULL) {
		/* Serials are never reused: this one's context stopped (or the
		 * descriptor is of another process, which this engine cannot reach). */
		SDK_LOG_ERR("rdma connection %u: DOCA_ERROR_INVALID_VALUE: the peer's descriptor is from an rdma context "
			    "of this process that has stopped since it exported it (or from another process, which "
			    "SOFTDOCA_ENGINE=loopback cannot reach); each doca_ctx_start makes new descriptors: export "
			    "again from the running context and pass the new descriptor",
			    c->id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (id == 0 || id > w->num_conns) {
		SDK_LOG_ERR("loopback descriptor names connection %u of worker %llu, which it does not have", id,
			    (unsigned long long)serial);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!!(d[LB_DESC_OFF_FLAGS] & LB_DESC_FLAG_DC) != w->conf.dc) {
		SDK_LOG_ERR("loopback descriptor of connection %u says %s, but its context is %s", id,
			    d[LB_DESC_OFF_FLAGS] & LB_DESC_FLAG_DC ? "DC" : "RC", w->conf.dc ? "DC" : "RC");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (w->conns[id - 1].state == LB_FREE || w->conns[id - 1].state == LB_CLOSED ||
	    !softdoca_secret_equal(w->conns[id - 1].secret, d + LB_DESC_OFF_SECRET, ENGINE_SECRET_LEN)) {
		SDK_LOG_ERR("loopback descriptor of connection %u: closed, or its secret is wrong", id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* In this process: the peer's settings themselves, not a claim. */
	peer.dc = w->conf.dc;
	peer.gid_type = w->conf.gid_type;
	peer.gid_index = w->conf.gid_index;
	status = engine_sides_agree(c->id, &c->worker->conf, &peer);
	if (status != DOCA_SUCCESS)
		return status;
	*peer_out = &w->conns[id - 1];
	return DOCA_SUCCESS;
}

static doca_error_t lb_connect_locked(struct lb_conn *c, const void *desc, size_t desc_len)
{
	struct lb_conn *p;
	doca_error_t status;

	if (c->state != LB_EXPORTED) {
		SDK_LOG_ERR("connection %u is %s: connect works once, on an exported connection", c->id,
			    c->state == LB_CONNECTED ? "already connected" : "closed");
		return DOCA_ERROR_BAD_STATE;
	}
	status = lb_desc_resolve(c, desc, desc_len, &p);
	if (status != DOCA_SUCCESS)
		return status;
	if ((c->from != NULL && c->from != p) || (p->from != NULL && p->from != c) ||
	    (p->state == LB_CONNECTED && p->peer != c)) {
		SDK_LOG_ERR("connection %u: the descriptor's connection %u is already paired with another", c->id, p->id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	c->peer = p;
	c->state = LB_CONNECTED;
	p->from = c;
	SDK_LOG_TRC("loopback connection %u connected to connection %u", c->id, p->id);
	lb_check_established(c);
	lb_check_established(p);
	/* Operations that waited for us to connect may run now. */
	lb_run(c);
	return DOCA_SUCCESS;
}

/* ---- the ops --------------------------------------------------------------- */

static doca_error_t lb_worker_create(struct doca_dev *dev, const struct engine_worker_conf *conf,
				     struct engine_worker **worker_out)
{
	struct lb_worker *w;

	(void)dev; /* no device: peers are in this process */
	if (conf->max_connections == 0 || conf->send_queue_size == 0) {
		SDK_LOG_ERR("engine worker needs at least one connection and one send queue slot");
		return DOCA_ERROR_INVALID_VALUE;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		goto no_memory;
	w->conns = calloc(conf->max_connections, sizeof(*w->conns));
	if (w->conns == NULL)
		goto free_worker;
	w->conf = *conf;
	pthread_mutex_lock(&lb_lock);
	w->serial = lb_next_serial++;
	w->next = lb_workers;
	lb_workers = w;
	pthread_mutex_unlock(&lb_lock);
	*worker_out = (struct engine_worker *)w;
	return DOCA_SUCCESS;

free_worker:
	free(w);
no_memory:
	SDK_LOG_ERR("loopback engine: no memory for a worker of %u connections", conf->max_connections);
	return DOCA_ERROR_NO_MEMORY;
}

static void lb_worker_destroy(struct engine_worker *worker)
{
	struct lb_worker *w = lb_worker_of(worker);
	struct lb_worker **link;

	if (w == NULL)
		return;
	pthread_mutex_lock(&lb_lock);
	/* Peers see a disconnection; nothing of ours stays linked. */
	for (uint32_t i = 0; i < w->num_conns; i++)
		lb_close(&w->conns[i], DOCA_ERROR_IO_FAILED, ENGINE_CONN_DISCONNECTED, false);
	lb_recv_fail_all(w, DOCA_ERROR_IO_FAILED);
	for (link = &lb_workers; *link != NULL; link = &(*link)->next) {
		if (*link == w) {
			*link = w->next;
			break;
		}
	}
	pthread_mutex_unlock(&lb_lock);
	free(w->conns);
	free(w);
}

static unsigned int lb_worker_progress(struct engine_worker *worker)
{
	unsigned int n;

	(void)worker; /* deadlines of any worker: the target may never progress */
	if (atomic_load_explicit(&lb_parked, memory_order_relaxed) == 0)
		return 0;
	pthread_mutex_lock(&lb_lock);
	n = lb_expire(lb_now_ns());
	pthread_mutex_unlock(&lb_lock);
	return n;
}

static void lb_worker_flush(struct engine_worker *worker)
{
	struct lb_worker *w = lb_worker_of(worker);

	pthread_mutex_lock(&lb_lock);
	for (uint32_t i = 0; i < w->num_conns; i++) {
		struct lb_conn *c = &w->conns[i];

		if (c->peer != NULL && c->peer->from == c)
			lb_inq_fail(c->peer, DOCA_ERROR_IO_FAILED);
	}
	lb_recv_fail_all(w, DOCA_ERROR_IO_FAILED);
	pthread_mutex_unlock(&lb_lock);
}

static uint32_t lb_worker_outstanding(struct engine_worker *worker)
{
	struct lb_worker *w = lb_worker_of(worker);
	uint32_t n;

	pthread_mutex_lock(&lb_lock);
	n = w->outstanding;
	pthread_mutex_unlock(&lb_lock);
	return n;
}

static doca_error_t lb_conn_export_locked(struct lb_worker *w, struct lb_conn **conn_out)
{
	struct lb_conn *c = NULL;
	doca_error_t status;

	for (uint32_t i = 0; i < w->conf.max_connections && c == NULL; i++)
		if (w->conns[i].state == LB_FREE && w->conns[i].busy == 0)
			c = &w->conns[i];
	if (c == NULL) {
		SDK_LOG_ERR("all %u connections of this context are in use (doca_rdma_set_max_num_connections)",
			    w->conf.max_connections);
		return DOCA_ERROR_FULL;
	}
	memset(c, 0, sizeof(*c));
	/* A fresh secret: a descriptor of the slot's last use names nothing. */
	status = softdoca_secret_generate(c->secret, sizeof(c->secret));
	if (status != DOCA_SUCCESS)
		return status;
	c->worker = w;
	c->id = (uint32_t)(c - w->conns) + 1;
	c->state = LB_EXPORTED;
	lb_desc_build(c);
	if (c->id > w->num_conns)
		w->num_conns = c->id;
	*conn_out = c;
	return DOCA_SUCCESS;
}

static doca_error_t lb_conn_export(struct engine_worker *worker, struct engine_conn **conn_out, const void **desc,
				   size_t *desc_len)
{
	struct lb_conn *c;
	doca_error_t status;

	pthread_mutex_lock(&lb_lock);
	status = lb_conn_export_locked(lb_worker_of(worker), &c);
	pthread_mutex_unlock(&lb_lock);
	if (status != DOCA_SUCCESS)
		return status;
	*conn_out = (struct engine_conn *)c;
	*desc = c->desc;
	*desc_len = sizeof(c->desc);
	return DOCA_SUCCESS;
}

static doca_error_t lb_conn_connect(struct engine_conn *conn, const void *desc, size_t desc_len)
{
	doca_error_t status;

	pthread_mutex_lock(&lb_lock);
	status = lb_connect_locked(lb_conn_of(conn), desc, desc_len);
	pthread_mutex_unlock(&lb_lock);
	return status;
}

static doca_error_t lb_conn_disconnect(struct engine_conn *conn)
{
	struct lb_conn *c = lb_conn_of(conn);

	pthread_mutex_lock(&lb_lock);
	lb_close(c, DOCA_ERROR_CONNECTION_RESET, ENGINE_CONN_DISCONNECTED, false);
	/* The last way in, a connection that was up, closed: the posted
	 * receives are flushed, as in conn.c's engine_conn_disconnect. */
	if (c->established_reported && !lb_worker_may_receive(c->worker))
		lb_recv_fail_all(c->worker, DOCA_ERROR_IO_FAILED);
	pthread_mutex_unlock(&lb_lock);
	return DOCA_SUCCESS;
}

static void lb_conn_release(struct engine_conn *conn)
{
	struct lb_conn *c = lb_conn_of(conn);

	pthread_mutex_lock(&lb_lock);
	if (c->state == LB_CLOSED)
		c->state = LB_FREE;
	pthread_mutex_unlock(&lb_lock);
}

static doca_error_t lb_no_cm(const char *what)
{
	SDK_LOG_ERR("%s: the loopback engine (SOFTDOCA_ENGINE=loopback) has no RDMA CM; use export/connect", what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t lb_listen(struct engine_worker *worker, uint16_t port)
{
	(void)worker;
	(void)port;
	return lb_no_cm("listen");
}

static doca_error_t lb_listen_stop(struct engine_worker *worker, uint16_t port)
{
	(void)worker;
	(void)port;
	return lb_no_cm("stop listening");
}

static doca_error_t lb_conn_connect_addr(struct engine_worker *worker, const struct sockaddr *addr,
					 socklen_t addr_len, void (*bind)(void *arg, struct engine_conn *conn),
					 void *arg, struct engine_conn **conn_out)
{
	(void)worker;
	(void)addr;
	(void)addr_len;
	(void)bind;
	(void)arg;
	(void)conn_out;
	return lb_no_cm("connect to an address");
}

static doca_error_t lb_conn_accept(struct engine_conn *conn, const void *private_data, uint8_t private_data_len)
{
	(void)conn;
	(void)private_data;
	(void)private_data_len;
	return lb_no_cm("accept");
}

static doca_error_t lb_conn_reject(struct engine_conn *conn)
{
	(void)conn;
	return lb_no_cm("reject");
}

/* No address: the caller says so. */
static doca_error_t lb_conn_peer_addr(const struct engine_conn *conn, struct sockaddr_storage *addr, socklen_t *len)
{
	(void)conn;
	(void)addr;
	(void)len;
	return DOCA_ERROR_NOT_FOUND;
}

static uint32_t lb_conn_id(const struct engine_conn *conn)
{
	return ((const struct lb_conn *)conn)->id;
}

static void lb_conn_set_user(struct engine_conn *conn, void *user)
{
	lb_conn_of(conn)->user = user;
}

static void *lb_conn_get_user(const struct engine_conn *conn)
{
	return ((const struct lb_conn *)conn)->user;
}

static bool lb_conn_is_usable(const struct engine_conn *conn)
{
	return ((const struct lb_conn *)conn)->state == LB_CONNECTED;
}

static doca_error_t lb_wr_check(struct engine_wr *wr)
{
	if (wr->num_sge > ENGINE_MAX_SGE) {
		SDK_LOG_ERR("work request has %u buffers, at most %d", wr->num_sge, ENGINE_MAX_SGE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	wr->status = DOCA_SUCCESS;
	wr->result_len = 0;
	wr->result_conn = NULL;
	wr->refusal.kind = ENGINE_REFUSAL_NONE;
	wr->next = NULL;
	return DOCA_SUCCESS;
}

/* The timeline: here the request is sent and at its target at once. */
static void lb_trace_post(const struct lb_conn *c, const struct lb_conn *p, const struct engine_wr *wr)
{
	if (wr->trace_task != NULL)
		softdoca_trace_task_sent(wr->trace_task, wr->wr_id);
	softdoca_trace_at_target(softdoca_trace_conn_track(p->worker->conf.trace_track, p->id), lb_def(wr)->name,
				 wr->wr_id, c->id);
}

static doca_error_t lb_post_locked(struct lb_conn *c, struct engine_wr *wr)
{
	struct lb_conn *p = c->peer;

	if (c->state != LB_CONNECTED) {
		if (c->state == LB_CLOSED || c->state == LB_FREE)
			SDK_LOG_ERR("work request on connection %u, which is closed (disconnected or failed)", c->id);
		else
			SDK_LOG_ERR("work request on a connection that is not connected yet (connect it first)");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	if (c->busy >= c->worker->conf.send_queue_size)
		return DOCA_ERROR_FULL;
	c->busy++;
	c->worker->outstanding++;
	wr->wr_id = c->next_seq++;
	if (unlikely(softdoca_trace_on))
		lb_trace_post(c, p, wr);
	if (p->inq_tail == NULL)
		p->inq_head = wr;
	else
		p->inq_tail->next = wr;
	p->inq_tail = wr;
	lb_run(p);
	return DOCA_SUCCESS;
}

static doca_error_t lb_post(struct engine_wr *wr)
{
	doca_error_t status;

	if (wr->conn == NULL || wr->opcode == ENGINE_OP_RECV || wr->opcode > ENGINE_OP_SYNC_ADD) {
		SDK_LOG_ERR("work request needs a connection and a remote opcode (opcode %u)", wr->opcode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = lb_wr_check(wr);
	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&lb_lock);
	status = lb_post_locked(lb_conn_of(wr->conn), wr);
	pthread_mutex_unlock(&lb_lock);
	return status;
}

static doca_error_t lb_post_recv(struct engine_worker *worker, struct engine_wr *wr)
{
	struct lb_worker *w = lb_worker_of(worker);
	doca_error_t status;

	if (wr->opcode != ENGINE_OP_RECV) {
		SDK_LOG_ERR("a receive must have opcode RECV, not %u", wr->opcode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = lb_wr_check(wr);
	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&lb_lock);
	if (w->recv_tail == NULL)
		w->recv_head = wr;
	else
		w->recv_tail->next = wr;
	w->recv_tail = wr;
	w->outstanding++;
	/* Sends may be waiting for exactly this receive. */
	lb_run_worker(w);
	pthread_mutex_unlock(&lb_lock);
	return DOCA_SUCCESS;
}

/* Posts run at once here: nothing is held back. */
static void lb_flush_posts(struct engine_worker *worker)
{
	(void)worker;
}

const struct engine_ops engine_loopback_ops = {
	.name = "loopback",
	.worker_create = lb_worker_create,
	.worker_destroy = lb_worker_destroy,
	.worker_progress = lb_worker_progress,
	.worker_flush = lb_worker_flush,
	.worker_outstanding = lb_worker_outstanding,
	.conn_export = lb_conn_export,
	.conn_connect = lb_conn_connect,
	.conn_disconnect = lb_conn_disconnect,
	.conn_release = lb_conn_release,
	.listen = lb_listen,
	.listen_stop = lb_listen_stop,
	.conn_connect_addr = lb_conn_connect_addr,
	.conn_accept = lb_conn_accept,
	.conn_reject = lb_conn_reject,
	.conn_peer_addr = lb_conn_peer_addr,
	.conn_id = lb_conn_id,
	.conn_set_user = lb_conn_set_user,
	.conn_get_user = lb_conn_get_user,
	.conn_is_usable = lb_conn_is_usable,
	.post = lb_post,
	.post_recv = lb_post_recv,
	.flush_posts = lb_flush_posts,
};
