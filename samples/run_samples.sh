#!/usr/bin/env bash
# Play every softdoca RDMA sample pair on one host the way a user with two
# hosts would: each side runs in its own folder, descriptor files are
# copied across once they appear, and Enter is typed (through a FIFO on the
# side's standard input) when the side asks for it. Checks exit codes and
# the lines a user looks for, and prints a table of results.
#
#   run_samples.sh [options]
#     --bindir DIR       where the doca_rdma_* programs are
#                        (default: build/samples/doca_rdma next to this script)
#     --device NAME      device for both sides (default soft_lo)
#     --server-addr ADDR RDMA CM server address, one of the device's
#                        (default 127.0.0.1)
#     --pairs LIST       send send_imm read write write_imm sync_event
#                        multi_conn atomic errors   (default: all)
#     --modes LIST       files (descriptor files, RC), dc (descriptor files,
#                        DC), cm (RDMA CM)           (default: all)
#     --transports LIST  shm (UCX_TLS=self,sm), tcp (UCX_TLS=tcp over lo)
#                        (default: both)
#     --keep             keep every run's folder (failed runs are always kept)
#
# "errors" is not a pair: it checks what a user sees on a first failure
# (wrong -d, missing/empty/corrupt descriptor, closed stdin, leftover file,
# a directory or a path in a missing directory given as a descriptor path,
# an unreadable descriptor (not as root), a busy -lp port, a peer that is
# gone); it runs once per transport and ignores --modes.
#
# Exit status: 0 when nothing failed, 77 when everything was skipped
# (meson's "skipped"), 1 when something failed, 2 on a usage error.
set -u

here=$(cd "$(dirname "$0")" && pwd)
bindir=$here/../build/samples/doca_rdma
device=soft_lo
server_addr=127.0.0.1
all_pairs="send send_imm read write write_imm sync_event multi_conn atomic errors"
pairs=$all_pairs
modes="files dc cm"
transports="shm tcp"
keep=0

while [ $# -gt 0 ]; do
	case $1 in
	--bindir) bindir=$2; shift 2 ;;
	--device) device=$2; shift 2 ;;
	--server-addr) server_addr=$2; shift 2 ;;
	--pairs) pairs=$2; shift 2 ;;
	--modes) modes=$2; shift 2 ;;
	--transports) transports=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "run_samples.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

command -v timeout >/dev/null || { echo "run_samples.sh: timeout(1) is required" >&2; exit 2; }
[ -x "$bindir/doca_rdma_receive" ] ||
	{ echo "run_samples.sh: no doca_rdma_receive in $bindir (build first, or pass --bindir)" >&2; exit 2; }
bindir=$(cd "$bindir" && pwd)
case $server_addr in *:*) sat=ipv6 ;; *) sat=ipv4 ;; esac
case $device in soft_*) b_device=${device#soft_} ;; *) b_device=$device ;; esac

PROC_TIMEOUT=${RUN_SAMPLES_PROC_TIMEOUT:-90} # a sample's own peer limit is 60 s
STEP_TIMEOUT=${RUN_SAMPLES_STEP_TIMEOUT:-30} # longest wait for a file or a line
CM_SKIP_LINE='RDMA CM is not supported by this build'

# ------------------------------------------------------------------
# The pairs: passive side A (receiver/responder, the RDMA CM server) and
# active side B (sender/requester, the client).

declare -A A_PROG B_PROG A_FLAG B_FLAG OFFER FINISH_ENTER A_EXPECT B_EXPECT
def() { # pair A B A_flag B_flag offer finish_enter
	A_PROG[$1]=$2 B_PROG[$1]=$3 A_FLAG[$1]=$4 B_FLAG[$1]=$5 OFFER[$1]=$6 FINISH_ENTER[$1]=$7
}
def send rdma_receive rdma_send "" -s 0 0
def send_imm rdma_receive_immediate rdma_send_immediate "" -s 0 0
def read rdma_read_responder rdma_read_requester -r "" 1 1
def write rdma_write_responder rdma_write_requester "" -w 1 1
def write_imm rdma_write_immediate_responder rdma_write_immediate_requester "" -w 1 0
def sync_event rdma_sync_event_responder rdma_sync_event_requester "" "" 1 0
def multi_conn rdma_multi_conn_receive rdma_multi_conn_send "" -s 0 0
def atomic rdma_atomic_responder rdma_atomic_requester "" "" 1 1

# Lines that must appear; "|" separates several; @S@ is the run's string.
A_EXPECT[send]='Got from sender: "@S@"'
A_EXPECT[send_imm]='Got from sender: "@S@" with immediate: 43981'
B_EXPECT[read]='Read from responder: "@S@"'
A_EXPECT[write]='Requester has written: "@S@"'
A_EXPECT[write_imm]='Requester has written: "@S@" with immediate data: 43981'
A_EXPECT[sync_event]='The requester signaled the sync event: value 0xD0CA|The requester notified completion'
B_EXPECT[sync_event]='Received sync event value 0xD0CB|Remote sync event has been notified for completion'
A_EXPECT[multi_conn]='Got from sender: "@S@" on connection [0]|Got from sender: "@S@" on connection [1]'
A_EXPECT[atomic]='Requester'"'"'s atomic operations left the value 1023 (it started at 100)'
B_EXPECT[atomic]='Compare-and-swap: the responder'"'"'s value was 100, swapped in 1000|Fetch-and-add: the responder'"'"'s value was 1000, added 23, it is now 1023'

# A side is ready for its peer once it printed one of these.
READY_RE='Submitted [0-9a-z ]*receive task|Wait till the requester has finished|Waiting for the requester to signal'

# ------------------------------------------------------------------
# Processes: one folder, one FIFO on stdin and one log per side.

declare -A PID FD DIR
sides=""
why=""

now() { date +%s.%N; }

set_transport() {
	case $1 in
	shm) TR_ENV=(UCX_TLS=self,sm) ;;
	# TCP over the device's interface (soft_<iface>; lo by default).
	tcp) TR_ENV=(UCX_TLS=tcp "UCX_NET_DEVICES=${device#soft_}") ;;
	*) echo "run_samples.sh: unknown transport $1 (shm, tcp)" >&2; exit 2 ;;
	esac
}

# start NAME PROGRAM ARGS...: run doca_PROGRAM in $run/NAME.
start() {
	local name=$1 prog=$2 fd
	shift 2
	DIR[$name]=$run/$name
	mkdir -p "${DIR[$name]}"
	mkfifo "$run/$name.stdin"
	exec {fd}<>"$run/$name.stdin"
	FD[$name]=$fd
	# The child keeps none of the runner's FIFO ends: closing a side's FIFO
	# must reach it as end of input.
	(for f in "${FD[@]}"; do [ -n "$f" ] && eval "exec $f>&-"; done
	 cd "${DIR[$name]}" &&
		exec env "${TR_ENV[@]}" timeout "$PROC_TIMEOUT" "$bindir/doca_$prog" "$@") \
		<"$run/$name.stdin" >"$run/$name.log" 2>&1 &
	PID[$name]=$!
	sides="$sides $name"
}

alive() { kill -0 "${PID[$1]}" 2>/dev/null; }

# poll NAME WHAT TEST...: until TEST succeeds; fails when NAME exits first
# or after STEP_TIMEOUT seconds.
poll() {
	local name=$1 what=$2 deadline
	shift 2
	deadline=$(($(date +%s) + STEP_TIMEOUT))
	while ! "$@"; do
		if ! alive "$name"; then
			"$@" && return 0
			why="$name exited while the runner waited for $what"
			return 1
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			why="no $what from $name within ${STEP_TIMEOUT}s"
			return 1
		fi
		sleep 0.02
	done
}

count_lines() { # NAME REGEX N: at least N matching lines in NAME's log
	local n
	n=$(grep -c -E -- "$2" "$run/$1.log" 2>/dev/null)
	[ "${n:-0}" -ge "$3" ]
}

wait_file() { poll "$1" "file $2" test -s "${DIR[$1]}/$2"; }
wait_line() { poll "$1" "line /$2/" count_lines "$1" "$2" "${3:-1}"; }

# copy FROM FILE TO FILE2: the user copies FILE across once it exists.
copy() { wait_file "$1" "$2" && cp "${DIR[$1]}/$2" "${DIR[$3]}/$4"; }

# enter NAME N: once NAME has asked for Enter N times, type Enter.
enter() { wait_line "$1" 'press Enter' "$2" && echo >&"${FD[$1]}"; }

exited() { ! alive "$1"; }
wait_exit() { poll "$1" exit exited "$1"; }

close_stdin() { # NAME: end NAME's input
	local fd=${FD[$1]}
	[ -n "$fd" ] && exec {fd}>&-
	FD[$1]=""
}

# Stop whatever still runs, close the FIFOs, collect the exit codes.
declare -A RC
reap() {
	local name
	for name in $sides; do
		# After the last step every side should be finishing on its own.
		[ -z "$why" ] && wait_exit "$name"
		if alive "$name"; then kill -TERM "${PID[$name]}" 2>/dev/null; fi
		wait "${PID[$name]}"
		RC[$name]=$?
		close_stdin "$name"
	done
}

# ------------------------------------------------------------------
# One pair in one mode.

pick_port() {
	local p i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		command -v ss >/dev/null || break
		ss -Htan "sport = :$p" 2>/dev/null | grep -q . || break
	done
	echo "$p"
}

files() { echo -ld local.txt -re remote.txt -m res.txt; }

# play PAIR MODE STRING: the user's steps; sets $why on a problem.
play() {
	local p=$1 mode=$2 str=$3 a=${A_PROG[$1]} b=${B_PROG[$1]} af=() bf=() port i
	[ -n "${A_FLAG[$p]}" ] && af=("${A_FLAG[$p]}" "$str")
	[ -n "${B_FLAG[$p]}" ] && bf=("${B_FLAG[$p]}" "$str")
	case $mode in
	files)
		if [ "$p" = multi_conn ]; then
			# shellcheck disable=SC2046
			start A "$a" -d "$device" $(files) -nc 2 "${af[@]}"
			# shellcheck disable=SC2046
			start B "$b" -d "$device" $(files) -nc 2 "${bf[@]}"
			for i in 0 1; do
				copy A "local.txt-000$i" B "remote.txt-000$i" &&
					copy B "local.txt-000$i" A "remote.txt-000$i" &&
					enter A $((i + 1)) && enter B $((i + 1)) || return
			done
			wait_line A "$READY_RE" && enter B 3
			return
		fi
		# shellcheck disable=SC2046
		start A "$a" -d "$device" $(files) "${af[@]}"
		# -d also takes the interface name: the active side uses it.
		# shellcheck disable=SC2046
		start B "$b" -d "$b_device" $(files) "${bf[@]}"
		copy A local.txt B remote.txt || return
		if [ "${OFFER[$p]}" = 1 ]; then copy A res.txt B res.txt || return; fi
		copy B local.txt A remote.txt && enter A 1 && wait_line A "$READY_RE" && enter B 1 || return
		if [ "${FINISH_ENTER[$p]}" = 1 ]; then wait_exit B && enter A 2; fi
		;;
	dc)
		# shellcheck disable=SC2046
		start A "$a" -d "$device" $(files) -tt DC "${af[@]}"
		# shellcheck disable=SC2046
		start B "$b" -d "$device" $(files) -tt dc "${bf[@]}"
		copy A local.txt B remote.txt || return
		if [ "${OFFER[$p]}" = 1 ]; then copy A res.txt B res.txt || return; fi
		wait_line A "$READY_RE" && enter B 1 || return
		if [ "${FINISH_ENTER[$p]}" = 1 ]; then wait_exit B && enter A 1; fi
		;;
	cm)
		port=$(pick_port)
		if [ "$p" = multi_conn ]; then
			start A "$a" -d "$device" -cm -lp "$port" -nc 2 "${af[@]}"
		else
			start A "$a" -d "$device" -cm -lp "$port" "${af[@]}"
		fi
		wait_line A 'Listening for RDMA CM connections' || return
		start B "$b" -d "$device" -cm -lp "$port" -sa "$server_addr" -sat "$sat" "${bf[@]}"
		case $p in
		send | send_imm)
			wait_line A "$READY_RE" && enter B 1
			;;
		multi_conn)
			start B2 "$b" -d "$device" -cm -lp "$port" -sa "$server_addr" -sat "$sat" "${bf[@]}"
			wait_line A "$READY_RE" && enter B 1 && enter B2 1
			;;
		*)
			wait_line B 'Posted a receive for the' && enter A 1 || return
			if [ "${FINISH_ENTER[$p]}" = 1 ]; then wait_exit B && enter A 2; fi
			;;
		esac
		;;
	esac
}

# check PAIR STRING: exit codes and expected lines.
check() {
	local p=$1 str=$2 name expect line
	for name in $sides; do
		[ "${RC[$name]}" = 124 ] && why="${why:+$why; }$name timed out after ${PROC_TIMEOUT}s"
		[ "${RC[$name]}" != 0 ] && [ "${RC[$name]}" != 124 ] && why="${why:+$why; }$name exit ${RC[$name]}"
		grep -q 'Sample finished successfully' "$run/$name.log" ||
			why="${why:+$why; }no 'Sample finished successfully' from $name"
		# The sync event sides finish one after the other: neither may log
		# the other's departure (or anything else) as an ERROR.
		if [ "$p" = sync_event ] && grep -qF '[ERROR]' "$run/$name.log"; then
			why="${why:+$why; }$name logged an ERROR: $(grep -F '[ERROR]' "$run/$name.log" | head -1)"
		fi
		case $name in A) expect=${A_EXPECT[$p]:-} ;; *) expect=${B_EXPECT[$p]:-} ;; esac
		expect=${expect//@S@/$str}
		while [ -n "$expect" ]; do
			line=${expect%%|*}
			[ "$line" = "$expect" ] && expect="" || expect=${expect#*|}
			grep -qF -- "$line" "$run/$name.log" || why="${why:+$why; }$name did not print '$line'"
		done
	done
}

# ------------------------------------------------------------------
# First-failure checks: each runs one program alone.

# expect_fail NAME RC_WANTED LINE... : NAME's log must hold every LINE.
expect_fail() {
	local name=$1 line
	shift
	[ "${RC[$name]}" = 0 ] && why="${why:+$why; }$name succeeded but should have failed"
	[ "${RC[$name]}" = 124 ] && why="${why:+$why; }$name hung (stopped after ${PROC_TIMEOUT}s)"
	grep -q 'Sample finished with errors' "$run/$name.log" ||
		why="${why:+$why; }no 'Sample finished with errors' from $name"
	for line in "$@"; do
		grep -qF -- "$line" "$run/$name.log" || why="${why:+$why; }$name did not print '$line'"
	done
}

# expect_not NAME LINE: NAME's log must not hold LINE (a misleading message).
expect_not() {
	grep -qF -- "$2" "$run/$1.log" && why="${why:+$why; }$1 printed '$2'"
	return 0
}

# expect_any NAME "LINE|LINE...": NAME's log holds one of them.
expect_any() {
	local name=$1 rest=$2 line
	while [ -n "$rest" ]; do
		line=${rest%%|*}
		[ "$line" = "$rest" ] && rest="" || rest=${rest#*|}
		grep -qF -- "$line" "$run/$name.log" && return 0
	done
	why="${why:+$why; }$name printed none of '$2'"
}

play_errors() {
	# A wrong -d lists the devices.
	start wrong_dev rdma_receive -d no_such_device $(files)
	# A missing, an empty and a corrupt descriptor file name the file.
	start missing rdma_receive -d "$device" $(files)
	echo >&"${FD[missing]}"
	start empty rdma_receive -d "$device" $(files)
	: >"${DIR[empty]}/remote.txt"
	echo >&"${FD[empty]}"
	start corrupt rdma_receive -d "$device" $(files)
	printf 'this is not a descriptor\n' >"${DIR[corrupt]}/remote.txt"
	echo >&"${FD[corrupt]}"
	# Standard input closed while a side waits for Enter.
	start no_stdin rdma_send -d "$device" $(files)
	wait_line no_stdin 'press Enter' && close_stdin no_stdin
	# A leftover descriptor file is not overwritten.
	mkdir -p "$run/leftover" && echo old >"$run/leftover/local.txt"
	start leftover rdma_receive -d "$device" $(files)
	# Descriptor paths that cannot work: a directory, a missing directory.
	mkdir -p "$run/a_dir"
	start ld_dir rdma_receive -d "$device" -ld "$run/a_dir" -re remote.txt -m res.txt
	start ld_nodir rdma_receive -d "$device" -ld "$run/no_such_dir/local.txt" -re remote.txt -m res.txt
	start re_dir rdma_receive -d "$device" -ld local.txt -re "$run/a_dir" -m res.txt
	echo >&"${FD[re_dir]}"
	start re_nodir rdma_receive -d "$device" -ld local.txt -re "$run/no_such_dir/remote.txt" -m res.txt
	echo >&"${FD[re_nodir]}"
	# A descriptor this user may not read (root reads everything: skipped).
	unreadable=""
	if [ "$(id -u)" != 0 ]; then
		unreadable=1
		start unreadable rdma_receive -d "$device" $(files)
		echo x >"${DIR[unreadable]}/remote.txt" && chmod 000 "${DIR[unreadable]}/remote.txt"
		echo >&"${FD[unreadable]}"
	fi

	# The peer's side of the next checks gives up after 3 s, not 60.
	TR_ENV+=(SOFTDOCA_SAMPLE_TIMEOUT=3)
	# A peer that is gone: a sender's descriptor whose sender has exited.
	start gone_sender rdma_send -d "$device" $(files)
	wait_file gone_sender local.txt || return
	kill -TERM "${PID[gone_sender]}"
	mkdir -p "$run/gone" && cp "${DIR[gone_sender]}/local.txt" "$run/gone/remote.txt"
	start gone rdma_receive -d "$device" $(files)
	echo >&"${FD[gone]}"
	# RDMA CM: a port another program listens on (here another server).
	busy_port=$(pick_port)
	start busy_owner rdma_receive -d "$device" -cm -lp "$busy_port"
	if wait_line busy_owner "Listening for RDMA CM connections on port $busy_port|$CM_SKIP_LINE"; then
		start busy rdma_receive -d "$device" -cm -lp "$busy_port"
		wait_exit busy
	fi
	# RDMA CM: a client with no server, a server with no client.
	start cm_client rdma_send -d "$device" -cm -sa "$server_addr" -sat "$sat" -lp "$(pick_port)"
	start cm_server rdma_receive -d "$device" -cm -lp "$(pick_port)"
	# A peer that runs but never connects back (its user never pressed Enter).
	start silent_sender rdma_send -d "$device" $(files)
	start silent rdma_receive -d "$device" $(files)
	copy silent_sender local.txt silent remote.txt && enter silent 1 && wait_exit silent
	kill -TERM "${PID[silent_sender]}"
}

check_errors() {
	expect_fail wrong_dev 'No DOCA device is named "no_such_device"' 'Available devices' "$device"
	expect_fail missing 'Failed to open the file remote.txt for reading' \
		'from remote.txt: No such file or directory' 'copy it here (to remote.txt)'
	# NVIDIA's samples' line comes before softdoca's explanation.
	if [ "$(grep -n -m1 -F 'Failed to open the file remote.txt' "$run/missing.log" | cut -d: -f1)" -gt \
		"$(grep -n -m1 -F 'No such file or directory' "$run/missing.log" | cut -d: -f1)" ] 2>/dev/null; then
		why="${why:+$why; }missing: 'Failed to open the file ...' came after the explanation"
	fi
	expect_fail empty 'remote.txt is empty'
	expect_fail corrupt 'connection descriptor in remote.txt was refused'
	expect_fail no_stdin 'Standard input ended while waiting for Enter'
	expect_fail leftover 'local.txt: the file already exists'
	expect_fail ld_dir "-ld: $run/a_dir is a directory; give the path of a file" "for example -ld $run/a_dir/"
	expect_not ld_dir 'already exists'
	expect_fail ld_nodir "local.txt: the directory $run/no_such_dir does not exist; create it"
	expect_fail re_dir "-re: $run/a_dir is a directory"
	expect_fail re_nodir "remote.txt: the directory $run/no_such_dir does not exist"
	if [ -n "$unreadable" ]; then
		expect_fail unreadable 'this user may not read that file'
	fi
	expect_fail gone 'Cannot reach the sender that wrote remote.txt' 'The sender never connected'
	expect_fail silent "Gave up after 3 seconds waiting for the sender's message" 'never connected or never answered'
	expect_fail busy
	expect_any busy "$CM_SKIP_LINE|Cannot listen on port $busy_port: another program is listening on it; pick another port with -lp"
	# That line comes first, and alone: no other error line before or after it.
	if ! grep -qF "$CM_SKIP_LINE" "$run/busy.log" && [ "$(grep -c -F '[ERROR]' "$run/busy.log")" != 1 ]; then
		why="${why:+$why; }busy printed more than the one error line about the port: $(grep -F '[ERROR]' "$run/busy.log" | head -3 | tr '\n' ' ')"
	fi
	expect_fail busy_owner
	expect_fail cm_client
	expect_any cm_client "$CM_SKIP_LINE|Could not connect to the receiver at $server_addr|Gave up after 3 seconds"
	expect_fail cm_server
	expect_any cm_server "$CM_SKIP_LINE|Gave up after 3 seconds waiting for 1 sender to connect"
}

# ------------------------------------------------------------------
# The table.

declare -A RESULT
failed_runs=""
n_pass=0 n_fail=0 n_skip=0

run_one() { # PAIR MODE TRANSPORT
	local p=$1 mode=$2 tr=$3 str t0 dt res name
	key="$p $mode $tr"
	if [ "$p" = multi_conn ] && [ "$mode" = dc ]; then RESULT[$key]="n/a"; return; fi
	run=$(mktemp -d "${TMPDIR:-/tmp}/run_samples.XXXXXX") || exit 2
	sides="" why=""
	PID=() FD=() DIR=() RC=()
	set_transport "$tr"
	str="softdoca $p $mode/$tr"
	t0=$(now)
	if [ "$p" = errors ]; then
		play_errors
		reap
		[ -z "$why" ] && check_errors
	else
		play "$p" "$mode" "$str"
		reap
		check "$p" "$str"
	fi
	dt=$(echo "$(now) $t0" | awk '{ printf "%.1f", $1 - $2 }')
	if [ "$mode" = cm ] && grep -qF "$CM_SKIP_LINE" "$run"/*.log 2>/dev/null; then
		res="SKIP" why="RDMA CM not supported by this build"
		n_skip=$((n_skip + 1))
		echo "SKIP $key (RDMA CM not supported by this build)"
	elif [ -z "$why" ]; then
		res="ok ${dt}s"
		n_pass=$((n_pass + 1))
		echo "ok   $key (${dt}s)"
	else
		res="FAIL"
		n_fail=$((n_fail + 1))
		failed_runs="$failed_runs
  $key: $why"
		echo "FAIL $key (${dt}s): $why"
		for name in $sides; do
			echo "    --- $name (exit ${RC[$name]:-?}): $run/$name.log"
			sed 's/^/    | /' "$run/$name.log"
		done
		echo "    (files kept in $run)"
	fi
	RESULT[$key]=$res
	if [ "$res" != FAIL ] && [ "$keep" = 0 ]; then rm -rf "$run"; fi
}

start_time=$(now)
for p in $pairs; do
	[ -n "${A_PROG[$p]:-}" ] || [ "$p" = errors ] ||
		{ echo "run_samples.sh: unknown pair $p ($all_pairs)" >&2; exit 2; }
	for tr in $transports; do
		if [ "$p" = errors ]; then
			run_one errors - "$tr"
			continue
		fi
		for mode in $modes; do
			case $mode in files | dc | cm) ;; *) echo "run_samples.sh: unknown mode $mode" >&2; exit 2 ;; esac
			run_one "$p" "$mode" "$tr"
		done
	done
done
total=$(echo "$(now) $start_time" | awk '{ printf "%.1f", $1 - $2 }')

echo
printf '%-12s' pair
for mode in $modes; do for tr in $transports; do printf ' %-10s' "$mode/$tr"; done; done
echo
for p in $pairs; do
	printf '%-12s' "$p"
	first=1
	for mode in $modes; do
		for tr in $transports; do
			if [ "$p" != errors ]; then
				cell=${RESULT[$p $mode $tr]:--}
			elif [ "$first" = 1 ]; then
				cell=${RESULT[errors - $tr]:--}
			else
				cell=""
			fi
			printf ' %-10s' "$cell"
		done
		first=0
	done
	echo
done
echo "samples: $n_pass passed, $n_fail failed, $n_skip skipped in ${total}s"
if [ "$n_fail" -ne 0 ]; then
	echo "failed:$failed_runs"
	exit 1
fi
[ "$n_pass" -eq 0 ] && [ "$n_skip" -gt 0 ] && exit 77
exit 0
