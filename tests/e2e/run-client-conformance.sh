#!/usr/bin/env bash
# The conformance suite's client scenarios against crank's MCP client (the mcp plugin's
# UpstreamSession over its HTTP transport), through crank-mcp-probe (plugins/mcp/probe.cpp).
#
#   tests/e2e/run-client-conformance.sh PROBE [SCENARIO...]
#
# Default scenarios: initialize, tools_call (also at 2025-06-18), sse-retry and
# elicitation-sep1034-client-defaults (2025-11-25 only); and at 2026-07-28 tools_call,
# request-metadata, http-standard-headers, http-custom-headers, http-invalid-tool-headers,
# json-schema-ref-no-deref and sep-2322-client-request-state. A SCENARIO argument runs at
# 2025-11-25, SCENARIO@VERSION at that version. In client mode the suite fails a run on any
# FAILURE or WARNING, a timeout or a non-zero exit of the client.
#
# The suite's mock servers listen on every interface (`listen(0)` without a host) and hand out
# http://localhost:PORT: each run is put in a network namespace of its own holding only `lo`
# (`unshare -rn`), so nothing is ever reachable from outside the machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
probe=${1:?usage: $0 PROBE [SCENARIO...]}
shift
"$root/scripts/e2e-setup.sh"
node="$root/.tools/node/bin/node"
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
results="$(mktemp -d "${TMPDIR:-/tmp}/crank-client-conformance.XXXXXX")"
trap 'rm -rf "$results"' EXIT

runs=()
if (($# > 0)); then
    for s in "$@"; do [[ "$s" == *@* ]] && runs+=("$s") || runs+=("$s@2025-11-25"); done
else
    runs=(initialize@2025-11-25 initialize@2025-06-18 tools_call@2025-11-25 tools_call@2025-06-18
        sse-retry@2025-11-25 elicitation-sep1034-client-defaults@2025-11-25
        tools_call@2026-07-28 request-metadata@2026-07-28 http-standard-headers@2026-07-28
        http-custom-headers@2026-07-28 http-invalid-tool-headers@2026-07-28
        json-schema-ref-no-deref@2026-07-28 sep-2322-client-request-state@2026-07-28)
fi
failed=0
for run in "${runs[@]}"; do
    scenario=${run%@*}
    version=${run#*@}
    log="$results/$scenario-$version.txt"
    rc=0
    timeout --kill-after=5 60 unshare -rn sh -c 'ip link set lo up && exec "$@"' sh \
        "$node" "$cli" client --command "$probe" --scenario "$scenario" --spec-version "$version" \
        --timeout 30000 >"$log" 2>&1 || rc=$?
    if ((rc == 0)) && grep -q "OVERALL: PASSED" "$log"; then
        printf 'PASS    %-40s %s\n' "$scenario" "$version"
    else
        failed=$((failed + 1))
        printf 'FAIL    %-40s %s (exit %s)\n' "$scenario" "$version" "$rc"
        grep -E "FAILURE|WARNING|Error:|Warning:" "$log" | sed 's/^/        /' | head -n 20 || true
        sed 's/^/        | /' "$log" | tail -n 30
    fi
done
echo "client conformance: $((${#runs[@]} - failed)) passed, $failed failed"
((failed == 0))
