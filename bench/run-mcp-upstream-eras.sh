#!/usr/bin/env bash
# tools/call of an echo tool on an MCP server written with the TypeScript SDK v2
# (tests/e2e/modern-server.mjs over Streamable HTTP, dual-era), three ways, in alternating slices
# so that the machine's noise falls on all alike, wrk with CONNECTIONS connections, each request
# a stateless 2026-07-28 tools/call (bench/tools-call-2026-echo.lua) unless said otherwise:
#   direct-2026   straight at the server;
#   direct-2025   straight at the server, as a sessionless 2025-11-25 call (the server serves the
#                 2025 era statelessly: a fresh server instance per request);
#   crank-2026    through crankd's /mcp to the upstream `modern` (protocol_version auto: the 2026
#                 era, a POST per call with _meta and the routing headers);
#   crank-2025    through crankd's /mcp to the upstream `legacy` (pinned 2025-11-25: initialize
#                 once, then the calls with that version).
# Figures: requests/s, p50 (ms, of the last slice), bad answers, and each through-crankd figure
# as a ratio of the direct call in the era crankd speaks to the upstream (same run).
#   bench/run-mcp-upstream-eras.sh [SLICES] [SECONDS_PER_SLICE] [CONNECTIONS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
slices=${1:-4}
seconds=${2:-3}
connections=${3:-8}
[[ "$slices" =~ ^[1-9][0-9]*$ && "$seconds" =~ ^[1-9][0-9]*$ && "$connections" =~ ^[1-9][0-9]*$ ]] ||
    { echo "usage: $0 [SLICES] [SECONDS_PER_SLICE] [CONNECTIONS]" >&2; exit 2; }
command -v wrk >/dev/null || "$root/scripts/install-deps.sh" --bench >/dev/null  # wrk

if [[ -z "${CRANK_BENCH_UPSTREAM_ERAS_INNER:-}" ]]; then  # start the server and crankd, come back
    if [[ "${CRANK_BENCH_NO_BUILD:-0}" != 1 ]]; then
        "$root/scripts/build.sh" --target crankd crank_mcp_plugin >/dev/null
    fi
    "$root/scripts/e2e-setup.sh"  # the SDK v2 server in tests/e2e/node_modules
    threads=$((connections * 4 > 16 ? connections * 4 : 16))
    upstream() {  # NAME PROTOCOL_VERSION
        printf '{"name": "%s", "config": {"transport": "streamable_http", "url": "@MCP_FIXTURE_URL@", "protocol_version": "%s"}}' "$1" "$2"
    }
    export CRANK_MCP_FIXTURE="$root/.tools/node/bin/node $root/tests/e2e/modern-server.mjs http 0"
    export CRANK_EXTRA_CONFIG="\"server\": {\"threads\": $threads}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_concurrent_calls\": $threads}}]}, \"upstreams\": [$(upstream modern auto), $(upstream legacy 2025-11-25)]"
    export CRANK_BENCH_UPSTREAM_ERAS_INNER=1
    exec "$root/tests/e2e/with-crankd.sh" "${CRANK_BUILD_DIR:-$root/build}/bin/crankd" -- "$0" "$@"
fi
: "${CRANK_MCP_URL:?run me through with-crankd.sh}" "${CRANK_MCP_FIXTURE_URL:?}"

declare -A url=([direct-2026]="$CRANK_MCP_FIXTURE_URL" [direct-2025]="$CRANK_MCP_FIXTURE_URL"
    [crank-2026]="$CRANK_MCP_URL" [crank-2025]="$CRANK_MCP_URL")
declare -A tool=([direct-2026]=echo [direct-2025]=echo [crank-2026]=modern_echo [crank-2025]=legacy_echo)
declare -A era=([direct-2026]=2026 [direct-2025]=2025 [crank-2026]=2026 [crank-2025]=2026)
declare -A base=([direct-2026]=direct-2026 [direct-2025]=direct-2025 [crank-2026]=direct-2026
    [crank-2025]=direct-2025)
declare -A requests=() bad=() p50=()
ways=(direct-2026 direct-2025 crank-2026 crank-2025)
run() {  # WAY SECONDS
    ERA="${era[$1]}" TOOL="${tool[$1]}" wrk -t2 -c"$connections" -d"$2s" --latency \
        -s "$root/bench/tools-call-2026-echo.lua" "${url[$1]}"
}
for way in "${ways[@]}"; do  # warm-up, and a first check that every way answers
    out="$(run "$way" 1)"
    if ! grep -q "bad answers: 0" <<<"$out" || grep -q "Non-2xx" <<<"$out"; then
        echo "bench: $way answers badly:" >&2
        echo "$out" >&2
        exit 1
    fi
    requests[$way]=0 bad[$way]=0
done
for ((i = 0; i < slices; i++)); do
    for way in "${ways[@]}"; do
        out="$(run "$way" "$seconds")"
        requests[$way]=$((requests[$way] + $(awk '/requests in/ {print $1}' <<<"$out")))
        bad[$way]=$((bad[$way] + $(awk '/bad answers:/ {print $3}' <<<"$out")))
        p50[$way]="$(awk '$1 == "50%" {print $2}' <<<"$out")"
    done
done
total=$((slices * seconds))
printf '%-12s %12s %10s %6s %16s\n' "way" "requests/s" "p50" "bad" "of direct"
for way in "${ways[@]}"; do
    awk -v n="${requests[$way]}" -v d="${requests[${base[$way]}]}" -v t="$total" \
        -v b="${bad[$way]}" -v p="${p50[$way]}" -v w="$way" -v of="${base[$way]}" \
        'BEGIN { printf "%-12s %12.0f %10s %6d %10.3f (%s)\n", w, n / t, p, b, n / d, of }'
done
