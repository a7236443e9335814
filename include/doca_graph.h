/*
 * softdoca — DOCA graph: run a set of tasks, user callbacks and other
 * graphs in dependency order on one progress engine.
 *
 * A graph is a template: nodes (context nodes that run one task of a
 * context, user nodes that call a function, sub-graph nodes that run an
 * instance of another graph) and dependencies between them, fixed once the
 * graph is started. An instance carries the data of every node (a task, a
 * cookie, a sub-graph instance) and is what the application submits; a
 * completed instance may be submitted again, with no allocation.
 *
 * Rules:
 * - Nodes and dependencies are added before doca_graph_start only; a
 *   dependency that would close a cycle is refused (DOCA_ERROR_NOT_PERMITTED).
 * - A node runs only after every node it depends on completed successfully.
 * - When a node fails, no further node of that instance is started; once
 *   the nodes already running have completed, the graph's error callback
 *   reports the instance. A context node's task keeps its status
 *   (doca_task_get_status) for the application to find which one failed.
 * - The tasks of context nodes do not call their own completion callbacks
 *   while they run as part of a graph; the graph's callbacks replace them.
 * - Graph callbacks and user node callbacks run only inside
 *   doca_pe_progress, on the thread that calls it.
 * - An overloaded context (its queue is full) does not fail an instance:
 *   the node is tried again from doca_pe_progress.
 */
#ifndef DOCA_GRAPH_H_
#define DOCA_GRAPH_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_pe;
struct doca_task;

struct doca_graph;
struct doca_graph_node;
struct doca_graph_instance;

/* Called (from doca_pe_progress) when an instance completed or failed. */
typedef void (*doca_graph_completion_cb_t)(struct doca_graph_instance *instance, union doca_data instance_user_data,
					   union doca_data graph_user_data);

/* The function of a user node; cookie is the instance's node data. A
 * status other than DOCA_SUCCESS fails the instance. */
typedef doca_error_t (*doca_graph_user_node_cb_t)(void *cookie);

/* Create an empty graph bound to pe.
 * DOCA_ERROR_INVALID_VALUE: NULL argument. DOCA_ERROR_NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_create(struct doca_pe *pe, struct doca_graph **graph);

/* Destroy a stopped graph with its nodes.
 * DOCA_ERROR_INVALID_VALUE: NULL. DOCA_ERROR_BAD_STATE: started.
 * DOCA_ERROR_IN_USE: a sub-graph node of another graph refers to it. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_destroy(struct doca_graph *graph);

/* Set the completion and error callbacks and how many instances the graph
 * may create. Before start only.
 * DOCA_ERROR_INVALID_VALUE: NULL graph or callback, num_instances 0.
 * DOCA_ERROR_BAD_STATE: started. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_set_conf(struct doca_graph *graph, doca_graph_completion_cb_t graph_completion_cb,
				 doca_graph_completion_cb_t graph_error_cb, uint32_t num_instances);

/* Attach user data, passed to the graph callbacks. Before start only.
 * DOCA_ERROR_INVALID_VALUE: NULL. DOCA_ERROR_BAD_STATE: started. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_set_user_data(struct doca_graph *graph, union doca_data user_data);

/* Read the user data. DOCA_ERROR_INVALID_VALUE: NULL argument. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_get_user_data(const struct doca_graph *graph, union doca_data *user_data);

/* Add a context node: it runs the task its instance gives it, on ctx. A new
 * node is a root until a dependency points at it. The graph owns the node.
 * DOCA_ERROR_INVALID_VALUE: NULL argument, ctx on another PE.
 * DOCA_ERROR_BAD_STATE: graph started. DOCA_ERROR_NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_ctx(struct doca_graph *graph, const struct doca_ctx *ctx,
					     struct doca_graph_node **node);

/* Add a user node: it calls cb with the cookie its instance gives it.
 * DOCA_ERROR_INVALID_VALUE: NULL argument. DOCA_ERROR_BAD_STATE: graph
 * started. DOCA_ERROR_NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_user(struct doca_graph *graph, doca_graph_user_node_cb_t cb,
					      struct doca_graph_node **node);

/* Add a sub-graph node: it runs an instance of sub_graph, which must be
 * started and bound to the same PE.
 * DOCA_ERROR_INVALID_VALUE: NULL argument, another PE.
 * DOCA_ERROR_BAD_STATE: graph started or sub_graph not started.
 * DOCA_ERROR_NOT_PERMITTED: sub_graph is graph itself.
 * DOCA_ERROR_NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_graph(struct doca_graph *graph, struct doca_graph *sub_graph,
					       struct doca_graph_node **node);

/* Make "to" depend on "from": "to" runs only after "from" completed.
 * Adding an existing dependency again changes nothing.
 * DOCA_ERROR_INVALID_VALUE: NULL argument, node of another graph.
 * DOCA_ERROR_BAD_STATE: graph started. DOCA_ERROR_NO_MEMORY.
 * DOCA_ERROR_NOT_PERMITTED: the dependency would close a cycle. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_add_dependency(struct doca_graph *graph, struct doca_graph_node *from,
				       struct doca_graph_node *to);

/* Freeze the graph; instances can then be created. Every context of a
 * context node must be running. Starting a started graph succeeds.
 * DOCA_ERROR_INVALID_VALUE: NULL. DOCA_ERROR_BAD_STATE: no context node,
 * set_conf not called, a context not running. DOCA_ERROR_NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_start(struct doca_graph *graph);

/* Back to configurable; every instance must have been destroyed. Stopping
 * a stopped graph succeeds.
 * DOCA_ERROR_INVALID_VALUE: NULL. DOCA_ERROR_IN_USE: instances remain. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_stop(struct doca_graph *graph);

/* Create an instance of a started graph; its nodes have no data yet.
 * DOCA_ERROR_INVALID_VALUE: NULL. DOCA_ERROR_BAD_STATE: not started.
 * DOCA_ERROR_NO_MEMORY: out of memory or num_instances reached. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_create(const struct doca_graph *graph, struct doca_graph_instance **graph_instance);

/* Destroy an instance (its tasks stay the application's).
 * DOCA_ERROR_INVALID_VALUE: NULL. DOCA_ERROR_IN_USE: submitted, or the
 * data of a sub-graph node of another instance. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_destroy(struct doca_graph_instance *graph_instance);

/* Attach user data, passed to the graph callbacks.
 * DOCA_ERROR_INVALID_VALUE: NULL. DOCA_ERROR_IN_USE: submitted. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_data(struct doca_graph_instance *graph_instance, union doca_data user_data);

/* Read the user data. DOCA_ERROR_INVALID_VALUE: NULL argument. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_get_user_data(const struct doca_graph_instance *graph_instance,
					       union doca_data *user_data);

/* Give a context node its task (allocated from the node's context, and
 * alive as long as the instance). The task's own callbacks are not called
 * while it runs in the graph.
 * DOCA_ERROR_INVALID_VALUE: NULL argument. DOCA_ERROR_BAD_STATE: submitted.
 * DOCA_ERROR_NOT_PERMITTED: node of another graph, not a context node, or
 * task of another context. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_ctx_node_data(struct doca_graph_instance *graph_instance,
						   struct doca_graph_node *node, struct doca_task *task);

/* Give a user node the cookie its callback receives.
 * DOCA_ERROR_INVALID_VALUE: NULL instance or node. DOCA_ERROR_BAD_STATE:
 * submitted. DOCA_ERROR_NOT_PERMITTED: node of another graph or not a user
 * node. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_node_data(struct doca_graph_instance *graph_instance,
						    struct doca_graph_node *node, void *cookie);

/* Give a sub-graph node the instance it runs: created by the node's
 * sub-graph, not submitted, and the data of no other node.
 * DOCA_ERROR_INVALID_VALUE: NULL argument. DOCA_ERROR_BAD_STATE: submitted.
 * DOCA_ERROR_NOT_PERMITTED: node of another graph, not a sub-graph node,
 * instance of another graph, submitted or already used by another node. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_sub_graph_node_data(struct doca_graph_instance *graph_instance,
							 struct doca_graph_node *node,
							 struct doca_graph_instance *sub_graph_instance);

/* Start the instance: its root nodes run now, the others as their
 * dependencies complete. A completed instance may be submitted again.
 * DOCA_ERROR_INVALID_VALUE: NULL. DOCA_ERROR_IN_USE: already submitted.
 * DOCA_ERROR_BAD_STATE: graph not started, a node has no data.
 * Otherwise the error of the first root task's submission, when nothing
 * was started. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_submit(struct doca_graph_instance *graph_instance);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GRAPH_H_ */
