#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test: formatting of the project's
# sources, then all ctest suites of build/ (unit, integration, end to end, clang-tidy) side by side
# on every core (the fuzz targets' corpus and regression inputs replayed among them), then
# ThreadSanitizer over the runtime and store tests (scripts/sanitizers.sh). Not yet part of this
# run: the AddressSanitizer tree (CRANK_SANITIZERS=asan,tsan scripts/sanitizers.sh) and the timed
# fuzzer runs (scripts/fuzz.sh); docs/testing.md. Arguments go to the first ctest run (e.g.
# -R integration).
# Every part runs even when an earlier one failed; the exit status is non-zero if any failed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/e2e-setup.sh"
"$root/scripts/check-format.sh"
"$root/scripts/build.sh"

failed=()
(cd "$build" && ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@") || failed+=(tests)
"$root/scripts/sanitizers.sh" || failed+=(sanitizers)
if ((${#failed[@]} > 0)); then
    echo "test.sh: failed: ${failed[*]}" >&2
    exit 1
fi
echo "test.sh: every part passed"
