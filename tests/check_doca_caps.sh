#!/usr/bin/env bash
# doca_caps ($1: the binary, built or installed) prints NVIDIA's layout
# with NVIDIA's flags:
#  - --list-devs: one "PCI: <addr>" block per device, every attribute row
#    in order, one GID[i] row per GID table entry; the devices are exactly
#    the interfaces with an address (ip(8)), at the PCI address dev.c
#    derives from the interface index;
#  - -p/--pci-addr (long and short forms of the address) and -d select
#    exactly one device; an address no device has exits 1, a malformed one 2;
#  - the capability listing: per device the common, dma, rdma and
#    sync_event sections, then softdoca's extras with the GID table;
#  - the extras' rdma_cm row, one per device, saying what RDMA CM needs;
#  - --list-rep-devs, --list-libs, --list-loggers, -h, and -v: the DOCA
#    version ($2, as pkg-config --modversion doca says it) alone on the
#    first line, softdoca's own on the second;
#  - an unknown flag, a missing value or a stray argument exits 2 with a
#    message and prints nothing on stdout.
set -euo pipefail
caps=${1:?usage: check_doca_caps.sh <doca_caps binary> <DOCA version>}
doca_version=${2:?usage: check_doca_caps.sh <doca_caps binary> <DOCA version>}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# run <name> <want-exit> args...: stdout to $work/<name>.out, stderr to .err
run() {
	local name=$1 want=$2 rc=0
	shift 2
	"$caps" "$@" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
	[ "$rc" = "$want" ] || fail "doca_caps $* exited $rc, want $want: $(cat "$work/$name.err")"
}

# The attribute rows of one --list-devs block, in NVIDIA's order.
attrs=(ibdev_name iface_name iface_index pci_func_type mac_addr ipv4_addr ipv6_addr gid_table_size)
# Spelled out: mawk has no {n} intervals.
h='[0-9a-f]'
hex4="$h$h$h$h"
full6="$hex4:$hex4:$hex4:$hex4:$hex4:$hex4:$hex4:$hex4"
pci_re="^$hex4:$h$h:$h$h\\.[0-7]\$"
mac_re="^$h$h:$h$h:$h$h:$h$h:$h$h:$h$h\$"

# check_block <file>: every block of a --list-devs output is complete;
# prints "pci iface ibdev" per block.
check_blocks() {
	awk -v attrs="${attrs[*]}" -v full6="^$full6\$" -v pci_re="$pci_re" -v mac_re="$mac_re" '
	function finish() {
		if (pci == "") return
		if (n != na) bad("block " pci ": " n " attribute rows, want " na)
		if (gids != size) bad("block " pci ": " gids " GID rows, gid_table_size " size)
		print pci, v["iface_name"], v["ibdev_name"]
	}
	function bad(m) { print "BAD " m; }
	BEGIN { na = split(attrs, want, " "); pci = "" }
	/^PCI: / {
		finish()
		pci = $2; n = 0; gids = 0; size = -1; delete v
		if (pci !~ pci_re) bad("PCI line " $0)
		next
	}
	/^    [^ ]/ {
		if (pci == "") { bad("row before any PCI line: " $0); next }
		if ($1 ~ /^GID\[[0-9]+\]$/) {
			if ($1 != "GID[" gids "]") bad("block " pci ": " $1 " out of order")
			if ($2 !~ full6) bad("block " pci ": GID " $2 " not in full form")
			gids++
			next
		}
		n++
		if ($1 != want[n]) bad("block " pci ": row " n " is " $1 ", want " want[n])
		v[$1] = $2
		if ($1 == "gid_table_size") size = $2
		if ($1 == "mac_addr" && $2 !~ mac_re) bad("block " pci ": mac " $2)
		if ($1 == "ipv6_addr" && $2 !~ full6) bad("block " pci ": ipv6 " $2)
		if ($1 == "ipv4_addr" && $2 !~ /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/) bad("block " pci ": ipv4 " $2)
		next
	}
	{ bad("unexpected line: " $0) }
	END { finish() }' "$1"
}

# ---- --list-devs ----------------------------------------------------------
run devs 0 --list-devs
check_blocks "$work/devs.out" >"$work/blocks"
if grep -q '^BAD ' "$work/blocks"; then
	sed -n 's/^BAD /FAIL: --list-devs: /p' "$work/blocks"
	fails=$((fails + 1))
fi
grep -v '^BAD ' "$work/blocks" >"$work/devices" || true
ndev=$(wc -l <"$work/devices")
[ "$ndev" -ge 1 ] || fail "--list-devs shows no device: $(cat "$work/devs.out")"
grep -qE '^    ibdev_name +soft_lo$' "$work/devs.out" || fail "--list-devs: no soft_lo block"
awk '/^PCI: /{lo=0} /ibdev_name +soft_lo$/{lo=1} lo' "$work/devs.out" >"$work/lo.block"
grep -qE '^    ipv4_addr +127\.0\.0\.1$' "$work/lo.block" || fail "soft_lo: no ipv4_addr 127.0.0.1"
grep -qE '^    GID\[0\] +0000:0000:0000:0000:0000:ffff:7f00:0001$' "$work/lo.block" ||
	fail "soft_lo: GID[0] is not ::ffff:127.0.0.1 in full form: $(cat "$work/lo.block")"
[ "$(cut -d' ' -f1 "$work/devices" | sort | uniq -d)" = "" ] || fail "--list-devs: a PCI address twice"

# The devices are the interfaces with an address, at the address dev.c
# derives from the interface index.
if command -v ip >/dev/null; then
	ip -o addr show | awk '{print $2}' | sed 's/@.*//' | sort -u >"$work/ifaces.want"
	cut -d' ' -f2 "$work/devices" | sort -u >"$work/ifaces.got"
	diff -u "$work/ifaces.want" "$work/ifaces.got" >/dev/null ||
		fail "--list-devs interfaces differ from ip's:" \
			"$(diff "$work/ifaces.want" "$work/ifaces.got" | tr '\n' ' ')"
	while read -r pci iface _; do
		idx=$(cat "/sys/class/net/$iface/ifindex")
		want=$(printf '%04x:%02x:%02x.%x' $(((idx >> 13) & 0xffff)) $(((idx >> 5) & 0xff)) $((idx & 0x1f)) \
			$(((idx >> 29) & 3)))
		[ "$pci" = "$want" ] || fail "$iface (ifindex $idx) is at $pci, want $want"
	done <"$work/devices"
else
	echo "note: ip(8) missing, device set not compared with the interfaces"
fi

# ---- selection ------------------------------------------------------------
while read -r pci iface ibdev; do
	for form in "$pci" "${pci#0000:}"; do
		for flag in -p --pci-addr; do
			run sel 0 "$flag" "$form" --list-devs
			got=$(grep -c '^PCI: ' "$work/sel.out" || true)
			[ "$got" = 1 ] || fail "$flag $form: $got blocks, want 1"
			grep -qx "PCI: $pci" "$work/sel.out" || fail "$flag $form selected $(head -1 "$work/sel.out")"
			grep -qE "^    ibdev_name +$ibdev\$" "$work/sel.out" || fail "$flag $form: not $ibdev"
		done
	done
	for name in "$ibdev" "$iface"; do
		run seld 0 -d "$name" --list-devs
		if [ "$(grep -c '^PCI: ' "$work/seld.out")" != 1 ] || ! grep -qx "PCI: $pci" "$work/seld.out"; then
			fail "-d $name did not select $pci alone: $(cat "$work/seld.out")"
		fi
	done
done <"$work/devices"
# An address no device has (bus ff is beyond every ifindex here).
run none 1 -p 0000:ff:1f.3 --list-devs
[ ! -s "$work/none.out" ] || fail "-p 0000:ff:1f.3 printed: $(cat "$work/none.out")"
grep -q "no device at PCI address 0000:ff:1f.3" "$work/none.err" || fail "-p 0000:ff:1f.3: $(cat "$work/none.err")"
run noname 1 -d no_such_device
for bad in zz 0000:00:01 00:01.8x 0000-00:01.0 ''; do
	run badpci 2 -p "$bad" --list-devs
	[ ! -s "$work/badpci.out" ] || fail "-p '$bad' printed on stdout"
	grep -q "is not a PCI address" "$work/badpci.err" || fail "-p '$bad': $(cat "$work/badpci.err")"
done

# ---- capability listing -----------------------------------------------------
run caps 0
sections=$(awk '/^PCI: /{if (s != "") print s; s = $2 ":"; next} /^    [^ ]/{s = s " " $1} END{print s}' \
	"$work/caps.out")
want_sections="common dma rdma sync_event softdoca"
[ "$(wc -l <<<"$sections")" = "$ndev" ] || fail "capability listing: $(wc -l <<<"$sections") blocks, want $ndev"
while read -r pci rest; do
	[ "$rest" = "$want_sections" ] || fail "capability listing of $pci: sections '$rest', want '$want_sections'"
done <<<"$sections"
grep -qx "    softdoca extras (not part of NVIDIA's doca_caps output)" "$work/caps.out" ||
	fail "no 'softdoca extras' heading"
for row in task_memcpy task_send task_receive task_write task_read task_atomic_cmp_swp transport_type_rc \
	max_send_queue_size gid_table_size task_notify_set export_to_remote_net; do
	grep -qE "^        $row +(supported|unsupported|[0-9]+)\$" "$work/caps.out" || fail "no '$row' row"
done
# Every capability row has a value (a library row never reads "error").
if grep -E '^        [a-z_]+ +error: ' "$work/caps.out"; then fail "a capability query failed"; fi
# The rdma section's gid_table_size is the --list-devs one, device by device.
awk '/^PCI: /{p=$2} /^    rdma$/{r=1; next} /^    [^ ]/{r=0} r && $1=="gid_table_size"{print p, $2}' \
	"$work/caps.out" >"$work/gidsize.caps"
awk '/^PCI: /{p=$2} $1=="gid_table_size"{print p, $2}' "$work/devs.out" >"$work/gidsize.devs"
diff -q "$work/gidsize.caps" "$work/gidsize.devs" >/dev/null || fail "gid_table_size differs between listings"
# The extras' GID table (what README's "choose -d and -g" shows).
grep -qE '^ +0 +::ffff:127\.0\.0\.1 +RoCE v2 +lo +127\.0\.0\.1$' "$work/caps.out" ||
	fail "extras: no 'index gid type interface address' row for GID 0 of lo"
# RDMA CM: one row per device, in the extras (DOCA has no cap_* query for
# it); every listed device has an address, so each says supported, with
# its GID count (the addresses a server listens on).
[ "$(grep -cE '^        rdma_cm ' "$work/caps.out")" = "$ndev" ] ||
	fail "capability listing: $(grep -cE '^        rdma_cm ' "$work/caps.out") rdma_cm rows, want $ndev"
awk '/^PCI: /{p=$2} /^    softdoca extras/{x=1; next} /^PCI: /{x=0} x && $1=="rdma_cm"{print p, $0}' \
	"$work/caps.out" | while read -r pci _ value; do
	n=$(awk -v p="$pci" '$1 == p {print $2}' "$work/gidsize.devs")
	want="supported (RC; a server listens on the device's $n address$([ "$n" = 1 ] || echo es))"
	[ "$value" = "$want" ] || echo "BAD $pci: rdma_cm '$value', want '$want'"
done >"$work/rdmacm.bad"
[ ! -s "$work/rdmacm.bad" ] || fail "$(cat "$work/rdmacm.bad")"
# What carries the traffic: one data_path row per device, in the extras.
[ "$(grep -cE '^        data_path +UCX shared memory \(posix\) to peers on this host, softdoca.s TCP link to others' "$work/caps.out")" = "$ndev" ] ||
	fail "capability listing: want one data_path row per device naming UCX shared memory and softdoca's TCP link"
run capsp 0 -p "$(head -1 "$work/devices" | cut -d' ' -f1)"
[ "$(grep -c '^PCI: ' "$work/capsp.out")" = 1 ] || fail "-p: capability listing of more than one device"

# ---- representors, libraries, loggers, version, help ------------------------
run reps 0 --list-rep-devs
[ "$(grep -c '^PCI: ' "$work/reps.out")" = "$ndev" ] || fail "--list-rep-devs: not one block per device"
# Every soft device lists one representor per soft device of the host (the
# BlueField side), each a PF with the host device's PCI address and VUID.
[ "$(grep -c '^    PCI: ' "$work/reps.out")" = "$((ndev * ndev))" ] ||
	fail "--list-rep-devs: not one representor per host device under each device"
awk '/^PCI: /{print $2}' "$work/reps.out" >"$work/reps.devs"
awk '/^    PCI: /{print $2}' "$work/reps.out" | sort | uniq -c | awk -v n="$ndev" '$1 != n {print "BAD " $2}' |
	grep -q BAD && fail "--list-rep-devs: a representor's PCI address is not listed under every device"
awk '/^    PCI: /{p=$2} $1=="vuid"{if ($2 != "softdoca-pf-" p) print "BAD " p " " $2}
	$1=="pci_func_type"{if ($2 != "PF") print "BAD type " p} $1=="hotplug"{if ($2 != "0") print "BAD hotplug " p}' \
	"$work/reps.out" | grep BAD && fail "--list-rep-devs: a representor row is wrong"
[ "$(grep -cE '^        vuid +softdoca-pf-' "$work/reps.out")" = "$((ndev * ndev))" ] ||
	fail "--list-rep-devs: a representor has no vuid row"
awk '/^    PCI: /{print $2}' "$work/reps.out" | sort -u | cmp -s - <(sort -u "$work/reps.devs") ||
	fail "--list-rep-devs: representor addresses are not the devices' addresses"
run repsb 0 -b
cmp -s "$work/reps.out" "$work/repsb.out" || fail "-b differs from --list-rep-devs"
run libs 0 --list-libs
for lib in common dma rdma argp; do
	grep -qE "^$lib +installed\$" "$work/libs.out" ||
		fail "--list-libs: $lib not installed: $(cat "$work/libs.out")"
done
if grep -vE '^[a-z0-9_]+ +(installed|uninstalled)$' "$work/libs.out"; then fail "--list-libs: malformed line"; fi
grep -q '^PCI: ' "$work/libs.out" && fail "--list-libs printed devices"
run loggers 0 --list-loggers
for lg in DEV RDMA DMA; do grep -qx "$lg" "$work/loggers.out" || fail "--list-loggers: no $lg"; done
[ "$(sort "$work/loggers.out" | uniq -d)" = "" ] || fail "--list-loggers: a name twice"
run version 0 -v
[ "$(sed -n 1p "$work/version.out")" = "$doca_version" ] ||
	fail "-v: first line '$(sed -n 1p "$work/version.out")', want the DOCA version '$doca_version' alone"
grep -qE '^softdoca [0-9]+\.[0-9]+\.[0-9]+$' <(sed -n 2p "$work/version.out") ||
	fail "-v: second line '$(sed -n 2p "$work/version.out")', want 'softdoca <version>'"
[ "$(wc -l <"$work/version.out")" = 2 ] || fail "-v: $(wc -l <"$work/version.out") lines, want 2"
run version_long 0 --version
cmp -s "$work/version.out" "$work/version_long.out" || fail "--version and -v differ"
run help 0 --help
for flag in --list-devs --list-rep-devs --list-libs --list-loggers --pci-addr --version; do
	grep -q -- "$flag" "$work/help.out" || fail "--help does not mention $flag"
done

# ---- refused command lines --------------------------------------------------
for args in "--bogus" "-Z" "--list-devs --nope" "-p" "--pci-addr" "-d" "stray" "--list-devs stray"; do
	# shellcheck disable=SC2086 # word splitting wanted
	run refused 2 $args
	[ ! -s "$work/refused.out" ] || fail "doca_caps $args printed on stdout"
	[ -s "$work/refused.err" ] || fail "doca_caps $args: no message"
done

# ---- renamed devices (SOFTDOCA_DEVICES) -------------------------------------
SOFTDOCA_DEVICES=caps_test_lo=lo run renamed 0 -d caps_test_lo --list-devs
grep -qE '^    ibdev_name +caps_test_lo$' "$work/renamed.out" || fail "SOFTDOCA_DEVICES: $(cat "$work/renamed.out")"

if [ "$fails" -ne 0 ]; then
	echo "doca_caps layout: $fails failure(s)"
	exit 1
fi
echo "doca_caps layout: ok ($ndev devices)"
