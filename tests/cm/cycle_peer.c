/*
 * cycle_peer — many RDMA CM connect/transfer/disconnect cycles against one
 * long-lived server, and what they cost each side's process.
 *
 *   cycle_peer --role server|client --dir DIR [--cycles N] [--warmup W]
 *              [--size BYTES] [--rss-bound-kib KIB] [--watchdog S]
 *              [--device IBDEV]
 *
 * Both roles speak only the public DOCA API. The server keeps one PE and
 * one doca_rdma context for the whole run and serves one client connection
 * after another: request callback -> accept; its receive (posted before it
 * says it is ready) takes the client's message, checked byte for byte;
 * disconnection callback -> doca_rdma_connection_disconnect. The client is
 * one process that runs N cycles, each with a fresh PE and doca_rdma
 * context (a new engine worker, as a new client process would have; the
 * device, its mmap and buffer stay): start, connect_to_addr, one send,
 * disconnect, stop, destroy.
 *
 * Each side snapshots its own process after cycle W (the warm-up: pools and
 * caches have grown to their working size) and after cycle N: RSS
 * (/proc/self/statm), lines of /proc/self/maps, SysV shared-memory mappings
 * in it, open fds (/proc/self/fd). Maps, SysV mappings and fds must not
 * grow at all (the last snapshot waits up to SETTLE_S for what the library
 * releases asynchronously to come back); RSS by at most --rss-bound-kib (default 512 KiB over the
 * N - W cycles: less than one 4 KiB page a cycle over 180 cycles, so a leak
 * of a page or more a cycle fails, while allocator noise of a few pages
 * overall passes; measured: 30-100 KiB on TCP, 0-50 KiB for an shm
 * client). Under AddressSanitizer only SysV mappings and fds are judged.
 * The server also counts, from /proc/sysvipc/shm (what `ipcs -m` reads),
 * the SysV segments the client process created that still exist: every
 * one belongs to a destroyed client context. Heap in use (mallinfo2) is
 * printed, not judged.
 *
 * The two processes step through each cycle by files in DIR (written under
 * a temporary name and renamed): server.port (the listening port), ready
 * (the cycle the server is ready for: its receive is posted), client.done
 * ("CYCLE PID": the client's context of that cycle is destroyed; only then
 * does the server take a snapshot, so both snapshots see the same phase),
 * FAILED (any failure; the other side stops waiting). Every wait is
 * bounded and names what it waited for; a library call that blocks is
 * named by an alarm (--watchdog, default 100 s for the whole run).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

#define FILE_WAIT_S 20.0    /* the peer's next file */
#define CONNECT_WAIT_S 15.0 /* the established callback */
#define TASK_WAIT_S 15.0    /* one completion */
#define CYCLE_WAIT_S 30.0   /* server: one client from ready to disconnection */
#define STOP_WAIT_S 10.0    /* doca_ctx_stop reaching IDLE */
#define SETTLE_S 3.0	    /* the last snapshot: released resources back by then */
#define POLL_MS 2	    /* sleep on the PE's handle (or a file) between checks */
/* Connection slots of the server: one is live at a time; the slack covers
 * a slot freed a little after its disconnection callback, while a slot
 * that is never freed fails within a few cycles. */
#define SERVER_MAX_CONNS 4u
#define MAGIC 0xC7C1E5EDu

/* AddressSanitizer's quarantine and shadow memory, and ThreadSanitizer's
 * shadow and history, grow RSS and mappings on their own: under either
 * only SysV mappings and fds are judged. */
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

/* ------------------------------------------------------------------ */
/* Types                                                                */

enum role { ROLE_SERVER, ROLE_CLIENT };

/* One snapshot of this process. */
struct usage {
	long rss_kib;
	long maps;
	long sysv;
	long fds;
	long heap_b; /* bytes malloc has handed out and not got back; -1 unknown */
};

struct peer {
	/* Options. */
	enum role role;
	const char *dir;
	const char *device;
	uint32_t cycles;
	uint32_t warmup;
	size_t size;
	long rss_bound_kib;
	unsigned int watchdog_s;

	/* Kept for the whole run. */
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *buf; /* server: receive destination; client: send source */
	uint8_t *mem;
	size_t mem_len;
	uint16_t port;

	/* Server: for the whole run; client: one cycle's. */
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	enum doca_ctx_states state;

	/* This cycle. */
	uint32_t cycle;
	struct doca_rdma_connection *conn;
	int requests; /* server: for the whole run */
	int established, failed, disconnected;
	bool task_done;
	doca_error_t task_status;
	enum doca_rdma_opcode opcode;
	uint32_t recv_len;
	const struct doca_rdma_connection *recv_conn;

	/* Snapshots: after the warm-up cycle and after the last. */
	struct usage before, after;
	long seg_before, seg_after; /* server: the client's SysV segments alive */
	long client_pid;
	double t_start, t_warm, t_end;

	bool failed_once;
	char tag[64];
};

/* ------------------------------------------------------------------ */
/* Reporting                                                            */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_file(struct peer *p, const char *name, const char *text);

/* Print one FAIL line (the first also writes DIR/FAILED) and return -1. */
__attribute__((format(printf, 2, 3))) static int failf(struct peer *p, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("FAIL %s: cycle %u: %s\n", p->tag, p->cycle, msg);
	fflush(stdout);
	if (!p->failed_once) {
		p->failed_once = true;
		(void)write_file(p, "FAILED", p->tag);
	}
	return -1;
}

__attribute__((format(printf, 2, 3))) static void note(struct peer *p, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("NOTE %s: %s\n", p->tag, msg);
	fflush(stdout);
}

#define CHECK(p, call)                                                                                    \
	do {                                                                                              \
		doca_error_t err_ = (call);                                                               \
		if (err_ != DOCA_SUCCESS)                                                                 \
			return failf((p), "line %d: %s returned %s (%s)", __LINE__, #call,                \
				     doca_error_get_name(err_), doca_error_get_descr(err_));              \
	} while (0)

/* A library call that blocks for ever would only show up as the outer
 * timeout; the alarm names the call we were in. Async-signal-safe only. */
static char watchdog_prefix[160];
static const char *volatile watchdog_step = "the test's own code";

static void watchdog_fire(int sig)
{
	static const char tail[] = " (watchdog)\n";
	const char *step = watchdog_step;

	(void)sig;
	(void)!write(STDOUT_FILENO, watchdog_prefix, strlen(watchdog_prefix));
	(void)!write(STDOUT_FILENO, step, strlen(step));
	(void)!write(STDOUT_FILENO, tail, sizeof(tail) - 1);
	_exit(3);
}

static void watchdog_arm(struct peer *p)
{
	snprintf(watchdog_prefix, sizeof(watchdog_prefix), "FAIL %s: the run did not finish within %u s; in ",
		 p->tag, p->watchdog_s);
	signal(SIGALRM, watchdog_fire);
	alarm(p->watchdog_s);
}

/* ------------------------------------------------------------------ */
/* The message                                                          */

static uint8_t pat_byte(uint32_t cycle, size_t i)
{
	uint64_t x = ((uint64_t)cycle << 32) ^ (i >> 3) ^ 0x9e3779b97f4a7c15ull;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint8_t)(x >> ((i & 7) * 8));
}

/* MAGIC, the cycle, then the cycle's pattern from byte 8. */
static void msg_fill(uint8_t *b, size_t n, uint32_t cycle)
{
	uint32_t hdr[2] = {MAGIC, cycle};

	for (size_t i = 0; i < n; i++)
		b[i] = pat_byte(cycle, i);
	memcpy(b, hdr, sizeof(hdr));
}

static int msg_check(struct peer *p, const uint8_t *b, size_t n, uint32_t cycle)
{
	uint32_t hdr[2];

	memcpy(hdr, b, sizeof(hdr));
	if (hdr[0] != MAGIC || hdr[1] != cycle)
		return failf(p, "message header: magic 0x%08x cycle %u, expected 0x%08x cycle %u", hdr[0], hdr[1],
			     MAGIC, cycle);
	for (size_t i = sizeof(hdr); i < n; i++)
		if (b[i] != pat_byte(cycle, i))
			return failf(p, "message byte %zu is 0x%02x, expected 0x%02x", i, b[i], pat_byte(cycle, i));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Files in DIR                                                         */

static int write_file(struct peer *p, const char *name, const char *text)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	size_t len = strlen(text);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len) {
		int e = errno ? errno : EIO;

		close(fd);
		unlink(tmp);
		return -e;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		int e = errno;

		unlink(tmp);
		return -e;
	}
	return 0;
}

static int publish(struct peer *p, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int publish(struct peer *p, const char *name, const char *fmt, ...)
{
	char text[64];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	r = write_file(p, name, text);
	if (r != 0)
		return failf(p, "writing %s/%s: %s", p->dir, name, strerror(-r));
	return 0;
}

/* The two numbers in file `name` (the second 0 if absent); 1 if the file
 * does not exist yet. */
static int read_nums(struct peer *p, const char *name, long *a, long *b)
{
	char path[PATH_MAX], text[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", p->dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 1 : failf(p, "opening %s: %s", path, strerror(errno));
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return failf(p, "%s is empty or unreadable", path);
	text[n] = '\0';
	*b = 0;
	if (sscanf(text, "%ld %ld", a, b) < 1)
		return failf(p, "%s holds \"%s\", not a number", path, text);
	return 0;
}

static bool peer_failed(const struct peer *p)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/FAILED", p->dir);
	return !p->failed_once && stat(path, &st) == 0;
}

/* ------------------------------------------------------------------ */
/* Progress                                                             */

/* One round of progress; with nothing to do, sleep on the PE's
 * notification handle for at most max_ms (callers re-check their
 * condition and deadline). Without a PE, just wait max_ms. */
static void progress_wait(struct peer *p, int max_ms)
{
	doca_notification_handle_t fd;
	struct pollfd pfd = {.events = POLLIN};
	const char *outer = watchdog_step;

	if (p->pe == NULL) {
		(void)poll(NULL, 0, max_ms);
		return;
	}
	watchdog_step = "doca_pe_progress";
	if (doca_pe_progress(p->pe)) {
		watchdog_step = outer;
		return;
	}
	if (doca_pe_get_notification_handle(p->pe, &fd) != DOCA_SUCCESS ||
	    doca_pe_request_notification(p->pe) != DOCA_SUCCESS) {
		watchdog_step = outer;
		(void)poll(NULL, 0, 1);
		return;
	}
	if (doca_pe_progress(p->pe) == 0) {
		pfd.fd = fd;
		watchdog_step = "poll on the PE's notification handle";
		(void)poll(&pfd, 1, max_ms);
	}
	watchdog_step = outer;
	(void)doca_pe_clear_notification(p->pe, fd);
}

/* Wait (bounded, progressing) until file `name` holds a number >= want;
 * its second number goes to *second if not NULL. */
static int wait_num(struct peer *p, const char *name, long want, long *second)
{
	double deadline = now_s() + FILE_WAIT_S;
	long a = 0, b = 0;

	for (;;) {
		int r = read_nums(p, name, &a, &b);

		if (r < 0)
			return -1;
		if (r == 0 && a >= want) {
			if (second != NULL)
				*second = b;
			return 0;
		}
		if (peer_failed(p))
			return failf(p, "the other process failed while we waited for %s >= %ld", name, want);
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for %s/%s to reach %ld (it says %ld)",
				     FILE_WAIT_S, p->dir, name, want, r == 0 ? a : -1);
		progress_wait(p, POLL_MS);
	}
}

/* ------------------------------------------------------------------ */
/* Resource snapshots                                                   */

static long count_lines(const char *path, const char *containing)
{
	char line[4096];
	long n = 0;
	FILE *f = fopen(path, "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* A line longer than the buffer counts once, at its end. */
		if (strchr(line, '\n') == NULL && !feof(f))
			continue;
		if (containing == NULL || strstr(line, containing) != NULL)
			n++;
	}
	fclose(f);
	return n;
}

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static int usage_take(struct peer *p, struct usage *u)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f == NULL)
		return failf(p, "cannot open /proc/self/statm: %s", strerror(errno));
	if (fscanf(f, "%ld %ld", &size, &resident) != 2) {
		fclose(f);
		return failf(p, "cannot parse /proc/self/statm");
	}
	fclose(f);
	u->rss_kib = resident * (sysconf(_SC_PAGESIZE) / 1024);
	/* Attached SysV segments show as "/SYSV<key> (deleted)" mappings. */
	u->maps = count_lines("/proc/self/maps", NULL);
	u->sysv = count_lines("/proc/self/maps", "/SYSV");
	u->fds = count_fds();
	if (u->maps < 0 || u->sysv < 0 || u->fds < 0)
		return failf(p, "cannot read /proc/self/maps or /proc/self/fd");
	u->heap_b = -1;
#ifdef __GLIBC__
	{
		struct mallinfo2 mi = mallinfo2();

		u->heap_b = (long)(mi.uordblks + mi.hblkhd);
	}
#endif
	return 0;
}

/* SysV segments created by process `pid` that still exist (the source of
 * `ipcs -m`); -1 if the table cannot be read. */
static long segments_of(long pid)
{
	char line[512];
	long n = 0;
	FILE *f = fopen("/proc/sysvipc/shm", "re");

	if (f == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL) { /* the header */
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		long key, id, perms, cpid;
		unsigned long size;

		if (sscanf(line, "%ld %ld %lo %lu %ld", &key, &id, &perms, &size, &cpid) == 5 && cpid == pid)
			n++;
	}
	fclose(f);
	return n;
}

static void usage_print(struct peer *p, const char *when, uint32_t cycle, const struct usage *u)
{
	note(p, "%s (after cycle %u): RSS %ld KiB, %ld mappings, %ld SysV mappings, %ld fds, heap in use %ld B",
	     when, cycle, u->rss_kib, u->maps, u->sysv, u->fds, u->heap_b);
}

/* Both snapshots, the growth per cycle, and the verdict. */
static int usage_judge(struct peer *p)
{
	const struct usage *a = &p->before, *b = &p->after;
	double n = (double)(p->cycles - p->warmup);
	long drss = b->rss_kib - a->rss_kib, dmaps = b->maps - a->maps, dsysv = b->sysv - a->sysv;
	long dfds = b->fds - a->fds;
	int bad = 0;

	note(p, "growth over %.0f cycles: RSS %+ld KiB (%+.0f B/cycle), mappings %+ld (%+.2f/cycle), SysV mappings "
		"%+ld (%+.2f/cycle), fds %+ld (%+.2f/cycle)",
	     n, drss, drss * 1024.0 / n, dmaps, dmaps / n, dsysv, dsysv / n, dfds, dfds / n);
	if (p->role == ROLE_SERVER && p->seg_before >= 0)
		note(p, "SysV segments the client process created that still exist (/proc/sysvipc/shm, as ipcs -m "
			"shows): %ld after cycle %u, %ld after cycle %u",
		     p->seg_before, p->warmup, p->seg_after, p->cycles);
	if (a->heap_b >= 0)
		note(p, "heap in use (malloc's count, not judged): %+ld B (%+.0f B/cycle)", b->heap_b - a->heap_b,
		     (double)(b->heap_b - a->heap_b) / n);
	note(p, "%u cycles in %.2f s (%.1f ms a cycle after the warm-up)", p->cycles, p->t_end - p->t_start,
	     (p->t_end - p->t_warm) * 1e3 / n);
	if (UNDER_SANITIZER)
		note(p, "built with a sanitizer: RSS and mappings not judged (its own memory grows them)");
	if (dmaps > 0 && !UNDER_SANITIZER)
		bad |= failf(p, "mappings grew by %ld over %.0f cycles", dmaps, n);
	if (dsysv > 0)
		bad |= failf(p, "SysV shared-memory mappings grew by %ld over %.0f cycles (departed peers' segments "
				"still attached)",
			     dsysv, n);
	if (dfds > 0)
		bad |= failf(p, "open fds grew by %ld over %.0f cycles", dfds, n);
	if (drss > p->rss_bound_kib && !UNDER_SANITIZER)
		bad |= failf(p, "RSS grew by %ld KiB over %.0f cycles, more than the bound of %ld KiB", drss, n,
			     p->rss_bound_kib);
	return bad ? -1 : 0;
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

/* The task of this cycle: its user data is the cycle number. */
static void task_note(struct peer *p, struct doca_task *task, union doca_data task_ud, bool ok_cb)
{
	doca_error_t status = doca_task_get_status(task);

	if (task_ud.u64 != p->cycle || p->task_done) {
		failf(p, "completion for task 0x%" PRIx64 " (%s), not this cycle's pending task", task_ud.u64,
		      doca_error_get_name(status));
		return;
	}
	if (ok_cb != (status == DOCA_SUCCESS))
		failf(p, "%s callback with status %s", ok_cb ? "success" : "error", doca_error_get_name(status));
	p->task_done = true;
	p->task_status = status;
}

static void send_ok_cb(struct doca_rdma_task_send *t, union doca_data u, union doca_data c)
{
	task_note(c.ptr, doca_rdma_task_send_as_task(t), u, true);
	doca_task_free(doca_rdma_task_send_as_task(t));
}

static void send_err_cb(struct doca_rdma_task_send *t, union doca_data u, union doca_data c)
{
	task_note(c.ptr, doca_rdma_task_send_as_task(t), u, false);
	doca_task_free(doca_rdma_task_send_as_task(t));
}

static void receive_ok_cb(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	struct peer *p = c.ptr;

	p->opcode = doca_rdma_task_receive_get_result_opcode(t);
	p->recv_len = doca_rdma_task_receive_get_result_len(t);
	p->recv_conn = doca_rdma_task_receive_get_result_rdma_connection(t);
	task_note(p, doca_rdma_task_receive_as_task(t), u, true);
	doca_task_free(doca_rdma_task_receive_as_task(t));
}

static void receive_err_cb(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	task_note(c.ptr, doca_rdma_task_receive_as_task(t), u, false);
	doca_task_free(doca_rdma_task_receive_as_task(t));
}

/* A connection event must be about this cycle's connection. */
static bool is_current(struct peer *p, struct doca_rdma_connection *conn, union doca_data conn_ud, const char *what)
{
	if (conn == p->conn && conn_ud.u64 == p->cycle)
		return true;
	failf(p, "%s for connection %p with user data %" PRIu64 "; this cycle's is %p with %u", what, (void *)conn,
	      conn_ud.u64, (void *)p->conn, p->cycle);
	return false;
}

static void server_request_cb(struct doca_rdma_connection *conn, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;
	union doca_data u = {.u64 = p->cycle};
	doca_error_t err;

	p->requests++;
	if (p->conn != NULL) {
		failf(p, "a second connection request (#%d) while cycle %u's connection is open; rejecting",
		      p->requests, p->cycle);
		(void)doca_rdma_connection_reject(conn);
		return;
	}
	err = doca_rdma_connection_accept(conn, NULL, 0);
	if (err != DOCA_SUCCESS) {
		failf(p, "doca_rdma_connection_accept returned %s", doca_error_get_name(err));
		return;
	}
	p->conn = conn;
	err = doca_rdma_connection_set_user_data(conn, u);
	if (err != DOCA_SUCCESS)
		failf(p, "doca_rdma_connection_set_user_data returned %s", doca_error_get_name(err));
}

static void established_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;

	if (p->role == ROLE_CLIENT && p->conn == NULL && conn_ud.u64 == p->cycle)
		p->conn = conn; /* the client learns its connection here */
	if (is_current(p, conn, conn_ud, "established callback"))
		p->established++;
}

static void failure_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;

	p->failed++;
	failf(p, "failure callback for connection %p (user data %" PRIu64 ")", (void *)conn, conn_ud.u64);
}

static void disconnect_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;
	doca_error_t err;

	if (!is_current(p, conn, conn_ud, "disconnection callback"))
		return;
	p->disconnected++;
	if (p->role != ROLE_SERVER)
		return;
	/* As DOCA's samples do: disconnect in the disconnection callback. */
	err = doca_rdma_connection_disconnect(conn);
	if (err != DOCA_SUCCESS)
		failf(p, "doca_rdma_connection_disconnect in the disconnection callback returned %s",
		      doca_error_get_name(err));
}

/* ------------------------------------------------------------------ */
/* Setup and teardown                                                   */

static int open_device(struct peer *p)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t err = DOCA_ERROR_NOT_FOUND;

	CHECK(p, doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, p->device) == 0) {
			err = doca_dev_open(list[i], &p->dev);
			break;
		}
	}
	doca_devinfo_destroy_list(list);
	if (err != DOCA_SUCCESS)
		return failf(p, "cannot open device %s: %s", p->device, doca_error_get_name(err));
	return 0;
}

/* The device, one page-aligned message buffer, its mmap and doca_buf. */
static int setup_memory(struct peer *p)
{
	if (open_device(p) != 0)
		return -1;
	p->mem_len = (p->size + 4095) & ~(size_t)4095;
	p->mem = aligned_alloc(4096, p->mem_len);
	if (p->mem == NULL)
		return failf(p, "cannot allocate %zu bytes", p->mem_len);
	memset(p->mem, 0, p->mem_len);
	CHECK(p, doca_mmap_create(&p->mmap));
	CHECK(p, doca_mmap_set_memrange(p->mmap, p->mem, p->mem_len));
	CHECK(p, doca_mmap_set_permissions(p->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(p, doca_mmap_add_dev(p->mmap, p->dev));
	CHECK(p, doca_mmap_start(p->mmap));
	CHECK(p, doca_buf_inventory_create(4, &p->inv));
	CHECK(p, doca_buf_inventory_start(p->inv));
	CHECK(p, doca_buf_inventory_buf_get_by_args(p->inv, p->mmap, p->mem, p->size, p->mem,
						    p->role == ROLE_CLIENT ? p->size : 0, &p->buf));
	return 0;
}

/* A PE and a started doca_rdma context on it. */
static int ctx_create(struct peer *p)
{
	union doca_data cud = {.ptr = p};
	doca_error_t err;

	CHECK(p, doca_pe_create(&p->pe));
	CHECK(p, doca_rdma_create(p->dev, &p->rdma));
	p->ctx = doca_rdma_as_ctx(p->rdma);
	if (p->ctx == NULL)
		return failf(p, "doca_rdma_as_ctx returned NULL");
	CHECK(p, doca_rdma_set_permissions(p->rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(p, doca_rdma_set_max_num_connections(p->rdma, p->role == ROLE_SERVER ? SERVER_MAX_CONNS : 1));
	CHECK(p, doca_rdma_task_receive_set_conf(p->rdma, receive_ok_cb, receive_err_cb, 4));
	CHECK(p, doca_rdma_task_send_set_conf(p->rdma, send_ok_cb, send_err_cb, 4));
	CHECK(p, doca_rdma_set_connection_state_callbacks(p->rdma, p->role == ROLE_SERVER ? server_request_cb : NULL,
							  established_cb, failure_cb, disconnect_cb));
	CHECK(p, doca_ctx_set_user_data(p->ctx, cud));
	CHECK(p, doca_ctx_set_state_changed_cb(p->ctx, state_cb));
	CHECK(p, doca_pe_connect_ctx(p->pe, p->ctx));
	watchdog_step = "doca_ctx_start";
	err = doca_ctx_start(p->ctx);
	watchdog_step = "the test's own code";
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		return failf(p, "doca_ctx_start returned %s", doca_error_get_name(err));
	for (double deadline = now_s() + STOP_WAIT_S; p->state != DOCA_CTX_STATE_RUNNING;) {
		if (now_s() > deadline)
			return failf(p, "the context did not reach RUNNING within %.0f s", STOP_WAIT_S);
		progress_wait(p, POLL_MS);
	}
	return 0;
}

/* Stop the context (bounded), destroy it and its PE. */
static int ctx_destroy(struct peer *p)
{
	int rc = 0;
	doca_error_t err;

	if (p->ctx != NULL && p->state != DOCA_CTX_STATE_IDLE) {
		watchdog_step = "doca_ctx_stop";
		err = doca_ctx_stop(p->ctx);
		watchdog_step = "the test's own code";
		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
			return failf(p, "doca_ctx_stop returned %s", doca_error_get_name(err));
		for (double deadline = now_s() + STOP_WAIT_S; p->state != DOCA_CTX_STATE_IDLE;) {
			if (now_s() > deadline)
				return failf(p, "the context did not reach IDLE within %.0f s of doca_ctx_stop",
					     STOP_WAIT_S);
			progress_wait(p, POLL_MS);
		}
	}
	watchdog_step = "doca_rdma_destroy";
	if (p->rdma != NULL && (err = doca_rdma_destroy(p->rdma)) != DOCA_SUCCESS)
		rc = failf(p, "doca_rdma_destroy returned %s", doca_error_get_name(err));
	watchdog_step = "doca_pe_destroy";
	if (p->pe != NULL && (err = doca_pe_destroy(p->pe)) != DOCA_SUCCESS)
		rc = failf(p, "doca_pe_destroy returned %s", doca_error_get_name(err));
	watchdog_step = "the test's own code";
	p->rdma = NULL;
	p->ctx = NULL;
	p->pe = NULL;
	return rc;
}

static int teardown_memory(struct peer *p)
{
	int rc = 0;
	doca_error_t err;

#define TD(call)                                                                                          \
	do {                                                                                              \
		watchdog_step = #call;                                                                    \
		err = (call);                                                                             \
		if (err != DOCA_SUCCESS)                                                                  \
			rc = failf(p, "teardown: %s returned %s", #call, doca_error_get_name(err));       \
	} while (0)
	if (p->buf != NULL)
		TD(doca_buf_dec_refcount(p->buf, NULL));
	if (p->inv != NULL) {
		TD(doca_buf_inventory_stop(p->inv));
		TD(doca_buf_inventory_destroy(p->inv));
	}
	if (p->mmap != NULL) {
		TD(doca_mmap_stop(p->mmap));
		TD(doca_mmap_destroy(p->mmap));
	}
	if (p->dev != NULL)
		TD(doca_dev_close(p->dev));
#undef TD
	watchdog_step = "the test's own code";
	free(p->mem);
	return rc;
}

static void cycle_reset(struct peer *p, uint32_t cycle)
{
	p->cycle = cycle;
	p->conn = NULL;
	p->established = p->failed = p->disconnected = 0;
	p->task_done = false;
	p->task_status = DOCA_SUCCESS;
	p->recv_conn = NULL;
	p->recv_len = 0;
}

/* No more mappings, SysV mappings or fds than at the warm-up. */
static bool usage_flat(const struct usage *now, const struct usage *base)
{
	return now->maps <= base->maps && now->sysv <= base->sysv && now->fds <= base->fds;
}

/* Under a sanitizer everything runs several times slower, UCX's retries of
 * a connect to a peer that has gone (seen under TSan over TCP) included:
 * the bounded wait is longer there; a leak still never settles. */
static double settle_s(void)
{
	return UNDER_SANITIZER ? 5 * SETTLE_S : SETTLE_S;
}

/* The last snapshot. A connection's sockets and mappings may be released a
 * little after the cycle ends (UCX closes endpoints asynchronously; seen:
 * one TCP socket still open at the snapshot under load), so wait (bounded,
 * progressing) for the counts to come back; a leak never does. */
static int snapshot_last(struct peer *p)
{
	double t0 = now_s();

	for (;;) {
		if (usage_take(p, &p->after) != 0)
			return -1;
		if (usage_flat(&p->after, &p->before) || now_s() > t0 + settle_s())
			break;
		progress_wait(p, POLL_MS);
	}
	if (now_s() - t0 > 0.001)
		note(p, "after the last cycle: %s after %.0f ms", usage_flat(&p->after, &p->before) ? "settled" :
		     "still grown", (now_s() - t0) * 1e3);
	return 0;
}

/* After the warm-up cycle and the last, note where we stand (and every 50
 * cycles in between, as a trace). */
static int maybe_snapshot(struct peer *p, uint32_t cycle)
{
	struct usage mid, *u = &mid;
	const char *what = "trace";

	if (cycle == p->warmup) {
		p->t_warm = now_s();
		u = &p->before;
		what = "warm-up";
	} else if (cycle == p->cycles) {
		p->t_end = now_s();
		u = &p->after;
		what = "last";
	} else if (cycle % 50 != 0) {
		return 0;
	}
	if (p->role == ROLE_SERVER && u != &mid)
		*(u == &p->before ? &p->seg_before : &p->seg_after) = segments_of(p->client_pid);
	if (u == &p->after ? snapshot_last(p) != 0 : usage_take(p, u) != 0)
		return -1;
	usage_print(p, what, cycle, u);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Server                                                               */

static int server_listen(struct peer *p)
{
	uint16_t base = (uint16_t)(20000 + (getpid() * 7) % 30000);
	doca_error_t err = DOCA_ERROR_UNKNOWN;

	for (int i = 0; i < 64 && p->port == 0; i++) {
		uint16_t port = (uint16_t)(base + i * 13);

		err = doca_rdma_start_listen_to_port(p->rdma, port);
		if (err == DOCA_SUCCESS)
			p->port = port;
		else if (err != DOCA_ERROR_IN_USE)
			return failf(p, "doca_rdma_start_listen_to_port(%u) returned %s", port, doca_error_get_name(err));
	}
	if (p->port == 0)
		return failf(p, "no free port to listen on (last error %s)", doca_error_get_name(err));
	return publish(p, "server.port", "%u", p->port);
}

/* Post this cycle's receive into the (cleared) buffer. */
static int server_post_receive(struct peer *p)
{
	struct doca_rdma_task_receive *t = NULL;
	union doca_data u = {.u64 = p->cycle};
	doca_error_t err;

	memset(p->mem, 0, p->mem_len);
	CHECK(p, doca_buf_reset_data_len(p->buf));
	CHECK(p, doca_rdma_task_receive_allocate_init(p->rdma, p->buf, u, &t));
	err = doca_task_submit(doca_rdma_task_receive_as_task(t));
	if (err != DOCA_SUCCESS) {
		doca_task_free(doca_rdma_task_receive_as_task(t));
		return failf(p, "submitting the receive returned %s", doca_error_get_name(err));
	}
	return 0;
}

/* Serve one client: accepted, established, its message received and
 * checked, disconnected. */
static int server_cycle(struct peer *p, uint32_t cycle)
{
	double deadline = now_s() + CYCLE_WAIT_S;

	cycle_reset(p, cycle);
	if (server_post_receive(p) != 0 || publish(p, "ready", "%u", cycle) != 0)
		return -1;
	while (!(p->established && p->task_done && p->disconnected)) {
		if (p->failed_once)
			return -1;
		if (peer_failed(p))
			return failf(p, "the client failed (see its output)");
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s: request %s, established %d, message %s, "
					"disconnection %d",
				     CYCLE_WAIT_S, p->conn ? "accepted" : "not seen", p->established,
				     p->task_done ? "received" : "not received", p->disconnected);
		progress_wait(p, POLL_MS);
	}
	if (p->requests != (int)cycle || p->established != 1 || p->disconnected != 1)
		return failf(p, "%d requests so far, %d established and %d disconnection callbacks this cycle",
			     p->requests, p->established, p->disconnected);
	if (p->task_status != DOCA_SUCCESS)
		return failf(p, "the receive failed with %s", doca_error_get_name(p->task_status));
	if (p->opcode != DOCA_RDMA_OPCODE_RECV_SEND || p->recv_len != p->size || p->recv_conn != p->conn)
		return failf(p, "receive: opcode %d, %u bytes, connection %p; expected a plain send of %zu bytes on %p",
			     (int)p->opcode, p->recv_len, (const void *)p->recv_conn, p->size, (void *)p->conn);
	if (msg_check(p, p->mem, p->size, cycle) != 0)
		return -1;
	/* Snapshots only once the client's context is gone. */
	if (wait_num(p, "client.done", cycle, &p->client_pid) != 0)
		return -1;
	return maybe_snapshot(p, cycle);
}

static int server_main(struct peer *p)
{
	doca_error_t err;
	int rc = -1;

	p->t_start = now_s();
	if (setup_memory(p) != 0 || ctx_create(p) != 0 || server_listen(p) != 0)
		goto out;
	for (uint32_t i = 1; i <= p->cycles; i++)
		if (server_cycle(p, i) != 0)
			goto out;
	err = doca_rdma_stop_listen_to_port(p->rdma, p->port);
	if (err != DOCA_SUCCESS) {
		failf(p, "doca_rdma_stop_listen_to_port returned %s", doca_error_get_name(err));
		goto out;
	}
	rc = usage_judge(p);
out:
	if (ctx_destroy(p) != 0)
		rc = -1;
	if (teardown_memory(p) != 0)
		rc = -1;
	if (rc == 0)
		printf("PASS %s: %u clients served one after another, every message checked byte for byte; "
		       "RSS, mappings, SysV mappings and fds flat after cycle %u\n",
		       p->tag, p->cycles, p->warmup);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Client                                                               */

static int client_connect(struct peer *p)
{
	struct doca_rdma_addr *addr = NULL;
	union doca_data u = {.u64 = p->cycle};
	double deadline;
	doca_error_t err;

	CHECK(p, doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", p->port, &addr));
	err = doca_rdma_connect_to_addr(p->rdma, addr, u);
	(void)doca_rdma_addr_destroy(addr);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_rdma_connect_to_addr(127.0.0.1 port %u) returned %s", p->port,
			     doca_error_get_name(err));
	deadline = now_s() + CONNECT_WAIT_S;
	while (p->established == 0) {
		if (p->failed_once)
			return -1;
		if (peer_failed(p))
			return failf(p, "the server failed while we waited for the connection");
		if (now_s() > deadline)
			return failf(p, "no established callback within %.0f s", CONNECT_WAIT_S);
		progress_wait(p, POLL_MS);
	}
	return 0;
}

static int client_send(struct peer *p)
{
	struct doca_rdma_task_send *t = NULL;
	union doca_data u = {.u64 = p->cycle};
	double deadline;
	doca_error_t err;

	msg_fill(p->mem, p->size, p->cycle);
	CHECK(p, doca_rdma_task_send_allocate_init(p->rdma, p->conn, p->buf, u, &t));
	err = doca_task_submit(doca_rdma_task_send_as_task(t));
	if (err != DOCA_SUCCESS) {
		doca_task_free(doca_rdma_task_send_as_task(t));
		return failf(p, "submitting the send returned %s", doca_error_get_name(err));
	}
	deadline = now_s() + TASK_WAIT_S;
	while (!p->task_done) {
		if (p->failed_once)
			return -1;
		if (now_s() > deadline)
			return failf(p, "the send did not complete within %.0f s", TASK_WAIT_S);
		progress_wait(p, POLL_MS);
	}
	if (p->task_status != DOCA_SUCCESS)
		return failf(p, "the send failed with %s", doca_error_get_name(p->task_status));
	return 0;
}

/* One cycle, as a new client process would run it. */
static int client_cycle(struct peer *p, uint32_t cycle)
{
	doca_error_t err;
	int rc = -1;

	cycle_reset(p, cycle);
	if (ctx_create(p) != 0 || wait_num(p, "ready", cycle, NULL) != 0)
		goto out;
	if (client_connect(p) != 0 || client_send(p) != 0)
		goto out;
	err = doca_rdma_connection_disconnect(p->conn);
	if (err != DOCA_SUCCESS) {
		failf(p, "doca_rdma_connection_disconnect returned %s", doca_error_get_name(err));
		goto out;
	}
	rc = 0;
out:
	if (ctx_destroy(p) != 0)
		rc = -1;
	if (rc == 0 && p->established != 1)
		rc = failf(p, "%d established callbacks", p->established);
	if (rc == 0)
		rc = maybe_snapshot(p, cycle);
	if (rc == 0)
		rc = publish(p, "client.done", "%u %ld", cycle, (long)getpid());
	return rc;
}

static int client_main(struct peer *p)
{
	long port = 0;
	int rc = -1;

	p->t_start = now_s();
	if (setup_memory(p) != 0 || wait_num(p, "server.port", 1, NULL) != 0)
		goto out;
	if (read_nums(p, "server.port", &port, &(long){0}) != 0 || port > 65535)
		goto out;
	p->port = (uint16_t)port;
	for (uint32_t i = 1; i <= p->cycles; i++)
		if (client_cycle(p, i) != 0)
			goto out;
	rc = usage_judge(p);
out:
	if (teardown_memory(p) != 0)
		rc = -1;
	if (rc == 0)
		printf("PASS %s: %u cycles of a fresh context, connect, send, disconnect, destroy; RSS, mappings, "
		       "SysV mappings and fds flat after cycle %u\n",
		       p->tag, p->cycles, p->warmup);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Options                                                              */

static void usage(FILE *f)
{
	fprintf(f, "usage: cycle_peer --role server|client --dir DIR [--cycles N] [--warmup W] [--size BYTES]\n"
		   "                  [--rss-bound-kib KIB] [--watchdog S] [--device IBDEV]\n");
}

static int parse_num(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"role", required_argument, NULL, 'r'},	   {"dir", required_argument, NULL, 'd'},
		{"cycles", required_argument, NULL, 'n'},  {"warmup", required_argument, NULL, 'w'},
		{"size", required_argument, NULL, 's'},	   {"rss-bound-kib", required_argument, NULL, 'b'},
		{"watchdog", required_argument, NULL, 'W'}, {"device", required_argument, NULL, 'D'},
		{"help", no_argument, NULL, 'h'},	   {NULL, 0, NULL, 0},
	};
	struct peer p = {.device = "soft_lo", .cycles = 200, .warmup = 20, .size = 4096, .rss_bound_kib = 512,
			 .watchdog_s = 100, .state = DOCA_CTX_STATE_IDLE, .seg_before = -1, .seg_after = -1};
	struct doca_log_backend *sdk_log = NULL;
	const char *role = NULL;
	unsigned long v;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			role = optarg;
			break;
		case 'd':
			p.dir = optarg;
			break;
		case 'n':
			if (parse_num(optarg, 2, 100000, &v) != 0)
				goto bad;
			p.cycles = (uint32_t)v;
			break;
		case 'w':
			if (parse_num(optarg, 1, 100000, &v) != 0)
				goto bad;
			p.warmup = (uint32_t)v;
			break;
		case 's':
			if (parse_num(optarg, 16, 1u << 20, &v) != 0)
				goto bad;
			p.size = v;
			break;
		case 'b':
			if (parse_num(optarg, 0, 1u << 20, &v) != 0)
				goto bad;
			p.rss_bound_kib = (long)v;
			break;
		case 'W':
			if (parse_num(optarg, 1, 3600, &v) != 0)
				goto bad;
			p.watchdog_s = (unsigned int)v;
			break;
		case 'D':
			p.device = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (role == NULL || p.dir == NULL || optind != argc || p.warmup >= p.cycles)
		goto bad;
	if (strcmp(role, "server") == 0)
		p.role = ROLE_SERVER;
	else if (strcmp(role, "client") == 0)
		p.role = ROLE_CLIENT;
	else
		goto bad;
	snprintf(p.tag, sizeof(p.tag), "%s pid %d", role, (int)getpid());
#ifdef __GLIBC__
	/* glibc raises its mmap threshold the first time a large block is
	 * freed, after which such blocks come from the heap, which does not
	 * shrink: a one-time RSS step of ~650 KiB at a random cycle (seen on
	 * TCP clients between cycles 100 and 250). A fixed threshold keeps
	 * RSS a measure of what is live. */
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Library messages at WARNING and above go to stderr. */
	if (doca_log_backend_create_with_file_sdk(stderr, &sdk_log) == DOCA_SUCCESS)
		(void)doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);

	watchdog_arm(&p);
	rc = p.role == ROLE_SERVER ? server_main(&p) : client_main(&p);
	alarm(0);
	return rc == 0 ? 0 : 1;
bad:
	usage(stderr);
	return 2;
}
