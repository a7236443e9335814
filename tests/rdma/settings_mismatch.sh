#!/bin/sh
# Two peers on one host whose UCX settings differ (one side only sets
# UCX_CMA_MEMORY_INVALIDATE=n or UCX_MM_ERROR_HANDLING=n): UCX cannot
# connect them (its wireup aborted the process that received the other's
# request), so softdoca refuses at doca_rdma_connect, on both sides, with
# DOCA_ERROR_INVALID_VALUE and a line naming the setting. Each variant
# runs an rdma_peer pair over shared memory; both must exit 1 (refused),
# neither by a signal, and both logs must name the setting.
#
#   settings_mismatch.sh PEER
set -u

PEER=${1:?usage: settings_mismatch.sh PEER}
export UCX_TLS=self,sm,cma
unset UCX_NET_DEVICES UCX_CMA_MEMORY_INVALIDATE UCX_MM_ERROR_HANDLING

pass=0 fail=0

# variant SETTING SIDE: SIDE (target or initiator) runs with SETTING=n.
variant() {
	setting=$1 side=$2
	dir=$(mktemp -d "${TMPDIR:-/tmp}/settings_mismatch.XXXXXX") || exit 2
	tenv="" ienv=""
	if [ "$side" = target ]; then tenv="$setting=n"; else ienv="$setting=n"; fi
	env $tenv timeout 30 "$PEER" --role target --dir "$dir" --case write --size 64 \
		>"$dir/target.out" 2>"$dir/target.err" &
	tpid=$!
	env $ienv timeout 30 "$PEER" --role initiator --dir "$dir" --case write --size 64 \
		>"$dir/initiator.out" 2>"$dir/initiator.err"
	irc=$?
	wait "$tpid"
	trc=$?
	why=""
	[ "$irc" -eq 1 ] || why="${why}initiator exited $irc (expected 1: refused); "
	[ "$trc" -eq 1 ] || why="${why}target exited $trc (expected 1: refused); "
	for f in target initiator; do
		grep -q "the two sides run UCX with different settings ($setting)" "$dir/$f.err" ||
			why="${why}the $f's log does not name $setting; "
	done
	label="$setting=n on the $side only"
	if [ -z "$why" ]; then
		pass=$((pass + 1))
		echo "ok   $label: both sides refused at connect"
		rm -rf "$dir"
	else
		fail=$((fail + 1))
		echo "FAIL $label: ${why%; }"
		for f in "$dir"/*.out "$dir"/*.err; do
			[ -s "$f" ] && sed "s|^|    ${f##*/}: |" "$f" | tail -8
		done
		echo "    (files kept in $dir)"
	fi
}

for s in UCX_CMA_MEMORY_INVALIDATE UCX_MM_ERROR_HANDLING; do
	variant "$s" initiator
	variant "$s" target
done
echo "settings_mismatch: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
