/*
 * softdoca — wake-ups for the PE's notification handle from comch sockets.
 * Not installed.
 *
 * Comch contexts read their sockets only inside doca_pe_progress. A
 * program that sleeps on the PE's notification handle must still be woken
 * when a socket becomes readable (a message, a client, a peer leaving) or,
 * while tasks wait in a backlog, writable. Each context keeps its sockets
 * in its own epoll set; one process-wide watcher thread sleeps on those
 * sets (one-shot) and calls softdoca_pe_wake when one fires. The thread
 * only wakes the PE: it never reads a socket nor runs a callback. The
 * context's progress op re-arms the one-shot, so a busy socket costs at
 * most one wake-up per progress call. After fork the child starts a
 * watcher of its own.
 */
#ifndef SOFTDOCA_COMCH_WATCH_H_
#define SOFTDOCA_COMCH_WATCH_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

struct doca_pe;

struct comch_watch {
	int epfd;     /* this context's sockets; -1 when closed */
	uint64_t key; /* its registration with the watcher */
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
