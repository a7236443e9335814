/*
 * softdoca — the target side: every incoming operation is checked before
 * it touches memory, and runs in arrival order per connection.
 *
 * Checks: the connection id and secret (else the message is dropped), then
 * for one-sided operations the region id and secret, the bounds, the
 * permission the operation needs, that the region is still started, and
 * 8-byte alignment for atomics. A failed check touches nothing and answers
 * with the error the initiator's task reports and, for the context's and
 * the region's checks, the reason (op->why: which set lacks which flag,
 * or the region's bounds), which the initiator's log states.
 *
 * Ordering (RC): operations of one connection take effect in the order
 * they arrived, and are answered in that order. An operation that cannot
 * finish at once — its payload comes by rendezvous, it waits for a posted
 * receive (receiver not ready) or for our own connect, its read answer is
 * being sent, it waits for room in the worker's bounce pool (PCI-imported
 * memory, see bounce_get) — holds the head of the connection's queue,
 * and the ones behind it wait: a receive completion implies that earlier
 * writes have landed, and a read sees earlier writes. One exception keeps
 * bulk writes streaming: while the head is a write whose payload is
 * arriving, the plain writes behind it (up to TQ_MAX_RX receiving at
 * once) may start theirs, unless their range overlaps one still arriving;
 * they are answered in order all the same (LANDED until they reach the
 * head).
 *
 * An operation's states (enum tgt_op_state):
 *
 *   QUEUED ---> PARKED      waits for a posted receive or our connect,
 *     ^  <---               with a deadline (engine_target_expire)
 *     |
 *     +-----> RECEIVING     its payload comes by rendezvous (rndv_done)
 *     +-----> ANSWERING     a read: its answer is being sent (resp_finish)
 *     +-----> LANDED        a write started behind the head is over; it is
 *                 |         answered when it reaches the head
 *                 +-------> DROPPED   the connection went away meanwhile:
 *                                     the callback frees it
 *
 * An operation that finishes at the head goes from QUEUED (or PARKED) to
 * freed; RECEIVING and ANSWERING end in tgt_op_finished. Each opcode's
 * handler is found in tgt_opdefs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <doca_types.h>

#include "core_engine.h"
#include "engine_internal.h"

SDK_LOG_REGISTER(ENGINE::TARGET)

/* How long an operation waits for our side to connect, as RC hardware
 * keeps retrying a peer whose queue pair is not ready yet. */
#define NOT_CONNECTED_RETRY_NS (30ULL * 1000000000ULL)
/* Most operations one connection may have waiting. */
#define TQ_MAX 4096
/* Writes behind the head: how far down the queue they may start, and
 * how many payloads may arrive at once. */
#define TQ_AHEAD 16
#define TQ_MAX_RX 8

/* Where a target operation is (the file comment draws the transitions). */
enum tgt_op_state {
	TGT_OP_QUEUED = 0, /* in its connection's queue: runs when it is the head */
	TGT_OP_PARKED,     /* the head, waiting for a posted receive or our connect, until deadline_ns */
	TGT_OP_RECEIVING,  /* the head; its rendezvous payload is arriving (rndv) */
	TGT_OP_ANSWERING,  /* the head, a read; its answer is being sent */
	TGT_OP_LANDED,     /* a write started behind the head, over: answered (result) at the head */
	TGT_OP_DROPPED,    /* off the queue (its connection is gone); the callback frees it */
};

/* A rendezvous receive of an operation's payload. */
struct rndv_ctx {
	struct engine_conn *conn;
	struct tgt_op *op;
	struct engine_wr *recv;              /* SEND*, WRITE_IMM */
	struct softdoca_mmap_region region;  /* WRITE* */
	bool holds_region;
	/* A write into a PCI region lands here first (bounce_get), then
	 * goes to bounce_addr in the exporting process. */
	void *bounce;
	uint64_t bounce_addr;
	/* Where the payload lands, trimmed to its length: UCX reads this
	 * list until the receive completes. */
	uint32_t num_iov;
	struct engine_sge iov[ENGINE_MAX_SGE];
	void *req;                           /* UCX's receive request */
	struct rndv_ctx *next;               /* the worker's in-flight list */
};

/* An incoming operation, from its arrival until it is retired. */
struct tgt_op {
	struct wire_req req;
	enum tgt_op_state state;
	void *data;            /* eager payload kept by the link (given back with data_release) */
	const struct link_ops *link; /* the link it came on: data belongs to it */
	size_t data_len;       /* payload length (eager or rendezvous) */
	bool rndv;             /* the payload comes by rendezvous: data is its descriptor */
	uint64_t deadline_ns;  /* PARKED: fail with an RNR / not-connected error after this */
	doca_error_t result;   /* LANDED: what its answer says */
	struct engine_refusal why; /* refused by a check: the reason its answer gives */
	bool replied;          /* LANDED: its answer went already (a read behind the head) */
	struct tgt_op *next;   /* the connection's queue */
	struct tgt_batch *batch; /* data lies in this batch message (held once) */
	struct rndv_ctx rx;    /* RECEIVING (and DROPPED from it): the payload's receive */
};

/* A batch message whose payload requests still use (they hold it). */
struct tgt_batch {
	void *data;            /* the link's (given back with data_release) */
	const struct link_ops *link;
	uint32_t refs;
};

enum tgt_result {
	TGT_DONE,    /* finished (answered); pop it */
	TGT_PENDING, /* waits: for data, a receive, a connect, or its answer's send */
};

/* The transitions the file comment draws; anything else is a bug here. */
static const uint8_t op_next[] = {
	[TGT_OP_QUEUED] = 1u << TGT_OP_PARKED | 1u << TGT_OP_RECEIVING | 1u << TGT_OP_ANSWERING | 1u << TGT_OP_LANDED,
	[TGT_OP_PARKED] = 1u << TGT_OP_QUEUED,
	[TGT_OP_RECEIVING] = 1u << TGT_OP_QUEUED | 1u << TGT_OP_LANDED | 1u << TGT_OP_DROPPED,
	[TGT_OP_ANSWERING] = 1u << TGT_OP_QUEUED | 1u << TGT_OP_LANDED | 1u << TGT_OP_DROPPED,
	[TGT_OP_LANDED] = 0,
	[TGT_OP_DROPPED] = 0,
};

static inline void op_to(struct tgt_op *op, enum tgt_op_state to)
{
	if (unlikely(!(op_next[op->state] & (1u << to))))
		SDK_LOG_ERR("target operation: state %d to %d is not a transition", (int)op->state, (int)to);
	op->state = to;
}

/* Waiting for UCX (its payload, its answer's send): not to be run again. */
static inline bool op_in_flight(const struct tgt_op *op)
{
	return op->state == TGT_OP_RECEIVING || op->state == TGT_OP_ANSWERING || op->state == TGT_OP_DROPPED;
}

/* An answer on its way; lives until UCX has sent it. */
struct tgt_resp {
	struct wire_resp hdr;
	struct wire_ack ack;                 /* an acknowledgement travels from here */
	struct engine_conn *conn;
	struct tgt_op *op;                   /* READ: the op waits for this send */
	struct softdoca_mmap_region region;  /* READ: held while UCX reads it */
	bool holds_region;
	uint64_t small_payload;              /* an 8-byte payload travels from here */
	void *bounce;                        /* READ of a PCI region: the payload (bounce_get), ours */
	void *req;                           /* the link's request while the send is on its way */
	struct tgt_resp *next;               /* the worker's list, while holding a region */
};

/* ---- pools ------------------------------------------------------------ */

/* Operations, answers and batch holders come from per-worker pools that
 * grow by chunks and are given back only with the worker: once they have
 * grown to the load, the data path allocates nothing. A free object's
 * first bytes link it to the next free one. */
#define POOL_CHUNK 64

struct engine_pool_chunk {
	struct engine_pool_chunk *next;
	max_align_t objs[];
};

static void pool_put(struct engine_pool *pl, void *obj)
{
	memcpy(obj, &pl->free, sizeof(pl->free));
	pl->free = obj;
}

static void *pool_get(struct engine_worker *w, struct engine_pool *pl, size_t size)
{
	struct engine_pool_chunk *ch;
	void *obj = pl->free;

	if (obj != NULL) {
		memcpy(&pl->free, obj, sizeof(pl->free));
		return obj;
	}
	ch = malloc(sizeof(*ch) + size * POOL_CHUNK);
	if (ch == NULL)
		return NULL;
	ch->next = w->chunks;
	w->chunks = ch;
	for (int i = POOL_CHUNK - 1; i > 0; i--)
		pool_put(pl, (uint8_t *)ch->objs + (size_t)i * size);
	return ch->objs;
}

static struct tgt_op *op_get(struct engine_worker *w)
{
	struct tgt_op *op = pool_get(w, &w->op_pool, sizeof(*op));

	if (op != NULL)
		op->next = NULL;
	return op;
}

static void op_put(struct engine_worker *w, struct tgt_op *op)
{
	pool_put(&w->op_pool, op);
}

static struct tgt_resp *resp_get(struct engine_worker *w)
{
	struct tgt_resp *resp = pool_get(w, &w->resp_pool, sizeof(*resp));

	if (resp != NULL)
		memset(resp, 0, sizeof(*resp));
	return resp;
}

static void resp_put(struct engine_worker *w, struct tgt_resp *resp)
{
	pool_put(&w->resp_pool, resp);
}

static struct tgt_batch *tbatch_get(struct engine_worker *w)
{
	return pool_get(w, &w->tbatch_pool, sizeof(struct tgt_batch));
}

static void tbatch_put(struct engine_worker *w, struct tgt_batch *b)
{
	pool_put(&w->tbatch_pool, b);
}

/* ---- bounce buffers (PCI-imported memory) ------------------------------ */

/* A rendezvous write into or read of memory another process exported
 * over PCI goes through a buffer of ours (process_vm_* copies it). They
 * come from the worker's bounce pool: reused, so the data path allocates
 * only while the pool grows to the load, and bounded: while the bytes in
 * use would pass the budget the operation waits in its queue (the head
 * runs again when a buffer comes back, bounce_kick). One operation
 * larger than the budget runs alone. */
#define BOUNCE_ENV "SOFTDOCA_PCI_BOUNCE_KIB"
#define BOUNCE_DEFAULT_KIB 65536u
#define BOUNCE_MIN_KIB 64u
#define BOUNCE_MAX_KIB (4u << 20)
#define BOUNCE_ROUND 4096u

struct engine_bounce {
	struct engine_bounce *next; /* the free list */
	size_t cap;
	max_align_t data[];
};

static size_t bounce_budget;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

static void bounce_budget_init(void)
{
	const char *text = getenv(BOUNCE_ENV);
	uint64_t kib = BOUNCE_DEFAULT_KIB;

	if (text != NULL && !softdoca_parse_uint(text, BOUNCE_MIN_KIB, BOUNCE_MAX_KIB, &kib)) {
		SDK_LOG_ERR(BOUNCE_ENV "=\"%s\" is not a whole number of KiB in [%u, %u]; using %u", text,
			    BOUNCE_MIN_KIB, BOUNCE_MAX_KIB, BOUNCE_DEFAULT_KIB);
		kib = BOUNCE_DEFAULT_KIB;
	}
	bounce_budget = (size_t)kib * 1024u;
}

static size_t bounce_limit(void)
{
	pthread_once(&bounce_once, bounce_budget_init);
	return bounce_budget;
}

static void bounce_release(struct engine_bounce_pool *bp, struct engine_bounce *b)
{
	bp->held -= b->cap;
	free(b);
}

/* The smallest free buffer of len to max bytes, unlinked; NULL if none. */
static struct engine_bounce *bounce_take_fit(struct engine_bounce_pool *bp, size_t len, size_t max)
{
	struct engine_bounce **best = NULL, *b;

	for (struct engine_bounce **link = &bp->free; *link != NULL; link = &(*link)->next)
		if ((*link)->cap >= len && (*link)->cap <= max && (best == NULL || (*link)->cap < (*best)->cap))
			best = link;
	if (best == NULL)
		return NULL;
	b = *best;
	*best = b->next;
	return b;
}

/* A buffer of at least len bytes. NULL: *full says the budget is in use
 * (wait for bounce_kick), else out of memory. */
static void *bounce_get(struct engine_worker *w, size_t len, bool *full)
{
	struct engine_bounce_pool *bp = &w->bounce;
	size_t budget = bounce_limit(), need;
	struct engine_bounce *b;

	*full = false;
	if (len > SIZE_MAX - BOUNCE_ROUND - sizeof(*b))
		return NULL;
	need = (len + BOUNCE_ROUND - 1) / BOUNCE_ROUND * BOUNCE_ROUND;
	if (bp->used > 0 && (bp->used >= budget || need > budget - bp->used)) {
		*full = true;
		bp->waiting = true;
		return NULL;
	}
	/* In use stays within the budget (or is this one operation). */
	b = bounce_take_fit(bp, len, bp->used > 0 ? budget - bp->used : SIZE_MAX);
	if (b == NULL) {
		/* The free ones are all too small: they make room first. */
		while (bp->free != NULL && bp->held + need > budget) {
			struct engine_bounce *old = bp->free;

			bp->free = old->next;
			bounce_release(bp, old);
		}
		b = malloc(sizeof(*b) + need);
		if (b == NULL)
			return NULL;
		b->cap = need;
		bp->held += need;
	}
	b->next = NULL;
	bp->used += b->cap;
	return b->data;
}

/* Give a buffer back (NULL: nothing). Waiters run at bounce_kick. */
static void bounce_put(struct engine_worker *w, void *data)
{
	struct engine_bounce_pool *bp = &w->bounce;
	struct engine_bounce *b;

	if (data == NULL)
		return;
	b = container_of(data, struct engine_bounce, data);
	bp->used -= b->cap;
	bp->returned = true;
	if (bp->held > bounce_limit()) {
		bounce_release(bp, b); /* over the budget after a large one: shrink */
		return;
	}
	b->next = bp->free;
	bp->free = b;
}

static void bounce_pool_free(struct engine_worker *w)
{
	struct engine_bounce_pool *bp = &w->bounce;

	while (bp->free != NULL) {
		struct engine_bounce *b = bp->free;

		bp->free = b->next;
		bounce_release(bp, b);
	}
}

static void tq_run(struct engine_conn *c);

/* An operation waits for bounce room and some came back: run every
 * connection's queue (a head, or a write or read behind it, may be the
 * one). Not nested; buffers that come back while it runs (answers sent
 * inline) make it look again, since nobody else may kick then. */
static void bounce_kick(struct engine_worker *w)
{
	struct engine_bounce_pool *bp = &w->bounce;

	if (!bp->waiting || !bp->returned || bp->kicking)
		return;
	bp->kicking = true;
	do {
		bp->waiting = false;
		bp->returned = false;
		for (uint32_t i = 0; i < w->num_conns; i++)
			if (w->conns[i].tq_head != NULL)
				tq_run(&w->conns[i]);
	} while (bp->waiting && bp->returned);
	bp->kicking = false;
}

/* The worker is gone (UCX will call back no more): free the chunks. */
void engine_target_pools_free(struct engine_worker *w)
{
	while (w->chunks != NULL) {
		struct engine_pool_chunk *ch = w->chunks;

		w->chunks = ch->next;
		free(ch);
	}
	w->op_pool.free = NULL;
	w->resp_pool.free = NULL;
	w->tbatch_pool.free = NULL;
	bounce_pool_free(w);
}

static void resp_unlink(struct engine_worker *w, struct tgt_resp *resp)
{
	struct tgt_resp **link;

	for (link = &w->resp_list; *link != NULL; link = &(*link)->next) {
		if (*link == resp) {
			*link = resp->next;
			return;
		}
	}
}

static void tbatch_put(struct engine_worker *w, struct tgt_batch *b);

static void op_release_data(struct engine_worker *w, struct tgt_op *op)
{
	if (op->data == NULL)
		return;
	if (op->batch != NULL) {
		struct tgt_batch *b = op->batch;

		op->batch = NULL;
		op->data = NULL;
		/* The batch's callback holds a reference while it runs. */
		if (--b->refs == 0) {
			b->link->data_release(w, b->data, false);
			tbatch_put(w, b);
		}
		return;
	}
	if (op == w->handler_op)
		w->handler_released = true; /* the link releases it when the handler says LINK_RX_DONE */
	else
		op->link->data_release(w, op->data, op->rndv);
	op->data = NULL;
}

static void op_unpark(struct engine_worker *w, struct tgt_op *op)
{
	if (op->state == TGT_OP_PARKED) {
		op_to(op, TGT_OP_QUEUED);
		op->deadline_ns = 0;
		w->parked--;
	}
}

/* A second park keeps the first deadline: the sender's retries run on. */
static void op_park(struct engine_worker *w, struct tgt_op *op, uint64_t timeout_ns)
{
	if (op->state == TGT_OP_PARKED)
		return;
	op_to(op, TGT_OP_PARKED);
	op->deadline_ns = timeout_ns == 0 ? UINT64_MAX : engine_now_ns() + timeout_ns;
	w->parked++;
	engine_svc_kick();
}

/* ---- answers -------------------------------------------------------- */

static void resp_sent(void *request, doca_error_t status, void *user);
static void resp_finish(struct tgt_resp *resp, doca_error_t status, bool async);

/* Send one answer (header at hdr, payload_len bytes at payload) on c's
 * endpoint; resp_finish when it is over. */
static void resp_send(struct engine_conn *c, struct tgt_resp *resp, uint16_t id, const void *hdr, size_t hdr_len,
		      const void *payload, size_t payload_len)
{
	struct engine_sge sge = {.addr = (void *)payload, .len = payload_len};
	struct link_send s = {
		.id = id,
		.header = hdr,
		.header_len = hdr_len,
		.iov = &sge,
		.iov_count = payload_len > 0 ? 1 : 0,
		.len = payload_len,
		.cb = resp_sent,
		.user = resp,
	};
	doca_error_t status = c->link->send(c, &s, &resp->req);

	if (status != DOCA_SUCCESS || resp->req == NULL)
		resp_finish(resp, status, false);
}
static void tgt_op_finished(struct engine_conn *c, struct tgt_op *op);

/* owned: a bounce buffer the answer gives back once sent (or NULL). */
static void tgt_answer_ex(struct engine_conn *c, struct tgt_op *op, doca_error_t status, uint64_t value,
			  const void *payload, size_t payload_len, struct softdoca_mmap_region *region, void *owned)
{
	struct tgt_resp *resp;

	/* Our own endpoint: it reports the peer's death and orders the
	 * answers with our BYE (the DC passive side makes one from the
	 * peer's HELLO). An RC side that has not connected has none: the
	 * initiator gives up on its own (keepalive.c). */
	ENGINE_TSAN_RELEASE();
	if (c->ep == NULL) {
		/* Nobody to answer (the endpoint died): drop what we hold. */
		if (region != NULL)
			softdoca_mmap_region_release(region);
		bounce_put(c->worker, owned);
		return;
	}
	/* It stands for what was retired before it, too. */
	c->ack_pending = false;
	c->ack_count = 0;
	resp = resp_get(c->worker);
	if (resp == NULL) {
		SDK_LOG_ERR_RL("no memory for an answer on connection %u", c->id);
		if (region != NULL)
			softdoca_mmap_region_release(region);
		bounce_put(c->worker, owned);
		return;
	}
	resp->bounce = owned;
	resp->hdr.version = WIRE_VERSION;
	resp->hdr.opcode = op->req.opcode;
	resp->hdr.dst_conn_id = c->peer_id;
	memcpy(resp->hdr.dst_secret, c->peer_secret, ENGINE_SECRET_LEN);
	resp->hdr.wr_id = op->req.wr_id;
	resp->hdr.status = wire_status_from_doca(status);
	resp->hdr.result_len = payload_len;
	resp->hdr.value = value;
	if (unlikely(status != DOCA_SUCCESS))
		wire_refusal_put(&op->why, &resp->hdr);
	resp->conn = c;
	if (region == NULL && payload_len == sizeof(resp->small_payload)) {
		/* UCX may read the payload after this returns: keep a copy. */
		memcpy(&resp->small_payload, payload, payload_len);
		payload = &resp->small_payload;
	}
	if (region != NULL) {
		resp->region = *region;
		resp->holds_region = true;
		resp->op = op;
	}
	if (resp->holds_region) {
		resp->next = c->worker->resp_list;
		c->worker->resp_list = resp;
	}
	resp_send(c, resp, WIRE_AM_RESP, &resp->hdr, sizeof(resp->hdr), payload, payload_len);
}

static void tgt_answer(struct engine_conn *c, struct tgt_op *op, doca_error_t status, uint64_t value,
		       const void *payload, size_t payload_len, struct softdoca_mmap_region *region)
{
	tgt_answer_ex(c, op, status, value, payload, payload_len, region, NULL);
}

/* The answer left (or failed). An asynchronous completion of a read's
 * answer ends the read, which held the head of its queue; an inline one
 * just tells tgt_read, which is still on the stack. */
static void resp_finish(struct tgt_resp *resp, doca_error_t status, bool async)
{
	struct tgt_op *op = resp->op;

	if (status != DOCA_SUCCESS)
		SDK_LOG_DBG("answer on connection %u not sent: %s", resp->conn->id, doca_error_get_name(status));
	if (resp->holds_region) {
		resp_unlink(resp->conn->worker, resp);
		softdoca_mmap_region_release(&resp->region);
	}
	bounce_put(resp->conn->worker, resp->bounce);
	resp->bounce = NULL;
	if (op != NULL && (op->state == TGT_OP_ANSWERING || op->state == TGT_OP_DROPPED)) {
		if (async)
			tgt_op_finished(resp->conn, op);
		else
			op_to(op, TGT_OP_QUEUED);
	}
	resp_put(resp->conn->worker, resp);
}

static void resp_sent(void *request, doca_error_t status, void *user)
{
	(void)request;
	resp_finish(user, status, true);
}

static void ack_send(struct engine_conn *c);

/* op succeeded and its success carries nothing back: the connection's
 * next acknowledgement stands for it. That goes out after the UCX
 * progress round that retired it (a batch of requests retires in one
 * round) or when the worker lock is released, after ENGINE_ACK_BATCH
 * operations of one round, or at once when the initiator asks (its send
 * queue is full). */
static void tgt_ack(struct engine_conn *c, const struct tgt_op *op)
{
	struct engine_worker *w = c->worker;

	c->ack_pending = true;
	c->ack_wr_id = op->req.wr_id;
	if (++c->ack_count >= ENGINE_ACK_BATCH || (op->req.flags & WIRE_REQ_ACK_NOW)) {
		ack_send(c);
		return;
	}
	if (c->ack_queued)
		return;
	c->ack_queued = true;
	c->ack_next = w->ack_list;
	w->ack_list = c;
}

static void ack_send(struct engine_conn *c)
{
	struct tgt_resp *resp;

	c->ack_pending = false;
	c->ack_count = 0;
	if (c->ep == NULL || c->state == CONN_CLOSED || c->state == CONN_FREE)
		return;
	ENGINE_TSAN_RELEASE();
	resp = resp_get(c->worker);
	if (resp == NULL) {
		SDK_LOG_ERR_RL("no memory for an acknowledgement on connection %u", c->id);
		return;
	}
	resp->conn = c;
	resp->ack.version = WIRE_VERSION;
	resp->ack.dst_conn_id = c->peer_id;
	memcpy(resp->ack.dst_secret, c->peer_secret, ENGINE_SECRET_LEN);
	resp->ack.wr_id = c->ack_wr_id;
	resp_send(c, resp, WIRE_AM_ACK, &resp->ack, sizeof(resp->ack), NULL, 0);
}

/* Send the acknowledgements owed: one per connection, for everything it
 * retired since its last answer. Lock held (engine_worker_unlock). */
void engine_acks_flush(struct engine_worker *w)
{
	struct engine_conn *c;

	while ((c = w->ack_list) != NULL) {
		w->ack_list = c->ack_next;
		c->ack_next = NULL;
		c->ack_queued = false;
		if (c->ack_pending)
			ack_send(c);
	}
}

/* ---- checks ---------------------------------------------------------- */

/* What each opcode is, for the dispatch and the log lines; opcodes are
 * checked (wire_check) before they index this. */
typedef enum tgt_result (*tgt_exec_fn)(struct engine_conn *c, struct tgt_op *op);

static enum tgt_result tgt_send(struct engine_conn *c, struct tgt_op *op);
static enum tgt_result tgt_write(struct engine_conn *c, struct tgt_op *op);
static enum tgt_result tgt_read(struct engine_conn *c, struct tgt_op *op);
static enum tgt_result tgt_atomic(struct engine_conn *c, struct tgt_op *op);
static enum tgt_result tgt_sync(struct engine_conn *c, struct tgt_op *op);

struct tgt_opdef {
	const char *name;
	tgt_exec_fn exec;
	uint32_t perm;      /* what the context (and a region) must grant; 0: none */
	bool waits_for_recv; /* may park for a receive: unparks itself */
};

static const struct tgt_opdef tgt_opdefs[ENGINE_OP_SYNC_ADD + 1] = {
	[ENGINE_OP_SEND] = {"send", tgt_send, 0, true},
	[ENGINE_OP_SEND_IMM] = {"send with immediate", tgt_send, 0, true},
	[ENGINE_OP_WRITE] = {"write", tgt_write, DOCA_ACCESS_FLAG_RDMA_WRITE, true},
	[ENGINE_OP_WRITE_IMM] = {"write with immediate", tgt_write, DOCA_ACCESS_FLAG_RDMA_WRITE, true},
	[ENGINE_OP_READ] = {"read", tgt_read, DOCA_ACCESS_FLAG_RDMA_READ, false},
	[ENGINE_OP_ATOMIC_CAS] = {"atomic compare-and-swap", tgt_atomic, DOCA_ACCESS_FLAG_RDMA_ATOMIC, false},
	[ENGINE_OP_ATOMIC_FADD] = {"atomic fetch-and-add", tgt_atomic, DOCA_ACCESS_FLAG_RDMA_ATOMIC, false},
	[ENGINE_OP_SYNC_GET] = {"sync event get", tgt_sync, DOCA_ACCESS_FLAG_RDMA_READ, false},
	[ENGINE_OP_SYNC_SET] = {"sync event set", tgt_sync, DOCA_ACCESS_FLAG_RDMA_WRITE, false},
	[ENGINE_OP_SYNC_ADD] = {"sync event add", tgt_sync, DOCA_ACCESS_FLAG_RDMA_ATOMIC, false},
};

static const struct tgt_opdef *op_def(const struct tgt_op *op)
{
	return &tgt_opdefs[op->req.opcode];
}

/* The context's permissions (doca_rdma_set_permissions) must grant what
 * the operation needs, whatever it names. */
static doca_error_t tgt_ctx_permits(struct engine_conn *c, struct tgt_op *op)
{
	uint32_t perm = op_def(op)->perm;

	if (c->worker->conf.permissions & perm)
		return DOCA_SUCCESS;
	op->why.kind = ENGINE_REFUSAL_CTX_PERM;
	op->why.perm = perm;
	SDK_LOG_ERR_RL("connection %u: %s refused: this RDMA context's permissions (doca_rdma_set_permissions) "
		       "lack %s",
		       c->id, op_def(op)->name, softdoca_access_flag_name(perm));
	return DOCA_ERROR_NOT_PERMITTED;
}

/* A region from a PCI export has no local address: *local carries the
 * exporter's address, reached only through tgt_pci_copy. */
static doca_error_t tgt_region_check(const struct softdoca_mmap_region *region, uint64_t addr, uint64_t len,
				     uint32_t perm, void **local)
{
	doca_error_t status;

	if (region->pci == NULL)
		return softdoca_mmap_region_check(region, addr, len, perm, local);
	status = softdoca_mmap_region_check_pci(region, addr, len, perm);
	if (status == DOCA_SUCCESS)
		*local = (void *)(uintptr_t)addr;
	return status;
}

/* Copy to or from a held PCI region (the host's memory, in another
 * process), answering as RDMA would: a revoked or refused export is
 * NOT_PERMITTED, a bad range INVALID_VALUE, a dead exporter IO_FAILED. */
static doca_error_t tgt_pci_copy(struct engine_conn *c, const struct tgt_op *op,
				 const struct softdoca_mmap_region *region, uint64_t addr, void *buf, size_t len,
				 bool to_region)
{
	doca_error_t status = softdoca_mmap_region_pci_copy(region, addr, buf, len, to_region);

	if (status == DOCA_SUCCESS)
		return DOCA_SUCCESS;
	SDK_LOG_ERR_RL("connection %u: %s %s PCI-imported memory failed: %s", c->id, op_def(op)->name,
		       to_region ? "into" : "of", doca_error_get_name(status));
	if (status == DOCA_ERROR_NOT_PERMITTED || status == DOCA_ERROR_NOT_FOUND)
		return DOCA_ERROR_NOT_PERMITTED;
	if (status == DOCA_ERROR_INVALID_VALUE)
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_ERROR_IO_FAILED;
}

/* Find and hold the region the request names, check range and permission.
 * Errors map to what the initiator's task reports: NOT_PERMITTED for a bad
 * key or a missing permission, INVALID_VALUE for a bad range. */
static doca_error_t tgt_region(struct engine_conn *c, struct tgt_op *op, uint64_t len,
			       struct softdoca_mmap_region *region, void **local)
{
	const struct wire_req *r = &op->req;
	const char *name = op_def(op)->name;
	uint32_t perm = op_def(op)->perm;
	doca_error_t status;

	status = tgt_ctx_permits(c, op);
	if (status != DOCA_SUCCESS)
		return status;
	status = softdoca_mmap_region_lookup(r->region_id, r->region_secret, region);

	if (status != DOCA_SUCCESS) {
		op->why.kind = ENGINE_REFUSAL_REGION_KEY;
		SDK_LOG_ERR_RL("connection %u: %s refused: memory region %llu is unknown, stopped, or the key is wrong",
			    c->id, name, (unsigned long long)r->region_id);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	status = tgt_region_check(region, r->remote_addr, len, perm, local);
	if (status == DOCA_SUCCESS)
		return DOCA_SUCCESS;
	/* The initiator's answer says what the region is, as we see it. */
	op->why.region_start = region->addr;
	op->why.region_end = region->addr + region->len;
	softdoca_mmap_region_release(region);
	if (status == DOCA_ERROR_NOT_PERMITTED) {
		op->why.kind = ENGINE_REFUSAL_REGION_PERM;
		op->why.perm = perm;
		SDK_LOG_ERR_RL("connection %u: %s refused: memory region %llu was not exported with %s", c->id,
			    name, (unsigned long long)r->region_id, softdoca_access_flag_name(perm));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	op->why.kind = ENGINE_REFUSAL_RANGE;
	SDK_LOG_ERR_RL("connection %u: %s refused: [%#llx, +%llu) is outside memory region %llu", c->id,
		    name, (unsigned long long)r->remote_addr, (unsigned long long)len,
		    (unsigned long long)r->region_id);
	return DOCA_ERROR_INVALID_VALUE;
}

/* ---- receives -------------------------------------------------------- */

static struct engine_wr *recv_take(struct engine_worker *w)
{
	struct engine_wr *wr = w->recv_head;

	if (wr == NULL)
		return NULL;
	w->recv_head = wr->next;
	if (w->recv_head == NULL)
		w->recv_tail = NULL;
	wr->next = NULL;
	return wr;
}

static uint64_t recv_capacity(const struct engine_wr *wr)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < wr->num_sge; i++)
		total += wr->sge[i].len;
	return total;
}

static void recv_complete(struct engine_conn *c, struct engine_wr *recv, const struct wire_req *r,
			  doca_error_t status, uint64_t len)
{
	recv->status = status;
	/* For a write with immediate this is the length written into the
	 * target region (verbs' byte_len for RECV_RDMA_WITH_IMM); the
	 * receive's own buffer is not touched (see rdma_task_results). */
	recv->result_len = len;
	recv->result_kind = r->opcode == ENGINE_OP_SEND       ? ENGINE_RECV_SEND
			    : r->opcode == ENGINE_OP_SEND_IMM ? ENGINE_RECV_SEND_IMM
							      : ENGINE_RECV_WRITE_IMM;
	recv->result_imm = r->imm;
	recv->result_conn = c;
	engine_wr_finish(c->worker, recv);
}

void engine_recv_fail_all(struct engine_worker *w, doca_error_t status)
{
	struct engine_wr *wr;

	while ((wr = recv_take(w)) != NULL) {
		wr->status = status;
		engine_wr_finish(w, wr);
	}
}

/* ---- execution --------------------------------------------------------- */

static void rndv_unlink(struct engine_worker *w, struct rndv_ctx *x)
{
	struct rndv_ctx **link;

	for (link = &w->rndv_list; *link != NULL; link = &(*link)->next) {
		if (*link == x) {
			*link = x->next;
			return;
		}
	}
}

/* The worker is destroyed: receives that never completed will not call
 * back. Release what they held. */
void engine_target_abandon(struct engine_worker *w)
{
	while (w->resp_list != NULL) {
		struct tgt_resp *resp = w->resp_list;

		w->resp_list = resp->next;
		softdoca_mmap_region_release(&resp->region);
		bounce_put(w, resp->bounce);
	}
	while (w->rndv_list != NULL) {
		struct rndv_ctx *x = w->rndv_list;

		w->rndv_list = x->next;
		if (x->holds_region)
			softdoca_mmap_region_release(&x->region);
		bounce_put(w, x->bounce);
		x->bounce = NULL;
		if (x->recv != NULL) {
			x->recv->status = DOCA_ERROR_IO_FAILED;
			engine_wr_finish(w, x->recv);
		}
	}
	/* The operations and answers themselves go with the pools. */
}

/* Copy the destination list, cut at len bytes. */
static uint32_t iov_trim(struct engine_sge *out, const struct engine_sge *in, uint32_t n, size_t len)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n && len > 0; i++) {
		size_t take = in[i].len < len ? in[i].len : len;

		if (take == 0)
			continue;
		out[k].addr = in[i].addr;
		out[k].len = take;
		len -= take;
		k++;
	}
	return k;
}

/* The answer of an operation whose success carries nothing back. */
static void tgt_reply(struct engine_conn *c, struct tgt_op *op, doca_error_t status)
{
	if (status == DOCA_SUCCESS)
		tgt_ack(c, op);
	else
		tgt_answer(c, op, status, 0, NULL, 0, NULL);
}

/* The end of every landing: give up the region, complete the receive
 * (recv_len: what it reports), answer. */
static enum tgt_result tgt_land_end(struct engine_conn *c, struct tgt_op *op, struct engine_wr *recv,
				    struct softdoca_mmap_region *region, doca_error_t status, uint64_t recv_len)
{
	if (region != NULL)
		softdoca_mmap_region_release(region);
	if (recv != NULL)
		recv_complete(c, recv, &op->req, status, recv_len);
	if (c->tq_head != op) {
		/* A write that started behind the head: answered in its turn. */
		op->result = status;
		op_to(op, TGT_OP_LANDED);
		op_release_data(c->worker, op);
		return TGT_PENDING;
	}
	tgt_reply(c, op, status);
	return TGT_DONE;
}

/* The same for a rendezvous landing, whose context holds the region. A
 * write into a PCI region goes on from its bounce buffer now. */
static enum tgt_result rndv_end(struct rndv_ctx *x, doca_error_t status, uint64_t recv_len)
{
	if (x->bounce != NULL) {
		if (status == DOCA_SUCCESS)
			status = tgt_pci_copy(x->conn, x->op, &x->region, x->bounce_addr, x->bounce, x->op->data_len,
					      true);
		bounce_put(x->conn->worker, x->bounce);
		x->bounce = NULL;
	}
	return tgt_land_end(x->conn, x->op, x->recv, x->holds_region ? &x->region : NULL, status, recv_len);
}

static void rndv_done(void *request, doca_error_t st, void *user)
{
	struct rndv_ctx *x = user;
	struct engine_conn *c = x->conn;
	struct tgt_op *op = x->op;
	doca_error_t status = st == DOCA_SUCCESS ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;

	(void)request;
	rndv_unlink(c->worker, x);
	x->req = NULL;
	if (op->state == TGT_OP_DROPPED) {
		/* The connection was dropped while the data came in. */
		if (x->holds_region)
			softdoca_mmap_region_release(&x->region);
		bounce_put(c->worker, x->bounce);
		x->bounce = NULL;
		if (x->recv != NULL) {
			x->recv->status = DOCA_ERROR_CONNECTION_ABORTED;
			engine_wr_finish(c->worker, x->recv);
		}
		op_put(c->worker, op);
		bounce_kick(c->worker);
		return;
	}
	rndv_end(x, status, op->data_len);
	tgt_op_finished(c, op);
}

/* Start the rendezvous receive of the payload into x->iov. */
static doca_error_t tgt_land_rndv(struct engine_worker *w, struct tgt_op *op, struct rndv_ctx *x, void **req)
{
	return op->link->recv_data(w, op->data, x->iov, x->num_iov, op->data_len, rndv_done, x, req);
}

/* Land the payload at dst: at once for eager data, or start the
 * rendezvous receive (the op then stays at the head until rndv_done). */
static enum tgt_result tgt_land(struct engine_conn *c, struct tgt_op *op, const struct engine_sge *dst, uint32_t nsge,
				struct engine_wr *recv, struct softdoca_mmap_region *region)
{
	struct engine_worker *w = c->worker;
	struct rndv_ctx *x;
	doca_error_t status;
	void *req = NULL;

	if (!op->rndv) {
		engine_sge_scatter(dst, nsge, op->data, op->data_len);
		return tgt_land_end(c, op, recv, region, DOCA_SUCCESS, op->data_len);
	}
	x = &op->rx;
	x->conn = c;
	x->op = op;
	x->recv = recv;
	x->holds_region = region != NULL;
	if (region != NULL)
		x->region = *region;
	x->req = NULL;
	x->num_iov = iov_trim(x->iov, dst, nsge, op->data_len);
	op_to(op, TGT_OP_RECEIVING);
	status = tgt_land_rndv(w, op, x, &req);
	op->data = NULL; /* the descriptor now belongs to the receive */
	if (status != DOCA_SUCCESS) {
		SDK_LOG_ERR_RL("connection %u: receiving a %zu-byte payload failed: %s", c->id, op->data_len,
			       doca_error_get_name(status));
		op_to(op, TGT_OP_QUEUED);
		return rndv_end(x, DOCA_ERROR_IO_FAILED, 0);
	}
	if (req == NULL) {
		/* Finished at once: the link did not call back. */
		op_to(op, TGT_OP_QUEUED);
		return rndv_end(x, DOCA_SUCCESS, op->data_len);
	}
	x->req = req;
	x->next = w->rndv_list;
	w->rndv_list = x;
	return TGT_PENDING;
}

static enum tgt_result tgt_fail(struct engine_conn *c, struct tgt_op *op, doca_error_t status)
{
	tgt_answer(c, op, status, 0, NULL, 0, NULL);
	return TGT_DONE;
}

static enum tgt_result tgt_send(struct engine_conn *c, struct tgt_op *op)
{
	struct engine_worker *w = c->worker;
	struct engine_wr *recv;

	if (w->recv_head == NULL) {
		/* Receiver not ready: wait, as the sender would keep retrying. */
		op_park(w, op, (uint64_t)op->req.rnr_timeout_ms * 1000000ULL);
		return TGT_PENDING;
	}
	op_unpark(w, op);
	recv = recv_take(w);
	if (op->data_len > recv_capacity(recv)) {
		SDK_LOG_ERR_RL("connection %u: a %zu-byte %s does not fit the posted receive (%llu bytes): both fail",
			    c->id, op->data_len, op_def(op)->name, (unsigned long long)recv_capacity(recv));
		return tgt_land_end(c, op, recv, NULL, DOCA_ERROR_TOO_BIG, 0);
	}
	return tgt_land(c, op, recv->sge, recv->num_sge, recv, NULL);
}

/* A write into a PCI region: eager data goes straight to the exporter;
 * a rendezvous payload lands in its bounce buffer first (rndv_end). */
static enum tgt_result tgt_write_pci(struct engine_conn *c, struct tgt_op *op, struct engine_wr *recv,
				     struct softdoca_mmap_region *region, uint64_t addr, void *bounce)
{
	struct engine_sge dst;
	doca_error_t status;

	if (!op->rndv) {
		status = tgt_pci_copy(c, op, region, addr, op->data, op->data_len, true);
		return tgt_land_end(c, op, recv, region, status, op->data_len);
	}
	if (bounce == NULL) {
		SDK_LOG_ERR_RL("connection %u: no memory to stage a %zu-byte write into PCI-imported memory", c->id,
			       op->data_len);
		return tgt_land_end(c, op, recv, region, DOCA_ERROR_NO_MEMORY, 0);
	}
	op->rx.bounce = bounce;
	op->rx.bounce_addr = addr;
	dst.addr = op->rx.bounce;
	dst.len = op->data_len;
	return tgt_land(c, op, &dst, 1, recv, region);
}

static enum tgt_result tgt_write(struct engine_conn *c, struct tgt_op *op)
{
	struct engine_worker *w = c->worker;
	struct softdoca_mmap_region region;
	struct engine_sge dst;
	struct engine_wr *recv = NULL;
	doca_error_t status;
	void *local, *bounce = NULL;

	if (op->req.opcode == ENGINE_OP_WRITE_IMM && w->recv_head == NULL) {
		op_park(w, op, (uint64_t)op->req.rnr_timeout_ms * 1000000ULL);
		return TGT_PENDING;
	}
	op_unpark(w, op);
	if (op->data_len == 0) {
		/* A zero-length write touches no memory, so no key is checked
		 * (as in InfiniBand); write-with-immediate still consumes a receive. */
		if (op->req.opcode == ENGINE_OP_WRITE_IMM)
			recv = recv_take(w);
		return tgt_land(c, op, NULL, 0, recv, NULL);
	}
	/* Checked before the receive is taken (a refusal still consumes
	 * it), so that a wait for bounce room leaves it posted. */
	status = tgt_region(c, op, op->data_len, &region, &local);
	if (status == DOCA_SUCCESS && region.pci != NULL && op->rndv) {
		bool full;

		bounce = bounce_get(w, op->data_len, &full);
		if (bounce == NULL && full) {
			softdoca_mmap_region_release(&region);
			return TGT_PENDING; /* QUEUED still: bounce_kick runs it again */
		}
	}
	if (op->req.opcode == ENGINE_OP_WRITE_IMM)
		recv = recv_take(w);
	if (status != DOCA_SUCCESS)
		return tgt_land_end(c, op, recv, NULL, status, 0);
	if (region.pci != NULL)
		return tgt_write_pci(c, op, recv, &region, (uint64_t)(uintptr_t)local, bounce);
	dst.addr = local;
	dst.len = op->data_len;
	return tgt_land(c, op, &dst, 1, recv, &region);
}

/* A read of a PCI region: copied out of the exporter into a bounce
 * buffer the answer owns and gives back once sent. */
static enum tgt_result tgt_read_pci(struct engine_conn *c, struct tgt_op *op, struct softdoca_mmap_region *region,
				    uint64_t addr)
{
	size_t len = op->req.length;
	doca_error_t status;
	void *bounce;
	bool full;

	bounce = bounce_get(c->worker, len, &full);
	if (bounce == NULL && full) {
		softdoca_mmap_region_release(region);
		return TGT_PENDING; /* QUEUED still: bounce_kick runs it again */
	}
	if (bounce == NULL) {
		SDK_LOG_ERR_RL("connection %u: no memory to stage a %zu-byte read of PCI-imported memory", c->id, len);
		softdoca_mmap_region_release(region);
		return tgt_fail(c, op, DOCA_ERROR_NO_MEMORY);
	}
	status = tgt_pci_copy(c, op, region, addr, bounce, len, false);
	if (status != DOCA_SUCCESS) {
		bounce_put(c->worker, bounce);
		softdoca_mmap_region_release(region);
		return tgt_fail(c, op, status);
	}
	op_to(op, TGT_OP_ANSWERING);
	tgt_answer_ex(c, op, DOCA_SUCCESS, 0, bounce, len, region, bounce);
	return op->state == TGT_OP_ANSWERING ? TGT_PENDING : TGT_DONE;
}

static enum tgt_result tgt_read(struct engine_conn *c, struct tgt_op *op)
{
	struct softdoca_mmap_region region;
	doca_error_t status;
	void *local;

	if (op->req.length == 0)
		return tgt_fail(c, op, DOCA_SUCCESS); /* nothing to read, no key to check */
	status = tgt_region(c, op, op->req.length, &region, &local);
	if (status != DOCA_SUCCESS)
		return tgt_fail(c, op, status);
	if (region.pci != NULL)
		return tgt_read_pci(c, op, &region, (uint64_t)(uintptr_t)local);
	/* The op waits for its answer's send: a later write on this
	 * connection must not change what this read returns. */
	op_to(op, TGT_OP_ANSWERING);
	tgt_answer(c, op, DOCA_SUCCESS, 0, local, op->req.length, &region);
	return op->state == TGT_OP_ANSWERING ? TGT_PENDING : TGT_DONE;
}

static enum tgt_result tgt_atomic(struct engine_conn *c, struct tgt_op *op)
{
	struct softdoca_mmap_region region;
	doca_error_t status;
	uint64_t *target, old;
	void *local;

	if (op->req.remote_addr % 8 != 0) {
		SDK_LOG_ERR_RL("connection %u: %s refused: address %#llx is not 8-byte aligned", c->id,
			    op_def(op)->name, (unsigned long long)op->req.remote_addr);
		return tgt_fail(c, op, DOCA_ERROR_INVALID_VALUE);
	}
	status = tgt_region(c, op, 8, &region, &local);
	if (status != DOCA_SUCCESS)
		return tgt_fail(c, op, status);
	if (region.pci != NULL) {
		softdoca_mmap_region_release(&region);
		SDK_LOG_ERR_RL("connection %u: %s refused: memory region %llu is PCI-imported memory of another "
			       "process, which softdoca cannot update atomically",
			       c->id, op_def(op)->name, (unsigned long long)op->req.region_id);
		return tgt_fail(c, op, DOCA_ERROR_NOT_SUPPORTED);
	}
	target = local;
	if (op->req.opcode == ENGINE_OP_ATOMIC_CAS) {
		old = op->req.compare;
		/* On mismatch old receives the current value, as RDMA reports. */
		__atomic_compare_exchange_n(target, &old, op->req.operand, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		old = __atomic_fetch_add(target, op->req.operand, __ATOMIC_SEQ_CST);
	}
	softdoca_mmap_region_release(&region);
	tgt_answer(c, op, DOCA_SUCCESS, old, NULL, 0, NULL);
	return TGT_DONE;
}

/* Remote net sync events: get reads, set writes, add is an atomic — each
 * needs the matching permission of this context, like memory. */
static enum tgt_result tgt_sync(struct engine_conn *c, struct tgt_op *op)
{
	struct softdoca_sync_event_ref ref;
	uint64_t value = 0;

	if (tgt_ctx_permits(c, op) != DOCA_SUCCESS)
		return tgt_fail(c, op, DOCA_ERROR_NOT_PERMITTED);
	if (op->req.opcode == ENGINE_OP_SYNC_SET && (op->rndv || op->data_len != sizeof(value))) {
		SDK_LOG_ERR_RL("connection %u: sync event set carries %zu bytes, not 8", c->id, op->data_len);
		return tgt_fail(c, op, DOCA_ERROR_INVALID_VALUE);
	}
	if (softdoca_sync_event_lookup(op->req.region_id, op->req.region_secret, &ref) != DOCA_SUCCESS) {
		op->why.kind = ENGINE_REFUSAL_SYNC_KEY;
		SDK_LOG_ERR_RL("connection %u: %s refused: sync event %llu is unknown, stopped, or the key is wrong",
			       c->id, op_def(op)->name, (unsigned long long)op->req.region_id);
		return tgt_fail(c, op, DOCA_ERROR_NOT_PERMITTED);
	}
	switch (op->req.opcode) {
	case ENGINE_OP_SYNC_GET:
		value = softdoca_sync_event_ref_get(&ref);
		softdoca_sync_event_release(&ref);
		tgt_answer(c, op, DOCA_SUCCESS, 0, &value, sizeof(value), NULL);
		return TGT_DONE;
	case ENGINE_OP_SYNC_SET:
		memcpy(&value, op->data, sizeof(value));
		softdoca_sync_event_ref_set(&ref, value);
		break;
	default:
		value = softdoca_sync_event_ref_add(&ref, op->req.operand);
		break;
	}
	softdoca_sync_event_release(&ref);
	if (op->req.opcode == ENGINE_OP_SYNC_SET)
		tgt_ack(c, op);
	else
		tgt_answer(c, op, DOCA_SUCCESS, value, NULL, 0, NULL);
	return TGT_DONE;
}

static enum tgt_result tgt_exec(struct engine_conn *c, struct tgt_op *op)
{
	struct engine_worker *w = c->worker;

	if (c->state == CONN_EXPORTED && !w->conf.dc) {
		/* Our side has not connected yet: the sender keeps retrying. */
		op_park(w, op, NOT_CONNECTED_RETRY_NS);
		return TGT_PENDING;
	}
	if (!op_def(op)->waits_for_recv)
		op_unpark(w, op);
	return op_def(op)->exec(c, op);
}

/* ---- the per-connection queue ----------------------------------------- */

static void tq_pop(struct engine_conn *c)
{
	struct tgt_op *op = c->tq_head;

	c->tq_head = op->next;
	if (c->tq_head == NULL)
		c->tq_tail = NULL;
	c->tq_len--;
}

/* The head is over (answered): off the queue, its payload back to UCX. */
static void tq_retire_head(struct engine_conn *c)
{
	struct engine_worker *w = c->worker;
	struct tgt_op *op = c->tq_head;

	op_unpark(w, op);
	tq_pop(c);
	op_release_data(w, op);
	op_put(w, op);
}

/* Whether op's range may overlap a write before it whose payload is
 * still arriving (those were checked against their region; op not yet). */
static bool tq_overlaps(const struct engine_conn *c, const struct tgt_op *op)
{
	uint64_t start = op->req.remote_addr;

	if (op->data_len > UINT64_MAX - start)
		return true; /* nonsense: it waits for its turn and is refused then */
	for (const struct tgt_op *o = c->tq_head; o != op; o = o->next) {
		if (o->state != TGT_OP_RECEIVING || o->req.region_id != op->req.region_id)
			continue;
		if (o->req.remote_addr < start + op->data_len && start < o->req.remote_addr + o->data_len)
			return true;
	}
	return false;
}

/* What may start behind the head: plain writes behind a write whose
 * payload is arriving, reads behind a read whose answer is being sent
 * (reads only read, and no write comes between them). */
static bool tq_may_start_behind(const struct tgt_op *head, const struct tgt_op *op)
{
	if (head->state == TGT_OP_RECEIVING)
		return op->req.opcode == ENGINE_OP_WRITE;
	return head->state == TGT_OP_ANSWERING && op->req.opcode == ENGINE_OP_READ;
}

/* The head waits for UCX (a payload arriving, a read's answer leaving):
 * start what may run behind it, as far as the rules in the file comment
 * let it. */
static void tq_start_ahead(struct engine_conn *c)
{
	const struct tgt_op *head = c->tq_head;
	uint32_t busy = 0, n = 0;

	if (c->state == CONN_EXPORTED && !c->worker->conf.dc)
		return;
	for (struct tgt_op *op = c->tq_head; op != NULL && n < TQ_AHEAD; op = op->next, n++) {
		if (!tq_may_start_behind(head, op) || busy >= TQ_MAX_RX)
			return;
		if (op->state == TGT_OP_LANDED)
			continue;
		if (op->state == TGT_OP_QUEUED) {
			if (op->req.opcode == ENGINE_OP_WRITE && tq_overlaps(c, op))
				return;
			if (op_def(op)->exec(c, op) == TGT_DONE) {
				/* A read answered at once (refused, empty, sent). */
				op->replied = true;
				op_to(op, TGT_OP_LANDED);
			}
		}
		if (op->state == TGT_OP_RECEIVING || op->state == TGT_OP_ANSWERING)
			busy++;
		else if (op->state != TGT_OP_LANDED)
			return;
	}
}

/* Run operations from the head until one has to wait; answer, in order,
 * those that landed while they waited for their turn. */
static void tq_run(struct engine_conn *c)
{
	while (c->tq_head != NULL && c->state != CONN_CLOSED) {
		struct tgt_op *head = c->tq_head;

		if (head->state == TGT_OP_LANDED) {
			if (!head->replied)
				tgt_reply(c, head, head->result);
			tq_retire_head(c);
			continue;
		}
		if (op_in_flight(head) || tgt_exec(c, head) == TGT_PENDING)
			break;
		tq_retire_head(c);
	}
	if (c->tq_head != NULL && op_in_flight(c->tq_head) && c->state != CONN_CLOSED)
		tq_start_ahead(c);
	bounce_kick(c->worker);
}

/* An operation that was waiting (rendezvous data, read answer) is over:
 * answered if it is the head, LANDED if it still waits for its turn. */
static void tgt_op_finished(struct engine_conn *c, struct tgt_op *op)
{
	if (op->state == TGT_OP_DROPPED) {
		op_put(c->worker, op); /* dropped with its connection while it waited */
		bounce_kick(c->worker);
		return;
	}
	if (op->state != TGT_OP_LANDED && c->tq_head == op) {
		op_to(op, TGT_OP_QUEUED);
		tq_retire_head(c);
	} else if (op->state == TGT_OP_ANSWERING) {
		op->replied = true; /* a read behind the head: its answer is out */
		op_to(op, TGT_OP_LANDED);
	}
	tq_run(c);
}

void engine_target_kick(struct engine_conn *c)
{
	tq_run(c);
}

void engine_target_kick_all(struct engine_worker *w)
{
	for (uint32_t i = 0; i < w->num_conns && w->recv_head != NULL; i++)
		if (w->conns[i].tq_head != NULL)
			tq_run(&w->conns[i]);
}

void engine_target_expire(struct engine_worker *w, uint64_t now)
{
	for (uint32_t i = 0; i < w->num_conns; i++) {
		struct engine_conn *c = &w->conns[i];
		struct tgt_op *op = c->tq_head;
		doca_error_t status;

		if (op == NULL || op->state != TGT_OP_PARKED || op->deadline_ns > now)
			continue;
		op_unpark(w, op);
		if (c->state == CONN_EXPORTED && !w->conf.dc) {
			SDK_LOG_ERR_RL("connection %u: the peer's %s waited for this side to connect and timed out",
				       c->id, op_def(op)->name);
			status = DOCA_ERROR_NOT_CONNECTED;
		} else {
			SDK_LOG_ERR_RL("connection %u: receiver not ready: no receive was posted for the peer's %s "
				    "within its RNR retries",
				    c->id, op_def(op)->name);
			status = DOCA_ERROR_TIME_OUT;
		}
		tgt_answer(c, op, status, 0, NULL, 0, NULL);
		tq_retire_head(c);
		tq_run(c);
	}
}

/* The connection is gone: drop what waits. An op whose payload is still
 * arriving, or whose answer is being sent, goes DROPPED and is freed by
 * its callback. */
void engine_target_drop(struct engine_conn *c)
{
	struct engine_worker *w = c->worker;

	while (c->tq_head != NULL) {
		struct tgt_op *op = c->tq_head;

		tq_pop(c);
		op_unpark(w, op);
		op_release_data(w, op);
		if (op_in_flight(op)) {
			/* Its callback frees it; a receive in flight is cancelled
			 * so that it calls back (and gives up its region) soon. */
			op_to(op, TGT_OP_DROPPED);
			if (op->rx.req != NULL)
				op->link->cancel(w, op->rx.req);
			continue;
		}
		op_put(w, op);
	}
}

/* Bytes of rendezvous data moving on c for the target side: a payload
 * being received into a region, read answers being sent (keepalive.c
 * gives a peer busy with them longer to answer). */
uint64_t engine_target_bulk_bytes(const struct engine_conn *c)
{
	uint64_t bytes = 0;
	uint32_t n = 0;

	for (const struct tgt_op *op = c->tq_head; op != NULL && n < TQ_AHEAD; op = op->next, n++)
		if (op->state == TGT_OP_RECEIVING)
			bytes += op->data_len;
	for (const struct tgt_resp *resp = c->worker->resp_list; resp != NULL; resp = resp->next)
		if (resp->conn == c)
			bytes += resp->hdr.result_len;
	return bytes;
}

/* Queue an incoming request on its connection and run what can run.
 * data: its payload (or rendezvous descriptor), kept until the op
 * retires; batch: the batch message it came in, if any (held once). */
static void tgt_enqueue(struct engine_worker *w, const struct link_msg *m, const struct wire_req *r, void *data,
			size_t length, bool rndv, struct tgt_batch *batch)
{
	struct engine_conn *c;
	struct tgt_op *op;

	c = engine_conn_lookup(w, m, r->dst_conn_id, r->dst_secret);
	if (c == NULL || c->state == CONN_CLOSED)
		return;
	if (!c->peer_hello) {
		SDK_LOG_ERR_RL("connection %u: operation before the peer's HELLO: dropped", c->id);
		return;
	}
	if (c->tq_len >= TQ_MAX) {
		SDK_LOG_ERR_RL("connection %u: more than %d operations waiting: refusing more", c->id, TQ_MAX);
		return;
	}
	op = op_get(w);
	if (op == NULL) {
		SDK_LOG_ERR_RL("connection %u: no memory for an incoming operation: dropped", c->id);
		return;
	}
	op->req = *r;
	op->state = TGT_OP_QUEUED;
	op->deadline_ns = 0;
	op->rx.req = NULL;
	op->rx.bounce = NULL;
	op->replied = false;
	op->why.kind = ENGINE_REFUSAL_NONE;
	op->data_len = length;
	op->rndv = rndv;
	op->data = length > 0 ? data : NULL;
	op->link = m->link;
	op->batch = op->data != NULL ? batch : NULL;
	if (op->batch != NULL)
		op->batch->refs++;
	else if (op->data != NULL)
		w->handler_kept = true;
	if (c->tq_tail == NULL)
		c->tq_head = op;
	else
		c->tq_tail->next = op;
	c->tq_tail = op;
	c->tq_len++;
	if (unlikely(softdoca_trace_on))
		softdoca_trace_at_target(softdoca_trace_conn_track(w->conf.trace_track, c->id), op_def(op)->name,
					 r->wr_id, r->src_conn_id);
	w->handler_op = batch == NULL ? op : NULL;
	tq_run(c);
	w->handler_op = NULL;
}

enum link_rx engine_am_req(struct engine_worker *w, const struct link_msg *m)
{
	struct wire_req req;

	if (wire_check(WIRE_AM_REQ, m->header, m->header_len) != DOCA_SUCCESS)
		return LINK_RX_DONE;
	ENGINE_TSAN_ACQUIRE();
	memcpy(&req, m->header, sizeof(req)); /* any alignment */
	w->handler_released = false;
	w->handler_kept = false;
	tgt_enqueue(w, m, &req, m->data, m->length, m->rndv, NULL);
	/* KEPT: we keep the payload (or the rendezvous descriptor, or its
	 * receive started) past this handler. An op that was not queued
	 * (dropped) never held it. */
	return w->handler_kept && !w->handler_released ? LINK_RX_KEPT : LINK_RX_DONE;
}

/* Several requests in one message: each entry is checked and queued as
 * if it had come alone; they share the message's payload, which goes
 * back to UCX when the last of them retires. */
enum link_rx engine_am_batch(struct engine_worker *w, const struct link_msg *m)
{
	struct wire_batch hdr;
	struct tgt_batch *b;
	const uint8_t *p = m->data;
	size_t off = 0, length = m->length;
	uint32_t i;

	if (wire_check(WIRE_AM_BATCH, m->header, m->header_len) != DOCA_SUCCESS)
		return LINK_RX_DONE;
	if (m->rndv) {
		SDK_LOG_ERR_RL("batch of requests sent by rendezvous (batches are eager): dropped");
		return LINK_RX_DONE;
	}
	ENGINE_TSAN_ACQUIRE();
	memcpy(&hdr, m->header, sizeof(hdr));
	b = tbatch_get(w);
	if (b == NULL) {
		SDK_LOG_ERR_RL("no memory for a batch of %u requests: dropped", hdr.count);
		return LINK_RX_DONE;
	}
	b->data = m->data;
	b->link = m->link;
	b->refs = 1; /* ours, while we look at it */
	for (i = 0; i < hdr.count; i++) {
		struct wire_req r;
		uint64_t plen;
		size_t pad;

		if (length - off < sizeof(r)) {
			SDK_LOG_ERR_RL("batch: request %u of %u is missing or cut short: the rest dropped", i + 1,
				       hdr.count);
			break;
		}
		if (wire_check(WIRE_AM_REQ, p + off, sizeof(r)) != DOCA_SUCCESS)
			break;
		memcpy(&r, p + off, sizeof(r));
		off += sizeof(r);
		plen = wire_op_carries_payload(r.opcode) ? r.length : 0;
		if (plen > length - off) {
			SDK_LOG_ERR_RL("batch: request %u of %u claims %llu payload bytes, %zu remain: the rest dropped",
				       i + 1, hdr.count, (unsigned long long)plen, length - off);
			break;
		}
		tgt_enqueue(w, m, &r, (void *)(p + off), (size_t)plen, false, b);
		off += (size_t)plen;
		pad = wire_pad8(off) - off;
		off += pad < length - off ? pad : length - off;
	}
	if (i == hdr.count && off != length)
		SDK_LOG_ERR_RL("batch: %zu bytes past its %u requests: ignored", length - off, hdr.count);
	if (--b->refs == 0) {
		tbatch_put(w, b);
		return LINK_RX_DONE; /* every request is done with the payload */
	}
	return LINK_RX_KEPT; /* the last request to retire releases it */
}
