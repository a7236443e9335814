/*
 * softdoca — what travels between peers: connection descriptors and the
 * headers of the engine's active messages. Every field read from a peer
 * is checked before use (wire.c).
 */
#ifndef SOFTDOCA_ENGINE_WIRE_H_
#define SOFTDOCA_ENGINE_WIRE_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#include "engine.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "softdoca's wire format is little-endian; big-endian hosts are not supported yet"
#endif

#define WIRE_VERSION 1

/* Active message ids. */
enum wire_am_id {
	WIRE_AM_HELLO = 0x5d01, /* "I connected to you" */
	WIRE_AM_BYE = 0x5d02,   /* "I disconnected" */
	WIRE_AM_REQ = 0x5d03,   /* an operation for the target */
	WIRE_AM_RESP = 0x5d04,  /* its answer */
	WIRE_AM_PING = 0x5d05,  /* "are you there?" (keepalive) or its answer */
};

/* RDMA CM frames on the CM's TCP socket: this header, then desc_len bytes
 * of connection descriptor, then priv_len bytes of private data. */
#define WIRE_CM_MAGIC 0x4d434453u /* "SDCM" */
#define WIRE_CM_HDR_LEN 12
#define WIRE_CM_MAX_FRAME (WIRE_CM_HDR_LEN + WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN + 255)

enum wire_cm_type {
	WIRE_CM_REQ = 1, /* client -> server: my descriptor */
	WIRE_CM_REP = 2, /* server -> client: my descriptor and private data */
	WIRE_CM_REJ = 3, /* server -> client: no */
};

struct wire_cm {
	uint8_t type;
	uint8_t priv_len;
	uint32_t desc_len;
};

/* Check a CM frame header; *frame_len gets the whole frame's length. */
doca_error_t wire_cm_parse(const uint8_t *hdr, size_t len, struct wire_cm *cm, size_t *frame_len);
void wire_cm_build(uint8_t hdr[WIRE_CM_HDR_LEN], const struct wire_cm *cm);

struct wire_hello {
	uint16_t version;
	uint16_t flags;
	uint32_t dst_conn_id;
	uint8_t dst_secret[ENGINE_SECRET_LEN];
	uint32_t src_conn_id;
	uint32_t reserved;
	uint8_t src_secret[ENGINE_SECRET_LEN];
};

struct wire_bye {
	uint16_t version;
	uint16_t flags;
	uint32_t dst_conn_id;
	uint8_t dst_secret[ENGINE_SECRET_LEN];
};

/* Keepalive: a PING asks the peer's engine for a PONG (flags
 * WIRE_PING_PONG), which it sends on the endpoint the PING came from. */
#define WIRE_PING_PONG 0x1

struct wire_ping {
	uint16_t version;
	uint16_t flags;
	uint32_t dst_conn_id;
	uint8_t dst_secret[ENGINE_SECRET_LEN];
};

struct wire_req {
	uint16_t version;
	uint8_t opcode;            /* enum engine_opcode, never ENGINE_OP_RECV */
	uint8_t flags;
	uint32_t dst_conn_id;      /* the target's connection */
	uint8_t dst_secret[ENGINE_SECRET_LEN];
	uint32_t src_conn_id;      /* the initiator's connection, for logs */
	uint32_t rnr_timeout_ms;   /* how long a send may wait for a receive; 0 = for ever */
	uint64_t wr_id;
	uint64_t region_id;
	uint8_t region_secret[ENGINE_SECRET_LEN];
	uint64_t remote_addr;
	uint64_t length;           /* READ: bytes wanted; WRITE*: room the initiator saw */
	uint64_t compare;
	uint64_t operand;
	uint32_t imm;
	uint32_t reserved;
};

struct wire_resp {
	uint16_t version;
	uint8_t opcode;            /* echo of the request's */
	uint8_t flags;
	uint32_t dst_conn_id;      /* the initiator's connection */
	uint8_t dst_secret[ENGINE_SECRET_LEN];
	uint64_t wr_id;
	int32_t status;            /* doca_error_t */
	uint32_t reserved;
	uint64_t result_len;       /* READ, SYNC_GET: bytes carried */
	uint64_t value;            /* ATOMIC*, SYNC_ADD: old value */
};

/* A connection descriptor, as written by doca_rdma_export. */
#define WIRE_DESC_MAGIC "SDRC"
#define WIRE_DESC_FIXED_LEN 64
#define WIRE_HOST_ID_LEN 16
#define WIRE_DESC_MAX_ADDR_LEN 8192
#define WIRE_DESC_FLAG_DC 0x1
#define WIRE_DESC_FLAG_SHM 0x2 /* this side lets UCX use shared memory with peers on its host */

struct wire_desc {
	uint16_t version;
	uint16_t flags;
	uint32_t conn_id;
	uint8_t secret[ENGINE_SECRET_LEN];
	uint32_t pid;
	uint8_t host_id[WIRE_HOST_ID_LEN]; /* the kernel's boot id: same value = same host */
	uint64_t pid_ns;                  /* pid namespace inode: pid means the same process */
	const uint8_t *worker_addr; /* points into the parsed bytes */
	uint32_t worker_addr_len;
};

/* Build a descriptor into a new buffer (freed by the caller). */
doca_error_t wire_desc_build(const struct wire_desc *d, uint8_t **out, size_t *out_len);

/* Parse untrusted descriptor bytes. INVALID_VALUE / UNSUPPORTED_VERSION
 * with a log line naming what is wrong. */
doca_error_t wire_desc_parse(const void *bytes, size_t len, struct wire_desc *d);

/* Check an untrusted header of the given active message id: size,
 * version, opcode, reserved fields. */
doca_error_t wire_check(enum wire_am_id id, const void *header, size_t header_len);

#endif /* SOFTDOCA_ENGINE_WIRE_H_ */
