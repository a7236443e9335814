/*
 * softdoca — DOCA Compress on a device without a compression engine.
 *
 * The context is a real doca_ctx (created on any soft device, connected to
 * a PE, queried, destroyed), so a program's generic context code works.
 * Nothing can run on it: every capability query answers
 * DOCA_ERROR_NOT_SUPPORTED (what DOCA answers for a device without the
 * engine), doca_ctx_start refuses with NOT_SUPPORTED (DOCA: a device the
 * context does not support), and task configuration and allocation refuse
 * with NOT_SUPPORTED and one log line. The task objects and their
 * accessors are real, though no allocation ever hands one out.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <doca_compress.h>

#include "ctx.h"
#include "live.h"
#include "log_internal.h"

SDK_LOG_REGISTER(COMPRESS)

struct doca_compress {
	struct doca_ctx ctx;
};

/* What every task kind holds; lz4 stream uses the two flags, deflate
 * reports crc and adler, lz4 crc and xxHash-32. */
struct compress_task_io {
	const struct doca_buf *src;
	struct doca_buf *dst;
	uint32_t crc_cs;
	uint32_t other_cs;
	uint8_t has_block_checksum;
	uint8_t are_blocks_independent;
};

struct doca_compress_task_compress_deflate {
	struct doca_task task;
	struct compress_task_io io;
};

struct doca_compress_task_decompress_deflate {
	struct doca_task task;
	struct compress_task_io io;
};

struct doca_compress_task_decompress_lz4_stream {
	struct doca_task task;
	struct compress_task_io io;
};

struct doca_compress_task_decompress_lz4_block {
	struct doca_task task;
	struct compress_task_io io;
};

/* ---- the answers of a device without an engine ---- */

static doca_error_t compress_no_engine(const char *func)
{
	SDK_LOG_ERR("%s: not supported: softdoca has no compression engine (no compress task runs on a soft device)",
		    func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* A capability query: "no" without a log line at the default level, as
 * programs probe every device with these while choosing one. */
static doca_error_t compress_cap_no(const struct doca_devinfo *devinfo, const void *out, const char *func)
{
	if (devinfo == NULL || out == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", func, devinfo == NULL ? "devinfo" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	SDK_LOG_DBG("%s: no: softdoca has no compression engine", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t compress_set_conf_refuse(const struct doca_compress *compress, const char *func)
{
	if (compress == NULL) {
		SDK_LOG_ERR("%s: compress is NULL", func);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return compress_no_engine(func);
}

static doca_error_t compress_alloc_refuse(const struct doca_compress *compress, const struct doca_buf *src,
					  const struct doca_buf *dst, const void *task_out, const char *func)
{
	if (compress == NULL || src == NULL || dst == NULL || task_out == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", func,
			    compress == NULL ? "compress" :
			    src == NULL	     ? "source buffer" :
			    dst == NULL	     ? "destination buffer" :
						     "task output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return compress_no_engine(func);
}

/* ---- context ---- */

static doca_error_t compress_ctx_start(struct doca_ctx *ctx)
{
	(void)ctx;
	SDK_LOG_ERR("doca_ctx_start: compress context not supported on this device: softdoca has no compression engine");
	return DOCA_ERROR_NOT_SUPPORTED;
}

static const struct softdoca_ctx_ops compress_ctx_ops = {
	.name = "compress",
	.start = compress_ctx_start,
};

DOCA_EXPERIMENTAL
doca_error_t doca_compress_create(struct doca_dev *dev, struct doca_compress **compress_out)
{
	struct doca_compress *compress;

	if (dev == NULL || compress_out == NULL) {
		SDK_LOG_ERR("doca_compress_create: %s is NULL", dev == NULL ? "dev" : "compress output pointer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	compress = calloc(1, sizeof(*compress));
	if (compress == NULL) {
		SDK_LOG_ERR("doca_compress_create: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	if (softdoca_ctx_init(&compress->ctx, &compress_ctx_ops, dev) != DOCA_SUCCESS) {
		free(compress); /* softdoca_ctx_init said why */
		return DOCA_ERROR_NO_MEMORY;
	}
	*compress_out = compress;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_compress_destroy(struct doca_compress *compress)
{
	doca_error_t status;

	if (compress == NULL) {
		SDK_LOG_ERR("doca_compress_destroy: compress is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_live_check(&compress->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	status = softdoca_ctx_fini(&compress->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	free(compress);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
struct doca_ctx *doca_compress_as_ctx(struct doca_compress *compress)
{
	if (compress == NULL) {
		SDK_LOG_ERR("doca_compress_as_ctx: compress is NULL");
		return NULL;
	}
	return &compress->ctx;
}

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_get_max_num_tasks(struct doca_compress *compress, uint32_t *max_num_tasks)
{
	if (compress == NULL || max_num_tasks == NULL) {
		SDK_LOG_ERR("doca_compress_cap_get_max_num_tasks: %s is NULL", compress == NULL ? "compress" : "output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	SDK_LOG_DBG("doca_compress_cap_get_max_num_tasks: no: softdoca has no compression engine");
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* ---- what every task kind has ----
 * The capability queries, set_conf, as_task, the source and destination
 * accessors and the CRC getter, for the task kind KIND. */
#define COMPRESS_TASK_COMMON(KIND) \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_cap_task_##KIND##_is_supported(const struct doca_devinfo *devinfo) \
	{ \
		/* no output: devinfo stands in for it */ \
		return compress_cap_no(devinfo, devinfo, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_cap_task_##KIND##_get_max_buf_size(const struct doca_devinfo *devinfo, \
								      uint64_t *max_buf_size) \
	{ \
		return compress_cap_no(devinfo, max_buf_size, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_cap_task_##KIND##_get_max_buf_list_len(const struct doca_devinfo *devinfo, \
									  uint32_t *max_buf_list_len) \
	{ \
		return compress_cap_no(devinfo, max_buf_list_len, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	doca_error_t doca_compress_task_##KIND##_set_conf(struct doca_compress *compress, \
							  doca_compress_task_##KIND##_completion_cb_t task_completion_cb, \
							  doca_compress_task_##KIND##_completion_cb_t task_error_cb, \
							  uint32_t num_tasks) \
	{ \
		(void)task_completion_cb; \
		(void)task_error_cb; \
		(void)num_tasks; \
		return compress_set_conf_refuse(compress, __func__); \
	} \
	DOCA_EXPERIMENTAL \
	struct doca_task *doca_compress_task_##KIND##_as_task(struct doca_compress_task_##KIND *task) \
	{ \
		return task == NULL ? NULL : &task->task; \
	} \
	DOCA_EXPERIMENTAL \
	void doca_compress_task_##KIND##_set_src(struct doca_compress_task_##KIND *task, const struct doca_buf *src) \
	{ \
		if (task != NULL) \
			task->io.src = src; \
	} \
	DOCA_EXPERIMENTAL \
	const struct doca_buf *doca_compress_task_##KIND##_get_src(const struct doca_compress_task_##KIND *task) \
	{ \
		return task == NULL ? NULL : task->io.src; \
	} \
	DOCA_EXPERIMENTAL \
	void doca_compress_task_##KIND##_set_dst(struct doca_compress_task_##KIND *task, struct doca_buf *dst) \
	{ \
		if (task != NULL) \
			task->io.dst = dst; \
	} \
	DOCA_EXPERIMENTAL \
	struct doca_buf *doca_compress_task_##KIND##_get_dst(const struct doca_compress_task_##KIND *task) \
	{ \
		return task == NULL ? NULL : task->io.dst; \
	} \
	DOCA_EXPERIMENTAL \
	uint32_t doca_compress_task_##KIND##_get_crc_cs(const struct doca_compress_task_##KIND *task) \
	{ \
		return task == NULL ? 0 : task->io.crc_cs; \
	}

/* The second checksum's getter: adler for deflate, xxHash-32 for LZ4. */
#define COMPRESS_TASK_OTHER_CS(KIND, NAME) \
	DOCA_EXPERIMENTAL \
	uint32_t doca_compress_task_##KIND##_get_##NAME##_cs(const struct doca_compress_task_##KIND *task) \
	{ \
		return task == NULL ? 0 : task->io.other_cs; \
	}

COMPRESS_TASK_COMMON(compress_deflate)
COMPRESS_TASK_OTHER_CS(compress_deflate, adler)
COMPRESS_TASK_COMMON(decompress_deflate)
COMPRESS_TASK_OTHER_CS(decompress_deflate, adler)
COMPRESS_TASK_COMMON(decompress_lz4_stream)
COMPRESS_TASK_OTHER_CS(decompress_lz4_stream, xxh)
COMPRESS_TASK_COMMON(decompress_lz4_block)
COMPRESS_TASK_OTHER_CS(decompress_lz4_block, xxh)

/* ---- allocation: refused, after the arguments were checked ---- */

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_compress_deflate_alloc_init(struct doca_compress *compress,
							    const struct doca_buf *src_buf, struct doca_buf *dst_buf,
							    union doca_data user_data,
							    struct doca_compress_task_compress_deflate **task)
{
	(void)user_data;
	return compress_alloc_refuse(compress, src_buf, dst_buf, task, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_deflate_alloc_init(struct doca_compress *compress,
							      const struct doca_buf *src_buf, struct doca_buf *dst_buf,
							      union doca_data user_data,
							      struct doca_compress_task_decompress_deflate **task)
{
	(void)user_data;
	return compress_alloc_refuse(compress, src_buf, dst_buf, task, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_stream_alloc_init(
	struct doca_compress *compress, uint8_t has_block_checksum, uint8_t are_blocks_independent,
	const struct doca_buf *src_buf, struct doca_buf *dst_buf, union doca_data user_data,
	struct doca_compress_task_decompress_lz4_stream **task)
{
	(void)has_block_checksum;
	(void)are_blocks_independent;
	(void)user_data;
	return compress_alloc_refuse(compress, src_buf, dst_buf, task, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_block_alloc_init(struct doca_compress *compress,
								const struct doca_buf *src_buf, struct doca_buf *dst_buf,
								union doca_data user_data,
								struct doca_compress_task_decompress_lz4_block **task)
{
	(void)user_data;
	return compress_alloc_refuse(compress, src_buf, dst_buf, task, __func__);
}

/* ---- the LZ4 stream task's flags ---- */

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_has_block_checksum(
	struct doca_compress_task_decompress_lz4_stream *task, uint8_t has_block_checksum)
{
	if (task != NULL)
		task->io.has_block_checksum = has_block_checksum;
}

DOCA_EXPERIMENTAL
uint8_t doca_compress_task_decompress_lz4_stream_get_has_block_checksum(
	const struct doca_compress_task_decompress_lz4_stream *task)
{
	return task == NULL ? 0 : task->io.has_block_checksum;
}

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_are_blocks_independent(
	struct doca_compress_task_decompress_lz4_stream *task, uint8_t are_blocks_independent)
{
	if (task != NULL)
		task->io.are_blocks_independent = are_blocks_independent;
}

DOCA_EXPERIMENTAL
uint8_t doca_compress_task_decompress_lz4_stream_get_are_blocks_independent(
	const struct doca_compress_task_decompress_lz4_stream *task)
{
	return task == NULL ? 0 : task->io.are_blocks_independent;
}
