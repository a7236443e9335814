/*
 * softdoca — the UCX link's worker-level calls (link_ucx.c): what the
 * engine's worker and service thread need beyond struct link_ops.
 */
#ifndef SOFTDOCA_ENGINE_LINK_UCX_H_
#define SOFTDOCA_ENGINE_LINK_UCX_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

struct doca_dev;
struct engine_worker;

/* A UCX worker for w on dev's UCX context, limited to the transports
 * tls names (UCX_TLS syntax, made by engine_transports). Sets w->ucx,
 * w->ucp, w->own_addr, w->efd. */
doca_error_t link_ucx_open(struct engine_worker *w, struct doca_dev *dev, const char *tls);
void link_ucx_close(struct engine_worker *w);

/* ucp_worker_progress, and whether the worker armed its event fd
 * (false: events are pending, progress again). */
unsigned int link_ucx_progress(struct engine_worker *w);
bool link_ucx_arm(struct engine_worker *w);

/* The UCX settings two peers must share (WIRE_UCX_* bits), as this
 * process applies them: its environment, else softdoca's defaults. */
uint32_t link_ucx_settings(void);

#endif /* SOFTDOCA_ENGINE_LINK_UCX_H_ */
