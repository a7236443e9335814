/*
 * softdoca — the sync event watcher, internal interface. Not installed.
 *
 * A sync event whose value changes behind softdoca's back (a cell of a PCI
 * export table that the other process updates, or caller memory named by
 * doca_sync_event_set_addr / _set_doca_buf) cannot wake the PE that holds
 * its parked wait tasks: no code of this process runs when it changes. So
 * while such an event has parked waits, it is watched: a timer of Core's
 * waker (waker.h; armed while anything is watched) reads every watched
 * value each millisecond and wakes the PE when it
 * differs from what it saw last, and wakes it while an imported event's
 * exporter is gone or revoked the export (the waits then fail). Waking is
 * softdoca_pe_wake: a no-op unless the PE is armed, and the PE's own
 * arm-then-check (doca_pe_request_notification asks has_work) covers any
 * change the watcher saw before the arming.
 */
#ifndef SOFTDOCA_CORE_SYNC_EVENT_WATCH_H_
#define SOFTDOCA_CORE_SYNC_EVENT_WATCH_H_

#include <stdbool.h>
#include <stdint.h>

struct doca_pe;
struct core_pci_import;

/* One watched value, embedded in its event (zero-initialised). Every
 * field belongs to the watcher's lock. */
struct core_se_watch {
	struct core_se_watch *prev, *next;
	const uint64_t *value;
	struct doca_pe *pe;
	const struct core_pci_import *im; /* NULL: not an import */
	uint64_t last;			  /* the value as last seen */
	uint32_t epoch;			  /* the watcher's when it went on */
	bool on;
};

/* Watch value for pe (and im's liveness, im may be NULL); re-pointing a
 * watch already on is allowed. The current value is the baseline: call it
 * before checking the waits' conditions. If the waker cannot start its thread,
 * logs once; the waits then complete only when the PE is progressed. */
void core_se_watch_start(struct core_se_watch *w, const uint64_t *value, struct doca_pe *pe,
			 const struct core_pci_import *im);

/* Stop watching; no-op when not on. On return the watcher no longer
 * touches w, its value, its PE or its import. */
void core_se_watch_stop(struct core_se_watch *w);

#endif /* SOFTDOCA_CORE_SYNC_EVENT_WATCH_H_ */
