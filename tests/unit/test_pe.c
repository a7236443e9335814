/*
 * Unit tests of the progress engine: notification handle, cross-thread
 * completions, in-flight accounting, lifecycle errors.
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <doca_ctx.h>
#include <doca_pe.h>

#include "fake_ctx.h"

static int completions;
static pthread_t callback_thread;

static void on_done(struct doca_task *task, union doca_data task_user, union doca_data ctx_user)
{
	(void)task_user;
	(void)ctx_user;
	completions++;
	callback_thread = pthread_self();
	doca_task_free(task);
}

/* Readable within timeout_ms? A bounded wait for an event, not a sleep. */
static bool fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static struct fake_ctx *started_fake(struct doca_pe *pe)
{
	struct fake_ctx *f = fake_create();

	assert_int_equal(softdoca_task_type_set_conf(&f->type, on_done, on_done, 8), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, &f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&f->ctx), DOCA_SUCCESS);
	return f;
}

static void stop_and_destroy(struct doca_pe *pe, struct fake_ctx *f)
{
	(void)doca_ctx_stop(&f->ctx);
	while (f->ctx.state != DOCA_CTX_STATE_IDLE)
		(void)doca_pe_progress(pe);
	fake_destroy(f);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
}

static void test_create_destroy_errors(void **state)
{
	struct doca_pe *pe;
	doca_notification_handle_t h;
	size_t n;

	(void)state;
	assert_int_equal(doca_pe_create(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_progress(NULL), 0);
	assert_int_equal(doca_pe_connect_ctx(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_get_notification_handle(NULL, &h), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_request_notification(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_clear_notification(NULL, 0), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_get_num_inflight_tasks(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_pe_set_event_mode(pe, DOCA_PE_EVENT_MODE_PROGRESS_ALL), DOCA_SUCCESS);
	assert_int_equal(doca_pe_set_event_mode(pe, (enum doca_pe_event_mode)7), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_pe_get_num_inflight_tasks(pe, &n), DOCA_SUCCESS);
	assert_int_equal(n, 0);
	assert_int_equal(doca_pe_progress(pe), 0);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
}

static void test_notification_fixed_and_quiet_when_idle(void **state)
{
	struct doca_pe *pe;
	doca_notification_handle_t h1, h2;

	(void)state;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_pe_get_notification_handle(pe, &h1), DOCA_SUCCESS);
	assert_int_equal(doca_pe_get_notification_handle(pe, &h2), DOCA_SUCCESS);
	assert_int_equal(h1, h2);
	assert_true(h1 >= 0);
	assert_int_equal(doca_pe_request_notification(pe), DOCA_SUCCESS);
	assert_false(fd_readable(h1, 0));
	assert_int_equal(doca_pe_clear_notification(pe, 0), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
}

struct completer {
	struct fake_ctx *f;
};

static void *complete_from_thread(void *arg)
{
	struct completer *c = arg;

	fake_complete_next(c->f, DOCA_SUCCESS);
	return NULL;
}

static void test_completion_from_other_thread_wakes_fd(void **state)
{
	struct doca_pe *pe;
	struct fake_ctx *f;
	struct doca_task *task;
	union doca_data ud = {.u64 = 1};
	doca_notification_handle_t h;
	struct completer c;
	pthread_t thr;

	(void)state;
	completions = 0;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	f = started_fake(pe);
	assert_int_equal(doca_pe_get_notification_handle(pe, &h), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&f->type, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);

	assert_int_equal(doca_pe_request_notification(pe), DOCA_SUCCESS);
	assert_false(fd_readable(h, 0));
	c.f = f;
	assert_int_equal(pthread_create(&thr, NULL, complete_from_thread, &c), 0);
	/* The other thread's completion must make the handle readable. */
	assert_true(fd_readable(h, 10000));
	pthread_join(thr, NULL);
	assert_int_equal(completions, 0); /* never run on the completing thread */
	assert_int_equal(doca_pe_clear_notification(pe, h), DOCA_SUCCESS);
	assert_false(fd_readable(h, 0));
	assert_int_equal(doca_pe_progress(pe), 1);
	assert_int_equal(completions, 1);
	assert_true(pthread_equal(callback_thread, pthread_self()));
	stop_and_destroy(pe, f);
}

/* Two threads complete 32 tasks each, in their own order, while this
 * thread progresses: every task is delivered once, on this thread, and
 * each producer's completions arrive in the order it made them. */
#define RACE_TASKS 64
static uint64_t race_order[RACE_TASKS];
static int race_seen;

static void on_race_done(struct doca_task *task, union doca_data task_user, union doca_data ctx_user)
{
	(void)ctx_user;
	if (race_seen < RACE_TASKS)
		race_order[race_seen] = task_user.u64;
	race_seen++;
	callback_thread = pthread_self();
	doca_task_free(task);
}

struct race_producer {
	struct doca_task *tasks[RACE_TASKS / 2];
};

static void *race_complete(void *arg)
{
	struct race_producer *p = arg;

	for (int i = 0; i < RACE_TASKS / 2; i++)
		softdoca_task_complete(p->tasks[i], DOCA_SUCCESS);
	return NULL;
}

static void test_completions_from_two_threads_keep_order(void **state)
{
	struct race_producer prod[2];
	struct doca_pe *pe;
	struct fake_ctx *f;
	pthread_t thr[2];
	uint64_t next[2] = {0, 1};

	(void)state;
	race_seen = 0;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	f = fake_create();
	assert_int_equal(softdoca_task_type_set_conf(&f->type, on_race_done, on_race_done, RACE_TASKS), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, &f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&f->ctx), DOCA_SUCCESS);
	for (uint64_t i = 0; i < RACE_TASKS; i++) {
		union doca_data ud = {.u64 = i};
		struct doca_task *task;

		assert_int_equal(softdoca_task_alloc(&f->type, ud, &task), DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);
		prod[i % 2].tasks[i / 2] = task; /* producer 0 the even ones, 1 the odd */
	}
	f->num_pending = 0; /* the producers complete them, not fake_stop */
	for (int k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&thr[k], NULL, race_complete, &prod[k]), 0);
	while (race_seen < RACE_TASKS)
		(void)doca_pe_progress(pe);
	for (int k = 0; k < 2; k++)
		pthread_join(thr[k], NULL);
	assert_int_equal(race_seen, RACE_TASKS);
	assert_true(pthread_equal(callback_thread, pthread_self()));
	for (int i = 0; i < RACE_TASKS; i++) {
		uint64_t v = race_order[i];

		assert_int_equal(v, next[v % 2]); /* each producer's in its order, none twice */
		next[v % 2] += 2;
	}
	stop_and_destroy(pe, f);
}

static void test_arming_after_completion_signals_at_once(void **state)
{
	struct doca_pe *pe;
	struct fake_ctx *f;
	struct doca_task *task;
	union doca_data ud = {.u64 = 1};
	doca_notification_handle_t h;

	(void)state;
	completions = 0;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	f = started_fake(pe);
	assert_int_equal(doca_pe_get_notification_handle(pe, &h), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&f->type, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);
	fake_complete_next(f, DOCA_SUCCESS); /* not armed: no signal */
	assert_false(fd_readable(h, 0));
	assert_int_equal(doca_pe_request_notification(pe), DOCA_SUCCESS);
	assert_true(fd_readable(h, 0)); /* pending work found while arming */
	assert_int_equal(doca_pe_clear_notification(pe, 0), DOCA_SUCCESS);
	assert_int_equal(doca_pe_progress(pe), 1);
	assert_int_equal(completions, 1);
	stop_and_destroy(pe, f);
}

static void test_inflight_across_contexts(void **state)
{
	struct doca_pe *pe;
	struct fake_ctx *a, *b;
	struct doca_task *t1, *t2, *t3;
	union doca_data ud = {.u64 = 1};
	size_t n;

	(void)state;
	completions = 0;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	a = started_fake(pe);
	b = started_fake(pe);
	assert_int_equal(softdoca_task_alloc(&a->type, ud, &t1), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&b->type, ud, &t2), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&b->type, ud, &t3), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(t1), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(t2), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(t3), DOCA_SUCCESS);
	assert_int_equal(doca_pe_get_num_inflight_tasks(pe, &n), DOCA_SUCCESS);
	assert_int_equal(n, 3);
	fake_complete_next(b, DOCA_SUCCESS);
	assert_int_equal(doca_pe_progress(pe), 1);
	assert_int_equal(doca_pe_get_num_inflight_tasks(pe, &n), DOCA_SUCCESS);
	assert_int_equal(n, 2);
	assert_int_equal(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	(void)doca_ctx_stop(&a->ctx);
	while (a->ctx.state != DOCA_CTX_STATE_IDLE)
		(void)doca_pe_progress(pe);
	fake_destroy(a);
	assert_int_equal(completions, 2);
	stop_and_destroy(pe, b);
	assert_int_equal(completions, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_destroy_errors),
		cmocka_unit_test(test_notification_fixed_and_quiet_when_idle),
		cmocka_unit_test(test_completion_from_other_thread_wakes_fd),
		cmocka_unit_test(test_completions_from_two_threads_keep_order),
		cmocka_unit_test(test_arming_after_completion_signals_at_once),
		cmocka_unit_test(test_inflight_across_contexts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
