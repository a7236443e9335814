/*
 * softdoca — the TCP link's insides, shared by its two files: link_tcp.c
 * (sockets: the listener, authentication, endpoints, the progress loop)
 * and link_tcp_stream.c (what moves on a peer's socket: frames written
 * and read, rendezvous fetches, read buffers). Not seen elsewhere.
 */
#ifndef SOFTDOCA_ENGINE_LINK_TCP_INT_H_
#define SOFTDOCA_ENGINE_LINK_TCP_INT_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "engine_internal.h"
#include "link.h"
#include "link_tcp.h"
#include "link_tcp_wire.h"

/* Read buffers: aligned to their size, so a payload pointer finds its
 * block. A block holds the largest frame that travels whole. */
#define LT_BLOCK_SIZE (256u * 1024u)
#define LT_BLOCK_CACHE 8
/* Blocks a peer's kept messages may pin before its socket is paused. */
#define LT_KEPT_MAX 32u
/* Memory our frames to a peer may hold (queued, not written: the peer
 * does not read) before its socket is not read either, so it cannot have
 * us answer more; a peer that reads drains it. */
#define LT_OUT_MAX (32u << 20)
/* Why a peer's socket is not read. */
#define LT_PAUSE_KEPT 0x1 /* the engine keeps LT_KEPT_MAX blocks of its messages */
#define LT_PAUSE_OUT 0x2  /* our frames to it hold LT_OUT_MAX */
/* ... and no peer can make it hold more: 4096 messages waiting (the
 * target's queue bound) of at most LT_RNDV_THRESH bytes fill 512 blocks. */
#define LT_KEPT_HARD 640u
/* Accepted sockets not yet authenticated, and how long they may take. */
#define LT_MAX_PRE 128
#define LT_PRE_TIMEOUT_NS (2ULL * 1000000000ULL)
/* With the table full, the oldest entry makes room for a newcomer only
 * once it has waited this long; until then newcomers wait in the
 * kernel's backlog (a burst of honest peers, whose AUTH follows at once,
 * is never cut; one that never speaks is). */
#define LT_PRE_GRACE_NS (200ULL * 1000000ULL)
/* Bytes one read into a block asks for. */
#define LT_RECV_CHUNK (16u * 1024u)
/* Bytes read from one socket in one progress call. */
#define LT_READ_BUDGET (4u << 20)
/* A payload of at most this is copied when the socket cannot take it at
 * once (the send is then over for the caller); larger ones are sent
 * from the caller's memory and complete later. */
#define LT_COPY_MAX (16u * 1024u)
/* A payload larger than this, in a send not marked eager, goes by
 * rendezvous (the receiver fetches it into its checked destination). */
#define LT_RNDV_THRESH (32u * 1024u)
/* Payload bytes per DATA frame: between two, other frames may pass. */
#define LT_FRAG (1u << 20)
/* iovecs of one sendmsg. */
#define LT_IOV_MAX 64

_Static_assert(LT_FRAME_HDR + LT_HDR_MAX + LT_MSG_MAX < LT_BLOCK_SIZE / 2, "a whole frame fits in a block");
_Static_assert(LT_FRAG <= LT_DATA_MAX, "DATA frames stay within what a receiver accepts");

enum lt_sock_kind {
	LT_SOCK_LISTEN = 1,
	LT_SOCK_PRE,
	LT_SOCK_OWN, /* a peer's socket we opened */
	LT_SOCK_ACC, /* a peer's socket we accepted (and it authenticated) */
};

/* What the link's epoll set points to. */
struct lt_sock {
	uint8_t kind;
	int fd;
	void *owner; /* LISTEN: the link; PRE: its entry; OWN, ACC: the peer */
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
	struct lt_peer *peer;         /* whose out_bytes it counts in (while gen matches) */
	uint32_t gen;
	size_t cost;                  /* what it holds: itself and its copy */
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

/* Which socket a side writes on: the one it opened, if it opened one,
 * else the one its peer opened (see link_tcp.c); fixed once chosen, so
 * its messages stay in one stream. */
enum lt_write_on {
	LT_WRITE_NONE = 0, /* no endpoint, or waiting for the peer's socket (frames queue) */
	LT_WRITE_OWN,
	LT_WRITE_ACC,
};

/* One connection slot's sockets and what moves on them. */
struct lt_peer {
	struct link_tcp *lt;
	struct engine_conn *conn;
	uint32_t gen;                /* bumped by every reset */
	uint32_t expect_id;          /* AUTH must name this connection ... */
	uint8_t secret[ENGINE_SECRET_LEN]; /* ... with this secret (0: nothing exported) */
	struct lt_sock own;          /* the socket we opened (connecting until it connects) */
	struct lt_sock acc;          /* the socket the peer opened */
	bool connecting;             /* own: connect() not done */
	bool own_authed;             /* own: the peer's AUTH came back on it */
	bool ep_open;                /* our endpoint exists (frames may be queued) */
	uint8_t write_on;            /* enum lt_write_on */
	bool polled_out;             /* EPOLLOUT asked for on the socket we write */
	/* Writing. */
	struct lt_tx *q_head, *q_tail;       /* frames, in order */
	struct lt_tx *data_head, *data_tail; /* rendezvous sends cleared to send */
	struct lt_tx *wait_head;             /* rendezvous sends waiting for CTS */
	uint64_t next_rndv_id;
	/* Reading (from the socket the peer writes on: lt_rsock). */
	struct lt_block *blk;
	size_t rpos, wpos;
	struct lt_rndv *fill;        /* a DATA frame's payload goes here ... */
	uint64_t fill_left;          /* ... this many bytes more */
	struct lt_rndv *rndvs;       /* fetching or discarding */
	uint32_t kept_blocks;
	uint8_t paused;              /* LT_PAUSE_* bits: not read for these reasons */
	size_t out_bytes;            /* memory held by our frames on their way to it (lt_tx and copies) */
	bool hdr_next;               /* a DATA payload just ended: read the next header alone */
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
	uint64_t idle_look_ns;       /* no socket but the listener: next look at it */
	uint8_t scratch[4096];       /* DATA of a cancelled fetch lands here */
};


/* The socket a peer's side writes on (NULL: none yet), and the one the
 * peer writes on, which we read: the one it opened if there is one (it
 * writes there), else ours. */
static inline struct lt_sock *lt_wsock(struct lt_peer *p)
{
	if (p->write_on == LT_WRITE_OWN)
		return &p->own;
	return p->write_on == LT_WRITE_ACC ? &p->acc : NULL;
}

static inline struct lt_sock *lt_rsock(struct lt_peer *p)
{
	return p->acc.fd >= 0 ? &p->acc : &p->own;
}

/* link_tcp.c */
void lt_sock_watch(struct link_tcp *lt, struct lt_sock *s, uint32_t events, bool modify);
/* The peer broke the protocol, or its socket ended: the connection fails
 * (engine_link_failed) and the slot is reset. */
void lt_peer_fail(struct lt_peer *p, const char *why);

/* link_tcp_stream.c */
void lt_req_done(struct link_tcp *lt, struct lt_req *r, doca_error_t status);
unsigned int lt_run_done(struct link_tcp *lt);
/* Queue a frame of the link's own (AUTH, CTS); false: no memory. */
bool lt_queue_ctl(struct lt_peer *p, const struct lt_frame *f, const void *body, size_t body_len);
/* Write what the socket takes; false when it failed (p was failed). */
bool lt_out_write(struct lt_peer *p);
/* Whether frames wait to be written (or fetches to be served). */
bool lt_out_busy(const struct lt_peer *p);
/* Read and handle what the peer's socket has. */
unsigned int lt_in_read(struct lt_peer *p);
/* Drop p's frames and fetches (they fail with status) and read state. */
void lt_stream_reset(struct lt_peer *p, doca_error_t status);
/* The worker goes: free what p holds, no callback. */
void lt_stream_free(struct lt_peer *p);
void lt_cache_free(struct link_tcp *lt);

doca_error_t lt_send(struct engine_conn *c, const struct link_send *s, void **req);
doca_error_t lt_recv_data(struct engine_worker *w, void *data, const struct engine_sge *iov, uint32_t iov_count,
			  size_t len, link_cb cb, void *user, void **req);
void lt_data_release(struct engine_worker *w, void *data, bool rndv);
void lt_cancel(struct engine_worker *w, void *req);

#endif /* SOFTDOCA_ENGINE_LINK_TCP_INT_H_ */
