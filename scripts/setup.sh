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

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
	as_root=(sudo)
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
