/*
 * doca_rdma_write_immediate_responder: the passive half of the
 * write-with-immediate pair. It exports its memory with write permission
 * and posts one receive task with no buffer: the requester's write lands
 * in memory, and its immediate value completes the receive, so this side
 * learns when the data is there.
 *
 * This file is the sample: rdma_write_immediate_responder() runs it with the
 * settings in struct rdma_config (rdma_common.h), returns what went wrong and
 * never exits the process, so a program in another language can call it.
 * rdma_write_immediate_responder_main.c only reads the command line.
 */
#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_WRITE_IMMEDIATE_RESPONDER);

static doca_error_t configure(struct sample *s)
{
	s->num_receive_tasks = 1;
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample *s)
{
	doca_error_t result;

	result = sample_post_receive(s, NULL);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("Submitted a receive task; waiting for the requester's write with immediate");
	sample_expect(s, "the requester's write with immediate");
	return DOCA_SUCCESS;
}

static void on_receive(struct sample *s, struct doca_rdma_task_receive *task, doca_error_t status)
{
	enum doca_rdma_opcode opcode;
	doca_be32_t immediate;
	const char *text;
	doca_error_t result = DOCA_SUCCESS;

	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "receive", status);
		return;
	}
	opcode = doca_rdma_task_receive_get_result_opcode(task);
	immediate = doca_rdma_task_receive_get_result_immediate_data(task);
	text = sample_cstr(s->mem, SAMPLE_MSG_LEN);
	if (opcode != DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM) {
		DOCA_LOG_ERR("Expected a write with immediate, but the receive completed with opcode %d", (int)opcode);
		result = DOCA_ERROR_UNEXPECTED;
	} else if (immediate != SAMPLE_IMMEDIATE_VALUE) {
		DOCA_LOG_ERR("The immediate value is %u, not the %u the requester sends", (unsigned int)immediate,
			     SAMPLE_IMMEDIATE_VALUE);
		result = DOCA_ERROR_UNEXPECTED;
	} else if (text == NULL) {
		DOCA_LOG_ERR("The first %d bytes of memory hold no NUL-terminated string", SAMPLE_MSG_LEN);
		result = DOCA_ERROR_INVALID_VALUE;
	} else {
		DOCA_LOG_INFO("Requester has written: \"%s\" with immediate data: %u", text, (unsigned int)immediate);
	}
	sample_finish(s, result);
}

static const struct sample_desc responder = {
	.me = "responder",
	.peer = "requester",
	.passive = true,
	.resource = SAMPLE_RESOURCE_OFFER,
	.resource_name = "memory map",
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_RDMA_WRITE,
	.cap_check = doca_rdma_cap_task_receive_is_supported,
	.cap_what = "RDMA receive tasks",
	.configure = configure,
	.run = run,
	.on_receive = on_receive,
};

doca_error_t rdma_write_immediate_responder(struct rdma_config *cfg)
{
	return sample_run(cfg, &responder, NULL);
}
