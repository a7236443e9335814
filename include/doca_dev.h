/*
 * softdoca — devices: discovery, identity and opening.
 *
 * A program lists the devices of the machine (doca_devinfo_create_list),
 * picks one by PCI address, interface name or ibdev name, opens it
 * (doca_dev_open) and hands the open device to mmaps and contexts.
 *
 * softdoca's devices are "soft devices": one per network interface that has
 * an IP address (loopback included), named "soft_<interface>" unless
 * SOFTDOCA_DEVICES gives another name ("mlx5_0=eth0,mlx5_1=lo"). How
 * their PCI addresses are made up is described in src/core/dev.c.
 *
 * Representors are the BlueField side's view of the host (README "The
 * BlueField side"): every open soft device lists one representor per soft
 * device of the host, a PF representor with that device's PCI address,
 * interface name and the VUID "softdoca-pf-<PCI address>".
 *
 * Thread rules: a device list and the devices in it may be read from any
 * thread; creating and destroying lists, opening and closing devices are
 * thread safe.
 */
#ifndef DOCA_DEV_H_
#define DOCA_DEV_H_

#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A device found on this machine: identity and capabilities, not opened. */
struct doca_devinfo;
/* A representor: on the BlueField side, a host PCI function. */
struct doca_devinfo_rep;
/* An opened device. */
struct doca_dev;
/* An opened representor. */
struct doca_dev_rep;

/* Which representors doca_devinfo_rep_create_list returns (passed as int). */
enum doca_devinfo_rep_filter {
	DOCA_DEVINFO_REP_FILTER_ALL = 0,
	DOCA_DEVINFO_REP_FILTER_NET = 1 << 1,
	DOCA_DEVINFO_REP_FILTER_EMULATED = 1 << 2,
};

/* Buffer sizes. Sizes of strings count the terminating NUL. */
#define DOCA_DEVINFO_VUID_SIZE 128
#define DOCA_DEVINFO_IPV4_ADDR_SIZE 4
#define DOCA_DEVINFO_IPV6_ADDR_SIZE 16
#define DOCA_DEVINFO_MAC_ADDR_SIZE 6
#define DOCA_DEVINFO_IFACE_NAME_SIZE 256
#define DOCA_DEVINFO_IBDEV_NAME_SIZE 64
#define DOCA_DEVINFO_PCI_ADDR_SIZE 13 /* "DDDD:BB:DD.F" */
#define DOCA_DEVINFO_PCI_BDF_SIZE 8 /* "BB:DD.F" */
#define DOCA_DEVINFO_REP_VUID_SIZE 128
#define DOCA_DEVINFO_REP_PCI_ADDR_SIZE 13
#define DOCA_DEVINFO_REP_PCI_BDF_SIZE 8

/* ---- Device lists --------------------------------------------------- */

/*
 * Take a snapshot of the devices of this machine. On success *dev_list is
 * an array of *nb_devs device infos, to be released with
 * doca_devinfo_destroy_list (also when *nb_devs is 0). Errors:
 * INVALID_VALUE (NULL argument), NO_MEMORY, OPERATING_SYSTEM (interfaces
 * unreadable).
 */
DOCA_STABLE
doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs);

/*
 * Release a list from doca_devinfo_create_list. Devices opened from it stay
 * valid until closed. Errors: INVALID_VALUE (NULL list).
 */
DOCA_STABLE
doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list);

/*
 * List the representors of an open device that match filter (an
 * enum doca_devinfo_rep_filter value): ALL and NET list one per host soft
 * device, EMULATED alone none (the host has no emulated functions). On
 * success *dev_list_rep is NULL-terminated, *nb_devs_rep long (0 allowed);
 * release it with doca_devinfo_rep_destroy_list.
 * Errors: INVALID_VALUE (NULL argument, unknown filter bits, dev not open),
 * NO_MEMORY.
 */
DOCA_STABLE
doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter,
					  struct doca_devinfo_rep ***dev_list_rep, uint32_t *nb_devs_rep);

/* Release a representor list; representors opened from it stay valid.
 * Errors: INVALID_VALUE (NULL, or not a live list). */
DOCA_STABLE
doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep);

/* ---- Opening and closing -------------------------------------------- */

/*
 * Open the device described by devinfo. Opening the same device twice gives
 * the same handle, counted: each open needs one close. The handle outlives
 * the list devinfo came from. Errors: INVALID_VALUE, NO_MEMORY.
 */
DOCA_STABLE
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);

/* Drop one open of dev; the last close releases it. Errors: INVALID_VALUE
 * (NULL, or not an open device), IN_USE (last close while an mmap or a
 * context still uses the device). */
DOCA_STABLE
doca_error_t doca_dev_close(struct doca_dev *dev);

/* Open a representor of a live list (or of an open representor). Each open
 * is a new handle with its own close. Errors: INVALID_VALUE, NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep);

/* Close a representor. Errors: INVALID_VALUE (NULL or not open). */
DOCA_STABLE
doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev);

/* The device info of an open device (valid while the device is open), or
 * NULL for a NULL device. */
DOCA_STABLE
struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev);

/* The device info of an open representor, or NULL. */
DOCA_STABLE
struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep);

/* ---- Device identity ------------------------------------------------ */

/*
 * Set *is_equal to 1 when devinfo has the PCI address pci_addr_str, written
 * "DDDD:BB:DD.F" or "BB:DD.F" (hex digits), else 0. Errors: INVALID_VALUE
 * (NULL argument or malformed address).
 */
DOCA_STABLE
doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo, const char *pci_addr_str,
					    uint8_t *is_equal);

/* Write the PCI address "DDDD:BB:DD.F" into pci_addr_str, which must hold
 * DOCA_DEVINFO_PCI_ADDR_SIZE bytes. Errors: INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str);

/* Write the network interface name (NUL-terminated). Errors: INVALID_VALUE
 * (NULL argument or size too small for the name). */
DOCA_STABLE
doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size);

/* Write the RDMA device name (NUL-terminated), the name `-d` options match.
 * Errors: INVALID_VALUE (NULL argument or size too small for the name). */
DOCA_STABLE
doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size);

/* Write the first IPv4 address of the interface (4 bytes, network order).
 * Errors: INVALID_VALUE (NULL, size < 4), NOT_FOUND (no IPv4 address). */
DOCA_STABLE
doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size);

/* Write the first IPv6 address of the interface (16 bytes).
 * Errors: INVALID_VALUE (NULL, size < 16), NOT_FOUND (no IPv6 address). */
DOCA_STABLE
doca_error_t doca_devinfo_get_ipv6_addr(const struct doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size);

/* Write the MAC address (6 bytes). Errors: INVALID_VALUE (NULL, size < 6),
 * NOT_FOUND (the interface has no hardware address). */
DOCA_STABLE
doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size);

/* PF, VF or SF. Soft devices are PFs. Errors: INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_devinfo_get_pci_func_type(const struct doca_devinfo *devinfo,
					    enum doca_pci_func_type *pci_func_type);

/* Index of a scalable function. Errors: INVALID_VALUE, NOT_SUPPORTED (the
 * device is not an SF: every soft device). */
DOCA_STABLE
doca_error_t doca_devinfo_get_sf_index(const struct doca_devinfo *devinfo, uint32_t *sf_index);

/* InfiniBand local identifier. Errors: INVALID_VALUE, NOT_SUPPORTED (not an
 * InfiniBand port: every soft device). */
DOCA_STABLE
doca_error_t doca_devinfo_get_lid(const struct doca_devinfo *devinfo, uint16_t *lid);

/* Link rate in bits per second. Errors: INVALID_VALUE. */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_active_rate(const struct doca_devinfo *devinfo, uint64_t *active_rate);

/* Virtual HCA id. Errors: INVALID_VALUE, NOT_SUPPORTED (soft devices). */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_vhca_id(const struct doca_devinfo *devinfo, uint16_t *vhca_id);

/* ---- Device capabilities (answer through *is_supported: 1 or 0) ------ */

DOCA_STABLE
doca_error_t doca_devinfo_cap_is_hotplug_manager_supported(const struct doca_devinfo *devinfo,
							   uint8_t *is_hotplug_manager);

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_cap_is_notification_moderation_supported(const struct doca_devinfo *devinfo,
								   uint8_t *is_supported);

DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_all_supported(const struct doca_devinfo *devinfo,
							  uint8_t *filter_all_supported);

DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_net_supported(const struct doca_devinfo *devinfo,
							  uint8_t *filter_net_supported);

DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_emulated_supported(const struct doca_devinfo *devinfo,
							       uint8_t *filter_emulated_supported);

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_cap_is_accelerate_resource_reclaim_supported(const struct doca_devinfo *devinfo,
									uint8_t *is_supported);

/* Ask the device to release resources faster. Errors: INVALID_VALUE,
 * NOT_SUPPORTED (soft devices). */
DOCA_EXPERIMENTAL
doca_error_t doca_dev_accelerate_resource_reclaim(struct doca_dev *dev);

/* ---- Representor identity (of a live list or an open representor) ---- */

/* Write the representor's VUID (NUL-terminated). Errors: INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size);

/* Compare the representor's PCI address, as doca_devinfo_is_equal_pci_addr
 * does. Errors: INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep, const char *pci_addr_str,
						uint8_t *is_equal);

/* Write the representor's PCI address (DOCA_DEVINFO_REP_PCI_ADDR_SIZE
 * bytes). Errors: INVALID_VALUE. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str);

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type);

DOCA_STABLE
doca_error_t doca_devinfo_rep_get_is_hotplug(const struct doca_devinfo_rep *devinfo_rep, uint8_t *is_hotplug);

DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_iface_name(const struct doca_devinfo_rep *devinfo_rep, char *iface_name,
					     uint32_t size);

/* Errors: INVALID_VALUE, NOT_SUPPORTED (a soft function has no VHCA). */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_vhca_id(const struct doca_devinfo_rep *devinfo_rep, uint16_t *vhca_id);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DEV_H_ */
