/*
 * softdoca — the registry of objects peers reach by (id, secret).
 */
#include <string.h>

#include "registry.h"
#include "secret.h"

static struct core_registry_entry **bucket_of(struct core_registry *r, uint64_t id)
{
	return &r->buckets[id % CORE_REGISTRY_BUCKETS];
}

doca_error_t core_registry_add(struct core_registry *r, struct core_registry_entry *e)
{
	uint8_t secret[CORE_REGISTRY_SECRET_LEN];
	struct core_registry_entry **bucket;
	doca_error_t err = softdoca_secret_generate(secret, sizeof(secret));

	if (err != DOCA_SUCCESS)
		return err;
	pthread_mutex_lock(&r->lock);
	e->id = r->next_id++;
	memcpy(e->secret, secret, sizeof(secret));
	e->holds = 0;
	bucket = bucket_of(r, e->id);
	e->next = *bucket;
	*bucket = e;
	e->registered = true;
	pthread_mutex_unlock(&r->lock);
	return DOCA_SUCCESS;
}

void core_registry_remove(struct core_registry *r, struct core_registry_entry *e)
{
	struct core_registry_entry **link;

	pthread_mutex_lock(&r->lock);
	if (e->registered) {
		for (link = bucket_of(r, e->id); *link != e; link = &(*link)->next)
			;
		*link = e->next;
		e->next = NULL;
		e->registered = false;
		while (e->holds > 0)
			pthread_cond_wait(&r->idle, &r->lock);
	}
	pthread_mutex_unlock(&r->lock);
}

doca_error_t core_registry_hold(struct core_registry *r, uint64_t id, const uint8_t *secret,
				struct core_registry_entry **e_out)
{
	struct core_registry_entry *e;
	doca_error_t status = DOCA_ERROR_NOT_FOUND;

	pthread_mutex_lock(&r->lock);
	for (e = *bucket_of(r, id); e != NULL && e->id != id; e = e->next)
		;
	if (e != NULL) {
		status = DOCA_ERROR_AUTHENTICATION;
		if (softdoca_secret_equal(e->secret, secret, CORE_REGISTRY_SECRET_LEN)) {
			e->holds++;
			*e_out = e;
			status = DOCA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return status;
}

bool core_registry_release(struct core_registry *r, struct core_registry_entry *e)
{
	bool held;

	pthread_mutex_lock(&r->lock);
	held = e->holds > 0;
	if (held && --e->holds == 0)
		pthread_cond_broadcast(&r->idle);
	pthread_mutex_unlock(&r->lock);
	return held;
}
