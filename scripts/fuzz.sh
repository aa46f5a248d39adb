#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan into build-fuzz/ and runs
# each for CRANK_FUZZ_SECONDS (default 20) through ctest (label "fuzz"), then writes a summary:
# executions and the size of the corpus each run wrote, to build-fuzz/fuzz-summary.txt and stdout.
# Exits non-zero when a target found a crash, a hang or a leak (inputs under
# build-fuzz/fuzz/artifacts/NAME/; docs/testing.md, "Fuzzing", says what to do with them).
#   CRANK_FUZZ_BUILD_DIR   the build tree (default build-fuzz)
#   CRANK_FUZZ_SECONDS     how long each target runs (default 20)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${CRANK_FUZZ_SECONDS:-20}"
source "$root/scripts/ccache-env.sh"

if ! command -v clang++-14 >/dev/null; then
    echo "fuzz.sh: clang++-14 is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
fi
# Configured every time: CRANK_FUZZ_SECONDS goes into the tests' command lines.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-14 -DCRANK_FUZZ=ON -DCRANK_BUILD_TESTS=OFF \
    -DCRANK_WARNINGS_AS_ERRORS=OFF "-DCRANK_FUZZ_SECONDS=$seconds" >/dev/null
cmake --build "$build" --target crank_fuzzers

# What this run finds is what it writes: start each target's scratch corpus afresh.
rm -rf "$build/fuzz/corpus" "$build/fuzz/logs"
status=0
(cd "$build" && ctest -L fuzz -j "$(nproc)" --output-on-failure) || status=$?

summary="$build/fuzz-summary.txt"
{
    printf '%-18s %12s %8s %12s  %s\n' target executions seconds new_inputs result
    for log in "$build"/fuzz/logs/*.log; do
        [[ -e "$log" ]] || continue
        name="$(basename "$log" .log)"
        # libFuzzer ends a run with "Done 12345 runs in 20 second(s)".
        done_line="$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 || true)"
        runs="$(sed -E 's/^Done ([0-9]+) runs.*/\1/' <<<"$done_line")"
        secs="$(sed -E 's/^Done [0-9]+ runs in ([0-9]+) second.*/\1/' <<<"$done_line")"
        found="$(find "$build/fuzz/corpus/$name" -type f 2>/dev/null | wc -l)"
        result=ok
        if [[ -z "$done_line" ]]; then
            runs=- secs=- result="FOUND SOMETHING: see $build/fuzz/artifacts/$name/"
        fi
        printf '%-18s %12s %8s %12s  %s\n' "$name" "$runs" "$secs" "$found" "$result"
    done
} | tee "$summary"
exit "$status"
