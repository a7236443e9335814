/*
 * softdoca — the TCP link: softdoca's own stream transport between peers
 * that are not on one host (and between any two when UCX_TLS asks for
 * tcp only). This file holds its sockets; link_tcp_stream.c what moves
 * on them.
 *
 * DESIGN. Every worker listens on one TCP port, on its device's address
 * (the GID its context uses), and names it in its descriptors. One TCP
 * connection carries an engine connection both ways: when both sides
 * connect (RC), the side whose (address, port, connection id) is lower
 * opens it and the other waits for it, queueing what it sends meanwhile
 * (link_role); a side that connects alone (DC) opens it. A side writes
 * on the socket it opened if it opened one, else on its peer's, and
 * never switches; so when both opened one (two DC sides connecting at
 * once), each direction simply has its own.
 * Who may talk:
 *  - an accepted socket is nobody's until its first frame, AUTH, names
 *    one of this worker's exported connections and that connection's
 *    secret (16 random bytes, from the descriptor or the RDMA CM
 *    exchange), compared in constant time. Until then it holds no
 *    connection slot, only an entry of a small table (LT_MAX_PRE; a full
 *    table accepts no more until its oldest entry has had its grace, so
 *    a burst of honest peers is never cut), for at most
 *    LT_PRE_TIMEOUT_NS, and exactly the AUTH's bytes are read from it.
 *    A wrong or late AUTH closes it; a second socket for a connection
 *    that has one is refused.
 *  - the side that opened a socket reads nothing from it but an AUTH
 *    naming its own connection and secret (the peer proves itself too).
 *  - after AUTH every frame is checked against fixed bounds before use
 *    (link_tcp_wire.c), and each message must name the connection its
 *    socket authenticated for (struct link_msg.bound, checked by the
 *    engine with its secret, as on every link). Any violation closes the
 *    socket and fails the connection.
 *  - memory is bounded: frames are read into blocks of LT_BLOCK_SIZE; a
 *    message the engine keeps (it must wait its turn) pins its block; a
 *    peer whose kept messages pin LT_KEPT_MAX blocks is not read until
 *    the engine gives some back (TCP's own flow control then stops the
 *    sender). Rendezvous payloads go straight to the destination the
 *    engine checked, never through a buffer of the peer's choosing size.
 *  - descriptors are bounded: at most two sockets per connection slot,
 *    LT_MAX_PRE waiting ones, one listener; when the process runs out,
 *    accept frees a reserve descriptor to close the newcomer, so the
 *    listener never spins or dies.
 * Failures: a socket that ends (EOF, RST, an error) fails its connection
 * at once (engine_link_failed), as an endpoint error of UCX does; a quiet
 * but silent peer is left to the engine's keepalive. Ordering: one
 * connection's messages travel in one stream, in order; rendezvous
 * payloads (DATA) may interleave with later messages, which the engine's
 * target orders as it does over UCX.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <doca_dev.h>

#include "core_engine.h"
#include "link_tcp_int.h"

SDK_LOG_REGISTER(ENGINE::TCP)

/* ---- small things ------------------------------------------------------ */

/* A short path gets a small send buffer. The kernel grows a busy
 * socket's send buffer towards tcp_wmem's maximum (4 MiB by default),
 * which on a path of a few microseconds (this host, a veth pair, one
 * switch) only parks megabytes of payload in buffers that no cache
 * holds: every byte is then copied into and out of cold memory.
 * Measured over loopback on a 2-core VM (softdoca_perf write_bw/read_bw,
 * 1 MiB to 16 MiB): 4.3-5.2 GB/s as the kernel tunes it, 6.3-7.2 GB/s
 * with 128 KiB (64 KiB is too little, 256 KiB and up varies run to run
 * with where the pages fall in the 2 MiB L2). The kernel doubles the
 * size asked; 256 KiB in flight still fills a 40 Gb/s link at
 * LT_SHORT_RTT_US, and a longer path (the handshake's round trip says
 * which) keeps the kernel's tuning. */
#define LT_SHORT_RTT_US 50u
#define LT_SHORT_SNDBUF (128 * 1024)

static void sock_size_buffers(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int size = LT_SHORT_SNDBUF;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || len < offsetof(struct tcp_info, tcpi_rttvar))
		return;
	if (ti.tcpi_rtt == 0 || ti.tcpi_rtt > LT_SHORT_RTT_US) {
		SDK_LOG_TRC("tcp link: socket %d: round trip %u us, the kernel sizes its buffers", fd, ti.tcpi_rtt);
		return;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) != 0)
		SDK_LOG_DBG("tcp link: socket %d: cannot set its send buffer: %s", fd, strerror(errno));
	else
		SDK_LOG_TRC("tcp link: socket %d: round trip %u us, send buffer %d KiB", fd, ti.tcpi_rtt, size / 1024);
}

static const char *sa_text(const struct sockaddr_storage *sa, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN] = "?";
	uint16_t port = 0;

	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	snprintf(buf, size, sa->ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
	return buf;
}

void lt_sock_watch(struct link_tcp *lt, struct lt_sock *s, uint32_t events, bool modify)
{
	struct epoll_event ev = {.events = events, .data.ptr = s};

	if (epoll_ctl(lt->epfd, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s->fd, &ev) != 0)
		SDK_LOG_ERR_RL("tcp link: cannot watch socket %d: %s", s->fd, strerror(errno));
}

static void sock_close(struct link_tcp *lt, struct lt_sock *s)
{
	if (s->fd < 0)
		return;
	epoll_ctl(lt->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	s->fd = -1;
	if (s->kind != LT_SOCK_LISTEN)
		lt->nsocks--;
}

static void sock_adopt(struct link_tcp *lt, struct lt_sock *s, int fd)
{
	s->fd = fd;
	lt->nsocks++;
}

/* ---- peers: reset and failure --------------------------------------------- */

/* Close both sockets, drop what was queued or read (requests fail with
 * status): the slot serves nothing until it is opened or attached again. */
static void peer_reset(struct lt_peer *p, doca_error_t status)
{
	sock_close(p->lt, &p->own);
	sock_close(p->lt, &p->acc);
	lt_stream_reset(p, status);
	p->connecting = false;
	p->own_authed = false;
	p->ep_open = false;
	p->write_on = LT_WRITE_NONE;
	p->polled_out = false;
	p->gen++;
	p->out_bytes = 0; /* frames still to be freed count for no one now */
	if (p->conn != NULL && p->conn->ep == p)
		p->conn->ep = NULL;
}

void lt_peer_fail(struct lt_peer *p, const char *why)
{
	struct engine_conn *c = p->conn;

	if (c == NULL || c->state == CONN_CLOSED || c->state == CONN_FREE) {
		peer_reset(p, DOCA_ERROR_CONNECTION_ABORTED);
		return;
	}
	engine_link_failed(c, DOCA_ERROR_CONNECTION_ABORTED, why);
	/* Whatever the engine did, nothing more moves on these sockets. */
	peer_reset(p, DOCA_ERROR_CONNECTION_ABORTED);
}

static bool protocol_error(struct lt_peer *p, const char *what)
{
	SDK_LOG_ERR_RL("connection %u: the peer broke the tcp link's protocol (%s): closing the connection",
		       p->conn != NULL ? p->conn->id : 0, what);
	lt_peer_fail(p, "the peer sent a malformed or unexpected frame");
	return false;
}

/* ---- sockets before their AUTH ------------------------------------------- */

static void listen_pause(struct link_tcp *lt, bool pause)
{
	if (lt->listen_paused == pause || lt->listen.fd < 0)
		return;
	lt->listen_paused = pause;
	lt_sock_watch(lt, &lt->listen, pause ? 0 : EPOLLIN, true);
}

static void pre_release(struct link_tcp *lt, struct lt_pre *e, bool close_fd)
{
	if (close_fd)
		sock_close(lt, &e->sock);
	e->sock.fd = -1;
	e->got = 0;
	atomic_fetch_sub_explicit(&lt->npre, 1, memory_order_relaxed);
	listen_pause(lt, false);
}

static void pre_refuse(struct link_tcp *lt, struct lt_pre *e, const char *why)
{
	char text[80];

	SDK_LOG_ERR_RL("tcp link: connection from %s refused: %s", sa_text(&e->sa, text, sizeof(text)), why);
	pre_release(lt, e, true);
}

/* An authenticated socket becomes the peer's socket of its slot: we
 * read it (the peer writes there), and write on it too when we opened
 * none and our endpoint waits for it. */
static void peer_attach(struct lt_peer *p, struct lt_pre *e)
{
	struct link_tcp *lt = p->lt;

	sock_adopt(lt, &p->acc, e->sock.fd);
	lt->nsocks--; /* counted once: the socket moved */
	pre_release(lt, e, false);
	p->paused = 0;
	if (p->ep_open && p->write_on == LT_WRITE_NONE)
		p->write_on = LT_WRITE_ACC;
	p->polled_out = p->write_on == LT_WRITE_ACC && p->q_head != NULL;
	lt_sock_watch(lt, &p->acc, EPOLLIN | (p->polled_out ? EPOLLOUT : 0), true);
	SDK_LOG_TRC("connection %u: the peer's tcp link authenticated", p->conn->id);
	if (p->write_on == LT_WRITE_ACC && !lt_out_write(p))
		return;
	/* Frames may have come with the AUTH. */
	(void)lt_in_read(p);
}

/* The whole AUTH is in: the socket becomes the peer's socket of the
 * connection it names, or is closed. */
static void pre_auth(struct link_tcp *lt, struct lt_pre *e)
{
	struct lt_auth a;
	struct lt_peer *p;
	struct engine_conn *c;

	if (lt_auth_parse(e->buf + LT_FRAME_HDR, LT_AUTH_LEN, &a) != DOCA_SUCCESS) {
		pre_refuse(lt, e, "its authentication is malformed");
		return;
	}
	p = a.conn_id <= lt->npeers ? &lt->peers[a.conn_id - 1] : NULL;
	if (p == NULL || p->expect_id != a.conn_id ||
	    !softdoca_secret_equal(p->secret, a.secret, ENGINE_SECRET_LEN)) {
		pre_refuse(lt, e, "it names no connection of this context, or with the wrong secret "
				  "(a descriptor of another run, or not from this peer)");
		return;
	}
	c = p->conn;
	if (c == NULL || (c->state != CONN_EXPORTED && c->state != CONN_CONNECTED)) {
		pre_refuse(lt, e, "its connection is closed");
		return;
	}
	if (p->acc.fd >= 0) {
		pre_refuse(lt, e, "its connection has a peer already");
		return;
	}
	if (p->own.fd >= 0 && (p->blk != NULL || p->own_authed)) {
		/* The peer writes on our socket already: it cannot open its own. */
		pre_refuse(lt, e, "its connection is carried by this side's socket");
		return;
	}
	peer_attach(p, e);
}

static void pre_read(struct link_tcp *lt, struct lt_pre *e)
{
	struct lt_frame f;
	ssize_t n;

	/* Exactly the AUTH's bytes: what follows belongs to the connection. */
	do {
		n = recv(e->sock.fd, e->buf + e->got, sizeof(e->buf) - e->got, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		char text[80];

		SDK_LOG_DBG("tcp link: %s left before authenticating", sa_text(&e->sa, text, sizeof(text)));
		pre_release(lt, e, true);
		return;
	}
	e->got += (size_t)n;
	if (e->got >= LT_FRAME_HDR && (lt_frame_parse(e->buf, &f) != DOCA_SUCCESS || f.type != LT_AUTH)) {
		pre_refuse(lt, e, "its first frame is not an authentication");
		return;
	}
	if (e->got == sizeof(e->buf))
		pre_auth(lt, e);
}

/* A free entry, or the oldest one once it has had its grace (it is
 * refused); NULL: every entry is young, accept nothing now. */
static struct lt_pre *pre_slot(struct link_tcp *lt, uint64_t now)
{
	struct lt_pre *oldest = NULL;

	for (int i = 0; i < LT_MAX_PRE; i++) {
		if (lt->pre[i].sock.fd < 0)
			return &lt->pre[i];
		if (oldest == NULL || lt->pre[i].seq < oldest->seq)
			oldest = &lt->pre[i];
	}
	if (oldest->deadline_ns - LT_PRE_TIMEOUT_NS + LT_PRE_GRACE_NS > now)
		return NULL;
	pre_refuse(lt, oldest, "too many connections are waiting to authenticate; dropping the oldest");
	return oldest;
}

static struct lt_pre *pre_add(struct link_tcp *lt, struct lt_pre *e, int fd, const struct sockaddr_storage *sa)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sock_size_buffers(fd);
	sock_adopt(lt, &e->sock, fd);
	e->got = 0;
	e->seq = ++lt->pre_seq;
	e->deadline_ns = engine_now_ns() + LT_PRE_TIMEOUT_NS;
	e->sa = *sa;
	atomic_fetch_add_explicit(&lt->npre, 1, memory_order_relaxed);
	lt_sock_watch(lt, &e->sock, EPOLLIN, false);
	return e;
}

/* Out of descriptors: take the newcomer with the reserve one and close
 * it, so the listener does not report it again and again. */
static void listen_refuse_one(struct link_tcp *lt)
{
	int fd;

	if (lt->reserve_fd < 0) {
		/* Not even that: stop listening a while (link_tcp_expire). */
		listen_pause(lt, true);
		return;
	}
	close(lt->reserve_fd);
	fd = accept4(lt->listen.fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	lt->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	SDK_LOG_WARN_RL("tcp link: out of file descriptors (%s): an incoming connection was refused",
			strerror(EMFILE));
}

static void listen_accept(struct link_tcp *lt)
{
	uint64_t now = engine_now_ns();

	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage sa = {0};
		socklen_t len = sizeof(sa);
		struct lt_pre *e = pre_slot(lt, now);
		int fd;

		if (e == NULL) {
			/* Newcomers wait in the kernel's backlog. */
			listen_pause(lt, true);
			return;
		}
		listen_pause(lt, lt->reserve_fd < 0);
		fd = accept4(lt->listen.fd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			/* A peer sends its AUTH as soon as it is connected: read
			 * it now, so a burst of honest peers rarely waits. */
			pre_read(lt, pre_add(lt, e, fd, &sa));
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			listen_refuse_one(lt);
			continue;
		}
		return;
	}
}

void link_tcp_expire(struct link_tcp *lt, uint64_t now)
{
	if (lt->reserve_fd < 0) {
		lt->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (lt->reserve_fd < 0)
			return;
	}
	for (int i = 0; i < LT_MAX_PRE && atomic_load_explicit(&lt->npre, memory_order_relaxed) > 0; i++) {
		struct lt_pre *e = &lt->pre[i];

		if (e->sock.fd >= 0 && e->deadline_ns <= now)
			pre_refuse(lt, e, "no authentication within 2 s");
	}
	/* Paused with a full table: an entry past its grace makes room. */
	if (lt->listen_paused)
		listen_accept(lt);
}

bool link_tcp_has_deadlines(const struct link_tcp *lt)
{
	return atomic_load_explicit(&lt->npre, memory_order_relaxed) > 0 || lt->reserve_fd < 0 || lt->listen_paused;
}

/* ---- our endpoint ------------------------------------------------------ */

/* Our connect finished: false when it failed (p was failed). */
static bool own_connected(struct lt_peer *p)
{
	int err = 0;
	socklen_t len = sizeof(err);
	char why[128];

	getsockopt(p->own.fd, SOL_SOCKET, SO_ERROR, &err, &len);
	p->connecting = false;
	if (err == 0) {
		sock_size_buffers(p->own.fd);
		return true;
	}
	snprintf(why, sizeof(why), "cannot reach the peer's tcp link (%s)", strerror(err));
	lt_peer_fail(p, why);
	return false;
}

/* Readable, or ended: a socket the peer does not write on may only end. */
static void stray_event(struct lt_peer *p, struct lt_sock *s)
{
	uint8_t byte;
	ssize_t n = recv(s->fd, &byte, 1, MSG_DONTWAIT);

	if (n > 0) {
		protocol_error(p, "bytes on a socket the peer does not write on");
		return;
	}
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		lt_peer_fail(p, "the peer closed the connection (it exited, closed it, or refused this side's "
				"authentication)");
}

/* Events of one of p's sockets. */
static unsigned int sock_event(struct lt_peer *p, struct lt_sock *s, uint32_t events)
{
	uint32_t gen = p->gen;
	unsigned int n = 0;

	if (s == &p->own && p->connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) && !own_connected(p))
		return 0;
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		if (s != lt_rsock(p))
			stray_event(p, s);
		else if (!p->paused)
			n = lt_in_read(p);
		else if (events & (EPOLLERR | EPOLLHUP))
			lt_peer_fail(p, "the connection from the peer broke");
	}
	if (p->gen == gen && s == lt_wsock(p) && (events & EPOLLOUT))
		(void)lt_out_write(p);
	return n;
}

static bool addr_to_sockaddr(const struct link_tcp *lt, const struct lt_addr *a, struct sockaddr_storage *sa,
			     socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	if (a->family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		memcpy(&in->sin_addr, a->addr, 4);
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a->port);
		memcpy(&in6->sin6_addr, a->addr, 16);
		/* A link-local peer is reached through this device. */
		if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr))
			in6->sin6_scope_id = lt->ifindex;
		*len = sizeof(*in6);
	}
	return true;
}

/* A connect in progress: still pending, or done (true), or already
 * refused (false, errno set)? A look, never a wait. */
static bool connect_pending(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	socklen_t len = sizeof(int);
	int err = 0;

	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLERR | POLLHUP)))
		return true;
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err == 0)
		return true;
	errno = err;
	return false;
}

/* Open our socket to the peer at a. */
static doca_error_t own_open(struct lt_peer *p, const struct lt_addr *a)
{
	struct link_tcp *lt = p->lt;
	struct engine_conn *c = p->conn;
	struct sockaddr_storage sa;
	socklen_t sa_len;
	char text[80];
	int one = 1, fd, rc;

	addr_to_sockaddr(lt, a, &sa, &sa_len);
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		SDK_LOG_ERR_RL("connection %u: cannot make a socket: %s", c->id, strerror(errno));
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	rc = connect(fd, (struct sockaddr *)&sa, sa_len);
	if (rc != 0 && errno != EINPROGRESS) {
		SDK_LOG_ERR_RL("connection %u: cannot reach the peer's tcp link at %s: %s", c->id,
			       sa_text(&sa, text, sizeof(text)), strerror(errno));
		close(fd);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (rc != 0 && !connect_pending(fd)) {
		/* Known at once (on this host, mostly): nobody listens. */
		SDK_LOG_ERR_RL("connection %u: cannot reach the peer's tcp link at %s: %s", c->id,
			       sa_text(&sa, text, sizeof(text)), strerror(errno));
		close(fd);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (rc == 0)
		sock_size_buffers(fd);
	sock_adopt(lt, &p->own, fd);
	p->connecting = rc != 0;
	p->own_authed = false;
	p->write_on = LT_WRITE_OWN;
	p->polled_out = true;
	lt_sock_watch(lt, &p->own, EPOLLIN | EPOLLOUT, false);
	return DOCA_SUCCESS;
}

/* Whether this side opens the connection's socket: the side whose
 * (address, port, connection id) is lower, as both can tell from the two
 * descriptors; a DC side that connects always does (its peer may never),
 * and so does one whose peer's descriptor names a process of this host
 * that has exited (an open then tells at once whether anyone is there;
 * if the peer opens one too, each direction has its own socket). */
static bool link_role_opens(const struct lt_peer *p, const struct lt_addr *peer)
{
	struct engine_conn *c = p->conn;
	uint8_t ours[LT_ADDR_LEN + 4], theirs[LT_ADDR_LEN + 4];

	if (c->worker->conf.dc || c->peer_claims_exited)
		return true;
	lt_addr_build(ours, &p->lt->self);
	lt_addr_build(theirs, peer);
	/* Big-endian ids: the bytes compare as the numbers do. */
	for (int i = 0; i < 4; i++) {
		ours[LT_ADDR_LEN + i] = (uint8_t)(c->id >> (24 - 8 * i));
		theirs[LT_ADDR_LEN + i] = (uint8_t)(c->peer_id >> (24 - 8 * i));
	}
	return memcmp(ours, theirs, sizeof(ours)) <= 0;
}

static doca_error_t lt_ep_open(struct engine_conn *c, const uint8_t *addr, size_t addr_len)
{
	struct link_tcp *lt = c->worker->tcp;
	struct lt_auth auth = {.conn_id = c->peer_id};
	struct lt_frame f = {.type = LT_AUTH, .hdr_len = LT_AUTH_LEN};
	uint8_t body[LT_AUTH_LEN];
	doca_error_t status;
	struct lt_peer *p;
	struct lt_addr a;

	if (lt == NULL)
		return DOCA_ERROR_NOT_SUPPORTED;
	if (lt_addr_parse(addr, addr_len, &a) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	p = &lt->peers[c->id - 1];
	if (p->ep_open) {
		SDK_LOG_ERR("connection %u already has a tcp endpoint", c->id);
		return DOCA_ERROR_BAD_STATE;
	}
	p->conn = c;
	/* The first frame either way names the peer's connection and secret:
	 * on our socket it is how the peer lets us in, on the peer's it is how
	 * we prove ourselves. */
	memcpy(auth.secret, c->peer_secret, ENGINE_SECRET_LEN);
	lt_auth_build(body, &auth);
	if (!lt_queue_ctl(p, &f, body, sizeof(body)))
		return DOCA_ERROR_NO_MEMORY;
	p->ep_open = true;
	c->ep = p;
	if (p->acc.fd >= 0) {
		/* The peer opened it already: write there too. */
		p->write_on = LT_WRITE_ACC;
	} else if (link_role_opens(p, &a)) {
		status = own_open(p, &a);
		if (status != DOCA_SUCCESS) {
			peer_reset(p, status);
			return status;
		}
		if (p->connecting)
			return DOCA_SUCCESS;
	} else {
		/* The peer opens it: what we send waits for it. */
		SDK_LOG_TRC("connection %u: waiting for the peer's tcp link", c->id);
		return DOCA_SUCCESS;
	}
	(void)lt_out_write(p);
	return c->ep != NULL ? DOCA_SUCCESS : DOCA_ERROR_CONNECTION_ABORTED;
}

static void lt_ep_flush(struct engine_conn *c, uint64_t deadline_ns)
{
	struct lt_peer *p = c->ep;

	while (p != NULL && c->ep == p && lt_out_busy(p) && engine_now_ns() < deadline_ns) {
		struct epoll_event ev;

		link_tcp_progress(c->worker->tcp);
		if (c->ep != p || !lt_out_busy(p))
			break;
		/* Sleep a little on our own sockets (never on the peer's). */
		(void)epoll_wait(c->worker->tcp->epfd, &ev, 1, 1);
	}
}

static void lt_ep_close(struct engine_conn *c)
{
	struct lt_peer *p = c->ep;

	if (p == NULL)
		return;
	peer_reset(p, DOCA_ERROR_CONNECTION_ABORTED);
	c->ep = NULL;
}

/* ---- the worker's link ------------------------------------------------- */

/* With no socket but the listener, a look every this often is enough
 * for a newcomer (a system call per progress would cost a program whose
 * peers are all on this host over shared memory). */
#define LT_IDLE_LOOK_NS 1000000ULL

unsigned int link_tcp_progress(struct link_tcp *lt)
{
	return link_tcp_poll(lt, false);
}

unsigned int link_tcp_poll(struct link_tcp *lt, bool look)
{
	struct epoll_event ev[32];
	unsigned int n = lt_run_done(lt);
	int k;

	if (lt->nsocks == 0 && !look) {
		uint64_t now = engine_coarse_ns();

		if (now < lt->idle_look_ns)
			return n;
		lt->idle_look_ns = now + LT_IDLE_LOOK_NS;
	}
	do {
		k = epoll_wait(lt->epfd, ev, 32, 0);
	} while (k < 0 && errno == EINTR);
	for (int i = 0; i < k; i++) {
		struct lt_sock *s = ev[i].data.ptr;

		if (s->fd < 0)
			continue; /* closed by an earlier event of this round */
		switch (s->kind) {
		case LT_SOCK_LISTEN:
			listen_accept(lt);
			break;
		case LT_SOCK_PRE:
			pre_read(lt, container_of(s, struct lt_pre, sock));
			break;
		case LT_SOCK_OWN:
		case LT_SOCK_ACC:
			n += sock_event(s->owner, s, ev[i].events);
			break;
		default:
			break;
		}
	}
	n += lt_run_done(lt);
	return n + (unsigned int)(k > 0 ? k : 0);
}

bool link_tcp_idle(const struct link_tcp *lt)
{
	return lt->done_head == NULL;
}

int link_tcp_fd(const struct link_tcp *lt)
{
	return lt->epfd;
}

void link_tcp_self(const struct link_tcp *lt, struct lt_addr *addr)
{
	*addr = lt->self;
}

void link_tcp_conn_expect(struct link_tcp *lt, struct engine_conn *c)
{
	struct lt_peer *p = &lt->peers[c->id - 1];

	peer_reset(p, DOCA_ERROR_CONNECTION_ABORTED);
	p->conn = c;
	p->expect_id = c->id;
	memcpy(p->secret, c->secret, ENGINE_SECRET_LEN);
}

void link_tcp_conn_reset(struct link_tcp *lt, struct engine_conn *c)
{
	struct lt_peer *p = &lt->peers[c->id - 1];

	peer_reset(p, DOCA_ERROR_CONNECTION_ABORTED);
	p->expect_id = 0;
	memset(p->secret, 0, sizeof(p->secret));
}

/* The listening socket, on the device's address that gid_index names. */
static doca_error_t listen_open(struct link_tcp *lt, struct doca_dev *dev, uint32_t gid_index)
{
	const struct doca_devinfo *info = doca_dev_as_devinfo(dev);
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	int fd;

	if (softdoca_devinfo_addr(info, gid_index, &sa, &len) != DOCA_SUCCESS &&
	    softdoca_devinfo_addr(info, 0, &sa, &len) != DOCA_SUCCESS) {
		SDK_LOG_ERR("device %s has no address for its tcp link", softdoca_devinfo_iface(info));
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	lt->ifindex = softdoca_devinfo_ifindex(info);
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) != 0 || listen(fd, SOMAXCONN) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		SDK_LOG_ERR("cannot listen for tcp link connections on %s: %s", softdoca_devinfo_iface(info),
			    strerror(errno));
		if (fd >= 0)
			close(fd);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	lt->listen.fd = fd;
	memset(&lt->self, 0, sizeof(lt->self));
	if (sa.ss_family == AF_INET) {
		lt->self.family = 4;
		lt->self.port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
		memcpy(lt->self.addr, &((struct sockaddr_in *)&sa)->sin_addr, 4);
	} else {
		lt->self.family = 6;
		lt->self.port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
		memcpy(lt->self.addr, &((struct sockaddr_in6 *)&sa)->sin6_addr, 16);
	}
	return DOCA_SUCCESS;
}

doca_error_t link_tcp_open(struct engine_worker *w, struct doca_dev *dev, uint32_t gid_index)
{
	struct link_tcp *lt = calloc(1, sizeof(*lt));
	doca_error_t status = DOCA_ERROR_NO_MEMORY;
	char text[80];

	if (lt == NULL)
		return status;
	lt->w = w;
	lt->epfd = -1;
	lt->reserve_fd = -1;
	lt->listen = (struct lt_sock){.kind = LT_SOCK_LISTEN, .fd = -1, .owner = lt};
	for (int i = 0; i < LT_MAX_PRE; i++)
		lt->pre[i].sock = (struct lt_sock){.kind = LT_SOCK_PRE, .fd = -1, .owner = &lt->pre[i]};
	lt->npeers = w->conf.max_connections;
	lt->peers = calloc(lt->npeers, sizeof(*lt->peers));
	if (lt->peers == NULL)
		goto fail;
	for (uint32_t i = 0; i < lt->npeers; i++) {
		struct lt_peer *p = &lt->peers[i];

		p->lt = lt;
		p->own = (struct lt_sock){.kind = LT_SOCK_OWN, .fd = -1, .owner = p};
		p->acc = (struct lt_sock){.kind = LT_SOCK_ACC, .fd = -1, .owner = p};
	}
	lt->epfd = epoll_create1(EPOLL_CLOEXEC);
	lt->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (lt->epfd < 0 || lt->reserve_fd < 0) {
		SDK_LOG_ERR("tcp link: %s", strerror(errno));
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto fail;
	}
	status = listen_open(lt, dev, gid_index);
	if (status != DOCA_SUCCESS)
		goto fail;
	lt_sock_watch(lt, &lt->listen, EPOLLIN, false);
	w->tcp = lt;
	{
		struct sockaddr_storage sa;
		socklen_t len = sizeof(sa);

		getsockname(lt->listen.fd, (struct sockaddr *)&sa, &len);
		SDK_LOG_DBG("tcp link listening on %s", sa_text(&sa, text, sizeof(text)));
	}
	return DOCA_SUCCESS;
fail:
	if (lt->epfd >= 0)
		close(lt->epfd);
	if (lt->reserve_fd >= 0)
		close(lt->reserve_fd);
	free(lt->peers);
	free(lt);
	return status;
}

void link_tcp_close(struct engine_worker *w)
{
	struct link_tcp *lt = w->tcp;

	if (lt == NULL)
		return;
	for (uint32_t i = 0; i < lt->npeers; i++) {
		struct lt_peer *p = &lt->peers[i];

		sock_close(lt, &p->own);
		sock_close(lt, &p->acc);
		lt_stream_free(p);
	}
	for (int i = 0; i < LT_MAX_PRE; i++)
		sock_close(lt, &lt->pre[i].sock);
	sock_close(lt, &lt->listen);
	lt_cache_free(lt);
	close(lt->epfd);
	if (lt->reserve_fd >= 0)
		close(lt->reserve_fd);
	free(lt->peers);
	free(lt);
	w->tcp = NULL;
}

const struct link_ops link_tcp_ops = {
	.name = "tcp",
	.kind = LINK_TCP,
	.ep_open = lt_ep_open,
	.ep_flush = lt_ep_flush,
	.ep_close = lt_ep_close,
	.send = lt_send,
	.recv_data = lt_recv_data,
	.data_release = lt_data_release,
	.cancel = lt_cancel,
};

