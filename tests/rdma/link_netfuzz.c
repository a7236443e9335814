/*
 * link_netfuzz — a network fuzzer for softdoca's TCP link (link_tcp.c):
 * malformed, truncated, oversized, slow and unauthenticated frames
 * against a live server's link port, and after every round an honest
 * client that must still be served.
 *
 *   link_netfuzz --corpus DIR [--seed N] [--budget S] [--rounds N]
 *                [--crash-dir DIR] [--replay FILE]
 *   link_netfuzz --serve           the server (internal)
 *   link_netfuzz --write-seeds DIR write the seed corpus (see below)
 *
 * The server is this program run again (--serve, a process of its own,
 * so a crash is seen as its death): a doca_rdma context on soft_lo with
 * UCX_TLS=tcp (only the TCP link), SRV_CONNS connection slots, receives
 * posted, and a REGION_LEN region between two CANARY_LEN canaries,
 * exported with RDMA read, write and atomic permissions. It answers one
 * command line at a time on stdin/stdout (MMAP, EXPORT, CONNECT, DROP,
 * CHECK: see serve_command) and sleeps on its PE's notification and on
 * stdin in between: the library's service thread serves the link.
 *
 * A round takes one seed of the corpus, mutates it (bit flips, special
 * values in frame header fields and elsewhere, cuts, copies, deletions,
 * insertions, splices with another seed; four rounds in ten only inside
 * frames' engine headers and payloads, so that the framing holds and the
 * engine's own checks get the bytes), has the server export a
 * connection for it, and sends it in one of three ways the seed's first
 * byte names:
 *   0 raw    on a fresh connection to the link port, no AUTH of ours
 *            (the seed may carry one: the AUTH parser is fuzzed too)
 *   1 auth   after a valid AUTH for the round's connection (exported,
 *            never connected)
 *   2 live   the server connected that connection to a peer of ours
 *            (its AUTH and HELLO checked, everything it sends read: a
 *            rendezvous offer is fetched, so its send path runs); our
 *            AUTH and HELLO, then the input frame by frame, a DATA frame
 *            waiting (bounded) for the server's CTS of its RTS; then a
 *            probe (a zero-length read) whose answer, if the connection
 *            lives, shows everything before it was judged
 * raw and auth inputs go at once, in random chunks, or a few bytes at a
 * time. Then our end (shutdown), and the server must close within
 * FAST_CLOSE_MS; or, one raw round in 16 that does not start with a valid
 * AUTH, silence, and the server must close within SLOW_CLOSE_MS (the
 * link gives a socket 2 s to authenticate). Then the connection is
 * dropped. Seeds name the live values (connection ids and secrets, the
 * region's id, secret and address) with placeholders (the corpus format,
 * ../fuzz/link_seed.h, which fuzz_link reads too): mutations work on
 * that form, which is what a failure leaves for --replay, and the round
 * fills in its values before sending.
 *
 * After every round: the server lives, its canaries are unchanged, its
 * descriptors come back within FD_SLACK of where they started (bounded
 * wait), and an honest client (a doca_rdma context of this process)
 * connects, writes 4 KiB (eager) and 48 KiB (rendezvous) into the
 * region, reads them back and finds its bytes. At the end its heap and
 * resident size must not have grown past HEAP_GROWTH_MAX / RSS_GROWTH_MAX
 * since the warm-up rounds. A failure prints the round's input (hex),
 * writes it to --crash-dir (replay it with --replay FILE, same seed),
 * the server's last log lines, and exits 1. 77: no soft_lo device.
 *
 * Seeds (--write-seeds; committed in tests/fuzz/corpus/link): small
 * files, first byte the way, then the stream.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
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
#include <doca_types.h>

#include "../fuzz/link_seed.h"
#include "link_tcp_wire.h"
#include "mmap.h"
#include "wire.h"

/* ---- bounds ------------------------------------------------------------- */

#define SRV_CONNS 8
#define NRECV 8
#define RECV_LEN 4096
#define REGION_LEN (64u * 1024u)
#define CANARY_LEN 4096u
#define CANARY_BYTE 0xCA
#define HONEST_SMALL 4096u           /* eager */
#define HONEST_LARGE (48u * 1024u)   /* rendezvous */
#define INPUT_MAX (128u * 1024u)
#define CMD_WAIT_MS 5000             /* a server command's answer */
#define CONNECT_MS 2000
#define FAST_CLOSE_MS 2000           /* after our end: the server closes by then */
#define SLOW_CLOSE_MS 3500           /* silent, unauthenticated: the link's 2 s, and slack */
#define LIVE_WAIT_MS 2000            /* the server's connection to our peer, its AUTH and HELLO */
#define CTS_WAIT_MS 300              /* a DATA frame waits this long for its CTS */
#define PROBE_WAIT_MS 300            /* the probe's answer, if the connection lives */
#define HONEST_WAIT_MS 8000          /* the honest client's connection and tasks */
#define FD_SLACK 6
#define FD_SETTLE_MS 3000
#define WARMUP_ROUNDS 30
#define HEAP_GROWTH_MAX (16u << 20)
#define RSS_GROWTH_MAX (48u << 20)
#define SLOW_MAX_BYTES 256           /* longer inputs are not sent byte by byte */
/* Under AddressSanitizer mallinfo2 says nothing and its quarantine
 * grows the resident size: the memory bounds are not checked then. */
#if defined(__SANITIZE_ADDRESS__)
#define MEMORY_CHECKED false
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMORY_CHECKED false
#endif
#endif
#ifndef MEMORY_CHECKED
#define MEMORY_CHECKED true
#endif

#define OUR_ID 0x4e46u               /* our connection id in live rounds */

/* The corpus format (placeholders, ways): ../fuzz/link_seed.h. */
#define WAY_RAW LINK_WAY_RAW
#define WAY_AUTH LINK_WAY_AUTH
#define WAY_LIVE LINK_WAY_LIVE

/* ---- small things ----------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rng_state = 0x6c696e6b66757a7aull;

/* xorshift64*: a seed gives the same rounds every run. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static uint64_t below(uint64_t n)
{
	return n == 0 ? 0 : rng() % n;
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void hex_encode(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hex_digit(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode hex text into b (at most cap bytes); the length, or -1. */
static ssize_t hex_decode(const char *s, uint8_t *b, size_t cap)
{
	size_t n = 0;

	while (s[0] != '\0' && s[0] != '\n' && s[0] != ' ') {
		int hi = hex_digit(s[0]), lo = hex_digit(s[1]);

		if (hi < 0 || lo < 0 || n == cap)
			return -1;
		b[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return (ssize_t)n;
}

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
	return n - 1; /* the directory's own */
}

static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ======================================================================== */
/* A doca_rdma context on soft_lo: the server, and the honest client.       */

struct node {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_mmap *mmap;       /* our memory */
	struct doca_mmap *rmmap;      /* client: the server's region */
	struct doca_mmap *rxmmap;     /* server: its receive buffers */
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	size_t mem_len;
	enum doca_ctx_states state;
	bool server;
	/* server: connection slots (user data: the index) */
	struct {
		struct doca_rdma_connection *conn;
		bool open;
	} slot[SRV_CONNS];
	uint32_t exports;
	/* client: the connection of the honest round and its events
	 * (established must stay 0: export/connect, see honest_round) */
	int established, closed;
	int tasks_ok, tasks_err;
};

static int node_fail(const char *what, doca_error_t err)
{
	fprintf(stderr, "link_netfuzz: %s: %s\n", what, doca_error_get_name(err));
	return -1;
}

#define TRY(call)                                                \
	do {                                                     \
		doca_error_t err_ = (call);                      \
		if (err_ != DOCA_SUCCESS)                        \
			return node_fail(#call, err_);           \
	} while (0)

static void progress_wait(struct node *n, int max_ms)
{
	doca_notification_handle_t fd;
	struct pollfd p;

	if (doca_pe_progress(n->pe))
		return;
	if (doca_pe_get_notification_handle(n->pe, &fd) != DOCA_SUCCESS ||
	    doca_pe_request_notification(n->pe) != DOCA_SUCCESS) {
		poll(NULL, 0, 1);
		return;
	}
	if (doca_pe_progress(n->pe) == 0) {
		p = (struct pollfd){.fd = fd, .events = POLLIN};
		(void)poll(&p, 1, max_ms);
	}
	(void)doca_pe_clear_notification(n->pe, fd);
}

static uint8_t *region_of(struct node *n)
{
	return n->mem + CANARY_LEN;
}

/* ---- callbacks --------------------------------------------------------------- */

static doca_error_t post_receive(struct node *n, uint32_t i);

static void receive_cb(struct doca_rdma_task_receive *t, union doca_data tud, union doca_data cud)
{
	struct node *n = cud.ptr;

	(void)doca_buf_dec_refcount(doca_rdma_task_receive_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_receive_as_task(t));
	if (n->state == DOCA_CTX_STATE_RUNNING)
		(void)post_receive(n, (uint32_t)tud.u64);
}

static void write_cb(struct doca_rdma_task_write *t, union doca_data tud, union doca_data cud, bool ok)
{
	struct node *n = cud.ptr;

	(void)tud;
	(void)doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_write_get_src_buf(t), NULL);
	(void)doca_buf_dec_refcount(doca_rdma_task_write_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_write_as_task(t));
	ok ? n->tasks_ok++ : n->tasks_err++;
}

static void write_ok_cb(struct doca_rdma_task_write *t, union doca_data tud, union doca_data cud)
{
	write_cb(t, tud, cud, true);
}

static void write_err_cb(struct doca_rdma_task_write *t, union doca_data tud, union doca_data cud)
{
	write_cb(t, tud, cud, false);
}

static void read_cb(struct doca_rdma_task_read *t, union doca_data tud, union doca_data cud, bool ok)
{
	struct node *n = cud.ptr;

	(void)tud;
	(void)doca_buf_dec_refcount((struct doca_buf *)doca_rdma_task_read_get_src_buf(t), NULL);
	(void)doca_buf_dec_refcount(doca_rdma_task_read_get_dst_buf(t), NULL);
	doca_task_free(doca_rdma_task_read_as_task(t));
	ok ? n->tasks_ok++ : n->tasks_err++;
}

static void read_ok_cb(struct doca_rdma_task_read *t, union doca_data tud, union doca_data cud)
{
	read_cb(t, tud, cud, true);
}

static void read_err_cb(struct doca_rdma_task_read *t, union doca_data tud, union doca_data cud)
{
	read_cb(t, tud, cud, false);
}

static void established_cb(struct doca_rdma_connection *conn, union doca_data uud, union doca_data cud)
{
	struct node *n = cud.ptr;

	(void)conn;
	(void)uud;
	if (!n->server)
		n->established++;
}

static void closed_cb(struct doca_rdma_connection *conn, union doca_data uud, union doca_data cud)
{
	struct node *n = cud.ptr;

	(void)conn;
	if (n->server && uud.u64 < SRV_CONNS)
		n->slot[uud.u64].open = false;
	if (!n->server)
		n->closed++;
}

static void state_cb(const union doca_data cud, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	struct node *n = cud.ptr;

	(void)ctx;
	(void)prev;
	n->state = next;
}

/* ---- set up ---------------------------------------------------------------------- */

static doca_error_t post_receive(struct node *n, uint32_t i)
{
	struct doca_rdma_task_receive *t;
	struct doca_buf *buf;
	uint8_t *at = n->mem + 2 * CANARY_LEN + REGION_LEN + (size_t)i * RECV_LEN;
	union doca_data ud = {.u64 = i};
	doca_error_t err;

	err = doca_buf_inventory_buf_get_by_addr(n->inv, n->rxmmap, at, RECV_LEN, &buf);
	if (err != DOCA_SUCCESS)
		return err;
	err = doca_rdma_task_receive_allocate_init(n->rdma, buf, ud, &t);
	if (err == DOCA_SUCCESS) {
		err = doca_task_submit(doca_rdma_task_receive_as_task(t));
		if (err != DOCA_SUCCESS)
			doca_task_free(doca_rdma_task_receive_as_task(t));
	}
	if (err != DOCA_SUCCESS)
		(void)doca_buf_dec_refcount(buf, NULL);
	return err;
}

/* 1 when there is no soft_lo device. */
static int node_open_dev(struct node *n)
{
	struct doca_devinfo **list = NULL;
	uint32_t count = 0;

	TRY(doca_devinfo_create_list(&list, &count));
	for (uint32_t i = 0; i < count && n->dev == NULL; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "soft_lo") == 0 && doca_dev_open(list[i], &n->dev) != DOCA_SUCCESS)
			n->dev = NULL;
	}
	doca_devinfo_destroy_list(list);
	return n->dev == NULL ? 1 : 0;
}

/* The server: canary, region (its exported mmap), canary, then the
 * receive buffers (a local mmap of their own). The client: a source and
 * a destination area. */
static int node_start(struct node *n, bool server)
{
	union doca_data cud = {.ptr = n};
	uint32_t perms = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE |
			 DOCA_ACCESS_FLAG_RDMA_ATOMIC;
	int rc;

	n->server = server;
	rc = node_open_dev(n);
	if (rc != 0)
		return rc;
	n->mem_len = server ? 2 * CANARY_LEN + REGION_LEN + NRECV * RECV_LEN : 2 * REGION_LEN;
	n->mem = aligned_alloc(4096, n->mem_len);
	if (n->mem == NULL)
		return node_fail("aligned_alloc", DOCA_ERROR_NO_MEMORY);
	memset(n->mem, 0, n->mem_len);
	if (server) {
		memset(n->mem, CANARY_BYTE, CANARY_LEN);
		memset(n->mem + CANARY_LEN + REGION_LEN, CANARY_BYTE, CANARY_LEN);
	}
	TRY(doca_mmap_create(&n->mmap));
	if (server)
		TRY(doca_mmap_set_memrange(n->mmap, region_of(n), REGION_LEN));
	else
		TRY(doca_mmap_set_memrange(n->mmap, n->mem, n->mem_len));
	TRY(doca_mmap_set_permissions(n->mmap, server ? perms : DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	TRY(doca_mmap_add_dev(n->mmap, n->dev));
	TRY(doca_mmap_start(n->mmap));
	if (server) {
		TRY(doca_mmap_create(&n->rxmmap));
		TRY(doca_mmap_set_memrange(n->rxmmap, n->mem + 2 * CANARY_LEN + REGION_LEN, NRECV * RECV_LEN));
		TRY(doca_mmap_set_permissions(n->rxmmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
		TRY(doca_mmap_add_dev(n->rxmmap, n->dev));
		TRY(doca_mmap_start(n->rxmmap));
	}
	TRY(doca_buf_inventory_create(64, &n->inv));
	TRY(doca_buf_inventory_start(n->inv));
	TRY(doca_pe_create(&n->pe));
	TRY(doca_rdma_create(n->dev, &n->rdma));
	n->ctx = doca_rdma_as_ctx(n->rdma);
	TRY(doca_rdma_set_permissions(n->rdma, server ? perms : DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	TRY(doca_rdma_set_max_num_connections(n->rdma, server ? SRV_CONNS : 2));
	TRY(doca_rdma_task_receive_set_conf(n->rdma, receive_cb, receive_cb, NRECV));
	TRY(doca_rdma_task_write_set_conf(n->rdma, write_ok_cb, write_err_cb, 8));
	TRY(doca_rdma_task_read_set_conf(n->rdma, read_ok_cb, read_err_cb, 8));
	TRY(doca_rdma_set_connection_state_callbacks(n->rdma, NULL, established_cb, closed_cb, closed_cb));
	TRY(doca_ctx_set_user_data(n->ctx, cud));
	TRY(doca_ctx_set_state_changed_cb(n->ctx, state_cb));
	TRY(doca_pe_connect_ctx(n->pe, n->ctx));
	TRY(doca_ctx_start(n->ctx));
	for (double end = now_ms() + CMD_WAIT_MS; n->state != DOCA_CTX_STATE_RUNNING;) {
		if (now_ms() > end)
			return node_fail("the context did not reach RUNNING", DOCA_ERROR_TIME_OUT);
		progress_wait(n, 10);
	}
	return 0;
}

/* ======================================================================== */
/* --serve                                                                  */

/* Canaries intact? */
static bool canaries_ok(struct node *n)
{
	const uint8_t *hi = n->mem + CANARY_LEN + REGION_LEN;

	for (size_t i = 0; i < CANARY_LEN; i++)
		if (n->mem[i] != CANARY_BYTE || hi[i] != CANARY_BYTE)
			return false;
	return true;
}

static void reply(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* One command line:
 *   MMAP               -> MMAP <hex of the region's export>
 *   EXPORT             -> DESC <slot> <hex> (a new connection) | ERR ...
 *   CONNECT <slot> <hex> -> OK | ERR <status> (doca_rdma_connect)
 *   DROP <slot>        -> OK (events delivered, then disconnected if open)
 *   CHECK              -> CHECK <canaries 1|0> <fds> <rss KiB> <heap B> <slots open> */
static void serve_command(struct node *n, char *line)
{
	static char hex[2 * (WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN) + 1];
	static uint8_t bytes[WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN];
	const void *desc;
	size_t len;
	unsigned int s;
	doca_error_t err;

	if (strncmp(line, "MMAP", 4) == 0) {
		err = doca_mmap_export_rdma(n->mmap, n->dev, &desc, &len);
		if (err != DOCA_SUCCESS || 2 * len >= sizeof(hex)) {
			reply("ERR %s\n", doca_error_get_name(err));
			return;
		}
		hex_encode(desc, len, hex);
		reply("MMAP %s\n", hex);
	} else if (strncmp(line, "EXPORT", 6) == 0) {
		for (s = 0; s < SRV_CONNS && n->slot[s].open; s++)
			;
		if (s == SRV_CONNS) {
			reply("ERR FULL\n");
			return;
		}
		err = doca_rdma_export(n->rdma, &desc, &len, &n->slot[s].conn);
		if (err != DOCA_SUCCESS || 2 * len >= sizeof(hex)) {
			reply("ERR %s\n", doca_error_get_name(err));
			return;
		}
		(void)doca_rdma_connection_set_user_data(n->slot[s].conn, (union doca_data){.u64 = s});
		n->slot[s].open = true;
		n->exports++;
		hex_encode(desc, len, hex);
		reply("DESC %u %s\n", s, hex);
	} else if (sscanf(line, "CONNECT %u ", &s) == 1 && s < SRV_CONNS && n->slot[s].open) {
		ssize_t got = hex_decode(strchr(line + 8, ' ') + 1, bytes, sizeof(bytes));

		err = got < 0 ? DOCA_ERROR_INVALID_VALUE :
				doca_rdma_connect(n->rdma, bytes, (size_t)got, n->slot[s].conn);
		reply(err == DOCA_SUCCESS ? "OK\n" : "ERR %s\n", doca_error_get_name(err));
	} else if (sscanf(line, "DROP %u", &s) == 1 && s < SRV_CONNS) {
		/* Closing events raised by the round first (a failure, the
		 * peer's BYE), then ours. */
		for (int i = 0; i < 4; i++)
			(void)doca_pe_progress(n->pe);
		if (n->slot[s].open)
			(void)doca_rdma_connection_disconnect(n->slot[s].conn);
		n->slot[s].open = false;
		for (int i = 0; i < 4; i++)
			(void)doca_pe_progress(n->pe);
		reply("OK\n");
	} else if (strncmp(line, "CHECK", 5) == 0) {
		struct mallinfo2 mi = mallinfo2();
		int open = 0;

		for (s = 0; s < SRV_CONNS; s++)
			open += n->slot[s].open;
		reply("CHECK %d %d %ld %zu %d\n", canaries_ok(n) ? 1 : 0, count_fds(), rss_kib(), mi.uordblks, open);
	} else {
		reply("ERR unknown command\n");
	}
}

static int serve(void)
{
	static char line[2 * (WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN) + 64];
	struct node n = {0};
	size_t used = 0;
	int rc;

	rc = node_start(&n, true);
	if (rc != 0) {
		reply("%s\n", rc == 1 ? "NODEV" : "FAILED");
		return rc == 1 ? 77 : 1;
	}
	for (uint32_t i = 0; i < NRECV; i++)
		TRY(post_receive(&n, i));
	reply("READY\n");
	/* Commands until stdin closes (the fuzzer went away). */
	for (;;) {
		doca_notification_handle_t efd;
		struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = -1}};
		ssize_t got;
		char *nl;

		if (doca_pe_get_notification_handle(n.pe, &efd) == DOCA_SUCCESS &&
		    doca_pe_request_notification(n.pe) == DOCA_SUCCESS)
			p[1] = (struct pollfd){.fd = efd, .events = POLLIN};
		if (doca_pe_progress(n.pe) == 0)
			(void)poll(p, 2, 100);
		if (p[1].fd >= 0)
			(void)doca_pe_clear_notification(n.pe, efd);
		if (!(p[0].revents & (POLLIN | POLLHUP)))
			continue;
		got = read(STDIN_FILENO, line + used, sizeof(line) - 1 - used);
		if (got <= 0)
			break;
		used += (size_t)got;
		line[used] = '\0';
		while ((nl = strchr(line, '\n')) != NULL) {
			*nl = '\0';
			serve_command(&n, line);
			used -= (size_t)(nl + 1 - line);
			memmove(line, nl + 1, used + 1);
		}
		if (used == sizeof(line) - 1)
			used = 0; /* a line too long for any command */
	}
	fprintf(stderr, "link_netfuzz server: %u connections exported, canaries %s\n", n.exports,
		canaries_ok(&n) ? "intact" : "CHANGED");
	return 0;
}

/* ======================================================================== */
/* The fuzzer's side                                                        */

static struct {
	const char *self;
	pid_t pid;
	int to, from;        /* its stdin, its stdout */
	char log[PATH_MAX];  /* its stderr */
	char buf[2 * (WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN) + 64];
	size_t used;
	struct lt_addr link; /* its link port */
	uint8_t mmap_desc[1024];
	size_t mmap_len;
	int status;          /* how it ended (waitpid) */
	int base_fds;
	long warm_rss;
	size_t warm_heap;
} srv = {.pid = -1, .to = -1, .from = -1};

/* What the placeholders stand for in this round. */
static struct link_seed_values ids;
static int failures;
static char why[512];
static bool verbose;

__attribute__((format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	failures++;
}

/* A line from the server (bounded wait); NULL if it died or took too long. */
static char *srv_line(int wait_ms)
{
	double end = now_ms() + wait_ms;

	for (;;) {
		char *nl = memchr(srv.buf, '\n', srv.used);
		struct pollfd p = {.fd = srv.from, .events = POLLIN};
		ssize_t got;

		if (nl != NULL) {
			static char line[sizeof(srv.buf)];
			size_t n = (size_t)(nl - srv.buf);

			memcpy(line, srv.buf, n);
			line[n] = '\0';
			srv.used -= n + 1;
			memmove(srv.buf, nl + 1, srv.used);
			return line;
		}
		if (now_ms() > end || srv.used == sizeof(srv.buf))
			return NULL;
		if (poll(&p, 1, (int)(end - now_ms()) + 1) <= 0)
			continue;
		got = read(srv.from, srv.buf + srv.used, sizeof(srv.buf) - srv.used);
		if (got <= 0)
			return NULL;
		srv.used += (size_t)got;
	}
}

/* Send a command, read its answer line. */
__attribute__((format(printf, 1, 2))) static char *srv_cmd(const char *fmt, ...)
{
	static char cmd[sizeof(srv.buf)];
	va_list ap;
	size_t len, off = 0;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	len = strlen(cmd);
	while (off < len) {
		ssize_t n = write(srv.to, cmd + off, len - off);

		if (n <= 0)
			return NULL;
		off += (size_t)n;
	}
	return srv_line(CMD_WAIT_MS);
}

/* Whether the server runs; once it ended, srv.status says how. */
static bool srv_alive(void)
{
	if (srv.pid > 0 && waitpid(srv.pid, &srv.status, WNOHANG) == srv.pid)
		srv.pid = -1;
	return srv.pid > 0;
}

static int srv_start(const char *dir)
{
	int in[2], out[2], logfd;
	char *line;

	snprintf(srv.log, sizeof(srv.log), "%s/server.log", dir);
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return -1;
	logfd = open(srv.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0)
		return -1;
	srv.pid = fork();
	if (srv.pid < 0)
		return -1;
	if (srv.pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		dup2(logfd, STDERR_FILENO);
		setenv("UCX_TLS", "tcp", 1);
		setenv("UCX_NET_DEVICES", "lo", 1);
		execl("/proc/self/exe", srv.self, "--serve", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(logfd);
	srv.to = in[1];
	srv.from = out[0];
	line = srv_line(20000);
	if (line == NULL || strcmp(line, "READY") != 0)
		return line != NULL && strcmp(line, "NODEV") == 0 ? 77 : -1;
	return 0;
}

static void srv_stop(void)
{
	int status;

	if (srv.to >= 0)
		close(srv.to);
	srv.to = -1;
	if (srv.pid > 0) {
		double end = now_ms() + 5000;

		while (waitpid(srv.pid, &status, WNOHANG) == 0) {
			if (now_ms() > end) {
				kill(srv.pid, SIGKILL);
				(void)waitpid(srv.pid, &status, 0);
				break;
			}
			poll(NULL, 0, 10);
		}
	}
	srv.pid = -1;
}

/* The server's view: canaries, fds, rss, heap. */
struct srv_check {
	int canaries, fds, open;
	long rss;
	size_t heap;
};

static bool srv_check(struct srv_check *c)
{
	char *line = srv_cmd("CHECK\n");

	return line != NULL && sscanf(line, "CHECK %d %d %ld %zu %d", &c->canaries, &c->fds, &c->rss, &c->heap,
				      &c->open) == 5;
}

/* EXPORT: a new server connection; its slot and descriptor. */
static int srv_export(uint8_t *desc, size_t cap, size_t *len, unsigned int *slot, struct wire_desc *d)
{
	char *line = srv_cmd("EXPORT\n"), *hex;
	ssize_t got;

	if (line == NULL || sscanf(line, "DESC %u ", slot) != 1 || (hex = strchr(line + 5, ' ')) == NULL)
		return -1;
	got = hex_decode(hex + 1, desc, cap);
	if (got <= 0 || wire_desc_parse(desc, (size_t)got, d) != DOCA_SUCCESS || !d->has_tcp)
		return -1;
	*len = (size_t)got;
	return 0;
}

/* ---- sockets ------------------------------------------------------------------------ */

static void sockaddr_of(const struct lt_addr *a, struct sockaddr_storage *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	if (a->family == 4) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		memcpy(&in->sin_addr, a->addr, 4);
		*len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a->port);
		memcpy(&in6->sin6_addr, a->addr, 16);
		*len = sizeof(*in6);
	}
}

static int dial(const struct lt_addr *a)
{
	struct sockaddr_storage sa;
	struct pollfd p = {.events = POLLOUT};
	socklen_t len, el = sizeof(int);
	int fd, one = 1, err = 0;

	sockaddr_of(a, &sa, &len);
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, len) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	p.fd = fd;
	if (poll(&p, 1, CONNECT_MS) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send all (bounded); false when the server closed on us. */
static bool send_bytes(int fd, const uint8_t *b, size_t len)
{
	double end = now_ms() + CONNECT_MS;
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, b + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR) && now_ms() < end) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};

			(void)poll(&p, 1, 10);
			continue;
		}
		return false;
	}
	return true;
}

/* Whether the server closed fd by deadline (what it sends is dropped). */
static bool closed_by(int fd, double deadline)
{
	uint8_t junk[4096];

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
		double left = deadline - now_ms();
		ssize_t n;

		if (left <= 0)
			return false;
		if (poll(&p, 1, (int)left + 1) <= 0)
			continue;
		n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
}

/* ---- what the server sends a live peer of ours ------------------------------------------ */

/* The server's connection to our peer: a frame reader. It fetches every
 * payload the server offers (CTS for its RTS: its send path runs) and
 * records the CTS it gives our RTS and answers to our probe. */
struct reader {
	int fd;
	uint8_t buf[LT_FRAME_HDR + LT_HDR_MAX + LT_MSG_MAX];
	size_t len;
	bool authed, hello, broken;
	uint64_t data_left;      /* DATA payload bytes still to skip */
	uint64_t cts_ids[64];    /* CTS the server gave our RTS */
	uint32_t ncts;
	uint64_t probe_wr_id;
	bool probe_answered;
};

static struct reader rd;

/* Queue-free: the few control frames we answer with go straight out. */
static int live_out = -1;

static void reader_frame(struct reader *r, const struct lt_frame *f, const uint8_t *at)
{
	if (f->type == LT_RTS && live_out >= 0) {
		struct lt_frame cts = {.type = LT_CTS, .id = f->id, .len = f->len};
		uint8_t b[LT_FRAME_HDR];

		lt_frame_build(b, &cts);
		(void)send_bytes(live_out, b, sizeof(b));
	} else if (f->type == LT_CTS && r->ncts < 64) {
		r->cts_ids[r->ncts++] = f->id;
	} else if (f->type == LT_MSG && f->am_id == WIRE_AM_HELLO) {
		r->hello = true;
	} else if (f->type == LT_MSG && f->am_id == WIRE_AM_RESP && f->hdr_len >= sizeof(struct wire_resp)) {
		struct wire_resp resp;

		memcpy(&resp, at + LT_FRAME_HDR, sizeof(resp));
		if (resp.wr_id == r->probe_wr_id)
			r->probe_answered = true;
	}
}

/* Read what the server sent. False once it is gone or broke the protocol. */
static bool reader_pump(struct reader *r)
{
	size_t at = 0;
	ssize_t n;

	if (r->fd < 0 || r->broken)
		return false;
	n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - r->len, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		r->broken = true;
		return false;
	}
	if (n > 0)
		r->len += (size_t)n;
	while (at < r->len) {
		struct lt_frame f;

		if (r->data_left > 0) {
			size_t take = r->len - at < r->data_left ? r->len - at : (size_t)r->data_left;

			at += take;
			r->data_left -= take;
			continue;
		}
		if (!r->authed) {
			struct lt_auth a;

			if (r->len - at < LT_FRAME_HDR + LT_AUTH_LEN)
				break;
			if (lt_frame_parse(r->buf + at, &f) != DOCA_SUCCESS || f.type != LT_AUTH ||
			    lt_auth_parse(r->buf + at + LT_FRAME_HDR, LT_AUTH_LEN, &a) != DOCA_SUCCESS ||
			    a.conn_id != ids.our_id || memcmp(a.secret, ids.our_secret, ENGINE_SECRET_LEN) != 0) {
				fail("the server's AUTH to our peer does not name our connection %u and its secret",
				     ids.our_id);
				r->broken = true;
				return false;
			}
			r->authed = true;
			at += LT_FRAME_HDR + LT_AUTH_LEN;
			continue;
		}
		if (r->len - at < LT_FRAME_HDR)
			break;
		if (lt_frame_parse(r->buf + at, &f) != DOCA_SUCCESS || f.type == LT_AUTH) {
			fail("the server sent our peer a malformed frame (type %u)", r->buf[at]);
			r->broken = true;
			return false;
		}
		if (f.type == LT_DATA) {
			at += LT_FRAME_HDR;
			r->data_left = f.len;
			continue;
		}
		if (r->len - at < lt_frame_inline_len(&f))
			break;
		reader_frame(r, &f, r->buf + at);
		at += lt_frame_inline_len(&f);
	}
	memmove(r->buf, r->buf + at, r->len - at);
	r->len -= at;
	return true;
}

/* Pump the reader until cond holds or the deadline. */
static bool reader_wait(struct reader *r, double deadline, bool (*cond)(const struct reader *, uint64_t),
			uint64_t arg)
{
	while (!cond(r, arg)) {
		struct pollfd p = {.fd = r->fd, .events = POLLIN};

		if (now_ms() >= deadline || r->broken)
			return false;
		if (poll(&p, 1, (int)(deadline - now_ms()) + 1) > 0 && !reader_pump(r))
			return cond(r, arg);
	}
	return true;
}

static bool has_hello(const struct reader *r, uint64_t unused)
{
	(void)unused;
	return r->authed && r->hello;
}

static bool has_cts(const struct reader *r, uint64_t id)
{
	for (uint32_t i = 0; i < r->ncts; i++)
		if (r->cts_ids[i] == id)
			return true;
	return false;
}

static bool has_probe(const struct reader *r, uint64_t unused)
{
	(void)unused;
	return r->probe_answered;
}

/* ---- frames ------------------------------------------------------------------------------- */

static size_t frame(uint8_t *b, uint8_t type, uint16_t am_id, const void *hdr, size_t hdr_len, uint64_t len,
		    uint64_t id)
{
	struct lt_frame f = {.type = type, .am_id = am_id, .hdr_len = (uint32_t)hdr_len, .len = len, .id = id};

	lt_frame_build(b, &f);
	if (hdr_len > 0)
		memcpy(b + LT_FRAME_HDR, hdr, hdr_len);
	return LT_FRAME_HDR + hdr_len;
}

static size_t auth_frame(uint8_t *b, uint32_t conn_id, const uint8_t *secret)
{
	struct lt_auth a = {.conn_id = conn_id};
	uint8_t body[LT_AUTH_LEN];

	memcpy(a.secret, secret, ENGINE_SECRET_LEN);
	lt_auth_build(body, &a);
	return frame(b, LT_AUTH, 0, body, LT_AUTH_LEN, 0, 0);
}

/* A MSG frame whose payload (len bytes of fill) follows it. */
static size_t msg_frame(uint8_t *b, uint16_t am_id, const void *hdr, size_t hdr_len, size_t len, uint8_t fill)
{
	size_t n = frame(b, LT_MSG, am_id, hdr, hdr_len, len, 0);

	memset(b + n, fill, len);
	return n + len;
}

/* A request header with placeholders for every live value. */
static struct wire_req ph_req(uint8_t opcode, uint16_t off, uint64_t length, uint64_t wr_id)
{
	struct wire_req r = {.version = WIRE_VERSION, .opcode = opcode, .length = length, .wr_id = wr_id};

	r.dst_conn_id = LINK_PH_SRV_ID;
	memset(r.dst_secret, LINK_PH_SRV_SECRET, ENGINE_SECRET_LEN);
	r.src_conn_id = LINK_PH_OUR_ID;
	memset(&r.region_id, LINK_PH_REGION_ID, sizeof(r.region_id));
	memset(r.region_secret, LINK_PH_REGION_SECRET, ENGINE_SECRET_LEN);
	memset(&r.remote_addr, LINK_PH_ADDR, sizeof(r.remote_addr));
	put_le((uint8_t *)&r.remote_addr, off, 2);
	return r;
}

static struct wire_hello ph_hello(void)
{
	struct wire_hello h = {.version = WIRE_VERSION, .dst_conn_id = LINK_PH_SRV_ID, .src_conn_id = LINK_PH_OUR_ID};

	memset(h.dst_secret, LINK_PH_SRV_SECRET, ENGINE_SECRET_LEN);
	memset(h.src_secret, LINK_PH_OUR_SECRET, ENGINE_SECRET_LEN);
	return h;
}

/* Replace the placeholders in b with this round's values. */
static void fill_placeholders(uint8_t *b, size_t len)
{
	link_seed_fill(b, len, &ids);
}

/* ---- seeds ---------------------------------------------------------------------------------- */

struct seed {
	char name[NAME_MAX + 1];
	uint8_t way;
	uint8_t *bytes;
	size_t len;
};

static struct seed *seeds;
static size_t nseeds;

static int write_seed(const char *dir, const char *name, uint8_t way, const uint8_t *b, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fputc(way, f) == EOF || fwrite(b, 1, len, f) != len) {
		if (f != NULL)
			fclose(f);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* The seed corpus: one of each frame and engine message, in each way. */
static int write_seeds(const char *dir)
{
	static uint8_t b[64 * 1024];
	struct wire_hello hello = ph_hello();
	struct wire_req r;
	uint8_t secret[ENGINE_SECRET_LEN];
	size_t n;
	int rc = 0;

	memset(secret, LINK_PH_SRV_SECRET, sizeof(secret));
	/* raw: the AUTH parser, and frames where an AUTH belongs */
	n = auth_frame(b, LINK_PH_SRV_ID, secret);
	rc |= write_seed(dir, "raw-auth", WAY_RAW, b, n);
	n += msg_frame(b + n, WIRE_AM_HELLO, &hello, sizeof(hello), 0, 0);
	rc |= write_seed(dir, "raw-auth-hello", WAY_RAW, b, n);
	n = msg_frame(b, WIRE_AM_HELLO, &hello, sizeof(hello), 0, 0);
	rc |= write_seed(dir, "raw-hello", WAY_RAW, b, n);
	n = frame(b, LT_CTS, 0, NULL, 0, 64, 1);
	n += frame(b + n, LT_DATA, 0, NULL, 0, 32, 1);
	memset(b + n, 0xEE, 32);
	rc |= write_seed(dir, "raw-cts-data", WAY_RAW, b, n + 32);
	/* auth: an exported, unconnected connection */
	n = msg_frame(b, WIRE_AM_HELLO, &hello, sizeof(hello), 0, 0);
	r = ph_req(ENGINE_OP_WRITE, 0, 64, 1);
	n += msg_frame(b + n, WIRE_AM_REQ, &r, sizeof(r), 64, 0xEE);
	rc |= write_seed(dir, "auth-hello-write", WAY_AUTH, b, n);
	r = ph_req(ENGINE_OP_WRITE, 0, 20000, 2);
	n = frame(b, LT_RTS, WIRE_AM_REQ, &r, sizeof(r), 20000, 1);
	n += frame(b + n, LT_DATA, 0, NULL, 0, 64, 1);
	memset(b + n, 0xEE, 64);
	rc |= write_seed(dir, "auth-rts-data", WAY_AUTH, b, n + 64);
	/* live: the server connected to our peer */
	r = ph_req(ENGINE_OP_WRITE, 64, 64, 1);
	n = msg_frame(b, WIRE_AM_REQ, &r, sizeof(r), 64, 0x11);
	r = ph_req(ENGINE_OP_READ, 0, 256, 2);
	n += msg_frame(b + n, WIRE_AM_REQ, &r, sizeof(r), 0, 0);
	rc |= write_seed(dir, "live-write-read", WAY_LIVE, b, n);
	r = ph_req(ENGINE_OP_ATOMIC_FADD, 8, 8, 3);
	r.operand = 5;
	n = msg_frame(b, WIRE_AM_REQ, &r, sizeof(r), 0, 0);
	r = ph_req(ENGINE_OP_ATOMIC_CAS, 16, 8, 4);
	r.compare = 0;
	r.operand = 7;
	n += msg_frame(b + n, WIRE_AM_REQ, &r, sizeof(r), 0, 0);
	rc |= write_seed(dir, "live-atomics", WAY_LIVE, b, n);
	/* A payload offered by RTS (the engine's own sender does that above
	 * 16 KiB; the receiver takes any size), then read back: the server
	 * answers a read above 16 KiB by RTS. */
	r = ph_req(ENGINE_OP_WRITE, 1024, 2048, 5);
	n = frame(b, LT_RTS, WIRE_AM_REQ, &r, sizeof(r), 2048, 1);
	n += frame(b + n, LT_DATA, 0, NULL, 0, 2048, 1);
	memset(b + n, 0x22, 2048);
	n += 2048;
	r = ph_req(ENGINE_OP_READ, 1024, 20000, 6);
	n += msg_frame(b + n, WIRE_AM_REQ, &r, sizeof(r), 0, 0);
	rc |= write_seed(dir, "live-rndv-write-read", WAY_LIVE, b, n);
	{
		/* A batch of three writes: header, then each request, its
		 * payload, padded to 8 bytes. */
		uint8_t body[3 * (sizeof(struct wire_req) + 16)];
		struct wire_batch bt = {.version = WIRE_VERSION, .count = 3};
		size_t off = 0;

		for (int i = 0; i < 3; i++) {
			r = ph_req(ENGINE_OP_WRITE, (uint16_t)(2048 + 16 * i), 16, 10 + (uint64_t)i);
			memcpy(body + off, &r, sizeof(r));
			memset(body + off + sizeof(r), 0x30 + i, 16);
			off += wire_pad8(sizeof(r) + 16);
		}
		n = frame(b, LT_MSG, WIRE_AM_BATCH, &bt, sizeof(bt), off, 0);
		memcpy(b + n, body, off);
		rc |= write_seed(dir, "live-batch", WAY_LIVE, b, n + off);
	}
	r = ph_req(ENGINE_OP_SEND, 0, 100, 20);
	r.remote_addr = 0;
	r.region_id = 0;
	memset(r.region_secret, 0, ENGINE_SECRET_LEN);
	n = msg_frame(b, WIRE_AM_REQ, &r, sizeof(r), 100, 0x44);
	rc |= write_seed(dir, "live-send", WAY_LIVE, b, n);
	{
		struct wire_ack ack = {.version = WIRE_VERSION, .dst_conn_id = LINK_PH_SRV_ID, .wr_id = 1};
		struct wire_resp resp = {.version = WIRE_VERSION, .opcode = ENGINE_OP_READ, .dst_conn_id = LINK_PH_SRV_ID,
					 .wr_id = 1, .result_len = 16};
		struct wire_ping ping = {.version = WIRE_VERSION, .dst_conn_id = LINK_PH_SRV_ID};

		memset(ack.dst_secret, LINK_PH_SRV_SECRET, ENGINE_SECRET_LEN);
		memset(resp.dst_secret, LINK_PH_SRV_SECRET, ENGINE_SECRET_LEN);
		memset(ping.dst_secret, LINK_PH_SRV_SECRET, ENGINE_SECRET_LEN);
		n = msg_frame(b, WIRE_AM_ACK, &ack, sizeof(ack), 0, 0);
		n += msg_frame(b + n, WIRE_AM_RESP, &resp, sizeof(resp), 16, 0x55);
		n += msg_frame(b + n, WIRE_AM_PING, &ping, sizeof(ping), 0, 0);
		rc |= write_seed(dir, "live-ack-resp-ping", WAY_LIVE, b, n);
	}
	{
		struct wire_bye bye = {.version = WIRE_VERSION, .dst_conn_id = LINK_PH_SRV_ID};

		memset(bye.dst_secret, LINK_PH_SRV_SECRET, ENGINE_SECRET_LEN);
		n = msg_frame(b, WIRE_AM_BYE, &bye, sizeof(bye), 0, 0);
		rc |= write_seed(dir, "live-bye", WAY_LIVE, b, n);
	}
	r = ph_req(ENGINE_OP_SYNC_ADD, 0, 0, 30);
	r.operand = 1;
	n = msg_frame(b, WIRE_AM_REQ, &r, sizeof(r), 0, 0);
	rc |= write_seed(dir, "live-sync", WAY_LIVE, b, n);
	return rc == 0 ? 0 : -1;
}

static int load_seeds(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d == NULL) {
		fprintf(stderr, "link_netfuzz: corpus %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX];
		uint8_t *buf = malloc(INPUT_MAX + 1);
		struct seed *ns;
		FILE *f;
		size_t n;

		if (e->d_name[0] == '.' || buf == NULL) {
			free(buf);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
		n = f != NULL ? fread(buf, 1, INPUT_MAX + 1, f) : 0;
		if (f != NULL)
			fclose(f);
		ns = realloc(seeds, (nseeds + 1) * sizeof(*seeds));
		if (n < 1 || n > INPUT_MAX || buf[0] > WAY_LIVE || ns == NULL) {
			free(buf);
			if (ns != NULL)
				seeds = ns;
			continue;
		}
		seeds = ns;
		snprintf(seeds[nseeds].name, sizeof(seeds[nseeds].name), "%s", e->d_name);
		seeds[nseeds].way = buf[0];
		seeds[nseeds].len = n - 1;
		memmove(buf, buf + 1, n - 1);
		seeds[nseeds].bytes = buf;
		nseeds++;
	}
	closedir(d);
	if (nseeds == 0) {
		fprintf(stderr, "link_netfuzz: no seeds in %s\n", dir);
		return -1;
	}
	/* readdir's order is the file system's: sort for a stable run. */
	for (size_t i = 1; i < nseeds; i++)
		for (size_t j = i; j > 0 && strcmp(seeds[j - 1].name, seeds[j].name) > 0; j--) {
			struct seed t = seeds[j];

			seeds[j] = seeds[j - 1];
			seeds[j - 1] = t;
		}
	return 0;
}

/* ---- mutations ---------------------------------------------------------------------------- */

/* Frame header offsets in b, as far as the headers hold together. */
static size_t frame_offsets(const uint8_t *b, size_t len, size_t *offs, size_t max)
{
	size_t n = 0, at = 0;

	while (at + LT_FRAME_HDR <= len && n < max) {
		uint32_t hdr_len = (uint32_t)get_le(b + at + 4, 4);
		uint64_t flen = get_le(b + at + 8, 8);
		uint64_t step = LT_FRAME_HDR + (uint64_t)hdr_len;

		if (b[at + 1] != LT_MAGIC)
			break;
		offs[n++] = at;
		if (b[at] == LT_MSG || b[at] == LT_DATA)
			step += flen;
		if (step > len - at)
			break;
		at += (size_t)step;
	}
	return n;
}

static uint64_t special_value(void)
{
	static const uint64_t v[] = {0, 1, 2, 7, 8, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000,
				     LT_HDR_MAX, LT_HDR_MAX + 1, LT_MSG_MAX, LT_MSG_MAX + 1, LT_DATA_MAX,
				     LT_DATA_MAX + 1, 0x7fffffff, 0x80000000u, 0xffffffffu, 0x100000000ull,
				     LT_RNDV_MAX, LT_RNDV_MAX + 1, UINT64_MAX / 2, UINT64_MAX - 7, UINT64_MAX};

	return v[below(sizeof(v) / sizeof(v[0]))];
}

/* One field of one frame header set to a value on or past its bounds. */
static void mutate_field(uint8_t *b, size_t len)
{
	size_t offs[256], n = frame_offsets(b, len, offs, 256), at;

	if (n == 0)
		return;
	at = offs[below(n)];
	switch (below(6)) {
	case 0:
		b[at] = (uint8_t)below(8); /* type */
		break;
	case 1:
		b[at + 1] = (uint8_t)rng(); /* magic */
		break;
	case 2:
		put_le(b + at + 2, below(2) ? WIRE_AM_HELLO + below(9) - 1 : rng(), 2);
		break;
	case 3:
		put_le(b + at + 4, below(2) ? special_value() : get_le(b + at + 4, 4) + below(3) - 1, 4);
		break;
	case 4:
		put_le(b + at + 8, below(2) ? special_value() : get_le(b + at + 8, 8) + below(3) - 1, 8);
		break;
	default:
		put_le(b + at + 16, below(2) ? special_value() : below(4), 8);
		break;
	}
}

/* One bit, byte or word inside one frame's engine header or payload:
 * the framing holds, the engine's checks get the bytes. (A region
 * address placeholder's low 16 bits are its offset: a change there
 * lands elsewhere in or past the region.) */
static void mutate_inside(uint8_t *b, size_t len)
{
	size_t offs[256], n = frame_offsets(b, len, offs, 256), at, body, pos;

	if (n == 0)
		return;
	at = offs[below(n)];
	body = (size_t)get_le(b + at + 4, 4) + (b[at] == LT_MSG ? (size_t)get_le(b + at + 8, 8) : 0);
	if (at + LT_FRAME_HDR >= len || body == 0)
		return;
	if (body > len - at - LT_FRAME_HDR)
		body = len - at - LT_FRAME_HDR;
	pos = at + LT_FRAME_HDR + below(body);
	switch (below(4)) {
	case 0:
		b[pos] ^= (uint8_t)(1u << below(8));
		break;
	case 1:
		b[pos] = (uint8_t)special_value();
		break;
	case 2:
		pos &= ~(size_t)3;
		if (pos + 4 <= len && pos >= at + LT_FRAME_HDR)
			put_le(b + pos, below(2) ? special_value() : get_le(b + pos, 4) + below(17) - 8, 4);
		break;
	default:
		pos &= ~(size_t)7;
		if (pos + 8 <= len && pos >= at + LT_FRAME_HDR)
			put_le(b + pos, below(2) ? special_value() : get_le(b + pos, 8) + below(17) - 8, 8);
		break;
	}
}

static void mutate(uint8_t *b, size_t *len, size_t cap)
{
	int ops = 1 + (int)below(4);

	/* Four rounds in ten keep the framing: deeper into the engine. */
	if (below(10) < 4) {
		for (int k = 0; k < ops; k++)
			mutate_inside(b, *len);
		return;
	}

	for (int k = 0; k < ops; k++) {
		size_t n = *len, at = n > 0 ? below(n) : 0, span;

		switch (below(11)) {
		case 10:
			mutate_inside(b, n);
			break;
		case 0: /* bit flips */
			for (int i = 0, m = 1 + (int)below(8); i < m && n > 0; i++)
				b[below(n)] ^= (uint8_t)(1u << below(8));
			break;
		case 1: /* a special byte */
			if (n > 0)
				b[at] = (uint8_t)special_value();
			break;
		case 2: /* a special word anywhere */
			if (n >= 8) {
				at = below(n - 7);
				put_le(b + at, special_value(), below(2) ? 4 : 8);
			}
			break;
		case 3:
		case 4: /* a frame header field */
			mutate_field(b, n);
			break;
		case 5: /* cut */
			*len = below(n + 1);
			break;
		case 6: { /* copy a range somewhere (a frame twice, say) */
			static uint8_t tmp[INPUT_MAX];
			size_t to = below(n + 1);

			span = n > 0 ? 1 + below(n - at) : 0;
			if (span > 0 && n + span <= cap && to <= n) {
				memcpy(tmp, b + at, span);
				memmove(b + to + span, b + to, n - to);
				memcpy(b + to, tmp, span);
				*len = n + span;
			}
			break;
		}
		case 7: /* delete a range */
			span = n > 0 ? 1 + below(n - at < 64 ? n - at : 64) : 0;
			memmove(b + at, b + at + span, n - at - span);
			*len = n - span;
			break;
		case 8: /* insert random bytes */
			span = 1 + below(32);
			if (n + span <= cap) {
				memmove(b + at + span, b + at, n - at);
				for (size_t i = 0; i < span; i++)
					b[at + i] = (uint8_t)rng();
				*len = n + span;
			}
			break;
		default: { /* splice: another seed's stream after ours */
			const struct seed *o = &seeds[below(nseeds)];

			if (n + o->len <= cap) {
				memcpy(b + n, o->bytes, o->len);
				*len = n + o->len;
			}
			break;
		}
		}
	}
}

/* ---- a round ------------------------------------------------------------------------------- */

enum delivery { DELIVER_ALL, DELIVER_CHUNKS, DELIVER_SLOW };

static const char *const way_names[] = {"raw", "auth", "live"};
static const char *const delivery_names[] = {"at once", "in chunks", "a few bytes at a time"};

/* Send b as the delivery says; false if the server closed on us. */
static bool deliver(int fd, const uint8_t *b, size_t len, enum delivery how)
{
	size_t off = 0;

	if (how == DELIVER_ALL || (how == DELIVER_SLOW && len > SLOW_MAX_BYTES))
		return send_bytes(fd, b, len);
	while (off < len) {
		size_t step = how == DELIVER_SLOW ? 1 + below(7) : 1 + below(512);

		if (step > len - off)
			step = len - off;
		if (!send_bytes(fd, b + off, step))
			return false;
		off += step;
		poll(NULL, 0, how == DELIVER_SLOW ? 2 : 0);
	}
	return true;
}

/* Live: send b frame by frame; a DATA frame of an RTS sent before it
 * waits (bounded) for that RTS's CTS, as a sender must; the rest of b
 * goes raw once the frames stop holding together. */
static bool deliver_live(int fd, const uint8_t *b, size_t len)
{
	size_t offs[512], n = frame_offsets(b, len, offs, 512);
	uint64_t rts[64];
	uint32_t nrts = 0;

	for (size_t i = 0; i < n; i++) {
		size_t end = i + 1 < n ? offs[i + 1] : len;
		uint64_t id = get_le(b + offs[i] + 16, 8);

		(void)reader_pump(&rd);
		if (b[offs[i]] == LT_RTS && nrts < 64)
			rts[nrts++] = id;
		for (uint32_t k = 0; b[offs[i]] == LT_DATA && k < nrts; k++)
			if (rts[k] == id) {
				(void)reader_wait(&rd, now_ms() + CTS_WAIT_MS, has_cts, id);
				break;
			}
		if (!send_bytes(fd, b + offs[i], end - offs[i]))
			return false;
	}
	return n > 0 || send_bytes(fd, b, len);
}

/* Our peer for live rounds: its listener, and its descriptor. */
static int peer_listen = -1;
static struct lt_addr peer_addr;

static int peer_setup(void)
{
	struct sockaddr_storage sa;
	socklen_t len;
	struct lt_addr a = srv.link;

	a.port = 0;
	sockaddr_of(&a, &sa, &len);
	peer_listen = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (peer_listen < 0 || bind(peer_listen, (struct sockaddr *)&sa, len) != 0 || listen(peer_listen, 8) != 0 ||
	    getsockname(peer_listen, (struct sockaddr *)&sa, &len) != 0)
		return -1;
	peer_addr = srv.link;
	peer_addr.port = ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port :
							((struct sockaddr_in6 *)&sa)->sin6_port);
	return 0;
}

/* Our peer's descriptor, as hex, for the server's CONNECT. */
static int peer_desc_hex(char *hex)
{
	struct wire_desc d = {.conn_id = ids.our_id, .pid = (uint32_t)getpid(), .has_tcp = true};
	uint8_t *desc;
	size_t len;

	memcpy(d.secret, ids.our_secret, ENGINE_SECRET_LEN);
	lt_addr_build(d.tcp_addr, &peer_addr);
	if (wire_desc_build(&d, &desc, &len) != DOCA_SUCCESS)
		return -1;
	hex_encode(desc, len, hex);
	free(desc);
	return 0;
}

/* The round's input: way, then the stream with its placeholders (what
 * --crash-dir keeps: a replay fills in its own run's values), and what
 * is sent: the stream with this round's values. */
static uint8_t input[INPUT_MAX], wire_bytes[INPUT_MAX];
static size_t input_len;
static uint8_t input_way;

/* Whether the stream starts with a valid AUTH for the round's server
 * connection (then the socket is authenticated: it is not the link's to
 * close for silence). */
static bool starts_authenticated(const uint8_t *b, size_t len)
{
	uint8_t auth[LT_FRAME_HDR + LT_AUTH_LEN];

	return len >= sizeof(auth) && auth_frame(auth, ids.srv_id, ids.srv_secret) == sizeof(auth) &&
	       memcmp(b, auth, sizeof(auth)) == 0;
}

/* The server writes to our peer on the one connection of the two sides:
 * the one it opens to our peer's port when its side opens it, else ours
 * (fd, which it then reads too). Read whichever brings its AUTH and
 * HELLO. */
static bool live_reader(int fd)
{
	for (double end = now_ms() + LIVE_WAIT_MS; rd.fd < 0 && now_ms() < end;) {
		struct pollfd p[2] = {{.fd = peer_listen, .events = POLLIN}, {.fd = fd, .events = POLLIN}};

		if (poll(p, 2, (int)(end - now_ms()) + 1) <= 0)
			continue;
		if (p[0].revents & POLLIN)
			rd.fd = accept4(peer_listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		else if (p[1].revents)
			rd.fd = fd;
	}
	return rd.fd >= 0 && reader_wait(&rd, now_ms() + LIVE_WAIT_MS, has_hello, 0);
}

/* Run one round: a server connection exported for it (its values fill
 * the placeholders), for a live round connected to our peer; the input
 * sent its way; our end, or silence; then the connection dropped.
 * 0: the server judged it (whatever it did with it); -1: a failure (why
 * says it). */
static int fuzz_round(enum delivery how, bool silent)
{
	static char hex[2 * (WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN) + 1];
	uint8_t desc[WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN], pre[LT_FRAME_HDR * 2 + 256];
	bool live = input_way == WAY_LIVE, sent;
	unsigned int slot = 0;
	struct wire_desc d;
	size_t dlen, n = 0;
	int fd = -1, rc = 0;
	char *line;

	memset(&rd, 0, sizeof(rd));
	rd.fd = -1;
	live_out = -1;
	if (srv_export(desc, sizeof(desc), &dlen, &slot, &d) != 0) {
		fail("the server did not export a connection");
		return -1;
	}
	ids.srv_id = d.conn_id;
	memcpy(ids.srv_secret, d.secret, ENGINE_SECRET_LEN);
	memcpy(wire_bytes, input, input_len);
	fill_placeholders(wire_bytes, input_len);
	if (live) {
		if (peer_desc_hex(hex) != 0) {
			fail("cannot build our peer's descriptor");
			rc = -1;
			goto out;
		}
		line = srv_cmd("CONNECT %u %s\n", slot, hex);
		if (line == NULL || strcmp(line, "OK") != 0) {
			fail("the server's doca_rdma_connect to our peer: %s", line != NULL ? line : "no answer");
			rc = -1;
			goto out;
		}
	}
	fd = dial(&srv.link);
	if (fd < 0) {
		fail("cannot connect to the server's link port %u: %s", srv.link.port, strerror(errno));
		rc = -1;
		goto out;
	}
	if (input_way != WAY_RAW) {
		n = auth_frame(pre, ids.srv_id, ids.srv_secret);
		if (live) {
			struct wire_hello h = ph_hello();

			n += msg_frame(pre + n, WIRE_AM_HELLO, &h, sizeof(h), 0, 0);
			fill_placeholders(pre + LT_FRAME_HDR + LT_AUTH_LEN, n - LT_FRAME_HDR - LT_AUTH_LEN);
		}
	}
	if (live) {
		/* Our AUTH and HELLO first: the server may be waiting for our
		 * connection to write its own. */
		if (!send_bytes(fd, pre, n) || !live_reader(fd)) {
			if (failures == 0)
				fail("the server's connection to our peer brought no AUTH and HELLO within %d ms",
				     LIVE_WAIT_MS);
			rc = -1;
			goto out;
		}
		n = 0;
	}
	live_out = live ? fd : -1;
	sent = send_bytes(fd, pre, n) &&
	       (live ? deliver_live(fd, wire_bytes, input_len) : deliver(fd, wire_bytes, input_len, how));
	if (live && sent) {
		/* The probe: a zero-length read, answered if the connection
		 * lives; its answer shows all before it was judged. */
		struct wire_req probe = ph_req(ENGINE_OP_READ, 0, 0, 0x50524f4245ull);
		uint8_t pb[LT_FRAME_HDR + sizeof(probe)];

		fill_placeholders((uint8_t *)&probe, sizeof(probe));
		rd.probe_wr_id = probe.wr_id;
		if (send_bytes(fd, pb, msg_frame(pb, WIRE_AM_REQ, &probe, sizeof(probe), 0, 0)))
			(void)reader_wait(&rd, now_ms() + PROBE_WAIT_MS, has_probe, 0);
	}
	if (input_way == WAY_RAW && silent && !starts_authenticated(wire_bytes, input_len)) {
		/* Unauthenticated and silent: the link reads nothing past an
		 * AUTH's worth, closes what it judged, and what stays silent
		 * within its 2 s. */
		if (!closed_by(fd, now_ms() + SLOW_CLOSE_MS)) {
			fail("the server did not close an unauthenticated connection (%zu B %s, then silence) within "
			     "%d ms",
			     input_len, delivery_names[how], SLOW_CLOSE_MS);
			rc = -1;
		}
	} else {
		(void)shutdown(fd, SHUT_WR);
		if (!closed_by(fd, now_ms() + FAST_CLOSE_MS)) {
			fail("the server did not close our connection within %d ms of our end", FAST_CLOSE_MS);
			rc = -1;
		}
	}
out:
	if (rd.fd >= 0 && rd.fd != fd)
		close(rd.fd);
	if (fd >= 0)
		close(fd);
	rd.fd = -1;
	live_out = -1;
	if (srv_alive()) {
		line = srv_cmd("DROP %u\n", slot);
		if (line == NULL || strcmp(line, "OK") != 0) {
			fail("the server did not answer DROP");
			rc = -1;
		}
	}
	return rc;
}

/* ---- the honest client ------------------------------------------------------------------------ */

static struct node cl;

/* Connect to a fresh server connection, write 4 KiB and 48 KiB, read
 * them back, compare, disconnect. The writes are submitted right after
 * doca_rdma_connect, as a DOCA program does: export/connect gives no
 * established callback (DOCA calls it for RDMA CM connections only; it
 * must not run here), the library holds the first write until the
 * connection is up, and that write completing shows the server still
 * serves. */
static int honest_round(uint32_t round)
{
	static char hex[2 * (WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN) + 1];
	uint8_t desc[WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN];
	struct doca_rdma_connection *conn = NULL;
	const void *mine;
	size_t mine_len, dlen, total = HONEST_SMALL + HONEST_LARGE;
	unsigned int slot;
	struct wire_desc d;
	doca_error_t err;
	double end;
	char *line;
	int rc = -1;

	if (srv_export(desc, sizeof(desc), &dlen, &slot, &d) != 0) {
		fail("honest client: the server did not export a connection");
		return -1;
	}
	cl.established = cl.closed = cl.tasks_ok = cl.tasks_err = 0;
	err = doca_rdma_export(cl.rdma, &mine, &mine_len, &conn);
	if (err != DOCA_SUCCESS) {
		fail("honest client: doca_rdma_export: %s", doca_error_get_name(err));
		goto drop;
	}
	hex_encode(mine, mine_len, hex);
	line = srv_cmd("CONNECT %u %s\n", slot, hex);
	if (line == NULL || strcmp(line, "OK") != 0) {
		fail("honest client: the server's doca_rdma_connect: %s", line != NULL ? line : "no answer");
		goto disconnect;
	}
	err = doca_rdma_connect(cl.rdma, desc, dlen, conn);
	if (err != DOCA_SUCCESS) {
		fail("honest client: doca_rdma_connect: %s", doca_error_get_name(err));
		goto disconnect;
	}
	/* Two writes (eager, rendezvous), then one read of both. */
	for (size_t i = 0; i < total; i++)
		cl.mem[i] = (uint8_t)(round * 131u + i * 7u + (i >> 9));
	memset(cl.mem + REGION_LEN, 0, total);
	for (int step = 0; step < 3; step++) {
		struct doca_buf *local = NULL, *remote = NULL;
		size_t off = step == 1 ? HONEST_SMALL : 0, len = step == 0 ? HONEST_SMALL : step == 1 ? HONEST_LARGE : total;
		union doca_data ud = {.u64 = (uint64_t)step};
		struct doca_task *task = NULL;
		int done = cl.tasks_ok + cl.tasks_err;

		if (step < 2) {
			struct doca_rdma_task_write *t;

			err = doca_buf_inventory_buf_get_by_data(cl.inv, cl.mmap, cl.mem + off, len, &local);
			if (err == DOCA_SUCCESS)
				err = doca_buf_inventory_buf_get_by_addr(cl.inv, cl.rmmap,
									 (uint8_t *)(uintptr_t)ids.region_addr + off,
									 len, &remote);
			if (err == DOCA_SUCCESS)
				err = doca_rdma_task_write_allocate_init(cl.rdma, conn, local, remote, ud, &t);
			if (err == DOCA_SUCCESS)
				task = doca_rdma_task_write_as_task(t);
		} else {
			struct doca_rdma_task_read *t;

			err = doca_buf_inventory_buf_get_by_data(cl.inv, cl.rmmap, (uint8_t *)(uintptr_t)ids.region_addr,
								 len, &remote);
			if (err == DOCA_SUCCESS)
				err = doca_buf_inventory_buf_get_by_addr(cl.inv, cl.mmap, cl.mem + REGION_LEN, len,
									 &local);
			if (err == DOCA_SUCCESS)
				err = doca_rdma_task_read_allocate_init(cl.rdma, conn, remote, local, ud, &t);
			if (err == DOCA_SUCCESS)
				task = doca_rdma_task_read_as_task(t);
		}
		if (err == DOCA_SUCCESS)
			err = doca_task_submit(task);
		if (err != DOCA_SUCCESS) {
			if (task != NULL)
				doca_task_free(task);
			if (local != NULL)
				(void)doca_buf_dec_refcount(local, NULL);
			if (remote != NULL)
				(void)doca_buf_dec_refcount(remote, NULL);
			fail("honest client: %s task: %s", step < 2 ? "write" : "read", doca_error_get_name(err));
			goto disconnect;
		}
		for (end = now_ms() + HONEST_WAIT_MS; cl.tasks_ok + cl.tasks_err == done && now_ms() < end;)
			progress_wait(&cl, 10);
		if (cl.tasks_err > 0 || cl.tasks_ok == done) {
			fail("honest client: the %s of %zu B %s%s", step < 2 ? "write" : "read", len,
			     cl.tasks_err > 0 ? "failed" : "did not complete in time",
			     cl.closed ? " (the connection failed)" : "");
			goto disconnect;
		}
	}
	if (cl.established != 0) {
		fail("honest client: the established callback ran %d time(s) on an export/connect connection "
		     "(DOCA calls it for RDMA CM connections only)",
		     cl.established);
		goto disconnect;
	}
	if (memcmp(cl.mem, cl.mem + REGION_LEN, total) != 0) {
		fail("honest client: the bytes read back are not the bytes written");
		goto disconnect;
	}
	rc = 0;
disconnect:
	if (conn != NULL)
		(void)doca_rdma_connection_disconnect(conn);
	for (int i = 0; i < 8; i++)
		(void)doca_pe_progress(cl.pe);
drop:
	line = srv_alive() ? srv_cmd("DROP %u\n", slot) : NULL;
	if (line == NULL || strcmp(line, "OK") != 0) {
		if (rc == 0)
			fail("honest client: the server did not answer DROP");
		rc = -1;
	}
	return rc;
}

static int client_setup(void)
{
	struct doca_mmap *rm = NULL;
	void *addr;
	size_t len;
	char *line, *hex;
	ssize_t got;
	int rc = node_start(&cl, false);

	if (rc != 0)
		return rc;
	line = srv_cmd("MMAP\n");
	if (line == NULL || strncmp(line, "MMAP ", 5) != 0)
		return -1;
	hex = line + 5;
	got = hex_decode(hex, srv.mmap_desc, sizeof(srv.mmap_desc));
	if (got <= 0)
		return -1;
	srv.mmap_len = (size_t)got;
	TRY(doca_mmap_create_from_export(NULL, srv.mmap_desc, srv.mmap_len, cl.dev, &rm));
	cl.rmmap = rm;
	TRY(doca_mmap_get_memrange(rm, &addr, &len));
	ids.region_addr = (uint64_t)(uintptr_t)addr;
	/* The region's id and secret, for the seeds' requests: the
	 * descriptor's own parser (mmap.h) reads them. */
	{
		struct softdoca_mmap_desc md;

		if (softdoca_mmap_desc_parse(srv.mmap_desc, srv.mmap_len, &md) != DOCA_SUCCESS)
			return -1;
		ids.region_id = md.region_id;
		memcpy(ids.region_secret, md.secret, ENGINE_SECRET_LEN);
	}
	return 0;
}

/* ---- the run -------------------------------------------------------------------------------- */

/* The round's input, its server log tail: what a failure leaves. */
static void report_failure(uint32_t round, const char *seed, const char *crash_dir, uint64_t round_seed)
{
	char path[PATH_MAX], line[512];
	FILE *f;

	printf("FAIL link_netfuzz round %u (seed %s, way %s, %zu B, round seed %#" PRIx64 "): %s\n", round, seed,
	       way_names[input_way], input_len, round_seed, why);
	printf("  input (the way byte, then the stream in its placeholder form):\n   ");
	printf(" %02x", input_way);
	for (size_t i = 0; i < input_len && i < 1024; i++)
		printf(" %02x%s", input[i], i % 24 == 22 ? "\n   " : "");
	printf("%s\n", input_len > 1024 ? " ..." : "");
	if (crash_dir != NULL) {
		snprintf(path, sizeof(path), "%s/link-netfuzz-round-%u.bin", crash_dir, round);
		f = fopen(path, "wb");
		if (f != NULL) {
			fputc(input_way, f);
			fwrite(input, 1, input_len, f);
			fclose(f);
			printf("  written to %s (replay: link_netfuzz --replay %s)\n", path, path);
		}
	}
	printf("  the server's log, last lines:\n");
	f = fopen(srv.log, "r");
	if (f != NULL) {
		static char tail[40][512];
		int n = 0;

		while (fgets(line, sizeof(line), f) != NULL)
			snprintf(tail[n++ % 40], sizeof(tail[0]), "%s", line);
		for (int i = n > 40 ? n - 40 : 0; i < n; i++)
			printf("    | %s", tail[i % 40]);
		fclose(f);
	}
	fflush(stdout);
}

/* After a round: alive, canaries, descriptors back (bounded wait). */
static int after_round(struct srv_check *c)
{
	double end = now_ms() + FD_SETTLE_MS;

	for (;;) {
		if (!srv_alive() || !srv_check(c)) {
			if (!srv_alive())
				fail("the server died (%s %d)", WIFSIGNALED(srv.status) ? "signal" : "exit",
				     WIFSIGNALED(srv.status) ? WTERMSIG(srv.status) : WEXITSTATUS(srv.status));
			else
				fail("the server did not answer CHECK within %d ms (hung?)", CMD_WAIT_MS);
			return -1;
		}
		if (c->canaries != 1) {
			fail("the server's canaries around its region changed");
			return -1;
		}
		if (c->fds <= srv.base_fds + FD_SLACK)
			return 0;
		if (now_ms() > end) {
			fail("the server holds %d descriptors, %d at the start (bound %d)", c->fds, srv.base_fds,
			     srv.base_fds + FD_SLACK);
			return -1;
		}
		poll(NULL, 0, 20);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: link_netfuzz --corpus DIR [--seed N] [--budget S] [--rounds N] [--crash-dir DIR]\n"
		   "                    [--replay FILE]\n"
		   "       link_netfuzz --write-seeds DIR\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"serve", no_argument, NULL, 'S'},
		{"write-seeds", required_argument, NULL, 'W'},
		{"corpus", required_argument, NULL, 'c'},
		{"seed", required_argument, NULL, 's'},
		{"budget", required_argument, NULL, 'b'},
		{"rounds", required_argument, NULL, 'r'},
		{"crash-dir", required_argument, NULL, 'C'},
		{"replay", required_argument, NULL, 'R'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *corpus = NULL, *crash_dir = NULL, *replay = NULL;
	double budget_ms = 15000, t0, end;
	uint64_t seed = 1;
	uint32_t max_rounds = UINT32_MAX, round = 0, by_way[3] = {0}, silent_rounds = 0, probes = 0;
	char dir[] = "/tmp/link_netfuzz.XXXXXX";
	struct srv_check c = {0};
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'S':
			return serve();
		case 'W':
			return write_seeds(optarg) == 0 ? 0 : 1;
		case 'c':
			corpus = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			budget_ms = 1000.0 * strtod(optarg, NULL);
			break;
		case 'r':
			max_rounds = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'C':
			crash_dir = optarg;
			break;
		case 'R':
			replay = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (corpus == NULL || optind != argc) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	srv.self = argv[0];
	if (load_seeds(corpus) != 0 || mkdtemp(dir) == NULL)
		return 2;
	rc = srv_start(dir);
	if (rc == 77) {
		printf("SKIP link_netfuzz: no soft_lo device\n");
		srv_stop();
		return 77;
	}
	if (rc != 0 || client_setup() != 0 || !srv_check(&c)) {
		printf("FAIL link_netfuzz setup: the server or the honest client did not start (see %s)\n", srv.log);
		srv_stop();
		return 1;
	}
	{
		uint8_t desc[WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN];
		unsigned int slot;
		struct wire_desc d;
		size_t dlen;

		if (srv_export(desc, sizeof(desc), &dlen, &slot, &d) != 0 ||
		    lt_addr_parse(d.tcp_addr, sizeof(d.tcp_addr), &srv.link) != DOCA_SUCCESS ||
		    srv_cmd("DROP %u\n", slot) == NULL || peer_setup() != 0) {
			printf("FAIL link_netfuzz setup: no link address from the server, or no listener of ours\n");
			srv_stop();
			return 1;
		}
	}
	if (!srv_check(&c)) {
		printf("FAIL link_netfuzz setup: the server does not answer CHECK\n");
		srv_stop();
		return 1;
	}
	srv.base_fds = c.fds;
	ids.our_id = OUR_ID;
	printf("NOTE link_netfuzz: %zu seeds from %s, seed %" PRIu64 ", budget %.0f s; the server's link port %u, "
	       "%d descriptors\n",
	       nseeds, corpus, seed, budget_ms / 1000, srv.link.port, c.fds);
	t0 = now_ms();
	end = t0 + budget_ms;
	while (round < max_rounds && (replay != NULL ? round < 1 : now_ms() < end)) {
		const struct seed *s = &seeds[0];
		uint64_t round_seed;
		enum delivery how;
		bool silent;

		rng_state = seed * 0x9E3779B97F4A7C15ull + round + 1;
		round_seed = rng_state;
		if (getrandom(ids.our_secret, ENGINE_SECRET_LEN, 0) != ENGINE_SECRET_LEN)
			memset(ids.our_secret, (int)round, ENGINE_SECRET_LEN);
		how = (enum delivery)below(3);
		silent = below(16) == 0;
		if (replay != NULL) {
			FILE *f = fopen(replay, "rb");
			size_t n = f != NULL ? fread(input, 1, sizeof(input), f) : 0;

			if (f != NULL)
				fclose(f);
			if (n < 1 || input[0] > WAY_LIVE) {
				printf("FAIL link_netfuzz: %s is not a round's input\n", replay);
				break;
			}
			input_way = input[0];
			input_len = n - 1;
			memmove(input, input + 1, input_len);
		} else {
			s = &seeds[below(nseeds)];
			input_way = s->way;
			input_len = s->len;
			memcpy(input, s->bytes, s->len);
		}
		/* Mutations of the placeholder form; the round fills in its
		 * values. */
		if (replay == NULL) {
			mutate(input, &input_len, sizeof(input));
			if (below(8) == 0)
				mutate(input, &input_len, sizeof(input));
		}
		by_way[input_way]++;
		silent_rounds += silent && input_way == WAY_RAW;
		{
			double r0 = now_ms();

			rc = fuzz_round(how, silent);
			if (verbose)
				printf("round %u: %s %s, %zu B %s%s: %.1f ms, probe %s, reader %s\n", round, s->name,
				       way_names[input_way], input_len, delivery_names[how], silent ? ", silent" : "",
				       now_ms() - r0, rd.probe_answered ? "answered" : "-",
				       rd.broken ? "closed" : "open");
		}
		probes += rd.probe_answered;
		if (rc != 0 || after_round(&c) != 0 || honest_round(round) != 0 || after_round(&c) != 0) {
			report_failure(round, replay != NULL ? replay : s->name, crash_dir, round_seed);
			break;
		}
		if (round == WARMUP_ROUNDS) {
			srv.warm_rss = c.rss;
			srv.warm_heap = c.heap;
		}
		round++;
	}
	if (!MEMORY_CHECKED)
		printf("NOTE link_netfuzz: built with AddressSanitizer: heap and resident size not bounded\n");
	if (failures == 0 && round > WARMUP_ROUNDS && MEMORY_CHECKED) {
		if (c.heap > srv.warm_heap + HEAP_GROWTH_MAX)
			fail("the server's heap grew from %zu to %zu B (bound +%u)", srv.warm_heap, c.heap, HEAP_GROWTH_MAX);
		else if (c.rss > srv.warm_rss + (long)(RSS_GROWTH_MAX / 1024))
			fail("the server's resident size grew from %ld to %ld KiB (bound +%u KiB)", srv.warm_rss, c.rss,
			     RSS_GROWTH_MAX / 1024);
		if (failures != 0)
			printf("FAIL link_netfuzz after %u rounds: %s\n", round, why);
	}
	if (failures == 0)
		printf("PASS link_netfuzz: %u rounds in %.1f s (raw %u, of them %u silent; auth %u; live %u, %u probes "
		       "answered), each followed by an honest client's writes and reads; the server alive, canaries "
		       "intact, descriptors %d (start %d), heap %zu B (%zu after warm-up), resident %ld KiB (%ld)\n",
		       round, (now_ms() - t0) / 1000, by_way[WAY_RAW], silent_rounds, by_way[WAY_AUTH], by_way[WAY_LIVE],
		       probes, c.fds, srv.base_fds, c.heap, srv.warm_heap, c.rss, srv.warm_rss);
	srv_stop();
	if (failures == 0) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/server.log", dir);
		unlink(path);
		rmdir(dir);
	} else {
		printf("  (the server's log is in %s)\n", srv.log);
	}
	return failures == 0 ? 0 : 1;
}
