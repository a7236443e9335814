/*
 * softdoca — DOCA RDMA context: life cycle, properties, capabilities,
 * connections and RDMA CM addresses. The tasks are in rdma_tasks.c.
 *
 * Start is synchronous: the start op creates the engine worker, so the
 * IDLE -> RUNNING callback fires inside doca_ctx_start and may export and
 * connect at once (the DOCA samples do). Stop flushes the worker; the
 * context reaches IDLE once every flushed task came back through the PE,
 * and only then is the worker destroyed.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_rdma.h>
#include <doca_rdma_bridge.h>

#include "dev.h"
#include "live.h"
#include "log_internal.h"
#include "rdma.h"

SDK_LOG_REGISTER(RDMA)

static doca_error_t rdma_null_arg(const char *func, const char *what)
{
	SDK_LOG_ERR("%s: %s is NULL", func, what);
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t rdma_no_accelerator(const char *func)
{
	SDK_LOG_ERR("%s: soft devices have no GPU or DPA datapath", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t rdma_no_verbs(const char *func)
{
	SDK_LOG_ERR("%s: soft devices have no verbs protection domain or memory keys", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* ------------------------------------------------------------------ */
/* Connection events                                                  */

/* The engine's conn_event callback: any thread, so only queue and wake. */
static void rdma_on_conn_event(void *arg, struct engine_conn *conn, enum engine_conn_event event)
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
			     (int)event, engine_conn_id(conn));
		return;
	}
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

static void rdma_events_clear(struct doca_rdma *rdma)
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
		return rdma->established_cb;
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
static struct doca_rdma_connection *rdma_conn_bind(struct doca_rdma *rdma, struct engine_conn *engine,
						   enum rdma_conn_state state)
{
	uint32_t id = engine_conn_id(engine);
	struct doca_rdma_connection *conn = &rdma->conns[id - 1];

	memset(conn, 0, sizeof(*conn));
	conn->rdma = rdma;
	conn->engine = engine;
	conn->id = id;
	conn->state = state;
	if (id > rdma->num_conns)
		rdma->num_conns = (uint16_t)id;
	engine_conn_set_user(engine, conn);
	return conn;
}

/* RDMA CM: a client knocks. The application accepts or rejects from its
 * request callback; a server without one cannot answer, so it rejects. */
static void rdma_deliver_request(struct doca_rdma *rdma, struct engine_conn *engine)
{
	struct doca_rdma_connection *conn = rdma_conn_bind(rdma, engine, RDMA_CONN_REQUESTED);

	if (rdma->request_cb == NULL) {
		SDK_LOG_ERR("rdma: connection request %u rejected: no request callback was set "
			    "(doca_rdma_set_connection_state_callbacks)",
			    conn->id);
		(void)engine_conn_reject(engine);
		return;
	}
	rdma->request_cb(conn, rdma->ctx.user_data);
}

/* Hand queued events to the application; the progress op calls this. */
static unsigned int rdma_deliver_events(struct doca_rdma *rdma)
{
	unsigned int budget = atomic_load(&rdma->events_count);
	unsigned int delivered = 0;
	struct rdma_conn_event ev;

	/* The budget keeps events raised by the callbacks themselves for the
	 * next progress call. */
	while (budget-- > 0 && rdma_event_pop(rdma, &ev)) {
		struct doca_rdma_connection *conn;
		doca_rdma_connection_established_cb_t cb;

		delivered++;
		if (ev.event == ENGINE_CONN_REQUEST) {
			rdma_deliver_request(rdma, ev.conn);
			continue;
		}
		conn = engine_conn_get_user(ev.conn);
		if (conn == NULL) {
			SDK_LOG_DBG("rdma %p: %s event of an unknown connection ignored", (void *)rdma,
				    rdma_event_name(ev.event));
			continue;
		}
		SDK_LOG_TRC("rdma connection %u: %s", conn->id, rdma_event_name(ev.event));
		cb = rdma_conn_apply_event(rdma, conn, ev.event);
		if (cb != NULL)
			cb(conn, conn->user_data, rdma->ctx.user_data);
		/* A closed connection's slot may serve a new one from now on. */
		if (ev.event != ENGINE_CONN_ESTABLISHED && conn->engine != NULL && rdma->worker != NULL)
			engine_conn_release(conn->engine);
		/* A callback may have stopped the context all the way to IDLE. */
		if (rdma->ctx.state == DOCA_CTX_STATE_IDLE)
			break;
	}
	return delivered;
}

/* ------------------------------------------------------------------ */
/* Context ops                                                        */

static void rdma_run_free(struct doca_rdma *rdma)
{
	free(rdma->conns);
	rdma->conns = NULL;
	rdma->num_conns = 0;
	rdma->conns_cap = 0;
	free(rdma->events);
	rdma->events = NULL;
	rdma->events_cap = 0;
	rdma_events_clear(rdma);
}

/* Connection slots and the event ring, sized by max_num_connections. */
static doca_error_t rdma_run_alloc(struct doca_rdma *rdma)
{
	uint16_t max = rdma->props.max_num_connections;

	rdma_run_free(rdma);
	rdma->conns = calloc(max, sizeof(*rdma->conns));
	rdma->events = calloc((size_t)max * RDMA_EVENTS_PER_CONN, sizeof(*rdma->events));
	if (rdma->conns == NULL || rdma->events == NULL) {
		SDK_LOG_ERR("rdma start: no memory for %u connections", max);
		rdma_run_free(rdma);
		return DOCA_ERROR_NO_MEMORY;
	}
	rdma->conns_cap = max;
	rdma->events_cap = (uint32_t)max * RDMA_EVENTS_PER_CONN;
	return DOCA_SUCCESS;
}

static doca_error_t rdma_start(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);
	struct engine_worker_conf conf = {
		.dc = rdma->props.transport_type == DOCA_RDMA_TRANSPORT_TYPE_DC,
		.max_connections = rdma->props.max_num_connections,
		.rnr_retry_count = rdma->props.rnr_retry_count,
		.send_queue_size = rdma->props.send_queue_size,
		.permissions = rdma->props.permissions,
		.gid_index = rdma->props.gid_index,
		.request_timeout_ms = rdma->props.request_timeout_ms,
		.conn_event = rdma_on_conn_event,
		.arg = rdma,
	};
	doca_error_t status;

	status = rdma_run_alloc(rdma);
	if (status != DOCA_SUCCESS)
		return status;
	status = engine_worker_create(ctx->dev, &conf, &rdma->worker);
	if (status != DOCA_SUCCESS) {
		SDK_LOG_ERR("rdma start: the soft NIC could not be set up: %s", doca_error_get_descr(status));
		rdma->worker = NULL;
		rdma_run_free(rdma);
		return status;
	}
	return DOCA_SUCCESS;
}

static void rdma_stop(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);

	/* Every posted receive and outstanding operation completes with an
	 * error through the PE. */
	if (rdma->worker != NULL)
		engine_worker_flush(rdma->worker);
}

static bool rdma_stop_finished(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);

	return rdma->worker == NULL || engine_worker_outstanding(rdma->worker) == 0;
}

static void rdma_stopped(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);
	uint16_t i;

	if (rdma->worker != NULL)
		engine_worker_destroy(rdma->worker);
	rdma->worker = NULL;
	/* The slots stay (the application may still hold pointers to them)
	 * but no longer lead anywhere. */
	for (i = 0; i < rdma->num_conns; i++)
		rdma->conns[i].engine = NULL;
	rdma_events_clear(rdma);
}

static unsigned int rdma_progress(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);
	unsigned int done = 0;

	if (rdma->worker != NULL)
		done += engine_worker_progress(rdma->worker);
	return done;
}

/* Connection events go after the task completions of the same progress
 * call: a task that completed on a connection is reported before that
 * connection's disconnection. */
static unsigned int rdma_deliver(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);

	return atomic_load(&rdma->events_count) > 0 ? rdma_deliver_events(rdma) : 0;
}

static bool rdma_has_work(struct doca_ctx *ctx)
{
	return atomic_load(&rdma_from_ctx(ctx)->events_count) > 0;
}

static const struct softdoca_ctx_ops rdma_ctx_ops = {
	.name = "rdma",
	.start = rdma_start,
	.stop = rdma_stop,
	.stop_finished = rdma_stop_finished,
	.stopped = rdma_stopped,
	.progress = rdma_progress,
	.deliver = rdma_deliver,
	.has_work = rdma_has_work,
};

/* ------------------------------------------------------------------ */
/* Create / destroy                                                   */

static void rdma_props_default(struct rdma_props *props)
{
	memset(props, 0, sizeof(*props));
	props->permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;
	props->gid_index = 0;
	props->send_queue_size = RDMA_DEFAULT_SEND_QUEUE_SIZE;
	props->max_send_buf_list_len = RDMA_DEFAULT_BUF_LIST_LEN;
	props->recv_buf_list_len = RDMA_DEFAULT_BUF_LIST_LEN;
	props->sl = 0;
	props->transport_type = DOCA_RDMA_TRANSPORT_TYPE_RC;
	props->mtu = DOCA_MTU_SIZE_1K_BYTES;
	props->max_num_connections = RDMA_DEFAULT_CONNECTIONS;
	props->request_timeout_ms = RDMA_DEFAULT_REQUEST_TIMEOUT_MS;
	props->grh_enabled = 1;
	props->rnr_retry_count = RDMA_DEFAULT_RNR_RETRY;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_create(struct doca_dev *dev, struct doca_rdma **rdma_out)
{
	struct doca_rdma *rdma;

	if (dev == NULL)
		return rdma_null_arg(__func__, "dev");
	if (rdma_out == NULL)
		return rdma_null_arg(__func__, "rdma output pointer");
	rdma = calloc(1, sizeof(*rdma));
	if (rdma == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (pthread_mutex_init(&rdma->events_lock, NULL) != 0) {
		SDK_LOG_ERR("%s: cannot create a mutex", __func__);
		free(rdma);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	atomic_init(&rdma->events_count, 0);
	rdma_props_default(&rdma->props);
	if (softdoca_ctx_init(&rdma->ctx, &rdma_ctx_ops, dev) != DOCA_SUCCESS) {
		/* softdoca_ctx_init said why */
		pthread_mutex_destroy(&rdma->events_lock);
		free(rdma);
		return DOCA_ERROR_NO_MEMORY;
	}
	rdma_tasks_init(rdma);
	*rdma_out = rdma;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_destroy(struct doca_rdma *rdma)
{
	doca_error_t status;

	if (rdma == NULL)
		return rdma_null_arg(__func__, "rdma");
	/* Only the address is computed: a destroyed rdma is not read. */
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	status = softdoca_ctx_fini(&rdma->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_run_free(rdma);
	pthread_mutex_destroy(&rdma->events_lock);
	free(rdma);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
struct doca_ctx *doca_rdma_as_ctx(struct doca_rdma *rdma)
{
	if (rdma == NULL) {
		(void)rdma_null_arg(__func__, "rdma");
		return NULL;
	}
	return &rdma->ctx;
}

/* ------------------------------------------------------------------ */
/* Out-of-band connections                                            */

static doca_error_t rdma_check_running(const struct doca_rdma *rdma, const char *func)
{
	if (rdma->ctx.state == DOCA_CTX_STATE_RUNNING)
		return DOCA_SUCCESS;
	SDK_LOG_ERR("%s: the rdma context is not running; call it after doca_ctx_start (from the state callback "
		    "at the latest)",
		    func);
	return DOCA_ERROR_BAD_STATE;
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
	status = engine_conn_export(rdma->worker, &engine, &desc, &desc_len);
	if (status != DOCA_SUCCESS)
		return status;
	conn = rdma_conn_bind(rdma, engine, RDMA_CONN_EXPORTED);
	SDK_LOG_TRC("rdma %p: connection %u exported (%zu-byte descriptor)", (void *)rdma, conn->id, desc_len);
	*local_rdma_conn_details = desc;
	*local_rdma_conn_details_size = desc_len;
	*rdma_connection = conn;
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
	if (rdma_connection->state != RDMA_CONN_EXPORTED || rdma_connection->disconnect_called) {
		SDK_LOG_ERR("%s: connection %u was already connected; export a new one", __func__,
			    rdma_connection->id);
		return DOCA_ERROR_BAD_STATE;
	}
	status = engine_conn_connect(rdma_connection->engine, remote_rdma_conn_details,
				     remote_rdma_conn_details_size);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_connection->state = RDMA_CONN_CONNECTING;
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
	if (conn->engine == NULL) {
		SDK_LOG_ERR("%s: connection %u is gone: its rdma context was stopped", __func__, conn->id);
		return DOCA_ERROR_BAD_STATE;
	}
	status = engine_conn_disconnect(conn->engine);
	if (status != DOCA_SUCCESS)
		return status;
	conn->disconnect_called = true;
	/* Ours to close: no callback for our own disconnect; the slot is free. */
	if (conn->state != RDMA_CONN_CLOSED) {
		conn->state = RDMA_CONN_CLOSED;
		engine_conn_release(conn->engine);
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

/* ------------------------------------------------------------------ */
/* RDMA CM: addresses now, connections in a later step                */

/* Fill addr->sa from addr->text; false if the text is not such an address. */
static bool rdma_addr_parse(struct doca_rdma_addr *addr)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&addr->sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&addr->sa;
	struct addrinfo hints, *res = NULL;

	memset(&addr->sa, 0, sizeof(addr->sa));
	switch (addr->type) {
	case DOCA_RDMA_ADDR_TYPE_IPv4:
		sin->sin_family = AF_INET;
		sin->sin_port = htons(addr->port);
		addr->sa_len = sizeof(*sin);
		return inet_pton(AF_INET, addr->text, &sin->sin_addr) == 1;
	case DOCA_RDMA_ADDR_TYPE_GID:
		/* A GID is 16 bytes written the way IPv6 addresses are. */
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(addr->port);
		addr->sa_len = sizeof(*sin6);
		return inet_pton(AF_INET6, addr->text, &sin6->sin6_addr) == 1;
	case DOCA_RDMA_ADDR_TYPE_IPv6:
		/* getaddrinfo also takes a scope ("fe80::1%eth0"), which
		 * link-local peers need; AI_NUMERICHOST keeps DNS out. */
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_INET6;
		hints.ai_flags = AI_NUMERICHOST;
		if (getaddrinfo(addr->text, NULL, &hints, &res) != 0 || res == NULL)
			return false;
		memcpy(sin6, res->ai_addr, sizeof(*sin6));
		freeaddrinfo(res);
		sin6->sin6_port = htons(addr->port);
		addr->sa_len = sizeof(*sin6);
		return true;
	}
	return false;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_create(enum doca_rdma_addr_type addr_type, const char *address, uint16_t port,
				   struct doca_rdma_addr **addr_out)
{
	struct doca_rdma_addr *addr;
	size_t len;

	if (address == NULL)
		return rdma_null_arg(__func__, "address");
	if (addr_out == NULL)
		return rdma_null_arg(__func__, "address output pointer");
	if (addr_type != DOCA_RDMA_ADDR_TYPE_IPv4 && addr_type != DOCA_RDMA_ADDR_TYPE_IPv6 &&
	    addr_type != DOCA_RDMA_ADDR_TYPE_GID) {
		SDK_LOG_ERR("%s: unknown address type %d", __func__, (int)addr_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	len = strnlen(address, RDMA_ADDR_TEXT_MAX);
	if (len == 0 || len == RDMA_ADDR_TEXT_MAX) {
		SDK_LOG_ERR("%s: address text is %s", __func__, len == 0 ? "empty" : "too long to be an address");
		return DOCA_ERROR_INVALID_VALUE;
	}
	addr = calloc(1, sizeof(*addr));
	if (addr == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	addr->type = addr_type;
	addr->port = port;
	memcpy(addr->text, address, len + 1);
	if (!rdma_addr_parse(addr)) {
		SDK_LOG_ERR("%s: \"%s\" is not a valid %s address", __func__, address,
			    addr_type == DOCA_RDMA_ADDR_TYPE_IPv4 ? "IPv4" :
			    addr_type == DOCA_RDMA_ADDR_TYPE_IPv6 ? "IPv6" : "GID (IPv6-style)");
		free(addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*addr_out = addr;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_destroy(struct doca_rdma_addr *addr)
{
	if (addr == NULL)
		return rdma_null_arg(__func__, "address");
	free(addr);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_addr_get_params(struct doca_rdma_addr *addr, enum doca_rdma_addr_type *addr_type,
				       const char **address, uint16_t *port)
{
	if (addr == NULL)
		return rdma_null_arg(__func__, "address object");
	if (addr_type == NULL || address == NULL || port == NULL)
		return rdma_null_arg(__func__, "an output pointer");
	*addr_type = addr->type;
	*address = addr->text;
	*port = addr->port;
	return DOCA_SUCCESS;
}

/* RDMA CM works with RC only, as in DOCA (DC is export/connect only). */
static doca_error_t rdma_cm_check(const struct doca_rdma *rdma, const char *func)
{
	doca_error_t status = rdma_check_running(rdma, func);

	if (status != DOCA_SUCCESS)
		return status;
	if (rdma->props.transport_type != DOCA_RDMA_TRANSPORT_TYPE_RC) {
		SDK_LOG_ERR("%s: RDMA CM connections need the RC transport; DC connects with export/connect only", func);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_start_listen_to_port(struct doca_rdma *rdma, uint16_t port)
{
	doca_error_t status;

	if (rdma == NULL)
		return rdma_null_arg(__func__, "rdma");
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	status = rdma_cm_check(rdma, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	if (rdma->request_cb == NULL) {
		SDK_LOG_ERR("%s: set a connection request callback first (doca_rdma_set_connection_state_callbacks)",
			    __func__);
		return DOCA_ERROR_BAD_STATE;
	}
	return engine_listen(rdma->worker, port);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_stop_listen_to_port(struct doca_rdma *rdma, uint16_t port)
{
	doca_error_t status;

	if (rdma == NULL)
		return rdma_null_arg(__func__, "rdma");
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	status = rdma_check_running(rdma, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	return engine_listen_stop(rdma->worker, port);
}

/* A connection request this context has not answered yet. */
static doca_error_t rdma_request_check(const struct doca_rdma_connection *conn, const char *func)
{
	if (conn == NULL)
		return rdma_null_arg(func, "connection");
	if (conn->engine == NULL || conn->rdma->worker == NULL) {
		SDK_LOG_ERR("%s: connection %u is gone: its rdma context was stopped", func, conn->id);
		return DOCA_ERROR_BAD_STATE;
	}
	if (conn->state != RDMA_CONN_REQUESTED) {
		SDK_LOG_ERR("%s: connection %u is not a connection request waiting for an answer", func, conn->id);
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_accept(struct doca_rdma_connection *rdma_connection, void *private_data,
					 uint8_t private_data_len)
{
	doca_error_t status = rdma_request_check(rdma_connection, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	status = engine_conn_accept(rdma_connection->engine, private_data, private_data_len);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_connection->state = RDMA_CONN_CONNECTING;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_reject(struct doca_rdma_connection *rdma_connection)
{
	doca_error_t status = rdma_request_check(rdma_connection, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	status = engine_conn_reject(rdma_connection->engine);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_connection->state = RDMA_CONN_CLOSED;
	return DOCA_SUCCESS;
}

struct rdma_pending_conn {
	struct doca_rdma *rdma;
	union doca_data user_data;
};

/* Runs inside the engine before the connection makes any traffic: the
 * connection object must be there when its first event or completion is. */
static void rdma_conn_bind_pending(void *arg, struct engine_conn *engine)
{
	struct rdma_pending_conn *pending = arg;
	struct doca_rdma_connection *conn = rdma_conn_bind(pending->rdma, engine, RDMA_CONN_CONNECTING);

	conn->user_data = pending->user_data;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connect_to_addr(struct doca_rdma *rdma, struct doca_rdma_addr *addr,
				       union doca_data connection_user_data)
{
	struct rdma_pending_conn pending;
	struct doca_rdma_connection *conn;
	struct engine_conn *engine;
	doca_error_t status;

	if (rdma == NULL)
		return rdma_null_arg(__func__, "rdma");
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (addr == NULL)
		return rdma_null_arg(__func__, "address");
	status = rdma_cm_check(rdma, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	pending.rdma = rdma;
	pending.user_data = connection_user_data;
	status = engine_conn_connect_addr(rdma->worker, (const struct sockaddr *)&addr->sa, addr->sa_len,
					  rdma_conn_bind_pending, &pending, &engine);
	if (status != DOCA_SUCCESS)
		return status;
	conn = engine_conn_get_user(engine);
	SDK_LOG_TRC("rdma %p: connection %u connecting to %s port %u", (void *)rdma, conn->id, addr->text,
		    addr->port);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connection_get_addr(const struct doca_rdma_connection *rdma_connection,
					   struct doca_rdma_addr **addr)
{
	struct doca_rdma_connection *conn = (struct doca_rdma_connection *)rdma_connection;
	struct doca_rdma_addr *a;
	const void *host;

	if (conn == NULL)
		return rdma_null_arg(__func__, "connection");
	if (addr == NULL)
		return rdma_null_arg(__func__, "address output pointer");
	if (conn->engine == NULL || conn->rdma->worker == NULL) {
		SDK_LOG_ERR("%s: connection %u is gone: its rdma context was stopped", __func__, conn->id);
		return DOCA_ERROR_BAD_STATE;
	}
	a = &conn->peer_addr;
	if (engine_conn_peer_addr(conn->engine, &a->sa, &a->sa_len) != DOCA_SUCCESS) {
		SDK_LOG_ERR("%s: connection %u has no peer address (it was made by export/connect)", __func__, conn->id);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (a->sa.ss_family == AF_INET) {
		host = &((struct sockaddr_in *)&a->sa)->sin_addr;
		a->port = ntohs(((struct sockaddr_in *)&a->sa)->sin_port);
		a->type = DOCA_RDMA_ADDR_TYPE_IPv4;
	} else {
		host = &((struct sockaddr_in6 *)&a->sa)->sin6_addr;
		a->port = ntohs(((struct sockaddr_in6 *)&a->sa)->sin6_port);
		a->type = DOCA_RDMA_ADDR_TYPE_IPv6;
	}
	if (inet_ntop(a->sa.ss_family, host, a->text, sizeof(a->text)) == NULL)
		a->text[0] = '\0';
	*addr = a;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_prepare_connection(struct doca_rdma *rdma, struct rdma_cm_id *cm_id,
						 struct doca_rdma_connection **rdma_connection)
{
	(void)rdma;
	(void)cm_id;
	(void)rdma_connection;
	return rdma_no_verbs(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_accept(struct doca_rdma *rdma, void *private_data, uint8_t private_data_len,
				     struct doca_rdma_connection *rdma_connection)
{
	(void)rdma;
	(void)private_data;
	(void)private_data_len;
	(void)rdma_connection;
	return rdma_no_verbs(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_established(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection)
{
	(void)rdma;
	(void)rdma_connection;
	return rdma_no_verbs(__func__);
}

/* ------------------------------------------------------------------ */
/* Device capabilities                                                */

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (max_recv_queue_size == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*max_recv_queue_size = RDMA_MAX_RECV_QUEUE_SIZE;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_send_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_send_queue_size)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (max_send_queue_size == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*max_send_queue_size = RDMA_MAX_SEND_QUEUE_SIZE;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_send_buf_list_len(const struct doca_devinfo *devinfo,
						     uint32_t *max_send_buf_list_len)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (max_send_buf_list_len == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*max_send_buf_list_len = RDMA_MAX_SEND_BUF_LIST_LEN;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_message_size(const struct doca_devinfo *devinfo, uint32_t *max_message_size)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (max_message_size == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*max_message_size = RDMA_MAX_MESSAGE_SIZE;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_gid_table_size(const struct doca_devinfo *devinfo, uint32_t *gid_table_size)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (gid_table_size == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*gid_table_size = softdoca_devinfo_gid_count(devinfo);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_gid(const struct doca_devinfo *devinfo, uint32_t start_index, uint32_t num_entries,
				   struct doca_rdma_gid *gid_array)
{
	uint32_t count, i;

	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (gid_array == NULL)
		return rdma_null_arg(__func__, "gid_array");
	count = softdoca_devinfo_gid_count(devinfo);
	if (num_entries == 0 || (uint64_t)start_index + num_entries > count) {
		SDK_LOG_ERR("%s: entries [%u, %u + %u) are not inside the GID table of %u entries", __func__,
			    start_index, start_index, num_entries, count);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (i = 0; i < num_entries; i++) {
		doca_error_t status = softdoca_devinfo_gid(devinfo, start_index + i, gid_array[i].raw);

		if (status != DOCA_SUCCESS)
			return status;
	}
	return DOCA_SUCCESS;
}

static bool rdma_transport_known(enum doca_rdma_transport_type transport_type)
{
	return transport_type == DOCA_RDMA_TRANSPORT_TYPE_RC || transport_type == DOCA_RDMA_TRANSPORT_TYPE_DC;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_transport_type_is_supported(const struct doca_devinfo *devinfo,
						       enum doca_rdma_transport_type transport_type)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (!rdma_transport_known(transport_type)) {
		SDK_LOG_ERR("%s: unknown transport type %d", __func__, (int)transport_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS; /* soft devices carry RC and DC alike */
}

/* ------------------------------------------------------------------ */
/* Properties                                                         */

/* The common guard of every setter. */
static doca_error_t rdma_setter_check(struct doca_rdma *rdma, const char *func)
{
	if (rdma == NULL)
		return rdma_null_arg(func, "rdma");
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, func) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	return softdoca_ctx_check_idle(&rdma->ctx, func);
}

/* The common guard of every getter. */
static doca_error_t rdma_getter_check(const struct doca_rdma *rdma, const void *out, const char *func)
{
	if (rdma == NULL)
		return rdma_null_arg(func, "rdma");
	if (out == NULL)
		return rdma_null_arg(func, "output pointer");
	return softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, func);
}

static uint32_t rdma_round_up_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_send_queue_size(struct doca_rdma *rdma, uint32_t send_queue_size)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (send_queue_size == 0) {
		SDK_LOG_ERR("%s: send queue size must be at least 1", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (send_queue_size > RDMA_MAX_SEND_QUEUE_SIZE) {
		SDK_LOG_ERR("%s: send queue size %u exceeds the device limit %u", __func__, send_queue_size,
			    RDMA_MAX_SEND_QUEUE_SIZE);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	rdma->props.send_queue_size = rdma_round_up_pow2(send_queue_size);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_recv_queue_size(struct doca_rdma *rdma, uint32_t recv_queue_size)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	(void)recv_queue_size;
	if (status != DOCA_SUCCESS)
		return status;
	/* DOCA 3.x's doca_rdma.h: the property affects only the GPU and DPA
	 * datapaths and the call answers NOT_SUPPORTED on the CPU datapath
	 * (older 2.x headers accepted it). On the CPU datapath receives are
	 * posted to the context, not to one connection (a receive task has no
	 * connection until one completes it), so their bound is per context:
	 * the receive task pool, whose size doca_rdma_get_recv_queue_size
	 * reports; allocating past it is DOCA_ERROR_NO_MEMORY. */
	/* A WARNING, not an ERROR: DOCA documents this answer, and programs
	 * written for several datapaths call it and go on. */
	SDK_LOG_WARN("%s: the receive queue size applies to GPU/DPA datapaths only; on the CPU datapath "
		     "receives are bounded by doca_rdma_task_receive_set_conf",
		     __func__);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_max_send_buf_list_len(struct doca_rdma *rdma, uint32_t max_send_buf_list_len)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (max_send_buf_list_len == 0 || max_send_buf_list_len > RDMA_MAX_SEND_BUF_LIST_LEN) {
		SDK_LOG_ERR("%s: %u is out of range [1, %u]", __func__, max_send_buf_list_len,
			    RDMA_MAX_SEND_BUF_LIST_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.max_send_buf_list_len = max_send_buf_list_len;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (!rdma_transport_known(transport_type)) {
		SDK_LOG_ERR("%s: unknown transport type %d", __func__, (int)transport_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.transport_type = transport_type;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_mtu(struct doca_rdma *rdma, enum doca_mtu_size mtu)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	switch (mtu) {
	case DOCA_MTU_SIZE_256_BYTES:
	case DOCA_MTU_SIZE_512_BYTES:
	case DOCA_MTU_SIZE_1K_BYTES:
	case DOCA_MTU_SIZE_2K_BYTES:
	case DOCA_MTU_SIZE_4K_BYTES:
		rdma->props.mtu = mtu;
		return DOCA_SUCCESS;
	default:
		break;
	}
	SDK_LOG_ERR("%s: MTU value %d is not an RDMA path MTU (256 bytes .. 4 KiB)", __func__, (int)mtu);
	return DOCA_ERROR_INVALID_VALUE;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (permissions & ~(uint32_t)RDMA_PERMISSION_BITS) {
		SDK_LOG_ERR("%s: 0x%x holds access flags that are not RDMA access flags (allowed: LOCAL_READ_WRITE, "
			    "RDMA_READ, RDMA_WRITE, RDMA_ATOMIC)",
			    __func__, permissions & ~(uint32_t)RDMA_PERMISSION_BITS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.permissions = permissions;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_grh_enabled(struct doca_rdma *rdma, uint8_t grh_enabled)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (grh_enabled > 1) {
		SDK_LOG_ERR("%s: grh_enabled must be 0 or 1, not %u", __func__, grh_enabled);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.grh_enabled = grh_enabled;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index)
{
	const struct doca_devinfo *devinfo;
	uint32_t count;
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	devinfo = doca_dev_as_devinfo(rdma->ctx.dev);
	count = softdoca_devinfo_gid_count(devinfo);
	if (gid_index >= count) {
		SDK_LOG_ERR("%s: GID index %u is out of range: device %s has %u GID(s)", __func__, gid_index,
			    softdoca_devinfo_ibdev(devinfo), count);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.gid_index = gid_index;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_sl(struct doca_rdma *rdma, uint32_t sl)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (sl > RDMA_MAX_SL) {
		SDK_LOG_ERR("%s: service level %u is out of range [0, %u]", __func__, sl, RDMA_MAX_SL);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.sl = sl;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_connection_request_timeout(struct doca_rdma *rdma, uint16_t timeout)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (timeout == 0) {
		SDK_LOG_ERR("%s: a timeout of 0 ms leaves no time to connect", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.request_timeout_ms = timeout;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_max_num_connections(struct doca_rdma *rdma, uint16_t max_num_connections)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	/* DOCA documents NOT_SUPPORTED below the minimum (1). */
	if (max_num_connections == 0) {
		SDK_LOG_ERR("%s: at least 1 connection is needed", __func__);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (max_num_connections > RDMA_MAX_CONNECTIONS) {
		SDK_LOG_ERR("%s: %u connections exceed the limit %u", __func__, max_num_connections,
			    RDMA_MAX_CONNECTIONS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.max_num_connections = max_num_connections;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_rnr_retry_count(struct doca_rdma *rdma, uint8_t rnr_retry_count)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (rnr_retry_count > RDMA_MAX_RNR_RETRY) {
		SDK_LOG_ERR("%s: %u is out of range [0, %u] (7 retries for ever)", __func__, rnr_retry_count,
			    RDMA_MAX_RNR_RETRY);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.rnr_retry_count = rnr_retry_count;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_send_queue_size(const struct doca_rdma *rdma, uint32_t *send_queue_size)
{
	doca_error_t status = rdma_getter_check(rdma, send_queue_size, __func__);

	if (status == DOCA_SUCCESS)
		*send_queue_size = rdma->props.send_queue_size;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_recv_queue_size(const struct doca_rdma *rdma, uint32_t *recv_queue_size)
{
	doca_error_t status = rdma_getter_check(rdma, recv_queue_size, __func__);

	/* On the CPU datapath the receive queue is the receive task pool. */
	if (status == DOCA_SUCCESS)
		*recv_queue_size = rdma->task_types[RDMA_TASK_RECEIVE].num_tasks;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_send_buf_list_len(const struct doca_rdma *rdma, uint32_t *max_send_buf_list_len)
{
	doca_error_t status = rdma_getter_check(rdma, max_send_buf_list_len, __func__);

	if (status == DOCA_SUCCESS)
		*max_send_buf_list_len = rdma->props.max_send_buf_list_len;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_transport_type(const struct doca_rdma *rdma, enum doca_rdma_transport_type *transport_type)
{
	doca_error_t status = rdma_getter_check(rdma, transport_type, __func__);

	if (status == DOCA_SUCCESS)
		*transport_type = rdma->props.transport_type;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_mtu(const struct doca_rdma *rdma, enum doca_mtu_size *mtu)
{
	doca_error_t status = rdma_getter_check(rdma, mtu, __func__);

	if (status == DOCA_SUCCESS)
		*mtu = rdma->props.mtu;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_permissions(struct doca_rdma *rdma, uint32_t *permissions)
{
	doca_error_t status = rdma_getter_check(rdma, permissions, __func__);

	if (status == DOCA_SUCCESS)
		*permissions = rdma->props.permissions;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_grh_enabled(const struct doca_rdma *rdma, uint8_t *grh_enabled)
{
	doca_error_t status = rdma_getter_check(rdma, grh_enabled, __func__);

	if (status == DOCA_SUCCESS)
		*grh_enabled = rdma->props.grh_enabled;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid_index(const struct doca_rdma *rdma, uint32_t *gid_index)
{
	doca_error_t status = rdma_getter_check(rdma, gid_index, __func__);

	if (status == DOCA_SUCCESS)
		*gid_index = rdma->props.gid_index;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_sl(const struct doca_rdma *rdma, uint32_t *sl)
{
	doca_error_t status = rdma_getter_check(rdma, sl, __func__);

	if (status == DOCA_SUCCESS)
		*sl = rdma->props.sl;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_connection_request_timeout(const struct doca_rdma *rdma, uint16_t *timeout)
{
	doca_error_t status = rdma_getter_check(rdma, timeout, __func__);

	if (status == DOCA_SUCCESS)
		*timeout = rdma->props.request_timeout_ms;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_num_connections(struct doca_rdma *rdma, uint16_t *max_num_connections)
{
	doca_error_t status = rdma_getter_check(rdma, max_num_connections, __func__);

	if (status == DOCA_SUCCESS)
		*max_num_connections = rdma->props.max_num_connections;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_rnr_retry_count(const struct doca_rdma *rdma, uint8_t *rnr_retry_count)
{
	doca_error_t status = rdma_getter_check(rdma, rnr_retry_count, __func__);

	if (status == DOCA_SUCCESS)
		*rnr_retry_count = rdma->props.rnr_retry_count;
	return status;
}

/* ------------------------------------------------------------------ */
/* GPU / DPA datapaths and the verbs bridge: not on soft devices      */

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_dpa_handle(struct doca_rdma *rdma, doca_dpa_dev_rdma_t *dpa_rdma)
{
	(void)rdma;
	(void)dpa_rdma;
	return rdma_no_accelerator(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gpu_handle(struct doca_rdma *rdma, struct doca_gpu_dev_rdma **gpu_rdma)
{
	(void)rdma;
	(void)gpu_rdma;
	return rdma_no_accelerator(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_dpa_completion_attach(struct doca_rdma *rdma, struct doca_dpa_completion *dpa_comp)
{
	(void)rdma;
	(void)dpa_comp;
	return rdma_no_accelerator(__func__);
}

DOCA_STABLE
doca_error_t doca_rdma_bridge_get_dev_pd(const struct doca_dev *dev, struct ibv_pd **pd)
{
	(void)dev;
	(void)pd;
	return rdma_no_verbs(__func__);
}

DOCA_STABLE
doca_error_t doca_rdma_bridge_open_dev_from_pd(struct ibv_pd *pd, struct doca_dev **dev)
{
	(void)pd;
	(void)dev;
	return rdma_no_verbs(__func__);
}

DOCA_STABLE
doca_error_t doca_rdma_bridge_get_buf_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey)
{
	(void)buf;
	(void)dev;
	(void)mkey;
	return rdma_no_verbs(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_get_mmap_mkey_from_pd(const struct doca_mmap *mmap, struct ibv_pd *pd, uint32_t *mkey)
{
	(void)mmap;
	(void)pd;
	(void)mkey;
	return rdma_no_verbs(__func__);
}
