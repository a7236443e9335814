/*
 * softdoca — DOCA RDMA bridge: ties DOCA objects to the verbs objects of a
 * real RDMA device (its protection domain, memory keys), for programs that
 * mix DOCA with their own verbs code.
 *
 * Soft devices have no verbs protection domain or memory keys, so every
 * call here returns DOCA_ERROR_NOT_SUPPORTED on them.
 */
#ifndef DOCA_RDMA_BRIDGE_H_
#define DOCA_RDMA_BRIDGE_H_

#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_dev;
struct doca_mmap;
/* From libibverbs; only pointers to it are used here. */
struct ibv_pd;

/* The verbs protection domain behind an open device. */
DOCA_STABLE
doca_error_t doca_rdma_bridge_get_dev_pd(const struct doca_dev *dev, struct ibv_pd **pd);

/* Open a (limited) DOCA device on a protection domain the program made. */
DOCA_STABLE
doca_error_t doca_rdma_bridge_open_dev_from_pd(struct ibv_pd *pd, struct doca_dev **dev);

/* The memory key that lets dev reach buf. */
DOCA_STABLE
doca_error_t doca_rdma_bridge_get_buf_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey);

/* The memory key of a started mmap within protection domain pd. */
DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_get_mmap_mkey_from_pd(const struct doca_mmap *mmap, struct ibv_pd *pd, uint32_t *mkey);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_RDMA_BRIDGE_H_ */
