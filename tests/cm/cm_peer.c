/*
 * cm_peer — one process of an RDMA CM (or export/connect) test.
 *
 *   cm_peer --role server --dir DIR --case CASE [--clients N] [--answer POLICY]
 *           [--method cm|export] [--family 4|6] [--peer-addr TEXT]
 *           [--device IBDEV] [--size N] [--count K] [--timeout-ms MS]
 *   cm_peer --role client --dir DIR --case CASE [--addr TEXT] [--family 4|6]
 *           [--method cm|export] [--index I] [--pre LIST] [--after FILE]
 *           [--hold FILE] [--signal FILE] [--device IBDEV] [--size N]
 *           [--count K] [--timeout-ms MS]
 *
 * Both roles speak only the public DOCA API. The server owns a region that
 * it exports as one mmap; each accepted connection gets a slot: its own
 * slice of the region and its own receive traffic. Over every connection
 * the server first sends a message holding the slot number, the slice and
 * the mmap descriptor (the way DOCA's CM samples pass descriptors: a send
 * that the client's posted receive takes). The client then runs its case
 * on its slice, sends DONE, and disconnects; the server checks the slice
 * byte for byte when DONE arrives, and expects the disconnection callback.
 * With RDMA CM (--method cm) the server sends that message once the
 * established callback ran, and the client waits for the callback, exactly
 * one on each side. With export/connect (--method export) there is no
 * established callback (as on hardware: doca_rdma_connect raises no event):
 * the server submits the descriptor message right after doca_rdma_connect,
 * the library holding it until the link is up, and the message arriving
 * (the send completing, on the server) shows the link is up; the callback
 * running on an export/connect connection is a failure.
 * After a connection is closed each side checks that a new task on it
 * fails (at allocate_init, submit or completion: what happened is printed).
 *
 * Cases (the data ones run on any number of clients):
 *   send, send_imm     K tagged messages client -> server; the server
 *                      checks each receive's opcode, length, immediate,
 *                      data, and that it names the sender's connection
 *   write, write_imm   K chunks written into the slice (write_imm also
 *                      consumes K server receives, each checked as above,
 *                      and its chunk must be visible when it completes)
 *   read               K chunks the server filled, read back and compared
 *   cas, fadd          compare-and-swap (matching, then not) and
 *                      fetch-and-add on 8-byte words of the slice
 *   mix                sends, write_imms, reads and fetch-and-adds on one
 *                      counter shared by every client, all in flight at once
 *   kill_server        client: K sends in flight (the server posts no
 *                      receives); the server dies by SIGKILL; every send must
 *                      fail and the failure or disconnection callback fire
 *   kill_client        server: slot 0's client gets K sends it never
 *                      receives and dies by SIGKILL; the server must see
 *                      them fail, survive, and serve slot 1 as a send case
 *   overflow           client only: connecting to a server that already has
 *                      its maximum of connections must fail
 *   server_stop        the client puts K large writes in flight and the
 *                      server, once chunk 0 landed, calls doca_ctx_stop
 *                      (how many had landed is printed): the client must see its
 *                      connection end and every write complete (either
 *                      way), and both sides must get back to IDLE and tear
 *                      down (doca_mmap_stop of the exported region included)
 *   netfail            liveness (one client; the test script breaks the path
 *                      between the processes): the server puts K sends in
 *                      flight, the client K sends (neither side posts a
 *                      receive for them), each says so (server.inflight,
 *                      client.inflight); once the script has broken the path
 *                      (path.broken) the client adds K writes of --size
 *                      bytes; then on each side every task must fail and the
 *                      failure or disconnection callback fire within the
 *                      keepalive timeout (SOFTDOCA_CONN_TIMEOUT_MS, default
 *                      8000 ms) + NOTICE_SLACK_S; the time to notice is
 *                      printed ("noticed after S s")
 *   netfail_idle       the same with no task at all on either side (an idle
 *                      connection must notice too)
 *   bigread            one read of --size bytes (up to 1 GiB) x --count from
 *                      the server's slice, checked word by word: a slow
 *                      transfer of a live peer must succeed, however long
 *                      it takes (bounded by BIGREAD_WAIT_S)
 *
 * Client --pre LIST (comma-separated) makes failing connection attempts on
 * the same context before the real one, each of which must end in the
 * failure callback (never established): refused (a port where nothing
 * listens), silent (a TCP listener that never answers: the connection
 * request timeout must fire), reject and ignore (the server, run with
 * --answer reject-first / ignore-first, rejects or ignores the request),
 * unreachable (--addr port 9 while the path there is down: failure by the
 * request timeout at the latest). Case `attempts` (client only) makes the
 * --pre attempts and nothing else.
 *
 * Client --squat N first opens N TCP connections to the server's port that
 * never send a byte (and publishes squat.ready): they must not keep the
 * real connection out. The client's own connection must then be
 * established within FAST_FAIL_S, and the server must close every idle
 * socket by its header deadline (SQUAT_HDR_S, plus slack); past the
 * server's table of SQUAT_PRE_MAX waiting sockets, the oldest must be
 * closed at once, well before that deadline.
 *
 * Client --drop (case kill_client): instead of dying, send once, which
 * the script's SOFTDOCA_FAULTS (conn:drop=after_ops:1, the send held by a
 * delay so that it never arrives) turns into a dropped connection; the
 * server must see what it sees of a dead client, and we must hear the
 * failure callback and see our send end.
 *
 * Files in DIR: server.port (the listening port), server.conn.I and
 * client.conn.I (export/connect descriptors), server.full (every slot is
 * up: established callback, or with export/connect its descriptor message
 * sent), server.inflight / client.inflight (the kill cases: tasks
 * are in flight, die now), server.survived (kill_client: slot 0 handled),
 * the --after / --hold / --signal files the script names, FAILED (any
 * process that failed; the others stop waiting at once). Files are written
 * under a temporary name and renamed. Every wait is bounded and fails with
 * a message naming what it waited for; a library call that blocks for ever
 * is named by an alarm (RUN_WATCHDOG_S, then TEARDOWN_WATCHDOG_S).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

#define FILE_WAIT_S 20.0      /* a peer's file */
#define CONNECT_WAIT_S 15.0   /* the established callback (RDMA CM) */
#define TASK_WAIT_S 20.0      /* one batch of completions */
#define SERVE_WAIT_S 40.0     /* server: the whole run */
#define RUN_WATCHDOG_S 45u    /* the run before teardown: then the alarm fires */
#define TEARDOWN_WATCHDOG_S 20u
#define STOP_WAIT_S 10.0      /* doca_ctx_stop reaching IDLE */
#define FAST_FAIL_S 2.0       /* refused / rejected / over the maximum: failure by then */
#define TIMEOUT_SLACK_S 2.5   /* request timeout: failure at most this late */
#define KILL_DETECT_S 10.0    /* a killed peer's in-flight tasks fail by then */
#define INFLIGHT_QUIET_S 0.2  /* kill cases: nothing completes while the peer lives */
#define NOTICE_SLACK_S 3.0    /* netfail: noticed within the keepalive timeout + this */
#define BIGREAD_WAIT_S 38.0   /* bigread: the read completes by then */
#define CONN_TIMEOUT_ENV "SOFTDOCA_CONN_TIMEOUT_MS"
#define CONN_TIMEOUT_DEFAULT_MS 8000.0
#define DEFAULT_TIMEOUT_MS 5000u
#define SQUAT_HDR_S 2.0       /* cm.c's CM_PRE_TIMEOUT_MS: a socket's request by then */
#define SQUAT_PRE_MAX 16u     /* cm.c's ENGINE_CM_MAX_PRE: sockets waiting per listener */
#define SQUAT_EVICT_S 1.0     /* dropped for a newcomer: closed by then */
#define MAX_SQUAT 64u

#define CTRL_LEN 4096u        /* descriptor and DONE message buffers */
#define REGION_HDR 64u        /* start of the region: mix's shared counter */
#define PRIV_LEN 32u          /* private data sent with accept */
#define MAX_SLOTS 64u
#define MAX_PRE 8

#define MAGIC_DESC 0x5DC0DE5Cu
#define MAGIC_DONE 0x5DC0D0E5u
#define MAGIC_DATA 0x5DCADA7Au
#define IMM_SEND 0x5Eu  /* send_imm: MAGIC << 24 | slot << 16 | k */
#define IMM_WRITE 0x3Eu /* write_imm */
#define SRV_UD_BASE 0x5E770000ull
#define CLI_UD_BASE 0xC1100000ull

#define PERM_LRW DOCA_ACCESS_FLAG_LOCAL_READ_WRITE
#define PERM_ALL                                                                                          \
	(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE |  \
	 DOCA_ACCESS_FLAG_RDMA_ATOMIC)

/* ------------------------------------------------------------------ */
/* Types                                                                */

enum role { ROLE_SERVER, ROLE_CLIENT };
enum method { METHOD_CM, METHOD_EXPORT };
enum answer { ANSWER_ACCEPT, ANSWER_REJECT_FIRST, ANSWER_IGNORE_FIRST };
enum pre { PRE_REFUSED, PRE_SILENT, PRE_REJECT, PRE_IGNORE, PRE_UNREACHABLE };

enum kase {
	K_SEND,
	K_SEND_IMM,
	K_WRITE,
	K_WRITE_IMM,
	K_READ,
	K_CAS,
	K_FADD,
	K_MIX,
	K_KILL_SERVER,
	K_KILL_CLIENT,
	K_OVERFLOW,
	K_SERVER_STOP,
	K_ATTEMPTS,
	K_NETFAIL,
	K_NETFAIL_IDLE,
	K_BIGREAD,
};

static const char *const kase_names[] = {
	"send", "send_imm", "write", "write_imm", "read", "cas", "fadd", "mix", "kill_server", "kill_client",
	"overflow", "server_stop", "attempts", "netfail", "netfail_idle", "bigread",
};

static const char *const pre_names[] = {"refused", "silent", "reject", "ignore", "unreachable"};

enum op { OP_RECV, OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS, OP_FADD };

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
	enum op op;
	uint32_t slot;
	uint32_t k;
	bool done;
	bool ok_cb;
	enum where where;
	doca_error_t status;
	struct doca_buf *buf; /* receive: its dst; read: its dst; atomics: result */
	/* receive results (success callback only) */
	enum doca_rdma_opcode opcode;
	uint32_t len;
	doca_be32_t imm;
	const struct doca_rdma_connection *conn;
	uint32_t read_len;
};

/* Server: how far one slot (accepted connection) is. */
enum phase {
	PH_ACCEPTED,	  /* accepted: waiting for established (export/connect: connected, moves on at once) */
	PH_DESC_SENT,	  /* descriptor message submitted */
	PH_SERVING,	  /* the client works; waiting for DONE and disconnection */
	PH_INFLIGHT,	  /* kill_client: sends in flight, making sure they stay so */
	PH_KILL_WAIT,	  /* kill_client: the client was told to die */
	PH_BREAK_WAIT,	  /* netfail: ready; waiting for the script to break the path */
	PH_NOTICE_WAIT,	  /* netfail: the path is broken; waiting for the failure */
	PH_AFTER_CHECK,	  /* a task on the closed connection was submitted */
	PH_FINISHED,
};

struct slot {
	struct doca_rdma_connection *conn;
	enum kase kase;
	enum phase phase;
	double phase_t0;
	int established, failed, disconnected;
	uint32_t desc_rec;
	uint32_t first_kill_rec;
	uint32_t after_rec;
	bool done;	/* DONE arrived and the slice was checked */
	uint8_t *got_send; /* per k: send / send_imm received */
	uint8_t *got_wimm; /* per k: write_imm received */
	uint32_t nsend, nwimm;
	size_t inflight_before;
};

struct peer {
	/* Options. */
	enum role role;
	enum method method;
	enum kase kase;
	enum answer answer;
	const char *dir;
	const char *device;
	const char *addr_text;
	const char *peer_addr; /* server: the client's address, as get_addr must say */
	int family;
	uint32_t clients;
	uint32_t index;
	size_t size;
	uint32_t count;
	uint16_t timeout_ms;
	bool timeout_set;
	enum pre pre[MAX_PRE];
	int npre;
	const char *after;
	const char *hold;
	const char *signal; /* written when the run ends, however it ends */
	uint32_t squat;	    /* client: idle sockets opened before connecting */
	bool drop;	    /* client, kill_client: a send drops the connection (fault injection) */

	/* DOCA objects. */
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_buf_inventory *inv;
	struct doca_mmap *rmmap_local; /* server: the exported region */
	struct doca_mmap *qmmap;       /* message buffers, local only */
	struct doca_mmap *remote;      /* client: the server's region */
	const void *mmap_desc;	       /* server: export of rmmap_local */
	size_t mmap_desc_len;
	uint16_t port;
	bool listening;

	/* Memory. */
	uint8_t *region;	/* server: REGION_HDR + slots * slice_len */
	size_t region_len;
	size_t slice_len;
	uint8_t *q;		/* message buffers */
	size_t q_len;
	size_t recv_size;	/* server: bytes per posted receive */
	uint32_t nrecv_posted;

	/* Server. */
	struct slot slots[MAX_SLOTS];
	uint32_t nslots;	/* accepted so far */
	int requests;
	int unknown_events;
	struct doca_rdma_connection *rejected;
	struct doca_rdma_connection *ignored;
	bool full_written;
	bool stop_requested; /* server_stop: stop the context with the client's writes in flight */

	/* Client. */
	int squat_fd[MAX_SQUAT];
	double squat_t0;	/* when the idle sockets were opened */
	uint32_t attempt;	/* connection attempts so far */
	struct doca_rdma_connection *conn;
	union doca_data est_ud, fail_ud;
	struct doca_rdma_connection *est_conn, *fail_conn, *disc_conn;
	int established, failed, disconnected;
	uint32_t my_slot;
	uint8_t *raddr;		/* client: my slice, at the exporter's address */
	uint8_t *rbase;		/* client: the server's region start */
	uint32_t desc_rec;

	/* Both. */
	enum doca_ctx_states state;
	struct rec *recs;
	uint32_t nrecs, recs_cap, ndone;
	struct doca_buf **bufs;
	uint32_t nbufs, bufs_cap;
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

static int write_file(struct peer *p, const char *name, const void *data, size_t len);

/* Print one FAIL line (the first also writes DIR/FAILED) and return -1. */
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
		if (p->dir != NULL)
			(void)write_file(p, "FAILED", p->tag, strlen(p->tag));
	}
	return -1;
}

__attribute__((format(printf, 2, 3))) static void note(struct peer *p, const char *fmt, ...)
{
	char msg[512];
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

/* ------------------------------------------------------------------ */
/* Patterns                                                             */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Byte i of pattern `seed`: 8 bytes at a time from one hash. */
static uint8_t pat_byte(uint64_t seed, size_t i)
{
	return (uint8_t)(mix64(seed + 0x9e3779b97f4a7c15ull * (i >> 3)) >> ((i & 7) * 8));
}

static void pat_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pat_byte(seed, i);
}

/* Offset of the first byte of buf[from, len) that differs, or SIZE_MAX. */
static size_t pat_check(const uint8_t *buf, size_t len, uint64_t seed, size_t from)
{
	for (size_t i = from; i < len; i++)
		if (buf[i] != pat_byte(seed, i))
			return i;
	return SIZE_MAX;
}

/* bigread's pattern: one hash per 8-byte word (fast enough for 1 GiB). */
static void wpat_fill(uint8_t *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v = mix64(seed + i);

		memcpy(buf + i, &v, 8);
	}
}

/* Offset of the first word of buf[0, len) that differs, or SIZE_MAX. */
static size_t wpat_check(const uint8_t *buf, size_t len, uint64_t seed)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, buf + i, 8);
		if (v != mix64(seed + i))
			return i;
	}
	return SIZE_MAX;
}

/* netfail: how long a side may take to notice a broken path (the
 * library's keepalive timeout, as the environment sets it, + slack). */
static double notice_bound_s(void)
{
	const char *t = getenv(CONN_TIMEOUT_ENV);
	double ms = t != NULL && t[0] != '\0' ? strtod(t, NULL) : CONN_TIMEOUT_DEFAULT_MS;

	if (ms <= 0)
		ms = CONN_TIMEOUT_DEFAULT_MS;
	return ms / 1000.0 + NOTICE_SLACK_S;
}

/* netfail: every task of [first, first + n) failed at completion with
 * DOCA_ERROR_CONNECTION_ABORTED (what a failed connection gives the
 * operations it had in flight). */
static int expect_all_failed(struct peer *p, uint32_t first, uint32_t n, const char *what)
{
	for (uint32_t i = first; i < first + n; i++) {
		const struct rec *r = &p->recs[i];

		if (!r->done || r->status != DOCA_ERROR_CONNECTION_ABORTED || r->where != AT_COMPLETION)
			return failf(p, "%s #%u (of %u in flight) ended%s with %s at %s, expected to fail at completion "
					"with DOCA_ERROR_CONNECTION_ABORTED",
				     what, i - first, n, r->done ? "" : " (not done)", doca_error_get_name(r->status),
				     where_name(r->where));
	}
	return 0;
}

/* Client data for chunk k of slot s; server data; junk. */
static uint64_t seed_cli(uint32_t s, uint32_t k)
{
	return 0xC11E000000000000ull ^ ((uint64_t)s << 32) ^ k;
}

static uint64_t seed_srv(uint32_t s, uint32_t k)
{
	return 0x5E7E000000000000ull ^ ((uint64_t)s << 32) ^ k;
}

static uint64_t seed_junk(uint32_t s)
{
	return 0x7E57DA7A00000000ull ^ s;
}

/* Initial value of atomic word k of slot s, and the value cas swaps in. */
static uint64_t aval(uint32_t s, uint32_t k)
{
	return mix64(0xA70A000000000000ull ^ ((uint64_t)s << 32) ^ k);
}

static uint64_t bval(uint32_t s, uint32_t k)
{
	return mix64(0xB70B000000000000ull ^ ((uint64_t)s << 32) ^ k);
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

static uint32_t put32(uint8_t *b, uint32_t v)
{
	memcpy(b, &v, 4);
	return v;
}

static uint32_t get32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return v;
}

/* A data message: MAGIC_DATA, slot, k, then the pattern from byte 12. */
static void data_msg_fill(uint8_t *b, size_t n, uint32_t s, uint32_t k)
{
	pat_fill(b, n, seed_cli(s, k));
	put32(b, MAGIC_DATA);
	put32(b + 4, s);
	put32(b + 8, k);
}

static uint32_t imm_of(uint32_t magic, uint32_t s, uint32_t k)
{
	return magic << 24 | (s & 0xFFu) << 16 | (k & 0xFFFFu);
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

static int publish(struct peer *p, const char *name, const void *data, size_t len)
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

/* Read a whole file (at most 64 KiB) into malloc'd memory; 1 if absent. */
static int read_file(const struct peer *p, const char *name, uint8_t **data, size_t *len)
{
	char path[PATH_MAX];
	uint8_t *buf;
	size_t used = 0, cap = 65536;
	int fd;

	path_of(p, name, path, sizeof(path));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	buf = malloc(cap + 1);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf + used, cap - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return -e;
		}
		if (n == 0 || (used += (size_t)n) == cap)
			break;
	}
	close(fd);
	buf[used] = 0;
	*data = buf;
	*len = used;
	return 0;
}

/* Another process of this test failed (checked at most every 50 ms). */
static bool someone_failed(struct peer *p)
{
	static double next;
	double t = now_s();

	if (t < next)
		return false;
	next = t + 0.05;
	return !p->failed_once && file_exists(p, "FAILED");
}

/* A library call that blocks for ever would only show up as the outer
 * timeout; an alarm names it instead: the run as a whole and teardown each
 * have a budget, and watchdog_step says what we were in (set around
 * doca_pe_progress and each teardown call). The handler uses only
 * async-signal-safe calls. */
static char watchdog_prefix[256];
static const char *volatile watchdog_step = "?";

static void watchdog_fire(int sig)
{
	static const char tail[] = " (library call blocked; watchdog)\n";
	const char *step = watchdog_step;

	(void)sig;
	(void)!write(STDOUT_FILENO, watchdog_prefix, strlen(watchdog_prefix));
	(void)!write(STDOUT_FILENO, step, strlen(step));
	(void)!write(STDOUT_FILENO, tail, sizeof(tail) - 1);
	_exit(3);
}

static void watchdog_arm(struct peer *p, unsigned int secs, const char *what)
{
	snprintf(watchdog_prefix, sizeof(watchdog_prefix), "FAIL %s: %s did not finish within %u s; stuck in ",
		 p->tag, what, secs);
	signal(SIGALRM, watchdog_fire);
	alarm(secs);
}

static void progress_wait(struct peer *p, int max_ms);

/* Wait (bounded) for file `name`, progressing meanwhile; read it into
 * *data unless data is NULL. */
static int wait_file(struct peer *p, const char *name, double timeout_s, uint8_t **data, size_t *len)
{
	double deadline = now_s() + timeout_s;

	for (;;) {
		if (data != NULL) {
			int r = read_file(p, name, data, len);

			if (r == 0)
				return 0;
			if (r < 0)
				return failf(p, "reading %s/%s: %s", p->dir, name, strerror(-r));
		} else if (file_exists(p, name)) {
			return 0;
		}
		if (someone_failed(p))
			return failf(p, "another process of the test failed while we waited for %s", name);
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for the file %s/%s", timeout_s, p->dir, name);
		if (p->ctx != NULL)
			progress_wait(p, 5);
		else
			poll(NULL, 0, 5);
	}
}

/* ------------------------------------------------------------------ */
/* Progress                                                             */

/* One round of progress; when there is nothing to do, sleep on the PE's
 * notification handle for at most max_ms (the callers re-check their
 * condition and deadline after each round). */
static void progress_wait(struct peer *p, int max_ms)
{
	doca_notification_handle_t fd;
	struct pollfd pfd;
	const char *outer = watchdog_step;

	watchdog_step = "doca_pe_progress";
	if (doca_pe_progress(p->pe)) {
		watchdog_step = outer;
		return;
	}
	watchdog_step = outer;
	if (doca_pe_get_notification_handle(p->pe, &fd) != DOCA_SUCCESS ||
	    doca_pe_request_notification(p->pe) != DOCA_SUCCESS) {
		poll(NULL, 0, 1);
		return;
	}
	watchdog_step = "doca_pe_progress";
	if (doca_pe_progress(p->pe) == 0) {
		watchdog_step = outer;
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		(void)poll(&pfd, 1, max_ms);
	}
	watchdog_step = outer;
	(void)doca_pe_clear_notification(p->pe, fd);
}

/* ------------------------------------------------------------------ */
/* Tasks                                                                */

static uint32_t new_rec(struct peer *p, enum op op, uint32_t slot, uint32_t k)
{
	struct rec *r;

	if (p->nrecs == p->recs_cap) {
		uint32_t cap = p->recs_cap ? p->recs_cap * 2 : 256;
		struct rec *n = realloc(p->recs, cap * sizeof(*n));

		if (n == NULL) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		memset(n + p->recs_cap, 0, (cap - p->recs_cap) * sizeof(*n));
		p->recs = n;
		p->recs_cap = cap;
	}
	r = &p->recs[p->nrecs];
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->slot = slot;
	r->k = k;
	return p->nrecs++;
}

/* After allocate_init returned `err` for record i: submit the task, or
 * record where it was refused (a refused task stays ours and is freed). */
static void post(struct peer *p, uint32_t i, doca_error_t err, struct doca_task *task)
{
	struct rec *r = &p->recs[i];

	if (err == DOCA_SUCCESS) {
		err = doca_task_submit(task);
		if (err == DOCA_SUCCESS)
			return;
		doca_task_free(task);
		r->where = AT_SUBMIT;
	} else {
		r->where = AT_ALLOC;
	}
	r->done = true;
	r->status = err;
	p->ndone++;
}

static int get_buf(struct peer *p, struct doca_mmap *mmap, void *addr, size_t len, size_t data_len,
		   struct doca_buf **out)
{
	doca_error_t err;

	if (p->nbufs == p->bufs_cap) {
		uint32_t cap = p->bufs_cap ? p->bufs_cap * 2 : 256;
		struct doca_buf **n = realloc(p->bufs, cap * sizeof(*n));

		if (n == NULL)
			return failf(p, "out of memory");
		p->bufs = n;
		p->bufs_cap = cap;
	}
	err = doca_buf_inventory_buf_get_by_args(p->inv, mmap, addr, len, addr, data_len, out);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_buf_inventory_buf_get_by_args(%p, %zu) returned %s", addr, len,
			     doca_error_get_name(err));
	p->bufs[p->nbufs++] = *out;
	return 0;
}

static union doca_data ud(uint64_t v)
{
	union doca_data d = {.u64 = v};

	return d;
}

static uint32_t post_receive(struct peer *p, struct doca_buf *dst, uint32_t slot)
{
	struct doca_rdma_task_receive *t = NULL;
	uint32_t i = new_rec(p, OP_RECV, slot, 0);
	doca_error_t err;

	p->recs[i].buf = dst;
	err = doca_rdma_task_receive_allocate_init(p->rdma, dst, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_receive_as_task(t) : NULL);
	return i;
}

static uint32_t post_send(struct peer *p, struct doca_rdma_connection *c, struct doca_buf *src, uint32_t slot,
			  uint32_t k)
{
	struct doca_rdma_task_send *t = NULL;
	uint32_t i = new_rec(p, OP_SEND, slot, k);
	doca_error_t err;

	err = doca_rdma_task_send_allocate_init(p->rdma, c, src, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_send_as_task(t) : NULL);
	return i;
}

static uint32_t post_send_imm(struct peer *p, struct doca_rdma_connection *c, struct doca_buf *src, uint32_t imm,
			      uint32_t slot, uint32_t k)
{
	struct doca_rdma_task_send_imm *t = NULL;
	uint32_t i = new_rec(p, OP_SEND_IMM, slot, k);
	doca_error_t err;

	err = doca_rdma_task_send_imm_allocate_init(p->rdma, c, src, imm, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_send_imm_as_task(t) : NULL);
	return i;
}

static uint32_t post_write(struct peer *p, struct doca_rdma_connection *c, struct doca_buf *src,
			   struct doca_buf *dst, uint32_t slot, uint32_t k)
{
	struct doca_rdma_task_write *t = NULL;
	uint32_t i = new_rec(p, OP_WRITE, slot, k);
	doca_error_t err;

	err = doca_rdma_task_write_allocate_init(p->rdma, c, src, dst, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_write_as_task(t) : NULL);
	return i;
}

static uint32_t post_write_imm(struct peer *p, struct doca_rdma_connection *c, struct doca_buf *src,
			       struct doca_buf *dst, uint32_t imm, uint32_t slot, uint32_t k)
{
	struct doca_rdma_task_write_imm *t = NULL;
	uint32_t i = new_rec(p, OP_WRITE_IMM, slot, k);
	doca_error_t err;

	err = doca_rdma_task_write_imm_allocate_init(p->rdma, c, src, dst, imm, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_write_imm_as_task(t) : NULL);
	return i;
}

static uint32_t post_read(struct peer *p, struct doca_rdma_connection *c, struct doca_buf *src, struct doca_buf *dst,
			  uint32_t slot, uint32_t k)
{
	struct doca_rdma_task_read *t = NULL;
	uint32_t i = new_rec(p, OP_READ, slot, k);
	doca_error_t err;

	p->recs[i].buf = dst;
	err = doca_rdma_task_read_allocate_init(p->rdma, c, src, dst, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_read_as_task(t) : NULL);
	return i;
}

static uint32_t post_cas(struct peer *p, struct doca_rdma_connection *c, struct doca_buf *dst, struct doca_buf *res,
			 uint64_t cmp, uint64_t swap, uint32_t slot, uint32_t k)
{
	struct doca_rdma_task_atomic_cmp_swp *t = NULL;
	uint32_t i = new_rec(p, OP_CAS, slot, k);
	doca_error_t err;

	p->recs[i].buf = res;
	err = doca_rdma_task_atomic_cmp_swp_allocate_init(p->rdma, c, dst, res, cmp, swap, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_atomic_cmp_swp_as_task(t) : NULL);
	return i;
}

static uint32_t post_fadd(struct peer *p, struct doca_rdma_connection *c, struct doca_buf *dst, struct doca_buf *res,
			  uint64_t add, uint32_t slot, uint32_t k)
{
	struct doca_rdma_task_atomic_fetch_add *t = NULL;
	uint32_t i = new_rec(p, OP_FADD, slot, k);
	doca_error_t err;

	p->recs[i].buf = res;
	err = doca_rdma_task_atomic_fetch_add_allocate_init(p->rdma, c, dst, res, add, ud(i), &t);
	post(p, i, err, err == DOCA_SUCCESS ? doca_rdma_task_atomic_fetch_add_as_task(t) : NULL);
	return i;
}

/* Wait (bounded) until records [first, first + n) are all done. */
static int wait_recs(struct peer *p, uint32_t first, uint32_t n, double timeout_s, const char *what)
{
	double deadline = now_s() + timeout_s;

	for (;;) {
		uint32_t done = 0;

		for (uint32_t i = first; i < first + n; i++)
			done += p->recs[i].done;
		if (done == n)
			return 0;
		if (p->failed_once)
			return -1;
		if (someone_failed(p))
			return failf(p, "another process failed while we waited for %s (%u of %u done)", what, done, n);
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s waiting for %s: %u of %u tasks completed", timeout_s,
				     what, done, n);
		progress_wait(p, 10);
	}
}

static int expect_ok(struct peer *p, uint32_t i, const char *what)
{
	const struct rec *r = &p->recs[i];

	if (!r->done)
		return failf(p, "%s (task %u): not completed", what, r->k);
	if (r->status != DOCA_SUCCESS)
		return failf(p, "%s (task %u): failed at %s with %s (%s)", what, r->k, where_name(r->where),
			     doca_error_get_name(r->status), doca_error_get_descr(r->status));
	return 0;
}

static int expect_all_ok(struct peer *p, uint32_t first, uint32_t n, const char *what)
{
	for (uint32_t i = first; i < first + n; i++)
		if (expect_ok(p, i, what) != 0)
			return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Completion callbacks                                                 */

static void server_on_receive(struct peer *p, struct rec *r);
static void client_on_receive(struct peer *p, struct rec *r);

static struct rec *note_done(struct doca_task *task, union doca_data task_ud, union doca_data ctx_ud, bool ok_cb)
{
	struct peer *p = ctx_ud.ptr;
	uint64_t i = task_ud.u64;
	doca_error_t status = doca_task_get_status(task);
	struct rec *r;

	if (i >= p->nrecs || p->recs[i].done) {
		failf(p, "completion for an unknown or finished task %" PRIu64, i);
		return NULL;
	}
	r = &p->recs[i];
	r->done = true;
	r->ok_cb = ok_cb;
	r->where = AT_COMPLETION;
	r->status = status;
	if (ok_cb != (status == DOCA_SUCCESS))
		failf(p, "task %" PRIu64 ": %s callback with status %s", i, ok_cb ? "success" : "error",
		      doca_error_get_name(status));
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
	}
	doca_task_free(task);
	if (r != NULL) {
		if (p->role == ROLE_SERVER)
			server_on_receive(p, r);
		else
			client_on_receive(p, r);
	}
}

static void receive_err_cb(struct doca_rdma_task_receive *t, union doca_data u, union doca_data c)
{
	struct doca_task *task = doca_rdma_task_receive_as_task(t);

	(void)note_done(task, u, c, false);
	doca_task_free(task);
}

static void state_cb(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct peer *p = user_data.ptr;

	(void)ctx;
	(void)prev;
	p->state = next;
}

/* ------------------------------------------------------------------ */
/* Connection callbacks                                                 */

/* Server: the slot whose connection this is (by its user data, which the
 * server set when it accepted), checked against the pointer it kept. */
static struct slot *slot_of(struct peer *p, const struct doca_rdma_connection *conn, union doca_data conn_ud,
			    const char *what)
{
	uint64_t s = conn_ud.u64 - SRV_UD_BASE;
	union doca_data got = {.u64 = 0};

	if (conn_ud.u64 < SRV_UD_BASE || s >= p->nslots) {
		p->unknown_events++;
		failf(p, "%s for connection %p with user data 0x%" PRIx64 ", not one of our %u slots", what,
		      (const void *)conn, conn_ud.u64, p->nslots);
		return NULL;
	}
	if (p->slots[s].conn != conn) {
		failf(p, "%s: user data says slot %" PRIu64 " but the connection is %p, not the slot's %p", what, s,
		      (const void *)conn, (void *)p->slots[s].conn);
		return NULL;
	}
	if (doca_rdma_connection_get_user_data(conn, &got) != DOCA_SUCCESS || got.u64 != conn_ud.u64) {
		failf(p, "%s: doca_rdma_connection_get_user_data gives 0x%" PRIx64 ", the callback 0x%" PRIx64, what,
		      got.u64, conn_ud.u64);
		return NULL;
	}
	return &p->slots[s];
}

static void server_request_cb(struct doca_rdma_connection *conn, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;
	static uint8_t priv[PRIV_LEN];
	struct slot *sl;
	uint32_t id = 0;
	doca_error_t err;

	p->requests++;
	if (doca_rdma_connection_get_id(conn, &id) != DOCA_SUCCESS)
		failf(p, "doca_rdma_connection_get_id fails on a connection request");
	if (p->requests == 1 && p->answer == ANSWER_REJECT_FIRST) {
		err = doca_rdma_connection_reject(conn);
		if (err != DOCA_SUCCESS) {
			failf(p, "doca_rdma_connection_reject returned %s", doca_error_get_name(err));
			return;
		}
		/* Answered once: a second answer is refused. */
		err = doca_rdma_connection_accept(conn, NULL, 0);
		if (err == DOCA_SUCCESS)
			failf(p, "doca_rdma_connection_accept succeeded on a connection request already rejected");
		else
			note(p, "accept after reject returned %s", doca_error_get_name(err));
		p->rejected = conn;
		note(p, "request #1 (connection id %u) rejected", id);
		return;
	}
	if (p->requests == 1 && p->answer == ANSWER_IGNORE_FIRST) {
		p->ignored = conn;
		note(p, "request #1 (connection id %u) left unanswered", id);
		return;
	}
	if (p->nslots >= p->clients) {
		failf(p, "connection request #%d, but only %u clients were expected: the maximum of connections "
			 "should have stopped it; rejecting",
		      p->requests, p->clients);
		(void)doca_rdma_connection_reject(conn);
		return;
	}
	for (uint32_t i = 0; i < PRIV_LEN; i++)
		priv[i] = (uint8_t)(0xA0 + i);
	err = doca_rdma_connection_accept(conn, priv, PRIV_LEN);
	if (err != DOCA_SUCCESS) {
		failf(p, "doca_rdma_connection_accept returned %s", doca_error_get_name(err));
		return;
	}
	sl = &p->slots[p->nslots];
	sl->conn = conn;
	sl->phase = PH_ACCEPTED;
	sl->phase_t0 = now_s();
	err = doca_rdma_connection_set_user_data(conn, ud(SRV_UD_BASE + p->nslots));
	if (err != DOCA_SUCCESS)
		failf(p, "doca_rdma_connection_set_user_data returned %s", doca_error_get_name(err));
	p->nslots++;
}

/* The peer address the library reports must be the one we expect. */
static int check_addr(struct peer *p, const struct doca_rdma_connection *conn, const char *want_text,
		      int want_port, const char *who)
{
	struct doca_rdma_addr *addr = NULL;
	enum doca_rdma_addr_type type;
	enum doca_rdma_addr_type want_type = strchr(want_text, ':') ? DOCA_RDMA_ADDR_TYPE_IPv6
								     : DOCA_RDMA_ADDR_TYPE_IPv4;
	const char *text = NULL;
	uint16_t port = 0;
	doca_error_t err;

	err = doca_rdma_connection_get_addr(conn, &addr);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_rdma_connection_get_addr (%s) returned %s", who, doca_error_get_name(err));
	CHECK(p, doca_rdma_addr_get_params(addr, &type, &text, &port));
	if (type != want_type || text == NULL || strcmp(text, want_text) != 0 ||
	    (want_port >= 0 && port != want_port) || port == 0)
		return failf(p, "doca_rdma_connection_get_addr (%s) says type %s, \"%s\" port %u; expected %s \"%s\" "
				"port %s",
			     who, type == DOCA_RDMA_ADDR_TYPE_IPv4 ? "IPv4" : type == DOCA_RDMA_ADDR_TYPE_IPv6 ? "IPv6" : "GID",
			     text ? text : "(null)", port, want_type == DOCA_RDMA_ADDR_TYPE_IPv4 ? "IPv4" : "IPv6",
			     want_text, want_port >= 0 ? "as connected" : "non-zero");
	return 0;
}

static void server_established_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;
	struct slot *sl = slot_of(p, conn, conn_ud, "established callback");

	if (sl == NULL)
		return;
	sl->established++;
	if (p->method == METHOD_EXPORT)
		failf(p, "slot %u: established callback on an export/connect connection (RDMA CM only)",
		      (unsigned)(sl - p->slots));
	else if (sl->established > 1 || sl->failed || sl->disconnected)
		failf(p, "slot %u: established callback #%d (failed %d, disconnected %d)", (unsigned)(sl - p->slots),
		      sl->established, sl->failed, sl->disconnected);
	if (p->method == METHOD_CM && p->peer_addr != NULL)
		(void)check_addr(p, conn, p->peer_addr, -1, "server side");
}

static void server_failure_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;
	struct slot *sl = slot_of(p, conn, conn_ud, "failure callback");

	if (sl != NULL)
		sl->failed++;
}

static void server_disconnect_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;
	struct slot *sl = slot_of(p, conn, conn_ud, "disconnection callback");
	doca_error_t err;

	if (sl == NULL)
		return;
	sl->disconnected++;
	/* As DOCA's samples do: disconnect in the disconnection callback. */
	err = doca_rdma_connection_disconnect(conn);
	if (err != DOCA_SUCCESS)
		failf(p, "doca_rdma_connection_disconnect inside the disconnection callback returned %s",
		      doca_error_get_name(err));
}

static void client_established_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;

	p->established++;
	p->est_conn = conn;
	p->est_ud = conn_ud;
	if (p->method == METHOD_EXPORT)
		failf(p, "established callback on the export/connect connection (RDMA CM only)");
}

static void client_failure_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;

	p->failed++;
	p->fail_conn = conn;
	p->fail_ud = conn_ud;
}

static void client_disconnect_cb(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	struct peer *p = ctx_ud.ptr;

	(void)conn_ud;
	p->disconnected++;
	p->disc_conn = conn;
}

/* ------------------------------------------------------------------ */
/* Setup and teardown                                                   */

static int open_device(struct peer *p)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	char names[512] = "";
	doca_error_t err;

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

/* Receives a client of case k sends the server (DONE included). */
static uint32_t server_receives_for(const struct peer *p, enum kase k)
{
	switch (k) {
	case K_SEND:
	case K_SEND_IMM:
	case K_WRITE_IMM:
		return p->count + 1;
	case K_MIX:
		return 2 * p->count + 1;
	case K_KILL_SERVER:
	case K_KILL_CLIENT:
	case K_SERVER_STOP:
	case K_NETFAIL:
	case K_NETFAIL_IDLE:
		return 0;
	default:
		return 1;
	}
}

/* The case of server slot s: kill_client's slot 0 is the victim, later
 * slots are served as send. */
static enum kase slot_kase(const struct peer *p, uint32_t s)
{
	if (p->kase == K_KILL_CLIENT)
		return s == 0 ? K_KILL_CLIENT : K_SEND;
	return p->kase;
}

static size_t slice_len_of(const struct peer *p)
{
	size_t n = p->size * p->count;

	switch (p->kase) {
	case K_CAS:
	case K_FADD:
		return 8 * (size_t)p->count + 64;
	case K_MIX:
		return 2 * n;
	case K_KILL_CLIENT:
	case K_KILL_SERVER:
		return 4096;
	default: /* K_SERVER_STOP too: K chunks of size */
		return n;
	}
}

static int setup_common(struct peer *p, uint16_t max_conns, uint32_t nrecv_tasks, uint32_t ntasks, uint32_t perms)
{
	union doca_data cud = {.ptr = p};
	uint32_t sq = ntasks + 16;
	doca_error_t err;

	if (open_device(p) != 0)
		return -1;
	CHECK(p, doca_pe_create(&p->pe));

	p->q = aligned_alloc(4096, (p->q_len + 4095) & ~(size_t)4095);
	if (p->q == NULL)
		return failf(p, "cannot allocate %zu bytes", p->q_len);
	memset(p->q, 0, p->q_len);
	CHECK(p, doca_mmap_create(&p->qmmap));
	CHECK(p, doca_mmap_set_memrange(p->qmmap, p->q, p->q_len));
	CHECK(p, doca_mmap_set_permissions(p->qmmap, PERM_LRW));
	CHECK(p, doca_mmap_add_dev(p->qmmap, p->dev));
	CHECK(p, doca_mmap_start(p->qmmap));

	CHECK(p, doca_buf_inventory_create(4 * (size_t)ntasks + 2 * (size_t)nrecv_tasks + 64, &p->inv));
	CHECK(p, doca_buf_inventory_start(p->inv));

	CHECK(p, doca_rdma_create(p->dev, &p->rdma));
	p->ctx = doca_rdma_as_ctx(p->rdma);
	if (p->ctx == NULL)
		return failf(p, "doca_rdma_as_ctx returned NULL");
	CHECK(p, doca_rdma_set_permissions(p->rdma, perms));
	CHECK(p, doca_rdma_set_max_num_connections(p->rdma, max_conns));
	CHECK(p, doca_rdma_set_send_queue_size(p->rdma, sq));
	if (p->timeout_set) {
		uint16_t got = 0;

		CHECK(p, doca_rdma_set_connection_request_timeout(p->rdma, p->timeout_ms));
		CHECK(p, doca_rdma_get_connection_request_timeout(p->rdma, &got));
		if (got != p->timeout_ms)
			return failf(p, "connection request timeout reads back as %u ms after setting %u", got,
				     p->timeout_ms);
	}
	CHECK(p, doca_rdma_task_receive_set_conf(p->rdma, receive_ok_cb, receive_err_cb, nrecv_tasks + 4));
	CHECK(p, doca_rdma_task_send_set_conf(p->rdma, send_ok_cb, send_err_cb, ntasks));
	CHECK(p, doca_rdma_task_send_imm_set_conf(p->rdma, send_imm_ok_cb, send_imm_err_cb, ntasks));
	CHECK(p, doca_rdma_task_write_set_conf(p->rdma, write_ok_cb, write_err_cb, ntasks));
	CHECK(p, doca_rdma_task_write_imm_set_conf(p->rdma, write_imm_ok_cb, write_imm_err_cb, ntasks));
	CHECK(p, doca_rdma_task_read_set_conf(p->rdma, read_ok_cb, read_err_cb, ntasks));
	CHECK(p, doca_rdma_task_atomic_cmp_swp_set_conf(p->rdma, atomic_cmp_swp_ok_cb, atomic_cmp_swp_err_cb, ntasks));
	CHECK(p, doca_rdma_task_atomic_fetch_add_set_conf(p->rdma, atomic_fetch_add_ok_cb, atomic_fetch_add_err_cb,
							  ntasks));
	if (p->role == ROLE_SERVER)
		CHECK(p, doca_rdma_set_connection_state_callbacks(p->rdma, server_request_cb, server_established_cb,
								  server_failure_cb, server_disconnect_cb));
	else /* a client needs no request callback */
		CHECK(p, doca_rdma_set_connection_state_callbacks(p->rdma, NULL, client_established_cb,
								  client_failure_cb, client_disconnect_cb));
	CHECK(p, doca_ctx_set_user_data(p->ctx, cud));
	CHECK(p, doca_ctx_set_state_changed_cb(p->ctx, state_cb));
	CHECK(p, doca_pe_connect_ctx(p->pe, p->ctx));
	err = doca_ctx_start(p->ctx);
	if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
		return failf(p, "doca_ctx_start returned %s", doca_error_get_name(err));
	for (double deadline = now_s() + STOP_WAIT_S; p->state != DOCA_CTX_STATE_RUNNING;) {
		if (now_s() > deadline)
			return failf(p, "the context did not reach RUNNING within %.0f s", STOP_WAIT_S);
		progress_wait(p, 10);
	}
	return 0;
}

static int teardown(struct peer *p)
{
	int rc = 0;
	doca_error_t err;

	watchdog_arm(p, TEARDOWN_WATCHDOG_S, "teardown");
	watchdog_step = "doca_ctx_stop";
#define TD(call)                                                                                          \
	do {                                                                                              \
		watchdog_step = #call;                                                                    \
		err = (call);                                                                             \
		if (err != DOCA_SUCCESS)                                                                  \
			rc = failf(p, "teardown: %s returned %s", #call, doca_error_get_name(err));       \
	} while (0)

	if (p->ctx != NULL && p->state != DOCA_CTX_STATE_IDLE) {
		err = doca_ctx_stop(p->ctx);
		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS) {
			rc = failf(p, "teardown: doca_ctx_stop returned %s", doca_error_get_name(err));
		} else {
			double deadline = now_s() + STOP_WAIT_S;

			while (p->state != DOCA_CTX_STATE_IDLE && now_s() < deadline)
				progress_wait(p, 10);
			if (p->state != DOCA_CTX_STATE_IDLE)
				rc = failf(p, "teardown: the context did not reach IDLE within %.0f s of doca_ctx_stop",
					   STOP_WAIT_S);
			else if (p->ndone != p->nrecs)
				rc = failf(p, "teardown: context IDLE but %u of %u tasks never completed",
					   p->nrecs - p->ndone, p->nrecs);
		}
	}
	for (uint32_t i = 0; i < p->nbufs; i++)
		TD(doca_buf_dec_refcount(p->bufs[i], NULL));
	p->nbufs = 0;
	if (p->inv != NULL) {
		TD(doca_buf_inventory_stop(p->inv));
		TD(doca_buf_inventory_destroy(p->inv));
	}
	if (p->remote != NULL) {
		TD(doca_mmap_stop(p->remote));
		TD(doca_mmap_destroy(p->remote));
	}
	if (p->rdma != NULL && p->state == DOCA_CTX_STATE_IDLE)
		TD(doca_rdma_destroy(p->rdma));
	if (p->pe != NULL && p->state == DOCA_CTX_STATE_IDLE)
		TD(doca_pe_destroy(p->pe));
	if (p->rmmap_local != NULL) {
		TD(doca_mmap_stop(p->rmmap_local));
		TD(doca_mmap_destroy(p->rmmap_local));
	}
	if (p->qmmap != NULL) {
		TD(doca_mmap_stop(p->qmmap));
		TD(doca_mmap_destroy(p->qmmap));
	}
	if (p->dev != NULL)
		TD(doca_dev_close(p->dev));
#undef TD
	alarm(0);
	return rc;
}

/* ------------------------------------------------------------------ */
/* A task on a closed connection must fail                              */

/* Submit a send on `conn` (closed); the caller waits for record i. */
static uint32_t post_after_close(struct peer *p, struct doca_rdma_connection *conn, uint32_t slot, size_t qoff)
{
	struct doca_buf *src = NULL;

	put32(p->q + qoff, MAGIC_DATA);
	if (get_buf(p, p->qmmap, p->q + qoff, 64, 64, &src) != 0)
		return UINT32_MAX;
	return post_send(p, conn, src, slot, UINT32_MAX);
}

static int expect_after_close(struct peer *p, uint32_t i, const char *what)
{
	const struct rec *r = &p->recs[i];

	if (!r->done)
		return failf(p, "%s: a send on the closed connection never completed", what);
	if (r->status == DOCA_SUCCESS)
		return failf(p, "%s: a send on the closed connection succeeded", what);
	note(p, "%s: a send on the closed connection failed at %s with %s", what, where_name(r->where),
	     doca_error_get_name(r->status));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Server                                                               */

static void server_fill_slice(struct peer *p, uint32_t s)
{
	uint8_t *sl = p->region + REGION_HDR + (size_t)s * p->slice_len;
	size_t n = p->size;

	switch (slot_kase(p, s)) {
	case K_READ:
		for (uint32_t k = 0; k < p->count; k++)
			pat_fill(sl + k * n, n, seed_srv(s, k));
		break;
	case K_MIX:
		pat_fill(sl, n * p->count, seed_junk(s));
		for (uint32_t k = 0; k < p->count; k++)
			pat_fill(sl + (p->count + k) * n, n, seed_srv(s, k));
		break;
	case K_CAS:
	case K_FADD:
		pat_fill(sl, p->slice_len, seed_junk(s));
		for (uint32_t k = 0; k < p->count; k++)
			word_set(sl, k, aval(s, k));
		break;
	case K_BIGREAD:
		wpat_fill(sl, p->slice_len, seed_srv(s, 0));
		break;
	default:
		pat_fill(sl, p->slice_len, seed_junk(s));
		break;
	}
}

static int server_setup(struct peer *p)
{
	uint32_t nrecv = 0, ntasks;
	size_t hdr_len;

	p->slice_len = slice_len_of(p);
	p->region_len = REGION_HDR + (size_t)p->clients * p->slice_len;
	p->region = aligned_alloc(4096, (p->region_len + 4095) & ~(size_t)4095);
	if (p->region == NULL)
		return failf(p, "cannot allocate %zu bytes", p->region_len);
	memset(p->region, 0, p->region_len);
	for (uint32_t s = 0; s < p->clients; s++) {
		p->slots[s].kase = slot_kase(p, s);
		nrecv += server_receives_for(p, p->slots[s].kase);
		p->slots[s].got_send = calloc(p->count, 1);
		p->slots[s].got_wimm = calloc(p->count, 1);
		if (p->slots[s].got_send == NULL || p->slots[s].got_wimm == NULL)
			return failf(p, "out of memory");
		server_fill_slice(p, s);
	}
	p->recv_size = p->size > CTRL_LEN && p->kase != K_BIGREAD ? p->size : CTRL_LEN;
	p->nrecv_posted = nrecv;
	/* Receive buffers, then one CTRL_LEN message buffer a slot. */
	p->q_len = (size_t)nrecv * p->recv_size + (size_t)p->clients * CTRL_LEN + 4096;
	ntasks = 2 * p->count * p->clients + 4 * p->clients + 16;
	if (setup_common(p, (uint16_t)(p->clients + (p->answer == ANSWER_IGNORE_FIRST)), nrecv, ntasks, PERM_ALL) != 0)
		return -1;

	CHECK(p, doca_mmap_create(&p->rmmap_local));
	CHECK(p, doca_mmap_set_memrange(p->rmmap_local, p->region, p->region_len));
	CHECK(p, doca_mmap_set_permissions(p->rmmap_local, PERM_ALL));
	CHECK(p, doca_mmap_add_dev(p->rmmap_local, p->dev));
	CHECK(p, doca_mmap_start(p->rmmap_local));
	CHECK(p, doca_mmap_export_rdma(p->rmmap_local, p->dev, &p->mmap_desc, &p->mmap_desc_len));
	hdr_len = 48;
	if (hdr_len + p->mmap_desc_len > CTRL_LEN - 128)
		return failf(p, "mmap descriptor of %zu bytes does not fit a %u-byte message", p->mmap_desc_len,
			     CTRL_LEN);

	/* Every receive the clients will need, before anyone can connect. */
	for (uint32_t i = 0; i < nrecv; i++) {
		struct doca_buf *dst;
		uint32_t r;

		if (get_buf(p, p->qmmap, p->q + (size_t)i * p->recv_size, p->recv_size, 0, &dst) != 0)
			return -1;
		r = post_receive(p, dst, UINT32_MAX);
		if (p->recs[r].done)
			return failf(p, "posting receive #%u failed at %s with %s", i, where_name(p->recs[r].where),
				     doca_error_get_name(p->recs[r].status));
	}
	return 0;
}

/* Listen on a free port (a few tries from a pid-derived start) and
 * publish it. */
static int server_listen(struct peer *p)
{
	uint16_t base = (uint16_t)(20000 + (getpid() * 7) % 30000);
	doca_error_t err = DOCA_ERROR_UNKNOWN;
	char text[16];

	for (int i = 0; i < 64; i++) {
		uint16_t port = (uint16_t)(base + i * 13);

		err = doca_rdma_start_listen_to_port(p->rdma, port);
		if (err == DOCA_SUCCESS) {
			p->port = port;
			p->listening = true;
			break;
		}
		if (err != DOCA_ERROR_IN_USE)
			return failf(p, "doca_rdma_start_listen_to_port(%u) returned %s", port, doca_error_get_name(err));
	}
	if (!p->listening)
		return failf(p, "no free port to listen on (last error %s)", doca_error_get_name(err));
	/* Listening twice on one port is refused. */
	err = doca_rdma_start_listen_to_port(p->rdma, p->port);
	if (err == DOCA_SUCCESS)
		return failf(p, "a second doca_rdma_start_listen_to_port(%u) succeeded", p->port);
	snprintf(text, sizeof(text), "%u", p->port);
	return publish(p, "server.port", text, strlen(text));
}

/* Export/connect: one connection a client, descriptors through DIR. */
static int server_export(struct peer *p)
{
	for (uint32_t s = 0; s < p->clients; s++) {
		struct slot *sl = &p->slots[s];
		const void *desc;
		size_t len;
		char name[64];

		CHECK(p, doca_rdma_export(p->rdma, &desc, &len, &sl->conn));
		CHECK(p, doca_rdma_connection_set_user_data(sl->conn, ud(SRV_UD_BASE + s)));
		sl->phase = PH_ACCEPTED;
		sl->phase_t0 = now_s();
		p->nslots = s + 1;
		snprintf(name, sizeof(name), "server.conn.%u", s);
		if (publish(p, name, desc, len) != 0)
			return -1;
	}
	for (uint32_t s = 0; s < p->clients; s++) {
		uint8_t *desc = NULL;
		size_t len = 0;
		char name[64];
		doca_error_t err;

		snprintf(name, sizeof(name), "client.conn.%u", s);
		if (wait_file(p, name, FILE_WAIT_S, &desc, &len) != 0)
			return -1;
		err = doca_rdma_connect(p->rdma, desc, len, p->slots[s].conn);
		free(desc);
		if (err != DOCA_SUCCESS)
			return failf(p, "doca_rdma_connect(slot %u) returned %s", s, doca_error_get_name(err));
	}
	return 0;
}

static size_t slot_msg_off(const struct peer *p, uint32_t s)
{
	return (size_t)p->nrecv_posted * p->recv_size + (size_t)s * CTRL_LEN;
}

/* The descriptor message of slot s. */
static int server_send_desc(struct peer *p, uint32_t s)
{
	uint8_t *m = p->q + slot_msg_off(p, s);
	uint64_t off = REGION_HDR + (uint64_t)s * p->slice_len, len = p->slice_len;
	uint64_t sz = p->size;
	struct doca_buf *src;
	size_t total = 48 + p->mmap_desc_len;

	put32(m, MAGIC_DESC);
	put32(m + 4, s);
	memcpy(m + 8, &off, 8);
	memcpy(m + 16, &len, 8);
	memcpy(m + 24, &sz, 8);
	put32(m + 32, p->count);
	put32(m + 36, (uint32_t)slot_kase(p, s));
	put32(m + 40, (uint32_t)p->mmap_desc_len);
	put32(m + 44, 0);
	memcpy(m + 48, p->mmap_desc, p->mmap_desc_len);
	if (get_buf(p, p->qmmap, m, total, total, &src) != 0)
		return -1;
	p->slots[s].desc_rec = post_send(p, p->slots[s].conn, src, s, UINT32_MAX);
	return 0;
}

/* A chunk of the slice holds pattern `seed`. */
static int expect_chunk(struct peer *p, const uint8_t *at, size_t n, uint64_t seed, const char *what, uint32_t s,
			uint32_t k)
{
	size_t bad = pat_check(at, n, seed, 0);

	if (bad == SIZE_MAX)
		return 0;
	return failf(p, "slot %u %s chunk %u: byte %zu is 0x%02x, expected 0x%02x", s, what, k, bad, at[bad],
		     pat_byte(seed, bad));
}

/* DONE from slot s: everything it did must be in place (RC: DONE came
 * after all of it on the same connection). */
static int server_check_slot(struct peer *p, uint32_t s)
{
	struct slot *sl = &p->slots[s];
	uint8_t *slice = p->region + REGION_HDR + (size_t)s * p->slice_len;
	size_t n = p->size;
	uint32_t K = p->count;

	switch (sl->kase) {
	case K_SEND:
	case K_SEND_IMM:
		if (sl->nsend != K)
			return failf(p, "slot %u: DONE after %u of %u messages", s, sl->nsend, K);
		return expect_chunk(p, slice, p->slice_len, seed_junk(s), "untouched", s, 0);
	case K_WRITE:
	case K_WRITE_IMM:
		if (sl->kase == K_WRITE_IMM && sl->nwimm != K)
			return failf(p, "slot %u: DONE after %u of %u write_imm receives", s, sl->nwimm, K);
		for (uint32_t k = 0; k < K; k++)
			if (expect_chunk(p, slice + k * n, n, seed_cli(s, k), "written", s, k) != 0)
				return -1;
		return 0;
	case K_READ:
		for (uint32_t k = 0; k < K; k++)
			if (expect_chunk(p, slice + k * n, n, seed_srv(s, k), "read (must be unchanged)", s, k) != 0)
				return -1;
		return 0;
	case K_CAS:
		for (uint32_t k = 0; k < K; k++)
			if (word_at(slice, k) != bval(s, k))
				return failf(p, "slot %u: word %u after compare-and-swap is 0x%016" PRIx64
						", expected 0x%016" PRIx64,
					     s, k, word_at(slice, k), bval(s, k));
		return 0;
	case K_FADD:
		for (uint32_t k = 0; k < K; k++) {
			uint64_t want = aval(s, k) + (k == 0 ? (uint64_t)K * (K + 1) / 2 : 0);

			if (word_at(slice, k) != want)
				return failf(p, "slot %u: word %u after fetch-and-add is 0x%016" PRIx64
						", expected 0x%016" PRIx64,
					     s, k, word_at(slice, k), want);
		}
		return 0;
	case K_MIX:
		if (sl->nsend != K || sl->nwimm != K)
			return failf(p, "slot %u: DONE after %u of %u sends and %u of %u write_imms", s, sl->nsend, K,
				     sl->nwimm, K);
		for (uint32_t k = 0; k < K; k++)
			if (expect_chunk(p, slice + k * n, n, seed_cli(s, k), "written", s, k) != 0 ||
			    expect_chunk(p, slice + (K + k) * n, n, seed_srv(s, k), "read (must be unchanged)", s, k) != 0)
				return -1;
		return 0;
	case K_BIGREAD:
		if (wpat_check(slice, p->slice_len, seed_srv(s, 0)) != SIZE_MAX)
			return failf(p, "slot %u: the slice changed under reads", s);
		return 0;
	default:
		return failf(p, "slot %u: DONE in case %s", s, kase_names[sl->kase]);
	}
}

/* A receive completed on the server: which slot, what, is it right. */
static void server_on_receive(struct peer *p, struct rec *r)
{
	union doca_data cud = {.u64 = 0};
	struct slot *sl;
	uint32_t s, k, magic;
	uint8_t *data = NULL;
	size_t dlen = 0;

	if (r->conn == NULL) {
		failf(p, "receive completion names no connection");
		return;
	}
	if (doca_rdma_connection_get_user_data(r->conn, &cud) != DOCA_SUCCESS) {
		failf(p, "doca_rdma_connection_get_user_data fails on a receive's connection");
		return;
	}
	sl = slot_of(p, r->conn, cud, "receive completion");
	if (sl == NULL)
		return;
	s = (uint32_t)(sl - p->slots);
	if (doca_buf_get_data(r->buf, (void **)&data) != DOCA_SUCCESS ||
	    doca_buf_get_data_len(r->buf, &dlen) != DOCA_SUCCESS) {
		failf(p, "cannot read a receive buffer");
		return;
	}
	if (r->opcode == DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM) {
		uint8_t *slice = p->region + REGION_HDR + (size_t)s * p->slice_len;

		k = r->imm & 0xFFFFu;
		if (r->imm >> 24 != IMM_WRITE || ((r->imm >> 16) & 0xFFu) != s || k >= p->count ||
		    (sl->kase != K_WRITE_IMM && sl->kase != K_MIX)) {
			failf(p, "write_imm receive on slot %u's connection has immediate 0x%08x (case %s)", s,
			      (unsigned)r->imm, kase_names[sl->kase]);
			return;
		}
		if (sl->got_wimm[k]++) {
			failf(p, "slot %u: write_imm %u received twice", s, k);
			return;
		}
		sl->nwimm++;
		/* RC: its data is visible when its receive completes. */
		(void)expect_chunk(p, slice + (size_t)k * p->size, p->size, seed_cli(s, k),
				   "written (at its write_imm receive)", s, k);
		return;
	}
	if (r->len != dlen || dlen < 12) {
		failf(p, "slot %u: receive of %u bytes (buf data length %zu); opcode %d", s, r->len, dlen,
		      (int)r->opcode);
		return;
	}
	magic = get32(data);
	if (magic == MAGIC_DONE && r->opcode == DOCA_RDMA_OPCODE_RECV_SEND) {
		if (get32(data + 4) != s) {
			failf(p, "DONE of slot %u arrived on slot %u's connection", get32(data + 4), s);
			return;
		}
		if (sl->done) {
			failf(p, "slot %u: second DONE", s);
			return;
		}
		if (server_check_slot(p, s) == 0)
			sl->done = true;
		return;
	}
	if (magic != MAGIC_DATA) {
		failf(p, "slot %u: receive with unknown content (first word 0x%08x, opcode %d)", s, magic, (int)r->opcode);
		return;
	}
	k = get32(data + 8);
	if (get32(data + 4) != s || k >= p->count) {
		failf(p, "message of slot %u #%u arrived on slot %u's connection (the receive names the wrong "
			 "connection)",
		      get32(data + 4), k, s);
		return;
	}
	if (sl->kase == K_SEND_IMM) {
		if (r->opcode != DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM || r->imm != imm_of(IMM_SEND, s, k)) {
			failf(p, "slot %u message %u: opcode %d immediate 0x%08x, expected send-with-immediate 0x%08x", s,
			      k, (int)r->opcode, (unsigned)r->imm, imm_of(IMM_SEND, s, k));
			return;
		}
	} else if (r->opcode != DOCA_RDMA_OPCODE_RECV_SEND || (sl->kase != K_SEND && sl->kase != K_MIX)) {
		failf(p, "slot %u message %u: opcode %d in case %s", s, k, (int)r->opcode, kase_names[sl->kase]);
		return;
	}
	if (dlen != p->size) {
		failf(p, "slot %u message %u: %zu bytes, expected %zu", s, k, dlen, p->size);
		return;
	}
	if (sl->got_send[k]++) {
		failf(p, "slot %u: message %u received twice", s, k);
		return;
	}
	sl->nsend++;
	{
		size_t bad = pat_check(data, dlen, seed_cli(s, k), 12);

		if (bad != SIZE_MAX)
			failf(p, "slot %u message %u: byte %zu is 0x%02x, expected 0x%02x", s, k, bad, data[bad],
			      pat_byte(seed_cli(s, k), bad));
	}
}

static int server_set_phase(struct slot *sl, enum phase ph)
{
	sl->phase = ph;
	sl->phase_t0 = now_s();
	return 0;
}

/* kill_client, slot s: K sends the client never receives. */
static int server_post_kill_sends(struct peer *p, uint32_t s)
{
	struct slot *sl = &p->slots[s];
	size_t off = slot_msg_off(p, s) + CTRL_LEN - 128;

	CHECK(p, doca_ctx_get_num_inflight_tasks(p->ctx, &sl->inflight_before));
	sl->first_kill_rec = p->nrecs;
	for (uint32_t k = 0; k < p->count; k++) {
		struct doca_buf *src;

		if (get_buf(p, p->qmmap, p->q + off, 64, 64, &src) != 0)
			return -1;
		(void)post_send(p, sl->conn, src, s, k);
	}
	for (uint32_t k = 0; k < p->count; k++) {
		const struct rec *r = &p->recs[sl->first_kill_rec + k];

		if (r->done)
			return failf(p, "slot %u: send %u refused at %s with %s while the client lived", s, k,
				     where_name(r->where), doca_error_get_name(r->status));
	}
	return server_set_phase(sl, PH_INFLIGHT);
}

/* netfail, slot s: wait for the broken path, then for the failure. */
static int server_netfail_step(struct peer *p, uint32_t s)
{
	struct slot *sl = &p->slots[s];
	uint32_t K = sl->kase == K_NETFAIL ? p->count : 0, done = 0;
	double age = now_s() - sl->phase_t0, bound = notice_bound_s();

	for (uint32_t k = 0; k < K; k++)
		done += p->recs[sl->first_kill_rec + k].done;
	if (sl->phase == PH_BREAK_WAIT) {
		if (done != 0 || sl->failed || sl->disconnected)
			return failf(p, "slot %u: before the path was broken, %u of %u sends completed, failure callback "
					"%d, disconnection callback %d",
				     s, done, K, sl->failed, sl->disconnected);
		if (file_exists(p, "path.broken"))
			return server_set_phase(sl, PH_NOTICE_WAIT);
		if (age > FILE_WAIT_S)
			return failf(p, "timed out after %.0f s waiting for the file %s/path.broken", FILE_WAIT_S, p->dir);
		return 0;
	}
	if (done < K || (sl->failed == 0 && sl->disconnected == 0)) {
		if (age > bound)
			return failf(p, "%.2f s after the path broke (bound: %s + %.1f s): %u of %u in-flight sends "
					"completed, failure callback %d, disconnection callback %d",
				     age, CONN_TIMEOUT_ENV, NOTICE_SLACK_S, done, K, sl->failed, sl->disconnected);
		return 0;
	}
	if (expect_all_failed(p, sl->first_kill_rec, K, "in-flight send") != 0)
		return -1;
	note(p, "slot %u: noticed after %.2f s (bound %.1f s): %s callback; %u in-flight send(s) failed%s%s", s, age,
	     bound, sl->failed ? "failure" : "disconnection", K, K ? " with " : "",
	     K ? doca_error_get_name(p->recs[sl->first_kill_rec].status) : "");
	sl->after_rec = post_after_close(p, sl->conn, s, slot_msg_off(p, s) + CTRL_LEN - 64);
	if (sl->after_rec == UINT32_MAX)
		return -1;
	return server_set_phase(sl, PH_AFTER_CHECK);
}

/* Whether the last 8 bytes of the client's write k into slice hold its
 * data: server_stop polls its region for that while the writes may still
 * be landing (the engine's service thread or UCX writes them), as an RDMA
 * program polls memory a NIC fills. Racing reads by design, which
 * ThreadSanitizer reports: tests/tsan.supp names this function, the only
 * place that polls such memory. */
static __attribute__((noinline)) bool chunk_landed(const uint8_t *slice, size_t n, uint32_t s, uint32_t k)
{
	return pat_check(slice + (size_t)k * n, n, seed_cli(s, k), n - 8) == SIZE_MAX;
}

/* Move slot s on as far as it goes now. */
static int server_step(struct peer *p, uint32_t s)
{
	struct slot *sl = &p->slots[s];
	double age = now_s() - sl->phase_t0;
	const struct rec *r;

	switch (sl->phase) {
	case PH_ACCEPTED:
		if (sl->failed || sl->disconnected)
			return failf(p, "slot %u: connection %s before it was established", s,
				     sl->failed ? "failed" : "disconnected");
		/* Export/connect: no established callback; the descriptor
		 * message goes out right after doca_rdma_connect (held by the
		 * library until the link is up) and its completion shows the
		 * link is up. */
		if (p->method == METHOD_CM && sl->established == 0) {
			if (age > CONNECT_WAIT_S)
				return failf(p, "slot %u: no established callback %.0f s after accept", s, CONNECT_WAIT_S);
			return 0;
		}
		if (server_send_desc(p, s) != 0)
			return -1;
		return server_set_phase(sl, PH_DESC_SENT);
	case PH_DESC_SENT:
		r = &p->recs[sl->desc_rec];
		if (!r->done) {
			if (age > TASK_WAIT_S)
				return failf(p, "slot %u: descriptor send not completed after %.0f s", s, TASK_WAIT_S);
			return 0;
		}
		if (expect_ok(p, sl->desc_rec, "descriptor send") != 0)
			return -1;
		if (sl->kase == K_KILL_CLIENT || sl->kase == K_NETFAIL)
			return server_post_kill_sends(p, s);
		if (sl->kase == K_NETFAIL_IDLE) {
			sl->first_kill_rec = p->nrecs;
			if (publish(p, "server.inflight", "0", 1) != 0)
				return -1;
			return server_set_phase(sl, PH_BREAK_WAIT);
		}
		return server_set_phase(sl, PH_SERVING);
	case PH_SERVING:
		if (sl->kase == K_KILL_SERVER) {
			if (file_exists(p, "client.inflight")) {
				note(p, "the client has sends in flight; dying now (SIGKILL)");
				raise(SIGKILL);
			}
		} else if (sl->kase == K_SERVER_STOP) {
			const uint8_t *slice = p->region + REGION_HDR + (size_t)s * p->slice_len;
			size_t n = p->size;

			/* Chunk 0 landed (RC: the rest follow it): stop now.
			 * We spin meanwhile (progress_wait(p, 0)) to react in
			 * time; whether writes were still in flight is printed,
			 * the checks hold either way. */
			if (chunk_landed(slice, n, s, 0)) {
				uint32_t landed = 0;

				for (uint32_t k = 0; k < p->count; k++)
					landed += chunk_landed(slice, n, s, k);
				note(p, "stopping the context with %u of %u writes landed", landed, p->count);
				p->stop_requested = true;
				return server_set_phase(sl, PH_FINISHED);
			}
		} else if (sl->failed) {
			return failf(p, "slot %u: failure callback while serving (DONE %s)", s, sl->done ? "seen" : "not seen");
		} else if (sl->done && sl->disconnected) {
			sl->after_rec = post_after_close(p, sl->conn, s, slot_msg_off(p, s) + CTRL_LEN - 64);
			if (sl->after_rec == UINT32_MAX)
				return -1;
			return server_set_phase(sl, PH_AFTER_CHECK);
		}
		if (age > SERVE_WAIT_S)
			return failf(p, "slot %u: not finished %.0f s after its descriptor went out (DONE %s, "
					"disconnection callback %d)",
				     s, SERVE_WAIT_S, sl->done ? "seen" : "not seen", sl->disconnected);
		return 0;
	case PH_INFLIGHT: {
		size_t inflight = 0;

		if (age < INFLIGHT_QUIET_S)
			return 0;
		for (uint32_t k = 0; k < p->count; k++)
			if (p->recs[sl->first_kill_rec + k].done)
				return failf(p, "slot %u: send %u completed (%s) while the client lived and had no "
						"receive posted",
					     s, k, doca_error_get_name(p->recs[sl->first_kill_rec + k].status));
		if (sl->failed || sl->disconnected)
			return failf(p, "slot %u: connection closed before the client was told to die", s);
		CHECK(p, doca_ctx_get_num_inflight_tasks(p->ctx, &inflight));
		if (inflight != sl->inflight_before + p->count)
			return failf(p, "doca_ctx_get_num_inflight_tasks says %zu, expected %zu + %u", inflight,
				     sl->inflight_before, p->count);
		if (publish(p, "server.inflight", "1", 1) != 0)
			return -1;
		return server_set_phase(sl, sl->kase == K_NETFAIL ? PH_BREAK_WAIT : PH_KILL_WAIT);
	}
	case PH_BREAK_WAIT:
	case PH_NOTICE_WAIT:
		return server_netfail_step(p, s);
	case PH_KILL_WAIT: {
		uint32_t done = 0;

		for (uint32_t k = 0; k < p->count; k++)
			done += p->recs[sl->first_kill_rec + k].done;
		if (done < p->count || (sl->failed == 0 && sl->disconnected == 0)) {
			if (age > KILL_DETECT_S)
				return failf(p, "%.0f s after the client was told to die: %u of %u sends completed, "
						"failure callback %d, disconnection callback %d",
					     KILL_DETECT_S, done, p->count, sl->failed, sl->disconnected);
			return 0;
		}
		for (uint32_t k = 0; k < p->count; k++) {
			r = &p->recs[sl->first_kill_rec + k];
			if (r->status == DOCA_SUCCESS || r->where != AT_COMPLETION)
				return failf(p, "slot %u: in-flight send %u ended with %s at %s", s, k,
					     doca_error_get_name(r->status), where_name(r->where));
		}
		note(p, "slot %u: the client died; %u in-flight sends failed with %s within %.2f s; %s callback", s,
		     p->count, doca_error_get_name(p->recs[sl->first_kill_rec].status), age,
		     sl->failed ? "failure" : "disconnection");
		sl->after_rec = post_after_close(p, sl->conn, s, slot_msg_off(p, s) + CTRL_LEN - 64);
		if (sl->after_rec == UINT32_MAX)
			return -1;
		return server_set_phase(sl, PH_AFTER_CHECK);
	}
	case PH_AFTER_CHECK:
		r = &p->recs[sl->after_rec];
		if (!r->done) {
			if (age > TASK_WAIT_S)
				return failf(p, "slot %u: the send on the closed connection never completed", s);
			return 0;
		}
		if (expect_after_close(p, sl->after_rec,
				       sl->kase == K_KILL_CLIENT ? "dead client"
				       : sl->kase == K_NETFAIL || sl->kase == K_NETFAIL_IDLE ? "unreachable client"
											       : "disconnected client") != 0)
			return -1;
		if (sl->kase == K_KILL_CLIENT && publish(p, "server.survived", "1", 1) != 0)
			return -1;
		return server_set_phase(sl, PH_FINISHED);
	case PH_FINISHED:
		return 0;
	}
	return 0;
}

static int server_main(struct peer *p)
{
	double deadline;
	uint32_t finished = 0, established = 0;
	doca_error_t err;

	if (server_setup(p) != 0)
		return -1;
	if (p->method == METHOD_CM) {
		if (server_listen(p) != 0)
			return -1;
	} else if (server_export(p) != 0) {
		return -1;
	}
	deadline = now_s() + SERVE_WAIT_S;
	while (finished < p->clients) {
		if (p->failed_once)
			return -1;
		if (someone_failed(p))
			return failf(p, "another process of the test failed (see its output)");
		if (now_s() > deadline)
			return failf(p, "timed out after %.0f s: %u of %u slots finished, %u accepted, %d requests",
				     SERVE_WAIT_S, finished, p->clients, p->nslots, p->requests);
		progress_wait(p, p->kase == K_SERVER_STOP ? 0 : 10);
		finished = established = 0;
		for (uint32_t s = 0; s < p->nslots; s++) {
			if (server_step(p, s) != 0)
				return -1;
			finished += p->slots[s].phase == PH_FINISHED;
			/* Up: the established callback (RDMA CM), or the
			 * descriptor message sent (export/connect). */
			established += p->method == METHOD_CM ? p->slots[s].established > 0
							      : p->slots[s].phase > PH_DESC_SENT;
		}
		if (!p->full_written && established == p->clients) {
			if (publish(p, "server.full", "1", 1) != 0)
				return -1;
			p->full_written = true;
		}
	}
	if (p->stop_requested) {
		double t0 = now_s();

		err = doca_ctx_stop(p->ctx);
		if (err != DOCA_SUCCESS && err != DOCA_ERROR_IN_PROGRESS)
			return failf(p, "doca_ctx_stop with the client's writes in flight returned %s",
				     doca_error_get_name(err));
		while (p->state != DOCA_CTX_STATE_IDLE) {
			if (now_s() > t0 + STOP_WAIT_S)
				return failf(p, "doca_ctx_stop with the client's writes in flight: not IDLE after %.0f s",
					     STOP_WAIT_S);
			progress_wait(p, 10);
		}
		printf("PASS %s: context stopped (IDLE after %.1f ms) while the client's writes were in flight\n",
		       p->tag, (now_s() - t0) * 1e3);
		return 0;
	}
	if (p->kase == K_MIX) {
		uint64_t want = (uint64_t)p->clients * p->count, got = word_at(p->region, 0);

		if (got != want)
			return failf(p, "shared counter is %" PRIu64 " after %u clients x %u fetch-and-adds of 1", got,
				     p->clients, p->count);
	}
	if (p->method == METHOD_CM) {
		int want = (int)p->clients + (p->answer != ANSWER_ACCEPT);

		if (p->requests != want)
			return failf(p, "%d connection requests reached the request callback, expected %d", p->requests,
				     want);
		CHECK(p, doca_rdma_stop_listen_to_port(p->rdma, p->port));
		err = doca_rdma_stop_listen_to_port(p->rdma, p->port);
		if (err == DOCA_SUCCESS)
			return failf(p, "stopping to listen twice on port %u succeeded", p->port);
		p->listening = false;
	}
	for (uint32_t s = 0; s < p->nslots; s++) {
		const struct slot *sl = &p->slots[s];

		if (sl->established != (p->method == METHOD_CM))
			return failf(p, "slot %u: %d established callbacks (%s)", s, sl->established,
				     p->method == METHOD_CM ? "RDMA CM: exactly one expected"
							    : "export/connect: none expected");
		if (sl->failed + sl->disconnected != 1)
			return failf(p, "slot %u: %d failure and %d disconnection callbacks (one of them expected)", s,
				     sl->failed, sl->disconnected);
		if (sl->kase != K_KILL_CLIENT && sl->kase != K_NETFAIL && sl->kase != K_NETFAIL_IDLE &&
		    sl->disconnected != 1)
			return failf(p, "slot %u: the client disconnected, yet the %s callback fired", s,
				     sl->failed ? "failure" : "?");
	}
	printf("PASS %s: %u slot(s) served and checked byte for byte; %d request(s)%s%s\n", p->tag, p->nslots,
	       p->requests, p->rejected ? ", the first rejected" : "", p->ignored ? ", the first left unanswered" : "");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Client                                                               */

static void client_on_receive(struct peer *p, struct rec *r)
{
	if (r->k != 0 || r->slot != UINT32_MAX - 1)
		failf(p, "client: unexpected receive completion (%u bytes, opcode %d)", r->len, (int)r->opcode);
}

static int loopback_text(const struct peer *p, char *out, size_t len)
{
	snprintf(out, len, "%s", p->family == 6 ? "::1" : "127.0.0.1");
	return 0;
}

/* A TCP socket on loopback port 0: listening (silent) or only bound
 * (refused). */
static int local_socket(struct peer *p, bool do_listen, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(p->family == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return failf(p, "socket: %s", strerror(errno));
	memset(&ss, 0, sizeof(ss));
	if (p->family == 6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || (do_listen && listen(fd, 4) != 0) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
		int e = errno;

		close(fd);
		return failf(p, "bind/listen on loopback: %s", strerror(e));
	}
	*port = ntohs(p->family == 6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

static int server_port(struct peer *p, uint16_t *port)
{
	uint8_t *text = NULL;
	size_t len = 0;
	long v;

	if (wait_file(p, "server.port", FILE_WAIT_S, &text, &len) != 0)
		return -1;
	v = strtol((char *)text, NULL, 10);
	free(text);
	if (v <= 0 || v > 65535)
		return failf(p, "bad port in server.port");
	*port = (uint16_t)v;
	return 0;
}

/* connect_to_addr with a fresh user data; the callbacks tell the rest. */
static int client_connect(struct peer *p, const char *text, uint16_t port, union doca_data *ud_out)
{
	enum doca_rdma_addr_type type = p->family == 6 ? DOCA_RDMA_ADDR_TYPE_IPv6 : DOCA_RDMA_ADDR_TYPE_IPv4;
	enum doca_rdma_addr_type got_type;
	struct doca_rdma_addr *addr = NULL;
	const char *got_text = NULL;
	uint16_t got_port = 0;
	union doca_data u = ud(CLI_UD_BASE + ++p->attempt);
	doca_error_t err;

	CHECK(p, doca_rdma_addr_create(type, text, port, &addr));
	CHECK(p, doca_rdma_addr_get_params(addr, &got_type, &got_text, &got_port));
	if (got_type != type || got_port != port || strcmp(got_text, text) != 0) {
		(void)doca_rdma_addr_destroy(addr);
		return failf(p, "doca_rdma_addr_get_params gives %d \"%s\" %u for %d \"%s\" %u", (int)got_type, got_text,
			     got_port, (int)type, text, port);
	}
	p->established = p->failed = p->disconnected = 0;
	p->est_conn = p->fail_conn = p->disc_conn = NULL;
	err = doca_rdma_connect_to_addr(p->rdma, addr, u);
	(void)doca_rdma_addr_destroy(addr);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_rdma_connect_to_addr(%s port %u) returned %s", text, port, doca_error_get_name(err));
	*ud_out = u;
	return 0;
}

/* One connection attempt that must fail. */
static int client_attempt_fail(struct peer *p, enum pre pre)
{
	char lo[64];
	const char *text = lo;
	uint16_t port = 0;
	int fd = -1, rc = -1;
	union doca_data u;
	double t0, dt, deadline, min_s = 0, max_s = FAST_FAIL_S;
	uint32_t after;

	loopback_text(p, lo, sizeof(lo));
	switch (pre) {
	case PRE_REFUSED:
	case PRE_SILENT:
		fd = local_socket(p, pre == PRE_SILENT, &port);
		if (fd < 0)
			return -1;
		break;
	case PRE_REJECT:
	case PRE_IGNORE:
		if (server_port(p, &port) != 0)
			return -1;
		if (p->addr_text != NULL)
			text = p->addr_text;
		break;
	case PRE_UNREACHABLE:
		if (p->addr_text == NULL)
			return failf(p, "--pre unreachable needs --addr");
		text = p->addr_text;
		port = 9;
		break;
	}
	if (pre == PRE_UNREACHABLE) {
		min_s = 0;
		max_s = (p->timeout_set ? p->timeout_ms : DEFAULT_TIMEOUT_MS) / 1000.0 + TIMEOUT_SLACK_S;
	}
	if (pre == PRE_SILENT || pre == PRE_IGNORE) {
		double tmo = (p->timeout_set ? p->timeout_ms : DEFAULT_TIMEOUT_MS) / 1000.0;

		min_s = tmo * 0.9;
		max_s = tmo + TIMEOUT_SLACK_S;
	}
	t0 = now_s();
	if (client_connect(p, text, port, &u) != 0)
		goto out;
	deadline = t0 + max_s + 5.0;
	while (p->failed == 0 && p->established == 0 && p->disconnected == 0) {
		if (now_s() > deadline) {
			failf(p, "%s: no connection callback %.1f s after doca_rdma_connect_to_addr", pre_names[pre],
			      deadline - t0);
			goto out;
		}
		progress_wait(p, 10);
	}
	dt = now_s() - t0;
	if (p->established || p->disconnected || p->failed != 1) {
		failf(p, "%s: expected the failure callback, got established %d, failure %d, disconnection %d",
		      pre_names[pre], p->established, p->failed, p->disconnected);
		goto out;
	}
	if (p->fail_ud.u64 != u.u64) {
		failf(p, "%s: failure callback with user data 0x%" PRIx64 ", connect_to_addr gave 0x%" PRIx64,
		      pre_names[pre], p->fail_ud.u64, u.u64);
		goto out;
	}
	if (dt < min_s || dt > max_s) {
		failf(p, "%s: failure callback after %.3f s, expected within [%.2f, %.2f] s", pre_names[pre], dt, min_s,
		      max_s);
		goto out;
	}
	/* The failed connection takes no task. */
	after = post_after_close(p, p->fail_conn, UINT32_MAX, CTRL_LEN * 2);
	if (after == UINT32_MAX || wait_recs(p, after, 1, TASK_WAIT_S, "a send on the failed connection") != 0 ||
	    expect_after_close(p, after, pre_names[pre]) != 0)
		goto out;
	note(p, "%s: failure callback after %.3f s", pre_names[pre], dt);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The real connection: CM or export/connect. */
static int client_connect_main(struct peer *p)
{
	union doca_data u = {.u64 = 0};
	double deadline;
	union doca_data got = {.u64 = 0};
	uint16_t port = 0;
	char lo[64];
	const char *text = NULL;

	if (p->method == METHOD_EXPORT) {
		const void *desc;
		size_t len;
		uint8_t *peer = NULL;
		size_t plen = 0;
		char name[64];
		doca_error_t err;

		CHECK(p, doca_rdma_export(p->rdma, &desc, &len, &p->conn));
		u = ud(CLI_UD_BASE + ++p->attempt);
		CHECK(p, doca_rdma_connection_set_user_data(p->conn, u));
		snprintf(name, sizeof(name), "client.conn.%u", p->index);
		if (publish(p, name, desc, len) != 0)
			return -1;
		snprintf(name, sizeof(name), "server.conn.%u", p->index);
		if (wait_file(p, name, FILE_WAIT_S, &peer, &plen) != 0)
			return -1;
		p->established = p->failed = p->disconnected = 0;
		err = doca_rdma_connect(p->rdma, peer, plen, p->conn);
		free(peer);
		if (err != DOCA_SUCCESS)
			return failf(p, "doca_rdma_connect returned %s", doca_error_get_name(err));
		/* No established callback on export/connect (as on hardware):
		 * the server's descriptor message, which our receive posted
		 * before connecting takes, shows the link is up
		 * (client_take_desc). The callback running fails the run. */
		CHECK(p, doca_rdma_connection_get_user_data(p->conn, &got));
		if (got.u64 != u.u64)
			return failf(p, "doca_rdma_connection_get_user_data gives 0x%" PRIx64 ", expected 0x%" PRIx64,
				     got.u64, u.u64);
		return 0;
	}
	/* RDMA CM: exactly one established callback, ours. */
	loopback_text(p, lo, sizeof(lo));
	text = p->addr_text != NULL ? p->addr_text : lo;
	if (server_port(p, &port) != 0 || client_connect(p, text, port, &u) != 0)
		return -1;
	deadline = now_s() + CONNECT_WAIT_S;
	while (p->established == 0) {
		if (p->failed || p->disconnected)
			return failf(p, "the connection %s instead of being established",
				     p->failed ? "failed" : "was disconnected");
		if (someone_failed(p))
			return failf(p, "another process failed while we waited for the connection");
		if (now_s() > deadline)
			return failf(p, "no established callback within %.0f s", CONNECT_WAIT_S);
		progress_wait(p, 10);
	}
	if (p->established != 1 || p->est_ud.u64 != u.u64)
		return failf(p, "established callback x%d with user data 0x%" PRIx64 ", expected 0x%" PRIx64,
			     p->established, p->est_ud.u64, u.u64);
	p->conn = p->est_conn;
	CHECK(p, doca_rdma_connection_get_user_data(p->conn, &got));
	if (got.u64 != u.u64)
		return failf(p, "doca_rdma_connection_get_user_data gives 0x%" PRIx64 ", expected 0x%" PRIx64, got.u64,
			     u.u64);
	if (check_addr(p, p->conn, text, port, "client side") != 0)
		return -1;
	return 0;
}

/* Wait for the server's descriptor message, take the slice it names. */
static int client_take_desc(struct peer *p)
{
	const struct rec *r;
	uint8_t *m = p->q;
	uint64_t off, len, sz;
	uint32_t dlen, kase;
	void *base = NULL;
	size_t rlen = 0;
	doca_error_t err;

	if (wait_recs(p, p->desc_rec, 1, TASK_WAIT_S, "the server's descriptor message") != 0 ||
	    expect_ok(p, p->desc_rec, "receive of the descriptor message") != 0)
		return -1;
	r = &p->recs[p->desc_rec];
	if (r->opcode != DOCA_RDMA_OPCODE_RECV_SEND)
		return failf(p, "descriptor message: opcode %d", (int)r->opcode);
	if (r->conn != p->conn)
		return failf(p, "descriptor message: the receive names connection %p, ours is %p", (const void *)r->conn,
			     (void *)p->conn);
	if (r->len < 48 || get32(m) != MAGIC_DESC)
		return failf(p, "descriptor message: %u bytes, magic 0x%08x", r->len, r->len >= 4 ? get32(m) : 0);
	p->my_slot = get32(m + 4);
	if (p->method == METHOD_EXPORT && p->my_slot != p->index)
		return failf(p, "export/connect client %u got the descriptor message of slot %u", p->index, p->my_slot);
	memcpy(&off, m + 8, 8);
	memcpy(&len, m + 16, 8);
	memcpy(&sz, m + 24, 8);
	kase = get32(m + 36);
	dlen = get32(m + 40);
	if (sz != p->size || get32(m + 32) != p->count)
		return failf(p, "the server runs size %" PRIu64 " count %u; we run %zu, %u", sz, get32(m + 32), p->size,
			     p->count);
	if (kase != (uint32_t)p->kase)
		return failf(p, "the server gave us case %s, we run %s",
			     kase < sizeof(kase_names) / sizeof(kase_names[0]) ? kase_names[kase] : "?",
			     kase_names[p->kase]);
	if (48 + (uint64_t)dlen != r->len)
		return failf(p, "descriptor message of %u bytes holds a %u-byte descriptor", r->len, dlen);
	err = doca_mmap_create_from_export(NULL, m + 48, dlen, p->dev, &p->remote);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_mmap_create_from_export(%u bytes) returned %s", dlen, doca_error_get_name(err));
	CHECK(p, doca_mmap_get_memrange(p->remote, &base, &rlen));
	if (off + len > rlen)
		return failf(p, "slice [%" PRIu64 ", +%" PRIu64 ") outside the %zu-byte remote region", off, len, rlen);
	p->rbase = base;
	p->raddr = (uint8_t *)base + off;
	p->slice_len = len;
	return 0;
}

/* Local working memory of the client: [0, 2*CTRL_LEN + 4096) messages,
 * then data. */
#define CLI_DATA_OFF (2 * CTRL_LEN + 4096)

/* --drop: once the server has sends in flight to us, one send of ours
 * drops the connection (the script's fault rule); we must hear the
 * failure callback, never a disconnection, and our send must end. */
static int client_drop(struct peer *p)
{
	uint8_t *area = p->q + CLI_DATA_OFF;
	struct doca_buf *src;
	double t0, deadline;
	uint32_t i;

	if (wait_file(p, "server.inflight", FILE_WAIT_S, NULL, NULL) != 0)
		return -1;
	if (p->failed || p->disconnected)
		return failf(p, "the connection closed before our send");
	data_msg_fill(area, 64, p->my_slot, 0);
	if (get_buf(p, p->qmmap, area, 64, 64, &src) != 0)
		return -1;
	t0 = now_s();
	i = post_send(p, p->conn, src, p->my_slot, 0);
	deadline = t0 + KILL_DETECT_S;
	while (!p->recs[i].done || (p->failed == 0 && p->disconnected == 0)) {
		if (now_s() > deadline)
			return failf(p, "%.0f s after the send that drops: send %s, failure callback %d, "
					"disconnection callback %d",
				     KILL_DETECT_S, p->recs[i].done ? "done" : "not done", p->failed, p->disconnected);
		progress_wait(p, 10);
	}
	if (p->disconnected || p->failed != 1)
		return failf(p, "the drop gave failure callback %d, disconnection callback %d (want one failure)",
			     p->failed, p->disconnected);
	note(p, "our send dropped the connection; it ended with %s at %s; failure callback after %.3f s",
	     doca_error_get_name(p->recs[i].status), where_name(p->recs[i].where), now_s() - t0);
	return 0;
}

static int client_sends(struct peer *p, bool imm, uint32_t *first)
{
	size_t n = p->size;
	uint8_t *area = p->q + CLI_DATA_OFF;

	*first = p->nrecs;
	for (uint32_t k = 0; k < p->count; k++) {
		struct doca_buf *src;

		data_msg_fill(area + k * n, n, p->my_slot, k);
		if (get_buf(p, p->qmmap, area + k * n, n, n, &src) != 0)
			return -1;
		if (imm)
			(void)post_send_imm(p, p->conn, src, imm_of(IMM_SEND, p->my_slot, k), p->my_slot, k);
		else
			(void)post_send(p, p->conn, src, p->my_slot, k);
	}
	return 0;
}

/* Writes of chunk k into slice chunk dst_chunk0 + k. */
static int client_writes(struct peer *p, bool imm, size_t src_off, uint32_t *first)
{
	size_t n = p->size;
	uint8_t *area = p->q + src_off;

	*first = p->nrecs;
	for (uint32_t k = 0; k < p->count; k++) {
		struct doca_buf *src, *dst;

		pat_fill(area + k * n, n, seed_cli(p->my_slot, k));
		if (get_buf(p, p->qmmap, area + k * n, n, n, &src) != 0 ||
		    get_buf(p, p->remote, p->raddr + k * n, n, 0, &dst) != 0)
			return -1;
		if (imm)
			(void)post_write_imm(p, p->conn, src, dst, imm_of(IMM_WRITE, p->my_slot, k), p->my_slot, k);
		else
			(void)post_write(p, p->conn, src, dst, p->my_slot, k);
	}
	return 0;
}

static int client_reads(struct peer *p, size_t slice_off, size_t dst_off, uint32_t *first)
{
	size_t n = p->size;
	uint8_t *area = p->q + dst_off;

	memset(area, 0, n * p->count);
	*first = p->nrecs;
	for (uint32_t k = 0; k < p->count; k++) {
		struct doca_buf *src, *dst;

		if (get_buf(p, p->remote, p->raddr + slice_off + k * n, n, n, &src) != 0 ||
		    get_buf(p, p->qmmap, area + k * n, n, 0, &dst) != 0)
			return -1;
		(void)post_read(p, p->conn, src, dst, p->my_slot, k);
	}
	return 0;
}

static int client_check_reads(struct peer *p, uint32_t first, size_t dst_off)
{
	size_t n = p->size;
	uint8_t *area = p->q + dst_off;

	for (uint32_t k = 0; k < p->count; k++) {
		const struct rec *r = &p->recs[first + k];
		size_t dl = 0, bad;

		CHECK(p, doca_buf_get_data_len(r->buf, &dl));
		if (dl != n || r->read_len != n)
			return failf(p, "read %u: dst data length %zu, result length %u, expected %zu", k, dl,
				     r->read_len, n);
		bad = pat_check(area + k * n, n, seed_srv(p->my_slot, k), 0);
		if (bad != SIZE_MAX)
			return failf(p, "read %u: byte %zu is 0x%02x, expected 0x%02x", k, bad, area[k * n + bad],
				     pat_byte(seed_srv(p->my_slot, k), bad));
	}
	return 0;
}

static int client_cas(struct peer *p)
{
	uint32_t s = p->my_slot, K = p->count, first;
	uint8_t *res = p->q + CLI_DATA_OFF;
	struct doca_buf **dst = calloc(K, sizeof(*dst)), **rb = calloc(K, sizeof(*rb));
	int rc = -1;

	if (dst == NULL || rb == NULL) {
		failf(p, "out of memory");
		goto out;
	}
	for (uint32_t k = 0; k < K; k++)
		if (get_buf(p, p->remote, p->raddr + 8 * k, 8, 8, &dst[k]) != 0 ||
		    get_buf(p, p->qmmap, res + 8 * k, 8, 0, &rb[k]) != 0)
			goto out;
	/* Round 1: every compare matches. */
	first = p->nrecs;
	for (uint32_t k = 0; k < K; k++)
		(void)post_cas(p, p->conn, dst[k], rb[k], aval(s, k), bval(s, k), s, k);
	if (wait_recs(p, first, K, TASK_WAIT_S, "compare-and-swaps") != 0 ||
	    expect_all_ok(p, first, K, "compare-and-swap") != 0)
		goto out;
	for (uint32_t k = 0; k < K; k++)
		if (word_at(res, k) != aval(s, k)) {
			failf(p, "cas %u returned 0x%016" PRIx64 ", expected 0x%016" PRIx64, k, word_at(res, k), aval(s, k));
			goto out;
		}
	/* Round 2: compare with the old value, which no longer matches. */
	for (uint32_t k = 0; k < K; k++)
		if (doca_buf_reset_data_len(rb[k]) != DOCA_SUCCESS) {
			failf(p, "doca_buf_reset_data_len failed");
			goto out;
		}
	first = p->nrecs;
	for (uint32_t k = 0; k < K; k++)
		(void)post_cas(p, p->conn, dst[k], rb[k], aval(s, k), 0xDEADBEEFDEADBEEFull, s, k);
	if (wait_recs(p, first, K, TASK_WAIT_S, "compare-and-swaps (mismatch)") != 0 ||
	    expect_all_ok(p, first, K, "compare-and-swap (mismatch)") != 0)
		goto out;
	for (uint32_t k = 0; k < K; k++)
		if (word_at(res, k) != bval(s, k)) {
			failf(p, "mismatching cas %u returned 0x%016" PRIx64 ", expected 0x%016" PRIx64, k,
			      word_at(res, k), bval(s, k));
			goto out;
		}
	rc = 0;
out:
	free(dst);
	free(rb);
	return rc;
}

/* K fetch-and-adds of k + 1 on word 0 (RC order: old values are the
 * prefix sums), with `shared`: adds of 1 on the region's shared counter. */
static int client_fadds(struct peer *p, bool shared, uint32_t *first, size_t res_off)
{
	uint32_t s = p->my_slot;
	uint8_t *res = p->q + res_off;
	struct doca_buf *dst;

	if (get_buf(p, p->remote, shared ? p->rbase : p->raddr, 8, 8, &dst) != 0)
		return -1;
	*first = p->nrecs;
	for (uint32_t k = 0; k < p->count; k++) {
		struct doca_buf *rb;

		if (get_buf(p, p->qmmap, res + 8 * k, 8, 0, &rb) != 0)
			return -1;
		(void)post_fadd(p, p->conn, dst, rb, shared ? 1 : k + 1, s, k);
	}
	return 0;
}

static int client_check_fadds(struct peer *p, bool shared, size_t res_off)
{
	uint8_t *res = p->q + res_off;
	uint64_t want = aval(p->my_slot, 0);

	for (uint32_t k = 0; k < p->count; k++) {
		uint64_t got = word_at(res, k);

		if (shared) {
			/* Other clients add too: only our own order shows. */
			if (k > 0 && got <= word_at(res, k - 1))
				return failf(p, "shared fetch-and-add %u returned %" PRIu64 " after %" PRIu64, k, got,
					     word_at(res, k - 1));
			if (got >= (uint64_t)p->count * 256)
				return failf(p, "shared fetch-and-add %u returned %" PRIu64 ", beyond any count", k, got);
			continue;
		}
		if (got != want)
			return failf(p, "fetch-and-add %u returned 0x%016" PRIx64 ", expected 0x%016" PRIx64, k, got,
				     want);
		want += k + 1;
	}
	return 0;
}

static int client_bigread(struct peer *p);

static int client_run_case(struct peer *p)
{
	uint32_t f1 = 0, f2 = 0, f3 = 0, f4 = 0, K = p->count;
	size_t n = p->size, area2 = CLI_DATA_OFF + n * K, area3 = CLI_DATA_OFF + 2 * n * K;

	switch (p->kase) {
	case K_SEND:
	case K_SEND_IMM:
		if (client_sends(p, p->kase == K_SEND_IMM, &f1) != 0 || wait_recs(p, f1, K, TASK_WAIT_S, "sends") != 0)
			return -1;
		return expect_all_ok(p, f1, K, "send");
	case K_WRITE:
	case K_WRITE_IMM:
		if (client_writes(p, p->kase == K_WRITE_IMM, CLI_DATA_OFF, &f1) != 0 ||
		    wait_recs(p, f1, K, TASK_WAIT_S, "writes") != 0)
			return -1;
		return expect_all_ok(p, f1, K, "write");
	case K_READ:
		if (client_reads(p, 0, CLI_DATA_OFF, &f1) != 0 || wait_recs(p, f1, K, TASK_WAIT_S, "reads") != 0 ||
		    expect_all_ok(p, f1, K, "read") != 0)
			return -1;
		return client_check_reads(p, f1, CLI_DATA_OFF);
	case K_CAS:
		return client_cas(p);
	case K_FADD:
		if (client_fadds(p, false, &f1, CLI_DATA_OFF) != 0 ||
		    wait_recs(p, f1, K, TASK_WAIT_S, "fetch-and-adds") != 0 ||
		    expect_all_ok(p, f1, K, "fetch-and-add") != 0)
			return -1;
		return client_check_fadds(p, false, CLI_DATA_OFF);
	case K_BIGREAD:
		return client_bigread(p);
	case K_MIX:
		/* Everything in flight at once. */
		if (client_sends(p, false, &f1) != 0 || client_writes(p, true, area2, &f2) != 0 ||
		    client_reads(p, n * K, area3, &f3) != 0 || client_fadds(p, true, &f4, area3 + n * K) != 0)
			return -1;
		if (wait_recs(p, f1, p->nrecs - f1, TASK_WAIT_S, "mixed tasks") != 0 ||
		    expect_all_ok(p, f1, K, "send") != 0 || expect_all_ok(p, f2, K, "write_imm") != 0 ||
		    expect_all_ok(p, f3, K, "read") != 0 || expect_all_ok(p, f4, K, "shared fetch-and-add") != 0)
			return -1;
		if (client_check_reads(p, f3, area3) != 0)
			return -1;
		return client_check_fadds(p, true, area3 + n * K);
	default:
		return failf(p, "case %s has no client data phase", kase_names[p->kase]);
	}
}

static int client_done(struct peer *p)
{
	uint8_t *m = p->q + CTRL_LEN;
	struct doca_buf *src;
	uint32_t i;

	put32(m, MAGIC_DONE);
	put32(m + 4, p->my_slot);
	put32(m + 8, p->count);
	put32(m + 12, 0);
	if (get_buf(p, p->qmmap, m, 16, 16, &src) != 0)
		return -1;
	i = post_send(p, p->conn, src, p->my_slot, UINT32_MAX);
	if (wait_recs(p, i, 1, TASK_WAIT_S, "the DONE send") != 0)
		return -1;
	return expect_ok(p, i, "DONE send");
}

/* kill_server: K sends the server never receives; then it dies. */
static int client_kill_server(struct peer *p)
{
	uint32_t first, K = p->count, done, after;
	size_t before = 0, inflight = 0;
	double t0, deadline;

	CHECK(p, doca_ctx_get_num_inflight_tasks(p->ctx, &before));
	if (client_sends(p, false, &first) != 0)
		return -1;
	for (uint32_t k = 0; k < K; k++)
		if (p->recs[first + k].done)
			return failf(p, "send %u refused at %s with %s while the server lived", k,
				     where_name(p->recs[first + k].where), doca_error_get_name(p->recs[first + k].status));
	for (deadline = now_s() + INFLIGHT_QUIET_S; now_s() < deadline;)
		progress_wait(p, 10);
	for (uint32_t k = 0; k < K; k++)
		if (p->recs[first + k].done)
			return failf(p, "send %u completed (%s) while the server lived and posted no receive", k,
				     doca_error_get_name(p->recs[first + k].status));
	if (p->failed || p->disconnected)
		return failf(p, "connection closed before the server was told to die");
	CHECK(p, doca_ctx_get_num_inflight_tasks(p->ctx, &inflight));
	if (inflight != before + K)
		return failf(p, "doca_ctx_get_num_inflight_tasks says %zu, expected %zu + %u", inflight, before, K);
	if (publish(p, "client.inflight", "1", 1) != 0)
		return -1;
	t0 = now_s();
	for (;;) {
		done = 0;
		for (uint32_t k = 0; k < K; k++)
			done += p->recs[first + k].done;
		if (done == K && (p->failed || p->disconnected))
			break;
		if (now_s() > t0 + KILL_DETECT_S)
			return failf(p, "%.0f s after the server was told to die: %u of %u sends completed, failure "
					"callback %d, disconnection callback %d",
				     KILL_DETECT_S, done, K, p->failed, p->disconnected);
		progress_wait(p, 10);
	}
	for (uint32_t k = 0; k < K; k++) {
		const struct rec *r = &p->recs[first + k];

		if (r->status == DOCA_SUCCESS || r->where != AT_COMPLETION)
			return failf(p, "in-flight send %u ended with %s at %s", k, doca_error_get_name(r->status),
				     where_name(r->where));
	}
	if ((p->failed ? p->fail_conn : p->disc_conn) != p->conn)
		return failf(p, "the %s callback names connection %p, ours is %p", p->failed ? "failure" : "disconnection",
			     (void *)(p->failed ? p->fail_conn : p->disc_conn), (void *)p->conn);
	note(p, "the server died; %u in-flight sends failed with %s within %.2f s; %s callback", K,
	     doca_error_get_name(p->recs[first].status), now_s() - t0, p->failed ? "failure" : "disconnection");
	after = post_after_close(p, p->conn, p->my_slot, CTRL_LEN * 2);
	if (after == UINT32_MAX || wait_recs(p, after, 1, TASK_WAIT_S, "a send after the server died") != 0)
		return -1;
	return expect_after_close(p, after, "dead server");
}

/* netfail: K sends in flight (the server posts no receive), then, once
 * the script broke the path, K writes too: every one must fail and the
 * connection end within the bound; netfail_idle: nothing in flight. */
static int client_netfail(struct peer *p)
{
	uint32_t K = p->kase == K_NETFAIL ? p->count : 0, first = p->nrecs, ndone0 = p->ndone, wfirst, done, after;
	size_t before = 0, inflight = 0;
	double t0, dt, deadline, bound = notice_bound_s();

	CHECK(p, doca_ctx_get_num_inflight_tasks(p->ctx, &before));
	if (K > 0 && client_sends(p, false, &first) != 0)
		return -1;
	for (deadline = now_s() + INFLIGHT_QUIET_S; now_s() < deadline;)
		progress_wait(p, 10);
	if (p->ndone != ndone0 || p->failed || p->disconnected)
		return failf(p, "before the path was broken: %u of %u tasks in flight completed, failure callback %d, "
				"disconnection callback %d",
			     p->ndone - ndone0, K, p->failed, p->disconnected);
	CHECK(p, doca_ctx_get_num_inflight_tasks(p->ctx, &inflight));
	if (inflight != before + K)
		return failf(p, "doca_ctx_get_num_inflight_tasks says %zu, expected %zu + %u", inflight, before, K);
	if (publish(p, "client.inflight", K ? "1" : "0", 1) != 0 ||
	    wait_file(p, "path.broken", FILE_WAIT_S, NULL, NULL) != 0)
		return -1;
	t0 = now_s();
	if (p->failed || p->disconnected || p->ndone != ndone0)
		return failf(p, "the connection ended (failure %d, disconnection %d) or a task completed before the "
				"path was broken",
			     p->failed, p->disconnected);
	wfirst = p->nrecs;
	if (K > 0 && client_writes(p, false, CLI_DATA_OFF + p->size * K, &wfirst) != 0)
		return -1;
	for (;;) {
		done = p->ndone;
		if (done == p->nrecs && (p->failed || p->disconnected))
			break;
		if (now_s() > t0 + bound)
			return failf(p, "%.2f s after the path broke (bound: %s + %.1f s): %u of %u tasks completed "
					"(%u sends in flight before, %u writes after), failure callback %d, "
					"disconnection callback %d",
				     now_s() - t0, CONN_TIMEOUT_ENV, NOTICE_SLACK_S, done - ndone0, p->nrecs - first, K,
				     K, p->failed, p->disconnected);
		progress_wait(p, 10);
	}
	dt = now_s() - t0;
	if (expect_all_failed(p, first, K, "in-flight send") != 0 ||
	    expect_all_failed(p, wfirst, K, "write posted after the break") != 0)
		return -1;
	if ((p->failed ? p->fail_conn : p->disc_conn) != p->conn)
		return failf(p, "the %s callback names connection %p, ours is %p", p->failed ? "failure" : "disconnection",
			     (void *)(p->failed ? p->fail_conn : p->disc_conn), (void *)p->conn);
	note(p, "noticed after %.2f s (bound %.1f s): %s callback; %u send(s) and %u write(s) in flight failed%s%s", dt,
	     bound, p->failed ? "failure" : "disconnection", K, K, K ? " with " : "",
	     K ? doca_error_get_name(p->recs[first].status) : "");
	after = post_after_close(p, p->conn, p->my_slot, CTRL_LEN * 2);
	if (after == UINT32_MAX || wait_recs(p, after, 1, TASK_WAIT_S, "a send after the path broke") != 0)
		return -1;
	return expect_after_close(p, after, "unreachable server");
}

/* bigread: --count reads of --size bytes (one at a time), each checked. */
static int client_bigread(struct peer *p)
{
	uint8_t *area = p->q + CLI_DATA_OFF;
	size_t n = p->size;

	for (uint32_t k = 0; k < p->count; k++) {
		struct doca_buf *src, *dst;
		uint32_t i;
		double t0 = now_s();
		size_t bad;

		memset(area, 0, n);
		if (get_buf(p, p->remote, p->raddr + k * n, n, n, &src) != 0 || get_buf(p, p->qmmap, area, n, 0, &dst) != 0)
			return -1;
		i = post_read(p, p->conn, src, dst, p->my_slot, k);
		if (wait_recs(p, i, 1, BIGREAD_WAIT_S, "a big read") != 0 || expect_ok(p, i, "big read") != 0)
			return -1;
		if (p->recs[i].read_len != n)
			return failf(p, "read %u: result length %u, expected %zu", k, p->recs[i].read_len, n);
		bad = wpat_check(area, n, seed_srv(p->my_slot, 0) + k * n);
		if (bad != SIZE_MAX)
			return failf(p, "read %u: word at byte %zu differs from the server's slice", k, bad);
		note(p, "read %u of %zu B took %.2f s (%.0f MB/s); %s %s", k, n, now_s() - t0,
		     n / (now_s() - t0) / 1e6, CONN_TIMEOUT_ENV,
		     getenv(CONN_TIMEOUT_ENV) ? getenv(CONN_TIMEOUT_ENV) : "(unset: 8000)");
	}
	return 0;
}

/* server_stop: K writes in flight, then the server stops its context. */
static int client_server_stop(struct peer *p)
{
	uint32_t first, K = p->count, done, ok = 0, after;
	double t0;

	if (client_writes(p, false, CLI_DATA_OFF, &first) != 0 || publish(p, "client.inflight", "1", 1) != 0)
		return -1;
	t0 = now_s();
	for (;;) {
		done = 0;
		for (uint32_t k = 0; k < K; k++)
			done += p->recs[first + k].done;
		if (done == K && (p->failed || p->disconnected))
			break;
		if (now_s() > t0 + KILL_DETECT_S)
			return failf(p, "%.0f s after the server was told to stop: %u of %u writes completed, failure "
					"callback %d, disconnection callback %d",
				     KILL_DETECT_S, done, K, p->failed, p->disconnected);
		progress_wait(p, 10);
	}
	for (uint32_t k = 0; k < K; k++)
		ok += p->recs[first + k].status == DOCA_SUCCESS;
	if (ok == K)
		note(p, "every write completed before the server stopped (nothing was in flight at the stop)");
	note(p, "server stopped: %u of %u writes succeeded, the rest failed; %s callback after %.2f s", ok, K,
	     p->failed ? "failure" : "disconnection", now_s() - t0);
	after = post_after_close(p, p->conn, p->my_slot, CTRL_LEN * 2);
	if (after == UINT32_MAX || wait_recs(p, after, 1, TASK_WAIT_S, "a send after the server stopped") != 0)
		return -1;
	return expect_after_close(p, after, "stopped server");
}

/* Open p->squat TCP connections to the server that never say a word. */
static int squat_open(struct peer *p)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint16_t port = 0;

	if (p->family != 4)
		return failf(p, "--squat works over IPv4");
	if (server_port(p, &port) != 0)
		return -1;
	sa.sin_port = htons(port);
	p->squat_t0 = now_s();
	for (uint32_t i = 0; i < p->squat; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return failf(p, "squat socket %u: %s", i, strerror(errno));
		p->squat_fd[i] = fd;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			return failf(p, "squat socket %u: connect to port %u: %s", i, port, strerror(errno));
	}
	note(p, "%u idle connections open to port %u", p->squat, port);
	return publish(p, "squat.ready", "1", 1);
}

/* Every idle socket must be closed by the server: the ones dropped for
 * newcomers at once, the others by the header deadline. */
static int squat_check(struct peer *p)
{
	uint32_t evicted = p->squat + 1 > SQUAT_PRE_MAX ? p->squat + 1 - SQUAT_PRE_MAX : 0;
	double deadline = p->squat_t0 + SQUAT_HDR_S + TIMEOUT_SLACK_S, last = 0;

	for (uint32_t i = 0; i < p->squat; i++) {
		struct pollfd pfd = {.fd = p->squat_fd[i], .events = POLLIN};
		char byte;
		double at;
		ssize_t n;

		for (;;) {
			int left_ms = (int)((deadline - now_s()) * 1e3);

			if (poll(&pfd, 1, left_ms > 0 ? left_ms : 0) > 0)
				break;
			if (now_s() >= deadline)
				return failf(p, "idle socket %u still open %.1f s after it connected", i,
					     now_s() - p->squat_t0);
		}
		at = now_s() - p->squat_t0;
		n = recv(p->squat_fd[i], &byte, 1, 0);
		if (n > 0)
			return failf(p, "idle socket %u: the server sent data to a socket that sent no request", i);
		if (i < evicted && at > SQUAT_EVICT_S)
			return failf(p, "idle socket %u (among the %u oldest of %u) closed only after %.2f s: the oldest "
				     "must go at once when more than %u sockets wait",
				     i, evicted, p->squat, at, SQUAT_PRE_MAX);
		if (at > last)
			last = at;
	}
	note(p, "the server closed all %u idle sockets (%u dropped for newcomers) within %.2f s", p->squat, evicted,
	     last);
	return 0;
}

static int client_main(struct peer *p)
{
	struct doca_buf *dst;
	uint32_t K = p->count, after;
	doca_error_t err;
	double t0;

	p->q_len = CLI_DATA_OFF + (p->kase == K_MIX ? 3 : p->kase == K_NETFAIL ? 2 : 1) * p->size * K +
		   8 * (size_t)K + 4096;
	if (p->kase == K_BIGREAD)
		p->q_len = CLI_DATA_OFF + p->size + 4096; /* one read at a time */
	if (setup_common(p, 1, 4, 4 * K + 16, PERM_LRW) != 0)
		return -1;
	/* The descriptor message's receive, posted before any connection. */
	if (get_buf(p, p->qmmap, p->q, CTRL_LEN, 0, &dst) != 0)
		return -1;
	p->desc_rec = post_receive(p, dst, UINT32_MAX - 1);
	if (p->recs[p->desc_rec].done)
		return failf(p, "posting the receive failed with %s", doca_error_get_name(p->recs[p->desc_rec].status));
	if (p->after != NULL && wait_file(p, p->after, FILE_WAIT_S, NULL, NULL) != 0)
		return -1;

	for (int i = 0; i < p->npre; i++)
		if (client_attempt_fail(p, p->pre[i]) != 0)
			return -1;
	if (p->kase == K_ATTEMPTS) {
		printf("PASS %s: %d connection attempt(s) failed as they must\n", p->tag, p->npre);
		return 0;
	}
	if (p->kase == K_OVERFLOW) {
		/* The server has all the connections it may have. */
		if (client_attempt_fail(p, PRE_REJECT) != 0)
			return -1;
		printf("PASS %s: connecting past the server's maximum of connections failed\n", p->tag);
		return 0;
	}
	if (p->squat > 0 && squat_open(p) != 0)
		return -1;
	t0 = now_s();
	if (client_connect_main(p) != 0)
		return -1;
	if (p->squat > 0 && now_s() - t0 > FAST_FAIL_S)
		return failf(p, "with %u idle sockets open, the connection took %.2f s (at most %.1f s)", p->squat,
			     now_s() - t0, FAST_FAIL_S);
	if (client_take_desc(p) != 0)
		return -1;
	if (p->kase == K_KILL_CLIENT && p->drop) {
		if (client_drop(p) != 0)
			return -1;
		printf("PASS %s: our send dropped the connection under the server's %u in-flight sends\n", p->tag, K);
		return 0;
	}
	if (p->kase == K_KILL_CLIENT) {
		if (wait_file(p, "server.inflight", FILE_WAIT_S, NULL, NULL) != 0)
			return -1;
		note(p, "the server has sends in flight to us; dying now (SIGKILL)");
		raise(SIGKILL);
	}
	if (p->kase == K_NETFAIL || p->kase == K_NETFAIL_IDLE) {
		if (client_netfail(p) != 0)
			return -1;
		printf("PASS %s: the path broke with %u task(s) in flight and we noticed\n", p->tag,
		       p->kase == K_NETFAIL ? 2 * K : 0);
		return 0;
	}
	if (p->kase == K_SERVER_STOP) {
		if (client_server_stop(p) != 0)
			return -1;
		printf("PASS %s: the server stopped its context under %u writes of %zu B; we noticed\n", p->tag, K,
		       p->size);
		return 0;
	}
	if (p->kase == K_KILL_SERVER) {
		if (client_kill_server(p) != 0)
			return -1;
		printf("PASS %s: %d failed attempt(s), then the server died under %u in-flight sends and we noticed\n",
		       p->tag, p->npre, K);
		return 0;
	}
	if (client_run_case(p) != 0 || client_done(p) != 0)
		return -1;
	if (p->squat > 0 && squat_check(p) != 0)
		return -1;
	if (p->hold != NULL && wait_file(p, p->hold, FILE_WAIT_S, NULL, NULL) != 0)
		return -1;
	err = doca_rdma_connection_disconnect(p->conn);
	if (err != DOCA_SUCCESS)
		return failf(p, "doca_rdma_connection_disconnect returned %s", doca_error_get_name(err));
	after = post_after_close(p, p->conn, p->my_slot, CTRL_LEN * 2);
	if (after == UINT32_MAX || wait_recs(p, after, 1, TASK_WAIT_S, "a send after our disconnect") != 0 ||
	    expect_after_close(p, after, "after our disconnect") != 0)
		return -1;
	if (p->failed)
		return failf(p, "failure callback on our connection (%d)", p->failed);
	if (p->established != (p->method == METHOD_CM))
		return failf(p, "%d established callbacks (%s)", p->established,
			     p->method == METHOD_CM ? "RDMA CM: exactly one expected" : "export/connect: none expected");
	printf("PASS %s: slot %u, %d failed attempt(s) first, %s exchange verified in %.1f ms\n", p->tag, p->my_slot,
	       p->npre, kase_names[p->kase], (now_s() - t0) * 1e3);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Options                                                              */

static void usage(FILE *f)
{
	fprintf(f, "usage: cm_peer --role server|client --dir DIR --case CASE [--clients N] [--answer accept|"
		   "reject-first|ignore-first]\n"
		   "               [--method cm|export] [--family 4|6] [--addr TEXT] [--peer-addr TEXT] [--index I]\n"
		   "               [--pre refused,silent,reject,ignore] [--after FILE] [--hold FILE]\n"
		   "               [--signal FILE] [--squat N] [--drop]\n"
		   "               [--device IBDEV] [--size N] [--count K] [--timeout-ms MS]\n"
		   "cases:");
	for (size_t i = 0; i < sizeof(kase_names) / sizeof(kase_names[0]); i++)
		fprintf(f, " %s", kase_names[i]);
	fprintf(f, "\n");
}

static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
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
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (*end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_pre(struct peer *p, const char *list)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(pre_names) / sizeof(pre_names[0]); i++)
			if (strcmp(t, pre_names[i]) == 0)
				break;
		if (i == sizeof(pre_names) / sizeof(pre_names[0]) || p->npre == MAX_PRE)
			return -1;
		p->pre[p->npre++] = (enum pre)i;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"role", required_argument, NULL, 'r'},	     {"dir", required_argument, NULL, 'd'},
		{"case", required_argument, NULL, 'c'},	     {"clients", required_argument, NULL, 'N'},
		{"answer", required_argument, NULL, 'a'},    {"method", required_argument, NULL, 'm'},
		{"family", required_argument, NULL, 'f'},    {"addr", required_argument, NULL, 'A'},
		{"peer-addr", required_argument, NULL, 'P'}, {"index", required_argument, NULL, 'i'},
		{"pre", required_argument, NULL, 'p'},	     {"after", required_argument, NULL, 'w'},
		{"hold", required_argument, NULL, 'H'},	     {"device", required_argument, NULL, 'D'},
		{"size", required_argument, NULL, 's'},	     {"count", required_argument, NULL, 'n'},
		{"timeout-ms", required_argument, NULL, 't'}, {"signal", required_argument, NULL, 'S'},
		{"squat", required_argument, NULL, 'Q'},	     {"help", no_argument, NULL, 'h'},
		{"drop", no_argument, NULL, 'X'},
		{NULL, 0, NULL, 0},
	};
	struct peer p = {.device = "soft_lo", .family = 4, .clients = 1, .size = 4096, .count = 32,
			 .state = DOCA_CTX_STATE_IDLE};
	struct doca_log_backend *sdk_log = NULL;
	const char *role = NULL, *case_name = NULL;
	unsigned long long v;
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
		case 'N':
			if (parse_num(optarg, MAX_SLOTS, &v) != 0 || v == 0)
				goto bad;
			p.clients = (uint32_t)v;
			break;
		case 'a':
			if (strcmp(optarg, "accept") == 0)
				p.answer = ANSWER_ACCEPT;
			else if (strcmp(optarg, "reject-first") == 0)
				p.answer = ANSWER_REJECT_FIRST;
			else if (strcmp(optarg, "ignore-first") == 0)
				p.answer = ANSWER_IGNORE_FIRST;
			else
				goto bad;
			break;
		case 'm':
			if (strcmp(optarg, "cm") == 0)
				p.method = METHOD_CM;
			else if (strcmp(optarg, "export") == 0)
				p.method = METHOD_EXPORT;
			else
				goto bad;
			break;
		case 'f':
			if (strcmp(optarg, "4") != 0 && strcmp(optarg, "6") != 0)
				goto bad;
			p.family = optarg[0] - '0';
			break;
		case 'A':
			p.addr_text = optarg;
			break;
		case 'P':
			p.peer_addr = optarg;
			break;
		case 'i':
			if (parse_num(optarg, MAX_SLOTS - 1, &v) != 0)
				goto bad;
			p.index = (uint32_t)v;
			break;
		case 'p':
			if (parse_pre(&p, optarg) != 0)
				goto bad;
			break;
		case 'w':
			p.after = optarg;
			break;
		case 'H':
			p.hold = optarg;
			break;
		case 'S':
			p.signal = optarg;
			break;
		case 'Q':
			if (parse_num(optarg, MAX_SQUAT, &v) != 0)
				goto bad;
			p.squat = (uint32_t)v;
			break;
		case 'X':
			p.drop = true;
			break;
		case 'D':
			p.device = optarg;
			break;
		case 's':
			if (parse_num(optarg, 1u << 30, &v) != 0 || v < 16)
				goto bad;
			p.size = (size_t)v;
			break;
		case 'n':
			if (parse_num(optarg, 1024, &v) != 0 || v == 0)
				goto bad;
			p.count = (uint32_t)v;
			break;
		case 't':
			if (parse_num(optarg, 65535, &v) != 0 || v == 0)
				goto bad;
			p.timeout_ms = (uint16_t)v;
			p.timeout_set = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (role == NULL || p.dir == NULL || case_name == NULL || optind != argc)
		goto bad;
	if (strcmp(role, "server") == 0)
		p.role = ROLE_SERVER;
	else if (strcmp(role, "client") == 0)
		p.role = ROLE_CLIENT;
	else
		goto bad;
	{
		size_t i;

		for (i = 0; i < sizeof(kase_names) / sizeof(kase_names[0]); i++)
			if (strcmp(case_name, kase_names[i]) == 0)
				break;
		if (i == sizeof(kase_names) / sizeof(kase_names[0]))
			goto bad;
		p.kase = (enum kase)i;
	}
	if (p.kase == K_CAS || p.kase == K_FADD)
		p.size = 8 * ((size_t)p.count + 8);
	if (p.role == ROLE_SERVER && (p.kase == K_OVERFLOW || p.kase == K_ATTEMPTS))
		goto bad;
	if (p.kase == K_KILL_CLIENT && p.role == ROLE_SERVER && p.clients < 2)
		p.clients = 2; /* slot 1: the client that comes after the victim */
	snprintf(p.tag, sizeof(p.tag), "%s %s %s%s", role, case_name,
		 p.method == METHOD_CM ? (p.family == 6 ? "cm/IPv6" : "cm/IPv4") : "export/connect",
		 p.npre > 0 ? " +pre" : "");
	if (p.role == ROLE_CLIENT)
		snprintf(p.tag + strlen(p.tag), sizeof(p.tag) - strlen(p.tag), " pid %d", (int)getpid());
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Library messages at WARNING and above go to stderr. */
	if (doca_log_backend_create_with_file_sdk(stderr, &sdk_log) == DOCA_SUCCESS)
		(void)doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);

	watchdog_arm(&p, RUN_WATCHDOG_S, "the run");
	watchdog_step = "the test's own code (no library call)";
	for (uint32_t i = 0; i < MAX_SQUAT; i++)
		p.squat_fd[i] = -1;
	rc = p.role == ROLE_SERVER ? server_main(&p) : client_main(&p);
	if (p.failed_once && rc == 0)
		rc = -1; /* a FAIL printed by a callback (e.g. established on export/connect) */
	if (p.signal != NULL)
		(void)write_file(&p, p.signal, "1", 1);
	if (teardown(&p) != 0 || p.failed_once)
		rc = -1;
	for (uint32_t s = 0; s < MAX_SLOTS; s++) {
		free(p.slots[s].got_send);
		free(p.slots[s].got_wimm);
	}
	for (uint32_t i = 0; i < MAX_SQUAT; i++)
		if (p.squat_fd[i] >= 0)
			close(p.squat_fd[i]);
	free(p.recs);
	free(p.bufs);
	free(p.region);
	free(p.q);
	return rc == 0 ? 0 : 1;
bad:
	usage(stderr);
	return 2;
}
