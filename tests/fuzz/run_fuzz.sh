#!/usr/bin/env bash
# Build the fuzz targets with clang's libFuzzer (plus ASan/UBSan) and run
# each for an equal share of the time budget:
#   fuzz_parsers  the parsers of untrusted bytes (core and wire code
#                 compiled in)
#   fuzz_ucx_addr the UCX worker address check (ucx_addr.c), every address
#                 it accepts given to real UCX
#   fuzz_connect  descriptors and RDMA CM frames into a live context (core,
#                 rdma and engine compiled in, UCX linked)
#   fuzz_comch    Comch frames: the parser, and frames (with descriptors)
#                 into a live server and a live client over their sockets
#                 (core and comch compiled in); seeds in
#                 tests/fuzz/corpus/comch (one valid frame of each type,
#                 and exchanges with a server and a client)
#   fuzz_argp_json argp's -j configuration files: the JSON reader alone and
#                 whole argp sessions (argp and core compiled in), from the
#                 seeds in tests/fuzz/corpus/argp_json
#   fuzz_link     what a peer writes to a live context's TCP link port:
#                 raw, after a valid AUTH, and on a connection the context
#                 made to a peer of ours; an honest client every 16
#                 inputs (core, rdma and engine compiled in, UCX_TLS=tcp);
#                 seeds in tests/fuzz/corpus/link (link_seed.h), shared
#                 with tests/rdma/link_netfuzz
# The two UCX targets may connect to whatever a mutated address names (an
# IP address, a pid for CMA, a shared-memory segment), so they run in
# private network, pid, IPC and mount namespaces (root and unshare(1)):
# nothing leaves them. Where those cannot be had they are skipped with a
# reason.
# usage: run_fuzz.sh [SECONDS] [TARGET...]   (targets: parsers addr connect comch argp link)
# FUZZ_KEEP=DIR keeps the work directory (corpora, crash files) in DIR.
# Exit: 0 no crash, 1 a crash (its input is printed as hex), 77 skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-20}
shift || true
targets=${*:-parsers addr connect comch argp link}
command -v clang >/dev/null || { echo "SKIP: clang not installed"; exit 77; }
if [ -n "${FUZZ_KEEP:-}" ]; then
	work=$FUZZ_KEEP
	mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	>"$work/probe.c"
if ! clang -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" 2>/dev/null; then
	echo "SKIP: clang's libFuzzer runtime is not installed (Debian: libclang-rt-dev)"
	exit 77
fi

cflags=(-g -O1 -std=c11 -D_GNU_SOURCE -DDOCA_ALLOW_EXPERIMENTAL_API
	'-fsanitize=fuzzer,address,undefined' -fno-sanitize-recover=undefined
	-Iinclude -Isrc/core -Isrc -Isrc/engine -Isrc/rdma)
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# UCX is not instrumented and frees some of an endpoint's memory lazily:
# leaks are looked for in softdoca only. UCX's own error handler would
# catch the crash before the sanitizer and libFuzzer could report it;
# UCX reads these at load time, so they go in the environment.
printf 'leak:libucs.so\nleak:libucp.so\nleak:libuct.so\n' >"$work/lsan.supp"
export LSAN_OPTIONS=suppressions=$work/lsan.supp
export UCX_HANDLE_ERRORS=none UCX_LOG_LEVEL=fatal UCX_WARN_UNUSED_ENV_VARS=n

# A crash: say which target, show the input as hex (the reproducer), fail.
report_crash() {
	local name=$1 f
	for f in "$work/$name"-crash-* "$work/$name"-leak-* "$work/$name"-timeout-* "$work/$name"-oom-*; do
		[ -f "$f" ] || continue
		echo "fuzz $name: crash input ($(stat -c %s "$f") bytes, ${f##*/}):"
		od -An -tx1 -v "$f" | tr -s ' ' | sed 's/^/    /'
	done
}

# run_target NAME SECONDS ARGS...: the fuzzer's tail and a verdict.
run_target() {
	local name=$1 t=$2 rc t0
	shift 2
	t0=$(date +%s.%N)
	set +e
	"$@" -error_exitcode=1 -max_total_time="$t" -artifact_prefix="$work/$name-" >"$work/$name.log" 2>&1
	rc=$?
	set -e
	tail -n 12 "$work/$name.log"
	if [ "$rc" -ne 0 ]; then
		# What the target and the sanitizer said (the tail above may
		# show only libFuzzer's dictionary).
		grep -E '^(fuzz_[a-z_]+:|==[0-9]+==ERROR|SUMMARY)|^ +#[0-9]+ 0x' "$work/$name.log" | head -n 40 || true
		echo "fuzz $name: CRASH after $(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')s (exit $rc)"
		report_crash "$name"
		return 1
	fi
	echo "fuzz $name: no crash in ${t}s"
}

run_parsers() {
	clang "${cflags[@]}" tests/fuzz/fuzz_parsers.c src/engine/wire.c src/engine/link_tcp_wire.c src/core/*.c -lpthread \
		-o "$work/fuzz_parsers" || { echo "fuzz parsers: build failed"; return 1; }
	mkdir -p "$work/corpus_parsers"
	# Seeds: a truncated-looking descriptor of each kind.
	printf '\x00SDMM\x01\x00' >"$work/corpus_parsers/mmap"
	printf '\x01SDRC\x01\x00\x00\x00' >"$work/corpus_parsers/conn"
	printf '\x02SDSE\x01\x00' >"$work/corpus_parsers/event"
	printf '\x03SDPX\x01\x00\x00\x00\x58\x00\x00\x00\x01' >"$work/corpus_parsers/pci"
	printf '\x04\x03\x00\x01\x00' >"$work/corpus_parsers/req"
	run_target parsers "$1" "$work/fuzz_parsers" -max_len=4096 "$work/corpus_parsers"
}

run_argp() {
	clang "${cflags[@]}" -Isrc/argp tests/fuzz/fuzz_argp_json.c src/argp/*.c src/core/*.c -lpthread \
		-o "$work/fuzz_argp_json" || { echo "fuzz argp: build failed"; return 1; }
	mkdir -p "$work/corpus_argp"
	cp tests/fuzz/corpus/argp_json/* "$work/corpus_argp/"
	# argp prints its usage on every refused file: the target's stdout
	# and stderr are closed (libFuzzer and the sanitizers keep theirs).
	# -max_len: deep nesting, long strings and many keys fit; the 4 MiB
	# file limit and many keys are test_argp's.
	run_target argp "$1" "$work/fuzz_argp_json" -max_len=65536 -timeout=10 -close_fd_mask=3 \
		-dict=tests/fuzz/argp_json.dict "$work/corpus_argp"
}

# Inside new network (only lo, up), pid, IPC and mount (a private
# /dev/shm) namespaces: whatever a mutated address names, nothing outside
# is reached.
unshare_args=(-n -i -p -f -m --mount-proc)
in_private_ns() {
	unshare "${unshare_args[@]}" bash -c 'ip link set lo up && mount -t tmpfs tmpfs /dev/shm && exec "$@"' fuzz "$@"
}

have_private_ns() {
	[ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null &&
		in_private_ns true 2>/dev/null
}

run_addr() {
	if ! have_private_ns; then
		echo "SKIP fuzz addr: needs private network, pid, IPC and mount namespaces (root, unshare, ip)," \
			"since mutated UCX addresses may name real hosts, processes and segments"
		return 77
	fi
	clang "${cflags[@]}" tests/fuzz/fuzz_ucx_addr.c src/engine/ucx_addr.c src/core/*.c -lucp -lucs -lpthread \
		-o "$work/fuzz_ucx_addr" || { echo "fuzz addr: build failed"; return 1; }
	mkdir -p "$work/corpus_addr"
	# The target writes its own worker's address as the seed at startup.
	FUZZ_UCX_ADDR_SEEDS="$work/corpus_addr" UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none \
		UCX_MEM_EVENTS=no run_target addr "$1" in_private_ns "$work/fuzz_ucx_addr" -max_len=4096 \
		-timeout=20 -rss_limit_mb=4096 "$work/corpus_addr"
}

run_connect() {
	if ! have_private_ns; then
		echo "SKIP fuzz connect: needs private network, pid, IPC and mount namespaces (root, unshare, ip)," \
			"since mutated UCX addresses may name real hosts, processes and segments"
		return 77
	fi
	clang "${cflags[@]}" tests/fuzz/fuzz_connect.c src/core/*.c src/rdma/*.c src/engine/*.c \
		-lucp -lucs -lpthread -o "$work/fuzz_connect" || { echo "fuzz connect: build failed"; return 1; }
	mkdir -p "$work/corpus_connect"
	# The seeds (a real descriptor of the live context, a real CM request
	# frame carrying it) are written by the target at startup, before
	# libFuzzer reads the corpus. -max_len: a CM frame with the largest
	# descriptor; the timeout is far above the per-input bounds (a few s).
	FUZZ_CONNECT_SEED_DIR="$work/corpus_connect" run_target connect "$1" \
		in_private_ns "$work/fuzz_connect" -max_len=8500 -timeout=20 -rss_limit_mb=4096 \
		"$work/corpus_connect"
}

run_comch() {
	clang "${cflags[@]}" -Isrc/comch tests/fuzz/fuzz_comch.c src/comch/*.c src/core/*.c -lpthread \
		-o "$work/fuzz_comch" || { echo "fuzz comch: build failed"; return 1; }
	mkdir -p "$work/corpus_comch"
	cp tests/fuzz/corpus/comch/* "$work/corpus_comch/"
	# -max_len: a few frames of the largest size.
	run_target comch "$1" "$work/fuzz_comch" -max_len=16384 -timeout=20 "$work/corpus_comch"
}

run_link() {
	clang "${cflags[@]}" tests/fuzz/fuzz_link.c src/core/*.c src/rdma/*.c src/engine/*.c -lucp -lucs -lpthread \
		-o "$work/fuzz_link" || { echo "fuzz link: build failed"; return 1; }
	mkdir -p "$work/corpus_link"
	cp tests/fuzz/corpus/link/* "$work/corpus_link/"
	# -max_len: the largest seed and room to grow; every wait of an
	# input is bounded far below the timeout.
	run_target link "$1" "$work/fuzz_link" -max_len=8192 -timeout=20 -rss_limit_mb=4096 "$work/corpus_link"
}

n=$(echo "$targets" | wc -w)
status=0 ran=0
for t in $targets; do
	share=$secs
	if [ "$n" -gt 1 ]; then
		share=$((secs / n))
	fi
	[ "$share" -ge 1 ] || share=1
	set +e
	"run_$t" "$share"
	rc=$?
	set -e
	case $rc in
	0) ran=$((ran + 1)) ;;
	77) ;;
	*) status=1 ;;
	esac
done
[ "$status" -ne 0 ] && exit 1
[ "$ran" -eq 0 ] && exit 77
exit 0
