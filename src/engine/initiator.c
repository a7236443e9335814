/*
 * softdoca — the initiator side: posting work requests and taking their
 * answers.
 *
 * Every operation sent to a peer holds a slot of its connection's send
 * queue (each connection is a QP with its own queue of send_queue_size
 * entries: a full queue refuses only its own connection's posts). Its
 * wr_id is (generation << 32 | slot index); an answer names the
 * connection (id and secret, checked) and the wr_id, so it is matched by
 * number in O(1) and checked (slot busy, same generation, same
 * connection, same opcode) — a peer can never make us touch a pointer it
 * chose. A work
 * request is done when both its send has completed and its answer (or a
 * failure) has arrived; only then may the application reuse it.
 */
#include <string.h>

#include "core_engine.h"
#include "engine_internal.h"

SDK_LOG_REGISTER(ENGINE::INITIATOR)

_Static_assert(sizeof(struct engine_sge) == sizeof(ucp_dt_iov_t) &&
		       offsetof(struct engine_sge, addr) == offsetof(ucp_dt_iov_t, buffer) &&
		       offsetof(struct engine_sge, len) == offsetof(ucp_dt_iov_t, length),
	       "an engine_sge list is passed to UCX as an iov");

static uint64_t sge_total(const struct engine_wr *wr)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < wr->num_sge; i++)
		total += wr->sge[i].len;
	return total;
}

static uint32_t slot_index(uint64_t wr_id)
{
	return (uint32_t)wr_id;
}

/* Called once the send completed and the answer (or failure) is in. */
static void wr_try_finish(struct engine_worker *w, struct engine_wr *wr)
{
	struct engine_slot *slot;

	if (wr->send_pending || !wr->answered)
		return;
	slot = &wr->conn->slots[slot_index(wr->wr_id)];
	slot->wr = NULL;
	slot->gen++;
	wr->conn->num_busy_slots--;
	engine_wr_finish(w, wr);
}

void engine_wr_finish(struct engine_worker *w, struct engine_wr *wr)
{
	w->outstanding--;
	wr->done(wr);
}

static void wr_answer(struct engine_worker *w, struct engine_wr *wr, doca_error_t status)
{
	if (wr->answered)
		return;
	wr->answered = 1;
	wr->status = status;
	wr_try_finish(w, wr);
}

static void req_send_done(struct engine_wr *wr, ucs_status_t st)
{
	struct engine_worker *w = wr->conn->worker;

	wr->send_req = NULL;
	wr->send_pending = 0;
	if (st != UCS_OK && st != UCS_ERR_CANCELED)
		SDK_LOG_DBG("send of work request on connection %u failed: %s", wr->conn->id, ucs_status_string(st));
	if (st != UCS_OK)
		wr_answer(w, wr, DOCA_ERROR_CONNECTION_ABORTED);
	else
		wr_try_finish(w, wr);
}

/* UCX's send callback. It names the slot, not the work request: a send
 * given up on (its peer died) may call back after the slot serves
 * another request, and then it only frees its UCX request. */
static void req_send_cb(void *request, ucs_status_t st, void *user)
{
	struct engine_slot *slot = user;
	struct engine_wr *wr = slot->wr;

	if (wr == NULL || wr->send_req != request) {
		ucp_request_free(request);
		return;
	}
	ucp_request_free(request);
	req_send_done(wr, st);
}

static doca_error_t slot_take(struct engine_conn *c, struct engine_wr *wr)
{
	uint32_t n = c->worker->conf.send_queue_size;

	if (c->num_busy_slots >= n)
		return DOCA_ERROR_FULL;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t idx = (c->free_slot_hint + i) % n;
		struct engine_slot *slot = &c->slots[idx];

		if (slot->wr == NULL) {
			slot->wr = wr;
			c->num_busy_slots++;
			c->free_slot_hint = (idx + 1) % n;
			wr->wr_id = ((uint64_t)slot->gen << 32) | idx;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_FULL;
}

static bool op_carries_payload(uint8_t op)
{
	return op == ENGINE_OP_SEND || op == ENGINE_OP_SEND_IMM || op == ENGINE_OP_WRITE || op == ENGINE_OP_WRITE_IMM ||
	       op == ENGINE_OP_SYNC_SET;
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
	r->length = wr->opcode == ENGINE_OP_READ || wr->opcode == ENGINE_OP_SYNC_GET ? wr->remote.len : sge_total(wr);
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

static doca_error_t post_remote(struct engine_worker *w, struct engine_wr *wr)
{
	struct wire_req *r = (struct wire_req *)wr->hdr_space;
	ucp_request_param_t p = {0};
	ucs_status_ptr_t req;
	bool payload = op_carries_payload(wr->opcode);
	doca_error_t status;
	void *buffer = NULL;
	size_t count = 0;

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
	wr->send_pending = 1;
	wr->answered = 0;
	wr->recv_req = NULL;
	w->outstanding++;

	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.send = req_send_cb;
	p.user_data = &wr->conn->slots[slot_index(wr->wr_id)];
	/* UCX rejects an empty iov: no buffers, no payload. */
	if (payload && wr->num_sge > 0)
		buffer = engine_sge_ucx(wr->sge, wr->num_sge, wr->sge[0].len, &p, &count);
	req = ucp_am_send_nbx(wr->conn->ep, WIRE_AM_REQ, r, sizeof(*r), buffer, count, &p);
	if (req == NULL) {
		req_send_done(wr, UCS_OK);
	} else if (UCS_PTR_IS_ERR(req)) {
		SDK_LOG_ERR("connection %u: send failed: %s", wr->conn->id, ucs_status_string(UCS_PTR_STATUS(req)));
		req_send_done(wr, UCS_PTR_STATUS(req));
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
	pthread_mutex_unlock(&w->lock);
	return status;
}

doca_error_t engine_post_recv(struct engine_worker *w, struct engine_wr *wr)
{
	doca_error_t status = wr_reset(wr);

	if (status != DOCA_SUCCESS)
		return status;
	pthread_mutex_lock(&w->lock);
	status = post_recv(w, wr);
	pthread_mutex_unlock(&w->lock);
	return status;
}

/* ---- answers -------------------------------------------------------- */

static struct engine_wr *resp_find(const struct engine_worker *w, const struct wire_resp *r, struct engine_conn *c)
{
	uint32_t idx = slot_index(r->wr_id);
	struct engine_slot *slot;
	struct engine_wr *wr;

	if (idx >= w->conf.send_queue_size || c->slots == NULL) {
		SDK_LOG_ERR_RL("answer for work request %#llx outside the send queue: dropped", (unsigned long long)r->wr_id);
		return NULL;
	}
	slot = &c->slots[idx];
	wr = slot->wr;
	if (wr == NULL) {
		/* Late: the request was already failed here (a stop, a flush). */
		SDK_LOG_DBG("answer for a work request no longer in flight on connection %u: dropped", c->id);
		return NULL;
	}
	if ((uint32_t)(r->wr_id >> 32) != slot->gen || wr->conn != c || wr->opcode != r->opcode) {
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

/* Like req_send_cb, it names the slot: a receive given up on (its
 * connection failed) may complete after its work request is done. */
static void resp_rndv_done(void *request, ucs_status_t st, size_t length, void *user)
{
	struct engine_slot *slot = user;
	struct engine_wr *wr = slot->wr;

	(void)length;
	ucp_request_free(request);
	if (wr == NULL || wr->recv_req != request)
		return;
	wr->recv_req = NULL;
	wr_answer(slot->worker, wr, st == UCS_OK ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED);
}

ucs_status_t engine_am_resp(void *arg, const void *header, size_t header_length, void *data, size_t length,
			    const ucp_am_recv_param_t *param)
{
	struct engine_worker *w = arg;
	struct wire_resp resp;
	const struct wire_resp *r = &resp;
	struct engine_conn *c;
	struct engine_wr *wr;
	doca_error_t status;

	if (wire_check(WIRE_AM_RESP, header, header_length) != DOCA_SUCCESS)
		return UCS_OK;
	ENGINE_TSAN_ACQUIRE();
	memcpy(&resp, header, sizeof(resp)); /* any alignment */
	c = engine_conn_lookup(w, r->dst_conn_id, r->dst_secret);
	if (c == NULL || c->state == CONN_CLOSED)
		return UCS_OK;
	wr = resp_find(w, r, c);
	if (wr == NULL || wr->answered)
		return UCS_OK;
	if (!wire_status_to_doca(r->status, &status)) {
		SDK_LOG_ERR_RL("connection %u: answer with unknown status %d: failing the request", c->id, r->status);
		wr_answer(w, wr, DOCA_ERROR_IO_FAILED);
		return UCS_OK;
	}
	if (resp_check_payload(wr, r, length) != DOCA_SUCCESS) {
		SDK_LOG_ERR_RL("connection %u: answer carries %zu bytes, not what was asked: failing the request", c->id,
			    length);
		wr_answer(w, wr, DOCA_ERROR_IO_FAILED);
		return UCS_OK;
	}
	resp_store_value(wr, r);
	if (length == 0 || status != DOCA_SUCCESS) {
		wr_answer(w, wr, status);
		return UCS_OK;
	}
	wr->result_len = length;
	if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
		ucp_request_param_t p = {0};
		ucs_status_ptr_t req;
		size_t count;
		void *buffer;

		p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
		p.cb.recv_am = resp_rndv_done;
		p.user_data = &c->slots[slot_index(wr->wr_id)];
		buffer = engine_sge_ucx(wr->sge, wr->num_sge, length, &p, &count);
		req = ucp_am_recv_data_nbx(w->ucp, data, buffer, count, &p);
		if (req == NULL)
			wr_answer(w, wr, DOCA_SUCCESS);
		else if (UCS_PTR_IS_ERR(req))
			wr_answer(w, wr, DOCA_ERROR_IO_FAILED);
		else
			wr->recv_req = req;
		return UCS_OK;
	}
	engine_sge_scatter(wr->sge, wr->num_sge, data, length);
	wr_answer(w, wr, DOCA_SUCCESS);
	return UCS_OK;
}

/* ---- failures ------------------------------------------------------- */

/* Bytes c's operations still have to move: payloads not yet sent,
 * read answers not yet arrived (keepalive.c gives a peer busy with them
 * longer to answer). */
uint64_t engine_initiator_bulk_bytes(const struct engine_conn *c)
{
	const struct engine_worker *w = c->worker;
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < w->conf.send_queue_size && c->slots != NULL; i++) {
		const struct engine_wr *wr = c->slots[i].wr;

		if (wr == NULL || wr->conn != c)
			continue;
		if (wr->send_pending && op_carries_payload(wr->opcode))
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
	struct engine_slot *slots = c->slots;

	/* Only c's own queue: a busy connection does not slow the others. */
	for (uint32_t i = 0; i < w->conf.send_queue_size && c->num_busy_slots > 0; i++) {
		struct engine_wr *wr = slots[i].wr;

		if (wr == NULL || wr->conn != c)
			continue;
		wr_answer(w, wr, status);
		if (slots[i].wr != wr || !wr->send_pending)
			continue;
		if (wr->send_req != NULL)
			ucp_request_cancel(w->ucp, wr->send_req); /* a no-op for sends in UCX 1.13 */
		if (slots[i].wr == wr && wr->send_pending) {
			/* UCX keeps the send (nobody will pull it): give up on
			 * it; its late callback only frees the request. */
			wr->send_req = NULL;
			wr->send_pending = 0;
			wr_try_finish(w, wr);
		}
	}
}

void engine_fail_all_ops(struct engine_worker *w, doca_error_t status)
{
	for (uint32_t c = 0; c < w->num_conns; c++) {
		struct engine_slot *slots = w->conns[c].slots;

		for (uint32_t i = 0; i < w->conf.send_queue_size && w->conns[c].num_busy_slots > 0; i++) {
			struct engine_wr *wr = slots[i].wr;

			if (wr != NULL)
				wr_answer(w, wr, status);
		}
	}
}
