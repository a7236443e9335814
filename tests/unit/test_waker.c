/*
 * Core's waker (src/core/waker.h), alone: timers fire in deadline order,
 * a timer can move earlier but a later arm does not delay it, a
 * cancelled timer never fires, a callback's return value runs it again,
 * fd watches are one-shot until rearmed, the thread ends when nothing is
 * registered, and a forked child starts with no thread and nothing
 * registered. Every wait is for a condition, with a bound.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ThreadSanitizer (gcc says so one way, clang another). */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

#include <cmocka.h>

#include "waker.h"

#define MS 1000000ull
#define BOUND_MS 5000u

static uint64_t now_ns(void)
{
	return softdoca_waker_now_ns();
}

/* Threads of this process named after the waker; *tid (may be NULL) gets
 * the id of one of them, 0 when there is none. */
static int waker_threads_tid(long *tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	if (tid != NULL)
		*tid = 0;
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue; /* the thread ended meanwhile */
		if (fgets(comm, sizeof(comm), f) != NULL && strncmp(comm, "softdoca-waker", 14) == 0) {
			n++;
			if (tid != NULL)
				*tid = atol(e->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

static int waker_threads(void)
{
	return waker_threads_tid(NULL);
}

/* The thread id of the waker's thread, 0 when there is none. */
static long waker_tid(void)
{
	long tid;

	(void)waker_threads_tid(&tid);
	return tid;
}

static void pause_ms(unsigned int ms)
{
	const struct timespec t = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};

	nanosleep(&t, NULL);
}

/* Wait (bounded) until *v reaches want. */
static bool wait_for(atomic_int *v, int want)
{
	uint64_t end = now_ns() + BOUND_MS * MS;

	while (atomic_load(v) < want) {
		if (now_ns() > end)
			return false;
		pause_ms(1);
	}
	return true;
}

/* Wait (bounded) until the waker's thread is gone. */
static bool wait_thread_gone(void)
{
	uint64_t end = now_ns() + BOUND_MS * MS;

	while (softdoca_waker_thread_running() || waker_threads() != 0) {
		if (now_ns() > end)
			return false;
		pause_ms(1);
	}
	return true;
}

/* ---- timers ----------------------------------------------------------------- */

static atomic_int fired; /* counted after order[] is written */
static int order[8];

static uint64_t record(void *arg, uint64_t now)
{
	(void)now;
	order[atomic_load(&fired)] = (int)(intptr_t)arg; /* callbacks run one at a time */
	atomic_fetch_add(&fired, 1);
	return 0;
}

static void test_timers_in_order(void **state)
{
	struct softdoca_waker_timer t[3];
	uint64_t base = now_ns();

	(void)state;
	atomic_store(&fired, 0);
	for (int i = 0; i < 3; i++)
		softdoca_waker_timer_init(&t[i], record, (void *)(intptr_t)i);
	/* Armed out of order: 30, 10, 20 ms. */
	assert_int_equal(softdoca_waker_timer_arm(&t[0], base + 30 * MS), DOCA_SUCCESS);
	assert_int_equal(softdoca_waker_timer_arm(&t[1], base + 10 * MS), DOCA_SUCCESS);
	assert_int_equal(softdoca_waker_timer_arm(&t[2], base + 20 * MS), DOCA_SUCCESS);
	assert_true(softdoca_waker_thread_running());
	assert_true(wait_for(&fired, 3));
	assert_true(now_ns() >= base + 30 * MS);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 0);
	for (int i = 0; i < 3; i++)
		assert_false(softdoca_waker_timer_pending(&t[i]));
	assert_true(wait_thread_gone());
}

/* Registrations that come and go in quick succession (a program making
 * PEs in a loop) are served by one thread: it stays a while with nothing
 * registered instead of ending and being made again each round. */
static void test_short_gaps_keep_one_thread(void **state)
{
	struct softdoca_waker_timer t;
	long first = 0;

	(void)state;
	atomic_store(&fired, 0);
	softdoca_waker_timer_init(&t, record, NULL);
	for (int round = 0; round < 30; round++) {
		long tid;

		atomic_store(&fired, 0);
		assert_int_equal(softdoca_waker_timer_arm(&t, now_ns() + MS), DOCA_SUCCESS);
		assert_true(wait_for(&fired, 1));
		tid = waker_tid();
		if (first == 0)
			first = tid;
		assert_true(tid != 0 && tid == first);
		softdoca_waker_timer_cancel(&t); /* nothing registered now */
	}
	assert_true(wait_thread_gone());
}

/* Armed far, then nearer: it moves earlier; armed later again: it stays. */
static void test_arm_earlier_only(void **state)
{
	struct softdoca_waker_timer t;
	uint64_t base = now_ns();

	(void)state;
	atomic_store(&fired, 0);
	softdoca_waker_timer_init(&t, record, NULL);
	assert_int_equal(softdoca_waker_timer_arm(&t, base + 60000 * MS), DOCA_SUCCESS);
	assert_int_equal(softdoca_waker_timer_arm(&t, base + 5 * MS), DOCA_SUCCESS);
	assert_int_equal(softdoca_waker_timer_arm(&t, base + 60000 * MS), DOCA_SUCCESS);
	assert_true(wait_for(&fired, 1));
	assert_int_equal(atomic_load(&fired), 1);
	assert_true(wait_thread_gone());
}

/* A cancelled timer never fires: a later one does, and by then the
 * cancelled one's deadline is long past. */
static void test_cancel(void **state)
{
	struct softdoca_waker_timer gone, later;
	uint64_t base = now_ns();

	(void)state;
	atomic_store(&fired, 0);
	softdoca_waker_timer_init(&gone, record, (void *)(intptr_t)1);
	softdoca_waker_timer_init(&later, record, (void *)(intptr_t)2);
	assert_int_equal(softdoca_waker_timer_arm(&gone, base + 10 * MS), DOCA_SUCCESS);
	assert_int_equal(softdoca_waker_timer_arm(&later, base + 40 * MS), DOCA_SUCCESS);
	softdoca_waker_timer_cancel(&gone);
	assert_false(softdoca_waker_timer_pending(&gone));
	assert_true(softdoca_waker_timer_pending(&later));
	assert_true(wait_for(&fired, 1));
	assert_int_equal(order[0], 2);
	assert_int_equal(atomic_load(&fired), 1);
	softdoca_waker_timer_cancel(&gone); /* twice: a no-op */
	assert_true(wait_thread_gone());
}

/* The callback's return value runs it again, until it returns 0. */
static atomic_int ticks;

static uint64_t tick5(void *arg, uint64_t now)
{
	(void)arg;
	return atomic_fetch_add(&ticks, 1) + 1 < 5 ? now + 1 * MS : 0;
}

static void test_periodic(void **state)
{
	struct softdoca_waker_timer t;

	(void)state;
	atomic_store(&ticks, 0);
	softdoca_waker_timer_init(&t, tick5, NULL);
	assert_int_equal(softdoca_waker_timer_arm(&t, now_ns() + 1 * MS), DOCA_SUCCESS);
	assert_true(wait_for(&ticks, 5));
	assert_true(wait_thread_gone());
	assert_int_equal(atomic_load(&ticks), 5);
	assert_false(softdoca_waker_timer_pending(&t));
}

/* A callback that cancels itself and arms another timer. */
static struct softdoca_waker_timer self_t, other_t;

static uint64_t cancel_self(void *arg, uint64_t now)
{
	(void)arg;
	softdoca_waker_timer_cancel(&self_t);
	(void)softdoca_waker_timer_arm(&other_t, now + 1 * MS);
	atomic_fetch_add(&fired, 1);
	return 0;
}

static void test_callback_uses_waker(void **state)
{
	(void)state;
	atomic_store(&fired, 0);
	softdoca_waker_timer_init(&self_t, cancel_self, NULL);
	softdoca_waker_timer_init(&other_t, record, (void *)(intptr_t)7);
	assert_int_equal(softdoca_waker_timer_arm(&self_t, now_ns() + 1 * MS), DOCA_SUCCESS);
	assert_true(wait_for(&fired, 2));
	assert_int_equal(order[1], 7);
	assert_true(wait_thread_gone());
}

/* ---- watches ------------------------------------------------------------------ */

static atomic_int watch_fired;

static void on_ready(void *arg)
{
	(void)arg;
	atomic_fetch_add(&watch_fired, 1);
}

static void test_watch_one_shot(void **state)
{
	struct softdoca_waker_watch w = {0};
	struct softdoca_waker_timer sentinel;
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	uint64_t one = 1;

	(void)state;
	assert_true(efd >= 0);
	atomic_store(&watch_fired, 0);
	atomic_store(&fired, 0);
	assert_int_equal(softdoca_waker_watch_add(&w, efd, on_ready, NULL), DOCA_SUCCESS);
	assert_true(softdoca_waker_thread_running());
	assert_int_equal(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
	assert_true(wait_for(&watch_fired, 1));
	/* Still readable (nobody reads the eventfd), but one-shot: no second
	 * call. The sentinel timer's wake-up comes from the same epoll_wait
	 * that would report the fd again. */
	softdoca_waker_timer_init(&sentinel, record, NULL);
	assert_int_equal(softdoca_waker_timer_arm(&sentinel, now_ns() + 20 * MS), DOCA_SUCCESS);
	assert_true(wait_for(&fired, 1));
	assert_int_equal(atomic_load(&watch_fired), 1);
	softdoca_waker_watch_rearm(&w);
	assert_true(wait_for(&watch_fired, 2));
	/* Removed: the thread has nothing left and ends. */
	softdoca_waker_watch_remove(&w);
	softdoca_waker_watch_rearm(&w); /* a no-op now */
	softdoca_waker_watch_remove(&w);
	assert_true(wait_thread_gone());
	assert_int_equal(atomic_load(&watch_fired), 2);
	close(efd);
}

/* ---- fork --------------------------------------------------------------------- */

/* The parent has a timer pending and a watch; the child has no waker
 * thread, sees neither as registered, and its own first timer starts a
 * thread of its own that fires it. Exit codes say what failed. */
static int child_checks(struct softdoca_waker_timer *inherited, struct softdoca_waker_watch *w)
{
	struct softdoca_waker_timer mine;

	if (softdoca_waker_thread_running() || waker_threads() != 0)
		return 10;
	if (softdoca_waker_timer_pending(inherited))
		return 11;
	softdoca_waker_timer_cancel(inherited); /* void here: a no-op */
	softdoca_waker_watch_remove(w);
#if UNDER_TSAN
	return 0; /* TSan refuses new threads after a multi-threaded fork */
#endif
	atomic_store(&fired, 0);
	softdoca_waker_timer_init(&mine, record, (void *)(intptr_t)5);
	if (softdoca_waker_timer_arm(&mine, now_ns() + 1 * MS) != DOCA_SUCCESS)
		return 12;
	if (!wait_for(&fired, 1) || order[0] != 5)
		return 13;
	if (!wait_thread_gone())
		return 14;
	return 0;
}

static void test_fork_child_starts_empty(void **state)
{
	struct softdoca_waker_timer far;
	struct softdoca_waker_watch w = {0};
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int status;
	pid_t pid;

	(void)state;
	assert_true(efd >= 0);
	softdoca_waker_timer_init(&far, record, NULL);
	assert_int_equal(softdoca_waker_timer_arm(&far, now_ns() + 60000 * MS), DOCA_SUCCESS);
	assert_int_equal(softdoca_waker_watch_add(&w, efd, on_ready, NULL), DOCA_SUCCESS);
	assert_int_equal(waker_threads(), 1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_checks(&far, &w));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The parent's registrations are untouched by the child. */
	assert_true(softdoca_waker_timer_pending(&far));
	assert_true(softdoca_waker_thread_running());
	softdoca_waker_timer_cancel(&far);
	softdoca_waker_watch_remove(&w);
	assert_true(wait_thread_gone());
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers_in_order),
		cmocka_unit_test(test_short_gaps_keep_one_thread),
		cmocka_unit_test(test_arm_earlier_only),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_callback_uses_waker),
		cmocka_unit_test(test_watch_one_shot),
		cmocka_unit_test(test_fork_child_starts_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
