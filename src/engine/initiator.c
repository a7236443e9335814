/*
 * softdoca — the initiator side: posting work requests and taking their
 * answers.
 *
 * Every operation sent to a peer holds a slot of its connection's send
 * queue (each connection is a QP with its own ring of send_queue_size
 * entries: a full queue refuses only its own connection's posts). Its
 * wr_id is its sequence number on the connection; an answer names the
 * connection (id and secret, checked) and the wr_id, so it is matched by
 * number in O(1) and checked (in the window, same connection, same
 * opcode) — a peer can never make us touch a pointer it chose.
 *
 * Operations complete in order, as an RC QP's do: one is done when its
 * send has completed and its answer (or a failure) is in, and it is
 * handed back only after every earlier one. Successes that carry nothing
 * back (writes, sends, sync event sets) are answered by acknowledgements
 * that stand for every such operation up to a sequence number
 * (WIRE_AM_ACK); failures and results come one by one.
 *
 * A request posted with ENGINE_POST_DEFER (a task submitted from a
 * completion callback, or without DOCA's FLUSH flag) is copied into its
 * connection's open batch; engine_flush_posts, or the connection's next
 * request that is not held back, sends the batch as one message.
 */
#include <stdlib.h>
#include <string.h>

#include "core_engine.h"
#include "engine_internal.h"

SDK_LOG_REGISTER(ENGINE::INITIATOR)

static uint64_t sge_total(const struct engine_wr *wr)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < wr->num_sge; i++)
		total += wr->sge[i].len;
	return total;
}

static struct engine_slot *sq_slot(const struct engine_conn *c, uint64_t seq)
{
	return &c->sq.slots[seq % c->worker->conf.send_queue_size];
}

/* Whether seq names an operation in c's window [tail, head). */
static bool sq_holds(const struct engine_conn *c, uint64_t seq)
{
	return seq - c->sq.tail < c->sq.head - c->sq.tail;
}

void engine_wr_finish(struct engine_worker *w, struct engine_wr *wr)
{
	w->outstanding--;
	wr->done(wr);
}

/* Hand back, oldest first, every operation that is over: its send has
 * completed and its answer (or a failure) is in. */
static void sq_retire(struct engine_worker *w, struct engine_conn *c)
{
	while (c->sq.tail != c->sq.head) {
		struct engine_slot *slot = sq_slot(c, c->sq.tail);
		struct engine_wr *wr = slot->wr;

		if (wr->send_pending || !wr->answered)
			return;
		slot->wr = NULL;
		c->sq.tail++;
		if (c->sq.acked < c->sq.tail)
			c->sq.acked = c->sq.tail;
		engine_wr_finish(w, wr);
	}
}

static void wr_mark_answered(struct engine_wr *wr, doca_error_t status)
{
	if (wr->answered)
		return;
	wr->answered = 1;
	wr->status = status;
}

static void wr_answer(struct engine_worker *w, struct engine_wr *wr, doca_error_t status)
{
	wr_mark_answered(wr, status);
	sq_retire(w, wr->conn);
}

/* Operations whose answer carries a result are answered alone, never by
 * an acknowledgement. */
static bool op_wants_answer(uint8_t op)
{
	return op == ENGINE_OP_READ || op == ENGINE_OP_SYNC_GET || op == ENGINE_OP_ATOMIC_CAS ||
	       op == ENGINE_OP_ATOMIC_FADD || op == ENGINE_OP_SYNC_ADD;
}

/* The target retired every operation before end: those that wait only
 * for its word succeeded. */
static void sq_ack_until(struct engine_conn *c, uint64_t end)
{
	uint64_t s = c->sq.acked > c->sq.tail ? c->sq.acked : c->sq.tail;

	for (; s != end && s != c->sq.head; s++) {
		struct engine_wr *wr = sq_slot(c, s)->wr;

		if (!op_wants_answer(wr->opcode))
			wr_mark_answered(wr, DOCA_SUCCESS);
	}
	c->sq.acked = s;
}

static void req_send_done(struct engine_wr *wr, doca_error_t status)
{
	struct engine_worker *w = wr->conn->worker;

	wr->send_req = NULL;
	wr->send_pending = 0;
	if (status != DOCA_SUCCESS) {
		SDK_LOG_DBG("send of work request on connection %u failed: %s", wr->conn->id,
			    doca_error_get_name(status));
		wr_mark_answered(wr, DOCA_ERROR_CONNECTION_ABORTED);
	}
	sq_retire(w, wr->conn);
}

/* The link's send callback. It names the slot, not the work request: a
 * send given up on (its peer died) may call back after the slot serves
 * another request, and then it does nothing. */
static void req_send_cb(void *request, doca_error_t status, void *user)
{
	struct engine_slot *slot = user;
	struct engine_wr *wr = slot->wr;

	if (wr == NULL || wr->send_req != request)
		return;
	req_send_done(wr, status);
}

static doca_error_t slot_take(struct engine_conn *c, struct engine_wr *wr)
{
	struct engine_slot *slot;

	if (engine_sq_busy(&c->sq) >= c->worker->conf.send_queue_size)
		return DOCA_ERROR_FULL;
	slot = sq_slot(c, c->sq.head);
	slot->wr = wr;
	slot->seq = c->sq.head;
	wr->wr_id = c->sq.head++;
	return DOCA_SUCCESS;
}


/* The bytes a request names at the target: what it reads, or the
 * payload it carries (an atomic's 8-byte result list: 8). */
static uint64_t req_length(const struct engine_wr *wr)
{
	return wr->opcode == ENGINE_OP_READ || wr->opcode == ENGINE_OP_SYNC_GET ? wr->remote.len : sge_total(wr);
}

static void req_fill(const struct engine_wr *wr, struct wire_req *r)
{
	const struct engine_conn *c = wr->conn;
	uint8_t rnr = c->worker->conf.rnr_retry_count;

	memset(r, 0, sizeof(*r));
	r->version = WIRE_VERSION;
	r->opcode = wr->opcode;
	r->dst_conn_id = c->peer_id;
	memcpy(r->dst_secret, c->peer_secret, ENGINE_SECRET_LEN);
	r->src_conn_id = c->id;
	/* RNR: 7 retries means for ever; otherwise each retry waits about
	 * 200 ms, a typical RNR timer of RC hardware, counted at the target. */
	r->rnr_timeout_ms = rnr >= 7 ? 0 : (uint32_t)(rnr + 1) * 200;
	r->wr_id = wr->wr_id;
	r->region_id = wr->remote.region_id;
	memcpy(r->region_secret, wr->remote.secret, ENGINE_SECRET_LEN);
	r->remote_addr = wr->remote.addr;
	r->length = req_length(wr);
	r->compare = wr->compare;
	r->operand = wr->operand;
	r->imm = wr->imm;
}

static doca_error_t post_recv(struct engine_worker *w, struct engine_wr *wr)
{
	wr->next = NULL;
	if (w->recv_tail == NULL)
		w->recv_head = wr;
	else
		w->recv_tail->next = wr;
	w->recv_tail = wr;
	w->outstanding++;
	/* Sends may be waiting for exactly this receive. */
	engine_target_kick_all(w);
	return DOCA_SUCCESS;
}

/* ---- held-back requests (ENGINE_POST_DEFER) ------------------------- */

/* A batch buffer from the worker's pool (made on first need, given back
 * with the worker: engine_batches_free). */
static struct engine_batch *batch_get(struct engine_worker *w)
{
	struct engine_batch *b = w->batch_free;

	if (b != NULL) {
		w->batch_free = b->next;
	} else {
		b = malloc(sizeof(*b));
		if (b == NULL)
			return NULL;
		b->all_next = w->batch_all;
		w->batch_all = b;
	}
	b->next = NULL;
	b->count = 0;
	b->len = 0;
	return b;
}

static void batch_put(struct engine_worker *w, struct engine_batch *b)
{
	b->next = w->batch_free;
	w->batch_free = b;
}

/* The worker is gone (UCX calls back no more). */
void engine_batches_free(struct engine_worker *w)
{
	while (w->batch_all != NULL) {
		struct engine_batch *b = w->batch_all;

		w->batch_all = b->all_next;
		free(b);
	}
	w->batch_free = NULL;
}

static void batch_sent(void *request, doca_error_t status, void *user)
{
	struct engine_batch *b = user;

	(void)request;
	/* A failed send fails the connection, and with it the requests. */
	if (status != DOCA_SUCCESS)
		SDK_LOG_DBG("connection %u: batch of %u requests not sent: %s", b->conn->id, b->count,
			    doca_error_get_name(status));
	batch_put(b->conn->worker, b);
}

/* The timeline: every request of batch b goes to the transport now. */
static void batch_trace_sent(const struct engine_conn *c, const struct engine_batch *b)
{
	for (uint64_t s = b->first_seq; s != b->first_seq + b->count; s++) {
		const struct engine_slot *slot = sq_slot(c, s);

		if (slot->wr != NULL && slot->seq == s && slot->wr->trace_task != NULL)
			softdoca_trace_task_sent(slot->wr->trace_task, s);
	}
}

/* Send c's open batch: a single request as a plain one, several as one
 * WIRE_AM_BATCH, always eagerly (they are small). Lock held. */
static void batch_send(struct engine_worker *w, struct engine_conn *c)
{
	struct engine_batch *b = c->batch;
	struct link_send s = {.eager = true, .cb = batch_sent, .user = b};
	struct engine_sge sge;
	doca_error_t status;
	void *req;

	c->batch = NULL;
	atomic_fetch_sub_explicit(&w->batches_open, 1, memory_order_relaxed);
	ENGINE_TSAN_RELEASE();
	if (unlikely(softdoca_trace_on))
		batch_trace_sent(c, b);
	if (b->count == 1) {
		struct wire_req r;

		memcpy(&r, b->data, sizeof(r));
		s.id = WIRE_AM_REQ;
		s.header = b->data;
		s.header_len = sizeof(r);
		s.len = wire_op_carries_payload(r.opcode) ? (size_t)r.length : 0;
		sge.addr = (uint8_t *)b->data + sizeof(r);
	} else {
		b->hdr = (struct wire_batch){.version = WIRE_VERSION, .count = b->count};
		s.id = WIRE_AM_BATCH;
		s.header = &b->hdr;
		s.header_len = sizeof(b->hdr);
		s.len = b->len;
		sge.addr = b->data;
	}
	sge.len = s.len;
	s.iov = &sge;
	s.iov_count = s.len > 0 ? 1 : 0;
	status = c->link->send(c, &s, &req);
	if (status == DOCA_SUCCESS && req == NULL) {
		batch_put(w, b);
		return;
	}
	if (status == DOCA_SUCCESS)
		return; /* batch_sent gives the buffer back */
	SDK_LOG_ERR("connection %u: send of %u requests failed: %s", c->id, b->count, doca_error_get_name(status));
	for (uint64_t s = b->first_seq; s != b->first_seq + b->count; s++) {
		struct engine_slot *slot = sq_slot(c, s);

		if (slot->wr != NULL && slot->seq == s)
			wr_mark_answered(slot->wr, DOCA_ERROR_CONNECTION_ABORTED);
	}
	batch_put(w, b);
	sq_retire(w, c);
}

/* c's open batch goes with its connection: its requests fail there. */
static void batch_discard(struct engine_worker *w, struct engine_conn *c)
{
	if (c->batch == NULL)
		return;
	batch_put(w, c->batch);
	c->batch = NULL;
	atomic_fetch_sub_explicit(&w->batches_open, 1, memory_order_relaxed);
}

/* Copy request r (header, then its payload gathered from wr's list) into
 * c's open batch; false if it must travel alone. */
static bool batch_add(struct engine_worker *w, struct engine_conn *c, const struct engine_wr *wr,
		      const struct wire_req *r, uint64_t payload)
{
	size_t need = wire_pad8(sizeof(*r) + payload);
	uint8_t *at;

	if (payload > ENGINE_BATCH_ENTRY_MAX)
		return false;
	if (c->batch != NULL && (c->batch->len + need > ENGINE_BATCH_BYTES || c->batch->count == WIRE_BATCH_MAX))
		batch_send(w, c);
	if (c->batch == NULL) {
		c->batch = batch_get(w);
		if (c->batch == NULL)
			return false;
		c->batch->conn = c;
		c->batch->first_seq = wr->wr_id;
		atomic_fetch_add_explicit(&w->batches_open, 1, memory_order_relaxed);
		if (!c->batch_listed) {
			c->batch_listed = true;
			c->batch_next = w->batch_list;
			w->batch_list = c;
		}
	}
	at = (uint8_t *)c->batch->data + c->batch->len;
	memcpy(at, r, sizeof(*r));
	at += sizeof(*r);
	for (uint32_t i = 0; i < wr->num_sge && payload > 0; i++) {
		memcpy(at, wr->sge[i].addr, wr->sge[i].len);
		at += wr->sge[i].len;
	}
	/* Padding goes to the peer: never stale bytes. */
	memset(at, 0, need - sizeof(*r) - payload);
	c->batch->len += need;
	c->batch->count++;
	return true;
}

void engine_flush_posts(struct engine_worker *w)
{
	struct engine_conn *c;

	/* Posts and this flush come from the application's thread: the
	 * count is exact for it (another thread only lowers it). */
	if (atomic_load_explicit(&w->batches_open, memory_order_relaxed) == 0)
		return;
	pthread_mutex_lock(&w->lock);
	while ((c = w->batch_list) != NULL) {
		w->batch_list = c->batch_next;
		c->batch_next = NULL;
		c->batch_listed = false;
		if (c->batch != NULL)
			batch_send(w, c);
	}
	engine_worker_unlock(w);
}

static doca_error_t post_remote(struct engine_worker *w, struct engine_wr *wr)
{
	struct wire_req *r = (struct wire_req *)wr->hdr_space;
	struct link_send s = {.id = WIRE_AM_REQ, .header = r, .header_len = sizeof(*r), .cb = req_send_cb};
	bool payload = wire_op_carries_payload(wr->opcode);
	doca_error_t status;
	void *req;

	if (wr->conn == NULL || wr->conn->worker != w || wr->conn->state != CONN_CONNECTED) {
		if (wr->conn != NULL && (wr->conn->state == CONN_CLOSED || wr->conn->state == CONN_FREE))
			SDK_LOG_ERR("work request on connection %u, which is closed (disconnected or failed)",
				    wr->conn->id);
		else
			SDK_LOG_ERR("work request on a connection that is not connected yet (connect it first)");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	status = slot_take(wr->conn, wr);
	if (status != DOCA_SUCCESS)
		return status;
	req_fill(wr, r);
	if (engine_sq_busy(&wr->conn->sq) == w->conf.send_queue_size)
		r->flags |= WIRE_REQ_ACK_NOW; /* nothing more can be posted until an answer */
	wr->send_pending = 1;
	wr->answered = 0;
	wr->recv_req = NULL;
	w->outstanding++;
	if ((wr->post_flags & ENGINE_POST_DEFER) && batch_add(w, wr->conn, wr, r, payload ? sge_total(wr) : 0)) {
		wr->send_pending = 0; /* copied: the batch carries it */
		return DOCA_SUCCESS;
	}
	if (wr->conn->batch != NULL)
		batch_send(w, wr->conn); /* what was held back goes first */

	s.user = sq_slot(wr->conn, wr->wr_id);
	if (payload) {
		s.iov = wr->sge;
		s.iov_count = wr->num_sge;
		s.len = (size_t)r->length;
	}
	if (unlikely(softdoca_trace_on) && wr->trace_task != NULL)
		softdoca_trace_task_sent(wr->trace_task, wr->wr_id);
	ENGINE_TSAN_RELEASE();
	status = wr->conn->link->send(wr->conn, &s, &req);
	if (status != DOCA_SUCCESS) {
		SDK_LOG_ERR("connection %u: send failed: %s", wr->conn->id, doca_error_get_name(status));
		req_send_done(wr, status);
	} else if (req == NULL) {
		req_send_done(wr, DOCA_SUCCESS);
	} else {
		wr->send_req = req; /* given up on if its connection fails (engine_fail_conn_ops) */
	}
	return DOCA_SUCCESS;
}

static doca_error_t wr_reset(struct engine_wr *wr)
{
	if (wr->num_sge > ENGINE_MAX_SGE) {
		SDK_LOG_ERR("work request has %u buffers, at most %d", wr->num_sge, ENGINE_MAX_SGE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	wr->status = DOCA_SUCCESS;
	wr->result_len = 0;
	wr->result_conn = NULL;
	wr->refusal.kind = ENGINE_REFUSAL_NONE;
	return DOCA_SUCCESS;
}

doca_error_t engine_post(struct engine_wr *wr)
{
	struct engine_worker *w;
	doca_error_t status;

	if (wr->conn == NULL || wr->opcode == ENGINE_OP_RECV) {
		SDK_LOG_ERR("work request needs a connection and a remote opcode");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = wr_reset(wr);
	if (status != DOCA_SUCCESS)
		return status;
	w = wr->conn->worker;
	pthread_mutex_lock(&w->lock);
	status = post_remote(w, wr);
	engine_worker_unlock(w);
	return status;
}

doca_error_t engine_post_recv(struct engine_worker *w, struct engine_wr *wr)
{
	doca_error_t status = wr_reset(wr);

	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&w->lock);
	status = post_recv(w, wr);
	engine_worker_unlock(w);
	return status;
}

/* ---- answers -------------------------------------------------------- */

static struct engine_wr *resp_find(const struct wire_resp *r, struct engine_conn *c)
{
	struct engine_slot *slot;
	struct engine_wr *wr;

	if (c->sq.slots == NULL || !sq_holds(c, r->wr_id)) {
		/* Late (failed here already: a stop, a flush) or forged. */
		SDK_LOG_DBG("answer for work request %#llx, not in flight on connection %u: dropped",
			    (unsigned long long)r->wr_id, c->id);
		return NULL;
	}
	slot = sq_slot(c, r->wr_id);
	wr = slot->wr;
	if (wr == NULL || slot->seq != r->wr_id || wr->conn != c || wr->opcode != r->opcode) {
		SDK_LOG_ERR_RL("answer for a work request that is not in flight on connection %u: dropped", c->id);
		return NULL;
	}
	return wr;
}

/* Where an answer's payload goes, checked against what we asked for. */
static doca_error_t resp_check_payload(struct engine_wr *wr, const struct wire_resp *r, size_t length)
{
	bool wants = wr->opcode == ENGINE_OP_READ || wr->opcode == ENGINE_OP_SYNC_GET;

	if (r->status != WIRE_STATUS_SUCCESS)
		return length == 0 ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
	if (!wants)
		return length == 0 ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
	if (length != r->result_len || length > wr->remote.len || length > sge_total(wr))
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

/* 8-byte results (atomics, sync event add) land in the first sge. */
static void resp_store_value(struct engine_wr *wr, const struct wire_resp *r)
{
	if (wr->opcode != ENGINE_OP_ATOMIC_CAS && wr->opcode != ENGINE_OP_ATOMIC_FADD && wr->opcode != ENGINE_OP_SYNC_ADD)
		return;
	if (r->status != WIRE_STATUS_SUCCESS)
		return;
	engine_sge_scatter(wr->sge, wr->num_sge, &r->value, sizeof(r->value));
	wr->result_len = sizeof(r->value);
}

/* A failure's reason, if the target gave one, for the RDMA layer's log
 * line: with the access as we asked for it. */
static __attribute__((noinline, cold)) void resp_refusal(struct engine_wr *wr, const struct wire_resp *r)
{
	wire_refusal_get(r, &wr->refusal);
	wr->refusal.addr = wr->remote.addr;
	wr->refusal.len = req_length(wr);
}

/* Like req_send_cb, it names the slot: a receive given up on (its
 * connection failed) may complete after its work request is done. */
static void resp_rndv_done(void *request, doca_error_t status, void *user)
{
	struct engine_slot *slot = user;
	struct engine_wr *wr = slot->wr;

	if (wr == NULL || wr->recv_req != request)
		return;
	wr->recv_req = NULL;
	wr_answer(slot->worker, wr, status == DOCA_SUCCESS ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED);
}

/* A read's data by rendezvous: fetched into the task's buffers. */
static void resp_fetch(struct engine_worker *w, const struct link_msg *m, struct engine_conn *c,
		       struct engine_wr *wr)
{
	doca_error_t status;
	void *req;

	status = m->link->recv_data(w, m->data, wr->sge, wr->num_sge, m->length, resp_rndv_done,
				    sq_slot(c, wr->wr_id), &req);
	if (status != DOCA_SUCCESS)
		wr_answer(w, wr, DOCA_ERROR_IO_FAILED);
	else if (req == NULL)
		wr_answer(w, wr, DOCA_SUCCESS);
	else
		wr->recv_req = req;
}

enum link_rx engine_am_resp(struct engine_worker *w, const struct link_msg *m)
{
	struct wire_resp resp;
	const struct wire_resp *r = &resp;
	struct engine_conn *c;
	struct engine_wr *wr;
	doca_error_t status;

	if (wire_check(WIRE_AM_RESP, m->header, m->header_len) != DOCA_SUCCESS)
		return LINK_RX_DONE;
	ENGINE_TSAN_ACQUIRE();
	memcpy(&resp, m->header, sizeof(resp)); /* any alignment */
	c = engine_conn_lookup(w, m, r->dst_conn_id, r->dst_secret);
	if (c == NULL || c->state == CONN_CLOSED)
		return LINK_RX_DONE;
	wr = resp_find(r, c);
	if (wr == NULL || wr->answered)
		return LINK_RX_DONE;
	sq_ack_until(c, r->wr_id);
	if (!wire_status_to_doca(r->status, &status)) {
		SDK_LOG_ERR_RL("connection %u: answer with unknown status %d: failing the request", c->id, r->status);
		wr_answer(w, wr, DOCA_ERROR_IO_FAILED);
		return LINK_RX_DONE;
	}
	if (resp_check_payload(wr, r, m->length) != DOCA_SUCCESS) {
		SDK_LOG_ERR_RL("connection %u: answer carries %zu bytes, not what was asked: failing the request", c->id,
			       m->length);
		wr_answer(w, wr, DOCA_ERROR_IO_FAILED);
		return LINK_RX_DONE;
	}
	if (unlikely(status != DOCA_SUCCESS))
		resp_refusal(wr, r);
	resp_store_value(wr, r);
	if (m->length == 0 || status != DOCA_SUCCESS) {
		wr_answer(w, wr, status);
		return LINK_RX_DONE;
	}
	wr->result_len = m->length;
	if (m->rndv) {
		resp_fetch(w, m, c, wr);
		return LINK_RX_KEPT; /* the descriptor went to the fetch */
	}
	engine_sge_scatter(wr->sge, wr->num_sge, m->data, m->length);
	wr_answer(w, wr, DOCA_SUCCESS);
	return LINK_RX_DONE;
}

enum link_rx engine_am_ack(struct engine_worker *w, const struct link_msg *m)
{
	struct wire_ack ack;
	struct engine_conn *c;

	if (wire_check(WIRE_AM_ACK, m->header, m->header_len) != DOCA_SUCCESS)
		return LINK_RX_DONE;
	if (m->length != 0) {
		SDK_LOG_ERR_RL("acknowledgement with a %zu-byte payload: dropped", m->length);
		return LINK_RX_DONE;
	}
	ENGINE_TSAN_ACQUIRE();
	memcpy(&ack, m->header, sizeof(ack)); /* any alignment */
	c = engine_conn_lookup(w, m, ack.dst_conn_id, ack.dst_secret);
	if (c == NULL || c->state == CONN_CLOSED || c->sq.slots == NULL)
		return LINK_RX_DONE;
	if (!sq_holds(c, ack.wr_id)) {
		SDK_LOG_DBG("acknowledgement of work request %#llx, not in flight on connection %u: dropped",
			    (unsigned long long)ack.wr_id, c->id);
		return LINK_RX_DONE;
	}
	sq_ack_until(c, ack.wr_id + 1);
	sq_retire(w, c);
	return LINK_RX_DONE;
}

/* ---- failures ------------------------------------------------------- */

/* Bytes c's operations still have to move: payloads not yet sent,
 * read answers not yet arrived (keepalive.c gives a peer busy with them
 * longer to answer). */
uint64_t engine_initiator_bulk_bytes(const struct engine_conn *c)
{
	uint64_t bytes = 0;

	for (uint64_t s = c->sq.tail; s != c->sq.head; s++) {
		const struct engine_wr *wr = sq_slot(c, s)->wr;

		if (wr->send_pending && wire_op_carries_payload(wr->opcode))
			bytes += sge_total(wr);
		if (!wr->answered && (wr->opcode == ENGINE_OP_READ || wr->opcode == ENGINE_OP_SYNC_GET))
			bytes += wr->remote.len;
	}
	return bytes;
}

/* Fail what is in flight on a connection that is over. A send or a
 * rendezvous receive still in flight is given up on, so its work request
 * can finish: UCX completes the request when it purges the endpoint's
 * requests (after the endpoint's lanes are discarded, at the latest in
 * ucp_worker_destroy; see RNDV_SCHEME in engine.c), and the late
 * callback only frees it. */
void engine_fail_conn_ops(struct engine_conn *c, doca_error_t status)
{
	struct engine_worker *w = c->worker;

	batch_discard(w, c);
	/* Only c's own queue: a busy connection does not slow the others. */
	for (uint64_t s = c->sq.tail; s != c->sq.head; s++) {
		struct engine_slot *slot = sq_slot(c, s);
		struct engine_wr *wr = slot->wr;

		/* A cancel's callback may hand back (and so give away) this
		 * operation and those before it: look through the slot again. */
		if (wr == NULL)
			continue;
		wr_mark_answered(wr, status);
		if (!wr->send_pending)
			continue;
		if (wr->send_req != NULL && c->link != NULL)
			c->link->cancel(w, wr->send_req); /* a no-op for sends (UCX 1.13, tcp) */
		if (slot->wr == wr && wr->send_pending) {
			/* UCX keeps the send (nobody will pull it): give up on
			 * it; its late callback only frees the request. */
			wr->send_req = NULL;
			wr->send_pending = 0;
		}
	}
	sq_retire(w, c);
}

void engine_fail_all_ops(struct engine_worker *w, doca_error_t status)
{
	for (uint32_t i = 0; i < w->num_conns; i++) {
		struct engine_conn *c = &w->conns[i];

		if (c->sq.slots == NULL)
			continue;
		batch_discard(w, c);
		for (uint64_t s = c->sq.tail; s != c->sq.head; s++)
			wr_mark_answered(sq_slot(c, s)->wr, status); /* nothing is handed back here */
		sq_retire(w, c);
	}
}
