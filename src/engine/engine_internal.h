/*
 * softdoca — engine internals shared by the engine's files (not installed,
 * not seen by the RDMA layer): the structs of a UCX context, a worker, a
 * connection, a target operation and an RDMA CM listener, the data-path
 * helpers that hand sge lists to UCX, and each file's functions the
 * others call (grouped by the file that defines them). What the engine
 * uses of DOCA Core is all in core_engine.h.
 */
#ifndef SOFTDOCA_ENGINE_INTERNAL_H_
#define SOFTDOCA_ENGINE_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <ucp/api/ucp.h>

#include "engine.h"
#include "link.h"
#include "wire.h"

struct doca_dev;

/* One UCX context per open device, shared by the workers on it. */
struct engine_ucx {
	struct doca_dev *dev;
	ucp_context_h context;
	uint32_t version;               /* UCX_ADDR_UCX_VERSION of the library in use */
	unsigned int refs;
	struct engine_ucx *next;
};

/* What the service thread's epoll watches. */
enum svc_kind {
	SVC_KICK = 1,   /* wake-up to recompute the sleep */
	SVC_WORKER,     /* a worker's event fd: its UCX worker's, or its TCP link's epoll */
	SVC_PEER,       /* a pidfd: the peer process on this host */
	SVC_CM_LISTEN,  /* an RDMA CM listening socket */
	SVC_CM_SOCK,    /* an RDMA CM connection socket */
};

struct svc_source {
	enum svc_kind kind;
	int fd;
	/* Bumped whenever fd changes (a new socket, or none): an event the
	 * service thread collected for the old one is told apart (a
	 * connection slot's socket may close and a new one take its place
	 * while the thread works through a batch of events). */
	uint16_t gen;
	struct engine_worker *worker;
	struct engine_conn *conn;
	struct engine_listener *listener;
};

/* An initiator-side slot: one per operation in flight on a connection,
 * found again from the answer's connection (id and secret) and wr_id (the
 * operation's sequence number), never from a pointer. */
struct engine_slot {
	struct engine_wr *wr;
	uint64_t seq;
	struct engine_worker *worker;       /* so a send callback can find its way back */
};

/* A connection's send queue: a ring of conf.send_queue_size slots.
 * Operations take sequence numbers head, head + 1, ... and complete in
 * that order (tail is the oldest not completed), as an RC QP's do; an
 * acknowledgement of sequence s completes every operation up to s that
 * waits for nothing but the target's word. */
struct engine_sq {
	struct engine_slot *slots;          /* made on first use of the connection index */
	uint64_t head;                      /* next sequence number */
	uint64_t tail;                      /* oldest operation not completed */
	uint64_t acked;                     /* operations before this are acknowledged */
};

static inline uint32_t engine_sq_busy(const struct engine_sq *sq)
{
	return (uint32_t)(sq->head - sq->tail);
}

enum engine_conn_state {
	CONN_FREE = 0,
	CONN_CM_REQUESTED, /* a client knocked on a listener; accept or reject */
	CONN_EXPORTED,    /* descriptor handed out, not connected */
	CONN_CONNECTED,   /* connected locally (has an endpoint) */
	CONN_CLOSED,      /* disconnected or failed: nothing more moves */
};

/* Requests held back by ENGINE_POST_DEFER for one peer, sent together as
 * one WIRE_AM_BATCH (initiator.c); a buffer of the worker's pool, which
 * stays until UCX has sent it. Its entries are consecutive sequence
 * numbers of the connection's send queue. */
#define ENGINE_BATCH_BYTES 32768
#define ENGINE_BATCH_ENTRY_MAX 4096 /* larger payloads travel alone */

struct engine_batch {
	struct engine_batch *next;          /* the pool's free list */
	struct engine_batch *all_next;      /* every buffer the pool made */
	struct engine_conn *conn;
	uint64_t first_seq;
	uint32_t count;
	size_t len;                         /* bytes of data used */
	struct wire_batch hdr;
	uint64_t data[ENGINE_BATCH_BYTES / 8];
};

/* A free list of same-sized target objects (target.c). */
struct engine_pool {
	void *free;
};

/* Bounce buffers of rendezvous writes into and reads of PCI-imported
 * memory (target.c): kept for reuse; an operation waits while the bytes
 * in use would pass the budget (one larger than it runs alone). */
struct engine_bounce;
struct engine_bounce_pool {
	struct engine_bounce *free; /* kept for reuse, any size */
	size_t held;                /* bytes of every buffer, free or in use */
	size_t used;                /* bytes of those in use */
	bool waiting;               /* an operation waits for room */
	bool returned;              /* a buffer came back since (bounce_kick) */
	bool kicking;               /* bounce_kick is running its connections */
};

/* Target objects (target.c). */
struct tgt_op;
struct tgt_resp;
struct rndv_ctx;
struct tgt_batch;

struct engine_conn {
	struct engine_worker *worker;
	uint32_t id;                        /* index + 1 */
	enum engine_conn_state state;
	bool peer_hello;                    /* the peer connected to us (its HELLO arrived) */
	bool established_reported;
	bool flushed;                       /* our endpoint's flush completed */
	/* The descriptor connected to names a process on this host that has
	 * exited: only a claim, it explains a failure (disagree.c). */
	bool peer_claims_exited;
	uint32_t peer_pid;
	uint8_t secret[ENGINE_SECRET_LEN];  /* ours: peers must present it */
	uint32_t peer_id;
	uint8_t peer_secret[ENGINE_SECRET_LEN];
	/* Our endpoint to the peer on link (after connect; the DC passive
	 * side makes one from the peer's HELLO): a UCX endpoint, or the TCP
	 * link's slot. */
	const struct link_ops *link;
	void *ep;
	/* Liveness (keepalive.c): anything valid from the peer sets heard;
	 * the periodic sweep turns it into last_heard_ns, pings a quiet
	 * peer and fails one that stays quiet past the timeout. */
	bool heard;
	uint64_t last_heard_ns;
	uint64_t connected_ns;              /* when ep was made */
	uint64_t suspect_ns;                /* the peer's process seems gone: confirm by then (0 = no) */
	/* RDMA CM: a TCP socket carries the descriptor exchange (and, while
	 * open, tells us when the peer goes away); data uses ep as usual.
	 * The socket itself is cm_src, below. */
	struct engine_listener *listener;   /* server side: the port it came in on */
	uint64_t cm_deadline_ns;            /* not established by then: failed (0 = none) */
	bool cm_server;
	bool cm_accepted;                   /* server: the application accepted */
	bool cm_connecting;                 /* client: the TCP connect is in progress */
	uint8_t *cm_rx;                     /* a frame being read */
	size_t cm_rx_len;
	uint8_t *cm_tx;                     /* a frame being written */
	size_t cm_tx_len;
	size_t cm_tx_off;
	struct sockaddr_storage peer_sa;    /* the peer's address, when known */
	socklen_t peer_sa_len;
	uint8_t priv[255];                  /* accept's private data, sent with the server's answer */
	uint8_t priv_len;
	void *user;
	uint8_t *desc;                      /* our exported descriptor */
	size_t desc_len;
	struct tgt_op *tq_head;             /* target-side operations in arrival order */
	struct tgt_op *tq_tail;
	uint32_t tq_len;
	/* Target: operations retired in order whose success the peer has
	 * not been told yet; one acknowledgement (WIRE_AM_ACK) naming the
	 * last of them is sent after the progress round (engine_acks_flush). */
	bool ack_pending;
	bool ack_queued;                    /* on the worker's ack_list */
	uint32_t ack_count;                 /* retired since the last acknowledgement */
	uint64_t ack_wr_id;
	struct engine_conn *ack_next;
	/* Initiator: requests held back (ENGINE_POST_DEFER), not yet sent. */
	struct engine_batch *batch;
	/* Kept across reuse of the slot (ENGINE_CONN_RESET_SIZE stops short
	 * of them): the service thread may still hold an epoll event naming
	 * one from the slot's last use and reads its kind, worker and conn
	 * without the worker lock, so those are set once, at worker
	 * creation; only fd changes, under the worker lock. */
	struct svc_source peer_watch;       /* pidfd of a peer on this host, fd -1 if none */
	struct svc_source cm_src;           /* the RDMA CM socket; fd -1 if none */
	/* This connection's send queue (a QP's own send queue), also kept
	 * across reuse: a late UCX callback naming a slot never sees freed
	 * memory, and sequence numbers never repeat. */
	struct engine_sq sq;
	/* On the worker's batch_list (kept across reuse, like sq: the list
	 * may still name the slot; flush_posts skips it then). */
	bool batch_listed;
	struct engine_conn *batch_next;
};

/* What a reused connection slot clears: everything before the watch
 * sources. */
#define ENGINE_CONN_RESET_SIZE offsetof(struct engine_conn, peer_watch)

/* The oldest UCX API the engine is written against: what it tells
 * ucp_init_version, and the floor of the package's libucx0 Depends. */
#define ENGINE_UCP_API_MAJOR 1
#define ENGINE_UCP_API_MINOR 12

/* A stream of requests that does not pause gets an acknowledgement at
 * least every this many operations. */
#define ENGINE_ACK_BATCH 8
/* UCX progress calls in one go under the worker lock (acknowledgements
 * owed are sent after them). */
#define ENGINE_PROGRESS_ROUNDS 64

/* Ports an RDMA CM server listens on at once. */
#define ENGINE_MAX_LISTENERS 8

/* Sockets per listening port, over all of its addresses, whose request has
 * not arrived yet (once what they sent is read, the oldest is dropped to
 * make room for a new one). */
#define ENGINE_CM_MAX_PRE 16

/* A socket accepted on a listener, before its request (REQ) arrived: it
 * holds no connection slot, only this entry, for a short time. Its events
 * serve the listener (src.kind SVC_CM_LISTEN, src.listener set). */
struct engine_cm_pre {
	struct svc_source src;              /* fd -1 when the entry is free */
	uint64_t deadline_ns;               /* no whole request by then: closed */
	uint64_t seq;                       /* accept order: the oldest goes first */
	uint8_t *rx;                        /* the request being read */
	size_t rx_len;
	struct sockaddr_storage sa;
	socklen_t sa_len;
};

/* One listening port: a TCP socket on each address of the device (its
 * GIDs), as RDMA CM binds the device's addresses, and one table of the
 * sockets they accepted. */
struct engine_listener {
	struct engine_worker *worker;
	struct svc_source *socks;           /* nsocks listening sockets (kind SVC_CM_LISTEN) */
	uint32_t nsocks;
	uint16_t port;
	bool active;
	struct engine_cm_pre pre[ENGINE_CM_MAX_PRE];
	uint32_t npre;
	uint64_t pre_seq;
};


struct link_tcp;

struct engine_worker {
	/* The links (link.h): UCX for peers on this host, when UCX_TLS lets
	 * it use shared memory (ucx NULL: none), and softdoca's TCP link
	 * (tcp NULL: none). */
	struct engine_ucx *ucx;
	struct link_tcp *tcp;
	struct doca_dev *dev;               /* the device: its addresses are the RDMA CM listener's */
	ucp_worker_h ucp;
	ucp_address_t *own_addr;            /* our worker address: the template peers' are checked against */
	size_t own_addr_len;
	int efd;
	pthread_mutex_t lock;               /* serialises the app thread and the service thread */
	struct engine_worker_conf conf;
	uint32_t run;                       /* serial of this worker in the process (disagree.c); 0 if none */

	struct engine_conn *conns;
	uint32_t num_conns;                 /* exported so far */

	struct engine_wr *recv_head;        /* posted receives, oldest first */
	struct engine_wr *recv_tail;
	uint32_t outstanding;               /* posted, done() not yet called */
	bool stopping;                      /* the context is stopping: a peer leaving is expected */
	/* Counters the service thread reads without the lock to pick its
	 * sleep (written under the lock). */
	atomic_uint parked;                 /* target ops waiting with a deadline */
	atomic_uint suspects;               /* connections whose peer may be gone (fast checks) */
	atomic_uint monitored;              /* connections with an endpoint (keepalive) */
	uint64_t keepalive_next_ns;         /* next keepalive sweep */
	/* The op whose active message callback is running: its payload is
	 * UCX's to release if it finishes before the callback returns. */
	struct tgt_op *handler_op;
	bool handler_released;
	bool handler_kept;                  /* ... and the op kept it (queued) */
	struct rndv_ctx *rndv_list;         /* rendezvous receives in flight */
	struct tgt_resp *resp_list;         /* answers holding a region (reads) in flight */
	/* Target objects come from these pools (target.c): the data path
	 * does not allocate once they have grown to the load. */
	struct engine_pool op_pool;
	struct engine_pool resp_pool;
	struct engine_pool tbatch_pool;
	struct engine_pool_chunk *chunks;
	struct engine_bounce_pool bounce;
	struct engine_conn *ack_list;       /* connections with an acknowledgement to send */
	struct engine_conn *batch_list;     /* connections with an open batch */
	atomic_uint batches_open;           /* their number: flush_posts looks without the lock */
	struct engine_batch *batch_free;
	struct engine_batch *batch_all;

	struct engine_listener listeners[ENGINE_MAX_LISTENERS];
	atomic_uint cm_pending;             /* connections and pre-request sockets with a CM deadline */

	bool svc_registered;
	struct svc_source svc_src;          /* the UCX worker's event fd */
	struct svc_source svc_tcp_src;      /* the TCP link's epoll */
	/* Bumped by each progress of the application's thread; the service
	 * thread leaves the worker alone while it moves (no lock ping-pong,
	 * no wake-up per message while the application is progressing). */
	atomic_uint app_ticks;
	unsigned int svc_seen_ticks;
	/* The service thread's polling of this worker (engine.c, its thread
	 * only): while traffic flows it polls for up to svc_spin_ns after
	 * the last event before arming and sleeping, as a wake-up costs more
	 * than most gaps between messages; the window adapts to how soon
	 * traffic came back after each sleep. */
	uint64_t svc_spin_ns;
	uint64_t svc_busy_ns;               /* when it last served traffic */
	uint64_t svc_asleep_ns;             /* armed and asleep since (0 = not asleep) */
	uint64_t svc_rest_ns;               /* no polling until then (it caught nothing, or the CPUs were oversubscribed) */
	unsigned int svc_misses;            /* polls in a row that ended with nothing caught */
	bool svc_hot;                       /* being polled: not armed */
	bool svc_spun;                      /* polled in this round */
	bool svc_done;                      /* armed, or left to the application, in this round */
	struct engine_worker *svc_next;
};

/* Copy len bytes from src into the list dst (cut at its end). */
static inline void engine_sge_scatter(const struct engine_sge *dst, uint32_t n, const void *src, size_t len)
{
	const uint8_t *p = src;

	for (uint32_t i = 0; i < n && len > 0; i++) {
		size_t take = dst[i].len < len ? dst[i].len : len;

		memcpy(dst[i].addr, p, take);
		p += take;
		len -= take;
	}
}

/* engine.c */
uint64_t engine_now_ns(void);
uint64_t engine_coarse_ns(void); /* the same clock, cheaper, a tick (ms) behind at most */
void engine_svc_kick(void);
void engine_svc_watch(struct svc_source *src);
void engine_svc_watch_events(struct svc_source *src, uint32_t events, bool modify);
void engine_svc_unwatch(struct svc_source *src);
/* src->fd was replaced by another socket without engine_svc_unwatch. */
void engine_svc_renewed(struct svc_source *src);
void engine_host_identity(uint8_t host_id[WIRE_HOST_ID_LEN], uint64_t *pid_ns);

/* keepalive.c */
struct engine_timeouts {
	uint64_t timeout_ns;   /* a peer silent this long is gone */
	uint64_t interval_ns;  /* ping a peer silent this long; sweep this often */
};
const struct engine_timeouts *engine_timeouts(void);
void engine_keepalive_sweep(struct engine_worker *w, uint64_t now);
void engine_keepalive_suspect(struct engine_conn *c);
void engine_keepalive_start(struct engine_conn *c);
void engine_keepalive_stop(struct engine_conn *c);
enum link_rx engine_am_ping(struct engine_worker *w, const struct link_msg *m);

/* conn.c */
doca_error_t engine_conn_alloc(struct engine_worker *w, struct engine_conn **conn_out);
doca_error_t engine_conn_connect_locked(struct engine_conn *c, const void *desc, size_t desc_len);
/* A small control message (HELLO, BYE, PING) on c's endpoint: header
 * and payload are copied, so the caller's may go at once. */
doca_error_t engine_send_ctl(struct engine_conn *c, unsigned int am_id, const void *hdr, size_t len,
			     const void *payload, size_t payload_len);
/* The connection an incoming message names (id and secret checked, and
 * on a link that proved its carrier, that it is the carrier's), or NULL
 * (logged). Lock held. */
struct engine_conn *engine_conn_lookup(struct engine_worker *w, const struct link_msg *m, uint32_t id,
				       const uint8_t secret[ENGINE_SECRET_LEN]);
void engine_conn_fail(struct engine_conn *conn, enum engine_conn_event event);
/* Whether losing conn's peer deserves an ERROR line: only when it breaks
 * work the application has in flight on it. A peer that leaves an idle
 * connection (it finished first), or leaves while we stop, is no fault:
 * an RC QP would not even notice until its next post. */
bool engine_conn_loss_is_error(const struct engine_conn *conn);
enum link_rx engine_am_hello(struct engine_worker *w, const struct link_msg *m);
enum link_rx engine_am_bye(struct engine_worker *w, const struct link_msg *m);
void engine_conn_close_all(struct engine_worker *w);

/* cm.c */
void engine_cm_expire(struct engine_worker *w, uint64_t now);
void engine_cm_established(struct engine_conn *c);
void engine_cm_close(struct engine_conn *c);
void engine_cm_close_listeners(struct engine_worker *w);
void engine_cm_on_listen(struct engine_listener *l);
void engine_cm_on_sock(struct engine_conn *c, uint32_t events);

/* initiator.c */
enum link_rx engine_am_resp(struct engine_worker *w, const struct link_msg *m);
enum link_rx engine_am_ack(struct engine_worker *w, const struct link_msg *m);
void engine_fail_conn_ops(struct engine_conn *conn, doca_error_t status);
void engine_fail_all_ops(struct engine_worker *w, doca_error_t status);
void engine_batches_free(struct engine_worker *w);
void engine_wr_finish(struct engine_worker *w, struct engine_wr *wr);
uint64_t engine_initiator_bulk_bytes(const struct engine_conn *c);

/* target.c */
struct engine_pool_chunk;
void engine_target_pools_free(struct engine_worker *w);
void engine_acks_flush(struct engine_worker *w);
/* Release the worker lock; acknowledgements the target owes go out
 * first, so one message answers everything a progress call retired. */
static inline void engine_worker_unlock(struct engine_worker *w)
{
	if (w->ack_list != NULL)
		engine_acks_flush(w);
	pthread_mutex_unlock(&w->lock);
}
enum link_rx engine_am_req(struct engine_worker *w, const struct link_msg *m);
enum link_rx engine_am_batch(struct engine_worker *w, const struct link_msg *m);
void engine_target_kick(struct engine_conn *conn);
void engine_target_kick_all(struct engine_worker *w);
void engine_target_expire(struct engine_worker *w, uint64_t now);
void engine_target_drop(struct engine_conn *conn);
void engine_recv_fail_all(struct engine_worker *w, doca_error_t status);
void engine_target_abandon(struct engine_worker *w);
uint64_t engine_target_bulk_bytes(const struct engine_conn *c);

/* ThreadSanitizer cannot see the ordering UCX's shared-memory FIFOs
 * give (their fences are inline asm): a target in this process that
 * lands a write on the service thread, then answers, is ordered before
 * the initiator that reads the answer, but TSan calls the application's
 * later read of that memory a race (and the same the other way: what
 * the application did before posting a request is ordered before the
 * target serving it). In TSan builds only, every request and answer sent
 * releases and every one received acquires one atomic, which states that
 * ordering to TSan; other builds compile to nothing. */
#if defined(__SANITIZE_THREAD__)
extern atomic_ulong engine_tsan_answers;
#define ENGINE_TSAN_RELEASE() ((void)atomic_fetch_add_explicit(&engine_tsan_answers, 1, memory_order_release))
#define ENGINE_TSAN_ACQUIRE() ((void)atomic_load_explicit(&engine_tsan_answers, memory_order_acquire))
#else
#define ENGINE_TSAN_RELEASE() ((void)0)
#define ENGINE_TSAN_ACQUIRE() ((void)0)
#endif

#endif /* SOFTDOCA_ENGINE_INTERNAL_H_ */
