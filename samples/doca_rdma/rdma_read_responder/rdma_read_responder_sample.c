/*
 * doca_rdma_read_responder: the passive half of the read pair. It puts the
 * -r string in its memory, exports that memory with read permission, and
 * stays out of the way while doca_rdma_read_requester reads it: the read
 * needs nothing from this side's CPU.
 *
 * This file is the sample: rdma_read_responder() runs it with the settings in
 * struct rdma_config (rdma_common.h), returns what went wrong and never exits
 * the process, so a program in another language can call it.
 * rdma_read_responder_main.c only reads the command line.
 */
#include <string.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_READ_RESPONDER);

static doca_error_t configure(struct sample *s)
{
	memcpy(s->mem, s->cfg->read_string, strlen(s->cfg->read_string) + 1);
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample *s)
{
	doca_error_t result;

	DOCA_LOG_INFO("The requester may now read \"%s\"", s->cfg->read_string);
	result = sample_prompt_enter("Wait till the requester has finished reading, then press Enter");
	sample_finish(s, result);
	return result;
}

static const struct sample_desc responder = {
	.me = "responder",
	.peer = "requester",
	.passive = true,
	.resource = SAMPLE_RESOURCE_OFFER,
	.resource_name = "memory map",
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ,
	.rdma_permissions = DOCA_ACCESS_FLAG_RDMA_READ,
	.configure = configure,
	.run = run,
};

doca_error_t rdma_read_responder(struct rdma_config *cfg)
{
	return sample_run(cfg, &responder, NULL);
}
