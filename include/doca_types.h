/*
 * softdoca — common types of the DOCA API.
 */
#ifndef DOCA_TYPES_H_
#define DOCA_TYPES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An OS handle a program can wait on (a file descriptor on Linux). */
typedef int doca_event_handle_t;
#define doca_event_invalid_handle -1

typedef doca_event_handle_t doca_notification_handle_t;

#define DOCA_GID_BYTE_LENGTH 16

/* Opaque user value carried through callbacks: a pointer or a 64-bit number. */
union doca_data {
	void *ptr;
	uint64_t u64;
};

/* One element of a gather list: [addr, addr + len). */
struct doca_gather_list {
	void *addr;
	uint64_t len;
	struct doca_gather_list *next;
};

/* Access rights of a memory region; combined as a bit mask (uint32_t). */
enum doca_access_flag {
	DOCA_ACCESS_FLAG_LOCAL_READ_ONLY = 0,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE = (1 << 0),
	DOCA_ACCESS_FLAG_RDMA_READ = (1 << 1),
	DOCA_ACCESS_FLAG_RDMA_WRITE = (1 << 2),
	DOCA_ACCESS_FLAG_RDMA_ATOMIC = (1 << 3),
	DOCA_ACCESS_FLAG_PCI_READ_ONLY = (1 << 4),
	DOCA_ACCESS_FLAG_PCI_READ_WRITE = (1 << 5),
	DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING = (1 << 6),
};

enum doca_pci_func_type {
	DOCA_PCI_FUNC_TYPE_PF = 0,
	DOCA_PCI_FUNC_TYPE_VF = 1,
	DOCA_PCI_FUNC_TYPE_SF = 2,
};

/* Big-endian integers as they travel on the wire. On Linux these have the
 * same type as the kernel's __be16/__be32/__be64. */
typedef uint16_t doca_be16_t;
typedef uint32_t doca_be32_t;
typedef uint64_t doca_be64_t;

enum doca_gpu_mem_type {
	DOCA_GPU_MEM_TYPE_GPU = 0,
	DOCA_GPU_MEM_TYPE_GPU_CPU = 1,
	DOCA_GPU_MEM_TYPE_CPU_GPU = 2,
};

enum doca_eth_wait_on_time_type {
	DOCA_ETH_WAIT_ON_TIME_TYPE_NONE = 0,
	DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE = 1,
	DOCA_ETH_WAIT_ON_TIME_TYPE_DPDK = 2,
};

enum doca_mtu_size {
	DOCA_MTU_SIZE_256_BYTES = 0,
	DOCA_MTU_SIZE_512_BYTES = 1,
	DOCA_MTU_SIZE_1K_BYTES = 2,
	DOCA_MTU_SIZE_2K_BYTES = 3,
	DOCA_MTU_SIZE_4K_BYTES = 4,
	DOCA_MTU_SIZE_RAW_ETHERNET = 5, /* reserved */
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H_ */
