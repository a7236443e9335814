/*
 * link_attack — hostile bytes at every TCP port a live DOCA RDMA target
 * listens on, from a stranger who holds no descriptor of it (or only a
 * read-only one), as a port scanner would find and try them.
 *
 *   link_attack --pid PID --dir DIR --attack NAME [--seed N]
 *
 * PID is a running `rdma_peer --role target` whose files are in DIR:
 *   target.conn   its connection descriptor (read: the connection id and
 *                 secret at their fixed offsets, 12 and 16, which every
 *                 descriptor version keeps; attacks that forge an AUTH
 *                 start from them)
 *   target.mmap   its exported region (read: where it is)
 *   attack.holding   idle: written once the connections are held
 *   attack.release   idle: waited for (the test script writes it once
 *                    the honest initiator is done), then they are closed
 *
 * The ports are the listening TCP sockets of PID: the inodes of its
 * socket descriptors (/proc/PID/fd) found in LISTEN state in
 * /proc/PID/net/tcp and tcp6. Every attack is made on every port.
 *
 * Attacks (NAME):
 *   ucx_len      UCX 1.13's TCP wire: its magic, then an AM header whose
 *                length is 0xfffffff0 (77 bytes in all: an assertion
 *                aborted UCX's receiver)
 *   ucx_amid     the magic, then an AM header of id 200 (UCX asserted)
 *   ucx_put      the magic, then a PUT request to address 0x10 with 8
 *                bytes (UCX wrote them there: SIGSEGV)
 *   readonly_put the magic, then PUT requests of "WRITTEN!" to the first
 *                byte of the target's region and to the byte past its end
 *                (run against a read-only export: UCX wrote both)
 *   random       16 connections of seeded random bytes (1 to 4096 each)
 *   noauth       softdoca frames without AUTH, one connection each: a
 *                HELLO and a write request naming the right connection,
 *                secrets and region; a CTS; a DATA frame
 *   badsecret    AUTH naming the target's connection with its secret's
 *                first or last bit flipped, then HELLO and a write
 *   authid       AUTH with the right secret for connection 0, for the
 *                next (never exported) id, and for 2^32-1
 *   truncated    the right AUTH cut after 1, 7, 8, 23, 24, 40 and 55 of
 *                its 56 bytes, then silence with the socket held open
 *   slowloris    the right AUTH, one byte every 100 ms; and UCX's magic
 *                then an AM header and its bytes, one byte every 100 ms
 *   noread       not a stranger: a peer holding the target's descriptor
 *                for it (rdma_peer --hostile), connected, that sends
 *                16 KiB reads and never reads the target's socket to it:
 *                the target's resident size must stay bounded (see
 *                attack_noread): the target stops reading a peer whose
 *                answers it cannot send (LT_OUT_MAX)
 *   idle         1000 silent connections held open (one the target
 *                closes is dialled again at once) for IDLE_SAMPLE_MS, and
 *                on while the honest initiator runs; the target's
 *                descriptor count is sampled all along
 *
 * What is checked here, on every port: each connection is closed by the
 * target (EOF or reset) within FAST_CLOSE_MS of our last byte when what
 * we sent is at least a whole AUTH's worth (the target can judge it), or
 * within SLOW_CLOSE_MS of the connect otherwise (the link gives a socket
 * 2 s to authenticate); the target process lives; its descriptors come
 * back to within FD_SLACK of their count before the attack; idle: while
 * the 1000 are held its count never exceeds that count + IDLE_FD_BOUND.
 * What the test script checks afterwards: the target's exit status, its
 * memory and canaries, an honest initiator's writes or reads, and that
 * the target's own link parser refused the attack's connections (its log).
 *
 * Output: NOTE lines, then "PASS link_attack NAME ..." or "FAIL ..." per
 * check. Exit 0 if all passed, 1 if not, 2 on bad usage or setup, 77
 * when idle cannot open its descriptors (ulimit -n).
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <doca_error.h>

#include "link_tcp_wire.h"
#include "mmap.h"
#include "wire.h"

/* ---- bounds ------------------------------------------------------------- */

#define FILE_WAIT_MS 20000   /* the target's files */
#define CONNECT_MS 3000      /* a connect to the target's port */
#define FAST_CLOSE_MS 1000   /* a judgeable connection: closed by then after our last byte */
#define SLOW_CLOSE_MS 3000   /* one that never completes its AUTH: closed by then after connect */
#define FD_SLACK 8           /* target descriptors over the count before, once an attack is over */
#define FD_SETTLE_MS 3000    /* ... by then */
#define MAX_PORTS 16
#define MAX_VOLLEY 32
#define RANDOM_CONNS 16
#define SLOWLORIS_STEP_MS 100
#define IDLE_CONNS 1000
#define IDLE_FD_BOUND 256    /* target descriptors over the count before while the idle ones are held */
#define IDLE_SAMPLE_MS 2500  /* the count is sampled this long after they are connected */
#define IDLE_RELEASE_MS 90000

/* ---- UCX 1.13's TCP wire (uct/tcp/tcp.h), as the attacks need it ---------- */

#define UCX_TCP_MAGIC 0xCAFEBABE12345678ull /* 8 bytes, little-endian, first on a connection */
#define UCX_AM_HDR_LEN 5                    /* am id u8, length u32 (packed) */
#define UCX_AM_ID_PUT_REQ 33                /* UCT_AM_ID_MAX + 1 */
#define UCX_PUT_REQ_LEN 20                  /* address u64, length u64, sequence u32 (packed) */

/* ---- small things ---------------------------------------------------------- */

static int failures;
static bool skipped;
/* idle: the honest initiator ran while the connections were held, and
 * the target ends once it is done: nothing to check of it after. */
static bool target_done;
static const char *attack_name = "?";

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((format(printf, 2, 3))) static void verdict(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s link_attack %s ", ok ? "PASS" : "FAIL", attack_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static uint64_t rng_state = 0x5eed1a77ac4b1e55ull;

/* xorshift64*: a fixed seed sends the same bytes every run. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- the target ---------------------------------------------------------------- */

struct target {
	pid_t pid;
	const char *dir;
	uint32_t conn_id;
	uint8_t secret[ENGINE_SECRET_LEN];
	struct softdoca_mmap_desc region;
};

struct port {
	struct sockaddr_storage sa;
	socklen_t len;
	char text[64];
};

static bool target_alive(const struct target *t)
{
	char path[64], state = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)t->pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	/* pid (comm) state ...: the state follows the last ')'. */
	{
		char line[512];
		char *rp;

		if (fgets(line, sizeof(line), f) != NULL && (rp = strrchr(line, ')')) != NULL && rp[1] == ' ')
			state = rp[2];
	}
	fclose(f);
	return state != '?' && state != 'Z' && state != 'X';
}

/* The target's open descriptors; -1 if it is gone. */
static int target_fds(const struct target *t)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)t->pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Read a whole small file of DIR, waiting (bounded) for it to appear. */
static int read_dir_file(const struct target *t, const char *name, uint8_t *buf, size_t cap, size_t *len)
{
	char path[PATH_MAX];
	double end = now_ms() + FILE_WAIT_MS;

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			ssize_t n = read(fd, buf, cap);

			close(fd);
			if (n < 0)
				return -1;
			*len = (size_t)n;
			return 0;
		}
		if (errno != ENOENT || now_ms() > end) {
			printf("FAIL link_attack setup: %s: %s\n", path, errno == ENOENT ? "not written in time" :
											 strerror(errno));
			return -1;
		}
		if (!target_alive(t)) {
			printf("FAIL link_attack setup: the target died before it wrote %s\n", name);
			return -1;
		}
		poll(NULL, 0, 5);
	}
}

static int read_target(struct target *t)
{
	uint8_t buf[WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN];
	size_t len;

	if (read_dir_file(t, "target.conn", buf, sizeof(buf), &len) != 0)
		return -1;
	/* Every descriptor version starts magic, version, flags, length,
	 * connection id, secret (wire.c): an attacker who saw one reads
	 * these two without caring for the rest. */
	if (len < 32 || memcmp(buf, WIRE_DESC_MAGIC, 4) != 0) {
		printf("FAIL link_attack setup: target.conn (%zu B) is not a connection descriptor\n", len);
		return -1;
	}
	t->conn_id = (uint32_t)buf[12] | (uint32_t)buf[13] << 8 | (uint32_t)buf[14] << 16 | (uint32_t)buf[15] << 24;
	memcpy(t->secret, buf + 16, ENGINE_SECRET_LEN);
	if (read_dir_file(t, "target.mmap", buf, sizeof(buf), &len) != 0)
		return -1;
	if (softdoca_mmap_desc_parse(buf, len, &t->region) != DOCA_SUCCESS) {
		printf("FAIL link_attack setup: target.mmap (%zu B) does not parse\n", len);
		return -1;
	}
	printf("NOTE link_attack: target pid %d, connection %u, region [%#" PRIx64 ", +%" PRIu64 ") permissions %#x\n",
	       (int)t->pid, t->conn_id, t->region.addr, t->region.len, t->region.permissions);
	return 0;
}

/* ---- the port scan ------------------------------------------------------------ */

static bool inode_in(const unsigned long *set, int n, unsigned long ino)
{
	for (int i = 0; i < n; i++)
		if (set[i] == ino)
			return true;
	return false;
}

/* Listening sockets of /proc/PID/net/tcp{,6} whose inode is one of ours. */
static int scan_table(const struct target *t, bool v6, const unsigned long *inodes, int ninodes, struct port *ports,
		      int nports)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)t->pid, v6 ? "tcp6" : "tcp");
	f = fopen(path, "r");
	if (f == NULL)
		return nports;
	while (fgets(line, sizeof(line), f) != NULL && nports < MAX_PORTS) {
		char local[64], remote[64], host[INET6_ADDRSTRLEN], *colon;
		unsigned int state, port;
		unsigned long ino;
		struct port *p = &ports[nports];

		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*d: %63s %63s %x %*s %*s %*s %*u %*u %lu", local, remote, &state, &ino) != 4 ||
		    state != 0x0A || !inode_in(inodes, ninodes, ino))
			continue;
		colon = strchr(local, ':');
		if (colon == NULL || sscanf(colon + 1, "%x", &port) != 1)
			continue;
		*colon = '\0';
		memset(p, 0, sizeof(*p));
		if (!v6) {
			struct sockaddr_in *in = (struct sockaddr_in *)&p->sa;
			unsigned int a;

			sscanf(local, "%x", &a);
			in->sin_family = AF_INET;
			in->sin_port = htons((uint16_t)port);
			in->sin_addr.s_addr = a; /* the table prints it in host order of the word */
			if (in->sin_addr.s_addr == htonl(INADDR_ANY))
				in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			p->len = sizeof(*in);
			inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
			snprintf(p->text, sizeof(p->text), "%s:%u", host, port);
		} else {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&p->sa;

			in6->sin6_family = AF_INET6;
			in6->sin6_port = htons((uint16_t)port);
			for (int w = 0; w < 4; w++) {
				unsigned int word;
				char part[9];

				memcpy(part, local + 8 * w, 8);
				part[8] = '\0';
				sscanf(part, "%x", &word);
				memcpy(&in6->sin6_addr.s6_addr[4 * w], &word, 4);
			}
			if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
				in6->sin6_addr = in6addr_loopback;
			p->len = sizeof(*in6);
			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
			snprintf(p->text, sizeof(p->text), "[%s]:%u", host, port);
		}
		nports++;
	}
	fclose(f);
	return nports;
}

/* Every TCP port the target listens on, as a port scanner finds them. */
static int scan_ports(const struct target *t, struct port *ports)
{
	unsigned long inodes[1024];
	int ninodes = 0, n;
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)t->pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL && ninodes < (int)(sizeof(inodes) / sizeof(inodes[0]))) {
		char link[PATH_MAX], target[64];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (sscanf(target, "socket:[%lu]", &inodes[ninodes]) == 1)
			ninodes++;
	}
	closedir(d);
	n = scan_table(t, false, inodes, ninodes, ports, 0);
	return scan_table(t, true, inodes, ninodes, ports, n);
}

/* ---- connections ---------------------------------------------------------------- */

/* A non-blocking socket connected to p within CONNECT_MS; -1 if not. */
static int dial(const struct port *p)
{
	int fd = socket(p->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1, err = 0;
	struct pollfd pfd = {.events = POLLOUT};
	socklen_t el = sizeof(err);

	if (fd < 0)
		return -1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)&p->sa, p->len) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	pfd.fd = fd;
	if (poll(&pfd, 1, CONNECT_MS) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send all of len bytes (the peer may close on us: that ends it). */
static size_t send_all(int fd, const uint8_t *b, size_t len)
{
	size_t sent = 0;
	double end = now_ms() + CONNECT_MS;

	while (sent < len && now_ms() < end) {
		ssize_t n = send(fd, b + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			sent += (size_t)n;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};

			(void)poll(&p, 1, 10);
		} else {
			break;
		}
	}
	return sent;
}

/* Whether fd has been closed by the peer: read (and drop) what it sent
 * until its end (0 or an error) or the deadline. */
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

/* One connection of a volley: what it sends and by when it must end. */
struct shot {
	const char *what;
	uint8_t bytes[4096 + 64];
	size_t len;
	int fd;
	size_t sent;
	double t_connect, t_last, deadline;
	bool closed;
};

/* Close bound of a shot: a whole AUTH's worth of bytes can be judged at
 * once; fewer may wait for the rest, which the link gives 2 s. */
static void shot_deadline(struct shot *s)
{
	s->deadline = s->len >= LT_FRAME_HDR + LT_AUTH_LEN ? s->t_last + FAST_CLOSE_MS : s->t_connect + SLOW_CLOSE_MS;
}

/* Fire every shot at p at once, then wait for each to be closed by its
 * deadline; one verdict per shot. */
static void volley(const struct target *t, const struct port *p, struct shot *s, int n)
{
	for (int i = 0; i < n; i++) {
		s[i].fd = dial(p);
		s[i].t_connect = now_ms();
		if (s[i].fd < 0)
			continue;
		s[i].sent = send_all(s[i].fd, s[i].bytes, s[i].len);
		s[i].t_last = now_ms();
		shot_deadline(&s[i]);
	}
	for (int i = 0; i < n; i++) {
		double waited;

		if (s[i].fd < 0) {
			/* A target that died (or stopped listening) refuses. */
			verdict(false, "%s: %s: cannot connect (%s)%s", p->text, s[i].what, strerror(errno),
				target_alive(t) ? "" : "; the target is dead");
			continue;
		}
		s[i].closed = closed_by(s[i].fd, s[i].deadline);
		waited = now_ms() - s[i].t_connect;
		close(s[i].fd);
		verdict(s[i].closed, "%s: %s (%zu of %zu B sent): %s after %.0f ms", p->text, s[i].what, s[i].sent,
			s[i].len, s[i].closed ? "closed by the target" : "NOT closed by the target", waited);
	}
}

/* ---- frames ------------------------------------------------------------------------ */

static size_t ucx_magic(uint8_t *b)
{
	le64(b, UCX_TCP_MAGIC);
	return 8;
}

static size_t ucx_am_hdr(uint8_t *b, uint8_t id, uint32_t length)
{
	b[0] = id;
	le32(b + 1, length);
	return UCX_AM_HDR_LEN;
}

/* A PUT request of claim bytes to addr, with the first len of them. */
static size_t ucx_put(uint8_t *b, uint64_t addr, uint64_t claim, const void *data, size_t len)
{
	size_t n = ucx_am_hdr(b, UCX_AM_ID_PUT_REQ, UCX_PUT_REQ_LEN);

	le64(b + n, addr);
	le64(b + n + 8, claim);
	le32(b + n + 16, 1);
	n += UCX_PUT_REQ_LEN;
	memcpy(b + n, data, len);
	return n + len;
}

static size_t lt_auth(uint8_t *b, uint32_t conn_id, const uint8_t secret[ENGINE_SECRET_LEN])
{
	struct lt_frame f = {.type = LT_AUTH, .hdr_len = LT_AUTH_LEN};
	struct lt_auth a = {.conn_id = conn_id};

	memcpy(a.secret, secret, ENGINE_SECRET_LEN);
	lt_frame_build(b, &f);
	lt_auth_build(b + LT_FRAME_HDR, &a);
	return LT_FRAME_HDR + LT_AUTH_LEN;
}

/* A softdoca MSG frame: header, engine header, payload. */
static size_t lt_msg(uint8_t *b, uint16_t am_id, const void *hdr, size_t hdr_len, const void *payload, size_t len)
{
	struct lt_frame f = {.type = LT_MSG, .am_id = am_id, .hdr_len = (uint32_t)hdr_len, .len = len};

	lt_frame_build(b, &f);
	memcpy(b + LT_FRAME_HDR, hdr, hdr_len);
	if (len > 0)
		memcpy(b + LT_FRAME_HDR + hdr_len, payload, len);
	return LT_FRAME_HDR + hdr_len + len;
}

/* HELLO from a made-up peer connection to the target's, then a write of
 * 64 bytes of 0xEE at the region's start: the honest initiator's data
 * and the target's memory check would show it landed. */
static size_t hello_and_write(const struct target *t, uint8_t *b)
{
	struct wire_hello hello = {.version = WIRE_VERSION, .dst_conn_id = t->conn_id, .src_conn_id = 7};
	struct wire_req r = {.version = WIRE_VERSION, .opcode = ENGINE_OP_WRITE, .dst_conn_id = t->conn_id};
	uint8_t payload[64];
	size_t n;

	memcpy(hello.dst_secret, t->secret, ENGINE_SECRET_LEN);
	memset(hello.src_secret, 0x5a, ENGINE_SECRET_LEN);
	memcpy(r.dst_secret, t->secret, ENGINE_SECRET_LEN);
	r.src_conn_id = 7;
	r.wr_id = 1;
	r.region_id = t->region.region_id;
	memcpy(r.region_secret, t->region.secret, ENGINE_SECRET_LEN);
	r.remote_addr = t->region.addr;
	r.length = sizeof(payload);
	memset(payload, 0xEE, sizeof(payload));
	n = lt_msg(b, WIRE_AM_HELLO, &hello, sizeof(hello), NULL, 0);
	return n + lt_msg(b + n, WIRE_AM_REQ, &r, sizeof(r), payload, sizeof(payload));
}

/* ---- attacks ------------------------------------------------------------------------- */

static struct shot shots[MAX_VOLLEY];

static struct shot *shot_new(int i, const char *what)
{
	memset(&shots[i], 0, sizeof(shots[i]));
	shots[i].what = what;
	shots[i].fd = -1;
	return &shots[i];
}

static void attack_ucx_len(const struct target *t, const struct port *p)
{
	struct shot *s = shot_new(0, "UCX magic + AM header of length 0xfffffff0 (77 B)");

	s->len = ucx_magic(s->bytes);
	s->len += ucx_am_hdr(s->bytes + s->len, 0, 0xfffffff0u);
	memset(s->bytes + s->len, 0x41, 77 - s->len);
	s->len = 77;
	volley(t, p, shots, 1);
}

static void attack_ucx_amid(const struct target *t, const struct port *p)
{
	struct shot *s = shot_new(0, "UCX magic + AM header of id 200");

	s->len = ucx_magic(s->bytes);
	s->len += ucx_am_hdr(s->bytes + s->len, 200, 0);
	volley(t, p, shots, 1);
}

static void attack_ucx_put(const struct target *t, const struct port *p)
{
	struct shot *s = shot_new(0, "UCX magic + PUT request of 8 B to address 0x10");

	s->len = ucx_magic(s->bytes);
	s->len += ucx_put(s->bytes + s->len, 0x10, 8, "WRITTEN!", 8);
	volley(t, p, shots, 1);
}

static void attack_readonly_put(const struct target *t, const struct port *p)
{
	struct shot *s;

	if (t->region.permissions & DOCA_ACCESS_FLAG_RDMA_WRITE)
		printf("NOTE link_attack: the region grants RDMA_WRITE; run this against a read-only export\n");
	/* Each PUT claims more than it carries: UCX wrote what came and
	 * waited for the rest (no acknowledgement, whose sending asserted),
	 * so the target lived on to find the bytes in its memory check. */
	s = shot_new(0, "UCX magic + PUT of \"WRITTEN!\" at the region's first byte");
	s->len = ucx_magic(s->bytes);
	s->len += ucx_put(s->bytes + s->len, t->region.addr, 4096, "WRITTEN!", 8);
	s = shot_new(1, "UCX magic + PUT of \"WRITTEN!\" at the byte past the region's end");
	s->len = ucx_magic(s->bytes);
	s->len += ucx_put(s->bytes + s->len, t->region.addr + t->region.len, 4096, "WRITTEN!", 8);
	volley(t, p, shots, 2);
}

/* Random bytes; every other connection starts with UCX's magic and goes
 * on with random UCX active messages (an id below 32, a length of at
 * most 255, random bytes): what the UCX receiver would have parsed. */
static void attack_random(const struct target *t, const struct port *p)
{
	for (int i = 0; i < RANDOM_CONNS; i++) {
		struct shot *s = shot_new(i, i % 2 ? "UCX magic + random UCX active messages" : "random bytes");
		size_t want = 1 + (size_t)(rng() % 4096);

		if (i < 4)
			want = 1 + (size_t)(rng() % (LT_FRAME_HDR + LT_AUTH_LEN)); /* some shorter than an AUTH */
		if (i % 2 == 0) {
			for (s->len = 0; s->len < want; s->len++)
				s->bytes[s->len] = (uint8_t)rng();
			continue;
		}
		s->len = ucx_magic(s->bytes);
		while (s->len + UCX_AM_HDR_LEN < want) {
			uint32_t len = (uint32_t)(rng() % 256);

			s->len += ucx_am_hdr(s->bytes + s->len, (uint8_t)(rng() % 32), len);
			for (uint32_t k = 0; k < len && s->len < sizeof(s->bytes); k++)
				s->bytes[s->len++] = (uint8_t)rng();
		}
	}
	volley(t, p, shots, RANDOM_CONNS);
}

static void attack_noauth(const struct target *t, const struct port *p)
{
	struct lt_frame f = {0};
	struct shot *s;

	s = shot_new(0, "HELLO + write request with the right secrets, no AUTH");
	s->len = hello_and_write(t, s->bytes);
	s = shot_new(1, "clear-to-send frame, no AUTH");
	f.type = LT_CTS;
	f.id = 1;
	f.len = 8;
	lt_frame_build(s->bytes, &f);
	memset(s->bytes + LT_FRAME_HDR, 0, LT_AUTH_LEN); /* an AUTH's worth: judgeable */
	s->len = LT_FRAME_HDR + LT_AUTH_LEN;
	s = shot_new(2, "DATA frame of 64 B, no AUTH");
	f.type = LT_DATA;
	f.len = 64;
	lt_frame_build(s->bytes, &f);
	memset(s->bytes + LT_FRAME_HDR, 0xEE, 64);
	s->len = LT_FRAME_HDR + 64;
	volley(t, p, shots, 3);
}

static void attack_badsecret(const struct target *t, const struct port *p)
{
	uint8_t secret[ENGINE_SECRET_LEN];
	struct shot *s;

	for (int i = 0; i < 2; i++) {
		s = shot_new(i, i == 0 ? "AUTH with the secret's first bit flipped, then HELLO + write" :
					 "AUTH with the secret's last bit flipped, then HELLO + write");
		memcpy(secret, t->secret, sizeof(secret));
		secret[i == 0 ? 0 : ENGINE_SECRET_LEN - 1] ^= i == 0 ? 0x01 : 0x80;
		s->len = lt_auth(s->bytes, t->conn_id, secret);
		s->len += hello_and_write(t, s->bytes + s->len);
	}
	volley(t, p, shots, 2);
}

static void attack_authid(const struct target *t, const struct port *p)
{
	static const char *const what[] = {"AUTH for connection 0 (right secret), then HELLO + write",
					   "AUTH for the next, never exported, connection id (right secret)",
					   "AUTH for connection 2^32-1 (right secret)"};
	const uint32_t ids[] = {0, t->conn_id + 1, UINT32_MAX};

	for (int i = 0; i < 3; i++) {
		struct shot *s = shot_new(i, what[i]);

		s->len = lt_auth(s->bytes, ids[i], t->secret);
		s->len += hello_and_write(t, s->bytes + s->len);
	}
	volley(t, p, shots, 3);
}

static void attack_truncated(const struct target *t, const struct port *p)
{
	static const size_t cuts[] = {1, 7, 8, 23, 24, 40, LT_FRAME_HDR + LT_AUTH_LEN - 1};
	static char what[sizeof(cuts) / sizeof(cuts[0])][64];

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct shot *s;

		snprintf(what[i], sizeof(what[i]), "the right AUTH cut after %zu B, then silence", cuts[i]);
		s = shot_new((int)i, what[i]);
		(void)lt_auth(s->bytes, t->conn_id, t->secret);
		s->len = cuts[i];
	}
	volley(t, p, shots, (int)(sizeof(cuts) / sizeof(cuts[0])));
}

/* Slow senders, one byte per SLOWLORIS_STEP_MS each: the right AUTH, and
 * UCX's magic followed by an AM header and its bytes. Each must be cut
 * off within SLOW_CLOSE_MS of its connect (56 bytes take 5.6 s). */
static void attack_slowloris(const struct target *t, const struct port *p)
{
	struct shot *s = shot_new(0, "the right AUTH");
	double t0, end;
	int n = 2, open_left = 0;

	s->len = lt_auth(s->bytes, t->conn_id, t->secret);
	s = shot_new(1, "UCX magic + an AM header of 43 B and its bytes");
	s->len = ucx_magic(s->bytes);
	s->len += ucx_am_hdr(s->bytes + s->len, 1, 43);
	memset(s->bytes + s->len, 0x42, 43);
	s->len += 43;
	for (int i = 0; i < n; i++) {
		shots[i].fd = dial(p);
		shots[i].t_connect = now_ms();
		if (shots[i].fd < 0)
			verdict(false, "%s: %s one byte every %d ms: cannot connect (%s)", p->text, shots[i].what,
				SLOWLORIS_STEP_MS, strerror(errno));
		else
			open_left++;
	}
	t0 = now_ms();
	end = t0 + SLOW_CLOSE_MS;
	while (open_left > 0 && now_ms() < end) {
		double step = now_ms() + SLOWLORIS_STEP_MS < end ? now_ms() + SLOWLORIS_STEP_MS : end;

		for (int i = 0; i < n; i++)
			if (shots[i].fd >= 0 && !shots[i].closed && shots[i].sent < shots[i].len &&
			    send(shots[i].fd, shots[i].bytes + shots[i].sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1)
				shots[i].sent++;
		/* Until the next step: each one's end, if it comes. */
		while (open_left > 0 && now_ms() < step) {
			struct pollfd pf[2];

			for (int i = 0; i < n; i++)
				pf[i] = (struct pollfd){.fd = shots[i].closed ? -1 : shots[i].fd,
							.events = POLLIN | POLLRDHUP};
			if (poll(pf, (nfds_t)n, (int)(step - now_ms()) + 1) <= 0)
				continue;
			for (int i = 0; i < n; i++) {
				uint8_t junk[64];
				ssize_t got;

				if (pf[i].revents == 0)
					continue;
				got = recv(shots[i].fd, junk, sizeof(junk), MSG_DONTWAIT);
				if (got > 0 || (got < 0 && (errno == EAGAIN || errno == EINTR)))
					continue;
				shots[i].closed = true;
				shots[i].t_last = now_ms();
				open_left--;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		if (shots[i].fd < 0)
			continue;
		verdict(shots[i].closed, "%s: %s one byte every %d ms: %s after %.0f ms, %zu of %zu B sent", p->text,
			shots[i].what, SLOWLORIS_STEP_MS,
			shots[i].closed ? "closed by the target" : "NOT closed by the target",
			(shots[i].closed ? shots[i].t_last : now_ms()) - shots[i].t_connect, shots[i].sent, shots[i].len);
		close(shots[i].fd);
	}
}

/* Whether DIR/name exists. */
static bool dir_has(const struct target *t, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	return stat(path, &st) == 0;
}

/* A socket connecting to p (non-blocking); -1 if none could be made. */
static int dial_async(const struct port *p)
{
	int fd = socket(p->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (const struct sockaddr *)&p->sa, p->len) != 0 && errno != EINPROGRESS) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Keep n idle connections to p open until end_ms, or until DIR/stop
 * exists (stop NULL: until end_ms): one the target closes is dialled
 * again at once, as a flood that means it would. The target's
 * descriptor count is sampled; *peak gets its highest, *redials how many
 * were dialled again. */
static void idle_hold(const struct target *t, const struct port *p, int *fds, int n, double end_ms, const char *stop,
		      int *peak, int *redials)
{
	static struct pollfd pf[IDLE_CONNS];
	uint8_t junk[256];

	while (now_ms() < end_ms && (stop == NULL || !dir_has(t, stop)) && target_alive(t)) {
		int k = target_fds(t);

		if (k > *peak)
			*peak = k;
		for (int i = 0; i < n; i++)
			pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN | POLLRDHUP};
		if (poll(pf, (nfds_t)n, 20) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			ssize_t got;

			if (pf[i].revents == 0)
				continue;
			got = recv(fds[i], junk, sizeof(junk), MSG_DONTWAIT);
			if (got > 0 || (got < 0 && (errno == EAGAIN || errno == EINTR)))
				continue;
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = dial_async(p);
			(*redials)++;
		}
	}
}

static void attack_idle(const struct target *t, const struct port *p, int base_fds)
{
	static int fds[IDLE_CONNS];
	struct rlimit rl;
	int opened = 0, peak = base_fds, redials = 0, fd;
	char path[PATH_MAX];

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < IDLE_CONNS + 64) {
		rl.rlim_cur = rl.rlim_max < IDLE_CONNS + 64 ? rl.rlim_max : IDLE_CONNS + 64;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < IDLE_CONNS + 64) {
		printf("SKIP link_attack idle: this process may open %llu descriptors, fewer than %d (ulimit -n)\n",
		       (unsigned long long)rl.rlim_cur, IDLE_CONNS + 64);
		skipped = true;
		return;
	}
	for (int i = 0; i < IDLE_CONNS; i++) {
		fds[i] = dial_async(p);
		opened += fds[i] >= 0;
	}
	verdict(opened == IDLE_CONNS, "%s: %d of %d idle connections opened", p->text, opened, IDLE_CONNS);
	idle_hold(t, p, fds, IDLE_CONNS, now_ms() + IDLE_SAMPLE_MS, NULL, &peak, &redials);
	verdict(peak <= base_fds + IDLE_FD_BOUND,
		"%s: the target's descriptors while %d idle connections are held (%d dialled again after the "
		"target closed them): at most %d (%d before; bound %d)",
		p->text, IDLE_CONNS, redials, peak, base_fds, base_fds + IDLE_FD_BOUND);
	verdict(target_alive(t), "%s: the target is %s while they are held", p->text,
		target_alive(t) ? "alive" : "DEAD");
	/* Held while the honest initiator runs (the target ends after it). */
	target_done = true;
	snprintf(path, sizeof(path), "%s/attack.holding", t->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	redials = 0;
	idle_hold(t, p, fds, IDLE_CONNS, now_ms() + IDLE_RELEASE_MS, "attack.release", &peak, &redials);
	verdict(peak <= base_fds + IDLE_FD_BOUND,
		"%s: the target's descriptors while the honest initiator ran (%d dialled again): at most %d "
		"(bound %d)",
		p->text, redials, peak, base_fds + IDLE_FD_BOUND);
	for (int i = 0; i < IDLE_CONNS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* ---- noread: a connected peer that never reads ------------------------------ */

/* VmRSS of the target, KiB; -1 if it is gone. */
static long target_rss_kib(const struct target *t)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void write_dir_file(const struct target *t, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) != 0 || rename(tmp, path) != 0)
		printf("NOTE link_attack: cannot write %s: %s\n", path, strerror(errno));
}

/*
 * A peer that holds the target's descriptor for it (rdma_peer --hostile:
 * hostile.target.conn) connects as itself (hostile.conn, our listener),
 * takes the target's connection to us and never reads it, and asks for
 * NOREAD_LEN-byte reads of the region, NOREAD_BURST at a time. Each
 * answer is queued at the target until the socket to us drains, which it
 * never does: the target must stop reading our requests (flow control)
 * before its resident size grows by NOREAD_RSS_MAX_KIB. Then hostile.done,
 * and hostile.checked is waited for (the target compared its memory).
 */
#define NOREAD_LEN 16384u     /* the largest answer the link sends whole (LT_COPY_MAX) */
#define NOREAD_BURST 64
#define NOREAD_MAX 40000      /* reads sent at most: 650 MB of answers */
/* What the link lets such a peer cost (LT_OUT_MAX) and some room; a
 * sanitizer's shadow of the heap makes every byte cost several. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NOREAD_RSS_MAX_KIB (384 * 1024)
#else
#define NOREAD_RSS_MAX_KIB (96 * 1024)
#endif
#define NOREAD_STALL_MS 2000  /* our socket full this long: the target stopped reading us */
#define NOREAD_SETTLE_MS 10000

static void attack_noread(struct target *t)
{
	uint8_t buf[WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN], *ours = NULL, secret[ENGINE_SECRET_LEN];
	struct wire_desc td, d = {.conn_id = 0x4e52, .has_tcp = true};
	struct sockaddr_storage sa;
	struct lt_addr link, me;
	struct port port;
	socklen_t sa_len;
	size_t len, ours_len = 0;
	long base, peak, rss;
	int lfd = -1, in = -1, out = -1, sent = 0, small = 1024;
	double end, stalled_since = 0;
	uint64_t wr = 1;

	if (read_dir_file(t, "hostile.target.conn", buf, sizeof(buf), &len) != 0 ||
	    wire_desc_parse(buf, len, &td) != DOCA_SUCCESS || !td.has_tcp ||
	    lt_addr_parse(td.tcp_addr, sizeof(td.tcp_addr), &link) != DOCA_SUCCESS) {
		verdict(false, "hostile.target.conn is not a descriptor with a tcp link (run the target with --hostile "
			       "and UCX_TLS=tcp)");
		return;
	}
	t->conn_id = td.conn_id;
	memcpy(t->secret, td.secret, ENGINE_SECRET_LEN);
	/* Our listener on the target's address, our descriptor. */
	me = link;
	me.port = 0;
	memset(&sa, 0, sizeof(sa));
	if (me.family == 4) {
		((struct sockaddr_in *)&sa)->sin_family = AF_INET;
		memcpy(&((struct sockaddr_in *)&sa)->sin_addr, me.addr, 4);
		sa_len = sizeof(struct sockaddr_in);
	} else {
		((struct sockaddr_in6 *)&sa)->sin6_family = AF_INET6;
		memcpy(&((struct sockaddr_in6 *)&sa)->sin6_addr, me.addr, 16);
		sa_len = sizeof(struct sockaddr_in6);
	}
	lfd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sa_len) != 0 || listen(lfd, 2) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sa_len) != 0) {
		verdict(false, "cannot listen: %s", strerror(errno));
		goto out;
	}
	me.port = ntohs(sa.ss_family == AF_INET ? ((struct sockaddr_in *)&sa)->sin_port :
						  ((struct sockaddr_in6 *)&sa)->sin6_port);
	for (size_t i = 0; i < sizeof(secret); i++)
		secret[i] = (uint8_t)rng();
	memcpy(d.secret, secret, sizeof(secret));
	d.pid = (uint32_t)getpid();
	lt_addr_build(d.tcp_addr, &me);
	if (wire_desc_build(&d, &ours, &ours_len) != DOCA_SUCCESS) {
		verdict(false, "wire_desc_build");
		goto out;
	}
	/* The target writes to us on the one connection of the two sides:
	 * the one it opens to our listener (left in its backlog, never
	 * accepted or read) or ours (never read). Either way with a receive
	 * buffer as small as the kernel allows. */
	(void)setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	write_dir_file(t, "hostile.conn", ours, ours_len);
	port.len = 0;
	memset(&port.sa, 0, sizeof(port.sa));
	if (link.family == 4) {
		struct sockaddr_in *a = (struct sockaddr_in *)&port.sa;

		a->sin_family = AF_INET;
		a->sin_port = htons(link.port);
		memcpy(&a->sin_addr, link.addr, 4);
		port.len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&port.sa;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(link.port);
		memcpy(&a->sin6_addr, link.addr, 16);
		port.len = sizeof(*a);
	}
	snprintf(port.text, sizeof(port.text), "link port %u", link.port);
	out = dial(&port);
	if (out >= 0)
		(void)setsockopt(out, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (out < 0) {
		verdict(false, "cannot connect to the target's %s", port.text);
		goto out;
	}
	{
		uint8_t open[LT_FRAME_HDR + LT_AUTH_LEN + LT_FRAME_HDR + sizeof(struct wire_hello)];
		struct wire_hello hello = {.version = WIRE_VERSION, .dst_conn_id = t->conn_id, .src_conn_id = d.conn_id};
		size_t n = lt_auth(open, t->conn_id, t->secret);

		memcpy(hello.dst_secret, t->secret, ENGINE_SECRET_LEN);
		memcpy(hello.src_secret, secret, ENGINE_SECRET_LEN);
		n += lt_msg(open + n, WIRE_AM_HELLO, &hello, sizeof(hello), NULL, 0);
		if (send_all(out, open, n) != n) {
			verdict(false, "the target closed our connection at its AUTH and HELLO");
			goto out;
		}
	}
	base = peak = target_rss_kib(t);
	end = now_ms() + 30000;
	while (sent < NOREAD_MAX && now_ms() < end) {
		static uint8_t burst[NOREAD_BURST * (LT_FRAME_HDR + sizeof(struct wire_req))];
		size_t n = 0, off = 0;

		for (int i = 0; i < NOREAD_BURST; i++) {
			struct wire_req r = {.version = WIRE_VERSION, .opcode = ENGINE_OP_READ, .dst_conn_id = t->conn_id,
					     .src_conn_id = d.conn_id, .wr_id = wr++, .region_id = t->region.region_id,
					     .remote_addr = t->region.addr, .length = NOREAD_LEN};

			memcpy(r.dst_secret, t->secret, ENGINE_SECRET_LEN);
			memcpy(r.region_secret, t->region.secret, ENGINE_SECRET_LEN);
			n += lt_msg(burst + n, WIRE_AM_REQ, &r, sizeof(r), NULL, 0);
		}
		while (off < n) {
			ssize_t k = send(out, burst + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);

			if (k > 0) {
				off += (size_t)k;
				stalled_since = 0;
				continue;
			}
			if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
				struct pollfd p = {.fd = out, .events = POLLOUT};

				if (stalled_since == 0)
					stalled_since = now_ms();
				if (now_ms() - stalled_since > NOREAD_STALL_MS)
					break;
				(void)poll(&p, 1, 50);
				continue;
			}
			verdict(false, "the target closed our connection after %d reads (%s)", sent,
				k == 0 ? "end" : strerror(errno));
			goto out;
		}
		if (off < n)
			break; /* it stopped reading us: flow control */
		sent += NOREAD_BURST;
		rss = target_rss_kib(t);
		if (rss > peak)
			peak = rss;
		if (rss < 0 || peak - base > NOREAD_RSS_MAX_KIB)
			break;
	}
	/* The target works through what it read: its size until it stops
	 * growing for a second (at most NOREAD_SETTLE_MS). */
	for (double last_growth = now_ms(), stop = now_ms() + NOREAD_SETTLE_MS;
	     now_ms() < stop && now_ms() - last_growth < 1000 && peak - base <= NOREAD_RSS_MAX_KIB;) {
		poll(NULL, 0, 50);
		rss = target_rss_kib(t);
		if (rss < 0)
			break;
		if (rss > peak) {
			peak = rss;
			last_growth = now_ms();
		}
	}
	rss = target_rss_kib(t);
	if (rss > peak)
		peak = rss;
	printf("NOTE link_attack noread: %d reads of %u B sent, %s; the target's resident size %ld KiB before, "
	       "%ld KiB at most\n",
	       sent, NOREAD_LEN,
	       stalled_since != 0 ? "then the target stopped reading us" : "the target read them all", base,
	       peak);
	verdict(rss >= 0 && peak - base <= NOREAD_RSS_MAX_KIB,
		"a peer that never reads: the target's resident size grew by %ld KiB (bound %d KiB)%s", peak - base,
		NOREAD_RSS_MAX_KIB, rss < 0 ? "; the target is DEAD" : "");
out:
	write_dir_file(t, "hostile.done", "noread", 6);
	end = now_ms() + FILE_WAIT_MS;
	while (!dir_has(t, "hostile.checked") && target_alive(t) && now_ms() < end)
		poll(NULL, 0, 10);
	free(ours);
	if (out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	if (lfd >= 0)
		close(lfd);
}

/* ---- main ------------------------------------------------------------------------------ */

static const char *const attacks[] = {"ucx_len",   "ucx_amid", "ucx_put",   "readonly_put", "random", "noauth",
				      "badsecret", "authid",   "truncated", "slowloris",    "idle",   "noread"};

static void run_attack(const struct target *t, const struct port *p, int base_fds)
{
	if (strcmp(attack_name, "ucx_len") == 0)
		attack_ucx_len(t, p);
	else if (strcmp(attack_name, "ucx_amid") == 0)
		attack_ucx_amid(t, p);
	else if (strcmp(attack_name, "ucx_put") == 0)
		attack_ucx_put(t, p);
	else if (strcmp(attack_name, "readonly_put") == 0)
		attack_readonly_put(t, p);
	else if (strcmp(attack_name, "random") == 0)
		attack_random(t, p);
	else if (strcmp(attack_name, "noauth") == 0)
		attack_noauth(t, p);
	else if (strcmp(attack_name, "badsecret") == 0)
		attack_badsecret(t, p);
	else if (strcmp(attack_name, "authid") == 0)
		attack_authid(t, p);
	else if (strcmp(attack_name, "truncated") == 0)
		attack_truncated(t, p);
	else if (strcmp(attack_name, "slowloris") == 0)
		attack_slowloris(t, p);
	else
		attack_idle(t, p, base_fds);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: link_attack --pid PID --dir DIR --attack NAME [--seed N]\nattacks:");
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
		fprintf(f, " %s", attacks[i]);
	fprintf(f, "\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"dir", required_argument, NULL, 'd'},
		{"attack", required_argument, NULL, 'a'},
		{"seed", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct target t = {0};
	struct port ports[MAX_PORTS];
	bool known = false;
	int nports, opt, base_fds;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			t.pid = (pid_t)atoi(optarg);
			break;
		case 'd':
			t.dir = optarg;
			break;
		case 'a':
			attack_name = optarg;
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0) | 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++)
		known |= strcmp(attacks[i], attack_name) == 0;
	if (t.pid <= 0 || t.dir == NULL || !known || optind != argc) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(attack_name, "noread") == 0) {
		uint8_t buf[256];
		size_t len;

		/* Not a port attack: a peer that holds a descriptor. */
		if (read_dir_file(&t, "target.mmap", buf, sizeof(buf), &len) != 0 ||
		    softdoca_mmap_desc_parse(buf, len, &t.region) != DOCA_SUCCESS)
			return 2;
		attack_noread(&t);
		printf("link_attack %s: %s\n", attack_name, failures == 0 ? "all checks passed" : "FAILED");
		return failures == 0 ? 0 : 1;
	}
	if (read_target(&t) != 0)
		return 2;
	nports = scan_ports(&t, ports);
	if (nports <= 0) {
		printf("FAIL link_attack setup: the target (pid %d) listens on no TCP port (%s)\n", (int)t.pid,
		       nports < 0 ? strerror(errno) : "none found");
		return 2;
	}
	printf("NOTE link_attack: the target listens on");
	for (int i = 0; i < nports; i++)
		printf(" %s", ports[i].text);
	printf("\n");
	base_fds = target_fds(&t);
	for (int i = 0; i < nports; i++) {
		double end;
		int fds = -1;

		run_attack(&t, &ports[i], base_fds);
		if (skipped)
			return 77;
		if (target_done)
			continue;
		/* What the attack made the target open goes away. */
		end = now_ms() + FD_SETTLE_MS;
		while (target_alive(&t) && (fds = target_fds(&t)) > base_fds + FD_SLACK && now_ms() < end)
			poll(NULL, 0, 20);
		if (!target_alive(&t)) {
			verdict(false, "%s: the target is DEAD after the attack", ports[i].text);
			break;
		}
		verdict(fds >= 0 && fds <= base_fds + FD_SLACK,
			"%s: the target is alive, its descriptors back to %d (%d before the attack; bound %d)",
			ports[i].text, fds, base_fds, base_fds + FD_SLACK);
	}
	printf("link_attack %s: %s\n", attack_name, failures == 0 ? "all checks passed" : "FAILED");
	return failures == 0 ? 0 : 1;
}
