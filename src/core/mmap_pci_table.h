/*
 * softdoca — PCI exports: the layout of an exporting process's shared
 * table (exporter and importers map the same memfd), and the interfaces
 * of the two files that guard exported memory against being unmapped or
 * replaced without doca_mmap_stop: mmap_pci_vma.c (what backs a range,
 * from /proc/<pid>/maps) and mmap_pci_watch.c (the exporter's userfaultfd
 * watch). Private to the mmap_pci*.c files; mmap_pci.h has the design.
 */
#ifndef SOFTDOCA_CORE_MMAP_PCI_TABLE_H_
#define SOFTDOCA_CORE_MMAP_PCI_TABLE_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mmap_pci.h"

#define PCI_TABLE_MAGIC "SDPCITBL"
#define PCI_TABLE_VERSION 2u

/* Slot id of an export revoked because its memory was unmapped (by the
 * watch thread): never a real id, which count up from 1. */
#define PCI_ID_UNMAPPED UINT64_MAX

/* Pieces of one mmap export: runs of one backing (anonymous memory, or
 * one file at contiguous offsets). More are refused at export. */
#define PCI_EXPORT_PIECES 8u

/* One export in the shared table. id 0: nothing published. */
struct pci_slot {
	_Atomic uint64_t id;
	_Atomic uint32_t users; /* importer copies in flight */
	uint32_t permissions;
	uint64_t addr;
	uint64_t len;
	uint8_t secret[SOFTDOCA_PCI_SECRET_LEN];
	uint64_t value; /* sync events; __atomic builtins only */
	uint32_t kind;
	uint32_t reserved;
};

/* A piece of an exported range, page aligned. ino 0 (and dev 0):
 * anonymous memory; else a file (memfd, shared anonymous memory and
 * hugetlbfs included) and the file offset of start. flags are part of
 * what backs it; state is what the exporter does about it. */
#define PCI_PIECE_SHARED 1u  /* flags: mapped MAP_SHARED */
#define PCI_PIECE_WATCHED 1u /* state: registered with the exporter's userfaultfd */
struct pci_piece {
	uint64_t start;
	uint64_t end;
	uint64_t ino;
	uint64_t pgoff;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t flags;
	uint32_t state;
};

/* The pieces of an mmap export's range, written before its id is
 * published and left alone while it is. */
#define PCI_FLAG_WATCHED 1u /* some pieces are watched */
#define PCI_FLAG_CHECKED 2u /* some file-backed pieces are not: importers look them up */
struct pci_pieces {
	uint32_t n;
	uint32_t flags;
	struct pci_piece piece[PCI_EXPORT_PIECES];
};

struct pci_table_header {
	char magic[8];
	uint32_t version;
	uint32_t pid;
	uint64_t nonce;
	uint32_t num_slots;
	uint32_t slot_size;
	int32_t watch_fd;	 /* the exporter's userfaultfd, -1: none */
	_Atomic uint32_t paused; /* the watch thread is revoking: no copy of a watched export starts */
	uint8_t pad[24];
};

struct pci_table {
	struct pci_table_header hdr;
	struct pci_slot slots[SOFTDOCA_PCI_TABLE_SLOTS];
	struct pci_pieces pieces[SOFTDOCA_PCI_TABLE_SLOTS];
};

_Static_assert(sizeof(struct pci_slot) == 64, "slot layout is shared between processes");
_Static_assert(sizeof(struct pci_table_header) == 64, "header layout is shared between processes");
_Static_assert(sizeof(struct pci_piece) == 48, "piece layout is shared between processes");

static inline bool pci_piece_is_file(const struct pci_piece *p)
{
	return p->ino != 0 || p->dev_major != 0 || p->dev_minor != 0;
}

/* A live mmap export of the table (not a sync event, not revoked). */
static inline bool pci_slot_live_mmap(const struct pci_slot *s)
{
	uint64_t id = atomic_load(&s->id);

	return id != 0 && id != PCI_ID_UNMAPPED && s->kind == SOFTDOCA_PCI_KIND_MMAP;
}

/* ---- mmap_pci_vma.c: what backs a range of a process ---- */

/* A reader of one process's /proc/<pid>/maps, kept open: it names that
 * process's address space (after an exec it reads as gone). */
struct core_pci_maps;

/* Open pid's maps (0: this process). Errors: NOT_PERMITTED (ptrace
 * refused, logged with the fix), NOT_FOUND (no such process),
 * OPERATING_SYSTEM. */
doca_error_t core_pci_maps_open(pid_t pid, struct core_pci_maps **out);
void core_pci_maps_close(struct core_pci_maps *m);

/* The pieces of [lo, hi) (page aligned), at most max of them. */
enum core_pci_pieces_result {
	PCI_PIECES_OK,
	PCI_PIECES_HOLE,     /* part of the range is not mapped */
	PCI_PIECES_TOO_MANY, /* more than max pieces */
	PCI_PIECES_GONE,     /* the address space is gone (exit, exec) */
	PCI_PIECES_ERROR,    /* the kernel refused to tell; errno in *err */
};
enum core_pci_pieces_result core_pci_pieces_read(struct core_pci_maps *m, uint64_t lo, uint64_t hi,
						 struct pci_piece *out, uint32_t max, uint32_t *n, int *err);

/* Whether [lo, hi) is backed now as the n pieces (of a wider range) say. */
enum core_pci_pieces_verdict {
	PCI_PIECES_SAME,
	PCI_PIECES_CHANGED, /* unmapped, or another mapping */
	PCI_PIECES_UNKNOWN, /* the address space is gone, or unreadable: errno in *err */
};
enum core_pci_pieces_verdict core_pci_pieces_check(struct core_pci_maps *m, uint64_t lo, uint64_t hi,
						   const struct pci_piece *want, uint32_t n, int *err);

/* A second, inaccessible mapping of a shared file piece that is not
 * watched, kept while it is exported: the file stays referenced, so its
 * inode number cannot pass to a new file that an importer would take for
 * it. */
struct pci_pin {
	void *addr;
	size_t len;
};

/* Exporter: pin the unwatched shared file pieces of p (pins[k] for piece
 * k; a private file mapping cannot be pinned: logged). */
void core_pci_pins_take(const struct pci_pieces *p, struct pci_pin pins[PCI_EXPORT_PIECES]);
void core_pci_pins_release(struct pci_pin pins[PCI_EXPORT_PIECES]);

/* ---- mmap_pci_watch.c: the exporter's watch on exported memory ---- */

/* Under the table lock, before publishing: watch the pieces of an export
 * that the kernel lets us watch (anonymous memory; shmem and hugetlbfs
 * from Linux 5.19), starting the watch when needed, and mark them. Logs
 * anonymous pieces that cannot be. */
void core_pci_watch_add(struct pci_table *t, struct pci_pieces *p);

/* Under the table lock, once slot is no longer live: stop watching what
 * no other live export needs. */
void core_pci_watch_remove(struct pci_table *t, uint32_t slot);

/* Under the table lock in a forked child: forget the parent's watch. */
void core_pci_watch_drop_inherited(void);

/* Importer: its own copy of the exporter's userfaultfd (through pidfd),
 * to see events queued before the exporter's thread reads them; -1 when
 * there is none to have. */
int core_pci_watch_import_fd(int pidfd, const struct pci_table *t, uint32_t pid);

/* Importer: whether the exporter's watch thread is revoking exports
 * (no copy of a watched export may start or be trusted meanwhile)... */
bool core_pci_watch_paused(const struct pci_table *t);

/* ...or is about to: an event is queued on its userfaultfd (the
 * importer's copy, watch_fd; false when -1). */
bool core_pci_watch_pending(int watch_fd);

#endif /* SOFTDOCA_CORE_MMAP_PCI_TABLE_H_ */
