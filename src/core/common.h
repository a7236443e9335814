/*
 * softdoca — helpers shared by every internal source file.
 * Not installed.
 */
#ifndef SOFTDOCA_CORE_COMMON_H_
#define SOFTDOCA_CORE_COMMON_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Internal functions that other parts of softdoca (dma, rdma, comch, argp,
 * tools and tests) call. They carry the softdoca_ prefix. Every part is
 * built into libdoca_common (src/meson.build), whose version script
 * (src/softdoca.map) exports the DOCA API and softdoca's documented calls
 * only, so these stay inside it; softdoca's tests and doca_caps reach them
 * through the static softdoca_internal library. */
#define SOFTDOCA_EXPORT __attribute__((visibility("default")))

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* The value of hex digit c (either case), or -1. */
static inline int softdoca_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A whole decimal number in [min, max], digits only (no sign, space or
 * empty text), as the SOFTDOCA_* environment variables take; false and
 * *out untouched otherwise. max is at most UINT64_MAX / 10. */
static inline bool softdoca_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (text == NULL || *text == '\0')
		return false;
	for (const char *p = text; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > max)
			return false;
	}
	if (v < min)
		return false;
	*out = v;
	return true;
}

#endif /* SOFTDOCA_CORE_COMMON_H_ */
