/*
 * softdoca — buffer inventories: fixed pools of doca_buf elements.
 *
 * Elements live in chunks allocated at create and at each expand; free
 * elements form a singly linked free list, so taking and returning a buf
 * is a pointer swap.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <doca_buf_inventory.h>

#include "bad_state.h"
#include "buf.h"
#include "buf_inventory.h"
#include "live.h"
#include "log_internal.h"
#include "mmap.h"

SDK_LOG_REGISTER(BUF_INVENTORY);

/* Log an error where it is detected and yield the code, in one expression. */
#define FAIL(err, ...) (SDK_LOG_ERR(__VA_ARGS__), (err))

struct inv_chunk {
	struct inv_chunk *next;
	uint32_t count;
	struct doca_buf bufs[];
};

struct doca_buf_inventory {
	struct inv_chunk *chunks;
	struct doca_buf *free_list;
	uint32_t num_elements;
	uint32_t num_free;
	bool started;
	union doca_data user_data;
};

/* Allocate count more elements and put them on the free list. */
static doca_error_t inv_add_chunk(struct doca_buf_inventory *inv, uint32_t count)
{
	struct inv_chunk *chunk;
	size_t bytes;

	if (__builtin_mul_overflow((size_t)count, sizeof(struct doca_buf), &bytes) ||
	    __builtin_add_overflow(bytes, sizeof(*chunk), &bytes))
		return FAIL(DOCA_ERROR_NO_MEMORY, "%u buf elements do not fit in memory", count);
	chunk = calloc(1, bytes);
	if (chunk == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "failed to allocate %u buf elements", count);
	chunk->count = count;
	chunk->next = inv->chunks;
	inv->chunks = chunk;
	/* Push in reverse so elements are handed out in address order. */
	for (uint32_t i = count; i > 0; i--) {
		chunk->bufs[i - 1].next = inv->free_list;
		inv->free_list = &chunk->bufs[i - 1];
	}
	inv->num_elements += count;
	inv->num_free += count;
	return DOCA_SUCCESS;
}

static struct doca_buf *inv_pop(struct doca_buf_inventory *inv)
{
	struct doca_buf *buf = inv->free_list;

	inv->free_list = buf->next;
	inv->num_free--;
	return buf;
}

void core_buf_inventory_put(struct doca_buf_inventory *inventory, struct doca_buf *buf)
{
	buf->refcount = 0;
	buf->chained = false;
	buf->mmap = NULL;
	buf->next = inventory->free_list;
	inventory->free_list = buf;
	inventory->num_free++;
}

doca_error_t core_buf_inventory_take_indexed(struct doca_buf_inventory *inventory, struct doca_buf **buf,
					     uint32_t *index)
{
	struct inv_chunk *chunk = inventory->chunks;

	if (inventory->free_list == NULL)
		return DOCA_ERROR_EMPTY;
	*buf = inv_pop(inventory);
	*index = (uint32_t)(*buf - chunk->bufs);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory)
{
	struct doca_buf_inventory *inv;
	doca_error_t err;

	if (inventory == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory output pointer is NULL");
	if (num_elements == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "an inventory needs at least one element");
#if SIZE_MAX > UINT32_MAX
	if (num_elements > UINT32_MAX)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%zu elements is more than an inventory can count (%u)",
			    num_elements, UINT32_MAX);
#endif
	inv = calloc(1, sizeof(*inv));
	if (inv == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "failed to allocate a buf inventory");
	err = softdoca_live_add(inv, SOFTDOCA_LIVE_BUF_INVENTORY);
	if (err != DOCA_SUCCESS)
		goto free_inv;
	err = inv_add_chunk(inv, (uint32_t)num_elements);
	if (err != DOCA_SUCCESS)
		goto forget_inv;
	*inventory = inv;
	return DOCA_SUCCESS;

forget_inv:
	softdoca_live_remove(inv);
free_inv:
	free(inv);
	return err;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory)
{
	uint32_t out;

	if (inventory == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory is NULL");
	if (softdoca_live_check(inventory, SOFTDOCA_LIVE_BUF_INVENTORY, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	out = inventory->num_elements - inventory->num_free;
	if (out > 0)
		return FAIL(DOCA_ERROR_IN_USE, "cannot destroy inventory: %u buf(s) not returned yet", out);
	while (inventory->chunks != NULL) {
		struct inv_chunk *chunk = inventory->chunks;

		inventory->chunks = chunk->next;
		free(chunk);
	}
	softdoca_live_remove(inventory);
	free(inventory);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory)
{
	if (inventory == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory is NULL");
	if (softdoca_live_check(inventory, SOFTDOCA_LIVE_BUF_INVENTORY, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (inventory->started)
		return softdoca_bad_state(__func__, "buf inventory", "started", "not started",
					  "it was started already; start it once");
	inventory->started = true;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory)
{
	if (inventory == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory is NULL");
	if (softdoca_live_check(inventory, SOFTDOCA_LIVE_BUF_INVENTORY, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (!inventory->started)
		return softdoca_bad_state(__func__, "buf inventory", "not started", "started",
					  "call doca_buf_inventory_start first");
	inventory->started = false;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
						void *addr, size_t len, void *data, size_t data_len,
						struct doca_buf **buf)
{
	uintptr_t a = (uintptr_t)addr;
	uintptr_t d = (uintptr_t)data;
	doca_error_t err;

	if (inventory == NULL || mmap == NULL || buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory, mmap or buf is NULL");
	if (addr == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf address is NULL");
	if (!inventory->started)
		return softdoca_bad_state("doca_buf_inventory_buf_get_by_*", "buf inventory", "not started", "started",
					  "call doca_buf_inventory_start before taking bufs");
	/* Written so that nothing can overflow. */
	if (d < a || data_len > len || d - a > len - data_len)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "data window [%p, +%zu) is outside the buf region [%p, +%zu)", data,
			    data_len, addr, len);
	if (inventory->free_list == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "inventory is empty: all %u elements are in use",
			    inventory->num_elements);
	err = core_mmap_buf_get(mmap, a, len);
	if (err != DOCA_SUCCESS)
		return err;
	*buf = inv_pop(inventory);
	core_buf_init(*buf, inventory, mmap, a, len, d, data_len);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_args(struct doca_buf *buf, void *addr, size_t len, void *data,
						  size_t data_len)
{
	uintptr_t a = (uintptr_t)addr;
	uintptr_t d = (uintptr_t)data;
	doca_error_t err;

	if (buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf to reuse is NULL");
	if (addr == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "new buf address is NULL");
	if (buf->refcount == 0)
		return FAIL(DOCA_ERROR_BAD_STATE, "buf to reuse was already released");
	if (d < a || data_len > len || d - a > len - data_len)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "data window [%p, +%zu) is outside the buf region [%p, +%zu)", data,
			    data_len, addr, len);
	/* The buf keeps its mmap (and the reference it holds on it): the new
	 * region must lie inside that same mmap. */
	err = core_mmap_buf_check(buf->mmap, a, len);
	if (err != DOCA_SUCCESS)
		return err;
	buf->head = a;
	buf->len = len;
	buf->data = d;
	buf->data_len = data_len;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_addr(struct doca_buf *buf, void *addr, size_t len)
{
	return doca_buf_inventory_buf_reuse_by_args(buf, addr, len, addr, 0);
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_data(struct doca_buf *buf, void *data, size_t data_len)
{
	return doca_buf_inventory_buf_reuse_by_args(buf, data, data_len, data, data_len);
}

/* Copy one element of a list into a fresh element of inv. */
static doca_error_t inv_dup_one(struct doca_buf_inventory *inv, const struct doca_buf *src, struct doca_buf **dst)
{
	doca_error_t err = core_mmap_buf_get_dup(src->mmap);

	if (err != DOCA_SUCCESS)
		return err;
	*dst = inv_pop(inv);
	core_buf_init(*dst, inv, src->mmap, src->head, src->len, src->data, src->data_len);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf)
{
	struct doca_buf *head = NULL;
	struct doca_buf *copy;
	doca_error_t err;

	if (inventory == NULL || src_buf == NULL || dst_buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory, src_buf or dst_buf is NULL");
	if (!inventory->started)
		return softdoca_bad_state(__func__, "buf inventory", "not started", "started",
					  "call doca_buf_inventory_start first");
	if (src_buf->refcount == 0)
		return FAIL(DOCA_ERROR_BAD_STATE, "src_buf was already released");
	if (src_buf->chained)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "src_buf is inside a list; duplicate the list head");
	if (inventory->num_free < src_buf->list_len)
		return FAIL(DOCA_ERROR_NO_MEMORY, "inventory has %u free elements, the list needs %u",
			    inventory->num_free, src_buf->list_len);

	for (const struct doca_buf *src = src_buf; src != NULL; src = src->next) {
		err = inv_dup_one(inventory, src, &copy);
		if (err != DOCA_SUCCESS)
			goto release_copies;
		if (head == NULL)
			head = copy;
		else
			core_buf_append(head, copy);
	}
	*dst_buf = head;
	return DOCA_SUCCESS;

release_copies:
	core_buf_release_list(head);
	return err;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory, union doca_data user_data)
{
	if (inventory == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory is NULL");
	if (softdoca_live_check(inventory, SOFTDOCA_LIVE_BUF_INVENTORY, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	inventory->user_data = user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory,
					      union doca_data *user_data)
{
	if (inventory == NULL || user_data == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory or user_data is NULL");
	if (softdoca_live_check(inventory, SOFTDOCA_LIVE_BUF_INVENTORY, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = inventory->user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory,
						 uint32_t *num_of_elements)
{
	if (inventory == NULL || num_of_elements == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory or num_of_elements is NULL");
	if (softdoca_live_check(inventory, SOFTDOCA_LIVE_BUF_INVENTORY, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_elements = inventory->num_elements;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements)
{
	if (inventory == NULL || num_of_free_elements == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory or num_of_free_elements is NULL");
	if (softdoca_live_check(inventory, SOFTDOCA_LIVE_BUF_INVENTORY, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_free_elements = inventory->num_free;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_expand(struct doca_buf_inventory *inventory, uint32_t num_elements)
{
	if (inventory == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory is NULL");
	if (softdoca_live_check(inventory, SOFTDOCA_LIVE_BUF_INVENTORY, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (num_elements == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "cannot expand an inventory by 0 elements");
	if (!inventory->started)
		return softdoca_bad_state(__func__, "buf inventory", "not started", "started",
					  "call doca_buf_inventory_start first");
	if (num_elements > UINT32_MAX - inventory->num_elements)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "inventory of %u elements cannot grow by %u", inventory->num_elements,
			    num_elements);
	return inv_add_chunk(inventory, num_elements);
}
