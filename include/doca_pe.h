/*
 * softdoca — DOCA progress engine (PE) and tasks.
 *
 * A PE drives the contexts connected to it: doca_pe_progress runs, on the
 * calling thread, every completion callback that is due. Callbacks never run
 * anywhere else. A PE is used from one thread at a time.
 */
#ifndef DOCA_PE_H_
#define DOCA_PE_H_

#include <stdint.h>
#include <stdlib.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_devinfo;

struct doca_pe;
struct doca_task;
struct doca_task_batch;

enum doca_task_submit_flag {
	DOCA_TASK_SUBMIT_FLAG_NONE = 0,
	DOCA_TASK_SUBMIT_FLAG_FLUSH = (1U << 0),
	DOCA_TASK_SUBMIT_FLAG_OPTIMIZE_REPORTS = (1U << 1),
};

enum doca_pe_event_mode {
	DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE = 0,
	DOCA_PE_EVENT_MODE_PROGRESS_ALL = 1,
};

enum doca_task_batch_max_tasks_number {
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16 = 0,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_32 = 1,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_64 = 2,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128 = 3,
};

enum doca_event_batch_events_number {
	DOCA_EVENT_BATCH_EVENTS_NUMBER_1 = 0,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_2 = 1,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_4 = 2,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_8 = 3,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_16 = 4,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_32 = 5,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_64 = 6,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_128 = 7,
};

typedef void (*doca_task_completion_cb_t)(struct doca_task *task, union doca_data task_user_data,
					  union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_pe_create(struct doca_pe **pe);

/* DOCA_ERROR_IN_USE while contexts are connected (destroy them first). */
DOCA_STABLE
doca_error_t doca_pe_destroy(struct doca_pe *pe);

/* Run what is due: completion callbacks, state changes. Returns 1 if
 * anything happened, 0 otherwise. */
DOCA_STABLE
uint8_t doca_pe_progress(struct doca_pe *pe);

/* Connect an IDLE context to this PE; a context has exactly one PE. */
DOCA_STABLE
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);

/* A file descriptor that becomes readable when there is work to progress
 * after doca_pe_request_notification. Fixed for the PE's life. */
DOCA_STABLE
doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle);

/* Arm the notification handle. */
DOCA_STABLE
doca_error_t doca_pe_request_notification(struct doca_pe *pe);

/* Acknowledge a wake-up: drains the handle. The handle argument is unused
 * on Linux. */
DOCA_STABLE
doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle);

/* Hand the PE a notification handle of the program's own (DOCA declares it
 * for Windows, where the handle is a completion port and completion_key
 * what it is told). On Linux the PE has its own handle
 * (doca_pe_get_notification_handle), so softdoca returns
 * DOCA_ERROR_NOT_SUPPORTED with a log line saying so. */
DOCA_STABLE
doca_error_t doca_pe_set_notification_handle(struct doca_pe *pe, doca_notification_handle_t handle,
					     union doca_data completion_key);

/* softdoca progresses every context in both modes; the mode is recorded. */
DOCA_EXPERIMENTAL
doca_error_t doca_pe_set_event_mode(struct doca_pe *pe, enum doca_pe_event_mode event_mode);

DOCA_STABLE
doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks);

/* Submit an allocated task. On failure the task stays the caller's. */
DOCA_STABLE
doca_error_t doca_task_submit(struct doca_task *task);

/* Submit with doca_task_submit_flag bits (softdoca submits at once either way). */
DOCA_EXPERIMENTAL
doca_error_t doca_task_submit_ex(struct doca_task *task, uint32_t flags);

/* Validate the task's parameters (DOCA_ERROR_INVALID_VALUE and a log line
 * naming the problem), then submit it. */
DOCA_STABLE
doca_error_t doca_task_try_submit(struct doca_task *task);

/* Return a task that is not in flight to its context's pool. */
DOCA_STABLE
void doca_task_free(struct doca_task *task);

/* Result of the task's last run. */
DOCA_STABLE
doca_error_t doca_task_get_status(const struct doca_task *task);

DOCA_STABLE
void doca_task_set_user_data(struct doca_task *task, union doca_data user_data);

DOCA_STABLE
union doca_data doca_task_get_user_data(const struct doca_task *task);

DOCA_STABLE
struct doca_ctx *doca_task_get_ctx(const struct doca_task *task);

/* Task batches: no softdoca context creates them, so these answer
 * DOCA_ERROR_NOT_SUPPORTED (or nothing) for any batch pointer. */
DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_submit(struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_try_submit(struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL
void doca_task_batch_free(struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL
void doca_task_batch_set_user_data(struct doca_task_batch *task_batch, union doca_data user_data);
DOCA_EXPERIMENTAL
uint16_t doca_task_batch_get_tasks_num(struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_get_status(const struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL
union doca_data doca_task_batch_get_user_data(const struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL
struct doca_ctx *doca_task_batch_get_ctx(const struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL
union doca_data doca_task_batch_get_ctx_user_data(const struct doca_task_batch *task_batch);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PE_H_ */
