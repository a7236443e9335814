/*
 * doca_rdma_send: the sending half of the send/receive pair. It sends the
 * -s string (default "Hi DOCA RDMA!") to doca_rdma_receive in one send task.
 *
 * This file is the sample: rdma_send() runs it with the settings in struct
 * rdma_config (rdma_common.h), returns what went wrong and never exits the
 * process, so a program in another language can call it. rdma_send_main.c only
 * reads the command line.
 */
#include <string.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_SEND);

static doca_error_t configure(struct sample *s)
{
	s->num_send_tasks = 1;
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample *s)
{
	size_t len = strlen(s->cfg->send_string) + 1;
	struct doca_buf *src = NULL;
	doca_error_t result;

	/* With descriptor files the receiver posted its receive before we got
	 * here; with RDMA CM it does so once connected. */
	if (s->cfg->use_cm) {
		result = sample_prompt_enter("Wait till the receiver has submitted its receive task, then press Enter");
		if (result != DOCA_SUCCESS)
			return result;
	}
	memcpy(s->mem, s->cfg->send_string, len);
	result = sample_local_buf(s, 0, len, len, &src);
	if (result == DOCA_SUCCESS)
		result = sample_post_send(s, 0, src);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("Sending \"%s\" to the receiver", s->cfg->send_string);
	sample_expect(s, "the receiver to take the message");
	return DOCA_SUCCESS;
}

static void on_send(struct sample *s, struct doca_rdma_task_send *task, doca_error_t status)
{
	(void)task;
	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "send", status);
		return;
	}
	DOCA_LOG_INFO("The receiver took the message");
	sample_finish(s, DOCA_SUCCESS);
}

static const struct sample_desc sender = {
	.me = "sender",
	.peer = "receiver",
	.passive = false,
	.resource = SAMPLE_RESOURCE_NONE,
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.cap_check = doca_rdma_cap_task_send_is_supported,
	.cap_what = "RDMA send tasks",
	.configure = configure,
	.run = run,
	.on_send = on_send,
};

doca_error_t rdma_send(struct rdma_config *cfg)
{
	return sample_run(cfg, &sender, NULL);
}
