/*
 * softdoca — names and descriptions of the DOCA error codes.
 *
 * One table indexed by the code. A name is the code's C identifier; a
 * description says what went wrong and, where it can, what to check.
 */
#include <doca_error.h>

#include "common.h"

struct error_text {
	const char *name;
	const char *descr;
};

/* Designated initialisers keep each entry next to the value it belongs to,
 * so the table cannot drift out of order. */
static const struct error_text error_table[] = {
	[DOCA_SUCCESS] = {"DOCA_SUCCESS", "success"},
	[DOCA_ERROR_UNKNOWN] = {"DOCA_ERROR_UNKNOWN",
				"unknown error; the log lines before this one say where it happened"},
	[DOCA_ERROR_NOT_PERMITTED] = {"DOCA_ERROR_NOT_PERMITTED",
				      "operation not permitted; check the access flags or permissions the "
				      "memory or object was created with"},
	[DOCA_ERROR_IN_USE] = {"DOCA_ERROR_IN_USE",
			       "in use: something still refers to the object (release its buffers, "
			       "contexts or tasks first), or another program holds the resource (a TCP "
			       "port, say)"},
	[DOCA_ERROR_NOT_SUPPORTED] = {"DOCA_ERROR_NOT_SUPPORTED",
				      "not supported by this device or library; query the device "
				      "capabilities first"},
	[DOCA_ERROR_AGAIN] = {"DOCA_ERROR_AGAIN",
			      "resource temporarily unavailable; progress the engine and try again"},
	[DOCA_ERROR_INVALID_VALUE] = {"DOCA_ERROR_INVALID_VALUE",
				      "invalid argument; a NULL pointer, out-of-range value or malformed "
				      "input (the log names which one)"},
	[DOCA_ERROR_NO_MEMORY] = {"DOCA_ERROR_NO_MEMORY",
				  "out of memory, or a fixed pool (tasks, buffers) is exhausted; free "
				  "unused objects or configure a larger pool"},
	[DOCA_ERROR_INITIALIZATION] = {"DOCA_ERROR_INITIALIZATION",
				       "initialisation failed; check the device and the configuration "
				       "given before start"},
	[DOCA_ERROR_TIME_OUT] = {"DOCA_ERROR_TIME_OUT",
				 "timed out; check that the peer is running and reachable"},
	[DOCA_ERROR_SHUTDOWN] = {"DOCA_ERROR_SHUTDOWN",
				 "the object or connection is shutting down; no new work is accepted"},
	[DOCA_ERROR_CONNECTION_RESET] = {"DOCA_ERROR_CONNECTION_RESET",
					 "connection reset by the peer; the remote side closed or "
					 "crashed"},
	[DOCA_ERROR_CONNECTION_ABORTED] = {"DOCA_ERROR_CONNECTION_ABORTED",
					   "connection aborted; work in flight on it was flushed with "
					   "an error"},
	[DOCA_ERROR_CONNECTION_INPROGRESS] = {"DOCA_ERROR_CONNECTION_INPROGRESS",
					      "connection is still being established; progress the "
					      "engine until it is connected"},
	[DOCA_ERROR_NOT_CONNECTED] = {"DOCA_ERROR_NOT_CONNECTED",
				      "not connected; connect (export/connect or connect to address) "
				      "before submitting work"},
	[DOCA_ERROR_NO_LOCK] = {"DOCA_ERROR_NO_LOCK",
				"could not take a lock; another thread holds the resource"},
	[DOCA_ERROR_NOT_FOUND] = {"DOCA_ERROR_NOT_FOUND",
				  "not found; check the name, address or index that was looked up"},
	[DOCA_ERROR_IO_FAILED] = {"DOCA_ERROR_IO_FAILED",
				  "input/output failed; the log says which read, write or transfer "
				  "failed"},
	[DOCA_ERROR_BAD_STATE] = {"DOCA_ERROR_BAD_STATE",
				  "operation not allowed in the object's current state; check the "
				  "start/stop order and configure before start"},
	[DOCA_ERROR_UNSUPPORTED_VERSION] = {"DOCA_ERROR_UNSUPPORTED_VERSION",
					    "unsupported version; the peer or descriptor comes from "
					    "an incompatible library release"},
	[DOCA_ERROR_OPERATING_SYSTEM] = {"DOCA_ERROR_OPERATING_SYSTEM",
					 "an operating system call failed; the log gives the call and "
					 "errno"},
	[DOCA_ERROR_DRIVER] = {"DOCA_ERROR_DRIVER",
			       "the driver or transport layer failed; check the device and the "
			       "transport's own messages"},
	[DOCA_ERROR_UNEXPECTED] = {"DOCA_ERROR_UNEXPECTED",
				   "unexpected condition; likely a bug, please report it with the log"},
	[DOCA_ERROR_ALREADY_EXIST] = {"DOCA_ERROR_ALREADY_EXIST",
				      "already exists; the object was created or added before"},
	[DOCA_ERROR_FULL] = {"DOCA_ERROR_FULL",
			     "full; no room left in the queue or table, wait for completions or "
			     "make it larger"},
	[DOCA_ERROR_EMPTY] = {"DOCA_ERROR_EMPTY", "empty; there is nothing to take"},
	[DOCA_ERROR_IN_PROGRESS] = {"DOCA_ERROR_IN_PROGRESS",
				    "operation in progress; it completes later, through the progress "
				    "engine"},
	[DOCA_ERROR_TOO_BIG] = {"DOCA_ERROR_TOO_BIG",
				"too big; the length exceeds the buffer, the receive buffer or a "
				"device limit"},
	[DOCA_ERROR_AUTHENTICATION] = {"DOCA_ERROR_AUTHENTICATION",
				       "authentication failed; the descriptor or key does not match "
				       "the peer's (stale or forged)"},
	[DOCA_ERROR_BAD_CONFIG] = {"DOCA_ERROR_BAD_CONFIG",
				   "bad configuration; check the values set before start"},
	[DOCA_ERROR_SKIPPED] = {"DOCA_ERROR_SKIPPED", "skipped; the operation was not carried out"},
	[DOCA_ERROR_DEVICE_FATAL_ERROR] = {"DOCA_ERROR_DEVICE_FATAL_ERROR",
					   "the device hit a fatal error; close and reopen it"},
};

static const struct error_text error_unknown_code = {
	"DOCA_ERROR_UNKNOWN_CODE",
	"not a DOCA error code; the value was corrupted or comes from another API",
};

/* The entry for a code; the fixed fallback for anything outside the table
 * (the enum may be signed or unsigned, so compare as unsigned). */
static const struct error_text *error_lookup(doca_error_t error)
{
	unsigned int code = (unsigned int)error;

	if (code >= ARRAY_SIZE(error_table) || error_table[code].name == NULL)
		return &error_unknown_code;
	return &error_table[code];
}

DOCA_STABLE
const char *doca_error_get_name(doca_error_t error)
{
	return error_lookup(error)->name;
}

DOCA_STABLE
const char *doca_error_get_descr(doca_error_t error)
{
	return error_lookup(error)->descr;
}
