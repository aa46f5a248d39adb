#!/usr/bin/env bash
# Sanitizer builds and their tests (docs/testing.md#sanitizers). CRANK_SANITIZERS chooses the
# trees, "tsan" by default (what scripts/test.sh runs), "asan,tsan" for both. Configures and builds:
#   build-asan/  AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer over crankd, the REST
#                and aggregators plugins, the fixtures and the suites listed in asan_tests below: the
#                host's unit tests and the integration suites that run crankd against the REST
#                fixture and the synthetic plugin (including the fault-injection suite). The gRPC,
#                WebSocket, GraphQL and MCP plugins are covered by the fuzz targets (clang, ASan +
#                UBSan: scripts/fuzz.sh) rather than here, which keeps the tree within the CI time.
#                Built with -O1 -g1: a third of -O2 -g's compile time, line numbers in reports.
#   build-tsan/  ThreadSanitizer, only the runtime and store unit tests; runs them.
# CRANK_ASAN_BUILD_DIR / CRANK_TSAN_BUILD_DIR choose other directories. Every sanitized process
# (tests, crankd and the fixtures they start) writes its reports to <build>/sanitizer-reports/, so a
# report in a child process fails the run even when the test that started it passed. Expects the
# dependencies of scripts/install-deps.sh and scripts/e2e-setup.sh (Node.js runs some fixtures).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
asan_build="${CRANK_ASAN_BUILD_DIR:-$root/build-asan}"
tsan_build="${CRANK_TSAN_BUILD_DIR:-$root/build-tsan}"
supp="$root/tests/sanitizers"
source "$root/scripts/ccache-env.sh"

# The unit tests that the ThreadSanitizer tree builds and runs (tests/unit/runtime, tests/unit/store).
tsan_targets=(crank_runtime_items_tests crank_runtime_tests crank_store_tests)
tsan_tests='^(runtime|Store)\.'

# The AddressSanitizer tree's executables, each run on its own (gtest binaries run all their
# cases): host unit tests, then integration suites against the real crankd.
asan_tests=(
    crank_json_tests crank_config_tests crank_http_tests crank_mcp_tests crank_metrics_tests
    crank_store_tests crank_runtime_items_tests crank_runtime_tests crank_plugins_tests
    crank_admin_unit_tests crank_util_tests crank_log_tests
    crank_integration_tests crank_window_tests crank_session_tests crank_job_tests
    crank_job_recovery_tests crank_metrics_integration_tests crank_admin_tests crank_rest_tests
    crank_fault_tests crank_hostile_client_tests crank_federation_tests
    crank_upstream_control_tests crank_config_reload_tests crank_upstream_admin_tests
    crank_agent_admin_tests
)
asan_targets=(crankd crankd-test-tools crank-rest-fixture crank_rest crank_aggregators
    crank_synthetic crank_mcp_plugin "${asan_tests[@]}")

# configure DIR KIND FLAGS: (re)configures DIR as a CRANK_SANITIZE=KIND tree compiled with FLAGS
# unless it already is one.
configure() {
    local dir="$1" kind="$2" flags="$3"
    if [[ -f "$dir/build.ninja" ]] &&
        grep -qx "CRANK_SANITIZE:STRING=$kind" "$dir/CMakeCache.txt" 2>/dev/null &&
        grep -qx "CMAKE_CXX_FLAGS_RELWITHDEBINFO:STRING=$flags" "$dir/CMakeCache.txt"; then
        return
    fi
    cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$flags" \
        -DCRANK_SANITIZE="$kind" -DCRANK_WARNINGS_AS_ERRORS=OFF
}

# sanitizer_env: the options every sanitized process gets; reports go to files under $reports.
sanitizer_env() {
    local kind="$1" reports="$2"
    local log="log_path=$reports/$kind:log_exe_name=1"
    # abort_on_error: a finding ends the process with SIGABRT, which no test mistakes for an exit
    # code it expects. detect_stack_use_after_return stays off: its fake stacks slow every thread
    # pool down and multiply the memory of the integration suites.
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=0:$log"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0:$log"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp:$log"
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:suppressions=$supp/tsan.supp:$log"
}

# check_reports DIR KIND RC: prints every report under DIR/sanitizer-reports and fails when there
# is one (a child process's finding fails the run even when its test passed) or RC is not 0.
check_reports() {
    local dir="$1" kind="$2" rc="$3" found
    found="$(find "$dir/sanitizer-reports" -type f | sort)"
    if [[ -n "$found" ]]; then
        echo "sanitizers: $(wc -l <<<"$found") report(s) in $dir/sanitizer-reports:" >&2
        while IFS= read -r report; do
            echo "===== $report" >&2
            cat "$report" >&2
        done <<<"$found"
        rc=1
    fi
    if ((rc != 0)); then
        echo "sanitizers: $kind tree ($dir) failed" >&2
    fi
    return "$rc"
}

# run_binaries DIR KIND BINARIES...: runs each test executable of DIR/bin, two at a time, each
# bounded by 600 s, its output in DIR/sanitizer-logs/NAME.log (printed when it fails).
run_binaries() {
    local dir="$1" kind="$2" rc=0
    shift 2
    rm -rf "$dir/sanitizer-reports" "$dir/sanitizer-logs"
    mkdir -p "$dir/sanitizer-reports" "$dir/sanitizer-logs"
    (
        sanitizer_env "$kind" "$dir/sanitizer-reports"
        printf '%s\n' "$@" | xargs -P "$(nproc)" -I{} sh -c '
            start=$(date +%s)
            if timeout 600 "$1/bin/$2" >"$1/sanitizer-logs/$2.log" 2>&1; then
                echo "sanitizers: $2 passed ($(( $(date +%s) - start )) s)"
            else
                echo "sanitizers: $2 FAILED ($(( $(date +%s) - start )) s):" >&2
                tail -n 60 "$1/sanitizer-logs/$2.log" >&2
                exit 1
            fi' sh "$dir" {}
    ) || rc=1
    check_reports "$dir" "$kind" "$rc"
}

# run_ctest DIR KIND CTEST_ARGS...: runs ctest in DIR with every report going to
# DIR/sanitizer-reports/KIND.<executable>.<pid>; fails when a test failed or any report was written.
run_ctest() {
    local dir="$1" kind="$2" rc=0
    shift 2
    rm -rf "$dir/sanitizer-reports"
    mkdir -p "$dir/sanitizer-reports"
    (
        sanitizer_env "$kind" "$dir/sanitizer-reports"
        ctest --test-dir "$dir" --timeout 600 -j "$(nproc)" --output-on-failure "$@"
    ) || rc=$?
    check_reports "$dir" "$kind" "$rc"
}

kinds=",${CRANK_SANITIZERS:-tsan},"
status=0
if [[ "$kinds" == *,asan,* ]]; then
    configure "$asan_build" address "-O1 -g1"
    cmake --build "$asan_build" --target "${asan_targets[@]}"
    run_binaries "$asan_build" asan "${asan_tests[@]}" || status=1
fi
if [[ "$kinds" == *,tsan,* ]]; then
    configure "$tsan_build" thread "-O2 -g -DNDEBUG"
    cmake --build "$tsan_build" --target "${tsan_targets[@]}"
    run_ctest "$tsan_build" tsan -R "$tsan_tests" || status=1
fi
exit "$status"
