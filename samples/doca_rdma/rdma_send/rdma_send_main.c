/*
 * doca_rdma_send: the sending half of the send/receive pair. This file is only
 * its command line: it reads the flags (doca_argp) into struct rdma_config and
 * runs rdma_send(), the sample itself, from rdma_send_sample.c.
 */
#include "rdma_common.h"

int main(int argc, char **argv)
{
	struct rdma_config cfg;
	doca_error_t result;

	result = rdma_cmdline_parse(argc, argv, SAMPLE_FLAG_SEND_STRING, &cfg);
	if (result == DOCA_SUCCESS)
		result = rdma_send(&cfg);
	return rdma_cmdline_exit(result);
}
