/*
 * softdoca — the set of live public objects: an open-addressing hash set of
 * pointers with their kind, under one lock. See live.h for why.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "common.h"
#include "live.h"
#include "log_internal.h"

SDK_LOG_REGISTER(CORE::LIVE)

#define LIVE_MIN_SLOTS 64u

struct live_slot {
	const void *obj;  /* NULL: empty */
	uint8_t kind;
	bool dead;        /* tombstone: keeps probe chains intact */
};

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct live_slot *live_slots;
static size_t live_cap;  /* power of two, or 0 */
static size_t live_used; /* live + tombstones */

static const char *live_kind_name(enum softdoca_live_kind kind)
{
	switch (kind) {
	case SOFTDOCA_LIVE_MMAP:
		return "doca_mmap";
	case SOFTDOCA_LIVE_BUF_INVENTORY:
		return "doca_buf_inventory";
	case SOFTDOCA_LIVE_PE:
		return "doca_pe";
	case SOFTDOCA_LIVE_CTX:
		return "doca_ctx";
	}
	return "object";
}

static size_t live_hash(const void *obj)
{
	uint64_t x = (uint64_t)(uintptr_t)obj;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

/* The slot holding obj, or NULL. Lock held. */
static struct live_slot *live_find(const void *obj)
{
	if (live_cap == 0)
		return NULL;
	for (size_t i = live_hash(obj) & (live_cap - 1), n = 0; n < live_cap; i = (i + 1) & (live_cap - 1), n++) {
		struct live_slot *s = &live_slots[i];

		if (s->obj == NULL && !s->dead)
			return NULL;
		if (s->obj == obj)
			return s;
	}
	return NULL;
}

/* Put obj in the first free or dead slot of its chain. Lock held, room
 * guaranteed by the caller. */
static void live_place(struct live_slot *slots, size_t cap, const void *obj, uint8_t kind)
{
	size_t i = live_hash(obj) & (cap - 1);

	while (slots[i].obj != NULL)
		i = (i + 1) & (cap - 1);
	slots[i].obj = obj;
	slots[i].kind = kind;
	slots[i].dead = false;
}

/* Rehash into a table twice the live count (dropping tombstones). Lock held. */
static doca_error_t live_grow(void)
{
	size_t live = 0, cap = LIVE_MIN_SLOTS;
	struct live_slot *slots;

	for (size_t i = 0; i < live_cap; i++)
		live += live_slots[i].obj != NULL;
	while (cap < 4 * (live + 1))
		cap <<= 1;
	slots = calloc(cap, sizeof(*slots));
	if (slots == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (size_t i = 0; i < live_cap; i++)
		if (live_slots[i].obj != NULL)
			live_place(slots, cap, live_slots[i].obj, live_slots[i].kind);
	free(live_slots);
	live_slots = slots;
	live_cap = cap;
	live_used = live;
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_live_add(const void *obj, enum softdoca_live_kind kind)
{
	doca_error_t status = DOCA_SUCCESS;
	struct live_slot *s;

	pthread_mutex_lock(&live_lock);
	s = live_find(obj);
	if (s != NULL) {
		s->kind = (uint8_t)kind; /* cannot happen: destroy forgets before it frees */
		goto out;
	}
	/* Keep at most half the slots used so probe chains stay short. */
	if (2 * (live_used + 1) > live_cap) {
		status = live_grow();
		if (status != DOCA_SUCCESS) {
			SDK_LOG_ERR("no memory to track a new %s", live_kind_name(kind));
			goto out;
		}
	}
	live_place(live_slots, live_cap, obj, (uint8_t)kind);
	live_used++;
out:
	pthread_mutex_unlock(&live_lock);
	return status;
}

SOFTDOCA_EXPORT void softdoca_live_remove(const void *obj)
{
	struct live_slot *s;

	pthread_mutex_lock(&live_lock);
	s = live_find(obj);
	if (s != NULL) {
		s->obj = NULL;
		s->dead = true;
	}
	pthread_mutex_unlock(&live_lock);
}

SOFTDOCA_EXPORT doca_error_t softdoca_live_check(const void *obj, enum softdoca_live_kind kind, const char *func)
{
	struct live_slot *s;
	bool ok;

	if (obj == NULL) {
		SDK_LOG_ERR("%s: %s is NULL", func, live_kind_name(kind));
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&live_lock);
	s = live_find(obj);
	ok = s != NULL && s->kind == (uint8_t)kind;
	pthread_mutex_unlock(&live_lock);
	if (ok)
		return DOCA_SUCCESS;
	SDK_LOG_ERR("%s: %p is not a live %s (destroyed already, or never created)", func, obj, live_kind_name(kind));
	return DOCA_ERROR_INVALID_VALUE;
}
