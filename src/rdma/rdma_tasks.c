/*
 * softdoca — the eleven DOCA RDMA task types.
 *
 * Each task struct starts with struct rdma_task: the struct doca_task the
 * PE calls back with, the engine_wr that goes to the soft NIC (so posting
 * never allocates) and the connection. Submitting translates the DOCA
 * fields into the work request and posts it; the engine's done() callback
 * (any thread) records the results and queues the completion for
 * doca_pe_progress.
 *
 * Data placement (DOCA behaviour): sources supply the data window
 * [data, data + data_len) of each buffer of their list; local destinations
 * are filled after their data, from data + data_len to the end of the
 * buffer, buffer by buffer, and their data_len grows by what was written.
 * Buffers on an mmap made by doca_mmap_create_from_export hold the peer's
 * addresses, which are never dereferenced here: a write lands after the
 * remote buffer's data, a read copies its data window, an atomic works on
 * its first 8 bytes of data. The remote buffer's own data_len is left
 * alone: it describes the peer's memory, which only the peer owns (real
 * RDMA hardware does not touch it either).
 *
 * Local buffers may also be on an mmap made from a host's PCI export (the
 * DPU side of a host/DPU pair): those sges are staged through a buffer of
 * ours, copied from the exporter at submit or to it when the data arrived
 * (rdma_pci.c says why and how); every other buffer is used in place.
 *
 * doca_task_try_submit validates everything below and refuses a bad task
 * with an error; doca_task_submit does not validate up front, so a bad task
 * there completes through its error callback, as a NIC reports a malformed
 * work request.
 *
 * A one-sided task the peer refused completes with DOCA's status; when
 * the peer said why (which of its sets lacks which flag, or its region's
 * bounds), one ERROR line per connection and reason says it, with the fix
 * (rdma_explain_refusal; docs/troubleshooting.md, case 5).
 */
#include <string.h>

#include <doca_buf.h>
#include <doca_rdma.h>

#include "buf.h"
#include "log_internal.h"
#include "mmap.h"
#include "rdma.h"
#include "rdma_pci.h"
#include "sync_event.h"
#include "trace.h"

SDK_LOG_REGISTER(RDMA::TASK)

_Static_assert(ENGINE_SECRET_LEN == SOFTDOCA_MMAP_SECRET_LEN, "engine and mmap secrets differ in size");
/* A receive's result kind is handed out as the DOCA opcode. */
_Static_assert((int)ENGINE_RECV_SEND == (int)DOCA_RDMA_OPCODE_RECV_SEND &&
		       (int)ENGINE_RECV_SEND_IMM == (int)DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM &&
		       (int)ENGINE_RECV_WRITE_IMM == (int)DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM,
	       "engine receive kinds and DOCA opcodes differ");

/* The common head of every RDMA task. */
struct rdma_task {
	struct doca_task task;		    /* first: the PE calls back with this pointer */
	struct engine_wr wr;		    /* posted to the engine */
	struct doca_rdma_connection *conn;  /* NULL for receive */
	/* Local buffers on PCI imports (rdma_pci.c): which sges of wr are
	 * (bit n: sge n; set by prepare), and their staging while in flight. */
	uint32_t pci_sges;
	struct rdma_pci_stage *pci;
};

_Static_assert(ENGINE_MAX_SGE <= 32, "pci_sges has one bit per sge");

struct doca_rdma_task_receive {
	struct rdma_task base;
	struct doca_buf *dst_buf;
	/* Results of the last run. */
	uint32_t result_len;
	doca_be32_t result_imm;
	enum doca_rdma_opcode result_opcode;
	struct doca_rdma_connection *result_conn;
};

struct doca_rdma_task_send {
	struct rdma_task base;
	const struct doca_buf *src_buf;
};

struct doca_rdma_task_send_imm {
	struct rdma_task base;
	const struct doca_buf *src_buf;
	doca_be32_t immediate_data;
};

struct doca_rdma_task_read {
	struct rdma_task base;
	const struct doca_buf *src_buf; /* remote */
	struct doca_buf *dst_buf;	/* local list */
	uint32_t result_len;
};

struct doca_rdma_task_write {
	struct rdma_task base;
	const struct doca_buf *src_buf; /* local list */
	struct doca_buf *dst_buf;	/* remote */
};

struct doca_rdma_task_write_imm {
	struct rdma_task base;
	const struct doca_buf *src_buf;
	struct doca_buf *dst_buf;
	doca_be32_t immediate_data;
};

struct doca_rdma_task_atomic_cmp_swp {
	struct rdma_task base;
	struct doca_buf *dst_buf;    /* remote */
	struct doca_buf *result_buf; /* local */
	uint64_t cmp_data;
	uint64_t swap_data;
};

struct doca_rdma_task_atomic_fetch_add {
	struct rdma_task base;
	struct doca_buf *dst_buf;
	struct doca_buf *result_buf;
	uint64_t add_data;
};

struct doca_rdma_task_remote_net_sync_event_get {
	struct rdma_task base;
	const struct doca_sync_event_remote_net *sync_event;
	struct doca_buf *dst_buf;
	uint32_t result_len;
};

struct doca_rdma_task_remote_net_sync_event_notify_set {
	struct rdma_task base;
	struct doca_sync_event_remote_net *sync_event;
	const struct doca_buf *src_buf;
};

struct doca_rdma_task_remote_net_sync_event_notify_add {
	struct rdma_task base;
	struct doca_sync_event_remote_net *sync_event;
	struct doca_buf *result_buf;
	uint64_t add_data;
};

/* The PE calls the typed callbacks with the struct doca_task pointer. */
_Static_assert(offsetof(struct rdma_task, task) == 0, "doca_task must come first");
#define RDMA_TASK_BASE_FIRST(T) \
	_Static_assert(offsetof(struct doca_rdma_task_##T, base) == 0, "the rdma_task head must come first")
RDMA_TASK_BASE_FIRST(receive);
RDMA_TASK_BASE_FIRST(send);
RDMA_TASK_BASE_FIRST(send_imm);
RDMA_TASK_BASE_FIRST(read);
RDMA_TASK_BASE_FIRST(write);
RDMA_TASK_BASE_FIRST(write_imm);
RDMA_TASK_BASE_FIRST(atomic_cmp_swp);
RDMA_TASK_BASE_FIRST(atomic_fetch_add);
RDMA_TASK_BASE_FIRST(remote_net_sync_event_get);
RDMA_TASK_BASE_FIRST(remote_net_sync_event_notify_set);
RDMA_TASK_BASE_FIRST(remote_net_sync_event_notify_add);

static const struct rdma_task *rdma_task_of(const struct doca_task *task)
{
	return container_of(task, struct rdma_task, task);
}

static struct doca_rdma *rdma_of(const struct doca_task *task)
{
	return rdma_from_ctx(softdoca_task_ctx(task));
}

/* Typed view of a task of a known type. */
#define RDMA_TASK_AS(T, task) container_of(rdma_task_of(task), const struct doca_rdma_task_##T, base)

static void rdma_task_null(const char *func)
{
	SDK_LOG_ERR("%s: task is NULL", func);
}

/* ------------------------------------------------------------------ */
/* Buffers                                                            */

/* A PCI import as local buffer index of wr (rdma_pci.c): the export must
 * grant the access; the sge is staged at submit. */
static __attribute__((noinline)) doca_error_t rdma_buf_pci(uint32_t perms, bool need_write, const char *what,
							   uint32_t index, struct engine_wr *wr)
{
	if (need_write && !(perms & DOCA_ACCESS_FLAG_PCI_READ_WRITE)) {
		SDK_LOG_ERR("%s buffer %u: DOCA_ERROR_NOT_PERMITTED: the buffer is on a PCI import whose export grants "
			    "0x%x; a buffer the task writes into needs DOCA_ACCESS_FLAG_PCI_READ_WRITE. Fix: the "
			    "exporter grants it with doca_mmap_set_permissions before doca_mmap_start and exports again",
			    what, index, perms);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!need_write && !(perms & (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE))) {
		SDK_LOG_ERR("%s buffer %u: DOCA_ERROR_NOT_PERMITTED: the buffer is on a PCI import whose export grants "
			    "0x%x, no PCI read",
			    what, index, perms);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	container_of(wr, struct rdma_task, wr)->pci_sges |= 1u << index;
	return DOCA_SUCCESS;
}

/* A local buffer, index of wr's sges: on a started local mmap that has the
 * context's device, writable if need_write; or on a PCI import of the
 * context's device (rdma_buf_pci). */
static doca_error_t rdma_buf_local(const struct doca_rdma *rdma, const struct doca_buf *buf, bool need_write,
				   const char *what, uint32_t index, struct engine_wr *wr)
{
	struct doca_mmap *mmap = softdoca_buf_get_mmap(buf);
	uint32_t perms = 0;
	bool pci = false;
	doca_error_t status = mmap == NULL ? DOCA_ERROR_INVALID_VALUE :
					     softdoca_mmap_task_local_info(mmap, rdma->ctx.dev, &perms, &pci);

	if (unlikely(pci)) /* a PCI import; a refusal was said */
		return status != DOCA_SUCCESS ? status : rdma_buf_pci(perms, need_write, what, index, wr);
	if (status != DOCA_SUCCESS) {
		SDK_LOG_ERR("%s: buffer %u is not in local memory usable by this context (a started local mmap with "
			    "the context's device)",
			    what, index);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (need_write && !(perms & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE)) {
		SDK_LOG_ERR("%s buffer %u: DOCA_ERROR_NOT_PERMITTED: the local mmap (doca_mmap_set_permissions) "
			    "lacks DOCA_ACCESS_FLAG_LOCAL_READ_WRITE, which a buffer the task writes into needs. Fix: "
			    "grant it with doca_mmap_set_permissions before doca_mmap_start",
			    what, index);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return DOCA_SUCCESS;
}

/* A remote buffer: on a started mmap made from the peer's export, which
 * grants need_perm (the peer checks that again). */
static doca_error_t rdma_buf_remote(const struct doca_buf *buf, uint32_t need_perm, const char *what,
				    struct softdoca_mmap_desc *desc)
{
	struct doca_mmap *mmap = softdoca_buf_get_mmap(buf);

	if (mmap == NULL || softdoca_mmap_remote_info(mmap, desc) != DOCA_SUCCESS) {
		SDK_LOG_ERR("%s: buffer is not on a started mmap made from the peer's export "
			    "(doca_mmap_create_from_export)",
			    what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!(desc->permissions & need_perm)) {
		SDK_LOG_ERR("%s: DOCA_ERROR_NOT_PERMITTED: the remote mmap (doca_mmap_set_permissions on the peer) "
			    "lacks %s, as its export says. Fix: the peer grants it with doca_mmap_set_permissions "
			    "before doca_mmap_start and exports the mmap again",
			    what, softdoca_access_flag_name(need_perm));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return DOCA_SUCCESS;
}

/* A local source list: one sge per buffer, its data window. */
static doca_error_t rdma_sge_source(const struct doca_rdma *rdma, const struct doca_buf *list, uint32_t max_bufs,
				    const char *what, struct engine_wr *wr, uint64_t *total_out)
{
	const struct doca_buf *buf;
	uint64_t total = 0;
	uint32_t n = 0;
	doca_error_t status;

	for (buf = list; buf != NULL; buf = softdoca_buf_list_next(buf), n++) {
		if (n == max_bufs) {
			SDK_LOG_ERR("%s: buffer list is longer than %u (doca_rdma_set_max_send_buf_list_len)", what,
				    max_bufs);
			return DOCA_ERROR_INVALID_VALUE;
		}
		status = rdma_buf_local(rdma, buf, false, what, n, wr);
		if (status != DOCA_SUCCESS)
			return status;
		wr->sge[n].addr = (void *)softdoca_buf_data_addr(buf);
		wr->sge[n].len = softdoca_buf_data_len(buf);
		total += wr->sge[n].len;
	}
	if (total > RDMA_MAX_MESSAGE_SIZE) {
		SDK_LOG_ERR("%s: %llu bytes exceed the largest message (%u bytes)", what, (unsigned long long)total,
			    RDMA_MAX_MESSAGE_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	wr->num_sge = n;
	*total_out = total;
	return DOCA_SUCCESS;
}

/* A local destination list: one sge per buffer, the room after its data. */
static doca_error_t rdma_sge_dest(const struct doca_rdma *rdma, const struct doca_buf *list, uint32_t max_bufs,
				  const char *what, struct engine_wr *wr, uint64_t *room_out)
{
	const struct doca_buf *buf;
	uint64_t room = 0;
	uint32_t n = 0;
	doca_error_t status;

	for (buf = list; buf != NULL; buf = softdoca_buf_list_next(buf), n++) {
		if (n == max_bufs) {
			SDK_LOG_ERR("%s: buffer list is longer than %u allowed", what, max_bufs);
			return DOCA_ERROR_INVALID_VALUE;
		}
		status = rdma_buf_local(rdma, buf, true, what, n, wr);
		if (status != DOCA_SUCCESS)
			return status;
		wr->sge[n].addr = (void *)softdoca_buf_tail_addr(buf);
		wr->sge[n].len = softdoca_buf_tail_room(buf);
		room += wr->sge[n].len;
	}
	wr->num_sge = n;
	*room_out = room;
	return DOCA_SUCCESS;
}

/* After success: data_len of a destination list grows by bytes, buffer by
 * buffer, as the engine filled the sges. */
static void rdma_dest_grow(struct doca_buf *list, uint64_t bytes)
{
	struct doca_buf *buf;

	for (buf = list; buf != NULL && bytes > 0; buf = softdoca_buf_list_next(buf)) {
		size_t room = softdoca_buf_tail_room(buf);
		size_t take = bytes < room ? (size_t)bytes : room;

		softdoca_buf_data_grow(buf, take);
		bytes -= take;
	}
}

static void rdma_remote_fill(struct engine_remote *remote, const struct softdoca_mmap_desc *desc, uint64_t addr,
			     uint64_t len)
{
	remote->region_id = desc->region_id;
	memcpy(remote->secret, desc->secret, ENGINE_SECRET_LEN);
	remote->addr = addr;
	remote->len = len;
}

/* ------------------------------------------------------------------ */
/* Translation to work requests                                       */

static void rdma_wr_done(struct engine_wr *wr);

static void rdma_wr_reset(struct engine_wr *wr, enum engine_opcode opcode, struct engine_conn *conn)
{
	wr->opcode = (uint8_t)opcode;
	wr->conn = conn;
	wr->num_sge = 0;
	memset(&wr->remote, 0, sizeof(wr->remote));
	wr->imm = 0;
	wr->compare = 0;
	wr->operand = 0;
	wr->done = rdma_wr_done;
	wr->trace_task = NULL;
	wr->status = DOCA_SUCCESS;
	wr->result_len = 0;
	wr->result_kind = 0;
	wr->result_imm = 0;
	wr->result_conn = NULL;
	wr->refusal.kind = ENGINE_REFUSAL_NONE;
	container_of(wr, struct rdma_task, wr)->pci_sges = 0;
}

/* The task's connection as the engine knows it. */
static doca_error_t rdma_wr_conn(const struct doca_task *task, const char *what, struct engine_conn **conn_out)
{
	const struct rdma_task *t = rdma_task_of(task);
	doca_error_t status = rdma_conn_check(rdma_of(task), t->conn, what);

	if (status != DOCA_SUCCESS)
		return status;
	*conn_out = t->conn->engine;
	return DOCA_SUCCESS;
}

static doca_error_t receive_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_receive *t = RDMA_TASK_AS(receive, task);
	const struct doca_rdma *rdma = rdma_of(task);
	uint64_t room;

	rdma_wr_reset(wr, ENGINE_OP_RECV, NULL);
	/* No destination: only messages without data fit (DOCA allows it). */
	if (t->dst_buf == NULL)
		return DOCA_SUCCESS;
	return rdma_sge_dest(rdma, t->dst_buf, rdma->props.recv_buf_list_len, "rdma receive: destination", wr, &room);
}

static doca_error_t send_common(const struct doca_task *task, enum engine_opcode opcode, const struct doca_buf *src,
				const char *what, struct engine_wr *wr)
{
	const struct doca_rdma *rdma = rdma_of(task);
	struct engine_conn *conn;
	uint64_t total;
	doca_error_t status;

	status = rdma_wr_conn(task, what, &conn);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_wr_reset(wr, opcode, conn);
	/* No source: an empty message. */
	if (src == NULL)
		return DOCA_SUCCESS;
	return rdma_sge_source(rdma, src, rdma->props.max_send_buf_list_len, what, wr, &total);
}

static doca_error_t send_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	return send_common(task, ENGINE_OP_SEND, RDMA_TASK_AS(send, task)->src_buf, "rdma send: source", wr);
}

static doca_error_t send_imm_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_send_imm *t = RDMA_TASK_AS(send_imm, task);
	doca_error_t status = send_common(task, ENGINE_OP_SEND_IMM, t->src_buf, "rdma send_imm: source", wr);

	wr->imm = t->immediate_data;
	return status;
}

static doca_error_t read_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_read *t = RDMA_TASK_AS(read, task);
	const struct doca_rdma *rdma = rdma_of(task);
	struct softdoca_mmap_desc desc;
	struct engine_conn *conn;
	uint64_t room;
	doca_error_t status;

	status = rdma_wr_conn(task, "rdma read", &conn);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_wr_reset(wr, ENGINE_OP_READ, conn);
	/* No source: read nothing (DOCA allows NULL for both). */
	if (t->src_buf == NULL)
		return DOCA_SUCCESS;
	if (t->dst_buf == NULL) {
		SDK_LOG_ERR("rdma read: destination buffer is NULL but the source is not");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = rdma_buf_remote(t->src_buf, DOCA_ACCESS_FLAG_RDMA_READ, "rdma read: source", &desc);
	if (status != DOCA_SUCCESS)
		return status;
	if (softdoca_buf_data_len(t->src_buf) > RDMA_MAX_MESSAGE_SIZE) {
		SDK_LOG_ERR("rdma read: %zu bytes exceed the largest message (%u bytes)",
			    softdoca_buf_data_len(t->src_buf), RDMA_MAX_MESSAGE_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = rdma_sge_dest(rdma, t->dst_buf, rdma->props.max_send_buf_list_len, "rdma read: destination", wr,
			       &room);
	if (status != DOCA_SUCCESS)
		return status;
	if (softdoca_buf_data_len(t->src_buf) > room) {
		SDK_LOG_ERR("rdma read: the source holds %zu bytes but the destination has room for %llu after its data",
			    softdoca_buf_data_len(t->src_buf), (unsigned long long)room);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Only the head of a remote list counts, as DOCA documents. */
	rdma_remote_fill(&wr->remote, &desc, softdoca_buf_data_addr(t->src_buf), softdoca_buf_data_len(t->src_buf));
	return DOCA_SUCCESS;
}

static doca_error_t write_common(const struct doca_task *task, enum engine_opcode opcode, const struct doca_buf *src,
				 const struct doca_buf *dst, const char *what, struct engine_wr *wr)
{
	const struct doca_rdma *rdma = rdma_of(task);
	struct softdoca_mmap_desc desc;
	struct engine_conn *conn;
	uint64_t total = 0, room;
	doca_error_t status;

	status = rdma_wr_conn(task, what, &conn);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_wr_reset(wr, opcode, conn);
	if (dst == NULL) {
		/* No destination: write nothing (DOCA allows NULL for both). */
		if (src == NULL)
			return DOCA_SUCCESS;
		SDK_LOG_ERR("%s: destination buffer is NULL but the source is not", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (src != NULL) {
		status = rdma_sge_source(rdma, src, rdma->props.max_send_buf_list_len, what, wr, &total);
		if (status != DOCA_SUCCESS)
			return status;
	}
	status = rdma_buf_remote(dst, DOCA_ACCESS_FLAG_RDMA_WRITE, what, &desc);
	if (status != DOCA_SUCCESS)
		return status;
	room = softdoca_buf_tail_room(dst);
	if (total > room) {
		SDK_LOG_ERR("%s: the source holds %llu bytes but the remote destination has room for %llu after its "
			    "data",
			    what, (unsigned long long)total, (unsigned long long)room);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Lands after the remote buffer's data; only the head counts. */
	rdma_remote_fill(&wr->remote, &desc, softdoca_buf_tail_addr(dst), room);
	return DOCA_SUCCESS;
}

static doca_error_t write_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_write *t = RDMA_TASK_AS(write, task);

	return write_common(task, ENGINE_OP_WRITE, t->src_buf, t->dst_buf, "rdma write", wr);
}

static doca_error_t write_imm_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_write_imm *t = RDMA_TASK_AS(write_imm, task);
	doca_error_t status = write_common(task, ENGINE_OP_WRITE_IMM, t->src_buf, t->dst_buf, "rdma write_imm", wr);

	wr->imm = t->immediate_data;
	return status;
}

static doca_error_t atomic_common(const struct doca_task *task, enum engine_opcode opcode, const struct doca_buf *dst,
				  const struct doca_buf *result, const char *what, struct engine_wr *wr)
{
	const struct doca_rdma *rdma = rdma_of(task);
	struct softdoca_mmap_desc desc;
	struct engine_conn *conn;
	doca_error_t status;

	status = rdma_wr_conn(task, what, &conn);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_wr_reset(wr, opcode, conn);
	if (dst == NULL || result == NULL) {
		SDK_LOG_ERR("%s: %s buffer is NULL", what, dst == NULL ? "destination" : "result");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = rdma_buf_remote(dst, DOCA_ACCESS_FLAG_RDMA_ATOMIC, what, &desc);
	if (status != DOCA_SUCCESS)
		return status;
	if (softdoca_buf_data_addr(dst) % RDMA_ATOMIC_SIZE != 0) {
		SDK_LOG_ERR("%s: remote address 0x%llx is not 8-byte aligned", what,
			    (unsigned long long)softdoca_buf_data_addr(dst));
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_buf_data_len(dst) + softdoca_buf_tail_room(dst) < RDMA_ATOMIC_SIZE) {
		SDK_LOG_ERR("%s: the remote destination has fewer than 8 bytes from its data on", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* The result goes after the result buffer's data; head only. */
	status = rdma_buf_local(rdma, result, true, what, 0, wr);
	if (status != DOCA_SUCCESS)
		return status;
	if (softdoca_buf_tail_room(result) < RDMA_ATOMIC_SIZE) {
		SDK_LOG_ERR("%s: the result buffer has room for %zu bytes after its data, 8 are needed", what,
			    softdoca_buf_tail_room(result));
		return DOCA_ERROR_INVALID_VALUE;
	}
	wr->sge[0].addr = (void *)softdoca_buf_tail_addr(result);
	wr->sge[0].len = RDMA_ATOMIC_SIZE;
	wr->num_sge = 1;
	rdma_remote_fill(&wr->remote, &desc, softdoca_buf_data_addr(dst), RDMA_ATOMIC_SIZE);
	return DOCA_SUCCESS;
}

static doca_error_t atomic_cmp_swp_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_atomic_cmp_swp *t = RDMA_TASK_AS(atomic_cmp_swp, task);
	doca_error_t status;

	status = atomic_common(task, ENGINE_OP_ATOMIC_CAS, t->dst_buf, t->result_buf, "rdma atomic_cmp_swp", wr);
	wr->compare = t->cmp_data;
	wr->operand = t->swap_data;
	return status;
}

static doca_error_t atomic_fetch_add_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_atomic_fetch_add *t = RDMA_TASK_AS(atomic_fetch_add, task);
	doca_error_t status;

	status = atomic_common(task, ENGINE_OP_ATOMIC_FADD, t->dst_buf, t->result_buf, "rdma atomic_fetch_add", wr);
	wr->operand = t->add_data;
	return status;
}

/* The peer's sync event, as its export granted it. */
static doca_error_t sync_remote(const struct doca_sync_event_remote_net *event, const char *what,
				struct engine_remote *remote)
{
	doca_error_t status;

	if (event == NULL) {
		SDK_LOG_ERR("%s: remote sync event is NULL", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = softdoca_sync_event_remote_info(event, &remote->region_id, remote->secret);
	if (status != DOCA_SUCCESS)
		return status;
	remote->addr = 0;
	remote->len = sizeof(uint64_t);
	return DOCA_SUCCESS;
}

/* An 8-byte result lands after the local buffer's data. */
static doca_error_t sync_result_sge(const struct doca_task *task, const struct doca_buf *buf, const char *what,
				    struct engine_wr *wr)
{
	doca_error_t status;

	if (buf == NULL) {
		SDK_LOG_ERR("%s: result buffer is NULL", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = rdma_buf_local(rdma_of(task), buf, true, what, 0, wr);
	if (status != DOCA_SUCCESS)
		return status;
	if (softdoca_buf_tail_room(buf) < sizeof(uint64_t)) {
		SDK_LOG_ERR("%s: the buffer has room for %zu bytes after its data, 8 are needed", what,
			    softdoca_buf_tail_room(buf));
		return DOCA_ERROR_INVALID_VALUE;
	}
	wr->sge[0].addr = (void *)softdoca_buf_tail_addr(buf);
	wr->sge[0].len = sizeof(uint64_t);
	wr->num_sge = 1;
	return DOCA_SUCCESS;
}

static doca_error_t remote_net_sync_event_get_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_remote_net_sync_event_get *t = RDMA_TASK_AS(remote_net_sync_event_get, task);
	const char *what = "rdma remote_net_sync_event_get";
	struct engine_conn *conn;
	doca_error_t status;

	status = rdma_wr_conn(task, what, &conn);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_wr_reset(wr, ENGINE_OP_SYNC_GET, conn);
	status = sync_result_sge(task, t->dst_buf, what, wr);
	if (status != DOCA_SUCCESS)
		return status;
	return sync_remote(t->sync_event, what, &wr->remote);
}

static doca_error_t remote_net_sync_event_notify_set_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_remote_net_sync_event_notify_set *t =
		RDMA_TASK_AS(remote_net_sync_event_notify_set, task);
	const char *what = "rdma remote_net_sync_event_notify_set";
	struct engine_conn *conn;
	doca_error_t status;

	status = rdma_wr_conn(task, what, &conn);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_wr_reset(wr, ENGINE_OP_SYNC_SET, conn);
	if (t->src_buf == NULL) {
		SDK_LOG_ERR("%s: source buffer is NULL", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = rdma_buf_local(rdma_of(task), t->src_buf, false, what, 0, wr);
	if (status != DOCA_SUCCESS)
		return status;
	if (softdoca_buf_data_len(t->src_buf) < sizeof(uint64_t)) {
		SDK_LOG_ERR("%s: the source holds %zu bytes; the event takes its first 8", what,
			    softdoca_buf_data_len(t->src_buf));
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* The event takes the first 8 bytes of the source. */
	wr->sge[0].addr = (void *)softdoca_buf_data_addr(t->src_buf);
	wr->sge[0].len = sizeof(uint64_t);
	wr->num_sge = 1;
	return sync_remote(t->sync_event, what, &wr->remote);
}

static doca_error_t remote_net_sync_event_notify_add_prepare(const struct doca_task *task, struct engine_wr *wr)
{
	const struct doca_rdma_task_remote_net_sync_event_notify_add *t =
		RDMA_TASK_AS(remote_net_sync_event_notify_add, task);
	const char *what = "rdma remote_net_sync_event_notify_add";
	struct engine_conn *conn;
	doca_error_t status;

	status = rdma_wr_conn(task, what, &conn);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_wr_reset(wr, ENGINE_OP_SYNC_ADD, conn);
	status = sync_result_sge(task, t->result_buf, what, wr);
	if (status != DOCA_SUCCESS)
		return status;
	wr->operand = t->add_data;
	return sync_remote(t->sync_event, what, &wr->remote);
}

/* ------------------------------------------------------------------ */
/* Completion                                                         */

/* Copy what the engine reported into the task's result fields. */
static void rdma_task_results(struct rdma_task *t, const struct engine_wr *wr, bool ok)
{
	switch (wr->opcode) {
	case ENGINE_OP_RECV: {
		struct doca_rdma_task_receive *r = container_of(t, struct doca_rdma_task_receive, base);

		r->result_len = (uint32_t)wr->result_len;
		r->result_opcode = (enum doca_rdma_opcode)wr->result_kind;
		r->result_imm = wr->result_imm;
		r->result_conn = wr->result_conn == NULL ? NULL : rdma_of(&t->task)->engine_ops->conn_get_user(wr->result_conn);
		/* A write with immediate placed its bytes in the written region,
		 * not in this receive's buffer: only a send grows it. */
		if (ok && wr->result_kind != ENGINE_RECV_WRITE_IMM)
			rdma_dest_grow(r->dst_buf, wr->result_len);
		break;
	}
	case ENGINE_OP_READ: {
		struct doca_rdma_task_read *r = container_of(t, struct doca_rdma_task_read, base);

		r->result_len = (uint32_t)wr->result_len;
		if (ok)
			rdma_dest_grow(r->dst_buf, wr->result_len);
		break;
	}
	case ENGINE_OP_ATOMIC_CAS:
		if (ok)
			rdma_dest_grow(container_of(t, struct doca_rdma_task_atomic_cmp_swp, base)->result_buf,
				       wr->result_len);
		break;
	case ENGINE_OP_ATOMIC_FADD:
		if (ok)
			rdma_dest_grow(container_of(t, struct doca_rdma_task_atomic_fetch_add, base)->result_buf,
				       wr->result_len);
		break;
	case ENGINE_OP_SYNC_GET: {
		struct doca_rdma_task_remote_net_sync_event_get *g =
			container_of(t, struct doca_rdma_task_remote_net_sync_event_get, base);

		g->result_len = (uint32_t)wr->result_len;
		if (ok)
			rdma_dest_grow(g->dst_buf, wr->result_len);
		break;
	}
	case ENGINE_OP_SYNC_ADD:
		if (ok)
			rdma_dest_grow(
				container_of(t, struct doca_rdma_task_remote_net_sync_event_notify_add, base)->result_buf,
				wr->result_len);
		break;
	default:
		break; /* sends and writes report nothing but the status */
	}
}

/* Which bit of refusals_explained a reason is: its kind and, for a
 * missing permission, which one. */
static uint32_t rdma_refusal_bit(const struct engine_refusal *why)
{
	uint32_t perm = why->perm == DOCA_ACCESS_FLAG_RDMA_READ    ? 1
			: why->perm == DOCA_ACCESS_FLAG_RDMA_WRITE  ? 2
			: why->perm == DOCA_ACCESS_FLAG_RDMA_ATOMIC ? 3
								    : 0;

	if (why->kind != ENGINE_REFUSAL_CTX_PERM && why->kind != ENGINE_REFUSAL_REGION_PERM)
		perm = 0;
	return 1u << ((why->kind & 7u) * 4u + perm);
}

/* The peer refused a one-sided task and said why (the engine's
 * refusal): name the task, the connection, the set that lacks what, or
 * the range, as the peer saw it, and the fix. Once per connection and
 * reason: a program that keeps submitting the same task would flood the
 * log otherwise. Any thread. */
static __attribute__((noinline, cold)) void rdma_explain_refusal(struct rdma_task *t, const struct engine_wr *wr)
{
	const struct engine_refusal *why = &wr->refusal;
	const char *task = t->task.type->name;
	const char *err = doca_error_get_name(wr->status);
	const char *flag = softdoca_access_flag_name(why->perm);
	uint32_t bit = rdma_refusal_bit(why);
	uint32_t id = t->conn->id;

	if (atomic_fetch_or(&t->conn->refusals_explained, bit) & bit)
		return;
	switch (why->kind) {
	case ENGINE_REFUSAL_CTX_PERM:
		SDK_LOG_ERR("%s on connection %u: %s: the peer refused it: the remote RDMA context "
			    "(doca_rdma_set_permissions on the peer) lacks %s. Fix: the peer adds %s to "
			    "doca_rdma_set_permissions before doca_ctx_start (said once per connection and reason)",
			    task, id, err, flag, flag);
		return;
	case ENGINE_REFUSAL_REGION_PERM:
		SDK_LOG_ERR("%s on connection %u: %s: the peer refused it: the remote mmap (doca_mmap_set_permissions "
			    "on the peer) lacks %s, though the export this side imported grants it (stale, or not the "
			    "peer's). Fix: the peer grants %s with doca_mmap_set_permissions before doca_mmap_start, "
			    "exports the mmap again and this side imports that export (said once per connection and "
			    "reason)",
			    task, id, err, flag, flag);
		return;
	case ENGINE_REFUSAL_REGION_KEY:
		SDK_LOG_ERR("%s on connection %u: %s: the peer refused it: it has no memory region for the remote "
			    "mmap (the peer stopped or destroyed that mmap, or the export this side imported is stale "
			    "or not the peer's). Fix: keep the peer's mmap started while tasks use it, and import its "
			    "current export (said once per connection and reason)",
			    task, id, err);
		return;
	case ENGINE_REFUSAL_RANGE:
		SDK_LOG_ERR("%s on connection %u: %s: the peer refused it: range [%#llx, %#llx) is outside the remote "
			    "mmap's [%#llx, %#llx) as the peer sees it. Fix: keep remote buffers inside the range the "
			    "peer exported, and import its current export (said once per connection and reason)",
			    task, id, err, (unsigned long long)why->addr, (unsigned long long)(why->addr + why->len),
			    (unsigned long long)why->region_start, (unsigned long long)why->region_end);
		return;
	case ENGINE_REFUSAL_SYNC_KEY:
		SDK_LOG_ERR("%s on connection %u: %s: the peer refused it: it has no such sync event (the peer "
			    "stopped or destroyed it, or the export this side imported is stale or not the peer's). "
			    "Fix: keep the peer's sync event started while tasks use it, and import its current export "
			    "(said once per connection and reason)",
			    task, id, err);
		return;
	default:
		SDK_LOG_ERR("%s on connection %u: %s: the peer refused it with a reason this softdoca does not know "
			    "(wire status %#x, detail %#llx). Fix: run the same softdoca version on both sides (said "
			    "once per connection and reason)",
			    task, id, err, (unsigned)why->wire, (unsigned long long)why->wire_detail);
		return;
	}
}

/* The task's local buffer list, whose n-th buffer is sge n, and whether
 * the task writes it. */
static const struct doca_buf *rdma_task_local_list(const struct rdma_task *t, bool *dest)
{
	*dest = true;
	switch (t->wr.opcode) {
	case ENGINE_OP_RECV:
		return container_of(t, const struct doca_rdma_task_receive, base)->dst_buf;
	case ENGINE_OP_READ:
		return container_of(t, const struct doca_rdma_task_read, base)->dst_buf;
	case ENGINE_OP_ATOMIC_CAS:
		return container_of(t, const struct doca_rdma_task_atomic_cmp_swp, base)->result_buf;
	case ENGINE_OP_ATOMIC_FADD:
		return container_of(t, const struct doca_rdma_task_atomic_fetch_add, base)->result_buf;
	case ENGINE_OP_SYNC_GET:
		return container_of(t, const struct doca_rdma_task_remote_net_sync_event_get, base)->dst_buf;
	case ENGINE_OP_SYNC_ADD:
		return container_of(t, const struct doca_rdma_task_remote_net_sync_event_notify_add, base)->result_buf;
	default:
		break;
	}
	*dest = false;
	switch (t->wr.opcode) {
	case ENGINE_OP_SEND:
		return container_of(t, const struct doca_rdma_task_send, base)->src_buf;
	case ENGINE_OP_SEND_IMM:
		return container_of(t, const struct doca_rdma_task_send_imm, base)->src_buf;
	case ENGINE_OP_WRITE:
		return container_of(t, const struct doca_rdma_task_write, base)->src_buf;
	case ENGINE_OP_WRITE_IMM:
		return container_of(t, const struct doca_rdma_task_write_imm, base)->src_buf;
	case ENGINE_OP_SYNC_SET:
		return container_of(t, const struct doca_rdma_task_remote_net_sync_event_notify_set, base)->src_buf;
	default:
		return NULL;
	}
}

/* Local buffers on PCI imports: stage them (rdma_pci.c). */
static __attribute__((noinline)) doca_error_t rdma_task_stage_in(struct rdma_task *t)
{
	bool dest;
	const struct doca_buf *list = rdma_task_local_list(t, &dest);

	return rdma_pci_stage_in(&t->wr, list, t->pci_sges, dest, &t->pci);
}

/* A staged task is done: a destination's bytes go to the exporters. A
 * write with immediate placed nothing in the receive's buffer. */
static __attribute__((noinline)) void rdma_task_stage_out(struct rdma_task *t)
{
	struct engine_wr *wr = &t->wr;
	uint64_t filled = wr->result_len;
	bool ok = wr->status == DOCA_SUCCESS;

	if (wr->opcode == ENGINE_OP_RECV && wr->result_kind == ENGINE_RECV_WRITE_IMM)
		filled = 0;
	rdma_pci_stage_out(t->pci, wr, filled);
	t->pci = NULL;
	if (ok && wr->status != DOCA_SUCCESS)
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR,
			   "%s: %s: the data arrived but could not be placed in its destination on a PCI import (the "
			   "line above says why)",
			   t->task.type->name, doca_error_get_name(wr->status));
}

/* The engine's done(): any thread; record and queue for the PE. */
static void rdma_wr_done(struct engine_wr *wr)
{
	struct rdma_task *t = container_of(wr, struct rdma_task, wr);

	if (unlikely(t->pci != NULL))
		rdma_task_stage_out(t);
	if (unlikely(wr->refusal.kind != ENGINE_REFUSAL_NONE) && wr->status != DOCA_SUCCESS && t->conn != NULL)
		rdma_explain_refusal(t, wr);
	rdma_task_results(t, wr, wr->status == DOCA_SUCCESS);
	softdoca_task_complete(&t->task, wr->status);
}

/* ------------------------------------------------------------------ */
/* Task ops                                                           */

typedef doca_error_t (*rdma_prepare_fn)(const struct doca_task *task, struct engine_wr *wr);

/* A send queue refused a task (DOCA_ERROR_FULL): say which queue, how big
 * and how full, and what to change, once per context run; the caller
 * keeps the task and usually retries, so repeating would flood the log. */
static __attribute__((noinline, cold)) void rdma_explain_full(struct doca_rdma *rdma, const struct rdma_task *t)
{
	/* The task being submitted is already counted in flight. */
	size_t inflight = rdma->ctx.num_inflight > 0 ? rdma->ctx.num_inflight - 1 : 0;

	if (rdma->full_explained) {
		SDK_LOG_DBG("%s: send queue of connection %u full again", t->task.type->name, t->conn->id);
		return;
	}
	rdma->full_explained = true;
	SDK_LOG_WARN("%s on connection %u: DOCA_ERROR_FULL: the connection's send queue (size %u) is full; %zu "
		     "task(s) of this rdma context in flight. Progress the PE so completions retire before "
		     "submitting more, or raise doca_rdma_set_send_queue_size (up to %u) before doca_ctx_start "
		     "(said once per context start)",
		     t->task.type->name, t->conn->id, rdma->props.send_queue_size, inflight, RDMA_MAX_SEND_QUEUE_SIZE);
}

/* Posting failed: the caller keeps the task; a resubmit stages again. */
static void rdma_task_unstage(struct rdma_task *t)
{
	rdma_pci_stage_free(t->pci);
	t->pci = NULL;
}

static doca_error_t rdma_task_submit(struct doca_task *task, rdma_prepare_fn prepare)
{
	struct rdma_task *t = container_of(task, struct rdma_task, task);
	struct doca_rdma *rdma = rdma_of(task);
	doca_error_t status = prepare(task, &t->wr);

	if (unlikely(status == DOCA_SUCCESS && t->pci_sges != 0))
		status = rdma_task_stage_in(t);
	if (unlikely(status != DOCA_SUCCESS)) {
		/* doca_task_submit does not validate: the task fails through
		 * its error callback, like a malformed work request. */
		softdoca_task_complete(task, status);
		return DOCA_SUCCESS;
	}
	/* Engine errors (DOCA_ERROR_FULL: send queue full, NOT_CONNECTED) go
	 * back to the caller, who keeps the task. */
	if (t->wr.opcode == ENGINE_OP_RECV) {
		status = rdma->engine_ops->post_recv(rdma->worker, &t->wr);
		if (unlikely(status != DOCA_SUCCESS))
			rdma_task_unstage(t);
		return status;
	}
	/* Submitted from a completion callback, or without FLUSH: sent with
	 * the others when rdma_deliver flushes, or before the connection's
	 * next request that is not held back. */
	t->wr.post_flags = softdoca_task_may_wait(task) ? ENGINE_POST_DEFER : 0;
	if (unlikely(softdoca_trace_on))
		t->wr.trace_task = task; /* the engine says when it is sent */
	status = rdma->engine_ops->post(&t->wr);
	if (unlikely(status != DOCA_SUCCESS))
		rdma_task_unstage(t);
	if (unlikely(status == DOCA_ERROR_FULL))
		rdma_explain_full(rdma, t);
	return status;
}

static doca_error_t rdma_task_check(const struct doca_task *task, rdma_prepare_fn prepare)
{
	struct rdma_task scratch; /* a check gets a const task: translate into a scratch wr */
	doca_error_t status = prepare(task, &scratch.wr);

	if (status != DOCA_SUCCESS)
		return status;
	if (scratch.wr.conn != NULL && !rdma_of(task)->engine_ops->conn_is_usable(scratch.wr.conn)) {
		SDK_LOG_ERR("%s: connection %u is not usable (not connected yet, failed or closed)", task->type->name,
			    rdma_task_of(task)->conn->id);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	return DOCA_SUCCESS;
}

/* submit and check of one task type, bound to its prepare function. */
#define RDMA_TASK_OPS(T) \
	static doca_error_t T##_submit(struct doca_task *task) \
	{ \
		return rdma_task_submit(task, T##_prepare); \
	} \
	static doca_error_t T##_check(const struct doca_task *task) \
	{ \
		return rdma_task_check(task, T##_prepare); \
	} \
	static const struct softdoca_task_ops T##_ops = { \
		.submit = T##_submit, \
		.check = T##_check, \
	}

RDMA_TASK_OPS(receive);
RDMA_TASK_OPS(send);
RDMA_TASK_OPS(send_imm);
RDMA_TASK_OPS(read);
RDMA_TASK_OPS(write);
RDMA_TASK_OPS(write_imm);
RDMA_TASK_OPS(atomic_cmp_swp);
RDMA_TASK_OPS(atomic_fetch_add);

RDMA_TASK_OPS(remote_net_sync_event_get);
RDMA_TASK_OPS(remote_net_sync_event_notify_set);
RDMA_TASK_OPS(remote_net_sync_event_notify_add);

struct rdma_task_desc {
	const char *name; /* for log lines */
	size_t size;
	const struct softdoca_task_ops *ops;
};

static const struct rdma_task_desc rdma_task_descs[RDMA_TASK_NUM] = {
	[RDMA_TASK_RECEIVE] = {"rdma receive", sizeof(struct doca_rdma_task_receive), &receive_ops},
	[RDMA_TASK_SEND] = {"rdma send", sizeof(struct doca_rdma_task_send), &send_ops},
	[RDMA_TASK_SEND_IMM] = {"rdma send_imm", sizeof(struct doca_rdma_task_send_imm), &send_imm_ops},
	[RDMA_TASK_READ] = {"rdma read", sizeof(struct doca_rdma_task_read), &read_ops},
	[RDMA_TASK_WRITE] = {"rdma write", sizeof(struct doca_rdma_task_write), &write_ops},
	[RDMA_TASK_WRITE_IMM] = {"rdma write_imm", sizeof(struct doca_rdma_task_write_imm), &write_imm_ops},
	[RDMA_TASK_ATOMIC_CMP_SWP] = {"rdma atomic_cmp_swp", sizeof(struct doca_rdma_task_atomic_cmp_swp),
				      &atomic_cmp_swp_ops},
	[RDMA_TASK_ATOMIC_FETCH_ADD] = {"rdma atomic_fetch_add", sizeof(struct doca_rdma_task_atomic_fetch_add),
					&atomic_fetch_add_ops},
	[RDMA_TASK_SYNC_GET] = {"rdma remote_net_sync_event_get",
				sizeof(struct doca_rdma_task_remote_net_sync_event_get), &remote_net_sync_event_get_ops},
	[RDMA_TASK_SYNC_SET] = {"rdma remote_net_sync_event_notify_set",
				sizeof(struct doca_rdma_task_remote_net_sync_event_notify_set),
				&remote_net_sync_event_notify_set_ops},
	[RDMA_TASK_SYNC_ADD] = {"rdma remote_net_sync_event_notify_add",
				sizeof(struct doca_rdma_task_remote_net_sync_event_notify_add),
				&remote_net_sync_event_notify_add_ops},
};

void rdma_tasks_init(struct doca_rdma *rdma)
{
	unsigned int kind;

	for (kind = 0; kind < RDMA_TASK_NUM; kind++)
		softdoca_task_type_init(&rdma->task_types[kind], &rdma->ctx, rdma_task_descs[kind].name,
					rdma_task_descs[kind].ops, rdma_task_descs[kind].size);
}

/* ------------------------------------------------------------------ */
/* Allocation                                                         */

/* A task's timeline track: its connection's, or its context's for a
 * receive (any connection may fill it). */
static uint32_t rdma_task_track(const struct doca_rdma *rdma, const struct doca_rdma_connection *conn)
{
	if (!softdoca_trace_on || conn == NULL)
		return rdma->ctx.trace_tid;
	return softdoca_trace_conn_track(rdma->ctx.trace_tid, conn->id);
}

/* Checks shared by every allocate_init, then a task from the pool. A task
 * that acts on a peer needs a live connection of this context. */
static doca_error_t rdma_task_alloc(struct doca_rdma *rdma, enum rdma_task_kind kind,
				    struct doca_rdma_connection *conn, union doca_data user_data, const void *task_out,
				    const char *func, struct rdma_task **t_out)
{
	struct doca_task *task;
	doca_error_t status;

	if (rdma == NULL) {
		SDK_LOG_ERR("%s: rdma is NULL", func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (task_out == NULL) {
		SDK_LOG_ERR("%s: task output pointer is NULL", func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (kind != RDMA_TASK_RECEIVE) {
		status = rdma_conn_check(rdma, conn, func);
		if (status != DOCA_SUCCESS)
			return status;
	}
	status = softdoca_task_alloc_on(&rdma->task_types[kind], user_data, rdma_task_track(rdma, conn), &task);
	if (status != DOCA_SUCCESS)
		return status;
	*t_out = container_of(task, struct rdma_task, task);
	(*t_out)->conn = conn;
	(*t_out)->pci = NULL;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_receive_allocate_init(struct doca_rdma *rdma, struct doca_buf *dst_buf,
						  union doca_data user_data, struct doca_rdma_task_receive **task)
{
	struct doca_rdma_task_receive *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_RECEIVE, NULL, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_receive, base);
	t->dst_buf = dst_buf;
	t->result_len = 0;
	t->result_imm = 0;
	t->result_opcode = DOCA_RDMA_OPCODE_RECV_SEND;
	t->result_conn = NULL;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_send_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
					       const struct doca_buf *src_buf, union doca_data user_data,
					       struct doca_rdma_task_send **task)
{
	struct doca_rdma_task_send *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_SEND, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_send, base);
	t->src_buf = src_buf;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_send_imm_allocate_init(struct doca_rdma *rdma,
						   struct doca_rdma_connection *rdma_connection,
						   const struct doca_buf *src_buf, doca_be32_t immediate_data,
						   union doca_data user_data, struct doca_rdma_task_send_imm **task)
{
	struct doca_rdma_task_send_imm *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_SEND_IMM, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_send_imm, base);
	t->src_buf = src_buf;
	t->immediate_data = immediate_data;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_read_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
					       const struct doca_buf *src_buf, struct doca_buf *dst_buf,
					       union doca_data user_data, struct doca_rdma_task_read **task)
{
	struct doca_rdma_task_read *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_READ, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_read, base);
	t->src_buf = src_buf;
	t->dst_buf = dst_buf;
	t->result_len = 0;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_write_allocate_init(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
						const struct doca_buf *src_buf, struct doca_buf *dst_buf,
						union doca_data user_data, struct doca_rdma_task_write **task)
{
	struct doca_rdma_task_write *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_WRITE, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_write, base);
	t->src_buf = src_buf;
	t->dst_buf = dst_buf;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_write_imm_allocate_init(struct doca_rdma *rdma,
						    struct doca_rdma_connection *rdma_connection,
						    const struct doca_buf *src_buf, struct doca_buf *dst_buf,
						    doca_be32_t immediate_data, union doca_data user_data,
						    struct doca_rdma_task_write_imm **task)
{
	struct doca_rdma_task_write_imm *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_WRITE_IMM, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_write_imm, base);
	t->src_buf = src_buf;
	t->dst_buf = dst_buf;
	t->immediate_data = immediate_data;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_atomic_cmp_swp_allocate_init(struct doca_rdma *rdma,
							 struct doca_rdma_connection *rdma_connection,
							 struct doca_buf *dst_buf, struct doca_buf *result_buf,
							 uint64_t cmp_data, uint64_t swap_data,
							 union doca_data user_data,
							 struct doca_rdma_task_atomic_cmp_swp **task)
{
	struct doca_rdma_task_atomic_cmp_swp *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_ATOMIC_CMP_SWP, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_atomic_cmp_swp, base);
	t->dst_buf = dst_buf;
	t->result_buf = result_buf;
	t->cmp_data = cmp_data;
	t->swap_data = swap_data;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_atomic_fetch_add_allocate_init(struct doca_rdma *rdma,
							   struct doca_rdma_connection *rdma_connection,
							   struct doca_buf *dst_buf, struct doca_buf *result_buf,
							   uint64_t add_data, union doca_data user_data,
							   struct doca_rdma_task_atomic_fetch_add **task)
{
	struct doca_rdma_task_atomic_fetch_add *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_ATOMIC_FETCH_ADD, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_atomic_fetch_add, base);
	t->dst_buf = dst_buf;
	t->result_buf = result_buf;
	t->add_data = add_data;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_get_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection,
	const struct doca_sync_event_remote_net *event, struct doca_buf *dst_buf, union doca_data user_data,
	struct doca_rdma_task_remote_net_sync_event_get **task)
{
	struct doca_rdma_task_remote_net_sync_event_get *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_SYNC_GET, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_remote_net_sync_event_get, base);
	t->sync_event = event;
	t->dst_buf = dst_buf;
	t->result_len = 0;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, struct doca_sync_event_remote_net *event,
	const struct doca_buf *src_buf, union doca_data user_data,
	struct doca_rdma_task_remote_net_sync_event_notify_set **task)
{
	struct doca_rdma_task_remote_net_sync_event_notify_set *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_SYNC_SET, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_remote_net_sync_event_notify_set, base);
	t->sync_event = event;
	t->src_buf = src_buf;
	*task = t;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(
	struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection, struct doca_sync_event_remote_net *event,
	struct doca_buf *result_buf, uint64_t add_data, union doca_data user_data,
	struct doca_rdma_task_remote_net_sync_event_notify_add **task)
{
	struct doca_rdma_task_remote_net_sync_event_notify_add *t;
	struct rdma_task *base;
	doca_error_t status;

	status = rdma_task_alloc(rdma, RDMA_TASK_SYNC_ADD, rdma_connection, user_data, task, __func__, &base);
	if (status != DOCA_SUCCESS)
		return status;
	t = container_of(base, struct doca_rdma_task_remote_net_sync_event_notify_add, base);
	t->sync_event = event;
	t->result_buf = result_buf;
	t->add_data = add_data;
	*task = t;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Capabilities and configuration                                     */

static doca_error_t rdma_cap_task(const struct doca_devinfo *devinfo, bool supported, const char *func)
{
	if (devinfo == NULL) {
		SDK_LOG_ERR("%s: devinfo is NULL", func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!supported) {
		/* An answer, not a failure: programs probe every device. */
		SDK_LOG_DBG("%s: not supported by softdoca", func);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

static doca_error_t rdma_task_set_conf(struct doca_rdma *rdma, enum rdma_task_kind kind,
				       doca_task_completion_cb_t ok_cb, doca_task_completion_cb_t err_cb,
				       uint32_t num_tasks, const char *func)
{
	if (rdma == NULL) {
		SDK_LOG_ERR("%s: rdma is NULL", func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return softdoca_task_type_set_conf(&rdma->task_types[kind], ok_cb, err_cb, num_tasks);
}

/*
 * The identical per-type functions: the capability query, set_conf and
 * as_task. The PE calls a type's callbacks with the struct doca_task
 * pointer, which is also the typed task pointer (it comes first), hence the
 * callback casts.
 */
#define RDMA_TASK_COMMON(T, KIND, SUPPORTED) \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_rdma_cap_task_##T##_is_supported(const struct doca_devinfo *devinfo) \
	{ \
		return rdma_cap_task(devinfo, SUPPORTED, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_rdma_task_##T##_set_conf(struct doca_rdma *rdma, \
						   doca_rdma_task_##T##_completion_cb_t successful_task_completion_cb, \
						   doca_rdma_task_##T##_completion_cb_t error_task_completion_cb, \
						   uint32_t num_tasks) \
	{ \
		return rdma_task_set_conf(rdma, KIND, (doca_task_completion_cb_t)successful_task_completion_cb, \
					  (doca_task_completion_cb_t)error_task_completion_cb, num_tasks, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	struct doca_task *doca_rdma_task_##T##_as_task(struct doca_rdma_task_##T *task) \
	{ \
		if (task == NULL) { \
			rdma_task_null(__func__); \
			return NULL; \
		} \
		return &task->base.task; \
	}

RDMA_TASK_COMMON(receive, RDMA_TASK_RECEIVE, true)
RDMA_TASK_COMMON(send, RDMA_TASK_SEND, true)
RDMA_TASK_COMMON(send_imm, RDMA_TASK_SEND_IMM, true)
RDMA_TASK_COMMON(read, RDMA_TASK_READ, true)
RDMA_TASK_COMMON(write, RDMA_TASK_WRITE, true)
RDMA_TASK_COMMON(write_imm, RDMA_TASK_WRITE_IMM, true)
RDMA_TASK_COMMON(atomic_cmp_swp, RDMA_TASK_ATOMIC_CMP_SWP, true)
RDMA_TASK_COMMON(atomic_fetch_add, RDMA_TASK_ATOMIC_FETCH_ADD, true)
RDMA_TASK_COMMON(remote_net_sync_event_get, RDMA_TASK_SYNC_GET, true)
RDMA_TASK_COMMON(remote_net_sync_event_notify_set, RDMA_TASK_SYNC_SET, true)
RDMA_TASK_COMMON(remote_net_sync_event_notify_add, RDMA_TASK_SYNC_ADD, true)

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_task_receive_get_max_dst_buf_list_len(const struct doca_devinfo *devinfo,
								 enum doca_rdma_transport_type transport_type,
								 uint32_t *max_buf_list_len)
{
	if (devinfo == NULL || max_buf_list_len == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", __func__, devinfo == NULL ? "devinfo" : "output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (transport_type != DOCA_RDMA_TRANSPORT_TYPE_RC && transport_type != DOCA_RDMA_TRANSPORT_TYPE_DC) {
		SDK_LOG_ERR("%s: unknown transport type %d", __func__, (int)transport_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*max_buf_list_len = RDMA_MAX_RECV_BUF_LIST_LEN;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_receive_set_dst_buf_list_len(struct doca_rdma *rdma, uint32_t buf_list_len)
{
	if (rdma == NULL) {
		SDK_LOG_ERR("%s: rdma is NULL", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_ctx_check_idle(&rdma->ctx, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (buf_list_len == 0 || buf_list_len > RDMA_MAX_RECV_BUF_LIST_LEN) {
		SDK_LOG_ERR("%s: %u is out of range [1, %u]", __func__, buf_list_len, RDMA_MAX_RECV_BUF_LIST_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.recv_buf_list_len = buf_list_len;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_task_receive_get_dst_buf_list_len(const struct doca_rdma *rdma, uint32_t *buf_list_len)
{
	if (rdma == NULL || buf_list_len == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", __func__, rdma == NULL ? "rdma" : "output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*buf_list_len = rdma->props.recv_buf_list_len;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Field accessors                                                    */

/* set/get of the connection, for every type but receive. */
#define RDMA_TASK_CONN_ACCESSORS(T) \
	DOCA_EXPERIMENTAL \
	void doca_rdma_task_##T##_set_rdma_connection(struct doca_rdma_task_##T *task, \
						      struct doca_rdma_connection *rdma_connection) \
	{ \
		if (task == NULL) { \
			rdma_task_null(__func__); \
			return; \
		} \
		task->base.conn = rdma_connection; \
		if (unlikely(softdoca_trace_on)) \
			task->base.task.trace_tid = rdma_task_track(rdma_of(&task->base.task), rdma_connection); \
	} \
	DOCA_EXPERIMENTAL \
	const struct doca_rdma_connection *doca_rdma_task_##T##_get_rdma_connection( \
		const struct doca_rdma_task_##T *task) \
	{ \
		if (task == NULL) { \
			rdma_task_null(__func__); \
			return NULL; \
		} \
		return task->base.conn; \
	}

RDMA_TASK_CONN_ACCESSORS(send)
RDMA_TASK_CONN_ACCESSORS(send_imm)
RDMA_TASK_CONN_ACCESSORS(read)
RDMA_TASK_CONN_ACCESSORS(write)
RDMA_TASK_CONN_ACCESSORS(write_imm)
RDMA_TASK_CONN_ACCESSORS(atomic_cmp_swp)
RDMA_TASK_CONN_ACCESSORS(atomic_fetch_add)
RDMA_TASK_CONN_ACCESSORS(remote_net_sync_event_get)
RDMA_TASK_CONN_ACCESSORS(remote_net_sync_event_notify_set)
RDMA_TASK_CONN_ACCESSORS(remote_net_sync_event_notify_add)

/* set/get of field F (type B) of task type T. */
#define RDMA_TASK_FIELD(T, F, B) \
	DOCA_EXPERIMENTAL \
	void doca_rdma_task_##T##_set_##F(struct doca_rdma_task_##T *task, B F) \
	{ \
		if (task == NULL) { \
			rdma_task_null(__func__); \
			return; \
		} \
		task->F = F; \
	} \
	DOCA_EXPERIMENTAL \
	B doca_rdma_task_##T##_get_##F(const struct doca_rdma_task_##T *task) \
	{ \
		if (task == NULL) { \
			rdma_task_null(__func__); \
			return (B)0; \
		} \
		return task->F; \
	}

RDMA_TASK_FIELD(receive, dst_buf, struct doca_buf *)
RDMA_TASK_FIELD(send, src_buf, const struct doca_buf *)
RDMA_TASK_FIELD(send_imm, src_buf, const struct doca_buf *)
RDMA_TASK_FIELD(send_imm, immediate_data, doca_be32_t)
RDMA_TASK_FIELD(read, src_buf, const struct doca_buf *)
RDMA_TASK_FIELD(read, dst_buf, struct doca_buf *)
RDMA_TASK_FIELD(write, src_buf, const struct doca_buf *)
RDMA_TASK_FIELD(write, dst_buf, struct doca_buf *)
RDMA_TASK_FIELD(write_imm, src_buf, const struct doca_buf *)
RDMA_TASK_FIELD(write_imm, dst_buf, struct doca_buf *)
RDMA_TASK_FIELD(write_imm, immediate_data, doca_be32_t)
RDMA_TASK_FIELD(atomic_cmp_swp, dst_buf, struct doca_buf *)
RDMA_TASK_FIELD(atomic_cmp_swp, result_buf, struct doca_buf *)
RDMA_TASK_FIELD(atomic_cmp_swp, cmp_data, uint64_t)
RDMA_TASK_FIELD(atomic_cmp_swp, swap_data, uint64_t)
RDMA_TASK_FIELD(atomic_fetch_add, dst_buf, struct doca_buf *)
RDMA_TASK_FIELD(atomic_fetch_add, result_buf, struct doca_buf *)
RDMA_TASK_FIELD(atomic_fetch_add, add_data, uint64_t)
RDMA_TASK_FIELD(remote_net_sync_event_get, sync_event, const struct doca_sync_event_remote_net *)
RDMA_TASK_FIELD(remote_net_sync_event_get, dst_buf, struct doca_buf *)
RDMA_TASK_FIELD(remote_net_sync_event_notify_set, sync_event, struct doca_sync_event_remote_net *)
RDMA_TASK_FIELD(remote_net_sync_event_notify_set, src_buf, const struct doca_buf *)
RDMA_TASK_FIELD(remote_net_sync_event_notify_add, sync_event, struct doca_sync_event_remote_net *)
RDMA_TASK_FIELD(remote_net_sync_event_notify_add, result_buf, struct doca_buf *)
RDMA_TASK_FIELD(remote_net_sync_event_notify_add, add_data, uint64_t)

/* ------------------------------------------------------------------ */
/* Results                                                            */

DOCA_EXPERIMENTAL
enum doca_rdma_opcode doca_rdma_task_receive_get_result_opcode(const struct doca_rdma_task_receive *task)
{
	if (task == NULL) {
		rdma_task_null(__func__);
		return DOCA_RDMA_OPCODE_RECV_SEND;
	}
	return task->result_opcode;
}

DOCA_EXPERIMENTAL
uint32_t doca_rdma_task_receive_get_result_len(const struct doca_rdma_task_receive *task)
{
	if (task == NULL) {
		rdma_task_null(__func__);
		return 0;
	}
	return task->result_len;
}

DOCA_EXPERIMENTAL
doca_be32_t doca_rdma_task_receive_get_result_immediate_data(const struct doca_rdma_task_receive *task)
{
	if (task == NULL) {
		rdma_task_null(__func__);
		return 0;
	}
	return task->result_imm;
}

DOCA_EXPERIMENTAL
const struct doca_rdma_connection *
doca_rdma_task_receive_get_result_rdma_connection(const struct doca_rdma_task_receive *task)
{
	if (task == NULL) {
		rdma_task_null(__func__);
		return NULL;
	}
	return task->result_conn;
}

DOCA_EXPERIMENTAL
uint32_t doca_rdma_task_read_get_result_len(const struct doca_rdma_task_read *task)
{
	if (task == NULL) {
		rdma_task_null(__func__);
		return 0;
	}
	return task->result_len;
}

DOCA_EXPERIMENTAL
uint32_t doca_rdma_task_remote_net_sync_event_get_get_result_len(
	const struct doca_rdma_task_remote_net_sync_event_get *task)
{
	if (task == NULL) {
		rdma_task_null(__func__);
		return 0;
	}
	return task->result_len;
}
