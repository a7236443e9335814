#!/usr/bin/env bash
# The whole test suite: install dependencies, build, run every test phase,
# and end with one line "N passed, N failed, N skipped". Exits non-zero on
# any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1

passed=0 failed=0 skipped=0

# Add the counts of one `meson test` run (its summary lines) to the totals.
count_meson() {
	local log=$1 ok fail skip exp_fail unexp_pass timeout
	ok=$(awk '/^Ok:/ {print $2}' "$log")
	exp_fail=$(awk '/^Expected Fail:/ {print $3}' "$log")
	fail=$(awk '/^Fail:/ {print $2}' "$log")
	unexp_pass=$(awk '/^Unexpected Pass:/ {print $3}' "$log")
	skip=$(awk '/^Skipped:/ {print $2}' "$log")
	timeout=$(awk '/^Timeout:/ {print $2}' "$log")
	passed=$((passed + ${ok:-0} + ${exp_fail:-0}))
	failed=$((failed + ${fail:-0} + ${unexp_pass:-0} + ${timeout:-0}))
	skipped=$((skipped + ${skip:-0}))
}

# Run one phase: build in $dir with extra meson options, then its tests.
phase() {
	local name=$1 dir=$2 t0=$SECONDS
	shift 2
	echo "=== $name"
	if ! bash scripts/build.sh "$dir" "$@"; then
		echo "--- $name: build failed"
		failed=$((failed + 1))
		return
	fi
	meson test -C "$dir" --print-errorlogs --num-processes 2 >"$dir/test-summary.log" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$dir/test-summary.log" || true
	grep -A200 '^Summary of Failures' "$dir/test-summary.log" | head -60 || true
	count_meson "$dir/test-summary.log"
	echo "--- $name: $((SECONDS - t0)) s"
}

phase "build with gcc, unit and integration tests" build
phase "AddressSanitizer + UndefinedBehaviorSanitizer" build-asan \
	-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

# ThreadSanitizer on the programs where the engine's service thread and the
# application's thread meet: the two-process suites, and the unit tests
# (the PE's completion queue takes completions from any thread). UCX's memory hooks
# break TSan (UCX_MEM_EVENTS=n); a report fails its process (exit 66), and
# every report is also kept in $dir/tsan-reports, in case a process's exit
# status goes unchecked. tests/tsan.supp says what may be suppressed.
tsan_phase() {
	local dir=build-tsan suites=() s list reports before t0=$SECONDS
	echo "=== ThreadSanitizer (two-process suites)"
	if ! bash scripts/build.sh "$dir" -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debugoptimized; then
		echo "--- ThreadSanitizer: build failed"
		failed=$((failed + 1))
		return
	fi
	list=$(meson test -C "$dir" --list 2>/dev/null)
	for s in unit rdma cm sync_event samples conformance; do
		grep -q "^softdoca:$s / " <<<"$list" && suites+=(--suite "$s")
	done
	rm -rf "$dir/tsan-reports"
	mkdir -p "$dir/tsan-reports"
	# SOFTDOCA_TEST_BIGREAD: the netns "slow" case's 1 GiB read takes most
	# of its watchdog's 45 s under TSan on 2 cores; 256 MiB shows the same.
	SOFTDOCA_TEST_BIGREAD=256M UCX_MEM_EVENTS=n \
	TSAN_OPTIONS="halt_on_error=1:exitcode=66:suppressions=$PWD/tests/tsan.supp:log_path=$PWD/$dir/tsan-reports/report" \
		meson test -C "$dir" --print-errorlogs --num-processes 2 "${suites[@]}" >"$dir/test-summary.log" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$dir/test-summary.log" || true
	grep -A200 '^Summary of Failures' "$dir/test-summary.log" | head -30 || true
	before=$failed
	count_meson "$dir/test-summary.log"
	echo "--- ThreadSanitizer: $((SECONDS - t0)) s"
	reports=$(find "$dir/tsan-reports" -type f | wc -l)
	[ "$reports" -eq 0 ] && return
	echo "--- ThreadSanitizer: $reports process(es) reported (full reports in $dir/tsan-reports):"
	cat "$dir"/tsan-reports/* | grep '^SUMMARY: ThreadSanitizer' | sort | uniq -c | sort -rn | head -20
	# A report from a process whose test still passed counts as a failure.
	[ "$failed" -eq "$before" ] && failed=$((failed + 1))
}

tsan_phase

# One script, one counted result: exit 0 passed, 77 skipped, else failed.
counted() {
	local t0=$SECONDS rc
	echo "=== $1"
	shift
	"$@"
	rc=$?
	echo "--- $((SECONDS - t0)) s"
	case $rc in
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
}

counted "benchmark smoke run: bench/run_bench.sh --quick prints every row (figures not judged)" \
	bash tests/bench/smoke.sh build
counted "install and build an outside program with pkg-config" bash tests/install/check_install.sh build
counted "host and BlueField (DPU) personalities of the install: DOCA_ARCH_DPU, representors" \
	bash tests/install/check_personality.sh build
counted "Go and Python shims over the shipped samples, against the C samples (examples/)" \
	bash tests/examples/run_examples.sh build
# The Debian package, then the installs into the system itself: run once,
# serially (nothing else runs meanwhile), each removing what it installed.
counted "Debian package: build it, check its files and Depends" bash tests/install/check_package.sh files
counted "Debian package installed for real: DOCA's first-run path, then dpkg -r" \
	bash tests/install/check_package.sh install
counted "plain meson install as root into /usr/local: programs run without ldconfig by hand" \
	bash tests/install/check_package.sh plain
counted "a fresh Debian 12 root (debootstrap): apt-get install ./softdoca_*.deb, DOCA's first run, dpkg -r" \
	bash tests/install/fresh_root.sh
counted "libFuzzer on the parsers of untrusted bytes, and on a live context (descriptors, RDMA CM frames)" \
	bash tests/fuzz/run_fuzz.sh 60

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
