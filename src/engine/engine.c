/*
 * softdoca — the soft NIC's workers and service thread: one worker per
 * RDMA context, with its links (link.h: UCX for peers on this host, the
 * TCP link of link_tcp.c for the rest), and the dispatch of incoming
 * messages to the engine's handlers.
 *
 * Who drives a worker: whichever thread is inside the library. The
 * application's thread posts directly (engine_post) and progresses in
 * doca_pe_progress; the per-process service thread sleeps in epoll on the
 * workers' event fds and progresses a worker when traffic arrives that
 * nobody else is serving (a responder blocked in getchar() must still have
 * its memory read and written). The worker lock serialises them; the
 * application's progress only try-locks, so it never waits behind the
 * service thread. Idle costs nothing: the service thread sleeps until an
 * event fd fires or a parked operation's deadline passes. While traffic
 * flows it polls the worker a while before it sleeps again (svc_spin),
 * as a wake-up costs more than most gaps between messages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <doca_dev.h>

#include "core_engine.h"
#include "engine_internal.h"
#include "link_tcp.h"
#include "link_ucx.h"
#include "ucx_tls.h"

SDK_LOG_REGISTER(ENGINE)

/* How long the service thread sleeps at most when operations are parked. */
#define SVC_MAX_SLEEP_MS 50

/* A worker's spin window (see svc_spin): it starts at the least, doubles
 * (at least) when traffic came back within the most after the thread
 * armed and slept, halves when it came back later, and below the least
 * it is none. Waking a sleeping thread costs 10-20 us on a small VM, more
 * than a TCP round trip's gap; gaps past the most are rare enough that
 * the sleep is cheap beside them. */
#define SVC_SPIN_MIN_NS 10000ULL
#define SVC_SPIN_MAX_NS 200000ULL
/* Polling that ends with nothing caught this many times in a row is
 * useless or worse: gaps just past the window, or the peer needing the
 * CPU we poll on (it runs, and answers, only once we sleep). Then the
 * worker rests: it is not polled for a while. */
#define SVC_SPIN_MISSES 4
#define SVC_SPIN_REST_NS 20000000ULL
/* Nor is any polled while the CPUs are oversubscribed: polling would take
 * one from the peer or the application's other work, a thread that polled
 * past its share is woken late (the scheduler makes it pay its lag back),
 * and a wake-up on a busy CPU is cheap anyway. Seen as the thread waiting
 * for a CPU more than an eighth of the time it polls (the kernel's
 * schedstat, summed over a sample of polling; a moment taken by a kernel
 * thread or another thread's timer is no contention): its workers rest,
 * twice as long as the last time if that was less than a calm ago (up to
 * the most). */
#define SVC_CONTENDED_SAMPLE_NS 20000000ULL
#define SVC_CONTENDED_CALM_NS 1000000000ULL
#define SVC_CONTENDED_REST_MAX_NS 2000000000ULL
/* The longest the thread polls without looking at its other fds and
 * serving its other workers. */
#define SVC_SLICE_NS 200000ULL
/* Quiet polls of the spinning thread are this far apart. */
#define SVC_POLL_GAP_NS 100ULL

uint64_t engine_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t engine_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The kernel's boot id and our pid namespace: a peer with the same pair
 * runs on this host and its pid means a process we can watch. */
static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static uint8_t host_id_bytes[WIRE_HOST_ID_LEN];
static uint64_t host_pid_ns;

static void host_identity_read(void)
{
	char text[64] = {0};
	struct stat st;
	size_t n = 0;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t got = read(fd, text, sizeof(text) - 1);

		close(fd);
		/* "xxxxxxxx-xxxx-...": keep the hex digits, two per byte. */
		for (ssize_t i = 0; i + 1 < got && n < WIRE_HOST_ID_LEN; i++) {
			int hi = softdoca_hex_digit(text[i]), lo;

			if (hi < 0)
				continue;
			lo = softdoca_hex_digit(text[++i]);
			if (lo < 0)
				break;
			host_id_bytes[n++] = (uint8_t)(hi << 4 | lo);
		}
	}
	if (n != WIRE_HOST_ID_LEN)
		SDK_LOG_WARN("cannot read the kernel boot id: peers on this host are treated as remote");
	if (stat("/proc/self/ns/pid", &st) == 0)
		host_pid_ns = (uint64_t)st.st_ino;
}

void engine_host_identity(uint8_t host_id[WIRE_HOST_ID_LEN], uint64_t *pid_ns)
{
	pthread_once(&host_once, host_identity_read);
	memcpy(host_id, host_id_bytes, WIRE_HOST_ID_LEN);
	*pid_ns = host_pid_ns;
}

#if defined(__SANITIZE_THREAD__)
atomic_ulong engine_tsan_answers;
#endif

/* ---- transports -------------------------------------------------------- */

/* Which links a worker gets, by UCX_TLS (ucx_tls.c): UCX keeps the
 * shared-memory transports no other user can write (never SysV), and is
 * used when one that carries messages (posix) is left; TCP, when asked
 * for, is softdoca's own link: UCX never gets it. The host's optional
 * transports are probed once. */
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static struct ucx_tls tls_choice;

static void tls_choose(void)
{
	ucx_tls_choose(getenv("UCX_TLS"), ucx_tls_host(), &tls_choice);
	if (tls_choice.dropped[0] != '\0')
		SDK_LOG_INFO("UCX_TLS: softdoca gives UCX \"%s\"; left out: %s (tcp is softdoca's own link; "
			     "shared memory other users could write is never used)",
			     tls_choice.list, tls_choice.dropped);
}

static const struct ucx_tls *engine_transports(void)
{
	pthread_once(&tls_once, tls_choose);
	return &tls_choice;
}

SOFTDOCA_EXPORT void softdoca_engine_data_path(char *out, size_t len)
{
	const struct ucx_tls *t = engine_transports();

	if (!t->posix && !t->tcp)
		snprintf(out, len, "none (UCX_TLS names no transport softdoca can use)");
	else
		snprintf(out, len, "%s%s%s", t->posix ? "UCX shared memory (posix) to peers on this host" : "",
			 t->posix && t->tcp ? ", " : "", t->tcp ? "softdoca's TCP link to others" : "");
}

/* ---- the service thread -------------------------------------------- */

/* An event's data: the source, and in the top 8 bits (above any user
 * address of x86_64, even with 5-level paging, or aarch64) the low byte
 * of its generation when it was watched: an event for an earlier socket
 * of the source differs (a source changes its socket far fewer than 256
 * times within one batch of events). */
#define SVC_GEN_SHIFT 56

static uint64_t svc_event_data(const struct svc_source *src)
{
	return (uint64_t)(uintptr_t)src | (uint64_t)(uint8_t)src->gen << SVC_GEN_SHIFT;
}

static struct svc_source *svc_event_source(uint64_t data)
{
	return (struct svc_source *)(uintptr_t)(data & ((1ULL << SVC_GEN_SHIFT) - 1));
}

static uint8_t svc_event_gen(uint64_t data)
{
	return (uint8_t)(data >> SVC_GEN_SHIFT);
}


static struct {
	pthread_mutex_t lock; /* held while the thread serves a worker, and to (un)register */
	pthread_cond_t looped; /* signalled after each round of the thread's loop */
	uint64_t loops;
	pthread_t thread;
	bool running;
	int epfd;
	int kickfd;           /* wakes the thread to recompute its sleep */
	int schedstat_fd;     /* the thread's own schedstat, -1 if none */
	uint64_t poll_ns;     /* polling time in the sample being taken ... */
	uint64_t poll_wait_ns; /* ... and the part of it spent waiting for a CPU */
	uint64_t contended_ns; /* when polling last found the CPUs oversubscribed */
	uint64_t contended_rest_ns; /* how long its workers rested then */
	struct engine_worker *workers;
} svc = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .looped = PTHREAD_COND_INITIALIZER,
       .epfd = -1,
       .kickfd = -1,
       .schedstat_fd = -1};

void engine_svc_kick(void)
{
	uint64_t one = 1;

	if (svc.kickfd >= 0 && write(svc.kickfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		SDK_LOG_DBG("service thread kick failed: %s", strerror(errno));
}

/* One round of every link of w: what arrived is handled, what is due
 * sent. Lock held. */
static unsigned int worker_poll(struct engine_worker *w)
{
	unsigned int n = 0;

	if (w->ucp != NULL)
		n += link_ucx_progress(w);
	if (w->tcp != NULL)
		n += link_tcp_progress(w->tcp);
	return n;
}

/* Make w's event fds report the next event; false when something is
 * pending already (poll again instead of sleeping). Lock held. */
static bool worker_arm(struct engine_worker *w)
{
	bool armed = true;

	if (w->ucp != NULL)
		armed = link_ucx_arm(w);
	if (w->tcp != NULL)
		armed &= link_tcp_poll(w->tcp, true) == 0 && link_tcp_idle(w->tcp);
	return armed;
}

/* Fail what waited past its deadline: parked operations, connections not
 * established in time. Lock held. */
static void worker_expire(struct engine_worker *w, uint64_t now)
{
	if (w->tcp != NULL && link_tcp_has_deadlines(w->tcp))
		link_tcp_expire(w->tcp, now);
	if (w->parked > 0)
		engine_target_expire(w, now);
	if (w->cm_pending > 0)
		engine_cm_expire(w, now);
	if (w->monitored > 0)
		engine_keepalive_sweep(w, now);
}

/* Anything with a deadline on this worker? (No lock: the counters are
 * atomics; a stale answer only changes how soon we look again.) */
static bool worker_has_deadlines(struct engine_worker *w)
{
	return atomic_load_explicit(&w->parked, memory_order_relaxed) > 0 ||
	       atomic_load_explicit(&w->cm_pending, memory_order_relaxed) > 0 ||
	       atomic_load_explicit(&w->suspects, memory_order_relaxed) > 0 ||
	       (w->tcp != NULL && link_tcp_has_deadlines(w->tcp));
}

/* Serve a worker: progress it until UCX has nothing more, then, when armed
 * is given, arm its event fd (*armed false when it could not be armed, so
 * the caller comes back soon instead of sleeping). Without armed it is a
 * poll of a spinning service thread, which leaves a worker some other
 * thread holds alone. Bounded: a transport that keeps reporting events (a
 * dead peer's, say) must not keep the lock from everyone else. Returns the
 * events progress reported. */
static unsigned int svc_serve(struct engine_worker *w, uint64_t now, bool *armed)
{
	bool busy = true;
	unsigned int events = 0, n;

	if (armed == NULL && pthread_mutex_trylock(&w->lock) != 0)
		return 0;
	if (armed != NULL)
		pthread_mutex_lock(&w->lock);
	for (int round = 0; round < 64 && busy; round++) {
		for (int i = 0; i < ENGINE_PROGRESS_ROUNDS && (n = worker_poll(w)) != 0; i++) {
			events += n;
			if (w->ack_list != NULL)
				engine_acks_flush(w); /* as engine_worker_progress does */
		}
		worker_expire(w, now);
		if (armed == NULL)
			break;
		busy = !worker_arm(w);
	}
	engine_worker_unlock(w);
	if (armed != NULL)
		*armed = !busy;
	return events;
}

/* The worker's event fd is one-shot in our epoll: it fires once, and is
 * enabled again here, after the worker was served (or by a later round
 * while the application is progressing). */
static void svc_rearm(struct engine_worker *w)
{
	struct svc_source *srcs[] = {&w->svc_src, &w->svc_tcp_src};

	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = svc_event_data(srcs[i])};

		if (srcs[i]->fd >= 0 && epoll_ctl(svc.epfd, EPOLL_CTL_MOD, srcs[i]->fd, &ev) != 0)
			SDK_LOG_DBG("cannot re-enable the worker's event fd: %s", strerror(errno));
	}
}

static int svc_timeout_ms(void)
{
	struct engine_worker *w;
	int timeout = -1;

	for (w = svc.workers; w != NULL; w = w->svc_next) {
		if (worker_has_deadlines(w))
			return SVC_MAX_SLEEP_MS;
		if (atomic_load_explicit(&w->monitored, memory_order_relaxed) > 0)
			timeout = (int)(engine_timeouts()->interval_ns / 1000000ULL);
	}
	return timeout;
}

static struct svc_source svc_kick_src = {.kind = SVC_KICK, .fd = -1};

static bool svc_has_worker(const struct engine_worker *w)
{
	const struct engine_worker *it;

	for (it = svc.workers; it != NULL; it = it->svc_next)
		if (it == w)
			return true;
	return false;
}

/* An fd event for one worker's connection or listener. svc.lock held;
 * the source may belong to a worker being torn down, so look first, and
 * it may have another socket now than the one the event is for (gen). */
static void svc_source_event(struct svc_source *src, uint8_t gen, uint32_t events)
{
	struct engine_worker *w = src->worker;
	struct engine_conn *c = src->conn;

	if (!svc_has_worker(w))
		return;
	pthread_mutex_lock(&w->lock);
	if (src->fd >= 0 && (uint8_t)src->gen == gen) {
		switch (src->kind) {
		case SVC_PEER:
			/* The process the peer's descriptor names is gone: take
			 * what the peer sent before it went (its last answers,
			 * its BYE), then ask it; silence fails it soon. */
			for (int i = 0; i < 1024 && worker_poll(w) != 0; i++)
				;
			if (c->state != CONN_CLOSED && c->state != CONN_FREE)
				engine_keepalive_suspect(c);
			engine_svc_unwatch(&c->peer_watch);
			break;
		case SVC_CM_LISTEN:
			engine_cm_on_listen(src->listener);
			break;
		case SVC_CM_SOCK:
			engine_cm_on_sock(c, events);
			break;
		default:
			break;
		}
	}
	engine_worker_unlock(w);
}

static inline void svc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Has the application progressed w since the service thread last looked?
 * Then it serves w, and the thread leaves it alone. */
static bool svc_app_moved(const struct engine_worker *w)
{
	return atomic_load_explicit(&w->app_ticks, memory_order_relaxed) != w->svc_seen_ticks;
}

/* Traffic came back to w after it slept: a short sleep means polling a
 * little longer would have caught it, a long one that polling would have
 * burnt the CPU for nothing. */
static void svc_spin_adapt(struct engine_worker *w, uint64_t now)
{
	uint64_t slept, spin = w->svc_spin_ns;

	if (w->svc_asleep_ns == 0)
		return;
	slept = now - w->svc_asleep_ns;
	w->svc_asleep_ns = 0;
	if (now < w->svc_rest_ns)
		return;
	if (slept < SVC_SPIN_MAX_NS) {
		spin = spin * 2 > slept * 2 ? spin * 2 : slept * 2;
		spin = spin < SVC_SPIN_MIN_NS ? SVC_SPIN_MIN_NS : spin;
		w->svc_spin_ns = spin > SVC_SPIN_MAX_NS ? SVC_SPIN_MAX_NS : spin;
	} else {
		w->svc_spin_ns = spin / 2 < SVC_SPIN_MIN_NS ? 0 : spin / 2;
	}
}

static void svc_spin_rest(struct engine_worker *w, uint64_t now, uint64_t rest)
{
	w->svc_misses = 0;
	w->svc_spin_ns = 0;
	w->svc_rest_ns = now + rest;
}

/* w was polled this round and goes to sleep: its polling caught nothing
 * at the end. Too many of those in a row and it rests. */
static void svc_spin_missed(struct engine_worker *w, uint64_t now)
{
	if (!w->svc_spun)
		return;
	w->svc_spun = false;
	if (++w->svc_misses >= SVC_SPIN_MISSES)
		svc_spin_rest(w, now, SVC_SPIN_REST_NS);
}

/* How long the service thread has waited for a CPU while runnable, in ns
 * (0 when the kernel does not say). */
static uint64_t svc_waited_ns(void)
{
	char text[96];
	unsigned long long run, wait;
	ssize_t got;

	if (svc.schedstat_fd < 0)
		return 0;
	got = pread(svc.schedstat_fd, text, sizeof(text) - 1, 0);
	if (got <= 0)
		return 0;
	text[got] = '\0';
	/* "run_ns wait_ns timeslices" */
	if (sscanf(text, "%llu %llu", &run, &wait) != 2)
		return 0;
	return wait;
}

/* Account a spell of polling from start to now, waited ns of it spent
 * waiting for a CPU. Returns true when a sample is complete and too much
 * of it was waiting. */
static bool svc_contended(uint64_t start, uint64_t now, uint64_t waited)
{
	bool contended;

	svc.poll_ns += now - start;
	svc.poll_wait_ns += waited;
	if (svc.poll_ns < SVC_CONTENDED_SAMPLE_NS && svc.poll_wait_ns * 8 < SVC_CONTENDED_SAMPLE_NS)
		return false;
	contended = svc.poll_wait_ns * 8 > svc.poll_ns;
	svc.poll_ns = svc.poll_wait_ns = 0;
	return contended;
}

static void svc_note_events(struct engine_worker *w, unsigned int events, uint64_t now)
{
	if (events > 0) {
		svc_spin_adapt(w, now);
		w->svc_busy_ns = now;
	}
}

/* May w be polled now, if it had traffic within its spin window? */
static bool svc_may_poll(const struct engine_worker *w, uint64_t now)
{
	return w->svc_spin_ns > 0 && now >= w->svc_rest_ns;
}

/* w just reported events (or was polled): does it stay hot, i.e. polled
 * instead of armed? */
static bool svc_still_hot(struct engine_worker *w, unsigned int events, uint64_t now)
{
	svc_note_events(w, events, now);
	w->svc_hot = !svc_app_moved(w) && now - w->svc_busy_ns < w->svc_spin_ns;
	w->svc_spun |= w->svc_hot;
	return w->svc_hot;
}

/* Serve w and arm its event fd, to sleep. Returns whether it was armed. */
static bool svc_arm(struct engine_worker *w, uint64_t now)
{
	bool ok;

	svc_note_events(w, svc_serve(w, now, &ok), now);
	svc_spin_missed(w, now);
	if (ok && w->svc_asleep_ns == 0)
		w->svc_asleep_ns = now;
	svc_rearm(w);
	w->svc_done = true;
	return ok;
}

/* Poll the hot workers, without arming, until each has been quiet for
 * its spin window or the application took it over, or the slice is used
 * up. A blocked responder's next message then costs no wake-up (nor the
 * sender's signal: an armed shared-memory receiver is signalled through a
 * socket), and a rendezvous transfer's steps follow each other at once.
 * Returns whether some worker is still hot. */
static bool svc_spin(uint64_t start)
{
	uint64_t now = start;
	bool hot = true;

	while (hot && now - start < SVC_SLICE_NS) {
		bool quiet = true;

		hot = false;
		for (struct engine_worker *w = svc.workers; w != NULL; w = w->svc_next) {
			unsigned int events;

			if (!w->svc_hot)
				continue;
			events = svc_serve(w, now, NULL);
			now = engine_now_ns();
			quiet &= events == 0;
			if (events > 0)
				w->svc_misses = 0;
			hot |= svc_still_hot(w, events, now);
		}
		/* Between quiet polls the worker locks stay free a while: a
		 * thread of the application waiting for one gets it instead of
		 * losing every race to our next poll. */
		for (uint64_t t = now; quiet && hot && now - t < SVC_POLL_GAP_NS; now = engine_now_ns())
			svc_cpu_relax();
	}
	return hot;
}

/* Polling found the CPUs oversubscribed (see SVC_CONTENDED_SAMPLE_NS): the
 * workers that were polled rest, the longer the more often this happens. */
static void svc_contended_rest(uint64_t now)
{
	uint64_t rest = svc.contended_rest_ns * 2;

	if (now - svc.contended_ns > SVC_CONTENDED_CALM_NS || rest < SVC_SPIN_REST_NS)
		rest = SVC_SPIN_REST_NS;
	rest = rest > SVC_CONTENDED_REST_MAX_NS ? SVC_CONTENDED_REST_MAX_NS : rest;
	svc.contended_ns = now;
	svc.contended_rest_ns = rest;
	for (struct engine_worker *w = svc.workers; w != NULL; w = w->svc_next) {
		if (w->svc_spun)
			svc_spin_rest(w, now, rest);
		w->svc_hot = w->svc_spun = false;
	}
}

/* One round of the service thread over its workers after a wake-up;
 * returns the next epoll timeout. Every worker the application leaves
 * alone is served (cheap when idle: progress finds nothing, arm
 * succeeds, and it covers deadlines too); those with traffic are polled
 * for a while before they are armed. */
static int svc_round(uint64_t now)
{
	bool armed = true, backing_off = false, hot = false;
	struct engine_worker *w;

	for (w = svc.workers; w != NULL; w = w->svc_next) {
		w->svc_hot = w->svc_done = false;
		if (svc_app_moved(w)) {
			/* The application progressed since we last looked:
			 * it serves this worker; look again soon. */
			w->svc_seen_ticks = atomic_load_explicit(&w->app_ticks, memory_order_relaxed);
			w->svc_asleep_ns = 0;
			w->svc_spun = false;
			w->svc_done = true;
			backing_off = true;
			continue;
		}
		/* Not to be polled (no window, or resting): served and
		 * armed at once. */
		if (!svc_may_poll(w, now))
			armed &= svc_arm(w, now);
		else
			hot |= svc_still_hot(w, svc_serve(w, now, NULL), now);
	}
	if (hot) {
		uint64_t waited = svc_waited_ns(), start = now;

		hot = svc_spin(start);
		now = engine_now_ns();
		if (svc_contended(start, now, svc_waited_ns() - waited)) {
			svc_contended_rest(now);
			hot = false;
		}
	}
	now = engine_now_ns();
	for (w = svc.workers; w != NULL; w = w->svc_next) {
		if (w->svc_hot || w->svc_done)
			continue; /* still polled (in the next round, at once), or done */
		if (svc_app_moved(w)) {
			backing_off = true;
			continue;
		}
		armed &= svc_arm(w, now);
	}
	if (hot)
		return 0;
	return armed && !backing_off ? svc_timeout_ms() : 1;
}

static void *svc_main(void *arg)
{
	struct epoll_event events[16];
	int timeout = -1;

	(void)arg;
	/* Opened here: thread-self is the thread that opens it. */
	svc.schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	for (;;) {
		int n = epoll_wait(svc.epfd, events, 16, timeout);

		if (n < 0 && errno != EINTR) {
			SDK_LOG_ERR("service thread: epoll_wait failed: %s", strerror(errno));
			return NULL;
		}
		pthread_mutex_lock(&svc.lock);
		if (!svc.running) {
			pthread_mutex_unlock(&svc.lock);
			return NULL;
		}
		for (int i = 0; i < n; i++) {
			struct svc_source *src = svc_event_source(events[i].data.u64);
			uint64_t drain;

			if (src->kind == SVC_KICK) {
				if (read(svc.kickfd, &drain, sizeof(drain)) < 0)
					drain = 0;
			} else if (src->kind != SVC_WORKER) {
				svc_source_event(src, svc_event_gen(events[i].data.u64), events[i].events);
			}
		}
		timeout = svc_round(engine_now_ns());
		svc.loops++;
		pthread_cond_broadcast(&svc.looped);
		pthread_mutex_unlock(&svc.lock);
	}
	return NULL;
}

static doca_error_t svc_start_locked(void)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = svc_event_data(&svc_kick_src)};

	if (svc.running)
		return DOCA_SUCCESS;
	svc.epfd = epoll_create1(EPOLL_CLOEXEC);
	svc.kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (svc.epfd < 0 || svc.kickfd < 0 || epoll_ctl(svc.epfd, EPOLL_CTL_ADD, svc.kickfd, &ev) != 0)
		goto fail;
	svc.running = true;
	if (pthread_create(&svc.thread, NULL, svc_main, NULL) != 0) {
		svc.running = false;
		goto fail;
	}
	return DOCA_SUCCESS;
fail:
	SDK_LOG_ERR("cannot start the engine service thread: %s", strerror(errno));
	if (svc.epfd >= 0)
		close(svc.epfd);
	if (svc.kickfd >= 0)
		close(svc.kickfd);
	svc.epfd = svc.kickfd = -1;
	return DOCA_ERROR_OPERATING_SYSTEM;
}

void engine_svc_renewed(struct svc_source *src)
{
	src->gen++;
}

void engine_svc_watch_events(struct svc_source *src, uint32_t events, bool modify)
{
	struct epoll_event ev = {.events = events, .data.u64 = 0};

	if (src->fd < 0 || svc.epfd < 0)
		return;
	if (!modify)
		src->gen++;
	ev.data.u64 = svc_event_data(src);
	if (epoll_ctl(svc.epfd, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, src->fd, &ev) != 0)
		SDK_LOG_WARN("cannot watch fd %d: %s", src->fd, strerror(errno));
}

void engine_svc_watch(struct svc_source *src)
{
	engine_svc_watch_events(src, EPOLLIN, false);
}

void engine_svc_unwatch(struct svc_source *src)
{
	if (src->fd < 0)
		return;
	if (svc.epfd >= 0)
		epoll_ctl(svc.epfd, EPOLL_CTL_DEL, src->fd, NULL);
	close(src->fd);
	src->fd = -1;
	src->gen++;
}

static doca_error_t svc_add(struct svc_source *src)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = svc_event_data(src)};

	if (src->fd < 0 || epoll_ctl(svc.epfd, EPOLL_CTL_ADD, src->fd, &ev) == 0)
		return DOCA_SUCCESS;
	SDK_LOG_ERR("cannot watch the worker's event fd: %s", strerror(errno));
	return DOCA_ERROR_OPERATING_SYSTEM;
}

static doca_error_t svc_register(struct engine_worker *w)
{
	doca_error_t status;

	w->svc_src = (struct svc_source){.kind = SVC_WORKER, .fd = w->ucp != NULL ? w->efd : -1, .worker = w};
	w->svc_tcp_src = (struct svc_source){
		.kind = SVC_WORKER, .fd = w->tcp != NULL ? link_tcp_fd(w->tcp) : -1, .worker = w};
	w->svc_spin_ns = SVC_SPIN_MIN_NS;
	pthread_mutex_lock(&svc.lock);
	status = svc_start_locked();
	if (status == DOCA_SUCCESS)
		status = svc_add(&w->svc_src);
	if (status == DOCA_SUCCESS) {
		status = svc_add(&w->svc_tcp_src);
		if (status != DOCA_SUCCESS && w->svc_src.fd >= 0)
			epoll_ctl(svc.epfd, EPOLL_CTL_DEL, w->svc_src.fd, NULL);
	}
	if (status == DOCA_SUCCESS) {
		w->svc_next = svc.workers;
		svc.workers = w;
		w->svc_registered = true;
	}
	pthread_mutex_unlock(&svc.lock);
	engine_svc_kick();
	return status;
}

/* Take w off the service thread's list and epoll set. Its events may
 * still be in a round the thread is working on: see svc_quiesce. */
static void svc_unregister(struct engine_worker *w)
{
	struct engine_worker **link;

	pthread_mutex_lock(&svc.lock);
	if (w->svc_registered) {
		if (w->svc_src.fd >= 0)
			epoll_ctl(svc.epfd, EPOLL_CTL_DEL, w->svc_src.fd, NULL);
		if (w->svc_tcp_src.fd >= 0)
			epoll_ctl(svc.epfd, EPOLL_CTL_DEL, w->svc_tcp_src.fd, NULL);
		for (link = &svc.workers; *link != NULL; link = &(*link)->svc_next) {
			if (*link == w) {
				*link = w->svc_next;
				break;
			}
		}
		w->svc_registered = false;
	}
	pthread_mutex_unlock(&svc.lock);
}

/* Once every fd of a worker (its event fd, its connections' pidfds and
 * sockets, its listeners) is out of the epoll set, wait for the service
 * thread to finish a round: then it holds no event pointing into the
 * worker, which may be freed. */
static void svc_quiesce(void)
{
	uint64_t target;

	pthread_mutex_lock(&svc.lock);
	target = svc.loops + 1;
	pthread_mutex_unlock(&svc.lock);
	if (!svc.running || pthread_equal(pthread_self(), svc.thread))
		return;
	engine_svc_kick();
	pthread_mutex_lock(&svc.lock);
	while (svc.loops < target && svc.running)
		pthread_cond_wait(&svc.looped, &svc.lock);
	pthread_mutex_unlock(&svc.lock);
}

/* ---- workers ---------------------------------------------------------- */

/* The links UCX_TLS asks for (engine_transports). */
static doca_error_t worker_open_links(struct engine_worker *w, struct doca_dev *dev)
{
	const struct ucx_tls *t = engine_transports();
	doca_error_t status;

	if (!t->posix && !t->tcp) {
		SDK_LOG_ERR("UCX_TLS names no transport softdoca can use: it needs shared memory (sm or posix) for "
			    "peers on this host, or tcp");
		return DOCA_ERROR_DRIVER;
	}
	if (t->posix) {
		status = link_ucx_open(w, dev, t->list);
		if (status != DOCA_SUCCESS)
			return status;
	}
	if (t->tcp)
		return link_tcp_open(w, dev, w->conf.gid_index);
	return DOCA_SUCCESS;
}

doca_error_t engine_worker_create(struct doca_dev *dev, const struct engine_worker_conf *conf,
				  struct engine_worker **worker_out)
{
	struct engine_worker *w;
	doca_error_t status;

	if (conf->max_connections == 0 || conf->send_queue_size == 0) {
		SDK_LOG_ERR("engine worker needs at least one connection and one send queue slot");
		return DOCA_ERROR_INVALID_VALUE;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return DOCA_ERROR_NO_MEMORY;
	w->conf = *conf;
	w->dev = dev;
	pthread_mutex_init(&w->lock, NULL);
	w->conns = calloc(conf->max_connections, sizeof(*w->conns));
	if (w->conns == NULL) {
		status = DOCA_ERROR_NO_MEMORY;
		goto free_worker;
	}
	for (uint32_t i = 0; i < conf->max_connections; i++) {
		struct engine_conn *c = &w->conns[i];

		c->peer_watch = (struct svc_source){.kind = SVC_PEER, .fd = -1, .worker = w, .conn = c};
		c->cm_src = (struct svc_source){.kind = SVC_CM_SOCK, .fd = -1, .worker = w, .conn = c};
	}
	status = worker_open_links(w, dev);
	if (status != DOCA_SUCCESS)
		goto close_links;
	status = svc_register(w);
	if (status != DOCA_SUCCESS)
		goto close_links;
	w->run = engine_run_add();
	*worker_out = w;
	return DOCA_SUCCESS;

close_links:
	link_tcp_close(w);
	link_ucx_close(w);
free_worker:
	free(w->conns);
	pthread_mutex_destroy(&w->lock);
	free(w);
	return status;
}

void engine_worker_destroy(struct engine_worker *w)
{
	if (w == NULL)
		return;
	/* From now on a descriptor of this worker is a stale one. */
	engine_run_remove(w->run);
	svc_unregister(w);
	engine_cm_close_listeners(w);
	pthread_mutex_lock(&w->lock);
	engine_conn_close_all(w);
	engine_fail_all_ops(w, DOCA_ERROR_IO_FAILED);
	engine_recv_fail_all(w, DOCA_ERROR_IO_FAILED);
	/* Let closing endpoints and last sends finish. */
	for (int i = 0; i < 1000 && worker_poll(w) != 0; i++)
		;
	engine_worker_unlock(w);
	svc_quiesce();
	link_tcp_close(w);
	link_ucx_close(w);
	/* No write can land any more: give back what in-flight rendezvous
	 * receives still held (the memory regions). */
	engine_target_abandon(w);
	engine_target_pools_free(w);
	engine_batches_free(w);
	for (uint32_t i = 0; i < w->conf.max_connections; i++) {
		free(w->conns[i].desc);
		free(w->conns[i].sq.slots);
	}
	free(w->conns);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

unsigned int engine_worker_progress(struct engine_worker *w)
{
	unsigned int events = 0, n;

	atomic_fetch_add_explicit(&w->app_ticks, 1, memory_order_relaxed);
	/* Never wait behind the service thread: it is serving this worker. */
	if (pthread_mutex_trylock(&w->lock) != 0)
		return 0;
	/* Bounded: acknowledgements go out when the lock is released, and a
	 * stream that never pauses must not hold them back for ever. */
	for (int i = 0; i < ENGINE_PROGRESS_ROUNDS && (n = worker_poll(w)) != 0; i++) {
		events += n;
		/* What this round retired is acknowledged now, not after one
		 * more (empty) round: over TCP that is a system call. */
		if (w->ack_list != NULL)
			engine_acks_flush(w);
	}
	/* Each poll looks at a cheap clock (a few ms coarse) for the
	 * keepalive; only parked operations and the like need the exact one. */
	if (worker_has_deadlines(w) || (w->monitored > 0 && engine_coarse_ns() >= w->keepalive_next_ns))
		worker_expire(w, engine_now_ns());
	engine_worker_unlock(w);
	return events;
}

void engine_worker_flush(struct engine_worker *w)
{
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	engine_fail_all_ops(w, DOCA_ERROR_IO_FAILED);
	engine_recv_fail_all(w, DOCA_ERROR_IO_FAILED);
	engine_worker_unlock(w);
}

uint32_t engine_worker_outstanding(struct engine_worker *w)
{
	uint32_t n;

	pthread_mutex_lock(&w->lock);
	n = w->outstanding;
	engine_worker_unlock(w);
	return n;
}

/* ---- the dispatch ------------------------------------------------------- */

/* Every message a link delivers goes to its handler by id; an id the
 * engine does not use is dropped (a link may carry any id a peer
 * chose). Lock held. */
enum link_rx engine_on_msg(struct engine_worker *w, const struct link_msg *m)
{
	switch (m->id) {
	case WIRE_AM_HELLO:
		return engine_am_hello(w, m);
	case WIRE_AM_BYE:
		return engine_am_bye(w, m);
	case WIRE_AM_REQ:
		return engine_am_req(w, m);
	case WIRE_AM_RESP:
		return engine_am_resp(w, m);
	case WIRE_AM_PING:
		return engine_am_ping(w, m);
	case WIRE_AM_ACK:
		return engine_am_ack(w, m);
	case WIRE_AM_BATCH:
		return engine_am_batch(w, m);
	default:
		SDK_LOG_ERR_RL("message with unknown id %#x (%s link): dropped", m->id, m->link->name);
		return LINK_RX_DONE;
	}
}
