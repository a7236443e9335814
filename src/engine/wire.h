/*
 * softdoca — what travels between peers: connection descriptors and the
 * headers of the engine's active messages. Every field read from a peer
 * is checked before use (wire.c).
 */
#ifndef SOFTDOCA_ENGINE_WIRE_H_
#define SOFTDOCA_ENGINE_WIRE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#include "engine.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "softdoca's wire format is little-endian; big-endian hosts are not supported yet"
#endif

/* Version 2: successes are acknowledged cumulatively (WIRE_AM_ACK).
 * Version 3: descriptors say which run of which process made them and
 * the GID type of their side.
 * Version 4: descriptors carry a TCP link address beside (or instead of)
 * the UCX worker address, and the UCX settings both sides must share. */
#define WIRE_VERSION 4

/* Active message ids. */
enum wire_am_id {
	WIRE_AM_HELLO = 0x5d01, /* "I connected to you" */
	WIRE_AM_BYE = 0x5d02,   /* "I disconnected" */
	WIRE_AM_REQ = 0x5d03,   /* an operation for the target */
	WIRE_AM_RESP = 0x5d04,  /* its answer */
	WIRE_AM_PING = 0x5d05,  /* "are you there?" (keepalive) or its answer */
	WIRE_AM_ACK = 0x5d06,   /* "everything up to this request succeeded" */
	WIRE_AM_BATCH = 0x5d07, /* several requests in one message */
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

/* wire_req.flags: the initiator's send queue is full: acknowledge now. */
#define WIRE_REQ_ACK_NOW 0x1

struct wire_req {
	uint16_t version;
	uint8_t opcode;            /* enum engine_opcode, never ENGINE_OP_RECV */
	uint8_t flags;             /* WIRE_REQ_* */
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

/* Several small requests in one message (always eager): the payload is
 * count entries, each a struct wire_req followed by its payload
 * (req.length bytes for the opcodes that carry one, none for the
 * others), padded to 8 bytes. Each entry is checked as a request of its
 * own; the first malformed one ends the batch (the rest is dropped). */
#define WIRE_BATCH_MAX 64

struct wire_batch {
	uint16_t version;
	uint16_t flags;
	uint32_t count;            /* 2 .. WIRE_BATCH_MAX */
};

/* Whether a request of this opcode carries a payload (req.length bytes). */
static inline bool wire_op_carries_payload(uint8_t op)
{
	return op == ENGINE_OP_SEND || op == ENGINE_OP_SEND_IMM || op == ENGINE_OP_WRITE || op == ENGINE_OP_WRITE_IMM ||
	       op == ENGINE_OP_SYNC_SET;
}

static inline size_t wire_pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The target runs a connection's requests in order and answers in that
 * order. A request whose success carries nothing (write, send, sync event
 * set) gets no answer of its own: one acknowledgement names the last
 * request retired, and stands for every such request up to it. Failures
 * and requests with a result (read, atomics, sync event get and add) are
 * answered alone (struct wire_resp); an answer also acknowledges what was
 * retired before it. */
struct wire_ack {
	uint16_t version;
	uint16_t flags;
	uint32_t dst_conn_id;      /* the initiator's connection */
	uint8_t dst_secret[ENGINE_SECRET_LEN];
	uint64_t wr_id;            /* the last request it stands for */
};

/* The answer's status: the wire's own numbers, fixed since wire version
 * 1. Core's doca_error_t is mapped at the two edges: the target when it
 * answers, the initiator when it completes. */
enum wire_status {
	WIRE_STATUS_SUCCESS = 0,
	WIRE_STATUS_FAILED = 1,         /* a failure the wire has no name for */
	WIRE_STATUS_NOT_PERMITTED = 2,  /* bad key, missing permission */
	WIRE_STATUS_INVALID_VALUE = 6,  /* bad range, alignment, size */
	WIRE_STATUS_NO_MEMORY = 7,
	WIRE_STATUS_TIME_OUT = 9,       /* receiver not ready past its retries */
	WIRE_STATUS_NOT_CONNECTED = 14, /* the target never connected its side */
	WIRE_STATUS_IO_FAILED = 17,     /* the payload did not arrive */
	WIRE_STATUS_TOO_BIG = 27,       /* a send larger than the posted receive */
	/* A one-sided operation refused with its reason (wire_refusal_put):
	 * which check failed, and in value (and result_len) what it saw. An
	 * older initiator takes them for unknown statuses (it fails the
	 * request with IO_FAILED and a line naming the number), never for
	 * answers to drop: no version change. */
	WIRE_STATUS_CTX_LACKS = 0x100,     /* NOT_PERMITTED: the target's RDMA context lacks value (WIRE_PERM_*) */
	WIRE_STATUS_REGION_LACKS = 0x101,  /* NOT_PERMITTED: the memory region lacks value (WIRE_PERM_*) */
	WIRE_STATUS_NO_REGION = 0x102,     /* NOT_PERMITTED: unknown or stopped memory region, or wrong key */
	WIRE_STATUS_OUT_OF_RANGE = 0x103,  /* INVALID_VALUE: outside the region at value, result_len bytes long */
	WIRE_STATUS_NO_SYNC_EVENT = 0x104, /* NOT_PERMITTED: unknown or stopped sync event, or wrong key */
};

/* A refusal's missing permission (value of CTX_LACKS, REGION_LACKS): the
 * wire's own bits, one at a time. */
#define WIRE_PERM_RDMA_READ 0x1u
#define WIRE_PERM_RDMA_WRITE 0x2u
#define WIRE_PERM_RDMA_ATOMIC 0x4u

/* Inline: each answer passes these once, on the data path. */
static inline int32_t wire_status_from_doca(doca_error_t status)
{
	switch (status) {
	case DOCA_SUCCESS:
		return WIRE_STATUS_SUCCESS;
	case DOCA_ERROR_NOT_PERMITTED:
		return WIRE_STATUS_NOT_PERMITTED;
	case DOCA_ERROR_INVALID_VALUE:
		return WIRE_STATUS_INVALID_VALUE;
	case DOCA_ERROR_NO_MEMORY:
		return WIRE_STATUS_NO_MEMORY;
	case DOCA_ERROR_TIME_OUT:
		return WIRE_STATUS_TIME_OUT;
	case DOCA_ERROR_NOT_CONNECTED:
		return WIRE_STATUS_NOT_CONNECTED;
	case DOCA_ERROR_IO_FAILED:
		return WIRE_STATUS_IO_FAILED;
	case DOCA_ERROR_TOO_BIG:
		return WIRE_STATUS_TOO_BIG;
	default:
		return WIRE_STATUS_FAILED;
	}
}

/* A peer's status: false if the wire has no such number (the caller
 * treats the answer as hostile). */
static inline bool wire_status_to_doca(int32_t wire, doca_error_t *status)
{
	switch (wire) {
	case WIRE_STATUS_SUCCESS:
		*status = DOCA_SUCCESS;
		return true;
	case WIRE_STATUS_FAILED:
		*status = DOCA_ERROR_UNKNOWN;
		return true;
	case WIRE_STATUS_NOT_PERMITTED:
		*status = DOCA_ERROR_NOT_PERMITTED;
		return true;
	case WIRE_STATUS_INVALID_VALUE:
		*status = DOCA_ERROR_INVALID_VALUE;
		return true;
	case WIRE_STATUS_NO_MEMORY:
		*status = DOCA_ERROR_NO_MEMORY;
		return true;
	case WIRE_STATUS_TIME_OUT:
		*status = DOCA_ERROR_TIME_OUT;
		return true;
	case WIRE_STATUS_NOT_CONNECTED:
		*status = DOCA_ERROR_NOT_CONNECTED;
		return true;
	case WIRE_STATUS_IO_FAILED:
		*status = DOCA_ERROR_IO_FAILED;
		return true;
	case WIRE_STATUS_TOO_BIG:
		*status = DOCA_ERROR_TOO_BIG;
		return true;
	case WIRE_STATUS_CTX_LACKS:
	case WIRE_STATUS_REGION_LACKS:
	case WIRE_STATUS_NO_REGION:
	case WIRE_STATUS_NO_SYNC_EVENT:
		*status = DOCA_ERROR_NOT_PERMITTED;
		return true;
	case WIRE_STATUS_OUT_OF_RANGE:
		*status = DOCA_ERROR_INVALID_VALUE;
		return true;
	default:
		return false;
	}
}

struct wire_resp {
	uint16_t version;
	uint8_t opcode;            /* echo of the request's */
	uint8_t flags;
	uint32_t dst_conn_id;      /* the initiator's connection */
	uint8_t dst_secret[ENGINE_SECRET_LEN];
	uint64_t wr_id;
	int32_t status;            /* enum wire_status */
	uint32_t reserved;
	uint64_t result_len;       /* READ, SYNC_GET: bytes carried; OUT_OF_RANGE: the region's length */
	uint64_t value;            /* ATOMIC*, SYNC_ADD: old value; a refusal: its detail (enum wire_status) */
};

/* The target: a refusal's status and detail into its answer, in place of
 * the plain status (why->kind ENGINE_REFUSAL_NONE leaves r alone). */
void wire_refusal_put(const struct engine_refusal *why, struct wire_resp *r);

/* The initiator: the reason an answer gives, in the engine's terms.
 * kind NONE when it gives none; UNKNOWN (with the peer's numbers in
 * wire and wire_detail) for a detail this side cannot read, which is
 * logged (rate-limited) and never used as an index. The access's
 * addr and len are the caller's. */
void wire_refusal_get(const struct wire_resp *r, struct engine_refusal *why);

/* A connection descriptor, as written by doca_rdma_export. */
#define WIRE_DESC_MAGIC "SDRC"
#define WIRE_DESC_FIXED_LEN 112
#define WIRE_HOST_ID_LEN 16
#define WIRE_DESC_MAX_ADDR_LEN 8192
#define WIRE_DESC_TCP_ADDR_LEN 20 /* LT_ADDR_LEN (link_tcp_wire.h) */
#define WIRE_DESC_FLAG_DC 0x1
#define WIRE_DESC_FLAG_SHM 0x2 /* this side lets UCX use shared memory with peers on its host */

/* UCX settings that must be the same on both sides of a UCX connection
 * (a mismatch aborts UCX in its wireup): one bit each, set when on. */
#define WIRE_UCX_MM_ERROR_HANDLING 0x1     /* UCX_MM_ERROR_HANDLING */
#define WIRE_UCX_CMA_MEMORY_INVALIDATE 0x2 /* UCX_CMA_MEMORY_INVALIDATE */
#define WIRE_UCX_PROTO_V1 0x4              /* UCX_PROTO_ENABLE=n */
#define WIRE_UCX_RNDV_PUT 0x8              /* UCX_RNDV_SCHEME=put_zcopy */
#define WIRE_UCX_KNOWN 0xfu

struct wire_desc {
	uint16_t version;
	uint16_t flags;
	uint32_t conn_id;
	uint8_t secret[ENGINE_SECRET_LEN];
	uint32_t pid;
	uint8_t host_id[WIRE_HOST_ID_LEN]; /* the kernel's boot id: same value = same host */
	uint64_t pid_ns;                  /* pid namespace inode: pid means the same process */
	/* Which run of which process exported it (0 = not said): the
	 * process's start time (clock ticks after boot, /proc/<pid>/stat),
	 * so a reused pid is told apart, and the worker's serial in it. */
	uint64_t proc_start;
	uint32_t run;
	uint16_t gid_index;               /* the exporting side's doca_rdma_set_gid_index */
	uint8_t gid_type;                 /* enum engine_gid_type */
	/* Its TCP link (link_tcp.c): the address, checked (lt_addr_parse). */
	bool has_tcp;
	uint8_t tcp_addr[WIRE_DESC_TCP_ADDR_LEN];
	uint32_t ucx_settings;            /* WIRE_UCX_* (0 without a UCX address) */
	const uint8_t *worker_addr; /* its UCX worker address (NULL, 0: none); points into the parsed bytes */
	uint32_t worker_addr_len;
};

/* Build a descriptor into a new buffer (freed by the caller). */
doca_error_t wire_desc_build(const struct wire_desc *d, uint8_t **out, size_t *out_len);

/* Parse untrusted descriptor bytes. INVALID_VALUE / UNSUPPORTED_VERSION
 * with a log line naming what is wrong. */
doca_error_t wire_desc_parse(const void *bytes, size_t len, struct wire_desc *d);

/* Check an untrusted header of the given active message id: size,
 * version, opcode, reserved fields. An answer's status is not checked
 * here: its receiver maps it (wire_status_to_doca) and fails the
 * request an unknown one answers. */
doca_error_t wire_check(enum wire_am_id id, const void *header, size_t header_len);

#endif /* SOFTDOCA_ENGINE_WIRE_H_ */
