/*
 * softdoca — the TCP link: softdoca's own stream transport between peers
 * that are not on one host (and between any two when UCX_TLS asks for
 * tcp only).
 *
 * DESIGN. Every worker listens on one TCP port, on its device's address
 * (the GID its context uses), and names it in its descriptors. A side
 * that connects opens one TCP connection to its peer's port and only
 * writes on it ("out"); the peer only reads it ("in"), so each engine
 * connection has two, as it has two UCX endpoints. Who may talk:
 *  - an accepted socket is nobody's until its first frame, AUTH, names
 *    one of this worker's exported connections and that connection's
 *    secret (16 random bytes, from the descriptor or the RDMA CM
 *    exchange), compared in constant time. Until then it holds no
 *    connection slot, only an entry of a small table (LT_MAX_PRE, the
 *    oldest dropped for a newcomer), for at most LT_PRE_TIMEOUT_NS, and
 *    exactly the AUTH's bytes are read from it. A wrong or late AUTH
 *    closes it; a second socket for a connection that has one is refused.
 *  - after AUTH every frame is checked against fixed bounds before use
 *    (link_tcp_wire.c), and each message must name the connection its
 *    socket authenticated for (struct link_msg.bound, checked by the
 *    engine with its secret as on every link). Any violation closes the
 *    socket and fails the connection; a byte on an "out" socket is one.
 *  - memory is bounded: frames are read into blocks of LT_BLOCK_SIZE; a
 *    message the engine keeps (it must wait its turn) pins its block; a
 *    peer whose kept messages pin LT_KEPT_MAX blocks is not read until
 *    the engine gives some back (TCP's own flow control then stops the
 *    sender). Rendezvous payloads go straight to the destination the
 *    engine checked, never through a buffer of the peer's choosing size.
 *  - descriptors are bounded: two sockets per connection slot, LT_MAX_PRE
 *    waiting ones, one listener; when the process runs out, accept
 *    frees a reserve descriptor to close the newcomer, so the listener
 *    never spins or dies.
 * Failures: a socket that ends (EOF, RST, an error) fails its connection
 * at once (engine_link_failed), as an endpoint error of UCX does; a quiet
 * but silent peer is left to the engine's keepalive. Ordering: one
 * connection's messages travel in one stream, in order; rendezvous
 * payloads (DATA) may interleave with later messages, which the engine's
 * target orders as it does over UCX.
 *
 * Callbacks (sends over, fetches over) are queued and run from
 * link_tcp_progress, never inside a call the engine is making.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <doca_dev.h>

#include "core_engine.h"
#include "engine_internal.h"
#include "link.h"
#include "link_tcp.h"
#include "link_tcp_wire.h"

SDK_LOG_REGISTER(ENGINE::TCP)

/* Read buffers: aligned to their size, so a payload pointer finds its
 * block. A block holds the largest frame that travels whole. */
#define LT_BLOCK_SIZE (256u * 1024u)
#define LT_BLOCK_CACHE 8
/* Blocks a peer's kept messages may pin before its socket is paused. */
#define LT_KEPT_MAX 32u
/* Accepted sockets not yet authenticated, and how long they may take. */
#define LT_MAX_PRE 128
#define LT_PRE_TIMEOUT_NS (2ULL * 1000000000ULL)
/* With the table full, the oldest entry makes room for a newcomer only
 * once it has waited this long; until then newcomers wait in the
 * kernel's backlog (a burst of honest peers, whose AUTH follows at once,
 * is never cut; one that never speaks is). */
#define LT_PRE_GRACE_NS (200ULL * 1000000ULL)
/* Bytes read from one socket in one progress call. */
#define LT_READ_BUDGET (4u << 20)
/* A payload of at most this is copied when the socket cannot take it at
 * once (the send is then over for the caller); larger ones are sent
 * from the caller's memory and complete later. */
#define LT_COPY_MAX (16u * 1024u)
/* A payload larger than this, in a send not marked eager, goes by
 * rendezvous (the receiver fetches it into its checked destination). */
#define LT_RNDV_THRESH (16u * 1024u)
/* Payload bytes per DATA frame: between two, other frames may pass. */
#define LT_FRAG (256u * 1024u)
/* iovecs of one sendmsg. */
#define LT_IOV_MAX 64

_Static_assert(LT_FRAME_HDR + LT_HDR_MAX + LT_MSG_MAX < LT_BLOCK_SIZE / 2, "a whole frame fits in a block");
_Static_assert(LT_FRAG <= LT_DATA_MAX, "DATA frames stay within what a receiver accepts");

enum lt_sock_kind {
	LT_SOCK_LISTEN = 1,
	LT_SOCK_PRE,
	LT_SOCK_IN,
	LT_SOCK_OUT,
};

/* What the link's epoll set points to. */
struct lt_sock {
	uint8_t kind;
	int fd;
	void *owner; /* LISTEN: the link; PRE: its entry; IN, OUT: the peer */
};

/* A request the engine holds (a send or a fetch): its callback, queued
 * on the link's done list when it is over. */
enum lt_req_type {
	LT_REQ_TX = 1,
	LT_REQ_RNDV,
};

struct lt_req {
	uint8_t type;          /* enum lt_req_type */
	bool done_queued;
	doca_error_t status;
	link_cb cb;
	void *user;
	struct lt_req *done_next;
};

/* One outgoing frame, or a rendezvous send (RTS, then its DATA). */
enum lt_tx_state {
	LT_TX_QUEUED = 1,   /* on the frame queue */
	LT_TX_WAIT_CTS,     /* RTS written; waits for the receiver's CTS */
	LT_TX_DATA,         /* cleared: its DATA frames are being written */
};

struct lt_tx {
	struct lt_req req;            /* first: a request pointer is a tx pointer */
	struct lt_tx *next;
	uint8_t state;                /* enum lt_tx_state */
	uint8_t frame;                /* enum lt_type of the frame queued */
	bool pending;                 /* the caller holds it as a request: callback due */
	uint16_t head_len;
	uint8_t head[LT_FRAME_HDR + LT_HDR_MAX];
	struct engine_sge iov[ENGINE_MAX_SGE]; /* the payload (the caller's, or copy) */
	uint32_t niov;
	size_t len;
	void *copy;                   /* ours: the payload's copy */
	size_t off;                   /* bytes of the frame being written that went */
	uint64_t rndv_id;
	size_t data_sent;             /* DATA: payload bytes whose frames went */
	size_t frag_len;              /* DATA: payload bytes of the frame being written (0: none) */
	uint8_t frag_head[LT_FRAME_HDR];
};

/* An RTS that arrived: the descriptor the engine fetches or gives back. */
enum lt_rndv_state {
	LT_RNDV_OFFERED = 1, /* handed to a handler */
	LT_RNDV_KEPT,        /* the handler kept it */
	LT_RNDV_FETCHING,    /* CTS sent: DATA fills iov */
	LT_RNDV_DISCARD,     /* cancelled: its DATA is read and dropped */
	LT_RNDV_GIVEN_UP,    /* a fetch from within its handler failed: declined after it */
};

struct lt_rndv {
	struct lt_req req;
	struct lt_rndv *next;        /* the peer's list (fetching, discarding) */
	struct lt_peer *peer;        /* NULL once the peer is gone (orphan) */
	uint32_t gen;                /* the peer's generation it belongs to */
	uint8_t state;               /* enum lt_rndv_state */
	bool listed;                 /* on peer->rndvs */
	bool cb_ran;                 /* the engine's request is over */
	uint64_t id;
	size_t len;
	size_t got;
	struct engine_sge iov[ENGINE_MAX_SGE];
	uint32_t niov;
};

/* A read buffer. refs: the socket reading into it, plus one per message
 * payload in it that the engine kept. */
struct lt_block {
	uint32_t refs;
	struct lt_peer *peer;        /* counted in peer->kept_blocks while gen matches */
	uint32_t gen;
	bool counted;
	max_align_t data[];
};

#define LT_BLOCK_DATA (LT_BLOCK_SIZE - offsetof(struct lt_block, data))

/* One connection slot's sockets and what moves on them. */
struct lt_peer {
	struct link_tcp *lt;
	struct engine_conn *conn;
	uint32_t gen;                /* bumped by every reset */
	uint32_t expect_id;          /* AUTH must name this connection ... */
	uint8_t secret[ENGINE_SECRET_LEN]; /* ... with this secret (0: nothing exported) */
	/* out: our endpoint, written */
	struct lt_sock out;
	bool connecting;
	bool out_polled;             /* EPOLLOUT asked for */
	struct lt_tx *q_head, *q_tail;       /* frames, in order */
	struct lt_tx *data_head, *data_tail; /* rendezvous sends cleared to send */
	struct lt_tx *wait_head;             /* rendezvous sends waiting for CTS */
	uint64_t next_rndv_id;
	/* in: the peer's endpoint to us, read */
	struct lt_sock in;
	struct lt_block *blk;
	size_t rpos, wpos;
	struct lt_rndv *fill;        /* a DATA frame's payload goes here ... */
	uint64_t fill_left;          /* ... this many bytes more */
	struct lt_rndv *rndvs;       /* fetching or discarding */
	uint32_t kept_blocks;
	bool paused;
};

/* An accepted socket before its AUTH. */
struct lt_pre {
	struct lt_sock sock;         /* fd -1: free */
	uint64_t deadline_ns;
	uint64_t seq;
	size_t got;
	uint8_t buf[LT_FRAME_HDR + LT_AUTH_LEN];
	struct sockaddr_storage sa;
};

struct link_tcp {
	struct engine_worker *w;
	int epfd;
	struct lt_sock listen;
	struct lt_addr self;
	unsigned int ifindex;        /* scope of IPv6 link-local peers */
	int reserve_fd;              /* given up to refuse a socket when out of descriptors */
	bool listen_paused;          /* the table is full of young entries: not accepting */
	struct lt_pre pre[LT_MAX_PRE];
	atomic_uint npre;
	uint64_t pre_seq;
	struct lt_peer *peers;       /* one per connection slot */
	uint32_t npeers;
	uint32_t nsocks;             /* sockets besides the listener */
	struct lt_block *cache[LT_BLOCK_CACHE];
	uint32_t ncache;
	struct lt_req *done_head, *done_tail;
	uint8_t scratch[4096];       /* DATA of a cancelled fetch lands here */
};

/* ---- small things ------------------------------------------------------ */

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

static void sock_watch(struct link_tcp *lt, struct lt_sock *s, uint32_t events, bool modify)
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

static void req_done(struct link_tcp *lt, struct lt_req *r, doca_error_t status)
{
	if (r->done_queued)
		return;
	r->done_queued = true;
	r->status = status;
	r->done_next = NULL;
	if (lt->done_tail == NULL)
		lt->done_head = r;
	else
		lt->done_tail->done_next = r;
	lt->done_tail = r;
}

static void tx_free(struct lt_tx *tx)
{
	free(tx->copy);
	free(tx);
}

static void rndv_free(struct lt_rndv *rv)
{
	free(rv);
}

/* The link is done with rv (off its peer's list): free it, unless its
 * callback is still due (run_done frees it then). */
static void rndv_drop(struct lt_rndv *rv)
{
	if (rv->req.done_queued && !rv->cb_ran)
		return;
	rndv_free(rv);
}

/* Callbacks that are due, in the order they became due. */
static unsigned int run_done(struct link_tcp *lt)
{
	unsigned int n = 0;

	while (lt->done_head != NULL) {
		struct lt_req *r = lt->done_head;

		lt->done_head = r->done_next;
		if (lt->done_head == NULL)
			lt->done_tail = NULL;
		if (r->cb != NULL)
			r->cb(r, r->status, r->user);
		n++;
		if (r->type == LT_REQ_TX) {
			tx_free((struct lt_tx *)r);
			continue;
		}
		((struct lt_rndv *)r)->cb_ran = true;
		/* A cancelled fetch still on its peer's list goes on dropping
		 * its data: freed when that ends (rndv_drop). */
		if (!((struct lt_rndv *)r)->listed)
			rndv_free((struct lt_rndv *)r);
	}
	return n;
}

/* A send is over: its caller hears of it if it holds the request. */
static void tx_finish(struct link_tcp *lt, struct lt_tx *tx, doca_error_t status)
{
	if (tx->pending)
		req_done(lt, &tx->req, status);
	else
		tx_free(tx);
}

/* ---- blocks ------------------------------------------------------------ */

static struct lt_block *block_get(struct link_tcp *lt)
{
	struct lt_block *b;

	if (lt->ncache > 0) {
		b = lt->cache[--lt->ncache];
	} else {
		b = aligned_alloc(LT_BLOCK_SIZE, LT_BLOCK_SIZE);
		if (b == NULL)
			return NULL;
	}
	b->refs = 1;
	b->peer = NULL;
	b->gen = 0;
	b->counted = false;
	return b;
}

static struct lt_block *block_of(const void *p)
{
	return (struct lt_block *)((uintptr_t)p & ~(uintptr_t)(LT_BLOCK_SIZE - 1));
}

static void peer_resume(struct lt_peer *p);

static void block_put(struct link_tcp *lt, struct lt_block *b)
{
	if (--b->refs > 0)
		return;
	if (b->counted && b->peer != NULL && b->peer->gen == b->gen) {
		b->peer->kept_blocks--;
		if (b->peer->paused && b->peer->kept_blocks < LT_KEPT_MAX / 2)
			peer_resume(b->peer);
	}
	if (lt != NULL && lt->ncache < LT_BLOCK_CACHE)
		lt->cache[lt->ncache++] = b;
	else
		free(b);
}

/* A message payload in b is kept by the engine (with a reference of its
 * own): count b against p's allowance. */
static void block_count(struct lt_peer *p, struct lt_block *b)
{
	if (b->counted && b->peer == p && b->gen == p->gen)
		return;
	b->counted = true;
	b->peer = p;
	b->gen = p->gen;
	p->kept_blocks++;
}

/* ---- peers: reset and failure --------------------------------------------- */

static void tx_list_fail(struct link_tcp *lt, struct lt_tx *tx, doca_error_t status)
{
	while (tx != NULL) {
		struct lt_tx *next = tx->next;

		tx_finish(lt, tx, status);
		tx = next;
	}
}

/* Drop everything of p's "out" side: queued frames and rendezvous sends
 * fail (their callbacks say so), the socket closes. */
static void peer_out_reset(struct lt_peer *p, doca_error_t status)
{
	struct link_tcp *lt = p->lt;

	sock_close(lt, &p->out);
	tx_list_fail(lt, p->q_head, status);
	tx_list_fail(lt, p->data_head, status);
	tx_list_fail(lt, p->wait_head, status);
	p->q_head = p->q_tail = NULL;
	p->data_head = p->data_tail = NULL;
	p->wait_head = NULL;
	p->connecting = false;
	p->out_polled = false;
}

/* Drop p's "in" side: the socket, the read buffer, fetches in flight
 * (they fail). */
static void peer_in_reset(struct lt_peer *p, doca_error_t status)
{
	struct link_tcp *lt = p->lt;

	sock_close(lt, &p->in);
	if (p->blk != NULL) {
		block_put(lt, p->blk);
		p->blk = NULL;
	}
	p->rpos = p->wpos = 0;
	p->fill = NULL;
	p->fill_left = 0;
	while (p->rndvs != NULL) {
		struct lt_rndv *rv = p->rndvs;

		p->rndvs = rv->next;
		rv->listed = false;
		rv->peer = NULL;
		if (rv->state == LT_RNDV_FETCHING)
			req_done(lt, &rv->req, status);
		else
			rndv_drop(rv); /* DISCARD: the engine's request ended already */
	}
	p->kept_blocks = 0;
	p->paused = false;
}

static void peer_reset(struct lt_peer *p, doca_error_t status)
{
	peer_out_reset(p, status);
	peer_in_reset(p, status);
	p->gen++;
	if (p->conn != NULL && p->conn->ep == p)
		p->conn->ep = NULL;
}

/* The peer broke the protocol, or a socket ended: the connection fails.
 * The engine closes it (link_tcp_conn_reset) from engine_link_failed. */
static void peer_fail(struct lt_peer *p, const char *why)
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

/* ---- writing ----------------------------------------------------------- */

static void out_poll(struct lt_peer *p, bool want)
{
	if (p->out.fd < 0 || p->out_polled == want)
		return;
	p->out_polled = want;
	sock_watch(p->lt, &p->out, EPOLLIN | (want ? EPOLLOUT : 0), true);
}

/* The payload list from byte skip on, into v (at most max entries). */
static int iov_from(struct iovec *v, int max, const struct engine_sge *sge, uint32_t n, size_t skip, size_t len)
{
	int k = 0;

	for (uint32_t i = 0; i < n && len > 0 && k < max; i++) {
		size_t l = sge[i].len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		l -= skip;
		if (l > len)
			l = len;
		v[k].iov_base = (uint8_t *)sge[i].addr + skip;
		v[k].iov_len = l;
		skip = 0;
		len -= l;
		k++;
	}
	return k;
}

/* The bytes of tx's frame not yet written, as iovecs; *left: how many. */
static int tx_iov(struct lt_tx *tx, struct iovec *v, int max, size_t *left)
{
	size_t off = tx->off, body;
	int k = 0;

	if (tx->state == LT_TX_DATA) {
		body = tx->frag_len;
		if (off < LT_FRAME_HDR) {
			v[k].iov_base = tx->frag_head + off;
			v[k++].iov_len = LT_FRAME_HDR - off;
			off = 0;
		} else {
			off -= LT_FRAME_HDR;
		}
		*left = (LT_FRAME_HDR + body) - tx->off;
		return k + iov_from(v + k, max - k, tx->iov, tx->niov, tx->data_sent + off, body - off);
	}
	body = tx->frame == LT_MSG ? tx->len : 0;
	*left = tx->head_len + body - off;
	if (off < tx->head_len) {
		v[k].iov_base = tx->head + off;
		v[k++].iov_len = tx->head_len - off;
		off = 0;
	} else {
		off -= tx->head_len;
	}
	if (body > off)
		k += iov_from(v + k, max - k, tx->iov, tx->niov, off, body - off);
	return k;
}

/* The next DATA frame of a cleared rendezvous send. */
static void tx_next_frag(struct lt_tx *tx)
{
	struct lt_frame f = {.type = LT_DATA, .id = tx->rndv_id};
	size_t left = tx->len - tx->data_sent;

	tx->frag_len = left < LT_FRAG ? left : LT_FRAG;
	f.len = tx->frag_len;
	lt_frame_build(tx->frag_head, &f);
	tx->off = 0;
}

/* tx's frame has gone. */
static void tx_frame_done(struct lt_peer *p, struct lt_tx *tx)
{
	struct link_tcp *lt = p->lt;

	if (tx->state == LT_TX_DATA) {
		tx->data_sent += tx->frag_len;
		tx->frag_len = 0;
		if (tx->data_sent < tx->len) {
			tx_next_frag(tx);
			return;
		}
		p->data_head = tx->next;
		if (p->data_head == NULL)
			p->data_tail = NULL;
		tx_finish(lt, tx, DOCA_SUCCESS);
		return;
	}
	p->q_head = tx->next;
	if (p->q_head == NULL)
		p->q_tail = NULL;
	if (tx->frame == LT_RTS) {
		tx->state = LT_TX_WAIT_CTS;
		tx->next = p->wait_head;
		p->wait_head = tx;
		return;
	}
	tx_finish(lt, tx, DOCA_SUCCESS);
}

/* Gather what to write: the queued frames first (several per call), then
 * one DATA frame; a frame partly written goes on first. */
static int out_gather(struct lt_peer *p, struct iovec *v, struct lt_tx **first, size_t *total)
{
	struct lt_tx *data = p->data_head;
	int k = 0;

	*total = 0;
	/* A DATA frame partly written goes on first: nothing may come
	 * between its bytes. */
	if (data != NULL && data->frag_len > 0 && data->off > 0) {
		size_t left;

		*first = data;
		k = tx_iov(data, v, LT_IOV_MAX, &left);
		*total = left;
		return k;
	}
	*first = p->q_head;
	for (struct lt_tx *tx = p->q_head; tx != NULL && k < LT_IOV_MAX - ENGINE_MAX_SGE - 1; tx = tx->next) {
		size_t left;

		k += tx_iov(tx, v + k, LT_IOV_MAX - k, &left);
		*total += left;
		if (*total >= LT_FRAG)
			break;
	}
	if (k > 0)
		return k;
	*first = p->data_head;
	if (p->data_head != NULL) {
		size_t left;

		if (p->data_head->frag_len == 0)
			tx_next_frag(p->data_head);
		k = tx_iov(p->data_head, v, LT_IOV_MAX, &left);
		*total = left;
	}
	return k;
}

/* Bytes of tx's frame not written yet. */
static size_t tx_left(const struct lt_tx *tx)
{
	if (tx->state == LT_TX_DATA)
		return LT_FRAME_HDR + tx->frag_len - tx->off;
	return tx->head_len + (tx->frame == LT_MSG ? tx->len : 0) - tx->off;
}

/* Mark n written bytes against the frames gathered from first. */
static void out_advance(struct lt_peer *p, struct lt_tx *first, size_t n)
{
	struct lt_tx *tx = first;

	while (tx != NULL && n > 0) {
		size_t left = tx_left(tx);
		struct lt_tx *next = tx->next;
		bool data = tx->state == LT_TX_DATA;

		if (n < left) {
			tx->off += n;
			return;
		}
		n -= left;
		tx->off += left;
		tx_frame_done(p, tx);
		if (data)
			return; /* one DATA frame per gather */
		tx = next;
	}
}

/* Write what the socket takes. False: the socket failed (p was failed). */
static bool out_write(struct lt_peer *p)
{
	struct iovec v[LT_IOV_MAX];

	while (p->out.fd >= 0 && !p->connecting) {
		struct msghdr mh = {0};
		struct lt_tx *first;
		size_t total;
		ssize_t n;
		int k = out_gather(p, v, &first, &total);

		if (k == 0) {
			out_poll(p, false);
			return true;
		}
		mh.msg_iov = v;
		mh.msg_iovlen = (size_t)k;
		n = sendmsg(p->out.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			out_poll(p, true);
			return true;
		}
		if (n < 0) {
			char why[96];

			snprintf(why, sizeof(why), "the connection to the peer broke (%s)", strerror(errno));
			peer_fail(p, why);
			return false;
		}
		out_advance(p, first, (size_t)n);
	}
	return true;
}

static void tx_enqueue(struct lt_peer *p, struct lt_tx *tx)
{
	tx->next = NULL;
	tx->state = LT_TX_QUEUED;
	if (p->q_tail == NULL)
		p->q_head = tx;
	else
		p->q_tail->next = tx;
	p->q_tail = tx;
}

static struct lt_tx *tx_new(uint8_t frame, const struct lt_frame *f, const void *header, size_t header_len)
{
	struct lt_tx *tx = calloc(1, sizeof(*tx));

	if (tx == NULL)
		return NULL;
	tx->req.type = LT_REQ_TX;
	tx->frame = frame;
	lt_frame_build(tx->head, f);
	if (header_len > 0)
		memcpy(tx->head + LT_FRAME_HDR, header, header_len);
	tx->head_len = (uint16_t)(LT_FRAME_HDR + header_len);
	return tx;
}

/* A control frame of the link's own (AUTH, CTS): queued, written soon. */
static bool queue_ctl(struct lt_peer *p, const struct lt_frame *f, const void *body, size_t body_len)
{
	struct lt_tx *tx = tx_new((uint8_t)f->type, f, body, body_len);

	if (tx == NULL) {
		SDK_LOG_ERR_RL("tcp link: no memory for a control frame");
		return false;
	}
	tx_enqueue(p, tx);
	return true;
}

/* Copy the payload so the caller's memory is free at once. */
static bool tx_copy_payload(struct lt_tx *tx, const struct link_send *s)
{
	uint8_t *copy;
	size_t at = 0;

	if (s->len == 0)
		return true;
	copy = malloc(s->len);
	if (copy == NULL)
		return false;
	for (uint32_t i = 0; i < s->iov_count; i++) {
		memcpy(copy + at, s->iov[i].addr, s->iov[i].len);
		at += s->iov[i].len;
	}
	tx->copy = copy;
	tx->iov[0].addr = copy;
	tx->iov[0].len = s->len;
	tx->niov = 1;
	return true;
}

/* Try the whole message in one call on an idle socket: the common case
 * costs one system call and no allocation. Returns the bytes written. */
static size_t send_direct(struct lt_peer *p, const uint8_t *fh, const struct link_send *s, bool *failed)
{
	struct iovec v[2 + ENGINE_MAX_SGE];
	struct msghdr mh = {0};
	int k = 0;
	ssize_t n;

	*failed = false;
	v[k].iov_base = (void *)fh;
	v[k++].iov_len = LT_FRAME_HDR;
	v[k].iov_base = (void *)s->header;
	v[k++].iov_len = s->header_len;
	k += iov_from(v + k, ENGINE_MAX_SGE, s->iov, s->iov_count, 0, s->len);
	mh.msg_iov = v;
	mh.msg_iovlen = (size_t)k;
	do {
		n = sendmsg(p->out.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n >= 0)
		return (size_t)n;
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		*failed = true;
	return 0;
}

static doca_error_t lt_send(struct engine_conn *c, const struct link_send *s, void **req)
{
	struct lt_peer *p = c->ep;
	bool rndv = !s->eager && s->len > LT_RNDV_THRESH;
	struct lt_frame f = {.type = rndv ? LT_RTS : LT_MSG, .am_id = s->id, .hdr_len = (uint32_t)s->header_len};
	size_t written = 0, whole = LT_FRAME_HDR + s->header_len + s->len;
	struct lt_tx *tx;
	bool failed = false;

	*req = NULL;
	if (p == NULL || p->out.fd < 0)
		return DOCA_ERROR_NOT_CONNECTED;
	if (s->header_len == 0 || s->header_len > LT_HDR_MAX || s->iov_count > ENGINE_MAX_SGE ||
	    (!rndv && s->len > LT_MSG_MAX)) {
		SDK_LOG_ERR("tcp link: message %#x of %zu+%zu bytes cannot be sent", s->id, s->header_len, s->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	f.len = s->len;
	if (rndv)
		f.id = ++p->next_rndv_id;
	if (!rndv && p->q_head == NULL && p->data_head == NULL && !p->connecting) {
		uint8_t fh[LT_FRAME_HDR];

		lt_frame_build(fh, &f);
		written = send_direct(p, fh, s, &failed);
		if (failed) {
			peer_fail(p, "the connection to the peer broke");
			return DOCA_ERROR_CONNECTION_ABORTED;
		}
		if (written == whole)
			return DOCA_SUCCESS;
	}
	tx = tx_new(f.type, &f, s->header, s->header_len);
	if (tx == NULL)
		goto no_memory;
	tx->len = s->len;
	tx->rndv_id = f.id;
	tx->req.cb = s->cb;
	tx->req.user = s->user;
	if (!rndv && s->len <= LT_COPY_MAX) {
		if (!tx_copy_payload(tx, s))
			goto no_memory;
	} else {
		memcpy(tx->iov, s->iov, sizeof(s->iov[0]) * s->iov_count);
		tx->niov = s->iov_count;
		tx->pending = true;
		*req = tx;
	}
	tx_enqueue(p, tx);
	tx->off = written;
	if (p->q_head == tx && !p->connecting)
		(void)out_write(p);
	else
		out_poll(p, true);
	return DOCA_SUCCESS;
no_memory:
	if (tx != NULL)
		tx_free(tx);
	if (written > 0) {
		/* Half a frame is in the stream: the connection cannot go on. */
		peer_fail(p, "no memory to finish a message");
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	*req = NULL;
	SDK_LOG_ERR_RL("tcp link: no memory for a message on connection %u", c->id);
	return DOCA_ERROR_NO_MEMORY;
}

/* ---- reading ----------------------------------------------------------- */

static void peer_pause(struct lt_peer *p)
{
	if (p->paused || p->in.fd < 0)
		return;
	p->paused = true;
	sock_watch(p->lt, &p->in, 0, true);
	SDK_LOG_DBG("connection %u: the engine keeps %u read buffers of the peer's messages; reading paused",
		    p->conn != NULL ? p->conn->id : 0, p->kept_blocks);
}

static void peer_resume(struct lt_peer *p)
{
	if (!p->paused)
		return;
	p->paused = false;
	if (p->in.fd >= 0)
		sock_watch(p->lt, &p->in, EPOLLIN, true);
}

static struct lt_rndv *rndv_find(struct lt_peer *p, uint64_t id)
{
	for (struct lt_rndv *rv = p->rndvs; rv != NULL; rv = rv->next)
		if (rv->id == id)
			return rv;
	return NULL;
}

static void rndv_unlist(struct lt_peer *p, struct lt_rndv *rv)
{
	for (struct lt_rndv **link = &p->rndvs; *link != NULL; link = &(*link)->next) {
		if (*link == rv) {
			*link = rv->next;
			rv->listed = false;
			return;
		}
	}
}

/* n payload bytes of the DATA being read arrived (at the fetch's
 * destination, or dropped). */
static void fill_advance(struct lt_peer *p, size_t n)
{
	struct lt_rndv *rv = p->fill;

	rv->got += n;
	p->fill_left -= n;
	if (p->fill_left == 0)
		p->fill = NULL;
	if (rv->got < rv->len)
		return;
	rndv_unlist(p, rv);
	if (rv->state == LT_RNDV_FETCHING)
		req_done(p->lt, &rv->req, DOCA_SUCCESS);
	else
		rndv_drop(rv);
}

/* Where the DATA being read goes: iovecs for up to max_len bytes. */
static int fill_iov(struct lt_peer *p, struct iovec *v, size_t max_len)
{
	struct lt_rndv *rv = p->fill;
	size_t want = p->fill_left < max_len ? (size_t)p->fill_left : max_len;

	if (rv->state == LT_RNDV_DISCARD) {
		v[0].iov_base = p->lt->scratch;
		v[0].iov_len = want < sizeof(p->lt->scratch) ? want : sizeof(p->lt->scratch);
		return 1;
	}
	return iov_from(v, ENGINE_MAX_SGE, rv->iov, rv->niov, rv->got, want);
}

/* Copy what the block already holds of the DATA being read. */
static void fill_from_block(struct lt_peer *p)
{
	while (p->fill != NULL && p->wpos > p->rpos) {
		struct iovec v[ENGINE_MAX_SGE];
		size_t avail = p->wpos - p->rpos, moved = 0;
		int k = fill_iov(p, v, avail);

		for (int i = 0; i < k; i++) {
			if (p->fill->state != LT_RNDV_DISCARD)
				memcpy(v[i].iov_base, (uint8_t *)p->blk->data + p->rpos + moved, v[i].iov_len);
			moved += v[i].iov_len;
		}
		p->rpos += moved;
		fill_advance(p, moved);
	}
}

/* DATA frames straight from the socket into their destination. Returns
 * bytes read, 0 when the socket has nothing, -1 when it ended (p failed). */
static ssize_t fill_from_socket(struct lt_peer *p, size_t budget)
{
	struct iovec v[ENGINE_MAX_SGE];
	int k = fill_iov(p, v, budget);
	ssize_t n;

	do {
		n = readv(p->in.fd, v, k);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		fill_advance(p, (size_t)n);
		return n;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	peer_fail(p, n == 0 ? "the peer closed the connection" : "the connection from the peer broke");
	return -1;
}

static bool protocol_error(struct lt_peer *p, const char *what)
{
	SDK_LOG_ERR_RL("connection %u: the peer broke the tcp link's protocol (%s): closing the connection",
		       p->conn != NULL ? p->conn->id : 0, what);
	peer_fail(p, "the peer sent a malformed or unexpected frame");
	return false;
}

/* Hand one engine message to the engine; the block holds its bytes. */
static void deliver_msg(struct lt_peer *p, const struct lt_frame *f, uint8_t *at)
{
	struct lt_block *b = p->blk;
	uint32_t gen = p->gen;
	struct link_msg m = {
		.id = f->am_id,
		.header = at + LT_FRAME_HDR,
		.header_len = f->hdr_len,
		/* (never a pointer at the block's end: an empty payload is NULL) */
		.data = f->len > 0 ? at + LT_FRAME_HDR + f->hdr_len : NULL,
		.length = (size_t)f->len,
		.link = &link_tcp_ops,
		.bound = p->conn,
	};

	b->refs++; /* the message's own, while the engine looks */
	if (engine_on_msg(p->lt->w, &m) == LINK_RX_KEPT && m.data != NULL) {
		/* The engine keeps the payload: the reference is its now. */
		if (p->gen == gen)
			block_count(p, b);
		return;
	}
	block_put(p->lt, b);
}

static bool rndv_valid(const struct lt_rndv *rv)
{
	return rv->peer != NULL && rv->peer->gen == rv->gen;
}

/* The receiver does not want an RTS's payload: say so (the send is over
 * for the sender), forget it. */
static void rndv_decline(struct lt_rndv *rv)
{
	if (rndv_valid(rv) && rv->peer->out.fd >= 0) {
		struct lt_frame cts = {.type = LT_CTS, .id = rv->id, .len = 0};

		if (queue_ctl(rv->peer, &cts, NULL, 0))
			(void)out_write(rv->peer);
	}
	rndv_free(rv);
}

static void deliver_rts(struct lt_peer *p, const struct lt_frame *f, uint8_t *at)
{
	struct lt_rndv *rv = calloc(1, sizeof(*rv));
	struct link_msg m = {
		.id = f->am_id,
		.header = at + LT_FRAME_HDR,
		.header_len = f->hdr_len,
		.data = rv,
		.length = (size_t)f->len,
		.rndv = true,
		.link = &link_tcp_ops,
		.bound = p->conn,
	};
	enum link_rx rx;

	if (rv == NULL) {
		/* The sender would wait for ever for an answer. */
		peer_fail(p, "no memory for an incoming rendezvous");
		return;
	}
	rv->req.type = LT_REQ_RNDV;
	rv->peer = p;
	rv->gen = p->gen;
	rv->id = f->id;
	rv->len = (size_t)f->len;
	rv->state = LT_RNDV_OFFERED;
	rx = engine_on_msg(p->lt->w, &m);
	if (rv->state == LT_RNDV_FETCHING)
		return; /* fetched from within the handler */
	if (rv->state == LT_RNDV_GIVEN_UP) {
		rndv_decline(rv);
		return;
	}
	if (rx == LINK_RX_KEPT) {
		rv->state = LT_RNDV_KEPT;
		return;
	}
	rndv_decline(rv);
}

/* The receiver of one of our RTS wants its payload (or not). */
static bool on_cts(struct lt_peer *p, const struct lt_frame *f)
{
	struct lt_tx **link = &p->wait_head, *tx;

	while (*link != NULL && (*link)->rndv_id != f->id)
		link = &(*link)->next;
	tx = *link;
	if (tx == NULL)
		return protocol_error(p, "clear-to-send for no rendezvous of ours");
	if (f->len != 0 && f->len != tx->len)
		return protocol_error(p, "clear-to-send for another length than offered");
	*link = tx->next;
	if (f->len == 0) {
		tx_finish(p->lt, tx, DOCA_SUCCESS);
		return true;
	}
	tx->state = LT_TX_DATA;
	tx->data_sent = 0;
	tx->frag_len = 0;
	tx->next = NULL;
	if (p->data_tail == NULL)
		p->data_head = tx;
	else
		p->data_tail->next = tx;
	p->data_tail = tx;
	return out_write(p);
}

/* A DATA frame's header: its payload follows in the stream. */
static bool on_data(struct lt_peer *p, const struct lt_frame *f)
{
	struct lt_rndv *rv = rndv_find(p, f->id);

	if (rv == NULL)
		return protocol_error(p, "data for no fetch of ours");
	if (f->len > rv->len - rv->got)
		return protocol_error(p, "more data than the rendezvous offered");
	p->fill = rv;
	p->fill_left = f->len;
	fill_from_block(p);
	return true;
}

/* One frame at the read position, whole (DATA: its header). False:
 * stop reading p (it failed or was reset). */
static bool in_frame(struct lt_peer *p, const struct lt_frame *f)
{
	uint8_t *at = (uint8_t *)p->blk->data + p->rpos;
	uint32_t gen = p->gen;

	p->rpos += lt_frame_inline_len(f);
	switch (f->type) {
	case LT_MSG:
		deliver_msg(p, f, at);
		break;
	case LT_RTS:
		deliver_rts(p, f, at);
		break;
	case LT_CTS:
		if (!on_cts(p, f))
			return false;
		break;
	case LT_DATA:
		if (!on_data(p, f))
			return false;
		break;
	default:
		return protocol_error(p, "a second authentication");
	}
	return p->gen == gen && p->in.fd >= 0;
}

/* The largest frame that travels whole, with its header. */
#define LT_MAX_INLINE (LT_FRAME_HDR + LT_HDR_MAX + LT_MSG_MAX)

/* Room to read a whole frame from the read position on: a fresh block
 * (or this one, when nothing in it is kept) takes what is left. */
static bool in_make_room(struct lt_peer *p)
{
	size_t partial = p->wpos - p->rpos;
	struct lt_block *nb;

	if (p->blk == NULL) {
		p->blk = block_get(p->lt);
		p->rpos = p->wpos = 0;
		return p->blk != NULL;
	}
	if (partial == 0 && p->blk->refs == 1)
		p->rpos = p->wpos = 0;
	if (LT_BLOCK_DATA - p->rpos >= LT_MAX_INLINE)
		return true;
	if (p->blk->refs == 1) {
		memmove(p->blk->data, (uint8_t *)p->blk->data + p->rpos, partial);
	} else {
		nb = block_get(p->lt);
		if (nb == NULL)
			return false;
		memcpy(nb->data, (uint8_t *)p->blk->data + p->rpos, partial);
		block_put(p->lt, p->blk);
		p->blk = nb;
	}
	p->rpos = 0;
	p->wpos = partial;
	return true;
}

/* Read more into the block. Bytes read, 0: nothing now, -1: p failed. */
static ssize_t in_recv(struct lt_peer *p)
{
	ssize_t n;

	if (!in_make_room(p)) {
		peer_fail(p, "no memory for a read buffer");
		return -1;
	}
	do {
		n = recv(p->in.fd, (uint8_t *)p->blk->data + p->wpos, LT_BLOCK_DATA - p->wpos, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		p->wpos += (size_t)n;
		return n;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		/* Idle: an empty block nobody keeps goes back to the cache. */
		if (p->rpos == p->wpos && p->blk->refs == 1) {
			block_put(p->lt, p->blk);
			p->blk = NULL;
		}
		return 0;
	}
	if (p->conn != NULL && p->conn->ep == NULL && n == 0) {
		/* We never connected back: nothing of ours is lost. The
		 * peer's end is gone; a later connect finds out. */
		SDK_LOG_DBG("connection %u: the peer closed its link before this side connected", p->conn->id);
		peer_in_reset(p, DOCA_ERROR_CONNECTION_ABORTED);
		return -1;
	}
	peer_fail(p, n == 0 ? "the peer closed the connection" : "the connection from the peer broke");
	return -1;
}

/* Read and handle what p's socket has, within the read budget. */
static unsigned int in_read(struct lt_peer *p)
{
	size_t budget = LT_READ_BUDGET;
	unsigned int frames = 0;
	uint32_t gen = p->gen;

	while (p->in.fd >= 0 && p->gen == gen && budget > 0) {
		struct lt_frame f;
		ssize_t n;

		if (p->fill != NULL) {
			fill_from_block(p);
			if (p->fill != NULL) {
				n = fill_from_socket(p, budget);
				if (n <= 0)
					return frames;
				budget -= (size_t)n < budget ? (size_t)n : budget;
				continue;
			}
		}
		if (p->paused || (p->kept_blocks >= LT_KEPT_MAX && (peer_pause(p), true)))
			return frames;
		if (p->blk != NULL && p->wpos - p->rpos >= LT_FRAME_HDR) {
			if (lt_frame_parse((uint8_t *)p->blk->data + p->rpos, &f) != DOCA_SUCCESS) {
				protocol_error(p, "a malformed frame header");
				return frames;
			}
			if (f.type == LT_AUTH) {
				protocol_error(p, "a second authentication");
				return frames;
			}
			if (p->wpos - p->rpos >= lt_frame_inline_len(&f)) {
				frames++;
				if (!in_frame(p, &f))
					return frames;
				continue;
			}
		}
		n = in_recv(p);
		if (n <= 0)
			return frames;
		budget -= (size_t)n < budget ? (size_t)n : budget;
	}
	return frames;
}

/* ---- sockets before their AUTH ------------------------------------------- */

static void listen_pause(struct link_tcp *lt, bool pause)
{
	if (lt->listen_paused == pause || lt->listen.fd < 0)
		return;
	lt->listen_paused = pause;
	sock_watch(lt, &lt->listen, pause ? 0 : EPOLLIN, true);
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

/* The whole AUTH is in: the socket becomes the "in" side of the
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
	if (p->in.fd >= 0) {
		pre_refuse(lt, e, "its connection has a peer already");
		return;
	}
	sock_adopt(lt, &p->in, e->sock.fd);
	lt->nsocks--; /* counted once: the socket moved */
	pre_release(lt, e, false);
	p->paused = false;
	sock_watch(lt, &p->in, EPOLLIN, true);
	SDK_LOG_TRC("connection %u: the peer's tcp link authenticated", c->id);
	/* Frames may have come with the AUTH. */
	(void)in_read(p);
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
	sock_adopt(lt, &e->sock, fd);
	e->got = 0;
	e->seq = ++lt->pre_seq;
	e->deadline_ns = engine_now_ns() + LT_PRE_TIMEOUT_NS;
	e->sa = *sa;
	atomic_fetch_add_explicit(&lt->npre, 1, memory_order_relaxed);
	sock_watch(lt, &e->sock, EPOLLIN, false);
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

static void out_event(struct lt_peer *p, uint32_t events)
{
	if (p->connecting && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(p->out.fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err != 0) {
			char why[128];

			snprintf(why, sizeof(why), "cannot reach the peer's tcp link (%s)", strerror(err));
			peer_fail(p, why);
			return;
		}
		p->connecting = false;
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		uint8_t byte;
		ssize_t n = recv(p->out.fd, &byte, 1, MSG_DONTWAIT);

		if (n > 0) {
			protocol_error(p, "bytes on a connection the peer only reads");
			return;
		}
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
			peer_fail(p, "the peer closed the connection (it exited, closed it, or refused this side's "
				     "authentication)");
			return;
		}
	}
	if (!p->connecting)
		(void)out_write(p);
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

static doca_error_t lt_ep_open(struct engine_conn *c, const uint8_t *addr, size_t addr_len)
{
	struct link_tcp *lt = c->worker->tcp;
	struct lt_auth auth = {.conn_id = c->peer_id};
	struct lt_frame f = {.type = LT_AUTH, .hdr_len = LT_AUTH_LEN};
	uint8_t body[LT_AUTH_LEN];
	struct sockaddr_storage sa;
	struct lt_peer *p;
	struct lt_addr a;
	socklen_t sa_len;
	char text[80];
	int one = 1, fd, rc;

	if (lt == NULL)
		return DOCA_ERROR_NOT_SUPPORTED;
	if (lt_addr_parse(addr, addr_len, &a) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	p = &lt->peers[c->id - 1];
	if (p->out.fd >= 0) {
		SDK_LOG_ERR("connection %u already has a tcp endpoint", c->id);
		return DOCA_ERROR_BAD_STATE;
	}
	addr_to_sockaddr(lt, &a, &sa, &sa_len);
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
	sock_adopt(lt, &p->out, fd);
	p->conn = c;
	p->connecting = rc != 0;
	p->out_polled = true;
	sock_watch(lt, &p->out, EPOLLIN | EPOLLOUT, false);
	memcpy(auth.secret, c->peer_secret, ENGINE_SECRET_LEN);
	lt_auth_build(body, &auth);
	if (!queue_ctl(p, &f, body, sizeof(body))) {
		peer_out_reset(p, DOCA_ERROR_NO_MEMORY);
		return DOCA_ERROR_NO_MEMORY;
	}
	c->ep = p;
	if (!p->connecting)
		(void)out_write(p);
	return c->ep != NULL ? DOCA_SUCCESS : DOCA_ERROR_CONNECTION_ABORTED;
}

static bool out_busy(const struct lt_peer *p)
{
	return p->out.fd >= 0 && (p->connecting || p->q_head != NULL || p->data_head != NULL || p->wait_head != NULL);
}

static void lt_ep_flush(struct engine_conn *c, uint64_t deadline_ns)
{
	struct lt_peer *p = c->ep;

	while (p != NULL && c->ep == p && out_busy(p) && engine_now_ns() < deadline_ns) {
		struct epoll_event ev;

		link_tcp_progress(c->worker->tcp);
		if (c->ep != p || !out_busy(p))
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

/* ---- fetching a rendezvous payload ---------------------------------------- */

/* A fetch that cannot start: the descriptor is declined now, or, while
 * its handler runs (deliver_rts looks at it after), then. */
static void rndv_give_up(struct lt_rndv *rv)
{
	if (rv->state == LT_RNDV_OFFERED)
		rv->state = LT_RNDV_GIVEN_UP;
	else
		rndv_decline(rv);
}

static doca_error_t lt_recv_data(struct engine_worker *w, void *data, const struct engine_sge *iov,
				 uint32_t iov_count, size_t len, link_cb cb, void *user, void **req)
{
	struct lt_rndv *rv = data;
	struct lt_frame cts = {.type = LT_CTS};
	struct lt_peer *p;

	(void)w;
	*req = NULL;
	if (rv->state != LT_RNDV_OFFERED && rv->state != LT_RNDV_KEPT)
		return DOCA_ERROR_BAD_STATE;
	if (!rndv_valid(rv) || rv->peer->out.fd < 0) {
		rndv_give_up(rv);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (len != rv->len || iov_count > ENGINE_MAX_SGE) {
		SDK_LOG_ERR_RL("tcp link: fetching %zu bytes of a %zu-byte payload", len, rv->len);
		rndv_give_up(rv);
		return DOCA_ERROR_INVALID_VALUE;
	}
	p = rv->peer;
	cts.id = rv->id;
	cts.len = rv->len;
	if (!queue_ctl(p, &cts, NULL, 0)) {
		rndv_give_up(rv);
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(rv->iov, iov, sizeof(iov[0]) * iov_count);
	rv->niov = iov_count;
	rv->req.cb = cb;
	rv->req.user = user;
	rv->state = LT_RNDV_FETCHING;
	rv->next = p->rndvs;
	p->rndvs = rv;
	rv->listed = true;
	*req = rv;
	(void)out_write(p); /* may fail p: the fetch then completes with an error */
	return DOCA_SUCCESS;
}

static void lt_data_release(struct engine_worker *w, void *data, bool rndv)
{
	struct link_tcp *lt = w->tcp;

	if (data == NULL)
		return;
	if (!rndv) {
		block_put(lt, block_of(data));
		return;
	}
	if (((struct lt_rndv *)data)->listed)
		return; /* being fetched: it ends with its fetch */
	rndv_decline(data);
}

static void lt_cancel(struct engine_worker *w, void *req)
{
	struct lt_req *r = req;
	struct lt_rndv *rv;

	(void)w;
	/* A send cannot be taken back from the stream; it ends with its
	 * connection. A fetch stops: the rest of its data is dropped. */
	if (r == NULL || r->type != LT_REQ_RNDV)
		return;
	rv = (struct lt_rndv *)r;
	if (rv->state != LT_RNDV_FETCHING || !rv->listed)
		return;
	rv->state = LT_RNDV_DISCARD;
	req_done(w->tcp, &rv->req, DOCA_ERROR_CONNECTION_ABORTED);
}

/* ---- the worker's link ------------------------------------------------- */

unsigned int link_tcp_progress(struct link_tcp *lt)
{
	struct epoll_event ev[32];
	unsigned int n = run_done(lt);
	int k;

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
		case LT_SOCK_IN:
			if (!((struct lt_peer *)s->owner)->paused)
				n += in_read(s->owner);
			else if (ev[i].events & (EPOLLHUP | EPOLLERR))
				peer_fail(s->owner, "the connection from the peer broke");
			break;
		case LT_SOCK_OUT:
			out_event(s->owner, ev[i].events);
			break;
		default:
			break;
		}
	}
	n += run_done(lt);
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
		p->in = (struct lt_sock){.kind = LT_SOCK_IN, .fd = -1, .owner = p};
		p->out = (struct lt_sock){.kind = LT_SOCK_OUT, .fd = -1, .owner = p};
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
	sock_watch(lt, &lt->listen, EPOLLIN, false);
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

static void tx_list_free(struct lt_tx *tx)
{
	while (tx != NULL) {
		struct lt_tx *next = tx->next;

		tx_free(tx);
		tx = next;
	}
}

void link_tcp_close(struct engine_worker *w)
{
	struct link_tcp *lt = w->tcp;

	if (lt == NULL)
		return;
	for (uint32_t i = 0; i < lt->npeers; i++) {
		struct lt_peer *p = &lt->peers[i];

		sock_close(lt, &p->out);
		sock_close(lt, &p->in);
		tx_list_free(p->q_head);
		tx_list_free(p->data_head);
		tx_list_free(p->wait_head);
		while (p->rndvs != NULL) {
			struct lt_rndv *rv = p->rndvs;

			p->rndvs = rv->next;
			if (rv->req.done_queued && !rv->cb_ran)
				rv->listed = false; /* freed with the done list */
			else
				rndv_free(rv);
		}
		if (p->blk != NULL)
			block_put(NULL, p->blk);
	}
	for (int i = 0; i < LT_MAX_PRE; i++)
		sock_close(lt, &lt->pre[i].sock);
	sock_close(lt, &lt->listen);
	while (lt->done_head != NULL) {
		struct lt_req *r = lt->done_head;

		lt->done_head = r->done_next;
		if (r->type == LT_REQ_TX)
			tx_free((struct lt_tx *)r);
		else
			rndv_free((struct lt_rndv *)r);
	}
	for (uint32_t i = 0; i < lt->ncache; i++)
		free(lt->cache[i]);
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
