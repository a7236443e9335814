/*
 * libFuzzer target for argp's -j/--json configuration files: whoever can
 * write the file a program is pointed at controls every byte of it.
 * The first input byte picks what runs on the rest:
 *   even  the JSON reader alone (src/argp/json.c): a document or an error
 *         message, never a crash; an accepted document is walked and must
 *         keep the reader's promises (bounded depth, strings valid UTF-8
 *         with no NUL, numbers in JSON's grammar), or the target aborts;
 *   odd   a whole argp session started with "-j <file>" holding the rest,
 *         against flags of every type (single and repeated), a command
 *         with a sub-command, a command-line-only flag and a device flag;
 *         bit 1 of the first byte turns pedantic parsing off (unknown keys
 *         are warned about and skipped).
 * argp prints its usage on every refused file: run with -close_fd_mask=3.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <doca_argp.h>
#include <doca_log.h>

#include "json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* json.c's bound; a deeper accepted document is a bug. */
#define MAX_DEPTH 64

static int json_fd = -1;
static char json_path[64];

/* ---- the reader alone ---------------------------------------------------- */

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_argp_json: %s\n", what);
	abort();
}

/* Valid UTF-8, no overlong forms, no surrogates, nothing past U+10FFFF. */
static bool utf8_valid(const unsigned char *s)
{
	while (*s != '\0') {
		uint32_t cp;
		int n;

		if (*s < 0x80) {
			s++;
			continue;
		}
		if (*s >= 0xc2 && *s <= 0xdf) {
			cp = *s & 0x1f;
			n = 1;
		} else if (*s >= 0xe0 && *s <= 0xef) {
			cp = *s & 0x0f;
			n = 2;
		} else if (*s >= 0xf0 && *s <= 0xf4) {
			cp = *s & 0x07;
			n = 3;
		} else {
			return false;
		}
		for (int i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += n + 1;
	}
	return true;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool number_valid(const char *s)
{
	size_t n;

	if (*s == '-')
		s++;
	n = strspn(s, "0123456789");
	if (n == 0 || (s[0] == '0' && n > 1))
		return false;
	s += n;
	if (*s == '.') {
		n = strspn(++s, "0123456789");
		if (n == 0)
			return false;
		s += n;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		n = strspn(s, "0123456789");
		if (n == 0)
			return false;
		s += n;
	}
	return *s == '\0';
}

static void check_value(const struct argp_json_value *v, unsigned int depth)
{
	if (depth > MAX_DEPTH + 1)
		broken("accepted a document nested deeper than the bound");
	if (v->line == 0 || v->col == 0)
		broken("a value without a position");
	if (strcmp(argp_json_type_name(v->type), "unknown") == 0)
		broken("a value of no known type");
	switch (v->type) {
	case ARGP_JSON_NUMBER:
		if (!number_valid(v->u.text))
			broken("a number outside JSON's grammar");
		break;
	case ARGP_JSON_STRING:
		if (!utf8_valid((const unsigned char *)v->u.text))
			broken("a string that is not valid UTF-8");
		break;
	case ARGP_JSON_ARRAY:
		for (size_t i = 0; i < v->u.array.count; i++)
			check_value(&v->u.array.items[i], depth + 1);
		break;
	case ARGP_JSON_OBJECT:
		for (size_t i = 0; i < v->u.object.count; i++) {
			if (!utf8_valid((const unsigned char *)v->u.object.members[i].key))
				broken("a key that is not valid UTF-8");
			for (size_t j = 0; j < i; j++)
				if (strcmp(v->u.object.members[i].key, v->u.object.members[j].key) == 0)
					broken("accepted an object with a key twice");
			check_value(&v->u.object.members[i].value, depth + 1);
		}
		break;
	default:
		break;
	}
}

static void fuzz_reader(const char *text, size_t len)
{
	char err[ARGP_JSON_ERR_SIZE];
	struct argp_json_value *root = NULL;
	doca_error_t status;

	memset(err, 'x', sizeof(err));
	status = argp_json_parse(text, len, &root, err);
	if (status != DOCA_SUCCESS) {
		if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			broken("a refusal without a NUL-terminated message");
		return;
	}
	check_value(root, 0);
	argp_json_free(root);
}

/* ---- a whole session ----------------------------------------------------- */

static doca_error_t take_string(void *param, void *config)
{
	size_t *total = config;

	*total += strlen(param);
	return DOCA_SUCCESS;
}

static doca_error_t take_int(void *param, void *config)
{
	size_t *total = config;

	*total += (size_t)*(int *)param;
	return DOCA_SUCCESS;
}

static doca_error_t take_double(void *param, void *config)
{
	size_t *total = config;

	*total += *(double *)param > 0;
	return DOCA_SUCCESS;
}

static doca_error_t take_bool(void *param, void *config)
{
	size_t *total = config;

	*total += *(bool *)param;
	return DOCA_SUCCESS;
}

/* The program owns a device argp opened for it. */
static doca_error_t take_device(void *param, void *config)
{
	struct doca_argp_device_ctx *d = param;

	(void)config;
	return doca_dev_close(d->dev);
}

static doca_error_t take_cmd(void *config)
{
	(void)config;
	return DOCA_SUCCESS;
}

static doca_error_t quiet_logger(enum doca_log_level level, const char *format, va_list args)
{
	(void)level;
	(void)format;
	(void)args;
	return DOCA_SUCCESS;
}

enum flag_opts {
	FLAG_MULTI = 1,
	FLAG_MANDATORY = 2,
	FLAG_CLI_ONLY = 4,
};

static struct doca_argp_param *flag(const char *short_name, const char *long_name, enum doca_argp_type type,
				    doca_argp_param_cb_t cb, unsigned int opts)
{
	struct doca_argp_param *p = NULL;

	if (doca_argp_param_create(&p) != DOCA_SUCCESS)
		broken("doca_argp_param_create failed");
	if (short_name != NULL)
		doca_argp_param_set_short_name(p, short_name);
	doca_argp_param_set_long_name(p, long_name);
	doca_argp_param_set_description(p, "a fuzzed flag");
	doca_argp_param_set_arguments(p, "<value>");
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, type);
	if (opts & FLAG_MULTI)
		doca_argp_param_set_multiplicity(p);
	if (opts & FLAG_MANDATORY)
		doca_argp_param_set_mandatory(p);
	if (opts & FLAG_CLI_ONLY)
		doca_argp_param_set_cli_only(p);
	return p;
}

static struct doca_argp_cmd *command(const char *name)
{
	struct doca_argp_cmd *c = NULL;

	if (doca_argp_cmd_create(&c) != DOCA_SUCCESS)
		broken("doca_argp_cmd_create failed");
	doca_argp_cmd_set_name(c, name);
	doca_argp_cmd_set_description(c, "a fuzzed command");
	doca_argp_cmd_set_callback(c, take_cmd);
	return c;
}

/* Flags of every type at the top, "get" with a mandatory flag and a
 * sub-command "deep" with flags of its own. */
static void register_flags(void)
{
	struct doca_argp_cmd *get = command("get");
	struct doca_argp_cmd *deep = command("deep");
	bool ok = true;

	ok &= doca_argp_register_param(flag("s", "str", DOCA_ARGP_TYPE_STRING, take_string, 0)) == DOCA_SUCCESS;
	ok &= doca_argp_register_param(flag("i", "int", DOCA_ARGP_TYPE_INT, take_int, 0)) == DOCA_SUCCESS;
	ok &= doca_argp_register_param(flag("d", "dbl", DOCA_ARGP_TYPE_DOUBLE, take_double, 0)) == DOCA_SUCCESS;
	ok &= doca_argp_register_param(flag("b", "flag", DOCA_ARGP_TYPE_BOOLEAN, take_bool, 0)) == DOCA_SUCCESS;
	ok &= doca_argp_register_param(flag("m", "multi", DOCA_ARGP_TYPE_STRING, take_string, FLAG_MULTI)) ==
	      DOCA_SUCCESS;
	ok &= doca_argp_register_param(flag("n", "nums", DOCA_ARGP_TYPE_INT, take_int, FLAG_MULTI)) == DOCA_SUCCESS;
	ok &= doca_argp_register_param(flag(NULL, "cli", DOCA_ARGP_TYPE_STRING, take_string, FLAG_CLI_ONLY)) ==
	      DOCA_SUCCESS;
	ok &= doca_argp_register_param(flag(NULL, "dev", DOCA_ARGP_TYPE_DEVICE, take_device, 0)) == DOCA_SUCCESS;
	ok &= doca_argp_cmd_register_param(get, flag("k", "key", DOCA_ARGP_TYPE_STRING, take_string,
						     FLAG_MANDATORY)) == DOCA_SUCCESS;
	ok &= doca_argp_cmd_register_param(deep, flag(NULL, "level", DOCA_ARGP_TYPE_DOUBLE, take_double,
						      FLAG_MULTI)) == DOCA_SUCCESS;
	ok &= doca_argp_cmd_register_cmd(get, deep) == DOCA_SUCCESS;
	ok &= doca_argp_register_cmd(get) == DOCA_SUCCESS;
	if (!ok)
		broken("registering the flags failed");
}

static void fuzz_session(const uint8_t *data, size_t size, bool lenient)
{
	char *argv[] = {"fuzz_argp_json", "-j", json_path, NULL};
	size_t total = 0;

	if (ftruncate(json_fd, 0) != 0 || pwrite(json_fd, data, size, 0) != (ssize_t)size)
		broken("cannot write the JSON file");
	if (doca_argp_init("fuzz_argp_json", &total) != DOCA_SUCCESS)
		broken("doca_argp_init failed");
	if (doca_argp_register_logger_callback(quiet_logger) != DOCA_SUCCESS)
		broken("doca_argp_register_logger_callback failed");
	if (lenient && doca_argp_disable_pedantic_config_parsing() != DOCA_SUCCESS)
		broken("doca_argp_disable_pedantic_config_parsing failed");
	register_flags();
	(void)doca_argp_start(3, argv);
	if (doca_argp_destroy() != DOCA_SUCCESS)
		broken("doca_argp_destroy failed");
	/* The file may set the levels ("log-level", "sdk-log-level"). */
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DISABLE);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Refusals are the expected outcome: keep the output quiet. */
	doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	doca_log_level_set_global_lower_limit(DOCA_LOG_LEVEL_DISABLE);
	/* The session reads a file by name: an anonymous one, reached
	 * through /proc, so nothing is left on disk. */
	json_fd = memfd_create("fuzz_argp_json", MFD_CLOEXEC);
	if (json_fd < 0)
		broken("memfd_create failed");
	snprintf(json_path, sizeof(json_path), "/proc/self/fd/%d", json_fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		fuzz_session(data + 1, size - 1, (data[0] & 2) != 0);
	else
		fuzz_reader((const char *)data + 1, size - 1);
	return 0;
}
