/*
 * libFuzzer target for the bytes a Comch peer sends: the frame parser
 * alone, and frames into a LIVE server and a LIVE client over their real
 * Unix sockets (softdoca's comch and core code compiled in; no UCX).
 *
 * At startup: a rendezvous directory of our own (SOFTDOCA_PCIE_DIR), the
 * first soft device, its function's representor, a PE, a server "fuzz"
 * on that representor, and a client context for a server "fuzz-raw" that
 * the target itself plays. The first input byte picks the mode:
 *   0  parse: comch_frame_parse of the rest, with a receive limit from
 *      the second byte; what it accepts must lie inside the input
 *   1  server: a client socket of ours says HELLO (the server's secret;
 *      unless flag bit 0 of the second byte says the input does), then
 *      sends the chunks below, the server progressing after each; then we
 *      close
 *   2  client: we listen as "fuzz-raw", the client connects and says
 *      HELLO, we answer WELCOME (unless flag bit 0 says the input does),
 *      then send the chunks, the client progressing after each; then we
 *      close
 * A chunk is a flags byte, a 16-bit little-endian length and that many
 * bytes. Flag bit 0: the bytes are a frame type (16 bits) and a payload,
 * sent with a correct header (magic, version, next sequence number,
 * length), else they go as they are. Bit 1: a queue goes with it as a
 * consumer announces one (a sealed memfd of the size the payload's
 * CONSUMER_NEW fields name, its header to match, and a doorbell socket);
 * bit 2 spoils the queue's header, bit 3 sends an eventfd as the
 * doorbell, bit 4 leaves the memfd unsealed.
 *
 * After each live input the side under test must be back where it was:
 * every connection it reported is reported gone (as many disconnection
 * callbacks as connection callbacks; the client's context IDLE), every
 * consumer announced on it expired, callbacks ran on this thread only,
 * and as many sockets, memfds, eventfds and epoll sets are open as
 * before (the kinds Comch opens; the sanitizers open pipes of their own
 * whenever they like). Otherwise the target
 * aborts, which libFuzzer reports as a crash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_pe.h>

#include "channel.h"
#include "comch_internal.h"
#include "dev_rep.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SERVER_NAME "fuzz"
#define RAW_NAME "fuzz-raw"
#define WAIT_MS 2000	     /* a side reaches its state by then */
#define MAX_QUEUE (64u << 20) /* larger announced queues get a small memfd (refused) */

static struct {
	char dir[64];
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
	struct softdoca_pcie_link client_link; /* where the client looks for "fuzz-raw" */
	struct doca_pe *pe;
	struct doca_comch_server *server;
	struct doca_comch_client *client;
	pthread_t thread;
	int base_fds;
	/* what the callbacks saw */
	long connects, disconnects, new_consumers, expired_consumers;
	uint64_t bytes_seen;
} g;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_comch: %s\n", what);
	abort();
}

static void check(doca_error_t err, const char *what)
{
	if (err != DOCA_SUCCESS)
		die(what);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* What the open descriptors are, for the report of a leak. */
static void list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[300], target[256] = "";

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		if (readlink(path, target, sizeof(target) - 1) < 0)
			continue;
		fprintf(stderr, "  fd %s -> %s\n", e->d_name, target);
	}
	closedir(d);
}

/* Is target (what /proc says a descriptor is) of a kind Comch opens? The
 * sanitizers open pipes of their own (to a symbolizer) whenever they like. */
static bool fd_is_ours(const char *target)
{
	return strncmp(target, "socket:", 7) == 0 || strncmp(target, "anon_inode:", 11) == 0 ||
	       strncmp(target, "/memfd:", 7) == 0 || strncmp(target, g.dir, strlen(g.dir)) == 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		die("cannot open /proc/self/fd");
	while ((e = readdir(d)) != NULL) {
		char path[300], target[256] = "";

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		if (readlink(path, target, sizeof(target) - 1) > 0 && fd_is_ours(target))
			n++;
	}
	closedir(d);
	return n;
}

/* ---- callbacks: count, read every byte, and only on this thread ---- */

static void on_thread(void)
{
	if (!pthread_equal(pthread_self(), g.thread))
		die("a callback ran outside the application's thread");
}

static void on_msg(struct doca_comch_event_msg_recv *ev, uint8_t *buf, uint32_t len,
		   struct doca_comch_connection *conn)
{
	(void)ev;
	(void)conn;
	on_thread();
	if (len == 0 || len > COMCH_MAX_MSG_SIZE)
		die("a message of a length no frame may have");
	for (uint32_t i = 0; i < len; i++)
		g.bytes_seen += buf[i]; /* out of bounds: ASan says so */
}

static void on_connect(struct doca_comch_event_connection_status_changed *ev, struct doca_comch_connection *conn,
		       uint8_t ok)
{
	(void)ev;
	(void)conn;
	on_thread();
	g.connects += ok != 0;
}

static void on_disconnect(struct doca_comch_event_connection_status_changed *ev,
			  struct doca_comch_connection *conn, uint8_t ok)
{
	(void)ev;
	(void)conn;
	(void)ok;
	on_thread();
	g.disconnects++;
}

static void on_new_consumer(struct doca_comch_event_consumer *ev, struct doca_comch_connection *conn, uint32_t id)
{
	(void)ev;
	(void)conn;
	(void)id;
	on_thread();
	g.new_consumers++;
}

static void on_expired_consumer(struct doca_comch_event_consumer *ev, struct doca_comch_connection *conn,
				uint32_t id)
{
	(void)ev;
	(void)conn;
	(void)id;
	on_thread();
	g.expired_consumers++;
}

static void on_send(struct doca_comch_task_send *task, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	doca_task_free(doca_comch_task_send_as_task(task));
}

/* ---- setup ---- */

static struct doca_dev_rep *open_rep(struct doca_dev *dev)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	struct doca_devinfo_rep **list;
	struct doca_dev_rep *rep = NULL;
	uint32_t n;

	check(doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(dev), pci), "pci address");
	check(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &list, &n), "representor list");
	for (uint32_t i = 0; i < n && rep == NULL; i++) {
		uint8_t eq = 0;

		if (doca_devinfo_rep_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			check(doca_dev_rep_open(list[i], &rep), "representor open");
	}
	doca_devinfo_rep_destroy_list(list);
	if (rep == NULL)
		die("no representor of the first device's function");
	return rep;
}

static void server_open(void)
{
	struct doca_ctx *ctx;

	check(doca_comch_server_create(g.dev, g.rep, SERVER_NAME, &g.server), "server create");
	ctx = doca_comch_server_as_ctx(g.server);
	check(doca_comch_server_task_send_set_conf(g.server, on_send, on_send, 16), "server send conf");
	check(doca_comch_server_event_msg_recv_register(g.server, on_msg), "server recv");
	check(doca_comch_server_event_connection_status_changed_register(g.server, on_connect, on_disconnect),
	      "server connection events");
	check(doca_comch_server_event_consumer_register(g.server, on_new_consumer, on_expired_consumer),
	      "server consumer events");
	check(doca_pe_connect_ctx(g.pe, ctx), "server pe");
	check(doca_ctx_start(ctx), "server start");
}

static void client_create(void)
{
	check(doca_comch_client_create(g.dev, RAW_NAME, &g.client), "client create");
	check(doca_comch_client_task_send_set_conf(g.client, on_send, on_send, 16), "client send conf");
	check(doca_comch_client_event_msg_recv_register(g.client, on_msg), "client recv");
	check(doca_comch_client_event_consumer_register(g.client, on_new_consumer, on_expired_consumer),
	      "client consumer events");
	check(doca_pe_connect_ctx(g.pe, doca_comch_client_as_ctx(g.client)), "client pe");
}

static enum doca_ctx_states state_of(struct doca_ctx *ctx)
{
	enum doca_ctx_states st;

	check(doca_ctx_get_state(ctx, &st), "state");
	return st;
}

/* Progress until ctx is in state want; false when WAIT_MS passed. */
static bool progress_to(struct doca_ctx *ctx, enum doca_ctx_states want)
{
	uint64_t end = now_ms() + WAIT_MS;

	while (state_of(ctx) != want) {
		if (now_ms() > end)
			return false;
		(void)doca_pe_progress(g.pe);
	}
	return true;
}

/* Progress until nothing more happens (bounded). */
static void progress_idle(void)
{
	for (int i = 0; i < 64 && doca_pe_progress(g.pe) != 0; i++)
		;
}

static void cleanup(void)
{
	struct doca_ctx *ctx = doca_comch_server_as_ctx(g.server);

	(void)doca_ctx_stop(ctx);
	if (!progress_to(ctx, DOCA_CTX_STATE_IDLE))
		die("the server did not stop");
	(void)doca_comch_server_destroy(g.server);
	(void)doca_comch_client_destroy(g.client);
	(void)doca_pe_destroy(g.pe);
	(void)doca_dev_rep_close(g.rep);
	(void)doca_dev_close(g.dev);
	(void)rmdir(g.dir);
	/* How deep the inputs went. */
	fprintf(stderr, "fuzz_comch: %ld connections reported and ended, %ld consumers announced and expired\n",
		g.connects, g.new_consumers);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct doca_devinfo **list;
	uint32_t n;

	(void)argc;
	(void)argv;
	/* Rejections are the expected outcome: keep the output quiet. */
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	g.thread = pthread_self();
	snprintf(g.dir, sizeof(g.dir), "/tmp/softdoca-fuzz-comch-XXXXXX");
	if (mkdtemp(g.dir) == NULL || setenv("SOFTDOCA_PCIE_DIR", g.dir, 1) != 0)
		die("cannot make a rendezvous directory");
	check(doca_devinfo_create_list(&list, &n), "device list");
	if (n == 0)
		die("no soft device");
	check(doca_dev_open(list[0], &g.dev), "device open");
	doca_devinfo_destroy_list(list);
	g.rep = open_rep(g.dev);
	check(softdoca_dev_pcie_link(g.dev, &g.client_link), "client link");
	check(doca_pe_create(&g.pe), "pe");
	server_open();
	client_create();
	atexit(cleanup);
	return 0;
}

/* ---- sending what the input says ---- */

/* Send len raw bytes as one datagram, with nfds descriptors. */
static void send_raw(int fd, const uint8_t *buf, size_t len, const int *fds, unsigned int nfds)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * 2)];
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	(void)sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

enum {
	CHUNK_FRAMED = 1,
	CHUNK_QUEUE = 2,
	CHUNK_SPOIL_HDR = 4,
	CHUNK_EVENTFD = 8,
	CHUNK_UNSEALED = 16,
};

/* A queue as a consumer announces one, for a payload that may be a
 * CONSUMER_NEW: fds[0] the memfd, fds[1] the doorbell (both ours to close). */
static void queue_make(uint8_t flags, const uint8_t *payload, size_t len, int fds[2])
{
	uint32_t slots = len >= COMCH_CONSUMER_NEW_LEN ? le32(payload + 4) : 1;
	uint32_t slot_size = len >= COMCH_CONSUMER_NEW_LEN ? le32(payload + 8) : 1;
	size_t size = 4096;
	struct comch_queue_hdr hdr;
	int bell[2];

	if (slots >= 1 && slots <= COMCH_FP_MAX_SLOTS && slot_size >= 1 && slot_size <= COMCH_FP_MAX_BUF &&
	    comch_queue_size(slots, slot_size) <= MAX_QUEUE)
		size = comch_queue_size(slots, slot_size);
	fds[0] = memfd_create("fuzz-queue", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fds[0] < 0 || ftruncate(fds[0], (off_t)size) != 0)
		die("memfd");
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = COMCH_QUEUE_MAGIC;
	hdr.version = COMCH_QUEUE_VERSION;
	hdr.slots = slots;
	hdr.slot_size = slot_size;
	hdr.imm_max = len >= COMCH_CONSUMER_NEW_LEN ? le32(payload + 12) : 0;
	if (flags & CHUNK_SPOIL_HDR)
		hdr.slots ^= 1;
	if (pwrite(fds[0], &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		die("queue header");
	if ((flags & CHUNK_UNSEALED) == 0 && fcntl(fds[0], F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
		die("seals");
	if (flags & CHUNK_EVENTFD) {
		fds[1] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fds[1] < 0)
			die("eventfd");
		return;
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, bell) != 0)
		die("socketpair");
	close(bell[0]); /* rings to nowhere: the peer's end is all a test needs */
	fds[1] = bell[1];
}

/* Send one chunk on chan as its flags say. */
static void chunk_send(struct comch_chan *chan, uint8_t flags, const uint8_t *bytes, size_t len)
{
	int fds[2] = {-1, -1};
	unsigned int nfds = 0;

	if (flags & CHUNK_QUEUE) {
		const uint8_t *payload = (flags & CHUNK_FRAMED) && len >= 2 ? bytes + 2 : bytes;

		queue_make(flags, payload, len - (size_t)(payload - bytes), fds);
		nfds = 2;
	}
	if ((flags & CHUNK_FRAMED) && len >= 2)
		(void)comch_chan_send_fds(chan, (uint16_t)(bytes[0] | (bytes[1] << 8)), bytes + 2, (uint32_t)(len - 2),
					  fds, nfds);
	else
		send_raw(chan->fd, bytes, len, fds, nfds);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]);
}

/* Send each chunk of the input, progressing after each. */
static void chunks_send(struct comch_chan *chan, const uint8_t *data, size_t size)
{
	while (size >= 3) {
		uint8_t flags = data[0];
		size_t len = (size_t)data[1] | ((size_t)data[2] << 8);

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		chunk_send(chan, flags, data, len);
		data += len;
		size -= len;
		progress_idle();
	}
}

/* ---- the modes ---- */

static void fuzz_parse(const uint8_t *data, size_t size)
{
	uint32_t max_msg = size > 0 && data[0] != 0xff ? 1u + data[0] * 16u : COMCH_MAX_MSG_SIZE;
	const uint8_t *frame = size > 0 ? data + 1 : data;
	size_t len = size > 0 ? size - 1 : 0;
	struct comch_frame f;

	if (comch_frame_parse(frame, len, max_msg, "fuzz", &f) != DOCA_SUCCESS)
		return;
	if (len != COMCH_HDR_LEN + (size_t)f.len || f.payload != frame + COMCH_HDR_LEN)
		die("an accepted frame's payload is not the rest of the datagram");
	if (f.type == COMCH_FRAME_MSG && (f.len == 0 || f.len > max_msg))
		die("an accepted message of a length out of range");
	if (f.type == COMCH_FRAME_HELLO &&
	    (f.u.hello.name_len == 0 || COMCH_HELLO_FIXED_LEN + (size_t)f.u.hello.name_len != f.len ||
	     memchr(f.u.hello.name, '\0', f.u.hello.name_len) != NULL))
		die("an accepted HELLO whose name is not inside it");
	for (uint32_t i = 0; i < f.len; i++)
		g.bytes_seen += f.payload[i];
}

/* The descriptors must come back to where they were after a live input. */
static void fds_check(void)
{
	uint64_t end = now_ms() + WAIT_MS;

	if (g.base_fds == 0) {
		g.base_fds = count_fds();
		return;
	}
	while (count_fds() != g.base_fds) {
		if (now_ms() > end) {
			fprintf(stderr, "fuzz_comch: %d descriptors open, %d before:\n", count_fds(), g.base_fds);
			list_fds();
			die("descriptors leaked");
		}
		(void)doca_pe_progress(g.pe);
	}
}

static void fuzz_server(uint8_t mode_flags, const uint8_t *data, size_t size)
{
	uint8_t secret[COMCH_SECRET_LEN], hello[COMCH_HELLO_FIXED_LEN + COMCH_MAX_NAME_LEN];
	struct comch_chan chan;
	uint64_t end;
	uint32_t len;
	int fd;

	if (comch_connect(&g.client_link, SERVER_NAME, &fd, secret) != DOCA_SUCCESS)
		die("cannot reach the server");
	if (comch_chan_init(&chan, fd) != DOCA_SUCCESS)
		die("channel");
	if ((mode_flags & 1) == 0) {
		len = comch_hello_encode(hello, COMCH_MAX_MSG_SIZE, 16, SERVER_NAME, sizeof(SERVER_NAME) - 1, secret);
		(void)comch_chan_send(&chan, COMCH_FRAME_HELLO, hello, len);
	}
	progress_idle();
	chunks_send(&chan, data, size);
	comch_chan_fini(&chan);
	end = now_ms() + WAIT_MS;
	while (g.connects != g.disconnects && now_ms() < end)
		(void)doca_pe_progress(g.pe);
	if (state_of(doca_comch_server_as_ctx(g.server)) != DOCA_CTX_STATE_RUNNING)
		die("the server stopped");
	if (g.connects != g.disconnects)
		die("a connection ended without the disconnection callback");
	if (g.new_consumers != g.expired_consumers)
		die("a consumer of a connection that ended did not expire");
}

/* Accept the client and read its HELLO; false if it did not come. */
static bool raw_accept(struct comch_listener *l, struct comch_chan *chan)
{
	uint64_t end = now_ms() + WAIT_MS;
	struct comch_frame f;
	int fd = -1;

	while (comch_listener_accept(l, &fd) != DOCA_SUCCESS) {
		if (now_ms() > end)
			return false;
		(void)doca_pe_progress(g.pe);
	}
	if (comch_chan_init(chan, fd) != DOCA_SUCCESS)
		die("channel");
	for (;;) {
		doca_error_t st = comch_chan_recv(chan, COMCH_MAX_MSG_SIZE, "fuzz", &f);

		if (st == DOCA_SUCCESS && f.type == COMCH_FRAME_HELLO)
			return true;
		if (st != DOCA_ERROR_AGAIN || now_ms() > end)
			die("the client did not say HELLO");
		(void)doca_pe_progress(g.pe);
	}
}

static void fuzz_client(uint8_t mode_flags, const uint8_t *data, size_t size)
{
	struct doca_ctx *ctx = doca_comch_client_as_ctx(g.client);
	struct comch_listener l;
	struct comch_chan chan;
	uint8_t welcome[8] = {0};

	if (comch_listener_open(&l, &g.client_link, RAW_NAME) != DOCA_SUCCESS)
		die("cannot listen");
	if (doca_ctx_start(ctx) != DOCA_ERROR_IN_PROGRESS)
		die("client start");
	if (!raw_accept(&l, &chan))
		die("the client did not connect");
	if ((mode_flags & 1) == 0) {
		welcome[0] = (uint8_t)(COMCH_MAX_MSG_SIZE & 0xff);
		welcome[1] = (uint8_t)(COMCH_MAX_MSG_SIZE >> 8);
		welcome[4] = 1; /* connection id */
		(void)comch_chan_send(&chan, COMCH_FRAME_WELCOME, welcome, sizeof(welcome));
	}
	progress_idle();
	chunks_send(&chan, data, size);
	/* The listener first: a client still starting must not come back. */
	comch_listener_close(&l);
	comch_chan_fini(&chan);
	progress_idle();
	if (state_of(ctx) == DOCA_CTX_STATE_STARTING)
		(void)doca_ctx_stop(ctx); /* still in its handshake: it would retry */
	/* A running client ends by itself: its server closed. */
	if (!progress_to(ctx, DOCA_CTX_STATE_IDLE))
		die("the client did not stop after its server closed");
	if (g.new_consumers != g.expired_consumers)
		die("a consumer of a connection that ended did not expire");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_parse(data + 1, size - 1);
		return 0;
	case 1:
		fuzz_server(data[1], data + 2, size - 2);
		break;
	default:
		fuzz_client(data[1], data + 2, size - 2);
		break;
	}
	fds_check();
	return 0;
}
