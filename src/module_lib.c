/*
 * softdoca — the one object of each DOCA module library (libdoca_rdma,
 * libdoca_dma, libdoca_argp, libdoca_comch, libdoca_compress,
 * libdoca_erasure_coding, libdoca_dpa).
 *
 * Every softdoca call lives in libdoca_common, next to DOCA Core: the
 * modules share Core's objects (contexts, tasks, PEs, mmaps) through
 * internal functions that a separate library could only reach if they were
 * exported, and softdoca exports nothing but the DOCA API. The module
 * libraries are there so that programs link as they do against DOCA
 * (pkg-config doca-rdma: -ldoca_rdma -ldoca_common); each depends on
 * libdoca_common, where the dynamic linker finds its calls.
 */
#include <doca_error.h>

/* A reference into libdoca_common keeps it a dependency (DT_NEEDED) of the
 * module library even when the linker drops unused ones (--as-needed). */
__attribute__((used)) static const char *(*const softdoca_module_needs_core)(doca_error_t) = doca_error_get_name;
