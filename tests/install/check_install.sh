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
LD_LIBRARY_PATH="$libdir" bash tests/check_doca_caps.sh "$caps" "$version"

# The version check NVIDIA's guidance (doca-skills doca-version) has users
# run: pkg-config --modversion doca, <prefix>/applications/VERSION,
# doca_caps --version and the doca_version.h macros give one version.
fourway() {
	local app caps_v macros h
	app=$(cat "$root/applications/VERSION" 2>/dev/null) ||
		{ echo "four-way: no $prefix/applications/VERSION"; return 1; }
	caps_v=$(LD_LIBRARY_PATH="$libdir" "$caps" --version | head -1)
	h="$(pkg-config --variable=includedir doca)/doca_version.h"
	[ -f "$h" ] || h="$stage$h" # a pkg-config that does not add the sysroot to variables
	[ -f "$h" ] || { echo "four-way: no doca_version.h at $h"; return 1; }
	macros=$(awk '$1 == "#define" && $2 ~ /^DOCA_VERSION_(MAJOR|MINOR|PATCH)$/ {v[$2] = $3}
		END {print v["DOCA_VERSION_MAJOR"] "." v["DOCA_VERSION_MINOR"] "." v["DOCA_VERSION_PATCH"]}' "$h")
	if [ "$app" != "$version" ] || [ "$caps_v" != "$version" ] || [ "$macros" != "$version" ]; then
		echo "four-way: pkg-config '$version', applications/VERSION '$app', doca_caps --version '$caps_v'," \
			"doca_version.h macros '$macros': they must agree"
		return 1
	fi
}
fourway || exit 1
echo "install check: ok (doca $version, the same in pkg-config, applications/VERSION, doca_caps and doca_version.h)"

# The shipped samples tree: every sample builds in place against the
# installed modules, and the pairs built that way run.
rc=0
bash tests/install/check_samples_tree.sh "$builddir" --all || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || exit "$rc"
