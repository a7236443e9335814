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
 *
 * Memory unmapped or replaced without doca_mmap_stop (issue 19, item 4).
 * On hardware the registration pins the exported pages: if the host
 * unmaps them and maps something else at that address, the DPU still
 * reaches the old pages, never the new mapping. process_vm_readv/writev go
 * by address, so the importer must find out, and it sees the exporter's
 * address space only through the kernel, which tells mappings apart only
 * for some memory:
 *
 *  - A file mapping (memfd, shared anonymous memory, hugetlbfs, any file)
 *    shows device, inode and offset in /proc/<pid>/maps. The export
 *    records what backs its range as pieces (runs of one backing, at most
 *    8; a range not all mapped is refused) in its slot, and an importer
 *    can look them up around each copy:
 *    one PROCMAP_QUERY ioctl per mapping on its open /proc/<pid>/maps
 *    (Linux >= 6.11, ~0.2 us), else the text of that file up to the range
 *    (tens of us with a few hundred mappings). An inode number is unique
 *    only while the file lives (ext4 gives a freed one to the next file at
 *    once), so the exporter keeps a second, inaccessible mapping of such a
 *    piece while it is exported (mremap with old size 0; MAP_SHARED only).
 *  - Private anonymous memory (malloc, mmap, stacks, the heap) shows
 *    nothing that tells a new mapping at the same address from the old:
 *    same bounds, inode 0. A name (PR_SET_VMA_ANON_NAME) would, but needs
 *    CONFIG_ANON_VMA_NAME (not set on the 6.18 kernel this was written
 *    on), is hidden for [heap] and [stack], and would overwrite the
 *    application's or glibc's own names. Splitting the range with madvise
 *    flags is visible (bounds) but a same-size replacement of a whole
 *    mapping is not, and the application's own madvise/mprotect would
 *    look like replacements. Aliasing (a second mapping of the same pages)
 *    exists only for shared mappings, and turning the memory into a memfd
 *    at export would change fork semantics under the application.
 *
 * So the exporter watches instead (mmap_pci_watch.c), whatever it can:
 * the pieces are registered with one userfaultfd of the process in
 * write-protect mode, which by itself changes nothing (no page is ever
 * write-protected), asking only for unmap and remap events. Anonymous
 * memory can be registered so, shmem and hugetlbfs too from Linux 5.19.
 * The kernel then holds every munmap, mremap, brk shrink or MAP_FIXED
 * mmap over watched memory until a thread has read the event. The
 * exporter's watch thread first sets the table's paused flag (importers
 * of watched exports wait), waits for copies in flight (as a revoke
 * does), then reads the events and turns every export they touch into a
 * tombstone (slot id PCI_ID_UNMAPPED, so that importers can say why), and
 * clears the flag. A munmap thus returns only once no importer can reach
 * the range. Per copy the importer reads the flag and polls its copy of
 * the userfaultfd (pidfd_getfd), which shows an event queued before the
 * watch thread woke. Only file pieces the kernel cannot watch (regular
 * files; shmem before 5.19) are looked up per copy as above; stopping the
 * export unregisters what no other live export needs.
 *
 * Checks and copies are not atomic. A read is checked after it copied,
 * and its bytes are wiped if the check fails: it never returns bytes of a
 * replacement, except in two gaps: between an unmapping thread dropping
 * the mm lock and queuing its event (a few instructions in the kernel,
 * should another exporter thread map and fill the address right there),
 * and a looked-up file replaced and restored (same file, same offset)
 * within one copy. A write is checked before (not to land) and after (to
 * report): it can still land in a replacement made between its check and
 * its system call (about a microsecond) by another exporter thread, or
 * by a MAP_FIXED mmap over the memory; it then fails, too late for the
 * replacement. An exporter whose one thread unmaps and then maps is exact
 * for watched memory: its munmap waits for copies in flight.
 *
 * Cost per copy, beyond process_vm_*, whatever its size: watched memory,
 * a load and one poll() before a write and one after any copy; looked-up
 * files, one PROCMAP_QUERY instead of each poll. Measured on a busy
 * 2-core VM (softdoca_mmap_copy, 4 KiB, main -> this): anonymous or memfd
 * read 0.70 -> 0.90 us, write 0.70 -> 1.12 us; a regular file read
 * 0.69 -> 0.97 us, write 0.71 -> 1.21 us; a regular file with the text of
 * the maps (an exporter of ~35 mappings) read 12 us, write 23 us. A DMA
 * memcpy task of 4 KiB: 0.85 -> 1.07 us (read), 1.28 us (write). At 1 MiB
 * (55-75 us a copy) the difference is below the noise between runs.
 *
 * Not covered: memory reused within one mapping (free() then malloc() of
 * the same heap chunk, MADV_DONTNEED) is the same mapping, and on hardware
 * the same pinned page too. Private file mappings (a program's .data),
 * and hugetlbfs pieces not aligned to the huge page, are looked up but
 * cannot be pinned: should the file be deleted and unmapped and a new
 * file get its inode number, that goes unnoticed. Where userfaultfd is
 * unavailable (seccomp, CONFIG_USERFAULTFD=n, no write-protect
 * registration on the architecture) the export logs a WARNING: anonymous
 * memory then goes unwatched. An exporter that execs without stopping its
 * exports is not covered for watched memory.
 *
 * A refused copy fails with DOCA_ERROR_NOT_FOUND, as after a revoke: the
 * export no longer names the memory it named, and the importer's remedy
 * is the same (a new export); not INVALID_VALUE (the importer's range and
 * permission are right) nor NOT_PERMITTED (whose remedy is a permission
 * or the ptrace settings). One ERROR line per import says what the
 * exporter did and how to fix it; the exporter's own doca_mmap_stop logs
 * a WARNING.
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
