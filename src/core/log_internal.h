/*
 * softdoca — logging from inside the library.
 *
 * Library messages are "SDK" messages: they go only to SDK backends
 * (doca_log_backend_create_with_file_sdk and friends) and are filtered by
 * the SDK level (--sdk-log-level, DOCA_LOG_LEVEL), never by the program's
 * own level. Each internal .c file that logs says SDK_LOG_REGISTER(name)
 * once at file scope, then uses SDK_LOG_ERR/WARN/INFO/DBG/TRC.
 */
#ifndef SOFTDOCA_CORE_LOG_INTERNAL_H_
#define SOFTDOCA_CORE_LOG_INTERNAL_H_

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

#endif /* SOFTDOCA_CORE_LOG_INTERNAL_H_ */
