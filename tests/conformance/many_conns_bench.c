/*
 * Conformance program — the many-connection write benchmark, written the
 * way a DOCA user writes it: one doca_rdma context with N connections,
 * K RDMA writes in flight on each, every write resubmitted from its own
 * completion callback until it has run I iterations; then every byte of
 * the target's memory is checked and the rate printed.
 *
 *   many_conns_bench [--device IBDEV|@ether] [--peer fork|self]
 *                    [--conns N] [--inflight K] [--size BYTES] [--iters I]
 *
 * --peer fork: a second process (forked) owns the target context and its
 * memory; descriptors travel over a socketpair. --peer self: the one
 * context connects its connections pairwise to each other (2i <-> 2i+1)
 * and writes into its own exported memory. --device @ether picks the
 * first soft device that is not soft_lo (exit 77 when there is none).
 *
 * Before each submit the slot's source is filled with the pattern of the
 * iteration it carries, so the target's final contents prove that every
 * slot's last write landed, at its own place, after all earlier ones.
 *
 * The connections are export/connect: as on hardware, where
 * doca_rdma_connect moves the QP to RTS with no event, DOCA calls no
 * established callback for them (RDMA CM only), and it must never run
 * here. A connection is up once a write on it has completed: before the
 * clock starts, one write on each (warm_up).
 * Exit 0 on success, 1 on failure, 77 when the device is missing.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
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

#define TIMEOUT_S 120.0
#define SKIP 77
#define WARM_UP_BIT (UINT64_C(1) << 63) /* in a warm-up write's user data */

#define TRY(call)                                                                                         \
	do {                                                                                              \
		doca_error_t e_ = (call);                                                                 \
		if (e_ != DOCA_SUCCESS) {                                                                 \
			fprintf(stderr, "[%s] %s:%d: %s -> %s\n", role, __FILE__, __LINE__, #call,        \
				doca_error_get_name(e_));                                                 \
			return -1;                                                                        \
		}                                                                                         \
	} while (0)

struct slot {
	struct doca_rdma_task_write *task;
	uint8_t *src;
	uint32_t iter; /* iterations submitted so far */
};

struct app {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_mmap *src_mmap, *dst_mmap, *remote_mmap;
	struct doca_buf_inventory *inv;
	struct doca_rdma_connection **conns;
	uint8_t *src, *dst;
	size_t len;
	enum doca_ctx_states state;
	uint32_t established, broken; /* established must stay 0 (export/connect) */
	struct slot *slots;
	uint64_t done, failed;
	uint32_t slots_finished;
	uint32_t warmed; /* warm-up writes completed */
};

static const char *role = "bench";
static const char *dev_name = "soft_lo";
static bool self_peer;
static uint32_t n_conns = 128, n_inflight = 8, n_iters = 100;
static size_t wsize = 256;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint8_t pattern(size_t off, uint32_t iter)
{
	uint32_t x = (uint32_t)off * 2654435761u + iter * 40503u;

	return (uint8_t)(x >> 13);
}

/* ---- out-of-band channel: length-prefixed blobs over a socket ---- */

static int xfer(int fd, void *p, size_t n, bool out)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t r = out ? write(fd, b, n) : read(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int blob_send(int fd, const void *p, size_t n)
{
	uint32_t len = (uint32_t)n;

	return xfer(fd, &len, sizeof(len), true) || xfer(fd, (void *)p, n, true) ? -1 : 0;
}

static void *blob_recv(int fd, size_t *n)
{
	uint32_t len;
	void *p;

	if (xfer(fd, &len, sizeof(len), false) != 0 || len > (1u << 20))
		return NULL;
	p = malloc(len ? len : 1);
	if (p != NULL && xfer(fd, p, len, false) != 0) {
		free(p);
		return NULL;
	}
	*n = len;
	return p;
}

/* ---- callbacks ---- */

static void on_state(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	(void)ctx;
	(void)prev;
	((struct app *)ud.ptr)->state = next;
}

static void on_established(struct doca_rdma_connection *c, union doca_data cu, union doca_data ud)
{
	(void)c;
	(void)cu;
	((struct app *)ud.ptr)->established++;
}

static void on_broken(struct doca_rdma_connection *c, union doca_data cu, union doca_data ud)
{
	(void)c;
	(void)cu;
	((struct app *)ud.ptr)->broken++;
}

static void fill_src(struct app *a, uint32_t s)
{
	size_t base = (size_t)s * wsize;

	for (size_t i = 0; i < wsize; i++)
		a->slots[s].src[i] = pattern(base + i, a->slots[s].iter);
}

/* A warm-up write is done (see warm_up): it goes back to the pool. */
static void warm_up_done(struct app *a, struct doca_rdma_task_write *t)
{
	(void)doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_write_get_src_buf(t), NULL);
	(void)doca_buf_dec_refcount(doca_rdma_task_write_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_write_as_task(t));
	a->warmed++;
}

/* The benchmark's heart: a finished write goes straight back out. */
static void on_write_done(struct doca_rdma_task_write *t, union doca_data tu, union doca_data ud)
{
	struct app *a = ud.ptr;
	struct slot *sl;
	doca_error_t err;

	if (tu.u64 & WARM_UP_BIT) {
		warm_up_done(a, t);
		return;
	}
	sl = &a->slots[tu.u64];
	a->done++;
	if (sl->iter == n_iters) {
		a->slots_finished++;
		return;
	}
	sl->iter++;
	fill_src(a, (uint32_t)tu.u64);
	err = doca_task_submit(doca_rdma_task_write_as_task(t));
	if (err != DOCA_SUCCESS) {
		fprintf(stderr, "[%s] resubmit of slot %" PRIu64 " -> %s\n", role, tu.u64, doca_error_get_name(err));
		a->failed++;
		a->slots_finished++;
	}
}

static void on_write_error(struct doca_rdma_task_write *t, union doca_data tu, union doca_data ud)
{
	struct app *a = ud.ptr;

	if (tu.u64 & WARM_UP_BIT) {
		fprintf(stderr, "[%s] the warm-up write on connection %" PRIu64 " failed: %s\n", role,
			tu.u64 & ~WARM_UP_BIT, doca_error_get_name(doca_task_get_status(doca_rdma_task_write_as_task(t))));
		a->failed++;
		warm_up_done(a, t);
		return;
	}
	fprintf(stderr, "[%s] write of slot %" PRIu64 " failed: %s\n", role, tu.u64,
		doca_error_get_name(doca_task_get_status(doca_rdma_task_write_as_task(t))));
	a->failed++;
	a->slots_finished++;
}

/* ---- setup ---- */

/* Returns 1 when the device is not there (a skip, not a failure). */
static int open_dev(struct app *a)
{
	struct doca_devinfo **list;
	uint32_t n;
	int rc = 1;

	TRY(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && rc == 1; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";
		bool want;

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) != DOCA_SUCCESS)
			continue;
		want = strcmp(dev_name, "@ether") == 0 ? strcmp(name, "soft_lo") != 0 : strcmp(name, dev_name) == 0;
		if (!want || doca_rdma_cap_task_write_is_supported(list[i]) != DOCA_SUCCESS)
			continue;
		rc = doca_dev_open(list[i], &a->dev) == DOCA_SUCCESS ? 0 : -1;
		if (rc == 0)
			printf("[%s] device %s\n", role, name);
	}
	doca_devinfo_destroy_list(list);
	return rc;
}

static int wait_until(struct app *a, bool (*cond)(struct app *), const char *what)
{
	double end = now() + TIMEOUT_S;

	while (!cond(a)) {
		if (now() > end) {
			fprintf(stderr, "[%s] timed out waiting for %s\n", role, what);
			return -1;
		}
		if (doca_pe_progress(a->pe) == 0)
			usleep(50);
	}
	return 0;
}

static bool running(struct app *a)
{
	return a->state == DOCA_CTX_STATE_RUNNING;
}

static bool idle(struct app *a)
{
	return a->state == DOCA_CTX_STATE_IDLE;
}

static bool warmed_up(struct app *a)
{
	return a->warmed == n_conns || a->broken > 0;
}

static bool all_finished(struct app *a)
{
	return a->slots_finished == n_conns * n_inflight;
}

static int mmap_over(struct app *a, struct doca_mmap **m, void *p, size_t n, uint32_t perm)
{
	TRY(doca_mmap_create(m));
	TRY(doca_mmap_set_memrange(*m, p, n));
	TRY(doca_mmap_set_permissions(*m, perm));
	TRY(doca_mmap_add_dev(*m, a->dev));
	TRY(doca_mmap_start(*m));
	return 0;
}

static int setup(struct app *a, bool initiator, bool target)
{
	union doca_data ud = {.ptr = a};
	doca_error_t err;

	a->len = (size_t)n_conns * n_inflight * wsize;
	a->conns = calloc(n_conns, sizeof(*a->conns));
	if (a->conns == NULL)
		return -1;
	TRY(doca_pe_create(&a->pe));
	if (initiator) {
		a->src = calloc(1, a->len);
		if (a->src == NULL || mmap_over(a, &a->src_mmap, a->src, a->len, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE))
			return -1;
	}
	if (target) {
		a->dst = calloc(1, a->len);
		if (a->dst == NULL ||
		    mmap_over(a, &a->dst_mmap, a->dst, a->len,
			      DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE))
			return -1;
	}
	TRY(doca_buf_inventory_create(2 * (size_t)n_conns * n_inflight, &a->inv));
	TRY(doca_buf_inventory_start(a->inv));
	TRY(doca_rdma_create(a->dev, &a->rdma));
	a->ctx = doca_rdma_as_ctx(a->rdma);
	TRY(doca_rdma_set_permissions(a->rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE));
	TRY(doca_rdma_set_max_num_connections(a->rdma, (uint16_t)n_conns));
	TRY(doca_rdma_set_send_queue_size(a->rdma, n_inflight));
	TRY(doca_rdma_task_write_set_conf(a->rdma, on_write_done, on_write_error, n_conns * n_inflight));
	TRY(doca_rdma_set_connection_state_callbacks(a->rdma, NULL, on_established, on_broken, on_broken));
	TRY(doca_ctx_set_user_data(a->ctx, ud));
	TRY(doca_ctx_set_state_changed_cb(a->ctx, on_state));
	TRY(doca_pe_connect_ctx(a->pe, a->ctx));
	err = doca_ctx_start(a->ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS) {
		fprintf(stderr, "[%s] doca_ctx_start -> %s\n", role, doca_error_get_name(err));
		return -1;
	}
	return wait_until(a, running, "the context to run");
}

static int teardown(struct app *a)
{
	int rc = 0;

	for (uint32_t s = 0; a->slots != NULL && s < n_conns * n_inflight; s++) {
		struct doca_rdma_task_write *t = a->slots[s].task;

		if (t == NULL)
			continue;
		doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_write_get_src_buf(t), NULL);
		doca_buf_dec_refcount(doca_rdma_task_write_get_dst_buf(t), NULL);
		doca_task_free(doca_rdma_task_write_as_task(t));
	}
	if (a->ctx != NULL) {
		doca_error_t err = doca_ctx_stop(a->ctx);

		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
			rc = -1;
		if (wait_until(a, idle, "the context to stop") != 0)
			rc = -1;
		if (doca_rdma_destroy(a->rdma) != DOCA_SUCCESS)
			rc = -1;
		/* IDLE: every connection callback has run. */
		if (a->established != 0) {
			fprintf(stderr, "[%s] the established callback ran %u time(s) for export/connect connections "
					"(DOCA calls it for RDMA CM connections only)\n",
				role, a->established);
			rc = -1;
		}
	}
	if (a->pe != NULL && doca_pe_destroy(a->pe) != DOCA_SUCCESS)
		rc = -1;
	if (a->inv != NULL && (doca_buf_inventory_stop(a->inv) != DOCA_SUCCESS ||
			       doca_buf_inventory_destroy(a->inv) != DOCA_SUCCESS))
		rc = -1;
	if (a->remote_mmap != NULL && doca_mmap_destroy(a->remote_mmap) != DOCA_SUCCESS)
		rc = -1;
	if (a->src_mmap != NULL && doca_mmap_destroy(a->src_mmap) != DOCA_SUCCESS)
		rc = -1;
	if (a->dst_mmap != NULL && doca_mmap_destroy(a->dst_mmap) != DOCA_SUCCESS)
		rc = -1;
	if (a->dev != NULL && doca_dev_close(a->dev) != DOCA_SUCCESS)
		rc = -1;
	if (rc != 0)
		fprintf(stderr, "[%s] teardown reported an error\n", role);
	free(a->slots);
	free(a->conns);
	free(a->src);
	free(a->dst);
	return rc;
}

/* ---- the run ---- */

static int verify(const uint8_t *dst, size_t len)
{
	size_t bad = 0, first = 0;

	for (size_t i = 0; i < len; i++)
		if (dst[i] != pattern(i, n_iters) && bad++ == 0)
			first = i;
	if (bad != 0) {
		fprintf(stderr, "[%s] %zu of %zu bytes wrong, first at %zu (connection %zu)\n", role, bad, len, first,
			first / (wsize * n_inflight));
		return -1;
	}
	printf("[%s] all %zu bytes verified\n", role, len);
	return 0;
}

static int make_tasks(struct app *a)
{
	uint32_t n = n_conns * n_inflight;
	void *raddr;
	size_t rlen;

	a->slots = calloc(n, sizeof(*a->slots));
	if (a->slots == NULL)
		return -1;
	TRY(doca_mmap_get_memrange(a->remote_mmap, &raddr, &rlen));
	if (rlen != a->len) {
		fprintf(stderr, "[%s] the remote memory is %zu bytes, expected %zu\n", role, rlen, a->len);
		return -1;
	}
	for (uint32_t s = 0; s < n; s++) {
		size_t off = (size_t)s * wsize;
		struct doca_buf *src, *dst;
		union doca_data tu = {.u64 = s};

		a->slots[s].src = a->src + off;
		TRY(doca_buf_inventory_buf_get_by_data(a->inv, a->src_mmap, a->src + off, wsize, &src));
		TRY(doca_buf_inventory_buf_get_by_addr(a->inv, a->remote_mmap, (uint8_t *)raddr + off, wsize, &dst));
		TRY(doca_rdma_task_write_allocate_init(a->rdma, a->conns[s / n_inflight], src, dst, tu,
						       &a->slots[s].task));
	}
	return 0;
}

static int bench(struct app *a)
{
	uint32_t n = n_conns * n_inflight;
	double t0, dt;

	if (make_tasks(a) != 0)
		return -1;
	t0 = now();
	for (uint32_t s = 0; s < n; s++) {
		a->slots[s].iter = 1;
		fill_src(a, s);
		TRY(doca_task_submit(doca_rdma_task_write_as_task(a->slots[s].task)));
	}
	if (wait_until(a, all_finished, "every write to finish") != 0)
		return -1;
	dt = now() - t0;
	if (a->failed != 0 || a->done != (uint64_t)n * n_iters) {
		fprintf(stderr, "[%s] %" PRIu64 " writes completed, %" PRIu64 " failed; expected %" PRIu64 "\n", role,
			a->done, a->failed, (uint64_t)n * n_iters);
		return -1;
	}
	printf("[%s] %u connections x %u in flight x %u iterations of %zu-byte writes: %" PRIu64
	       " ops in %.3f s = %.0f ops/s, %.1f MB/s\n",
	       role, n_conns, n_inflight, n_iters, wsize, a->done, dt, a->done / dt, a->done * wsize / dt / 1e6);
	return 0;
}

static int export_all(struct app *a, int fd)
{
	for (uint32_t i = 0; i < n_conns; i++) {
		const void *d;
		size_t n;

		TRY(doca_rdma_export(a->rdma, &d, &n, &a->conns[i]));
		if (blob_send(fd, d, n) != 0)
			return -1;
	}
	return 0;
}

/* The peer's descriptors, all of them (read before we send ours, so
 * that neither side blocks on a full socket). */
static void **recv_all(int fd, size_t *lens)
{
	void **d = calloc(n_conns, sizeof(*d));

	for (uint32_t i = 0; d != NULL && i < n_conns; i++) {
		d[i] = blob_recv(fd, &lens[i]);
		if (d[i] == NULL) {
			fprintf(stderr, "[%s] the peer's descriptor %u did not arrive\n", role, i);
			return d;
		}
	}
	return d;
}

/* Only after export_all: a connection is made by export, then bound. */
static int connect_all(struct app *a, void **d, const size_t *lens)
{
	for (uint32_t i = 0; i < n_conns; i++) {
		doca_error_t err;

		if (d == NULL || d[i] == NULL)
			return -1;
		err = doca_rdma_connect(a->rdma, d[i], lens[i], a->conns[i]);
		if (err != DOCA_SUCCESS) {
			fprintf(stderr, "[%s] doca_rdma_connect %u -> %s\n", role, i, doca_error_get_name(err));
			return -1;
		}
	}
	return 0;
}

static void free_all(void **d)
{
	for (uint32_t i = 0; d != NULL && i < n_conns; i++)
		free(d[i]);
	free(d);
}

/* The initiator's connections are up once a write on each has completed
 * (no established callback on export/connect): one write per connection,
 * into its first slot (the bench writes it again), submitted right after
 * the connects as a DOCA program does; the library holds it until its
 * connection is up. Before the clock starts. */
static int warm_up(struct app *a)
{
	void *raddr;
	size_t rlen;

	TRY(doca_mmap_get_memrange(a->remote_mmap, &raddr, &rlen));
	for (uint32_t c = 0; c < n_conns; c++) {
		size_t off = (size_t)c * n_inflight * wsize;
		union doca_data tu = {.u64 = WARM_UP_BIT | c};
		struct doca_rdma_task_write *t;
		struct doca_buf *src, *dst;

		TRY(doca_buf_inventory_buf_get_by_data(a->inv, a->src_mmap, a->src + off, wsize, &src));
		TRY(doca_buf_inventory_buf_get_by_addr(a->inv, a->remote_mmap, (uint8_t *)raddr + off, wsize, &dst));
		TRY(doca_rdma_task_write_allocate_init(a->rdma, a->conns[c], src, dst, tu, &t));
		TRY(doca_task_submit(doca_rdma_task_write_as_task(t)));
	}
	if (wait_until(a, warmed_up, "a first write completed on every connection") != 0)
		return -1;
	if (a->broken != 0 || a->failed != 0) {
		fprintf(stderr, "[%s] before the bench: %u connection(s) failed, %" PRIu64 " warm-up write(s) failed\n",
			role, a->broken, a->failed);
		return -1;
	}
	return 0;
}

/* Self: connection 2i talks to 2i+1 of the same context. */
static int run_self(struct app *a)
{
	const void *d[2], *md;
	size_t dn[2], mn;
	int rc;

	if ((rc = open_dev(a)) != 0)
		return rc;
	if (setup(a, true, true) != 0)
		return -1;
	for (uint32_t i = 0; i < n_conns; i += 2) {
		TRY(doca_rdma_export(a->rdma, &d[0], &dn[0], &a->conns[i]));
		TRY(doca_rdma_export(a->rdma, &d[1], &dn[1], &a->conns[i + 1]));
		TRY(doca_rdma_connect(a->rdma, d[1], dn[1], a->conns[i]));
		TRY(doca_rdma_connect(a->rdma, d[0], dn[0], a->conns[i + 1]));
	}
	TRY(doca_mmap_export_rdma(a->dst_mmap, a->dev, &md, &mn));
	TRY(doca_mmap_create_from_export(NULL, md, mn, a->dev, &a->remote_mmap));
	if (warm_up(a) != 0 || bench(a) != 0)
		return -1;
	return verify(a->dst, a->len);
}

/* Forked target: serves the writes until told to check its memory. */
static int run_target(struct app *a, int fd)
{
	const void *md;
	size_t mn, n, lens[4096];
	void **descs;
	char *msg;
	int rc;

	role = "target";
	if (open_dev(a) != 0 || setup(a, false, true) != 0)
		return -1;
	TRY(doca_mmap_export_rdma(a->dst_mmap, a->dev, &md, &mn));
	if (blob_send(fd, md, mn) != 0 || export_all(a, fd) != 0)
		return -1;
	descs = recv_all(fd, lens);
	rc = connect_all(a, descs, lens);
	free_all(descs);
	if (rc != 0)
		return -1;
	for (double end = now() + TIMEOUT_S;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (doca_pe_progress(a->pe) == 0 && poll(&p, 1, 0) > 0)
			break;
		if (now() > end) {
			fprintf(stderr, "[target] no word from the initiator in %.0f s\n", TIMEOUT_S);
			return -1;
		}
	}
	msg = blob_recv(fd, &n);
	if (msg == NULL || n != 6 || memcmp(msg, "verify", 6) != 0) {
		free(msg);
		fprintf(stderr, "[target] the initiator gave up\n");
		return -1;
	}
	free(msg);
	return verify(a->dst, a->len);
}

static int run_initiator(struct app *a, int fd)
{
	size_t n, lens[4096];
	void *md, **descs;
	doca_error_t err;
	int rc;

	role = "initiator";
	if ((rc = open_dev(a)) != 0)
		return rc;
	if (setup(a, true, false) != 0)
		return -1;
	md = blob_recv(fd, &n);
	if (md == NULL)
		return -1;
	err = doca_mmap_create_from_export(NULL, md, n, a->dev, &a->remote_mmap);
	free(md);
	if (err != DOCA_SUCCESS) {
		fprintf(stderr, "[initiator] doca_mmap_create_from_export -> %s\n", doca_error_get_name(err));
		return -1;
	}
	descs = recv_all(fd, lens);
	rc = descs == NULL || export_all(a, fd) != 0 ? -1 : connect_all(a, descs, lens);
	free_all(descs);
	if (rc != 0 || warm_up(a) != 0)
		return -1;
	rc = bench(a);
	if (blob_send(fd, rc == 0 ? "verify" : "abort!", 6) != 0)
		return -1;
	return rc;
}

static int run_fork(void)
{
	struct app a = {.state = DOCA_CTX_STATE_IDLE};
	int sv[2], status, rc;
	pid_t pid;

	/* The initiator looks for the device first, so a missing one skips
	 * before anything is forked. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct app t = {.state = DOCA_CTX_STATE_IDLE};

		close(sv[0]);
		rc = run_target(&t, sv[1]);
		rc |= teardown(&t);
		_exit(rc == 0 ? 0 : 1);
	}
	close(sv[1]);
	rc = run_initiator(&a, sv[0]);
	if (teardown(&a) != 0 && rc == 0)
		rc = -1;
	close(sv[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (rc != 1)
			fprintf(stderr, "[initiator] the target process failed (status %#x)\n", status);
		if (rc == 0)
			rc = -1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"device", required_argument, NULL, 'd'}, {"peer", required_argument, NULL, 'p'},
		{"conns", required_argument, NULL, 'c'},  {"inflight", required_argument, NULL, 'k'},
		{"size", required_argument, NULL, 's'},   {"iters", required_argument, NULL, 'i'},
		{NULL, 0, NULL, 0},
	};
	int o, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'd': dev_name = optarg; break;
		case 'p': self_peer = strcmp(optarg, "self") == 0; break;
		case 'c': n_conns = (uint32_t)atoi(optarg); break;
		case 'k': n_inflight = (uint32_t)atoi(optarg); break;
		case 's': wsize = (size_t)atol(optarg); break;
		case 'i': n_iters = (uint32_t)atoi(optarg); break;
		default: return 2;
		}
	}
	if (n_conns < 2 || n_conns > 4096 || n_conns % 2 != 0 || n_inflight == 0 || wsize == 0 || n_iters == 0) {
		fprintf(stderr, "usage: --conns an even 2..4096, --inflight, --size, --iters > 0\n");
		return 2;
	}
	if (self_peer) {
		struct app a = {.state = DOCA_CTX_STATE_IDLE};

		role = "self";
		rc = run_self(&a);
		if (teardown(&a) != 0 && rc == 0)
			rc = -1;
	} else {
		rc = run_fork();
	}
	if (rc == 1) {
		printf("SKIP: no soft device matches %s (doca_caps --list-devs lists them)\n", dev_name);
		return SKIP;
	}
	printf("many_conns_bench: %s\n", rc == 0 ? "PASS" : "FAIL");
	return rc == 0 ? 0 : 1;
}
