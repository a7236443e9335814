#!/usr/bin/env bash
# softdoca_trace ($2) summarises the trace of a traced run of test_trace
# ($1, tasks mode: three writes over loopback, the second failed with
# DOCA_ERROR_IO_FAILED): one "rdma write" row with count 3, 1 error, ordered
# latency columns, and the status row; two runs summarised together and
# merged (--merge) into one valid trace, a malformed line kept out of it;
# a file that is not a trace and a missing file exit 1 with a message. Also: a SOFTDOCA_TRACE that cannot
# be written or an empty one, and a bad SOFTDOCA_TRACE_EVENTS, each give
# exactly one log line and tracing stays off.
set -euo pipefail
test_bin=$(readlink -f "${1:?usage: check_softdoca_trace.sh <test_trace> <softdoca_trace>}")
tool=$(readlink -f "${2:?usage: check_softdoca_trace.sh <test_trace> <softdoca_trace>}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

TRACE_TEST_MODE=tasks SOFTDOCA_FAULTS=write:fail=nth:2:IO_FAILED SOFTDOCA_TRACE="$work/t.json" \
	"$test_bin" >"$work/run.out" 2>&1 || { cat "$work/run.out"; echo "FAIL: the traced run failed"; exit 1; }
"$tool" "$work/t.json" >"$work/sum.out"
cat "$work/sum.out"
awk '
	$1 == "type" { header = ($2 == "count" && $3 == "errors" && $4 == "p50_us" && $5 == "p99_us" && $6 == "max_us") }
	$1 == "rdma" && $2 == "write" { rows++; ok = ($3 == 3 && $4 == 1 && $5 + 0 > 0 && $5 <= $6 && $6 <= $7) }
	$1 == "DOCA_ERROR_IO_FAILED" { st = ($2 == 1) }
	$1 == "dropped" && $2 == "events:" { dr = ($3 == 0) }
	END { exit !(header && rows == 1 && ok && st && dr) }' "$work/sum.out" ||
	{ echo "FAIL: the summary is not what three writes with one IO_FAILED give"; exit 1; }

# Two runs (two processes) together: the summary counts both, --merge
# writes one trace holding every event line of both, valid JSON.
TRACE_TEST_MODE=tasks SOFTDOCA_FAULTS=write:fail=nth:2:IO_FAILED SOFTDOCA_TRACE="$work/t2.json" \
	"$test_bin" >"$work/run2.out" 2>&1 || { cat "$work/run2.out"; echo "FAIL: the second traced run failed"; exit 1; }
"$tool" --merge "$work/m.json" "$work/t.json" "$work/t2.json" >"$work/sum2.out"
cat "$work/sum2.out"
awk '
	$1 == "rdma" && $2 == "write" { ok = ($3 == 6 && $4 == 2) }
	$1 == "at" && $2 == "target:" { at = ($3 == 4) }
	$1 == "files:" { files = ($2 == 2) }
	END { exit !(ok && at && files) }' "$work/sum2.out" ||
	{ echo "FAIL: two runs together are not 6 writes, 2 errors, 4 arrivals at a target"; exit 1; }
events() { grep -c '^{"name":"' "$1"; }
[ "$(events "$work/m.json")" = $(($(events "$work/t.json") + $(events "$work/t2.json"))) ] ||
	{ echo "FAIL: the merge does not hold every event line of both files"; exit 1; }
[ "$(grep -c '"name":"process_name"' "$work/m.json")" = 2 ] || { echo "FAIL: the merge has not two processes"; exit 1; }
if command -v python3 >/dev/null; then
	python3 -m json.tool "$work/m.json" >/dev/null || { echo "FAIL: the merge is not valid JSON"; exit 1; }
fi
# A line that is not one JSON object is not copied into a merge.
{ head -n -2 "$work/t.json"; echo '{"name":"x","ph":"i","ts":1,"args":{"a":"}'; tail -n 2 "$work/t.json"; } >"$work/broken.json"
"$tool" --merge "$work/m2.json" "$work/broken.json" >"$work/sum3.out"
grep -q "^unreadable lines: 1$" "$work/sum3.out" || { cat "$work/sum3.out"; echo "FAIL: the broken line was not counted"; exit 1; }
if command -v python3 >/dev/null; then
	python3 -m json.tool "$work/m2.json" >/dev/null || { echo "FAIL: a broken line made the merge invalid"; exit 1; }
fi

echo '{"not":"a trace"}' >"$work/bad.json"
if "$tool" "$work/bad.json" >/dev/null 2>"$work/err"; then echo "FAIL: a non-trace was summarised"; exit 1; fi
grep -q "not a softdoca trace" "$work/err" || { echo "FAIL: no message for a non-trace"; exit 1; }
if "$tool" "$work/missing.json" >/dev/null 2>"$work/err"; then echo "FAIL: a missing file was summarised"; exit 1; fi
grep -q "cannot open" "$work/err" || { echo "FAIL: no message for a missing file"; exit 1; }

# Refused settings: one line each, tracing off (the off mode asserts that).
check_refused() {
	local what=$1 want=$2
	shift 2
	env TRACE_TEST_MODE=off "$@" "$test_bin" >"$work/off.out" 2>&1 ||
		{ cat "$work/off.out"; echo "FAIL: $what: tracing did not stay off"; exit 1; }
	[ "$(grep -c "$want" "$work/off.out")" = 1 ] ||
		{ cat "$work/off.out"; echo "FAIL: $what: not exactly one '$want' line"; exit 1; }
}
check_refused "unwritable directory" "cannot be written" SOFTDOCA_TRACE="$work/no/such/dir/t.json"
check_refused "empty path" "is empty or too long" SOFTDOCA_TRACE=
check_refused "bad event count" "SOFTDOCA_TRACE_EVENTS=\"8x\" is not a whole number" \
	SOFTDOCA_TRACE="$work/t2.json" SOFTDOCA_TRACE_EVENTS=8x
check_refused "zero event count" "SOFTDOCA_TRACE_EVENTS=\"0\" is not a whole number" \
	SOFTDOCA_TRACE="$work/t2.json" SOFTDOCA_TRACE_EVENTS=0
echo "softdoca_trace: summary and refusals as expected"
