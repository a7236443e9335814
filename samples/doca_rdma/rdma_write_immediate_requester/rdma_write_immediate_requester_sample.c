/*
 * doca_rdma_write_immediate_requester: the active half of the
 * write-with-immediate pair. One write-with-immediate task puts the -w
 * string at the start of the responder's memory and hands the responder
 * the 32-bit value 0xABCD through one of its receive tasks.
 *
 * This file is the sample: rdma_write_immediate_requester() runs it with the
 * settings in struct rdma_config (rdma_common.h), returns what went wrong and
 * never exits the process, so a program in another language can call it.
 * rdma_write_immediate_requester_main.c only reads the command line.
 */
#include <string.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_WRITE_IMMEDIATE_REQUESTER);

static void write_imm_done(struct doca_rdma_task_write_imm *task, union doca_data task_user_data,
			   union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct doca_task *t = doca_rdma_task_write_imm_as_task(task);
	struct doca_buf *src = (struct doca_buf *)doca_rdma_task_write_imm_get_src_buf(task);
	struct doca_buf *dst = doca_rdma_task_write_imm_get_dst_buf(task);
	doca_error_t status = doca_task_get_status(t);

	(void)task_user_data;
	doca_task_free(t);
	sample_release(src, dst);
	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "write with immediate", status);
		return;
	}
	DOCA_LOG_INFO("Wrote \"%s\" with immediate value %u to the responder", s->cfg->write_string,
		      SAMPLE_IMMEDIATE_VALUE);
	sample_finish(s, DOCA_SUCCESS);
}

static doca_error_t configure(struct sample *s)
{
	doca_error_t result;

	result = doca_rdma_task_write_imm_set_conf(s->rdma, write_imm_done, write_imm_done, 1);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot configure write-with-immediate tasks: %s", doca_error_get_descr(result));
	return result;
}

static doca_error_t run(struct sample *s)
{
	size_t len = strlen(s->cfg->write_string) + 1;
	struct doca_rdma_task_write_imm *task = NULL;
	union doca_data user_data = {.u64 = 0};
	struct doca_buf *src = NULL, *dst = NULL;
	doca_error_t result;

	result = sample_peer_mmap(s);
	if (result != DOCA_SUCCESS)
		return result;
	memcpy(s->mem, s->cfg->write_string, len);
	result = sample_local_buf(s, 0, len, len, &src);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_peer_buf(s, len, 0, &dst);
	if (result != DOCA_SUCCESS) {
		sample_release(src, NULL);
		return result;
	}
	result = doca_rdma_task_write_imm_allocate_init(s->rdma, s->conns[0], src, dst, SAMPLE_IMMEDIATE_VALUE,
							user_data, &task);
	if (result != DOCA_SUCCESS)
		return sample_alloc_failed("write with immediate", result, src, dst);
	DOCA_LOG_INFO("Writing \"%s\" with immediate value %u to the responder", s->cfg->write_string,
		      SAMPLE_IMMEDIATE_VALUE);
	result = sample_submit(doca_rdma_task_write_imm_as_task(task), "write with immediate", src, dst);
	if (result == DOCA_SUCCESS)
		sample_expect(s, "the write with immediate to complete");
	return result;
}

static const struct sample_desc requester = {
	.me = "requester",
	.peer = "responder",
	.passive = false,
	.resource = SAMPLE_RESOURCE_NEED,
	.resource_name = "memory map",
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.cap_check = doca_rdma_cap_task_write_imm_is_supported,
	.cap_what = "RDMA write-with-immediate tasks",
	.configure = configure,
	.run = run,
};

doca_error_t rdma_write_immediate_requester(struct rdma_config *cfg)
{
	return sample_run(cfg, &requester, NULL);
}
