/*
 * softdoca_fault.h — softdoca's own fault injection API (not part of DOCA).
 *
 * softdoca can make RDMA operations fail, wait, or find their queue full
 * on purpose, and drop connections, so that a program's error paths run
 * in a test. The same rules can be given without code, in the
 * environment variable SOFTDOCA_FAULTS; the README describes the grammar:
 *
 *   seed=42;write:fail=every:100:DOCA_ERROR_IO_FAILED;conn:drop=after_ops:500
 *   conn/nth=2:drop=after_ms:250;conn/client:cm_reject=nth:1
 *
 * Rules reach the doca_rdma contexts created after they were set (the
 * engine of a context is chosen at doca_rdma_create). A running context
 * takes a new rule set at its next operation and starts its counts over.
 * Each context counts for itself; a given seed gives the same faults for
 * the same sequence of operations.
 *
 * Programs that use this header build only against softdoca: guard its
 * use (e.g. with __has_include(<softdoca_fault.h>)) in code that must
 * also build against NVIDIA's DOCA.
 */
#ifndef SOFTDOCA_FAULT_H_
#define SOFTDOCA_FAULT_H_

#include <stdint.h>

#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What softdoca_fault_get_count counts. */
enum softdoca_fault_kind {
	SOFTDOCA_FAULT_FAILED = 0, /* tasks completed with an injected error (fail rules) */
	SOFTDOCA_FAULT_DELAYED,    /* tasks held back before they were posted (delay rules) */
	SOFTDOCA_FAULT_FULL,       /* submissions refused with DOCA_ERROR_FULL (full rules) */
	SOFTDOCA_FAULT_DROPPED,    /* connections dropped (drop rules) */
	SOFTDOCA_FAULT_RNR,        /* receives held back by a receiver-not-ready storm (rnr rules) */
	SOFTDOCA_FAULT_CM,         /* connection requests rejected or left unanswered (cm_ rules) */
	SOFTDOCA_FAULT_KIND_NUM,
};

/*
 * Replace the fault rules of this process with rules (the SOFTDOCA_FAULTS
 * grammar; "" means no rules) and zero the counters. From the first call
 * on, SOFTDOCA_FAULTS is no longer read.
 * Returns DOCA_ERROR_INVALID_VALUE, with one log line naming the bad
 * token, for a NULL or malformed rule set; the rules in force stay.
 * Thread-safe.
 */
doca_error_t softdoca_fault_set(const char *rules);

/* No more faults from now on (softdoca_fault_set("")); zero the counters. */
void softdoca_fault_clear(void);

/*
 * How many faults of kind were injected since the rules were last set,
 * over every context of the process.
 * Returns DOCA_ERROR_INVALID_VALUE for a NULL count or an unknown kind.
 */
doca_error_t softdoca_fault_get_count(enum softdoca_fault_kind kind, uint64_t *count);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDOCA_FAULT_H_ */
