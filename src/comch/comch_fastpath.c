/*
 * softdoca — the DOCA Comch fast path (doca_comch_producer,
 * doca_comch_consumer and their DPA variants), not implemented yet.
 *
 * Every call that would create or configure one returns
 * DOCA_ERROR_NOT_SUPPORTED with a log line, and the capability queries say
 * the devices cannot: a program that checks them first learns it before
 * it builds anything. Accessors of objects that cannot exist return
 * NULL/0.
 */
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>

#include "log_internal.h"

SDK_LOG_REGISTER(COMCH_FASTPATH)

static doca_error_t fastpath_unsupported(const char *func)
{
	SDK_LOG_ERR("%s: the comch fast path (producer/consumer) is not supported by softdoca yet", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

#define FASTPATH_STUB(decl) \
	DOCA_EXPERIMENTAL decl \
	{ \
		return fastpath_unsupported(__func__); \
	}

/* Argument names are unused in these bodies. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* ---- producer ---- */

FASTPATH_STUB(doca_error_t doca_comch_producer_create(struct doca_comch_connection *comch_connection,
						      struct doca_comch_producer **producer))
FASTPATH_STUB(doca_error_t doca_comch_producer_destroy(struct doca_comch_producer *producer))
FASTPATH_STUB(doca_error_t doca_comch_producer_cap_is_supported(const struct doca_devinfo *devinfo))
FASTPATH_STUB(doca_error_t doca_comch_producer_get_id(const struct doca_comch_producer *producer, uint32_t *id))
FASTPATH_STUB(doca_error_t doca_comch_producer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo,
								     uint32_t *max_num_tasks))
FASTPATH_STUB(doca_error_t doca_comch_producer_cap_get_max_buf_size(const struct doca_devinfo *devinfo,
								    uint32_t *max_buf_size))
FASTPATH_STUB(doca_error_t doca_comch_producer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
									uint32_t *max_buf_list_len))
FASTPATH_STUB(doca_error_t doca_comch_producer_cap_get_max_producers(const struct doca_devinfo *devinfo,
								     uint32_t *max_producers))
FASTPATH_STUB(doca_error_t doca_comch_producer_set_dev_max_num_send(struct doca_comch_producer *producer,
								    uint32_t dev_num_send))
FASTPATH_STUB(doca_error_t doca_comch_producer_dpa_completion_attach(struct doca_comch_producer *producer,
								     struct doca_dpa_completion *dpa_comp))
FASTPATH_STUB(doca_error_t doca_comch_producer_get_dpa_handle(struct doca_comch_producer *producer,
							      doca_dpa_dev_comch_producer_t *dpa_producer))
FASTPATH_STUB(doca_error_t doca_comch_producer_task_send_set_conf(
	struct doca_comch_producer *producer, doca_comch_producer_task_send_completion_cb_t task_completion_cb,
	doca_comch_producer_task_send_completion_cb_t task_error_cb, uint32_t num_send_tasks))
FASTPATH_STUB(doca_error_t doca_comch_producer_task_send_alloc_init(struct doca_comch_producer *producer,
								    const struct doca_buf *buf, uint8_t *imm_data,
								    uint32_t imm_data_len, uint32_t consumer_id,
								    struct doca_comch_producer_task_send **task))

DOCA_EXPERIMENTAL
struct doca_ctx *doca_comch_producer_as_ctx(struct doca_comch_producer *producer)
{
	return NULL;
}

DOCA_EXPERIMENTAL
const struct doca_buf *doca_comch_producer_task_send_get_buf(struct doca_comch_producer_task_send *task)
{
	return NULL;
}

DOCA_EXPERIMENTAL
void doca_comch_producer_task_send_set_buf(struct doca_comch_producer_task_send *task, const struct doca_buf *buf)
{
}

DOCA_EXPERIMENTAL
uint32_t doca_comch_producer_task_send_get_consumer_id(struct doca_comch_producer_task_send *task)
{
	return 0;
}

DOCA_EXPERIMENTAL
void doca_comch_producer_task_send_set_consumer_id(struct doca_comch_producer_task_send *task,
						   const uint32_t consumer_id)
{
}

DOCA_EXPERIMENTAL
uint8_t *doca_comch_producer_task_send_get_imm_data(struct doca_comch_producer_task_send *task)
{
	return NULL;
}

DOCA_EXPERIMENTAL
uint32_t doca_comch_producer_task_send_get_imm_data_len(struct doca_comch_producer_task_send *task)
{
	return 0;
}

DOCA_EXPERIMENTAL
void doca_comch_producer_task_send_set_imm_data(struct doca_comch_producer_task_send *task, uint8_t *imm_data,
						uint32_t imm_data_len)
{
}

DOCA_EXPERIMENTAL
struct doca_task *doca_comch_producer_task_send_as_task(struct doca_comch_producer_task_send *task)
{
	return NULL;
}

/* ---- consumer ---- */

FASTPATH_STUB(doca_error_t doca_comch_consumer_create(struct doca_comch_connection *comch_connection,
						      struct doca_mmap *buf_mmap, struct doca_comch_consumer **consumer))
FASTPATH_STUB(doca_error_t doca_comch_consumer_destroy(struct doca_comch_consumer *consumer))
FASTPATH_STUB(doca_error_t doca_comch_consumer_cap_is_supported(const struct doca_devinfo *devinfo))
FASTPATH_STUB(doca_error_t doca_comch_consumer_get_id(const struct doca_comch_consumer *consumer, uint32_t *id))
FASTPATH_STUB(doca_error_t doca_comch_consumer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo,
								     uint32_t *max_num_tasks))
FASTPATH_STUB(doca_error_t doca_comch_consumer_cap_get_max_buf_size(const struct doca_devinfo *devinfo,
								    uint32_t *max_buf_size))
FASTPATH_STUB(doca_error_t doca_comch_consumer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
									uint32_t *max_buf_list_len))
FASTPATH_STUB(doca_error_t doca_comch_consumer_cap_get_max_consumers(const struct doca_devinfo *devinfo,
								     uint32_t *max_consumers))
FASTPATH_STUB(doca_error_t doca_comch_consumer_cap_get_max_imm_data_len(const struct doca_devinfo *devinfo,
									uint32_t *max_imm_data_len))
FASTPATH_STUB(doca_error_t doca_comch_consumer_get_imm_data_len(const struct doca_comch_consumer *consumer,
								uint32_t *imm_data_len))
FASTPATH_STUB(doca_error_t doca_comch_consumer_set_imm_data_len(struct doca_comch_consumer *consumer,
								uint32_t imm_data_len))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_create(struct doca_comch_consumer_completion **consumer_comp))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_set_dpa_thread(
	struct doca_comch_consumer_completion *consumer_comp, struct doca_dpa_thread *dpa_thread))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_destroy(struct doca_comch_consumer_completion *consumer_comp))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_start(struct doca_comch_consumer_completion *consumer_comp))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_stop(struct doca_comch_consumer_completion *consumer_comp))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_get_dpa_handle(
	struct doca_comch_consumer_completion *consumer_comp,
	doca_dpa_dev_comch_consumer_completion_t *consumer_comp_handle))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_set_max_num_consumers(
	struct doca_comch_consumer_completion *consumer_comp, uint32_t max_num_consumers))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_get_max_num_consumers(
	struct doca_comch_consumer_completion *consumer_comp, uint32_t *max_num_consumers))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_set_max_num_recv(
	struct doca_comch_consumer_completion *consumer_comp, uint32_t max_num_recv))
FASTPATH_STUB(doca_error_t doca_comch_consumer_completion_get_max_num_recv(
	struct doca_comch_consumer_completion *consumer_comp, uint32_t *max_num_recv))
FASTPATH_STUB(doca_error_t doca_comch_consumer_set_dev_max_num_recv(struct doca_comch_consumer *consumer,
								    uint32_t dev_num_recv))
FASTPATH_STUB(doca_error_t doca_comch_consumer_set_completion(struct doca_comch_consumer *consumer,
							      struct doca_comch_consumer_completion *consumer_comp,
							      uint32_t user_data))
FASTPATH_STUB(doca_error_t doca_comch_consumer_get_dpa_handle(struct doca_comch_consumer *consumer,
							      doca_dpa_dev_comch_consumer_t *dpa_consumer))
FASTPATH_STUB(doca_error_t doca_comch_consumer_task_post_recv_set_conf(
	struct doca_comch_consumer *consumer, doca_comch_consumer_task_post_recv_completion_cb_t task_completion_cb,
	doca_comch_consumer_task_post_recv_completion_cb_t task_error_cb, uint32_t num_post_recv_tasks))
FASTPATH_STUB(doca_error_t doca_comch_consumer_task_post_recv_alloc_init(
	struct doca_comch_consumer *consumer, struct doca_buf *buf, struct doca_comch_consumer_task_post_recv **task))

DOCA_EXPERIMENTAL
struct doca_ctx *doca_comch_consumer_as_ctx(struct doca_comch_consumer *consumer)
{
	return NULL;
}

DOCA_EXPERIMENTAL
struct doca_buf *doca_comch_consumer_task_post_recv_get_buf(struct doca_comch_consumer_task_post_recv *task)
{
	return NULL;
}

DOCA_EXPERIMENTAL
void doca_comch_consumer_task_post_recv_set_buf(struct doca_comch_consumer_task_post_recv *task, struct doca_buf *buf)
{
}

DOCA_EXPERIMENTAL
uint32_t doca_comch_consumer_task_post_recv_get_producer_id(struct doca_comch_consumer_task_post_recv *task)
{
	return 0;
}

DOCA_EXPERIMENTAL
uint8_t *doca_comch_consumer_task_post_recv_get_imm_data(struct doca_comch_consumer_task_post_recv *task)
{
	return NULL;
}

DOCA_EXPERIMENTAL
uint32_t doca_comch_consumer_task_post_recv_get_imm_data_len(struct doca_comch_consumer_task_post_recv *task)
{
	return 0;
}

DOCA_EXPERIMENTAL
struct doca_task *doca_comch_consumer_task_post_recv_as_task(struct doca_comch_consumer_task_post_recv *task)
{
	return NULL;
}
