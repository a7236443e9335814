/*
 * softdoca — internals of contexts and tasks, shared by every library that
 * implements a DOCA context (dma, rdma).
 *
 * A library embeds struct doca_ctx in its own context object and gives it a
 * softdoca_ctx_ops table. Each task type the context offers is a
 * softdoca_task_type: its set_conf sizes a pool that is allocated at start
 * and released when the context is IDLE again, so the data path never
 * mallocs. A library's task struct starts with a struct doca_task.
 *
 * Threads: everything here runs on the application's thread, except
 * softdoca_task_complete and softdoca_pe_wake, which any thread may call.
 */
#ifndef SOFTDOCA_CORE_CTX_H_
#define SOFTDOCA_CORE_CTX_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_ctx.h>
#include <doca_pe.h>

#include "common.h"

struct doca_dev;
struct softdoca_task_type;
struct core_graph_slot;

/* What a library plugs into the generic context. Empty slots are fine. */
struct softdoca_ctx_ops {
	const char *name; /* for log lines, e.g. "dma" */
	/* Prepare to run. DOCA_SUCCESS: RUNNING at once. DOCA_ERROR_IN_PROGRESS:
	 * STARTING; the library calls softdoca_ctx_start_done later. */
	doca_error_t (*start)(struct doca_ctx *ctx);
	/* Stop requested: complete every in-flight task with an error status
	 * (softdoca_task_complete) and begin tearing down. */
	void (*stop)(struct doca_ctx *ctx);
	/* False while the library still has teardown work (connections
	 * closing); the context stays STOPPING until it says true. */
	bool (*stop_finished)(struct doca_ctx *ctx);
	/* The context became IDLE: release run-time resources. */
	void (*stopped)(struct doca_ctx *ctx);
	/* Called from doca_pe_progress while not IDLE; returns how many things
	 * it did (0 = nothing). */
	unsigned int (*progress)(struct doca_ctx *ctx);
	/* Called from doca_pe_progress after the task completions were
	 * delivered: events that must come after them (a connection's
	 * disconnection after the last task that completed on it). */
	unsigned int (*deliver)(struct doca_ctx *ctx);
	/* True when progress would find work (for the notification handle). */
	bool (*has_work)(struct doca_ctx *ctx);
};

/* What a task type plugs in. */
struct softdoca_task_ops {
	/* Hand the task to the engine. It completes later through
	 * softdoca_task_complete. An error leaves the task with the caller. */
	doca_error_t (*submit)(struct doca_task *task);
	/* Validate parameters for doca_task_try_submit; log what is wrong. */
	doca_error_t (*check)(const struct doca_task *task);
};

enum softdoca_task_state {
	SOFTDOCA_TASK_FREE = 0,  /* in the pool */
	SOFTDOCA_TASK_ALLOCATED, /* the application's */
	SOFTDOCA_TASK_INFLIGHT,  /* submitted, completion not yet delivered */
};

struct doca_task {
	struct softdoca_task_type *type;
	union doca_data user_data;
	doca_error_t status;
	uint8_t state;           /* enum softdoca_task_state */
	/* doca_task_free was called while it was in flight: it goes back to
	 * its pool when its completion (or stop's flush) is delivered, and
	 * no callback runs for it (the application gave it up). */
	bool freed;
	bool no_flush;           /* being submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH */
	struct doca_task *next;  /* pool free list, a library queue, or the PE completion queue */
	/* Set while a graph instance runs this task as a node: the completion
	 * goes to the graph, not to the task's callbacks (see graph.h). */
	struct core_graph_slot *graph_slot;
	uint64_t trace_submit_ns; /* trace.h: when it was submitted, while tracing */
	uint32_t trace_tid;       /* trace.h: its track (its connection's or its context's) */
};

#define SOFTDOCA_CTX_MAX_TASK_TYPES 16

/* The most tasks one pool may hold; keeps num_tasks * task_size sane. */
#define SOFTDOCA_TASK_POOL_MAX (1U << 22)

struct softdoca_task_type {
	struct doca_ctx *ctx;
	const struct softdoca_task_ops *ops;
	const char *name; /* for log lines, e.g. "memcpy" */
	/* Typed callbacks of the library, called with the task pointer (the
	 * library task struct starts with struct doca_task). */
	doca_task_completion_cb_t success_cb;
	doca_task_completion_cb_t error_cb;
	uint32_t num_tasks;   /* from set_conf; 0 = not configured */
	size_t task_size;     /* size of the library's task struct */
	void *pool;           /* pool_tasks * task_size, while not IDLE or tasks are held */
	uint32_t pool_tasks;  /* how many tasks pool holds (num_tasks when it was made) */
	struct doca_task *free_list;
	uint32_t num_allocated;
	bool empty_explained; /* the empty pool was explained in this run */
};

struct doca_ctx {
	const struct softdoca_ctx_ops *ops;
	struct doca_pe *pe;
	struct doca_dev *dev;
	enum doca_ctx_states state;
	union doca_data user_data;
	doca_ctx_state_changed_callback_t state_cb;
	size_t num_inflight;
	uint32_t num_allocated; /* tasks out of every pool */
	uint64_t stop_ns;       /* when it went STOPPING (what still blocks it is said after a while) */
	bool stop_explained;    /* that was said for this stop */
	bool inflight_free_explained; /* a free of an in-flight task was explained in this run */
	struct softdoca_task_type *task_types[SOFTDOCA_CTX_MAX_TASK_TYPES];
	unsigned int num_task_types;
	struct doca_ctx *pe_next; /* PE's list of connected contexts */
	uint32_t trace_tid;       /* trace.h: this context's track, 0 when not tracing */
};

/* Set up the embedded context of a new library object and record it as
 * live (DOCA_ERROR_NO_MEMORY if it cannot be; nothing to undo then). */
SOFTDOCA_EXPORT doca_error_t softdoca_ctx_init(struct doca_ctx *ctx, const struct softdoca_ctx_ops *ops,
					       struct doca_dev *dev);

/* Tear down the embedded context before the library frees its object:
 * DOCA_ERROR_BAD_STATE unless IDLE; disconnects it from its PE. */
SOFTDOCA_EXPORT doca_error_t softdoca_ctx_fini(struct doca_ctx *ctx);

/* "idle", "starting", "running", "stopping": for log lines. */
SOFTDOCA_EXPORT const char *softdoca_ctx_state_name(enum doca_ctx_states state);

/* One context state in a mask of the states a call accepts. */
#define SOFTDOCA_CTX_STATE_BIT(state) (1u << (unsigned int)(state))

/* DOCA_SUCCESS when ctx is in one of the states of mask; otherwise
 * DOCA_ERROR_BAD_STATE and one ERROR line naming func, the state ctx is
 * in, the states the call needs and hint (what to do; may be NULL). The
 * one place a lifecycle call's BAD_STATE is explained. */
SOFTDOCA_EXPORT doca_error_t softdoca_ctx_check_state(const struct doca_ctx *ctx, unsigned int mask,
						      const char *func, const char *hint);

/* How long something a program waits for may hang before softdoca
 * explains it in the log (SOFTDOCA_PE_STALL_MS, default 3000 ms; 0: never). */
SOFTDOCA_EXPORT uint32_t softdoca_explain_after_ms(void);

/* DOCA_ERROR_BAD_STATE (with a log line naming the call) unless IDLE:
 * the guard of every configuration setter. */
SOFTDOCA_EXPORT doca_error_t softdoca_ctx_check_idle(const struct doca_ctx *ctx, const char *what);

/* A STARTING context finished starting: RUNNING on DOCA_SUCCESS, back to
 * IDLE otherwise. Call from the context's progress op. */
SOFTDOCA_EXPORT void softdoca_ctx_start_done(struct doca_ctx *ctx, doca_error_t status);

/* A fatal error in a RUNNING context: it moves to STOPPING and flushes its
 * tasks, as if doca_ctx_stop had been called. Call from the application's
 * thread (normally from the progress op). */
SOFTDOCA_EXPORT void softdoca_ctx_fail(struct doca_ctx *ctx, doca_error_t reason);
/* The same for an orderly end the program should expect (the peer closed
 * the connection the context exists for): logged as INFO, not ERROR. */
SOFTDOCA_EXPORT void softdoca_ctx_end(struct doca_ctx *ctx, const char *why);

/* Register a task type of ctx. Call once per type at create. */
SOFTDOCA_EXPORT void softdoca_task_type_init(struct softdoca_task_type *type, struct doca_ctx *ctx,
					     const char *name, const struct softdoca_task_ops *ops,
					     size_t task_size);

/* The body of every <task>_set_conf. */
SOFTDOCA_EXPORT doca_error_t softdoca_task_type_set_conf(struct softdoca_task_type *type,
							 doca_task_completion_cb_t success_cb,
							 doca_task_completion_cb_t error_cb, uint32_t num_tasks);

/* Take a task from the pool: DOCA_ERROR_BAD_STATE unless RUNNING,
 * DOCA_ERROR_NO_MEMORY when the pool is empty (or was never sized by
 * set_conf). */
SOFTDOCA_EXPORT doca_error_t softdoca_task_alloc(struct softdoca_task_type *type, union doca_data user_data,
						 struct doca_task **task);

/* softdoca_task_alloc onto a timeline track of the caller's (trace.h: a
 * connection's); softdoca_task_alloc uses the context's. */
SOFTDOCA_EXPORT doca_error_t softdoca_task_alloc_on(struct softdoca_task_type *type, union doca_data user_data,
						    uint32_t trace_tid, struct doca_task **task);

/* Report a submitted task done. Any thread; the callback runs later from
 * doca_pe_progress on the application's thread. */
SOFTDOCA_EXPORT void softdoca_task_complete(struct doca_task *task, doca_error_t status);

/* Wake the PE's notification handle if it is armed: there is work for
 * doca_pe_progress. Any thread. */
SOFTDOCA_EXPORT void softdoca_pe_wake(struct doca_pe *pe);

/* Whether the library may hold a task being submitted back and ring its
 * doorbell later, together with others: it came through
 * doca_task_submit_ex without DOCA_TASK_SUBMIT_FLAG_FLUSH (it goes at the
 * next flushed submit or doca_pe_progress), or from inside
 * doca_pe_progress (a completion callback resubmitting: it goes when the
 * ctx's deliver op runs, at the end of that same progress call). */
SOFTDOCA_EXPORT bool softdoca_task_may_wait(const struct doca_task *task);

static inline struct doca_ctx *softdoca_task_ctx(const struct doca_task *task)
{
	return task->type->ctx;
}

/* Inside libdoca_common only. */
void core_task_deliver(struct doca_task *task);
/* A STOPPING context that did not finish: say once, after a while, what
 * still holds it and which call releases it. */
void core_ctx_explain_stopping(struct doca_ctx *ctx);
doca_error_t core_task_submit(struct doca_task *task);
bool core_ctx_try_finish_stop(struct doca_ctx *ctx);
doca_error_t core_task_pools_create(struct doca_ctx *ctx);
void core_task_pools_destroy(struct doca_ctx *ctx);
void core_task_pools_release(struct doca_ctx *ctx);

#endif /* SOFTDOCA_CORE_CTX_H_ */
