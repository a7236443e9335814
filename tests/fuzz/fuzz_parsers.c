/*
 * libFuzzer target for every parser of untrusted bytes: mmap export
 * descriptors, sync event export descriptors, connection descriptors, PCI
 * export descriptors, the engine's message headers, and the TCP link's
 * frames (a stream of them, walked as its reader does), AUTH bodies and
 * link addresses.
 * The first input byte picks the parser; the rest is the input. A parser
 * must answer with a DOCA error, never crash or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>

#include <doca_log.h>

#include "engine.h"
#include "link_tcp_wire.h"
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

/* Frames back to back, as a TCP link socket delivers them: each header
 * checked, what it says it holds skipped (a DATA payload too). */
static void link_stream(const uint8_t *p, size_t n)
{
	struct lt_frame f;
	struct lt_auth a;
	struct lt_addr addr;

	(void)lt_addr_parse(p, n < LT_ADDR_LEN ? n : LT_ADDR_LEN, &addr);
	while (n >= LT_FRAME_HDR && lt_frame_parse(p, &f) == DOCA_SUCCESS) {
		size_t len = lt_frame_inline_len(&f) + (f.type == LT_DATA ? (size_t)f.len : 0);

		if (len > n)
			return;
		if (f.type == LT_AUTH)
			(void)lt_auth_parse(p + LT_FRAME_HDR, f.hdr_len, &a);
		p += len;
		n -= len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct softdoca_mmap_desc desc;
	struct softdoca_sync_event_desc event;
	struct softdoca_pci_desc pci;

	if (size == 0)
		return 0;
	switch (data[0] % 6) {
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
	case 4:
		(void)engine_wire_header_check(data + 1, size - 1);
		break;
	default:
		link_stream(data + 1, size - 1);
		break;
	}
	return 0;
}
