/*
 * softdoca — Yama's kernel.yama.ptrace_scope, which decides whether one
 * process may reach another's memory (process_vm_readv/writev, CMA).
 * Header-only: the engine's UCX_TLS choice (ucx_tls.c, also built alone
 * into its unit test) and PCI exports (mmap_pci.c) read it. Not installed.
 */
#ifndef SOFTDOCA_CORE_YAMA_H_
#define SOFTDOCA_CORE_YAMA_H_

#include <fcntl.h>
#include <unistd.h>

/* Present but not readable as 0-3: taken as the strictest. */
#define SOFTDOCA_YAMA_UNKNOWN 4

/* The scope, 0 to 3; -1 without Yama (no rule beyond the usual same-user
 * check); SOFTDOCA_YAMA_UNKNOWN when the file says something else. */
static inline int softdoca_yama_scope(void)
{
	char text[8] = "";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0 || text[0] < '0' || text[0] > '3')
		return SOFTDOCA_YAMA_UNKNOWN;
	return text[0] - '0';
}

#endif /* SOFTDOCA_CORE_YAMA_H_ */
