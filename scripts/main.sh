#!/usr/bin/env bash
# The main job: install dependencies, build, and run the rdma_receive /
# rdma_send sample pair on the default soft device (soft_lo), as the DOCA
# guide's first run does on two hosts: each side writes its connection
# descriptor, the descriptors are exchanged, Enter is pressed on each side,
# and the receiver prints what it got.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build

bin=build/samples/doca_rdma
dev=${DEVICE:-soft_lo}
work=$(mktemp -d)
trap 'rm -rf "$work"; [ -n "${rpid:-}" ] && kill "$rpid" 2>/dev/null; true' EXIT
mkdir "$work/receiver" "$work/sender"
mkfifo "$work/receiver.in" "$work/sender.in"
exec 3<>"$work/receiver.in" 4<>"$work/sender.in"

# Wait (bounded) for a file a side writes.
wait_file() {
	for _ in $(seq 1 200); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	echo "main: $1 did not appear" >&2
	exit 1
}

"$bin/doca_rdma_receive" -d "$dev" -ld "$work/receiver/local.txt" -re "$work/receiver/remote.txt" \
	<&3 >"$work/receiver.log" 2>&1 &
rpid=$!
wait_file "$work/receiver/local.txt"
cp "$work/receiver/local.txt" "$work/sender/remote.txt"

"$bin/doca_rdma_send" -d "$dev" -ld "$work/sender/local.txt" -re "$work/sender/remote.txt" \
	<&4 >"$work/sender.log" 2>&1 &
spid=$!
wait_file "$work/sender/local.txt"
cp "$work/sender/local.txt" "$work/receiver/remote.txt"

echo >&3 # Enter on the receiver: it reads the sender's descriptor and posts its receive
echo >&4 # Enter on the sender: it connects and sends
status=0
wait "$spid" || status=1
wait "$rpid" || status=1
rpid=
echo "--- receiver"
cat "$work/receiver.log"
echo "--- sender"
cat "$work/sender.log"
exit $status
