#!/usr/bin/env bash
# The main job: install dependencies, build, and show the soft devices.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build
./build/tools/doca_caps --list-devs
