#!/usr/bin/env bash
# Every public header compiles on its own, as C11 and as C++11, with and
# without DOCA_ALLOW_EXPERIMENTAL_API, warning-free; and an experimental
# call without the define warns but still compiles.
set -uo pipefail
inc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

for h in "$inc"/doca_*.h; do
	name=$(basename "$h")
	printf '#include <%s>\nint softdoca_header_check_%s;\n' "$name" "${name%.h}" >"$tmp/t.c"
	cp "$tmp/t.c" "$tmp/t.cpp"
	for def in "" "-DDOCA_ALLOW_EXPERIMENTAL_API"; do
		cc -std=c11 -Wall -Wextra -Werror -pedantic -Wno-variadic-macros -Wno-gnu-zero-variadic-macro-arguments \
			$def -I"$inc" -c "$tmp/t.c" -o "$tmp/t.o" 2>"$tmp/err" ||
			{ echo "FAIL: $name as C $def"; cat "$tmp/err"; fail=1; }
		c++ -std=c++11 -Wall -Wextra -Werror $def -I"$inc" -c "$tmp/t.cpp" -o "$tmp/t.o" 2>"$tmp/err" ||
			{ echo "FAIL: $name as C++ $def"; cat "$tmp/err"; fail=1; }
	done
done

# A DMA program that includes only DOCA headers (the set NVIDIA's
# dma_copy_host includes) may use the <inttypes.h> and <stdio.h> names.
cat >"$tmp/std.c" <<'SRC'
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
int softdoca_std_check(char *out, size_t len, uint64_t v)
{
	return snprintf(out, len, "%" PRIu64 " %" PRIx64, v, v);
}
SRC
cp "$tmp/std.c" "$tmp/std.cpp"
cc -std=c11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/std.c" -o "$tmp/std.o" 2>"$tmp/err" ||
	{ echo "FAIL: PRIu64 with only DOCA headers, as C"; cat "$tmp/err"; fail=1; }
c++ -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/std.cpp" -o "$tmp/std.o" 2>"$tmp/err" ||
	{ echo "FAIL: PRIu64 with only DOCA headers, as C++"; cat "$tmp/err"; fail=1; }

# The set NVIDIA's cache_invalidate sample includes, together, and the
# names it and clock_cross_timestamp use.
cat >"$tmp/core.c" <<'SRC'
#include <doca_mmap.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dma.h>
#include <doca_types.h>
#include <doca_log.h>
#include <doca_pe.h>
#include <doca_mmap_advise.h>
#include <doca_buf_array.h>
#include <doca_clock.h>
static void on_inv(struct doca_mmap_advise_task_invalidate_cache *t, union doca_data a, union doca_data b)
{
	(void)t; (void)a; (void)b;
}
doca_mmap_advise_task_invalidate_cache_completion_cb_t softdoca_core_cb = on_inv;
doca_dpa_dev_buf_arr_t softdoca_core_arr;
const uint64_t softdoca_core_clocks = DOCA_CLOCK_NIC_FREE_RUNNING | DOCA_CLOCK_NIC_REAL_TIME |
	DOCA_CLOCK_NIC_DPA_TIMER | DOCA_CLOCK_HOST_COUNTER_CYCLES | DOCA_CLOCK_HOST_REAL_TIME |
	DOCA_CLOCK_HOST_MONOTONIC | DOCA_CLOCK_HOST_MONOTONIC_RAW;
union doca_clock_timespec_t softdoca_core_ts;
char softdoca_core_name[DOCA_LOGGER_NAME_SIZE];
struct doca_logger *softdoca_core_logger;
SRC
cp "$tmp/core.c" "$tmp/core.cpp"
for def in "" "-DDOCA_ALLOW_EXPERIMENTAL_API"; do
	cc -std=c11 -Wall -Wextra -Werror $def -I"$inc" -c "$tmp/core.c" -o "$tmp/core.o" 2>"$tmp/err" ||
		{ echo "FAIL: the core headers together, as C $def"; cat "$tmp/err"; fail=1; }
	c++ -std=c++11 -Wall -Wextra -Werror $def -I"$inc" -c "$tmp/core.cpp" -o "$tmp/core.o" 2>"$tmp/err" ||
		{ echo "FAIL: the core headers together, as C++ $def"; cat "$tmp/err"; fail=1; }
done

cat >"$tmp/exp.c" <<'SRC'
#include <doca_version.h>
const char *f(void) { return doca_version_runtime(); }
SRC
if ! cc -std=c11 -Wall -I"$inc" -c "$tmp/exp.c" -o "$tmp/exp.o" 2>"$tmp/err"; then
	echo "FAIL: experimental call without DOCA_ALLOW_EXPERIMENTAL_API must compile"; cat "$tmp/err"; fail=1
elif ! grep -q deprecated "$tmp/err"; then
	echo "FAIL: experimental call without DOCA_ALLOW_EXPERIMENTAL_API must warn"; fail=1
fi
# softdoca's own headers (softdoca_*.h) alone too, as C and as C++.
for h in "$inc"/softdoca_*.h; do
	[ -e "$h" ] || continue
	name=$(basename "$h")
	printf '#include <%s>\nint softdoca_header_check_%s;\n' "$name" "${name%.h}" >"$tmp/s.c"
	cp "$tmp/s.c" "$tmp/s.cpp"
	cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -c "$tmp/s.c" -o "$tmp/s.o" 2>"$tmp/err" ||
		{ echo "FAIL: $name as C"; cat "$tmp/err"; fail=1; }
	c++ -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/s.cpp" -o "$tmp/s.o" 2>"$tmp/err" ||
		{ echo "FAIL: $name as C++"; cat "$tmp/err"; fail=1; }
done
# One C++ program that includes every installed header and uses every
# DOCA_STABLE call, built as a C++ program of a DOCA user would be: g++
# -Wall -Wextra -Werror and no DOCA_ALLOW_EXPERIMENTAL_API, so a call marked
# experimental (deprecated without the define) fails it. It also calls the
# Comch getters with const tasks, as DOCA 3.x declares them.
if ! command -v g++ >/dev/null 2>&1; then
	echo "SKIP: the all-headers C++ program: g++ is not installed (scripts/setup.sh installs it)"
else
	{
		for h in "$inc"/doca_*.h "$inc"/softdoca_*.h; do
			printf '#include <%s>\n' "$(basename "$h")"
		done
		echo 'void softdoca_all_headers_stable(void);'
		echo 'void softdoca_all_headers_stable(void)'
		echo '{'
		echo '	static void (*volatile used[])(void) = {'
		# The function named on the line after each DOCA_STABLE marking.
		for h in "$inc"/doca_*.h; do
			grep -A1 '^DOCA_STABLE$' "$h" | grep -o 'doca_[a-z0-9_]*(' | tr -d '('
		done | sort -u | sed 's/.*/		reinterpret_cast<void (*)(void)>(\&&),/'
		echo '	};'
		echo '	(void)used;'
		echo '}'
		cat <<'SRC'
uint32_t softdoca_const_getters(const struct doca_comch_producer_task_send *send,
				const struct doca_comch_consumer_task_post_recv *recv,
				const struct doca_comch_consumer_completion *comp);
uint32_t softdoca_const_getters(const struct doca_comch_producer_task_send *send,
				const struct doca_comch_consumer_task_post_recv *recv,
				const struct doca_comch_consumer_completion *comp)
{
	const struct doca_buf *sb = doca_comch_producer_task_send_get_buf(send);
	const uint8_t *si = doca_comch_producer_task_send_get_imm_data(send);
	struct doca_buf *rb = doca_comch_consumer_task_post_recv_get_buf(recv);
	const uint8_t *ri = doca_comch_consumer_task_post_recv_get_imm_data(recv);
	uint32_t n = doca_comch_producer_task_send_get_consumer_id(send) +
		     doca_comch_producer_task_send_get_imm_data_len(send) +
		     doca_comch_consumer_task_post_recv_get_producer_id(recv) +
		     doca_comch_consumer_task_post_recv_get_imm_data_len(recv);
	uint32_t a = 0, b = 0;

	(void)comp;
	(void)sb;
	(void)si;
	(void)rb;
	(void)ri;
	return n + a + b;
}
SRC
	} >"$tmp/all.cpp"
	# The const completion getters are DPA calls, experimental in DOCA too:
	# they are compiled with the define, in their own unit below.
	g++ -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/all.cpp" -o "$tmp/all.o" 2>"$tmp/err" ||
		{ echo "FAIL: every installed header with every DOCA_STABLE call, as C++ without DOCA_ALLOW_EXPERIMENTAL_API"; cat "$tmp/err"; fail=1; }
	n=$(grep -c 'reinterpret_cast' "$tmp/all.cpp")
	[ "$n" -ge 200 ] || { echo "FAIL: only $n DOCA_STABLE calls found in $inc"; fail=1; }
	cat >"$tmp/comp.cpp" <<'SRC'
#include <doca_comch_consumer.h>
doca_error_t softdoca_const_completion(const struct doca_comch_consumer_completion *comp, uint32_t *out);
doca_error_t softdoca_const_completion(const struct doca_comch_consumer_completion *comp, uint32_t *out)
{
	doca_error_t err = doca_comch_consumer_completion_get_max_num_consumers(comp, out);

	if (err == DOCA_SUCCESS)
		err = doca_comch_consumer_completion_get_max_num_recv(comp, out);
	if (err == DOCA_SUCCESS)
		err = doca_comch_consumer_completion_get_imm_data_len(comp, out);
	return err;
}
SRC
	g++ -std=c++11 -Wall -Wextra -Werror -DDOCA_ALLOW_EXPERIMENTAL_API -I"$inc" -c "$tmp/comp.cpp" -o "$tmp/comp.o" \
		2>"$tmp/err" || { echo "FAIL: the const Comch completion getters, as C++"; cat "$tmp/err"; fail=1; }
	echo "all installed headers in one C++ program: $n DOCA_STABLE calls, warning-free without DOCA_ALLOW_EXPERIMENTAL_API"
fi
[ $fail -eq 0 ] && echo "all public headers compile alone as C and C++"
exit $fail
