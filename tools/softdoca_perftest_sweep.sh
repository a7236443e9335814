#!/usr/bin/env bash
# softdoca_perftest_sweep — a write sweep on this host (server and client
# over 127.0.0.1): softdoca_perftest write_bw -a and write_lat -a, their
# perftest tables on stdout (and in OUT.bw.txt, OUT.lat.txt), and a PNG of
# bandwidth and latency against message size drawn by gnuplot. With
# ucx_perftest on PATH, UCX's own ucp_put_bw / ucp_put_lat at every other
# size go on the same plot as the reference (UCX's latency is half a
# ping-pong; softdoca's is submit to completion of one write).
#
#   softdoca_perftest_sweep.sh [-o OUT.png] [-n ITERS] [-d DEV] [-p PORT] [--no-ucx]
set -euo pipefail

out=sweep.png iters=1000 dev=soft_lo port=18515 ucx=1
usage() {
	echo "usage: softdoca_perftest_sweep.sh [-o OUT.png] [-n ITERS] [-d DEV] [-p PORT] [--no-ucx]" >&2
	exit 1
}
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=${2:?}; shift 2 ;;
	-n) iters=${2:?}; shift 2 ;;
	-d) dev=${2:?}; shift 2 ;;
	-p) port=${2:?}; shift 2 ;;
	--no-ucx) ucx=0; shift ;;
	*) usage ;;
	esac
done
case $iters in '' | *[!0-9]*) usage ;; esac
case $port in '' | *[!0-9]*) usage ;; esac
command -v gnuplot >/dev/null || { echo "softdoca_perftest_sweep: gnuplot is not installed (Debian: gnuplot-nox)" >&2; exit 2; }
command -v ucx_perftest >/dev/null || ucx=0
perftest=${SOFTDOCA_PERFTEST:-$(dirname "$(readlink -f "$0")")/softdoca_perftest}
[ -x "$perftest" ] || perftest=$(command -v softdoca_perftest) || { echo "softdoca_perftest_sweep: no softdoca_perftest" >&2; exit 2; }
base=${out%.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Wait (bounded) until something listens on TCP port $1.
wait_listen() {
	for _ in $(seq 200); do
		ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
		sleep 0.05
	done
	echo "softdoca_perftest_sweep: nothing listens on port $1" >&2
	return 1
}

# Our pair: server in the background, client's table to $2.
ours() {
	local test=$1 txt=$2 spid
	"$perftest" "$test" -a -n "$iters" -d "$dev" -p "$port" >/dev/null &
	spid=$!
	"$perftest" "$test" -a -n "$iters" -d "$dev" -p "$port" 127.0.0.1 >"$txt"
	wait "$spid"
	cat "$txt"
}
ours write_bw "$base.bw.txt"
ours write_lat "$base.lat.txt"

# The table rows (they start with the size), as "size value".
awk '$1 ~ /^[0-9]+$/ && NF == 5 { print $1, $4 }' "$base.bw.txt" >"$work/bw.dat"
awk '$1 ~ /^[0-9]+$/ && NF == 9 { print $1, $5 }' "$base.lat.txt" >"$work/lat.dat"

# UCX's reference: one ucx_perftest pair per size; the final line's
# columns are iterations, median, average, overall latency, average and
# overall MB/s, average and overall messages per second.
: >"$work/ucx_bw.dat"
: >"$work/ucx_lat.dat"
if [ "$ucx" = 1 ]; then
	uport=$((port + 1))
	for e in $(seq 1 2 23); do
		size=$((1 << e))
		for t in bw lat; do
			timeout 60 ucx_perftest -p "$uport" >/dev/null 2>&1 &
			spid=$!
			wait_listen "$uport"
			line=$(timeout 60 ucx_perftest -p "$uport" -t "ucp_put_$t" -s "$size" -n "$iters" -f 127.0.0.1 2>/dev/null | tail -n 1)
			wait "$spid" || true
			if [ "$t" = bw ]; then
				echo "$size $(echo "$line" | awk '{ print $5 * 1e6 / 1048576 }')" >>"$work/ucx_bw.dat"
			else
				echo "$size $(echo "$line" | awk '{ print $2 }')" >>"$work/ucx_lat.dat"
			fi
		done
	done
fi

plot_ref() { # $1: data file, $2: title
	[ -s "$1" ] && echo ", '$1' using 1:2 with linespoints title '$2'"
	return 0
}
gnuplot <<EOF
set terminal pngcairo size 1000,900 noenhanced
set output '$out'
set multiplot layout 2,1 title 'RDMA write over $dev, $iters iterations a size'
set logscale x 2
set xtics ('2' 2, '64' 64, '1K' 1024, '32K' 32768, '1M' 1048576, '8M' 8388608)
set logscale y
set grid
set key left top
set xlabel 'message size [bytes]'
set ylabel 'BW average [MB/sec]'
plot '$work/bw.dat' using 1:2 with linespoints title 'softdoca write_bw'$(plot_ref "$work/ucx_bw.dat" 'ucx_perftest ucp_put_bw')
set ylabel 't_typical [usec]'
plot '$work/lat.dat' using 1:2 with linespoints title 'softdoca write_lat (submit to completion)'$(plot_ref "$work/ucx_lat.dat" 'ucx_perftest ucp_put_lat (half round trip)')
unset multiplot
EOF
echo "# plot: $out"
