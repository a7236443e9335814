/*
 * softdoca — the PE stall monitor: one WARNING per PE when task
 * completions wait in its queue while nobody calls doca_pe_progress on it
 * for SOFTDOCA_PE_STALL_MS milliseconds (default 3000, 0 turns it off).
 *
 * Real hardware cannot tell a program that forgot to progress its PE (or
 * connected the context to another PE than the one it progresses) from a
 * slow network; softdoca can. The data path pays one relaxed increment per
 * queued completion and one per doca_pe_progress call (pe.c). The rest
 * runs on a small thread of this file, started with the first PE, that
 * looks at every PE a few times per period; a PE is watched from create
 * to destroy under monitor.lock, so the thread never sees a freed one.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctx.h"
#include "log_internal.h"
#include "pe.h"

SDK_LOG_REGISTER(PE::STALL)

#define PE_STALL_ENV "SOFTDOCA_PE_STALL_MS"
#define PE_STALL_DEFAULT_MS 3000u
#define PE_STALL_MAX_MS 3600000u

static struct {
	pthread_mutex_t lock;  /* the list, the per-PE monitor fields, stop */
	pthread_cond_t wake;   /* stop requested */
	pthread_once_t once;
	struct doca_pe *pes;   /* watched PEs, through stall_next */
	uint32_t stall_ms;     /* 0: off */
	bool started;
	bool stop;
	pthread_t thread;
} monitor = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .once = PTHREAD_ONCE_INIT};

bool core_pe_stall_parse(const char *text, uint32_t *ms_out)
{
	uint64_t v;

	if (!softdoca_parse_uint(text, 0, PE_STALL_MAX_MS, &v))
		return false;
	*ms_out = (uint32_t)v;
	return true;
}

static uint64_t stall_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Looks at one PE; active is another PE the program progresses meanwhile
 * (named in the line) or NULL. */
static void stall_check(struct doca_pe *pe, uint64_t now, const struct doca_pe *active)
{
	uint64_t queued = atomic_load_explicit(&pe->cq_queued, memory_order_relaxed);
	uint64_t waiting = queued - atomic_load_explicit(&pe->cq_delivered, memory_order_relaxed);
	uint64_t calls = atomic_load_explicit(&pe->progress_calls, memory_order_relaxed);

	if (waiting == 0 || calls != pe->stall_seen_calls) {
		pe->stall_seen_calls = calls;
		pe->stall_since_ns = waiting == 0 ? 0 : now;
		return;
	}
	if (pe->stall_since_ns == 0) {
		pe->stall_since_ns = now;
		return;
	}
	if (pe->stall_warned || now - pe->stall_since_ns < (uint64_t)monitor.stall_ms * 1000000ull)
		return;
	pe->stall_warned = true;
	if (active != NULL)
		SDK_LOG_WARN("pe %p: %" PRIu64 " task completion(s) waited %u ms undelivered: doca_pe_progress is "
			     "not called on this PE, but it is on pe %p; connect the context to the PE the program "
			     "progresses (doca_pe_connect_ctx) or progress this one too (said once per PE; "
			     PE_STALL_ENV "=%u)",
			     (void *)pe, waiting, monitor.stall_ms, (const void *)active, monitor.stall_ms);
	else
		SDK_LOG_WARN("pe %p: %" PRIu64 " task completion(s) waited %u ms undelivered: doca_pe_progress is "
			     "not called on this PE; call it in the program's loop (or wait on its notification "
			     "handle, then progress) (said once per PE; " PE_STALL_ENV "=%u)",
			     (void *)pe, waiting, monitor.stall_ms, monitor.stall_ms);
}

/* A PE other than pe that the program progressed within the period (the
 * program's thread may not have run in every round of a busy machine). */
static const struct doca_pe *stall_active_other(const struct doca_pe *pe, uint64_t now)
{
	uint64_t period_ns = (uint64_t)monitor.stall_ms * 1000000ull;

	for (const struct doca_pe *p = monitor.pes; p != NULL; p = p->stall_next)
		if (p != pe && p->stall_active_ns != 0 && now - p->stall_active_ns < period_ns)
			return p;
	return NULL;
}

/* One round over every PE. Lock held. */
static void stall_round(void)
{
	uint64_t now = stall_now_ns();
	struct doca_pe *pe;

	for (pe = monitor.pes; pe != NULL; pe = pe->stall_next) {
		uint64_t calls = atomic_load_explicit(&pe->progress_calls, memory_order_relaxed);

		if (calls != pe->stall_round_calls)
			pe->stall_active_ns = now;
		pe->stall_round_calls = calls;
	}
	for (pe = monitor.pes; pe != NULL; pe = pe->stall_next)
		stall_check(pe, now, stall_active_other(pe, now));
}

static void *stall_thread(void *arg)
{
	/* A few looks per period: the warning comes between N and N + N/4. */
	uint64_t tick_ns = (uint64_t)monitor.stall_ms * 250000ull;
	struct timespec deadline;

	(void)arg;
	if (tick_ns < 5000000ull)
		tick_ns = 5000000ull;
	if (tick_ns > 500000000ull)
		tick_ns = 500000000ull;
	pthread_mutex_lock(&monitor.lock);
	while (!monitor.stop) {
		stall_round();
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_nsec += (long)(tick_ns % 1000000000ull);
		deadline.tv_sec += (time_t)(tick_ns / 1000000000ull) + deadline.tv_nsec / 1000000000L;
		deadline.tv_nsec %= 1000000000L;
		while (!monitor.stop && pthread_cond_timedwait(&monitor.wake, &monitor.lock, &deadline) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&monitor.lock);
	return NULL;
}

/* fork: the child has no monitor thread, and must not find the lock held
 * by it. Its PEs go unwatched (a child that execs starts afresh). */
static void stall_fork_prepare(void)
{
	pthread_mutex_lock(&monitor.lock);
}

static void stall_fork_parent(void)
{
	pthread_mutex_unlock(&monitor.lock);
}

static void stall_fork_child(void)
{
	monitor.started = false;
	pthread_mutex_unlock(&monitor.lock);
}

static void stall_init(void)
{
	const char *text = getenv(PE_STALL_ENV);
	pthread_condattr_t attr;

	monitor.stall_ms = PE_STALL_DEFAULT_MS;
	if (text != NULL && !core_pe_stall_parse(text, &monitor.stall_ms)) {
		monitor.stall_ms = PE_STALL_DEFAULT_MS;
		SDK_LOG_ERR(PE_STALL_ENV "=\"%s\" is not a whole number of milliseconds in [0, %u] (0 turns the PE "
			    "stall warning off); using %u",
			    text, PE_STALL_MAX_MS, PE_STALL_DEFAULT_MS);
	}
	if (monitor.stall_ms == 0)
		return;
	/* The thread's deadlines are CLOCK_MONOTONIC: immune to clock jumps. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_destroy(&monitor.wake);
	pthread_cond_init(&monitor.wake, &attr);
	pthread_condattr_destroy(&attr);
	pthread_atfork(stall_fork_prepare, stall_fork_parent, stall_fork_child);
	pthread_mutex_lock(&monitor.lock);
	if (pthread_create(&monitor.thread, NULL, stall_thread, NULL) != 0) {
		pthread_mutex_unlock(&monitor.lock);
		SDK_LOG_WARN("PE stall monitor not started (pthread_create failed): no warning about PEs that are not "
			     "progressed");
		return;
	}
	monitor.started = true;
	pthread_mutex_unlock(&monitor.lock);
}

SOFTDOCA_EXPORT uint32_t softdoca_explain_after_ms(void)
{
	pthread_once(&monitor.once, stall_init);
	return monitor.stall_ms;
}

void core_pe_stall_watch(struct doca_pe *pe)
{
	pthread_once(&monitor.once, stall_init);
	pthread_mutex_lock(&monitor.lock);
	pe->stall_next = monitor.pes;
	monitor.pes = pe;
	pthread_mutex_unlock(&monitor.lock);
}

void core_pe_stall_unwatch(struct doca_pe *pe)
{
	pthread_mutex_lock(&monitor.lock);
	for (struct doca_pe **link = &monitor.pes; *link != NULL; link = &(*link)->stall_next) {
		if (*link == pe) {
			*link = pe->stall_next;
			break;
		}
	}
	pthread_mutex_unlock(&monitor.lock);
}

/* The library is unloaded (or the process exits): the thread must not
 * outlive the code it runs. */
__attribute__((destructor)) static void stall_fini(void)
{
	pthread_mutex_lock(&monitor.lock);
	if (!monitor.started) {
		pthread_mutex_unlock(&monitor.lock);
		return;
	}
	monitor.stop = true;
	pthread_cond_signal(&monitor.wake);
	pthread_mutex_unlock(&monitor.lock);
	pthread_join(monitor.thread, NULL);
	monitor.started = false;
}
