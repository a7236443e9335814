#!/usr/bin/env bash
# The shared libraries export the DOCA API and softdoca's own documented
# calls, nothing else: every exported symbol must be declared in an
# installed header (include/*.h), so nothing internal leaks into programs'
# reach, and softdoca's own public API (softdoca_fault.h, softdoca_trace.h)
# is there.
# usage: check_symbols.sh INCLUDE_DIR LIBRARY...
set -uo pipefail
inc=$1
shift
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# What the installed headers declare: every name followed by '('.
cat "$inc"/*.h | grep -ohE '\b(doca|softdoca)_[a-z0-9_]+[[:space:]]*\(' | tr -d '( \t' | sort -u >"$tmp/declared"
[ "$(wc -l <"$tmp/declared")" -gt 300 ] || { echo "FAIL: found only $(wc -l <"$tmp/declared") declarations in $inc"; exit 1; }

all_exported() {
	nm -D --defined-only "$1" | awk '$2 ~ /[TDBRVWi]/ {print $3}' |
		grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' | sed 's/@.*//' | sort -u
}

for lib in "$@"; do
	all_exported "$lib" >"$tmp/exported"
	outside=$(grep -v -E '^(doca_|softdoca_)' "$tmp/exported")
	if [ -n "$outside" ]; then
		echo "FAIL: $(basename "$lib") exports symbols outside the API:"; echo "$outside"; fail=1
	fi
	undeclared=$(comm -23 "$tmp/exported" "$tmp/declared")
	if [ -n "$undeclared" ]; then
		echo "FAIL: $(basename "$lib") exports $(echo "$undeclared" | wc -l) symbol(s) no installed header declares:"
		echo "$undeclared"
		fail=1
	fi
	cat "$tmp/exported" >>"$tmp/every"
	[ -n "$undeclared" ] || echo "$(basename "$lib"): $(wc -l <"$tmp/exported") symbols exported, all declared in $inc"
done
# softdoca's own public API (include/softdoca_*.h) is exported.
touch "$tmp/every"
for sym in softdoca_fault_set softdoca_fault_clear softdoca_fault_get_count softdoca_trace_flush; do
	grep -qx "$sym" "$tmp/every" || { echo "FAIL: no library exports $sym (include/softdoca_*.h)"; fail=1; }
done
exit $fail
