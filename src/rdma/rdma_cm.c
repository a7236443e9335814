/*
 * softdoca — DOCA RDMA CM: addresses (doca_rdma_addr), listening on a
 * port, connecting to an address, accepting and rejecting requests. The
 * engine (src/engine/cm.c) carries the exchange; this file checks the
 * application's calls and binds the connections it makes.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include <doca_rdma.h>

#include "live.h"
#include "log_internal.h"
#include "rdma.h"

SDK_LOG_REGISTER(RDMA)

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
	return rdma->engine_ops->listen(rdma->worker, port);
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
	return rdma->engine_ops->listen_stop(rdma->worker, port);
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
		SDK_LOG_ERR("%s: DOCA_ERROR_BAD_STATE: connection %u is %s; this call needs a connection request "
			    "waiting for an answer (from the request callback)",
			    func, conn->id, rdma_conn_state_name(conn->state));
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
	status = rdma_connection->rdma->engine_ops->conn_accept(rdma_connection->engine, private_data, private_data_len);
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
	status = rdma_connection->rdma->engine_ops->conn_reject(rdma_connection->engine);
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
	conn->by_cm = true;
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
	status = rdma->engine_ops->conn_connect_addr(rdma->worker, (const struct sockaddr *)&addr->sa, addr->sa_len,
						     rdma_conn_bind_pending, &pending, &engine);
	if (status != DOCA_SUCCESS)
		return status;
	conn = rdma->engine_ops->conn_get_user(engine);
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
	if (conn->rdma->engine_ops->conn_peer_addr(conn->engine, &a->sa, &a->sa_len) != DOCA_SUCCESS) {
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
