/*
 * softdoca — RDMA CM: listen, connect to an address, accept, reject.
 *
 * The connection manager carries only what the export/connect method
 * leaves to the application: the exchange of connection descriptors. A
 * server listens on a TCP port at each address of its device (its GIDs,
 * IPv4 and IPv6, as RDMA CM binds the device's addresses: the port is not
 * reachable through another interface); a client connects and sends its
 * descriptor (REQ); the server, once the application accepts, connects to
 * it and answers with its own descriptor and the private data (REP) — or
 * says no (REJ). The client connects back, and from there it is an
 * ordinary connection (HELLO, then established on both sides). The TCP
 * socket stays open while the connection lives: its end tells a side that
 * the other went away. The service thread does the socket I/O; a deadline
 * (the connection request timeout) bounds how long a connection may take
 * to come up.
 *
 * A socket that connected but has not sent a whole, well-formed REQ yet
 * holds no connection slot: it waits in a small table of its port's
 * (ENGINE_CM_MAX_PRE; when it is full, what every socket in it sent is
 * read, and only then is the oldest dropped for a newcomer) for at most
 * CM_PRE_TIMEOUT_MS. Only a complete request takes a slot and reaches the
 * application's request callback, so sockets that never speak cannot lock
 * real clients out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doca_dev.h>

#include "core_engine.h"
#include "engine_internal.h"

SDK_LOG_REGISTER(ENGINE::CM)

/* How long a new socket may take to deliver its request (a client sends it
 * as soon as it connects), at most the connection request timeout. */
#define CM_PRE_TIMEOUT_MS 2000u

static const char *sa_text(const struct sockaddr_storage *sa, char *buf, size_t size)
{
	const void *addr;
	uint16_t port;
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->ss_family == AF_INET) {
		addr = &((const struct sockaddr_in *)sa)->sin_addr;
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	} else {
		addr = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	}
	inet_ntop(sa->ss_family, addr, host, sizeof(host));
	snprintf(buf, size, sa->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
	return buf;
}

/* ---- deadlines -------------------------------------------------------- */

static void cm_set_deadline(struct engine_conn *c)
{
	struct engine_worker *w = c->worker;
	uint32_t ms = w->conf.request_timeout_ms != 0 ? w->conf.request_timeout_ms : 5000;

	if (c->cm_deadline_ns == 0)
		w->cm_pending++;
	c->cm_deadline_ns = engine_now_ns() + (uint64_t)ms * 1000000ULL;
	engine_svc_kick();
}

void engine_cm_established(struct engine_conn *c)
{
	if (c->cm_deadline_ns != 0) {
		c->cm_deadline_ns = 0;
		c->worker->cm_pending--;
	}
}

/* Close the socket and drop what was being read or written. */
void engine_cm_close(struct engine_conn *c)
{
	engine_svc_unwatch(&c->cm_src);
	free(c->cm_rx);
	free(c->cm_tx);
	c->cm_rx = c->cm_tx = NULL;
	c->cm_rx_len = c->cm_tx_len = c->cm_tx_off = 0;
}

/* A request nobody will answer any more: its slot goes back. */
static void cm_drop_request(struct engine_conn *c)
{
	engine_cm_established(c);
	engine_cm_close(c);
	free(c->desc);
	c->desc = NULL;
	c->state = CONN_FREE;
}

/* The connection cannot come up (or the peer left): fail it. */
static void cm_fail(struct engine_conn *c, const char *why)
{
	if (c->state == CONN_CM_REQUESTED) {
		SDK_LOG_DBG("connection request %u dropped: %s", c->id, why);
		cm_drop_request(c);
		return;
	}
	if (c->state == CONN_CLOSED || c->state == CONN_FREE)
		return;
	if (c->established_reported)
		SDK_LOG_ERR_RL("connection %u: %s", c->id, why);
	else
		SDK_LOG_ERR_RL("connection %u could not be established: %s", c->id, why);
	engine_conn_fail(c, ENGINE_CONN_FAILED);
}

static void cm_pre_expire(struct engine_worker *w, uint64_t now);

void engine_cm_expire(struct engine_worker *w, uint64_t now)
{
	cm_pre_expire(w, now);
	for (uint32_t i = 0; i < w->num_conns && w->cm_pending > 0; i++) {
		struct engine_conn *c = &w->conns[i];

		if (c->cm_deadline_ns != 0 && c->cm_deadline_ns <= now)
			cm_fail(c, "not established within the connection request timeout");
	}
}

/* ---- frames ------------------------------------------------------------ */

/* Queue one frame and write what the socket takes now; the rest goes
 * when it turns writable. */
static doca_error_t cm_send(struct engine_conn *c, uint8_t type, const uint8_t *desc, uint32_t desc_len,
			    const uint8_t *priv, uint8_t priv_len)
{
	struct wire_cm cm = {.type = type, .priv_len = priv_len, .desc_len = desc_len};
	size_t len = WIRE_CM_HDR_LEN + (size_t)desc_len + priv_len;
	uint8_t *frame;

	if (c->cm_tx != NULL) {
		SDK_LOG_ERR("connection %u: RDMA CM frame while another is being sent", c->id);
		return DOCA_ERROR_BAD_STATE;
	}
	frame = malloc(len);
	if (frame == NULL)
		return DOCA_ERROR_NO_MEMORY;
	wire_cm_build(frame, &cm);
	if (desc_len > 0)
		memcpy(frame + WIRE_CM_HDR_LEN, desc, desc_len);
	if (priv_len > 0)
		memcpy(frame + WIRE_CM_HDR_LEN + desc_len, priv, priv_len);
	c->cm_tx = frame;
	c->cm_tx_len = len;
	c->cm_tx_off = 0;
	engine_svc_watch_events(&c->cm_src, EPOLLIN | EPOLLOUT, true);
	return DOCA_SUCCESS;
}

/* Write queued bytes; false if the socket failed. */
static bool cm_flush(struct engine_conn *c)
{
	while (c->cm_tx != NULL && c->cm_tx_off < c->cm_tx_len) {
		ssize_t n = send(c->cm_src.fd, c->cm_tx + c->cm_tx_off, c->cm_tx_len - c->cm_tx_off, MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		c->cm_tx_off += (size_t)n;
	}
	if (c->cm_tx != NULL) {
		free(c->cm_tx);
		c->cm_tx = NULL;
		engine_svc_watch_events(&c->cm_src, EPOLLIN, true);
	}
	return true;
}

/* The server got the client's descriptor: connect to it, answer. */
static void cm_server_got_req(struct engine_conn *c, const uint8_t *frame, const struct wire_cm *cm)
{
	if (!c->cm_server || c->state != CONN_EXPORTED || !c->cm_accepted) {
		cm_fail(c, "unexpected RDMA CM request");
		return;
	}
	if (engine_conn_connect_locked(c, frame + WIRE_CM_HDR_LEN, cm->desc_len) != DOCA_SUCCESS ||
	    cm_send(c, WIRE_CM_REP, c->desc, (uint32_t)c->desc_len, c->priv, c->priv_len) != DOCA_SUCCESS)
		cm_fail(c, "the client's request could not be completed");
}

/* The client got the server's answer. */
static void cm_client_got_rep(struct engine_conn *c, const uint8_t *frame, const struct wire_cm *cm)
{
	if (c->cm_server || c->state != CONN_EXPORTED) {
		cm_fail(c, "unexpected RDMA CM answer");
		return;
	}
	if (cm->type == WIRE_CM_REJ) {
		cm_fail(c, "the server rejected the connection");
		return;
	}
	c->priv_len = cm->priv_len;
	memcpy(c->priv, frame + WIRE_CM_HDR_LEN + cm->desc_len, cm->priv_len);
	if (engine_conn_connect_locked(c, frame + WIRE_CM_HDR_LEN, cm->desc_len) != DOCA_SUCCESS)
		cm_fail(c, "the server's answer could not be used");
}

/* One whole frame is in cm_rx. */
static void cm_dispatch(struct engine_conn *c, const struct wire_cm *cm)
{
	uint8_t *frame = c->cm_rx;

	c->cm_rx = NULL;
	c->cm_rx_len = 0;
	if (cm->type == WIRE_CM_REQ)
		cm_server_got_req(c, frame, cm);
	else
		cm_client_got_rep(c, frame, cm);
	free(frame);
}

/* Read what the socket has; a frame at a time. False on end or error. */
static bool cm_read(struct engine_conn *c)
{
	for (;;) {
		struct wire_cm cm;
		size_t want = WIRE_CM_HDR_LEN, frame_len = 0;
		ssize_t n;

		if (c->cm_rx_len >= WIRE_CM_HDR_LEN) {
			if (wire_cm_parse(c->cm_rx, c->cm_rx_len, &cm, &frame_len) != DOCA_SUCCESS)
				return false;
			if (c->cm_rx_len == frame_len) {
				cm_dispatch(c, &cm);
				if (c->cm_src.fd < 0)
					return true; /* the dispatch closed the socket */
				continue;
			}
			want = frame_len;
		}
		if (c->cm_rx == NULL) {
			c->cm_rx = malloc(WIRE_CM_MAX_FRAME);
			if (c->cm_rx == NULL)
				return false;
		}
		n = recv(c->cm_src.fd, c->cm_rx + c->cm_rx_len, want - c->cm_rx_len, 0);
		if (n == 0)
			return false; /* the peer closed: it left, or said no by closing */
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		c->cm_rx_len += (size_t)n;
	}
}

/* Socket events, from the service thread with the worker lock held. */
void engine_cm_on_sock(struct engine_conn *c, uint32_t events)
{
	if (c->cm_src.fd < 0)
		return;
	if (c->state == CONN_CM_REQUESTED) {
		/* Nothing is read before the application answers: the
		 * request waits whole in cm_rx. The socket is watched for no
		 * event then, but epoll reports a hang-up or an error anyway:
		 * the client went away (a reset), and its request with it. */
		if (events & (EPOLLHUP | EPOLLERR))
			cm_fail(c, "the client went away before its request was answered");
		return;
	}
	if (c->cm_connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->cm_src.fd, SOL_SOCKET, SO_ERROR, &err, &len);
		c->cm_connecting = false;
		if (err != 0) {
			char why[160];

			snprintf(why, sizeof(why), "cannot reach the server: %s", strerror(err));
			cm_fail(c, why);
			return;
		}
	}
	if (c->cm_connecting)
		return;
	if (!cm_flush(c)) {
		cm_fail(c, "the RDMA CM peer went away");
		return;
	}
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !cm_read(c)) {
		/* Once established, the connection no longer needs the socket
		 * (its peer may close it before its BYE arrives): a peer that
		 * dies is noticed by the data endpoint or its process watch. */
		if (c->established_reported)
			engine_cm_close(c);
		else
			cm_fail(c, "the RDMA CM peer closed the connection");
	}
}

/* ---- server side ------------------------------------------------------- */

static int cm_socket(int family)
{
	return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

static void cm_watch(struct engine_conn *c, int fd, uint32_t events)
{
	c->cm_src.fd = fd;
	engine_svc_watch_events(&c->cm_src, events, false);
}

/* ---- sockets before their request -------------------------------------- */

static uint32_t cm_pre_timeout_ms(const struct engine_worker *w)
{
	uint32_t ms = w->conf.request_timeout_ms != 0 ? w->conf.request_timeout_ms : 5000;

	return ms < CM_PRE_TIMEOUT_MS ? ms : CM_PRE_TIMEOUT_MS;
}

/* Give the entry back: its socket closes (or went to a connection). */
static void cm_pre_release(struct engine_listener *l, struct engine_cm_pre *p, bool close_fd)
{
	if (close_fd)
		engine_svc_unwatch(&p->src);
	p->src.fd = -1;
	free(p->rx);
	p->rx = NULL;
	p->rx_len = 0;
	l->npre--;
	l->worker->cm_pending--;
}

static void cm_pre_read(struct engine_listener *l, struct engine_cm_pre *p);

/* A free entry of the table, and the oldest one taken (NULL if none). */
static struct engine_cm_pre *cm_pre_free(struct engine_listener *l, struct engine_cm_pre **oldest)
{
	*oldest = NULL;
	for (int i = 0; i < ENGINE_CM_MAX_PRE; i++) {
		if (l->pre[i].src.fd < 0)
			return &l->pre[i];
		if (*oldest == NULL || l->pre[i].seq < (*oldest)->seq)
			*oldest = &l->pre[i];
	}
	return NULL;
}

static struct engine_cm_pre *cm_pre_add(struct engine_listener *l, int fd, const struct sockaddr_storage *sa,
					socklen_t sa_len)
{
	struct engine_worker *w = l->worker;
	struct engine_cm_pre *p, *oldest;
	char text[80];

	p = cm_pre_free(l, &oldest);
	if (p == NULL) {
		/* Before anyone is dropped, take what the waiting sockets
		 * sent: a burst of clients connects faster than this thread
		 * reads them, and their requests are mostly in by now (each
		 * whole one leaves the table). */
		for (int k = 0; k < ENGINE_CM_MAX_PRE; k++)
			if (l->pre[k].src.fd >= 0)
				cm_pre_read(l, &l->pre[k]);
		p = cm_pre_free(l, &oldest);
	}
	if (p == NULL) {
		SDK_LOG_WARN_RL("port %u: %d connections have not sent their request yet; dropping the oldest "
				"(from %s)",
				l->port, ENGINE_CM_MAX_PRE, sa_text(&oldest->sa, text, sizeof(text)));
		cm_pre_release(l, oldest, true);
		p = oldest;
	}
	p->src.kind = SVC_CM_LISTEN;
	p->src.fd = fd;
	p->src.worker = w;
	p->src.conn = NULL;
	p->src.listener = l;
	p->seq = ++l->pre_seq;
	p->deadline_ns = engine_now_ns() + (uint64_t)cm_pre_timeout_ms(w) * 1000000ULL;
	p->sa = *sa;
	p->sa_len = sa_len;
	l->npre++;
	w->cm_pending++;
	engine_svc_watch_events(&p->src, EPOLLIN, false);
	return p;
}

/* A whole, well-formed request: now it takes a connection slot, and the
 * application hears of it. The frame stays in cm_rx until it accepts. */
static void cm_pre_promote(struct engine_listener *l, struct engine_cm_pre *p, const struct wire_cm *cm)
{
	struct engine_worker *w = l->worker;
	struct engine_conn *c;
	struct wire_desc d;
	char text[80];

	if (wire_desc_parse(p->rx + WIRE_CM_HDR_LEN, cm->desc_len, &d) != DOCA_SUCCESS) {
		SDK_LOG_ERR_RL("port %u: connection request from %s dropped: its descriptor is malformed", l->port,
			       sa_text(&p->sa, text, sizeof(text)));
		cm_pre_release(l, p, true);
		return;
	}
	if (engine_conn_alloc(w, &c) != DOCA_SUCCESS) {
		SDK_LOG_DBG("port %u: connection request from %s refused: no free connection", l->port,
			       sa_text(&p->sa, text, sizeof(text)));
		cm_pre_release(l, p, true);
		return;
	}
	/* The socket moves to the connection: same fd, new epoll owner (an
	 * event of the slot's last socket, still in the service thread's
	 * batch, must not be taken for this one's). */
	c->cm_src.fd = p->src.fd;
	engine_svc_renewed(&c->cm_src);
	c->cm_rx = p->rx;
	c->cm_rx_len = p->rx_len;
	p->rx = NULL;
	/* Nothing more is read until the application accepts. */
	engine_svc_watch_events(&c->cm_src, 0, true);
	c->state = CONN_CM_REQUESTED;
	c->listener = l;
	c->cm_server = true;
	c->peer_sa = p->sa;
	c->peer_sa_len = p->sa_len;
	cm_pre_release(l, p, false);
	cm_set_deadline(c);
	SDK_LOG_DBG("port %u: connection request %u from %s", l->port, c->id, sa_text(&c->peer_sa, text, sizeof(text)));
	if (w->conf.conn_event != NULL)
		w->conf.conn_event(w->conf.arg, c, ENGINE_CONN_REQUEST);
}

/* Read what the socket has, up to one request frame. */
static void cm_pre_read(struct engine_listener *l, struct engine_cm_pre *p)
{
	char text[80];

	for (;;) {
		struct wire_cm cm;
		size_t want = WIRE_CM_HDR_LEN, frame_len = 0;
		ssize_t n;

		if (p->rx_len >= WIRE_CM_HDR_LEN) {
			if (wire_cm_parse(p->rx, p->rx_len, &cm, &frame_len) != DOCA_SUCCESS) {
				cm_pre_release(l, p, true); /* wire_cm_parse said why */
				return;
			}
			if (cm.type != WIRE_CM_REQ) {
				SDK_LOG_ERR_RL("port %u: %s sent an RDMA CM frame of type %u before a request: dropped",
					       l->port, sa_text(&p->sa, text, sizeof(text)), cm.type);
				cm_pre_release(l, p, true);
				return;
			}
			if (p->rx_len == frame_len) {
				cm_pre_promote(l, p, &cm);
				return;
			}
			want = frame_len;
		}
		if (p->rx == NULL) {
			p->rx = malloc(WIRE_CM_MAX_FRAME);
			if (p->rx == NULL) {
				cm_pre_release(l, p, true);
				return;
			}
		}
		n = recv(p->src.fd, p->rx + p->rx_len, want - p->rx_len, 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n <= 0) {
			SDK_LOG_DBG("port %u: %s left before sending its request", l->port,
				    sa_text(&p->sa, text, sizeof(text)));
			cm_pre_release(l, p, true);
			return;
		}
		p->rx_len += (size_t)n;
	}
}

static void cm_pre_expire(struct engine_worker *w, uint64_t now)
{
	char text[80];

	for (int i = 0; i < ENGINE_MAX_LISTENERS; i++) {
		struct engine_listener *l = &w->listeners[i];

		for (int k = 0; l->active && l->npre > 0 && k < ENGINE_CM_MAX_PRE; k++) {
			struct engine_cm_pre *p = &l->pre[k];

			if (p->src.fd < 0 || p->deadline_ns > now)
				continue;
			SDK_LOG_WARN_RL("port %u: %s sent no connection request within %u ms: closed", l->port,
					sa_text(&p->sa, text, sizeof(text)), cm_pre_timeout_ms(w));
			cm_pre_release(l, p, true);
		}
	}
}

/* A listening socket or one of the pre-request sockets has events: take
 * new sockets from every address of the port, then read what the waiting
 * ones sent. */
void engine_cm_on_listen(struct engine_listener *l)
{
	struct sockaddr_storage sa;
	socklen_t sa_len = sizeof(sa);
	int one = 1;
	int fd;

	for (uint32_t s = 0; s < l->nsocks; s++) {
		while ((fd = accept4(l->socks[s].fd, (struct sockaddr *)&sa, &sa_len, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
		       0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			/* A client sends its request as soon as it is
			 * connected: often it is here already, and the entry
			 * is free again. */
			cm_pre_read(l, cm_pre_add(l, fd, &sa, sa_len));
			sa_len = sizeof(sa);
		}
	}
	for (int k = 0; k < ENGINE_CM_MAX_PRE && l->npre > 0; k++)
		if (l->pre[k].src.fd >= 0)
			cm_pre_read(l, &l->pre[k]);
}

static struct engine_listener *listener_find(struct engine_worker *w, uint16_t port)
{
	for (int i = 0; i < ENGINE_MAX_LISTENERS; i++)
		if (w->listeners[i].active && w->listeners[i].port == port)
			return &w->listeners[i];
	return NULL;
}

/* A listening socket on one address; -1 with errno set if there is none. */
static int listener_socket(const struct sockaddr_storage *sa, socklen_t len)
{
	int one = 1;
	int fd = cm_socket(sa->ss_family);
	int err;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)sa, len) == 0 && listen(fd, 64) == 0)
		return fd;
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* The address of the device's GID number index: false when there is none
 * or an earlier GID has the same one (an address listed twice is bound
 * once). */
static bool listener_addr(const struct doca_devinfo *info, uint32_t index, struct sockaddr_storage *sa,
			  socklen_t *len)
{
	struct sockaddr_storage other;
	socklen_t other_len;

	if (softdoca_devinfo_addr(info, index, sa, len) != DOCA_SUCCESS)
		return false;
	for (uint32_t j = 0; j < index; j++)
		if (softdoca_devinfo_addr(info, j, &other, &other_len) == DOCA_SUCCESS && other_len == *len &&
		    memcmp(&other, sa, *len) == 0)
			return false;
	return true;
}

static void listener_close_socks(struct engine_listener *l)
{
	for (uint32_t s = 0; s < l->nsocks; s++)
		engine_svc_unwatch(&l->socks[s]);
	free(l->socks);
	l->socks = NULL;
	l->nsocks = 0;
}

/* A listening socket on port at each address of the device (IPv4 and
 * IPv6, a link-local one with its interface as scope), as RDMA CM binds
 * the device's GIDs: the port is not reachable through another interface's
 * address. An address that went away since the device was listed (or is
 * not usable yet: IPv6 duplicate address detection) is left out. */
static doca_error_t listener_open(struct engine_worker *w, struct engine_listener *l, uint16_t port)
{
	const struct doca_devinfo *info = w->dev != NULL ? doca_dev_as_devinfo(w->dev) : NULL;
	uint32_t n = softdoca_devinfo_gid_count(info);
	char text[80], bound[256] = "";
	size_t used = 0;

	if (n == 0) {
		SDK_LOG_ERR("cannot listen on port %u: the device has no address", port);
		return DOCA_ERROR_NOT_FOUND;
	}
	l->socks = calloc(n, sizeof(*l->socks));
	if (l->socks == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (uint32_t i = 0; i < n; i++) {
		struct sockaddr_storage sa;
		socklen_t len;
		int fd;

		if (!listener_addr(info, i, &sa, &len))
			continue;
		if (sa.ss_family == AF_INET)
			((struct sockaddr_in *)&sa)->sin_port = htons(port);
		else
			((struct sockaddr_in6 *)&sa)->sin6_port = htons(port);
		fd = listener_socket(&sa, len);
		if (fd < 0 && errno == EADDRINUSE) {
			/* INFO, not ERROR: the caller, who knows how the port
			 * was chosen, tells the user what to do (our samples:
			 * pick another with -lp). */
			SDK_LOG_INFO("cannot listen on port %u: another socket is bound to it (on %s)", port,
				     sa_text(&sa, text, sizeof(text)));
			listener_close_socks(l);
			return DOCA_ERROR_IN_USE;
		}
		if (fd < 0 && errno == EADDRNOTAVAIL) {
			SDK_LOG_WARN("port %u: the device's address %s is gone or not usable yet: not listened on", port,
				     sa_text(&sa, text, sizeof(text)));
			continue;
		}
		if (fd < 0) {
			SDK_LOG_ERR("cannot listen on port %u at %s: %s", port, sa_text(&sa, text, sizeof(text)),
				    strerror(errno));
			listener_close_socks(l);
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		l->socks[l->nsocks++] = (struct svc_source){.kind = SVC_CM_LISTEN, .fd = fd, .worker = w, .listener = l};
		if (used < sizeof(bound))
			used += (size_t)snprintf(bound + used, sizeof(bound) - used, "%s%s", used > 0 ? " " : "",
						 sa_text(&sa, text, sizeof(text)));
	}
	if (l->nsocks == 0) {
		SDK_LOG_ERR("cannot listen on port %u: none of the device's %u addresses can be bound", port, n);
		listener_close_socks(l);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	for (uint32_t s = 0; s < l->nsocks; s++)
		engine_svc_watch_events(&l->socks[s], EPOLLIN, false);
	SDK_LOG_DBG("listening on %s", bound);
	return DOCA_SUCCESS;
}

doca_error_t engine_listen(struct engine_worker *w, uint16_t port)
{
	struct engine_listener *l = NULL;
	doca_error_t status = DOCA_SUCCESS;

	pthread_mutex_lock(&w->lock);
	if (listener_find(w, port) != NULL) {
		SDK_LOG_ERR("already listening on port %u", port);
		status = DOCA_ERROR_ALREADY_EXIST;
		goto out;
	}
	for (int i = 0; i < ENGINE_MAX_LISTENERS && l == NULL; i++)
		if (!w->listeners[i].active)
			l = &w->listeners[i];
	if (l == NULL) {
		SDK_LOG_ERR("cannot listen on port %u: already listening on %d ports", port, ENGINE_MAX_LISTENERS);
		status = DOCA_ERROR_FULL;
		goto out;
	}
	l->worker = w;
	status = listener_open(w, l, port);
	if (status != DOCA_SUCCESS)
		goto out;
	l->port = port;
	l->active = true;
	l->npre = 0;
	for (int k = 0; k < ENGINE_CM_MAX_PRE; k++)
		l->pre[k].src.fd = -1;
out:
	engine_worker_unlock(w);
	return status;
}

static void listener_close_locked(struct engine_worker *w, struct engine_listener *l)
{
	/* Requests not answered yet go with their listener. */
	for (uint32_t i = 0; i < w->num_conns; i++) {
		struct engine_conn *c = &w->conns[i];

		if (c->state == CONN_CM_REQUESTED && c->listener == l)
			cm_drop_request(c);
	}
	for (int k = 0; k < ENGINE_CM_MAX_PRE; k++)
		if (l->pre[k].src.fd >= 0)
			cm_pre_release(l, &l->pre[k], true);
	listener_close_socks(l);
	l->active = false;
}

doca_error_t engine_listen_stop(struct engine_worker *w, uint16_t port)
{
	struct engine_listener *l;
	doca_error_t status = DOCA_SUCCESS;

	pthread_mutex_lock(&w->lock);
	l = listener_find(w, port);
	if (l == NULL) {
		SDK_LOG_ERR("not listening on port %u", port);
		status = DOCA_ERROR_NOT_FOUND;
	} else {
		listener_close_locked(w, l);
	}
	engine_worker_unlock(w);
	return status;
}

void engine_cm_close_listeners(struct engine_worker *w)
{
	pthread_mutex_lock(&w->lock);
	for (int i = 0; i < ENGINE_MAX_LISTENERS; i++)
		if (w->listeners[i].active)
			listener_close_locked(w, &w->listeners[i]);
	engine_worker_unlock(w);
}

/* The request that made this connection, kept in cm_rx since it arrived. */
static void cm_answer_stored_req(struct engine_conn *c)
{
	struct wire_cm cm;
	size_t frame_len = 0;

	if (c->cm_rx == NULL || wire_cm_parse(c->cm_rx, c->cm_rx_len, &cm, &frame_len) != DOCA_SUCCESS ||
	    frame_len != c->cm_rx_len) {
		cm_fail(c, "the client's request is gone");
		return;
	}
	cm_dispatch(c, &cm);
}

doca_error_t engine_conn_accept(struct engine_conn *c, const void *private_data, uint8_t private_data_len)
{
	struct engine_worker *w = c->worker;
	doca_error_t status = DOCA_SUCCESS;

	pthread_mutex_lock(&w->lock);
	if (c->state != CONN_CM_REQUESTED) {
		SDK_LOG_ERR("connection %u: accept is for a connection request not yet answered", c->id);
		status = DOCA_ERROR_BAD_STATE;
	} else if (private_data_len > 0 && private_data == NULL) {
		SDK_LOG_ERR("connection %u: accept with %u bytes of private data at NULL", c->id, private_data_len);
		status = DOCA_ERROR_INVALID_VALUE;
	} else {
		if (private_data_len > 0)
			memcpy(c->priv, private_data, private_data_len);
		c->priv_len = private_data_len;
		c->cm_accepted = true;
		/* Now an exported connection, and the client's request
		 * (read before the application heard of it) is answered. */
		c->state = CONN_EXPORTED;
		engine_svc_watch_events(&c->cm_src, EPOLLIN, true);
		cm_answer_stored_req(c);
	}
	engine_worker_unlock(w);
	engine_svc_kick();
	return status;
}

doca_error_t engine_conn_reject(struct engine_conn *c)
{
	struct engine_worker *w = c->worker;
	doca_error_t status = DOCA_SUCCESS;

	pthread_mutex_lock(&w->lock);
	if (c->state != CONN_CM_REQUESTED) {
		SDK_LOG_ERR("connection %u: reject is for a connection request not yet answered", c->id);
		status = DOCA_ERROR_BAD_STATE;
	} else {
		/* Best effort: the client also learns it from the close. */
		static const uint8_t rej[WIRE_CM_HDR_LEN] = {0x53, 0x44, 0x43, 0x4d, WIRE_CM_REJ};

		if (send(c->cm_src.fd, rej, sizeof(rej), MSG_NOSIGNAL) < 0)
			SDK_LOG_DBG("connection %u: reject not sent: %s", c->id, strerror(errno));
		cm_drop_request(c);
	}
	engine_worker_unlock(w);
	return status;
}

/* ---- client side -------------------------------------------------------- */

doca_error_t engine_conn_connect_addr(struct engine_worker *w, const struct sockaddr *addr, socklen_t addr_len,
				      void (*bind)(void *arg, struct engine_conn *conn), void *arg,
				      struct engine_conn **conn_out)
{
	struct engine_conn *c;
	doca_error_t status;
	char text[80];
	int one = 1;
	int fd;

	if (addr_len > sizeof(c->peer_sa) || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)) {
		SDK_LOG_ERR("RDMA CM connects to IPv4 or IPv6 addresses only");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&w->lock);
	status = engine_conn_alloc(w, &c);
	if (status != DOCA_SUCCESS)
		goto out;
	memcpy(&c->peer_sa, addr, addr_len);
	c->peer_sa_len = addr_len;
	if (bind != NULL)
		bind(arg, c);
	fd = cm_socket(addr->sa_family);
	if (fd < 0) {
		SDK_LOG_ERR("cannot make a socket: %s", strerror(errno));
		free(c->desc);
		c->desc = NULL;
		c->state = CONN_FREE;
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto out;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->cm_connecting = connect(fd, addr, addr_len) != 0;
	cm_watch(c, fd, EPOLLIN | EPOLLOUT);
	if (c->cm_connecting && errno != EINPROGRESS) {
		char why[160];

		c->cm_connecting = false;
		snprintf(why, sizeof(why), "cannot reach the server %s: %s", sa_text(&c->peer_sa, text, sizeof(text)),
			 strerror(errno));
		cm_fail(c, why);
	} else {
		cm_set_deadline(c);
		/* Queued now, written once the socket connects. */
		if (cm_send(c, WIRE_CM_REQ, c->desc, (uint32_t)c->desc_len, NULL, 0) != DOCA_SUCCESS)
			cm_fail(c, "cannot send the connection request");
		SDK_LOG_DBG("connection %u: connecting to %s", c->id, sa_text(&c->peer_sa, text, sizeof(text)));
	}
	*conn_out = c;
out:
	engine_worker_unlock(w);
	engine_svc_kick();
	return status;
}

doca_error_t engine_conn_peer_addr(const struct engine_conn *c, struct sockaddr_storage *addr, socklen_t *len)
{
	if (c->peer_sa_len == 0)
		return DOCA_ERROR_NOT_FOUND;
	*addr = c->peer_sa;
	*len = c->peer_sa_len;
	return DOCA_SUCCESS;
}
