/*
 * softdoca — DOCA Compress: a context whose tasks compress (deflate) or
 * decompress (deflate, LZ4 stream, LZ4 block) buffers on a device's
 * compression engine.
 *
 * A soft device has no such engine. The context exists (create, destroy,
 * doca_compress_as_ctx work, so a program's generic context code runs),
 * but every capability query answers DOCA_ERROR_NOT_SUPPORTED, so does
 * doca_ctx_start, and task configuration and allocation refuse with
 * DOCA_ERROR_NOT_SUPPORTED and one log line. NULL arguments are
 * DOCA_ERROR_INVALID_VALUE. Names, types and signatures are DOCA 3.3's.
 */
#ifndef DOCA_COMPRESS_H_
#define DOCA_COMPRESS_H_

/* DOCA's header brings in <inttypes.h>; compress programs print with it. */
#include <inttypes.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_task;

struct doca_compress;

/* ---- the context ---- */

/* A compress context on an open device (every soft device: it has no
 * engine, so nothing can run on it). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_create(struct doca_dev *dev, struct doca_compress **compress);

/* Only while IDLE (DOCA_ERROR_BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_destroy(struct doca_compress *compress);

DOCA_EXPERIMENTAL
struct doca_ctx *doca_compress_as_ctx(struct doca_compress *compress);

/* Most tasks of all kinds together: DOCA_ERROR_NOT_SUPPORTED here. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_get_max_num_tasks(struct doca_compress *compress, uint32_t *max_num_tasks);

/* ---- compress deflate ---- */

struct doca_compress_task_compress_deflate;

typedef void (*doca_compress_task_compress_deflate_completion_cb_t)(struct doca_compress_task_compress_deflate *task,
								    union doca_data task_user_data,
								    union doca_data ctx_user_data);

/* DOCA_SUCCESS when the device compresses with deflate; NOT_SUPPORTED here. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_compress_deflate_is_supported(const struct doca_devinfo *devinfo);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_compress_deflate_get_max_buf_size(const struct doca_devinfo *devinfo,
								      uint64_t *max_buf_size);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_compress_deflate_get_max_buf_list_len(const struct doca_devinfo *devinfo,
									  uint32_t *max_buf_list_len);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_compress_deflate_set_conf(
	struct doca_compress *compress, doca_compress_task_compress_deflate_completion_cb_t task_completion_cb,
	doca_compress_task_compress_deflate_completion_cb_t task_error_cb, uint32_t num_tasks);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_compress_deflate_alloc_init(struct doca_compress *compress,
							    const struct doca_buf *src_buf, struct doca_buf *dst_buf,
							    union doca_data user_data,
							    struct doca_compress_task_compress_deflate **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_compress_task_compress_deflate_as_task(struct doca_compress_task_compress_deflate *task);

DOCA_EXPERIMENTAL
void doca_compress_task_compress_deflate_set_src(struct doca_compress_task_compress_deflate *task,
						 const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_compress_task_compress_deflate_get_src(
	const struct doca_compress_task_compress_deflate *task);

DOCA_EXPERIMENTAL
void doca_compress_task_compress_deflate_set_dst(struct doca_compress_task_compress_deflate *task,
						 struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_compress_task_compress_deflate_get_dst(const struct doca_compress_task_compress_deflate *task);

/* Checksums of the data, valid after a successful completion. */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_compress_deflate_get_crc_cs(const struct doca_compress_task_compress_deflate *task);

DOCA_EXPERIMENTAL
uint32_t doca_compress_task_compress_deflate_get_adler_cs(const struct doca_compress_task_compress_deflate *task);

/* ---- decompress deflate ---- */

struct doca_compress_task_decompress_deflate;

typedef void (*doca_compress_task_decompress_deflate_completion_cb_t)(
	struct doca_compress_task_decompress_deflate *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_deflate_is_supported(const struct doca_devinfo *devinfo);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_deflate_get_max_buf_size(const struct doca_devinfo *devinfo,
									uint64_t *max_buf_size);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_deflate_get_max_buf_list_len(const struct doca_devinfo *devinfo,
									    uint32_t *max_buf_list_len);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_deflate_set_conf(
	struct doca_compress *compress, doca_compress_task_decompress_deflate_completion_cb_t task_completion_cb,
	doca_compress_task_decompress_deflate_completion_cb_t task_error_cb, uint32_t num_tasks);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_deflate_alloc_init(struct doca_compress *compress,
							      const struct doca_buf *src_buf, struct doca_buf *dst_buf,
							      union doca_data user_data,
							      struct doca_compress_task_decompress_deflate **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_compress_task_decompress_deflate_as_task(struct doca_compress_task_decompress_deflate *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_deflate_set_src(struct doca_compress_task_decompress_deflate *task,
						   const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_compress_task_decompress_deflate_get_src(
	const struct doca_compress_task_decompress_deflate *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_deflate_set_dst(struct doca_compress_task_decompress_deflate *task,
						   struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_compress_task_decompress_deflate_get_dst(
	const struct doca_compress_task_decompress_deflate *task);

DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_deflate_get_crc_cs(const struct doca_compress_task_decompress_deflate *task);

DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_deflate_get_adler_cs(const struct doca_compress_task_decompress_deflate *task);

/* ---- decompress LZ4 stream: one or more LZ4 blocks, without the frame ---- */

struct doca_compress_task_decompress_lz4_stream;

typedef void (*doca_compress_task_decompress_lz4_stream_completion_cb_t)(
	struct doca_compress_task_decompress_lz4_stream *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_stream_is_supported(const struct doca_devinfo *devinfo);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_stream_get_max_buf_size(const struct doca_devinfo *devinfo,
									   uint64_t *max_buf_size);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_stream_get_max_buf_list_len(const struct doca_devinfo *devinfo,
									       uint32_t *max_buf_list_len);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_stream_set_conf(
	struct doca_compress *compress, doca_compress_task_decompress_lz4_stream_completion_cb_t task_completion_cb,
	doca_compress_task_decompress_lz4_stream_completion_cb_t task_error_cb, uint32_t num_tasks);

/* has_block_checksum: each block carries a checksum (1) or not (0);
 * are_blocks_independent: 1 if no block refers back into an earlier one. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_stream_alloc_init(
	struct doca_compress *compress, uint8_t has_block_checksum, uint8_t are_blocks_independent,
	const struct doca_buf *src_buf, struct doca_buf *dst_buf, union doca_data user_data,
	struct doca_compress_task_decompress_lz4_stream **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_compress_task_decompress_lz4_stream_as_task(
	struct doca_compress_task_decompress_lz4_stream *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_has_block_checksum(
	struct doca_compress_task_decompress_lz4_stream *task, uint8_t has_block_checksum);

DOCA_EXPERIMENTAL
uint8_t doca_compress_task_decompress_lz4_stream_get_has_block_checksum(
	const struct doca_compress_task_decompress_lz4_stream *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_are_blocks_independent(
	struct doca_compress_task_decompress_lz4_stream *task, uint8_t are_blocks_independent);

DOCA_EXPERIMENTAL
uint8_t doca_compress_task_decompress_lz4_stream_get_are_blocks_independent(
	const struct doca_compress_task_decompress_lz4_stream *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_src(struct doca_compress_task_decompress_lz4_stream *task,
						      const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_compress_task_decompress_lz4_stream_get_src(
	const struct doca_compress_task_decompress_lz4_stream *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_dst(struct doca_compress_task_decompress_lz4_stream *task,
						      struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_compress_task_decompress_lz4_stream_get_dst(
	const struct doca_compress_task_decompress_lz4_stream *task);

/* CRC and xxHash-32 of the decompressed stream, after a successful completion. */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_stream_get_crc_cs(
	const struct doca_compress_task_decompress_lz4_stream *task);

DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_stream_get_xxh_cs(
	const struct doca_compress_task_decompress_lz4_stream *task);

/* ---- decompress LZ4 block: one block's compressed data, no size or checksum ---- */

struct doca_compress_task_decompress_lz4_block;

typedef void (*doca_compress_task_decompress_lz4_block_completion_cb_t)(
	struct doca_compress_task_decompress_lz4_block *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_block_is_supported(const struct doca_devinfo *devinfo);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_block_get_max_buf_size(const struct doca_devinfo *devinfo,
									  uint64_t *max_buf_size);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_block_get_max_buf_list_len(const struct doca_devinfo *devinfo,
									      uint32_t *max_buf_list_len);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_block_set_conf(
	struct doca_compress *compress, doca_compress_task_decompress_lz4_block_completion_cb_t task_completion_cb,
	doca_compress_task_decompress_lz4_block_completion_cb_t task_error_cb, uint32_t num_tasks);

DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_block_alloc_init(struct doca_compress *compress,
								const struct doca_buf *src_buf, struct doca_buf *dst_buf,
								union doca_data user_data,
								struct doca_compress_task_decompress_lz4_block **task);

DOCA_EXPERIMENTAL
struct doca_task *doca_compress_task_decompress_lz4_block_as_task(
	struct doca_compress_task_decompress_lz4_block *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_block_set_src(struct doca_compress_task_decompress_lz4_block *task,
						     const struct doca_buf *src_buf);

DOCA_EXPERIMENTAL
const struct doca_buf *doca_compress_task_decompress_lz4_block_get_src(
	const struct doca_compress_task_decompress_lz4_block *task);

DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_block_set_dst(struct doca_compress_task_decompress_lz4_block *task,
						     struct doca_buf *dst_buf);

DOCA_EXPERIMENTAL
struct doca_buf *doca_compress_task_decompress_lz4_block_get_dst(
	const struct doca_compress_task_decompress_lz4_block *task);

DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_block_get_crc_cs(
	const struct doca_compress_task_decompress_lz4_block *task);

DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_block_get_xxh_cs(
	const struct doca_compress_task_decompress_lz4_block *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMPRESS_H_ */
