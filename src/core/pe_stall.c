/*
 * softdoca — the PE stall monitor: one WARNING per PE when task
 * completions wait in its queue while nobody calls doca_pe_progress on it
 * for SOFTDOCA_PE_STALL_MS milliseconds (default 3000, 0 turns it off).
 *
 * Real hardware cannot tell a program that forgot to progress its PE (or
 * connected the context to another PE than the one it progresses) from a
 * slow network; softdoca can. The data path pays one relaxed increment per
 * queued completion, per submitted task and per doca_pe_progress call
 * (pe.c, task.c). The rest runs on a timer of Core's waker (waker.h),
 * armed while any PE exists, that looks at every PE a few times per
 * period; a PE is watched from create to destroy under monitor.lock, so
 * the timer never sees a freed one.
 *
 * Two lines, each once per PE: completions that arrived and wait for a
 * progress call, and (none arrived) submitted tasks that wait while the
 * PE is neither progressed nor armed for a notification: many tasks only
 * move inside doca_pe_progress, so theirs never arrive.
 *
 * Fork: the child watches no PE it inherited (a child that execs starts
 * afresh); the PEs it creates are watched.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "log_internal.h"
#include "pe.h"
#include "waker.h"

SDK_LOG_REGISTER(PE::STALL)

#define PE_STALL_ENV "SOFTDOCA_PE_STALL_MS"
#define PE_STALL_DEFAULT_MS 3000u
#define PE_STALL_MAX_MS 3600000u

static struct {
	pthread_mutex_t lock; /* the list, the per-PE monitor fields */
	pthread_once_t once;
	struct doca_pe *pes; /* watched PEs, through stall_next */
	uint32_t stall_ms;   /* 0: off */
	struct softdoca_waker_timer timer;
} monitor = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

bool core_pe_stall_parse(const char *text, uint32_t *ms_out)
{
	uint64_t v;

	if (!softdoca_parse_uint(text, 0, PE_STALL_MAX_MS, &v))
		return false;
	*ms_out = (uint32_t)v;
	return true;
}

/* Completions waiting in pe's queue. */
static void stall_check_completions(struct doca_pe *pe, uint64_t now, uint64_t waiting, const struct doca_pe *active)
{
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

/* Submitted tasks with no completion yet, on a PE that is neither
 * progressed nor armed for a notification (a program asleep on the
 * handle is waiting rightly). */
static void stall_check_submitted(struct doca_pe *pe, uint64_t now, uint64_t pending, const struct doca_pe *active)
{
	if (pe->stall_sub_since_ns == 0) {
		pe->stall_sub_since_ns = now;
		return;
	}
	if (pe->stall_sub_warned || now - pe->stall_sub_since_ns < (uint64_t)monitor.stall_ms * 1000000ull)
		return;
	pe->stall_sub_warned = true;
	if (active != NULL)
		SDK_LOG_WARN("pe %p: %" PRIu64 " submitted task(s) waited %u ms for completion while doca_pe_progress "
			     "was not called on this PE, but it was on pe %p: a task moves and completes only inside "
			     "doca_pe_progress of its context's PE; connect the context to the PE the program "
			     "progresses (doca_pe_connect_ctx) or progress this one too (said once per PE; "
			     PE_STALL_ENV "=%u)",
			     (void *)pe, pending, monitor.stall_ms, (const void *)active, monitor.stall_ms);
	else
		SDK_LOG_WARN("pe %p: %" PRIu64 " submitted task(s) waited %u ms for completion while doca_pe_progress "
			     "was not called on this PE: a task moves and completes only inside doca_pe_progress; "
			     "call it in the program's loop after doca_task_submit (or wait on its notification "
			     "handle, then progress) (said once per PE; " PE_STALL_ENV "=%u)",
			     (void *)pe, pending, monitor.stall_ms, monitor.stall_ms);
}

/* Looks at one PE; active is another PE the program progresses meanwhile
 * (named in the line) or NULL. */
static void stall_check(struct doca_pe *pe, uint64_t now, const struct doca_pe *active)
{
	uint64_t queued = atomic_load_explicit(&pe->cq_queued, memory_order_relaxed);
	uint64_t waiting = queued - atomic_load_explicit(&pe->cq_delivered, memory_order_relaxed);
	uint64_t submitted = atomic_load_explicit(&pe->tasks_submitted, memory_order_relaxed);
	uint64_t calls = atomic_load_explicit(&pe->progress_calls, memory_order_relaxed);
	/* Completed tasks are queued before they count as delivered, so a
	 * task counts in pending from submit until its completion is queued
	 * (a submitted count read before a racing submit is at worst low). */
	uint64_t pending = submitted > queued ? submitted - queued : 0;
	/* Armed: asleep on the handle, rightly. Inside doca_pe_progress: the
	 * program did call it (a call that does not return is another
	 * story than "not called"). */
	bool excused = atomic_load_explicit(&pe->armed, memory_order_relaxed) ||
		       atomic_load_explicit(&pe->progressing, memory_order_relaxed);

	if (calls != pe->stall_seen_calls) {
		pe->stall_seen_calls = calls;
		pe->stall_since_ns = waiting == 0 ? 0 : now;
		pe->stall_sub_since_ns = pending == 0 || waiting != 0 || excused ? 0 : now;
		return;
	}
	if (waiting == 0)
		pe->stall_since_ns = 0;
	else
		stall_check_completions(pe, now, waiting, active);
	if (pending == 0 || waiting != 0 || excused)
		pe->stall_sub_since_ns = 0;
	else
		stall_check_submitted(pe, now, pending, active);
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
	uint64_t now = softdoca_waker_now_ns();
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

/* The waker's timer, a few times per period while any PE exists: the
 * warning comes between N and N + N/4. */
static uint64_t stall_tick_ns(void)
{
	uint64_t tick_ns = (uint64_t)monitor.stall_ms * 250000ull;

	if (tick_ns < 5000000ull)
		tick_ns = 5000000ull;
	if (tick_ns > 500000000ull)
		tick_ns = 500000000ull;
	return tick_ns;
}

static uint64_t stall_tick(void *arg, uint64_t now)
{
	bool any;

	(void)arg;
	pthread_mutex_lock(&monitor.lock);
	stall_round();
	any = monitor.pes != NULL;
	pthread_mutex_unlock(&monitor.lock);
	/* No PE: the timer rests (and the waker's thread may end) until the
	 * next doca_pe_create arms it again. */
	return any ? now + stall_tick_ns() : 0;
}

static void stall_init(void)
{
	const char *text = getenv(PE_STALL_ENV);

	monitor.stall_ms = PE_STALL_DEFAULT_MS;
	if (text != NULL && !core_pe_stall_parse(text, &monitor.stall_ms)) {
		monitor.stall_ms = PE_STALL_DEFAULT_MS;
		SDK_LOG_ERR(PE_STALL_ENV "=\"%s\" is not a whole number of milliseconds in [0, %u] (0 turns the PE "
			    "stall warning off); using %u",
			    text, PE_STALL_MAX_MS, PE_STALL_DEFAULT_MS);
	}
	softdoca_waker_timer_init(&monitor.timer, stall_tick, NULL);
}

SOFTDOCA_EXPORT uint32_t softdoca_explain_after_ms(void)
{
	pthread_once(&monitor.once, stall_init);
	return monitor.stall_ms;
}

void core_pe_stall_watch(struct doca_pe *pe)
{
	pthread_once(&monitor.once, stall_init);
	if (monitor.stall_ms == 0)
		return;
	pthread_mutex_lock(&monitor.lock);
	pe->stall_next = monitor.pes;
	monitor.pes = pe;
	pthread_mutex_unlock(&monitor.lock);
	/* Outside the lock: the waker may be running stall_tick. A timer
	 * already pending stays as it is. */
	(void)softdoca_waker_timer_arm(&monitor.timer, softdoca_waker_now_ns() + stall_tick_ns());
}

/* fork: the waker may be in stall_tick, holding the lock; the child must
 * not inherit it held. The child watches none of the PEs it inherited. */
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
	monitor.pes = NULL;
	pthread_mutex_unlock(&monitor.lock);
}

__attribute__((constructor)) static void stall_register_atfork(void)
{
	(void)pthread_atfork(stall_fork_prepare, stall_fork_parent, stall_fork_child);
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
