/*
 * The exporting peer of the PCI export tests (test_mmap_pci.c,
 * test_mmap_pci_rdma.c, test_mmap_pci_replace.c): a child process (this
 * binary again) that exports an mmap with doca_mmap_export_pci, hands its
 * descriptor up a pipe and answers commands; the pipe plumbing with
 * bounded waits. Test programs only.
 */
#ifndef TEST_PCI_PEER_H_
#define TEST_PCI_PEER_H_

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_dev.h>
#include <doca_mmap.h>

#define MEM_LEN (1u << 20)
#define DESC_MAX 256u
#define IO_TIMEOUT_MS 10000

/* ---- plumbing between the two processes ---- */

struct peer {
	pid_t pid;
	int to_child;	/* commands */
	int from_child; /* descriptor, then answers */
	uint8_t desc[DESC_MAX];
	size_t desc_len;
};

/* Read exactly len bytes within the timeout; false on EOF/timeout. */
static inline bool read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t n;

		int r = poll(&pfd, 1, IO_TIMEOUT_MS);

		if (r < 0 && errno == EINTR)
			continue; /* a signal (UCX uses some): the bound starts again, fine for a test */
		if (r != 1)
			return false;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static inline bool write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len;
}

static inline struct doca_dev *open_dev(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return NULL;
	if (n > 0 && doca_dev_open(list[0], &dev) != DOCA_SUCCESS)
		dev = NULL;
	doca_devinfo_destroy_list(list);
	return dev;
}

static inline uint8_t pattern(size_t i, uint8_t seed)
{
	return (uint8_t)(i * 7u + seed);
}

/* ---- the exporter (child) ---- */

/* Send our descriptor: length, then bytes. */
static inline bool child_send_desc(int fd, const void *desc, size_t len)
{
	uint32_t l = (uint32_t)len;

	return write_full(fd, &l, sizeof(l)) && write_full(fd, desc, len);
}

/* Commands: 'v' verify the second half holds pattern seed 50 (answer
 * 1/0), 'z' zero the second half, 's' stop the mmap (revoke), 'd' become
 * non-dumpable (the kernel then refuses process_vm_* to anyone without
 * CAP_SYS_PTRACE), 'q' clean up and exit; each but 'q' answers 1 when
 * done. */
static inline int child_mmap_main(int in, int out, uint32_t perms)
{
	static uint8_t mem[MEM_LEN];
	struct doca_dev *dev = open_dev();
	struct doca_mmap *mmap;
	const void *desc;
	size_t len, i;
	char cmd;
	uint8_t ok;

	alarm(30); /* never outlive a broken test */
	for (i = 0; i < MEM_LEN; i++)
		mem[i] = pattern(i, 1);
	if (dev == NULL || doca_mmap_create(&mmap) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(mmap, mem, MEM_LEN) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(mmap, perms) != DOCA_SUCCESS || doca_mmap_add_dev(mmap, dev) != DOCA_SUCCESS ||
	    doca_mmap_start(mmap) != DOCA_SUCCESS || doca_mmap_export_pci(mmap, dev, &desc, &len) != DOCA_SUCCESS)
		return 2;
	if (!child_send_desc(out, desc, len))
		return 3;
	while (read_full(in, &cmd, 1)) {
		switch (cmd) {
		case 'v':
			ok = 1;
			for (i = MEM_LEN / 2; i < MEM_LEN; i++)
				ok &= mem[i] == pattern(i, 50);
			write_full(out, &ok, 1);
			break;
		case 'z':
			memset(mem + MEM_LEN / 2, 0, MEM_LEN / 2);
			ok = 1;
			write_full(out, &ok, 1);
			break;
		case 's':
			ok = doca_mmap_stop(mmap) == DOCA_SUCCESS;
			write_full(out, &ok, 1);
			break;
		case 'd':
			ok = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
			write_full(out, &ok, 1);
			break;
		case 'q':
			doca_mmap_destroy(mmap);
			doca_dev_close(dev);
			return 0;
		}
	}
	return 4;
}

typedef int (*child_fn)(int in, int out, uint32_t arg);

/* The parent's side of a spawned child: its pipe ends, and the
 * descriptor it sends first. */
static inline void spawned(struct peer *p, int down[2], int up[2])
{
	uint32_t l = 0;

	close(down[0]);
	close(up[1]);
	p->to_child = down[1];
	p->from_child = up[0];
	assert_true(read_full(p->from_child, &l, sizeof(l)));
	assert_true(l > 0 && l <= DESC_MAX);
	assert_true(read_full(p->from_child, p->desc, l));
	p->desc_len = l;
}

/* A forked child (it may read this process's memory, see
 * test_sync_event_pci_notify.c). */
static inline void spawn(struct peer *p, child_fn fn, uint32_t arg)
{
	int down[2], up[2];

	assert_int_equal(pipe(down), 0);
	assert_int_equal(pipe(up), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		close(down[1]);
		close(up[0]);
		_exit(fn(down[0], up[1], arg));
	}
	spawned(p, down, up);
}

/* The children a program spawns with spawn_exec, by name: it defines the
 * list (ending with {NULL, NULL}) and calls pci_child_run first in main. */
struct pci_child {
	const char *name;
	child_fn fn;
};
extern const struct pci_child pci_children[];

/* In main, before anything else: when this process is a child started by
 * spawn_exec, run it ("--pci-child <name> <arg> <in fd> <out fd>") and
 * exit. */
static inline void pci_child_run(int argc, char **argv)
{
	if (argc != 6 || strcmp(argv[1], "--pci-child") != 0)
		return;
	for (const struct pci_child *c = pci_children; c->name != NULL; c++)
		if (strcmp(c->name, argv[2]) == 0)
			_exit(c->fn(atoi(argv[4]), atoi(argv[5]), (uint32_t)strtoul(argv[3], NULL, 0)));
	_exit(126);
}

static inline const char *child_name(child_fn fn)
{
	for (const struct pci_child *c = pci_children; c->name != NULL; c++)
		if (c->fn == fn)
			return c->name;
	return NULL;
}

/* A child that runs this binary again (exec after fork): it starts
 * clean, without the test's threads, so that the threads an exporter
 * starts (its watch on exported memory) please sanitizers that refuse
 * threads after a fork. The pipes are close-on-exec but for the child's
 * own two ends. */
static inline void spawn_exec(struct peer *p, child_fn fn, uint32_t arg)
{
	const char *name = child_name(fn);
	int down[2], up[2];

	assert_non_null(name);
	assert_int_equal(pipe2(down, O_CLOEXEC), 0);
	assert_int_equal(pipe2(up, O_CLOEXEC), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		char a[16], in[16], out[16];

		snprintf(a, sizeof(a), "%u", arg);
		snprintf(in, sizeof(in), "%d", down[0]);
		snprintf(out, sizeof(out), "%d", up[1]);
		if (fcntl(down[0], F_SETFD, 0) == 0 && fcntl(up[1], F_SETFD, 0) == 0)
			execl("/proc/self/exe", "pci-child", "--pci-child", name, a, in, out, (char *)NULL);
		_exit(127);
	}
	spawned(p, down, up);
}

static inline uint8_t ask(struct peer *p, char cmd)
{
	uint8_t answer = 0;

	assert_true(write_full(p->to_child, &cmd, 1));
	assert_true(read_full(p->from_child, &answer, 1));
	return answer;
}

/* Wait (bounded) for the child; its exit status. */
static inline int reap(struct peer *p)
{
	int status = 0;

	for (int i = 0; i < 10000; i++) {
		pid_t r = waitpid(p->pid, &status, WNOHANG);

		if (r == p->pid)
			break;
		assert_int_equal(r, 0);
		usleep(1000);
	}
	close(p->to_child);
	close(p->from_child);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static inline void finish(struct peer *p)
{
	char q = 'q';

	bool sent = write_full(p->to_child, &q, 1);

	/* The child's exit status says more than a failed write. */
	assert_int_equal(reap(p), 0);
	assert_true(sent);
}

static inline void kill_child(struct peer *p)
{
	kill(p->pid, SIGKILL);
	assert_int_equal(reap(p), 128 + SIGKILL);
}

#endif /* TEST_PCI_PEER_H_ */
