/*
 * The SDK log level a program gets when it sets none: WARNING and ERROR
 * lines reach stderr (docs/troubleshooting.md promises them), INFO lines
 * do not, and DOCA_LOG_LEVEL or --sdk-log-level override it.
 *
 * Each case runs this program again as a child (--child MODE) with an
 * environment free of log settings but for the case's own, creating no log
 * backend, its stderr in a file the parent reads:
 *   devices  a malformed SOFTDOCA_DEVICES, read by doca_devinfo_create_list
 *            (a WARNING of the core library);
 *   conn     a malformed SOFTDOCA_CONN_TIMEOUT_MS, read when two RDMA
 *            contexts connect over UCX (a WARNING of the engine);
 *   argp     the devices case after doca_argp_start on the arguments that
 *            follow the mode (--sdk-log-level).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_argp.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_pe.h>

#include "rdma_pair.h"

#define CHILD_ALARM_S 60
#define DEVICES_WARNING "SOFTDOCA_DEVICES: entry 'bogus' is not name=interface, ignored"
#define CONN_WARNING "SOFTDOCA_CONN_TIMEOUT_MS='12x' is not a number of milliseconds"

/* rdma_pair.c calls it for task completions; the conn case runs no task. */
void rdma_pair_task_done(struct doca_task *task, bool ok, union doca_data ctx_user_data)
{
	(void)task;
	(void)ok;
	(void)ctx_user_data;
}

/* ---- the child ---------------------------------------------------------- */

static int child_devices(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS)
		return 2;
	doca_devinfo_destroy_list(list);
	return 0;
}

/* Two contexts on the loopback device connected to each other (the
 * engine reads the timeout when a connection starts being watched).
 * Not rdma_pair_setup: it would create a log backend of its own. */
static int child_conn(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS || n == 0)
		return 2;
	if (doca_dev_open(list[0], &dev) != DOCA_SUCCESS || doca_pe_create(&pe) != DOCA_SUCCESS)
		return 3;
	side_create(&A);
	side_create(&B);
	side_conf_tasks(&A, 4, false);
	side_conf_tasks(&B, 4, false);
	assert_ok(doca_ctx_start(A.ctx));
	assert_ok(doca_rdma_export(A.rdma, &A.desc, &A.desc_len, &A.conn));
	assert_ok(doca_ctx_start(B.ctx));
	assert_ok(doca_rdma_export(B.rdma, &B.desc, &B.desc_len, &B.conn));
	pair_connect();
	side_destroy(&A);
	side_destroy(&B);
	assert_ok(doca_pe_destroy(pe));
	assert_ok(doca_dev_close(dev));
	doca_devinfo_destroy_list(list);
	return 0;
}

static int child_argp(int argc, char **argv)
{
	int cfg = 0;
	int rc;

	if (doca_argp_init("test_log_default", &cfg) != DOCA_SUCCESS)
		return 4;
	rc = doca_argp_start(argc, argv) == DOCA_SUCCESS ? child_devices() : 5;
	doca_argp_destroy();
	return rc;
}

static int child_main(int argc, char **argv)
{
	const char *mode = argv[2];

	if (strcmp(mode, "devices") == 0)
		return child_devices();
	if (strcmp(mode, "conn") == 0)
		return child_conn();
	if (strcmp(mode, "argp") == 0)
		return child_argp(argc - 2, argv + 2); /* argv[0] of argp: the mode */
	fprintf(stderr, "unknown child mode %s\n", mode);
	return 1;
}

/* ---- the parent ---------------------------------------------------------- */

/* The child's stderr, NUL-terminated. */
static char child_err[65536];

/* Run this program as a child: mode, then its arguments (NULL-terminated),
 * with no log or softdoca settings in its environment but env (a
 * NULL-terminated list of "NAME=value"). */
static void run_child(const char *const *env, const char *mode, ...)
{
	char *argv[16] = {"test_log_default", "--child", (char *)mode};
	FILE *err = tmpfile();
	int argc = 3;
	int status;
	va_list ap;
	pid_t pid;
	size_t n;

	va_start(ap, mode);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	assert_non_null(err);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Nothing inherited from the runner decides what it prints. */
		if (unsetenv("DOCA_LOG_LEVEL") != 0 || unsetenv("SOFTDOCA_DEVICES") != 0 ||
		    unsetenv("SOFTDOCA_CONN_TIMEOUT_MS") != 0 || unsetenv("SOFTDOCA_TRACE") != 0 ||
		    unsetenv("SOFTDOCA_ENGINE") != 0 || unsetenv("SOFTDOCA_FAULTS") != 0)
			_exit(126);
		for (; *env != NULL; env++)
			if (putenv((char *)*env) != 0)
				_exit(126);
		if (dup2(fileno(err), STDERR_FILENO) < 0)
			_exit(126);
		alarm(CHILD_ALARM_S); /* kept across exec: a hung child dies */
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	rewind(err);
	n = fread(child_err, 1, sizeof(child_err) - 1, err);
	child_err[n] = '\0';
	fclose(err);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_message("child %s ended with status 0x%x; its stderr:\n%s\n", mode, (unsigned int)status,
			      child_err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void assert_shown(const char *line)
{
	if (strstr(child_err, line) == NULL)
		print_message("wanted \"%s\" on the child's stderr, which held:\n%s\n", line, child_err);
	assert_non_null(strstr(child_err, line));
	assert_non_null(strstr(child_err, "[WARN]"));
}

static void assert_hidden(const char *line)
{
	if (strstr(child_err, line) != NULL)
		print_message("\"%s\" should not be on the child's stderr:\n%s\n", line, child_err);
	assert_null(strstr(child_err, line));
}

/* ---- cases -------------------------------------------------------------- */

/* With no log settings, a WARNING reaches stderr. */
static void test_default_shows_warning(void **state)
{
	const char *const env[] = {"SOFTDOCA_DEVICES=bogus", NULL};

	(void)state;
	run_child(env, "devices", NULL);
	assert_shown(DEVICES_WARNING);
}

/* A malformed connection timeout says so by default (it used to warn
 * where nobody saw it). */
static void test_conn_timeout_warning_default(void **state)
{
	const char *const env[] = {"SOFTDOCA_CONN_TIMEOUT_MS=12x", NULL};

	(void)state;
	run_child(env, "conn", NULL);
	assert_shown(CONN_WARNING);
}

/* DOCA_LOG_LEVEL chooses the level instead of the default, both ways. */
static void test_env_level_overrides(void **state)
{
	const char *const quiet[] = {"SOFTDOCA_DEVICES=bogus", "DOCA_LOG_LEVEL=error", NULL};
	const char *const loud[] = {"SOFTDOCA_DEVICES=bogus", "DOCA_LOG_LEVEL=debug", NULL};

	(void)state;
	run_child(quiet, "devices", NULL);
	assert_hidden(DEVICES_WARNING);
	run_child(loud, "devices", NULL);
	assert_shown(DEVICES_WARNING);
}

/* --sdk-log-level too, and over DOCA_LOG_LEVEL (the command line is
 * read last). */
static void test_argp_level_overrides(void **state)
{
	const char *const env[] = {"SOFTDOCA_DEVICES=bogus", NULL};
	const char *const env_quiet[] = {"SOFTDOCA_DEVICES=bogus", "DOCA_LOG_LEVEL=error", NULL};

	(void)state;
	run_child(env, "argp", "--sdk-log-level", "30", NULL);
	assert_hidden(DEVICES_WARNING);
	run_child(env_quiet, "argp", "--sdk-log-level", "40", NULL);
	assert_shown(DEVICES_WARNING);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_shows_warning),
		cmocka_unit_test(test_conn_timeout_warning_default),
		cmocka_unit_test(test_env_level_overrides),
		cmocka_unit_test(test_argp_level_overrides),
	};

	if (argc >= 3 && strcmp(argv[1], "--child") == 0)
		return child_main(argc, argv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
