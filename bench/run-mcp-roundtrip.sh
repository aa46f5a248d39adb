#!/usr/bin/env bash
# tools/call round trips on a no-op tool through crankd's MCP endpoint, 32 connections, against
# the floor of the same server: GET /healthz with the same load. Figures: requests/s, p50, p99,
# and the ratio tools/call : /healthz measured in the same run (the machine is shared and noisy).
#   bench/run-mcp-roundtrip.sh [SECONDS] [CONNECTIONS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=${1:-10}
connections=${2:-32}
command -v wrk >/dev/null || { echo "bench: wrk is missing (apt-get install wrk)" >&2; exit 1; }

if [[ -z "${CRANK_MCP_URL:-}" ]]; then  # start crankd, then come back here with its URL
    "$root/scripts/build.sh" --target crankd-test-tools >/dev/null
    export CRANK_EXTRA_CONFIG="\"server\": {\"threads\": $((connections * 2)), \"queue\": 256}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_concurrent_calls\": $((connections * 2))}}]}"
    exec "$root/tests/e2e/with-crankd.sh" "$root/build/bin/crankd-test-tools" -- "$0" "$@"
fi
url="${CRANK_MCP_URL%/mcp}"
# shellcheck source=bench/lib/mcp-session.sh
source "$root/bench/lib/mcp-session.sh"
session="$(open_mcp_session "$url/mcp")"
[[ -n "$session" ]] || { echo "bench: initialize failed" >&2; exit 1; }

run() {  # run NAME wrk-args...; prints "NAME rps p50 p99"
    local name=$1
    shift
    local out
    out="$(SESSION="$session" wrk -t2 -c"$connections" -d"${seconds}s" --latency "$@")"
    local rps p50 p99
    rps="$(awk '/Requests\/sec/ {print $2}' <<<"$out")"
    p50="$(awk '$1 == "50%" {print $2}' <<<"$out")"
    p99="$(awk '$1 == "99%" {print $2}' <<<"$out")"
    if grep -q "Non-2xx" <<<"$out"; then
        echo "bench: $name had non-2xx answers:" >&2
        grep "Non-2xx" <<<"$out" >&2
    fi
    echo "$name $rps $p50 $p99"
}
SESSION="$session" wrk -t2 -c"$connections" -d2s -s "$root/bench/tools-call.lua" "$url/mcp" >/dev/null
base="$(run healthz "$url/healthz")"
call="$(run tools_call -s "$root/bench/tools-call.lua" "$url/mcp")"
printf '%-12s %12s %10s %10s\n' "what" "requests/s" "p50" "p99"
printf '%-12s %12s %10s %10s\n' $base
printf '%-12s %12s %10s %10s\n' $call
awk -v b="$(cut -d' ' -f2 <<<"$base")" -v c="$(cut -d' ' -f2 <<<"$call")" \
    'BEGIN { printf "tools/call throughput = %.2f x GET /healthz (same server, same run)\n", c / b }'
