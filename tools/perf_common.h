/*
 * perf_common — helpers shared by softdoca's benchmark tools: clock,
 * error lines (prefixed with perf_prog_name), big-endian fields, the TCP
 * control connection's frames, opening a device by IB name, and the DOCA
 * objects of one benchmark side (struct perf_doca).
 */
#ifndef SOFTDOCA_TOOLS_PERF_COMMON_H
#define SOFTDOCA_TOOLS_PERF_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

#define MAX_FRAME (1u << 20)      /* out-of-band payload bound */
#define CONNECT_RETRY_S 10.0      /* client: TCP connect to a server not up yet */

/* What error lines start with; main sets it. */
extern const char *perf_prog_name;

double now_s(void);
uint64_t now_ns(void);
/* One line on stderr; returns -1 so callers can `return fail(...)`. */
__attribute__((format(printf, 1, 2))) int fail(const char *fmt, ...);

#define CHECK(call)                                                                                       \
	do {                                                                                              \
		doca_error_t err_ = (call);                                                               \
		if (err_ != DOCA_SUCCESS)                                                                 \
			return fail("%s returned %s (%s)", #call, doca_error_get_name(err_),              \
				    doca_error_get_descr(err_));                                          \
	} while (0)

void put_be32(uint8_t *p, uint32_t v);
uint32_t get_be32(const uint8_t *p);
void put_be64(uint8_t *p, uint64_t v);
uint64_t get_be64(const uint8_t *p);

int oob_write_all(int fd, const void *data, size_t len);
/* 0 when all len bytes came, 1 on end of file before the first byte. */
int oob_read_all(int fd, void *data, size_t len);
int oob_send(int fd, char type, const void *payload, size_t len);
/* One frame of any type into malloc'd memory. 1 on end of file. */
int oob_recv_any(int fd, char *type, uint8_t **payload, size_t *len);
/* One frame of type `want`. 1 on end of file. */
int oob_recv(int fd, char want, uint8_t **payload, size_t *len);
/* A frame the protocol requires now: end of file is an error too. */
int oob_expect(int fd, char want, const char *what, uint8_t **payload, size_t *len);
/* Listen on port, print "<banner> <port>" (unless banner is NULL) and
 * accept one connection: its fd, or -1. */
int oob_listen_accept(const char *port, const char *banner);
/* Connect, retrying for CONNECT_RETRY_S while the server is not up. */
int oob_connect(const char *host, const char *port);

/* Open the device whose IB name is ibdev (the error line lists the others). */
int open_device(const char *ibdev, struct doca_dev **dev);

/* The DOCA objects of one benchmark side: the device, a PE, the local
 * region and its mmap, a buf inventory, an RDMA context, and the peer's
 * mmap once imported. state is the context's, kept by the tool's state
 * callback. */
struct perf_doca {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_buf_inventory *inv;
	struct doca_mmap *lmmap;
	struct doca_mmap *rmmap;
	enum doca_ctx_states state;
	uint8_t *region;
	size_t region_len;
};

/* A page-aligned region of region_len bytes, each byte set to fill (every
 * page faulted in now, not while measuring), the device, a PE, the
 * region's mmap with perms, a started inventory of num_bufs, and an RDMA
 * context with perms. Its tasks, callbacks and start are the caller's. */
int perf_doca_open(struct perf_doca *d, const char *ibdev, size_t region_len, int fill, uint32_t perms,
		   uint32_t num_bufs);
/* Progress the PE until the context is in state want; fails after timeout_s. */
int perf_doca_wait_state(struct perf_doca *d, enum doca_ctx_states want, double timeout_s);
/* Stop the context if it runs, waiting up to wait_s for it to be idle. */
void perf_doca_stop(struct perf_doca *d, double wait_s);
/* Release every object; the context and PE only once the context is idle
 * (a context that did not stop may still use them). */
void perf_doca_release(struct perf_doca *d);

#endif
