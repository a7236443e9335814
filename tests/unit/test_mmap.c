/*
 * Unit tests of memory maps: life cycle and configuration errors,
 * permissions, memory ranges, devices, RDMA export and create-from-export,
 * the strict descriptor parser, and revocation through the region table.
 *
 * Every failing call must also leave an ERROR line in the SDK log; library
 * messages are captured with a buffer SDK backend.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_mmap.h>

#include "buf.h"
#include "mmap.h"

/* ---- SDK log capture ------------------------------------------------- */

static char log_line[2048];
static int error_lines;

static void log_flush(char *line)
{
	if (strstr(line, "[ERROR]") != NULL)
		error_lines++;
}

static void log_capture_init(void)
{
	struct doca_log_backend *backend;

	assert_int_equal(doca_log_backend_create_with_buf_sdk(log_line, sizeof(log_line), log_flush, &backend),
			 DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
}

/* The call fails with code and says why in the log. */
#define assert_fails(expr, code) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), (code)); \
		assert_true(error_lines > before_); \
	} while (0)

/* The call succeeds without logging an error. */
#define assert_ok(expr) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), DOCA_SUCCESS); \
		assert_int_equal(error_lines, before_); \
	} while (0)

/* ---- devices ----------------------------------------------------------- */

static struct doca_devinfo **dev_list;
static struct doca_dev *real_dev;
static struct doca_dev *second_dev;
static char sentinel_byte; /* an address that is no mmap */

/* Real soft devices: the mmap holds the devices it is given, so tests
 * never pass made-up device pointers. */
static struct doca_dev *dev_a(void)
{
	return real_dev;
}

static struct doca_dev *dev_b(void)
{
	return second_dev;
}

/* Tests that need two distinct devices skip, before allocating anything,
 * on a machine with a single interface. */
#define REQUIRE_TWO_DEVICES() \
	do { \
		if (second_dev == NULL) { \
			print_message("only one soft device on this machine: skipped\n"); \
			skip(); \
		} \
	} while (0)

static int group_setup(void **state)
{
	uint32_t nb = 0;

	(void)state;
	log_capture_init();
	if (doca_devinfo_create_list(&dev_list, &nb) != DOCA_SUCCESS || nb == 0 ||
	    doca_dev_open(dev_list[0], &real_dev) != DOCA_SUCCESS)
		return -1;
	if (nb > 1 && doca_dev_open(dev_list[1], &second_dev) != DOCA_SUCCESS)
		second_dev = NULL;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (second_dev != NULL)
		doca_dev_close(second_dev);
	if (real_dev != NULL)
		doca_dev_close(real_dev);
	if (dev_list != NULL)
		doca_devinfo_destroy_list(dev_list);
	return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static uint8_t region[4096];

static struct doca_mmap *new_mmap(uint32_t perms)
{
	struct doca_mmap *mmap = NULL;

	assert_ok(doca_mmap_create(&mmap));
	assert_ok(doca_mmap_set_memrange(mmap, region, sizeof(region)));
	assert_ok(doca_mmap_set_permissions(mmap, perms));
	assert_ok(doca_mmap_add_dev(mmap, dev_a()));
	return mmap;
}

static struct doca_mmap *new_started_mmap(uint32_t perms)
{
	struct doca_mmap *mmap = new_mmap(perms);

	assert_ok(doca_mmap_start(mmap));
	return mmap;
}

static const uint32_t rdma_rw = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
				DOCA_ACCESS_FLAG_RDMA_WRITE;

/* A valid descriptor of a started, exported mmap, copied out. */
static struct doca_mmap *exported_mmap(uint8_t desc[SOFTDOCA_MMAP_DESC_LEN])
{
	struct doca_mmap *mmap = new_started_mmap(rdma_rw);
	const void *d = NULL;
	size_t len = 0;

	assert_ok(doca_mmap_export_rdma(mmap, dev_a(), &d, &len));
	assert_int_equal(len, SOFTDOCA_MMAP_DESC_LEN);
	memcpy(desc, d, len);
	return mmap;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* create_from_export must fail with code, log, and leave *mmap alone. */
static void assert_desc_rejected(const void *desc, size_t len, doca_error_t code)
{
	struct doca_mmap *sentinel = (struct doca_mmap *)&sentinel_byte;
	struct doca_mmap *out = sentinel;
	struct softdoca_mmap_desc parsed;

	assert_fails(doca_mmap_create_from_export(NULL, desc, len, dev_a(), &out), code);
	assert_ptr_equal(out, sentinel);
	assert_fails(softdoca_mmap_desc_parse(desc, len, &parsed), code);
}

/* ---- life cycle ---------------------------------------------------------- */

static void test_create_destroy(void **state)
{
	struct doca_mmap *mmap = NULL;
	union doca_data ud;
	uint32_t n;
	uint8_t flag;

	(void)state;
	assert_fails(doca_mmap_create(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_create(&mmap));
	assert_non_null(mmap);

	assert_ok(doca_mmap_get_max_num_devices(mmap, &n));
	assert_int_equal(n, 64);
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 0);
	assert_ok(doca_mmap_get_exported(mmap, &flag));
	assert_int_equal(flag, 0);
	assert_ok(doca_mmap_get_from_export(mmap, &flag));
	assert_int_equal(flag, 0);
	ud.u64 = 99;
	assert_ok(doca_mmap_get_user_data(mmap, &ud));
	assert_int_equal(ud.u64, 0);

	/* Destroy never started, never configured. */
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_start_requirements(void **state)
{
	struct doca_mmap *mmap = NULL;

	(void)state;
	assert_fails(doca_mmap_start(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_create(&mmap));
	assert_fails(doca_mmap_start(mmap), DOCA_ERROR_INVALID_VALUE); /* no range, no device */
	assert_ok(doca_mmap_set_memrange(mmap, region, sizeof(region)));
	assert_fails(doca_mmap_start(mmap), DOCA_ERROR_INVALID_VALUE); /* no device */
	assert_ok(doca_mmap_add_dev(mmap, dev_a()));
	assert_fails(doca_mmap_stop(mmap), DOCA_ERROR_BAD_STATE); /* not started */
	assert_ok(doca_mmap_start(mmap));
	assert_fails(doca_mmap_start(mmap), DOCA_ERROR_BAD_STATE);
	/* Destroying a started mmap without bufs succeeds (DOCA teardown). */
	assert_ok(doca_mmap_destroy(mmap));
}

static void free_cb_dummy(void *addr, size_t len, void *cookie)
{
	(void)addr;
	(void)len;
	(void)cookie;
}

static void test_config_after_start(void **state)
{
	struct doca_mmap *mmap = new_started_mmap(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	union doca_data ud = {.u64 = 5};
	uint8_t other[16];

	REQUIRE_TWO_DEVICES();

	(void)state;
	assert_fails(doca_mmap_set_memrange(mmap, other, sizeof(other)), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_RDMA_READ), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_mmap_set_user_data(mmap, ud), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_mmap_set_free_cb(mmap, free_cb_dummy, NULL), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_mmap_set_max_num_devices(mmap, 8), DOCA_ERROR_BAD_STATE);
	/* DOCA documents NOT_PERMITTED for device changes on a started mmap. */
	assert_fails(doca_mmap_add_dev(mmap, dev_b()), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_rm_dev(mmap, dev_a()), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_enable_thread_safety(mmap), DOCA_ERROR_NOT_PERMITTED);

	/* Stop makes it configurable again, except what is set once. */
	assert_ok(doca_mmap_stop(mmap));
	assert_ok(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_RDMA_READ));
	assert_ok(doca_mmap_set_user_data(mmap, ud));
	assert_ok(doca_mmap_add_dev(mmap, dev_b()));
	assert_ok(doca_mmap_rm_dev(mmap, dev_b()));
	assert_fails(doca_mmap_set_memrange(mmap, other, sizeof(other)), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_set_max_num_devices(mmap, 8), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_mmap_start(mmap));
	ud.u64 = 0;
	assert_ok(doca_mmap_get_user_data(mmap, &ud));
	assert_int_equal(ud.u64, 5);
	assert_ok(doca_mmap_stop(mmap));
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_permissions(void **state)
{
	struct doca_mmap *mmap = NULL;

	(void)state;
	assert_ok(doca_mmap_create(&mmap));
	/* Every combination of the known flags, 0 (local read only) included. */
	for (uint32_t mask = 0; mask <= 0x7f; mask++)
		assert_ok(doca_mmap_set_permissions(mmap, mask));
	for (int bit = 7; bit < 32; bit++)
		assert_fails(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_RDMA_READ | (1u << bit)),
			     DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_set_permissions(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_memrange(void **state)
{
	struct doca_mmap *mmap = NULL;
	void *addr = NULL;
	size_t len = 0;

	(void)state;
	assert_ok(doca_mmap_create(&mmap));
	assert_fails(doca_mmap_get_memrange(mmap, &addr, &len), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_mmap_set_memrange(NULL, region, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_set_memrange(mmap, NULL, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_set_memrange(mmap, region, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_set_memrange(mmap, region, SIZE_MAX), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_set_memrange(mmap, (void *)(UINTPTR_MAX - 10), 11), DOCA_ERROR_INVALID_VALUE);

	/* The highest range that does not wrap is accepted (never touched). */
	assert_ok(doca_mmap_set_memrange(mmap, (void *)(UINTPTR_MAX - 10), 10));
	assert_ok(doca_mmap_get_memrange(mmap, &addr, &len));
	assert_ptr_equal(addr, (void *)(UINTPTR_MAX - 10));
	assert_int_equal(len, 10);
	/* Once only. */
	assert_fails(doca_mmap_set_memrange(mmap, region, sizeof(region)), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_get_memrange(mmap, NULL, &len), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_get_memrange(mmap, &addr, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_devices(void **state)
{
	struct doca_mmap *mmap = NULL;
	uint32_t n;

	REQUIRE_TWO_DEVICES();

	(void)state;
	assert_ok(doca_mmap_create(&mmap));
	assert_fails(doca_mmap_add_dev(mmap, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_add_dev(NULL, dev_a()), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_rm_dev(mmap, dev_a()), DOCA_ERROR_NOT_FOUND);
	assert_ok(doca_mmap_add_dev(mmap, dev_a()));
	assert_fails(doca_mmap_add_dev(mmap, dev_a()), DOCA_ERROR_ALREADY_EXIST);

	assert_fails(doca_mmap_set_max_num_devices(mmap, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_set_max_num_devices(mmap, 70000), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_set_max_num_devices(mmap, 1));
	assert_fails(doca_mmap_add_dev(mmap, dev_b()), DOCA_ERROR_NO_MEMORY);
	assert_ok(doca_mmap_set_max_num_devices(mmap, 2));
	assert_ok(doca_mmap_get_max_num_devices(mmap, &n));
	assert_int_equal(n, 2);
	assert_ok(doca_mmap_add_dev(mmap, dev_b()));
	assert_fails(doca_mmap_set_max_num_devices(mmap, 1), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_rm_dev(mmap, dev_a()));
	assert_fails(doca_mmap_rm_dev(mmap, dev_a()), DOCA_ERROR_NOT_FOUND);
	assert_ok(doca_mmap_add_dev(mmap, dev_a()));
	assert_ok(doca_mmap_destroy(mmap));
}

static void *freed_addr;
static size_t freed_len;
static void *freed_cookie;
static int free_calls;

static void free_cb_record(void *addr, size_t len, void *cookie)
{
	freed_addr = addr;
	freed_len = len;
	freed_cookie = cookie;
	free_calls++;
}

static void test_free_cb(void **state)
{
	struct doca_mmap *mmap;
	int cookie;

	(void)state;
	/* Called at destroy of a started mmap with the range and cookie. */
	mmap = new_mmap(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	assert_fails(doca_mmap_set_free_cb(mmap, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_set_free_cb(mmap, free_cb_record, &cookie));
	assert_ok(doca_mmap_start(mmap));
	free_calls = 0;
	assert_ok(doca_mmap_destroy(mmap));
	assert_int_equal(free_calls, 1);
	assert_ptr_equal(freed_addr, region);
	assert_int_equal(freed_len, sizeof(region));
	assert_ptr_equal(freed_cookie, &cookie);

	/* Not called for an mmap that never started. */
	mmap = new_mmap(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	assert_ok(doca_mmap_set_free_cb(mmap, free_cb_record, &cookie));
	free_calls = 0;
	assert_ok(doca_mmap_destroy(mmap));
	assert_int_equal(free_calls, 0);
}

static void test_not_supported(void **state)
{
	struct doca_mmap *mmap = new_started_mmap(rdma_rw);
	const void *desc;
	size_t len;
	doca_dpa_dev_mmap_t handle;
	uint8_t cap = 7;

	(void)state;
	/* PCI export needs a PCI permission (test_mmap_pci covers the rest). */
	assert_fails(doca_mmap_export_pci(mmap, dev_a(), &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_dev_get_dpa_handle(mmap, dev_a(), &handle), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_mmap_set_dmabuf_memrange(mmap, 3, region, 0, 16), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_mmap_set_dpa_memrange(mmap, NULL, 0x1000, 16), DOCA_ERROR_NOT_SUPPORTED);
	if (dev_list != NULL && real_dev != NULL) {
		assert_ok(doca_mmap_cap_is_export_pci_supported(dev_list[0], &cap));
		assert_int_equal(cap, 1);
		cap = 7;
		assert_ok(doca_mmap_cap_is_create_from_export_pci_supported(dev_list[0], &cap));
		assert_int_equal(cap, 1);
	}
	assert_fails(doca_mmap_cap_is_export_pci_supported(NULL, &cap), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_destroy(mmap));
}

/* ---- bufs and destroy ------------------------------------------------------ */

static void test_destroy_with_bufs(void **state)
{
	struct doca_mmap *mmap = new_started_mmap(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *buf = NULL;
	uint32_t n;

	(void)state;
	assert_ok(doca_buf_inventory_create(4, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	assert_ok(doca_buf_inventory_buf_get_by_addr(inv, mmap, region, 64, &buf));
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 1);
	assert_fails(doca_mmap_stop(mmap), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_destroy(mmap), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_ok(doca_mmap_get_num_bufs(mmap, &n));
	assert_int_equal(n, 0);
	assert_ok(doca_mmap_stop(mmap));
	assert_ok(doca_mmap_destroy(mmap));
	assert_ok(doca_buf_inventory_destroy(inv));
}

static void test_thread_safe_destroy(void **state)
{
	struct doca_mmap *mmap = new_mmap(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *buf = NULL;

	(void)state;
	assert_ok(doca_mmap_enable_thread_safety(mmap));
	assert_ok(doca_mmap_start(mmap));
	assert_ok(doca_buf_inventory_create(2, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, mmap, region, 8, &buf));
	/* DOCA lets a thread-safe mmap go while bufs are out; the object
	 * lives on until the last buf returns (ASan checks the rest). */
	assert_ok(doca_mmap_destroy(mmap));
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_ok(doca_buf_inventory_destroy(inv));
}

/* ---- export ---------------------------------------------------------------- */

static void test_export_rules(void **state)
{
	struct doca_mmap *mmap = new_mmap(DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	const void *desc = NULL, *again = NULL;
	size_t len = 0, len2 = 0;
	uint8_t exported;

	REQUIRE_TWO_DEVICES();

	(void)state;
	assert_fails(doca_mmap_export_rdma(mmap, dev_a(), &desc, &len), DOCA_ERROR_NOT_PERMITTED); /* unstarted */
	assert_ok(doca_mmap_start(mmap));
	assert_fails(doca_mmap_export_rdma(mmap, dev_a(), &desc, &len), DOCA_ERROR_NOT_PERMITTED); /* no RDMA */
	assert_ok(doca_mmap_stop(mmap));
	assert_ok(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_RDMA_WRITE));
	assert_ok(doca_mmap_start(mmap));
	assert_fails(doca_mmap_export_rdma(mmap, dev_b(), &desc, &len), DOCA_ERROR_NOT_FOUND);
	assert_fails(doca_mmap_export_rdma(mmap, NULL, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_export_rdma(mmap, dev_a(), NULL, &len), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_export_rdma(mmap, dev_a(), &desc, NULL), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_mmap_export_rdma(mmap, dev_a(), &desc, &len));
	assert_non_null(desc);
	assert_int_equal(len, SOFTDOCA_MMAP_DESC_LEN);
	assert_ok(doca_mmap_get_exported(mmap, &exported));
	assert_int_equal(exported, 1);
	/* The wire format: magic, version 1, total length, little-endian. */
	assert_memory_equal(desc, "SDMM\x01\x00\x00\x00\x48\x00\x00\x00", 12);

	/* Exporting twice hands out the same descriptor. */
	assert_ok(doca_mmap_export_rdma(mmap, dev_a(), &again, &len2));
	assert_ptr_equal(again, desc);
	assert_int_equal(len2, len);

	assert_ok(doca_mmap_stop(mmap));
	assert_ok(doca_mmap_get_exported(mmap, &exported));
	assert_int_equal(exported, 0);
	assert_ok(doca_mmap_destroy(mmap));
}

static void test_round_trip(void **state)
{
	uint8_t desc[SOFTDOCA_MMAP_DESC_LEN];
	struct doca_mmap *local = exported_mmap(desc);
	struct doca_mmap *remote = NULL;
	struct softdoca_mmap_desc info;
	union doca_data ud = {.u64 = 0xfeed};
	const void *d;
	void *addr = NULL;
	size_t len = 0;
	uint8_t flag = 0;
	uint32_t pid;
	uint64_t nonce;

	REQUIRE_TWO_DEVICES();

	(void)state;
	assert_ok(doca_mmap_create_from_export(&ud, desc, sizeof(desc), dev_a(), &remote));
	assert_non_null(remote);
	assert_ok(doca_mmap_get_memrange(remote, &addr, &len));
	assert_ptr_equal(addr, region);
	assert_int_equal(len, sizeof(region));
	assert_ok(doca_mmap_get_from_export(remote, &flag));
	assert_int_equal(flag, 1);
	ud.u64 = 0;
	assert_ok(doca_mmap_get_user_data(remote, &ud));
	assert_int_equal(ud.u64, 0xfeed);

	assert_ok(softdoca_mmap_remote_info(remote, &info));
	assert_int_equal(info.version, 1);
	assert_int_equal(info.permissions, rdma_rw);
	assert_int_equal(info.addr, (uintptr_t)region);
	assert_int_equal(info.len, sizeof(region));
	assert_int_equal(info.region_id, get_le64(desc + 16));
	assert_memory_equal(info.secret, desc + 24, SOFTDOCA_MMAP_SECRET_LEN);
	assert_ok(softdoca_mmap_process_identity(&pid, &nonce));
	assert_int_equal(info.pid, (uint32_t)getpid());
	assert_int_equal(info.pid, pid);
	assert_int_equal(info.process_nonce, nonce);
	assert_fails(softdoca_mmap_remote_info(local, &info), DOCA_ERROR_INVALID_VALUE);

	/* A from-export mmap is started and frozen. */
	assert_fails(doca_mmap_start(remote), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_mmap_set_permissions(remote, DOCA_ACCESS_FLAG_RDMA_READ), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_mmap_add_dev(remote, dev_b()), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_export_rdma(remote, dev_a(), &d, &len), DOCA_ERROR_NOT_PERMITTED);

	/* Stop, then only destroy. */
	assert_ok(doca_mmap_stop(remote));
	assert_fails(softdoca_mmap_remote_info(remote, &info), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_mmap_start(remote), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_mmap_set_permissions(remote, DOCA_ACCESS_FLAG_RDMA_READ), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_mmap_destroy(remote));

	/* NULL user_data is allowed; destroy without stop too. */
	assert_ok(doca_mmap_create_from_export(NULL, desc, sizeof(desc), dev_a(), &remote));
	assert_ok(doca_mmap_destroy(remote));

	assert_fails(doca_mmap_create_from_export(NULL, desc, sizeof(desc), NULL, &remote), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_create_from_export(NULL, desc, sizeof(desc), dev_a(), NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_destroy(local));
}

static void test_remote_bufs(void **state)
{
	uint8_t desc[SOFTDOCA_MMAP_DESC_LEN];
	struct doca_mmap *local = exported_mmap(desc);
	struct doca_mmap *remote = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *buf = NULL;
	void *head = NULL;

	(void)state;
	/* Pretend the exporter lives elsewhere: an address range that is not
	 * mapped here. Bufs take it as numbers and never touch it. */
	put_le64(desc + 40, 0x7f0000000000ull);
	assert_ok(doca_mmap_create_from_export(NULL, desc, sizeof(desc), dev_a(), &remote));
	assert_ok(doca_buf_inventory_create(2, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	assert_ok(doca_buf_inventory_buf_get_by_addr(inv, remote, (void *)0x7f0000000100ull, 64, &buf));
	assert_ok(doca_buf_get_head(buf, &head));
	assert_ptr_equal(head, (void *)0x7f0000000100ull);
	assert_ok(doca_buf_set_data(buf, (void *)0x7f0000000110ull, 16));
	assert_ok(doca_buf_set_data_len(buf, 48));
	assert_ptr_equal(softdoca_buf_get_mmap(buf), remote);
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, remote, region, 64, &buf), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_mmap_stop(remote), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_ok(doca_mmap_stop(remote));
	/* A stopped remote mmap gives no more bufs. */
	assert_fails(doca_buf_inventory_buf_get_by_addr(inv, remote, (void *)0x7f0000000100ull, 64, &buf),
		     DOCA_ERROR_BAD_STATE);
	assert_ok(doca_mmap_destroy(remote));
	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(local));
}

/* An mmap created from an export is born started, yet takes thread safety
 * until its first buf (NVIDIA's storage application does this), and then
 * may go while a buf is out. A local started mmap still refuses. */
static void test_thread_safe_from_export(void **state)
{
	uint8_t desc[SOFTDOCA_MMAP_DESC_LEN];
	struct doca_mmap *local = exported_mmap(desc);
	struct doca_mmap *remote = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *buf = NULL;

	(void)state;
	assert_fails(doca_mmap_enable_thread_safety(local), DOCA_ERROR_NOT_PERMITTED);
	put_le64(desc + 40, 0x7f0000000000ull);
	assert_ok(doca_mmap_create_from_export(NULL, desc, sizeof(desc), dev_a(), &remote));
	assert_ok(doca_buf_inventory_create(2, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	assert_ok(doca_buf_inventory_buf_get_by_addr(inv, remote, (void *)0x7f0000000100ull, 64, &buf));
	assert_fails(doca_mmap_enable_thread_safety(remote), DOCA_ERROR_NOT_PERMITTED);
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_ok(doca_mmap_enable_thread_safety(remote));
	assert_ok(doca_buf_inventory_buf_get_by_addr(inv, remote, (void *)0x7f0000000100ull, 64, &buf));
	assert_ok(doca_mmap_destroy(remote));
	assert_ok(doca_buf_dec_refcount(buf, NULL));
	assert_ok(doca_buf_inventory_destroy(inv));
	assert_ok(doca_mmap_destroy(local));
}

/* ---- malformed descriptors --------------------------------------------------- */

static void test_desc_truncated(void **state)
{
	uint8_t desc[SOFTDOCA_MMAP_DESC_LEN + 8];
	struct doca_mmap *local = exported_mmap(desc);

	(void)state;
	for (size_t len = 0; len < SOFTDOCA_MMAP_DESC_LEN; len++)
		assert_desc_rejected(desc, len, DOCA_ERROR_INVALID_VALUE);
	/* Trailing bytes: the length field no longer matches. */
	memset(desc + SOFTDOCA_MMAP_DESC_LEN, 0, 8);
	assert_desc_rejected(desc, sizeof(desc), DOCA_ERROR_INVALID_VALUE);
	/* ... nor when the length field claims them. */
	put_le32(desc + 8, sizeof(desc));
	assert_desc_rejected(desc, sizeof(desc), DOCA_ERROR_INVALID_VALUE);
	assert_desc_rejected(NULL, SOFTDOCA_MMAP_DESC_LEN, DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_mmap_destroy(local));
}

/* Copy the good descriptor, apply one change, expect code. */
#define MUTATE(code, stmt) \
	do { \
		uint8_t m[SOFTDOCA_MMAP_DESC_LEN]; \
		memcpy(m, good, sizeof(m)); \
		stmt; \
		assert_desc_rejected(m, sizeof(m), code); \
	} while (0)

static void test_desc_fields(void **state)
{
	uint8_t good[SOFTDOCA_MMAP_DESC_LEN];
	struct doca_mmap *local = exported_mmap(good);
	struct softdoca_mmap_desc parsed;

	(void)state;
	assert_ok(softdoca_mmap_desc_parse(good, sizeof(good), &parsed));
	for (int i = 0; i < 4; i++)
		MUTATE(DOCA_ERROR_INVALID_VALUE, m[i] ^= 0x20);
	MUTATE(DOCA_ERROR_INVALID_VALUE, m[4] = 0);			/* version 0 */
	MUTATE(DOCA_ERROR_UNSUPPORTED_VERSION, m[4] = 2);		/* newer */
	MUTATE(DOCA_ERROR_UNSUPPORTED_VERSION, m[4] = 0xff; m[5] = 0xff);
	MUTATE(DOCA_ERROR_INVALID_VALUE, m[6] = 1);			/* flags */
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le32(m + 8, 71));		/* length field */
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le32(m + 8, 0xffffffff));
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le32(m + 12, rdma_rw | 0x80)); /* unknown bit */
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le32(m + 12, 0x80000000u | DOCA_ACCESS_FLAG_RDMA_READ));
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le32(m + 12, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE)); /* no RDMA */
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le64(m + 16, 0));		/* region id */
	MUTATE(DOCA_ERROR_INVALID_VALUE, memset(m + 24, 0, 16));	/* secret */
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le64(m + 40, 0));		/* address */
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le64(m + 48, 0));		/* length */
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le64(m + 40, UINT64_MAX - 100); put_le64(m + 48, 101));
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le64(m + 48, UINT64_MAX));
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le32(m + 56, 0));		/* pid */
	MUTATE(DOCA_ERROR_INVALID_VALUE, put_le32(m + 56, 0x80000000u));
	MUTATE(DOCA_ERROR_INVALID_VALUE, m[60] = 1);			/* reserved */
	assert_ok(doca_mmap_destroy(local));
}

/* Every single-bit flip either parses to a self-consistent result or is
 * refused with a logged error; random garbage likewise (ASan/UBSan watch
 * for stray reads). */
static void test_desc_bit_flips(void **state)
{
	uint8_t good[SOFTDOCA_MMAP_DESC_LEN], m[SOFTDOCA_MMAP_DESC_LEN];
	struct doca_mmap *local = exported_mmap(good);
	struct softdoca_mmap_desc parsed;
	unsigned int seed = 12345;

	(void)state;
	for (size_t bit = 0; bit < sizeof(good) * 8; bit++) {
		int before = error_lines;
		doca_error_t err;

		memcpy(m, good, sizeof(m));
		m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		err = softdoca_mmap_desc_parse(m, sizeof(m), &parsed);
		if (err == DOCA_SUCCESS) {
			assert_int_not_equal(parsed.len, 0);
			assert_true(parsed.len <= UINT64_MAX - parsed.addr);
			assert_int_equal(parsed.permissions & ~0x7fu, 0);
		} else {
			assert_true(err == DOCA_ERROR_INVALID_VALUE || err == DOCA_ERROR_UNSUPPORTED_VERSION);
			assert_true(error_lines > before);
		}
	}
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)rand_r(&seed) % (sizeof(m) + 1);

		for (size_t i = 0; i < len; i++)
			m[i] = (uint8_t)rand_r(&seed);
		if (round % 2 == 0 && len >= 12) /* give the header a chance */
			memcpy(m, good, 12), put_le32(m + 8, (uint32_t)len);
		(void)softdoca_mmap_desc_parse(m, len, &parsed);
	}
	assert_ok(doca_mmap_destroy(local));
}

/* ---- region table and revocation ------------------------------------------------ */

static void test_region_lookup(void **state)
{
	uint8_t desc[SOFTDOCA_MMAP_DESC_LEN];
	struct doca_mmap *local = exported_mmap(desc);
	struct softdoca_mmap_region reg = {0};
	uint8_t bad_secret[SOFTDOCA_MMAP_SECRET_LEN];
	uint64_t id = get_le64(desc + 16);
	const void *again;
	size_t len;
	void *ptr = NULL;

	(void)state;
	assert_ok(softdoca_mmap_region_lookup(id, desc + 24, &reg));
	assert_ptr_equal(reg.mmap, local);
	assert_int_equal(reg.addr, (uintptr_t)region);
	assert_int_equal(reg.len, sizeof(region));
	assert_int_equal(reg.permissions, rdma_rw);

	/* Bounds and permissions. */
	assert_ok(softdoca_mmap_region_check(&reg, (uintptr_t)region + 100, 8, DOCA_ACCESS_FLAG_RDMA_WRITE, &ptr));
	assert_ptr_equal(ptr, region + 100);
	assert_ok(softdoca_mmap_region_check(&reg, (uintptr_t)region, sizeof(region), DOCA_ACCESS_FLAG_RDMA_READ,
					     &ptr));
	assert_fails(softdoca_mmap_region_check(&reg, (uintptr_t)region + 1, sizeof(region), 0, &ptr),
		     DOCA_ERROR_INVALID_VALUE);
	assert_fails(softdoca_mmap_region_check(&reg, (uintptr_t)region - 1, 1, 0, &ptr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(softdoca_mmap_region_check(&reg, (uintptr_t)region + 8, UINT64_MAX, 0, &ptr),
		     DOCA_ERROR_INVALID_VALUE);
	assert_fails(softdoca_mmap_region_check(&reg, UINT64_MAX, 2, 0, &ptr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(softdoca_mmap_region_check(&reg, (uintptr_t)region, 8, DOCA_ACCESS_FLAG_RDMA_ATOMIC, &ptr),
		     DOCA_ERROR_NOT_PERMITTED);
	softdoca_mmap_region_release(&reg);
	softdoca_mmap_region_release(&reg); /* second release is a no-op */
	assert_fails(softdoca_mmap_region_check(&reg, (uintptr_t)region, 8, 0, &ptr), DOCA_ERROR_INVALID_VALUE);

	memcpy(bad_secret, desc + 24, sizeof(bad_secret));
	bad_secret[15] ^= 1;
	assert_fails(softdoca_mmap_region_lookup(id, bad_secret, &reg), DOCA_ERROR_AUTHENTICATION);
	assert_fails(softdoca_mmap_region_lookup(id + 1000000, desc + 24, &reg), DOCA_ERROR_NOT_FOUND);
	assert_fails(softdoca_mmap_region_lookup(id, NULL, &reg), DOCA_ERROR_INVALID_VALUE);

	/* Stop revokes; a new export after restart is a new region. */
	assert_ok(doca_mmap_stop(local));
	assert_fails(softdoca_mmap_region_lookup(id, desc + 24, &reg), DOCA_ERROR_NOT_FOUND);
	assert_ok(doca_mmap_start(local));
	assert_fails(softdoca_mmap_region_lookup(id, desc + 24, &reg), DOCA_ERROR_NOT_FOUND);
	assert_ok(doca_mmap_export_rdma(local, dev_a(), &again, &len));
	assert_int_not_equal(get_le64((const uint8_t *)again + 16), id);
	assert_memory_not_equal((const uint8_t *)again + 24, desc + 24, SOFTDOCA_MMAP_SECRET_LEN);
	assert_fails(softdoca_mmap_region_lookup(id, desc + 24, &reg), DOCA_ERROR_NOT_FOUND);
	id = get_le64((const uint8_t *)again + 16);
	assert_ok(softdoca_mmap_region_lookup(id, (const uint8_t *)again + 24, &reg));
	softdoca_mmap_region_release(&reg);

	/* Destroy revokes too. */
	assert_ok(doca_mmap_destroy(local));
	assert_fails(softdoca_mmap_region_lookup(id, desc + 24, &reg), DOCA_ERROR_NOT_FOUND);
}

static atomic_int stop_returned;

static void *stop_thread(void *arg)
{
	assert_int_equal(doca_mmap_stop(arg), DOCA_SUCCESS);
	atomic_store(&stop_returned, 1);
	return NULL;
}

/* Stop waits until no remote operation holds the region. */
static void test_revoke_waits_for_holders(void **state)
{
	uint8_t desc[SOFTDOCA_MMAP_DESC_LEN];
	struct doca_mmap *local = exported_mmap(desc);
	struct softdoca_mmap_region reg;
	struct timespec pause = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
	pthread_t thread;

	(void)state;
	assert_ok(softdoca_mmap_region_lookup(get_le64(desc + 16), desc + 24, &reg));
	atomic_store(&stop_returned, 0);
	assert_int_equal(pthread_create(&thread, NULL, stop_thread, local), 0);
	nanosleep(&pause, NULL);
	assert_int_equal(atomic_load(&stop_returned), 0);
	/* Already unreachable for new lookups while it drains. */
	assert_fails(softdoca_mmap_region_lookup(get_le64(desc + 16), desc + 24, &(struct softdoca_mmap_region){0}),
		     DOCA_ERROR_NOT_FOUND);
	softdoca_mmap_region_release(&reg);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(atomic_load(&stop_returned), 1);
	assert_ok(doca_mmap_destroy(local));
}

/* One name per permission bit, for the engine's and the RDMA layer's log
 * lines; anything else is not mistaken for one flag. */
static void test_access_flag_names(void **state)
{
	(void)state;
	assert_string_equal(softdoca_access_flag_name(DOCA_ACCESS_FLAG_RDMA_READ), "DOCA_ACCESS_FLAG_RDMA_READ");
	assert_string_equal(softdoca_access_flag_name(DOCA_ACCESS_FLAG_RDMA_WRITE), "DOCA_ACCESS_FLAG_RDMA_WRITE");
	assert_string_equal(softdoca_access_flag_name(DOCA_ACCESS_FLAG_RDMA_ATOMIC), "DOCA_ACCESS_FLAG_RDMA_ATOMIC");
	assert_null(strstr(softdoca_access_flag_name(DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE),
			   "RDMA_READ"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_destroy),
		cmocka_unit_test(test_start_requirements),
		cmocka_unit_test(test_config_after_start),
		cmocka_unit_test(test_permissions),
		cmocka_unit_test(test_memrange),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_free_cb),
		cmocka_unit_test(test_not_supported),
		cmocka_unit_test(test_destroy_with_bufs),
		cmocka_unit_test(test_thread_safe_destroy),
		cmocka_unit_test(test_export_rules),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_remote_bufs),
		cmocka_unit_test(test_thread_safe_from_export),
		cmocka_unit_test(test_desc_truncated),
		cmocka_unit_test(test_desc_fields),
		cmocka_unit_test(test_desc_bit_flips),
		cmocka_unit_test(test_region_lookup),
		cmocka_unit_test(test_revoke_waits_for_holders),
		cmocka_unit_test(test_access_flag_names),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
