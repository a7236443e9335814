/*
 * doca_rdma_send_immediate: the sending half of the send-with-immediate
 * pair. One send-with-immediate task carries the -s string and the 32-bit
 * value 0xABCD to doca_rdma_receive_immediate.
 *
 * This file is the sample: rdma_send_immediate() runs it with the settings in
 * struct rdma_config (rdma_common.h), returns what went wrong and never exits
 * the process, so a program in another language can call it.
 * rdma_send_immediate_main.c only reads the command line.
 */
#include <string.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_SEND_IMMEDIATE);

static void send_imm_done(struct doca_rdma_task_send_imm *task, union doca_data task_user_data,
			  union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct doca_task *t = doca_rdma_task_send_imm_as_task(task);
	struct doca_buf *src = (struct doca_buf *)doca_rdma_task_send_imm_get_src_buf(task);
	doca_error_t status = doca_task_get_status(t);

	(void)task_user_data;
	doca_task_free(t);
	sample_release(src, NULL);
	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "send with immediate", status);
		return;
	}
	DOCA_LOG_INFO("The receiver took the message and its immediate value");
	sample_finish(s, DOCA_SUCCESS);
}

static doca_error_t configure(struct sample *s)
{
	doca_error_t result;

	result = doca_rdma_task_send_imm_set_conf(s->rdma, send_imm_done, send_imm_done, 1);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot configure send-with-immediate tasks: %s", doca_error_get_descr(result));
	return result;
}

static doca_error_t run(struct sample *s)
{
	size_t len = strlen(s->cfg->send_string) + 1;
	struct doca_rdma_task_send_imm *task = NULL;
	union doca_data user_data = {.u64 = 0};
	struct doca_buf *src = NULL;
	doca_error_t result;

	if (s->cfg->use_cm) {
		result = sample_prompt_enter("Wait till the receiver has submitted its receive task, then press Enter");
		if (result != DOCA_SUCCESS)
			return result;
	}
	memcpy(s->mem, s->cfg->send_string, len);
	result = sample_local_buf(s, 0, len, len, &src);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_rdma_task_send_imm_allocate_init(s->rdma, s->conns[0], src, SAMPLE_IMMEDIATE_VALUE, user_data,
						       &task);
	if (result != DOCA_SUCCESS)
		return sample_alloc_failed("send with immediate", result, src, NULL);
	DOCA_LOG_INFO("Sending \"%s\" with immediate value %u to the receiver", s->cfg->send_string,
		      SAMPLE_IMMEDIATE_VALUE);
	result = sample_submit(doca_rdma_task_send_imm_as_task(task), "send with immediate", src, NULL);
	if (result != DOCA_SUCCESS)
		return result;
	sample_expect(s, "the receiver to take the message");
	return DOCA_SUCCESS;
}

static const struct sample_desc sender = {
	.me = "sender",
	.peer = "receiver",
	.passive = false,
	.resource = SAMPLE_RESOURCE_NONE,
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.cap_check = doca_rdma_cap_task_send_imm_is_supported,
	.cap_what = "RDMA send-with-immediate tasks",
	.configure = configure,
	.run = run,
};

doca_error_t rdma_send_immediate(struct rdma_config *cfg)
{
	return sample_run(cfg, &sender, NULL);
}
