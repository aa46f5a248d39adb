#!/usr/bin/env bash
# N MCP sessions (default 10000), each with an idle GET stream, held open against crankd: memory
# per session, and ping latency with all of them open against the same server before they opened.
#   bench/run-idle-streams.sh [N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n=${1:-10000}
if [[ -z "${CRANK_MCP_URL:-}" ]]; then  # start crankd, then come back here with its URL
    "$root/scripts/build.sh" --target crankd >/dev/null
    export CRANK_EXTRA_CONFIG="\"mcp\": {\"max_sessions\": $((n + 10)), \"max_streams\": $((n + 10))}"
    exec "$root/tests/e2e/with-crankd.sh" "$root/build/bin/crankd" -- "$0" "$@"
fi
ulimit -n "$(ulimit -Hn)"
"$root/.tools/node/bin/node" "$root/bench/idle-streams.mjs" "$CRANK_MCP_URL" "$CRANKD_PID" "$n"
