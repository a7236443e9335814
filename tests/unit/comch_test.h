/*
 * What the Comch tests (test_comch.c, test_comch_fastpath.c) share: a
 * monotonic clock in milliseconds, progress of a PE until a counter or a
 * context state is reached or the time is up (these never assert, so a
 * forked or exec'd child may use them too), each test's own rendezvous
 * directory, and the start of a test's other process. Test programs only.
 */
#ifndef TEST_COMCH_TEST_H_
#define TEST_COMCH_TEST_H_

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_ctx.h>
#include <doca_pe.h>

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Progress pe until *flag reaches want or ms pass; true if it did. */
static inline bool progress_until(struct doca_pe *pe, volatile int *flag, int want, uint64_t ms)
{
	uint64_t end = now_ms() + ms;

	while (*flag < want) {
		if (now_ms() > end)
			return false;
		if (doca_pe_progress(pe) == 0)
			usleep(100);
	}
	return true;
}

/* Progress pe until ctx is in state want or ms pass; true if it got there
 * (false too when the state cannot be read). */
static inline bool progress_until_state(struct doca_pe *pe, struct doca_ctx *ctx, enum doca_ctx_states want,
					uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	enum doca_ctx_states st;

	for (;;) {
		if (doca_ctx_get_state(ctx, &st) != DOCA_SUCCESS)
			return false;
		if (st == want)
			return true;
		if (now_ms() > end)
			return false;
		if (doca_pe_progress(pe) == 0)
			usleep(100);
	}
}

/* Make a fresh directory from tmpl (a path ending in XXXXXX), write its
 * path to dir and point SOFTDOCA_PCIE_DIR at it. */
static inline void comch_test_dir_make(char *dir, size_t size, const char *tmpl)
{
	char path[64];

	assert_true(snprintf(path, sizeof(path), "%s", tmpl) < (int)sizeof(path));
	assert_non_null(mkdtemp(path));
	snprintf(dir, size, "%s", path);
	setenv("SOFTDOCA_PCIE_DIR", dir, 1);
}

/* The other process of a two-process test runs this binary again as prog
 * with "--child <role>" (exec after fork: the child starts clean, and
 * sanitizers that refuse threads after a fork are content). */
static inline pid_t comch_test_spawn(const char *prog, const char *role)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl("/proc/self/exe", prog, "--child", role, (char *)NULL);
		_exit(127);
	}
	return pid;
}

#endif /* TEST_COMCH_TEST_H_ */
