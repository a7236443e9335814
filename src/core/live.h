/*
 * softdoca — the set of live public objects (mmaps, inventories, PEs,
 * contexts). Not installed.
 *
 * A public call handed a pointer to an object that was destroyed must not
 * read it: the memory is gone. Creation adds the pointer here, destruction
 * takes it out, and control-path calls ask here before they dereference,
 * so a destroyed object gets DOCA_ERROR_INVALID_VALUE and a log line
 * instead of a use-after-free. (Hot data-path calls — doca_pe_progress,
 * buf_get_by_*, task allocation and submit — do not ask: a lock per
 * operation would cost more than the datapath itself.) A pointer that a
 * later create reused names the new object; nothing can tell those apart.
 */
#ifndef SOFTDOCA_CORE_LIVE_H_
#define SOFTDOCA_CORE_LIVE_H_

#include <stdbool.h>

#include <doca_error.h>

enum softdoca_live_kind {
	SOFTDOCA_LIVE_MMAP = 1,
	SOFTDOCA_LIVE_BUF_INVENTORY,
	SOFTDOCA_LIVE_PE,
	SOFTDOCA_LIVE_CTX,
};

/* Record obj as live. DOCA_ERROR_NO_MEMORY if the set cannot grow. */
doca_error_t softdoca_live_add(const void *obj, enum softdoca_live_kind kind);

/* Forget obj (no-op if it is not there). */
void softdoca_live_remove(const void *obj);

/* DOCA_SUCCESS if obj is a live object of that kind; otherwise one log line
 * naming func and DOCA_ERROR_INVALID_VALUE (NULL included). */
doca_error_t softdoca_live_check(const void *obj, enum softdoca_live_kind kind, const char *func);

#endif /* SOFTDOCA_CORE_LIVE_H_ */
