/*
 * perf_common — what softdoca's benchmark tools (softdoca_perf,
 * softdoca_perftest) share: a monotonic clock, error lines, big-endian
 * fields, the out-of-band control connection (frames of one type byte, a
 * 4-byte big-endian length and the payload, over TCP) and opening a DOCA
 * device by its IB name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "perf_common.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <doca_dev.h>

const char *perf_prog_name = "softdoca_perf";

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", perf_prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}


void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

int oob_write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return fail("control socket: send failed: %s", n < 0 ? strerror(errno) : "closed");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* 0 when all len bytes came, 1 on end of file before the first byte. */
int oob_read_all(int fd, void *data, size_t len)
{
	uint8_t *p = data;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail("control socket: read failed: %s", strerror(errno));
		if (n == 0) {
			if (got == 0)
				return 1;
			return fail("control socket: closed in the middle of a frame");
		}
		got += (size_t)n;
	}
	return 0;
}

int oob_send(int fd, char type, const void *payload, size_t len)
{
	uint8_t hdr[5];

	if (len > MAX_FRAME)
		return fail("control frame '%c' of %zu bytes is too large", type, len);
	hdr[0] = (uint8_t)type;
	put_be32(hdr + 1, (uint32_t)len);
	if (oob_write_all(fd, hdr, sizeof(hdr)) != 0)
		return -1;
	return len > 0 ? oob_write_all(fd, payload, len) : 0;
}

/* Receive one frame of any type into malloc'd memory. 1 on end of file. */
int oob_recv_any(int fd, char *type, uint8_t **payload, size_t *len)
{
	uint8_t hdr[5], *buf;
	uint32_t n;
	int r;

	r = oob_read_all(fd, hdr, sizeof(hdr));
	if (r != 0)
		return r;
	n = get_be32(hdr + 1);
	if (n > MAX_FRAME)
		return fail("control socket: frame 0x%02x claims %" PRIu32 " bytes (limit %u)", hdr[0], n, MAX_FRAME);
	buf = malloc(n + 1u);
	if (buf == NULL)
		return fail("out of memory");
	r = n > 0 ? oob_read_all(fd, buf, n) : 0;
	if (r != 0) {
		free(buf);
		return r < 0 ? -1 : fail("control socket: frame 0x%02x cut short", hdr[0]);
	}
	*type = (char)hdr[0];
	*payload = buf;
	*len = n;
	return 0;
}

/* Receive one frame of type `want`. 1 on end of file. */
int oob_recv(int fd, char want, uint8_t **payload, size_t *len)
{
	char type;
	int r = oob_recv_any(fd, &type, payload, len);

	if (r != 0)
		return r;
	if (type != want) {
		free(*payload);
		return fail("control socket: expected frame '%c', got 0x%02x", want, (uint8_t)type);
	}
	return 0;
}

/* A frame the protocol requires now: end of file is an error too. */
int oob_expect(int fd, char want, const char *what, uint8_t **payload, size_t *len)
{
	int r = oob_recv(fd, want, payload, len);

	if (r > 0)
		return fail("the peer closed the control connection before sending %s", what);
	return r;
}

int oob_listen_accept(const char *port, const char *banner)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
	struct addrinfo *res = NULL, *ai;
	int lfd = -1, fd, one = 1, rc;

	rc = getaddrinfo(NULL, port, &hints, &res);
	if (rc != 0)
		return fail("port %s: %s", port, gai_strerror(rc));
	/* Prefer IPv6 (dual stack), then whatever binds. */
	for (int pass = 0; pass < 2 && lfd < 0; pass++) {
		for (ai = res; ai != NULL; ai = ai->ai_next) {
			if ((pass == 0) != (ai->ai_family == AF_INET6))
				continue;
			lfd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
			if (lfd < 0)
				continue;
			setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(lfd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(lfd, 1) == 0)
				break;
			close(lfd);
			lfd = -1;
		}
	}
	freeaddrinfo(res);
	if (lfd < 0)
		return fail("cannot listen on port %s: %s", port, strerror(errno));
	if (banner != NULL) {
		printf("%s %s\n", banner, port);
		fflush(stdout);
	}
	do
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		fail("accept on port %s: %s", port, strerror(errno));
	close(lfd);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int oob_connect(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	double deadline = now_s() + CONNECT_RETRY_S;
	const struct timespec tick = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
	int one = 1, rc, err = 0;

	for (;;) {
		struct addrinfo *res = NULL, *ai;
		int fd = -1;

		rc = getaddrinfo(host, port, &hints, &res);
		if (rc != 0)
			return fail("%s port %s: %s", host, port, gai_strerror(rc));
		for (ai = res; ai != NULL; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
			if (fd < 0)
				continue;
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
				break;
			err = errno;
			close(fd);
			fd = -1;
		}
		freeaddrinfo(res);
		if (fd >= 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		if (now_s() > deadline)
			return fail("cannot connect to %s port %s within %.0f s: %s", host, port, CONNECT_RETRY_S,
				    strerror(err));
		nanosleep(&tick, NULL);
	}
}

int open_device(const char *ibdev, struct doca_dev **dev)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t err = DOCA_ERROR_NOT_FOUND;
	char names[512] = "";

	CHECK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n; i++) {
		char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
		size_t used = strlen(names);

		if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) != DOCA_SUCCESS)
			continue;
		if (strcmp(name, ibdev) == 0) {
			err = doca_dev_open(list[i], dev);
			break;
		}
		snprintf(names + used, sizeof(names) - used, " %s", name);
	}
	doca_devinfo_destroy_list(list);
	if (err == DOCA_ERROR_NOT_FOUND)
		return fail("no device named %s (found:%s)", ibdev, names);
	if (err != DOCA_SUCCESS)
		return fail("doca_dev_open(%s) returned %s", ibdev, doca_error_get_name(err));
	return 0;
}

int perf_doca_open(struct perf_doca *d, const char *ibdev, size_t region_len, int fill, uint32_t perms,
		   uint32_t num_bufs)
{
	d->region_len = region_len;
	d->region = aligned_alloc(4096, (region_len + 4095) & ~(size_t)4095);
	if (d->region == NULL)
		return fail("cannot allocate %zu bytes", region_len);
	memset(d->region, fill, region_len);
	if (open_device(ibdev, &d->dev) != 0)
		return -1;
	CHECK(doca_pe_create(&d->pe));
	CHECK(doca_mmap_create(&d->lmmap));
	CHECK(doca_mmap_set_memrange(d->lmmap, d->region, region_len));
	CHECK(doca_mmap_set_permissions(d->lmmap, perms));
	CHECK(doca_mmap_add_dev(d->lmmap, d->dev));
	CHECK(doca_mmap_start(d->lmmap));
	CHECK(doca_buf_inventory_create(num_bufs, &d->inv));
	CHECK(doca_buf_inventory_start(d->inv));
	CHECK(doca_rdma_create(d->dev, &d->rdma));
	d->ctx = doca_rdma_as_ctx(d->rdma);
	CHECK(doca_rdma_set_permissions(d->rdma, perms));
	return 0;
}

int perf_doca_wait_state(struct perf_doca *d, enum doca_ctx_states want, double timeout_s)
{
	double deadline = now_s() + timeout_s;

	while (d->state != want) {
		if (now_s() > deadline)
			return fail("the context did not reach state %d within %.0f s (state %d)", (int)want,
				    timeout_s, (int)d->state);
		(void)doca_pe_progress(d->pe);
	}
	return 0;
}

void perf_doca_stop(struct perf_doca *d, double wait_s)
{
	doca_error_t err;

	if (d->ctx == NULL || d->state == DOCA_CTX_STATE_IDLE)
		return;
	err = doca_ctx_stop(d->ctx);
	if (err == DOCA_SUCCESS || err == DOCA_ERROR_IN_PROGRESS)
		(void)perf_doca_wait_state(d, DOCA_CTX_STATE_IDLE, wait_s);
}

void perf_doca_release(struct perf_doca *d)
{
	bool idle = d->state == DOCA_CTX_STATE_IDLE;

	if (d->inv != NULL) {
		(void)doca_buf_inventory_stop(d->inv);
		(void)doca_buf_inventory_destroy(d->inv);
	}
	if (d->rmmap != NULL) {
		(void)doca_mmap_stop(d->rmmap);
		(void)doca_mmap_destroy(d->rmmap);
	}
	if (d->rdma != NULL && idle)
		(void)doca_rdma_destroy(d->rdma);
	if (d->pe != NULL && idle)
		(void)doca_pe_destroy(d->pe);
	if (d->lmmap != NULL) {
		(void)doca_mmap_stop(d->lmmap);
		(void)doca_mmap_destroy(d->lmmap);
	}
	if (d->dev != NULL)
		(void)doca_dev_close(d->dev);
	free(d->region);
}
