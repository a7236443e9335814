/*
 * doca_rdma_multi_conn_send: the sending half of the multi-connection
 * pair. One RDMA context holds -nc connections; it sends the -s string on
 * each of them.
 *
 * This file is the sample: rdma_multi_conn_send() runs it with the settings in
 * struct rdma_config (rdma_common.h), returns what went wrong and never exits
 * the process, so a program in another language can call it.
 * rdma_multi_conn_send_main.c only reads the command line.
 */
#include <string.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_MULTI_CONN_SEND);

struct sender {
	uint32_t sent;
};

static doca_error_t configure(struct sample *s)
{
	s->num_send_tasks = s->num_conns;
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample *s)
{
	size_t len = strlen(s->cfg->send_string) + 1;
	struct doca_buf *src = NULL;
	doca_error_t result;
	uint32_t i;

	result = sample_prompt_enter("Wait till the receiver has submitted all its receive tasks, then press Enter");
	if (result != DOCA_SUCCESS)
		return result;
	for (i = 0; i < s->num_conns; i++) {
		memcpy(s->mem + (size_t)i * SAMPLE_MSG_LEN, s->cfg->send_string, len);
		result = sample_local_buf(s, (size_t)i * SAMPLE_MSG_LEN, len, len, &src);
		if (result == DOCA_SUCCESS)
			result = sample_post_send(s, i, src);
		if (result != DOCA_SUCCESS)
			return result;
		DOCA_LOG_INFO("Sending \"%s\" on connection [%u]", s->cfg->send_string, i);
	}
	sample_expect(s, "the receiver to take the message on each of the %u connections", s->num_conns);
	return DOCA_SUCCESS;
}

static void on_send(struct sample *s, struct doca_rdma_task_send *task, doca_error_t status)
{
	struct sender *snd = s->app;

	(void)task;
	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "send", status);
		return;
	}
	if (++snd->sent < s->num_conns)
		return;
	if (s->num_conns == 1)
		DOCA_LOG_INFO("The receiver took the message");
	else
		DOCA_LOG_INFO("The receiver took all %u messages", s->num_conns);
	sample_finish(s, DOCA_SUCCESS);
}

static const struct sample_desc sender_desc = {
	.me = "sender",
	.peer = "receiver",
	.passive = false,
	.multi_conn = true,
	.resource = SAMPLE_RESOURCE_NONE,
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.cap_check = doca_rdma_cap_task_send_is_supported,
	.cap_what = "RDMA send tasks",
	.configure = configure,
	.run = run,
	.on_send = on_send,
};

doca_error_t rdma_multi_conn_send(struct rdma_config *cfg)
{
	struct sender sender = {0};

	return sample_run(cfg, &sender_desc, &sender);
}
