/*
 * softdoca samples: the helpers every sample may share, whatever DOCA
 * library it shows. The RDMA samples build on these in
 * doca_rdma/rdma_common.h. Every function returns what went wrong (and
 * logs one line saying why); none exits the process.
 */
#ifndef SAMPLES_COMMON_H_
#define SAMPLES_COMMON_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_dev.h>
#include <doca_error.h>

#define SAMPLE_PATH_BUF 2048		  /* longest file path the helpers take, with its NUL */
#define SAMPLE_DESC_FILE_MAX (64 * 1024) /* a descriptor file larger than this is not one */

/* A device capability check, such as doca_rdma_cap_task_send_is_supported. */
typedef doca_error_t (*sample_cap_check_fn)(const struct doca_devinfo *devinfo);

/* Log as DOCA's samples do: the program's messages through the standard
 * backend, the library's warnings and errors on stderr. */
doca_error_t sample_log_init(void);

/* Log "Sample finished successfully" or "Sample finished with errors";
 * the process exit status that goes with it. */
int sample_report(doca_error_t result);

/* Copy a command-line value into dst[size]; too long is an error naming flag. */
doca_error_t sample_copy_arg(char *dst, size_t size, const char *value, const char *flag);

/* Seconds on a monotonic clock. */
double sample_now_sec(void);

/* The first `max` bytes at p as a printable C string, or NULL when no NUL. */
const char *sample_cstr(const void *p, size_t max);

/* Print a prompt and wait for Enter on standard input (closed input is an error). */
doca_error_t sample_prompt_enter(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Open the device whose ibdev name (first) or interface name is `name`;
 * a wrong name lists the devices there are. With cap_check, a device that
 * fails it is refused, naming cap_what ("RDMA send tasks").
 */
doca_error_t sample_open_device(const char *name, sample_cap_check_fn cap_check, const char *cap_what,
				struct doca_dev **dev);

/*
 * Write data to a new file at path: it appears whole or not at all, and
 * never replaces a file that is there. `what` names the data in messages.
 */
doca_error_t sample_file_write(const char *path, const void *data, size_t len, const char *what);

/*
 * Read the whole file at path (at most SAMPLE_DESC_FILE_MAX bytes) into a
 * malloc()ed buffer. `writer` names who should have written it ("sender").
 */
doca_error_t sample_file_read(const char *path, const char *what, const char *writer, void **data_out,
			      size_t *len_out);

#endif /* SAMPLES_COMMON_H_ */
