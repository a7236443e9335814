/*
 * softdoca — DOCA RDMA context, internal view shared by the RDMA layer's
 * files: rdma.c (life cycle), rdma_props.c (properties, capabilities),
 * rdma_conn.c (export/connect, connection events), rdma_cm.c (RDMA CM)
 * and rdma_tasks.c (the eleven task types). Not installed.
 *
 * A struct doca_rdma embeds the generic struct doca_ctx. It reaches its
 * engine only through the ops table chosen at create (engine.h). From start
 * to IDLE it owns one engine_worker (the soft NIC) and a fixed array of
 * connection slots; connection events that the engine reports on any
 * thread wait in a small mutex-protected ring until the progress op hands
 * them to the application's callbacks inside doca_pe_progress.
 */
#ifndef SOFTDOCA_RDMA_RDMA_H_
#define SOFTDOCA_RDMA_RDMA_H_

#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <doca_rdma.h>

#include "ctx.h"
#include "engine.h"

/* ---- limits of soft devices (what the capability queries report) ---- */

#define RDMA_MAX_SEND_QUEUE_SIZE 8192u
#define RDMA_MAX_RECV_QUEUE_SIZE 8192u
#define RDMA_MAX_SEND_BUF_LIST_LEN ENGINE_MAX_SGE
#define RDMA_MAX_RECV_BUF_LIST_LEN ENGINE_MAX_SGE
/* Most bytes one operation moves: 1 GiB, well inside 32-bit lengths. */
#define RDMA_MAX_MESSAGE_SIZE (1u << 30)
/* Most connections one context may be configured for. */
#define RDMA_MAX_CONNECTIONS 1024u
#define RDMA_MAX_SL 15u
#define RDMA_MAX_RNR_RETRY 7u
/* Bytes of one atomic operand or result. */
#define RDMA_ATOMIC_SIZE 8u

/* ---- defaults ---- */

#define RDMA_DEFAULT_SEND_QUEUE_SIZE 256u
#define RDMA_DEFAULT_BUF_LIST_LEN 1u
#define RDMA_DEFAULT_CONNECTIONS 1u
#define RDMA_DEFAULT_RNR_RETRY 7u /* retry for ever: a send waits for the peer's receive */
#define RDMA_DEFAULT_REQUEST_TIMEOUT_MS 5000u

/* The access bits doca_rdma_set_permissions accepts. */
#define RDMA_PERMISSION_BITS \
	(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | \
	 DOCA_ACCESS_FLAG_RDMA_ATOMIC)

/* Ring slots per connection: established, then failed or disconnected,
 * with room to spare. */
#define RDMA_EVENTS_PER_CONN 4u

/* One softdoca_task_type per DOCA RDMA task type, in this order. */
enum rdma_task_kind {
	RDMA_TASK_RECEIVE = 0,
	RDMA_TASK_SEND,
	RDMA_TASK_SEND_IMM,
	RDMA_TASK_READ,
	RDMA_TASK_WRITE,
	RDMA_TASK_WRITE_IMM,
	RDMA_TASK_ATOMIC_CMP_SWP,
	RDMA_TASK_ATOMIC_FETCH_ADD,
	RDMA_TASK_SYNC_GET,
	RDMA_TASK_SYNC_SET,
	RDMA_TASK_SYNC_ADD,
	RDMA_TASK_NUM,
};

/* Configuration, changed only while IDLE. */
struct rdma_props {
	uint32_t permissions;	       /* doca_access_flag bits */
	uint32_t gid_index;
	uint32_t send_queue_size;      /* a power of two */
	uint32_t max_send_buf_list_len;
	uint32_t recv_buf_list_len;    /* receive dst_buf_list_len */
	uint32_t sl;
	enum doca_rdma_transport_type transport_type;
	enum doca_mtu_size mtu;
	uint16_t max_num_connections;
	uint16_t request_timeout_ms;
	uint8_t grh_enabled;
	uint8_t rnr_retry_count;
};

/* Where a connection slot is in its life. */
enum rdma_conn_state {
	RDMA_CONN_EXPORTED = 0, /* doca_rdma_export made it */
	RDMA_CONN_REQUESTED,    /* RDMA CM: a client asks; accept or reject */
	RDMA_CONN_CONNECTING,   /* doca_rdma_connect was called */
	RDMA_CONN_ESTABLISHED,  /* the link is up (the established callback ran, for RDMA CM) */
	RDMA_CONN_CLOSED,       /* failure or disconnection was delivered */
};

/* Longest address text doca_rdma_addr_create keeps, with its NUL: an IPv6
 * address plus "%" and an interface name (the scope of link-local peers). */
#define RDMA_ADDR_TEXT_MAX (INET6_ADDRSTRLEN + IF_NAMESIZE + 1)

struct doca_rdma_addr {
	enum doca_rdma_addr_type type;
	uint16_t port;
	char text[RDMA_ADDR_TEXT_MAX];	/* as the application wrote it */
	struct sockaddr_storage sa;	/* parsed, port included; a GID as IPv6 */
	socklen_t sa_len;
};

struct doca_rdma_connection {
	struct doca_rdma *rdma;
	struct engine_conn *engine; /* NULL once the context is IDLE again */
	union doca_data user_data;
	uint32_t id;
	enum rdma_conn_state state;
	bool disconnect_called;	    /* doca_rdma_connection_disconnect was called */
	bool connect_called;	    /* doca_rdma_connect succeeded on it */
	bool by_cm;		    /* made by RDMA CM (connect_to_addr or a request) */
	struct doca_rdma_addr peer_addr; /* RDMA CM: doca_rdma_connection_get_addr */
	uint64_t connect_ns;	    /* when doca_rdma_connect succeeded; 0: not by it */
	bool wait_explained;	    /* the "not established yet" warning was logged */
	bool idle_explained;	    /* the "this side's PE was not progressed" one was */
	uint64_t wait_from_ns;	    /* the peer's period starts (connect, or that line) */
	/* Refusals by the peer explained already, one bit per reason
	 * (rdma_explain_refusal); completions run on any thread. */
	_Atomic uint32_t refusals_explained;
};

/* A connection event as the engine reported it. */
struct rdma_conn_event {
	struct engine_conn *conn;
	enum engine_conn_event event;
};

struct doca_rdma {
	struct doca_ctx ctx; /* the generic context; doca_rdma_as_ctx */
	struct rdma_props props;
	struct softdoca_task_type task_types[RDMA_TASK_NUM];

	doca_rdma_connection_request_cb_t request_cb;
	doca_rdma_connection_established_cb_t established_cb;
	doca_rdma_connection_failure_cb_t failure_cb;
	doca_rdma_connection_disconnection_cb_t disconnect_cb;

	/* The engine behind this context (engine_ops_select at create):
	 * every engine call goes through it. */
	const struct engine_ops *engine_ops;
	/* Run time: made by the start op, the worker destroyed when IDLE. */
	struct engine_worker *worker;
	/* Slots stay allocated until destroy or the next start, so a
	 * connection pointer the application kept never dangles. */
	struct doca_rdma_connection *conns;
	uint16_t num_conns;	/* slots ever used (the engine's connection ids) */
	uint16_t conns_cap;	/* max_num_connections at start */

	/* Connection events: pushed by any thread, popped by progress. */
	pthread_mutex_t events_lock;
	struct rdma_conn_event *events;
	uint32_t events_cap;
	uint32_t events_head;
	atomic_uint events_count; /* read without the lock to skip empty polls */
	/* The engine asked for a progress call (engine_worker_conf.wake). */
	atomic_bool engine_woken;

	/* DOCA_ERROR_FULL was explained in this run (rdma_tasks.c): once only. */
	bool full_explained;
	/* When progress next looks for connections doca_rdma_connect left
	 * waiting too long (rdma_conn.c); 0: none waits. */
	uint64_t connect_check_ns;
	/* While connect_check_ns is set: when progress last ran, and the PE's
	 * notification requests then (a program asleep on the handle waits
	 * rightly; one that neither progresses nor sleeps there does not). */
	uint64_t connect_progress_ns;
	uint64_t connect_notify_seen;
};

static inline struct doca_rdma *rdma_from_ctx(struct doca_ctx *ctx)
{
	return container_of(ctx, struct doca_rdma, ctx);
}

/* rdma_tasks.c: register the eleven task types of a new context. */
void rdma_tasks_init(struct doca_rdma *rdma);

/* rdma.c: log that func's argument what is NULL; INVALID_VALUE. */
doca_error_t rdma_null_arg(const char *func, const char *what);

/* rdma_conn.c: DOCA_SUCCESS when conn is a live connection of rdma
 * (exported in this run and the context not yet IDLE); logs what is wrong
 * otherwise. */
doca_error_t rdma_conn_check(const struct doca_rdma *rdma, const struct doca_rdma_connection *conn,
			     const char *what);

/* rdma_conn.c: "exported", "connecting"...: for log lines. */
const char *rdma_conn_state_name(enum rdma_conn_state state);

/* rdma_conn.c: BAD_STATE (logged, naming func) unless rdma is running. */
doca_error_t rdma_check_running(const struct doca_rdma *rdma, const char *func);

/* rdma_conn.c: the slot of a new engine connection, in state. */
struct doca_rdma_connection *rdma_conn_bind(struct doca_rdma *rdma, struct engine_conn *engine,
					    enum rdma_conn_state state);

/* rdma_conn.c: the engine's connection event callback (any thread: it
 * only queues), dropping what is queued (at stop), and handing queued
 * events to the application (from progress). */
void rdma_on_conn_event(void *arg, struct engine_conn *conn, enum engine_conn_event event);
/* The engine's wake callback: any thread, so only flag and wake. */
void rdma_on_engine_wake(void *arg);
void rdma_events_clear(struct doca_rdma *rdma);

/* rdma_conn.c, from progress while connect_check_ns is set: warn once per
 * connection that doca_rdma_connect left unestablished for too long. */
void rdma_connect_watch(struct doca_rdma *rdma);
unsigned int rdma_deliver_events(struct doca_rdma *rdma);

#endif /* SOFTDOCA_RDMA_RDMA_H_ */
