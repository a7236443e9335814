/*
 * Unit tests of sync events: life cycle and configuration errors, get /
 * set / add, waits woken by other threads (synchronous updates and the
 * engine's reference API), mask semantics, value storage in caller memory,
 * remote_net export and create-from-export, the strict descriptor parser,
 * the table lookup with its revocation, and the context mode with tasks.
 *
 * Every failing call must also leave an ERROR line in the SDK log; library
 * messages are captured with a buffer SDK backend.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_sync_event.h>

#include "sync_event.h"

/* ---- SDK log capture ------------------------------------------------- */

static char log_line[2048];
static atomic_int error_lines;

static void log_flush(char *line)
{
	if (strstr(line, "[ERROR]") != NULL)
		atomic_fetch_add(&error_lines, 1);
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
		int before_ = atomic_load(&error_lines); \
		assert_int_equal((expr), (code)); \
		assert_true(atomic_load(&error_lines) > before_); \
	} while (0)

/* The call succeeds without logging an error. */
#define assert_ok(expr) \
	do { \
		int before_ = atomic_load(&error_lines); \
		assert_int_equal((expr), DOCA_SUCCESS); \
		assert_int_equal(atomic_load(&error_lines), before_); \
	} while (0)

/* A capability query that says "not supported" as an answer, not an
 * error: no ERROR line. */
#define assert_answer_no(expr) \
	do { \
		int before_ = atomic_load(&error_lines); \
		assert_int_equal((expr), DOCA_ERROR_NOT_SUPPORTED); \
		assert_int_equal(atomic_load(&error_lines), before_); \
	} while (0)

/* ---- devices ----------------------------------------------------------- */

static struct doca_devinfo **dev_list;
static struct doca_dev *dev;

static int group_setup(void **state)
{
	uint32_t nb = 0;

	(void)state;
	log_capture_init();
	if (doca_devinfo_create_list(&dev_list, &nb) != DOCA_SUCCESS || nb == 0 ||
	    doca_dev_open(dev_list[0], &dev) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (dev != NULL)
		doca_dev_close(dev);
	if (dev_list != NULL)
		doca_devinfo_destroy_list(dev_list);
	return 0;
}

/* A started CPU -> CPU event. */
static struct doca_sync_event *cpu_event(void)
{
	struct doca_sync_event *ev;

	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_add_publisher_location_cpu(ev, dev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_ok(doca_sync_event_start(ev));
	return ev;
}

/* A started event a remote peer publishes to, as the responder sample
 * makes it. */
static struct doca_sync_event *remote_event(void)
{
	struct doca_sync_event *ev;

	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_add_publisher_location_remote_net(ev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_ok(doca_sync_event_start(ev));
	return ev;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- waiter threads ------------------------------------------------------ */

typedef doca_error_t (*wait_fn_t)(struct doca_sync_event *, uint64_t, uint64_t);

struct waiter {
	struct doca_sync_event *ev;
	wait_fn_t fn;
	uint64_t value;
	uint64_t mask;
	atomic_int started;
	atomic_int done;
	atomic_long tid;
	doca_error_t result;
	pthread_t thread;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->tid, (long)syscall(SYS_gettid));
	atomic_store(&w->started, 1);
	w->result = w->fn(w->ev, w->value, w->mask);
	atomic_store(&w->done, 1);
	return NULL;
}

/* The thread's scheduler state from /proc: 'S' while it sleeps. */
static char thread_state(long tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
	f = fopen(path, "r");
	if (f == NULL)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && p[1] == ' ' ? p[2] : '?';
}

/* Start a waiter and return once it runs. Then give it a chance to reach
 * its sleep, which is what these tests want to wake: poll its state for a
 * while (correctness never depends on it being asleep). */
static void waiter_start(struct waiter *w, struct doca_sync_event *ev, wait_fn_t fn, uint64_t value, uint64_t mask)
{
	struct timespec t0, now;

	w->ev = ev;
	w->fn = fn;
	w->value = value;
	w->mask = mask;
	atomic_store(&w->started, 0);
	atomic_store(&w->done, 0);
	w->result = DOCA_ERROR_UNKNOWN;
	assert_int_equal(pthread_create(&w->thread, NULL, waiter_main, w), 0);
	while (!atomic_load(&w->started))
		sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (thread_state(atomic_load(&w->tid)) == 'S' || atomic_load(&w->done))
			break;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - t0.tv_sec < 2);
}

static doca_error_t waiter_join(struct waiter *w)
{
	assert_int_equal(pthread_join(w->thread, NULL), 0);
	assert_int_equal(atomic_load(&w->done), 1);
	return w->result;
}

/* ---- life cycle ------------------------------------------------------------ */

static void test_create_destroy(void **state)
{
	struct doca_sync_event *ev;

	(void)state;
	assert_fails(doca_sync_event_create(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_destroy(ev));

	/* Destroy stops a started event. */
	ev = cpu_event();
	assert_ok(doca_sync_event_destroy(ev));
}

static void test_lifecycle_errors(void **state)
{
	struct doca_sync_event *ev;
	uint64_t v = 99, fetched;

	(void)state;
	assert_ok(doca_sync_event_create(&ev));

	/* Nothing runs before start. */
	assert_fails(doca_sync_event_get(ev, &v), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_update_set(ev, 1), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_update_add(ev, 1, &fetched), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_wait_gt(ev, 0, UINT64_MAX), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_wait_eq_yield(ev, 0, UINT64_MAX), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_stop(ev), DOCA_ERROR_BAD_STATE);
	assert_int_equal(v, 99);

	/* Start needs both locations. */
	assert_fails(doca_sync_event_start(ev), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_add_publisher_location_cpu(ev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_add_publisher_location_cpu(NULL, dev), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_add_publisher_location_remote_net(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_add_subscriber_location_cpu(ev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_sync_event_add_publisher_location_cpu(ev, dev));
	assert_fails(doca_sync_event_start(ev), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_add_publisher_location_remote_net(ev), DOCA_ERROR_ALREADY_EXIST);
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_fails(doca_sync_event_add_subscriber_location_cpu(ev, dev), DOCA_ERROR_ALREADY_EXIST);
	assert_fails(doca_sync_event_start(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_sync_event_start(ev));

	/* Configuration is closed while started. */
	assert_fails(doca_sync_event_start(ev), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_set_addr(ev, &v), DOCA_ERROR_BAD_STATE);
	assert_null(doca_sync_event_as_ctx(ev));

	/* The value starts at 0 and survives a restart. */
	assert_ok(doca_sync_event_get(ev, &v));
	assert_int_equal(v, 0);
	assert_ok(doca_sync_event_update_set(ev, 41));
	assert_fails(doca_sync_event_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_sync_event_stop(ev));
	assert_fails(doca_sync_event_stop(ev), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_get(ev, &v), DOCA_ERROR_BAD_STATE);
	/* A standalone event never becomes a context, even stopped. */
	assert_null(doca_sync_event_as_ctx(ev));
	assert_ok(doca_sync_event_start(ev));
	assert_ok(doca_sync_event_get(ev, &v));
	assert_int_equal(v, 41);
	assert_ok(doca_sync_event_stop(ev));
	assert_ok(doca_sync_event_destroy(ev));
}

static void test_holds_device(void **state)
{
	struct doca_sync_event *ev = cpu_event();

	(void)state;
	/* The event holds its device: closing it under the event fails. */
	assert_fails(doca_dev_close(dev), DOCA_ERROR_IN_USE);
	assert_ok(doca_sync_event_destroy(ev));
}

/* ---- values ------------------------------------------------------------------ */

static void test_get_set_add(void **state)
{
	struct doca_sync_event *ev = cpu_event();
	uint64_t v, fetched = 0;

	(void)state;
	assert_fails(doca_sync_event_get(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_get(ev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_update_set(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_update_add(ev, 1, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_update_add(NULL, 1, &fetched), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_sync_event_update_set(ev, 0x1122334455667788ULL));
	assert_ok(doca_sync_event_get(ev, &v));
	assert_int_equal(v, 0x1122334455667788ULL);
	assert_ok(doca_sync_event_update_add(ev, 8, &fetched));
	assert_int_equal(fetched, 0x1122334455667788ULL);
	assert_ok(doca_sync_event_get(ev, &v));
	assert_int_equal(v, 0x1122334455667790ULL);

	/* Addition wraps. */
	assert_ok(doca_sync_event_update_set(ev, UINT64_MAX));
	assert_ok(doca_sync_event_update_add(ev, 2, &fetched));
	assert_int_equal(fetched, UINT64_MAX);
	assert_ok(doca_sync_event_get(ev, &v));
	assert_int_equal(v, 1);
	assert_ok(doca_sync_event_destroy(ev));
}

static void test_wait_masks(void **state)
{
	struct doca_sync_event *ev = cpu_event();

	(void)state;
	assert_ok(doca_sync_event_update_set(ev, 0xAB00000000000005ULL));

	/* Conditions that hold already return at once. */
	assert_ok(doca_sync_event_wait_gt(ev, 4, 0xff));
	assert_ok(doca_sync_event_wait_gt_yield(ev, 0xAA00000000000000ULL, 0xff00000000000000ULL));
	assert_ok(doca_sync_event_wait_eq(ev, 5, 0xff));
	assert_ok(doca_sync_event_wait_eq_yield(ev, 0xAB00000000000000ULL, 0xff00000000000000ULL));
	assert_ok(doca_sync_event_wait_eq(ev, 0, 0)); /* mask 0: (v & 0) == 0 */
	assert_ok(doca_sync_event_wait_neq(ev, 4, 0xff));
	assert_ok(doca_sync_event_wait_neq_yield(ev, 0xAB00000000000005ULL, 0xff)); /* 5 != whole value */
	assert_ok(doca_sync_event_wait_neq(ev, 7, 0)); /* (v & 0) is 0, never 7 */

	/* Conditions that can never hold are refused instead of hanging. */
	assert_fails(doca_sync_event_wait_gt(ev, 0xff, 0xff), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_wait_gt(ev, UINT64_MAX, UINT64_MAX), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_wait_gt(ev, 0, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_wait_eq(ev, 0x100, 0xff), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_wait_eq_yield(ev, 1, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_wait_neq(ev, 0, 0), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_wait_neq_yield(NULL, 1, 1), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_sync_event_destroy(ev));
}

/* Each wait call, woken by an update from this thread after the waiter
 * blocked; the first update changes only bits outside the mask or keeps
 * the condition false, the second satisfies it. */
static void test_waits_woken_by_update(void **state)
{
	static const struct {
		wait_fn_t fn;
		uint64_t start, wait_value, mask, miss, hit;
	} cases[] = {
		{doca_sync_event_wait_gt, 0, 10, UINT64_MAX, 10, 11},
		{doca_sync_event_wait_gt_yield, 0, 10, UINT64_MAX, 3, 1000},
		{doca_sync_event_wait_gt, 0, 0x0f, 0xff, 0xff00, 0x10},
		{doca_sync_event_wait_eq, 1, 7, 0xff, 0x1007 & ~0xffULL, 0x5507},
		{doca_sync_event_wait_eq_yield, 1, 7, UINT64_MAX, 8, 7},
		{doca_sync_event_wait_neq, 5, 5, 0xff, 0x1005, 0x1006},
		{doca_sync_event_wait_neq_yield, 5, 5, UINT64_MAX, 5, 6},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doca_sync_event *ev = cpu_event();
		struct waiter w;
		uint64_t fetched;

		assert_ok(doca_sync_event_update_set(ev, cases[i].start));
		waiter_start(&w, ev, cases[i].fn, cases[i].wait_value, cases[i].mask);
		assert_int_equal(atomic_load(&w.done), 0);
		assert_ok(doca_sync_event_update_set(ev, cases[i].miss));
		assert_int_equal(atomic_load(&w.done), 0);
		if (i == 1) /* an add wakes as well */
			assert_ok(doca_sync_event_update_add(ev, cases[i].hit - cases[i].miss, &fetched));
		else
			assert_ok(doca_sync_event_update_set(ev, cases[i].hit));
		assert_int_equal(waiter_join(&w), DOCA_SUCCESS);
		assert_ok(doca_sync_event_destroy(ev));
	}
}

static void test_many_waiters(void **state)
{
	struct doca_sync_event *ev = cpu_event();
	struct waiter w[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		waiter_start(&w[i], ev, i % 2 ? doca_sync_event_wait_gt : doca_sync_event_wait_eq_yield, i % 2 ? 0 : 1,
			     UINT64_MAX);
	assert_ok(doca_sync_event_update_set(ev, 1));
	for (int i = 0; i < 4; i++)
		assert_int_equal(waiter_join(&w[i]), DOCA_SUCCESS);
	assert_ok(doca_sync_event_destroy(ev));
}

static void test_stop_releases_waiter(void **state)
{
	struct doca_sync_event *ev = cpu_event();
	struct waiter w;

	(void)state;
	waiter_start(&w, ev, doca_sync_event_wait_gt, 5, UINT64_MAX);
	/* The waiter logs why it returns: not assert_ok. */
	assert_int_equal(doca_sync_event_stop(ev), DOCA_SUCCESS);
	assert_int_equal(waiter_join(&w), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_sync_event_destroy(ev));
}

static void test_set_addr(void **state)
{
	uint64_t storage[2] = {0, 0};
	uint64_t v;
	struct doca_sync_event *ev;
	struct waiter w;

	(void)state;
	assert_ok(doca_sync_event_create(&ev));
	assert_fails(doca_sync_event_set_addr(ev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_set_addr(NULL, storage), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_set_addr(ev, (uint64_t *)((char *)storage + 4)), DOCA_ERROR_INVALID_VALUE);
	storage[1] = 17;
	assert_ok(doca_sync_event_set_addr(ev, &storage[1]));
	assert_ok(doca_sync_event_add_publisher_location_cpu(ev, dev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_ok(doca_sync_event_start(ev));

	/* The value is the caller's memory, both ways. */
	assert_ok(doca_sync_event_get(ev, &v));
	assert_int_equal(v, 17);
	assert_ok(doca_sync_event_update_set(ev, 23));
	assert_int_equal(storage[1], 23);

	/* A write that bypasses the API still ends a wait. */
	waiter_start(&w, ev, doca_sync_event_wait_eq, 24, UINT64_MAX);
	__atomic_store_n(&storage[1], 24, __ATOMIC_SEQ_CST);
	assert_int_equal(waiter_join(&w), DOCA_SUCCESS);
	assert_ok(doca_sync_event_destroy(ev));
	assert_int_equal(storage[0], 0);
}

static void test_set_doca_buf(void **state)
{
	static uint64_t mem[8] __attribute__((aligned(64)));
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *buf8, *buf16;
	struct doca_sync_event *ev;
	uint64_t v;

	(void)state;
	assert_ok(doca_mmap_create(&mmap));
	assert_ok(doca_mmap_set_memrange(mmap, mem, sizeof(mem)));
	assert_ok(doca_mmap_add_dev(mmap, dev));
	assert_ok(doca_mmap_start(mmap));
	assert_ok(doca_buf_inventory_create(4, &inv));
	assert_ok(doca_buf_inventory_start(inv));
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, mmap, &mem[2], 8, &buf8));
	assert_ok(doca_buf_inventory_buf_get_by_data(inv, mmap, &mem[4], 16, &buf16));

	assert_ok(doca_sync_event_create(&ev));
	assert_fails(doca_sync_event_set_doca_buf(ev, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_set_doca_buf(ev, buf16), DOCA_ERROR_NOT_PERMITTED);
	mem[2] = 5;
	assert_ok(doca_sync_event_set_doca_buf(ev, buf8));
	/* The event keeps the buf: the caller's release does not free it. */
	assert_ok(doca_buf_dec_refcount(buf8, NULL));
	assert_ok(doca_sync_event_add_publisher_location_cpu(ev, dev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_ok(doca_sync_event_start(ev));
	assert_ok(doca_sync_event_get(ev, &v));
	assert_int_equal(v, 5);
	assert_ok(doca_sync_event_update_set(ev, 6));
	assert_int_equal(mem[2], 6);
	assert_ok(doca_sync_event_destroy(ev));

	assert_ok(doca_buf_dec_refcount(buf16, NULL));
	assert_ok(doca_buf_inventory_stop(inv));
	assert_ok(doca_buf_inventory_destroy(inv));
	/* No buf is left on the mmap: the event dropped its reference. */
	assert_ok(doca_mmap_stop(mmap));
	assert_ok(doca_mmap_destroy(mmap));
}

/* ---- export and descriptors ---------------------------------------------------- */

static void test_export_rules(void **state)
{
	struct doca_sync_event *ev;
	const uint8_t *data = NULL;
	size_t sz = 0;

	(void)state;
	/* Only a started event with a remote_net publisher. */
	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_add_publisher_location_remote_net(ev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	assert_fails(doca_sync_event_export_to_remote_net(ev, &data, &sz), DOCA_ERROR_BAD_STATE);
	assert_ok(doca_sync_event_start(ev));
	assert_fails(doca_sync_event_export_to_remote_net(NULL, &data, &sz), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_export_to_remote_net(ev, NULL, &sz), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_export_to_remote_net(ev, &data, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_sync_event_destroy(ev));

	ev = cpu_event();
	assert_fails(doca_sync_event_export_to_remote_net(ev, &data, &sz), DOCA_ERROR_NOT_PERMITTED);
	assert_null(data);
	assert_ok(doca_sync_event_destroy(ev));
}

static void test_round_trip(void **state)
{
	struct doca_sync_event *ev = remote_event();
	struct doca_sync_event_remote_net *remote;
	struct softdoca_sync_event_desc d;
	struct softdoca_sync_event_ref ref = {0};
	const uint8_t *data, *again;
	uint8_t secret[SOFTDOCA_SYNC_EVENT_SECRET_LEN];
	uint64_t id, v;
	size_t sz, sz2;

	(void)state;
	assert_ok(doca_sync_event_export_to_remote_net(ev, &data, &sz));
	assert_int_equal(sz, SOFTDOCA_SYNC_EVENT_DESC_LEN);
	assert_memory_equal(data, "SDSE", 4);
	assert_ok(doca_sync_event_export_to_remote_net(ev, &again, &sz2));
	assert_ptr_equal(again, data);
	assert_int_equal(sz2, sz);

	assert_ok(softdoca_sync_event_desc_parse(data, sz, &d));
	assert_int_equal(d.version, SOFTDOCA_SYNC_EVENT_DESC_VERSION);
	assert_int_equal(d.event_id, get_le64(data + 16));
	assert_int_equal(d.pid, (uint32_t)getpid());
	assert_memory_equal(d.secret, data + 24, SOFTDOCA_SYNC_EVENT_SECRET_LEN);

	/* The peer side. */
	assert_fails(doca_sync_event_remote_net_create_from_export(NULL, data, sz, &remote), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_remote_net_create_from_export(dev, NULL, sz, &remote), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_remote_net_create_from_export(dev, data, sz, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_sync_event_remote_net_create_from_export(dev, data, sz, &remote));
	assert_ok(softdoca_sync_event_remote_info(remote, &id, secret));
	assert_int_equal(id, d.event_id);
	assert_memory_equal(secret, d.secret, sizeof(secret));
	assert_fails(softdoca_sync_event_remote_info(NULL, &id, secret), DOCA_ERROR_INVALID_VALUE);
	assert_fails(softdoca_sync_event_remote_info(remote, NULL, secret), DOCA_ERROR_INVALID_VALUE);

	/* What the engine does with it on the exporting side. */
	assert_ok(softdoca_sync_event_lookup(id, secret, &ref));
	assert_non_null(ref.event);
	softdoca_sync_event_ref_set(&ref, 77);
	assert_ok(doca_sync_event_get(ev, &v));
	assert_int_equal(v, 77);
	assert_int_equal(softdoca_sync_event_ref_add(&ref, 3), 77);
	assert_int_equal(softdoca_sync_event_ref_get(&ref), 80);
	assert_ok(doca_sync_event_update_set(ev, 90));
	assert_int_equal(softdoca_sync_event_ref_get(&ref), 90);
	softdoca_sync_event_release(&ref);
	assert_null(ref.event);
	softdoca_sync_event_release(&ref); /* second release: no-op */
	assert_int_equal(softdoca_sync_event_ref_get(&ref), 0);

	assert_fails(doca_sync_event_remote_net_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(doca_sync_event_remote_net_destroy(remote));
	assert_ok(doca_sync_event_stop(ev));
	assert_ok(doca_sync_event_destroy(ev));
}

/* A valid descriptor built by hand, field by field. */
static void build_desc(uint8_t d[SOFTDOCA_SYNC_EVENT_DESC_LEN])
{
	memcpy(d, "SDSE", 4);
	put_le(d + 4, 1, 2);
	put_le(d + 6, 0, 2);
	put_le(d + 8, SOFTDOCA_SYNC_EVENT_DESC_LEN, 4);
	put_le(d + 12, 1234, 4);
	put_le(d + 16, 42, 8);
	for (int i = 0; i < SOFTDOCA_SYNC_EVENT_SECRET_LEN; i++)
		d[24 + i] = (uint8_t)(i + 1);
	put_le(d + 40, 0x0102030405060708ULL, 8);
}

static void expect_reject(const uint8_t *desc, size_t len, doca_error_t code)
{
	struct softdoca_sync_event_desc parsed;
	struct doca_sync_event_remote_net *remote = NULL;

	assert_fails(softdoca_sync_event_desc_parse(desc, len, &parsed), code);
	assert_fails(doca_sync_event_remote_net_create_from_export(dev, desc, len, &remote), code);
	assert_null(remote);
}

static void test_desc_fields(void **state)
{
	uint8_t good[SOFTDOCA_SYNC_EVENT_DESC_LEN], m[SOFTDOCA_SYNC_EVENT_DESC_LEN];
	struct softdoca_sync_event_desc parsed;

	(void)state;
	build_desc(good);
	assert_ok(softdoca_sync_event_desc_parse(good, sizeof(good), &parsed));
	assert_int_equal(parsed.event_id, 42);
	assert_int_equal(parsed.pid, 1234);
	assert_int_equal(parsed.process_nonce, 0x0102030405060708ULL);
	assert_int_equal(parsed.secret[15], 16);
	assert_fails(softdoca_sync_event_desc_parse(NULL, sizeof(good), &parsed), DOCA_ERROR_INVALID_VALUE);
	assert_fails(softdoca_sync_event_desc_parse(good, sizeof(good), NULL), DOCA_ERROR_INVALID_VALUE);

	memcpy(m, good, sizeof(m));
	m[0] = 'X'; /* magic */
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);
	memcpy(m, "SDMM", 4); /* an mmap descriptor is no sync event descriptor */
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);

	memcpy(m, good, sizeof(m));
	put_le(m + 4, 0, 2);
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);
	put_le(m + 4, 2, 2);
	expect_reject(m, sizeof(m), DOCA_ERROR_UNSUPPORTED_VERSION);

	memcpy(m, good, sizeof(m));
	put_le(m + 6, 1, 2); /* flags */
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);

	memcpy(m, good, sizeof(m));
	put_le(m + 8, SOFTDOCA_SYNC_EVENT_DESC_LEN + 1, 4); /* length field */
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);
	put_le(m + 8, 0xffffffffu, 4);
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);

	memcpy(m, good, sizeof(m));
	put_le(m + 12, 0, 4); /* pid */
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);
	put_le(m + 12, 0x80000000u, 4);
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);

	memcpy(m, good, sizeof(m));
	put_le(m + 16, 0, 8); /* event id */
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);

	memcpy(m, good, sizeof(m));
	memset(m + 24, 0, SOFTDOCA_SYNC_EVENT_SECRET_LEN); /* secret */
	expect_reject(m, sizeof(m), DOCA_ERROR_INVALID_VALUE);
}

static void test_desc_truncated(void **state)
{
	uint8_t good[SOFTDOCA_SYNC_EVENT_DESC_LEN];
	uint8_t padded[SOFTDOCA_SYNC_EVENT_DESC_LEN + 8];

	(void)state;
	build_desc(good);
	/* Every proper prefix, each in its own heap block so ASan sees any
	 * read past the end. */
	for (size_t len = 0; len < sizeof(good); len++) {
		uint8_t *copy = malloc(len + 1);

		assert_non_null(copy);
		memcpy(copy, good, len);
		expect_reject(copy, len, DOCA_ERROR_INVALID_VALUE);
		free(copy);
	}
	/* Extra bytes, with and without a matching length field. */
	memset(padded, 0, sizeof(padded));
	memcpy(padded, good, sizeof(good));
	expect_reject(padded, sizeof(padded), DOCA_ERROR_INVALID_VALUE);
	put_le(padded + 8, sizeof(padded), 4);
	expect_reject(padded, sizeof(padded), DOCA_ERROR_INVALID_VALUE);
}

static void test_desc_bit_flips(void **state)
{
	uint8_t good[SOFTDOCA_SYNC_EVENT_DESC_LEN], m[SOFTDOCA_SYNC_EVENT_DESC_LEN];
	struct softdoca_sync_event_desc parsed;
	int accepted = 0;

	(void)state;
	build_desc(good);
	/* Every single-bit change is either refused or parses to what the
	 * bytes say; nothing crashes. */
	for (size_t bit = 0; bit < sizeof(good) * 8; bit++) {
		doca_error_t err;

		memcpy(m, good, sizeof(m));
		m[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		err = softdoca_sync_event_desc_parse(m, sizeof(m), &parsed);
		if (err == DOCA_SUCCESS) {
			accepted++;
			assert_int_equal(parsed.event_id, get_le64(m + 16));
			assert_memory_equal(parsed.secret, m + 24, SOFTDOCA_SYNC_EVENT_SECRET_LEN);
		} else {
			assert_true(err == DOCA_ERROR_INVALID_VALUE || err == DOCA_ERROR_UNSUPPORTED_VERSION);
		}
	}
	/* Id, secret, pid and nonce bits are free to change. */
	assert_true(accepted > 0);
}

/* ---- the table ------------------------------------------------------------------ */

static void test_lookup(void **state)
{
	struct doca_sync_event *ev = remote_event();
	struct softdoca_sync_event_ref ref = {0};
	const uint8_t *data;
	uint8_t secret[SOFTDOCA_SYNC_EVENT_SECRET_LEN], bad[SOFTDOCA_SYNC_EVENT_SECRET_LEN];
	uint64_t id;
	size_t sz;

	(void)state;
	assert_ok(doca_sync_event_export_to_remote_net(ev, &data, &sz));
	id = get_le64(data + 16);
	memcpy(secret, data + 24, sizeof(secret));
	memcpy(bad, secret, sizeof(bad));
	bad[15] ^= 0x80;

	assert_fails(softdoca_sync_event_lookup(id, bad, &ref), DOCA_ERROR_AUTHENTICATION);
	assert_null(ref.event);
	assert_fails(softdoca_sync_event_lookup(id + 1000000, secret, &ref), DOCA_ERROR_NOT_FOUND);
	assert_fails(softdoca_sync_event_lookup(0, secret, &ref), DOCA_ERROR_NOT_FOUND);
	assert_fails(softdoca_sync_event_lookup(id, NULL, &ref), DOCA_ERROR_INVALID_VALUE);
	assert_fails(softdoca_sync_event_lookup(id, secret, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_ok(softdoca_sync_event_lookup(id, secret, &ref));
	softdoca_sync_event_release(&ref);

	/* Stop revokes; the export after a restart is a new event id and
	 * secret, and the old ones stay dead. */
	assert_ok(doca_sync_event_stop(ev));
	assert_fails(softdoca_sync_event_lookup(id, secret, &ref), DOCA_ERROR_NOT_FOUND);
	assert_ok(doca_sync_event_start(ev));
	assert_fails(softdoca_sync_event_lookup(id, secret, &ref), DOCA_ERROR_NOT_FOUND);
	assert_ok(doca_sync_event_export_to_remote_net(ev, &data, &sz));
	assert_int_not_equal(get_le64(data + 16), id);
	assert_memory_not_equal(data + 24, secret, sizeof(secret));
	assert_fails(softdoca_sync_event_lookup(id, secret, &ref), DOCA_ERROR_NOT_FOUND);
	id = get_le64(data + 16);
	memcpy(secret, data + 24, sizeof(secret));
	assert_ok(softdoca_sync_event_lookup(id, secret, &ref));
	softdoca_sync_event_release(&ref);

	/* Destroy revokes too. */
	assert_ok(doca_sync_event_destroy(ev));
	assert_fails(softdoca_sync_event_lookup(id, secret, &ref), DOCA_ERROR_NOT_FOUND);
}

static atomic_int stop_returned;

static void *stop_thread(void *arg)
{
	assert_int_equal(doca_sync_event_stop(arg), DOCA_SUCCESS);
	atomic_store(&stop_returned, 1);
	return NULL;
}

static void test_revoke_waits_for_holders(void **state)
{
	struct doca_sync_event *ev = remote_event();
	struct softdoca_sync_event_ref ref = {0}, probe = {0};
	const uint8_t *data;
	pthread_t thread;
	uint64_t id;
	size_t sz;

	(void)state;
	assert_ok(doca_sync_event_export_to_remote_net(ev, &data, &sz));
	id = get_le64(data + 16);
	assert_ok(softdoca_sync_event_lookup(id, data + 24, &ref));
	atomic_store(&stop_returned, 0);
	assert_int_equal(pthread_create(&thread, NULL, stop_thread, ev), 0);
	/* Once lookups fail the stopper has unlinked the event; it cannot
	 * return while we hold it. */
	while (softdoca_sync_event_lookup(id, data + 24, &probe) == DOCA_SUCCESS)
		softdoca_sync_event_release(&probe);
	assert_int_equal(atomic_load(&stop_returned), 0);
	/* The hold still works: the last remote update lands. */
	softdoca_sync_event_ref_set(&ref, 5);
	assert_int_equal(atomic_load(&stop_returned), 0);
	softdoca_sync_event_release(&ref);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(atomic_load(&stop_returned), 1);
	assert_ok(doca_sync_event_destroy(ev));
}

static void test_ref_wakes_waiter(void **state)
{
	struct doca_sync_event *ev = remote_event();
	struct softdoca_sync_event_ref ref = {0};
	const uint8_t *data;
	struct waiter w;
	size_t sz;

	(void)state;
	assert_ok(doca_sync_event_export_to_remote_net(ev, &data, &sz));
	assert_ok(softdoca_sync_event_lookup(get_le64(data + 16), data + 24, &ref));

	/* The responder sample's wait, ended by a remote notify_set. */
	waiter_start(&w, ev, doca_sync_event_wait_gt, 1, UINT64_MAX);
	softdoca_sync_event_ref_set(&ref, 1);
	assert_int_equal(atomic_load(&w.done), 0);
	softdoca_sync_event_ref_set(&ref, 2);
	assert_int_equal(waiter_join(&w), DOCA_SUCCESS);

	/* And by a remote notify_add. */
	waiter_start(&w, ev, doca_sync_event_wait_eq_yield, 12, UINT64_MAX);
	assert_int_equal(softdoca_sync_event_ref_add(&ref, 10), 2);
	assert_int_equal(waiter_join(&w), DOCA_SUCCESS);

	softdoca_sync_event_release(&ref);
	assert_ok(doca_sync_event_destroy(ev));
}

/* ---- not available on soft devices ------------------------------------------------ */

static void test_not_supported(void **state)
{
	const struct doca_devinfo *info = dev_list[0];
	struct doca_sync_event *ev, *imported;
	const uint8_t *data;
	size_t sz;
	doca_dpa_dev_sync_event_t dpa_handle;
	doca_gpu_dev_sync_event_t *gpu_handle;
	doca_dpa_dev_sync_event_remote_net_t dpa_remote;
	doca_gpu_dev_sync_event_remote_net_t gpu_remote;
	uint8_t blob[8] = {0};

	(void)state;
	assert_ok(doca_sync_event_cap_is_export_to_remote_net_supported(info));
	assert_ok(doca_sync_event_cap_remote_net_is_create_from_export_supported(info));
	assert_ok(doca_sync_event_cap_task_get_is_supported(info));
	assert_ok(doca_sync_event_cap_task_notify_set_is_supported(info));
	assert_ok(doca_sync_event_cap_task_notify_add_is_supported(info));
	assert_ok(doca_sync_event_cap_task_wait_eq_is_supported(info));
	assert_ok(doca_sync_event_cap_task_wait_neq_is_supported(info));
	assert_fails(doca_sync_event_cap_is_export_to_remote_net_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_cap_task_get_is_supported(NULL), DOCA_ERROR_INVALID_VALUE);

	/* Cap queries answer "no" without calling it an error. */
	/* PCI: to another process of this host (test_sync_event_pci). */
	assert_ok(doca_sync_event_cap_is_export_to_remote_pci_supported(info));
	assert_ok(doca_sync_event_cap_is_create_from_export_supported(info));
	assert_answer_no(doca_sync_event_cap_is_export_to_dpa_supported(info));
	assert_answer_no(doca_sync_event_cap_is_export_to_gpu_supported(info));
	assert_answer_no(doca_sync_event_cap_remote_net_is_export_to_dpa_supported(info));
	assert_answer_no(doca_sync_event_cap_remote_net_is_export_to_gpu_supported(info));
	assert_fails(doca_sync_event_cap_is_export_to_gpu_supported(NULL), DOCA_ERROR_INVALID_VALUE);

	assert_ok(doca_sync_event_create(&ev));
	assert_fails(doca_sync_event_add_publisher_location_dpa(ev, NULL), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_sync_event_add_subscriber_location_dpa(ev, NULL), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_sync_event_add_publisher_location_gpu(ev, NULL), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_sync_event_add_subscriber_location_gpu(ev, NULL), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_sync_event_export_to_remote_pci(ev, dev, &data, &sz), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_get_dpa_handle(ev, NULL, &dpa_handle), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_sync_event_get_gpu_handle(ev, NULL, &gpu_handle), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_sync_event_create_from_export(dev, blob, sizeof(blob), &imported), DOCA_ERROR_INVALID_VALUE);
	assert_fails(doca_sync_event_remote_net_get_dpa_handle(NULL, NULL, &dpa_remote), DOCA_ERROR_NOT_SUPPORTED);
	assert_fails(doca_sync_event_remote_net_get_gpu_handle(NULL, NULL, &gpu_remote), DOCA_ERROR_NOT_SUPPORTED);
	assert_ok(doca_sync_event_destroy(ev));
}

/* ---- context mode -------------------------------------------------------------------- */

struct ctx_env {
	struct doca_sync_event *ev;
	struct doca_ctx *ctx;
	struct doca_pe *pe;
	int ok_calls;
	int err_calls;
	doca_error_t last_status;
	struct doca_task *last_task;
};

static struct ctx_env C;

static void record(struct doca_task *task, bool ok)
{
	if (ok)
		C.ok_calls++;
	else
		C.err_calls++;
	C.last_status = doca_task_get_status(task);
	C.last_task = task;
	doca_task_free(task);
}

static void get_ok(struct doca_sync_event_task_get *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	assert_ptr_equal(cu.ptr, &C);
	record(doca_sync_event_task_get_as_doca_task(t), true);
}

static void get_err(struct doca_sync_event_task_get *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_get_as_doca_task(t), false);
}

static void set_ok(struct doca_sync_event_task_notify_set *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_notify_set_as_doca_task(t), true);
}

static void set_err(struct doca_sync_event_task_notify_set *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_notify_set_as_doca_task(t), false);
}

static void add_ok(struct doca_sync_event_task_notify_add *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_notify_add_as_doca_task(t), true);
}

static void add_err(struct doca_sync_event_task_notify_add *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_notify_add_as_doca_task(t), false);
}

static void eq_ok(struct doca_sync_event_task_wait_eq *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_wait_eq_as_doca_task(t), true);
}

static void eq_err(struct doca_sync_event_task_wait_eq *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_wait_eq_as_doca_task(t), false);
}

static void neq_ok(struct doca_sync_event_task_wait_neq *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_wait_neq_as_doca_task(t), true);
}

static void neq_err(struct doca_sync_event_task_wait_neq *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	record(doca_sync_event_task_wait_neq_as_doca_task(t), false);
}

/* Progress until n more callbacks ran (bounded, so a bug fails instead of
 * hanging). */
static void progress_until_calls(int n)
{
	int target = C.ok_calls + C.err_calls + n;

	for (long i = 0; i < 10000000 && C.ok_calls + C.err_calls < target; i++)
		(void)doca_pe_progress(C.pe);
	assert_int_equal(C.ok_calls + C.err_calls, target);
}

static int ctx_setup(void **state)
{
	union doca_data ud = {.ptr = &C};

	(void)state;
	memset(&C, 0, sizeof(C));
	assert_ok(doca_sync_event_create(&C.ev));
	assert_ok(doca_sync_event_add_publisher_location_cpu(C.ev, dev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(C.ev, dev));
	C.ctx = doca_sync_event_as_ctx(C.ev);
	assert_non_null(C.ctx);
	assert_ptr_equal(doca_sync_event_as_ctx(C.ev), C.ctx);
	assert_ok(doca_pe_create(&C.pe));
	assert_ok(doca_pe_connect_ctx(C.pe, C.ctx));
	assert_ok(doca_ctx_set_user_data(C.ctx, ud));
	assert_ok(doca_sync_event_task_get_set_conf(C.ev, get_ok, get_err, 4));
	assert_ok(doca_sync_event_task_notify_set_set_conf(C.ev, set_ok, set_err, 4));
	assert_ok(doca_sync_event_task_notify_add_set_conf(C.ev, add_ok, add_err, 4));
	assert_ok(doca_sync_event_task_wait_eq_set_conf(C.ev, eq_ok, eq_err, 4));
	assert_ok(doca_sync_event_task_wait_neq_set_conf(C.ev, neq_ok, neq_err, 4));
	assert_ok(doca_ctx_start(C.ctx));
	return 0;
}

static int ctx_teardown(void **state)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	(void)state;
	(void)doca_ctx_stop(C.ctx);
	for (long i = 0; i < 1000000 && st != DOCA_CTX_STATE_IDLE; i++) {
		(void)doca_pe_progress(C.pe);
		assert_int_equal(doca_ctx_get_state(C.ctx, &st), DOCA_SUCCESS);
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_sync_event_destroy(C.ev));
	assert_ok(doca_pe_destroy(C.pe));
	return 0;
}

/* NVIDIA's sync_event_local_pci/remote_pci with --async and no
 * --async-num-tasks configure every task type with 0 tasks, then allocate:
 * DOCA takes 0 (its header refuses only NULL), so each type gets a pool. */
static void test_ctx_zero_num_tasks(void **state)
{
	struct doca_sync_event *ev;
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	struct doca_sync_event_task_notify_set *set[17];
	struct doca_sync_event_task_wait_eq *eq;
	union doca_data ud = {.u64 = 1};
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;
	int n;

	(void)state;
	assert_ok(doca_sync_event_create(&ev));
	assert_ok(doca_sync_event_add_publisher_location_cpu(ev, dev));
	assert_ok(doca_sync_event_add_subscriber_location_cpu(ev, dev));
	ctx = doca_sync_event_as_ctx(ev);
	assert_ok(doca_pe_create(&pe));
	assert_ok(doca_pe_connect_ctx(pe, ctx));
	assert_ok(doca_sync_event_task_notify_set_set_conf(ev, set_ok, set_err, 0));
	assert_ok(doca_sync_event_task_wait_eq_set_conf(ev, eq_ok, eq_err, 0));
	assert_ok(doca_ctx_start(ctx));
	for (n = 0; n < 17; n++)
		if (doca_sync_event_task_notify_set_alloc_init(ev, 5, ud, &set[n]) != DOCA_SUCCESS)
			break;
	assert_true(n >= 1 && n < 17); /* a pool, and a bounded one */
	while (n-- > 0)
		doca_task_free(doca_sync_event_task_notify_set_as_doca_task(set[n]));
	assert_ok(doca_sync_event_task_wait_eq_alloc_init(ev, 0, UINT64_MAX, ud, &eq));
	doca_task_free(doca_sync_event_task_wait_eq_as_doca_task(eq));
	(void)doca_ctx_stop(ctx);
	for (long i = 0; i < 1000000 && st != DOCA_CTX_STATE_IDLE; i++) {
		(void)doca_pe_progress(pe);
		assert_ok(doca_ctx_get_state(ctx, &st));
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	assert_ok(doca_sync_event_destroy(ev));
	assert_ok(doca_pe_destroy(pe));
}

/* A wait task freed while it waits: the stop's flush releases it, no
 * callback runs, and the context goes idle (the sync event's flush path
 * completes every task in flight). */
static void test_ctx_free_waiting_task(void **state)
{
	struct doca_sync_event_task_wait_eq *eq;
	union doca_data ud = {.u64 = 1};
	enum doca_ctx_states st = DOCA_CTX_STATE_STOPPING;

	(void)state;
	assert_ok(doca_sync_event_task_wait_eq_alloc_init(C.ev, 99, UINT64_MAX, ud, &eq));
	assert_ok(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)));
	doca_task_free(doca_sync_event_task_wait_eq_as_doca_task(eq));
	assert_int_equal(doca_ctx_stop(C.ctx), DOCA_ERROR_IN_PROGRESS);
	for (long i = 0; i < 1000000 && st != DOCA_CTX_STATE_IDLE; i++) {
		(void)doca_pe_progress(C.pe);
		assert_ok(doca_ctx_get_state(C.ctx, &st));
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	assert_int_equal(C.ok_calls + C.err_calls, 0);
}

static void test_ctx_tasks(void **state)
{
	struct doca_sync_event_task_get *get;
	struct doca_sync_event_task_notify_set *set;
	struct doca_sync_event_task_notify_add *add;
	struct doca_sync_event_task_wait_eq *eq;
	struct doca_sync_event_task_wait_neq *neq;
	union doca_data ud = {.u64 = 7};
	uint64_t got = 0, fetched = 0, v;

	(void)state;
	/* A context event is never started standalone; configuration is
	 * closed while it runs. */
	assert_fails(doca_sync_event_start(C.ev), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_stop(C.ev), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_set_addr(C.ev, &v), DOCA_ERROR_BAD_STATE);
	assert_fails(doca_sync_event_task_get_set_conf(C.ev, get_ok, get_err, 4), DOCA_ERROR_NOT_PERMITTED);
	assert_fails(doca_sync_event_destroy(C.ev), DOCA_ERROR_BAD_STATE);

	assert_ok(doca_sync_event_task_notify_set_alloc_init(C.ev, 40, ud, &set));
	assert_int_equal(doca_sync_event_task_notify_set_get_set_val(set), 40);
	doca_sync_event_task_notify_set_set_set_val(set, 41);
	assert_ok(doca_task_submit(doca_sync_event_task_notify_set_as_doca_task(set)));
	progress_until_calls(1);
	assert_int_equal(C.ok_calls, 1);
	assert_ok(doca_sync_event_get(C.ev, &v));
	assert_int_equal(v, 41);

	assert_ok(doca_sync_event_task_get_alloc_init(C.ev, &got, ud, &get));
	assert_ptr_equal(doca_sync_event_task_get_get_ret_val_ptr(get), &got);
	assert_ok(doca_task_submit(doca_sync_event_task_get_as_doca_task(get)));
	progress_until_calls(1);
	assert_int_equal(got, 41);

	assert_ok(doca_sync_event_task_notify_add_alloc_init(C.ev, 9, &fetched, ud, &add));
	assert_int_equal(doca_sync_event_task_notify_add_get_inc_val(add), 9);
	assert_ptr_equal(doca_sync_event_task_notify_add_get_fetched_val_ptr(add), &fetched);
	assert_ok(doca_task_submit(doca_sync_event_task_notify_add_as_doca_task(add)));
	progress_until_calls(1);
	assert_int_equal(fetched, 41);
	assert_ok(doca_sync_event_get(C.ev, &v));
	assert_int_equal(v, 50);
	assert_int_equal(C.err_calls, 0);

	/* A wait task stays pending until an update makes it hold. */
	assert_ok(doca_sync_event_task_wait_eq_alloc_init(C.ev, 60, UINT64_MAX, ud, &eq));
	assert_int_equal(doca_sync_event_task_wait_eq_get_wait_val(eq), 60);
	assert_int_equal(doca_sync_event_task_wait_eq_get_mask(eq), UINT64_MAX);
	assert_ok(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)));
	for (int i = 0; i < 100; i++)
		(void)doca_pe_progress(C.pe);
	assert_int_equal(C.ok_calls, 3);
	assert_ok(doca_sync_event_update_set(C.ev, 60));
	progress_until_calls(1);
	assert_int_equal(C.ok_calls, 4);

	assert_ok(doca_sync_event_task_wait_neq_alloc_init(C.ev, 60, 0xff, ud, &neq));
	doca_sync_event_task_wait_neq_set_mask(neq, 0xffff);
	assert_int_equal(doca_sync_event_task_wait_neq_get_mask(neq), 0xffff);
	assert_ok(doca_task_submit(doca_sync_event_task_wait_neq_as_doca_task(neq)));
	assert_ok(doca_sync_event_update_set(C.ev, 0x10000 + 60)); /* outside the mask */
	for (int i = 0; i < 100; i++)
		(void)doca_pe_progress(C.pe);
	assert_int_equal(C.ok_calls, 4);
	assert_ok(doca_sync_event_update_set(C.ev, 0x100 + 60));
	progress_until_calls(1);
	assert_int_equal(C.ok_calls, 5);
	assert_int_equal(C.err_calls, 0);
}

static void test_ctx_bad_tasks(void **state)
{
	struct doca_sync_event_task_get *get;
	struct doca_sync_event_task_wait_eq *eq;
	union doca_data ud = {.u64 = 0};

	(void)state;
	/* try_submit checks: a bad mask, an impossible condition, a NULL
	 * result pointer. The task stays with the caller. */
	assert_ok(doca_sync_event_task_wait_eq_alloc_init(C.ev, 1, 0x00ff00ff, ud, &eq));
	assert_fails(doca_task_try_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)), DOCA_ERROR_INVALID_VALUE);
	doca_sync_event_task_wait_eq_set_mask(eq, 0xff00);
	assert_fails(doca_task_try_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)), DOCA_ERROR_INVALID_VALUE);
	doca_sync_event_task_wait_eq_set_wait_val(eq, 0x100);
	assert_ok(doca_task_try_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)));
	assert_ok(doca_sync_event_task_get_alloc_init(C.ev, NULL, ud, &get));
	assert_fails(doca_task_try_submit(doca_sync_event_task_get_as_doca_task(get)), DOCA_ERROR_INVALID_VALUE);

	/* Plain submit runs no checks: the task fails through its error
	 * callback. */
	assert_ok(doca_task_submit(doca_sync_event_task_get_as_doca_task(get)));
	progress_until_calls(1);
	assert_int_equal(C.err_calls, 1);
	assert_int_equal(C.last_status, DOCA_ERROR_INVALID_VALUE);

	/* Stop flushes the pending wait with an error. */
	assert_int_equal(doca_ctx_stop(C.ctx), DOCA_ERROR_IN_PROGRESS);
	progress_until_calls(1);
	assert_int_equal(C.err_calls, 2);
	assert_int_equal(C.last_status, DOCA_ERROR_IO_FAILED);
	assert_ptr_equal(C.last_task, doca_sync_event_task_wait_eq_as_doca_task(eq));
}

/* A pending wait task turns the PE's notification handle readable once an
 * update makes it hold. */
static void test_ctx_wait_notifies(void **state)
{
	struct doca_sync_event_task_wait_eq *eq;
	union doca_data ud = {.u64 = 0};
	doca_notification_handle_t h;
	struct pollfd pfd;

	(void)state;
	assert_ok(doca_pe_get_notification_handle(C.pe, &h));
	pfd.fd = h;
	pfd.events = POLLIN;
	assert_ok(doca_sync_event_task_wait_eq_alloc_init(C.ev, 3, UINT64_MAX, ud, &eq));
	assert_ok(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(eq)));
	for (int i = 0; i < 10; i++)
		(void)doca_pe_progress(C.pe);
	assert_ok(doca_pe_request_notification(C.pe));
	assert_int_equal(poll(&pfd, 1, 0), 0);
	/* An update that does not satisfy the wait may wake the loop (the
	 * updater cannot look at the PE's tasks); progress finds nothing. */
	assert_ok(doca_sync_event_update_set(C.ev, 2));
	assert_ok(doca_pe_clear_notification(C.pe, 0));
	for (int i = 0; i < 10; i++)
		(void)doca_pe_progress(C.pe);
	assert_int_equal(C.ok_calls + C.err_calls, 0);
	assert_ok(doca_pe_request_notification(C.pe));
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_ok(doca_sync_event_update_set(C.ev, 3));
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_ok(doca_pe_clear_notification(C.pe, 0));
	progress_until_calls(1);
	assert_int_equal(C.ok_calls, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_destroy),
		cmocka_unit_test(test_lifecycle_errors),
		cmocka_unit_test(test_holds_device),
		cmocka_unit_test(test_get_set_add),
		cmocka_unit_test(test_wait_masks),
		cmocka_unit_test(test_waits_woken_by_update),
		cmocka_unit_test(test_many_waiters),
		cmocka_unit_test(test_stop_releases_waiter),
		cmocka_unit_test(test_set_addr),
		cmocka_unit_test(test_set_doca_buf),
		cmocka_unit_test(test_export_rules),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_desc_fields),
		cmocka_unit_test(test_desc_truncated),
		cmocka_unit_test(test_desc_bit_flips),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_revoke_waits_for_holders),
		cmocka_unit_test(test_ref_wakes_waiter),
		cmocka_unit_test(test_not_supported),
		cmocka_unit_test(test_ctx_zero_num_tasks),
		cmocka_unit_test_setup_teardown(test_ctx_tasks, ctx_setup, ctx_teardown),
		cmocka_unit_test_setup_teardown(test_ctx_free_waiting_task, ctx_setup, ctx_teardown),
		cmocka_unit_test_setup_teardown(test_ctx_bad_tasks, ctx_setup, ctx_teardown),
		cmocka_unit_test_setup_teardown(test_ctx_wait_notifies, ctx_setup, ctx_teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
