/*
 * softdoca — links: how the engine's messages travel between two peers.
 *
 * Everything the engine does above the wire (work requests, the target's
 * checks and queues, acknowledgements, batching, keepalive, failure) is
 * the same whatever carries the bytes. A link carries them:
 *
 *   ucx  UCX active messages, for peers on this host over shared memory
 *        (link_ucx.c). UCX is never given a TCP transport: its TCP
 *        receive path trusts every frame, so no stranger may reach it.
 *   tcp  softdoca's own stream link (link_tcp.c), for everything else:
 *        a connection proves it belongs to one of this context's
 *        connections (its secret) before anything else is read from it,
 *        and every frame is parsed with bounds (link_tcp_wire.c).
 *
 * Each connection uses one link, chosen when it connects (conn.c); its
 * endpoint (engine_conn.ep, opaque here) belongs to that link. Both links
 * give the engine the same primitive: an active message (an id, a small
 * header, a payload) that arrives whole ("eager") or, when large, as a
 * descriptor the receiver fetches into memory of its choice once it has
 * checked where the bytes may go (link_ops.recv_data, "rendezvous"), so
 * a payload is copied once, into its validated destination.
 *
 * Threads: every call is made with the worker lock held, and callbacks
 * (sends done, receives done, incoming messages, endpoint failures) run
 * with it held, inside the worker's progress or close.
 */
#ifndef SOFTDOCA_ENGINE_LINK_H_
#define SOFTDOCA_ENGINE_LINK_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#include "engine.h"

struct engine_worker;
struct engine_conn;
struct link_ops;

/* The links, as descriptors and logs name them. */
enum link_kind {
	LINK_NONE = 0,
	LINK_UCX = 1,
	LINK_TCP = 2,
};

/* One message that arrived, as a handler sees it. */
struct link_msg {
	uint16_t id;                 /* enum wire_am_id */
	const void *header;          /* any alignment: copy before reading */
	size_t header_len;
	void *data;                  /* eager payload, or the rendezvous descriptor */
	size_t length;               /* payload bytes */
	bool rndv;                   /* data is a descriptor: recv_data fetches the bytes */
	const struct link_ops *link; /* the link it came on */
	/* tcp: the connection its carrier proved it belongs to (the
	 * message must name it); NULL on links without such proof. */
	struct engine_conn *bound;
};

/* What a handler did with the message's data. */
enum link_rx {
	LINK_RX_DONE = 0, /* not kept: the link may reuse it (a descriptor not fetched is declined) */
	LINK_RX_KEPT,     /* kept: the engine gives it back with data_release (or fetched it) */
};

/* A send, or a rendezvous receive, is over (status DOCA_SUCCESS or why
 * not). req is what the call returned; the link frees it after this. */
typedef void (*link_cb)(void *req, doca_error_t status, void *user);

/* One message to send on a connection's endpoint. */
struct link_send {
	uint16_t id;                     /* enum wire_am_id */
	const void *header;              /* copied or kept by the link until the send is over */
	size_t header_len;
	const struct engine_sge *iov;    /* the payload: iov_count buffers of len bytes in all */
	uint32_t iov_count;
	size_t len;
	bool eager;                      /* never by rendezvous (batches, small control messages) */
	link_cb cb;                      /* NULL: nobody waits for it */
	void *user;
};

struct link_ops {
	const char *name;
	enum link_kind kind;
	/* Our endpoint to c's peer at addr, the peer's address on this link
	 * (untrusted bytes: checked before use). c->peer_id and
	 * c->peer_secret name the peer's connection. Sets c->ep. A failure
	 * later is reported with engine_link_failed. */
	doca_error_t (*ep_open)(struct engine_conn *c, const uint8_t *addr, size_t addr_len);
	/* Let what was sent on c's endpoint leave, for at most until
	 * deadline_ns (a dead peer does not hold us). */
	void (*ep_flush)(struct engine_conn *c, uint64_t deadline_ns);
	/* Close c's endpoint at once (sets c->ep to NULL); sends not gone
	 * are given up. */
	void (*ep_close)(struct engine_conn *c);
	/* Send on c's endpoint. DOCA_SUCCESS with *req NULL: over already
	 * (no callback); with *req set: s->cb runs once, later. An error:
	 * not sent, no callback. */
	doca_error_t (*send)(struct engine_conn *c, const struct link_send *s, void **req);
	/* Fetch a rendezvous payload (a message's data with rndv set) into
	 * iov (iov_count buffers, len bytes). Return as for send. */
	doca_error_t (*recv_data)(struct engine_worker *w, void *data, const struct engine_sge *iov, uint32_t iov_count,
				  size_t len, link_cb cb, void *user, void **req);
	/* Give back a message's data that a handler kept (LINK_RX_KEPT);
	 * rndv: it is a rendezvous descriptor (not fetched: declined). */
	void (*data_release)(struct engine_worker *w, void *data, bool rndv);
	/* Ask for a request in flight to end soon (its callback says how). */
	void (*cancel)(struct engine_worker *w, void *req);
};

extern const struct link_ops link_ucx_ops;
extern const struct link_ops link_tcp_ops;

/* The engine, called by the links (conn.c): an incoming message, and a
 * connection's endpoint that failed (the peer is gone or unreachable). */
enum link_rx engine_on_msg(struct engine_worker *w, const struct link_msg *m);
void engine_link_failed(struct engine_conn *c, doca_error_t status, const char *why);

#endif /* SOFTDOCA_ENGINE_LINK_H_ */
