/*
 * softdoca — DOCA RDMA properties and device capabilities: the
 * doca_rdma_set_* / _get_* pairs (set only while the context is idle)
 * and the doca_rdma_cap_* queries a soft device answers.
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

/* ------------------------------------------------------------------ */
/* Device capabilities                                                */

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (max_recv_queue_size == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*max_recv_queue_size = RDMA_MAX_RECV_QUEUE_SIZE;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_send_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_send_queue_size)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (max_send_queue_size == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*max_send_queue_size = RDMA_MAX_SEND_QUEUE_SIZE;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_send_buf_list_len(const struct doca_devinfo *devinfo,
						     uint32_t *max_send_buf_list_len)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (max_send_buf_list_len == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*max_send_buf_list_len = RDMA_MAX_SEND_BUF_LIST_LEN;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_max_message_size(const struct doca_devinfo *devinfo, uint32_t *max_message_size)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (max_message_size == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*max_message_size = RDMA_MAX_MESSAGE_SIZE;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_gid_table_size(const struct doca_devinfo *devinfo, uint32_t *gid_table_size)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (gid_table_size == NULL)
		return rdma_null_arg(__func__, "output pointer");
	*gid_table_size = softdoca_devinfo_gid_count(devinfo);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_get_gid(const struct doca_devinfo *devinfo, uint32_t start_index, uint32_t num_entries,
				   struct doca_rdma_gid *gid_array)
{
	uint32_t count, i;

	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (gid_array == NULL)
		return rdma_null_arg(__func__, "gid_array");
	count = softdoca_devinfo_gid_count(devinfo);
	if (num_entries == 0 || (uint64_t)start_index + num_entries > count) {
		SDK_LOG_ERR("%s: entries [%u, %u + %u) are not inside the GID table of %u entries", __func__,
			    start_index, start_index, num_entries, count);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (i = 0; i < num_entries; i++) {
		doca_error_t status = softdoca_devinfo_gid(devinfo, start_index + i, gid_array[i].raw);

		if (status != DOCA_SUCCESS)
			return status;
	}
	return DOCA_SUCCESS;
}

static bool rdma_transport_known(enum doca_rdma_transport_type transport_type)
{
	return transport_type == DOCA_RDMA_TRANSPORT_TYPE_RC || transport_type == DOCA_RDMA_TRANSPORT_TYPE_DC;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_cap_transport_type_is_supported(const struct doca_devinfo *devinfo,
						       enum doca_rdma_transport_type transport_type)
{
	if (devinfo == NULL)
		return rdma_null_arg(__func__, "devinfo");
	if (!rdma_transport_known(transport_type)) {
		SDK_LOG_ERR("%s: unknown transport type %d", __func__, (int)transport_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS; /* soft devices carry RC and DC alike */
}

/* ------------------------------------------------------------------ */
/* Properties                                                         */

/* The common guard of every setter. */
static doca_error_t rdma_setter_check(struct doca_rdma *rdma, const char *func)
{
	if (rdma == NULL)
		return rdma_null_arg(func, "rdma");
	if (softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, func) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	return softdoca_ctx_check_idle(&rdma->ctx, func);
}

/* The common guard of every getter. */
static doca_error_t rdma_getter_check(const struct doca_rdma *rdma, const void *out, const char *func)
{
	if (rdma == NULL)
		return rdma_null_arg(func, "rdma");
	if (out == NULL)
		return rdma_null_arg(func, "output pointer");
	return softdoca_live_check(&rdma->ctx, SOFTDOCA_LIVE_CTX, func);
}

static uint32_t rdma_round_up_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_send_queue_size(struct doca_rdma *rdma, uint32_t send_queue_size)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (send_queue_size == 0) {
		SDK_LOG_ERR("%s: send queue size must be at least 1", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (send_queue_size > RDMA_MAX_SEND_QUEUE_SIZE) {
		SDK_LOG_ERR("%s: send queue size %u exceeds the device limit %u", __func__, send_queue_size,
			    RDMA_MAX_SEND_QUEUE_SIZE);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	rdma->props.send_queue_size = rdma_round_up_pow2(send_queue_size);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_recv_queue_size(struct doca_rdma *rdma, uint32_t recv_queue_size)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	(void)recv_queue_size;
	if (status != DOCA_SUCCESS)
		return status;
	/* DOCA 3.x's doca_rdma.h: the property affects only the GPU and DPA
	 * datapaths and the call answers NOT_SUPPORTED on the CPU datapath
	 * (older 2.x headers accepted it). On the CPU datapath receives are
	 * posted to the context, not to one connection (a receive task has no
	 * connection until one completes it), so their bound is per context:
	 * the receive task pool, whose size doca_rdma_get_recv_queue_size
	 * reports; allocating past it is DOCA_ERROR_NO_MEMORY. */
	/* A WARNING, not an ERROR: DOCA documents this answer, and programs
	 * written for several datapaths call it and go on. */
	SDK_LOG_WARN("%s: the receive queue size applies to GPU/DPA datapaths only; on the CPU datapath "
		     "receives are bounded by doca_rdma_task_receive_set_conf",
		     __func__);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_max_send_buf_list_len(struct doca_rdma *rdma, uint32_t max_send_buf_list_len)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (max_send_buf_list_len == 0 || max_send_buf_list_len > RDMA_MAX_SEND_BUF_LIST_LEN) {
		SDK_LOG_ERR("%s: %u is out of range [1, %u]", __func__, max_send_buf_list_len,
			    RDMA_MAX_SEND_BUF_LIST_LEN);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.max_send_buf_list_len = max_send_buf_list_len;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (!rdma_transport_known(transport_type)) {
		SDK_LOG_ERR("%s: unknown transport type %d", __func__, (int)transport_type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.transport_type = transport_type;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_mtu(struct doca_rdma *rdma, enum doca_mtu_size mtu)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	switch (mtu) {
	case DOCA_MTU_SIZE_256_BYTES:
	case DOCA_MTU_SIZE_512_BYTES:
	case DOCA_MTU_SIZE_1K_BYTES:
	case DOCA_MTU_SIZE_2K_BYTES:
	case DOCA_MTU_SIZE_4K_BYTES:
		rdma->props.mtu = mtu;
		return DOCA_SUCCESS;
	default:
		break;
	}
	SDK_LOG_ERR("%s: MTU value %d is not an RDMA path MTU (256 bytes .. 4 KiB)", __func__, (int)mtu);
	return DOCA_ERROR_INVALID_VALUE;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (permissions & ~(uint32_t)RDMA_PERMISSION_BITS) {
		SDK_LOG_ERR("%s: 0x%x holds access flags that are not RDMA access flags (allowed: LOCAL_READ_WRITE, "
			    "RDMA_READ, RDMA_WRITE, RDMA_ATOMIC)",
			    __func__, permissions & ~(uint32_t)RDMA_PERMISSION_BITS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.permissions = permissions;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_grh_enabled(struct doca_rdma *rdma, uint8_t grh_enabled)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (grh_enabled > 1) {
		SDK_LOG_ERR("%s: grh_enabled must be 0 or 1, not %u", __func__, grh_enabled);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.grh_enabled = grh_enabled;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index)
{
	const struct doca_devinfo *devinfo;
	uint32_t count;
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	devinfo = doca_dev_as_devinfo(rdma->ctx.dev);
	count = softdoca_devinfo_gid_count(devinfo);
	if (gid_index >= count) {
		SDK_LOG_ERR("%s: GID index %u is out of range: device %s has %u GID(s)", __func__, gid_index,
			    softdoca_devinfo_ibdev(devinfo), count);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (softdoca_devinfo_gid_type(devinfo, gid_index)[0] == '\0') {
		SDK_LOG_ERR("%s: GID index %u of device %s is empty (its GID table has no GID there; "
			    "/sys/class/infiniband/%s/ports/1/gids lists the ones it has)",
			    __func__, gid_index, softdoca_devinfo_ibdev(devinfo), softdoca_devinfo_ibdev(devinfo));
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.gid_index = gid_index;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_sl(struct doca_rdma *rdma, uint32_t sl)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (sl > RDMA_MAX_SL) {
		SDK_LOG_ERR("%s: service level %u is out of range [0, %u]", __func__, sl, RDMA_MAX_SL);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.sl = sl;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_connection_request_timeout(struct doca_rdma *rdma, uint16_t timeout)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (timeout == 0) {
		SDK_LOG_ERR("%s: a timeout of 0 ms leaves no time to connect", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.request_timeout_ms = timeout;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_max_num_connections(struct doca_rdma *rdma, uint16_t max_num_connections)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	/* DOCA documents NOT_SUPPORTED below the minimum (1). */
	if (max_num_connections == 0) {
		SDK_LOG_ERR("%s: at least 1 connection is needed", __func__);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (max_num_connections > RDMA_MAX_CONNECTIONS) {
		SDK_LOG_ERR("%s: %u connections exceed the limit %u", __func__, max_num_connections,
			    RDMA_MAX_CONNECTIONS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.max_num_connections = max_num_connections;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_rnr_retry_count(struct doca_rdma *rdma, uint8_t rnr_retry_count)
{
	doca_error_t status = rdma_setter_check(rdma, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (rnr_retry_count > RDMA_MAX_RNR_RETRY) {
		SDK_LOG_ERR("%s: %u is out of range [0, %u] (7 retries for ever)", __func__, rnr_retry_count,
			    RDMA_MAX_RNR_RETRY);
		return DOCA_ERROR_INVALID_VALUE;
	}
	rdma->props.rnr_retry_count = rnr_retry_count;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_send_queue_size(const struct doca_rdma *rdma, uint32_t *send_queue_size)
{
	doca_error_t status = rdma_getter_check(rdma, send_queue_size, __func__);

	if (status == DOCA_SUCCESS)
		*send_queue_size = rdma->props.send_queue_size;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_recv_queue_size(const struct doca_rdma *rdma, uint32_t *recv_queue_size)
{
	doca_error_t status = rdma_getter_check(rdma, recv_queue_size, __func__);

	/* On the CPU datapath the receive queue is the receive task pool. */
	if (status == DOCA_SUCCESS)
		*recv_queue_size = rdma->task_types[RDMA_TASK_RECEIVE].num_tasks;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_send_buf_list_len(const struct doca_rdma *rdma, uint32_t *max_send_buf_list_len)
{
	doca_error_t status = rdma_getter_check(rdma, max_send_buf_list_len, __func__);

	if (status == DOCA_SUCCESS)
		*max_send_buf_list_len = rdma->props.max_send_buf_list_len;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_transport_type(const struct doca_rdma *rdma, enum doca_rdma_transport_type *transport_type)
{
	doca_error_t status = rdma_getter_check(rdma, transport_type, __func__);

	if (status == DOCA_SUCCESS)
		*transport_type = rdma->props.transport_type;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_mtu(const struct doca_rdma *rdma, enum doca_mtu_size *mtu)
{
	doca_error_t status = rdma_getter_check(rdma, mtu, __func__);

	if (status == DOCA_SUCCESS)
		*mtu = rdma->props.mtu;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_permissions(struct doca_rdma *rdma, uint32_t *permissions)
{
	doca_error_t status = rdma_getter_check(rdma, permissions, __func__);

	if (status == DOCA_SUCCESS)
		*permissions = rdma->props.permissions;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_grh_enabled(const struct doca_rdma *rdma, uint8_t *grh_enabled)
{
	doca_error_t status = rdma_getter_check(rdma, grh_enabled, __func__);

	if (status == DOCA_SUCCESS)
		*grh_enabled = rdma->props.grh_enabled;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid_index(const struct doca_rdma *rdma, uint32_t *gid_index)
{
	doca_error_t status = rdma_getter_check(rdma, gid_index, __func__);

	if (status == DOCA_SUCCESS)
		*gid_index = rdma->props.gid_index;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_sl(const struct doca_rdma *rdma, uint32_t *sl)
{
	doca_error_t status = rdma_getter_check(rdma, sl, __func__);

	if (status == DOCA_SUCCESS)
		*sl = rdma->props.sl;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_connection_request_timeout(const struct doca_rdma *rdma, uint16_t *timeout)
{
	doca_error_t status = rdma_getter_check(rdma, timeout, __func__);

	if (status == DOCA_SUCCESS)
		*timeout = rdma->props.request_timeout_ms;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_num_connections(struct doca_rdma *rdma, uint16_t *max_num_connections)
{
	doca_error_t status = rdma_getter_check(rdma, max_num_connections, __func__);

	if (status == DOCA_SUCCESS)
		*max_num_connections = rdma->props.max_num_connections;
	return status;
}

DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_rnr_retry_count(const struct doca_rdma *rdma, uint8_t *rnr_retry_count)
{
	doca_error_t status = rdma_getter_check(rdma, rnr_retry_count, __func__);

	if (status == DOCA_SUCCESS)
		*rnr_retry_count = rdma->props.rnr_retry_count;
	return status;
}
