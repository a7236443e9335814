/*
 * softdoca — secrets of exported descriptors. Not installed.
 *
 * A descriptor (mmap, sync event, connection) carries a random 128-bit
 * secret that the exporting side checks on every remote use. These helpers
 * draw such secrets and compare them without leaking, through timing, where
 * two secrets differ.
 */
#ifndef SOFTDOCA_CORE_SECRET_H_
#define SOFTDOCA_CORE_SECRET_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#include "common.h"

/* Length of every descriptor secret, in bytes. */
#define SOFTDOCA_SECRET_LEN 16

/* Fill len bytes at buf from getrandom(). Errors: OPERATING_SYSTEM (logged)
 * when the kernel has no randomness to give. */
SOFTDOCA_EXPORT doca_error_t softdoca_random_fill(void *buf, size_t len);

/* Draw a fresh secret of len bytes that is not all zero (parsers refuse an
 * all-zero secret as unset). Errors: as softdoca_random_fill. */
SOFTDOCA_EXPORT doca_error_t softdoca_secret_generate(uint8_t *secret, size_t len);

/* True when the len bytes at a and b are equal; the time taken does not
 * depend on where they differ. */
SOFTDOCA_EXPORT bool softdoca_secret_equal(const uint8_t *a, const uint8_t *b, size_t len);

/* True when all len bytes at p are zero (constant time as well). */
SOFTDOCA_EXPORT bool softdoca_bytes_all_zero(const uint8_t *p, size_t len);

#endif /* SOFTDOCA_CORE_SECRET_H_ */
