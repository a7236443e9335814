/*
 * softdoca — what backs a range of a process's address space, read from
 * its /proc/<pid>/maps: one PROCMAP_QUERY ioctl per mapping where the
 * kernel has it (Linux >= 6.11), else the text of the file up to the
 * range. PCI exports record the pieces of their range at export, and
 * importers compare before trusting a copy of file-backed memory (see
 * mmap_pci.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log_internal.h"
#include "mmap_pci_table.h"

SDK_LOG_REGISTER(MMAP_PCI::VMA)

/* The kernel's PROCMAP_QUERY interface (include/uapi/linux/fs.h, Linux
 * 6.11), spelled here: the C library headers of older systems lack it. */
struct maps_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
_Static_assert(sizeof(struct maps_query) == 104, "PROCMAP_QUERY argument layout");
#define MAPS_QUERY _IOWR('f', 17, struct maps_query)
#define MAPS_QUERY_VMA_SHARED 0x08u
#define MAPS_QUERY_COVERING_OR_NEXT 0x10u

/* Whether this kernel answers PROCMAP_QUERY: learnt on first use. */
enum { QUERY_UNKNOWN, QUERY_YES, QUERY_NO };
static _Atomic int query_support = QUERY_UNKNOWN;
static _Atomic bool test_text;

struct core_pci_maps {
	int fd;
	bool text;
	pthread_mutex_t lock; /* text: one reader of the file position at a time */
};

/* One mapping, as either way of reading reports it. */
struct maps_vma {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t ino;
	uint32_t dev_major;
	uint32_t dev_minor;
	bool shared;
};

/* Called per mapping overlapping the range, in address order; false
 * stops the walk. */
typedef bool (*maps_vma_cb_t)(const struct maps_vma *v, void *arg);

SOFTDOCA_EXPORT void softdoca_pci_test_maps_text(bool on)
{
	atomic_store(&test_text, on);
}

/* ------------------------------------------------------------------ */
/* PROCMAP_QUERY: one ioctl per mapping                                 */

static int query_walk(int fd, uint64_t lo, uint64_t hi, maps_vma_cb_t cb, void *arg)
{
	uint64_t addr = lo;

	while (addr < hi) {
		struct maps_query q = {.size = sizeof(q), .query_flags = MAPS_QUERY_COVERING_OR_NEXT, .query_addr = addr};
		struct maps_vma v;

		if (ioctl(fd, MAPS_QUERY, &q) != 0)
			return errno == ENOENT ? 0 : errno; /* ENOENT: nothing at or above addr */
		if (q.vma_start >= hi || q.vma_end <= addr)
			return 0;
		v = (struct maps_vma){.start = q.vma_start,
				      .end = q.vma_end,
				      .pgoff = q.vma_offset,
				      .ino = q.inode,
				      .dev_major = q.dev_major,
				      .dev_minor = q.dev_minor,
				      .shared = (q.vma_flags & MAPS_QUERY_VMA_SHARED) != 0};
		if (!cb(&v, arg))
			return 0;
		addr = q.vma_end;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The text of /proc/<pid>/maps, parsed as it streams by                */

/* A line: "start-end perms offset major:minor inode [name]\n", numbers
 * in hex but the inode. Fields are read as they come; the name (any
 * bytes but a newline) is skipped. */
enum { F_START, F_END, F_PERMS, F_OFFSET, F_MAJOR, F_MINOR, F_INODE, F_NAME };

struct maps_line {
	unsigned int field;
	unsigned int digits; /* perms: characters */
	uint64_t v[F_NAME];
	bool shared; /* the fourth perms character is 's' */
	bool bad;
};

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The separator that ends each numeric field. */
static char field_end(unsigned int field)
{
	return field == F_START ? '-' : field == F_MAJOR ? ':' : ' ';
}

static void line_digit(struct maps_line *l, char c)
{
	bool dec = l->field == F_INODE;
	int d = dec ? (c >= '0' && c <= '9' ? c - '0' : -1) : hex_value(c);
	uint64_t base = dec ? 10 : 16;

	if (d < 0 || l->v[l->field] > (UINT64_MAX - (uint64_t)d) / base) {
		l->bad = true;
		return;
	}
	l->v[l->field] = l->v[l->field] * base + (uint64_t)d;
	l->digits++;
}

/* Feed one byte (not the newline) of a line. */
static void line_feed(struct maps_line *l, char c)
{
	if (l->bad || l->field == F_NAME)
		return;
	if (l->field == F_PERMS) {
		if (c == ' ') {
			l->field++;
			l->digits = 0;
			return;
		}
		l->shared |= ++l->digits == 4 && c == 's';
		return;
	}
	if (c == field_end(l->field)) {
		l->bad |= l->digits == 0;
		l->field++;
		l->digits = 0;
		return;
	}
	line_digit(l, c);
}

/* At the newline: the mapping the line names, if it was well formed. */
static bool line_end(const struct maps_line *l, struct maps_vma *v)
{
	bool inode_done = l->field == F_NAME || (l->field == F_INODE && l->digits > 0);

	if (l->bad || !inode_done || l->v[F_END] <= l->v[F_START])
		return false;
	*v = (struct maps_vma){.start = l->v[F_START],
			       .end = l->v[F_END],
			       .pgoff = l->v[F_OFFSET],
			       .ino = l->v[F_INODE],
			       .dev_major = (uint32_t)l->v[F_MAJOR],
			       .dev_minor = (uint32_t)l->v[F_MINOR],
			       .shared = l->shared};
	return true;
}

struct text_walk {
	uint64_t lo, hi;
	uint64_t prev_end; /* lines come in address order; a step back is skipped */
	maps_vma_cb_t cb;
	void *arg;
	bool done;
};

/* One complete line: pass it on if it overlaps the range. */
static void text_line(struct text_walk *w, const struct maps_line *l)
{
	struct maps_vma v;

	if (!line_end(l, &v) || v.start < w->prev_end)
		return;
	w->prev_end = v.end;
	if (v.end <= w->lo)
		return;
	if (v.start >= w->hi || !w->cb(&v, w->arg))
		w->done = true;
}

/* Read from the start; the lines past the range are never produced. */
static int text_walk(int fd, uint64_t lo, uint64_t hi, maps_vma_cb_t cb, void *arg)
{
	struct text_walk w = {.lo = lo, .hi = hi, .cb = cb, .arg = arg};
	struct maps_line line = {0};
	char buf[4096];
	off_t off = 0;

	while (!w.done) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return 0;
		off += n;
		for (ssize_t i = 0; i < n && !w.done; i++) {
			if (buf[i] != '\n') {
				line_feed(&line, buf[i]);
				continue;
			}
			text_line(&w, &line);
			line = (struct maps_line){0};
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The reader                                                           */

/* Whether PROCMAP_QUERY works here, asked once per process. */
static bool query_supported(int fd)
{
	struct maps_query q = {.size = sizeof(q), .query_flags = MAPS_QUERY_COVERING_OR_NEXT, .query_addr = 0};
	int known = atomic_load(&query_support);

	if (known != QUERY_UNKNOWN)
		return known == QUERY_YES;
	if (ioctl(fd, MAPS_QUERY, &q) == 0 || errno == ENOENT || errno == ESRCH) {
		atomic_store(&query_support, QUERY_YES);
		return true;
	}
	SDK_LOG_DBG("PROCMAP_QUERY not available (%s): PCI exports read /proc/<pid>/maps as text", strerror(errno));
	atomic_store(&query_support, QUERY_NO);
	return false;
}

doca_error_t core_pci_maps_open(pid_t pid, struct core_pci_maps **out)
{
	struct core_pci_maps *m;
	char path[64];
	int fd;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/maps");
	else
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		SDK_LOG_ERR("the kernel refused reading the memory map of process %d (%s): reaching another "
			    "process's memory needs ptrace permission. Fix: run exporter and importer as the same user "
			    "(a softdoca exporter lets its user in under kernel.yama.ptrace_scope=1); with ptrace_scope "
			    "2 or 3 the importer needs CAP_SYS_PTRACE",
			    (int)pid, strerror(errno));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (fd < 0 && errno == ENOENT) {
		SDK_LOG_ERR("PCI: process %d does not exist (it exited)", (int)pid);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (fd < 0) {
		SDK_LOG_ERR("PCI: cannot open %s: %s", path, strerror(errno));
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		close(fd);
		SDK_LOG_ERR("PCI: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	m->fd = fd;
	m->text = atomic_load(&test_text) || !query_supported(fd);
	pthread_mutex_init(&m->lock, NULL);
	*out = m;
	return DOCA_SUCCESS;
}

void core_pci_maps_close(struct core_pci_maps *m)
{
	if (m == NULL)
		return;
	close(m->fd);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* 0 or an errno (ESRCH: the address space is gone). */
static int maps_walk(struct core_pci_maps *m, uint64_t lo, uint64_t hi, maps_vma_cb_t cb, void *arg)
{
	int err;

	if (!m->text)
		return query_walk(m->fd, lo, hi, cb, arg);
	pthread_mutex_lock(&m->lock);
	err = text_walk(m->fd, lo, hi, cb, arg);
	pthread_mutex_unlock(&m->lock);
	return err;
}

/* ------------------------------------------------------------------ */
/* Pieces: runs of one backing                                          */

struct pieces_build {
	struct pci_piece *out;
	uint32_t max, n;
	uint64_t lo, hi;
	uint64_t next; /* where the next mapping must start: no hole */
	bool hole, too_many;
};

static bool piece_continues(const struct pci_piece *last, const struct pci_piece *p)
{
	if (last->end != p->start || last->ino != p->ino || last->dev_major != p->dev_major ||
	    last->dev_minor != p->dev_minor || last->flags != p->flags)
		return false;
	/* A file: also at the next offset (the same file mapped twice is two
	 * pieces). */
	return !pci_piece_is_file(p) || last->pgoff + (last->end - last->start) == p->pgoff;
}

static bool pieces_add(const struct maps_vma *v, void *arg)
{
	struct pieces_build *b = arg;
	uint64_t s = v->start > b->lo ? v->start : b->lo;
	uint64_t e = v->end < b->hi ? v->end : b->hi;
	struct pci_piece p = {.start = s, .end = e, .ino = v->ino, .dev_major = v->dev_major, .dev_minor = v->dev_minor};

	if (s != b->next) {
		b->hole = true;
		return false;
	}
	if (pci_piece_is_file(&p)) {
		p.pgoff = v->pgoff + (s - v->start);
		p.flags = v->shared ? PCI_PIECE_SHARED : 0;
	}
	b->next = e;
	if (b->n > 0 && piece_continues(&b->out[b->n - 1], &p)) {
		b->out[b->n - 1].end = e;
		return true;
	}
	if (b->n == b->max) {
		b->too_many = true;
		return false;
	}
	b->out[b->n++] = p;
	return true;
}

enum core_pci_pieces_result core_pci_pieces_read(struct core_pci_maps *m, uint64_t lo, uint64_t hi,
						 struct pci_piece *out, uint32_t max, uint32_t *n, int *err)
{
	struct pieces_build b = {.out = out, .max = max, .lo = lo, .hi = hi, .next = lo};

	*err = maps_walk(m, lo, hi, pieces_add, &b);
	if (*err == ESRCH)
		return PCI_PIECES_GONE;
	if (*err != 0)
		return PCI_PIECES_ERROR;
	if (b.too_many)
		return PCI_PIECES_TOO_MANY;
	if (b.hole || b.next != hi)
		return PCI_PIECES_HOLE;
	*n = b.n;
	return PCI_PIECES_OK;
}

/* The recorded pieces cut to [lo, hi): what reading [lo, hi) now must
 * give if nothing changed (a cut run is still one run). */
static uint32_t pieces_cut(const struct pci_piece *want, uint32_t n, uint64_t lo, uint64_t hi, struct pci_piece *out)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct pci_piece p = want[i];

		if (p.end <= lo || p.start >= hi)
			continue;
		if (p.start < lo) {
			if (pci_piece_is_file(&p))
				p.pgoff += lo - p.start;
			p.start = lo;
		}
		if (p.end > hi)
			p.end = hi;
		out[k++] = p;
	}
	return k;
}

static bool piece_equal(const struct pci_piece *a, const struct pci_piece *b)
{
	return a->start == b->start && a->end == b->end && a->ino == b->ino && a->pgoff == b->pgoff &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor && a->flags == b->flags;
}

enum core_pci_pieces_verdict core_pci_pieces_check(struct core_pci_maps *m, uint64_t lo, uint64_t hi,
						   const struct pci_piece *want, uint32_t n, int *err)
{
	struct pci_piece expect[PCI_EXPORT_PIECES], now[PCI_EXPORT_PIECES];
	uint32_t k = pieces_cut(want, n < PCI_EXPORT_PIECES ? n : PCI_EXPORT_PIECES, lo, hi, expect), got = 0;

	*err = 0;
	switch (core_pci_pieces_read(m, lo, hi, now, k, &got, err)) {
	case PCI_PIECES_OK:
		break;
	case PCI_PIECES_HOLE:
	case PCI_PIECES_TOO_MANY:
		return PCI_PIECES_CHANGED;
	case PCI_PIECES_GONE:
	case PCI_PIECES_ERROR:
		return PCI_PIECES_UNKNOWN;
	}
	if (got != k)
		return PCI_PIECES_CHANGED;
	for (uint32_t i = 0; i < k; i++)
		if (!piece_equal(&expect[i], &now[i]))
			return PCI_PIECES_CHANGED;
	return PCI_PIECES_SAME;
}

/* ------------------------------------------------------------------ */
/* Pins: the files of exported pieces stay referenced                   */

/* A new mapping of the same pages (mremap with old size 0, which shared
 * mappings allow), made inaccessible and left out of forked children. */
static void pin_take(const struct pci_piece *p, struct pci_pin *pin)
{
	size_t len = (size_t)(p->end - p->start);
	void *alias = mremap((void *)(uintptr_t)p->start, 0, len, MREMAP_MAYMOVE);

	if (alias == MAP_FAILED) {
		SDK_LOG_WARN("PCI export: cannot pin the file mapped at [0x%llx, 0x%llx) (mremap: %s): if it is "
			     "unmapped and a new file gets its inode number, an importer does not notice",
			     (unsigned long long)p->start, (unsigned long long)p->end, strerror(errno));
		return;
	}
	(void)mprotect(alias, len, PROT_NONE);
	(void)madvise(alias, len, MADV_DONTFORK);
	*pin = (struct pci_pin){.addr = alias, .len = len};
}

void core_pci_pins_take(const struct pci_pieces *p, struct pci_pin pins[PCI_EXPORT_PIECES])
{
	for (uint32_t k = 0; k < p->n && k < PCI_EXPORT_PIECES; k++) {
		const struct pci_piece *q = &p->piece[k];

		pins[k] = (struct pci_pin){0};
		if (!pci_piece_is_file(q) || (q->state & PCI_PIECE_WATCHED))
			continue;
		if (q->flags & PCI_PIECE_SHARED) {
			pin_take(q, &pins[k]);
			continue;
		}
		/* Only a deleted file's inode number can pass to a new file,
		 * and a program's own data sections (the usual private file
		 * mappings) are not: not worth a warning at every export. */
		SDK_LOG_DBG("PCI export: [0x%llx, 0x%llx) maps a file privately, which cannot be pinned: if the file "
			    "is deleted and unmapped and a new file gets its inode number, an importer does not notice",
			    (unsigned long long)q->start, (unsigned long long)q->end);
	}
}

void core_pci_pins_release(struct pci_pin pins[PCI_EXPORT_PIECES])
{
	for (uint32_t k = 0; k < PCI_EXPORT_PIECES; k++) {
		if (pins[k].addr != NULL)
			munmap(pins[k].addr, pins[k].len);
		pins[k] = (struct pci_pin){0};
	}
}
