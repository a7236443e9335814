/*
 * doca_caps — show the devices softdoca offers and what they can do, in
 * the layout and with the flags of NVIDIA's doca_caps.
 *
 *   doca_caps                    every device: per-library capabilities,
 *                                then softdoca's extras (GID table, ...)
 *   doca_caps -p 0000:00:01.0    one device, chosen by PCI address
 *   doca_caps --list-devs        one block per PCI address: names, MAC,
 *                                addresses, GIDs
 *   doca_caps --list-rep-devs    each device's representors
 *   doca_caps --list-libs        the DOCA libraries and whether installed
 *   doca_caps --list-loggers     the registered log sources
 *   doca_caps -d soft_lo         softdoca's own: choose by ibdev or
 *                                interface name
 *
 * The command line is this file's; the per-library listing and the extras
 * are doca_caps_libs.c's. Exit status: 0, 1 (a run-time failure or no
 * such device), 2 (a usage error: unknown flag, missing or bad value).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dlfcn.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_rdma.h>
#include <doca_version.h>

#include "dev.h"
#include "doca_caps.h"

#define EXIT_USAGE 2
#define ATTR_WIDTH 22

enum list_flag {
	LIST_DEVS = 1 << 0,
	LIST_REP_DEVS = 1 << 1,
	LIST_LIBS = 1 << 2,
	LIST_LOGGERS = 1 << 3,
};

struct options {
	unsigned int lists;  /* enum list_flag bits; none: capability listing */
	const char *pci;     /* NULL: any PCI address */
	const char *device;  /* NULL: any name (softdoca's -d) */
	bool version;
	bool help;
};

/* ---- device selection ------------------------------------------------------ */

/* Is text a PCI address, "DDDD:BB:DD.F" or "BB:DD.F" in hex? Checked here,
 * before any device is asked, so that a typo is a usage error even on a
 * host with no device. The device itself compares the values. */
static bool pci_text_valid(const char *text)
{
	static const char *const forms[] = {"hhhh:hh:hh.h", "hh:hh.h"};

	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		size_t i;

		if (strlen(text) != strlen(forms[f]))
			continue;
		for (i = 0; forms[f][i] != '\0'; i++)
			if (forms[f][i] == 'h' ? !isxdigit((unsigned char)text[i]) : text[i] != forms[f][i])
				break;
		if (forms[f][i] == '\0')
			return true;
	}
	return false;
}

/* Does devinfo pass the filters? */
static bool device_selected(const struct options *opts, const struct doca_devinfo *devinfo)
{
	uint8_t equal = 0;

	if (opts->device != NULL && strcmp(opts->device, softdoca_devinfo_ibdev(devinfo)) != 0 &&
	    strcmp(opts->device, softdoca_devinfo_iface(devinfo)) != 0)
		return false;
	if (opts->pci == NULL)
		return true;
	return doca_devinfo_is_equal_pci_addr(devinfo, opts->pci, &equal) == DOCA_SUCCESS && equal;
}

static void print_available(struct doca_devinfo **list, uint32_t nb)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

	fprintf(stderr, "available devices:");
	for (uint32_t i = 0; i < nb; i++) {
		if (doca_devinfo_get_pci_addr_str(list[i], pci) != DOCA_SUCCESS)
			snprintf(pci, sizeof(pci), "?");
		fprintf(stderr, " %s (%s)", pci, softdoca_devinfo_ibdev(list[i]));
	}
	fprintf(stderr, nb == 0 ? " none\n" : "\n");
}

/* ---- --list-devs ------------------------------------------------------------- */

static void attr_row(const char *name, const char *value)
{
	printf(CAPS_INDENT_SECTION "%-*s %s\n", ATTR_WIDTH, name, value);
}

/* An IPv6 address or a GID in full: eight groups of four hex digits. */
static void full_ipv6(const uint8_t b[16], char *out, size_t len)
{
	snprintf(out, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static void list_dev_names(const struct doca_devinfo *devinfo)
{
	char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	char value[CAPS_VALUE_LEN];
	doca_error_t err;

	err = doca_devinfo_get_ibdev_name(devinfo, ibdev, sizeof(ibdev));
	if (err != DOCA_SUCCESS)
		caps_error_text(err, ibdev, sizeof(ibdev));
	attr_row("ibdev_name", ibdev);
	err = doca_devinfo_get_iface_name(devinfo, iface, sizeof(iface));
	if (err != DOCA_SUCCESS)
		caps_error_text(err, iface, sizeof(iface));
	attr_row("iface_name", iface);
	/* No DOCA getter for the index; the device's own record has it. */
	snprintf(value, sizeof(value), "%u", softdoca_devinfo_ifindex(devinfo));
	attr_row("iface_index", value);
}

static void list_dev_func_type(const struct doca_devinfo *devinfo)
{
	static const char *const names[] = {"PF", "VF", "SF"};
	enum doca_pci_func_type type;
	char value[CAPS_VALUE_LEN];
	doca_error_t err = doca_devinfo_get_pci_func_type(devinfo, &type);

	if (err != DOCA_SUCCESS)
		caps_error_text(err, value, sizeof(value));
	else if ((unsigned int)type < sizeof(names) / sizeof(names[0]))
		snprintf(value, sizeof(value), "%s", names[type]);
	else
		snprintf(value, sizeof(value), "unknown (%d)", (int)type);
	attr_row("pci_func_type", value);
}

/* MAC and addresses; a missing one reads as zeros, as NVIDIA's tool shows
 * an interface without an IPv4 address. */
static void list_dev_addresses(const struct doca_devinfo *devinfo)
{
	uint8_t mac[DOCA_DEVINFO_MAC_ADDR_SIZE] = {0};
	uint8_t v4[DOCA_DEVINFO_IPV4_ADDR_SIZE] = {0};
	uint8_t v6[DOCA_DEVINFO_IPV6_ADDR_SIZE] = {0};
	char value[CAPS_VALUE_LEN];

	if (doca_devinfo_get_mac_addr(devinfo, mac, sizeof(mac)) != DOCA_SUCCESS)
		memset(mac, 0, sizeof(mac));
	snprintf(value, sizeof(value), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
	attr_row("mac_addr", value);
	if (doca_devinfo_get_ipv4_addr(devinfo, v4, sizeof(v4)) != DOCA_SUCCESS)
		memset(v4, 0, sizeof(v4));
	inet_ntop(AF_INET, v4, value, sizeof(value));
	attr_row("ipv4_addr", value);
	if (doca_devinfo_get_ipv6_addr(devinfo, v6, sizeof(v6)) != DOCA_SUCCESS)
		memset(v6, 0, sizeof(v6));
	full_ipv6(v6, value, sizeof(value));
	attr_row("ipv6_addr", value);
}

static void list_dev_gids(const struct doca_devinfo *devinfo)
{
	struct doca_rdma_gid gid;
	char name[32];
	char value[CAPS_VALUE_LEN];
	uint32_t size = 0;
	doca_error_t err = doca_rdma_cap_get_gid_table_size(devinfo, &size);

	if (err != DOCA_SUCCESS) {
		caps_error_text(err, value, sizeof(value));
		attr_row("gid_table_size", value);
		return;
	}
	snprintf(value, sizeof(value), "%" PRIu32, size);
	attr_row("gid_table_size", value);
	for (uint32_t i = 0; i < size; i++) {
		if (doca_rdma_cap_get_gid(devinfo, i, 1, &gid) != DOCA_SUCCESS)
			continue;
		snprintf(name, sizeof(name), "GID[%" PRIu32 "]", i);
		full_ipv6(gid.raw, value, sizeof(value));
		attr_row(name, value);
	}
}

static void list_dev(const struct doca_devinfo *devinfo, const char *pci)
{
	printf("PCI: %s\n", pci);
	list_dev_names(devinfo);
	list_dev_func_type(devinfo);
	list_dev_addresses(devinfo);
	list_dev_gids(devinfo);
}

/* ---- --list-rep-devs --------------------------------------------------------- */

static void list_rep(struct doca_devinfo_rep *rep)
{
	char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE] = "?";
	char iface[DOCA_DEVINFO_IFACE_NAME_SIZE] = "";
	char vuid[DOCA_DEVINFO_REP_VUID_SIZE] = "";
	enum doca_pci_func_type type = DOCA_PCI_FUNC_TYPE_PF;
	const char *type_name = "?";
	uint8_t hotplug = 0;

	(void)doca_devinfo_rep_get_pci_addr_str(rep, pci);
	(void)doca_devinfo_rep_get_iface_name(rep, iface, sizeof(iface));
	(void)doca_devinfo_rep_get_is_hotplug(rep, &hotplug);
	(void)doca_devinfo_rep_get_vuid(rep, vuid, sizeof(vuid));
	if (doca_devinfo_rep_get_pci_func_type(rep, &type) == DOCA_SUCCESS)
		type_name = type == DOCA_PCI_FUNC_TYPE_PF ? "PF" : type == DOCA_PCI_FUNC_TYPE_VF ? "VF" : "SF";
	printf(CAPS_INDENT_SECTION "PCI: %s\n", pci);
	printf(CAPS_INDENT_ROW "%-*s %s\n", ATTR_WIDTH, "iface_name", iface);
	printf(CAPS_INDENT_ROW "%-*s %s\n", ATTR_WIDTH, "pci_func_type", type_name);
	printf(CAPS_INDENT_ROW "%-*s %s\n", ATTR_WIDTH, "vuid", vuid);
	printf(CAPS_INDENT_ROW "%-*s %u\n", ATTR_WIDTH, "hotplug", hotplug);
}

/* A device's representors, asked for only where the device says it has
 * any. Every soft device does: one per soft device of the host, the
 * functions a BlueField-side program reaches (README "The BlueField side"). */
static int list_rep_devs(struct doca_devinfo *devinfo, const char *pci)
{
	struct doca_devinfo_rep **reps = NULL;
	struct doca_dev *dev = NULL;
	uint8_t has_reps = 0;
	uint32_t nb = 0;
	int rc = 0;

	printf("PCI: %s\n", pci);
	if (doca_devinfo_rep_cap_is_filter_all_supported(devinfo, &has_reps) != DOCA_SUCCESS || !has_reps)
		return 0;
	if (doca_dev_open(devinfo, &dev) != DOCA_SUCCESS) {
		fprintf(stderr, "doca_caps: cannot open %s to list its representors\n", pci);
		return 1;
	}
	if (doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_ALL, &reps, &nb) != DOCA_SUCCESS) {
		fprintf(stderr, "doca_caps: cannot list the representors of %s\n", pci);
		rc = 1;
		goto close;
	}
	for (uint32_t i = 0; i < nb; i++)
		list_rep(reps[i]);
	doca_devinfo_rep_destroy_list(reps);
close:
	doca_dev_close(dev);
	return rc;
}

/* ---- capability listing -------------------------------------------------------- */

static void list_caps(const struct doca_devinfo *devinfo, const char *pci)
{
	printf("PCI: %s\n", pci);
	caps_print_libraries(devinfo);
	caps_print_extras(devinfo);
}

/* ---- --list-libs, --list-loggers ------------------------------------------------- */

/* DOCA's libraries by the name NVIDIA's tool lists them under; whether one
 * is installed is whether the dynamic linker finds it. */
static const char *const doca_libraries[] = {
	"common", "argp", "dma", "rdma", "aes_gcm", "apsh", "comch", "compress", "devemu", "dpa", "dpdk_bridge",
	"erasure_coding", "eth", "flow", "gpunetio", "pcc", "rmax", "sha", "sta", "telemetry_exporter", "urom",
};

static bool library_installed(const char *name)
{
	char soname[64];
	void *handle;

	snprintf(soname, sizeof(soname), "libdoca_%s.so.%d", name, DOCA_VERSION_MAJOR);
	handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (handle == NULL)
		handle = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
	/* Not closed: a library unloaded at once would leave what its
	 * dependencies' constructors allocated (UCX's) unreachable, which a
	 * leak checker reports; the process ends right after the list. */
	return handle != NULL;
}

static void list_libs(void)
{
	for (size_t i = 0; i < sizeof(doca_libraries) / sizeof(doca_libraries[0]); i++)
		printf("%-*s %s\n", CAPS_NAME_WIDTH, doca_libraries[i],
		       library_installed(doca_libraries[i]) ? "installed" : "uninstalled");
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static int list_loggers(void)
{
	struct doca_logger **loggers = NULL;
	char(*names)[DOCA_LOGGER_NAME_SIZE];
	uint32_t nb = 0, kept = 0;
	doca_error_t err = doca_logger_create_list(NULL, 0, &loggers, &nb);

	if (err != DOCA_SUCCESS) {
		fprintf(stderr, "doca_caps: cannot list the loggers: %s\n", doca_error_get_descr(err));
		return 1;
	}
	names = calloc(nb == 0 ? 1 : nb, sizeof(*names));
	if (names == NULL) {
		fprintf(stderr, "doca_caps: out of memory listing %u loggers\n", nb);
		doca_logger_destroy_list(loggers);
		return 1;
	}
	for (uint32_t i = 0; i < nb; i++)
		if (doca_logger_get_name(loggers[i], names[kept]) == DOCA_SUCCESS)
			kept++;
	doca_logger_destroy_list(loggers);
	/* Several files may log under one name: list each name once. */
	qsort(names, kept, sizeof(*names), name_cmp);
	for (uint32_t i = 0; i < kept; i++)
		if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
			printf("%s\n", names[i]);
	free(names);
	return 0;
}

/* ---- running ------------------------------------------------------------------- */

/* The device-wise part of a run: each selected device's block of every
 * listing asked for. */
static int run_devices(const struct options *opts)
{
	struct doca_devinfo **list = NULL;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint32_t nb = 0, found = 0;
	int rc = 0;
	doca_error_t err = doca_devinfo_create_list(&list, &nb);

	if (err != DOCA_SUCCESS) {
		fprintf(stderr, "doca_caps: cannot list devices: %s\n", doca_error_get_descr(err));
		return 1;
	}
	for (uint32_t i = 0; i < nb; i++) {
		if (!device_selected(opts, list[i]))
			continue;
		found++;
		if (doca_devinfo_get_pci_addr_str(list[i], pci) != DOCA_SUCCESS)
			snprintf(pci, sizeof(pci), "?");
		if (opts->lists & LIST_DEVS)
			list_dev(list[i], pci);
		if ((opts->lists & LIST_REP_DEVS) && list_rep_devs(list[i], pci) != 0)
			rc = 1;
		if ((opts->lists & (LIST_DEVS | LIST_REP_DEVS | LIST_LIBS | LIST_LOGGERS)) == 0)
			list_caps(list[i], pci);
	}
	if ((opts->pci != NULL || opts->device != NULL) && found == 0) {
		fprintf(stderr, "doca_caps: no device%s%s%s%s; ", opts->pci ? " at PCI address " : "",
			opts->pci ? opts->pci : "", opts->device ? " named " : "", opts->device ? opts->device : "");
		print_available(list, nb);
		rc = 1;
	}
	doca_devinfo_destroy_list(list);
	return rc;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [options]\n"
		"Show the DOCA devices softdoca offers and what each library can do on them,\n"
		"in the layout of NVIDIA's doca_caps.\n\n"
		"  (no option)              every device: its capabilities per DOCA library,\n"
		"                           then softdoca's extras (GID table with types)\n"
		"  -l, --list-devs          one block per PCI address: ibdev and interface\n"
		"                           names, MAC, IPv4/IPv6 addresses, GIDs\n"
		"  -b, --list-rep-devs      each device's representors (the host's soft devices)\n"
		"      --list-libs          the DOCA libraries, installed or not\n"
		"      --list-loggers       the registered log sources\n"
		"  -p, --pci-addr <addr>    only the device at this PCI address\n"
		"                           (DDDD:BB:DD.F or BB:DD.F)\n"
		"  -d, --device <name>      softdoca's own: only the device with this ibdev or\n"
		"                           interface name (soft_lo, lo)\n"
		"  -v, --version            the DOCA version (as pkg-config --modversion doca\n"
		"                           prints it), then softdoca's own on a second line\n"
		"  -h, --help               this help\n\n"
		"Exit status: 0 success, 1 failure or no such device, 2 usage error.\n"
		"Devices are named soft_<interface>; SOFTDOCA_DEVICES=\"mlx5_0=eth0,...\" renames them.\n",
		prog);
}

/*
 * -v: the DOCA version first, alone on its line and in the form
 * `pkg-config --modversion doca`, <prefix>/applications/VERSION and the
 * DOCA_VERSION_MAJOR/MINOR/PATCH macros give it (major.minor.patch), as
 * NVIDIA's guidance has users compare the four; softdoca's own release on
 * the next line. The DOCA version is the library's (doca_version_runtime),
 * the runtime leg of that comparison: its "3.3.0000" counts the patch in
 * thousands (DOCA_VERSION_CALC), hence the division.
 */
static void print_version(void)
{
	const char *runtime = doca_version_runtime();
	unsigned int major, minor, patch;
	int end = 0;

	if (sscanf(runtime, "%u.%u.%u%n", &major, &minor, &patch, &end) == 3 && runtime[end] == '\0')
		printf("%u.%u.%u\n", major, minor, patch / 1000);
	else
		printf("%s\n", runtime); /* not DOCA's form: shown as it is */
	printf("softdoca %s\n", SOFTDOCA_VERSION_STRING);
}

/* Long-only options. */
enum { OPT_LIST_LIBS = 256, OPT_LIST_LOGGERS };

static int parse_options(int argc, char **argv, struct options *opts)
{
	static const struct option longopts[] = {
		{"list-devs", no_argument, NULL, 'l'},
		{"list-rep-devs", no_argument, NULL, 'b'},
		{"list-libs", no_argument, NULL, OPT_LIST_LIBS},
		{"list-loggers", no_argument, NULL, OPT_LIST_LOGGERS},
		{"pci-addr", required_argument, NULL, 'p'},
		{"device", required_argument, NULL, 'd'},
		{"version", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(opts, 0, sizeof(*opts));
	while ((c = getopt_long(argc, argv, "lbp:d:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			opts->lists |= LIST_DEVS;
			break;
		case 'b':
			opts->lists |= LIST_REP_DEVS;
			break;
		case OPT_LIST_LIBS:
			opts->lists |= LIST_LIBS;
			break;
		case OPT_LIST_LOGGERS:
			opts->lists |= LIST_LOGGERS;
			break;
		case 'p':
			opts->pci = optarg;
			break;
		case 'd':
			opts->device = optarg;
			break;
		case 'v':
			opts->version = true;
			break;
		case 'h':
			opts->help = true;
			break;
		default:
			return -1; /* getopt_long said what was wrong */
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return -1;
	}
	if (opts->pci != NULL && !pci_text_valid(opts->pci)) {
		fprintf(stderr, "%s: '%s' is not a PCI address (DDDD:BB:DD.F or BB:DD.F, hex)\n", argv[0], opts->pci);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options opts;
	int rc = 0;

	if (parse_options(argc, argv, &opts) != 0) {
		fprintf(stderr, "Try '%s --help' for the options.\n", argv[0]);
		return EXIT_USAGE;
	}
	if (opts.help) {
		usage(stdout, argv[0]);
		return 0;
	}
	if (opts.version) {
		print_version();
		return 0;
	}
	/* --list-libs and --list-loggers are about the host, not a device. */
	if (opts.lists == 0 || (opts.lists & (LIST_DEVS | LIST_REP_DEVS)) != 0)
		rc = run_devices(&opts);
	if (opts.lists & LIST_LIBS)
		list_libs();
	if ((opts.lists & LIST_LOGGERS) && list_loggers() != 0)
		rc = 1;
	return rc;
}
