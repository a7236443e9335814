/*
 * softdoca — building and strictly parsing the TCP link's frames (see
 * link_tcp_wire.h for the layout). Pure: no socket, no allocation.
 */
#include <string.h>

#include "bytes.h"
#include "core_engine.h"
#include "link_tcp_wire.h"

SDK_LOG_REGISTER(ENGINE::TCP::WIRE)

void lt_frame_build(uint8_t hdr[LT_FRAME_HDR], const struct lt_frame *f)
{
	hdr[0] = f->type;
	hdr[1] = LT_MAGIC;
	put_u16(hdr + 2, f->am_id);
	put_u32(hdr + 4, f->hdr_len);
	put_u64(hdr + 8, f->len);
	put_u64(hdr + 16, f->id);
}

static doca_error_t frame_bad(const struct lt_frame *f, const char *what)
{
	SDK_LOG_ERR_RL("tcp link: malformed frame (type %u, header %u bytes, length %llu, id %llu): %s", f->type,
		       f->hdr_len, (unsigned long long)f->len, (unsigned long long)f->id, what);
	return DOCA_ERROR_INVALID_VALUE;
}

/* An engine message (MSG, RTS): an id the engine knows is its business;
 * here only the sizes. */
static doca_error_t check_message(const struct lt_frame *f)
{
	if (f->hdr_len == 0 || f->hdr_len > LT_HDR_MAX)
		return frame_bad(f, "message header size out of bounds");
	if (f->type == LT_MSG && f->len > LT_MSG_MAX)
		return frame_bad(f, "payload larger than a message may carry");
	if (f->type == LT_MSG && f->id != 0)
		return frame_bad(f, "message with a rendezvous id");
	if (f->type == LT_RTS && (f->len == 0 || f->len > LT_RNDV_MAX))
		return frame_bad(f, "rendezvous payload size out of bounds");
	if (f->type == LT_RTS && f->id == 0)
		return frame_bad(f, "rendezvous without an id");
	return DOCA_SUCCESS;
}

doca_error_t lt_frame_parse(const uint8_t hdr[LT_FRAME_HDR], struct lt_frame *f)
{
	f->type = hdr[0];
	f->am_id = get_u16(hdr + 2);
	f->hdr_len = get_u32(hdr + 4);
	f->len = get_u64(hdr + 8);
	f->id = get_u64(hdr + 16);
	if (hdr[1] != LT_MAGIC)
		return frame_bad(f, "bad magic (not a softdoca stream, or out of step)");
	switch (f->type) {
	case LT_MSG:
	case LT_RTS:
		return check_message(f);
	case LT_CTS:
		if (f->am_id != 0 || f->hdr_len != 0 || f->id == 0 || f->len > LT_RNDV_MAX)
			return frame_bad(f, "clear-to-send out of bounds");
		return DOCA_SUCCESS;
	case LT_DATA:
		if (f->am_id != 0 || f->hdr_len != 0 || f->id == 0 || f->len == 0 || f->len > LT_DATA_MAX)
			return frame_bad(f, "data frame out of bounds");
		return DOCA_SUCCESS;
	case LT_AUTH:
		if (f->am_id != 0 || f->hdr_len != LT_AUTH_LEN || f->len != 0 || f->id != 0)
			return frame_bad(f, "authentication frame out of bounds");
		return DOCA_SUCCESS;
	default:
		return frame_bad(f, "unknown frame type");
	}
}

/* AUTH body: magic u32, version u16, reserved u16, connection id u32,
 * reserved u32, secret [16]. */
void lt_auth_build(uint8_t body[LT_AUTH_LEN], const struct lt_auth *a)
{
	memset(body, 0, LT_AUTH_LEN);
	put_u32(body, LT_AUTH_MAGIC);
	put_u16(body + 4, LT_VERSION);
	put_u32(body + 8, a->conn_id);
	memcpy(body + 16, a->secret, ENGINE_SECRET_LEN);
}

doca_error_t lt_auth_parse(const uint8_t *body, size_t len, struct lt_auth *a)
{
	if (len != LT_AUTH_LEN || get_u32(body) != LT_AUTH_MAGIC) {
		SDK_LOG_ERR_RL("tcp link: the first frame is not a softdoca authentication");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (get_u16(body + 4) != LT_VERSION) {
		SDK_LOG_ERR_RL("tcp link: authentication of version %u; this softdoca speaks version %u",
			       get_u16(body + 4), LT_VERSION);
		return DOCA_ERROR_UNSUPPORTED_VERSION;
	}
	if (get_u16(body + 6) != 0 || get_u32(body + 12) != 0) {
		SDK_LOG_ERR_RL("tcp link: authentication with reserved fields set");
		return DOCA_ERROR_INVALID_VALUE;
	}
	a->conn_id = get_u32(body + 8);
	if (a->conn_id == 0) {
		SDK_LOG_ERR_RL("tcp link: authentication names connection 0, which is never exported");
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(a->secret, body + 16, ENGINE_SECRET_LEN);
	return DOCA_SUCCESS;
}

void lt_addr_build(uint8_t bytes[LT_ADDR_LEN], const struct lt_addr *a)
{
	memset(bytes, 0, LT_ADDR_LEN);
	bytes[0] = a->family;
	put_u16(bytes + 2, a->port);
	memcpy(bytes + 4, a->addr, a->family == 4 ? 4 : 16);
}

doca_error_t lt_addr_parse(const uint8_t *bytes, size_t len, struct lt_addr *a)
{
	static const uint8_t zero[12];

	if (bytes == NULL || len != LT_ADDR_LEN) {
		SDK_LOG_ERR_RL("tcp link address is %zu bytes, not %u", len, LT_ADDR_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	a->family = bytes[0];
	a->port = get_u16(bytes + 2);
	memcpy(a->addr, bytes + 4, 16);
	if ((a->family != 4 && a->family != 6) || bytes[1] != 0 || a->port == 0 ||
	    (a->family == 4 && memcmp(a->addr + 4, zero, sizeof(zero)) != 0)) {
		SDK_LOG_ERR_RL("tcp link address is malformed (family %u, port %u)", a->family, a->port);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}
