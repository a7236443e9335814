#!/usr/bin/env bash
# Configure (once) and build softdoca into build/ (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
[ -f "$dir/build.ninja" ] || meson setup "$dir" --werror "$@" >/dev/null
ninja -C "$dir" >/dev/null
