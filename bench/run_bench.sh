#!/usr/bin/env bash
# softdoca against raw UCX, on the same host, transport and run.
#
#   bench/run_bench.sh [--quick] [--transports "shm tcp"] [--build-dir DIR]
#                      [--keep DIR] [--trace-only] [--trace-baseline BUILD]
#
# First the machine's single-thread memcpy (softdoca_perf --memcpy), then
# for each transport (shm: UCX_TLS=self,sm,cma; tcp: UCX_TLS=tcp over lo)
# tools/softdoca_perf with the server progressing and with it blocked in
# read(2) (bandwidth, message rate, allocate-per-operation rate, latency;
# then 8 connections against 1), then ucx_perftest (Debian's ucx-utils)
# with the same UCX settings. It prints one table per transport (metric,
# size, softdoca, UCX reference, ratio softdoca/UCX), the CPU time per GB
# of the bandwidth rows, and the rows of issue 12's table with their
# reference, ratio, goal and whether it is met. Last, the cost of the
# timeline (SOFTDOCA_TRACE): the 1 KiB write message rate with tracing off,
# on, and off again, in that order (--trace-only: only this part;
# --trace-baseline BUILD: also before and after them, the same with the
# softdoca_perf of BUILD, a build of softdoca without the timeline). See
# bench/README.md.
#
# A benchmark, not a test: it exits 0 whatever the figures are (non-zero
# only when it cannot run at all). About 1.5 minutes on an idle 2-core machine;
# --quick (fewer sizes, shorter runs) well under one.
set -u

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)

QUICK=0
TRANSPORTS="shm tcp"
BUILD_DIR=build
KEEP=""
TRACE_ONLY=0
TRACE_BASELINE=""

usage() {
	sed -n '2,24s/^# \{0,1\}//p' "$0"
}

while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--transports) TRANSPORTS=${2:?--transports needs a list}; shift ;;
	--build-dir) BUILD_DIR=${2:?--build-dir needs a directory}; shift ;;
	--keep) KEEP=${2:?--keep needs a directory}; shift ;;
	--trace-only) TRACE_ONLY=1 ;;
	--trace-baseline) TRACE_BASELINE=${2:?--trace-baseline needs a build directory}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

# ---- what to run ------------------------------------------------------

if [ "$QUICK" = 1 ]; then
	SIZES="1024 4096 65536 1048576 16777216"
	SD_TIME=0.15       # seconds per softdoca measurement ...
	SD_REPS=1          # ... taken this many times per size (median kept)
	LAT_ITERS=5000
	UCX_SECS=0.15      # rough seconds per ucx_perftest bandwidth run
else
	SIZES="1024 4096 16384 65536 262144 1048576 4194304 16777216"
	SD_TIME=0.2
	SD_REPS=3
	LAT_ITERS=20000
	UCX_SECS=0.5
fi
LAT_WARMUP=2000
LARGE=1048576 # bandwidth targets apply from this size up
BW_TARGET=0.90
LAT_TARGET=2.00
NCONNS=8          # many connections: this many on one context, against 1
CONNS_SIZE=65536  # ... writing this many bytes a task
ALLOC_SIZE=1024   # the allocate-per-operation message rate
CPU_MIN=0.8       # a busy-polling initiator with less CPU than this was starved
TRACE_SIZE=1024   # the timeline's cost: the write message rate at this size ...
TRACE_RING=65536  # ... with a ring of this many events (SOFTDOCA_TRACE_EVENTS) when on
# memcpy reference: the sizes of the table from LARGE up
MEMCPY_SIZES=$(for s in $SIZES; do [ "$s" -ge "$LARGE" ] && echo "$s"; done | tr '\n' ',' | sed 's/,$//')

# ---- build --------------------------------------------------------------

PERF=$ROOT/$BUILD_DIR/tools/softdoca_perf
echo "# building softdoca ($BUILD_DIR)"
if ! bash scripts/build.sh "$BUILD_DIR"; then
	echo "build failed (run: ninja -C $BUILD_DIR)" >&2
	exit 2
fi
[ -x "$PERF" ] || { echo "$PERF was not built" >&2; exit 2; }
BASE_PERF=""
if [ -n "$TRACE_BASELINE" ]; then
	BASE_PERF=$(cd "$TRACE_BASELINE" 2>/dev/null && pwd)/tools/softdoca_perf
	[ -x "$BASE_PERF" ] || { echo "--trace-baseline: no tools/softdoca_perf in $TRACE_BASELINE" >&2; exit 2; }
fi

HAVE_UCX=1
if ! command -v ucx_perftest >/dev/null 2>&1; then
	HAVE_UCX=0
	echo "# ucx_perftest not found (Debian/Ubuntu: apt-get install ucx-utils): UCX columns stay empty"
fi
command -v ss >/dev/null 2>&1 || { echo "ss(8) is required (iproute2)" >&2; exit 2; }

OUT=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/softdoca_bench.XXXXXX")}
mkdir -p "$OUT" || exit 2
RESULTS=$OUT/results.txt # "transport metric size source value" lines
: >"$RESULTS"

# A port base per run, so back-to-back runs never meet a port in TIME_WAIT;
# below the ephemeral range (32768 up), where other programs' outgoing
# connections take their ports.
PORT=$((10000 + ($$ % 20000)))
next_port() { PORT=$((PORT + 1)); }

set_transport() {
	unset UCX_TLS UCX_NET_DEVICES
	case $1 in
	shm) export UCX_TLS=self,sm,cma ;;
	tcp) export UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
	*) echo "unknown transport $1 (shm, tcp)" >&2; exit 2 ;;
	esac
}

# Percent of CPU time not idle over half a second (other work on the box).
cpu_busy() {
	local a b
	a=$(head -1 /proc/stat)
	sleep 0.5
	b=$(head -1 /proc/stat)
	echo "$a
$b" | awk '{ idle[NR] = $5 + $6; tot[NR] = 0; for (i = 2; i <= NF; i++) tot[NR] += $i }
		END { d = tot[2] - tot[1]; busy = 0; if (d > 0) busy = 100 * (1 - (idle[2] - idle[1]) / d); printf "%d\n", busy }'
}

# CPU seconds the whole machine spent busy since boot.
machine_busy_s() {
	awk '/^cpu / { busy = 0; for (i = 2; i <= NF; i++) if (i != 5 && i != 6) busy += $i; printf "%.2f\n", busy / 100 }' /proc/stat
}

# CPU seconds used by this script's finished children, into OURS_S. Not
# in a subshell: `times` there would count the subshell's children only.
children_cpu() {
	times >"$OUT/times.txt"
	OURS_S=$(sed -n 2p "$OUT/times.txt" | awk '{
		t = 0
		for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] }
		printf "%.2f\n", t }')
}

# Wait until something listens on TCP port $1 (at most 10 s); give up at
# once when process $2 (the server) has exited, e.g. as the port was taken.
wait_listen() {
	for _ in $(seq 1 500); do
		[ -n "$(ss -ltnH "sport = :$1" 2>/dev/null)" ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}

# ---- softdoca -------------------------------------------------------------

# start_server LOG CMD...: start a server listening on $PORT (a fresh port
# for each try, three tries), its pid in SPID; 1 when it never listened.
start_server() {
	local log=$1 try
	shift
	for try in 1 2 3; do
		next_port
		timeout 120 "$@" -p "$PORT" >"$log" 2>&1 &
		SPID=$!
		wait_listen "$PORT" "$SPID" && return 0
		kill "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
		echo "# $(basename "$1") did not listen on port $PORT (try $try): $(tail -1 "$log")" >&2
	done
	return 1
}

# run_softdoca TRANSPORT SERVE NAME TESTS [CLIENT ARGS...]: one
# server/client pair running TESTS; its lines go to $RESULTS.
run_softdoca() {
	local tr=$1 serve=$2 name=$3 tests=$4 log=$OUT/softdoca_$1_$2_$3
	local sizes t0=$SECONDS
	shift 4
	sizes=$(echo "$SIZES" | tr ' ' ',')
	start_server "$log.server" "$PERF" --server --serve "$serve" || return
	local spid=$SPID
	timeout 120 "$PERF" --client 127.0.0.1 --port "$PORT" --sizes "$sizes" --time "$SD_TIME" --reps "$SD_REPS" \
		--lat-iters "$LAT_ITERS" --lat-warmup "$LAT_WARMUP" --tests "$tests" "$@" >"$log.client" 2>&1
	local crc=$?
	wait "$spid"
	local src=$?
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		echo "# softdoca $tr serve=$serve $name: client exit $crc, server exit $src (--keep DIR keeps the logs)" >&2
		sed 's/^/#   /' "$log.client" | tail -5 >&2
	fi
	# write_bw size=N conns=C ... MB/s=X msgs_per_s=Y cpu_init_s_per_GB=I
	# cpu_tgt_s_per_GB=T  /  write_lat ... median_us=X avg_us=Y
	awk -v tr="$tr" -v src="softdoca_$serve" '
		function kv(  i, a) { delete f; for (i = 2; i <= NF; i++) { split($i, a, "="); f[a[1]] = a[2] } }
		/^(write_bw|read_bw|write_alloc|conns_bw) / {
			kv()
			m = $1; key = f["size"]
			# conns_bw: keyed by the number of connections
			if (m == "conns_bw") { key = f["conns"]; print tr, "conns_size", 0, src, f["size"] }
			print tr, m, key, src, f["MB/s"]
			print tr, m "_mr", key, src, f["msgs_per_s"]
			print tr, m "_cpui", key, src, f["cpu_init_s_per_GB"]
			print tr, m "_cput", key, src, f["cpu_tgt_s_per_GB"]
			print tr, m "_cpus", key, src, f["cpus_init"]
		}
		/^write_lat / {
			kv()
			print tr, "lat_median", 8, src, f["median_us"]
			print tr, "lat_avg", 8, src, f["avg_us"]
		}' "$log.client" >>"$RESULTS"
	printf '#   softdoca serve=%-8s %-5s %2s measurements, %s s\n' "$serve" "$name" \
		"$(grep -c -E '^(write|read|conns)_' "$log.client")" $((SECONDS - t0))
}

# The single-thread memcpy limit at MEMCPY_SIZES.
run_memcpy() {
	local log=$OUT/memcpy t0=$SECONDS
	[ -n "$MEMCPY_SIZES" ] || return
	if ! "$PERF" --memcpy --sizes "$MEMCPY_SIZES" --time "$SD_TIME" --reps "$SD_REPS" >"$log" 2>&1; then
		echo "# softdoca_perf --memcpy failed" >&2
		sed 's/^/#   /' "$log" | tail -3 >&2
	fi
	awk '/^memcpy / { for (i = 2; i <= NF; i++) { split($i, a, "="); f[a[1]] = a[2] }
		print "host memcpy", f["size"], "memcpy", f["MB/s"] }' "$log" >>"$RESULTS"
	printf '# memcpy: %s sizes, %s s\n' "$(grep -c '^memcpy ' "$log")" $((SECONDS - t0))
}

# ---- ucx_perftest -------------------------------------------------------------

# Iterations for about UCX_SECS seconds of test TEST at SIZE on TRANSPORT,
# from rough rates seen on a small 2-CPU VM (a faster machine finishes
# sooner): a bandwidth in bytes/s and a message-rate ceiling. Over TCP,
# UCX's software get answers about a thousand requests a second, and its
# put slows down to a few messages a second from 4 MiB up.
ucx_iters() {
	local tr=$1 test=$2 size=$3
	awk -v tr="$tr" -v t="$test" -v s="$size" -v secs="$UCX_SECS" 'BEGIN {
		if (tr == "shm") {
			if (t == "ucp_am_bw") { bw = 10e9; mr = 5e6 } else { bw = 45e9; mr = 10e6 }
		} else {
			if (t == "ucp_am_bw") { bw = 3e9; mr = 2e5 }
			else if (t == "ucp_get") { bw = 0.5e9; mr = 900 }
			else { bw = (s >= 4194304) ? 0.05e9 : 0.6e9; mr = 3e5 }
		}
		rate = bw / s; if (rate > mr) rate = mr
		n = int(rate * secs); if (n < 5) n = 5
		print n
	}'
}

# run_ucx TRANSPORT TEST SIZE ITERS WARMUP: sets UCX_LINE to the final CSV
# line (iterations,median_lat,avg_lat,overall_lat,avg_bw,overall_bw,...),
# empty on failure. (No subshell: next_port must advance for the caller.)
run_ucx() {
	UCX_LINE=""
	local tr=$1 test=$2 size=$3 n=$4 w=$5 log=$OUT/ucx_$1_$2_$3
	start_server "$log.server" ucx_perftest || return
	local spid=$SPID
	timeout 60 ucx_perftest 127.0.0.1 -p "$PORT" -t "$test" -s "$size" -n "$n" -w "$w" -v >"$log.client" 2>&1
	local crc=$?
	wait "$spid" 2>/dev/null
	if [ "$crc" -ne 0 ]; then
		echo "# ucx_perftest $test -s $size on $tr failed (exit $crc)" >&2
		sed 's/^/#   /' "$log.client" | tail -3 >&2
		return
	fi
	UCX_LINE=$(grep -E '^ *[0-9]+,' "$log.client" | tail -1)
}

# ucx_perftest's MB/s are MiB/s; ours are 10^6 bytes/s. Its message
# rate (overall, messages/s) goes in as TEST_mr.
run_ucx_bw() {
	local tr=$1 test=$2 size=$3 n
	n=$(ucx_iters "$tr" "$test" "$size")
	run_ucx "$tr" "$test" "$size" "$n" $(((n + 9) / 10)) # warm-up: a tenth
	[ -n "$UCX_LINE" ] || return
	echo "$UCX_LINE" | awk -F, -v tr="$tr" -v t="$test" -v s="$size" '{
		printf "%s %s %s ucx %.1f\n", tr, t, s, $6 * 1.048576
		printf "%s %s_mr %s ucx %.0f\n", tr, t, s, $8 }'
}

run_ucx_all() {
	local tr=$1 t0=$SECONDS
	for size in $SIZES; do
		for test in ucp_put_bw ucp_am_bw ucp_get; do
			run_ucx_bw "$tr" "$test" "$size" >>"$RESULTS"
		done
	done
	# Latency tests report half the round trip.
	run_ucx "$tr" ucp_am_lat 8 "$LAT_ITERS" "$LAT_WARMUP"
	if [ -n "$UCX_LINE" ]; then
		echo "$UCX_LINE" | awk -F, -v tr="$tr" '{
			printf "%s ucp_am_lat_median 8 ucx %.3f\n", tr, 2 * $2
			printf "%s ucp_am_lat_avg 8 ucx %.3f\n", tr, 2 * $4 }' >>"$RESULTS"
	fi
	printf '#   ucx_perftest: %s runs, %s s\n' "$(grep -c -E "^$tr [a-z_]+(bw|get|lat_median) .* ucx " "$RESULTS")" \
		$((SECONDS - t0))
}

# ---- the timeline's cost ------------------------------------------------------

# run_trace_case TRANSPORT CASE: write_bw at TRACE_SIZE, server
# progressing; CASE "on" traces both sides (a file each, a ring of
# TRACE_RING events), base1/base2 run the baseline build's softdoca_perf;
# "TRANSPORT trace 0 CASE msgs_per_s" into $RESULTS.
run_trace_case() {
	local tr=$1 case=$2 log=$OUT/trace_$1_$2
	local senv=() cenv=()
	if [ "$case" = on ]; then
		senv=(SOFTDOCA_TRACE="$log.server.json" SOFTDOCA_TRACE_EVENTS="$TRACE_RING")
		cenv=(SOFTDOCA_TRACE="$log.client.json" SOFTDOCA_TRACE_EVENTS="$TRACE_RING")
	fi
	local perf=$PERF
	case $case in base*) perf=$BASE_PERF ;; esac
	start_server "$log.server" env "${senv[@]}" "$perf" --server --serve progress || return
	local spid=$SPID
	timeout 120 env "${cenv[@]}" "$perf" --client 127.0.0.1 --port "$PORT" --sizes "$TRACE_SIZE" --time "$SD_TIME" \
		--reps "$TRACE_REPS" --tests write_bw >"$log.client" 2>&1
	local crc=$?
	wait "$spid"
	if [ "$crc" -ne 0 ]; then
		echo "# trace $case on $tr: client exit $crc" >&2
		sed 's/^/#   /' "$log.client" | tail -3 >&2
		return
	fi
	awk -v tr="$tr" -v c="$case" '/^write_bw / { for (i = 2; i <= NF; i++) { split($i, a, "="); f[a[1]] = a[2] }
		print tr, "trace", 0, c, f["msgs_per_s"] }' "$log.client" >>"$RESULTS"
}

# Off, on, off: two untraced runs around the traced one, so that their
# ratio shows the noise the on/off ratio is to be read against.
run_trace_all() {
	local tr=$1 t0=$SECONDS
	TRACE_REPS=$SD_REPS
	[ "$TRACE_REPS" -lt 3 ] && TRACE_REPS=3
	[ -n "$BASE_PERF" ] && run_trace_case "$tr" base1
	run_trace_case "$tr" off1
	run_trace_case "$tr" on
	run_trace_case "$tr" off2
	[ -n "$BASE_PERF" ] && run_trace_case "$tr" base2
	printf '#   timeline cost on %s: %s runs, %s s\n' "$tr" "$([ -n "$BASE_PERF" ] && echo 5 || echo 3)" \
		$((SECONDS - t0))
}

trace_table() {
	echo
	echo "timeline (SOFTDOCA_TRACE) cost: $((TRACE_SIZE / 1024))K write message rate, server progressing, both sides traced when on"
	echo "(a ring of $TRACE_RING events a side; a write records submitted, sent, done and its completion span on the"
	echo " initiator and at_target on the target; the file is written at exit, outside the measurement)"
	[ -n "$BASE_PERF" ] && echo "no-trace: $BASE_PERF (a build without the timeline), run first and last"
	awk '$2 == "trace" { v[$1 SUBSEP $4] = $5; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
	function pair(x, y) { return (x == "" || y == "") ? "" : (x + y) / 2 }
	function r(x, y) { return (x == "" || y == "" || y + 0 == 0) ? "-" : sprintf("%.3f", x / y) }
	function rate(x) { return x == "" ? "-" : sprintf("%.0f/s", x) }
	END {
		printf "%-4s %11s %11s %11s %11s %11s %8s %8s %8s %13s\n", "tr", "no-trace", "off (1st)", "on",
		       "off (2nd)", "no-trace", "off/off", "off/none", "on/off", "cost per task"
		for (t = 1; t <= n; t++) {
			tr = order[t]; a = v[tr SUBSEP "off1"]; o = v[tr SUBSEP "on"]; b = v[tr SUBSEP "off2"]
			b1 = v[tr SUBSEP "base1"]; b2 = v[tr SUBSEP "base2"]
			off = pair(a, b); none = pair(b1, b2)
			cost = (off == "" || o == "" || o + 0 == 0 || off + 0 == 0) ? "-" : sprintf("%.0f ns", 1e9 / o - 1e9 / off)
			printf "%-4s %11s %11s %11s %11s %11s %8s %8s %8s %13s\n", tr, rate(b1), rate(a), rate(o), rate(b),
			       rate(b2), r(b, a), r(off, none), r(o, off), cost
		}
	}' "$RESULTS"
	echo "off/off: the second untraced run against the first (the noise); off/none: untraced against the build without"
	echo "the timeline (means of two runs each); on/off against the untraced mean; cost = 1/on - 1/off. - : not run or failed."
}

# ---- run ------------------------------------------------------------------

if [ "$TRACE_ONLY" = 1 ]; then
	for tr in $TRANSPORTS; do
		set_transport "$tr"
		run_trace_all "$tr"
	done
	trace_table
	[ -n "$KEEP" ] && echo "raw output in $KEEP" || rm -rf "$OUT"
	exit 0
fi

START=$(date +%s)
BUSY0=$(cpu_busy)
MACHINE0=$(machine_busy_s)
children_cpu
OURS0=$OURS_S
run_memcpy
for tr in $TRANSPORTS; do
	set_transport "$tr"
	echo "# transport $tr: UCX_TLS=$UCX_TLS${UCX_NET_DEVICES:+ UCX_NET_DEVICES=$UCX_NET_DEVICES}"
	for serve in progress block; do
		run_softdoca "$tr" "$serve" main write_bw,read_bw,write_alloc,write_lat --alloc-size "$ALLOC_SIZE"
		# Separate, so that the other tests run with one connection only.
		run_softdoca "$tr" "$serve" conns conns_bw --conns "$NCONNS" --conns-size "$CONNS_SIZE"
	done
	[ "$HAVE_UCX" = 1 ] && run_ucx_all "$tr"
	run_trace_all "$tr"
done

# CPU time the machine spent on other work while we ran, as a share of
# all CPU time of the run (clock ticks are 1/100 s here).
ELAPSED=$(($(date +%s) - START))
children_cpu
FOREIGN=$(awk -v m0="$MACHINE0" -v m1="$(machine_busy_s)" -v o0="$OURS0" -v o1="$OURS_S" \
	-v el="$ELAPSED" -v n="$(nproc)" 'BEGIN { f = (m1 - m0) - (o1 - o0); if (f < 0) f = 0
		pct = 0; if (el > 0) pct = 100 * f / (el * n); printf "%d\n", pct }')

# ---- table ----------------------------------------------------------------

echo
echo "softdoca vs UCX on $(nproc) CPUs, $(ucx_info -v 2>/dev/null | sed -n 's/^# \(Version .*\)/UCX \1/p')$([ "$QUICK" = 1 ] && echo ', quick run')"
echo "bandwidth in MB/s (10^6 B/s), higher is better; latency = 8-byte write round trip in us, lower is better"
echo "progress: the server calls doca_pe_progress; block: the server sleeps in read(2), the service thread serves"
if [ "$BUSY0" -gt 10 ] || [ "$FOREIGN" -gt 5 ]; then
	echo "WARNING: other work shared the CPUs (${BUSY0}% busy just before the run, ${FOREIGN}% of the CPU time during it): figures are noisy"
fi
awk -v large="$LARGE" -v bwt="$BW_TARGET" -v latt="$LAT_TARGET" -v sizelist="$SIZES" -v cpumin="$CPU_MIN" '
	{ v[$1 SUBSEP $2 SUBSEP $3 SUBSEP $4] = $5; if (!($1 in seen)) { seen[$1] = 1; order[++ntr] = $1 } }
	function get(tr, m, s, src,  k) { k = tr SUBSEP m SUBSEP s SUBSEP src; return (k in v) ? v[k] : "" }
	function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
	function fmt(x) { return x == "" ? "-" : x }
	function human(s) { return s >= 1048576 ? s / 1048576 "M" : s >= 1024 ? s / 1024 "K" : s }
	function best(a, b) { return a == "" ? b : b == "" ? a : (a + 0 >= b + 0 ? a : b) }
	# ok/MISS for a ratio against its target
	function verdict(r, kind) {
		if (r == "-") return "-"
		if (kind == "bw") return (r + 0 >= bwt) ? "ok" : "MISS"
		return (r + 0 <= latt) ? "ok" : "MISS"
	}
	function row(tr, metric, size, sp, sb, c1, c2, r1p, r1b, r2p, r2b, tgt) {
		printf "%-4s %-10s %4s %9s %9s %9s %9s %6s %6s %6s %6s  %s\n", tr, metric, size, sp, sb, fmt(c1),
		       fmt(c2), r1p, r1b, r2p, r2b, tgt
	}
	# The figure, starred when the busy-polling initiator had less than
	# a CPU of its own while measuring (the machine was busy).
	function starred(tr, m, s, src, x,  c) {
		c = get(tr, m "_cpus", s, src)
		return fmt(x) ((c != "" && c + 0 < cpumin) ? "*" : "")
	}
	END {
		n = split(sizelist, sizes, " ")
		for (t = 1; t <= ntr; t++) {
			tr = order[t]
			if (tr == "host")
				continue
			print ""
			printf "%-4s %-10s %4s %9s %9s %9s %9s %13s %13s  %s\n", "", "", "", "softdoca", "softdoca", "UCX", "UCX",
			       "vs UCX best", "vs UCX am", "target"
			printf "%-4s %-10s %4s %9s %9s %9s %9s %6s %6s %6s %6s  %s\n", "tr", "metric", "size", "progress", "block",
			       "put|get", "am_bw", "prog", "block", "prog", "block", "(prog/block)"
			for (m = 1; m <= 2; m++) {
				metric = m == 1 ? "write_bw" : "read_bw"
				for (i = 1; i <= n; i++) {
					s = sizes[i]
					rma = get(tr, m == 1 ? "ucp_put_bw" : "ucp_get", s, "ucx")
					am = get(tr, "ucp_am_bw", s, "ucx")
					ref = best(rma, am)
					sp = get(tr, metric, s, "softdoca_progress"); sb = get(tr, metric, s, "softdoca_block")
					rp = ratio(sp, ref); rb = ratio(sb, ref)
					tgt = s >= large ? ">=" bwt ": " verdict(rp, "bw") "/" verdict(rb, "bw") : ""
					row(tr, metric, human(s), starred(tr, metric, s, "softdoca_progress", sp),
					    starred(tr, metric, s, "softdoca_block", sb), rma, am, rp, rb, ratio(sp, am),
					    ratio(sb, am), tgt)
				}
			}
			for (m = 1; m <= 2; m++) {
				stat = m == 1 ? "median" : "avg"
				ref = get(tr, "ucp_am_lat_" stat, 8, "ucx")
				sp = get(tr, "lat_" stat, 8, "softdoca_progress"); sb = get(tr, "lat_" stat, 8, "softdoca_block")
				rp = ratio(sp, ref); rb = ratio(sb, ref)
				tgt = stat == "median" ? "<=" latt ": " verdict(rp, "lat") "/" verdict(rb, "lat") : ""
				row(tr, "lat_" stat, 8, fmt(sp), fmt(sb), "", ref, rp, rb, rp, rb, tgt)
			}
			# CPU time per GB moved, initiator (client) / target (server)
			printf "%-4s %-10s %4s %13s %13s   %s\n", "", "", "", "cpu s/GB", "cpu s/GB", "(user+sys, every thread)"
			printf "%-4s %-10s %4s %13s %13s\n", "tr", "metric", "size", "prog ini/tgt", "block ini/tgt"
			for (m = 1; m <= 2; m++) {
				metric = m == 1 ? "write_bw" : "read_bw"
				for (i = 1; i <= n; i++) {
					s = sizes[i]
					printf "%-4s %-10s %4s %13s %13s\n", tr, metric, human(s),
					       cpu(tr, metric, s, "softdoca_progress"), cpu(tr, metric, s, "softdoca_block")
				}
			}
		}
	}
	function cpu(tr, m, s, src,  a, b) {
		a = get(tr, m "_cpui", s, src); b = get(tr, m "_cput", s, src)
		return (a == "" && b == "") ? "-" : fmt(a) "/" fmt(b)
	}' "$RESULTS"
echo
echo "ratios are softdoca / UCX. UCX best = the better of put_bw (get for reads) and am_bw at that size;"
echo "latency rows compare with ucp_am_lat's round trip (twice the one-way figure it prints)."
echo "targets: bandwidth from $((LARGE / 1048576))M up >= ${BW_TARGET}x UCX best; median round trip <= ${LAT_TARGET}x UCX."
echo "* after a figure: the busy-polling initiator had less than $CPU_MIN of a CPU while measuring (the machine was busy)."

# ---- issue 12's table: each row, its reference, ratio, goal, met --------

echo
echo "issue 12 goals (ratio = softdoca / reference; met: ok or MISS)"
awk -v large="$LARGE" -v sizelist="$SIZES" -v alloc="$ALLOC_SIZE" -v nconns="$NCONNS" -v cpumin="$CPU_MIN" '
	{ v[$1 SUBSEP $2 SUBSEP $3 SUBSEP $4] = $5; if ($1 != "host") have[$1] = 1 }
	function get(tr, m, s, src,  k) { k = tr SUBSEP m SUBSEP s SUBSEP src; return (k in v) ? v[k] : "" }
	function human(s) { return s >= 1048576 ? s / 1048576 "M" : s >= 1024 ? s / 1024 "K" : s }
	function best(a, b) { return a == "" ? b : b == "" ? a : (a + 0 >= b + 0 ? a : b) }
	function show(x, unit) {
		if (x == "") return "-"
		if (unit == "us") return sprintf("%.2f us", x)
		if (unit == "mr") return sprintf("%.0f k/s", x / 1e3)
		return sprintf("%.0f MB/s", x)
	}
	# One row: what, softdoca figure, reference name and figure, goal
	# (cmp "<=" or ">=" target), a note.
	function goal(what, sd, refname, ref, unit, cmp, target, note,  r, met) {
		r = "-"; met = "-"
		if (sd != "" && ref != "" && ref + 0 > 0) {
			r = sprintf("%.2f", sd / ref)
			met = (cmp == "<=" ? r + 0 <= target : r + 0 >= target) ? "ok" : "MISS"
		}
		printf "%-40s %12s  %-14s %12s %6s  %2s%-5s %-4s %s\n", what, show(sd, unit), refname, show(ref, unit),
		       r, cmp, sprintf("%.1f", target), met, note
	}
	function memcpy_note(s, sd,  m) {
		m = get("host", "memcpy", s, "memcpy")
		if (m == "" || sd == "") return ""
		return sprintf("memcpy %.0f MB/s: %.2fx", m, sd / m)
	}
	# "starved" when the initiator of that measurement had less than cpumin
	# of a CPU (its figure says more about the machine than about softdoca)
	function starved(tr, m, s, src,  c) {
		c = get(tr, m "_cpus", s, src)
		return (c != "" && c + 0 < cpumin) ? sprintf("starved (%.2f CPU) ", c) : ""
	}
	END {
		n = split(sizelist, sizes, " ")
		printf "%-40s %12s  %-14s %12s %6s  %-7s %-4s %s\n", "row", "softdoca", "reference", "", "ratio", "goal",
		       "met", "note"
		split("progress block", modes, " ")
		ntr = 0
		if ("shm" in have) order[++ntr] = "shm"
		if ("tcp" in have) order[++ntr] = "tcp"
		for (t = 1; t <= ntr; t++) {
			tr = order[t]
			for (k = 1; k <= 2; k++) {
				md = modes[k]
				# tcp: the goals of issue 19 (the TCP link of softdoca against UCX over TCP)
				tgt = tr == "shm" ? (k == 1 ? 1.3 : 1.6) : 1.2
				goal(tr " 8 B write round trip, " md, get(tr, "lat_median", 8, "softdoca_" md),
				     "ucp_am_lat", get(tr, "ucp_am_lat_median", 8, "ucx"), "us", "<=", tgt, "medians")
			}
		}
		if ("shm" in have) {
			for (i = 1; i <= n; i++) {
				s = sizes[i]
				if (s != 1024 && s != 4096) continue
				for (k = 1; k <= 2; k++)
					goal("shm " human(s) " write msg rate, " modes[k],
					     get("shm", "write_bw_mr", s, "softdoca_" modes[k]), "ucp_am_bw",
					     get("shm", "ucp_am_bw_mr", s, "ucx"), "mr", ">=", 1.0,
					     starved("shm", "write_bw", s, "softdoca_" modes[k]))
			}
			for (k = 1; k <= 2; k++)
				goal("shm " human(alloc) " alloc+free per op, " modes[k],
				     get("shm", "write_alloc_mr", alloc, "softdoca_" modes[k]), "ucp_am_bw",
				     get("shm", "ucp_am_bw_mr", alloc, "ucx"), "mr", ">=", 1.0,
				     starved("shm", "write_alloc", alloc, "softdoca_" modes[k]))
			for (m = 1; m <= 2; m++) {
				metric = m == 1 ? "write_bw" : "read_bw"
				for (i = 1; i <= n; i++) {
					s = sizes[i]
					if (s < large) continue
					ref = best(get("shm", m == 1 ? "ucp_put_bw" : "ucp_get", s, "ucx"),
						   get("shm", "ucp_am_bw", s, "ucx"))
					for (k = 1; k <= 2; k++) {
						sd = get("shm", metric, s, "softdoca_" modes[k])
						goal("shm " (m == 1 ? "write " : "read ") human(s) ", " modes[k], sd, "UCX best",
						     ref, "MB", ">=", 0.9,
						     starved("shm", metric, s, "softdoca_" modes[k]) memcpy_note(s, sd))
					}
				}
			}
			for (i = 1; i <= n; i++) {
				s = sizes[i]
				if (s < 16384 || s > 262144) continue
				goal("shm read " human(s) ", block vs progress", get("shm", "read_bw", s, "softdoca_block"),
				     "progress", get("shm", "read_bw", s, "softdoca_progress"), "MB", ">=", 0.9,
				     starved("shm", "read_bw", s, "softdoca_block") starved("shm", "read_bw", s, "softdoca_progress"))
			}
		}
		if ("tcp" in have)
			for (m = 1; m <= 2; m++) {
				metric = m == 1 ? "write_bw" : "read_bw"
				for (i = 1; i <= n; i++) {
					s = sizes[i]
					if (s < large) continue
					ref = best(get("tcp", m == 1 ? "ucp_put_bw" : "ucp_get", s, "ucx"),
						   get("tcp", "ucp_am_bw", s, "ucx"))
					for (k = 1; k <= 2; k++)
						goal("tcp " (m == 1 ? "write " : "read ") human(s) ", " modes[k],
						     get("tcp", metric, s, "softdoca_" modes[k]), "UCX best", ref, "MB", ">=",
						     1.0, starved("tcp", metric, s, "softdoca_" modes[k]))
				}
			}
		for (t = 1; t <= ntr; t++) {
			tr = order[t]
			cs = get(tr, "conns_size", 0, "softdoca_progress")
			for (k = 1; k <= 2; k++)
				goal(tr " " nconns " conns vs 1, " human(cs + 0) " write, " modes[k],
				     get(tr, "conns_bw", nconns, "softdoca_" modes[k]), "1 connection",
				     get(tr, "conns_bw", 1, "softdoca_" modes[k]), "MB", ">=", 1.0,
				     starved(tr, "conns_bw", nconns, "softdoca_" modes[k]) \
				     starved(tr, "conns_bw", 1, "softdoca_" modes[k]) "aggregate")
		}
	}' "$RESULTS"
trace_table

if [ -n "$KEEP" ]; then
	echo "raw output in $KEEP; $(($(date +%s) - START)) s"
else
	rm -rf "$OUT"
	echo "$(($(date +%s) - START)) s (--keep DIR keeps the raw output)"
fi
exit 0
