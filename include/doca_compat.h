/*
 * softdoca — symbol attributes of the DOCA API.
 *
 * DOCA_STABLE marks a function that is part of the exported, stable API.
 * DOCA_EXPERIMENTAL marks one that may still change: unless the program
 * defines DOCA_ALLOW_EXPERIMENTAL_API, using it draws a deprecation warning
 * (never an error). DOCA_DEPRECATED works the same way with
 * DOCA_ALLOW_DEPRECATED_API.
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#include <doca_config.h>

#if defined(__GNUC__) || defined(__clang__)
#define DOCA_USED __attribute__((used))
#define DOCA_STABLE __attribute__((visibility("default"))) DOCA_USED

#ifdef DOCA_ALLOW_EXPERIMENTAL_API
#define DOCA_EXPERIMENTAL DOCA_STABLE __attribute__((section(".text.experimental")))
#else
#define DOCA_EXPERIMENTAL \
	DOCA_STABLE __attribute__((section(".text.experimental"))) \
	__attribute__((deprecated("experimental DOCA API; define DOCA_ALLOW_EXPERIMENTAL_API to silence")))
#endif

#ifdef DOCA_ALLOW_DEPRECATED_API
#define DOCA_DEPRECATED DOCA_STABLE __attribute__((section(".text.deprecated")))
#else
#define DOCA_DEPRECATED \
	DOCA_STABLE __attribute__((section(".text.deprecated"))) \
	__attribute__((deprecated("deprecated DOCA API; define DOCA_ALLOW_DEPRECATED_API to silence")))
#endif

#else /* not GCC-compatible */
#define DOCA_USED
#define DOCA_STABLE
#define DOCA_EXPERIMENTAL
#define DOCA_DEPRECATED
#endif

/* Convenience includes DOCA programs rely on; after the macros, since
 * doca_version.h needs them. */
#ifdef DOCA_COMPAT_HELPERS
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <doca_version.h>
#endif

#endif /* DOCA_COMPAT_H_ */
