/*
 * Unit tests of doca_argp: flag types and names, built-ins, errors, JSON
 * files, commands, devices, and the JSON reader itself.
 *
 * Every test runs in a fresh argp session (setup/teardown) with a logger
 * callback that records argp's user messages, so tests can check that an
 * error names the flag. -h and -v exit the process: those run in a forked
 * child whose stdout is captured.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <doca_argp.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_version.h>

/* The JSON reader is internal to libdoca_argp (hidden symbols): compile its
 * source into this test to check it directly. */
#include "argp/json.c"

#define PROG "test_prog"

struct cfg {
	char str[128];
	int str_calls;
	int i;
	int int_calls;
	double d;
	bool b;
	int bool_calls;
	char order[32]; /* one letter per callback, in call order */
	int multi_sum;
	int multi_calls;
	struct doca_dev *dev;
	char devargs[64];
	int dev_calls;
	int validations;
	int cmd_calls;
	char cmd_seen[32];
};

static struct cfg cfg;
static char last_msg[1024];
static int msg_count;

/* ---- helpers ---------------------------------------------------------- */

static void order_add(char c)
{
	size_t n = strlen(cfg.order);

	if (n + 1 < sizeof(cfg.order))
		cfg.order[n] = c;
}

static doca_error_t str_cb(void *param, void *config)
{
	struct cfg *c = config;

	snprintf(c->str, sizeof(c->str), "%s", (char *)param);
	c->str_calls++;
	order_add('S');
	return DOCA_SUCCESS;
}

static doca_error_t int_cb(void *param, void *config)
{
	struct cfg *c = config;

	c->i = *(int *)param;
	c->int_calls++;
	order_add('I');
	return DOCA_SUCCESS;
}

static doca_error_t dbl_cb(void *param, void *config)
{
	struct cfg *c = config;

	c->d = *(double *)param;
	order_add('D');
	return DOCA_SUCCESS;
}

static doca_error_t bool_cb(void *param, void *config)
{
	struct cfg *c = config;

	c->b = *(bool *)param;
	c->bool_calls++;
	order_add('B');
	return DOCA_SUCCESS;
}

static doca_error_t fail_cb(void *param, void *config)
{
	(void)param;
	(void)config;
	order_add('F');
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t multi_cb(void *param, void *config)
{
	struct cfg *c = config;

	c->multi_sum += *(int *)param;
	c->multi_calls++;
	return DOCA_SUCCESS;
}

static doca_error_t dev_cb(void *param, void *config)
{
	struct doca_argp_device_ctx *ctx = param;
	struct cfg *c = config;

	c->dev = ctx->dev;
	snprintf(c->devargs, sizeof(c->devargs), "%s", ctx->devargs != NULL ? ctx->devargs : "(null)");
	c->dev_calls++;
	return DOCA_SUCCESS;
}

static doca_error_t validate_ok(void *config)
{
	struct cfg *c = config;

	/* Runs after the flags: their values are there already. */
	assert_int_equal(c->int_calls, 1);
	c->validations++;
	return DOCA_SUCCESS;
}

static doca_error_t validate_fail(void *config)
{
	((struct cfg *)config)->validations++;
	return DOCA_ERROR_BAD_CONFIG;
}

static doca_error_t record_msg(enum doca_log_level level, const char *format, va_list args)
{
	(void)level;
	vsnprintf(last_msg, sizeof(last_msg), format, args);
	msg_count++;
	return DOCA_SUCCESS;
}

enum {
	F_MANDATORY = 1 << 0,
	F_MULTI = 1 << 1,
	F_HIDDEN = 1 << 2,
	F_CLI_ONLY = 1 << 3,
	F_SINGULAR = 1 << 4,
	F_INHERITED = 1 << 5,
};

static struct doca_argp_param *make_param(const char *short_name, const char *long_name, enum doca_argp_type type,
					  doca_argp_param_cb_t cb, unsigned int flags)
{
	struct doca_argp_param *p = NULL;

	assert_int_equal(doca_argp_param_create(&p), DOCA_SUCCESS);
	assert_non_null(p);
	if (short_name != NULL)
		doca_argp_param_set_short_name(p, short_name);
	if (long_name != NULL)
		doca_argp_param_set_long_name(p, long_name);
	doca_argp_param_set_description(p, "a test flag");
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, type);
	if (flags & F_MANDATORY)
		doca_argp_param_set_mandatory(p);
	if (flags & F_MULTI)
		doca_argp_param_set_multiplicity(p);
	if (flags & F_HIDDEN)
		doca_argp_param_set_hidden(p);
	if (flags & F_CLI_ONLY)
		doca_argp_param_set_cli_only(p);
	if (flags & F_SINGULAR)
		doca_argp_param_set_singular(p);
	if (flags & F_INHERITED)
		doca_argp_param_set_inherited(p);
	return p;
}

static doca_error_t add_param(const char *short_name, const char *long_name, enum doca_argp_type type,
			      doca_argp_param_cb_t cb, unsigned int flags)
{
	return doca_argp_register_param(make_param(short_name, long_name, type, cb, flags));
}

/* The four basic flags most tests use. */
static void add_basic_params(void)
{
	assert_int_equal(add_param("s", "string", DOCA_ARGP_TYPE_STRING, str_cb, 0), DOCA_SUCCESS);
	assert_int_equal(add_param("i", "int", DOCA_ARGP_TYPE_INT, int_cb, 0), DOCA_SUCCESS);
	assert_int_equal(add_param("f", "double", DOCA_ARGP_TYPE_DOUBLE, dbl_cb, 0), DOCA_SUCCESS);
	assert_int_equal(add_param("b", "bool", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0), DOCA_SUCCESS);
}

static doca_error_t start_argv(char **argv)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	return doca_argp_start(argc, argv);
}

/* START("-s", "x") parses {PROG, "-s", "x"}. */
#define START(...) start_argv((char *[]){PROG, __VA_ARGS__, NULL})

/* A fresh session for tests that run several command lines. */
static void restart_session(void)
{
	assert_int_equal(doca_argp_destroy(), DOCA_SUCCESS);
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(doca_argp_init(PROG, &cfg), DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_logger_callback(record_msg), DOCA_SUCCESS);
}

static int setup(void **state)
{
	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	last_msg[0] = '\0';
	msg_count = 0;
	if (doca_argp_init(PROG, &cfg) != DOCA_SUCCESS)
		return -1;
	return doca_argp_register_logger_callback(record_msg) == DOCA_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return doca_argp_destroy() == DOCA_SUCCESS ? 0 : -1;
}

static void write_file(const char *text, char *path, size_t size)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, size, "%s/test_argp_XXXXXX", dir != NULL ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Parse a JSON file holding text with -j; the file is removed after. */
static doca_error_t start_json(const char *text)
{
	char path[256];
	doca_error_t status;

	write_file(text, path, sizeof(path));
	status = START("-j", path);
	unlink(path);
	return status;
}

/* Run fn in a child with stdout captured into out; returns the wait status. */
static int run_child(void (*fn)(void), char *out, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fds[2];
	int status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDOUT_FILENO);
		close(fds[1]);
		fn();
		_exit(99); /* fn was expected to exit */
	}
	close(fds[1]);
	while (len + 1 < size && (n = read(fds[0], out + len, size - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

/* ---- types and names ---------------------------------------------------- */

static void test_each_type(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(START("-s", "hello", "-i", "42", "-f", "2.5", "-b"), DOCA_SUCCESS);
	assert_string_equal(cfg.str, "hello");
	assert_int_equal(cfg.i, 42);
	assert_true(cfg.d == 2.5);
	assert_true(cfg.b);
	assert_int_equal(cfg.bool_calls, 1);
}

static void test_long_names(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(START("--string", "world", "--int", "-7", "--double=1e3", "--bool"), DOCA_SUCCESS);
	assert_string_equal(cfg.str, "world");
	assert_int_equal(cfg.i, -7);
	assert_true(cfg.d == 1000.0);
	assert_true(cfg.b);
}

static void test_equals_and_hex(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(START("--int=0x10", "--string=a=b"), DOCA_SUCCESS);
	assert_int_equal(cfg.i, 16);
	assert_string_equal(cfg.str, "a=b");
}

static void test_multi_letter_short_names(void **state)
{
	(void)state;
	assert_int_equal(add_param("nc", "num-connections", DOCA_ARGP_TYPE_INT, int_cb, 0), DOCA_SUCCESS);
	assert_int_equal(add_param("sat", "server-addr-type", DOCA_ARGP_TYPE_STRING, str_cb, 0), DOCA_SUCCESS);
	assert_int_equal(add_param("s", "send-string", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0), DOCA_SUCCESS);
	assert_int_equal(START("-nc", "2", "-sat", "GID", "-s"), DOCA_SUCCESS);
	assert_int_equal(cfg.i, 2);
	assert_string_equal(cfg.str, "GID");
	assert_true(cfg.b);
}

static void test_callbacks_in_argv_order(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(START("-b", "-i", "1", "-s", "x", "-f", "0"), DOCA_SUCCESS);
	assert_string_equal(cfg.order, "BISD");
	restart_session();
	add_basic_params();
	assert_int_equal(START("-f", "0", "-s", "x", "-i", "1", "-b"), DOCA_SUCCESS);
	assert_string_equal(cfg.order, "DSIB");
}

static void test_no_flags(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(doca_argp_start(1, (char *[]){PROG, NULL}), DOCA_SUCCESS);
	assert_string_equal(cfg.order, "");
}

/* ---- command-line errors ------------------------------------------------- */

static void test_unknown_flag(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(START("-s", "x", "-zz", "1"), DOCA_ERROR_NOT_SUPPORTED);
	assert_non_null(strstr(last_msg, "-zz"));
	/* Found before any callback ran. */
	assert_int_equal(cfg.str_calls, 0);
	restart_session();
	add_basic_params();
	assert_int_equal(START("--nope=3"), DOCA_ERROR_NOT_SUPPORTED);
	assert_non_null(strstr(last_msg, "--nope"));
	restart_session();
	add_basic_params();
	/* A short name is not a long one. */
	assert_int_equal(START("--s", "x"), DOCA_ERROR_NOT_SUPPORTED);
}

static void test_missing_value(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(START("-s"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "-s/--string"));
	restart_session();
	add_basic_params();
	/* The next word is a flag, not the value. */
	assert_int_equal(START("-i", "-b"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "-i/--int"));
	assert_int_equal(cfg.bool_calls, 0);
}

static void test_bad_int(void **state)
{
	static const char *const bad[] = {"12x", "99999999999", "", "1.5", "0x", " 5", "--"};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		restart_session();
		add_basic_params();
		assert_int_equal(START("-i", (char *)bad[k]), DOCA_ERROR_INVALID_VALUE);
		assert_int_equal(cfg.int_calls, 0);
		assert_non_null(strstr(last_msg, "-i/--int"));
	}
	restart_session();
	add_basic_params();
	assert_int_equal(START("-i", "2147483647"), DOCA_SUCCESS);
	assert_int_equal(cfg.i, 2147483647);
	restart_session();
	add_basic_params();
	assert_int_equal(START("-i", "-2147483648"), DOCA_SUCCESS);
	assert_int_equal(cfg.i, -2147483647 - 1);
}

static void test_bad_double(void **state)
{
	static const char *const bad[] = {"abc", "1.5x", "inf", "nan", "1e999", ""};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		restart_session();
		add_basic_params();
		assert_int_equal(START("-f", (char *)bad[k]), DOCA_ERROR_INVALID_VALUE);
	}
}

static void test_positional_rejected(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(START("-b", "extra"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "extra"));
	assert_int_equal(cfg.bool_calls, 0);
}

static void test_mandatory(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(add_param("d", "device", DOCA_ARGP_TYPE_STRING, str_cb, F_MANDATORY), DOCA_SUCCESS);
	assert_int_equal(START("-i", "3"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "-d/--device"));
	/* The check comes after the callbacks. */
	assert_int_equal(cfg.int_calls, 1);
	restart_session();
	add_basic_params();
	assert_int_equal(add_param("d", "device", DOCA_ARGP_TYPE_STRING, str_cb, F_MANDATORY), DOCA_SUCCESS);
	assert_int_equal(START("-d", "mlx5_0"), DOCA_SUCCESS);
	assert_string_equal(cfg.str, "mlx5_0");
}

static void test_callback_error(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(add_param("x", "explode", DOCA_ARGP_TYPE_BOOLEAN, fail_cb, 0), DOCA_SUCCESS);
	assert_int_equal(START("-i", "1", "-x", "-s", "never"), DOCA_ERROR_NOT_FOUND);
	assert_string_equal(cfg.order, "IF");
	assert_non_null(strstr(last_msg, "-x/--explode"));
}

static void test_repeated_flag(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(START("-s", "a", "--string", "b"), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(cfg.str_calls, 0);
	restart_session();
	assert_int_equal(add_param("m", "multi", DOCA_ARGP_TYPE_INT, multi_cb, F_MULTI), DOCA_SUCCESS);
	assert_int_equal(START("-m", "1", "-m", "2", "--multi", "4"), DOCA_SUCCESS);
	assert_int_equal(cfg.multi_calls, 3);
	assert_int_equal(cfg.multi_sum, 7);
}

static void test_boolean_values(void **state)
{
	(void)state;
	add_basic_params();
	/* "=false" reads as "not given". */
	assert_int_equal(START("--bool=false"), DOCA_SUCCESS);
	assert_int_equal(cfg.bool_calls, 0);
	restart_session();
	add_basic_params();
	assert_int_equal(START("--bool=true"), DOCA_SUCCESS);
	assert_int_equal(cfg.bool_calls, 1);
	assert_true(cfg.b);
	restart_session();
	add_basic_params();
	assert_int_equal(START("--bool=maybe"), DOCA_ERROR_INVALID_VALUE);
}

static void test_singular(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(add_param("S", "solo", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, F_SINGULAR), DOCA_SUCCESS);
	assert_int_equal(START("-S"), DOCA_SUCCESS);
	restart_session();
	add_basic_params();
	assert_int_equal(add_param("S", "solo", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, F_SINGULAR), DOCA_SUCCESS);
	assert_int_equal(START("-S", "-i", "1"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "-S/--solo"));
	assert_int_equal(cfg.bool_calls, 0);
}

static void test_hidden_flag_works(void **state)
{
	(void)state;
	assert_int_equal(add_param("q", "quiet", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, F_HIDDEN), DOCA_SUCCESS);
	assert_int_equal(START("-q"), DOCA_SUCCESS);
	assert_true(cfg.b);
}

/* ---- built-in flags -------------------------------------------------------- */

static void test_log_levels(void **state)
{
	uint32_t lower = doca_log_level_get_global_lower_limit();
	uint32_t sdk = doca_log_level_get_global_sdk_limit();
	int level = 0;

	(void)state;
	add_basic_params();
	assert_int_equal(START("-l", "60", "--sdk-log-level", "30"), DOCA_SUCCESS);
	assert_int_equal(doca_log_level_get_global_lower_limit(), 60);
	assert_int_equal(doca_log_level_get_global_sdk_limit(), 30);
	assert_int_equal(doca_argp_get_log_level(&level), DOCA_SUCCESS);
	assert_int_equal(level, 60);
	assert_int_equal(doca_argp_get_sdk_log_level(&level), DOCA_SUCCESS);
	assert_int_equal(level, 30);
	assert_int_equal(doca_argp_get_log_level(NULL), DOCA_ERROR_INVALID_VALUE);

	restart_session();
	/* Not given: the getters report the global values. */
	assert_int_equal(doca_argp_get_log_level(&level), DOCA_SUCCESS);
	assert_int_equal(level, (int)doca_log_level_get_global_lower_limit());
	assert_int_equal(START("--log-level", "55"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "-l/--log-level"));
	restart_session();
	assert_int_equal(START("--sdk-log-level", "80"), DOCA_ERROR_INVALID_VALUE);
	restart_session();
	assert_int_equal(START("-l"), DOCA_ERROR_INVALID_VALUE);

	doca_log_level_set_global_lower_limit(lower);
	doca_log_level_set_global_sdk_limit(sdk);
}

static void child_help(void)
{
	add_basic_params();
	add_param("nc", "num-connections", DOCA_ARGP_TYPE_INT, int_cb, 0);
	add_param("d", "device", DOCA_ARGP_TYPE_STRING, str_cb, F_MANDATORY);
	add_param("q", "secret-flag", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, F_HIDDEN);
	/* -h wins although -d is missing and -s's value comes after. */
	START("-h", "-s");
}

static void test_help(void **state)
{
	char out[8192];
	int status;

	(void)state;
	status = run_child(child_help, out, sizeof(out));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EXIT_SUCCESS);
	assert_non_null(strstr(out, "Usage: " PROG));
	assert_non_null(strstr(out, "-s, --string <string>"));
	assert_non_null(strstr(out, "-nc, --num-connections <int>"));
	assert_non_null(strstr(out, "--double"));
	assert_non_null(strstr(out, "--bool"));
	assert_non_null(strstr(out, "-h, --help"));
	assert_non_null(strstr(out, "--sdk-log-level"));
	assert_non_null(strstr(out, "-j, --json"));
	assert_non_null(strstr(out, "[mandatory]"));
	assert_null(strstr(out, "secret-flag"));
	/* Nothing ran. */
	assert_null(strstr(out, "order"));
}

static void child_version(void)
{
	START("--version");
}

static void test_version(void **state)
{
	char out[4096];
	int status;

	(void)state;
	status = run_child(child_version, out, sizeof(out));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EXIT_SUCCESS);
	assert_non_null(strstr(out, DOCA_VERSION_STRING));
	assert_non_null(strstr(out, doca_version_runtime()));
}

static doca_error_t custom_version(void *param, void *config)
{
	assert_null(param);
	assert_ptr_equal(config, &cfg);
	printf("custom version text\n");
	return DOCA_SUCCESS;
}

static void child_custom_version(void)
{
	doca_argp_register_version_callback(custom_version);
	START("-v");
}

static doca_error_t failing_version(void *param, void *config)
{
	(void)param;
	(void)config;
	return DOCA_ERROR_IO_FAILED;
}

static void test_version_callback(void **state)
{
	char out[4096];
	int status;

	(void)state;
	status = run_child(child_custom_version, out, sizeof(out));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EXIT_SUCCESS);
	assert_non_null(strstr(out, "custom version text"));
	assert_null(strstr(out, "DOCA SDK"));
	/* A failing version callback is an error, not an exit. */
	assert_int_equal(doca_argp_register_version_callback(failing_version), DOCA_SUCCESS);
	assert_int_equal(START("-v"), DOCA_ERROR_IO_FAILED);
}

static void child_usage_name(void)
{
	doca_argp_destroy();
	doca_argp_init(NULL, &cfg);
	if (start_argv((char *[]){"/usr/local/bin/from_argv", NULL}) != DOCA_SUCCESS)
		_exit(3);
	doca_argp_usage();
	doca_argp_destroy();
	exit(EXIT_SUCCESS);
}

static void test_program_name_from_argv(void **state)
{
	char out[4096];
	int status;

	(void)state;
	status = run_child(child_usage_name, out, sizeof(out));
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), EXIT_SUCCESS);
	assert_non_null(strstr(out, "Usage: from_argv "));
}

/* ---- JSON files ---------------------------------------------------------- */

static void test_json_good(void **state)
{
	uint32_t lower = doca_log_level_get_global_lower_limit();

	(void)state;
	add_basic_params();
	assert_int_equal(add_param("m", "multi", DOCA_ARGP_TYPE_INT, multi_cb, F_MULTI), DOCA_SUCCESS);
	assert_int_equal(start_json("{\n"
				    "  \"string\": \"a\\\"b\\\\c \\u00e9\\ud83d\\ude00\",\n"
				    "  \"int\": -12,\n"
				    "  \"double\": 0.25e1,\n"
				    "  \"bool\": true,\n"
				    "  \"multi\": [1, 2, 3],\n"
				    "  \"log-level\": 40\n"
				    "}\n"),
			 DOCA_SUCCESS);
	assert_string_equal(cfg.str, "a\"b\\c \xc3\xa9\xf0\x9f\x98\x80");
	assert_int_equal(cfg.i, -12);
	assert_true(cfg.d == 2.5);
	assert_true(cfg.b);
	assert_int_equal(cfg.multi_calls, 3);
	assert_int_equal(cfg.multi_sum, 6);
	assert_int_equal(doca_log_level_get_global_lower_limit(), 40);
	/* Document order. */
	assert_string_equal(cfg.order, "SIDB");
	doca_log_level_set_global_lower_limit(lower);
}

static void test_json_false_and_sections(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(start_json("{\"doca_program_flags\": {\"bool\": false, \"int\": 5}}"), DOCA_SUCCESS);
	assert_int_equal(cfg.bool_calls, 0);
	assert_int_equal(cfg.i, 5);
}

static void test_json_malformed(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(start_json("{\n  \"int\": 7\n  \"string\": \"x\"\n}\n"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "line 3, column 3"));
	assert_int_equal(cfg.int_calls, 0);
	restart_session();
	add_basic_params();
	assert_int_equal(start_json("{\"int\": 7,}"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "line 1, column 11"));
	restart_session();
	add_basic_params();
	assert_int_equal(start_json(""), DOCA_ERROR_INVALID_VALUE);
	restart_session();
	add_basic_params();
	assert_int_equal(start_json("[1, 2]"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "object"));
}

static void test_json_unknown_key(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(start_json("{\"int\": 1, \"colour\": \"blue\"}"), DOCA_ERROR_NOT_SUPPORTED);
	assert_non_null(strstr(last_msg, "colour"));
	assert_int_equal(cfg.int_calls, 0);
	restart_session();
	add_basic_params();
	assert_int_equal(doca_argp_disable_pedantic_config_parsing(), DOCA_SUCCESS);
	assert_int_equal(start_json("{\"int\": 1, \"colour\": \"blue\"}"), DOCA_SUCCESS);
	assert_int_equal(cfg.i, 1);
}

static void test_json_bad_values(void **state)
{
	static const char *const bad[] = {
		"{\"int\": \"7\"}", "{\"int\": 1.5}", "{\"int\": 1e99}", "{\"string\": 3}",
		"{\"bool\": 1}", "{\"int\": [1, 2]}", "{\"int\": null}", "{\"help\": true}",
		"{\"json\": \"x\"}", "{\"log-level\": 33}",
	};
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		restart_session();
		add_basic_params();
		assert_int_equal(start_json(bad[k]), DOCA_ERROR_INVALID_VALUE);
		assert_string_equal(cfg.order, "");
	}
}

static void test_json_rules(void **state)
{
	char path[256];

	(void)state;
	add_basic_params();
	assert_int_equal(add_param("c", "cli", DOCA_ARGP_TYPE_INT, int_cb, F_CLI_ONLY), DOCA_SUCCESS);
	assert_int_equal(start_json("{\"cli\": 1}"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "--cli"));

	/* -j takes every flag from the file. */
	restart_session();
	add_basic_params();
	write_file("{\"int\": 1}", path, sizeof(path));
	assert_int_equal(START("-j", path, "-b"), DOCA_ERROR_INVALID_VALUE);
	unlink(path);
	assert_int_equal(cfg.bool_calls, 0);

	restart_session();
	add_basic_params();
	assert_int_equal(START("--json", "/nonexistent/argp.json"), DOCA_ERROR_IO_FAILED);
	assert_non_null(strstr(last_msg, "/nonexistent/argp.json"));
}

/* ---- validation, registration, state -------------------------------------- */

static void test_validation_callback(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(doca_argp_register_validation_callback(validate_ok), DOCA_SUCCESS);
	assert_int_equal(START("-i", "1"), DOCA_SUCCESS);
	assert_int_equal(cfg.validations, 1);
	restart_session();
	add_basic_params();
	assert_int_equal(doca_argp_register_validation_callback(validate_fail), DOCA_SUCCESS);
	assert_int_equal(START("-i", "1"), DOCA_ERROR_BAD_CONFIG);
	assert_int_equal(cfg.validations, 1);
	/* Not reached when parsing failed. */
	restart_session();
	add_basic_params();
	assert_int_equal(doca_argp_register_validation_callback(validate_fail), DOCA_SUCCESS);
	assert_int_equal(START("-zz"), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(cfg.validations, 0);
	assert_int_equal(doca_argp_register_validation_callback(NULL), DOCA_ERROR_INVALID_VALUE);
}

static void test_duplicate_registration(void **state)
{
	(void)state;
	add_basic_params();
	assert_int_equal(add_param("s", "other", DOCA_ARGP_TYPE_STRING, str_cb, 0), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(add_param("o", "int", DOCA_ARGP_TYPE_INT, int_cb, 0), DOCA_ERROR_INVALID_VALUE);
	/* The failure also fails the parse, naming the flag. */
	assert_int_equal(START("-i", "1"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "-s"));
	assert_int_equal(cfg.int_calls, 0);

	restart_session();
	assert_int_equal(add_param("h", "hh", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0), DOCA_ERROR_INVALID_VALUE);
	restart_session();
	assert_int_equal(add_param(NULL, "json", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0), DOCA_ERROR_INVALID_VALUE);
	restart_session();
	assert_int_equal(add_param("a b", NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb, 0), DOCA_ERROR_INVALID_VALUE);
}

static void test_register_missing_fields(void **state)
{
	struct doca_argp_param *p;

	(void)state;
	p = make_param("x", "xx", DOCA_ARGP_TYPE_INT, NULL, 0);
	assert_int_equal(doca_argp_register_param(p), DOCA_ERROR_INITIALIZATION);
	restart_session();
	p = make_param(NULL, NULL, DOCA_ARGP_TYPE_INT, int_cb, 0);
	assert_int_equal(doca_argp_register_param(p), DOCA_ERROR_INITIALIZATION);
	restart_session();
	p = make_param("x", NULL, DOCA_ARGP_TYPE_UNKNOWN, int_cb, 0);
	assert_int_equal(doca_argp_register_param(p), DOCA_ERROR_INITIALIZATION);
	restart_session();
	p = make_param("x", NULL, (enum doca_argp_type)42, int_cb, 0);
	assert_int_equal(doca_argp_register_param(p), DOCA_ERROR_INVALID_VALUE);
	restart_session();
	assert_int_equal(doca_argp_param_create(&p), DOCA_SUCCESS);
	doca_argp_param_set_short_name(p, "x");
	doca_argp_param_set_callback(p, int_cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_INT);
	assert_int_equal(doca_argp_register_param(p), DOCA_ERROR_INITIALIZATION);
	assert_int_equal(doca_argp_register_param(NULL), DOCA_ERROR_INVALID_VALUE);
}

static void test_state_rules(void **state)
{
	struct doca_argp_param *p;
	struct doca_argp_param *q;

	(void)state;
	assert_int_equal(doca_argp_init(PROG, &cfg), DOCA_ERROR_BAD_STATE);
	p = make_param("x", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0);
	assert_int_equal(doca_argp_register_param(p), DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_param(p), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_argp_param_destroy(p), DOCA_ERROR_BAD_STATE);
	q = make_param("y", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0);
	assert_int_equal(doca_argp_param_destroy(q), DOCA_SUCCESS);
	assert_int_equal(doca_argp_param_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	/* Created and forgotten: doca_argp_destroy frees it. */
	(void)make_param("z", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0);
	assert_int_equal(START("-x", "1"), DOCA_SUCCESS);
	assert_int_equal(START("-x", "1"), DOCA_ERROR_BAD_STATE);
	assert_int_equal(add_param("w", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0), DOCA_ERROR_BAD_STATE);

	assert_int_equal(doca_argp_destroy(), DOCA_SUCCESS);
	assert_int_equal(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_argp_param_create(&p), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_argp_start(1, (char *[]){PROG, NULL}), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_argp_register_validation_callback(validate_ok), DOCA_ERROR_BAD_STATE);
	/* And a new session works. */
	assert_int_equal(doca_argp_init(PROG, &cfg), DOCA_SUCCESS);
	assert_int_equal(doca_argp_param_create(NULL), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(add_param("x", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0), DOCA_SUCCESS);
	assert_int_equal(doca_argp_start(-1, NULL), DOCA_ERROR_INVALID_VALUE);
}

static void test_logger_callback(void **state)
{
	(void)state;
	assert_int_equal(doca_argp_register_logger_callback(record_msg), DOCA_ERROR_ALREADY_EXIST);
	assert_int_equal(doca_argp_register_logger_callback(NULL), DOCA_ERROR_INVALID_VALUE);
	msg_count = 0;
	assert_int_equal(START("-zz"), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(msg_count, 1);
	assert_int_equal(doca_argp_disable_logger_callback(), DOCA_SUCCESS);
	assert_int_equal(doca_argp_disable_logger_callback(), DOCA_ERROR_BAD_STATE);
}

static doca_error_t dpdk_cb(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fail_msg("the DPDK callback must not run");
	return DOCA_SUCCESS;
}

static void test_dpdk_not_supported(void **state)
{
	(void)state;
	doca_argp_set_dpdk_program(dpdk_cb);
	assert_int_equal(START("-b"), DOCA_ERROR_NOT_SUPPORTED);
	assert_non_null(strstr(last_msg, "DPDK"));
}

/* ---- commands -------------------------------------------------------------- */

static doca_error_t cmd_get_cb(void *config)
{
	struct cfg *c = config;

	c->cmd_calls++;
	strncat(c->cmd_seen, "get;", sizeof(c->cmd_seen) - strlen(c->cmd_seen) - 1);
	return DOCA_SUCCESS;
}

static doca_error_t cmd_set_cb(void *config)
{
	struct cfg *c = config;

	c->cmd_calls++;
	strncat(c->cmd_seen, "set;", sizeof(c->cmd_seen) - strlen(c->cmd_seen) - 1);
	return DOCA_SUCCESS;
}

/* Root flag -g (inherited), "get" with --limit and mandatory -d, "set"
 * with mandatory --value. */
static void add_cmd_tree(void)
{
	struct doca_argp_cmd *get;
	struct doca_argp_cmd *set;

	assert_int_equal(add_param("g", "global", DOCA_ARGP_TYPE_BOOLEAN, bool_cb, F_INHERITED), DOCA_SUCCESS);
	assert_int_equal(add_param("r", "root-only", DOCA_ARGP_TYPE_INT, int_cb, 0), DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_create(&get), DOCA_SUCCESS);
	doca_argp_cmd_set_name(get, "get");
	doca_argp_cmd_set_description(get, "Get things");
	doca_argp_cmd_set_callback(get, cmd_get_cb);
	assert_int_equal(doca_argp_cmd_register_param(get, make_param(NULL, "limit", DOCA_ARGP_TYPE_INT, multi_cb, 0)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_register_param(get, make_param("d", "device", DOCA_ARGP_TYPE_STRING, str_cb,
								      F_MANDATORY)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_cmd(get), DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_create(&set), DOCA_SUCCESS);
	doca_argp_cmd_set_name(set, "set");
	doca_argp_cmd_set_description(set, "Set things");
	doca_argp_cmd_set_callback(set, cmd_set_cb);
	/* The same names may be reused in another command. */
	assert_int_equal(doca_argp_cmd_register_param(set, make_param("d", "device", DOCA_ARGP_TYPE_STRING, str_cb,
								      F_MANDATORY)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_cmd(set), DOCA_SUCCESS);
}

static void test_commands(void **state)
{
	(void)state;
	add_cmd_tree();
	assert_int_equal(START("-r", "1", "get", "--limit", "5", "-g", "-d", "x"), DOCA_SUCCESS);
	assert_string_equal(cfg.cmd_seen, "get;");
	assert_int_equal(cfg.multi_sum, 5);
	assert_true(cfg.b);
	assert_string_equal(cfg.str, "x");
	assert_string_equal(cfg.order, "IBS");

	restart_session();
	add_cmd_tree();
	/* --limit belongs to "get". */
	assert_int_equal(START("--limit", "5"), DOCA_ERROR_NOT_SUPPORTED);
	restart_session();
	add_cmd_tree();
	/* -r is not inherited. */
	assert_int_equal(START("get", "-d", "x", "-r", "1"), DOCA_ERROR_NOT_SUPPORTED);
	restart_session();
	add_cmd_tree();
	/* Mandatory flags of the chosen command only. */
	assert_int_equal(START("set"), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(last_msg, "-d/--device"));
	restart_session();
	add_cmd_tree();
	assert_int_equal(START("get", "-d", "x", "set"), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(cfg.cmd_calls, 0);
	restart_session();
	add_cmd_tree();
	assert_int_equal(start_json("{\"global\": true, \"set\": {\"device\": \"y\"}}"), DOCA_SUCCESS);
	assert_string_equal(cfg.cmd_seen, "set;");
	assert_string_equal(cfg.str, "y");
}

static void test_command_registration(void **state)
{
	struct doca_argp_cmd *a;
	struct doca_argp_cmd *b;

	(void)state;
	assert_int_equal(doca_argp_cmd_create(&a), DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_cmd(a), DOCA_ERROR_INITIALIZATION);
	restart_session();
	assert_int_equal(doca_argp_cmd_create(&a), DOCA_SUCCESS);
	doca_argp_cmd_set_name(a, "run");
	doca_argp_cmd_set_description(a, "Run");
	assert_int_equal(doca_argp_cmd_create(&b), DOCA_SUCCESS);
	doca_argp_cmd_set_name(b, "run");
	doca_argp_cmd_set_description(b, "Run again");
	assert_int_equal(doca_argp_register_cmd(a), DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_cmd(a), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_argp_cmd_destroy(a), DOCA_ERROR_BAD_STATE);
	assert_int_equal(doca_argp_register_cmd(b), DOCA_ERROR_INVALID_VALUE);
	restart_session();
	assert_int_equal(doca_argp_cmd_create(&a), DOCA_SUCCESS);
	doca_argp_cmd_set_name(a, "tree");
	assert_int_equal(doca_argp_cmd_register_param(a, make_param("x", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_destroy(a), DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
}

static struct doca_argp_cmd *make_cmd(const char *name, doca_argp_cmd_cb_t cb)
{
	struct doca_argp_cmd *c = NULL;

	assert_int_equal(doca_argp_cmd_create(&c), DOCA_SUCCESS);
	doca_argp_cmd_set_name(c, name);
	doca_argp_cmd_set_description(c, "a test command");
	doca_argp_cmd_set_callback(c, cb);
	return c;
}

static void test_nested_commands(void **state)
{
	struct doca_argp_cmd *top;
	struct doca_argp_cmd *leaf;

	(void)state;
	top = make_cmd("get", cmd_get_cb);
	leaf = make_cmd("set", cmd_set_cb);
	/* Inherited by "set" below "get"; -r is "get"'s own. */
	assert_int_equal(doca_argp_cmd_register_param(top, make_param("g", NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb,
								      F_INHERITED)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_register_param(top, make_param("r", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_register_cmd(top, leaf), DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_cmd(top), DOCA_SUCCESS);
	/* Too late: "get" is registered. */
	assert_int_equal(doca_argp_cmd_register_cmd(top, make_cmd("late", NULL)), DOCA_ERROR_BAD_STATE);
	restart_session();
	top = make_cmd("get", cmd_get_cb);
	leaf = make_cmd("set", cmd_set_cb);
	assert_int_equal(doca_argp_cmd_register_param(top, make_param("g", NULL, DOCA_ARGP_TYPE_BOOLEAN, bool_cb,
								      F_INHERITED)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_register_param(top, make_param("r", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_register_cmd(top, leaf), DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_cmd(top), DOCA_SUCCESS);
	assert_int_equal(START("get", "-r", "2", "set", "-g"), DOCA_SUCCESS);
	assert_string_equal(cfg.cmd_seen, "get;set;");
	assert_string_equal(cfg.order, "IB");
	assert_int_equal(START("get"), DOCA_ERROR_BAD_STATE);
}

static void test_nested_commands_scope(void **state)
{
	struct doca_argp_cmd *top = make_cmd("get", cmd_get_cb);
	struct doca_argp_cmd *leaf = make_cmd("set", cmd_set_cb);

	(void)state;
	assert_int_equal(doca_argp_cmd_register_param(top, make_param("r", NULL, DOCA_ARGP_TYPE_INT, int_cb, 0)),
			 DOCA_SUCCESS);
	assert_int_equal(doca_argp_cmd_register_cmd(top, leaf), DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_cmd(top), DOCA_SUCCESS);
	/* -r is not inherited into "set". */
	assert_int_equal(START("get", "set", "-r", "2"), DOCA_ERROR_NOT_SUPPORTED);
	assert_int_equal(cfg.cmd_calls, 0);
}

/* ---- devices ---------------------------------------------------------------- */

static int opens;

static doca_error_t counting_open(struct doca_devinfo *devinfo, void *usr_ctx, struct doca_dev **dev)
{
	assert_ptr_equal(usr_ctx, &opens);
	opens++;
	return doca_dev_open(devinfo, dev);
}

static void test_device(void **state)
{
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

	(void)state;
	assert_int_equal(add_param("d", "device", DOCA_ARGP_TYPE_DEVICE, dev_cb, 0), DOCA_SUCCESS);
	/* Every machine has a loopback interface, so a soft device "lo". */
	assert_int_equal(START("-d", "lo"), DOCA_SUCCESS);
	assert_int_equal(cfg.dev_calls, 1);
	assert_non_null(cfg.dev);
	assert_string_equal(cfg.devargs, "(null)");
	assert_int_equal(doca_devinfo_get_pci_addr_str(doca_dev_as_devinfo(cfg.dev), pci), DOCA_SUCCESS);
	assert_int_equal(doca_dev_close(cfg.dev), DOCA_SUCCESS);

	restart_session();
	assert_int_equal(add_param("d", "device", DOCA_ARGP_TYPE_DEVICE, dev_cb, 0), DOCA_SUCCESS);
	assert_int_equal(doca_argp_register_dev_open_callback(counting_open, &opens), DOCA_SUCCESS);
	opens = 0;
	assert_int_equal(START("-d", pci), DOCA_SUCCESS);
	assert_int_equal(opens, 1);
	assert_non_null(cfg.dev);
	assert_int_equal(doca_dev_close(cfg.dev), DOCA_SUCCESS);

	restart_session();
	assert_int_equal(add_param("d", "device", DOCA_ARGP_TYPE_DEVICE, dev_cb, 0), DOCA_SUCCESS);
	assert_int_equal(START("--device", "soft_lo,txq=4,rxq=2"), DOCA_SUCCESS);
	assert_string_equal(cfg.devargs, "txq=4,rxq=2");
	assert_int_equal(doca_dev_close(cfg.dev), DOCA_SUCCESS);

	restart_session();
	assert_int_equal(add_param("d", "device", DOCA_ARGP_TYPE_DEVICE, dev_cb, 0), DOCA_SUCCESS);
	assert_int_equal(START("-d", "no_such_device0"), DOCA_ERROR_NOT_FOUND);
	assert_non_null(strstr(last_msg, "no_such_device0"));
	assert_int_equal(cfg.dev_calls, 0);
}

static void test_device_rep_not_supported(void **state)
{
	(void)state;
	assert_int_equal(add_param("r", "rep", DOCA_ARGP_TYPE_DEVICE_REP, dev_cb, F_MULTI), DOCA_SUCCESS);
	assert_int_equal(START("-r", "0000:03:00.0,vf0"), DOCA_ERROR_NOT_SUPPORTED);
	assert_non_null(strstr(last_msg, "-r/--rep"));
}

/* ---- the JSON reader -------------------------------------------------------- */

static doca_error_t parse(const char *text, struct argp_json_value **root, char *err)
{
	return argp_json_parse(text, strlen(text), root, err);
}

static void test_json_reader_values(void **state)
{
	char err[ARGP_JSON_ERR_SIZE];
	struct argp_json_value *root = NULL;
	const struct argp_json_value *v;

	(void)state;
	assert_int_equal(parse("\xef\xbb\xbf {\"a\": [true, false, null, -0.5e-3, {}, []], \"b\": \"\\t\\/\"}", &root,
			       err),
			 DOCA_SUCCESS);
	assert_int_equal(root->type, ARGP_JSON_OBJECT);
	assert_int_equal(root->u.object.count, 2);
	assert_string_equal(root->u.object.members[0].key, "a");
	v = &root->u.object.members[0].value;
	assert_int_equal(v->type, ARGP_JSON_ARRAY);
	assert_int_equal(v->u.array.count, 6);
	assert_true(v->u.array.items[0].u.boolean);
	assert_false(v->u.array.items[1].u.boolean);
	assert_int_equal(v->u.array.items[2].type, ARGP_JSON_NULL);
	assert_string_equal(v->u.array.items[3].u.text, "-0.5e-3");
	assert_int_equal(v->u.array.items[4].type, ARGP_JSON_OBJECT);
	assert_int_equal(v->u.array.items[5].type, ARGP_JSON_ARRAY);
	assert_string_equal(root->u.object.members[1].value.u.text, "\t/");
	argp_json_free(root);
	argp_json_free(NULL);
}

static void test_json_reader_errors(void **state)
{
	static const struct {
		const char *text;
		const char *where;
	} cases[] = {
		{"{\"a\": 01}", "column 8"},
		{"{\"a\": 1, \"a\": 2}", "appears twice"},
		/* The first key seen again, where it is seen again. */
		{"{\"b\": 1, \"a\": 2, \"b\": 3, \"a\": 4}", "column 18: key \"b\" appears twice"},
		{"[{\"x\": 1}, {\"y\": [1, {\"z\": 0, \"z\": 0}]}]", "column 31: key \"z\" appears twice"},
		{"{\"a\": tru}", "column 7"},
		{"{\"a\": \"x\ny\"}", "control byte"},
		{"{\"a\": \"\\q\"}", "escape"},
		{"{\"a\": \"\\u0000\"}", "\\u0000"},
		{"{\"a\": \"\\ud800\"}", "surrogate"},
		{"{\"a\": \"\\udc00\"}", "surrogate"},
		{"{\"a\": \"\xc3\"}", "UTF-8"},
		{"{\"a\": \"\xc0\xaf\"}", "UTF-8"},
		{"{\"a\": \"open", "not closed"},
		{"{\"a\" 1}", "':'"},
		{"{a: 1}", "string key"},
		{"{} {}", "end of file"},
		{"[1 2]", "',' or ']'"},
		{"-", "digit"},
		{"1.", "digit"},
		{"1e", "digit"},
		{"// comment\n{}", "line 1, column 1"},
		{"{\n\n   x}", "line 3, column 4"},
	};
	char err[ARGP_JSON_ERR_SIZE];
	struct argp_json_value *root;
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		root = NULL;
		assert_int_equal(parse(cases[k].text, &root, err), DOCA_ERROR_INVALID_VALUE);
		assert_null(root);
		if (strstr(err, cases[k].where) == NULL)
			fail_msg("case %zu: \"%s\" not in \"%s\"", k, cases[k].where, err);
	}
}

/* n arrays inside each other: "[[[...]]]". */
static void nest(char *text, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		text[k] = '[';
		text[n + k] = ']';
	}
	text[2 * n] = '\0';
}

static void test_json_reader_depth(void **state)
{
	char text[2 * (JSON_MAX_DEPTH + 2) + 1];
	char err[ARGP_JSON_ERR_SIZE];
	struct argp_json_value *root = NULL;

	(void)state;
	nest(text, JSON_MAX_DEPTH + 1);
	assert_int_equal(parse(text, &root, err), DOCA_SUCCESS);
	argp_json_free(root);
	root = NULL;
	nest(text, JSON_MAX_DEPTH + 2);
	assert_int_equal(parse(text, &root, err), DOCA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(err, "nested"));
	assert_null(root);
}

/* A file of JSON_MAX_FILE_SIZE bytes holding n distinct keys (about 350k),
 * and with its last key a copy of the first when dup; the caller frees it. */
static char *many_keys(bool dup, size_t *n_out)
{
	size_t room = JSON_MAX_FILE_SIZE;
	char *text = malloc(room + 1);
	size_t len = 0;
	size_t n = 0;

	assert_non_null(text);
	text[len++] = '{';
	while (len + 32 < room) {
		len += (size_t)snprintf(text + len, room - len, "%s\"key%zu\":%zu", n > 0 ? "," : "", n, n);
		n++;
	}
	len += (size_t)snprintf(text + len, room - len, "%s}", dup ? ",\"key0\":0" : "");
	*n_out = n;
	return text;
}

/* Parse in a child whose CPU time is bounded: the duplicate-key check of
 * a 4 MiB object must not take minutes (it was quadratic in the keys: a
 * hostile file hung the program). Exits 0 when the outcome is right. */
static void many_keys_child(bool dup)
{
	/* SIGXCPU after 20 s of CPU (SIGKILL 5 s later); it needs well under 1 s. */
	struct rlimit cpu = {.rlim_cur = 20, .rlim_max = 25};
	char err[ARGP_JSON_ERR_SIZE];
	struct argp_json_value *root = NULL;
	doca_error_t status;
	size_t n;
	char *text = many_keys(dup, &n);

	if (setrlimit(RLIMIT_CPU, &cpu) != 0)
		_exit(2);
	status = argp_json_parse(text, strlen(text), &root, err);
	if (dup)
		_exit(status == DOCA_ERROR_INVALID_VALUE && strstr(err, "key \"key0\" appears twice") != NULL ? 0 : 3);
	_exit(status == DOCA_SUCCESS && root->u.object.count == n ? 0 : 4);
}

static void test_json_reader_many_keys(void **state)
{
	(void)state;
	for (int dup = 0; dup < 2; dup++) {
		int wstatus;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			many_keys_child(dup != 0);
		assert_int_equal(waitpid(pid, &wstatus, 0), pid);
		if (WIFSIGNALED(wstatus))
			fail_msg("parsing %s died of signal %d%s", dup ? "350k keys and a duplicate" : "350k keys",
				 WTERMSIG(wstatus), WTERMSIG(wstatus) == SIGXCPU ? " (out of CPU time: quadratic?)" : "");
		assert_true(WIFEXITED(wstatus));
		assert_int_equal(WEXITSTATUS(wstatus), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_each_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_equals_and_hex, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multi_letter_short_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callbacks_in_argv_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_flags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_value, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_int, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_double, setup, teardown),
		cmocka_unit_test_setup_teardown(test_positional_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mandatory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeated_flag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_boolean_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_singular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hidden_flag_works, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_levels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_help, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_name_from_argv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_good, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_false_and_sections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_unknown_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_bad_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_validation_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_registration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_missing_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_logger_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dpdk_not_supported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_command_registration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_commands_scope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_rep_not_supported, setup, teardown),
		cmocka_unit_test(test_json_reader_values),
		cmocka_unit_test(test_json_reader_errors),
		cmocka_unit_test(test_json_reader_depth),
		cmocka_unit_test(test_json_reader_many_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
