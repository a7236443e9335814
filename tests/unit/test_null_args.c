/*
 * NULL arguments at every public call: each exported function, called with
 * NULL in each pointer parameter in turn (the other pointers live fixture
 * objects or scratch memory, scalars 0 then 1), returns
 * DOCA_ERROR_INVALID_VALUE if it returns doca_error_t, NULL if it returns a
 * pointer, and never crashes. The cases are generated from the public
 * headers (gen_null_args.py writes null_args_cases.h); `test_null_args
 * --list` prints the functions covered, and null_args_coverage.sh fails if
 * an exported symbol is not among them. Each function runs in a forked child
 * so that a crash names the function; an error answer must come with a log
 * line. The few documented exceptions (optional parameters, features a soft
 * device lacks) are listed below with their reason. lifecycle_tests check
 * the double-close and destroy-while-in-use answers DOCA documents.
 * Two rounds: fixtures IDLE, then RUNNING (contexts started, tasks allocated,
 * a connection exported) so that calls get past their state checks.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_array.h>
#include <doca_buf_inventory.h>
#include <doca_clock.h>
#include <doca_compress.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_dpa.h>
#include <doca_erasure_coding.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_mmap_advise.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_rdma_bridge.h>
#include <doca_sync_event.h>
#include <doca_version.h>

#define MEM_SIZE 4096

struct nc_case {
	const char *name;
	void (*run)(void);
};

/* Live objects the generated calls pass in the parameters they keep valid. */
static struct {
	struct doca_devinfo *devinfo;
	struct doca_dev *dev;
	struct doca_mmap *mmap;	    /* IDLE: configurable */
	struct doca_mmap *buf_mmap; /* started, backs buf */
	struct doca_buf_inventory *buf_inventory;
	struct doca_buf *buf;
	struct doca_pe *pe;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_rdma *rdma;
	struct doca_sync_event *sync_event;
	struct doca_argp_param *argp_param;
	struct doca_argp_cmd *argp_cmd;
	struct doca_mmap_advise *mmap_advise;
	struct doca_buf_arr *buf_arr;
	struct doca_clock *clock;
	struct doca_compress *compress; /* never started: no engine on a soft device */
	struct doca_ec *ec;		/* likewise */
	/* the running round only: */
	struct doca_task *task; /* the memcpy task */
	struct doca_dma_task_memcpy *dma_task_memcpy;
	struct doca_rdma_connection *rdma_connection;
	struct doca_rdma_task_send *rdma_task_send;
	struct doca_rdma_task_receive *rdma_task_receive;
	struct doca_rdma_task_write *rdma_task_write;
	struct doca_mmap_advise_task_invalidate_cache *mmap_advise_task_invalidate_cache;
	struct doca_devinfo **list;
} fx;

/* Second round: contexts RUNNING, tasks allocated, a connection exported,
 * so that calls get past their state checks. */
static bool fx_running;

static _Alignas(64) char scratch[MEM_SIZE];
static char mem[MEM_SIZE];
static int nc_failures;

/* Functions that, given NULL in the named parameter, legitimately do not
 * return INVALID_VALUE: DOCA documents the parameter as optional. */
struct nc_exception {
	const char *name;
	int param;
	int scalars; /* the value of the scalar arguments, or -1: any */
	doca_error_t expected;
	doca_error_t expected_running; /* in the running round */
	const char *why;
};

static const struct nc_exception nc_exceptions[] = {
	{"doca_argp_init", 0, -1, DOCA_ERROR_BAD_STATE, DOCA_ERROR_BAD_STATE, "the fixture's session is already initialised"},
	{"doca_argp_init", 1, -1, DOCA_ERROR_BAD_STATE, DOCA_ERROR_BAD_STATE, "the fixture's session is already initialised"},
	{"doca_argp_start", 1, 0, DOCA_SUCCESS, DOCA_SUCCESS, "argv may be NULL when argc is 0"},
	{"doca_argp_start", 1, 1, DOCA_ERROR_BAD_STATE, DOCA_ERROR_BAD_STATE, "started by the argc 0 call before it"},
	{"doca_buf_inc_refcount", 1, -1, DOCA_SUCCESS, DOCA_SUCCESS, "refcount output is optional (header)"},
	{"doca_buf_dec_refcount", 1, -1, DOCA_SUCCESS, DOCA_SUCCESS, "refcount output is optional (header)"},
	/* an IDLE context answers BAD_STATE before the connection is looked
	 * at; test_rdma's test_export_needs_running relies on that order */
	{"doca_rdma_connect", 3, 1, DOCA_ERROR_BAD_STATE, DOCA_ERROR_INVALID_VALUE, "state checked first"},
	{"doca_mmap_set_free_cb", 2, -1, DOCA_SUCCESS, DOCA_SUCCESS, "opaque is the user's, passed back as is"},
	/* private data is optional; an exported (not CM) connection cannot be accepted */
	{"doca_rdma_connection_accept", 1, -1, DOCA_ERROR_INVALID_VALUE, DOCA_ERROR_BAD_STATE, "optional"},
	{"doca_logger_create_list", 0, -1, DOCA_SUCCESS, DOCA_SUCCESS, "NULL logger: the top of the tree (header)"},
	{"doca_dev_close", 0, -1, DOCA_SUCCESS, DOCA_SUCCESS, "closing nothing, as NVIDIA's DMA samples do"},
};

/* Features a soft device does not have: these answer NOT_SUPPORTED (with a
 * log line) before looking at their arguments, so NULL cannot hurt them. */
static const char *const nc_unsupported[] = {
	"doca_buf_arr_get_dpa_handle",
	"doca_buf_arr_get_gpu_handle",
	"doca_buf_arr_set_target_dpa",
	"doca_buf_arr_set_target_gpu",
	"doca_ctx_set_completion_vector",
	"doca_ctx_set_datapath_on_dpa",
	"doca_ctx_set_datapath_on_gpu",
	"doca_dma_get_gpu_handle",
	"doca_mmap_dev_get_dpa_handle",
	"doca_mmap_set_dmabuf_memrange",
	"doca_mmap_set_dpa_memrange",
	"doca_rdma_bridge_accept",
	"doca_rdma_bridge_established",
	"doca_rdma_bridge_get_buf_mkey",
	"doca_rdma_bridge_get_dev_pd",
	"doca_rdma_bridge_get_mmap_mkey_from_pd",
	"doca_rdma_bridge_open_dev_from_pd",
	"doca_rdma_bridge_prepare_connection",
	"doca_rdma_dpa_completion_attach",
	"doca_rdma_get_dpa_handle",
	"doca_rdma_get_gpu_handle",
	"doca_sync_event_add_publisher_location_dpa",
	"doca_sync_event_add_publisher_location_gpu",
	"doca_sync_event_add_subscriber_location_dpa",
	"doca_sync_event_add_subscriber_location_gpu",
	"doca_sync_event_get_dpa_handle",
	"doca_sync_event_get_gpu_handle",
	"doca_sync_event_remote_net_get_dpa_handle",
	"doca_sync_event_remote_net_get_gpu_handle",
	"doca_task_batch_get_status",
	"doca_task_batch_submit",
	"doca_task_batch_try_submit",
};

static bool nc_is_unsupported(const char *name)
{
	/* DOCA DPA: no DPA object can exist on a soft device (doca_dpa.h) */
	if (strncmp(name, "doca_dpa_", 9) == 0 && strcmp(name, "doca_dpa_cap_is_supported") != 0)
		return true;
	for (size_t i = 0; i < sizeof(nc_unsupported) / sizeof(nc_unsupported[0]); i++)
		if (strcmp(nc_unsupported[i], name) == 0)
			return true;
	return false;
}

/* stderr is a file in the child: a rejected call must have written to it. */
static bool nc_log_check;
static off_t nc_log_mark;

static void nc_mark(void)
{
	nc_log_mark = lseek(STDERR_FILENO, 0, SEEK_END);
}

static bool nc_logged(void)
{
	return !nc_log_check || lseek(STDERR_FILENO, 0, SEEK_END) > nc_log_mark;
}

static const struct nc_exception *nc_exception_find(const char *name, int param, int scalars)
{
	for (size_t i = 0; i < sizeof(nc_exceptions) / sizeof(nc_exceptions[0]); i++)
		if (strcmp(nc_exceptions[i].name, name) == 0 && nc_exceptions[i].param == param &&
		    (nc_exceptions[i].scalars < 0 || nc_exceptions[i].scalars == scalars))
			return &nc_exceptions[i];
	return NULL;
}

static bool nc_ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A task's buffers and result pointers may be set later with the task's
 * setters (DOCA's own setters exist for this) and are checked at submit:
 * alloc with them NULL is BAD_STATE on an IDLE context like any alloc, and
 * on a running one succeeds or finds the pool empty (NO_MEMORY). */
static bool nc_task_field_deferred(const char *name, const char *type, doca_error_t got)
{
	if (!nc_ends_with(name, "_alloc_init") && !nc_ends_with(name, "_allocate_init"))
		return false;
	if (strstr(type, "doca_buf") == NULL && strstr(type, "doca_sync_event_remote_net") == NULL &&
	    strcmp(type, "uint64_t *") != 0)
		return false;
	if (!fx_running)
		return got == DOCA_ERROR_BAD_STATE;
	return got == DOCA_SUCCESS || got == DOCA_ERROR_NO_MEMORY;
}

static void nc_check_err(const char *name, int param, const char *type, int scalars, doca_error_t got)
{
	const struct nc_exception *ex = nc_exception_find(name, param, scalars);
	doca_error_t want = ex == NULL ? DOCA_ERROR_INVALID_VALUE : fx_running ? ex->expected_running : ex->expected;

	if (got != want && nc_task_field_deferred(name, type, got))
		return; /* an empty pool is not logged: it is the datapath's normal back-pressure */

	if (got != want && got == DOCA_ERROR_NOT_SUPPORTED && nc_is_unsupported(name))
		want = got;
	if (got == want && (got == DOCA_SUCCESS || nc_logged()))
		return;
	if (got == want) {
		printf("FAIL %s (%s): NULL parameter %d (scalars %d) refused without a log line\n", name,
		       fx_running ? "running" : "idle", param, scalars);
		nc_failures++;
		return;
	}
	printf("FAIL %s (%s): NULL parameter %d (scalars %d) returned %s, expected %s\n", name,
	       fx_running ? "running" : "idle", param, scalars, doca_error_get_name(got), doca_error_get_name(want));
	nc_failures++;
}

static void nc_check_ptr(const char *name, int param, const void *got)
{
	if (got == NULL)
		return;
	printf("FAIL %s: NULL parameter %d returned a non-NULL pointer\n", name, param);
	nc_failures++;
}

#include "null_args_cases.h"

/* ---- double close and destroy while in use ------------------------------
 * What DOCA's headers document for each, and ours follow. Calls into an
 * object that was really freed are undefined behaviour in C; only the cases
 * where the object (or a registry that knows it) still exists are tested:
 * a device handle is looked up in the open-device registry before use, and
 * a released buf's element belongs to its inventory until that goes.
 */

static struct doca_dev *dev_open_first(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t nb = 0;

	assert_int_equal(doca_devinfo_create_list(&list, &nb), DOCA_SUCCESS);
	assert_true(nb > 0);
	assert_int_equal(doca_dev_open(list[0], &dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	return dev;
}

/* INVALID_VALUE for a handle that is no longer open (our header). */
static void test_dev_close_twice(void **state)
{
	struct doca_dev *dev = dev_open_first();

	(void)state;
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_ERROR_INVALID_VALUE);
}

struct mem_env {
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *buf;
};

static void mem_env_create(struct mem_env *e)
{
	e->dev = dev_open_first();
	assert_int_equal(doca_mmap_create(&e->mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(e->mmap, mem, sizeof(mem)), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(e->mmap, e->dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(e->mmap), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_create(4, &e->inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(e->inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, mem, 64, &e->buf), DOCA_SUCCESS);
}

static void mem_env_destroy(struct mem_env *e)
{
	assert_int_equal(doca_buf_inventory_destroy(e->inv), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(e->mmap), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(e->dev), DOCA_SUCCESS);
}

/* DOCA: NOT_PERMITTED while a doca_buf points into the mmap. The device it
 * uses cannot be closed meanwhile either (IN_USE, our header). */
static void test_mmap_destroy_with_bufs(void **state)
{
	struct mem_env e;

	(void)state;
	mem_env_create(&e);
	assert_int_equal(doca_mmap_destroy(e.mmap), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_dev_close(e.dev), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_buf_dec_refcount(e.buf, NULL), DOCA_SUCCESS);
	mem_env_destroy(&e);
}

/* DOCA: IN_USE while not every element went back to the inventory. */
static void test_inventory_destroy_with_bufs(void **state)
{
	struct mem_env e;

	(void)state;
	mem_env_create(&e);
	assert_int_equal(doca_buf_inventory_destroy(e.inv), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_buf_dec_refcount(e.buf, NULL), DOCA_SUCCESS);
	mem_env_destroy(&e);
}

/* DOCA: BAD_STATE when the reference count is already 0. */
static void test_buf_dec_refcount_at_zero(void **state)
{
	struct mem_env e;
	uint16_t before = 0;

	(void)state;
	mem_env_create(&e);
	assert_int_equal(doca_buf_dec_refcount(e.buf, &before), DOCA_SUCCESS);
	assert_int_equal(before, 1);
	assert_int_equal(doca_buf_dec_refcount(e.buf, NULL), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_buf_inc_refcount(e.buf, NULL), DOCA_ERROR_BAD_STATE);
	mem_env_destroy(&e);
}

static void ctx_wait_idle(struct doca_pe *pe, struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	for (int i = 0; i < 100000; i++) {
		assert_int_equal(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
		if (st == DOCA_CTX_STATE_IDLE)
			return;
		(void)doca_pe_progress(pe);
	}
	fail_msg("context did not become IDLE");
}

/* DOCA: IN_USE while a context is connected; destroy the context first. */
static void test_pe_destroy_with_ctx(void **state)
{
	struct doca_dev *dev = dev_open_first();
	struct doca_dma *dma;
	struct doca_pe *pe;

	(void)state;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_dma_create(dev, &dma), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_dma_destroy(dma), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* DOCA: BAD_STATE when the context was not stopped first; doca_ctx_stop on
 * an IDLE context is SUCCESS (our header: DOCA lists no error for it). */
static void test_rdma_destroy_running(void **state)
{
	struct doca_dev *dev = dev_open_first();
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	doca_error_t err;

	(void)state;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_create(dev, &rdma), DOCA_SUCCESS);
	ctx = doca_rdma_as_ctx(rdma);
	assert_int_equal(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_stop(ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(ctx), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_destroy(rdma), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	err = doca_ctx_stop(ctx);
	assert_true(err == DOCA_SUCCESS || err == DOCA_ERROR_IN_PROGRESS);
	ctx_wait_idle(pe, ctx);
	assert_int_equal(doca_ctx_stop(ctx), DOCA_SUCCESS);
	assert_int_equal(doca_rdma_destroy(rdma), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* Same rule for DMA (our header, as DOCA's). */
static void test_dma_destroy_running(void **state)
{
	struct doca_dev *dev = dev_open_first();
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	doca_error_t err;

	(void)state;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_dma_create(dev, &dma), DOCA_SUCCESS);
	ctx = doca_dma_as_ctx(dma);
	assert_int_equal(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(ctx), DOCA_SUCCESS);
	assert_int_equal(doca_dma_destroy(dma), DOCA_ERROR_BAD_STATE);
	err = doca_ctx_stop(ctx);
	assert_true(err == DOCA_SUCCESS || err == DOCA_ERROR_IN_PROGRESS);
	ctx_wait_idle(pe, ctx);
	assert_int_equal(doca_dma_destroy(dma), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

static const struct CMUnitTest lifecycle_tests[] = {
	cmocka_unit_test(test_dev_close_twice),
	cmocka_unit_test(test_mmap_destroy_with_bufs),
	cmocka_unit_test(test_inventory_destroy_with_bufs),
	cmocka_unit_test(test_buf_dec_refcount_at_zero),
	cmocka_unit_test(test_pe_destroy_with_ctx),
	cmocka_unit_test(test_rdma_destroy_running),
	cmocka_unit_test(test_dma_destroy_running),
};

static void fixtures_create(void)
{
	uint32_t nb = 0;

	if (doca_devinfo_create_list(&fx.list, &nb) != DOCA_SUCCESS || nb == 0 ||
	    doca_dev_open(fx.list[0], &fx.dev) != DOCA_SUCCESS) {
		fprintf(stderr, "no soft device\n");
		exit(1);
	}
	fx.devinfo = fx.list[0];
	if (doca_mmap_create(&fx.mmap) != DOCA_SUCCESS || doca_mmap_create(&fx.buf_mmap) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(fx.buf_mmap, mem, sizeof(mem)) != DOCA_SUCCESS ||
	    doca_mmap_add_dev(fx.buf_mmap, fx.dev) != DOCA_SUCCESS || doca_mmap_start(fx.buf_mmap) != DOCA_SUCCESS ||
	    doca_buf_inventory_create(8, &fx.buf_inventory) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(fx.buf_inventory) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_get_by_addr(fx.buf_inventory, fx.buf_mmap, mem, 64, &fx.buf) != DOCA_SUCCESS ||
	    doca_pe_create(&fx.pe) != DOCA_SUCCESS || doca_dma_create(fx.dev, &fx.dma) != DOCA_SUCCESS ||
	    doca_rdma_create(fx.dev, &fx.rdma) != DOCA_SUCCESS || doca_sync_event_create(&fx.sync_event) != DOCA_SUCCESS ||
	    doca_argp_init("test_null_args", scratch) != DOCA_SUCCESS ||
	    doca_argp_param_create(&fx.argp_param) != DOCA_SUCCESS ||
	    doca_argp_cmd_create(&fx.argp_cmd) != DOCA_SUCCESS ||
	    doca_mmap_advise_create(fx.dev, &fx.mmap_advise) != DOCA_SUCCESS ||
	    doca_buf_arr_create(4, &fx.buf_arr) != DOCA_SUCCESS || doca_clock_create(fx.dev, &fx.clock) != DOCA_SUCCESS ||
	    doca_compress_create(fx.dev, &fx.compress) != DOCA_SUCCESS || doca_ec_create(fx.dev, &fx.ec) != DOCA_SUCCESS) {
		fprintf(stderr, "fixture setup failed\n");
		exit(1);
	}
	fx.ctx = doca_dma_as_ctx(fx.dma);
}

static void on_memcpy(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	(void)task;
	(void)tud;
	(void)cud;
}

static void on_invalidate(struct doca_mmap_advise_task_invalidate_cache *task, union doca_data tud,
			  union doca_data cud)
{
	(void)task;
	(void)tud;
	(void)cud;
}

static void on_send(struct doca_rdma_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)task;
	(void)tud;
	(void)cud;
}

static void on_receive(struct doca_rdma_task_receive *task, union doca_data tud, union doca_data cud)
{
	(void)task;
	(void)tud;
	(void)cud;
}

static void on_write(struct doca_rdma_task_write *task, union doca_data tud, union doca_data cud)
{
	(void)task;
	(void)tud;
	(void)cud;
}

/* The same objects, started: the DMA, RDMA and sync event contexts RUNNING,
 * a task of each configured type allocated and one connection exported. */
static void fixtures_start(void)
{
	union doca_data ud = {.u64 = 0};
	const void *details = NULL;
	size_t details_len = 0;
	struct doca_ctx *rctx = doca_rdma_as_ctx(fx.rdma);
	struct doca_ctx *actx = doca_mmap_advise_as_ctx(fx.mmap_advise);

	if (doca_dma_task_memcpy_set_conf(fx.dma, on_memcpy, on_memcpy, 4) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(fx.pe, fx.ctx) != DOCA_SUCCESS || doca_ctx_start(fx.ctx) != DOCA_SUCCESS ||
	    doca_rdma_task_send_set_conf(fx.rdma, on_send, on_send, 4) != DOCA_SUCCESS ||
	    doca_rdma_task_receive_set_conf(fx.rdma, on_receive, on_receive, 4) != DOCA_SUCCESS ||
	    doca_rdma_task_write_set_conf(fx.rdma, on_write, on_write, 4) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(fx.pe, rctx) != DOCA_SUCCESS || doca_ctx_start(rctx) != DOCA_SUCCESS ||
	    doca_rdma_export(fx.rdma, &details, &details_len, &fx.rdma_connection) != DOCA_SUCCESS ||
	    doca_sync_event_add_publisher_location_cpu(fx.sync_event, fx.dev) != DOCA_SUCCESS ||
	    doca_sync_event_add_subscriber_location_cpu(fx.sync_event, fx.dev) != DOCA_SUCCESS ||
	    doca_pe_connect_ctx(fx.pe, doca_sync_event_as_ctx(fx.sync_event)) != DOCA_SUCCESS ||
	    doca_ctx_start(doca_sync_event_as_ctx(fx.sync_event)) != DOCA_SUCCESS ||
	    doca_dma_task_memcpy_alloc_init(fx.dma, fx.buf, fx.buf, ud, &fx.dma_task_memcpy) != DOCA_SUCCESS ||
	    doca_rdma_task_send_allocate_init(fx.rdma, fx.rdma_connection, fx.buf, ud, &fx.rdma_task_send) !=
		    DOCA_SUCCESS ||
	    doca_rdma_task_receive_allocate_init(fx.rdma, fx.buf, ud, &fx.rdma_task_receive) != DOCA_SUCCESS ||
	    doca_rdma_task_write_allocate_init(fx.rdma, fx.rdma_connection, fx.buf, fx.buf, ud,
					       &fx.rdma_task_write) != DOCA_SUCCESS ||
	    doca_mmap_advise_task_invalidate_cache_set_conf(fx.mmap_advise, on_invalidate, on_invalidate, 4) !=
		    DOCA_SUCCESS ||
	    doca_pe_connect_ctx(fx.pe, actx) != DOCA_SUCCESS || doca_ctx_start(actx) != DOCA_SUCCESS ||
	    doca_mmap_advise_task_invalidate_cache_alloc_init(fx.mmap_advise, fx.buf, ud,
							      &fx.mmap_advise_task_invalidate_cache) != DOCA_SUCCESS) {
		fprintf(stderr, "running fixture setup failed\n");
		exit(1);
	}
	fx.task = doca_dma_task_memcpy_as_task(fx.dma_task_memcpy);
	fx_running = true;
}

static void fixture_ctx_stop(struct doca_ctx *ctx)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	(void)doca_ctx_stop(ctx);
	for (int i = 0; i < 100000 && st != DOCA_CTX_STATE_IDLE; i++) {
		(void)doca_pe_progress(fx.pe);
		if (doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS)
			break;
	}
}

/* Everything the fixtures hold goes, so that LeakSanitizer sees no leak. */
static int fixtures_destroy(void)
{
	int bad = 0;

	doca_task_free(fx.task);
	doca_task_free(doca_rdma_task_send_as_task(fx.rdma_task_send));
	doca_task_free(doca_rdma_task_receive_as_task(fx.rdma_task_receive));
	doca_task_free(doca_rdma_task_write_as_task(fx.rdma_task_write));
	doca_task_free(doca_mmap_advise_task_invalidate_cache_as_doca_task(fx.mmap_advise_task_invalidate_cache));
	fixture_ctx_stop(fx.ctx);
	fixture_ctx_stop(doca_rdma_as_ctx(fx.rdma));
	fixture_ctx_stop(doca_sync_event_as_ctx(fx.sync_event));
	fixture_ctx_stop(doca_mmap_advise_as_ctx(fx.mmap_advise));
	bad += doca_mmap_advise_destroy(fx.mmap_advise) != DOCA_SUCCESS;
	bad += doca_buf_arr_destroy(fx.buf_arr) != DOCA_SUCCESS;
	bad += doca_clock_destroy(fx.clock) != DOCA_SUCCESS;
	bad += doca_compress_destroy(fx.compress) != DOCA_SUCCESS;
	bad += doca_ec_destroy(fx.ec) != DOCA_SUCCESS;
	bad += doca_dma_destroy(fx.dma) != DOCA_SUCCESS;
	bad += doca_rdma_destroy(fx.rdma) != DOCA_SUCCESS;
	bad += doca_sync_event_destroy(fx.sync_event) != DOCA_SUCCESS;
	bad += doca_pe_destroy(fx.pe) != DOCA_SUCCESS;
	bad += doca_buf_dec_refcount(fx.buf, NULL) != DOCA_SUCCESS;
	bad += doca_buf_inventory_destroy(fx.buf_inventory) != DOCA_SUCCESS;
	bad += doca_mmap_destroy(fx.buf_mmap) != DOCA_SUCCESS;
	bad += doca_mmap_destroy(fx.mmap) != DOCA_SUCCESS;
	bad += doca_argp_destroy() != DOCA_SUCCESS;
	bad += doca_dev_close(fx.dev) != DOCA_SUCCESS;
	bad += doca_devinfo_destroy_list(fx.list) != DOCA_SUCCESS;
	if (bad != 0)
		fprintf(stderr, "%d fixture teardown step(s) failed\n", bad);
	return bad;
}

/* UBSan reports and continues by default: a report in the child's log
 * fails the function as a crash would. */
static void nc_check_sanitizer_report(const char *name)
{
	char line[512];
	FILE *log;

	if (!nc_log_check)
		return;
	log = fdopen(dup(STDERR_FILENO), "r");
	if (log == NULL)
		return;
	rewind(log);
	while (fgets(line, sizeof(line), log) != NULL) {
		if (strstr(line, "runtime error:") != NULL || strstr(line, "Sanitizer") != NULL) {
			printf("FAIL %s: sanitizer: %s", name, line);
			nc_failures++;
			break;
		}
	}
	fclose(log);
}

/* One function's cases in a child: a crash or a wrong answer fails it alone,
 * and whatever a call did to the fixtures dies with the child. */
static void run_case(void **state)
{
	const struct nc_case *c = *state;
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (getenv("NULL_ARGS_VERBOSE") == NULL) {
			FILE *log = tmpfile();

			if (log == NULL || dup2(fileno(log), STDERR_FILENO) < 0)
				_exit(3);
			nc_log_check = true;
		}
		c->run();
		nc_check_sanitizer_report(c->name);
		fflush(stdout);
		_exit(nc_failures == 0 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		printf("CRASH %s: signal %d\n", c->name, WTERMSIG(status));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv)
{
	size_t n = sizeof(nc_cases) / sizeof(nc_cases[0]);
	struct CMUnitTest *tests;
	int rc;

	if (argc > 1 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", nc_cases[i].name);
		return 0;
	}
	/* the log-line check needs SDK errors logged, whatever DOCA_LOG_LEVEL says */
	if (doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_WARNING) != DOCA_SUCCESS)
		return 1;
	rc = cmocka_run_group_tests_name("lifecycle", lifecycle_tests, NULL, NULL);
	fixtures_create();
	tests = calloc(n, sizeof(*tests));
	if (tests == NULL)
		return 1;
	for (size_t i = 0; i < n; i++) {
		tests[i].name = nc_cases[i].name;
		tests[i].test_func = run_case;
		tests[i].initial_state = (void *)&nc_cases[i];
	}
	rc += _cmocka_run_group_tests("null_args_idle", tests, n, NULL, NULL);
	fixtures_start();
	rc += _cmocka_run_group_tests("null_args_running", tests, n, NULL, NULL);
	rc += fixtures_destroy();
	free(tests);
	return rc;
}
