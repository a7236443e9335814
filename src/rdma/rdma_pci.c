/*
 * softdoca — PCI-imported memory as the local buffer of an RDMA task.
 *
 * DESIGN. On a BlueField, the DPU imports a host's PCI export
 * (doca_mmap_export_pci on the host, doca_mmap_create_from_export on the
 * DPU) and its NIC moves RDMA data straight between host memory and the
 * wire: a write's source, a read's or a receive's destination can be host
 * memory, with no staging by the program. Here the "host" is another
 * process whose memory this process reaches only through
 * process_vm_readv/writev (core_pci_import_copy, under the exporter's
 * revocation lease), and the engine below sends from and receives into
 * this process's addresses (UCX, the stream link, the same-host direct
 * path all take a plain pointer). So the RDMA layer stages:
 *
 *  - a source on a PCI import (send, send_imm, write, write_imm,
 *    notify_set) is copied from the exporter into a bounce buffer at
 *    submit, and the work request sends from the bounce buffer;
 *  - a destination on a PCI import (receive, read, the result of the two
 *    atomics, sync event get and notify_add) is received into a bounce
 *    buffer, and its bytes go to the exporter when the engine reports the
 *    work request done, before the completion is queued for the PE.
 *
 * Only the sges on PCI imports are staged (a list may mix local and
 * imported buffers). Passing the copy down to the engine instead would
 * mean teaching every link (UCX rendezvous, TCP stream, direct path,
 * loopback, fault injector) a second kind of address; one copy into
 * memory of ours is what the target already does for PCI regions
 * (target.c, bounce_get) and costs the same process_vm call either way.
 *
 * Checks: at submit, the buffer's mmap must be started, created with the
 * context's device, its exporter alive (else CONNECTION_ABORTED) and the
 * export still published (else NOT_FOUND), and the export must grant the
 * access (a destination needs DOCA_ACCESS_FLAG_PCI_READ_WRITE:
 * NOT_PERMITTED) — softdoca_mmap_task_local_info and rdma_buf_local.
 * Every copy then checks range and permission against what the exporter
 * published (the authority: a descriptor may be stale or forged:
 * INVALID_VALUE, NOT_PERMITTED), counts itself in the export's slot so
 * that the exporter's doca_mmap_stop waits for it, and maps a kernel
 * refusal to NOT_PERMITTED with the ptrace_scope line (mmap_pci.c). A
 * destination whose export was revoked or whose exporter died between
 * submit and completion completes with that error: the bytes arrived but
 * could not be placed, as a NIC reports a local protection error.
 *
 * Memory: one allocation per staged work request (the bounce buffer and
 * the record of its sges), freed when it is done, so nothing is held
 * between operations and nothing grows with repetition. A destination's
 * bounce buffer is as large as the room it offers (a receive posted on a
 * whole exported region), but malloc serves large sizes with fresh
 * anonymous pages, which cost memory only once data lands in them.
 * Ordinary local mmaps never come here: one flag test at submit and at
 * completion (softdoca_perf write_lat on soft_lo, 200,000 iterations,
 * three runs each: median 1.07-1.15 us before, 1.02-1.12 us after; noise).
 * The copy out runs wherever the engine reports completion, as the
 * target's PCI copies do.
 */
#include <stdlib.h>

#include "buf.h"
#include "log_internal.h"
#include "mmap_pci.h"
#include "rdma_pci.h"

SDK_LOG_REGISTER(RDMA::PCI)

struct rdma_pci_sge {
	struct doca_mmap *mmap; /* the PCI import the buffer is on */
	uint64_t addr;		/* in the exporter */
	uint32_t index;		/* sge index in the work request */
};

struct rdma_pci_stage {
	uint32_t n;
	bool dest;
	struct rdma_pci_sge sge[ENGINE_MAX_SGE];
	unsigned char *bounce; /* after this struct, in the same allocation */
};

/* The bounce buffer starts aligned for the 8-byte results of atomics. */
#define STAGE_HEAD ((sizeof(struct rdma_pci_stage) + 63u) & ~(size_t)63u)

static const struct doca_buf *list_at(const struct doca_buf *list, uint32_t n)
{
	while (list != NULL && n-- > 0)
		list = softdoca_buf_list_next(list);
	return list;
}

doca_error_t rdma_pci_stage_in(struct engine_wr *wr, const struct doca_buf *list, uint32_t pci_sges, bool dest,
			       struct rdma_pci_stage **stage_out)
{
	struct rdma_pci_stage *st;
	size_t total = 0, off = 0;
	uint32_t i;

	for (i = 0; i < wr->num_sge; i++)
		if (pci_sges & (1u << i))
			total += wr->sge[i].len;
	st = malloc(STAGE_HEAD + (total > 0 ? total : 1));
	if (st == NULL) {
		SDK_LOG_ERR("rdma: no memory for a %zu-byte bounce buffer of a buffer on a PCI import", total);
		return DOCA_ERROR_NO_MEMORY;
	}
	st->n = 0;
	st->dest = dest;
	st->bounce = (unsigned char *)st + STAGE_HEAD;
	for (i = 0; i < wr->num_sge; i++) {
		const struct doca_buf *buf = list_at(list, i);
		struct rdma_pci_sge *p = &st->sge[st->n];

		if (!(pci_sges & (1u << i)))
			continue;
		if (buf == NULL || softdoca_buf_get_mmap(buf) == NULL) {
			SDK_LOG_ERR("rdma: buffer %u of the list changed while the task was submitted", i);
			free(st);
			return DOCA_ERROR_INVALID_VALUE;
		}
		p->mmap = softdoca_buf_get_mmap(buf);
		p->addr = (uint64_t)(uintptr_t)wr->sge[i].addr;
		p->index = i;
		st->n++;
		wr->sge[i].addr = st->bounce + off;
		off += wr->sge[i].len;
		if (dest || wr->sge[i].len == 0)
			continue;
		doca_error_t err = softdoca_mmap_copy(NULL, (uintptr_t)wr->sge[i].addr, p->mmap, (uintptr_t)p->addr,
						      wr->sge[i].len);
		if (err != DOCA_SUCCESS) {
			free(st);
			return err;
		}
	}
	*stage_out = st;
	return DOCA_SUCCESS;
}

void rdma_pci_stage_out(struct rdma_pci_stage *st, struct engine_wr *wr, uint64_t filled)
{
	uint32_t k = 0;

	if (!st->dest || wr->status != DOCA_SUCCESS) {
		free(st);
		return;
	}
	/* The engine filled the sges in order; only the staged ones move. */
	for (uint32_t i = 0; i < wr->num_sge && filled > 0 && k < st->n; i++) {
		size_t take = wr->sge[i].len < filled ? wr->sge[i].len : (size_t)filled;

		filled -= take;
		if (st->sge[k].index != i)
			continue;
		if (take > 0) {
			doca_error_t err = softdoca_mmap_copy(st->sge[k].mmap, (uintptr_t)st->sge[k].addr, NULL,
							      (uintptr_t)wr->sge[i].addr, take);
			if (err != DOCA_SUCCESS) {
				wr->status = err;
				break;
			}
		}
		k++;
	}
	free(st);
}

void rdma_pci_stage_free(struct rdma_pci_stage *st)
{
	free(st);
}
