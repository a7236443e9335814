/*
 * softdoca — the waker: Core's one helper thread for timers and fd
 * watches. Not installed.
 *
 * Several parts of softdoca must wake a PE (or look at one) when nothing
 * of the application runs: the PE stall monitor, fault injection's held
 * work, Comch sockets, sync event values that change in another process.
 * They all run on this one thread, which sleeps in epoll on a timerfd set
 * to the earliest deadline and on the watched fds.
 *
 * The thread is started by the first registration and ends by itself when
 * nothing has been registered (no timer pending, no fd watched) for a
 * quarter of a second, so that a loop of short-lived PEs keeps one. It is named
 * "softdoca-waker" (/proc/<pid>/task/<tid>/comm). Its signals are all
 * blocked (the application's handlers run on its own threads).
 *
 * Callbacks run on the waker's thread, one at a time, with no lock of the
 * waker held: they may arm, cancel and rearm anything but themselves
 * synchronously. They must be short (everyone else waits behind them) and
 * must not block on the application.
 *
 * Fork (pthread_atfork): the child has no waker thread and nothing
 * registered. Timers and watches it inherited are void there (cancel and
 * rearm are no-ops on them); its first registration starts a thread of
 * its own. Inherited fds are not touched: the epoll set is the parent's.
 *
 * Not a client: the mmap PCI watch (mmap_pci_watch.c) keeps its own
 * thread, which must take no lock and allocate nothing (the thread it
 * holds in munmap may own malloc's lock); a callback here may do both.
 *
 * Deadlines are CLOCK_MONOTONIC nanoseconds (softdoca_waker_now_ns).
 * The functions are exported from libdoca_common for the other softdoca
 * libraries; no public header declares them.
 */
#ifndef SOFTDOCA_CORE_WAKER_H_
#define SOFTDOCA_CORE_WAKER_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

/* A timer callback: returns when to run again (0: not again, unless it
 * was armed meanwhile). now is the waker's clock at the call. */
typedef uint64_t (*softdoca_waker_timer_cb_t)(void *arg, uint64_t now);
/* A watch callback: fd became ready; the watch is one-shot until rearmed. */
typedef void (*softdoca_waker_watch_cb_t)(void *arg);

/* Embedded in its owner; zero-initialised or softdoca_waker_timer_init.
 * Every field belongs to the waker. */
struct softdoca_waker_timer {
	softdoca_waker_timer_cb_t cb;
	void *arg;
	uint64_t due;	/* 0: not pending */
	uint32_t index; /* in the waker's heap while pending */
	uint32_t epoch; /* the waker's when armed (fork) */
};

struct softdoca_waker_watch {
	softdoca_waker_watch_cb_t cb;
	void *arg;
	int fd;
	uint64_t id; /* its key in epoll; 0: not registered */
	uint32_t epoch;
	struct softdoca_waker_watch *next;
};

uint64_t softdoca_waker_now_ns(void);

void softdoca_waker_timer_init(struct softdoca_waker_timer *t, softdoca_waker_timer_cb_t cb, void *arg);

/* Run t at due (>= 1), or earlier if it is already pending earlier.
 * Any thread. OPERATING_SYSTEM when the thread cannot be started (said
 * once in the log). */
doca_error_t softdoca_waker_timer_arm(struct softdoca_waker_timer *t, uint64_t due);

/* t will not run again until armed again; if its callback is running on
 * the waker's thread, waits for it to return (unless called from it). */
void softdoca_waker_timer_cancel(struct softdoca_waker_timer *t);

/* Whether t is pending (for tests and asserts). */
bool softdoca_waker_timer_pending(const struct softdoca_waker_timer *t);

/* Watch fd for readability (EPOLLIN, one-shot): cb(arg) runs once when it
 * is readable, then again after each softdoca_waker_watch_rearm. */
doca_error_t softdoca_waker_watch_add(struct softdoca_waker_watch *w, int fd, softdoca_waker_watch_cb_t cb,
				      void *arg);
void softdoca_waker_watch_rearm(struct softdoca_waker_watch *w);
/* Forget w (no-op when not registered); as cancel, waits for a running
 * callback. fd stays open (the caller's). */
void softdoca_waker_watch_remove(struct softdoca_waker_watch *w);

/* The waker's thread is running (tests). */
bool softdoca_waker_thread_running(void);

#endif /* SOFTDOCA_CORE_WAKER_H_ */
