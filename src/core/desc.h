/*
 * softdoca — the header every softdoca export descriptor opens with (mmap,
 * sync event, PCI export), checked in one place. Not installed.
 *
 * Bytes 0..11, little-endian: magic (4), version (2), flags (2, must be 0),
 * total length (4). Each format names its magic, its newest version and
 * that version's length; the check logs under the caller's log source.
 */
#ifndef SOFTDOCA_CORE_DESC_H_
#define SOFTDOCA_CORE_DESC_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#define CORE_DESC_HEADER_LEN 12

struct core_desc_format {
	const char *magic;	 /* 4 bytes */
	uint32_t version;	 /* the newest this softdoca understands */
	uint32_t len;		 /* the length of that version */
	const char *what;	 /* in log lines: "mmap descriptor" */
	const char *magic_what; /* after "bad magic: not a softdoca ": "mmap export descriptor" */
	const int *log_source;	 /* the caller's sdk_log_source */
};

/* Check desc and out for NULL, then desc's header against fmt.
 * DOCA_ERROR_INVALID_VALUE (UNSUPPORTED_VERSION for a newer version) with
 * one log line saying what was wrong. */
doca_error_t core_desc_check_header(const void *desc, size_t desc_len, const void *out,
				    const struct core_desc_format *fmt);

#endif /* SOFTDOCA_CORE_DESC_H_ */
