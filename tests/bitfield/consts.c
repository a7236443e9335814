/*
 * Compile-time checks of doca_bitfield.h: every macro gives the expected
 * value as a constant expression. Valid C11 and C++11; check_bitfield.sh
 * compiles it for little- and big-endian targets, so the expected values
 * name the host byte order explicitly.
 */
#include <doca_bitfield.h>

#ifdef __cplusplus
#define BF_ASSERT(_c, _msg) static_assert(_c, _msg)
#else
#define BF_ASSERT(_c, _msg) _Static_assert(_c, _msg)
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BF_HOST(_le, _be) (_le)
#else
#define BF_HOST(_le, _be) (_be)
#endif

/* Conversions: on a little-endian host the bytes swap, on big endian they stay. */
BF_ASSERT(DOCA_HTOBE16(0x1234) == BF_HOST(0x3412, 0x1234), "HTOBE16");
BF_ASSERT(DOCA_HTOBE32(0x12345678) == BF_HOST(0x78563412u, 0x12345678u), "HTOBE32");
BF_ASSERT(DOCA_HTOBE64(0x0102030405060708ull) == BF_HOST(0x0807060504030201ull, 0x0102030405060708ull),
	  "HTOBE64");
BF_ASSERT(DOCA_BETOH16(0x3412) == BF_HOST(0x1234, 0x3412), "BETOH16");
BF_ASSERT(DOCA_BETOH32(0x78563412u) == BF_HOST(0x12345678u, 0x78563412u), "BETOH32");
BF_ASSERT(DOCA_BETOH64(0x0807060504030201ull) == BF_HOST(0x0102030405060708ull, 0x0807060504030201ull),
	  "BETOH64");
BF_ASSERT(DOCA_BETOH32(DOCA_HTOBE32(0xdeadbeefu)) == 0xdeadbeefu, "round trip 32");
BF_ASSERT(DOCA_BETOH64(DOCA_HTOBE64(0xfeedfacecafef00dull)) == 0xfeedfacecafef00dull, "round trip 64");
/* Results are truncated to the width they name. */
BF_ASSERT(DOCA_HTOBE16(0x11234) == DOCA_HTOBE16(0x1234), "HTOBE16 width");
BF_ASSERT(sizeof(DOCA_HTOBE16(1)) == 2 && sizeof(DOCA_HTOBE32(1)) == 4 && sizeof(DOCA_HTOBE64(1)) == 8,
	  "result widths");

BF_ASSERT(DOCA_SHIFT(0) == 0 && DOCA_SHIFT(1) == 0 && DOCA_SHIFT(0xF0) == 4, "SHIFT");
BF_ASSERT(DOCA_SHIFT(0x8000000000000000ull) == 63, "SHIFT 63");

/* Masks: bits l..h inclusive. */
BF_ASSERT(DOCA_U8_GENMASK(7, 4) == 0xF0, "U8 7..4");
BF_ASSERT(DOCA_U8_GENMASK(7, 0) == 0xFF, "U8 7..0");
BF_ASSERT(DOCA_U8_GENMASK(3, 3) == 0x08, "U8 3..3");
BF_ASSERT(DOCA_BE16_GENMASK(11, 4) == DOCA_HTOBE16(0x0FF0), "BE16 11..4");
BF_ASSERT(DOCA_BE16_GENMASK(15, 0) == 0xFFFF, "BE16 15..0");
BF_ASSERT(DOCA_BE16_GENMASK(15, 15) == DOCA_HTOBE16(0x8000), "BE16 15..15");
BF_ASSERT(DOCA_BE32_GENMASK(23, 4) == DOCA_HTOBE32(0x00FFFFF0u), "BE32 23..4");
BF_ASSERT(DOCA_BE32_GENMASK(31, 0) == 0xFFFFFFFFu, "BE32 31..0");
BF_ASSERT(DOCA_BE32_GENMASK(31, 31) == DOCA_HTOBE32(0x80000000u), "BE32 31..31");
BF_ASSERT(DOCA_BE32_GENMASK(0, 0) == DOCA_HTOBE32(1u), "BE32 0..0");

/* Set: the value lands in the field; bits beyond its width are dropped. */
BF_ASSERT(DOCA_U8_SET(DOCA_U8_GENMASK(5, 2), 0x5) == 0x14, "U8 SET");
BF_ASSERT(DOCA_U8_SET(DOCA_U8_GENMASK(5, 2), 0x1F) == 0x3C, "U8 SET overflow");
BF_ASSERT(DOCA_BE16_SET(DOCA_BE16_GENMASK(11, 4), 0xAB) == DOCA_HTOBE16(0x0AB0), "BE16 SET");
BF_ASSERT(DOCA_BE16_SET(DOCA_BE16_GENMASK(11, 4), 0x1AB) == DOCA_HTOBE16(0x0AB0), "BE16 SET overflow");
BF_ASSERT(DOCA_BE32_SET(DOCA_BE32_GENMASK(15, 0), 0xaabb) == DOCA_HTOBE32(0x0000aabbu), "BE32 SET low");
BF_ASSERT(DOCA_BE32_SET(DOCA_BE32_GENMASK(31, 24), 0x1ff) == DOCA_HTOBE32(0xff000000u), "BE32 SET high");

/* Get: the field's value back in host order. */
BF_ASSERT(DOCA_U8_GET(DOCA_U8_GENMASK(5, 2), 0xD6) == 0x5, "U8 GET");
BF_ASSERT(DOCA_BE16_GET(DOCA_BE16_GENMASK(11, 4), DOCA_HTOBE16(0xFAB5)) == 0xAB, "BE16 GET");
BF_ASSERT(DOCA_BE32_GET(DOCA_BE32_GENMASK(31, 24), DOCA_HTOBE32(0x9a123456u)) == 0x9a, "BE32 GET");
BF_ASSERT(DOCA_BE32_GET(DOCA_BE32_GENMASK(23, 4), DOCA_BE32_SET(DOCA_BE32_GENMASK(23, 4), 0xabcde)) == 0xabcde,
	  "BE32 SET/GET");

/* Usable in a static initializer, as DOCA programs use them. */
static const doca_be32_t bf_static_ip = DOCA_HTOBE32(0x0a000001u);
static const doca_be16_t bf_static_field = DOCA_BE16_GENMASK(3, 0);

int softdoca_bitfield_consts(void);
int softdoca_bitfield_consts(void)
{
	return (int)(bf_static_ip + bf_static_field);
}
