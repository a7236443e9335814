/*
 * softdoca — the exporter's watch on the memory of its PCI exports (see
 * mmap_pci.h for why). The pieces are registered with one userfaultfd of
 * the process, in write-protect mode (no page is ever write-protected, so
 * no fault ever comes) and asking only for unmap and remap events: the
 * kernel then holds every munmap, mremap, brk shrink or MAP_FIXED mmap
 * over them until a thread has read the event. Anonymous memory can be
 * registered so, shmem (memfd, shared anonymous) and hugetlbfs too from
 * Linux 5.19; other files cannot. The watch thread holds importer copies
 * of watched exports (the table's paused flag), waits for those in
 * flight, reads the events, turns every export they touch into a
 * tombstone and lets copies go again.
 *
 * The thread takes no lock and allocates nothing: the thread it holds in
 * munmap may own any lock of the process (malloc's, to begin with).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log_internal.h"
#include "mmap_pci_table.h"

SDK_LOG_REGISTER(MMAP_PCI::WATCH)

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
/* Newer than some C library headers (Linux 5.11, 5.19). */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif

/* The watch thread waits this long for copies in flight (as a revoke
 * does). */
#define HOLD_WAIT_NS 2000000000LL
#define POLL_PAUSE_NS 20000L

static struct {
	int uffd;	       /* -1: none yet */
	int stop_fd;	       /* eventfd: the library is unloaded */
	pid_t pid;	       /* the process all this belongs to (fork) */
	pid_t failed_pid;      /* could not start in this process: logged, not retried */
	struct pci_table *table;
	pthread_t thread;
	bool started;
} watch = {.uffd = -1, .stop_fd = -1};

static _Atomic bool test_no_watch;

SOFTDOCA_EXPORT void softdoca_pci_test_no_watch(bool on)
{
	atomic_store(&test_no_watch, on);
}

static void pause_ns(long ns)
{
	const struct timespec t = {.tv_sec = 0, .tv_nsec = ns};

	nanosleep(&t, NULL);
}

/* ------------------------------------------------------------------ */
/* The watch thread                                                     */

static bool range_overlaps(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 < b1 && b0 < a1;
}

/* Copies in flight of live watched exports (their importers count
 * themselves in and respect the paused flag; others would keep us
 * waiting). */
static bool copies_in_flight(const struct pci_table *t)
{
	for (uint32_t i = 0; i < SOFTDOCA_PCI_TABLE_SLOTS; i++)
		if (pci_slot_live_mmap(&t->slots[i]) && (t->pieces[i].flags & PCI_FLAG_WATCHED) &&
		    atomic_load(&t->slots[i].users) > 0)
			return true;
	return false;
}

/* [start, end) is gone from this process: so is every export in it. */
static void revoke_range(struct pci_table *t, uint64_t start, uint64_t end)
{
	for (uint32_t i = 0; i < SOFTDOCA_PCI_TABLE_SLOTS; i++) {
		struct pci_slot *s = &t->slots[i];
		uint64_t id = atomic_load(&s->id);

		if (!pci_slot_live_mmap(s) || !range_overlaps(s->addr, s->addr + s->len, start, end))
			continue;
		/* Only this export: the exporter may have republished the slot. */
		atomic_compare_exchange_strong(&s->id, &id, PCI_ID_UNMAPPED);
	}
}

static void handle_event(struct pci_table *t, const struct uffd_msg *msg)
{
	if (msg->event == UFFD_EVENT_UNMAP)
		revoke_range(t, msg->arg.remove.start, msg->arg.remove.end);
	else if (msg->event == UFFD_EVENT_REMAP)
		revoke_range(t, msg->arg.remap.from, msg->arg.remap.from + msg->arg.remap.len);
}

/* Events are queued: hold importers (Dekker with import_enter: we raise
 * the flag, then read their counts), let copies in flight finish, then
 * read the events (which lets the unmapping threads go on) and revoke. */
static void handle_events(struct pci_table *t)
{
	struct uffd_msg msgs[16];
	long long waited = 0;
	ssize_t n;

	atomic_store(&t->hdr.paused, 1);
	while (copies_in_flight(t) && waited < HOLD_WAIT_NS) {
		pause_ns(POLL_PAUSE_NS);
		waited += POLL_PAUSE_NS;
	}
	while ((n = read(watch.uffd, msgs, sizeof(msgs))) > 0)
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(msgs[0]); i++)
			handle_event(t, &msgs[i]);
	atomic_store(&t->hdr.paused, 0);
}

static void *watch_main(void *arg)
{
	struct pci_table *t = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = watch.uffd, .events = POLLIN}, {.fd = watch.stop_fd, .events = POLLIN}};

		if (poll(p, 2, -1) < 0) {
			pause_ns(POLL_PAUSE_NS); /* EINTR (every signal is blocked, but still) */
			continue;
		}
		if (p[0].revents & POLLIN)
			handle_events(t);
		if (p[1].revents & POLLIN)
			return NULL;
	}
}

/* ------------------------------------------------------------------ */
/* Starting the watch                                                   */

static void log_unwatched(const char *what, int err)
{
	SDK_LOG_WARN("PCI export: this process cannot watch exported memory for unmapping (%s: %s): an importer "
		     "will not notice if anonymous memory it exports is unmapped or replaced without doca_mmap_stop "
		     "(file-backed memory is looked up instead). Fix: allow userfaultfd (Linux >= 5.11 without "
		     "privileges; containers: a seccomp profile that permits it, e.g. docker --cap-add SYS_PTRACE)",
		     what, strerror(err));
}

static int uffd_create(void)
{
	/* User-mode only: what an unprivileged process may open (we handle
	 * no faults at all); kernels before 5.11 do not know the flag. */
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	return fd;
}

/* A userfaultfd that reports unmap and remap events, and registers shmem
 * and hugetlbfs too where the kernel can (a refused handshake cannot be
 * retried on the same fd). */
static int uffd_open(void)
{
	const uint64_t events = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP;
	const uint64_t wanted[2] = {events | UFFD_FEATURE_WP_HUGETLBFS_SHMEM, events};
	int err = 0;

	for (unsigned int i = 0; i < 2; i++) {
		struct uffdio_api api = {.api = UFFD_API, .features = wanted[i]};
		int fd = uffd_create();

		if (fd < 0) {
			log_unwatched("userfaultfd", errno);
			return -1;
		}
		if (ioctl(fd, UFFDIO_API, &api) == 0)
			return fd;
		err = errno;
		close(fd);
	}
	log_unwatched("UFFDIO_API unmap and remap events", err);
	return -1;
}

/* With every signal blocked: the application's handlers run on its own
 * threads. */
static int thread_start(struct pci_table *t)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&watch.thread, NULL, watch_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Under the table lock: the watch of this process, started once. */
static bool watch_start(struct pci_table *t)
{
	int rc;

	if (watch.started && watch.pid == getpid())
		return true;
	if (watch.failed_pid == getpid())
		return false;
	if (atomic_load(&test_no_watch)) {
		log_unwatched("userfaultfd", ENOSYS);
		watch.failed_pid = getpid();
		return false;
	}
	watch.uffd = uffd_open();
	watch.stop_fd = watch.uffd < 0 ? -1 : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = watch.stop_fd < 0 ? errno : thread_start(t);
	if (watch.uffd < 0 || rc != 0) {
		if (watch.uffd >= 0)
			log_unwatched("watch thread", rc);
		core_pci_watch_drop_inherited();
		watch.failed_pid = getpid();
		return false;
	}
	watch.pid = getpid();
	watch.table = t;
	watch.started = true;
	t->hdr.watch_fd = watch.uffd;
	return true;
}

void core_pci_watch_drop_inherited(void)
{
	/* A forked child: the parent's thread is not here, and the parent's
	 * registrations were not inherited (no fork event was asked for). */
	if (watch.uffd >= 0)
		close(watch.uffd);
	if (watch.stop_fd >= 0)
		close(watch.stop_fd);
	watch.uffd = watch.stop_fd = -1;
	watch.started = false;
	watch.table = NULL;
}

/* ------------------------------------------------------------------ */
/* Registering and unregistering                                        */

static int uffd_register(uint64_t start, uint64_t end)
{
	struct uffdio_register r = {.range = {.start = start, .len = end - start}, .mode = UFFDIO_REGISTER_MODE_WP};

	return ioctl(watch.uffd, UFFDIO_REGISTER, &r) == 0 ? 0 : errno;
}

static void uffd_unregister(uint64_t start, uint64_t end)
{
	struct uffdio_range r = {.start = start, .len = end - start};

	/* Fails harmlessly when the memory is already gone. */
	(void)ioctl(watch.uffd, UFFDIO_UNREGISTER, &r);
}

/* The watched piece of another live export that covers addr, or the
 * lowest one starting in (addr, end): where the watch is still needed. */
static const struct pci_piece *other_piece_at(const struct pci_table *t, uint32_t skip, uint64_t addr,
					      uint64_t end)
{
	const struct pci_piece *best = NULL;

	for (uint32_t i = 0; i < SOFTDOCA_PCI_TABLE_SLOTS; i++) {
		const struct pci_pieces *p = &t->pieces[i];

		if (i == skip || !pci_slot_live_mmap(&t->slots[i]) || !(p->flags & PCI_FLAG_WATCHED))
			continue;
		for (uint32_t k = 0; k < p->n && k < PCI_EXPORT_PIECES; k++) {
			const struct pci_piece *q = &p->piece[k];

			if (!(q->state & PCI_PIECE_WATCHED) || q->end <= addr || q->start >= end)
				continue;
			if (q->start <= addr)
				return q;
			if (best == NULL || q->start < best->start)
				best = q;
		}
	}
	return best;
}

/* Unregister [start, end) but what other live exports still watch. */
static void unwatch_range(const struct pci_table *t, uint32_t skip, uint64_t start, uint64_t end)
{
	uint64_t at = start;

	while (at < end) {
		const struct pci_piece *q = other_piece_at(t, skip, at, end);

		if (q == NULL) {
			uffd_unregister(at, end);
			return;
		}
		if (q->start > at)
			uffd_unregister(at, q->start);
		at = q->end;
	}
}

void core_pci_watch_add(struct pci_table *t, struct pci_pieces *p)
{
	for (uint32_t k = 0; k < p->n && watch_start(t); k++) {
		struct pci_piece *q = &p->piece[k];
		int err = uffd_register(q->start, q->end);

		if (err == 0) {
			q->state |= PCI_PIECE_WATCHED;
			continue;
		}
		/* A file the kernel cannot watch is looked up by importers. */
		if (!pci_piece_is_file(q))
			SDK_LOG_WARN("PCI export: cannot watch [0x%llx, 0x%llx) for unmapping (UFFDIO_REGISTER: %s): "
				     "an importer will not notice if that memory is unmapped or replaced without "
				     "doca_mmap_stop",
				     (unsigned long long)q->start, (unsigned long long)q->end, strerror(err));
	}
}

void core_pci_watch_remove(struct pci_table *t, uint32_t slot)
{
	const struct pci_pieces *p = &t->pieces[slot];

	if (!watch.started || watch.pid != getpid())
		return;
	for (uint32_t k = 0; k < p->n && k < PCI_EXPORT_PIECES; k++)
		if (p->piece[k].state & PCI_PIECE_WATCHED)
			unwatch_range(t, slot, p->piece[k].start, p->piece[k].end);
}

/* The library is unloaded (or the process exits): unregister everything,
 * so that no munmap waits for a thread that is gone, then stop it. */
__attribute__((destructor)) static void watch_fini(void)
{
	uint64_t one = 1;

	if (!watch.started || watch.pid != getpid())
		return;
	for (uint32_t i = 0; i < SOFTDOCA_PCI_TABLE_SLOTS; i++) {
		const struct pci_pieces *p = &watch.table->pieces[i];

		for (uint32_t k = 0; k < p->n && k < PCI_EXPORT_PIECES; k++)
			if (p->piece[k].state & PCI_PIECE_WATCHED)
				uffd_unregister(p->piece[k].start, p->piece[k].end);
	}
	if (write(watch.stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(watch.thread, NULL);
	watch.started = false;
}

/* ------------------------------------------------------------------ */
/* Importer                                                             */

int core_pci_watch_import_fd(int pidfd, const struct pci_table *t, uint32_t pid)
{
	char path[64], link[64];
	int32_t fd = t->hdr.watch_fd;
	ssize_t n;
	int mine;

	if (pidfd < 0 || fd < 0)
		return -1;
	mine = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (mine < 0) {
		SDK_LOG_DBG("PCI import: no copy of process %u's userfaultfd (%s): unmappings are seen once its "
			    "watch thread has run",
			    pid, strerror(errno));
		return -1;
	}
	/* The table's word: make sure it is what it says. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", mine);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0 || (size_t)n != strlen("anon_inode:[userfaultfd]") ||
	    memcmp(link, "anon_inode:[userfaultfd]", (size_t)n) != 0) {
		SDK_LOG_WARN("PCI import: fd %d of process %u, named by its export table, is not a userfaultfd; "
			     "unmappings are seen once its watch thread has run",
			     fd, pid);
		close(mine);
		return -1;
	}
	return mine;
}

bool core_pci_watch_paused(const struct pci_table *t)
{
	return atomic_load(&t->hdr.paused) != 0;
}

bool core_pci_watch_pending(int watch_fd)
{
	struct pollfd p = {.fd = watch_fd, .events = POLLIN};

	return watch_fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}
