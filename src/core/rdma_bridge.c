/*
 * softdoca — doca_rdma_bridge.h: the bridge between DOCA devices and
 * libibverbs objects (protection domains, memory keys). It is DOCA Core's
 * (libdoca_common), not DOCA RDMA's: NVIDIA's doca_verbs samples call it
 * linking doca-common alone.
 *
 * Soft devices have no verbs protection domain and reach memory without
 * memory keys, so every call says DOCA_ERROR_NOT_SUPPORTED and why.
 */
#include <doca_rdma_bridge.h>

#include "log_internal.h"

SDK_LOG_REGISTER(CORE_RDMA_BRIDGE)

static doca_error_t bridge_no_verbs(const char *func)
{
	SDK_LOG_ERR("%s: soft devices have no verbs protection domain or memory keys", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_STABLE
doca_error_t doca_rdma_bridge_get_dev_pd(const struct doca_dev *dev, struct ibv_pd **pd)
{
	(void)dev;
	(void)pd;
	return bridge_no_verbs(__func__);
}

DOCA_STABLE
doca_error_t doca_rdma_bridge_open_dev_from_pd(struct ibv_pd *pd, struct doca_dev **dev)
{
	(void)pd;
	(void)dev;
	return bridge_no_verbs(__func__);
}

DOCA_STABLE
doca_error_t doca_rdma_bridge_get_buf_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey)
{
	(void)buf;
	(void)dev;
	(void)mkey;
	return bridge_no_verbs(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_get_mmap_mkey_from_pd(const struct doca_mmap *mmap, struct ibv_pd *pd, uint32_t *mkey)
{
	(void)mmap;
	(void)pd;
	(void)mkey;
	return bridge_no_verbs(__func__);
}
