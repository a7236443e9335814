/*
 * softdoca — the DOCA Comch fast path: doca_comch_producer and
 * doca_comch_consumer over a consumer queue in shared memory (see
 * comch_internal.h), and the capability queries. The DPA variants
 * (consumer completion, DPA handles, dev_max_num_*) answer
 * DOCA_ERROR_NOT_SUPPORTED with a log line.
 *
 * A producer send completes once its bytes are in the consumer's queue
 * (the consumer's next posted buffer is theirs): no acknowledgement
 * travels back, so a producer needs no progress of the connection's
 * context. Submit answers DOCA_ERROR_AGAIN while the consumer has no free
 * posted buffer, as DOCA's does, and DOCA_ERROR_NOT_FOUND for a consumer
 * id the peer never announced (or that expired).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>
#include <doca_mmap.h>

#include "buf.h"
#include "comch_internal.h"
#include "ctx.h"
#include "live.h"
#include "log_internal.h"
#include "watch.h"

SDK_LOG_REGISTER(COMCH_FASTPATH)

#define FP_MAX_PRODUCER_TASKS 8192u
#define FP_MAX_PRODUCERS 512u

static doca_error_t fastpath_unsupported(const char *func)
{
	SDK_LOG_ERR("%s: DPA producers/consumers are not supported by softdoca", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

#define FASTPATH_STUB(decl) \
	DOCA_EXPERIMENTAL decl \
	{ \
		return fastpath_unsupported(__func__); \
	}

static doca_error_t null_arg(const char *func, const char *what)
{
	SDK_LOG_ERR("%s: %s is NULL", func, what);
	return DOCA_ERROR_INVALID_VALUE;
}

/* Ids of this process's producers and consumers: 1.., never 0. */
static uint32_t fp_next_id(void)
{
	static _Atomic uint32_t next;
	uint32_t id;

	do {
		id = atomic_fetch_add(&next, 1) + 1;
	} while (id == 0);
	return id;
}

/* Attach link to the connection and set ctx up on its device: on failure
 * neither stays, and the caller frees only its own object. */
static doca_error_t fp_open(struct doca_comch_connection *conn, struct comch_fp_link *link, struct doca_ctx *ctx,
			    const struct softdoca_ctx_ops *ops, const char *func)
{
	doca_error_t status;

	status = comch_conn_fp_attach(conn, link, func);
	if (status != DOCA_SUCCESS)
		return status;
	status = softdoca_ctx_init(ctx, ops, comch_conn_fp_dev(link));
	if (status != DOCA_SUCCESS)
		comch_conn_fp_detach(link);
	return status;
}

/* What a destroy checks before it frees: a live context that can be finished. */
static doca_error_t fp_close(struct doca_ctx *ctx, const char *func)
{
	if (softdoca_live_check(ctx, SOFTDOCA_LIVE_CTX, func) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	return softdoca_ctx_fini(ctx);
}

/* ---- the queue ---- */

static struct comch_queue_hdr *queue_hdr(uint8_t *map)
{
	return (struct comch_queue_hdr *)(void *)map;
}

static volatile uint32_t *queue_cap(uint8_t *map, uint32_t i)
{
	return (volatile uint32_t *)(void *)(map + comch_queue_cap_off()) + i;
}

/* Is fd a Unix datagram socket? (ENOTSOCK for anything else.) */
static bool fd_is_unix_dgram(int fd)
{
	int domain = -1, type = -1;
	socklen_t len = sizeof(domain);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX)
		return false;
	len = sizeof(type);
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_DGRAM;
}

static doca_error_t rc_check_fds(const struct comch_frame *f, size_t want, const char *who)
{
	struct stat st;
	int seals = fcntl(f->fds[0], F_GET_SEALS);

	if (fstat(f->fds[0], &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != want) {
		SDK_LOG_ERR("%s: consumer %u's queue is not a %zu-byte memory file", who, f->u.consumer.id, want);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Sealed against shrinking: a mapping can never fault under us. */
	if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
		SDK_LOG_ERR("%s: consumer %u's queue is not sealed against shrinking", who, f->u.consumer.id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Not an eventfd, not a pipe: their writes block once the peer clears
	 * O_NONBLOCK on the file we share and fills them (see producer_ring). */
	if (!fd_is_unix_dgram(f->fds[1])) {
		SDK_LOG_ERR("%s: consumer %u's doorbell is not a Unix datagram socket", who, f->u.consumer.id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t comch_remote_consumer_open(const struct comch_frame *f, const char *who,
					struct comch_remote_consumer **out)
{
	size_t want = comch_queue_size(f->u.consumer.slots, f->u.consumer.slot_size);
	struct comch_remote_consumer *rc = NULL;
	struct comch_queue_hdr *hdr;
	uint8_t *map = MAP_FAILED;

	if (rc_check_fds(f, want, who) != DOCA_SUCCESS)
		goto fail;
	map = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, f->fds[0], 0);
	if (map == MAP_FAILED) {
		SDK_LOG_ERR("%s: cannot map consumer %u's queue: %s", who, f->u.consumer.id, strerror(errno));
		goto fail;
	}
	hdr = queue_hdr(map);
	if (hdr->magic != COMCH_QUEUE_MAGIC || hdr->version != COMCH_QUEUE_VERSION ||
	    hdr->slots != f->u.consumer.slots || hdr->slot_size != f->u.consumer.slot_size ||
	    hdr->imm_max != f->u.consumer.imm_max) {
		SDK_LOG_ERR("%s: consumer %u's queue header does not match its announcement", who, f->u.consumer.id);
		goto fail;
	}
	rc = calloc(1, sizeof(*rc));
	if (rc == NULL) {
		SDK_LOG_ERR("%s: no memory for consumer %u", who, f->u.consumer.id);
		goto fail;
	}
	rc->id = f->u.consumer.id;
	rc->slots = f->u.consumer.slots;
	rc->slot_size = f->u.consumer.slot_size;
	rc->imm_max = f->u.consumer.imm_max;
	rc->produced = atomic_load_explicit(&hdr->produced, memory_order_acquire);
	rc->map = map;
	rc->map_len = want;
	rc->bell = f->fds[1];
	close(f->fds[0]); /* the mapping keeps the memory */
	*out = rc;
	return DOCA_SUCCESS;

fail:
	if (map != MAP_FAILED)
		munmap(map, want);
	for (unsigned int i = 0; i < f->nfds; i++)
		close(f->fds[i]);
	return DOCA_ERROR_INVALID_VALUE;
}

void comch_remote_consumer_close(struct comch_remote_consumer *rc)
{
	munmap(rc->map, rc->map_len);
	close(rc->bell);
	free(rc);
}

/* Argument names are unused in the stub bodies. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* ---- producer ---- */

struct doca_comch_producer {
	struct doca_ctx ctx;
	struct softdoca_task_type send_type;
	struct comch_fp_link link;
	uint32_t id;
};

struct doca_comch_producer_task_send {
	struct doca_task task; /* first: the PE calls callbacks with this pointer */
	const struct doca_buf *buf;
	uint8_t *imm_data;
	uint32_t imm_data_len;
	uint32_t consumer_id;
};

_Static_assert(offsetof(struct doca_comch_producer_task_send, task) == 0, "task must come first");

static struct doca_comch_producer *producer_from_ctx(struct doca_ctx *ctx)
{
	return container_of(ctx, struct doca_comch_producer, ctx);
}

static doca_error_t producer_check(const struct doca_task *task)
{
	const struct doca_comch_producer_task_send *t =
		container_of(task, struct doca_comch_producer_task_send, task);

	if (t->buf == NULL || (t->imm_data_len > 0 && t->imm_data == NULL)) {
		SDK_LOG_ERR("comch producer send: %s is NULL", t->buf == NULL ? "buf" : "imm_data");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (t->imm_data_len > COMCH_FP_MAX_IMM) {
		SDK_LOG_ERR("comch producer send: %u bytes of immediate data (at most %u)", t->imm_data_len,
			    COMCH_FP_MAX_IMM);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* Wake the consumer. The doorbell is the peer's socket and the peer may
 * change its file at any time (clear O_NONBLOCK, stop reading), so this
 * must not depend on it: MSG_DONTWAIT makes this one call non-blocking
 * whatever the file's flags say, and a Unix datagram send that would wait
 * (the peer's queue or our send buffer full) answers EAGAIN instead,
 * which only means a ring is already pending. MSG_NOSIGNAL: a peer gone
 * is EPIPE, not SIGPIPE. The consumer finds the message by the queue's
 * counter whether or not the ring arrives. */
static void producer_ring(struct doca_comch_producer *p, struct comch_remote_consumer *rc)
{
	static const uint8_t ring = 1;

	if (send(rc->bell, &ring, sizeof(ring), MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN &&
	    errno != EWOULDBLOCK)
		SDK_LOG_DBG("comch producer %u: doorbell of consumer %u: %s", p->id, rc->id, strerror(errno));
}

/* Copy the message into the consumer's next slot. */
static void producer_fill(struct doca_comch_producer *p, struct comch_remote_consumer *rc,
			  const struct doca_comch_producer_task_send *t, uint32_t len)
{
	uint32_t i = rc->produced % rc->slots;
	uint8_t *slot = rc->map + comch_queue_slot_off(rc->slots, rc->slot_size, i);
	struct comch_slot sh;

	memset(&sh, 0, sizeof(sh));
	sh.len = len;
	sh.imm_len = t->imm_data_len;
	sh.producer_id = p->id;
	if (t->imm_data_len > 0)
		memcpy(sh.imm, t->imm_data, t->imm_data_len);
	memcpy(slot, &sh, sizeof(sh));
	if (len > 0)
		memcpy(slot + COMCH_SLOT_HDR, (const void *)softdoca_buf_data_addr(t->buf), len);
	rc->produced++;
	atomic_store_explicit(&queue_hdr(rc->map)->produced, rc->produced, memory_order_release);
	producer_ring(p, rc);
}

static doca_error_t producer_submit(struct doca_task *task)
{
	struct doca_comch_producer_task_send *t = container_of(task, struct doca_comch_producer_task_send, task);
	struct doca_comch_producer *p = producer_from_ctx(softdoca_task_ctx(task));
	struct comch_remote_consumer *rc;
	uint32_t posted, credits, cap, len;
	doca_error_t status = producer_check(task);

	if (status != DOCA_SUCCESS)
		return status;
	if (!comch_conn_fp_alive(&p->link)) {
		softdoca_task_complete(task, DOCA_ERROR_CONNECTION_RESET);
		return DOCA_SUCCESS;
	}
	rc = comch_conn_fp_consumer(&p->link, t->consumer_id);
	if (rc == NULL) {
		SDK_LOG_ERR_RL("comch producer %u: no consumer %u on this connection (never announced, or expired)",
			       p->id, t->consumer_id);
		return DOCA_ERROR_NOT_FOUND;
	}
	len = (uint32_t)(softdoca_buf_data_len(t->buf) > UINT32_MAX ? UINT32_MAX : softdoca_buf_data_len(t->buf));
	if (len > rc->slot_size || t->imm_data_len > rc->imm_max) {
		SDK_LOG_ERR("comch producer %u: %u bytes and %u immediate bytes for consumer %u, which takes %u and %u",
			    p->id, len, t->imm_data_len, rc->id, rc->slot_size, rc->imm_max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	posted = atomic_load_explicit(&queue_hdr(rc->map)->posted, memory_order_acquire);
	credits = posted - rc->produced;
	if (credits == 0)
		return DOCA_ERROR_AGAIN; /* no buffer posted: the consumer must post first */
	if (credits > rc->slots) {
		SDK_LOG_ERR_RL("comch producer %u: consumer %u's queue claims %u posted buffers in %u slots", p->id,
			       rc->id, credits, rc->slots);
		softdoca_task_complete(task, DOCA_ERROR_IO_FAILED);
		return DOCA_SUCCESS;
	}
	cap = *queue_cap(rc->map, rc->produced % rc->slots);
	if (len > cap) {
		SDK_LOG_ERR_RL("comch producer %u: %u bytes do not fit consumer %u's next buffer (%u bytes)", p->id,
			       len, rc->id, cap);
		softdoca_task_complete(task, DOCA_ERROR_INVALID_VALUE);
		return DOCA_SUCCESS;
	}
	producer_fill(p, rc, t, len);
	softdoca_task_complete(task, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static const struct softdoca_task_ops producer_send_ops = {
	.submit = producer_submit,
	.check = producer_check,
};

static doca_error_t producer_start(struct doca_ctx *ctx)
{
	struct doca_comch_producer *p = producer_from_ctx(ctx);

	if (!comch_conn_fp_alive(&p->link)) {
		SDK_LOG_ERR("comch producer %u: its connection is gone", p->id);
		return DOCA_ERROR_CONNECTION_RESET;
	}
	return DOCA_SUCCESS;
}

/* Sends complete at submit: a lost connection is all there is to notice. */
static unsigned int producer_progress(struct doca_ctx *ctx)
{
	struct doca_comch_producer *p = producer_from_ctx(ctx);

	if (ctx->state == DOCA_CTX_STATE_RUNNING && !comch_conn_fp_alive(&p->link)) {
		SDK_LOG_ERR("comch producer %u: the connection was lost", p->id);
		softdoca_ctx_fail(ctx, DOCA_ERROR_CONNECTION_RESET);
		return 1;
	}
	return 0;
}

static const struct softdoca_ctx_ops producer_ctx_ops = {
	.name = "comch_producer",
	.start = producer_start,
	.progress = producer_progress,
};

DOCA_STABLE
doca_error_t doca_comch_producer_create(struct doca_comch_connection *comch_connection,
					struct doca_comch_producer **producer)
{
	struct doca_comch_producer *p;
	doca_error_t status;

	if (producer == NULL)
		return null_arg(__func__, "producer");
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	status = fp_open(comch_connection, &p->link, &p->ctx, &producer_ctx_ops, __func__);
	if (status != DOCA_SUCCESS)
		goto free_p;
	softdoca_task_type_init(&p->send_type, &p->ctx, "comch_producer_send", &producer_send_ops,
				sizeof(struct doca_comch_producer_task_send));
	p->id = fp_next_id();
	*producer = p;
	return DOCA_SUCCESS;

free_p:
	free(p);
	return status;
}

DOCA_STABLE
doca_error_t doca_comch_producer_destroy(struct doca_comch_producer *producer)
{
	doca_error_t status;

	if (producer == NULL)
		return null_arg(__func__, "producer");
	status = fp_close(&producer->ctx, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	comch_conn_fp_detach(&producer->link);
	free(producer);
	return DOCA_SUCCESS;
}

DOCA_STABLE
struct doca_ctx *doca_comch_producer_as_ctx(struct doca_comch_producer *producer)
{
	return producer == NULL ? NULL : &producer->ctx;
}

DOCA_STABLE
doca_error_t doca_comch_producer_get_id(const struct doca_comch_producer *producer, uint32_t *id)
{
	if (producer == NULL || id == NULL)
		return null_arg(__func__, producer == NULL ? "producer" : "id");
	*id = producer->id;
	return DOCA_SUCCESS;
}

/* Every soft device, either personality (see doca_comch_cap_server_is_supported). */
DOCA_STABLE
doca_error_t doca_comch_producer_cap_is_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? null_arg(__func__, "devinfo") : DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks)
{
	return comch_cap_u32(devinfo, max_num_tasks, FP_MAX_PRODUCER_TASKS, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size)
{
	return comch_cap_u32(devinfo, max_buf_size, COMCH_FP_MAX_BUF, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_buf_list_len)
{
	return comch_cap_u32(devinfo, max_buf_list_len, 1, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_producers(const struct doca_devinfo *devinfo, uint32_t *max_producers)
{
	return comch_cap_u32(devinfo, max_producers, FP_MAX_PRODUCERS, __func__);
}

FASTPATH_STUB(doca_error_t doca_comch_producer_set_dev_max_num_send(struct doca_comch_producer *producer,
								    uint32_t dev_num_send))
FASTPATH_STUB(doca_error_t doca_comch_producer_dpa_completion_attach(struct doca_comch_producer *producer,
								     struct doca_dpa_completion *dpa_comp))
FASTPATH_STUB(doca_error_t doca_comch_producer_get_dpa_handle(struct doca_comch_producer *producer,
							      doca_dpa_dev_comch_producer_t *dpa_producer))

DOCA_STABLE
doca_error_t doca_comch_producer_task_send_set_conf(struct doca_comch_producer *producer,
						    doca_comch_producer_task_send_completion_cb_t task_completion_cb,
						    doca_comch_producer_task_send_completion_cb_t task_error_cb,
						    uint32_t num_send_tasks)
{
	if (producer == NULL)
		return null_arg(__func__, "producer");
	if (num_send_tasks > FP_MAX_PRODUCER_TASKS) {
		SDK_LOG_ERR("%s: %u tasks (at most %u)", __func__, num_send_tasks, FP_MAX_PRODUCER_TASKS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return softdoca_task_type_set_conf(&producer->send_type, (doca_task_completion_cb_t)task_completion_cb,
					   (doca_task_completion_cb_t)task_error_cb, num_send_tasks);
}

DOCA_STABLE
doca_error_t doca_comch_producer_task_send_alloc_init(struct doca_comch_producer *producer,
						      const struct doca_buf *buf, uint8_t *imm_data,
						      uint32_t imm_data_len, uint32_t consumer_id,
						      struct doca_comch_producer_task_send **task)
{
	union doca_data none = {.u64 = 0};
	struct doca_comch_producer_task_send *t;
	struct doca_task *dt;
	doca_error_t status;

	if (producer == NULL || buf == NULL || task == NULL)
		return null_arg(__func__, producer == NULL ? "producer" : buf == NULL ? "buf" : "task");
	if (imm_data_len > COMCH_FP_MAX_IMM || (imm_data_len > 0 && imm_data == NULL)) {
		SDK_LOG_ERR("%s: %u bytes of immediate data at %p (at most %u)", __func__, imm_data_len,
			    (void *)imm_data, COMCH_FP_MAX_IMM);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = softdoca_task_alloc(&producer->send_type, none, &dt);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(dt, struct doca_comch_producer_task_send, task);
	t->buf = buf;
	t->imm_data = imm_data;
	t->imm_data_len = imm_data_len;
	t->consumer_id = consumer_id;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_STABLE
const struct doca_buf *doca_comch_producer_task_send_get_buf(const struct doca_comch_producer_task_send *task)
{
	return task == NULL ? NULL : task->buf;
}

DOCA_STABLE
void doca_comch_producer_task_send_set_buf(struct doca_comch_producer_task_send *task, const struct doca_buf *buf)
{
	if (task != NULL)
		task->buf = buf;
}

DOCA_STABLE
uint32_t doca_comch_producer_task_send_get_consumer_id(const struct doca_comch_producer_task_send *task)
{
	return task == NULL ? 0 : task->consumer_id;
}

DOCA_STABLE
void doca_comch_producer_task_send_set_consumer_id(struct doca_comch_producer_task_send *task,
						   const uint32_t consumer_id)
{
	if (task != NULL)
		task->consumer_id = consumer_id;
}

DOCA_STABLE
uint8_t *doca_comch_producer_task_send_get_imm_data(const struct doca_comch_producer_task_send *task)
{
	return task == NULL ? NULL : task->imm_data;
}

DOCA_STABLE
uint32_t doca_comch_producer_task_send_get_imm_data_len(const struct doca_comch_producer_task_send *task)
{
	return task == NULL ? 0 : task->imm_data_len;
}

/* An oversized length is refused at submit (check). */
DOCA_STABLE
void doca_comch_producer_task_send_set_imm_data(struct doca_comch_producer_task_send *task, uint8_t *imm_data,
						uint32_t imm_data_len)
{
	if (task == NULL)
		return;
	task->imm_data = imm_data;
	task->imm_data_len = imm_data_len;
}

DOCA_STABLE
struct doca_task *doca_comch_producer_task_send_as_task(struct doca_comch_producer_task_send *task)
{
	return task == NULL ? NULL : &task->task;
}

/* ---- consumer ---- */

struct doca_comch_consumer {
	struct doca_ctx ctx;
	struct softdoca_task_type recv_type;
	struct comch_fp_link link;
	struct doca_mmap *mmap;
	uint32_t id;
	uint32_t imm_len;	/* set_imm_data_len: the most a producer may send */
	uint32_t slots, slot_size;
	uint8_t *map;		/* the queue, while started */
	size_t map_len;
	int memfd;
	int bell;	   /* our end of the doorbell: watched and drained */
	int bell_peer;	   /* the end the peer's producers ring; ours until announced */
	uint32_t posted, consumed;
	struct doca_task *head, *tail; /* posted tasks, slot order */
	struct comch_watch watch;
	bool announced;
};

struct doca_comch_consumer_task_post_recv {
	struct doca_task task; /* first */
	struct doca_buf *buf;
	uint32_t room;	/* bytes the buffer takes, as posted */
	uint32_t producer_id;
	uint32_t imm_len;
	uint8_t imm[COMCH_FP_MAX_IMM];
};

_Static_assert(offsetof(struct doca_comch_consumer_task_post_recv, task) == 0, "task must come first");

static struct doca_comch_consumer *consumer_from_ctx(struct doca_ctx *ctx)
{
	return container_of(ctx, struct doca_comch_consumer, ctx);
}

static void consumer_flush(struct doca_comch_consumer *c, doca_error_t status)
{
	struct doca_task *task = c->head;

	c->head = c->tail = NULL;
	while (task != NULL) {
		struct doca_task *next = task->next;

		task->next = NULL;
		softdoca_task_complete(task, status);
		task = next;
	}
}

static void consumer_unmap(struct doca_comch_consumer *c)
{
	if (c->map != NULL)
		munmap(c->map, c->map_len);
	c->map = NULL;
	if (c->memfd >= 0)
		close(c->memfd);
	if (c->bell >= 0)
		close(c->bell);
	if (c->bell_peer >= 0)
		close(c->bell_peer);
	c->memfd = c->bell = c->bell_peer = -1;
}

/* A sealed memfd for the queue, and its doorbell: a pair of Unix datagram
 * sockets, one end for the peer, so that the file the peer holds is not
 * the one we read (the peer can change the flags of its file) and a ring
 * can never make the peer's producer wait (see producer_ring). */
static doca_error_t consumer_map(struct doca_comch_consumer *c)
{
	struct comch_queue_hdr *hdr;
	int bell[2] = {-1, -1};

	c->map_len = comch_queue_size(c->slots, c->slot_size);
	c->memfd = memfd_create("softdoca-comch-consumer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, bell) == 0) {
		c->bell = bell[0];
		c->bell_peer = bell[1];
	}
	if (c->memfd < 0 || c->bell < 0 || ftruncate(c->memfd, (off_t)c->map_len) != 0 ||
	    fcntl(c->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		SDK_LOG_ERR("comch consumer %u: cannot make a %zu-byte queue: %s", c->id, c->map_len, strerror(errno));
		consumer_unmap(c);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->memfd, 0);
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		SDK_LOG_ERR("comch consumer %u: cannot map its queue: %s", c->id, strerror(errno));
		consumer_unmap(c);
		return DOCA_ERROR_NO_MEMORY;
	}
	hdr = queue_hdr(c->map);
	hdr->magic = COMCH_QUEUE_MAGIC;
	hdr->version = COMCH_QUEUE_VERSION;
	hdr->slots = c->slots;
	hdr->slot_size = c->slot_size;
	hdr->imm_max = c->imm_len;
	c->posted = c->consumed = 0;
	return DOCA_SUCCESS;
}

/* The CONSUMER_NEW frame: the queue and its doorbell go to the peer.
 * Once sent, the peer's end of the doorbell is the peer's alone. */
static doca_error_t consumer_send_new(struct doca_comch_consumer *c)
{
	uint8_t payload[COMCH_CONSUMER_NEW_LEN];
	int fds[2] = {c->memfd, c->bell_peer};
	doca_error_t status;

	comch_consumer_new_encode(payload, c->id, c->slots, c->slot_size, c->imm_len);
	status = comch_conn_fp_send(&c->link, COMCH_FRAME_CONSUMER_NEW, payload, sizeof(payload), fds, 2);
	if (status == DOCA_SUCCESS) {
		close(c->bell_peer);
		c->bell_peer = -1;
	}
	return status;
}

static doca_error_t consumer_start(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = consumer_from_ctx(ctx);
	void *addr;
	size_t len;
	doca_error_t status;

	if (c->recv_type.num_tasks == 0 || c->recv_type.num_tasks > COMCH_FP_MAX_SLOTS) {
		SDK_LOG_ERR("comch consumer %u: post_recv tasks must be configured (1..%u)", c->id,
			    COMCH_FP_MAX_SLOTS);
		return DOCA_ERROR_BAD_STATE;
	}
	if (!comch_conn_fp_alive(&c->link)) {
		SDK_LOG_ERR("comch consumer %u: its connection is gone", c->id);
		return DOCA_ERROR_CONNECTION_RESET;
	}
	status = doca_mmap_get_memrange(c->mmap, &addr, &len);
	if (status != DOCA_SUCCESS || len == 0) {
		SDK_LOG_ERR("comch consumer %u: its mmap has no memory range", c->id);
		return DOCA_ERROR_BAD_STATE;
	}
	c->slots = c->recv_type.num_tasks;
	c->slot_size = len < COMCH_FP_MAX_BUF ? (uint32_t)len : COMCH_FP_MAX_BUF;
	status = consumer_map(c);
	if (status != DOCA_SUCCESS)
		return status;
	status = comch_watch_open(&c->watch, ctx->pe);
	if (status != DOCA_SUCCESS) {
		consumer_unmap(c);
		return status;
	}
	comch_watch_fd(&c->watch, c->bell, false);
	/* Told at once, as a DOCA consumer is: the peer may wait for it before
	 * anyone progresses this PE (NVIDIA's storage zero-copy service does). */
	status = consumer_send_new(c);
	if (status != DOCA_SUCCESS && status != DOCA_ERROR_AGAIN) {
		SDK_LOG_ERR("comch consumer %u: cannot announce it to the peer: %s", c->id,
			    doca_error_get_name(status));
		comch_watch_close(&c->watch);
		consumer_unmap(c);
		return status;
	}
	c->announced = status == DOCA_SUCCESS;
	return DOCA_ERROR_IN_PROGRESS; /* RUNNING at the next progress */
}

/* A STARTING consumer: announce it if start could not (socket full), then
 * go RUNNING. */
static unsigned int consumer_announce(struct doca_comch_consumer *c)
{
	doca_error_t status;

	if (!c->announced) {
		status = consumer_send_new(c);
		if (status == DOCA_ERROR_AGAIN)
			return 0; /* the connection's socket is full: next progress */
		if (status != DOCA_SUCCESS) {
			SDK_LOG_ERR("comch consumer %u: cannot announce it to the peer: %s", c->id,
				    doca_error_get_name(status));
			softdoca_ctx_start_done(&c->ctx, status);
			return 1;
		}
		c->announced = true;
	}
	softdoca_ctx_start_done(&c->ctx, DOCA_SUCCESS);
	return 1;
}

/* Hand slot i to the task at the head. */
static void consumer_take(struct doca_comch_consumer *c)
{
	struct doca_task *task = c->head;
	struct doca_comch_consumer_task_post_recv *t =
		container_of(task, struct doca_comch_consumer_task_post_recv, task);
	const uint8_t *slot = c->map + comch_queue_slot_off(c->slots, c->slot_size, c->consumed % c->slots);
	struct comch_slot sh;

	c->head = task->next;
	if (c->head == NULL)
		c->tail = NULL;
	task->next = NULL;
	c->consumed++;
	memcpy(&sh, slot, sizeof(sh)); /* once: the peer may write it meanwhile */
	if (sh.len > t->room || sh.imm_len > c->imm_len) {
		SDK_LOG_ERR_RL("comch consumer %u: a message of %u bytes and %u immediate bytes for a buffer of %u "
			       "and %u; dropped",
			       c->id, sh.len, sh.imm_len, t->room, c->imm_len);
		softdoca_task_complete(task, DOCA_ERROR_INVALID_VALUE);
		return;
	}
	if (sh.len > 0)
		memcpy((void *)softdoca_buf_tail_addr(t->buf), slot + COMCH_SLOT_HDR, sh.len);
	softdoca_buf_data_grow(t->buf, sh.len);
	t->producer_id = sh.producer_id;
	t->imm_len = sh.imm_len;
	memcpy(t->imm, sh.imm, sh.imm_len);
	softdoca_task_complete(task, DOCA_SUCCESS);
}

/* Empty our end of the doorbell (the queue's counter says what arrived:
 * rings only wake the PE). Bounded: producers may ring as fast as we
 * read; what is left keeps the socket readable and the PE awake. */
static void consumer_drain_bell(struct doca_comch_consumer *c)
{
	uint8_t ring;

	for (int i = 0; i < 64; i++)
		if (recv(c->bell, &ring, sizeof(ring), MSG_DONTWAIT) < 0)
			return;
}

static unsigned int consumer_progress(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = consumer_from_ctx(ctx);
	unsigned int done = 0;
	uint32_t produced;

	comch_watch_rearm(&c->watch);
	if (ctx->state == DOCA_CTX_STATE_STARTING)
		return consumer_announce(c);
	if (ctx->state != DOCA_CTX_STATE_RUNNING)
		return 0;
	consumer_drain_bell(c);
	produced = atomic_load_explicit(&queue_hdr(c->map)->produced, memory_order_acquire);
	if (produced - c->consumed > c->posted - c->consumed) {
		SDK_LOG_ERR("comch consumer %u: the peer filled %u slots of %u posted", c->id, produced - c->consumed,
			    c->posted - c->consumed);
		softdoca_ctx_fail(ctx, DOCA_ERROR_IO_FAILED);
		return 1;
	}
	while (c->head != NULL && c->consumed != produced) {
		consumer_take(c);
		done++;
	}
	if (done == 0 && !comch_conn_fp_alive(&c->link)) {
		SDK_LOG_ERR("comch consumer %u: the connection was lost; it expires", c->id);
		softdoca_ctx_fail(ctx, DOCA_ERROR_CONNECTION_RESET);
		return 1;
	}
	return done;
}

static bool consumer_has_work(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = consumer_from_ctx(ctx);

	if (ctx->state == DOCA_CTX_STATE_STARTING)
		return true;
	if (c->map == NULL || c->head == NULL)
		return false;
	return atomic_load_explicit(&queue_hdr(c->map)->produced, memory_order_acquire) != c->consumed;
}

static void consumer_stop(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = consumer_from_ctx(ctx);
	uint8_t payload[4];

	if (c->announced) {
		for (int i = 0; i < 4; i++)
			payload[i] = (uint8_t)(c->id >> (8 * i));
		/* Best effort: a peer that misses it sees the consumer expire
		 * with the connection. */
		(void)comch_conn_fp_send(&c->link, COMCH_FRAME_CONSUMER_GONE, payload, sizeof(payload), NULL, 0);
		c->announced = false;
	}
	consumer_flush(c, DOCA_ERROR_CONNECTION_ABORTED);
}

static void consumer_stopped(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = consumer_from_ctx(ctx);

	consumer_flush(c, DOCA_ERROR_CONNECTION_ABORTED);
	comch_watch_close(&c->watch);
	consumer_unmap(c);
}

static const struct softdoca_ctx_ops consumer_ctx_ops = {
	.name = "comch_consumer",
	.start = consumer_start,
	.stop = consumer_stop,
	.stopped = consumer_stopped,
	.progress = consumer_progress,
	.has_work = consumer_has_work,
};

static doca_error_t post_recv_check(const struct doca_task *task)
{
	const struct doca_comch_consumer_task_post_recv *t =
		container_of(task, struct doca_comch_consumer_task_post_recv, task);
	const struct doca_comch_consumer *c = consumer_from_ctx(softdoca_task_ctx(task));

	if (t->buf == NULL || softdoca_buf_get_mmap(t->buf) != c->mmap) {
		SDK_LOG_ERR("comch consumer %u post_recv: the buffer is %s", c->id,
			    t->buf == NULL ? "NULL" : "not from the consumer's mmap");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t post_recv_submit(struct doca_task *task)
{
	struct doca_comch_consumer_task_post_recv *t =
		container_of(task, struct doca_comch_consumer_task_post_recv, task);
	struct doca_comch_consumer *c = consumer_from_ctx(softdoca_task_ctx(task));
	size_t room;
	doca_error_t status = post_recv_check(task);

	if (status != DOCA_SUCCESS)
		return status;
	if (c->posted - c->consumed >= c->slots) {
		SDK_LOG_ERR("comch consumer %u: %u buffers are posted already", c->id, c->slots);
		return DOCA_ERROR_FULL;
	}
	room = softdoca_buf_tail_room(t->buf);
	t->room = room < c->slot_size ? (uint32_t)room : c->slot_size;
	t->producer_id = 0;
	t->imm_len = 0;
	*queue_cap(c->map, c->posted % c->slots) = t->room;
	c->posted++;
	atomic_store_explicit(&queue_hdr(c->map)->posted, c->posted, memory_order_release);
	task->next = NULL;
	if (c->tail != NULL)
		c->tail->next = task;
	else
		c->head = task;
	c->tail = task;
	return DOCA_SUCCESS;
}

static const struct softdoca_task_ops post_recv_ops = {
	.submit = post_recv_submit,
	.check = post_recv_check,
};

DOCA_STABLE
doca_error_t doca_comch_consumer_create(struct doca_comch_connection *comch_connection, struct doca_mmap *buf_mmap,
					struct doca_comch_consumer **consumer)
{
	struct doca_comch_consumer *c;
	doca_error_t status;

	if (buf_mmap == NULL || consumer == NULL)
		return null_arg(__func__, buf_mmap == NULL ? "buf_mmap" : "consumer");
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	c->memfd = c->bell = c->bell_peer = -1;
	c->watch.epfd = -1;
	status = fp_open(comch_connection, &c->link, &c->ctx, &consumer_ctx_ops, __func__);
	if (status != DOCA_SUCCESS)
		goto free_c;
	softdoca_task_type_init(&c->recv_type, &c->ctx, "comch_consumer_post_recv", &post_recv_ops,
				sizeof(struct doca_comch_consumer_task_post_recv));
	c->mmap = buf_mmap;
	c->id = fp_next_id();
	*consumer = c;
	return DOCA_SUCCESS;

free_c:
	free(c);
	return status;
}

DOCA_STABLE
doca_error_t doca_comch_consumer_destroy(struct doca_comch_consumer *consumer)
{
	doca_error_t status;

	if (consumer == NULL)
		return null_arg(__func__, "consumer");
	status = fp_close(&consumer->ctx, __func__);
	if (status != DOCA_SUCCESS)
		return status;
	comch_watch_close(&consumer->watch);
	consumer_unmap(consumer);
	comch_conn_fp_detach(&consumer->link);
	free(consumer);
	return DOCA_SUCCESS;
}

DOCA_STABLE
struct doca_ctx *doca_comch_consumer_as_ctx(struct doca_comch_consumer *consumer)
{
	return consumer == NULL ? NULL : &consumer->ctx;
}

DOCA_STABLE
doca_error_t doca_comch_consumer_get_id(const struct doca_comch_consumer *consumer, uint32_t *id)
{
	if (consumer == NULL || id == NULL)
		return null_arg(__func__, consumer == NULL ? "consumer" : "id");
	*id = consumer->id;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_is_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? null_arg(__func__, "devinfo") : DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks)
{
	return comch_cap_u32(devinfo, max_num_tasks, COMCH_FP_MAX_SLOTS, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size)
{
	return comch_cap_u32(devinfo, max_buf_size, COMCH_FP_MAX_BUF, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_buf_list_len)
{
	return comch_cap_u32(devinfo, max_buf_list_len, 1, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_consumers(const struct doca_devinfo *devinfo, uint32_t *max_consumers)
{
	return comch_cap_u32(devinfo, max_consumers, COMCH_FP_MAX_CONSUMERS, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_imm_data_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_imm_data_len)
{
	return comch_cap_u32(devinfo, max_imm_data_len, COMCH_FP_MAX_IMM, __func__);
}

DOCA_STABLE
doca_error_t doca_comch_consumer_get_imm_data_len(const struct doca_comch_consumer *consumer, uint32_t *imm_data_len)
{
	if (consumer == NULL || imm_data_len == NULL)
		return null_arg(__func__, consumer == NULL ? "consumer" : "imm_data_len");
	*imm_data_len = consumer->imm_len;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_consumer_set_imm_data_len(struct doca_comch_consumer *consumer, uint32_t imm_data_len)
{
	if (consumer == NULL)
		return null_arg(__func__, "consumer");
	if (softdoca_ctx_check_idle(&consumer->ctx, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (imm_data_len > COMCH_FP_MAX_IMM) {
		SDK_LOG_ERR("%s: %u bytes (at most %u, doca_comch_consumer_cap_get_max_imm_data_len)", __func__,
			    imm_data_len, COMCH_FP_MAX_IMM);
		return DOCA_ERROR_INVALID_VALUE;
	}
	consumer->imm_len = imm_data_len;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_comch_consumer_task_post_recv_set_conf(
	struct doca_comch_consumer *consumer, doca_comch_consumer_task_post_recv_completion_cb_t task_completion_cb,
	doca_comch_consumer_task_post_recv_completion_cb_t task_error_cb, uint32_t num_post_recv_tasks)
{
	if (consumer == NULL)
		return null_arg(__func__, "consumer");
	if (num_post_recv_tasks > COMCH_FP_MAX_SLOTS) {
		SDK_LOG_ERR("%s: %u tasks (at most %u)", __func__, num_post_recv_tasks, COMCH_FP_MAX_SLOTS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return softdoca_task_type_set_conf(&consumer->recv_type, (doca_task_completion_cb_t)task_completion_cb,
					   (doca_task_completion_cb_t)task_error_cb, num_post_recv_tasks);
}

DOCA_STABLE
doca_error_t doca_comch_consumer_task_post_recv_alloc_init(struct doca_comch_consumer *consumer,
							   struct doca_buf *buf,
							   struct doca_comch_consumer_task_post_recv **task)
{
	union doca_data none = {.u64 = 0};
	struct doca_comch_consumer_task_post_recv *t;
	struct doca_task *dt;
	doca_error_t status;

	if (consumer == NULL || buf == NULL || task == NULL)
		return null_arg(__func__, consumer == NULL ? "consumer" : buf == NULL ? "buf" : "task");
	status = softdoca_task_alloc(&consumer->recv_type, none, &dt);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(dt, struct doca_comch_consumer_task_post_recv, task);
	t->buf = buf;
	t->imm_len = 0;
	t->producer_id = 0;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_STABLE
struct doca_buf *doca_comch_consumer_task_post_recv_get_buf(const struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? NULL : task->buf;
}

DOCA_STABLE
void doca_comch_consumer_task_post_recv_set_buf(struct doca_comch_consumer_task_post_recv *task, struct doca_buf *buf)
{
	if (task != NULL)
		task->buf = buf;
}

DOCA_STABLE
uint32_t doca_comch_consumer_task_post_recv_get_producer_id(const struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? 0 : task->producer_id;
}

DOCA_STABLE
const uint8_t *doca_comch_consumer_task_post_recv_get_imm_data(const struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? NULL : task->imm;
}

DOCA_STABLE
uint32_t doca_comch_consumer_task_post_recv_get_imm_data_len(const struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? 0 : task->imm_len;
}

DOCA_STABLE
struct doca_task *doca_comch_consumer_task_post_recv_as_task(struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? NULL : &task->task;
}

/* ---- DPA consumer completion: not supported ---- */

FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_create(struct doca_comch_consumer_completion **consumer_comp))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_set_dpa_thread(
	struct doca_comch_consumer_completion *consumer_comp, struct doca_dpa_thread *dpa_thread))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_destroy(struct doca_comch_consumer_completion *consumer_comp))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_start(struct doca_comch_consumer_completion *consumer_comp))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_stop(struct doca_comch_consumer_completion *consumer_comp))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_get_dpa_handle(
	struct doca_comch_consumer_completion *consumer_comp,
	doca_dpa_dev_comch_consumer_completion_t *consumer_comp_handle))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_set_max_num_consumers(
	struct doca_comch_consumer_completion *consumer_comp, uint32_t max_num_consumers))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_get_max_num_consumers(
	const struct doca_comch_consumer_completion *consumer_comp, uint32_t *max_num_consumers))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_set_max_num_recv(
	struct doca_comch_consumer_completion *consumer_comp, uint32_t max_num_recv))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_get_max_num_recv(
	const struct doca_comch_consumer_completion *consumer_comp, uint32_t *max_num_recv))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_set_imm_data_len(
	struct doca_comch_consumer_completion *consumer_comp, uint32_t imm_data_len))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_get_imm_data_len(
	const struct doca_comch_consumer_completion *consumer_comp, uint32_t *imm_data_len))
FASTPATH_STUB(doca_error_t doca_comch_consumer_set_dev_max_num_recv(struct doca_comch_consumer *consumer,
								    uint32_t dev_num_recv))
FASTPATH_STUB(doca_error_t doca_comch_consumer_set_completion(struct doca_comch_consumer *consumer,
							      struct doca_comch_consumer_completion *consumer_comp,
							      uint32_t user_data))
FASTPATH_STUB(doca_error_t doca_comch_consumer_get_dpa_handle(struct doca_comch_consumer *consumer,
							      doca_dpa_dev_comch_consumer_t *dpa_consumer))
