/*
 * Unit tests of PCI exports between two real processes (one plays the
 * host, the other the DPU): doca_mmap_export_pci in a forked exporter,
 * doca_mmap_create_from_export and DMA memcpy in this process, both
 * directions byte for byte; refusals (range, permission, forged fields,
 * ptrace); revocation by stop; exporter killed; malformed descriptors; fds
 * and mappings flat over many imports; sync events across the processes.
 *
 * The exporter is always the child: under Yama ptrace_scope 1 an ancestor
 * may still read its descendants, so the tests run there too.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_sync_event.h>

#include "pci_dma.h"
#include "pci_peer.h"

#define ADDS 1000u

/* ---- tests ---- */

static void test_caps(void **state)
{
	struct doca_devinfo **list;
	uint32_t n;
	uint8_t cap = 0;

	(void)state;
	assert_int_equal(doca_devinfo_create_list(&list, &n), DOCA_SUCCESS);
	assert_true(n > 0);
	assert_int_equal(doca_mmap_cap_is_export_pci_supported(list[0], &cap), DOCA_SUCCESS);
	assert_int_equal(cap, 1);
	cap = 0;
	assert_int_equal(doca_mmap_cap_is_create_from_export_pci_supported(list[0], &cap), DOCA_SUCCESS);
	assert_int_equal(cap, 1);
	assert_int_equal(doca_sync_event_cap_is_export_to_remote_pci_supported(list[0]), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_cap_is_create_from_export_supported(list[0]), DOCA_SUCCESS);
	doca_devinfo_destroy_list(list);
}

/* Export needs a started local mmap with a PCI permission. */
static void test_export_rules(void **state)
{
	static uint8_t mem[4096];
	struct doca_dev *dev = open_dev();
	struct doca_mmap *mmap;
	const void *desc, *desc2;
	size_t len, len2;
	uint8_t exported = 9;

	(void)state;
	assert_non_null(dev);
	assert_int_equal(doca_mmap_create(&mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_memrange(mmap, mem, sizeof(mem)), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_add_dev(mmap, dev), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_export_pci(mmap, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED); /* not started */
	assert_int_equal(doca_mmap_start(mmap), DOCA_SUCCESS);
	/* LOCAL_READ_WRITE only: no PCI access granted. */
	assert_int_equal(doca_mmap_export_pci(mmap, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_mmap_stop(mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_ONLY), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_start(mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_export_pci(NULL, dev, &desc, &len), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_export_pci(mmap, dev, &desc, &len), DOCA_SUCCESS);
	assert_int_equal(len, 88);
	assert_memory_equal(desc, "SDPX", 4);
	assert_int_equal(doca_mmap_get_exported(mmap, &exported), DOCA_SUCCESS);
	assert_int_equal(exported, 1);
	/* Same export while live. */
	assert_int_equal(doca_mmap_export_pci(mmap, dev, &desc2, &len2), DOCA_SUCCESS);
	assert_ptr_equal(desc, desc2);
	assert_int_equal(doca_mmap_stop(mmap), DOCA_SUCCESS);
	assert_int_equal(doca_mmap_get_exported(mmap, &exported), DOCA_SUCCESS);
	assert_int_equal(exported, 0);
	assert_int_equal(doca_mmap_destroy(mmap), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* Read the exporter's memory, write it, copy inside it: every byte. */
static void test_dma_both_directions(void **state)
{
	struct peer p;
	uint8_t from_export = 0;
	size_t i, half = MEM_LEN / 2;

	(void)state;
	spawn_exec(&p, child_mmap_main, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	assert_int_equal(doca_mmap_get_from_export(E.remote, &from_export), DOCA_SUCCESS);
	assert_int_equal(from_export, 1);

	/* Exporter -> here: the whole range. */
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, MEM_LEN), buf_room(E.local, E.mem, MEM_LEN)),
			 DOCA_SUCCESS);
	for (i = 0; i < MEM_LEN; i++)
		assert_int_equal(E.mem[i], pattern(i, 1));

	/* Here -> exporter: its second half; it checks the bytes itself. */
	for (i = 0; i < MEM_LEN; i++)
		E.mem[i] = pattern(i, 50);
	assert_int_equal(copy(buf_data(E.local, E.mem + half, half), buf_room(E.remote, E.remote_addr + half, half)),
			 DOCA_SUCCESS);
	assert_int_equal(ask(&p, 'v'), 1);

	/* Exporter -> exporter (through a bounce buffer), read back. */
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr + half, 30000),
			      buf_room(E.remote, E.remote_addr, 30000)),
			 DOCA_SUCCESS);
	memset(E.mem, 0, MEM_LEN);
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 30000), buf_room(E.local, E.mem, 30000)),
			 DOCA_SUCCESS);
	for (i = 0; i < 30000; i++)
		assert_int_equal(E.mem[i], pattern(i + half, 50));

	dma_env_close();
	finish(&p);
}

/* Patch a little-endian field of a descriptor copy. */
static void patch(uint8_t *d, size_t off, uint64_t v, unsigned int bytes)
{
	for (unsigned int i = 0; i < bytes; i++)
		d[off + i] = (uint8_t)(v >> (8 * i));
}

/* Range and permissions: checked at submit against the import, and again
 * at the copy against what the exporter published (forged fields). */
static void test_refusals(void **state)
{
	struct peer p;
	struct doca_buf *b;
	struct doca_mmap *forged;
	uint8_t d[DESC_MAX];

	(void)state;
	spawn_exec(&p, child_mmap_main, DOCA_ACCESS_FLAG_PCI_READ_ONLY);
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	/* Reading is granted. */
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 64), buf_room(E.local, E.mem, 64)), DOCA_SUCCESS);
	assert_int_equal(E.mem[5], pattern(5, 1));
	/* Writing is not: refused at submit. */
	assert_int_equal(copy(buf_data(E.local, E.mem, 64), buf_room(E.remote, E.remote_addr, 64)),
			 DOCA_ERROR_NOT_PERMITTED);
	/* Outside the exported range: no buf. */
	assert_int_equal(doca_buf_inventory_buf_get_by_addr(E.inv, E.remote, E.remote_addr + MEM_LEN - 8, 16, &b),
			 DOCA_ERROR_INVALID_VALUE);

	/* A descriptor forged to grant writing and twice the range: the
	 * import accepts it, but the exporter's table decides. */
	memcpy(d, p.desc, p.desc_len);
	patch(d, 44, DOCA_ACCESS_FLAG_PCI_READ_WRITE, 4);
	patch(d, 80, 2 * MEM_LEN, 8);
	assert_int_equal(doca_mmap_create_from_export(NULL, d, p.desc_len, E.dev, &forged), DOCA_SUCCESS);
	assert_int_equal(copy(buf_data(E.local, E.mem, 64), buf_room(forged, E.remote_addr, 64)),
			 DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(copy(buf_data(forged, E.remote_addr + MEM_LEN, 64), buf_room(E.local, E.mem, 64)),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_mmap_destroy(forged), DOCA_SUCCESS);

	/* A forged secret: no import at all. */
	memcpy(d, p.desc, p.desc_len);
	d[60] ^= 0x5a;
	assert_int_equal(doca_mmap_create_from_export(NULL, d, p.desc_len, E.dev, &forged), DOCA_ERROR_NOT_FOUND);

	/* Re-exporting for RDMA needs RDMA permissions from the host; a PCI
	 * import is never exported to PCI again. */
	{
		const void *x;
		size_t xl;

		assert_int_equal(doca_mmap_export_rdma(E.remote, E.dev, &x, &xl), DOCA_ERROR_NOT_PERMITTED);
		assert_int_equal(doca_mmap_export_pci(E.remote, E.dev, &x, &xl), DOCA_ERROR_NOT_PERMITTED);
	}
	dma_env_close();
	finish(&p);
}

/* The exporter's stop revokes: later copies and imports fail. */
static void test_revoked_by_stop(void **state)
{
	struct peer p;
	struct doca_mmap *again;

	(void)state;
	spawn_exec(&p, child_mmap_main, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 128), buf_room(E.local, E.mem, 128)), DOCA_SUCCESS);
	assert_int_equal(ask(&p, 's'), 1);
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 128), buf_room(E.local, E.mem, 128)),
			 DOCA_ERROR_NOT_FOUND);
	assert_int_equal(copy(buf_data(E.local, E.mem, 128), buf_room(E.remote, E.remote_addr, 128)),
			 DOCA_ERROR_NOT_FOUND);
	assert_int_equal(doca_mmap_create_from_export(NULL, p.desc, p.desc_len, E.dev, &again), DOCA_ERROR_NOT_FOUND);
	dma_env_close();
	finish(&p);
}

/* A killed exporter: the copy fails at once with a clear error. */
static void test_exporter_killed(void **state)
{
	struct peer p;
	struct doca_mmap *again;
	struct timespec t0, t1;

	(void)state;
	spawn_exec(&p, child_mmap_main, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	if (!import_or_skip(&p)) {
		finish(&p);
		return;
	}
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 128), buf_room(E.local, E.mem, 128)), DOCA_SUCCESS);
	kill_child(&p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(copy(buf_data(E.remote, E.remote_addr, 128), buf_room(E.local, E.mem, 128)),
			 DOCA_ERROR_CONNECTION_ABORTED);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	assert_int_equal(copy(buf_data(E.local, E.mem, 128), buf_room(E.remote, E.remote_addr, 128)),
			 DOCA_ERROR_CONNECTION_ABORTED);
	assert_int_equal(doca_mmap_create_from_export(NULL, p.desc, p.desc_len, E.dev, &again), DOCA_ERROR_NOT_FOUND);
	dma_env_close();
}

/* stderr grew since mark: the refusal said why. */
static off_t log_mark(void)
{
	return lseek(STDERR_FILENO, 0, SEEK_END);
}

static void expect_refused(struct doca_dev *dev, const uint8_t *d, size_t len, doca_error_t want)
{
	struct doca_mmap *m = NULL;
	off_t mark = log_mark();

	assert_int_equal(doca_mmap_create_from_export(NULL, d, len, dev, &m), want);
	assert_null(m);
	assert_true(log_mark() > mark);
}

static void expect_refused_either(struct doca_dev *dev, const uint8_t *d, size_t len, doca_error_t a,
				  doca_error_t b)
{
	struct doca_mmap *m = NULL;
	off_t mark = log_mark();
	doca_error_t err = doca_mmap_create_from_export(NULL, d, len, dev, &m);

	assert_true(err == a || err == b);
	assert_null(m);
	assert_true(log_mark() > mark);
}

/* Every malformed descriptor is refused with a log line. */
static void test_malformed(void **state)
{
	struct peer p;
	struct doca_dev *dev;
	struct doca_sync_event *ev = NULL;
	uint8_t d[DESC_MAX + 8];
	char path[] = "/tmp/test_mmap_pci_log_XXXXXX";
	int saved = dup(STDERR_FILENO), logfd = mkstemp(path);

	(void)state;
	spawn_exec(&p, child_mmap_main, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	dev = open_dev();
	assert_non_null(dev);
	assert_true(logfd >= 0 && saved >= 0);
	unlink(path);
	dup2(logfd, STDERR_FILENO);

#define RESET() memcpy(d, p.desc, p.desc_len)
	RESET();
	expect_refused(dev, d, 0, DOCA_ERROR_INVALID_VALUE);
	expect_refused(dev, d, 11, DOCA_ERROR_INVALID_VALUE);
	expect_refused(dev, d, p.desc_len - 1, DOCA_ERROR_INVALID_VALUE); /* truncated */
	d[p.desc_len] = 0;
	expect_refused(dev, d, p.desc_len + 1, DOCA_ERROR_INVALID_VALUE); /* padded */
	RESET(), d[1] = 'X';
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* bad magic */
	RESET(), patch(d, 4, 0, 2);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* version 0 */
	RESET(), patch(d, 4, 2, 2);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_UNSUPPORTED_VERSION);
	RESET(), patch(d, 6, 1, 2);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* flags */
	RESET(), patch(d, 8, 200, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* length field */
	RESET(), patch(d, 12, 3, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* unknown kind */
	RESET(), patch(d, 12, 2, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* sync event kind with a range */
	RESET(), patch(d, 16, 0, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* pid 0 */
	RESET(), patch(d, 16, 0x80000000u, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* negative pid */
	RESET(), patch(d, 24, 0, 8);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* start time 0 */
	RESET(), patch(d, 24, 12345, 8);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_NOT_FOUND); /* another process's start time */
	RESET(), patch(d, 32, 777, 8);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_NOT_FOUND); /* another nonce */
	RESET(), patch(d, 20, 999, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_NOT_FOUND); /* no such table fd */
	/* An fd that is not a table (its stderr); an unprivileged run may be
	 * refused opening it instead. */
	RESET(), patch(d, 20, 2, 4);
	expect_refused_either(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE, DOCA_ERROR_NOT_PERMITTED);
	RESET(), patch(d, 40, 1024, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* slot out of range */
	RESET(), patch(d, 40, 7, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_NOT_FOUND); /* another (empty) slot */
	RESET(), patch(d, 44, 0, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* no PCI permission */
	RESET(), patch(d, 44, 0x100, 4);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* unknown permission */
	RESET(), patch(d, 48, 0, 8);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* slot id 0 */
	RESET(), memset(d + 56, 0, 16);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* zero secret */
	RESET(), patch(d, 72, 0, 8);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* address 0 */
	RESET(), patch(d, 80, 0, 8);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* length 0 */
	RESET(), patch(d, 80, UINT64_MAX - 16, 8);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* wraps */
	RESET(), patch(d, 72, 1ULL << 60, 8);
	expect_refused(dev, d, p.desc_len, DOCA_ERROR_INVALID_VALUE); /* beyond user space */
	/* An mmap descriptor is not a sync event's. */
	RESET();
	assert_int_equal(doca_sync_event_create_from_export(dev, d, p.desc_len, &ev), DOCA_ERROR_INVALID_VALUE);
	assert_null(ev);
#undef RESET

	dup2(saved, STDERR_FILENO);
	close(saved);
	close(logfd);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
	finish(&p);
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;

	assert_non_null(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Many imports and destroys: no fd and no mapping left behind. */
static void test_flat_over_cycles(void **state)
{
	struct peer p;
	struct doca_dev *dev;
	struct doca_mmap *m;
	int fds, maps;

	(void)state;
	spawn_exec(&p, child_mmap_main, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	dev = open_dev();
	assert_non_null(dev);
	/* One round first: whatever is created once (log, caches) exists. */
	if (doca_mmap_create_from_export(NULL, p.desc, p.desc_len, dev, &m) == DOCA_ERROR_NOT_PERMITTED) {
		print_message("skipped: this kernel refuses ptrace access to a child process\n");
		doca_dev_close(dev);
		finish(&p);
		return;
	}
	assert_int_equal(doca_mmap_destroy(m), DOCA_SUCCESS);
	fds = count_dir("/proc/self/fd");
	maps = count_maps();
	for (int i = 0; i < 300; i++) {
		assert_int_equal(doca_mmap_create_from_export(NULL, p.desc, p.desc_len, dev, &m), DOCA_SUCCESS);
		assert_int_equal(doca_mmap_destroy(m), DOCA_SUCCESS);
	}
	assert_int_equal(count_dir("/proc/self/fd"), fds);
	assert_int_equal(count_maps(), maps);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
	finish(&p);
}

/* The importer is refused by the kernel (another user): a clear error. */
static void test_ptrace_refused(void **state)
{
	struct peer p;
	pid_t pid;
	int status = 0;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: needs root to run the importer as another user\n");
		return;
	}
	spawn_exec(&p, child_mmap_main, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct doca_dev *dev;
		struct doca_mmap *m;
		doca_error_t err;

		alarm(30);
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(90);
		dev = open_dev();
		if (dev == NULL)
			_exit(91);
		err = doca_mmap_create_from_export(NULL, p.desc, p.desc_len, dev, &m);
		_exit(err == DOCA_ERROR_NOT_PERMITTED ? 0 : 92);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 91)
		print_message("skipped: no device for an unprivileged user\n");
	else
		assert_int_equal(WEXITSTATUS(status), 0);
	finish(&p);
}

/* ---- sync events across the processes ---- */

/* The exporter of a sync event: waits for 1, adds 10, then adds 1 ADDS
 * times while the importer does the same, waits for the total, answers;
 * then 's' stops the event and 'q' destroys it. */
static int child_event_main(int in, int out, uint32_t arg)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev;
	const uint8_t *desc;
	size_t len;
	uint64_t fetched;
	char cmd;
	uint8_t ok;

	(void)arg;
	alarm(30);
	if (dev == NULL || doca_sync_event_create(&ev) != DOCA_SUCCESS ||
	    doca_sync_event_add_publisher_location_remote_pci(ev) != DOCA_SUCCESS ||
	    doca_sync_event_add_subscriber_location_cpu(ev, dev) != DOCA_SUCCESS ||
	    doca_sync_event_start(ev) != DOCA_SUCCESS ||
	    doca_sync_event_export_to_remote_pci(ev, dev, &desc, &len) != DOCA_SUCCESS)
		return 2;
	if (!child_send_desc(out, desc, len))
		return 3;
	if (doca_sync_event_wait_eq(ev, 1, UINT64_MAX) != DOCA_SUCCESS)
		return 4;
	if (doca_sync_event_update_add(ev, 10, &fetched) != DOCA_SUCCESS || fetched != 1)
		return 5;
	for (unsigned int i = 0; i < ADDS; i++)
		if (doca_sync_event_update_add(ev, 1, &fetched) != DOCA_SUCCESS)
			return 6;
	if (doca_sync_event_wait_eq(ev, 11 + 2 * ADDS, UINT64_MAX) != DOCA_SUCCESS)
		return 7;
	ok = 1;
	write_full(out, &ok, 1);
	while (read_full(in, &cmd, 1)) {
		if (cmd == 's') {
			ok = doca_sync_event_stop(ev) == DOCA_SUCCESS;
			write_full(out, &ok, 1);
		} else if (cmd == 'q') {
			doca_sync_event_destroy(ev);
			doca_dev_close(dev);
			return 0;
		}
	}
	return 8;
}

static void test_sync_event(void **state)
{
	struct peer p;
	struct doca_dev *dev;
	struct doca_sync_event *ev;
	uint64_t v = 0, fetched;
	uint8_t ok = 0;
	doca_error_t err;

	(void)state;
	spawn_exec(&p, child_event_main, 0);
	dev = open_dev();
	assert_non_null(dev);
	err = doca_sync_event_create_from_export(dev, p.desc, p.desc_len, &ev);
	if (err == DOCA_ERROR_NOT_PERMITTED) {
		print_message("skipped: this kernel refuses ptrace access to a child process\n");
		kill_child(&p);
		doca_dev_close(dev);
		return;
	}
	assert_int_equal(err, DOCA_SUCCESS);
	/* Configured by the import; not exportable again. */
	assert_int_equal(doca_sync_event_start(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_update_set(ev, 1), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_wait_gt(ev, 10, UINT64_MAX), DOCA_SUCCESS);
	for (unsigned int i = 0; i < ADDS; i++)
		assert_int_equal(doca_sync_event_update_add(ev, 1, &fetched), DOCA_SUCCESS);
	/* Both sides added concurrently: no update lost. */
	assert_int_equal(doca_sync_event_wait_eq(ev, 11 + 2 * ADDS, UINT64_MAX), DOCA_SUCCESS);
	assert_true(read_full(p.from_child, &ok, 1));
	assert_int_equal(ok, 1);
	assert_int_equal(doca_sync_event_get(ev, &v), DOCA_SUCCESS);
	assert_int_equal(v, 11 + 2 * ADDS);

	/* The exporter stops: revoked. */
	assert_int_equal(ask(&p, 's'), 1);
	assert_int_equal(doca_sync_event_get(ev, &v), DOCA_ERROR_NOT_FOUND);
	assert_int_equal(doca_sync_event_update_add(ev, 1, &fetched), DOCA_ERROR_NOT_FOUND);
	assert_int_equal(doca_sync_event_wait_eq(ev, 12345, UINT64_MAX), DOCA_ERROR_NOT_FOUND);
	finish(&p);
	/* The exporter is gone: a clear error, no hang. */
	assert_int_equal(doca_sync_event_get(ev, &v), DOCA_ERROR_CONNECTION_ABORTED);
	assert_int_equal(doca_sync_event_stop(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* Export rules of sync events, in one process. */
static void test_sync_event_export_rules(void **state)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev, *imp = NULL;
	const uint8_t *desc;
	size_t len;
	uint64_t cell = 0, v = 0;
	uint8_t bad[48] = "SDSE";

	(void)state;
	assert_non_null(dev);
	assert_int_equal(doca_sync_event_create(&ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_publisher_location_cpu(ev, dev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_subscriber_location_cpu(ev, dev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_start(ev), DOCA_SUCCESS);
	/* No remote_pci location. */
	assert_int_equal(doca_sync_event_export_to_remote_pci(ev, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);

	assert_int_equal(doca_sync_event_create(&ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_publisher_location_remote_pci(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_subscriber_location_remote_pci(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_set_addr(ev, &cell), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_start(ev), DOCA_SUCCESS);
	/* Value in caller memory: not exportable to PCI. */
	assert_int_equal(doca_sync_event_export_to_remote_pci(ev, dev, &desc, &len), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);

	/* Own value: exported, keeps its value, revoked by stop. */
	assert_int_equal(doca_sync_event_create(&ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_publisher_location_remote_pci(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_subscriber_location_cpu(ev, dev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_export_to_remote_pci(ev, dev, &desc, &len), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_sync_event_start(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_update_set(ev, 42), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_export_to_remote_pci(ev, dev, &desc, &len), DOCA_SUCCESS);
	assert_int_equal(len, 88);
	assert_int_equal(doca_sync_event_get(ev, &v), DOCA_SUCCESS);
	assert_int_equal(v, 42);
	/* Import in the same process works too (same table). */
	assert_int_equal(doca_sync_event_create_from_export(dev, desc, len, &imp), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_start(imp), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_update_add(imp, 8, &v), DOCA_SUCCESS);
	assert_int_equal(v, 42);
	assert_int_equal(doca_sync_event_get(ev, &v), DOCA_SUCCESS);
	assert_int_equal(v, 50);
	assert_int_equal(doca_sync_event_export_to_remote_pci(imp, dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
	assert_int_equal(doca_sync_event_set_addr(imp, &cell), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_sync_event_stop(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_get(imp, &v), DOCA_ERROR_NOT_FOUND);
	assert_int_equal(doca_sync_event_destroy(imp), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);
	/* A remote_net descriptor is not a PCI one. */
	assert_int_equal(doca_sync_event_create_from_export(dev, bad, sizeof(bad), &imp), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

/* ---- context mode on the importer (the remote_pci sample's async mode) ---- */

static int se_done, se_failed;
static doca_error_t se_status;

static void se_cb_add(struct doca_sync_event_task_notify_add *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	se_status = doca_task_get_status(doca_sync_event_task_notify_add_as_doca_task(t));
	se_failed += se_status != DOCA_SUCCESS;
	se_done++;
	doca_task_free(doca_sync_event_task_notify_add_as_doca_task(t));
}

static void se_cb_wait(struct doca_sync_event_task_wait_eq *t, union doca_data tu, union doca_data cu)
{
	(void)tu;
	(void)cu;
	se_status = doca_task_get_status(doca_sync_event_task_wait_eq_as_doca_task(t));
	se_failed += se_status != DOCA_SUCCESS;
	se_done++;
	doca_task_free(doca_sync_event_task_wait_eq_as_doca_task(t));
}

static bool se_progress_until(struct doca_pe *pe, int want)
{
	for (int i = 0; i < 2000000 && se_done < want; i++)
		(void)doca_pe_progress(pe);
	return se_done >= want;
}

static void test_sync_event_ctx_mode(void **state)
{
	struct doca_dev *dev = open_dev();
	struct doca_sync_event *ev, *imp;
	struct doca_sync_event_task_notify_add *add;
	struct doca_sync_event_task_wait_eq *wait;
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	const uint8_t *desc;
	size_t len;
	uint64_t fetched = 0, v = 0;
	union doca_data ud = {.u64 = 0};
	enum doca_ctx_states st;

	(void)state;
	se_done = se_failed = 0;
	assert_non_null(dev);
	assert_int_equal(doca_sync_event_create(&ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_publisher_location_remote_pci(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_add_subscriber_location_cpu(ev, dev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_start(ev), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_update_set(ev, 3), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_export_to_remote_pci(ev, dev, &desc, &len), DOCA_SUCCESS);

	assert_int_equal(doca_sync_event_create_from_export(dev, desc, len, &imp), DOCA_SUCCESS);
	ctx = doca_sync_event_as_ctx(imp);
	assert_non_null(ctx);
	assert_int_equal(doca_pe_create(&pe), DOCA_SUCCESS);
	assert_int_equal(doca_pe_connect_ctx(pe, ctx), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_task_notify_add_set_conf(imp, se_cb_add, se_cb_add, 4), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_task_wait_eq_set_conf(imp, se_cb_wait, se_cb_wait, 4), DOCA_SUCCESS);
	assert_int_equal(doca_ctx_start(ctx), DOCA_SUCCESS);

	/* notify_add on the importer changes the exporter's value. */
	assert_int_equal(doca_sync_event_task_notify_add_alloc_init(imp, 4, &fetched, ud, &add), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_sync_event_task_notify_add_as_doca_task(add)), DOCA_SUCCESS);
	assert_true(se_progress_until(pe, 1));
	assert_int_equal(se_failed, 0);
	assert_int_equal(fetched, 3);
	assert_int_equal(doca_sync_event_get(ev, &v), DOCA_SUCCESS);
	assert_int_equal(v, 7);

	/* A wait_eq task completes once the exporter sets the value. */
	assert_int_equal(doca_sync_event_task_wait_eq_alloc_init(imp, 100, UINT64_MAX, ud, &wait), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(wait)), DOCA_SUCCESS);
	for (int i = 0; i < 1000; i++)
		(void)doca_pe_progress(pe);
	assert_int_equal(se_done, 1);
	assert_int_equal(doca_sync_event_update_set(ev, 100), DOCA_SUCCESS);
	assert_true(se_progress_until(pe, 2));
	assert_int_equal(se_failed, 0);

	/* A wait parked when the exporter revokes fails, no hang. */
	assert_int_equal(doca_sync_event_task_wait_eq_alloc_init(imp, 5, UINT64_MAX, ud, &wait), DOCA_SUCCESS);
	assert_int_equal(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(wait)), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_stop(ev), DOCA_SUCCESS);
	assert_true(se_progress_until(pe, 3));
	assert_int_equal(se_status, DOCA_ERROR_NOT_FOUND);

	assert_int_equal(doca_ctx_stop(ctx), DOCA_SUCCESS);
	for (int i = 0; i < 100000; i++) {
		assert_int_equal(doca_ctx_get_state(ctx, &st), DOCA_SUCCESS);
		if (st == DOCA_CTX_STATE_IDLE)
			break;
		(void)doca_pe_progress(pe);
	}
	assert_int_equal(doca_sync_event_destroy(imp), DOCA_SUCCESS);
	assert_int_equal(doca_pe_destroy(pe), DOCA_SUCCESS);
	assert_int_equal(doca_sync_event_destroy(ev), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(dev), DOCA_SUCCESS);
}

const struct pci_child pci_children[] = {
	{"mmap", child_mmap_main},
	{"event", child_event_main},
	{NULL, NULL},
};

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_export_rules),
		cmocka_unit_test(test_dma_both_directions),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_revoked_by_stop),
		cmocka_unit_test(test_exporter_killed),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_flat_over_cycles),
		cmocka_unit_test(test_ptrace_refused),
		cmocka_unit_test(test_sync_event),
		cmocka_unit_test(test_sync_event_export_rules),
		cmocka_unit_test(test_sync_event_ctx_mode),
	};

	pci_child_run(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
