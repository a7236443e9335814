/*
 * softdoca — the registry of objects peers reach by (id, secret).
 *
 * The table (buckets, registered) changes under the lock, and a hold is
 * taken under it; a hold is given back without it (this runs for every
 * remote operation): the count is atomic, and only the last release of
 * an entry being removed takes the lock, to wake the remover. Both sides
 * are sequentially consistent: either the remover sees the count
 * dropped, or the releaser sees the removal and wakes it.
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
	atomic_store(&e->holds, 0);
	atomic_store(&e->removing, false);
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
		atomic_store(&e->removing, true);
		while (atomic_load(&e->holds) > 0)
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
			atomic_fetch_add(&e->holds, 1);
			*e_out = e;
			status = DOCA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return status;
}

bool core_registry_release(struct core_registry *r, struct core_registry_entry *e)
{
	uint32_t holds = atomic_load(&e->holds);

	do {
		if (holds == 0)
			return false; /* not held: the caller's bug, nothing to undo */
	} while (!atomic_compare_exchange_weak(&e->holds, &holds, holds - 1));
	if (holds == 1 && atomic_load(&e->removing)) {
		pthread_mutex_lock(&r->lock);
		pthread_cond_broadcast(&r->idle);
		pthread_mutex_unlock(&r->lock);
	}
	return true;
}
