#!/bin/sh
# Hostile-peer tests. A DOCA RDMA target (rdma_peer --role target
# --hostile) first serves hostile_peer, which speaks softdoca's wire
# protocol by hand and breaks it one way per scenario; when it is done the
# target checks that its region and canaries did not change by one byte
# and that the hostile connection was never closed, then serves an honest
# rdma_peer initiator on a second connection. Three processes, each under
# `timeout`, in a fresh directory where they exchange descriptors.
#
#   hostile_tests.sh PEER HOSTILE TRANSPORT GROUP
#     PEER       path of rdma_peer
#     HOSTILE    path of hostile_peer
#     TRANSPORT  shm (UCX_TLS=self,sm) | tcp (UCX_TLS=tcp over lo) | all
#     GROUP      conn | perm_read | perm_write | atomic | all
#
# Each group runs twice: target progressing, and target blocked (its
# service thread alone serves). Prints one line per run and one per
# scenario; exits non-zero if anything failed, showing every process's
# output. HOSTILE_TESTS_KEEP=1 keeps the directories.
#
# The conn group ends with a flood (hostile_peer's scen_flood: 1000
# messages of each of four kinds the target drops, each logged at its own
# place): the target's log must hold at most FLOOD_MAX_LINES lines of each
# kind (SDK log lines a peer can trigger are rate-limited per call site).
set -u

PEER=${1:?usage: hostile_tests.sh PEER HOSTILE TRANSPORT GROUP}
HOSTILE=${2:?usage: hostile_tests.sh PEER HOSTILE TRANSPORT GROUP}
TRANSPORT=${3:?usage: hostile_tests.sh PEER HOSTILE TRANSPORT GROUP}
GROUP=${4:?usage: hostile_tests.sh PEER HOSTILE TRANSPORT GROUP}
PROC_TIMEOUT=${HOSTILE_TESTS_TIMEOUT:-60}
TARGET_GRACE=${HOSTILE_TESTS_TARGET_GRACE:-15}
FLOOD_MAX_LINES=40

ALL_GROUPS="conn perm_read perm_write atomic"

# The target's case for a group: its exported region must grant what the
# group needs and lack what it tests (hostile_peer checks).
#   conn        oob:  RDMA_READ | RDMA_WRITE (no atomic), 8 KiB
#   perm_read   read: RDMA_READ only
#   perm_write  write: RDMA_WRITE only
#   atomic      fadd: RDMA_ATOMIC only, 96 bytes
case_args() {
	case $1 in
	conn) echo "--case oob" ;;
	perm_read) echo "--case read --size 4096 --count 1" ;;
	perm_write) echo "--case write --size 4096 --count 1" ;;
	atomic) echo "--case fadd --size 8 --count 4" ;;
	*) return 1 ;;
	esac
}

set_transport() {
	unset UCX_TLS UCX_NET_DEVICES
	case $1 in
	shm) export UCX_TLS=self,sm ;;
	tcp) export UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
	*) echo "unknown transport $1 (shm, tcp)" >&2; exit 2 ;;
	esac
	echo "# transport $1: UCX_TLS=$UCX_TLS UCX_NET_DEVICES=${UCX_NET_DEVICES:-(unset)}"
}

now() { date +%s.%N; }

show() {
	for f in target.out target.err hostile.out hostile.err initiator.out initiator.err; do
		[ -s "$1/$f" ] || continue
		echo "    --- $f"
		sed 's/^/    | /' "$1/$f"
	done
}

runs_ok=0
runs_failed=0
scen_ok=0
scen_failed=0
failed_list=""

# run_triple TRANSPORT GROUP SERVE
run_triple() {
	tr=$1 g=$2 serve=$3
	# shellcheck disable=SC2046 # word splitting of the case arguments is intended
	set -- $(case_args "$g") --serve "$serve"
	dir=$(mktemp -d "${TMPDIR:-/tmp}/hostile_test.XXXXXX") || exit 2
	label="$tr $g serve=$serve"
	t0=$(now)

	timeout "$PROC_TIMEOUT" "$PEER" --role target --hostile --dir "$dir" "$@" \
		>"$dir/target.out" 2>"$dir/target.err" &
	tpid=$!
	timeout "$PROC_TIMEOUT" "$HOSTILE" --dir "$dir" --group "$g" \
		>"$dir/hostile.out" 2>"$dir/hostile.err"
	hrc=$?
	# A hostile peer that died without a word must not leave the target
	# waiting for it until its own timeout.
	if [ ! -e "$dir/hostile.done" ] && [ ! -e "$dir/hostile.failed" ]; then
		echo "exit $hrc" >"$dir/hostile.failed"
	fi
	# The honest initiator: the target's second connection.
	timeout "$PROC_TIMEOUT" "$PEER" --role initiator --dir "$dir" "$@" \
		>"$dir/initiator.out" 2>"$dir/initiator.err"
	irc=$?
	(sleep "$TARGET_GRACE" && kill -TERM "$tpid") >/dev/null 2>&1 &
	wd=$!
	wait "$tpid"
	trc=$?
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	dt=$(echo "$(now) $t0" | awk '{ printf "%.2f", $1 - $2 }')

	why=""
	[ "$hrc" -eq 124 ] && why="${why}hostile peer timed out after ${PROC_TIMEOUT}s; "
	[ "$irc" -eq 124 ] && why="${why}initiator timed out after ${PROC_TIMEOUT}s; "
	[ "$trc" -eq 124 ] && why="${why}target timed out after ${PROC_TIMEOUT}s; "
	[ "$trc" -eq 143 ] && why="${why}target still running ${TARGET_GRACE}s after the initiator exited (stopped); "
	[ "$trc" -gt 128 ] && [ "$trc" -ne 143 ] && why="${why}target killed by signal $((trc - 128)); "
	[ "$hrc" -ne 0 ] && why="${why}hostile peer exit $hrc; "
	[ "$irc" -ne 0 ] && why="${why}initiator exit $irc; "
	[ "$trc" -ne 0 ] && why="${why}target exit $trc; "
	grep -q "^hostile $g: [1-9][0-9]* passed, 0 failed" "$dir/hostile.out" ||
		why="${why}no clean summary from the hostile peer; "
	grep -q '^PASS .*hostile phase' "$dir/target.out" ||
		why="${why}no hostile-phase PASS line from the target (memory, canaries, connection); "
	grep -q '^PASS .*memory and canaries as expected' "$dir/target.out" ||
		why="${why}no final PASS line from the target; "
	grep -q '^PASS' "$dir/initiator.out" || why="${why}no PASS line from the honest initiator; "
	if [ "$g" = conn ]; then
		for pat in 'with a wrong connection secret: dropped' 'message for unknown connection id' \
			'-byte header (want' 'of wire version'; do
			n=$(grep -c -e "$pat" "$dir/target.err")
			[ "$n" -le "$FLOOD_MAX_LINES" ] ||
				why="${why}the target logged $n lines of '$pat' for a flood of 1000 (at most $FLOOD_MAX_LINES); "
		done
	fi

	n_ok=$(grep -c '^PASS hostile ' "$dir/hostile.out")
	n_bad=$(grep -c '^FAIL hostile ' "$dir/hostile.out")
	scen_ok=$((scen_ok + n_ok))
	scen_failed=$((scen_failed + n_bad))
	if [ -z "$why" ]; then
		runs_ok=$((runs_ok + 1))
		echo "ok   $label (${dt}s): $n_ok scenarios passed"
	else
		runs_failed=$((runs_failed + 1))
		failed_list="$failed_list
  $label"
		echo "FAIL $label (${dt}s): ${why%; }"
	fi
	# One line per scenario, then the target's and the initiator's verdicts.
	sed -n -e 's/^PASS hostile [^ ]* /       ok   /p' -e 's/^FAIL hostile [^ ]* /       FAIL /p' \
		"$dir/hostile.out"
	sed -n 's/^PASS [^:]*: /       target: /p' "$dir/target.out"
	sed -n 's/^PASS [^:]*: /       honest initiator: /p' "$dir/initiator.out"
	if [ -z "$why" ]; then
		[ "${HOSTILE_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
	else
		show "$dir"
		echo "    (files kept in $dir)"
	fi
}

[ -x "$PEER" ] || { echo "rdma_peer not found or not executable: $PEER" >&2; exit 2; }
[ -x "$HOSTILE" ] || { echo "hostile_peer not found or not executable: $HOSTILE" >&2; exit 2; }
command -v timeout >/dev/null || { echo "timeout(1) is required" >&2; exit 2; }

transports=$TRANSPORT
[ "$TRANSPORT" = all ] && transports="shm tcp"
groups=$GROUP
[ "$GROUP" = all ] && groups=$ALL_GROUPS
for g in $groups; do
	case_args "$g" >/dev/null || { echo "unknown group $g; groups: $ALL_GROUPS" >&2; exit 2; }
done

start=$(now)
for tr in $transports; do
	set_transport "$tr"
	for g in $groups; do
		run_triple "$tr" "$g" progress
		run_triple "$tr" "$g" block
	done
done
total=$(echo "$(now) $start" | awk '{ printf "%.1f", $1 - $2 }')
echo "hostile: $runs_ok runs passed, $runs_failed failed; $scen_ok scenarios passed, $scen_failed failed; ${total}s"
if [ "$runs_failed" -ne 0 ]; then
	echo "failed:$failed_list"
	exit 1
fi
exit 0
