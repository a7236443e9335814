/*
 * softdoca — the one explanation of a lifecycle call refused because of
 * the state an object is in (docs/troubleshooting.md, case 2): mostly
 * DOCA_ERROR_BAD_STATE, also the statuses DOCA gives some such refusals
 * (IN_USE for a PE with contexts, NOT_PERMITTED for an mmap with bufs).
 * Shared by every DOCA object with a lifecycle: contexts (dma, rdma),
 * mmaps, buf inventories, pools and arrays, sync events, PEs, graphs.
 */
#ifndef SOFTDOCA_CORE_BAD_STATE_H_
#define SOFTDOCA_CORE_BAD_STATE_H_

#include <doca_error.h>

#include "common.h"

/* Log one ERROR line
 *   <call>: <status name>: the <object> is <state>; this call needs it
 *   <needs> (<hint>)
 * and return status. object names it ("mmap", "rdma context"), state is
 * the one it is in, needs the one(s) the call needs, hint what to do (may
 * be NULL). */
SOFTDOCA_EXPORT doca_error_t softdoca_lifecycle_refuse(doca_error_t status, const char *call, const char *object,
						       const char *state, const char *needs, const char *hint);

/* softdoca_lifecycle_refuse with DOCA_ERROR_BAD_STATE. */
SOFTDOCA_EXPORT doca_error_t softdoca_bad_state(const char *call, const char *object, const char *state,
						const char *needs, const char *hint);

#endif /* SOFTDOCA_CORE_BAD_STATE_H_ */
