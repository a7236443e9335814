#!/usr/bin/env bash
# The timeline across two processes over UCX shared memory: rdma_peer ($1)
# as target and initiator of 64 4 KiB writes, each traced into its own
# file; once with the target progressing, once with it blocked (its
# service thread records the arrivals). The initiator's file has its writes sent on its connection's
# track, the target's has their arrivals (at_target) on its own
# connection's track; every arrival matches a send of the same connection
# and number, no earlier than it (one CLOCK_MONOTONIC for both), and
# softdoca_trace ($2) summarises and merges both files into valid JSON.
set -euo pipefail
peer=$(readlink -f "${1:?usage: check_trace_pair.sh <rdma_peer> <softdoca_trace>}")
tool=$(readlink -f "${2:?usage: check_trace_pair.sh <rdma_peer> <softdoca_trace>}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export UCX_TLS=self,sm,cma
check_serve() {
	local serve=$1 tpid sent arrived
	local args=(--dir "$work/$serve" --case write --size 4096 --count 64 --serve "$serve")
	mkdir "$work/$serve"
	echo "# target: --serve $serve"
	SOFTDOCA_TRACE="$work/$serve.target.json" timeout 60 "$peer" --role target "${args[@]}" \
		>"$work/$serve.target.out" 2>&1 &
	tpid=$!
	SOFTDOCA_TRACE="$work/$serve.init.json" timeout 60 "$peer" --role initiator "${args[@]}" \
		>"$work/$serve.init.out" 2>&1 ||
		{ cat "$work/$serve.init.out"; echo "FAIL: the initiator failed"; exit 1; }
	wait "$tpid" || { cat "$work/$serve.target.out"; echo "FAIL: the target failed"; exit 1; }

	sent=$(grep -c '"name":"sent","cat":"task","ph":"i","s":"t","ts":[0-9.]*,"pid":[0-9]*,"tid":[0-9]*,"args":{"type":"rdma write"' \
		"$work/$serve.init.json" || true)
	arrived=$(grep -c '"name":"at_target".*"args":{"op":"write"' "$work/$serve.target.json" || true)
	[ "$sent" -ge 64 ] || { echo "FAIL: $sent writes sent in the initiator's trace, not 64 or more"; exit 1; }
	[ "$arrived" -ge 64 ] || { echo "FAIL: $arrived writes at the target in its trace, not 64 or more"; exit 1; }
	grep -q '"name":"at_target"' "$work/$serve.init.json" && { echo "FAIL: arrivals recorded in the initiator's trace"; exit 1; }

	# "conn/seq ts" of each send (conn: the low 16 bits of its track) and
	# each arrival (conn: from_conn); then every arrival has its send, before it.
	awk -F'"ts":|,"pid":|"tid":|,"args"|"seq":|}}' '/"name":"sent"/ { print ($4 % 65536) "/" $6, $2 }' \
		"$work/$serve.init.json" >"$work/$serve.sent.txt"
	sed -n 's/.*"ts":\([0-9.]*\),.*"seq":\([0-9]*\),"from_conn":\([0-9]*\)}}.*/\3\/\2 \1/p' "$work/$serve.target.json" \
		>"$work/$serve.arrived.txt"
	awk 'NR == FNR { sent[$1] = $2; next }
		!($1 in sent) { missing++; next }
		$2 + 0 < sent[$1] + 0 { early++ }
		{ matched++ }
		END { printf "%d arrivals matched their send, %d without one, %d before it\n", matched, missing, early
			exit !(matched >= 64 && missing == 0 && early == 0) }' "$work/$serve.sent.txt" "$work/$serve.arrived.txt" ||
		{ head -3 "$work/$serve.sent.txt" "$work/$serve.arrived.txt"; echo "FAIL: arrivals do not line up with their sends"; exit 1; }

	"$tool" --merge "$work/$serve.both.json" "$work/$serve.init.json" "$work/$serve.target.json" >"$work/$serve.sum.out"
	cat "$work/$serve.sum.out"
	awk '$1 == "at" && $2 == "target:" { at = ($3 >= 64) } $1 == "rdma" && $2 == "write" { w = ($3 >= 64 && $4 == 0) }
		END { exit !(at && w) }' "$work/$serve.sum.out" || { echo "FAIL: the summary of both files is off"; exit 1; }
	[ "$(grep -c '"name":"process_name"' "$work/$serve.both.json")" = 2 ] || { echo "FAIL: the merge has not two processes"; exit 1; }
	grep -q '"args":{"name":"rdma connection ' "$work/$serve.both.json" || { echo "FAIL: no connection track named"; exit 1; }
	if command -v python3 >/dev/null; then
		python3 -m json.tool "$work/$serve.both.json" >/dev/null || { echo "FAIL: the merge is not valid JSON"; exit 1; }
	fi
}
check_serve progress
check_serve block
echo "timeline of two processes: sends and arrivals line up"
