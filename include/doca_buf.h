/*
 * softdoca — DOCA buffers.
 *
 * A doca_buf describes a region [head, head + len) inside a started mmap,
 * and within it a data window [data, data + data_len): tasks read their
 * source from the window and append what they write at data + data_len.
 * Bufs come from a doca_buf_inventory and go back to it when their
 * reference count drops to zero.
 *
 * Bufs can be chained into a list. The list head carries the reference
 * count of the whole list; the other elements always count 1 and cannot be
 * referenced or released on their own. Releasing the head's last
 * reference returns every element of the list.
 *
 * Thread rules: a buf (and its list) is used by one thread at a time.
 */
#ifndef DOCA_BUF_H_
#define DOCA_BUF_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A buffer. Opaque. */
struct doca_buf;

/* Drop one reference. At zero the buf (with its whole list) returns to its
 * inventory. refcount (may be NULL) receives the count before the call.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (buf is a non-head list
 * element), BAD_STATE (buf already released). */
DOCA_STABLE
doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount);

/* Add one reference. refcount (may be NULL) receives the count before.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (non-head list element),
 * BAD_STATE (buf already released), TOO_BIG (count at UINT16_MAX). */
DOCA_STABLE
doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount);

/* Current reference count. */
DOCA_STABLE
doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount);

/* Length of the region. */
DOCA_STABLE
doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len);

/* Start of the region. */
DOCA_STABLE
doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head);

/* Start of the data window. */
DOCA_STABLE
doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);

/* Length of the data window. */
DOCA_STABLE
doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);

/* Move the data window to [data, data + data_len); it must lie inside the
 * region. Errors: INVALID_VALUE (NULL buf, window outside the region). */
DOCA_STABLE
doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len);

/* Resize the data window, keeping its start; it must stay inside the
 * region. Errors: INVALID_VALUE (NULL buf, window outside the region). */
DOCA_STABLE
doca_error_t doca_buf_set_data_len(struct doca_buf *buf, size_t data_len);

/* Empty the data window, keeping its start. */
DOCA_STABLE
doca_error_t doca_buf_reset_data_len(struct doca_buf *buf);

/* Append list2 to the end of list1. list1 must be a list head; list2 a
 * different list head with reference count 1.
 * Errors: INVALID_VALUE (NULL, same buf), NOT_PERMITTED (list1 or list2
 * not a head, list2 referenced more than once). */
DOCA_STABLE
doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2);

/* Same as doca_buf_chain_list(), with the tail of list1 given to save the
 * walk. Errors: as doca_buf_chain_list(), and INVALID_VALUE when list1_tail
 * is not the last element of list1_head. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_chain_list_tail(struct doca_buf *list1_head, struct doca_buf *list1_tail,
				      struct doca_buf *list2);

/* Cut list1 before list2: list2 becomes the head of its own list, with
 * reference count 1. Errors: INVALID_VALUE (NULL, same buf, list2 not in
 * list1), NOT_PERMITTED (list1 not a head). */
DOCA_STABLE
doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2);

/* The element after buf, or NULL. */
DOCA_STABLE
doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf);

/* The last element of the list buf belongs to, from buf on. */
DOCA_STABLE
doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf);

/* 1 if nothing follows buf. */
DOCA_STABLE
doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last);

/* 1 if buf is a list head (nothing precedes it). */
DOCA_STABLE
doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first);

/* 1 if buf is part of a list of two or more elements. */
DOCA_STABLE
doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list);

/* Number of elements in the list headed by buf.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (buf is not a head). */
DOCA_STABLE
doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_H_ */
