/*
 * softdoca — buffers: data window, reference count, lists.
 *
 * The head of a list holds the reference count of the whole list and
 * caches its last element and length, so chaining is O(1). Other elements
 * keep refcount 1 and are marked "chained".
 */
#include <stdbool.h>
#include <stdint.h>

#include <doca_buf.h>

#include "buf.h"
#include "buf_inventory.h"
#include "log_internal.h"
#include "mmap.h"

SDK_LOG_REGISTER(BUF);

/* Log an error where it is detected and yield the code, in one expression. */
#define FAIL(err, ...) (SDK_LOG_ERR(__VA_ARGS__), (err))

/* True when [data, data + data_len) lies inside the buf's region; written
 * so that nothing can overflow. */
static bool buf_window_fits(const struct doca_buf *buf, uintptr_t data, size_t data_len)
{
	return data >= buf->head && data_len <= buf->len && data - buf->head <= buf->len - data_len;
}

/* Checks shared by the two chain calls. */
static doca_error_t buf_check_chain(const struct doca_buf *list1, const struct doca_buf *list2)
{
	if (list1 == NULL || list2 == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "list1 or list2 is NULL");
	if (list1 == list2)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "cannot chain a list to itself");
	if (list1->refcount == 0 || list2->refcount == 0)
		return FAIL(DOCA_ERROR_BAD_STATE, "cannot chain a buf that was already released");
	if (list1->chained)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "list1 must be the head of its list");
	if (list2->chained)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "list2 must be the head of its list");
	if (list2->refcount != 1)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "list2 has %u references; only a list referenced once can be chained",
			    list2->refcount);
	if (list1->list_len > UINT32_MAX - list2->list_len)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "chained list would exceed %u elements", UINT32_MAX);
	return DOCA_SUCCESS;
}

void core_buf_init(struct doca_buf *buf, struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
		   uintptr_t addr, size_t len, uintptr_t data, size_t data_len)
{
	buf->head = addr;
	buf->len = len;
	buf->data = data;
	buf->data_len = data_len;
	buf->next = NULL;
	buf->last = buf;
	buf->list_len = 1;
	buf->refcount = 1;
	buf->chained = false;
	buf->mmap = mmap;
	buf->inventory = inventory;
}

void core_buf_append(struct doca_buf *head1, struct doca_buf *list2)
{
	head1->last->next = list2;
	head1->last = list2->last;
	head1->list_len += list2->list_len;
	list2->chained = true;
	/* Only heads keep these. */
	list2->last = NULL;
	list2->list_len = 0;
}

void core_buf_release_list(struct doca_buf *head)
{
	struct doca_buf *buf = head;

	while (buf != NULL) {
		struct doca_buf *next = buf->next;
		struct doca_mmap *mmap = buf->mmap;

		core_buf_inventory_put(buf->inventory, buf);
		core_mmap_buf_put(mmap);
		buf = next;
	}
}

SOFTDOCA_EXPORT struct doca_mmap *softdoca_buf_get_mmap(const struct doca_buf *buf)
{
	return buf == NULL ? NULL : buf->mmap;
}

/* ------------------------------------------------------------------ */
/* Reference count                                                      */

DOCA_STABLE
doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	uint16_t before;

	if (buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf is NULL");
	if (buf->chained)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "buf is inside a list; release the list head instead");
	if (buf->refcount == 0)
		return FAIL(DOCA_ERROR_BAD_STATE, "buf was already released");
	before = buf->refcount--;
	if (refcount != NULL)
		*refcount = before;
	if (buf->refcount == 0)
		core_buf_release_list(buf);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf is NULL");
	if (buf->chained)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "buf is inside a list; reference the list head instead");
	if (buf->refcount == 0)
		return FAIL(DOCA_ERROR_BAD_STATE, "buf was already released");
	if (buf->refcount == UINT16_MAX)
		return FAIL(DOCA_ERROR_TOO_BIG, "buf reference count is at its maximum %u", UINT16_MAX);
	if (refcount != NULL)
		*refcount = buf->refcount;
	buf->refcount++;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount)
{
	if (buf == NULL || refcount == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or refcount is NULL");
	*refcount = buf->refcount;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Region and data window                                               */

DOCA_STABLE
doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len)
{
	if (buf == NULL || len == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or len is NULL");
	*len = buf->len;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head)
{
	if (buf == NULL || head == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or head is NULL");
	*head = (void *)buf->head;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data)
{
	if (buf == NULL || data == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or data is NULL");
	*data = (void *)buf->data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len)
{
	if (buf == NULL || data_len == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or data_len is NULL");
	*data_len = buf->data_len;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len)
{
	if (buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf is NULL");
	if (!buf_window_fits(buf, (uintptr_t)data, data_len))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "data window [%p, +%zu) is outside the buf region [%p, +%zu)", data,
			    data_len, (void *)buf->head, buf->len);
	buf->data = (uintptr_t)data;
	buf->data_len = data_len;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_set_data_len(struct doca_buf *buf, size_t data_len)
{
	if (buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf is NULL");
	if (!buf_window_fits(buf, buf->data, data_len))
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "data length %zu runs past the buf region: %zu bytes left after the data start", data_len,
			    buf->len - (buf->data - buf->head));
	buf->data_len = data_len;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_reset_data_len(struct doca_buf *buf)
{
	if (buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf is NULL");
	buf->data_len = 0;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Lists                                                                */

DOCA_STABLE
doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	doca_error_t err = buf_check_chain(list1, list2);

	if (err != DOCA_SUCCESS)
		return err;
	core_buf_append(list1, list2);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_buf_chain_list_tail(struct doca_buf *list1_head, struct doca_buf *list1_tail,
				      struct doca_buf *list2)
{
	doca_error_t err;

	if (list1_tail == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "list1_tail is NULL");
	err = buf_check_chain(list1_head, list2);
	if (err != DOCA_SUCCESS)
		return err;
	if (list1_head->last != list1_tail)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "list1_tail is not the last element of list1_head");
	core_buf_append(list1_head, list2);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	struct doca_buf *prev = list1;
	uint32_t kept = 1;

	if (list1 == NULL || list2 == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "list1 or list2 is NULL");
	if (list1 == list2)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "list2 must differ from list1");
	if (list1->refcount == 0)
		return FAIL(DOCA_ERROR_BAD_STATE, "list1 was already released");
	if (list1->chained)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "list1 must be the head of its list");
	while (prev->next != NULL && prev->next != list2) {
		prev = prev->next;
		kept++;
	}
	if (prev->next != list2)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "list2 is not part of list1");

	prev->next = NULL;
	list2->chained = false;
	list2->refcount = 1;
	list2->last = list1->last;
	list2->list_len = list1->list_len - kept;
	list1->last = prev;
	list1->list_len = kept;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf)
{
	if (buf == NULL || next_buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or next_buf is NULL");
	*next_buf = buf->next;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf)
{
	struct doca_buf *last;

	if (buf == NULL || last_buf == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or last_buf is NULL");
	if (!buf->chained && buf->last != NULL) {
		*last_buf = buf->last; /* heads cache it */
		return DOCA_SUCCESS;
	}
	for (last = buf; last->next != NULL; last = last->next)
		;
	*last_buf = last;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last)
{
	if (buf == NULL || is_last == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or is_last is NULL");
	*is_last = buf->next == NULL;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first)
{
	if (buf == NULL || is_first == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or is_first is NULL");
	*is_first = !buf->chained;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list)
{
	if (buf == NULL || is_in_list == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or is_in_list is NULL");
	*is_in_list = buf->chained || buf->next != NULL;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements)
{
	if (buf == NULL || num_elements == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buf or num_elements is NULL");
	if (buf->chained)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "buf is not the head of its list");
	*num_elements = buf->list_len;
	return DOCA_SUCCESS;
}
