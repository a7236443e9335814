/*
 * softdoca — DOCA Comch consumer (3.3): the receiving end of a fast-path
 * FIFO over an established doca_comch_connection. A consumer posts
 * buffers of a local mmap; producers on the other side fill them.
 *
 * softdoca does not implement the fast path yet: creation returns
 * DOCA_ERROR_NOT_SUPPORTED and doca_comch_consumer_cap_is_supported says so.
 *
 * Written for softdoca; names, types and values follow DOCA 3.3.
 */
#ifndef DOCA_COMCH_CONSUMER_H_
#define DOCA_COMCH_CONSUMER_H_

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
struct doca_mmap;
struct doca_dpa_thread;
struct doca_ctx;
struct doca_task;
struct doca_comch_connection;
struct doca_comch_consumer;
/* Where DPA consumers report completions. */
struct doca_comch_consumer_completion;

typedef uint64_t doca_dpa_dev_comch_consumer_completion_t;
typedef uint64_t doca_dpa_dev_comch_consumer_t;

/* A consumer on an established connection, receiving into buf_mmap. */
DOCA_STABLE
doca_error_t doca_comch_consumer_create(struct doca_comch_connection *comch_connection,
					struct doca_mmap *buf_mmap,
					struct doca_comch_consumer **consumer);

DOCA_STABLE
doca_error_t doca_comch_consumer_destroy(struct doca_comch_consumer *consumer);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_is_supported(const struct doca_devinfo *devinfo);

/* The consumer's id, unique on its connection (what a producer sends to). */
DOCA_STABLE
doca_error_t doca_comch_consumer_get_id(const struct doca_comch_consumer *consumer, uint32_t *id);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_buf_list_len);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_consumers(const struct doca_devinfo *devinfo, uint32_t *max_consumers);

DOCA_STABLE
doca_error_t doca_comch_consumer_cap_get_max_imm_data_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_imm_data_len);

DOCA_STABLE
doca_error_t doca_comch_consumer_get_imm_data_len(const struct doca_comch_consumer *consumer, uint32_t *imm_data_len);

DOCA_STABLE
doca_error_t doca_comch_consumer_set_imm_data_len(struct doca_comch_consumer *consumer, uint32_t imm_data_len);

DOCA_STABLE
struct doca_ctx *doca_comch_consumer_as_ctx(struct doca_comch_consumer *consumer);

/* ---- DPA data path ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_create(struct doca_comch_consumer_completion **consumer_comp);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_set_dpa_thread(struct doca_comch_consumer_completion *consumer_comp,
							   struct doca_dpa_thread *dpa_thread);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_destroy(struct doca_comch_consumer_completion *consumer_comp);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_start(struct doca_comch_consumer_completion *consumer_comp);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_stop(struct doca_comch_consumer_completion *consumer_comp);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_get_dpa_handle(
	struct doca_comch_consumer_completion *consumer_comp,
	doca_dpa_dev_comch_consumer_completion_t *consumer_comp_handle);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_set_max_num_consumers(struct doca_comch_consumer_completion *consumer_comp,
								  uint32_t max_num_consumers);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_get_max_num_consumers(const struct doca_comch_consumer_completion *consumer_comp,
								  uint32_t *max_num_consumers);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_set_max_num_recv(struct doca_comch_consumer_completion *consumer_comp,
							     uint32_t max_num_recv);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_get_max_num_recv(const struct doca_comch_consumer_completion *consumer_comp,
							     uint32_t *max_num_recv);

/* The most immediate data a DPA consumer reporting to this completion receives. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_set_imm_data_len(struct doca_comch_consumer_completion *consumer_comp,
							     uint32_t imm_data_len);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_completion_get_imm_data_len(const struct doca_comch_consumer_completion *consumer_comp,
							     uint32_t *imm_data_len);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_set_dev_max_num_recv(struct doca_comch_consumer *consumer, uint32_t dev_num_recv);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_set_completion(struct doca_comch_consumer *consumer,
						struct doca_comch_consumer_completion *consumer_comp,
						uint32_t user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_comch_consumer_get_dpa_handle(struct doca_comch_consumer *consumer,
						doca_dpa_dev_comch_consumer_t *dpa_consumer);

/* ---- Post-receive task ---- */

struct doca_comch_consumer_task_post_recv;

typedef void (*doca_comch_consumer_task_post_recv_completion_cb_t)(struct doca_comch_consumer_task_post_recv *task,
								   union doca_data task_user_data,
								   union doca_data ctx_user_data);

DOCA_STABLE
doca_error_t doca_comch_consumer_task_post_recv_set_conf(
	struct doca_comch_consumer *consumer,
	doca_comch_consumer_task_post_recv_completion_cb_t task_completion_cb,
	doca_comch_consumer_task_post_recv_completion_cb_t task_error_cb,
	uint32_t num_post_recv_tasks);

/* Offer buf (inside the consumer's mmap) to the remote producers. */
DOCA_STABLE
doca_error_t doca_comch_consumer_task_post_recv_alloc_init(struct doca_comch_consumer *consumer,
							   struct doca_buf *buf,
							   struct doca_comch_consumer_task_post_recv **task);

DOCA_STABLE
struct doca_buf *doca_comch_consumer_task_post_recv_get_buf(const struct doca_comch_consumer_task_post_recv *task);

DOCA_STABLE
void doca_comch_consumer_task_post_recv_set_buf(struct doca_comch_consumer_task_post_recv *task, struct doca_buf *buf);

/* Which producer filled the buffer (after completion; 0 before). */
DOCA_STABLE
uint32_t doca_comch_consumer_task_post_recv_get_producer_id(const struct doca_comch_consumer_task_post_recv *task);

DOCA_STABLE
const uint8_t *doca_comch_consumer_task_post_recv_get_imm_data(const struct doca_comch_consumer_task_post_recv *task);

DOCA_STABLE
uint32_t doca_comch_consumer_task_post_recv_get_imm_data_len(const struct doca_comch_consumer_task_post_recv *task);

DOCA_STABLE
struct doca_task *doca_comch_consumer_task_post_recv_as_task(struct doca_comch_consumer_task_post_recv *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMCH_CONSUMER_H_ */
