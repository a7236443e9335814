/*
 * softdoca — logging from inside the library.
 *
 * Library messages are "SDK" messages: they go only to SDK backends
 * (doca_log_backend_create_with_file_sdk and friends) and are filtered by
 * the SDK level (--sdk-log-level, DOCA_LOG_LEVEL), never by the program's
 * own level. Each internal .c file that logs says SDK_LOG_REGISTER(name)
 * once at file scope, then uses SDK_LOG_ERR/WARN/INFO/DBG/TRC.
 *
 * A line that a peer can trigger once per message it sends (a dropped
 * message, a refused operation, a malformed frame) uses the rate-limited
 * form, SDK_LOG_ERR_RL/WARN_RL/INFO_RL: each call site prints at most
 * SDK_LOG_RATE_BURST lines per SDK_LOG_RATE_WINDOW_NS, and the first line it
 * prints after holding some back is preceded by one line saying how many
 * were held back. A flood then costs a few lines a second, not one a message.
 */
#ifndef SOFTDOCA_CORE_LOG_INTERNAL_H_
#define SOFTDOCA_CORE_LOG_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_log.h>

#include "common.h"

/* Register an SDK log source named name; its id goes to *source. */
SOFTDOCA_EXPORT doca_error_t softdoca_log_register_sdk_source(const char *name, int *source);

/* True when a message of this level from an SDK source would be printed by
 * at least one SDK backend; cheap, for guarding data-path messages. */
SOFTDOCA_EXPORT int softdoca_log_sdk_enabled(uint32_t level);

/* Read DOCA_LOG_LEVEL again, as at start-up: a number 10..70 or a level name
 * (any case: disable, crit, error, warning/warn, info, debug, trace) sets the
 * global SDK limit; unset restores the default (INFO). A value that is not a
 * level is logged and left alone: DOCA_ERROR_INVALID_VALUE. For tests. */
SOFTDOCA_EXPORT doca_error_t softdoca_log_reload_env(void);

#define SDK_LOG_REGISTER(name) \
	static int sdk_log_source = -1; \
	__attribute__((constructor(101))) static void sdk_log_source_register(void) \
	{ \
		(void)softdoca_log_register_sdk_source(#name, &sdk_log_source); \
	}

#define SDK_LOG(level, ...) \
	((void)doca_log((level), sdk_log_source, __FILE__, __LINE__, __func__, __VA_ARGS__))

#define SDK_LOG_CRIT(...) SDK_LOG(DOCA_LOG_LEVEL_CRIT, __VA_ARGS__)
#define SDK_LOG_ERR(...) SDK_LOG(DOCA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define SDK_LOG_WARN(...) SDK_LOG(DOCA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define SDK_LOG_INFO(...) SDK_LOG(DOCA_LOG_LEVEL_INFO, __VA_ARGS__)
#define SDK_LOG_DBG(...) SDK_LOG(DOCA_LOG_LEVEL_DEBUG, __VA_ARGS__)
/* Trace is for the data path: checked cheaply before formatting. */
#define SDK_LOG_TRC(...) \
	do { \
		if (unlikely(softdoca_log_sdk_enabled(DOCA_LOG_LEVEL_TRACE))) \
			SDK_LOG(DOCA_LOG_LEVEL_TRACE, __VA_ARGS__); \
	} while (0)

/* Rate limiting: lines per call site and window. */
#define SDK_LOG_RATE_BURST 5u
#define SDK_LOG_RATE_WINDOW_NS 1000000000ull

/* One call site's state; static and zero-initialised. Guarded by a lock in
 * log.c: the service thread and the application's thread both log. */
struct softdoca_log_rate {
	uint64_t window_start_ns; /* start of the current window */
	uint32_t printed;         /* lines printed in it */
	uint64_t held;            /* messages held back since the last printed line */
};

/* May this call site print a line at now_ns (CLOCK_MONOTONIC)? If so,
 * *held_out is how many of its messages were held back before it (to be
 * reported first), and the count starts again from zero. */
SOFTDOCA_EXPORT bool softdoca_log_rate_allow(struct softdoca_log_rate *rate, uint64_t now_ns, uint64_t *held_out);

/* softdoca_log_rate_allow at the current time. */
SOFTDOCA_EXPORT bool softdoca_log_rate_allow_now(struct softdoca_log_rate *rate, uint64_t *held_out);

/* The level check comes first: a message nobody would print neither uses
 * the budget nor counts as held back. */
#define SDK_LOG_RL(level, ...) \
	do { \
		static struct softdoca_log_rate sdk_log_rate_site; \
		uint64_t sdk_log_rate_held; \
		if (softdoca_log_sdk_enabled(level) && \
		    softdoca_log_rate_allow_now(&sdk_log_rate_site, &sdk_log_rate_held)) { \
			if (sdk_log_rate_held > 0) \
				SDK_LOG((level), "%llu similar messages from here were suppressed", \
					(unsigned long long)sdk_log_rate_held); \
			SDK_LOG((level), __VA_ARGS__); \
		} \
	} while (0)

#define SDK_LOG_ERR_RL(...) SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define SDK_LOG_WARN_RL(...) SDK_LOG_RL(DOCA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define SDK_LOG_INFO_RL(...) SDK_LOG_RL(DOCA_LOG_LEVEL_INFO, __VA_ARGS__)

#endif /* SOFTDOCA_CORE_LOG_INTERNAL_H_ */
