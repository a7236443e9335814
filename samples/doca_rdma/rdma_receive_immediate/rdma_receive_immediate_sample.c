/*
 * doca_rdma_receive_immediate: the receiving half of the send-with-immediate
 * pair. It posts one receive task and prints the string and the 32-bit
 * immediate value that doca_rdma_send_immediate sends.
 *
 * This file is the sample: rdma_receive_immediate() runs it with the settings
 * in struct rdma_config (rdma_common.h), returns what went wrong and never
 * exits the process, so a program in another language can call it.
 * rdma_receive_immediate_main.c only reads the command line.
 */
#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_RECEIVE_IMMEDIATE);

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
	DOCA_LOG_INFO("Submitted a receive task; waiting for the sender's message with immediate");
	sample_expect(s, "the sender's message with immediate");
	return DOCA_SUCCESS;
}

static void on_receive(struct sample *s, struct doca_rdma_task_receive *task, doca_error_t status)
{
	enum doca_rdma_opcode opcode;
	doca_be32_t immediate;
	const char *text;
	doca_error_t result;

	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "receive", status);
		return;
	}
	opcode = doca_rdma_task_receive_get_result_opcode(task);
	immediate = doca_rdma_task_receive_get_result_immediate_data(task);
	if (opcode != DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM) {
		DOCA_LOG_ERR("Expected a send with immediate, but the receive completed with opcode %d", (int)opcode);
		result = DOCA_ERROR_UNEXPECTED;
	} else if (immediate != SAMPLE_IMMEDIATE_VALUE) {
		DOCA_LOG_ERR("The immediate value is %u, not the %u the sender sends", (unsigned int)immediate,
			     SAMPLE_IMMEDIATE_VALUE);
		result = DOCA_ERROR_UNEXPECTED;
	} else {
		result = sample_buf_string(doca_rdma_task_receive_get_dst_buf(task), "the sender's message", &text);
		if (result == DOCA_SUCCESS)
			DOCA_LOG_INFO("Got from sender: \"%s\" with immediate: %u", text, (unsigned int)immediate);
	}
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

doca_error_t rdma_receive_immediate(struct rdma_config *cfg)
{
	return sample_run(cfg, &receiver, NULL);
}
