/*
 * softdoca — progress engine internals (not installed).
 */
#ifndef SOFTDOCA_CORE_PE_H_
#define SOFTDOCA_CORE_PE_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <doca_pe.h>

struct doca_ctx;
struct core_graph_sched;

struct doca_pe {
	struct doca_ctx *ctxs; /* connected contexts, linked through pe_next */
	int event_fd;          /* the notification handle */
	atomic_bool armed;     /* doca_pe_request_notification was called */
	enum doca_pe_event_mode event_mode;
	/* Inside doca_pe_progress (callbacks may be running). Atomic: the
	 * stall monitor reads it from the waker's thread. */
	atomic_bool progressing;

	/* Completed tasks waiting for doca_pe_progress. Producers (any
	 * thread) push onto cq_top with one compare-and-swap, newest first;
	 * the consumer (the application's thread) takes the whole stack with
	 * one exchange and reverses it. cq_held is the consumer's own: what
	 * it took but has not delivered yet (a discard), oldest first. */
	_Atomic(struct doca_task *) cq_top;
	struct doca_task *cq_held;

	/* Graphs bound to this PE; NULL until the first doca_graph_create. */
	struct core_graph_sched *graphs;

	/* The stall monitor (pe_stall.c): completions queued (producers)
	 * and delivered or dropped (consumer), doca_pe_progress calls. */
	atomic_uint_fast64_t cq_queued;
	atomic_uint_fast64_t cq_delivered;
	atomic_uint_fast64_t progress_calls;
	atomic_uint_fast64_t tasks_submitted; /* accepted by doca_task_submit (task.c) */
	atomic_uint_fast64_t notify_requests; /* doca_pe_request_notification calls (rdma_conn.c) */
	/* The monitor's own, under its lock. */
	struct doca_pe *stall_next;
	uint64_t stall_seen_calls;
	uint64_t stall_round_calls;
	uint64_t stall_active_ns; /* when its progress calls were last seen moving */
	uint64_t stall_since_ns;
	uint64_t stall_sub_since_ns; /* submitted tasks wait, nothing progresses */
	bool stall_warned;
	bool stall_sub_warned;
};

/* Queue a completed task for delivery by doca_pe_progress. Any thread. */
void core_pe_enqueue_completion(struct doca_pe *pe, struct doca_task *task);

/* Connect/disconnect bookkeeping used by ctx.c. */
void core_pe_remove_ctx(struct doca_pe *pe, struct doca_ctx *ctx);

/* Drop every queued completion of ctx's tasks without delivering it (the
 * context is going away); returns how many were dropped. */
unsigned int core_pe_discard_ctx_completions(struct doca_pe *pe, struct doca_ctx *ctx);

/* pe_stall.c: watch pe from create to destroy (starts the monitor with
 * the first PE), and the strict parser of SOFTDOCA_PE_STALL_MS. */
void core_pe_stall_watch(struct doca_pe *pe);
void core_pe_stall_unwatch(struct doca_pe *pe);
bool core_pe_stall_parse(const char *text, uint32_t *ms_out);

#endif /* SOFTDOCA_CORE_PE_H_ */
