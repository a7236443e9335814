/*
 * softdoca — helpers shared by every internal source file.
 * Not installed.
 */
#ifndef SOFTDOCA_CORE_COMMON_H_
#define SOFTDOCA_CORE_COMMON_H_

#include <stddef.h>

/* Internal functions that other softdoca libraries (dma, rdma, argp) call.
 * They carry the softdoca_ prefix and are exported next to the DOCA API;
 * everything else is hidden (-fvisibility=hidden plus a version script). */
#define SOFTDOCA_EXPORT __attribute__((visibility("default")))

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif /* SOFTDOCA_CORE_COMMON_H_ */
