/*
 * doca_rdma_atomic_requester: the active half of the atomic pair. On the
 * responder's 64-bit value (which starts at 100) it runs
 *
 *   compare-and-swap: if it is 100, make it 1000   (prints what it found)
 *   fetch-and-add:    add 23                      (prints what it found)
 *
 * so the responder ends with 1023. Each result is the value before the
 * operation, as RDMA atomics return it.
 *
 * This file is the sample: rdma_atomic_requester() runs it with the settings
 * in struct rdma_config (rdma_common.h), returns what went wrong and never
 * exits the process, so a program in another language can call it.
 * rdma_atomic_requester_main.c only reads the command line.
 */
#include <inttypes.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_ATOMIC_REQUESTER);

/* Local memory: where each operation's result (the old value) lands. */
#define CAS_RESULT_AT 0
#define FADD_RESULT_AT 64

static doca_error_t fetch_add(struct sample *s);

static uint64_t result_value(struct sample *s, size_t at)
{
	return *(volatile uint64_t *)(s->mem + at);
}

static void cas_done(struct doca_rdma_task_atomic_cmp_swp *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct doca_task *t = doca_rdma_task_atomic_cmp_swp_as_task(task);
	doca_error_t status = doca_task_get_status(t);
	uint64_t old;

	(void)task_user_data;
	sample_release(doca_rdma_task_atomic_cmp_swp_get_dst_buf(task),
		       doca_rdma_task_atomic_cmp_swp_get_result_buf(task));
	doca_task_free(t);
	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "atomic compare-and-swap", status);
		return;
	}
	old = result_value(s, CAS_RESULT_AT);
	if (old != SAMPLE_ATOMIC_START) {
		DOCA_LOG_ERR("Compare-and-swap: the responder's value was %" PRIu64 ", not %u, so nothing was swapped",
			     old, SAMPLE_ATOMIC_START);
		sample_finish(s, DOCA_ERROR_UNEXPECTED);
		return;
	}
	DOCA_LOG_INFO("Compare-and-swap: the responder's value was %" PRIu64 ", swapped in %u", old,
		      SAMPLE_ATOMIC_SWAP);
	status = fetch_add(s);
	if (status != DOCA_SUCCESS)
		sample_finish(s, status);
}

static void fadd_done(struct doca_rdma_task_atomic_fetch_add *task, union doca_data task_user_data,
		      union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct doca_task *t = doca_rdma_task_atomic_fetch_add_as_task(task);
	doca_error_t status = doca_task_get_status(t);
	uint64_t old;

	(void)task_user_data;
	sample_release(doca_rdma_task_atomic_fetch_add_get_dst_buf(task),
		       doca_rdma_task_atomic_fetch_add_get_result_buf(task));
	doca_task_free(t);
	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "atomic fetch-and-add", status);
		return;
	}
	old = result_value(s, FADD_RESULT_AT);
	DOCA_LOG_INFO("Fetch-and-add: the responder's value was %" PRIu64 ", added %u, it is now %" PRIu64, old,
		      SAMPLE_ATOMIC_ADD, old + SAMPLE_ATOMIC_ADD);
	sample_finish(s, old == SAMPLE_ATOMIC_SWAP ? DOCA_SUCCESS : DOCA_ERROR_UNEXPECTED);
}

/* The responder's value (dst) and where the old value goes (result). */
static doca_error_t atomic_bufs(struct sample *s, size_t result_at, struct doca_buf **dst, struct doca_buf **result)
{
	doca_error_t status;

	status = sample_peer_buf(s, sizeof(uint64_t), sizeof(uint64_t), dst);
	if (status != DOCA_SUCCESS)
		return status;
	status = sample_local_buf(s, result_at, sizeof(uint64_t), 0, result);
	if (status != DOCA_SUCCESS)
		sample_release(*dst, NULL);
	return status;
}

static doca_error_t compare_and_swap(struct sample *s)
{
	struct doca_rdma_task_atomic_cmp_swp *task = NULL;
	union doca_data user_data = {.u64 = 0};
	struct doca_buf *dst = NULL, *result = NULL;
	doca_error_t status;

	status = atomic_bufs(s, CAS_RESULT_AT, &dst, &result);
	if (status != DOCA_SUCCESS)
		return status;
	status = doca_rdma_task_atomic_cmp_swp_allocate_init(s->rdma, s->conns[0], dst, result, SAMPLE_ATOMIC_START,
							     SAMPLE_ATOMIC_SWAP, user_data, &task);
	if (status != DOCA_SUCCESS)
		return sample_alloc_failed("atomic compare-and-swap", status, dst, result);
	DOCA_LOG_INFO("Compare-and-swap on the responder's value: if %u, make it %u", SAMPLE_ATOMIC_START,
		      SAMPLE_ATOMIC_SWAP);
	return sample_submit(doca_rdma_task_atomic_cmp_swp_as_task(task), "atomic compare-and-swap", dst, result);
}

static doca_error_t fetch_add(struct sample *s)
{
	struct doca_rdma_task_atomic_fetch_add *task = NULL;
	union doca_data user_data = {.u64 = 0};
	struct doca_buf *dst = NULL, *result = NULL;
	doca_error_t status;

	status = atomic_bufs(s, FADD_RESULT_AT, &dst, &result);
	if (status != DOCA_SUCCESS)
		return status;
	status = doca_rdma_task_atomic_fetch_add_allocate_init(s->rdma, s->conns[0], dst, result, SAMPLE_ATOMIC_ADD,
							       user_data, &task);
	if (status != DOCA_SUCCESS)
		return sample_alloc_failed("atomic fetch-and-add", status, dst, result);
	DOCA_LOG_INFO("Fetch-and-add on the responder's value: add %u", SAMPLE_ATOMIC_ADD);
	return sample_submit(doca_rdma_task_atomic_fetch_add_as_task(task), "atomic fetch-and-add", dst, result);
}

static doca_error_t configure(struct sample *s)
{
	doca_error_t result;

	result = doca_rdma_task_atomic_cmp_swp_set_conf(s->rdma, cas_done, cas_done, 1);
	if (result == DOCA_SUCCESS)
		result = doca_rdma_task_atomic_fetch_add_set_conf(s->rdma, fadd_done, fadd_done, 1);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot configure atomic tasks: %s", doca_error_get_descr(result));
	return result;
}

static doca_error_t run(struct sample *s)
{
	doca_error_t result;

	result = sample_peer_mmap(s);
	if (result == DOCA_SUCCESS)
		result = compare_and_swap(s);
	if (result == DOCA_SUCCESS)
		sample_expect(s, "the atomic operations on the responder's value to complete");
	return result;
}

static doca_error_t atomic_caps(const struct doca_devinfo *devinfo)
{
	doca_error_t result = doca_rdma_cap_task_atomic_cmp_swp_is_supported(devinfo);

	return result != DOCA_SUCCESS ? result : doca_rdma_cap_task_atomic_fetch_add_is_supported(devinfo);
}

static const struct sample_desc requester = {
	.me = "requester",
	.peer = "responder",
	.passive = false,
	.resource = SAMPLE_RESOURCE_NEED,
	.resource_name = "memory map",
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.cap_check = atomic_caps,
	.cap_what = "RDMA atomic compare-and-swap and fetch-and-add tasks",
	.configure = configure,
	.run = run,
};

doca_error_t rdma_atomic_requester(struct rdma_config *cfg)
{
	return sample_run(cfg, &requester, NULL);
}
