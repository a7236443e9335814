#!/usr/bin/env bash
# Make the BlueField (DPU) personality of one pkg-config file: the host
# file IN with <includedir>/doca-dpu put before <includedir>, so that
# doca_build_config.h defining DOCA_ARCH_DPU is the one found. Written to OUT.
set -euo pipefail
in=$1
out=$2
grep -q '^Cflags: -I${includedir}' "$in" || { echo "dpu_pc.sh: no 'Cflags: -I\${includedir}' in $in" >&2; exit 1; }
sed -e 's|^Cflags: -I${includedir}|Cflags: -I${includedir}/doca-dpu -I${includedir}|' \
	-e 's|^Description: \(.*\)$|Description: \1 [BlueField (DPU) side]|' "$in" >"$out.tmp"
mv "$out.tmp" "$out"
