/*
 * softdoca — the transport list softdoca hands UCX, from the user's
 * UCX_TLS (engine-internal; see ucx_tls.c for why each transport is kept
 * or left out).
 */
#ifndef SOFTDOCA_ENGINE_UCX_TLS_H_
#define SOFTDOCA_ENGINE_UCX_TLS_H_

#include <stdbool.h>

/* Room for the list: at most UCX_TLS_NAMES_MAX names of at most
 * UCX_TLS_NAME_MAX characters, commas and a leading '^'. */
#define UCX_TLS_NAMES_MAX 32
#define UCX_TLS_NAME_MAX 24
#define UCX_TLS_LIST_MAX (1 + UCX_TLS_NAMES_MAX * (UCX_TLS_NAME_MAX + 1) + 1)
#define UCX_TLS_DROPPED_MAX 256

/* Optional transports this host could give UCX (ucx_tls_host). */
#define UCX_TLS_HOST_CMA (1u << 0)
#define UCX_TLS_HOST_KNEM (1u << 1)
#define UCX_TLS_HOST_XPMEM (1u << 2)

struct ucx_tls {
	/* For ucp_config_modify(config, "TLS", list): never empty, never
	 * "all", never enables tcp, sysv, knem or xpmem in UCX 1.12, 1.13
	 * or 1.16. "self" when nothing else is left. */
	char list[UCX_TLS_LIST_MAX];
	/* What the user's setting would have had UCX use and the list does
	 * not, for one INFO line: e.g. "tcp, sysv (posix instead)"; "" if
	 * nothing. Fixed words and counts only, never the user's bytes. */
	char dropped[UCX_TLS_DROPPED_MAX];
	bool tcp;   /* the user asked for TCP: named it, or unset/all/a negation that spares it */
	bool shm;   /* the list keeps a shared-memory transport (posix or cma) */
	bool posix; /* the list keeps posix, UCX's one memory-mapping (mm) transport left */
	bool peers; /* the list keeps a transport besides self: UCX can reach another process */
};

/*
 * Choose the list from the user's UCX_TLS (NULL: unset) and what
 * ucx_tls_host() found. Any value is accepted (an environment variable is
 * untrusted): names past the first UCX_TLS_NAMES_MAX, longer than
 * UCX_TLS_NAME_MAX or not of UCX's form ([\]name[:aux]: letters, digits,
 * '_') are left out and counted in `dropped`. Pure: no allocation, no I/O,
 * no UCX call; thread-safe.
 */
void ucx_tls_choose(const char *user, unsigned host, struct ucx_tls *out);

/*
 * UCX_TLS_HOST_* bits of the optional transports UCX could open here, by
 * the tests UCX itself makes: /dev/knem and /dev/xpmem exist (any error
 * but "no such file" counts as there); CMA: Yama's ptrace_scope is absent,
 * 0 or 1, and process_vm_writev into ourselves works. So the list never
 * names one UCX cannot find (UCX warns about each such name).
 */
unsigned ucx_tls_host(void);

#endif /* SOFTDOCA_ENGINE_UCX_TLS_H_ */
