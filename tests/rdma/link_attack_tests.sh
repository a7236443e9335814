#!/bin/sh
# Attacks on a target's listening TCP ports (link_attack), each against a
# fresh DOCA RDMA target (rdma_peer --role target) over TCP (UCX_TLS=tcp
# over lo); after the attack an honest rdma_peer initiator must complete
# its writes (or, against a read-only export, its reads) with that target.
#
#   link_attack_tests.sh PEER ATTACKER ATTACK...
#     PEER      path of rdma_peer (target and initiator: either tree's)
#     ATTACKER  path of link_attack
#     ATTACK    an attack name of link_attack, or all (noread is an
#               authenticated peer's, not a stranger's: see link_attack.c)
#
# Each run checks:
#   - link_attack's own checks (every connection closed by the target in
#     its bound, the target alive, its descriptors back; idle: bounded
#     while 1000 connections are held);
#   - the target exited 0 (no SIGABRT, SIGSEGV) and its region and
#     canaries are byte for byte what the honest initiator made them;
#   - the honest initiator passed (idle: while the 1000 are held);
#   - the attack's bytes were read by softdoca's own link parser: the
#     target logged its refusal of the attack's connections ("tcp link:
#     connection from ... refused"). A port whose bytes another library
#     reads (UCX's TCP transport: it closes a connection with the wrong
#     magic silently, and crashes on the right one) fails here even where
#     it happened to survive.
# Every process runs bounded (PROC_TIMEOUT); the target is killed if it
# outlives its initiator by TARGET_GRACE. Prints one line per run, the
# details of a failed one, and exits non-zero if any failed.
# LINK_ATTACK_KEEP=1 keeps the directories.
set -u

PEER=${1:?usage: link_attack_tests.sh PEER ATTACKER ATTACK...}
ATTACKER=${2:?usage: link_attack_tests.sh PEER ATTACKER ATTACK...}
shift 2
[ $# -gt 0 ] || { echo "usage: link_attack_tests.sh PEER ATTACKER ATTACK..." >&2; exit 2; }
PROC_TIMEOUT=${LINK_ATTACK_TIMEOUT:-60}
TARGET_GRACE=${LINK_ATTACK_TARGET_GRACE:-15}
ALL="ucx_len ucx_amid ucx_put readonly_put random noauth badsecret authid truncated slowloris idle noread"

# The target's case for an attack, and how it serves: readonly_put runs
# against a read-only export (the initiator reads); the rest against a
# writable one (the initiator writes, the target checks every byte).
# Blocked targets (only the service thread serves) for half of them.
case_args() {
	case $1 in
	readonly_put) echo "--case read --size 4096 --count 1 --serve block" ;;
	# noread plays the target's first (--hostile) connection; the honest
	# initiator is its second
	noread) echo "--case read --size 16384 --count 1 --serve block --hostile" ;;
	ucx_len | ucx_put | noauth | authid | slowloris | idle)
		echo "--case write --size 4096 --count 4 --serve block" ;;
	*) echo "--case write --size 4096 --count 4 --serve progress" ;;
	esac
}

export UCX_TLS=tcp UCX_NET_DEVICES=lo

now() { date +%s.%N; }

show() {
	for f in attack.out attack.err target.out target.err initiator.out initiator.err; do
		[ -s "$1/$f" ] || continue
		echo "    --- $f"
		sed 's/^/    | /' "$1/$f" | head -n 60
	done
}

# Wait (bounded) until file $1 exists or process $2 has ended.
wait_file_or_exit() {
	i=0
	while [ ! -e "$1" ] && kill -0 "$2" 2>/dev/null && [ $i -lt $((PROC_TIMEOUT * 20)) ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -e "$1" ]
}

signame() { kill -l "$1" 2>/dev/null || echo "$1"; }

ok=0
failed=0
skipped=0
failed_list=""

run_one() {
	a=$1
	# shellcheck disable=SC2046 # word splitting of the case arguments is intended
	set -- $(case_args "$a")
	dir=$(mktemp -d "${TMPDIR:-/tmp}/link_attack.XXXXXX") || exit 2
	t0=$(now)
	# noread's peer is silent once it has sent its reads, and the target
	# stops reading it: the keepalive would rightly end it after its
	# timeout, which a slow run (ThreadSanitizer) reaches before the
	# attack is over. The attack is about memory, not the keepalive.
	tenv=""
	[ "$a" = noread ] && tenv="SOFTDOCA_CONN_TIMEOUT_MS=$((PROC_TIMEOUT * 1000))"
	# shellcheck disable=SC2086 # tenv is empty or one word
	env $tenv "$PEER" --role target --dir "$dir" "$@" >"$dir/target.out" 2>"$dir/target.err" &
	tpid=$!
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "$PROC_TIMEOUT" &
		s=$!
		wait "$s" && kill -KILL "$tpid"
	) >/dev/null 2>&1 &
	tdog=$!
	timeout "$PROC_TIMEOUT" "$ATTACKER" --pid "$tpid" --dir "$dir" --attack "$a" \
		>"$dir/attack.out" 2>"$dir/attack.err" &
	apid=$!
	if [ "$a" = idle ]; then
		# The honest initiator runs while the idle connections are held.
		wait_file_or_exit "$dir/attack.holding" "$apid"
	else
		wait "$apid"
		arc=$?
	fi
	# The initiator takes the target's arguments but --hostile.
	iargs=""
	for x in "$@"; do [ "$x" = --hostile ] || iargs="$iargs $x"; done
	# shellcheck disable=SC2086 # word splitting of the arguments is intended
	timeout "$PROC_TIMEOUT" "$PEER" --role initiator --dir "$dir" $iargs \
		>"$dir/initiator.out" 2>"$dir/initiator.err"
	irc=$?
	if [ "$a" = idle ]; then
		: >"$dir/attack.release"
		wait "$apid"
		arc=$?
	fi
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "$TARGET_GRACE" &
		s=$!
		wait "$s" && kill -TERM "$tpid"
	) >/dev/null 2>&1 &
	wd=$!
	wait "$tpid"
	trc=$?
	kill "$wd" "$tdog" 2>/dev/null
	wait "$wd" "$tdog" 2>/dev/null
	dt=$(echo "$(now) $t0" | awk '{ printf "%.2f", $1 - $2 }')

	if [ "$arc" -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "skip $a: $(grep -m1 '^SKIP' "$dir/attack.out")"
		rm -rf "$dir"
		return
	fi
	why=""
	[ "$trc" -gt 128 ] && why="${why}target killed by SIG$(signame $((trc - 128))); "
	[ "$trc" -ne 0 ] && [ "$trc" -le 128 ] && why="${why}target exit $trc; "
	[ "$arc" -eq 124 ] && why="${why}link_attack timed out after ${PROC_TIMEOUT}s; "
	[ "$arc" -ne 0 ] && why="${why}link_attack exit $arc; "
	[ "$irc" -ne 0 ] && why="${why}honest initiator exit $irc; "
	grep -q '^PASS .*memory and canaries as expected' "$dir/target.out" ||
		why="${why}no PASS from the target (its memory and canaries, or it died); "
	grep -q '^PASS' "$dir/initiator.out" || why="${why}no PASS from the honest initiator; "
	# noread is an authenticated peer: nothing of it is refused
	[ "$a" = noread ] || grep -q 'tcp link: connection from .* refused' "$dir/target.err" ||
		why="${why}the target's log shows no refusal by softdoca's link parser (who read the bytes?); "

	if [ -z "$why" ]; then
		ok=$((ok + 1))
		echo "ok   $a (${dt}s): $(grep -c '^PASS link_attack' "$dir/attack.out") checks passed;" \
			"target and honest initiator passed"
	else
		failed=$((failed + 1))
		failed_list="$failed_list $a"
		echo "FAIL $a (${dt}s): ${why%; }"
	fi
	sed -n -e 's/^PASS link_attack [^ ]* /       ok   /p' -e 's/^FAIL link_attack [^ ]* /       FAIL /p' \
		-e 's/^NOTE link_attack [^:]*: /       note /p' "$dir/attack.out"
	sed -n 's/^PASS [^:]*: /       target: /p' "$dir/target.out"
	sed -n 's/^PASS [^:]*: /       honest initiator: /p' "$dir/initiator.out"
	n=$(grep -c 'tcp link: connection from .* refused' "$dir/target.err")
	echo "       target log: $n refusal line(s) by the tcp link"
	if [ -z "$why" ] && [ "${LINK_ATTACK_KEEP:-0}" != 1 ]; then
		rm -rf "$dir"
	else
		show "$dir"
		echo "    (files kept in $dir)"
	fi
}

[ -x "$PEER" ] || { echo "rdma_peer not found or not executable: $PEER" >&2; exit 2; }
[ -x "$ATTACKER" ] || { echo "link_attack not found or not executable: $ATTACKER" >&2; exit 2; }
command -v timeout >/dev/null || { echo "timeout(1) is required" >&2; exit 2; }

list=$*
[ "$list" = all ] && list=$ALL
start=$(now)
for a in $list; do
	run_one "$a"
done
total=$(echo "$(now) $start" | awk '{ printf "%.1f", $1 - $2 }')
echo "link_attack: $ok passed, $failed failed, $skipped skipped; ${total}s"
if [ "$failed" -ne 0 ]; then
	echo "failed:$failed_list"
	exit 1
fi
[ "$ok" -eq 0 ] && [ "$skipped" -gt 0 ] && exit 77
exit 0
