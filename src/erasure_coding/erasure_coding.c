/*
 * softdoca — DOCA Erasure Coding on a device without an erasure-coding
 * engine.
 *
 * The context is a real doca_ctx (created on any soft device, connected to
 * a PE, queried, destroyed), so a program's generic context code works.
 * Nothing can run on it: every capability query answers
 * DOCA_ERROR_NOT_SUPPORTED (what DOCA answers for a device without the
 * engine), doca_ctx_start refuses with NOT_SUPPORTED (DOCA: a device the
 * context does not support), and task configuration, task allocation and
 * matrix creation refuse with NOT_SUPPORTED and one log line. No matrix is
 * ever made, so doca_ec_matrix_destroy knows none. The task objects and
 * their accessors are real, though no allocation ever hands one out.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <doca_erasure_coding.h>

#include "ctx.h"
#include "live.h"
#include "log_internal.h"

SDK_LOG_REGISTER(ERASURE_CODING)

struct doca_ec {
	struct doca_ctx ctx;
};

struct doca_ec_task_galois_mul {
	struct doca_task task;
	const struct doca_ec_matrix *coding_matrix;
	const struct doca_buf *src_buf;
	struct doca_buf *dst_buf;
};

struct doca_ec_task_create {
	struct doca_task task;
	const struct doca_ec_matrix *coding_matrix;
	const struct doca_buf *original_data_blocks;
	struct doca_buf *rdnc_blocks;
};

struct doca_ec_task_update {
	struct doca_task task;
	const struct doca_ec_matrix *update_matrix;
	const struct doca_buf *original_updated_and_rdnc_blocks;
	struct doca_buf *updated_rdnc_blocks;
};

struct doca_ec_task_recover {
	struct doca_task task;
	const struct doca_ec_matrix *recover_matrix;
	const struct doca_buf *available_blocks;
	struct doca_buf *recovered_data_blocks;
};

/* ---- the answers of a device without an engine ---- */

static doca_error_t ec_no_engine(const char *func)
{
	SDK_LOG_ERR("%s: not supported: softdoca has no erasure-coding engine (no EC task runs on a soft device)",
		    func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* A capability query: "no" without a log line at the default level, as
 * programs probe every device with these while choosing one. */
static doca_error_t ec_cap_no(const struct doca_devinfo *devinfo, const void *out, const char *func)
{
	if (devinfo == NULL || out == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", func, devinfo == NULL ? "devinfo" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	SDK_LOG_DBG("%s: no: softdoca has no erasure-coding engine", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t ec_set_conf_refuse(const struct doca_ec *ec, const char *func)
{
	if (ec == NULL) {
		SDK_LOG_ERR("%s: ec is NULL", func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return ec_no_engine(func);
}

static doca_error_t ec_alloc_refuse(const struct doca_ec *ec, const struct doca_ec_matrix *matrix,
				    const struct doca_buf *src, const struct doca_buf *dst, const void *task_out,
				    const char *func)
{
	if (ec == NULL || matrix == NULL || src == NULL || dst == NULL || task_out == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", func,
			    ec == NULL	   ? "ec" :
			    matrix == NULL ? "matrix" :
			    src == NULL	   ? "source buffer" :
			    dst == NULL	   ? "destination buffer" :
					     "task output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return ec_no_engine(func);
}

/* ---- context ---- */

static doca_error_t ec_ctx_start(struct doca_ctx *ctx)
{
	(void)ctx;
	SDK_LOG_ERR("doca_ctx_start: ec context not supported on this device: softdoca has no erasure-coding engine");
	return DOCA_ERROR_NOT_SUPPORTED;
}

static const struct softdoca_ctx_ops ec_ctx_ops = {
	.name = "ec",
	.start = ec_ctx_start,
};

DOCA_EXPERIMENTAL
doca_error_t doca_ec_create(struct doca_dev *dev, struct doca_ec **ec_out)
{
	struct doca_ec *ec;

	if (dev == NULL || ec_out == NULL) {
		SDK_LOG_ERR("doca_ec_create: %s is NULL", dev == NULL ? "dev" : "ec output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ec = calloc(1, sizeof(*ec));
	if (ec == NULL) {
		SDK_LOG_ERR("doca_ec_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	if (softdoca_ctx_init(&ec->ctx, &ec_ctx_ops, dev) != DOCA_SUCCESS) {
		free(ec); /* softdoca_ctx_init said why */
		return DOCA_ERROR_NO_MEMORY;
	}
	*ec_out = ec;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_destroy(struct doca_ec *ec)
{
	doca_error_t status;

	if (ec == NULL) {
		SDK_LOG_ERR("doca_ec_destroy: ec is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(&ec->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	status = softdoca_ctx_fini(&ec->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	free(ec);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
struct doca_ctx *doca_ec_as_ctx(struct doca_ec *ec)
{
	if (ec == NULL) {
		SDK_LOG_ERR("doca_ec_as_ctx: ec is NULL");
		return NULL;
	}
	return &ec->ctx;
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_get_max_block_size(const struct doca_devinfo *devinfo, uint64_t *max_block_size)
{
	return ec_cap_no(devinfo, max_block_size, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len)
{
	return ec_cap_no(devinfo, max_buf_list_len, __func__);
}

/* ---- what every task kind has: its capability query, set_conf and
 * as_task, for the task kind KIND ---- */
#define EC_TASK_COMMON(KIND) \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_ec_cap_task_##KIND##_is_supported(const struct doca_devinfo *devinfo) \
	{ \
		/* no output: devinfo stands in for it */ \
		return ec_cap_no(devinfo, devinfo, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_ec_task_##KIND##_set_conf(struct doca_ec *ec, \
						    doca_ec_task_##KIND##_completion_cb_t successful_task_completion_cb, \
						    doca_ec_task_##KIND##_completion_cb_t error_task_completion_cb, \
						    uint32_t num_tasks) \
	{ \
		(void)successful_task_completion_cb; \
		(void)error_task_completion_cb; \
		(void)num_tasks; \
		return ec_set_conf_refuse(ec, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	struct doca_task *doca_ec_task_##KIND##_as_task(struct doca_ec_task_##KIND *task) \
	{ \
		return task == NULL ? NULL : &task->task; \
	}

/* The setter and getter of one field of a task kind (the getter's name may
 * differ from the field's: DOCA's recover task has one such). */
#define EC_TASK_FIELD(KIND, FIELD, GETNAME, SETTYPE, GETTYPE) \
	DOCA_EXPERIMENTAL \
	void doca_ec_task_##KIND##_set_##FIELD(struct doca_ec_task_##KIND *task, SETTYPE FIELD) \
	{ \
		if (task != NULL) \
			task->FIELD = FIELD; \
	} \
	DOCA_EXPERIMENTAL \
	GETTYPE doca_ec_task_##KIND##_get_##GETNAME(const struct doca_ec_task_##KIND *task) \
	{ \
		return task == NULL ? NULL : task->FIELD; \
	}

#define EC_MATRIX const struct doca_ec_matrix *
#define EC_SRC const struct doca_buf *
#define EC_DST struct doca_buf *

EC_TASK_COMMON(galois_mul)
EC_TASK_FIELD(galois_mul, coding_matrix, coding_matrix, EC_MATRIX, EC_MATRIX)
EC_TASK_FIELD(galois_mul, src_buf, src_buf, EC_SRC, EC_SRC)
EC_TASK_FIELD(galois_mul, dst_buf, dst_buf, EC_DST, EC_DST)

EC_TASK_COMMON(create)
EC_TASK_FIELD(create, coding_matrix, coding_matrix, EC_MATRIX, EC_MATRIX)
EC_TASK_FIELD(create, original_data_blocks, original_data_blocks, EC_SRC, EC_SRC)
EC_TASK_FIELD(create, rdnc_blocks, rdnc_blocks, EC_DST, EC_DST)

EC_TASK_COMMON(update)
EC_TASK_FIELD(update, update_matrix, update_matrix, EC_MATRIX, EC_MATRIX)
EC_TASK_FIELD(update, original_updated_and_rdnc_blocks, original_updated_and_rdnc_blocks, EC_SRC, EC_SRC)
EC_TASK_FIELD(update, updated_rdnc_blocks, updated_rdnc_blocks, EC_DST, EC_DST)

EC_TASK_COMMON(recover)
EC_TASK_FIELD(recover, recover_matrix, recover_matrix, EC_MATRIX, EC_MATRIX)
EC_TASK_FIELD(recover, available_blocks, available_blocks, EC_SRC, EC_SRC)
EC_TASK_FIELD(recover, recovered_data_blocks, recovered_data, EC_DST, EC_DST)

/* ---- allocation: refused, after the arguments were checked ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_galois_mul_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
						   const struct doca_buf *src_buf, struct doca_buf *dst_buf,
						   union doca_data user_data, struct doca_ec_task_galois_mul **task)
{
	(void)user_data;
	return ec_alloc_refuse(ec, coding_matrix, src_buf, dst_buf, task, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_create_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
					       const struct doca_buf *original_data_blocks,
					       struct doca_buf *rdnc_blocks, union doca_data user_data,
					       struct doca_ec_task_create **task)
{
	(void)user_data;
	return ec_alloc_refuse(ec, coding_matrix, original_data_blocks, rdnc_blocks, task, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_update_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *update_matrix,
					       const struct doca_buf *original_updated_and_rdnc_blocks,
					       struct doca_buf *updated_rdnc_blocks, union doca_data user_data,
					       struct doca_ec_task_update **task)
{
	(void)user_data;
	return ec_alloc_refuse(ec, update_matrix, original_updated_and_rdnc_blocks, updated_rdnc_blocks, task,
			       __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_recover_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *recover_matrix,
						const struct doca_buf *available_blocks,
						struct doca_buf *recovered_data_blocks, union doca_data user_data,
						struct doca_ec_task_recover **task)
{
	(void)user_data;
	return ec_alloc_refuse(ec, recover_matrix, available_blocks, recovered_data_blocks, task, __func__);
}

/* ---- matrices: none can be made ---- */

static doca_error_t ec_matrix_refuse(const struct doca_ec *ec, const void *in, const void *matrix_out,
				     const char *in_name, const char *func)
{
	if (ec == NULL || in == NULL || matrix_out == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", func,
			    ec == NULL ? "ec" : in == NULL ? in_name : "matrix output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return ec_no_engine(func);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create(struct doca_ec *ec, enum doca_ec_matrix_type type, size_t data_block_count,
				   size_t rdnc_block_count, struct doca_ec_matrix **matrix)
{
	(void)type;
	(void)data_block_count;
	(void)rdnc_block_count;
	return ec_matrix_refuse(ec, ec, matrix, "ec", __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_from_raw(struct doca_ec *ec, uint8_t *data, size_t data_block_count,
					    size_t rdnc_block_count, struct doca_ec_matrix **matrix)
{
	(void)data_block_count;
	(void)rdnc_block_count;
	return ec_matrix_refuse(ec, data, matrix, "data", __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_update(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
					  uint32_t update_indices[], size_t n_updates,
					  struct doca_ec_matrix **matrix)
{
	(void)n_updates;
	if (update_indices == NULL) {
		SDK_LOG_ERR("doca_ec_matrix_create_update: update_indices is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return ec_matrix_refuse(ec, coding_matrix, matrix, "coding_matrix", __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_recover(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
					   uint32_t missing_indices[], size_t n_missing,
					   struct doca_ec_matrix **matrix)
{
	(void)n_missing;
	if (missing_indices == NULL) {
		SDK_LOG_ERR("doca_ec_matrix_create_recover: missing_indices is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return ec_matrix_refuse(ec, coding_matrix, matrix, "coding_matrix", __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_destroy(struct doca_ec_matrix *matrix)
{
	if (matrix == NULL) {
		SDK_LOG_ERR("doca_ec_matrix_destroy: matrix is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* Creation never succeeds here, so this pointer is not one of ours. */
	SDK_LOG_ERR("doca_ec_matrix_destroy: %p is not a matrix softdoca made (it makes none: no erasure-coding engine)",
		    (void *)matrix);
	return DOCA_ERROR_INVALID_VALUE;
}
