/*
 * doca_rdma_write_responder: the passive half of the write pair. It exports
 * its (zeroed) memory with write permission and, once told the requester
 * is done, prints the string the requester wrote there.
 *
 * This file is the sample: rdma_write_responder() runs it with the settings in
 * struct rdma_config (rdma_common.h), returns what went wrong and never exits
 * the process, so a program in another language can call it.
 * rdma_write_responder_main.c only reads the command line.
 */
#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_WRITE_RESPONDER);

static doca_error_t run(struct sample *s)
{
	const char *text;
	doca_error_t result;

	result = sample_prompt_enter("Wait till the requester has finished writing, then press Enter");
	if (result == DOCA_SUCCESS) {
		text = sample_peer_written_cstr(s->mem, SAMPLE_MSG_LEN);
		if (text == NULL) {
			DOCA_LOG_ERR("The first %d bytes of memory hold no NUL-terminated string", SAMPLE_MSG_LEN);
			result = DOCA_ERROR_INVALID_VALUE;
		} else {
			DOCA_LOG_INFO("Requester has written: \"%s\"", text);
		}
	}
	sample_finish(s, result);
	return result;
}

static const struct sample_desc responder = {
	.me = "responder",
	.peer = "requester",
	.passive = true,
	.resource = SAMPLE_RESOURCE_OFFER,
	.resource_name = "memory map",
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_RDMA_WRITE,
	.run = run,
};

doca_error_t rdma_write_responder(struct rdma_config *cfg)
{
	return sample_run(cfg, &responder, NULL);
}
