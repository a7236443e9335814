/*
 * softdoca — buffers, internal interface.
 *
 * A doca_buf lives inside the element array of its inventory from create
 * to destroy; taking and releasing one never allocates. Addresses are kept
 * as integers: a buf on a from-export mmap holds the exporter's addresses,
 * which must never be dereferenced here.
 */
#ifndef SOFTDOCA_CORE_BUF_H_
#define SOFTDOCA_CORE_BUF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_buf.h>

#include "common.h"

struct doca_mmap;
struct doca_buf_inventory;

struct doca_buf {
	uintptr_t head;	  /* region [head, head + len) */
	size_t len;
	uintptr_t data;	  /* window [data, data + data_len) inside the region */
	size_t data_len;
	struct doca_buf *next;	/* next list element; free-list link while free */
	struct doca_buf *last;	/* list heads only: last element */
	uint32_t list_len;	/* list heads only: number of elements */
	uint16_t refcount;	/* 0 while in the inventory */
	bool chained;		/* another element points here: not a head */
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inventory;
};

/* The mmap a buf points into (NULL for a released buf). For the RDMA layer:
 * local or from export, see mmap.h. */
SOFTDOCA_EXPORT struct doca_mmap *softdoca_buf_get_mmap(const struct doca_buf *buf);

/* For the RDMA layer's data path: a buf's window and the room after it,
 * without a call per buffer. Addresses stay integers (see above). */
static inline uintptr_t softdoca_buf_data_addr(const struct doca_buf *buf)
{
	return buf->data;
}

static inline size_t softdoca_buf_data_len(const struct doca_buf *buf)
{
	return buf->data_len;
}

/* The first byte after the data window: where a destination is filled. */
static inline uintptr_t softdoca_buf_tail_addr(const struct doca_buf *buf)
{
	return buf->data + buf->data_len;
}

/* Free bytes after the data window. */
static inline size_t softdoca_buf_tail_room(const struct doca_buf *buf)
{
	return (buf->head + buf->len) - (buf->data + buf->data_len);
}

/* The next element of a list (NULL after the last). */
static inline struct doca_buf *softdoca_buf_list_next(const struct doca_buf *buf)
{
	return buf->next;
}

/* The window takes n more bytes of its tail room (n <= tail room). */
static inline void softdoca_buf_data_grow(struct doca_buf *buf, size_t n)
{
	buf->data_len += n;
}

/* Library-internal (buf_inventory.c). */

/* Fill a just-taken element as a one-element list with refcount 1. */
void core_buf_init(struct doca_buf *buf, struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
		   uintptr_t addr, size_t len, uintptr_t data, size_t data_len);

/* Append the list headed by list2 to the list headed by head1 (no checks). */
void core_buf_append(struct doca_buf *head1, struct doca_buf *list2);

/* Return every element of the list headed by head to its inventory. */
void core_buf_release_list(struct doca_buf *head);

#endif /* SOFTDOCA_CORE_BUF_H_ */
