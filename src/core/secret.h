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
#include "core_engine.h" /* SOFTDOCA_SECRET_LEN, softdoca_secret_generate / _equal */

/* Fill len bytes at buf from getrandom(). Errors: OPERATING_SYSTEM (logged)
 * when the kernel has no randomness to give. */
SOFTDOCA_EXPORT doca_error_t softdoca_random_fill(void *buf, size_t len);

/* True when all len bytes at p are zero (constant time as well). */
SOFTDOCA_EXPORT bool softdoca_bytes_all_zero(const uint8_t *p, size_t len);

#endif /* SOFTDOCA_CORE_SECRET_H_ */
