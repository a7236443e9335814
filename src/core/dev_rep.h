/*
 * softdoca — the emulated PCIe link between a host and its BlueField,
 * internal view. Not installed. The seam doca_comch, PCIe exports and any
 * other host<->BlueField feature build on.
 *
 * The model. A BlueField and the host it sits in are, in softdoca, two
 * programs on one Linux machine: the host-side program is built with the
 * host personality, the BlueField-side one with the DPU personality
 * (DOCA_ARCH_DPU defined; see README "The BlueField side"). Both see the
 * same soft devices. On the DPU side, doca_devinfo_rep_create_list on any
 * open soft device lists one representor per soft device of the host, and
 * a representor carries the PCI address of the host device it stands for.
 * So host device "0000:00:01.0" (soft_lo) and the representor with PCI
 * address "0000:00:01.0" are the two ends of one PCIe function.
 *
 * The rendezvous. The two ends meet in the rendezvous directory of the
 * emulated host: $SOFTDOCA_PCIE_DIR if set, else /tmp/softdoca-pcie-<euid>.
 * Giving each emulated host (and its BlueField) its own directory lets
 * several of them coexist on one machine, e.g. in one test. The directory
 * is created (mode 0700, last component only) when missing and must be a
 * real directory (not a symlink), owned by the caller or root and not
 * writable by group or others; otherwise the calls below fail with
 * DOCA_ERROR_NOT_PERMITTED and one log line. The variable is read at each
 * call: set it before the program starts.
 *
 * The link identity is (host PCI address, rendezvous directory): a host-side
 * struct doca_dev and a DPU-side struct doca_dev_rep are two ends of one
 * link exactly when softdoca_pcie_link_equal says so. Files of one link
 * live in the rendezvous directory under names softdoca_pcie_link_path
 * builds, so users of the seam never collide across functions.
 */
#ifndef SOFTDOCA_CORE_DEV_REP_H_
#define SOFTDOCA_CORE_DEV_REP_H_

#include <stddef.h>

#include <doca_dev.h>

#include "common.h"

#define SOFTDOCA_PCIE_DIR_ENV "SOFTDOCA_PCIE_DIR"
/* Longest rendezvous directory path, NUL included. */
#define SOFTDOCA_PCIE_DIR_MAX 256

/* One end's view of an emulated PCIe function. */
struct softdoca_pcie_link {
	char pci_addr[DOCA_DEVINFO_PCI_ADDR_SIZE]; /* host function, "dddd:bb:dd.f" (lower case) */
	char dir[SOFTDOCA_PCIE_DIR_MAX];	   /* rendezvous directory, absolute, checked */
};

/* The rendezvous directory, created if missing and checked as described
 * above. Errors: INVALID_VALUE (NULL, or $SOFTDOCA_PCIE_DIR not an absolute
 * path of at most SOFTDOCA_PCIE_DIR_MAX - 1 printable characters without
 * "." or ".." components), NOT_PERMITTED (a symlink, not a directory,
 * someone else's, group/other-writable), OPERATING_SYSTEM (mkdir/open
 * failed otherwise). */
SOFTDOCA_EXPORT doca_error_t softdoca_pcie_dir(char dir_out[SOFTDOCA_PCIE_DIR_MAX]);

/* Open the rendezvous directory as an O_DIRECTORY descriptor (close-on-exec)
 * for openat-style use, after the same checks. The caller closes it.
 * Errors: as softdoca_pcie_dir. */
SOFTDOCA_EXPORT doca_error_t softdoca_pcie_dir_open(int *dirfd_out);

/* Host side: the link of an open device (the function its PCI address
 * names). Errors: INVALID_VALUE (NULL, or dev is not an open device), and
 * those of softdoca_pcie_dir. */
SOFTDOCA_EXPORT doca_error_t softdoca_dev_pcie_link(const struct doca_dev *dev, struct softdoca_pcie_link *out);

/* DPU side: the link of an open representor (the host function it stands
 * for). Errors: INVALID_VALUE (NULL, or rep is not an open representor),
 * and those of softdoca_pcie_dir. */
SOFTDOCA_EXPORT doca_error_t softdoca_dev_rep_pcie_link(const struct doca_dev_rep *rep,
							struct softdoca_pcie_link *out);

/* 1 when a and b name the same function in the same rendezvous directory,
 * else 0 (also for NULL). */
SOFTDOCA_EXPORT int softdoca_pcie_link_equal(const struct softdoca_pcie_link *a, const struct softdoca_pcie_link *b);

/* Build "<dir>/<pci_addr>.<leaf>" into out (size bytes): the path of the
 * link's file named leaf (1..32 of [A-Za-z0-9_-], e.g. "comch-<name hash>").
 * Nothing is created. Errors: INVALID_VALUE (NULL, bad leaf, or the path
 * does not fit: a UNIX socket path must fit sizeof(sun_path)). */
SOFTDOCA_EXPORT doca_error_t softdoca_pcie_link_path(const struct softdoca_pcie_link *link, const char *leaf,
						     char *out, size_t size);

#endif /* SOFTDOCA_CORE_DEV_REP_H_ */
