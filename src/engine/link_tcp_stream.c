/*
 * softdoca — what moves on a TCP link socket (see link_tcp.c for the
 * design): frames written (MSG, RTS, CTS, DATA; several per system call
 * when they queue, a payload from the caller's memory when it cannot
 * wait), frames read into blocks and handed to the engine, rendezvous
 * payloads fetched straight into their checked destination, and the
 * requests the engine holds, whose callbacks are queued and run from
 * the link's progress (lt_run_done), never inside a call the engine is
 * making.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "core_engine.h"
#include "link_tcp_int.h"

SDK_LOG_REGISTER(ENGINE::TCP::STREAM)

void lt_req_done(struct link_tcp *lt, struct lt_req *r, doca_error_t status)
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

static void peer_unpause(struct lt_peer *p, uint8_t why);

static void tx_free(struct lt_tx *tx)
{
	struct lt_peer *p = tx->peer;

	if (p != NULL && p->gen == tx->gen) {
		p->out_bytes -= tx->cost;
		if ((p->paused & LT_PAUSE_OUT) && p->out_bytes < LT_OUT_MAX / 2)
			peer_unpause(p, LT_PAUSE_OUT);
	}
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

/* Callbacks that are due, in the order they became due (never inside a
 * call the engine is making: see the file comment). */
unsigned int lt_run_done(struct link_tcp *lt)
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
		lt_req_done(lt, &tx->req, status);
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

static void block_put(struct link_tcp *lt, struct lt_block *b)
{
	if (--b->refs > 0)
		return;
	if (b->counted && b->peer != NULL && b->peer->gen == b->gen) {
		b->peer->kept_blocks--;
		if ((b->peer->paused & LT_PAUSE_KEPT) && b->peer->kept_blocks < LT_KEPT_MAX / 2)
			peer_unpause(b->peer, LT_PAUSE_KEPT);
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

/* ---- resets ------------------------------------------------------------ */

static void tx_list_fail(struct link_tcp *lt, struct lt_tx *tx, doca_error_t status)
{
	while (tx != NULL) {
		struct lt_tx *next = tx->next;

		tx_finish(lt, tx, status);
		tx = next;
	}
}

void lt_stream_reset(struct lt_peer *p, doca_error_t status)
{
	struct link_tcp *lt = p->lt;

	tx_list_fail(lt, p->q_head, status);
	tx_list_fail(lt, p->data_head, status);
	tx_list_fail(lt, p->wait_head, status);
	p->q_head = p->q_tail = NULL;
	p->data_head = p->data_tail = NULL;
	p->wait_head = NULL;
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
			lt_req_done(lt, &rv->req, status);
		else
			rndv_drop(rv); /* DISCARD: the engine's request ended already */
	}
	p->kept_blocks = 0;
	p->paused = 0;
	p->hdr_next = false;
}

static void tx_list_free(struct lt_tx *tx)
{
	while (tx != NULL) {
		struct lt_tx *next = tx->next;

		tx_free(tx);
		tx = next;
	}
}

void lt_stream_free(struct lt_peer *p)
{
	tx_list_free(p->q_head);
	tx_list_free(p->data_head);
	tx_list_free(p->wait_head);
	p->q_head = p->q_tail = p->data_head = p->data_tail = p->wait_head = NULL;
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
	p->blk = NULL;
}

void lt_cache_free(struct link_tcp *lt)
{
	while (lt->done_head != NULL) {
		struct lt_req *r = lt->done_head;

		lt->done_head = r->done_next;
		if (r->type == LT_REQ_TX)
			tx_free((struct lt_tx *)r);
		else
			rndv_free((struct lt_rndv *)r);
	}
	lt->done_tail = NULL;
	for (uint32_t i = 0; i < lt->ncache; i++)
		free(lt->cache[i]);
	lt->ncache = 0;
}

/* ---- writing ----------------------------------------------------------- */

static void out_poll(struct lt_peer *p, bool want)
{
	struct lt_sock *s = lt_wsock(p);

	if (s == NULL || s->fd < 0 || p->polled_out == want || (s == lt_rsock(p) && p->paused))
		return;
	p->polled_out = want;
	lt_sock_watch(p->lt, s, EPOLLIN | (want ? EPOLLOUT : 0), true);
}

/* The socket frames may be written on now: NULL while there is none or
 * it is still connecting. */
static struct lt_sock *out_ready(struct lt_peer *p)
{
	struct lt_sock *s = lt_wsock(p);

	if (s == NULL || s->fd < 0 || (s == &p->own && p->connecting))
		return NULL;
	return s;
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

bool lt_out_busy(const struct lt_peer *p)
{
	/* With no socket yet, nothing can leave: nobody waits for it. */
	if (lt_wsock((struct lt_peer *)p) == NULL)
		return false;
	return p->connecting || p->q_head != NULL || p->data_head != NULL || p->wait_head != NULL;
}

bool lt_out_write(struct lt_peer *p)
{
	struct iovec v[LT_IOV_MAX];
	struct lt_sock *s;

	while ((s = out_ready(p)) != NULL) {
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
		n = sendmsg(s->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			out_poll(p, true);
			return true;
		}
		if (n < 0) {
			char why[96];

			snprintf(why, sizeof(why), "the connection to the peer broke (%s)", strerror(errno));
			lt_peer_fail(p, why);
			return false;
		}
		out_advance(p, first, (size_t)n);
	}
	return true;
}

static void tx_enqueue(struct lt_peer *p, struct lt_tx *tx)
{
	tx->peer = p;
	tx->gen = p->gen;
	tx->cost = sizeof(*tx) + (tx->copy != NULL ? tx->len : 0);
	p->out_bytes += tx->cost;
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

bool lt_queue_ctl(struct lt_peer *p, const struct lt_frame *f, const void *body, size_t body_len)
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
static size_t send_direct(struct lt_sock *sock, const uint8_t *fh, const struct link_send *s, bool *failed)
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
		n = sendmsg(sock->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n >= 0)
		return (size_t)n;
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		*failed = true;
	return 0;
}

doca_error_t lt_send(struct engine_conn *c, const struct link_send *s, void **req)
{
	struct lt_peer *p = c->ep;
	bool rndv = !s->eager && s->len > LT_RNDV_THRESH;
	struct lt_frame f = {.type = rndv ? LT_RTS : LT_MSG, .am_id = s->id, .hdr_len = (uint32_t)s->header_len};
	size_t written = 0, whole = LT_FRAME_HDR + s->header_len + s->len;
	struct lt_tx *tx;
	bool failed = false;

	struct lt_sock *sock;

	*req = NULL;
	if (p == NULL || !p->ep_open)
		return DOCA_ERROR_NOT_CONNECTED;
	if (s->header_len == 0 || s->header_len > LT_HDR_MAX || s->iov_count > ENGINE_MAX_SGE ||
	    (!rndv && s->len > LT_MSG_MAX)) {
		SDK_LOG_ERR("tcp link: message %#x of %zu+%zu bytes cannot be sent", s->id, s->header_len, s->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	f.len = s->len;
	if (rndv)
		f.id = ++p->next_rndv_id;
	sock = out_ready(p);
	if (!rndv && sock != NULL && p->q_head == NULL && p->data_head == NULL) {
		uint8_t fh[LT_FRAME_HDR];

		lt_frame_build(fh, &f);
		written = send_direct(sock, fh, s, &failed);
		if (failed) {
			lt_peer_fail(p, "the connection to the peer broke");
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
	if (p->q_head == tx)
		(void)lt_out_write(p);
	else
		out_poll(p, true);
	return DOCA_SUCCESS;
no_memory:
	if (tx != NULL)
		tx_free(tx);
	if (written > 0) {
		/* Half a frame is in the stream: the connection cannot go on. */
		lt_peer_fail(p, "no memory to finish a message");
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	*req = NULL;
	SDK_LOG_ERR_RL("tcp link: no memory for a message on connection %u", c->id);
	return DOCA_ERROR_NO_MEMORY;
}

/* ---- reading ----------------------------------------------------------- */

static void peer_pause(struct lt_peer *p, uint8_t why)
{
	struct lt_sock *s = lt_rsock(p);

	if ((p->paused & why) || s->fd < 0)
		return;
	if (p->paused == 0)
		/* The socket we write on may be this one: keep its EPOLLOUT. */
		lt_sock_watch(p->lt, s, s == lt_wsock(p) && p->polled_out ? EPOLLOUT : 0, true);
	p->paused |= why;
	SDK_LOG_DBG("connection %u: reading paused: %s", p->conn != NULL ? p->conn->id : 0,
		    why == LT_PAUSE_KEPT ? "the engine keeps too many of the peer's messages"
					 : "the peer does not read what we send it");
}

static void peer_unpause(struct lt_peer *p, uint8_t why)
{
	struct lt_sock *s = lt_rsock(p);

	if (!(p->paused & why))
		return;
	p->paused &= (uint8_t)~why;
	if (p->paused == 0 && s->fd >= 0)
		lt_sock_watch(p->lt, s, EPOLLIN | (s == lt_wsock(p) && p->polled_out ? EPOLLOUT : 0), true);
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
		lt_req_done(p->lt, &rv->req, DOCA_SUCCESS);
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
 * bytes read, 0 when the socket has nothing, -1 when it ended (p failed);
 * *drained as for in_recv. */
static ssize_t fill_from_socket(struct lt_peer *p, size_t budget, bool *drained)
{
	struct iovec v[ENGINE_MAX_SGE];
	int k = fill_iov(p, v, budget);
	size_t want = 0;
	ssize_t n;

	for (int i = 0; i < k; i++)
		want += v[i].iov_len;
	do {
		n = readv(lt_rsock(p)->fd, v, k);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		*drained = (size_t)n < want;
		fill_advance(p, (size_t)n);
		/* The next frame is most likely DATA again: read its header
		 * alone, so its payload goes straight to where it belongs. */
		p->hdr_next = p->fill == NULL;
		return n;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	lt_peer_fail(p, n == 0 ? "the peer closed the connection" : "the connection from the peer broke");
	return -1;
}

static bool protocol_error(struct lt_peer *p, const char *what)
{
	SDK_LOG_ERR_RL("connection %u: the peer broke the tcp link's protocol (%s): closing the connection",
		       p->conn != NULL ? p->conn->id : 0, what);
	lt_peer_fail(p, "the peer sent a malformed or unexpected frame");
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
	if (rndv_valid(rv) && rv->peer->ep_open) {
		struct lt_frame cts = {.type = LT_CTS, .id = rv->id, .len = 0};

		if (lt_queue_ctl(rv->peer, &cts, NULL, 0))
			(void)lt_out_write(rv->peer);
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
		lt_peer_fail(p, "no memory for an incoming rendezvous");
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
	return lt_out_write(p);
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
	return p->gen == gen && lt_rsock(p)->fd >= 0;
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

/* Idle: an empty block nobody keeps goes back to the cache. */
static void in_idle(struct lt_peer *p)
{
	if (p->blk != NULL && p->rpos == p->wpos && p->blk->refs == 1) {
		block_put(p->lt, p->blk);
		p->blk = NULL;
	}
}

/* Read more into the block. Bytes read, 0: nothing now, -1: p failed.
 * *drained: the read took less than it could, so the socket is most
 * likely empty (its next bytes make epoll report it again). */
static ssize_t in_recv(struct lt_peer *p, size_t need, bool *drained)
{
	size_t room;
	ssize_t n;

	if (!in_make_room(p)) {
		lt_peer_fail(p, "no memory for a read buffer");
		return -1;
	}
	/* At most a chunk: a rendezvous payload behind the frames read
	 * goes to its destination, not through this block. */
	room = LT_BLOCK_DATA - p->wpos;
	if (room > LT_RECV_CHUNK && room > need)
		room = need > LT_RECV_CHUNK ? need : LT_RECV_CHUNK;
	if (p->hdr_next && p->wpos - p->rpos < LT_FRAME_HDR)
		room = LT_FRAME_HDR - (p->wpos - p->rpos);
	do {
		n = recv(lt_rsock(p)->fd, (uint8_t *)p->blk->data + p->wpos, room, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n > 0) {
		p->wpos += (size_t)n;
		*drained = (size_t)n < room;
		return n;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		in_idle(p);
		return 0;
	}
	lt_peer_fail(p, n == 0 ? "the peer closed the connection" : "the connection from the peer broke");
	return -1;
}

/* Whether reading may go on, by what the engine keeps of this peer's
 * messages (each pins its block). Past LT_KEPT_MAX blocks reading
 * pauses until the engine gives some back, unless a fetch of this peer
 * is under way: then what the engine waits for is behind the kept ones
 * in the stream (a large write at the head of the target's queue), and
 * a pause would never end. An honest peer's kept messages fill their
 * blocks; one that pins LT_KEPT_HARD blocks is not honest. */
static bool kept_within_bounds(struct lt_peer *p)
{
	if (p->kept_blocks >= LT_KEPT_HARD) {
		protocol_error(p, "it keeps more messages waiting than a send queue can hold");
		return false;
	}
	if (p->out_bytes >= LT_OUT_MAX) {
		peer_pause(p, LT_PAUSE_OUT);
		return false;
	}
	if (p->kept_blocks < LT_KEPT_MAX || p->rndvs != NULL || p->fill != NULL)
		return true;
	peer_pause(p, LT_PAUSE_KEPT);
	return false;
}

/* The first frame on the socket we opened: the peer's AUTH, naming our
 * connection and its secret (so nobody else answers for it). */
static bool own_auth(struct lt_peer *p, const struct lt_frame *f)
{
	const uint8_t *body = (uint8_t *)p->blk->data + p->rpos + LT_FRAME_HDR;
	struct lt_auth a;

	if (f->type != LT_AUTH)
		return protocol_error(p, "a frame before the peer's authentication");
	if (lt_auth_parse(body, f->hdr_len, &a) != DOCA_SUCCESS || a.conn_id != p->expect_id ||
	    !softdoca_secret_equal(a.secret, p->secret, ENGINE_SECRET_LEN))
		return protocol_error(p, "the peer's authentication names another connection or secret");
	p->rpos += lt_frame_inline_len(f);
	p->own_authed = true;
	return true;
}

unsigned int lt_in_read(struct lt_peer *p)
{
	size_t budget = LT_READ_BUDGET;
	unsigned int frames = 0;
	uint32_t gen = p->gen;
	bool drained = false;

	while (lt_rsock(p)->fd >= 0 && p->gen == gen && budget > 0) {
		struct lt_frame f;
		size_t need = 0;
		ssize_t n;

		if (p->fill != NULL) {
			fill_from_block(p);
			if (p->fill != NULL) {
				if (drained)
					return frames;
				n = fill_from_socket(p, budget, &drained);
				if (n <= 0)
					return frames;
				budget -= (size_t)n < budget ? (size_t)n : budget;
				continue;
			}
		}
		if (p->paused || !kept_within_bounds(p))
			return frames;
		if (p->blk != NULL && p->wpos - p->rpos >= LT_FRAME_HDR) {
			if (lt_frame_parse((uint8_t *)p->blk->data + p->rpos, &f) != DOCA_SUCCESS) {
				protocol_error(p, "a malformed frame header");
				return frames;
			}
			p->hdr_next &= f.type == LT_DATA;
			if (p->wpos - p->rpos >= lt_frame_inline_len(&f)) {
				bool first = lt_rsock(p) == &p->own && !p->own_authed;

				if (first ? !own_auth(p, &f) : !in_frame(p, &f))
					return frames;
				frames++;
				continue;
			}
			need = lt_frame_inline_len(&f) - (p->wpos - p->rpos);
		}
		if (drained) {
			/* Not another system call to learn it is empty. */
			in_idle(p);
			return frames;
		}
		n = in_recv(p, need, &drained);
		if (n <= 0)
			return frames;
		budget -= (size_t)n < budget ? (size_t)n : budget;
	}
	return frames;
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

doca_error_t lt_recv_data(struct engine_worker *w, void *data, const struct engine_sge *iov,
				 uint32_t iov_count, size_t len, link_cb cb, void *user, void **req)
{
	struct lt_rndv *rv = data;
	struct lt_frame cts = {.type = LT_CTS};
	struct lt_peer *p;

	(void)w;
	*req = NULL;
	if (rv->state != LT_RNDV_OFFERED && rv->state != LT_RNDV_KEPT)
		return DOCA_ERROR_BAD_STATE;
	if (!rndv_valid(rv) || !rv->peer->ep_open) {
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
	if (!lt_queue_ctl(p, &cts, NULL, 0)) {
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
	peer_unpause(p, LT_PAUSE_KEPT); /* its DATA must be read, whatever is kept */
	*req = rv;
	(void)lt_out_write(p); /* may fail p: the fetch then completes with an error */
	return DOCA_SUCCESS;
}

void lt_data_release(struct engine_worker *w, void *data, bool rndv)
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

void lt_cancel(struct engine_worker *w, void *req)
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
	lt_req_done(w->tcp, &rv->req, DOCA_ERROR_CONNECTION_ABORTED);
}

