/*
 * softdoca — encoding and strict checking of what peers send.
 *
 * Descriptor layout (little-endian, byte offsets):
 *   0 magic "SDRC"   4 version u16   6 flags u16   8 total length u32
 *  12 conn id u32   16 secret [16]  32 pid u32
 *  36 UCX worker address length u32 (0: no UCX link)
 *  40 host id [16] (kernel boot id)  56 pid namespace inode u64
 *  64 process start time u64   72 run (worker serial) u32
 *  76 GID index u16   78 GID type u8   79 reserved u8 (zero)
 *  80 TCP link address [20] (link_tcp_wire.h; family 0: no TCP link)
 * 100 UCX settings u32 (WIRE_UCX_*)   104 reserved u64 (zero)
 * 112 UCX worker address bytes
 * At least one of the two links is there.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <doca_types.h>

#include "bytes.h"
#include "core_engine.h"
#include "link_tcp_wire.h"
#include "wire.h"

SDK_LOG_REGISTER(ENGINE::WIRE)

_Static_assert(sizeof(struct wire_req) <= sizeof(((struct engine_wr *)0)->hdr_space),
	       "request header must fit in the work request");

doca_error_t wire_desc_build(const struct wire_desc *d, uint8_t **out, size_t *out_len)
{
	size_t len = WIRE_DESC_FIXED_LEN + d->worker_addr_len;
	uint8_t *p = calloc(1, len);

	if (p == NULL) {
		SDK_LOG_ERR("no memory for a connection descriptor");
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(p, WIRE_DESC_MAGIC, 4);
	put_u16(p + 4, WIRE_VERSION);
	put_u16(p + 6, d->flags);
	put_u32(p + 8, (uint32_t)len);
	put_u32(p + 12, d->conn_id);
	memcpy(p + 16, d->secret, ENGINE_SECRET_LEN);
	put_u32(p + 32, d->pid);
	put_u32(p + 36, d->worker_addr_len);
	memcpy(p + 40, d->host_id, WIRE_HOST_ID_LEN);
	memcpy(p + 56, &d->pid_ns, sizeof(d->pid_ns));
	put_u64(p + 64, d->proc_start);
	put_u32(p + 72, d->run);
	put_u16(p + 76, d->gid_index);
	p[78] = d->gid_type;
	if (d->has_tcp)
		memcpy(p + 80, d->tcp_addr, WIRE_DESC_TCP_ADDR_LEN);
	put_u32(p + 100, d->ucx_settings);
	if (d->worker_addr_len > 0)
		memcpy(p + WIRE_DESC_FIXED_LEN, d->worker_addr, d->worker_addr_len);
	*out = p;
	*out_len = len;
	return DOCA_SUCCESS;
}

/* The links a descriptor offers: its TCP address (checked), its UCX
 * settings; at least one link. */
static doca_error_t desc_parse_links(const uint8_t *p, struct wire_desc *d)
{
	struct lt_addr a;
	static const uint8_t zero[WIRE_DESC_TCP_ADDR_LEN];

	d->has_tcp = p[80] != 0;
	memcpy(d->tcp_addr, p + 80, WIRE_DESC_TCP_ADDR_LEN);
	if (!d->has_tcp && memcmp(p + 80, zero, sizeof(zero)) != 0) {
		SDK_LOG_ERR_RL("connection descriptor has bytes in its unused tcp link address");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (d->has_tcp && lt_addr_parse(p + 80, WIRE_DESC_TCP_ADDR_LEN, &a) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	d->ucx_settings = get_u32(p + 100);
	if ((d->ucx_settings & ~WIRE_UCX_KNOWN) != 0 || get_u64(p + 104) != 0 ||
	    (d->worker_addr_len == 0 && d->ucx_settings != 0)) {
		SDK_LOG_ERR_RL("connection descriptor has unknown UCX settings 0x%x or reserved bytes set",
			       d->ucx_settings);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!d->has_tcp && d->worker_addr_len == 0) {
		SDK_LOG_ERR_RL("connection descriptor offers no transport (neither a UCX nor a tcp link address)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t wire_desc_parse(const void *bytes, size_t len, struct wire_desc *d)
{
	const uint8_t *p = bytes;
	uint32_t total, addr_len;

	if (p == NULL) {
		SDK_LOG_ERR_RL("connection descriptor is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (len < WIRE_DESC_FIXED_LEN) {
		SDK_LOG_ERR_RL("connection descriptor is %zu bytes, shorter than its %d-byte header", len,
			    WIRE_DESC_FIXED_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (memcmp(p, WIRE_DESC_MAGIC, 4) != 0) {
		SDK_LOG_ERR_RL("not a softdoca connection descriptor (bad magic); was it made by doca_rdma_export?");
		return DOCA_ERROR_INVALID_VALUE;
	}
	d->version = get_u16(p + 4);
	if (d->version != WIRE_VERSION) {
		SDK_LOG_ERR_RL("connection descriptor version %u; this softdoca reads version %u", d->version,
			    WIRE_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}
	d->flags = get_u16(p + 6);
	if (d->flags & ~(WIRE_DESC_FLAG_DC | WIRE_DESC_FLAG_SHM)) {
		SDK_LOG_ERR_RL("connection descriptor has unknown flags 0x%x", d->flags);
		return DOCA_ERROR_INVALID_VALUE;
	}
	total = get_u32(p + 8);
	if (total != len) {
		SDK_LOG_ERR_RL("connection descriptor says %u bytes but %zu were given (truncated or padded?)", total,
			    len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	d->conn_id = get_u32(p + 12);
	if (d->conn_id == 0) {
		SDK_LOG_ERR_RL("connection descriptor names connection id 0, which is never exported");
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(d->secret, p + 16, ENGINE_SECRET_LEN);
	d->pid = get_u32(p + 32);
	memcpy(d->host_id, p + 40, WIRE_HOST_ID_LEN);
	d->pid_ns = get_u64(p + 56);
	/* A pid_t is signed: a larger claim would name a process group. */
	if (d->pid == 0 || d->pid > INT32_MAX) {
		SDK_LOG_ERR_RL("connection descriptor names process %u, which cannot be a process id", d->pid);
		return DOCA_ERROR_INVALID_VALUE;
	}
	d->proc_start = get_u64(p + 64);
	d->run = get_u32(p + 72);
	d->gid_index = get_u16(p + 76);
	d->gid_type = p[78];
	if (d->gid_type > ENGINE_GID_IPV6 || p[79] != 0) {
		SDK_LOG_ERR_RL("connection descriptor has GID type %u or a reserved byte set (0x%x)", d->gid_type, p[79]);
		return DOCA_ERROR_INVALID_VALUE;
	}
	addr_len = get_u32(p + 36);
	if (addr_len > WIRE_DESC_MAX_ADDR_LEN || addr_len != len - WIRE_DESC_FIXED_LEN) {
		SDK_LOG_ERR_RL("connection descriptor's worker address length %u does not match its size %zu", addr_len,
			    len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	d->worker_addr = addr_len > 0 ? p + WIRE_DESC_FIXED_LEN : NULL;
	d->worker_addr_len = addr_len;
	return desc_parse_links(p, d);
}

/* CM frame header: magic u32, type u8, private data length u8,
 * reserved u16, descriptor length u32. */
void wire_cm_build(uint8_t hdr[WIRE_CM_HDR_LEN], const struct wire_cm *cm)
{
	put_u32(hdr, WIRE_CM_MAGIC);
	hdr[4] = cm->type;
	hdr[5] = cm->priv_len;
	put_u16(hdr + 6, 0);
	put_u32(hdr + 8, cm->desc_len);
}

doca_error_t wire_cm_parse(const uint8_t *hdr, size_t len, struct wire_cm *cm, size_t *frame_len)
{
	if (hdr == NULL || len < WIRE_CM_HDR_LEN)
		return DOCA_ERROR_INVALID_VALUE;
	if (get_u32(hdr) != WIRE_CM_MAGIC || get_u16(hdr + 6) != 0) {
		SDK_LOG_ERR_RL("RDMA CM: the peer did not speak softdoca's connection protocol");
		return DOCA_ERROR_INVALID_VALUE;
	}
	cm->type = hdr[4];
	cm->priv_len = hdr[5];
	cm->desc_len = get_u32(hdr + 8);
	if (cm->type < WIRE_CM_REQ || cm->type > WIRE_CM_REJ ||
	    (cm->type == WIRE_CM_REJ && (cm->desc_len != 0 || cm->priv_len != 0)) ||
	    (cm->type == WIRE_CM_REQ && cm->priv_len != 0) ||
	    (cm->type != WIRE_CM_REJ && (cm->desc_len < WIRE_DESC_FIXED_LEN ||
					 cm->desc_len > WIRE_DESC_FIXED_LEN + WIRE_DESC_MAX_ADDR_LEN))) {
		SDK_LOG_ERR_RL("RDMA CM: malformed frame (type %u, descriptor %u bytes, private data %u bytes)",
			       cm->type, cm->desc_len, cm->priv_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*frame_len = WIRE_CM_HDR_LEN + (size_t)cm->desc_len + cm->priv_len;
	return DOCA_SUCCESS;
}

/* ---- refusals: the reason a target gives --------------------------- */

static uint64_t wire_perm_from_doca(uint32_t flag)
{
	switch (flag) {
	case DOCA_ACCESS_FLAG_RDMA_READ:
		return WIRE_PERM_RDMA_READ;
	case DOCA_ACCESS_FLAG_RDMA_WRITE:
		return WIRE_PERM_RDMA_WRITE;
	case DOCA_ACCESS_FLAG_RDMA_ATOMIC:
		return WIRE_PERM_RDMA_ATOMIC;
	default:
		return 0; /* never sent: the initiator reads it as a detail it does not know */
	}
}

static bool wire_perm_to_doca(uint64_t wire, uint32_t *flag)
{
	switch (wire) {
	case WIRE_PERM_RDMA_READ:
		*flag = DOCA_ACCESS_FLAG_RDMA_READ;
		return true;
	case WIRE_PERM_RDMA_WRITE:
		*flag = DOCA_ACCESS_FLAG_RDMA_WRITE;
		return true;
	case WIRE_PERM_RDMA_ATOMIC:
		*flag = DOCA_ACCESS_FLAG_RDMA_ATOMIC;
		return true;
	default:
		return false;
	}
}

void wire_refusal_put(const struct engine_refusal *why, struct wire_resp *r)
{
	switch (why->kind) {
	case ENGINE_REFUSAL_CTX_PERM:
		r->status = WIRE_STATUS_CTX_LACKS;
		r->value = wire_perm_from_doca(why->perm);
		return;
	case ENGINE_REFUSAL_REGION_PERM:
		r->status = WIRE_STATUS_REGION_LACKS;
		r->value = wire_perm_from_doca(why->perm);
		return;
	case ENGINE_REFUSAL_REGION_KEY:
		r->status = WIRE_STATUS_NO_REGION;
		return;
	case ENGINE_REFUSAL_RANGE:
		r->status = WIRE_STATUS_OUT_OF_RANGE;
		r->value = why->region_start;
		r->result_len = why->region_end - why->region_start;
		return;
	case ENGINE_REFUSAL_SYNC_KEY:
		r->status = WIRE_STATUS_NO_SYNC_EVENT;
		return;
	default:
		return; /* no reason: the plain status goes */
	}
}

static void wire_refusal_unknown(const struct wire_resp *r, struct engine_refusal *why)
{
	SDK_LOG_ERR_RL("connection %u: the peer refused work request %#llx with status %#x and a detail this side "
		       "cannot read (%#llx, %llu): reported without it",
		       r->dst_conn_id, (unsigned long long)r->wr_id, (unsigned)r->status, (unsigned long long)r->value,
		       (unsigned long long)r->result_len);
	why->kind = ENGINE_REFUSAL_UNKNOWN;
	why->wire = r->status;
	why->wire_detail = r->value;
}

void wire_refusal_get(const struct wire_resp *r, struct engine_refusal *why)
{
	why->kind = ENGINE_REFUSAL_NONE;
	switch (r->status) {
	case WIRE_STATUS_CTX_LACKS:
	case WIRE_STATUS_REGION_LACKS:
		if (!wire_perm_to_doca(r->value, &why->perm) || r->result_len != 0) {
			wire_refusal_unknown(r, why);
			return;
		}
		why->kind = r->status == WIRE_STATUS_CTX_LACKS ? ENGINE_REFUSAL_CTX_PERM : ENGINE_REFUSAL_REGION_PERM;
		return;
	case WIRE_STATUS_NO_REGION:
	case WIRE_STATUS_NO_SYNC_EVENT:
		if (r->value != 0 || r->result_len != 0) {
			wire_refusal_unknown(r, why);
			return;
		}
		why->kind = r->status == WIRE_STATUS_NO_REGION ? ENGINE_REFUSAL_REGION_KEY : ENGINE_REFUSAL_SYNC_KEY;
		return;
	case WIRE_STATUS_OUT_OF_RANGE:
		/* Only printed; still, a region that wraps is no region. */
		if (r->result_len == 0 || r->result_len > UINT64_MAX - r->value) {
			wire_refusal_unknown(r, why);
			return;
		}
		why->kind = ENGINE_REFUSAL_RANGE;
		why->region_start = r->value;
		why->region_end = r->value + r->result_len;
		return;
	default:
		return;
	}
}

static size_t wire_header_size(enum wire_am_id id)
{
	switch (id) {
	case WIRE_AM_HELLO:
		return sizeof(struct wire_hello);
	case WIRE_AM_BYE:
		return sizeof(struct wire_bye);
	case WIRE_AM_REQ:
		return sizeof(struct wire_req);
	case WIRE_AM_RESP:
		return sizeof(struct wire_resp);
	case WIRE_AM_PING:
		return sizeof(struct wire_ping);
	case WIRE_AM_ACK:
		return sizeof(struct wire_ack);
	case WIRE_AM_BATCH:
		return sizeof(struct wire_batch);
	}
	return 0;
}

static doca_error_t wire_check_req(const struct wire_req *r)
{
	if (r->opcode < ENGINE_OP_SEND || r->opcode > ENGINE_OP_SYNC_ADD) {
		SDK_LOG_ERR_RL("request with unknown opcode %u", r->opcode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((r->flags & ~WIRE_REQ_ACK_NOW) != 0 || r->reserved != 0) {
		SDK_LOG_ERR_RL("request with unknown flags or non-zero reserved fields");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t wire_check_resp(const struct wire_resp *r)
{
	if (r->opcode < ENGINE_OP_SEND || r->opcode > ENGINE_OP_SYNC_ADD) {
		SDK_LOG_ERR_RL("response with unknown opcode %u", r->opcode);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (r->flags != 0 || r->reserved != 0) {
		SDK_LOG_ERR_RL("response with non-zero reserved fields");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t wire_check(enum wire_am_id id, const void *header, size_t header_len)
{
	size_t want = wire_header_size(id);
	uint16_t version;

	if (want == 0 || header == NULL || header_len != want) {
		SDK_LOG_ERR_RL("message 0x%x with a %zu-byte header (want %zu): dropped", (unsigned)id, header_len,
			       want);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(&version, header, sizeof(version));
	if (version != WIRE_VERSION) {
		SDK_LOG_ERR_RL("message 0x%x of wire version %u (want %u): dropped", (unsigned)id, version,
			       WIRE_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}
	/* Headers arrive at any alignment: look at them through a copy. */
	if (id == WIRE_AM_REQ) {
		struct wire_req req;

		memcpy(&req, header, sizeof(req));
		return wire_check_req(&req);
	}
	if (id == WIRE_AM_RESP) {
		struct wire_resp resp;

		memcpy(&resp, header, sizeof(resp));
		return wire_check_resp(&resp);
	}
	if (id == WIRE_AM_ACK) {
		struct wire_ack ack;

		memcpy(&ack, header, sizeof(ack));
		if (ack.flags != 0) {
			SDK_LOG_ERR_RL("acknowledgement with non-zero flags 0x%x: dropped", ack.flags);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	if (id == WIRE_AM_BATCH) {
		struct wire_batch b;

		memcpy(&b, header, sizeof(b));
		if (b.flags != 0 || b.count < 2 || b.count > WIRE_BATCH_MAX) {
			SDK_LOG_ERR_RL("batch with flags 0x%x and %u requests (2 to %d): dropped", b.flags, b.count,
				       WIRE_BATCH_MAX);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	if (id == WIRE_AM_PING) {
		struct wire_ping ping;

		memcpy(&ping, header, sizeof(ping));
		if (ping.flags & ~WIRE_PING_PONG) {
			SDK_LOG_ERR_RL("keepalive with unknown flags 0x%x: dropped", ping.flags);
			return DOCA_ERROR_INVALID_VALUE;
		}
	}
	return DOCA_SUCCESS;
}

doca_error_t engine_conn_desc_check(const void *desc, size_t desc_len)
{
	struct wire_desc d;

	return wire_desc_parse(desc, desc_len, &d);
}

doca_error_t engine_wire_header_check(const void *header, size_t header_len)
{
	/* The fuzz entry: the first two bytes pick the message kind. */
	uint16_t id;

	if (header == NULL || header_len < 2)
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(&id, header, 2);
	if (id % 8 == 7) {
		struct wire_cm cm;
		size_t frame_len;

		return wire_cm_parse((const uint8_t *)header + 2, header_len - 2, &cm, &frame_len);
	}
	return wire_check((enum wire_am_id)(WIRE_AM_HELLO + (id % 8)), (const uint8_t *)header + 2, header_len - 2);
}
