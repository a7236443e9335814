/*
 * softdoca — sync events, internal interface. Not installed.
 *
 * Two audiences, mirroring the mmap region table (mmap.h):
 *  - the RDMA layer, initiator side: what a doca_sync_event_remote_net
 *    names (softdoca_sync_event_remote_info), copied into each task.
 *  - the engine, target side: the table of exported sync events, declared
 *    in core_engine.h (softdoca_sync_event_lookup / _release / _ref_*).
 *    Only events with a remote_net publisher location are in the table,
 *    from their export until they are stopped. doca_sync_event_stop and
 *    _destroy remove the event and wait until no holder is left, so after
 *    stop returns no remote update touches it. A holder must therefore not
 *    stop or destroy events, nor wait on a thread that might, while
 *    holding.
 *
 * The descriptor parser is separate (softdoca_sync_event_desc_parse) so a
 * fuzzer can call it on raw bytes.
 */
#ifndef SOFTDOCA_CORE_SYNC_EVENT_H_
#define SOFTDOCA_CORE_SYNC_EVENT_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>
#include <doca_sync_event.h>

#include "common.h"
#include "core_engine.h"

#define SOFTDOCA_SYNC_EVENT_SECRET_LEN SOFTDOCA_SECRET_LEN

/* Descriptor format, version 1: 48 bytes, every integer little-endian.
 *   0  magic "SDSE"         4    16  event id          8
 *   4  version (1)          2    24  event secret     16
 *   6  flags (0)            2    40  process nonce     8
 *   8  total length (48)    4
 *  12  exporter pid         4
 */
#define SOFTDOCA_SYNC_EVENT_DESC_VERSION 1
#define SOFTDOCA_SYNC_EVENT_DESC_LEN 48

/* The fields of a checked descriptor. */
struct softdoca_sync_event_desc {
	uint32_t version;
	uint64_t event_id;				/* never 0 */
	uint8_t secret[SOFTDOCA_SYNC_EVENT_SECRET_LEN]; /* never all zero */
	uint32_t pid;					/* exporter's process id, never 0 */
	uint64_t process_nonce;				/* random per exporting process */
};

/* Check desc_len bytes at desc and fill *out. Reads nothing outside the
 * bytes given. Errors: INVALID_VALUE (malformed, with a log line naming the
 * field), UNSUPPORTED_VERSION (newer format). */
SOFTDOCA_EXPORT doca_error_t softdoca_sync_event_desc_parse(const void *desc, size_t desc_len,
							     struct softdoca_sync_event_desc *out);

/* Initiator side: the id and secret a peer-side handle names.
 * Errors: INVALID_VALUE (NULL). */
SOFTDOCA_EXPORT doca_error_t softdoca_sync_event_remote_info(const struct doca_sync_event_remote_net *event,
							      uint64_t *event_id,
							      uint8_t secret[SOFTDOCA_SYNC_EVENT_SECRET_LEN]);

/* Same, with the exporter's pid and process nonce (the whole descriptor).
 * Errors: INVALID_VALUE (NULL). */
SOFTDOCA_EXPORT doca_error_t softdoca_sync_event_remote_desc(const struct doca_sync_event_remote_net *event,
							      struct softdoca_sync_event_desc *desc);

#endif /* SOFTDOCA_CORE_SYNC_EVENT_H_ */
