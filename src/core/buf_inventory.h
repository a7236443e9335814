/*
 * softdoca — buffer inventories, internal interface (library only).
 */
#ifndef SOFTDOCA_CORE_BUF_INVENTORY_H_
#define SOFTDOCA_CORE_BUF_INVENTORY_H_

#include <doca_buf_inventory.h>

struct doca_buf;

/* Put one element (not its list) back on its inventory's free list. */
void core_buf_inventory_put(struct doca_buf_inventory *inventory, struct doca_buf *buf);

/* Take a free element of an inventory that was never expanded (one chunk)
 * and give its index in 0..num_elements-1; the caller fills it with
 * core_buf_init. No log: DOCA_ERROR_EMPTY when every element is out.
 * Buf pools map element i to memory slot i this way. */
doca_error_t core_buf_inventory_take_indexed(struct doca_buf_inventory *inventory, struct doca_buf **buf,
					     uint32_t *index);

#endif /* SOFTDOCA_CORE_BUF_INVENTORY_H_ */
