/*
 * softdoca — the TCP link's worker-level calls (link_tcp.c): what the
 * engine's worker and service thread need beyond struct link_ops.
 */
#ifndef SOFTDOCA_ENGINE_LINK_TCP_H_
#define SOFTDOCA_ENGINE_LINK_TCP_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

#include "link_tcp_wire.h"

struct doca_dev;
struct engine_worker;
struct engine_conn;
struct link_tcp;

/* Listen for this worker's peers on the device's address that GID
 * gid_index names (an ephemeral port). Sets w->tcp. */
doca_error_t link_tcp_open(struct engine_worker *w, struct doca_dev *dev, uint32_t gid_index);
/* Close every socket and free everything; no callback runs. */
void link_tcp_close(struct engine_worker *w);

/* Read and write what the sockets let us, run callbacks that are due.
 * Returns how much happened (0: nothing). With no socket but the
 * listener it looks at the listener once a millisecond at most; look:
 * now (before the worker sleeps on link_tcp_fd). */
unsigned int link_tcp_progress(struct link_tcp *lt);
unsigned int link_tcp_poll(struct link_tcp *lt, bool look);
/* Whether the worker may sleep on link_tcp_fd: nothing due without a
 * socket event. */
bool link_tcp_idle(const struct link_tcp *lt);
/* The fd the service thread sleeps on (readable: a socket has events). */
int link_tcp_fd(const struct link_tcp *lt);
/* Close sockets that did not authenticate in time. */
void link_tcp_expire(struct link_tcp *lt, uint64_t now);
/* Sockets waiting for their authentication (no lock: a hint). */
bool link_tcp_has_deadlines(const struct link_tcp *lt);

/* Our address (descriptors, HELLO). */
void link_tcp_self(const struct link_tcp *lt, struct lt_addr *addr);

/* c was exported with a new secret: a peer may now authenticate for it.
 * Anything c's slot had (sockets, data) is dropped. */
void link_tcp_conn_expect(struct link_tcp *lt, struct engine_conn *c);
/* c is over: its sockets close, what they carried is dropped (kept
 * data stays valid until given back). */
void link_tcp_conn_reset(struct link_tcp *lt, struct engine_conn *c);

#endif /* SOFTDOCA_ENGINE_LINK_TCP_H_ */
