#!/usr/bin/env bash
# Install what softdoca needs to build and test, from Debian/Ubuntu packages.
# Run as root (or with sudo available). Safe to run again: only installs
# what is missing.
set -euo pipefail

packages=(
	build-essential g++ meson ninja-build pkg-config
	libcmocka-dev libucx-dev ucx-utils
	clang iproute2 procps
)

# Wanted but not needed: clang's libFuzzer runtime (the fuzz phase skips
# without it; its package name differs across releases), Go and Python
# for the examples/ shims (tests/examples/run_examples.sh skips without
# them), debootstrap for the fresh-root package test (it skips
# without it), and gnuplot-nox for softdoca_perftest_sweep.sh's plot (its
# test skips without it).
optional=(libclang-rt-dev golang-go python3 debootstrap gnuplot-nox)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p")
done
missing_optional=()
for p in "${optional[@]}"; do
	installed "$p" || missing_optional+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0

as_root=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
	as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for p in "${missing_optional[@]}"; do
	"${as_root[@]}" apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
		echo "setup: optional package $p not available here"
done
