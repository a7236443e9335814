/*
 * softdoca — the host's RDMA devices as the kernel lists them.
 *
 * /sys/class/infiniband/<name> is one RDMA device (mlx5_0, rxe0, siw0, any
 * verbs provider). NVIDIA's guidance picks the device and GID there:
 * ports/<port>/gids/<i> is GID i ("fe80:0000:...", all zeros when the
 * entry is empty), gid_attrs/types/<i> its type ("RoCE v2", "IB/RoCE v1")
 * and gid_attrs/ndevs/<i> the netdev it belongs to. dev.c lists each such
 * device under its own name with this table, indices unchanged, so that
 * `-d rxe0 -g 1` means what the guidance says.
 *
 * The files are the kernel's; they are still parsed strictly (a GID is
 * exactly eight groups of four hex digits), and anything else is logged
 * and left out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "dev.h"
#include "dev_sysfs.h"
#include "log_internal.h"

SDK_LOG_REGISTER(DEV_SYSFS);

#define SYSFS_DEFAULT_ROOT "/sys"
#define SYSFS_VALUE_MAX 128 /* longer than any file read here */
#define SYSFS_MAX_PORT 255u
#define GID_TEXT_LEN 39 /* "xxxx:" x 7 + "xxxx" */

static const char *sysfs_root = SYSFS_DEFAULT_ROOT;

void core_sysfs_set_root(const char *root)
{
	sysfs_root = root != NULL ? root : SYSFS_DEFAULT_ROOT;
}

const char *core_gid_type_name(enum core_gid_type type)
{
	switch (type) {
	case CORE_GID_ROCE_V2:
		return "RoCE v2";
	case CORE_GID_IB_ROCE_V1:
		return "IB/RoCE v1";
	case CORE_GID_EMPTY:
		break;
	}
	return "";
}

/* Format a path into out (PATH_MAX bytes); -1 when it does not fit. */
static int pathf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pathf(char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

/* Read a small sysfs file into out (without its trailing newline).
 * Returns 0, or -1 with errno set (ENOENT: no such entry; EINVAL: the
 * kernel has no value, as for an empty GID's type). */
static int read_value(const char *path, char out[SYSFS_VALUE_MAX])
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	n = read(fd, out, SYSFS_VALUE_MAX - 1);
	close(fd);
	if (n < 0)
		return -1;
	out[n] = '\0';
	if (n > 0 && out[n - 1] == '\n')
		out[n - 1] = '\0';
	return 0;
}

/* "fe80:0000:0000:0000:5054:00ff:fe12:3456" -> 16 bytes. */
static int gid_parse(const char *text, uint8_t raw[DOCA_GID_BYTE_LENGTH])
{
	if (strlen(text) != GID_TEXT_LEN)
		return -1;
	for (int group = 0; group < 8; group++) {
		const char *g = text + group * 5;
		int d[4];

		for (int k = 0; k < 4; k++) {
			d[k] = softdoca_hex_digit(g[k]);
			if (d[k] < 0)
				return -1;
		}
		if (group < 7 && g[4] != ':')
			return -1;
		raw[2 * group] = (uint8_t)(d[0] << 4 | d[1]);
		raw[2 * group + 1] = (uint8_t)(d[2] << 4 | d[3]);
	}
	return 0;
}

static int gid_is_zero(const uint8_t raw[DOCA_GID_BYTE_LENGTH])
{
	for (int i = 0; i < DOCA_GID_BYTE_LENGTH; i++)
		if (raw[i] != 0)
			return 0;
	return 1;
}

/* The device's first port: the lowest number under ports/. 0: none. */
static uint32_t first_port(const char *dev_path)
{
	char path[PATH_MAX];
	uint32_t port = 0;
	struct dirent *e;
	DIR *dir;

	if (pathf(path, "%s/ports", dev_path) != 0)
		return 0;
	dir = opendir(path);
	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL) {
		char *end;
		unsigned long v;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		errno = 0;
		v = strtoul(e->d_name, &end, 10);
		if (errno == 0 && *end == '\0' && v <= SYSFS_MAX_PORT && (port == 0 || v < port))
			port = (uint32_t)v;
	}
	closedir(dir);
	return port;
}

/* GID i of the port and its attributes; -1 when the table has ended. */
static int read_gid(const char *dev, const char *port_path, uint32_t i, struct core_sysfs_gid *gid)
{
	char path[PATH_MAX], value[SYSFS_VALUE_MAX];

	memset(gid, 0, sizeof(*gid));
	if (pathf(path, "%s/gids/%u", port_path, i) != 0 || read_value(path, value) != 0)
		return -1;
	if (gid_parse(value, gid->raw) != 0) {
		SDK_LOG_WARN("RDMA device %s: GID %u reads '%.64s', not a GID; entry left empty", dev, i, value);
		return 0;
	}
	if (gid_is_zero(gid->raw))
		return 0;
	if (pathf(path, "%s/gid_attrs/types/%u", port_path, i) != 0 || read_value(path, value) != 0)
		value[0] = '\0';
	if (strcmp(value, "RoCE v2") == 0)
		gid->type = CORE_GID_ROCE_V2;
	else if (strcmp(value, "IB/RoCE v1") == 0)
		gid->type = CORE_GID_IB_ROCE_V1;
	if (gid->type == CORE_GID_EMPTY) {
		SDK_LOG_DBG("RDMA device %s: GID %u has no type softdoca knows; entry left empty", dev, i);
		memset(gid->raw, 0, sizeof(gid->raw));
		return 0;
	}
	/* A netdev name is never "." or ".." (the kernel refuses them). */
	if (pathf(path, "%s/gid_attrs/ndevs/%u", port_path, i) == 0 && read_value(path, value) == 0 &&
	    core_dev_name_valid(value, IF_NAMESIZE) && strcmp(value, ".") != 0 && strcmp(value, "..") != 0)
		strcpy(gid->ndev, value);
	return 0;
}

/* The PCI function behind the device ("0000:03:00.0"), from the name of
 * the device link's target; "" for a virtual device. */
static void read_pci_addr(const char *dev_path, char out[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;
	unsigned int dom, bus, slot, fn;
	char tail;

	out[0] = '\0';
	if (pathf(path, "%s/device", dev_path) != 0)
		return;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base != NULL ? base + 1 : target;
	if (strlen(base) != DOCA_DEVINFO_PCI_ADDR_SIZE - 1 ||
	    sscanf(base, "%4x:%2x:%2x.%1x%c", &dom, &bus, &slot, &fn, &tail) != 4)
		return;
	snprintf(out, DOCA_DEVINFO_PCI_ADDR_SIZE, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
}

/* Read the GID table of the device's first port into d. */
static doca_error_t read_device(const char *dev_path, struct core_sysfs_rdma_dev *d)
{
	char port_path[PATH_MAX];
	struct core_sysfs_gid *gids;
	uint32_t n = 0;

	d->port = first_port(dev_path);
	if (d->port == 0) {
		SDK_LOG_DBG("RDMA device %s has no port; not listed", d->name);
		return DOCA_ERROR_NOT_FOUND;
	}
	gids = calloc(CORE_SYSFS_MAX_GIDS, sizeof(*gids));
	if (gids == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (pathf(port_path, "%s/ports/%u", dev_path, d->port) != 0) {
		free(gids);
		return DOCA_ERROR_NOT_FOUND;
	}
	for (uint32_t i = 0; i < CORE_SYSFS_MAX_GIDS; i++) {
		if (read_gid(d->name, port_path, i, &gids[i]) != 0)
			break;
		if (gids[i].type != CORE_GID_EMPTY) {
			n = i + 1;
			if (d->netdev[0] == '\0')
				strcpy(d->netdev, gids[i].ndev);
		}
	}
	d->gids = gids;
	d->nb_gids = n;
	read_pci_addr(dev_path, d->pci_addr);
	return DOCA_SUCCESS;
}

static int dev_order(const void *a, const void *b)
{
	return strcmp(((const struct core_sysfs_rdma_dev *)a)->name, ((const struct core_sysfs_rdma_dev *)b)->name);
}

void core_sysfs_rdma_devices_free(struct core_sysfs_rdma_dev *devs, uint32_t nb)
{
	for (uint32_t i = 0; i < nb; i++)
		free(devs[i].gids);
	free(devs);
}

doca_error_t core_sysfs_rdma_devices(struct core_sysfs_rdma_dev **devs_out, uint32_t *nb_out)
{
	struct core_sysfs_rdma_dev *devs = NULL;
	char class_path[PATH_MAX];
	doca_error_t err = DOCA_SUCCESS;
	uint32_t nb = 0;
	struct dirent *e;
	DIR *dir;

	*devs_out = NULL;
	*nb_out = 0;
	if (pathf(class_path, "%s/class/infiniband", sysfs_root) != 0)
		return DOCA_SUCCESS;
	dir = opendir(class_path);
	if (dir == NULL)
		return DOCA_SUCCESS; /* no RDMA device, no ib_core: soft devices only */
	while ((e = readdir(dir)) != NULL && err == DOCA_SUCCESS) {
		char dev_path[PATH_MAX];
		struct core_sysfs_rdma_dev *grown;

		if (e->d_name[0] == '.')
			continue;
		if (!core_dev_name_valid(e->d_name, DOCA_DEVINFO_IBDEV_NAME_SIZE)) {
			SDK_LOG_WARN("RDMA device '%.80s' in %s: not a name DOCA can report; not listed", e->d_name,
				     class_path);
			continue;
		}
		grown = realloc(devs, (nb + 1) * sizeof(*grown));
		if (grown == NULL) {
			err = DOCA_ERROR_NO_MEMORY;
			break;
		}
		devs = grown;
		memset(&devs[nb], 0, sizeof(devs[nb]));
		strcpy(devs[nb].name, e->d_name);
		err = pathf(dev_path, "%s/%s", class_path, e->d_name) == 0 ? read_device(dev_path, &devs[nb]) :
										DOCA_ERROR_NOT_FOUND;
		if (err == DOCA_SUCCESS)
			nb++;
		else if (err == DOCA_ERROR_NOT_FOUND)
			err = DOCA_SUCCESS;
	}
	closedir(dir);
	if (err != DOCA_SUCCESS) {
		SDK_LOG_ERR("out of memory reading the RDMA devices in %s", class_path);
		core_sysfs_rdma_devices_free(devs, nb);
		return err;
	}
	if (nb > 1)
		qsort(devs, nb, sizeof(*devs), dev_order);
	*devs_out = devs;
	*nb_out = nb;
	return DOCA_SUCCESS;
}
