/*
 * softdoca — the one explanation of DOCA_ERROR_BAD_STATE (bad_state.h).
 */
#include "bad_state.h"
#include "log_internal.h"

SDK_LOG_REGISTER(LIFECYCLE)

SOFTDOCA_EXPORT doca_error_t softdoca_bad_state(const char *call, const char *object, const char *state,
						const char *needs, const char *hint)
{
	SDK_LOG_ERR("%s: DOCA_ERROR_BAD_STATE: the %s is %s; this call needs it %s%s%s%s", call, object, state, needs,
		    hint != NULL ? " (" : "", hint != NULL ? hint : "", hint != NULL ? ")" : "");
	return DOCA_ERROR_BAD_STATE;
}
