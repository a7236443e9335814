#!/usr/bin/env bash
# Multi-host RDMA tests: two network namespaces joined by a veth pair
# stand for two hosts. The server runs in one (10.250.0.1/24 on cmveth0,
# soft device soft_cmveth0), its clients in the other (10.250.0.2/24 on
# cmveth1, soft_cmveth1), each with UCX_TLS=tcp and UCX_NET_DEVICES set to
# its veth: no shared memory, only the network between the namespaces.
#
#   netns_tests.sh PEER METHOD
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
#
# Needs root and `ip` (iproute2); otherwise it prints why and exits 77
# (meson's "skipped"). The namespaces (and so the veth pair) are deleted
# on exit. Traffic stays between the two namespaces it creates.
set -u

PEER=${1:?usage: netns_tests.sh PEER cm|export}
METHOD=${2:?usage: netns_tests.sh PEER cm|export}
PROC_TIMEOUT=${CM_TESTS_PROC_TIMEOUT:-60}
SRV_IP=10.250.0.1 CLI_IP=10.250.0.2
VETH_S=cmveth0 VETH_C=cmveth1

case $METHOD in cm | export) ;; *) echo "unknown method $METHOD (cm, export)" >&2; exit 2 ;; esac
[ -x "$PEER" ] || { echo "cm_peer not found or not executable: $PEER" >&2; exit 2; }

skip() {
	echo "SKIP netns_$METHOD: $*"
	exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces (running as uid $(id -u))"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
command -v timeout >/dev/null || skip "timeout(1) is not installed"

# Names unique to this run: several runs may go on at once.
NS_S=sdcm-$$-srv NS_C=sdcm-$$-cli
dir=$(mktemp -d "${TMPDIR:-/tmp}/cm_netns.XXXXXX") || exit 2
keep=0

cleanup() {
	ip netns del "$NS_S" 2>/dev/null
	ip netns del "$NS_C" 2>/dev/null
	[ "$keep" = 1 ] || [ "${CM_TESTS_KEEP:-0}" = 1 ] || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS_S" 2>"$dir/ip.err" || skip "ip netns add failed: $(cat "$dir/ip.err")"
ip netns add "$NS_C" 2>"$dir/ip.err" || skip "ip netns add failed: $(cat "$dir/ip.err")"
ip link add "$VETH_S" netns "$NS_S" type veth peer name "$VETH_C" netns "$NS_C" 2>"$dir/ip.err" ||
	skip "cannot create a veth pair: $(cat "$dir/ip.err")"

die() {
	echo "FAIL netns_$METHOD: $*"
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

# spawn NS VETH NAME ARGS...: cm_peer in a namespace, in the background,
# TCP over that namespace's veth only.
spawn() {
	local ns=$1 veth=$2 name=$3
	shift 3
	ip netns exec "$ns" env UCX_TLS=tcp UCX_NET_DEVICES="$veth" \
		timeout "$PROC_TIMEOUT" "$PEER" --dir "$dir" --device "soft_$veth" "$@" \
		>"$dir/$name.out" 2>"$dir/$name.err" &
	names+=("$name") pids+=($!) wants+=(0)
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
		wait "${pids[$i]}"
		rc=$?
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
		ip netns exec "$ns" "${PEER%/*}/../../tools/doca_caps" --list-devs 2>&1 | grep -q "^soft_$veth " ||
			die "no soft_$veth device in $ns: $(ip netns exec "$ns" "${PEER%/*}/../../tools/doca_caps" --list-devs 2>&1)"
	fi
done

start=$(now)
echo "# namespaces $NS_S ($VETH_S $SRV_IP) and $NS_C ($VETH_C $CLI_IP), UCX_TLS=tcp"

if [ "$METHOD" = cm ]; then
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
echo "netns_$METHOD: $pass passed, $fail failed in ${total}s"
[ "$fail" -eq 0 ]
