#!/usr/bin/env bash
# doca_bitfield.h gives the right constants as C11 and C++11, on this host
# and (with clang, when present) on big-endian targets, where the header's
# other byte-order branch is the one compiled.
set -uo pipefail
inc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

cp "$src" "$tmp/consts.cpp"
cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -c "$src" -o "$tmp/c.o" 2>"$tmp/err" ||
	{ echo "FAIL: doca_bitfield.h constants as C"; cat "$tmp/err"; fail=1; }
c++ -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/consts.cpp" -o "$tmp/cpp.o" 2>"$tmp/err" ||
	{ echo "FAIL: doca_bitfield.h constants as C++"; cat "$tmp/err"; fail=1; }

if command -v clang >/dev/null && command -v clang++ >/dev/null; then
	# A foreign target has no libc headers here: an empty <arpa/inet.h>
	# stands in (the constants need nothing from it), and -ffreestanding
	# lets clang's own <stdint.h> serve.
	mkdir -p "$tmp/stub/arpa"
	: >"$tmp/stub/arpa/inet.h"
	clang -std=c11 -Wall -Wextra -Werror -pedantic -I"$inc" -fsyntax-only "$src" 2>"$tmp/err" ||
		{ echo "FAIL: doca_bitfield.h constants with clang"; cat "$tmp/err"; fail=1; }
	for target in s390x-linux-gnu powerpc64-linux-gnu aarch64_be-linux-gnu; do
		clang --target="$target" -ffreestanding -std=c11 -Wall -Wextra -Werror \
			-I"$tmp/stub" -I"$inc" -fsyntax-only "$src" 2>"$tmp/err" ||
			{ echo "FAIL: doca_bitfield.h constants on big-endian $target"; cat "$tmp/err"; fail=1; }
	done
	clang++ --target=s390x-linux-gnu -ffreestanding -std=c++11 -Wall -Wextra -Werror \
		-I"$tmp/stub" -I"$inc" -fsyntax-only "$tmp/consts.cpp" 2>"$tmp/err" ||
		{ echo "FAIL: doca_bitfield.h constants as C++ on big-endian s390x"; cat "$tmp/err"; fail=1; }
	# To a file, not a pipe: grep -q would end the pipe early under pipefail.
	clang --target=s390x-linux-gnu -ffreestanding -dM -E - </dev/null >"$tmp/macros"
	grep -q '^#define __BYTE_ORDER__ __ORDER_BIG_ENDIAN__$' "$tmp/macros" ||
		{ echo "FAIL: the s390x target is not big endian: the check above proved nothing"; fail=1; }
else
	echo "clang not found: big-endian targets not checked"
fi
[ $fail -eq 0 ] && echo "doca_bitfield.h constants hold"
exit $fail
