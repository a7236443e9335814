#!/usr/bin/env bash
# RDMA CM tests on one host: each scenario runs cm_peer as a server and
# one or more clients, every process under `timeout`, in a fresh
# directory where they find the server's port (and leave flag files).
#
#   cm_tests.sh PEER SCENARIO
#     PEER      path of the cm_peer program
#     SCENARIO  v4_CASE | v6_CASE   (CASE: send send_imm write write_imm read
#                                    cas fadd) one server, one client; v4 over
#                                    127.0.0.1 with UCX's default transports
#                                    (shared memory), v6 over ::1 with TCP only
#               multi8              one server, 8 clients at once (mix of
#                                    send, write_imm, read and fetch-and-add on
#                                    a shared counter), then a 9th client that
#                                    must be refused
#               refused             connect to a port where nothing listens,
#                                    then to the real server
#               timeout             a listener that never answers, a server
#                                    that ignores the request (request timeout
#                                    500 ms), then the real connection
#               reject              the server rejects, the client reconnects
#               kill_server         the server dies (SIGKILL) under the
#                                    client's in-flight sends (shm, then TCP)
#               kill_client         a client dies under the server's in-flight
#                                    sends; the next client is served (shm,
#                                    then TCP)
#               server_stop         the server calls doca_ctx_stop while the
#                                    client's 32 x 4 MiB writes are in flight;
#                                    both must end cleanly (shm, then TCP)
#               squat               5 TCP connections that never send a
#                                    request to a 4-connection server, then 4
#                                    real clients that must get in quickly;
#                                    then 20 idle sockets (more than the
#                                    server keeps waiting) and a real client
#               fault_reject        the same as reject and timeout, with a
#               fault_timeout        server that accepts everything and
#                                    SOFTDOCA_FAULTS rejecting / not answering
#                                    its first request (fault injection)
#               fault_client_reject the same, with SOFTDOCA_FAULTS on the
#               fault_client_timeout client instead (conn/client:cm_...):
#                                    its first request never leaves, and
#                                    fails as a rejected / unanswered one
#               fault_drop          kill_client, with a victim that does not
#                                    die: SOFTDOCA_FAULTS drops its
#                                    connection at its first send; the
#                                    server must see what a dead client
#                                    looks like, the victim a failure
#               bind                the server listens on soft_lo's
#                                    addresses only: no wildcard listening
#                                    socket on its port, one per address of
#                                    soft_lo, each connectable, and every
#                                    address of the host's other soft
#                                    devices refused; then a real client
#               all                 every scenario above
#
# Prints one line per run and exits non-zero if any failed (77 if the
# scenario cannot run here, e.g. no IPv6 loopback); a failed run shows
# every process's output and keeps its directory. CM_TESTS_KEEP=1 keeps
# every directory.
set -u

PEER=${1:?usage: cm_tests.sh PEER SCENARIO}
SCENARIO=${2:?usage: cm_tests.sh PEER SCENARIO}
PROC_TIMEOUT=${CM_TESTS_PROC_TIMEOUT:-60}

CASES="send send_imm write write_imm read cas fadd"
ALL="$(for c in $CASES; do printf 'v4_%s ' "$c"; done)$(for c in $CASES; do printf 'v6_%s ' "$c"; done)"
ALL="$ALL multi8 refused timeout reject kill_server kill_client server_stop squat"
ALL="$ALL fault_reject fault_timeout"
ALL="$ALL fault_client_reject fault_client_timeout"
ALL="$ALL fault_drop bind"

[ -x "$PEER" ] || { echo "cm_peer not found or not executable: $PEER" >&2; exit 2; }
command -v timeout >/dev/null || { echo "timeout(1) is required" >&2; exit 2; }

now() { date +%s.%N; }

have_ipv6_loopback() {
	[ -r /proc/net/if_inet6 ] && grep -q '^00000000000000000000000000000001 .* lo$' /proc/net/if_inet6
}

# default: UCX's own choice (shared memory between processes of one
# host); tcp: TCP over lo only.
set_transport() {
	unset UCX_TLS UCX_NET_DEVICES
	case $1 in
	default) ;;
	tcp) export UCX_TLS=tcp UCX_NET_DEVICES=lo ;;
	esac
}

# ---- one run: a set of processes -----------------------------------

names=() pids=() wants=()
dir=""

begin() {
	dir=$(mktemp -d "${TMPDIR:-/tmp}/cm_test.XXXXXX") || exit 2
	names=() pids=() wants=()
}

# spawn NAME WANT_RC ARGS...: cm_peer in the background.
spawn() {
	local name=$1 want=$2
	shift 2
	timeout "$PROC_TIMEOUT" "$PEER" --dir "$dir" "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
	names+=("$name") pids+=($!) wants+=("$want")
}

# run NAME WANT_RC ARGS...: cm_peer in the foreground (its result is
# checked with the others at the end).
run() {
	spawn "$@"
	wait "${pids[-1]}"
	echo $? >"$dir/${names[-1]}.rc"
}

show() {
	for n in "${names[@]}"; do
		for f in "$dir/$n.out" "$dir/$n.err"; do
			[ -s "$f" ] || continue
			echo "    --- ${f##*/}"
			sed 's/^/    | /' "$f"
		done
	done
}

pass=0 fail=0 failed_list=""

# finish LABEL T0: wait for every process, check exit codes and PASS lines.
finish() {
	local label=$1 t0=$2 why="" i rc dt
	for i in "${!pids[@]}"; do
		if [ -f "$dir/${names[$i]}.rc" ]; then
			rc=$(cat "$dir/${names[$i]}.rc")
		else
			wait "${pids[$i]}"
			rc=$?
		fi
		if [ "$rc" -ne "${wants[$i]}" ]; then
			case $rc in
			124) why="${why}${names[$i]} timed out after ${PROC_TIMEOUT}s; " ;;
			137) why="${why}${names[$i]} was killed (137), expected exit ${wants[$i]}; " ;;
			*) why="${why}${names[$i]} exited $rc, expected ${wants[$i]}; " ;;
			esac
		fi
		if [ "${wants[$i]}" -eq 0 ] && ! grep -q '^PASS' "$dir/${names[$i]}.out"; then
			why="${why}no PASS line from ${names[$i]}; "
		fi
		# UCX reports each request still held when a worker is destroyed.
		if grep -qs 'was not returned to mpool' "$dir/${names[$i]}.out" "$dir/${names[$i]}.err"; then
			why="${why}UCX requests of ${names[$i]} were never freed (was not returned to mpool); "
		fi
	done
	dt=$(echo "$(now) $t0" | awk '{ printf "%.2f", $1 - $2 }')
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok   $label (${dt}s)"
		for n in "${names[@]}"; do
			sed -n 's/^\(PASS\|NOTE\) /       /p' "$dir/$n.out"
		done
		[ "${CM_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
	else
		fail=$((fail + 1))
		failed_list="$failed_list
  $label"
		echo "FAIL $label (${dt}s): ${why%; }"
		show
		echo "    (files kept in $dir)"
	fi
}

# ---- scenarios -----------------------------------------------------

# pair FAMILY CASE ARGS...: one server, one client. Here (and only here,
# so that one wrong address does not hide other failures) the server also
# checks the client's address that doca_rdma_connection_get_addr gives.
pair() {
	local fam=$1 c=$2 peer_addr t0
	shift 2
	peer_addr=127.0.0.1
	[ "$fam" = 6 ] && peer_addr=::1
	begin
	t0=$(now)
	spawn server 0 --role server --family "$fam" --case "$c" "$@" --peer-addr "$peer_addr"
	run client 0 --role client --family "$fam" --case "$c" "$@"
	finish "cm/IPv$fam $c $* (UCX_TLS=${UCX_TLS:-default})" "$t0"
}

# Data sizes of a case (atomics work on 8-byte words).
size_of() {
	case $1 in
	write | read) echo "--size 64K --count 16" ;;
	cas | fadd) echo "--count 32" ;;
	*) echo "--size 4096 --count 32" ;;
	esac
}

multi8() {
	local t0 i
	begin
	t0=$(now)
	spawn server 0 --role server --case mix --clients 8 --count 16
	for i in 1 2 3 4 5 6 7 8; do
		spawn "client$i" 0 --role client --case mix --count 16 --hold release
	done
	# The 9th knocks once all 8 are established (server.full); the 8
	# hold their connections until it is done (release).
	run client9 0 --role client --case overflow --count 16 --after server.full --signal release
	finish "cm/IPv4 8 clients x mix (send, write_imm, read, shared fetch-and-add), then a 9th past the maximum" "$t0"
}

failing_first() {
	local what=$1 t0
	shift
	begin
	t0=$(now)
	case $what in
	refused)
		spawn server 0 --role server --case send --count 8
		run client 0 --role client --case send --count 8 --pre refused
		;;
	timeout)
		spawn server 0 --role server --case send --count 8 --answer ignore-first --timeout-ms 500
		run client 0 --role client --case send --count 8 --pre silent,ignore --timeout-ms 500
		;;
	reject)
		spawn server 0 --role server --case send --count 8 --answer reject-first
		run client 0 --role client --case send --count 8 --pre reject
		;;
	esac
	finish "cm/IPv4 $what, then a connection on the same context" "$t0"
}

# The failing first attempts of failing_first, made by the server's
# SOFTDOCA_FAULTS rules instead of its --answer policy.
fault_first() {
	local what=$1 t0
	begin
	t0=$(now)
	case $what in
	fault_reject)
		SOFTDOCA_FAULTS='conn:cm_reject=nth:1' spawn server 0 --role server --case send --count 8
		run client 0 --role client --case send --count 8 --pre reject
		;;
	fault_timeout)
		# The unanswered request holds a slot until the server's engine
		# drops it (as ignore-first's spare slot): two slots, and a
		# second client once the first is done.
		SOFTDOCA_FAULTS='conn:cm_timeout=nth:1' spawn server 0 --role server --case send --count 8 \
			--clients 2 --timeout-ms 500
		run client 0 --role client --case send --count 8 --pre ignore --timeout-ms 500
		run client2 0 --role client --case send --count 8 --index 1
		;;
	esac
	finish "cm/IPv4 $what (SOFTDOCA_FAULTS on the server), then a connection on the same context" "$t0"
}

# A dropped connection as the other process sees it: kill_client's
# server, unchanged, and a victim whose fault rule drops the connection.
fault_drop() {
	local t0
	begin
	t0=$(now)
	spawn server 0 --role server --case kill_client --count 8
	# The send is held (delay) when the drop comes: it never reaches the server.
	SOFTDOCA_FAULTS='conn:drop=after_ops:1;send:delay=fixed:10s' run victim 0 --role client --case kill_client --count 8 --drop
	run client 0 --role client --case send --count 8 --after server.survived
	finish "cm/IPv4 a client's connection dropped (SOFTDOCA_FAULTS) under the server's in-flight sends, then the next client (UCX_TLS=${UCX_TLS:-default})" "$t0"
}

# The same failing first attempts as the client's own fault rules see
# them: the server hears of one request only, the real one.
fault_client_first() {
	local what=$1 t0
	begin
	t0=$(now)
	spawn server 0 --role server --case send --count 8
	case $what in
	fault_client_reject)
		SOFTDOCA_FAULTS='conn/client:cm_reject=nth:1' run client 0 --role client --case send --count 8 \
			--pre reject
		;;
	fault_client_timeout)
		SOFTDOCA_FAULTS='conn/client:cm_timeout=nth:1' run client 0 --role client --case send --count 8 \
			--pre ignore --timeout-ms 500
		;;
	esac
	finish "cm/IPv4 $what (SOFTDOCA_FAULTS on the client), then a connection on the same context" "$t0"
}

kill_server() {
	local t0
	begin
	t0=$(now)
	spawn server 137 --role server --case kill_server --count 8
	run client 0 --role client --case kill_server --count 8
	finish "cm/IPv4 server killed under in-flight sends (UCX_TLS=${UCX_TLS:-default})" "$t0"
}

kill_client() {
	local t0
	begin
	t0=$(now)
	spawn server 0 --role server --case kill_client --count 8
	run victim 137 --role client --case kill_client --count 8
	run client 0 --role client --case send --count 8 --after server.survived
	finish "cm/IPv4 client killed under in-flight sends, then the next client (UCX_TLS=${UCX_TLS:-default})" "$t0"
}

server_stop() {
	local t0
	begin
	t0=$(now)
	spawn server 0 --role server --case server_stop --size 4M --count 32
	run client 0 --role client --case server_stop --size 4M --count 32
	finish "cm/IPv4 server stops its context under 32 x 4 MiB writes (UCX_TLS=${UCX_TLS:-default})" "$t0"
}

# Idle sockets must hold no connection slot: the squatting client opens
# them, then connects itself, while three more clients connect too.
squat() {
	local t0 i
	begin
	t0=$(now)
	spawn server 0 --role server --case send --count 8 --clients 4
	for i in 2 3 4; do
		spawn "client$i" 0 --role client --case send --count 8 --after squat.ready
	done
	run client1 0 --role client --case send --count 8 --squat 5
	finish "cm/IPv4 5 idle sockets on a 4-connection server, then 4 real clients" "$t0"

	begin
	t0=$(now)
	spawn server 0 --role server --case send --count 8 --clients 1
	run client 0 --role client --case send --count 8 --squat 20
	finish "cm/IPv4 20 idle sockets (past the server's table of waiting sockets), then a real client" "$t0"
}

# The soft devices' GIDs from doca_caps --list-devs, one "IBDEV IFACE
# ADDRESS" line each: IPv4-mapped GIDs as a.b.c.d, link-local IPv6 ones
# with %IFACE (what a connect to them needs).
soft_addrs() {
	local caps=${PEER%/*}/../../tools/doca_caps dev iface g h
	"$caps" --list-devs 2>/dev/null | awk '
		$1 == "ibdev_name" { dev = $2 }
		$1 == "iface_name" { iface = $2 }
		$1 ~ /^GID\[/ { print dev, iface, $2 }' |
		while read -r dev iface g; do
			case $g in
			0000:0000:0000:0000:0000:ffff:*)
				h=${g#0000:0000:0000:0000:0000:ffff:}
				echo "$dev $iface $((16#${h:0:2})).$((16#${h:2:2})).$((16#${h:5:2})).$((16#${h:7:2}))"
				;;
			fe80:*) echo "$dev $iface $g%$iface" ;;
			*) echo "$dev $iface $g" ;;
			esac
		done
}

# connects ADDRESS PORT: a TCP connection to it is accepted (bounded).
connects() {
	# shellcheck disable=SC2016 # expanded by the inner bash
	timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# Listening sockets of this port in /proc/net/tcp and tcp6, by local
# address (hex, as the kernel prints it).
listening_on() {
	local ph
	ph=$(printf '%04X' "$1")
	awk -v p=":$ph" '$4 == "0A" && substr($2, length($2) - 4) == p { print $2 }' /proc/net/tcp /proc/net/tcp6
}

# The server on soft_lo must listen at soft_lo's addresses and nowhere
# else: the check is a process of the run (bind_check.out, .rc).
bind_addrs() {
	local t0 port="" out addrs own=0 others=0 why="" dev iface a n deadline
	begin
	t0=$(now)
	spawn server 0 --role server --case send --count 8
	deadline=$((SECONDS + 20))
	while [ -z "$port" ] && [ "$SECONDS" -lt "$deadline" ] && kill -0 "${pids[0]}" 2>/dev/null; do
		[ -s "$dir/server.port" ] && port=$(cat "$dir/server.port")
		# Polls for the file the server writes once it listens; bounded.
		[ -z "$port" ] && sleep 0.05
	done
	out=$dir/bind_check.out
	names+=(bind_check) pids+=(0) wants+=(0)
	if [ -z "$port" ]; then
		echo "FAIL no server.port from the server within 20 s" >"$out"
		echo 1 >"$dir/bind_check.rc"
		run client 0 --role client --case send --count 8
		finish "cm/IPv4+6 the listener binds the device's addresses only" "$t0"
		return
	fi
	addrs=$(soft_addrs)
	if ! grep -q '^soft_lo ' <<<"$addrs"; then
		why="${why}doca_caps --list-devs lists no soft_lo GID; "
	fi
	# No wildcard socket (0.0.0.0 or ::) on the port, and one listening
	# socket per address of soft_lo.
	if listening_on "$port" | grep -qE '^0+:'; then
		why="${why}a socket listens on the port at every address: $(listening_on "$port" | tr '\n' ' '); "
	fi
	n=$(listening_on "$port" | wc -l)
	while read -r dev iface a; do
		[ -n "$dev" ] || continue
		if [ "$dev" = soft_lo ]; then
			own=$((own + 1))
			connects "$a" "$port" || why="${why}the port is not reachable at soft_lo's address $a; "
		else
			others=$((others + 1))
			connects "$a" "$port" && why="${why}the port is reachable at $a ($dev, interface $iface); "
		fi
	done <<<"$addrs"
	[ "$n" -eq "$own" ] || why="${why}$n listening sockets on the port for soft_lo's $own addresses; "
	if [ -z "$why" ]; then
		echo "PASS $n listening sockets on port $port, one per address of soft_lo, each connectable; none on" \
			"0.0.0.0 or ::; $others addresses of other soft devices refused" >"$out"
		[ "$others" -eq 0 ] && echo "NOTE no other soft device has an address here: only the wildcard and" \
			"per-address checks ran" >>"$out"
		echo 0 >"$dir/bind_check.rc"
	else
		echo "FAIL ${why%; }" >"$out"
		echo 1 >"$dir/bind_check.rc"
	fi
	run client 0 --role client --case send --count 8
	finish "cm/IPv4+6 the listener binds the device's addresses only (soft_lo), then a real client" "$t0"
}

run_scenario() {
	local s=$1 fam c
	case $s in
	v4_* | v6_*)
		fam=${s:1:1}
		c=${s#v?_}
		case " $CASES " in *" $c "*) ;; *) echo "unknown case $c" >&2; exit 2 ;; esac
		if [ "$fam" = 6 ]; then
			if ! have_ipv6_loopback; then
				echo "SKIP $s: no IPv6 loopback address (::1 on lo)"
				return 77
			fi
			set_transport tcp
		else
			set_transport default
		fi
		# shellcheck disable=SC2046 # size and count
		pair "$fam" "$c" $(size_of "$c")
		;;
	multi8) set_transport default; multi8 ;;
	squat) set_transport default; squat ;;
	refused | timeout | reject) set_transport default; failing_first "$s" ;;
	fault_reject | fault_timeout) set_transport default; fault_first "$s" ;;
	fault_client_reject | fault_client_timeout) set_transport default; fault_client_first "$s" ;;
	fault_drop) for tr in default tcp; do set_transport "$tr"; fault_drop; done ;;
	bind) set_transport default; bind_addrs ;;
	kill_server | kill_client | server_stop)
		for tr in default tcp; do
			set_transport "$tr"
			case $s in
			kill_server) kill_server ;;
			kill_client) kill_client ;;
			server_stop) server_stop ;;
			esac
		done
		;;
	*)
		echo "unknown scenario $s; scenarios: $ALL all" >&2
		exit 2
		;;
	esac
	return 0
}

start=$(now)
skipped=0
list=$SCENARIO
[ "$SCENARIO" = all ] && list=$ALL
for s in $list; do
	run_scenario "$s" || skipped=$((skipped + 1))
done
total=$(echo "$(now) $start" | awk '{ printf "%.1f", $1 - $2 }')
echo "cm: $pass passed, $fail failed, $skipped skipped in ${total}s"
if [ "$fail" -ne 0 ]; then
	echo "failed:$failed_list"
	exit 1
fi
[ "$pass" -eq 0 ] && [ "$skipped" -gt 0 ] && exit 77
exit 0
