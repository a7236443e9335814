#!/usr/bin/env bash
# Connect/transfer/disconnect cycles on one host: one long-lived
# cycle_peer server, one cycle_peer client that runs N cycles against it
# (each with a fresh context), both under `timeout`, in a fresh directory
# where they meet. Each checks that its own RSS, mappings, SysV mappings
# and fds stay flat after the warm-up.
#
#   cycle_tests.sh PEER TRANSPORT [CYCLES]
#     PEER       path of the cycle_peer program
#     TRANSPORT  shm   UCX's default transports (shared memory between the
#                      two processes)
#                tcp   UCX_TLS=tcp over lo only
#     CYCLES     default 200 (the warm-up is cycle 20)
#
# Prints both processes' figures and exits non-zero if either failed; a
# failed run keeps its directory. CYCLE_TESTS_KEEP=1 keeps it always.
set -u

PEER=${1:?usage: cycle_tests.sh PEER shm|tcp [CYCLES]}
TRANSPORT=${2:?usage: cycle_tests.sh PEER shm|tcp [CYCLES]}
CYCLES=${3:-200}
PROC_TIMEOUT=${CYCLE_TESTS_PROC_TIMEOUT:-110}
WATCHDOG=$((PROC_TIMEOUT - 5))

[ -x "$PEER" ] || { echo "cycle_peer not found or not executable: $PEER" >&2; exit 2; }
command -v timeout >/dev/null || { echo "timeout(1) is required" >&2; exit 2; }

unset UCX_TLS UCX_NET_DEVICES
case $TRANSPORT in
shm) ;;
tcp) export UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
*) echo "unknown transport $TRANSPORT (shm or tcp)" >&2; exit 2 ;;
esac
# One malloc arena: glibc gives a thread its own (two new mappings) at its
# first malloc, and UCX 1.16's async thread first mallocs whenever an
# event first finds its worker busy, in any cycle: growth, not a leak.
export MALLOC_ARENA_MAX=1

now() { date +%s.%N; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/cycle_test.XXXXXX") || exit 2
t0=$(now)
timeout "$PROC_TIMEOUT" "$PEER" --role server --dir "$dir" --cycles "$CYCLES" --watchdog "$WATCHDOG" \
	>"$dir/server.out" 2>"$dir/server.err" &
server=$!
timeout "$PROC_TIMEOUT" "$PEER" --role client --dir "$dir" --cycles "$CYCLES" --watchdog "$WATCHDOG" \
	>"$dir/client.out" 2>"$dir/client.err"
client_rc=$?
wait "$server"
server_rc=$?
dt=$(echo "$(now) $t0" | awk '{ printf "%.1f", $1 - $2 }')

why=""
for n in server client; do
	rc=$server_rc
	[ "$n" = client ] && rc=$client_rc
	case $rc in
	0) grep -q '^PASS' "$dir/$n.out" || why="${why}no PASS line from the $n; " ;;
	124) why="${why}the $n timed out after ${PROC_TIMEOUT}s; " ;;
	*) why="${why}the $n exited $rc; " ;;
	esac
done

label="cm/IPv4 $CYCLES connect/send/disconnect cycles against one server (UCX_TLS=${UCX_TLS:-default})"
if [ -z "$why" ]; then
	echo "ok   $label (${dt}s)"
	for n in server client; do
		sed -n 's/^\(PASS\|NOTE\) /       /p' "$dir/$n.out"
	done
	[ "${CYCLE_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
	exit 0
fi
echo "FAIL $label (${dt}s): ${why%; }"
for f in "$dir/server.out" "$dir/server.err" "$dir/client.out" "$dir/client.err"; do
	[ -s "$f" ] || continue
	echo "    --- ${f##*/}"
	# A failing engine may log once a cycle: the head and tail suffice.
	if [ "$(wc -l <"$f")" -gt 80 ]; then
		head -n 40 "$f" | sed 's/^/    | /'
		echo "    | ... ($(wc -l <"$f") lines)"
		tail -n 40 "$f" | sed 's/^/    | /'
	else
		sed 's/^/    | /' "$f"
	fi
done
echo "    (files kept in $dir)"
exit 1
