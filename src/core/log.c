/*
 * softdoca — DOCA logging.
 *
 * Every message becomes one line:
 *
 *   [HH:MM:SS.uuuuuu][pid][tid][LEVEL][source][file:line][function] message
 *
 * for example
 *
 *   [14:03:22.123456][4242][4243][ERROR][RDMA::COMMON][common.c:88][open_dev] no device
 *
 * local wall-clock time with microseconds, process id, kernel thread id,
 * level name (CRIT ERROR WARN INFO DEBUG TRACE), the registered source name
 * ("unknown" for an id nobody registered), the base name of the file, the
 * line and the function. Syslog lines start at "[LEVEL]": syslog records
 * time and pid itself. A line longer than LOG_LINE_MAX - 1 bytes is cut and
 * ends in "..."; every line ends in exactly one '\n'.
 *
 * Sources are program sources (doca_log_register_source) or SDK sources
 * (softdoca_log_register_sdk_source, used by the library itself). Program
 * messages go only to program backends, SDK messages only to SDK backends.
 * A backend prints a message when upper <= level <= lower; DISABLE (10) as a
 * message level prints nowhere.
 *
 * Until the program creates an SDK backend, an implicit one writes SDK
 * messages to stderr, so a library error or warning is never lost: it
 * prints WARNING and more severe, or everything within the global SDK limit
 * once that limit was chosen (DOCA_LOG_LEVEL, --sdk-log-level,
 * doca_log_level_set_global_sdk_limit).
 *
 * Threads: one recursive mutex guards the registry, the backend list and
 * the output; the "would anything print?" checks are atomic loads only.
 * Backends are never freed (they live until exit), so the list only grows.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

#include "common.h"
#include "log_internal.h"

SDK_LOG_REGISTER(SOFTDOCA::LOG)

/* Report a bad argument under the public function's name, not the name of
 * the helper that noticed it. */
#define LOG_CALLER_ERR(caller, ...) \
	((void)doca_log(DOCA_LOG_LEVEL_ERROR, sdk_log_source, __FILE__, __LINE__, (caller), __VA_ARGS__))

#define LOG_LINE_MAX 2048
#define LOG_MAX_SOURCES 1024
/* Backends of each class (program, SDK) a process may create. */
#define LOG_MAX_BACKENDS 128
#define LOG_TRUNC_MARK "..."
#define LOG_ENV_LEVEL "DOCA_LOG_LEVEL"
/* DOCA's default global SDK limit (doca_log.h: "Default value of the level
 * limit is DOCA_LOG_LEVEL_INFO"): SDK backends a program creates start there. */
#define LOG_SDK_DEFAULT DOCA_LOG_LEVEL_INFO
/* What the implicit stderr backend prints when nobody chose an SDK level:
 * WARNING, the level NVIDIA's samples give the stderr SDK backend they
 * create (doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING)
 * in their mains). The implicit backend stands in for that backend, and the
 * warnings docs/troubleshooting.md explains (a PE nobody progresses, FULL,
 * a connection left unanswered, a malformed setting) must reach a program
 * that made none; INFO lines stay quiet until a level is chosen. */
#define LOG_IMPLICIT_DEFAULT DOCA_LOG_LEVEL_WARNING

enum log_source_kind {
	LOG_SOURCE_FREE = 0,
	LOG_SOURCE_PROGRAM,
	LOG_SOURCE_SDK,
};

struct log_source {
	_Atomic int kind;	/* enum log_source_kind; read without the lock */
	_Atomic uint32_t level; /* the logger's own level: more verbose messages are dropped */
	char *name;		/* owned; read and written under log_lock */
};

enum log_backend_type {
	LOG_BACKEND_STANDARD,
	LOG_BACKEND_FILE,
	LOG_BACKEND_FD,
	LOG_BACKEND_BUF,
	LOG_BACKEND_SYSLOG,
};

struct doca_log_backend {
	struct doca_log_backend *next;
	enum log_backend_type type;
	bool sdk;
	uint32_t lower; /* most verbose level printed */
	uint32_t upper; /* most severe level printed */
	bool lower_strict;
	bool upper_strict;
	FILE *file;			/* FILE backends */
	int fd;				/* FD backends */
	char *buf;			/* BUF backends: the program's buffer ... */
	size_t capacity;		/* ... its size ... */
	log_flush_callback handler;	/* ... and who gets each line */
	char *ident;			/* SYSLOG backends: openlog keeps this pointer */
};

/* One formatted message. body is where the syslog part starts. */
struct log_line {
	char text[LOG_LINE_MAX];
	size_t len;
	size_t body;
	bool truncated;
};

/* Recursive: a buffer backend's callback may call back into the log API. */
static pthread_mutex_t log_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_once_t log_init_once = PTHREAD_ONCE_INIT;

/* Id 0 is never handed out: DOCA_LOG_REGISTER's log_source starts at 0, so
 * a failed registration logs as "unknown" rather than as someone else. */
static struct log_source log_sources[LOG_MAX_SOURCES];

static struct doca_log_backend *backend_head; /* creation order */
static struct doca_log_backend *backend_tail;
static uint32_t num_backends[2]; /* [0] program, [1] SDK; under log_lock */
static bool standard_created;

/* Stands in for SDK backends until the program creates one. */
static struct doca_log_backend implicit_sdk = {
	.type = LOG_BACKEND_FILE,
	.sdk = true,
	.lower = LOG_IMPLICIT_DEFAULT,
	.upper = DOCA_LOG_LEVEL_CRIT,
};
static bool implicit_active = true;

static _Atomic uint32_t global_lower = DOCA_LOG_LEVEL_INFO;
static _Atomic uint32_t global_upper = DOCA_LOG_LEVEL_CRIT;
static _Atomic uint32_t sdk_limit = LOG_SDK_DEFAULT;
static bool sdk_limit_chosen; /* set by DOCA_LOG_LEVEL or the API */

/* Most verbose lower limit over each class of backend: a message more
 * verbose than this prints nowhere and is dropped before any locking. */
static _Atomic uint32_t program_verbosity;
static _Atomic uint32_t sdk_verbosity = LOG_IMPLICIT_DEFAULT;

/* A bad DOCA_LOG_LEVEL found during init, reported once init is over (the
 * init routine itself must not log: logging waits for init). */
static char env_bad_value[64];
static atomic_bool env_report_pending;

/* Set while this thread writes to backends: a message logged from inside a
 * buffer callback would recurse forever, so it is dropped. */
static _Thread_local bool log_in_output;

/* ---- levels ---------------------------------------------------------- */

static bool level_valid(uint32_t level)
{
	return level >= DOCA_LOG_LEVEL_DISABLE && level <= DOCA_LOG_LEVEL_TRACE;
}

static doca_error_t level_check(uint32_t level, const char *caller)
{
	if (level_valid(level))
		return DOCA_SUCCESS;
	LOG_CALLER_ERR(caller, "%u is not a log level (use %d..%d, DOCA_LOG_LEVEL_DISABLE..TRACE)",
		       level, DOCA_LOG_LEVEL_DISABLE, DOCA_LOG_LEVEL_TRACE);
	return DOCA_ERROR_INVALID_VALUE;
}

static const char *level_name(uint32_t level, char *tmp, size_t tmp_size)
{
	switch (level) {
	case DOCA_LOG_LEVEL_CRIT:
		return "CRIT";
	case DOCA_LOG_LEVEL_ERROR:
		return "ERROR";
	case DOCA_LOG_LEVEL_WARNING:
		return "WARN";
	case DOCA_LOG_LEVEL_INFO:
		return "INFO";
	case DOCA_LOG_LEVEL_DEBUG:
		return "DEBUG";
	case DOCA_LOG_LEVEL_TRACE:
		return "TRACE";
	default:
		/* In range but between two named levels. */
		snprintf(tmp, tmp_size, "L%u", level);
		return tmp;
	}
}

static const struct {
	const char *name;
	uint32_t level;
} level_names[] = {
	{"disable", DOCA_LOG_LEVEL_DISABLE}, {"crit", DOCA_LOG_LEVEL_CRIT},
	{"critical", DOCA_LOG_LEVEL_CRIT},   {"error", DOCA_LOG_LEVEL_ERROR},
	{"err", DOCA_LOG_LEVEL_ERROR},	     {"warning", DOCA_LOG_LEVEL_WARNING},
	{"warn", DOCA_LOG_LEVEL_WARNING},    {"info", DOCA_LOG_LEVEL_INFO},
	{"debug", DOCA_LOG_LEVEL_DEBUG},     {"dbg", DOCA_LOG_LEVEL_DEBUG},
	{"trace", DOCA_LOG_LEVEL_TRACE},     {"trc", DOCA_LOG_LEVEL_TRACE},
};

/* A level from text: a number in 10..70 or a name, any case. Quiet: the
 * caller says what was wrong. */
static bool level_parse(const char *text, uint32_t *level_out)
{
	char *end;
	unsigned long value;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(level_names); i++) {
		if (strcasecmp(text, level_names[i].name) == 0) {
			*level_out = level_names[i].level;
			return true;
		}
	}
	errno = 0;
	value = strtoul(text, &end, 10);
	/* Range-check before narrowing: 2^32 + 50 must not pass as 50. */
	if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || value > DOCA_LOG_LEVEL_TRACE ||
	    !level_valid((uint32_t)value))
		return false;
	*level_out = (uint32_t)value;
	return true;
}

/* ---- backends' limits (callers hold log_lock) ------------------------- */

static bool backend_accepts(const struct doca_log_backend *b, uint32_t level)
{
	return level > DOCA_LOG_LEVEL_DISABLE && b->upper <= level && level <= b->lower;
}

static void verbosity_update_locked(void)
{
	uint32_t program = 0;
	uint32_t sdk = 0;
	struct doca_log_backend *b;

	for (b = backend_head; b != NULL; b = b->next) {
		uint32_t *max = b->sdk ? &sdk : &program;

		if (b->lower > *max)
			*max = b->lower;
	}
	if (implicit_active) {
		implicit_sdk.lower = sdk_limit_chosen ? atomic_load(&sdk_limit) : LOG_IMPLICIT_DEFAULT;
		if (implicit_sdk.lower > sdk)
			sdk = implicit_sdk.lower;
	}
	atomic_store(&program_verbosity, program);
	atomic_store(&sdk_verbosity, sdk);
}

/* The global SDK limit: every SDK backend not pinned follows it. */
static void sdk_limit_apply(uint32_t level, bool chosen)
{
	struct doca_log_backend *b;

	pthread_mutex_lock(&log_lock);
	atomic_store(&sdk_limit, level);
	sdk_limit_chosen = chosen;
	for (b = backend_head; b != NULL; b = b->next) {
		if (b->sdk && !b->lower_strict)
			b->lower = level;
	}
	verbosity_update_locked();
	pthread_mutex_unlock(&log_lock);
}

/* ---- initialisation ---------------------------------------------------- */

static void log_init(void)
{
	const char *text = getenv(LOG_ENV_LEVEL);
	uint32_t level;

	implicit_sdk.file = stderr;
	if (text != NULL) {
		if (level_parse(text, &level)) {
			sdk_limit_apply(level, true);
			return;
		}
		snprintf(env_bad_value, sizeof(env_bad_value), "%s", text);
		atomic_store(&env_report_pending, true);
	}
	sdk_limit_apply(LOG_SDK_DEFAULT, false);
}

static void log_ensure_init(void)
{
	pthread_once(&log_init_once, log_init);
	if (unlikely(atomic_load_explicit(&env_report_pending, memory_order_relaxed)) &&
	    atomic_exchange(&env_report_pending, false))
		SDK_LOG_WARN("%s=\"%s\" is not a log level (use 10..70 or a name such as \"debug\"); "
			     "keeping the SDK level at %u",
			     LOG_ENV_LEVEL, env_bad_value, atomic_load(&sdk_limit));
}

/* ---- sources ----------------------------------------------------------- */

static doca_error_t source_register(const char *name, enum log_source_kind kind, int *source_out,
				    const char *caller)
{
	char *copy;
	int id;

	if (name == NULL || name[0] == '\0') {
		LOG_CALLER_ERR(caller, "source name is %s", name == NULL ? "NULL" : "empty");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (source_out == NULL) {
		LOG_CALLER_ERR(caller, "id output pointer is NULL (source \"%s\")", name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* DOCA keeps at most DOCA_LOGGER_NAME_SIZE - 1 characters of a name. */
	copy = strndup(name, DOCA_LOGGER_NAME_SIZE - 1);
	if (copy == NULL) {
		LOG_CALLER_ERR(caller, "no memory for source name \"%s\"", name);
		return DOCA_ERROR_NO_MEMORY;
	}

	pthread_mutex_lock(&log_lock);
	for (id = 1; id < LOG_MAX_SOURCES; id++) {
		if (atomic_load(&log_sources[id].kind) == LOG_SOURCE_FREE)
			break;
	}
	if (id < LOG_MAX_SOURCES) {
		log_sources[id].name = copy;
		atomic_store(&log_sources[id].level, (uint32_t)DOCA_LOG_LEVEL_TRACE);
		atomic_store(&log_sources[id].kind, kind);
	}
	pthread_mutex_unlock(&log_lock);

	if (id == LOG_MAX_SOURCES) {
		free(copy);
		LOG_CALLER_ERR(caller, "all %d log sources are taken; \"%s\" not registered",
			       LOG_MAX_SOURCES - 1, name);
		return DOCA_ERROR_FULL;
	}
	*source_out = id;
	return DOCA_SUCCESS;
}

static enum log_source_kind source_kind(int source)
{
	if (source <= 0 || source >= LOG_MAX_SOURCES)
		return LOG_SOURCE_FREE;
	return atomic_load_explicit(&log_sources[source].kind, memory_order_relaxed);
}

/* Caller holds log_lock. */
static const char *source_name_locked(int source)
{
	if (source_kind(source) == LOG_SOURCE_FREE)
		return "unknown";
	return log_sources[source].name;
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_register_source(const char *source_name, int *source)
{
	log_ensure_init();
	return source_register(source_name, LOG_SOURCE_PROGRAM, source, __func__);
}

SOFTDOCA_EXPORT doca_error_t softdoca_log_register_sdk_source(const char *name, int *source)
{
	log_ensure_init();
	return source_register(name, LOG_SOURCE_SDK, source, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_unregister_source(int source)
{
	char *name = NULL;
	bool found;

	log_ensure_init();
	pthread_mutex_lock(&log_lock);
	/* The library's own source stays: its errors must keep their name. */
	found = source_kind(source) != LOG_SOURCE_FREE && source != sdk_log_source;
	if (found) {
		atomic_store(&log_sources[source].kind, LOG_SOURCE_FREE);
		name = log_sources[source].name;
		log_sources[source].name = NULL;
	}
	pthread_mutex_unlock(&log_lock);

	if (!found) {
		SDK_LOG_ERR("%d is not a registered log source", source);
		return DOCA_ERROR_INVALID_VALUE;
	}
	free(name);
	return DOCA_SUCCESS;
}

/* ---- formatting -------------------------------------------------------- */

/* Room for text, leaving two bytes for the final '\n' and NUL. */
#define LOG_TEXT_ROOM (LOG_LINE_MAX - 2)

static void line_vappend(struct log_line *l, const char *format, va_list ap)
{
	size_t room = LOG_TEXT_ROOM - l->len;
	int n;

	if (room == 0) {
		l->truncated = true;
		return;
	}
	n = vsnprintf(l->text + l->len, room + 1, format, ap);
	if (n < 0) {
		l->text[l->len] = '\0'; /* bad format: keep what we have */
		return;
	}
	if ((size_t)n > room) {
		l->truncated = true;
		n = (int)room;
	}
	l->len += (size_t)n;
}

static void line_append(struct log_line *l, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void line_append(struct log_line *l, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	line_vappend(l, format, ap);
	va_end(ap);
}

static const char *path_base(const char *path)
{
	const char *slash;

	if (path == NULL)
		return "?";
	slash = strrchr(path, '/');
	return slash == NULL ? path : slash + 1;
}

/* The library's messages quote text it was given: names and values from a
 * -j file, a peer, the environment. A control character there (a newline,
 * a terminal escape) could forge a log line or rewrite the terminal, so
 * each becomes '?' (tabs stay). Program messages are printed as written,
 * as DOCA does. */
static void line_defang(struct log_line *l, size_t from)
{
	for (size_t i = from; i < l->len; i++) {
		unsigned char c = (unsigned char)l->text[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			l->text[i] = '?';
	}
}

/* Caller holds log_lock (for the source name). */
static void line_format(struct log_line *l, uint32_t level, int source, const char *fname, int line,
			const char *func, const char *format, va_list ap)
{
	struct timespec now;
	struct tm tm;
	char tmp[16];
	size_t message;

	l->len = 0;
	l->truncated = false;
	clock_gettime(CLOCK_REALTIME, &now);
	localtime_r(&now.tv_sec, &tm);
	line_append(l, "[%02d:%02d:%02d.%06ld][%d][%ld]", tm.tm_hour, tm.tm_min, tm.tm_sec,
		    now.tv_nsec / 1000, (int)getpid(), (long)syscall(SYS_gettid));
	l->body = l->len;
	line_append(l, "[%s][%s][%s:%d][%s] ", level_name(level, tmp, sizeof(tmp)),
		    source_name_locked(source), path_base(fname), line, func == NULL ? "?" : func);
	message = l->len;
	line_vappend(l, format, ap);

	/* The line gets exactly one newline, whatever the message ended in. */
	while (l->len > l->body && l->text[l->len - 1] == '\n')
		l->len--;
	if (source_kind(source) == LOG_SOURCE_SDK)
		line_defang(l, message);
	if (l->truncated && l->len >= sizeof(LOG_TRUNC_MARK) - 1)
		memcpy(l->text + l->len - (sizeof(LOG_TRUNC_MARK) - 1), LOG_TRUNC_MARK,
		       sizeof(LOG_TRUNC_MARK) - 1);
	l->text[l->len++] = '\n';
	l->text[l->len] = '\0';
}

/* ---- output ------------------------------------------------------------ */

static void fd_write_all(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* nowhere to report a failing log output */
		data += n;
		len -= (size_t)n;
	}
}

static void file_write(FILE *f, const struct log_line *l)
{
	fwrite(l->text, 1, l->len, f);
	fflush(f); /* lines show up at once and in order with other output */
}

static int syslog_priority(uint32_t level)
{
	if (level <= DOCA_LOG_LEVEL_CRIT)
		return LOG_CRIT;
	if (level <= DOCA_LOG_LEVEL_ERROR)
		return LOG_ERR;
	if (level <= DOCA_LOG_LEVEL_WARNING)
		return LOG_WARNING;
	if (level <= DOCA_LOG_LEVEL_INFO)
		return LOG_INFO;
	return LOG_DEBUG;
}

static void backend_write(struct doca_log_backend *b, uint32_t level, const struct log_line *l)
{
	size_t n;

	switch (b->type) {
	case LOG_BACKEND_STANDARD:
		file_write(level >= DOCA_LOG_LEVEL_INFO ? stdout : stderr, l);
		break;
	case LOG_BACKEND_FILE:
		file_write(b->file, l);
		break;
	case LOG_BACKEND_FD:
		fd_write_all(b->fd, l->text, l->len);
		break;
	case LOG_BACKEND_BUF:
		n = l->len < b->capacity - 1 ? l->len : b->capacity - 1;
		memcpy(b->buf, l->text, n);
		b->buf[n] = '\0';
		b->handler(b->buf);
		break;
	case LOG_BACKEND_SYSLOG:
		/* Without the newline: syslog ends records itself. */
		syslog(syslog_priority(level), "%.*s", (int)(l->len - 1 - l->body), l->text + l->body);
		break;
	}
}

static void log_dispatch_locked(bool sdk, uint32_t level, const struct log_line *l)
{
	struct doca_log_backend *b;

	log_in_output = true;
	for (b = backend_head; b != NULL; b = b->next) {
		if (b->sdk == sdk && backend_accepts(b, level))
			backend_write(b, level, l);
	}
	if (sdk && implicit_active && backend_accepts(&implicit_sdk, level))
		backend_write(&implicit_sdk, level, l);
	log_in_output = false;
}

DOCA_EXPERIMENTAL
doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func,
		      const char *format, ...)
{
	/* Static, not on the stack: callers may run on small stacks; the lock
	 * serialises its use. */
	static struct log_line l;
	bool sdk;
	va_list ap;

	log_ensure_init();
	if (!level_valid(level)) {
		SDK_LOG_ERR("%u is not a log level (use %d..%d); message from %s:%d dropped", level,
			    DOCA_LOG_LEVEL_DISABLE, DOCA_LOG_LEVEL_TRACE, path_base(fname), line);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (format == NULL) {
		SDK_LOG_ERR("NULL format string from %s:%d", path_base(fname), line);
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdk = source_kind(source) == LOG_SOURCE_SDK;
	if (source_kind(source) != LOG_SOURCE_FREE &&
	    level > atomic_load_explicit(&log_sources[source].level, memory_order_relaxed))
		return DOCA_SUCCESS;
	if (level == DOCA_LOG_LEVEL_DISABLE ||
	    level > atomic_load_explicit(sdk ? &sdk_verbosity : &program_verbosity, memory_order_relaxed))
		return DOCA_SUCCESS;

	pthread_mutex_lock(&log_lock);
	if (!log_in_output) {
		va_start(ap, format);
		line_format(&l, level, source, fname, line, func, format, ap);
		va_end(ap);
		log_dispatch_locked(sdk, level, &l);
	}
	pthread_mutex_unlock(&log_lock);
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT int softdoca_log_sdk_enabled(uint32_t level)
{
	log_ensure_init();
	return level > DOCA_LOG_LEVEL_DISABLE &&
	       level <= atomic_load_explicit(&sdk_verbosity, memory_order_relaxed);
}

/* ---- rate-limited call sites ----------------------------------------- */

/* One lock for every site: taken only by lines that would print, which
 * are rare unless a peer floods, and then most are held back here. */
static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;

SOFTDOCA_EXPORT bool softdoca_log_rate_allow(struct softdoca_log_rate *rate, uint64_t now_ns, uint64_t *held_out)
{
	bool allow = false;

	pthread_mutex_lock(&rate_lock);
	if (rate->printed == 0 || now_ns - rate->window_start_ns >= SDK_LOG_RATE_WINDOW_NS ||
	    now_ns < rate->window_start_ns) {
		rate->window_start_ns = now_ns;
		rate->printed = 0;
	}
	if (rate->printed < SDK_LOG_RATE_BURST) {
		rate->printed++;
		*held_out = rate->held;
		rate->held = 0;
		allow = true;
	} else {
		rate->held++;
	}
	pthread_mutex_unlock(&rate_lock);
	return allow;
}

SOFTDOCA_EXPORT bool softdoca_log_rate_allow_now(struct softdoca_log_rate *rate, uint64_t *held_out)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return softdoca_log_rate_allow(rate, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, held_out);
}

/* ---- creating backends ------------------------------------------------- */

static void backend_free(struct doca_log_backend *b)
{
	free(b->ident);
	free(b);
}

/* Fill in the limits, link b in, and hand it out. Takes ownership of b:
 * frees it when its class already has LOG_MAX_BACKENDS backends. */
static doca_error_t backend_add(struct doca_log_backend *b, struct doca_log_backend **backend_out,
				const char *caller)
{
	pthread_mutex_lock(&log_lock);
	if (num_backends[b->sdk] >= LOG_MAX_BACKENDS) {
		pthread_mutex_unlock(&log_lock);
		LOG_CALLER_ERR(caller, "all %d %s log backends are taken", LOG_MAX_BACKENDS, b->sdk ? "SDK" : "program");
		backend_free(b);
		return DOCA_ERROR_NO_MEMORY;
	}
	num_backends[b->sdk]++;
	if (b->type == LOG_BACKEND_SYSLOG)
		openlog(b->ident, LOG_PID, LOG_USER);
	b->next = NULL;
	b->lower = b->sdk ? atomic_load(&sdk_limit) : atomic_load(&global_lower);
	b->upper = b->sdk ? (uint32_t)DOCA_LOG_LEVEL_CRIT : atomic_load(&global_upper);
	if (backend_tail == NULL)
		backend_head = b;
	else
		backend_tail->next = b;
	backend_tail = b;
	if (b->sdk)
		implicit_active = false; /* the program now says where SDK lines go */
	verbosity_update_locked();
	pthread_mutex_unlock(&log_lock);
	if (backend_out != NULL)
		*backend_out = b;
	return DOCA_SUCCESS;
}

static struct doca_log_backend *backend_alloc(enum log_backend_type type, bool sdk, const char *caller)
{
	struct doca_log_backend *b = calloc(1, sizeof(*b));

	if (b == NULL) {
		LOG_CALLER_ERR(caller, "no memory for a log backend");
		return NULL;
	}
	b->type = type;
	b->sdk = sdk;
	b->fd = -1;
	return b;
}

static doca_error_t out_check(struct doca_log_backend **backend, const char *caller)
{
	if (backend != NULL)
		return DOCA_SUCCESS;
	LOG_CALLER_ERR(caller, "backend output pointer is NULL");
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t create_with_file(FILE *fptr, bool sdk, struct doca_log_backend **backend,
				     const char *caller)
{
	struct doca_log_backend *b;

	if (out_check(backend, caller) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (fptr == NULL) {
		LOG_CALLER_ERR(caller, "FILE pointer is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	b = backend_alloc(LOG_BACKEND_FILE, sdk, caller);
	if (b == NULL)
		return DOCA_ERROR_NO_MEMORY;
	b->file = fptr;
	return backend_add(b, backend, caller);
}

static doca_error_t create_with_fd(int fd, bool sdk, struct doca_log_backend **backend, const char *caller)
{
	struct doca_log_backend *b;

	if (out_check(backend, caller) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
		LOG_CALLER_ERR(caller, "%d is not an open file descriptor", fd);
		return DOCA_ERROR_INVALID_VALUE;
	}
	b = backend_alloc(LOG_BACKEND_FD, sdk, caller);
	if (b == NULL)
		return DOCA_ERROR_NO_MEMORY;
	b->fd = fd;
	return backend_add(b, backend, caller);
}

static doca_error_t create_with_buf(char *buf, size_t capacity, log_flush_callback handler, bool sdk,
				    struct doca_log_backend **backend, const char *caller)
{
	struct doca_log_backend *b;

	if (out_check(backend, caller) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf == NULL || capacity == 0 || handler == NULL) {
		LOG_CALLER_ERR(caller, "needs a buffer (%p), a capacity above 0 (%zu) and a flush callback (%s)",
			       (void *)buf, capacity, handler == NULL ? "NULL" : "set");
		return DOCA_ERROR_INVALID_VALUE;
	}
	b = backend_alloc(LOG_BACKEND_BUF, sdk, caller);
	if (b == NULL)
		return DOCA_ERROR_NO_MEMORY;
	b->buf = buf;
	b->capacity = capacity;
	b->handler = handler;
	return backend_add(b, backend, caller);
}

/* syslog has one identity per process: a second syslog backend renames the
 * first one's lines too. */
static doca_error_t create_with_syslog(const char *name, bool sdk, struct doca_log_backend **backend,
				       const char *caller)
{
	struct doca_log_backend *b;

	if (out_check(backend, caller) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (name == NULL) {
		LOG_CALLER_ERR(caller, "syslog name is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	b = backend_alloc(LOG_BACKEND_SYSLOG, sdk, caller);
	if (b == NULL)
		return DOCA_ERROR_NO_MEMORY;
	b->ident = strdup(name);
	if (b->ident == NULL) {
		LOG_CALLER_ERR(caller, "no memory for syslog name \"%s\"", name);
		free(b);
		return DOCA_ERROR_NO_MEMORY;
	}
	return backend_add(b, backend, caller);
}

/* Creating it twice would print every line twice, so later calls do
 * nothing. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_standard(void)
{
	struct doca_log_backend *b;
	bool exists;

	log_ensure_init();
	pthread_mutex_lock(&log_lock);
	exists = standard_created;
	standard_created = true;
	pthread_mutex_unlock(&log_lock);
	if (exists)
		return DOCA_SUCCESS;

	b = backend_alloc(LOG_BACKEND_STANDARD, false, __func__);
	if (b == NULL) {
		pthread_mutex_lock(&log_lock);
		standard_created = false;
		pthread_mutex_unlock(&log_lock);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (backend_add(b, NULL, __func__) != DOCA_SUCCESS) {
		pthread_mutex_lock(&log_lock);
		standard_created = false;
		pthread_mutex_unlock(&log_lock);
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend)
{
	log_ensure_init();
	return create_with_file(fptr, false, backend, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend)
{
	log_ensure_init();
	return create_with_fd(fd, false, backend, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buf(char *buf, size_t capacity, log_flush_callback handler,
					      struct doca_log_backend **backend)
{
	log_ensure_init();
	return create_with_buf(buf, capacity, handler, false, backend, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_syslog(const char *name, struct doca_log_backend **backend)
{
	log_ensure_init();
	return create_with_syslog(name, false, backend, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend)
{
	log_ensure_init();
	return create_with_file(fptr, true, backend, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend)
{
	log_ensure_init();
	return create_with_fd(fd, true, backend, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buf_sdk(char *buf, size_t capacity, log_flush_callback handler,
						  struct doca_log_backend **backend)
{
	log_ensure_init();
	return create_with_buf(buf, capacity, handler, true, backend, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name, struct doca_log_backend **backend)
{
	log_ensure_init();
	return create_with_syslog(name, true, backend, __func__);
}

/* ---- per-backend limits ------------------------------------------------ */

enum backend_field {
	BACKEND_LOWER,
	BACKEND_UPPER,
	BACKEND_LOWER_STRICT,
	BACKEND_UPPER_STRICT,
};

/* The one place that changes a backend's limits. */
static doca_error_t backend_set(struct doca_log_backend *backend, enum backend_field field, uint32_t level,
				const char *caller)
{
	log_ensure_init();
	if (backend == NULL) {
		LOG_CALLER_ERR(caller, "backend is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((field == BACKEND_LOWER || field == BACKEND_UPPER) && level_check(level, caller) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&log_lock);
	switch (field) {
	case BACKEND_LOWER:
		backend->lower = level;
		break;
	case BACKEND_UPPER:
		backend->upper = level;
		break;
	case BACKEND_LOWER_STRICT:
		backend->lower_strict = true;
		break;
	case BACKEND_UPPER_STRICT:
		backend->upper_strict = true;
		break;
	}
	verbosity_update_locked();
	pthread_mutex_unlock(&log_lock);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level)
{
	if (backend != NULL && !backend->sdk) {
		SDK_LOG_ERR("not an SDK backend; use doca_log_backend_set_level_lower_limit");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return backend_set(backend, BACKEND_LOWER, level, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend, uint32_t level)
{
	return backend_set(backend, BACKEND_LOWER, level, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend, uint32_t upper_limit)
{
	return backend_set(backend, BACKEND_UPPER, upper_limit, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend)
{
	return backend_set(backend, BACKEND_LOWER_STRICT, 0, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend)
{
	return backend_set(backend, BACKEND_UPPER_STRICT, 0, __func__);
}

/* ---- global limits ----------------------------------------------------- */

/* A global program limit: every program backend whose limit is not pinned
 * follows it. */
static doca_error_t global_set(bool lower, uint32_t level, const char *caller)
{
	struct doca_log_backend *b;

	log_ensure_init();
	if (level_check(level, caller) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&log_lock);
	atomic_store(lower ? &global_lower : &global_upper, level);
	for (b = backend_head; b != NULL; b = b->next) {
		if (b->sdk)
			continue;
		if (lower && !b->lower_strict)
			b->lower = level;
		if (!lower && !b->upper_strict)
			b->upper = level;
	}
	verbosity_update_locked();
	pthread_mutex_unlock(&log_lock);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_lower_limit(uint32_t level)
{
	return global_set(true, level, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit)
{
	return global_set(false, upper_limit, __func__);
}

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_lower_limit(void)
{
	return atomic_load(&global_lower);
}

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_upper_limit(void)
{
	return atomic_load(&global_upper);
}

DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level)
{
	log_ensure_init();
	if (level_check(level, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	sdk_limit_apply(level, true);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_sdk_limit(void)
{
	log_ensure_init();
	return atomic_load(&sdk_limit);
}

SOFTDOCA_EXPORT doca_error_t softdoca_log_reload_env(void)
{
	const char *text;
	uint32_t level;

	log_ensure_init();
	text = getenv(LOG_ENV_LEVEL);
	if (text == NULL) {
		sdk_limit_apply(LOG_SDK_DEFAULT, false);
		return DOCA_SUCCESS;
	}
	if (!level_parse(text, &level)) {
		SDK_LOG_WARN("%s=\"%s\" is not a log level (use 10..70 or a name such as \"debug\"); "
			     "keeping the SDK level at %u",
			     LOG_ENV_LEVEL, text, atomic_load(&sdk_limit));
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdk_limit_apply(level, true);
	return DOCA_SUCCESS;
}

/* ---- loggers ------------------------------------------------------------
 * A logger is a registered source (program or SDK), named by its source
 * name. Names form a tree at their "::" separators: "A::B::C" is a
 * descendant of "A" and of "A::B", at depth 2 and 1 below them; a list from
 * the top (logger NULL) counts depth from the root, so depth 1 there means
 * one-part names. A logger's own level (TRACE at registration) drops its
 * messages that are more verbose before any backend sees them.
 */

static struct doca_logger *logger_of(struct log_source *src)
{
	return (struct doca_logger *)(void *)src;
}

/* The source behind a logger pointer, or NULL if it is not one of ours or
 * no longer registered. Never dereferences a pointer outside the table. */
static struct log_source *logger_source(const struct doca_logger *logger)
{
	uintptr_t p = (uintptr_t)logger;
	uintptr_t first = (uintptr_t)&log_sources[1];
	uintptr_t end = (uintptr_t)&log_sources[LOG_MAX_SOURCES];
	struct log_source *src;

	if (p < first || p >= end || (p - first) % sizeof(struct log_source) != 0)
		return NULL;
	src = (struct log_source *)(void *)p;
	return atomic_load(&src->kind) == LOG_SOURCE_FREE ? NULL : src;
}

static unsigned int name_depth(const char *name)
{
	unsigned int n = 1;

	for (const char *s = strstr(name, "::"); s != NULL; s = strstr(s + 2, "::"))
		n++;
	return n;
}

/* True when name lies under root in the tree (root NULL: the top). */
static bool name_under(const char *name, const char *root)
{
	size_t len;

	if (root == NULL)
		return true;
	len = strlen(root);
	return strncmp(name, root, len) == 0 && strncmp(name + len, "::", 2) == 0;
}

/* Caller holds log_lock. */
static bool logger_selected(const struct log_source *src, const struct log_source *root, uint8_t depth)
{
	const char *root_name = root == NULL ? NULL : root->name;
	unsigned int root_depth = root == NULL ? 0 : name_depth(root->name);

	if (atomic_load(&src->kind) == LOG_SOURCE_FREE || !name_under(src->name, root_name))
		return false;
	return depth == 0 || name_depth(src->name) - root_depth <= depth;
}

DOCA_EXPERIMENTAL
uint32_t doca_log_get_max_num_backends(void)
{
	return LOG_MAX_BACKENDS;
}

DOCA_EXPERIMENTAL
uint32_t doca_log_get_max_num_backends_sdk(void)
{
	return LOG_MAX_BACKENDS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_logger_create_list(const struct doca_logger *logger, uint8_t depth,
				     struct doca_logger ***logger_list, uint32_t *nb_loggers)
{
	struct log_source *root = NULL;
	struct doca_logger **list;
	uint32_t n = 0, i;
	int id;

	log_ensure_init();
	if (logger_list == NULL || nb_loggers == NULL) {
		SDK_LOG_ERR("doca_logger_create_list: %s output pointer is NULL", logger_list == NULL ? "list" : "count");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&log_lock);
	if (logger != NULL && (root = logger_source(logger)) == NULL) {
		pthread_mutex_unlock(&log_lock);
		SDK_LOG_ERR("doca_logger_create_list: %p is not a registered logger", (const void *)logger);
		return DOCA_ERROR_NOT_FOUND;
	}
	for (id = 1; id < LOG_MAX_SOURCES; id++)
		n += logger_selected(&log_sources[id], root, depth);
	/* NULL-terminated: doca_logger_find_by_name is given no length. */
	list = calloc(n + 1, sizeof(*list));
	if (list == NULL) {
		pthread_mutex_unlock(&log_lock);
		SDK_LOG_ERR("doca_logger_create_list: no memory for a list of %u loggers", n);
		return DOCA_ERROR_NO_MEMORY;
	}
	for (id = 1, i = 0; id < LOG_MAX_SOURCES && i < n; id++) {
		if (logger_selected(&log_sources[id], root, depth))
			list[i++] = logger_of(&log_sources[id]);
	}
	pthread_mutex_unlock(&log_lock);
	*logger_list = list;
	*nb_loggers = n;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_logger_destroy_list(struct doca_logger **logger_list)
{
	if (logger_list == NULL) {
		SDK_LOG_ERR("doca_logger_destroy_list: logger_list is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	free(logger_list);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_logger_set_level(struct doca_logger *logger, int level, uint8_t propagate)
{
	struct log_source *root = NULL;
	int id;

	log_ensure_init();
	if (level < 0 || level_check((uint32_t)level, __func__) != DOCA_SUCCESS) {
		if (level < 0)
			SDK_LOG_ERR("doca_logger_set_level: %d is not a log level", level);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (logger == NULL && !propagate) {
		SDK_LOG_ERR("doca_logger_set_level: a NULL logger (every logger) needs propagate set");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&log_lock);
	if (logger != NULL && (root = logger_source(logger)) == NULL) {
		pthread_mutex_unlock(&log_lock);
		SDK_LOG_ERR("doca_logger_set_level: %p is not a registered logger", (void *)logger);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (root != NULL)
		atomic_store(&root->level, (uint32_t)level);
	for (id = 1; propagate && id < LOG_MAX_SOURCES; id++) {
		if (logger_selected(&log_sources[id], root, 0))
			atomic_store(&log_sources[id].level, (uint32_t)level);
	}
	pthread_mutex_unlock(&log_lock);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_logger_get_level(const struct doca_logger *logger, int *level)
{
	struct log_source *src;

	if (logger == NULL || level == NULL) {
		SDK_LOG_ERR("doca_logger_get_level: %s is NULL", logger == NULL ? "logger" : "level output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	src = logger_source(logger);
	if (src == NULL) {
		SDK_LOG_ERR("doca_logger_get_level: %p is not a registered logger", (const void *)logger);
		return DOCA_ERROR_NOT_FOUND;
	}
	*level = (int)atomic_load(&src->level);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_logger_get_name(const struct doca_logger *logger, char name[DOCA_LOGGER_NAME_SIZE])
{
	struct log_source *src;

	if (logger == NULL || name == NULL) {
		SDK_LOG_ERR("doca_logger_get_name: %s is NULL", logger == NULL ? "logger" : "name buffer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&log_lock);
	src = logger_source(logger);
	if (src != NULL)
		snprintf(name, DOCA_LOGGER_NAME_SIZE, "%s", src->name);
	pthread_mutex_unlock(&log_lock);
	if (src == NULL) {
		SDK_LOG_ERR("doca_logger_get_name: %p is not a registered logger", (const void *)logger);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
struct doca_logger *doca_logger_find_by_name(struct doca_logger **logger_list, const char *name)
{
	struct doca_logger *found = NULL;

	if (logger_list == NULL || name == NULL) {
		SDK_LOG_ERR("doca_logger_find_by_name: %s is NULL", logger_list == NULL ? "logger_list" : "name");
		return NULL;
	}
	pthread_mutex_lock(&log_lock);
	for (size_t i = 0; logger_list[i] != NULL && found == NULL; i++) {
		struct log_source *src = logger_source(logger_list[i]);

		if (src != NULL && strcmp(src->name, name) == 0)
			found = logger_list[i];
	}
	pthread_mutex_unlock(&log_lock);
	return found;
}
