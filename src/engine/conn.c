/*
 * softdoca — connections: export, connect, the HELLO/BYE handshake,
 * failure, and which link a connection uses.
 *
 * Each side exports (a connection id and a random secret, plus the
 * addresses of its links: its UCX worker address, its TCP link address)
 * and connects to the other's descriptor. Connecting picks the link
 * (conn_link_choose: UCX for a peer on this host when both sides allow
 * shared memory, else the TCP link), makes our endpoint on it and sends
 * HELLO, which tells the peer our id and secret; a connection is
 * established once we have connected and the peer's HELLO has arrived.
 * Every later message names the receiver's connection id and secret, and
 * is dropped if they do not match. Answers travel on our own endpoint;
 * a DC passive side, which never connects, makes one from the address
 * the peer's HELLO carries, on the link it came on.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core_engine.h"
#include "engine_internal.h"
#include "link_tcp.h"
#include "link_ucx.h"

SDK_LOG_REGISTER(ENGINE::CONN)

struct engine_conn *engine_conn_lookup(struct engine_worker *w, const struct link_msg *m, uint32_t id,
				       const uint8_t secret[ENGINE_SECRET_LEN])
{
	struct engine_conn *c;

	if (id == 0 || id > w->num_conns) {
		SDK_LOG_ERR_RL("message for unknown connection id %u: dropped", id);
		return NULL;
	}
	c = &w->conns[id - 1];
	if (c->state == CONN_FREE || c->state == CONN_CM_REQUESTED) {
		/* Late traffic for a connection that is over (a BYE crossing
		 * ours, say): nothing to worry anyone about. */
		SDK_LOG_DBG("message for closed connection %u: dropped", id);
		return NULL;
	}
	if (!softdoca_secret_equal(c->secret, secret, ENGINE_SECRET_LEN)) {
		SDK_LOG_ERR_RL("message for connection %u with a wrong connection secret: dropped", id);
		return NULL;
	}
	/* A link that proved whose its carrier is carries that connection's
	 * messages only; a connection's messages come on its own link. */
	if ((m->bound != NULL && m->bound != c) || (c->link != NULL && c->link != m->link)) {
		SDK_LOG_ERR_RL("message for connection %u on a %s link that carries another connection: dropped", id,
			       m->link->name);
		return NULL;
	}
	c->heard = true; /* a sign of life (keepalive.c) */
	return c;
}

static void conn_event(struct engine_conn *c, enum engine_conn_event ev)
{
	if (c->worker->conf.conn_event != NULL)
		c->worker->conf.conn_event(c->worker->conf.arg, c, ev);
}

/* Established once both sides are in: we connected (or are the DC
 * passive side, which never does) and the peer's HELLO arrived. */
static void conn_check_established(struct engine_conn *c)
{
	bool ours = c->state == CONN_CONNECTED || (c->worker->conf.dc && c->state == CONN_EXPORTED);

	if (c->established_reported || !c->peer_hello || !ours)
		return;
	c->established_reported = true;
	engine_cm_established(c);
	SDK_LOG_TRC("connection %u established (peer connection %u)", c->id, c->peer_id);
	conn_event(c, ENGINE_CONN_ESTABLISHED);
}

/* The connection's send queue: made on first use of its index, kept
 * (sequence numbers included) when the index serves a new connection. */
static doca_error_t conn_sq_get(struct engine_worker *w, struct engine_conn *c)
{
	uint32_t n = w->conf.send_queue_size;

	if (c->sq.slots != NULL)
		return DOCA_SUCCESS;
	c->sq.slots = calloc(n, sizeof(*c->sq.slots));
	if (c->sq.slots == NULL) {
		SDK_LOG_ERR("no memory for a send queue of %u entries", n);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (uint32_t i = 0; i < n; i++)
		c->sq.slots[i].worker = w;
	return DOCA_SUCCESS;
}

/* A free connection slot with a fresh secret and its descriptor. Slots
 * are reused after engine_conn_release; a new secret makes stale messages
 * for the old connection fail their check. Lock held. */
doca_error_t engine_conn_alloc(struct engine_worker *w, struct engine_conn **conn_out)
{
	struct wire_desc d = {0};
	struct engine_conn *c = NULL;
	doca_error_t status;

	/* No connection about to be reset may wait on the ack list. */
	if (w->ack_list != NULL)
		engine_acks_flush(w);
	for (uint32_t i = 0; i < w->conf.max_connections; i++) {
		/* A slot whose send queue still holds work is not reused
		 * (cannot happen: a closed connection's operations are failed). */
		if (w->conns[i].state == CONN_FREE && engine_sq_busy(&w->conns[i].sq) == 0) {
			c = &w->conns[i];
			break;
		}
	}
	if (c == NULL) {
		SDK_LOG_ERR_RL("all %u connections of this context are in use (doca_rdma_set_max_num_connections)",
			    w->conf.max_connections);
		return DOCA_ERROR_FULL;
	}
	status = conn_sq_get(w, c);
	if (status != DOCA_SUCCESS)
		return status;
	memset(c, 0, ENGINE_CONN_RESET_SIZE);
	c->peer_watch.fd = -1;
	c->cm_src.fd = -1;
	status = softdoca_secret_generate(c->secret, sizeof(c->secret));
	if (status != DOCA_SUCCESS)
		return status;
	d.flags = w->conf.dc ? WIRE_DESC_FLAG_DC : 0;
	d.conn_id = (uint32_t)(c - w->conns) + 1;
	memcpy(d.secret, c->secret, sizeof(d.secret));
	d.pid = (uint32_t)getpid();
	engine_host_identity(d.host_id, &d.pid_ns);
	d.proc_start = engine_self_start_time();
	d.run = w->run;
	/* A soft device has far fewer GIDs than 65535. */
	d.gid_index = (uint16_t)(w->conf.gid_index > UINT16_MAX ? UINT16_MAX : w->conf.gid_index);
	d.gid_type = w->conf.gid_type;
	if (w->ucp != NULL) {
		d.flags |= WIRE_DESC_FLAG_SHM;
		d.ucx_settings = link_ucx_settings();
		d.worker_addr = (const uint8_t *)w->own_addr; /* taken once, at worker creation */
		d.worker_addr_len = (uint32_t)w->own_addr_len;
	}
	if (w->tcp != NULL) {
		struct lt_addr a;

		link_tcp_self(w->tcp, &a);
		lt_addr_build(d.tcp_addr, &a);
		d.has_tcp = true;
	}
	status = wire_desc_build(&d, &c->desc, &c->desc_len);
	if (status != DOCA_SUCCESS)
		return status;
	c->worker = w;
	c->id = d.conn_id;
	c->state = CONN_EXPORTED;
	if (w->tcp != NULL)
		link_tcp_conn_expect(w->tcp, c);
	if (c->id > w->num_conns)
		w->num_conns = c->id;
	*conn_out = c;
	return DOCA_SUCCESS;
}

doca_error_t engine_conn_export(struct engine_worker *w, struct engine_conn **conn_out, const void **desc,
				size_t *desc_len)
{
	struct engine_conn *c;
	doca_error_t status;

	pthread_mutex_lock(&w->lock);
	status = engine_conn_alloc(w, &c);
	if (status == DOCA_SUCCESS) {
		*conn_out = c;
		*desc = c->desc;
		*desc_len = c->desc_len;
		SDK_LOG_TRC("connection %u exported", c->id);
	}
	engine_worker_unlock(w);
	return status;
}

void engine_link_failed(struct engine_conn *c, doca_error_t status, const char *why)
{
	(void)status;
	if (c->state == CONN_CLOSED || c->state == CONN_FREE)
		return;
	if (c->peer_claims_exited && !c->peer_hello)
		engine_explain_peer_exited(c->id, c->peer_pid, "its address does not answer (the peer is unreachable)");
	else if (engine_conn_loss_is_error(c))
		SDK_LOG_ERR("connection %u: peer unreachable (%s link: %s); failing its %u operations in flight", c->id,
			    c->link != NULL ? c->link->name : "no", why, engine_sq_busy(&c->sq) + c->tq_len);
	else
		SDK_LOG_DBG("connection %u: peer unreachable (%s) with nothing in flight, or while stopping", c->id,
			    why);
	engine_conn_fail(c, ENGINE_CONN_FAILED);
}

bool engine_conn_loss_is_error(const struct engine_conn *c)
{
	if (c->worker->stopping)
		return false;
	return engine_sq_busy(&c->sq) > 0 || c->tq_len > 0;
}

static void send_done_free(void *req, doca_error_t status, void *user)
{
	(void)req;
	(void)status;
	free(user);
}

/* Header and payload are copied into one heap block that lives until
 * the send is over (UCX reads both until then). */
doca_error_t engine_send_ctl(struct engine_conn *c, unsigned int am_id, const void *hdr, size_t len,
			     const void *payload, size_t payload_len)
{
	uint8_t *copy = malloc(len + payload_len);
	struct engine_sge sge = {.len = payload_len};
	struct link_send s = {.id = (uint16_t)am_id, .header_len = len, .eager = true, .cb = send_done_free};
	doca_error_t status;
	void *req;

	if (copy == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (c->ep == NULL || c->link == NULL) {
		free(copy);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	memcpy(copy, hdr, len);
	if (payload_len > 0)
		memcpy(copy + len, payload, payload_len);
	sge.addr = copy + len;
	s.header = copy;
	s.iov = &sge;
	s.iov_count = payload_len > 0 ? 1 : 0;
	s.len = payload_len;
	s.user = copy;
	status = c->link->send(c, &s, &req);
	if (status != DOCA_SUCCESS)
		SDK_LOG_DBG("connection %u: control message %#x not sent: %s", c->id, am_id, doca_error_get_name(status));
	if (status != DOCA_SUCCESS || req == NULL)
		free(copy);
	return status;
}

static bool peer_on_this_host(const struct wire_desc *d)
{
	uint8_t id[WIRE_HOST_ID_LEN];
	uint64_t ns;

	engine_host_identity(id, &ns);
	return ns != 0 && ns == d->pid_ns && memcmp(id, d->host_id, WIRE_HOST_ID_LEN) == 0;
}

/* A peer on this host: watch its process (a pidfd in the service
 * thread's epoll), so that its death is noticed at once rather than by
 * the keepalive timeout. The pid is the peer's claim: its exit only makes
 * us ask the peer (engine_keepalive_suspect). */
static void conn_watch_peer(struct engine_conn *c, uint32_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);

	if (fd < 0) {
		SDK_LOG_DBG("connection %u: cannot watch peer process %u: %s", c->id, pid, strerror(errno));
		return;
	}
	c->peer_watch.fd = fd;
	engine_svc_watch(&c->peer_watch);
#else
	(void)c;
	(void)pid;
#endif
}

/* Our endpoint to the peer on link, at addr (the peer's address on that
 * link: untrusted bytes, which the link checks before use). c->peer_id
 * and c->peer_secret name the peer's connection. Lock held. */
static doca_error_t conn_ep_create(struct engine_conn *c, const struct link_ops *link, const uint8_t *addr,
				   size_t addr_len)
{
	doca_error_t status = link->ep_open(c, addr, addr_len);

	if (status == DOCA_ERROR_CONNECTION_ABORTED && c->peer_claims_exited) {
		engine_explain_peer_exited(c->id, c->peer_pid, "its address cannot be reached");
		return status;
	}
	if (status != DOCA_SUCCESS) {
		SDK_LOG_ERR_RL("connection %u: cannot reach the peer's %s link: %s", c->id, link->name,
			       doca_error_get_name(status));
		return status;
	}
	c->link = link;
	SDK_LOG_DBG("connection %u: over the %s link", c->id, link->name);
	engine_keepalive_start(c);
	return DOCA_SUCCESS;
}

/* This side's address on link, as the DC passive side needs it. */
static size_t conn_own_addr(const struct engine_conn *c, uint8_t *tcp, const void **addr)
{
	struct lt_addr a;

	if (c->link == &link_ucx_ops) {
		*addr = c->worker->own_addr;
		return c->worker->own_addr_len;
	}
	link_tcp_self(c->worker->tcp, &a);
	lt_addr_build(tcp, &a);
	*addr = tcp;
	return LT_ADDR_LEN;
}

/* HELLO tells the peer our connection id and secret. On DC it also
 * carries our address on the link it travels: the passive side never
 * gets a descriptor of ours, and makes its endpoint from it. */
static doca_error_t conn_say_hello(struct engine_conn *c)
{
	struct wire_hello hello = {0};
	uint8_t tcp[LT_ADDR_LEN];
	const void *addr = NULL;
	size_t addr_len = 0;

	hello.version = WIRE_VERSION;
	hello.dst_conn_id = c->peer_id;
	memcpy(hello.dst_secret, c->peer_secret, ENGINE_SECRET_LEN);
	hello.src_conn_id = c->id;
	memcpy(hello.src_secret, c->secret, ENGINE_SECRET_LEN);
	if (c->worker->conf.dc)
		addr_len = conn_own_addr(c, tcp, &addr);
	return engine_send_ctl(c, WIRE_AM_HELLO, &hello, sizeof(hello), addr, addr_len);
}

/* Names of the WIRE_UCX_* settings that differ between a and b. */
static const char *ucx_settings_diff(uint32_t a, uint32_t b, char *buf, size_t size)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{WIRE_UCX_MM_ERROR_HANDLING, "UCX_MM_ERROR_HANDLING"},
		{WIRE_UCX_CMA_MEMORY_INVALIDATE, "UCX_CMA_MEMORY_INVALIDATE"},
		{WIRE_UCX_PROTO_V1, "UCX_PROTO_ENABLE"},
		{WIRE_UCX_RNDV_PUT, "UCX_RNDV_SCHEME"},
	};
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((a ^ b) & names[i].bit)
			at += (size_t)snprintf(buf + at, size - at, "%s%s", at > 0 ? ", " : "", names[i].name);
	return buf;
}

/* Which link reaches the peer of descriptor d: UCX for a peer on this
 * host when both sides let UCX use shared memory (and agree on the UCX
 * settings that must match), else the TCP link when both have one. */
static doca_error_t conn_link_choose(struct engine_conn *c, const struct wire_desc *d, bool same_host,
				     const struct link_ops **link, const uint8_t **addr, size_t *addr_len)
{
	struct engine_worker *w = c->worker;
	char diff[160];

	if (w->ucp != NULL && same_host && (d->flags & WIRE_DESC_FLAG_SHM) && d->worker_addr_len > 0) {
		uint32_t ours = link_ucx_settings();

		if (d->ucx_settings != ours) {
			SDK_LOG_ERR("rdma connection %u: DOCA_ERROR_INVALID_VALUE: the two sides run UCX with different "
				    "settings (%s): UCX cannot connect them. Set the same values on both sides, or "
				    "leave them unset (softdoca's defaults)",
				    c->id, ucx_settings_diff(ours, d->ucx_settings, diff, sizeof(diff)));
			return DOCA_ERROR_INVALID_VALUE;
		}

		/* UCX opens the files of the process the address names
		 * (/proc/<pid>/fd/...): when the descriptor's process is gone
		 * or is another one now (its pid reused, by a process of ours
		 * or not), that would be a stranger's file. */
		if (c->peer_claims_exited) {
			engine_explain_peer_exited(c->id, c->peer_pid,
						   "its shared memory is not used (its pid may be another process's now)");
			return DOCA_ERROR_CONNECTION_ABORTED;
		}
		*link = &link_ucx_ops;
		*addr = d->worker_addr;
		*addr_len = d->worker_addr_len;
		return DOCA_SUCCESS;
	}
	if (w->tcp != NULL && d->has_tcp) {
		*link = &link_tcp_ops;
		*addr = d->tcp_addr;
		*addr_len = sizeof(d->tcp_addr);
		return DOCA_SUCCESS;
	}
	SDK_LOG_ERR("rdma connection %u: DOCA_ERROR_INVALID_VALUE: no transport reaches the peer: this side offers "
		    "%s%s, the peer %s%s (a peer %s). UCX_TLS must let both sides use the same one: shared memory "
		    "(sm) on one host, tcp between hosts",
		    c->id, w->ucp != NULL ? "shared memory" : "", w->tcp != NULL ? (w->ucp != NULL ? " and tcp" : "tcp") : "",
		    (d->flags & WIRE_DESC_FLAG_SHM) ? "shared memory" : "", d->has_tcp ? ((d->flags & WIRE_DESC_FLAG_SHM) ? " and tcp" : "tcp") : "",
		    same_host ? "on this host" : "on another host");
	return DOCA_ERROR_INVALID_VALUE;
}

/* The two sides must agree (transport, GID type), and the descriptor
 * must be of a context that still runs, as far as this host can tell: a
 * mismatch fails the connect now rather than leaving it to hang. */
static doca_error_t conn_sides_agree(struct engine_conn *c, const struct wire_desc *d)
{
	struct engine_peer_side peer = {
		.dc = (d->flags & WIRE_DESC_FLAG_DC) != 0,
		/* Over RDMA CM the address connected to picks the GID, not
		 * doca_rdma_set_gid_index: nothing to compare. */
		.gid_type = c->cm_src.fd >= 0 ? (uint8_t)ENGINE_GID_UNKNOWN : d->gid_type,
		.gid_index = d->gid_index,
	};
	doca_error_t status = engine_sides_agree(c->id, &c->worker->conf, &peer);

	if (status != DOCA_SUCCESS || !peer_on_this_host(d))
		return status;
	c->peer_pid = d->pid;
	return engine_peer_is_current(c->id, d->pid, d->proc_start, d->run, &c->peer_claims_exited);
}

/* Bind c to the peer's descriptor: our endpoint, then HELLO. Lock held. */
doca_error_t engine_conn_connect_locked(struct engine_conn *c, const void *desc, size_t desc_len)
{
	struct wire_desc d;
	bool same_host, dc_attached;
	doca_error_t status;

	status = wire_desc_parse(desc, desc_len, &d);
	if (status != DOCA_SUCCESS)
		return status;
	/* In DC the peer that connects first gives this side its endpoint
	 * (its HELLO carries its address); this side may still connect with
	 * that peer's descriptor, as both sides of a DC program often do. */
	dc_attached = c->worker->conf.dc && c->state == CONN_EXPORTED && c->ep != NULL && c->peer_hello;
	if (c->state != CONN_EXPORTED || (c->ep != NULL && !dc_attached)) {
		SDK_LOG_ERR("connection %u is %s: connect works once, on an exported connection", c->id,
			    c->state == CONN_CONNECTED ? "already connected" :
			    c->state == CONN_EXPORTED  ? "exported but already bound to a peer" :
			    c->state == CONN_CLOSED    ? "closed" :
							 "not exported");
		return DOCA_ERROR_BAD_STATE;
	}
	status = conn_sides_agree(c, &d);
	if (status != DOCA_SUCCESS)
		return status;
	if (c->peer_hello && (c->peer_id != d.conn_id || memcmp(c->peer_secret, d.secret, ENGINE_SECRET_LEN) != 0)) {
		SDK_LOG_ERR_RL("connection %u: this descriptor is not from the peer that already connected to it", c->id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	same_host = peer_on_this_host(&d);
	if (!dc_attached) {
		const struct link_ops *link;
		const uint8_t *addr;
		size_t addr_len;

		status = conn_link_choose(c, &d, same_host, &link, &addr, &addr_len);
		if (status != DOCA_SUCCESS)
			return status;
		c->peer_id = d.conn_id;
		memcpy(c->peer_secret, d.secret, ENGINE_SECRET_LEN);
		status = conn_ep_create(c, link, addr, addr_len);
		if (status != DOCA_SUCCESS)
			return status;
	}
	c->peer_id = d.conn_id;
	memcpy(c->peer_secret, d.secret, ENGINE_SECRET_LEN);
	c->state = CONN_CONNECTED;
	if (same_host && d.pid != (uint32_t)getpid())
		conn_watch_peer(c, d.pid);

	status = conn_say_hello(c);
	if (status != DOCA_SUCCESS)
		return status;
	SDK_LOG_TRC("connection %u connected to peer connection %u", c->id, c->peer_id);
	conn_check_established(c);
	/* Operations that arrived before we connected may run now. */
	engine_target_kick(c);
	return DOCA_SUCCESS;
}

doca_error_t engine_conn_connect(struct engine_conn *c, const void *desc, size_t desc_len)
{
	struct engine_worker *w = c->worker;
	doca_error_t status;

	pthread_mutex_lock(&w->lock);
	status = engine_conn_connect_locked(c, desc, desc_len);
	engine_worker_unlock(w);
	engine_svc_kick();
	return status;
}

enum link_rx engine_am_hello(struct engine_worker *w, const struct link_msg *m)
{
	struct wire_hello hello;
	const struct wire_hello *h = &hello;
	struct engine_conn *c;

	if (wire_check(WIRE_AM_HELLO, m->header, m->header_len) != DOCA_SUCCESS)
		return LINK_RX_DONE;
	if (m->length > WIRE_DESC_MAX_ADDR_LEN || (m->length > 0 && m->rndv)) {
		SDK_LOG_ERR_RL("HELLO with a %zu-byte payload: dropped", m->length);
		return LINK_RX_DONE;
	}
	memcpy(&hello, m->header, sizeof(hello)); /* any alignment */
	c = engine_conn_lookup(w, m, h->dst_conn_id, h->dst_secret);
	if (c == NULL || c->state == CONN_CLOSED)
		return LINK_RX_DONE;
	if (c->peer_hello || (c->state == CONN_CONNECTED && (c->peer_id != h->src_conn_id ||
							      memcmp(c->peer_secret, h->src_secret, ENGINE_SECRET_LEN) != 0))) {
		SDK_LOG_ERR_RL("connection %u: HELLO from a second peer or with different credentials: dropped", c->id);
		return LINK_RX_DONE;
	}
	c->peer_id = h->src_conn_id;
	memcpy(c->peer_secret, h->src_secret, ENGINE_SECRET_LEN);
	if (c->worker->conf.dc && c->state == CONN_EXPORTED && c->ep == NULL &&
	    conn_ep_create(c, m->link, m->data, m->length) != DOCA_SUCCESS) {
		SDK_LOG_ERR_RL("connection %u: DC peer's HELLO carries no usable address: dropped", c->id);
		return LINK_RX_DONE;
	}
	c->peer_hello = true;
	conn_check_established(c);
	engine_target_kick(c);
	return LINK_RX_DONE;
}

enum link_rx engine_am_bye(struct engine_worker *w, const struct link_msg *m)
{
	struct wire_bye bye;
	const struct wire_bye *b = &bye;
	struct engine_conn *c;

	if (wire_check(WIRE_AM_BYE, m->header, m->header_len) != DOCA_SUCCESS || m->length != 0)
		return LINK_RX_DONE;
	memcpy(&bye, m->header, sizeof(bye)); /* any alignment */
	c = engine_conn_lookup(w, m, b->dst_conn_id, b->dst_secret);
	if (c == NULL || c->state == CONN_CLOSED)
		return LINK_RX_DONE;
	SDK_LOG_DBG("connection %u: peer disconnected", c->id);
	engine_conn_fail(c, ENGINE_CONN_DISCONNECTED);
	return LINK_RX_DONE;
}

static void conn_close_ep(struct engine_conn *c)
{
	engine_keepalive_stop(c);
	if (c->ep != NULL)
		c->link->ep_close(c);
	/* The TCP link's slot also holds the peer's side (its socket to us). */
	if (c->worker->tcp != NULL)
		link_tcp_conn_reset(c->worker->tcp, c);
	engine_cm_close(c);
	engine_cm_established(c); /* no deadline for a closed connection */
}

/* Whether a send could still reach the worker's posted receives: a
 * connection not closed yet, or an RDMA CM port new clients come in on. */
static bool worker_may_receive(const struct engine_worker *w)
{
	for (uint32_t i = 0; i < ENGINE_MAX_LISTENERS; i++)
		if (w->listeners[i].active)
			return true;
	for (uint32_t i = 0; i < w->num_conns; i++)
		if (w->conns[i].state != CONN_FREE && w->conns[i].state != CONN_CLOSED)
			return true;
	return false;
}

/* The connection is over (peer gone, peer said BYE, or local stop):
 * nothing more moves on it and what is in flight on it fails. Lock held. */
static void conn_close(struct engine_conn *c, doca_error_t ops_status)
{
	c->state = CONN_CLOSED;
	engine_svc_unwatch(&c->peer_watch);
	engine_fail_conn_ops(c, ops_status);
	engine_target_drop(c);
	conn_close_ep(c);
}

void engine_conn_fail(struct engine_conn *c, enum engine_conn_event event)
{
	if (c->state == CONN_CLOSED)
		return;
	conn_close(c, event == ENGINE_CONN_DISCONNECTED ? DOCA_ERROR_CONNECTION_RESET : DOCA_ERROR_CONNECTION_ABORTED);
	conn_event(c, event);
}

/* BYE goes on our own endpoint. */
static void conn_say_bye(struct engine_conn *c)
{
	struct wire_bye bye = {0};

	if (c->ep == NULL || !c->peer_hello)
		return;
	bye.version = WIRE_VERSION;
	bye.dst_conn_id = c->peer_id;
	memcpy(bye.dst_secret, c->peer_secret, ENGINE_SECRET_LEN);
	(void)engine_send_ctl(c, WIRE_AM_BYE, &bye, sizeof(bye), NULL, 0);
}

/* Let what we sent (answers, BYE) leave before the endpoint closes: the
 * peer must see a completed operation's answer before our BYE, even if
 * this process exits right after. Bounded: a dead peer does not hold us. */
static void conn_flush_ep(struct engine_conn *c)
{
	if (c->ep != NULL)
		c->link->ep_flush(c, engine_now_ns() + 1000000000ULL);
}

static void conn_disconnect_locked(struct engine_conn *c)
{
	if (c->state == CONN_CLOSED || c->state == CONN_FREE)
		return;
	conn_say_bye(c);
	conn_flush_ep(c);
	conn_close(c, DOCA_ERROR_CONNECTION_RESET);
}

doca_error_t engine_conn_disconnect(struct engine_conn *c)
{
	struct engine_worker *w = c->worker;

	pthread_mutex_lock(&w->lock);
	conn_disconnect_locked(c);
	/* This side closed its last way in, a connection that was up: its
	 * posted receives are flushed as a QP's receive queue is when the
	 * application moves the QP to error, so a program that disconnects
	 * its only connection stops at once. A peer's going away flushes
	 * nothing (a QP whose peer vanished still waits in RTS; this also
	 * runs when the peer closed first), nor does closing a connection
	 * that never came up (rejected, timed out): the program connects
	 * again with the receives it posted. */
	if (c->established_reported && !worker_may_receive(w))
		engine_recv_fail_all(w, DOCA_ERROR_IO_FAILED);
	engine_worker_unlock(w);
	return DOCA_SUCCESS;
}

void engine_conn_close_all(struct engine_worker *w)
{
	for (uint32_t i = 0; i < w->num_conns; i++)
		conn_disconnect_locked(&w->conns[i]);
}

void engine_conn_release(struct engine_conn *c)
{
	struct engine_worker *w = c->worker;

	pthread_mutex_lock(&w->lock);
	if (c->state == CONN_CLOSED) {
		free(c->desc);
		c->desc = NULL;
		c->state = CONN_FREE;
	}
	engine_worker_unlock(w);
}

uint32_t engine_conn_id(const struct engine_conn *c)
{
	return c->id;
}

void engine_conn_set_user(struct engine_conn *c, void *user)
{
	c->user = user;
}

void *engine_conn_get_user(const struct engine_conn *c)
{
	return c->user;
}

bool engine_conn_is_usable(const struct engine_conn *c)
{
	return c->state == CONN_CONNECTED;
}
