/*
 * softdoca test — many connections on one DOCA RDMA context, each with
 * its own send queue (issue 11, item 1).
 *
 *   many_conns [--conns N] [--inflight K] [--size BYTES] [--rounds R]
 *              [--device IBDEV] [--rss]
 *
 * The process forks: the child is the target (one context, N exported
 * connections, one region of N * K * BYTES bytes), the parent the
 * initiator (one context with N connections to it, send queue size K).
 * They trade descriptors over a socketpair. The initiator keeps K writes
 * in flight on every connection for R rounds (each round's data differs)
 * on every connection but the last, the held one: the target connects
 * that one only later, so its K writes stay in flight (the target parks
 * them) and every further submit on it must fail with DOCA_ERROR_FULL,
 * while the others complete all their rounds without one DOCA_ERROR_FULL
 * or failed write. Then the target connects the held connection, its
 * writes complete, a last round runs on every connection, and the target
 * checks every byte of its region against that round's pattern.
 *
 * Connections are export/connect: as on hardware, where doca_rdma_connect
 * moves the QP to RTS with no event, DOCA calls no established callback
 * for them (RDMA CM only), and both sides check that it never runs. Each
 * side submits right after connecting; the initiator knows a connection
 * is up once a write on it has completed: before the rounds, one write on
 * every connection but the held one shows they are all up.
 *
 * --rss prints the initiator's resident memory before the context starts,
 * after it started, and once its connections are up (a write completed
 * on each; the figure in the README), and the target's once the
 * initiator says "go".
 *
 * Exit 0 on success, 1 on any failure (with a line saying what).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

#define WAIT_S 60.0

struct side {
	const char *role;
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_mmap *lmmap;
	struct doca_mmap *rmmap;
	struct doca_buf_inventory *inv;
	struct doca_rdma_connection **conns;
	uint8_t *region;
	size_t region_len;
	enum doca_ctx_states state;
	uint32_t established; /* must stay 0: export/connect only */
	uint32_t closed;
	int sock;
	long rss_connect;     /* --rss: before the connects */
	double t_connect;
	uint8_t *held_desc; /* target: the held connection's peer descriptor */
	size_t held_len;
};

/* One write task: connection c, slot j of its queue. */
struct wtask {
	struct doca_rdma_task_write *task;
	uint32_t conn;
	bool busy;
};

static uint32_t g_conns = 128, g_inflight = 8, g_rounds = 4;
static size_t g_size = 4096;
static const char *g_device = "soft_lo";
static bool g_rss;

/* Initiator counters (callbacks run inside doca_pe_progress). */
static uint32_t *g_busy;      /* per connection: writes in flight */
static uint64_t g_completed;
static uint64_t g_failed;
static struct wtask *g_tasks;

static int failf(const struct side *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "many_conns %s: FAIL: ", s->role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

#define CHECK(s, call)                                                                                    \
	do {                                                                                              \
		doca_error_t err_ = (call);                                                               \
		if (err_ != DOCA_SUCCESS)                                                                 \
			return failf((s), "%s returned %s", #call, doca_error_get_name(err_));            \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, resident = 0;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static uint8_t pat(size_t off, uint32_t round)
{
	uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)round << 40);

	x ^= x >> 29;
	return (uint8_t)(x ^ (x >> 17));
}

/* ---- the descriptor exchange: length-prefixed frames ---- */

static int full_io(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int frame_send(struct side *s, const void *data, size_t len)
{
	uint32_t n = (uint32_t)len;

	if (full_io(s->sock, &n, sizeof(n), true) != 0 || full_io(s->sock, (void *)data, len, true) != 0)
		return failf(s, "cannot send a %zu-byte frame to the peer", len);
	return 0;
}

static int frame_recv(struct side *s, uint8_t **data, size_t *len)
{
	uint32_t n;

	if (full_io(s->sock, &n, sizeof(n), false) != 0 || n > (1u << 20))
		return failf(s, "the peer's frame did not arrive");
	*data = malloc(n ? n : 1);
	if (*data == NULL || full_io(s->sock, *data, n, false) != 0)
		return failf(s, "the peer's %u-byte frame did not arrive", n);
	*len = n;
	return 0;
}

/* ---- callbacks ---- */

static void state_cb(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct side *s = user_data.ptr;

	(void)ctx;
	(void)prev;
	s->state = next;
}

static void established_cb(struct doca_rdma_connection *conn, union doca_data cu, union doca_data ctxu)
{
	(void)conn;
	(void)cu;
	((struct side *)ctxu.ptr)->established++;
}

static void closed_cb(struct doca_rdma_connection *conn, union doca_data cu, union doca_data ctxu)
{
	(void)conn;
	(void)cu;
	((struct side *)ctxu.ptr)->closed++;
}

static void write_done(struct doca_rdma_task_write *t, union doca_data u, bool ok)
{
	struct wtask *w = &g_tasks[u.u64];

	(void)t;
	w->busy = false;
	g_busy[w->conn]--;
	if (ok)
		g_completed++;
	else
		g_failed++;
}

static void write_ok_cb(struct doca_rdma_task_write *t, union doca_data u, union doca_data c)
{
	(void)c;
	write_done(t, u, true);
}

static void write_err_cb(struct doca_rdma_task_write *t, union doca_data u, union doca_data c)
{
	(void)c;
	fprintf(stderr, "many_conns initiator: write %" PRIu64 " on connection %u failed: %s\n", u.u64,
		g_tasks[u.u64].conn, doca_error_get_name(doca_task_get_status(doca_rdma_task_write_as_task(t))));
	write_done(t, u, false);
}

/* ---- setup and teardown ---- */

static int open_device(struct side *s)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t err = DOCA_ERROR_NOT_FOUND;

	CHECK(s, doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, g_device) == 0) {
			err = doca_dev_open(list[i], &s->dev);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	if (err != DOCA_SUCCESS)
		return failf(s, "cannot open device %s: %s", g_device, doca_error_get_name(err));
	return 0;
}

static int wait_for(struct side *s, bool (*cond)(const struct side *), const char *what)
{
	double deadline = now_s() + WAIT_S;

	while (!cond(s)) {
		if (now_s() > deadline)
			return failf(s, "timed out after %.0f s waiting for %s", WAIT_S, what);
		if (doca_pe_progress(s->pe) == 0)
			usleep(100);
	}
	return 0;
}

static bool is_running(const struct side *s)
{
	return s->state == DOCA_CTX_STATE_RUNNING;
}

static bool is_idle(const struct side *s)
{
	return s->state == DOCA_CTX_STATE_IDLE;
}

static int side_setup(struct side *s, uint32_t perms)
{
	union doca_data cud = {.ptr = s};
	uint32_t sq = 0;
	doca_error_t err;

	s->region = aligned_alloc(4096, (s->region_len + 4095) & ~(size_t)4095);
	s->conns = calloc(g_conns, sizeof(*s->conns));
	if (s->region == NULL || s->conns == NULL)
		return failf(s, "no memory for a %zu-byte region", s->region_len);
	memset(s->region, 0, s->region_len);
	if (open_device(s) != 0)
		return -1;
	CHECK(s, doca_pe_create(&s->pe));
	CHECK(s, doca_mmap_create(&s->lmmap));
	CHECK(s, doca_mmap_set_memrange(s->lmmap, s->region, s->region_len));
	CHECK(s, doca_mmap_set_permissions(s->lmmap, perms));
	CHECK(s, doca_mmap_add_dev(s->lmmap, s->dev));
	CHECK(s, doca_mmap_start(s->lmmap));
	CHECK(s, doca_buf_inventory_create(2 * (size_t)g_conns * g_inflight + 16, &s->inv));
	CHECK(s, doca_buf_inventory_start(s->inv));
	CHECK(s, doca_rdma_create(s->dev, &s->rdma));
	s->ctx = doca_rdma_as_ctx(s->rdma);
	CHECK(s, doca_rdma_set_permissions(s->rdma, perms));
	CHECK(s, doca_rdma_set_max_num_connections(s->rdma, (uint16_t)g_conns));
	/* Each connection's own queue holds exactly g_inflight writes. */
	CHECK(s, doca_rdma_set_send_queue_size(s->rdma, g_inflight));
	CHECK(s, doca_rdma_get_send_queue_size(s->rdma, &sq));
	if (sq != g_inflight)
		return failf(s, "send queue size %u reads back as %u", g_inflight, sq);
	/* The task pool is the context's: room for every connection's queue
	 * plus the one that must be refused. */
	CHECK(s, doca_rdma_task_write_set_conf(s->rdma, write_ok_cb, write_err_cb, g_conns * g_inflight + 1));
	CHECK(s, doca_rdma_set_connection_state_callbacks(s->rdma, NULL, established_cb, closed_cb, closed_cb));
	CHECK(s, doca_ctx_set_user_data(s->ctx, cud));
	CHECK(s, doca_ctx_set_state_changed_cb(s->ctx, state_cb));
	CHECK(s, doca_pe_connect_ctx(s->pe, s->ctx));
	if (g_rss)
		printf("# %s: rss before start: %ld KiB\n", s->role, rss_kib());
	err = doca_ctx_start(s->ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		return failf(s, "doca_ctx_start returned %s", doca_error_get_name(err));
	return wait_for(s, is_running, "RUNNING");
}

static int export_all(struct side *s)
{
	for (uint32_t i = 0; i < g_conns; i++) {
		const void *desc;
		size_t len;

		CHECK(s, doca_rdma_export(s->rdma, &desc, &len, &s->conns[i]));
		if (frame_send(s, desc, len) != 0)
			return -1;
	}
	return 0;
}

/* Export every connection, trade descriptors, connect. The target sends
 * all of its descriptors before it reads any and the initiator reads all
 * before it sends, so neither blocks on a full socket. Nothing to wait
 * for after the connects (see the top). */
static int side_connect(struct side *s, bool send_first)
{
	uint8_t **descs = calloc(g_conns, sizeof(*descs));
	size_t *lens = calloc(g_conns, sizeof(*lens));
	int rc = -1;

	s->rss_connect = rss_kib();
	s->t_connect = now_s();
	if (descs == NULL || lens == NULL) {
		failf(s, "no memory for %u descriptors", g_conns);
		goto out;
	}
	if (send_first && export_all(s) != 0)
		goto out;
	for (uint32_t i = 0; i < g_conns; i++)
		if (frame_recv(s, &descs[i], &lens[i]) != 0)
			goto out;
	if (!send_first && export_all(s) != 0)
		goto out;
	for (uint32_t i = 0; i < g_conns; i++) {
		doca_error_t err;

		/* The target holds the last connection back (see the top). */
		if (send_first && i == g_conns - 1) {
			s->held_desc = descs[i];
			s->held_len = lens[i];
			descs[i] = NULL;
			break;
		}
		err = doca_rdma_connect(s->rdma, descs[i], lens[i], s->conns[i]);

		if (err != DOCA_SUCCESS) {
			failf(s, "doca_rdma_connect of connection %u returned %s", i, doca_error_get_name(err));
			goto out;
		}
	}
	rc = 0;
out:
	for (uint32_t i = 0; descs != NULL && i < g_conns; i++)
		free(descs[i]);
	free(descs);
	free(lens);
	return rc;
}

/* --rss: resident memory now against before the connects, for n
 * connections up. */
static void print_rss(const struct side *s, uint32_t n, const char *when)
{
	long rss1 = rss_kib();

	printf("# %s: rss %s: %ld KiB (+%ld KiB, %.1f KiB per connection); %.2f s\n", s->role, when, rss1,
	       rss1 - s->rss_connect, (double)(rss1 - s->rss_connect) / n, now_s() - s->t_connect);
}

static int side_teardown(struct side *s)
{
	int rc = 0;

	if (s->ctx != NULL && s->state != DOCA_CTX_STATE_IDLE) {
		doca_error_t err = doca_ctx_stop(s->ctx);

		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
			rc = failf(s, "doca_ctx_stop returned %s", doca_error_get_name(err));
		else if (wait_for(s, is_idle, "IDLE") != 0)
			rc = -1;
	}
	/* IDLE: every callback has run. */
	if (s->established != 0)
		rc = failf(s, "the established callback ran %u time(s), expected never: the connections are "
			      "export/connect, and DOCA calls it for RDMA CM connections only",
			   s->established);
	if (s->rmmap != NULL) {
		(void)doca_mmap_stop(s->rmmap);
		(void)doca_mmap_destroy(s->rmmap);
	}
	if (s->rdma != NULL && s->state == DOCA_CTX_STATE_IDLE && doca_rdma_destroy(s->rdma) != DOCA_SUCCESS)
		rc = failf(s, "doca_rdma_destroy failed");
	if (s->pe != NULL && s->state == DOCA_CTX_STATE_IDLE)
		(void)doca_pe_destroy(s->pe);
	if (s->inv != NULL) {
		(void)doca_buf_inventory_stop(s->inv);
		(void)doca_buf_inventory_destroy(s->inv);
	}
	if (s->lmmap != NULL) {
		(void)doca_mmap_stop(s->lmmap);
		(void)doca_mmap_destroy(s->lmmap);
	}
	if (s->dev != NULL)
		(void)doca_dev_close(s->dev);
	free(s->region);
	free(s->conns);
	free(s->held_desc);
	return rc;
}

/* ---- target ---- */

/* Bytes of the region that are not round's data (the first at *first):
 * memory the initiator's writes filled, read once it said it is done
 * (tests/tsan.supp names this function: that order runs through the
 * other process, which TSan cannot see). */
static size_t region_bad_bytes(const struct side *s, uint32_t round, size_t *first)
{
	size_t bad = 0;

	for (size_t off = 0; off < s->region_len; off++) {
		if (s->region[off] != pat(off, round) && bad++ == 0)
			*first = off;
	}
	return bad;
}

/* Progress (serve the writes) until the initiator's next frame. */
static int serve_until_frame(struct side *s, uint8_t **msg, size_t *len)
{
	for (;;) {
		struct pollfd pfd = {.fd = s->sock, .events = POLLIN};

		if (doca_pe_progress(s->pe) != 0)
			continue;
		if (poll(&pfd, 1, 1) > 0)
			break;
	}
	return frame_recv(s, msg, len);
}

static int target_run(struct side *s)
{
	doca_error_t err;
	const void *desc;
	size_t len, bad = 0, first_bad = 0;
	uint8_t *msg;
	size_t msg_len;
	uint32_t round;

	s->role = "target";
	s->region_len = (size_t)g_conns * g_inflight * g_size;
	if (side_setup(s, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE) != 0)
		return -1;
	CHECK(s, doca_mmap_export_rdma(s->lmmap, s->dev, &desc, &len));
	if (frame_send(s, desc, len) != 0 || side_connect(s, true) != 0)
		return -1;
	if (serve_until_frame(s, &msg, &msg_len) != 0)
		return -1;
	if (msg_len != 2 || memcmp(msg, "go", 2) != 0) {
		free(msg);
		return failf(s, "the initiator gave up");
	}
	free(msg);
	if (g_rss) {
		char when[96];

		snprintf(when, sizeof(when), "once the initiator's writes came through %u connections", g_conns - 1);
		print_rss(s, g_conns - 1, when);
	}
	err = doca_rdma_connect(s->rdma, s->held_desc, s->held_len, s->conns[g_conns - 1]);
	if (err != DOCA_SUCCESS)
		return failf(s, "doca_rdma_connect of the held connection returned %s", doca_error_get_name(err));
	/* Serve until the initiator says which round it finished with. */
	if (serve_until_frame(s, &msg, &msg_len) != 0)
		return -1;
	if (msg_len != sizeof(round)) {
		free(msg);
		return failf(s, "the initiator gave up");
	}
	memcpy(&round, msg, sizeof(round));
	free(msg);
	bad = region_bad_bytes(s, round, &first_bad);
	if (bad != 0)
		return failf(s, "%zu of %zu bytes differ from round %u's data (first at offset %zu: conn %zu)", bad,
			     s->region_len, round, first_bad, first_bad / (g_size * g_inflight));
	printf("# target: all %zu bytes of round %u verified\n", s->region_len, round);
	return frame_send(s, "ok", 2);
}

/* ---- initiator ---- */

static int submit(struct side *s, uint32_t t)
{
	doca_error_t err = doca_task_submit(doca_rdma_task_write_as_task(g_tasks[t].task));

	if (err != DOCA_SUCCESS)
		return failf(s, "write %u on connection %u (%u in flight there): doca_task_submit returned %s", t,
			     g_tasks[t].conn, g_busy[g_tasks[t].conn], doca_error_get_name(err));
	g_tasks[t].busy = true;
	g_busy[g_tasks[t].conn]++;
	return 0;
}

/* The held connection has its whole queue in flight (parked at the
 * target, which has not connected it): one more must be refused, and
 * refusing it must leave the task reusable. */
static int probe_full(struct side *s, uint32_t extra, uint64_t *refused)
{
	uint32_t held = g_conns - 1;
	doca_error_t err = doca_task_submit(doca_rdma_task_write_as_task(g_tasks[extra].task));

	if (err == DOCA_SUCCESS) {
		g_tasks[extra].busy = true;
		g_busy[held]++;
		return failf(s, "a write past the held connection's full queue (%u in flight) was accepted",
			     g_busy[held] - 1);
	}
	if (err != DOCA_ERROR_FULL)
		return failf(s, "a write past the held connection's full queue got %s, not DOCA_ERROR_FULL",
			     doca_error_get_name(err));
	(*refused)++;
	return 0;
}

static int tasks_alloc(struct side *s)
{
	uint32_t n = g_conns * g_inflight;
	struct doca_buf *src, *dst;
	void *raddr;
	size_t rlen;

	g_tasks = calloc(n + 1, sizeof(*g_tasks));
	g_busy = calloc(g_conns, sizeof(*g_busy));
	if (g_tasks == NULL || g_busy == NULL)
		return failf(s, "no memory for %u tasks", n);
	CHECK(s, doca_mmap_get_memrange(s->rmmap, &raddr, &rlen));
	if (rlen != s->region_len)
		return failf(s, "the target's region is %zu bytes, not %zu", rlen, s->region_len);
	for (uint32_t t = 0; t <= n; t++) {
		/* Task t writes slice t % n: the extra one (t == n) is the
		 * held connection's, aimed at slice 0. */
		size_t off = (size_t)(t % n) * g_size;
		union doca_data u = {.u64 = t};

		g_tasks[t].conn = t < n ? t / g_inflight : g_conns - 1;
		CHECK(s, doca_buf_inventory_buf_get_by_data(s->inv, s->lmmap, s->region + off, g_size, &src));
		CHECK(s, doca_buf_inventory_buf_get_by_addr(s->inv, s->rmmap, (uint8_t *)raddr + off, g_size, &dst));
		CHECK(s, doca_rdma_task_write_allocate_init(s->rdma, s->conns[g_tasks[t].conn], src, dst, u,
							    &g_tasks[t].task));
	}
	return 0;
}

/* After the rounds nothing is in flight (or we are failing anyway). */
static void tasks_free(void)
{
	for (uint32_t t = 0; t <= g_conns * g_inflight && g_tasks != NULL; t++) {
		struct doca_task *task;

		if (g_tasks[t].task == NULL || g_tasks[t].busy)
			continue;
		task = doca_rdma_task_write_as_task(g_tasks[t].task);
		(void)doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_write_get_src_buf(g_tasks[t].task),
					    NULL);
		(void)doca_buf_dec_refcount(doca_rdma_task_write_get_dst_buf(g_tasks[t].task), NULL);
		doca_task_free(task);
		g_tasks[t].task = NULL;
	}
}

/* Submit tasks [first, first + count) with round's data and progress
 * until they all completed; while the held connection's queue is full
 * (held_full), probe it on every pass and check it stays full. */
static int run_round(struct side *s, uint32_t round, uint32_t first, uint32_t count, bool held_full,
		     uint64_t *refused)
{
	uint32_t held = g_conns - 1;
	double deadline = now_s() + WAIT_S;
	uint64_t want = g_completed + count;

	for (size_t off = (size_t)first * g_size; off < (size_t)(first + count) * g_size; off++)
		s->region[off] = pat(off, round);
	for (uint32_t t = first; t < first + count; t++)
		if (submit(s, t) != 0)
			return -1;
	while (g_completed + g_failed < want) {
		if (g_failed != 0)
			return failf(s, "%" PRIu64 " write(s) failed", g_failed);
		if (now_s() > deadline)
			return failf(s, "round %u: %" PRIu64 " of %u writes still in flight after %.0f s", round,
				     want - g_completed, count, WAIT_S);
		if (held_full && g_busy[held] != g_inflight)
			return failf(s, "a write of the held connection completed before the target connected it");
		if (held_full && probe_full(s, g_conns * g_inflight, refused) != 0)
			return -1;
		(void)doca_pe_progress(s->pe);
	}
	return 0;
}

static bool held_done(const struct side *s)
{
	(void)s;
	return g_busy[g_conns - 1] == 0 || g_failed != 0;
}

static bool first_writes_done(const struct side *s)
{
	(void)s;
	return g_completed == g_conns - 1 || g_failed != 0 || s->closed > 0;
}

/* One write (its first slot, round 0's data) on every connection but the
 * held one; once they completed, those connections are up. */
static int prove_links(struct side *s)
{
	uint32_t held = g_conns - 1;

	for (uint32_t c = 0; c < held; c++) {
		size_t off = (size_t)c * g_inflight * g_size;

		for (size_t k = 0; k < g_size; k++)
			s->region[off + k] = pat(off + k, 0);
		if (submit(s, c * g_inflight) != 0)
			return -1;
	}
	if (wait_for(s, first_writes_done, "a first write completed on every connection") != 0)
		return -1;
	if (g_failed != 0 || s->closed != 0)
		return failf(s, "first writes: %" PRIu64 " failed, %u connection(s) closed", g_failed, s->closed);
	if (g_rss) {
		char when[64];

		snprintf(when, sizeof(when), "once %u connections are up", held);
		print_rss(s, held, when);
	}
	return 0;
}

static int initiator_rounds(struct side *s, uint64_t *refused, uint32_t *last_round)
{
	uint32_t n = g_conns * g_inflight, held = g_conns - 1;
	double t0 = now_s();

	/* Fill the held connection's queue: nothing there can complete. */
	for (size_t off = (size_t)held * g_inflight * g_size; off < s->region_len; off++)
		s->region[off] = pat(off, 0);
	for (uint32_t t = held * g_inflight; t < n; t++)
		if (submit(s, t) != 0)
			return -1;
	if (probe_full(s, n, refused) != 0)
		return -1;
	/* The others run their rounds, K in flight each, unhindered. */
	for (uint32_t round = 1; round <= g_rounds; round++)
		if (run_round(s, round, 0, held * g_inflight, true, refused) != 0)
			return -1;
	printf("# initiator: %u rounds x %u connections x %u writes of %zu bytes in %.2f s, the held connection "
	       "full all along\n",
	       g_rounds, held, g_inflight, g_size, now_s() - t0);
	/* Release the held connection; its parked writes complete. */
	if (frame_send(s, "go", 2) != 0)
		return -1;
	if (wait_for(s, held_done, "the held connection's writes") != 0)
		return -1;
	if (g_failed != 0 || s->closed != 0)
		return failf(s, "the held connection's writes failed (%" PRIu64 ") or a connection closed (%u)",
			     g_failed, s->closed);
	/* A last round on every connection, the held one included. */
	if (run_round(s, g_rounds + 1, 0, n, false, refused) != 0)
		return -1;
	*last_round = g_rounds + 1;
	return 0;
}

static int initiator_run(struct side *s)
{
	uint8_t *desc, *ans = NULL;
	size_t len, ans_len = 0;
	uint64_t refused = 0;
	uint32_t last = 0;
	doca_error_t err;
	int rc;

	s->role = "initiator";
	s->region_len = (size_t)g_conns * g_inflight * g_size;
	if (side_setup(s, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) != 0)
		return -1;
	if (frame_recv(s, &desc, &len) != 0)
		return -1;
	err = doca_mmap_create_from_export(NULL, desc, len, s->dev, &s->rmmap);
	free(desc);
	if (err != DOCA_SUCCESS)
		return failf(s, "doca_mmap_create_from_export returned %s", doca_error_get_name(err));
	if (side_connect(s, false) != 0 || tasks_alloc(s) != 0 || prove_links(s) != 0)
		return -1;
	rc = initiator_rounds(s, &refused, &last);
	tasks_free();
	if (frame_send(s, &last, rc == 0 ? sizeof(last) : 1) != 0)
		return -1;
	if (rc != 0)
		return rc;
	if (frame_recv(s, &ans, &ans_len) != 0)
		return -1;
	rc = ans_len == 2 && memcmp(ans, "ok", 2) == 0 ? 0 : failf(s, "the target did not verify the data");
	free(ans);
	if (rc == 0)
		printf("# initiator: %" PRIu64 " writes completed, none failed; %" PRIu64
		       " submits past the held connection's full queue got DOCA_ERROR_FULL\n",
		       g_completed, refused);
	return rc;
}

/* ---- main ---- */

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{"conns", required_argument, NULL, 'c'}, {"inflight", required_argument, NULL, 'k'},
		{"size", required_argument, NULL, 's'},  {"rounds", required_argument, NULL, 'r'},
		{"device", required_argument, NULL, 'd'}, {"rss", no_argument, NULL, 'm'},
		{NULL, 0, NULL, 0},
	};
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'c': g_conns = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'k': g_inflight = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': g_size = strtoull(optarg, NULL, 0); break;
		case 'r': g_rounds = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'd': g_device = optarg; break;
		case 'm': g_rss = true; break;
		default: return -1;
		}
	}
	/* The queue size must read back unchanged: a power of two. */
	if (g_conns < 2 || g_conns > 65535 || g_inflight == 0 || (g_inflight & (g_inflight - 1)) != 0 ||
	    g_size == 0 || g_rounds == 0) {
		fprintf(stderr, "many_conns: --conns 2..65535, --inflight a power of two, --size and --rounds > 0\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct side s = {.state = DOCA_CTX_STATE_IDLE};
	int sv[2], status = 0, rc;
	pid_t child;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_args(argc, argv) != 0)
		return 2;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("socketpair");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		close(sv[0]);
		s.sock = sv[1];
		rc = target_run(&s);
		if (side_teardown(&s) != 0)
			rc = -1;
		_exit(rc == 0 ? 0 : 1);
	}
	close(sv[1]);
	s.sock = sv[0];
	rc = initiator_run(&s);
	if (side_teardown(&s) != 0)
		rc = -1;
	close(s.sock);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "many_conns: FAIL: the target exited with status %#x\n", status);
		rc = -1;
	}
	free(g_tasks);
	free(g_busy);
	if (rc == 0)
		printf("many_conns: PASS (%u connections x %u in flight, %zu-byte writes)\n", g_conns, g_inflight,
		       g_size);
	return rc == 0 ? 0 : 1;
}
