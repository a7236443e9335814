/*
 * softdoca — DOCA graphs: nodes, dependencies, instances and their run.
 *
 * Setup (create, nodes, dependencies, start, instance create) may
 * allocate; running an instance never does. An instance is one allocation
 * holding a slot per node; submitting it resets each slot's count of
 * unfinished dependencies and starts the roots. A node that completes
 * successfully counts down its dependents and starts those that reach
 * zero; a failed node records the instance's first error and starts
 * nothing more. The instance is finished when no node of it is running;
 * its callback then runs from doca_pe_progress (deferred when the finish
 * happened inside doca_graph_instance_submit).
 *
 * Context nodes are submitted at once (the fast path). User nodes, and
 * context nodes whose context was full, wait on the PE's ready list and
 * run from doca_pe_progress, so user code never runs inside submit and a
 * long chain of user nodes does not recurse.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_graph.h>

#include "bad_state.h"
#include "ctx.h"
#include "graph.h"
#include "log_internal.h"
#include "pe.h"

SDK_LOG_REGISTER(GRAPH)

/* Bounds that keep sizes sane; far above any real graph. */
#define GRAPH_MAX_NODES (1U << 20)
#define GRAPH_MAX_INSTANCES (1U << 24)
/* Rounds of the ready list one doca_pe_progress runs. */
#define GRAPH_READY_ROUNDS 16

enum graph_node_kind {
	GRAPH_NODE_CTX,
	GRAPH_NODE_USER,
	GRAPH_NODE_SUB,
};

struct doca_graph_node {
	struct doca_graph *graph;
	enum graph_node_kind kind;
	uint32_t index;
	union {
		const struct doca_ctx *ctx;
		doca_graph_user_node_cb_t cb;
		struct doca_graph *sub;
	} u;
	uint32_t *succ; /* indexes of the nodes that depend on this one */
	uint32_t num_succ;
	uint32_t cap_succ;
	uint32_t num_preds;
};

struct doca_graph {
	struct doca_pe *pe;
	bool started;
	doca_graph_completion_cb_t done_cb;
	doca_graph_completion_cb_t error_cb;
	uint32_t max_instances; /* from set_conf; 0 = not configured */
	uint32_t num_instances; /* created and not destroyed */
	union doca_data user_data;
	struct doca_graph_node **nodes;
	uint32_t num_nodes;
	uint32_t cap_nodes;
	uint32_t num_ctx_nodes;
	uint32_t *roots; /* built at start */
	uint32_t num_roots;
	uint32_t num_parents; /* sub-graph nodes of other graphs that name this graph */
};

/* The per-instance state of one node. */
struct core_graph_slot {
	struct doca_graph_instance *inst;
	struct core_graph_slot *next; /* ready list */
	union {
		struct doca_task *task;
		void *cookie;
		struct doca_graph_instance *sub;
	} data;
	uint32_t index;
	uint32_t remaining; /* dependencies not yet completed in this run */
	bool has_data;
};

enum graph_inst_state {
	GRAPH_INST_IDLE,     /* may be configured, submitted, destroyed */
	GRAPH_INST_RUNNING,  /* nodes are running */
	GRAPH_INST_FINISHED, /* done; the callback waits for doca_pe_progress */
};

struct doca_graph_instance {
	struct doca_graph *graph;
	union doca_data user_data;
	enum graph_inst_state state;
	doca_error_t status;  /* first node error of this run */
	uint32_t num_running; /* nodes started and not yet done */
	struct core_graph_slot *parent; /* the sub-graph node running it, while it runs */
	struct core_graph_slot *owner;  /* the sub-graph node whose data it is */
	struct doca_graph_instance *done_next;
	struct core_graph_slot slots[];
};

static void graph_slot_done(struct core_graph_slot *slot, doca_error_t status);
static doca_error_t graph_instance_begin(struct doca_graph_instance *inst, struct core_graph_slot *parent);

static const char *graph_kind_name(enum graph_node_kind kind)
{
	switch (kind) {
	case GRAPH_NODE_CTX:
		return "context";
	case GRAPH_NODE_USER:
		return "user";
	case GRAPH_NODE_SUB:
		return "sub-graph";
	}
	return "unknown";
}

static struct core_graph_sched *graph_sched(const struct doca_graph *graph)
{
	return graph->pe->graphs;
}

static struct doca_graph_node *graph_node_of(const struct core_graph_slot *slot)
{
	return slot->inst->graph->nodes[slot->index];
}

/* ---- the run ---- */

static void graph_ready_push(struct core_graph_sched *sched, struct doca_pe *pe, struct core_graph_slot *slot)
{
	slot->next = NULL;
	if (sched->ready_tail == NULL)
		sched->ready_head = slot;
	else
		sched->ready_tail->next = slot;
	sched->ready_tail = slot;
	softdoca_pe_wake(pe);
}

static bool graph_overloaded(doca_error_t status)
{
	return status == DOCA_ERROR_FULL || status == DOCA_ERROR_AGAIN;
}

/* Submit a context node's task with the completion routed to the graph. */
static doca_error_t graph_task_start(struct core_graph_slot *slot)
{
	struct doca_task *task = slot->data.task;
	doca_error_t status;

	/* A task already in flight (another instance's, the application's)
	 * must keep its own routing. */
	if (unlikely(task->state != SOFTDOCA_TASK_ALLOCATED)) {
		SDK_LOG_ERR("graph instance %p: the task of context node %u is %s", (void *)slot->inst, slot->index,
			    task->state == SOFTDOCA_TASK_FREE ? "free" : "already in flight");
		return DOCA_ERROR_BAD_STATE;
	}
	task->graph_slot = slot;
	status = core_task_submit(task);
	if (unlikely(status != DOCA_SUCCESS))
		task->graph_slot = NULL;
	return status;
}

/* Start one node whose dependencies all completed. */
static void graph_slot_start(struct core_graph_slot *slot)
{
	struct doca_graph_instance *inst = slot->inst;
	struct doca_graph *graph = inst->graph;
	struct doca_graph_node *node = graph->nodes[slot->index];
	doca_error_t status;

	inst->num_running++;
	switch (node->kind) {
	case GRAPH_NODE_CTX:
		status = graph_task_start(slot);
		if (likely(status == DOCA_SUCCESS))
			return;
		if (graph_overloaded(status)) {
			graph_ready_push(graph_sched(graph), graph->pe, slot);
			return;
		}
		SDK_LOG_ERR("graph %p: context node %u: task submit failed: %s", (void *)graph, slot->index,
			    doca_error_get_name(status));
		graph_slot_done(slot, status);
		return;
	case GRAPH_NODE_USER:
		graph_ready_push(graph_sched(graph), graph->pe, slot);
		return;
	case GRAPH_NODE_SUB:
		status = graph_instance_begin(slot->data.sub, slot);
		if (status != DOCA_SUCCESS)
			graph_slot_done(slot, status);
		return;
	}
}

static void graph_done_push(struct core_graph_sched *sched, struct doca_graph_instance *inst)
{
	inst->done_next = NULL;
	if (sched->done_tail == NULL)
		sched->done_head = inst;
	else
		sched->done_tail->done_next = inst;
	sched->done_tail = inst;
	softdoca_pe_wake(inst->graph->pe);
}

/* The last use of inst: the callback may resubmit or destroy it. */
static void graph_instance_deliver(struct doca_graph_instance *inst)
{
	struct doca_graph *graph = inst->graph;
	doca_graph_completion_cb_t cb = inst->status == DOCA_SUCCESS ? graph->done_cb : graph->error_cb;

	inst->state = GRAPH_INST_IDLE;
	SDK_LOG_TRC("graph %p instance %p completed: %s", (void *)graph, (void *)inst,
		    doca_error_get_name(inst->status));
	cb(inst, inst->user_data, graph->user_data);
}

static void graph_instance_finish(struct doca_graph_instance *inst)
{
	struct core_graph_slot *parent = inst->parent;

	if (parent != NULL) {
		/* A sub-graph run is its parent node's completion. */
		inst->parent = NULL;
		inst->state = GRAPH_INST_IDLE;
		graph_slot_done(parent, inst->status);
		return;
	}
	if (graph_sched(inst->graph)->submitting > 0) {
		inst->state = GRAPH_INST_FINISHED;
		graph_done_push(graph_sched(inst->graph), inst);
		return;
	}
	graph_instance_deliver(inst);
}

/* A node of a running instance is done (completed, failed or skipped). */
static void graph_slot_done(struct core_graph_slot *slot, doca_error_t status)
{
	struct doca_graph_instance *inst = slot->inst;
	uint32_t i;

	if (status != DOCA_SUCCESS) {
		if (inst->status == DOCA_SUCCESS)
			inst->status = status;
	} else if (inst->status == DOCA_SUCCESS) {
		struct doca_graph_node *node = graph_node_of(slot);

		/* This node still counts as running, so the instance cannot
		 * finish while its dependents start. */
		for (i = 0; i < node->num_succ && inst->status == DOCA_SUCCESS; i++) {
			struct core_graph_slot *next = &inst->slots[node->succ[i]];

			if (--next->remaining == 0)
				graph_slot_start(next);
		}
	}
	if (--inst->num_running == 0)
		graph_instance_finish(inst);
}

void core_graph_task_done(struct doca_task *task)
{
	struct core_graph_slot *slot = task->graph_slot;

	task->graph_slot = NULL;
	graph_slot_done(slot, task->status);
}

static bool graph_instance_complete_data(const struct doca_graph_instance *inst)
{
	uint32_t i;

	for (i = 0; i < inst->graph->num_nodes; i++) {
		if (!inst->slots[i].has_data) {
			SDK_LOG_ERR("graph instance %p: %s node %u has no data; set it before submitting", (void *)inst,
				    graph_kind_name(inst->graph->nodes[i]->kind), i);
			return false;
		}
	}
	return true;
}

/* Start a run of inst (top level when parent is NULL). On an error the
 * instance is left as it was and nothing was started. */
static doca_error_t graph_instance_begin(struct doca_graph_instance *inst, struct core_graph_slot *parent)
{
	struct doca_graph *graph = inst->graph;
	struct core_graph_sched *sched = graph_sched(graph);
	uint32_t i;

	if (inst->state != GRAPH_INST_IDLE) {
		SDK_LOG_ERR("graph instance %p is already submitted", (void *)inst);
		return DOCA_ERROR_IN_USE;
	}
	if (!graph_instance_complete_data(inst))
		return DOCA_ERROR_BAD_STATE;
	for (i = 0; i < graph->num_nodes; i++)
		inst->slots[i].remaining = graph->nodes[i]->num_preds;
	inst->status = DOCA_SUCCESS;
	inst->num_running = 0;
	inst->parent = parent;
	inst->state = GRAPH_INST_RUNNING;

	sched->submitting++;
	/* The first root, a context node, refusing its task is the submit's
	 * own error: nothing ran, so the instance stays idle. */
	i = 0;
	if (graph->nodes[graph->roots[0]]->kind == GRAPH_NODE_CTX) {
		struct core_graph_slot *first = &inst->slots[graph->roots[0]];
		doca_error_t status = graph_task_start(first);

		if (status != DOCA_SUCCESS && !graph_overloaded(status)) {
			SDK_LOG_ERR("graph instance %p: root task submit failed: %s", (void *)inst,
				    doca_error_get_name(status));
			inst->state = GRAPH_INST_IDLE;
			inst->parent = NULL;
			sched->submitting--;
			return status;
		}
		inst->num_running++;
		if (status != DOCA_SUCCESS)
			graph_ready_push(sched, graph->pe, first);
		i = 1;
	}
	/* Hold the instance open while the roots start. */
	inst->num_running++;
	for (; i < graph->num_roots && inst->status == DOCA_SUCCESS; i++)
		graph_slot_start(&inst->slots[graph->roots[i]]);
	if (--inst->num_running == 0)
		graph_instance_finish(inst);
	sched->submitting--;
	return DOCA_SUCCESS;
}

/* One node from the ready list; false when it had to wait again. */
static bool graph_ready_run(struct core_graph_sched *sched, struct core_graph_slot *slot)
{
	struct doca_graph_instance *inst = slot->inst;
	struct doca_graph_node *node = graph_node_of(slot);
	doca_error_t status;

	if (inst->status != DOCA_SUCCESS) {
		/* Another node failed: new nodes are not started. */
		graph_slot_done(slot, inst->status);
		return true;
	}
	if (node->kind == GRAPH_NODE_USER) {
		status = node->u.cb(slot->data.cookie);
		if (status != DOCA_SUCCESS)
			SDK_LOG_DBG("graph instance %p: user node %u failed: %s", (void *)inst, slot->index,
				    doca_error_get_name(status));
		graph_slot_done(slot, status);
		return true;
	}
	status = graph_task_start(slot); /* a context node that was full */
	if (status == DOCA_SUCCESS)
		return true;
	if (graph_overloaded(status)) {
		graph_ready_push(sched, inst->graph->pe, slot);
		return false;
	}
	SDK_LOG_ERR("graph instance %p: context node %u: task submit failed: %s", (void *)inst, slot->index,
		    doca_error_get_name(status));
	graph_slot_done(slot, status);
	return true;
}

unsigned int core_graph_progress(struct doca_pe *pe)
{
	struct core_graph_sched *sched = pe->graphs;
	struct doca_graph_instance *inst, *next_inst;
	unsigned int events = 0, round;

	for (round = 0; round < GRAPH_READY_ROUNDS && sched->ready_head != NULL; round++) {
		struct core_graph_slot *slot = sched->ready_head, *next;
		bool advanced = false;

		/* Nodes made ready by this round wait for the next one. */
		sched->ready_head = NULL;
		sched->ready_tail = NULL;
		for (; slot != NULL; slot = next) {
			next = slot->next;
			if (graph_ready_run(sched, slot)) {
				advanced = true;
				events++;
			}
		}
		if (!advanced)
			break;
	}
	inst = sched->done_head;
	sched->done_head = NULL;
	sched->done_tail = NULL;
	for (; inst != NULL; inst = next_inst) {
		next_inst = inst->done_next;
		graph_instance_deliver(inst);
		events++;
	}
	return events;
}

bool core_graph_has_work(const struct doca_pe *pe)
{
	return pe->graphs->ready_head != NULL || pe->graphs->done_head != NULL;
}

/* ---- the graph ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_graph_create(struct doca_pe *pe, struct doca_graph **graph)
{
	struct doca_graph *g;

	if (pe == NULL || graph == NULL) {
		SDK_LOG_ERR("doca_graph_create: %s is NULL", pe == NULL ? "pe" : "graph output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (pe->graphs == NULL) {
		pe->graphs = calloc(1, sizeof(*pe->graphs));
		if (pe->graphs == NULL) {
			SDK_LOG_ERR("doca_graph_create: out of memory");
			return DOCA_ERROR_NO_MEMORY;
		}
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL) {
		SDK_LOG_ERR("doca_graph_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	g->pe = pe;
	pe->graphs->num_graphs++;
	SDK_LOG_TRC("graph %p created on pe %p", (void *)g, (void *)pe);
	*graph = g;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_destroy(struct doca_graph *graph)
{
	uint32_t i;

	if (graph == NULL) {
		SDK_LOG_ERR("doca_graph_destroy: graph is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (graph->started)
		return softdoca_bad_state("doca_graph_destroy", "graph", "started", "stopped",
					  "doca_graph_stop it (its instances destroyed) first");
	if (graph->num_parents > 0) {
		SDK_LOG_ERR("doca_graph_destroy: graph %p is the sub-graph of %u nodes of other graphs; destroy those first",
			    (void *)graph, graph->num_parents);
		return DOCA_ERROR_IN_USE;
	}
	for (i = 0; i < graph->num_nodes; i++) {
		struct doca_graph_node *node = graph->nodes[i];

		if (node->kind == GRAPH_NODE_SUB)
			node->u.sub->num_parents--;
		free(node->succ);
		free(node);
	}
	free(graph->nodes);
	free(graph->roots);
	graph->pe->graphs->num_graphs--;
	SDK_LOG_TRC("graph %p destroyed", (void *)graph);
	free(graph);
	return DOCA_SUCCESS;
}

static doca_error_t graph_check_stopped(const struct doca_graph *graph, const char *what)
{
	if (graph->started)
		return softdoca_bad_state(what, "graph", "started", "not started",
					  "configure it before doca_graph_start, or stop it first");
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_set_conf(struct doca_graph *graph, doca_graph_completion_cb_t graph_completion_cb,
				 doca_graph_completion_cb_t graph_error_cb, uint32_t num_instances)
{
	if (graph == NULL) {
		SDK_LOG_ERR("doca_graph_set_conf: graph is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (graph_check_stopped(graph, "doca_graph_set_conf") != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (graph_completion_cb == NULL || graph_error_cb == NULL) {
		SDK_LOG_ERR("doca_graph_set_conf: both the completion and the error callback are required");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (num_instances == 0 || num_instances > GRAPH_MAX_INSTANCES) {
		SDK_LOG_ERR("doca_graph_set_conf: num_instances %u out of range [1, %u]", num_instances,
			    GRAPH_MAX_INSTANCES);
		return DOCA_ERROR_INVALID_VALUE;
	}
	graph->done_cb = graph_completion_cb;
	graph->error_cb = graph_error_cb;
	graph->max_instances = num_instances;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_set_user_data(struct doca_graph *graph, union doca_data user_data)
{
	if (graph == NULL) {
		SDK_LOG_ERR("doca_graph_set_user_data: graph is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (graph_check_stopped(graph, "doca_graph_set_user_data") != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	graph->user_data = user_data;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_get_user_data(const struct doca_graph *graph, union doca_data *user_data)
{
	if (graph == NULL || user_data == NULL) {
		SDK_LOG_ERR("doca_graph_get_user_data: %s is NULL", graph == NULL ? "graph" : "user_data");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*user_data = graph->user_data;
	return DOCA_SUCCESS;
}

static doca_error_t graph_node_add(struct doca_graph *graph, enum graph_node_kind kind, const char *what,
				   struct doca_graph_node **node_out)
{
	struct doca_graph_node *node;

	if (graph_check_stopped(graph, what) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (graph->num_nodes == GRAPH_MAX_NODES) {
		SDK_LOG_ERR("%s: graph %p already has %u nodes, the most softdoca allows", what, (void *)graph,
			    GRAPH_MAX_NODES);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (graph->num_nodes == graph->cap_nodes) {
		uint32_t cap = graph->cap_nodes == 0 ? 8 : graph->cap_nodes * 2;
		struct doca_graph_node **nodes = realloc(graph->nodes, (size_t)cap * sizeof(*nodes));

		if (nodes == NULL) {
			SDK_LOG_ERR("%s: out of memory", what);
			return DOCA_ERROR_NO_MEMORY;
		}
		graph->nodes = nodes;
		graph->cap_nodes = cap;
	}
	node = calloc(1, sizeof(*node));
	if (node == NULL) {
		SDK_LOG_ERR("%s: out of memory", what);
		return DOCA_ERROR_NO_MEMORY;
	}
	node->graph = graph;
	node->kind = kind;
	node->index = graph->num_nodes;
	graph->nodes[graph->num_nodes++] = node;
	*node_out = node;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_ctx(struct doca_graph *graph, const struct doca_ctx *ctx,
					     struct doca_graph_node **node)
{
	doca_error_t status;

	if (graph == NULL || ctx == NULL || node == NULL) {
		SDK_LOG_ERR("doca_graph_node_create_from_ctx: %s is NULL",
			    graph == NULL ? "graph" : ctx == NULL ? "ctx" : "node output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ctx->pe != NULL && ctx->pe != graph->pe) {
		SDK_LOG_ERR("doca_graph_node_create_from_ctx: the %s context is connected to another progress engine",
			    ctx->ops->name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = graph_node_add(graph, GRAPH_NODE_CTX, "doca_graph_node_create_from_ctx", node);
	if (status != DOCA_SUCCESS)
		return status;
	(*node)->u.ctx = ctx;
	graph->num_ctx_nodes++;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_user(struct doca_graph *graph, doca_graph_user_node_cb_t cb,
					      struct doca_graph_node **node)
{
	doca_error_t status;

	if (graph == NULL || cb == NULL || node == NULL) {
		SDK_LOG_ERR("doca_graph_node_create_from_user: %s is NULL",
			    graph == NULL ? "graph" : cb == NULL ? "cb" : "node output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = graph_node_add(graph, GRAPH_NODE_USER, "doca_graph_node_create_from_user", node);
	if (status != DOCA_SUCCESS)
		return status;
	(*node)->u.cb = cb;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_graph(struct doca_graph *graph, struct doca_graph *sub_graph,
					       struct doca_graph_node **node)
{
	doca_error_t status;

	if (graph == NULL || sub_graph == NULL || node == NULL) {
		SDK_LOG_ERR("doca_graph_node_create_from_graph: %s is NULL",
			    graph == NULL ? "graph" : sub_graph == NULL ? "sub_graph" : "node output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (sub_graph == graph) {
		SDK_LOG_ERR("doca_graph_node_create_from_graph: a graph cannot be its own sub-graph");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (sub_graph->pe != graph->pe) {
		SDK_LOG_ERR("doca_graph_node_create_from_graph: the sub-graph is bound to another progress engine");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sub_graph->started) {
		/* A started sub-graph is frozen, which is also what rules out a
		 * cycle of graphs (A in B in A). */
		return softdoca_bad_state("doca_graph_node_create_from_graph", "sub-graph", "not started", "started",
					  "doca_graph_start the sub-graph first");
	}
	status = graph_node_add(graph, GRAPH_NODE_SUB, "doca_graph_node_create_from_graph", node);
	if (status != DOCA_SUCCESS)
		return status;
	(*node)->u.sub = sub_graph;
	sub_graph->num_parents++;
	return DOCA_SUCCESS;
}

/* True when target is reachable from start along dependencies. */
static doca_error_t graph_reaches(const struct doca_graph *graph, uint32_t start, uint32_t target, bool *found)
{
	uint32_t *stack = malloc((size_t)graph->num_nodes * sizeof(*stack));
	uint8_t *seen = calloc(graph->num_nodes, 1);
	uint32_t depth = 0, i;

	if (stack == NULL || seen == NULL) {
		free(stack);
		free(seen);
		SDK_LOG_ERR("doca_graph_add_dependency: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	*found = false;
	stack[depth++] = start;
	seen[start] = 1;
	while (depth > 0 && !*found) {
		const struct doca_graph_node *node = graph->nodes[stack[--depth]];

		for (i = 0; i < node->num_succ; i++) {
			uint32_t s = node->succ[i];

			if (s == target) {
				*found = true;
				break;
			}
			if (!seen[s]) {
				seen[s] = 1;
				stack[depth++] = s;
			}
		}
	}
	free(stack);
	free(seen);
	return DOCA_SUCCESS;
}

static bool graph_has_edge(const struct doca_graph_node *from, uint32_t to)
{
	uint32_t i;

	for (i = 0; i < from->num_succ; i++)
		if (from->succ[i] == to)
			return true;
	return false;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_add_dependency(struct doca_graph *graph, struct doca_graph_node *from,
				       struct doca_graph_node *to)
{
	doca_error_t status;
	bool cycle;

	if (graph == NULL || from == NULL || to == NULL) {
		SDK_LOG_ERR("doca_graph_add_dependency: %s is NULL",
			    graph == NULL ? "graph" : from == NULL ? "from" : "to");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (from->graph != graph || to->graph != graph) {
		SDK_LOG_ERR("doca_graph_add_dependency: the %s node belongs to another graph",
			    from->graph != graph ? "from" : "to");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (graph_check_stopped(graph, "doca_graph_add_dependency") != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (from == to) {
		SDK_LOG_ERR("doca_graph_add_dependency: node %u cannot depend on itself", from->index);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (graph_has_edge(from, to->index))
		return DOCA_SUCCESS;
	status = graph_reaches(graph, to->index, from->index, &cycle);
	if (status != DOCA_SUCCESS)
		return status;
	if (cycle) {
		SDK_LOG_ERR("doca_graph_add_dependency: node %u already depends on node %u; this would close a cycle",
			    from->index, to->index);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (from->num_succ == from->cap_succ) {
		uint32_t cap = from->cap_succ == 0 ? 4 : from->cap_succ * 2;
		uint32_t *succ = realloc(from->succ, (size_t)cap * sizeof(*succ));

		if (succ == NULL) {
			SDK_LOG_ERR("doca_graph_add_dependency: out of memory");
			return DOCA_ERROR_NO_MEMORY;
		}
		from->succ = succ;
		from->cap_succ = cap;
	}
	from->succ[from->num_succ++] = to->index;
	to->num_preds++;
	return DOCA_SUCCESS;
}

static doca_error_t graph_check_contexts(const struct doca_graph *graph)
{
	uint32_t i;

	for (i = 0; i < graph->num_nodes; i++) {
		const struct doca_graph_node *node = graph->nodes[i];

		if (node->kind != GRAPH_NODE_CTX)
			continue;
		if (node->u.ctx->pe != graph->pe) {
			SDK_LOG_ERR("doca_graph_start: the %s context of node %u is not connected to the graph's progress engine",
				    node->u.ctx->ops->name, i);
			return DOCA_ERROR_BAD_STATE;
		}
		if (node->u.ctx->state != DOCA_CTX_STATE_RUNNING) {
			char object[64];

			snprintf(object, sizeof(object), "%s context of node %u", node->u.ctx->ops->name, i);
			return softdoca_bad_state("doca_graph_start", object, softdoca_ctx_state_name(node->u.ctx->state),
						  "running", "doca_ctx_start it before doca_graph_start");
		}
	}
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_start(struct doca_graph *graph)
{
	uint32_t i, n = 0;
	doca_error_t status;

	if (graph == NULL) {
		SDK_LOG_ERR("doca_graph_start: graph is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (graph->started)
		return DOCA_SUCCESS;
	if (graph->num_ctx_nodes == 0) {
		SDK_LOG_ERR("doca_graph_start: graph %p has no context node; a graph needs at least one", (void *)graph);
		return DOCA_ERROR_BAD_STATE;
	}
	if (graph->max_instances == 0) {
		SDK_LOG_ERR("doca_graph_start: graph %p is not configured; call doca_graph_set_conf first", (void *)graph);
		return DOCA_ERROR_BAD_STATE;
	}
	status = graph_check_contexts(graph);
	if (status != DOCA_SUCCESS)
		return status;
	free(graph->roots);
	graph->roots = malloc((size_t)graph->num_nodes * sizeof(*graph->roots));
	if (graph->roots == NULL) {
		SDK_LOG_ERR("doca_graph_start: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	/* Context roots first: the first one's refusal is submit's error. */
	for (i = 0; i < graph->num_nodes; i++)
		if (graph->nodes[i]->num_preds == 0 && graph->nodes[i]->kind == GRAPH_NODE_CTX)
			graph->roots[n++] = i;
	for (i = 0; i < graph->num_nodes; i++)
		if (graph->nodes[i]->num_preds == 0 && graph->nodes[i]->kind != GRAPH_NODE_CTX)
			graph->roots[n++] = i;
	graph->num_roots = n; /* > 0: an acyclic graph with nodes has a root */
	graph->started = true;
	SDK_LOG_TRC("graph %p started: %u nodes, %u roots", (void *)graph, graph->num_nodes, n);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_stop(struct doca_graph *graph)
{
	if (graph == NULL) {
		SDK_LOG_ERR("doca_graph_stop: graph is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!graph->started)
		return DOCA_SUCCESS;
	if (graph->num_instances > 0) {
		SDK_LOG_ERR("doca_graph_stop: graph %p still has %u instances; destroy them first", (void *)graph,
			    graph->num_instances);
		return DOCA_ERROR_IN_USE;
	}
	graph->started = false;
	SDK_LOG_TRC("graph %p stopped", (void *)graph);
	return DOCA_SUCCESS;
}

/* ---- instances ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_create(const struct doca_graph *graph, struct doca_graph_instance **graph_instance)
{
	struct doca_graph *g = (struct doca_graph *)graph; /* the count of instances changes */
	struct doca_graph_instance *inst;
	uint32_t i;

	if (graph == NULL || graph_instance == NULL) {
		SDK_LOG_ERR("doca_graph_instance_create: %s is NULL", graph == NULL ? "graph" : "instance output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!graph->started)
		return softdoca_bad_state("doca_graph_instance_create", "graph", "not started", "started",
					  "doca_graph_start it first");
	if (graph->num_instances >= graph->max_instances) {
		SDK_LOG_ERR("doca_graph_instance_create: graph %p already has %u instances, its num_instances",
			    (void *)graph, graph->num_instances);
		return DOCA_ERROR_NO_MEMORY;
	}
	inst = calloc(1, sizeof(*inst) + (size_t)graph->num_nodes * sizeof(inst->slots[0]));
	if (inst == NULL) {
		SDK_LOG_ERR("doca_graph_instance_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	inst->graph = g;
	inst->state = GRAPH_INST_IDLE;
	for (i = 0; i < graph->num_nodes; i++) {
		inst->slots[i].inst = inst;
		inst->slots[i].index = i;
	}
	g->num_instances++;
	*graph_instance = inst;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_destroy(struct doca_graph_instance *graph_instance)
{
	struct doca_graph *graph;
	uint32_t i;

	if (graph_instance == NULL) {
		SDK_LOG_ERR("doca_graph_instance_destroy: graph_instance is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (graph_instance->state != GRAPH_INST_IDLE) {
		SDK_LOG_ERR("doca_graph_instance_destroy: instance %p is submitted; wait for its completion",
			    (void *)graph_instance);
		return DOCA_ERROR_IN_USE;
	}
	if (graph_instance->owner != NULL) {
		SDK_LOG_ERR("doca_graph_instance_destroy: instance %p is the data of a sub-graph node of instance %p",
			    (void *)graph_instance, (void *)graph_instance->owner->inst);
		return DOCA_ERROR_IN_USE;
	}
	graph = graph_instance->graph;
	for (i = 0; i < graph->num_nodes; i++)
		if (graph->nodes[i]->kind == GRAPH_NODE_SUB && graph_instance->slots[i].has_data)
			graph_instance->slots[i].data.sub->owner = NULL;
	graph->num_instances--;
	free(graph_instance);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_data(struct doca_graph_instance *graph_instance, union doca_data user_data)
{
	if (graph_instance == NULL) {
		SDK_LOG_ERR("doca_graph_instance_set_user_data: graph_instance is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (graph_instance->state != GRAPH_INST_IDLE) {
		SDK_LOG_ERR("doca_graph_instance_set_user_data: instance %p is submitted", (void *)graph_instance);
		return DOCA_ERROR_IN_USE;
	}
	graph_instance->user_data = user_data;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_get_user_data(const struct doca_graph_instance *graph_instance,
					       union doca_data *user_data)
{
	if (graph_instance == NULL || user_data == NULL) {
		SDK_LOG_ERR("doca_graph_instance_get_user_data: %s is NULL",
			    graph_instance == NULL ? "graph_instance" : "user_data");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*user_data = graph_instance->user_data;
	return DOCA_SUCCESS;
}

/* The checks every set_*_node_data shares; the slot on success. */
static doca_error_t graph_node_data_slot(struct doca_graph_instance *inst, const struct doca_graph_node *node,
					 enum graph_node_kind kind, const char *what, struct core_graph_slot **slot)
{
	if (inst == NULL || node == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", what, inst == NULL ? "graph_instance" : "node");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (inst->state != GRAPH_INST_IDLE)
		return softdoca_bad_state(what, "graph instance", "submitted", "idle",
					  "change it after its completion callback ran");
	if (node->graph != inst->graph) {
		SDK_LOG_ERR("%s: the node belongs to another graph than the instance's", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (node->kind != kind) {
		SDK_LOG_ERR("%s: node %u is a %s node, not a %s node", what, node->index, graph_kind_name(node->kind),
			    graph_kind_name(kind));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	*slot = &inst->slots[node->index];
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_ctx_node_data(struct doca_graph_instance *graph_instance,
						   struct doca_graph_node *node, struct doca_task *task)
{
	const char *what = "doca_graph_instance_set_ctx_node_data";
	struct core_graph_slot *slot;
	doca_error_t status;

	if (task == NULL) {
		SDK_LOG_ERR("%s: task is NULL", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = graph_node_data_slot(graph_instance, node, GRAPH_NODE_CTX, what, &slot);
	if (status != DOCA_SUCCESS)
		return status;
	if (task->state == SOFTDOCA_TASK_FREE) {
		SDK_LOG_ERR("%s: task %p is free; allocate it from the node's context", what, (void *)task);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (softdoca_task_ctx(task) != node->u.ctx) {
		SDK_LOG_ERR("%s: task %p belongs to another context than node %u's", what, (void *)task, node->index);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	slot->data.task = task;
	slot->has_data = true;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_node_data(struct doca_graph_instance *graph_instance,
						    struct doca_graph_node *node, void *cookie)
{
	struct core_graph_slot *slot;
	doca_error_t status;

	status = graph_node_data_slot(graph_instance, node, GRAPH_NODE_USER, "doca_graph_instance_set_user_node_data",
				      &slot);
	if (status != DOCA_SUCCESS)
		return status;
	slot->data.cookie = cookie;
	slot->has_data = true;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_sub_graph_node_data(struct doca_graph_instance *graph_instance,
							 struct doca_graph_node *node,
							 struct doca_graph_instance *sub_graph_instance)
{
	const char *what = "doca_graph_instance_set_sub_graph_node_data";
	struct core_graph_slot *slot;
	doca_error_t status;

	if (sub_graph_instance == NULL) {
		SDK_LOG_ERR("%s: sub_graph_instance is NULL", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = graph_node_data_slot(graph_instance, node, GRAPH_NODE_SUB, what, &slot);
	if (status != DOCA_SUCCESS)
		return status;
	if (sub_graph_instance->graph != node->u.sub) {
		SDK_LOG_ERR("%s: the instance was not created by node %u's sub-graph", what, node->index);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (sub_graph_instance->state != GRAPH_INST_IDLE) {
		SDK_LOG_ERR("%s: the sub-graph instance is submitted", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (sub_graph_instance->owner != NULL && sub_graph_instance->owner != slot) {
		SDK_LOG_ERR("%s: the sub-graph instance is already the data of another node", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (slot->has_data && slot->data.sub != sub_graph_instance)
		slot->data.sub->owner = NULL;
	sub_graph_instance->owner = slot;
	slot->data.sub = sub_graph_instance;
	slot->has_data = true;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_submit(struct doca_graph_instance *graph_instance)
{
	if (graph_instance == NULL) {
		SDK_LOG_ERR("doca_graph_instance_submit: graph_instance is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!graph_instance->graph->started)
		return softdoca_bad_state("doca_graph_instance_submit", "graph of this instance", "not started",
					  "started", "doca_graph_start it first");
	return graph_instance_begin(graph_instance, NULL);
}
