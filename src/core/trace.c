/*
 * softdoca — the timeline ring and its JSON writer (see trace.h).
 *
 * Recorders (any thread) and the writer share the ring under one lock:
 * tracing is a diagnosis, and an uncontended lock per event is cheap next
 * to the clock read, while a lock-free seqlock reads slots that are being
 * written (a race by the C memory model, which ThreadSanitizer reports).
 * The writer holds the lock while it writes the file, so recorders wait
 * for a flush. When the ring is full the oldest events are overwritten
 * and counted as dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctx.h"
#include "log_internal.h"
#include "trace.h"

SDK_LOG_REGISTER(TRACE)

enum trace_kind {
	TRACE_SUBMITTED,
	TRACE_SUBMIT_FAILED,
	TRACE_DONE,      /* the engine finished it (any thread) */
	TRACE_COMPLETED, /* delivered to the program: an "X" from submit */
	TRACE_FREED,
	TRACE_CTX_STATE,
	TRACE_CONN,
};

struct trace_event {
	uint64_t ts_ns;
	uint64_t dur_ns;
	uint64_t id;       /* task or connection pointer */
	const char *name;  /* task type name or static text */
	const char *text;  /* previous state, or NULL */
	uint32_t tid;
	int32_t status;
	uint8_t kind;
};

SOFTDOCA_EXPORT bool softdoca_trace_on;

static struct {
	char path[4096];
	struct trace_event *ring;
	uint64_t slots;
	uint64_t head;     /* events recorded (under lock) */
	_Atomic uint32_t next_track;
	uint64_t t0_ns;
	pthread_mutex_t lock; /* the ring and head; held while the file is written */
} trace = { .lock = PTHREAD_MUTEX_INITIALIZER };

SOFTDOCA_EXPORT uint64_t softdoca_trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

SOFTDOCA_EXPORT uint32_t softdoca_trace_new_track(void)
{
	if (!softdoca_trace_on)
		return 0;
	return atomic_fetch_add_explicit(&trace.next_track, 1, memory_order_relaxed) + 1;
}

static void trace_record(uint8_t kind, uint64_t ts_ns, uint64_t dur_ns, uint64_t id, const char *name,
			 const char *text, uint32_t tid, int32_t status)
{
	struct trace_event *ev;

	pthread_mutex_lock(&trace.lock);
	ev = &trace.ring[trace.head++ % trace.slots];
	ev->ts_ns = ts_ns;
	ev->dur_ns = dur_ns;
	ev->id = id;
	ev->name = name;
	ev->text = text;
	ev->tid = tid;
	ev->status = status;
	ev->kind = kind;
	pthread_mutex_unlock(&trace.lock);
}

static void trace_task(uint8_t kind, struct doca_task *task, int32_t status)
{
	trace_record(kind, softdoca_trace_now(), 0, (uint64_t)(uintptr_t)task, task->type->name, NULL,
		     task->type->ctx->trace_tid, status);
}

SOFTDOCA_EXPORT void softdoca_trace_task_submitted(struct doca_task *task)
{
	task->trace_submit_ns = softdoca_trace_now();
	trace_record(TRACE_SUBMITTED, task->trace_submit_ns, 0, (uint64_t)(uintptr_t)task, task->type->name, NULL,
		     task->type->ctx->trace_tid, DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_task_submit_failed(struct doca_task *task, doca_error_t status)
{
	trace_task(TRACE_SUBMIT_FAILED, task, status);
}

SOFTDOCA_EXPORT void softdoca_trace_task_done(struct doca_task *task, doca_error_t status)
{
	trace_task(TRACE_DONE, task, status);
}

SOFTDOCA_EXPORT void softdoca_trace_task_completed(struct doca_task *task)
{
	uint64_t now = softdoca_trace_now();
	uint64_t start = task->trace_submit_ns != 0 && task->trace_submit_ns <= now ? task->trace_submit_ns : now;

	trace_record(TRACE_COMPLETED, start, now - start, (uint64_t)(uintptr_t)task, task->type->name, NULL,
		     task->type->ctx->trace_tid, task->status);
	task->trace_submit_ns = 0;
}

SOFTDOCA_EXPORT void softdoca_trace_task_freed(struct doca_task *task)
{
	trace_task(TRACE_FREED, task, DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_ctx_state(struct doca_ctx *ctx, const char *prev, const char *next)
{
	trace_record(TRACE_CTX_STATE, softdoca_trace_now(), 0, (uint64_t)(uintptr_t)ctx, next, prev, 0,
		     DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_conn(struct doca_ctx *ctx, const void *conn, const char *what)
{
	trace_record(TRACE_CONN, softdoca_trace_now(), 0, (uint64_t)(uintptr_t)conn, what, NULL,
		     ctx != NULL ? ctx->trace_tid : 0, DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_counts(uint64_t *recorded, uint64_t *dropped)
{
	uint64_t head;

	pthread_mutex_lock(&trace.lock);
	head = trace.head;
	pthread_mutex_unlock(&trace.lock);
	*recorded = head;
	*dropped = head > trace.slots ? head - trace.slots : 0;
}

/* ---- writing ------------------------------------------------------------- */

/* Microseconds since the trace began, with nanosecond decimals. */
static void trace_put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void trace_put_ts(FILE *f, uint64_t ts_ns)
{
	trace_put_us(f, ts_ns > trace.t0_ns ? ts_ns - trace.t0_ns : 0);
}

static const char *const trace_task_phase[] = {
	[TRACE_SUBMITTED] = "submitted",
	[TRACE_SUBMIT_FAILED] = "submit_failed",
	[TRACE_DONE] = "done",
	[TRACE_FREED] = "freed",
};

static void trace_put_event(FILE *f, const struct trace_event *ev)
{
	int pid = (int)getpid();

	switch (ev->kind) {
	case TRACE_COMPLETED:
		fprintf(f, "{\"name\":\"%s\",\"cat\":\"task\",\"ph\":\"X\",\"ts\":", ev->name);
		trace_put_ts(f, ev->ts_ns);
		fputs(",\"dur\":", f);
		trace_put_us(f, ev->dur_ns);
		fprintf(f, ",\"pid\":%d,\"tid\":%" PRIu32 ",\"args\":{\"task\":\"0x%" PRIx64 "\",\"status\":\"%s\"}}",
			pid, ev->tid, ev->id, doca_error_get_name((doca_error_t)ev->status));
		return;
	case TRACE_CTX_STATE:
		fputs("{\"name\":\"ctx_state\",\"cat\":\"ctx\",\"ph\":\"i\",\"s\":\"t\",\"ts\":", f);
		trace_put_ts(f, ev->ts_ns);
		fprintf(f, ",\"pid\":%d,\"tid\":0,\"args\":{\"ctx\":\"0x%" PRIx64 "\",\"from\":\"%s\",\"to\":\"%s\"}}",
			pid, ev->id, ev->text, ev->name);
		return;
	case TRACE_CONN:
		fprintf(f, "{\"name\":\"conn_%s\",\"cat\":\"conn\",\"ph\":\"i\",\"s\":\"t\",\"ts\":", ev->name);
		trace_put_ts(f, ev->ts_ns);
		fprintf(f, ",\"pid\":%d,\"tid\":%" PRIu32 ",\"args\":{\"conn\":\"0x%" PRIx64 "\"}}", pid, ev->tid,
			ev->id);
		return;
	default:
		fprintf(f, "{\"name\":\"%s\",\"cat\":\"task\",\"ph\":\"i\",\"s\":\"t\",\"ts\":", trace_task_phase[ev->kind]);
		trace_put_ts(f, ev->ts_ns);
		fprintf(f,
			",\"pid\":%d,\"tid\":%" PRIu32 ",\"args\":{\"type\":\"%s\",\"task\":\"0x%" PRIx64
			"\",\"status\":\"%s\"}}",
			pid, ev->tid, ev->name, ev->id, doca_error_get_name((doca_error_t)ev->status));
		return;
	}
}

static void trace_put_track_names(FILE *f)
{
	uint32_t tracks = atomic_load(&trace.next_track);
	int pid = (int)getpid();

	fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"contexts\"}},\n",
		pid);
	for (uint32_t t = 1; t <= tracks; t++)
		fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu32
			",\"args\":{\"name\":\"ctx %" PRIu32 "\"}},\n", pid, t, t);
}

static doca_error_t trace_write(void)
{
	uint64_t head = trace.head;
	uint64_t first = head > trace.slots ? head - trace.slots : 0;
	uint64_t skipped = 0; /* none since the ring is locked; the field stays for readers */
	FILE *f = fopen(trace.path, "w");

	if (f == NULL) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV ": cannot write %s: %s", trace.path, strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	fputs("{\"traceEvents\":[\n", f);
	trace_put_track_names(f);
	for (uint64_t n = first; n < head; n++) {
		const struct trace_event *ev = &trace.ring[n % trace.slots];

		trace_put_event(f, ev);
		fputs(",\n", f);
	}
	fprintf(f,
		"{\"name\":\"softdoca_trace\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"events_recorded\":%" PRIu64
		",\"ring_slots\":%" PRIu64 ",\"dropped_events\":%" PRIu64 ",\"skipped_in_write\":%" PRIu64 "}}\n",
		(int)getpid(), head, trace.slots, first, skipped);
	fprintf(f, "],\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_events\":%" PRIu64 "}}\n", first);
	if (fclose(f) != 0) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV ": writing %s failed: %s", trace.path, strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_trace_flush(void)
{
	doca_error_t status;

	if (!softdoca_trace_on) {
		SDK_LOG_ERR("softdoca_trace_flush: tracing is off (" SOFTDOCA_TRACE_ENV " unset or refused)");
		return DOCA_ERROR_BAD_STATE;
	}
	pthread_mutex_lock(&trace.lock);
	status = trace_write();
	pthread_mutex_unlock(&trace.lock);
	return status;
}

static void trace_at_exit(void)
{
	if (softdoca_trace_on)
		(void)softdoca_trace_flush();
}

/* A forked child would overwrite its parent's file with a copy of the
 * parent's ring at its own exit: it does not trace. */
static void trace_fork_child(void)
{
	softdoca_trace_on = false;
}

/* ---- start-up -------------------------------------------------------------- */

/* A whole decimal number in [1, SOFTDOCA_TRACE_EVENTS_MAX], nothing else. */
static bool trace_parse_events(const char *text, uint64_t *out)
{
	uint64_t v = 0;

	if (*text == '\0')
		return false;
	for (const char *p = text; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > SOFTDOCA_TRACE_EVENTS_MAX)
			return false;
	}
	if (v == 0)
		return false;
	*out = v;
	return true;
}

static __attribute__((constructor)) void trace_init(void)
{
	const char *path = getenv(SOFTDOCA_TRACE_ENV);
	const char *events = getenv(SOFTDOCA_TRACE_EVENTS_ENV);
	uint64_t slots = SOFTDOCA_TRACE_EVENTS_DEFAULT;
	int fd;

	if (path == NULL)
		return;
	if (path[0] == '\0' || strlen(path) >= sizeof(trace.path)) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV " is empty or too long; tracing stays off");
		return;
	}
	if (events != NULL && !trace_parse_events(events, &slots)) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_EVENTS_ENV "=\"%s\" is not a whole number in [1, %u]; tracing stays off",
			    events, SOFTDOCA_TRACE_EVENTS_MAX);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV "=%s cannot be written (%s); tracing stays off", path, strerror(errno));
		return;
	}
	close(fd);
	trace.ring = calloc(slots, sizeof(*trace.ring));
	if (trace.ring == NULL) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV ": no memory for %" PRIu64 " events; tracing stays off", slots);
		return;
	}
	snprintf(trace.path, sizeof(trace.path), "%s", path);
	trace.slots = slots;
	trace.t0_ns = softdoca_trace_now();
	if (atexit(trace_at_exit) != 0 || pthread_atfork(NULL, NULL, trace_fork_child) != 0) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV ": cannot register the exit writer; tracing stays off");
		free(trace.ring);
		trace.ring = NULL;
		return;
	}
	softdoca_trace_on = true;
}
