#!/usr/bin/env bash
# The shipped samples tree, checked the way a DOCA user meets it: install
# softdoca from build dir $1 into a staging root, check that
# <prefix>/samples holds every sample of samples/doca_rdma exactly as the
# repository has it (plus VERSION three levels above each sample), then
# build the rdma_receive / rdma_send pair in place with only the installed
# pkg-config modules, output outside, run the pair built that way, and
# check that nothing was written into the installed tree.
#
#   check_samples_tree.sh [builddir] [--all]   --all: build every sample, not just the pair
#
# Exit 0: all good; 1: something is wrong; 77: a tool is missing (skip).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
builddir=build
all=0
for arg in "$@"; do
	case $arg in
	--all) all=1 ;;
	*) builddir=$arg ;;
	esac
done

for tool in meson ninja pkg-config cc python3; do
	command -v "$tool" >/dev/null || { echo "check_samples_tree: SKIP: $tool is not installed"; exit 77; }
done

fail() { echo "check_samples_tree: FAIL: $*"; exit 1; }

stage=$(mktemp -d)
[ -n "${KEEP_STAGE:-}" ] || trap 'chmod -R u+w "$stage" 2>/dev/null; rm -rf "$stage"' EXIT

meson install -C "$builddir" --destdir "$stage/root" >/dev/null
prefix=$(meson introspect "$builddir" --buildoptions | python3 -c \
	'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
root="$stage/root$prefix"
tree=$(find "$root" -type d -path '*/samples/doca_rdma' -print -quit)
[ -n "$tree" ] || fail "no samples/doca_rdma under $root"
samples=$(dirname "$tree")

# --- The tree: what the repository has, file for file.
names=$(cd samples/doca_rdma && for d in rdma_*/; do echo "${d%/}"; done)
[ "$(echo "$names" | wc -l)" -eq 16 ] || fail "expected 16 sample directories in samples/doca_rdma, found: $names"
for name in $names; do
	for f in meson.build README.md "${name}_main.c" "${name}_sample.c"; do
		[ -f "$tree/$name/$f" ] || fail "$name/$f is not installed"
	done
done
for f in common.c common.h doca_rdma/rdma_common.c doca_rdma/rdma_common.h; do
	cmp -s "samples/$f" "$samples/$f" || fail "installed samples/$f differs from the repository's (or is missing)"
done
# Everything installed is the repository's file; the repository's build
# file of the samples (samples/doca_rdma/meson.build) is the one not shipped.
diff -r -x meson.build samples/doca_rdma "$tree" >/dev/null || fail "installed doca_rdma tree differs: $(diff -rq -x meson.build samples/doca_rdma "$tree")"
for name in $names; do
	cmp -s "samples/doca_rdma/$name/meson.build" "$tree/$name/meson.build" || fail "$name/meson.build differs"
done
[ ! -e "$tree/meson.build" ] || fail "the repository's samples/doca_rdma/meson.build was installed"
version_file="$tree/rdma_send/../../../VERSION"
[ -f "$version_file" ] || fail "no VERSION three levels above the sample directories ($samples/..)"
[ "$(cat "$version_file")" = "$(cat VERSION)" ] || fail "installed VERSION says '$(cat "$version_file")', the repository's '$(cat VERSION)'"

# --- Build in place against the installed modules only.
pcdir=$(dirname "$(find "$root" -name doca-rdma.pc -print -quit)")
libdir=$(dirname "$(find "$root" -name 'libdoca_rdma.so' -print -quit)")
export PKG_CONFIG_PATH="$pcdir"
export PKG_CONFIG_LIBDIR="$pcdir" # nothing from the system's pkg-config dirs
export PKG_CONFIG_SYSROOT_DIR="$stage/root" # the .pc files name the final prefix
export LD_LIBRARY_PATH="$libdir"

# What the tree looks like before anyone builds in it.
snapshot() { (cd "$samples/.." && find . -printf '%p %s %T@ %m\n' | sort); }
chmod -R a-w "$samples"
before=$(snapshot)

if [ "$all" = 1 ]; then
	build_names=$names
else
	build_names="rdma_receive rdma_send"
fi
work="$stage/work"
mkdir -p "$work/bin"
for name in $build_names; do
	out="$work/$name"
	if ! (cd "$tree/$name" && meson setup "$out" >"$stage/setup-$name.log" 2>&1); then
		cat "$stage/setup-$name.log"
		fail "meson setup in $tree/$name failed"
	fi
	grep -q "Project version: $(cat VERSION)" "$stage/setup-$name.log" ||
		fail "$name: meson did not take the version from ../../../VERSION"
	ninja -C "$out" >"$stage/ninja-$name.log" 2>&1 || { cat "$stage/ninja-$name.log"; fail "ninja -C $out failed ($name)"; }
	! grep -q "warning:" "$stage/ninja-$name.log" || { cat "$stage/ninja-$name.log"; fail "$name: the build warns"; }
	[ -x "$out/doca_$name" ] || fail "$name: no doca_$name in $out"
	# Linked against the staged libraries, not some other install: the
	# calls are in libdoca_common (the linker may drop libdoca_rdma, which
	# only depends on it, as unneeded).
	linked=$(ldd "$out/doca_$name")
	grep -q "libdoca_common.so.* => $libdir/" <<<"$linked" ||
		fail "$name: doca_$name does not use $libdir/libdoca_common.so: $(grep doca <<<"$linked")"
	[ -f "$out/lib${name}_sample.so" ] || fail "$name: no lib${name}_sample.so in $out"
	# The shared object offers the entry function and has no main().
	syms=$(nm -D --defined-only "$out/lib${name}_sample.so")
	grep -qE " T ${name}\$" <<<"$syms" || fail "lib${name}_sample.so does not export ${name}()"
	! grep -qE " T main\$" <<<"$syms" || fail "lib${name}_sample.so has a main()"
	ln -s "$out/doca_$name" "$work/bin/doca_$name"
done

"$work/rdma_receive/doca_rdma_receive" --help >"$stage/help.log" 2>&1 || true
for flag in --device --gid-index --local-descriptor-path --remote-descriptor-path; do
	grep -q -- "$flag" "$stage/help.log" || { cat "$stage/help.log"; fail "doca_rdma_receive --help does not show $flag"; }
done

# --- The pair built that way, played as run_samples.sh plays every pair.
if [ "$all" = 1 ]; then
	run_pairs="send send_imm read write write_imm sync_event multi_conn atomic"
else
	run_pairs=send
fi
if ! bash samples/run_samples.sh --bindir "$work/bin" --pairs "$run_pairs" --modes files --transports shm \
	>"$stage/pair.log" 2>&1; then
	cat "$stage/pair.log"
	fail "pairs built from the installed tree did not run ($run_pairs)"
fi
grep -q "samples: [1-9][0-9]* passed, 0 failed, 0 skipped" "$stage/pair.log" ||
	{ cat "$stage/pair.log"; fail "run_samples.sh did not run the pairs ($run_pairs)"; }

# --- Nothing was written into the installed tree.
after=$(snapshot)
[ "$before" = "$after" ] || fail "building changed the installed tree: $(diff <(echo "$before") <(echo "$after") | head)"

echo "samples tree check: ok ($(echo "$names" | wc -l) samples shipped; built in place: $(echo $build_names); pairs run: $run_pairs)"
