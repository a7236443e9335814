/*
 * doca_rdma_atomic_responder: the passive half of the atomic pair (DOCA
 * ships no sample for atomics; the handshake is the write pair's). It
 * holds one 64-bit value, starting at 100, and exports it with atomic
 * permission; once told the requester is done it prints what the
 * requester's compare-and-swap and fetch-and-add left there.
 *
 * This file is the sample: rdma_atomic_responder() runs it with the settings
 * in struct rdma_config (rdma_common.h), returns what went wrong and never
 * exits the process, so a program in another language can call it.
 * rdma_atomic_responder_main.c only reads the command line.
 */
#include <inttypes.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_ATOMIC_RESPONDER);

static doca_error_t configure(struct sample *s)
{
	*(uint64_t *)s->mem = SAMPLE_ATOMIC_START;
	return DOCA_SUCCESS;
}

static doca_error_t run(struct sample *s)
{
	doca_error_t result;

	DOCA_LOG_INFO("The requester may now work on the value %u", SAMPLE_ATOMIC_START);
	result = sample_prompt_enter("Wait till the requester has finished its atomic operations, then press Enter");
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("Requester's atomic operations left the value %" PRIu64 " (it started at %u)",
			      sample_peer_written_u64(s->mem), SAMPLE_ATOMIC_START);
	sample_finish(s, result);
	return result;
}

static const struct sample_desc responder = {
	.me = "responder",
	.peer = "requester",
	.passive = true,
	.resource = SAMPLE_RESOURCE_OFFER,
	.resource_name = "memory map",
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC,
	.rdma_permissions = DOCA_ACCESS_FLAG_RDMA_ATOMIC,
	.configure = configure,
	.run = run,
};

doca_error_t rdma_atomic_responder(struct rdma_config *cfg)
{
	return sample_run(cfg, &responder, NULL);
}
