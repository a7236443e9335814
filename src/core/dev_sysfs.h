/*
 * softdoca — the host's RDMA devices as the kernel lists them
 * (/sys/class/infiniband), read for the device list (dev.c). Internal.
 */
#ifndef SOFTDOCA_CORE_DEV_SYSFS_H_
#define SOFTDOCA_CORE_DEV_SYSFS_H_

#include <net/if.h>
#include <stdint.h>

#include <doca_dev.h>
#include <doca_types.h>

/* GID table entries read per port (mlx5 has 256; entries past it are not read). */
#define CORE_SYSFS_MAX_GIDS 256u

enum core_gid_type {
	CORE_GID_EMPTY = 0,   /* no GID at this index */
	CORE_GID_ROCE_V2,     /* gid_attrs/types: "RoCE v2" */
	CORE_GID_IB_ROCE_V1,  /* "IB/RoCE v1" */
};

/* One GID table entry, at its sysfs index. */
struct core_sysfs_gid {
	uint8_t raw[DOCA_GID_BYTE_LENGTH];
	enum core_gid_type type;
	char ndev[IF_NAMESIZE]; /* gid_attrs/ndevs: the netdev ("" for none, as on InfiniBand) */
};

/* One RDMA device: its name, the PCI function behind it (when there is
 * one) and the GID table of its first port. */
struct core_sysfs_rdma_dev {
	char name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char pci_addr[DOCA_DEVINFO_PCI_ADDR_SIZE]; /* "" for a virtual device (rxe, siw) */
	char netdev[IF_NAMESIZE]; /* the port's netdev: the first GID's, "" when none */
	uint32_t port;
	uint32_t nb_gids; /* the highest non-empty index + 1 */
	struct core_sysfs_gid *gids;
};

/* Read every RDMA device under <root>/class/infiniband, sorted by name.
 * Entries the kernel would never write (a malformed GID, an overlong
 * name) are logged and left out; no directory means no device. Errors:
 * NO_MEMORY. */
doca_error_t core_sysfs_rdma_devices(struct core_sysfs_rdma_dev **devs, uint32_t *nb);
void core_sysfs_rdma_devices_free(struct core_sysfs_rdma_dev *devs, uint32_t nb);

/* Tests only: read a made-up tree at root instead of /sys (NULL: /sys
 * again). Not reachable from the environment. */
void core_sysfs_set_root(const char *root);

/* The sysfs words of a GID type ("RoCE v2", "IB/RoCE v1", "" when empty). */
const char *core_gid_type_name(enum core_gid_type type);

#endif /* SOFTDOCA_CORE_DEV_SYSFS_H_ */
