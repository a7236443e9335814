#!/bin/sh
# Two-process DOCA RDMA tests: each variant runs rdma_peer as a target (in
# the background) and an initiator (in the foreground), both under
# `timeout`, in a fresh directory where they exchange descriptors.
#
#   rdma_tests.sh PEER TRANSPORT CASE
#     PEER       path of the rdma_peer program
#     TRANSPORT  shm (UCX_TLS=self,sm,cma) | tcp (UCX_TLS=tcp over lo) |
#                auto (UCX's own choice) | all (shm and tcp)
#     CASE       a case name (see below) | all
#
# Prints one line per variant and exits non-zero if any failed; on failure
# it shows both processes' output. Set RDMA_TESTS_KEEP=1 to keep the
# directories.
set -u

PEER=${1:?usage: rdma_tests.sh PEER TRANSPORT CASE}
TRANSPORT=${2:?usage: rdma_tests.sh PEER TRANSPORT CASE}
CASE=${3:?usage: rdma_tests.sh PEER TRANSPORT CASE}
PAIR_TIMEOUT=${RDMA_TESTS_PAIR_TIMEOUT:-60}
TARGET_GRACE=${RDMA_TESTS_TARGET_GRACE:-15}

ALL_CASES="send send_imm write write_imm read write_overlap cas fadd write_noperm read_noperm ctxperm oob
atomic_misaligned revoked recv_small peer_kill peer_kill_write peer_kill_read forged_pid_dead forged_pid_alive"
# forged_pid_*: the keepalive timeout of both processes (ms).
FORGED_TIMEOUT_MS=${RDMA_TESTS_FORGED_TIMEOUT_MS:-3000}

# Data sizes and how many tasks are in flight at once, as SIZE:COUNT.
DATA_SIZES="1:1 1:64 4096:64 1M:8 16M:2"
ATOMIC_SIZES="8:1 8:64"

# The variants of a case, one per line: extra rdma_peer arguments.
# A leading "137" means the target is expected to die by SIGKILL.
variants() {
	case $1 in
	send | send_imm)
		echo "--size 0 --count 4"
		for sc in $DATA_SIZES; do echo "--size ${sc%:*} --count ${sc#*:}"; done
		if [ "$1" = send ]; then echo "--size 4096 --count 64 --wait notify"; fi
		;;
	write_imm)
		for sc in $DATA_SIZES; do echo "--size ${sc%:*} --count ${sc#*:}"; done
		;;
	write | read)
		for sc in $DATA_SIZES; do
			echo "--size ${sc%:*} --count ${sc#*:} --serve progress"
			echo "--size ${sc%:*} --count ${sc#*:} --serve block"
		done
		if [ "$1" = write ]; then echo "--size 4096 --count 64 --wait notify --serve block"; fi
		;;
	write_overlap)
		# rendezvous payloads (several in flight at the target), then eager ones
		for sc in "262144:24" "1048576:12" "4096:64"; do
			echo "--size ${sc%:*} --count ${sc#*:} --serve progress"
			echo "--size ${sc%:*} --count ${sc#*:} --serve block"
		done
		;;
	cas | fadd)
		for sc in $ATOMIC_SIZES; do
			echo "--size ${sc%:*} --count ${sc#*:} --serve progress"
			echo "--size ${sc%:*} --count ${sc#*:} --serve block"
		done
		;;
	write_noperm | read_noperm | ctxperm | oob | atomic_misaligned | revoked)
		echo "--serve progress"
		echo "--serve block"
		;;
	recv_small)
		echo ""
		;;
	peer_kill)
		echo "137 --count 8 --serve progress"
		echo "137 --count 8 --serve block"
		;;
	peer_kill_write | peer_kill_read)
		echo "137 --size 4M --count 16 --serve progress"
		echo "137 --size 4M --count 16 --serve block"
		;;
	forged_pid_dead)
		echo "137 --count 8 --serve progress"
		;;
	forged_pid_alive)
		echo "--count 8 --serve progress"
		echo "--count 8 --serve block"
		;;
	*)
		return 1
		;;
	esac
}

# shm: shared memory only (UCX_TLS=self,sm,cma); tcp: TCP over loopback
# only; auto (by hand only): whatever UCX and the library choose.
set_transport() {
	unset UCX_TLS UCX_NET_DEVICES
	case $1 in
	shm) export UCX_TLS=self,sm,cma ;;
	tcp) export UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
	auto) ;;
	*) echo "unknown transport $1 (shm, tcp, auto)" >&2; exit 2 ;;
	esac
	echo "# transport $1: UCX_TLS=${UCX_TLS:-(unset)} UCX_NET_DEVICES=${UCX_NET_DEVICES:-(unset)}"
}

now() { date +%s.%N; }

show() {
	for f in "$1"/target.out "$1"/target.err "$1"/initiator.out "$1"/initiator.err; do
		[ -s "$f" ] || continue
		echo "    --- ${f##*/}"
		sed 's/^/    | /' "$f"
	done
}

pass=0
fail=0
failed_list=""

# run_pair TRANSPORT CASE EXPECTED_TARGET_RC ARGS...
run_pair() {
	tr=$1 c=$2 want_trc=$3
	shift 3
	dir=$(mktemp -d "${TMPDIR:-/tmp}/rdma_test.XXXXXX") || exit 2
	label="$tr $c${*:+ $*}"
	t0=$(now)
	timeout "$PAIR_TIMEOUT" "$PEER" --role target --dir "$dir" --case "$c" "$@" \
		>"$dir/target.out" 2>"$dir/target.err" &
	tpid=$!
	timeout "$PAIR_TIMEOUT" "$PEER" --role initiator --dir "$dir" --case "$c" "$@" \
		>"$dir/initiator.out" 2>"$dir/initiator.err"
	irc=$?
	# The target finishes moments after the initiator; a watchdog stops
	# one that does not (e.g. its peer crashed without saying so).
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "$TARGET_GRACE" &
		s=$!
		wait "$s" && kill -TERM "$tpid"
	) >/dev/null 2>&1 &
	wd=$!
	wait "$tpid"
	trc=$?
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	dt=$(echo "$(now) $t0" | awk '{ printf "%.2f", $1 - $2 }')
	why=""
	[ "$irc" -eq 124 ] && why="initiator timed out after ${PAIR_TIMEOUT}s; "
	[ "$trc" -eq 124 ] && why="${why}target timed out after ${PAIR_TIMEOUT}s; "
	[ "$trc" -eq 143 ] && why="${why}target still running ${TARGET_GRACE}s after the initiator exited (stopped); "
	[ "$irc" -ne 0 ] && why="${why}initiator exit $irc; "
	[ "$trc" -ne "$want_trc" ] && why="${why}target exit $trc (expected $want_trc); "
	grep -q '^PASS' "$dir/initiator.out" || why="${why}no PASS line from the initiator; "
	if [ "$want_trc" -eq 0 ]; then
		grep -q '^PASS' "$dir/target.out" || why="${why}no PASS line from the target; "
	fi
	# UCX reports requests still held when a worker is destroyed (one
	# line each, in the process's output): a send or receive the engine
	# left behind, whatever the exit code says.
	for f in initiator target; do
		if grep -qs 'was not returned to mpool' "$dir/$f.out" "$dir/$f.err"; then
			why="${why}UCX requests of the $f were never freed (was not returned to mpool); "
		fi
	done
	# A refusal the target made is explained once in the initiator's
	# log, as the target saw it (docs/troubleshooting.md, case 5).
	explained=""
	case $c in
	ctxperm) explained="the peer refused it: the remote RDMA context (doca_rdma_set_permissions on the peer) lacks DOCA_ACCESS_FLAG_RDMA_WRITE" ;;
	write_noperm) explained="the peer refused it: the remote mmap (doca_mmap_set_permissions on the peer) lacks DOCA_ACCESS_FLAG_RDMA_WRITE" ;;
	oob) explained="the peer refused it: range [" ;;
	revoked) explained="the peer refused it: it has no memory region for the remote mmap" ;;
	esac
	if [ -n "$explained" ] && [ "$(grep -cF -- "$explained" "$dir/initiator.err")" -ne 1 ]; then
		why="${why}the initiator's log does not explain the target's refusal once (\"$explained\"); "
	fi
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok   $label (${dt}s)"
		sed -n 's/^\(PASS\|NOTE\) /       /p' "$dir/initiator.out" "$dir/target.out"
		[ "${RDMA_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
	else
		fail=$((fail + 1))
		failed_list="$failed_list
  $label"
		echo "FAIL $label (${dt}s): ${why%; }"
		show "$dir"
		echo "    (files kept in $dir)"
	fi
}

# Poll (bounded) for a file; false if the time runs out or process $2
# (when given) exits first.
wait_for_file() {
	f=$1 watch=${2:-} i=0
	while [ ! -e "$f" ]; do
		i=$((i + 1))
		[ "$i" -gt 1000 ] && return 1 # 20 s
		[ -n "$watch" ] && ! kill -0 "$watch" 2>/dev/null && return 1
		sleep 0.02
	done
	return 0
}

# The pid field of a connection descriptor: bytes 32..35, little-endian
# u32 (see src/engine/wire.c).
desc_pid() {
	od -An -tu4 -j32 -N4 "$1" | tr -d ' '
}

# forge_pid SRC DST PID: a copy of descriptor SRC naming PID, renamed into
# place whole.
forge_pid() {
	cp "$1" "$2.tmp" &&
		printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($3 & 255)) $(($3 >> 8 & 255)) $(($3 >> 16 & 255)) \
			$(($3 >> 24 & 255)))" | dd of="$2.tmp" bs=1 seek=32 count=4 conv=notrunc 2>/dev/null &&
		[ "$(desc_pid "$2.tmp")" = "$3" ] && mv "$2.tmp" "$2"
}

# run_forged TRANSPORT CASE EXPECTED_TARGET_RC ARGS...: like run_pair, but
# the initiator reads a copy of target.conn whose pid field names another
# process: one that has exited (forged_pid_dead; the initiator gets the
# real pid to freeze and kill the target) or a helper that exits once the
# initiator is connected (forged_pid_alive). Both processes run with
# SOFTDOCA_CONN_TIMEOUT_MS=$FORGED_TIMEOUT_MS. Over TCP the pid decides
# nothing: the connection works and lives as long as its peer answers.
# Over shared memory the initiator refuses at connect: UCX would open the
# files of the process the descriptor names, and that is not the target.
run_forged() {
	tr=$1 c=$2 want_trc=$3
	shift 3
	dir=$(mktemp -d "${TMPDIR:-/tmp}/rdma_test.XXXXXX") || exit 2
	label="$tr $c${*:+ $*}"
	why=""
	irc=0 hpid="" real=""
	t0=$(now)
	SOFTDOCA_CONN_TIMEOUT_MS=$FORGED_TIMEOUT_MS timeout "$PAIR_TIMEOUT" "$PEER" --role target --dir "$dir" \
		--case "$c" "$@" >"$dir/target.out" 2>"$dir/target.err" &
	tpid=$!
	if ! wait_for_file "$dir/target.conn" "$tpid"; then
		why="no target.conn from the target; "
	else
		real=$(desc_pid "$dir/target.conn")
		# The field must hold the target's real pid: the rdma_peer child of
		# our `timeout`.
		if [ -z "$real" ] || ! grep -q rdma_peer "/proc/$real/cmdline" 2>/dev/null ||
			[ "$(awk '{ print $4 }' "/proc/$real/stat" 2>/dev/null)" != "$tpid" ]; then
			why="bytes 32..35 of target.conn ($real) are not the target's pid (see src/engine/wire.c); "
		fi
	fi
	if [ -z "$why" ]; then
		if [ "$c" = forged_pid_dead ]; then
			sh -c 'exit 0' &
			fake=$!
			wait "$fake"
			kill -0 "$fake" 2>/dev/null && why="pid $fake of an exited process is in use again; "
			extra="--kill-pid $real"
		else
			sleep 600 &
			hpid=$!
			fake=$hpid
			extra=""
		fi
	fi
	if [ -z "$why" ] && forge_pid "$dir/target.conn" "$dir/target.conn.forged" "$fake"; then
		echo "# target pid $real; the initiator's copy of target.conn names pid $fake"
		# shellcheck disable=SC2086 # word splitting of $extra is intended
		SOFTDOCA_CONN_TIMEOUT_MS=$FORGED_TIMEOUT_MS timeout "$PAIR_TIMEOUT" "$PEER" --role initiator \
			--dir "$dir" --case "$c" --peer-desc target.conn.forged $extra "$@" \
			>"$dir/initiator.out" 2>"$dir/initiator.err" &
		ipid=$!
		if [ -n "$hpid" ] && [ "$tr" = shm ]; then
			:
		elif [ -n "$hpid" ]; then
			if wait_for_file "$dir/initiator.ready" "$ipid"; then
				kill "$hpid"
				wait "$hpid" 2>/dev/null
				hpid=""
				echo 1 >"$dir/helper.gone.tmp" && mv "$dir/helper.gone.tmp" "$dir/helper.gone"
			else
				why="${why}no initiator.ready from the initiator; "
			fi
		fi
		wait "$ipid"
		irc=$?
	elif [ -z "$why" ]; then
		why="cannot forge the pid field of target.conn; "
	fi
	[ -n "$hpid" ] && { kill "$hpid"; wait "$hpid"; } 2>/dev/null
	# A target the initiator froze and then failed to kill would wait for
	# ever (stopped): end it; over shared memory its initiator never came.
	[ -n "$real" ] && { [ "$want_trc" -ne 0 ] || [ "$tr" = shm ]; } && kill -KILL "$real" 2>/dev/null
	(
		trap 'kill "$s" 2>/dev/null; exit 0' TERM
		sleep "$TARGET_GRACE" &
		s=$!
		wait "$s" && kill -TERM "$tpid"
	) >/dev/null 2>&1 &
	wd=$!
	wait "$tpid"
	trc=$?
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	dt=$(echo "$(now) $t0" | awk '{ printf "%.2f", $1 - $2 }')
	[ "$irc" -eq 124 ] && why="${why}initiator timed out after ${PAIR_TIMEOUT}s; "
	if [ "$tr" = shm ]; then
		# Refused at connect, saying why; the target is ended above.
		[ "$irc" -eq 1 ] || why="${why}initiator exit $irc (expected 1: refused at connect); "
		grep -q "DOCA_ERROR_CONNECTION_ABORTED: the peer's descriptor is from process $fake on this host, which has exited, and its shared memory is not used" \
			"$dir/initiator.err" || why="${why}the initiator's log does not say why it refused; "
	else
		[ "$irc" -ne 0 ] && why="${why}initiator exit $irc; "
		[ "$trc" -ne "$want_trc" ] && why="${why}target exit $trc (expected $want_trc); "
		grep -q '^PASS' "$dir/initiator.out" 2>/dev/null || why="${why}no PASS line from the initiator; "
	fi
	if [ "$want_trc" -eq 0 ] && [ "$tr" != shm ]; then
		grep -q '^PASS' "$dir/target.out" || why="${why}no PASS line from the target; "
		grep -q "the process named in the peer's descriptor exited, but the peer answers" "$dir/initiator.err" ||
			why="${why}no WARNING about the wrong pid in the initiator's log; "
	fi
	t=$(sed -n 's/.*noticed after \([0-9.]*\) s.*/\1/p' "$dir/initiator.out" 2>/dev/null | head -n 1)
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok   $label (${dt}s)"
		sed -n 's/^\(PASS\|NOTE\) /       /p' "$dir/initiator.out" "$dir/target.out"
		grep -h "descriptor exited, but the peer answers" "$dir/initiator.err" | sed 's/^/       log: /'
		[ "${RDMA_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
	else
		fail=$((fail + 1))
		failed_list="$failed_list
  $label"
		echo "FAIL $label (${dt}s): ${why%; }"
		show "$dir"
		echo "    (files kept in $dir)"
	fi
	[ "$c" = forged_pid_dead ] &&
		echo "TIME-TO-NOTICE $label (SOFTDOCA_CONN_TIMEOUT_MS=$FORGED_TIMEOUT_MS): ${t:-none} s"
}

run_case() {
	tr=$1 c=$2
	v=$(variants "$c") || {
		echo "unknown case $c; cases: $(printf '%s' "$ALL_CASES" | tr '\n' ' ')" >&2
		exit 2
	}
	set_transport "$tr"
	# One variant a line; a loop over lines, not a pipe, so the counters
	# live in this shell.
	old_ifs=$IFS
	IFS='
'
	for line in $v; do
		IFS=$old_ifs
		want=0
		case $line in
		137*) want=137; line=${line#137} ;;
		esac
		# shellcheck disable=SC2086 # word splitting of the arguments is intended
		case $c in
		forged_pid_*) run_forged "$tr" "$c" "$want" $line ;;
		*) run_pair "$tr" "$c" "$want" $line ;;
		esac
		IFS='
'
	done
	IFS=$old_ifs
	# A variant list of one empty line (default arguments).
	if [ -z "$v" ]; then
		run_pair "$tr" "$c" 0
	fi
}

[ -x "$PEER" ] || { echo "rdma_peer not found or not executable: $PEER" >&2; exit 2; }
command -v timeout >/dev/null || { echo "timeout(1) is required" >&2; exit 2; }

transports=$TRANSPORT
[ "$TRANSPORT" = all ] && transports="shm tcp"
cases=$CASE
[ "$CASE" = all ] && cases=$ALL_CASES

start=$(now)
for tr in $transports; do
	for c in $cases; do
		run_case "$tr" "$c"
	done
done
total=$(echo "$(now) $start" | awk '{ printf "%.1f", $1 - $2 }')
echo "rdma: $pass passed, $fail failed in ${total}s"
if [ "$fail" -ne 0 ]; then
	echo "failed:$failed_list"
	exit 1
fi
exit 0
