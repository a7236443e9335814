/*
 * softdoca — the comch watch (see watch.h): each context's epoll set is
 * one fd watch of Core's waker (waker.h), whose callback wakes the PE.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ctx.h"
#include "log_internal.h"
#include "watch.h"

SDK_LOG_REGISTER(COMCH_WATCH)

/* On the waker's thread: only wake the PE (remove waits for this to
 * return, so the PE is still there). */
static void watch_fired(void *arg)
{
	softdoca_pe_wake(arg);
}

doca_error_t comch_watch_open(struct comch_watch *w, struct doca_pe *pe)
{
	doca_error_t status;

	memset(&w->reg, 0, sizeof(w->reg));
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0) {
		SDK_LOG_ERR("comch: epoll_create1: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	status = softdoca_waker_watch_add(&w->reg, w->epfd, watch_fired, pe);
	if (status != DOCA_SUCCESS) {
		SDK_LOG_ERR("comch: cannot register with the waker: %s (a PE asleep on its notification handle "
			    "is not woken for this context's sockets)",
			    doca_error_get_name(status));
		close(w->epfd);
		w->epfd = -1;
	}
	return status;
}

void comch_watch_close(struct comch_watch *w)
{
	if (w->epfd < 0)
		return;
	softdoca_waker_watch_remove(&w->reg);
	close(w->epfd);
	w->epfd = -1;
}

void comch_watch_fd(struct comch_watch *w, int fd, bool want_out)
{
	struct epoll_event ev;

	if (w->epfd < 0 || fd < 0)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | (want_out ? EPOLLOUT : 0);
	ev.data.fd = fd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, fd, &ev) == 0)
		return;
	if (errno != ENOENT || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
		SDK_LOG_WARN_RL("comch: cannot watch socket %d: %s (notifications may be late)", fd, strerror(errno));
}

void comch_watch_rearm(struct comch_watch *w)
{
	if (w->epfd >= 0)
		softdoca_waker_watch_rearm(&w->reg);
}
