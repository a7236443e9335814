#!/usr/bin/env bash
# Build the fuzz targets with clang's libFuzzer (plus ASan/UBSan) and run
# each for a share of SECONDS: the parser target (core and wire code
# compiled in, so every parser is instrumented), then the UCX worker
# address target, which gives every address the check accepts to real UCX.
# The second may connect to whatever a mutated address names, so it runs in
# private network, pid, IPC and mount namespaces (root and unshare(1));
# without them only UCX's self transport is enabled, which is said.
# usage: run_fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-20}
secs_parsers=$(( (secs + 1) / 2 ))
secs_addr=$(( secs - secs_parsers > 0 ? secs - secs_parsers : 1 ))
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
"$work/fuzz_parsers" -max_total_time="$secs_parsers" -max_len=4096 -artifact_prefix="$work/" "$work/corpus" 2>&1 | tail -n 12
echo "fuzz: no crash in ${secs_parsers}s (parsers)"

clang -g -O1 -std=c11 -D_GNU_SOURCE -DDOCA_ALLOW_EXPERIMENTAL_API \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Isrc/core -Isrc \
	tests/fuzz/fuzz_ucx_addr.c src/engine/ucx_addr.c src/core/*.c -lucp -lucs -lpthread \
	-o "$work/fuzz_ucx_addr"
mkdir -p "$work/addr_corpus"
# UCX's allocator hooks and leak reports at exit are not ours to judge.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_EVENTS=no UCX_LOG_LEVEL=fatal
export FUZZ_UCX_ADDR_SEEDS="$work/addr_corpus"
addr_run=("$work/fuzz_ucx_addr" -max_total_time="$secs_addr" -max_len=4096 -timeout=20
	-artifact_prefix="$work/addr-" "$work/addr_corpus")
set +e
if [ "$(id -u)" = 0 ] && unshare -n -i -p -f -m --mount-proc true 2>/dev/null; then
	echo "fuzz: UCX address target in private net/pid/ipc/mount namespaces"
	unshare -n -i -p -f -m --mount-proc bash -c \
		'ip link set lo up && mount -t tmpfs tmpfs /dev/shm && exec "$@"' fuzz "${addr_run[@]}" \
		>"$work/addr.log" 2>&1
else
	echo "fuzz: no private namespaces (needs root and unshare): UCX address target with UCX_TLS=self only"
	UCX_TLS=self "${addr_run[@]}" >"$work/addr.log" 2>&1
fi
status=$?
set -e
tail -n 12 "$work/addr.log"
if [ "$status" != 0 ]; then
	cp "$work"/addr-* "$work/addr.log" /tmp/ 2>/dev/null || true
	echo "fuzz: UCX address target failed ($status); its log and inputs are in /tmp (addr.log, addr-*)"
	exit 1
fi
echo "fuzz: no crash in ${secs_addr}s (UCX addresses)"
