/*
 * softdoca — DOCA graph internals shared with the task and PE code (not
 * installed).
 *
 * The seam: a task that a graph instance submitted carries a pointer to
 * the instance's slot for its node (doca_task.graph_slot). Its completion
 * is then handed to core_graph_task_done instead of the task's callbacks;
 * every other task pays one predictable branch. The PE keeps a
 * core_graph_sched for the graphs bound to it: user nodes to run, nodes of
 * overloaded contexts to retry, and instances whose callback waits for
 * doca_pe_progress.
 */
#ifndef SOFTDOCA_CORE_GRAPH_H_
#define SOFTDOCA_CORE_GRAPH_H_

#include <stdbool.h>

struct doca_pe;
struct doca_task;
struct doca_graph_instance;
struct core_graph_slot;

struct core_graph_sched {
	unsigned int num_graphs;  /* graphs bound to the PE */
	unsigned int submitting;  /* inside doca_graph_instance_submit: defer callbacks */
	struct core_graph_slot *ready_head; /* nodes to run (or retry) from progress */
	struct core_graph_slot *ready_tail;
	struct doca_graph_instance *done_head; /* finished, callback not yet delivered */
	struct doca_graph_instance *done_tail;
};

/* A task submitted by a graph completed (called by core_task_deliver). */
void core_graph_task_done(struct doca_task *task);

/* From doca_pe_progress: run ready nodes, deliver deferred callbacks. */
unsigned int core_graph_progress(struct doca_pe *pe);

/* True when core_graph_progress has something to do. */
bool core_graph_has_work(const struct doca_pe *pe);

#endif /* SOFTDOCA_CORE_GRAPH_H_ */
