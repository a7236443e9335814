/*
 * doca_rdma_multi_conn_receive: the receiving half of the multi-connection
 * pair. This file is only its command line: it reads the flags (doca_argp)
 * into struct rdma_config and runs rdma_multi_conn_receive(), the sample
 * itself, from rdma_multi_conn_receive_sample.c.
 */
#include "rdma_common.h"

int main(int argc, char **argv)
{
	struct rdma_config cfg;
	doca_error_t result;

	result = rdma_cmdline_parse(argc, argv, SAMPLE_FLAG_NUM_CONNECTIONS, &cfg);
	if (result == DOCA_SUCCESS)
		result = rdma_multi_conn_receive(&cfg);
	return rdma_cmdline_exit(result);
}
