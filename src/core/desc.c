/*
 * softdoca — the common header of export descriptors (see desc.h).
 */
#include <string.h>

#include <doca_log.h>

#include "desc.h"

/* Log under the format's source, where the caller would have, and yield err. */
#define DESC_FAIL(fmt, err, ...) \
	((void)doca_log(DOCA_LOG_LEVEL_ERROR, *(fmt)->log_source, __FILE__, __LINE__, __func__, __VA_ARGS__), (err))

static uint32_t desc_get_le(const uint8_t *p, unsigned int bytes)
{
	uint32_t v = 0;

	for (unsigned int i = 0; i < bytes; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

doca_error_t core_desc_check_header(const void *desc, size_t desc_len, const void *out,
				    const struct core_desc_format *fmt)
{
	const uint8_t *p = desc;
	uint32_t version, flags, total_len;

	if (desc == NULL || out == NULL)
		return DESC_FAIL(fmt, DOCA_ERROR_INVALID_VALUE, "%s parse: NULL descriptor or output", fmt->what);
	if (desc_len < CORE_DESC_HEADER_LEN)
		return DESC_FAIL(fmt, DOCA_ERROR_INVALID_VALUE, "%s too short: %zu bytes, a header needs %d", fmt->what,
				 desc_len, CORE_DESC_HEADER_LEN);
	if (memcmp(p, fmt->magic, 4) != 0)
		return DESC_FAIL(fmt, DOCA_ERROR_INVALID_VALUE, "bad magic: not a softdoca %s", fmt->magic_what);
	version = desc_get_le(p + 4, 2);
	if (version == 0)
		return DESC_FAIL(fmt, DOCA_ERROR_INVALID_VALUE, "%s has invalid version 0", fmt->what);
	if (version > fmt->version)
		return DESC_FAIL(fmt, DOCA_ERROR_UNSUPPORTED_VERSION,
				 "%s version %u is newer than this softdoca understands (%u)", fmt->what, version,
				 fmt->version);
	total_len = desc_get_le(p + 8, 4);
	if (total_len != desc_len)
		return DESC_FAIL(fmt, DOCA_ERROR_INVALID_VALUE,
				 "%s length field says %u bytes but %zu were given (truncated or padded?)", fmt->what,
				 total_len, desc_len);
	if (desc_len != fmt->len)
		return DESC_FAIL(fmt, DOCA_ERROR_INVALID_VALUE, "version %u %s must be %u bytes, not %zu", fmt->version,
				 fmt->what, fmt->len, desc_len);
	flags = desc_get_le(p + 6, 2);
	if (flags != 0)
		return DESC_FAIL(fmt, DOCA_ERROR_INVALID_VALUE, "%s has unknown flags 0x%x", fmt->what, flags);
	return DOCA_SUCCESS;
}
