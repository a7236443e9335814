#!/usr/bin/env bash
# Multi-host RDMA tests: two network namespaces joined by a veth pair
# stand for two hosts. The server runs in one (10.250.0.1/24 on cmveth0,
# soft device soft_cmveth0), its clients in the other (10.250.0.2/24 on
# cmveth1, soft_cmveth1), each with UCX_TLS=tcp and UCX_NET_DEVICES set to
# its veth: no shared memory, only the network between the namespaces.
#
#   netns_tests.sh PEER METHOD [SCENARIO]
#     PEER    path of the cm_peer program
#     METHOD  cm      RDMA CM: first, with the server's veth down, a
#                     connection to 10.250.0.1 must fail (request timeout
#                     1 s); then 2 clients connect to 10.250.0.1 at once
#                     and run the mix case (send, write_imm, read, shared
#                     fetch-and-add), the server checking that
#                     doca_rdma_connection_get_addr names 10.250.0.2
#             export  export/connect: the same 2 clients, descriptors
#                     through a directory (the one thing the namespaces
#                     share besides the network)
#     SCENARIO (default basic: the above) a liveness scenario, one server
#             and one client connected by METHOD, SOFTDOCA_CONN_TIMEOUT_MS=
#             3000 (LIVE_TIMEOUT_MS) unless said otherwise; each side prints
#             how long it took to notice, and must within the timeout + 3 s:
#       linkdown  both sides have sends in flight (no receive is posted for
#                 them), the server's veth goes down, the client then adds
#                 writes: on both sides every task fails and the failure
#                 (or disconnection) callback fires
#       drop      the same, the link up but every packet dropped both ways
#                 (tc qdisc pfifo limit 0 on both veths; skipped without tc)
#       hostgone  the same, but the client's host vanishes: its veth goes
#                 down, then every process in its namespace is killed
#                 (SIGKILL); the server must notice
#       idle      no task on either side; the server's veth goes down: both
#                 failure callbacks must fire
#       slow      a live peer is never failed for being slow: a 1 GiB read
#                 (SOFTDOCA_TEST_BIGREAD: less under ThreadSanitizer, whose
#                 slowdown would otherwise outlast the watchdog)
#                 over the veth with the default timeout (8 s); then, if tc
#                 tbf works, a 64 MiB read through a 100 Mbit/s shaper that
#                 must take longer than the 3 s timeout and still succeed
#
# Needs root and `ip` (iproute2); otherwise it prints why and exits 77
# (meson's "skipped"). The namespaces (and so the veth pair) are deleted
# on exit. Traffic stays between the two namespaces it creates.
set -u

PEER=${1:?usage: netns_tests.sh PEER cm|export}
METHOD=${2:?usage: netns_tests.sh PEER cm|export}
SCENARIO=${3:-basic}
LIVE_TIMEOUT_MS=${LIVE_TIMEOUT_MS:-3000}
SHAPED_SIZE=${SHAPED_SIZE:-64M} # slow: the shaped read (~12 MB/s through the shaper)
PROC_TIMEOUT=${CM_TESTS_PROC_TIMEOUT:-60}
SRV_IP=10.250.0.1 CLI_IP=10.250.0.2
VETH_S=cmveth0 VETH_C=cmveth1

case $METHOD in cm | export) ;; *) echo "unknown method $METHOD (cm, export)" >&2; exit 2 ;; esac
case $SCENARIO in
basic | linkdown | drop | hostgone | idle | slow) ;;
*) echo "unknown scenario $SCENARIO (basic, linkdown, drop, hostgone, idle, slow)" >&2; exit 2 ;;
esac
NAME=netns_$METHOD
[ "$SCENARIO" = basic ] || NAME=${NAME}_$SCENARIO
[ -x "$PEER" ] || { echo "cm_peer not found or not executable: $PEER" >&2; exit 2; }

skip() {
	echo "SKIP $NAME: $*"
	exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces (running as uid $(id -u))"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
command -v timeout >/dev/null || skip "timeout(1) is not installed"
case $SCENARIO in drop | slow) command -v tc >/dev/null || skip "tc (iproute2) is not installed" ;; esac
if [ "$SCENARIO" != basic ]; then
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	unshare --pid --fork true 2>/dev/null || skip "unshare --pid does not work here"
fi

# Names unique to this run: several runs may go on at once.
NS_S=sdcm-$$-srv NS_C=sdcm-$$-cli
dir=$(mktemp -d "${TMPDIR:-/tmp}/cm_netns.XXXXXX") || exit 2
keep=0

# Every process still in a namespace (ours: a run that failed) goes first.
kill_ns() {
	local p
	for p in $(ip netns pids "$1" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
}

cleanup() {
	kill_ns "$NS_S"
	kill_ns "$NS_C"
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_C" 2>/dev/null
	[ "$keep" = 1 ] || [ "${CM_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS_S" 2>"$dir/ip.err" || skip "ip netns add failed: $(cat "$dir/ip.err")"
ip netns add "$NS_C" 2>"$dir/ip.err" || skip "ip netns add failed: $(cat "$dir/ip.err")"
ip netns exec "$NS_S" true 2>"$dir/ip.err" || skip "ip netns exec does not work here: $(cat "$dir/ip.err")"
ip link add "$VETH_S" netns "$NS_S" type veth peer name "$VETH_C" netns "$NS_C" 2>"$dir/ip.err" ||
	skip "cannot create a veth pair: $(cat "$dir/ip.err")"

die() {
	echo "FAIL $NAME: $*"
	keep=1
	echo "    (files kept in $dir)"
	exit 1
}

setup_ns() {
	local ns=$1 veth=$2 ip=$3
	ip -n "$ns" link set lo up || die "bringing lo up in $ns"
	ip -n "$ns" addr add "$ip/24" dev "$veth" || die "adding $ip to $veth in $ns"
	ip -n "$ns" link set "$veth" up || die "bringing $veth up in $ns"
}
setup_ns "$NS_S" "$VETH_S" "$SRV_IP"
setup_ns "$NS_C" "$VETH_C" "$CLI_IP"

# Bounded wait until both ends report carrier (LOWER_UP).
wait_link() {
	local i
	for i in $(seq 1 100); do
		ip -n "$NS_S" link show "$VETH_S" | grep -q LOWER_UP &&
			ip -n "$NS_C" link show "$VETH_C" | grep -q LOWER_UP && return 0
		sleep 0.05
	done
	die "the veth pair has no carrier after 5 s"
}
wait_link

now() { date +%s.%N; }

names=() pids=() wants=()
pass=0 fail=0
# Extra environment of the next spawns (NAME=VALUE words) and the exit
# status the next spawn must end with (137: killed by the test, no PASS).
SPAWN_ENV=()
WANT=0
# Liveness scenarios run each process in a pid namespace of its own too
# (unshare): otherwise the peers share one and each watches the other's
# process (a pidfd), which a real second host does not allow.
SPAWN_PRE=()

# spawn NS VETH NAME ARGS...: cm_peer in a namespace, in the background,
# TCP over that namespace's veth only.
spawn() {
	local ns=$1 veth=$2 name=$3
	shift 3
	ip netns exec "$ns" "${SPAWN_PRE[@]}" env UCX_TLS=tcp UCX_NET_DEVICES="$veth" "${SPAWN_ENV[@]}" \
		timeout "$PROC_TIMEOUT" "$PEER" --dir "$dir" --device "soft_$veth" "$@" \
		>"$dir/$name.out" 2>"$dir/$name.err" &
	names+=("$name") pids+=($!) wants+=("$WANT")
	WANT=0
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

# finish LABEL T0: wait for every process spawned since the last finish.
finish() {
	local label=$1 t0=$2 why="" i rc dt
	for i in "${!pids[@]}"; do
		{ wait "${pids[$i]}"; } 2>/dev/null # no "Killed" line for a process the test killed
		rc=$?
		if [ "${wants[$i]}" -ne 0 ]; then
			[ "$rc" -eq "${wants[$i]}" ] || why="${why}${names[$i]} exited $rc, expected ${wants[$i]}; "
			continue
		fi
		[ "$rc" -eq 124 ] && why="${why}${names[$i]} timed out after ${PROC_TIMEOUT}s; "
		[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && why="${why}${names[$i]} exited $rc; "
		grep -q '^PASS' "$dir/${names[$i]}.out" || why="${why}no PASS line from ${names[$i]}; "
	done
	dt=$(echo "$(now) $t0" | awk '{ printf "%.2f", $1 - $2 }')
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok   $label (${dt}s)"
		for n in "${names[@]}"; do
			sed -n 's/^\(PASS\|NOTE\) /       /p' "$dir/$n.out"
		done
	else
		fail=$((fail + 1))
		keep=1
		echo "FAIL $label (${dt}s): ${why%; }"
		show
		echo "    (files kept in $dir)"
	fi
	names=() pids=() wants=()
}

# The two soft devices must be there, each in its own namespace.
for pair in "$NS_S:$VETH_S" "$NS_C:$VETH_C"; do
	ns=${pair%%:*} veth=${pair#*:}
	if [ -x "${PEER%/*}/../../tools/doca_caps" ]; then
		ip netns exec "$ns" "${PEER%/*}/../../tools/doca_caps" --list-devs 2>&1 | grep -qE "^ +ibdev_name +soft_$veth\$" ||
			die "no soft_$veth device in $ns: $(ip netns exec "$ns" "${PEER%/*}/../../tools/doca_caps" --list-devs 2>&1)"
	fi
done

start=$(now)
echo "# namespaces $NS_S ($VETH_S $SRV_IP) and $NS_C ($VETH_C $CLI_IP), UCX_TLS=tcp"

# ------------------------------------------------------------------
# Liveness scenarios

# A file in $dir, whole or absent (written aside, then renamed).
put_file() {
	echo "$2" >"$dir/$1.tmp" && mv "$dir/$1.tmp" "$dir/$1"
}

# wait_files SECONDS FILE...: until every FILE is in $dir; false (with a
# FAIL line) if the time runs out, a process of the run failed (FAILED)
# or one of them exited.
wait_files() {
	local secs=$1 f missing i deadline
	shift
	deadline=$(echo "$(now) $secs" | awk '{ printf "%.3f", $1 + $2 }')
	for (( ; ; )); do
		missing=""
		for f in "$@"; do [ -e "$dir/$f" ] || missing="$missing $f"; done
		[ -z "$missing" ] && return 0
		[ -e "$dir/FAILED" ] && { echo "    (a process failed while we waited for$missing)"; return 1; }
		for i in "${!pids[@]}"; do
			kill -0 "${pids[$i]}" 2>/dev/null ||
				{ echo "    (${names[$i]} exited while we waited for$missing)"; return 1; }
		done
		awk -v t="$(now)" -v d="$deadline" 'BEGIN { exit !(t > d) }' &&
			{ echo "    (no$missing after ${secs}s)"; return 1; }
		sleep 0.02
	done
}

# Does a qdisc of this kind work on the veth? (netem is often missing;
# pfifo and tbf are usually built in.)
tc_works() {
	local ns=$1 veth=$2
	shift 2
	tc -n "$ns" qdisc add dev "$veth" root "$@" 2>"$dir/tc.err" || return 1
	tc -n "$ns" qdisc del dev "$veth" root 2>/dev/null
	return 0
}

# The time each side took to notice, from its NOTE line, for the log.
report_notice() {
	local n t line=""
	for n in "$@"; do
		t=$(sed -n 's/.*noticed after \([0-9.]*\) s.*/\1/p' "$dir/$n.out" | head -n 1)
		line="$line $n=${t:-none}s"
	done
	echo "TIME-TO-NOTICE $NAME (SOFTDOCA_CONN_TIMEOUT_MS=$LIVE_TIMEOUT_MS):$line"
}

# Server and client connected by METHOD, case netfail or netfail_idle.
spawn_pair() {
	local kase=$1
	if [ "$METHOD" = cm ]; then
		spawn "$NS_S" "$VETH_S" server --role server --case "$kase" --clients 1 --count 8 --peer-addr "$CLI_IP"
		[ "$SCENARIO" = hostgone ] && WANT=137
		spawn "$NS_C" "$VETH_C" client --role client --case "$kase" --count 8 --addr "$SRV_IP"
	else
		spawn "$NS_S" "$VETH_S" server --role server --method export --case "$kase" --clients 1 --count 8
		[ "$SCENARIO" = hostgone ] && WANT=137
		spawn "$NS_C" "$VETH_C" client --role client --method export --index 0 --case "$kase" --count 8
	fi
}

# Break the path as the scenario says.
break_path() {
	case $SCENARIO in
	linkdown | idle)
		ip -n "$NS_S" link set "$VETH_S" down || die "taking $VETH_S down"
		;;
	drop)
		tc -n "$NS_S" qdisc add dev "$VETH_S" root pfifo limit 0 || die "tc on $VETH_S"
		tc -n "$NS_C" qdisc add dev "$VETH_C" root pfifo limit 0 || die "tc on $VETH_C"
		;;
	hostgone)
		# Link first, so that no FIN or RST of the dying sockets escapes.
		ip -n "$NS_C" link set "$VETH_C" down || die "taking $VETH_C down"
		kill_ns "$NS_C"
		;;
	esac
}

run_netfail() {
	local kase=netfail what t0 who=(server client)
	[ "$SCENARIO" = idle ] && kase=netfail_idle
	[ "$SCENARIO" = hostgone ] && who=(server)
	case $SCENARIO in
	linkdown) what="the server's veth goes down under tasks in flight both ways" ;;
	drop) what="every packet dropped both ways (pfifo limit 0) under tasks in flight both ways" ;;
	hostgone) what="the client's host vanishes (veth down, every process killed) under tasks in flight" ;;
	idle) what="the server's veth goes down under an idle connection" ;;
	esac
	if [ "$SCENARIO" = drop ] && ! tc_works "$NS_S" "$VETH_S" pfifo limit 0; then
		skip "tc qdisc pfifo does not work here: $(cat "$dir/tc.err")"
	fi
	SPAWN_ENV=("SOFTDOCA_CONN_TIMEOUT_MS=$LIVE_TIMEOUT_MS")
	t0=$(now)
	spawn_pair "$kase"
	if wait_files 30 server.inflight client.inflight; then
		break_path
		put_file path.broken "$(now)"
	fi
	finish "$METHOD: $what: noticed within ${LIVE_TIMEOUT_MS} ms + 3 s" "$t0"
	report_notice "${who[@]}"
}

# One bigread between the namespaces; the client's NOTE says how long it
# took. Shaped: the read must have taken longer than the timeout.
bigread() {
	local label=$1 size=$2 min_s=$3 t0 took
	rm -f "$dir"/*.out "$dir"/*.err "$dir"/server.* "$dir"/client.* "$dir/FAILED" # a fresh meeting place
	t0=$(now)
	if [ "$METHOD" = cm ]; then
		spawn "$NS_S" "$VETH_S" server --role server --case bigread --clients 1 --size "$size" --count 1
		spawn "$NS_C" "$VETH_C" client --role client --case bigread --size "$size" --count 1 --addr "$SRV_IP"
	else
		spawn "$NS_S" "$VETH_S" server --role server --method export --case bigread --clients 1 --size "$size" \
			--count 1
		spawn "$NS_C" "$VETH_C" client --role client --method export --index 0 --case bigread --size "$size" \
			--count 1
	fi
	finish "$label" "$t0"
	took=$(sed -n 's/.*read 0 of [0-9]* B took \([0-9.]*\) s.*/\1/p' "$dir/client.out" | head -n 1)
	echo "READ-TIME $NAME $size B: ${took:-none} s"
	if [ -n "$min_s" ] && [ -n "$took" ] && ! awk -v t="$took" -v m="$min_s" 'BEGIN { exit !(t > m) }'; then
		fail=$((fail + 1))
		echo "FAIL $label: the read took ${took} s, not longer than the ${min_s} s timeout: the shaper did not" \
			"slow it enough to show anything"
	fi
}

run_slow() {
	SPAWN_ENV=()
	local big=${SOFTDOCA_TEST_BIGREAD:-1G}
	[[ $big =~ ^[1-9][0-9]{0,4}[MG]$ ]] || die "SOFTDOCA_TEST_BIGREAD=$big: want a size like 256M or 1G"
	bigread "$METHOD: a ${big}B read over TCP between the namespaces, default timeout" "$big" ""
	if tc_works "$NS_S" "$VETH_S" tbf rate 100mbit burst 64kb latency 50ms; then
		tc -n "$NS_S" qdisc add dev "$VETH_S" root tbf rate 100mbit burst 64kb latency 50ms ||
			die "tc tbf on $VETH_S"
		SPAWN_ENV=("SOFTDOCA_CONN_TIMEOUT_MS=$LIVE_TIMEOUT_MS")
		bigread "$METHOD: a $SHAPED_SIZE read through a 100 Mbit/s shaper, longer than SOFTDOCA_CONN_TIMEOUT_MS=$LIVE_TIMEOUT_MS" \
			"$SHAPED_SIZE" "$(echo "$LIVE_TIMEOUT_MS" | awk '{ printf "%.3f", $1 / 1000 }')"
		tc -n "$NS_S" qdisc del dev "$VETH_S" root 2>/dev/null
	else
		echo "NOTE $NAME: tc tbf does not work here ($(cat "$dir/tc.err")): the shaped read is skipped"
	fi
}

[ "$SCENARIO" != basic ] && SPAWN_PRE=(unshare --pid --fork)
if [ "$SCENARIO" = slow ]; then
	run_slow
elif [ "$SCENARIO" != basic ]; then
	run_netfail
elif [ "$METHOD" = cm ]; then
	# An address whose path is down: the server's end of the link is.
	ip -n "$NS_S" link set "$VETH_S" down || die "taking $VETH_S down"
	t0=$(now)
	spawn "$NS_C" "$VETH_C" unreachable --role client --case attempts --addr "$SRV_IP" --pre unreachable \
		--timeout-ms 1000
	finish "cm: connect to $SRV_IP while the link is down (request timeout 1 s)" "$t0"
	ip -n "$NS_S" link set "$VETH_S" up || die "bringing $VETH_S up again"
	wait_link

	t0=$(now)
	spawn "$NS_S" "$VETH_S" server --role server --case mix --clients 2 --count 16 --peer-addr "$CLI_IP"
	spawn "$NS_C" "$VETH_C" client0 --role client --case mix --count 16 --addr "$SRV_IP"
	spawn "$NS_C" "$VETH_C" client1 --role client --case mix --count 16 --addr "$SRV_IP"
	finish "cm: server in $NS_S, 2 clients in $NS_C connect to $SRV_IP, mix" "$t0"
else
	t0=$(now)
	spawn "$NS_S" "$VETH_S" server --role server --method export --case mix --clients 2 --count 16
	spawn "$NS_C" "$VETH_C" client0 --role client --method export --index 0 --case mix --count 16
	spawn "$NS_C" "$VETH_C" client1 --role client --method export --index 1 --case mix --count 16
	finish "export/connect: server in $NS_S, 2 clients in $NS_C, mix" "$t0"
fi

total=$(echo "$(now) $start" | awk '{ printf "%.1f", $1 - $2 }')
echo "$NAME: $pass passed, $fail failed in ${total}s"
[ "$fail" -eq 0 ]
