/*
 * libFuzzer target for every parser of untrusted bytes: mmap export
 * descriptors, sync event export descriptors, connection descriptors, PCI
 * export descriptors, and the engine's message headers.
 * The first input byte picks the parser; the rest is the input. A parser
 * must answer with a DOCA error, never crash or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>

#include <doca_log.h>

#include "engine.h"
#include "mmap.h"
#include "mmap_pci.h"
#include "sync_event.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Rejections are the expected outcome: keep the output quiet. */
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct softdoca_mmap_desc desc;
	struct softdoca_sync_event_desc event;
	struct softdoca_pci_desc pci;

	if (size == 0)
		return 0;
	switch (data[0] % 5) {
	case 0:
		(void)softdoca_mmap_desc_parse(data + 1, size - 1, &desc);
		break;
	case 1:
		(void)engine_conn_desc_check(data + 1, size - 1);
		break;
	case 2:
		(void)softdoca_sync_event_desc_parse(data + 1, size - 1, &event);
		break;
	case 3:
		(void)softdoca_pci_desc_parse(data + 1, size - 1, &pci);
		break;
	default:
		(void)engine_wire_header_check(data + 1, size - 1);
		break;
	}
	return 0;
}
