/*
 * softdoca — random secrets and constant-time comparison (see secret.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "log_internal.h"
#include "secret.h"

SDK_LOG_REGISTER(SECRET)

SOFTDOCA_EXPORT doca_error_t softdoca_random_fill(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			SDK_LOG_ERR("getrandom() failed (errno %d): no secret available", errno);
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		p += n;
		len -= (size_t)n;
	}
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT doca_error_t softdoca_secret_generate(uint8_t *secret, size_t len)
{
	doca_error_t err;

	/* An all-zero draw is what parsers refuse; 2^-128 odds, draw again. */
	do {
		err = softdoca_random_fill(secret, len);
		if (err != DOCA_SUCCESS)
			return err;
	} while (softdoca_bytes_all_zero(secret, len));
	return DOCA_SUCCESS;
}

SOFTDOCA_EXPORT bool softdoca_secret_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
	/* Every byte is looked at whatever differs (no early exit), eight
	 * at a time: this runs for every message on the data path. The
	 * empty asm keeps the compiler from turning the OR into a branch. */
	uint64_t diff = 0;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		diff |= x ^ y;
		__asm__ volatile("" : "+r"(diff));
	}
	for (; i < len; i++) {
		diff |= (uint64_t)(a[i] ^ b[i]);
		__asm__ volatile("" : "+r"(diff));
	}
	return diff == 0;
}

SOFTDOCA_EXPORT bool softdoca_bytes_all_zero(const uint8_t *p, size_t len)
{
	volatile uint8_t acc = 0;

	for (size_t i = 0; i < len; i++)
		acc |= p[i];
	return acc == 0;
}
