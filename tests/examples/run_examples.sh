#!/usr/bin/env bash
# The Go and Python shims of examples/ against the C samples, the way a user
# meets them: install softdoca from build dir $1 into a staging root, build
# the shipped rdma_send and rdma_receive samples in place (output outside)
# with only the installed pkg-config modules, build examples/go against the
# installed tree and librdma_send_sample.so, then play two pairs over
# soft_lo with descriptor files (samples/run_samples.sh: bounded waits,
# exit codes, `Got from sender: "..."`, `Sample finished successfully`):
#
#   Go sender (examples/go)      -> C receiver (doca_rdma_receive)
#   C sender (doca_rdma_send)    -> Python receiver (examples/python, ctypes)
#
# and check that `ldd` of the Go program shows the installed libdoca_rdma.
#
#   run_examples.sh [builddir]
#
# Exit 0: all good; 1: something is wrong; 77: a toolchain is missing (skip,
# with the reason printed).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
builddir=${1:-build}

skip() { echo "run_examples: SKIP: $*"; exit 77; }
fail() { echo "run_examples: FAIL: $*"; exit 1; }

for tool in meson ninja pkg-config cc ldd; do
	command -v "$tool" >/dev/null || skip "$tool is not installed"
done
command -v go >/dev/null || skip "go is not installed (Debian: apt-get install golang-go; scripts/setup.sh installs it)"
command -v python3 >/dev/null || skip "python3 is not installed"

stage=$(mktemp -d)
[ -n "${KEEP_STAGE:-}" ] || trap 'rm -rf "$stage"' EXIT

# --- The install, and the shipped samples built from it.
meson install -C "$builddir" --destdir "$stage/root" >/dev/null
tree=$(find "$stage/root" -type d -path '*/samples/doca_rdma' -print -quit)
[ -n "$tree" ] || fail "no samples/doca_rdma in the install of $builddir"
samples=$(dirname "$tree")
pcdir=$(dirname "$(find "$stage/root" -name doca-rdma.pc -print -quit)")
libdir=$(dirname "$(find "$stage/root" -name 'libdoca_rdma.so' -print -quit)")
export PKG_CONFIG_PATH="$pcdir"
export PKG_CONFIG_LIBDIR="$pcdir"           # nothing from the system's pkg-config dirs
export PKG_CONFIG_SYSROOT_DIR="$stage/root" # the .pc files name the final prefix
export LD_LIBRARY_PATH="$libdir"

work=$stage/work
mkdir -p "$work"
for name in rdma_send rdma_receive; do
	if ! (cd "$tree/$name" && meson setup "$work/$name" >"$stage/setup-$name.log" 2>&1 &&
		ninja -C "$work/$name" >"$stage/ninja-$name.log" 2>&1); then
		cat "$stage/setup-$name.log" "$stage/ninja-$name.log" 2>/dev/null
		fail "the shipped $name sample did not build from $tree/$name"
	fi
	[ -f "$work/$name/lib${name}_sample.so" ] || fail "no lib${name}_sample.so in $work/$name"
done

# --- The Go program: standard library only, nothing downloaded, its
# caches in the stage.
export GOCACHE=$stage/gocache GOPATH=$stage/gopath GOPROXY=off GOFLAGS='' GO111MODULE=on
export CGO_ENABLED=1
gobin=$work/doca_rdma_send_go
if ! (cd examples/go &&
	CGO_CFLAGS="-I$tree -I$samples" \
	CGO_LDFLAGS="-L$work/rdma_send -Wl,-rpath,$work/rdma_send" \
	go build -o "$gobin" . >"$stage/go-build.log" 2>&1); then
	cat "$stage/go-build.log"
	fail "go build in examples/go failed ($(go version))"
fi
linked=$(ldd "$gobin")
grep -q "libdoca_common.so.* => $libdir/" <<<"$linked" ||
	fail "ldd $gobin does not show the installed libdoca_common, where the calls are ($libdir): $linked"
grep -q "librdma_send_sample.so => $work/rdma_send/" <<<"$linked" ||
	fail "the Go program does not use the shipped sample's librdma_send_sample.so: $linked"

# A first failure reaches the shim as the sample's own error, by name:
# the -d and -g the shim was given are the ones the sample used.
pyshim=(python3 "$repo/examples/python/rdma_receive.py" --sample-lib "$work/rdma_receive/librdma_receive_sample.so")
# expect_error NAME ERROR LINE COMMAND...: exit 1, "returned ERROR", LINE.
expect_error() {
	local name=$1 error=$2 line=$3 rc=0 log=$stage/$1.log
	shift 3
	(cd "$work" && timeout 30 "$@") </dev/null >"$log" 2>&1 || rc=$?
	if [ "$rc" != 1 ] || ! grep -q "returned $error\$" "$log" || ! grep -qF -- "$line" "$log"; then
		cat "$log"
		fail "$name: exit $rc; want 1, '... returned $error' and '$line'"
	fi
}
expect_error go-wrong-dev DOCA_ERROR_NOT_FOUND 'No DOCA device is named "no_such_device"' \
	"$gobin" -d no_such_device
expect_error go-wrong-gid DOCA_ERROR_INVALID_VALUE 'Cannot use GID index 99 on soft_lo' \
	"$gobin" -d soft_lo -g 99 -ld go-wrong-gid.desc
expect_error py-wrong-dev DOCA_ERROR_NOT_FOUND 'No DOCA device is named "no_such_device"' \
	"${pyshim[@]}" -d no_such_device
expect_error py-wrong-gid DOCA_ERROR_INVALID_VALUE 'Cannot use GID index 99 on soft_lo' \
	"${pyshim[@]}" -d soft_lo -g 99 -ld py-wrong-gid.desc
# A library that is not the rdma_receive sample's is refused, clearly.
rc=0
python3 examples/python/rdma_receive.py --sample-lib "$work/rdma_send/librdma_send_sample.so" -d soft_lo \
	>"$stage/py-wrong-lib.log" 2>&1 || rc=$?
if [ "$rc" != 1 ] || ! grep -q "is not the rdma_receive sample's library" "$stage/py-wrong-lib.log"; then
	cat "$stage/py-wrong-lib.log"
	fail "the Python program over librdma_send_sample.so: exit $rc; want 1 and a clear message"
fi

# --- The pairs. run_samples.sh runs $bindir/doca_rdma_{receive,send}; each
# bindir pairs one shim with the other side's C sample.
go_pair=$work/go_pair py_pair=$work/py_pair
mkdir -p "$go_pair" "$py_pair"
ln -s "$work/rdma_receive/doca_rdma_receive" "$go_pair/doca_rdma_receive"
ln -s "$work/rdma_send/doca_rdma_send" "$py_pair/doca_rdma_send"
# The shims with -g 0, the device's first GID, as the DOCA guide runs them.
printf '#!/bin/sh\nexec "%s" -g 0 "$@"\n' "$gobin" >"$go_pair/doca_rdma_send"
printf '#!/bin/sh\nexec python3 "%s" --sample-lib "%s" -g 0 "$@"\n' \
	"$repo/examples/python/rdma_receive.py" "$work/rdma_receive/librdma_receive_sample.so" >"$py_pair/doca_rdma_receive"
chmod +x "$go_pair/doca_rdma_send" "$py_pair/doca_rdma_receive"

# play NAME BINDIR SIDE LINE: one pair over soft_lo; SIDE (A: receiver,
# B: sender) must also print LINE, which only the shim prints.
play() {
	local name=$1 bindir=$2 side=$3 line=$4 runs log
	runs=$stage/runs-$(basename "$bindir")
	mkdir -p "$runs"
	if ! TMPDIR=$runs bash samples/run_samples.sh --bindir "$bindir" --device soft_lo --pairs send \
		--modes files --transports "shm tcp" --keep >"$stage/$name.log" 2>&1; then
		cat "$stage/$name.log"
		fail "$name: the pair did not run"
	fi
	grep -q "samples: 2 passed, 0 failed, 0 skipped" "$stage/$name.log" ||
		{ cat "$stage/$name.log"; fail "$name: run_samples.sh did not run both transports"; }
	for log in "$runs"/run_samples.*/"$side.log"; do
		grep -qF -- "$line" "$log" || { cat "$log"; fail "$name: $log has no '$line' (was the shim run?)"; }
	done
	[ "$(find "$runs" -mindepth 1 -maxdepth 1 -type d | wc -l)" = 2 ] || fail "$name: expected 2 runs in $runs"
	echo "ok   $name (shm, tcp)"
}
play "Go sender -> C receiver" "$go_pair" B 'rdma_send() returned DOCA_SUCCESS'
play "C sender -> Python receiver" "$py_pair" A 'rdma_receive() returned DOCA_SUCCESS'

echo "examples check: ok (Go sender and Python receiver against the C samples; $(go version | awk '{print $3}'), $(python3 --version))"
