/*
 * softdoca — the timeline (SOFTDOCA_TRACE=<file>): a bounded ring of
 * task, context and connection events, written as Chrome / Perfetto
 * trace-event JSON at exit or on softdoca_trace_flush().
 *
 * When tracing is off every hook costs one predictable branch on
 * softdoca_trace_on (a plain bool set once, when the first context is
 * created: trace.c says why then); the recording functions are out of line
 * and only then take the ring's lock. The file is opened once, without
 * following a link another user could have planted, and must be a regular
 * file of the caller's (trace.c, "opening the file").
 *
 * Tracks (Chrome "tid"): each context has one (ctx->trace_tid) for its
 * state changes and the tasks that belong to no connection (receives);
 * each connection has one (softdoca_trace_conn_track) for its events and
 * its tasks. Timestamps are CLOCK_MONOTONIC, shared by every process on
 * a host, so the traces of two peers merge (softdoca_trace).
 */
#ifndef SOFTDOCA_CORE_TRACE_H_
#define SOFTDOCA_CORE_TRACE_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>
#include <softdoca_trace.h>

#include "common.h"
#include "core_engine.h" /* softdoca_trace_on, connection tracks, the engine's two events */

#define SOFTDOCA_TRACE_ENV "SOFTDOCA_TRACE"
#define SOFTDOCA_TRACE_EVENTS_ENV "SOFTDOCA_TRACE_EVENTS"
#define SOFTDOCA_TRACE_EVENTS_DEFAULT (1U << 20)
#define SOFTDOCA_TRACE_EVENTS_MAX (1U << 26)

struct doca_task;
struct doca_ctx;

/* Monotonic nanoseconds, the timeline's clock. */
SOFTDOCA_EXPORT uint64_t softdoca_trace_now(void);
/* A track (tid) for a new context, in [1, SOFTDOCA_TRACE_CTX_TRACKS]
 * (wrapping); 0 when tracing is off. The first call starts tracing (reads
 * SOFTDOCA_TRACE, opens the file): every context init calls it first. */
#define SOFTDOCA_TRACE_CTX_TRACKS 32767u
SOFTDOCA_EXPORT uint32_t softdoca_trace_new_track(void);

/* A task left its pool (on the track the allocator gave it). */
SOFTDOCA_EXPORT void softdoca_trace_task_allocated(struct doca_task *task);
SOFTDOCA_EXPORT void softdoca_trace_task_submitted(struct doca_task *task);
SOFTDOCA_EXPORT void softdoca_trace_task_submit_failed(struct doca_task *task, doca_error_t status);
SOFTDOCA_EXPORT void softdoca_trace_task_done(struct doca_task *task, doca_error_t status);
SOFTDOCA_EXPORT void softdoca_trace_task_completed(struct doca_task *task);
SOFTDOCA_EXPORT void softdoca_trace_task_freed(struct doca_task *task);
SOFTDOCA_EXPORT void softdoca_trace_ctx_state(struct doca_ctx *ctx, const char *prev, const char *next);
/* A connection event ("established", "failed", ...: a static string) of
 * connection conn_id of a context, on the connection's track. */
SOFTDOCA_EXPORT void softdoca_trace_conn(struct doca_ctx *ctx, uint32_t conn_id, const char *what);

/* softdoca_trace_flush() (the ring is kept) is public: softdoca_trace.h. */

/* For tests: how many events were recorded and how many overwritten. */
SOFTDOCA_EXPORT void softdoca_trace_counts(uint64_t *recorded, uint64_t *dropped);

#endif
