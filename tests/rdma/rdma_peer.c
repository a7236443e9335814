/*
 * rdma_peer — one side of a two-process DOCA RDMA test.
 *
 *   rdma_peer --role target|initiator --dir DIR --case NAME
 *             [--size N] [--count K] [--device IBDEV]
 *             [--serve progress|block] [--wait spin|notify] [--hostile]
 *             [--peer-desc NAME] [--kill-pid PID]
 *
 * Both processes speak only the public DOCA API (doca_dev, doca_mmap,
 * doca_buf_inventory, doca_pe, doca_ctx, doca_rdma). They meet in DIR:
 *
 *   target.conn, target.mmap   the target's connection and mmap descriptors
 *   initiator.conn             the initiator's connection descriptor
 *   target.fifo                initiator -> target messages, one byte each:
 *                              'C' control step done (revoke now),
 *                              'I' tasks in flight (die now),
 *                              'D' done, 'F' initiator failed
 *   target.revoked             the target stopped its exported mmap
 *   target.probe               write_noperm: descriptor of a second mmap
 *                              that grants RDMA_WRITE (see
 *                              forge_write_permission)
 *   <role>.failed              written by a side that gave up, so the
 *                              other stops waiting at once
 *   hostile.target.conn, hostile.conn, hostile.done, hostile.checked,
 *   initiator.ready, helper.gone
 *                              forged_pid_alive: the initiator is connected;
 *                              the process the forged descriptor names has
 *                              exited (written by the test script)
 *   hostile.failed             --hostile (target, one-sided cases): a
 *                              first connection is served to hostile_peer,
 *                              which speaks the wire protocol by hand;
 *                              once it is done the target checks that its
 *                              region and canaries did not change by one
 *                              byte and that the connection was never
 *                              closed (then hostile.checked), and serves
 *                              the initiator on a second connection
 *
 * Files are written under a temporary name and renamed, so a reader sees
 * all of a file or none of it. Every wait is bounded and fails with a
 * message naming what it waited for.
 *
 * The target owns a region with canary bytes on both sides of it. For
 * one-sided cases it exports the region and then serves, either calling
 * doca_pe_progress (--serve progress) or blocked in poll(2) on the fifo
 * without ever progressing (--serve block: the library's service thread
 * must do the work, as hardware would). For two-sided cases it posts its
 * receives before it publishes its descriptor. When the initiator says
 * 'D' the target checks its whole region and the canaries byte for byte.
 *
 * Data is a pattern derived from (seed, offset); seeds derive from the
 * case's size and count, so both sides know what to expect.
 *
 * Connections are made with doca_rdma_export + doca_rdma_connect, which
 * on hardware moves the QP to RTS with no event: DOCA calls the
 * established callback for RDMA CM connections only. So, as a real DOCA
 * program does, each side submits right after connecting (the library
 * holds a task until its connection is up), and a task that completes is
 * what shows the connection is up. Cases that must know it before they
 * act (the peer is then stopped, killed or told we are connected) run a
 * control write or read first. Both sides check at teardown that the
 * established callback never ran.
 *
 * Liveness must not rest on what a peer claims: in the forged_pid cases
 * the test script hands the initiator a copy of target.conn whose pid
 * field it rewrote (--peer-desc). forged_pid_dead: the pid names no live
 * process; the initiator stops the real target (--kill-pid, SIGSTOP),
 * puts its writes in flight, kills it (SIGKILL), and every write must fail
 * and the connection end within the keepalive timeout
 * (SOFTDOCA_CONN_TIMEOUT_MS, default 8000 ms) + NOTICE_SLACK_S.
 * forged_pid_alive: the pid is a helper's, which the script ends once we
 * are connected (helper.gone): the connection must stay up and the writes
 * succeed (the library logs a WARNING about the wrong pid; the script
 * checks it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
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
#include <doca_types.h>

/* ------------------------------------------------------------------ */
/* Limits                                                               */

#define PEER_WAIT_S 20.0   /* the peer's descriptor files */
#define START_WAIT_S 20.0  /* doca_ctx_start reaching RUNNING */
#define TASK_WAIT_S 20.0   /* completions of one batch of tasks */
#define SERVE_WAIT_S 45.0  /* target: the whole initiator run */
#define STOP_WAIT_S 10.0   /* doca_ctx_stop reaching IDLE */
#define KILL_DETECT_S 10.0 /* peer_kill: in-flight tasks must fail by then */
#define INFLIGHT_CHECK_S 0.2 /* peer_kill: nothing may complete while the peer lives */
#define NOTICE_SLACK_S 3.0   /* forged_pid_dead: noticed within the keepalive timeout + this */
#define ALIVE_HOLD_S 1.5     /* forged_pid_alive: the connection stays up this long after */
#define CONN_TIMEOUT_ENV "SOFTDOCA_CONN_TIMEOUT_MS"
#define CONN_TIMEOUT_DEFAULT_MS 8000.0

#define CANARY_LEN 4096u
#define CANARY_SEED 0xCA9A27C0FFEEull
#define JUNK_SEED 0x7E57DA7A0000ull
#define IMM_BASE 0xABCDu      /* immediate data of task i: IMM_BASE | i << 16 */
#define MISALIGN_ADD 5u
#define MISSED_WAKEUPS_MAX 3u /* --wait notify: more is a bug, not bad luck */

#define PERM_LRW DOCA_ACCESS_FLAG_LOCAL_READ_WRITE
#define PERM_RD DOCA_ACCESS_FLAG_RDMA_READ
#define PERM_WR DOCA_ACCESS_FLAG_RDMA_WRITE
#define PERM_AT DOCA_ACCESS_FLAG_RDMA_ATOMIC

/* ------------------------------------------------------------------ */
/* Types                                                                */

enum role { ROLE_TARGET, ROLE_INITIATOR };
enum serve { SERVE_PROGRESS, SERVE_BLOCK };

/* Where a task's outcome was decided. */
enum where { AT_NONE = 0, AT_ALLOC, AT_SUBMIT, AT_COMPLETION };

static const char *where_name(enum where w)
{
	switch (w) {
	case AT_ALLOC:
		return "allocate_init";
	case AT_SUBMIT:
		return "submit";
	case AT_COMPLETION:
		return "completion";
	default:
		return "nowhere";
	}
}

/* One task's outcome. */
struct rec {
	bool done;
	bool ok_cb; /* the success callback ran (not the error one) */
	enum where where;
	doca_error_t status;
	/* receive results (success callback only) */
	enum doca_rdma_opcode opcode;
	uint32_t len;
	doca_be32_t imm;
	const struct doca_rdma_connection *conn;
	/* read result */
	uint32_t read_len;
	uint32_t done_seq; /* how many tasks had completed before this one */
};

struct peer;

struct case_def {
	const char *name;
	unsigned int flags;
	uint32_t mmap_perms; /* the target's exported mmap */
	uint32_t ctx_perms;  /* the target's rdma context */
	size_t def_size;
	uint32_t def_count;
	int (*run)(struct peer *p);          /* initiator */
	int (*check)(struct peer *p);        /* target, after 'D' */
};

#define C_TWO_SIDED 0x1u /* target posts receives and must progress */
#define C_EXPORT 0x2u    /* target exports its mmap */
#define C_ATOMIC 0x4u    /* region holds 8-byte words */
#define C_KILL 0x8u      /* target dies on 'I' */
#define C_REVOKE 0x10u   /* target stops its mmap on 'C' */
#define C_PROBE 0x20u    /* target also exports a probe mmap with RDMA_WRITE */

struct peer {
	/* Options. */
	enum role role;
	const char *dir;
	const struct case_def *cs;
	size_t size;
	uint32_t count;
	const char *device;
	enum serve serve;
	bool notify;
	const char *peer_desc; /* initiator: the target's descriptor file (default target.conn) */
	pid_t kill_pid;	       /* forged_pid_dead: the real target */

	/* DOCA objects. */
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_buf_inventory *inv;
	struct doca_mmap *lmmap;
	bool lmmap_started;
	struct doca_mmap *rmmap;
	struct doca_mmap *forged_mmap;
	struct doca_mmap *probe_mmap; /* target: C_PROBE */
	uint8_t *probe_mem;
	struct doca_rdma_connection *conn;
	const void *rmmap_desc; /* initiator: the target's descriptor bytes */
	size_t rmmap_desc_len;

	/* Memory: CANARY | region | CANARY. */
	uint8_t *mem;
	size_t mem_len;
	uint8_t *region;
	size_t region_len;
	uint8_t *raddr; /* initiator: the target's region, exporter's addresses */
	size_t rlen;

	int fifo;

	/* Callback state. */
	enum doca_ctx_states state;
	int established, failed, disconnected, requests;
	/* --hostile: hostile_peer's connection, its events counted apart. */
	bool hostile;
	struct doca_rdma_connection *hconn;
	int hestablished, hfailed, hdisconnected;
	struct rec *recs;
	uint32_t recs_cap, nrecs, ndone;
	struct doca_buf **recv_bufs; /* target: dst of receive i */
	int cb_errors;
	unsigned int missed_wakeups; /* --wait notify */

	/* Bufs to release at teardown. */
	struct doca_buf **bufs;
	uint32_t nbufs, bufs_cap;

	/* Messages. */
	bool failed_once;
	char tag[160];
};

/* ------------------------------------------------------------------ */
/* Reporting                                                            */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_flag_file(struct peer *p, const char *name, const char *text);

/* Print one FAIL line (the first failure of the run also tells the peer)
 * and return -1. */
__attribute__((format(printf, 2, 3))) static int failf(struct peer *p, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("FAIL %s: %s\n", p->tag, msg);
	fflush(stdout);
	if (!p->failed_once) {
		p->failed_once = true;
		write_flag_file(p, p->role == ROLE_TARGET ? "target.failed" : "initiator.failed", msg);
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

/* ------------------------------------------------------------------ */
/* Patterns                                                             */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Fill buf with the pattern `seed`, as if buf sat at offset off0. */
static void pat_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t off0)
{
	uint64_t blk = UINT64_MAX, v = 0;

	for (size_t i = 0; i < len; i++) {
		uint64_t off = off0 + i;

		if ((off >> 3) != blk) {
			blk = off >> 3;
			v = mix64(seed ^ (blk * 0x100000001b3ull));
		}
		buf[i] = (uint8_t)(v >> ((off & 7) * 8));
	}
}

/* Offset (relative to buf) of the first byte that differs, or SIZE_MAX. */
static size_t pat_check(const uint8_t *buf, size_t len, uint64_t seed, uint64_t off0)
{
	uint64_t blk = UINT64_MAX, v = 0;

	for (size_t i = 0; i < len; i++) {
		uint64_t off = off0 + i;

		if ((off >> 3) != blk) {
			blk = off >> 3;
			v = mix64(seed ^ (blk * 0x100000001b3ull));
		}
		if (buf[i] != (uint8_t)(v >> ((off & 7) * 8)))
			return i;
	}
	return SIZE_MAX;
}

static uint64_t seed_a(const struct peer *p)
{
	return 0xA11CE00000000000ull ^ ((uint64_t)p->size << 16) ^ p->count ^ ((uint64_t)p->cs->flags << 40);
}

static uint64_t seed_b(const struct peer *p)
{
	return 0xB0B0000000000000ull ^ ((uint64_t)p->size << 16) ^ p->count ^ ((uint64_t)p->cs->flags << 40);
}

/* Initial value of atomic word i, and the value cas swaps in. */
static uint64_t aval(const struct peer *p, uint32_t i)
{
	return mix64(seed_a(p) ^ 0x5157ull ^ i);
}

static uint64_t bval(const struct peer *p, uint32_t i)
{
	return mix64(seed_b(p) ^ 0x5157ull ^ i);
}

static uint64_t word_at(const uint8_t *base, size_t idx)
{
	uint64_t v;

	memcpy(&v, base + 8 * idx, sizeof(v));
	return v;
}

static void word_set(uint8_t *base, size_t idx, uint64_t v)
{
	memcpy(base + 8 * idx, &v, sizeof(v));
}

/* Check that region[off, off+len) holds the pattern `seed` (at region
 * offsets). */
/* For a failure message: how many bytes of region[off, off+len) differ
 * from `seed` and the last bad offset; with `old_seed` (not 0), also how
 * many of them still hold that older content. */
static void describe_mismatch(const uint8_t *region, size_t off, size_t len, uint64_t seed, uint64_t old_seed,
			      char *out, size_t out_len)
{
	size_t bad = 0, old = 0, last = 0;
	uint8_t *want = malloc(len), *prev = malloc(len);

	if (want == NULL || prev == NULL) {
		snprintf(out, out_len, "(no memory to describe it)");
		free(want);
		free(prev);
		return;
	}
	pat_fill(want, len, seed, off);
	pat_fill(prev, len, old_seed, off);
	for (size_t i = 0; i < len; i++)
		if (region[off + i] != want[i]) {
			bad++;
			last = off + i;
			old += region[off + i] == prev[i];
		}
	if (old_seed != 0)
		snprintf(out, out_len, "%zu of %zu bytes differ, the last at offset %zu; %zu of them still hold the "
			 "target's original content", bad, len, last, old);
	else
		snprintf(out, out_len, "%zu of %zu bytes differ, the last at offset %zu", bad, len, last);
	free(want);
	free(prev);
}

/* Check that region[off, off+len) holds the pattern `seed` (at region
 * offsets). On a mismatch, describe it, and look again one second later:
 * only to say in the message whether the data was late or never came. */
static int expect_pattern(struct peer *p, const uint8_t *region, size_t off, size_t len, uint64_t seed,
			  const char *what)
{
	size_t bad = pat_check(region + off, len, seed, off);
	const struct timespec one_s = {.tv_sec = 1, .tv_nsec = 0};
	/* Data the initiator sent (seed B) replaces the target's seed A. */
	uint64_t old_seed = seed == seed_b(p) ? seed_a(p) : 0;
	char desc[256];
	uint8_t want, got;

	if (bad == SIZE_MAX)
		return 0;
	got = region[off + bad];
	pat_fill(&want, 1, seed, off + bad);
	describe_mismatch(region, off, len, seed, old_seed, desc, sizeof(desc));
	nanosleep(&one_s, NULL);
	return failf(p, "%s: byte at region offset %zu is 0x%02x, expected 0x%02x (range [%zu, +%zu)): %s; %s", what,
		     off + bad, got, want, off, len, desc,
		     pat_check(region + off, len, seed, off) == SIZE_MAX ? "correct one second later (late data)"
									 : "still wrong one second later");
}

static int check_canaries(struct peer *p)
{
	size_t bad = pat_check(p->mem, CANARY_LEN, CANARY_SEED, 0);

	if (bad != SIZE_MAX)
		return failf(p, "front canary overwritten at %zu bytes before the region", CANARY_LEN - bad);
	bad = pat_check(p->region + p->region_len, CANARY_LEN, CANARY_SEED, CANARY_LEN);
	if (bad != SIZE_MAX)
		return failf(p, "back canary overwritten at %zu bytes after the region end", bad);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Files in DIR                                                         */

static void path_of(const struct peer *p, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", p->dir, name);
}

static int write_file(struct peer *p, const char *name, const void *data, size_t len)
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

static void write_flag_file(struct peer *p, const char *name, const char *text)
{
	if (p->dir != NULL)
		(void)write_file(p, name, text, strlen(text));
}

static bool file_exists(const struct peer *p, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	path_of(p, name, path, sizeof(path));
	return stat(path, &st) == 0;
}

/* Read a whole file into malloc'd memory; 1 if it does not exist yet. */
static int read_file(const struct peer *p, const char *name, uint8_t **data, size_t *len)
{
	char path[PATH_MAX];
	uint8_t *buf = NULL;
	size_t cap = 0, used = 0;
	int fd;

	path_of(p, name, path, sizeof(path));
	fd = open(path, O_RDONLY);
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

static const char *peer_role_name(const struct peer *p)
{
	return p->role == ROLE_TARGET ? "initiator" : "target";
}

/* Wait (bounded poll of the directory) for the peer's file `name`. */
static int wait_file(struct peer *p, const char *name, uint8_t **data, size_t *len)
{
	char failed_name[64];
	double deadline = now_s() + PEER_WAIT_S;
	const struct timespec tick = {.tv_sec = 0, .tv_nsec = 2 * 1000 * 1000};

	snprintf(failed_name, sizeof(failed_name), "%s.failed", peer_role_name(p));
	for (;;) {
		int r = read_file(p, name, data, len);

		if (r == 0)
			return 0;
		if (r < 0)
			return failf(p, "reading %s/%s: %s", p->dir, name, strerror(-r));
		if (file_exists(p, failed_name))
			return failf(p, "the %s gave up (see its output) while we waited for %s", peer_role_name(p),
				     name);
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for the %s's file %s/%s", PEER_WAIT_S,
				     peer_role_name(p), p->dir, name);
		nanosleep(&tick, NULL);
	}
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
	struct peer *p = ctx_user_data.ptr;

	p->requests++;
	(void)doca_rdma_connection_reject(conn);
}

static bool hostile_conn(const struct peer *p, const struct doca_rdma_connection *conn)
{
	return p->hconn != NULL && conn == p->hconn;
}

static void conn_established_cb(struct doca_rdma_connection *conn, union doca_data conn_user_data,
				union doca_data ctx_user_data)
{
	struct peer *p = ctx_user_data.ptr;

	(void)conn_user_data;
	if (hostile_conn(p, conn)) {
		p->hestablished++;
		return;
	}
	if (conn != p->conn) {
		printf("NOTE %s: established callback for an unknown connection %p (ours %p)\n", p->tag,
		       (void *)conn, (void *)p->conn);
		p->cb_errors++;
	}
	p->established++;
}

static void conn_failure_cb(struct doca_rdma_connection *conn, union doca_data conn_user_data,
			    union doca_data ctx_user_data)
{
	struct peer *p = ctx_user_data.ptr;

	(void)conn_user_data;
	if (hostile_conn(p, conn)) {
		p->hfailed++;
		return;
	}
	p->failed++;
}

static void conn_disconnect_cb(struct doca_rdma_connection *conn, union doca_data conn_user_data,
			       union doca_data ctx_user_data)
{
	struct peer *p = ctx_user_data.ptr;

	(void)conn_user_data;
	if (hostile_conn(p, conn)) {
		p->hdisconnected++;
		return;
	}
	p->disconnected++;
}

/* Record a completion; the task goes back to its pool. */
static struct rec *note_done(struct doca_task *task, union doca_data task_user_data, union doca_data ctx_user_data,
			     bool ok_cb)
{
	struct peer *p = ctx_user_data.ptr;
	uint64_t i = task_user_data.u64;
	doca_error_t status = doca_task_get_status(task);
	struct rec *r;

	if (i >= p->nrecs || p->recs[i].done) {
		printf("NOTE %s: completion for unknown or finished task %" PRIu64 "\n", p->tag, i);
		p->cb_errors++;
		return NULL;
	}
	r = &p->recs[i];
	r->done = true;
	r->ok_cb = ok_cb;
	r->where = AT_COMPLETION;
	r->status = status;
	r->done_seq = p->ndone;
	if (ok_cb != (status == DOCA_SUCCESS)) {
		printf("NOTE %s: task %" PRIu64 ": %s callback with status %s\n", p->tag, i,
		       ok_cb ? "success" : "error", doca_error_get_name(status));
		p->cb_errors++;
	}
	p->ndone++;
	return r;
}

#define SIMPLE_CBS(T)                                                                                     \
	static void T##_ok_cb(struct doca_rdma_task_##T *t, union doca_data u, union doca_data c)        \
	{                                                                                                 \
		struct doca_task *task = doca_rdma_task_##T##_as_task(t);                                 \
		(void)note_done(task, u, c, true);                                                        \
		doca_task_free(task);                                                                     \
	}                                                                                                 \
	static void T##_err_cb(struct doca_rdma_task_##T *t, union doca_data u, union doca_data c)       \
	{                                                                                                 \
		struct doca_task *task = doca_rdma_task_##T##_as_task(t);                                 \
		(void)note_done(task, u, c, false);                                                       \
		doca_task_free(task);                                                                     \
	}

SIMPLE_CBS(send)
SIMPLE_CBS(send_imm)
SIMPLE_CBS(write)
SIMPLE_CBS(write_imm)
SIMPLE_CBS(atomic_cmp_swp)
SIMPLE_CBS(atomic_fetch_add)

static void read_ok_cb(struct doca_rdma_task_read *t, union doca_data u, union doca_data c)
{
	struct doca_task *task = doca_rdma_task_read_as_task(t);
	struct rec *r = note_done(task, u, c, true);

	if (r != NULL)
		r->read_len = doca_rdma_task_read_get_result_len(t);
	doca_task_free(task);
}

static void read_err_cb(struct doca_rdma_task_read *t, union doca_data u, union doca_data c)
{
	struct doca_task *task = doca_rdma_task_read_as_task(t);

	(void)note_done(task, u, c, false);
	doca_task_free(task);
}

static int check_write_imm_visible(struct peer *p, uint32_t imm);

static void receive_ok_cb(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	struct doca_task *task = doca_rdma_task_receive_as_task(t);
	struct peer *p = c.ptr;
	struct rec *r = note_done(task, u, c, true);

	if (r != NULL) {
		r->opcode = doca_rdma_task_receive_get_result_opcode(t);
		r->len = doca_rdma_task_receive_get_result_len(t);
		r->imm = doca_rdma_task_receive_get_result_immediate_data(t);
		r->conn = doca_rdma_task_receive_get_result_rdma_connection(t);
		/* RC: a write-with-immediate's data is visible when its
		 * receive completes. */
		if (strcmp(p->cs->name, "write_imm") == 0 && check_write_imm_visible(p, r->imm) != 0)
			p->cb_errors++;
	}
	doca_task_free(task);
}

static void receive_err_cb(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	struct doca_task *task = doca_rdma_task_receive_as_task(t);

	(void)note_done(task, u, c, false);
	doca_task_free(task);
}

/* ------------------------------------------------------------------ */
/* Progress and waiting                                                 */

/* One round of progress; with --wait notify, sleep on the PE's
 * notification handle when there is nothing to do (at most `max_ms`). */
static void progress_once(struct peer *p, int max_ms)
{
	doca_notification_handle_t fd;
	struct pollfd pfd;

	if (doca_pe_progress(p->pe))
		return;
	if (!p->notify)
		return;
	if (doca_pe_get_notification_handle(p->pe, &fd) != DOCA_SUCCESS ||
	    doca_pe_request_notification(p->pe) != DOCA_SUCCESS)
		return;
	if (doca_pe_progress(p->pe) == 0) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, max_ms) == 0) {
			(void)doca_pe_clear_notification(p->pe, fd);
			/* The handle stayed quiet for max_ms, yet there was
			 * work: a wake-up that never came (or work that came
			 * in the last microseconds; hence a threshold). */
			if (doca_pe_progress(p->pe))
				p->missed_wakeups++;
			return;
		}
	}
	(void)doca_pe_clear_notification(p->pe, fd);
}

/* True once the peer wrote its ".failed" file (checked every 100 ms). */
static bool peer_gave_up(struct peer *p)
{
	static double next_check;
	char name[64];
	double t = now_s();

	if (t < next_check)
		return false;
	next_check = t + 0.1;
	snprintf(name, sizeof(name), "%s.failed", peer_role_name(p));
	return file_exists(p, name);
}

static int wait_tasks(struct peer *p, double timeout_s, const char *what)
{
	double deadline = now_s() + timeout_s;

	while (p->ndone < p->nrecs) {
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for %s: %u of %u tasks completed", timeout_s,
				     what, p->ndone, p->nrecs);
		if (!(p->cs->flags & C_KILL) && peer_gave_up(p))
			return failf(p, "the %s gave up while we waited for %s (%u of %u tasks completed)",
				     peer_role_name(p), what, p->ndone, p->nrecs);
		progress_once(p, 50);
	}
	return 0;
}

static int wait_state(struct peer *p, enum doca_ctx_states want, double timeout_s, const char *what)
{
	double deadline = now_s() + timeout_s;

	while (p->state != want) {
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for the context to become %s (state %d)",
				     timeout_s, what, (int)p->state);
		progress_once(p, 50);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Tasks                                                                */

static uint32_t new_rec(struct peer *p)
{
	if (p->nrecs == p->recs_cap) {
		uint32_t cap = p->recs_cap ? p->recs_cap * 2 : 64;
		struct rec *n = realloc(p->recs, cap * sizeof(*n));

		if (n == NULL) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		memset(n + p->recs_cap, 0, (cap - p->recs_cap) * sizeof(*n));
		p->recs = n;
		p->recs_cap = cap;
	}
	return p->nrecs++;
}

/* After allocate_init returned `err` for record i: submit the task, or
 * record where it was refused (a refused task stays ours and is freed). */
static void post(struct peer *p, uint32_t i, doca_error_t err, struct doca_task *task)
{
	struct rec *r = &p->recs[i];

	if (err != DOCA_SUCCESS) {
		r->done = true;
		r->where = AT_ALLOC;
		r->status = err;
		p->ndone++;
		return;
	}
	err = doca_task_submit(task);
	if (err != DOCA_SUCCESS) {
		doca_task_free(task);
		r->done = true;
		r->where = AT_SUBMIT;
		r->status = err;
		p->ndone++;
	}
}

static int expect_ok(struct peer *p, uint32_t i, const char *what)
{
	const struct rec *r = &p->recs[i];

	if (!r->done)
		return failf(p, "%s: task not completed", what);
	if (r->status != DOCA_SUCCESS)
		return failf(p, "%s: failed at %s with %s (%s)", what, where_name(r->where),
			     doca_error_get_name(r->status), doca_error_get_descr(r->status));
	return 0;
}

static int expect_all_ok(struct peer *p, uint32_t first, uint32_t n, const char *what)
{
	for (uint32_t i = first; i < first + n; i++) {
		char w[96];

		snprintf(w, sizeof(w), "%s #%u", what, i - first);
		if (expect_ok(p, i, w) != 0)
			return -1;
	}
	return 0;
}

/* The task must have failed, wherever. Says where in `how`. */
static int expect_error(struct peer *p, uint32_t i, const char *what, char *how, size_t how_len)
{
	const struct rec *r = &p->recs[i];

	if (!r->done)
		return failf(p, "%s: task not completed", what);
	if (r->status == DOCA_SUCCESS)
		return failf(p, "%s: succeeded but must fail", what);
	if (how != NULL) {
		size_t used = strlen(how);

		snprintf(how + used, how_len - used, "%s%s refused at %s with %s", used ? "; " : "", what,
			 where_name(r->where), doca_error_get_name(r->status));
	}
	return 0;
}

static int get_buf(struct peer *p, struct doca_mmap *mmap, void *addr, size_t len, void *data, size_t data_len,
		   struct doca_buf **out)
{
	doca_error_t err;

	if (p->nbufs == p->bufs_cap) {
		uint32_t cap = p->bufs_cap ? p->bufs_cap * 2 : 64;
		struct doca_buf **n = realloc(p->bufs, cap * sizeof(*n));

		if (n == NULL)
			return failf(p, "out of memory");
		p->bufs = n;
		p->bufs_cap = cap;
	}
	err = doca_buf_inventory_buf_get_by_args(p->inv, mmap, addr, len, data, data_len, out);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_buf_inventory_buf_get_by_args(%p, %zu, %p, %zu) returned %s", addr, len, data,
			     data_len, doca_error_get_name(err));
	p->bufs[p->nbufs++] = *out;
	return 0;
}

/* A local buf whose data is [addr, +len). */
static int data_buf(struct peer *p, struct doca_mmap *mmap, void *addr, size_t len, struct doca_buf **out)
{
	return get_buf(p, mmap, addr, len, addr, len, out);
}

/* A buf with room [addr, +len) and no data. */
static int room_buf(struct peer *p, struct doca_mmap *mmap, void *addr, size_t len, struct doca_buf **out)
{
	return get_buf(p, mmap, addr, len, addr, 0, out);
}

static union doca_data ud(uint32_t i)
{
	union doca_data d = {.u64 = i};

	return d;
}

static uint32_t post_write(struct peer *p, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_rdma_task_write *t = NULL;
	uint32_t i = new_rec(p);
	doca_error_t err;

	err = doca_rdma_task_write_allocate_init(p->rdma, p->conn, src, dst, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_write_as_task(t) : NULL);
	return i;
}

static uint32_t post_write_imm(struct peer *p, struct doca_buf *src, struct doca_buf *dst, doca_be32_t imm)
{
	struct doca_rdma_task_write_imm *t = NULL;
	uint32_t i = new_rec(p);
	doca_error_t err;

	err = doca_rdma_task_write_imm_allocate_init(p->rdma, p->conn, src, dst, imm, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_write_imm_as_task(t) : NULL);
	return i;
}

static uint32_t post_read(struct peer *p, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_rdma_task_read *t = NULL;
	uint32_t i = new_rec(p);
	doca_error_t err;

	err = doca_rdma_task_read_allocate_init(p->rdma, p->conn, src, dst, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_read_as_task(t) : NULL);
	return i;
}

static uint32_t post_send(struct peer *p, struct doca_buf *src)
{
	struct doca_rdma_task_send *t = NULL;
	uint32_t i = new_rec(p);
	doca_error_t err;

	err = doca_rdma_task_send_allocate_init(p->rdma, p->conn, src, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_send_as_task(t) : NULL);
	return i;
}

static uint32_t post_send_imm(struct peer *p, struct doca_buf *src, doca_be32_t imm)
{
	struct doca_rdma_task_send_imm *t = NULL;
	uint32_t i = new_rec(p);
	doca_error_t err;

	err = doca_rdma_task_send_imm_allocate_init(p->rdma, p->conn, src, imm, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_send_imm_as_task(t) : NULL);
	return i;
}

static uint32_t post_cas(struct peer *p, struct doca_buf *dst, struct doca_buf *result, uint64_t cmp, uint64_t swap)
{
	struct doca_rdma_task_atomic_cmp_swp *t = NULL;
	uint32_t i = new_rec(p);
	doca_error_t err;

	err = doca_rdma_task_atomic_cmp_swp_allocate_init(p->rdma, p->conn, dst, result, cmp, swap, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_atomic_cmp_swp_as_task(t) : NULL);
	return i;
}

static uint32_t post_fadd(struct peer *p, struct doca_buf *dst, struct doca_buf *result, uint64_t add)
{
	struct doca_rdma_task_atomic_fetch_add *t = NULL;
	uint32_t i = new_rec(p);
	doca_error_t err;

	err = doca_rdma_task_atomic_fetch_add_allocate_init(p->rdma, p->conn, dst, result, add, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_atomic_fetch_add_as_task(t) : NULL);
	return i;
}

static uint32_t post_receive(struct peer *p, struct doca_buf *dst)
{
	struct doca_rdma_task_receive *t = NULL;
	uint32_t i = new_rec(p);
	doca_error_t err;

	err = doca_rdma_task_receive_allocate_init(p->rdma, dst, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_receive_as_task(t) : NULL);
	return i;
}

static int buf_data_len(struct peer *p, struct doca_buf *buf, size_t *len)
{
	CHECK(p, doca_buf_get_data_len(buf, len));
	return 0;
}

static void tell_target(struct peer *p, char c)
{
	if (p->fifo >= 0)
		(void)!write(p->fifo, &c, 1);
}

/* ------------------------------------------------------------------ */
/* Setup and teardown                                                   */

static int open_device(struct peer *p)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t err;
	char names[512] = "";

	CHECK(p, doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) != DOCA_SUCCESS)
			continue;
		if (strcmp(name, p->device) == 0) {
			err = doca_dev_open(list[i], &p->dev);
			doca_devinfo_destroy_list(list);
			if (err != DOCA_SUCCESS)
				return failf(p, "doca_dev_open(%s) returned %s", p->device, doca_error_get_name(err));
			return 0;
		}
		snprintf(names + strlen(names), sizeof(names) - strlen(names), " %s", name);
	}
	doca_devinfo_destroy_list(list);
	return failf(p, "no device named %s (found:%s)", p->device, names);
}

static size_t case_region_len(const struct peer *p)
{
	const char *n = p->cs->name;

	if (p->cs->flags & C_ATOMIC)
		return 8 * (size_t)p->count + 64;
	if (strcmp(n, "recv_small") == 0)
		return p->size;
	if (strcmp(n, "write_overlap") == 0)
		return 4 * p->size;
	if (strcmp(n, "write_noperm") == 0 || strcmp(n, "read_noperm") == 0 || strcmp(n, "ctxperm") == 0 ||
	    strcmp(n, "oob") == 0 || strcmp(n, "revoked") == 0)
		return 2 * p->size;
	if (p->size == 0)
		return 64;
	return p->size * p->count;
}

static int alloc_region(struct peer *p)
{
	p->region_len = case_region_len(p);
	p->mem_len = (p->region_len + 2 * CANARY_LEN + 4095) & ~(size_t)4095;
	p->mem = aligned_alloc(4096, p->mem_len);
	if (p->mem == NULL)
		return failf(p, "cannot allocate %zu bytes", p->mem_len);
	p->region = p->mem + CANARY_LEN;
	pat_fill(p->mem, CANARY_LEN, CANARY_SEED, 0);
	pat_fill(p->region + p->region_len, CANARY_LEN, CANARY_SEED, CANARY_LEN);
	return 0;
}

static int setup(struct peer *p)
{
	uint32_t pool = 2 * p->count + 16;
	uint32_t ctx_perms = p->role == ROLE_TARGET ? p->cs->ctx_perms : PERM_LRW;
	uint32_t sq = p->count + 16, sq_got = 0, perms_got = 0;
	union doca_data cud = {.ptr = p};
	doca_error_t err;

	if (alloc_region(p) != 0)
		return -1;
	if (open_device(p) != 0)
		return -1;
	CHECK(p, doca_pe_create(&p->pe));

	/* The local mmap: region only, canaries outside it. */
	CHECK(p, doca_mmap_create(&p->lmmap));
	CHECK(p, doca_mmap_set_memrange(p->lmmap, p->region, p->region_len));
	CHECK(p, doca_mmap_set_permissions(p->lmmap, p->role == ROLE_TARGET ? p->cs->mmap_perms : PERM_LRW));
	CHECK(p, doca_mmap_add_dev(p->lmmap, p->dev));
	CHECK(p, doca_mmap_start(p->lmmap));
	p->lmmap_started = true;

	CHECK(p, doca_buf_inventory_create(4 * (size_t)p->count + 64, &p->inv));
	CHECK(p, doca_buf_inventory_start(p->inv));

	CHECK(p, doca_rdma_create(p->dev, &p->rdma));
	p->ctx = doca_rdma_as_ctx(p->rdma);
	if (p->ctx == NULL || doca_rdma_as_ctx(p->rdma) != p->ctx)
		return failf(p, "doca_rdma_as_ctx returned %p, then %p", (void *)p->ctx,
			     (void *)doca_rdma_as_ctx(p->rdma));
	CHECK(p, doca_rdma_set_permissions(p->rdma, ctx_perms));
	CHECK(p, doca_rdma_get_permissions(p->rdma, &perms_got));
	if (perms_got != ctx_perms)
		return failf(p, "doca_rdma_get_permissions says 0x%x after setting 0x%x", perms_got, ctx_perms);
	CHECK(p, doca_rdma_set_max_num_connections(p->rdma, p->hostile ? 2 : 1));
	CHECK(p, doca_rdma_set_send_queue_size(p->rdma, sq));
	CHECK(p, doca_rdma_get_send_queue_size(p->rdma, &sq_got));
	if (sq_got < sq || (sq_got & (sq_got - 1)) != 0)
		return failf(p, "send queue size %u reads back as %u (want a power of two >= %u)", sq, sq_got, sq);

	CHECK(p, doca_rdma_task_receive_set_conf(p->rdma, receive_ok_cb, receive_err_cb, p->count + 4));
	CHECK(p, doca_rdma_task_send_set_conf(p->rdma, send_ok_cb, send_err_cb, pool));
	CHECK(p, doca_rdma_task_send_imm_set_conf(p->rdma, send_imm_ok_cb, send_imm_err_cb, pool));
	CHECK(p, doca_rdma_task_write_set_conf(p->rdma, write_ok_cb, write_err_cb, pool));
	CHECK(p, doca_rdma_task_write_imm_set_conf(p->rdma, write_imm_ok_cb, write_imm_err_cb, pool));
	CHECK(p, doca_rdma_task_read_set_conf(p->rdma, read_ok_cb, read_err_cb, pool));
	CHECK(p, doca_rdma_task_atomic_cmp_swp_set_conf(p->rdma, atomic_cmp_swp_ok_cb, atomic_cmp_swp_err_cb, pool));
	CHECK(p, doca_rdma_task_atomic_fetch_add_set_conf(p->rdma, atomic_fetch_add_ok_cb, atomic_fetch_add_err_cb,
							  pool));
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

/* Export our connection, publish it, read the peer's, connect. */
static int connect_peer(struct peer *p)
{
	const void *desc;
	size_t desc_len;
	uint8_t *peer_desc = NULL;
	size_t peer_len = 0;
	const char *mine = p->role == ROLE_TARGET ? "target.conn" : "initiator.conn";
	const char *theirs = p->role == ROLE_TARGET ? "initiator.conn" : p->peer_desc ? p->peer_desc : "target.conn";
	doca_error_t err;
	int r;

	CHECK(p, doca_rdma_export(p->rdma, &desc, &desc_len, &p->conn));
	if (desc == NULL || desc_len == 0 || p->conn == NULL)
		return failf(p, "doca_rdma_export gave descriptor %p/%zu, connection %p", desc, desc_len,
			     (void *)p->conn);
	r = write_file(p, mine, desc, desc_len);
	if (r != 0)
		return failf(p, "writing %s: %s", mine, strerror(-r));
	if (wait_file(p, theirs, &peer_desc, &peer_len) != 0)
		return -1;
	err = doca_rdma_connect(p->rdma, peer_desc, peer_len, p->conn);
	free(peer_desc);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_rdma_connect with the %s's %zu-byte descriptor returned %s", peer_role_name(p),
			     peer_len, doca_error_get_name(err));
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
		else if (p->ndone != p->nrecs)
			rc = failf(p, "teardown: context IDLE but %u of %u tasks never completed", p->nrecs - p->ndone,
				   p->nrecs);
	}
	for (uint32_t i = 0; i < p->nbufs; i++)
		TD(doca_buf_dec_refcount(p->bufs[i], NULL));
	p->nbufs = 0;
	if (p->inv != NULL) {
		TD(doca_buf_inventory_stop(p->inv));
		TD(doca_buf_inventory_destroy(p->inv));
	}
	if (p->forged_mmap != NULL) {
		TD(doca_mmap_stop(p->forged_mmap));
		TD(doca_mmap_destroy(p->forged_mmap));
	}
	if (p->rmmap != NULL) {
		TD(doca_mmap_stop(p->rmmap));
		TD(doca_mmap_destroy(p->rmmap));
	}
	if (p->rdma != NULL && p->state == DOCA_CTX_STATE_IDLE)
		TD(doca_rdma_destroy(p->rdma));
	if (p->pe != NULL && p->state == DOCA_CTX_STATE_IDLE)
		TD(doca_pe_destroy(p->pe));
	if (p->lmmap != NULL) {
		if (p->lmmap_started)
			TD(doca_mmap_stop(p->lmmap));
		TD(doca_mmap_destroy(p->lmmap));
	}
	if (p->probe_mmap != NULL) {
		TD(doca_mmap_stop(p->probe_mmap));
		TD(doca_mmap_destroy(p->probe_mmap));
	}
	free(p->probe_mem);
	p->probe_mem = NULL;
	if (p->dev != NULL)
		TD(doca_dev_close(p->dev));
#undef TD
	if (p->cb_errors != 0)
		rc = failf(p, "%d callback(s) reported something wrong (see NOTE lines)", p->cb_errors);
	/* The context is IDLE: every callback it had to give has run. */
	if (p->established != 0 || p->hestablished != 0)
		rc = failf(p, "the connection established callback ran %d time(s) (%d for the hostile peer's "
			      "connection), expected never: every connection here is export/connect, and DOCA calls "
			      "it for RDMA CM connections only",
			   p->established, p->hestablished);
	if (p->missed_wakeups >= MISSED_WAKEUPS_MAX)
		rc = failf(p, "%u times the PE notification handle stayed quiet for 50 ms while there was work "
			      "to progress (missed wake-ups)",
			   p->missed_wakeups);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Initiator: data cases                                                */

static int init_region(struct peer *p, uint64_t seed)
{
	pat_fill(p->region, p->region_len, seed, 0);
	return 0;
}

static void report_pass(struct peer *p, double t0, uint64_t bytes, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void report_pass(struct peer *p, double t0, uint64_t bytes, const char *fmt, ...)
{
	char msg[512];
	double dt = now_s() - t0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (bytes > 0)
		printf("PASS %s: %s in %.2f ms (%.1f MB/s)\n", p->tag, msg, dt * 1e3, (double)bytes / dt / 1e6);
	else
		printf("PASS %s: %s in %.2f ms\n", p->tag, msg, dt * 1e3);
	fflush(stdout);
}

/* write_overlap: write k puts len_k bytes from local offset src_k at
 * remote offset dst_k. Even writes carry size bytes, sometimes
 * overlapping the previous ones and sometimes not; each odd one is small
 * (it travels eagerly and could land at once) and falls inside the even
 * write just before it. A target that lets later writes start while
 * earlier payloads arrive must still leave the last writer's bytes
 * everywhere. The region is 4 * size bytes on both sides. */
static size_t overlap_len(const struct peer *p, uint32_t k)
{
	return k % 2 == 0 || p->size < 64 ? p->size : p->size / 64 + 1;
}

static size_t overlap_src(const struct peer *p, uint32_t k)
{
	return (size_t)(k % 4) * p->size;
}

static size_t overlap_dst(const struct peer *p, uint32_t k)
{
	if (k % 2 == 1)
		return overlap_dst(p, k - 1) + p->size / 3;
	return (size_t)((k * 7u) % 13u) * (p->size / 4);
}

/* Where write k takes its bytes from and puts them: slice k of both
 * regions, or write_overlap's layout. */
static void write_layout(const struct peer *p, uint32_t k, size_t *src, size_t *dst, size_t *len)
{
	if (strcmp(p->cs->name, "write_overlap") == 0) {
		*src = overlap_src(p, k);
		*dst = overlap_dst(p, k);
		*len = overlap_len(p, k);
		return;
	}
	*src = *dst = (size_t)k * p->size;
	*len = p->size;
}

/* The writes complete in the order they were submitted (RC). */
static int expect_in_order(struct peer *p, const char *what)
{
	for (uint32_t k = 0; k < p->count; k++)
		if (p->recs[k].done_seq != k)
			return failf(p, "%s #%u completed as number %u: completions out of submission order", what, k,
				     p->recs[k].done_seq);
	return 0;
}

static int run_write_common(struct peer *p, bool imm)
{
	size_t n = p->size, bytes = 0;
	struct doca_buf **src = calloc(p->count, sizeof(*src));
	struct doca_buf **dst = calloc(p->count, sizeof(*dst));
	double t0;
	int rc = -1;

	if (src == NULL || dst == NULL) {
		failf(p, "out of memory");
		goto out;
	}
	init_region(p, seed_b(p));
	for (uint32_t k = 0; k < p->count; k++) {
		size_t so, doff, len;

		write_layout(p, k, &so, &doff, &len);
		bytes += len;
		if (data_buf(p, p->lmmap, p->region + so, len, &src[k]) != 0 ||
		    room_buf(p, p->rmmap, p->raddr + doff, len, &dst[k]) != 0)
			goto out;
	}
	t0 = now_s();
	for (uint32_t k = 0; k < p->count; k++) {
		if (imm)
			(void)post_write_imm(p, src[k], dst[k], IMM_BASE | (k << 16));
		else
			(void)post_write(p, src[k], dst[k]);
	}
	if (wait_tasks(p, TASK_WAIT_S, imm ? "write_imm completions" : "write completions") != 0 ||
	    expect_all_ok(p, 0, p->count, imm ? "write_imm" : "write") != 0 ||
	    expect_in_order(p, imm ? "write_imm" : "write") != 0)
		goto out;
	for (uint32_t k = 0; k < p->count; k++) {
		size_t dl = 1;

		if (buf_data_len(p, dst[k], &dl) != 0)
			goto out;
		if (dl != 0) {
			failf(p, "write #%u changed the remote dst buf's data length to %zu (must stay 0)", k, dl);
			goto out;
		}
	}
	if (check_canaries(p) != 0 || expect_pattern(p, p->region, 0, p->region_len, seed_b(p), "local source") != 0)
		goto out;
	report_pass(p, t0, (uint64_t)bytes, "%u %s of %zu B%s ok, completed in order", p->count,
		    imm ? "write_imms" : "writes", n, strcmp(p->cs->name, "write_overlap") == 0 ? " and less, overlapping" : "");
	rc = 0;
out:
	free(src);
	free(dst);
	return rc;
}

/* The target's region after the writes, applied in order to a copy. */
static int check_write_overlap(struct peer *p)
{
	uint8_t *want = malloc(p->region_len), *src = malloc(p->region_len);
	size_t bad = SIZE_MAX;

	if (want == NULL || src == NULL) {
		free(want);
		free(src);
		return failf(p, "out of memory");
	}
	pat_fill(want, p->region_len, seed_a(p), 0);
	pat_fill(src, p->region_len, seed_b(p), 0);
	for (uint32_t k = 0; k < p->count; k++)
		memcpy(want + overlap_dst(p, k), src + overlap_src(p, k), overlap_len(p, k));
	for (size_t i = 0; i < p->region_len && bad == SIZE_MAX; i++)
		if (p->region[i] != want[i])
			bad = i;
	free(want);
	free(src);
	if (bad != SIZE_MAX)
		return failf(p, "region byte %zu is not what the last write there carried (writes applied out of order?)",
			     bad);
	return 0;
}

static int run_write(struct peer *p)
{
	return run_write_common(p, false);
}

static int run_write_imm(struct peer *p)
{
	return run_write_common(p, true);
}

static int run_read(struct peer *p)
{
	size_t n = p->size;
	struct doca_buf **dst = calloc(p->count, sizeof(*dst));
	struct doca_buf **src = calloc(p->count, sizeof(*src));
	double t0;
	int rc = -1;

	if (dst == NULL || src == NULL) {
		failf(p, "out of memory");
		goto out;
	}
	init_region(p, JUNK_SEED);
	for (uint32_t k = 0; k < p->count; k++)
		if (data_buf(p, p->rmmap, p->raddr + k * n, n, &src[k]) != 0 ||
		    room_buf(p, p->lmmap, p->region + k * n, n, &dst[k]) != 0)
			goto out;
	t0 = now_s();
	for (uint32_t k = 0; k < p->count; k++)
		(void)post_read(p, src[k], dst[k]);
	if (wait_tasks(p, TASK_WAIT_S, "read completions") != 0 || expect_all_ok(p, 0, p->count, "read") != 0)
		goto out;
	for (uint32_t k = 0; k < p->count; k++) {
		size_t dl = 0;

		if (buf_data_len(p, dst[k], &dl) != 0)
			goto out;
		if (dl != n) {
			failf(p, "read #%u: local dst data length %zu, expected %zu", k, dl, n);
			goto out;
		}
		if (p->recs[k].read_len != n) {
			failf(p, "read #%u: doca_rdma_task_read_get_result_len says %u, expected %zu", k,
			      p->recs[k].read_len, n);
			goto out;
		}
	}
	if (check_canaries(p) != 0 ||
	    expect_pattern(p, p->region, 0, p->region_len, seed_a(p), "data read from the target") != 0)
		goto out;
	report_pass(p, t0, (uint64_t)n * p->count, "%u reads of %zu B ok", p->count, n);
	rc = 0;
out:
	free(dst);
	free(src);
	return rc;
}

static int run_send_common(struct peer *p, bool imm)
{
	size_t n = p->size;
	struct doca_buf **src = calloc(p->count, sizeof(*src));
	double t0;
	int rc = -1;

	if (src == NULL)
		return failf(p, "out of memory");
	init_region(p, seed_b(p));
	for (uint32_t k = 0; k < p->count && n > 0; k++)
		if (data_buf(p, p->lmmap, p->region + k * n, n, &src[k]) != 0)
			goto out;
	t0 = now_s();
	for (uint32_t k = 0; k < p->count; k++) {
		if (imm)
			(void)post_send_imm(p, src[k], IMM_BASE | (k << 16));
		else
			(void)post_send(p, src[k]);
	}
	if (wait_tasks(p, TASK_WAIT_S, imm ? "send_imm completions" : "send completions") != 0 ||
	    expect_all_ok(p, 0, p->count, imm ? "send_imm" : "send") != 0)
		goto out;
	if (check_canaries(p) != 0)
		goto out;
	report_pass(p, t0, (uint64_t)n * p->count, "%u %s of %zu B ok", p->count, imm ? "send_imms" : "sends", n);
	rc = 0;
out:
	free(src);
	return rc;
}

static int run_send(struct peer *p)
{
	return run_send_common(p, false);
}

static int run_send_imm(struct peer *p)
{
	return run_send_common(p, true);
}

static int run_cas(struct peer *p)
{
	uint32_t k, first;
	struct doca_buf **dst = calloc(p->count, sizeof(*dst));
	struct doca_buf **res = calloc(p->count, sizeof(*res));
	double t0;
	int rc = -1;

	if (dst == NULL || res == NULL) {
		failf(p, "out of memory");
		goto out;
	}
	init_region(p, JUNK_SEED);
	for (k = 0; k < p->count; k++)
		if (get_buf(p, p->rmmap, p->raddr + 8 * k, 8, p->raddr + 8 * k, 8, &dst[k]) != 0 ||
		    room_buf(p, p->lmmap, p->region + 8 * k, 8, &res[k]) != 0)
			goto out;
	t0 = now_s();
	/* Round 1: every compare matches, every swap happens. */
	for (k = 0; k < p->count; k++)
		(void)post_cas(p, dst[k], res[k], aval(p, k), bval(p, k));
	if (wait_tasks(p, TASK_WAIT_S, "cas completions") != 0 || expect_all_ok(p, 0, p->count, "cas (match)") != 0)
		goto out;
	for (k = 0; k < p->count; k++) {
		size_t dl = 0;

		if (buf_data_len(p, res[k], &dl) != 0)
			goto out;
		if (dl != 8) {
			failf(p, "cas #%u: result buf data length %zu, expected 8", k, dl);
			goto out;
		}
		if (word_at(p->region, k) != aval(p, k)) {
			failf(p, "cas #%u: old value 0x%016" PRIx64 ", expected 0x%016" PRIx64, k,
			      word_at(p->region, k), aval(p, k));
			goto out;
		}
	}
	/* Round 2: compare with the old value again, which no longer
	 * matches: memory must stay, the current value comes back. */
	for (k = 0; k < p->count; k++) {
		doca_error_t err = doca_buf_reset_data_len(res[k]);

		if (err != DOCA_SUCCESS) {
			failf(p, "doca_buf_reset_data_len returned %s", doca_error_get_name(err));
			goto out;
		}
		word_set(p->region, k, 0);
	}
	first = p->nrecs;
	for (k = 0; k < p->count; k++)
		(void)post_cas(p, dst[k], res[k], aval(p, k), 0xDEADBEEFDEADBEEFull);
	if (wait_tasks(p, TASK_WAIT_S, "cas (mismatch) completions") != 0 ||
	    expect_all_ok(p, first, p->count, "cas (mismatch)") != 0)
		goto out;
	for (k = 0; k < p->count; k++)
		if (word_at(p->region, k) != bval(p, k)) {
			failf(p, "cas mismatch #%u: old value 0x%016" PRIx64 ", expected 0x%016" PRIx64, k,
			      word_at(p->region, k), bval(p, k));
			goto out;
		}
	if (check_canaries(p) != 0)
		goto out;
	report_pass(p, t0, 0, "%u matching + %u mismatching compare-and-swaps ok", p->count, p->count);
	rc = 0;
out:
	free(dst);
	free(res);
	return rc;
}

/* K fetch-and-adds on word 0, add_k = k + 1; RC order makes old_k the
 * prefix sum. */
static int run_fadd(struct peer *p)
{
	struct doca_buf *dst = NULL;
	struct doca_buf **res = calloc(p->count, sizeof(*res));
	uint64_t expect = aval(p, 0);
	double t0;
	int rc = -1;
	uint32_t k;

	if (res == NULL)
		return failf(p, "out of memory");
	init_region(p, JUNK_SEED);
	if (get_buf(p, p->rmmap, p->raddr, 8, p->raddr, 8, &dst) != 0)
		goto out;
	for (k = 0; k < p->count; k++)
		if (room_buf(p, p->lmmap, p->region + 8 * k, 8, &res[k]) != 0)
			goto out;
	t0 = now_s();
	for (k = 0; k < p->count; k++)
		(void)post_fadd(p, dst, res[k], (uint64_t)k + 1);
	if (wait_tasks(p, TASK_WAIT_S, "fetch_add completions") != 0 ||
	    expect_all_ok(p, 0, p->count, "fetch_add") != 0)
		goto out;
	/* Atomicity first (order-free): the old values are all distinct and
	 * their sum is what K atomic adds would produce. */
	for (k = 0; k < p->count; k++) {
		size_t dl = 0;

		if (buf_data_len(p, res[k], &dl) != 0)
			goto out;
		if (dl != 8) {
			failf(p, "fetch_add #%u: result data length %zu, expected 8", k, dl);
			goto out;
		}
		for (uint32_t j = 0; j < k; j++)
			if (word_at(p->region, j) == word_at(p->region, k)) {
				failf(p, "fetch_add #%u and #%u returned the same old value 0x%016" PRIx64
					 " (not atomic)",
				      j, k, word_at(p->region, k));
				goto out;
			}
	}
	for (k = 0; k < p->count; k++) {
		if (word_at(p->region, k) != expect) {
			failf(p, "fetch_add #%u: old value 0x%016" PRIx64 ", expected 0x%016" PRIx64
				 " (operations not applied in submission order)",
			      k, word_at(p->region, k), expect);
			goto out;
		}
		expect += (uint64_t)k + 1;
	}
	if (check_canaries(p) != 0)
		goto out;
	report_pass(p, t0, 0, "%u fetch-and-adds on one word ok, old values in submission order", p->count);
	rc = 0;
out:
	free(res);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Initiator: error cases                                               */

/* Write slice 0 (n bytes of pattern B) and expect success: proves the
 * connection and the export work before a refusal is tested. */
static int control_write(struct peer *p)
{
	struct doca_buf *src, *dst;
	uint32_t i;

	pat_fill(p->region, p->size, seed_b(p), 0);
	if (data_buf(p, p->lmmap, p->region, p->size, &src) != 0 ||
	    room_buf(p, p->rmmap, p->raddr, p->size, &dst) != 0)
		return -1;
	i = post_write(p, src, dst);
	if (wait_tasks(p, TASK_WAIT_S, "control write") != 0)
		return -1;
	return expect_ok(p, i, "control write (permitted, in range)");
}

/* Read slice 0 of the target into local slice 1 and expect pattern A. */
static int control_read(struct peer *p)
{
	struct doca_buf *src, *dst;
	uint32_t i;

	pat_fill(p->region + p->size, p->size, JUNK_SEED, p->size);
	if (data_buf(p, p->rmmap, p->raddr, p->size, &src) != 0 ||
	    room_buf(p, p->lmmap, p->region + p->size, p->size, &dst) != 0)
		return -1;
	i = post_read(p, src, dst);
	if (wait_tasks(p, TASK_WAIT_S, "control read") != 0 || expect_ok(p, i, "control read (permitted)") != 0)
		return -1;
	return expect_pattern(p, p->region + p->size, 0, p->size, seed_a(p), "control read data");
}

/* The connection is up once a task on it has completed: export/connect
 * gives no established callback (DOCA calls it for RDMA CM connections
 * only). For the cases that act on the target only once the link is up
 * (stop it, kill it, tell the script we are connected): a write of the
 * first bytes of slice 0 with the data the case writes there anyway, or,
 * where the target grants no RDMA_WRITE, a read of them. Its record is
 * then dropped, so that the case's own tasks are numbered from 0. */
static int prove_link(struct peer *p)
{
	bool rd = (p->cs->mmap_perms & PERM_WR) == 0;
	size_t n = p->size < 8 ? p->size : 8;
	struct doca_buf *src, *dst;
	uint32_t i;

	if (rd) {
		pat_fill(p->region, n, JUNK_SEED, 0);
		if (data_buf(p, p->rmmap, p->raddr, n, &src) != 0 || room_buf(p, p->lmmap, p->region, n, &dst) != 0)
			return -1;
		i = post_read(p, src, dst);
	} else {
		pat_fill(p->region, n, seed_b(p), 0);
		if (data_buf(p, p->lmmap, p->region, n, &src) != 0 || room_buf(p, p->rmmap, p->raddr, n, &dst) != 0)
			return -1;
		i = post_write(p, src, dst);
	}
	if (wait_tasks(p, TASK_WAIT_S, rd ? "the read that shows the link is up" : "the write that shows the link is up") != 0 ||
	    expect_ok(p, i, rd ? "the read that shows the link is up" : "the write that shows the link is up") != 0)
		return -1;
	if (rd && expect_pattern(p, p->region, 0, n, seed_a(p), "the read that shows the link is up") != 0)
		return -1;
	if (p->nrecs != 1 || p->failed || p->disconnected)
		return failf(p, "after the task that shows the link is up: %u tasks recorded, failure callback %d, "
				"disconnection callback %d", p->nrecs, p->failed, p->disconnected);
	memset(&p->recs[0], 0, sizeof(p->recs[0]));
	p->nrecs = p->ndone = 0;
	return 0;
}

/* Write n bytes from local slice 0 to remote `addr` with room `room`
 * on `mmap`; must fail. */
static int forbidden_write(struct peer *p, struct doca_mmap *mmap, uint8_t *addr, size_t room, size_t n,
			   const char *what, char *how, size_t how_len)
{
	struct doca_buf *src, *dst;
	uint32_t i;

	pat_fill(p->region, n, seed_b(p), 0);
	if (data_buf(p, p->lmmap, p->region, n, &src) != 0 || room_buf(p, mmap, addr, room, &dst) != 0)
		return -1;
	i = post_write(p, src, dst);
	if (wait_tasks(p, TASK_WAIT_S, what) != 0)
		return -1;
	return expect_error(p, i, what, how, how_len);
}

/* Read n bytes at remote `addr` on `mmap` into local slice 1; must fail
 * and leave the local bytes and the dst data length alone. */
static int forbidden_read(struct peer *p, struct doca_mmap *mmap, uint8_t *addr, size_t n, const char *what,
			  char *how, size_t how_len)
{
	struct doca_buf *src, *dst;
	uint8_t *local = p->region + p->size;
	size_t dl = 0;
	uint32_t i;

	pat_fill(local, n, JUNK_SEED, 0);
	if (data_buf(p, mmap, addr, n, &src) != 0 || room_buf(p, p->lmmap, local, n, &dst) != 0)
		return -1;
	i = post_read(p, src, dst);
	if (wait_tasks(p, TASK_WAIT_S, what) != 0 || expect_error(p, i, what, how, how_len) != 0)
		return -1;
	if (buf_data_len(p, dst, &dl) != 0)
		return -1;
	if (dl != 0)
		return failf(p, "%s failed but set the local dst data length to %zu", what, dl);
	if (pat_check(local, n, JUNK_SEED, 0) != SIZE_MAX)
		return failf(p, "%s failed but changed the local destination bytes", what);
	return 0;
}

/*
 * A copy of the target's descriptor that claims RDMA_WRITE, which the
 * target's region does not grant. The descriptor is opaque; we find its
 * permission word by comparison with the probe descriptor, which the
 * target exported with RDMA_WRITE added: the one offset where ours holds
 * our permission bits and the probe's holds the probe's, as 32-bit
 * numbers in host order. NULL (and a FAIL line) if there is no single
 * such offset.
 */
static uint8_t *forge_write_permission(struct peer *p)
{
	uint32_t have = p->cs->mmap_perms, want = p->cs->mmap_perms | PERM_WR;
	uint8_t *probe = NULL, *forged;
	size_t probe_len = 0, found = SIZE_MAX;

	if (wait_file(p, "target.probe", &probe, &probe_len) != 0)
		return NULL;
	if (probe_len != p->rmmap_desc_len) {
		failf(p, "probe descriptor is %zu bytes, ours %zu: cannot compare them", probe_len,
		      p->rmmap_desc_len);
		free(probe);
		return NULL;
	}
	for (size_t off = 0; off + 4 <= probe_len; off++) {
		uint32_t a, b;

		memcpy(&a, (const uint8_t *)p->rmmap_desc + off, 4);
		memcpy(&b, probe + off, 4);
		if (a == have && b == want) {
			if (found != SIZE_MAX) {
				failf(p, "permission word found twice in the mmap descriptors; cannot forge");
				free(probe);
				return NULL;
			}
			found = off;
		}
	}
	free(probe);
	if (found == SIZE_MAX) {
		failf(p, "cannot find the permission word (0x%x vs 0x%x) in the mmap descriptors: update the "
			 "forging step of this test",
		      have, want);
		return NULL;
	}
	forged = malloc(p->rmmap_desc_len);
	if (forged == NULL) {
		failf(p, "out of memory");
		return NULL;
	}
	memcpy(forged, p->rmmap_desc, p->rmmap_desc_len);
	memcpy(forged + found, &want, 4);
	return forged;
}

static int run_write_noperm(struct peer *p)
{
	char how[768] = "";
	double t0 = now_s();
	uint8_t *forged;
	doca_error_t err;

	if (control_read(p) != 0 ||
	    forbidden_write(p, p->rmmap, p->raddr, p->size, p->size, "write to an mmap without RDMA_WRITE", how,
			    sizeof(how)) != 0)
		return -1;
	/* Only the target can refuse this one: the forged descriptor says
	 * RDMA_WRITE is granted. */
	forged = forge_write_permission(p);
	if (forged == NULL)
		return -1;
	err = doca_mmap_create_from_export(NULL, forged, p->rmmap_desc_len, p->dev, &p->forged_mmap);
	free(forged);
	if (err != DOCA_SUCCESS) {
		size_t used = strlen(how);

		p->forged_mmap = NULL;
		snprintf(how + used, sizeof(how) - used,
			 "; descriptor forged to claim RDMA_WRITE refused by create_from_export with %s",
			 doca_error_get_name(err));
	} else if (forbidden_write(p, p->forged_mmap, p->raddr, p->size, p->size,
				   "write with a descriptor forged to claim RDMA_WRITE", how, sizeof(how)) != 0) {
		return -1;
	}
	if (check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "read permitted; %s", how);
	return 0;
}

static int run_ctxperm(struct peer *p)
{
	char how[512] = "";
	double t0 = now_s();

	if (control_read(p) != 0 ||
	    forbidden_write(p, p->rmmap, p->raddr, p->size, p->size,
			    "write through a context without RDMA_WRITE permission", how, sizeof(how)) != 0 ||
	    check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "read permitted; %s", how);
	return 0;
}

static int run_read_noperm(struct peer *p)
{
	char how[512] = "";
	double t0 = now_s();

	if (control_write(p) != 0 ||
	    forbidden_read(p, p->rmmap, p->raddr + p->size, p->size, "read of an mmap without RDMA_READ", how,
			   sizeof(how)) != 0 ||
	    check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "write permitted; %s", how);
	return 0;
}

/*
 * Out of range. The public API will not build a buf outside a from-export
 * mmap (the inventory checks the range), so two routes:
 *
 * 1. Honest: a remote dst buf whose room (16 bytes at the very end of the
 *    range) is smaller than the 64-byte source: the library must refuse,
 *    locally or at the target, without writing the 16 bytes that fit.
 * 2. Forged: we know the exported address and length (doca_mmap_get_memrange
 *    of the from-export mmap). We look for them in the opaque descriptor as
 *    two adjacent 64-bit numbers in host order, and make a copy claiming a
 *    longer range (plus CANARY_LEN). If doca_mmap_create_from_export takes
 *    it, a buf past the real end can be built, and the target alone stands
 *    between the forged capability and its canary: both a write and a read
 *    there must fail, writing nothing and leaking nothing. If the descriptor
 *    no longer holds the range that way, this test must be updated: it fails
 *    and says so.
 */
static int run_oob(struct peer *p)
{
	char how[768] = "";
	double t0 = now_s();
	uint8_t *forged;
	size_t off, found = SIZE_MAX;
	uint64_t a = (uint64_t)(uintptr_t)p->raddr, l = p->rlen, l2 = p->rlen + CANARY_LEN;
	doca_error_t err;

	if (control_write(p) != 0)
		return -1;
	if (forbidden_write(p, p->rmmap, p->raddr + p->rlen - 16, 16, 64, "write of 64 B into 16 B of room at the end",
			    how, sizeof(how)) != 0)
		return -1;

	for (off = 0; off + 16 <= p->rmmap_desc_len; off++) {
		uint64_t va, vl;

		memcpy(&va, (const uint8_t *)p->rmmap_desc + off, 8);
		memcpy(&vl, (const uint8_t *)p->rmmap_desc + off + 8, 8);
		if (va == a && vl == l) {
			if (found != SIZE_MAX)
				return failf(p, "the range appears twice in the mmap descriptor; cannot forge");
			found = off;
		}
	}
	if (found == SIZE_MAX)
		return failf(p, "cannot find the exported range (0x%" PRIx64 ", %" PRIu64
				") in the %zu-byte mmap descriptor: update the forging step of this test",
			     a, l, p->rmmap_desc_len);
	forged = malloc(p->rmmap_desc_len);
	if (forged == NULL)
		return failf(p, "out of memory");
	memcpy(forged, p->rmmap_desc, p->rmmap_desc_len);
	memcpy(forged + found + 8, &l2, 8);
	err = doca_mmap_create_from_export(NULL, forged, p->rmmap_desc_len, p->dev, &p->forged_mmap);
	free(forged);
	if (err != DOCA_SUCCESS) {
		size_t used = strlen(how);

		p->forged_mmap = NULL;
		snprintf(how + used, sizeof(how) - used, "; forged descriptor refused by create_from_export with %s",
			 doca_error_get_name(err));
	} else {
		if (forbidden_write(p, p->forged_mmap, p->raddr + p->rlen, 64, 64,
				    "write past the range (forged descriptor)", how, sizeof(how)) != 0 ||
		    forbidden_read(p, p->forged_mmap, p->raddr + p->rlen - 8, 64,
				   "read across the range end (forged descriptor)", how, sizeof(how)) != 0)
			return -1;
	}
	if (check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "in-range write permitted; %s", how);
	return 0;
}

static int run_atomic_misaligned(struct peer *p)
{
	struct doca_buf *dst0, *res0, *dst_cas, *dst_fadd, *res1, *res2;
	char how[512] = "";
	double t0 = now_s();
	uint32_t i, j, k;
	size_t dl = 0;

	init_region(p, JUNK_SEED);
	if (get_buf(p, p->rmmap, p->raddr, 8, p->raddr, 8, &dst0) != 0 ||
	    room_buf(p, p->lmmap, p->region, 8, &res0) != 0 ||
	    get_buf(p, p->rmmap, p->raddr + 8, 16, p->raddr + 9, 8, &dst_cas) != 0 ||
	    get_buf(p, p->rmmap, p->raddr + 16, 16, p->raddr + 20, 8, &dst_fadd) != 0 ||
	    room_buf(p, p->lmmap, p->region + 8, 8, &res1) != 0 || room_buf(p, p->lmmap, p->region + 16, 8, &res2) != 0)
		return -1;
	i = post_fadd(p, dst0, res0, MISALIGN_ADD);
	if (wait_tasks(p, TASK_WAIT_S, "control fetch_add") != 0 ||
	    expect_ok(p, i, "control fetch_add (aligned)") != 0)
		return -1;
	if (word_at(p->region, 0) != aval(p, 0))
		return failf(p, "control fetch_add: old value 0x%016" PRIx64 ", expected 0x%016" PRIx64,
			     word_at(p->region, 0), aval(p, 0));
	j = post_cas(p, dst_cas, res1, aval(p, 1), 0);
	k = post_fadd(p, dst_fadd, res2, 1);
	if (wait_tasks(p, TASK_WAIT_S, "misaligned atomics") != 0 ||
	    expect_error(p, j, "compare-and-swap at +9", how, sizeof(how)) != 0 ||
	    expect_error(p, k, "fetch-and-add at +20", how, sizeof(how)) != 0)
		return -1;
	if (buf_data_len(p, res1, &dl) != 0 || dl != 0 || buf_data_len(p, res2, &dl) != 0 || dl != 0)
		return failf(p, "a failed atomic grew its result buf's data length");
	if (pat_check(p->region + 8, 16, JUNK_SEED, 8) != SIZE_MAX)
		return failf(p, "a failed atomic wrote its result buffer");
	if (check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "aligned fetch_add ok; %s", how);
	return 0;
}

static int run_revoked(struct peer *p)
{
	char how[512] = "";
	uint8_t *data = NULL;
	size_t len = 0;
	double t0 = now_s();

	if (control_write(p) != 0)
		return -1;
	tell_target(p, 'C');
	if (wait_file(p, "target.revoked", &data, &len) != 0)
		return -1;
	free(data);
	if (forbidden_write(p, p->rmmap, p->raddr + p->size, p->size, p->size, "write after the mmap was stopped",
			    how, sizeof(how)) != 0 ||
	    forbidden_read(p, p->rmmap, p->raddr, p->size, "read after the mmap was stopped", how, sizeof(how)) != 0 ||
	    check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "write before the stop ok; %s", how);
	return 0;
}

static int run_recv_small(struct peer *p)
{
	struct doca_buf *src;
	char how[256] = "";
	double t0 = now_s();
	uint32_t i;

	init_region(p, seed_b(p));
	if (data_buf(p, p->lmmap, p->region, p->size, &src) != 0)
		return -1;
	i = post_send(p, src);
	if (wait_tasks(p, TASK_WAIT_S, "send to a too small receive") != 0 ||
	    expect_error(p, i, "send larger than the posted receive", how, sizeof(how)) != 0 ||
	    check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "%s", how);
	return 0;
}

/* Sends with no receive posted stay in flight (RNR retry for ever); the
 * target then dies. Every one must fail, the connection callback must
 * fire, and a new operation must fail too. */
static int run_peer_kill(struct peer *p)
{
	double t0, t_fail, deadline;
	struct doca_buf *wsrc, *wdst;
	uint32_t k, extra;
	char how[256] = "";
	size_t inflight = 0;

	if (prove_link(p) != 0)
		return -1;
	init_region(p, seed_b(p));
	for (k = 0; k < p->count; k++) {
		struct doca_buf *src;

		if (data_buf(p, p->lmmap, p->region + k * p->size, p->size, &src) != 0)
			return -1;
		(void)post_send(p, src);
	}
	for (k = 0; k < p->count; k++)
		if (p->recs[k].done)
			return failf(p, "send #%u was refused at %s with %s before the peer died", k,
				     where_name(p->recs[k].where), doca_error_get_name(p->recs[k].status));
	CHECK(p, doca_ctx_get_num_inflight_tasks(p->ctx, &inflight));
	if (inflight != p->count)
		return failf(p, "doca_ctx_get_num_inflight_tasks says %zu, expected %u", inflight, p->count);
	/* With the peer alive and no receive posted, nothing may complete:
	 * the sends are in flight, not failed for some other reason. */
	deadline = now_s() + INFLIGHT_CHECK_S;
	while (now_s() < deadline)
		progress_once(p, 10);
	if (p->ndone != 0 || p->failed || p->disconnected)
		return failf(p, "before the peer died: %u of %u sends completed (first status %s), failure callback %d, "
				"disconnection callback %d",
			     p->ndone, p->count, doca_error_get_name(p->recs[0].status), p->failed, p->disconnected);
	t0 = now_s();
	tell_target(p, 'I');
	deadline = t0 + KILL_DETECT_S;
	while (p->ndone < p->nrecs || (p->failed == 0 && p->disconnected == 0)) {
		if (now_s() > deadline)
			return failf(p, "%.0f s after the target died: %u of %u sends completed, failure callback %d, "
					"disconnection callback %d",
				     KILL_DETECT_S, p->ndone, p->nrecs, p->failed, p->disconnected);
		progress_once(p, 50);
	}
	t_fail = now_s() - t0;
	for (k = 0; k < p->count; k++) {
		if (p->recs[k].status == DOCA_SUCCESS)
			return failf(p, "send #%u succeeded although no receive was ever posted", k);
		if (p->recs[k].where != AT_COMPLETION)
			return failf(p, "send #%u: outcome at %s", k, where_name(p->recs[k].where));
	}
	snprintf(how, sizeof(how), "%u in-flight sends failed with %s; %s callback", p->count,
		 doca_error_get_name(p->recs[0].status), p->failed ? "failure" : "disconnection");
	/* A new operation on the dead connection fails (anywhere). */
	if (data_buf(p, p->lmmap, p->region, 8, &wsrc) != 0 || room_buf(p, p->rmmap, p->raddr, 8, &wdst) != 0)
		return -1;
	extra = post_write(p, wsrc, wdst);
	if (wait_tasks(p, TASK_WAIT_S, "write after the peer died") != 0 ||
	    expect_error(p, extra, "write after the peer died", how, sizeof(how)) != 0)
		return -1;
	if (check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "%s; all failed %.1f ms after the target was told to die", how, t_fail * 1e3);
	return 0;
}

/* Large writes (peer_kill_write) or reads (peer_kill_read) in flight
 * (rendezvous, many round trips each) when the target dies: every one
 * must complete, with success if it got through before the death or with
 * an error, within KILL_DETECT_S, and the failure or disconnection
 * callback must fire. No hang. */
static int run_peer_kill_rdma(struct peer *p)
{
	bool rd = strcmp(p->cs->name, "peer_kill_read") == 0;
	const char *what = rd ? "reads" : "writes";
	double t0, t_done, deadline;
	uint32_t k, nfail = 0;
	char how[256];

	if (prove_link(p) != 0)
		return -1;
	init_region(p, rd ? JUNK_SEED : seed_b(p));
	for (k = 0; k < p->count; k++) {
		struct doca_buf *src, *dst;

		if (rd) {
			if (data_buf(p, p->rmmap, p->raddr + k * p->size, p->size, &src) != 0 ||
			    room_buf(p, p->lmmap, p->region + k * p->size, p->size, &dst) != 0)
				return -1;
			(void)post_read(p, src, dst);
			continue;
		}
		if (data_buf(p, p->lmmap, p->region + k * p->size, p->size, &src) != 0 ||
		    room_buf(p, p->rmmap, p->raddr + k * p->size, p->size, &dst) != 0)
			return -1;
		(void)post_write(p, src, dst);
	}
	t0 = now_s();
	tell_target(p, 'I');
	deadline = t0 + KILL_DETECT_S;
	while (p->ndone < p->nrecs || (p->failed == 0 && p->disconnected == 0)) {
		if (now_s() > deadline)
			return failf(p, "%.0f s after the target was told to die: %u of %u %s completed, failure "
					"callback %d, disconnection callback %d",
				     KILL_DETECT_S, p->ndone, p->nrecs, what, p->failed, p->disconnected);
		progress_once(p, 50);
	}
	t_done = now_s() - t0;
	for (k = 0; k < p->count; k++) {
		if (p->recs[k].where != AT_COMPLETION)
			return failf(p, "%s #%u: refused at %s with %s before the peer died", rd ? "read" : "write", k,
				     where_name(p->recs[k].where), doca_error_get_name(p->recs[k].status));
		nfail += p->recs[k].status != DOCA_SUCCESS;
	}
	snprintf(how, sizeof(how), "%u of %u %s of %zu B failed, %u got through first; %s callback", nfail,
		 p->count, what, p->size, p->count - nfail, p->failed ? "failure" : "disconnection");
	if (check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "%s; all done %.1f ms after the target was told to die", how, t_done * 1e3);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Initiator: a peer whose descriptor names the wrong pid               */

static double notice_bound_s(void)
{
	const char *t = getenv(CONN_TIMEOUT_ENV);
	double ms = t != NULL && t[0] != '\0' ? strtod(t, NULL) : CONN_TIMEOUT_DEFAULT_MS;

	return (ms > 0 ? ms : CONN_TIMEOUT_DEFAULT_MS) / 1000.0 + NOTICE_SLACK_S;
}

/* The state letter of process pid in /proc/PID/stat, or 0. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	const char *paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren != NULL && paren[1] == ' ' ? paren[2] : 0;
}

/* The target is frozen (SIGSTOP, its service thread too), so our writes
 * stay in flight; then it dies (SIGKILL). Its descriptor named a pid that
 * does not exist: nothing but silence tells us it is gone. */
static int run_forged_dead(struct peer *p)
{
	double t0, dt, deadline, bound = notice_bound_s();
	struct doca_buf *wsrc, *wdst;
	size_t inflight = 0;
	uint32_t k, extra;
	char how[256];

	if (p->kill_pid <= 0)
		return failf(p, "forged_pid_dead needs --kill-pid (the real target's pid)");
	if (prove_link(p) != 0)
		return -1;
	if (kill(p->kill_pid, SIGSTOP) != 0)
		return failf(p, "kill(%d, SIGSTOP): %s", (int)p->kill_pid, strerror(errno));
	for (deadline = now_s() + 5.0; proc_state(p->kill_pid) != 'T';) {
		if (now_s() > deadline)
			return failf(p, "the target (pid %d) is not stopped 5 s after SIGSTOP (state %c)", (int)p->kill_pid,
				     proc_state(p->kill_pid) ? proc_state(p->kill_pid) : '?');
		poll(NULL, 0, 1);
	}
	init_region(p, seed_b(p));
	for (k = 0; k < p->count; k++) {
		struct doca_buf *src, *dst;

		if (data_buf(p, p->lmmap, p->region + k * p->size, p->size, &src) != 0 ||
		    room_buf(p, p->rmmap, p->raddr + k * p->size, p->size, &dst) != 0)
			return -1;
		(void)post_write(p, src, dst);
	}
	for (k = 0; k < p->count; k++)
		if (p->recs[k].done)
			return failf(p, "write #%u was refused at %s with %s before the target died", k,
				     where_name(p->recs[k].where), doca_error_get_name(p->recs[k].status));
	CHECK(p, doca_ctx_get_num_inflight_tasks(p->ctx, &inflight));
	if (inflight != p->count)
		return failf(p, "doca_ctx_get_num_inflight_tasks says %zu, expected %u", inflight, p->count);
	for (deadline = now_s() + INFLIGHT_CHECK_S; now_s() < deadline;)
		progress_once(p, 10);
	if (p->ndone != 0 || p->failed || p->disconnected)
		return failf(p, "while the target was stopped: %u of %u writes completed, failure callback %d, "
				"disconnection callback %d",
			     p->ndone, p->count, p->failed, p->disconnected);
	if (kill(p->kill_pid, SIGKILL) != 0)
		return failf(p, "kill(%d, SIGKILL): %s", (int)p->kill_pid, strerror(errno));
	t0 = now_s();
	while (p->ndone < p->nrecs || (p->failed == 0 && p->disconnected == 0)) {
		if (now_s() > t0 + bound)
			return failf(p, "%.2f s after the target was killed (bound: %s + %.1f s): %u of %u writes "
					"completed, failure callback %d, disconnection callback %d",
				     now_s() - t0, CONN_TIMEOUT_ENV, NOTICE_SLACK_S, p->ndone, p->nrecs, p->failed,
				     p->disconnected);
		progress_once(p, 10);
	}
	dt = now_s() - t0;
	for (k = 0; k < p->count; k++)
		if (p->recs[k].status != DOCA_ERROR_CONNECTION_ABORTED || p->recs[k].where != AT_COMPLETION)
			return failf(p, "write #%u ended with %s at %s, expected DOCA_ERROR_CONNECTION_ABORTED at completion",
				     k, doca_error_get_name(p->recs[k].status), where_name(p->recs[k].where));
	snprintf(how, sizeof(how), "noticed after %.2f s (bound %.1f s): %u in-flight writes failed with %s; %s callback",
		 dt, bound, p->count, doca_error_get_name(p->recs[0].status), p->failed ? "failure" : "disconnection");
	if (data_buf(p, p->lmmap, p->region, 8, &wsrc) != 0 || room_buf(p, p->rmmap, p->raddr, 8, &wdst) != 0)
		return -1;
	extra = post_write(p, wsrc, wdst);
	if (wait_tasks(p, TASK_WAIT_S, "write after the target died") != 0 ||
	    expect_error(p, extra, "write after the target died", how, sizeof(how)) != 0)
		return -1;
	if (check_canaries(p) != 0)
		return -1;
	report_pass(p, t0, 0, "the descriptor named a dead pid; %s", how);
	return 0;
}

/* The descriptor named a helper's pid; once the helper is gone the
 * connection must live on: writes right then (while the library asks the
 * peer) and ALIVE_HOLD_S later must all succeed. */
static int run_forged_alive(struct peer *p)
{
	double deadline, t_gone;

	if (prove_link(p) != 0)
		return -1;
	write_flag_file(p, "initiator.ready", "1");
	for (deadline = now_s() + PEER_WAIT_S; !file_exists(p, "helper.gone");) {
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for %s/helper.gone", PEER_WAIT_S, p->dir);
		if (peer_gave_up(p))
			return failf(p, "the target gave up while we waited for helper.gone");
		progress_once(p, 10);
	}
	t_gone = now_s();
	if (run_write_common(p, false) != 0)
		return -1;
	while (now_s() < t_gone + ALIVE_HOLD_S)
		progress_once(p, 10);
	if (p->failed || p->disconnected)
		return failf(p, "the connection %s after the process named in the descriptor exited (the target lives)",
			     p->failed ? "failed" : "was disconnected");
	report_pass(p, t_gone, 0, "the process the descriptor named exited; the connection to the live target stayed "
				  "up for %.1f s and %u writes succeeded",
		    ALIVE_HOLD_S, p->count);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Target                                                               */

static void target_fill(struct peer *p)
{
	pat_fill(p->region, p->region_len, seed_a(p), 0);
	if (p->cs->flags & C_ATOMIC)
		for (uint32_t k = 0; k < p->count; k++)
			word_set(p->region, k, aval(p, k));
}

/* Called in a receive callback for write_imm: the write whose immediate is
 * `imm` (and every earlier one) must be visible already. */
static int check_write_imm_visible(struct peer *p, uint32_t imm)
{
	uint32_t k = imm >> 16;
	size_t n = p->size;

	if ((imm & 0xFFFFu) != IMM_BASE || k >= p->count) {
		printf("NOTE %s: write_imm receive with unexpected immediate 0x%08x\n", p->tag, imm);
		return -1;
	}
	for (uint32_t j = 0; j <= k && n > 0; j++) {
		size_t bad = pat_check(p->region + j * n, n, seed_b(p), j * n);

		if (bad != SIZE_MAX) {
			printf("NOTE %s: receive for write_imm #%u completed but write #%u is not visible "
			       "(byte %zu differs)\n",
			       p->tag, k, j, j * n + bad);
			return -1;
		}
	}
	return 0;
}

static int post_target_receives(struct peer *p)
{
	const char *n = p->cs->name;
	struct doca_buf *dst;

	if (strcmp(n, "recv_small") == 0) {
		if (room_buf(p, p->lmmap, p->region, p->size / 2, &dst) != 0)
			return -1;
		p->recv_bufs[0] = dst;
		(void)post_receive(p, dst);
	} else if (strcmp(n, "peer_kill") == 0) {
		return 0; /* nothing posted: the initiator's sends stay in flight */
	} else {
		for (uint32_t k = 0; k < p->count; k++) {
			dst = NULL;
			if (strcmp(n, "write_imm") != 0 && p->size > 0 &&
			    room_buf(p, p->lmmap, p->region + k * p->size, p->size, &dst) != 0)
				return -1;
			p->recv_bufs[k] = dst;
			(void)post_receive(p, dst);
		}
	}
	for (uint32_t i = 0; i < p->nrecs; i++)
		if (p->recs[i].done)
			return failf(p, "posting receive #%u failed at %s with %s", i, where_name(p->recs[i].where),
				     doca_error_get_name(p->recs[i].status));
	return 0;
}

static int check_receives(struct peer *p, enum doca_rdma_opcode want_op)
{
	size_t n = p->size;

	for (uint32_t k = 0; k < p->count; k++) {
		const struct rec *r = &p->recs[k];
		uint32_t want_imm = IMM_BASE | (k << 16);
		char w[64];

		snprintf(w, sizeof(w), "receive #%u", k);
		if (expect_ok(p, k, w) != 0)
			return -1;
		if (r->opcode != want_op)
			return failf(p, "receive #%u: opcode %d, expected %d", k, (int)r->opcode, (int)want_op);
		if (want_op != DOCA_RDMA_OPCODE_RECV_SEND && r->imm != want_imm)
			return failf(p, "receive #%u: immediate 0x%08x, expected 0x%08x", k, (unsigned)r->imm, want_imm);
		if (r->conn != p->conn)
			return failf(p, "receive #%u: connection %p, expected ours %p", k, (const void *)r->conn,
				     (void *)p->conn);
		if (want_op == DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM)
			continue; /* the data went to the region, checked below */
		if (r->len != n)
			return failf(p, "receive #%u: result length %u, expected %zu", k, r->len, n);
		if (n > 0) {
			size_t dl = 0;

			if (buf_data_len(p, p->recv_bufs[k], &dl) != 0)
				return -1;
			if (dl != n)
				return failf(p, "receive #%u: dst data length %zu, expected %zu", k, dl, n);
			if (expect_pattern(p, p->region, k * n, n, seed_b(p), w) != 0)
				return -1;
		}
	}
	return 0;
}

static int check_send(struct peer *p)
{
	return check_receives(p, DOCA_RDMA_OPCODE_RECV_SEND);
}

static int check_send_imm(struct peer *p)
{
	return check_receives(p, DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM);
}

static int check_all_b(struct peer *p)
{
	return expect_pattern(p, p->region, 0, p->region_len, seed_b(p), "region after the writes");
}

static int check_write_imm(struct peer *p)
{
	if (check_receives(p, DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM) != 0)
		return -1;
	return check_all_b(p);
}

static int check_all_a(struct peer *p)
{
	return expect_pattern(p, p->region, 0, p->region_len, seed_a(p), "region (must be untouched)");
}

/* Slice 0 written by the control write, the rest untouched. */
static int check_slice0_b(struct peer *p)
{
	if (expect_pattern(p, p->region, 0, p->size, seed_b(p), "slice 0 (control write)") != 0)
		return -1;
	return expect_pattern(p, p->region, p->size, p->region_len - p->size, seed_a(p),
			      "region after slice 0 (must be untouched)");
}

static int check_words(struct peer *p, uint32_t nwords, const uint64_t *want, const char *what)
{
	for (uint32_t k = 0; k < nwords; k++)
		if (word_at(p->region, k) != want[k])
			return failf(p, "%s: word %u is 0x%016" PRIx64 ", expected 0x%016" PRIx64, what, k,
				     word_at(p->region, k), want[k]);
	return expect_pattern(p, p->region, 8 * (size_t)p->count, p->region_len - 8 * (size_t)p->count, seed_a(p),
			      "bytes after the atomic words");
}

static int check_cas(struct peer *p)
{
	uint64_t *want = calloc(p->count, sizeof(*want));
	int rc;

	if (want == NULL)
		return failf(p, "out of memory");
	for (uint32_t k = 0; k < p->count; k++)
		want[k] = bval(p, k);
	rc = check_words(p, p->count, want, "after compare-and-swap");
	free(want);
	return rc;
}

static int check_fadd(struct peer *p)
{
	uint64_t *want = calloc(p->count, sizeof(*want));
	int rc;

	if (want == NULL)
		return failf(p, "out of memory");
	for (uint32_t k = 0; k < p->count; k++)
		want[k] = aval(p, k);
	want[0] += (uint64_t)p->count * (p->count + 1) / 2;
	rc = check_words(p, p->count, want, "after fetch-and-add");
	free(want);
	return rc;
}

static int check_misaligned(struct peer *p)
{
	uint64_t *want = calloc(p->count, sizeof(*want));
	int rc;

	if (want == NULL)
		return failf(p, "out of memory");
	for (uint32_t k = 0; k < p->count; k++)
		want[k] = aval(p, k);
	want[0] += MISALIGN_ADD;
	rc = check_words(p, p->count, want, "after the misaligned atomics");
	free(want);
	return rc;
}

static int check_recv_small(struct peer *p)
{
	char how[128] = "";

	if (expect_error(p, 0, "receive smaller than the message", how, sizeof(how)) != 0)
		return -1;
	printf("NOTE %s: %s\n", p->tag, how);
	return expect_pattern(p, p->region, p->size / 2, p->size - p->size / 2, seed_a(p),
			      "bytes after the receive buffer");
}

/* ThreadSanitizer's annotations (see check_peer_written). */
#if defined(__SANITIZE_THREAD__)
#define PEER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PEER_TSAN 1
#endif
#endif
#ifdef PEER_TSAN
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
#endif

/* The case's check of the region after the initiator said 'D' (or 'F'),
 * for one-sided cases only: the initiator's writes and atomics landed
 * there through the library's service thread (or UCX), and the ordering
 * runs through the initiator process (its completions, then the fifo),
 * which ThreadSanitizer cannot see, as it cannot see a NIC's DMA.
 * TSan is told to ignore this thread's accesses meanwhile, rather than
 * tests/tsan.supp suppressing each report: that costs ~10 us per racing
 * byte, minutes for the 8 and 32 MiB regions. Two-sided cases (and
 * write_imm's receive callback) must stay ordered by the library and are
 * checked outside it, in TSan's sight. */
static int check_peer_written(struct peer *p)
{
	int rc;

#ifdef PEER_TSAN
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
#endif
	rc = p->cs->check(p);
#ifdef PEER_TSAN
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
	return rc;
}

/* Serve until the initiator says 'D'. Messages arrive on the fifo; in
 * block mode we sit in poll(2) and never progress. The fifo is read after
 * each progress call and before the connection's state is judged: the
 * initiator says 'D' before it disconnects, so a disconnection seen by
 * progress with 'D' not yet read would be a false alarm otherwise. */
static int target_serve(struct peer *p)
{
	double deadline = now_s() + SERVE_WAIT_S;
	bool done = false;
	bool two_sided = (p->cs->flags & C_TWO_SIDED) != 0;

	for (;;) {
		struct pollfd pfd = {.fd = p->fifo, .events = POLLIN, .revents = 0};
		char c;
		int r;

		if (p->serve == SERVE_PROGRESS)
			(void)doca_pe_progress(p->pe);
		r = poll(&pfd, 1, p->serve == SERVE_PROGRESS ? 0 : 1000);
		if (r < 0 && errno != EINTR)
			return failf(p, "poll on the fifo: %s", strerror(errno));
		while (r > 0 && read(p->fifo, &c, 1) == 1) {
			switch (c) {
			case 'D':
				done = true;
				break;
			case 'F':
				/* Say whether our memory suffered, too. */
				if (!two_sided && check_peer_written(p) == 0 && check_canaries(p) == 0)
					printf("NOTE %s: memory and canaries as expected all the same\n", p->tag);
				return failf(p, "the initiator failed (see its output)");
			case 'I':
				if (p->cs->flags & C_KILL) {
					printf("NOTE %s: initiator has tasks in flight; dying now (SIGKILL)\n", p->tag);
					fflush(stdout);
					raise(SIGKILL);
				}
				return failf(p, "unexpected message 'I'");
			case 'C':
				if (p->cs->flags & C_REVOKE) {
					doca_error_t err = doca_mmap_stop(p->lmmap);
					int w;

					if (err != DOCA_SUCCESS)
						return failf(p, "doca_mmap_stop of the exported mmap returned %s",
							     doca_error_get_name(err));
					p->lmmap_started = false;
					w = write_file(p, "target.revoked", "1", 1);
					if (w != 0)
						return failf(p, "writing target.revoked: %s", strerror(-w));
					break;
				}
				return failf(p, "unexpected message 'C'");
			default:
				return failf(p, "unexpected message 0x%02x on the fifo", (unsigned char)c);
			}
		}
		if (done && (!two_sided || p->ndone == p->nrecs))
			return 0;
		if (!done && (p->failed || p->disconnected))
			return failf(p, "the connection %s before the initiator finished",
				     p->failed ? "failed" : "was disconnected");
		if (now_s() > deadline) {
			if (done)
				return failf(p, "timed out: %u of %u receives completed after the initiator finished",
					     p->ndone, p->nrecs);
			return failf(p, "timed out after %.0f s waiting for the initiator to finish", SERVE_WAIT_S);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Target: a hostile peer first (--hostile)                             */

/* Wait (bounded) for hostile_peer's file `name` (read into *data unless
 * data is NULL), progressing meanwhile with --serve progress. Its
 * hostile.failed file, or its connection going down, ends the wait. */
static int hostile_wait_file(struct peer *p, const char *name, double timeout_s, uint8_t **data, size_t *len)
{
	const struct timespec tick = {.tv_sec = 0, .tv_nsec = 1000 * 1000};
	double deadline = now_s() + timeout_s, next_look = 0;

	for (;;) {
		double t = now_s();

		if (t >= next_look) {
			next_look = t + 0.001;
			if (file_exists(p, "hostile.failed"))
				return failf(p, "the hostile peer gave up (see its output) while we waited for %s", name);
			if (data != NULL) {
				int r = read_file(p, name, data, len);

				if (r == 0)
					return 0;
				if (r < 0)
					return failf(p, "reading %s/%s: %s", p->dir, name, strerror(-r));
			} else if (file_exists(p, name)) {
				return 0;
			}
			if (t > deadline)
				return failf(p, "timed out after %.0f s waiting for the hostile peer's file %s/%s",
					     timeout_s, p->dir, name);
		}
		if (p->serve == SERVE_PROGRESS) {
			(void)doca_pe_progress(p->pe);
			if (p->hfailed || p->hdisconnected)
				return failf(p, "the hostile peer's connection %s before it was done (closed by a "
						"forged message, or the hostile peer died)",
					     p->hfailed ? "failed" : "was disconnected");
		} else {
			nanosleep(&tick, NULL);
		}
	}
}

/* Where byte i of CANARY | region | CANARY is, for a message. */
static void hostile_where(const struct peer *p, size_t i, char *out, size_t len)
{
	if (i < CANARY_LEN)
		snprintf(out, len, "front canary, %zu B before the region", CANARY_LEN - i);
	else if (i < CANARY_LEN + p->region_len)
		snprintf(out, len, "region offset %zu", i - CANARY_LEN);
	else
		snprintf(out, len, "back canary, %zu B after the region end", i - CANARY_LEN - p->region_len);
}

/* Serve hostile_peer on a first connection until it is done; then its
 * connection must never have been closed, and not one byte of the region
 * or of the canaries may have changed. That the connection was up,
 * hostile_peer shows: its first scenario (handshake) needs the target's
 * answer, and without it the others do not run. No established callback
 * may run for it (export/connect; checked again at teardown). */
static int hostile_phase(struct peer *p)
{
	size_t span = CANARY_LEN + p->region_len + CANARY_LEN, bad = 0, first = 0, last = 0;
	uint8_t *before = malloc(span), *peer_desc = NULL;
	size_t peer_len = 0;
	char w1[96], w2[96];
	const void *desc;
	size_t desc_len;
	doca_error_t err;
	int r, rc = -1;

	if (before == NULL)
		return failf(p, "out of memory");
	memcpy(before, p->mem, span);
	err = doca_rdma_export(p->rdma, &desc, &desc_len, &p->hconn);
	if (err != DOCA_SUCCESS) {
		failf(p, "doca_rdma_export of the hostile peer's connection returned %s", doca_error_get_name(err));
		goto out;
	}
	r = write_file(p, "hostile.target.conn", desc, desc_len);
	if (r != 0) {
		failf(p, "writing hostile.target.conn: %s", strerror(-r));
		goto out;
	}
	if (hostile_wait_file(p, "hostile.conn", PEER_WAIT_S, &peer_desc, &peer_len) != 0)
		goto out;
	err = doca_rdma_connect(p->rdma, peer_desc, peer_len, p->hconn);
	if (err != DOCA_SUCCESS) {
		failf(p, "doca_rdma_connect with the hostile peer's %zu-byte descriptor returned %s", peer_len,
		      doca_error_get_name(err));
		goto out;
	}
	if (hostile_wait_file(p, "hostile.done", SERVE_WAIT_S, NULL, NULL) != 0)
		goto out;
	/* With --serve block the callbacks wait for progress: let them in. */
	for (int i = 0; i < 1000 && doca_pe_progress(p->pe) != 0; i++)
		;
	for (size_t i = 0; i < span; i++) {
		if (p->mem[i] != before[i]) {
			if (bad++ == 0)
				first = i;
			last = i;
		}
	}
	hostile_where(p, first, w1, sizeof(w1));
	hostile_where(p, last, w2, sizeof(w2));
	if (p->hestablished != 0)
		failf(p, "the hostile peer's connection: %d established callback(s), expected none (export/connect; "
			 "DOCA calls it for RDMA CM connections only)",
		      p->hestablished);
	else if (p->hfailed != 0 || p->hdisconnected != 0)
		failf(p, "the hostile peer's connection %s while it ran (a forged message must not close it)",
		      p->hfailed ? "failed" : "was disconnected");
	else if (p->requests != 0)
		failf(p, "%d connection request callback(s) during the hostile phase, expected none", p->requests);
	else if (bad != 0)
		failf(p, "%zu byte(s) changed while the hostile peer ran, the first at %s, the last at %s", bad, w1,
		      w2);
	else
		rc = 0;
	if (rc == 0)
		printf("PASS %s: hostile phase: the %zu-byte region and both %u-byte canaries unchanged byte for byte; "
		       "the hostile connection never closed, no established callback (export/connect)\n",
		       p->tag, p->region_len, CANARY_LEN);
out:
	(void)write_file(p, "hostile.checked", rc == 0 ? "ok" : "failed", rc == 0 ? 2 : 6);
	free(peer_desc);
	free(before);
	return rc;
}

static int target_main(struct peer *p)
{
	char path[PATH_MAX];
	const void *desc;
	size_t desc_len;
	int r;

	path_of(p, "target.fifo", path, sizeof(path));
	unlink(path);
	if (mkfifo(path, 0600) != 0)
		return failf(p, "mkfifo %s: %s", path, strerror(errno));
	/* Read-write, so the fifo never reports end-of-file. */
	p->fifo = open(path, O_RDWR | O_NONBLOCK);
	if (p->fifo < 0)
		return failf(p, "open %s: %s", path, strerror(errno));

	if (setup(p) != 0)
		return -1;
	target_fill(p);
	p->recv_bufs = calloc(p->count + 1, sizeof(*p->recv_bufs));
	if (p->recv_bufs == NULL)
		return failf(p, "out of memory");
	if ((p->cs->flags & C_TWO_SIDED) && post_target_receives(p) != 0)
		return -1;
	if (p->cs->flags & C_EXPORT) {
		CHECK(p, doca_mmap_export_rdma(p->lmmap, p->dev, &desc, &desc_len));
		r = write_file(p, "target.mmap", desc, desc_len);
		if (r != 0)
			return failf(p, "writing target.mmap: %s", strerror(-r));
	}
	if (p->cs->flags & C_PROBE) {
		/* A separate small buffer, exported with RDMA_WRITE as well:
		 * only its descriptor is used, to find the permission word. */
		p->probe_mem = calloc(1, 4096);
		if (p->probe_mem == NULL)
			return failf(p, "out of memory");
		CHECK(p, doca_mmap_create(&p->probe_mmap));
		CHECK(p, doca_mmap_set_memrange(p->probe_mmap, p->probe_mem, 4096));
		CHECK(p, doca_mmap_set_permissions(p->probe_mmap, p->cs->mmap_perms | PERM_WR));
		CHECK(p, doca_mmap_add_dev(p->probe_mmap, p->dev));
		CHECK(p, doca_mmap_start(p->probe_mmap));
		CHECK(p, doca_mmap_export_rdma(p->probe_mmap, p->dev, &desc, &desc_len));
		r = write_file(p, "target.probe", desc, desc_len);
		if (r != 0)
			return failf(p, "writing target.probe: %s", strerror(-r));
	}
	if (p->hostile && hostile_phase(p) != 0)
		return -1;
	if (connect_peer(p) != 0)
		return -1;
	if (target_serve(p) != 0)
		return -1;
	if (((p->cs->flags & C_TWO_SIDED) ? p->cs->check(p) : check_peer_written(p)) != 0 || check_canaries(p) != 0)
		return -1;
	printf("PASS %s: memory and canaries as expected%s\n", p->tag,
	       p->serve == SERVE_BLOCK ? " (served without progress)" : "");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Initiator                                                            */

static int initiator_main(struct peer *p)
{
	char path[PATH_MAX];
	uint8_t *mdesc = NULL;
	size_t mlen = 0;
	void *addr = NULL;
	size_t len = 0;
	doca_error_t err;

	if (setup(p) != 0 || connect_peer(p) != 0)
		return -1;
	path_of(p, "target.fifo", path, sizeof(path));
	p->fifo = open(path, O_WRONLY | O_NONBLOCK);
	if (p->fifo < 0)
		return failf(p, "open %s: %s", path, strerror(errno));
	if (p->cs->flags & C_EXPORT) {
		if (wait_file(p, "target.mmap", &mdesc, &mlen) != 0)
			return -1;
		err = doca_mmap_create_from_export(NULL, mdesc, mlen, p->dev, &p->rmmap);
		if (err != DOCA_SUCCESS) {
			free(mdesc);
			return failf(p, "doca_mmap_create_from_export(%zu bytes) returned %s", mlen,
				     doca_error_get_name(err));
		}
		p->rmmap_desc = mdesc; /* freed at exit */
		p->rmmap_desc_len = mlen;
		CHECK(p, doca_mmap_get_memrange(p->rmmap, &addr, &len));
		if (len != p->region_len)
			return failf(p, "remote mmap length %zu, expected %zu", len, p->region_len);
		p->raddr = addr;
		p->rlen = len;
	}
	/* No waiting for the connection: the case's first task waits for it. */
	return p->cs->run(p);
}

/* ------------------------------------------------------------------ */
/* Cases                                                                */

#define ALL_RDMA (PERM_LRW | PERM_RD | PERM_WR | PERM_AT)

static const struct case_def cases[] = {
	{"send", C_TWO_SIDED, PERM_LRW, ALL_RDMA, 4096, 1, run_send, check_send},
	{"send_imm", C_TWO_SIDED, PERM_LRW, ALL_RDMA, 4096, 1, run_send_imm, check_send_imm},
	{"write", C_EXPORT, PERM_LRW | PERM_WR, ALL_RDMA, 4096, 1, run_write, check_all_b},
	{"write_imm", C_EXPORT | C_TWO_SIDED, PERM_LRW | PERM_WR, ALL_RDMA, 4096, 1, run_write_imm,
	 check_write_imm},
	{"read", C_EXPORT, PERM_LRW | PERM_RD, ALL_RDMA, 4096, 1, run_read, check_all_a},
	{"write_overlap", C_EXPORT, PERM_LRW | PERM_WR, ALL_RDMA, 262144, 24, run_write, check_write_overlap},
	{"cas", C_EXPORT | C_ATOMIC, PERM_LRW | PERM_AT, ALL_RDMA, 8, 1, run_cas, check_cas},
	{"fadd", C_EXPORT | C_ATOMIC, PERM_LRW | PERM_AT, ALL_RDMA, 8, 1, run_fadd, check_fadd},
	{"write_noperm", C_EXPORT | C_PROBE, PERM_LRW | PERM_RD, ALL_RDMA, 4096, 1, run_write_noperm, check_all_a},
	{"read_noperm", C_EXPORT, PERM_LRW | PERM_WR, ALL_RDMA, 4096, 1, run_read_noperm, check_slice0_b},
	{"ctxperm", C_EXPORT, PERM_LRW | PERM_RD | PERM_WR, PERM_LRW | PERM_RD, 4096, 1, run_ctxperm, check_all_a},
	{"oob", C_EXPORT, PERM_LRW | PERM_RD | PERM_WR, ALL_RDMA, 4096, 1, run_oob, check_slice0_b},
	{"atomic_misaligned", C_EXPORT | C_ATOMIC, PERM_LRW | PERM_AT, ALL_RDMA, 8, 4, run_atomic_misaligned,
	 check_misaligned},
	{"revoked", C_EXPORT | C_REVOKE, PERM_LRW | PERM_RD | PERM_WR, ALL_RDMA, 4096, 1, run_revoked,
	 check_slice0_b},
	{"recv_small", C_TWO_SIDED, PERM_LRW, ALL_RDMA, 4096, 1, run_recv_small, check_recv_small},
	{"peer_kill", C_EXPORT | C_KILL, PERM_LRW | PERM_WR, ALL_RDMA, 4096, 8, run_peer_kill,
	 check_all_a},
	{"peer_kill_write", C_EXPORT | C_KILL, PERM_LRW | PERM_WR, ALL_RDMA, 4u << 20, 16, run_peer_kill_rdma,
	 check_all_a},
	{"peer_kill_read", C_EXPORT | C_KILL, PERM_LRW | PERM_RD, ALL_RDMA, 4u << 20, 16, run_peer_kill_rdma,
	 check_all_a},
	{"forged_pid_dead", C_EXPORT, PERM_LRW | PERM_WR, ALL_RDMA, 4096, 8, run_forged_dead, check_all_a},
	{"forged_pid_alive", C_EXPORT, PERM_LRW | PERM_WR, ALL_RDMA, 4096, 8, run_forged_alive, check_all_b},
};

static const struct case_def *find_case(const char *name)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdma_peer --role target|initiator --dir DIR --case NAME [--size N] [--count K]\n"
		   "                 [--device IBDEV] [--serve progress|block] [--wait spin|notify]\n"
		   "                 [--hostile] [--peer-desc NAME] [--kill-pid PID]\n"
		   "cases:");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fprintf(f, " %s", cases[i].name);
	fprintf(f, "\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end != '\0')
		return -1;
	*out = (size_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"role", required_argument, NULL, 'r'},   {"dir", required_argument, NULL, 'd'},
		{"case", required_argument, NULL, 'c'},   {"size", required_argument, NULL, 's'},
		{"count", required_argument, NULL, 'n'},  {"device", required_argument, NULL, 'D'},
		{"serve", required_argument, NULL, 'S'},  {"wait", required_argument, NULL, 'w'},
		{"hostile", no_argument, NULL, 'H'},    {"help", no_argument, NULL, 'h'},
		{"peer-desc", required_argument, NULL, 'P'}, {"kill-pid", required_argument, NULL, 'K'},
		{NULL, 0, NULL, 0},
	};
	struct peer p = {.fifo = -1, .device = "soft_lo", .serve = SERVE_PROGRESS, .state = DOCA_CTX_STATE_IDLE};
	struct doca_log_backend *sdk_log = NULL;
	const char *role = NULL, *case_name = NULL;
	size_t size = SIZE_MAX, count = 0;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			role = optarg;
			break;
		case 'd':
			p.dir = optarg;
			break;
		case 'c':
			case_name = optarg;
			break;
		case 's':
			if (parse_size(optarg, &size) != 0) {
				fprintf(stderr, "bad --size %s\n", optarg);
				return 2;
			}
			break;
		case 'n':
			if (parse_size(optarg, &count) != 0 || count == 0 || count > 4096) {
				fprintf(stderr, "bad --count %s (1..4096)\n", optarg);
				return 2;
			}
			break;
		case 'D':
			p.device = optarg;
			break;
		case 'S':
			if (strcmp(optarg, "progress") == 0)
				p.serve = SERVE_PROGRESS;
			else if (strcmp(optarg, "block") == 0)
				p.serve = SERVE_BLOCK;
			else {
				fprintf(stderr, "bad --serve %s\n", optarg);
				return 2;
			}
			break;
		case 'w':
			if (strcmp(optarg, "spin") == 0)
				p.notify = false;
			else if (strcmp(optarg, "notify") == 0)
				p.notify = true;
			else {
				fprintf(stderr, "bad --wait %s\n", optarg);
				return 2;
			}
			break;
		case 'H':
			p.hostile = true;
			break;
		case 'P':
			if (strchr(optarg, '/') != NULL) {
				fprintf(stderr, "bad --peer-desc %s (a file name in DIR)\n", optarg);
				return 2;
			}
			p.peer_desc = optarg;
			break;
		case 'K': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end != '\0' || v <= 1 || v > INT32_MAX) {
				fprintf(stderr, "bad --kill-pid %s\n", optarg);
				return 2;
			}
			p.kill_pid = (pid_t)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (role == NULL || p.dir == NULL || case_name == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (strcmp(role, "target") == 0)
		p.role = ROLE_TARGET;
	else if (strcmp(role, "initiator") == 0)
		p.role = ROLE_INITIATOR;
	else {
		fprintf(stderr, "bad --role %s\n", role);
		return 2;
	}
	p.cs = find_case(case_name);
	if (p.cs == NULL) {
		fprintf(stderr, "unknown case %s\n", case_name);
		usage(stderr);
		return 2;
	}
	p.size = size == SIZE_MAX ? p.cs->def_size : size;
	p.count = count == 0 ? p.cs->def_count : (uint32_t)count;
	if ((p.cs->flags & C_ATOMIC) && p.size != 8) {
		fprintf(stderr, "atomic cases work on 8 bytes (--size 8)\n");
		return 2;
	}
	if (p.size == 0 && strcmp(case_name, "send") != 0 && strcmp(case_name, "send_imm") != 0) {
		fprintf(stderr, "--size 0 applies to send and send_imm only\n");
		return 2;
	}
	if (p.serve == SERVE_BLOCK && (p.cs->flags & C_TWO_SIDED)) {
		fprintf(stderr, "--serve block needs a one-sided case (receives complete only in progress)\n");
		return 2;
	}
	if (p.hostile && (p.role != ROLE_TARGET || !(p.cs->flags & C_EXPORT) ||
			  (p.cs->flags & (C_TWO_SIDED | C_KILL | C_REVOKE)))) {
		fprintf(stderr, "--hostile is for the target of a one-sided case without kill or revoke\n");
		return 2;
	}
	if ((uint64_t)p.size * p.count > (1ull << 30)) {
		fprintf(stderr, "size x count over 1 GiB\n");
		return 2;
	}
	snprintf(p.tag, sizeof(p.tag), "%s %s size=%zu count=%u serve=%s%s", role, case_name, p.size, p.count,
		 p.serve == SERVE_BLOCK ? "block" : "progress", p.notify ? " wait=notify" : "");
	if (p.hostile)
		snprintf(p.tag + strlen(p.tag), sizeof(p.tag) - strlen(p.tag), " hostile");
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Library messages at WARNING and above go to stderr. */
	if (doca_log_backend_create_with_file_sdk(stderr, &sdk_log) == DOCA_SUCCESS)
		(void)doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);

	rc = p.role == ROLE_TARGET ? target_main(&p) : initiator_main(&p);
	if (p.role == ROLE_INITIATOR)
		tell_target(&p, rc == 0 ? 'D' : 'F');
	if (teardown(&p) != 0)
		rc = -1;
	if (p.fifo >= 0)
		close(p.fifo);
	free((void *)p.rmmap_desc);
	free(p.recs);
	free(p.bufs);
	free(p.recv_bufs);
	free(p.mem);
	return rc == 0 ? 0 : 1;
}
