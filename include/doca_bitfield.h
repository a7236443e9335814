/*
 * softdoca — DOCA bitfield helpers: byte-order conversion between the host
 * and the big-endian doca_be16/32/64_t types, and masks, setters and getters
 * for bit fields of 8-bit and big-endian 16/32-bit words.
 *
 * Everything here is a macro over compiler builtins, so each one is a
 * constant expression when its arguments are (programs use them in static
 * initializers) and works the same in C and C++.
 */
#ifndef DOCA_BITFIELD_H_
#define DOCA_BITFIELD_H_

/* DOCA's header brings in the socket byte-order calls (htons and friends);
 * programs that include only this header use them. */
#include <arpa/inet.h>
#include <stdint.h>

#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(__BYTE_ORDER__) || !defined(__ORDER_LITTLE_ENDIAN__) || !defined(__ORDER_BIG_ENDIAN__)
#error "doca_bitfield.h needs a compiler that predefines __BYTE_ORDER__ (GCC or Clang)"
#endif

/* Index of the lowest set bit of _x (the shift of a field mask); 0 for 0.
 * The OR makes 0 count as 1, so the builtin never sees its undefined input
 * and the macro stays a constant expression for Clang too. */
#define DOCA_SHIFT(_x) __builtin_ctzll((unsigned long long)(_x) | ((_x) == 0))

/* Host order to big endian (DOCA_HTOBE*) and back (DOCA_BETOH*). The two
 * directions are the same operation: a byte swap on a little-endian host,
 * nothing on a big-endian one. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define DOCA_HTOBE16(_x) ((uint16_t)__builtin_bswap16((uint16_t)(_x)))
#define DOCA_HTOBE32(_x) ((uint32_t)__builtin_bswap32((uint32_t)(_x)))
#define DOCA_HTOBE64(_x) ((uint64_t)__builtin_bswap64((uint64_t)(_x)))
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DOCA_HTOBE16(_x) ((uint16_t)(_x))
#define DOCA_HTOBE32(_x) ((uint32_t)(_x))
#define DOCA_HTOBE64(_x) ((uint64_t)(_x))
#else
#error "doca_bitfield.h supports little- and big-endian hosts only"
#endif

#define DOCA_BETOH16(_x) DOCA_HTOBE16(_x)
#define DOCA_BETOH32(_x) DOCA_HTOBE32(_x)
#define DOCA_BETOH64(_x) DOCA_HTOBE64(_x)

/* Bits _l.._h (inclusive, 0 = least significant, _h >= _l) set in a word of
 * the given width, host order: ones from bit _l up, cut above bit _h. */
#define SOFTDOCA_GENMASK_(_type, _max, _bits, _h, _l) \
	((_type)(((_type)(_max) << (_l)) & ((_type)(_max) >> ((_bits) - 1 - (_h)))))

/* An 8-bit mask of bits _l.._h, e.g. DOCA_U8_GENMASK(7, 4) == 0xF0. */
#define DOCA_U8_GENMASK(_h, _l) SOFTDOCA_GENMASK_(uint8_t, UINT8_MAX, 8, (_h), (_l))

/* Big-endian 16/32-bit masks of bits _l.._h, the bits numbered in host order
 * of the value: DOCA_BE16_GENMASK(11, 4) == DOCA_HTOBE16(0x0FF0). */
#define DOCA_BE16_GENMASK(_h, _l) DOCA_HTOBE16(SOFTDOCA_GENMASK_(uint16_t, UINT16_MAX, 16, (_h), (_l)))
#define DOCA_BE32_GENMASK(_h, _l) DOCA_HTOBE32(SOFTDOCA_GENMASK_(uint32_t, UINT32_MAX, 32, (_h), (_l)))

/* The same masks stored through a pointer to a uint8_t, doca_be16_t or
 * doca_be32_t. */
#define DOCA_U8P_GENMASK(_h, _l, _p) \
	do { \
		*(uint8_t *)(_p) = DOCA_U8_GENMASK((_h), (_l)); \
	} while (0)
#define DOCA_BE16P_GENMASK(_h, _l, _p) \
	do { \
		*(doca_be16_t *)(_p) = DOCA_BE16_GENMASK((_h), (_l)); \
	} while (0)
#define DOCA_BE32P_GENMASK(_h, _l, _p) \
	do { \
		*(doca_be32_t *)(_p) = DOCA_BE32_GENMASK((_h), (_l)); \
	} while (0)

/* Field setters: value _v (host order) moved into the field that the shifted
 * mask _m describes, bits outside the field dropped. The result is meant to
 * be ORed with the word's other fields; for the BE forms _m and the result
 * are big endian. */
#define DOCA_U8_SET(_m, _v) ((uint8_t)(((unsigned)(_v) << DOCA_SHIFT(_m)) & (_m)))
#define DOCA_BE16_SET(_m, _v) \
	((doca_be16_t)(DOCA_HTOBE16((uint32_t)(_v) << DOCA_SHIFT(DOCA_BETOH16(_m))) & (_m)))
#define DOCA_BE32_SET(_m, _v) \
	((doca_be32_t)(DOCA_HTOBE32((uint64_t)(_v) << DOCA_SHIFT(DOCA_BETOH32(_m))) & (_m)))

/* The setters applied in place: the field is ORed into the word at _p (a
 * field that already holds bits keeps them, as in DOCA). */
#define DOCA_U8P_SET(_m, _v, _p) \
	do { \
		*(uint8_t *)(_p) |= DOCA_U8_SET((_m), (_v)); \
	} while (0)
#define DOCA_BE16P_SET(_m, _v, _p) \
	do { \
		*(doca_be16_t *)(_p) |= DOCA_BE16_SET((_m), (_v)); \
	} while (0)
#define DOCA_BE32P_SET(_m, _v, _p) \
	do { \
		*(doca_be32_t *)(_p) |= DOCA_BE32_SET((_m), (_v)); \
	} while (0)

/* Field getters: the value (host order) of the field that mask _m describes
 * in the word _f; for the BE forms both _m and _f are big endian. */
#define DOCA_U8_GET(_m, _f) ((uint8_t)(((_m) & (_f)) >> DOCA_SHIFT(_m)))
#define DOCA_BE16_GET(_m, _f) ((uint16_t)(DOCA_BETOH16((_m) & (_f)) >> DOCA_SHIFT(DOCA_BETOH16(_m))))
#define DOCA_BE32_GET(_m, _f) ((uint32_t)(DOCA_BETOH32((_m) & (_f)) >> DOCA_SHIFT(DOCA_BETOH32(_m))))

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BITFIELD_H_ */
