#!/usr/bin/env bash
# The shared libraries export the DOCA API and the softdoca_ internal
# interface, nothing else.
set -uo pipefail
fail=0
for lib in "$@"; do
	bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v -E '^(doca_|softdoca_)' | grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' || true)
	if [ -n "$bad" ]; then
		echo "FAIL: $(basename "$lib") exports symbols outside the API:"; echo "$bad"; fail=1
	fi
	n=$(nm -D --defined-only "$lib" | grep -c ' T doca_' || true)
	echo "$(basename "$lib"): $n doca_ functions exported"
done
# softdoca's own public API (include/softdoca_*.h) is exported by its library.
for lib in "$@"; do
	case $(basename "$lib") in
	libdoca_rdma.so*)
		for sym in softdoca_fault_set softdoca_fault_clear softdoca_fault_get_count; do
			nm -D --defined-only "$lib" | grep -q " T $sym\$" ||
				{ echo "FAIL: $(basename "$lib") does not export $sym (include/softdoca_fault.h)"; fail=1; }
		done
		;;
	esac
done
exit $fail
