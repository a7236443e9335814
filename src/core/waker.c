/*
 * softdoca — the waker (see waker.h): a min-heap of timers by deadline,
 * a list of fd watches, and one thread that sleeps in epoll on a timerfd
 * (the earliest deadline), an eventfd (look again: stop, or nothing left)
 * and the watched fds.
 *
 * Everything here belongs to waker.lock. A callback runs with the lock
 * released and its timer or watch marked running; cancel and remove wait
 * on waker.returned until it is not, so that once they return the
 * callback's object may be freed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "log_internal.h"
#include "waker.h"

SDK_LOG_REGISTER(CORE::WAKER)

/* How long the thread stays with nothing registered before it ends: a
 * program that makes and destroys a PE or context in a loop then keeps
 * one thread instead of starting one a round (each start while the last
 * is still ending costs a stack and a malloc arena more). */
#define WAKER_LINGER_MS 250

/* epoll keys of the waker's own fds; watches count from WAKER_FIRST_ID. */
#define WAKER_ID_KICK 1u
#define WAKER_ID_TIMER 2u
#define WAKER_FIRST_ID 16u

static struct {
	pthread_mutex_t lock;
	pthread_cond_t returned; /* a callback returned */
	struct softdoca_waker_timer **heap;
	uint32_t num_timers, cap_timers;
	struct softdoca_waker_watch *watches;
	uint64_t next_id;
	int epfd, tfd, kick;	/* -1 until first use */
	uint64_t tfd_due;	/* the deadline the timerfd holds (0: none) */
	const void *running;	/* the timer or watch whose callback runs */
	pthread_t thread;
	bool up;		/* the thread runs (or is being made) */
	bool broken;		/* it could not be made: said once */
	bool stop;		/* the library is unloaded */
	uint32_t epoch;		/* bumped in a forked child */
} waker = {.lock = PTHREAD_MUTEX_INITIALIZER,
	   .returned = PTHREAD_COND_INITIALIZER,
	   .next_id = WAKER_FIRST_ID,
	   .epfd = -1,
	   .tfd = -1,
	   .kick = -1,
	   .epoch = 1};

SOFTDOCA_EXPORT uint64_t softdoca_waker_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the heap -------------------------------------------------------------- */

static void heap_place(uint32_t i, struct softdoca_waker_timer *t)
{
	waker.heap[i] = t;
	t->index = i;
}

static void heap_up(uint32_t i)
{
	struct softdoca_waker_timer *t = waker.heap[i];

	while (i > 0 && waker.heap[(i - 1) / 2]->due > t->due) {
		heap_place(i, waker.heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_place(i, t);
}

static void heap_down(uint32_t i)
{
	struct softdoca_waker_timer *t = waker.heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= waker.num_timers)
			break;
		if (c + 1 < waker.num_timers && waker.heap[c + 1]->due < waker.heap[c]->due)
			c++;
		if (waker.heap[c]->due >= t->due)
			break;
		heap_place(i, waker.heap[c]);
		i = c;
	}
	heap_place(i, t);
}

static bool heap_insert(struct softdoca_waker_timer *t, uint64_t due)
{
	if (waker.num_timers == waker.cap_timers) {
		uint32_t cap = waker.cap_timers == 0 ? 16 : waker.cap_timers * 2;
		struct softdoca_waker_timer **grown = realloc(waker.heap, cap * sizeof(*grown));

		if (grown == NULL) {
			SDK_LOG_ERR("waker: no memory for %u timers", cap);
			return false;
		}
		waker.heap = grown;
		waker.cap_timers = cap;
	}
	t->due = due;
	t->epoch = waker.epoch;
	heap_place(waker.num_timers++, t);
	heap_up(t->index);
	return true;
}

static void heap_remove(struct softdoca_waker_timer *t)
{
	uint32_t i = t->index;
	struct softdoca_waker_timer *last = waker.heap[--waker.num_timers];

	t->due = 0;
	if (last == t)
		return;
	heap_place(i, last);
	heap_down(i);
	heap_up(last->index);
}

static bool timer_pending_locked(const struct softdoca_waker_timer *t)
{
	return t->due != 0 && t->epoch == waker.epoch;
}

/* ---- the thread ------------------------------------------------------------ */

static bool waker_idle_locked(void)
{
	return waker.num_timers == 0 && waker.watches == NULL;
}

/* The timerfd holds the earliest deadline (or none). */
static void waker_timerfd_update_locked(void)
{
	uint64_t due = waker.num_timers > 0 ? waker.heap[0]->due : 0;
	struct itimerspec its;

	if (due == waker.tfd_due || waker.tfd < 0)
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(due / 1000000000ull);
	its.it_value.tv_nsec = (long)(due % 1000000000ull);
	if (timerfd_settime(waker.tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0) {
		SDK_LOG_ERR("waker: timerfd_settime: %s", strerror(errno));
		return;
	}
	waker.tfd_due = due;
}

static void waker_kick_locked(void)
{
	uint64_t one = 1;

	if (waker.up && write(waker.kick, &one, sizeof(one)) < 0 && errno != EAGAIN)
		SDK_LOG_ERR("waker: eventfd write: %s", strerror(errno));
}

static void waker_drain(int fd)
{
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
}

static void waker_fire_watch_locked(uint64_t id)
{
	struct softdoca_waker_watch *w;

	for (w = waker.watches; w != NULL && w->id != id; w = w->next)
		;
	if (w == NULL)
		return; /* removed after the event came */
	waker.running = w;
	pthread_mutex_unlock(&waker.lock);
	w->cb(w->arg);
	pthread_mutex_lock(&waker.lock);
	waker.running = NULL;
	pthread_cond_broadcast(&waker.returned);
}

static void waker_fire_timers_locked(void)
{
	uint64_t now = softdoca_waker_now_ns();

	while (waker.num_timers > 0 && waker.heap[0]->due <= now) {
		struct softdoca_waker_timer *t = waker.heap[0];
		uint64_t next;

		heap_remove(t);
		waker.running = t;
		pthread_mutex_unlock(&waker.lock);
		next = t->cb(t->arg, now);
		pthread_mutex_lock(&waker.lock);
		waker.running = NULL;
		if (next != 0 && next <= now)
			next = now + 1; /* not again in this round */
		if (next != 0 && timer_pending_locked(t) && next < t->due) {
			t->due = next;
			heap_up(t->index);
		} else if (next != 0 && !timer_pending_locked(t)) {
			(void)heap_insert(t, next);
		}
		pthread_cond_broadcast(&waker.returned);
	}
}

static void *waker_main(void *arg)
{
	struct epoll_event evs[16];

	(void)arg;
	pthread_mutex_lock(&waker.lock);
	while (!waker.stop) {
		int timeout = waker_idle_locked() ? WAKER_LINGER_MS : -1;
		int n;

		pthread_mutex_unlock(&waker.lock);
		n = epoll_wait(waker.epfd, evs, 16, timeout);
		pthread_mutex_lock(&waker.lock);
		if (n < 0 && errno != EINTR) {
			SDK_LOG_ERR("waker: epoll_wait: %s; timers and watches stop", strerror(errno));
			break;
		}
		if (n == 0 && waker_idle_locked())
			break; /* nothing registered for a whole linger */
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == WAKER_ID_KICK)
				waker_drain(waker.kick);
			else if (evs[i].data.u64 == WAKER_ID_TIMER)
				waker_drain(waker.tfd);
			else
				waker_fire_watch_locked(evs[i].data.u64);
		}
		waker_fire_timers_locked();
		waker_timerfd_update_locked();
	}
	/* Nothing registered for a while: the thread ends, detached (nobody joins a
	 * thread that left by itself; a process that ends with _exit would
	 * otherwise hold an unjoined thread, which a thread checker reports),
	 * and the next registration makes another. Told to stop, it is
	 * joined by waker_fini instead. pthread_exit right after the unlock:
	 * no more of this library's code runs on it. */
	waker.up = false;
	if (!waker.stop)
		(void)pthread_detach(pthread_self());
	pthread_mutex_unlock(&waker.lock);
	pthread_exit(NULL);
}

static bool waker_add_fd(int fd, uint64_t id)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = id;
	return epoll_ctl(waker.epfd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

/* The epoll set with the kick and the timerfd in it, made once. */
static bool waker_fds_locked(void)
{
	if (waker.epfd >= 0)
		return true;
	waker.epfd = epoll_create1(EPOLL_CLOEXEC);
	waker.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	waker.kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (waker.epfd >= 0 && waker.tfd >= 0 && waker.kick >= 0 && waker_add_fd(waker.kick, WAKER_ID_KICK) &&
	    waker_add_fd(waker.tfd, WAKER_ID_TIMER))
		return true;
	SDK_LOG_ERR("waker: cannot make its epoll set: %s", strerror(errno));
	if (waker.epfd >= 0)
		close(waker.epfd);
	if (waker.tfd >= 0)
		close(waker.tfd);
	if (waker.kick >= 0)
		close(waker.kick);
	waker.epfd = waker.tfd = waker.kick = -1;
	return false;
}

/* Under the lock: the thread runs (made now if needed), with every signal
 * blocked. */
static doca_error_t waker_start_locked(void)
{
	sigset_t all, old;
	int rc;

	if (waker.up)
		return DOCA_SUCCESS;
	if (waker.broken || waker.stop)
		return DOCA_ERROR_OPERATING_SYSTEM;
	if (!waker_fds_locked()) {
		waker.broken = true;
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&waker.thread, NULL, waker_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		waker.broken = true;
		SDK_LOG_ERR("softdoca's helper thread not started (%s): no PE stall warnings, and PEs asleep on their "
			    "notification handle are not woken for Comch sockets, sync event values or fault "
			    "injection's held work (progressing the PE still completes them)",
			    strerror(rc));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	/* Named here (before any registration returns), so that tools and
	 * tests can tell it from the program's threads. */
	(void)pthread_setname_np(waker.thread, "softdoca-waker");
	waker.up = true;
	return DOCA_SUCCESS;
}

static bool waker_is_self(void)
{
	return waker.up && pthread_equal(pthread_self(), waker.thread);
}

/* Under the lock: wait until obj's callback is not running. */
static void waker_wait_returned_locked(const void *obj)
{
	while (waker.running == obj && !waker_is_self())
		pthread_cond_wait(&waker.returned, &waker.lock);
}

/* ---- timers ---------------------------------------------------------------- */

SOFTDOCA_EXPORT void softdoca_waker_timer_init(struct softdoca_waker_timer *t, softdoca_waker_timer_cb_t cb,
					       void *arg)
{
	memset(t, 0, sizeof(*t));
	t->cb = cb;
	t->arg = arg;
}

SOFTDOCA_EXPORT doca_error_t softdoca_waker_timer_arm(struct softdoca_waker_timer *t, uint64_t due)
{
	doca_error_t status = DOCA_SUCCESS;

	if (due == 0)
		due = 1;
	pthread_mutex_lock(&waker.lock);
	if (timer_pending_locked(t)) {
		if (due < t->due) {
			t->due = due;
			heap_up(t->index);
		}
	} else {
		status = waker_start_locked();
		if (status == DOCA_SUCCESS && !heap_insert(t, due))
			status = DOCA_ERROR_NO_MEMORY;
	}
	waker_timerfd_update_locked();
	pthread_mutex_unlock(&waker.lock);
	return status;
}

SOFTDOCA_EXPORT void softdoca_waker_timer_cancel(struct softdoca_waker_timer *t)
{
	pthread_mutex_lock(&waker.lock);
	do {
		if (timer_pending_locked(t))
			heap_remove(t);
		waker_wait_returned_locked(t);
	} while (timer_pending_locked(t)); /* its callback armed it again */
	t->due = 0;
	waker_timerfd_update_locked();
	if (waker_idle_locked())
		waker_kick_locked();
	pthread_mutex_unlock(&waker.lock);
}

SOFTDOCA_EXPORT bool softdoca_waker_timer_pending(const struct softdoca_waker_timer *t)
{
	bool pending;

	pthread_mutex_lock(&waker.lock);
	pending = timer_pending_locked(t);
	pthread_mutex_unlock(&waker.lock);
	return pending;
}

/* ---- watches --------------------------------------------------------------- */

static bool watch_registered_locked(const struct softdoca_waker_watch *w)
{
	return w->id != 0 && w->epoch == waker.epoch;
}

static int watch_ctl(int op, const struct softdoca_waker_watch *w)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = w->id;
	return epoll_ctl(waker.epfd, op, w->fd, &ev);
}

SOFTDOCA_EXPORT doca_error_t softdoca_waker_watch_add(struct softdoca_waker_watch *w, int fd,
						      softdoca_waker_watch_cb_t cb, void *arg)
{
	doca_error_t status;

	pthread_mutex_lock(&waker.lock);
	status = waker_start_locked();
	if (status != DOCA_SUCCESS)
		goto unlock;
	w->cb = cb;
	w->arg = arg;
	w->fd = fd;
	w->id = waker.next_id++;
	w->epoch = waker.epoch;
	if (watch_ctl(EPOLL_CTL_ADD, w) != 0) {
		SDK_LOG_ERR("waker: cannot watch fd %d: %s", fd, strerror(errno));
		w->id = 0;
		status = DOCA_ERROR_OPERATING_SYSTEM;
		goto unlock;
	}
	w->next = waker.watches;
	waker.watches = w;
unlock:
	pthread_mutex_unlock(&waker.lock);
	return status;
}

/* Called on every progress of a Comch context: no lock. The caller owns
 * w (it does not race with its own remove); the epoll set changes only in
 * a forked child, which has one thread. */
SOFTDOCA_EXPORT void softdoca_waker_watch_rearm(struct softdoca_waker_watch *w)
{
	if (w->id == 0 || w->epoch != waker.epoch)
		return;
	(void)watch_ctl(EPOLL_CTL_MOD, w);
}

SOFTDOCA_EXPORT void softdoca_waker_watch_remove(struct softdoca_waker_watch *w)
{
	pthread_mutex_lock(&waker.lock);
	if (watch_registered_locked(w)) {
		(void)epoll_ctl(waker.epfd, EPOLL_CTL_DEL, w->fd, NULL);
		for (struct softdoca_waker_watch **link = &waker.watches; *link != NULL; link = &(*link)->next) {
			if (*link == w) {
				*link = w->next;
				break;
			}
		}
		waker_wait_returned_locked(w);
	}
	w->id = 0;
	w->next = NULL;
	if (waker_idle_locked())
		waker_kick_locked();
	pthread_mutex_unlock(&waker.lock);
}

SOFTDOCA_EXPORT bool softdoca_waker_thread_running(void)
{
	bool up;

	pthread_mutex_lock(&waker.lock);
	up = waker.up;
	pthread_mutex_unlock(&waker.lock);
	return up;
}

/* ---- fork and unload -------------------------------------------------------- */

static void waker_fork_prepare(void)
{
	pthread_mutex_lock(&waker.lock);
}

static void waker_fork_parent(void)
{
	pthread_mutex_unlock(&waker.lock);
}

/* The child: no thread, nothing registered, fds of its own at its first
 * registration (the inherited epoll set is the parent's: only closed). */
static void waker_fork_child(void)
{
	if (waker.epfd >= 0)
		close(waker.epfd);
	if (waker.tfd >= 0)
		close(waker.tfd);
	if (waker.kick >= 0)
		close(waker.kick);
	waker.epfd = waker.tfd = waker.kick = -1;
	waker.tfd_due = 0;
	waker.num_timers = 0;
	waker.watches = NULL;
	waker.running = NULL;
	waker.up = false;
	waker.broken = false;
	waker.epoch++;
	pthread_cond_init(&waker.returned, NULL);
	pthread_mutex_unlock(&waker.lock);
}

__attribute__((constructor)) static void waker_register_atfork(void)
{
	(void)pthread_atfork(waker_fork_prepare, waker_fork_parent, waker_fork_child);
}

/* The library is unloaded (or the process exits): the thread must not
 * outlive the code it runs. */
__attribute__((destructor)) static void waker_fini(void)
{
	bool join;

	pthread_mutex_lock(&waker.lock);
	waker.stop = true;
	waker_kick_locked();
	join = waker.up;
	pthread_mutex_unlock(&waker.lock);
	if (join)
		pthread_join(waker.thread, NULL);
	pthread_mutex_lock(&waker.lock);
	waker.up = false;
	pthread_mutex_unlock(&waker.lock);
}
