/*
 * softdoca — what the engines say when the two sides of a connection
 * disagree (docs/troubleshooting.md, case 6): transport types or GID
 * kinds that differ, or a descriptor from a process that exited or from
 * an rdma context of this process that has stopped since. Each is found
 * when doca_rdma_connect parses the descriptor, before anything is sent,
 * so the call fails at once instead of the connection never establishing.
 *
 * Also here: the serials ("runs") of the UCX workers alive in this
 * process, under a lock of their own that is taken with no other held
 * inside it (a leaf: callers may hold a worker's lock).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "core_engine.h"
#include "engine.h"

SDK_LOG_REGISTER(ENGINE::DISAGREE)

static const char *gid_type_name(uint8_t type)
{
	return type == ENGINE_GID_IPV4 ? "an IPv4 (::ffff:a.b.c.d)" : "an IPv6";
}

doca_error_t engine_sides_agree(uint32_t conn_id, const struct engine_worker_conf *ours,
				const struct engine_peer_side *peer)
{
	/* Rate-limited: over RDMA CM the descriptor is a remote peer's.
	 * DRIVER, not INVALID_VALUE: on hardware an RC queue pair cannot be
	 * connected to a DC target and the layer below DOCA refuses it;
	 * NVIDIA's guidance for DOCA users (doca-skills doca-rdma, debug
	 * layer 5) tells them a mixed-transport pair returns DRIVER. */
	if (ours->dc != peer->dc) {
		SDK_LOG_ERR_RL("rdma connection %u: DOCA_ERROR_DRIVER: the two sides disagree on the transport "
			       "type: this context uses %s, the peer's descriptor is from a %s context; call "
			       "doca_rdma_set_transport_type with the same type on both sides before doca_ctx_start",
			       conn_id, ours->dc ? "DC" : "RC", peer->dc ? "DC" : "RC");
		return DOCA_ERROR_DRIVER;
	}
	if (ours->gid_type != ENGINE_GID_UNKNOWN && peer->gid_type != ENGINE_GID_UNKNOWN &&
	    ours->gid_type != peer->gid_type) {
		SDK_LOG_ERR_RL("rdma connection %u: DOCA_ERROR_INVALID_VALUE: the two sides disagree on the GID type: "
			       "this side's GID index %u is %s GID, the peer's GID index %u is %s GID, and RoCE "
			       "connects only GIDs of one type; give doca_rdma_set_gid_index GIDs of the same type on "
			       "both sides (doca_rdma_cap_get_gid lists a device's GIDs)",
			       conn_id, ours->gid_index, gid_type_name(ours->gid_type), peer->gid_index,
			       gid_type_name(peer->gid_type));
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* Field 22 of /proc/<pid>/stat, after the command name (which may hold
 * spaces and parentheses: the last ')' ends it). 0 when unreadable. */
static uint64_t proc_start_time(pid_t pid)
{
	char path[64], text[1024];
	unsigned long long start = 0;
	const char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	p = strrchr(text, ')');
	if (p == NULL)
		return 0;
	/* p + 1 is the space before field 3 (the state); the start time
	 * is field 22. */
	p++;
	for (int field = 3; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %llu", &start) != 1)
		return 0;
	return start;
}

static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static uint64_t self_start;

static void self_start_read(void)
{
	self_start = proc_start_time(getpid());
}

uint64_t engine_self_start_time(void)
{
	pthread_once(&self_once, self_start_read);
	return self_start;
}

/* Live runs: few (one per started UCX-engine context), so an array. */
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *runs;
static size_t num_runs, runs_cap;
static uint32_t run_next = 1;

uint32_t engine_run_add(void)
{
	uint32_t run = 0;

	pthread_mutex_lock(&run_lock);
	if (num_runs == runs_cap) {
		size_t cap = runs_cap == 0 ? 8 : runs_cap * 2;
		uint32_t *grown = realloc(runs, cap * sizeof(*runs));

		if (grown == NULL)
			goto out; /* 0: "not said"; the check is skipped for it */
		runs = grown;
		runs_cap = cap;
	}
	run = run_next++;
	if (run_next == 0)
		run_next = 1;
	runs[num_runs++] = run;
out:
	pthread_mutex_unlock(&run_lock);
	return run;
}

void engine_run_remove(uint32_t run)
{
	pthread_mutex_lock(&run_lock);
	for (size_t i = 0; i < num_runs; i++) {
		if (runs[i] == run) {
			runs[i] = runs[--num_runs];
			break;
		}
	}
	pthread_mutex_unlock(&run_lock);
}

static bool run_is_live(uint32_t run)
{
	bool live = false;

	pthread_mutex_lock(&run_lock);
	for (size_t i = 0; i < num_runs && !live; i++)
		live = runs[i] == run;
	pthread_mutex_unlock(&run_lock);
	return live;
}

/* The same process as ours, but a worker that is gone: a context of
 * ours that stopped since it exported. (A peer that lies about being us
 * only loses its own connection.) */
doca_error_t engine_peer_is_current(uint32_t conn_id, uint32_t peer_pid, uint64_t proc_start, uint32_t run,
				    bool *claims_exited)
{
	pid_t pid = (pid_t)peer_pid; /* the parser let only 1..INT32_MAX through */
	uint64_t now_start;

	*claims_exited = false;
	if (pid != getpid()) {
		/* Only a claim: the connection goes on, and the claim only
		 * explains it if the peer turns out not to answer (conn.c). */
		now_start = proc_start != 0 ? proc_start_time(pid) : 0;
		*claims_exited = (kill(pid, 0) != 0 && errno == ESRCH) || (now_start != 0 && now_start != proc_start);
		return DOCA_SUCCESS;
	}
	if ((proc_start != 0 && engine_self_start_time() != 0 && proc_start != engine_self_start_time()) ||
	    (run != 0 && !run_is_live(run))) {
		SDK_LOG_ERR_RL("rdma connection %u: DOCA_ERROR_INVALID_VALUE: the peer's descriptor is from an rdma "
			       "context of this process that has stopped since it exported it (or from an earlier "
			       "process with this pid); each doca_ctx_start makes new descriptors: export again from "
			       "the running context and pass the new descriptor",
			       conn_id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

void engine_explain_peer_exited(uint32_t conn_id, uint32_t peer_pid, const char *what)
{
	SDK_LOG_ERR_RL("rdma connection %u: DOCA_ERROR_CONNECTION_ABORTED: the peer's descriptor is from process %u on "
		       "this host, which has exited, and %s; a descriptor lives only as long as the context that "
		       "exported it: have the peer export again and pass its new descriptor",
		       conn_id, peer_pid, what);
}
