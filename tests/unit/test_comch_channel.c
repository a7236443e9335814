/*
 * Unit tests of the comch transport's frame parser (src/comch/channel.c)
 * with hostile frames: every malformed input is refused with
 * DOCA_ERROR_INVALID_VALUE, well-formed ones decode exactly. Also the
 * rendezvous directory's refusal of a directory others can write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel.h"
#include "dev_rep.h"

static uint8_t buf[COMCH_MAX_FRAME + 64];

static size_t make(uint16_t type, uint32_t seq, const void *payload, uint32_t len)
{
	comch_frame_put_hdr(buf, type, seq, len);
	if (len > 0)
		memcpy(buf + COMCH_HDR_LEN, payload, len);
	return COMCH_HDR_LEN + len;
}

static doca_error_t parse(size_t len, struct comch_frame *f)
{
	return comch_frame_parse(buf, len, COMCH_MAX_MSG_SIZE, "test", f);
}

static void test_msg_roundtrip(void **state)
{
	struct comch_frame f;
	uint8_t payload[100];

	(void)state;
	for (unsigned int i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	assert_int_equal(parse(make(COMCH_FRAME_MSG, 7, payload, sizeof(payload)), &f), DOCA_SUCCESS);
	assert_int_equal(f.type, COMCH_FRAME_MSG);
	assert_int_equal(f.seq, 7);
	assert_int_equal(f.len, sizeof(payload));
	assert_memory_equal(f.payload, payload, sizeof(payload));
}

static void test_truncated(void **state)
{
	struct comch_frame f;
	uint8_t payload[32] = {1};
	size_t len = make(COMCH_FRAME_MSG, 1, payload, sizeof(payload));

	(void)state;
	/* Every strict prefix is refused: short header or length mismatch. */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(parse(n, &f), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(comch_frame_parse(NULL, 16, COMCH_MAX_MSG_SIZE, "test", &f), DOCA_ERROR_INVALID_VALUE);
}

static void test_bad_header(void **state)
{
	struct comch_frame f;
	uint8_t payload[8] = {0};
	size_t len;

	(void)state;
	len = make(COMCH_FRAME_MSG, 1, payload, sizeof(payload));
	buf[0] ^= 0xff; /* magic */
	assert_int_equal(parse(len, &f), DOCA_ERROR_INVALID_VALUE);
	len = make(COMCH_FRAME_MSG, 1, payload, sizeof(payload));
	buf[4] = COMCH_WIRE_VERSION + 1; /* version */
	assert_int_equal(parse(len, &f), DOCA_ERROR_INVALID_VALUE);
	len = make(COMCH_FRAME_MSG, 1, payload, sizeof(payload));
	buf[4] = COMCH_WIRE_VERSION - 1; /* a peer whose doorbells were eventfds */
	assert_int_equal(parse(len, &f), DOCA_ERROR_INVALID_VALUE);
	len = make(COMCH_FRAME_MSG, 1, payload, sizeof(payload));
	buf[12] = 9; /* says 9 payload bytes, carries 8 */
	assert_int_equal(parse(len, &f), DOCA_ERROR_INVALID_VALUE);
	len = make(COMCH_FRAME_MSG, 1, payload, sizeof(payload));
	buf[15] = 0x80; /* a huge length */
	assert_int_equal(parse(len, &f), DOCA_ERROR_INVALID_VALUE);
	/* Trailing garbage after the declared payload. */
	len = make(COMCH_FRAME_MSG, 1, payload, sizeof(payload));
	assert_int_equal(parse(len + 1, &f), DOCA_ERROR_INVALID_VALUE);
}

static void test_bad_types_and_sizes(void **state)
{
	struct comch_frame f;
	uint8_t payload[COMCH_MAX_MSG_SIZE + 1];

	(void)state;
	memset(payload, 'x', sizeof(payload));
	for (uint16_t t = 0; t < 20; t++) {
		if (t >= COMCH_FRAME_HELLO && t <= COMCH_FRAME_CONSUMER_GONE)
			continue;
		assert_int_equal(parse(make(t, 1, payload, 4), &f), DOCA_ERROR_INVALID_VALUE);
	}
	assert_int_equal(parse(make(0xffff, 1, payload, 0), &f), DOCA_ERROR_INVALID_VALUE);
	/* MSG: 1..max bytes, and the receiver's own limit. */
	assert_int_equal(parse(make(COMCH_FRAME_MSG, 1, payload, 0), &f), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(parse(make(COMCH_FRAME_MSG, 1, payload, COMCH_MAX_MSG_SIZE), &f), DOCA_SUCCESS);
	assert_int_equal(parse(make(COMCH_FRAME_MSG, 1, payload, COMCH_MAX_MSG_SIZE + 1), &f),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(comch_frame_parse(buf, make(COMCH_FRAME_MSG, 1, payload, 65), 64, "test", &f),
			 DOCA_ERROR_INVALID_VALUE);
	/* Fixed-size types. */
	assert_int_equal(parse(make(COMCH_FRAME_BYE, 1, payload, 1), &f), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(parse(make(COMCH_FRAME_BYE, 1, payload, 0), &f), DOCA_SUCCESS);
	assert_int_equal(parse(make(COMCH_FRAME_WELCOME, 1, payload, 7), &f), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(parse(make(COMCH_FRAME_WELCOME, 1, payload, 9), &f), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(parse(make(COMCH_FRAME_REJECT, 1, payload, 3), &f), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(parse(make(COMCH_FRAME_REJECT, 1, payload, 4), &f), DOCA_SUCCESS);
}

/* CONSUMER_NEW: exactly its size, every field in range, reserved zero. */
static void test_consumer_frames(void **state)
{
	struct comch_frame f;
	uint8_t p[COMCH_CONSUMER_NEW_LEN + 1];
	const struct {
		uint32_t id, slots, size, imm;
	} bad[] = {
		{0, 4, 64, 0},
		{1, 0, 64, 0},
		{1, COMCH_FP_MAX_SLOTS + 1, 64, 0},
		{1, 4, 0, 0},
		{1, 4, COMCH_FP_MAX_BUF + 1, 0},
		{1, 4, 64, COMCH_FP_MAX_IMM + 1},
	};

	(void)state;
	comch_consumer_new_encode(p, 7, 4, 64, COMCH_FP_MAX_IMM);
	assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_NEW, 1, p, COMCH_CONSUMER_NEW_LEN), &f), DOCA_SUCCESS);
	assert_int_equal(f.u.consumer.id, 7);
	assert_int_equal(f.u.consumer.slots, 4);
	assert_int_equal(f.u.consumer.slot_size, 64);
	assert_int_equal(f.u.consumer.imm_max, COMCH_FP_MAX_IMM);
	assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_NEW, 1, p, COMCH_CONSUMER_NEW_LEN - 1), &f),
			 DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_NEW, 1, p, COMCH_CONSUMER_NEW_LEN + 1), &f),
			 DOCA_ERROR_INVALID_VALUE);
	p[16] = 1; /* reserved */
	assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_NEW, 1, p, COMCH_CONSUMER_NEW_LEN), &f),
			 DOCA_ERROR_INVALID_VALUE);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		comch_consumer_new_encode(p, bad[i].id, bad[i].slots, bad[i].size, bad[i].imm);
		assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_NEW, 1, p, COMCH_CONSUMER_NEW_LEN), &f),
				 DOCA_ERROR_INVALID_VALUE);
	}
	memset(p, 0, sizeof(p));
	assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_GONE, 1, p, 4), &f), DOCA_ERROR_INVALID_VALUE); /* id 0 */
	p[0] = 9;
	assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_GONE, 1, p, 4), &f), DOCA_SUCCESS);
	assert_int_equal(f.u.consumer.id, 9);
	assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_GONE, 1, p, 3), &f), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(parse(make(COMCH_FRAME_CONSUMER_GONE, 1, p, 5), &f), DOCA_ERROR_INVALID_VALUE);
}

static void test_hello(void **state)
{
	uint8_t secret[COMCH_SECRET_LEN];
	uint8_t hello[COMCH_HELLO_FIXED_LEN + COMCH_MAX_NAME_LEN + 8];
	struct comch_frame f;
	uint32_t len;

	(void)state;
	memset(secret, 0xab, sizeof(secret));
	len = comch_hello_encode(hello, 4080, 16, "srv", 3, secret);
	assert_int_equal(parse(make(COMCH_FRAME_HELLO, 1, hello, len), &f), DOCA_SUCCESS);
	assert_int_equal(f.u.hello.max_msg_size, 4080);
	assert_int_equal(f.u.hello.recv_queue_size, 16);
	assert_int_equal(f.u.hello.name_len, 3);
	assert_memory_equal(f.u.hello.name, "srv", 3);
	assert_memory_equal(f.u.hello.secret, secret, COMCH_SECRET_LEN);

	/* Shorter than the fixed part. */
	assert_int_equal(parse(make(COMCH_FRAME_HELLO, 1, hello, COMCH_HELLO_FIXED_LEN - 1), &f),
			 DOCA_ERROR_INVALID_VALUE);
	/* Name length disagreeing with the payload, both ways. */
	assert_int_equal(parse(make(COMCH_FRAME_HELLO, 1, hello, len - 1), &f), DOCA_ERROR_INVALID_VALUE);
	hello[len] = 'x';
	assert_int_equal(parse(make(COMCH_FRAME_HELLO, 1, hello, len + 1), &f), DOCA_ERROR_INVALID_VALUE);
	/* Name length 0 and too long. */
	hello[8] = 0;
	hello[9] = 0;
	assert_int_equal(parse(make(COMCH_FRAME_HELLO, 1, hello, COMCH_HELLO_FIXED_LEN), &f),
			 DOCA_ERROR_INVALID_VALUE);
	hello[8] = 0xff;
	hello[9] = 0xff;
	assert_int_equal(parse(make(COMCH_FRAME_HELLO, 1, hello, len), &f), DOCA_ERROR_INVALID_VALUE);
	/* A NUL inside the name. */
	len = comch_hello_encode(hello, 4080, 16, "a\0b", 3, secret);
	assert_int_equal(parse(make(COMCH_FRAME_HELLO, 1, hello, len), &f), DOCA_ERROR_INVALID_VALUE);
	/* The reserved field. */
	len = comch_hello_encode(hello, 4080, 16, "srv", 3, secret);
	hello[10] = 1;
	assert_int_equal(parse(make(COMCH_FRAME_HELLO, 1, hello, len), &f), DOCA_ERROR_INVALID_VALUE);
}

/* Random bytes never crash the parser, and what it accepts is consistent. */
static void test_fuzz(void **state)
{
	struct comch_frame f;
	unsigned int seed = 12345, accepted = 0;

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(rand_r(&seed) % 64);

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rand_r(&seed);
		if (round % 2 == 0 && len >= COMCH_HDR_LEN) /* valid header, random rest */
			comch_frame_put_hdr(buf, (uint16_t)(rand_r(&seed) % 7), 1, (uint32_t)(len - COMCH_HDR_LEN));
		if (parse(len, &f) == DOCA_SUCCESS) {
			accepted++;
			assert_int_equal(f.len, len - COMCH_HDR_LEN);
			assert_true(f.type >= COMCH_FRAME_HELLO && f.type <= COMCH_FRAME_BYE);
		}
	}
	assert_true(accepted > 0); /* the valid-header half is sometimes well formed */
}

static void test_name_check(void **state)
{
	char name[COMCH_MAX_NAME_LEN + 1];

	(void)state;
	assert_int_equal(comch_name_check(NULL, "t"), DOCA_ERROR_INVALID_VALUE);
	assert_int_equal(comch_name_check("", "t"), DOCA_ERROR_INVALID_VALUE);
	memset(name, 'n', sizeof(name));
	name[COMCH_MAX_NAME_LEN] = '\0'; /* 120 bytes: no room for the NUL */
	assert_int_equal(comch_name_check(name, "t"), DOCA_ERROR_INVALID_VALUE);
	name[COMCH_MAX_NAME_LEN - 1] = '\0'; /* 119: the longest */
	assert_int_equal(comch_name_check(name, "t"), DOCA_SUCCESS);
}

/* A server's files live on its PCIe function's link: a client on that
 * function finds it, whatever bytes its name holds; one on another
 * function of the same host does not. */
static void test_rendezvous_link(void **state)
{
	char tmpl[] = "/tmp/comch-test-XXXXXX";
	const char *name = "a/../odd name:\\*?";
	struct softdoca_pcie_link a, b;
	struct comch_listener l;
	uint8_t secret[COMCH_SECRET_LEN];
	char *dir = mkdtemp(tmpl);
	int fd = -1;

	(void)state;
	assert_non_null(dir);
	setenv("SOFTDOCA_PCIE_DIR", dir, 1);
	memset(&a, 0, sizeof(a));
	snprintf(a.pci_addr, sizeof(a.pci_addr), "0000:00:01.0");
	snprintf(a.dir, sizeof(a.dir), "%s", dir);
	b = a;
	snprintf(b.pci_addr, sizeof(b.pci_addr), "0000:00:02.0");
	assert_int_equal(comch_listener_open(&l, &a, name), DOCA_SUCCESS);
	assert_memory_equal(l.sock_name, "0000:00:01.0.comch-", 19);
	assert_int_equal(comch_connect(&b, name, &fd, secret), DOCA_ERROR_NOT_FOUND);
	assert_int_equal(comch_connect(&a, name, &fd, secret), DOCA_SUCCESS);
	assert_memory_equal(secret, l.secret, COMCH_SECRET_LEN);
	close(fd);
	comch_listener_close(&l);
	assert_int_equal(rmdir(dir), 0); /* the listener removed its files */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msg_roundtrip),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_bad_types_and_sizes),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_consumer_frames),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_name_check),
		cmocka_unit_test(test_rendezvous_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
