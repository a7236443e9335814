#!/usr/bin/env bash
# softdoca_trace ($2) summarises the trace of a traced run of test_trace
# ($1, tasks mode: three writes over loopback, the second failed with
# DOCA_ERROR_IO_FAILED): one "rdma write" row with count 3, 1 error, ordered
# latency columns, and the status row; a file that is not a trace and a
# missing file exit 1 with a message. Also: a SOFTDOCA_TRACE that cannot
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
