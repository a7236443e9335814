/*
 * doca_rdma_write_immediate_responder: the passive half of the write-with-
 * immediate pair. This file is only its command line: it reads the flags
 * (doca_argp) into struct rdma_config and runs
 * rdma_write_immediate_responder(), the sample itself, from
 * rdma_write_immediate_responder_sample.c.
 */
#include "rdma_common.h"

int main(int argc, char **argv)
{
	struct rdma_config cfg;
	doca_error_t result;

	result = rdma_cmdline_parse(argc, argv, 0, &cfg);
	if (result == DOCA_SUCCESS)
		result = rdma_write_immediate_responder(&cfg);
	return rdma_cmdline_exit(result);
}
