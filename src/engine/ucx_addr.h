/* TEMPORARY placeholder (not to be committed): replaced by the real checker. */
#ifndef SOFTDOCA_ENGINE_UCX_ADDR_H_
#define SOFTDOCA_ENGINE_UCX_ADDR_H_
#include <stddef.h>
#include <doca_error.h>
doca_error_t ucx_addr_check(const void *addr, size_t len, const void *local, size_t local_len);
#endif
