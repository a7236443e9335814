/*
 * softdoca — DOCA clock: read a clock, or two clocks at (nearly) the same
 * instant.
 *
 * DOCA's NIC clocks (free-running, real-time/PTP, DPA timer) live on the
 * NIC and appear in its packet and completion timestamps. A soft device has
 * no such clock and stamps nothing, so it reports none: the _cap_ calls
 * answer NOT_SUPPORTED, and so does every read that names a NIC clock
 * (hence every cross-timestamp, whose second clock must be a NIC clock).
 * The host clocks are the host's own and read as such: CLOCK_REALTIME,
 * CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW and the CPU's cycle counter (x86_64
 * TSC, AArch64 virtual counter; NOT_SUPPORTED elsewhere).
 */
#ifndef DOCA_CLOCK_H_
#define DOCA_CLOCK_H_

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_clock;
struct doca_dev;
struct doca_devinfo;

/* Clock types (one bit each). */
#define DOCA_CLOCK_NIC_FREE_RUNNING 0x1		   /* NIC free-running clock (seconds, nanoseconds) */
#define DOCA_CLOCK_NIC_REAL_TIME (0x1 << 1)	   /* NIC real-time clock (seconds, nanoseconds) */
#define DOCA_CLOCK_NIC_DPA_TIMER (0x1 << 8)	   /* NIC DPA timer (seconds, nanoseconds) */
#define DOCA_CLOCK_HOST_COUNTER_CYCLES (0x1 << 16) /* host CPU cycle counter (raw count) */
#define DOCA_CLOCK_HOST_REAL_TIME (0x1 << 17)	   /* host CLOCK_REALTIME */
#define DOCA_CLOCK_HOST_MONOTONIC (0x1 << 18)	   /* host CLOCK_MONOTONIC */
#define DOCA_CLOCK_HOST_MONOTONIC_RAW (0x1 << 19)  /* host CLOCK_MONOTONIC_RAW */

/* A reading: a timespec, or a raw count for DOCA_CLOCK_HOST_COUNTER_CYCLES. */
union doca_clock_timespec_t {
	struct timespec ts;
	uint64_t counter;
};

/* NOT_SUPPORTED on a soft device (INVALID_VALUE for NULL). */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_free_running_is_supported(const struct doca_devinfo *devinfo);

/* NOT_SUPPORTED on a soft device (INVALID_VALUE for NULL). */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_real_time_is_supported(const struct doca_devinfo *devinfo);

/* NOT_SUPPORTED on a soft device (INVALID_VALUE for NULL). */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_dpa_timer_is_supported(const struct doca_devinfo *devinfo);

/* A clock reader on an open device. Errors: INVALID_VALUE, NO_MEMORY. */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_create(const struct doca_dev *dev, struct doca_clock **clock);

DOCA_EXPERIMENTAL
doca_error_t doca_clock_destroy(struct doca_clock *clock);

/* Read one clock (exactly one DOCA_CLOCK_* bit). Errors: INVALID_VALUE
 * (NULL, not exactly one known bit), NOT_SUPPORTED (a NIC clock, or no
 * cycle counter), OPERATING_SYSTEM (clock_gettime failed). */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_get_timestamp(const struct doca_clock *clock, uint64_t clock_type,
				      union doca_clock_timespec_t *clock_ts);

/* Read primary_clock_type and the NIC clock nic_clock_type together, with
 * the uncertainty of the pairing in *error_margin_nsecs. A soft device has
 * no NIC clock: after checking its arguments this answers NOT_SUPPORTED. */
DOCA_EXPERIMENTAL
doca_error_t doca_clock_get_crosstimestamp(const struct doca_clock *clock, uint64_t primary_clock_type,
					   uint64_t nic_clock_type, union doca_clock_timespec_t *primary_clock_ts,
					   union doca_clock_timespec_t *nic_clock_ts, uint64_t *error_margin_nsecs);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CLOCK_H_ */
