/*
 * softdoca — DOCA clock.
 *
 * Only the host's clocks are read: a soft device has no NIC clock (nothing
 * it does carries a NIC timestamp), and passing the host clock off as one
 * would make every cross-timestamp an exact, and meaningless, match.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <doca_clock.h>

#include "dev.h"
#include "log_internal.h"

SDK_LOG_REGISTER(CLOCK)

#define FAIL(err, ...) (SDK_LOG_ERR(__VA_ARGS__), (err))

#define CLOCK_NIC_TYPES (DOCA_CLOCK_NIC_FREE_RUNNING | DOCA_CLOCK_NIC_REAL_TIME | DOCA_CLOCK_NIC_DPA_TIMER)
#define CLOCK_HOST_TYPES \
	(DOCA_CLOCK_HOST_COUNTER_CYCLES | DOCA_CLOCK_HOST_REAL_TIME | DOCA_CLOCK_HOST_MONOTONIC | \
	 DOCA_CLOCK_HOST_MONOTONIC_RAW)

struct doca_clock {
	struct doca_dev *dev; /* held: the device outlives its clock */
};

static doca_error_t clock_nic_cap(const struct doca_devinfo *devinfo, const char *caller, const char *what)
{
	if (devinfo == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "%s: devinfo is NULL", caller);
	SDK_LOG_DBG("%s: a soft device has no NIC %s clock", caller, what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_free_running_is_supported(const struct doca_devinfo *devinfo)
{
	return clock_nic_cap(devinfo, __func__, "free-running");
}

DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_real_time_is_supported(const struct doca_devinfo *devinfo)
{
	return clock_nic_cap(devinfo, __func__, "real-time");
}

DOCA_EXPERIMENTAL
doca_error_t doca_clock_cap_nic_dpa_timer_is_supported(const struct doca_devinfo *devinfo)
{
	return clock_nic_cap(devinfo, __func__, "DPA timer");
}

DOCA_EXPERIMENTAL
doca_error_t doca_clock_create(const struct doca_dev *dev, struct doca_clock **clock)
{
	struct doca_clock *c;

	if (dev == NULL || clock == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_clock_create: %s is NULL",
			    dev == NULL ? "dev" : "clock output pointer");
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return FAIL(DOCA_ERROR_NO_MEMORY, "doca_clock_create: out of memory");
	c->dev = (struct doca_dev *)dev;
	softdoca_dev_hold(c->dev);
	*clock = c;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_clock_destroy(struct doca_clock *clock)
{
	if (clock == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_clock_destroy: clock is NULL");
	softdoca_dev_release(clock->dev);
	free(clock);
	return DOCA_SUCCESS;
}

/* Exactly one known bit. */
static bool clock_type_valid(uint64_t type)
{
	return type != 0 && (type & (type - 1)) == 0 && (type & (CLOCK_NIC_TYPES | CLOCK_HOST_TYPES)) != 0;
}

static doca_error_t clock_read_cycles(uint64_t *count, const char *caller)
{
#if defined(__x86_64__)
	(void)caller;
	*count = __rdtsc();
	return DOCA_SUCCESS;
#elif defined(__aarch64__)
	uint64_t v;

	(void)caller;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
	*count = v;
	return DOCA_SUCCESS;
#else
	(void)count;
	return FAIL(DOCA_ERROR_NOT_SUPPORTED, "%s: no cycle counter is known on this CPU", caller);
#endif
}

static doca_error_t clock_read(uint64_t type, union doca_clock_timespec_t *out, const char *caller)
{
	clockid_t id;

	switch (type) {
	case DOCA_CLOCK_HOST_COUNTER_CYCLES:
		return clock_read_cycles(&out->counter, caller);
	case DOCA_CLOCK_HOST_REAL_TIME:
		id = CLOCK_REALTIME;
		break;
	case DOCA_CLOCK_HOST_MONOTONIC:
		id = CLOCK_MONOTONIC;
		break;
	case DOCA_CLOCK_HOST_MONOTONIC_RAW:
		id = CLOCK_MONOTONIC_RAW;
		break;
	default:
		return FAIL(DOCA_ERROR_NOT_SUPPORTED, "%s: clock type 0x%llx is a NIC clock; a soft device has none",
			    caller, (unsigned long long)type);
	}
	if (clock_gettime(id, &out->ts) != 0)
		return FAIL(DOCA_ERROR_OPERATING_SYSTEM, "%s: clock_gettime failed: %s", caller, strerror(errno));
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_clock_get_timestamp(const struct doca_clock *clock, uint64_t clock_type,
				      union doca_clock_timespec_t *clock_ts)
{
	union doca_clock_timespec_t ts;
	doca_error_t err;

	if (clock == NULL || clock_ts == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_clock_get_timestamp: %s is NULL",
			    clock == NULL ? "clock" : "output");
	if (!clock_type_valid(clock_type))
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_clock_get_timestamp: 0x%llx is not one DOCA_CLOCK_* type",
			    (unsigned long long)clock_type);
	memset(&ts, 0, sizeof(ts));
	err = clock_read(clock_type, &ts, __func__);
	if (err != DOCA_SUCCESS)
		return err;
	*clock_ts = ts;
	return DOCA_SUCCESS;
}

DOCA_EXPERIMENTAL
doca_error_t doca_clock_get_crosstimestamp(const struct doca_clock *clock, uint64_t primary_clock_type,
					   uint64_t nic_clock_type, union doca_clock_timespec_t *primary_clock_ts,
					   union doca_clock_timespec_t *nic_clock_ts, uint64_t *error_margin_nsecs)
{
	if (clock == NULL || primary_clock_ts == NULL || nic_clock_ts == NULL || error_margin_nsecs == NULL)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_clock_get_crosstimestamp: %s is NULL",
			    clock == NULL		? "clock"
			    : primary_clock_ts == NULL	? "primary output"
			    : nic_clock_ts == NULL	? "NIC output"
							: "error margin output");
	if (!clock_type_valid(primary_clock_type))
		return FAIL(DOCA_ERROR_INVALID_VALUE,
			    "doca_clock_get_crosstimestamp: primary 0x%llx is not one DOCA_CLOCK_* type",
			    (unsigned long long)primary_clock_type);
	if (!clock_type_valid(nic_clock_type) || (nic_clock_type & CLOCK_NIC_TYPES) == 0)
		return FAIL(DOCA_ERROR_INVALID_VALUE, "doca_clock_get_crosstimestamp: 0x%llx is not a NIC clock type",
			    (unsigned long long)nic_clock_type);
	return FAIL(DOCA_ERROR_NOT_SUPPORTED, "doca_clock_get_crosstimestamp: a soft device has no NIC clock");
}
