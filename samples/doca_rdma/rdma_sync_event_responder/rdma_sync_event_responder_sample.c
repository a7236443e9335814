/*
 * doca_rdma_sync_event_responder: the passive half of the sync event pair.
 * It owns a sync event that the requester updates over RDMA, and talks
 * with the requester through the event's value alone:
 *
 *   requester sets 0xD0CA  ->  this side sees it and sets 0xD0CB
 *   requester reads 0xD0CB ->  requester sets UINT64_MAX: finished
 *
 * The event's descriptor travels in the -m file (or over RDMA CM).
 *
 * This file is the sample: rdma_sync_event_responder() runs it with the
 * settings in struct rdma_config (rdma_common.h), returns what went wrong and
 * never exits the process, so a program in another language can call it.
 * rdma_sync_event_responder_main.c only reads the command line.
 */
#include <inttypes.h>

#include <doca_log.h>

#include "rdma_common.h"

DOCA_LOG_REGISTER(RDMA_SYNC_EVENT_RESPONDER);

static doca_error_t configure(struct sample *s)
{
	struct doca_sync_event *event = NULL;
	const uint8_t *desc = NULL;
	size_t desc_len = 0;
	doca_error_t result;

	result = doca_sync_event_create(&event);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot create a sync event: %s", doca_error_get_descr(result));
		return result;
	}
	result = doca_sync_event_add_publisher_location_remote_net(event);
	if (result == DOCA_SUCCESS)
		result = doca_sync_event_add_subscriber_location_cpu(event, s->dev);
	if (result == DOCA_SUCCESS)
		result = doca_sync_event_start(event);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot set up the sync event: %s", doca_error_get_descr(result));
		(void)doca_sync_event_destroy(event);
		return result;
	}
	s->event = event; /* stopped and destroyed by the shared teardown */
	result = doca_sync_event_export_to_remote_net(event, &desc, &desc_len);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot export the sync event for the requester: %s", doca_error_get_descr(result));
		return result;
	}
	s->offer_desc = desc;
	s->offer_len = desc_len;
	return DOCA_SUCCESS;
}

static bool event_reached(struct sample *s, void *target)
{
	uint64_t value = 0;

	return doca_sync_event_get(s->event, &value) == DOCA_SUCCESS && value >= *(uint64_t *)target;
}

static doca_error_t run(struct sample *s)
{
	uint64_t signal = SAMPLE_SYNC_SIGNAL, done = SAMPLE_SYNC_DONE, value = 0;
	doca_error_t result;

	DOCA_LOG_INFO("Waiting for the requester to signal the sync event (value 0x%X)", SAMPLE_SYNC_SIGNAL);
	sample_expect(s, "the requester to set the sync event to 0x%X", SAMPLE_SYNC_SIGNAL);
	result = sample_wait_until(s, event_reached, &signal);
	if (result != DOCA_SUCCESS)
		return result;
	(void)doca_sync_event_get(s->event, &value);
	DOCA_LOG_INFO("The requester signaled the sync event: value 0x%" PRIX64, value);

	result = doca_sync_event_update_set(s->event, SAMPLE_SYNC_SIGNAL + 1);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Cannot set the sync event: %s", doca_error_get_descr(result));
		return result;
	}
	DOCA_LOG_INFO("Signaled back: the sync event is now 0x%X", SAMPLE_SYNC_SIGNAL + 1);

	sample_expect(s, "the requester to notify completion through the sync event");
	result = sample_wait_until(s, event_reached, &done);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("The requester notified completion: the sync event is 0x%" PRIX64, done);
	sample_finish(s, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static const struct sample_desc responder = {
	.me = "responder",
	.peer = "requester",
	.passive = true,
	.resource = SAMPLE_RESOURCE_OFFER,
	.resource_name = "sync event",
	.mmap_permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
			    DOCA_ACCESS_FLAG_RDMA_WRITE,
	.rdma_permissions = DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE,
	.configure = configure,
	.run = run,
};

doca_error_t rdma_sync_event_responder(struct rdma_config *cfg)
{
	return sample_run(cfg, &responder, NULL);
}
