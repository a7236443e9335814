#!/usr/bin/env bash
# softdoca_perftest_sweep.sh ($2) with softdoca_perftest ($1): a short
# write sweep prints both perftest tables with one row per size 2 .. 2^23
# and writes a PNG (its signature checked, not just its existence), with
# the UCX reference when ucx_perftest is there. Skips without gnuplot.
set -euo pipefail
bin=$(readlink -f "${1:?usage: check_perftest_sweep.sh <softdoca_perftest> <sweep script>}")
sweep=$(readlink -f "${2:?}")
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed (gnuplot-nox)"; exit 77; }
command -v ss >/dev/null || { echo "SKIP: no ss(8) (iproute2)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
# Below the kernel's ephemeral range (32768..), two free ports in a row
# (the sweep uses port and port + 1).
port=$((20000 + $$ % 10000))
while ss -ltnH "sport = :$port or sport = :$((port + 1))" 2>/dev/null | grep -q .; do
	port=$((port + 2))
done

SOFTDOCA_PERFTEST=$bin timeout 120 bash "$sweep" -o "$work/s.png" -n 5 -p "$port" >"$work/out" 2>"$work/err" ||
	fail "the sweep exited $?: $(cat "$work/err")"
[ "$(head -c 8 "$work/s.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "$work/s.png is not a PNG"
[ "$(stat -c %s "$work/s.png" 2>/dev/null || echo 0)" -gt 10000 ] || fail "the PNG is nearly empty"
bw=$(awk '$1 ~ /^[0-9]+$/ && NF == 5' "$work/out" | wc -l)
lat=$(awk '$1 ~ /^[0-9]+$/ && NF == 9' "$work/out" | wc -l)
[ "$bw" = 23 ] || fail "$bw bandwidth rows, want 23"
[ "$lat" = 23 ] || fail "$lat latency rows, want 23"
grep -q '^ #bytes     #iterations    BW peak\[MB/sec\]' "$work/out" || fail "no bandwidth header"
grep -q '^# plot: ' "$work/out" || fail "no closing plot line"
# A bad flag is refused before anything runs.
rc=0
bash "$sweep" --bogus >/dev/null 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "--bogus exited $rc, want 1"
[ "$fails" = 0 ] || exit 1
echo "sweep: tables and PNG ok"
