/*
 * softdoca — the comch watcher thread (see watch.h): a table of
 * registrations {pe, generation} under one mutex, and the thread that
 * sleeps in epoll on the registered contexts' epoll sets.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ctx.h"
#include "log_internal.h"
#include "watch.h"

SDK_LOG_REGISTER(COMCH_WATCH)

struct watch_slot {
	struct doca_pe *pe; /* NULL: free */
	uint32_t gen;
};

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct watch_slot *watch_slots;
static uint32_t watch_num_slots;
static int watch_epfd = -1;
static bool watch_thread_up;

/* fork: the child has no watcher thread, and an inherited epoll set would
 * be shared with the parent. It starts afresh; contexts it inherited
 * running lose their notifications (restart them). */
static void watch_fork_prepare(void)
{
	pthread_mutex_lock(&watch_lock);
}

static void watch_fork_parent(void)
{
	pthread_mutex_unlock(&watch_lock);
}

static void watch_fork_child(void)
{
	if (watch_epfd >= 0)
		close(watch_epfd);
	watch_epfd = -1;
	watch_thread_up = false;
	for (uint32_t i = 0; i < watch_num_slots; i++)
		watch_slots[i].pe = NULL;
	pthread_mutex_unlock(&watch_lock);
}

__attribute__((constructor)) static void watch_register_atfork(void)
{
	(void)pthread_atfork(watch_fork_prepare, watch_fork_parent, watch_fork_child);
}

static void *watch_thread_main(void *arg)
{
	struct epoll_event evs[16];

	(void)arg;
	for (;;) {
		int n = epoll_wait(watch_epfd, evs, 16, -1);

		if (n < 0 && errno != EINTR) {
			SDK_LOG_ERR("comch watcher: epoll_wait: %s; notifications stop", strerror(errno));
			return NULL;
		}
		pthread_mutex_lock(&watch_lock);
		for (int i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)evs[i].data.u64;
			uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);

			/* Under the lock: a closed registration is never woken, and
			 * its PE cannot go away meanwhile. */
			if (slot < watch_num_slots && watch_slots[slot].pe != NULL && watch_slots[slot].gen == gen)
				softdoca_pe_wake(watch_slots[slot].pe);
		}
		pthread_mutex_unlock(&watch_lock);
	}
}

/* Under watch_lock. */
static doca_error_t watch_start_locked(void)
{
	pthread_attr_t attr;
	pthread_t thread;
	int rc;

	if (watch_thread_up)
		return DOCA_SUCCESS;
	if (watch_epfd < 0)
		watch_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (watch_epfd < 0) {
		SDK_LOG_ERR("comch watcher: epoll_create1: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, watch_thread_main, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		SDK_LOG_ERR("comch watcher: cannot start its thread: %s", strerror(rc));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	watch_thread_up = true;
	return DOCA_SUCCESS;
}

/* Under watch_lock: a free slot index, growing the table if needed. */
static doca_error_t watch_slot_get_locked(uint32_t *slot_out)
{
	struct watch_slot *grown;
	uint32_t n;

	for (uint32_t i = 0; i < watch_num_slots; i++) {
		if (watch_slots[i].pe == NULL) {
			*slot_out = i;
			return DOCA_SUCCESS;
		}
	}
	n = watch_num_slots == 0 ? 16 : watch_num_slots * 2;
	grown = realloc(watch_slots, n * sizeof(*grown));
	if (grown == NULL) {
		SDK_LOG_ERR("comch watcher: no memory for %u registrations", n);
		return DOCA_ERROR_NO_MEMORY;
	}
	memset(grown + watch_num_slots, 0, (n - watch_num_slots) * sizeof(*grown));
	*slot_out = watch_num_slots;
	watch_slots = grown;
	watch_num_slots = n;
	return DOCA_SUCCESS;
}

doca_error_t comch_watch_open(struct comch_watch *w, struct doca_pe *pe)
{
	struct epoll_event ev;
	doca_error_t status;
	uint32_t slot;

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0) {
		SDK_LOG_ERR("comch: epoll_create1: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	pthread_mutex_lock(&watch_lock);
	status = watch_start_locked();
	if (status == DOCA_SUCCESS)
		status = watch_slot_get_locked(&slot);
	if (status != DOCA_SUCCESS)
		goto unlock;
	watch_slots[slot].pe = pe;
	watch_slots[slot].gen++;
	w->key = ((uint64_t)watch_slots[slot].gen << 32) | slot;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = w->key;
	if (epoll_ctl(watch_epfd, EPOLL_CTL_ADD, w->epfd, &ev) != 0) {
		SDK_LOG_ERR("comch: cannot register with the watcher: %s", strerror(errno));
		watch_slots[slot].pe = NULL;
		status = DOCA_ERROR_OPERATING_SYSTEM;
	}
unlock:
	pthread_mutex_unlock(&watch_lock);
	if (status != DOCA_SUCCESS) {
		close(w->epfd);
		w->epfd = -1;
	}
	return status;
}

void comch_watch_close(struct comch_watch *w)
{
	uint32_t slot = (uint32_t)w->key;

	if (w->epfd < 0)
		return;
	pthread_mutex_lock(&watch_lock);
	(void)epoll_ctl(watch_epfd, EPOLL_CTL_DEL, w->epfd, NULL);
	if (slot < watch_num_slots && watch_slots[slot].gen == (uint32_t)(w->key >> 32))
		watch_slots[slot].pe = NULL;
	pthread_mutex_unlock(&watch_lock);
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
	struct epoll_event ev;

	if (w->epfd < 0)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = w->key;
	(void)epoll_ctl(watch_epfd, EPOLL_CTL_MOD, w->epfd, &ev);
}
