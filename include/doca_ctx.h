/*
 * softdoca — DOCA context: the common lifecycle of every DOCA library
 * object that runs tasks (DMA, RDMA, ...).
 *
 * A context is created by its library (doca_dma_create, doca_rdma_create),
 * configured while IDLE, connected to a progress engine (doca_pe_connect_ctx),
 * started, used, stopped and destroyed. State changes are reported through
 * the state-changed callback: inside doca_ctx_start/doca_ctx_stop when the
 * change completes at once, otherwise from doca_pe_progress.
 */
#ifndef DOCA_CTX_H_
#define DOCA_CTX_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_gpu;
struct doca_dpa;

/* Opaque context handle. */
struct doca_ctx;

enum doca_ctx_states {
	DOCA_CTX_STATE_IDLE = 0,     /* created or stopped: configurable */
	DOCA_CTX_STATE_STARTING = 1, /* start requested, not finished */
	DOCA_CTX_STATE_RUNNING = 2,  /* tasks can be allocated and submitted */
	DOCA_CTX_STATE_STOPPING = 3, /* stop requested: in-flight tasks are being flushed */
};

typedef void (*doca_ctx_state_changed_callback_t)(const union doca_data user_data, struct doca_ctx *ctx,
						  enum doca_ctx_states prev_state,
						  enum doca_ctx_states next_state);

/*
 * Start the context. Returns DOCA_SUCCESS when it is RUNNING on return, or
 * DOCA_ERROR_IN_PROGRESS when it is STARTING and will reach RUNNING from
 * doca_pe_progress. DOCA_ERROR_BAD_STATE if not IDLE; DOCA_ERROR_NOT_CONNECTED
 * if no progress engine was connected (doca_pe_connect_ctx).
 */
DOCA_STABLE
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/*
 * Stop the context. Returns DOCA_SUCCESS when it is IDLE on return (also when
 * it already was), or DOCA_ERROR_IN_PROGRESS when in-flight tasks are being
 * flushed: they complete through their error callbacks from doca_pe_progress,
 * and the context becomes IDLE once every task has been freed.
 */
DOCA_STABLE
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

/* Tasks submitted and not yet completed. */
DOCA_STABLE
doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks);

/* User data passed to the state-changed and task completion callbacks. */
DOCA_STABLE
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data);

/* Callback for every state change. Only while IDLE. */
DOCA_STABLE
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb);

DOCA_STABLE
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state);

/* Push aggregated submissions to the device. softdoca never aggregates, so
 * there is nothing to push. */
DOCA_EXPERIMENTAL
void doca_ctx_flush_tasks(struct doca_ctx *ctx);

/* GPU and DPA datapaths do not exist on soft devices: DOCA_ERROR_NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev);

DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_dpa(struct doca_ctx *ctx, struct doca_dpa *dpa_dev);

/* Completion vectors are interrupt lines of real devices: DOCA_ERROR_NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_completion_vector(struct doca_ctx *ctx, uint32_t completion_vector);

DOCA_EXPERIMENTAL
doca_error_t doca_ctx_cap_get_num_completion_vectors(const struct doca_devinfo *devinfo,
						     uint32_t *num_completion_vectors);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
