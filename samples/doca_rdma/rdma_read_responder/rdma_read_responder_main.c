/*
 * doca_rdma_read_responder: the passive half of the read pair. This file is
 * only its command line: it reads the flags (doca_argp) into struct
 * rdma_config and runs rdma_read_responder(), the sample itself, from
 * rdma_read_responder_sample.c.
 */
#include "rdma_common.h"

int main(int argc, char **argv)
{
	struct rdma_config cfg;
	doca_error_t result;

	result = rdma_cmdline_parse(argc, argv, SAMPLE_FLAG_READ_STRING, &cfg);
	if (result == DOCA_SUCCESS)
		result = rdma_read_responder(&cfg);
	return rdma_cmdline_exit(result);
}
