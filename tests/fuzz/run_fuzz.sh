#!/usr/bin/env bash
# Build the parser fuzz target with clang's libFuzzer (plus ASan/UBSan),
# compiling the core and the wire code into it so every parser is
# instrumented, and run it for a short time.
# usage: run_fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-20}
command -v clang >/dev/null || { echo "SKIP: clang not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	>"$work/probe.c"
if ! clang -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" 2>/dev/null; then
	echo "SKIP: clang's libFuzzer runtime is not installed (Debian: libclang-rt-dev)"
	exit 77
fi

clang -g -O1 -std=c11 -D_GNU_SOURCE -DDOCA_ALLOW_EXPERIMENTAL_API \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Isrc/core -Isrc -Isrc/engine \
	tests/fuzz/fuzz_parsers.c src/engine/wire.c src/core/*.c -lpthread \
	-o "$work/fuzz_parsers"
mkdir -p "$work/corpus"
# Seeds: a truncated-looking descriptor of each kind.
printf '\x00SDMM\x01\x00' >"$work/corpus/mmap"
printf '\x01SDRC\x01\x00\x00\x00' >"$work/corpus/conn"
printf '\x02SDSE\x01\x00' >"$work/corpus/event"
printf '\x03\x03\x00\x01\x00' >"$work/corpus/req"
"$work/fuzz_parsers" -max_total_time="$secs" -max_len=4096 -artifact_prefix="$work/" "$work/corpus" 2>&1 | tail -n 12
echo "fuzz: no crash in ${secs}s"
