/*
 * softdoca — the DOCA API level this library implements.
 *
 * DOCA_VERSION_* name the DOCA release whose API softdoca follows (3.3).
 * SOFTDOCA_VERSION_STRING is softdoca's own release.
 */
#ifndef DOCA_VERSION_H_
#define DOCA_VERSION_H_

#include <stddef.h>

#include <doca_compat.h>

#define DOCA_VERSION_MAJOR 3
#define DOCA_VERSION_MINOR 3
#define DOCA_VERSION_PATCH 0
#define DOCA_VERSION_STRING "3.3.0000"

#define SOFTDOCA_VERSION_STRING "0.1.0"

/* Exact version number: major, minor and patch in one integer. */
#define DOCA_VERSION_CALC_EXACT(major, minor, patch) \
	((size_t)((major) << 24 | (minor) << 16 | (patch)))
#define DOCA_VERSION_EXACT DOCA_VERSION_CALC_EXACT(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)

/* Official release number: patch counted in thousands, as DOCA numbers releases. */
#define DOCA_VERSION_CALC(major, minor, patch) \
	((size_t)((major) << 24 | (minor) << 16 | ((patch) * 1000)))
#define DOCA_VERSION_OFFICIAL DOCA_VERSION_CALC(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)

#define DOCA_VERSION_EQ_CURRENT(major, minor, patch) \
	(DOCA_VERSION_CALC(major, minor, patch) == DOCA_VERSION_OFFICIAL)
#define DOCA_VERSION_LTE_CURRENT(major, minor, patch) \
	(DOCA_VERSION_CALC(major, minor, patch) <= DOCA_VERSION_OFFICIAL)

#ifdef __cplusplus
extern "C" {
#endif

/* Version string the program was compiled against. */
static inline const char *doca_version(void)
{
	return DOCA_VERSION_STRING;
}

/* Version string of the library the program runs with. */
DOCA_EXPERIMENTAL
const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
