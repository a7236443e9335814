/*
 * Unit tests of sync event wait tasks for programs that sleep on their
 * PE's notification handle (epoll) rather than spin on doca_pe_progress,
 * when the value changes behind this process's back: the other process of
 * a PCI export sets it (importer waits, exporter sets; and the reverse),
 * the exporter dies under a parked wait, an event exported after its wait
 * parked, and a value in caller memory. Each sleep is bounded: a wake that
 * never comes fails the test instead of hanging it.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_pe.h>
#include <doca_sync_event.h>

#include "pci_peer.h"

/* How long one sleep on the handle may take before the wake counts as
 * lost (generous: a loaded machine; the watcher's tick is 1 ms). */
#define WAKE_BOUND_MS 3000
#define TARGET 100u

/* ---- the waiting side: a context-mode event on a PE we sleep on ---- */

static struct {
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	int epfd;
	int done;
	doca_error_t status;
} W;

static void cb_eq(struct doca_sync_event_task_wait_eq *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	W.status = doca_task_get_status(doca_sync_event_task_wait_eq_as_doca_task(t));
	W.done++;
	doca_task_free(doca_sync_event_task_wait_eq_as_doca_task(t));
}

static void cb_neq(struct doca_sync_event_task_wait_neq *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	W.status = doca_task_get_status(doca_sync_event_task_wait_neq_as_doca_task(t));
	W.done++;
	doca_task_free(doca_sync_event_task_wait_neq_as_doca_task(t));
}

/* Connect ev (turned into a context already) to a fresh PE and start it. */
static void waiter_open(struct doca_sync_event *ev, struct doca_ctx *ctx)
{
	doca_notification_handle_t h;
	struct epoll_event e = {.events = EPOLLIN};

	memset(&W, 0, sizeof(W));
	W.ctx = ctx;
	assert_non_null(W.ctx);
	assert_int_equal(doca_pe_create(&W.pe), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(W.pe, W.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_task_wait_eq_set_conf(ev, cb_eq, cb_eq, 4), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_task_wait_neq_set_conf(ev, cb_neq, cb_neq, 4), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(W.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_pe_get_notification_handle(W.pe, &h), DOCA_SUCCESS);
	W.epfd = epoll_create1(EPOLL_CLOEXEC);
	assert_true(W.epfd >= 0);
	assert_int_equal(epoll_ctl(W.epfd, EPOLL_CTL_ADD, (int)h, &e), 0);
}

static void waiter_close(void)
{
	enum doca_ctx_states st = DOCA_CTX_STATE_RUNNING;

	assert_int_equal(doca_ctx_stop(W.ctx), DOCA_SUCCESS);
	for (int i = 0; i < 100000 && st != DOCA_CTX_STATE_IDLE; i++) {
		assert_int_equal(doca_ctx_get_state(W.ctx, &st), DOCA_SUCCESS);
		if (st != DOCA_CTX_STATE_IDLE)
			(void)doca_pe_progress(W.pe);
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	close(W.epfd);
}

static void waiter_destroy_pe(void)
{
	assert_int_equal(doca_pe_destroy(W.pe), DOCA_SUCCESS);
}

/* Submit a wait (eq: value == v, else value != v) and see it park. */
static void park(struct doca_sync_event *ev, bool eq, uint64_t v)
{
	union doca_data ud = {.u64 = 0};
	struct doca_sync_event_task_wait_eq *te;
	struct doca_sync_event_task_wait_neq *tn;

	W.done = 0;
	W.status = DOCA_ERROR_UNKNOWN;
	if (eq) {
		assert_int_equal(doca_sync_event_task_wait_eq_alloc_init(ev, v, UINT64_MAX, ud, &te), DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(te)), DOCA_SUCCESS);
	} else {
		assert_int_equal(doca_sync_event_task_wait_neq_alloc_init(ev, v, UINT64_MAX, ud, &tn), DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(doca_sync_event_task_wait_neq_as_doca_task(tn)), DOCA_SUCCESS);
	}
	for (int i = 0; i < 100; i++)
		(void)doca_pe_progress(W.pe);
	assert_int_equal(W.done, 0);
}

/* Arm the handle; nothing has happened yet, so it must stay quiet. */
static void arm_quiet(void)
{
	struct epoll_event e;

	assert_int_equal(doca_pe_request_notification(W.pe), DOCA_SUCCESS);
	assert_int_equal(epoll_wait(W.epfd, &e, 1, 0), 0);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep on the handle (bounded), then progress once per wake-up until
 * the wait completed, as an event loop does. False: a wake never came. */
static bool sleep_until_done(void)
{
	doca_notification_handle_t h;
	struct epoll_event e;
	int64_t start = now_ms();

	assert_int_equal(doca_pe_get_notification_handle(W.pe, &h), DOCA_SUCCESS);
	while (W.done == 0) {
		int left = WAKE_BOUND_MS - (int)(now_ms() - start);
		int n = left > 0 ? epoll_wait(W.epfd, &e, 1, left) : 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			return false;
		assert_int_equal(doca_pe_clear_notification(W.pe, h), DOCA_SUCCESS);
		while (doca_pe_progress(W.pe) != 0)
			;
		if (W.done == 0)
			assert_int_equal(doca_pe_request_notification(W.pe), DOCA_SUCCESS);
	}
	print_message("woke and completed %lld ms after the change\n", (long long)(now_ms() - start));
	return true;
}

/* ---- the other process ---- */

/* Exporter child: exports a standalone event (value 0), then 'x' sets it
 * to TARGET (answer 1); 'q' destroys it and exits. */
static int child_exporter_main(int in, int out, uint32_t arg)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev;
	const uint8_t *desc;
	size_t len;
	uint8_t ok;
	char cmd;

	(void)arg;
	alarm(30); /* never outlive a broken test */
	if (dev == NULL || doca_sync_event_create(&ev) != DOCA_SUCCESS ||
	    doca_sync_event_add_publisher_location_remote_pci(ev) != DOCA_SUCCESS ||
	    doca_sync_event_add_subscriber_location_cpu(ev, dev) != DOCA_SUCCESS ||
	    doca_sync_event_start(ev) != DOCA_SUCCESS ||
	    doca_sync_event_export_to_remote_pci(ev, dev, &desc, &len) != DOCA_SUCCESS)
		return 2;
	if (!child_send_desc(out, desc, len))
		return 3;
	while (read_full(in, &cmd, 1)) {
		if (cmd == 'x') {
			ok = doca_sync_event_update_set(ev, TARGET) == DOCA_SUCCESS;
			write_full(out, &ok, 1);
		} else if (cmd == 'q') {
			doca_sync_event_destroy(ev);
			doca_dev_close(dev);
			return 0;
		}
	}
	return 4;
}

/* The parent's descriptor; the forked importer reads its inherited copy
 * (the bytes only: it opens the export as any other process would). */
static uint8_t parent_desc[DESC_MAX];
static size_t parent_desc_len;

/* Importer child: imports the parent's event and answers its import
 * status as the "descriptor" (one byte, 1 = ok); then 'x' adds TARGET
 * (answer 1); 'q' exits. */
static int child_importer_main(int in, int out, uint32_t arg)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev = NULL;
	uint64_t fetched;
	uint8_t ok;
	char cmd;

	(void)arg;
	alarm(30);
	ok = dev != NULL && doca_sync_event_create_from_export(dev, parent_desc, parent_desc_len, &ev) == DOCA_SUCCESS &&
	     doca_sync_event_start(ev) == DOCA_SUCCESS;
	if (!child_send_desc(out, &ok, 1) || !ok)
		return 3;
	while (read_full(in, &cmd, 1)) {
		if (cmd == 'x') {
			ok = doca_sync_event_update_add(ev, TARGET, &fetched) == DOCA_SUCCESS;
			write_full(out, &ok, 1);
		} else if (cmd == 'q') {
			doca_sync_event_stop(ev);
			doca_sync_event_destroy(ev);
			doca_dev_close(dev);
			return 0;
		}
	}
	return 4;
}

/* ---- tests ---- */

/* Import or skip (with the reason) where the kernel forbids it. */
static bool import_or_skip(struct doca_dev *dev, const struct peer *p, struct doca_sync_event **ev)
{
	doca_error_t err = doca_sync_event_create_from_export(dev, p->desc, p->desc_len, ev);

	if (err == DOCA_ERROR_NOT_PERMITTED) {
		print_message("skipped: this kernel refuses access to a child process's fds\n");
		return false;
	}
	assert_int_equal(err, DOCA_SUCCESS);
	return true;
}

/* The importer parks wait_eq, sleeps on the handle; the exporter sets. */
static void test_importer_sleeps_exporter_sets(void **state)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev;
	struct peer p;

	(void)state;
	assert_non_null(dev);
	spawn(&p, child_exporter_main, 0);
	if (!import_or_skip(dev, &p, &ev)) {
		kill_child(&p);
		doca_dev_close(dev);
		return;
	}
	waiter_open(ev, doca_sync_event_as_ctx(ev));
	park(ev, true, TARGET);
	arm_quiet();
	assert_int_equal(ask(&p, 'x'), 1);
	assert_true(sleep_until_done());
	assert_int_equal(W.status, DOCA_SUCCESS);

	/* Once more, a wait_neq (the watch comes back after it went away),
	 * and the exporter exits: the parked wait fails, the sleeper wakes. */
	park(ev, false, TARGET);
	arm_quiet();
	finish(&p);
	assert_true(sleep_until_done());
	assert_int_equal(W.status, DOCA_ERROR_CONNECTION_ABORTED);
	waiter_close();
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);
	waiter_destroy_pe();
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* The exporter parks wait_eq, sleeps on the handle; the importer adds. */
static void test_exporter_sleeps_importer_sets(void **state)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev;
	struct doca_ctx *ctx;
	const uint8_t *desc;
	struct peer p;

	(void)state;
	assert_non_null(dev);
	assert_int_equal(doca_sync_event_create(&ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_publisher_location_remote_pci(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_subscriber_location_cpu(ev, dev), DOCA_SUCCESS);
	ctx = doca_sync_event_as_ctx(ev);
	waiter_open(ev, ctx);
	assert_int_equal(doca_sync_event_export_to_remote_pci(ev, dev, &desc, &parent_desc_len), DOCA_SUCCESS);
	assert_true(parent_desc_len <= sizeof(parent_desc));
	memcpy(parent_desc, desc, parent_desc_len);
	spawn(&p, child_importer_main, 0);
	if (p.desc_len != 1 || p.desc[0] != 1) {
		print_message("skipped: the child could not import this process's event\n");
		assert_int_equal(reap(&p), 3);
		goto out;
	}
	park(ev, true, TARGET);
	arm_quiet();
	assert_int_equal(ask(&p, 'x'), 1);
	assert_true(sleep_until_done());
	assert_int_equal(W.status, DOCA_SUCCESS);
	finish(&p);
out:
	waiter_close();
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);
	waiter_destroy_pe();
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* A wait parked before the event was exported: the importer's update
 * (here in this process, on its own handle of the event) wakes it too. */
static void test_exported_after_park(void **state)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev, *imp;
	const uint8_t *desc;
	size_t len;

	(void)state;
	assert_non_null(dev);
	assert_int_equal(doca_sync_event_create(&ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_publisher_location_remote_pci(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_subscriber_location_cpu(ev, dev), DOCA_SUCCESS);
	waiter_open(ev, doca_sync_event_as_ctx(ev));
	park(ev, true, TARGET);
	assert_int_equal(doca_sync_event_export_to_remote_pci(ev, dev, &desc, &len), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_create_from_export(dev, desc, len, &imp), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_start(imp), DOCA_SUCCESS);
	arm_quiet();
	assert_int_equal(doca_sync_event_update_set(imp, TARGET), DOCA_SUCCESS);
	assert_true(sleep_until_done());
	assert_int_equal(W.status, DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_stop(imp), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_destroy(imp), DOCA_SUCCESS);
	waiter_close();
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);
	waiter_destroy_pe();
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* The value in caller memory (set_addr), written with a plain store. */
static void test_caller_memory(void **state)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev;
	static uint64_t cell;

	(void)state;
	assert_non_null(dev);
	cell = 7;
	assert_int_equal(doca_sync_event_create(&ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_publisher_location_cpu(ev, dev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_subscriber_location_cpu(ev, dev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_set_addr(ev, &cell), DOCA_SUCCESS);
	waiter_open(ev, doca_sync_event_as_ctx(ev));
	park(ev, false, 7);
	arm_quiet();
	__atomic_store_n(&cell, 8, __ATOMIC_SEQ_CST);
	assert_true(sleep_until_done());
	assert_int_equal(W.status, DOCA_SUCCESS);
	waiter_close();
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);
	waiter_destroy_pe();
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_importer_sleeps_exporter_sets),
		cmocka_unit_test(test_exporter_sleeps_importer_sets),
		cmocka_unit_test(test_exported_after_park),
		cmocka_unit_test(test_caller_memory),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
