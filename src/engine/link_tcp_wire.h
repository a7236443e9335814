/*
 * softdoca — the frames of the TCP link (link_tcp.c) and their strict
 * parsers. A byte stream from the network is read only through these.
 *
 * A link connection is one TCP connection, one way: the side that opens
 * it writes, the side that accepted it reads (each side of an engine
 * connection opens its own, as each makes its own UCX endpoint). Its
 * first frame is AUTH, naming the accepting side's engine connection and
 * that connection's secret (from the descriptor or the RDMA CM exchange);
 * nothing else is read before it has been checked. Then frames follow,
 * each a 24-byte header and what the header announces:
 *
 *   MSG   an engine message whose payload travels with it:
 *         header (hdr_len bytes), payload (len bytes)
 *   RTS   an engine message whose payload waits at the sender:
 *         header (hdr_len bytes); len: payload bytes; id: names it
 *   CTS   the receiver of an RTS fetches its payload: len bytes (all of
 *         it), or 0 (it does not want it; the send is over)
 *   DATA  len payload bytes of the RTS id, in order, after its CTS
 *   AUTH  the first frame: struct lt_auth (LT_AUTH_LEN bytes)
 *
 * Header layout (little-endian): type u8, magic u8 (LT_MAGIC), am id u16,
 * hdr_len u32, len u64, id u64.
 */
#ifndef SOFTDOCA_ENGINE_LINK_TCP_WIRE_H_
#define SOFTDOCA_ENGINE_LINK_TCP_WIRE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#include "engine.h"

#define LT_FRAME_HDR 24
#define LT_MAGIC 0xd5
/* Bounds every frame is checked against. */
#define LT_HDR_MAX 256u                 /* an engine message's header */
#define LT_MSG_MAX (64u * 1024u)        /* a payload that travels with its message */
#define LT_RNDV_MAX (1ULL << 40)        /* one rendezvous payload */
#define LT_DATA_MAX (1u << 20)          /* payload bytes of one DATA frame */
#define LT_AUTH_LEN 32u
#define LT_AUTH_MAGIC 0x414c4453u       /* "SDLA" */
#define LT_VERSION 1u

enum lt_type {
	LT_MSG = 1,
	LT_RTS = 2,
	LT_CTS = 3,
	LT_DATA = 4,
	LT_AUTH = 5,
};

struct lt_frame {
	uint8_t type;    /* enum lt_type */
	uint16_t am_id;  /* MSG, RTS */
	uint32_t hdr_len; /* MSG, RTS: engine header bytes; AUTH: LT_AUTH_LEN */
	uint64_t len;    /* see the file comment */
	uint64_t id;     /* RTS, CTS, DATA */
};

/* Check a frame header from the stream. INVALID_VALUE (logged,
 * rate-limited, naming the field) when any field is out of its bounds. */
doca_error_t lt_frame_parse(const uint8_t hdr[LT_FRAME_HDR], struct lt_frame *f);
void lt_frame_build(uint8_t hdr[LT_FRAME_HDR], const struct lt_frame *f);

/* The bytes a frame occupies in the stream before any DATA payload:
 * header, then the engine header (MSG, RTS), payload (MSG), or the
 * AUTH body. */
static inline size_t lt_frame_inline_len(const struct lt_frame *f)
{
	size_t n = LT_FRAME_HDR + f->hdr_len;

	return f->type == LT_MSG ? n + (size_t)f->len : n;
}

/* AUTH's body: whom the connection is for. */
struct lt_auth {
	uint32_t conn_id;
	uint8_t secret[ENGINE_SECRET_LEN];
};

doca_error_t lt_auth_parse(const uint8_t *body, size_t len, struct lt_auth *a);
void lt_auth_build(uint8_t body[LT_AUTH_LEN], const struct lt_auth *a);

/* A side's TCP link address, as descriptors and HELLO carry it:
 * family u8 (4 or 6), reserved u8 (0), port u16, address [16] (IPv4 in
 * its first 4 bytes, the rest zero). */
#define LT_ADDR_LEN 20

struct lt_addr {
	uint8_t family;
	uint16_t port;
	uint8_t addr[16];
};

doca_error_t lt_addr_parse(const uint8_t *bytes, size_t len, struct lt_addr *a);
void lt_addr_build(uint8_t bytes[LT_ADDR_LEN], const struct lt_addr *a);

#endif /* SOFTDOCA_ENGINE_LINK_TCP_WIRE_H_ */
