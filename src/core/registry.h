/*
 * softdoca — objects peers reach by (id, secret): exported memory regions
 * and exported sync events. Not installed.
 *
 * An entry is embedded in the object it makes reachable. Adding gives it a
 * fresh id (never reused) and a fresh secret; holding it (for a remote
 * operation) keeps it from going away; removing it revokes at once and
 * waits until nobody holds it, so nothing touches the object after.
 */
#ifndef SOFTDOCA_CORE_REGISTRY_H_
#define SOFTDOCA_CORE_REGISTRY_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

#define CORE_REGISTRY_SECRET_LEN 16
#define CORE_REGISTRY_BUCKETS 64

struct core_registry_entry {
	uint64_t id;
	uint8_t secret[CORE_REGISTRY_SECRET_LEN];
	bool registered;                  /* reachable now (under the lock) */
	atomic_bool removing;             /* core_registry_remove waits for the holds to go */
	atomic_uint holds;                /* remote operations using it */
	struct core_registry_entry *next; /* bucket chain */
};

struct core_registry {
	pthread_mutex_t lock;
	pthread_cond_t idle; /* an entry's holds dropped to zero */
	uint64_t next_id;
	struct core_registry_entry *buckets[CORE_REGISTRY_BUCKETS];
};

#define CORE_REGISTRY_INIT {.lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER, .next_id = 1}

/* Make e reachable under a fresh id and secret (never all zero). */
doca_error_t core_registry_add(struct core_registry *r, struct core_registry_entry *e);

/* Revoke e (if reachable) and wait until nobody holds it. */
void core_registry_remove(struct core_registry *r, struct core_registry_entry *e);

/* Find and hold the entry with this id if the secret matches (constant
 * time). DOCA_ERROR_NOT_FOUND if no such entry, DOCA_ERROR_AUTHENTICATION
 * if the secret is wrong. No log: the caller says what was looked for. */
doca_error_t core_registry_hold(struct core_registry *r, uint64_t id, const uint8_t *secret,
				struct core_registry_entry **e_out);

/* Drop a hold; false if e was not held (a bug in the caller). */
bool core_registry_release(struct core_registry *r, struct core_registry_entry *e);

#endif /* SOFTDOCA_CORE_REGISTRY_H_ */
