/*
 * The corpus format of the TCP link fuzzers (tests/fuzz/corpus/link):
 * link_netfuzz (a server process, a meson test) and fuzz_link (libFuzzer,
 * in process) read the same files.
 *
 * A file is one byte naming the way its stream goes to the link port
 * (enum link_seed_way), then the stream: frames of link_tcp_wire.h as a
 * peer would write them after that way's own opening. The values a peer
 * knows only at run time are placeholders, which the fuzzers replace
 * (link_seed_fill) after mutating, so a mutation may as well break one:
 *   u32 LINK_PH_SRV_ID          the server connection's id
 *   u32 LINK_PH_OUR_ID          our (the peer's) connection id
 *   16 bytes LINK_PH_SRV_SECRET the server connection's secret
 *   16 bytes LINK_PH_OUR_SECRET ours
 *   8 bytes LINK_PH_REGION_ID   the server's exported region's id
 *   16 bytes LINK_PH_REGION_SECRET  its secret
 *   u64 with 6 high bytes LINK_PH_ADDR: the region's address plus the
 *                               low 16 bits (an offset in or past it)
 */
#ifndef SOFTDOCA_TESTS_LINK_SEED_H_
#define SOFTDOCA_TESTS_LINK_SEED_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum link_seed_way {
	LINK_WAY_RAW = 0,  /* no AUTH of ours: the stream is all the server gets */
	LINK_WAY_AUTH = 1, /* our valid AUTH for an exported, unconnected connection first */
	LINK_WAY_LIVE = 2, /* the server connected to a peer of ours: our AUTH and HELLO first */
};

#define LINK_PH_SRV_ID 0xD5D5D501u
#define LINK_PH_OUR_ID 0xD5D5D502u
#define LINK_PH_SRV_SECRET 0xD1
#define LINK_PH_OUR_SECRET 0xD2
#define LINK_PH_REGION_ID 0xD3
#define LINK_PH_REGION_SECRET 0xD4
#define LINK_PH_ADDR 0xD6

/* What the placeholders stand for in one round. */
struct link_seed_values {
	uint32_t srv_id;
	uint8_t srv_secret[16];
	uint32_t our_id;
	uint8_t our_secret[16];
	uint64_t region_id;
	uint8_t region_secret[16];
	uint64_t region_addr;
};

static inline uint64_t link_seed_get_le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline void link_seed_put_le(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Replace the placeholders in b with v's values. */
static inline void link_seed_fill(uint8_t *b, size_t len, const struct link_seed_values *v)
{
	for (size_t i = 0; i + 4 <= len; i++) {
		uint32_t w = (uint32_t)link_seed_get_le(b + i, 4);

		if (w == LINK_PH_SRV_ID || w == LINK_PH_OUR_ID) {
			link_seed_put_le(b + i, w == LINK_PH_SRV_ID ? v->srv_id : v->our_id, 4);
			i += 3;
		} else if (i + 16 <= len &&
			   (b[i] == LINK_PH_SRV_SECRET || b[i] == LINK_PH_OUR_SECRET || b[i] == LINK_PH_REGION_SECRET) &&
			   memcmp(b + i, b + i + 1, 15) == 0) {
			memcpy(b + i,
			       b[i] == LINK_PH_SRV_SECRET ? v->srv_secret :
			       b[i] == LINK_PH_OUR_SECRET ? v->our_secret :
							    v->region_secret,
			       16);
			i += 15;
		} else if (i + 8 <= len && b[i] == LINK_PH_REGION_ID && memcmp(b + i, b + i + 1, 7) == 0) {
			link_seed_put_le(b + i, v->region_id, 8);
			i += 7;
		} else if (i + 8 <= len && b[i + 2] == LINK_PH_ADDR && memcmp(b + i + 2, b + i + 3, 5) == 0) {
			link_seed_put_le(b + i, v->region_addr + link_seed_get_le(b + i, 2), 8);
			i += 7;
		}
	}
}

#endif /* SOFTDOCA_TESTS_LINK_SEED_H_ */
