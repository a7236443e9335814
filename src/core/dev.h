/*
 * softdoca — devices, internal view. Not installed.
 *
 * A struct doca_devinfo describes one device of a snapshot list; it is
 * reference counted so that an open device (struct doca_dev) outlives the
 * list it came from. Other layers (rdma, engine, tools) read it only
 * through the softdoca_devinfo_* getters below.
 *
 * The GID table of a soft device is its interface's addresses: IPv4
 * addresses first, then IPv6 ones, each in the order the kernel lists them;
 * an IPv4 address appears as the IPv4-mapped IPv6 address ::ffff:a.b.c.d,
 * as RoCE v2 does. GID index i is address i. The GID table of an RDMA
 * device (dev_sysfs.c) is the kernel's, with its indices: an entry may be
 * empty (family AF_UNSPEC).
 */
#ifndef SOFTDOCA_CORE_DEV_H_
#define SOFTDOCA_CORE_DEV_H_

#include <net/if.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include <doca_dev.h>

#include "common.h"
#include "core_engine.h" /* softdoca_devinfo_iface */
#include "dev_sysfs.h"

/* Where a device comes from. */
enum softdoca_dev_kind {
	SOFTDOCA_DEV_KIND_SOFT = 0, /* a network interface driven in software */
	SOFTDOCA_DEV_KIND_RDMA = 1, /* an RDMA device of the host (/sys/class/infiniband) */
};

/* One GID table entry as an address, kept in the family's own byte
 * layout: an IPv4-mapped GID as AF_INET. */
struct softdoca_dev_addr {
	sa_family_t family;       /* AF_INET or AF_INET6; AF_UNSPEC: an empty entry */
	uint8_t bytes[16];        /* 4 used for AF_INET, network order */
	enum core_gid_type type;  /* a soft device's are all RoCE v2 */
};

struct doca_devinfo {
	atomic_uint refcount; /* the list's reference plus one per open device */
	enum softdoca_dev_kind kind;
	char ibdev_name[DOCA_DEVINFO_IBDEV_NAME_SIZE];
	char iface_name[IF_NAMESIZE];
	unsigned int ifindex;
	unsigned int if_flags; /* IFF_* at snapshot time */
	int has_mac;
	uint8_t mac[DOCA_DEVINFO_MAC_ADDR_SIZE];
	char pci_addr[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint64_t active_rate; /* bits per second */
	uint32_t nb_addrs;
	struct softdoca_dev_addr *addrs; /* the GID table, in GID order */
};

/* Kind of the device. */
SOFTDOCA_EXPORT enum softdoca_dev_kind softdoca_devinfo_kind(const struct doca_devinfo *devinfo);

/* ibdev name, as doca_devinfo_get_ibdev_name reports it ("" for NULL). */
SOFTDOCA_EXPORT const char *softdoca_devinfo_ibdev(const struct doca_devinfo *devinfo);

/* Copy GID number index into gid_out. Errors: INVALID_VALUE (NULL argument
 * or index out of range). */
SOFTDOCA_EXPORT doca_error_t softdoca_devinfo_gid(const struct doca_devinfo *devinfo, uint32_t index,
						  uint8_t gid_out[DOCA_GID_BYTE_LENGTH]);

/* The type of GID number index as sysfs words it ("RoCE v2", "IB/RoCE
 * v1"; "" for an empty entry or an index out of range). */
SOFTDOCA_EXPORT const char *softdoca_devinfo_gid_type(const struct doca_devinfo *devinfo, uint32_t index);

/* Find which GID index holds gid. Errors: INVALID_VALUE (NULL argument),
 * NOT_FOUND. */
SOFTDOCA_EXPORT doca_error_t softdoca_devinfo_gid_find(const struct doca_devinfo *devinfo,
						       const uint8_t gid[DOCA_GID_BYTE_LENGTH], uint32_t *index_out);

/* Objects built on an open device (mmaps, contexts) hold it so that
 * doca_dev_close refuses, with DOCA_ERROR_IN_USE, to release it under them.
 * Every hold needs one release. */
SOFTDOCA_EXPORT void softdoca_dev_hold(struct doca_dev *dev);
SOFTDOCA_EXPORT void softdoca_dev_release(struct doca_dev *dev);

/* Within libdoca_common: a device or interface name of 1 to max-1
 * letters, digits, '_', '-' or '.'. */
int core_dev_name_valid(const char *name, size_t max);

/* Within libdoca_common (dev_rep.c): a reference on a devinfo, kept by the
 * representors that stand for it; every ref needs one unref. */
void core_devinfo_ref(struct doca_devinfo *devinfo);
void core_devinfo_unref(struct doca_devinfo *devinfo);

/* Compare PCI address wanted (caller input, strictly parsed) with own (a
 * device's or representor's), for API call func about object name. Errors:
 * INVALID_VALUE (wanted malformed, logged), UNEXPECTED (own malformed). */
doca_error_t core_pci_addr_compare(const char *func, const char *name, const char *own, const char *wanted,
				   uint8_t *is_equal);

/* Copy the PCI address of dev if dev is an open device. Errors:
 * INVALID_VALUE (not an open device; not logged, the caller says why). */
doca_error_t core_dev_pci_addr(const struct doca_dev *dev, char out[DOCA_DEVINFO_PCI_ADDR_SIZE]);

#endif /* SOFTDOCA_CORE_DEV_H_ */
