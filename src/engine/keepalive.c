/*
 * softdoca — liveness of connections: keepalive and the timeout floor.
 *
 * RC hardware fails an operation that gets no acknowledgement within its
 * retransmission timeout, and the QP with it. Our transports do not: TCP
 * retries for a quarter of an hour while a link is down, and shared memory
 * cannot tell a dead peer from a quiet one. So every connection that has
 * an endpoint is watched here, on both sides (an idle side notices too):
 * any valid message from the peer is a sign of life; a peer quiet for an
 * interval gets a PING, which its engine answers with a PONG (its service
 * thread does, so a blocked application is not mistaken for a dead one,
 * and a long transfer is not either: the peer keeps answering); a peer
 * quiet for the timeout is gone, and its connection fails (in-flight
 * operations with DOCA_ERROR_CONNECTION_ABORTED, the failure callback).
 * One exception: on a byte stream (TCP) the peer's answers queue behind
 * a large transfer, so while rendezvous data moves on the connection the
 * peer gets longer, as if the data arrived at no less than
 * BULK_FLOOR_BYTES_PER_S (a live but slow link stays up; a dead one
 * mid-transfer is still noticed).
 *
 * Nothing a peer says about itself decides its liveness: the pid in a
 * descriptor only lets us ask sooner (engine_keepalive_suspect), and only
 * a peer that then stays silent is failed.
 *
 * SOFTDOCA_CONN_TIMEOUT_MS sets the timeout (default 8000 ms, so a dead
 * peer is noticed within 10 s); DOCA has no property for it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core_engine.h"
#include "engine_internal.h"

SDK_LOG_REGISTER(ENGINE::KEEPALIVE)

#define TIMEOUT_ENV "SOFTDOCA_CONN_TIMEOUT_MS"
#define TIMEOUT_DEFAULT_MS 8000ULL
#define TIMEOUT_MIN_MS 100ULL
#define TIMEOUT_MAX_MS 3600000ULL
#define INTERVAL_MAX_NS 1000000000ULL
#define BULK_FLOOR_BYTES_PER_S (10ULL * 1000 * 1000)
/* A peer whose process seems gone must answer a PING within this. */
#define SUSPECT_GRACE_NS 300000000ULL
/* We connected, the peer has not (no HELLO) for this long: what is in
 * flight fails as not connected (the target side gives up after 30 s). */
#define PEER_CONNECT_WAIT_NS (32ULL * 1000000000ULL)

static pthread_once_t timeouts_once = PTHREAD_ONCE_INIT;
static struct engine_timeouts timeouts;

static void timeouts_read(void)
{
	const char *text = getenv(TIMEOUT_ENV);
	uint64_t ms = TIMEOUT_DEFAULT_MS;

	if (text != NULL && text[0] != '\0' && !softdoca_parse_uint(text, TIMEOUT_MIN_MS, TIMEOUT_MAX_MS, &ms))
		SDK_LOG_WARN("%s='%s' is not a number of milliseconds in [%llu, %llu]: using %llu", TIMEOUT_ENV, text,
			     TIMEOUT_MIN_MS, TIMEOUT_MAX_MS, TIMEOUT_DEFAULT_MS);
	timeouts.timeout_ns = ms * 1000000ULL;
	timeouts.interval_ns = timeouts.timeout_ns / 4 < INTERVAL_MAX_NS ? timeouts.timeout_ns / 4 : INTERVAL_MAX_NS;
}

const struct engine_timeouts *engine_timeouts(void)
{
	pthread_once(&timeouts_once, timeouts_read);
	return &timeouts;
}

static void ping_send(struct engine_conn *c, uint16_t flags)
{
	struct wire_ping ping = {0};

	ping.version = WIRE_VERSION;
	ping.flags = flags;
	ping.dst_conn_id = c->peer_id;
	memcpy(ping.dst_secret, c->peer_secret, ENGINE_SECRET_LEN);
	(void)engine_send_ctl(c, WIRE_AM_PING, &ping, sizeof(ping), NULL, 0);
}

/* c now has an endpoint: watch it. Lock held. */
void engine_keepalive_start(struct engine_conn *c)
{
	struct engine_worker *w = c->worker;
	uint64_t now = engine_now_ns();

	if (c->connected_ns != 0)
		return;
	c->connected_ns = now;
	c->last_heard_ns = now;
	c->heard = false;
	if (atomic_fetch_add(&w->monitored, 1) == 0)
		w->keepalive_next_ns = now + engine_timeouts()->interval_ns;
	engine_svc_kick(); /* the service thread sleeps less from now on */
}

/* c is closing. Lock held. */
void engine_keepalive_stop(struct engine_conn *c)
{
	struct engine_worker *w = c->worker;

	if (c->suspect_ns != 0) {
		c->suspect_ns = 0;
		atomic_fetch_sub(&w->suspects, 1);
	}
	if (c->connected_ns != 0) {
		c->connected_ns = 0;
		atomic_fetch_sub(&w->monitored, 1);
	}
}

/* Something (the peer's pid exited) says the peer may be gone: ask it,
 * and fail it only if it stays silent. Lock held. */
void engine_keepalive_suspect(struct engine_conn *c)
{
	if (c->connected_ns == 0 || c->suspect_ns != 0 || c->ep == NULL)
		return;
	c->heard = false;
	c->suspect_ns = engine_now_ns() + SUSPECT_GRACE_NS;
	atomic_fetch_add(&c->worker->suspects, 1);
	ping_send(c, 0);
	engine_svc_kick();
}

/* A suspect answered, stayed silent, or is still within its grace.
 * Returns true when c was failed. */
static bool suspect_check(struct engine_conn *c, uint64_t now)
{
	if (c->heard) {
		SDK_LOG_WARN("connection %u: the process named in the peer's descriptor exited, but the peer answers: "
			     "going on (a stale or wrong pid)",
			     c->id);
		c->suspect_ns = 0;
		atomic_fetch_sub(&c->worker->suspects, 1);
		return false;
	}
	if (now < c->suspect_ns)
		return false;
	if (engine_conn_loss_is_error(c))
		SDK_LOG_ERR("connection %u: the peer process exited; failing its operations", c->id);
	else
		SDK_LOG_DBG("connection %u: the peer process exited with nothing in flight, or while stopping", c->id);
	engine_conn_fail(c, ENGINE_CONN_FAILED);
	return true;
}

static uint64_t bulk_allowance_ns(const struct engine_conn *c)
{
	uint64_t bytes = engine_initiator_bulk_bytes(c) + engine_target_bulk_bytes(c);

	return bytes / BULK_FLOOR_BYTES_PER_S * 1000000000ULL +
	       bytes % BULK_FLOOR_BYTES_PER_S * 1000000000ULL / BULK_FLOOR_BYTES_PER_S;
}

/* Time from then to now, 0 if then is later: the service thread reads the
 * clock before it waits for the worker lock, and a connection made
 * meanwhile is stamped after that. */
static uint64_t elapsed_ns(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

static void conn_sweep(struct engine_conn *c, uint64_t now)
{
	const struct engine_timeouts *t = engine_timeouts();
	uint64_t quiet;

	if (c->heard) {
		c->heard = false;
		c->last_heard_ns = now;
	}
	quiet = elapsed_ns(now, c->last_heard_ns);
	/* (A peer busy moving data gets longer: its answers wait behind it.) */
	if (quiet >= t->timeout_ns && quiet >= t->timeout_ns + bulk_allowance_ns(c)) {
		if (c->peer_claims_exited && !c->peer_hello && !c->worker->stopping)
			engine_explain_peer_exited(c->id, c->peer_pid, "nothing answers at its address");
		SDK_LOG(c->worker->stopping ? DOCA_LOG_LEVEL_DEBUG : DOCA_LOG_LEVEL_ERROR,
			"connection %u: no word from the peer for %llu ms (%s=%llu): it is gone or unreachable; "
			"failing the connection",
			c->id, (unsigned long long)(quiet / 1000000ULL), TIMEOUT_ENV,
			(unsigned long long)(t->timeout_ns / 1000000ULL));
		engine_conn_fail(c, ENGINE_CONN_FAILED);
		return;
	}
	if (!c->peer_hello && elapsed_ns(now, c->connected_ns) >= PEER_CONNECT_WAIT_NS)
		engine_fail_conn_ops(c, DOCA_ERROR_NOT_CONNECTED);
	if (quiet >= t->interval_ns)
		ping_send(c, 0);
}

/* Run from the worker's progress (either thread), lock held: cheap
 * unless a sweep is due or a suspect waits. */
void engine_keepalive_sweep(struct engine_worker *w, uint64_t now)
{
	bool periodic = now >= w->keepalive_next_ns;

	if (!periodic && atomic_load_explicit(&w->suspects, memory_order_relaxed) == 0)
		return;
	if (periodic)
		w->keepalive_next_ns = now + engine_timeouts()->interval_ns;
	for (uint32_t i = 0; i < w->num_conns; i++) {
		struct engine_conn *c = &w->conns[i];

		if (c->connected_ns == 0 || c->ep == NULL || c->state == CONN_CLOSED || c->state == CONN_FREE)
			continue;
		if (c->suspect_ns != 0 && (suspect_check(c, now) || c->suspect_ns != 0))
			continue;
		if (periodic)
			conn_sweep(c, now);
	}
}

enum link_rx engine_am_ping(struct engine_worker *w, const struct link_msg *m)
{
	struct wire_ping ping;
	struct engine_conn *c;

	if (wire_check(WIRE_AM_PING, m->header, m->header_len) != DOCA_SUCCESS || m->length != 0)
		return LINK_RX_DONE;
	memcpy(&ping, m->header, sizeof(ping)); /* any alignment */
	c = engine_conn_lookup(w, m, ping.dst_conn_id, ping.dst_secret);
	if (c == NULL || c->state == CONN_CLOSED || (ping.flags & WIRE_PING_PONG))
		return LINK_RX_DONE;
	/* Answer on our own endpoint, naming the peer's connection as its
	 * HELLO told us. */
	if (!c->peer_hello || c->ep == NULL)
		return LINK_RX_DONE;
	ping_send(c, WIRE_PING_PONG);
	return LINK_RX_DONE;
}
