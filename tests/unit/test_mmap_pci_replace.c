/*
 * PCI exports whose memory the exporter unmaps, or replaces with another
 * mapping at the same address, without doca_mmap_stop (softdoca issue
 * 19, item 4). On hardware the registration pins the exported pages; here
 * the importer copies by address, so it must notice the new mapping and
 * refuse: its reads must never return the new mapping's bytes and its
 * writes must never land in it. Both fail with DOCA_ERROR_NOT_FOUND and an
 * ERROR line naming the cause, for anonymous memory (watched by the
 * exporter), a memfd and a regular file (looked up by the importer),
 * with PROCMAP_QUERY and with the text of /proc/<pid>/maps.
 *
 * The exporter is a forked child (pci_peer.h) answering commands over a
 * pipe; each step waits for its answer, nothing sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_log.h>

#include "mmap_pci.h"
#include "pci_dma.h"
#include "pci_peer.h"

/* What backs the exported memory (low byte of the child's argument). */
enum backing { ANON = 1, MEMFD = 2, REGULAR_FILE = 3 };
#define ARG_TEXT 0x100u	    /* read memory maps as text, not with PROCMAP_QUERY */
#define ARG_NO_WATCH 0x200u /* as if userfaultfd were unavailable */
#define ARG_TWO 0x400u	    /* a second export of the region's second half */

/* What the exporter puts in the mapping that replaces the export. */
#define SECRET 0xa5

/* ---- the exporter (child) ---- */

/* A regular file (on /tmp's file system) that only its mapping keeps. */
static int file_open(void)
{
	char path[] = "/tmp/test_mmap_pci_replace_XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC);

	if (fd >= 0)
		unlink(path);
	return fd;
}

/* MEM_LEN bytes of the given backing at `at` (with `how`: 0,
 * MAP_FIXED_NOREPLACE or MAP_FIXED). */
static uint8_t *map_region(int kind, void *at, int how)
{
	void *p;
	int fd;

	if (kind == ANON) {
		p = mmap(at, MEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | how, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	fd = kind == MEMFD ? memfd_create("test-pci", MFD_CLOEXEC) : file_open();
	if (fd < 0 || ftruncate(fd, MEM_LEN) != 0)
		return NULL;
	p = mmap(at, MEM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | how, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The exporter unmaps what it exported and maps something else there
 * (without stopping its mmaps); the new mapping holds SECRET. */
static uint8_t replace(int kind, uint8_t *mem, char how)
{
	uint8_t *p;

	if (how == 'r' && munmap(mem, MEM_LEN) != 0)
		return 0;
	p = map_region(kind, mem, how == 'r' ? MAP_FIXED_NOREPLACE : MAP_FIXED);
	if (p != mem)
		return 0;
	memset(p, SECRET, MEM_LEN);
	return 1;
}

static uint8_t holds(const uint8_t *mem, size_t from, uint8_t seed, bool secret)
{
	for (size_t i = from; i < MEM_LEN; i++)
		if (mem[i] != (secret ? SECRET : pattern(i, seed)))
			return 0;
	return 1;
}

static struct doca_mmap *export(struct doca_dev *dev, uint8_t *mem, size_t len, const void **desc, size_t *desc_len)
{
	struct doca_mmap *m;

	if (doca_mmap_create(&m) != DOCA_SUCCESS || doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, DOCA_ACCESS_FLAG_PCI_READ_WRITE) != DOCA_SUCCESS ||
	    doca_mmap_add_dev(m, dev) != DOCA_SUCCESS || doca_mmap_start(m) != DOCA_SUCCESS ||
	    doca_mmap_export_pci(m, dev, desc, desc_len) != DOCA_SUCCESS)
		return NULL;
	return m;
}

/* Commands: 'v' the second half holds pattern 50; 'r' munmap, then map
 * with MAP_FIXED_NOREPLACE; 'f' map over it with MAP_FIXED; 'u' munmap
 * only; 'S' the replacement still holds SECRET; 's' stop the export;
 * 'd' send the second export's descriptor; 't' stop the second export;
 * 'q' clean up and exit. Answers are one byte, 1 for done. */
static int child_replace_main(int in, int out, uint32_t arg)
{
	struct doca_dev *dev = open_dev();
	struct doca_mmap *m, *m2 = NULL;
	const void *desc, *desc2 = NULL;
	size_t len, len2 = 0;
	int kind = (int)(arg & 0xffu);
	uint8_t *mem, ok;
	char cmd;

	alarm(30); /* never outlive a broken test */
	(void)doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_WARNING);
	softdoca_pci_test_maps_text((arg & ARG_TEXT) != 0);
	softdoca_pci_test_no_watch((arg & ARG_NO_WATCH) != 0);
	mem = map_region(kind, NULL, 0);
	if (dev == NULL || mem == NULL)
		return 2;
	for (size_t i = 0; i < MEM_LEN; i++)
		mem[i] = pattern(i, 1);
	m = export(dev, mem, MEM_LEN, &desc, &len);
	if (m == NULL || ((arg & ARG_TWO) && (m2 = export(dev, mem + MEM_LEN / 2, MEM_LEN / 2, &desc2, &len2)) == NULL))
		return 3;
	if (!child_send_desc(out, desc, len))
		return 4;
	while (read_full(in, &cmd, 1)) {
		switch (cmd) {
		case 'v':
			ok = holds(mem, MEM_LEN / 2, 50, false);
			break;
		case 'r':
		case 'f':
			ok = replace(kind, mem, cmd);
			break;
		case 'u':
			ok = munmap(mem, MEM_LEN) == 0;
			break;
		case 'S':
			ok = holds(mem, 0, 0, true);
			break;
		case 's':
			ok = doca_mmap_stop(m) == DOCA_SUCCESS;
			break;
		case 'd':
			if (!child_send_desc(out, desc2, len2))
				return 5;
			continue;
		case 't':
			ok = doca_mmap_stop(m2) == DOCA_SUCCESS;
			break;
		case 'q':
			doca_mmap_destroy(m);
			if (m2 != NULL)
				doca_mmap_destroy(m2);
			doca_dev_close(dev);
			return 0;
		default:
			return 6;
		}
		write_full(out, &ok, 1);
	}
	return 7;
}

/* ---- the log (stderr, the child's too, goes to a file) ---- */

static int saved_stderr = -1;

/* Setup of every test: stderr into an unlinked file, read by log_has. */
static int log_capture(void **state)
{
	char path[] = "/tmp/test_mmap_pci_replace_log_XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	if (fd < 0)
		return -1;
	unlink(path);
	saved_stderr = dup(STDERR_FILENO);
	if (saved_stderr < 0 || dup2(fd, STDERR_FILENO) != STDERR_FILENO)
		return -1;
	close(fd);
	return 0;
}

/* Teardown, also after a failure: what was captured (cmocka's own
 * messages among it) goes to the real stderr. */
static int log_release(void **state)
{
	char buf[4096];
	off_t off = 0;
	ssize_t n;

	(void)state;
	while ((n = pread(STDERR_FILENO, buf, sizeof(buf), off)) > 0) {
		if (write(saved_stderr, buf, (size_t)n) != n)
			break;
		off += n;
	}
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	softdoca_pci_test_maps_text(false);
	return 0;
}

static off_t log_mark(void)
{
	return lseek(STDERR_FILENO, 0, SEEK_END);
}

/* A line since mark at this level that says what. */
static bool log_has(off_t mark, const char *level, const char *what)
{
	static char text[1 << 16];
	ssize_t n = pread(STDERR_FILENO, text, sizeof(text) - 1, mark);
	char *line = text;

	assert_true(n >= 0);
	text[n] = '\0';
	while (line != NULL && *line != '\0') {
		char *end = strchr(line, '\n');

		if (end != NULL)
			*end = '\0';
		if (strstr(line, level) != NULL && strstr(line, what) != NULL)
			return true;
		line = end != NULL ? end + 1 : NULL;
	}
	return false;
}

#define CAUSE "unmapped or replaced exported memory without doca_mmap_stop"

/* The exporter said (WARNING) it cannot watch anonymous memory: the
 * system refuses it userfaultfd (a seccomp profile, say). */
static bool watch_refused(void)
{
	if (!log_has(0, "[WARN]", "cannot watch"))
		return false;
	print_message("skipped: this system refuses the exporter a userfaultfd\n");
	return true;
}

/* ---- the importer (this process) ---- */

/* Whether the VMA of process pid holding addr carries a flag in
 * /proc/<pid>/smaps (uw: registered with a userfaultfd, write-protect
 * mode). */
static bool vma_flag(pid_t pid, const void *addr, const char *flag)
{
	char path[64], line[512];
	unsigned long long lo, hi, a = (unsigned long long)(uintptr_t)addr;
	bool in = false, found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%llx-%llx ", &lo, &hi) == 2)
			in = lo <= a && a < hi;
		else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			char pat[8];

			snprintf(pat, sizeof(pat), " %s", flag);
			found = strstr(line, pat) != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Read everything, then write the second half (checked by the exporter):
 * before any replacement, an export works as ever. */
static void both_directions(struct peer *p, struct doca_mmap *writer)
{
	size_t half = MEM_LEN / 2;

	memset(E.mem, 0, MEM_LEN);
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, MEM_LEN), buf_room(E.local, E.mem, MEM_LEN)),
			 DOCA_SUCCESS);
	for (size_t i = 0; i < MEM_LEN; i++)
		assert_int_equal(E.mem[i], pattern(i, 1));
	for (size_t i = 0; i < MEM_LEN; i++)
		E.mem[i] = pattern(i, 50);
	assert_int_equal(copy(buf_data(E.local, E.mem + half, half), buf_room(writer, E.remote_addr + half, half)),
			 DOCA_SUCCESS);
	assert_int_equal(ask(p, 'v'), 1);
}

/* After the exporter replaced the memory: the read fails and brings back
 * nothing of the new mapping, the write fails and leaves it alone, each
 * with an ERROR line that says why; a new import is refused too. Both are
 * tried before anything is asserted, so that a failure shows all that
 * went wrong. */
static void expect_refused(struct peer *p, struct doca_mmap *writer)
{
	struct doca_mmap *again = NULL;
	off_t mark = log_mark(), mark_w;
	doca_error_t err_r, err_w;
	bool leaked, logged_r, intact;

	memset(E.mem, 0, MEM_LEN);
	err_r = copy(buf_data(E.remote, E.remote_addr, MEM_LEN), buf_room(E.local, E.mem, MEM_LEN));
	leaked = memchr(E.mem, SECRET, MEM_LEN) != NULL;
	logged_r = log_has(mark, "[ERROR]", "PCI read refused: the exporter") && log_has(mark, "[ERROR]", CAUSE);
	mark_w = log_mark();
	memset(E.mem, 0x3c, MEM_LEN);
	err_w = copy(buf_data(E.local, E.mem, MEM_LEN), buf_room(writer, E.remote_addr, MEM_LEN));
	intact = ask(p, 'S') == 1;
	if (leaked)
		print_message("the read returned bytes of the mapping that replaced the export (status %d)\n", err_r);
	if (!intact)
		print_message("the write landed in the mapping that replaced the export (status %d)\n", err_w);

	assert_int_equal(err_r, DOCA_ERROR_NOT_FOUND);
	assert_false(leaked);
	assert_true(logged_r);
	assert_int_equal(err_w, DOCA_ERROR_NOT_FOUND);
	assert_true(intact);
	assert_true(log_has(mark_w, "[ERROR]", "PCI write refused: the exporter"));
	assert_int_equal(doca_mmap_create_from_export(NULL, p->desc, p->desc_len, E.dev, &again), DOCA_ERROR_NOT_FOUND);
	assert_null(again);
}

/* Import, check both directions, let the exporter replace its memory
 * (how: 'r' munmap then map, 'f' MAP_FIXED over it), expect refusals. */
static void replace_case(uint32_t arg, char how)
{
	struct doca_mmap *writer;
	struct peer p;

	softdoca_pci_test_maps_text((arg & ARG_TEXT) != 0);
	spawn_exec(&p, child_replace_main, arg);
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	if ((arg & 0xffu) == ANON && !(arg & ARG_NO_WATCH) && watch_refused()) {
		dma_env_close();
		finish(&p);
		return;
	}
	/* The write goes through a second import: each says why once. */
	assert_int_equal(doca_mmap_create_from_export(NULL, p.desc, p.desc_len, E.dev, &writer), DOCA_SUCCESS);
	both_directions(&p, writer);
	assert_int_equal(ask(&p, how), 1);
	expect_refused(&p, writer);
	assert_int_equal(doca_mmap_destroy(writer), DOCA_SUCCESS);
	dma_env_close();
	finish(&p);
}

static void test_anon_munmap_and_map(void **state)
{
	(void)state;
	replace_case(ANON, 'r');
}

static void test_anon_map_fixed_over(void **state)
{
	(void)state;
	replace_case(ANON, 'f');
}

static void test_memfd_munmap_and_map(void **state)
{
	(void)state;
	replace_case(MEMFD, 'r');
}

static void test_memfd_map_fixed_over(void **state)
{
	(void)state;
	replace_case(MEMFD, 'f');
}

static void test_file_munmap_and_map(void **state)
{
	(void)state;
	replace_case(REGULAR_FILE, 'r');
}

static void test_file_map_fixed_over(void **state)
{
	(void)state;
	replace_case(REGULAR_FILE, 'f');
}

/* Where the kernel cannot watch a memfd (before 5.19), it is looked up
 * like any file. */
static void test_memfd_unwatched(void **state)
{
	(void)state;
	replace_case(MEMFD | ARG_NO_WATCH, 'r');
}

/* Kernels before 6.11 have no PROCMAP_QUERY: the text of the maps. */
static void test_file_maps_text(void **state)
{
	(void)state;
	replace_case(REGULAR_FILE | ARG_TEXT, 'r');
}

static void test_memfd_unwatched_maps_text(void **state)
{
	(void)state;
	replace_case(MEMFD | ARG_NO_WATCH | ARG_TEXT, 'f');
}

/* Unmapped, nothing mapped again: the same refusal (not a fault). */
static void test_anon_unmapped(void **state)
{
	struct peer p;
	off_t mark;

	(void)state;
	spawn_exec(&p, child_replace_main, ANON);
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	if (watch_refused()) {
		dma_env_close();
		finish(&p);
		return;
	}
	assert_int_equal(ask(&p, 'u'), 1);
	mark = log_mark();
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 4096), buf_room(E.local, E.mem, 4096)),
			 DOCA_ERROR_NOT_FOUND);
	assert_true(log_has(mark, "[ERROR]", CAUSE));
	assert_int_equal(copy(buf_data(E.local, E.mem, 4096), buf_room(E.remote, E.remote_addr, 4096)),
			 DOCA_ERROR_NOT_FOUND);
	dma_env_close();
	finish(&p);
}

/* Stop first, then unmap: a plain revoke, the watch is gone with it (the
 * munmap waits for nobody), and the exporter is not told off. */
static void test_stop_then_unmap(void **state)
{
	struct peer p;
	off_t mark;

	(void)state;
	spawn_exec(&p, child_replace_main, ANON);
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	if (watch_refused()) {
		dma_env_close();
		finish(&p);
		return;
	}
	assert_true(vma_flag(p.pid, E.remote_addr, "uw"));
	assert_int_equal(ask(&p, 's'), 1);
	assert_false(vma_flag(p.pid, E.remote_addr, "uw"));
	mark = log_mark();
	assert_int_equal(ask(&p, 'u'), 1);
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 4096), buf_room(E.local, E.mem, 4096)),
			 DOCA_ERROR_NOT_FOUND);
	assert_true(log_has(mark, "[ERROR]", "the export was revoked"));
	assert_false(log_has(mark, "", CAUSE));
	assert_false(log_has(mark, "", "had already ended"));
	dma_env_close();
	finish(&p);
}

/* The exporter's own stop, after it unmapped the memory, says what it did
 * wrong (a WARNING: nothing failed on its side). */
static void test_exporter_told_at_stop(void **state)
{
	struct peer p;
	off_t mark;

	(void)state;
	spawn_exec(&p, child_replace_main, ANON);
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	if (watch_refused()) {
		dma_env_close();
		finish(&p);
		return;
	}
	assert_int_equal(ask(&p, 'r'), 1);
	mark = log_mark();
	assert_int_equal(ask(&p, 's'), 1);
	assert_true(log_has(mark, "[WARN]", "had already ended: this process unmapped or replaced"));
	dma_env_close();
	finish(&p);
}

/* Two exports over one region (the second over its second half): when
 * the first stops, the watch stays where the second needs it, and the
 * second is refused once the region is replaced. */
static void test_overlapping_exports(void **state)
{
	struct peer p;
	uint32_t l = 0;

	(void)state;
	spawn_exec(&p, child_replace_main, ANON | ARG_TWO);
	/* Import the second export instead of the first. */
	assert_true(write_full(p.to_child, "d", 1));
	assert_true(read_full(p.from_child, &l, sizeof(l)));
	assert_true(l > 0 && l <= DESC_MAX);
	assert_true(read_full(p.from_child, p.desc, l));
	p.desc_len = l;
	if (!import_len_or_skip(&p, MEM_LEN / 2)) {
		finish(&p);
		return;
	}
	if (watch_refused()) {
		dma_env_close();
		finish(&p);
		return;
	}
	assert_true(vma_flag(p.pid, E.remote_addr - MEM_LEN / 2, "uw"));
	assert_true(vma_flag(p.pid, E.remote_addr, "uw"));
	assert_int_equal(ask(&p, 's'), 1); /* the first export */
	assert_false(vma_flag(p.pid, E.remote_addr - MEM_LEN / 2, "uw"));
	assert_true(vma_flag(p.pid, E.remote_addr, "uw"));
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 4096), buf_room(E.local, E.mem, 4096)), DOCA_SUCCESS);
	assert_int_equal(E.mem[7], pattern(MEM_LEN / 2 + 7, 1));
	assert_int_equal(ask(&p, 'r'), 1);
	memset(E.mem, 0, 4096);
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 4096), buf_room(E.local, E.mem, 4096)),
			 DOCA_ERROR_NOT_FOUND);
	assert_null(memchr(E.mem, SECRET, 4096));
	assert_int_equal(ask(&p, 't'), 1);
	dma_env_close();
	finish(&p);
}

/* Without userfaultfd the exporter says what it cannot watch (anonymous
 * memory); exports still work. */
static void test_unwatched_warns(void **state)
{
	struct peer p;
	off_t mark;

	(void)state;
	mark = log_mark();
	spawn_exec(&p, child_replace_main, ANON | ARG_NO_WATCH);
	assert_true(log_has(mark, "[WARN]", "cannot watch exported memory for unmapping"));
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	assert_false(vma_flag(p.pid, E.remote_addr, "uw"));
	both_directions(&p, E.remote);
	dma_env_close();
	finish(&p);
}

const struct pci_child pci_children[] = {
	{"replace", child_replace_main},
	{NULL, NULL},
};

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_anon_munmap_and_map, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_anon_map_fixed_over, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_memfd_munmap_and_map, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_memfd_map_fixed_over, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_file_munmap_and_map, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_file_map_fixed_over, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_memfd_unwatched, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_file_maps_text, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_memfd_unwatched_maps_text, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_anon_unmapped, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_stop_then_unmap, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_exporter_told_at_stop, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_overlapping_exports, log_capture, log_release),
		cmocka_unit_test_setup_teardown(test_unwatched_warns, log_capture, log_release),
	};

	pci_child_run(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
