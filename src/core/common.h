/*
 * softdoca — helpers shared by every internal source file.
 * Not installed.
 */
#ifndef SOFTDOCA_CORE_COMMON_H_
#define SOFTDOCA_CORE_COMMON_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Internal functions that other softdoca libraries (dma, rdma, argp) call.
 * They carry the softdoca_ prefix and are exported next to the DOCA API;
 * everything else is hidden (-fvisibility=hidden plus a version script). */
#define SOFTDOCA_EXPORT __attribute__((visibility("default")))

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

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
