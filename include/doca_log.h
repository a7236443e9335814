/*
 * softdoca — DOCA logging.
 *
 * A program registers a log source per file with DOCA_LOG_REGISTER and logs
 * through DOCA_LOG_ERR/WARN/INFO/DBG/TRC. Messages go to backends: the
 * standard backend (stdout for INFO and more verbose, stderr for WARNING and
 * more severe), file/fd/buffer/syslog backends. A message prints on a
 * backend when upper limit <= level <= lower limit (smaller = more severe).
 * Messages from inside the library ("SDK" messages) go only to SDK backends
 * and are filtered by the SDK level.
 */
#ifndef DOCA_LOG_H_
#define DOCA_LOG_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

enum doca_log_level {
	DOCA_LOG_LEVEL_DISABLE = 10,
	DOCA_LOG_LEVEL_CRIT = 20,
	DOCA_LOG_LEVEL_ERROR = 30,
	DOCA_LOG_LEVEL_WARNING = 40,
	DOCA_LOG_LEVEL_INFO = 50,
	DOCA_LOG_LEVEL_DEBUG = 60,
	DOCA_LOG_LEVEL_TRACE = 70,
};

/* A log output. Created by the doca_log_backend_create_* calls; lives until
 * the process exits. */
struct doca_log_backend;

/* Room for a logger name with its terminating NUL; longer source names are
 * cut to DOCA_LOGGER_NAME_SIZE - 1 characters when registered. */
#define DOCA_LOGGER_NAME_SIZE 256

/* A logger: one registered log source. Loggers form a tree by their names'
 * "::" parts ("A::B" lies under "A"). Each has its own level (TRACE when
 * registered): its messages more verbose than that are dropped before any
 * backend's limits are looked at. */
struct doca_logger;

/* Called by a buffer backend with the formatted line. */
typedef void (*log_flush_callback)(char *buf);

/* Register a named log source; its id goes to *source. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_register_source(const char *source_name, int *source);

/* Release a source id. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_unregister_source(int source);

/* Log one message from a registered source. Use the DOCA_LOG_* macros. */
DOCA_EXPERIMENTAL
doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func,
		      const char *format, ...) __attribute__((format(printf, 6, 7)));

/* The standard backend: INFO and more verbose to stdout, WARNING and more
 * severe to stderr. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_standard(void);

/* A backend for the program's messages on an open stream. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend);

/* A backend for the program's messages on a file descriptor. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend);

/* A backend for the program's messages that formats into buf (of capacity
 * bytes) and hands each line to handler. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buf(char *buf, size_t capacity, log_flush_callback handler,
					      struct doca_log_backend **backend);

/* A backend for the program's messages on syslog, with the given ident. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_syslog(const char *name, struct doca_log_backend **backend);

/* SDK (library-internal) message backends, same outputs. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_buf_sdk(char *buf, size_t capacity, log_flush_callback handler,
						  struct doca_log_backend **backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name, struct doca_log_backend **backend);

/* The most verbose level an SDK backend prints. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level);

/* The most verbose level a program backend prints. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend, uint32_t level);

/* The most severe level a program backend prints. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend, uint32_t upper_limit);

/* Pin the backend's lower/upper limit: later global changes leave it alone. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend);
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend);

/* Lower limit of every program backend that is not strict (default INFO). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_lower_limit(uint32_t level);

/* Upper limit of every program backend that is not strict (default CRIT). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_lower_limit(void);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_upper_limit(void);

/* Level of every SDK backend not pinned with _strict. The start value comes
 * from the environment variable DOCA_LOG_LEVEL (10..70 or a name such as
 * "debug"), else INFO. Until the program creates an SDK backend, SDK
 * messages go to stderr: ERROR and more severe, or everything within this
 * limit once DOCA_LOG_LEVEL or this call chose it. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_sdk_limit(void);

/* How many program backends (or SDK backends) a process may create; the
 * create calls answer DOCA_ERROR_NO_MEMORY past it. The standard backend
 * counts as one program backend. */
DOCA_EXPERIMENTAL
uint32_t doca_log_get_max_num_backends(void);

DOCA_EXPERIMENTAL
uint32_t doca_log_get_max_num_backends_sdk(void);

/* A NULL-terminated array of the loggers under logger (NULL: every
 * logger), logger itself left out; depth 0 takes all of them, depth N those
 * at most N name parts deeper (from the top, names of at most N parts).
 * Free it with doca_logger_destroy_list. Errors: INVALID_VALUE (NULL
 * output), NOT_FOUND (logger is not registered), NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_logger_create_list(const struct doca_logger *logger, uint8_t depth,
				     struct doca_logger ***logger_list, uint32_t *nb_loggers);

DOCA_EXPERIMENTAL
doca_error_t doca_logger_destroy_list(struct doca_logger **logger_list);

/* Set logger's level (10..70); with propagate, every logger under it too.
 * logger NULL with propagate sets every logger. Errors: INVALID_VALUE (bad
 * level, NULL without propagate), NOT_FOUND (logger is not registered). */
DOCA_EXPERIMENTAL
doca_error_t doca_logger_set_level(struct doca_logger *logger, int level, uint8_t propagate);

/* Errors: INVALID_VALUE (NULL), NOT_FOUND (logger is not registered). */
DOCA_EXPERIMENTAL
doca_error_t doca_logger_get_level(const struct doca_logger *logger, int *level);

/* Copy the logger's name into name. Errors: INVALID_VALUE (NULL, or not a
 * registered logger). */
DOCA_EXPERIMENTAL
doca_error_t doca_logger_get_name(const struct doca_logger *logger, char name[DOCA_LOGGER_NAME_SIZE]);

/* The logger of a list from doca_logger_create_list with this name, or
 * NULL. */
DOCA_EXPERIMENTAL
struct doca_logger *doca_logger_find_by_name(struct doca_logger **logger_list, const char *name);

/* Log with a full doca_log_level value. */
#define DOCA_LOG(level, format, ...) \
	doca_log(level, log_source, __FILE__, __LINE__, __func__, format, ##__VA_ARGS__)

#define DOCA_LOG_CRIT(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_CRIT, format, ##__VA_ARGS__)
#define DOCA_LOG_ERR(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_ERROR, format, ##__VA_ARGS__)
#define DOCA_LOG_WARN(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_WARNING, format, ##__VA_ARGS__)
#define DOCA_LOG_INFO(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_INFO, format, ##__VA_ARGS__)
#define DOCA_LOG_DBG(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_DEBUG, format, ##__VA_ARGS__)

/* Trace messages compile only when the program asks for them. */
#ifdef DOCA_LOGGING_ALLOW_TRACE
#define DOCA_LOG_TRC(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_TRACE, format, ##__VA_ARGS__)
#else
#define DOCA_LOG_TRC(format, ...) \
	do { \
	} while (0)
#endif

/*
 * Register the file's log source once, at file scope. The source name is
 * only turned into text, so it may contain "::". The registration runs
 * from a static constructor before main(); the constructor has a fixed,
 * file-static name, so the macro is used once per file.
 */
#define DOCA_LOG_REGISTER(source) \
	static int log_source; \
	__attribute__((constructor(101), used)) static void doca_log_source_register_ctor(void) \
	{ \
		doca_log_register_source(#source, &log_source); \
	}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H_ */
