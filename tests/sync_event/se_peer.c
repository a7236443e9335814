/*
 * se_peer — one process of a remote-net sync event test.
 *
 *   se_peer --role owner|client --dir DIR --case NAME
 *           [--clients N] [--index I] [--count K] [--device IBDEV]
 *
 * The owner creates a sync event (publisher remote_net, subscriber CPU),
 * starts it, exports it and serves N clients, one RDMA connection each.
 * A client connects and works on the event with the three RDMA tasks
 * remote_net_sync_event_get / notify_set / notify_add. Only the public
 * DOCA API is used. The processes meet in DIR:
 *
 *   event.desc          the owner's event export descriptor
 *   owner.conn.I        the owner's connection descriptor for client I
 *   client.conn.I       client I's connection descriptor
 *   owner.waiting       wake: "PID TID" of the owner's thread that is about
 *                       to block in doca_sync_event_wait_gt
 *   client.sent         wake: CLOCK_MONOTONIC time the set was submitted
 *   client.control      revoked: the control set is done (stop the event)
 *   owner.stopped       revoked: the owner stopped the event
 *   owner.restarted     revoked: the owner started it again
 *   client.vals.I       add: the previous values client I's adds returned
 *                       (uint64_t, in submission order)
 *   client.done.I       client I finished its part successfully
 *   owner.failed, client.failed.I   a side gave up; the others stop at once
 *
 * Files are written under a temporary name and renamed. Every wait is a
 * bounded poll that fails with a message naming what it waited for; the
 * one wait that cannot poll (doca_sync_event_wait_gt) is guarded by a
 * watchdog thread that fails the process loudly when it expires.
 *
 * After connecting, the owner never progresses its PE again: the remote
 * operations must be served without it, as a NIC would serve them.
 *
 * Connections are export/connect, which on hardware moves the QP to RTS
 * with no event (DOCA calls the established callback for RDMA CM
 * connections only): neither side waits for one. A client submits right
 * after doca_rdma_connect (the library holds its tasks until the
 * connection is up), so its first task that completes shows the link is
 * up; the established callback running at all is an error.
 *
 * Cases:
 *   wake       owner blocks in wait_gt; the client checks that the thread
 *              is asleep, then notify_set wakes it; owner checks the value
 *   order      back-to-back rounds of set a, get, add d, get, set b, get,
 *              all in flight at once: every get sees what came before it,
 *              every add returns the value before it
 *   add        N clients x K adds of 1, many in flight: the final value is
 *              N*K and the returned previous values are exactly 0..N*K-1,
 *              increasing within each client (per-connection ordering)
 *   forged     a descriptor with a flipped secret (all bytes; one bit) or
 *              another event id: refused at parse time or every task on it
 *              fails; the value does not change
 *   revoked    after doca_sync_event_stop, set/get/add through the old
 *              descriptor fail, also once the event is started again; the
 *              value does not change
 *   truncated  truncated or padded descriptors are refused with
 *              DOCA_ERROR_INVALID_VALUE
 *
 * Each process prints "PASS ..." on success or "FAIL ..." lines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>
#include <doca_types.h>

#define FILE_WAIT_S 20.0  /* a peer's file */
#define START_WAIT_S 20.0 /* doca_ctx_start reaching RUNNING */
#define TASK_WAIT_S 20.0
#define SERVE_WAIT_S 45.0 /* owner: the whole client run */
#define SLEEP_WAIT_S 10.0 /* wake: the owner thread must be asleep by then */
#define WAKE_WATCHDOG_S 20.0
#define WAKE_LATENCY_MAX_S 2.0
#define STOP_WAIT_S 10.0

#define MAX_CLIENTS 64
#define WINDOW 256u	 /* tasks in flight at once (add) */
#define ORDER_ROUNDS 64u /* order: rounds in flight at once */
#define ORDER_TASKS 6u	 /* tasks per round */

/* The owner's value before the test, and what wake sets. */
#define V0 0x0DDC0FFEE0000000ull
#define WAKE_VALUE 0x5EC0000000000001ull
#define CONTROL_VALUE 0xC0117201ull

/* Descriptor layout (version 1, src/core/sync_event.h): "SDSE" magic at 0,
 * little-endian total length at 8, event id at 16, secret at 24..39, 48
 * bytes in all. Checked before it is relied on (check_desc_layout). */
#define DESC_LEN 48u
#define DESC_LEN_OFF 8u
#define DESC_ID_OFF 16u
#define DESC_SECRET_OFF 24u
#define DESC_SECRET_LEN 16u

#define PERM_LRW DOCA_ACCESS_FLAG_LOCAL_READ_WRITE
#define PERM_REMOTE (DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC)

enum role { ROLE_OWNER, ROLE_CLIENT };
enum kind { K_GET, K_SET, K_ADD };

static const char *kind_name(enum kind k)
{
	return k == K_GET ? "get" : k == K_SET ? "notify_set" : "notify_add";
}

struct rec {
	bool posted, done, ok_cb;
	enum kind kind;
	doca_error_t status;
};

struct peer {
	enum role role;
	const char *dir;
	const char *cs;
	const char *device;
	uint32_t nclients, index, count;

	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_rdma_connection *conns[MAX_CLIENTS];
	uint32_t nconns;
	enum doca_ctx_states state;
	int established, conn_failed, disconnected;

	/* owner */
	struct doca_sync_event *ev;
	bool ev_started;

	/* client */
	struct doca_sync_event_remote_net *rev;
	uint8_t *desc;
	size_t desc_len;

	/* One 8-byte slot per task: source of a set, result of get/add. */
	uint64_t *slots;
	size_t nslots;
	struct rec *recs;
	uint32_t nrecs, ndone, inflight;
	struct doca_buf **bufs;
	uint32_t nbufs;
	int cb_errors;

	bool failed_once;
	char tag[96];
};

/* ------------------------------------------------------------------ */
/* Reporting and files                                                  */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void tick(void)
{
	const struct timespec t = {.tv_sec = 0, .tv_nsec = 2 * 1000 * 1000};

	nanosleep(&t, NULL);
}

static int write_file(const struct peer *p, const char *name, const void *data, size_t len);

static void failed_name(const struct peer *p, char *out, size_t len)
{
	if (p->role == ROLE_OWNER)
		snprintf(out, len, "owner.failed");
	else
		snprintf(out, len, "client.failed.%u", p->index);
}

__attribute__((format(printf, 2, 3))) static int failf(struct peer *p, const char *fmt, ...)
{
	char msg[768], name[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("FAIL %s: %s\n", p->tag, msg);
	fflush(stdout);
	if (!p->failed_once) {
		p->failed_once = true;
		failed_name(p, name, sizeof(name));
		(void)write_file(p, name, msg, strlen(msg));
	}
	return -1;
}

#define CHECK(p, call)                                                                                    \
	do {                                                                                              \
		doca_error_t err_ = (call);                                                               \
		if (err_ != DOCA_SUCCESS)                                                                 \
			return failf((p), "line %d: %s returned %s (%s)", __LINE__, #call,                \
				     doca_error_get_name(err_), doca_error_get_descr(err_));              \
	} while (0)

static void path_of(const struct peer *p, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", p->dir, name);
}

static int write_file(const struct peer *p, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	const uint8_t *d = data;
	int fd;

	path_of(p, name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, d, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = errno;

			close(fd);
			unlink(tmp);
			return -e;
		}
		d += n;
		len -= (size_t)n;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		int e = errno;

		unlink(tmp);
		return -e;
	}
	return 0;
}

static int put_file(struct peer *p, const char *name, const void *data, size_t len)
{
	int r = write_file(p, name, data, len);

	if (r != 0)
		return failf(p, "writing %s/%s: %s", p->dir, name, strerror(-r));
	return 0;
}

static bool file_exists(const struct peer *p, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	path_of(p, name, path, sizeof(path));
	return stat(path, &st) == 0;
}

/* Whole file into malloc'd memory (NUL-terminated); 1 if absent. */
static int read_whole(const char *path, uint8_t **data, size_t *len)
{
	uint8_t *buf = NULL;
	size_t cap = 0, used = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	for (;;) {
		ssize_t n;

		if (used == cap) {
			uint8_t *nb;

			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap + 1);
			if (nb == NULL) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = 0;
	*data = buf;
	*len = used;
	return 0;
}

/* Name of a file saying some other process gave up, or NULL. */
static const char *other_failed(const struct peer *p)
{
	static char name[64];

	if (p->role == ROLE_CLIENT)
		return file_exists(p, "owner.failed") ? "owner.failed" : NULL;
	for (uint32_t i = 0; i < p->nclients; i++) {
		snprintf(name, sizeof(name), "client.failed.%u", i);
		if (file_exists(p, name))
			return name;
	}
	return NULL;
}

/* Bounded poll for a file; data/len may be NULL. */
static int wait_file_for(struct peer *p, const char *name, double timeout_s, uint8_t **data, size_t *len)
{
	char path[PATH_MAX];
	double deadline = now_s() + timeout_s;
	uint8_t *d = NULL;
	size_t l = 0;
	const char *gave_up;

	path_of(p, name, path, sizeof(path));
	for (;;) {
		int r = read_whole(path, &d, &l);

		if (r == 0) {
			if (data != NULL) {
				*data = d;
				*len = l;
			} else {
				free(d);
			}
			return 0;
		}
		if (r < 0)
			return failf(p, "reading %s: %s", path, strerror(-r));
		gave_up = other_failed(p);
		if (gave_up != NULL)
			return failf(p, "another process gave up (%s) while we waited for %s", gave_up, name);
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for %s", timeout_s, path);
		tick();
	}
}

static int wait_file(struct peer *p, const char *name, uint8_t **data, size_t *len)
{
	return wait_file_for(p, name, FILE_WAIT_S, data, len);
}

/* ------------------------------------------------------------------ */
/* Callbacks                                                            */

static void state_cb(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct peer *p = user_data.ptr;

	(void)ctx;
	(void)prev;
	p->state = next;
}

static void conn_request_cb(struct doca_rdma_connection *conn, union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	(void)doca_rdma_connection_reject(conn);
}

static void conn_established_cb(struct doca_rdma_connection *conn, union doca_data conn_user_data,
				union doca_data ctx_user_data)
{
	struct peer *p = ctx_user_data.ptr;
	bool known = false;

	(void)conn_user_data;
	for (uint32_t i = 0; i < p->nconns; i++)
		known |= p->conns[i] == conn;
	/* Every connection here is export/connect: DOCA never calls this. */
	printf("NOTE %s: established callback for %s connection, made by export/connect (DOCA calls it for RDMA CM "
	       "connections only)\n",
	       p->tag, known ? "a" : "an unknown");
	p->cb_errors++;
	p->established++;
}

static void conn_failure_cb(struct doca_rdma_connection *conn, union doca_data conn_user_data,
			    union doca_data ctx_user_data)
{
	struct peer *p = ctx_user_data.ptr;

	(void)conn;
	(void)conn_user_data;
	p->conn_failed++;
}

static void conn_disconnect_cb(struct doca_rdma_connection *conn, union doca_data conn_user_data,
			       union doca_data ctx_user_data)
{
	struct peer *p = ctx_user_data.ptr;

	(void)conn;
	(void)conn_user_data;
	p->disconnected++;
}

static void note_done(struct doca_task *task, union doca_data u, union doca_data c, bool ok_cb)
{
	struct peer *p = c.ptr;
	uint64_t i = u.u64;
	doca_error_t status = doca_task_get_status(task);

	doca_task_free(task);
	if (i >= p->nrecs || !p->recs[i].posted || p->recs[i].done) {
		printf("NOTE %s: completion for unknown or finished task %" PRIu64 "\n", p->tag, i);
		p->cb_errors++;
		return;
	}
	p->recs[i].done = true;
	p->recs[i].ok_cb = ok_cb;
	p->recs[i].status = status;
	if (ok_cb != (status == DOCA_SUCCESS)) {
		printf("NOTE %s: task %" PRIu64 ": %s callback with status %s\n", p->tag, i,
		       ok_cb ? "success" : "error", doca_error_get_name(status));
		p->cb_errors++;
	}
	p->ndone++;
	p->inflight--;
}

#define SE_CBS(T)                                                                                         \
	static void T##_ok_cb(struct doca_rdma_task_remote_net_sync_event_##T *t, union doca_data u,     \
			      union doca_data c)                                                          \
	{                                                                                                 \
		note_done(doca_rdma_task_remote_net_sync_event_##T##_as_task(t), u, c, true);             \
	}                                                                                                 \
	static void T##_err_cb(struct doca_rdma_task_remote_net_sync_event_##T *t, union doca_data u,    \
			       union doca_data c)                                                         \
	{                                                                                                 \
		note_done(doca_rdma_task_remote_net_sync_event_##T##_as_task(t), u, c, false);            \
	}

SE_CBS(get)
SE_CBS(notify_set)
SE_CBS(notify_add)

/* ------------------------------------------------------------------ */
/* Progress and tasks                                                   */

static int wait_state(struct peer *p, enum doca_ctx_states want, double timeout_s, const char *what)
{
	double deadline = now_s() + timeout_s;

	while (p->state != want) {
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for the context to become %s (state %d)",
				     timeout_s, what, (int)p->state);
		if (doca_pe_progress(p->pe) == 0)
			sched_yield();
	}
	return 0;
}

static int wait_tasks(struct peer *p, double timeout_s, const char *what)
{
	double deadline = now_s() + timeout_s, next_check = 0;

	while (p->ndone < p->nrecs) {
		double t = now_s();

		if (t > deadline)
			return failf(p, "timed out after %.0f s waiting for %s: %u of %u tasks completed", timeout_s,
				     what, p->ndone, p->nrecs);
		if (t > next_check) {
			const char *g = other_failed(p);

			if (g != NULL)
				return failf(p, "another process gave up (%s) while we waited for %s", g, what);
			next_check = t + 0.1;
		}
		if (doca_pe_progress(p->pe) == 0)
			sched_yield();
	}
	return 0;
}

static struct doca_buf *slot_buf(struct peer *p, uint32_t slot, bool with_data)
{
	struct doca_buf *b = NULL;
	doca_error_t err;

	if (with_data)
		err = doca_buf_inventory_buf_get_by_data(p->inv, p->mmap, &p->slots[slot], sizeof(uint64_t), &b);
	else
		err = doca_buf_inventory_buf_get_by_addr(p->inv, p->mmap, &p->slots[slot], sizeof(uint64_t), &b);
	if (err != DOCA_SUCCESS) {
		failf(p, "getting a doca_buf for slot %u: %s", slot, doca_error_get_name(err));
		return NULL;
	}
	p->bufs[p->nbufs++] = b;
	return b;
}

/* Post one task on `ev` (conn 0); its record and slot have index returned
 * in *idx. -1 on a failure that is not the task's own. */
static int post(struct peer *p, struct doca_sync_event_remote_net *ev, enum kind k, uint64_t arg, uint32_t *idx)
{
	uint32_t i = p->nrecs;
	union doca_data u = {.u64 = i};
	struct doca_buf *b;
	struct doca_task *task = NULL;
	doca_error_t err;

	if (i >= p->nslots)
		return failf(p, "internal: more than %zu tasks", p->nslots);
	p->slots[i] = k == K_SET ? arg : 0xBADBADBADBADBADBull;
	b = slot_buf(p, i, k == K_SET);
	if (b == NULL)
		return -1;
	if (k == K_GET) {
		struct doca_rdma_task_remote_net_sync_event_get *t;

		err = doca_rdma_task_remote_net_sync_event_get_allocate_init(p->rdma, p->conns[0], ev, b, u, &t);
		if (err == DOCA_SUCCESS)
			task = doca_rdma_task_remote_net_sync_event_get_as_task(t);
	} else if (k == K_SET) {
		struct doca_rdma_task_remote_net_sync_event_notify_set *t;

		err = doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(p->rdma, p->conns[0], ev, b, u,
										     &t);
		if (err == DOCA_SUCCESS)
			task = doca_rdma_task_remote_net_sync_event_notify_set_as_task(t);
	} else {
		struct doca_rdma_task_remote_net_sync_event_notify_add *t;

		err = doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(p->rdma, p->conns[0], ev, b, arg,
										     u, &t);
		if (err == DOCA_SUCCESS)
			task = doca_rdma_task_remote_net_sync_event_notify_add_as_task(t);
	}
	if (err != DOCA_SUCCESS)
		return failf(p, "%s allocate_init (task %u) returned %s", kind_name(k), i, doca_error_get_name(err));
	p->recs[i] = (struct rec){.posted = true, .kind = k};
	p->nrecs++;
	p->inflight++;
	err = doca_task_submit(task);
	if (err != DOCA_SUCCESS) {
		p->recs[i].done = true;
		p->recs[i].status = err;
		p->ndone++;
		p->inflight--;
		doca_task_free(task);
		return failf(p, "%s submit (task %u) returned %s", kind_name(k), i, doca_error_get_name(err));
	}
	*idx = i;
	return 0;
}

static int expect_ok(struct peer *p, uint32_t i, const char *what)
{
	const struct rec *r = &p->recs[i];

	if (!r->done || !r->ok_cb || r->status != DOCA_SUCCESS)
		return failf(p, "%s (%s, task %u) failed: %s", what, kind_name(r->kind), i,
			     r->done ? doca_error_get_name(r->status) : "never completed");
	return 0;
}

/* One task, waited for; the value it got (get, add) in *val. */
static int one_ok(struct peer *p, struct doca_sync_event_remote_net *ev, enum kind k, uint64_t arg, uint64_t *val,
		  const char *what)
{
	uint32_t i;

	if (post(p, ev, k, arg, &i) != 0 || wait_tasks(p, TASK_WAIT_S, what) != 0 || expect_ok(p, i, what) != 0)
		return -1;
	if (val != NULL)
		*val = p->slots[i];
	return 0;
}

/* One task that must fail: refused at allocate/submit, or completed with
 * an error status through the error callback. The result slot of a get or
 * add must not be written. Appends how it failed to `how`. */
static int one_refused(struct peer *p, struct doca_sync_event_remote_net *ev, enum kind k, uint64_t arg,
		       const char *what, char *how, size_t how_len)
{
	uint32_t i;
	const struct rec *r;
	size_t l = strlen(how);

	if (post(p, ev, k, arg, &i) != 0)
		return -1;
	if (wait_tasks(p, TASK_WAIT_S, what) != 0)
		return -1;
	r = &p->recs[i];
	if (r->ok_cb || r->status == DOCA_SUCCESS)
		return failf(p, "%s: %s succeeded (got 0x%" PRIx64 ")", what, kind_name(k), p->slots[i]);
	if (k != K_SET && p->slots[i] != 0xBADBADBADBADBADBull)
		return failf(p, "%s: the failed %s wrote its result buffer (0x%" PRIx64 ")", what, kind_name(k),
			     p->slots[i]);
	snprintf(how + l, how_len - l, "%s%s %s -> %s", l ? "; " : "", what, kind_name(k),
		 doca_error_get_name(r->status));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Setup and teardown                                                   */

static int open_device(struct peer *p)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t err;

	CHECK(p, doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) != DOCA_SUCCESS ||
		    strcmp(name, p->device) != 0)
			continue;
		err = doca_dev_open(list[i], &p->dev);
		doca_devinfo_destroy_list(list);
		if (err != DOCA_SUCCESS)
			return failf(p, "doca_dev_open(%s) returned %s", p->device, doca_error_get_name(err));
		return 0;
	}
	doca_devinfo_destroy_list(list);
	return failf(p, "no device named %s", p->device);
}

static int setup(struct peer *p)
{
	union doca_data cud = {.ptr = p};
	uint32_t pool = p->role == ROLE_OWNER ? 4 : (WINDOW > ORDER_ROUNDS * ORDER_TASKS ? WINDOW : ORDER_ROUNDS * ORDER_TASKS) + 8;
	doca_error_t err;

	p->nslots = p->role == ROLE_OWNER ? 8 : (size_t)p->count + 64;
	p->slots = aligned_alloc(4096, (p->nslots * sizeof(uint64_t) + 4095) & ~(size_t)4095);
	p->recs = calloc(p->nslots, sizeof(*p->recs));
	p->bufs = calloc(p->nslots, sizeof(*p->bufs));
	if (p->slots == NULL || p->recs == NULL || p->bufs == NULL)
		return failf(p, "out of memory for %zu slots", p->nslots);
	if (open_device(p) != 0)
		return -1;
	CHECK(p, doca_pe_create(&p->pe));
	CHECK(p, doca_mmap_create(&p->mmap));
	CHECK(p, doca_mmap_set_memrange(p->mmap, p->slots, p->nslots * sizeof(uint64_t)));
	CHECK(p, doca_mmap_set_permissions(p->mmap, PERM_LRW));
	CHECK(p, doca_mmap_add_dev(p->mmap, p->dev));
	CHECK(p, doca_mmap_start(p->mmap));
	CHECK(p, doca_buf_inventory_create(p->nslots, &p->inv));
	CHECK(p, doca_buf_inventory_start(p->inv));

	CHECK(p, doca_rdma_create(p->dev, &p->rdma));
	p->ctx = doca_rdma_as_ctx(p->rdma);
	if (p->ctx == NULL)
		return failf(p, "doca_rdma_as_ctx returned NULL");
	CHECK(p, doca_rdma_set_permissions(p->rdma, p->role == ROLE_OWNER ? PERM_LRW | PERM_REMOTE : PERM_LRW));
	CHECK(p, doca_rdma_set_max_num_connections(p->rdma, p->role == ROLE_OWNER ? p->nclients : 1));
	CHECK(p, doca_rdma_set_send_queue_size(p->rdma, 2 * pool));
	CHECK(p, doca_rdma_task_remote_net_sync_event_get_set_conf(p->rdma, get_ok_cb, get_err_cb, pool));
	CHECK(p, doca_rdma_task_remote_net_sync_event_notify_set_set_conf(p->rdma, notify_set_ok_cb,
									  notify_set_err_cb, pool));
	CHECK(p, doca_rdma_task_remote_net_sync_event_notify_add_set_conf(p->rdma, notify_add_ok_cb,
									  notify_add_err_cb, pool));
	CHECK(p, doca_rdma_set_connection_state_callbacks(p->rdma, conn_request_cb, conn_established_cb,
							  conn_failure_cb, conn_disconnect_cb));
	CHECK(p, doca_ctx_set_user_data(p->ctx, cud));
	CHECK(p, doca_ctx_set_state_changed_cb(p->ctx, state_cb));
	CHECK(p, doca_pe_connect_ctx(p->pe, p->ctx));
	err = doca_ctx_start(p->ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		return failf(p, "doca_ctx_start returned %s", doca_error_get_name(err));
	return wait_state(p, DOCA_CTX_STATE_RUNNING, START_WAIT_S, "RUNNING");
}

/* Owner: one exported connection per client; client: one connection.
 * Nothing to wait for after the connects (see the top). */
static int connect_all(struct peer *p)
{
	char mine[64], theirs[64];
	uint32_t n = p->role == ROLE_OWNER ? p->nclients : 1;

	for (uint32_t i = 0; i < n; i++) {
		const void *desc;
		size_t len;
		uint32_t id = p->role == ROLE_OWNER ? i : p->index;

		CHECK(p, doca_rdma_export(p->rdma, &desc, &len, &p->conns[i]));
		p->nconns++;
		snprintf(mine, sizeof(mine), "%s.conn.%u", p->role == ROLE_OWNER ? "owner" : "client", id);
		if (put_file(p, mine, desc, len) != 0)
			return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *d = NULL;
		size_t l = 0;
		doca_error_t err;
		uint32_t id = p->role == ROLE_OWNER ? i : p->index;

		snprintf(theirs, sizeof(theirs), "%s.conn.%u", p->role == ROLE_OWNER ? "client" : "owner", id);
		if (wait_file(p, theirs, &d, &l) != 0)
			return -1;
		err = doca_rdma_connect(p->rdma, d, l, p->conns[i]);
		free(d);
		if (err != DOCA_SUCCESS)
			return failf(p, "doca_rdma_connect with %s returned %s", theirs, doca_error_get_name(err));
	}
	return 0;
}

static int teardown(struct peer *p)
{
	int rc = 0;
	doca_error_t err;

#define TD(call)                                                                                          \
	do {                                                                                              \
		err = (call);                                                                             \
		if (err != DOCA_SUCCESS)                                                                  \
			rc = failf(p, "teardown: %s returned %s", #call, doca_error_get_name(err));       \
	} while (0)

	if (p->ctx != NULL && p->state != DOCA_CTX_STATE_IDLE) {
		err = doca_ctx_stop(p->ctx);
		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
			rc = failf(p, "teardown: doca_ctx_stop returned %s", doca_error_get_name(err));
		else if (wait_state(p, DOCA_CTX_STATE_IDLE, STOP_WAIT_S, "IDLE after doca_ctx_stop") != 0)
			rc = -1;
	}
	if (p->ndone != p->nrecs)
		rc = failf(p, "teardown: %u of %u tasks never completed", p->nrecs - p->ndone, p->nrecs);
	if (p->rev != NULL)
		TD(doca_sync_event_remote_net_destroy(p->rev));
	for (uint32_t i = 0; i < p->nbufs; i++)
		TD(doca_buf_dec_refcount(p->bufs[i], NULL));
	if (p->inv != NULL) {
		TD(doca_buf_inventory_stop(p->inv));
		TD(doca_buf_inventory_destroy(p->inv));
	}
	if (p->rdma != NULL && p->state == DOCA_CTX_STATE_IDLE)
		TD(doca_rdma_destroy(p->rdma));
	if (p->pe != NULL && p->state == DOCA_CTX_STATE_IDLE)
		TD(doca_pe_destroy(p->pe));
	if (p->mmap != NULL) {
		TD(doca_mmap_stop(p->mmap));
		TD(doca_mmap_destroy(p->mmap));
	}
	if (p->ev != NULL)
		TD(doca_sync_event_destroy(p->ev));
	if (p->dev != NULL)
		TD(doca_dev_close(p->dev));
#undef TD
	if (p->cb_errors != 0)
		rc = failf(p, "%d callback(s) reported something wrong (see NOTE lines)", p->cb_errors);
	free(p->slots);
	free(p->recs);
	free(p->bufs);
	free(p->desc);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Descriptors                                                          */

static uint64_t get_le64(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static void put_le64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static int check_desc_layout(struct peer *p)
{
	uint32_t total = (uint32_t)p->desc[DESC_LEN_OFF] | (uint32_t)p->desc[DESC_LEN_OFF + 1] << 8 |
			 (uint32_t)p->desc[DESC_LEN_OFF + 2] << 16 | (uint32_t)p->desc[DESC_LEN_OFF + 3] << 24;

	if (p->desc_len != DESC_LEN || memcmp(p->desc, "SDSE", 4) != 0 || total != DESC_LEN)
		return failf(p, "the event descriptor (%zu bytes, length field %u) is not the documented version 1 "
			     "layout this test edits; update the offsets", p->desc_len, total);
	return 0;
}

static int import_event(struct peer *p)
{
	if (wait_file(p, "event.desc", &p->desc, &p->desc_len) != 0)
		return -1;
	CHECK(p, doca_sync_event_remote_net_create_from_export(p->dev, p->desc, p->desc_len, &p->rev));
	if (p->rev == NULL)
		return failf(p, "create_from_export succeeded but gave a NULL handle");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Owner                                                                */

struct watchdog {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	double timeout_s;
	struct peer *p;
	const char *what;
};

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	struct timespec until;
	double t = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)w->timeout_s;
	pthread_mutex_lock(&w->lock);
	while (!w->done) {
		if (pthread_cond_timedwait(&w->cond, &w->lock, &until) == ETIMEDOUT) {
			t = w->timeout_s;
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
	if (t > 0) {
		failf(w->p, "watchdog: %s still blocked after %.0f s", w->what, t);
		_exit(1);
	}
	return NULL;
}

static int owner_event(struct peer *p)
{
	const uint8_t *d;
	size_t l;

	CHECK(p, doca_sync_event_create(&p->ev));
	CHECK(p, doca_sync_event_add_publisher_location_remote_net(p->ev));
	CHECK(p, doca_sync_event_add_subscriber_location_cpu(p->ev, p->dev));
	CHECK(p, doca_sync_event_start(p->ev));
	p->ev_started = true;
	CHECK(p, doca_sync_event_update_set(p->ev, V0));
	CHECK(p, doca_sync_event_export_to_remote_net(p->ev, &d, &l));
	if (d == NULL || l == 0)
		return failf(p, "export_to_remote_net gave %p/%zu", (const void *)d, l);
	return put_file(p, "event.desc", d, l);
}

static int owner_value(struct peer *p, uint64_t want, const char *what)
{
	uint64_t v = 0;

	CHECK(p, doca_sync_event_get(p->ev, &v));
	if (v != want)
		return failf(p, "%s: the event holds 0x%" PRIx64 ", expected 0x%" PRIx64, what, v, want);
	return 0;
}

static int wait_clients_done(struct peer *p)
{
	char name[64];

	for (uint32_t i = 0; i < p->nclients; i++) {
		snprintf(name, sizeof(name), "client.done.%u", i);
		if (wait_file_for(p, name, SERVE_WAIT_S, NULL, NULL) != 0)
			return -1;
	}
	return 0;
}

static int owner_wake(struct peer *p)
{
	struct watchdog w = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
			     .timeout_s = WAKE_WATCHDOG_S, .p = p, .what = "doca_sync_event_wait_gt"};
	pthread_t th;
	char text[64];
	uint8_t *sent = NULL;
	size_t sent_len = 0;
	double woke, sent_at;
	doca_error_t err;

	if (pthread_create(&th, NULL, watchdog_main, &w) != 0)
		return failf(p, "pthread_create failed");
	snprintf(text, sizeof(text), "%d %ld\n", (int)getpid(), (long)syscall(SYS_gettid));
	if (put_file(p, "owner.waiting", text, strlen(text)) != 0)
		return -1;
	/* No PE progress from here on: the set must arrive on its own. */
	err = doca_sync_event_wait_gt(p->ev, V0, UINT64_MAX);
	woke = now_s();
	pthread_mutex_lock(&w.lock);
	w.done = true;
	pthread_cond_signal(&w.cond);
	pthread_mutex_unlock(&w.lock);
	pthread_join(th, NULL);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_sync_event_wait_gt returned %s", doca_error_get_name(err));
	if (owner_value(p, WAKE_VALUE, "after waking") != 0)
		return -1;
	if (wait_file(p, "client.sent", &sent, &sent_len) != 0)
		return -1;
	sent_at = strtod((const char *)sent, NULL);
	free(sent);
	if (woke - sent_at > WAKE_LATENCY_MAX_S || woke < sent_at - 0.5)
		return failf(p, "woke %.3f s after the set was submitted (limit %.1f s)", woke - sent_at,
			     WAKE_LATENCY_MAX_S);
	printf("NOTE %s: woken %.1f ms after the client submitted the set\n", p->tag, (woke - sent_at) * 1e3);
	return wait_clients_done(p);
}

static int owner_revoked(struct peer *p)
{
	if (wait_file_for(p, "client.control", SERVE_WAIT_S, NULL, NULL) != 0 ||
	    owner_value(p, CONTROL_VALUE, "after the control set") != 0)
		return -1;
	CHECK(p, doca_sync_event_stop(p->ev));
	if (put_file(p, "owner.stopped", "", 0) != 0)
		return -1;
	if (wait_file_for(p, "client.stopped_done", SERVE_WAIT_S, NULL, NULL) != 0)
		return -1;
	/* A stopped event keeps its value; start it again to read it, and
	 * the old descriptor must stay dead. */
	CHECK(p, doca_sync_event_start(p->ev));
	if (owner_value(p, CONTROL_VALUE, "after set/get/add on the stopped event") != 0 ||
	    put_file(p, "owner.restarted", "", 0) != 0 || wait_clients_done(p) != 0)
		return -1;
	return owner_value(p, CONTROL_VALUE, "after the old descriptor was used on the restarted event");
}

static int owner_add(struct peer *p)
{
	uint64_t total = (uint64_t)p->nclients * p->count;
	uint8_t *seen = calloc(total ? total : 1, 1);
	char name[64];
	int rc = -1;

	if (seen == NULL)
		return failf(p, "out of memory");
	if (wait_clients_done(p) != 0 || owner_value(p, V0 + total, "after all adds") != 0)
		goto out;
	for (uint32_t c = 0; c < p->nclients; c++) {
		uint8_t *d = NULL;
		size_t l = 0;

		snprintf(name, sizeof(name), "client.vals.%u", c);
		if (wait_file(p, name, &d, &l) != 0)
			goto out;
		if (l != (size_t)p->count * 8) {
			free(d);
			failf(p, "%s holds %zu bytes, expected %u values", name, l, p->count);
			goto out;
		}
		for (uint32_t k = 0; k < p->count; k++) {
			uint64_t v = get_le64(d + 8 * (size_t)k) - V0;

			if (v >= total || seen[v]) {
				failf(p, "client %u add %u returned V0+%" PRIu64 ": %s", c, k, v,
				      v >= total ? "beyond the total" : "already returned to another add");
				free(d);
				goto out;
			}
			seen[v] = 1;
		}
		free(d);
	}
	rc = 0; /* every value 0..total-1 seen exactly once (pigeonhole) */
out:
	free(seen);
	return rc;
}

static int owner_main(struct peer *p)
{
	double t0 = now_s();
	int rc;

	if (setup(p) != 0 || owner_event(p) != 0 || connect_all(p) != 0)
		return -1;
	if (strcmp(p->cs, "wake") == 0)
		rc = owner_wake(p);
	else if (strcmp(p->cs, "revoked") == 0)
		rc = owner_revoked(p);
	else if (strcmp(p->cs, "add") == 0)
		rc = owner_add(p);
	else if (wait_clients_done(p) != 0)
		rc = -1;
	else if (strcmp(p->cs, "order") == 0) {
		uint8_t *d = NULL;
		size_t l = 0;

		rc = wait_file(p, "client.last", &d, &l);
		if (rc == 0)
			rc = owner_value(p, strtoull((const char *)d, NULL, 0), "after the last round");
		free(d);
	} else
		rc = owner_value(p, V0, "after the refused operations");
	if (rc == 0)
		printf("PASS %s: %u client(s) served in %.2f s\n", p->tag, p->nclients, now_s() - t0);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Client                                                               */

/* wake: the owner's thread must be asleep (state S) before the set. */
static int wait_owner_asleep(struct peer *p, char *wchan, size_t wchan_len)
{
	uint8_t *d = NULL;
	size_t l = 0;
	int pid = 0;
	long tid = 0;
	char path[128];
	double deadline;

	if (wait_file(p, "owner.waiting", &d, &l) != 0)
		return -1;
	if (sscanf((const char *)d, "%d %ld", &pid, &tid) != 2) {
		free(d);
		return failf(p, "owner.waiting does not hold PID TID");
	}
	free(d);
	snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", pid, tid);
	deadline = now_s() + SLEEP_WAIT_S;
	for (;;) {
		const char *paren;
		int r = read_whole(path, &d, &l);

		if (r != 0)
			return failf(p, "reading %s: %s", path, r > 0 ? "gone" : strerror(-r));
		paren = strrchr((const char *)d, ')');
		if (paren != NULL && paren[1] == ' ' && paren[2] == 'S') {
			free(d);
			break;
		}
		free(d);
		if (file_exists(p, "owner.failed"))
			return failf(p, "the owner gave up while we waited for it to sleep");
		if (now_s() > deadline)
			return failf(p, "the owner's thread %ld was not asleep within %.0f s", tid, SLEEP_WAIT_S);
		tick();
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%ld/wchan", pid, tid);
	snprintf(wchan, wchan_len, "?");
	if (read_whole(path, &d, &l) == 0) {
		snprintf(wchan, wchan_len, "%s", (const char *)d);
		free(d);
	}
	return 0;
}

static int client_wake(struct peer *p, char *how, size_t how_len)
{
	char wchan[64], text[64];
	uint64_t v;
	uint32_t i;

	if (wait_owner_asleep(p, wchan, sizeof(wchan)) != 0)
		return -1;
	if (one_ok(p, p->rev, K_GET, 0, &v, "get while the owner sleeps") != 0)
		return -1;
	if (v != V0)
		return failf(p, "get while the owner sleeps read 0x%" PRIx64 ", expected 0x%" PRIx64, v, (uint64_t)V0);
	snprintf(text, sizeof(text), "%.6f\n", now_s());
	if (post(p, p->rev, K_SET, WAKE_VALUE, &i) != 0 || put_file(p, "client.sent", text, strlen(text)) != 0 ||
	    wait_tasks(p, TASK_WAIT_S, "the waking set") != 0 || expect_ok(p, i, "the waking set") != 0)
		return -1;
	snprintf(how, how_len, "owner thread asleep (wchan %s) before the set", wchan);
	return 0;
}

static int client_order(struct peer *p, char *how, size_t how_len)
{
	uint32_t first[ORDER_ROUNDS];
	uint64_t last = 0;
	uint32_t passes = p->count / (ORDER_ROUNDS * ORDER_TASKS);

	if (passes == 0)
		passes = 1;
	for (uint32_t pass = 0; pass < passes; pass++) {
		/* Every round's tasks go out back to back, no progress between. */
		for (uint32_t r = 0; r < ORDER_ROUNDS; r++) {
			uint64_t a = 0xA000000000000000ull | (uint64_t)pass << 32 | (uint64_t)r << 8;
			uint64_t dlt = 1000 + r, b = a ^ 0x0B0B0B0B00000000ull;
			uint32_t i;

			if (post(p, p->rev, K_SET, a, &first[r]) != 0 || post(p, p->rev, K_GET, 0, &i) != 0 ||
			    post(p, p->rev, K_ADD, dlt, &i) != 0 || post(p, p->rev, K_GET, 0, &i) != 0 ||
			    post(p, p->rev, K_SET, b, &i) != 0 || post(p, p->rev, K_GET, 0, &i) != 0)
				return -1;
			last = b;
		}
		if (wait_tasks(p, TASK_WAIT_S, "the order rounds") != 0)
			return -1;
		for (uint32_t r = 0; r < ORDER_ROUNDS; r++) {
			uint32_t f = first[r];
			uint64_t a = p->slots[f], dlt = 1000 + r, b = p->slots[f + 4];
			uint64_t want[ORDER_TASKS] = {a, a, a, a + dlt, b, b};

			for (uint32_t k = 0; k < ORDER_TASKS; k++) {
				if (expect_ok(p, f + k, "order round") != 0)
					return -1;
				if (p->recs[f + k].kind != K_SET && p->slots[f + k] != want[k])
					return failf(p, "pass %u round %u: %s (task %u of the round) got 0x%" PRIx64
						     ", expected 0x%" PRIx64 " (tasks overtook each other?)",
						     pass, r, kind_name(p->recs[f + k].kind), k, p->slots[f + k],
						     want[k]);
			}
		}
	}
	snprintf(how, how_len, "%u pass(es) of %u rounds x %u tasks in flight at once", passes, ORDER_ROUNDS,
		 ORDER_TASKS);
	{
		char text[32];

		snprintf(text, sizeof(text), "0x%" PRIx64 "\n", last);
		return put_file(p, "client.last", text, strlen(text));
	}
}

static int client_add(struct peer *p, char *how, size_t how_len)
{
	uint32_t posted = 0, i;
	double deadline = now_s() + TASK_WAIT_S * 2, t0 = now_s();
	uint8_t *out;
	char name[64];
	int rc;

	while (posted < p->count || p->ndone < p->nrecs) {
		while (posted < p->count && p->inflight < WINDOW) {
			if (post(p, p->rev, K_ADD, 1, &i) != 0)
				return -1;
			posted++;
		}
		if (now_s() > deadline)
			return failf(p, "timed out: %u of %u adds completed", p->ndone, p->count);
		if (doca_pe_progress(p->pe) == 0) {
			if (other_failed(p) != NULL)
				return failf(p, "another process gave up during the adds");
			sched_yield();
		}
	}
	out = malloc((size_t)p->count * 8);
	if (out == NULL)
		return failf(p, "out of memory");
	for (uint32_t k = 0; k < p->count; k++) {
		if (expect_ok(p, k, "add") != 0) {
			free(out);
			return -1;
		}
		/* One connection keeps its order: each add sees all earlier ones. */
		if (k > 0 && p->slots[k] <= p->slots[k - 1]) {
			free(out);
			return failf(p, "add %u returned 0x%" PRIx64 " after add %u returned 0x%" PRIx64
				     " (not increasing: lost ordering or a lost add)", k, p->slots[k], k - 1,
				     p->slots[k - 1]);
		}
		if (p->slots[k] < V0 || p->slots[k] - V0 >= (uint64_t)p->nclients * p->count) {
			free(out);
			return failf(p, "add %u returned 0x%" PRIx64 ", outside [V0, V0+%" PRIu64 ")", k, p->slots[k],
				     (uint64_t)p->nclients * p->count);
		}
		put_le64(out + 8 * (size_t)k, p->slots[k]);
	}
	snprintf(name, sizeof(name), "client.vals.%u", p->index);
	rc = put_file(p, name, out, (size_t)p->count * 8);
	free(out);
	snprintf(how, how_len, "%u adds (%u in flight) in %.2f s", p->count, WINDOW, now_s() - t0);
	return rc;
}

/* All three operations through `ev` must fail. */
static int all_refused(struct peer *p, struct doca_sync_event_remote_net *ev, const char *what, char *how,
		       size_t how_len)
{
	return one_refused(p, ev, K_SET, 0x0BADull, what, how, how_len) != 0 ||
			       one_refused(p, ev, K_GET, 0, what, how, how_len) != 0 ||
			       one_refused(p, ev, K_ADD, 7, what, how, how_len) != 0
		       ? -1
		       : 0;
}

static int genuine_value(struct peer *p, uint64_t want, const char *what)
{
	uint64_t v;

	if (one_ok(p, p->rev, K_GET, 0, &v, what) != 0)
		return -1;
	if (v != want)
		return failf(p, "%s: get read 0x%" PRIx64 ", expected 0x%" PRIx64, what, v, want);
	return 0;
}

static int forged_try(struct peer *p, const uint8_t *d, const char *what, char *how, size_t how_len)
{
	struct doca_sync_event_remote_net *fev = NULL;
	doca_error_t err = doca_sync_event_remote_net_create_from_export(p->dev, d, DESC_LEN, &fev);
	size_t l = strlen(how);
	int rc;

	if (err != DOCA_SUCCESS) {
		snprintf(how + l, how_len - l, "%s%s: refused by create_from_export (%s)", l ? "; " : "", what,
			 doca_error_get_name(err));
		return 0;
	}
	rc = all_refused(p, fev, what, how, how_len);
	err = doca_sync_event_remote_net_destroy(fev);
	if (err != DOCA_SUCCESS)
		return failf(p, "remote_net_destroy of the %s handle returned %s", what, doca_error_get_name(err));
	if (rc != 0)
		return -1;
	/* Nothing changed, and the connection still serves. */
	return genuine_value(p, V0, what);
}

static int client_forged(struct peer *p, char *how, size_t how_len)
{
	uint8_t d[DESC_LEN];

	if (check_desc_layout(p) != 0 || genuine_value(p, V0, "before forging") != 0)
		return -1;
	memcpy(d, p->desc, DESC_LEN);
	for (uint32_t k = 0; k < DESC_SECRET_LEN; k++)
		d[DESC_SECRET_OFF + k] ^= 0xFF;
	if (forged_try(p, d, "secret inverted", how, how_len) != 0)
		return -1;
	memcpy(d, p->desc, DESC_LEN);
	d[DESC_SECRET_OFF + DESC_SECRET_LEN - 1] ^= 0x01;
	if (forged_try(p, d, "one secret bit flipped", how, how_len) != 0)
		return -1;
	memcpy(d, p->desc, DESC_LEN);
	put_le64(d + DESC_ID_OFF, get_le64(d + DESC_ID_OFF) + 1);
	return forged_try(p, d, "event id + 1", how, how_len);
}

static int client_revoked(struct peer *p, char *how, size_t how_len)
{
	if (one_ok(p, p->rev, K_SET, CONTROL_VALUE, NULL, "control set") != 0 ||
	    genuine_value(p, CONTROL_VALUE, "control get") != 0 || put_file(p, "client.control", "", 0) != 0 ||
	    wait_file(p, "owner.stopped", NULL, NULL) != 0 || all_refused(p, p->rev, "stopped", how, how_len) != 0 ||
	    put_file(p, "client.stopped_done", "", 0) != 0 || wait_file(p, "owner.restarted", NULL, NULL) != 0)
		return -1;
	return all_refused(p, p->rev, "restarted", how, how_len);
}

static int client_truncated(struct peer *p, char *how, size_t how_len)
{
	uint8_t d[DESC_LEN + 8];
	static const size_t lens[] = {0, 1, 4, 11, 12, 16, 24, 40, DESC_LEN - 1, DESC_LEN + 1};
	size_t l;

	if (check_desc_layout(p) != 0)
		return -1;
	memset(d, 0, sizeof(d));
	memcpy(d, p->desc, DESC_LEN);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct doca_sync_event_remote_net *ev = NULL;
		doca_error_t err = doca_sync_event_remote_net_create_from_export(p->dev, d, lens[k], &ev);

		if (err != DOCA_ERROR_INVALID_VALUE || ev != NULL)
			return failf(p, "create_from_export of the first %zu of %u bytes returned %s (handle %p), "
				     "expected DOCA_ERROR_INVALID_VALUE", lens[k], DESC_LEN, doca_error_get_name(err),
				     (void *)ev);
	}
	/* Truncated with its length field made to agree. */
	for (size_t n = 12; n < DESC_LEN; n += 4) {
		struct doca_sync_event_remote_net *ev = NULL;
		doca_error_t err;

		memcpy(d, p->desc, DESC_LEN);
		d[DESC_LEN_OFF] = (uint8_t)n;
		err = doca_sync_event_remote_net_create_from_export(p->dev, d, n, &ev);
		if (err != DOCA_ERROR_INVALID_VALUE || ev != NULL)
			return failf(p, "create_from_export of a %zu-byte prefix whose length field says %zu returned "
				     "%s, expected DOCA_ERROR_INVALID_VALUE", n, n, doca_error_get_name(err));
	}
	l = strlen(how);
	snprintf(how + l, how_len - l, "%zu truncated/padded lengths and 9 self-consistent prefixes refused",
		 sizeof(lens) / sizeof(lens[0]));
	return genuine_value(p, V0, "after the refused imports");
}

static int client_main(struct peer *p)
{
	char how[1024] = "";
	char name[64];
	double t0 = now_s();
	int rc;

	if (setup(p) != 0 || connect_all(p) != 0 || import_event(p) != 0)
		return -1;
	if (strcmp(p->cs, "wake") == 0)
		rc = client_wake(p, how, sizeof(how));
	else if (strcmp(p->cs, "order") == 0)
		rc = client_order(p, how, sizeof(how));
	else if (strcmp(p->cs, "add") == 0)
		rc = client_add(p, how, sizeof(how));
	else if (strcmp(p->cs, "forged") == 0)
		rc = client_forged(p, how, sizeof(how));
	else if (strcmp(p->cs, "revoked") == 0)
		rc = client_revoked(p, how, sizeof(how));
	else
		rc = client_truncated(p, how, sizeof(how));
	if (rc != 0)
		return -1;
	snprintf(name, sizeof(name), "client.done.%u", p->index);
	if (put_file(p, name, "", 0) != 0)
		return -1;
	printf("PASS %s: %s (%.2f s)\n", p->tag, how, now_s() - t0);
	return 0;
}

/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f, "usage: se_peer --role owner|client --dir DIR --case wake|order|add|forged|revoked|truncated\n"
		   "               [--clients N] [--index I] [--count K] [--device IBDEV]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"role", required_argument, NULL, 'r'},	   {"dir", required_argument, NULL, 'd'},
		{"case", required_argument, NULL, 'c'},	   {"clients", required_argument, NULL, 'N'},
		{"index", required_argument, NULL, 'i'},   {"count", required_argument, NULL, 'n'},
		{"device", required_argument, NULL, 'D'},  {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const char *cases[] = {"wake", "order", "add", "forged", "revoked", "truncated"};
	struct peer p = {.device = "soft_lo", .nclients = 1, .count = 10000, .state = DOCA_CTX_STATE_IDLE};
	const char *role = NULL;
	bool known = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			role = optarg;
			break;
		case 'd':
			p.dir = optarg;
			break;
		case 'c':
			p.cs = optarg;
			break;
		case 'N':
			p.nclients = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'i':
			p.index = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			p.count = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'D':
			p.device = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (size_t k = 0; p.cs != NULL && k < sizeof(cases) / sizeof(cases[0]); k++)
		known |= strcmp(p.cs, cases[k]) == 0;
	if (role == NULL || p.dir == NULL || !known || p.nclients == 0 || p.nclients > MAX_CLIENTS ||
	    p.index >= p.nclients || p.count == 0) {
		usage(stderr);
		return 2;
	}
	if (strcmp(role, "owner") == 0)
		p.role = ROLE_OWNER;
	else if (strcmp(role, "client") == 0)
		p.role = ROLE_CLIENT;
	else {
		usage(stderr);
		return 2;
	}
	if (p.role == ROLE_OWNER)
		snprintf(p.tag, sizeof(p.tag), "%s owner", p.cs);
	else
		snprintf(p.tag, sizeof(p.tag), "%s client %u/%u", p.cs, p.index, p.nclients);
	setvbuf(stdout, NULL, _IOLBF, 0);

	rc = p.role == ROLE_OWNER ? owner_main(&p) : client_main(&p);
	if (teardown(&p) != 0)
		rc = -1;
	return rc == 0 ? 0 : 1;
}
