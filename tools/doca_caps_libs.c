/*
 * doca_caps — the per-library capability listing of a device and
 * softdoca's extra rows.
 *
 * Each library softdoca provides has a table of capabilities. A row is
 * named after its cap_* function (library prefix, "is_" and "_supported"
 * dropped, as NVIDIA's tool names its rows) and answered by calling that
 * function, so the listing says exactly what a program asking the same
 * question is told; nothing here is a hard-coded answer. A capability
 * with no cap_* function (anything a soft device adds) goes to the extras.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <doca_clock.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_mmap_advise.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>

#include "dev.h"
#include "doca_caps.h"

void caps_print_row(const char *name, const char *value)
{
	printf(CAPS_INDENT_ROW "%-*s %s\n", CAPS_NAME_WIDTH, name, value);
}

void caps_error_text(doca_error_t err, char *out, size_t len)
{
	if (err == DOCA_ERROR_NOT_SUPPORTED)
		snprintf(out, len, "unsupported");
	else if (err == DOCA_ERROR_NOT_FOUND)
		snprintf(out, len, "none");
	else
		snprintf(out, len, "error: %s", doca_error_get_name(err));
}

/* ---- capability rows ----------------------------------------------------- */

/* How a row's cap_* function answers. */
enum cap_kind {
	CAP_TASK, /* DOCA_SUCCESS: supported, NOT_SUPPORTED: not */
	CAP_FLAG, /* a uint8_t out-value */
	CAP_U32,  /* a limit */
	CAP_U64,  /* a limit */
	CAP_TEXT, /* a query with extra arguments, rendered by its own function */
};

struct cap_row {
	const char *name;
	enum cap_kind kind;
	union {
		doca_error_t (*task)(const struct doca_devinfo *devinfo);
		doca_error_t (*flag)(const struct doca_devinfo *devinfo, uint8_t *value);
		doca_error_t (*u32)(const struct doca_devinfo *devinfo, uint32_t *value);
		doca_error_t (*u64)(const struct doca_devinfo *devinfo, uint64_t *value);
		void (*text)(const struct doca_devinfo *devinfo, char *out, size_t len);
	} query;
};

struct cap_library {
	const char *name; /* as NVIDIA's tool and --list-libs name it */
	const struct cap_row *rows;
	size_t nb_rows;
};

static void answer_task(const struct cap_row *row, const struct doca_devinfo *devinfo, char *out, size_t len)
{
	doca_error_t err = row->query.task(devinfo);

	if (err == DOCA_SUCCESS)
		snprintf(out, len, "supported");
	else
		caps_error_text(err, out, len);
}

static void answer_flag(const struct cap_row *row, const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint8_t yes = 0;
	doca_error_t err = row->query.flag(devinfo, &yes);

	if (err != DOCA_SUCCESS)
		caps_error_text(err, out, len);
	else
		snprintf(out, len, "%s", yes ? "supported" : "unsupported");
}

static void answer_u32(const struct cap_row *row, const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint32_t v = 0;
	doca_error_t err = row->query.u32(devinfo, &v);

	if (err != DOCA_SUCCESS)
		caps_error_text(err, out, len);
	else
		snprintf(out, len, "%" PRIu32, v);
}

static void answer_u64(const struct cap_row *row, const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint64_t v = 0;
	doca_error_t err = row->query.u64(devinfo, &v);

	if (err != DOCA_SUCCESS)
		caps_error_text(err, out, len);
	else
		snprintf(out, len, "%" PRIu64, v);
}

static void answer(const struct cap_row *row, const struct doca_devinfo *devinfo, char *out, size_t len)
{
	switch (row->kind) {
	case CAP_TASK:
		answer_task(row, devinfo, out, len);
		return;
	case CAP_FLAG:
		answer_flag(row, devinfo, out, len);
		return;
	case CAP_U32:
		answer_u32(row, devinfo, out, len);
		return;
	case CAP_U64:
		answer_u64(row, devinfo, out, len);
		return;
	case CAP_TEXT:
		row->query.text(devinfo, out, len);
		return;
	}
	snprintf(out, len, "error: unknown row kind");
}

/* ---- queries that take more than the device ------------------------------ */

static void transport_text(const struct doca_devinfo *devinfo, enum doca_rdma_transport_type type, char *out,
			   size_t len)
{
	doca_error_t err = doca_rdma_cap_transport_type_is_supported(devinfo, type);

	if (err == DOCA_SUCCESS)
		snprintf(out, len, "supported");
	else
		caps_error_text(err, out, len);
}

static void rdma_transport_rc(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	transport_text(devinfo, DOCA_RDMA_TRANSPORT_TYPE_RC, out, len);
}

static void rdma_transport_dc(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	transport_text(devinfo, DOCA_RDMA_TRANSPORT_TYPE_DC, out, len);
}

static void recv_list_text(const struct doca_devinfo *devinfo, enum doca_rdma_transport_type type, char *out,
			   size_t len)
{
	uint32_t v = 0;
	doca_error_t err = doca_rdma_cap_task_receive_get_max_dst_buf_list_len(devinfo, type, &v);

	if (err != DOCA_SUCCESS)
		caps_error_text(err, out, len);
	else
		snprintf(out, len, "%" PRIu32, v);
}

static void rdma_recv_list_rc(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	recv_list_text(devinfo, DOCA_RDMA_TRANSPORT_TYPE_RC, out, len);
}

static void rdma_recv_list_dc(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	recv_list_text(devinfo, DOCA_RDMA_TRANSPORT_TYPE_DC, out, len);
}

/* ---- the libraries ------------------------------------------------------- */

#define TASK(n, f) {n, CAP_TASK, {.task = f}}
#define FLAG(n, f) {n, CAP_FLAG, {.flag = f}}
#define U32(n, f) {n, CAP_U32, {.u32 = f}}
#define U64(n, f) {n, CAP_U64, {.u64 = f}}
#define TEXT(n, f) {n, CAP_TEXT, {.text = f}}
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* DOCA Core: devices, representors, mmaps, contexts, clocks. */
static const struct cap_row common_rows[] = {
	FLAG("hotplug_manager", doca_devinfo_cap_is_hotplug_manager_supported),
	FLAG("notification_moderation", doca_devinfo_cap_is_notification_moderation_supported),
	FLAG("accelerate_resource_reclaim", doca_devinfo_cap_is_accelerate_resource_reclaim_supported),
	FLAG("rep_filter_all", doca_devinfo_rep_cap_is_filter_all_supported),
	FLAG("rep_filter_net", doca_devinfo_rep_cap_is_filter_net_supported),
	FLAG("rep_filter_emulated", doca_devinfo_rep_cap_is_filter_emulated_supported),
	FLAG("mmap_export_pci", doca_mmap_cap_is_export_pci_supported),
	FLAG("mmap_create_from_export_pci", doca_mmap_cap_is_create_from_export_pci_supported),
	TASK("mmap_advise_task_cache_invalidate", doca_mmap_advise_cap_task_cache_invalidate_is_supported),
	U32("ctx_num_completion_vectors", doca_ctx_cap_get_num_completion_vectors),
	TASK("clock_nic_free_running", doca_clock_cap_nic_free_running_is_supported),
	TASK("clock_nic_real_time", doca_clock_cap_nic_real_time_is_supported),
	TASK("clock_nic_dpa_timer", doca_clock_cap_nic_dpa_timer_is_supported),
};

static const struct cap_row dma_rows[] = {
	TASK("task_memcpy", doca_dma_cap_task_memcpy_is_supported),
	U32("task_memcpy_max_buf_list_len", doca_dma_cap_task_memcpy_get_max_buf_list_len),
	U64("task_memcpy_max_buf_size", doca_dma_cap_task_memcpy_get_max_buf_size),
};

static const struct cap_row rdma_rows[] = {
	TEXT("transport_type_rc", rdma_transport_rc),
	TEXT("transport_type_dc", rdma_transport_dc),
	TASK("task_receive", doca_rdma_cap_task_receive_is_supported),
	TEXT("task_receive_max_dst_buf_list_len_rc", rdma_recv_list_rc),
	TEXT("task_receive_max_dst_buf_list_len_dc", rdma_recv_list_dc),
	TASK("task_send", doca_rdma_cap_task_send_is_supported),
	TASK("task_send_imm", doca_rdma_cap_task_send_imm_is_supported),
	TASK("task_read", doca_rdma_cap_task_read_is_supported),
	TASK("task_write", doca_rdma_cap_task_write_is_supported),
	TASK("task_write_imm", doca_rdma_cap_task_write_imm_is_supported),
	TASK("task_atomic_cmp_swp", doca_rdma_cap_task_atomic_cmp_swp_is_supported),
	TASK("task_atomic_fetch_add", doca_rdma_cap_task_atomic_fetch_add_is_supported),
	TASK("task_remote_net_sync_event_get", doca_rdma_cap_task_remote_net_sync_event_get_is_supported),
	TASK("task_remote_net_sync_event_notify_set",
	     doca_rdma_cap_task_remote_net_sync_event_notify_set_is_supported),
	TASK("task_remote_net_sync_event_notify_add",
	     doca_rdma_cap_task_remote_net_sync_event_notify_add_is_supported),
	U32("max_send_queue_size", doca_rdma_cap_get_max_send_queue_size),
	U32("max_recv_queue_size", doca_rdma_cap_get_max_recv_queue_size),
	U32("max_send_buf_list_len", doca_rdma_cap_get_max_send_buf_list_len),
	U32("max_message_size", doca_rdma_cap_get_max_message_size),
	U32("gid_table_size", doca_rdma_cap_get_gid_table_size),
};

static const struct cap_row sync_event_rows[] = {
	TASK("export_to_remote_net", doca_sync_event_cap_is_export_to_remote_net_supported),
	TASK("remote_net_create_from_export", doca_sync_event_cap_remote_net_is_create_from_export_supported),
	TASK("export_to_remote_pci", doca_sync_event_cap_is_export_to_remote_pci_supported),
	TASK("create_from_export", doca_sync_event_cap_is_create_from_export_supported),
	TASK("export_to_dpa", doca_sync_event_cap_is_export_to_dpa_supported),
	TASK("export_to_gpu", doca_sync_event_cap_is_export_to_gpu_supported),
	TASK("remote_net_export_to_dpa", doca_sync_event_cap_remote_net_is_export_to_dpa_supported),
	TASK("remote_net_export_to_gpu", doca_sync_event_cap_remote_net_is_export_to_gpu_supported),
	TASK("task_get", doca_sync_event_cap_task_get_is_supported),
	TASK("task_notify_set", doca_sync_event_cap_task_notify_set_is_supported),
	TASK("task_notify_add", doca_sync_event_cap_task_notify_add_is_supported),
	TASK("task_wait_eq", doca_sync_event_cap_task_wait_eq_is_supported),
	TASK("task_wait_neq", doca_sync_event_cap_task_wait_neq_is_supported),
};

static const struct cap_library libraries[] = {
	{"common", common_rows, COUNT(common_rows)},
	{"dma", dma_rows, COUNT(dma_rows)},
	{"rdma", rdma_rows, COUNT(rdma_rows)},
	{"sync_event", sync_event_rows, COUNT(sync_event_rows)},
};

void caps_print_libraries(const struct doca_devinfo *devinfo)
{
	char value[CAPS_VALUE_LEN];

	for (size_t l = 0; l < COUNT(libraries); l++) {
		printf(CAPS_INDENT_SECTION "%s\n", libraries[l].name);
		for (size_t r = 0; r < libraries[l].nb_rows; r++) {
			answer(&libraries[l].rows[r], devinfo, value, sizeof(value));
			caps_print_row(libraries[l].rows[r].name, value);
		}
	}
}

/* ---- softdoca's extras --------------------------------------------------- */

static void extras_identity(const struct doca_devinfo *devinfo)
{
	char value[CAPS_VALUE_LEN];
	uint64_t rate = 0;
	uint16_t lid = 0;
	doca_error_t err;

	caps_print_row("ibdev_name", softdoca_devinfo_ibdev(devinfo));
	snprintf(value, sizeof(value), "%s (ifindex %u)", softdoca_devinfo_iface(devinfo),
		 softdoca_devinfo_ifindex(devinfo));
	caps_print_row("interface", value);
	caps_print_row("kind", softdoca_devinfo_kind(devinfo) == SOFTDOCA_DEV_KIND_SOFT ?
				       "soft (network interface driven in software)" :
				       "rdma (the kernel's RDMA device; softdoca carries its traffic)");
	err = doca_devinfo_get_active_rate(devinfo, &rate);
	if (err != DOCA_SUCCESS)
		caps_error_text(err, value, sizeof(value));
	else if (rate % 1000000000 == 0)
		snprintf(value, sizeof(value), "%" PRIu64 " Gb/s", rate / 1000000000);
	else
		snprintf(value, sizeof(value), "%" PRIu64 " Mb/s", rate / 1000000);
	caps_print_row("active_rate", value);
	err = doca_devinfo_get_lid(devinfo, &lid);
	if (err != DOCA_SUCCESS)
		caps_error_text(err, value, sizeof(value));
	else
		snprintf(value, sizeof(value), "0x%04x", lid);
	caps_print_row("lid", value);
}

/* The RDMA transports in one row, as the capability queries answer. */
static void extras_transports(const struct doca_devinfo *devinfo)
{
	bool rc = doca_rdma_cap_transport_type_is_supported(devinfo, DOCA_RDMA_TRANSPORT_TYPE_RC) == DOCA_SUCCESS;
	bool dc = doca_rdma_cap_transport_type_is_supported(devinfo, DOCA_RDMA_TRANSPORT_TYPE_DC) == DOCA_SUCCESS;
	char value[CAPS_VALUE_LEN];

	snprintf(value, sizeof(value), "%s%s%s%s", rc ? "RC" : "", rc && dc ? ", " : "", dc ? "DC" : "",
		 !rc && !dc ? "none" : "");
	caps_print_row("transports", value);
	softdoca_engine_data_path(value, sizeof(value));
	if (softdoca_devinfo_kind(devinfo) == SOFTDOCA_DEV_KIND_RDMA)
		snprintf(value + strlen(value), sizeof(value) - strlen(value),
			 "; the RDMA device's own transport is not used yet");
	caps_print_row("data_path", value);
}

/*
 * RDMA CM, one row per device: DOCA has no cap_* query for it, so the row
 * is here and says what softdoca's RDMA CM needs of the device: the RC
 * transport (RDMA CM connects RC only, as in DOCA) and, for
 * doca_rdma_start_listen_to_port, an address of the device to listen on
 * (the server binds every address behind the device's GIDs); a client
 * (doca_rdma_connect_to_addr) needs no address of its own device.
 */
static void extras_rdma_cm(const struct doca_devinfo *devinfo)
{
	uint32_t n = softdoca_devinfo_gid_count(devinfo);
	char value[CAPS_VALUE_LEN];

	if (doca_rdma_cap_transport_type_is_supported(devinfo, DOCA_RDMA_TRANSPORT_TYPE_RC) != DOCA_SUCCESS)
		snprintf(value, sizeof(value), "unsupported (RDMA CM needs the RC transport)");
	else if (n == 0)
		snprintf(value, sizeof(value), "client only (the device has no address to listen on)");
	else
		snprintf(value, sizeof(value), "supported (RC; a server listens on the device's %" PRIu32 " address%s)",
			 n, n == 1 ? "" : "es");
	caps_print_row("rdma_cm", value);
}

/* GID index i as text, and the interface address behind it. */
static int gid_text(const struct doca_devinfo *devinfo, uint32_t i, char *gid_out, char *addr_out)
{
	uint8_t gid[DOCA_GID_BYTE_LENGTH];
	struct sockaddr_storage ss;
	socklen_t len;
	const void *raw;

	if (softdoca_devinfo_gid(devinfo, i, gid) != DOCA_SUCCESS ||
	    softdoca_devinfo_addr(devinfo, i, &ss, &len) != DOCA_SUCCESS)
		return -1;
	inet_ntop(AF_INET6, gid, gid_out, INET6_ADDRSTRLEN);
	raw = ss.ss_family == AF_INET ? (const void *)&((struct sockaddr_in *)&ss)->sin_addr :
					(const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
	inet_ntop(ss.ss_family, raw, addr_out, INET6_ADDRSTRLEN);
	return 0;
}

/* One row per GID: the facts a user reads from /sys/class/infiniband/<dev>/
 * ports/1/gids/<i>, gid_attrs/types/<i> and gid_attrs/ndevs/<i> on a real
 * host to pick -g; NVIDIA's --list-devs shows only the GIDs. A soft
 * device's GIDs are its interface's IP addresses (IPv4 ones IPv4-mapped),
 * which is what a RoCE v2 GID is; an RDMA device's are the kernel's, and
 * its empty entries are not shown. */
static void extras_gid_table(const struct doca_devinfo *devinfo)
{
	char gid[INET6_ADDRSTRLEN];
	char addr[INET6_ADDRSTRLEN];

	printf(CAPS_INDENT_ROW "GID table (port 1; the index is what -g takes):\n");
	printf(CAPS_INDENT_ROW "    %-6s %-40s %-10s %-16s %s\n", "index", "gid", "type", "interface", "address");
	for (uint32_t i = 0; i < softdoca_devinfo_gid_count(devinfo); i++) {
		const char *type = softdoca_devinfo_gid_type(devinfo, i);

		if (type[0] != '\0' && gid_text(devinfo, i, gid, addr) == 0)
			printf(CAPS_INDENT_ROW "    %-6u %-40s %-10s %-16s %s\n", i, gid, type,
			       softdoca_devinfo_iface(devinfo), addr);
	}
}

void caps_print_extras(const struct doca_devinfo *devinfo)
{
	printf(CAPS_INDENT_SECTION "%s\n", CAPS_EXTRAS_HEADING);
	extras_identity(devinfo);
	extras_transports(devinfo);
	extras_rdma_cm(devinfo);
	extras_gid_table(devinfo);
}
