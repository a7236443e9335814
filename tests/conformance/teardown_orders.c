/*
 * Conformance program — teardown in every order DOCA allows, each step's
 * return code checked against what DOCA documents:
 *
 *   stop_then_free   doca_ctx_stop with tasks allocated but none in flight:
 *                    SUCCESS with the context IDLE (doca_ctx.h: IN_PROGRESS
 *                    means tasks still in progress); the tasks stay valid
 *                    and are freed after, as Tonny-Gu/dpa-bench does.
 *   free_then_stop   tasks freed first: doca_ctx_stop returns SUCCESS with
 *                    the context IDLE, its state callback run inside stop.
 *   stop_inflight    stop with receives (and writes) in flight: IN_PROGRESS;
 *                    each task completes exactly once through its callback
 *                    in doca_pe_progress (receives with an error status),
 *                    the callback frees it, then the context is IDLE.
 *   bufs_after_ctx   doca_bufs outlive the context that used them.
 *   mmap_with_bufs   doca_mmap_stop/destroy refused (NOT_PERMITTED) while
 *                    bufs point into the mmap, the inventory's destroy
 *                    refused (IN_USE) while bufs are out; all succeed after
 *                    the bufs are released.
 *   pe_after_ctx     doca_pe_destroy refused (IN_USE) while a context is
 *                    connected, succeeds once it was destroyed; the device
 *                    close refused (IN_USE) while an mmap uses it.
 *
 *   teardown_orders [--loops N]   (default 200)
 *
 * The connection of a pair is export/connect: as on hardware, where
 * doca_rdma_connect moves the QP to RTS with no event, DOCA calls no
 * established callback for it (RDMA CM only), so nothing waits for one
 * and it must never run; a write that completes shows the link is up.
 *
 * The whole set runs N times in one process; the open fds (/proc/self/fd)
 * and the mappings (/proc/self/maps lines) must stay flat after warm-up
 * (under a sanitizer, whose allocator keeps mapping, fds and shared-memory
 * segments only).
 * Exit 0 on success, 1 with a line saying what failed.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

/* AddressSanitizer's quarantine and ThreadSanitizer's shadow keep
 * mapping memory: under them only fds and shared-memory segments are
 * judged. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

#define LEN 4096
#define NBUF 16
#define WAIT_S 30.0

static const char *step = "setup";
static int loop_no;
static int g_established; /* established callbacks, all loops: must stay 0 */

#define FAIL(...)                                                                                         \
	do {                                                                                              \
		fprintf(stderr, "FAIL [loop %d, %s] line %d: ", loop_no, step, __LINE__);                 \
		fprintf(stderr, __VA_ARGS__);                                                             \
		fputc('\n', stderr);                                                                      \
		return -1;                                                                                \
	} while (0)

/* call must return exactly want. */
#define EXPECT(call, want)                                                                                \
	do {                                                                                              \
		doca_error_t got_ = (call);                                                               \
		if (got_ != (want))                                                                       \
			FAIL("%s returned %s, expected %s", #call, doca_error_get_name(got_),             \
			     doca_error_get_name(want));                                                  \
	} while (0)
#define OK(call) EXPECT(call, DOCA_SUCCESS)

struct side {
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_rdma_connection *conn;
	enum doca_ctx_states state;
	int state_cbs;
	int broken;
	int done_ok, done_err;
	doca_error_t last_err;
	bool free_in_cb; /* completion callbacks free their task */
};

struct world {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_mmap *local, *target, *remote;
	struct doca_buf_inventory *inv;
	uint8_t *src, *dst;
	struct side s[2];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- callbacks ---- */

static void on_state(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct side *s = ud.ptr;

	(void)ctx;
	(void)prev;
	s->state = next;
	s->state_cbs++;
}

static void on_est(struct doca_rdma_connection *c, union doca_data cu, union doca_data ud)
{
	(void)c;
	(void)cu;
	(void)ud;
	g_established++;
}

static void on_broken(struct doca_rdma_connection *c, union doca_data cu, union doca_data ud)
{
	(void)c;
	(void)cu;
	((struct side *)ud.ptr)->broken++;
}

static void task_done(struct doca_task *t, struct side *s, bool ok)
{
	if (ok) {
		s->done_ok++;
	} else {
		s->done_err++;
		s->last_err = doca_task_get_status(t);
	}
	if (s->free_in_cb)
		doca_task_free(t);
}

static void write_ok(struct doca_rdma_task_write *t, union doca_data tu, union doca_data ud)
{
	(void)tu;
	task_done(doca_rdma_task_write_as_task(t), ud.ptr, true);
}

static void write_err(struct doca_rdma_task_write *t, union doca_data tu, union doca_data ud)
{
	(void)tu;
	task_done(doca_rdma_task_write_as_task(t), ud.ptr, false);
}

static void recv_ok(struct doca_rdma_task_receive *t, union doca_data tu, union doca_data ud)
{
	(void)tu;
	task_done(doca_rdma_task_receive_as_task(t), ud.ptr, true);
}

static void recv_err(struct doca_rdma_task_receive *t, union doca_data tu, union doca_data ud)
{
	(void)tu;
	task_done(doca_rdma_task_receive_as_task(t), ud.ptr, false);
}

static void send_ok(struct doca_rdma_task_send *t, union doca_data tu, union doca_data ud)
{
	(void)tu;
	task_done(doca_rdma_task_send_as_task(t), ud.ptr, true);
}

static void send_err(struct doca_rdma_task_send *t, union doca_data tu, union doca_data ud)
{
	(void)tu;
	task_done(doca_rdma_task_send_as_task(t), ud.ptr, false);
}

/* ---- helpers ---- */

static int progress_until(struct world *w, bool (*cond)(struct world *), const char *what)
{
	double end = now() + WAIT_S;

	while (!cond(w)) {
		if (now() > end)
			FAIL("timed out waiting for %s", what);
		if (doca_pe_progress(w->pe) == 0)
			usleep(20);
	}
	return 0;
}

static bool both_running(struct world *w)
{
	return w->s[0].state == DOCA_CTX_STATE_RUNNING && w->s[1].state == DOCA_CTX_STATE_RUNNING;
}

static bool a_idle(struct world *w)
{
	return w->s[0].state == DOCA_CTX_STATE_IDLE;
}

static bool b_idle(struct world *w)
{
	return w->s[1].state == DOCA_CTX_STATE_IDLE;
}

static int open_lo(struct world *w)
{
	struct doca_devinfo **list;
	uint32_t n;

	OK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && w->dev == NULL; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "soft_lo") == 0)
			OK(doca_dev_open(list[i], &w->dev));
	}
	OK(doca_devinfo_destroy_list(list));
	if (w->dev == NULL)
		FAIL("no soft_lo device");
	return 0;
}

static int mmap_make(struct world *w, struct doca_mmap **m, void *p, uint32_t perm)
{
	OK(doca_mmap_create(m));
	OK(doca_mmap_set_memrange(*m, p, LEN));
	OK(doca_mmap_set_permissions(*m, perm));
	OK(doca_mmap_add_dev(*m, w->dev));
	OK(doca_mmap_start(*m));
	return 0;
}

/* Device, memory, inventory and a PE: what every scenario starts from. */
static int world_open(struct world *w)
{
	const void *d;
	size_t n;

	memset(w, 0, sizeof(*w));
	w->src = calloc(1, LEN);
	w->dst = calloc(1, LEN);
	if (w->src == NULL || w->dst == NULL)
		FAIL("out of memory");
	if (open_lo(w) != 0)
		return -1;
	OK(doca_pe_create(&w->pe));
	if (mmap_make(w, &w->local, w->src, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) != 0 ||
	    mmap_make(w, &w->target, w->dst, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE) != 0)
		return -1;
	OK(doca_mmap_export_rdma(w->target, w->dev, &d, &n));
	OK(doca_mmap_create_from_export(NULL, d, n, w->dev, &w->remote));
	OK(doca_buf_inventory_create(NBUF, &w->inv));
	OK(doca_buf_inventory_start(w->inv));
	return 0;
}

static int world_close(struct world *w)
{
	OK(doca_buf_inventory_stop(w->inv));
	OK(doca_buf_inventory_destroy(w->inv));
	OK(doca_mmap_destroy(w->remote));
	OK(doca_mmap_destroy(w->local));
	OK(doca_mmap_destroy(w->target));
	/* doca_pe_destroy after every context on it was destroyed. */
	OK(doca_pe_destroy(w->pe));
	OK(doca_dev_close(w->dev));
	free(w->src);
	free(w->dst);
	return 0;
}

static int side_create(struct world *w, struct side *s)
{
	union doca_data ud = {.ptr = s};

	memset(s, 0, sizeof(*s));
	s->state = DOCA_CTX_STATE_IDLE;
	OK(doca_rdma_create(w->dev, &s->rdma));
	s->ctx = doca_rdma_as_ctx(s->rdma);
	OK(doca_rdma_set_permissions(s->rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE));
	OK(doca_rdma_task_write_set_conf(s->rdma, write_ok, write_err, 8));
	OK(doca_rdma_task_send_set_conf(s->rdma, send_ok, send_err, 8));
	OK(doca_rdma_task_receive_set_conf(s->rdma, recv_ok, recv_err, 8));
	OK(doca_rdma_set_connection_state_callbacks(s->rdma, NULL, on_est, on_broken, on_broken));
	OK(doca_ctx_set_user_data(s->ctx, ud));
	OK(doca_ctx_set_state_changed_cb(s->ctx, on_state));
	OK(doca_pe_connect_ctx(w->pe, s->ctx));
	return 0;
}

static int ctx_start(struct doca_ctx *ctx)
{
	doca_error_t err = doca_ctx_start(ctx);

	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		FAIL("doca_ctx_start returned %s", doca_error_get_name(err));
	return 0;
}

/* Two contexts on the world's PE, one connection between them; nothing
 * to wait for after the connects (see the top): the first write waits
 * for the link. */
static int pair_up(struct world *w)
{
	const void *d0, *d1;
	size_t n0, n1;

	if (side_create(w, &w->s[0]) != 0 || side_create(w, &w->s[1]) != 0)
		return -1;
	if (ctx_start(w->s[0].ctx) != 0 || ctx_start(w->s[1].ctx) != 0 ||
	    progress_until(w, both_running, "both contexts running") != 0)
		return -1;
	OK(doca_rdma_export(w->s[0].rdma, &d0, &n0, &w->s[0].conn));
	OK(doca_rdma_export(w->s[1].rdma, &d1, &n1, &w->s[1].conn));
	OK(doca_rdma_connect(w->s[0].rdma, d1, n1, w->s[0].conn));
	OK(doca_rdma_connect(w->s[1].rdma, d0, n0, w->s[1].conn));
	return 0;
}

static int bufs_get(struct world *w, struct doca_buf **src, struct doca_buf **dst)
{
	void *raddr;
	size_t rlen;

	OK(doca_mmap_get_memrange(w->remote, &raddr, &rlen));
	OK(doca_buf_inventory_buf_get_by_data(w->inv, w->local, w->src, LEN, src));
	OK(doca_buf_inventory_buf_get_by_addr(w->inv, w->remote, raddr, LEN, dst));
	return 0;
}

/* Release both bufs: each held exactly one reference (DOCA reports the
 * count before the call). */
static int bufs_put(struct doca_buf *a, struct doca_buf *b)
{
	uint16_t rc;

	OK(doca_buf_dec_refcount(a, &rc));
	if (rc != 1)
		FAIL("a buf had %u references at its last release, expected 1", rc);
	OK(doca_buf_dec_refcount(b, &rc));
	if (rc != 1)
		FAIL("a buf had %u references at its last release, expected 1", rc);
	return 0;
}

static bool a_one_done(struct world *w)
{
	return w->s[0].done_ok + w->s[0].done_err > 0;
}

/* One write A -> B, checked; the task is left allocated (or NULL). */
static int write_once(struct world *w, struct doca_buf *src, struct doca_buf *dst, uint8_t seed,
		      struct doca_rdma_task_write **out)
{
	union doca_data tu = {.u64 = seed};

	for (int i = 0; i < LEN; i++)
		w->src[i] = (uint8_t)(i * 7 + seed);
	OK(doca_rdma_task_write_allocate_init(w->s[0].rdma, w->s[0].conn, src, dst, tu, out));
	w->s[0].done_ok = w->s[0].done_err = 0;
	OK(doca_task_submit(doca_rdma_task_write_as_task(*out)));
	if (progress_until(w, a_one_done, "the write") != 0)
		return -1;
	if (w->s[0].done_ok != 1)
		FAIL("the write failed: %s", doca_error_get_name(w->s[0].last_err));
	if (w->s[0].broken || w->s[1].broken)
		FAIL("the connection failed");
	if (memcmp(w->src, w->dst, LEN) != 0)
		FAIL("the write's data did not arrive");
	return 0;
}

/* Stop one side that has nothing allocated: SUCCESS, IDLE at return. */
static int stop_clean(struct side *s)
{
	int before = s->state_cbs;

	OK(doca_ctx_stop(s->ctx));
	if (s->state != DOCA_CTX_STATE_IDLE || s->state_cbs == before)
		FAIL("doca_ctx_stop returned SUCCESS but the state callback did not report IDLE");
	OK(doca_rdma_destroy(s->rdma));
	return 0;
}

static int ctx_state_is(struct doca_ctx *ctx, enum doca_ctx_states want)
{
	enum doca_ctx_states st;

	OK(doca_ctx_get_state(ctx, &st));
	if (st != want)
		FAIL("doca_ctx_get_state says %d, expected %d", st, want);
	return 0;
}

/* ---- scenarios ---- */

static int stop_then_free(struct world *w)
{
	struct doca_rdma_task_write *t;
	struct doca_buf *src, *dst;

	step = "stop_then_free";
	if (pair_up(w) != 0 || bufs_get(w, &src, &dst) != 0 || write_once(w, src, dst, 1, &t) != 0)
		return -1;
	/* A completed task that is not freed does not hold the stop. */
	EXPECT(doca_ctx_stop(w->s[0].ctx), DOCA_SUCCESS);
	if (ctx_state_is(w->s[0].ctx, DOCA_CTX_STATE_IDLE) != 0)
		return -1;
	EXPECT(doca_ctx_stop(w->s[0].ctx), DOCA_SUCCESS);
	/* Still the application's: freed after the context is idle. */
	if (doca_task_get_ctx(doca_rdma_task_write_as_task(t)) != w->s[0].ctx)
		FAIL("the task allocated before the stop lost its context");
	doca_task_free(doca_rdma_task_write_as_task(t));
	OK(doca_rdma_destroy(w->s[0].rdma));
	if (bufs_put(src, dst) != 0 || stop_clean(&w->s[1]) != 0)
		return -1;
	return 0;
}

static int free_then_stop(struct world *w)
{
	struct doca_rdma_task_write *t;
	struct doca_buf *src, *dst;

	step = "free_then_stop";
	if (pair_up(w) != 0 || bufs_get(w, &src, &dst) != 0 || write_once(w, src, dst, 2, &t) != 0)
		return -1;
	doca_task_free(doca_rdma_task_write_as_task(t));
	if (bufs_put(src, dst) != 0)
		return -1;
	/* Stopping again once IDLE is a no-op that succeeds. */
	if (stop_clean(&w->s[1]) != 0)
		return -1;
	OK(doca_ctx_stop(w->s[0].ctx));
	if (w->s[0].state != DOCA_CTX_STATE_IDLE)
		FAIL("doca_ctx_stop returned SUCCESS but the context is not IDLE");
	OK(doca_ctx_stop(w->s[0].ctx));
	OK(doca_rdma_destroy(w->s[0].rdma));
	return 0;
}

static bool a_all_done(struct world *w)
{
	return w->s[0].done_ok + w->s[0].done_err == 4;
}

static int stop_inflight(struct world *w)
{
	struct doca_rdma_task_receive *r[4];
	struct doca_rdma_task_write *wt[4];
	struct doca_buf *rb[4], *src, *dst;
	size_t inflight = 0;
	union doca_data tu = {.u64 = 0};

	step = "stop_inflight";
	if (pair_up(w) != 0 || bufs_get(w, &src, &dst) != 0)
		return -1;
	/* The writes below are to be in flight on a live connection: one
	 * write that completes shows it is up. */
	{
		struct doca_rdma_task_write *t;

		if (write_once(w, src, dst, 4, &t) != 0)
			return -1;
		doca_task_free(doca_rdma_task_write_as_task(t));
		w->s[0].done_ok = w->s[0].done_err = 0;
	}
	/* B: four receives that no send will ever match. */
	for (int i = 0; i < 4; i++) {
		OK(doca_buf_inventory_buf_get_by_addr(w->inv, w->target, w->dst + i * 64, 64, &rb[i]));
		OK(doca_rdma_task_receive_allocate_init(w->s[1].rdma, rb[i], tu, &r[i]));
		OK(doca_task_submit(doca_rdma_task_receive_as_task(r[i])));
	}
	OK(doca_ctx_get_num_inflight_tasks(w->s[1].ctx, &inflight));
	if (inflight != 4)
		FAIL("%zu receives in flight, expected 4", inflight);
	/* A: four writes, then stop at once: each completes, one way or the
	 * other, exactly once; the callbacks free them. */
	w->s[0].free_in_cb = true;
	for (int i = 0; i < 4; i++) {
		OK(doca_rdma_task_write_allocate_init(w->s[0].rdma, w->s[0].conn, src, dst, tu, &wt[i]));
		OK(doca_task_submit(doca_rdma_task_write_as_task(wt[i])));
	}
	{
		doca_error_t err = doca_ctx_stop(w->s[0].ctx);

		if (err != DOCA_ERROR_IN_PROGRESS && !(err == DOCA_SUCCESS && a_all_done(w)))
			FAIL("doca_ctx_stop with 4 writes in flight returned %s", doca_error_get_name(err));
	}
	if (progress_until(w, a_idle, "A IDLE after its writes were flushed") != 0)
		return -1;
	if (!a_all_done(w))
		FAIL("A went IDLE with %d of 4 write callbacks run", w->s[0].done_ok + w->s[0].done_err);
	OK(doca_rdma_destroy(w->s[0].rdma));
	/* B: its receives are flushed with an error status. */
	w->s[1].free_in_cb = true;
	EXPECT(doca_ctx_stop(w->s[1].ctx), DOCA_ERROR_IN_PROGRESS);
	if (w->s[1].done_ok + w->s[1].done_err != 0)
		FAIL("a receive's callback ran inside doca_ctx_stop, not in doca_pe_progress");
	if (progress_until(w, b_idle, "B IDLE after its receives were flushed") != 0)
		return -1;
	if (w->s[1].done_err != 4 || w->s[1].done_ok != 0)
		FAIL("flushed receives: %d errors, %d successes; expected 4 errors", w->s[1].done_err, w->s[1].done_ok);
	if (w->s[1].last_err == DOCA_SUCCESS)
		FAIL("a flushed receive reports DOCA_SUCCESS as its status");
	if (loop_no == 1)
		printf("stop with tasks in flight: writes %d completed, %d flushed (%s); receives flushed with %s\n",
		       w->s[0].done_ok, w->s[0].done_err,
		       w->s[0].done_err ? doca_error_get_name(w->s[0].last_err) : "-",
		       doca_error_get_name(w->s[1].last_err));
	OK(doca_rdma_destroy(w->s[1].rdma));
	for (int i = 0; i < 4; i++)
		OK(doca_buf_dec_refcount(rb[i], NULL));
	return bufs_put(src, dst);
}

static int bufs_after_ctx(struct world *w)
{
	struct doca_rdma_task_write *t;
	struct doca_buf *src, *dst;

	step = "bufs_after_ctx";
	if (pair_up(w) != 0 || bufs_get(w, &src, &dst) != 0 || write_once(w, src, dst, 3, &t) != 0)
		return -1;
	doca_task_free(doca_rdma_task_write_as_task(t));
	if (stop_clean(&w->s[0]) != 0 || stop_clean(&w->s[1]) != 0)
		return -1;
	/* The contexts are gone; the bufs are still the application's. */
	{
		void *data;

		OK(doca_buf_get_data(src, &data));
		if (data != w->src)
			FAIL("a buf's data pointer changed after its context was destroyed");
	}
	return bufs_put(src, dst);
}

static int mmap_with_bufs(struct world *w)
{
	struct doca_mmap *m;
	struct doca_buf *b, *b2;
	uint8_t *mem = calloc(1, LEN);

	step = "mmap_with_bufs";
	if (mem == NULL)
		FAIL("out of memory");
	if (mmap_make(w, &m, mem, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) != 0)
		return -1;
	OK(doca_buf_inventory_buf_get_by_data(w->inv, m, mem, 64, &b));
	OK(doca_buf_inventory_buf_get_by_data(w->inv, m, mem + 64, 64, &b2));
	EXPECT(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	EXPECT(doca_mmap_stop(m), DOCA_ERROR_NOT_PERMITTED);
	/* The device is in use by the mmap: its last close is refused. */
	EXPECT(doca_dev_close(w->dev), DOCA_ERROR_IN_USE);
	OK(doca_buf_dec_refcount(b, NULL));
	EXPECT(doca_mmap_destroy(m), DOCA_ERROR_NOT_PERMITTED);
	/* An inventory with bufs out cannot be destroyed. */
	{
		struct doca_buf_inventory *inv;
		struct doca_buf *b3;

		OK(doca_buf_inventory_create(2, &inv));
		OK(doca_buf_inventory_start(inv));
		OK(doca_buf_inventory_buf_get_by_data(inv, m, mem, 8, &b3));
		OK(doca_buf_inventory_stop(inv));
		EXPECT(doca_buf_inventory_destroy(inv), DOCA_ERROR_IN_USE);
		OK(doca_buf_dec_refcount(b3, NULL));
		OK(doca_buf_inventory_destroy(inv));
	}
	OK(doca_buf_dec_refcount(b2, NULL));
	OK(doca_mmap_destroy(m));
	free(mem);
	return 0;
}

static int pe_after_ctx(struct world *w)
{
	struct world w2 = *w;
	struct side *s = &w2.s[0];

	step = "pe_after_ctx";
	/* A second PE with one context on it, started and stopped. */
	OK(doca_pe_create(&w2.pe));
	if (side_create(&w2, s) != 0 || ctx_start(s->ctx) != 0)
		return -1;
	{
		double end = now() + WAIT_S;

		while (s->state != DOCA_CTX_STATE_RUNNING) {
			if (now() > end)
				FAIL("the context did not start");
			(void)doca_pe_progress(w2.pe);
		}
	}
	EXPECT(doca_pe_destroy(w2.pe), DOCA_ERROR_IN_USE);
	if (stop_clean(s) != 0)
		return -1;
	OK(doca_pe_destroy(w2.pe));
	return 0;
}

/* ---- leak watch ---- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/* Lines of /proc/self/maps; *shm receives those of shared-memory
 * segments (SysV, /dev/shm), what UCX's shared-memory transports map. */
static int count_maps(int *shm)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	*shm = 0;
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		n += strchr(line, '\n') != NULL;
		*shm += strstr(line, "SYSV") != NULL || strstr(line, "/dev/shm/") != NULL;
	}
	fclose(f);
	return n;
}

static int one_loop(void)
{
	int (*scenarios[])(struct world *) = {stop_then_free, free_then_stop, stop_inflight,
					      bufs_after_ctx, mmap_with_bufs, pe_after_ctx};

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		struct world w;

		step = "world_open";
		if (world_open(&w) != 0 || scenarios[i](&w) != 0)
			return -1;
		step = "world_close";
		if (world_close(&w) != 0)
			return -1;
		if (g_established != 0)
			FAIL("the established callback ran %d time(s) for an export/connect connection (DOCA calls it "
			     "for RDMA CM connections only)",
			     g_established);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int loops = 200, warm = 10, fd0 = 0, map0 = 0, shm0 = 0;
	double t0 = now();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && strcmp(argv[1], "--loops") == 0)
		loops = atoi(argv[2]);
	if (loops < 1) {
		fprintf(stderr, "usage: teardown_orders [--loops N]\n");
		return 2;
	}
	if (loops <= warm)
		warm = 0;
	for (loop_no = 1; loop_no <= loops; loop_no++) {
		if (one_loop() != 0)
			return 1;
		/* The refusals above log one SDK error line each: the first
		 * loop shows them, the others stay quiet. */
		if (loop_no == 1)
			(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_CRIT);
		if (loop_no == (warm ? warm : 1)) {
			fd0 = count_fds();
			map0 = count_maps(&shm0);
			printf("after loop %d: %d fds, %d mappings (%d shared-memory)\n", loop_no, fd0, map0, shm0);
		}
	}
	{
		int shm1, fd1 = count_fds(), map1 = count_maps(&shm1);

		printf("after loop %d: %d fds, %d mappings (%d shared-memory) in %.1f s%s\n", loops, fd1, map1, shm1,
		       now() - t0, UNDER_SANITIZER ? "; under a sanitizer: all mappings not judged" : "");
		/* fds and shared-memory segments must not move at all; a few
		 * mappings may come and go with malloc's arenas, a leak per
		 * loop would add hundreds. */
		if (fd1 != fd0 || shm1 != shm0 || (!UNDER_SANITIZER && map1 > map0 + 8)) {
			fprintf(stderr,
				"FAIL: resources grew over %d loops: fds %d -> %d, shared-memory mappings %d -> %d, "
				"mappings %d -> %d\n",
				loops - warm, fd0, fd1, shm0, shm1, map0, map1);
			return 1;
		}
	}
	printf("teardown_orders: PASS (%d loops of 6 teardown orders)\n", loops);
	return 0;
}
