/*
 * doca_rdma_sync_event_requester: the active half of the sync event pair. This
 * file is only its command line: it reads the flags (doca_argp) into struct
 * rdma_config and runs rdma_sync_event_requester(), the sample itself, from
 * rdma_sync_event_requester_sample.c.
 */
#include "rdma_common.h"

int main(int argc, char **argv)
{
	struct rdma_config cfg;
	doca_error_t result;

	result = rdma_cmdline_parse(argc, argv, 0, &cfg);
	if (result == DOCA_SUCCESS)
		result = rdma_sync_event_requester(&cfg);
	return rdma_cmdline_exit(result);
}
