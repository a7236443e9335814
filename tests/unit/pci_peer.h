/*
 * The exporting peer of the PCI export tests (test_mmap_pci.c,
 * test_mmap_pci_rdma.c): a forked child that exports an mmap with
 * doca_mmap_export_pci, hands its descriptor up a pipe and answers
 * commands; the pipe plumbing with bounded waits. Test programs only.
 */
#ifndef TEST_PCI_PEER_H_
#define TEST_PCI_PEER_H_

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* Commands: 'v' verify the memory holds pattern seed 50 (answer 1/0),
 * 's' stop the mmap (answer 1 when done), 'q' clean up and exit. */
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
		case 's':
			ok = doca_mmap_stop(mmap) == DOCA_SUCCESS;
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

static inline void spawn(struct peer *p, child_fn fn, uint32_t arg)
{
	int down[2], up[2];
	uint32_t l = 0;

	assert_int_equal(pipe(down), 0);
	assert_int_equal(pipe(up), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		close(down[1]);
		close(up[0]);
		_exit(fn(down[0], up[1], arg));
	}
	close(down[0]);
	close(up[1]);
	p->to_child = down[1];
	p->from_child = up[0];
	assert_true(read_full(p->from_child, &l, sizeof(l)));
	assert_true(l > 0 && l <= DESC_MAX);
	assert_true(read_full(p->from_child, p->desc, l));
	p->desc_len = l;
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
