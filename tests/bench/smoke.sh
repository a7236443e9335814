#!/usr/bin/env bash
# The benchmark still runs and prints every row of its goals table with a
# figure, a reference and a ratio (bench/run_bench.sh --quick). It checks
# that figures exist, never what they are: performance is measured by the
# benchmark, not asserted by the suite.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
command -v ucx_perftest >/dev/null || { echo "SKIP: no ucx_perftest (ucx-utils)"; exit 77; }
out=$(bash bench/run_bench.sh --quick --build-dir "$build" 2>&1)
rc=$?
fail() { echo "FAIL: $*"; echo "$out" | tail -40; exit 1; }
[ "$rc" -eq 0 ] || fail "bench/run_bench.sh --quick exited $rc"
# The goals table ends at its first blank line; the timeline table follows.
table=$(sed -n '/^issue 12 goals/,/^$/p' <<<"$out" | sed '1,2d' | grep -E '^(shm|tcp) ')
rows=$(grep -c . <<<"$table")
[ "$rows" -ge 20 ] || fail "the goals table has $rows rows, expected at least 20"
# Every row: a number before the unit of the figure, and a numeric ratio
# followed by its goal (<=x or >=x).
bad=$(grep -vE '[0-9.]+ (us|k/s|MB/s) .* [0-9.]+ (us|k/s|MB/s) +[0-9]+\.[0-9]+ +(<=|>=)[0-9.]+ ' <<<"$table")
[ -z "$bad" ] || fail "rows without a figure, reference or ratio:
$bad"
# The timeline table: per transport, the untraced, traced and untraced
# again rates (k/s or /s) and the on/off ratio; the columns of a build
# without the timeline are '-' unless --trace-baseline is given.
trace=$(sed -n '/^timeline (SOFTDOCA_TRACE) cost/,/^$/p' <<<"$out" | grep -E '^(shm|tcp) ')
trows=$(grep -c . <<<"$trace")
[ "$trows" -ge 1 ] || fail "the timeline table has no rows"
tbad=$(grep -vE '^(shm|tcp) +[-0-9./s]+ +[0-9]+/s +[0-9]+/s +[0-9]+/s +[-0-9./s]+ +[0-9]+\.[0-9]+ +[-0-9.]+ +[0-9]+\.[0-9]+ ' <<<"$trace")
[ -z "$tbad" ] || fail "timeline rows without the off, on and off rates and their ratios:
$tbad"
echo "bench smoke: ok ($rows rows in the goals table, $trows in the timeline table)"
