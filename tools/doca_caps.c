/*
 * doca_caps — show the devices softdoca offers and what they can do.
 *
 *   doca_caps                  every device, with its capabilities
 *   doca_caps -d soft_lo       one device
 *   doca_caps --list-devs      one line per device
 *   doca_caps --version        softdoca release and DOCA API level
 *
 * The GID table of each device shows, per GID, its index (what the
 * samples' -g takes), the GID, its type and the interface, as sysfs does
 * for a real RDMA port.
 *
 * A device's report is a list of rows, each a name and a function that
 * renders its value; the capability rows live in one table so that other
 * layers' capabilities (RDMA tasks, connection methods) are added as rows.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>
#include <doca_error.h>
#include <doca_version.h>

#include "dev.h"

#define VALUE_LEN 128

/* Renders one value of a device into out. */
typedef void (*row_show_cb_t)(const struct doca_devinfo *devinfo, char *out, size_t len);

struct row {
	const char *name;
	row_show_cb_t show;
};

/* A query's failure, as a value: "not supported", "none", or the error. */
static void show_error(doca_error_t err, char *out, size_t len)
{
	if (err == DOCA_ERROR_NOT_SUPPORTED)
		snprintf(out, len, "not supported");
	else if (err == DOCA_ERROR_NOT_FOUND)
		snprintf(out, len, "none");
	else
		snprintf(out, len, "error: %s", doca_error_get_name(err));
}

/* ---- identity rows ----------------------------------------------------- */

static void show_ibdev(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	snprintf(out, len, "%s", softdoca_devinfo_ibdev(devinfo));
}

static void show_iface(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	snprintf(out, len, "%s (ifindex %u)", softdoca_devinfo_iface(devinfo), softdoca_devinfo_ifindex(devinfo));
}

static void show_kind(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	if (softdoca_devinfo_kind(devinfo) == SOFTDOCA_DEV_KIND_SOFT)
		snprintf(out, len, "soft (network interface driven in software)");
	else
		snprintf(out, len, "rdma");
}

static void show_pci(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	doca_error_t err = doca_devinfo_get_pci_addr_str(devinfo, pci);

	if (err != DOCA_SUCCESS)
		show_error(err, out, len);
	else
		snprintf(out, len, "%s", pci);
}

static void show_func_type(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	static const char *const names[] = {"PF", "VF", "SF"};
	enum doca_pci_func_type type;
	doca_error_t err = doca_devinfo_get_pci_func_type(devinfo, &type);

	if (err != DOCA_SUCCESS)
		show_error(err, out, len);
	else if ((unsigned int)type < sizeof(names) / sizeof(names[0]))
		snprintf(out, len, "%s", names[type]);
	else
		snprintf(out, len, "unknown (%d)", (int)type);
}

static void show_mac(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint8_t m[DOCA_DEVINFO_MAC_ADDR_SIZE];
	doca_error_t err = doca_devinfo_get_mac_addr(devinfo, m, sizeof(m));

	if (err != DOCA_SUCCESS)
		show_error(err, out, len);
	else
		snprintf(out, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void show_rate(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint64_t rate;
	doca_error_t err = doca_devinfo_get_active_rate(devinfo, &rate);

	if (err != DOCA_SUCCESS)
		show_error(err, out, len);
	else if (rate % 1000000000 == 0)
		snprintf(out, len, "%" PRIu64 " Gb/s", rate / 1000000000);
	else
		snprintf(out, len, "%" PRIu64 " Mb/s", rate / 1000000);
}

static void show_lid(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint16_t lid;
	doca_error_t err = doca_devinfo_get_lid(devinfo, &lid);

	if (err != DOCA_SUCCESS)
		show_error(err, out, len);
	else
		snprintf(out, len, "0x%04x", lid);
}

static const struct row identity_rows[] = {
	{"ibdev name", show_ibdev},
	{"interface", show_iface},
	{"kind", show_kind},
	{"pci address", show_pci},
	{"pci function", show_func_type},
	{"mac address", show_mac},
	{"active rate", show_rate},
	{"lid", show_lid},
};

/* ---- capability rows ----------------------------------------------------- */

typedef doca_error_t (*cap_query_cb_t)(const struct doca_devinfo *devinfo, uint8_t *is_supported);

static void show_cap(cap_query_cb_t query, const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint8_t yes = 0;
	doca_error_t err = query(devinfo, &yes);

	if (err != DOCA_SUCCESS)
		show_error(err, out, len);
	else
		snprintf(out, len, "%s", yes ? "supported" : "no");
}

/* A task capability query: DOCA_SUCCESS means supported. */
typedef doca_error_t (*task_cap_cb_t)(const struct doca_devinfo *devinfo);

static void show_task(task_cap_cb_t query, const struct doca_devinfo *devinfo, char *out, size_t len)
{
	doca_error_t err = query(devinfo);

	snprintf(out, len, "%s", err == DOCA_SUCCESS ? "supported" : "no");
}

/* A uint32_t limit query. */
typedef doca_error_t (*limit_cb_t)(const struct doca_devinfo *devinfo, uint32_t *value);

static void show_limit(limit_cb_t query, const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint32_t v;
	doca_error_t err = query(devinfo, &v);

	if (err != DOCA_SUCCESS)
		show_error(err, out, len);
	else
		snprintf(out, len, "%" PRIu32, v);
}

#define TASK_ROW(fn, query) \
	static void fn(const struct doca_devinfo *devinfo, char *out, size_t len) \
	{ \
		show_task(query, devinfo, out, len); \
	}
#define LIMIT_ROW(fn, query) \
	static void fn(const struct doca_devinfo *devinfo, char *out, size_t len) \
	{ \
		show_limit(query, devinfo, out, len); \
	}

TASK_ROW(show_dma_memcpy, doca_dma_cap_task_memcpy_is_supported)
TASK_ROW(show_rdma_receive, doca_rdma_cap_task_receive_is_supported)
TASK_ROW(show_rdma_send, doca_rdma_cap_task_send_is_supported)
TASK_ROW(show_rdma_send_imm, doca_rdma_cap_task_send_imm_is_supported)
TASK_ROW(show_rdma_read, doca_rdma_cap_task_read_is_supported)
TASK_ROW(show_rdma_write, doca_rdma_cap_task_write_is_supported)
TASK_ROW(show_rdma_write_imm, doca_rdma_cap_task_write_imm_is_supported)
TASK_ROW(show_rdma_cas, doca_rdma_cap_task_atomic_cmp_swp_is_supported)
TASK_ROW(show_rdma_fadd, doca_rdma_cap_task_atomic_fetch_add_is_supported)
TASK_ROW(show_rdma_se_get, doca_rdma_cap_task_remote_net_sync_event_get_is_supported)
TASK_ROW(show_rdma_se_set, doca_rdma_cap_task_remote_net_sync_event_notify_set_is_supported)
TASK_ROW(show_rdma_se_add, doca_rdma_cap_task_remote_net_sync_event_notify_add_is_supported)
LIMIT_ROW(show_rdma_sq, doca_rdma_cap_get_max_send_queue_size)
LIMIT_ROW(show_rdma_rq, doca_rdma_cap_get_max_recv_queue_size)
LIMIT_ROW(show_rdma_list, doca_rdma_cap_get_max_send_buf_list_len)
LIMIT_ROW(show_rdma_msg, doca_rdma_cap_get_max_message_size)
LIMIT_ROW(show_rdma_gids, doca_rdma_cap_get_gid_table_size)

static void show_rdma_transports(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	bool rc = doca_rdma_cap_transport_type_is_supported(devinfo, DOCA_RDMA_TRANSPORT_TYPE_RC) == DOCA_SUCCESS;
	bool dc = doca_rdma_cap_transport_type_is_supported(devinfo, DOCA_RDMA_TRANSPORT_TYPE_DC) == DOCA_SUCCESS;

	snprintf(out, len, "%s%s%s", rc ? "RC" : "", rc && dc ? ", " : "", dc ? "DC" : "");
}

static void show_rdma_recv_list(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	uint32_t v;
	doca_error_t err = doca_rdma_cap_task_receive_get_max_dst_buf_list_len(devinfo, DOCA_RDMA_TRANSPORT_TYPE_RC, &v);

	if (err != DOCA_SUCCESS)
		show_error(err, out, len);
	else
		snprintf(out, len, "%" PRIu32, v);
}

static void show_se_export(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	show_task(doca_sync_event_cap_is_export_to_remote_net_supported, devinfo, out, len);
}

static void show_hotplug(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	show_cap(doca_devinfo_cap_is_hotplug_manager_supported, devinfo, out, len);
}

static void show_moderation(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	show_cap(doca_devinfo_cap_is_notification_moderation_supported, devinfo, out, len);
}

static void show_reclaim(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	show_cap(doca_devinfo_cap_is_accelerate_resource_reclaim_supported, devinfo, out, len);
}

static void show_representors(const struct doca_devinfo *devinfo, char *out, size_t len)
{
	show_cap(doca_devinfo_rep_cap_is_filter_all_supported, devinfo, out, len);
}

static const struct row capability_rows[] = {
	{"dma memcpy", show_dma_memcpy},
	{"rdma transports", show_rdma_transports},
	{"rdma receive", show_rdma_receive},
	{"rdma send", show_rdma_send},
	{"rdma send_imm", show_rdma_send_imm},
	{"rdma read", show_rdma_read},
	{"rdma write", show_rdma_write},
	{"rdma write_imm", show_rdma_write_imm},
	{"rdma atomic_cmp_swp", show_rdma_cas},
	{"rdma atomic_fetch_add", show_rdma_fadd},
	{"rdma sync_event get", show_rdma_se_get},
	{"rdma sync_event notify_set", show_rdma_se_set},
	{"rdma sync_event notify_add", show_rdma_se_add},
	{"rdma max send queue size", show_rdma_sq},
	{"rdma max recv queue size", show_rdma_rq},
	{"rdma max send buf list len", show_rdma_list},
	{"rdma max recv buf list len", show_rdma_recv_list},
	{"rdma max message size", show_rdma_msg},
	{"rdma gid table size", show_rdma_gids},
	{"sync event remote export", show_se_export},
	{"hotplug manager", show_hotplug},
	{"notification moderation", show_moderation},
	{"accelerate resource reclaim", show_reclaim},
	{"representors", show_representors},
};

/* ---- printing ------------------------------------------------------------ */

static void print_rows(const struct row *rows, size_t nb, const struct doca_devinfo *devinfo)
{
	char value[VALUE_LEN];

	for (size_t i = 0; i < nb; i++) {
		rows[i].show(devinfo, value, sizeof(value));
		printf("    %-28s %s\n", rows[i].name, value);
	}
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

/* What sysfs gid_attrs/types/<i> would say for GID i. A soft device's GIDs
 * are its interface's IP addresses (IPv4 ones IPv4-mapped), which is what a
 * RoCE v2 GID is. */
static const char *gid_type(const struct doca_devinfo *devinfo)
{
	return softdoca_devinfo_kind(devinfo) == SOFTDOCA_DEV_KIND_SOFT ? "RoCE v2" : "unknown";
}

/* One row per GID, the facts a user reads from /sys/class/infiniband/<dev>/
 * ports/1/gids/<i>, gid_attrs/types/<i> and gid_attrs/ndevs/<i> on a real
 * host to pick -g. */
static void print_gid_table(const struct doca_devinfo *devinfo)
{
	char gid[INET6_ADDRSTRLEN];
	char addr[INET6_ADDRSTRLEN];

	printf("  GID table (port 1; the index is what -g takes):\n");
	printf("    %-6s %-40s %-8s %-16s %s\n", "index", "gid", "type", "interface", "address");
	for (uint32_t i = 0; i < softdoca_devinfo_gid_count(devinfo); i++)
		if (gid_text(devinfo, i, gid, addr) == 0)
			printf("    %-6u %-40s %-8s %-16s %s\n", i, gid, gid_type(devinfo), softdoca_devinfo_iface(devinfo),
			       addr);
}

static void print_device(const struct doca_devinfo *devinfo)
{
	printf("Device %s\n", softdoca_devinfo_ibdev(devinfo));
	printf("  Identity:\n");
	print_rows(identity_rows, sizeof(identity_rows) / sizeof(identity_rows[0]), devinfo);
	print_gid_table(devinfo);
	printf("  Capabilities:\n");
	print_rows(capability_rows, sizeof(capability_rows) / sizeof(capability_rows[0]), devinfo);
}

static void print_device_line(const struct doca_devinfo *devinfo)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE] = "?";
	char gid[INET6_ADDRSTRLEN];
	char addr[INET6_ADDRSTRLEN];

	(void)doca_devinfo_get_pci_addr_str(devinfo, pci);
	printf("%-16s %-16s %-13s", softdoca_devinfo_ibdev(devinfo), softdoca_devinfo_iface(devinfo), pci);
	for (uint32_t i = 0; i < softdoca_devinfo_gid_count(devinfo); i++)
		if (gid_text(devinfo, i, gid, addr) == 0)
			printf("%s%s", i == 0 ? " " : ", ", addr);
	printf("\n");
}

static void print_available(FILE *f, struct doca_devinfo **list, uint32_t nb)
{
	fprintf(f, "available devices:");
	for (uint32_t i = 0; i < nb; i++)
		fprintf(f, " %s", softdoca_devinfo_ibdev(list[i]));
	fprintf(f, nb == 0 ? " none\n" : "\n");
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"Show softdoca devices and their capabilities.\n\n"
		"  -d, --device <ibdev>   report only this device (e.g. soft_lo)\n"
		"  -l, --list-devs        one line per device: name, interface, PCI address, addresses\n"
		"  -v, --version          print softdoca's version and the DOCA API level\n"
		"  -h, --help             this help\n\n"
		"Devices are named soft_<interface>; SOFTDOCA_DEVICES=\"mlx5_0=eth0,...\" renames them.\n",
		prog);
}

enum mode { MODE_REPORT, MODE_LIST, MODE_VERSION, MODE_HELP };

struct options {
	enum mode mode;
	const char *device; /* NULL: every device */
};

static int parse_options(int argc, char **argv, struct options *opts)
{
	static const struct option longopts[] = {
		{"device", required_argument, NULL, 'd'},
		{"list-devs", no_argument, NULL, 'l'},
		{"version", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	opts->mode = MODE_REPORT;
	opts->device = NULL;
	while ((c = getopt_long(argc, argv, "d:lvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			opts->device = optarg;
			break;
		case 'l':
			opts->mode = MODE_LIST;
			break;
		case 'v':
			opts->mode = MODE_VERSION;
			break;
		case 'h':
			opts->mode = MODE_HELP;
			break;
		default:
			return -1; /* getopt_long printed why */
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return -1;
	}
	return 0;
}

static int run_devices(const struct options *opts, const char *prog)
{
	struct doca_devinfo **list = NULL;
	uint32_t nb = 0;
	int found = 0;
	doca_error_t err;

	err = doca_devinfo_create_list(&list, &nb);
	if (err != DOCA_SUCCESS) {
		fprintf(stderr, "%s: cannot list devices: %s\n", prog, doca_error_get_descr(err));
		return 1;
	}
	if (opts->mode == MODE_LIST)
		printf("%-16s %-16s %-13s %s\n", "IBDEV", "INTERFACE", "PCI", "ADDRESSES");
	for (uint32_t i = 0; i < nb; i++) {
		if (opts->device != NULL && strcmp(opts->device, softdoca_devinfo_ibdev(list[i])) != 0)
			continue;
		if (opts->mode == MODE_LIST)
			print_device_line(list[i]);
		else
			print_device(list[i]);
		found++;
	}
	if (opts->device != NULL && found == 0) {
		fprintf(stderr, "%s: no device named '%s'; ", prog, opts->device);
		print_available(stderr, list, nb);
	}
	doca_devinfo_destroy_list(list);
	return (opts->device != NULL && found == 0) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options opts;

	if (parse_options(argc, argv, &opts) != 0) {
		usage(stderr, argv[0]);
		return 1;
	}
	switch (opts.mode) {
	case MODE_HELP:
		usage(stdout, argv[0]);
		return 0;
	case MODE_VERSION:
		printf("softdoca %s\nDOCA API %s\n", SOFTDOCA_VERSION_STRING, DOCA_VERSION_STRING);
		return 0;
	default:
		return run_devices(&opts, argv[0]);
	}
}
