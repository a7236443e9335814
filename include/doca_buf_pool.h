/*
 * softdoca — DOCA buffer pools.
 *
 * A buf pool cuts the memory of one mmap into num_elements fixed-size
 * slots and keeps one doca_buf per slot: allocating a buf never searches
 * or allocates memory, and fails with DOCA_ERROR_EMPTY when every slot is
 * out. A buf goes back to its pool when its reference count drops to zero.
 *
 * Layout (fixed at start): the first slot begins at the mmap's start
 * rounded up to the element alignment; each next slot begins element_size
 * rounded up to the alignment further on. The mmap must be large enough
 * for all slots.
 *
 * The pool holds its mmap from create to destroy: the mmap cannot be
 * stopped or destroyed while the pool exists. Thread rules: a pool and
 * its bufs are used by one thread at a time.
 */
#ifndef DOCA_BUF_POOL_H_
#define DOCA_BUF_POOL_H_

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

/* A pool of fixed-size doca_bufs over one mmap. Opaque. */
struct doca_buf_pool;

/* Create an unstarted pool of num_elements (1 to UINT32_MAX) slots of
 * element_size (> 0) bytes each in mmap's memory.
 * Errors: INVALID_VALUE (NULL, a size out of range), NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_buf_pool_create(size_t num_elements, size_t element_size, const struct doca_mmap *mmap,
				  struct doca_buf_pool **buf_pool);

/* Free the pool (stopping it if needed). Every buf must have been returned.
 * Errors: INVALID_VALUE (NULL), IN_USE (bufs still out). */
DOCA_STABLE
doca_error_t doca_buf_pool_destroy(struct doca_buf_pool *buf_pool);

/* Lay the slots out in the (started) mmap and allow allocation.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (pool already started, mmap not
 * started), INITIALIZATION (the slots do not fit in the mmap's memory). */
DOCA_STABLE
doca_error_t doca_buf_pool_start(struct doca_buf_pool *buf_pool);

/* Refuse allocation and allow the set_* calls again. Every buf must have
 * been returned. Errors: INVALID_VALUE (NULL), BAD_STATE (not started),
 * IN_USE (bufs still out). */
DOCA_STABLE
doca_error_t doca_buf_pool_stop(struct doca_buf_pool *buf_pool);

/* Take a free slot's buf: region [slot, slot + element_size), empty data
 * window at the slot's start, reference count 1.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (pool not started, mmap gone),
 * EMPTY (every buf is out). */
DOCA_STABLE
doca_error_t doca_buf_pool_buf_alloc(struct doca_buf_pool *buf_pool, struct doca_buf **buf);

/* User data of the pool (zero until set); set only while not started.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (started). */
DOCA_STABLE
doca_error_t doca_buf_pool_set_user_data(struct doca_buf_pool *buf_pool, union doca_data user_data);

/* Alignment of every slot's start: a power of two, 1 (the default) for
 * none; set only while not started.
 * Errors: INVALID_VALUE (NULL, not a power of two), BAD_STATE (started). */
DOCA_STABLE
doca_error_t doca_buf_pool_set_element_alignment(struct doca_buf_pool *buf_pool, size_t element_alignment);

/* Number of slots given at create. */
DOCA_STABLE
doca_error_t doca_buf_pool_get_num_elements(const struct doca_buf_pool *buf_pool, uint32_t *num_of_elements);

/* Number of slots not allocated. */
DOCA_STABLE
doca_error_t doca_buf_pool_get_num_free_elements(const struct doca_buf_pool *buf_pool,
						 uint32_t *num_of_free_elements);

DOCA_STABLE
doca_error_t doca_buf_pool_get_user_data(const struct doca_buf_pool *buf_pool, union doca_data *user_data);

DOCA_STABLE
doca_error_t doca_buf_pool_get_element_alignment(const struct doca_buf_pool *buf_pool, size_t *element_alignment);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_POOL_H_ */
