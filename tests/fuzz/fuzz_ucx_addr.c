/*
 * libFuzzer target for the UCX worker address check (src/engine/ucx_addr.c),
 * proven against real UCX: every input the check accepts is given to
 * ucp_ep_create on a live worker (in both error modes softdoca uses), the
 * workers progress a little, and the endpoint is closed with force. A UCX
 * assert, crash or hang on an accepted input is a hole in the check.
 *
 * The input is placed so that it ends at a page followed by an inaccessible
 * page: UCX is not instrumented, so a read past the end must fault to be seen.
 * The target writes two seeds (our own address, and a second worker's) into
 * $FUZZ_UCX_ADDR_SEEDS when that directory is set, at start-up and each
 * time it recycles its workers.
 *
 * Mutated addresses may name real IP addresses and process ids: run it only
 * in private network/pid/IPC/mount namespaces (tests/fuzz/run_fuzz.sh).
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include <doca_log.h>

#include "engine/ucx_addr.h"

#define PROGRESS_ROUNDS 16
#define CLOSE_ROUNDS 100000
#define RECYCLE_EPS 1000
#define FUZZ_MAX_INPUT 4096

#define MUTATE_TRIES 32

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static ucp_context_h ctx;
static ucp_worker_h worker, peer;
static uint8_t *own;
static size_t own_len;
static uint32_t ucx_version;
static uint8_t *guard_area;
static size_t page;
/* How far inputs got, printed at exit. */
static unsigned long n_inputs, n_accepted, n_created, n_recycles;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_ucx_addr: %s\n", what);
	abort();
}

static ucp_worker_h worker_new(uint8_t **addr, size_t *len)
{
	ucp_worker_params_t wp = {0};
	ucp_address_t *a;
	ucp_worker_h w;

	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	if (ucp_worker_create(ctx, &wp, &w) != UCS_OK)
		die("cannot create a UCX worker");
	if (ucp_worker_get_address(w, &a, len) != UCS_OK)
		die("cannot get the worker address");
	*addr = malloc(*len);
	if (*addr == NULL)
		die("out of memory");
	memcpy(*addr, a, *len);
	ucp_worker_release_address(w, a);
	return w;
}

static unsigned fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	if (d == NULL)
		return 0;
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static void stats_print(void)
{
	fprintf(stderr,
		"fuzz_ucx_addr: %lu inputs, %lu accepted by the check, %lu endpoints created, %lu worker recycles,"
		" %u fds open\n",
		n_inputs, n_accepted, n_created, n_recycles, fds_open());
}

static void seed_write(const char *dir, const char *name, const uint8_t *a, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(a, 1, n, f) != n)
		die("cannot write a seed");
	fclose(f);
}

/* Fresh workers (and seeds for them). UCX keeps the sockets of loopback
 * connections it accepted until the worker goes, so workers are recycled
 * every RECYCLE_EPS endpoints; libFuzzer picks up the new seeds when it
 * reloads the corpus directory. */
static void workers_open(void)
{
	const char *seeds = getenv("FUZZ_UCX_ADDR_SEEDS");
	static unsigned generation;
	uint8_t *peer_addr;
	size_t peer_len;
	char name[64];

	worker = worker_new(&own, &own_len);
	/* A second worker gives a peer that is not ourselves and answers. */
	peer = worker_new(&peer_addr, &peer_len);
	if (ucx_addr_check(own, own_len, own, own_len, ucx_version) != 0 ||
	    ucx_addr_check(peer_addr, peer_len, own, own_len, ucx_version) != 0)
		die("the check rejects a real address");
	if (seeds != NULL) {
		snprintf(name, sizeof(name), "own-%u", generation);
		seed_write(seeds, name, own, own_len);
		snprintf(name, sizeof(name), "peer-%u", generation);
		seed_write(seeds, name, peer_addr, peer_len);
	}
	generation++;
	free(peer_addr);
}

static void workers_close(void)
{
	ucp_worker_destroy(peer);
	ucp_worker_destroy(worker);
	free(own);
	own = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ucp_params_t params = {0};
	ucp_config_t *config;
	unsigned major, minor, release;

	(void)argc;
	(void)argv;
	/* Rejections are the expected outcome: keep the output quiet. */
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	ucp_get_version(&major, &minor, &release);
	ucx_version = UCX_ADDR_UCX_VERSION(major, minor);
	if (ucp_config_read(NULL, NULL, &config) != UCS_OK)
		die("cannot read the UCX configuration");
	/* As the engine sets it: peer failures are noticed in a second. */
	(void)ucp_config_modify(config, "KEEPALIVE_INTERVAL", "1s");
	params.field_mask = UCP_PARAM_FIELD_FEATURES;
	params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	if (ucp_init(&params, config, &ctx) != UCS_OK)
		die("cannot start UCX");
	ucp_config_release(config);
	workers_open();
	atexit(stats_print);
	page = (size_t)sysconf(_SC_PAGESIZE);
	guard_area = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard_area == MAP_FAILED || mprotect(guard_area + 2 * page, page, PROT_NONE) != 0)
		die("cannot map the guarded input area");
	return 0;
}

static void ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
	(void)arg;
	(void)ep;
	(void)status;
}

static void progress(unsigned rounds)
{
	for (unsigned i = 0; i < rounds; i++) {
		ucp_worker_progress(worker);
		ucp_worker_progress(peer);
	}
}

static void ep_try(const uint8_t *addr, ucp_err_handling_mode_t mode)
{
	ucp_ep_params_t ep = {0};
	ucp_request_param_t close = {0};
	ucp_ep_h h;
	void *req;
	unsigned i;

	ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
			UCP_EP_PARAM_FIELD_ERR_HANDLER;
	ep.address = (const ucp_address_t *)addr;
	ep.err_mode = mode;
	ep.err_handler.cb = ep_error;
	if (ucp_ep_create(worker, &ep, &h) != UCS_OK)
		return;
	n_created++;
	progress(PROGRESS_ROUNDS);
	close.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	close.flags = UCP_EP_CLOSE_FLAG_FORCE;
	req = ucp_ep_close_nbx(h, &close);
	if (UCS_PTR_IS_ERR(req) || req == NULL)
		return;
	for (i = 0; i < CLOSE_ROUNDS && ucp_request_check_status(req) == UCS_INPROGRESS; i++)
		progress(1);
	if (i == CLOSE_ROUNDS)
		die("closing an endpoint never completes");
	ucp_request_free(req);
}

/* Most random mutants are malformed, and the check (cheap) rejects them
 * before UCX (costly) sees anything; prefer mutants the check accepts, so
 * UCX gets to judge as many as possible. Every other round is a plain
 * mutation, so the rejecting paths keep being explored too. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint8_t keep[FUZZ_MAX_INPUT];
	size_t n = size;

	if ((seed & 1) || size > sizeof(keep))
		return LLVMFuzzerMutate(data, size, max_size);
	memcpy(keep, data, size);
	for (int i = 0; i < MUTATE_TRIES; i++) {
		memcpy(data, keep, size);
		n = LLVMFuzzerMutate(data, size, max_size);
		if (ucx_addr_check(data, n, own, own_len, ucx_version) == DOCA_SUCCESS)
			break;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *addr;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	n_inputs++;
	addr = guard_area + 2 * page - size;
	memcpy(addr, data, size);
	if (ucx_addr_check(addr, size, own, own_len, ucx_version) != DOCA_SUCCESS)
		return 0;
	n_accepted++;
	ep_try(addr, UCP_ERR_HANDLING_MODE_PEER);
	ep_try(addr, UCP_ERR_HANDLING_MODE_NONE);
	if (n_created >= (n_recycles + 1) * RECYCLE_EPS) {
		n_recycles++;
		workers_close();
		workers_open();
	}
	return 0;
}
