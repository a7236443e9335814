/*
 * softdoca — the engines' ops tables seen from the RDMA layer: the UCX
 * engine's table (its functions are the ones engine.h declares, defined in
 * engine.c, conn.c, cm.c, initiator.c) and the choice of engine a new
 * doca_rdma context makes (SOFTDOCA_ENGINE), with the fault injector
 * (fault.c) in front of it when faults are asked for.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "log_internal.h"

SDK_LOG_REGISTER(ENGINE::OPS)

const struct engine_ops engine_ucx_ops = {
	.name = "ucx",
	.worker_create = engine_worker_create,
	.worker_destroy = engine_worker_destroy,
	.worker_progress = engine_worker_progress,
	.worker_flush = engine_worker_flush,
	.worker_outstanding = engine_worker_outstanding,
	.conn_export = engine_conn_export,
	.conn_connect = engine_conn_connect,
	.conn_disconnect = engine_conn_disconnect,
	.conn_release = engine_conn_release,
	.listen = engine_listen,
	.listen_stop = engine_listen_stop,
	.conn_connect_addr = engine_conn_connect_addr,
	.conn_accept = engine_conn_accept,
	.conn_reject = engine_conn_reject,
	.conn_peer_addr = engine_conn_peer_addr,
	.conn_id = engine_conn_id,
	.conn_set_user = engine_conn_set_user,
	.conn_get_user = engine_conn_get_user,
	.conn_is_usable = engine_conn_is_usable,
	.post = engine_post,
	.post_recv = engine_post_recv,
	.flush_posts = engine_flush_posts,
};

static const struct engine_ops *const engine_all_ops[] = {
	&engine_ucx_ops,
	&engine_loopback_ops,
};

doca_error_t engine_ops_select(const struct engine_ops **ops_out)
{
	const char *name = getenv(ENGINE_ENV);

	if (name == NULL)
		return engine_fault_wrap(&engine_ucx_ops, ops_out);
	for (size_t i = 0; i < sizeof(engine_all_ops) / sizeof(engine_all_ops[0]); i++) {
		if (strcmp(name, engine_all_ops[i]->name) == 0)
			return engine_fault_wrap(engine_all_ops[i], ops_out);
	}
	/* %.32s: the value is the environment's, of any length. */
	SDK_LOG_ERR("%s=\"%.32s\" names no engine: use \"ucx\" (the default) or \"loopback\" (peers in this process "
		    "only, for tests)",
		    ENGINE_ENV, name);
	return DOCA_ERROR_INVALID_VALUE;
}
