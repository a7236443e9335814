/*
 * softdoca — DOCA Arg Parser (libdoca_argp, pkg-config doca-argp).
 *
 * A program describes its flags once and lets argp read them:
 *
 *	doca_argp_init(NULL, &cfg);              name NULL: taken from argv[0]
 *	doca_argp_param_create(&p);              then the set_* calls below
 *	doca_argp_register_param(p);             argp owns p from here on
 *	doca_argp_start(argc, argv);             parse, run the callbacks
 *	...
 *	doca_argp_destroy();                     also after a failed start
 *
 * Flags are written "-short value" or "--long value" ("--long=value" works
 * too); a short name may have several letters ("-nc 2"). Every program also
 * gets the built-in flags -h/--help, -v/--version, -l/--log-level,
 * --sdk-log-level and -j/--json (read the flags from a JSON object keyed by
 * long names). Each flag's callback runs in command-line order with the
 * parsed value and the config pointer given to doca_argp_init; the value
 * pointer is valid only during the call, so callbacks copy what they keep.
 *
 * Thread rules: argp is one process-wide parser; call it from one thread.
 */
#ifndef DOCA_ARGP_H_
#define DOCA_ARGP_H_

#include <stdarg.h>

#include <doca_compat.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flag callback: param points at the parsed value (see enum doca_argp_type),
 * config is the pointer given to doca_argp_init. An error fails
 * doca_argp_start with that error. */
typedef doca_error_t (*doca_argp_param_cb_t)(void *param, void *config);

/* Command callback: runs with the config when its command is chosen. */
typedef doca_error_t (*doca_argp_cmd_cb_t)(void *config);

/* Receives the DPDK part of the command line. */
typedef doca_error_t (*doca_argp_dpdk_cb_t)(int argc, char **argv);

/* Runs once after every flag was parsed, with the config. */
typedef doca_error_t (*doca_argp_validation_cb_t)(void *config);

/* Opens the device a DEVICE flag named, in place of doca_dev_open. */
typedef doca_error_t (*doca_argp_dev_open_cb_t)(struct doca_devinfo *devinfo, void *usr_ctx, struct doca_dev **dev);

/* Receives argp's messages for the user (errors about the command line). */
typedef doca_error_t (*doca_argp_logger_cb_t)(enum doca_log_level level, const char *format, va_list args);

/* What a flag's value is, and what its callback's param points at. */
enum doca_argp_type {
	DOCA_ARGP_TYPE_UNKNOWN = 0,
	DOCA_ARGP_TYPE_STRING = 1, /* char *: NUL-terminated text */
	DOCA_ARGP_TYPE_INT = 2, /* int * */
	DOCA_ARGP_TYPE_BOOLEAN = 3, /* bool *: a flag without value; true */
	DOCA_ARGP_TYPE_DEVICE = 4, /* struct doca_argp_device_ctx *: an opened device */
	DOCA_ARGP_TYPE_DEVICE_REP = 5, /* struct doca_argp_device_rep_ctx * */
	DOCA_ARGP_TYPE_DOUBLE = 6, /* double * */
};

/* One flag of the program. */
struct doca_argp_param;

/* One command ("prog get ...") with its own flags and sub-commands. */
struct doca_argp_cmd;

/* Value of a DEVICE flag. The device was opened for the program, which
 * closes it. devargs is the text after the first ',' of the value
 * ("mlx5_0,key=val"), or NULL; it stays valid until doca_argp_destroy. */
struct doca_argp_device_ctx {
	struct doca_dev *dev;
	const char *devargs;
};

/* Value of a DEVICE_REP flag: a representor and the device it belongs to. */
struct doca_argp_device_rep_ctx {
	struct doca_argp_device_ctx dev_ctx;
	struct doca_dev_rep *dev_rep;
};

/* Print the usage text (every flag and command that is not hidden) to
 * stdout. */
DOCA_EXPERIMENTAL
void doca_argp_usage(void);

/*
 * Start a parser session. program_name (may be NULL: argv[0]'s base name)
 * titles the usage; program_config is handed to every callback. Errors:
 * BAD_STATE (already initialized), NO_MEMORY.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_init(const char *program_name, void *program_config);

/*
 * Add a flag. argp owns the param from this call on, also when the call
 * fails. Errors: BAD_STATE (not initialized, already started, param already
 * registered), INITIALIZATION (no name, description, callback or type),
 * INVALID_VALUE (a name already taken, or malformed), NO_MEMORY.
 * A failed registration also makes doca_argp_start fail.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_param(struct doca_argp_param *input_param);

/*
 * Add a top-level command. argp owns it from this call on. Errors as for
 * doca_argp_register_param (INITIALIZATION: no name or description).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_cmd(struct doca_argp_cmd *input_cmd);

/*
 * Replace what -v/--version does. The callback gets (NULL, config); a
 * callback that exits should call doca_argp_destroy first. When it returns
 * success the program exits with EXIT_SUCCESS, as after the built-in
 * version text. Errors: BAD_STATE (not initialized), INVALID_VALUE (NULL).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback);

/*
 * Run callback(config) once all flags were parsed and the mandatory ones
 * found; its error fails doca_argp_start. Errors: BAD_STATE, INVALID_VALUE.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback);

/*
 * Open DEVICE flags' devices with callback(devinfo, usr_ctx, &dev) instead
 * of doca_dev_open. The program closes what it opened. Errors: BAD_STATE,
 * INVALID_VALUE (NULL callback).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_dev_open_callback(doca_argp_dev_open_cb_t callback, void *usr_ctx);

/*
 * Send argp's messages for the user (command-line errors) to callback
 * instead of stderr. Errors: BAD_STATE, INVALID_VALUE, ALREADY_EXIST (one
 * is registered already).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_register_logger_callback(doca_argp_logger_cb_t callback);

/* Go back to stderr for argp's user messages. Errors: BAD_STATE (not
 * initialized, or no logger callback registered). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_disable_logger_callback(void);

/*
 * Parse argv (argv[0] is the program) and run the callbacks in command-line
 * order, then check the mandatory flags, then run the validation callback.
 * -h prints the usage and -v the version, then the program exits with
 * EXIT_SUCCESS. On a bad command line prints what is wrong and the usage,
 * and returns the error (the program still calls doca_argp_destroy).
 * Errors: BAD_STATE (not initialized, or started already), NOT_SUPPORTED
 * (unknown flag; DPDK programs; device representors), INVALID_VALUE (bad
 * or missing value, missing mandatory flag, flag repeated, malformed JSON),
 * IO_FAILED (JSON file unreadable), NOT_FOUND (no such device), NO_MEMORY,
 * or the error a callback returned.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_start(int argc, char **argv);

/*
 * End the session: free every param and command, registered or not, and
 * every string argp handed out. doca_argp_init may be called again after.
 * Errors: BAD_STATE (not initialized).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_destroy(void);

/* Mark the program as a DPDK program. softdoca has no DPDK: a later
 * doca_argp_start fails with NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
void doca_argp_set_dpdk_program(doca_argp_dpdk_cb_t callback);

/* Create an empty flag, to be filled with the setters and registered (or
 * destroyed). Errors: INVALID_VALUE (NULL), BAD_STATE (not initialized),
 * NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_create(struct doca_argp_param **param);

/* Name used as "-name"; may have several letters. At least one of the
 * short and long names is required. The setters copy their strings. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name);

/* Name used as "--name", and as the flag's key in a JSON file. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name);

/* Usage text for the value, e.g. "<IB device name>". */
DOCA_EXPERIMENTAL
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments);

/* Usage text for the flag (required). */
DOCA_EXPERIMENTAL
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description);

/* Function called with the flag's value (required). */
DOCA_EXPERIMENTAL
void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback);

/* Type of the flag's value (required). */
DOCA_EXPERIMENTAL
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type);

/* doca_argp_start fails when this flag is missing. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_mandatory(struct doca_argp_param *param);

/* The flag is refused in a JSON file (a flag without long name always is). */
DOCA_EXPERIMENTAL
void doca_argp_param_set_cli_only(struct doca_argp_param *param);

/* The flag may be given more than once (in JSON: an array of values);
 * without this a second use is an error. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_multiplicity(struct doca_argp_param *param);

/* The flag must be the only flag on the command line. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_singular(struct doca_argp_param *param);

/* A command's flag that stays valid in its sub-commands. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_inherited(struct doca_argp_param *param);

/* The flag works but is left out of the usage text. */
DOCA_EXPERIMENTAL
void doca_argp_param_set_hidden(struct doca_argp_param *param);

/* Free a param that was never registered. Errors: INVALID_VALUE (NULL),
 * BAD_STATE (registered: argp owns it). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_param_destroy(struct doca_argp_param *param);

/* Create an empty command. Errors: INVALID_VALUE, BAD_STATE, NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_cmd_create(struct doca_argp_cmd **cmd);

/* The word that selects the command (required). */
DOCA_EXPERIMENTAL
void doca_argp_cmd_set_name(struct doca_argp_cmd *cmd, const char *name);

/* Usage text for the command (required). */
DOCA_EXPERIMENTAL
void doca_argp_cmd_set_description(struct doca_argp_cmd *cmd, const char *description);

/* Called with the config when the command is chosen (optional). */
DOCA_EXPERIMENTAL
void doca_argp_cmd_set_callback(struct doca_argp_cmd *cmd, doca_argp_cmd_cb_t callback);

/* The command works but is left out of the usage text. */
DOCA_EXPERIMENTAL
void doca_argp_cmd_set_hidden(struct doca_argp_cmd *cmd);

/* Add a flag that is valid after the command's word. argp owns the param
 * from this call on. Errors as for doca_argp_register_param; BAD_STATE also
 * when cmd was registered already. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_cmd_register_param(struct doca_argp_cmd *cmd, struct doca_argp_param *input_param);

/* Add a sub-command. argp owns input_cmd from this call on. Errors:
 * BAD_STATE (either command registered already), INITIALIZATION,
 * INVALID_VALUE (name taken). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_cmd_register_cmd(struct doca_argp_cmd *cmd, struct doca_argp_cmd *input_cmd);

/* Free a command that was never registered, with its flags and
 * sub-commands. Errors: INVALID_VALUE, BAD_STATE (registered). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_cmd_destroy(struct doca_argp_cmd *cmd);

/* The level given with -l/--log-level, else the global lower limit.
 * Errors: INVALID_VALUE (NULL). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_log_level(int *log_level);

/* The level given with --sdk-log-level, else the global SDK limit.
 * Errors: INVALID_VALUE (NULL). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_sdk_log_level(int *log_level);

/* Ignore unknown keys in a JSON file instead of failing. Errors: BAD_STATE
 * (not initialized). */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_disable_pedantic_config_parsing(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ARGP_H_ */
