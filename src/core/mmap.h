/*
 * softdoca — memory maps, internal interface.
 *
 * Three audiences:
 *  - buf_inventory.c / buf.c (same library): account the bufs that point
 *    into an mmap (core_mmap_buf_get/put).
 *  - the RDMA layer, initiator side: what a from-export mmap grants
 *    (softdoca_mmap_remote_info) and what a local mmap allows
 *    (softdoca_mmap_local_info).
 *  - the engine, target side: the region table of exported mmaps, declared
 *    in core_engine.h (softdoca_mmap_region_*).
 *
 * The descriptor parser is separate (softdoca_mmap_desc_parse) so a fuzzer
 * can call it on raw bytes.
 */
#ifndef SOFTDOCA_CORE_MMAP_H_
#define SOFTDOCA_CORE_MMAP_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>
#include <doca_mmap.h>

#include "common.h"
#include "core_engine.h"

#define SOFTDOCA_MMAP_SECRET_LEN SOFTDOCA_SECRET_LEN

/* Descriptor format, version 1: 72 bytes, every integer little-endian.
 *   0  magic "SDMM"         4    40  exporter address    8
 *   4  version (1)          2    48  length              8
 *   6  flags (0)            2    56  exporter pid        4
 *   8  total length (72)    4    60  reserved (0)        4
 *  12  permissions          4    64  process nonce       8
 *  16  region id            8
 *  24  region secret       16
 */
#define SOFTDOCA_MMAP_DESC_VERSION 1
#define SOFTDOCA_MMAP_DESC_LEN 72

/* Every doca_access_flag bit softdoca knows. */
#define SOFTDOCA_ACCESS_ALL_FLAGS 0x7fu
/* The bits that grant remote (RDMA) access. */
#define SOFTDOCA_ACCESS_RDMA_FLAGS 0x0eu

/* The fields of a checked descriptor. */
struct softdoca_mmap_desc {
	uint32_t version;
	uint32_t permissions;			    /* doca_access_flag bits */
	uint64_t region_id;			    /* never 0 */
	uint8_t secret[SOFTDOCA_MMAP_SECRET_LEN];   /* never all zero */
	uint64_t addr;				    /* exporter's address, never 0 */
	uint64_t len;				    /* > 0; addr + len does not wrap */
	uint32_t pid;				    /* exporter's process id */
	uint64_t process_nonce;			    /* random per exporting process */
};

/* Check desc_len bytes at desc and fill *out. Reads nothing outside the
 * bytes given. Errors: INVALID_VALUE (malformed, with a log line naming the
 * field), UNSUPPORTED_VERSION (newer format). */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_desc_parse(const void *desc, size_t desc_len,
						       struct softdoca_mmap_desc *out);

/* What a from-export mmap grants. Errors: INVALID_VALUE (NULL, or mmap not
 * from an export), BAD_STATE (stopped). */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_remote_info(const struct doca_mmap *mmap,
							struct softdoca_mmap_desc *info);

/* What a local mmap allows: its permissions, if it is started, local, and
 * dev was added to it (dev NULL skips that check). Errors: INVALID_VALUE
 * (NULL, from export), BAD_STATE (not started), NOT_FOUND (dev not added). */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_local_info(const struct doca_mmap *mmap, const struct doca_dev *dev,
						       uint32_t *permissions);

/* softdoca_mmap_local_info for the local buffers of RDMA tasks, which may
 * also be on a PCI import (pci NULL refuses those as above). *pci says
 * which, also on failure. A PCI import must be started, created with dev
 * (else INVALID_VALUE), its exporter alive (else CONNECTION_ABORTED) and
 * the export still published (else NOT_FOUND); *permissions is then what
 * the export granted. Every refusal is logged. */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_task_local_info(const struct doca_mmap *mmap, const struct doca_dev *dev,
							    uint32_t *permissions, bool *pci);

/* This process's identity as written into descriptors: pid and a random
 * 64-bit nonce drawn once per process. Errors: OPERATING_SYSTEM. */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_process_identity(uint32_t *pid, uint64_t *nonce);

/* Library-internal (buf_inventory.c, buf.c). */

/* Account one more buf for [addr, addr + len) in mmap: the mmap must be
 * started and the range inside its memory. Logs and fails otherwise with
 * INVALID_VALUE (the only error DOCA documents for buf_get_by_args). */
doca_error_t core_mmap_buf_get(struct doca_mmap *mmap, uintptr_t addr, size_t len);

/* The checks of core_mmap_buf_get without the accounting: for a buf that
 * is already accounted in mmap and is re-pointed inside it (buf_reuse_*).
 * BAD_STATE if not started, INVALID_VALUE if the range is outside. */
doca_error_t core_mmap_buf_check(const struct doca_mmap *mmap, uintptr_t addr, size_t len);

/* Same for a copy of a buf already accounted in mmap (no range check);
 * BAD_STATE if the mmap is not started, as DOCA's buf_dup documents. */
doca_error_t core_mmap_buf_get_dup(struct doca_mmap *mmap);

/* The memory range of a started mmap; BAD_STATE (logged) otherwise. */
doca_error_t core_mmap_started_range(const struct doca_mmap *mmap, uintptr_t *addr, size_t *len);

/* Count one more user of mmap in any state, released with
 * core_mmap_buf_put: a buf pool holds its mmap this way from create to
 * destroy, so the mmap cannot be stopped or freed under it. */
void core_mmap_hold(struct doca_mmap *mmap);

/* One buf less. May free an mmap destroyed while bufs were out. */
void core_mmap_buf_put(struct doca_mmap *mmap);

#endif /* SOFTDOCA_CORE_MMAP_H_ */
