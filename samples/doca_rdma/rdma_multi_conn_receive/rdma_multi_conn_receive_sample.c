/*
 * doca_rdma_multi_conn_receive: the receiving half of the multi-connection
 * pair. One RDMA context holds -nc connections; it posts one receive task
 * per connection and prints each message with the connection it came on.
 *
 * With descriptor files each connection has its own pair of files,
 * <path>-0000, <path>-0001, ...; with RDMA CM this side is the server (-nc
 * clients connect) or one client of a multi-connection server.
 *
 * This file is the sample: rdma_multi_conn_receive() runs it with the settings
 * in struct rdma_config (rdma_common.h), returns what went wrong and never
 * exits the process, so a program in another language can call it.
 * rdma_multi_conn_receive_main.c only reads the command line.
 */
#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_MULTI_CONN_RECEIVE);

struct receiver {
	uint32_t received;
};

static doca_error_t configure(struct sample *s)
{
	s->num_receive_tasks = s->num_conns;
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample *s)
{
	struct doca_buf *dst = NULL;
	doca_error_t result;
	uint32_t i;

	for (i = 0; i < s->num_conns; i++) {
		result = sample_local_buf(s, (size_t)i * SAMPLE_MSG_LEN, SAMPLE_MSG_LEN, 0, &dst);
		if (result == DOCA_SUCCESS)
			result = sample_post_receive(s, dst);
		if (result != DOCA_SUCCESS)
			return result;
	}
	DOCA_LOG_INFO("Submitted %u receive tasks, one per connection; waiting for the senders' messages",
		      s->num_conns);
	sample_expect(s, "a message on each of the %u connections", s->num_conns);
	return DOCA_SUCCESS;
}

static void on_receive(struct sample *s, struct doca_rdma_task_receive *task, doca_error_t status)
{
	struct receiver *r = s->app;
	uint32_t conn;
	const char *text;
	doca_error_t result;

	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "receive", status);
		return;
	}
	conn = sample_conn_index(s, doca_rdma_task_receive_get_result_rdma_connection(task));
	result = sample_buf_string(doca_rdma_task_receive_get_dst_buf(task), "a sender's message", &text);
	if (result != DOCA_SUCCESS) {
		sample_finish(s, result);
		return;
	}
	if (conn < s->num_conns)
		DOCA_LOG_INFO("Got from sender: \"%s\" on connection [%u]", text, conn);
	else
		DOCA_LOG_INFO("Got from sender: \"%s\" on a connection this side does not know", text);
	if (++r->received < s->num_conns)
		return;
	if (s->num_conns > 1)
		DOCA_LOG_INFO("All %u messages arrived", s->num_conns);
	sample_finish(s, DOCA_SUCCESS);
}

static const struct sample_desc receiver_desc = {
	.me = "receiver",
	.peer = "sender",
	.passive = true,
	.multi_conn = true,
	.resource = SAMPLE_RESOURCE_NONE,
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.cap_check = doca_rdma_cap_task_receive_is_supported,
	.cap_what = "RDMA receive tasks",
	.configure = configure,
	.run = run,
	.on_receive = on_receive,
};

doca_error_t rdma_multi_conn_receive(struct rdma_config *cfg)
{
	struct receiver receiver = {0};

	return sample_run(cfg, &receiver_desc, &receiver);
}
