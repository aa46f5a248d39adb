#!/usr/bin/env bash
# Memory per open session and poll throughput (issue 6): crankd with the synthetic fixture plugin
# publishes a session operation (one item a second, a 10-item buffer); bench/sessions.mjs opens
# SESSIONS sessions, reads crankd's RSS before and after, then polls them round-robin against
# JSON-RPC pings in the same run.
#   bench/run-sessions.sh [SESSIONS=10000] [SECONDS=10] [CONCURRENCY=16]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
export SESSIONS=${1:-10000} SECONDS=${2:-10} CONCURRENCY=${3:-16}
"$root/scripts/build.sh" --target crankd crank_synthetic >/dev/null
op='{"name": "feed", "description": "bench session", "protocol": "synthetic",
      "config": {"items": -1, "rate_per_sec": 1, "item_bytes": 100},
      "execution": {"mode": "session", "transport_behavior": "server_stream", "max_items": 10,
                    "idle_timeout_ms": 600000}}'
export CRANK_EXTRA_CONFIG="\"plugins\": {\"directories\": [\"$build/lib/crank/plugins\", \"$build/lib/crank/test-plugins\"]}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_sessions\": $((SESSIONS + 1))}}]}, \"server\": {\"threads\": $((CONCURRENCY * 2))}, \"operations\": [$op]"
exec "$root/tests/e2e/with-crankd.sh" "$build/bin/crankd" -- "$root/.tools/node/bin/node" "$root/bench/sessions.mjs"
