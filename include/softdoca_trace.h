/*
 * softdoca_trace.h — softdoca's own timeline API (not part of DOCA).
 *
 * With SOFTDOCA_TRACE=<file> in the environment, softdoca records every
 * task, context state change and connection event in a bounded ring and
 * writes it to that file as Chrome / Perfetto trace-event JSON when the
 * program exits. The variable is read, and the file opened (created 0600,
 * never through a symbolic link, refused unless it is a regular file of
 * the caller's), when the program creates its first context. softdoca_trace_flush() writes it now, for a program
 * that does not exit (a server) or wants a snapshot; recording goes on
 * and a later flush or the exit rewrites the file with the ring as it
 * is then. The README's "Timeline" section describes the events.
 *
 * Programs that use this header build only against softdoca: guard its
 * use (e.g. with __has_include(<softdoca_trace.h>)) in code that must
 * also build against NVIDIA's DOCA. Link doca-common.
 */
#ifndef SOFTDOCA_TRACE_H_
#define SOFTDOCA_TRACE_H_

#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write the trace file now (starting tracing if no context did yet).
 * DOCA_ERROR_BAD_STATE when tracing is off (SOFTDOCA_TRACE unset, or its
 * file refused: a log line says why), DOCA_ERROR_IO_FAILED when
 * the file cannot be written (a log line says why). Any thread;
 * recording waits while the file is written. */
doca_error_t softdoca_trace_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* SOFTDOCA_TRACE_H_ */
