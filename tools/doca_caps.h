/*
 * doca_caps — what the tool's two files share: the indentation of its
 * layout, how a query's answer is written, and the per-device sections
 * that doca_caps_libs.c prints (the per-library capability listing and
 * softdoca's extras).
 */
#ifndef SOFTDOCA_TOOLS_DOCA_CAPS_H_
#define SOFTDOCA_TOOLS_DOCA_CAPS_H_

#include <stddef.h>

#include <doca_dev.h>
#include <doca_error.h>

/* Every per-device block opens with "PCI: <address>" at column 0; its
 * sections (a library, softdoca's extras) sit one level in, their rows
 * two levels in, names padded to one column. */
#define CAPS_INDENT_SECTION "    "
#define CAPS_INDENT_ROW "        "
#define CAPS_NAME_WIDTH 46
#define CAPS_VALUE_LEN 160

/* The heading of softdoca's own rows, which NVIDIA's tool does not print. */
#define CAPS_EXTRAS_HEADING "softdoca extras (not part of NVIDIA's doca_caps output)"

/* One "name  value" row of a section. */
void caps_print_row(const char *name, const char *value);

/* A query's failure as a value: "unsupported" for NOT_SUPPORTED,
 * "none" for NOT_FOUND, otherwise the error's name. */
void caps_error_text(doca_error_t err, char *out, size_t len);

/* The per-library capability listing of one device: one section per
 * library softdoca provides (common, dma, rdma, sync_event), each row
 * answered by the public cap_* API. */
void caps_print_libraries(const struct doca_devinfo *devinfo);

/* softdoca's extras for one device, under CAPS_EXTRAS_HEADING: identity
 * facts NVIDIA's layout has no row for, the transports, RDMA CM, and the GID table
 * with each GID's type, interface and address. */
void caps_print_extras(const struct doca_devinfo *devinfo);

#endif /* SOFTDOCA_TOOLS_DOCA_CAPS_H_ */
