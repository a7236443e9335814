/*
 * softdoca — devices.
 *
 * Soft devices. doca_devinfo_create_list takes a snapshot with one device
 * per network interface that has at least one IPv4 or IPv6 address
 * (loopback included), loopback interfaces first, then by interface name.
 *
 * RDMA devices. Then each RDMA device of the host (/sys/class/infiniband,
 * dev_sysfs.c) under its own name ("mlx5_0", "rxe0"), with the kernel's GID
 * table, indices unchanged, sorted by name; its netdev's soft device is
 * left out, so an interface has one device. softdoca's engine still
 * carries its traffic, over the addresses of that table.
 *
 * Names. A soft device's ibdev name is "soft_" followed by its interface
 * name ("soft_lo", "soft_eth0"); interface names are at most 15 characters,
 * so the name always fits DOCA_DEVINFO_IBDEV_NAME_SIZE. The environment
 * variable SOFTDOCA_DEVICES renames devices so that scripts written for real
 * hardware run unchanged: "mlx5_0=eth0,mlx5_1=lo" names the device of eth0
 * "mlx5_0" and that of lo "mlx5_1". A name is 1 to 63 letters, digits, '_',
 * '-' or '.'. Malformed entries, unknown interfaces, a second name for one
 * interface and a name another device already has are logged and ignored.
 *
 * PCI addresses. Soft devices have no PCI function; each gets a made-up
 * address that is stable (it depends only on the interface index) and
 * unique: with the index written in binary as
 *     F(2 bits) DDDD(16 bits) BB(8 bits) DD(5 bits)
 * the address is "DDDD:BB:DD.F". So ifindex 1 is "0000:00:01.0", ifindex 2
 * is "0000:00:02.0", ifindex 40 is "0000:01:08.0". Every soft device is a
 * PF; none has an SF index, a LID (not InfiniBand) or a VHCA id. Every
 * soft device can also be the BlueField side's device: its representors
 * (dev_rep.c) stand for the soft devices of the host.
 *
 * Link rate. Read from /sys/class/net/<iface>/speed when the kernel knows
 * it; otherwise (loopback, virtual interfaces) SOFT_DEFAULT_RATE.
 *
 * Open devices. Opening a device already open (same interface, same name)
 * returns the same struct doca_dev and counts the open; the last close
 * releases it. An open device keeps a reference on its devinfo, so it
 * outlives the list it was opened from. Open devices sit in one registry,
 * which also lets doca_dev_close reject pointers that are not open devices.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dev.h"
#include "log_internal.h"

SDK_LOG_REGISTER(DEV);

#define SOFT_IBDEV_PREFIX "soft_"
#define SOFT_ALIAS_ENV "SOFTDOCA_DEVICES"
/* 100 Gb/s: what a common ConnectX port reports; soft devices copy through
 * memory or a socket, so no figure is exact. */
#define SOFT_DEFAULT_RATE (100ULL * 1000 * 1000 * 1000)

struct doca_dev {
	struct doca_dev *next; /* registry link */
	struct doca_devinfo *devinfo; /* referenced */
	uint32_t open_count; /* guarded by registry_lock */
	atomic_uint holds; /* mmaps, contexts built on the device */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct doca_dev *registry;

/* Log and refuse a NULL argument of API call func. */
static doca_error_t null_arg(const char *func, const char *name)
{
	SDK_LOG_ERR("%s: %s is NULL", func, name);
	return DOCA_ERROR_INVALID_VALUE;
}

/* ---- devinfo objects ------------------------------------------------- */

static void devinfo_ref(struct doca_devinfo *devinfo)
{
	atomic_fetch_add(&devinfo->refcount, 1);
}

static void devinfo_unref(struct doca_devinfo *devinfo)
{
	if (atomic_fetch_sub(&devinfo->refcount, 1) != 1)
		return;
	free(devinfo->addrs);
	free(devinfo);
}

void core_devinfo_ref(struct doca_devinfo *devinfo)
{
	devinfo_ref(devinfo);
}

void core_devinfo_unref(struct doca_devinfo *devinfo)
{
	devinfo_unref(devinfo);
}

/* Scratch list the snapshot is built in. */
struct dev_list {
	struct doca_devinfo **devs;
	uint32_t nb;
};

static void dev_list_clear(struct dev_list *list)
{
	for (uint32_t i = 0; i < list->nb; i++)
		devinfo_unref(list->devs[i]);
	free(list->devs);
	list->devs = NULL;
	list->nb = 0;
}

static struct doca_devinfo *dev_list_find_iface(const struct dev_list *list, const char *iface)
{
	for (uint32_t i = 0; i < list->nb; i++)
		if (strcmp(list->devs[i]->iface_name, iface) == 0)
			return list->devs[i];
	return NULL;
}

/* getifaddrs names an IPv4 address with a label "eth0:1"; the interface is
 * the part before ':' (which a real interface name never contains). */
static int iface_base_name(const char *label, char out[IF_NAMESIZE])
{
	size_t len = strcspn(label, ":");

	if (len == 0 || len >= IF_NAMESIZE)
		return -1;
	memcpy(out, label, len);
	out[len] = '\0';
	return 0;
}

/* The device of interface iface, added to the list if new; NULL when the
 * interface vanished (logged) or memory ran out (*err set). */
static struct doca_devinfo *dev_list_get(struct dev_list *list, const char *iface, unsigned int flags,
					 doca_error_t *err)
{
	struct doca_devinfo *devinfo = dev_list_find_iface(list, iface);
	struct doca_devinfo **grown;
	unsigned int ifindex;

	if (devinfo != NULL)
		return devinfo;

	ifindex = if_nametoindex(iface);
	if (ifindex == 0) {
		SDK_LOG_DBG("interface %s disappeared while listing devices", iface);
		return NULL;
	}
	devinfo = calloc(1, sizeof(*devinfo));
	grown = realloc(list->devs, (list->nb + 1) * sizeof(*grown));
	if (devinfo == NULL || grown == NULL) {
		free(devinfo);
		if (grown != NULL)
			list->devs = grown;
		SDK_LOG_ERR("out of memory listing devices");
		*err = DOCA_ERROR_NO_MEMORY;
		return NULL;
	}
	list->devs = grown;
	atomic_init(&devinfo->refcount, 1);
	devinfo->kind = SOFTDOCA_DEV_KIND_SOFT;
	strcpy(devinfo->iface_name, iface); /* fits: checked by iface_base_name */
	devinfo->ifindex = ifindex;
	devinfo->if_flags = flags;
	list->devs[list->nb++] = devinfo;
	return devinfo;
}

static doca_error_t devinfo_add_addr(struct doca_devinfo *devinfo, const struct sockaddr *sa)
{
	struct softdoca_dev_addr *grown;
	struct softdoca_dev_addr *addr;

	grown = realloc(devinfo->addrs, (devinfo->nb_addrs + 1) * sizeof(*grown));
	if (grown == NULL) {
		SDK_LOG_ERR("out of memory listing addresses of %s", devinfo->iface_name);
		return DOCA_ERROR_NO_MEMORY;
	}
	devinfo->addrs = grown;
	addr = &grown[devinfo->nb_addrs++];
	memset(addr, 0, sizeof(*addr));
	addr->family = sa->sa_family;
	addr->type = CORE_GID_ROCE_V2;
	if (sa->sa_family == AF_INET)
		memcpy(addr->bytes, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else
		memcpy(addr->bytes, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	return DOCA_SUCCESS;
}

/* One pass over the interface addresses, taking those of one family; run
 * for AF_INET then AF_INET6 so that the GID table lists IPv4 first. */
static doca_error_t collect_family(struct dev_list *list, const struct ifaddrs *ifas, sa_family_t family)
{
	doca_error_t err = DOCA_SUCCESS;

	for (const struct ifaddrs *ifa = ifas; ifa != NULL; ifa = ifa->ifa_next) {
		struct doca_devinfo *devinfo;
		char iface[IF_NAMESIZE];

		if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != family)
			continue;
		if (iface_base_name(ifa->ifa_name, iface) != 0) {
			SDK_LOG_DBG("skipping interface with unusable name '%s'", ifa->ifa_name);
			continue;
		}
		devinfo = dev_list_get(list, iface, ifa->ifa_flags, &err);
		if (err != DOCA_SUCCESS)
			return err;
		if (devinfo == NULL)
			continue;
		err = devinfo_add_addr(devinfo, ifa->ifa_addr);
		if (err != DOCA_SUCCESS)
			return err;
	}
	return DOCA_SUCCESS;
}

/* MACs come with the AF_PACKET entries of getifaddrs. Only 6-byte hardware
 * addresses are MACs (loopback's is all zeros; IPoIB's is 20 bytes). */
static void collect_macs(struct dev_list *list, const struct ifaddrs *ifas)
{
	for (const struct ifaddrs *ifa = ifas; ifa != NULL; ifa = ifa->ifa_next) {
		const struct sockaddr_ll *sll = (const struct sockaddr_ll *)ifa->ifa_addr;
		struct doca_devinfo *devinfo;

		if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_PACKET)
			continue;
		devinfo = dev_list_find_iface(list, ifa->ifa_name);
		if (devinfo == NULL || sll->sll_halen != DOCA_DEVINFO_MAC_ADDR_SIZE)
			continue;
		memcpy(devinfo->mac, sll->sll_addr, DOCA_DEVINFO_MAC_ADDR_SIZE);
		devinfo->has_mac = 1;
	}
}

/* Fallback when getifaddrs gave no AF_PACKET entry (some sandboxes). */
static void read_mac_ioctl(struct doca_devinfo *devinfo)
{
	struct ifreq ifr;
	int fd;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", devinfo->iface_name);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0 &&
	    (ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER || ifr.ifr_hwaddr.sa_family == ARPHRD_LOOPBACK)) {
		memcpy(devinfo->mac, ifr.ifr_hwaddr.sa_data, DOCA_DEVINFO_MAC_ADDR_SIZE);
		devinfo->has_mac = 1;
	}
	close(fd);
}

/* Link speed in bits per second, or SOFT_DEFAULT_RATE when unknown. */
static uint64_t read_active_rate(const char *iface)
{
	char path[64 + IF_NAMESIZE];
	long mbps = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", iface);
	f = fopen(path, "re");
	if (f == NULL)
		return SOFT_DEFAULT_RATE;
	if (fscanf(f, "%ld", &mbps) != 1)
		mbps = -1; /* the kernel answers EINVAL when it does not know */
	fclose(f);
	return mbps > 0 ? (uint64_t)mbps * 1000 * 1000 : SOFT_DEFAULT_RATE;
}

/* Made-up PCI address; the scheme is described at the top of this file. */
static void pci_addr_from_ifindex(unsigned int ifindex, char out[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	unsigned int device = ifindex & 0x1f;
	unsigned int bus = (ifindex >> 5) & 0xff;
	unsigned int domain = (ifindex >> 13) & 0xffff;
	unsigned int function = (ifindex >> 29) & 0x3;

	snprintf(out, DOCA_DEVINFO_PCI_ADDR_SIZE, "%04x:%02x:%02x.%x", domain, bus, device, function);
}

static void finish_soft_device(struct doca_devinfo *devinfo)
{
	if (!devinfo->has_mac)
		read_mac_ioctl(devinfo);
	devinfo->active_rate = read_active_rate(devinfo->iface_name);
	pci_addr_from_ifindex(devinfo->ifindex, devinfo->pci_addr);
	snprintf(devinfo->ibdev_name, sizeof(devinfo->ibdev_name), SOFT_IBDEV_PREFIX "%s", devinfo->iface_name);
}

/* Loopback first, then by interface name. */
static int devinfo_order(const void *a, const void *b)
{
	const struct doca_devinfo *x = *(struct doca_devinfo *const *)a;
	const struct doca_devinfo *y = *(struct doca_devinfo *const *)b;
	int x_lo = (x->if_flags & IFF_LOOPBACK) != 0;
	int y_lo = (y->if_flags & IFF_LOOPBACK) != 0;

	if (x_lo != y_lo)
		return y_lo - x_lo;
	return strcmp(x->iface_name, y->iface_name);
}

/* ---- SOFTDOCA_DEVICES aliases ---------------------------------------- */

/* A device or interface name of 1 to max-1 letters, digits, '_', '-' or
 * '.': what an alias may set and what dev_sysfs.c takes from sysfs. */
int core_dev_name_valid(const char *name, size_t max)
{
	size_t len = strlen(name);

	if (len == 0 || len >= max)
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

static struct doca_devinfo *dev_list_find_ibdev(const struct dev_list *list, const char *name)
{
	for (uint32_t i = 0; i < list->nb; i++)
		if (strcmp(list->devs[i]->ibdev_name, name) == 0)
			return list->devs[i];
	return NULL;
}

/* Apply one "name=iface" entry (modified in place). renamed[i] records
 * which devices already got a name from the variable. */
static void apply_alias(struct dev_list *list, char *entry, uint8_t *renamed)
{
	char *eq = strchr(entry, '=');
	struct doca_devinfo *devinfo;
	struct doca_devinfo *holder;
	const char *iface;
	uint32_t idx;

	if (eq == NULL || strchr(eq + 1, '=') != NULL) {
		SDK_LOG_WARN(SOFT_ALIAS_ENV ": entry '%s' is not name=interface, ignored", entry);
		return;
	}
	*eq = '\0';
	iface = eq + 1;
	if (!core_dev_name_valid(entry, DOCA_DEVINFO_IBDEV_NAME_SIZE) || iface[0] == '\0') {
		SDK_LOG_WARN(SOFT_ALIAS_ENV ": entry '%s=%s' needs a name of 1-%d letters, digits, '_', '-', '.' "
			     "and an interface, ignored",
			     entry, iface, DOCA_DEVINFO_IBDEV_NAME_SIZE - 1);
		return;
	}
	devinfo = dev_list_find_iface(list, iface);
	if (devinfo == NULL) {
		SDK_LOG_WARN(SOFT_ALIAS_ENV ": no device for interface '%s' (not present or no IP address), "
			     "'%s=%s' ignored",
			     iface, entry, iface);
		return;
	}
	for (idx = 0; list->devs[idx] != devinfo; idx++)
		;
	holder = dev_list_find_ibdev(list, entry);
	if (renamed[idx] || (holder != NULL && holder != devinfo)) {
		SDK_LOG_WARN(SOFT_ALIAS_ENV ": '%s=%s' ignored: %s", entry, iface,
			     renamed[idx] ? "interface already named" : "name already taken");
		return;
	}
	snprintf(devinfo->ibdev_name, sizeof(devinfo->ibdev_name), "%s", entry);
	renamed[idx] = 1;
	SDK_LOG_DBG("device of %s named %s by " SOFT_ALIAS_ENV, iface, entry);
}

static doca_error_t apply_aliases(struct dev_list *list)
{
	const char *spec = getenv(SOFT_ALIAS_ENV);
	uint8_t *renamed = NULL;
	char *copy = NULL;
	char *save = NULL;
	doca_error_t err = DOCA_SUCCESS;

	if (spec == NULL || spec[0] == '\0')
		return DOCA_SUCCESS;
	copy = strdup(spec);
	renamed = calloc(list->nb + 1, 1);
	if (copy == NULL || renamed == NULL) {
		SDK_LOG_ERR("out of memory reading " SOFT_ALIAS_ENV);
		err = DOCA_ERROR_NO_MEMORY;
		goto free_scratch;
	}
	/* Empty entries (",," or a trailing comma) are skipped by strtok_r. */
	for (char *entry = strtok_r(copy, ",", &save); entry != NULL; entry = strtok_r(NULL, ",", &save))
		apply_alias(list, entry, renamed);

free_scratch:
	free(renamed);
	free(copy);
	return err;
}

/* ---- device lists ---------------------------------------------------- */

static doca_error_t collect_soft_devices(struct dev_list *list)
{
	struct ifaddrs *ifas = NULL;
	doca_error_t err;

	if (getifaddrs(&ifas) != 0) {
		SDK_LOG_ERR("cannot list network interfaces: getifaddrs: %s", strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	err = collect_family(list, ifas, AF_INET);
	if (err == DOCA_SUCCESS)
		err = collect_family(list, ifas, AF_INET6);
	if (err == DOCA_SUCCESS)
		collect_macs(list, ifas);
	freeifaddrs(ifas);
	if (err != DOCA_SUCCESS)
		return err;

	for (uint32_t i = 0; i < list->nb; i++)
		finish_soft_device(list->devs[i]);
	if (list->nb > 1)
		qsort(list->devs, list->nb, sizeof(*list->devs), devinfo_order);
	return DOCA_SUCCESS;
}

/* ---- RDMA devices of the host ------------------------------------------ */

/* A GID as the address the engine binds and connects to. */
static void gid_to_addr(const struct core_sysfs_gid *gid, struct softdoca_dev_addr *addr)
{
	static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	memset(addr, 0, sizeof(*addr));
	addr->family = AF_UNSPEC;
	if (gid->type == CORE_GID_EMPTY)
		return;
	addr->type = gid->type;
	if (memcmp(gid->raw, v4_mapped, sizeof(v4_mapped)) == 0) {
		addr->family = AF_INET;
		memcpy(addr->bytes, gid->raw + 12, 4);
	} else {
		addr->family = AF_INET6;
		memcpy(addr->bytes, gid->raw, 16);
	}
}

/* Drop the soft device of iface from the list: an RDMA device covers it. */
static void dev_list_drop(struct dev_list *list, struct doca_devinfo *devinfo)
{
	for (uint32_t i = 0; i < list->nb; i++) {
		if (list->devs[i] != devinfo)
			continue;
		memmove(&list->devs[i], &list->devs[i + 1], (list->nb - i - 1) * sizeof(*list->devs));
		list->nb--;
		devinfo_unref(devinfo);
		return;
	}
}

/* The devinfo of one RDMA device: its name and GID table from sysfs, its
 * netdev's facts (index, flags, MAC, rate) from the soft device it
 * replaces, or from the interface itself. */
static struct doca_devinfo *rdma_devinfo(struct dev_list *list, const struct core_sysfs_rdma_dev *d)
{
	struct doca_devinfo *devinfo = calloc(1, sizeof(*devinfo));
	struct doca_devinfo *soft = d->netdev[0] != '\0' ? dev_list_find_iface(list, d->netdev) : NULL;

	if (devinfo == NULL)
		return NULL;
	if (d->nb_gids > 0) {
		devinfo->addrs = calloc(d->nb_gids, sizeof(*devinfo->addrs));
		if (devinfo->addrs == NULL) {
			free(devinfo);
			return NULL;
		}
	}
	atomic_init(&devinfo->refcount, 1);
	devinfo->kind = SOFTDOCA_DEV_KIND_RDMA;
	strcpy(devinfo->ibdev_name, d->name); /* same size */
	strcpy(devinfo->iface_name, d->netdev); /* same size */
	for (uint32_t i = 0; i < d->nb_gids; i++)
		gid_to_addr(&d->gids[i], &devinfo->addrs[i]);
	devinfo->nb_addrs = d->nb_gids;
	if (soft != NULL) {
		devinfo->ifindex = soft->ifindex;
		devinfo->if_flags = soft->if_flags;
		devinfo->has_mac = soft->has_mac;
		memcpy(devinfo->mac, soft->mac, sizeof(devinfo->mac));
		devinfo->active_rate = soft->active_rate;
		dev_list_drop(list, soft);
	} else {
		devinfo->ifindex = d->netdev[0] != '\0' ? if_nametoindex(d->netdev) : 0;
		if (devinfo->ifindex != 0)
			read_mac_ioctl(devinfo);
		devinfo->active_rate = d->netdev[0] != '\0' ? read_active_rate(d->netdev) : SOFT_DEFAULT_RATE;
	}
	if (d->pci_addr[0] != '\0')
		strcpy(devinfo->pci_addr, d->pci_addr);
	else
		pci_addr_from_ifindex(devinfo->ifindex, devinfo->pci_addr);
	return devinfo;
}

/* Every RDMA device of the host, after the soft devices; each replaces the
 * soft device of its netdev. */
static doca_error_t collect_rdma_devices(struct dev_list *list)
{
	struct core_sysfs_rdma_dev *devs;
	doca_error_t err;
	uint32_t nb;

	err = core_sysfs_rdma_devices(&devs, &nb);
	if (err != DOCA_SUCCESS)
		return err;
	for (uint32_t i = 0; i < nb && err == DOCA_SUCCESS; i++) {
		struct doca_devinfo **grown = realloc(list->devs, (list->nb + 1) * sizeof(*grown));
		struct doca_devinfo *devinfo;

		if (grown == NULL) {
			err = DOCA_ERROR_NO_MEMORY;
			break;
		}
		list->devs = grown;
		devinfo = rdma_devinfo(list, &devs[i]);
		if (devinfo == NULL) {
			err = DOCA_ERROR_NO_MEMORY;
			break;
		}
		list->devs[list->nb++] = devinfo;
	}
	if (err != DOCA_SUCCESS)
		SDK_LOG_ERR("out of memory listing the RDMA devices");
	core_sysfs_rdma_devices_free(devs, nb);
	return err;
}

DOCA_STABLE
doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs)
{
	struct dev_list list = {NULL, 0};
	struct doca_devinfo **out;
	doca_error_t err;

	if (dev_list == NULL)
		return null_arg(__func__, "dev_list");
	if (nb_devs == NULL)
		return null_arg(__func__, "nb_devs");

	err = collect_soft_devices(&list);
	if (err != DOCA_SUCCESS)
		goto clear_list;
	err = collect_rdma_devices(&list);
	if (err != DOCA_SUCCESS)
		goto clear_list;
	err = apply_aliases(&list);
	if (err != DOCA_SUCCESS)
		goto clear_list;

	/* NULL-terminated, so that destroy_list knows the length. */
	out = realloc(list.devs, (list.nb + 1) * sizeof(*out));
	if (out == NULL) {
		SDK_LOG_ERR("out of memory listing devices");
		err = DOCA_ERROR_NO_MEMORY;
		goto clear_list;
	}
	out[list.nb] = NULL;
	if (list.nb == 0)
		SDK_LOG_WARN("no device: no network interface has an IP address and there is no RDMA device");
	for (uint32_t i = 0; i < list.nb; i++)
		SDK_LOG_DBG("device %s: interface %s, PCI %s, %u address(es)", out[i]->ibdev_name,
			    out[i]->iface_name, out[i]->pci_addr, out[i]->nb_addrs);
	*dev_list = out;
	*nb_devs = list.nb;
	return DOCA_SUCCESS;

clear_list:
	dev_list_clear(&list);
	return err;
}

DOCA_STABLE
doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list)
{
	if (dev_list == NULL)
		return null_arg(__func__, "dev_list");
	for (struct doca_devinfo **it = dev_list; *it != NULL; it++)
		devinfo_unref(*it);
	free(dev_list);
	return DOCA_SUCCESS;
}

/* ---- open devices ---------------------------------------------------- */

static int same_device(const struct doca_devinfo *a, const struct doca_devinfo *b)
{
	return a->kind == b->kind && a->ifindex == b->ifindex && strcmp(a->iface_name, b->iface_name) == 0 &&
	       strcmp(a->ibdev_name, b->ibdev_name) == 0;
}

/* Caller holds registry_lock. */
static struct doca_dev *registry_find(const struct doca_devinfo *devinfo)
{
	for (struct doca_dev *dev = registry; dev != NULL; dev = dev->next)
		if (same_device(dev->devinfo, devinfo))
			return dev;
	return NULL;
}

/* Whether dev is an open device; caller holds registry_lock. */
static int registry_contains(const struct doca_dev *dev)
{
	for (struct doca_dev *it = registry; it != NULL; it = it->next)
		if (it == dev)
			return 1;
	return 0;
}

/* Caller holds registry_lock and knows dev is there. */
static void registry_unlink(struct doca_dev *dev)
{
	struct doca_dev **link = &registry;

	while (*link != dev)
		link = &(*link)->next;
	*link = dev->next;
}

DOCA_STABLE
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev)
{
	struct doca_dev *opened;
	doca_error_t err = DOCA_SUCCESS;

	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	if (dev == NULL)
		return null_arg(__func__, "dev");

	pthread_mutex_lock(&registry_lock);
	opened = registry_find(devinfo);
	if (opened != NULL) {
		if (opened->open_count == UINT32_MAX) {
			SDK_LOG_ERR("%s: device %s is open too many times", __func__, devinfo->ibdev_name);
			err = DOCA_ERROR_INITIALIZATION;
			goto unlock;
		}
		opened->open_count++;
		goto unlock;
	}
	opened = calloc(1, sizeof(*opened));
	if (opened == NULL) {
		SDK_LOG_ERR("%s: out of memory opening %s", __func__, devinfo->ibdev_name);
		err = DOCA_ERROR_NO_MEMORY;
		goto unlock;
	}
	devinfo_ref(devinfo);
	opened->devinfo = devinfo;
	opened->open_count = 1;
	atomic_init(&opened->holds, 0);
	opened->next = registry;
	registry = opened;
	SDK_LOG_DBG("opened device %s", devinfo->ibdev_name);

unlock:
	pthread_mutex_unlock(&registry_lock);
	if (err == DOCA_SUCCESS)
		*dev = opened;
	return err;
}

DOCA_STABLE
doca_error_t doca_dev_close(struct doca_dev *dev)
{
	struct doca_devinfo *release = NULL;
	doca_error_t err = DOCA_SUCCESS;

	/* Closing nothing succeeds, as free(NULL): doca_dev.h lists no
	 * INVALID_VALUE for doca_dev_close (only IN_USE), and NVIDIA's
	 * dma_copy_dpu and dma_local_copy call it with the pointer that
	 * destroy_core_objects already closed and cleared (samples/common.c
	 * sets state->dev = NULL; doca_dma/dma_common.c destroy_dma_resources
	 * then closes state.dev). A stale non-NULL pointer is still refused. */
	if (dev == NULL) {
		SDK_LOG_DBG("%s: dev is NULL: nothing to close", __func__);
		return DOCA_SUCCESS;
	}

	pthread_mutex_lock(&registry_lock);
	if (!registry_contains(dev)) {
		SDK_LOG_ERR("%s: %p is not an open device (closed already?)", __func__, (void *)dev);
		err = DOCA_ERROR_INVALID_VALUE;
		goto unlock;
	}
	if (dev->open_count == 1 && atomic_load(&dev->holds) != 0) {
		SDK_LOG_ERR("%s: device %s is still used by %u mmap(s)/context(s); destroy them first", __func__,
			    dev->devinfo->ibdev_name, atomic_load(&dev->holds));
		err = DOCA_ERROR_IN_USE;
		goto unlock;
	}
	if (--dev->open_count == 0) {
		registry_unlink(dev);
		release = dev->devinfo;
	}

unlock:
	pthread_mutex_unlock(&registry_lock);
	if (release != NULL) {
		SDK_LOG_DBG("closed device %s", release->ibdev_name);
		devinfo_unref(release);
		free(dev);
	}
	return err;
}

DOCA_STABLE
struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev)
{
	if (dev == NULL) {
		SDK_LOG_ERR("%s: dev is NULL", __func__);
		return NULL;
	}
	return dev->devinfo;
}

doca_error_t core_dev_pci_addr(const struct doca_dev *dev, char out[DOCA_DEVINFO_PCI_ADDR_SIZE])
{
	doca_error_t err = DOCA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&registry_lock);
	if (registry_contains(dev)) {
		memcpy(out, dev->devinfo->pci_addr, DOCA_DEVINFO_PCI_ADDR_SIZE);
		err = DOCA_SUCCESS;
	}
	pthread_mutex_unlock(&registry_lock);
	return err;
}

SOFTDOCA_EXPORT void softdoca_dev_hold(struct doca_dev *dev)
{
	if (dev != NULL)
		atomic_fetch_add(&dev->holds, 1);
}

SOFTDOCA_EXPORT void softdoca_dev_release(struct doca_dev *dev)
{
	unsigned int holds;

	if (dev == NULL)
		return;
	holds = atomic_load(&dev->holds);
	do {
		if (holds == 0) {
			SDK_LOG_ERR("%s: device %s released more often than held", __func__,
				    dev->devinfo->ibdev_name);
			return;
		}
	} while (!atomic_compare_exchange_weak(&dev->holds, &holds, holds - 1));
}

/* ---- identity getters ------------------------------------------------ */

/* Copy a NUL-terminated name into a caller buffer of size bytes. */
static doca_error_t copy_name(const char *func, const char *name, char *out, uint32_t size)
{
	size_t need = strlen(name) + 1;

	if (out == NULL)
		return null_arg(func, "output buffer");
	if (size < need) {
		SDK_LOG_ERR("%s: buffer of %u bytes is too small for '%s' (%zu bytes needed)", func, size, name,
			    need);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(out, name, need);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	return copy_name(__func__, devinfo->iface_name, iface_name, size);
}

DOCA_STABLE
doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	return copy_name(__func__, devinfo->ibdev_name, ibdev_name, size);
}

DOCA_STABLE
doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	if (pci_addr_str == NULL)
		return null_arg(__func__, "pci_addr_str");
	memcpy(pci_addr_str, devinfo->pci_addr, DOCA_DEVINFO_PCI_ADDR_SIZE);
	return DOCA_SUCCESS;
}

struct pci_addr {
	uint32_t domain;
	uint32_t bus;
	uint32_t device;
	uint32_t function;
};

/* Exactly n hex digits. */
static int parse_hex(const char *s, size_t n, uint32_t *out)
{
	uint32_t v = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		uint32_t digit;

		if (c >= '0' && c <= '9')
			digit = (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			digit = (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			digit = (uint32_t)(c - 'A' + 10);
		else
			return -1;
		v = v << 4 | digit;
	}
	*out = v;
	return 0;
}

/* Strict parse of "DDDD:BB:DD.F" or "BB:DD.F" (domain 0): fixed widths,
 * hex digits, device 0-1f, function 0-7. */
static int pci_addr_parse(const char *s, struct pci_addr *out)
{
	size_t len = strnlen(s, DOCA_DEVINFO_PCI_ADDR_SIZE);
	struct pci_addr a = {0, 0, 0, 0};

	if (len == DOCA_DEVINFO_PCI_ADDR_SIZE - 1) {
		if (parse_hex(s, 4, &a.domain) != 0 || s[4] != ':')
			return -1;
		s += 5;
	} else if (len != DOCA_DEVINFO_PCI_BDF_SIZE - 1) {
		return -1;
	}
	if (parse_hex(s, 2, &a.bus) != 0 || s[2] != ':' || parse_hex(s + 3, 2, &a.device) != 0 || s[5] != '.' ||
	    parse_hex(s + 6, 1, &a.function) != 0)
		return -1;
	if (a.device > 0x1f || a.function > 7)
		return -1;
	*out = a;
	return 0;
}

static int pci_addr_equal(const struct pci_addr *a, const struct pci_addr *b)
{
	return a->domain == b->domain && a->bus == b->bus && a->device == b->device && a->function == b->function;
}

doca_error_t core_pci_addr_compare(const char *func, const char *name, const char *own, const char *wanted,
				   uint8_t *is_equal)
{
	struct pci_addr want;
	struct pci_addr have;

	if (pci_addr_parse(wanted, &want) != 0) {
		SDK_LOG_ERR("%s: '%.*s' is not a PCI address (expected DDDD:BB:DD.F or BB:DD.F in hex)", func,
			    DOCA_DEVINFO_PCI_ADDR_SIZE, wanted);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (pci_addr_parse(own, &have) != 0) {
		SDK_LOG_ERR("%s: %s has a malformed PCI address '%s'", func, name, own);
		return DOCA_ERROR_UNEXPECTED;
	}
	*is_equal = (uint8_t)pci_addr_equal(&want, &have);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo, const char *pci_addr_str,
					    uint8_t *is_equal)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	if (pci_addr_str == NULL)
		return null_arg(__func__, "pci_addr_str");
	if (is_equal == NULL)
		return null_arg(__func__, "is_equal");
	return core_pci_addr_compare(__func__, devinfo->ibdev_name, devinfo->pci_addr, pci_addr_str, is_equal);
}

/* First address of one family, in GID order. */
static doca_error_t copy_first_addr(const char *func, const struct doca_devinfo *devinfo, sa_family_t family,
				    uint8_t *out, uint32_t size)
{
	uint32_t need = family == AF_INET ? DOCA_DEVINFO_IPV4_ADDR_SIZE : DOCA_DEVINFO_IPV6_ADDR_SIZE;
	const char *fam = family == AF_INET ? "IPv4" : "IPv6";

	if (devinfo == NULL)
		return null_arg(func, "devinfo");
	if (out == NULL)
		return null_arg(func, "output buffer");
	if (size < need) {
		SDK_LOG_ERR("%s: buffer of %u bytes is too small for an %s address (%u bytes)", func, size, fam,
			    need);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (uint32_t i = 0; i < devinfo->nb_addrs; i++) {
		if (devinfo->addrs[i].family == family) {
			memcpy(out, devinfo->addrs[i].bytes, need);
			return DOCA_SUCCESS;
		}
	}
	/* An answer, not a caller mistake: info level. */
	SDK_LOG_INFO("%s: interface %s has no %s address", func, devinfo->iface_name, fam);
	return DOCA_ERROR_NOT_FOUND;
}

DOCA_STABLE
doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size)
{
	return copy_first_addr(__func__, devinfo, AF_INET, ipv4_addr, size);
}

DOCA_STABLE
doca_error_t doca_devinfo_get_ipv6_addr(const struct doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size)
{
	return copy_first_addr(__func__, devinfo, AF_INET6, ipv6_addr, size);
}

DOCA_STABLE
doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	if (mac_addr == NULL)
		return null_arg(__func__, "mac_addr");
	if (size < DOCA_DEVINFO_MAC_ADDR_SIZE) {
		SDK_LOG_ERR("%s: buffer of %u bytes is too small for a MAC address (%d bytes)", __func__, size,
			    DOCA_DEVINFO_MAC_ADDR_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!devinfo->has_mac) {
		SDK_LOG_INFO("%s: interface %s has no MAC address", __func__, devinfo->iface_name);
		return DOCA_ERROR_NOT_FOUND;
	}
	memcpy(mac_addr, devinfo->mac, DOCA_DEVINFO_MAC_ADDR_SIZE);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_devinfo_get_pci_func_type(const struct doca_devinfo *devinfo,
					    enum doca_pci_func_type *pci_func_type)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	if (pci_func_type == NULL)
		return null_arg(__func__, "pci_func_type");
	*pci_func_type = DOCA_PCI_FUNC_TYPE_PF;
	return DOCA_SUCCESS;
}

/* Validate (devinfo, out) and refuse a query soft devices cannot answer.
 * NOT_SUPPORTED answers a question, it is no caller mistake: logged at
 * info level, so tools that probe every query stay quiet by default. */
static doca_error_t soft_unsupported(const char *func, const struct doca_devinfo *devinfo, const void *out,
				     const char *why)
{
	if (devinfo == NULL)
		return null_arg(func, "devinfo");
	if (out == NULL)
		return null_arg(func, "output");
	SDK_LOG_INFO("%s: not supported by %s: %s", func, devinfo->ibdev_name, why);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_STABLE
doca_error_t doca_devinfo_get_sf_index(const struct doca_devinfo *devinfo, uint32_t *sf_index)
{
	return soft_unsupported(__func__, devinfo, sf_index, "a soft device is a PF, not an SF");
}

DOCA_STABLE
doca_error_t doca_devinfo_get_lid(const struct doca_devinfo *devinfo, uint16_t *lid)
{
	return soft_unsupported(__func__, devinfo, lid, "a soft device is Ethernet-like, LIDs are InfiniBand only");
}

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_vhca_id(const struct doca_devinfo *devinfo, uint16_t *vhca_id)
{
	return soft_unsupported(__func__, devinfo, vhca_id, "a soft device has no virtual HCA");
}

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_active_rate(const struct doca_devinfo *devinfo, uint64_t *active_rate)
{
	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	if (active_rate == NULL)
		return null_arg(__func__, "active_rate");
	*active_rate = devinfo->active_rate;
	return DOCA_SUCCESS;
}

/* ---- capability queries --------------------------------------------- */

/* Answer a yes/no capability query. */
static doca_error_t cap_answer(const char *func, const struct doca_devinfo *devinfo, uint8_t *out, uint8_t yes)
{
	if (devinfo == NULL)
		return null_arg(func, "devinfo");
	if (out == NULL)
		return null_arg(func, "output");
	*out = yes;
	return DOCA_SUCCESS;
}

static doca_error_t cap_no(const char *func, const struct doca_devinfo *devinfo, uint8_t *out)
{
	return cap_answer(func, devinfo, out, 0);
}

DOCA_STABLE
doca_error_t doca_devinfo_cap_is_hotplug_manager_supported(const struct doca_devinfo *devinfo,
							   uint8_t *is_hotplug_manager)
{
	return cap_no(__func__, devinfo, is_hotplug_manager);
}

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_cap_is_notification_moderation_supported(const struct doca_devinfo *devinfo,
								   uint8_t *is_supported)
{
	return cap_no(__func__, devinfo, is_supported);
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_all_supported(const struct doca_devinfo *devinfo,
							  uint8_t *filter_all_supported)
{
	return cap_answer(__func__, devinfo, filter_all_supported, 1); /* representors: dev_rep.c */
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_net_supported(const struct doca_devinfo *devinfo,
							  uint8_t *filter_net_supported)
{
	return cap_answer(__func__, devinfo, filter_net_supported, 1); /* representors: dev_rep.c */
}

DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_emulated_supported(const struct doca_devinfo *devinfo,
							       uint8_t *filter_emulated_supported)
{
	return cap_answer(__func__, devinfo, filter_emulated_supported, 1); /* representors: dev_rep.c */
}

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_cap_is_accelerate_resource_reclaim_supported(const struct doca_devinfo *devinfo,
									uint8_t *is_supported)
{
	return cap_no(__func__, devinfo, is_supported);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dev_accelerate_resource_reclaim(struct doca_dev *dev)
{
	if (dev == NULL)
		return null_arg(__func__, "dev");
	SDK_LOG_INFO("%s: not supported by %s (a soft device has nothing to reclaim faster)", __func__,
		    dev->devinfo->ibdev_name);
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* ---- internal getters for rdma, engine and tools ---------------------- */

SOFTDOCA_EXPORT enum softdoca_dev_kind softdoca_devinfo_kind(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? SOFTDOCA_DEV_KIND_SOFT : devinfo->kind;
}

SOFTDOCA_EXPORT const char *softdoca_devinfo_iface(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? "" : devinfo->iface_name;
}

SOFTDOCA_EXPORT const char *softdoca_devinfo_ibdev(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? "" : devinfo->ibdev_name;
}

SOFTDOCA_EXPORT unsigned int softdoca_devinfo_ifindex(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? 0 : devinfo->ifindex;
}

SOFTDOCA_EXPORT uint32_t softdoca_devinfo_gid_count(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? 0 : devinfo->nb_addrs;
}

static doca_error_t check_gid_index(const char *func, const struct doca_devinfo *devinfo, uint32_t index)
{
	if (devinfo == NULL)
		return null_arg(func, "devinfo");
	if (index >= devinfo->nb_addrs) {
		SDK_LOG_ERR("%s: GID index %u out of range: device %s has %u GID(s)", func, index,
			    devinfo->ibdev_name, devinfo->nb_addrs);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* An address as a GID: IPv6 as is, IPv4 as ::ffff:a.b.c.d. */
static void addr_to_gid(const struct softdoca_dev_addr *addr, uint8_t gid[DOCA_GID_BYTE_LENGTH])
{
	if (addr->family == AF_INET6) {
		memcpy(gid, addr->bytes, DOCA_GID_BYTE_LENGTH);
		return;
	}
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, addr->bytes, 4);
}

SOFTDOCA_EXPORT doca_error_t softdoca_devinfo_gid(const struct doca_devinfo *devinfo, uint32_t index,
						  uint8_t gid_out[DOCA_GID_BYTE_LENGTH])
{
	doca_error_t err = check_gid_index(__func__, devinfo, index);

	if (err != DOCA_SUCCESS)
		return err;
	if (gid_out == NULL)
		return null_arg(__func__, "gid_out");
	if (devinfo->addrs[index].family == AF_UNSPEC) {
		memset(gid_out, 0, DOCA_GID_BYTE_LENGTH); /* what sysfs and ibv_query_gid say */
		return DOCA_SUCCESS;
	}
	addr_to_gid(&devinfo->addrs[index], gid_out);
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT const char *softdoca_devinfo_gid_type(const struct doca_devinfo *devinfo, uint32_t index)
{
	if (devinfo == NULL || index >= devinfo->nb_addrs || devinfo->addrs[index].family == AF_UNSPEC)
		return "";
	return core_gid_type_name(devinfo->addrs[index].type);
}

SOFTDOCA_EXPORT doca_error_t softdoca_devinfo_addr(const struct doca_devinfo *devinfo, uint32_t index,
						   struct sockaddr_storage *addr_out, socklen_t *len_out)
{
	const struct softdoca_dev_addr *addr;
	doca_error_t err = check_gid_index(__func__, devinfo, index);

	if (err != DOCA_SUCCESS)
		return err;
	if (addr_out == NULL)
		return null_arg(__func__, "addr_out");
	if (len_out == NULL)
		return null_arg(__func__, "len_out");

	addr = &devinfo->addrs[index];
	if (addr->family == AF_UNSPEC)
		return DOCA_ERROR_NOT_FOUND; /* an empty entry; callers that care say so */
	memset(addr_out, 0, sizeof(*addr_out));
	if (addr->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)addr_out;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, addr->bytes, 4);
		*len_out = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr_out;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, addr->bytes, 16);
		/* A link-local address means nothing without its interface. */
		if (IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr))
			sin6->sin6_scope_id = devinfo->ifindex;
		*len_out = sizeof(*sin6);
	}
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_devinfo_gid_find(const struct doca_devinfo *devinfo,
						       const uint8_t gid[DOCA_GID_BYTE_LENGTH], uint32_t *index_out)
{
	uint8_t own[DOCA_GID_BYTE_LENGTH];

	if (devinfo == NULL)
		return null_arg(__func__, "devinfo");
	if (gid == NULL)
		return null_arg(__func__, "gid");
	if (index_out == NULL)
		return null_arg(__func__, "index_out");
	for (uint32_t i = 0; i < devinfo->nb_addrs; i++) {
		if (devinfo->addrs[i].family == AF_UNSPEC)
			continue;
		addr_to_gid(&devinfo->addrs[i], own);
		if (memcmp(own, gid, DOCA_GID_BYTE_LENGTH) == 0) {
			*index_out = i;
			return DOCA_SUCCESS;
		}
	}
	/* Not an error worth a log line: callers probe several devices. */
	return DOCA_ERROR_NOT_FOUND;
}
