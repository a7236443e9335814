/*
 * softdoca — DOCA Arg Parser.
 *
 * One process-wide session (doca_argp_init .. doca_argp_destroy) holds a
 * tree of commands: an implicit root whose flags are the program's flags,
 * and the commands the program registered, each with its own flags.
 *
 * doca_argp_start works in two passes. The scan turns the command line (or
 * the JSON file named by -j) into a list of tokens: flag + converted value,
 * or command word. Every syntax and value error is found there, before any
 * callback ran, so a bad command line has no side effects. The run then
 * calls the callbacks in command-line order, checks the mandatory flags of
 * the commands that were entered, and calls the validation callback.
 *
 * Messages for the person typing the command line go to the logger
 * callback if the program registered one, else to stderr; each is also an
 * SDK log line.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_version.h>

#include "json.h"
#include "log_internal.h"

SDK_LOG_REGISTER(ARGP)

#define ARGP_MSG_SIZE 256
/* Width of the flag column in the usage text. */
#define ARGP_USAGE_COLUMN 36

struct doca_argp_param {
	char *short_name;
	char *long_name;
	char *arguments;
	char *description;
	doca_argp_param_cb_t callback;
	enum doca_argp_type type;
	bool mandatory;
	bool cli_only;
	bool multiplicity;
	bool singular;
	bool inherited;
	bool hidden;
	bool registered;
	bool no_memory; /* a setter could not copy its string: registration fails */
	unsigned int seen; /* uses in the current doca_argp_start */
	struct doca_argp_cmd *owner;
	struct doca_argp_param *next; /* in owner's list, registration order */
	struct doca_argp_param *next_all; /* every param of the session */
};

struct doca_argp_cmd {
	char *name;
	char *description;
	doca_argp_cmd_cb_t callback;
	bool hidden;
	bool registered;
	bool no_memory;
	struct doca_argp_cmd *parent;
	struct doca_argp_param *params;
	struct doca_argp_cmd *children;
	struct doca_argp_cmd *next; /* sibling, registration order */
	struct doca_argp_cmd *next_all; /* every command of the session */
};

enum argp_builtin_id {
	ARGP_BUILTIN_HELP,
	ARGP_BUILTIN_VERSION,
	ARGP_BUILTIN_LOG_LEVEL,
	ARGP_BUILTIN_SDK_LOG_LEVEL,
	ARGP_BUILTIN_JSON,
};

struct argp_builtin {
	enum argp_builtin_id id;
	const char *short_name;
	const char *long_name;
	const char *arguments;
	const char *description;
	enum doca_argp_type type;
};

static const struct argp_builtin argp_builtins[] = {
	{ARGP_BUILTIN_HELP, "h", "help", NULL, "Print this help text and exit", DOCA_ARGP_TYPE_BOOLEAN},
	{ARGP_BUILTIN_VERSION, "v", "version", NULL, "Print the DOCA version and exit", DOCA_ARGP_TYPE_BOOLEAN},
	{ARGP_BUILTIN_LOG_LEVEL, "l", "log-level", "<level>",
	 "Program log level: 10=DISABLE 20=CRITICAL 30=ERROR 40=WARNING 50=INFO 60=DEBUG 70=TRACE",
	 DOCA_ARGP_TYPE_INT},
	{ARGP_BUILTIN_SDK_LOG_LEVEL, NULL, "sdk-log-level", "<level>",
	 "DOCA library log level, same values as --log-level", DOCA_ARGP_TYPE_INT},
	{ARGP_BUILTIN_JSON, "j", "json", "<path>", "Read every flag from a JSON object keyed by long flag names",
	 DOCA_ARGP_TYPE_STRING},
};

/* One unit of work found by the scan: a flag with its value, or a command. */
struct argp_token {
	struct doca_argp_param *param;
	const struct argp_builtin *builtin;
	struct doca_argp_cmd *cmd;
	bool skip; /* JSON "false" for a boolean flag: counted, callback not run */
	union {
		int i;
		double d;
		bool b;
		char *s;
	} v;
};

struct argp_tokens {
	struct argp_token *items;
	size_t count;
	size_t cap;
};

/* Strings handed to callbacks that must outlive doca_argp_start (devargs). */
struct argp_kept {
	struct argp_kept *next;
	char text[];
};

enum argp_action {
	ARGP_ACTION_PARSE,
	ARGP_ACTION_HELP,
	ARGP_ACTION_VERSION,
};

struct argp_state {
	bool initialized;
	bool started;
	unsigned long generation; /* tells a session from the next after destroy/init */
	char *program_name;
	void *config;
	struct doca_argp_cmd root;
	struct doca_argp_param *all_params;
	struct doca_argp_cmd *all_cmds;
	struct argp_kept *kept;
	doca_argp_param_cb_t version_cb;
	doca_argp_validation_cb_t validation_cb;
	doca_argp_dev_open_cb_t dev_open_cb;
	void *dev_open_ctx;
	doca_argp_logger_cb_t logger_cb;
	doca_argp_dpdk_cb_t dpdk_cb;
	bool lenient_json;
	/* First failed registration: doca_argp_start reports it and fails, so a
	 * program that ignored the error does not run without its flag. */
	doca_error_t register_status;
	char register_msg[ARGP_MSG_SIZE];
};

static struct argp_state g_argp;

/* Values given with -l / --sdk-log-level; kept apart from the session so
 * doca_argp_get_*log_level work without one. */
static bool argp_log_level_given;
static int argp_log_level;
static bool argp_sdk_log_level_given;
static int argp_sdk_log_level;

/* ---- Messages ------------------------------------------------------- */

static doca_error_t argp_logger_call(enum doca_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static doca_error_t argp_logger_call(enum doca_log_level level, const char *fmt, ...)
{
	doca_error_t status;
	va_list ap;

	va_start(ap, fmt);
	status = g_argp.logger_cb(level, fmt, ap);
	va_end(ap);
	return status;
}

static void argp_user_msg(enum doca_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A message for the person at the command line. */
static void argp_user_msg(enum doca_log_level level, const char *fmt, ...)
{
	char text[2 * ARGP_MSG_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (g_argp.logger_cb != NULL) {
		(void)argp_logger_call(level, "%s", text);
		return;
	}
	fprintf(stderr, "%s: %s\n", g_argp.program_name != NULL ? g_argp.program_name : "doca_argp", text);
}

/* A command-line error, said once: to the program's logger callback when
 * it registered one, otherwise as an SDK error line (stderr by default). */
#define ARGP_ERR(...) \
	do { \
		if (g_argp.logger_cb != NULL) \
			argp_user_msg(DOCA_LOG_LEVEL_ERROR, __VA_ARGS__); \
		else \
			SDK_LOG_ERR(__VA_ARGS__); \
	} while (0)

/* "-d/--device", "-x" or "--long", for messages. */
static const char *argp_label(const char *short_name, const char *long_name, char *buf, size_t size)
{
	if (short_name != NULL && long_name != NULL)
		snprintf(buf, size, "-%s/--%s", short_name, long_name);
	else if (short_name != NULL)
		snprintf(buf, size, "-%s", short_name);
	else
		snprintf(buf, size, "--%s", long_name != NULL ? long_name : "?");
	return buf;
}

static const char *argp_param_label(const struct doca_argp_param *p, char *buf, size_t size)
{
	return argp_label(p->short_name, p->long_name, buf, size);
}

static const char *argp_token_label(const struct argp_token *t, char *buf, size_t size)
{
	if (t->builtin != NULL)
		return argp_label(t->builtin->short_name, t->builtin->long_name, buf, size);
	return argp_param_label(t->param, buf, size);
}

static bool argp_alive(unsigned long generation)
{
	return g_argp.initialized && g_argp.generation == generation;
}

static doca_error_t argp_check_initialized(const char *what)
{
	if (g_argp.initialized)
		return DOCA_SUCCESS;
	SDK_LOG_ERR("%s: doca_argp_init was not called (or doca_argp_destroy was)", what);
	return DOCA_ERROR_BAD_STATE;
}

/* ---- Usage ---------------------------------------------------------- */

static const char *argp_type_placeholder(enum doca_argp_type type)
{
	switch (type) {
	case DOCA_ARGP_TYPE_STRING:
		return "<string>";
	case DOCA_ARGP_TYPE_INT:
		return "<int>";
	case DOCA_ARGP_TYPE_DOUBLE:
		return "<number>";
	case DOCA_ARGP_TYPE_DEVICE:
		return "<device>";
	case DOCA_ARGP_TYPE_DEVICE_REP:
		return "<representor>";
	default:
		return NULL;
	}
}

/* "-nc, --num-connections <num>" */
static void argp_flag_text(const char *short_name, const char *long_name, const char *arguments, char *buf,
			   size_t size)
{
	int n = 0;

	if (short_name != NULL)
		n = snprintf(buf, size, "-%s%s", short_name, long_name != NULL ? ", " : "");
	if (long_name != NULL && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, "--%s", long_name);
	if (arguments != NULL && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " %s", arguments);
}

static void argp_usage_line(FILE *out, int indent, const char *left, const char *description, const char *marks)
{
	int width = ARGP_USAGE_COLUMN - indent;
	int len = (int)strlen(left);

	/* A long flag text pushes its description to the next line. */
	if (len >= width)
		fprintf(out, "%*s%s\n%*s%s%s\n", indent, "", left, ARGP_USAGE_COLUMN + 2, "", description, marks);
	else
		fprintf(out, "%*s%-*s  %s%s\n", indent, "", width, left, description, marks);
}

static void argp_usage_param(FILE *out, int indent, const struct doca_argp_param *p)
{
	const char *arguments = p->arguments != NULL ? p->arguments : argp_type_placeholder(p->type);
	char left[ARGP_MSG_SIZE];
	char marks[64];

	argp_flag_text(p->short_name, p->long_name, arguments, left, sizeof(left));
	snprintf(marks, sizeof(marks), "%s%s", p->mandatory ? " [mandatory]" : "",
		 p->multiplicity ? " [repeatable]" : "");
	argp_usage_line(out, indent, left, p->description, marks);
}

static void argp_usage_params(FILE *out, int indent, const struct doca_argp_cmd *cmd)
{
	const struct doca_argp_param *p;

	for (p = cmd->params; p != NULL; p = p->next)
		if (!p->hidden)
			argp_usage_param(out, indent, p);
}

static bool argp_cmd_has_visible_children(const struct doca_argp_cmd *cmd)
{
	const struct doca_argp_cmd *c;

	for (c = cmd->children; c != NULL; c = c->next)
		if (!c->hidden)
			return true;
	return false;
}

/* Each command, its flags indented under it, then its sub-commands. */
static void argp_usage_cmds(FILE *out, int indent, const struct doca_argp_cmd *cmd)
{
	const struct doca_argp_cmd *c;

	for (c = cmd->children; c != NULL; c = c->next) {
		if (c->hidden)
			continue;
		argp_usage_line(out, indent, c->name, c->description, "");
		argp_usage_params(out, indent + 4, c);
		argp_usage_cmds(out, indent + 4, c);
	}
}

static void argp_usage_print(FILE *out)
{
	const struct argp_builtin *b;
	char left[ARGP_MSG_SIZE];
	size_t i;

	fprintf(out, "Usage: %s [DOCA flags] [program flags]%s\n\n",
		g_argp.program_name != NULL ? g_argp.program_name : "<program>",
		argp_cmd_has_visible_children(&g_argp.root) ? " <command> [command flags]" : "");
	fprintf(out, "DOCA flags:\n");
	for (i = 0; i < sizeof(argp_builtins) / sizeof(argp_builtins[0]); i++) {
		b = &argp_builtins[i];
		argp_flag_text(b->short_name, b->long_name, b->arguments, left, sizeof(left));
		argp_usage_line(out, 2, left, b->description, "");
	}
	if (g_argp.root.params != NULL) {
		fprintf(out, "\nProgram flags:\n");
		argp_usage_params(out, 2, &g_argp.root);
	}
	if (argp_cmd_has_visible_children(&g_argp.root)) {
		fprintf(out, "\nCommands:\n");
		argp_usage_cmds(out, 2, &g_argp.root);
	}
	fflush(out);
}

DOCA_EXPERIMENTAL
void doca_argp_usage(void)
{
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return;
	argp_usage_print(stdout);
}

/* ---- Objects: params and commands ------------------------------------ */

/* Replace *dst with a copy of src (NULL clears). The setters return void,
 * so a failed copy is remembered and fails the registration. */
static void argp_set_text(char **dst, const char *src, bool *no_memory)
{
	char *copy = NULL;

	if (src != NULL) {
		copy = strdup(src);
		if (copy == NULL) {
			SDK_LOG_ERR("out of memory copying \"%s\"", src);
			*no_memory = true;
			return;
		}
	}
	free(*dst);
	*dst = copy;
}

static void argp_param_release(struct doca_argp_param *p)
{
	free(p->short_name);
	free(p->long_name);
	free(p->arguments);
	free(p->description);
	free(p);
}

/* Free a param and forget it from the session list. */
static void argp_param_free(struct doca_argp_param *p)
{
	struct doca_argp_param **link;

	for (link = &g_argp.all_params; *link != NULL; link = &(*link)->next_all) {
		if (*link == p) {
			*link = p->next_all;
			break;
		}
	}
	argp_param_release(p);
}

static void argp_cmd_release(struct doca_argp_cmd *cmd)
{
	free(cmd->name);
	free(cmd->description);
	free(cmd);
}

/* Free an unregistered command with everything registered into it. */
static void argp_cmd_free_tree(struct doca_argp_cmd *cmd)
{
	struct doca_argp_cmd **link;
	struct doca_argp_param *p;
	struct doca_argp_cmd *c;

	while (cmd->params != NULL) {
		p = cmd->params;
		cmd->params = p->next;
		argp_param_free(p);
	}
	while (cmd->children != NULL) {
		c = cmd->children;
		cmd->children = c->next;
		argp_cmd_free_tree(c);
	}
	for (link = &g_argp.all_cmds; *link != NULL; link = &(*link)->next_all) {
		if (*link == cmd) {
			*link = cmd->next_all;
			break;
		}
	}
	argp_cmd_release(cmd);
}

/* Remember the first failed registration for doca_argp_start. */
static void argp_register_failed(doca_error_t status, const char *msg)
{
	SDK_LOG_ERR("%s", msg);
	if (g_argp.register_status != DOCA_SUCCESS)
		return;
	g_argp.register_status = status;
	snprintf(g_argp.register_msg, sizeof(g_argp.register_msg), "%s", msg);
}

/* Flag and command names: printable, no spaces, no leading '-', no '='. */
static bool argp_name_ok(const char *name)
{
	const unsigned char *c = (const unsigned char *)name;

	if (*c == '\0' || *c == '-')
		return false;
	for (; *c != '\0'; c++)
		if (!isgraph(*c) || *c == '=')
			return false;
	return true;
}

static bool argp_name_eq(const char *registered, const char *name, size_t len)
{
	return registered != NULL && strlen(registered) == len && memcmp(registered, name, len) == 0;
}

static const struct argp_builtin *argp_builtin_find(const char *name, size_t len, bool is_long)
{
	size_t i;

	for (i = 0; i < sizeof(argp_builtins) / sizeof(argp_builtins[0]); i++) {
		if (argp_name_eq(is_long ? argp_builtins[i].long_name : argp_builtins[i].short_name, name, len))
			return &argp_builtins[i];
	}
	return NULL;
}

static struct doca_argp_param *argp_cmd_find_param(const struct doca_argp_cmd *cmd, const char *name, size_t len,
						    bool is_long)
{
	struct doca_argp_param *p;

	for (p = cmd->params; p != NULL; p = p->next)
		if (argp_name_eq(is_long ? p->long_name : p->short_name, name, len))
			return p;
	return NULL;
}

/* A flag valid in scope: the command's own, then inherited ones above it. */
static struct doca_argp_param *argp_scope_find_param(const struct doca_argp_cmd *scope, const char *name,
						      size_t len, bool is_long)
{
	struct doca_argp_param *p = argp_cmd_find_param(scope, name, len, is_long);
	const struct doca_argp_cmd *up;

	for (up = scope->parent; p == NULL && up != NULL; up = up->parent) {
		p = argp_cmd_find_param(up, name, len, is_long);
		if (p != NULL && !p->inherited)
			p = NULL;
	}
	return p;
}

static struct doca_argp_cmd *argp_cmd_find_child(const struct doca_argp_cmd *cmd, const char *name)
{
	struct doca_argp_cmd *c;

	for (c = cmd->children; c != NULL; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* Is this name of a param free and well formed in cmd? */
static doca_error_t argp_param_check_name(const struct doca_argp_cmd *cmd, const char *name, bool is_long,
					  char *msg, size_t size)
{
	const char *dash = is_long ? "--" : "-";
	const struct argp_builtin *b;

	if (name == NULL)
		return DOCA_SUCCESS;
	if (!argp_name_ok(name)) {
		snprintf(msg, size, "flag name \"%s\" is malformed (no spaces, '=' or leading '-')", name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	b = argp_builtin_find(name, strlen(name), is_long);
	if (b != NULL) {
		snprintf(msg, size, "flag name %s%s is reserved for the built-in --%s", dash, name, b->long_name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (argp_cmd_find_param(cmd, name, strlen(name), is_long) != NULL) {
		snprintf(msg, size, "flag name %s%s is registered twice", dash, name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* Everything a param needs before it joins cmd. */
static doca_error_t argp_param_check(const struct doca_argp_cmd *cmd, const struct doca_argp_param *p, char *msg,
				     size_t size)
{
	char label[ARGP_MSG_SIZE / 2]; /* leaves room in msg for the text around it */
	doca_error_t status;

	if (p->no_memory) {
		snprintf(msg, size, "out of memory while setting up a flag");
		return DOCA_ERROR_NO_MEMORY;
	}
	if (p->short_name == NULL && p->long_name == NULL) {
		snprintf(msg, size, "a flag has neither a short nor a long name");
		return DOCA_ERROR_INITIALIZATION;
	}
	argp_param_label(p, label, sizeof(label));
	if (p->description == NULL || p->callback == NULL || p->type == DOCA_ARGP_TYPE_UNKNOWN) {
		snprintf(msg, size, "flag %s has no %s", label,
			 p->description == NULL ? "description" : p->callback == NULL ? "callback" : "type");
		return DOCA_ERROR_INITIALIZATION;
	}
	if (p->type < DOCA_ARGP_TYPE_STRING || p->type > DOCA_ARGP_TYPE_DOUBLE) {
		snprintf(msg, size, "flag %s has an unknown type %d", label, (int)p->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = argp_param_check_name(cmd, p->short_name, false, msg, size);
	if (status == DOCA_SUCCESS)
		status = argp_param_check_name(cmd, p->long_name, true, msg, size);
	return status;
}

/* Register p into cmd; argp owns p afterwards, also on failure. */
static doca_error_t argp_param_attach(struct doca_argp_cmd *cmd, struct doca_argp_param *p)
{
	char msg[ARGP_MSG_SIZE];
	struct doca_argp_param **link;
	doca_error_t status;

	if (g_argp.started) {
		snprintf(msg, sizeof(msg), "flags must be registered before doca_argp_start");
		status = DOCA_ERROR_BAD_STATE;
	} else if (cmd->registered && cmd != &g_argp.root) {
		snprintf(msg, sizeof(msg), "command \"%s\" is registered already: add its flags before",
			 cmd->name);
		status = DOCA_ERROR_BAD_STATE;
	} else {
		status = argp_param_check(cmd, p, msg, sizeof(msg));
	}
	if (status != DOCA_SUCCESS) {
		argp_register_failed(status, msg);
		argp_param_free(p);
		return status;
	}
	/* Without a long name there is no JSON key for it. */
	if (p->long_name == NULL)
		p->cli_only = true;
	for (link = &cmd->params; *link != NULL; link = &(*link)->next)
		;
	*link = p;
	p->owner = cmd;
	p->registered = true;
	return DOCA_SUCCESS;
}

/* Common entry checks of the two param registration calls. */
static doca_error_t argp_param_register_check(const struct doca_argp_param *p, const char *what)
{
	if (argp_check_initialized(what) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (p == NULL) {
		SDK_LOG_ERR("%s: NULL param", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (p->registered) {
		SDK_LOG_ERR("%s: param registered already", what);
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_cmd_check(const struct doca_argp_cmd *parent, const struct doca_argp_cmd *cmd, char *msg,
				   size_t size)
{
	if (g_argp.started) {
		snprintf(msg, size, "commands must be registered before doca_argp_start");
		return DOCA_ERROR_BAD_STATE;
	}
	if (parent == cmd) {
		snprintf(msg, size, "a command cannot be its own sub-command");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (parent->registered && parent != &g_argp.root) {
		snprintf(msg, size, "command \"%s\" is registered already: add its sub-commands before",
			 parent->name);
		return DOCA_ERROR_BAD_STATE;
	}
	if (cmd->no_memory) {
		snprintf(msg, size, "out of memory while setting up a command");
		return DOCA_ERROR_NO_MEMORY;
	}
	if (cmd->name == NULL || cmd->description == NULL) {
		snprintf(msg, size, "a command has no %s", cmd->name == NULL ? "name" : "description");
		return DOCA_ERROR_INITIALIZATION;
	}
	if (!argp_name_ok(cmd->name)) {
		snprintf(msg, size, "command name \"%s\" is malformed (no spaces, '=' or leading '-')", cmd->name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (argp_cmd_find_child(parent, cmd->name) != NULL) {
		snprintf(msg, size, "command \"%s\" is registered twice", cmd->name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* Register cmd under parent; argp owns cmd afterwards, also on failure. */
static doca_error_t argp_cmd_attach(struct doca_argp_cmd *parent, struct doca_argp_cmd *cmd, const char *what)
{
	char msg[ARGP_MSG_SIZE];
	struct doca_argp_cmd **link;
	doca_error_t status;

	if (argp_check_initialized(what) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (parent == NULL || cmd == NULL) {
		SDK_LOG_ERR("%s: NULL command", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cmd->registered) {
		SDK_LOG_ERR("%s: command \"%s\" registered already", what, cmd->name);
		return DOCA_ERROR_BAD_STATE;
	}
	status = argp_cmd_check(parent, cmd, msg, sizeof(msg));
	if (status != DOCA_SUCCESS) {
		argp_register_failed(status, msg);
		argp_cmd_free_tree(cmd);
		return status;
	}
	for (link = &parent->children; *link != NULL; link = &(*link)->next)
		;
	*link = cmd;
	cmd->parent = parent;
	cmd->registered = true;
	return DOCA_SUCCESS;
}

/* ---- Session -------------------------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_argp_init(const char *program_name, void *program_config)
{
	unsigned long generation = g_argp.generation + 1;
	char *name = NULL;

	if (g_argp.initialized) {
		SDK_LOG_ERR("doca_argp_init: already initialized; call doca_argp_destroy first");
		return DOCA_ERROR_BAD_STATE;
	}
	if (program_name != NULL) {
		name = strdup(program_name);
		if (name == NULL) {
			SDK_LOG_ERR("doca_argp_init: out of memory");
			return DOCA_ERROR_NO_MEMORY;
		}
	}
	memset(&g_argp, 0, sizeof(g_argp));
	g_argp.generation = generation;
	g_argp.program_name = name;
	g_argp.config = program_config;
	g_argp.root.registered = true;
	argp_log_level_given = false;
	argp_sdk_log_level_given = false;
	g_argp.initialized = true;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_destroy(void)
{
	unsigned long generation = g_argp.generation;
	struct doca_argp_param *p;
	struct doca_argp_cmd *c;
	struct argp_kept *k;

	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	/* The session lists hold every object, registered or not. */
	while (g_argp.all_params != NULL) {
		p = g_argp.all_params;
		g_argp.all_params = p->next_all;
		argp_param_release(p);
	}
	while (g_argp.all_cmds != NULL) {
		c = g_argp.all_cmds;
		g_argp.all_cmds = c->next_all;
		argp_cmd_release(c);
	}
	while (g_argp.kept != NULL) {
		k = g_argp.kept;
		g_argp.kept = k->next;
		free(k);
	}
	free(g_argp.program_name);
	memset(&g_argp, 0, sizeof(g_argp));
	g_argp.generation = generation;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_param(struct doca_argp_param *input_param)
{
	doca_error_t status = argp_param_register_check(input_param, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	return argp_param_attach(&g_argp.root, input_param);
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_cmd(struct doca_argp_cmd *input_cmd)
{
	return argp_cmd_attach(&g_argp.root, input_cmd, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback)
{
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (callback == NULL) {
		SDK_LOG_ERR("%s: NULL callback", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	g_argp.version_cb = callback;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback)
{
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (callback == NULL) {
		SDK_LOG_ERR("%s: NULL callback", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	g_argp.validation_cb = callback;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_dev_open_callback(doca_argp_dev_open_cb_t callback, void *usr_ctx)
{
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (callback == NULL) {
		SDK_LOG_ERR("%s: NULL callback", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	g_argp.dev_open_cb = callback;
	g_argp.dev_open_ctx = usr_ctx;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_logger_callback(doca_argp_logger_cb_t callback)
{
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (callback == NULL) {
		SDK_LOG_ERR("%s: NULL callback", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (g_argp.logger_cb != NULL) {
		SDK_LOG_ERR("%s: a logger callback is registered already", __func__);
		return DOCA_ERROR_ALREADY_EXIST;
	}
	g_argp.logger_cb = callback;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_disable_logger_callback(void)
{
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (g_argp.logger_cb == NULL) {
		SDK_LOG_ERR("%s: no logger callback is registered", __func__);
		return DOCA_ERROR_BAD_STATE;
	}
	g_argp.logger_cb = NULL;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
void doca_argp_set_dpdk_program(doca_argp_dpdk_cb_t callback)
{
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return;
	/* Remembered so doca_argp_start can refuse: there is no DPDK here. */
	g_argp.dpdk_cb = callback;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_disable_pedantic_config_parsing(void)
{
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	g_argp.lenient_json = true;
	return DOCA_SUCCESS;
}

static doca_error_t argp_level_get(bool given, int value, uint32_t global, int *log_level)
{
	if (log_level == NULL) {
		SDK_LOG_ERR("doca_argp_get_*log_level: NULL output");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*log_level = given ? value : (int)global;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_log_level(int *log_level)
{
	return argp_level_get(argp_log_level_given, argp_log_level, doca_log_level_get_global_lower_limit(),
			      log_level);
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_sdk_log_level(int *log_level)
{
	return argp_level_get(argp_sdk_log_level_given, argp_sdk_log_level, doca_log_level_get_global_sdk_limit(),
			      log_level);
}

/* ---- Param and command setters ---------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_create(struct doca_argp_param **param)
{
	struct doca_argp_param *p;

	if (param == NULL) {
		SDK_LOG_ERR("%s: NULL output", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	p->next_all = g_argp.all_params;
	g_argp.all_params = p;
	*param = p;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_destroy(struct doca_argp_param *param)
{
	if (param == NULL) {
		SDK_LOG_ERR("%s: NULL param", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (param->registered) {
		SDK_LOG_ERR("%s: param is registered; doca_argp_destroy frees it", __func__);
		return DOCA_ERROR_BAD_STATE;
	}
	argp_param_free(param);
	return DOCA_SUCCESS;
}

/* The setters have no error return: a NULL param is logged and ignored. */
#define ARGP_SETTER_GUARD(obj) \
	do { \
		if ((obj) == NULL) { \
			SDK_LOG_ERR("%s: NULL argument", __func__); \
			return; \
		} \
	} while (0)

DOCA_EXPERIMENTAL
void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name)
{
	ARGP_SETTER_GUARD(param);
	argp_set_text(&param->short_name, name, &param->no_memory);
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name)
{
	ARGP_SETTER_GUARD(param);
	argp_set_text(&param->long_name, name, &param->no_memory);
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments)
{
	ARGP_SETTER_GUARD(param);
	argp_set_text(&param->arguments, arguments, &param->no_memory);
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description)
{
	ARGP_SETTER_GUARD(param);
	argp_set_text(&param->description, description, &param->no_memory);
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback)
{
	ARGP_SETTER_GUARD(param);
	param->callback = callback;
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type)
{
	ARGP_SETTER_GUARD(param);
	param->type = type;
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_mandatory(struct doca_argp_param *param)
{
	ARGP_SETTER_GUARD(param);
	param->mandatory = true;
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_cli_only(struct doca_argp_param *param)
{
	ARGP_SETTER_GUARD(param);
	param->cli_only = true;
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_multiplicity(struct doca_argp_param *param)
{
	ARGP_SETTER_GUARD(param);
	param->multiplicity = true;
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_singular(struct doca_argp_param *param)
{
	ARGP_SETTER_GUARD(param);
	param->singular = true;
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_inherited(struct doca_argp_param *param)
{
	ARGP_SETTER_GUARD(param);
	param->inherited = true;
}

DOCA_EXPERIMENTAL
void doca_argp_param_set_hidden(struct doca_argp_param *param)
{
	ARGP_SETTER_GUARD(param);
	param->hidden = true;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_cmd_create(struct doca_argp_cmd **cmd)
{
	struct doca_argp_cmd *c;

	if (cmd == NULL) {
		SDK_LOG_ERR("%s: NULL output", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (argp_check_initialized(__func__) != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		SDK_LOG_ERR("%s: out of memory", __func__);
		return DOCA_ERROR_NO_MEMORY;
	}
	c->next_all = g_argp.all_cmds;
	g_argp.all_cmds = c;
	*cmd = c;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
void doca_argp_cmd_set_name(struct doca_argp_cmd *cmd, const char *name)
{
	ARGP_SETTER_GUARD(cmd);
	argp_set_text(&cmd->name, name, &cmd->no_memory);
}

DOCA_EXPERIMENTAL
void doca_argp_cmd_set_description(struct doca_argp_cmd *cmd, const char *description)
{
	ARGP_SETTER_GUARD(cmd);
	argp_set_text(&cmd->description, description, &cmd->no_memory);
}

DOCA_EXPERIMENTAL
void doca_argp_cmd_set_callback(struct doca_argp_cmd *cmd, doca_argp_cmd_cb_t callback)
{
	ARGP_SETTER_GUARD(cmd);
	cmd->callback = callback;
}

DOCA_EXPERIMENTAL
void doca_argp_cmd_set_hidden(struct doca_argp_cmd *cmd)
{
	ARGP_SETTER_GUARD(cmd);
	cmd->hidden = true;
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_cmd_register_param(struct doca_argp_cmd *cmd, struct doca_argp_param *input_param)
{
	doca_error_t status = argp_param_register_check(input_param, __func__);

	if (status != DOCA_SUCCESS)
		return status;
	if (cmd == NULL) {
		SDK_LOG_ERR("%s: NULL command", __func__);
		argp_param_free(input_param);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return argp_param_attach(cmd, input_param);
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_cmd_register_cmd(struct doca_argp_cmd *cmd, struct doca_argp_cmd *input_cmd)
{
	return argp_cmd_attach(cmd, input_cmd, __func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_cmd_destroy(struct doca_argp_cmd *cmd)
{
	if (cmd == NULL) {
		SDK_LOG_ERR("%s: NULL command", __func__);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (cmd->registered) {
		SDK_LOG_ERR("%s: command \"%s\" is registered; doca_argp_destroy frees it", __func__, cmd->name);
		return DOCA_ERROR_BAD_STATE;
	}
	argp_cmd_free_tree(cmd);
	return DOCA_SUCCESS;
}

/* ---- Values ----------------------------------------------------------- */

/* Decimal, or hexadecimal with 0x; the whole text, within int range. */
static doca_error_t argp_parse_int(const char *text, int *out, const char **why)
{
	const char *digits = text;
	long long value;
	char *end;
	int base = 10;

	if (*digits == '+' || *digits == '-')
		digits++;
	if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
		base = 16;
	/* strtoll alone would accept leading spaces and an empty number. */
	if (base == 16 ? !isxdigit((unsigned char)digits[2]) : !isdigit((unsigned char)digits[0])) {
		*why = "not an integer";
		return DOCA_ERROR_INVALID_VALUE;
	}
	errno = 0;
	value = strtoll(text, &end, base);
	if (*end != '\0') {
		*why = "not an integer";
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (errno == ERANGE || value < INT_MIN || value > INT_MAX) {
		*why = "out of the int range";
		return DOCA_ERROR_INVALID_VALUE;
	}
	*out = (int)value;
	return DOCA_SUCCESS;
}

static doca_error_t argp_parse_double(const char *text, double *out, const char **why)
{
	double value;
	char *end;

	if (*text == '\0' || isspace((unsigned char)*text)) {
		*why = "not a number";
		return DOCA_ERROR_INVALID_VALUE;
	}
	errno = 0;
	value = strtod(text, &end);
	if (*end != '\0') {
		*why = "not a number";
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (isinf(value) || isnan(value)) {
		*why = "not a finite number";
		return DOCA_ERROR_INVALID_VALUE;
	}
	*out = value;
	return DOCA_SUCCESS;
}

static doca_error_t argp_parse_bool(const char *text, bool *out, const char **why)
{
	if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0) {
		*out = true;
		return DOCA_SUCCESS;
	}
	if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0) {
		*out = false;
		return DOCA_SUCCESS;
	}
	*why = "not true or false";
	return DOCA_ERROR_INVALID_VALUE;
}

/* Convert a command-line word into the token's value. */
static doca_error_t argp_token_set_text(struct argp_token *t, enum doca_argp_type type, char *text)
{
	char label[ARGP_MSG_SIZE];
	const char *why = NULL;
	doca_error_t status = DOCA_SUCCESS;

	switch (type) {
	case DOCA_ARGP_TYPE_INT:
		status = argp_parse_int(text, &t->v.i, &why);
		break;
	case DOCA_ARGP_TYPE_DOUBLE:
		status = argp_parse_double(text, &t->v.d, &why);
		break;
	case DOCA_ARGP_TYPE_BOOLEAN:
		status = argp_parse_bool(text, &t->v.b, &why);
		t->skip = status == DOCA_SUCCESS && !t->v.b;
		break;
	default:
		t->v.s = text;
		break;
	}
	if (status != DOCA_SUCCESS)
		ARGP_ERR("flag %s: value \"%s\" is %s", argp_token_label(t, label, sizeof(label)), text, why);
	return status;
}

static bool argp_level_ok(int level)
{
	return level >= DOCA_LOG_LEVEL_DISABLE && level <= DOCA_LOG_LEVEL_TRACE && level % 10 == 0;
}

static doca_error_t argp_tokens_push(struct argp_tokens *toks, const struct argp_token *t)
{
	struct argp_token *grown;
	size_t cap;

	if (toks->count == toks->cap) {
		cap = toks->cap != 0 ? toks->cap * 2 : 16;
		grown = realloc(toks->items, cap * sizeof(*grown));
		if (grown == NULL) {
			SDK_LOG_ERR("doca_argp_start: out of memory");
			return DOCA_ERROR_NO_MEMORY;
		}
		toks->items = grown;
		toks->cap = cap;
	}
	toks->items[toks->count++] = *t;
	return DOCA_SUCCESS;
}

/* Checks shared by command-line and JSON flags, then keep the token. */
static doca_error_t argp_token_add(struct argp_tokens *toks, struct argp_token *t)
{
	char label[ARGP_MSG_SIZE];

	argp_token_label(t, label, sizeof(label));
	if (t->builtin != NULL && t->builtin->type == DOCA_ARGP_TYPE_INT && !argp_level_ok(t->v.i)) {
		ARGP_ERR("flag %s: %d is not a log level (10, 20, ... 70)", label, t->v.i);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (t->param != NULL && t->param->type == DOCA_ARGP_TYPE_DEVICE_REP) {
		ARGP_ERR("flag %s: representor flags (DOCA_ARGP_TYPE_DEVICE_REP) are not supported; "
			 "take a PCI address and use doca_devinfo_rep_create_list",
			 label);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (t->param != NULL && ++t->param->seen > 1 && !t->param->multiplicity) {
		ARGP_ERR("flag %s is given more than once", label);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return argp_tokens_push(toks, t);
}

/* ---- Scan: command line ------------------------------------------------ */

static bool argp_is_flag_word(const char *word)
{
	return word[0] == '-' && word[1] != '\0' && strcmp(word, "--") != 0;
}

/* Resolve "-name" / "--name[=value]" in scope; *eq gets the '=' or NULL. */
static bool argp_resolve_flag(const struct doca_argp_cmd *scope, char *word, struct argp_token *t, char **eq)
{
	bool is_long = word[1] == '-';
	char *name = word + (is_long ? 2 : 1);
	size_t len;

	*eq = is_long ? strchr(name, '=') : NULL;
	len = *eq != NULL ? (size_t)(*eq - name) : strlen(name);
	t->builtin = argp_builtin_find(name, len, is_long);
	if (t->builtin == NULL)
		t->param = argp_scope_find_param(scope, name, len, is_long);
	return t->builtin != NULL || t->param != NULL;
}

/* The next word is a value unless it is itself a flag of this scope. */
static bool argp_word_is_known_flag(const struct doca_argp_cmd *scope, char *word)
{
	struct argp_token probe = {0};
	char *eq;

	return argp_is_flag_word(word) && argp_resolve_flag(scope, word, &probe, &eq);
}

/* One flag at argv[*i]; *i moves past it and its value. */
static doca_error_t argp_scan_flag(int argc, char **argv, int *i, const struct doca_argp_cmd *scope,
				   struct argp_tokens *toks)
{
	char label[ARGP_MSG_SIZE];
	struct argp_token t = {0};
	enum doca_argp_type type;
	char *word = argv[*i];
	doca_error_t status;
	char *value;
	char *eq;

	if (!argp_resolve_flag(scope, word, &t, &eq)) {
		ARGP_ERR("unknown flag \"%.*s\"", eq != NULL ? (int)(eq - word) : (int)strlen(word), word);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	type = t.builtin != NULL ? t.builtin->type : t.param->type;
	(*i)++;
	if (type == DOCA_ARGP_TYPE_BOOLEAN && eq == NULL) {
		t.v.b = true;
		return argp_token_add(toks, &t);
	}
	if (eq != NULL) {
		value = eq + 1;
	} else if (*i < argc && argv[*i] != NULL && !argp_word_is_known_flag(scope, argv[*i])) {
		value = argv[*i];
		(*i)++;
	} else {
		ARGP_ERR("flag %s needs a value", argp_token_label(&t, label, sizeof(label)));
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = argp_token_set_text(&t, type, value);
	if (status != DOCA_SUCCESS)
		return status;
	return argp_token_add(toks, &t);
}

/* A word that is not a flag: a command of the current scope. */
static doca_error_t argp_scan_word(const char *word, struct doca_argp_cmd **scope, struct argp_tokens *toks)
{
	struct argp_token t = {0};

	t.cmd = argp_cmd_find_child(*scope, word);
	if (t.cmd == NULL) {
		if (strcmp(word, "--") == 0)
			ARGP_ERR("unexpected \"--\": this program takes no arguments after its flags");
		else if (*scope != &g_argp.root)
			ARGP_ERR("unexpected argument \"%s\" after command \"%s\"", word, (*scope)->name);
		else if ((*scope)->children != NULL)
			ARGP_ERR("unexpected argument \"%s\": not a command", word);
		else
			ARGP_ERR("unexpected argument \"%s\": flags start with '-' or '--'", word);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*scope = t.cmd;
	return argp_tokens_push(toks, &t);
}

/* Tokens from argv; stops early at -h or -v, which set *action. */
static doca_error_t argp_scan_cli(int argc, char **argv, struct argp_tokens *toks, enum argp_action *action)
{
	struct doca_argp_cmd *scope = &g_argp.root;
	const struct argp_token *last;
	doca_error_t status;
	int i = 1;

	while (i < argc) {
		if (argv[i] == NULL) {
			SDK_LOG_ERR("doca_argp_start: argv[%d] is NULL", i);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (argp_is_flag_word(argv[i]))
			status = argp_scan_flag(argc, argv, &i, scope, toks);
		else
			status = argp_scan_word(argv[i++], &scope, toks);
		if (status != DOCA_SUCCESS)
			return status;
		last = &toks->items[toks->count - 1];
		if (last->builtin == NULL || last->skip)
			continue;
		if (last->builtin->id == ARGP_BUILTIN_HELP) {
			*action = ARGP_ACTION_HELP;
			return DOCA_SUCCESS;
		}
		if (last->builtin->id == ARGP_BUILTIN_VERSION) {
			*action = ARGP_ACTION_VERSION;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_SUCCESS;
}

/* ---- Scan: JSON file ----------------------------------------------------- */

/* Value of a JSON member for a flag of the given type. */
static doca_error_t argp_json_value(const char *path, const char *key, enum doca_argp_type type,
				    const struct argp_json_value *v, struct argp_token *t)
{
	enum argp_json_type want = ARGP_JSON_STRING;
	const char *why = NULL;
	doca_error_t status;

	if (type == DOCA_ARGP_TYPE_INT || type == DOCA_ARGP_TYPE_DOUBLE)
		want = ARGP_JSON_NUMBER;
	else if (type == DOCA_ARGP_TYPE_BOOLEAN)
		want = ARGP_JSON_BOOL;
	if (v->type != want) {
		ARGP_ERR("JSON file %s: line %u, column %u: \"%s\" wants a %s, not a %s", path, v->line, v->col, key,
			 argp_json_type_name(want), argp_json_type_name(v->type));
		return DOCA_ERROR_INVALID_VALUE;
	}
	switch (type) {
	case DOCA_ARGP_TYPE_INT:
		status = argp_parse_int(v->u.text, &t->v.i, &why);
		break;
	case DOCA_ARGP_TYPE_DOUBLE:
		status = argp_parse_double(v->u.text, &t->v.d, &why);
		break;
	case DOCA_ARGP_TYPE_BOOLEAN:
		t->v.b = v->u.boolean;
		/* "false" means "not given": callbacks of flags set a fixed true. */
		t->skip = !v->u.boolean;
		return DOCA_SUCCESS;
	default:
		t->v.s = v->u.text;
		return DOCA_SUCCESS;
	}
	if (status != DOCA_SUCCESS)
		ARGP_ERR("JSON file %s: line %u, column %u: \"%s\": %s is %s", path, v->line, v->col, key, v->u.text,
			 why);
	return status;
}

/* A JSON member naming a flag: one token, or one per array item. */
static doca_error_t argp_json_flag(const char *path, const struct argp_json_member *m, struct argp_token *proto,
				   struct argp_tokens *toks)
{
	enum doca_argp_type type = proto->builtin != NULL ? proto->builtin->type : proto->param->type;
	const struct argp_json_value *v = &m->value;
	struct argp_token t;
	doca_error_t status;
	size_t i;

	if (v->type != ARGP_JSON_ARRAY) {
		t = *proto;
		status = argp_json_value(path, m->key, type, v, &t);
		return status != DOCA_SUCCESS ? status : argp_token_add(toks, &t);
	}
	if (proto->param == NULL || !proto->param->multiplicity) {
		ARGP_ERR("JSON file %s: line %u, column %u: \"%s\" takes one value, not an array", path, v->line,
			 v->col, m->key);
		return DOCA_ERROR_INVALID_VALUE;
	}
	for (i = 0; i < v->u.array.count; i++) {
		t = *proto;
		status = argp_json_value(path, m->key, type, &v->u.array.items[i], &t);
		if (status == DOCA_SUCCESS)
			status = argp_token_add(toks, &t);
		if (status != DOCA_SUCCESS)
			return status;
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_json_object(const char *path, const struct argp_json_value *obj,
				     struct doca_argp_cmd *scope, struct argp_tokens *toks);

/* Older DOCA configuration files grouped flags under these keys. */
static bool argp_json_is_section(const char *key)
{
	return strcmp(key, "doca_general_flags") == 0 || strcmp(key, "doca_program_flags") == 0;
}

/* Was a command of scope chosen already? The command line allows one. */
static bool argp_tokens_entered(const struct argp_tokens *toks, const struct doca_argp_cmd *scope)
{
	size_t i;

	for (i = 0; i < toks->count; i++)
		if (toks->items[i].cmd != NULL && toks->items[i].cmd->parent == scope)
			return true;
	return false;
}

/* A JSON member that is not a flag: a command's object, or a section. */
static doca_error_t argp_json_nested(const char *path, const struct argp_json_member *m,
				     struct doca_argp_cmd *scope, struct argp_tokens *toks)
{
	const struct argp_json_value *v = &m->value;
	struct argp_token t = {0};
	doca_error_t status;

	if (argp_json_is_section(m->key))
		return argp_json_object(path, v, scope, toks);
	t.cmd = argp_cmd_find_child(scope, m->key);
	if (argp_tokens_entered(toks, scope)) {
		ARGP_ERR("JSON file %s: line %u, column %u: command \"%s\": only one command may be chosen", path,
			 v->line, v->col, m->key);
		return DOCA_ERROR_INVALID_VALUE;
	}
	status = argp_tokens_push(toks, &t);
	if (status != DOCA_SUCCESS)
		return status;
	return argp_json_object(path, v, t.cmd, toks);
}

static doca_error_t argp_json_member(const char *path, const struct argp_json_member *m,
				     struct doca_argp_cmd *scope, struct argp_tokens *toks)
{
	const struct argp_json_value *v = &m->value;
	struct argp_token t = {0};
	size_t len = strlen(m->key);

	t.builtin = argp_builtin_find(m->key, len, true);
	if (t.builtin != NULL && t.builtin->id != ARGP_BUILTIN_LOG_LEVEL &&
	    t.builtin->id != ARGP_BUILTIN_SDK_LOG_LEVEL) {
		ARGP_ERR("JSON file %s: line %u, column %u: \"%s\" cannot be used in a JSON file", path, v->line,
			 v->col, m->key);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (t.builtin == NULL)
		t.param = argp_scope_find_param(scope, m->key, len, true);
	if (t.param != NULL && t.param->cli_only) {
		ARGP_ERR("JSON file %s: line %u, column %u: flag --%s is accepted on the command line only", path,
			 v->line, v->col, m->key);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (t.builtin != NULL || t.param != NULL)
		return argp_json_flag(path, m, &t, toks);
	if (v->type == ARGP_JSON_OBJECT && (argp_json_is_section(m->key) || argp_cmd_find_child(scope, m->key)))
		return argp_json_nested(path, m, scope, toks);
	if (g_argp.lenient_json) {
		SDK_LOG_WARN("JSON file %s: line %u, column %u: ignoring unknown key \"%s\"", path, v->line, v->col,
			     m->key);
		return DOCA_SUCCESS;
	}
	ARGP_ERR("JSON file %s: line %u, column %u: unknown key \"%s\" (keys are long flag names)", path, v->line,
		 v->col, m->key);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t argp_json_object(const char *path, const struct argp_json_value *obj,
				     struct doca_argp_cmd *scope, struct argp_tokens *toks)
{
	doca_error_t status;
	size_t i;

	for (i = 0; i < obj->u.object.count; i++) {
		status = argp_json_member(path, &obj->u.object.members[i], scope, toks);
		if (status != DOCA_SUCCESS)
			return status;
	}
	return DOCA_SUCCESS;
}

/* When -j was given, replace the tokens by the file's. */
static doca_error_t argp_json_expand(struct argp_tokens *toks, struct argp_json_value **doc)
{
	char err[ARGP_JSON_ERR_SIZE];
	const char *path = NULL;
	doca_error_t status;
	size_t i;

	for (i = 0; i < toks->count; i++)
		if (toks->items[i].builtin != NULL && toks->items[i].builtin->id == ARGP_BUILTIN_JSON)
			path = toks->items[i].v.s;
	if (path == NULL)
		return DOCA_SUCCESS;
	if (toks->count > 1) {
		ARGP_ERR("-j/--json reads every flag from the file: give no other flags or commands with it");
		return DOCA_ERROR_INVALID_VALUE;
	}
	toks->count = 0; /* path points into argv, not into the tokens */
	status = argp_json_parse_file(path, doc, err);
	if (status != DOCA_SUCCESS) {
		ARGP_ERR("JSON file %s: %s", path, err);
		return status;
	}
	if ((*doc)->type != ARGP_JSON_OBJECT) {
		ARGP_ERR("JSON file %s: the top level is a %s; it must be an object keyed by long flag names", path,
			 argp_json_type_name((*doc)->type));
		return DOCA_ERROR_INVALID_VALUE;
	}
	return argp_json_object(path, *doc, &g_argp.root, toks);
}

/* ---- Run ------------------------------------------------------------------ */

static doca_error_t argp_check_singular(const struct argp_tokens *toks)
{
	const struct argp_token *single = NULL;
	char label[ARGP_MSG_SIZE];
	size_t flags = 0;
	size_t i;

	for (i = 0; i < toks->count; i++) {
		if (toks->items[i].cmd != NULL)
			continue;
		flags++;
		if (toks->items[i].param != NULL && toks->items[i].param->singular)
			single = &toks->items[i];
	}
	if (single == NULL || flags == 1)
		return DOCA_SUCCESS;
	ARGP_ERR("flag %s must be given alone", argp_token_label(single, label, sizeof(label)));
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t argp_run_builtin(const struct argp_token *t)
{
	char label[ARGP_MSG_SIZE];
	doca_error_t status;

	switch (t->builtin->id) {
	case ARGP_BUILTIN_LOG_LEVEL:
		status = doca_log_level_set_global_lower_limit((uint32_t)t->v.i);
		if (status == DOCA_SUCCESS) {
			argp_log_level_given = true;
			argp_log_level = t->v.i;
		}
		break;
	case ARGP_BUILTIN_SDK_LOG_LEVEL:
		status = doca_log_level_set_global_sdk_limit((uint32_t)t->v.i);
		if (status == DOCA_SUCCESS) {
			argp_sdk_log_level_given = true;
			argp_sdk_log_level = t->v.i;
		}
		break;
	default:
		return DOCA_SUCCESS; /* help, version, json were handled by the scan */
	}
	if (status != DOCA_SUCCESS)
		ARGP_ERR("flag %s: cannot set level %d: %s", argp_token_label(t, label, sizeof(label)), t->v.i,
			 doca_error_get_descr(status));
	return status;
}

/* Keep a copy of text until doca_argp_destroy. */
static doca_error_t argp_keep(const char *text, const char **kept_out)
{
	size_t len = strlen(text);
	struct argp_kept *k = malloc(sizeof(*k) + len + 1);

	if (k == NULL) {
		SDK_LOG_ERR("doca_argp_start: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	memcpy(k->text, text, len + 1);
	k->next = g_argp.kept;
	g_argp.kept = k;
	*kept_out = k->text;
	return DOCA_SUCCESS;
}

/* "0000:03:00.0" or "03:00.0": only such text is compared as an address,
 * so device names never reach the PCI parser (which logs bad addresses). */
static bool argp_looks_like_pci(const char *name)
{
	return strspn(name, "0123456789abcdefABCDEF:.") == strlen(name) && strchr(name, ':') != NULL &&
	       strchr(name, '.') != NULL;
}

static bool argp_devinfo_matches(struct doca_devinfo *devinfo, const char *name)
{
	char buf[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint8_t equal = 0;

	if (doca_devinfo_get_ibdev_name(devinfo, buf, DOCA_DEVINFO_IBDEV_NAME_SIZE) == DOCA_SUCCESS &&
	    strcmp(buf, name) == 0)
		return true;
	if (doca_devinfo_get_iface_name(devinfo, buf, sizeof(buf)) == DOCA_SUCCESS && strcmp(buf, name) == 0)
		return true;
	return argp_looks_like_pci(name) && doca_devinfo_is_equal_pci_addr(devinfo, name, &equal) == DOCA_SUCCESS &&
	       equal != 0;
}

/* Open the first device whose ibdev name, interface name or PCI address is
 * name, with the program's dev-open callback when it registered one. */
static doca_error_t argp_device_open(const char *label, const char *name, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	doca_error_t status;
	uint32_t count;
	uint32_t i;

	status = doca_devinfo_create_list(&list, &count);
	if (status != DOCA_SUCCESS) {
		ARGP_ERR("flag %s: cannot list devices: %s", label, doca_error_get_descr(status));
		return status;
	}
	for (i = 0; i < count && !argp_devinfo_matches(list[i], name); i++)
		;
	if (i == count) {
		ARGP_ERR("flag %s: no device \"%s\" (give an RDMA device name, an interface name or a PCI address)",
			 label, name);
		status = DOCA_ERROR_NOT_FOUND;
		goto destroy_list;
	}
	if (g_argp.dev_open_cb != NULL)
		status = g_argp.dev_open_cb(list[i], g_argp.dev_open_ctx, dev);
	else
		status = doca_dev_open(list[i], dev);
	if (status != DOCA_SUCCESS)
		ARGP_ERR("flag %s: cannot open device \"%s\": %s", label, name, doca_error_get_descr(status));
destroy_list:
	doca_devinfo_destroy_list(list);
	return status;
}

/* "name[,devargs]" into an opened device and its devargs. */
static doca_error_t argp_device_ctx_fill(const char *label, const char *value, struct doca_argp_device_ctx *ctx)
{
	const char *comma = strchr(value, ',');
	size_t len = comma != NULL ? (size_t)(comma - value) : strlen(value);
	char name[DOCA_DEVINFO_IFACE_NAME_SIZE];
	doca_error_t status;

	if (len == 0 || len >= sizeof(name)) {
		ARGP_ERR("flag %s: \"%s\" is not a device name", label, value);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(name, value, len);
	name[len] = '\0';
	if (comma != NULL) {
		status = argp_keep(comma + 1, &ctx->devargs);
		if (status != DOCA_SUCCESS)
			return status;
	}
	return argp_device_open(label, name, &ctx->dev);
}

/* Call a flag's callback with its value in the type's form. */
static doca_error_t argp_run_param(const struct argp_token *t, unsigned long generation)
{
	struct doca_argp_device_ctx dev_ctx = {0};
	const struct doca_argp_param *p = t->param;
	char label[ARGP_MSG_SIZE];
	doca_error_t status;
	void *value;
	double d;
	bool b;
	int i;

	/* Copied first: the callback may destroy the session and p with it. */
	argp_param_label(p, label, sizeof(label));
	switch (p->type) {
	case DOCA_ARGP_TYPE_INT:
		i = t->v.i;
		value = &i;
		break;
	case DOCA_ARGP_TYPE_DOUBLE:
		d = t->v.d;
		value = &d;
		break;
	case DOCA_ARGP_TYPE_BOOLEAN:
		b = t->v.b;
		value = &b;
		break;
	case DOCA_ARGP_TYPE_DEVICE:
		status = argp_device_ctx_fill(label, t->v.s, &dev_ctx);
		if (status != DOCA_SUCCESS)
			return status;
		value = &dev_ctx;
		break;
	default:
		value = t->v.s;
		break;
	}
	status = p->callback(value, g_argp.config);
	if (status != DOCA_SUCCESS && argp_alive(generation))
		ARGP_ERR("flag %s: the program refused the value: %s", label, doca_error_get_descr(status));
	return status;
}

static doca_error_t argp_run_cmd(const struct doca_argp_cmd *cmd, unsigned long generation)
{
	char name[ARGP_MSG_SIZE];
	doca_error_t status;

	if (cmd->callback == NULL)
		return DOCA_SUCCESS;
	snprintf(name, sizeof(name), "%s", cmd->name);
	status = cmd->callback(g_argp.config);
	if (status != DOCA_SUCCESS && argp_alive(generation))
		ARGP_ERR("command \"%s\" failed: %s", name, doca_error_get_descr(status));
	return status;
}

/* Callbacks in command-line order; stops at the first error. */
static doca_error_t argp_run(const struct argp_tokens *toks, unsigned long generation)
{
	const struct argp_token *t;
	doca_error_t status;
	size_t i;

	for (i = 0; i < toks->count; i++) {
		t = &toks->items[i];
		if (t->skip)
			continue;
		if (t->cmd != NULL)
			status = argp_run_cmd(t->cmd, generation);
		else if (t->builtin != NULL)
			status = argp_run_builtin(t);
		else
			status = argp_run_param(t, generation);
		if (!argp_alive(generation)) {
			SDK_LOG_ERR("doca_argp_start: a callback called doca_argp_destroy; parsing stopped");
			return status != DOCA_SUCCESS ? status : DOCA_ERROR_BAD_STATE;
		}
		if (status != DOCA_SUCCESS)
			return status;
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_check_mandatory_cmd(const struct doca_argp_cmd *cmd)
{
	char label[ARGP_MSG_SIZE];
	doca_error_t status = DOCA_SUCCESS;
	const struct doca_argp_param *p;

	for (p = cmd->params; p != NULL; p = p->next) {
		if (p->mandatory && p->seen == 0) {
			ARGP_ERR("missing mandatory flag %s", argp_param_label(p, label, sizeof(label)));
			status = DOCA_ERROR_INVALID_VALUE;
		}
	}
	return status;
}

/* Mandatory flags of the root and of every command that was entered. */
static doca_error_t argp_check_mandatory(const struct argp_tokens *toks)
{
	doca_error_t status = argp_check_mandatory_cmd(&g_argp.root);
	size_t i;

	for (i = 0; i < toks->count; i++)
		if (toks->items[i].cmd != NULL)
			DOCA_ERROR_PROPAGATE(status, argp_check_mandatory_cmd(toks->items[i].cmd));
	return status;
}

static doca_error_t argp_validate(unsigned long generation)
{
	doca_error_t status;

	if (g_argp.validation_cb == NULL)
		return DOCA_SUCCESS;
	status = g_argp.validation_cb(g_argp.config);
	if (status != DOCA_SUCCESS && argp_alive(generation))
		ARGP_ERR("the program's checks of its flags failed: %s", doca_error_get_descr(status));
	return status;
}

/* ---- Start ------------------------------------------------------------ */

static void argp_print_version(void)
{
	printf("%s\n", g_argp.program_name);
	printf("DOCA SDK version (compiled): %s\n", DOCA_VERSION_STRING);
	printf("DOCA SDK version (runtime):  %s\n", doca_version_runtime());
	printf("softdoca version:            %s\n", SOFTDOCA_VERSION_STRING);
}

/* -h and -v end the program, as in DOCA. */
static void argp_exit_success(unsigned long generation) __attribute__((noreturn));

static void argp_exit_success(unsigned long generation)
{
	fflush(stdout);
	if (argp_alive(generation))
		(void)doca_argp_destroy();
	exit(EXIT_SUCCESS);
}

/* Print the usage or the version and exit; returns only the error of a
 * failing version callback. */
static doca_error_t argp_act(enum argp_action action, unsigned long generation)
{
	doca_error_t status;

	if (action == ARGP_ACTION_HELP) {
		argp_usage_print(stdout);
		argp_exit_success(generation);
	}
	if (g_argp.version_cb == NULL) {
		argp_print_version();
		argp_exit_success(generation);
	}
	status = g_argp.version_cb(NULL, g_argp.config);
	if (status == DOCA_SUCCESS)
		argp_exit_success(generation);
	if (argp_alive(generation))
		ARGP_ERR("the version callback failed: %s", doca_error_get_descr(status));
	return status;
}

static doca_error_t argp_start_check(int argc, char **argv)
{
	if (argp_check_initialized("doca_argp_start") != DOCA_SUCCESS)
		return DOCA_ERROR_BAD_STATE;
	if (g_argp.started) {
		SDK_LOG_ERR("doca_argp_start: called twice; destroy and init again to parse another command line");
		return DOCA_ERROR_BAD_STATE;
	}
	if (argc < 0 || (argc > 0 && argv == NULL)) {
		SDK_LOG_ERR("doca_argp_start: argc %d with a NULL argv", argc);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

/* The program name for messages: doca_argp_init's, else argv[0]'s base name. */
static doca_error_t argp_set_program_name(int argc, char **argv)
{
	const char *name = NULL;
	const char *slash;

	if (g_argp.program_name != NULL)
		return DOCA_SUCCESS;
	if (argc > 0 && argv[0] != NULL) {
		slash = strrchr(argv[0], '/');
		name = slash != NULL ? slash + 1 : argv[0];
	}
	g_argp.program_name = strdup(name != NULL && *name != '\0' ? name : "program");
	if (g_argp.program_name == NULL) {
		SDK_LOG_ERR("doca_argp_start: out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

/* Errors known before looking at argv. */
static doca_error_t argp_preflight(void)
{
	if (g_argp.register_status != DOCA_SUCCESS) {
		ARGP_ERR("cannot parse the command line: %s", g_argp.register_msg);
		return g_argp.register_status;
	}
	if (g_argp.dpdk_cb != NULL) {
		ARGP_ERR("DPDK programs are not supported: softdoca has no DPDK");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

static doca_error_t argp_parse(int argc, char **argv, struct argp_tokens *toks, struct argp_json_value **doc,
			       unsigned long generation)
{
	enum argp_action action = ARGP_ACTION_PARSE;
	doca_error_t status;

	status = argp_preflight();
	if (status != DOCA_SUCCESS)
		return status;
	status = argp_scan_cli(argc, argv, toks, &action);
	if (status != DOCA_SUCCESS)
		return status;
	if (action != ARGP_ACTION_PARSE)
		return argp_act(action, generation);
	status = argp_json_expand(toks, doc);
	if (status != DOCA_SUCCESS)
		return status;
	status = argp_check_singular(toks);
	if (status != DOCA_SUCCESS)
		return status;
	status = argp_run(toks, generation);
	if (status != DOCA_SUCCESS)
		return status;
	status = argp_check_mandatory(toks);
	if (status != DOCA_SUCCESS)
		return status;
	return argp_validate(generation);
}

DOCA_EXPERIMENTAL
doca_error_t doca_argp_start(int argc, char **argv)
{
	struct argp_json_value *doc = NULL;
	struct argp_tokens toks = {0};
	unsigned long generation;
	doca_error_t status;

	status = argp_start_check(argc, argv);
	if (status != DOCA_SUCCESS)
		return status;
	generation = g_argp.generation;
	g_argp.started = true;
	status = argp_set_program_name(argc, argv);
	if (status == DOCA_SUCCESS)
		status = argp_parse(argc, argv, &toks, &doc, generation);
	/* The usage goes with every refused command line, unless a callback
	 * ended the session. */
	if (status != DOCA_SUCCESS && argp_alive(generation))
		argp_usage_print(stderr);
	free(toks.items);
	argp_json_free(doc);
	return status;
}
