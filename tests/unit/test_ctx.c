/*
 * Unit tests of the DOCA context state machine and task pools, on a fake
 * context type (fake_ctx.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <doca_ctx.h>
#include <doca_log.h>
#include <doca_pe.h>

#include "fake_ctx.h"

struct transition {
	enum doca_ctx_states prev, next;
};

static struct transition transitions[16];
static int num_transitions;
static int success_calls, error_calls;
static doca_error_t last_error;
static uint64_t last_task_user, last_ctx_user;
static bool free_in_callback = true;
static bool resubmit_in_callback; /* success callback resubmits (NVIDIA's secure_channel receiver) */

static void state_cb(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
		     enum doca_ctx_states next)
{
	(void)ctx;
	assert_int_equal(user_data.u64, 0xC0FFEE);
	transitions[num_transitions].prev = prev;
	transitions[num_transitions].next = next;
	num_transitions++;
}

static void task_success_cb(struct doca_task *task, union doca_data task_user, union doca_data ctx_user)
{
	success_calls++;
	last_task_user = task_user.u64;
	last_ctx_user = ctx_user.u64;
	if (resubmit_in_callback)
		assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);
	else if (free_in_callback)
		doca_task_free(task);
}

static void task_error_cb(struct doca_task *task, union doca_data task_user, union doca_data ctx_user)
{
	(void)task_user;
	(void)ctx_user;
	error_calls++;
	last_error = doca_task_get_status(task);
	if (free_in_callback)
		doca_task_free(task);
}

struct fixture {
	struct doca_pe *pe;
	struct fake_ctx *f;
};

static int setup(void **state)
{
	static struct fixture fx;
	union doca_data ud = {.u64 = 0xC0FFEE};

	num_transitions = success_calls = error_calls = 0;
	free_in_callback = true;
	resubmit_in_callback = false;
	assert_int_equal(doca_pe_create(&fx.pe), DOCA_SUCCESS);
	fx.f = fake_create();
	assert_int_equal(doca_ctx_set_user_data(&fx.f->ctx, ud), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_set_state_changed_cb(&fx.f->ctx, state_cb), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_type_set_conf(&fx.f->type, task_success_cb, task_error_cb, 4), DOCA_SUCCESS);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	(void)doca_ctx_stop(&fx->f->ctx);
	while (fx->f->ctx.state != DOCA_CTX_STATE_IDLE)
		(void)doca_pe_progress(fx->pe);
	fake_destroy(fx->f);
	assert_int_equal(doca_pe_destroy(fx->pe), DOCA_SUCCESS);
	return 0;
}

/* doca_ctx.h (DOCA 3.x): a context with no PE (and no GPU/DPA datapath)
 * fails to start with NOT_CONNECTED, stays IDLE, and can start once it is
 * connected. */
static void test_start_needs_pe(void **state)
{
	struct fixture *fx = *state;
	enum doca_ctx_states st;

	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_ERROR_NOT_CONNECTED);
	assert_int_equal(num_transitions, 0);
	assert_int_equal(doca_ctx_get_state(&fx->f->ctx, &st), DOCA_SUCCESS);
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(num_transitions, 1);
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_SUCCESS);
}

static void test_start_and_config_after_start(void **state)
{
	struct fixture *fx = *state;
	enum doca_ctx_states st;

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_ERROR_ALREADY_EXIST);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(num_transitions, 1);
	assert_int_equal(transitions[0].prev, DOCA_CTX_STATE_IDLE);
	assert_int_equal(transitions[0].next, DOCA_CTX_STATE_RUNNING);
	assert_int_equal(doca_ctx_get_state(&fx->f->ctx, &st), DOCA_SUCCESS);
	assert_int_equal(st, DOCA_CTX_STATE_RUNNING);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_ERROR_BAD_STATE);
	assert_int_equal(softdoca_task_type_set_conf(&fx->f->type, task_success_cb, task_error_cb, 8),
			 DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_ctx_set_state_changed_cb(&fx->f->ctx, state_cb), DOCA_ERROR_BAD_STATE);
	assert_int_equal(softdoca_ctx_fini(&fx->f->ctx), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_pe_destroy(fx->pe), DOCA_ERROR_IN_USE);
}

static void test_set_conf_rejects_bad_values(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(softdoca_task_type_set_conf(&fx->f->type, NULL, task_error_cb, 4), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_task_type_set_conf(&fx->f->type, task_success_cb, NULL, 4), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_task_type_set_conf(&fx->f->type, task_success_cb, task_error_cb, 0),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(softdoca_task_type_set_conf(&fx->f->type, task_success_cb, task_error_cb,
						     SOFTDOCA_TASK_POOL_MAX + 1),
			 DOCA_ERROR_INVALID_VALUE);
}

static void test_pool_exhaustion(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *tasks[5];
	union doca_data ud = {.u64 = 7};
	int i;

	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[0]), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	for (i = 0; i < 4; i++)
		assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[i]), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[4]), DOCA_ERROR_NO_MEMORY);
	doca_task_free(tasks[2]);
	doca_task_free(tasks[2]); /* double free: refused, pool stays consistent */
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[4]), DOCA_SUCCESS);
	assert_ptr_equal(tasks[4], tasks[2]);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[2]), DOCA_ERROR_NO_MEMORY);
	for (i = 0; i < 5; i++)
		if (i != 2)
			doca_task_free(tasks[i]);
}

static void test_completion_only_in_progress(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *task;
	union doca_data ud = {.u64 = 42};
	size_t inflight;

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_pe_progress(fx->pe), 0);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_get_user_data(task).u64, 42);
	assert_ptr_equal(doca_task_get_ctx(task), &fx->f->ctx);
	assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(task), DOCA_ERROR_BAD_STATE); /* already in flight */
	assert_int_equal(doca_ctx_get_num_inflight_tasks(&fx->f->ctx, &inflight), DOCA_SUCCESS);
	assert_int_equal(inflight, 1);
	assert_int_equal(doca_pe_get_num_inflight_tasks(fx->pe, &inflight), DOCA_SUCCESS);
	assert_int_equal(inflight, 1);

	fake_complete_next(fx->f, DOCA_SUCCESS);
	assert_int_equal(success_calls, 0); /* queued, not delivered */
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(success_calls, 1);
	assert_int_equal(last_task_user, 42);
	assert_int_equal(last_ctx_user, 0xC0FFEE);
	assert_int_equal(doca_ctx_get_num_inflight_tasks(&fx->f->ctx, &inflight), DOCA_SUCCESS);
	assert_int_equal(inflight, 0);
	assert_int_equal(doca_pe_progress(fx->pe), 0);
}

static void test_error_status_goes_to_error_cb(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *task;
	union doca_data ud = {.u64 = 1};

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);
	fake_complete_next(fx->f, DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(error_calls, 1);
	assert_int_equal(success_calls, 0);
	assert_int_equal(last_error, DOCA_ERROR_NOT_PERMITTED);
}

static void test_submit_failure_keeps_task(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *task;
	union doca_data ud = {.u64 = 1};
	size_t inflight;

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &task), DOCA_SUCCESS);
	fx->f->submit_fails = true;
	assert_int_equal(doca_task_submit(task), DOCA_ERROR_FULL);
	fx->f->submit_fails = false;
	fx->f->check_fails = true;
	assert_int_equal(doca_task_try_submit(task), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_ctx_get_num_inflight_tasks(&fx->f->ctx, &inflight), DOCA_SUCCESS);
	assert_int_equal(inflight, 0);
	fx->f->check_fails = false;
	assert_int_equal(doca_task_submit_ex(task, 0x100), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_task_try_submit(task), DOCA_SUCCESS);
	fake_complete_next(fx->f, DOCA_SUCCESS);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(success_calls, 1);
}

static void test_stop_without_tasks_is_synchronous(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(num_transitions, 3);
	assert_int_equal(transitions[1].next, DOCA_CTX_STATE_STOPPING);
	assert_int_equal(transitions[2].prev, DOCA_CTX_STATE_STOPPING);
	assert_int_equal(transitions[2].next, DOCA_CTX_STATE_IDLE);
	assert_int_equal(fx->f->stopped_calls, 1);
	/* Stopping an idle context is harmless and reports success. */
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(num_transitions, 3);
	/* And it can start again. */
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
}

static void test_stop_flushes_inflight(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *tasks[3];
	union doca_data ud = {.u64 = 3};
	int i;

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	for (i = 0; i < 3; i++) {
		assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[i]), DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(tasks[i]), DOCA_SUCCESS);
	}
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_ERROR_IN_PROGRESS);
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_ERROR_IN_PROGRESS);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_STOPPING);
	assert_int_equal(error_calls, 0); /* flushed tasks are delivered by progress only */
	assert_int_equal(doca_task_submit(tasks[0]), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(error_calls, 3);
	assert_int_equal(last_error, DOCA_ERROR_IO_FAILED);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_IDLE);
	assert_int_equal(transitions[num_transitions - 1].prev, DOCA_CTX_STATE_STOPPING);
	assert_int_equal(transitions[num_transitions - 1].next, DOCA_CTX_STATE_IDLE);
}

/* Tasks allocated but not in flight do not hold a stop (doca_ctx.h: stop
 * says IN_PROGRESS when "some tasks are still in progress"): stop returns
 * SUCCESS and the context is IDLE at once; the tasks stay valid and are
 * freed after (Tonny-Gu/dpa-bench frees its reusable tasks then). */
static void test_stop_with_allocated_tasks(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *task, *kept, *more[3];
	union doca_data ud = {.u64 = 3};
	int i;

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &task), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &kept), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_IDLE);
	assert_int_equal(fx->f->stopped_calls, 1);
	/* Still the application's, and usable as objects. */
	assert_int_equal(doca_task_get_user_data(task).u64, 3);
	assert_int_equal(doca_task_submit(task), DOCA_ERROR_BAD_STATE); /* the context is idle */
	doca_task_free(task);
	assert_int_equal(fx->f->ctx.num_allocated, 1);

	/* A restart keeps the pool of a task still held: it stays valid and
	 * the rest of the pool is there to allocate. */
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(kept), DOCA_SUCCESS);
	fake_complete_next(fx->f, DOCA_SUCCESS);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(success_calls, 1); /* freed in the callback */
	for (i = 0; i < 3; i++)
		assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &more[i]), DOCA_SUCCESS);
	for (i = 0; i < 3; i++)
		doca_task_free(more[i]);
	assert_int_equal(fx->f->ctx.num_allocated, 0);
}

/* The last task freed after the context went idle drops the pools; the
 * next start makes them afresh with the size set_conf gives then. */
static void test_free_after_idle_then_resize(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *tasks[6];
	union doca_data ud = {.u64 = 3};
	int i;

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[0]), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_SUCCESS);
	assert_non_null(fx->f->type.pool);
	doca_task_free(tasks[0]);
	assert_null(fx->f->type.pool);
	assert_int_equal(softdoca_task_type_set_conf(&fx->f->type, task_success_cb, task_error_cb, 6), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	for (i = 0; i < 6; i++)
		assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[i]), DOCA_SUCCESS);
	for (i = 0; i < 6; i++)
		doca_task_free(tasks[i]);
}

/* NVIDIA's secure_channel: receive tasks resubmitted from their success
 * callback are freed while in flight, then the context is stopped and the
 * program waits for IDLE. Each free is taken (no error), stop flushes
 * them, no callback runs for a freed task, and every task is back in the
 * pool. */
static void test_free_inflight_released_by_flush(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *tasks[4];
	union doca_data ud = {.u64 = 7};
	size_t inflight;
	int i;

	resubmit_in_callback = true;
	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	for (i = 0; i < 4; i++) {
		assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[i]), DOCA_SUCCESS);
		assert_int_equal(doca_task_submit(tasks[i]), DOCA_SUCCESS);
	}
	fake_complete_next(fx->f, DOCA_SUCCESS);
	fake_complete_next(fx->f, DOCA_SUCCESS);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(success_calls, 2); /* both resubmitted */
	for (i = 0; i < 4; i++)
		doca_task_free(tasks[i]);
	doca_task_free(tasks[0]); /* a second free is refused, changes nothing */
	assert_int_equal(doca_ctx_get_num_inflight_tasks(&fx->f->ctx, &inflight), DOCA_SUCCESS);
	assert_int_equal(inflight, 4);
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_ERROR_IN_PROGRESS);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_IDLE);
	assert_int_equal(success_calls, 2);
	assert_int_equal(error_calls, 0); /* freed tasks run no callback */
	assert_int_equal(fx->f->ctx.num_allocated, 0);
	assert_null(fx->f->type.pool);

	/* All four come back in the next run. */
	resubmit_in_callback = false;
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	for (i = 0; i < 4; i++)
		assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &tasks[i]), DOCA_SUCCESS);
	for (i = 0; i < 4; i++)
		doca_task_free(tasks[i]);
}

/* A task freed in flight that then completes normally goes back to the
 * pool without a callback, and can be allocated again at once. */
static void test_free_inflight_then_completion(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *task, *again;
	union doca_data ud = {.u64 = 9};

	assert_int_equal(softdoca_task_type_set_conf(&fx->f->type, task_success_cb, task_error_cb, 1), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);
	doca_task_free(task);
	assert_int_equal(doca_task_submit(task), DOCA_ERROR_BAD_STATE); /* still in flight */
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &again), DOCA_ERROR_NO_MEMORY);
	fake_complete_next(fx->f, DOCA_SUCCESS);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(success_calls, 0);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &again), DOCA_SUCCESS);
	assert_ptr_equal(again, task);
	assert_int_equal(doca_task_get_user_data(again).u64, 9);
	assert_int_equal(doca_task_submit(again), DOCA_SUCCESS);
	fake_complete_next(fx->f, DOCA_SUCCESS);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(success_calls, 1); /* a fresh allocation gets its callback */
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_SUCCESS);
}

static void test_idle_waits_for_library_teardown(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	fx->f->stop_blocked = true;
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_ERROR_IN_PROGRESS);
	assert_int_equal(doca_pe_progress(fx->pe), 0);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_STOPPING);
	fx->f->stop_blocked = false;
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_IDLE);
}

/* What the SDK logged (WARNING and up) since sdk_log_open. */
static FILE *sdk_log;

static void sdk_log_open(void)
{
	struct doca_log_backend *backend;

	sdk_log = tmpfile();
	assert_non_null(sdk_log);
	assert_int_equal(doca_log_backend_create_with_file_sdk(sdk_log, &backend), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_WARNING), DOCA_SUCCESS);
}

static int sdk_log_count(const char *needle)
{
	char line[1024];
	int n = 0;

	fflush(sdk_log);
	rewind(sdk_log);
	while (fgets(line, sizeof(line), sdk_log) != NULL)
		n += strstr(line, needle) != NULL;
	fseek(sdk_log, 0, SEEK_END);
	return n;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A stop that lingers (here: the library's teardown) is said once at
 * WARNING after SOFTDOCA_PE_STALL_MS (main sets 100 ms), with what holds
 * it and the call that finishes it. */
static void test_lingering_stop_explained_once(void **state)
{
	struct fixture *fx = *state;
	const char *needle = "has been stopping for";
	uint64_t end;

	if (sdk_log == NULL)
		sdk_log_open();
	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	fx->f->stop_blocked = true;
	assert_int_equal(doca_ctx_stop(&fx->f->ctx), DOCA_ERROR_IN_PROGRESS);
	assert_int_equal(sdk_log_count(needle), 0);
	end = mono_ms() + 3000;
	while (sdk_log_count(needle) == 0 && mono_ms() < end)
		(void)doca_pe_progress(fx->pe);
	assert_int_equal(sdk_log_count(needle), 1);
	assert_int_equal(sdk_log_count("doca_pe_progress"), 1);
	/* Once per stop, however long it lasts. */
	end = mono_ms() + 250;
	while (mono_ms() < end)
		(void)doca_pe_progress(fx->pe);
	assert_int_equal(sdk_log_count(needle), 1);
	fx->f->stop_blocked = false;
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_IDLE);
}

static void test_async_start(void **state)
{
	struct fixture *fx = *state;

	fx->f->start_result = DOCA_ERROR_IN_PROGRESS;
	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_ERROR_IN_PROGRESS);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_STARTING);
	softdoca_ctx_start_done(&fx->f->ctx, DOCA_SUCCESS);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_RUNNING);
	assert_int_equal(transitions[0].next, DOCA_CTX_STATE_STARTING);
	assert_int_equal(transitions[1].next, DOCA_CTX_STATE_RUNNING);
}

static void test_failed_start(void **state)
{
	struct fixture *fx = *state;

	fx->f->start_result = DOCA_ERROR_NOT_CONNECTED;
	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_ERROR_NOT_CONNECTED);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_IDLE);
	assert_int_equal(num_transitions, 0);
}

static void test_fatal_error_stops(void **state)
{
	struct fixture *fx = *state;
	struct doca_task *task;
	union doca_data ud = {.u64 = 3};

	assert_int_equal(doca_pe_connect_ctx(fx->pe, &fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&fx->f->ctx), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_alloc(&fx->f->type, ud, &task), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(task), DOCA_SUCCESS);
	softdoca_ctx_fail(&fx->f->ctx, DOCA_ERROR_CONNECTION_RESET);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_STOPPING);
	assert_int_equal(doca_pe_progress(fx->pe), 1);
	assert_int_equal(error_calls, 1);
	assert_int_equal(fx->f->ctx.state, DOCA_CTX_STATE_IDLE);
}

static void test_null_arguments(void **state)
{
	enum doca_ctx_states st;
	size_t n;
	union doca_data ud;

	(void)state;
	assert_int_equal(doca_ctx_start(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_ctx_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_ctx_get_state(NULL, &st), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_ctx_get_num_inflight_tasks(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_ctx_get_user_data(NULL, &ud), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_task_submit(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_task_try_submit(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_task_get_status(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_task_get_ctx(NULL));
	doca_task_free(NULL);
	assert_int_equal(doca_ctx_set_datapath_on_gpu(NULL, NULL), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_task_batch_submit(NULL), DOCA_ERROR_NOT_SUPPORTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start_needs_pe, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_and_config_after_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_conf_rejects_bad_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_exhaustion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_completion_only_in_progress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_status_goes_to_error_cb, setup, teardown),
		cmocka_unit_test_setup_teardown(test_submit_failure_keeps_task, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_without_tasks_is_synchronous, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_flushes_inflight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_with_allocated_tasks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_after_idle_then_resize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_inflight_released_by_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_inflight_then_completion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_waits_for_library_teardown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lingering_stop_explained_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_async_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fatal_error_stops, setup, teardown),
		cmocka_unit_test(test_null_arguments),
	};

	/* Before the first PE reads it: lingering stops are explained fast. */
	setenv("SOFTDOCA_PE_STALL_MS", "100", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
