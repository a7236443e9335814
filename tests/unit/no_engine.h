/*
 * What the unit tests of contexts softdoca has no engine for
 * (test_compress.c, test_erasure_coding.c) share, so that each keeps only
 * its own cases: capture of the SDK's ERROR lines, assert_refused, and a
 * group fixture of the first soft device with a started mmap over test
 * memory and two bufs on it (src holding data, dst empty).
 */
#ifndef TEST_NO_ENGINE_H_
#define TEST_NO_ENGINE_H_

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_mmap.h>

/* ---- SDK log capture ---- */

extern char last_error[]; /* the last ERROR line */
extern int error_lines;	  /* ERROR lines the library logged so far */

/* The last ERROR line contains word (NULL: nothing to look for). */
void assert_line_has(const char *word);

/* expr answers code with one new ERROR line that contains each of the
 * given words (NULL: no word to look for). */
#define assert_refused(expr, code, word1, word2) \
	do { \
		int before_ = error_lines; \
		assert_int_equal((expr), (code)); \
		assert_int_equal(error_lines, before_ + 1); \
		assert_line_has(word1); \
		assert_line_has(word2); \
	} while (0)

/* ---- fixture ---- */

struct no_engine_fixture {
	struct doca_devinfo **list;
	uint32_t num_devs;
	struct doca_devinfo *devinfo; /* list[0] */
	struct doca_dev *dev;	      /* opened from list[0] */
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *src;
	struct doca_buf *dst;
};

extern struct no_engine_fixture F;

/* cmocka group setup and teardown: fill F, empty it. Setup also starts
 * the log capture (WARNING and above). */
int no_engine_group_setup(void **state);
int no_engine_group_teardown(void **state);

#endif /* TEST_NO_ENGINE_H_ */
