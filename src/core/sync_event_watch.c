/*
 * softdoca — the sync event watcher: wakes PEs for parked wait tasks on
 * values that change without this process (see sync_event_watch.h). A
 * timer of Core's waker (waker.h) polls every WATCH_TICK_NS while anything
 * is watched and rests otherwise.
 */
#include <pthread.h>
#include <string.h>

#include "ctx.h"
#include "log_internal.h"
#include "mmap_pci.h"
#include "sync_event_watch.h"
#include "waker.h"

SDK_LOG_REGISTER(SYNC_EVENT::WATCH)

#define WATCH_TICK_NS 1000000L
/* Liveness of imports costs a syscall (or a /proc read): every few ticks. */
#define WATCH_LIVE_EVERY 8u

static struct {
	pthread_mutex_t lock; /* everything here and every watch */
	pthread_once_t once;
	struct core_se_watch *list;
	uint32_t epoch; /* bumped in a forked child: older watches are void */
	unsigned int tick;
	bool told_broken; /* the waker could not start: said once */
	struct softdoca_waker_timer timer;
} watcher = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

/* Under the lock: one look at every watched value. */
static void watch_round(bool check_live)
{
	for (struct core_se_watch *w = watcher.list; w != NULL; w = w->next) {
		uint64_t v = __atomic_load_n(w->value, __ATOMIC_SEQ_CST);

		if (v != w->last) {
			w->last = v;
			softdoca_pe_wake(w->pe);
		} else if (check_live && w->im != NULL && !core_pci_import_alive(w->im)) {
			softdoca_pe_wake(w->pe); /* the waits fail in progress */
		}
	}
}

/* The waker's timer: a round each tick while anything is watched. */
static uint64_t watch_tick(void *arg, uint64_t now)
{
	bool any;

	(void)arg;
	pthread_mutex_lock(&watcher.lock);
	any = watcher.list != NULL;
	if (any)
		watch_round(++watcher.tick % WATCH_LIVE_EVERY == 0);
	pthread_mutex_unlock(&watcher.lock);
	return any ? now + WATCH_TICK_NS : 0;
}

/* fork: the child must not find the lock held by the waker's thread. It
 * watches nothing it inherited (those values may live in mappings the
 * child drops, see mmap_pci.c); its next watch arms the timer again (the
 * child's waker starts empty). */
static void watch_fork_prepare(void)
{
	pthread_mutex_lock(&watcher.lock);
}

static void watch_fork_parent(void)
{
	pthread_mutex_unlock(&watcher.lock);
}

static void watch_fork_child(void)
{
	watcher.list = NULL;
	watcher.epoch++;
	pthread_mutex_unlock(&watcher.lock);
}

static void watch_init(void)
{
	softdoca_waker_timer_init(&watcher.timer, watch_tick, NULL);
	pthread_atfork(watch_fork_prepare, watch_fork_parent, watch_fork_child);
}

void core_se_watch_start(struct core_se_watch *w, const uint64_t *value, struct doca_pe *pe,
			 const struct core_pci_import *im)
{
	pthread_once(&watcher.once, watch_init);
	pthread_mutex_lock(&watcher.lock);
	w->value = value;
	w->pe = pe;
	w->im = im;
	w->last = __atomic_load_n(value, __ATOMIC_SEQ_CST);
	if (w->on && w->epoch != watcher.epoch)
		w->on = false; /* inherited through fork: on no list of ours */
	if (!w->on) {
		w->epoch = watcher.epoch;
		w->prev = NULL;
		w->next = watcher.list;
		if (watcher.list != NULL)
			watcher.list->prev = w;
		watcher.list = w;
		w->on = true;
	}
	pthread_mutex_unlock(&watcher.lock);
	/* Outside the lock (watch_tick takes it); pending already: no change. */
	if (softdoca_waker_timer_arm(&watcher.timer, softdoca_waker_now_ns() + WATCH_TICK_NS) != DOCA_SUCCESS &&
	    !__atomic_exchange_n(&watcher.told_broken, true, __ATOMIC_RELAXED))
		SDK_LOG_ERR("sync event watcher not started: wait tasks on PCI-shared or caller-memory values "
			    "complete only while the application progresses its PE, not on its notification handle");
}

void core_se_watch_stop(struct core_se_watch *w)
{
	pthread_mutex_lock(&watcher.lock);
	if (w->on && w->epoch == watcher.epoch) {
		if (w->prev != NULL)
			w->prev->next = w->next;
		else
			watcher.list = w->next;
		if (w->next != NULL)
			w->next->prev = w->prev;
	}
	w->prev = w->next = NULL;
	w->on = false;
	pthread_mutex_unlock(&watcher.lock);
}
