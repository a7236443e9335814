/*
 * softdoca — DOCA RDMA connections: export and connect (the out-of-band
 * method), disconnect, per-connection user data, and the connection
 * events the engine raises, queued from any thread and delivered to the
 * application's callbacks from doca_pe_progress.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_rdma.h>

#include "live.h"
#include "log_internal.h"
#include "pe.h"
#include "rdma.h"
#include "trace.h"

SDK_LOG_REGISTER(RDMA)

/* ------------------------------------------------------------------ */
/* Connection events                                                  */

/* The engine's conn_event callback: any thread, so only queue and wake. */
void rdma_on_conn_event(void *arg, struct engine_conn *conn, enum engine_conn_event event)
{
	struct doca_rdma *rdma = arg;
	bool queued = false;

	pthread_mutex_lock(&rdma->events_lock);
	if (atomic_load(&rdma->events_count) < rdma->events_cap) {
		uint32_t slot = (rdma->events_head + atomic_load(&rdma->events_count)) % rdma->events_cap;

		rdma->events[slot].conn = conn;
		rdma->events[slot].event = event;
		atomic_fetch_add(&rdma->events_count, 1);
		queued = true;
	}
	pthread_mutex_unlock(&rdma->events_lock);
	if (!queued) {
		/* Cannot happen with RDMA_EVENTS_PER_CONN slots per connection. */
		SDK_LOG_CRIT("rdma %p: connection event ring full, event %d of connection %u lost", (void *)rdma,
			     (int)event, rdma->engine_ops->conn_id(conn));
		return;
	}
	softdoca_pe_wake(rdma->ctx.pe);
}

void rdma_on_engine_wake(void *arg)
{
	struct doca_rdma *rdma = arg;

	atomic_store(&rdma->engine_woken, true);
	softdoca_pe_wake(rdma->ctx.pe);
}

static bool rdma_event_pop(struct doca_rdma *rdma, struct rdma_conn_event *out)
{
	bool found = false;

	pthread_mutex_lock(&rdma->events_lock);
	if (atomic_load(&rdma->events_count) > 0) {
		*out = rdma->events[rdma->events_head];
		rdma->events_head = (rdma->events_head + 1) % rdma->events_cap;
		atomic_fetch_sub(&rdma->events_count, 1);
		found = true;
	}
	pthread_mutex_unlock(&rdma->events_lock);
	return found;
}

void rdma_events_clear(struct doca_rdma *rdma)
{
	pthread_mutex_lock(&rdma->events_lock);
	rdma->events_head = 0;
	atomic_store(&rdma->events_count, 0);
	pthread_mutex_unlock(&rdma->events_lock);
}

static const char *rdma_event_name(enum engine_conn_event event)
{
	switch (event) {
	case ENGINE_CONN_ESTABLISHED:
		return "established";
	case ENGINE_CONN_FAILED:
		return "failed";
	case ENGINE_CONN_DISCONNECTED:
		return "disconnected";
	case ENGINE_CONN_REQUEST:
		return "connection request";
	}
	return "unknown";
}

/*
 * Move the connection's state on and pick the callback. Each connection
 * gets at most one established and one closing (failure or disconnection)
 * callback, so a program that disconnects inside its disconnection
 * callback is not called again for its own disconnect.
 *
 * The established callback is RDMA CM's: on hardware an export/connect
 * pair is two QPs moved to RTS by the connect call itself, with no event
 * to report, so DOCA never calls it there and programs (NVIDIA's samples
 * among them) submit right after doca_rdma_connect. Tasks submitted
 * before the link is up are held until it is.
 */
static doca_rdma_connection_established_cb_t rdma_conn_apply_event(struct doca_rdma *rdma,
								    struct doca_rdma_connection *conn,
								    enum engine_conn_event event)
{
	switch (event) {
	case ENGINE_CONN_ESTABLISHED:
		if (conn->state == RDMA_CONN_ESTABLISHED || conn->state == RDMA_CONN_CLOSED)
			return NULL;
		conn->state = RDMA_CONN_ESTABLISHED;
		return conn->by_cm ? rdma->established_cb : NULL;
	case ENGINE_CONN_FAILED:
		if (conn->state == RDMA_CONN_CLOSED)
			return NULL;
		conn->state = RDMA_CONN_CLOSED;
		return rdma->failure_cb;
	case ENGINE_CONN_DISCONNECTED:
		if (conn->state == RDMA_CONN_CLOSED)
			return NULL;
		conn->state = RDMA_CONN_CLOSED;
		return rdma->disconnect_cb;
	case ENGINE_CONN_REQUEST:
		break; /* rdma_deliver_events calls the request callback itself */
	}
	return NULL;
}

/* The connection object of an engine connection: the same slot index,
 * made fresh when the engine hands the slot out for a new connection. */
struct doca_rdma_connection *rdma_conn_bind(struct doca_rdma *rdma, struct engine_conn *engine,
					    enum rdma_conn_state state)
{
	uint32_t id = rdma->engine_ops->conn_id(engine);
	struct doca_rdma_connection *conn = &rdma->conns[id - 1];

	memset(conn, 0, sizeof(*conn));
	conn->rdma = rdma;
	conn->engine = engine;
	conn->id = id;
	conn->state = state;
	if (id > rdma->num_conns)
		rdma->num_conns = (uint16_t)id;
	rdma->engine_ops->conn_set_user(engine, conn);
	return conn;
}

/* RDMA CM: a client knocks. The application accepts or rejects from its
 * request callback; a server without one cannot answer, so it rejects. */
static void rdma_deliver_request(struct doca_rdma *rdma, struct engine_conn *engine)
{
	struct doca_rdma_connection *conn = rdma_conn_bind(rdma, engine, RDMA_CONN_REQUESTED);

	conn->by_cm = true;

	if (rdma->request_cb == NULL) {
		SDK_LOG_ERR("rdma: connection request %u rejected: no request callback was set "
			    "(doca_rdma_set_connection_state_callbacks)",
			    conn->id);
		(void)rdma->engine_ops->conn_reject(engine);
		return;
	}
	rdma->request_cb(conn, rdma->ctx.user_data);
}

/* Hand queued events to the application; the progress op calls this. */
unsigned int rdma_deliver_events(struct doca_rdma *rdma)
{
	unsigned int budget = atomic_load(&rdma->events_count);
	unsigned int delivered = 0;
	struct rdma_conn_event ev;

	/* The budget keeps events raised by the callbacks themselves for the
	 * next progress call. */
	while (budget-- > 0 && rdma_event_pop(rdma, &ev)) {
		struct doca_rdma_connection *conn;
		doca_rdma_connection_established_cb_t cb;
		enum rdma_conn_state before;

		delivered++;
		if (ev.event == ENGINE_CONN_REQUEST) {
			rdma_deliver_request(rdma, ev.conn);
			continue;
		}
		conn = rdma->engine_ops->conn_get_user(ev.conn);
		if (conn == NULL) {
			SDK_LOG_DBG("rdma %p: %s event of an unknown connection ignored", (void *)rdma,
				    rdma_event_name(ev.event));
			continue;
		}
		SDK_LOG_TRC("rdma connection %u: %s", conn->id, rdma_event_name(ev.event));
		before = conn->state;
		cb = rdma_conn_apply_event(rdma, conn, ev.event);
		/* Every state change goes on the timeline, callback or not. */
		if (unlikely(softdoca_trace_on) && conn->state != before)
			softdoca_trace_conn(&rdma->ctx, conn->id, rdma_event_name(ev.event));
		if (cb != NULL)
			cb(conn, conn->user_data, rdma->ctx.user_data);
		/* A closed connection's slot may serve a new one from now on. */
		if (ev.event != ENGINE_CONN_ESTABLISHED && conn->engine != NULL && rdma->worker != NULL)
			rdma->engine_ops->conn_release(conn->engine);
		/* A callback may have stopped the context all the way to IDLE. */
		if (rdma->ctx.state == DOCA_CTX_STATE_IDLE)
			break;
	}
	return delivered;
}
/* ------------------------------------------------------------------ */
/* Out-of-band connections                                            */

const char *rdma_conn_state_name(enum rdma_conn_state state)
{
	switch (state) {
	case RDMA_CONN_EXPORTED:
		return "exported";
	case RDMA_CONN_REQUESTED:
		return "requested (waiting for accept or reject)";
	case RDMA_CONN_CONNECTING:
		return "connecting";
	case RDMA_CONN_ESTABLISHED:
		return "established";
	case RDMA_CONN_CLOSED:
		return "closed";
	}
	return "unknown";
}

static uint64_t rdma_coarse_now_ns(void)
{
	struct timespec ts;

	/* Coarse is enough for a period of seconds, and cheap. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* doca_rdma_connect succeeded: watch the connection until established. */
static void rdma_connect_watch_start(struct doca_rdma *rdma, struct doca_rdma_connection *conn)
{
	uint32_t after_ms = softdoca_explain_after_ms();
	uint64_t now;

	if (after_ms == 0)
		return;
	now = rdma_coarse_now_ns();
	conn->connect_ns = now;
	conn->wait_from_ns = now;
	conn->wait_explained = false;
	conn->idle_explained = false;
	if (rdma->connect_check_ns == 0) {
		rdma->connect_check_ns = now + (uint64_t)after_ms * 1000000ull;
		rdma->connect_progress_ns = now;
		rdma->connect_notify_seen = atomic_load_explicit(&rdma->ctx.pe->notify_requests, memory_order_relaxed);
	}
}

/* Connections waited a period, but this side's PE was not progressed for
 * at least half of it just before now (nor asleep on its handle): the
 * wait is this side's. One line for all the connections found in one
 * check (a program that connects 128 before it progresses gets one, not
 * 128); each is said once, and its peer gets a period of progress from
 * now before it is blamed. */
static void rdma_connect_explain_idle(const struct doca_rdma_connection *first, uint32_t count, uint64_t now,
				      uint64_t idle_ns)
{
	char which[64];

	if (count == 1)
		snprintf(which, sizeof(which), "rdma connection %u", first->id);
	else
		snprintf(which, sizeof(which), "rdma connection %u and %u more", first->id, count - 1);
	SDK_LOG_WARN("%s: doca_rdma_connect was called %" PRIu64 " ms ago and the connection is not "
		     "established yet, but this side's PE was not progressed for the last %" PRIu64 " ms "
		     "(doca_pe_progress not called, no doca_pe_request_notification either): a connection is "
		     "made inside doca_pe_progress on both sides, so this side kept it waiting; progress the PE "
		     "right after doca_rdma_connect (tasks submitted meanwhile wait for the connection) (said "
		     "once per connection; SOFTDOCA_PE_STALL_MS=%u)",
		     which, (uint64_t)((now - first->connect_ns) / 1000000u), idle_ns / 1000000u,
		     softdoca_explain_after_ms());
}

static void rdma_connect_explain_peer(struct doca_rdma_connection *c, uint64_t now)
{
	c->wait_explained = true;
	SDK_LOG_WARN("rdma connection %u: doca_rdma_connect was called %" PRIu64 " ms ago and the connection is "
		     "still not established. Likely: the peer has not called doca_rdma_connect with this "
		     "side's descriptor (each side connects with the other's), the descriptor given here is "
		     "from another run or from a process that exited, or the peer does not progress its PE "
		     "(said once per connection; SOFTDOCA_PE_STALL_MS=%u)",
		     c->id, (uint64_t)((now - c->connect_ns) / 1000000u), softdoca_explain_after_ms());
}

void rdma_connect_watch(struct doca_rdma *rdma)
{
	uint64_t after_ns = (uint64_t)softdoca_explain_after_ms() * 1000000ull;
	uint64_t now = rdma_coarse_now_ns(), next = 0;
	uint64_t notify = atomic_load_explicit(&rdma->ctx.pe->notify_requests, memory_order_relaxed);
	uint64_t last = rdma->connect_progress_ns;
	bool slept = notify != rdma->connect_notify_seen;

	/* Every progress call while a connection is watched: a gap between
	 * two of them is time this side did not progress. */
	rdma->connect_progress_ns = now;
	rdma->connect_notify_seen = notify;
	struct doca_rdma_connection *idle_first = NULL;
	uint64_t idle_max = 0;
	uint32_t idle_count = 0;

	if (now < rdma->connect_check_ns)
		return;
	for (uint16_t i = 0; i < rdma->num_conns; i++) {
		struct doca_rdma_connection *c = &rdma->conns[i];
		uint64_t due, idle;

		if (c->state != RDMA_CONN_CONNECTING || c->connect_ns == 0 || c->wait_explained)
			continue;
		due = c->wait_from_ns + after_ns;
		if (now < due) {
			next = next == 0 || due < next ? due : next;
			continue;
		}
		idle = now - (last > c->connect_ns ? last : c->connect_ns);
		if (!slept && !c->idle_explained && idle >= after_ns / 2) {
			c->idle_explained = true;
			c->wait_from_ns = now;
			if (idle_first == NULL)
				idle_first = c;
			idle_max = idle > idle_max ? idle : idle_max;
			idle_count++;
			due = c->wait_from_ns + after_ns;
			next = next == 0 || due < next ? due : next;
			continue;
		}
		rdma_connect_explain_peer(c, now);
	}
	if (idle_first != NULL)
		rdma_connect_explain_idle(idle_first, idle_count, now, idle_max);
	rdma->connect_check_ns = next;
}

doca_error_t rdma_check_running(const struct doca_rdma *rdma, const char *func)
{
	return softdoca_ctx_check_state(&rdma->ctx, SOFTDOCA_CTX_STATE_BIT(DOCA_CTX_STATE_RUNNING), func,
					"call it after doca_ctx_start, from the state callback at the latest");
}

doca_error_t rdma_conn_check(const struct doca_rdma *rdma, const struct doca_rdma_connection *conn,
			     const char *what)
{
	if (conn == NULL) {
		SDK_LOG_ERR("%s: connection is NULL", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (conn->rdma != rdma) {
		SDK_LOG_ERR("%s: connection %u belongs to another rdma context", what, conn->id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (conn->engine == NULL) {
		SDK_LOG_ERR("%s: connection %u is gone: the rdma context was stopped since it was made", what,
			    conn->id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_export(struct doca_rdma *rdma, const void **local_rdma_conn_details,
			      size_t *local_rdma_conn_details_size, struct doca_rdma_connection **rdma_connection)
{
	struct doca_rdma_connection *conn;
	struct engine_conn *engine;
	const void *desc;
	size_t desc_len;
	doca_error_t status;

	if (rdma == NULL)
		return rdma_null_arg(__func__, "rdma");
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (local_rdma_conn_details == NULL || local_rdma_conn_details_size == NULL)
		return rdma_null_arg(__func__, "descriptor output pointer");
	if (rdma_connection == NULL)
		return rdma_null_arg(__func__, "connection output pointer");
	status = rdma_check_running(rdma, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	status = rdma->engine_ops->conn_export(rdma->worker, &engine, &desc, &desc_len);
	if (status != DOCA_SUCCESS)
		return status;
	conn = rdma_conn_bind(rdma, engine, RDMA_CONN_EXPORTED);
	SDK_LOG_TRC("rdma %p: connection %u exported (%zu-byte descriptor)", (void *)rdma, conn->id, desc_len);
	*local_rdma_conn_details = desc;
	*local_rdma_conn_details_size = desc_len;
	*rdma_connection = conn;
	return DOCA_SUCCESS;
}

/* A DC connection the peer established by connecting first (its HELLO
 * gave this side its endpoint), which this side has not connected yet. */
static bool rdma_conn_dc_passive(const struct doca_rdma *rdma, const struct doca_rdma_connection *conn)
{
	return rdma->props.transport_type == DOCA_RDMA_TRANSPORT_TYPE_DC && conn->state == RDMA_CONN_ESTABLISHED &&
	       !conn->connect_called && !conn->disconnect_called;
}

/* Both sides of a DC program may connect (NVIDIA's multi-connection
 * sample does): on a connection the peer established first, connect
 * checks that the descriptor is that peer's and changes nothing else. */
static doca_error_t rdma_conn_dc_bind_back(struct doca_rdma *rdma, struct doca_rdma_connection *conn,
					   const void *desc, size_t desc_len)
{
	doca_error_t status = rdma->engine_ops->conn_connect(conn->engine, desc, desc_len);

	if (status != DOCA_SUCCESS)
		return status;
	conn->connect_called = true;
	SDK_LOG_TRC("rdma %p: DC connection %u connected back to the peer that connected first", (void *)rdma,
		    conn->id);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connect(struct doca_rdma *rdma, const void *remote_rdma_conn_details,
			       size_t remote_rdma_conn_details_size, struct doca_rdma_connection *rdma_connection)
{
	doca_error_t status;

	if (rdma == NULL)
		return rdma_null_arg(__func__, "rdma");
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (remote_rdma_conn_details == NULL)
		return rdma_null_arg(__func__, "remote descriptor");
	if (remote_rdma_conn_details_size == 0) {
		SDK_LOG_ERR("%s: remote descriptor is empty", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = rdma_check_running(rdma, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	status = rdma_conn_check(rdma, rdma_connection, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	if (rdma_conn_dc_passive(rdma, rdma_connection))
		return rdma_conn_dc_bind_back(rdma, rdma_connection, remote_rdma_conn_details,
					      remote_rdma_conn_details_size);
	if (rdma_connection->state != RDMA_CONN_EXPORTED || rdma_connection->disconnect_called) {
		SDK_LOG_ERR("%s: DOCA_ERROR_BAD_STATE: connection %u is %s; this call needs it exported (fresh from "
			    "doca_rdma_export, not yet connected); export a new one",
			    __func__, rdma_connection->id,
			    rdma_connection->disconnect_called ? "closed" : rdma_conn_state_name(rdma_connection->state));
		return DOCA_ERROR_BAD_STATE;
	}
	status = rdma->engine_ops->conn_connect(rdma_connection->engine, remote_rdma_conn_details,
						remote_rdma_conn_details_size);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_connection->state = RDMA_CONN_CONNECTING;
	rdma_connection->connect_called = true;
	rdma_connect_watch_start(rdma, rdma_connection);
	SDK_LOG_TRC("rdma %p: connection %u connecting", (void *)rdma, rdma_connection->id);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_disconnect(struct doca_rdma_connection *rdma_connection)
{
	struct doca_rdma_connection *conn = rdma_connection;
	doca_error_t status;

	if (conn == NULL)
		return rdma_null_arg(__func__, "connection");
	/* Closing twice (e.g. once more from the disconnection callback) is
	 * harmless. */
	if (conn->disconnect_called)
		return DOCA_SUCCESS;
	/* The context's stop closed every connection already: there is
	 * nothing left to disconnect, and that is what the caller wants.
	 * doca_rdma.h lists no BAD_STATE for this call (only INVALID_VALUE and
	 * CONNECTION_ABORTED), and programs written against hardware
	 * disconnect after the stop (doca-stdexec's rdma_loopback exited 1 on
	 * BAD_STATE). */
	if (conn->engine == NULL) {
		SDK_LOG_DBG("%s: connection %u was closed by its context's stop; nothing to disconnect", __func__,
			    conn->id);
		conn->disconnect_called = true;
		conn->state = RDMA_CONN_CLOSED;
		return DOCA_SUCCESS;
	}
	status = conn->rdma->engine_ops->conn_disconnect(conn->engine);
	if (status != DOCA_SUCCESS)
		return status;
	conn->disconnect_called = true;
	/* Ours to close: no callback for our own disconnect; the slot is free. */
	if (conn->state != RDMA_CONN_CLOSED) {
		conn->state = RDMA_CONN_CLOSED;
		conn->rdma->engine_ops->conn_release(conn->engine);
	}
	SDK_LOG_TRC("rdma connection %u: disconnect requested", conn->id);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_set_user_data(struct doca_rdma_connection *rdma_connection,
						union doca_data connection_user_data)
{
	if (rdma_connection == NULL)
		return rdma_null_arg(__func__, "connection");
	rdma_connection->user_data = connection_user_data;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_user_data(const struct doca_rdma_connection *rdma_connection,
						union doca_data *connection_user_data)
{
	if (rdma_connection == NULL)
		return rdma_null_arg(__func__, "connection");
	if (connection_user_data == NULL)
		return rdma_null_arg(__func__, "user data output pointer");
	*connection_user_data = rdma_connection->user_data;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_id(const struct doca_rdma_connection *rdma_connection,
					 uint32_t *connection_id)
{
	if (rdma_connection == NULL)
		return rdma_null_arg(__func__, "connection");
	if (connection_id == NULL)
		return rdma_null_arg(__func__, "id output pointer");
	*connection_id = rdma_connection->id;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_connection_state_callbacks(struct doca_rdma *rdma,
						      doca_rdma_connection_request_cb_t request_cb,
						      doca_rdma_connection_established_cb_t established_cb,
						      doca_rdma_connection_failure_cb_t failure_cb,
						      doca_rdma_connection_disconnection_cb_t disconnect_cb)
{
	if (rdma == NULL)
		return rdma_null_arg(__func__, "rdma");
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (softdoca_ctx_check_idle(&rdma->ctx, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (established_cb == NULL || failure_cb == NULL || disconnect_cb == NULL) {
		SDK_LOG_ERR("%s: the established, failure and disconnection callbacks are required (only the "
			    "request callback may be NULL)",
			    __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->request_cb = request_cb;
	rdma->established_cb = established_cb;
	rdma->failure_cb = failure_cb;
	rdma->disconnect_cb = disconnect_cb;
	return DOCA_SUCCESS;
}
