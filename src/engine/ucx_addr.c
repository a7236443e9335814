/*
 * softdoca — proof that a peer's UCX worker address is safe to connect to.
 *
 * Peers send the bytes of their ucp_worker_get_address, and UCX 1.13.1
 * trusts them: ucp_ep_create unpacks them with no length, asserts on an
 * unknown version, indexes 64-entry arrays with the md index and device
 * number, scores lanes with the floats it finds, and hands device and
 * interface address pointers (NULL for length 0) to each transport's
 * reachability test, which reads them at that transport's own size. So,
 * before any UCX call, we walk the address as ucp_address_unpack does,
 * every read bounded by the given length, and prove:
 *  - structure: header (version nibble, flags), uuid, client id, debug
 *    name; per device the md index, device address length (v2 extension
 *    bytes, LAST/NUM_PATHS/SYS_DEVICE), paths, system device; per
 *    transport the name checksum, v1 float or v2 fp8 attributes, interface
 *    address length (v2 extension, LAST/HAS_EP), endpoint addresses with
 *    lane bytes; nothing after the last device.
 *  - ranges UCX leaves unchecked: md index and system device below 64 (or
 *    "unknown"; so the v2 md extension, which only encodes >= 127, never
 *    passes), at most 64 devices and 128 transports, paths >= 1, overhead
 *    and latency finite in [0, 1 s], bandwidth finite in [1 B/s, 1 PB/s],
 *    v2 segment size of an active-message transport >= 512 bytes.
 *  - content, for each transport this host also has (name checksum found
 *    in `local`): exactly the bytes its 1.13.1 code reads — self: 8-byte
 *    id, no device address; tcp: known flags, IPv4/IPv6 family, the size
 *    that family or loopback needs, 2-byte port; sysv/posix/cma: host id
 *    whose namespace flag decides its size; posix: segment flags that fit
 *    what follows (namespace, or a NUL-terminated directory); cma: pid
 *    namespace flag that fits the size. Other local transports (IB) must
 *    repeat the device/interface sizes of one of our own entries. A
 *    transport we lack never reaches UCX transport code (the checksum is
 *    compared first): structure is enough for it.
 *  - an address with our own worker's uuid is exactly our address; one
 *    with another uuid names none of our worker's own interfaces (self,
 *    tcp, sysv, posix: the same device and interface address), which
 *    UCX would connect to as to a stranger and then keep until the worker
 *    is destroyed (a hostile peer's way to make us leak sockets).
 * Not accepted on purpose: AM-only addresses, endpoint addresses, empty
 * transport lists (a worker address never has them) and UCX's unified
 * mode (its addresses omit interface lengths, so nothing bounds them: our
 * own address then fails to parse and all is refused).
 * Versions: 1.12.1 and 1.13.1 have the same address.c and transport
 * address layouts; 1.16.0 adds a release number in the v2 header's high
 * nibble (ignored, as 1.13 does) and, in v1, a trailing empty pseudo
 * device (an ordinary empty device here); its transport code was not
 * re-audited. 1.14/1.15 are not reviewed and get NOT_SUPPORTED.
 * Out of scope: what a peer later does with the memory, ports or pids it
 * names (e.g. truncating its shared segment).
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "bytes.h"
#include "core_engine.h"
#include "ucx_addr.h"

SDK_LOG_REGISTER(ENGINE::UCX_ADDR)

/* Limits UCX relies on without checking (ucp_types.h, select.c). */
#define ADDR_MAX_ENTRIES 128 /* UCP_MAX_RESOURCES */
#define ADDR_MAX_DEVICES 64  /* device number is a bit in a 64-bit map */
#define ADDR_MAX_MD 64	     /* UCP_MAX_MDS: per-md arrays */
#define ADDR_MAX_SYS_DEV 64  /* system device is a bit in a 64-bit map */
#define ADDR_MAX_EP_ADDRS 6  /* UCP_MAX_LANES */
#define ADDR_SYS_DEV_UNKNOWN 0xffu
#define ADDR_NULL_RESOURCE 0xffu

#define ADDR_V1 0u
#define ADDR_V2 1u

/* Header flags (v1: high nibble of byte 0; v2: byte 1). */
#define HDR_DEBUG_INFO 0x01u
#define HDR_UUID 0x02u
#define HDR_CLIENT_ID 0x04u
#define HDR_AM_ONLY 0x08u
#define HDR_KNOWN 0x0fu

#define MD_EMPTY 0x80u
#define MD_MASK_V1 0x1fu
#define MD_MASK_V2 0x7fu

#define DEV_LAST 0x80u
#define DEV_NUM_PATHS 0x40u
#define DEV_SYS_DEVICE 0x20u
#define DEV_LEN_MASK 0x1fu

#define IF_LAST 0x80u
#define IF_HAS_EP 0x40u
#define IF_LEN_MASK 0x3fu

#define LANE_LAST 0x80u

#define ATTR_V1_SIZE 16u /* float overhead, bandwidth, latency; u32 prio+flags */
#define ATTR_V2_SIZE 8u	 /* fp8 overhead, bandwidth, latency; prio; u16 seg; u16 flags */
#define FP8_EXP_MASK 0x0fu
#define FP8_EXP_NAN 0x0fu
#define ADDR_FLAG_AM_SYNC 0x02u /* v2 transport flags, low byte */
#define MIN_AM_SEG_UNITS 8u	/* of 64 bytes: the smallest real one is ~1 KiB (UD) */

#define MAX_SECONDS 1.0	 /* overhead/latency */
#define MAX_BANDWIDTH 1e15 /* bytes per second */

/* Transport details (1.13.1 uct sources). */
#define SM_NS_FLAG (1ull << 63) /* host id extended by a namespace */
#define SM_ADDR_BASE 8u
#define SM_ADDR_NS 16u
#define TCP_FLAG_LOOPBACK 0x01u
#define TCP_DEV_HDR 2u
#define POSIX_SEG_PROCFS (1ull << 63)
#define POSIX_SEG_SHM_OPEN (1ull << 62)
#define POSIX_SEG_PID_NS (1ull << 60)
#define CMA_PID_NS_FLAG (1u << 31)
#define CMA_ADDR_BASE 4u
#define CMA_ADDR_NS 16u

struct addr_entry {
	size_t off; /* of the transport name checksum */
	uint16_t csum;
	const uint8_t *dev;
	size_t dev_len;
	const uint8_t *iface;
	size_t iface_len;
};

struct addr_parsed {
	unsigned version;
	uint64_t uuid;
	bool has_uuid;
	unsigned num_devs;
	unsigned num_entries;
	struct addr_entry e[ADDR_MAX_ENTRIES];
};

struct addr_reader {
	const uint8_t *buf;
	size_t len;
	size_t off;
	const char *who; /* "peer" or "own" */
	char *held;	 /* when set, a rejection is kept here, not logged */
};

#define ADDR_WHY_SIZE 200

/* The one log line of a rejection. */
__attribute__((format(printf, 3, 4))) static doca_error_t addr_fail(const struct addr_reader *r, size_t off,
								    const char *fmt, ...)
{
	char why[ADDR_WHY_SIZE - 40];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (r->held != NULL)
		snprintf(r->held, ADDR_WHY_SIZE, "offset %zu of %zu: %s", off, r->len, why);
	else
		SDK_LOG_ERR("%s UCX worker address rejected at offset %zu of %zu: %s", r->who, off, r->len, why);
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t rd_bytes(struct addr_reader *r, size_t n, const char *field, const uint8_t **out)
{
	if (r->len - r->off < n)
		return addr_fail(r, r->off, "%s needs %zu bytes, %zu left", field, n, r->len - r->off);
	*out = r->buf + r->off;
	r->off += n;
	return DOCA_SUCCESS;
}

static doca_error_t rd_u8(struct addr_reader *r, const char *field, uint8_t *out)
{
	const uint8_t *p = NULL;
	doca_error_t st = rd_bytes(r, 1, field, &p);

	if (st == DOCA_SUCCESS)
		*out = *p;
	return st;
}

/* v2 widens a field whose bits are all set to the following byte. */
static doca_error_t rd_extended(struct addr_reader *r, unsigned version, uint8_t value, uint8_t mask,
				const char *field, uint8_t *out)
{
	*out = value & mask;
	if (version == ADDR_V2 && *out == mask)
		return rd_u8(r, field, out);
	return DOCA_SUCCESS;
}

/* UCX names transports by a CRC-16 (reflected CCITT, start and final
 * inversion) of the name. */
static uint16_t tl_csum(const char *name)
{
	uint16_t crc = 0xffff;

	for (; *name != '\0'; name++) {
		crc ^= (uint8_t)*name;
		for (int bit = 0; bit < 8; bit++)
			crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0x8408u) : (uint16_t)(crc >> 1);
	}
	return (uint16_t)~crc;
}

static doca_error_t parse_header(struct addr_reader *r, struct addr_parsed *a)
{
	uint8_t b0 = 0, flags = 0, name_len = 0;
	const uint8_t *p = NULL;
	doca_error_t st;

	st = rd_u8(r, "header", &b0);
	if (st != DOCA_SUCCESS)
		return st;
	a->version = b0 & 0x0fu;
	if (a->version == ADDR_V1) {
		flags = b0 >> 4;
	} else if (a->version == ADDR_V2) {
		/* The high nibble is the sender's release number (1.16). */
		st = rd_u8(r, "header flags", &flags);
		if (st != DOCA_SUCCESS)
			return st;
		if (flags & ~HDR_KNOWN)
			return addr_fail(r, 1, "unknown header flags 0x%02x", flags);
	} else {
		return addr_fail(r, 0, "address version %u is neither v1 nor v2", a->version);
	}
	if (flags & HDR_AM_ONLY)
		return addr_fail(r, 0, "an AM-only address is not a worker address");
	/* v1 always carries the uuid when connecting to a worker address. */
	a->has_uuid = a->version == ADDR_V1 || (flags & HDR_UUID);
	if (a->has_uuid) {
		st = rd_bytes(r, 8, "worker uuid", &p);
		if (st != DOCA_SUCCESS)
			return st;
		a->uuid = get_u64(p);
	}
	if (flags & HDR_CLIENT_ID) {
		st = rd_bytes(r, 8, "client id", &p);
		if (st != DOCA_SUCCESS)
			return st;
	}
	if (flags & HDR_DEBUG_INFO) {
		st = rd_u8(r, "worker name length", &name_len);
		if (st == DOCA_SUCCESS)
			st = rd_bytes(r, name_len, "worker name", &p);
		if (st != DOCA_SUCCESS)
			return st;
	}
	return DOCA_SUCCESS;
}

static bool finite_in(double v, double lo, double hi)
{
	return isfinite(v) && v >= lo && v <= hi;
}

/* Transport attributes: values UCX scores lanes with. */
static doca_error_t parse_attrs(struct addr_reader *r, unsigned version)
{
	size_t off = r->off;
	const uint8_t *p = NULL;
	doca_error_t st;
	uint16_t seg;
	double bw;

	if (version == ADDR_V1) {
		st = rd_bytes(r, ATTR_V1_SIZE, "transport attributes", &p);
		if (st != DOCA_SUCCESS)
			return st;
		if (!finite_in(get_float(p), 0, MAX_SECONDS))
			return addr_fail(r, off, "overhead is not a time in [0, 1s]");
		/* Negative: the shared bandwidth of UCX <= 1.11. */
		bw = get_float(p + 4);
		if (!finite_in(bw < 0 ? -bw : bw, 1.0, MAX_BANDWIDTH))
			return addr_fail(r, off + 4, "bandwidth is not in [1 B/s, 1 PB/s]");
		if (!finite_in(get_float(p + 8), 0, MAX_SECONDS))
			return addr_fail(r, off + 8, "latency is not a time in [0, 1s]");
		/* Priority and capability bits: any value is handled. */
		return DOCA_SUCCESS;
	}
	st = rd_bytes(r, ATTR_V2_SIZE, "transport attributes", &p);
	if (st != DOCA_SUCCESS)
		return st;
	/* fp8: low nibble is the exponent; all ones is NaN or infinity. */
	if ((p[0] & FP8_EXP_MASK) == FP8_EXP_NAN)
		return addr_fail(r, off, "overhead is not a number");
	if ((p[1] & FP8_EXP_MASK) == FP8_EXP_NAN || (p[1] & FP8_EXP_MASK) == 0)
		return addr_fail(r, off + 1, "bandwidth is zero or not a number");
	if ((p[2] & FP8_EXP_MASK) == FP8_EXP_NAN)
		return addr_fail(r, off + 2, "latency is not a number");
	/* A transport without active messages has no segment (0); an AM lane
	 * sizes its fragments by it. */
	seg = (uint16_t)(p[4] | (p[5] << 8));
	if ((p[6] & ADDR_FLAG_AM_SYNC) && seg < MIN_AM_SEG_UNITS)
		return addr_fail(r, off + 4, "active-message segment of %u bytes is below %u", seg * 64u,
				 MIN_AM_SEG_UNITS * 64u);
	return DOCA_SUCCESS;
}

static doca_error_t parse_ep_addrs(struct addr_reader *r)
{
	size_t off = r->off;
	unsigned n = 0;
	uint8_t len = 0, lane = 0;
	const uint8_t *p = NULL;
	doca_error_t st;

	do {
		if (n++ == ADDR_MAX_EP_ADDRS)
			return addr_fail(r, r->off, "more than %u endpoint addresses", ADDR_MAX_EP_ADDRS);
		st = rd_u8(r, "endpoint address length", &len);
		if (st == DOCA_SUCCESS)
			st = rd_bytes(r, len, "endpoint address", &p);
		if (st == DOCA_SUCCESS)
			st = rd_u8(r, "lane index", &lane);
		if (st != DOCA_SUCCESS)
			return st;
	} while (!(lane & LANE_LAST));
	/* Well-formed, but ucp_worker_get_address never packs endpoints. */
	return addr_fail(r, off, "endpoint addresses are not part of a worker address");
}

static doca_error_t parse_transport(struct addr_reader *r, struct addr_parsed *a, const uint8_t *dev,
				    size_t dev_len, bool *last)
{
	struct addr_entry *e;
	const uint8_t *p = NULL;
	uint8_t b = 0, iface_len = 0;
	doca_error_t st;

	if (a->num_entries == ADDR_MAX_ENTRIES)
		return addr_fail(r, r->off, "more than %u transports", ADDR_MAX_ENTRIES);
	e = &a->e[a->num_entries];
	e->off = r->off;
	st = rd_bytes(r, 2, "transport name checksum", &p);
	if (st != DOCA_SUCCESS)
		return st;
	memcpy(&e->csum, p, sizeof(e->csum));
	st = parse_attrs(r, a->version);
	if (st != DOCA_SUCCESS)
		return st;
	st = rd_u8(r, "interface address length", &b);
	if (st == DOCA_SUCCESS)
		st = rd_extended(r, a->version, b, IF_LEN_MASK, "interface address length extension", &iface_len);
	if (st == DOCA_SUCCESS)
		st = rd_bytes(r, iface_len, "interface address", &e->iface);
	if (st != DOCA_SUCCESS)
		return st;
	if (b & IF_HAS_EP)
		return parse_ep_addrs(r);
	e->iface_len = iface_len;
	e->dev = dev;
	e->dev_len = dev_len;
	a->num_entries++;
	*last = b & IF_LAST;
	return DOCA_SUCCESS;
}

static doca_error_t parse_device(struct addr_reader *r, struct addr_parsed *a, bool *last)
{
	uint8_t md_byte = 0, md = 0, len_byte = 0, dev_len = 0, paths = 0, sys_dev = 0;
	size_t off = r->off;
	bool last_tl;
	const uint8_t *dev = NULL;
	doca_error_t st;

	if (a->num_devs++ == ADDR_MAX_DEVICES)
		return addr_fail(r, off, "more than %u devices", ADDR_MAX_DEVICES);
	st = rd_u8(r, "md index", &md_byte);
	if (st == DOCA_SUCCESS)
		st = rd_extended(r, a->version, md_byte, a->version == ADDR_V1 ? MD_MASK_V1 : MD_MASK_V2,
				 "md index extension", &md);
	if (st != DOCA_SUCCESS)
		return st;
	if (md >= ADDR_MAX_MD)
		return addr_fail(r, off, "md index %u is not below %u", md, ADDR_MAX_MD);
	off = r->off;
	st = rd_u8(r, "device address length", &len_byte);
	if (st == DOCA_SUCCESS)
		st = rd_extended(r, a->version, len_byte, DEV_LEN_MASK, "device address length extension", &dev_len);
	if (st != DOCA_SUCCESS)
		return st;
	if (len_byte & DEV_NUM_PATHS) {
		st = rd_u8(r, "number of paths", &paths);
		if (st != DOCA_SUCCESS)
			return st;
		if (paths == 0)
			return addr_fail(r, r->off - 1, "device has no paths");
	}
	if (len_byte & DEV_SYS_DEVICE) {
		st = rd_u8(r, "system device", &sys_dev);
		if (st != DOCA_SUCCESS)
			return st;
		if (sys_dev >= ADDR_MAX_SYS_DEV && sys_dev != ADDR_SYS_DEV_UNKNOWN)
			return addr_fail(r, r->off - 1, "system device %u is out of range", sys_dev);
	}
	st = rd_bytes(r, dev_len, "device address", &dev);
	if (st != DOCA_SUCCESS)
		return st;
	*last = len_byte & DEV_LAST;
	last_tl = md_byte & MD_EMPTY;
	while (!last_tl) {
		st = parse_transport(r, a, dev, dev_len, &last_tl);
		if (st != DOCA_SUCCESS)
			return st;
	}
	return DOCA_SUCCESS;
}

/* The walk of ucp_address_unpack, bounded by r->len. */
static doca_error_t addr_parse(struct addr_reader *r, struct addr_parsed *a)
{
	bool last = false;
	doca_error_t st;

	memset(a, 0, offsetof(struct addr_parsed, e));
	st = parse_header(r, a);
	if (st != DOCA_SUCCESS)
		return st;
	if (r->off < r->len && r->buf[r->off] == ADDR_NULL_RESOURCE)
		return addr_fail(r, r->off, "the address lists no transports");
	while (!last) {
		st = parse_device(r, a, &last);
		if (st != DOCA_SUCCESS)
			return st;
	}
	if (r->off != r->len)
		return addr_fail(r, r->off, "%zu bytes after the last device", r->len - r->off);
	return DOCA_SUCCESS;
}

/* Shared-memory device address: host id, plus a namespace iff flagged. */
static bool sm_dev_ok(const struct addr_entry *e)
{
	if (e->dev_len != SM_ADDR_BASE && e->dev_len != SM_ADDR_NS)
		return false;
	return !!(get_u64(e->dev) & SM_NS_FLAG) == (e->dev_len == SM_ADDR_NS);
}

static doca_error_t check_self(const struct addr_reader *r, const struct addr_entry *e)
{
	if (e->dev_len != 0 || e->iface_len != 8)
		return addr_fail(r, e->off, "self transport needs no device address and an 8-byte id");
	return DOCA_SUCCESS;
}

static doca_error_t check_tcp(const struct addr_reader *r, const struct addr_entry *e)
{
	size_t want;

	if (e->iface_len != 2)
		return addr_fail(r, e->off, "tcp interface address is %zu bytes, not a 2-byte port", e->iface_len);
	if (e->dev_len < TCP_DEV_HDR)
		return addr_fail(r, e->off, "tcp device address is %zu bytes", e->dev_len);
	if (e->dev[0] & ~TCP_FLAG_LOOPBACK)
		return addr_fail(r, e->off, "tcp device address has unknown flags 0x%02x", e->dev[0]);
	if (e->dev[1] == AF_INET)
		want = TCP_DEV_HDR + 4;
	else if (e->dev[1] == AF_INET6)
		want = TCP_DEV_HDR + 16;
	else
		return addr_fail(r, e->off, "tcp device address family %u is not IPv4 or IPv6", e->dev[1]);
	if (e->dev[0] & TCP_FLAG_LOOPBACK)
		want = TCP_DEV_HDR + SM_ADDR_NS; /* host id and network namespace */
	if (e->dev_len != want)
		return addr_fail(r, e->off, "tcp device address is %zu bytes, its kind needs %zu", e->dev_len, want);
	return DOCA_SUCCESS;
}

static doca_error_t check_sm_dev(const struct addr_reader *r, const struct addr_entry *e, const char *tl)
{
	if (!sm_dev_ok(e))
		return addr_fail(r, e->off, "%s device address (%zu bytes) is not a host id of the size its flag says", tl,
				 e->dev_len);
	return DOCA_SUCCESS;
}

static doca_error_t check_sysv(const struct addr_reader *r, const struct addr_entry *e)
{
	doca_error_t st = check_sm_dev(r, e, "sysv");

	if (st == DOCA_SUCCESS && e->iface_len != 8)
		return addr_fail(r, e->off, "sysv interface address is %zu bytes, not an 8-byte segment id", e->iface_len);
	return st;
}

/* posix: segment id, then what the segment flags say follows. */
static doca_error_t check_posix(const struct addr_reader *r, const struct addr_entry *e)
{
	doca_error_t st = check_sm_dev(r, e, "posix");
	uint64_t seg;
	size_t tail;
	bool ok;

	if (st != DOCA_SUCCESS)
		return st;
	if (e->iface_len < 8)
		return addr_fail(r, e->off, "posix interface address is %zu bytes", e->iface_len);
	seg = get_u64(e->iface);
	tail = e->iface_len - 8;
	if (seg & POSIX_SEG_PROCFS)
		ok = tail == ((seg & POSIX_SEG_PID_NS) ? 8u : 0u);
	else if (seg & POSIX_SEG_PID_NS)
		ok = false;
	else if (seg & POSIX_SEG_SHM_OPEN)
		ok = tail == 0;
	else /* a directory name, read as a C string */
		ok = tail > 0 && e->iface[e->iface_len - 1] == '\0';
	if (!ok)
		return addr_fail(r, e->off, "posix segment flags 0x%llx do not fit %zu trailing bytes",
				 (unsigned long long)(seg >> 60), tail);
	return DOCA_SUCCESS;
}

static doca_error_t check_cma(const struct addr_reader *r, const struct addr_entry *e)
{
	doca_error_t st = check_sm_dev(r, e, "cma");
	bool ns;

	if (st != DOCA_SUCCESS)
		return st;
	if (e->iface_len != CMA_ADDR_BASE && e->iface_len != CMA_ADDR_NS)
		return addr_fail(r, e->off, "cma interface address is %zu bytes", e->iface_len);
	ns = get_u32(e->iface) & CMA_PID_NS_FLAG;
	if (ns != (e->iface_len == CMA_ADDR_NS))
		return addr_fail(r, e->off, "cma pid namespace flag does not fit %zu bytes", e->iface_len);
	return DOCA_SUCCESS;
}

/* A transport we have but do not know: sizes must be ones we use. */
static doca_error_t check_other(const struct addr_reader *r, const struct addr_entry *e, const struct addr_parsed *own)
{
	for (unsigned i = 0; i < own->num_entries; i++) {
		const struct addr_entry *t = &own->e[i];

		if (t->csum == e->csum && t->dev_len == e->dev_len && t->iface_len == e->iface_len)
			return DOCA_SUCCESS;
	}
	return addr_fail(r, e->off, "transport 0x%04x: device/interface address sizes %zu/%zu are not ours", e->csum,
			 e->dev_len, e->iface_len);
}

static bool own_has(const struct addr_parsed *own, uint16_t csum)
{
	for (unsigned i = 0; i < own->num_entries; i++)
		if (own->e[i].csum == csum)
			return true;
	return false;
}

/* What this host's transports will read of an entry. */
static doca_error_t check_entry(const struct addr_reader *r, const struct addr_entry *e, const struct addr_parsed *own)
{
	if (!own_has(own, e->csum))
		return DOCA_SUCCESS; /* UCX never hands it to a transport */
	if (e->csum == tl_csum("self"))
		return check_self(r, e);
	if (e->csum == tl_csum("tcp"))
		return check_tcp(r, e);
	if (e->csum == tl_csum("sysv"))
		return check_sysv(r, e);
	if (e->csum == tl_csum("posix"))
		return check_posix(r, e);
	if (e->csum == tl_csum("cma"))
		return check_cma(r, e);
	return check_other(r, e, own);
}

static doca_error_t check_content(const struct addr_reader *r, const struct addr_parsed *a,
				  const struct addr_parsed *own)
{
	doca_error_t st;

	for (unsigned i = 0; i < a->num_entries; i++) {
		st = check_entry(r, &a->e[i], own);
		if (st != DOCA_SUCCESS)
			return st;
	}
	return DOCA_SUCCESS;
}

/* Does an entry of the peer's name one of our own worker's interfaces
 * (the same transport, device and interface address)? Only transports
 * whose interface address is one worker's own (a port, a segment, an id)
 * count; cma's is the process, shared by every worker in it. */
static const struct addr_entry *own_iface_named(const struct addr_parsed *a, const struct addr_parsed *own)
{
	const uint16_t per_worker[] = {tl_csum("self"), tl_csum("tcp"), tl_csum("sysv"), tl_csum("posix")};

	for (unsigned i = 0; i < a->num_entries; i++) {
		const struct addr_entry *e = &a->e[i];
		bool counts = false;

		for (size_t k = 0; k < sizeof(per_worker) / sizeof(per_worker[0]); k++)
			counts |= e->csum == per_worker[k];
		for (unsigned j = 0; counts && j < own->num_entries; j++) {
			const struct addr_entry *o = &own->e[j];

			if (o->csum == e->csum && o->dev_len == e->dev_len && o->iface_len == e->iface_len &&
			    (e->dev_len == 0 || memcmp(o->dev, e->dev, e->dev_len) == 0) &&
			    (e->iface_len == 0 || memcmp(o->iface, e->iface, e->iface_len) == 0))
				return e;
		}
	}
	return NULL;
}

/* Keep in step with the libucx0 range of Depends in scripts/package.sh. */
static bool version_known(uint32_t v)
{
	return v == UCX_ADDR_UCX_VERSION(1, 12) || v == UCX_ADDR_UCX_VERSION(1, 13) || v == UCX_ADDR_UCX_VERSION(1, 16);
}

/* Our own address, proven with the same rules, is the template. */
static doca_error_t own_parse(const void *local, size_t local_len, struct addr_parsed *own)
{
	char why[ADDR_WHY_SIZE] = "no address";
	struct addr_reader r = {.buf = local, .len = local_len, .who = "own", .held = why};

	if (local == NULL || addr_parse(&r, own) != DOCA_SUCCESS || check_content(&r, own, own) != DOCA_SUCCESS) {
		SDK_LOG_ERR("our own UCX worker address is in a format this check does not know (%s; UCX_UNIFIED_MODE=y?):"
			    " no peer address can be accepted",
			    why);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t ucx_addr_check(const void *addr, size_t len, const void *local, size_t local_len,
			    uint32_t ucx_version)
{
	struct addr_reader r = {.buf = addr, .len = len, .who = "peer"};
	struct addr_parsed own, peer;
	const struct addr_entry *e;
	doca_error_t st;

	if (!version_known(ucx_version)) {
		SDK_LOG_ERR("UCX %u.%u: its worker address format is not reviewed (1.12, 1.13 and 1.16 are);"
			    " no peer address can be accepted",
			    ucx_version >> 8, ucx_version & 0xffu);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	st = own_parse(local, local_len, &own);
	if (st != DOCA_SUCCESS)
		return st;
	if (addr == NULL)
		return addr_fail(&r, 0, "no address");
	st = addr_parse(&r, &peer);
	if (st != DOCA_SUCCESS)
		return st;
	st = check_content(&r, &peer, &own);
	if (st != DOCA_SUCCESS)
		return st;
	/* UCX connects an address with our uuid to ourselves. */
	if (peer.has_uuid && own.has_uuid && peer.uuid == own.uuid) {
		if (len != local_len || memcmp(addr, local, len) != 0)
			return addr_fail(&r, peer.version == ADDR_V1 ? 1 : 2,
					 "claims our own worker's uuid but is not our address");
		return DOCA_SUCCESS;
	}
	/* Our own interfaces under another identity: UCX would connect to
	 * itself as to a stranger, and keep the endpoint it accepts for that
	 * stranger (and its sockets) until the worker is destroyed. */
	e = own_iface_named(&peer, &own);
	if (e != NULL)
		return addr_fail(&r, e->off, "transport 0x%04x names this worker's own interface under another worker's identity",
				 e->csum);
	return DOCA_SUCCESS;
}
