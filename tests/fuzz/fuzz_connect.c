/*
 * libFuzzer target for what a peer hands a LIVE doca_rdma context: a
 * connection descriptor given to doca_rdma_connect, and the bytes a
 * client writes to an RDMA CM listening port. Everything goes through the
 * public API; the CM frames are written by hand from the wire format
 * (src/engine/wire.h), so the target knows nothing of the engine.
 *
 * At startup: the soft loopback device ("soft_lo"), a PE, one RC context
 * listening on a loopback port, and one exported connection whose
 * descriptor is the real one the seeds carry. The first input byte picks
 * the mode:
 *   even  descriptor: export a new connection, doca_rdma_connect it to the
 *         rest of the input, progress (bounded), disconnect (which frees
 *         the slot for the next input)
 *   odd   RDMA CM: a fresh TCP socket to the listening port gets the rest
 *         of the input, then its write side is shut; the context accepts
 *         the request (accepting is what makes the server read the frame,
 *         parse the descriptor and create the UCX endpoint) and we wait,
 *         bounded, for the server to close the socket or answer; then the
 *         accepted connection must end (failure callback) once we close.
 * After every input nothing may have grown: a probe connection must still
 * be exportable (no slot held) and the open file descriptors must come
 * back to where they were (bounded wait); otherwise the target aborts,
 * which libFuzzer reports as a crash.
 *
 * FUZZ_CONNECT_SEED_DIR=DIR: write the two seeds (a real descriptor, a
 * real CM request frame carrying it) into DIR at startup, before libFuzzer
 * reads its corpus. FUZZ_CONNECT_ONLY=desc|cm: every input in that mode
 * (the first byte still goes).
 *
 * Mutated UCX addresses may name any IP address: run this only where no
 * traffic can leave the host (run_fuzz.sh uses a private network
 * namespace).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_rdma.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The CM frame header (wire.h): magic "SDCM" u32 LE, type u8, private
 * data length u8, reserved u16, descriptor length u32 LE. */
#define CM_MAGIC 0x4d434453u
#define CM_HDR_LEN 12
#define CM_REQ 1

#define MAX_CONNS 4        /* the seed's, one per input, the CM request, the probe */
#define DESC_PROGRESS 64   /* PE progress calls after a connect */
#define CM_WAIT_MS 2000    /* the server closes or answers by then */
#define CLOSE_WAIT_MS 2000 /* the accepted connection ends by then after our close */
#define FD_WAIT_MS 2000    /* leftover fds go by then */
#define FD_LIMIT 32        /* more fds than at start: a leak, not UCX being late */

static struct {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	uint16_t port;
	uint8_t *seed_desc; /* copy of the seed connection's descriptor */
	size_t seed_desc_len;
	int base_fds;
	/* The connection request of the current CM input. */
	struct doca_rdma_connection *req;
	int requests;
	bool req_ended;
	/* A connection ended that was not the current request's. */
	int stray_ends;
	int restarts; /* context restarts that gave fds back */
} g;

static void die(const char *fmt, const char *what)
{
	fprintf(stderr, "fuzz_connect: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n");
	abort();
}

static void check(doca_error_t err, const char *what)
{
	if (err != DOCA_SUCCESS)
		die("setup: %s failed", what);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* What the open fds are, for the report of a leak. */
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

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		die("cannot open %s", "/proc/self/fd");
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/* ---- connection callbacks ---------------------------------------- */

static void on_request(struct doca_rdma_connection *conn, union doca_data ctx_ud)
{
	(void)ctx_ud;
	g.requests++;
	g.req = conn;
	g.req_ended = false;
	/* Accept: only then does the server read the client's descriptor. */
	if (doca_rdma_connection_accept(conn, NULL, 0) != DOCA_SUCCESS)
		g.req_ended = true;
}

static void on_established(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	(void)conn_ud;
	(void)ctx_ud;
	/* Nothing the fuzzer sends can complete a handshake with us (the
	 * peer's HELLO would need a secret only we know): drop it anyway.
	 * Our own disconnect has no callback, so it ends the request here. */
	(void)doca_rdma_connection_disconnect(conn);
	if (conn == g.req)
		g.req_ended = true;
}

static void on_end(struct doca_rdma_connection *conn, union doca_data conn_ud, union doca_data ctx_ud)
{
	(void)conn_ud;
	(void)ctx_ud;
	if (conn == g.req)
		g.req_ended = true;
	else
		g.stray_ends++;
}

/* ---- setup ---------------------------------------------------------- */

static void open_soft_lo(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;

	check(doca_devinfo_create_list(&list, &n), "doca_devinfo_create_list");
	for (uint32_t i = 0; i < n && g.dev == NULL; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS &&
		    strcmp(name, "soft_lo") == 0)
			check(doca_dev_open(list[i], &g.dev), "doca_dev_open(soft_lo)");
	}
	doca_devinfo_destroy_list(list);
	if (g.dev == NULL)
		die("no device named %s", "soft_lo");
}

static void start_context(void)
{
	check(doca_pe_create(&g.pe), "doca_pe_create");
	check(doca_rdma_create(g.dev, &g.rdma), "doca_rdma_create");
	g.ctx = doca_rdma_as_ctx(g.rdma);
	check(doca_rdma_set_max_num_connections(g.rdma, MAX_CONNS), "doca_rdma_set_max_num_connections");
	check(doca_rdma_set_connection_state_callbacks(g.rdma, on_request, on_established, on_end, on_end),
	      "doca_rdma_set_connection_state_callbacks");
	check(doca_pe_connect_ctx(g.pe, g.ctx), "doca_pe_connect_ctx");
	check(doca_ctx_start(g.ctx), "doca_ctx_start");
}

static void listen_somewhere(void)
{
	/* A port from the pid: several fuzzers may share a host. */
	for (int i = 0; i < 200; i++) {
		uint16_t port = (uint16_t)(20000 + (getpid() * 7 + i * 131) % 40000);

		if (doca_rdma_start_listen_to_port(g.rdma, port) == DOCA_SUCCESS) {
			g.port = port;
			return;
		}
	}
	die("%s", "no free port to listen on");
}

static void write_seed(const char *dir, const char *name, const uint8_t *a, size_t alen, const uint8_t *b,
		       size_t blen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
		die("cannot write seed %s", path);
	fwrite(a, 1, alen, f);
	fwrite(b, 1, blen, f);
	fclose(f);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void write_seeds(const char *dir)
{
	uint8_t mode_desc = 0x00, cm[1 + CM_HDR_LEN] = {0x01};

	write_seed(dir, "seed_desc", &mode_desc, 1, g.seed_desc, g.seed_desc_len);
	put_u32(cm + 1, CM_MAGIC);
	cm[1 + 4] = CM_REQ;
	put_u32(cm + 1 + 8, (uint32_t)g.seed_desc_len);
	write_seed(dir, "seed_cm_req", cm, sizeof(cm), g.seed_desc, g.seed_desc_len);
}

/* ---- per input ------------------------------------------------------- */

static void progress_for_ms(int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	do {
		while (doca_pe_progress(g.pe) != 0)
			;
	} while (now_ms() < end);
}

static void fuzz_descriptor(const uint8_t *data, size_t size)
{
	struct doca_rdma_connection *conn = NULL;
	const void *desc;
	size_t desc_len;
	uint8_t *copy;
	doca_error_t err;

	err = doca_rdma_export(g.rdma, &desc, &desc_len, &conn);
	if (err != DOCA_SUCCESS)
		die("descriptor mode: doca_rdma_export failed (%s): a connection slot was not given back",
		    doca_error_get_name(err));
	/* A copy of exactly the input, so ASan sees any read past it. */
	copy = malloc(size > 0 ? size : 1);
	if (copy == NULL)
		die("%s", "out of memory");
	memcpy(copy, data, size);
	(void)doca_rdma_connect(g.rdma, copy, size, conn);
	for (int i = 0; i < DESC_PROGRESS; i++)
		(void)doca_pe_progress(g.pe);
	free(copy);
	(void)doca_rdma_connection_disconnect(conn);
	(void)doca_pe_progress(g.pe);
}

/* An interrupted connect is finished when the socket is writable; its
 * outcome is then in SO_ERROR. */
static bool cm_wait_connected(int fd)
{
	uint64_t end = now_ms() + CM_WAIT_MS;

	while (now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int soerr = 0;
		socklen_t len = sizeof(soerr);

		(void)doca_pe_progress(g.pe);
		if (poll(&p, 1, 1) <= 0)
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr != 0)
			die("connect to the CM port: %s", strerror(soerr != 0 ? soerr : errno));
		return true;
	}
	return false;
}

static int cm_socket(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(g.port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket: %s", strerror(errno));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	/* libFuzzer's timeout alarm can interrupt a connect; the connection
	 * then goes on by itself, and we wait for its outcome. */
	if (errno != EINTR)
		die("connect to the CM port: %s", strerror(errno));
	if (!cm_wait_connected(fd))
		die("%s", "connect to the CM port: not established in time after an interruption");
	return fd;
}

/* Until the server closed the socket or answered; false if neither
 * happened in time (it has all our bytes and their end by then). */
static bool cm_wait_server(int fd)
{
	uint64_t end = now_ms() + CM_WAIT_MS;
	uint8_t buf[512];

	while (now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		while (doca_pe_progress(g.pe) != 0)
			;
		if (poll(&p, 1, 1) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return true; /* an answer, the end, or a reset */
	}
	return false;
}

/* All of the input, unless the server already hung up; the timeout alarm
 * may cut a send short. */
static void cm_send_all(int fd, const uint8_t *data, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = send(fd, data + done, size - done, MSG_NOSIGNAL);

		if (n >= 0) {
			done += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EPIPE || errno == ECONNRESET)
			return;
		die("send to the CM port: %s", strerror(errno));
	}
}

static void fuzz_cm(const uint8_t *data, size_t size)
{
	int fd = cm_socket();
	int requests = g.requests;
	uint64_t end;

	g.req = NULL;
	g.req_ended = false;
	cm_send_all(fd, data, size);
	/* The end of what we say: a short frame must not wait for its rest
	 * until the request timeout. */
	shutdown(fd, SHUT_WR);
	if (!cm_wait_server(fd))
		die("%s", "CM mode: the server neither closed the socket nor answered");
	close(fd);
	/* Only a whole, well-formed request gets a connection (and the
	 * request callback); anything else is dropped before that. */
	if (g.requests == requests)
		return;
	end = now_ms() + CLOSE_WAIT_MS;
	while (!g.req_ended && now_ms() < end)
		progress_for_ms(1);
	if (!g.req_ended)
		die("%s", "CM mode: the accepted connection did not end after the client closed its socket");
	g.req = NULL;
}

/* Stop the context (its UCX worker goes with it), wait until it is idle
 * (bounded), start it again on a port, and export the seed's slot again. */
static void restart_context(void)
{
	struct doca_rdma_connection *seed_conn = NULL;
	enum doca_ctx_states state = DOCA_CTX_STATE_RUNNING;
	const void *desc;
	size_t desc_len;
	uint64_t end = now_ms() + CLOSE_WAIT_MS;
	doca_error_t err;

	g.restarts++;
	err = doca_ctx_stop(g.ctx);
	if (err != DOCA_ERROR_IN_PROGRESS)
		check(err, "doca_ctx_stop (restart)");
	while (now_ms() < end) {
		progress_for_ms(1);
		if (doca_ctx_get_state(g.ctx, &state) == DOCA_SUCCESS && state == DOCA_CTX_STATE_IDLE)
			break;
	}
	if (state != DOCA_CTX_STATE_IDLE)
		die("%s", "restart: the context did not become idle after doca_ctx_stop");
	check(doca_ctx_start(g.ctx), "doca_ctx_start (restart)");
	listen_somewhere();
	check(doca_rdma_export(g.rdma, &desc, &desc_len, &seed_conn), "doca_rdma_export (restart)");
	progress_for_ms(50);
}

/* Nothing may stay behind an input: a slot, an fd. UCX may keep an fd a
 * little longer than the endpoint that used it, so fds are judged by a
 * limit that a per-input leak soon crosses, after a bounded wait for them
 * to go. */
static void check_nothing_grew(void)
{
	struct doca_rdma_connection *probe = NULL;
	const void *desc;
	size_t desc_len;
	uint64_t end;
	doca_error_t err;

	err = doca_rdma_export(g.rdma, &desc, &desc_len, &probe);
	if (err != DOCA_SUCCESS)
		die("after an input no connection can be exported (%s): a slot was kept", doca_error_get_name(err));
	(void)doca_rdma_connection_disconnect(probe);
	if (count_fds() <= g.base_fds + FD_LIMIT)
		return;
	end = now_ms() + FD_WAIT_MS;
	while (count_fds() > g.base_fds + FD_LIMIT && now_ms() < end)
		progress_for_ms(1);
	if (count_fds() <= g.base_fds + FD_LIMIT)
		return;
	/* UCX 1.13 keeps the sockets of a TCP endpoint whose connects were
	 * refused (a descriptor naming a closed port) when the endpoint is
	 * closed while UCX still retries, until its worker goes. Such fds
	 * must go with the context; any that outlive it are ours. */
	restart_context();
	if (count_fds() > g.base_fds + FD_LIMIT) {
		char what[96];

		snprintf(what, sizeof(what), "%d open fds after this input and a context restart, %d at start",
			 count_fds(), g.base_fds);
		list_fds();
		die("fds grow with the inputs: %s", what);
	}
}

static void say_restarts(void)
{
	fprintf(stderr, "fuzz_connect: %d context restart(s) gave back fds UCX kept\n", g.restarts);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct doca_rdma_connection *seed_conn = NULL;
	const char *seed_dir = getenv("FUZZ_CONNECT_SEED_DIR");
	const void *desc;
	size_t desc_len;

	(void)argc;
	(void)argv;
	/* Rejections are the expected outcome: keep the output quiet. */
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	open_soft_lo();
	start_context();
	listen_somewhere();
	check(doca_rdma_export(g.rdma, &desc, &desc_len, &seed_conn), "doca_rdma_export (seed)");
	g.seed_desc = malloc(desc_len);
	if (g.seed_desc == NULL)
		die("%s", "out of memory");
	memcpy(g.seed_desc, desc, desc_len);
	g.seed_desc_len = desc_len;
	if (seed_dir != NULL)
		write_seeds(seed_dir);
	/* One honest round of each mode first, so that what UCX opens once
	 * (its first endpoint's resources) counts in the baseline. */
	fuzz_descriptor(g.seed_desc, g.seed_desc_len);
	progress_for_ms(50);
	g.base_fds = count_fds();
	atexit(say_restarts);
	fprintf(stderr, "fuzz_connect: soft_lo context up, CM port %u, %zu-byte seed descriptor, %d fds\n", g.port,
		g.seed_desc_len, g.base_fds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *only = getenv("FUZZ_CONNECT_ONLY");
	bool cm;

	if (size == 0)
		return 0;
	cm = only != NULL ? strcmp(only, "cm") == 0 : (data[0] & 1) != 0;
	if (cm)
		fuzz_cm(data + 1, size - 1);
	else
		fuzz_descriptor(data + 1, size - 1);
	check_nothing_grew();
	return 0;
}
