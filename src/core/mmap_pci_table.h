/*
 * softdoca — PCI exports: the layout of an exporting process's shared
 * table (exporter and importers map the same memfd). Private to the
 * mmap_pci*.c files; mmap_pci.h has the design.
 */
#ifndef SOFTDOCA_CORE_MMAP_PCI_TABLE_H_
#define SOFTDOCA_CORE_MMAP_PCI_TABLE_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mmap_pci.h"

#define PCI_TABLE_MAGIC "SDPCITBL"
#define PCI_TABLE_VERSION 1u

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

struct pci_table_header {
	char magic[8];
	uint32_t version;
	uint32_t pid;
	uint64_t nonce;
	uint32_t num_slots;
	uint32_t slot_size;
	uint8_t pad[32];
};

struct pci_table {
	struct pci_table_header hdr;
	struct pci_slot slots[SOFTDOCA_PCI_TABLE_SLOTS];
};

_Static_assert(sizeof(struct pci_slot) == 64, "slot layout is shared between processes");
_Static_assert(sizeof(struct pci_table_header) == 64, "header layout is shared between processes");

#endif /* SOFTDOCA_CORE_MMAP_PCI_TABLE_H_ */
