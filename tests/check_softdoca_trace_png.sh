#!/usr/bin/env bash
# softdoca_trace --png ($2) over two traced runs of test_trace ($1, tasks
# mode): one PNG (its signature and a size a drawn plot has, not just its
# existence) from both files, the summary still printed; without gnuplot
# on PATH, exit 2 with a message that names it. Skips when gnuplot is not
# installed.
set -euo pipefail
test_bin=$(readlink -f "${1:?usage: check_softdoca_trace_png.sh <test_trace> <softdoca_trace>}")
tool=$(readlink -f "${2:?usage: check_softdoca_trace_png.sh <test_trace> <softdoca_trace>}")
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed (Debian: gnuplot-nox)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for n in 1 2; do
	TRACE_TEST_MODE=tasks SOFTDOCA_FAULTS=write:fail=nth:2:IO_FAILED SOFTDOCA_TRACE="$work/t$n.json" \
		"$test_bin" >"$work/run$n.out" 2>&1 || { cat "$work/run$n.out"; echo "FAIL: traced run $n failed"; exit 1; }
done
"$tool" --png "$work/p.png" "$work/t1.json" "$work/t2.json" >"$work/out" 2>"$work/err" ||
	{ cat "$work/out" "$work/err"; echo "FAIL: --png exited $?"; exit 1; }
cat "$work/out"
[ "$(head -c 8 "$work/p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || { echo "FAIL: not a PNG"; exit 1; }
size=$(stat -c %s "$work/p.png")
[ "$size" -gt 10000 ] || { echo "FAIL: the PNG has only $size bytes"; exit 1; }
grep -q "^plot: $work/p.png\$" "$work/out" || { echo "FAIL: no plot line"; exit 1; }
awk '$1 == "rdma" && $2 == "write" { ok = ($3 == 6 && $4 == 2) } END { exit !ok }' "$work/out" ||
	{ echo "FAIL: the summary of both files is not 6 writes with 2 errors"; exit 1; }

# gnuplot not on PATH: exit 2, a message, no PNG.
rc=0
PATH=/nonexistent "$tool" --png "$work/q.png" "$work/t1.json" >/dev/null 2>"$work/err" || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: without gnuplot the exit was $rc, not 2"; exit 1; }
grep -q "gnuplot, which is not installed" "$work/err" || { cat "$work/err"; echo "FAIL: no message naming gnuplot"; exit 1; }
[ ! -e "$work/q.png" ] || { echo "FAIL: a PNG was written without gnuplot"; exit 1; }
echo "softdoca_trace --png: a ${size}-byte PNG from two traces; without gnuplot exit 2"
