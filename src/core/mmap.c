/*
 * softdoca — memory maps: configuration and life cycle, RDMA export
 * descriptors, and the region table the engine checks remote operations
 * against (see mmap.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_mmap.h>

#include "log_internal.h"
#include "desc.h"
#include "dev.h"
#include "bad_state.h"
#include "mmap.h"
#include "mmap_pci.h"
#include "live.h"
#include "registry.h"
#include "secret.h"

SDK_LOG_REGISTER(MMAP);

/* Log an error where it is detected and yield the code, in one expression. */
#define FAIL(err, ...) (SDK_LOG_ERR(__VA_ARGS__), (err))

#define MMAP_DEFAULT_MAX_DEVS 64u
#define MMAP_LIMIT_MAX_DEVS 65535u

#define DESC_MAGIC "SDMM"


struct doca_mmap {
	/* Configuration. */
	uintptr_t addr;
	size_t len;
	bool range_set;
	uint32_t permissions;
	struct doca_dev **devs;
	uint32_t num_devs;
	uint32_t max_devs;
	union doca_data user_data;
	doca_mmap_memrange_free_cb_t *free_cb;
	void *free_opaque;
	bool thread_safe;

	/* Life cycle. */
	bool started;
	bool ever_started;
	bool from_export;

	/* One reference held by the object itself plus one per doca_buf, so
	 * an mmap destroyed in thread-safe mode lives until its last buf. */
	atomic_uint refs;

	/* Export of a local mmap: reachable by region id and secret. */
	uint8_t *desc; /* last descriptor handed out; freed at destroy */
	struct core_registry_entry region;

	/* What a from-export mmap grants. */
	struct softdoca_mmap_desc remote;

	/* PCI export of a local mmap, and the import behind an mmap created
	 * from a PCI export (mmap_pci.c). */
	struct core_pci_export pci_export;
	struct core_pci_import *pci_import;
};

_Static_assert(SOFTDOCA_MMAP_SECRET_LEN == CORE_REGISTRY_SECRET_LEN, "one secret length");

/* The region table: exported, started local mmaps by region id. */
static struct core_registry regions = CORE_REGISTRY_INIT;
static pthread_mutex_t nonce_lock = PTHREAD_MUTEX_INITIALIZER;
static bool process_nonce_ready;
static uint64_t process_nonce;

/* ------------------------------------------------------------------ */
/* Little helpers                                                       */

static void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)get_le16(p) | ((uint32_t)get_le16(p + 2) << 16);
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | ((uint64_t)get_le32(p + 4) << 32);
}


static uint32_t mmap_num_bufs(const struct doca_mmap *mmap)
{
	/* Minus the reference the object holds on itself. */
	return atomic_load(&mmap->refs) - 1;
}

static int mmap_find_dev(const struct doca_mmap *mmap, const struct doca_dev *dev)
{
	for (uint32_t i = 0; i < mmap->num_devs; i++)
		if (mmap->devs[i] == dev)
			return (int)i;
	return -1;
}

static struct doca_mmap *mmap_alloc(uint32_t max_devs)
{
	struct doca_mmap *mmap = calloc(1, sizeof(*mmap));

	if (mmap == NULL)
		return NULL;
	mmap->devs = calloc(max_devs, sizeof(*mmap->devs));
	if (mmap->devs == NULL) {
		free(mmap);
		return NULL;
	}
	mmap->max_devs = max_devs;
	atomic_init(&mmap->refs, 1);
	return mmap;
}

static void mmap_pci_free(struct doca_mmap *mmap);

static void mmap_free(struct doca_mmap *mmap)
{
	uint32_t i;

	for (i = 0; i < mmap->num_devs; i++)
		softdoca_dev_release(mmap->devs[i]);
	mmap_pci_free(mmap);
	free(mmap->desc);
	free(mmap->devs);
	free(mmap);
}

/* Drop one reference; the last one frees the object. */
static void mmap_put(struct doca_mmap *mmap)
{
	if (atomic_fetch_sub(&mmap->refs, 1) == 1)
		mmap_free(mmap);
}

/* The one place that decides whether the configuration may still change.
 * DOCA answers BAD_STATE for the set_* calls on a started mmap and
 * NOT_PERMITTED for device changes; callers pass which. */
/* "not started", "started", "stopped": for the BAD_STATE lines. */
static const char *mmap_state(const struct doca_mmap *mmap)
{
	if (mmap->started)
		return mmap->from_export ? "started (created from an export)" : "started";
	return mmap->ever_started ? "stopped" : "not started";
}

static doca_error_t mmap_bad_state(const struct doca_mmap *mmap, const char *call, const char *needs,
				   const char *hint)
{
	return softdoca_bad_state(call, "mmap", mmap_state(mmap), needs, hint);
}

/* Bufs still point into it: DOCA answers NOT_PERMITTED. */
static doca_error_t mmap_refuse_bufs(const struct doca_mmap *mmap, const char *call, uint32_t num_bufs)
{
	char state[96];

	snprintf(state, sizeof(state), "%s with %u doca_buf(s) pointing into it", mmap_state(mmap), num_bufs);
	return softdoca_lifecycle_refuse(DOCA_ERROR_NOT_PERMITTED, call, "mmap", state, "without bufs",
					 "release them (doca_buf_dec_refcount) first");
}

static doca_error_t mmap_check_config(const struct doca_mmap *mmap, doca_error_t started_err, const char *op)
{
	if (mmap->started && started_err == DOCA_ERROR_BAD_STATE)
		return mmap_bad_state(mmap, op, "not started",
				      "set its properties before doca_mmap_start, or stop it first");
	if (mmap->started)
		return FAIL(started_err, "%s: mmap is started; stop it before changing its configuration", op);
	if (mmap->from_export)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "%s: an mmap created from an export cannot be configured", op);
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Region table                                                         */

/* Give a started mmap a fresh id and secret and make it reachable. */
static doca_error_t region_register(struct doca_mmap *mmap)
{
	return core_registry_add(&regions, &mmap->region);
}

/* Revoke: make the region unreachable, then wait until no remote operation
 * still holds it, so nothing touches the memory after we return. */
static void region_unregister(struct doca_mmap *mmap)
{
	core_registry_remove(&regions, &mmap->region);
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_region_lookup(uint64_t region_id,
							  const uint8_t secret[SOFTDOCA_MMAP_SECRET_LEN],
							  struct softdoca_mmap_region *region)
{
	struct core_registry_entry *e;
	struct doca_mmap *mmap;
	doca_error_t status;

	if (secret == NULL || region == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "region lookup: NULL secret or output");
	status = core_registry_hold(&regions, region_id, secret, &e);
	if (status == DOCA_ERROR_NOT_FOUND)
		return FAIL(DOCA_ERROR_NOT_FOUND, "memory region %llu is unknown or was revoked (mmap stopped)",
			    (unsigned long long)region_id);
	if (status != DOCA_SUCCESS)
		return FAIL(DOCA_ERROR_AUTHENTICATION, "wrong secret for memory region %llu",
			    (unsigned long long)region_id);
	/* Held: the range and permissions cannot change until release. */
	mmap = container_of(e, struct doca_mmap, region);
	region->mmap = mmap;
	region->addr = mmap->addr;
	region->len = mmap->len;
	region->permissions = mmap->permissions;
	region->pci = mmap->pci_import;
	return DOCA_SUCCESS;
}

static doca_error_t region_check_range(const struct softdoca_mmap_region *region, uint64_t addr, uint64_t len,
				       uint32_t need_perms);

SOFTDOCA_EXPORT void softdoca_mmap_region_release(struct softdoca_mmap_region *region)
{
	struct doca_mmap *mmap;

	if (region == NULL || region->mmap == NULL)
		return;
	mmap = region->mmap;
	region->mmap = NULL; /* a second release is a no-op */
	if (!core_registry_release(&regions, &mmap->region))
		SDK_LOG_ERR("memory region %llu released more often than held", (unsigned long long)mmap->region.id);
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_region_check(const struct softdoca_mmap_region *region, uint64_t addr,
							 uint64_t len, uint32_t need_perms, void **local)
{
	doca_error_t err;

	if (region == NULL || region->mmap == NULL || local == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "region check: region not held or NULL output");
	if (region->pci != NULL)
		return FAIL(DOCA_ERROR_NOT_SUPPORTED,
			    "memory region %llu lives in another process (created from a PCI export); this engine "
			    "cannot reach it",
			    (unsigned long long)region->mmap->region.id);
	err = region_check_range(region, addr, len, need_perms);
	if (err != DOCA_SUCCESS)
		return err;
	*local = (void *)(uintptr_t)addr;
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_region_check_pci(const struct softdoca_mmap_region *region, uint64_t addr,
							     uint64_t len, uint32_t need_perms)
{
	if (region == NULL || region->mmap == NULL || region->pci == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI region check: region not held or not from a PCI export");
	return region_check_range(region, addr, len, need_perms);
}

/* Range and permission of a remote access to a held region. */
static doca_error_t region_check_range(const struct softdoca_mmap_region *region, uint64_t addr, uint64_t len,
				       uint32_t need_perms)
{
	/* Written so that nothing can overflow. */
	if (addr < region->addr || len > region->len || addr - region->addr > region->len - len)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "remote access [0x%llx, +%llu) is outside memory region [0x%llx, +%llu)",
			    (unsigned long long)addr, (unsigned long long)len, (unsigned long long)region->addr,
			    (unsigned long long)region->len);
	if ((region->permissions & need_perms) != need_perms)
		return FAIL(DOCA_ERROR_NOT_PERMITTED,
			    "remote access needs permission 0x%x but the memory region grants only 0x%x",
			    need_perms, region->permissions);
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT const char *softdoca_access_flag_name(uint32_t flag)
{
	switch (flag) {
	case DOCA_ACCESS_FLAG_LOCAL_READ_WRITE:
		return "DOCA_ACCESS_FLAG_LOCAL_READ_WRITE";
	case DOCA_ACCESS_FLAG_RDMA_READ:
		return "DOCA_ACCESS_FLAG_RDMA_READ";
	case DOCA_ACCESS_FLAG_RDMA_WRITE:
		return "DOCA_ACCESS_FLAG_RDMA_WRITE";
	case DOCA_ACCESS_FLAG_RDMA_ATOMIC:
		return "DOCA_ACCESS_FLAG_RDMA_ATOMIC";
	case DOCA_ACCESS_FLAG_PCI_READ_ONLY:
		return "DOCA_ACCESS_FLAG_PCI_READ_ONLY";
	case DOCA_ACCESS_FLAG_PCI_READ_WRITE:
		return "DOCA_ACCESS_FLAG_PCI_READ_WRITE";
	case DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING:
		return "DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING";
	default:
		return "DOCA_ACCESS_FLAG (not a single flag)";
	}
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_process_identity(uint32_t *pid, uint64_t *nonce)
{
	doca_error_t err = DOCA_SUCCESS;

	if (pid == NULL || nonce == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "process identity: NULL output");

	pthread_mutex_lock(&nonce_lock);
	if (!process_nonce_ready) {
		err = softdoca_random_fill(&process_nonce, sizeof(process_nonce));
		process_nonce_ready = err == DOCA_SUCCESS;
	}
	pthread_mutex_unlock(&nonce_lock);
	if (err != DOCA_SUCCESS)
		return err;

	*pid = (uint32_t)getpid();
	*nonce = process_nonce;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Descriptors                                                          */

static void desc_encode(const struct doca_mmap *mmap, uint32_t pid, uint64_t nonce, uint8_t *p)
{
	memcpy(p, DESC_MAGIC, 4);
	put_le16(p + 4, SOFTDOCA_MMAP_DESC_VERSION);
	put_le16(p + 6, 0);
	put_le32(p + 8, SOFTDOCA_MMAP_DESC_LEN);
	put_le32(p + 12, mmap->permissions);
	put_le64(p + 16, mmap->region.id);
	memcpy(p + 24, mmap->region.secret, SOFTDOCA_MMAP_SECRET_LEN);
	put_le64(p + 40, (uint64_t)mmap->addr);
	put_le64(p + 48, (uint64_t)mmap->len);
	put_le32(p + 56, pid);
	put_le32(p + 60, 0);
	put_le64(p + 64, nonce);
}

/* Magic, version and length: what every version shares. */
static const struct core_desc_format desc_format = {
	.magic = DESC_MAGIC,
	.version = SOFTDOCA_MMAP_DESC_VERSION,
	.len = SOFTDOCA_MMAP_DESC_LEN,
	.what = "mmap descriptor",
	.magic_what = "mmap export descriptor",
	.log_source = &sdk_log_source,
};

/* The version 1 fields; the caller checked the length. */
static doca_error_t desc_parse_v1(const uint8_t *p, struct softdoca_mmap_desc *d)
{
	d->version = SOFTDOCA_MMAP_DESC_VERSION;
	d->permissions = get_le32(p + 12);
	d->region_id = get_le64(p + 16);
	memcpy(d->secret, p + 24, SOFTDOCA_MMAP_SECRET_LEN);
	d->addr = get_le64(p + 40);
	d->len = get_le64(p + 48);
	d->pid = get_le32(p + 56);
	d->process_nonce = get_le64(p + 64);

	if (d->permissions & ~SOFTDOCA_ACCESS_ALL_FLAGS)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor has unknown permission bits 0x%x",
			    d->permissions & ~SOFTDOCA_ACCESS_ALL_FLAGS);
	if ((d->permissions & SOFTDOCA_ACCESS_RDMA_FLAGS) == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor grants no RDMA access (permissions 0x%x)",
			    d->permissions);
	if (d->region_id == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor has region id 0");
	if (softdoca_bytes_all_zero(d->secret, SOFTDOCA_MMAP_SECRET_LEN))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor has an all-zero secret");
	if (d->addr == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor has address 0");
	if (d->len == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor has length 0");
	if (d->len > UINT64_MAX - d->addr)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor range 0x%llx + %llu overflows",
			    (unsigned long long)d->addr, (unsigned long long)d->len);
	if (d->pid == 0 || d->pid > INT32_MAX)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor has invalid process id %u", d->pid);
	if (get_le32(p + 60) != 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap descriptor reserved field is not zero");
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_desc_parse(const void *desc, size_t desc_len,
						       struct softdoca_mmap_desc *out)
{
	struct softdoca_mmap_desc d;
	doca_error_t err;

	err = core_desc_check_header(desc, desc_len, out, &desc_format);
	if (err != DOCA_SUCCESS)
		return err;
	err = desc_parse_v1(desc, &d);
	if (err != DOCA_SUCCESS)
		return err;
	*out = d;
	return DOCA_SUCCESS;
}

/* Register the mmap and write a fresh descriptor for it. */
static doca_error_t mmap_export_new(struct doca_mmap *mmap)
{
	uint8_t *desc;
	uint32_t pid;
	uint64_t nonce;
	doca_error_t err;

	desc = malloc(SOFTDOCA_MMAP_DESC_LEN);
	if (desc == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "failed to allocate an mmap export descriptor");
	err = softdoca_mmap_process_identity(&pid, &nonce);
	if (err != DOCA_SUCCESS)
		goto free_desc;
	err = region_register(mmap);
	if (err != DOCA_SUCCESS)
		goto free_desc;
	desc_encode(mmap, pid, nonce, desc);
	/* An older descriptor (from before a stop) is revoked already. */
	free(mmap->desc);
	mmap->desc = desc;
	return DOCA_SUCCESS;

free_desc:
	free(desc);
	return err;
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                           */

DOCA_STABLE
doca_error_t doca_mmap_create(struct doca_mmap **mmap)
{
	struct doca_mmap *new_mmap;

	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap output pointer is NULL");
	new_mmap = mmap_alloc(MMAP_DEFAULT_MAX_DEVS);
	if (new_mmap == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "failed to allocate an mmap");
	if (softdoca_live_add(new_mmap, SOFTDOCA_LIVE_MMAP) != DOCA_SUCCESS) {
		mmap_free(new_mmap);
		return DOCA_ERROR_NO_MEMORY;
	}
	new_mmap->permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;
	*mmap = new_mmap;
	return DOCA_SUCCESS;
}

/* Stop without checks: revoke the export, then leave the started state. */
static void mmap_stop_now(struct doca_mmap *mmap)
{
	region_unregister(mmap);
	core_pci_export_revoke(&mmap->pci_export);
	mmap->started = false;
}

DOCA_STABLE
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap)
{
	uint32_t num_bufs;

	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	num_bufs = mmap_num_bufs(mmap);
	if (num_bufs > 0 && !mmap->thread_safe)
		return mmap_refuse_bufs(mmap, __func__, num_bufs);
	if (mmap->started)
		mmap_stop_now(mmap);
	if (mmap->free_cb != NULL && mmap->ever_started && !mmap->from_export)
		mmap->free_cb((void *)mmap->addr, mmap->len, mmap->free_opaque);
	/* Gone for the application now, even if bufs keep the memory a while. */
	softdoca_live_remove(mmap);
	mmap_put(mmap);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_start(struct doca_mmap *mmap)
{
	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (mmap->started)
		return mmap_bad_state(mmap, __func__, "not started", "it was started already; start it once");
	if (mmap->from_export)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "an mmap created from an export cannot be started again");
	if (!mmap->range_set)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "cannot start mmap: no memory range (doca_mmap_set_memrange)");
	if (mmap->num_devs == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "cannot start mmap: no device added (doca_mmap_add_dev)");
	mmap->started = true;
	mmap->ever_started = true;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_stop(struct doca_mmap *mmap)
{
	uint32_t num_bufs;

	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (!mmap->started)
		return mmap_bad_state(mmap, __func__, "started", "only a started mmap stops");
	num_bufs = mmap_num_bufs(mmap);
	if (num_bufs > 0)
		return mmap_refuse_bufs(mmap, __func__, num_bufs);
	mmap_stop_now(mmap);
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_enable_thread_safety(struct doca_mmap *mmap)
{
	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	/* An mmap created from an export is born started; NVIDIA's storage
	 * application enables thread safety on one right after creating it,
	 * so that is allowed until its first buf. */
	if (mmap->started && !mmap->from_export)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "thread safety must be enabled before the mmap is started");
	if (mmap_num_bufs(mmap) > 0)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "thread safety must be enabled before any doca_buf is taken from the mmap");
	mmap->thread_safe = true;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Configuration                                                        */

DOCA_STABLE
doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev)
{
	doca_error_t err;

	if (mmap == NULL || dev == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or dev is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	err = mmap_check_config(mmap, DOCA_ERROR_NOT_PERMITTED, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	if (mmap_find_dev(mmap, dev) >= 0)
		return FAIL(DOCA_ERROR_ALREADY_EXIST, "device already added to this mmap");
	if (mmap->num_devs == mmap->max_devs)
		return FAIL(DOCA_ERROR_NO_MEMORY, "mmap already has its maximum of %u devices", mmap->max_devs);
	mmap->devs[mmap->num_devs++] = dev;
	/* The device must outlive the mmap: doca_dev_close says IN_USE. */
	softdoca_dev_hold(dev);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev)
{
	doca_error_t err;
	int idx;

	if (mmap == NULL || dev == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or dev is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	err = mmap_check_config(mmap, DOCA_ERROR_NOT_PERMITTED, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	idx = mmap_find_dev(mmap, dev);
	if (idx < 0)
		return FAIL(DOCA_ERROR_NOT_FOUND, "device was not added to this mmap");
	mmap->devs[idx] = mmap->devs[--mmap->num_devs];
	mmap->devs[mmap->num_devs] = NULL;
	softdoca_dev_release(dev);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len)
{
	doca_error_t err;

	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (addr == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "memory range address is NULL");
	if (len == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "memory range length is 0");
	if (len > UINTPTR_MAX - (uintptr_t)addr)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "memory range %p + %zu wraps around the address space", addr, len);
	err = mmap_check_config(mmap, DOCA_ERROR_BAD_STATE, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	if (mmap->range_set)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "mmap memory range is already set; it can be set only once");
	mmap->addr = (uintptr_t)addr;
	mmap->len = len;
	mmap->range_set = true;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len)
{
	if (mmap == NULL || addr == NULL || len == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or an output pointer is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (!mmap->range_set)
		return softdoca_bad_state(__func__, "mmap", "without a memory range", "given one",
					  "call doca_mmap_set_memrange first");
	*addr = (void *)mmap->addr;
	*len = mmap->len;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask)
{
	doca_error_t err;

	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (access_mask & ~SOFTDOCA_ACCESS_ALL_FLAGS)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "unknown access flag bits 0x%x",
			    access_mask & ~SOFTDOCA_ACCESS_ALL_FLAGS);
	err = mmap_check_config(mmap, DOCA_ERROR_BAD_STATE, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	mmap->permissions = access_mask;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data)
{
	doca_error_t err;

	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	err = mmap_check_config(mmap, DOCA_ERROR_BAD_STATE, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	mmap->user_data = user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data)
{
	if (mmap == NULL || user_data == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or user_data is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = mmap->user_data;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque)
{
	doca_error_t err;

	if (mmap == NULL || free_cb == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or free_cb is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	err = mmap_check_config(mmap, DOCA_ERROR_BAD_STATE, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	mmap->free_cb = free_cb;
	mmap->free_opaque = opaque;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices)
{
	if (mmap == NULL || max_num_devices == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or max_num_devices is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_devices = mmap->max_devs;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices)
{
	struct doca_dev **devs;
	doca_error_t err;

	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (max_num_devices == 0 || max_num_devices > MMAP_LIMIT_MAX_DEVS)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "max number of devices %u is outside 1..%u", max_num_devices,
			    MMAP_LIMIT_MAX_DEVS);
	err = mmap_check_config(mmap, DOCA_ERROR_BAD_STATE, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	if (mmap->ever_started)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "max number of devices can change only before the first start");
	if (max_num_devices < mmap->num_devs)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "max number of devices %u is below the %u already added",
			    max_num_devices, mmap->num_devs);
	devs = calloc(max_num_devices, sizeof(*devs));
	if (devs == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "failed to allocate the device table");
	memcpy(devs, mmap->devs, mmap->num_devs * sizeof(*devs));
	free(mmap->devs);
	mmap->devs = devs;
	mmap->max_devs = max_num_devices;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Queries                                                              */

DOCA_STABLE
doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs)
{
	if (mmap == NULL || num_bufs == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or num_bufs is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*num_bufs = mmap_num_bufs(mmap);
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported)
{
	if (mmap == NULL || exported == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or exported is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*exported = mmap->region.registered || mmap->pci_export.live ? 1 : 0;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export)
{
	if (mmap == NULL || from_export == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or from_export is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	*from_export = mmap->from_export ? 1 : 0;
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_cap_is_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export)
{
	if (devinfo == NULL || mmap_export == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "devinfo or mmap_export is NULL");
	*mmap_export = 1; /* to another process of this host (mmap_pci.c) */
	return DOCA_SUCCESS;
}

DOCA_STABLE
doca_error_t doca_mmap_cap_is_create_from_export_pci_supported(const struct doca_devinfo *devinfo,
							       uint8_t *from_export)
{
	if (devinfo == NULL || from_export == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "devinfo or from_export is NULL");
	*from_export = 1;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Export                                                               */

DOCA_STABLE
doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len)
{
	doca_error_t err;

	if (mmap == NULL || dev == NULL || export_desc == NULL || export_desc_len == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap, dev or an output pointer is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	/* An mmap from a PCI export may be re-exported (the zero-copy path:
	 * RDMA peers reach the host's memory through this side). */
	if (mmap->from_export && mmap->pci_import == NULL)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "an mmap created from an export cannot be exported");
	if (!mmap->started)
		return softdoca_lifecycle_refuse(DOCA_ERROR_NOT_PERMITTED, __func__, "mmap", mmap_state(mmap), "started",
						 "export it after doca_mmap_start");
	if ((mmap->permissions & SOFTDOCA_ACCESS_RDMA_FLAGS) == 0)
		return FAIL(DOCA_ERROR_NOT_PERMITTED,
			    "mmap permissions 0x%x grant no RDMA access; set DOCA_ACCESS_FLAG_RDMA_READ, _WRITE or "
			    "_ATOMIC before start",
			    mmap->permissions);
	if (mmap_find_dev(mmap, dev) < 0)
		return FAIL(DOCA_ERROR_NOT_FOUND, "device was not added to this mmap");
	if (!mmap->region.registered) {
		err = mmap_export_new(mmap);
		if (err != DOCA_SUCCESS)
			return err;
	}
	*export_desc = mmap->desc;
	*export_desc_len = SOFTDOCA_MMAP_DESC_LEN;
	return DOCA_SUCCESS;
}

static doca_error_t mmap_create_from_pci_export(const union doca_data *user_data, const void *export_desc,
						size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap);

/* What an mmap created from an export (RDMA or PCI) is: started, the
 * exporter's range and permissions, on the one device it was created for. */
static void mmap_imported_init(struct doca_mmap *m, uint64_t addr, uint64_t len, uint32_t permissions,
			       struct doca_dev *dev, const union doca_data *user_data)
{
	m->from_export = true;
	m->addr = (uintptr_t)addr;
	m->len = (size_t)len;
	m->range_set = true;
	m->permissions = permissions;
	m->devs[0] = dev;
	m->num_devs = 1;
	softdoca_dev_hold(dev);
	if (user_data != NULL)
		m->user_data = *user_data;
	m->started = true;
	m->ever_started = true;
}

DOCA_STABLE
doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap)
{
	struct softdoca_mmap_desc d;
	struct doca_mmap *new_mmap;
	doca_error_t err;

	if (export_desc == NULL || dev == NULL || mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "export_desc, dev or mmap is NULL");
	if (core_pci_desc_is_pci(export_desc, export_desc_len))
		return mmap_create_from_pci_export(user_data, export_desc, export_desc_len, dev, mmap);
	err = softdoca_mmap_desc_parse(export_desc, export_desc_len, &d);
	if (err != DOCA_SUCCESS)
		return err;
#if UINTPTR_MAX < UINT64_MAX
	/* The range must be expressible as a pointer here. */
	if (d.len > UINTPTR_MAX - d.addr || d.addr > UINTPTR_MAX)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "exported range does not fit this process's address width");
#endif
	new_mmap = mmap_alloc(1);
	if (new_mmap == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "failed to allocate an mmap");
	if (softdoca_live_add(new_mmap, SOFTDOCA_LIVE_MMAP) != DOCA_SUCCESS) {
		mmap_free(new_mmap);
		return DOCA_ERROR_NO_MEMORY;
	}
	new_mmap->remote = d;
	mmap_imported_init(new_mmap, d.addr, d.len, d.permissions, dev, user_data);
	*mmap = new_mmap;
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* PCI export to another process of this host (mmap_pci.c)              */

DOCA_STABLE
doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len)
{
	doca_error_t err;

	if (mmap == NULL || dev == NULL || export_desc == NULL || export_desc_len == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap, dev or an output pointer is NULL");
	if (softdoca_live_check(mmap, SOFTDOCA_LIVE_MMAP, __func__) != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (mmap->from_export)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "an mmap created from an export cannot be exported");
	if (!mmap->started)
		return FAIL(DOCA_ERROR_NOT_PERMITTED, "mmap must be started before it is exported");
	if ((mmap->permissions & (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE)) == 0)
		return FAIL(DOCA_ERROR_NOT_PERMITTED,
			    "mmap permissions 0x%x grant no PCI access; set DOCA_ACCESS_FLAG_PCI_READ_ONLY or "
			    "DOCA_ACCESS_FLAG_PCI_READ_WRITE before start",
			    mmap->permissions);
	if (mmap_find_dev(mmap, dev) < 0)
		return FAIL(DOCA_ERROR_NOT_FOUND, "device was not added to this mmap");
	if (!mmap->pci_export.live) {
		err = core_pci_export_publish(&mmap->pci_export, SOFTDOCA_PCI_KIND_MMAP, mmap->permissions,
					      (uint64_t)mmap->addr, (uint64_t)mmap->len);
		if (err != DOCA_SUCCESS)
			return err;
	}
	*export_desc = mmap->pci_export.desc;
	*export_desc_len = SOFTDOCA_PCI_DESC_LEN;
	return DOCA_SUCCESS;
}

/* doca_mmap_create_from_export for a PCI export descriptor: an mmap whose
 * memory lives in the exporting process. */
static doca_error_t mmap_create_from_pci_export(const union doca_data *user_data, const void *export_desc,
						size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap)
{
	struct softdoca_pci_desc d;
	struct core_pci_import *im;
	struct doca_mmap *new_mmap;
	doca_error_t err;

	err = softdoca_pci_desc_parse(export_desc, export_desc_len, &d);
	if (err != DOCA_SUCCESS)
		return err;
	if (d.kind != SOFTDOCA_PCI_KIND_MMAP)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "PCI export descriptor is for a sync event, not an mmap (doca_sync_event_create_from_export)");
	err = core_pci_import_open(&d, &im);
	if (err != DOCA_SUCCESS)
		return err;
	new_mmap = mmap_alloc(1);
	if (new_mmap == NULL) {
		core_pci_import_close(im);
		return FAIL(DOCA_ERROR_NO_MEMORY, "failed to allocate an mmap");
	}
	new_mmap->pci_import = im;
	if (softdoca_live_add(new_mmap, SOFTDOCA_LIVE_MMAP) != DOCA_SUCCESS) {
		mmap_free(new_mmap);
		return DOCA_ERROR_NO_MEMORY;
	}
	mmap_imported_init(new_mmap, d.addr, d.len, d.permissions, dev, user_data);
	*mmap = new_mmap;
	return DOCA_SUCCESS;
}

/* Last reference gone: give up the export slot or the import. */
static void mmap_pci_free(struct doca_mmap *mmap)
{
	core_pci_export_close(&mmap->pci_export);
	core_pci_import_close(mmap->pci_import);
	mmap->pci_import = NULL;
}

struct core_pci_import *core_mmap_pci_import(const struct doca_mmap *mmap)
{
	return mmap == NULL ? NULL : mmap->pci_import;
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_dma_check(const struct doca_mmap *mmap, bool write)
{
	if (mmap == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "dma: buffer has no mmap (released?)");
	if (mmap->pci_import == NULL && mmap->from_export)
		return FAIL(DOCA_ERROR_NOT_SUPPORTED,
			    "dma: the buffer's mmap was created from an RDMA export; DMA reaches only local memory "
			    "and PCI exports (use an RDMA read/write task)");
	if (mmap->pci_import == NULL)
		return DOCA_SUCCESS;
	if (write && (mmap->permissions & DOCA_ACCESS_FLAG_PCI_READ_WRITE) == 0)
		return FAIL(DOCA_ERROR_NOT_PERMITTED,
			    "dma: the destination is a PCI export granted 0x%x; writing needs "
			    "DOCA_ACCESS_FLAG_PCI_READ_WRITE at the exporter",
			    mmap->permissions);
	return DOCA_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Not available in softdoca                                            */

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_get_dpa_handle(struct doca_mmap *mmap, const struct doca_dev *dev,
					  doca_dpa_dev_mmap_t *dpa_mmap_handle)
{
	(void)mmap;
	(void)dev;
	(void)dpa_mmap_handle;
	return FAIL(DOCA_ERROR_NOT_SUPPORTED, "softdoca has no DPA");
}

DOCA_STABLE
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len)
{
	(void)mmap;
	(void)dmabuf_fd;
	(void)addr;
	(void)dmabuf_offset;
	(void)len;
	return FAIL(DOCA_ERROR_NOT_SUPPORTED, "dmabuf memory ranges are not supported; use doca_mmap_set_memrange");
}

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_dpa_memrange(struct doca_mmap *mmap, struct doca_dpa *dpa, uint64_t dpa_addr, size_t len)
{
	(void)mmap;
	(void)dpa;
	(void)dpa_addr;
	(void)len;
	return FAIL(DOCA_ERROR_NOT_SUPPORTED, "softdoca has no DPA");
}

/* ------------------------------------------------------------------ */
/* Internal interface                                                   */

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_remote_info(const struct doca_mmap *mmap,
							struct softdoca_mmap_desc *info)
{
	if (mmap == NULL || info == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or info is NULL");
	if (mmap->pci_import != NULL)
		return FAIL(DOCA_ERROR_NOT_SUPPORTED,
			    "mmap was created from a PCI export; RDMA tasks need an mmap from an RDMA export "
			    "(doca_mmap_export_rdma)");
	if (!mmap->from_export)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap was not created from an export; a remote mmap is needed");
	if (!mmap->started)
		return mmap_bad_state(mmap, "remote mmap use", "started", "a stopped remote mmap describes nothing");
	*info = mmap->remote;
	return DOCA_SUCCESS;
}

/* A PCI import as the local buffer of an RDMA task: the same checks the
 * target makes of a PCI region before it copies (started, its device,
 * exporter alive, export still published); range and permission against
 * what the exporter published are checked again by every copy. */
static doca_error_t mmap_pci_task_local_info(const struct doca_mmap *mmap, const struct doca_dev *dev,
					     uint32_t *permissions, bool *pci)
{
	doca_error_t err;

	*pci = true;
	if (!mmap->started)
		return mmap_bad_state(mmap, "local mmap use", "started", "a stopped PCI import reaches nothing");
	if (dev != NULL && mmap_find_dev(mmap, dev) < 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "the PCI import was created (doca_mmap_create_from_export) with another device than the "
			    "context's");
	err = core_pci_import_check(mmap->pci_import, "local buffer on a PCI import");
	if (err != DOCA_SUCCESS)
		return err;
	*permissions = mmap->permissions;
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_local_info(const struct doca_mmap *mmap, const struct doca_dev *dev,
						       uint32_t *permissions)
{
	if (mmap == NULL || permissions == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or permissions is NULL");
	if (mmap->pci_import != NULL)
		return FAIL(DOCA_ERROR_NOT_SUPPORTED,
			    "mmap was created from a PCI export: its memory lives in the exporting process; a buffer "
			    "in this process's own memory (a local mmap) is needed here");
	return softdoca_mmap_task_local_info(mmap, dev, permissions, NULL);
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_task_local_info(const struct doca_mmap *mmap, const struct doca_dev *dev,
							    uint32_t *permissions, bool *pci)
{
	if (mmap == NULL || permissions == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap or permissions is NULL");
	if (unlikely(mmap->pci_import != NULL) && pci != NULL)
		return mmap_pci_task_local_info(mmap, dev, permissions, pci);
	if (mmap->from_export)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "mmap was created from an export; a local mmap is needed");
	if (!mmap->started)
		return mmap_bad_state(mmap, "local mmap use", "started", "start it with doca_mmap_start first");
	if (dev != NULL && mmap_find_dev(mmap, dev) < 0)
		return FAIL(DOCA_ERROR_NOT_FOUND, "device was not added to the mmap");
	*permissions = mmap->permissions;
	if (pci != NULL)
		*pci = false;
	return DOCA_SUCCESS;
}

doca_error_t core_mmap_buf_check(const struct doca_mmap *mmap, uintptr_t addr, size_t len)
{
	if (!mmap->started)
		return mmap_bad_state(mmap, "buf get", "started", "start it with doca_mmap_start before taking bufs");
	/* Written so that nothing can overflow. */
	if (addr < mmap->addr || len > mmap->len || addr - mmap->addr > mmap->len - len)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "buffer [0x%lx, +%zu) is outside the mmap range [0x%lx, +%zu)",
			    (unsigned long)addr, len, (unsigned long)mmap->addr, mmap->len);
	return DOCA_SUCCESS;
}

doca_error_t core_mmap_buf_get(struct doca_mmap *mmap, uintptr_t addr, size_t len)
{
	doca_error_t err = core_mmap_buf_check(mmap, addr, len);

	if (err != DOCA_SUCCESS)
		return err;
	atomic_fetch_add(&mmap->refs, 1);
	return DOCA_SUCCESS;
}

doca_error_t core_mmap_buf_get_dup(struct doca_mmap *mmap)
{
	if (!mmap->started)
		return mmap_bad_state(mmap, "doca_buf_inventory_buf_dup", "started",
				      "the buf's mmap was stopped; duplicate bufs of a started mmap");
	atomic_fetch_add(&mmap->refs, 1);
	return DOCA_SUCCESS;
}

doca_error_t core_mmap_started_range(const struct doca_mmap *mmap, uintptr_t *addr, size_t *len)
{
	if (!mmap->started)
		return mmap_bad_state(mmap, "buf pool/array start", "started",
				      "start the mmap with doca_mmap_start first");
	*addr = mmap->addr;
	*len = mmap->len;
	return DOCA_SUCCESS;
}

void core_mmap_hold(struct doca_mmap *mmap)
{
	atomic_fetch_add(&mmap->refs, 1);
}

void core_mmap_buf_put(struct doca_mmap *mmap)
{
	mmap_put(mmap);
}

DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_mkey(const struct doca_mmap *mmap, const struct doca_dev *dev, uint32_t *mkey)
{
	if (mmap == NULL || dev == NULL || mkey == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_mmap_get_mkey: mmap, dev or mkey is NULL");
	return FAIL(DOCA_ERROR_NOT_SUPPORTED,
		    "doca_mmap_get_mkey: soft devices have no hardware memory keys (softdoca's RDMA and DMA reach memory "
		    "through the mmap itself)");
}
