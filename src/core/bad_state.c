/*
 * softdoca — the one explanation of a lifecycle call refused because of
 * an object's state (bad_state.h).
 */
#include "bad_state.h"
#include "log_internal.h"

SDK_LOG_REGISTER(LIFECYCLE)

SOFTDOCA_EXPORT doca_error_t softdoca_lifecycle_refuse(doca_error_t status, const char *call, const char *object,
						       const char *state, const char *needs, const char *hint)
{
	SDK_LOG_ERR("%s: %s: the %s is %s; this call needs it %s%s%s%s", call, doca_error_get_name(status), object,
		    state, needs, hint != NULL ? " (" : "", hint != NULL ? hint : "", hint != NULL ? ")" : "");
	return status;
}

SOFTDOCA_EXPORT doca_error_t softdoca_bad_state(const char *call, const char *object, const char *state,
						const char *needs, const char *hint)
{
	return softdoca_lifecycle_refuse(DOCA_ERROR_BAD_STATE, call, object, state, needs, hint);
}
