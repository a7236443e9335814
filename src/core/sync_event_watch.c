/*
 * softdoca — the sync event watcher: the thread that wakes PEs for parked
 * wait tasks on values that change without this process (see
 * sync_event_watch.h). It polls every WATCH_TICK_NS while anything is
 * watched and sleeps on a condition variable otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "ctx.h"
#include "log_internal.h"
#include "mmap_pci.h"
#include "sync_event_watch.h"

SDK_LOG_REGISTER(SYNC_EVENT::WATCH)

#define WATCH_TICK_NS 1000000L
/* Liveness of imports costs a syscall (or a /proc read): every few ticks. */
#define WATCH_LIVE_EVERY 8u

static struct {
	pthread_mutex_t lock; /* everything here and every watch */
	pthread_cond_t cond;  /* something to watch, or stop */
	pthread_once_t once;
	struct core_se_watch *list;
	uint32_t epoch; /* bumped in a forked child: older watches are void */
	bool started;
	bool broken; /* pthread_create failed: logged once, not retried */
	bool stop;
	pthread_t thread;
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

static void watch_sleep_tick(void)
{
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_nsec += WATCH_TICK_NS;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	(void)pthread_cond_timedwait(&watcher.cond, &watcher.lock, &deadline);
}

static void *watch_main(void *arg)
{
	unsigned int tick = 0;

	(void)arg;
	pthread_mutex_lock(&watcher.lock);
	while (!watcher.stop) {
		if (watcher.list == NULL) {
			pthread_cond_wait(&watcher.cond, &watcher.lock);
			continue;
		}
		watch_round(++tick % WATCH_LIVE_EVERY == 0);
		watch_sleep_tick();
	}
	pthread_mutex_unlock(&watcher.lock);
	return NULL;
}

/* fork: the child has no thread and must not find the lock held by it.
 * It watches nothing it inherited (those values may live in mappings the
 * child drops, see mmap_pci.c) and starts a thread of its own at its next
 * watch. */
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
	watcher.started = false;
	watcher.list = NULL;
	watcher.epoch++;
	pthread_mutex_unlock(&watcher.lock);
}

static void watch_init(void)
{
	pthread_condattr_t attr;

	/* Deadlines are CLOCK_MONOTONIC: immune to clock jumps. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&watcher.cond, &attr);
	pthread_condattr_destroy(&attr);
	pthread_atfork(watch_fork_prepare, watch_fork_parent, watch_fork_child);
}

/* Under the lock: the thread, with every signal blocked (the
 * application's handlers run on its own threads). */
static void watch_thread_start_locked(void)
{
	sigset_t all, old;
	int rc;

	if (watcher.started || watcher.broken)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&watcher.thread, NULL, watch_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		watcher.broken = true;
		SDK_LOG_ERR("sync event watcher not started (%s): wait tasks on PCI-shared or caller-memory values "
			    "complete only while the application progresses its PE, not on its notification handle",
			    strerror(rc));
		return;
	}
	watcher.started = true;
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
	watch_thread_start_locked();
	pthread_cond_signal(&watcher.cond);
	pthread_mutex_unlock(&watcher.lock);
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

/* The library is unloaded (or the process exits): the thread must not
 * outlive the code it runs. */
__attribute__((destructor)) static void watch_fini(void)
{
	pthread_mutex_lock(&watcher.lock);
	if (!watcher.started) {
		pthread_mutex_unlock(&watcher.lock);
		return;
	}
	watcher.stop = true;
	pthread_cond_signal(&watcher.cond);
	pthread_mutex_unlock(&watcher.lock);
	pthread_join(watcher.thread, NULL);
	watcher.started = false;
}
