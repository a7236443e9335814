/*
 * softdoca — buffer pools: fixed-size slots of one mmap, one doca_buf each.
 *
 * A pool keeps a private, never-expanded buf inventory with one element
 * per slot; element i always describes slot i. Allocation takes a free
 * element and points it at its slot, and releasing a pool buf (refcount
 * to zero) is the inventory's ordinary put, so lists, refcounts, dup and
 * reuse work on pool bufs exactly as on inventory bufs.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <doca_buf_inventory.h>
#include <doca_buf_pool.h>

#include "bad_state.h"
#include "buf.h"
#include "buf_inventory.h"
#include "log_internal.h"
#include "mmap.h"

SDK_LOG_REGISTER(BUF_POOL);

/* Log an error where it is detected and yield the code, in one expression. */
#define FAIL(err, ...) (SDK_LOG_ERR(__VA_ARGS__), (err))

struct doca_buf_pool {
	struct doca_mmap *mmap;		   /* held from create to destroy */
	struct doca_buf_inventory *inventory; /* one element per slot */
	uint32_t num_elements;
	size_t element_size;
	size_t alignment;
	bool started;
	uintptr_t base;	/* first slot (valid while started) */
	size_t stride;	/* distance between slots (valid while started) */
	union doca_data user_data;
};

static uint32_t pool_num_out(const struct doca_buf_pool *pool)
{
	uint32_t free_elems = 0;

	(void)doca_buf_inventory_get_num_free_elements(pool->inventory, &free_elems);
	return pool->num_elements - free_elems;
}

/* Round v up to a multiple of align (a power of two); false on overflow. */
static bool pool_align_up(uintptr_t v, size_t align, uintptr_t *out)
{
	uintptr_t mask = (uintptr_t)align - 1;

	if (v > UINTPTR_MAX - mask)
		return false;
	*out = (v + mask) & ~mask;
	return true;
}

/* Place the slots in [addr, addr + len); INITIALIZATION if they do not fit. */
static doca_error_t pool_layout(struct doca_buf_pool *pool, uintptr_t addr, size_t len)
{
	uintptr_t base, stride;
	size_t span;

	if (!pool_align_up(addr, pool->alignment, &base) ||
	    !pool_align_up(pool->element_size, pool->alignment, &stride) ||
	    __builtin_mul_overflow((size_t)stride, (size_t)(pool->num_elements - 1), &span) ||
	    __builtin_add_overflow(span, pool->element_size, &span) || base - addr > len ||
	    span > len - (base - addr))
		return FAIL(DOCA_ERROR_INITIALIZATION,
			    "%u elements of %zu bytes aligned to %zu do not fit in the mmap range [0x%lx, +%zu)",
			    pool->num_elements, pool->element_size, pool->alignment, (unsigned long)addr, len);
	pool->base = base;
	pool->stride = stride;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_create(size_t num_elements, size_t element_size, const struct doca_mmap *mmap,
				  struct doca_buf_pool **buf_pool)
{
	struct doca_buf_pool *pool;
	doca_error_t err;

	if (mmap == NULL || buf_pool == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or buf_pool output pointer is NULL");
	if (num_elements == 0 || element_size == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "a buf pool needs at least one element of at least one byte");
#if SIZE_MAX > UINT32_MAX
	if (num_elements > UINT32_MAX)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%zu elements is more than a buf pool can count (%u)", num_elements,
			    UINT32_MAX);
#endif
	pool = calloc(1, sizeof(*pool));
	if (pool == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "failed to allocate a buf pool");
	err = doca_buf_inventory_create(num_elements, &pool->inventory);
	if (err != DOCA_SUCCESS)
		goto free_pool;
	err = doca_buf_inventory_start(pool->inventory);
	if (err != DOCA_SUCCESS)
		goto destroy_inventory;
	pool->num_elements = (uint32_t)num_elements;
	pool->element_size = element_size;
	pool->alignment = 1;
	/* DOCA takes the mmap as const; its bufs still account themselves in
	 * it, as every buf does. */
	pool->mmap = (struct doca_mmap *)mmap;
	core_mmap_hold(pool->mmap);
	*buf_pool = pool;
	return DOCA_SUCCESS;

destroy_inventory:
	(void)doca_buf_inventory_destroy(pool->inventory);
free_pool:
	free(pool);
	return err;
}

DOCA_STABLE
doca_error_t doca_buf_pool_destroy(struct doca_buf_pool *buf_pool)
{
	uint32_t out;

	if (buf_pool == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool is NULL");
	out = pool_num_out(buf_pool);
	if (out > 0)
		return FAIL(DOCA_ERROR_IN_USE, "cannot destroy buf pool: %u buf(s) not returned yet", out);
	(void)doca_buf_inventory_destroy(buf_pool->inventory);
	core_mmap_buf_put(buf_pool->mmap);
	free(buf_pool);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_start(struct doca_buf_pool *buf_pool)
{
	uintptr_t addr;
	size_t len;
	doca_error_t err;

	if (buf_pool == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool is NULL");
	if (buf_pool->started)
		return softdoca_bad_state(__func__, "buf pool", "started", "not started",
					  "it was started already; start it once");
	err = core_mmap_started_range(buf_pool->mmap, &addr, &len);
	if (err != DOCA_SUCCESS)
		return err;
	err = pool_layout(buf_pool, addr, len);
	if (err != DOCA_SUCCESS)
		return err;
	buf_pool->started = true;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_stop(struct doca_buf_pool *buf_pool)
{
	uint32_t out;

	if (buf_pool == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool is NULL");
	if (!buf_pool->started)
		return softdoca_bad_state(__func__, "buf pool", "not started", "started", "only a started buf pool stops");
	out = pool_num_out(buf_pool);
	if (out > 0)
		return FAIL(DOCA_ERROR_IN_USE, "cannot stop buf pool: %u buf(s) not returned yet", out);
	buf_pool->started = false;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_buf_alloc(struct doca_buf_pool *buf_pool, struct doca_buf **buf)
{
	struct doca_buf *b;
	uint32_t index;
	uintptr_t slot;
	doca_error_t err;

	if (buf_pool == NULL || buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool or buf output pointer is NULL");
	if (!buf_pool->started)
		return softdoca_bad_state(__func__, "buf pool", "not started", "started",
					  "call doca_buf_pool_start before allocating bufs");
	if (core_buf_inventory_take_indexed(buf_pool->inventory, &b, &index) != DOCA_SUCCESS)
		return FAIL(DOCA_ERROR_EMPTY, "buf pool is empty: all %u bufs are out", buf_pool->num_elements);
	slot = buf_pool->base + (uintptr_t)index * buf_pool->stride;
	/* Fails only if the mmap went away under a thread-safe pool user. */
	err = core_mmap_buf_get(buf_pool->mmap, slot, buf_pool->element_size);
	if (err != DOCA_SUCCESS) {
		core_buf_inventory_put(buf_pool->inventory, b);
		return err;
	}
	core_buf_init(b, buf_pool->inventory, buf_pool->mmap, slot, buf_pool->element_size, slot, 0);
	*buf = b;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_set_user_data(struct doca_buf_pool *buf_pool, union doca_data user_data)
{
	if (buf_pool == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool is NULL");
	if (buf_pool->started)
		return softdoca_bad_state(__func__, "buf pool", "started", "not started",
					  "set its properties before doca_buf_pool_start");
	buf_pool->user_data = user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_set_element_alignment(struct doca_buf_pool *buf_pool, size_t element_alignment)
{
	if (buf_pool == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool is NULL");
	if (element_alignment == 0 || (element_alignment & (element_alignment - 1)) != 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "element alignment %zu is not a power of two", element_alignment);
	if (buf_pool->started)
		return softdoca_bad_state(__func__, "buf pool", "started", "not started",
					  "set its properties before doca_buf_pool_start");
	buf_pool->alignment = element_alignment;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_get_num_elements(const struct doca_buf_pool *buf_pool, uint32_t *num_of_elements)
{
	if (buf_pool == NULL || num_of_elements == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool or num_of_elements is NULL");
	*num_of_elements = buf_pool->num_elements;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_get_num_free_elements(const struct doca_buf_pool *buf_pool,
						 uint32_t *num_of_free_elements)
{
	if (buf_pool == NULL || num_of_free_elements == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool or num_of_free_elements is NULL");
	*num_of_free_elements = buf_pool->num_elements - pool_num_out(buf_pool);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_get_user_data(const struct doca_buf_pool *buf_pool, union doca_data *user_data)
{
	if (buf_pool == NULL || user_data == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool or user_data is NULL");
	*user_data = buf_pool->user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_pool_get_element_alignment(const struct doca_buf_pool *buf_pool, size_t *element_alignment)
{
	if (buf_pool == NULL || element_alignment == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf_pool or element_alignment is NULL");
	*element_alignment = buf_pool->alignment;
	return DOCA_SUCCESS;
}
