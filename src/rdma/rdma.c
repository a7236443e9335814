/*
 * softdoca — DOCA RDMA context: its life cycle (create, destroy, the
 * context ops that start, progress and stop it) and the entry points a
 * soft device does not support (GPU and DPA datapaths, the verbs bridge).
 * Properties and capabilities are in rdma_props.c, export/connect and
 * connection events in rdma_conn.c, RDMA CM in rdma_cm.c, the tasks in
 * rdma_tasks.c.
 *
 * Start is synchronous: the start op creates the engine worker, so the
 * IDLE -> RUNNING callback fires inside doca_ctx_start and may export and
 * connect at once (the DOCA samples do). Stop flushes the worker; the
 * context reaches IDLE once every flushed task came back through the PE,
 * and only then is the worker destroyed.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_rdma.h>

#include "dev.h"
#include "live.h"
#include "log_internal.h"
#include "rdma.h"

SDK_LOG_REGISTER(RDMA)

doca_error_t rdma_null_arg(const char *func, const char *what)
{
	SDK_LOG_ERR("%s: %s is NULL", func, what);
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t rdma_no_accelerator(const char *func)
{
	SDK_LOG_ERR("%s: soft devices have no GPU or DPA datapath", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t rdma_no_verbs(const char *func)
{
	SDK_LOG_ERR("%s: soft devices have no verbs protection domain or memory keys", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}
/* ------------------------------------------------------------------ */
/* Context ops                                                        */

static void rdma_run_free(struct doca_rdma *rdma)
{
	free(rdma->conns);
	rdma->conns = NULL;
	rdma->num_conns = 0;
	rdma->conns_cap = 0;
	free(rdma->events);
	rdma->events = NULL;
	rdma->events_cap = 0;
	rdma_events_clear(rdma);
}

/* Connection slots and the event ring, sized by max_num_connections. */
static doca_error_t rdma_run_alloc(struct doca_rdma *rdma)
{
	uint16_t max = rdma->props.max_num_connections;

	rdma_run_free(rdma);
	rdma->conns = calloc(max, sizeof(*rdma->conns));
	rdma->events = calloc((size_t)max * RDMA_EVENTS_PER_CONN, sizeof(*rdma->events));
	if (rdma->conns == NULL || rdma->events == NULL) {
		SDK_LOG_ERR("rdma start: no memory for %u connections", max);
		rdma_run_free(rdma);
		return DOCA_ERROR_NO_MEMORY;
	}
	rdma->conns_cap = max;
	rdma->events_cap = (uint32_t)max * RDMA_EVENTS_PER_CONN;
	return DOCA_SUCCESS;
}

/* The kind of GID gid_index names on dev, for descriptors (the peer
 * compares it with its own). */
static uint8_t rdma_gid_type(struct doca_dev *dev, uint32_t gid_index)
{
	const struct doca_devinfo *devinfo = dev != NULL ? doca_dev_as_devinfo(dev) : NULL;
	struct sockaddr_storage sa;
	socklen_t len;

	if (devinfo == NULL || gid_index >= softdoca_devinfo_gid_count(devinfo) ||
	    softdoca_devinfo_addr(devinfo, gid_index, &sa, &len) != DOCA_SUCCESS)
		return ENGINE_GID_UNKNOWN;
	return sa.ss_family == AF_INET ? ENGINE_GID_IPV4 : ENGINE_GID_IPV6;
}

/* Which transport carries the context's traffic, at DEBUG: the question a
 * user of a real RDMA device asks first. */
static void rdma_say_data_path(struct doca_dev *dev)
{
	const struct doca_devinfo *info = doca_dev_as_devinfo(dev);
	char path[160];

	if (!softdoca_log_sdk_enabled(DOCA_LOG_LEVEL_DEBUG))
		return;
	softdoca_engine_data_path(path, sizeof(path));
	SDK_LOG_DBG("rdma start on device %s (interface %s): data path %s%s", softdoca_devinfo_ibdev(info),
		    softdoca_devinfo_iface(info), path,
		    softdoca_devinfo_kind(info) == SOFTDOCA_DEV_KIND_RDMA ?
			    "; the RDMA device's own transport is not used (softdoca carries the traffic)" :
			    "");
}

static doca_error_t rdma_start(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);
	struct engine_worker_conf conf = {
		.dc = rdma->props.transport_type == DOCA_RDMA_TRANSPORT_TYPE_DC,
		.max_connections = rdma->props.max_num_connections,
		.rnr_retry_count = rdma->props.rnr_retry_count,
		.send_queue_size = rdma->props.send_queue_size,
		.permissions = rdma->props.permissions,
		.gid_index = rdma->props.gid_index,
		.gid_type = rdma_gid_type(ctx->dev, rdma->props.gid_index),
		.request_timeout_ms = rdma->props.request_timeout_ms,
		.trace_track = ctx->trace_tid,
		.conn_event = rdma_on_conn_event,
		.arg = rdma,
		.wake = rdma_on_engine_wake,
	};
	doca_error_t status;

	status = rdma_run_alloc(rdma);
	if (status != DOCA_SUCCESS)
		return status;
	rdma->full_explained = false;
	rdma->connect_check_ns = 0;
	status = rdma->engine_ops->worker_create(ctx->dev, &conf, &rdma->worker);
	if (status != DOCA_SUCCESS) {
		SDK_LOG_ERR("rdma start: the soft NIC could not be set up: %s", doca_error_get_descr(status));
		rdma->worker = NULL;
		rdma_run_free(rdma);
		return status;
	}
	rdma_say_data_path(ctx->dev);
	return DOCA_SUCCESS;
}

static void rdma_stop(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);

	/* Every posted receive and outstanding operation completes with an
	 * error through the PE. */
	if (rdma->worker != NULL)
		rdma->engine_ops->worker_flush(rdma->worker);
}

static bool rdma_stop_finished(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);

	return rdma->worker == NULL || rdma->engine_ops->worker_outstanding(rdma->worker) == 0;
}

static void rdma_stopped(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);
	uint16_t i;

	if (rdma->worker != NULL)
		rdma->engine_ops->worker_destroy(rdma->worker);
	rdma->worker = NULL;
	/* The slots stay (the application may still hold pointers to them)
	 * but no longer lead anywhere. */
	for (i = 0; i < rdma->num_conns; i++)
		rdma->conns[i].engine = NULL;
	rdma_events_clear(rdma);
}

static unsigned int rdma_progress(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);
	unsigned int done = 0;

	/* Cleared before the engine runs: a wake from now on asks again. */
	if (unlikely(atomic_load_explicit(&rdma->engine_woken, memory_order_relaxed)))
		atomic_store(&rdma->engine_woken, false);
	if (rdma->worker != NULL)
		done += rdma->engine_ops->worker_progress(rdma->worker);
	if (unlikely(rdma->connect_check_ns != 0))
		rdma_connect_watch(rdma);
	return done;
}

/* Connection events go after the task completions of the same progress
 * call: a task that completed on a connection is reported before that
 * connection's disconnection. */
static unsigned int rdma_deliver(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);

	/* Tasks the completion callbacks submitted go out now, together. */
	if (rdma->worker != NULL)
		rdma->engine_ops->flush_posts(rdma->worker);
	return atomic_load(&rdma->events_count) > 0 ? rdma_deliver_events(rdma) : 0;
}

static bool rdma_has_work(struct doca_ctx *ctx)
{
	struct doca_rdma *rdma = rdma_from_ctx(ctx);

	return atomic_load(&rdma->events_count) > 0 || atomic_load(&rdma->engine_woken);
}

static const struct softdoca_ctx_ops rdma_ctx_ops = {
	.name = "rdma",
	.start = rdma_start,
	.stop = rdma_stop,
	.stop_finished = rdma_stop_finished,
	.stopped = rdma_stopped,
	.progress = rdma_progress,
	.deliver = rdma_deliver,
	.has_work = rdma_has_work,
};

/* ------------------------------------------------------------------ */
/* Create / destroy                                                   */

static void rdma_props_default(struct rdma_props *props)
{
	memset(props, 0, sizeof(*props));
	props->permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;
	props->gid_index = 0;
	props->send_queue_size = RDMA_DEFAULT_SEND_QUEUE_SIZE;
	props->max_send_buf_list_len = RDMA_DEFAULT_BUF_LIST_LEN;
	props->recv_buf_list_len = RDMA_DEFAULT_BUF_LIST_LEN;
	props->sl = 0;
	props->transport_type = DOCA_RDMA_TRANSPORT_TYPE_RC;
	props->mtu = DOCA_MTU_SIZE_1K_BYTES;
	props->max_num_connections = RDMA_DEFAULT_CONNECTIONS;
	props->request_timeout_ms = RDMA_DEFAULT_REQUEST_TIMEOUT_MS;
	props->grh_enabled = 1;
	props->rnr_retry_count = RDMA_DEFAULT_RNR_RETRY;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_create(struct doca_dev *dev, struct doca_rdma **rdma_out)
{
	const struct engine_ops *engine_ops;
	struct doca_rdma *rdma;

	if (dev == NULL)
		return rdma_null_arg(__func__, "dev");
	if (rdma_out == NULL)
		return rdma_null_arg(__func__, "rdma output pointer");
	if (engine_ops_select(&engine_ops) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE; /* engine_ops_select said why */
	rdma = calloc(1, sizeof(*rdma));
	if (rdma == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (pthread_mutex_init(&rdma->events_lock, NULL) != 0) {
		SDK_LOG_ERR("%s: cannot create a mutex", __func__);
		free(rdma);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	atomic_init(&rdma->events_count, 0);
	atomic_init(&rdma->engine_woken, false);
	rdma->engine_ops = engine_ops;
	rdma_props_default(&rdma->props);
	if (softdoca_ctx_init(&rdma->ctx, &rdma_ctx_ops, dev) != DOCA_SUCCESS) {
		/* softdoca_ctx_init said why */
		pthread_mutex_destroy(&rdma->events_lock);
		free(rdma);
		return DOCA_ERROR_NO_MEMORY;
	}
	rdma_tasks_init(rdma);
	*rdma_out = rdma;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_destroy(struct doca_rdma *rdma)
{
	doca_error_t status;

	if (rdma == NULL)
		return rdma_null_arg(__func__, "rdma");
	/* Only the address is computed: a destroyed rdma is not read. */
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	status = softdoca_ctx_fini(&rdma->ctx);
	if (status != DOCA_SUCCESS)
		return status;
	rdma_run_free(rdma);
	pthread_mutex_destroy(&rdma->events_lock);
	free(rdma);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
struct doca_ctx *doca_rdma_as_ctx(struct doca_rdma *rdma)
{
	if (rdma == NULL) {
		(void)rdma_null_arg(__func__, "rdma");
		return NULL;
	}
	return &rdma->ctx;
}

/* ------------------------------------------------------------------ */
/* GPU / DPA datapaths and the verbs bridge: not on soft devices      */

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_prepare_connection(struct doca_rdma *rdma, struct rdma_cm_id *cm_id,
						 struct doca_rdma_connection **rdma_connection)
{
	(void)rdma;
	(void)cm_id;
	(void)rdma_connection;
	return rdma_no_verbs(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_accept(struct doca_rdma *rdma, void *private_data, uint8_t private_data_len,
				     struct doca_rdma_connection *rdma_connection)
{
	(void)rdma;
	(void)private_data;
	(void)private_data_len;
	(void)rdma_connection;
	return rdma_no_verbs(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_established(struct doca_rdma *rdma, struct doca_rdma_connection *rdma_connection)
{
	(void)rdma;
	(void)rdma_connection;
	return rdma_no_verbs(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_dpa_handle(struct doca_rdma *rdma, doca_dpa_dev_rdma_t *dpa_rdma)
{
	(void)rdma;
	(void)dpa_rdma;
	return rdma_no_accelerator(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gpu_handle(struct doca_rdma *rdma, struct doca_gpu_dev_rdma **gpu_rdma)
{
	(void)rdma;
	(void)gpu_rdma;
	return rdma_no_accelerator(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_dpa_completion_attach(struct doca_rdma *rdma, struct doca_dpa_completion *dpa_comp)
{
	(void)rdma;
	(void)dpa_comp;
	return rdma_no_accelerator(__func__);
}
