/*
 * softdoca — build-time configuration seen by DOCA programs.
 * DOCA's doca_compat.h keys its convenience includes off DOCA_COMPAT_HELPERS.
 * The build personality (host or DPU side: DOCA_ARCH_DPU) comes from
 * doca_build_config.h, as in DOCA.
 */
#ifndef DOCA_CONFIG_H_
#define DOCA_CONFIG_H_

#include <doca_build_config.h>

#define DOCA_COMPAT_HELPERS 1

#endif /* DOCA_CONFIG_H_ */
