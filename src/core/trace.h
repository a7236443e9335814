/*
 * softdoca — the timeline (SOFTDOCA_TRACE=<file>): a bounded ring of
 * task, context and connection events, written as Chrome / Perfetto
 * trace-event JSON at exit or on softdoca_trace_flush().
 *
 * When tracing is off every hook costs one predictable branch on
 * softdoca_trace_on (a plain bool set once before main); the recording
 * functions are out of line and only then touch atomics.
 */
#ifndef SOFTDOCA_CORE_TRACE_H_
#define SOFTDOCA_CORE_TRACE_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

#include "common.h"

#define SOFTDOCA_TRACE_ENV "SOFTDOCA_TRACE"
#define SOFTDOCA_TRACE_EVENTS_ENV "SOFTDOCA_TRACE_EVENTS"
#define SOFTDOCA_TRACE_EVENTS_DEFAULT (1U << 20)
#define SOFTDOCA_TRACE_EVENTS_MAX (1U << 26)

/* Set once by the library constructor; never changes afterwards. */
SOFTDOCA_EXPORT extern bool softdoca_trace_on;

struct doca_task;
struct doca_ctx;

/* Monotonic nanoseconds, the timeline's clock. */
SOFTDOCA_EXPORT uint64_t softdoca_trace_now(void);
/* A track (tid) for a new context; 0 when tracing is off. */
SOFTDOCA_EXPORT uint32_t softdoca_trace_new_track(void);

SOFTDOCA_EXPORT void softdoca_trace_task_submitted(struct doca_task *task);
SOFTDOCA_EXPORT void softdoca_trace_task_submit_failed(struct doca_task *task, doca_error_t status);
SOFTDOCA_EXPORT void softdoca_trace_task_done(struct doca_task *task, doca_error_t status);
SOFTDOCA_EXPORT void softdoca_trace_task_completed(struct doca_task *task);
SOFTDOCA_EXPORT void softdoca_trace_task_freed(struct doca_task *task);
SOFTDOCA_EXPORT void softdoca_trace_ctx_state(struct doca_ctx *ctx, const char *prev, const char *next);
/* A connection event of a context ("established", "failed", ...): a static string. */
SOFTDOCA_EXPORT void softdoca_trace_conn(struct doca_ctx *ctx, const void *conn, const char *what);

/* Write the trace file now (the ring is kept): DOCA_ERROR_BAD_STATE when
 * tracing is off, DOCA_ERROR_IO_FAILED if the file cannot be written. */
SOFTDOCA_EXPORT doca_error_t softdoca_trace_flush(void);

/* For tests: how many events were recorded and how many overwritten. */
SOFTDOCA_EXPORT void softdoca_trace_counts(uint64_t *recorded, uint64_t *dropped);

#endif
