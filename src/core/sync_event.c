/*
 * softdoca — sync events: a 64-bit value with atomic updates and waits that
 * sleep, remote_net export descriptors, the table the engine updates
 * exported events through (see sync_event.h), and the context mode with its
 * five task types.
 *
 * Waking waiters: the value is 64 bits but a futex word is 32, so every
 * update also bumps a separate 32-bit generation counter and wakes the
 * threads sleeping on it (only when someone sleeps). A waiter reads the
 * generation before it checks the value and sleeps only while the
 * generation is unchanged, so no update between check and sleep is lost.
 * Sleeps are bounded anyway: when the value lives in caller memory
 * (set_addr, set_doca_buf) writes may bypass this code entirely.
 *
 * PCI export (to another process of this host): the value moves into a
 * cell of the exporter's shared export table (mmap_pci.h), which the
 * importer maps too; both sides update it with the same atomics and poll
 * it while waiting, as for a value in caller memory. Neither wakes a PE
 * by itself: wait tasks parked on such a value are watched by the thread
 * of sync_event_watch.c, which wakes their PE when it changes.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_sync_event.h>

#include "bad_state.h"
#include "buf.h"
#include "ctx.h"
#include "desc.h"
#include "dev.h"
#include "live.h"
#include "log_internal.h"
#include "mmap.h"
#include "mmap_pci.h"
#include "secret.h"
#include "registry.h"
#include "sync_event.h"
#include "sync_event_watch.h"

SDK_LOG_REGISTER(SYNC_EVENT)

/* Log an error where it is detected and yield the code, in one expression. */
#define FAIL(err, ...) (SDK_LOG_ERR(__VA_ARGS__), (err))

#define DESC_MAGIC "SDSE"


/* Waiting: polls before the first sleep, then how long one sleep may last. */
#define WAIT_SPINS 1000
#define WAIT_YIELDS 64
#define WAIT_SLEEP_NS 100000000L	 /* value updated only through softdoca */
#define WAIT_SLEEP_EXTERNAL_NS 1000000L /* value in caller memory */
/* Stop polls for waiters to leave this often. */
#define STOP_POLL_NS 50000L
/* The pool a task type gets from a set_conf with num_tasks 0. */
#define SE_DEFAULT_NUM_TASKS 16u

_Static_assert(SOFTDOCA_SYNC_EVENT_SECRET_LEN == SOFTDOCA_SECRET_LEN, "one secret length");

enum se_mode {
	SE_MODE_UNSET = 0,  /* neither started nor turned into a context yet */
	SE_MODE_STANDALONE, /* doca_sync_event_start was called */
	SE_MODE_CTX,	    /* doca_sync_event_as_ctx was called */
};

enum se_location {
	SE_LOC_NONE = 0,
	SE_LOC_CPU,
	SE_LOC_REMOTE_NET,
	SE_LOC_REMOTE_PCI,
};

enum se_cond {
	SE_COND_GT,
	SE_COND_EQ,
	SE_COND_NEQ,
};

enum se_task_kind {
	SE_TASK_GET,
	SE_TASK_NOTIFY_SET,
	SE_TASK_NOTIFY_ADD,
	SE_TASK_WAIT_EQ,
	SE_TASK_WAIT_NEQ,
	SE_TASK_KINDS,
};

/* Each task struct starts with its struct doca_task: the PE calls the
 * callbacks with that pointer, which is also the typed task pointer. */
struct doca_sync_event_task_get {
	struct doca_task task;
	uint64_t *ret_val_ptr;
};

struct doca_sync_event_task_notify_set {
	struct doca_task task;
	uint64_t set_val;
};

struct doca_sync_event_task_notify_add {
	struct doca_task task;
	uint64_t inc_val;
	uint64_t *fetched_val_ptr;
};

struct doca_sync_event_task_wait_eq {
	struct doca_task task;
	uint64_t wait_val;
	uint64_t mask;
};

struct doca_sync_event_task_wait_neq {
	struct doca_task task;
	uint64_t wait_val;
	uint64_t mask;
};

_Static_assert(offsetof(struct doca_sync_event_task_get, task) == 0, "task first");
_Static_assert(offsetof(struct doca_sync_event_task_notify_set, task) == 0, "task first");
_Static_assert(offsetof(struct doca_sync_event_task_notify_add, task) == 0, "task first");
_Static_assert(offsetof(struct doca_sync_event_task_wait_eq, task) == 0, "task first");
_Static_assert(offsetof(struct doca_sync_event_task_wait_neq, task) == 0, "task first");

/* From the generic task to the typed one (the doca_task comes first). */
#define SE_TASK_CONVERTER(T) \
	static inline struct doca_sync_event_task_##T *T##_from_task(const struct doca_task *task) \
	{ \
		return container_of(task, struct doca_sync_event_task_##T, task); \
	}

SE_TASK_CONVERTER(get)
SE_TASK_CONVERTER(notify_set)
SE_TASK_CONVERTER(notify_add)
SE_TASK_CONVERTER(wait_eq)
SE_TASK_CONVERTER(wait_neq)

struct doca_sync_event {
	/* Context mode; initialised for every event, used once as_ctx was
	 * called. */
	struct doca_ctx ctx;
	struct softdoca_task_type task_types[SE_TASK_KINDS];

	/* Configuration. */
	enum se_mode mode;
	bool started; /* standalone mode */
	enum se_location publisher;
	enum se_location subscriber;
	struct doca_dev *publisher_dev; /* held, CPU locations only */
	struct doca_dev *subscriber_dev;
	struct doca_buf *value_buf; /* set_doca_buf: one reference held */
	bool external_value;	    /* the value lives in caller memory */

	/* The value, and what waiters sleep on. */
	uint64_t *value; /* &storage, or the caller's 8 bytes */
	uint64_t storage;
	atomic_uint gen;      /* futex word, bumped on every update */
	atomic_uint sleepers; /* threads in (or about to enter) FUTEX_WAIT */
	atomic_uint waiters;  /* threads inside a wait call */
	atomic_bool active;   /* started, or the context is running */

	/* Context-mode tasks; touched only on the application's thread. */
	struct doca_task *queue_head; /* submitted, not yet looked at */
	struct doca_task *queue_tail;
	struct doca_task *pending_waits; /* wait tasks whose condition does not hold yet */
	atomic_uint num_pending_waits;	 /* read by updaters on any thread */

	/* Export: reachable by event id and secret. */
	struct core_registry_entry reg;
	uint8_t desc[SOFTDOCA_SYNC_EVENT_DESC_LEN]; /* last descriptor handed out */

	/* PCI export (the value lives in its shared cell once exported), or
	 * the import behind an event created from a PCI export. */
	struct core_pci_export pci_export;
	bool pci_value; /* value points at pci_export's cell */
	struct core_pci_import *pci_import;

	/* Parked waits on an external value: watched (sync_event_watch.h). */
	struct core_se_watch watch;
	bool watched; /* the application's thread's view of watch */
};

struct doca_sync_event_remote_net {
	struct doca_dev *dev; /* held */
	struct softdoca_sync_event_desc desc;
};

_Static_assert(SOFTDOCA_SYNC_EVENT_SECRET_LEN == CORE_REGISTRY_SECRET_LEN, "one secret length");

/* The table of exported, active events, by event id. */
static struct core_registry events = CORE_REGISTRY_INIT;

/* ------------------------------------------------------------------ */
/* Little helpers                                                       */

static void put_le(uint8_t *p, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
	__asm__ __volatile__("yield");
#endif
}

static void futex_wait(atomic_uint *word, unsigned int expected, long timeout_ns)
{
	struct timespec ts = {.tv_sec = timeout_ns / 1000000000L, .tv_nsec = timeout_ns % 1000000000L};

	/* EAGAIN (word changed), EINTR and ETIMEDOUT all mean "look again". */
	(void)syscall(SYS_futex, (void *)word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

static void futex_wake_all(atomic_uint *word)
{
	(void)syscall(SYS_futex, (void *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static const char *se_location_name(enum se_location loc)
{
	switch (loc) {
	case SE_LOC_NONE:
		return "none";
	case SE_LOC_CPU:
		return "cpu";
	case SE_LOC_REMOTE_NET:
		return "remote_net";
	case SE_LOC_REMOTE_PCI:
		return "remote_pci";
	}
	return "unknown";
}

static struct doca_sync_event *se_from_ctx(struct doca_ctx *ctx)
{
	return container_of(ctx, struct doca_sync_event, ctx);
}

/* ------------------------------------------------------------------ */
/* The value                                                            */

/* Tell everyone who waits that the value changed: sleeping synchronous
 * waiters and, in context mode, the PE that holds pending wait tasks. */
static void se_notify(struct doca_sync_event *ev)
{
	atomic_fetch_add(&ev->gen, 1);
	if (atomic_load(&ev->sleepers) > 0)
		futex_wake_all(&ev->gen);
	if (atomic_load(&ev->num_pending_waits) > 0)
		softdoca_pe_wake(ev->ctx.pe);
}

static uint64_t se_load(const struct doca_sync_event *ev)
{
	return __atomic_load_n(ev->value, __ATOMIC_SEQ_CST);
}

static void se_store(struct doca_sync_event *ev, uint64_t v)
{
	__atomic_store_n(ev->value, v, __ATOMIC_SEQ_CST);
	se_notify(ev);
}

static uint64_t se_fetch_add(struct doca_sync_event *ev, uint64_t v)
{
	uint64_t old = __atomic_fetch_add(ev->value, v, __ATOMIC_SEQ_CST);

	se_notify(ev);
	return old;
}

static bool se_cond_holds(uint64_t cur, enum se_cond cond, uint64_t value, uint64_t mask)
{
	switch (cond) {
	case SE_COND_GT:
		return (cur & mask) > value;
	case SE_COND_EQ:
		return (cur & mask) == value;
	case SE_COND_NEQ:
		return (cur & mask) != value;
	}
	return false;
}

/* False when no value of the event could ever satisfy the condition: such
 * a wait would block forever. */
static bool se_cond_possible(enum se_cond cond, uint64_t value, uint64_t mask)
{
	switch (cond) {
	case SE_COND_GT:
		return value < mask; /* (x & mask) is at most mask */
	case SE_COND_EQ:
		return (value & ~mask) == 0;
	case SE_COND_NEQ:
		return mask != 0 || value != 0;
	}
	return false;
}

static const char *se_cond_name(enum se_cond cond)
{
	switch (cond) {
	case SE_COND_GT:
		return ">";
	case SE_COND_EQ:
		return "==";
	case SE_COND_NEQ:
		return "!=";
	}
	return "?";
}

/* ------------------------------------------------------------------ */
/* Activation                                                           */

/* A publisher and a subscriber location: what DOCA configures every event
 * with before it runs. */
static doca_error_t se_check_locations(const struct doca_sync_event *ev, const char *op)
{
	if (ev->publisher == SE_LOC_NONE)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "%s: sync event has no publisher location (doca_sync_event_add_publisher_location_*)", op);
	if (ev->subscriber == SE_LOC_NONE)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "%s: sync event has no subscriber location (doca_sync_event_add_subscriber_location_cpu)",
			    op);
	return DOCA_SUCCESS;
}

/* "started", "not started", "a running context": for the BAD_STATE lines. */
static const char *se_state(const struct doca_sync_event *ev)
{
	if (ev->mode == SE_MODE_CTX) {
		switch (ev->ctx.state) {
		case DOCA_CTX_STATE_IDLE:
			return "an idle context (doca_sync_event_as_ctx)";
		case DOCA_CTX_STATE_STARTING:
			return "a starting context";
		case DOCA_CTX_STATE_RUNNING:
			return "a running context";
		case DOCA_CTX_STATE_STOPPING:
			return "a stopping context";
		}
	}
	return atomic_load(&ev->active) || ev->started ? "started" : "not started";
}

static doca_error_t se_bad_state(const struct doca_sync_event *ev, const char *call, const char *needs,
				 const char *hint)
{
	return softdoca_bad_state(call, "sync event", se_state(ev), needs, hint);
}

/* The one place that decides whether the configuration may still change. */
static doca_error_t se_check_config(const struct doca_sync_event *ev, const char *op)
{
	if (ev->started)
		return se_bad_state(ev, op, "not started", "configure it before doca_sync_event_start, or stop it first");
	if (ev->mode == SE_MODE_CTX && ev->ctx.state != DOCA_CTX_STATE_IDLE)
		return se_bad_state(ev, op, "idle", "configure it before doca_ctx_start, or stop it first");
	return DOCA_SUCCESS;
}

static void table_remove(struct doca_sync_event *ev);

static void se_activate(struct doca_sync_event *ev)
{
	atomic_store(&ev->active, true);
}

/* Revoke the export (waiting for remote updates in flight), then make
 * every wait in progress return and wait until its thread has left the
 * event, so the caller may destroy it next. */
static void se_deactivate(struct doca_sync_event *ev)
{
	const struct timespec pause = {.tv_sec = 0, .tv_nsec = STOP_POLL_NS};

	table_remove(ev);
	core_pci_export_revoke(&ev->pci_export);
	atomic_store(&ev->active, false);
	atomic_fetch_add(&ev->gen, 1);
	futex_wake_all(&ev->gen);
	/* Woken waiters leave at once; polling keeps their exit path free of
	 * any access to the event after they say they are gone. */
	while (atomic_load(&ev->waiters) > 0)
		nanosleep(&pause, NULL);
}

/* ------------------------------------------------------------------ */
/* Table of exported events                                             */

/* Give an active event a fresh id and secret and make it reachable. */
static doca_error_t table_add(struct doca_sync_event *ev)
{
	return core_registry_add(&events, &ev->reg);
}

/* Revoke: make the event unreachable, then wait until no remote update
 * still holds it. */
static void table_remove(struct doca_sync_event *ev)
{
	core_registry_remove(&events, &ev->reg);
}

SOFTDOCA_EXPORT doca_error_t softdoca_sync_event_lookup(uint64_t event_id,
							 const uint8_t secret[SOFTDOCA_SYNC_EVENT_SECRET_LEN],
							 struct softdoca_sync_event_ref *ref)
{
	struct core_registry_entry *e;
	doca_error_t status;

	if (secret == NULL || ref == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "sync event lookup: NULL secret or output");
	status = core_registry_hold(&events, event_id, secret, &e);
	/* Only started events with a remote_net publisher are ever in the
	 * table (export refuses the others), so one message covers them. */
	if (status == DOCA_ERROR_NOT_FOUND)
		return FAIL(DOCA_ERROR_NOT_FOUND,
			    "sync event %llu is unknown, was never exported to remote_net, or was revoked (stopped)",
			    (unsigned long long)event_id);
	if (status != DOCA_SUCCESS)
		return FAIL(DOCA_ERROR_AUTHENTICATION, "wrong secret for sync event %llu",
			    (unsigned long long)event_id);
	ref->event = container_of(e, struct doca_sync_event, reg);
	ref->event_id = event_id;
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT void softdoca_sync_event_release(struct softdoca_sync_event_ref *ref)
{
	struct doca_sync_event *ev;

	if (ref == NULL || ref->event == NULL)
		return;
	ev = ref->event;
	ref->event = NULL; /* a second release is a no-op */
	if (!core_registry_release(&events, &ev->reg))
		SDK_LOG_ERR("sync event %llu released more often than held", (unsigned long long)ref->event_id);
}

static bool ref_held(const struct softdoca_sync_event_ref *ref, const char *op)
{
	if (likely(ref != NULL && ref->event != NULL))
		return true;
	SDK_LOG_ERR("%s: the sync event reference holds no event (lookup failed or already released)", op);
	return false;
}

SOFTDOCA_EXPORT uint64_t softdoca_sync_event_ref_get(const struct softdoca_sync_event_ref *ref)
{
	if (!ref_held(ref, __func__))
		return 0;
	return se_load(ref->event);
}

SOFTDOCA_EXPORT void softdoca_sync_event_ref_set(const struct softdoca_sync_event_ref *ref, uint64_t v)
{
	if (ref_held(ref, __func__))
		se_store(ref->event, v);
}

SOFTDOCA_EXPORT uint64_t softdoca_sync_event_ref_add(const struct softdoca_sync_event_ref *ref, uint64_t v)
{
	if (!ref_held(ref, __func__))
		return 0;
	return se_fetch_add(ref->event, v);
}

/* ------------------------------------------------------------------ */
/* Descriptors                                                          */

static void desc_encode(const struct doca_sync_event *ev, uint32_t pid, uint64_t nonce, uint8_t *p)
{
	memcpy(p, DESC_MAGIC, 4);
	put_le(p + 4, SOFTDOCA_SYNC_EVENT_DESC_VERSION, 2);
	put_le(p + 6, 0, 2);
	put_le(p + 8, SOFTDOCA_SYNC_EVENT_DESC_LEN, 4);
	put_le(p + 12, pid, 4);
	put_le(p + 16, ev->reg.id, 8);
	memcpy(p + 24, ev->reg.secret, SOFTDOCA_SYNC_EVENT_SECRET_LEN);
	put_le(p + 40, nonce, 8);
}

/* Magic, version and length: what every version shares. */
static const struct core_desc_format desc_format = {
	.magic = DESC_MAGIC,
	.version = SOFTDOCA_SYNC_EVENT_DESC_VERSION,
	.len = SOFTDOCA_SYNC_EVENT_DESC_LEN,
	.what = "sync event descriptor",
	.magic_what = "sync event export descriptor",
	.log_source = &sdk_log_source,
};

/* The version 1 fields; the caller checked the length. */
static doca_error_t desc_parse_v1(const uint8_t *p, struct softdoca_sync_event_desc *d)
{
	d->version = SOFTDOCA_SYNC_EVENT_DESC_VERSION;
	d->pid = (uint32_t)get_le(p + 12, 4);
	d->event_id = get_le(p + 16, 8);
	memcpy(d->secret, p + 24, SOFTDOCA_SYNC_EVENT_SECRET_LEN);
	d->process_nonce = get_le(p + 40, 8);

	if (d->pid == 0 || d->pid > INT32_MAX)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "sync event descriptor has invalid process id %u", d->pid);
	if (d->event_id == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "sync event descriptor has event id 0");
	if (softdoca_bytes_all_zero(d->secret, SOFTDOCA_SYNC_EVENT_SECRET_LEN))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "sync event descriptor has an all-zero secret");
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_sync_event_desc_parse(const void *desc, size_t desc_len,
							     struct softdoca_sync_event_desc *out)
{
	struct softdoca_sync_event_desc d;
	doca_error_t err;

	err = core_desc_check_header(desc, desc_len, out, &desc_format);
	if (err != DOCA_SUCCESS)
		return err;
	err = desc_parse_v1(desc, &d);
	if (err != DOCA_SUCCESS)
		return err;
	*out = d;
	return DOCA_SUCCESS;
}

/* Register the event and write a fresh descriptor for it. */
static doca_error_t se_export_new(struct doca_sync_event *ev)
{
	uint32_t pid;
	uint64_t nonce;
	doca_error_t err;

	err = softdoca_mmap_process_identity(&pid, &nonce);
	if (err != DOCA_SUCCESS)
		return err;
	err = table_add(ev);
	if (err != DOCA_SUCCESS)
		return err;
	/* Overwrites a descriptor from before a stop, which is revoked. */
	desc_encode(ev, pid, nonce, ev->desc);
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Waiting                                                              */

/* An imported event whose exporter exited (CONNECTION_ABORTED) or revoked
 * the export (NOT_FOUND): its waits could never be satisfied. Logged by
 * core_pci_import_check. */
static doca_error_t se_pci_import_lost(const struct doca_sync_event *ev, const char *op)
{
	return core_pci_import_check(ev->pci_import, op);
}

/* Sleep on the generation counter until the condition holds or the event
 * is stopped. The caller is counted in ev->waiters. */
static doca_error_t se_wait_loop(struct doca_sync_event *ev, enum se_cond cond, uint64_t value, uint64_t mask,
				 bool yield)
{
	long sleep_ns = ev->external_value ? WAIT_SLEEP_EXTERNAL_NS : WAIT_SLEEP_NS;
	doca_error_t status;
	unsigned int i, g;

	/* Most waits are short: poll a little before paying for a sleep. */
	for (i = 0; i < (yield ? WAIT_YIELDS : WAIT_SPINS); i++) {
		if (se_cond_holds(se_load(ev), cond, value, mask))
			return DOCA_SUCCESS;
		if (yield)
			sched_yield();
		else
			cpu_relax();
	}
	for (;;) {
		g = atomic_load(&ev->gen);
		if (se_cond_holds(se_load(ev), cond, value, mask))
			return DOCA_SUCCESS;
		if (!atomic_load(&ev->active))
			return DOCA_ERROR_BAD_STATE;
		if (ev->pci_import != NULL && (status = se_pci_import_lost(ev, "sync event wait")) != DOCA_SUCCESS)
			return status;
		/* Announce the sleep before the kernel re-checks g: an updater
		 * that misses the count has already changed g. */
		atomic_fetch_add(&ev->sleepers, 1);
		futex_wait(&ev->gen, g, sleep_ns);
		atomic_fetch_sub(&ev->sleepers, 1);
	}
}

static doca_error_t se_wait(struct doca_sync_event *ev, enum se_cond cond, uint64_t value, uint64_t mask,
			    bool yield, const char *op)
{
	doca_error_t status;

	if (ev == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: event is NULL", op);
	if (!se_cond_possible(cond, value, mask))
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "%s: (value & 0x%llx) %s 0x%llx can never hold; the wait would never return", op,
			    (unsigned long long)mask, se_cond_name(cond), (unsigned long long)value);
	/* Count ourselves in before checking active: stop clears active
	 * first and then waits for the count to drop. */
	atomic_fetch_add(&ev->waiters, 1);
	if (!atomic_load(&ev->active)) {
		status = se_bad_state(ev, op, "started", "wait only on a started sync event");
	} else {
		status = se_wait_loop(ev, cond, value, mask, yield);
		if (status == DOCA_ERROR_BAD_STATE)
			SDK_LOG_ERR("%s: sync event was stopped while waiting", op);
	}
	/* Last access to the event: stop may free it right after. */
	atomic_fetch_sub(&ev->waiters, 1);
	return status;
}

/* ------------------------------------------------------------------ */
/* Context mode                                                         */

static enum se_task_kind se_task_kind_of(const struct doca_task *task)
{
	const struct doca_sync_event *ev = se_from_ctx(softdoca_task_ctx(task));

	return (enum se_task_kind)(task->type - ev->task_types);
}

/* A wait task's mask: 0 or one run of 1, 2, 4 or 8 0xff bytes aligned to
 * its size, as DOCA documents for these tasks. */
static bool se_task_mask_ok(uint64_t mask)
{
	unsigned int width, shift;

	if (mask == 0 || mask == UINT64_MAX)
		return true;
	for (width = 8; width <= 32; width *= 2)
		for (shift = 0; shift < 64; shift += width)
			if (mask == ((1ULL << width) - 1) << shift)
				return true;
	return false;
}

/* The condition of a wait task. */
static void se_task_wait_params(const struct doca_task *task, enum se_cond *cond, uint64_t *value,
				uint64_t *mask)
{
	if (se_task_kind_of(task) == SE_TASK_WAIT_EQ) {
		const struct doca_sync_event_task_wait_eq *t = wait_eq_from_task(task);

		*cond = SE_COND_EQ;
		*value = t->wait_val;
		*mask = t->mask;
	} else {
		const struct doca_sync_event_task_wait_neq *t = wait_neq_from_task(task);

		*cond = SE_COND_NEQ;
		*value = t->wait_val;
		*mask = t->mask;
	}
}

/* What try_submit checks and what execution relies on. */
static doca_error_t se_task_validate(const struct doca_task *task)
{
	enum se_cond cond;
	uint64_t value, mask;

	switch (se_task_kind_of(task)) {
	case SE_TASK_GET:
		if (get_from_task(task)->ret_val_ptr == NULL)
			return FAIL(DOCA_ERROR_INVALID_VALUE, "sync event get task: result pointer is NULL");
		return DOCA_SUCCESS;
	case SE_TASK_NOTIFY_SET:
		return DOCA_SUCCESS;
	case SE_TASK_NOTIFY_ADD:
		if (notify_add_from_task(task)->fetched_val_ptr == NULL)
			return FAIL(DOCA_ERROR_INVALID_VALUE, "sync event notify_add task: fetched value pointer is NULL");
		return DOCA_SUCCESS;
	case SE_TASK_WAIT_EQ:
	case SE_TASK_WAIT_NEQ:
		se_task_wait_params(task, &cond, &value, &mask);
		if (!se_task_mask_ok(mask))
			return FAIL(DOCA_ERROR_INVALID_VALUE,
				    "sync event wait task: mask 0x%llx is not 0 or an aligned run of 1, 2, 4 or 8 0xff "
				    "bytes",
				    (unsigned long long)mask);
		if (!se_cond_possible(cond, value, mask))
			return FAIL(DOCA_ERROR_INVALID_VALUE,
				    "sync event wait task: (value & 0x%llx) %s 0x%llx can never hold",
				    (unsigned long long)mask, se_cond_name(cond), (unsigned long long)value);
		return DOCA_SUCCESS;
	case SE_TASK_KINDS:
		break;
	}
	return FAIL(DOCA_ERROR_UNEXPECTED, "sync event task of unknown type");
}

static struct doca_task *se_queue_take_all(struct doca_sync_event *ev)
{
	struct doca_task *head = ev->queue_head;

	ev->queue_head = NULL;
	ev->queue_tail = NULL;
	return head;
}

static bool se_wait_task_holds(const struct doca_sync_event *ev, const struct doca_task *task)
{
	enum se_cond cond;
	uint64_t value, mask;

	se_task_wait_params(task, &cond, &value, &mask);
	return se_cond_holds(se_load(ev), cond, value, mask);
}

/* Run one submitted task, or park it if it is a wait that does not hold. */
static unsigned int se_task_execute(struct doca_sync_event *ev, struct doca_task *task)
{
	doca_error_t status = se_task_validate(task);

	if (status == DOCA_SUCCESS && ev->pci_import != NULL)
		status = core_pci_import_check(ev->pci_import, "sync event task");
	if (status != DOCA_SUCCESS) {
		softdoca_task_complete(task, status);
		return 1;
	}
	switch (se_task_kind_of(task)) {
	case SE_TASK_GET:
		*get_from_task(task)->ret_val_ptr = se_load(ev);
		break;
	case SE_TASK_NOTIFY_SET:
		se_store(ev, notify_set_from_task(task)->set_val);
		break;
	case SE_TASK_NOTIFY_ADD: {
		struct doca_sync_event_task_notify_add *t = notify_add_from_task(task);

		*t->fetched_val_ptr = se_fetch_add(ev, t->inc_val);
		break;
	}
	case SE_TASK_WAIT_EQ:
	case SE_TASK_WAIT_NEQ:
		task->next = ev->pending_waits;
		ev->pending_waits = task;
		atomic_fetch_add(&ev->num_pending_waits, 1);
		return 0; /* se_poll_waits completes it, maybe at once */
	case SE_TASK_KINDS:
		break;
	}
	softdoca_task_complete(task, DOCA_SUCCESS);
	return 1;
}

/* Complete the parked waits whose condition holds now. */
static unsigned int se_poll_waits(struct doca_sync_event *ev)
{
	struct doca_task **link = &ev->pending_waits;
	unsigned int done = 0;

	while (*link != NULL) {
		struct doca_task *task = *link;

		if (!se_wait_task_holds(ev, task)) {
			link = &task->next;
			continue;
		}
		*link = task->next;
		atomic_fetch_sub(&ev->num_pending_waits, 1);
		softdoca_task_complete(task, DOCA_SUCCESS);
		done++;
	}
	return done;
}

/* Complete every parked wait with status (an imported event's exporter is
 * gone). */
static unsigned int se_fail_waits(struct doca_sync_event *ev, doca_error_t status)
{
	struct doca_task *task, *next;
	unsigned int done = 0;

	for (task = ev->pending_waits; task != NULL; task = next) {
		next = task->next;
		atomic_fetch_sub(&ev->num_pending_waits, 1);
		softdoca_task_complete(task, status);
		done++;
	}
	ev->pending_waits = NULL;
	return done;
}

/* A value that changes behind our back (external_value: caller memory,
 * a PCI cell) wakes no PE by itself: watch it while waits are parked on
 * it. Called before the waits are checked, so the watcher's baseline is
 * never newer than what the check saw. */
static void se_watch_sync(struct doca_sync_event *ev)
{
	bool want = ev->pending_waits != NULL && ev->external_value;

	if (likely(want == ev->watched))
		return;
	ev->watched = want;
	if (want)
		core_se_watch_start(&ev->watch, ev->value, ev->ctx.pe, ev->pci_import);
	else
		core_se_watch_stop(&ev->watch);
}

static unsigned int se_ctx_progress(struct doca_ctx *ctx)
{
	struct doca_sync_event *ev = se_from_ctx(ctx);
	struct doca_task *task, *next;
	unsigned int done = 0;
	doca_error_t status;

	for (task = se_queue_take_all(ev); task != NULL; task = next) {
		next = task->next;
		done += se_task_execute(ev, task);
	}
	se_watch_sync(ev);
	if (ev->pending_waits != NULL && ev->pci_import != NULL &&
	    (status = se_pci_import_lost(ev, "sync event wait task")) != DOCA_SUCCESS)
		done += se_fail_waits(ev, status);
	if (ev->pending_waits != NULL)
		done += se_poll_waits(ev);
	se_watch_sync(ev);
	return done;
}

static bool se_ctx_has_work(struct doca_ctx *ctx)
{
	struct doca_sync_event *ev = se_from_ctx(ctx);
	const struct doca_task *task;

	if (ev->queue_head != NULL)
		return true;
	for (task = ev->pending_waits; task != NULL; task = task->next)
		if (se_wait_task_holds(ev, task))
			return true;
	return false;
}

static doca_error_t se_ctx_start(struct doca_ctx *ctx)
{
	struct doca_sync_event *ev = se_from_ctx(ctx);
	doca_error_t err;

	err = se_check_locations(ev, "doca_ctx_start");
	if (err != DOCA_SUCCESS)
		return err;
	se_activate(ev);
	return DOCA_SUCCESS;
}

/* Stop requested: revoke, release synchronous waiters, and flush every
 * task not yet completed with an error. */
static void se_ctx_stop(struct doca_ctx *ctx)
{
	struct doca_sync_event *ev = se_from_ctx(ctx);
	struct doca_task *task, *next;

	se_deactivate(ev);
	core_se_watch_stop(&ev->watch);
	ev->watched = false;
	for (task = se_queue_take_all(ev); task != NULL; task = next) {
		next = task->next;
		softdoca_task_complete(task, DOCA_ERROR_IO_FAILED);
	}
	for (task = ev->pending_waits; task != NULL; task = next) {
		next = task->next;
		softdoca_task_complete(task, DOCA_ERROR_IO_FAILED);
	}
	ev->pending_waits = NULL;
	atomic_store(&ev->num_pending_waits, 0);
}

static const struct softdoca_ctx_ops se_ctx_ops = {
	.name = "sync_event",
	.start = se_ctx_start,
	.stop = se_ctx_stop,
	.progress = se_ctx_progress,
	.has_work = se_ctx_has_work,
};

static doca_error_t se_task_submit(struct doca_task *task)
{
	struct doca_sync_event *ev = se_from_ctx(softdoca_task_ctx(task));

	task->next = NULL;
	if (ev->queue_tail == NULL)
		ev->queue_head = task;
	else
		ev->queue_tail->next = task;
	ev->queue_tail = task;
	softdoca_pe_wake(ev->ctx.pe);
	return DOCA_SUCCESS;
}

static const struct softdoca_task_ops se_task_ops = {
	.submit = se_task_submit,
	.check = se_task_validate,
};

static const char *const se_task_names[SE_TASK_KINDS] = {
	[SE_TASK_GET] = "sync_event get",
	[SE_TASK_NOTIFY_SET] = "sync_event notify_set",
	[SE_TASK_NOTIFY_ADD] = "sync_event notify_add",
	[SE_TASK_WAIT_EQ] = "sync_event wait_eq",
	[SE_TASK_WAIT_NEQ] = "sync_event wait_neq",
};

static const size_t se_task_sizes[SE_TASK_KINDS] = {
	[SE_TASK_GET] = sizeof(struct doca_sync_event_task_get),
	[SE_TASK_NOTIFY_SET] = sizeof(struct doca_sync_event_task_notify_set),
	[SE_TASK_NOTIFY_ADD] = sizeof(struct doca_sync_event_task_notify_add),
	[SE_TASK_WAIT_EQ] = sizeof(struct doca_sync_event_task_wait_eq),
	[SE_TASK_WAIT_NEQ] = sizeof(struct doca_sync_event_task_wait_neq),
};

static doca_error_t se_task_set_conf(struct doca_sync_event *ev, enum se_task_kind kind,
				     doca_task_completion_cb_t completion_cb, doca_task_completion_cb_t error_cb,
				     uint32_t num_tasks, const char *op)
{
	if (ev == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: event is NULL", op);
	if (ev->mode == SE_MODE_STANDALONE)
		return FAIL(DOCA_ERROR_NOT_PERMITTED,
			    "%s: the sync event was started standalone; tasks need a context (doca_sync_event_as_ctx)",
			    op);
	/* DOCA documents NOT_PERMITTED here, where other contexts say
	 * BAD_STATE. */
	if (ev->ctx.state != DOCA_CTX_STATE_IDLE)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "%s: the sync event context is not idle", op);
	/* doca_sync_event.h refuses only NULL parameters here, and NVIDIA's
	 * sync_event_local_pci/remote_pci pass 0 when run with --async and no
	 * --async-num-tasks (common_common.c accepts [0, UINT32_MAX]), then
	 * allocate tasks: 0 gets a small default pool. */
	if (num_tasks == 0) {
		SDK_LOG_INFO("%s: num_tasks 0: a pool of %u tasks", op, SE_DEFAULT_NUM_TASKS);
		num_tasks = SE_DEFAULT_NUM_TASKS;
	}
	return softdoca_task_type_set_conf(&ev->task_types[kind], completion_cb, error_cb, num_tasks);
}

/* The shared part of every alloc_init; typed_out is the caller's output
 * pointer, only checked for NULL here. */
static doca_error_t se_task_alloc(struct doca_sync_event *ev, enum se_task_kind kind, union doca_data user_data,
				  const void *typed_out, const char *op, struct doca_task **task)
{
	if (ev == NULL || typed_out == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: %s is NULL", op, ev == NULL ? "event" : "task output");
	return softdoca_task_alloc(&ev->task_types[kind], user_data, task);
}

static doca_error_t se_cap_yes(const struct doca_devinfo *devinfo, const char *op)
{
	if (devinfo == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: devinfo is NULL", op);
	return DOCA_SUCCESS;
}

static doca_error_t se_cap_no(const struct doca_devinfo *devinfo, const char *op)
{
	if (devinfo == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: devinfo is NULL", op);
	/* An answer, not a failure: programs probe every device. */
	SDK_LOG_DBG("%s: soft devices have no PCI export, DPA or GPU", op);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t se_not_supported(const char *op, const char *what)
{
	SDK_LOG_ERR("%s: %s are not available on soft devices", op, what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                           */

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create(struct doca_sync_event **event)
{
	struct doca_sync_event *ev;
	int kind;

	if (event == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_sync_event_create: event output pointer is NULL");
	ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "doca_sync_event_create: failed to allocate a sync event");
	ev->value = &ev->storage;
	atomic_init(&ev->gen, 0);
	atomic_init(&ev->sleepers, 0);
	atomic_init(&ev->waiters, 0);
	atomic_init(&ev->active, false);
	atomic_init(&ev->num_pending_waits, 0);
	if (softdoca_ctx_init(&ev->ctx, &se_ctx_ops, NULL) != DOCA_SUCCESS) {
		free(ev); /* softdoca_ctx_init said why */
		return DOCA_ERROR_NO_MEMORY;
	}
	for (kind = 0; kind < SE_TASK_KINDS; kind++)
		softdoca_task_type_init(&ev->task_types[kind], &ev->ctx, se_task_names[kind], &se_task_ops,
					se_task_sizes[kind]);
	*event = ev;
	return DOCA_SUCCESS;
}

static void se_pci_free(struct doca_sync_event *ev);

static void se_drop_value_buf(struct doca_sync_event *ev)
{
	if (ev->value_buf != NULL) {
		(void)doca_buf_dec_refcount(ev->value_buf, NULL);
		ev->value_buf = NULL;
	}
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_destroy(struct doca_sync_event *event)
{
	doca_error_t err;

	if (event == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_sync_event_destroy: event is NULL");
	if (softdoca_live_check(&event->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (event->started) {
		se_deactivate(event);
		event->started = false;
	}
	/* BAD_STATE (logged) while the context is not idle. */
	err = softdoca_ctx_fini(&event->ctx);
	if (err != DOCA_SUCCESS)
		return err;
	if (event->publisher_dev != NULL)
		softdoca_dev_release(event->publisher_dev);
	if (event->subscriber_dev != NULL)
		softdoca_dev_release(event->subscriber_dev);
	core_se_watch_stop(&event->watch);
	se_drop_value_buf(event);
	se_pci_free(event);
	free(event);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_start(struct doca_sync_event *event)
{
	doca_error_t err;

	if (event == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_sync_event_start: event is NULL");
	if (event->mode == SE_MODE_CTX)
		return se_bad_state(event, "doca_sync_event_start", "a plain sync event",
				    "it was turned into a context: start it with doca_ctx_start");
	if (event->started)
		return se_bad_state(event, "doca_sync_event_start", "not started", "it was started already; start it once");
	err = se_check_locations(event, "doca_sync_event_start");
	if (err != DOCA_SUCCESS)
		return err;
	event->mode = SE_MODE_STANDALONE;
	event->started = true;
	se_activate(event);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_stop(struct doca_sync_event *event)
{
	if (event == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_sync_event_stop: event is NULL");
	if (event->mode == SE_MODE_CTX)
		return se_bad_state(event, "doca_sync_event_stop", "a plain sync event",
				    "it runs as a context: stop it with doca_ctx_stop");
	if (!event->started)
		return se_bad_state(event, "doca_sync_event_stop", "started", "only a started sync event stops");
	se_deactivate(event);
	event->started = false;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Locations                                                            */

static doca_error_t se_add_location(struct doca_sync_event *ev, bool publisher, enum se_location loc,
				    struct doca_dev *dev, const char *op)
{
	enum se_location *slot;
	doca_error_t err;

	if (ev == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: event is NULL", op);
	if (loc == SE_LOC_CPU && dev == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: dev is NULL", op);
	err = se_check_config(ev, op);
	if (err != DOCA_SUCCESS)
		return err;
	slot = publisher ? &ev->publisher : &ev->subscriber;
	if (*slot != SE_LOC_NONE)
		return FAIL(DOCA_ERROR_ALREADY_EXIST, "%s: the sync event already has a %s location (%s); it takes one",
			    op, publisher ? "publisher" : "subscriber", se_location_name(*slot));
	*slot = loc;
	if (dev != NULL) {
		/* The device must outlive the event: doca_dev_close says IN_USE. */
		softdoca_dev_hold(dev);
		if (publisher)
			ev->publisher_dev = dev;
		else
			ev->subscriber_dev = dev;
	}
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	return se_add_location(event, true, SE_LOC_CPU, dev, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_remote_net(struct doca_sync_event *event)
{
	return se_add_location(event, true, SE_LOC_REMOTE_NET, NULL, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	return se_add_location(event, false, SE_LOC_CPU, dev, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_remote_pci(struct doca_sync_event *event)
{
	return se_add_location(event, true, SE_LOC_REMOTE_PCI, NULL, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_remote_pci(struct doca_sync_event *event)
{
	return se_add_location(event, false, SE_LOC_REMOTE_PCI, NULL, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa)
{
	(void)event;
	(void)dpa;
	return se_not_supported(__func__, "DPA locations");
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa)
{
	(void)event;
	(void)dpa;
	return se_not_supported(__func__, "DPA locations");
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu)
{
	(void)event;
	(void)gpu;
	return se_not_supported(__func__, "GPU locations");
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu)
{
	(void)event;
	(void)gpu;
	return se_not_supported(__func__, "GPU locations");
}

/* ------------------------------------------------------------------ */
/* Value storage                                                        */

/* The value of an event created from a PCI export lives in the
 * exporter's shared cell and cannot move. */
static doca_error_t se_pci_check_storage(const struct doca_sync_event *ev, const char *op)
{
	if (ev->pci_import != NULL)
		return FAIL(DOCA_ERROR_NOT_PERMITTED,
			    "%s: the sync event was created from a PCI export; its value lives with the exporter", op);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr)
{
	doca_error_t err;

	if (event == NULL || addr == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: %s is NULL", __func__, event == NULL ? "event" : "addr");
	if ((uintptr_t)addr % sizeof(uint64_t) != 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: address %p is not 8-byte aligned", __func__, (void *)addr);
	err = se_check_config(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	err = se_pci_check_storage(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	se_drop_value_buf(event);
	event->pci_value = false;
	event->value = addr;
	event->external_value = true;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_set_doca_buf(struct doca_sync_event *event, struct doca_buf *buf)
{
	struct doca_mmap *mmap;
	uint32_t list_len, permissions;
	void *data;
	size_t data_len;
	doca_error_t err;

	if (event == NULL || buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: %s is NULL", __func__, event == NULL ? "event" : "buf");
	err = se_check_config(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	err = se_pci_check_storage(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	err = doca_buf_get_list_len(buf, &list_len);
	if (err != DOCA_SUCCESS)
		return err;
	if (list_len != 1)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "%s: buf is a list of %u; a single buf is needed", __func__,
			    list_len);
	mmap = softdoca_buf_get_mmap(buf);
	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: buf was released to its inventory", __func__);
	err = softdoca_mmap_local_info(mmap, NULL, &permissions);
	if (err != DOCA_SUCCESS)
		return err;
	if ((permissions & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE) == 0)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "%s: the buf's mmap is not locally writable (permissions 0x%x)",
			    __func__, permissions);
	doca_buf_get_data(buf, &data);
	doca_buf_get_data_len(buf, &data_len);
	if (data_len != sizeof(uint64_t))
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "%s: buf data section is %zu bytes; it must be exactly 8",
			    __func__, data_len);
	if ((uintptr_t)data % sizeof(uint64_t) != 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: buf data %p is not 8-byte aligned", __func__, data);
	/* The memory must stay valid: keep the buf (and so its mmap). */
	err = doca_buf_inc_refcount(buf, NULL);
	if (err != DOCA_SUCCESS)
		return err;
	se_drop_value_buf(event);
	event->pci_value = false;
	event->value_buf = buf;
	event->value = data;
	event->external_value = true;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Synchronous use                                                      */

static doca_error_t se_check_active(const struct doca_sync_event *ev, const char *op)
{
	if (unlikely(!atomic_load_explicit(&ev->active, memory_order_acquire)))
		return se_bad_state(ev, op, "started", "call doca_sync_event_start (or doca_ctx_start) first");
	if (unlikely(ev->pci_import != NULL))
		return core_pci_import_check(ev->pci_import, op);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value)
{
	doca_error_t err;

	if (unlikely(event == NULL || value == NULL))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: %s is NULL", __func__, event == NULL ? "event" : "value");
	err = se_check_active(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	*value = se_load(event);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value)
{
	doca_error_t err;

	if (unlikely(event == NULL))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: event is NULL", __func__);
	err = se_check_active(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	se_store(event, value);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched)
{
	doca_error_t err;

	if (unlikely(event == NULL || fetched == NULL))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: %s is NULL", __func__, event == NULL ? "event" : "fetched");
	err = se_check_active(event, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	*fetched = se_fetch_add(event, value);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return se_wait(event, SE_COND_GT, value, mask, false, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return se_wait(event, SE_COND_GT, value, mask, true, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_eq(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return se_wait(event, SE_COND_EQ, value, mask, false, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_eq_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return se_wait(event, SE_COND_EQ, value, mask, true, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_neq(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return se_wait(event, SE_COND_NEQ, value, mask, false, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_neq_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return se_wait(event, SE_COND_NEQ, value, mask, true, __func__);
}

/* ------------------------------------------------------------------ */
/* Remote peers                                                         */

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_remote_net(struct doca_sync_event *event, const uint8_t **data, size_t *sz)
{
	doca_error_t err;

	if (event == NULL || data == NULL || sz == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: event or an output pointer is NULL", __func__);
	if (!atomic_load(&event->active))
		return se_bad_state(event, __func__, "started", "export it after doca_sync_event_start");
	if (event->publisher != SE_LOC_REMOTE_NET)
		return FAIL(DOCA_ERROR_NOT_PERMITTED,
			    "%s: sync event publisher location is %s; only an event with a remote_net publisher "
			    "(doca_sync_event_add_publisher_location_remote_net) can be exported",
			    __func__, se_location_name(event->publisher));
	if (!event->reg.registered) {
		err = se_export_new(event);
		if (err != DOCA_SUCCESS)
			return err;
	}
	*data = event->desc;
	*sz = SOFTDOCA_SYNC_EVENT_DESC_LEN;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_remote_net_supported(const struct doca_devinfo *devinfo)
{
	return se_cap_yes(devinfo, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
							   struct doca_sync_event_remote_net **event)
{
	struct softdoca_sync_event_desc d;
	struct doca_sync_event_remote_net *remote;
	doca_error_t err;

	if (dev == NULL || data == NULL || event == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: dev, data or event is NULL", __func__);
	err = softdoca_sync_event_desc_parse(data, sz, &d);
	if (err != DOCA_SUCCESS)
		return err;
	remote = calloc(1, sizeof(*remote));
	if (remote == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "%s: failed to allocate a remote sync event", __func__);
	remote->desc = d;
	remote->dev = dev;
	softdoca_dev_hold(dev);
	*event = remote;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_create_from_export_supported(const struct doca_devinfo *devinfo)
{
	return se_cap_yes(devinfo, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_destroy(struct doca_sync_event_remote_net *event)
{
	if (event == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: event is NULL", __func__);
	softdoca_dev_release(event->dev);
	free(event);
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_sync_event_remote_info(const struct doca_sync_event_remote_net *event,
							      uint64_t *event_id,
							      uint8_t secret[SOFTDOCA_SYNC_EVENT_SECRET_LEN])
{
	if (event == NULL || event_id == NULL || secret == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "remote sync event info: NULL event or output");
	*event_id = event->desc.event_id;
	memcpy(secret, event->desc.secret, SOFTDOCA_SYNC_EVENT_SECRET_LEN);
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_sync_event_remote_desc(const struct doca_sync_event_remote_net *event,
							      struct softdoca_sync_event_desc *desc)
{
	if (event == NULL || desc == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "remote sync event descriptor: NULL event or output");
	*desc = event->desc;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* PCI export (mmap_pci.c); DPA and GPU: not available                  */

/* Move the value into the export's shared cell (once) and publish it. */
static doca_error_t se_pci_publish(struct doca_sync_event *ev)
{
	uint64_t *cell;

	if (!ev->pci_value) {
		cell = core_pci_export_value(&ev->pci_export);
		if (cell == NULL)
			return DOCA_ERROR_FULL; /* logged */
		__atomic_store_n(cell, se_load(ev), __ATOMIC_SEQ_CST);
		ev->value = cell;
		/* The importer's updates bypass our futex: waiters poll, and
		 * waits parked already are watched from now on. */
		ev->external_value = true;
		ev->pci_value = true;
		if (atomic_load(&ev->num_pending_waits) > 0)
			core_se_watch_start(&ev->watch, cell, ev->ctx.pe, NULL);
	}
	return core_pci_export_publish(&ev->pci_export, SOFTDOCA_PCI_KIND_SYNC_EVENT, 0, 0, 0);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_remote_pci(struct doca_sync_event *event, struct doca_dev *dev,
						  const uint8_t **data, size_t *sz)
{
	doca_error_t err;

	if (event == NULL || dev == NULL || data == NULL || sz == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: event, dev or an output pointer is NULL", __func__);
	if (event->pci_import != NULL)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "%s: a sync event created from an export cannot be exported",
			    __func__);
	if (!atomic_load(&event->active))
		return FAIL(DOCA_ERROR_BAD_STATE, "%s: sync event must be started before it is exported", __func__);
	if (event->publisher != SE_LOC_REMOTE_PCI && event->subscriber != SE_LOC_REMOTE_PCI)
		return FAIL(DOCA_ERROR_NOT_PERMITTED,
			    "%s: sync event has no remote_pci location (publisher %s, subscriber %s); add one with "
			    "doca_sync_event_add_publisher_location_remote_pci before start",
			    __func__, se_location_name(event->publisher), se_location_name(event->subscriber));
	if (event->external_value && !event->pci_value)
		return FAIL(DOCA_ERROR_NOT_SUPPORTED,
			    "%s: the value lives in caller memory (set_addr/set_doca_buf); softdoca exports to "
			    "remote_pci only events that keep their own value",
			    __func__);
	if (!event->pci_export.live) {
		err = se_pci_publish(event);
		if (err != DOCA_SUCCESS)
			return err;
	}
	*data = event->pci_export.desc;
	*sz = SOFTDOCA_PCI_DESC_LEN;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_remote_pci_supported(const struct doca_devinfo *devinfo)
{
	return se_cap_yes(devinfo, __func__);
}

static doca_error_t se_pci_parse(const uint8_t *data, size_t sz, struct softdoca_pci_desc *d)
{
	doca_error_t err;

	if (sz >= 4 && memcmp(data, DESC_MAGIC, 4) == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "doca_sync_event_create_from_export: this is a remote_net export; use "
			    "doca_sync_event_remote_net_create_from_export");
	err = softdoca_pci_desc_parse(data, sz, d);
	if (err != DOCA_SUCCESS)
		return err;
	if (d->kind != SOFTDOCA_PCI_KIND_SYNC_EVENT)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "doca_sync_event_create_from_export: the descriptor exports an mmap, not a sync event");
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
						struct doca_sync_event **event)
{
	struct softdoca_pci_desc d;
	struct core_pci_import *im;
	struct doca_sync_event *ev;
	doca_error_t err;

	if (dev == NULL || data == NULL || event == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: dev, data or event is NULL", __func__);
	err = se_pci_parse(data, sz, &d);
	if (err != DOCA_SUCCESS)
		return err;
	err = core_pci_import_open(&d, &im);
	if (err != DOCA_SUCCESS)
		return err;
	err = doca_sync_event_create(&ev);
	if (err != DOCA_SUCCESS) {
		core_pci_import_close(im);
		return err;
	}
	/* Configured already: start it (or its context) and use it. */
	ev->pci_import = im;
	ev->value = core_pci_import_value(im);
	ev->external_value = true;
	ev->publisher = SE_LOC_REMOTE_PCI;
	ev->subscriber = SE_LOC_CPU;
	ev->subscriber_dev = dev;
	softdoca_dev_hold(dev);
	*event = ev;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_create_from_export_supported(const struct doca_devinfo *devinfo)
{
	return se_cap_yes(devinfo, __func__);
}

/* Destroy: give up the export slot or the import (after deactivation). */
static void se_pci_free(struct doca_sync_event *ev)
{
	core_pci_export_close(&ev->pci_export);
	core_pci_import_close(ev->pci_import);
	ev->pci_import = NULL;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_dpa_handle(struct doca_sync_event *event, struct doca_dpa *dpa,
					    doca_dpa_dev_sync_event_t *dpa_dev_se_handle)
{
	(void)event;
	(void)dpa;
	(void)dpa_dev_se_handle;
	return se_not_supported(__func__, "DPA handles");
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_dpa_supported(const struct doca_devinfo *devinfo)
{
	return se_cap_no(devinfo, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_gpu_handle(struct doca_sync_event *event, struct doca_gpu *gpu,
					    doca_gpu_dev_sync_event_t **gpu_dev_se)
{
	(void)event;
	(void)gpu;
	(void)gpu_dev_se;
	return se_not_supported(__func__, "GPU handles");
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_gpu_supported(const struct doca_devinfo *devinfo)
{
	return se_cap_no(devinfo, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_get_dpa_handle(struct doca_sync_event_remote_net *event,
						       struct doca_dpa *dpa,
						       doca_dpa_dev_sync_event_remote_net_t *dpa_remote_event)
{
	(void)event;
	(void)dpa;
	(void)dpa_remote_event;
	return se_not_supported(__func__, "DPA handles");
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_export_to_dpa_supported(const struct doca_devinfo *devinfo)
{
	return se_cap_no(devinfo, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_get_gpu_handle(struct doca_sync_event_remote_net *event,
						       struct doca_gpu *gpu,
						       doca_gpu_dev_sync_event_remote_net_t *gpu_remote_event)
{
	(void)event;
	(void)gpu;
	(void)gpu_remote_event;
	return se_not_supported(__func__, "GPU handles");
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_export_to_gpu_supported(const struct doca_devinfo *devinfo)
{
	return se_cap_no(devinfo, __func__);
}

/* ------------------------------------------------------------------ */
/* Context mode API                                                     */

DOCA_EXPERIMENTAL
struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event)
{
	if (event == NULL) {
		SDK_LOG_ERR("%s: event is NULL", __func__);
		return NULL;
	}
	if (event->mode == SE_MODE_STANDALONE) {
		SDK_LOG_ERR("%s: the sync event was started with doca_sync_event_start; it cannot become a context",
			    __func__);
		return NULL;
	}
	event->mode = SE_MODE_CTX;
	return &event->ctx;
}

/*
 * The per-type functions that differ only in names: the cap query,
 * set_conf and the doca_task view. The PE calls a type's callbacks with the
 * struct doca_task pointer, which is also the typed task pointer (it comes
 * first), hence the callback casts.
 */
#define SE_TASK_COMMON(T, KIND) \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_sync_event_cap_task_##T##_is_supported(const struct doca_devinfo *devinfo) \
	{ \
		return se_cap_yes(devinfo, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_sync_event_task_##T##_set_conf(struct doca_sync_event *event, \
							 doca_sync_event_task_##T##_completion_cb_t completion_cb, \
							 doca_sync_event_task_##T##_completion_cb_t error_cb, \
							 uint32_t num_tasks) \
	{ \
		return se_task_set_conf(event, KIND, (doca_task_completion_cb_t)completion_cb, \
					(doca_task_completion_cb_t)error_cb, num_tasks, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	struct doca_task *doca_sync_event_task_##T##_as_doca_task(struct doca_sync_event_task_##T *task) \
	{ \
		if (task == NULL) { \
			SDK_LOG_ERR("%s: task is NULL", __func__); \
			return NULL; \
		} \
		return &task->task; \
	}

/* A field accessor pair; a NULL task is logged and ignored (getters
 * answer 0). */
#define SE_TASK_FIELD(T, F, TYPE) \
	DOCA_EXPERIMENTAL \
	void doca_sync_event_task_##T##_set_##F(struct doca_sync_event_task_##T *task, TYPE F) \
	{ \
		if (task == NULL) { \
			SDK_LOG_ERR("%s: task is NULL", __func__); \
			return; \
		} \
		task->F = F; \
	} \
	DOCA_EXPERIMENTAL \
	TYPE doca_sync_event_task_##T##_get_##F(const struct doca_sync_event_task_##T *task) \
	{ \
		if (task == NULL) { \
			SDK_LOG_ERR("%s: task is NULL", __func__); \
			return 0; \
		} \
		return task->F; \
	}

SE_TASK_COMMON(get, SE_TASK_GET)
SE_TASK_COMMON(notify_set, SE_TASK_NOTIFY_SET)
SE_TASK_COMMON(notify_add, SE_TASK_NOTIFY_ADD)
SE_TASK_COMMON(wait_eq, SE_TASK_WAIT_EQ)
SE_TASK_COMMON(wait_neq, SE_TASK_WAIT_NEQ)

SE_TASK_FIELD(get, ret_val_ptr, uint64_t *)
SE_TASK_FIELD(notify_set, set_val, uint64_t)
SE_TASK_FIELD(notify_add, inc_val, uint64_t)
SE_TASK_FIELD(notify_add, fetched_val_ptr, uint64_t *)
SE_TASK_FIELD(wait_eq, wait_val, uint64_t)
SE_TASK_FIELD(wait_eq, mask, uint64_t)
SE_TASK_FIELD(wait_neq, wait_val, uint64_t)
SE_TASK_FIELD(wait_neq, mask, uint64_t)

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_get_alloc_init(struct doca_sync_event *event, uint64_t *ret_val_ptr,
						 union doca_data user_data, struct doca_sync_event_task_get **task)
{
	struct doca_task *t;
	doca_error_t err = se_task_alloc(event, SE_TASK_GET, user_data, task, __func__, &t);

	if (err != DOCA_SUCCESS)
		return err;
	get_from_task(t)->ret_val_ptr = ret_val_ptr;
	*task = get_from_task(t);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_set_alloc_init(struct doca_sync_event *event, uint64_t set_val,
							union doca_data user_data,
							struct doca_sync_event_task_notify_set **task)
{
	struct doca_task *t;
	doca_error_t err = se_task_alloc(event, SE_TASK_NOTIFY_SET, user_data, task, __func__, &t);

	if (err != DOCA_SUCCESS)
		return err;
	notify_set_from_task(t)->set_val = set_val;
	*task = notify_set_from_task(t);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_add_alloc_init(struct doca_sync_event *event, uint64_t inc_val,
							uint64_t *fetched_val_ptr, union doca_data user_data,
							struct doca_sync_event_task_notify_add **task)
{
	struct doca_task *t;
	doca_error_t err = se_task_alloc(event, SE_TASK_NOTIFY_ADD, user_data, task, __func__, &t);

	if (err != DOCA_SUCCESS)
		return err;
	notify_add_from_task(t)->inc_val = inc_val;
	notify_add_from_task(t)->fetched_val_ptr = fetched_val_ptr;
	*task = notify_add_from_task(t);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_eq_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask,
						     union doca_data user_data,
						     struct doca_sync_event_task_wait_eq **task)
{
	struct doca_task *t;
	doca_error_t err = se_task_alloc(event, SE_TASK_WAIT_EQ, user_data, task, __func__, &t);

	if (err != DOCA_SUCCESS)
		return err;
	wait_eq_from_task(t)->wait_val = wait_val;
	wait_eq_from_task(t)->mask = mask;
	*task = wait_eq_from_task(t);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_neq_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask,
						      union doca_data user_data,
						      struct doca_sync_event_task_wait_neq **task)
{
	struct doca_task *t;
	doca_error_t err = se_task_alloc(event, SE_TASK_WAIT_NEQ, user_data, task, __func__, &t);

	if (err != DOCA_SUCCESS)
		return err;
	wait_neq_from_task(t)->wait_val = wait_val;
	wait_neq_from_task(t)->mask = mask;
	*task = wait_neq_from_task(t);
	return DOCA_SUCCESS;
}
