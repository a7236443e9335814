/*
 * The fixture of the tests of contexts softdoca has no engine for (see
 * no_engine.h).
 */
#include <string.h>

#include <doca_log.h>

#include "no_engine.h"

static char log_buf[2048];
char last_error[2048];
int error_lines;
struct no_engine_fixture F;

static _Alignas(64) char mem[8192];

static void log_flush(char *line)
{
	if (strstr(line, "[ERROR]") == NULL)
		return;
	error_lines++;
	strncpy(last_error, line, sizeof(last_error) - 1);
}

void assert_line_has(const char *word)
{
	if (word != NULL && strstr(last_error, word) == NULL)
		fail_msg("log line lacks \"%s\": %s", word, last_error);
}

int no_engine_group_setup(void **state)
{
	struct doca_log_backend *backend;
	uint32_t nb = 0;

	(void)state;
	if (doca_devinfo_create_list(&F.list, &nb) != DOCA_SUCCESS || nb == 0 ||
	    doca_dev_open(F.list[0], &F.dev) != DOCA_SUCCESS)
		return -1;
	F.devinfo = F.list[0];
	F.num_devs = nb;
	if (doca_log_backend_create_with_buf_sdk(log_buf, sizeof(log_buf), log_flush, &backend) != DOCA_SUCCESS ||
	    doca_log_backend_set_sdk_level(backend, DOCA_LOG_LEVEL_WARNING) != DOCA_SUCCESS)
		return -1;
	if (doca_mmap_create(&F.mmap) != DOCA_SUCCESS || doca_mmap_set_memrange(F.mmap, mem, sizeof(mem)) != DOCA_SUCCESS ||
	    doca_mmap_add_dev(F.mmap, F.dev) != DOCA_SUCCESS || doca_mmap_start(F.mmap) != DOCA_SUCCESS ||
	    doca_buf_inventory_create(4, &F.inv) != DOCA_SUCCESS || doca_buf_inventory_start(F.inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_get_by_data(F.inv, F.mmap, mem, 4096, &F.src) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_get_by_addr(F.inv, F.mmap, mem + 4096, 4096, &F.dst) != DOCA_SUCCESS)
		return -1;
	return 0;
}

int no_engine_group_teardown(void **state)
{
	(void)state;
	doca_buf_dec_refcount(F.src, NULL);
	doca_buf_dec_refcount(F.dst, NULL);
	doca_buf_inventory_destroy(F.inv);
	doca_mmap_destroy(F.mmap);
	doca_dev_close(F.dev);
	doca_devinfo_destroy_list(F.list);
	return 0;
}
