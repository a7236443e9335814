/*
 * softdoca — DOCA buffer inventories.
 *
 * An inventory is a fixed pool of doca_buf elements, allocated when it is
 * created (or expanded): taking a buf never allocates memory, and fails
 * with DOCA_ERROR_NO_MEMORY when every element is out. A buf goes back to
 * its inventory when its reference count drops to zero.
 *
 * Thread rules: an inventory and its bufs are used by one thread at a time.
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_mmap;

/* A pool of doca_buf elements. Opaque. */
struct doca_buf_inventory;

/* Allocate an unstarted inventory of num_elements bufs (1 to UINT32_MAX).
 * Errors: INVALID_VALUE (NULL, count out of range), NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory);

/* Free the inventory. Every buf must have been returned.
 * Errors: INVALID_VALUE (NULL), IN_USE (bufs still out). */
DOCA_STABLE
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);

/* Allow bufs to be taken. Errors: INVALID_VALUE (NULL), BAD_STATE (already
 * started). */
DOCA_STABLE
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);

/* Refuse further bufs; bufs already out stay valid and can be released.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (not started). */
DOCA_STABLE
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);

/* Take a buf with region [addr, addr + len) and data window
 * [data, data + data_len). The region must lie inside the started mmap's
 * memory range and the window inside the region.
 * Errors: INVALID_VALUE (NULL, ranges outside), BAD_STATE (inventory or
 * mmap not started), NO_MEMORY (every element is out). */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
						void *addr, size_t len, void *data, size_t data_len,
						struct doca_buf **buf);

/* Take a buf for [addr, addr + len) with an empty data window at addr:
 * a destination. */
static inline doca_error_t doca_buf_inventory_buf_get_by_addr(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *addr, size_t len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, 0, buf);
}

/* Take a buf whose region and data window are both [data, data + data_len):
 * a source. */
static inline doca_error_t doca_buf_inventory_buf_get_by_data(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *data, size_t data_len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf);
}

/* Re-point a buf the caller holds at region [addr, addr + len) with data
 * window [data, data + data_len), without returning it to its inventory:
 * the cheap way to recycle one buf per in-flight I/O. The buf keeps its
 * mmap, reference count and list links; the new region must lie inside
 * that mmap (still started) and the window inside the region.
 * Errors: INVALID_VALUE (NULL, ranges outside), BAD_STATE (buf released,
 * mmap not started). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_args(struct doca_buf *buf, void *addr, size_t len, void *data,
						  size_t data_len);

/* Reuse buf for [addr, addr + len) with an empty data window at addr: a
 * destination. Errors as for doca_buf_inventory_buf_reuse_by_args. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_addr(struct doca_buf *buf, void *addr, size_t len);

/* Reuse buf with region and data window both [data, data + data_len): a
 * source. Errors as for doca_buf_inventory_buf_reuse_by_args. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_data(struct doca_buf *buf, void *data, size_t data_len);

/* Take bufs from inventory that describe the same memory as src_buf (and,
 * for a list head, each element of its list), chained the same way.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (src_buf is a non-head list
 * element), BAD_STATE (inventory or the mmap not started), NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf);

/* User data of the inventory (zero until set). */
DOCA_STABLE
doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory,
					      union doca_data *user_data);

/* Total number of elements. */
DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory,
						 uint32_t *num_of_elements);

/* Number of elements not taken. */
DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements);

/* Add num_elements more elements to a started inventory.
 * Errors: INVALID_VALUE (NULL, 0, total above UINT32_MAX), BAD_STATE (not
 * started), NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_expand(struct doca_buf_inventory *inventory, uint32_t num_elements);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
