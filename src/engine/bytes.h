/*
 * softdoca — reading and writing fields of byte buffers at any alignment
 * (descriptors, wire headers, UCX addresses). Little-endian hosts only:
 * wire.h refuses others.
 */
#ifndef SOFTDOCA_ENGINE_BYTES_H_
#define SOFTDOCA_ENGINE_BYTES_H_

#include <stdint.h>
#include <string.h>

static inline void put_u16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t get_u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline float get_float(const uint8_t *p)
{
	float v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif /* SOFTDOCA_ENGINE_BYTES_H_ */
