/*
 * softdoca — PCI exports between two processes of one host (one plays the
 * host, the other the BlueField), internal interface. Not installed.
 *
 * Hardware lets the DPU's DMA engine reach host memory over PCIe. Here the
 * "PCIe" is the kernel: the importer copies with process_vm_readv/writev,
 * which needs ptrace permission over the exporter.
 *
 * Revocation and liveness need state both sides see at once, so every
 * exporting process keeps one small shared table (a sealed memfd, mapped
 * MAP_SHARED) of export slots: id, secret, range, permissions, a count of
 * importer copies in flight and, for sync events, the event's value. The
 * importer opens the table through /proc/<pid>/fd/<fd> (the same ptrace
 * check the copies need) and maps it. A copy counts itself in the slot,
 * checks id and secret, copies, and counts itself out; revoking clears the
 * id and then waits (bounded) until no copy is in flight, so after
 * doca_mmap_stop/destroy returns no importer touches the memory. The
 * exporter's identity (pid, start time, random process nonce, also written
 * in the table) detects a recycled pid; a pidfd detects its death.
 */
#ifndef SOFTDOCA_CORE_MMAP_PCI_H_
#define SOFTDOCA_CORE_MMAP_PCI_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#include "common.h"

/* Descriptor format, version 1: 88 bytes, every integer little-endian.
 *   0  magic "SDPX"          4    40  slot index            4
 *   4  version (1)           2    44  permissions           4
 *   6  flags (0)             2    48  slot id               8
 *   8  total length (88)     4    56  slot secret          16
 *  12  kind (1 mmap, 2 sync) 4    72  exporter address      8
 *  16  exporter pid          4    80  length                8
 *  20  table fd              4
 *  24  process start time    8   (clock ticks after boot, /proc/pid/stat)
 *  32  process nonce         8
 * A sync event descriptor has permissions, address and length 0.
 */
#define SOFTDOCA_PCI_DESC_MAGIC "SDPX"
#define SOFTDOCA_PCI_DESC_VERSION 1
#define SOFTDOCA_PCI_DESC_LEN 88
#define SOFTDOCA_PCI_SECRET_LEN 16
/* Slots of one process's table: at most this many live PCI exports. */
#define SOFTDOCA_PCI_TABLE_SLOTS 1024u

enum softdoca_pci_kind {
	SOFTDOCA_PCI_KIND_MMAP = 1,
	SOFTDOCA_PCI_KIND_SYNC_EVENT = 2,
};

/* The fields of a checked descriptor. */
struct softdoca_pci_desc {
	uint32_t version;
	uint32_t kind;	      /* enum softdoca_pci_kind */
	uint32_t pid;	      /* 1..INT32_MAX */
	uint32_t table_fd;    /* the exporter's fd of its table */
	uint64_t start_time;  /* never 0 */
	uint64_t process_nonce;
	uint32_t slot;	      /* < SOFTDOCA_PCI_TABLE_SLOTS */
	uint32_t permissions; /* mmap: doca_access_flag bits with a PCI flag */
	uint64_t slot_id;     /* never 0 */
	uint8_t secret[SOFTDOCA_PCI_SECRET_LEN]; /* never all zero */
	uint64_t addr;	      /* mmap: != 0, addr + len inside user space */
	uint64_t len;	      /* mmap: > 0 */
};

/* True when the bytes start like a PCI export descriptor (so
 * doca_mmap_create_from_export knows which parser to use). */
bool core_pci_desc_is_pci(const void *desc, size_t desc_len);

/* Check desc_len bytes at desc and fill *out. Reads nothing outside the
 * bytes given. Errors: INVALID_VALUE (malformed, with a log line naming the
 * field), UNSUPPORTED_VERSION (newer format). */
SOFTDOCA_EXPORT doca_error_t softdoca_pci_desc_parse(const void *desc, size_t desc_len,
						      struct softdoca_pci_desc *out);

/* ---- exporter side ---- */

/* One export, embedded in the exported object (zero-initialised). */
struct core_pci_export {
	bool reserved; /* owns a slot (until close) */
	bool live;     /* reachable now (until revoke) */
	uint32_t slot;
	uint8_t desc[SOFTDOCA_PCI_DESC_LEN];
};

/* Reserve a slot if not yet done, publish a fresh id and secret with this
 * range and permissions, and write the descriptor into x->desc.
 * Errors: FULL (no free slot), OPERATING_SYSTEM (memfd/mmap failed). */
doca_error_t core_pci_export_publish(struct core_pci_export *x, enum softdoca_pci_kind kind, uint32_t permissions,
				     uint64_t addr, uint64_t len);

/* Make the export unreachable and wait (bounded) until no importer copy
 * is in flight. The slot stays reserved. No-op when not live. */
void core_pci_export_revoke(struct core_pci_export *x);

/* Revoke and give the slot back. No-op when nothing is reserved. */
void core_pci_export_close(struct core_pci_export *x);

/* The slot's shared 64-bit value cell (sync events); reserves the slot
 * first. NULL (logged) when no slot could be had. */
uint64_t *core_pci_export_value(struct core_pci_export *x);

/* ---- importer side ---- */

struct core_pci_import;

/* Open the exporter's table named by a checked descriptor and verify the
 * exporter is the process that exported (pid, start time, nonce) and the
 * export is live. Errors: NOT_FOUND (exporter gone or export revoked),
 * NOT_PERMITTED (the kernel refused access: ptrace restrictions),
 * INVALID_VALUE (the table is not what the descriptor says),
 * NO_MEMORY / OPERATING_SYSTEM. */
doca_error_t core_pci_import_open(const struct softdoca_pci_desc *d, struct core_pci_import **out);

/* Unmap and close everything; NULL is a no-op. */
void core_pci_import_close(struct core_pci_import *im);

/* Whether the exporter still lives and the export is still published.
 * Errors: CONNECTION_ABORTED (exporter exited), NOT_FOUND (revoked). */
doca_error_t core_pci_import_check(const struct core_pci_import *im, const char *op);

/* core_pci_import_check without logging, from any thread: true while the
 * exporter lives and the export is published. */
bool core_pci_import_alive(const struct core_pci_import *im);

/* The shared value cell of an imported sync event. */
uint64_t *core_pci_import_value(const struct core_pci_import *im);

/* Copy len bytes between exporter memory at remote and local memory at
 * local (to_remote: write the exporter's memory), after checking the range
 * and permission against what the exporter published. Errors: as
 * core_pci_import_check, INVALID_VALUE (outside the exported range, or the
 * exporter's memory is not mapped), NOT_PERMITTED (permission missing, or
 * the kernel refused: ptrace restrictions, logged with the fix). */
doca_error_t core_pci_import_copy(struct core_pci_import *im, uint64_t remote, void *local, size_t len,
				  bool to_remote);

/* ---- the DMA engine (libdoca_dma) ---- */

struct doca_mmap;

/* The import behind an mmap created from a PCI export; NULL for any other
 * mmap (mmap.c). */
struct core_pci_import *core_mmap_pci_import(const struct doca_mmap *mmap);

/* Whether a DMA engine may read (write false) or write the memory of mmap:
 * local mmaps yes, PCI imports if the export granted it (NOT_PERMITTED),
 * RDMA imports never (NOT_SUPPORTED: one-sided RDMA reaches those). Logs
 * why not. */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_dma_check(const struct doca_mmap *mmap, bool write);

/* Copy len bytes from src (in src_mmap) to dst (in dst_mmap), wherever
 * each lives: memmove for local memory, process_vm_* for PCI imports.
 * Errors: those of core_pci_import_copy. */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_copy(struct doca_mmap *dst_mmap, uintptr_t dst,
						 struct doca_mmap *src_mmap, uintptr_t src, size_t len);

/* ---- tests ---- */

/* Read /proc/<pid>/maps as text even where PROCMAP_QUERY exists (set
 * before the exporter and the importer open theirs). */
SOFTDOCA_EXPORT void softdoca_pci_test_maps_text(bool on);

/* Exporters of this process behave as if userfaultfd were unavailable. */
SOFTDOCA_EXPORT void softdoca_pci_test_no_watch(bool on);

#endif /* SOFTDOCA_CORE_MMAP_PCI_H_ */
