/*
 * softdoca — PCI exports between two processes of one host: the exporter's
 * shared table of export slots, the PCI export descriptor (encode and a
 * strict parser), the importer's view of an export, and its copies with
 * process_vm_readv/writev (see mmap_pci.h for the design).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <doca_types.h>

#include "desc.h"
#include "log_internal.h"
#include "mmap.h"
#include "mmap_pci.h"
#include "mmap_pci_table.h"
#include "secret.h"

SDK_LOG_REGISTER(MMAP_PCI)

#define FAIL(err, ...) (SDK_LOG_ERR(__VA_ARGS__), (err))

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* Highest user-space address of any Linux ABI (5-level paging). */
#define USER_ADDR_LIMIT (1ULL << 57)
/* How long a revoke waits for importer copies in flight to finish. */
#define REVOKE_WAIT_NS 2000000000LL
#define REVOKE_POLL_NS 20000L
/* Largest piece of one process_vm call (a revoke is noticed between
 * pieces, well within REVOKE_WAIT_NS), and the bounce buffer of a copy
 * between two imported mmaps. */
#define COPY_CHUNK (16u << 20)
#define BOUNCE_LEN 16384u

#define PCI_READ_FLAGS (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE)

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
	       "atomics in shared memory must be lock-free");

struct core_pci_import {
	struct softdoca_pci_desc d;
	int pidfd; /* -1: the kernel has no pidfd_open; start time checked instead */
	struct pci_table *table;
	struct pci_slot *slot;
};

/* The exporter's table, created on first export; owned by table_pid (a
 * forked child inherits the mapping and must make its own). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pci_table *table;
static int table_fd = -1;
static pid_t table_pid;
static uint64_t table_start_time;
static uint64_t next_slot_id = 1;
static bool slot_taken[SOFTDOCA_PCI_TABLE_SLOTS];

/* ------------------------------------------------------------------ */
/* Little helpers                                                       */

static void put_le(uint8_t *p, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned int bytes)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Field 22 of /proc/<pid>/stat: when the process started, in clock ticks
 * after boot. With the pid it names one process for the life of a boot. */
static bool proc_start_time(pid_t pid, uint64_t *out)
{
	char path[64], buf[1024], *p, *end;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
	if (p == NULL)
		return false;
	p++;
	/* After the name come fields 3, 4, ...: skip to field 22. */
	for (field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (p == NULL)
			return false;
	}
	errno = 0;
	*out = strtoull(p + 1, &end, 10);
	return errno == 0 && end != p + 1 && *out != 0;
}

static void log_ptrace_refused(uint32_t pid, const char *what, int err)
{
	SDK_LOG_ERR("the kernel refused %s of process %u (%s): reaching another process's memory needs ptrace "
		    "permission. Fix: run exporter and importer as the same user and allow it (sysctl "
		    "kernel.yama.ptrace_scope=0, or CAP_SYS_PTRACE for the importer, e.g. docker --cap-add "
		    "SYS_PTRACE)",
		    what, pid, strerror(err));
}

/* ------------------------------------------------------------------ */
/* Descriptors                                                          */

bool core_pci_desc_is_pci(const void *desc, size_t desc_len)
{
	return desc != NULL && desc_len >= 4 && memcmp(desc, SOFTDOCA_PCI_DESC_MAGIC, 4) == 0;
}

static void desc_encode(uint8_t *p, const struct softdoca_pci_desc *d)
{
	memset(p, 0, SOFTDOCA_PCI_DESC_LEN);
	memcpy(p, SOFTDOCA_PCI_DESC_MAGIC, 4);
	put_le(p + 4, SOFTDOCA_PCI_DESC_VERSION, 2);
	put_le(p + 8, SOFTDOCA_PCI_DESC_LEN, 4);
	put_le(p + 12, d->kind, 4);
	put_le(p + 16, d->pid, 4);
	put_le(p + 20, d->table_fd, 4);
	put_le(p + 24, d->start_time, 8);
	put_le(p + 32, d->process_nonce, 8);
	put_le(p + 40, d->slot, 4);
	put_le(p + 44, d->permissions, 4);
	put_le(p + 48, d->slot_id, 8);
	memcpy(p + 56, d->secret, SOFTDOCA_PCI_SECRET_LEN);
	put_le(p + 72, d->addr, 8);
	put_le(p + 80, d->len, 8);
}

static const struct core_desc_format desc_format = {
	.magic = SOFTDOCA_PCI_DESC_MAGIC,
	.version = SOFTDOCA_PCI_DESC_VERSION,
	.len = SOFTDOCA_PCI_DESC_LEN,
	.what = "PCI export descriptor",
	.magic_what = "PCI export descriptor",
	.log_source = &sdk_log_source,
};

/* What only an mmap export carries: a range and PCI permissions. */
static doca_error_t desc_check_mmap(const struct softdoca_pci_desc *d)
{
	if (d->permissions & ~SOFTDOCA_ACCESS_ALL_FLAGS)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has unknown permission bits 0x%x",
			    d->permissions & ~SOFTDOCA_ACCESS_ALL_FLAGS);
	if ((d->permissions & PCI_READ_FLAGS) == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor grants no PCI access (permissions 0x%x)",
			    d->permissions);
	if (d->addr == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has address 0");
	if (d->len == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has length 0");
	if (d->addr >= USER_ADDR_LIMIT || d->len > USER_ADDR_LIMIT - d->addr)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "PCI export descriptor range 0x%" PRIx64 " + %" PRIu64 " lies outside any user address space",
			    d->addr, d->len);
	return DOCA_SUCCESS;
}

static doca_error_t desc_check_sync_event(const struct softdoca_pci_desc *d)
{
	if (d->permissions != 0 || d->addr != 0 || d->len != 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "sync event PCI export descriptor has a range or permissions; they must be 0");
	return DOCA_SUCCESS;
}

static doca_error_t desc_parse_v1(const uint8_t *p, struct softdoca_pci_desc *d)
{
	d->version = SOFTDOCA_PCI_DESC_VERSION;
	d->kind = (uint32_t)get_le(p + 12, 4);
	d->pid = (uint32_t)get_le(p + 16, 4);
	d->table_fd = (uint32_t)get_le(p + 20, 4);
	d->start_time = get_le(p + 24, 8);
	d->process_nonce = get_le(p + 32, 8);
	d->slot = (uint32_t)get_le(p + 40, 4);
	d->permissions = (uint32_t)get_le(p + 44, 4);
	d->slot_id = get_le(p + 48, 8);
	memcpy(d->secret, p + 56, SOFTDOCA_PCI_SECRET_LEN);
	d->addr = get_le(p + 72, 8);
	d->len = get_le(p + 80, 8);

	if (d->kind != SOFTDOCA_PCI_KIND_MMAP && d->kind != SOFTDOCA_PCI_KIND_SYNC_EVENT)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has unknown kind %u", d->kind);
	if (d->pid == 0 || d->pid > INT32_MAX)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has invalid process id %u", d->pid);
	if (d->table_fd > INT32_MAX)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has invalid table fd %u", d->table_fd);
	if (d->start_time == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has process start time 0");
	if (d->slot >= SOFTDOCA_PCI_TABLE_SLOTS)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor slot %u is outside 0..%u", d->slot,
			    SOFTDOCA_PCI_TABLE_SLOTS - 1);
	if (d->slot_id == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has slot id 0");
	if (softdoca_bytes_all_zero(d->secret, SOFTDOCA_PCI_SECRET_LEN))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI export descriptor has an all-zero secret");
	return d->kind == SOFTDOCA_PCI_KIND_MMAP ? desc_check_mmap(d) : desc_check_sync_event(d);
}

SOFTDOCA_EXPORT doca_error_t softdoca_pci_desc_parse(const void *desc, size_t desc_len,
						      struct softdoca_pci_desc *out)
{
	struct softdoca_pci_desc d;
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

/* ------------------------------------------------------------------ */
/* Exporter: the shared table                                           */

static void table_drop_inherited(void)
{
	/* Inherited through fork: the parent's table, not ours to touch. */
	munmap(table, sizeof(*table));
	if (table_fd >= 0)
		close(table_fd);
	table = NULL;
	table_fd = -1;
	memset(slot_taken, 0, sizeof(slot_taken));
}

static doca_error_t table_create(void)
{
	uint32_t pid;
	uint64_t nonce, start;
	struct pci_table *t;
	doca_error_t err;
	int fd;

	err = softdoca_mmap_process_identity(&pid, &nonce);
	if (err != DOCA_SUCCESS)
		return err;
	if (!proc_start_time((pid_t)pid, &start))
		return FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI export: cannot read this process's start time from /proc");
	fd = memfd_create("softdoca-pci-exports", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI export: memfd_create failed: %s", strerror(errno));
	/* Sealed size: an importer that mapped it can never fault on it. */
	if (ftruncate(fd, sizeof(*t)) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		err = FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI export: cannot size and seal the table: %s",
			   strerror(errno));
		goto close_fd;
	}
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (t == MAP_FAILED) {
		err = FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI export: cannot map the table: %s", strerror(errno));
		goto close_fd;
	}
	memcpy(t->hdr.magic, PCI_TABLE_MAGIC, sizeof(t->hdr.magic));
	t->hdr.version = PCI_TABLE_VERSION;
	t->hdr.pid = pid;
	t->hdr.nonce = nonce;
	t->hdr.num_slots = SOFTDOCA_PCI_TABLE_SLOTS;
	t->hdr.slot_size = sizeof(struct pci_slot);
	table = t;
	table_fd = fd;
	table_pid = (pid_t)pid;
	table_start_time = start;
	return DOCA_SUCCESS;

close_fd:
	close(fd);
	return err;
}

/* Under table_lock: this process's table, created when needed. */
static doca_error_t table_get(void)
{
	if (table != NULL && table_pid == getpid())
		return DOCA_SUCCESS;
	if (table != NULL)
		table_drop_inherited();
	return table_create();
}

/* Under table_lock: make sure x owns a slot of this process's table. */
static doca_error_t export_reserve(struct core_pci_export *x)
{
	doca_error_t err = table_get();
	uint32_t i;

	if (err != DOCA_SUCCESS)
		return err;
	if (x->reserved)
		return DOCA_SUCCESS;
	for (i = 0; i < SOFTDOCA_PCI_TABLE_SLOTS; i++) {
		/* A slot an importer died in (users stuck) is never reused. */
		if (!slot_taken[i] && atomic_load(&table->slots[i].users) == 0)
			break;
	}
	if (i == SOFTDOCA_PCI_TABLE_SLOTS)
		return FAIL(DOCA_ERROR_FULL, "PCI export: all %u export slots of this process are in use",
			    SOFTDOCA_PCI_TABLE_SLOTS);
	slot_taken[i] = true;
	atomic_store(&table->slots[i].id, 0);
	table->slots[i].value = 0;
	x->slot = i;
	x->reserved = true;
	return DOCA_SUCCESS;
}

doca_error_t core_pci_export_publish(struct core_pci_export *x, enum softdoca_pci_kind kind, uint32_t permissions,
				     uint64_t addr, uint64_t len)
{
	struct softdoca_pci_desc d = {0};
	struct pci_slot *s;
	doca_error_t err;

	err = softdoca_secret_generate(d.secret, sizeof(d.secret));
	if (err != DOCA_SUCCESS)
		return err;
	pthread_mutex_lock(&table_lock);
	err = export_reserve(x);
	if (err != DOCA_SUCCESS)
		goto unlock;
	s = &table->slots[x->slot];
	d.kind = kind;
	d.pid = (uint32_t)table_pid;
	d.table_fd = (uint32_t)table_fd;
	d.start_time = table_start_time;
	d.process_nonce = table->hdr.nonce;
	d.slot = x->slot;
	d.permissions = permissions;
	d.slot_id = next_slot_id++;
	d.addr = addr;
	d.len = len;
	s->kind = kind;
	s->permissions = permissions;
	s->addr = addr;
	s->len = len;
	memcpy(s->secret, d.secret, sizeof(d.secret));
	/* Publish last: an importer that sees the id sees the rest. */
	atomic_store(&s->id, d.slot_id);
	desc_encode(x->desc, &d);
	x->live = true;
unlock:
	pthread_mutex_unlock(&table_lock);
	return err;
}

void core_pci_export_revoke(struct core_pci_export *x)
{
	const struct timespec pause = {.tv_sec = 0, .tv_nsec = REVOKE_POLL_NS};
	struct pci_slot *s;
	long long waited = 0;

	if (!x->live)
		return;
	x->live = false;
	if (table == NULL || table_pid != getpid())
		return; /* exported by the parent of this forked process */
	s = &table->slots[x->slot];
	/* Dekker with the importer (both sequentially consistent): it counts
	 * itself in and then reads the id; we clear the id and then read the
	 * count. Either it sees 0 or we see it and wait. */
	atomic_store(&s->id, 0);
	while (atomic_load(&s->users) > 0) {
		if (waited >= REVOKE_WAIT_NS) {
			SDK_LOG_ERR("PCI export revoked while an importer copy never finished (importer died in a "
				    "copy?); the slot is retired");
			return;
		}
		nanosleep(&pause, NULL);
		waited += REVOKE_POLL_NS;
	}
}

void core_pci_export_close(struct core_pci_export *x)
{
	core_pci_export_revoke(x);
	if (!x->reserved)
		return;
	x->reserved = false;
	pthread_mutex_lock(&table_lock);
	if (table != NULL && table_pid == getpid()) {
		memset(table->slots[x->slot].secret, 0, SOFTDOCA_PCI_SECRET_LEN);
		slot_taken[x->slot] = false;
	}
	pthread_mutex_unlock(&table_lock);
}

uint64_t *core_pci_export_value(struct core_pci_export *x)
{
	uint64_t *cell = NULL;

	pthread_mutex_lock(&table_lock);
	if (export_reserve(x) == DOCA_SUCCESS)
		cell = &table->slots[x->slot].value;
	pthread_mutex_unlock(&table_lock);
	return cell;
}

/* ------------------------------------------------------------------ */
/* Importer                                                             */

static bool import_exporter_exited(const struct core_pci_import *im)
{
	struct pollfd p = {.fd = im->pidfd, .events = POLLIN};
	uint64_t start;

	if (im->pidfd >= 0)
		return poll(&p, 1, 0) > 0; /* a pidfd is readable once the process exited */
	return !proc_start_time((pid_t)im->d.pid, &start) || start != im->d.start_time;
}

static bool import_slot_live(const struct core_pci_import *im)
{
	return atomic_load(&im->slot->id) == im->d.slot_id &&
	       softdoca_secret_equal(im->slot->secret, im->d.secret, SOFTDOCA_PCI_SECRET_LEN);
}

/* The exporter process itself: it exists and is the one that exported. */
static doca_error_t import_open_pidfd(struct core_pci_import *im)
{
	uint64_t start;

	im->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)im->d.pid, 0);
	if (im->pidfd < 0 && errno == ESRCH)
		return FAIL(DOCA_ERROR_NOT_FOUND, "PCI import: exporter process %u does not exist (it exited)",
			    im->d.pid);
	if (im->pidfd < 0 && errno != ENOSYS)
		return FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI import: pidfd_open(%u) failed: %s", im->d.pid,
			    strerror(errno));
	/* Checked after the pidfd exists, so the pidfd names this process. */
	if (!proc_start_time((pid_t)im->d.pid, &start))
		return FAIL(DOCA_ERROR_NOT_FOUND, "PCI import: exporter process %u does not exist (it exited)",
			    im->d.pid);
	if (start != im->d.start_time)
		return FAIL(DOCA_ERROR_NOT_FOUND,
			    "PCI import: process %u is not the exporter (the exporter exited and its pid was reused)",
			    im->d.pid);
	return DOCA_SUCCESS;
}

static doca_error_t import_open_table_fd(const struct softdoca_pci_desc *d, int *fd_out)
{
	char path[64];
	struct stat st;
	int fd, seals;

	snprintf(path, sizeof(path), "/proc/%u/fd/%u", d->pid, d->table_fd);
	/* The fd number is the descriptor's word: whatever it names must not
	 * block us or become our terminal before we see it is no table. */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		log_ptrace_refused(d->pid, "access to the export table", errno);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (fd < 0 && errno == ENOENT)
		return FAIL(DOCA_ERROR_NOT_FOUND,
			    "PCI import: process %u has no fd %u (it exited, or this is not its export)", d->pid,
			    d->table_fd);
	if (fd < 0)
		return FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI import: cannot open %s: %s", path, strerror(errno));
	seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != (off_t)sizeof(struct pci_table) ||
	    seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
		close(fd);
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI import: fd %u of process %u is not a softdoca export table",
			    d->table_fd, d->pid);
	}
	*fd_out = fd;
	return DOCA_SUCCESS;
}

static doca_error_t import_map_table(struct core_pci_import *im)
{
	const struct softdoca_pci_desc *d = &im->d;
	const struct pci_table_header *h;
	doca_error_t err;
	void *p;
	int fd;

	err = import_open_table_fd(d, &fd);
	if (err != DOCA_SUCCESS)
		return err;
	p = mmap(NULL, sizeof(struct pci_table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd); /* the mapping keeps the memory */
	if (p == MAP_FAILED)
		return FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI import: cannot map the export table: %s",
			    strerror(errno));
	im->table = p;
	h = &im->table->hdr;
	if (memcmp(h->magic, PCI_TABLE_MAGIC, sizeof(h->magic)) != 0 || h->version != PCI_TABLE_VERSION ||
	    h->num_slots != SOFTDOCA_PCI_TABLE_SLOTS || h->slot_size != sizeof(struct pci_slot))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI import: fd %u of process %u is not a softdoca export table",
			    d->table_fd, d->pid);
	if (h->pid != d->pid || h->nonce != d->process_nonce)
		return FAIL(DOCA_ERROR_NOT_FOUND,
			    "PCI import: process %u is not the exporter of this descriptor (identity differs)", d->pid);
	im->slot = &im->table->slots[d->slot];
	return DOCA_SUCCESS;
}

doca_error_t core_pci_import_open(const struct softdoca_pci_desc *d, struct core_pci_import **out)
{
	struct core_pci_import *im = calloc(1, sizeof(*im));
	doca_error_t err;

	if (im == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "PCI import: out of memory");
	im->d = *d;
	im->pidfd = -1;
	err = import_open_pidfd(im);
	if (err != DOCA_SUCCESS)
		goto fail;
	err = import_map_table(im);
	if (err != DOCA_SUCCESS)
		goto fail;
	if (!import_slot_live(im) || im->slot->kind != d->kind) {
		err = FAIL(DOCA_ERROR_NOT_FOUND,
			   "PCI import: the export was revoked (the exporter stopped or destroyed it) or never existed");
		goto fail;
	}
	*out = im;
	return DOCA_SUCCESS;

fail:
	core_pci_import_close(im);
	return err;
}

void core_pci_import_close(struct core_pci_import *im)
{
	if (im == NULL)
		return;
	if (im->table != NULL)
		munmap(im->table, sizeof(struct pci_table));
	if (im->pidfd >= 0)
		close(im->pidfd);
	free(im);
}

doca_error_t core_pci_import_check(const struct core_pci_import *im, const char *op)
{
	if (import_exporter_exited(im)) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "%s: the exporter (process %u) of this PCI import exited", op,
			   im->d.pid);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (!import_slot_live(im)) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR,
			   "%s: the PCI export was revoked: process %u stopped or destroyed what it exported", op,
			   im->d.pid);
		return DOCA_ERROR_NOT_FOUND;
	}
	return DOCA_SUCCESS;
}

bool core_pci_import_alive(const struct core_pci_import *im)
{
	return !import_exporter_exited(im) && import_slot_live(im);
}

uint64_t *core_pci_import_value(const struct core_pci_import *im)
{
	return &im->slot->value;
}

/* Range and permission against what the exporter published (it is the
 * authority; the descriptor could be stale or forged). */
static doca_error_t import_check_access(const struct core_pci_import *im, uint64_t remote, size_t len,
					bool to_remote)
{
	const struct pci_slot *s = im->slot;
	uint64_t addr = s->addr, slen = s->len;
	uint32_t perms = s->permissions;

	if (remote < addr || len > slen || remote - addr > slen - len) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR,
			   "PCI copy [0x%" PRIx64 ", +%zu) is outside the exported range [0x%" PRIx64 ", +%" PRIu64 ")",
			   remote, len, addr, slen);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (to_remote && (perms & DOCA_ACCESS_FLAG_PCI_READ_WRITE) == 0) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR,
			   "PCI write refused: the exporter granted 0x%x, a write needs DOCA_ACCESS_FLAG_PCI_READ_WRITE",
			   perms);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!to_remote && (perms & PCI_READ_FLAGS) == 0) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR,
			   "PCI read refused: the exporter granted 0x%x, a read needs DOCA_ACCESS_FLAG_PCI_READ_ONLY or "
			   "_READ_WRITE",
			   perms);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return DOCA_SUCCESS;
}

static doca_error_t import_vm_error(const struct core_pci_import *im, int err, uint64_t remote, size_t len,
				    bool to_remote)
{
	const char *what = to_remote ? "a write into the memory" : "a read of the memory";

	switch (err) {
	case EPERM:
	case EACCES:
		log_ptrace_refused(im->d.pid, what, err);
		return DOCA_ERROR_NOT_PERMITTED;
	case ESRCH:
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "PCI copy failed: the exporter (process %u) exited", im->d.pid);
		return DOCA_ERROR_CONNECTION_ABORTED;
	case EFAULT:
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR,
			   "PCI copy failed: [0x%" PRIx64 ", +%zu) is not mapped in process %u (memory freed before "
			   "its mmap was destroyed?)",
			   remote, len, im->d.pid);
		return DOCA_ERROR_INVALID_VALUE;
	case ENOMEM:
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "PCI copy failed: out of kernel memory");
		return DOCA_ERROR_NO_MEMORY;
	default:
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "PCI copy failed: process_vm_%s: %s", to_remote ? "writev" : "readv",
			   strerror(err));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
}

/* The copy itself; partial transfers (page by page) continue, and a
 * revoke between pieces stops it. */
static doca_error_t import_vm_copy(const struct core_pci_import *im, uint64_t remote, char *local, size_t len,
				   bool to_remote)
{
	while (len > 0) {
		if (atomic_load(&im->slot->id) != im->d.slot_id) {
			SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "PCI copy stopped: process %u revoked the export meanwhile",
				   im->d.pid);
			return DOCA_ERROR_NOT_FOUND;
		}
		size_t n = len < COPY_CHUNK ? len : COPY_CHUNK;
		struct iovec l = {.iov_base = local, .iov_len = n};
		struct iovec r = {.iov_base = (void *)(uintptr_t)remote, .iov_len = n};
		ssize_t done = to_remote ? process_vm_writev((pid_t)im->d.pid, &l, 1, &r, 1, 0)
					 : process_vm_readv((pid_t)im->d.pid, &l, 1, &r, 1, 0);

		if (done < 0)
			return import_vm_error(im, errno, remote, len, to_remote);
		if (done == 0)
			return import_vm_error(im, EFAULT, remote, len, to_remote);
		remote += (uint64_t)done;
		local += done;
		len -= (size_t)done;
	}
	return DOCA_SUCCESS;
}

doca_error_t core_pci_import_copy(struct core_pci_import *im, uint64_t remote, void *local, size_t len,
				  bool to_remote)
{
	doca_error_t err;

	if (import_exporter_exited(im)) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "PCI copy failed: the exporter (process %u) exited", im->d.pid);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	/* Count in first, then check the id: see core_pci_export_revoke. */
	atomic_fetch_add(&im->slot->users, 1);
	if (!import_slot_live(im)) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR,
			   "PCI copy refused: the export was revoked (process %u stopped or destroyed its mmap)",
			   im->d.pid);
		err = DOCA_ERROR_NOT_FOUND;
		goto out;
	}
	err = import_check_access(im, remote, len, to_remote);
	if (err == DOCA_SUCCESS)
		err = import_vm_copy(im, remote, local, len, to_remote);
out:
	atomic_fetch_sub(&im->slot->users, 1);
	return err;
}

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_region_pci_copy(const struct softdoca_mmap_region *region, uint64_t addr,
							    void *buf, size_t len, bool to_region)
{
	if (region == NULL || region->pci == NULL || (buf == NULL && len > 0))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI region copy: not a PCI region, or NULL buffer");
	if (len == 0)
		return DOCA_SUCCESS;
	return core_pci_import_copy(region->pci, addr, buf, len, to_region);
}

/* ------------------------------------------------------------------ */
/* Copies between any two mmaps (the DMA engine)                        */

SOFTDOCA_EXPORT doca_error_t softdoca_mmap_copy(struct doca_mmap *dst_mmap, uintptr_t dst,
						 struct doca_mmap *src_mmap, uintptr_t src, size_t len)
{
	struct core_pci_import *di = core_mmap_pci_import(dst_mmap);
	struct core_pci_import *si = core_mmap_pci_import(src_mmap);
	char bounce[BOUNCE_LEN];
	doca_error_t err;

	if (di == NULL && si == NULL) {
		memmove((void *)dst, (const void *)src, len);
		return DOCA_SUCCESS;
	}
	if (di == NULL)
		return core_pci_import_copy(si, src, (void *)dst, len, false);
	if (si == NULL)
		return core_pci_import_copy(di, dst, (void *)src, len, true);
	/* Both in other processes: through a bounce buffer. */
	while (len > 0) {
		size_t n = len < sizeof(bounce) ? len : sizeof(bounce);

		err = core_pci_import_copy(si, src, bounce, n, false);
		if (err == DOCA_SUCCESS)
			err = core_pci_import_copy(di, dst, bounce, n, true);
		if (err != DOCA_SUCCESS)
			return err;
		src += n;
		dst += n;
		len -= n;
	}
	return DOCA_SUCCESS;
}
