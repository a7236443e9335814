#!/usr/bin/env bash
# Many RDMA CM clients connecting and disconnecting at once against one
# server (swarm_peer): one server process; one warm-up client alone (the
# server then counts its fds); then CLIENTS client processes in parallel,
# each cycling (fresh context, connect_to_addr, established, one send,
# disconnect, destroy) for SECONDS or CYCLES cycles, whichever ends
# first, half of them over IPv4 (127.0.0.1),
# half over IPv6 (::1) when lo has it. Every request must be accepted and
# established, and the server's fds must be back to the baseline after
# the last client; the server checks its counts against the sum of the
# clients' (see swarm_peer.c).
#
#   swarm_tests.sh PEER TRANSPORT [SECONDS] [CLIENTS] [CYCLES]
#     PEER       path of the swarm_peer program
#     TRANSPORT  shm   UCX_TLS=self,sm (shared memory between the processes)
#                tcp   UCX_TLS=tcp over lo only (softdoca's TCP link)
#     SECONDS    how long each client cycles (default 25)
#     CLIENTS    default 20
#     CYCLES     per client, default 250 (0: no limit). Over TCP a client
#                cycles in about 6 ms: unbounded, 20 of them make 90,000
#                connections in 25 s, whose sockets then sit in TIME_WAIT
#                for a minute and hold most of the ephemeral ports of lo
#                (other tests' binds there fail with EADDRINUSE)
#
# SWARM_PEER_DEBUG=1 has every process log the library at DEBUG.
# Prints every process's counts and exits non-zero if any failed; a failed
# run keeps its directory (SWARM_TESTS_KEEP=1 keeps it always).
set -u

PEER=${1:?usage: swarm_tests.sh PEER shm|tcp [SECONDS] [CLIENTS] [CYCLES]}
TRANSPORT=${2:?usage: swarm_tests.sh PEER shm|tcp [SECONDS] [CLIENTS] [CYCLES]}
SECONDS_=${3:-25}
CLIENTS=${4:-20}
CYCLES=${5:-250}
# A client's last cycle may start just before its time is up and take up
# to its own bounds (15 s to connect, 15 s to send, 10 s to stop).
PROC_TIMEOUT=$((SECONDS_ + 60))
FILE_WAIT_S=20

[ -x "$PEER" ] || { echo "swarm_peer not found or not executable: $PEER" >&2; exit 2; }
command -v timeout >/dev/null || { echo "timeout(1) is required" >&2; exit 2; }

unset UCX_TLS UCX_NET_DEVICES
case $TRANSPORT in
shm) export UCX_TLS=self,sm ;;
tcp) export UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
*) echo "unknown transport $TRANSPORT (shm or tcp)" >&2; exit 2 ;;
esac

families=(4)
if [ -r /proc/net/if_inet6 ] && grep -q '^00000000000000000000000000000001 .* lo$' /proc/net/if_inet6; then
	families=(4 6)
fi

now() { date +%s.%N; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/swarm_test.XXXXXX") || exit 2
why=""
names=()

# wait_file NAME PID: until DIR/NAME exists (bounded), while PID lives.
wait_file() {
	local deadline=$((SECONDS + FILE_WAIT_S))
	while [ ! -e "$dir/$1" ]; do
		if ! kill -0 "$2" 2>/dev/null; then
			why="${why}the server exited before writing $1; "
			return 1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			why="${why}no $1 from the server within ${FILE_WAIT_S}s; "
			return 1
		fi
		# Polls a file the server writes when it is done; bounded above.
		sleep 0.05
	done
}

# check NAME RC: a process's exit code and PASS line.
check() {
	case $2 in
	0) grep -q '^PASS' "$dir/$1.out" || why="${why}no PASS line from $1; " ;;
	124) why="${why}$1 timed out after ${PROC_TIMEOUT}s; " ;;
	*) why="${why}$1 exited $2; " ;;
	esac
}

t0=$(now)
timeout "$PROC_TIMEOUT" "$PEER" --role server --dir "$dir" --watchdog $((PROC_TIMEOUT - 5)) \
	>"$dir/server.out" 2>"$dir/server.err" &
server=$!
names+=(server)
pids=()
if wait_file server.port "$server"; then
	names+=(warm)
	timeout "$PROC_TIMEOUT" "$PEER" --role client --dir "$dir" --name warm --cycles 5 \
		>"$dir/warm.out" 2>"$dir/warm.err"
	check warm $?
	touch "$dir/warm"
	if [ -z "$why" ] && wait_file baseline "$server"; then
		i=0
		for i in $(seq 1 "$CLIENTS"); do
			fam=${families[$(((i - 1) % ${#families[@]}))]}
			timeout "$PROC_TIMEOUT" "$PEER" --role client --dir "$dir" --name "client$i" \
				--seconds "$SECONDS_" --cycles "$CYCLES" --family "$fam" \
				--watchdog $((PROC_TIMEOUT - 5)) \
				>"$dir/client$i.out" 2>"$dir/client$i.err" &
			pids+=($!)
			names+=("client$i")
		done
		for i in "${!pids[@]}"; do
			wait "${pids[$i]}"
			check "client$((i + 1))" $?
		done
	fi
fi
touch "$dir/stop"
wait "$server"
check server $?
dt=$(echo "$(now) $t0" | awk '{ printf "%.1f", $1 - $2 }')

label="cm: $CLIENTS clients connecting and disconnecting in parallel (${SECONDS_}s or $CYCLES cycles each) against one server (IPv$(IFS=+; echo "${families[*]}"), UCX_TLS=$UCX_TLS)"
# Every client's count, one line each, then the server's.
summary() {
	for n in "${names[@]}"; do
		sed -n 's/^\(PASS\|NOTE\|FAIL\) /       /p' "$dir/$n.out"
	done
}
if [ -z "$why" ]; then
	echo "ok   $label (${dt}s)"
	summary
	[ "${SWARM_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
	exit 0
fi
echo "FAIL $label (${dt}s): ${why%; }"
summary
for n in "${names[@]}"; do
	f="$dir/$n.err"
	[ -s "$f" ] || continue
	echo "    --- ${f##*/}"
	if [ "$(wc -l <"$f")" -gt 40 ]; then
		head -n 20 "$f" | sed 's/^/    | /'
		echo "    | ... ($(wc -l <"$f") lines)"
		tail -n 20 "$f" | sed 's/^/    | /'
	else
		sed 's/^/    | /' "$f"
	fi
done
echo "    (files kept in $dir)"
exit 1
