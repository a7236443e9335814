/*
 * Unit tests: doca_log — sources, line layout, backends, limits, SDK/program
 * separation, DOCA_LOG_LEVEL, truncation, threads.
 *
 * Backends live until exit, so each test captures into its own buffer
 * backend; earlier tests' backends keep receiving lines into their own
 * captures, which nobody looks at any more. Test order matters for the first
 * test only: it checks the implicit stderr SDK output, which exists only
 * until an SDK backend is created.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_log.h>

#include "common.h"
#include "log_internal.h"

/* The "::" in the name is only turned into text. */
DOCA_LOG_REGISTER(TEST::LOG::UNIT);

#define LINE_MAX_BYTES 2048 /* log.c's LOG_LINE_MAX */

static int sdk_src = -1;

#define SDK_MSG(level, ...) doca_log((level), sdk_src, __FILE__, __LINE__, __func__, __VA_ARGS__)

/* ---- capturing ---------------------------------------------------------- */

/* buf comes first: the flush callback gets buf and finds its capture. */
struct capture {
	char buf[4096];
	char text[65536];
	size_t len;
	int lines;
};

static void capture_cb(char *buf)
{
	struct capture *c = container_of(buf, struct capture, buf);
	size_t n = strlen(buf);

	c->lines++;
	if (c->len + n >= sizeof(c->text))
		n = sizeof(c->text) - 1 - c->len;
	memcpy(c->text + c->len, buf, n);
	c->len += n;
	c->text[c->len] = '\0';
}

static void capture_reset(struct capture *c)
{
	c->len = 0;
	c->lines = 0;
	c->text[0] = '\0';
}

static struct doca_log_backend *capture_backend(struct capture *c, bool sdk)
{
	struct doca_log_backend *b = NULL;

	capture_reset(c);
	if (sdk)
		assert_int_equal(doca_log_backend_create_with_buf_sdk(c->buf, sizeof(c->buf), capture_cb, &b),
				 DOCA_SUCCESS);
	else
		assert_int_equal(doca_log_backend_create_with_buf(c->buf, sizeof(c->buf), capture_cb, &b),
				 DOCA_SUCCESS);
	assert_non_null(b);
	return b;
}

static bool has(const struct capture *c, const char *needle)
{
	return strstr(c->text, needle) != NULL;
}

/* Send a file descriptor (1 or 2) to a temporary file for a while. */
struct redirect {
	int fd;
	int saved;
	FILE *tmp;
};

static void redirect_begin(struct redirect *r, int fd)
{
	fflush(stdout);
	fflush(stderr);
	r->fd = fd;
	r->tmp = tmpfile();
	assert_non_null(r->tmp);
	r->saved = dup(fd);
	assert_true(r->saved >= 0);
	assert_true(dup2(fileno(r->tmp), fd) >= 0);
}

static void redirect_end(struct redirect *r, char *out, size_t size)
{
	size_t n;

	fflush(stdout);
	fflush(stderr);
	assert_true(dup2(r->saved, r->fd) >= 0);
	close(r->saved);
	rewind(r->tmp);
	n = fread(out, 1, size - 1, r->tmp);
	out[n] = '\0';
	fclose(r->tmp);
}

static void restore_globals(void)
{
	assert_int_equal(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_INFO), DOCA_SUCCESS);
	assert_int_equal(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_CRIT), DOCA_SUCCESS);
}

static int group_setup(void **state)
{
	(void)state;
	unsetenv("DOCA_LOG_LEVEL");
	if (softdoca_log_reload_env() != DOCA_SUCCESS)
		return -1;
	return softdoca_log_register_sdk_source("TEST::SDK", &sdk_src) == DOCA_SUCCESS ? 0 : -1;
}

/* ---- tests -------------------------------------------------------------- */

/* Must run first: no SDK backend exists yet. */
static void test_implicit_sdk_stderr(void **state)
{
	static char out[8192];
	struct redirect r;

	(void)state;
	assert_int_equal(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_INFO);
	redirect_begin(&r, STDERR_FILENO);
	SDK_MSG(DOCA_LOG_LEVEL_ERROR, "implicit-error-%d", 1);
	SDK_MSG(DOCA_LOG_LEVEL_WARNING, "implicit-warning-%d", 1);
	SDK_MSG(DOCA_LOG_LEVEL_INFO, "implicit-info-%d", 1);
	DOCA_LOG_ERR("program-error-%d", 1); /* no program backend: goes nowhere */
	/* A level chosen in the environment overrides the default both ways. */
	setenv("DOCA_LOG_LEVEL", "error", 1);
	assert_int_equal(softdoca_log_reload_env(), DOCA_SUCCESS);
	SDK_MSG(DOCA_LOG_LEVEL_WARNING, "implicit-warning-%d", 2);
	setenv("DOCA_LOG_LEVEL", "debug", 1);
	assert_int_equal(softdoca_log_reload_env(), DOCA_SUCCESS);
	SDK_MSG(DOCA_LOG_LEVEL_DEBUG, "implicit-debug-%d", 1);
	SDK_MSG(DOCA_LOG_LEVEL_TRACE, "implicit-trace-%d", 1);
	redirect_end(&r, out, sizeof(out));
	unsetenv("DOCA_LOG_LEVEL");
	assert_int_equal(softdoca_log_reload_env(), DOCA_SUCCESS);

	assert_non_null(strstr(out, "implicit-error-1"));
	assert_non_null(strstr(out, "[TEST::SDK]"));
	/* WARNING shows at the default level (docs/troubleshooting.md), INFO not. */
	assert_non_null(strstr(out, "[WARN][TEST::SDK]"));
	assert_non_null(strstr(out, "implicit-warning-1"));
	assert_null(strstr(out, "implicit-warning-2"));
	assert_null(strstr(out, "implicit-info-1"));
	assert_null(strstr(out, "program-error-1"));
	assert_non_null(strstr(out, "implicit-debug-1"));
	assert_null(strstr(out, "implicit-trace-1"));
}

static void test_register_macro_and_layout(void **state)
{
	static struct capture c;
	char *nl;

	(void)state;
	capture_backend(&c, false);
	DOCA_LOG_INFO("hello %s %d", "world", 42);
	assert_int_equal(c.lines, 1);
	assert_true(has(&c, "[INFO][TEST::LOG::UNIT][test_log.c:"));
	assert_true(has(&c, "][test_register_macro_and_layout] hello world 42\n"));
	/* [HH:MM:SS.uuuuuu] first, then pid. */
	assert_int_equal(c.text[0], '[');
	assert_int_equal(c.text[3], ':');
	assert_int_equal(c.text[6], ':');
	assert_int_equal(c.text[9], '.');
	assert_int_equal(c.text[16], ']');
	assert_int_equal(strtol(c.text + 18, NULL, 10), (long)getpid());
	/* One line, one newline, even when the message brings its own. */
	nl = strchr(c.text, '\n');
	assert_non_null(nl);
	assert_int_equal(nl[1], '\0');
	capture_reset(&c);
	DOCA_LOG_WARN("ends in newline\n\n");
	assert_true(has(&c, "[WARN]"));
	assert_true(has(&c, "ends in newline\n"));
	assert_false(has(&c, "\n\n"));
}

static void test_register_invalid_args(void **state)
{
	int id = -1;
	int id2 = -1;

	(void)state;
	assert_int_equal(doca_log_register_source(NULL, &id), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_register_source("", &id), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_register_source("X", NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(id, -1); /* untouched on failure */
	assert_int_equal(softdoca_log_register_sdk_source(NULL, &id), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_unregister_source(-1), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_unregister_source(0), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_unregister_source(1 << 20), DOCA_ERROR_INVALID_VALUE);

	assert_int_equal(doca_log_register_source("A::ONE", &id), DOCA_SUCCESS);
	assert_int_equal(doca_log_register_source("A::TWO", &id2), DOCA_SUCCESS);
	assert_true(id > 0);
	assert_int_not_equal(id, id2);
	assert_int_not_equal(id, log_source);
	assert_int_equal(doca_log_unregister_source(id), DOCA_SUCCESS);
	assert_int_equal(doca_log_unregister_source(id), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_unregister_source(id2), DOCA_SUCCESS);
}

static void test_unknown_source(void **state)
{
	static struct capture c;
	int id;

	(void)state;
	capture_backend(&c, false);
	assert_int_equal(doca_log(DOCA_LOG_LEVEL_ERROR, -1, __FILE__, __LINE__, __func__, "neg-source"),
			 DOCA_SUCCESS);
	assert_int_equal(doca_log(DOCA_LOG_LEVEL_ERROR, 123456, NULL, 0, NULL, "big-source"), DOCA_SUCCESS);
	assert_true(has(&c, "[unknown]"));
	assert_true(has(&c, "neg-source"));
	assert_true(has(&c, "[?:0][?] big-source"));

	/* A stale id after unregister is "unknown" too. */
	assert_int_equal(doca_log_register_source("TEMP::SRC", &id), DOCA_SUCCESS);
	assert_int_equal(doca_log_unregister_source(id), DOCA_SUCCESS);
	capture_reset(&c);
	doca_log(DOCA_LOG_LEVEL_ERROR, id, __FILE__, __LINE__, __func__, "stale-source");
	assert_true(has(&c, "[unknown]"));
	assert_false(has(&c, "TEMP::SRC"));
}

static void log_every_level(void)
{
	DOCA_LOG_CRIT("lvl-crit");
	DOCA_LOG_ERR("lvl-error");
	DOCA_LOG_WARN("lvl-warning");
	DOCA_LOG_INFO("lvl-info");
	DOCA_LOG_DBG("lvl-debug");
	DOCA_LOG(DOCA_LOG_LEVEL_TRACE, "lvl-trace");
}

static void test_backend_limits(void **state)
{
	static struct capture c;
	struct doca_log_backend *b;

	(void)state;
	b = capture_backend(&c, false);
	/* Defaults: CRIT..INFO. */
	log_every_level();
	assert_true(has(&c, "lvl-crit"));
	assert_true(has(&c, "lvl-info"));
	assert_false(has(&c, "lvl-debug"));
	assert_int_equal(c.lines, 4);

	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_upper_limit(b, DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	capture_reset(&c);
	log_every_level();
	assert_false(has(&c, "lvl-crit"));
	assert_true(has(&c, "lvl-error"));
	assert_true(has(&c, "lvl-warning"));
	assert_true(has(&c, "lvl-info"));
	assert_true(has(&c, "lvl-debug"));
	assert_false(has(&c, "lvl-trace"));
	assert_int_equal(c.lines, 4);

	/* DISABLE as the lower limit silences the backend. */
	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	capture_reset(&c);
	log_every_level();
	assert_int_equal(c.lines, 0);

	/* DISABLE as a message level prints nowhere. */
	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_TRACE), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_upper_limit(b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	capture_reset(&c);
	assert_int_equal(DOCA_LOG(DOCA_LOG_LEVEL_DISABLE, "lvl-disable"), DOCA_SUCCESS);
	assert_int_equal(c.lines, 0);
	/* A level between two names is accepted and filtered by number. */
	assert_int_equal(DOCA_LOG(35, "lvl-35"), DOCA_SUCCESS);
	assert_true(has(&c, "[L35]"));
	restore_globals();
}

static void test_strict_and_global(void **state)
{
	static struct capture strict_c, loose_c;
	struct doca_log_backend *strict_b, *loose_b;

	(void)state;
	strict_b = capture_backend(&strict_c, false);
	loose_b = capture_backend(&loose_c, false);
	assert_non_null(loose_b);
	assert_int_equal(doca_log_backend_set_level_lower_limit(strict_b, DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(strict_b), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_upper_limit(strict_b, DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_upper_limit_strict(strict_b), DOCA_SUCCESS);

	assert_int_equal(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	assert_int_equal(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_ERROR);
	assert_int_equal(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_CRIT), DOCA_SUCCESS);
	log_every_level();
	/* The loose backend follows the global limits. */
	assert_true(has(&loose_c, "lvl-crit"));
	assert_true(has(&loose_c, "lvl-error"));
	assert_false(has(&loose_c, "lvl-warning"));
	/* The strict one keeps its own. */
	assert_false(has(&strict_c, "lvl-crit"));
	assert_true(has(&strict_c, "lvl-error"));
	assert_true(has(&strict_c, "lvl-debug"));
	assert_false(has(&strict_c, "lvl-trace"));

	capture_reset(&strict_c);
	capture_reset(&loose_c);
	assert_int_equal(doca_log_level_set_global_upper_limit(DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	assert_int_equal(doca_log_level_get_global_upper_limit(), DOCA_LOG_LEVEL_ERROR);
	assert_int_equal(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE), DOCA_SUCCESS);
	log_every_level();
	assert_false(has(&loose_c, "lvl-crit"));
	assert_true(has(&loose_c, "lvl-trace"));
	assert_false(has(&strict_c, "lvl-trace"));

	/* A backend created now starts at the current global limits. */
	{
		static struct capture late_c;

		capture_backend(&late_c, false);
		log_every_level();
		assert_false(has(&late_c, "lvl-crit"));
		assert_true(has(&late_c, "lvl-trace"));
	}
	restore_globals();
}

static void test_sdk_separation(void **state)
{
	static struct capture prog_c, sdk_c;
	static char err_out[8192];
	struct doca_log_backend *prog_b, *sdk_b;
	struct redirect r;

	(void)state;
	prog_b = capture_backend(&prog_c, false);
	sdk_b = capture_backend(&sdk_c, true);

	DOCA_LOG_ERR("from-program");
	SDK_MSG(DOCA_LOG_LEVEL_ERROR, "from-sdk");
	assert_true(has(&prog_c, "from-program"));
	assert_false(has(&prog_c, "from-sdk"));
	assert_true(has(&sdk_c, "from-sdk"));
	assert_false(has(&sdk_c, "from-program"));

	/* The SDK backend starts at the global SDK limit (INFO). */
	capture_reset(&sdk_c);
	SDK_MSG(DOCA_LOG_LEVEL_INFO, "sdk-info");
	SDK_MSG(DOCA_LOG_LEVEL_DEBUG, "sdk-debug");
	assert_true(has(&sdk_c, "sdk-info"));
	assert_false(has(&sdk_c, "sdk-debug"));

	assert_int_equal(doca_log_backend_set_sdk_level(sdk_b, DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	SDK_MSG(DOCA_LOG_LEVEL_DEBUG, "sdk-debug-2");
	assert_true(has(&sdk_c, "sdk-debug-2"));
	assert_true(softdoca_log_sdk_enabled(DOCA_LOG_LEVEL_DEBUG));

	/* The global SDK limit reaches every SDK backend, and only those. */
	assert_int_equal(doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_WARNING), DOCA_SUCCESS);
	assert_int_equal(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_WARNING);
	capture_reset(&sdk_c);
	capture_reset(&prog_c);
	SDK_MSG(DOCA_LOG_LEVEL_INFO, "sdk-info-2");
	SDK_MSG(DOCA_LOG_LEVEL_WARNING, "sdk-warn-2");
	DOCA_LOG_INFO("program-info-2");
	assert_false(has(&sdk_c, "sdk-info-2"));
	assert_true(has(&sdk_c, "sdk-warn-2"));
	assert_true(has(&prog_c, "program-info-2"));
	assert_false(softdoca_log_sdk_enabled(DOCA_LOG_LEVEL_INFO));
	assert_true(softdoca_log_sdk_enabled(DOCA_LOG_LEVEL_ERROR));
	assert_false(softdoca_log_sdk_enabled(DOCA_LOG_LEVEL_DISABLE));

	/* The program's global limits leave SDK backends alone. */
	assert_int_equal(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_TRACE), DOCA_SUCCESS);
	capture_reset(&sdk_c);
	SDK_MSG(DOCA_LOG_LEVEL_DEBUG, "sdk-debug-3");
	assert_false(has(&sdk_c, "sdk-debug-3"));
	restore_globals();

	/* set_sdk_level is for SDK backends only. */
	assert_int_equal(doca_log_backend_set_sdk_level(prog_b, DOCA_LOG_LEVEL_DEBUG), DOCA_ERROR_INVALID_VALUE);

	/* Now that the program has an SDK backend, stderr gets no SDK lines. */
	redirect_begin(&r, STDERR_FILENO);
	SDK_MSG(DOCA_LOG_LEVEL_CRIT, "sdk-crit-not-on-stderr");
	redirect_end(&r, err_out, sizeof(err_out));
	assert_null(strstr(err_out, "sdk-crit-not-on-stderr"));
	assert_true(has(&sdk_c, "sdk-crit-not-on-stderr"));
}

static void test_invalid_levels(void **state)
{
	static struct capture c, sdk_c;
	struct doca_log_backend *b, *sdk_b;
	const uint32_t bad[] = {0, 9, 71, 100, UINT32_MAX};
	size_t i;

	(void)state;
	b = capture_backend(&c, false);
	sdk_b = capture_backend(&sdk_c, true);
	assert_int_equal(doca_log_backend_set_sdk_level(sdk_b, DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(sdk_b), DOCA_SUCCESS);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(doca_log(bad[i], log_source, __FILE__, __LINE__, __func__, "bad-level"),
				 DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_log_level_set_global_lower_limit(bad[i]), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_log_level_set_global_upper_limit(bad[i]), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_log_level_set_global_sdk_limit(bad[i]), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_log_backend_set_level_lower_limit(b, bad[i]), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_log_backend_set_level_upper_limit(b, bad[i]), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_log_backend_set_sdk_level(sdk_b, bad[i]), DOCA_ERROR_INVALID_VALUE);
	}
	assert_false(has(&c, "bad-level"));
	/* Nothing changed. */
	assert_int_equal(doca_log_level_get_global_lower_limit(), DOCA_LOG_LEVEL_INFO);
	assert_int_equal(doca_log_level_get_global_upper_limit(), DOCA_LOG_LEVEL_CRIT);
	assert_int_equal(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_WARNING);
	DOCA_LOG_INFO("still-info");
	assert_true(has(&c, "still-info"));
	/* Each refusal was logged as an SDK error that names the value. */
	assert_true(has(&sdk_c, "[ERROR][SOFTDOCA::LOG]"));
	assert_true(has(&sdk_c, "[doca_log_level_set_global_lower_limit] 71 is not a log level"));
	assert_true(has(&sdk_c, "[doca_log_backend_set_sdk_level] 9 is not a log level"));
	assert_true(has(&sdk_c, "message from test_log.c:"));
}

static void test_null_args(void **state)
{
	static struct capture sdk_c;
	struct doca_log_backend *b = NULL;
	struct doca_log_backend *sdk_b;
	char buf[64];
	int closed_fd;

	(void)state;
	sdk_b = capture_backend(&sdk_c, true);
	assert_int_equal(doca_log_backend_set_sdk_level(sdk_b, DOCA_LOG_LEVEL_ERROR), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(sdk_b), DOCA_SUCCESS);

	assert_int_equal(doca_log_backend_create_with_file(NULL, &b), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_file(stdout, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_file_sdk(NULL, &b), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_fd(-1, &b), DOCA_ERROR_INVALID_VALUE);
	closed_fd = dup(STDOUT_FILENO);
	close(closed_fd);
	assert_int_equal(doca_log_backend_create_with_fd(closed_fd, &b), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_fd_sdk(-5, &b), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_fd(STDOUT_FILENO, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_buf(NULL, sizeof(buf), capture_cb, &b),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_buf(buf, 0, capture_cb, &b), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_buf(buf, sizeof(buf), NULL, &b), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_buf_sdk(buf, sizeof(buf), capture_cb, NULL),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_syslog(NULL, &b), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_create_with_syslog_sdk(NULL, &b), DOCA_ERROR_INVALID_VALUE);
	assert_null(b); /* never set on failure */

	assert_int_equal(doca_log_backend_set_level_lower_limit(NULL, DOCA_LOG_LEVEL_INFO),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_set_level_upper_limit(NULL, DOCA_LOG_LEVEL_INFO),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_set_level_upper_limit_strict(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log_backend_set_sdk_level(NULL, DOCA_LOG_LEVEL_INFO), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_log(DOCA_LOG_LEVEL_ERROR, log_source, __FILE__, __LINE__, __func__, NULL),
			 DOCA_ERROR_INVALID_VALUE);

	assert_true(has(&sdk_c, "FILE pointer is NULL"));
	assert_true(has(&sdk_c, "is not an open file descriptor"));
	assert_true(has(&sdk_c, "backend output pointer is NULL"));
	assert_true(has(&sdk_c, "[doca_log_backend_set_level_upper_limit_strict] backend is NULL"));
	assert_true(has(&sdk_c, "NULL format string"));
}

static void test_env_parsing(void **state)
{
	static const struct {
		const char *text;
		uint32_t level;
	} good[] = {
		{"debug", DOCA_LOG_LEVEL_DEBUG}, {"DEBUG", DOCA_LOG_LEVEL_DEBUG},
		{"trace", DOCA_LOG_LEVEL_TRACE}, {"Warning", DOCA_LOG_LEVEL_WARNING},
		{"warn", DOCA_LOG_LEVEL_WARNING}, {"error", DOCA_LOG_LEVEL_ERROR},
		{"info", DOCA_LOG_LEVEL_INFO},   {"CRIT", DOCA_LOG_LEVEL_CRIT},
		{"disable", DOCA_LOG_LEVEL_DISABLE}, {"30", 30},
		{"70", 70},			 {"10", 10},
		{"45", 45},
	};
	static const char *const bad[] = {"5", "71", "verbose", "", "50x", "-50", "0x32", "4294967346"};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		setenv("DOCA_LOG_LEVEL", good[i].text, 1);
		assert_int_equal(softdoca_log_reload_env(), DOCA_SUCCESS);
		assert_int_equal(doca_log_level_get_global_sdk_limit(), good[i].level);
	}
	setenv("DOCA_LOG_LEVEL", "debug", 1);
	assert_int_equal(softdoca_log_reload_env(), DOCA_SUCCESS);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		setenv("DOCA_LOG_LEVEL", bad[i], 1);
		assert_int_equal(softdoca_log_reload_env(), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_DEBUG);
	}
	unsetenv("DOCA_LOG_LEVEL");
	assert_int_equal(softdoca_log_reload_env(), DOCA_SUCCESS);
	assert_int_equal(doca_log_level_get_global_sdk_limit(), DOCA_LOG_LEVEL_INFO);
}

/* A buffer smaller than a line, followed by bytes that must stay intact. */
struct small_capture {
	char buf[16];
	char canary[16];
	char last[16];
	int lines;
};

static void small_cb(char *buf)
{
	struct small_capture *s = container_of(buf, struct small_capture, buf);

	s->lines++;
	memcpy(s->last, buf, sizeof(s->last));
}

static void test_truncation(void **state)
{
	static struct capture c;
	static struct small_capture s;
	static char huge[10000];
	struct doca_log_backend *b = NULL;
	size_t i;

	(void)state;
	capture_backend(&c, false);
	memset(huge, 'x', sizeof(huge) - 1);
	DOCA_LOG_INFO("%s", huge);
	assert_int_equal(c.lines, 1);
	assert_int_equal(c.len, LINE_MAX_BYTES - 1);
	assert_string_equal(c.text + c.len - 4, "...\n");
	assert_int_equal(strchr(c.text, '\n') - c.text, (long)c.len - 1);

	memset(s.canary, 0x5a, sizeof(s.canary));
	assert_int_equal(doca_log_backend_create_with_buf(s.buf, sizeof(s.buf), small_cb, &b), DOCA_SUCCESS);
	DOCA_LOG_INFO("%s", huge);
	assert_int_equal(s.lines, 1);
	assert_int_equal(strlen(s.last), sizeof(s.buf) - 1);
	assert_int_equal(s.last[0], '[');
	for (i = 0; i < sizeof(s.canary); i++)
		assert_int_equal((unsigned char)s.canary[i], 0x5a);
	/* Silence it for the tests that follow. */
	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(b), DOCA_SUCCESS);
}

/* Text the library quotes (a -j file's key, a peer's name) cannot forge a
 * line or send the terminal escapes: control characters in SDK messages
 * become '?', tabs stay; program messages print as written. */
static void test_sdk_control_characters(void **state)
{
	static struct capture sdk_c, prog_c;

	(void)state;
	capture_backend(&sdk_c, true);
	capture_backend(&prog_c, false);
	SDK_MSG(DOCA_LOG_LEVEL_ERROR, "unknown key \"%s\"", "a\n[00:00:00.000000][1][1][ERROR] forged\x1b[2J\tz\x7f\r");
	assert_int_equal(sdk_c.lines, 1);
	assert_non_null(strstr(sdk_c.text, "unknown key \"a?[00:00:00.000000][1][1][ERROR] forged?[2J\tz??\"\n"));
	assert_int_equal(strchr(sdk_c.text, '\n') - sdk_c.text, (long)sdk_c.len - 1);
	assert_null(strchr(sdk_c.text, 0x1b));
	DOCA_LOG_ERR("program text\nas written");
	assert_non_null(strstr(prog_c.text, "program text\nas written\n"));
}

static void test_fd_and_file_backends(void **state)
{
	struct doca_log_backend *b = NULL;
	char out[4096];
	int fds[2];
	ssize_t n;
	FILE *f;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(doca_log_backend_create_with_fd(fds[1], &b), DOCA_SUCCESS);
	DOCA_LOG_WARN("to-the-pipe %d", 7);
	DOCA_LOG_DBG("not-to-the-pipe");
	n = read(fds[0], out, sizeof(out) - 1);
	assert_true(n > 0);
	out[n] = '\0';
	assert_non_null(strstr(out, "[WARN][TEST::LOG::UNIT]"));
	assert_non_null(strstr(out, "to-the-pipe 7\n"));
	assert_null(strstr(out, "not-to-the-pipe"));
	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(b), DOCA_SUCCESS);

	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(doca_log_backend_create_with_file(f, &b), DOCA_SUCCESS);
	DOCA_LOG_ERR("to-the-file");
	rewind(f);
	n = (ssize_t)fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	assert_non_null(strstr(out, "[ERROR][TEST::LOG::UNIT]"));
	assert_non_null(strstr(out, "to-the-file\n"));
	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(b), DOCA_SUCCESS);
	/* Left open: a backend lives until exit. */
}

static void test_syslog_backends(void **state)
{
	struct doca_log_backend *b = NULL;
	struct doca_log_backend *sdk_b = NULL;

	(void)state;
	assert_int_equal(doca_log_backend_create_with_syslog("softdoca-test", &b), DOCA_SUCCESS);
	assert_non_null(b);
	assert_int_equal(doca_log_backend_create_with_syslog_sdk("softdoca-test", &sdk_b), DOCA_SUCCESS);
	assert_non_null(sdk_b);
	/* Keep the system log clean: silence both before anything is logged. */
	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(b), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_sdk_level(sdk_b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(sdk_b), DOCA_SUCCESS);
	assert_int_equal(DOCA_LOG_CRIT("not-in-syslog"), DOCA_SUCCESS);
}

/* A flush callback that logs again must neither deadlock nor recurse. */
static struct capture reentry_c;

static void reentry_cb(char *buf)
{
	capture_cb(buf);
	DOCA_LOG_ERR("from-inside-the-callback");
}

static void test_reentrant_callback(void **state)
{
	struct doca_log_backend *b = NULL;

	(void)state;
	capture_reset(&reentry_c);
	assert_int_equal(doca_log_backend_create_with_buf(reentry_c.buf, sizeof(reentry_c.buf), reentry_cb, &b),
			 DOCA_SUCCESS);
	DOCA_LOG_ERR("outer-message");
	assert_int_equal(reentry_c.lines, 1);
	assert_true(has(&reentry_c, "outer-message"));
	assert_false(has(&reentry_c, "from-inside-the-callback"));
	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(b), DOCA_SUCCESS);
}

#define THREADS 4
#define PER_THREAD 500

static struct capture thread_c;
static int thread_bad_lines;

/* Called under the log lock, so plain counters are safe. */
static void thread_cb(char *buf)
{
	size_t n = strlen(buf);

	thread_c.lines++;
	if (n == 0 || buf[0] != '[' || buf[n - 1] != '\n' || strchr(buf, '\n') != buf + n - 1)
		thread_bad_lines++;
}

static void *thread_main(void *arg)
{
	int i;

	for (i = 0; i < PER_THREAD; i++)
		DOCA_LOG_INFO("thread %ld message %d", (long)(intptr_t)arg, i);
	return NULL;
}

static void test_threads(void **state)
{
	struct doca_log_backend *b = NULL;
	pthread_t t[THREADS];
	long i;

	(void)state;
	assert_int_equal(doca_log_backend_create_with_buf(thread_c.buf, sizeof(thread_c.buf), thread_cb, &b),
			 DOCA_SUCCESS);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i), 0);
	for (i = 0; i < THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(thread_c.lines, THREADS * PER_THREAD);
	assert_int_equal(thread_bad_lines, 0);
	assert_int_equal(doca_log_backend_set_level_lower_limit(b, DOCA_LOG_LEVEL_DISABLE), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_set_level_lower_limit_strict(b), DOCA_SUCCESS);
}

/* ---- rate-limited SDK lines ------------------------------------------- */

#define RL_SEC 1000000000ull

/* The window logic on a clock of our own. */
static void test_rate_limit_logic(void **state)
{
	struct softdoca_log_rate r = {0};
	const uint64_t t0 = 5 * RL_SEC;
	uint64_t held = 99;
	uint32_t allowed = 0;

	(void)state;
	for (uint32_t i = 0; i < 100; i++)
		allowed += softdoca_log_rate_allow(&r, t0 + i, &held);
	assert_int_equal(allowed, SDK_LOG_RATE_BURST);
	assert_int_equal(held, 0); /* nothing was held before the first lines */
	/* Still the same window just before its end. */
	assert_false(softdoca_log_rate_allow(&r, t0 + RL_SEC - 1, &held));
	/* A new window: allowed, and told how many were held back. */
	assert_true(softdoca_log_rate_allow(&r, t0 + RL_SEC, &held));
	assert_int_equal(held, 100 - SDK_LOG_RATE_BURST + 1);
	/* The count started again. */
	assert_true(softdoca_log_rate_allow(&r, t0 + RL_SEC + 1, &held));
	assert_int_equal(held, 0);
	/* A quiet site prints at once after a long pause. */
	assert_true(softdoca_log_rate_allow(&r, t0 + 100 * RL_SEC, &held));
	assert_int_equal(held, 0);
}

#define RL_THREADS 4
#define RL_PER_THREAD 20000

static struct softdoca_log_rate rl_shared;
static _Atomic uint32_t rl_allowed;

static void *rl_thread(void *arg)
{
	uint64_t held;

	(void)arg;
	for (int i = 0; i < RL_PER_THREAD; i++)
		if (softdoca_log_rate_allow(&rl_shared, 7 * RL_SEC, &held))
			atomic_fetch_add(&rl_allowed, 1);
	return NULL;
}

/* One site hammered by several threads: exactly the burst gets through,
 * and every other message is counted as held back. */
static void test_rate_limit_threads(void **state)
{
	pthread_t t[RL_THREADS];
	uint64_t held = 0;

	(void)state;
	for (long i = 0; i < RL_THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, rl_thread, NULL), 0);
	for (long i = 0; i < RL_THREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(atomic_load(&rl_allowed), SDK_LOG_RATE_BURST);
	assert_true(softdoca_log_rate_allow(&rl_shared, 8 * RL_SEC, &held));
	assert_int_equal(held, (uint64_t)RL_THREADS * RL_PER_THREAD - SDK_LOG_RATE_BURST);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * RL_SEC + (uint64_t)ts.tv_nsec;
}

/* SDK_LOG_ERR_RL logs to the file's sdk_log_source: here, our SDK source. */
static void rl_line(int i)
{
	const int sdk_log_source = sdk_src;

	SDK_LOG_ERR_RL("rl-flood message %d", i);
}

static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The macro end to end: a flood from one call site prints the burst, then,
 * once the window has passed, one line with the count and the message. */
static void test_rate_limit_macro(void **state)
{
	static struct capture c;
	const int flood = 2000;
	uint64_t t0, deadline;
	const char *summary;
	int before, i = 0;

	(void)state;
	capture_backend(&c, true);
	t0 = mono_ns();
	for (i = 0; i < flood; i++)
		rl_line(i);
	/* The flood fits one window unless this machine stalled for a second. */
	if (mono_ns() - t0 < RL_SEC)
		assert_int_equal(count_of(c.text, "rl-flood message"), SDK_LOG_RATE_BURST);
	assert_false(has(&c, "similar messages"));

	/* Next window: poll (bounded) until the site prints again. */
	before = c.lines;
	deadline = mono_ns() + 3 * RL_SEC;
	while (c.lines == before && mono_ns() < deadline) {
		struct timespec pause = {0, 10 * 1000 * 1000};

		nanosleep(&pause, NULL);
		rl_line(i++);
	}
	assert_int_equal(c.lines, before + 2);
	summary = strstr(c.text, "similar messages from here were suppressed");
	assert_non_null(summary);
	{
		/* "...][rl_line] N similar messages": the count precedes it. */
		const char *p = summary - 1;
		unsigned long long n;

		while (p > c.text && p[-1] != ' ')
			p--;
		n = strtoull(p, NULL, 10);
		assert_true(n >= (unsigned long long)(flood - (int)SDK_LOG_RATE_BURST));
		assert_true(n <= (unsigned long long)(i - (int)SDK_LOG_RATE_BURST));
	}
	/* The summary names the call site, like the message after it. */
	assert_non_null(strstr(c.text, "[ERROR][TEST::SDK]"));
	assert_non_null(strstr(summary, "rl-flood message"));
}

/* Last: the standard backend keeps printing to the real stdout/stderr. */
static void test_standard_backend(void **state)
{
	static char out[8192], err[8192];
	struct redirect ro, re;

	(void)state;
	assert_int_equal(doca_log_backend_create_standard(), DOCA_SUCCESS);
	assert_int_equal(doca_log_backend_create_standard(), DOCA_SUCCESS); /* no second copy */
	redirect_begin(&ro, STDOUT_FILENO);
	redirect_begin(&re, STDERR_FILENO);
	DOCA_LOG_INFO("std-info");
	DOCA_LOG_WARN("std-warn");
	DOCA_LOG_ERR("std-error");
	redirect_end(&re, err, sizeof(err));
	redirect_end(&ro, out, sizeof(out));

	assert_non_null(strstr(out, "std-info"));
	assert_null(strstr(out, "std-warn"));
	assert_null(strstr(out, "std-error"));
	assert_non_null(strstr(err, "std-warn"));
	assert_non_null(strstr(err, "std-error"));
	assert_null(strstr(err, "std-info"));
	/* Exactly one copy of the line. */
	assert_null(strstr(strstr(out, "std-info") + 1, "std-info"));
}

/* ---- loggers ------------------------------------------------------------- */

static int tl_root = -1, tl_a = -1, tl_ab = -1, tl_c = -1;

static void loggers_register(void)
{
	if (tl_root > 0)
		return;
	assert_int_equal(doca_log_register_source("TLOG", &tl_root), DOCA_SUCCESS);
	assert_int_equal(doca_log_register_source("TLOG::A", &tl_a), DOCA_SUCCESS);
	assert_int_equal(doca_log_register_source("TLOG::A::B", &tl_ab), DOCA_SUCCESS);
	assert_int_equal(doca_log_register_source("TLOG::C", &tl_c), DOCA_SUCCESS);
}

/* The logger of that name, from the full list. */
static struct doca_logger *logger_named(const char *name)
{
	struct doca_logger **list = NULL, *found;
	uint32_t nb = 0;

	assert_int_equal(doca_logger_create_list(NULL, 0, &list, &nb), DOCA_SUCCESS);
	found = doca_logger_find_by_name(list, name);
	assert_int_equal(doca_logger_destroy_list(list), DOCA_SUCCESS);
	return found;
}

static bool list_has(struct doca_logger **list, const char *name)
{
	return doca_logger_find_by_name(list, name) != NULL;
}

static void test_logger_lists(void **state)
{
	struct doca_logger **list = NULL;
	struct doca_logger *root, *a;
	char name[DOCA_LOGGER_NAME_SIZE];
	uint32_t nb = 0;

	(void)state;
	loggers_register();
	/* everything, NULL-terminated, the program's and the SDK's sources */
	assert_int_equal(doca_logger_create_list(NULL, 0, &list, &nb), DOCA_SUCCESS);
	assert_true(nb >= 6);
	assert_null(list[nb]);
	assert_true(list_has(list, "TLOG") && list_has(list, "TLOG::A::B") && list_has(list, "TEST::SDK"));
	assert_true(list_has(list, "TEST::LOG::UNIT"));
	assert_null(doca_logger_find_by_name(list, "TLOG::NOPE"));
	assert_int_equal(doca_logger_destroy_list(list), DOCA_SUCCESS);

	/* from the top, depth 1: one-part names only */
	assert_int_equal(doca_logger_create_list(NULL, 1, &list, &nb), DOCA_SUCCESS);
	assert_true(list_has(list, "TLOG"));
	assert_false(list_has(list, "TLOG::A"));
	assert_int_equal(doca_logger_destroy_list(list), DOCA_SUCCESS);

	root = logger_named("TLOG");
	assert_non_null(root);
	assert_int_equal(doca_logger_get_name(root, name), DOCA_SUCCESS);
	assert_string_equal(name, "TLOG");
	/* under TLOG: itself left out */
	assert_int_equal(doca_logger_create_list(root, 0, &list, &nb), DOCA_SUCCESS);
	assert_int_equal(nb, 3);
	assert_true(list_has(list, "TLOG::A") && list_has(list, "TLOG::A::B") && list_has(list, "TLOG::C"));
	assert_false(list_has(list, "TLOG"));
	assert_int_equal(doca_logger_destroy_list(list), DOCA_SUCCESS);
	assert_int_equal(doca_logger_create_list(root, 1, &list, &nb), DOCA_SUCCESS);
	assert_int_equal(nb, 2);
	assert_false(list_has(list, "TLOG::A::B"));
	assert_int_equal(doca_logger_destroy_list(list), DOCA_SUCCESS);
	a = logger_named("TLOG::A");
	assert_int_equal(doca_logger_create_list(a, 0, &list, &nb), DOCA_SUCCESS);
	assert_int_equal(nb, 1);
	assert_non_null(doca_logger_find_by_name(list, "TLOG::A::B"));
	assert_int_equal(doca_logger_destroy_list(list), DOCA_SUCCESS);
}

static void test_logger_levels(void **state)
{
	static struct capture c;
	struct doca_logger *root, *a, *ab, *c_log;
	int level = 0;

	(void)state;
	loggers_register();
	capture_backend(&c, false);
	assert_int_equal(doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DEBUG), DOCA_SUCCESS);
	root = logger_named("TLOG");
	a = logger_named("TLOG::A");
	ab = logger_named("TLOG::A::B");
	c_log = logger_named("TLOG::C");
	assert_int_equal(doca_logger_get_level(a, &level), DOCA_SUCCESS);
	assert_int_equal(level, DOCA_LOG_LEVEL_TRACE);

	/* one logger only */
	assert_int_equal(doca_logger_set_level(a, DOCA_LOG_LEVEL_WARNING, 0), DOCA_SUCCESS);
	assert_int_equal(doca_logger_get_level(a, &level), DOCA_SUCCESS);
	assert_int_equal(level, DOCA_LOG_LEVEL_WARNING);
	assert_int_equal(doca_logger_get_level(ab, &level), DOCA_SUCCESS);
	assert_int_equal(level, DOCA_LOG_LEVEL_TRACE);
	doca_log(DOCA_LOG_LEVEL_INFO, tl_a, __FILE__, __LINE__, __func__, "a-info-dropped");
	doca_log(DOCA_LOG_LEVEL_WARNING, tl_a, __FILE__, __LINE__, __func__, "a-warn-kept");
	doca_log(DOCA_LOG_LEVEL_INFO, tl_ab, __FILE__, __LINE__, __func__, "ab-info-kept");
	assert_false(has(&c, "a-info-dropped"));
	assert_true(has(&c, "a-warn-kept"));
	assert_true(has(&c, "ab-info-kept"));

	/* a subtree */
	assert_int_equal(doca_logger_set_level(root, DOCA_LOG_LEVEL_ERROR, 1), DOCA_SUCCESS);
	assert_int_equal(doca_logger_get_level(c_log, &level), DOCA_SUCCESS);
	assert_int_equal(level, DOCA_LOG_LEVEL_ERROR);
	assert_int_equal(doca_logger_get_level(ab, &level), DOCA_SUCCESS);
	assert_int_equal(level, DOCA_LOG_LEVEL_ERROR);
	doca_log(DOCA_LOG_LEVEL_WARNING, tl_ab, __FILE__, __LINE__, __func__, "ab-warn-dropped");
	assert_false(has(&c, "ab-warn-dropped"));

	/* every logger */
	assert_int_equal(doca_logger_set_level(NULL, DOCA_LOG_LEVEL_TRACE, 1), DOCA_SUCCESS);
	assert_int_equal(doca_logger_get_level(ab, &level), DOCA_SUCCESS);
	assert_int_equal(level, DOCA_LOG_LEVEL_TRACE);
	assert_int_equal(doca_logger_get_level(root, &level), DOCA_SUCCESS);
	assert_int_equal(level, DOCA_LOG_LEVEL_TRACE);
	doca_log(DOCA_LOG_LEVEL_WARNING, tl_ab, __FILE__, __LINE__, __func__, "ab-warn-back");
	assert_true(has(&c, "ab-warn-back"));
	restore_globals();
}

static void test_logger_bad_args(void **state)
{
	struct doca_logger **list = NULL;
	struct doca_logger *bogus = (struct doca_logger *)(void *)&tl_root;
	char name[DOCA_LOGGER_NAME_SIZE];
	char longname[300];
	uint32_t nb = 0;
	int level = 0, src = -1;
	struct doca_logger *gone;

	(void)state;
	loggers_register();
	assert_int_equal(doca_logger_create_list(NULL, 0, NULL, &nb), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_logger_create_list(NULL, 0, &list, NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_logger_create_list(bogus, 0, &list, &nb), DOCA_ERROR_NOT_FOUND);
	assert_int_equal(doca_logger_destroy_list(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_logger_set_level(NULL, DOCA_LOG_LEVEL_INFO, 0), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_logger_set_level(NULL, 5, 1), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_logger_set_level(NULL, -50, 1), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_logger_set_level(bogus, DOCA_LOG_LEVEL_INFO, 0), DOCA_ERROR_NOT_FOUND);
	assert_int_equal(doca_logger_get_level(bogus, &level), DOCA_ERROR_NOT_FOUND);
	assert_int_equal(doca_logger_get_level(NULL, &level), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_logger_get_name(bogus, name), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(doca_logger_get_name(NULL, name), DOCA_ERROR_INVALID_VALUE);
	assert_null(doca_logger_find_by_name(NULL, "TLOG"));

	/* a name longer than DOCA_LOGGER_NAME_SIZE - 1 is cut */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memcpy(longname, "TLONG", 5);
	assert_int_equal(doca_log_register_source(longname, &src), DOCA_SUCCESS);
	longname[DOCA_LOGGER_NAME_SIZE - 1] = '\0';
	gone = logger_named(longname);
	assert_non_null(gone);
	assert_int_equal(doca_logger_get_name(gone, name), DOCA_SUCCESS);
	assert_int_equal(strlen(name), DOCA_LOGGER_NAME_SIZE - 1);
	/* an unregistered source is no logger any more */
	assert_int_equal(doca_log_unregister_source(src), DOCA_SUCCESS);
	assert_int_equal(doca_logger_get_level(gone, &level), DOCA_ERROR_NOT_FOUND);
	assert_null(logger_named(longname));
}

/* For backends whose lines nobody reads. */
static void discard_cb(char *buf)
{
	(void)buf;
}

/* Runs last: it uses up every backend slot. */
static void test_max_backends(void **state)
{
	static char buf[256];
	struct doca_log_backend *b = NULL;
	uint32_t max = doca_log_get_max_num_backends();
	uint32_t made = 0;
	doca_error_t err;

	(void)state;
	assert_true(max > 0);
	assert_int_equal(doca_log_get_max_num_backends_sdk(), max);
	while ((err = doca_log_backend_create_with_buf(buf, sizeof(buf), discard_cb, &b)) == DOCA_SUCCESS)
		assert_true(++made <= max);
	assert_int_equal(err, DOCA_ERROR_NO_MEMORY);
	assert_true(made > 0);
	assert_int_equal(doca_log_backend_create_with_fd(STDERR_FILENO, &b), DOCA_ERROR_NO_MEMORY);
	/* the SDK class has its own slots */
	assert_int_equal(doca_log_backend_create_with_buf_sdk(buf, sizeof(buf), discard_cb, &b), DOCA_SUCCESS);
	made = 1;
	while ((err = doca_log_backend_create_with_buf_sdk(buf, sizeof(buf), discard_cb, &b)) == DOCA_SUCCESS)
		assert_true(++made <= max);
	assert_int_equal(err, DOCA_ERROR_NO_MEMORY);
	assert_int_equal(doca_log_backend_create_with_syslog_sdk("softdoca-test", &b), DOCA_ERROR_NO_MEMORY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_implicit_sdk_stderr), /* first: see the top comment */
		cmocka_unit_test(test_register_macro_and_layout),
		cmocka_unit_test(test_register_invalid_args),
		cmocka_unit_test(test_unknown_source),
		cmocka_unit_test(test_backend_limits),
		cmocka_unit_test(test_strict_and_global),
		cmocka_unit_test(test_sdk_separation),
		cmocka_unit_test(test_invalid_levels),
		cmocka_unit_test(test_null_args),
		cmocka_unit_test(test_env_parsing),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_sdk_control_characters),
		cmocka_unit_test(test_fd_and_file_backends),
		cmocka_unit_test(test_syslog_backends),
		cmocka_unit_test(test_reentrant_callback),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_rate_limit_logic),
		cmocka_unit_test(test_rate_limit_threads),
		cmocka_unit_test(test_rate_limit_macro),
		cmocka_unit_test(test_logger_lists),
		cmocka_unit_test(test_logger_levels),
		cmocka_unit_test(test_logger_bad_args),
		cmocka_unit_test(test_standard_backend), /* last but one */
		cmocka_unit_test(test_max_backends),	 /* last: fills every backend slot */
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
