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
#include <sys/prctl.h>
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
#include "yama.h"

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
/* How long an importer waits while the exporter revokes exports whose
 * memory is being unmapped (longer than it waits for copies). */
#define SETTLE_WAIT_NS 3000000000LL
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
	int pidfd;    /* -1: the kernel has no pidfd_open; start time checked instead */
	int watch_fd; /* the exporter's userfaultfd (a copy), -1: none */
	struct pci_table *table;
	struct pci_slot *slot;
	struct pci_pieces pieces;   /* of an mmap export, as published */
	struct core_pci_maps *maps; /* the exporter's, when pieces are file-backed */
	_Atomic bool replaced;	    /* seen unmapped or replaced: every copy fails */
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
static struct pci_pin slot_pins[SOFTDOCA_PCI_TABLE_SLOTS][PCI_EXPORT_PIECES];

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
		    "permission. Fix: run exporter and importer as the same user (a softdoca exporter lets its "
		    "user in under kernel.yama.ptrace_scope=1); with ptrace_scope 2 or 3, or an exporter that made "
		    "itself non-dumpable, the importer needs CAP_SYS_PTRACE (e.g. docker --cap-add SYS_PTRACE)",
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
	core_pci_watch_drop_inherited();
	/* The parent's pins were not inherited (MADV_DONTFORK): forget them. */
	memset(slot_pins, 0, sizeof(slot_pins));
	table = NULL;
	table_fd = -1;
	memset(slot_taken, 0, sizeof(slot_taken));
}

/*
 * The importer (the DPU side) copies with process_vm_readv/writev, which
 * Yama's ptrace_scope=1 (Ubuntu's default) refuses between processes that
 * are not parent and child. A process that exports memory for PCI asks for
 * exactly that access, so at its first export it names any process as its
 * ptracer (PR_SET_PTRACER_ANY): scope 1 then lets its own user's processes
 * reach it, as scope 0 would; other users stay refused by the kernel's
 * usual checks (UCX does the same for its CMA transport). Scopes 2 and 3
 * admit no such grant: said once.
 */
static void table_allow_importers(void)
{
	int scope = softdoca_yama_scope();

	if (scope <= 0)
		return;
	if (scope == 1) {
		if (prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) == 0)
			SDK_LOG_INFO("PCI export: kernel.yama.ptrace_scope is 1, so this process lets processes of its "
				     "user reach its memory (prctl PR_SET_PTRACER_ANY), as the importer's copies need");
		else
			SDK_LOG_WARN("PCI export: kernel.yama.ptrace_scope is 1 and prctl(PR_SET_PTRACER) failed (%s): "
				     "importers in unrelated processes will be refused",
				     strerror(errno));
		return;
	}
	if (scope == SOFTDOCA_YAMA_UNKNOWN) {
		SDK_LOG_WARN("PCI export: kernel.yama.ptrace_scope cannot be read: importers in unrelated processes "
			     "may be refused");
		return;
	}
	SDK_LOG_WARN("PCI export: kernel.yama.ptrace_scope is %d: only an importer with CAP_SYS_PTRACE%s can "
		     "reach this export (scope 1 or 0 lets processes of the same user)",
		     scope, scope == 3 ? " (and not even that: scope 3 refuses every attach)" : "");
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
	t->hdr.watch_fd = -1;
	table = t;
	table_fd = fd;
	table_pid = (pid_t)pid;
	table_start_time = start;
	table_allow_importers();
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
	memset(&table->pieces[i], 0, sizeof(table->pieces[i]));
	x->slot = i;
	x->reserved = true;
	return DOCA_SUCCESS;
}

/* Under table_lock, the slot not live: what backs the range of an mmap
 * export (runs of one backing, page aligned), watched where the kernel
 * allows (the watch revokes the export when they are unmapped); the
 * other file-backed pieces are pinned and importers look them up around
 * their copies. */
static doca_error_t export_pieces(uint32_t slot, uint64_t addr, uint64_t len)
{
	struct pci_pieces *p = &table->pieces[slot];
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = addr & ~(page - 1), hi = (addr + len + page - 1) & ~(page - 1);
	enum core_pci_pieces_result r;
	struct core_pci_maps *m;
	doca_error_t err;
	int os_err = 0;

	memset(p, 0, sizeof(*p));
	err = core_pci_maps_open(0, &m);
	if (err != DOCA_SUCCESS)
		return err;
	r = core_pci_pieces_read(m, lo, hi, p->piece, PCI_EXPORT_PIECES, &p->n, &os_err);
	core_pci_maps_close(m);
	if (r == PCI_PIECES_HOLE)
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "PCI export: [0x%" PRIx64 ", +%" PRIu64 ") is not all mapped in this process", addr, len);
	if (r == PCI_PIECES_TOO_MANY)
		return FAIL(DOCA_ERROR_NOT_SUPPORTED,
			    "PCI export: [0x%" PRIx64 ", +%" PRIu64 ") spans more than %u mappings (different files, or "
			    "files and anonymous memory in turn); export it in parts",
			    addr, len, PCI_EXPORT_PIECES);
	if (r != PCI_PIECES_OK)
		return FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI export: cannot read this process's memory map: %s",
			    strerror(os_err));
	core_pci_watch_add(table, p);
	for (uint32_t k = 0; k < p->n; k++) {
		bool watched = (p->piece[k].state & PCI_PIECE_WATCHED) != 0;

		p->flags |= watched ? PCI_FLAG_WATCHED : 0;
		p->flags |= !watched && pci_piece_is_file(&p->piece[k]) ? PCI_FLAG_CHECKED : 0;
	}
	core_pci_pins_release(slot_pins[slot]);
	core_pci_pins_take(p, slot_pins[slot]);
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
	if (kind == SOFTDOCA_PCI_KIND_MMAP) {
		err = export_pieces(x->slot, addr, len);
		if (err != DOCA_SUCCESS)
			goto unlock;
	}
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

/* After the id is cleared: wait (bounded) until no importer copy is in
 * flight. */
static void export_wait_copies(const struct pci_slot *s)
{
	const struct timespec pause = {.tv_sec = 0, .tv_nsec = REVOKE_POLL_NS};
	long long waited = 0;

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

void core_pci_export_revoke(struct core_pci_export *x)
{
	struct pci_slot *s;
	uint64_t was;

	if (!x->live)
		return;
	x->live = false;
	if (table == NULL || table_pid != getpid())
		return; /* exported by the parent of this forked process */
	s = &table->slots[x->slot];
	/* Dekker with the importer (both sequentially consistent): it counts
	 * itself in and then reads the id; we clear the id and then read the
	 * count. Either it sees 0 or we see it and wait. */
	was = atomic_exchange(&s->id, 0);
	if (was == PCI_ID_UNMAPPED)
		SDK_LOG_WARN("PCI export of [0x%" PRIx64 ", +%" PRIu64 ") had already ended: this process unmapped or "
			     "replaced that memory while it was exported, and importers' copies fail since. Fix: "
			     "doca_mmap_stop (or destroy) an mmap before unmapping its memory",
			     s->addr, s->len);
	export_wait_copies(s);
	if (s->kind != SOFTDOCA_PCI_KIND_MMAP)
		return;
	pthread_mutex_lock(&table_lock);
	core_pci_watch_remove(table, x->slot);
	core_pci_pins_release(slot_pins[x->slot]);
	pthread_mutex_unlock(&table_lock);
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

static doca_error_t import_replaced(struct core_pci_import *im, const char *op);

/* What backs an mmap export, as the exporter published it, and what the
 * importer needs to notice it unmapped or replaced: a copy of its
 * userfaultfd (watched anonymous memory), its memory map (file-backed).
 * Replaced already: refused here. */
static doca_error_t import_open_pieces(struct core_pci_import *im)
{
	struct pci_pieces *p = &im->pieces;
	enum core_pci_pieces_verdict v;
	doca_error_t err;
	int os_err;

	if (im->d.kind != SOFTDOCA_PCI_KIND_MMAP)
		return DOCA_SUCCESS;
	*p = im->table->pieces[im->d.slot];
	/* Read while live, and still live: not torn by a republish. */
	if (!import_slot_live(im))
		return FAIL(DOCA_ERROR_NOT_FOUND, "PCI import: the export was revoked while being opened");
	if (p->n == 0 || p->n > PCI_EXPORT_PIECES)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "PCI import: process %u's export table is inconsistent",
			    im->d.pid);
	if (p->flags & PCI_FLAG_WATCHED)
		im->watch_fd = core_pci_watch_import_fd(im->pidfd, im->table, im->d.pid);
	if (!(p->flags & PCI_FLAG_CHECKED))
		return DOCA_SUCCESS;
	err = core_pci_maps_open((pid_t)im->d.pid, &im->maps);
	if (err != DOCA_SUCCESS)
		return err;
	v = core_pci_pieces_check(im->maps, p->piece[0].start, p->piece[p->n - 1].end, p->piece, p->n, &os_err);
	if (v == PCI_PIECES_SAME)
		return DOCA_SUCCESS;
	if (v == PCI_PIECES_UNKNOWN && os_err != ESRCH)
		return FAIL(DOCA_ERROR_OPERATING_SYSTEM, "PCI import: cannot read process %u's memory map: %s",
			    im->d.pid, strerror(os_err));
	return import_replaced(im, "PCI import");
}

doca_error_t core_pci_import_open(const struct softdoca_pci_desc *d, struct core_pci_import **out)
{
	struct core_pci_import *im = calloc(1, sizeof(*im));
	doca_error_t err;

	if (im == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "PCI import: out of memory");
	im->d = *d;
	im->pidfd = -1;
	im->watch_fd = -1;
	err = import_open_pidfd(im);
	if (err != DOCA_SUCCESS)
		goto fail;
	err = import_map_table(im);
	if (err != DOCA_SUCCESS)
		goto fail;
	if (atomic_load(&im->slot->id) == PCI_ID_UNMAPPED &&
	    softdoca_secret_equal(im->slot->secret, d->secret, SOFTDOCA_PCI_SECRET_LEN)) {
		err = import_replaced(im, "PCI import");
		goto fail;
	}
	if (!import_slot_live(im) || im->slot->kind != d->kind) {
		err = FAIL(DOCA_ERROR_NOT_FOUND,
			   "PCI import: the export was revoked (the exporter stopped or destroyed it) or never existed");
		goto fail;
	}
	err = import_open_pieces(im);
	if (err != DOCA_SUCCESS)
		goto fail;
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
	if (im->watch_fd >= 0)
		close(im->watch_fd);
	core_pci_maps_close(im->maps);
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
			   "PCI copy failed: [0x%" PRIx64 ", +%zu) cannot be reached in process %u (unmapped without "
			   "doca_mmap_stop, or protected with mprotect)",
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

/* The exporter unmapped or replaced what it exported: say so, and fail
 * every later copy of this import (what is there now can only change
 * back by design, never by accident). */
static doca_error_t import_replaced(struct core_pci_import *im, const char *op)
{
#define REPLACED_FMT                                                                                             \
	"%s refused: the exporter (process %u) unmapped or replaced exported memory without doca_mmap_stop; what " \
	"it maps there now was never exported. The export is dead: the exporter must stop (or destroy) an mmap "  \
	"before unmapping its memory, then export again"
	/* Once per import for sure (where it is first seen), then rate-limited. */
	if (!atomic_exchange(&im->replaced, true))
		SDK_LOG_ERR(REPLACED_FMT, op, im->d.pid);
	else
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, REPLACED_FMT, op, im->d.pid);
#undef REPLACED_FMT
	return DOCA_ERROR_NOT_FOUND;
}

/* The export is no longer live: revoked by the exporter, or by its
 * watch because the memory was unmapped. */
static doca_error_t import_not_live(struct core_pci_import *im, const char *op)
{
	if (atomic_load(&im->slot->id) == PCI_ID_UNMAPPED)
		return import_replaced(im, op);
	SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "%s refused: the export was revoked (process %u stopped or destroyed its mmap)",
		   op, im->d.pid);
	return DOCA_ERROR_NOT_FOUND;
}

static bool import_watched(const struct core_pci_import *im)
{
	return (im->pieces.flags & PCI_FLAG_WATCHED) != 0;
}

/* Counted out: wait (bounded) while the exporter's watch thread revokes
 * (it waits up to 2 s for copies in flight). */
static doca_error_t import_settle(const struct core_pci_import *im, const char *op)
{
	const struct timespec pause = {.tv_sec = 0, .tv_nsec = REVOKE_POLL_NS};
	long long waited = 0;

	while (core_pci_watch_paused(im->table) || core_pci_watch_pending(im->watch_fd)) {
		if (import_exporter_exited(im)) {
			SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "%s failed: the exporter (process %u) exited", op, im->d.pid);
			return DOCA_ERROR_CONNECTION_ABORTED;
		}
		if (waited >= SETTLE_WAIT_NS) {
			SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR,
				   "%s failed: process %u is unmapping exported memory and did not finish revoking "
				   "within 3 s",
				   op, im->d.pid);
			return DOCA_ERROR_TIME_OUT;
		}
		nanosleep(&pause, NULL);
		waited += REVOKE_POLL_NS;
	}
	return DOCA_SUCCESS;
}

/* Count in (see core_pci_export_revoke) to a live export that no
 * unmapping is being handled for. Watched: the table's flag (Dekker with
 * the watch thread, as with a revoke) and, before a write, a poll of the
 * userfaultfd; a read looks at both after the copy instead. */
static doca_error_t import_enter(struct core_pci_import *im, const char *op, bool to_remote)
{
	for (;;) {
		doca_error_t err;

		atomic_fetch_add(&im->slot->users, 1);
		if (!import_slot_live(im)) {
			atomic_fetch_sub(&im->slot->users, 1);
			return import_not_live(im, op);
		}
		if (!import_watched(im) ||
		    !(core_pci_watch_paused(im->table) || (to_remote && core_pci_watch_pending(im->watch_fd))))
			return DOCA_SUCCESS;
		/* Counted out, or the watch thread would wait for us. */
		atomic_fetch_sub(&im->slot->users, 1);
		err = import_settle(im, op);
		if (err != DOCA_SUCCESS)
			return err;
	}
}

static void import_leave(struct core_pci_import *im)
{
	atomic_fetch_sub(&im->slot->users, 1);
}

/* Whether the file-backed pieces of [remote, +len) are still what the
 * exporter published (one PROCMAP_QUERY per mapping, or a read of the
 * text of its maps). */
static doca_error_t import_check_files(struct core_pci_import *im, uint64_t remote, size_t len, const char *op)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = remote & ~(page - 1), hi = (remote + len + page - 1) & ~(page - 1);
	const struct pci_pieces *p = &im->pieces;
	bool files = false;
	int os_err;

	for (uint32_t k = 0; k < p->n && !files; k++)
		files = pci_piece_is_file(&p->piece[k]) && !(p->piece[k].state & PCI_PIECE_WATCHED) &&
			p->piece[k].start < hi && p->piece[k].end > lo;
	if (!files || len == 0)
		return DOCA_SUCCESS;
	switch (core_pci_pieces_check(im->maps, lo, hi, p->piece, p->n, &os_err)) {
	case PCI_PIECES_SAME:
		return DOCA_SUCCESS;
	case PCI_PIECES_CHANGED:
		break;
	case PCI_PIECES_UNKNOWN:
		if (os_err == ESRCH)
			break; /* its address space is gone: exited, or exec'd */
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "%s failed: cannot read process %u's memory map: %s", op, im->d.pid,
			   strerror(os_err));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (import_exporter_exited(im)) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "%s failed: the exporter (process %u) exited", op, im->d.pid);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	return import_replaced(im, op);
}

/* After the bytes moved (counted in; returns counted out): were they the
 * exported memory? File-backed pieces are looked up again; for watched
 * ones, an unmapping being handled now may be of this range: wait for it
 * and see whether it took the export. */
static doca_error_t import_verify(struct core_pci_import *im, uint64_t remote, size_t len, const char *op)
{
	doca_error_t err = import_check_files(im, remote, len, op);
	bool busy = err == DOCA_SUCCESS && import_watched(im) &&
		    (core_pci_watch_paused(im->table) || core_pci_watch_pending(im->watch_fd));

	import_leave(im);
	if (err != DOCA_SUCCESS)
		return err;
	if (busy) {
		err = import_settle(im, op);
		if (err != DOCA_SUCCESS)
			return err;
	}
	/* Stopped meanwhile is fine (the stop waited for this copy);
	 * unmapped is not. */
	if (atomic_load(&im->slot->id) == PCI_ID_UNMAPPED)
		return import_replaced(im, op);
	return DOCA_SUCCESS;
}

/* One process_vm call of at most len bytes, checked before (a write must
 * not land in a replacement) and after (a read must not return one: its
 * bytes are wiped). *done: what moved (partial transfers continue). */
static doca_error_t import_chunk(struct core_pci_import *im, uint64_t remote, char *local, size_t len,
				 bool to_remote, size_t *done)
{
	const char *op = to_remote ? "PCI write" : "PCI read";
	struct iovec l = {.iov_base = local, .iov_len = len};
	struct iovec r = {.iov_base = (void *)(uintptr_t)remote, .iov_len = len};
	doca_error_t err = import_enter(im, op, to_remote);
	ssize_t n;
	int vm_err;

	if (err != DOCA_SUCCESS)
		return err;
	err = import_check_access(im, remote, len, to_remote);
	if (err == DOCA_SUCCESS && to_remote)
		err = import_check_files(im, remote, len, op);
	if (err != DOCA_SUCCESS) {
		import_leave(im);
		return err;
	}
	n = to_remote ? process_vm_writev((pid_t)im->d.pid, &l, 1, &r, 1, 0)
		      : process_vm_readv((pid_t)im->d.pid, &l, 1, &r, 1, 0);
	vm_err = n < 0 ? errno : n == 0 ? EFAULT : 0;
	/* A fault may be the unmapping itself: verify before blaming it. */
	err = import_verify(im, remote, n > 0 ? (size_t)n : len, op);
	if (err != DOCA_SUCCESS && !to_remote)
		memset(local, 0, len);
	if (err == DOCA_SUCCESS && vm_err != 0)
		err = import_vm_error(im, vm_err, remote, len, to_remote);
	*done = n > 0 ? (size_t)n : 0;
	return err;
}

doca_error_t core_pci_import_copy(struct core_pci_import *im, uint64_t remote, void *local, size_t len,
				  bool to_remote)
{
	char *at = local;

	if (import_exporter_exited(im)) {
		SDK_LOG_RL(DOCA_LOG_LEVEL_ERROR, "PCI copy failed: the exporter (process %u) exited", im->d.pid);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (atomic_load(&im->replaced))
		return import_replaced(im, to_remote ? "PCI write" : "PCI read");
	while (len > 0) {
		size_t done = 0;
		doca_error_t err = import_chunk(im, remote, at, len < COPY_CHUNK ? len : COPY_CHUNK, to_remote, &done);

		if (err != DOCA_SUCCESS)
			return err;
		remote += done;
		at += done;
		len -= done;
	}
	return DOCA_SUCCESS;
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
