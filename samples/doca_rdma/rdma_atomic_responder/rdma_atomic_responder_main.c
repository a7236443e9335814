/*
 * doca_rdma_atomic_responder: the passive half of the atomic pair (DOCA
 * ships no sample for atomics; the handshake is the write pair's). It
 * holds one 64-bit value, starting at 100, and exports it with atomic
 * permission; once told the requester is done it prints what the
 * requester's compare-and-swap and fetch-and-add left there.
 */
#include <inttypes.h>

#include <doca_log.h>

#include "sample_common.h"

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

int main(int argc, char **argv)
{
	struct sample_cfg cfg;
	doca_error_t result;

	result = sample_parse(argc, argv, 0, &cfg);
	if (result == DOCA_SUCCESS)
		result = sample_run(&cfg, &responder, NULL);
	return sample_exit(result);
}
