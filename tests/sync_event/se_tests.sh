#!/bin/sh
# Remote-net sync event tests: one se_peer owner (in the background) and
# one or more se_peer clients, every process under `timeout`, in a fresh
# directory where they exchange descriptor files.
#
#   se_tests.sh PEER TRANSPORT CASE
#     PEER       path of the se_peer program
#     TRANSPORT  shm (UCX_TLS=self,sm) | tcp (UCX_TLS=tcp over lo) | all
#     CASE       wake | order | add | forged | revoked | truncated | all
#
# Environment: SE_TESTS_CLIENTS (add: client processes, default 8),
# SE_TESTS_ADDS (add: adds per client, default 10000), SE_TESTS_KEEP=1
# keeps the directories. Exits non-zero if any process failed, timed out
# or printed no PASS line; on failure shows every process's output.
set -u

PEER=${1:?usage: se_tests.sh PEER TRANSPORT CASE}
TRANSPORT=${2:?usage: se_tests.sh PEER TRANSPORT CASE}
CASE=${3:?usage: se_tests.sh PEER TRANSPORT CASE}
PROC_TIMEOUT=${SE_TESTS_TIMEOUT:-60}
CLIENTS=${SE_TESTS_CLIENTS:-8}
ADDS=${SE_TESTS_ADDS:-10000}
ALL_CASES="wake order add forged revoked truncated"

set_transport() {
	unset UCX_TLS UCX_NET_DEVICES
	case $1 in
	shm) export UCX_TLS=self,sm ;;
	tcp) export UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
	*) echo "unknown transport $1 (shm, tcp)" >&2; exit 2 ;;
	esac
}

now() { date +%s.%N; }

pass=0
fail=0

run_case() {
	tr=$1 c=$2
	n=1 count=
	case $c in
	add) n=$CLIENTS count="--count $ADDS" ;;
	order) count="--count 1536" ;;
	wake | forged | revoked | truncated) ;;
	*) echo "unknown case $c; cases: $ALL_CASES" >&2; exit 2 ;;
	esac
	set_transport "$tr"
	dir=$(mktemp -d "${TMPDIR:-/tmp}/se_test.XXXXXX") || exit 2
	t0=$(now)
	# shellcheck disable=SC2086 # $count is an option and its value
	timeout "$PROC_TIMEOUT" "$PEER" --role owner --dir "$dir" --case "$c" --clients "$n" $count \
		>"$dir/owner.out" 2>"$dir/owner.err" &
	opid=$!
	cpids=""
	i=0
	while [ "$i" -lt "$n" ]; do
		# shellcheck disable=SC2086
		timeout "$PROC_TIMEOUT" "$PEER" --role client --dir "$dir" --case "$c" --clients "$n" \
			--index "$i" $count >"$dir/client$i.out" 2>"$dir/client$i.err" &
		cpids="$cpids $!"
		i=$((i + 1))
	done
	why=""
	i=0
	for pid in $cpids; do
		wait "$pid"
		rc=$?
		[ "$rc" -eq 124 ] && why="${why}client $i timed out after ${PROC_TIMEOUT}s; "
		[ "$rc" -ne 0 ] && why="${why}client $i exit $rc; "
		grep -q '^PASS' "$dir/client$i.out" || why="${why}no PASS line from client $i; "
		i=$((i + 1))
	done
	wait "$opid"
	rc=$?
	[ "$rc" -eq 124 ] && why="${why}owner timed out after ${PROC_TIMEOUT}s; "
	[ "$rc" -ne 0 ] && why="${why}owner exit $rc; "
	grep -q '^PASS' "$dir/owner.out" || why="${why}no PASS line from the owner; "
	# Peers that finish one after the other are no failure: nothing may
	# log the other's departure as an ERROR.
	if grep -q 'ERROR.*peer unreachable\|ERROR.*no word from the peer\|ERROR.*peer process exited' \
		"$dir"/*.err 2>/dev/null; then
		why="${why}a side logged its finished peer's departure as an ERROR; "
	fi
	dt=$(echo "$(now) $t0" | awk '{ printf "%.2f", $1 - $2 }')
	label="$tr $c ($n client(s))"
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok   $label (${dt}s)"
		cat "$dir"/owner.out "$dir"/client*.out | sed -n 's/^\(PASS\|NOTE\) /       /p'
		[ "${SE_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
	else
		fail=$((fail + 1))
		echo "FAIL $label (${dt}s): ${why%; }"
		for f in "$dir"/*.out "$dir"/*.err; do
			[ -s "$f" ] || continue
			echo "    --- ${f##*/}"
			sed 's/^/    | /' "$f"
		done
		echo "    (files kept in $dir)"
	fi
}

[ -x "$PEER" ] || { echo "se_peer not found or not executable: $PEER" >&2; exit 2; }
command -v timeout >/dev/null || { echo "timeout(1) is required" >&2; exit 2; }

transports=$TRANSPORT
[ "$TRANSPORT" = all ] && transports="shm tcp"
cases=$CASE
[ "$CASE" = all ] && cases=$ALL_CASES
for tr in $transports; do
	for c in $cases; do
		run_case "$tr" "$c"
	done
done
echo "sync_event: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
