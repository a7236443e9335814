/*
 * softdoca — DOCA Comch producer (3.3): the sending end of a fast-path
 * FIFO over an established doca_comch_connection. A producer fills
 * buffers that consumers on the other side posted.
 *
 * softdoca does not implement the fast path yet: creation returns
 * DOCA_ERROR_NOT_SUPPORTED and doca_comch_producer_cap_is_supported says so.
 *
 * Written for softdoca; names, types and values follow DOCA 3.3.
 */
#ifndef DOCA_COMCH_PRODUCER_H_
#define DOCA_COMCH_PRODUCER_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_dev;
struct doca_devinfo;
struct doca_dpa_thread;
struct doca_ctx;
struct doca_task;
struct doca_comch_connection;
struct doca_comch_producer;
struct doca_dpa_completion;

/* A producer's handle in the DPA's address space. */
typedef uint64_t doca_dpa_dev_comch_producer_t;

/* A producer on an established connection. */
DOCA_STABLE
doca_error_t doca_comch_producer_create(struct doca_comch_connection *comch_connection,
					struct doca_comch_producer **producer);

DOCA_STABLE
doca_error_t doca_comch_producer_destroy(struct doca_comch_producer *producer);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_is_supported(const struct doca_devinfo *devinfo);

/* The producer's id, unique on its connection. */
DOCA_STABLE
doca_error_t doca_comch_producer_get_id(const struct doca_comch_producer *producer, uint32_t *id);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_buf_list_len);

DOCA_STABLE
doca_error_t doca_comch_producer_cap_get_max_producers(const struct doca_devinfo *devinfo, uint32_t *max_producers);

DOCA_STABLE
struct doca_ctx *doca_comch_producer_as_ctx(struct doca_comch_producer *producer);

/* DPA data path: the most sends in flight on the device. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_set_dev_max_num_send(struct doca_comch_producer *producer, uint32_t dev_num_send);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_dpa_completion_attach(struct doca_comch_producer *producer,
						       struct doca_dpa_completion *dpa_comp);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_get_dpa_handle(struct doca_comch_producer *producer,
						doca_dpa_dev_comch_producer_t *dpa_producer);

/* ---- Send task ---- */

struct doca_comch_producer_task_send;

typedef void (*doca_comch_producer_task_send_completion_cb_t)(struct doca_comch_producer_task_send *task,
							      union doca_data task_user_data,
							      union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_comch_producer_task_send_set_conf(struct doca_comch_producer *producer,
						    doca_comch_producer_task_send_completion_cb_t task_completion_cb,
						    doca_comch_producer_task_send_completion_cb_t task_error_cb,
						    uint32_t num_send_tasks);

/* Send buf (and imm_data_len bytes of immediate data) to consumer_id. */
DOCA_STABLE
doca_error_t doca_comch_producer_task_send_alloc_init(struct doca_comch_producer *producer,
						      const struct doca_buf *buf,
						      uint8_t *imm_data,
						      uint32_t imm_data_len,
						      uint32_t consumer_id,
						      struct doca_comch_producer_task_send **task);

DOCA_STABLE
const struct doca_buf *doca_comch_producer_task_send_get_buf(const struct doca_comch_producer_task_send *task);

DOCA_STABLE
void doca_comch_producer_task_send_set_buf(struct doca_comch_producer_task_send *task, const struct doca_buf *buf);

DOCA_STABLE
uint32_t doca_comch_producer_task_send_get_consumer_id(const struct doca_comch_producer_task_send *task);

DOCA_STABLE
void doca_comch_producer_task_send_set_consumer_id(struct doca_comch_producer_task_send *task,
						   const uint32_t consumer_id);

DOCA_STABLE
uint8_t *doca_comch_producer_task_send_get_imm_data(const struct doca_comch_producer_task_send *task);

DOCA_STABLE
uint32_t doca_comch_producer_task_send_get_imm_data_len(const struct doca_comch_producer_task_send *task);

DOCA_STABLE
void doca_comch_producer_task_send_set_imm_data(struct doca_comch_producer_task_send *task,
						uint8_t *imm_data,
						uint32_t imm_data_len);

DOCA_STABLE
struct doca_task *doca_comch_producer_task_send_as_task(struct doca_comch_producer_task_send *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMCH_PRODUCER_H_ */
