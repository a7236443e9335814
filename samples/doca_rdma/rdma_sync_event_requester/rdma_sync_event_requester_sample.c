/*
 * doca_rdma_sync_event_requester: the active half of the sync event pair.
 * Through the responder's exported sync event it
 *
 *   sets the event to 0xD0CA                 (notify_set task)
 *   reads it until the responder answered    (get task, resubmitted)
 *   sets it to UINT64_MAX: finished          (notify_set task)
 *
 * This file is the sample: rdma_sync_event_requester() runs it with the
 * settings in struct rdma_config (rdma_common.h), returns what went wrong and
 * never exits the process, so a program in another language can call it.
 * rdma_sync_event_requester_main.c only reads the command line.
 */
#include <inttypes.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_SYNC_EVENT_REQUESTER);

/* Local memory: the value to set at offset 0, the value read at GET_AT. */
#define SET_AT 0
#define GET_AT 64

struct requester {
	struct doca_buf *set_buf;
	struct doca_buf *get_buf;
	bool finishing; /* the "finished" notify_set was submitted */
	uint64_t polls;
};

static doca_error_t notify_set(struct sample *s, uint64_t value);

static void get_done(struct doca_rdma_task_remote_net_sync_event_get *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct requester *r = s->app;
	struct doca_task *t = doca_rdma_task_remote_net_sync_event_get_as_task(task);
	doca_error_t status = doca_task_get_status(t);
	uint64_t value;

	(void)task_user_data;
	if (status != DOCA_SUCCESS) {
		doca_task_free(t);
		sample_task_failed(s, "remote sync event get", status);
		return;
	}
	value = *(uint64_t *)(s->mem + GET_AT);
	r->polls++;
	if (value <= SAMPLE_SYNC_SIGNAL && !s->done) {
		/* Not answered yet: read again with the same task. */
		status = doca_buf_reset_data_len(r->get_buf);
		if (status == DOCA_SUCCESS)
			status = doca_task_submit(t);
		if (status != DOCA_SUCCESS) {
			DOCA_LOG_ERR("Cannot read the sync event again: %s", doca_error_get_descr(status));
			doca_task_free(t);
			sample_finish(s, status);
		}
		return;
	}
	doca_task_free(t);
	DOCA_LOG_INFO("Received sync event value 0x%" PRIX64 " (after %" PRIu64 " reads)", value, r->polls);
	DOCA_LOG_INFO("Notifying the responder that the exchange is complete");
	r->finishing = true;
	status = notify_set(s, SAMPLE_SYNC_DONE);
	if (status != DOCA_SUCCESS)
		sample_finish(s, status);
}

static doca_error_t read_event(struct sample *s)
{
	struct requester *r = s->app;
	struct doca_rdma_task_remote_net_sync_event_get *task = NULL;
	union doca_data user_data = {.u64 = 0};
	doca_error_t result;

	result = doca_rdma_task_remote_net_sync_event_get_allocate_init(s->rdma, s->conns[0], s->peer_event,
									r->get_buf, user_data, &task);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot allocate a remote sync event get task: %s", doca_error_get_descr(result));
		return result;
	}
	return sample_submit(doca_rdma_task_remote_net_sync_event_get_as_task(task), "remote sync event get", NULL,
			     NULL);
}

static void set_done(struct doca_rdma_task_remote_net_sync_event_notify_set *task, union doca_data task_user_data,
		     union doca_data ctx_user_data)
{
	struct sample *s = ctx_user_data.ptr;
	struct requester *r = s->app;
	struct doca_task *t = doca_rdma_task_remote_net_sync_event_notify_set_as_task(task);
	doca_error_t status = doca_task_get_status(t);

	(void)task_user_data;
	doca_task_free(t);
	if (status != DOCA_SUCCESS) {
		sample_task_failed(s, "remote sync event notify set", status);
		return;
	}
	if (r->finishing) {
		DOCA_LOG_INFO("Remote sync event has been notified for completion");
		sample_finish(s, DOCA_SUCCESS);
		return;
	}
	DOCA_LOG_INFO("Signaled the responder; reading the sync event until it answers");
	sample_expect(s, "the responder to answer through the sync event");
	status = read_event(s);
	if (status != DOCA_SUCCESS)
		sample_finish(s, status);
}

static doca_error_t notify_set(struct sample *s, uint64_t value)
{
	struct requester *r = s->app;
	struct doca_rdma_task_remote_net_sync_event_notify_set *task = NULL;
	union doca_data user_data = {.u64 = 0};
	doca_error_t result;

	*(uint64_t *)(s->mem + SET_AT) = value;
	result = doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(s->rdma, s->conns[0], s->peer_event,
									       r->set_buf, user_data, &task);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot allocate a remote sync event notify set task: %s", doca_error_get_descr(result));
		return result;
	}
	return sample_submit(doca_rdma_task_remote_net_sync_event_notify_set_as_task(task),
			     "remote sync event notify set", NULL, NULL);
}

static doca_error_t configure(struct sample *s)
{
	doca_error_t result;

	result = doca_rdma_task_remote_net_sync_event_notify_set_set_conf(s->rdma, set_done, set_done, 1);
	if (result == DOCA_SUCCESS)
		result = doca_rdma_task_remote_net_sync_event_get_set_conf(s->rdma, get_done, get_done, 1);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Cannot configure remote sync event tasks: %s", doca_error_get_descr(result));
	return result;
}

static doca_error_t run(struct sample *s)
{
	struct requester *r = s->app;
	doca_error_t result;

	result = doca_sync_event_remote_net_create_from_export(s->dev, s->peer_desc, s->peer_desc_len, &s->peer_event);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The responder's sync event descriptor (%s) was refused: %s (%s)", s->peer_desc_source,
			     doca_error_get_descr(result), doca_error_get_name(result));
		s->peer_event = NULL;
		return result;
	}
	result = sample_local_buf(s, SET_AT, sizeof(uint64_t), sizeof(uint64_t), &r->set_buf);
	if (result == DOCA_SUCCESS)
		result = sample_local_buf(s, GET_AT, sizeof(uint64_t), 0, &r->get_buf);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("Signaling the responder's sync event with 0x%X", SAMPLE_SYNC_SIGNAL);
	sample_expect(s, "the responder's sync event to take the signal");
	return notify_set(s, SAMPLE_SYNC_SIGNAL);
}

static void cleanup(struct sample *s)
{
	struct requester *r = s->app;

	sample_release(r->set_buf, r->get_buf);
	r->set_buf = NULL;
	r->get_buf = NULL;
}

static doca_error_t sync_event_caps(const struct doca_devinfo *devinfo)
{
	doca_error_t result = doca_rdma_cap_task_remote_net_sync_event_notify_set_is_supported(devinfo);

	return result != DOCA_SUCCESS ? result : doca_rdma_cap_task_remote_net_sync_event_get_is_supported(devinfo);
}

static const struct sample_desc requester_desc = {
	.me = "requester",
	.peer = "responder",
	.passive = false,
	.resource = SAMPLE_RESOURCE_NEED,
	.resource_name = "sync event",
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE,
	.cap_check = sync_event_caps,
	.cap_what = "remote sync event get and notify set tasks",
	.configure = configure,
	.run = run,
	.cleanup = cleanup,
};

doca_error_t rdma_sync_event_requester(struct rdma_config *cfg)
{
	struct requester requester = {0};

	return sample_run(cfg, &requester_desc, &requester);
}
