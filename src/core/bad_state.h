/*
 * softdoca — the one explanation of DOCA_ERROR_BAD_STATE from a lifecycle
 * call (docs/troubleshooting.md, case 2), shared by every DOCA object with
 * a lifecycle: contexts (dma, rdma), mmaps, buf inventories and pools,
 * sync events, PEs, graphs.
 */
#ifndef SOFTDOCA_CORE_BAD_STATE_H_
#define SOFTDOCA_CORE_BAD_STATE_H_

#include <doca_error.h>

#include "common.h"

/* Log one ERROR line
 *   <call>: DOCA_ERROR_BAD_STATE: the <object> is <state>; this call needs
 *   it <needs> (<hint>)
 * and return DOCA_ERROR_BAD_STATE. object names it ("mmap", "rdma
 * context"), state is the one it is in, needs the one(s) the call needs,
 * hint what to do (may be NULL). */
SOFTDOCA_EXPORT doca_error_t softdoca_bad_state(const char *call, const char *object, const char *state,
						const char *needs, const char *hint);

#endif /* SOFTDOCA_CORE_BAD_STATE_H_ */
