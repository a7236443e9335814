/*
 * softdoca — what DOCA Core offers the engine (src/engine), and all the
 * engine may use of it. Not installed. Core's own headers (mmap.h,
 * sync_event.h, secret.h, dev.h) include this one, so each function
 * below has one declaration and the engine none of Core's internals.
 *
 *  - memory regions: the table of exported mmaps, for the target side.
 *    A region is found by id and checked against its 128-bit secret
 *    (softdoca_mmap_region_lookup), which holds it until
 *    softdoca_mmap_region_release. doca_mmap_stop/destroy remove the
 *    region and wait until no holder is left, so after stop returns no
 *    remote operation touches the memory. A holder must therefore not
 *    stop or destroy mmaps, nor wait on a thread that might, while
 *    holding. softdoca_access_flag_name names a permission.
 *  - sync events: the table of exported events, held the same way;
 *    while held, softdoca_sync_event_ref_get / _set / _add read and
 *    update the value from any thread and wake its waiters.
 *  - secrets: drawing a connection's secret, comparing one in constant
 *    time.
 *  - device facts: the interface a device drives, its addresses.
 *  - the timeline (SOFTDOCA_TRACE, trace.h): whether it records, the
 *    track of a connection, and the two events only the engine sees (a
 *    task's request handed to the transport, an operation arriving at
 *    its target).
 *  - logging (log_internal.h: SDK_LOG_*).
 */
#ifndef SOFTDOCA_CORE_CORE_ENGINE_H_
#define SOFTDOCA_CORE_CORE_ENGINE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <doca_error.h>

#include "common.h"
#include "log_internal.h"

struct doca_devinfo;
struct doca_mmap;
struct doca_sync_event;

/* Length of every descriptor secret, in bytes. */
#define SOFTDOCA_SECRET_LEN 16

/* ---- memory regions ---------------------------------------------------- */

/* A held region of the table. */
struct softdoca_mmap_region {
	struct doca_mmap *mmap;
	uint64_t addr;		/* local address of the exported range */
	uint64_t len;
	uint32_t permissions;	/* doca_access_flag bits */
	/* Non-NULL: the mmap was created from a PCI export, so the range is
	 * another process's memory (the host's, seen from the DPU side). It
	 * is reached only with softdoca_mmap_region_pci_copy;
	 * softdoca_mmap_region_check refuses it. */
	void *pci;
};

/* Find the exported, started mmap with this id and secret and hold it.
 * Errors: INVALID_VALUE (NULL), NOT_FOUND (no such region, or revoked),
 * AUTHENTICATION (wrong secret). */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_region_lookup(uint64_t region_id,
							  const uint8_t secret[SOFTDOCA_SECRET_LEN],
							  struct softdoca_mmap_region *region);

/* Drop the hold taken by softdoca_mmap_region_lookup. */
SOFTDOCA_EXPORT void softdoca_mmap_region_release(struct softdoca_mmap_region *region);

/* Check that [addr, addr + len) lies inside a held region and that the
 * region grants every bit of need_perms; on success *local is the local
 * address. len 0 is allowed inside the region.
 * Errors: INVALID_VALUE (NULL, out of bounds), NOT_PERMITTED (permission
 * missing). */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_region_check(const struct softdoca_mmap_region *region, uint64_t addr,
							 uint64_t len, uint32_t need_perms, void **local);

/* For a region with pci set: the checks of softdoca_mmap_region_check,
 * without a local address (there is none). */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_region_check_pci(const struct softdoca_mmap_region *region, uint64_t addr,
							     uint64_t len, uint32_t need_perms);

/* Copy len bytes between [addr, addr + len) of a held PCI region and buf
 * (to_region: write the region), with the exporter's own range and
 * permission checks and its revocation (process_vm_readv/writev).
 * Errors: INVALID_VALUE (not a PCI region, out of range),
 * NOT_PERMITTED (the export or the kernel refuses), NOT_FOUND (the
 * export was revoked), CONNECTION_ABORTED (the exporter exited). */
SOFTDOCA_EXPORT doca_error_t softdoca_mmap_region_pci_copy(const struct softdoca_mmap_region *region, uint64_t addr,
							    void *buf, size_t len, bool to_region);

/* The name of one doca_access_flag bit, for log lines (the RDMA layer
 * uses it too). */
SOFTDOCA_EXPORT const char *softdoca_access_flag_name(uint32_t flag);

/* ---- sync events ------------------------------------------------------- */

/* A held event of the table. */
struct softdoca_sync_event_ref {
	struct doca_sync_event *event; /* NULL when nothing is held */
	uint64_t event_id;
};

/* Find the exported, started event with this id and secret and hold it.
 * Errors: INVALID_VALUE (NULL), NOT_FOUND (no such event, never exported,
 * or revoked), AUTHENTICATION (wrong secret). */
SOFTDOCA_EXPORT doca_error_t softdoca_sync_event_lookup(uint64_t event_id, const uint8_t secret[SOFTDOCA_SECRET_LEN],
							 struct softdoca_sync_event_ref *ref);

/* Drop the hold taken by softdoca_sync_event_lookup; a second release of
 * the same ref is a no-op. */
SOFTDOCA_EXPORT void softdoca_sync_event_release(struct softdoca_sync_event_ref *ref);

/* The value of a held event (0 for a ref that holds nothing). */
SOFTDOCA_EXPORT uint64_t softdoca_sync_event_ref_get(const struct softdoca_sync_event_ref *ref);

/* Set the value of a held event and wake its waiters. */
SOFTDOCA_EXPORT void softdoca_sync_event_ref_set(const struct softdoca_sync_event_ref *ref, uint64_t v);

/* Add v (wrapping) to the value of a held event, wake its waiters, and
 * return the value before the addition. */
SOFTDOCA_EXPORT uint64_t softdoca_sync_event_ref_add(const struct softdoca_sync_event_ref *ref, uint64_t v);

/* ---- secrets ----------------------------------------------------------- */

/* Draw a fresh secret of len bytes that is not all zero (parsers refuse an
 * all-zero secret as unset). Errors: OPERATING_SYSTEM (logged) when the
 * kernel has no randomness to give. */
SOFTDOCA_EXPORT doca_error_t softdoca_secret_generate(uint8_t *secret, size_t len);

/* True when the len bytes at a and b are equal; the time taken does not
 * depend on where they differ. */
SOFTDOCA_EXPORT bool softdoca_secret_equal(const uint8_t *a, const uint8_t *b, size_t len);

/* ---- device facts ------------------------------------------------------ */

/* Network interface name ("" for NULL). */
SOFTDOCA_EXPORT const char *softdoca_devinfo_iface(const struct doca_devinfo *devinfo);

/* Kernel interface index (0 for NULL). */
SOFTDOCA_EXPORT unsigned int softdoca_devinfo_ifindex(const struct doca_devinfo *devinfo);

/* Number of GID table entries: the device's addresses (0 for NULL). */
SOFTDOCA_EXPORT uint32_t softdoca_devinfo_gid_count(const struct doca_devinfo *devinfo);

/* The address behind GID number index as a socket address (port 0; IPv6
 * link-local addresses carry the interface as scope id), ready for bind or
 * a UCX listener. Errors: INVALID_VALUE (NULL argument or index out of
 * range, logged), NOT_FOUND (an empty entry of an RDMA device's table, not
 * logged). */
SOFTDOCA_EXPORT doca_error_t softdoca_devinfo_addr(const struct doca_devinfo *devinfo, uint32_t index,
						   struct sockaddr_storage *addr_out, socklen_t *len_out);

/* What carries an RDMA context's traffic under this process's UCX_TLS,
 * in words, into out (doca_caps' data_path row, the engine's DEBUG line):
 * UCX shared memory for peers on this host, softdoca's TCP link for
 * others. */
SOFTDOCA_EXPORT void softdoca_engine_data_path(char *out, size_t len);

/* ---- the timeline ------------------------------------------------------ */

/* Set once before main when SOFTDOCA_TRACE is set; never changes after.
 * Every hook is behind one branch on it. */
SOFTDOCA_EXPORT extern bool softdoca_trace_on;

/* A connection's track: its context's track (1..32767, 0 when not
 * tracing) in the high half, the connection id in the low 16 bits, so
 * the engine and the RDMA layer name the same track without sharing an
 * object. */
#define SOFTDOCA_TRACE_CONN_SHIFT 16
static inline uint32_t softdoca_trace_conn_track(uint32_t ctx_track, uint32_t conn_id)
{
	return ctx_track << SOFTDOCA_TRACE_CONN_SHIFT | (conn_id & 0xffffu);
}

/* The request of task (a struct doca_task *, opaque here) goes to the
 * transport now, as number seq on its connection. */
SOFTDOCA_EXPORT void softdoca_trace_task_sent(void *task, uint64_t seq);

/* Operation op (a static name) number seq from the peer's connection
 * from_conn reached its connection's queue at this target. */
SOFTDOCA_EXPORT void softdoca_trace_at_target(uint32_t track, const char *op, uint64_t seq, uint32_t from_conn);

#endif /* SOFTDOCA_CORE_CORE_ENGINE_H_ */
