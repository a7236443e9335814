#!/usr/bin/env bash
# Install softdoca from build dir $1 into a staging prefix, then build and
# run an outside program with `pkg-config --cflags --libs doca` only; then
# check the installed samples tree (check_samples_tree.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
builddir=${1:-build}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

meson install -C "$builddir" --destdir "$stage" >/dev/null
prefix=$(meson introspect "$builddir" --buildoptions | python3 -c \
	'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
root="$stage$prefix"
pcdir=$(dirname "$(find "$root" -name doca.pc -print -quit)")
export PKG_CONFIG_PATH="$pcdir"
# The .pc files name the final prefix; point them at the staging copy.
export PKG_CONFIG_SYSROOT_DIR="$stage"

version=$(pkg-config --modversion doca)
[ "$version" = "3.3.0" ] || { echo "pkg-config --modversion doca: $version, want 3.3.0"; exit 1; }
# With the ones NVIDIA's storage application asks for (comch, compress,
# erasure coding).
for m in doca-common doca-dma doca-argp doca-rdma doca-comch doca-compress doca-erasure-coding doca-dpa; do
	pkg-config --exists "$m" || { echo "pkg-config module $m missing"; exit 1; }
done

cc -std=c11 -Wall -Wextra -Werror -DDOCA_ALLOW_EXPERIMENTAL_API -o "$stage/consumer" tests/install/consumer.c \
	$(pkg-config --cflags --libs doca)
libdir=$(dirname "$(find "$root" -name 'libdoca_common.so' -print -quit)")
LD_LIBRARY_PATH="$libdir" "$stage/consumer"
# The installed doca_caps shows, per GID, index, GID, type and interface.
caps=$(find "$root" -name doca_caps -type f -print -quit)
out=$(LD_LIBRARY_PATH="$libdir" "$caps" -d soft_lo)
grep -qE '^ +0 +::ffff:127\.0\.0\.1 +RoCE v2 +lo +127\.0\.0\.1$' <<<"$out" ||
	{ echo "doca_caps -d soft_lo: no 'index gid type interface address' row for GID 0: $out"; exit 1; }
# ... and NVIDIA's layout and flags, as the build tree's does.
LD_LIBRARY_PATH="$libdir" bash tests/check_doca_caps.sh "$caps"
echo "install check: ok (doca $version)"

# The shipped samples tree: every sample builds in place against the
# installed modules, and the pairs built that way run.
rc=0
bash tests/install/check_samples_tree.sh "$builddir" --all || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit "$rc"
