#!/bin/sh
# Every doca_* symbol the libraries export has a case in test_null_args:
# new API cannot be added without being called with NULL arguments.
# usage: null_args_coverage.sh TEST_BINARY LIBRARY...
set -eu
test_bin=$1
shift
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm not installed"; exit 77; }
exported=$(mktemp)
covered=$(mktemp)
trap 'rm -f "$exported" "$covered"' EXIT
# Comch's calls (in libdoca_common with the rest) have their argument
# checks in test_comch and test_comch_fastpath instead.
nm -D --defined-only "$@" | awk '$2 == "T" && $3 ~ /^doca_/ && $3 !~ /^doca_comch_/ { print $3 }' | sort -u >"$exported"
"$test_bin" --list | sort -u >"$covered"
missing=$(comm -23 "$exported" "$covered")
if [ -n "$missing" ]; then
	echo "exported but not covered by test_null_args:"
	echo "$missing"
	exit 1
fi
echo "$(wc -l <"$exported") exported functions, all covered"
