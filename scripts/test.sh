#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test (docs/testing.md): formatting
# of the project's sources; all ctest suites of build/ (unit, integration, end to end, clang-tidy)
# side by side on every core, the fuzz targets' corpus and regression inputs replayed among them;
# the sanitizer trees (scripts/sanitizers.sh: AddressSanitizer with LeakSanitizer and UBSan over
# crankd, its plugins and the suites that run it; ThreadSanitizer over the runtime and store
# tests); then every libFuzzer target for CRANK_FUZZ_SECONDS (20) each (scripts/fuzz.sh).
# Arguments go to the first ctest run (e.g. -R integration).
# Every part runs even when an earlier one failed; the exit status is non-zero if any failed.
#
# The disk (docs/testing.md, "Disk"): the free space is printed when the run starts and ends, and
# a run refuses to start, naming what to remove, when less is free than a full run needs
# (scripts/footprint.sh). Every test's temporary files live under one per-run root
# (TMPDIR=/tmp/crank-run.XXXXXX), removed when the run ends however it ends; the run fails when
# /tmp or /dev/shm grew anyway, naming what grew.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
source "$root/scripts/ccache-env.sh"
source "$root/scripts/footprint.sh"

footprint_free "$root"
run_tmp="$(mktemp -d /tmp/crank-run.XXXXXX)"
tmp_before="$(footprint_tmp_snapshot)"
finish() {
    rm -rf "$run_tmp"
    echo "test.sh: $(df -Pm "$root" | awk 'NR == 2 { print $4 }') MB free at the end"
}
trap finish EXIT
export TMPDIR="$run_tmp"

"$root/scripts/install-deps.sh"
"$root/scripts/e2e-setup.sh"
"$root/scripts/check-format.sh"
"$root/scripts/build.sh"

failed=()
(cd "$build" && ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@") || failed+=(tests)
CRANK_SANITIZERS="${CRANK_SANITIZERS:-asan,tsan}" "$root/scripts/sanitizers.sh" || failed+=(sanitizers)
"$root/scripts/fuzz.sh" || failed+=(fuzz)

# Whatever the tests left in the run's root goes with it; what they left elsewhere is a defect.
rm -rf "$run_tmp"
footprint_tmp_check "$tmp_before" || failed+=(temporary-files)
if ((${#failed[@]} > 0)); then
    echo "test.sh: failed: ${failed[*]}" >&2
    exit 1
fi
echo "test.sh: every part passed"
