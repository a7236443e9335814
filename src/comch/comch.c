/*
 * softdoca — DOCA Comch control path: the doca_comch_server and
 * doca_comch_client contexts, their connections, the send task and the
 * message-receive and connection events, over the transport of channel.h.
 *
 * Threads: the application's only. Sockets are non-blocking; the contexts'
 * progress ops accept, read and flush them, so every callback runs inside
 * doca_pe_progress. A callback may stop the context or disconnect a
 * connection: connections are only marked dead while callbacks can run,
 * and freed by the sweep at the end of progress (or when the context
 * stops).
 *
 * A connection the peer ends (BYE, a malformed frame, death) is reported
 * on one path, the receive side's, inside progress: the peer's consumers
 * expire, then the server's disconnection callback fires or the client's
 * context ends (INFO for BYE) or fails (ERROR). A send that finds the peer
 * gone (submit may run outside progress, where no callback may) only fails
 * its task and marks the connection; the socket stays open, so the next
 * progress reads what the peer sent before it went, then its end, and
 * reports it there.
 *
 * Rendezvous: a server listens on the PCIe link of its representor, a
 * client connects on the link of its device (dev_rep.h), so a client
 * reaches only the servers bound to the representor of its own function.
 *
 * A send task completes once its frame is in the peer's socket queue —
 * the peer's receive queue, from which nothing is lost short of the peer
 * dying. When the socket is full, tasks wait in the connection's backlog,
 * in order.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <doca_comch.h>

#include "channel.h"
#include "comch_internal.h"
#include "ctx.h"
#include "dev_rep.h"
#include "live.h"
#include "log_internal.h"
#include "secret.h"
#include "watch.h"

SDK_LOG_REGISTER(COMCH)

/* doca_comch_cap_get_max_clients. */
#define COMCH_MAX_CLIENTS 512u
#define COMCH_MAX_RECV_QUEUE 8192u
#define COMCH_DEFAULT_RECV_QUEUE 64u
/* A client that connected but said nothing valid is dropped after this. */
#define COMCH_HANDSHAKE_NS (2ull * 1000000000ull)
/* How often a starting client retries a server that is not there yet. */
#define COMCH_RETRY_NS (10ull * 1000000ull)
/* Frames read from one connection per progress call: fairness. */
#define COMCH_RECV_BUDGET 64u
#define COMCH_ACCEPT_BUDGET 16u
/* Clients accepted whose HELLO has not come yet, at most. */
#define COMCH_MAX_PENDING 64u

enum comch_conn_state {
	COMCH_CONN_HANDSHAKE, /* socket open, HELLO/WELCOME not yet exchanged */
	COMCH_CONN_ESTABLISHED,
	COMCH_CONN_DEAD, /* closed; freed by the sweep */
};

/* Opaque to the application; one of each per endpoint is what callbacks get. */
struct doca_comch_event_msg_recv {
	int unused;
};
struct doca_comch_event_connection_status_changed {
	int unused;
};
struct doca_comch_event_consumer {
	int unused;
};

struct comch_ep;

struct doca_comch_connection {
	struct comch_chan chan;
	struct comch_ep *ep;
	union doca_data user_data;
	enum comch_conn_state state;
	bool send_failed; /* a send found the peer gone: reported by the next read */
	/* Dead, with its disconnection callback still to run (server_deliver,
	 * after the task completions of the same doca_pe_progress). */
	bool disconnect_pending;
	uint32_t id;
	uint32_t max_msg_size; /* what the peer accepts, as negotiated */
	uint64_t deadline_ns;  /* handshake */
	struct doca_task *backlog_head, *backlog_tail;
	uint64_t counters[4];  /* live, by enum doca_comch_counter - 1 */
	uint64_t snapshot[4];  /* as of doca_comch_connection_update_info */
	struct comch_remote_consumer *rconsumers; /* the peer's consumers, mapped */
	uint32_t num_rconsumers;
	struct comch_fp_link *fp_links;           /* our producers and consumers on it */
	struct doca_comch_connection *next;
};

struct doca_comch_task_send {
	struct doca_task task; /* first: the PE calls callbacks with this pointer */
	struct doca_comch_connection *conn;
	const void *msg;
	uint32_t len;
};

_Static_assert(offsetof(struct doca_comch_task_send, task) == 0, "task must come first");

/* What a server and a client share. */
struct comch_ep {
	struct doca_ctx ctx;
	struct softdoca_task_type send_type;
	bool is_server;
	char name[COMCH_MAX_NAME_LEN];
	uint32_t max_msg_size;
	uint32_t recv_queue_size;
	doca_comch_event_msg_recv_cb_t recv_cb;
	doca_comch_event_consumer_cb_t new_consumer_cb;
	doca_comch_event_consumer_cb_t expired_consumer_cb;
	struct doca_comch_event_consumer consumer_event;
	struct doca_comch_event_msg_recv recv_event;
	struct doca_comch_connection *conns; /* server: all; client: its one */
	struct comch_watch watch;            /* wakes the PE's notification handle */
};

struct doca_comch_server {
	struct comch_ep ep;
	struct doca_dev_rep *repr;
	struct softdoca_pcie_link link; /* of repr, taken at start */
	struct comch_listener listener;
	doca_comch_event_connection_status_changed_cb_t connect_cb;
	doca_comch_event_connection_status_changed_cb_t disconnect_cb;
	struct doca_comch_event_connection_status_changed conn_event;
	uint32_t next_id;
	uint32_t num_conns;   /* established */
	uint32_t num_pending; /* accepted, handshake not done */
};

/* Refusals of our secret a start takes as a server that was replaced
 * before it fails. */
#define COMCH_SECRET_RETRIES 3

struct doca_comch_client {
	struct comch_ep ep;
	struct softdoca_pcie_link link; /* of the device, taken at start */
	uint64_t next_try_ns;
	uint64_t start_ns;
	bool wait_explained;
	uint8_t secret_refusals; /* in a row, during this start */
	/* The server left (enum client_close): the client ends in
	 * client_deliver, after the completions of the same progress call. */
	uint8_t close_pending;
};

enum client_close {
	CLIENT_CLOSE_NONE = 0,
	CLIENT_CLOSE_BYE,  /* the server closed the connection */
	CLIENT_CLOSE_LOST, /* it died or broke the protocol */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct comch_ep *ep_from_ctx(struct doca_ctx *ctx)
{
	return container_of(ctx, struct comch_ep, ctx);
}

static struct doca_comch_server *server_from_ep(struct comch_ep *ep)
{
	return container_of(ep, struct doca_comch_server, ep);
}

static struct doca_comch_client *client_from_ep(struct comch_ep *ep)
{
	return container_of(ep, struct doca_comch_client, ep);
}

static const char *ep_who(const struct comch_ep *ep)
{
	return ep->is_server ? "comch server" : "comch client";
}

static doca_error_t null_arg(const char *func, const char *what)
{
	SDK_LOG_ERR("%s: %s is NULL", func, what);
	return DOCA_ERROR_INVALID_VALUE;
}

/* ---- connections ---- */

static struct doca_comch_connection *conn_new(struct comch_ep *ep, int fd)
{
	struct doca_comch_connection *conn = calloc(1, sizeof(*conn));

	if (conn == NULL) {
		SDK_LOG_ERR("%s \"%s\": no memory for a connection", ep_who(ep), ep->name);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	conn->chan.fd = -1;
	if (fd >= 0 && comch_chan_init(&conn->chan, fd) != DOCA_SUCCESS) {
		free(conn);
		return NULL;
	}
	conn->ep = ep;
	conn->state = COMCH_CONN_HANDSHAKE;
	conn->max_msg_size = ep->max_msg_size;
	return conn;
}

/* Fail every task waiting in the backlog. */
static void conn_flush_backlog(struct doca_comch_connection *conn, doca_error_t status)
{
	struct doca_task *task = conn->backlog_head;

	conn->backlog_head = conn->backlog_tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;

		task->next = NULL;
		softdoca_task_complete(task, status);
		task = next;
	}
}

/* Close a connection's socket and fail its backlog; the struct and its
 * receive buffer stay until the sweep (a callback may be reading the
 * message being delivered, or hold the connection). */
static void conn_kill(struct doca_comch_connection *conn, doca_error_t status)
{
	if (conn->state == COMCH_CONN_DEAD)
		return;
	if (conn->ep->is_server && conn->state == COMCH_CONN_ESTABLISHED)
		server_from_ep(conn->ep)->num_conns--;
	if (conn->ep->is_server && conn->state == COMCH_CONN_HANDSHAKE)
		server_from_ep(conn->ep)->num_pending--;
	conn->state = COMCH_CONN_DEAD;
	conn_flush_backlog(conn, status);
	comch_chan_close(&conn->chan);
	for (struct comch_fp_link *l = conn->fp_links; l != NULL; l = l->next)
		l->lost = true;
	while (conn->rconsumers != NULL) {
		struct comch_remote_consumer *rc = conn->rconsumers;

		conn->rconsumers = rc->next;
		comch_remote_consumer_close(rc);
	}
	conn->num_rconsumers = 0;
}

/* Producers and consumers outlive a freed connection: cut them loose. */
static void conn_release(struct doca_comch_connection *conn)
{
	while (conn->fp_links != NULL) {
		struct comch_fp_link *l = conn->fp_links;

		conn->fp_links = l->next;
		l->next = NULL;
		l->conn = NULL;
		l->lost = true;
	}
	comch_chan_fini(&conn->chan);
	free(conn);
}

/* The connection is going: each consumer of the peer expires first. */
static void conn_expire_consumers(struct doca_comch_connection *conn)
{
	struct comch_ep *ep = conn->ep;

	while (conn->rconsumers != NULL) {
		struct comch_remote_consumer *rc = conn->rconsumers;
		uint32_t id = rc->id;

		conn->rconsumers = rc->next;
		conn->num_rconsumers--;
		comch_remote_consumer_close(rc);
		if (ep->expired_consumer_cb != NULL)
			ep->expired_consumer_cb(&ep->consumer_event, conn, id);
	}
}

static void conn_free(struct doca_comch_connection *conn)
{
	conn_kill(conn, DOCA_ERROR_CONNECTION_ABORTED);
	conn_release(conn);
}

/* Free the dead connections of ep (no callback may run meanwhile). */
static void ep_sweep(struct comch_ep *ep)
{
	struct doca_comch_connection **pp = &ep->conns;

	while (*pp != NULL) {
		struct doca_comch_connection *conn = *pp;

		if (conn->state != COMCH_CONN_DEAD || conn->disconnect_pending) {
			pp = &conn->next;
			continue;
		}
		*pp = conn->next;
		conn_release(conn);
	}
}

static void ep_free_conns(struct comch_ep *ep)
{
	while (ep->conns != NULL) {
		struct doca_comch_connection *conn = ep->conns;

		ep->conns = conn->next;
		conn_free(conn);
	}
}

static bool ep_owns(const struct comch_ep *ep, const struct doca_comch_connection *conn)
{
	for (const struct doca_comch_connection *c = ep->conns; c != NULL; c = c->next)
		if (c == conn)
			return true;
	return false;
}

static void conn_count(struct doca_comch_connection *conn, enum doca_comch_counter which, uint32_t bytes)
{
	conn->counters[which - 1]++;
	conn->counters[which] += bytes; /* the bytes counter follows its messages counter */
}

/* Write the backlog out while the socket takes it. */
static unsigned int conn_flush(struct doca_comch_connection *conn)
{
	unsigned int done = 0;

	while (conn->state == COMCH_CONN_ESTABLISHED && !conn->send_failed && conn->backlog_head != NULL) {
		struct doca_task *task = conn->backlog_head;
		struct doca_comch_task_send *t = container_of(task, struct doca_comch_task_send, task);
		doca_error_t status = comch_chan_send(&conn->chan, COMCH_FRAME_MSG, t->msg, t->len);

		if (status == DOCA_ERROR_AGAIN)
			break;
		conn->backlog_head = task->next;
		if (conn->backlog_head == NULL)
			conn->backlog_tail = NULL;
		task->next = NULL;
		if (status == DOCA_SUCCESS)
			conn_count(conn, DOCA_COMCH_COUNTER_SENT_MESSAGES, t->len);
		if (conn->backlog_head == NULL)
			comch_watch_fd(&conn->ep->watch, conn->chan.fd, false); /* no more waiting for room */
		softdoca_task_complete(task, status);
		done++;
		if (status != DOCA_SUCCESS)
			conn->send_failed = true; /* the rest fail when the read reports the loss */
	}
	return done;
}

/* Receive one frame; a connection whose sends failed and that has nothing
 * more to read has lost its peer (even if the socket did not say so). */
static doca_error_t conn_recv(struct doca_comch_connection *conn, const char *who, struct comch_frame *f)
{
	doca_error_t status = comch_chan_recv(&conn->chan, conn->ep->max_msg_size, who, f);

	if (status == DOCA_ERROR_AGAIN && conn->send_failed)
		return DOCA_ERROR_CONNECTION_RESET;
	return status;
}

/* A MSG frame for the application. */
static void conn_deliver_msg(struct doca_comch_connection *conn, const struct comch_frame *f)
{
	struct comch_ep *ep = conn->ep;

	conn_count(conn, DOCA_COMCH_COUNTER_RECV_MESSAGES, f->len);
	if (ep->recv_cb == NULL) {
		SDK_LOG_WARN_RL("%s \"%s\": a message of %u bytes arrived but no receive callback is registered; "
				"dropped",
				ep_who(ep), ep->name, f->len);
		return;
	}
	ep->recv_cb(&ep->recv_event, (uint8_t *)f->payload, f->len, conn);
}

static void frame_fds_close(const struct comch_frame *f)
{
	for (unsigned int i = 0; i < f->nfds; i++)
		close(f->fds[i]);
}

static struct comch_remote_consumer **conn_rconsumer_find(struct doca_comch_connection *conn, uint32_t id)
{
	struct comch_remote_consumer **pp = &conn->rconsumers;

	while (*pp != NULL && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
}

/* CONSUMER_NEW / CONSUMER_GONE from the peer; false: the peer broke the
 * protocol (logged), drop the connection. */
static bool conn_on_consumer_frame(struct doca_comch_connection *conn, const struct comch_frame *f)
{
	struct comch_ep *ep = conn->ep;
	struct comch_remote_consumer **pp = conn_rconsumer_find(conn, f->u.consumer.id);
	struct comch_remote_consumer *rc;

	if (f->type == COMCH_FRAME_CONSUMER_GONE) {
		if (*pp == NULL) {
			SDK_LOG_ERR_RL("%s \"%s\": the peer retired consumer %u, which it never announced", ep_who(ep),
				       ep->name, f->u.consumer.id);
			return false;
		}
		rc = *pp;
		*pp = rc->next;
		conn->num_rconsumers--;
		comch_remote_consumer_close(rc);
		if (ep->expired_consumer_cb != NULL)
			ep->expired_consumer_cb(&ep->consumer_event, conn, f->u.consumer.id);
		return true;
	}
	if (*pp != NULL || conn->num_rconsumers >= COMCH_FP_MAX_CONSUMERS) {
		SDK_LOG_ERR_RL("%s \"%s\": the peer announced consumer %u %s", ep_who(ep), ep->name, f->u.consumer.id,
			       *pp != NULL ? "twice" : "beyond the most consumers a connection holds");
		frame_fds_close(f);
		return false;
	}
	if (comch_remote_consumer_open(f, ep_who(ep), &rc) != DOCA_SUCCESS)
		return false;
	rc->next = conn->rconsumers;
	conn->rconsumers = rc;
	conn->num_rconsumers++;
	if (ep->new_consumer_cb != NULL)
		ep->new_consumer_cb(&ep->consumer_event, conn, rc->id);
	return true;
}

/* ---- fast-path hooks (comch_internal.h) ---- */

doca_error_t comch_conn_fp_attach(struct doca_comch_connection *conn, struct comch_fp_link *link, const char *func)
{
	if (conn == NULL)
		return null_arg(func, "comch_connection");
	if (conn->state != COMCH_CONN_ESTABLISHED) {
		SDK_LOG_ERR("%s: the connection is not established", func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	link->conn = conn;
	link->lost = false;
	link->next = conn->fp_links;
	conn->fp_links = link;
	return DOCA_SUCCESS;
}

void comch_conn_fp_detach(struct comch_fp_link *link)
{
	struct comch_fp_link **pp;

	if (link->conn == NULL)
		return;
	for (pp = &link->conn->fp_links; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == link) {
			*pp = link->next;
			break;
		}
	}
	link->conn = NULL;
	link->next = NULL;
}

bool comch_conn_fp_alive(struct comch_fp_link *link)
{
	struct pollfd pfd;

	if (link->lost || link->conn == NULL || link->conn->state != COMCH_CONN_ESTABLISHED ||
	    link->conn->send_failed)
		return false;
	/* Only a hang-up is asked for: frames stay for the connection's context. */
	pfd = (struct pollfd){.fd = link->conn->chan.fd, .events = POLLRDHUP};
	if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0) {
		link->lost = true;
		return false;
	}
	return true;
}

doca_error_t comch_conn_fp_send(struct comch_fp_link *link, uint16_t type, const void *payload, uint32_t len,
				const int *fds, unsigned int nfds)
{
	doca_error_t status;

	if (!comch_conn_fp_alive(link))
		return DOCA_ERROR_CONNECTION_RESET;
	status = comch_chan_send_fds(&link->conn->chan, type, payload, len, fds, nfds);
	if (status != DOCA_SUCCESS && status != DOCA_ERROR_AGAIN)
		link->conn->send_failed = true; /* reported by the connection's next read */
	return status;
}

struct comch_remote_consumer *comch_conn_fp_consumer(struct comch_fp_link *link, uint32_t id)
{
	if (link->conn == NULL || link->lost)
		return NULL;
	return *conn_rconsumer_find(link->conn, id);
}

struct doca_dev *comch_conn_fp_dev(struct comch_fp_link *link)
{
	return link->conn == NULL ? NULL : link->conn->ep->ctx.dev;
}

/* ---- send task ---- */

static doca_error_t send_check(const struct doca_task *task)
{
	const struct doca_comch_task_send *t = container_of(task, struct doca_comch_task_send, task);
	struct comch_ep *ep = ep_from_ctx(softdoca_task_ctx(task));

	if (t->conn == NULL || !ep_owns(ep, t->conn)) {
		SDK_LOG_ERR("%s \"%s\" send: the connection is not one of this context's", ep_who(ep), ep->name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (t->msg == NULL || t->len == 0 || t->len > t->conn->max_msg_size) {
		SDK_LOG_ERR("%s \"%s\" send: message of %u bytes (1..%u on this connection)", ep_who(ep), ep->name,
			    t->len, t->conn->max_msg_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t send_submit(struct doca_task *task)
{
	struct doca_comch_task_send *t = container_of(task, struct doca_comch_task_send, task);
	struct doca_comch_connection *conn = t->conn;
	doca_error_t status = send_check(task);

	if (status != DOCA_SUCCESS)
		return status;
	if (conn->state != COMCH_CONN_ESTABLISHED || conn->send_failed) {
		/* Gone since alloc_init: the task fails through the PE. */
		softdoca_task_complete(task, DOCA_ERROR_CONNECTION_RESET);
		return DOCA_SUCCESS;
	}
	if (conn->backlog_head == NULL) {
		status = comch_chan_send(&conn->chan, COMCH_FRAME_MSG, t->msg, t->len);
		if (status == DOCA_SUCCESS) {
			conn_count(conn, DOCA_COMCH_COUNTER_SENT_MESSAGES, t->len);
			softdoca_task_complete(task, DOCA_SUCCESS);
			return DOCA_SUCCESS;
		}
		if (status != DOCA_ERROR_AGAIN) {
			/* The next progress reports the loss (see the file comment). */
			softdoca_task_complete(task, status);
			conn->send_failed = true;
			return DOCA_SUCCESS;
		}
	}
	task->next = NULL;
	if (conn->backlog_tail != NULL) {
		conn->backlog_tail->next = task;
	} else {
		conn->backlog_head = task;
		comch_watch_fd(&conn->ep->watch, conn->chan.fd, true); /* wake when there is room */
	}
	conn->backlog_tail = task;
	return DOCA_SUCCESS;
}

static const struct softdoca_task_ops send_ops = {
	.submit = send_submit,
	.check = send_check,
};

static doca_error_t send_alloc(struct comch_ep *ep, struct doca_comch_connection *peer, const void *msg,
			       uint32_t len, struct doca_comch_task_send **task_out, const char *func)
{
	union doca_data none = {.u64 = 0};
	struct doca_task *task;
	struct doca_comch_task_send *t;
	doca_error_t status;

	if (peer == NULL)
		return null_arg(func, "peer");
	if (msg == NULL)
		return null_arg(func, "msg");
	if (task_out == NULL)
		return null_arg(func, "task output pointer");
	if (len == 0 || len > ep->max_msg_size) {
		SDK_LOG_ERR("%s: message of %u bytes (1..%u, the context's max_msg_size)", func, len,
			    ep->max_msg_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = softdoca_task_alloc(&ep->send_type, none, &task);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(task, struct doca_comch_task_send, task);
	t->conn = peer;
	t->msg = msg;
	t->len = len;
	*task_out = t;
	return DOCA_SUCCESS;
}

/* ---- common ctx ops ---- */

static void ep_stop(struct doca_ctx *ctx)
{
	struct comch_ep *ep = ep_from_ctx(ctx);

	for (struct doca_comch_connection *c = ep->conns; c != NULL; c = c->next) {
		if (c->state == COMCH_CONN_ESTABLISHED)
			(void)comch_chan_send(&c->chan, COMCH_FRAME_BYE, NULL, 0); /* best effort */
		conn_kill(c, DOCA_ERROR_CONNECTION_ABORTED);
	}
}

static bool ep_has_work(struct doca_ctx *ctx)
{
	struct comch_ep *ep = ep_from_ctx(ctx);
	struct pollfd pfd[COMCH_ACCEPT_BUDGET + 1];
	nfds_t n = 0;

	if (ep->is_server && server_from_ep(ep)->listener.fd >= 0)
		pfd[n++] = (struct pollfd){.fd = server_from_ep(ep)->listener.fd, .events = POLLIN};
	if (!ep->is_server && ep->ctx.state == DOCA_CTX_STATE_STARTING)
		return true; /* retrying the server on a timer */
	for (struct doca_comch_connection *c = ep->conns; c != NULL; c = c->next) {
		short events = POLLIN;

		if (c->state == COMCH_CONN_DEAD || c->send_failed)
			return true;
		/* A backlog is work only once the socket has room for it. */
		if (c->backlog_head != NULL)
			events |= POLLOUT;
		if (n < ARRAY_SIZE(pfd))
			pfd[n++] = (struct pollfd){.fd = c->chan.fd, .events = events};
		else
			return true; /* too many to ask cheaply: let progress look */
	}
	return n > 0 && poll(pfd, n, 0) > 0;
}

/* ---- server ---- */

static void server_reject(struct doca_comch_connection *conn, uint32_t reason)
{
	uint8_t payload[4];

	payload[0] = (uint8_t)reason;
	payload[1] = payload[2] = payload[3] = 0;
	(void)comch_chan_send(&conn->chan, COMCH_FRAME_REJECT, payload, sizeof(payload));
	conn_kill(conn, DOCA_ERROR_CONNECTION_ABORTED);
}

/* What a REJECT's reason means, for the log lines of both sides. */
static const char *reject_reason_name(uint32_t reason)
{
	switch (reason) {
	case COMCH_REJECT_NAME:
		return "wrong server name";
	case COMCH_REJECT_SECRET:
		return "wrong secret";
	case COMCH_REJECT_FULL:
		return "too many clients";
	case COMCH_REJECT_LIMITS:
		return "limits out of range";
	default:
		return "unknown reason";
	}
}

static uint32_t hello_verdict(struct doca_comch_server *server, const struct comch_frame *f)
{
	const struct comch_ep *ep = &server->ep;

	if (f->u.hello.name_len != strlen(ep->name) || memcmp(f->u.hello.name, ep->name, f->u.hello.name_len) != 0)
		return COMCH_REJECT_NAME;
	if (!softdoca_secret_equal(f->u.hello.secret, server->listener.secret, COMCH_SECRET_LEN))
		return COMCH_REJECT_SECRET;
	if (f->u.hello.max_msg_size == 0 || f->u.hello.max_msg_size > COMCH_MAX_MSG_SIZE ||
	    f->u.hello.recv_queue_size == 0 || f->u.hello.recv_queue_size > COMCH_MAX_RECV_QUEUE)
		return COMCH_REJECT_LIMITS;
	if (server->num_conns >= COMCH_MAX_CLIENTS)
		return COMCH_REJECT_FULL;
	return 0;
}

static void server_on_hello(struct doca_comch_server *server, struct doca_comch_connection *conn,
			    const struct comch_frame *f)
{
	uint8_t payload[8];
	uint32_t reason = hello_verdict(server, f);

	if (reason != 0) {
		SDK_LOG_ERR_RL("comch server \"%s\": refused a client (reason %u: %s)", server->ep.name, reason,
			       reject_reason_name(reason));
		server_reject(conn, reason);
		return;
	}
	conn->id = ++server->next_id;
	conn->max_msg_size = f->u.hello.max_msg_size < server->ep.max_msg_size ? f->u.hello.max_msg_size :
										  server->ep.max_msg_size;
	for (int i = 0; i < 4; i++) {
		payload[i] = (uint8_t)(server->ep.max_msg_size >> (8 * i));
		payload[4 + i] = (uint8_t)(conn->id >> (8 * i));
	}
	if (comch_chan_send(&conn->chan, COMCH_FRAME_WELCOME, payload, sizeof(payload)) != DOCA_SUCCESS) {
		conn_kill(conn, DOCA_ERROR_CONNECTION_RESET);
		return;
	}
	conn->state = COMCH_CONN_ESTABLISHED;
	server->num_pending--;
	server->num_conns++;
	SDK_LOG_DBG("comch server \"%s\": connection %u established", server->ep.name, conn->id);
	if (server->connect_cb != NULL)
		server->connect_cb(&server->conn_event, conn, 1);
}

/* The peer left or broke the protocol: close, then tell the application. */
static void server_conn_lost(struct doca_comch_server *server, struct doca_comch_connection *conn)
{
	bool was_established = conn->state == COMCH_CONN_ESTABLISHED;

	if (was_established)
		conn_expire_consumers(conn);
	conn_kill(conn, DOCA_ERROR_CONNECTION_RESET);
	/* Told after the completions already queued (server_deliver): a
	 * program may free what belongs to the connection in its
	 * disconnection callback (shoc's comch_data_server does), so no
	 * completion of a task on it may come after. */
	if (was_established && server->disconnect_cb != NULL)
		conn->disconnect_pending = true;
}

/* After the task completions of this doca_pe_progress: the disconnection
 * callbacks of the connections that died in it. */
static unsigned int server_deliver(struct doca_ctx *ctx)
{
	struct doca_comch_server *server = server_from_ep(ep_from_ctx(ctx));
	unsigned int events = 0;

	for (struct doca_comch_connection *c = server->ep.conns; c != NULL; c = c->next) {
		if (!c->disconnect_pending)
			continue;
		c->disconnect_pending = false;
		/* A server being stopped closes every connection itself. */
		if (ctx->state != DOCA_CTX_STATE_RUNNING || server->disconnect_cb == NULL)
			continue;
		events++;
		server->disconnect_cb(&server->conn_event, c, 1);
	}
	if (events > 0 && ctx->state == DOCA_CTX_STATE_RUNNING)
		ep_sweep(&server->ep);
	return events;
}

/* One frame from conn; false when conn can take no more this round. */
static bool server_on_frame(struct doca_comch_server *server, struct doca_comch_connection *conn,
			    const struct comch_frame *f)
{
	if (conn->state == COMCH_CONN_HANDSHAKE) {
		if (f->type != COMCH_FRAME_HELLO) {
			SDK_LOG_ERR_RL("comch server \"%s\": a client sent a %u frame before HELLO; dropped",
				       server->ep.name, f->type);
			frame_fds_close(f);
			conn_kill(conn, DOCA_ERROR_CONNECTION_ABORTED);
			return false;
		}
		server_on_hello(server, conn, f);
		return conn->state == COMCH_CONN_ESTABLISHED;
	}
	switch (f->type) {
	case COMCH_FRAME_MSG:
		conn_deliver_msg(conn, f);
		return true;
	case COMCH_FRAME_CONSUMER_NEW:
	case COMCH_FRAME_CONSUMER_GONE:
		if (conn_on_consumer_frame(conn, f))
			return conn->state == COMCH_CONN_ESTABLISHED;
		server_conn_lost(server, conn);
		return false;
	case COMCH_FRAME_BYE:
		SDK_LOG_DBG("comch server \"%s\": connection %u closed by the client", server->ep.name, conn->id);
		server_conn_lost(server, conn);
		return false;
	default:
		SDK_LOG_ERR_RL("comch server \"%s\": connection %u sent an unexpected %u frame; dropped",
			       server->ep.name, conn->id, f->type);
		server_conn_lost(server, conn);
		return false;
	}
}

static unsigned int server_read(struct doca_comch_server *server, struct doca_comch_connection *conn, uint64_t now)
{
	unsigned int events = 0;

	for (unsigned int i = 0; i < COMCH_RECV_BUDGET; i++) {
		struct comch_frame f;
		doca_error_t status;

		if (conn->state == COMCH_CONN_DEAD || server->ep.ctx.state != DOCA_CTX_STATE_RUNNING)
			break;
		status = conn_recv(conn, "comch server", &f);
		if (status == DOCA_ERROR_AGAIN)
			break;
		events++;
		if (status != DOCA_SUCCESS) {
			server_conn_lost(server, conn); /* closed, died, or malformed (logged) */
			break;
		}
		if (!server_on_frame(server, conn, &f))
			break;
	}
	if (conn->state == COMCH_CONN_HANDSHAKE && now > conn->deadline_ns) {
		SDK_LOG_ERR_RL("comch server \"%s\": a client connected but sent no valid HELLO in %llu ms; dropped",
			       server->ep.name, COMCH_HANDSHAKE_NS / 1000000ull);
		conn_kill(conn, DOCA_ERROR_TIME_OUT);
	}
	return events;
}

static unsigned int server_accept(struct doca_comch_server *server, uint64_t now)
{
	unsigned int events = 0;

	for (unsigned int i = 0; i < COMCH_ACCEPT_BUDGET && server->listener.fd >= 0; i++) {
		struct doca_comch_connection *conn;
		int fd;

		if (comch_listener_accept(&server->listener, &fd) != DOCA_SUCCESS)
			break;
		if (server->num_pending >= COMCH_MAX_PENDING) {
			/* Silent connections cannot pile up: each waits 2 s at most,
			 * and only so many at once. */
			SDK_LOG_ERR_RL("comch server \"%s\": %u clients are still in their handshake; refused one more",
				       server->ep.name, server->num_pending);
			close(fd);
			continue;
		}
		conn = conn_new(&server->ep, fd);
		if (conn == NULL)
			continue;
		conn->deadline_ns = now + COMCH_HANDSHAKE_NS;
		server->num_pending++;
		comch_watch_fd(&server->ep.watch, conn->chan.fd, false);
		conn->next = server->ep.conns;
		server->ep.conns = conn;
		events++;
	}
	return events;
}

static unsigned int server_progress(struct doca_ctx *ctx)
{
	struct doca_comch_server *server = server_from_ep(ep_from_ctx(ctx));
	uint64_t now = now_ns();
	unsigned int events;

	if (ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	comch_watch_rearm(&server->ep.watch);
	events = server_accept(server, now);
	for (struct doca_comch_connection *c = server->ep.conns; c != NULL; c = c->next) {
		if (ctx->state != DOCA_CTX_STATE_RUNNING)
			break; /* a callback stopped the context */
		events += conn_flush(c);
		events += server_read(server, c, now);
	}
	ep_sweep(&server->ep);
	return events;
}

static doca_error_t server_start(struct doca_ctx *ctx)
{
	struct doca_comch_server *server = server_from_ep(ep_from_ctx(ctx));
	doca_error_t status;

	server->num_conns = 0;
	server->num_pending = 0;
	status = softdoca_dev_rep_pcie_link(server->repr, &server->link);
	if (status != DOCA_SUCCESS)
		return status;
	status = comch_listener_open(&server->listener, &server->link, server->ep.name);
	if (status != DOCA_SUCCESS)
		return status;
	status = comch_watch_open(&server->ep.watch, ctx->pe);
	if (status != DOCA_SUCCESS) {
		comch_listener_close(&server->listener);
		return status;
	}
	comch_watch_fd(&server->ep.watch, server->listener.fd, false);
	return DOCA_SUCCESS;
}

static void server_stop(struct doca_ctx *ctx)
{
	struct doca_comch_server *server = server_from_ep(ep_from_ctx(ctx));

	comch_listener_close(&server->listener);
	ep_stop(ctx);
}

static void server_stopped(struct doca_ctx *ctx)
{
	struct comch_ep *ep = ep_from_ctx(ctx);

	comch_listener_close(&server_from_ep(ep)->listener);
	comch_watch_close(&ep->watch);
	ep_free_conns(ep);
}

static const struct softdoca_ctx_ops server_ctx_ops = {
	.name = "comch_server",
	.start = server_start,
	.stop = server_stop,
	.stopped = server_stopped,
	.progress = server_progress,
	.deliver = server_deliver,
	.has_work = ep_has_work,
};

/* ---- client ---- */

static doca_error_t reject_status(uint32_t reason)
{
	switch (reason) {
	case COMCH_REJECT_NAME:
		return DOCA_ERROR_NOT_FOUND;
	case COMCH_REJECT_SECRET:
		return DOCA_ERROR_NOT_PERMITTED;
	case COMCH_REJECT_FULL:
		return DOCA_ERROR_FULL;
	default:
		return DOCA_ERROR_INVALID_VALUE;
	}
}

/* The start failed: the context goes IDLE and gives back what the start
 * took (the socket, the watch's epoll set), as a stop does; a new start
 * takes them again. */
static void client_start_failed(struct doca_comch_client *client, doca_error_t status)
{
	if (client->ep.conns != NULL)
		comch_chan_fini(&client->ep.conns->chan);
	comch_watch_close(&client->ep.watch);
	softdoca_ctx_start_done(&client->ep.ctx, status);
}

/* Starting: connect and say HELLO (retrying while the server is absent). */
static void client_try_connect(struct doca_comch_client *client, struct doca_comch_connection *conn, uint64_t now)
{
	uint8_t secret[COMCH_SECRET_LEN];
	uint8_t hello[COMCH_HELLO_FIXED_LEN + COMCH_MAX_NAME_LEN];
	uint32_t len;
	doca_error_t status;
	int fd;

	if (now < client->next_try_ns)
		return;
	client->next_try_ns = now + COMCH_RETRY_NS;
	status = comch_connect(&client->link, client->ep.name, &fd, secret);
	if (status != DOCA_SUCCESS) {
		if (status != DOCA_ERROR_NOT_FOUND && status != DOCA_ERROR_AGAIN) {
			client_start_failed(client, status);
			return;
		}
		if (!client->wait_explained && softdoca_explain_after_ms() != 0 &&
		    now - client->start_ns > softdoca_explain_after_ms() * 1000000ull) {
			SDK_LOG_WARN("comch client: no server \"%s\" on PCIe function %s (rendezvous %s) yet; still "
				     "trying (is the server started, on the representor of this function?)",
				     client->ep.name, client->link.pci_addr, client->link.dir);
			client->wait_explained = true;
		}
		return;
	}
	if (comch_chan_init(&conn->chan, fd) != DOCA_SUCCESS) {
		client_start_failed(client, DOCA_ERROR_NO_MEMORY);
		return;
	}
	comch_watch_fd(&client->ep.watch, conn->chan.fd, false);
	len = comch_hello_encode(hello, client->ep.max_msg_size, client->ep.recv_queue_size, client->ep.name,
				 (uint16_t)strlen(client->ep.name), secret);
	if (comch_chan_send(&conn->chan, COMCH_FRAME_HELLO, hello, len) != DOCA_SUCCESS)
		comch_chan_fini(&conn->chan); /* the server went away at once: retry */
}

static void client_on_handshake(struct doca_comch_client *client, struct doca_comch_connection *conn,
				const struct comch_frame *f)
{
	if (f->type == COMCH_FRAME_REJECT && f->u.reject.reason == COMCH_REJECT_SECRET &&
	    ++client->secret_refusals <= COMCH_SECRET_RETRIES) {
		/* A server that was replaced (a new one started where one was
		 * killed) answers the secret we read of the old one: read its
		 * own and try again, a few times. */
		SDK_LOG_DBG("comch client: server \"%s\" refused our secret: it may be a new server; trying again",
			    client->ep.name);
		comch_chan_fini(&conn->chan);
		return;
	}
	if (f->type == COMCH_FRAME_REJECT) {
		/* Rate-limited: a full server refuses every client a program
		 * starts, and a program may start many. */
		SDK_LOG_ERR_RL("comch client: server \"%s\" refused the connection (reason %u: %s)", client->ep.name,
			       f->u.reject.reason, reject_reason_name(f->u.reject.reason));
		client_start_failed(client, reject_status(f->u.reject.reason));
		return;
	}
	frame_fds_close(f);
	if (f->type != COMCH_FRAME_WELCOME || f->u.welcome.max_msg_size == 0 ||
	    f->u.welcome.max_msg_size > COMCH_MAX_MSG_SIZE) {
		SDK_LOG_ERR("comch client: server \"%s\" answered HELLO with a bad %u frame", client->ep.name,
			    f->type);
		client_start_failed(client, DOCA_ERROR_CONNECTION_ABORTED);
		return;
	}
	conn->id = f->u.welcome.conn_id;
	conn->max_msg_size = f->u.welcome.max_msg_size < client->ep.max_msg_size ? f->u.welcome.max_msg_size :
										    client->ep.max_msg_size;
	conn->state = COMCH_CONN_ESTABLISHED;
	SDK_LOG_DBG("comch client: connected to \"%s\" (connection %u)", client->ep.name, conn->id);
	softdoca_ctx_start_done(&client->ep.ctx, DOCA_SUCCESS);
}

static unsigned int client_read(struct doca_comch_client *client, struct doca_comch_connection *conn)
{
	unsigned int events = 0;

	for (unsigned int i = 0; i < COMCH_RECV_BUDGET && conn->chan.fd >= 0; i++) {
		enum doca_ctx_states state = client->ep.ctx.state;
		struct comch_frame f;
		doca_error_t status;

		if ((state != DOCA_CTX_STATE_RUNNING && state != DOCA_CTX_STATE_STARTING) || client->close_pending)
			break;
		status = conn_recv(conn, "comch client", &f);
		if (status == DOCA_ERROR_AGAIN)
			break;
		events++;
		if (state == DOCA_CTX_STATE_STARTING) {
			if (status == DOCA_SUCCESS) {
				client_on_handshake(client, conn, &f);
			} else {
				/* Server left mid-handshake: start over (retry timer). */
				comch_chan_fini(&conn->chan);
				if (status == DOCA_ERROR_INVALID_VALUE)
					client_start_failed(client, DOCA_ERROR_CONNECTION_ABORTED);
			}
			break;
		}
		if (status == DOCA_SUCCESS && f.type == COMCH_FRAME_MSG) {
			conn_deliver_msg(conn, &f);
			continue;
		}
		if (status == DOCA_SUCCESS &&
		    (f.type == COMCH_FRAME_CONSUMER_NEW || f.type == COMCH_FRAME_CONSUMER_GONE)) {
			if (conn_on_consumer_frame(conn, &f))
				continue;
			status = DOCA_ERROR_INVALID_VALUE; /* logged: drop the connection */
		}
		if (status == DOCA_SUCCESS && f.type != COMCH_FRAME_BYE)
			SDK_LOG_ERR("comch client: server \"%s\" sent an unexpected %u frame", client->ep.name, f.type);
		client->close_pending = status == DOCA_SUCCESS && f.type == COMCH_FRAME_BYE ? CLIENT_CLOSE_BYE :
											 CLIENT_CLOSE_LOST;
		break;
	}
	return events;
}

static unsigned int client_progress(struct doca_ctx *ctx)
{
	struct doca_comch_client *client = client_from_ep(ep_from_ctx(ctx));
	struct doca_comch_connection *conn = client->ep.conns;
	unsigned int events = 0;

	if (conn == NULL)
		return 0;
	comch_watch_rearm(&client->ep.watch);
	if (ctx->state == DOCA_CTX_STATE_STARTING && conn->chan.fd < 0)
		client_try_connect(client, conn, now_ns());
	if (ctx->state == DOCA_CTX_STATE_RUNNING && !client->close_pending)
		events += conn_flush(conn);
	events += client_read(client, conn);
	return events;
}

/*
 * After the task completions of this doca_pe_progress: the end of a
 * connection the server closed or lost (its consumers' expiry, then the
 * context's stop). Completions queued before are delivered first, as for
 * the server's disconnection callback; the sends the end flushes follow
 * the STOPPING state change, as any stop's flush does.
 */
static unsigned int client_deliver(struct doca_ctx *ctx)
{
	struct doca_comch_client *client = client_from_ep(ep_from_ctx(ctx));
	struct doca_comch_connection *conn = client->ep.conns;
	enum client_close why = (enum client_close)client->close_pending;

	if (why == CLIENT_CLOSE_NONE)
		return 0;
	client->close_pending = CLIENT_CLOSE_NONE;
	/* Stopped meanwhile (from a callback): the stop closed it. */
	if (conn == NULL || ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	conn_expire_consumers(conn);
	conn_kill(conn, DOCA_ERROR_CONNECTION_RESET);
	if (why == CLIENT_CLOSE_BYE)
		softdoca_ctx_end(ctx, "its server closed the connection");
	else
		softdoca_ctx_fail(ctx, DOCA_ERROR_CONNECTION_RESET);
	return 1;
}

static doca_error_t client_start(struct doca_ctx *ctx)
{
	struct doca_comch_client *client = client_from_ep(ep_from_ctx(ctx));
	struct doca_comch_connection *conn;
	doca_error_t status;

	/* A start that failed during the handshake left its connection. */
	ep_free_conns(&client->ep);
	client->close_pending = CLIENT_CLOSE_NONE;
	status = softdoca_dev_pcie_link(ctx->dev, &client->link);
	if (status != DOCA_SUCCESS)
		return status;
	comch_watch_close(&client->ep.watch);
	status = comch_watch_open(&client->ep.watch, ctx->pe);
	if (status != DOCA_SUCCESS)
		return status;
	conn = conn_new(&client->ep, -1);
	if (conn == NULL) {
		comch_watch_close(&client->ep.watch);
		return DOCA_ERROR_NO_MEMORY;
	}
	client->ep.conns = conn;
	client->start_ns = now_ns();
	client->secret_refusals = 0;
	client->next_try_ns = 0;
	client->wait_explained = false;
	return DOCA_ERROR_IN_PROGRESS; /* RUNNING once the server welcomed us */
}

static void client_stopped(struct doca_ctx *ctx)
{
	comch_watch_close(&ep_from_ctx(ctx)->watch);
	ep_free_conns(ep_from_ctx(ctx));
}

static const struct softdoca_ctx_ops client_ctx_ops = {
	.name = "comch_client",
	.start = client_start,
	.stop = ep_stop,
	.stopped = client_stopped,
	.progress = client_progress,
	.deliver = client_deliver,
	.has_work = ep_has_work,
};

/* ---- create / destroy ---- */

static doca_error_t ep_init(struct comch_ep *ep, const struct softdoca_ctx_ops *ops, struct doca_dev *dev,
			    const char *name, bool is_server)
{
	ep->is_server = is_server;
	memcpy(ep->name, name, strlen(name) + 1);
	ep->max_msg_size = COMCH_MAX_MSG_SIZE;
	ep->recv_queue_size = COMCH_DEFAULT_RECV_QUEUE;
	ep->watch.epfd = -1;
	if (softdoca_ctx_init(&ep->ctx, ops, dev) != DOCA_SUCCESS)
		return DOCA_ERROR_NO_MEMORY; /* softdoca_ctx_init said why */
	softdoca_task_type_init(&ep->send_type, &ep->ctx, "comch_send", &send_ops,
				sizeof(struct doca_comch_task_send));
	return DOCA_SUCCESS;
}

/* owner: the server or client that embeds ep, freed with it on success. */
static doca_error_t ep_destroy(struct comch_ep *ep, void *owner, const char *func)
{
	doca_error_t status;

	if (softdoca_live_check(&ep->ctx, SOFTDOCA_LIVE_CTX, func) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	status = softdoca_ctx_fini(&ep->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	comch_watch_close(&ep->watch);
	ep_free_conns(ep);
	free(owner);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_server_create(struct doca_dev *dev, struct doca_dev_rep *repr, const char *name,
				      struct doca_comch_server **comch_server)
{
	struct doca_comch_server *server;

	struct softdoca_pcie_link link;

	if (dev == NULL)
		return null_arg(__func__, "dev");
	if (repr == NULL)
		return null_arg(__func__, "repr");
	if (comch_server == NULL)
		return null_arg(__func__, "server output pointer");
	if (comch_name_check(name, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	/* The server lives on the representor's PCIe function: it must be an
	 * open representor (its link is taken again at start). */
	if (softdoca_dev_rep_pcie_link(repr, &link) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	server = calloc(1, sizeof(*server));
	if (server == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	server->listener.fd = -1;
	server->repr = repr;
	if (ep_init(&server->ep, &server_ctx_ops, dev, name, true) != DOCA_SUCCESS) {
		free(server);
		return DOCA_ERROR_NO_MEMORY;
	}
	*comch_server = server;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_server_destroy(struct doca_comch_server *comch_server)
{
	if (comch_server == NULL)
		return null_arg(__func__, "comch_server");
	return ep_destroy(&comch_server->ep, comch_server, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_client_create(struct doca_dev *dev, const char *name, struct doca_comch_client **comch_client)
{
	struct doca_comch_client *client;

	if (dev == NULL)
		return null_arg(__func__, "dev");
	if (comch_client == NULL)
		return null_arg(__func__, "client output pointer");
	if (comch_name_check(name, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	client = calloc(1, sizeof(*client));
	if (client == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (ep_init(&client->ep, &client_ctx_ops, dev, name, false) != DOCA_SUCCESS) {
		free(client);
		return DOCA_ERROR_NO_MEMORY;
	}
	*comch_client = client;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_client_destroy(struct doca_comch_client *comch_client)
{
	if (comch_client == NULL)
		return null_arg(__func__, "comch_client");
	return ep_destroy(&comch_client->ep, comch_client, __func__);
}

DOCA_STABLE
struct doca_ctx *doca_comch_server_as_ctx(struct doca_comch_server *comch_server)
{
	return comch_server == NULL ? NULL : &comch_server->ep.ctx;
}

DOCA_STABLE
struct doca_ctx *doca_comch_client_as_ctx(struct doca_comch_client *comch_client)
{
	return comch_client == NULL ? NULL : &comch_client->ep.ctx;
}

/* ---- properties ---- */

static doca_error_t ep_set_max_msg_size(struct comch_ep *ep, uint32_t size, const char *func)
{
	if (softdoca_ctx_check_idle(&ep->ctx, func) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (size == 0 || size > COMCH_MAX_MSG_SIZE) {
		SDK_LOG_ERR("%s: %u bytes (1..%u, doca_comch_cap_get_max_msg_size)", func, size, COMCH_MAX_MSG_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ep->max_msg_size = size;
	return DOCA_SUCCESS;
}

static doca_error_t ep_set_recv_queue_size(struct comch_ep *ep, uint32_t size, const char *func)
{
	if (softdoca_ctx_check_idle(&ep->ctx, func) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (size == 0 || size > COMCH_MAX_RECV_QUEUE) {
		SDK_LOG_ERR("%s: %u entries (1..%u, doca_comch_cap_get_max_recv_queue_size)", func, size,
			    COMCH_MAX_RECV_QUEUE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ep->recv_queue_size = size;
	return DOCA_SUCCESS;
}

/* A server's or client's uint32_t getter: field is NULL when the object is. */
static doca_error_t ep_get_u32(const uint32_t *field, const char *who, uint32_t *size, const char *func)
{
	if (field == NULL || size == NULL)
		return null_arg(func, field == NULL ? who : "size");
	*size = *field;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_server_set_max_msg_size(struct doca_comch_server *comch_server, uint32_t size)
{
	if (comch_server == NULL)
		return null_arg(__func__, "comch_server");
	return ep_set_max_msg_size(&comch_server->ep, size, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_client_set_max_msg_size(struct doca_comch_client *comch_client, uint32_t size)
{
	if (comch_client == NULL)
		return null_arg(__func__, "comch_client");
	return ep_set_max_msg_size(&comch_client->ep, size, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_server_get_max_msg_size(const struct doca_comch_server *comch_server, uint32_t *size)
{
	return ep_get_u32(comch_server == NULL ? NULL : &comch_server->ep.max_msg_size, "comch_server", size, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_client_get_max_msg_size(const struct doca_comch_client *comch_client, uint32_t *size)
{
	return ep_get_u32(comch_client == NULL ? NULL : &comch_client->ep.max_msg_size, "comch_client", size, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_server_set_recv_queue_size(struct doca_comch_server *comch_server, uint32_t size)
{
	if (comch_server == NULL)
		return null_arg(__func__, "comch_server");
	return ep_set_recv_queue_size(&comch_server->ep, size, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_client_set_recv_queue_size(struct doca_comch_client *comch_client, uint32_t size)
{
	if (comch_client == NULL)
		return null_arg(__func__, "comch_client");
	return ep_set_recv_queue_size(&comch_client->ep, size, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_server_get_recv_queue_size(const struct doca_comch_server *comch_server, uint32_t *size)
{
	return ep_get_u32(comch_server == NULL ? NULL : &comch_server->ep.recv_queue_size, "comch_server", size,
			  __func__);
}

DOCA_STABLE
doca_error_t doca_comch_client_get_recv_queue_size(const struct doca_comch_client *comch_client, uint32_t *size)
{
	return ep_get_u32(comch_client == NULL ? NULL : &comch_client->ep.recv_queue_size, "comch_client", size,
			  __func__);
}

DOCA_STABLE
doca_error_t doca_comch_server_get_device(const struct doca_comch_server *comch_server, struct doca_dev **dev)
{
	if (comch_server == NULL || dev == NULL)
		return null_arg(__func__, comch_server == NULL ? "comch_server" : "dev");
	*dev = comch_server->ep.ctx.dev;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_client_get_device(const struct doca_comch_client *comch_client, struct doca_dev **dev)
{
	if (comch_client == NULL || dev == NULL)
		return null_arg(__func__, comch_client == NULL ? "comch_client" : "dev");
	*dev = comch_client->ep.ctx.dev;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_server_get_device_rep(const struct doca_comch_server *comch_server,
					       struct doca_dev_rep **repr)
{
	if (comch_server == NULL || repr == NULL)
		return null_arg(__func__, comch_server == NULL ? "comch_server" : "repr");
	*repr = comch_server->repr;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_client_get_connection(const struct doca_comch_client *comch_client,
					      struct doca_comch_connection **connection)
{
	if (comch_client == NULL || connection == NULL)
		return null_arg(__func__, comch_client == NULL ? "comch_client" : "connection");
	if (comch_client->ep.ctx.state != DOCA_CTX_STATE_RUNNING || comch_client->ep.conns == NULL)
		return softdoca_ctx_check_state(&comch_client->ep.ctx, SOFTDOCA_CTX_STATE_BIT(DOCA_CTX_STATE_RUNNING),
						__func__, "progress the PE until the client is running (connected)");
	*connection = comch_client->ep.conns;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_server_disconnect(struct doca_comch_server *comch_server,
					  struct doca_comch_connection *connection)
{
	if (comch_server == NULL || connection == NULL)
		return null_arg(__func__, comch_server == NULL ? "comch_server" : "connection");
	if (!ep_owns(&comch_server->ep, connection) || connection->state != COMCH_CONN_ESTABLISHED) {
		SDK_LOG_ERR("%s: not an established connection of server \"%s\"", __func__, comch_server->ep.name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (comch_chan_send(&connection->chan, COMCH_FRAME_BYE, NULL, 0) == DOCA_ERROR_AGAIN) {
		SDK_LOG_DBG("%s: the client's queue is full; call again", __func__);
		return DOCA_ERROR_AGAIN;
	}
	conn_kill(connection, DOCA_ERROR_CONNECTION_ABORTED);
	return DOCA_SUCCESS;
}

/* ---- tasks and events ---- */

static doca_error_t ep_task_send_set_conf(struct comch_ep *ep, doca_comch_task_send_completion_cb_t completion_cb,
					  doca_comch_task_send_completion_cb_t error_cb, uint32_t num_send_tasks)
{
	return softdoca_task_type_set_conf(&ep->send_type, (doca_task_completion_cb_t)completion_cb,
					   (doca_task_completion_cb_t)error_cb, num_send_tasks);
}

DOCA_STABLE
doca_error_t doca_comch_server_task_send_set_conf(struct doca_comch_server *comch_server,
						  doca_comch_task_send_completion_cb_t task_completion_cb,
						  doca_comch_task_send_completion_cb_t task_error_cb,
						  uint32_t num_send_tasks)
{
	if (comch_server == NULL)
		return null_arg(__func__, "comch_server");
	return ep_task_send_set_conf(&comch_server->ep, task_completion_cb, task_error_cb, num_send_tasks);
}

DOCA_STABLE
doca_error_t doca_comch_client_task_send_set_conf(struct doca_comch_client *comch_client,
						  doca_comch_task_send_completion_cb_t task_completion_cb,
						  doca_comch_task_send_completion_cb_t task_error_cb,
						  uint32_t num_send_tasks)
{
	if (comch_client == NULL)
		return null_arg(__func__, "comch_client");
	return ep_task_send_set_conf(&comch_client->ep, task_completion_cb, task_error_cb, num_send_tasks);
}

DOCA_STABLE
doca_error_t doca_comch_server_task_send_alloc_init(struct doca_comch_server *comch_server,
						    struct doca_comch_connection *peer, const void *msg, uint32_t len,
						    struct doca_comch_task_send **task)
{
	if (comch_server == NULL)
		return null_arg(__func__, "comch_server");
	return send_alloc(&comch_server->ep, peer, msg, len, task, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_client_task_send_alloc_init(struct doca_comch_client *comch_client,
						    struct doca_comch_connection *peer, const void *msg, uint32_t len,
						    struct doca_comch_task_send **task)
{
	if (comch_client == NULL)
		return null_arg(__func__, "comch_client");
	return send_alloc(&comch_client->ep, peer, msg, len, task, __func__);
}

DOCA_STABLE
struct doca_task *doca_comch_task_send_as_task(struct doca_comch_task_send *task)
{
	return task == NULL ? NULL : &task->task;
}

static doca_error_t ep_register_recv(struct comch_ep *ep, doca_comch_event_msg_recv_cb_t cb, const char *func)
{
	if (cb == NULL)
		return null_arg(func, "recv_event_cb");
	if (softdoca_ctx_check_idle(&ep->ctx, func) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	ep->recv_cb = cb;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_server_event_msg_recv_register(struct doca_comch_server *comch_server,
						       doca_comch_event_msg_recv_cb_t recv_event_cb)
{
	if (comch_server == NULL)
		return null_arg(__func__, "comch_server");
	return ep_register_recv(&comch_server->ep, recv_event_cb, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_client_event_msg_recv_register(struct doca_comch_client *comch_client,
						       doca_comch_event_msg_recv_cb_t recv_event_cb)
{
	if (comch_client == NULL)
		return null_arg(__func__, "comch_client");
	return ep_register_recv(&comch_client->ep, recv_event_cb, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_server_event_connection_status_changed_register(
	struct doca_comch_server *comch_server,
	doca_comch_event_connection_status_changed_cb_t connect_event_cb,
	doca_comch_event_connection_status_changed_cb_t disconnect_event_cb)
{
	if (comch_server == NULL)
		return null_arg(__func__, "comch_server");
	if (connect_event_cb == NULL || disconnect_event_cb == NULL)
		return null_arg(__func__, connect_event_cb == NULL ? "connect_event_cb" : "disconnect_event_cb");
	if (softdoca_ctx_check_idle(&comch_server->ep.ctx, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	comch_server->connect_cb = connect_event_cb;
	comch_server->disconnect_cb = disconnect_event_cb;
	return DOCA_SUCCESS;
}

/* Consumers are not implemented yet (doca_comch_consumer_create says so):
 * the callbacks are kept, and never fire. */
static doca_error_t ep_register_consumer(struct comch_ep *ep, doca_comch_event_consumer_cb_t new_cb,
					 doca_comch_event_consumer_cb_t expired_cb, const char *func)
{
	if (new_cb == NULL || expired_cb == NULL)
		return null_arg(func, new_cb == NULL ? "new_consumer_event_cb" : "expired_consumer_event_cb");
	if (softdoca_ctx_check_idle(&ep->ctx, func) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	ep->new_consumer_cb = new_cb;
	ep->expired_consumer_cb = expired_cb;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_server_event_consumer_register(struct doca_comch_server *comch_server,
						       doca_comch_event_consumer_cb_t new_consumer_event_cb,
						       doca_comch_event_consumer_cb_t expired_consumer_event_cb)
{
	if (comch_server == NULL)
		return null_arg(__func__, "comch_server");
	return ep_register_consumer(&comch_server->ep, new_consumer_event_cb, expired_consumer_event_cb, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_client_event_consumer_register(struct doca_comch_client *comch_client,
						       doca_comch_event_consumer_cb_t new_consumer_event_cb,
						       doca_comch_event_consumer_cb_t expired_consumer_event_cb)
{
	if (comch_client == NULL)
		return null_arg(__func__, "comch_client");
	return ep_register_consumer(&comch_client->ep, new_consumer_event_cb, expired_consumer_event_cb, __func__);
}

/* ---- connection accessors ---- */

DOCA_STABLE
doca_error_t doca_comch_connection_set_user_data(struct doca_comch_connection *connection, union doca_data user_data)
{
	if (connection == NULL)
		return null_arg(__func__, "connection");
	connection->user_data = user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
union doca_data doca_comch_connection_get_user_data(const struct doca_comch_connection *connection)
{
	union doca_data none = {.u64 = 0};

	if (connection == NULL) {
		SDK_LOG_ERR("%s: connection is NULL", __func__);
		return none;
	}
	return connection->user_data;
}

DOCA_STABLE
struct doca_comch_server *doca_comch_server_get_server_ctx(const struct doca_comch_connection *connection)
{
	if (connection == NULL || !connection->ep->is_server)
		return NULL;
	return server_from_ep(connection->ep);
}

DOCA_STABLE
struct doca_comch_client *doca_comch_client_get_client_ctx(const struct doca_comch_connection *connection)
{
	if (connection == NULL || connection->ep->is_server)
		return NULL;
	return client_from_ep(connection->ep);
}

DOCA_STABLE
doca_error_t doca_comch_connection_update_info(struct doca_comch_connection *comch_connection)
{
	if (comch_connection == NULL)
		return null_arg(__func__, "comch_connection");
	if (comch_connection->state == COMCH_CONN_HANDSHAKE)
		return DOCA_ERROR_CONNECTION_INPROGRESS;
	if (comch_connection->state == COMCH_CONN_DEAD)
		return DOCA_ERROR_CONNECTION_ABORTED;
	memcpy(comch_connection->snapshot, comch_connection->counters, sizeof(comch_connection->snapshot));
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_connection_get_counter(const struct doca_comch_connection *comch_connection,
					       enum doca_comch_counter counter_type, uint64_t *counter_value)
{
	if (comch_connection == NULL || counter_value == NULL)
		return null_arg(__func__, comch_connection == NULL ? "comch_connection" : "counter_value");
	if (counter_type < DOCA_COMCH_COUNTER_SENT_MESSAGES || counter_type > DOCA_COMCH_COUNTER_RECV_BYTES) {
		SDK_LOG_ERR("%s: unknown counter %d", __func__, (int)counter_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*counter_value = comch_connection->snapshot[counter_type - 1];
	return DOCA_SUCCESS;
}

/* ---- capabilities ---- */

doca_error_t comch_cap_u32(const struct doca_devinfo *devinfo, uint32_t *out, uint32_t value, const char *func)
{
	if (devinfo == NULL || out == NULL)
		return null_arg(func, devinfo == NULL ? "devinfo" : "output");
	*out = value;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_cap_get_max_name_len(const struct doca_devinfo *devinfo, uint32_t *max_name_len)
{
	return comch_cap_u32(devinfo, max_name_len, COMCH_MAX_NAME_LEN, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_cap_get_max_msg_size(const struct doca_devinfo *devinfo, uint32_t *size)
{
	return comch_cap_u32(devinfo, size, COMCH_MAX_MSG_SIZE, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *size)
{
	return comch_cap_u32(devinfo, size, COMCH_MAX_RECV_QUEUE, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_cap_get_max_clients(const struct doca_devinfo *devinfo, uint32_t *num_clients)
{
	return comch_cap_u32(devinfo, num_clients, COMCH_MAX_CLIENTS, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_cap_get_max_send_tasks(const struct doca_devinfo *devinfo, uint32_t *max_send_tasks)
{
	return comch_cap_u32(devinfo, max_send_tasks, SOFTDOCA_TASK_POOL_MAX, __func__);
}

/* The personality is fixed when a program is built (DOCA_ARCH_DPU in its
 * headers), not known to the library at run time; as with representors
 * (listed on any open soft device), every soft device can play either
 * end: server (with a representor) and client both say yes. */
DOCA_STABLE
doca_error_t doca_comch_cap_server_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_cap_client_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	return DOCA_SUCCESS;
}
