/*
 * A minimal context type for testing the generic context/PE machinery
 * without any real library: its tasks wait in a list until the test
 * completes them (from any thread) with fake_complete_next().
 */
#ifndef TEST_FAKE_CTX_H_
#define TEST_FAKE_CTX_H_

#include <stdlib.h>
#include <string.h>

#include "ctx.h"

struct fake_task {
	struct doca_task task;
	int payload;
};

struct fake_ctx {
	struct doca_ctx ctx;
	struct softdoca_task_type type;
	struct doca_task *pending[64];
	unsigned int num_pending;
	doca_error_t start_result;   /* what ops->start returns */
	bool stop_blocked;           /* stop_finished says false while set */
	int stop_calls;
	int stopped_calls;
	bool check_fails;            /* try_submit's check rejects */
	bool submit_fails;           /* submit returns an error */
};

static inline struct fake_ctx *fake_from_ctx(struct doca_ctx *ctx)
{
	return container_of(ctx, struct fake_ctx, ctx);
}

static doca_error_t fake_start(struct doca_ctx *ctx)
{
	return fake_from_ctx(ctx)->start_result;
}

static void fake_stop(struct doca_ctx *ctx)
{
	struct fake_ctx *f = fake_from_ctx(ctx);
	unsigned int i;

	f->stop_calls++;
	for (i = 0; i < f->num_pending; i++)
		softdoca_task_complete(f->pending[i], DOCA_ERROR_IO_FAILED);
	f->num_pending = 0;
}

static bool fake_stop_finished(struct doca_ctx *ctx)
{
	return !fake_from_ctx(ctx)->stop_blocked;
}

static void fake_stopped(struct doca_ctx *ctx)
{
	fake_from_ctx(ctx)->stopped_calls++;
}

static const struct softdoca_ctx_ops fake_ctx_ops = {
	.name = "fake",
	.start = fake_start,
	.stop = fake_stop,
	.stop_finished = fake_stop_finished,
	.stopped = fake_stopped,
};

static doca_error_t fake_submit(struct doca_task *task)
{
	struct fake_ctx *f = fake_from_ctx(softdoca_task_ctx(task));

	if (f->submit_fails)
		return DOCA_ERROR_FULL;
	f->pending[f->num_pending++] = task;
	return DOCA_SUCCESS;
}

static doca_error_t fake_check(const struct doca_task *task)
{
	return fake_from_ctx(softdoca_task_ctx(task))->check_fails ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

static const struct softdoca_task_ops fake_task_ops = {
	.submit = fake_submit,
	.check = fake_check,
};

static inline struct fake_ctx *fake_create(void)
{
	struct fake_ctx *f = calloc(1, sizeof(*f));

	softdoca_ctx_init(&f->ctx, &fake_ctx_ops, NULL);
	softdoca_task_type_init(&f->type, &f->ctx, "fake task", &fake_task_ops, sizeof(struct fake_task));
	return f;
}

static inline void fake_destroy(struct fake_ctx *f)
{
	if (softdoca_ctx_fini(&f->ctx) == DOCA_SUCCESS)
		free(f);
}

/* Complete the oldest pending task with status. */
static inline void fake_complete_next(struct fake_ctx *f, doca_error_t status)
{
	struct doca_task *task = f->pending[0];

	memmove(&f->pending[0], &f->pending[1], (f->num_pending - 1) * sizeof(f->pending[0]));
	f->num_pending--;
	softdoca_task_complete(task, status);
}

#endif /* TEST_FAKE_CTX_H_ */
