/*
 * softdoca — buffer inventories, internal interface (library only).
 */
#ifndef SOFTDOCA_CORE_BUF_INVENTORY_H_
#define SOFTDOCA_CORE_BUF_INVENTORY_H_

#include <doca_buf_inventory.h>

struct doca_buf;

/* Put one element (not its list) back on its inventory's free list. */
void core_buf_inventory_put(struct doca_buf_inventory *inventory, struct doca_buf *buf);

#endif /* SOFTDOCA_CORE_BUF_INVENTORY_H_ */
