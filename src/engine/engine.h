/*
 * softdoca — the soft NIC: the one internal interface the RDMA layer uses,
 * as the functions of the UCX engine and, at the end, as an ops table
 * (struct engine_ops) that the RDMA layer calls through, so that another
 * engine (loopback.c) can take its place.
 *
 * An engine_worker belongs to one doca_rdma context: a UCX worker on the
 * context's device, its connections, and its posted receives. Work
 * requests (struct engine_wr) live inside the RDMA layer's task structs, so
 * posting never allocates. One-sided operations travel as active messages
 * that the target validates (connection id and secret, region id and
 * secret, bounds, permission, alignment) before touching memory.
 *
 * Threads: engine_* calls come from the application's thread. A wr's done
 * callback and the worker's event callback may run on the application's
 * thread (inside engine_post or engine_worker_progress) or on the engine's
 * service thread; they must only record results and queue work for
 * doca_pe_progress (softdoca_task_complete, softdoca_pe_wake).
 */
#ifndef SOFTDOCA_ENGINE_H_
#define SOFTDOCA_ENGINE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <doca_error.h>

struct doca_dev;
struct engine_worker;
struct engine_conn;

#define ENGINE_SECRET_LEN 16
#define ENGINE_MAX_SGE 32

enum engine_opcode {
	ENGINE_OP_RECV = 1,      /* posted receive (local; conn is NULL) */
	ENGINE_OP_SEND,
	ENGINE_OP_SEND_IMM,
	ENGINE_OP_WRITE,
	ENGINE_OP_WRITE_IMM,
	ENGINE_OP_READ,
	ENGINE_OP_ATOMIC_CAS,
	ENGINE_OP_ATOMIC_FADD,
	ENGINE_OP_SYNC_GET,      /* remote net sync event: read the 64-bit value */
	ENGINE_OP_SYNC_SET,      /* ... set it */
	ENGINE_OP_SYNC_ADD,      /* ... add to it, old value back */
};

/* What a completed receive was (doca_rdma_opcode values). */
enum engine_recv_kind {
	ENGINE_RECV_SEND = 0,
	ENGINE_RECV_SEND_IMM = 1,
	ENGINE_RECV_WRITE_IMM = 2,
};

/* Why a target refused a one-sided operation, as it said (the RDMA layer
 * explains it in the initiator's log). The engine's own terms: the wire
 * has its numbers (wire.h), mapped at the initiator's edge. */
enum engine_refusal_kind {
	ENGINE_REFUSAL_NONE = 0,    /* not refused, or refused without a reason */
	ENGINE_REFUSAL_CTX_PERM,    /* the target's RDMA context lacks perm (doca_rdma_set_permissions) */
	ENGINE_REFUSAL_REGION_PERM, /* the target's mmap lacks perm (doca_mmap_set_permissions) */
	ENGINE_REFUSAL_REGION_KEY,  /* no such memory region: unknown, stopped, or the key is wrong */
	ENGINE_REFUSAL_RANGE,       /* the access is outside the region [region_start, region_end) */
	ENGINE_REFUSAL_SYNC_KEY,    /* no such sync event: unknown, stopped, or the key is wrong */
	ENGINE_REFUSAL_UNKNOWN,     /* the peer gave a reason this side cannot read: wire, wire_detail */
};

struct engine_refusal {
	uint8_t kind;          /* enum engine_refusal_kind */
	uint32_t perm;         /* *_PERM: the doca_access_flag bit missing */
	uint64_t addr, len;    /* RANGE: the access [addr, addr + len) */
	uint64_t region_start; /* RANGE: the region [start, end), in the target's addresses */
	uint64_t region_end;
	int32_t wire;          /* UNKNOWN: the peer's status and detail, for the log */
	uint64_t wire_detail;
};

struct engine_sge {
	void *addr;
	size_t len;
};

/* The far side of a one-sided operation, as a peer's descriptor granted it. */
struct engine_remote {
	uint64_t region_id;             /* mmap region or sync event id */
	uint8_t secret[ENGINE_SECRET_LEN];
	uint64_t addr;                  /* target address (exporter's address space) */
	uint64_t len;                   /* READ: bytes to read; WRITE: room at addr (checked on the target too) */
};

/* engine_wr.post_flags */
#define ENGINE_POST_DEFER 0x1 /* may wait for the worker's next flush_posts (a doorbell rung later) */

struct engine_wr {
	/* Set by the caller before engine_post. */
	uint8_t opcode;                 /* enum engine_opcode */
	uint8_t post_flags;             /* ENGINE_POST_* */
	struct engine_conn *conn;       /* NULL for RECV */
	uint32_t num_sge;
	/* Source (SEND*, WRITE*, SYNC_SET: 8 bytes) or destination (RECV,
	 * READ, SYNC_GET, ATOMIC* and SYNC_ADD: the 8-byte old value). */
	struct engine_sge sge[ENGINE_MAX_SGE];
	struct engine_remote remote;    /* WRITE*, READ, ATOMIC*, SYNC_* */
	uint32_t imm;                   /* SEND_IMM, WRITE_IMM: raw 32 bits */
	uint64_t compare;               /* ATOMIC_CAS */
	uint64_t operand;               /* ATOMIC_CAS: swap; ATOMIC_FADD, SYNC_ADD: add */
	void (*done)(struct engine_wr *wr); /* any thread; see the file comment */
	void *trace_task;               /* the timeline's name for it (softdoca_trace_task_sent), or NULL */
	/* A wrapping engine (fault.c) keeps the caller's done() and its own
	 * pointer here while the wr is in the engine it wraps. */
	void (*wrap_done)(struct engine_wr *wr);
	void *wrap_arg;

	/* Results, valid in done(). */
	doca_error_t status;
	uint64_t result_len;            /* bytes placed into sge (RECV, READ, SYNC_GET, ATOMIC*, SYNC_ADD);
					 * RECV of a WRITE_IMM: bytes the write placed in its region */
	uint8_t result_kind;            /* RECV: enum engine_recv_kind */
	uint32_t result_imm;            /* RECV of SEND_IMM / WRITE_IMM */
	struct engine_conn *result_conn;/* RECV: the connection it came on */
	struct engine_refusal refusal;  /* a one-sided operation the target refused: why */

	/* Engine private: the request header lives here until UCX is done
	 * with it (UCX 1.13 reads it until the send completes). */
	uint64_t wr_id;
	struct engine_wr *next;
	uint8_t send_pending;
	uint8_t answered;
	void *send_req;                 /* UCX's request while the send is in flight */
	void *recv_req;                 /* UCX's request while a rendezvous answer is received */
	uint64_t hdr_space[16];
};

enum engine_conn_event {
	ENGINE_CONN_ESTABLISHED = 1,
	ENGINE_CONN_FAILED,
	ENGINE_CONN_DISCONNECTED,
	ENGINE_CONN_REQUEST,     /* RDMA CM: a client asks to connect (server side) */
};

/* The kind of GID a side's doca_rdma_set_gid_index names (the numbers
 * descriptors carry). RoCE connects only GIDs of one kind. */
enum engine_gid_type {
	ENGINE_GID_UNKNOWN = 0, /* not said: the device has no address */
	ENGINE_GID_IPV4 = 1,    /* ::ffff:a.b.c.d */
	ENGINE_GID_IPV6 = 2,
};

struct engine_worker_conf {
	bool dc;                        /* DC transport: the passive side never connects */
	uint16_t max_connections;
	uint8_t rnr_retry_count;        /* 7 = retry for ever */
	uint32_t send_queue_size;       /* most operations outstanding at once per connection (DOCA_ERROR_FULL past it) */
	uint32_t permissions;           /* doca_access_flag bits peers get (RDMA_READ/WRITE/ATOMIC) */
	uint32_t gid_index;             /* which local address to use (soft devices) */
	uint8_t gid_type;               /* enum engine_gid_type of that address */
	uint32_t request_timeout_ms;    /* RDMA CM: a connection not established by then fails */
	uint32_t trace_track;           /* the context's timeline track (softdoca_trace_conn_track), 0: off */
	/* Connection state changes; any thread, see the file comment. */
	void (*conn_event)(void *arg, struct engine_conn *conn, enum engine_conn_event event);
	void *arg;
	/* The worker has work for its next progress that no completion or
	 * event announces (fault.c: held work came due); any thread, and
	 * it may only wake the PE. NULL: nobody sleeps on the worker. */
	void (*wake)(void *arg);
};

/* Create a worker on dev. DOCA_ERROR_DRIVER if UCX cannot be set up. */
doca_error_t engine_worker_create(struct doca_dev *dev, const struct engine_worker_conf *conf,
				  struct engine_worker **worker_out);

/* Close every connection (peers see a disconnection), fail what is still
 * posted, and free the worker. */
void engine_worker_destroy(struct engine_worker *worker);

/* Drive UCX from the application's thread; returns how much happened. */
unsigned int engine_worker_progress(struct engine_worker *worker);

/* Complete every posted receive and outstanding operation with
 * DOCA_ERROR_IO_FAILED (context stop). */
void engine_worker_flush(struct engine_worker *worker);

/* Number of work requests posted and not yet done. */
uint32_t engine_worker_outstanding(struct engine_worker *worker);

/* A new connection and its descriptor (owned by the connection, valid
 * until the worker is destroyed). DOCA_ERROR_FULL past max_connections. */
doca_error_t engine_conn_export(struct engine_worker *worker, struct engine_conn **conn_out, const void **desc,
				size_t *desc_len);

/* Bind conn to the peer's descriptor. The connection is established once
 * the peer has connected too (ENGINE_CONN_ESTABLISHED). Malformed
 * descriptors: DOCA_ERROR_INVALID_VALUE with a log line. */
doca_error_t engine_conn_connect(struct engine_conn *conn, const void *desc, size_t desc_len);

/* Close conn: its outstanding operations fail, the peer sees a
 * disconnection. */
doca_error_t engine_conn_disconnect(struct engine_conn *conn);

/* Free a closed connection's slot for a new connection (its id is
 * reused, with a new secret). Connections not closed are left alone. */
void engine_conn_release(struct engine_conn *conn);

/* RDMA CM (cm.c). Listening binds the port at each address of the
 * worker's device (its GIDs: IPv4 and IPv6, a link-local one with its
 * interface as scope); errors: ALREADY_EXIST (this worker listens on it
 * already), FULL (ENGINE_MAX_LISTENERS ports), IN_USE (another socket holds
 * the port at one of the addresses), NOT_FOUND (the device has no address),
 * OPERATING_SYSTEM. A client's request arrives as ENGINE_CONN_REQUEST on a
 * new connection, which the server accepts or rejects. */
doca_error_t engine_listen(struct engine_worker *worker, uint16_t port);
doca_error_t engine_listen_stop(struct engine_worker *worker, uint16_t port);
/* bind(arg, conn) runs under the worker's lock before any traffic, so the
 * caller can attach its own object (engine_conn_set_user) in time. */
doca_error_t engine_conn_connect_addr(struct engine_worker *worker, const struct sockaddr *addr, socklen_t addr_len,
				      void (*bind)(void *arg, struct engine_conn *conn), void *arg,
				      struct engine_conn **conn_out);
doca_error_t engine_conn_accept(struct engine_conn *conn, const void *private_data, uint8_t private_data_len);
doca_error_t engine_conn_reject(struct engine_conn *conn);
/* The peer's address (CM connections): DOCA_ERROR_NOT_FOUND if unknown. */
doca_error_t engine_conn_peer_addr(const struct engine_conn *conn, struct sockaddr_storage *addr, socklen_t *len);

uint32_t engine_conn_id(const struct engine_conn *conn);
void engine_conn_set_user(struct engine_conn *conn, void *user);
void *engine_conn_get_user(const struct engine_conn *conn);
bool engine_conn_is_usable(const struct engine_conn *conn); /* connected locally, not failed or closed */

/* Post a work request to wr->conn (any opcode but RECV).
 * DOCA_ERROR_FULL when wr->conn's own send queue is full, DOCA_ERROR_NOT_CONNECTED
 * when conn cannot carry it. On success done() will run exactly once. */
doca_error_t engine_post(struct engine_wr *wr);

/* Send the requests engine_post held back (ENGINE_POST_DEFER): several
 * small ones to a peer travel as one message. */
void engine_flush_posts(struct engine_worker *worker);

/* Post a receive (opcode RECV, conn NULL): the oldest posted receive takes
 * the next incoming send, send-with-immediate or write-with-immediate on
 * any connection of the worker. done() runs exactly once. */
doca_error_t engine_post_recv(struct engine_worker *worker, struct engine_wr *wr);

/*
 * The RDMA layer's whole view of an engine: every call above goes through
 * one of these tables, picked once per doca_rdma context at create
 * (engine_ops_select), so a second engine (the in-process loopback of the
 * unit tests, a fault-injecting wrapper) can sit behind the same seam.
 * Each slot has the contract of the function of the same name above;
 * no slot is NULL (an engine without a feature returns
 * DOCA_ERROR_NOT_SUPPORTED with a log line). The object types stay
 * opaque: a worker or connection is only handed back to the table that
 * made it.
 */
struct engine_ops {
	const char *name; /* what SOFTDOCA_ENGINE names it */
	doca_error_t (*worker_create)(struct doca_dev *dev, const struct engine_worker_conf *conf,
				      struct engine_worker **worker_out);
	void (*worker_destroy)(struct engine_worker *worker);
	unsigned int (*worker_progress)(struct engine_worker *worker);
	void (*worker_flush)(struct engine_worker *worker);
	uint32_t (*worker_outstanding)(struct engine_worker *worker);

	doca_error_t (*conn_export)(struct engine_worker *worker, struct engine_conn **conn_out, const void **desc,
				    size_t *desc_len);
	doca_error_t (*conn_connect)(struct engine_conn *conn, const void *desc, size_t desc_len);
	doca_error_t (*conn_disconnect)(struct engine_conn *conn);
	void (*conn_release)(struct engine_conn *conn);

	doca_error_t (*listen)(struct engine_worker *worker, uint16_t port);
	doca_error_t (*listen_stop)(struct engine_worker *worker, uint16_t port);
	doca_error_t (*conn_connect_addr)(struct engine_worker *worker, const struct sockaddr *addr,
					  socklen_t addr_len, void (*bind)(void *arg, struct engine_conn *conn),
					  void *arg, struct engine_conn **conn_out);
	doca_error_t (*conn_accept)(struct engine_conn *conn, const void *private_data, uint8_t private_data_len);
	doca_error_t (*conn_reject)(struct engine_conn *conn);
	doca_error_t (*conn_peer_addr)(const struct engine_conn *conn, struct sockaddr_storage *addr, socklen_t *len);

	/* Plain reads and writes of the connection: any thread, no lock
	 * (done() and conn_event callbacks call conn_get_user). */
	uint32_t (*conn_id)(const struct engine_conn *conn);
	void (*conn_set_user)(struct engine_conn *conn, void *user);
	void *(*conn_get_user)(const struct engine_conn *conn);
	bool (*conn_is_usable)(const struct engine_conn *conn);

	/* The data path: one indirect call per work request. */
	doca_error_t (*post)(struct engine_wr *wr);
	doca_error_t (*post_recv)(struct engine_worker *worker, struct engine_wr *wr);
	/* Send what posts with ENGINE_POST_DEFER held back (cheap when
	 * nothing is: no lock). */
	void (*flush_posts)(struct engine_worker *worker);
};

/* The soft NIC over UCX (the functions above; engine_ops.c). */
extern const struct engine_ops engine_ucx_ops;
/* Peers in this process only, no UCX (loopback.c): unit tests. */
extern const struct engine_ops engine_loopback_ops;

/* The environment variable that picks the engine of new contexts. */
#define ENGINE_ENV "SOFTDOCA_ENGINE"

/* The engine new doca_rdma contexts use: SOFTDOCA_ENGINE unset means
 * "ucx"; "ucx" and "loopback" name the two tables. Any other value is
 * refused with DOCA_ERROR_INVALID_VALUE and a log line (no silent
 * fallback: a test that asked for loopback must not run over UCX). */
doca_error_t engine_ops_select(const struct engine_ops **ops_out);

/* The fault-injecting engine (fault.c) in front of inner when
 * SOFTDOCA_FAULTS is set or softdoca_fault_set was used, else inner
 * itself. A malformed SOFTDOCA_FAULTS: DOCA_ERROR_INVALID_VALUE, with a
 * log line naming the bad token. */
doca_error_t engine_fault_wrap(const struct engine_ops *inner, const struct engine_ops **ops_out);

/* Parsers of untrusted bytes, exposed for the fuzz target. */
doca_error_t engine_conn_desc_check(const void *desc, size_t desc_len);

/* What a peer's descriptor says about its side, compared with ours
 * before anything is sent (disagree.c). */
struct engine_peer_side {
	bool dc;
	uint8_t gid_type;   /* enum engine_gid_type */
	uint32_t gid_index;
};

/* One ERROR line naming connection conn_id, both sides' values and the
 * fix when the two sides disagree: DOCA_ERROR_DRIVER on the transport
 * type (what hardware returns for a mixed RC/DC pair), and
 * DOCA_ERROR_INVALID_VALUE on the kind of GID; DOCA_SUCCESS otherwise. */
doca_error_t engine_sides_agree(uint32_t conn_id, const struct engine_worker_conf *ours,
				const struct engine_peer_side *peer);

/* For a peer on this host, per the descriptor's claims (proc_start and
 * run 0: not said): a descriptor of an rdma context of this process that
 * has stopped since it exported is DOCA_ERROR_INVALID_VALUE with one
 * ERROR line (disagree.c). For another process, *claims_exited says
 * whether the pid it names has exited (or names another process now);
 * a claim decides nothing (keepalive.c), it only explains a failure. */
doca_error_t engine_peer_is_current(uint32_t conn_id, uint32_t peer_pid, uint64_t proc_start, uint32_t run,
				    bool *claims_exited);

/* The ERROR line for a connection whose descriptor claims an exited
 * process and whose peer is indeed unreachable; what: how that showed. */
void engine_explain_peer_exited(uint32_t conn_id, uint32_t peer_pid, const char *what);

/* This process's start time (clock ticks after boot; 0 if unknown), and
 * the serials of the UCX workers alive in it: a descriptor carries its
 * worker's, so one from a stopped context is told apart. */
uint64_t engine_self_start_time(void);
uint32_t engine_run_add(void);
void engine_run_remove(uint32_t run);
doca_error_t engine_wire_header_check(const void *header, size_t header_len);

#endif /* SOFTDOCA_ENGINE_H_ */
