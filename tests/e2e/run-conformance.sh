#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# package-lock.json) in server mode against URL, one scenario at a time, each bounded in time.
#
#   tests/e2e/run-conformance.sh URL SCENARIO...
#   tests/e2e/run-conformance.sh http://127.0.0.1:8080/mcp server-initialize ping tools-list
#
# Prints one verdict line per scenario on stdout (PASS/FAIL/TIMEOUT/ERROR, checks passed, warnings),
# the failed checks of a failing scenario indented below it, and a closing "N passed, M failed"
# line. Exits 0 only when every scenario passed. A scenario passes when the suite reports no FAILURE
# check (WARNING and INFO checks do not fail it, as in the suite itself).
#
# Environment:
#   CONFORMANCE_TIMEOUT       seconds per scenario (default 60); the suite's own --timeout is set a
#                             little below it, and the process is killed at the limit regardless
#   CONFORMANCE_SPEC_VERSION  passed as --spec-version (default: the suite's own, 2025-11-25 for
#                             the stateful scenarios)
#   CONFORMANCE_FORCE=1       passes --force: runs scenarios the suite would skip at that spec
#                             version (the pending 2025-11-25 ones at 2025-06-18)
#   CONFORMANCE_RESULTS_DIR   where each scenario's output and checks.json go (default: a temporary
#                             directory, removed when everything passed, kept and named otherwise)
#   CONFORMANCE_VERBOSE=1     also print each scenario's full output
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

usage() {
    cat >&2 <<EOF
usage: $0 URL SCENARIO...
  e.g. $0 http://127.0.0.1:8080/mcp server-initialize ping logging-set-level tools-list \\
         server-sse-multiple-streams dns-rebinding-protection server-session-lifecycle
  list the scenarios: $root/.tools/node/bin/node $here/node_modules/@modelcontextprotocol/conformance/dist/index.js list --server
EOF
    exit 2
}
(($# >= 2)) || usage
url="$1"
shift
[[ "$url" =~ ^https?:// ]] || usage

"$root/scripts/e2e-setup.sh"
export PATH="$root/.tools/node/bin:$PATH"
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -f "$cli" ]] || {
    echo "run-conformance: $cli is missing after e2e-setup" >&2
    exit 1
}

limit="${CONFORMANCE_TIMEOUT:-60}"
if ! [[ "$limit" =~ ^[0-9]+$ ]] || ((limit < 5)); then
    echo "run-conformance: CONFORMANCE_TIMEOUT must be an integer >= 5 (seconds)" >&2
    exit 2
fi
inner_ms=$(((limit - 3) * 1000)) # let the suite time out first and report which scenario hung
extra=()
[[ -n "${CONFORMANCE_SPEC_VERSION:-}" ]] && extra+=(--spec-version "$CONFORMANCE_SPEC_VERSION")
[[ "${CONFORMANCE_FORCE:-0}" == 1 ]] && extra+=(--force)

if [[ -n "${CONFORMANCE_RESULTS_DIR:-}" ]]; then
    results="$CONFORMANCE_RESULTS_DIR"
    mkdir -p "$results"
    keep=1
else
    results="$(mktemp -d "${TMPDIR:-/tmp}/crank-conformance.XXXXXX")"
    keep=0
fi

passed=0
failed=0
for scenario in "$@"; do
    out="$results/$scenario"
    rm -rf "$out"
    mkdir -p "$out"
    log="$out/output.txt"
    start=$SECONDS
    rc=0
    # timeout runs the suite in its own process group and kills the whole group at the limit.
    timeout --kill-after=5 "$limit" \
        node "$cli" server --url "$url" --scenario "$scenario" --timeout "$inner_ms" -o "$out" \
        "${extra[@]}" >"$log" 2>&1 || rc=$?
    secs=$((SECONDS - start))
    [[ "${CONFORMANCE_VERBOSE:-0}" == 1 ]] && sed 's/^/    | /' "$log"

    summary="$(grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' "$log" | tail -n1 || true)"
    if ((rc == 124 || rc == 137)); then
        verdict="TIMEOUT"
        detail="killed after ${limit}s"
    elif grep -q "^SKIPPED: scenario" "$log"; then
        verdict="ERROR"
        detail="$(grep -m1 '^SKIPPED: scenario' "$log")"
    elif [[ -z "$summary" ]]; then
        verdict="ERROR"
        why="$(grep -m1 -E 'Unknown scenario' "$log" || grep -m1 -iE 'error' "$log" || tail -n1 "$log")"
        detail="no result from the suite (exit $rc): $(sed -E 's/^[[:space:]]+//' <<<"$why")"
    else
        nfail="$(sed -E 's/^Passed: [0-9]+\/[0-9]+, ([0-9]+) failed.*/\1/' <<<"$summary")"
        if ((rc == 0 && nfail == 0)); then
            verdict="PASS"
        else
            verdict="FAIL"
        fi
        detail="$(sed -E 's/^Passed: ([0-9]+\/[0-9]+), ([0-9]+) failed, ([0-9]+) warnings/\1 checks passed, \2 failed, \3 warnings/' <<<"$summary")"
        grep -q '^Scenario timed out' "$log" && detail+=", scenario timed out"
    fi

    printf '%-7s %-34s %s (%ss)\n' "$verdict" "$scenario" "$detail" "$secs"
    if [[ "$verdict" == PASS ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        # The suite's "=== Failed Checks ===" section: check name and error, indented.
        awk '/^=== Failed Checks ===/{on=1; next} on && /^  - |^    Error: /{print "        " $0}' "$log" |
            head -n 40
        echo "        (full output: $log)"
    fi
done

if ((failed == 0 && keep == 0)); then
    rm -rf "$results"
elif ((failed > 0)); then
    echo "results kept in $results"
fi
echo "conformance: $passed passed, $failed failed"
((failed == 0))
