/*
 * doca_rdma_receive: the receiving half of the send/receive pair. It posts
 * one receive task and prints the string that doca_rdma_send sends.
 *
 * This file is the sample: rdma_receive() runs it with the settings in struct
 * rdma_config (rdma_common.h), returns what went wrong and never exits the
 * process, so a program in another language can call it. rdma_receive_main.c
 * only reads the command line.
 */
#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_RECEIVE);

static doca_error_t configure(struct sample *s)
{
	s->num_receive_tasks = 1;
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample *s)
{
	struct doca_buf *dst = NULL;
	doca_error_t result;

	result = sample_local_buf(s, 0, SAMPLE_MSG_LEN, 0, &dst);
	if (result == DOCA_SUCCESS)
		result = sample_post_receive(s, dst);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("Submitted a receive task; waiting for the sender's message");
	sample_expect(s, "the sender's message");
	return DOCA_SUCCESS;
}

static void on_receive(struct sample *s, struct doca_rdma_task_receive *task, doca_error_t status)
{
	const char *text;
	doca_error_t result;

	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "receive", status);
		return;
	}
	result = sample_buf_string(doca_rdma_task_receive_get_dst_buf(task), "the sender's message", &text);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("Got from sender: \"%s\"", text);
	sample_finish(s, result);
}

static const struct sample_desc receiver = {
	.me = "receiver",
	.peer = "sender",
	.passive = true,
	.resource = SAMPLE_RESOURCE_NONE,
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.cap_check = doca_rdma_cap_task_receive_is_supported,
	.cap_what = "RDMA receive tasks",
	.configure = configure,
	.run = run,
	.on_receive = on_receive,
};

doca_error_t rdma_receive(struct rdma_config *cfg)
{
	return sample_run(cfg, &receiver, NULL);
}
