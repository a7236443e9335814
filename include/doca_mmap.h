/*
 * softdoca — DOCA memory maps.
 *
 * A memory map (mmap) names one range of memory [addr, addr + len) that
 * doca_bufs may point into, the devices that may reach it and the access
 * they get (enum doca_access_flag bits).
 *
 * Life cycle: create -> configure (memrange, permissions, devices, user
 * data) -> start -> use (take bufs, export) -> stop -> destroy. Every
 * configuration call on a started mmap fails. Stop returns a local mmap to
 * the configurable state (the memory range stays set and cannot change);
 * it refuses while doca_bufs still point into the mmap. Destroy stops the
 * mmap implicitly.
 *
 * Export: doca_mmap_export_rdma() gives a started mmap with an RDMA
 * permission an opaque descriptor; a peer turns it into a "from export"
 * mmap with doca_mmap_create_from_export(), whose bufs are the remote ends
 * of one-sided RDMA tasks. The descriptor is a capability: whoever holds it
 * gets the exported access, so carry it over a channel you trust. Stopping
 * or destroying the exported mmap revokes it at once.
 *
 * Thread rules: an mmap is configured, started, stopped and destroyed from
 * one thread at a time. Taking and releasing bufs on a started mmap may
 * happen from several threads.
 */
#ifndef DOCA_MMAP_H_
#define DOCA_MMAP_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_devinfo;
struct doca_dpa;

/* A memory map. Opaque. */
struct doca_mmap;

/* Handle of an mmap on a DPA (not available in softdoca). */
typedef uint32_t doca_dpa_dev_mmap_t;

/* Called by doca_mmap_destroy() to release the memory range of an mmap
 * that was started: addr and len are the range, cookie the value given to
 * doca_mmap_set_free_cb(). A function type, used through a pointer. */
typedef void(doca_mmap_memrange_free_cb_t)(void *addr, size_t len, void *cookie);

/* Allocate an empty, unstarted mmap: no memory range, no device, default
 * permission DOCA_ACCESS_FLAG_LOCAL_READ_WRITE.
 * Errors: INVALID_VALUE (mmap NULL), NO_MEMORY. */
DOCA_STABLE
doca_error_t doca_mmap_create(struct doca_mmap **mmap);

/* Destroy an mmap, stopping it first if needed (which revokes its export).
 * Calls the free callback, if one was set and the mmap was ever started.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED while doca_bufs point into
 * it (unless thread safety was enabled: then the memory of the object is
 * released when the last buf goes). Not thread safe. */
DOCA_STABLE
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

/* Check and freeze the configuration; bufs can then be taken and the mmap
 * exported. Needs a memory range and at least one device.
 * Errors: INVALID_VALUE (NULL, no memory range, no device), BAD_STATE
 * (already started), NOT_PERMITTED (created from an export). */
DOCA_STABLE
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

/* Stop a started mmap. Revokes every export of it at once: when stop
 * returns, no remote operation touches the memory any more. A local mmap
 * can then be configured and started again; an mmap created from an export
 * can only be destroyed.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (not started), NOT_PERMITTED
 * (doca_bufs still point into it). */
DOCA_STABLE
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

/* Let dev reach the memory of the mmap. Before start only.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (started, or from export),
 * ALREADY_EXIST (dev already added), NO_MEMORY (max number of devices
 * reached). */
DOCA_STABLE
doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/* Remove a device added with doca_mmap_add_dev(). Before start only.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (started, or from export),
 * NOT_FOUND (dev was not added). */
DOCA_STABLE
doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/* Set the memory range [addr, addr + len). Once only, before start.
 * Errors: INVALID_VALUE (NULL mmap or addr, len 0, range wraps around the
 * address space), BAD_STATE (started), NOT_PERMITTED (range already set,
 * or from export). */
DOCA_STABLE
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);

/* The memory range: for an mmap from an export, the exporter's address and
 * length (not addressable in this process).
 * Errors: INVALID_VALUE (NULL), BAD_STATE (range never set). */
DOCA_STABLE
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);

/* Set the access granted to the devices: any combination of enum
 * doca_access_flag bits (0 = local read only). Before start only.
 * Errors: INVALID_VALUE (NULL, unknown bits), BAD_STATE (started),
 * NOT_PERMITTED (from export). */
DOCA_STABLE
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);

/* Describe a started mmap for doca_mmap_create_from_export() in another
 * process. dev must have been added to the mmap and the permissions must
 * include an RDMA flag. The descriptor belongs to the mmap: it stays
 * readable until the mmap is destroyed (or exported again after a restart),
 * and it grants access until the mmap is stopped. Exporting twice returns
 * the same descriptor.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (not started, from export, no
 * RDMA permission), NOT_FOUND (dev not added), NO_MEMORY,
 * OPERATING_SYSTEM (no random bytes for the secret). */
DOCA_STABLE
doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len);

/* Build a started mmap for the memory a peer exported with
 * doca_mmap_export_rdma(); usable at once as the remote side of RDMA tasks.
 * Or, from a doca_mmap_export_pci() descriptor of another process on this
 * host: an mmap whose bufs DMA memcpy tasks read and write in that process.
 * user_data may be NULL. The descriptor is checked strictly.
 * Errors: INVALID_VALUE (NULL, malformed descriptor), UNSUPPORTED_VERSION
 * (descriptor from a newer softdoca), NO_MEMORY; for PCI exports also
 * NOT_FOUND (exporter exited or export revoked) and NOT_PERMITTED (the
 * kernel refuses ptrace access to the exporter). */
DOCA_STABLE
doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap);

/* User data of the mmap (zero until set). Set before start only.
 * Errors: INVALID_VALUE (NULL), BAD_STATE (set on a started mmap). */
DOCA_STABLE
doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data);

DOCA_STABLE
doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data);

/* PCI export to another process of this host (the "DPU" side): a
 * descriptor for doca_mmap_create_from_export() there; the importer's DMA
 * copies reach this memory with process_vm_readv/writev (needs ptrace
 * permission: same user, kernel.yama.ptrace_scope 0 or CAP_SYS_PTRACE).
 * The mmap must be started with DOCA_ACCESS_FLAG_PCI_READ_ONLY (importer
 * reads) or DOCA_ACCESS_FLAG_PCI_READ_WRITE (reads and writes); stop and
 * destroy revoke the export and wait for copies in flight. An mmap created
 * from a PCI export cannot be re-exported with doca_mmap_export_rdma nor
 * used by RDMA tasks yet (NOT_SUPPORTED).
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (not started, from export,
 * no PCI permission), NOT_FOUND (dev not added), FULL (1024 exports live). */
DOCA_STABLE
doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len);

/* DPA handle: no DPA in softdoca; returns NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_get_dpa_handle(struct doca_mmap *mmap, const struct doca_dev *dev,
					  doca_dpa_dev_mmap_t *dpa_mmap_handle);

/* dmabuf memory ranges: not available; returns NOT_SUPPORTED. */
DOCA_STABLE
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len);

/* DPA memory ranges: not available; returns NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_dpa_memrange(struct doca_mmap *mmap, struct doca_dpa *dpa, uint64_t dpa_addr, size_t len);

/* Have doca_mmap_destroy() call free_cb(addr, len, opaque) for the memory
 * range, if the mmap was started. Before start only.
 * Errors: INVALID_VALUE (NULL mmap or free_cb), BAD_STATE (started),
 * NOT_PERMITTED (from export). */
DOCA_STABLE
doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

/* Most devices doca_mmap_add_dev() accepts (default 64). */
DOCA_STABLE
doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices);

/* Change the most devices the mmap accepts; only before the first start.
 * Errors: INVALID_VALUE (NULL, 0, above 65535, fewer than already added),
 * BAD_STATE (started), NOT_PERMITTED (started before, or from export). */
DOCA_STABLE
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices);

/* Number of doca_bufs pointing into the mmap now. */
DOCA_STABLE
doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs);

/* 1 while the mmap has a valid export (exported and not stopped since). */
DOCA_STABLE
doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported);

/* 1 if the mmap was created by doca_mmap_create_from_export(). */
DOCA_STABLE
doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export);

/* PCI export capability: 1 (to another process of this host). */
DOCA_STABLE
doca_error_t doca_mmap_cap_is_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export);

/* Create-from-PCI-export capability: 1 (from another process of this host). */
DOCA_STABLE
doca_error_t doca_mmap_cap_is_create_from_export_pci_supported(const struct doca_devinfo *devinfo,
							       uint8_t *from_export);

/* Allow bufs to be taken and released from several threads, and let
 * doca_mmap_destroy() succeed while bufs are still out (the object itself
 * is released with the last buf). Before start and before any buf; an
 * mmap created from an export (born started) takes it until its first buf.
 * Errors: INVALID_VALUE (NULL), NOT_PERMITTED (started or bufs out). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_enable_thread_safety(struct doca_mmap *mmap);

/* DOCA 3.2+: the hardware memory key through which dev reaches the mmap
 * (what GPU/DPA code puts in its work requests). Soft devices reach memory
 * without memory keys: DOCA_ERROR_NOT_SUPPORTED, with a log line. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_mkey(const struct doca_mmap *mmap, const struct doca_dev *dev, uint32_t *mkey);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_H_ */
