/*
 * Unit tests of the DOCA RDMA context: creation, properties and their
 * rules, capabilities of a soft device, RDMA CM addresses, the calls that
 * are not implemented yet, export/connect, task configuration, allocation,
 * accessors and validation, and (through the soft NIC, two contexts of this
 * process talking over the loopback device) every data task end to end.
 *
 * Every failing call must leave an ERROR line in the SDK log; library
 * messages are captured with a buffer SDK backend (TEST_RDMA_VERBOSE=1 also
 * prints them). The fixture (device, PE, mmaps, sides A and B, callbacks)
 * is rdma_pair.c, shared with test_rdma_loopback.c.
 */
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_rdma_bridge.h>

#include "dev.h"
#include "rdma_pair.h"

/* ---- shared objects ------------------------------------------------------ */

#define MEM_SIZE 65536
#define NUM_TASKS 8

static struct doca_devinfo *devinfo;

/* Local memory: rw is readable and writable by peers; ro is local read-only. */
static _Alignas(64) char mem_rw[MEM_SIZE];
static _Alignas(64) char mem_ro[4096];
static _Alignas(64) char mem_rdonly_export[4096];
static struct doca_mmap *mmap_rw, *mmap_ro, *mmap_rdonly_export;
/* The same memory seen as a peer sees it: from-export mmaps. */
static struct doca_mmap *remote_rw, *remote_rdonly;

static int ok_calls, err_calls, done_calls;
static doca_error_t last_status;
static struct doca_task *last_task;

static int group_setup(void **state)
{
	(void)state;
	if (rdma_pair_setup() != 0)
		return -1;
	devinfo = doca_dev_as_devinfo(dev);
	mmap_rw = local_mmap(mem_rw, sizeof(mem_rw), ALL_RDMA_PERMS);
	mmap_ro = local_mmap(mem_ro, sizeof(mem_ro), DOCA_ACCESS_FLAG_LOCAL_READ_ONLY);
	mmap_rdonly_export = local_mmap(mem_rdonly_export, sizeof(mem_rdonly_export),
					DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ);
	remote_rw = remote_of(mmap_rw);
	remote_rdonly = remote_of(mmap_rdonly_export);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	assert_ok(doca_mmap_stop(remote_rw));
	assert_ok(doca_mmap_destroy(remote_rw));
	assert_ok(doca_mmap_stop(remote_rdonly));
	assert_ok(doca_mmap_destroy(remote_rdonly));
	assert_ok(doca_mmap_destroy(mmap_rw));
	assert_ok(doca_mmap_destroy(mmap_ro));
	assert_ok(doca_mmap_destroy(mmap_rdonly_export));
	rdma_pair_teardown();
	return 0;
}

/* ---- callbacks ------------------------------------------------------------- */

static uint64_t done_order[64]; /* task user data, in completion order */

void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	if (ok) {
		/* A success is a task of A or B. */
		assert_true(ctx_user_data.ptr == &A || ctx_user_data.ptr == &B);
		ok_calls++;
	} else {
		err_calls++;
	}
	if (done_calls < (int)(sizeof(done_order) / sizeof(done_order[0])))
		done_order[done_calls] = doca_task_get_user_data(task).u64;
	done_calls++;
	last_status = doca_task_get_status(task);
	last_task = task;
}

/* ---- contexts ---------------------------------------------------------------- */

static void side_configure_tasks(struct side *s)
{
	assert_ok(doca_rdma_set_permissions(s->rdma, ALL_RDMA_PERMS));
	side_conf_tasks(s, NUM_TASKS, false);
}

static int setup_idle(void **state)
{
	(void)state;
	ok_calls = err_calls = done_calls = 0;
	side_create(&A);
	return 0;
}

static int teardown_sides(void **state)
{
	(void)state;
	side_stop(&A);
	side_stop(&B);
	side_destroy(&A);
	side_destroy(&B);
	return 0;
}

/* A started with one exported, not yet connected, connection. */
static int setup_running(void **state)
{
	(void)state;
	ok_calls = err_calls = done_calls = 0;
	side_create(&A);
	side_configure_tasks(&A);
	assert_ok(doca_ctx_start(A.ctx));
	assert_int_equal(state_of(&A), DOCA_CTX_STATE_RUNNING);
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	return 0;
}

/* A and B connected to each other through the loopback device. */
static int setup_pair(void **state)
{
	(void)state;
	ok_calls = err_calls = done_calls = 0;
	side_create(&A);
	side_create(&B);
	side_configure_tasks(&A);
	side_configure_tasks(&B);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	pair_connect();
	return 0;
}

/* ---- create / destroy ------------------------------------------------------ */

static void test_create_destroy(void **state)
{
	struct doca_rdma *r;

	(void)state;
	assert_fails(doca_rdma_create(NULL, &r), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_create(dev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_rdma_as_ctx(NULL));
	assert_ok(doca_rdma_create(dev, &r));
	assert_non_null(doca_rdma_as_ctx(r));
	assert_ptr_equal(doca_rdma_as_ctx(r), doca_rdma_as_ctx(r));
	assert_ok(doca_rdma_destroy(r));
}

/* ---- properties ---------------------------------------------------------- */

static void test_property_defaults(void **state)
{
	struct doca_rdma *r = A.rdma;
	uint32_t u32;
	uint16_t u16;
	uint8_t u8;
	enum doca_rdma_transport_type tt;
	enum doca_mtu_size mtu;

	(void)state;
	assert_ok(doca_rdma_get_permissions(r, &u32));
	assert_int_equal(u32, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	assert_ok(doca_rdma_get_transport_type(r, &tt));
	assert_int_equal(tt, DOCA_RDMA_TRANSPORT_TYPE_RC);
	assert_ok(doca_rdma_get_max_num_connections(r, &u16));
	assert_int_equal(u16, 1);
	assert_ok(doca_rdma_get_send_queue_size(r, &u32));
	assert_true(u32 > 0 && (u32 & (u32 - 1)) == 0);
	assert_ok(doca_rdma_get_max_send_buf_list_len(r, &u32));
	assert_int_equal(u32, 1);
	assert_ok(doca_rdma_task_receive_get_dst_buf_list_len(r, &u32));
	assert_int_equal(u32, 1);
	assert_ok(doca_rdma_get_gid_index(r, &u32));
	assert_int_equal(u32, 0);
	assert_ok(doca_rdma_get_sl(r, &u32));
	assert_int_equal(u32, 0);
	assert_ok(doca_rdma_get_rnr_retry_count(r, &u8));
	assert_int_equal(u8, 7);
	assert_ok(doca_rdma_get_grh_enabled(r, &u8));
	assert_int_equal(u8, 1);
	assert_ok(doca_rdma_get_mtu(r, &mtu));
	assert_true(mtu <= DOCA_MTU_SIZE_4K_BYTES);
	assert_ok(doca_rdma_get_connection_request_timeout(r, &u16));
	assert_true(u16 > 0);
	assert_ok(doca_rdma_get_recv_queue_size(r, &u32));
	assert_int_equal(u32, 0); /* no receive pool configured yet */
}

static void test_property_roundtrip(void **state)
{
	struct doca_rdma *r = A.rdma;
	uint32_t u32;
	uint16_t u16;
	uint8_t u8;
	enum doca_rdma_transport_type tt;
	enum doca_mtu_size mtu;

	(void)state;
	assert_ok(doca_rdma_set_send_queue_size(r, 100));
	assert_ok(doca_rdma_get_send_queue_size(r, &u32));
	assert_int_equal(u32, 128); /* rounded up to a power of two */
	assert_ok(doca_rdma_set_send_queue_size(r, 1));
	assert_ok(doca_rdma_get_send_queue_size(r, &u32));
	assert_int_equal(u32, 1);
	assert_ok(doca_rdma_set_send_queue_size(r, 8192));
	assert_ok(doca_rdma_get_send_queue_size(r, &u32));
	assert_int_equal(u32, 8192);

	assert_ok(doca_rdma_set_max_send_buf_list_len(r, 5));
	assert_ok(doca_rdma_get_max_send_buf_list_len(r, &u32));
	assert_int_equal(u32, 5);
	assert_ok(doca_rdma_task_receive_set_dst_buf_list_len(r, 7));
	assert_ok(doca_rdma_task_receive_get_dst_buf_list_len(r, &u32));
	assert_int_equal(u32, 7);

	assert_ok(doca_rdma_set_transport_type(r, DOCA_RDMA_TRANSPORT_TYPE_DC));
	assert_ok(doca_rdma_get_transport_type(r, &tt));
	assert_int_equal(tt, DOCA_RDMA_TRANSPORT_TYPE_DC);

	assert_ok(doca_rdma_set_mtu(r, DOCA_MTU_SIZE_4K_BYTES));
	assert_ok(doca_rdma_get_mtu(r, &mtu));
	assert_int_equal(mtu, DOCA_MTU_SIZE_4K_BYTES);

	/* The requester samples set LOCAL_READ_WRITE alone. */
	assert_ok(doca_rdma_set_permissions(r, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	assert_ok(doca_rdma_get_permissions(r, &u32));
	assert_int_equal(u32, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	assert_ok(doca_rdma_set_permissions(r, DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_ATOMIC));
	assert_ok(doca_rdma_get_permissions(r, &u32));
	assert_int_equal(u32, DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_ATOMIC);

	assert_ok(doca_rdma_set_grh_enabled(r, 0));
	assert_ok(doca_rdma_get_grh_enabled(r, &u8));
	assert_int_equal(u8, 0);

	assert_ok(doca_rdma_set_gid_index(r, softdoca_devinfo_gid_count(devinfo) - 1));
	assert_ok(doca_rdma_get_gid_index(r, &u32));
	assert_int_equal(u32, softdoca_devinfo_gid_count(devinfo) - 1);

	assert_ok(doca_rdma_set_sl(r, 15));
	assert_ok(doca_rdma_get_sl(r, &u32));
	assert_int_equal(u32, 15);

	assert_ok(doca_rdma_set_connection_request_timeout(r, 1234));
	assert_ok(doca_rdma_get_connection_request_timeout(r, &u16));
	assert_int_equal(u16, 1234);

	assert_ok(doca_rdma_set_max_num_connections(r, 8));
	assert_ok(doca_rdma_get_max_num_connections(r, &u16));
	assert_int_equal(u16, 8);

	assert_ok(doca_rdma_set_rnr_retry_count(r, 3));
	assert_ok(doca_rdma_get_rnr_retry_count(r, &u8));
	assert_int_equal(u8, 3);

	assert_ok(doca_rdma_task_receive_set_conf(r, on_ok_receive, on_err_receive, 32));
	assert_ok(doca_rdma_get_recv_queue_size(r, &u32));
	assert_int_equal(u32, 32);
}

static void test_property_bad_values(void **state)
{
	struct doca_rdma *r = A.rdma;
	uint32_t u32;
	uint16_t u16;

	(void)state;
	assert_fails(doca_rdma_set_send_queue_size(r, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_send_queue_size(r, 8193), DOCA_ERROR_NOT_SUPPORTED);
	{
		/* DOCA documents this answer on the CPU datapath: a WARNING. */
		int errors = error_lines, warnings = warning_lines;

		assert_int_equal(doca_rdma_set_recv_queue_size(r, 64), DOCA_ERROR_NOT_SUPPORTED);
		assert_int_equal(error_lines, errors);
		assert_true(warning_lines > warnings);
	}
	assert_fails(doca_rdma_set_max_send_buf_list_len(r, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_max_send_buf_list_len(r, 33), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_task_receive_set_dst_buf_list_len(r, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_task_receive_set_dst_buf_list_len(r, 33), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_transport_type(r, (enum doca_rdma_transport_type)7), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_mtu(r, DOCA_MTU_SIZE_RAW_ETHERNET), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_mtu(r, (enum doca_mtu_size)42), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_permissions(r, DOCA_ACCESS_FLAG_PCI_READ_WRITE), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_permissions(r, 0x100), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_grh_enabled(r, 2), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_gid_index(r, softdoca_devinfo_gid_count(devinfo)), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_sl(r, 16), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_connection_request_timeout(r, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_max_num_connections(r, 0), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_set_max_num_connections(r, 60000), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_rnr_retry_count(r, 8), DOCA_ERROR_INVALID_VALUE);
	/* Rejected values leave the old ones. */
	assert_ok(doca_rdma_get_max_num_connections(r, &u16));
	assert_int_equal(u16, 1);
	assert_ok(doca_rdma_get_sl(r, &u32));
	assert_int_equal(u32, 0);
	/* NULL arguments. */
	assert_fails(doca_rdma_set_sl(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_permissions(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_get_sl(r, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_get_sl(NULL, &u32), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_get_permissions(r, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_get_max_num_connections(NULL, &u16), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_set_connection_state_callbacks(r, NULL, NULL, on_failure, on_disconnect),
		     DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_rdma_set_connection_state_callbacks(r, NULL, on_established, on_failure, on_disconnect));
}

/* Every setter: BAD_STATE while running, fine again once stopped. */
static void test_setters_only_while_idle(void **state)
{
	struct doca_rdma *r = A.rdma;
	uint32_t u32;

	(void)state;
	assert_fails(doca_rdma_set_send_queue_size(r, 64), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_recv_queue_size(r, 64), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_max_send_buf_list_len(r, 2), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_transport_type(r, DOCA_RDMA_TRANSPORT_TYPE_RC), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_mtu(r, DOCA_MTU_SIZE_1K_BYTES), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_permissions(r, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_grh_enabled(r, 1), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_gid_index(r, 0), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_sl(r, 1), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_connection_request_timeout(r, 100), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_max_num_connections(r, 2), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_rnr_retry_count(r, 1), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_task_receive_set_dst_buf_list_len(r, 2), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_task_send_set_conf(r, on_ok_send, on_err_send, 4), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_set_connection_state_callbacks(r, NULL, on_established, on_failure, on_disconnect),
		     DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_destroy(r), DOCA_ERROR_BAD_STATE);
	/* Getters work any time. */
	assert_ok(doca_rdma_get_sl(r, &u32));

	side_stop(&A);
	assert_ok(doca_rdma_set_sl(r, 3));
	assert_ok(doca_rdma_set_max_num_connections(r, 2));
	assert_ok(doca_rdma_task_send_set_conf(r, on_ok_send, on_err_send, 4));
}

/* ---- capabilities ------------------------------------------------------- */

static void test_caps(void **state)
{
	struct doca_rdma_gid gids[8];
	uint8_t raw[DOCA_GID_BYTE_LENGTH];
	uint32_t v, count;

	(void)state;
	assert_ok(doca_rdma_cap_get_max_send_queue_size(devinfo, &v));
	assert_int_equal(v, 8192);
	assert_ok(doca_rdma_cap_get_max_recv_queue_size(devinfo, &v));
	assert_int_equal(v, 8192);
	assert_ok(doca_rdma_cap_get_max_send_buf_list_len(devinfo, &v));
	assert_int_equal(v, 32);
	assert_ok(doca_rdma_cap_get_max_message_size(devinfo, &v));
	assert_int_equal(v, 1u << 30);
	assert_ok(doca_rdma_cap_task_receive_get_max_dst_buf_list_len(devinfo, DOCA_RDMA_TRANSPORT_TYPE_RC, &v));
	assert_int_equal(v, 32);

	assert_ok(doca_rdma_cap_get_gid_table_size(devinfo, &count));
	assert_int_equal(count, softdoca_devinfo_gid_count(devinfo));
	assert_true(count >= 1 && count <= 8);
	assert_ok(doca_rdma_cap_get_gid(devinfo, 0, count, gids));
	for (v = 0; v < count; v++) {
		assert_ok(softdoca_devinfo_gid(devinfo, v, raw));
		assert_memory_equal(gids[v].raw, raw, DOCA_GID_BYTE_LENGTH);
	}
	assert_fails(doca_rdma_cap_get_gid(devinfo, count, 1, gids), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_cap_get_gid(devinfo, 0, count + 1, gids), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_cap_get_gid(devinfo, UINT32_MAX, 2, gids), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_cap_get_gid(devinfo, 0, 1, NULL), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_rdma_cap_transport_type_is_supported(devinfo, DOCA_RDMA_TRANSPORT_TYPE_RC));
	assert_ok(doca_rdma_cap_transport_type_is_supported(devinfo, DOCA_RDMA_TRANSPORT_TYPE_DC));
	assert_fails(doca_rdma_cap_transport_type_is_supported(devinfo, (enum doca_rdma_transport_type)3),
		     DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_rdma_cap_task_receive_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_send_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_send_imm_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_read_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_write_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_write_imm_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_atomic_cmp_swp_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_atomic_fetch_add_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_remote_net_sync_event_get_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_remote_net_sync_event_notify_set_is_supported(devinfo));
	assert_ok(doca_rdma_cap_task_remote_net_sync_event_notify_add_is_supported(devinfo));

	assert_fails(doca_rdma_cap_get_max_message_size(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_cap_get_max_message_size(devinfo, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_cap_task_send_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);
}

/* ---- RDMA CM addresses and calls not implemented yet ------------------------ */

static void check_addr(enum doca_rdma_addr_type type, const char *text, uint16_t port)
{
	struct doca_rdma_addr *addr = NULL;
	enum doca_rdma_addr_type got_type;
	const char *got_text;
	uint16_t got_port;

	assert_ok(doca_rdma_addr_create(type, text, port, &addr));
	assert_non_null(addr);
	assert_ok(doca_rdma_addr_get_params(addr, &got_type, &got_text, &got_port));
	assert_int_equal(got_type, type);
	assert_string_equal(got_text, text);
	assert_int_equal(got_port, port);
	assert_ok(doca_rdma_addr_destroy(addr));
}

static void test_addr_good(void **state)
{
	(void)state;
	check_addr(DOCA_RDMA_ADDR_TYPE_IPv4, "192.168.1.10", 13579);
	check_addr(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", 0);
	check_addr(DOCA_RDMA_ADDR_TYPE_IPv6, "fe80::1", 1);
	check_addr(DOCA_RDMA_ADDR_TYPE_IPv6, "::1", 65535);
	check_addr(DOCA_RDMA_ADDR_TYPE_IPv6, "fe80::1%lo", 7);
	check_addr(DOCA_RDMA_ADDR_TYPE_GID, "::ffff:192.0.2.1", 13579);
	check_addr(DOCA_RDMA_ADDR_TYPE_GID, "fe80:0000:0000:0000:0202:c9ff:fe00:0001", 13579);
}

static void test_addr_malformed(void **state)
{
	struct doca_rdma_addr *addr = NULL;
	char long_text[200];
	enum doca_rdma_addr_type t;
	const char *s;
	uint16_t p;

	(void)state;
	memset(long_text, '1', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "300.1.1.1", 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "1.2.3", 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "::1", 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "", 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "host.example", 1, &addr),
		     DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv6, "1::2::3", 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv6, "10.0.0.1", 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_GID, "zz::1", 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_GID, "fe80::1%lo", 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_GID, long_text, 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create((enum doca_rdma_addr_type)9, "1.2.3.4", 1, &addr),
		     DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, NULL, 1, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "1.2.3.4", 1, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_null(addr); /* untouched by every failure */
	assert_fails(doca_rdma_addr_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_addr_get_params(NULL, &t, &s, &p), DOCA_ERROR_INVALID_VALUE);
}

static void test_cm_rules_and_not_supported_calls(void **state)
{
	struct doca_rdma_addr *addr;
	struct doca_rdma_connection *conn = NULL;
	struct ibv_pd *pd = NULL;
	struct doca_dev *d = NULL;
	struct doca_gpu_dev_rdma *gpu = NULL;
	doca_dpa_dev_rdma_t dpa;
	union doca_data ud = {.u64 = 0};
	uint32_t mkey;

	(void)state;
	assert_ok(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, "127.0.0.1", 13579, &addr));
	/* RDMA CM needs a running context and a real connection request. */
	assert_fails(doca_rdma_start_listen_to_port(A.rdma, 13579), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_stop_listen_to_port(A.rdma, 13579), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_connect_to_addr(A.rdma, addr, ud), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_connection_accept(conn, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_connection_reject(conn), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_connection_get_addr(conn, &addr), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_bridge_prepare_connection(A.rdma, NULL, &conn), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_bridge_accept(A.rdma, NULL, 0, conn), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_bridge_established(A.rdma, conn), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_bridge_get_dev_pd(dev, &pd), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_bridge_open_dev_from_pd(pd, &d), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_bridge_get_buf_mkey(NULL, dev, &mkey), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_bridge_get_mmap_mkey_from_pd(mmap_rw, pd, &mkey), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_get_dpa_handle(A.rdma, &dpa), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_get_gpu_handle(A.rdma, &gpu), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_rdma_dpa_completion_attach(A.rdma, NULL), DOCA_ERROR_NOT_SUPPORTED);
	assert_ok(doca_rdma_addr_destroy(addr));
}

/* ---- task configuration ---------------------------------------------------- */

static void test_set_conf_rules(void **state)
{
	struct doca_rdma *r = A.rdma;
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_remote_net_sync_event_get *sget;
	union doca_data ud = {.u64 = 0};

	(void)state;
	assert_fails(doca_rdma_task_send_set_conf(NULL, on_ok_send, on_err_send, 4), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_task_send_set_conf(r, NULL, on_err_send, 4), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_task_send_set_conf(r, on_ok_send, NULL, 4), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_task_send_set_conf(r, on_ok_send, on_err_send, 0), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_rdma_task_send_set_conf(r, on_ok_send, on_err_send, 4));
	assert_ok(doca_rdma_task_remote_net_sync_event_get_set_conf(r, on_ok_remote_net_sync_event_get,
								    on_err_remote_net_sync_event_get, 4));
	/* Before start there are no tasks and no connections. */
	assert_fails(doca_rdma_task_send_allocate_init(r, NULL, NULL, ud, &send), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_task_remote_net_sync_event_get_allocate_init(r, NULL, NULL, NULL, ud, &sget),
		     DOCA_ERROR_INVALID_VALUE);
}

/* ---- connections --------------------------------------------------------- */

static void test_export_needs_running(void **state)
{
	const void *desc;
	size_t len;
	struct doca_rdma_connection *conn;
	char blob[16] = {0};

	(void)state;
	assert_fails(doca_rdma_export(A.rdma, &desc, &len, &conn), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_rdma_export(NULL, &desc, &len, &conn), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_export(A.rdma, NULL, &len, &conn), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_export(A.rdma, &desc, &len, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_connect(A.rdma, blob, sizeof(blob), NULL), DOCA_ERROR_BAD_STATE);
}

static void test_export_connections(void **state)
{
	const void *d1, *d2, *d3;
	size_t l1, l2, l3;
	struct doca_rdma_connection *c1, *c2, *c3 = NULL;
	union doca_data ud = {.u64 = 77}, got;
	uint32_t id1, id2;

	(void)state;
	side_stop(&A);
	assert_ok(doca_rdma_set_max_num_connections(A.rdma, 2));
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_rdma_export(A.rdma, &d1, &l1, &c1));
	assert_ok(doca_rdma_export(A.rdma, &d2, &l2, &c2));
	assert_non_null(d1);
	assert_non_null(d2);
	assert_true(l1 > 0 && l2 > 0);
	assert_ptr_not_equal(c1, c2);
	assert_false(l1 == l2 && memcmp(d1, d2, l1) == 0);
	assert_ok(doca_rdma_connection_get_id(c1, &id1));
	assert_ok(doca_rdma_connection_get_id(c2, &id2));
	assert_int_not_equal(id1, id2);
	assert_fails(doca_rdma_export(A.rdma, &d3, &l3, &c3), DOCA_ERROR_FULL);
	assert_null(c3);

	assert_ok(doca_rdma_connection_set_user_data(c1, ud));
	assert_ok(doca_rdma_connection_get_user_data(c1, &got));
	assert_int_equal(got.u64, 77);
	assert_fails(doca_rdma_connection_set_user_data(NULL, ud), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_connection_get_user_data(c1, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_connection_get_id(NULL, &id1), DOCA_ERROR_INVALID_VALUE);

	assert_fails(doca_rdma_connect(A.rdma, NULL, 10, c1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_connect(A.rdma, d2, 0, c1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_connect(A.rdma, d2, l2, NULL), DOCA_ERROR_INVALID_VALUE);
	/* A descriptor cut short is refused by the engine's parser. */
	assert_int_not_equal(doca_rdma_connect(A.rdma, d2, l2 / 2, c1), DOCA_SUCCESS);

	/* A connection of another context is refused. */
	side_create(&B);
	side_configure_tasks(&B);
	assert_ok(doca_ctx_start(B.ctx));
	assert_fails(doca_rdma_connect(B.rdma, d1, l1, c2), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_connection_disconnect(NULL), DOCA_ERROR_INVALID_VALUE);
}

/* The most connections a context can have is what doca_rdma_set_max_num_connections
 * accepts: RDMA_MAX_CONNECTIONS (src/rdma/rdma.h, 1024). One more is refused
 * there; at the limit, every connection can be exported and the next export
 * fails cleanly with DOCA_ERROR_FULL (DOCA's documented answer), leaving the
 * others usable. DOCA 3.x has no capability call for this limit. */
#define MAX_CONNECTIONS 1024u
static void test_max_connections_honoured(void **state)
{
	struct doca_rdma_connection *c, *extra = NULL;
	const void *d;
	size_t l;
	uint16_t got = 0;
	uint32_t id;

	(void)state;
	side_stop(&A);
	assert_fails(doca_rdma_set_max_num_connections(A.rdma, MAX_CONNECTIONS + 1), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_rdma_set_max_num_connections(A.rdma, MAX_CONNECTIONS));
	assert_ok(doca_rdma_get_max_num_connections(A.rdma, &got));
	assert_int_equal(got, MAX_CONNECTIONS);
	assert_ok(doca_rdma_set_send_queue_size(A.rdma, 1)); /* keeps 1024 send queues small */
	assert_ok(doca_ctx_start(A.ctx));
	for (uint32_t i = 0; i < MAX_CONNECTIONS; i++) {
		c = NULL;
		assert_ok(doca_rdma_export(A.rdma, &d, &l, &c));
		assert_non_null(c);
	}
	assert_fails(doca_rdma_export(A.rdma, &d, &l, &extra), DOCA_ERROR_FULL);
	assert_null(extra);
	/* the last one made is still a connection */
	assert_ok(doca_rdma_connection_get_id(c, &id));
}

/* On the CPU datapath the receive queue is the context's receive task
 * pool (doca_rdma_set_recv_queue_size is NOT_SUPPORTED there, as in DOCA
 * 3.x): its size is what get_recv_queue_size reports, and a receive past it
 * cannot be had (NO_MEMORY, the pool's normal back-pressure, explained by
 * one WARNING per task type and start: test_explain.c). */
static void test_receive_bound_is_the_pool(void **state)
{
	struct doca_rdma_task_receive *r1, *r2, *r3 = NULL;
	union doca_data ud = {.u64 = 0};
	uint32_t size = 0;

	(void)state;
	side_stop(&A);
	assert_ok(doca_rdma_task_receive_set_conf(A.rdma, on_ok_receive, on_err_receive, 2));
	assert_ok(doca_rdma_get_recv_queue_size(A.rdma, &size));
	assert_int_equal(size, 2);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_rdma_task_receive_allocate_init(A.rdma, NULL, ud, &r1));
	assert_ok(doca_rdma_task_receive_allocate_init(A.rdma, NULL, ud, &r2));
	assert_int_equal(doca_rdma_task_receive_allocate_init(A.rdma, NULL, ud, &r3), DOCA_ERROR_NO_MEMORY);
	assert_null(r3);
	doca_task_free(doca_rdma_task_receive_as_task(r2));
	assert_ok(doca_rdma_task_receive_allocate_init(A.rdma, NULL, ud, &r3));
	doca_task_free(doca_rdma_task_receive_as_task(r1));
	doca_task_free(doca_rdma_task_receive_as_task(r3));
}

static void test_connect_twice_and_disconnect(void **state)
{
	(void)state;
	assert_fails(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_rdma_connection_disconnect(A.conn));
	assert_ok(doca_rdma_connection_disconnect(A.conn)); /* again: harmless */
	assert_true(progress_until(&B.disconnected, 1));
	/* One closing callback per connection, however often it is closed. */
	assert_int_equal(B.disconnected, 1);
	assert_int_equal(B.failed, 0);
}

/* DC, both sides connect, the second after the first one's HELLO gave it
 * its endpoint (NVIDIA's multi-connection sample does this): the second
 * connect is accepted, and messages go both ways. */
static void test_dc_both_sides_connect(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem_rw, 64, 8);
	struct doca_buf *dst = buf_on(mmap_rw, mem_rw + 1024, 64, 0);
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_send *send;
	union doca_data ud = {.u64 = 0};

	(void)state;
	ok_calls = err_calls = done_calls = 0;
	side_create(&A);
	side_create(&B);
	assert_ok(doca_rdma_set_transport_type(A.rdma, DOCA_RDMA_TRANSPORT_TYPE_DC));
	assert_ok(doca_rdma_set_transport_type(B.rdma, DOCA_RDMA_TRANSPORT_TYPE_DC));
	side_configure_tasks(&A);
	side_configure_tasks(&B);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	assert_true(progress_until_up(B.conn)); /* A's HELLO reached B */
	assert_ok(doca_rdma_connect(B.rdma, A.desc, A.desc_len, B.conn));

	/* Submitted right after connect, as programs do: held until A is up. */
	memcpy(mem_rw, "DC both!", 8);
	recv = post_receive(&A, dst);
	assert_ok(doca_rdma_task_send_allocate_init(B.rdma, B.conn, src, ud, &send));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(send)));
	assert_true(progress_until(&ok_calls, 2));
	assert_int_equal(err_calls, 0);
	assert_memory_equal(mem_rw + 1024, "DC both!", 8);
	assert_true(progress_until_up(A.conn));
	/* Export/connect: up with no established callback on either side. */
	progress_rounds(20);
	assert_int_equal(A.established + B.established, 0);
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_send_as_task(send));
	put(src);
	put(dst);
}

/* What programs do (NVIDIA's samples): export, connect, submit at once,
 * with no wait for the connection. The tasks of both sides are held
 * until it is up and then carried; no established callback runs on
 * either side, as on hardware (it is RDMA CM's only). */
static void test_submit_right_after_connect(void **state)
{
	struct doca_buf *a_src = buf_on(mmap_rw, mem_rw, 64, 8);
	struct doca_buf *a_dst = buf_on(mmap_rw, mem_rw + 1024, 64, 0);
	struct doca_buf *b_src = buf_on(mmap_rw, mem_rw + 2048, 64, 8);
	struct doca_buf *b_dst = buf_on(mmap_rw, mem_rw + 3072, 64, 0);
	struct doca_rdma_task_receive *a_recv, *b_recv;
	struct doca_rdma_task_send *a_send, *b_send;
	union doca_data ud = {.u64 = 0};

	(void)state;
	ok_calls = err_calls = done_calls = 0;
	side_create(&A);
	side_create(&B);
	side_configure_tasks(&A);
	side_configure_tasks(&B);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	memcpy(mem_rw, "from A!!", 8);
	memcpy(mem_rw + 2048, "from B!!", 8);
	assert_ok(doca_rdma_connect(A.rdma, B.desc, B.desc_len, A.conn));
	assert_ok(doca_rdma_connect(B.rdma, A.desc, A.desc_len, B.conn));
	a_recv = post_receive(&A, a_dst);
	b_recv = post_receive(&B, b_dst);
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, a_src, ud, &a_send));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(a_send)));
	assert_ok(doca_rdma_task_send_allocate_init(B.rdma, B.conn, b_src, ud, &b_send));
	assert_ok(doca_task_submit(doca_rdma_task_send_as_task(b_send)));
	assert_true(progress_until(&ok_calls, 4));
	assert_int_equal(err_calls, 0);
	assert_memory_equal(mem_rw + 1024, "from B!!", 8);
	assert_memory_equal(mem_rw + 3072, "from A!!", 8);
	/* Up on both sides, and the callback never ran (it would fail this). */
	assert_true(progress_until_up(A.conn));
	assert_true(progress_until_up(B.conn));
	progress_rounds(20);
	assert_int_equal(A.established + B.established, 0);
	assert_int_equal(A.failed + B.failed + A.disconnected + B.disconnected, 0);
	doca_task_free(doca_rdma_task_receive_as_task(a_recv));
	doca_task_free(doca_rdma_task_receive_as_task(b_recv));
	doca_task_free(doca_rdma_task_send_as_task(a_send));
	doca_task_free(doca_rdma_task_send_as_task(b_send));
	put(a_src);
	put(a_dst);
	put(b_src);
	put(b_dst);
}

/* ---- tasks: allocation and accessors ----------------------------------------- */

static void test_task_alloc_and_accessors(void **state)
{
	struct doca_rdma *r = A.rdma;
	struct doca_rdma_connection *c = A.conn;
	struct doca_buf *b1 = buf_on(mmap_rw, mem_rw, 64, 8);
	struct doca_buf *b2 = buf_on(mmap_rw, mem_rw + 64, 64, 0);
	union doca_data ud = {.u64 = 5};
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_send_imm *simm;
	struct doca_rdma_task_read *rd;
	struct doca_rdma_task_write *wr;
	struct doca_rdma_task_write_imm *wimm;
	struct doca_rdma_task_atomic_cmp_swp *cas;
	struct doca_rdma_task_atomic_fetch_add *fadd;
	struct doca_rdma_task_send *pool[NUM_TASKS + 1];
	int i;

	(void)state;
	assert_ok(doca_rdma_task_receive_allocate_init(r, b1, ud, &recv));
	assert_ptr_equal(doca_rdma_task_receive_get_dst_buf(recv), b1);
	doca_rdma_task_receive_set_dst_buf(recv, b2);
	assert_ptr_equal(doca_rdma_task_receive_get_dst_buf(recv), b2);
	assert_int_equal(doca_task_get_user_data(doca_rdma_task_receive_as_task(recv)).u64, 5);
	assert_ptr_equal(doca_task_get_ctx(doca_rdma_task_receive_as_task(recv)), A.ctx);

	assert_ok(doca_rdma_task_send_allocate_init(r, c, b1, ud, &send));
	assert_ptr_equal(doca_rdma_task_send_get_src_buf(send), b1);
	assert_ptr_equal(doca_rdma_task_send_get_rdma_connection(send), c);
	doca_rdma_task_send_set_rdma_connection(send, NULL);
	assert_null(doca_rdma_task_send_get_rdma_connection(send));

	assert_ok(doca_rdma_task_send_imm_allocate_init(r, c, NULL, 0xABCD, ud, &simm));
	assert_int_equal(doca_rdma_task_send_imm_get_immediate_data(simm), 0xABCD);
	doca_rdma_task_send_imm_set_immediate_data(simm, 0x12345678);
	assert_int_equal(doca_rdma_task_send_imm_get_immediate_data(simm), 0x12345678);
	assert_null(doca_rdma_task_send_imm_get_src_buf(simm));

	assert_ok(doca_rdma_task_read_allocate_init(r, c, b1, b2, ud, &rd));
	assert_ptr_equal(doca_rdma_task_read_get_src_buf(rd), b1);
	assert_ptr_equal(doca_rdma_task_read_get_dst_buf(rd), b2);

	assert_ok(doca_rdma_task_write_allocate_init(r, c, b1, b2, ud, &wr));
	doca_rdma_task_write_set_src_buf(wr, b2);
	doca_rdma_task_write_set_dst_buf(wr, b1);
	assert_ptr_equal(doca_rdma_task_write_get_src_buf(wr), b2);
	assert_ptr_equal(doca_rdma_task_write_get_dst_buf(wr), b1);

	assert_ok(doca_rdma_task_write_imm_allocate_init(r, c, b1, b2, 0x11, ud, &wimm));
	assert_int_equal(doca_rdma_task_write_imm_get_immediate_data(wimm), 0x11);
	assert_ptr_equal(doca_rdma_task_write_imm_get_rdma_connection(wimm), c);

	assert_ok(doca_rdma_task_atomic_cmp_swp_allocate_init(r, c, b1, b2, 1, 2, ud, &cas));
	assert_int_equal(doca_rdma_task_atomic_cmp_swp_get_cmp_data(cas), 1);
	assert_int_equal(doca_rdma_task_atomic_cmp_swp_get_swap_data(cas), 2);
	doca_rdma_task_atomic_cmp_swp_set_swap_data(cas, UINT64_MAX);
	assert_true(doca_rdma_task_atomic_cmp_swp_get_swap_data(cas) == UINT64_MAX);
	assert_ptr_equal(doca_rdma_task_atomic_cmp_swp_get_result_buf(cas), b2);

	assert_ok(doca_rdma_task_atomic_fetch_add_allocate_init(r, c, b1, b2, 9, ud, &fadd));
	assert_int_equal(doca_rdma_task_atomic_fetch_add_get_add_data(fadd), 9);
	assert_ptr_equal(doca_rdma_task_atomic_fetch_add_get_dst_buf(fadd), b1);

	/* Bad arguments. */
	assert_fails(doca_rdma_task_send_allocate_init(NULL, c, b1, ud, &pool[0]), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_task_send_allocate_init(r, c, b1, ud, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_rdma_task_send_allocate_init(r, NULL, b1, ud, &pool[0]), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_rdma_task_send_as_task(NULL));
	assert_null(doca_rdma_task_send_get_src_buf(NULL));

	/* The pool holds NUM_TASKS send tasks; one is out already. */
	for (i = 0; i < NUM_TASKS - 1; i++)
		assert_ok(doca_rdma_task_send_allocate_init(r, c, b1, ud, &pool[i]));
	assert_int_equal(doca_rdma_task_send_allocate_init(r, c, b1, ud, &pool[i]), DOCA_ERROR_NO_MEMORY);
	for (i = 0; i < NUM_TASKS - 1; i++)
		doca_task_free(doca_rdma_task_send_as_task(pool[i]));

	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_send_as_task(send));
	doca_task_free(doca_rdma_task_send_imm_as_task(simm));
	doca_task_free(doca_rdma_task_read_as_task(rd));
	doca_task_free(doca_rdma_task_write_as_task(wr));
	doca_task_free(doca_rdma_task_write_imm_as_task(wimm));
	doca_task_free(doca_rdma_task_atomic_cmp_swp_as_task(cas));
	doca_task_free(doca_rdma_task_atomic_fetch_add_as_task(fadd));
	put(b1);
	put(b2);
}

/* ---- tasks: try_submit validation --------------------------------------------- */

static void test_try_submit_validation(void **state)
{
	struct doca_rdma *r = A.rdma;
	struct doca_rdma_connection *c = A.conn;
	union doca_data ud = {.u64 = 0};
	struct doca_buf *src = buf_on(mmap_rw, mem_rw, 64, 64);
	struct doca_buf *src2 = buf_on(mmap_rw, mem_rw + 64, 64, 64);
	struct doca_buf *small = buf_on(mmap_rw, mem_rw + 1024, 16, 0);
	struct doca_buf *ro_dst = buf_on(mmap_ro, mem_ro, 64, 0);
	struct doca_buf *remote_src = buf_on(remote_rw, mem_rw + 2048, 128, 64);
	struct doca_buf *remote_dst = buf_on(remote_rw, mem_rw + 4096, 32, 0);
	struct doca_buf *remote_odd = buf_on(remote_rw, mem_rw + 4100, 16, 8);
	struct doca_buf *remote_rdonly_dst = buf_on(remote_rdonly, mem_rdonly_export, 64, 0);
	struct doca_buf *result = buf_on(mmap_rw, mem_rw + 8192, 8, 0);
	struct doca_buf *result_full = buf_on(mmap_rw, mem_rw + 8200, 8, 4);
	struct doca_rdma_task_send *send;
	struct doca_rdma_task_read *rd;
	struct doca_rdma_task_write *wr;
	struct doca_rdma_task_atomic_fetch_add *fadd;
	struct doca_rdma_task_receive *recv;

	(void)state;
	/* Send: a list longer than max_send_buf_list_len (1); no connection. */
	assert_ok(doca_buf_chain_list(src, src2));
	assert_ok(doca_rdma_task_send_allocate_init(r, c, src, ud, &send));
	assert_fails(doca_task_try_submit(doca_rdma_task_send_as_task(send)), DOCA_ERROR_INVALID_VALUE);
	doca_rdma_task_send_set_src_buf(send, src2);
	doca_rdma_task_send_set_rdma_connection(send, NULL);
	assert_fails(doca_task_try_submit(doca_rdma_task_send_as_task(send)), DOCA_ERROR_INVALID_VALUE);
	/* A source that is remote memory is not a local source. */
	doca_rdma_task_send_set_rdma_connection(send, c);
	doca_rdma_task_send_set_src_buf(send, remote_src);
	assert_fails(doca_task_try_submit(doca_rdma_task_send_as_task(send)), DOCA_ERROR_INVALID_VALUE);
	/* Valid now, but the connection is not connected yet. */
	doca_rdma_task_send_set_src_buf(send, src2);
	assert_fails(doca_task_try_submit(doca_rdma_task_send_as_task(send)), DOCA_ERROR_NOT_CONNECTED);
	doca_task_free(doca_rdma_task_send_as_task(send));

	/* Read: local destination too small; read-only destination; a local
	 * source; a NULL destination with a source. */
	assert_ok(doca_rdma_task_read_allocate_init(r, c, remote_src, small, ud, &rd));
	assert_fails(doca_task_try_submit(doca_rdma_task_read_as_task(rd)), DOCA_ERROR_INVALID_VALUE);
	doca_rdma_task_read_set_dst_buf(rd, ro_dst);
	assert_fails(doca_task_try_submit(doca_rdma_task_read_as_task(rd)), DOCA_ERROR_NOT_PERMITTED);
	doca_rdma_task_read_set_dst_buf(rd, result);
	doca_rdma_task_read_set_src_buf(rd, src2);
	assert_fails(doca_task_try_submit(doca_rdma_task_read_as_task(rd)), DOCA_ERROR_INVALID_VALUE);
	doca_rdma_task_read_set_src_buf(rd, remote_src);
	doca_rdma_task_read_set_dst_buf(rd, NULL);
	assert_fails(doca_task_try_submit(doca_rdma_task_read_as_task(rd)), DOCA_ERROR_INVALID_VALUE);
	doca_task_free(doca_rdma_task_read_as_task(rd));

	/* Write: remote room too small; remote memory exported without RDMA
	 * write; NULL destination with a source. */
	assert_ok(doca_rdma_task_write_allocate_init(r, c, src2, remote_odd, ud, &wr));
	assert_fails(doca_task_try_submit(doca_rdma_task_write_as_task(wr)), DOCA_ERROR_INVALID_VALUE);
	doca_rdma_task_write_set_dst_buf(wr, remote_rdonly_dst);
	assert_fails(doca_task_try_submit(doca_rdma_task_write_as_task(wr)), DOCA_ERROR_NOT_PERMITTED);
	doca_rdma_task_write_set_dst_buf(wr, NULL);
	assert_fails(doca_task_try_submit(doca_rdma_task_write_as_task(wr)), DOCA_ERROR_INVALID_VALUE);
	doca_task_free(doca_rdma_task_write_as_task(wr));

	/* Atomics: misaligned remote address, no room for the result, NULL. */
	assert_ok(doca_rdma_task_atomic_fetch_add_allocate_init(r, c, remote_odd, result, 1, ud, &fadd));
	assert_fails(doca_task_try_submit(doca_rdma_task_atomic_fetch_add_as_task(fadd)), DOCA_ERROR_INVALID_VALUE);
	doca_rdma_task_atomic_fetch_add_set_dst_buf(fadd, remote_dst);
	doca_rdma_task_atomic_fetch_add_set_result_buf(fadd, result_full);
	assert_fails(doca_task_try_submit(doca_rdma_task_atomic_fetch_add_as_task(fadd)), DOCA_ERROR_INVALID_VALUE);
	doca_rdma_task_atomic_fetch_add_set_result_buf(fadd, NULL);
	assert_fails(doca_task_try_submit(doca_rdma_task_atomic_fetch_add_as_task(fadd)), DOCA_ERROR_INVALID_VALUE);
	doca_rdma_task_atomic_fetch_add_set_result_buf(fadd, result);
	doca_rdma_task_atomic_fetch_add_set_dst_buf(fadd, src2); /* local memory is no remote target */
	assert_fails(doca_task_try_submit(doca_rdma_task_atomic_fetch_add_as_task(fadd)), DOCA_ERROR_INVALID_VALUE);
	doca_task_free(doca_rdma_task_atomic_fetch_add_as_task(fadd));

	/* Receive: a destination list longer than dst_buf_list_len (1). */
	assert_ok(doca_rdma_task_receive_allocate_init(r, src, ud, &recv));
	assert_fails(doca_task_try_submit(doca_rdma_task_receive_as_task(recv)), DOCA_ERROR_INVALID_VALUE);
	doca_task_free(doca_rdma_task_receive_as_task(recv));

	/* Nothing was written anywhere. */
	assert_int_equal(data_len_of(small), 0);
	assert_int_equal(data_len_of(result), 0);
	assert_int_equal(ok_calls + err_calls, 0);

	put(src); /* frees src2 too: they are one list */
	put(small);
	put(ro_dst);
	put(remote_src);
	put(remote_dst);
	put(remote_odd);
	put(remote_rdonly_dst);
	put(result);
	put(result_full);
}

/* doca_task_submit does not validate: a bad task fails through its error
 * callback, from doca_pe_progress. */
static void test_submit_invalid_fails_in_callback(void **state)
{
	struct doca_buf *small = buf_on(mmap_rw, mem_rw, 4, 0);
	struct doca_buf *remote_src = buf_on(remote_rw, mem_rw + 2048, 128, 64);
	struct doca_rdma_task_read *rd;
	union doca_data ud = {.u64 = 0};

	(void)state;
	assert_ok(doca_rdma_task_read_allocate_init(A.rdma, A.conn, remote_src, small, ud, &rd));
	assert_ok(doca_task_submit(doca_rdma_task_read_as_task(rd)));
	assert_int_equal(err_calls, 0); /* never inside submit */
	assert_true(progress_until(&err_calls, 1));
	assert_int_equal(last_status, DOCA_ERROR_INVALID_VALUE);
	assert_ptr_equal(last_task, doca_rdma_task_read_as_task(rd));
	assert_int_equal(data_len_of(small), 0);
	doca_task_free(doca_rdma_task_read_as_task(rd));
	put(small);
	put(remote_src);
}

/* ---- data tasks end to end over the loopback device --------------------------- */

static void test_send_receive(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem_rw, 100, 26);
	struct doca_buf *dst = buf_on(mmap_rw, mem_rw + 1024, 256, 4);
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_send_imm *simm;
	union doca_data ud = {.u64 = 0};
	uint32_t id;

	(void)state;
	memcpy(mem_rw, "abcdefghijklmnopqrstuvwxyz", 26);
	memcpy(mem_rw + 1024, "HEAD", 4);
	recv = post_receive(&B, dst);
	assert_ok(doca_rdma_task_send_imm_allocate_init(A.rdma, A.conn, src, 0xABCD, ud, &simm));
	assert_ok(doca_task_try_submit(doca_rdma_task_send_imm_as_task(simm)));
	assert_true(progress_until(&ok_calls, 2));
	assert_int_equal(err_calls, 0);
	/* Appended after the data that was there; data_len grew. */
	assert_int_equal(data_len_of(dst), 30);
	assert_memory_equal(mem_rw + 1024, "HEADabcdefghijklmnopqrstuvwxyz", 30);
	assert_int_equal(doca_rdma_task_receive_get_result_len(recv), 26);
	assert_int_equal(doca_rdma_task_receive_get_result_opcode(recv), DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM);
	assert_int_equal(doca_rdma_task_receive_get_result_immediate_data(recv), 0xABCD);
	assert_ptr_equal(doca_rdma_task_receive_get_result_rdma_connection(recv), B.conn);
	assert_ok(doca_rdma_connection_get_id(doca_rdma_task_receive_get_result_rdma_connection(recv), &id));
	assert_int_equal(data_len_of(src), 26); /* sources are not consumed */
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_send_imm_as_task(simm));
	put(src);
	put(dst);
}

static void test_write_then_read(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem_rw, 64, 32);
	struct doca_buf *remote_dst = buf_on(remote_rw, mem_rw + 4096, 64, 8);
	struct doca_buf *remote_src = buf_on(remote_rw, mem_rw + 4096, 64, 40);
	struct doca_buf *dst = buf_on(mmap_rw, mem_rw + 8192, 64, 0);
	struct doca_rdma_task_write *wr;
	struct doca_rdma_task_read *rd;
	union doca_data ud = {.u64 = 0};
	int i;

	(void)state;
	for (i = 0; i < 32; i++)
		mem_rw[i] = (char)(i + 1);
	memset(mem_rw + 4096, 0x5a, 64);
	/* B's memory is mem_rw too (one process): A writes after the 8 bytes
	 * of data of the remote buffer. */
	assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src, remote_dst, ud, &wr));
	assert_ok(doca_task_try_submit(doca_rdma_task_write_as_task(wr)));
	assert_true(progress_until(&ok_calls, 1));
	assert_memory_equal(mem_rw + 4096 + 8, mem_rw, 32);
	assert_int_equal((unsigned char)mem_rw[4096 + 7], 0x5a);
	assert_int_equal((unsigned char)mem_rw[4096 + 40], 0x5a);
	assert_int_equal(data_len_of(remote_dst), 8); /* the peer's buffer is not ours to change */

	assert_ok(doca_rdma_task_read_allocate_init(A.rdma, A.conn, remote_src, dst, ud, &rd));
	assert_ok(doca_task_try_submit(doca_rdma_task_read_as_task(rd)));
	assert_true(progress_until(&ok_calls, 2));
	assert_int_equal(err_calls, 0);
	assert_int_equal(doca_rdma_task_read_get_result_len(rd), 40);
	assert_int_equal(data_len_of(dst), 40);
	assert_memory_equal(mem_rw + 8192, mem_rw + 4096, 40);
	doca_task_free(doca_rdma_task_write_as_task(wr));
	doca_task_free(doca_rdma_task_read_as_task(rd));
	put(src);
	put(remote_dst);
	put(remote_src);
	put(dst);
}

/* doca_task_submit_ex without FLUSH: the writes wait for a doorbell.
 * Nothing lands until doca_pe_progress (round 1) or a flushed submit on
 * the same connection (round 2, seen without progressing: the service
 * threads serve B and take A's acknowledgement, and the completion makes
 * the PE's notification handle readable), and they complete in order. */
static bool over_loopback(void)
{
	const char *e = getenv("SOFTDOCA_ENGINE");

	return e != NULL && strcmp(e, "loopback") == 0;
}

static bool handle_readable(doca_notification_handle_t h)
{
	struct pollfd p = {.fd = h, .events = POLLIN};

	return poll(&p, 1, 10000) == 1 && (p.revents & POLLIN);
}

static void test_submit_without_flush_waits_for_doorbell(void **state)
{
	struct doca_rdma_task_write *wr[4];
	struct doca_buf *src[4], *dst[4];
	union doca_data ud = {.u64 = 0};

	(void)state;
	for (int round = 0; round < 2; round++) {
		int base = ok_calls;

		memset(mem_rw + 4096, 0, 64);
		for (int i = 0; i < 4; i++) {
			mem_rw[i] = (char)(round * 16 + i + 1);
			src[i] = buf_on(mmap_rw, mem_rw + i, 1, 1);
			dst[i] = buf_on(remote_rw, mem_rw + 4096 + i, 1, 0);
			assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src[i], dst[i], ud, &wr[i]));
		}
		for (int i = 0; i < 3; i++)
			assert_ok(doca_task_submit_ex(doca_rdma_task_write_as_task(wr[i]), DOCA_TASK_SUBMIT_FLAG_NONE));
		/* Held back: nothing was sent. (The loopback engine runs every
		 * post at once, which the API allows too.) */
		if (!over_loopback())
			assert_int_equal(mem_rw[4096], 0);
		if (round == 0) {
			assert_ok(doca_task_submit_ex(doca_rdma_task_write_as_task(wr[3]), DOCA_TASK_SUBMIT_FLAG_NONE));
			assert_true(progress_until(&ok_calls, base + 4));
		} else {
			doca_notification_handle_t h;

			assert_ok(doca_pe_get_notification_handle(pe, &h));
			assert_ok(doca_pe_request_notification(pe));
			assert_ok(doca_task_submit_ex(doca_rdma_task_write_as_task(wr[3]), DOCA_TASK_SUBMIT_FLAG_FLUSH));
			assert_true(handle_readable(h)); /* completions came in, nobody progressed */
			assert_ok(doca_pe_clear_notification(pe, h));
			assert_true(progress_until(&ok_calls, base + 4));
		}
		assert_int_equal(err_calls, 0);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(mem_rw[4096 + i], (char)(round * 16 + i + 1));
			doca_task_free(doca_rdma_task_write_as_task(wr[i]));
			put(src[i]);
			put(dst[i]);
		}
	}
}

/* Reads behind a big read whose answer is still leaving are answered
 * too (the target starts them), and everything completes in order with
 * the right bytes: big, small, empty, big, small. */
static void test_reads_behind_a_read(void **state)
{
	/* Sources in the first half of the memory, destinations in the
	 * second; 16000 bytes go by rendezvous. */
	static const size_t len[] = {16000, 16, 0, 16000, 8};
	static const size_t at[] = {0, 16100, 16200, 16384, 16300};
	const size_t half = MEM_SIZE / 2;
	struct doca_rdma_task_read *rd[5];
	struct doca_buf *src[5], *dst[5];
	int base = done_calls;

	(void)state;
	for (size_t i = 0; i < half; i++)
		mem_rw[i] = (char)(i * 7 + 3);
	memset(mem_rw + half, 0, half);
	for (int i = 0; i < 5; i++) {
		union doca_data ud = {.u64 = (uint64_t)i};
		size_t room = len[i] > 0 ? len[i] : 1;

		src[i] = buf_on(remote_rw, mem_rw + at[i], room, len[i]);
		dst[i] = buf_on(mmap_rw, mem_rw + half + at[i], room, 0);
		assert_ok(doca_rdma_task_read_allocate_init(A.rdma, A.conn, src[i], dst[i], ud, &rd[i]));
	}
	for (int i = 0; i < 5; i++)
		assert_ok(doca_task_submit(doca_rdma_task_read_as_task(rd[i])));
	assert_true(progress_until(&done_calls, base + 5));
	assert_int_equal(err_calls, 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(done_order[base + i], (uint64_t)i);
		assert_int_equal(doca_rdma_task_read_get_result_len(rd[i]), len[i]);
		assert_memory_equal(mem_rw + half + at[i], mem_rw + at[i], len[i]);
		doca_task_free(doca_rdma_task_read_as_task(rd[i]));
		put(src[i]);
		put(dst[i]);
	}
}

static void test_write_imm_consumes_receive(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem_rw, 16, 16);
	struct doca_buf *remote_dst = buf_on(remote_rw, mem_rw + 4096, 64, 0);
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_write_imm *wimm;
	union doca_data ud = {.u64 = 0};

	(void)state;
	memcpy(mem_rw, "0123456789abcdef", 16);
	recv = post_receive(&B, NULL);
	assert_ok(doca_rdma_task_write_imm_allocate_init(A.rdma, A.conn, src, remote_dst, 0xdeadbeef, ud, &wimm));
	assert_ok(doca_task_try_submit(doca_rdma_task_write_imm_as_task(wimm)));
	assert_true(progress_until(&ok_calls, 2));
	assert_int_equal(err_calls, 0);
	assert_memory_equal(mem_rw + 4096, "0123456789abcdef", 16);
	assert_int_equal(doca_rdma_task_receive_get_result_opcode(recv), DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM);
	assert_true(doca_rdma_task_receive_get_result_immediate_data(recv) == 0xdeadbeef);
	/* verbs: byte_len of a RECV_RDMA_WITH_IMM is the length written */
	assert_int_equal(doca_rdma_task_receive_get_result_len(recv), 16);
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_write_imm_as_task(wimm));
	put(src);
	put(remote_dst);
}

/* A write with immediate that consumes a receive with a buffer reports the
 * bytes written, and leaves the receive's buffer as it was: the data went
 * to the written region. */
static void test_write_imm_receive_with_buffer(void **state)
{
	struct doca_buf *src = buf_on(mmap_rw, mem_rw, 24, 24);
	struct doca_buf *remote_dst = buf_on(remote_rw, mem_rw + 4096, 64, 0);
	struct doca_buf *rbuf = buf_on(mmap_rw, mem_rw + 2048, 64, 0);
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_write_imm *wimm;
	union doca_data ud = {.u64 = 0};
	size_t rbuf_len = 99;
	uint32_t len;

	(void)state;
	memset(mem_rw + 2048, 0x5a, 64);
	memcpy(mem_rw, "write-with-immediate-24b", 24);
	recv = post_receive(&B, rbuf);
	assert_ok(doca_rdma_task_write_imm_allocate_init(A.rdma, A.conn, src, remote_dst, 0x0badf00d, ud, &wimm));
	assert_ok(doca_task_try_submit(doca_rdma_task_write_imm_as_task(wimm)));
	assert_true(progress_until(&ok_calls, 2));
	assert_int_equal(err_calls, 0);
	len = doca_rdma_task_receive_get_result_len(recv);
	assert_ok(doca_buf_get_data_len(rbuf, &rbuf_len));
	assert_int_equal(doca_rdma_task_receive_get_result_opcode(recv), DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM);
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_write_imm_as_task(wimm));
	assert_int_equal(len, 24);
	assert_int_equal(rbuf_len, 0);
	assert_memory_equal(mem_rw + 4096, "write-with-immediate-24b", 24);
	for (int i = 0; i < 64; i++)
		assert_int_equal(mem_rw[2048 + i], 0x5a);
	put(src);
	put(remote_dst);
	put(rbuf);
}

/* Progress until n callbacks (success or error) ran; false after 10 s. */
static bool progress_until_done(int n)
{
	return progress_until(&done_calls, n);
}

/* An empty send completes a receive that has no destination buffer. */
static void test_empty_send(void **state)
{
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_send *send;
	union doca_data ud = {.u64 = 0};
	uint32_t len;
	enum doca_rdma_opcode opcode;

	(void)state;
	recv = post_receive(&B, NULL);
	assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, NULL, ud, &send));
	assert_ok(doca_task_try_submit(doca_rdma_task_send_as_task(send)));
	assert_true(progress_until_done(2));
	len = doca_rdma_task_receive_get_result_len(recv);
	opcode = doca_rdma_task_receive_get_result_opcode(recv);
	/* Free first so that a failed check below leaves nothing allocated. */
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_send_as_task(send));
	assert_int_equal(err_calls, 0);
	assert_int_equal(len, 0);
	assert_int_equal(opcode, DOCA_RDMA_OPCODE_RECV_SEND);
}

/* A write_imm without buffers carries only its immediate data; it too
 * completes a receive without a destination (the DOCA write-immediate
 * responder sample posts exactly that). */
static void test_write_imm_without_buffers(void **state)
{
	struct doca_rdma_task_receive *recv;
	struct doca_rdma_task_write_imm *wimm;
	union doca_data ud = {.u64 = 0};
	enum doca_rdma_opcode opcode;
	doca_be32_t imm;

	(void)state;
	recv = post_receive(&B, NULL);
	assert_ok(doca_rdma_task_write_imm_allocate_init(A.rdma, A.conn, NULL, NULL, 0x01020304, ud, &wimm));
	assert_ok(doca_task_try_submit(doca_rdma_task_write_imm_as_task(wimm)));
	/* If the write fails the receive stays posted: stop B to flush it. */
	if (!progress_until_done(2))
		(void)doca_ctx_stop(B.ctx);
	assert_true(progress_until_done(2));
	opcode = doca_rdma_task_receive_get_result_opcode(recv);
	imm = doca_rdma_task_receive_get_result_immediate_data(recv);
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	doca_task_free(doca_rdma_task_write_imm_as_task(wimm));
	assert_int_equal(err_calls, 0);
	assert_int_equal(opcode, DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM);
	assert_int_equal(imm, 0x01020304);
}

static void test_atomics(void **state)
{
	_Alignas(8) uint64_t init = 40, got;
	struct doca_buf *target = buf_on(remote_rw, mem_rw + 4096, 8, 8);
	struct doca_buf *result = buf_on(mmap_rw, mem_rw + 8192, 16, 0);
	struct doca_rdma_task_atomic_fetch_add *fadd;
	struct doca_rdma_task_atomic_cmp_swp *cas;
	union doca_data ud = {.u64 = 0};

	(void)state;
	memcpy(mem_rw + 4096, &init, 8);
	assert_ok(doca_rdma_task_atomic_fetch_add_allocate_init(A.rdma, A.conn, target, result, 2, ud, &fadd));
	assert_ok(doca_task_try_submit(doca_rdma_task_atomic_fetch_add_as_task(fadd)));
	assert_true(progress_until(&ok_calls, 1));
	memcpy(&got, mem_rw + 8192, 8);
	assert_int_equal(got, 40);
	memcpy(&got, mem_rw + 4096, 8);
	assert_int_equal(got, 42);
	assert_int_equal(data_len_of(result), 8);

	assert_ok(doca_rdma_task_atomic_cmp_swp_allocate_init(A.rdma, A.conn, target, result, 42, 7, ud, &cas));
	assert_ok(doca_task_try_submit(doca_rdma_task_atomic_cmp_swp_as_task(cas)));
	assert_true(progress_until(&ok_calls, 2));
	assert_int_equal(err_calls, 0);
	memcpy(&got, mem_rw + 8200, 8);
	assert_int_equal(got, 42);
	memcpy(&got, mem_rw + 4096, 8);
	assert_int_equal(got, 7);
	assert_int_equal(data_len_of(result), 16);
	doca_task_free(doca_rdma_task_atomic_fetch_add_as_task(fadd));
	doca_task_free(doca_rdma_task_atomic_cmp_swp_as_task(cas));
	put(target);
	put(result);
}

/* Stop with a receive posted: it fails through its error callback and the
 * context still reaches IDLE. */
/* Writes held back (submitted without FLUSH) when the context stops
 * fail like any other in flight, and nothing of them lands. */
static void test_stop_fails_held_back_writes(void **state)
{
	struct doca_rdma_task_write *wr[3];
	struct doca_buf *src[3], *dst[3];
	union doca_data ud = {.u64 = 0};
	doca_error_t status;

	(void)state;
	memset(mem_rw + 4096, 0, 64);
	for (int i = 0; i < 3; i++) {
		mem_rw[i] = (char)(0x40 + i);
		src[i] = buf_on(mmap_rw, mem_rw + i, 1, 1);
		dst[i] = buf_on(remote_rw, mem_rw + 4096 + i, 1, 0);
		assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src[i], dst[i], ud, &wr[i]));
		assert_ok(doca_task_submit_ex(doca_rdma_task_write_as_task(wr[i]), DOCA_TASK_SUBMIT_FLAG_NONE));
	}
	status = doca_ctx_stop(A.ctx);
	assert_true(status == DOCA_ERROR_IN_PROGRESS || status == DOCA_SUCCESS);
	assert_true(progress_until(&done_calls, 3));
	if (!over_loopback()) { /* (loopback runs every post at once) */
		assert_int_equal(err_calls, 3);
		for (int i = 0; i < 3; i++)
			assert_int_equal(mem_rw[4096 + i], 0);
	}
	for (int i = 0; i < 3; i++) {
		doca_task_free(doca_rdma_task_write_as_task(wr[i]));
		put(src[i]);
		put(dst[i]);
	}
	side_stop(&A);
	assert_int_equal(state_of(&A), DOCA_CTX_STATE_IDLE);
}

static void test_stop_flushes_receive(void **state)
{
	struct doca_buf *dst = buf_on(mmap_rw, mem_rw, 64, 0);
	struct doca_rdma_task_receive *recv;
	doca_error_t status;

	(void)state;
	recv = post_receive(&B, dst);
	status = doca_ctx_stop(B.ctx);
	assert_true(status == DOCA_ERROR_IN_PROGRESS);
	assert_true(progress_until(&err_calls, 1));
	assert_ptr_equal(last_task, doca_rdma_task_receive_as_task(recv));
	assert_int_not_equal(last_status, DOCA_SUCCESS);
	assert_int_equal(data_len_of(dst), 0);
	doca_task_free(doca_rdma_task_receive_as_task(recv));
	side_stop(&B);
	assert_int_equal(state_of(&B), DOCA_CTX_STATE_IDLE);
	/* Its connection closed with it: disconnecting it now has nothing
	 * left to do and succeeds (doca-stdexec disconnects after stop). */
	assert_ok(doca_rdma_connection_disconnect(B.conn));
	assert_ok(doca_rdma_connection_disconnect(B.conn));
	put(dst);
}

/* A large write (its payload fetched by the target: a rendezvous) with
 * many sends behind it that wait for receives: the target keeps the
 * sends' payloads while the write's data is still to come behind them in
 * the stream, far more than a link lets one peer pin before it stops
 * reading (TCP: 32 read buffers of 256 KiB). The write must complete all
 * the same (reading stops only when nothing the target waits for is
 * behind), then every send once receives are posted, in order. */
#define BEHIND_SENDS 320
#define BEHIND_SEND_LEN (30u * 1024u)
#define BEHIND_WRITE_LEN (4u << 20)

static void test_sends_behind_large_write(void **state)
{
	static struct doca_rdma_task_receive *recv[BEHIND_SENDS];
	static struct doca_rdma_task_send *send[BEHIND_SENDS];
	struct side_conf conf = {.permissions = ALL_RDMA_PERMS, .rnr_retry = 7, .send_queue_size = 512};
	/* aligned_alloc wants a multiple of the alignment. */
	size_t len = (BEHIND_WRITE_LEN * 2 + BEHIND_SEND_LEN * (BEHIND_SENDS + 1) + 4095) & ~(size_t)4095;
	char *mem = aligned_alloc(4096, len);
	struct doca_buf_inventory *inv;
	struct doca_mmap *m, *rm;
	struct doca_rdma_task_write *wr;
	struct doca_buf *src, *rdst, *ssrc[BEHIND_SENDS], *rbuf[BEHIND_SENDS];
	union doca_data ud = {.u64 = 0};
	char *sends_at = mem + BEHIND_WRITE_LEN * 2;

	(void)state;
	assert_non_null(mem);
	ok_calls = err_calls = done_calls = 0;
	side_create(&A);
	side_create(&B);
	side_apply_conf(&A, &conf);
	side_apply_conf(&B, &conf);
	side_conf_tasks(&A, BEHIND_SENDS + 1, false);
	side_conf_tasks(&B, BEHIND_SENDS + 1, false);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	pair_connect();
	assert_ok(doca_buf_inventory_create(2 * BEHIND_SENDS + 4, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	for (size_t i = 0; i < len; i++)
		mem[i] = (char)(i * 131 + 7);
	m = local_mmap(mem, len, ALL_RDMA_PERMS);
	rm = remote_of(m);
	assert_ok(doca_buf_inventory_buf_get_by_args(inv, m, mem, BEHIND_WRITE_LEN, mem, BEHIND_WRITE_LEN, &src));
	assert_ok(doca_buf_inventory_buf_get_by_args(inv, rm, mem + BEHIND_WRITE_LEN, BEHIND_WRITE_LEN,
						     mem + BEHIND_WRITE_LEN, 0, &rdst));
	assert_ok(doca_rdma_task_write_allocate_init(A.rdma, A.conn, src, rdst, ud, &wr));
	assert_ok(doca_task_try_submit(doca_rdma_task_write_as_task(wr)));
	for (int i = 0; i < BEHIND_SENDS; i++) {
		char *at = sends_at + (size_t)i * BEHIND_SEND_LEN;

		assert_ok(doca_buf_inventory_buf_get_by_args(inv, m, at, BEHIND_SEND_LEN, at, BEHIND_SEND_LEN,
							     &ssrc[i]));
		ud.u64 = (uint64_t)i + 1;
		assert_ok(doca_rdma_task_send_allocate_init(A.rdma, A.conn, ssrc[i], ud, &send[i]));
		assert_ok(doca_task_try_submit(doca_rdma_task_send_as_task(send[i])));
	}
	/* The write completes while the sends still wait. */
	assert_true(progress_until(&ok_calls, 1));
	assert_int_equal(err_calls, 0);
	assert_memory_equal(mem + BEHIND_WRITE_LEN, mem, BEHIND_WRITE_LEN);
	progress_rounds(1000);
	assert_int_equal(ok_calls, 1);
	/* Receives let the sends in, one after the other. */
	for (int i = 0; i < BEHIND_SENDS; i++) {
		char *at = sends_at + (size_t)BEHIND_SENDS * BEHIND_SEND_LEN;

		assert_ok(doca_buf_inventory_buf_get_by_args(inv, m, at, BEHIND_SEND_LEN, at, 0, &rbuf[i]));
		assert_ok(doca_rdma_task_receive_allocate_init(B.rdma, rbuf[i], ud, &recv[i]));
		assert_ok(doca_task_try_submit(doca_rdma_task_receive_as_task(recv[i])));
	}
	assert_true(progress_until(&ok_calls, 1 + 2 * BEHIND_SENDS));
	assert_int_equal(err_calls, 0);
	for (int i = 0; i < BEHIND_SENDS; i++) {
		assert_int_equal(doca_rdma_task_receive_get_result_len(recv[i]), BEHIND_SEND_LEN);
		doca_task_free(doca_rdma_task_receive_as_task(recv[i]));
		doca_task_free(doca_rdma_task_send_as_task(send[i]));
		assert_ok(doca_buf_dec_refcount(ssrc[i], NULL));
		assert_ok(doca_buf_dec_refcount(rbuf[i], NULL));
	}
	/* The last send landed last. */
	assert_memory_equal(sends_at + (size_t)BEHIND_SENDS * BEHIND_SEND_LEN,
			    sends_at + (size_t)(BEHIND_SENDS - 1) * BEHIND_SEND_LEN, BEHIND_SEND_LEN);
	doca_task_free(doca_rdma_task_write_as_task(wr));
	assert_ok(doca_buf_dec_refcount(src, NULL));
	assert_ok(doca_buf_dec_refcount(rdst, NULL));
	side_stop(&A);
	side_stop(&B);
	side_destroy(&A);
	side_destroy(&B);
	assert_ok(doca_mmap_stop(rm));
	assert_ok(doca_mmap_destroy(rm));
	assert_ok(doca_mmap_destroy(m));
	assert_ok(doca_buf_inventory_stop(inv));
	assert_ok(doca_buf_inventory_destroy(inv));
	free(mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_destroy),
		cmocka_unit_test_setup_teardown(test_property_defaults, setup_idle, teardown_sides),
		cmocka_unit_test_setup_teardown(test_property_roundtrip, setup_idle, teardown_sides),
		cmocka_unit_test_setup_teardown(test_property_bad_values, setup_idle, teardown_sides),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_addr_good),
		cmocka_unit_test(test_addr_malformed),
		cmocka_unit_test_setup_teardown(test_cm_rules_and_not_supported_calls, setup_idle, teardown_sides),
		cmocka_unit_test_setup_teardown(test_set_conf_rules, setup_idle, teardown_sides),
		cmocka_unit_test_setup_teardown(test_export_needs_running, setup_idle, teardown_sides),
		/* From here on the soft NIC (engine) runs. */
		cmocka_unit_test_setup_teardown(test_setters_only_while_idle, setup_running, teardown_sides),
		cmocka_unit_test_setup_teardown(test_export_connections, setup_running, teardown_sides),
		cmocka_unit_test_setup_teardown(test_receive_bound_is_the_pool, setup_running, teardown_sides),
		cmocka_unit_test_setup_teardown(test_max_connections_honoured, setup_running, teardown_sides),
		cmocka_unit_test_setup_teardown(test_task_alloc_and_accessors, setup_running, teardown_sides),
		cmocka_unit_test_setup_teardown(test_try_submit_validation, setup_running, teardown_sides),
		cmocka_unit_test_setup_teardown(test_submit_invalid_fails_in_callback, setup_running, teardown_sides),
		cmocka_unit_test_setup_teardown(test_connect_twice_and_disconnect, setup_pair, teardown_sides),
		cmocka_unit_test_teardown(test_dc_both_sides_connect, teardown_sides),
		cmocka_unit_test_teardown(test_submit_right_after_connect, teardown_sides),
		cmocka_unit_test_setup_teardown(test_send_receive, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_write_then_read, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_submit_without_flush_waits_for_doorbell, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_reads_behind_a_read, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_write_imm_consumes_receive, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_write_imm_receive_with_buffer, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_empty_send, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_write_imm_without_buffers, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_atomics, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_stop_flushes_receive, setup_pair, teardown_sides),
		cmocka_unit_test_setup_teardown(test_stop_fails_held_back_writes, setup_pair, teardown_sides),
		cmocka_unit_test_teardown(test_sends_behind_large_write, teardown_sides),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
