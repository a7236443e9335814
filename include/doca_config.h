/*
 * softdoca — build-time configuration seen by DOCA programs.
 * DOCA's doca_compat.h keys its convenience includes off DOCA_COMPAT_HELPERS.
 */
#ifndef DOCA_CONFIG_H_
#define DOCA_CONFIG_H_

#define DOCA_COMPAT_HELPERS 1

#endif /* DOCA_CONFIG_H_ */
