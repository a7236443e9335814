/*
 * doca_rdma_read_requester: the active half of the read pair. With the
 * responder's memory descriptor it reads the string the responder holds
 * (one read task, up to 257 bytes) and prints it.
 *
 * This file is the sample: rdma_read_requester() runs it with the settings in
 * struct rdma_config (rdma_common.h), returns what went wrong and never exits
 * the process, so a program in another language can call it.
 * rdma_read_requester_main.c only reads the command line.
 */
#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_READ_REQUESTER);

static void read_done(struct doca_rdma_task_read *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct doca_task *t = doca_rdma_task_read_as_task(task);
	struct doca_buf *src = (struct doca_buf *)doca_rdma_task_read_get_src_buf(task);
	struct doca_buf *dst = doca_rdma_task_read_get_dst_buf(task);
	doca_error_t status = doca_task_get_status(t);
	const char *text;

	(void)task_user_data;
	if (status == DOCA_SUCCESS) {
		status = sample_buf_string(dst, "the data read from the responder", &text);
		if (status == DOCA_SUCCESS)
			DOCA_LOG_INFO("Read from responder: \"%s\"", text);
		sample_finish(s, status);
	} else {
		sample_task_failed(s, "read", status);
	}
	doca_task_free(t);
	sample_release(src, dst);
}

static doca_error_t configure(struct sample *s)
{
	doca_error_t result;

	result = doca_rdma_task_read_set_conf(s->rdma, read_done, read_done, 1);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot configure read tasks: %s", doca_error_get_descr(result));
	return result;
}

static doca_error_t run(struct sample *s)
{
	struct doca_rdma_task_read *task = NULL;
	union doca_data user_data = {.u64 = 0};
	struct doca_buf *src = NULL, *dst = NULL;
	doca_error_t result;

	result = sample_peer_mmap(s);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_peer_buf(s, SAMPLE_MSG_LEN, SAMPLE_MSG_LEN, &src);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_local_buf(s, 0, SAMPLE_MSG_LEN, 0, &dst);
	if (result != DOCA_SUCCESS) {
		sample_release(src, NULL);
		return result;
	}
	result = doca_rdma_task_read_allocate_init(s->rdma, s->conns[0], src, dst, user_data, &task);
	if (result != DOCA_SUCCESS)
		return sample_alloc_failed("read", result, src, dst);
	DOCA_LOG_INFO("Reading the responder's string");
	result = sample_submit(doca_rdma_task_read_as_task(task), "read", src, dst);
	if (result == DOCA_SUCCESS)
		sample_expect(s, "the read from the responder's memory to complete");
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
	.cap_check = doca_rdma_cap_task_read_is_supported,
	.cap_what = "RDMA read tasks",
	.configure = configure,
	.run = run,
};

doca_error_t rdma_read_requester(struct rdma_config *cfg)
{
	return sample_run(cfg, &requester, NULL);
}
