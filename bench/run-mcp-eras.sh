#!/usr/bin/env bash
# tools/call of the same no-op tool in the two MCP eras, same crankd, same wrk, same run: as a
# stateless 2026-07-28 request (bench/tools-call-2026.lua) and on a 2025-11-25 session
# (bench/tools-call.lua), in alternating slices so that the machine's noise falls on both alike.
# Figures: requests/s of each, their ratio (2026 : 2025, goal >= 1.0), and crankd's CPU per call
# (user + system time of the crankd process over each era's slices).
#   bench/run-mcp-eras.sh [SLICES] [SECONDS_PER_SLICE] [CONNECTIONS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
slices=${1:-6}
seconds=${2:-3}
connections=${3:-32}
command -v wrk >/dev/null || "$root/scripts/install-deps.sh" --bench >/dev/null  # wrk

if [[ -z "${CRANK_MCP_URL:-}" ]]; then  # start crankd, then come back here with its URL
    "$root/scripts/build.sh" --target crankd-test-tools >/dev/null
    export CRANK_EXTRA_CONFIG="\"server\": {\"threads\": $((connections * 2)), \"queue\": 256}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_concurrent_calls\": $((connections * 2))}}]}"
    exec "$root/tests/e2e/with-crankd.sh" "$root/build/bin/crankd-test-tools" -- "$0" "$@"
fi
: "${CRANKD_PID:?run me through with-crankd.sh}"
url="${CRANK_MCP_URL%/mcp}"
# shellcheck source=bench/lib/mcp-session.sh
source "$root/bench/lib/mcp-session.sh"
session="$(open_mcp_session "$url/mcp")"
[[ -n "$session" ]] || { echo "bench: initialize failed" >&2; exit 1; }

ticks() {  # crankd's user + system CPU time so far, in clock ticks
    awk '{print $14 + $15}' "/proc/$CRANKD_PID/stat"
}
hz="$(getconf CLK_TCK)"
declare -A requests=([2026]=0 [2025]=0) cpu=([2026]=0 [2025]=0) errors=([2026]=0 [2025]=0)
script_of() { [[ $1 == 2026 ]] && echo "$root/bench/tools-call-2026.lua" || echo "$root/bench/tools-call.lua"; }

for era in 2026 2025; do  # warm-up
    SESSION="$session" wrk -t2 -c"$connections" -d1s -s "$(script_of $era)" "$url/mcp" >/dev/null
done
for ((i = 0; i < slices; i++)); do
    for era in 2026 2025; do
        before="$(ticks)"
        out="$(SESSION="$session" wrk -t2 -c"$connections" -d"${seconds}s" -s "$(script_of $era)" "$url/mcp")"
        after="$(ticks)"
        n="$(awk '/requests in/ {print $1}' <<<"$out")"
        bad="$(awk '/Non-2xx/ {print $NF}' <<<"$out")"
        requests[$era]=$((requests[$era] + n))
        cpu[$era]=$((cpu[$era] + after - before))
        errors[$era]=$((errors[$era] + ${bad:-0}))
    done
done
total=$((slices * seconds))
printf '%-22s %12s %16s %8s\n' "era" "requests/s" "CPU us per call" "non-2xx"
for era in 2026 2025; do
    awk -v n="${requests[$era]}" -v t="$total" -v c="${cpu[$era]}" -v hz="$hz" -v e="${errors[$era]}" \
        -v name="$([[ $era == 2026 ]] && echo '2026-07-28 stateless' || echo '2025-11-25 session')" \
        'BEGIN { printf "%-22s %12.0f %16.1f %8d\n", name, n / t, c / hz * 1e6 / n, e }'
done
awk -v a="${requests[2026]}" -v b="${requests[2025]}" \
    'BEGIN { printf "2026 : 2025 throughput = %.3f (same crankd, same client, alternating slices)\n", a / b }'
