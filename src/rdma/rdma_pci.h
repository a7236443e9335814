/*
 * softdoca — PCI-imported memory as the local buffer of an RDMA task
 * (the data path is described in rdma_pci.c). Internal, not installed.
 */
#ifndef SOFTDOCA_RDMA_PCI_H_
#define SOFTDOCA_RDMA_PCI_H_

#include <stdint.h>

#include <doca_buf.h>

#include "engine.h"

struct rdma_pci_stage;

/* Stage a work request whose sges flagged in pci_sges (bit n: sge n) are
 * on PCI imports: each such sge is pointed at a bounce buffer of ours;
 * a source's bytes are copied into it now. list is the task's local
 * buffer list, sge n being its n-th buffer; dest: the task writes the
 * list. Errors: those of the copy (NOT_FOUND revoked, CONNECTION_ABORTED
 * exporter exited, INVALID_VALUE outside what the exporter published,
 * NOT_PERMITTED the export or the kernel refused), NO_MEMORY; nothing is
 * left allocated then. */
doca_error_t rdma_pci_stage_in(struct engine_wr *wr, const struct doca_buf *list, uint32_t pci_sges, bool dest,
			       struct rdma_pci_stage **stage_out);

/* The work request is done (any thread): a successful destination's
 * bytes (filled, counted from its first sge) go from the bounce buffer to
 * the exporters; a failed copy becomes the work request's status. Frees
 * the stage. */
void rdma_pci_stage_out(struct rdma_pci_stage *stage, struct engine_wr *wr, uint64_t filled);

/* Drop a stage whose work request was never posted. NULL: no-op. */
void rdma_pci_stage_free(struct rdma_pci_stage *stage);

#endif /* SOFTDOCA_RDMA_PCI_H_ */
