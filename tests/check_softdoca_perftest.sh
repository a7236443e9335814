#!/usr/bin/env bash
# softdoca_perftest ($1: the binary) prints perftest's tables: for every
# test kind a server and a client run briefly over soft_lo and the
# client's output must parse as ib_*_bw / ib_*_lat output does:
#  - the header line has perftest's columns in order (MB/sec, or Gb/sec
#    with --report_gbits; the t_avg/tps layout with -D for latency), with
#    a line of 87 dashes right before it and right after the last row;
#  - exactly one row per size (-a: 2 .. 2^23, each power of two), the
#    size and iteration columns as asked, every number positive where it
#    must be (message rate, latencies) and ordered where it must be
#    (peak >= average; min <= typical, avg, 99% <= 99.9% <= max);
#  - the test chosen by program name (an ib_read_bw symlink) works;
#  - a bad flag, a bad value, an unknown test exits 1 with a message;
#  - a server fed a bad hello, an oversized frame, a wrong frame, an
#    early end of file or a client of another test exits 1 with a message;
#  - the server exits 0 after printing its closing line.
set -euo pipefail
bin=${1:?usage: check_softdoca_perftest.sh <softdoca_perftest binary>}
bin=$(readlink -f "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
# Below the kernel's ephemeral range (32768..), so that no other test's
# outgoing connection holds the port; a port some listener holds anyway
# is skipped, and a pair whose server lost the race for it runs again.
port=$((20000 + $$ % 10000))
dashes=$(printf '%.0s-' $(seq 87))

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# pair <name> <program> args...: a server, then a client on 127.0.0.1;
# outputs in $work/<name>.{srv,cli}{,.err}. Fails unless both exit 0.
next_port() {
	port=$((port + 1))
	while ss -ltnH "sport = :$port" 2>/dev/null | grep -q .; do
		port=$((port + 1))
	done
}

pair() {
	local name=$1 prog=$2 spid rc src attempt
	shift 2
	for attempt in 1 2 3; do
		rc=0 src=0
		next_port
		timeout 60 "$prog" "$@" -p "$port" >"$work/$name.srv" 2>"$work/$name.srv.err" &
		spid=$!
		timeout 60 "$prog" "$@" -p "$port" 127.0.0.1 >"$work/$name.cli" 2>"$work/$name.cli.err" || rc=$?
		wait "$spid" || src=$?
		grep -q "Address already in use" "$work/$name.srv.err" || break
	done
	if grep -q "no device named" "$work/$name.cli.err" "$work/$name.srv.err"; then
		echo "SKIP: no soft_lo device: $(cat "$work/$name.cli.err")"
		exit 77
	fi
	[ "$rc" = 0 ] || fail "$name: client exited $rc: $(cat "$work/$name.cli.err")"
	[ "$src" = 0 ] || fail "$name: server exited $src: $(cat "$work/$name.srv.err")"
	[ "$(tail -n 1 "$work/$name.srv")" = "$dashes" ] || fail "$name: the server's last line is not the dashed line"
}

# check <name> <layout: bw|bwg|lat|latd> <iterations or 0> <sizes...>
check() {
	local name=$1 layout=$2 iters=$3 want
	shift 3
	case $layout in
	bw) want='#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]' ;;
	bwg) want='#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]' ;;
	lat) want='#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]' ;;
	latd) want='#bytes #iterations t_avg[usec] tps average' ;;
	esac
	awk -v want="$want" -v dashes="$dashes" -v layout="$layout" -v iters="$iters" -v sizes="$*" '
		function bad(msg) { print "row " NR ": " msg ": " $0; errors++ }
		BEGIN { n = split(sizes, size, " ") }
		{ line[NR] = $0 }
		{ norm = $0; gsub(/[ \t]+/, " ", norm); sub(/^ /, "", norm); sub(/ $/, "", norm) }
		norm == want { hdr = NR; next }
		hdr && !done && $0 == dashes { done = NR; next }
		hdr && !done {
			rows++
			if (rows > n) { bad("more rows than sizes"); next }
			if ($1 != size[rows]) bad("size " $1 ", want " size[rows])
			if (iters > 0 && $2 != iters) bad("iterations " $2 ", want " iters)
			if (!($2 > 0)) bad("no iterations")
			if (layout ~ /^bw/) {
				if (NF != 5) bad(NF " fields, want 5")
				if (!($5 > 0)) bad("message rate not positive")
				if ($1 >= 4096 && !($4 > 0)) bad("bandwidth not positive")
				if ($3 + 0 < $4 + 0) bad("peak below average")
			} else if (layout == "lat") {
				if (NF != 9) bad(NF " fields, want 9")
				if (!($3 > 0)) bad("t_min not positive")
				if (!($3 <= $5 && $5 <= $4)) bad("t_typical outside min .. max")
				if (!($3 <= $6 && $6 <= $4)) bad("t_avg outside min .. max")
				if (!($7 >= 0)) bad("negative t_stdev")
				if (!($5 <= $8 && $8 <= $9 && $9 <= $4)) bad("percentiles out of order")
			} else {
				if (NF != 4) bad(NF " fields, want 4")
				if (!($3 > 0 && $4 > 0)) bad("t_avg or tps not positive")
			}
		}
		END {
			if (!hdr) { print "no header line \"" want "\""; exit 1 }
			if (line[hdr - 1] != dashes) { print "no dashed line before the header"; errors++ }
			if (!done) { print "no dashed line after the rows"; errors++ }
			if (rows != n) { print rows " rows, want " n; errors++ }
			exit errors > 0
		}' "$work/$name.cli" >"$work/$name.why" || fail "$name: $(cat "$work/$name.why")"
}

for t in write read send atomic; do
	size=65536
	[ "$t" = atomic ] && size=8
	pair "${t}_bw" "$bin" "${t}_bw" -n 200
	check "${t}_bw" bw 200 "$size"
	size=2
	[ "$t" = atomic ] && size=8
	pair "${t}_lat" "$bin" "${t}_lat" -n 100
	check "${t}_lat" lat 100 "$size"
done
pair cmp_swap "$bin" atomic_lat -A CMP_AND_SWAP -n 50
check cmp_swap lat 50 8
grep -q "Atomic CMP_AND_SWAP Latency Test" "$work/cmp_swap.cli" || fail "cmp_swap: no CMP_AND_SWAP title"

all=$(for e in $(seq 1 23); do echo $((1 << e)); done)
pair all_bw "$bin" write_bw -a -n 5 --report_gbits
check all_bw bwg 5 $all
pair all_lat "$bin" send_lat -a -n 5 -s 64
check all_lat lat 5 $all

pair qps "$bin" read_bw -q 4 -s 4096 -n 400 -d soft_lo -x 0 -F
check qps bw 400 4096
pair dur "$bin" write_lat -D 1
check dur latd 0 2

# The test chosen by the program's name.
ln -s "$bin" "$work/ib_read_bw"
pair byname "$work/ib_read_bw" -s 1024 -n 50
check byname bw 50 1024
grep -q "RDMA_Read BW Test" "$work/byname.cli" || fail "byname: not the read test"

# A server facing a hostile or mismatched client: exit 1 with a message,
# never a hang (timeout's 124) or a crash.
hostile() {
	local name=$1 payload=$2 spid rc=0
	next_port
	timeout 20 "$bin" write_bw -p "$port" >/dev/null 2>"$work/$name.err" &
	spid=$!
	for _ in $(seq 200); do
		ss -ltnH "sport = :$port" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	if exec 3<>"/dev/tcp/127.0.0.1/$port"; then
		printf "$payload" >&3 || true
		exec 3>&-
	fi
	wait "$spid" || rc=$?
	[ "$rc" = 1 ] || fail "server fed $name exited $rc, want 1"
	[ -s "$work/$name.err" ] || fail "server fed $name: no message"
}
if command -v ss >/dev/null; then
	hostile bad_magic 'H\0\0\0\030AAAAAAAAAAAAAAAAAAAAAAAA'
	hostile huge_frame 'H\377\377\377\377'
	hostile wrong_type 'C\0\0\0\0'
	hostile eof ''
fi
next_port
timeout 20 "$bin" write_bw -p "$port" >/dev/null 2>"$work/mismatch.srv.err" &
spid=$!
rc=0
timeout 20 "$bin" read_bw -n 5 -p "$port" 127.0.0.1 >/dev/null 2>"$work/mismatch.cli.err" || rc=$?
src=0
wait "$spid" || src=$?
[ "$rc" = 1 ] && [ "$src" = 1 ] || fail "read_bw client against a write_bw server: exits $rc and $src, want 1 and 1"
grep -q "another test" "$work/mismatch.srv.err" || fail "mismatch: the server did not say why"

# Bad command lines: exit 1, a message on stderr, no table.
bad() {
	local rc=0
	timeout 20 "$bin" "$@" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
	[ "$rc" = 1 ] || fail "softdoca_perftest $* exited $rc, want 1"
	[ -s "$work/bad.err" ] || fail "softdoca_perftest $*: no message"
	! grep -q '#bytes' "$work/bad.out" || fail "softdoca_perftest $*: printed a table"
}
bad write_bw --no-such-flag
bad write_bw -z
bad write_bw -s 0
bad write_bw -s 12x
bad write_bw -n 2
bad write_bw -q 0
bad write_bw -p 70000
bad write_bw -D 1 -n 100
bad atomic_bw -s 64
bad atomic_bw -A ADD
bad write_bw -c UD
bad write_bw host1 host2
bad no_such_test
bad
"$bin" -h >"$work/help" || fail "-h exited non-zero"
grep -q usage "$work/help" || fail "-h printed no usage"

[ "$fails" = 0 ] || exit 1
echo "softdoca_perftest: all layouts parse"
