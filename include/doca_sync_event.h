/*
 * softdoca — DOCA Sync Event: a 64-bit value that one side updates (sets or
 * adds to) and another reads or waits on.
 *
 * Life cycle: create (value 0) -> add one publisher and one subscriber
 * location (who updates, who waits) -> start -> get / update / wait ->
 * stop -> destroy. Locations and the value's storage (set_addr,
 * set_doca_buf) are configured only while the event is not started
 * (DOCA_ERROR_BAD_STATE otherwise); get, update and wait need a started
 * event (DOCA_ERROR_BAD_STATE otherwise). A stopped event may be
 * configured and started again; it keeps its value. Destroy stops a
 * started event first.
 *
 * Two ways to run an event, chosen once:
 *  - standalone: doca_sync_event_start/stop and the synchronous calls;
 *  - as a context: doca_sync_event_as_ctx, connect it to a progress engine,
 *    configure the task types, doca_ctx_start; tasks then get, set, add to
 *    and wait on the value asynchronously. The synchronous calls work too
 *    while the context runs.
 *
 * Remote peers: an event whose publisher location is remote_net may be
 * exported (doca_sync_event_export_to_remote_net) once started; a peer turns
 * the descriptor into a doca_sync_event_remote_net handle and updates or
 * reads the value with RDMA sync-event tasks. The descriptor is a
 * capability: whoever holds it may change the value, so carry it over a
 * channel you trust. Stopping or destroying the event revokes it at once.
 *
 * Waits block until the condition on (value & mask) holds. softdoca spins
 * briefly, then sleeps until the value changes, so a long wait costs no
 * CPU. A wait in progress returns DOCA_ERROR_BAD_STATE when another thread
 * stops the event.
 *
 * Thread rules: configuration, start, stop and destroy from one thread at a
 * time. get, update and wait may run on several threads at once on a
 * started event. DPA and GPU locations and handles are not available on
 * soft devices (DOCA_ERROR_NOT_SUPPORTED). remote_pci means another
 * process of this host: the exported value lives in shared memory.
 */
#ifndef DOCA_SYNC_EVENT_H_
#define DOCA_SYNC_EVENT_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_dpa;
struct doca_gpu;
struct doca_task;

/* A sync event. Opaque. */
struct doca_sync_event;

/* A peer's handle on an exported event, the target of RDMA sync-event
 * tasks. Opaque. */
struct doca_sync_event_remote_net;

/* Tasks of an event run as a context. Opaque. */
struct doca_sync_event_task_get;
struct doca_sync_event_task_notify_set;
struct doca_sync_event_task_notify_add;
struct doca_sync_event_task_wait_eq;
struct doca_sync_event_task_wait_neq;

/* Handles of an event on a DPA or GPU (not available in softdoca). */
typedef uint64_t doca_dpa_dev_sync_event_t;
typedef uint64_t doca_dpa_dev_sync_event_remote_net_t;
typedef uint64_t doca_gpu_dev_sync_event_t;
typedef uint64_t doca_gpu_dev_sync_event_remote_net_t;

/* Completion callbacks of the tasks; one type serves success and error. */
typedef void (*doca_sync_event_task_get_completion_cb_t)(struct doca_sync_event_task_get *task,
							 union doca_data task_user_data,
							 union doca_data ctx_user_data);
typedef void (*doca_sync_event_task_notify_set_completion_cb_t)(struct doca_sync_event_task_notify_set *task,
								union doca_data task_user_data,
								union doca_data ctx_user_data);
typedef void (*doca_sync_event_task_notify_add_completion_cb_t)(struct doca_sync_event_task_notify_add *task,
								union doca_data task_user_data,
								union doca_data ctx_user_data);
typedef void (*doca_sync_event_task_wait_eq_completion_cb_t)(struct doca_sync_event_task_wait_eq *task,
							     union doca_data task_user_data,
							     union doca_data ctx_user_data);
typedef void (*doca_sync_event_task_wait_neq_completion_cb_t)(struct doca_sync_event_task_wait_neq *task,
							      union doca_data task_user_data,
							      union doca_data ctx_user_data);

/* ---- Life cycle --------------------------------------------------------- */

/* A new, unstarted event whose value is 0.
 * Errors: INVALID_VALUE (event NULL), NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create(struct doca_sync_event **event);

/* Stop the event if needed and free it; an exported descriptor is revoked.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (run as a context that is not
 * idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_destroy(struct doca_sync_event *event);

/* Start as a standalone object (never a context afterwards). Needs a
 * publisher and a subscriber location.
 * Errors: INVALID_VALUE (NULL, a location missing), BAD_STATE (already
 * started, or turned into a context). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_start(struct doca_sync_event *event);

/* Stop a started event: revoke its export, make waits in progress return
 * DOCA_ERROR_BAD_STATE, and wait until remote updates in flight are done.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (not started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_stop(struct doca_sync_event *event);

/* ---- Locations (one publisher, one subscriber; before start) ---------- */

/* The CPU behind dev updates the event. The event holds dev until it is
 * destroyed.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (started), ALREADY_EXIST (a
 * publisher location is set). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/* A remote peer updates the event through RDMA; allows the export.
 * Errors: as add_publisher_location_cpu. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_remote_net(struct doca_sync_event *event);

/* The CPU behind dev reads and waits on the event. Errors: as
 * add_publisher_location_cpu (for a subscriber location). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/* A peer process of this host (see doca_sync_event_export_to_remote_pci).
 * Errors: as add_publisher_location_cpu. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_remote_pci(struct doca_sync_event *event);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_remote_pci(struct doca_sync_event *event);

/* Not available on soft devices: DOCA_ERROR_NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu);

/* ---- Value storage (before start) ------------------------------------- */

/* Keep the value in the caller's 8 bytes at addr (8-byte aligned, valid
 * until the event is destroyed) instead of inside the event. Updates made
 * by writing *addr directly are seen by waits within about a millisecond.
 * Errors: INVALID_VALUE (NULL, misaligned), BAD_STATE (started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr);

/* Keep the value in the data section of buf: exactly 8 bytes, 8-byte
 * aligned, a single buf (no list) on a started local mmap with
 * DOCA_ACCESS_FLAG_LOCAL_READ_WRITE. The event holds a reference on buf
 * until it is destroyed.
 * Errors: INVALID_VALUE (NULL, misaligned), BAD_STATE (started),
 * NOT_PERMITTED (length, list or permissions wrong). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_set_doca_buf(struct doca_sync_event *event, struct doca_buf *buf);

/* ---- Synchronous use (started event) ---------------------------------- */

/* Read the value. Errors: INVALID_VALUE (NULL), BAD_STATE (not started). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value);

/* Set the value and wake waiters. Errors: as get. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value);

/* Atomically add value (wrapping) and wake waiters; *fetched is the value
 * before the addition. Errors: as get. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched);

/* Block until (event value & mask) > value.
 * Errors: INVALID_VALUE (NULL, or value >= mask: the condition can never
 * hold), BAD_STATE (not started, or stopped while waiting). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/* Same, calling sched_yield() between polls before it sleeps. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/* Block until (event value & mask) == value.
 * Errors: INVALID_VALUE (NULL, or value has bits outside mask: the
 * condition can never hold), BAD_STATE (as wait_gt). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_eq(struct doca_sync_event *event, uint64_t value, uint64_t mask);

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_eq_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/* Block until (event value & mask) != value.
 * Errors: INVALID_VALUE (NULL, or mask and value both 0: the condition can
 * never hold), BAD_STATE (as wait_gt). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_neq(struct doca_sync_event *event, uint64_t value, uint64_t mask);

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_neq_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/* ---- Remote peers ------------------------------------------------------- */

/* An opaque descriptor that lets a peer update the event: the event must be
 * started and have a remote_net publisher location. *data stays owned by
 * the event, valid until it is destroyed; repeated calls return the same
 * descriptor until the event is stopped.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (not started), NOT_PERMITTED (no
 * remote_net publisher location), OPERATING_SYSTEM (no randomness). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_remote_net(struct doca_sync_event *event, const uint8_t **data, size_t *sz);

/* DOCA_SUCCESS: every soft device can export (INVALID_VALUE for NULL). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_remote_net_supported(const struct doca_devinfo *devinfo);

/* A peer-side handle from the sz bytes at data, for RDMA sync-event tasks
 * on dev; the handle holds dev until destroyed. The bytes are checked
 * strictly and may come from anywhere.
 * Errors: INVALID_VALUE (NULL, malformed descriptor), UNSUPPORTED_VERSION,
 * NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
							   struct doca_sync_event_remote_net **event);

/* DOCA_SUCCESS on every soft device (INVALID_VALUE for NULL). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_create_from_export_supported(const struct doca_devinfo *devinfo);

/* Free a peer-side handle. Tasks that use it must be finished.
 * Errors: INVALID_VALUE (NULL). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_destroy(struct doca_sync_event_remote_net *event);

/* ---- PCI: another process of this host -------------------------------- */

/* Export a started event with a remote_pci location to a process of this
 * host. Its value moves into shared memory; get, update and wait (and the
 * tasks) on either side act on the same value, atomically. Waits on an
 * exported event poll every millisecond. Stop and destroy revoke.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (not started), NOT_PERMITTED (no
 * remote_pci location, or from export), NOT_SUPPORTED (value in caller
 * memory: set_addr / set_doca_buf), FULL (1024 exports live). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_remote_pci(struct doca_sync_event *event, struct doca_dev *dev,
						  const uint8_t **data, size_t *sz);
/* DOCA_SUCCESS on every soft device. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_remote_pci_supported(const struct doca_devinfo *devinfo);
/* An event acting on the exporter's value, configured already: start it
 * (or run it as a context) and use it; destroy it when done. Operations
 * fail with CONNECTION_ABORTED once the exporter exited and NOT_FOUND
 * once it revoked the export. Errors: INVALID_VALUE (NULL, malformed or
 * not a sync event PCI descriptor), UNSUPPORTED_VERSION, NOT_FOUND
 * (exporter gone, export revoked), NOT_PERMITTED (ptrace access refused). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
						struct doca_sync_event **event);
/* DOCA_SUCCESS on every soft device. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_create_from_export_supported(const struct doca_devinfo *devinfo);

/* ---- DPA and GPU: not available on soft devices ---------------------- */

/* The cap queries answer DOCA_ERROR_NOT_SUPPORTED; the others fail with it. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_dpa_handle(struct doca_sync_event *event, struct doca_dpa *dpa,
					    doca_dpa_dev_sync_event_t *dpa_dev_se_handle);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_dpa_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_gpu_handle(struct doca_sync_event *event, struct doca_gpu *gpu,
					    doca_gpu_dev_sync_event_t **gpu_dev_se);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_gpu_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_get_dpa_handle(struct doca_sync_event_remote_net *event,
						       struct doca_dpa *dpa,
						       doca_dpa_dev_sync_event_remote_net_t *dpa_remote_event);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_export_to_dpa_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_get_gpu_handle(struct doca_sync_event_remote_net *event,
						       struct doca_gpu *gpu,
						       doca_gpu_dev_sync_event_remote_net_t *gpu_remote_event);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_export_to_gpu_supported(const struct doca_devinfo *devinfo);

/* ---- Context mode --------------------------------------------------------- */

/* The event as a context (no device is attached to it). From then on it
 * starts and stops through doca_ctx_start/stop only. Repeated calls return
 * the same context. NULL (with a log line) for NULL or an event started
 * standalone. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event);

/* Each task type: its cap query (DOCA_SUCCESS on soft devices), set_conf
 * (callbacks and pool size; only while the context is idle:
 * DOCA_ERROR_NOT_PERMITTED otherwise), alloc_init (only while running;
 * DOCA_ERROR_NO_MEMORY when the pool is empty), the doca_task view and
 * field accessors. A task completes from doca_pe_progress: get, notify_set
 * and notify_add at once, wait_eq / wait_neq once (value & mask) equals /
 * differs from wait_val. A wait mask is 0 or one run of 1, 2, 4 or 8 0xff
 * bytes aligned to its size; a bad mask, a NULL result pointer or a
 * condition that can never hold completes the task with
 * DOCA_ERROR_INVALID_VALUE. Stopping the context completes pending tasks
 * with DOCA_ERROR_IO_FAILED. */

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_get_is_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_get_set_conf(struct doca_sync_event *event,
					       doca_sync_event_task_get_completion_cb_t completion_cb,
					       doca_sync_event_task_get_completion_cb_t error_cb, uint32_t num_tasks);
/* Reads the value into *ret_val_ptr. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_get_alloc_init(struct doca_sync_event *event, uint64_t *ret_val_ptr,
						 union doca_data user_data, struct doca_sync_event_task_get **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_get_as_doca_task(struct doca_sync_event_task_get *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_get_set_ret_val_ptr(struct doca_sync_event_task_get *task, uint64_t *ret_val_ptr);
DOCA_EXPERIMENTAL
uint64_t *doca_sync_event_task_get_get_ret_val_ptr(const struct doca_sync_event_task_get *task);

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_notify_set_is_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_set_set_conf(struct doca_sync_event *event,
						      doca_sync_event_task_notify_set_completion_cb_t completion_cb,
						      doca_sync_event_task_notify_set_completion_cb_t error_cb,
						      uint32_t num_tasks);
/* Sets the value to set_val. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_set_alloc_init(struct doca_sync_event *event, uint64_t set_val,
							union doca_data user_data,
							struct doca_sync_event_task_notify_set **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_notify_set_as_doca_task(struct doca_sync_event_task_notify_set *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_set_set_set_val(struct doca_sync_event_task_notify_set *task, uint64_t set_val);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_notify_set_get_set_val(const struct doca_sync_event_task_notify_set *task);

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_notify_add_is_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_add_set_conf(struct doca_sync_event *event,
						      doca_sync_event_task_notify_add_completion_cb_t completion_cb,
						      doca_sync_event_task_notify_add_completion_cb_t error_cb,
						      uint32_t num_tasks);
/* Adds inc_val atomically; the value before goes to *fetched_val_ptr. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_add_alloc_init(struct doca_sync_event *event, uint64_t inc_val,
							uint64_t *fetched_val_ptr, union doca_data user_data,
							struct doca_sync_event_task_notify_add **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_notify_add_as_doca_task(struct doca_sync_event_task_notify_add *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_add_set_inc_val(struct doca_sync_event_task_notify_add *task, uint64_t inc_val);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_notify_add_get_inc_val(const struct doca_sync_event_task_notify_add *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_add_set_fetched_val_ptr(struct doca_sync_event_task_notify_add *task,
							 uint64_t *fetched_val_ptr);
DOCA_EXPERIMENTAL
uint64_t *doca_sync_event_task_notify_add_get_fetched_val_ptr(const struct doca_sync_event_task_notify_add *task);

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_wait_eq_is_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_eq_set_conf(struct doca_sync_event *event,
						   doca_sync_event_task_wait_eq_completion_cb_t completion_cb,
						   doca_sync_event_task_wait_eq_completion_cb_t error_cb, uint32_t num_tasks);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_eq_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask,
						     union doca_data user_data,
						     struct doca_sync_event_task_wait_eq **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_wait_eq_as_doca_task(struct doca_sync_event_task_wait_eq *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_eq_set_wait_val(struct doca_sync_event_task_wait_eq *task, uint64_t wait_val);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_eq_get_wait_val(const struct doca_sync_event_task_wait_eq *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_eq_set_mask(struct doca_sync_event_task_wait_eq *task, uint64_t mask);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_eq_get_mask(const struct doca_sync_event_task_wait_eq *task);

DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_wait_neq_is_supported(const struct doca_devinfo *devinfo);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_neq_set_conf(struct doca_sync_event *event,
						    doca_sync_event_task_wait_neq_completion_cb_t completion_cb,
						    doca_sync_event_task_wait_neq_completion_cb_t error_cb,
						    uint32_t num_tasks);
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_neq_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask,
						      union doca_data user_data,
						      struct doca_sync_event_task_wait_neq **task);
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_wait_neq_as_doca_task(struct doca_sync_event_task_wait_neq *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_neq_set_wait_val(struct doca_sync_event_task_wait_neq *task, uint64_t wait_val);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_neq_get_wait_val(const struct doca_sync_event_task_wait_neq *task);
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_neq_set_mask(struct doca_sync_event_task_wait_neq *task, uint64_t mask);
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_neq_get_mask(const struct doca_sync_event_task_wait_neq *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SYNC_EVENT_H_ */
