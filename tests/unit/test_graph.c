/*
 * Unit tests of DOCA graphs: lifecycle and configuration rules, cycle
 * refusal, node data rules, dependency order (chain, diamond), failure
 * (error callback once the running nodes finished, dependents never run,
 * the failed task's status), user and sub-graph nodes, overloaded
 * contexts, stop with an instance in flight, and with real DMA tasks:
 * many instances, resubmission many times with flat heap.
 *
 * Context nodes use the fake context (fake_ctx.h) so the test decides
 * when and how each task completes; the DMA cases use the soft device.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_graph.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "fake_ctx.h"

/* ---- fixture: a PE with two running fake contexts ---- */

static struct doca_pe *pe;
static struct fake_ctx *fa, *fb;
static int task_cb_calls; /* the tasks' own callbacks: must stay 0 in graphs */

static int done_calls, error_calls;
static struct doca_graph_instance *last_inst;
static union doca_data last_inst_ud, last_graph_ud;

/* Order in which user nodes ran. */
static int order[64];
static int num_order;

static void on_task(struct doca_task *task, union doca_data tu, union doca_data cu)
{
	(void)task;
	(void)tu;
	(void)cu;
	task_cb_calls++;
}

static void on_done(struct doca_graph_instance *inst, union doca_data iu, union doca_data gu)
{
	done_calls++;
	last_inst = inst;
	last_inst_ud = iu;
	last_graph_ud = gu;
}

static void on_error(struct doca_graph_instance *inst, union doca_data iu, union doca_data gu)
{
	error_calls++;
	last_inst = inst;
	last_inst_ud = iu;
	last_graph_ud = gu;
}

static doca_error_t user_record(void *cookie)
{
	order[num_order++ % 64] = (int)(intptr_t)cookie;
	return DOCA_SUCCESS;
}

static doca_error_t user_fail(void *cookie)
{
	order[num_order++ % 64] = (int)(intptr_t)cookie;
	return DOCA_ERROR_IO_FAILED;
}

static struct fake_ctx *fake_running(void)
{
	struct fake_ctx *f = fake_create();

	assert_int_equal(doca_pe_connect_ctx(pe, &f->ctx), DOCA_SUCCESS);
	assert_int_equal(softdoca_task_type_set_conf(&f->type, on_task, on_task, 32), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(&f->ctx), DOCA_SUCCESS);
	return f;
}

static int setup(void **state)
{
	(void)state;
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	fa = fake_running();
	fb = fake_running();
	task_cb_calls = done_calls = error_calls = num_order = 0;
	last_inst = NULL;
	return 0;
}

static void fake_stop_idle(struct fake_ctx *f)
{
	enum doca_ctx_states st;
	int i;

	(void)doca_ctx_stop(&f->ctx);
	for (i = 0; i < 1000; i++) {
		(void)doca_pe_progress(pe);
		assert_int_equal(doca_ctx_get_state(&f->ctx, &st), DOCA_SUCCESS);
		if (st == DOCA_CTX_STATE_IDLE)
			return;
	}
	fail_msg("fake context did not stop");
}

static int teardown(void **state)
{
	(void)state;
	fake_stop_idle(fa);
	fake_stop_idle(fb);
	fake_destroy(fa);
	fake_destroy(fb);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	return 0;
}

static struct doca_task *fake_task(struct fake_ctx *f)
{
	struct doca_task *t;

	assert_int_equal(softdoca_task_alloc(&f->type, (union doca_data){.u64 = 0}, &t), DOCA_SUCCESS);
	return t;
}

static void progress_n(int n)
{
	while (n-- > 0)
		(void)doca_pe_progress(pe);
}

static struct doca_graph *graph_new(uint32_t instances)
{
	struct doca_graph *g;

	assert_int_equal(doca_graph_create(pe, &g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_set_conf(g, on_done, on_error, instances), DOCA_SUCCESS);
	return g;
}

static void graph_free(struct doca_graph *g)
{
	assert_int_equal(doca_graph_stop(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_destroy(g), DOCA_SUCCESS);
}

/* ---- lifecycle and configuration ---- */

static void test_create_args(void **state)
{
	struct doca_graph *g;

	(void)state;
	assert_int_equal(doca_graph_create(NULL, &g), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_graph_create(pe, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_graph_create(pe, &g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_set_conf(g, NULL, on_error, 1), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_graph_set_conf(g, on_done, NULL, 1), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_graph_set_conf(g, on_done, on_error, 0), DOCA_ERROR_INVALID_VALUE);
	/* a PE with a graph cannot go away */
	assert_int_equal(doca_pe_destroy(pe), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_graph_destroy(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
}

static void test_start_rules(void **state)
{
	struct doca_graph *g;
	struct doca_graph_node *u, *c, *c2, *extra;
	struct doca_graph_instance *i1, *i2, *i3;
	union doca_data ud = {.u64 = 77}, got;
	struct fake_ctx *idle = fake_create();

	(void)state;
	assert_int_equal(doca_graph_create(pe, &g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_user(g, user_record, &u), DOCA_SUCCESS);
	/* no context node */
	assert_int_equal(doca_graph_set_conf(g, on_done, on_error, 2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &c), DOCA_SUCCESS);
	/* a context that is not running (not even connected) */
	assert_int_equal(doca_graph_node_create_from_ctx(g, &idle->ctx, &c2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_destroy(g), DOCA_SUCCESS);
	fake_destroy(idle);

	/* not configured */
	assert_int_equal(doca_graph_create(pe, &g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &i1), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_start(g), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_set_conf(g, on_done, on_error, 2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_set_user_data(g, ud), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS); /* already started: fine */

	/* frozen once started */
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fb->ctx, &extra), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_node_create_from_user(g, user_record, &extra), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_add_dependency(g, c, c), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_set_conf(g, on_done, on_error, 3), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_set_user_data(g, ud), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_destroy(g), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_get_user_data(g, &got), DOCA_SUCCESS);
	assert_int_equal(got.u64, 77);
	assert_int_equal(doca_graph_get_user_data(g, NULL), DOCA_ERROR_INVALID_VALUE);

	/* num_instances bounds the instances alive at once */
	assert_int_equal(doca_graph_instance_create(g, &i1), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &i2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &i3), DOCA_ERROR_NO_MEMORY);
	assert_int_equal(doca_graph_stop(g), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_graph_instance_destroy(i2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &i3), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_user_data(i1, ud), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_get_user_data(i1, &got), DOCA_SUCCESS);
	assert_int_equal(got.u64, 77);
	assert_int_equal(doca_graph_instance_destroy(i1), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_destroy(i3), DOCA_SUCCESS);
	assert_int_equal(doca_graph_stop(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_stop(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &i1), DOCA_ERROR_BAD_STATE);
	/* stopped: configurable again */
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fb->ctx, &extra), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, c, extra), DOCA_SUCCESS);
	assert_int_equal(doca_graph_destroy(g), DOCA_SUCCESS);
}

static void test_cycles_refused(void **state)
{
	struct doca_graph *g, *other;
	struct doca_graph_node *a, *b, *c, *d, *o;

	(void)state;
	g = graph_new(1);
	assert_int_equal(doca_graph_create(pe, &other), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &a), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &b), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fb->ctx, &c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_user(g, user_record, &d), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(other, &fa->ctx, &o), DOCA_SUCCESS);

	assert_int_equal(doca_graph_add_dependency(g, a, a), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_add_dependency(g, a, b), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, a, b), DOCA_SUCCESS); /* again: no change */
	assert_int_equal(doca_graph_add_dependency(g, b, a), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_add_dependency(g, b, c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, c, d), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, d, a), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_add_dependency(g, c, b), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_add_dependency(g, a, d), DOCA_SUCCESS); /* a shortcut is no cycle */
	assert_int_equal(doca_graph_add_dependency(g, a, o), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_graph_add_dependency(g, NULL, a), DOCA_ERROR_INVALID_VALUE);

	/* sub-graphs: itself, or one not started */
	assert_int_equal(doca_graph_node_create_from_graph(g, g, &o), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_node_create_from_graph(g, other, &o), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_destroy(other), DOCA_SUCCESS);
	assert_int_equal(doca_graph_destroy(g), DOCA_SUCCESS);
}

static void test_node_data_rules(void **state)
{
	struct doca_graph *g, *g2;
	struct doca_graph_node *c, *u, *c2;
	struct doca_graph_instance *inst, *inst2;
	struct doca_task *ta = fake_task(fa), *tb = fake_task(fb), *freed = fake_task(fa);

	(void)state;
	g = graph_new(2);
	g2 = graph_new(1);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_user(g, user_record, &u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, c, u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(g2, &fa->ctx, &c2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &inst), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g2, &inst2), DOCA_SUCCESS);

	/* a node without data */
	assert_int_equal(doca_graph_instance_submit(inst), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, u, ta), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c2, ta), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, tb), DOCA_ERROR_NOT_PERMITTED);
	doca_task_free(freed);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, freed), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_instance_set_user_node_data(inst, c, NULL), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, ta), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_submit(inst), DOCA_ERROR_BAD_STATE); /* user node still empty */
	assert_int_equal(doca_graph_instance_set_user_node_data(inst, u, (void *)1), DOCA_SUCCESS);

	assert_int_equal(doca_graph_instance_submit(inst), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_submit(inst), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_graph_instance_destroy(inst), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_graph_instance_set_user_data(inst, (union doca_data){.u64 = 1}), DOCA_ERROR_IN_USE);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, ta), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_instance_set_user_node_data(inst, u, NULL), DOCA_ERROR_BAD_STATE);
	/* the same task cannot run twice at once: the other instance's root
	 * refuses and that submit says so, leaving the instance idle */
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst2, c2, ta), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_submit(inst2), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_instance_destroy(inst2), DOCA_SUCCESS);

	fake_complete_next(fa, DOCA_SUCCESS);
	progress_n(3);
	assert_int_equal(done_calls, 1);
	assert_int_equal(error_calls, 0);
	assert_int_equal(task_cb_calls, 0);
	assert_int_equal(doca_graph_instance_destroy(inst), DOCA_SUCCESS);
	doca_task_free(ta);
	doca_task_free(tb);
	graph_free(g);
	graph_free(g2);
}

/* ---- running ---- */

/* A -> {B, C} -> D(user), all but D on fake contexts. */
struct diamond {
	struct doca_graph *g;
	struct doca_graph_node *a, *b, *c, *d;
	struct doca_graph_instance *inst;
	struct doca_task *ta, *tb, *tc;
};

static void diamond_build(struct diamond *m, doca_graph_user_node_cb_t d_cb)
{
	m->g = graph_new(1);
	assert_int_equal(doca_graph_node_create_from_user(m->g, d_cb, &m->d), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(m->g, &fa->ctx, &m->a), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(m->g, &fa->ctx, &m->b), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(m->g, &fb->ctx, &m->c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(m->g, m->a, m->b), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(m->g, m->a, m->c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(m->g, m->b, m->d), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(m->g, m->c, m->d), DOCA_SUCCESS);
	assert_int_equal(doca_graph_set_user_data(m->g, (union doca_data){.u64 = 5}), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(m->g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(m->g, &m->inst), DOCA_SUCCESS);
	m->ta = fake_task(fa);
	m->tb = fake_task(fa);
	m->tc = fake_task(fb);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(m->inst, m->a, m->ta), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(m->inst, m->b, m->tb), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(m->inst, m->c, m->tc), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_user_node_data(m->inst, m->d, (void *)4), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_user_data(m->inst, (union doca_data){.u64 = 9}), DOCA_SUCCESS);
}

static void diamond_free(struct diamond *m)
{
	assert_int_equal(doca_graph_instance_destroy(m->inst), DOCA_SUCCESS);
	doca_task_free(m->ta);
	doca_task_free(m->tb);
	doca_task_free(m->tc);
	graph_free(m->g);
}

static void test_diamond_order(void **state)
{
	struct diamond m;
	int round;

	(void)state;
	diamond_build(&m, user_record);
	for (round = 0; round < 3; round++) {
		done_calls = num_order = 0;
		assert_int_equal(doca_graph_instance_submit(m.inst), DOCA_SUCCESS);
		/* only the root runs; nothing completes before progress */
		assert_int_equal(fa->num_pending, 1);
		assert_ptr_equal(fa->pending[0], m.ta);
		assert_int_equal(fb->num_pending, 0);
		progress_n(3);
		assert_int_equal(fa->num_pending, 1);
		assert_int_equal(done_calls, 0);

		fake_complete_next(fa, DOCA_SUCCESS);
		assert_int_equal(fa->num_pending, 0); /* B waits for progress to deliver A */
		progress_n(1);
		assert_int_equal(fa->num_pending, 1);
		assert_ptr_equal(fa->pending[0], m.tb);
		assert_int_equal(fb->num_pending, 1);
		assert_ptr_equal(fb->pending[0], m.tc);

		fake_complete_next(fb, DOCA_SUCCESS); /* C first: D still waits for B */
		progress_n(3);
		assert_int_equal(num_order, 0);
		assert_int_equal(done_calls, 0);
		fake_complete_next(fa, DOCA_SUCCESS);
		progress_n(1);
		assert_int_equal(num_order, 1);
		assert_int_equal(order[0], 4);
		assert_int_equal(done_calls, 1);
		assert_int_equal(error_calls, 0);
		assert_ptr_equal(last_inst, m.inst);
		assert_int_equal(last_inst_ud.u64, 9);
		assert_int_equal(last_graph_ud.u64, 5);
		assert_int_equal(doca_task_get_status(m.tb), DOCA_SUCCESS);
	}
	assert_int_equal(task_cb_calls, 0); /* graph tasks never call their own callbacks */
	diamond_free(&m);
}

static void test_failed_node(void **state)
{
	struct diamond m;

	(void)state;
	diamond_build(&m, user_record);
	assert_int_equal(doca_graph_instance_submit(m.inst), DOCA_SUCCESS);
	fake_complete_next(fa, DOCA_SUCCESS);
	progress_n(1);
	fake_complete_next(fa, DOCA_ERROR_IO_FAILED); /* B fails, C still runs */
	progress_n(3);
	assert_int_equal(error_calls, 0); /* not before C finished */
	assert_int_equal(doca_graph_instance_destroy(m.inst), DOCA_ERROR_IN_USE);
	fake_complete_next(fb, DOCA_SUCCESS);
	progress_n(3);
	assert_int_equal(error_calls, 1);
	assert_int_equal(done_calls, 0);
	assert_ptr_equal(last_inst, m.inst);
	assert_int_equal(num_order, 0); /* D never ran */
	assert_int_equal(fa->num_pending + fb->num_pending, 0);
	assert_int_equal(doca_task_get_status(m.tb), DOCA_ERROR_IO_FAILED);
	assert_int_equal(doca_task_get_status(m.tc), DOCA_SUCCESS);
	assert_int_equal(task_cb_calls, 0);

	/* the same instance runs again, and succeeds */
	assert_int_equal(doca_graph_instance_submit(m.inst), DOCA_SUCCESS);
	fake_complete_next(fa, DOCA_SUCCESS);
	progress_n(1);
	fake_complete_next(fa, DOCA_SUCCESS);
	fake_complete_next(fb, DOCA_SUCCESS);
	progress_n(2);
	assert_int_equal(done_calls, 1);
	assert_int_equal(error_calls, 1);
	assert_int_equal(num_order, 1);
	diamond_free(&m);
}

static void test_failed_user_node(void **state)
{
	struct doca_graph *g = graph_new(1);
	struct doca_graph_node *c, *u, *after;
	struct doca_graph_instance *inst;
	struct doca_task *t = fake_task(fa), *t2 = fake_task(fb);

	(void)state;
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_user(g, user_fail, &u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fb->ctx, &after), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, c, u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, u, after), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &inst), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, t), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_user_node_data(inst, u, (void *)7), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, after, t2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_submit(inst), DOCA_SUCCESS);
	fake_complete_next(fa, DOCA_SUCCESS);
	progress_n(3);
	assert_int_equal(num_order, 1);
	assert_int_equal(order[0], 7);
	assert_int_equal(error_calls, 1);
	assert_int_equal(fb->num_pending, 0); /* the dependent never ran */
	assert_int_equal(doca_graph_instance_destroy(inst), DOCA_SUCCESS);
	doca_task_free(t);
	doca_task_free(t2);
	graph_free(g);
}

static void test_user_root_runs_in_progress(void **state)
{
	struct doca_graph *g = graph_new(1);
	struct doca_graph_node *u, *c;
	struct doca_graph_instance *inst;
	struct doca_task *t = fake_task(fa);

	(void)state;
	assert_int_equal(doca_graph_node_create_from_user(g, user_record, &u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, u, c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &inst), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, t), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_user_node_data(inst, u, (void *)3), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_submit(inst), DOCA_SUCCESS);
	assert_int_equal(num_order, 0); /* user code never runs inside submit */
	assert_int_equal(fa->num_pending, 0);
	progress_n(1);
	assert_int_equal(num_order, 1);
	assert_int_equal(fa->num_pending, 1);
	fake_complete_next(fa, DOCA_SUCCESS);
	progress_n(1);
	assert_int_equal(done_calls, 1);
	assert_int_equal(doca_graph_instance_destroy(inst), DOCA_SUCCESS);
	doca_task_free(t);
	graph_free(g);
}

static void test_overloaded_context_waits(void **state)
{
	struct doca_graph *g = graph_new(1);
	struct doca_graph_node *c;
	struct doca_graph_instance *inst;
	struct doca_task *t = fake_task(fa);

	(void)state;
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &inst), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, t), DOCA_SUCCESS);
	fa->submit_fails = true; /* the fake says DOCA_ERROR_FULL */
	assert_int_equal(doca_graph_instance_submit(inst), DOCA_SUCCESS);
	progress_n(5);
	assert_int_equal(done_calls + error_calls, 0);
	assert_int_equal(fa->num_pending, 0);
	fa->submit_fails = false;
	progress_n(1);
	assert_int_equal(fa->num_pending, 1);
	fake_complete_next(fa, DOCA_SUCCESS);
	progress_n(1);
	assert_int_equal(done_calls, 1);
	assert_int_equal(error_calls, 0);
	assert_int_equal(doca_graph_instance_destroy(inst), DOCA_SUCCESS);
	doca_task_free(t);
	graph_free(g);
}

static void test_ctx_stop_fails_instance(void **state)
{
	struct diamond m;

	(void)state;
	diamond_build(&m, user_record);
	assert_int_equal(doca_graph_instance_submit(m.inst), DOCA_SUCCESS);
	(void)doca_ctx_stop(&fa->ctx); /* flushes A with an error */
	progress_n(3);
	assert_int_equal(error_calls, 1);
	assert_int_equal(doca_task_get_status(m.ta), DOCA_ERROR_IO_FAILED);
	assert_int_equal(num_order, 0);
	diamond_free(&m);
}

/* sub-graph S = X(ctx fb) -> Y(user 20); main = A(ctx fa) -> S -> U(user 30) */
static void test_sub_graph(void **state)
{
	struct doca_graph *s = graph_new(2), *g = graph_new(1);
	struct doca_graph_node *x, *y, *a, *sn, *u, *bad;
	struct doca_graph_instance *si, *si2, *gi;
	struct doca_task *tx = fake_task(fb), *ta = fake_task(fa);
	int round;

	(void)state;
	assert_int_equal(doca_graph_node_create_from_ctx(s, &fb->ctx, &x), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_user(s, user_record, &y), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(s, x, y), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(s), DOCA_SUCCESS);

	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &a), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_graph(g, s, &sn), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_user(g, user_record, &u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, a, sn), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, sn, u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_graph(g, s, &bad), DOCA_ERROR_BAD_STATE);

	assert_int_equal(doca_graph_instance_create(s, &si), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(s, &si2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &gi), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(si, x, tx), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_user_node_data(si, y, (void *)20), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(gi, a, ta), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_user_node_data(gi, u, (void *)30), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_sub_graph_node_data(gi, sn, gi), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_instance_set_sub_graph_node_data(gi, a, si), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_graph_instance_set_sub_graph_node_data(gi, sn, si), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_destroy(si), DOCA_ERROR_IN_USE); /* data of gi's node */

	for (round = 0; round < 3; round++) {
		done_calls = num_order = 0;
		assert_int_equal(doca_graph_instance_submit(gi), DOCA_SUCCESS);
		assert_int_equal(fa->num_pending, 1);
		assert_int_equal(fb->num_pending, 0);
		fake_complete_next(fa, DOCA_SUCCESS);
		progress_n(1);
		assert_int_equal(fb->num_pending, 1); /* the sub-graph's root runs */
		assert_int_equal(num_order, 0);
		fake_complete_next(fb, DOCA_SUCCESS);
		progress_n(2);
		assert_int_equal(num_order, 2);
		assert_int_equal(order[0], 20);
		assert_int_equal(order[1], 30);
		assert_int_equal(done_calls, 1); /* the main graph's, once */
		assert_ptr_equal(last_inst, gi);
	}
	/* a failing sub-graph fails its node: U never runs */
	done_calls = num_order = 0;
	assert_int_equal(doca_graph_instance_submit(gi), DOCA_SUCCESS);
	fake_complete_next(fa, DOCA_SUCCESS);
	progress_n(1);
	fake_complete_next(fb, DOCA_ERROR_IO_FAILED);
	progress_n(3);
	assert_int_equal(error_calls, 1);
	assert_int_equal(done_calls, 0);
	assert_int_equal(num_order, 0);
	assert_ptr_equal(last_inst, gi);

	/* swapping the data frees the first sub-instance */
	assert_int_equal(doca_graph_instance_set_sub_graph_node_data(gi, sn, si2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_destroy(si), DOCA_SUCCESS);
	assert_int_equal(doca_graph_destroy(s), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_graph_instance_destroy(gi), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_destroy(si2), DOCA_SUCCESS);
	assert_int_equal(doca_graph_stop(s), DOCA_SUCCESS);
	assert_int_equal(doca_graph_destroy(s), DOCA_ERROR_IN_USE); /* g's node names it */
	graph_free(g);
	assert_int_equal(doca_graph_destroy(s), DOCA_SUCCESS);
	doca_task_free(tx);
	doca_task_free(ta);
}

/* ---- with real DMA tasks ---- */

#define DMA_INST 64
#define DMA_LEN 256

struct dma_env {
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	uint8_t *mem; /* DMA_INST * (src + dst) */
};

struct dma_inst {
	struct doca_graph_instance *gi;
	struct doca_dma_task_memcpy *task;
	struct doca_buf *src, *dst;
	uint8_t *src_mem, *dst_mem;
	int checked;
};

static struct dma_env D;
static struct dma_inst DI[DMA_INST];
static int dma_task_cb_calls;

static void on_dma_task(struct doca_dma_task_memcpy *task, union doca_data tu, union doca_data cu)
{
	(void)task;
	(void)tu;
	(void)cu;
	dma_task_cb_calls++;
}

static doca_error_t check_copy(void *cookie)
{
	struct dma_inst *d = cookie;
	size_t len;

	if (doca_buf_get_data_len(d->dst, &len) != DOCA_SUCCESS || len != DMA_LEN)
		return DOCA_ERROR_BAD_STATE;
	if (memcmp(d->src_mem, d->dst_mem, DMA_LEN) != 0)
		return DOCA_ERROR_BAD_STATE;
	d->checked++;
	return DOCA_SUCCESS;
}

static void dma_open(void)
{
	struct doca_devinfo **list;
	uint32_t n;

	memset(&D, 0, sizeof(D));
	D.mem = calloc(DMA_INST * 2, DMA_LEN);
	assert_non_null(D.mem);
	assert_int_equal(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	assert_true(n > 0);
	assert_int_equal(doca_dev_open(list[0], &D.dev), DOCA_SUCCESS);
	assert_int_equal(doca_devinfo_destroy_list(list), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_create(&D.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(D.mmap, D.mem, DMA_INST * 2 * DMA_LEN), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_permissions(D.mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(D.mmap, D.dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(D.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_create(DMA_INST * 2, &D.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_start(D.inv), DOCA_SUCCESS);
	assert_int_equal(doca_dma_create(D.dev, &D.dma), DOCA_SUCCESS);
	D.ctx = doca_dma_as_ctx(D.dma);
	assert_int_equal(doca_pe_connect_ctx(pe, D.ctx), DOCA_SUCCESS);
	assert_int_equal(doca_dma_task_memcpy_set_conf(D.dma, on_dma_task, on_dma_task, DMA_INST), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(D.ctx), DOCA_SUCCESS);
}

static void dma_close(void)
{
	enum doca_ctx_states st;
	int i;

	(void)doca_ctx_stop(D.ctx);
	for (i = 0; i < 1000; i++) {
		(void)doca_pe_progress(pe);
		assert_int_equal(doca_ctx_get_state(D.ctx, &st), DOCA_SUCCESS);
		if (st == DOCA_CTX_STATE_IDLE)
			break;
	}
	assert_int_equal(st, DOCA_CTX_STATE_IDLE);
	assert_int_equal(doca_dma_destroy(D.dma), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_stop(D.inv), DOCA_SUCCESS);
	assert_int_equal(doca_buf_inventory_destroy(D.inv), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_stop(D.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_destroy(D.mmap), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(D.dev), DOCA_SUCCESS);
	free(D.mem);
}

/* Submit every instance, progress (bounded) until all completed. */
static void dma_round(int round)
{
	int i, guard;

	done_calls = error_calls = 0;
	for (i = 0; i < DMA_INST; i++) {
		memset(DI[i].src_mem, (round * 31 + i) & 0xff, DMA_LEN);
		assert_int_equal(doca_buf_reset_data_len(DI[i].dst), DOCA_SUCCESS);
		assert_int_equal(doca_graph_instance_submit(DI[i].gi), DOCA_SUCCESS);
	}
	for (guard = 0; done_calls + error_calls < DMA_INST && guard < 1000000; guard++)
		(void)doca_pe_progress(pe);
	assert_int_equal(done_calls, DMA_INST);
	assert_int_equal(error_calls, 0);
}

static void test_dma_many_instances_resubmitted(void **state)
{
	struct doca_graph *g;
	struct doca_graph_node *copy, *check;
	struct mallinfo2 before, after;
	int i, round;

	(void)state;
	dma_open();
	dma_task_cb_calls = 0;
	g = graph_new(DMA_INST);
	assert_int_equal(doca_graph_node_create_from_ctx(g, D.ctx, &copy), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_user(g, check_copy, &check), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, copy, check), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS);
	for (i = 0; i < DMA_INST; i++) {
		struct dma_inst *d = &DI[i];

		memset(d, 0, sizeof(*d));
		d->src_mem = D.mem + (size_t)i * 2 * DMA_LEN;
		d->dst_mem = d->src_mem + DMA_LEN;
		assert_int_equal(doca_buf_inventory_buf_get_by_data(D.inv, D.mmap, d->src_mem, DMA_LEN, &d->src),
				 DOCA_SUCCESS);
		assert_int_equal(doca_buf_inventory_buf_get_by_addr(D.inv, D.mmap, d->dst_mem, DMA_LEN, &d->dst),
				 DOCA_SUCCESS);
		assert_int_equal(doca_dma_task_memcpy_alloc_init(D.dma, d->src, d->dst, (union doca_data){.u64 = 0},
								 &d->task),
				 DOCA_SUCCESS);
		assert_int_equal(doca_graph_instance_create(g, &d->gi), DOCA_SUCCESS);
		assert_int_equal(doca_graph_instance_set_ctx_node_data(d->gi, copy, doca_dma_task_memcpy_as_task(d->task)),
				 DOCA_SUCCESS);
		assert_int_equal(doca_graph_instance_set_user_node_data(d->gi, check, d), DOCA_SUCCESS);
	}
	for (round = 0; round < 20; round++)
		dma_round(round);
	before = mallinfo2();
	for (; round < 520; round++)
		dma_round(round);
	after = mallinfo2();
	/* 500 rounds of 64 instances: the heap does not grow */
	assert_int_equal(after.uordblks, before.uordblks);
	for (i = 0; i < DMA_INST; i++) {
		assert_int_equal(DI[i].checked, 520);
		assert_memory_equal(DI[i].dst_mem, DI[i].src_mem, DMA_LEN);
	}
	assert_int_equal(dma_task_cb_calls, 0);
	for (i = 0; i < DMA_INST; i++) {
		assert_int_equal(doca_graph_instance_destroy(DI[i].gi), DOCA_SUCCESS);
		doca_task_free(doca_dma_task_memcpy_as_task(DI[i].task));
		doca_buf_dec_refcount(DI[i].src, NULL);
		doca_buf_dec_refcount(DI[i].dst, NULL);
	}
	graph_free(g);
	dma_close();
}

/* Resubmitting from inside the completion callback: a chain of runs. */
static int resubmit_left;
static void on_done_resubmit(struct doca_graph_instance *inst, union doca_data iu, union doca_data gu)
{
	(void)iu;
	(void)gu;
	done_calls++;
	if (resubmit_left-- > 0)
		assert_int_equal(doca_graph_instance_submit(inst), DOCA_SUCCESS);
}

static void test_resubmit_from_callback(void **state)
{
	struct doca_graph *g;
	struct doca_graph_node *c, *u;
	struct doca_graph_instance *inst;
	struct doca_task *t = fake_task(fa);
	int guard;

	(void)state;
	assert_int_equal(doca_graph_create(pe, &g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_set_conf(g, on_done_resubmit, on_error, 1), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_ctx(g, &fa->ctx, &c), DOCA_SUCCESS);
	assert_int_equal(doca_graph_node_create_from_user(g, user_record, &u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_add_dependency(g, c, u), DOCA_SUCCESS);
	assert_int_equal(doca_graph_start(g), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_create(g, &inst), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_ctx_node_data(inst, c, t), DOCA_SUCCESS);
	assert_int_equal(doca_graph_instance_set_user_node_data(inst, u, (void *)1), DOCA_SUCCESS);
	resubmit_left = 999;
	assert_int_equal(doca_graph_instance_submit(inst), DOCA_SUCCESS);
	for (guard = 0; done_calls < 1000 && guard < 100000; guard++) {
		if (fa->num_pending > 0)
			fake_complete_next(fa, DOCA_SUCCESS);
		(void)doca_pe_progress(pe);
	}
	assert_int_equal(done_calls, 1000);
	assert_int_equal(num_order, 1000);
	assert_int_equal(error_calls, 0);
	assert_int_equal(doca_graph_instance_destroy(inst), DOCA_SUCCESS);
	doca_task_free(t);
	graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycles_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_data_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diamond_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_user_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_root_runs_in_progress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overloaded_context_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ctx_stop_fails_instance, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sub_graph, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resubmit_from_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dma_many_instances_resubmitted, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
