#!/usr/bin/env bash
# The two build personalities: one program (personality.c) built with
# `pkg-config doca-common` is the host side (no DOCA_ARCH_DPU), built with
# the same module from <libdir>/pkgconfig-dpu it is the BlueField side
# (DOCA_ARCH_DPU); and the DPU side's representors are the host side's
# devices. Usage: check_personality.sh BUILDDIR (installs into a staging
# directory), or check_personality.sh --tree SRCDIR BUILDDIR (the source
# tree's headers and the build tree's library, no install).
# PERSONALITY_CFLAGS: added when building the programs (a sanitizer
# build's -fsanitize=...).
set -euo pipefail
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "${1:-}" = "--tree" ]; then
	src=$2
	build=$3
	host_cflags="-I$src/include"
	dpu_cflags="-I$src/include/doca-dpu -I$src/include"
	libs="-L$build/src -ldoca_common"
	libdir="$build/src"
else
	build=${1:-build}
	src="$(dirname "$0")/../.."
	meson install -C "$build" --destdir "$work/stage" >/dev/null
	pcdir=$(dirname "$(find "$work/stage" -path '*/pkgconfig/doca-common.pc' -print -quit)")
	[ -f "$pcdir-dpu/doca-common.pc" ] || fail "no pkgconfig-dpu/doca-common.pc next to $pcdir"
	for m in doca doca-common doca-dma doca-argp doca-rdma doca-comch doca-compress doca-erasure-coding doca-dpa; do
		[ -f "$pcdir-dpu/$m.pc" ] || fail "no DPU personality of module $m"
	done
	export PKG_CONFIG_SYSROOT_DIR="$work/stage"
	host_cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags doca-common)
	dpu_cflags=$(PKG_CONFIG_PATH=$pcdir-dpu pkg-config --cflags doca-common)
	[ "$host_cflags" != "$dpu_cflags" ] || fail "both personalities have cflags '$host_cflags'"
	# A module that requires doca-common takes the personality along.
	rdma_dpu=$(PKG_CONFIG_PATH=$pcdir-dpu pkg-config --cflags doca-rdma)
	grep -q 'doca-dpu' <<<"$rdma_dpu" || fail "DPU doca-rdma cflags lack doca-dpu: $rdma_dpu"
	libs=$(PKG_CONFIG_PATH=$pcdir pkg-config --libs doca-common)
	libdir=$(dirname "$(find "$work/stage" -name 'libdoca_common.so' -print -quit)")
fi

# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror ${PERSONALITY_CFLAGS:-} $host_cflags -o "$work/host" "$src/tests/install/personality.c" $libs
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror ${PERSONALITY_CFLAGS:-} $dpu_cflags -o "$work/dpu" "$src/tests/install/personality.c" $libs
# The define itself, as a program's #ifdef sees it.
printf '#include <doca_dev.h>\n#if !defined(DOCA_ARCH_DPU) || defined(DOCA_ARCH_HOST)\n#error host\n#endif\n' >"$work/d.c"
# shellcheck disable=SC2086
cc -std=c11 $dpu_cflags -fsyntax-only "$work/d.c" || fail "the DPU personality must define DOCA_ARCH_DPU and not DOCA_ARCH_HOST"
printf '#include <doca_dev.h>\n#if defined(DOCA_ARCH_DPU) || !defined(DOCA_ARCH_HOST)\n#error dpu\n#endif\n' >"$work/h.c"
# shellcheck disable=SC2086
cc -std=c11 $host_cflags -fsyntax-only "$work/h.c" || fail "the host personality must define DOCA_ARCH_HOST and not DOCA_ARCH_DPU"

export LD_LIBRARY_PATH="$libdir"
export SOFTDOCA_PCIE_DIR="$work/pcie"
"$work/host" >"$work/host.out" || fail "host side exited $?"
head -1 "$work/host.out" | grep -qx 'role host' || fail "host build: $(head -1 "$work/host.out")"
first=$(awk '$1=="dev"{print $2; exit}' "$work/host.out")
[ -n "$first" ] || fail "host side sees no device"
last=$(awk '$1=="dev"{p=$2} END{print p}' "$work/host.out")
"$work/dpu" "$first" "$last" >"$work/dpu.out" || fail "DPU side exited $?: $(cat "$work/dpu.out")"
head -1 "$work/dpu.out" | grep -qx 'role dpu' || fail "DPU build: $(head -1 "$work/dpu.out")"
awk '$1=="dev"{print $2}' "$work/host.out" | sort >"$work/host.pci"
awk '$1=="rep"{print $2}' "$work/dpu.out" | sort >"$work/rep.pci"
cmp -s "$work/host.pci" "$work/rep.pci" ||
	fail "representors $(tr '\n' ' ' <"$work/rep.pci")are not the host devices $(tr '\n' ' ' <"$work/host.pci")"
grep -qx "opened rep $last" "$work/dpu.out" || fail "DPU side did not open the representor of $last"
echo "personalities: ok (host sees $(wc -l <"$work/host.pci") device(s), DPU as many representors)"
