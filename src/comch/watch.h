/*
 * softdoca — wake-ups for the PE's notification handle from comch sockets.
 * Not installed.
 *
 * Comch contexts read their sockets only inside doca_pe_progress. A
 * program that sleeps on the PE's notification handle must still be woken
 * when a socket becomes readable (a message, a client, a peer leaving) or,
 * while tasks wait in a backlog, writable. Each context keeps its sockets
 * in its own epoll set, which is a one-shot fd watch of Core's waker
 * (waker.h): its thread calls softdoca_pe_wake when the set is readable.
 * It only wakes the PE: it never reads a socket nor runs a callback. The
 * context's progress op re-arms the one-shot, so a busy socket costs at
 * most one wake-up per progress call. After fork the child's waker has no
 * watch: contexts it inherited running lose their notifications.
 */
#ifndef SOFTDOCA_COMCH_WATCH_H_
#define SOFTDOCA_COMCH_WATCH_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

#include "waker.h"

struct doca_pe;

struct comch_watch {
	int epfd; /* this context's sockets; -1 when closed */
	struct softdoca_waker_watch reg;
};

/* Register a running context whose PE is pe. */
doca_error_t comch_watch_open(struct comch_watch *w, struct doca_pe *pe);
/* Forget it (safe on a closed watch); the watcher will not touch pe again. */
void comch_watch_close(struct comch_watch *w);
/* Watch fd for reading (and for writing when want_out). A closed fd
 * leaves the set by itself. */
void comch_watch_fd(struct comch_watch *w, int fd, bool want_out);
/* Let the watcher fire again for this context (from the progress op). */
void comch_watch_rearm(struct comch_watch *w);

#endif /* SOFTDOCA_COMCH_WATCH_H_ */
