/*
 * softdoca — the check that an untrusted UCX worker address is safe to give
 * ucp_ep_create (engine-internal; see ucx_addr.c for what "safe" means).
 */
#ifndef SOFTDOCA_ENGINE_UCX_ADDR_H_
#define SOFTDOCA_ENGINE_UCX_ADDR_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

/* The runtime UCX version as ucx_addr_check wants it, from the numbers
 * ucp_get_version() reports. */
#define UCX_ADDR_UCX_VERSION(major, minor) ((((uint32_t)(major)) << 8) | ((uint32_t)(minor) & 0xffu))

/*
 * Is this untrusted UCX worker address (addr, len) safe to give
 * ucp_ep_create? `local` is our own worker's packed address from
 * ucp_worker_get_address (same UCX build and configuration): it is the
 * template for the transports present here and their address sizes.
 * `ucx_version` is UCX_ADDR_UCX_VERSION() of the UCX library in use.
 *
 * DOCA_SUCCESS: every byte was read and proven well-formed.
 * DOCA_ERROR_INVALID_VALUE: the address is not; one SDK log line names the
 *   offset and the field.
 * DOCA_ERROR_NOT_SUPPORTED: this check does not know the running UCX
 *   version, or our own address is in a format it does not know (UCX's
 *   unified mode); nothing may be connected then.
 * Pure parsing: no UCX call, no allocation, thread-safe.
 */
doca_error_t ucx_addr_check(const void *addr, size_t len, const void *local, size_t local_len,
			    uint32_t ucx_version);

#endif /* SOFTDOCA_ENGINE_UCX_ADDR_H_ */
