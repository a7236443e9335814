/*
 * Unit tests of how the SOFTDOCA_TRACE file is opened (src/core/trace.c):
 * once, at the first context, never through a symbolic link another user
 * could have planted, and only if it is a regular file of ours with one
 * name; a new file is 0600.
 *
 * The library reads SOFTDOCA_TRACE in the process that uses it, so each
 * case runs this program again as a child (--child MODE) with the
 * variable set and its stdout and stderr in files:
 *   nocall  returns at once: a program linked with the DOCA libraries that
 *           makes no DOCA call;
 *   ctx     creates and destroys one context (loopback engine), then
 *           calls softdoca_trace_flush() and prints "flush=<status>".
 * Every child has an alarm: one blocked in an open (a FIFO) dies of it
 * instead of hanging the test.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_dev.h>
#include <doca_error.h>
#include <doca_rdma.h>
#include <softdoca_trace.h>

#define CHILD_ALARM_S 20
/* Somebody else: the owner of planted files and links (root runs only). */
#define STRANGER_UID 65534

static char work[64];

struct child_run {
	int status; /* from waitpid */
	char out[4096];
	char err[16384];
};

/* ---- the child ---------------------------------------------------------- */

static int child_ctx(void)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	struct doca_rdma *rdma = NULL;
	uint32_t n = 0;

	if (doca_devinfo_create_list(&list, &n) != DOCA_SUCCESS || n == 0)
		return 2;
	if (doca_dev_open(list[0], &dev) != DOCA_SUCCESS)
		return 3;
	if (doca_rdma_create(dev, &rdma) != DOCA_SUCCESS)
		return 4;
	if (doca_rdma_destroy(rdma) != DOCA_SUCCESS)
		return 5;
	printf("flush=%s\n", doca_error_get_name(softdoca_trace_flush()));
	doca_dev_close(dev);
	doca_devinfo_destroy_list(list);
	return 0;
}

static int child_main(const char *mode)
{
	if (strcmp(mode, "nocall") == 0)
		return 0;
	if (strcmp(mode, "ctx") == 0)
		return child_ctx();
	fprintf(stderr, "unknown child mode %s\n", mode);
	return 1;
}

/* ---- the parent ---------------------------------------------------------- */

static void read_all(FILE *f, char *buf, size_t size)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Run this program as a child in mode with SOFTDOCA_TRACE=trace, in
 * directory cwd (NULL: ours), with umask 0 so that the mode it asks for is
 * the mode it gets. */
static void run_child_in(const char *cwd, const char *trace, const char *mode, struct child_run *r)
{
	FILE *out = tmpfile();
	FILE *err = tmpfile();
	pid_t pid;

	assert_non_null(out);
	assert_non_null(err);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setenv("SOFTDOCA_TRACE", trace, 1) != 0 || setenv("SOFTDOCA_ENGINE", "loopback", 1) != 0 ||
		    unsetenv("SOFTDOCA_TRACE_EVENTS") != 0 || unsetenv("DOCA_LOG_LEVEL") != 0)
			_exit(126);
		if (dup2(fileno(out), STDOUT_FILENO) < 0 || dup2(fileno(err), STDERR_FILENO) < 0)
			_exit(126);
		if (cwd != NULL && chdir(cwd) != 0)
			_exit(126);
		umask(0);
		alarm(CHILD_ALARM_S); /* kept across exec */
		execl("/proc/self/exe", "test_trace_open", "--child", mode, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
	read_all(out, r->out, sizeof(r->out));
	read_all(err, r->err, sizeof(r->err));
	if (WIFSIGNALED(r->status))
		print_message("child (%s, %s) died of signal %d%s\nits stderr:\n%s\n", mode, trace,
			      WTERMSIG(r->status),
			      WTERMSIG(r->status) == SIGALRM ? " (SIGALRM: it hung)" : "", r->err);
	assert_true(WIFEXITED(r->status));
	if (WEXITSTATUS(r->status) != 0)
		print_message("child (%s, %s) exited %d; stderr:\n%s\n", mode, trace, WEXITSTATUS(r->status),
			      r->err);
	assert_int_equal(WEXITSTATUS(r->status), 0);
}

static void run_child(const char *trace, const char *mode, struct child_run *r)
{
	run_child_in(NULL, trace, mode, r);
}

static char *path_of(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static char *path_of(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < size);
	return buf;
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* The whole file (the caller frees it). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = calloc(1, 1 << 20);
	size_t n;

	assert_non_null(f);
	assert_non_null(text);
	n = fread(text, 1, (1 << 20) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

static void assert_content(const char *path, const char *want)
{
	char *text = slurp(path);

	if (strcmp(text, want) != 0)
		print_message("%s holds \"%.200s\", not \"%s\"\n", path, text, want);
	assert_string_equal(text, want);
	free(text);
}

/* The refusal line names the path and the reason, and tracing is off. */
static void assert_refused(const struct child_run *r, const char *path, const char *why)
{
	char want[4200];

	snprintf(want, sizeof(want), "SOFTDOCA_TRACE=%s cannot be written (", path);
	if (strstr(r->err, want) == NULL || strstr(r->err, why) == NULL)
		print_message("wanted \"%s...%s...\" in the child's stderr:\n%s\n", want, why, r->err);
	assert_non_null(strstr(r->err, want));
	assert_non_null(strstr(r->err, why));
	assert_non_null(strstr(r->err, "[ERROR]"));
	assert_non_null(strstr(r->out, "flush=DOCA_ERROR_BAD_STATE"));
}

/* A trace we wrote: ours, 0600, well-formed (python3 -m json.tool too). */
static void assert_trace_file(const char *path)
{
	char cmd[512];
	struct stat st;
	char *text;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	if ((st.st_mode & 07777) != 0600)
		print_message("%s has mode %04o, not 0600\n", path, (unsigned int)(st.st_mode & 07777));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	text = slurp(path);
	assert_true(strncmp(text, "{\"traceEvents\":[\n", 17) == 0);
	assert_non_null(strstr(text, "\"name\":\"softdoca_trace\""));
	free(text);
	if (system("command -v python3 >/dev/null 2>&1") != 0) {
		print_message("note: python3 not found; the JSON was checked by shape only\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool '%s' >/dev/null", path);
	assert_int_equal(system(cmd), 0);
}

static bool is_root(const char *why)
{
	if (geteuid() == 0)
		return true;
	print_message("skipped: %s needs root (files and links of another uid)\n", why);
	return false;
}

/* ---- cases -------------------------------------------------------------- */

/* A program that makes no DOCA call neither truncates nor creates it. */
static void test_no_call_touches_nothing(void **state)
{
	char existing[128], fresh[128];
	struct child_run r;
	struct stat st;

	(void)state;
	write_file(path_of(existing, sizeof(existing), "%s/existing.json", work), "keep me\n", 0644);
	run_child(existing, "nocall", &r);
	assert_content(existing, "keep me\n");
	run_child(path_of(fresh, sizeof(fresh), "%s/fresh.json", work), "nocall", &r);
	assert_int_equal(lstat(fresh, &st), -1);
	assert_string_equal(r.err, "");
}

/* A link to a victim: refused, the victim keeps its bytes; a dangling
 * link does not create its target. */
static void test_symlink_refused(void **state)
{
	char victim[128], link[128], dangling[128], target[128];
	struct child_run r;
	struct stat st;

	(void)state;
	write_file(path_of(victim, sizeof(victim), "%s/victim", work), "precious\n", 0644);
	assert_int_equal(symlink(victim, path_of(link, sizeof(link), "%s/link.json", work)), 0);
	run_child(link, "ctx", &r);
	assert_content(victim, "precious\n");
	assert_refused(&r, link, "symbolic link");

	path_of(target, sizeof(target), "%s/made_through_link", work);
	assert_int_equal(symlink(target, path_of(dangling, sizeof(dangling), "%s/dangling.json", work)), 0);
	run_child(dangling, "ctx", &r);
	assert_int_equal(lstat(target, &st), -1);
	assert_refused(&r, dangling, "symbolic link");
}

/* A FIFO is refused without being opened (an open for writing would
 * block until a reader came), a directory too. */
static void test_fifo_and_directory_refused(void **state)
{
	char fifo[128], dir[128];
	struct child_run r;

	(void)state;
	assert_int_equal(mkfifo(path_of(fifo, sizeof(fifo), "%s/fifo.json", work), 0600), 0);
	run_child(fifo, "ctx", &r);
	assert_refused(&r, fifo, "not a regular file");
	assert_int_equal(mkdir(path_of(dir, sizeof(dir), "%s/dir.json", work), 0700), 0);
	run_child(dir, "ctx", &r);
	assert_refused(&r, dir, "it is a directory");
}

/* A second name of one of our files (a hard link a stranger can make in
 * a shared directory) is refused: the file keeps its bytes. */
static void test_hard_link_refused(void **state)
{
	char mine[128], alias[128];
	struct child_run r;

	(void)state;
	write_file(path_of(mine, sizeof(mine), "%s/mine", work), "my data\n", 0600);
	assert_int_equal(link(mine, path_of(alias, sizeof(alias), "%s/alias.json", work)), 0);
	run_child(alias, "ctx", &r);
	assert_content(mine, "my data\n");
	assert_refused(&r, alias, "2 hard links");
}

/* A file of another user, even one we could write, is not ours to truncate. */
static void test_other_owner_refused(void **state)
{
	char theirs[128];
	struct child_run r;

	(void)state;
	if (!is_root("another user's file"))
		skip();
	write_file(path_of(theirs, sizeof(theirs), "%s/theirs.json", work), "their data\n", 0666);
	assert_int_equal(chown(theirs, STRANGER_UID, STRANGER_UID), 0);
	run_child(theirs, "ctx", &r);
	assert_content(theirs, "their data\n");
	assert_refused(&r, theirs, "belongs to uid 65534");
}

/* A directory link a stranger planted in a sticky world-writable
 * directory is not followed (fs.protected_symlinks=0 would let the kernel
 * follow it): here it points at a directory holding a root file of the
 * name the trace would take. */
static void test_stranger_link_in_path_refused(void **state)
{
	char shared[128], etc[128], victim[128], planted[128], path[160];
	struct child_run r;

	(void)state;
	if (!is_root("a link of another uid"))
		skip();
	assert_int_equal(mkdir(path_of(shared, sizeof(shared), "%s/shared", work), 01777), 0);
	assert_int_equal(chmod(shared, 01777), 0);
	assert_int_equal(mkdir(path_of(etc, sizeof(etc), "%s/etc", work), 0755), 0);
	write_file(path_of(victim, sizeof(victim), "%s/trace.json", etc), "root config\n", 0644);
	assert_int_equal(symlink(etc, path_of(planted, sizeof(planted), "%s/run", shared)), 0);
	assert_int_equal(lchown(planted, STRANGER_UID, STRANGER_UID), 0);
	run_child(path_of(path, sizeof(path), "%s/trace.json", planted), "ctx", &r);
	assert_content(victim, "root config\n");
	assert_refused(&r, path, "symbolic link of uid 65534");
}

/* Links of our own on the way are followed: links in a path are fine
 * when nobody else could have made them. Relative ones, absolute ones,
 * chains of them, "." and ".." on the way, from short relative paths too. */
static void test_own_link_in_path_followed(void **state)
{
	char real[128], sub[128], link[160], path[160], written[160];
	struct child_run r;

	(void)state;
	assert_int_equal(mkdir(path_of(real, sizeof(real), "%s/real", work), 0700), 0);
	assert_int_equal(mkdir(path_of(sub, sizeof(sub), "%s/sub", real), 0700), 0);
	assert_int_equal(symlink("real", path_of(link, sizeof(link), "%s/via", work)), 0);
	run_child(path_of(path, sizeof(path), "%s/./via//t.json", work), "ctx", &r);
	assert_non_null(strstr(r.out, "flush=DOCA_SUCCESS"));
	assert_trace_file(path_of(written, sizeof(written), "%s/t.json", real));

	/* v -> w -> via -> real, then an absolute link back into real. */
	assert_int_equal(symlink("w", path_of(link, sizeof(link), "%s/v", work)), 0);
	assert_int_equal(symlink("via/", path_of(link, sizeof(link), "%s/w", work)), 0);
	assert_int_equal(symlink(sub, path_of(link, sizeof(link), "%s/abs", real)), 0);
	run_child_in(work, "v/t2.json", "ctx", &r);
	assert_non_null(strstr(r.out, "flush=DOCA_SUCCESS"));
	assert_trace_file(path_of(written, sizeof(written), "%s/t2.json", real));
	run_child_in(work, "v/abs/../abs/t3.json", "ctx", &r);
	assert_non_null(strstr(r.out, "flush=DOCA_SUCCESS"));
	assert_trace_file(path_of(written, sizeof(written), "%s/t3.json", sub));
	run_child_in(real, "t4.json", "ctx", &r);
	assert_trace_file(path_of(written, sizeof(written), "%s/t4.json", real));
}

/* A new file is created 0600 (whatever the umask allows) and holds a
 * well-formed trace. */
static void test_fresh_file_0600(void **state)
{
	char fresh[128];
	struct child_run r;

	(void)state;
	run_child(path_of(fresh, sizeof(fresh), "%s/new.json", work), "ctx", &r);
	assert_non_null(strstr(r.out, "flush=DOCA_SUCCESS"));
	assert_string_equal(r.err, "");
	assert_trace_file(fresh);
}

/* Our own earlier trace is rewritten (shorter than before: no old bytes
 * left behind) and made 0600. */
static void test_own_file_rewritten(void **state)
{
	char old[128];
	char junk[65536];
	struct child_run r;

	(void)state;
	memset(junk, 'x', sizeof(junk) - 1);
	junk[sizeof(junk) - 1] = '\0';
	write_file(path_of(old, sizeof(old), "%s/old.json", work), junk, 0644);
	run_child(old, "ctx", &r);
	assert_non_null(strstr(r.out, "flush=DOCA_SUCCESS"));
	assert_trace_file(old);
}

static int setup(void **state)
{
	(void)state;
	snprintf(work, sizeof(work), "/tmp/test_trace_open.XXXXXX");
	return mkdtemp(work) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work);
	return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_call_touches_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_and_directory_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hard_link_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_owner_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stranger_link_in_path_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_link_in_path_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fresh_file_0600, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_file_rewritten, setup, teardown),
	};

	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return child_main(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
