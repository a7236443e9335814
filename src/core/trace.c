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
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctx.h"
#include "log_internal.h"
#include "trace.h"

SDK_LOG_REGISTER(TRACE)

enum trace_kind {
	TRACE_ALLOCATED,
	TRACE_SUBMITTED,
	TRACE_SUBMIT_FAILED,
	TRACE_SENT,      /* the engine handed its request to the transport */
	TRACE_DONE,      /* the engine finished it (any thread) */
	TRACE_COMPLETED, /* delivered to the program: an "X" from submit */
	TRACE_FREED,
	TRACE_AT_TARGET, /* an operation reached its connection at this target */
	TRACE_CTX_STATE,
	TRACE_CONN,
};

struct trace_event {
	uint64_t ts_ns;
	uint64_t arg;      /* COMPLETED: duration; SENT, AT_TARGET: number on the connection */
	uint64_t id;       /* task or context pointer, or a connection id */
	const char *name;  /* task type name or static text */
	const char *text;  /* previous state, or NULL */
	uint32_t tid;
	int32_t status;    /* a doca_error_t; AT_TARGET: the peer's connection id */
	uint8_t kind;
};

SOFTDOCA_EXPORT bool softdoca_trace_on;

static struct {
	char path[4096];   /* as given, for messages; the file is reached through fd only */
	int fd;            /* the trace file, open from start to exit */
	struct trace_event *ring;
	uint64_t slots;
	uint64_t head;     /* events recorded (under lock) */
	_Atomic uint32_t next_track;
	pthread_mutex_t lock; /* the ring and head; held while the file is written */
} trace = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

SOFTDOCA_EXPORT uint64_t softdoca_trace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void trace_record(uint8_t kind, uint64_t ts_ns, uint64_t arg, uint64_t id, const char *name,
			 const char *text, uint32_t tid, int32_t status)
{
	struct trace_event *ev;

	pthread_mutex_lock(&trace.lock);
	ev = &trace.ring[trace.head++ % trace.slots];
	ev->ts_ns = ts_ns;
	ev->arg = arg;
	ev->id = id;
	ev->name = name;
	ev->text = text;
	ev->tid = tid;
	ev->status = status;
	ev->kind = kind;
	pthread_mutex_unlock(&trace.lock);
}

static void trace_task(uint8_t kind, struct doca_task *task, uint64_t arg, int32_t status)
{
	trace_record(kind, softdoca_trace_now(), arg, (uint64_t)(uintptr_t)task, task->type->name, NULL,
		     task->trace_tid, status);
}

SOFTDOCA_EXPORT void softdoca_trace_task_allocated(struct doca_task *task)
{
	trace_task(TRACE_ALLOCATED, task, 0, DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_task_submitted(struct doca_task *task)
{
	task->trace_submit_ns = softdoca_trace_now();
	trace_record(TRACE_SUBMITTED, task->trace_submit_ns, 0, (uint64_t)(uintptr_t)task, task->type->name, NULL,
		     task->trace_tid, DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_task_submit_failed(struct doca_task *task, doca_error_t status)
{
	trace_task(TRACE_SUBMIT_FAILED, task, 0, status);
}

SOFTDOCA_EXPORT void softdoca_trace_task_sent(void *task, uint64_t seq)
{
	trace_task(TRACE_SENT, task, seq, DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_task_done(struct doca_task *task, doca_error_t status)
{
	trace_task(TRACE_DONE, task, 0, status);
}

SOFTDOCA_EXPORT void softdoca_trace_task_completed(struct doca_task *task)
{
	uint64_t now = softdoca_trace_now();
	uint64_t start = task->trace_submit_ns != 0 && task->trace_submit_ns <= now ? task->trace_submit_ns : now;

	trace_record(TRACE_COMPLETED, start, now - start, (uint64_t)(uintptr_t)task, task->type->name, NULL,
		     task->trace_tid, task->status);
	task->trace_submit_ns = 0;
}

SOFTDOCA_EXPORT void softdoca_trace_task_freed(struct doca_task *task)
{
	trace_task(TRACE_FREED, task, 0, DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_at_target(uint32_t track, const char *op, uint64_t seq, uint32_t from_conn)
{
	trace_record(TRACE_AT_TARGET, softdoca_trace_now(), seq, 0, op, NULL, track, (int32_t)from_conn);
}

SOFTDOCA_EXPORT void softdoca_trace_ctx_state(struct doca_ctx *ctx, const char *prev, const char *next)
{
	trace_record(TRACE_CTX_STATE, softdoca_trace_now(), 0, (uint64_t)(uintptr_t)ctx, next, prev, ctx->trace_tid,
		     DOCA_SUCCESS);
}

SOFTDOCA_EXPORT void softdoca_trace_conn(struct doca_ctx *ctx, uint32_t conn_id, const char *what)
{
	trace_record(TRACE_CONN, softdoca_trace_now(), 0, conn_id, what, NULL,
		     softdoca_trace_conn_track(ctx != NULL ? ctx->trace_tid : 0, conn_id), DOCA_SUCCESS);
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

/* CLOCK_MONOTONIC in microseconds with nanosecond decimals: the clock
 * every process on the host shares, so two peers' traces merge. */
static void trace_put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static const char *const trace_task_phase[] = {
	[TRACE_ALLOCATED] = "allocated",
	[TRACE_SUBMITTED] = "submitted",
	[TRACE_SUBMIT_FAILED] = "submit_failed",
	[TRACE_SENT] = "sent",
	[TRACE_DONE] = "done",
	[TRACE_FREED] = "freed",
};

/* "ts" and the track: the part every event line shares. */
static void trace_put_where(FILE *f, const struct trace_event *ev, int pid)
{
	fputs(",\"ts\":", f);
	trace_put_us(f, ev->ts_ns);
	fprintf(f, ",\"pid\":%d,\"tid\":%" PRIu32, pid, ev->tid);
}

static void trace_put_event(FILE *f, const struct trace_event *ev, int pid)
{
	switch (ev->kind) {
	case TRACE_COMPLETED:
		fprintf(f, "{\"name\":\"%s\",\"cat\":\"task\",\"ph\":\"X\"", ev->name);
		trace_put_where(f, ev, pid);
		fputs(",\"dur\":", f);
		trace_put_us(f, ev->arg);
		fprintf(f, ",\"args\":{\"task\":\"0x%" PRIx64 "\",\"status\":\"%s\"}}", ev->id,
			doca_error_get_name((doca_error_t)ev->status));
		return;
	case TRACE_AT_TARGET:
		fputs("{\"name\":\"at_target\",\"cat\":\"target\",\"ph\":\"i\",\"s\":\"t\"", f);
		trace_put_where(f, ev, pid);
		fprintf(f, ",\"args\":{\"op\":\"%s\",\"seq\":%" PRIu64 ",\"from_conn\":%" PRIu32 "}}", ev->name, ev->arg,
			(uint32_t)ev->status);
		return;
	case TRACE_CTX_STATE:
		fputs("{\"name\":\"ctx_state\",\"cat\":\"ctx\",\"ph\":\"i\",\"s\":\"t\"", f);
		trace_put_where(f, ev, pid);
		fprintf(f, ",\"args\":{\"ctx\":\"0x%" PRIx64 "\",\"from\":\"%s\",\"to\":\"%s\"}}", ev->id, ev->text,
			ev->name);
		return;
	case TRACE_CONN:
		fprintf(f, "{\"name\":\"conn_%s\",\"cat\":\"conn\",\"ph\":\"i\",\"s\":\"t\"", ev->name);
		trace_put_where(f, ev, pid);
		fprintf(f, ",\"args\":{\"conn\":%" PRIu64 "}}", ev->id);
		return;
	default:
		fprintf(f, "{\"name\":\"%s\",\"cat\":\"task\",\"ph\":\"i\",\"s\":\"t\"", trace_task_phase[ev->kind]);
		trace_put_where(f, ev, pid);
		fprintf(f, ",\"args\":{\"type\":\"%s\",\"task\":\"0x%" PRIx64 "\",\"status\":\"%s\"", ev->name, ev->id,
			doca_error_get_name((doca_error_t)ev->status));
		if (ev->kind == TRACE_SENT)
			fprintf(f, ",\"seq\":%" PRIu64, ev->arg);
		fputs("}}", f);
		return;
	}
}

/* Text as a JSON string's contents: quotes, backslashes and control
 * characters escaped, anything else as it is. */
static void trace_put_json_text(FILE *f, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
}

/* The process's name (its comm, up to 15 bytes) for the process track. */
static void trace_put_process_name(FILE *f, int pid)
{
	char comm[64] = "";
	FILE *c = fopen("/proc/self/comm", "r");

	if (c != NULL) {
		if (fgets(comm, sizeof(comm), c) == NULL)
			comm[0] = '\0';
		fclose(c);
	}
	comm[strcspn(comm, "\n")] = '\0';
	fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"", pid);
	trace_put_json_text(f, comm[0] != '\0' ? comm : "softdoca");
	fprintf(f, " (pid %d)\"}},\n", pid);
}

/* A name and a place for one track: a context's ("ctx N"), then its
 * connections' ("rdma connection <id> (ctx N)") right below it. */
static void trace_put_track(FILE *f, uint32_t tid, int pid)
{
	uint32_t ctx = tid >> SOFTDOCA_TRACE_CONN_SHIFT;
	uint32_t conn = tid & 0xffffu;

	fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu32 ",\"args\":{\"name\":\"", pid,
		tid);
	if (tid == 0)
		fputs("process", f);
	else if (ctx == 0)
		fprintf(f, "ctx %" PRIu32, tid);
	else
		fprintf(f, "rdma connection %" PRIu32 " (ctx %" PRIu32 ")", conn, ctx);
	fputs("\"}},\n", f);
	fprintf(f,
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%" PRIu32
		",\"args\":{\"sort_index\":%" PRIu64 "}},\n",
		pid, tid, ctx == 0 ? (uint64_t)tid << 17 : ((uint64_t)ctx << 17) + 1 + conn);
}

static int trace_cmp_tid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Name every track an event in the ring uses (a scratch copy of their
 * tids, sorted; without memory for it the tracks go unnamed). */
static void trace_put_track_names(FILE *f, uint64_t first, uint64_t head, int pid)
{
	size_t n = (size_t)(head - first);
	uint32_t *tids = n > 0 ? malloc(n * sizeof(*tids)) : NULL;

	if (tids == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		tids[i] = trace.ring[(first + i) % trace.slots].tid;
	qsort(tids, n, sizeof(*tids), trace_cmp_tid);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || tids[i] != tids[i - 1])
			trace_put_track(f, tids[i], pid);
	free(tids);
}

/* Rewrite the whole file through the descriptor opened at start: the
 * path is never looked up again, so what it names later does not matter. */
static doca_error_t trace_write(void)
{
	uint64_t head = trace.head;
	uint64_t first = head > trace.slots ? head - trace.slots : 0;
	int pid = (int)getpid();
	FILE *f = NULL;
	int fd = -1;

	if (ftruncate(trace.fd, 0) == 0 && lseek(trace.fd, 0, SEEK_SET) == 0)
		fd = fcntl(trace.fd, F_DUPFD_CLOEXEC, 0);
	if (fd >= 0)
		f = fdopen(fd, "w");
	if (f == NULL) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV ": cannot write %s: %s", trace.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return DOCA_ERROR_IO_FAILED;
	}
	fputs("{\"traceEvents\":[\n", f);
	trace_put_process_name(f, pid);
	trace_put_track_names(f, first, head, pid);
	for (uint64_t n = first; n < head; n++) {
		trace_put_event(f, &trace.ring[n % trace.slots], pid);
		fputs(",\n", f);
	}
	fprintf(f,
		"{\"name\":\"softdoca_trace\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"events_recorded\":%" PRIu64
		",\"ring_slots\":%" PRIu64 ",\"dropped_events\":%" PRIu64 ",\"clock\":\"CLOCK_MONOTONIC\"}}\n",
		pid, head, trace.slots, first);
	fprintf(f, "],\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_events\":%" PRIu64 "}}\n", first);
	if (fclose(f) != 0) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV ": writing %s failed: %s", trace.path, strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	return DOCA_SUCCESS;
}

/* ---- opening the file -------------------------------------------------------- */

/*
 * SOFTDOCA_TRACE may name a place other users can write to (a shared /tmp),
 * and the process may run as root: a link planted there must not make us
 * truncate someone's file. So the path is walked one directory at a time
 * from descriptors (O_PATH), never following a symbolic link another user
 * could have planted, and the file itself is opened without following any
 * link. Every check is made on the descriptor that is then used, so nothing
 * can be swapped in between (no check-then-open by name).
 */

/* Symbolic links followed on the way, as the kernel's own limit. */
#define TRACE_MAX_LINKS 40
#define TRACE_WHY_SIZE 256

/* Where the walk is: the directory reached, and what is left of the path
 * (links met on the way are spliced in front of what is left, into the
 * other buffer). */
struct trace_walk {
	int dirfd;
	char *rest;	  /* points into buf[cur] */
	unsigned int cur;
	char buf[2][8192];
	unsigned int links;
	char why[TRACE_WHY_SIZE];
};

static int trace_refuse(struct trace_walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int trace_refuse(struct trace_walk *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->why, sizeof(w->why), fmt, ap);
	va_end(ap);
	return -1;
}

static void trace_walk_cd(struct trace_walk *w, int fd)
{
	if (w->dirfd >= 0)
		close(w->dirfd);
	w->dirfd = fd;
}

/*
 * May we follow a link owned by link_uid in the directory we are in? As
 * the kernel's fs.protected_symlinks does for sticky world-writable
 * directories, but for any directory others may write to (group or world):
 * only a link of ours, root's or the directory owner's is followed; one a
 * stranger planted is refused, whatever the host's sysctl says.
 */
static int trace_link_trusted(struct trace_walk *w, const char *name, uid_t link_uid)
{
	struct stat dir;

	if (fstat(w->dirfd, &dir) != 0)
		return trace_refuse(w, "cannot stat the directory holding \"%s\": %s", name, strerror(errno));
	if ((dir.st_mode & (S_IWGRP | S_IWOTH)) == 0 || link_uid == geteuid() || link_uid == 0 ||
	    link_uid == dir.st_uid)
		return 0;
	return trace_refuse(w,
			    "\"%s\" is a symbolic link of uid %u in a directory others may write to (a link "
			    "another user planted is never followed)",
			    name, (unsigned int)link_uid);
}

/* Splice the target of link fd (named name) in front of what is left. */
static int trace_walk_link(struct trace_walk *w, int fd, const char *name)
{
	char *target = w->buf[!w->cur];
	size_t room = sizeof(w->buf[0]);
	size_t left = strlen(w->rest);
	ssize_t n;

	if (++w->links > TRACE_MAX_LINKS)
		return trace_refuse(w, "more than %d symbolic links on the way", TRACE_MAX_LINKS);
	n = readlinkat(fd, "", target, room);
	if (n < 0)
		return trace_refuse(w, "cannot read the symbolic link \"%s\": %s", name, strerror(errno));
	if ((size_t)n + 1 + left + 1 > room)
		return trace_refuse(w, "the path is too long once symbolic link \"%s\" is followed", name);
	target[n] = '/';
	memcpy(target + n + 1, w->rest, left + 1);
	w->rest = target;
	w->cur = !w->cur;
	if (target[0] == '/')
		trace_walk_cd(w, open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
	return w->dirfd >= 0 ? 0 : trace_refuse(w, "cannot open /: %s", strerror(errno));
}

/* One directory component: step into it, or through a link we trust. */
static int trace_walk_step(struct trace_walk *w, const char *name)
{
	struct stat st;
	int fd;
	int rc;

	if (strcmp(name, ".") == 0)
		return 0;
	fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return trace_refuse(w, "cannot open directory \"%s\": %s", name, strerror(errno));
	if (fstat(fd, &st) != 0) {
		rc = trace_refuse(w, "cannot stat \"%s\": %s", name, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		trace_walk_cd(w, fd);
		return 0;
	} else if (!S_ISLNK(st.st_mode)) {
		rc = trace_refuse(w, "\"%s\" is not a directory", name);
	} else {
		rc = trace_link_trusted(w, name, st.st_uid);
		if (rc == 0)
			rc = trace_walk_link(w, fd, name);
	}
	close(fd);
	return rc;
}

/* Walk every directory of path; on success w->dirfd is the last one and
 * the returned pointer the file's name in it. */
static const char *trace_walk_dirs(struct trace_walk *w, const char *path)
{
	char name[256];
	char *slash;

	w->cur = 0;
	w->rest = w->buf[0];
	snprintf(w->rest, sizeof(w->buf[0]), "%s", path);
	w->dirfd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0) {
		trace_refuse(w, "cannot open the start directory: %s", strerror(errno));
		return NULL;
	}
	for (;;) {
		while (*w->rest == '/')
			w->rest++;
		slash = strchr(w->rest, '/');
		if (slash == NULL)
			break;
		*slash = '\0';
		/* Copied: w->rest may move to the other buffer in this step. */
		if (snprintf(name, sizeof(name), "%s", w->rest) >= (int)sizeof(name)) {
			trace_refuse(w, "a directory name on the way is longer than 255 bytes");
			return NULL;
		}
		w->rest = slash + 1;
		if (trace_walk_step(w, name) != 0)
			return NULL;
	}
	if (*w->rest == '\0') {
		trace_refuse(w, "it names a directory, not a file");
		return NULL;
	}
	return w->rest;
}

/* A file we may truncate and write: a regular file of ours, with no other
 * name (a hard link a stranger made to one of our files would point us at
 * it; fs.protected_hardlinks=0 allows that). */
static int trace_file_ok(struct trace_walk *w, const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return trace_refuse(w, "it is a symbolic link (a trace file is never opened through one)");
	if (S_ISDIR(st->st_mode))
		return trace_refuse(w, "it is a directory");
	if (!S_ISREG(st->st_mode))
		return trace_refuse(w, "it exists and is not a regular file (a FIFO, socket or device)");
	if (st->st_uid != geteuid())
		return trace_refuse(w, "it exists and belongs to uid %u, not to this process's uid %u",
				    (unsigned int)st->st_uid, (unsigned int)geteuid());
	if (st->st_nlink != 1)
		return trace_refuse(w, "it has %lu hard links; a trace file must have one name only",
				    (unsigned long)st->st_nlink);
	return 0;
}

/* The file named leaf in w->dirfd, created 0600 or an acceptable one
 * emptied; -1 with w->why set otherwise. */
static int trace_open_leaf(struct trace_walk *w, const char *leaf)
{
	struct stat before, after;
	int fd;

	/* O_EXCL: a file we create is ours, 0600, and nobody else's name. */
	fd = openat(w->dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 || errno != EEXIST)
		return fd >= 0 ? fd : trace_refuse(w, "cannot create it: %s", strerror(errno));
	/* It exists. Look before opening: opening a FIFO or a device does
	 * things of its own (block, rewind a tape). */
	if (fstatat(w->dirfd, leaf, &before, AT_SYMLINK_NOFOLLOW) != 0)
		return trace_refuse(w, "cannot stat it: %s", strerror(errno));
	if (trace_file_ok(w, &before) != 0)
		return -1;
	fd = openat(w->dirfd, leaf, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return trace_refuse(w, "cannot open it: %s", strerror(errno));
	/* What was opened must be what was looked at (not swapped since). */
	if (fstat(fd, &after) != 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino ||
	    trace_file_ok(w, &after) != 0) {
		if (w->why[0] == '\0')
			trace_refuse(w, "it was replaced while being opened");
		close(fd);
		return -1;
	}
	if (ftruncate(fd, 0) != 0 || fchmod(fd, 0600) != 0) {
		trace_refuse(w, "cannot empty it or make it 0600: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The trace file, opened as the file comment of this section says; -1
 * with why (TRACE_WHY_SIZE bytes) saying why not. */
static int trace_open_file(const char *path, char *why)
{
	struct trace_walk *w = calloc(1, sizeof(*w));
	const char *leaf;
	int fd = -1;

	if (w == NULL) {
		snprintf(why, TRACE_WHY_SIZE, "no memory");
		return -1;
	}
	w->dirfd = -1;
	leaf = trace_walk_dirs(w, path);
	if (leaf != NULL)
		fd = trace_open_leaf(w, leaf);
	if (fd < 0)
		snprintf(why, TRACE_WHY_SIZE, "%s", w->why);
	trace_walk_cd(w, -1);
	free(w);
	return fd;
}

/* ---- start-up ------------------------------------------------------------ */

/*
 * When tracing starts: at the first context a process creates (every event
 * belongs to a context, its tasks or its connections, so nothing could be
 * recorded before) or at an explicit softdoca_trace_flush(), and only then
 * is SOFTDOCA_TRACE read and its file opened. Not in a library
 * constructor: every program linked with libdoca_common would open and
 * truncate the file at load, including one that makes no DOCA call and
 * merely inherited the variable. softdoca_trace_on is written once, here,
 * under pthread_once; every reader acts on a context created after that
 * (ctx init calls softdoca_trace_new_track first), so reads are ordered
 * after the write.
 */
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

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

static void trace_start(void)
{
	const char *path = getenv(SOFTDOCA_TRACE_ENV);
	const char *events = getenv(SOFTDOCA_TRACE_EVENTS_ENV);
	uint64_t slots = SOFTDOCA_TRACE_EVENTS_DEFAULT;
	char why[TRACE_WHY_SIZE];

	if (path == NULL)
		return;
	if (path[0] == '\0' || strlen(path) >= sizeof(trace.path)) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV " is empty or too long; tracing stays off");
		return;
	}
	if (events != NULL && !softdoca_parse_uint(events, 1, SOFTDOCA_TRACE_EVENTS_MAX, &slots)) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_EVENTS_ENV "=\"%s\" is not a whole number in [1, %u]; tracing stays off",
			    events, SOFTDOCA_TRACE_EVENTS_MAX);
		return;
	}
	trace.ring = calloc(slots, sizeof(*trace.ring));
	if (trace.ring == NULL) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV ": no memory for %" PRIu64 " events; tracing stays off", slots);
		return;
	}
	if (atexit(trace_at_exit) != 0 || pthread_atfork(NULL, NULL, trace_fork_child) != 0) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV ": cannot register the exit writer; tracing stays off");
		goto free_ring;
	}
	trace.fd = trace_open_file(path, why);
	if (trace.fd < 0) {
		SDK_LOG_ERR(SOFTDOCA_TRACE_ENV "=%s cannot be written (%s); tracing stays off", path, why);
		goto free_ring;
	}
	snprintf(trace.path, sizeof(trace.path), "%s", path);
	trace.slots = slots;
	softdoca_trace_on = true;
	return;
free_ring:
	free(trace.ring);
	trace.ring = NULL;
}

/* Is tracing on? Starts it the first time (see above). */
static bool trace_started(void)
{
	pthread_once(&trace_once, trace_start);
	return softdoca_trace_on;
}

SOFTDOCA_EXPORT uint32_t softdoca_trace_new_track(void)
{
	if (!trace_started())
		return 0;
	return atomic_fetch_add_explicit(&trace.next_track, 1, memory_order_relaxed) % SOFTDOCA_TRACE_CTX_TRACKS + 1;
}

SOFTDOCA_EXPORT doca_error_t softdoca_trace_flush(void)
{
	doca_error_t status;

	if (!trace_started()) {
		SDK_LOG_ERR("softdoca_trace_flush: tracing is off (" SOFTDOCA_TRACE_ENV " unset or refused)");
		return DOCA_ERROR_BAD_STATE;
	}
	pthread_mutex_lock(&trace.lock);
	status = trace_write();
	pthread_mutex_unlock(&trace.lock);
	return status;
}
