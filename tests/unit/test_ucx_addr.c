/*
 * Unit tests of the UCX worker address check (src/engine/ucx_addr.c):
 * real addresses from live UCX workers (v1 and v2 formats) pass, every
 * truncation of them and random garbage fail, and hand-built addresses
 * that are well-formed except for one field (header, lengths, flags,
 * floats, indexes, a transport's device or interface address) fail with
 * one ERROR line in the SDK log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <ucp/api/ucp.h>

#include <doca_log.h>

#include "engine/ucx_addr.h"

/* ---- SDK log capture ------------------------------------------------- */

static char log_line[2048];
static int error_lines;

static void log_flush(char *line)
{
	if (getenv("TEST_UCX_ADDR_VERBOSE") != NULL)
		fputs(line, stderr);
	if (strstr(line, "[ERROR]") != NULL)
		error_lines++;
}

/* The check fails with code and logs exactly one error line. */
#define assert_rejected(expr, code) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), (code)); \
		assert_int_equal(error_lines, before_ + 1); \
	} while (0)

#define assert_accepted(expr) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), DOCA_SUCCESS); \
		assert_int_equal(error_lines, before_); \
	} while (0)

/* ---- live UCX workers ------------------------------------------------ */

struct live {
	ucp_context_h ctx;
	ucp_worker_h worker[2];
	uint8_t *addr[2];
	size_t len[2];
};

static struct live v1, v2;
static uint32_t ucx_version;

static int live_open(struct live *l, const char *addr_version, const char *unified, int workers)
{
	ucp_params_t params = {0};
	ucp_worker_params_t wp = {0};
	ucp_config_t *config;
	ucp_address_t *a;
	size_t n;

	if (ucp_config_read(NULL, NULL, &config) != UCS_OK)
		return -1;
	if (ucp_config_modify(config, "ADDRESS_VERSION", addr_version) != UCS_OK ||
	    ucp_config_modify(config, "UNIFIED_MODE", unified) != UCS_OK) {
		ucp_config_release(config);
		return -1;
	}
	params.field_mask = UCP_PARAM_FIELD_FEATURES;
	params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	if (ucp_init(&params, config, &l->ctx) != UCS_OK) {
		ucp_config_release(config);
		return -1;
	}
	ucp_config_release(config);
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	for (int i = 0; i < workers; i++) {
		if (ucp_worker_create(l->ctx, &wp, &l->worker[i]) != UCS_OK)
			return -1;
		if (ucp_worker_get_address(l->worker[i], &a, &n) != UCS_OK)
			return -1;
		l->addr[i] = malloc(n);
		if (l->addr[i] == NULL)
			return -1;
		memcpy(l->addr[i], a, n);
		l->len[i] = n;
		ucp_worker_release_address(l->worker[i], a);
	}
	return 0;
}

static void live_close(struct live *l)
{
	for (int i = 0; i < 2; i++) {
		free(l->addr[i]);
		if (l->worker[i] != NULL)
			ucp_worker_destroy(l->worker[i]);
	}
	if (l->ctx != NULL)
		ucp_cleanup(l->ctx);
	memset(l, 0, sizeof(*l));
}

static int group_setup(void **state)
{
	struct doca_log_backend *backend;
	unsigned major, minor, release;

	(void)state;
	if (doca_log_backend_create_with_buf_sdk(log_line, sizeof(log_line), log_flush, &backend) != DOCA_SUCCESS ||
	    doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_WARNING) != DOCA_SUCCESS)
		return -1;
	ucp_get_version(&major, &minor, &release);
	ucx_version = UCX_ADDR_UCX_VERSION(major, minor);
	if (live_open(&v1, "v1", "n", 2) != 0 || live_open(&v2, "v2", "n", 2) != 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	live_close(&v1);
	live_close(&v2);
	return 0;
}

static doca_error_t check_v1(const void *a, size_t n)
{
	return ucx_addr_check(a, n, v1.addr[0], v1.len[0], ucx_version);
}

/* ---- real addresses -------------------------------------------------- */

static void test_own_address_passes(void **state)
{
	(void)state;
	assert_accepted(check_v1(v1.addr[0], v1.len[0]));
	assert_accepted(ucx_addr_check(v2.addr[0], v2.len[0], v2.addr[0], v2.len[0], ucx_version));
}

static void test_other_worker_passes(void **state)
{
	(void)state;
	assert_accepted(check_v1(v1.addr[1], v1.len[1]));
	assert_accepted(ucx_addr_check(v2.addr[1], v2.len[1], v2.addr[0], v2.len[0], ucx_version));
	/* A v2 peer against a v1 template (and back): the format is per address. */
	assert_accepted(ucx_addr_check(v2.addr[1], v2.len[1], v1.addr[0], v1.len[0], ucx_version));
	assert_accepted(ucx_addr_check(v1.addr[1], v1.len[1], v2.addr[0], v2.len[0], ucx_version));
}

static void test_every_truncation_fails(void **state)
{
	const struct live *l[] = {&v1, &v2};

	(void)state;
	for (int k = 0; k < 2; k++)
		for (size_t n = 0; n < l[k]->len[1]; n++)
			assert_rejected(ucx_addr_check(l[k]->addr[1], n, l[k]->addr[0], l[k]->len[0], ucx_version),
					DOCA_ERROR_INVALID_VALUE);
}

static void test_trailing_byte_fails(void **state)
{
	uint8_t buf[4096];

	(void)state;
	assert_true(v1.len[1] < sizeof(buf));
	memcpy(buf, v1.addr[1], v1.len[1]);
	buf[v1.len[1]] = 0;
	assert_rejected(check_v1(buf, v1.len[1] + 1), DOCA_ERROR_INVALID_VALUE);
}

/* Our own interfaces under another worker's identity (the uuid, after
 * the one-byte v1 header, changed): UCX would connect to itself as to a
 * stranger and keep that endpoint's sockets, so it is refused. The same
 * for the other worker of the context, whose interfaces are its own. */
static void test_own_interfaces_other_uuid_fail(void **state)
{
	uint8_t buf[4096];

	(void)state;
	assert_true(v1.len[0] < sizeof(buf) && v1.len[1] < sizeof(buf));
	memcpy(buf, v1.addr[0], v1.len[0]);
	buf[1] ^= 0x5a;
	assert_rejected(check_v1(buf, v1.len[0]), DOCA_ERROR_INVALID_VALUE);
	memcpy(buf, v1.addr[1], v1.len[1]);
	buf[1] ^= 0x5a;
	assert_accepted(check_v1(buf, v1.len[1]));
	assert_rejected(ucx_addr_check(buf, v1.len[1], v1.addr[1], v1.len[1], ucx_version), DOCA_ERROR_INVALID_VALUE);
}

/* The reported UCX abort: bits 1-3 of the first byte are the version. */
static void test_version_bit_flips_fail(void **state)
{
	uint8_t buf[4096];

	(void)state;
	memcpy(buf, v1.addr[1], v1.len[1]);
	for (int bit = 1; bit < 4; bit++) {
		buf[0] ^= (uint8_t)(1u << bit);
		assert_rejected(check_v1(buf, v1.len[1]), DOCA_ERROR_INVALID_VALUE);
		buf[0] ^= (uint8_t)(1u << bit);
	}
	assert_accepted(check_v1(buf, v1.len[1]));
}

static void test_garbage_fails(void **state)
{
	uint8_t buf[512];
	unsigned seed = 12345;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % (int)sizeof(buf));

		for (size_t j = 0; j < n; j++)
			buf[j] = (uint8_t)rand_r(&seed);
		assert_rejected(check_v1(buf, n), DOCA_ERROR_INVALID_VALUE);
	}
	assert_rejected(check_v1(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	assert_rejected(check_v1("", 0), DOCA_ERROR_INVALID_VALUE);
}

static void test_unknown_setups_refused(void **state)
{
	struct live uni = {0};

	(void)state;
	assert_rejected(ucx_addr_check(v1.addr[1], v1.len[1], v1.addr[0], v1.len[0], UCX_ADDR_UCX_VERSION(1, 14)),
			DOCA_ERROR_NOT_SUPPORTED);
	assert_rejected(ucx_addr_check(v1.addr[1], v1.len[1], v1.addr[0], v1.len[0], UCX_ADDR_UCX_VERSION(2, 13)),
			DOCA_ERROR_NOT_SUPPORTED);
	assert_rejected(ucx_addr_check(v1.addr[1], v1.len[1], NULL, 0, ucx_version), DOCA_ERROR_NOT_SUPPORTED);
	/* Unified mode leaves interface address lengths out of the address. */
	assert_int_equal(live_open(&uni, "v1", "y", 2), 0);
	assert_rejected(ucx_addr_check(uni.addr[1], uni.len[1], uni.addr[0], uni.len[0], ucx_version),
			DOCA_ERROR_NOT_SUPPORTED);
	live_close(&uni);
}

/* ---- hand-built addresses -------------------------------------------- */

/* UCX's transport name checksum (CRC-16, reflected 0x8408, inverted). */
static uint16_t csum(const char *s)
{
	uint16_t crc = 0xffff;

	for (; *s; s++) {
		crc ^= (uint8_t)*s;
		for (int b = 0; b < 8; b++)
			crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0x8408u) : (uint16_t)(crc >> 1);
	}
	return (uint16_t)~crc;
}

enum fault {
	F_NONE,
	F_VERSION,
	F_HDR_FLAG,
	F_AM_ONLY,
	F_NO_TRANSPORTS,
	F_TRAILING,
	F_OWN_UUID,
	F_MD_INDEX,
	F_NUM_PATHS,
	F_SYS_DEV,
	F_TOO_MANY_DEVICES,
	F_NAN_OVERHEAD,
	F_ZERO_BW,
	F_INF_BW,
	F_NEG_LATENCY,
	F_SEG_SIZE,
	F_EP_ADDR,
	F_SELF_DEV_LEN,
	F_SELF_IFACE_LEN,
	F_TCP_DEV_LEN,
	F_TCP_FAMILY,
	F_TCP_FLAGS,
	F_TCP_LOOPBACK_LEN,
	F_TCP_PORT_LEN,
	F_SYSV_NO_DEV,
	F_SYSV_NS_FLAG,
	F_POSIX_PID_NS,
	F_POSIX_DIR,
	F_CMA_NO_IFACE,
	F_CMA_NS_FLAG,
	F_COUNT,
	/* Variants that are well-formed. */
	OK_TCP_LOOPBACK = F_COUNT,
	OK_TCP_V6,
	OK_POSIX_DIR,
	OK_CMA_NS,
	OK_SM_NS,
	OK_DEBUG_NAME,
	OK_V2_EXTENDED, /* v2 only: lengths in extension bytes */
	OK_COUNT
};

struct bld {
	uint8_t b[8192];
	size_t n;
	unsigned version;
	enum fault f;
};

static void put(struct bld *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put8(struct bld *b, unsigned v)
{
	uint8_t x = (uint8_t)v;

	put(b, &x, 1);
}

static void put16(struct bld *b, uint16_t v)
{
	put(b, &v, 2);
}

static void put32(struct bld *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct bld *b, uint64_t v)
{
	put(b, &v, 8);
}

static void putf(struct bld *b, float v)
{
	put(b, &v, 4);
}

/* A small length with its v2 extension when asked. */
static void put_len(struct bld *b, unsigned flags, unsigned len, unsigned mask)
{
	if (b->version == 1 && len >= mask) {
		put8(b, flags | mask);
		put8(b, len);
		return;
	}
	put8(b, flags | len);
}

static void put_header(struct bld *b)
{
	uint64_t uuid = 0x1122334455667788ull;

	if (b->f == F_OWN_UUID)
		memcpy(&uuid, v1.addr[0] + 1, sizeof(uuid));
	unsigned dbg = b->f == OK_DEBUG_NAME ? 0x01 : 0;

	if (b->version == 0) {
		put8(b, b->f == F_VERSION ? 0x22 : b->f == F_AM_ONLY ? 0xa0 : 0x20 | (dbg << 4));
	} else {
		put8(b, b->f == F_VERSION ? 0x03 : 0x11); /* high nibble: 1.16's release number */
		put8(b, b->f == F_HDR_FLAG ? 0x12 : b->f == F_AM_ONLY ? 0x0a : 0x02 | dbg);
	}
	put64(b, uuid);
	if (dbg) {
		put8(b, 5);
		put(b, "host1", 5);
	}
}

/* flags: 0x80 last device, 0x40 number of paths, 0x20 system device,
 * 0x100 (ours) no transports on this device. */
static void put_device(struct bld *b, unsigned md, unsigned flags, const void *dev, size_t dev_len)
{
	unsigned empty = (flags & 0x100u) ? 0x80u : 0;

	if (b->version == 1 && md >= 0x7f) {
		put8(b, empty | 0x7f);
		put8(b, md);
	} else {
		put8(b, empty | md);
	}
	put_len(b, flags & 0xe0u, (unsigned)dev_len, 0x1f);
	if (flags & 0x40u)
		put8(b, b->f == F_NUM_PATHS ? 0 : 2);
	if (flags & 0x20u)
		put8(b, b->f == F_SYS_DEV ? 100 : 1);
	put(b, dev, dev_len);
}

static void put_attrs(struct bld *b)
{
	if (b->version == 0) {
		putf(b, b->f == F_NAN_OVERHEAD ? __builtin_nanf("") : 1e-8f);
		putf(b, b->f == F_ZERO_BW ? 0.0f : b->f == F_INF_BW ? __builtin_inff() : 1e9f);
		putf(b, b->f == F_NEG_LATENCY ? -1e-6f : 1e-6f);
		put32(b, 0x034f0000u);
		return;
	}
	put8(b, b->f == F_NAN_OVERHEAD ? 0x0f : 0x44);
	put8(b, b->f == F_ZERO_BW ? 0x00 : b->f == F_INF_BW ? 0x0f : 0xa4);
	put8(b, b->f == F_NEG_LATENCY ? 0xff : 0x13); /* v2 has no sign: NaN instead */
	put8(b, 0);
	put16(b, b->f == F_SEG_SIZE ? 0 : 128);
	put16(b, 0x1b);
}

static void put_tl(struct bld *b, const char *name, const void *iface, size_t iface_len, unsigned flags)
{
	put16(b, csum(name));
	put_attrs(b);
	put_len(b, flags, (unsigned)iface_len, 0x3f);
	put(b, iface, iface_len);
}

static size_t build(struct bld *b, unsigned version, enum fault f)
{
	uint8_t tcp[2 + 16] = {0, AF_INET, 10, 0, 0, 1};
	size_t tcp_len = 6;
	uint64_t self_id = 42, sysv_seg = 7, sm_dev[2] = {0x0123456789abcdefull, 0};
	uint64_t posix[2] = {(1ull << 63) | 77, 0};
	uint32_t cma[4] = {4321, 0, 0, 0};
	uint8_t port[4] = {0x12, 0x34};
	char posix_dir[16] = {0};
	size_t sm_len = 8, posix_len = 8, cma_len = 4;

	memset(b, 0, sizeof(*b));
	b->version = version;
	b->f = f;
	put_header(b);
	if (f == F_NO_TRANSPORTS) {
		put8(b, 0xff);
		return b->n;
	}
	/* self */
	put_device(b, f == F_MD_INDEX ? 200 : 0, 0, "\0\0\0\0\0\0\0\0", f == F_SELF_DEV_LEN ? 8 : 0);
	put_tl(b, "self", &self_id, f == F_SELF_IFACE_LEN ? 4 : 8, f == F_EP_ADDR ? 0xc0 : 0x80);
	if (f == F_EP_ADDR) {
		put8(b, 4);
		put32(b, 0);
		put8(b, 0x80);
	}
	/* tcp */
	if (f == F_TCP_DEV_LEN)
		tcp_len = 5;
	if (f == F_TCP_FAMILY)
		tcp[1] = 99;
	if (f == F_TCP_FLAGS)
		tcp[0] = 0x04;
	if (f == F_TCP_LOOPBACK_LEN || f == OK_TCP_LOOPBACK)
		tcp[0] = 0x01;
	if (f == OK_TCP_LOOPBACK || f == OK_TCP_V6)
		tcp_len = 18;
	if (f == OK_TCP_V6)
		tcp[1] = AF_INET6;
	put_device(b, 1, 0x40 | 0x20, tcp, tcp_len);
	put_tl(b, "tcp", port, f == F_TCP_PORT_LEN ? 4 : 2, 0x80);
	/* shared memory: sysv, posix, cma on one device */
	if (f == F_SYSV_NS_FLAG || f == OK_SM_NS)
		sm_dev[0] |= 1ull << 63;
	if (f == OK_SM_NS)
		sm_len = 16;
	if (f == F_SYSV_NO_DEV)
		sm_len = 0;
	if (f == F_POSIX_PID_NS)
		posix[0] |= 1ull << 60;
	if (f == F_POSIX_DIR || f == OK_POSIX_DIR) {
		posix[0] = 55; /* neither procfs nor shm_open: a directory follows */
		memcpy(posix_dir, "/dev/shm", 8);
		memset(posix_dir + 8, 'x', 8); /* no terminating NUL */
		if (f == OK_POSIX_DIR)
			posix_dir[15] = '\0';
	}
	if (f == F_CMA_NO_IFACE)
		cma_len = 0;
	if (f == F_CMA_NS_FLAG || f == OK_CMA_NS)
		cma[0] |= 1u << 31;
	if (f == OK_CMA_NS)
		cma_len = 16;
	put_device(b, 2, 0, sm_dev, sm_len);
	put_tl(b, "sysv", &sysv_seg, 8, 0);
	if (f == F_POSIX_DIR || f == OK_POSIX_DIR) {
		uint8_t tmp[8 + 16];

		memcpy(tmp, posix, 8);
		memcpy(tmp + 8, posix_dir, 16);
		posix_len = sizeof(tmp);
		put_tl(b, "posix", tmp, posix_len, 0);
	} else {
		put_tl(b, "posix", posix, posix_len, 0);
	}
	put_tl(b, "cma", cma, cma_len, 0x80);
	/* A transport this host does not have: any sizes. */
	if (f == OK_V2_EXTENDED) {
		uint8_t big[100] = {0};

		put_device(b, 5, 0x80, big, 40);
		put_tl(b, "rc_mlx5", big, 70, 0x80);
	} else {
		put_device(b, 3, f == F_TOO_MANY_DEVICES ? 0 : 0x80, "\x01\x02\x03", 3);
		put_tl(b, "rc_mlx5", "\x09\x09\x09\x09\x09", 5, 0x80);
	}
	if (f == F_TOO_MANY_DEVICES) {
		for (int i = 0; i < 64; i++)
			put_device(b, 4, 0x100 | (i == 63 ? 0x80 : 0), "", 0);
	}
	if (f == F_TRAILING)
		put8(b, 0);
	return b->n;
}

static void test_built_address_passes(void **state)
{
	struct bld b;

	(void)state;
	for (unsigned v = 0; v < 2; v++) {
		build(&b, v, F_NONE);
		assert_accepted(check_v1(b.b, b.n));
		/* against a v2 template too */
		assert_accepted(ucx_addr_check(b.b, b.n, v2.addr[0], v2.len[0], ucx_version));
		for (int f = OK_TCP_LOOPBACK; f < OK_COUNT; f++) {
			if (v == 0 && f == OK_V2_EXTENDED)
				continue;
			build(&b, v, (enum fault)f);
			assert_accepted(check_v1(b.b, b.n));
		}
	}
}

static void test_built_faults_fail(void **state)
{
	struct bld b;

	(void)state;
	for (unsigned v = 0; v < 2; v++) {
		for (int f = F_NONE + 1; f < F_COUNT; f++) {
			if (v == 0 && (f == F_HDR_FLAG || f == F_SEG_SIZE || f == F_MD_INDEX))
				continue; /* no such field (or range) in v1 */
			build(&b, v, (enum fault)f);
			if (getenv("TEST_UCX_ADDR_VERBOSE") != NULL)
				fprintf(stderr, "v%u fault %d\n", v + 1, f);
			assert_rejected(check_v1(b.b, b.n), DOCA_ERROR_INVALID_VALUE);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_address_passes),
		cmocka_unit_test(test_other_worker_passes),
		cmocka_unit_test(test_every_truncation_fails),
		cmocka_unit_test(test_trailing_byte_fails),
		cmocka_unit_test(test_own_interfaces_other_uuid_fail),
		cmocka_unit_test(test_version_bit_flips_fail),
		cmocka_unit_test(test_garbage_fails),
		cmocka_unit_test(test_unknown_setups_refused),
		cmocka_unit_test(test_built_address_passes),
		cmocka_unit_test(test_built_faults_fail),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
