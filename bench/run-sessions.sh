#!/usr/bin/env bash
# Memory per open session and poll throughput (issue 6): crankd with the synthetic fixture plugin
# publishes a session operation (one item a second, a 10-item buffer); bench/sessions.mjs opens
# SESSIONS sessions, reads crankd's RSS before and after, then polls them round-robin against
# JSON-RPC pings in the same run.
#   bench/run-sessions.sh [SESSIONS=10000] [SECONDS=10] [CONCURRENCY=16]
# POLLED=1: the sessions poll a request/response upstream instead (the host's thread per session).
# CRANK_BUILD_DIR: the build to run (default build/); CRANK_BENCH_NO_BUILD=1 runs its crankd and
# plugins as they are (e.g. a copy of an earlier build, to compare).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
export SESSIONS=${1:-10000} SECONDS=${2:-10} CONCURRENCY=${3:-16}
if [[ "${CRANK_BENCH_NO_BUILD:-0}" != 1 ]]; then
    "$root/scripts/build.sh" --target crankd crank_synthetic >/dev/null
fi
op='{"name": "feed", "description": "bench session", "protocol": "synthetic",
      "config": {"items": -1, "rate_per_sec": 1, "item_bytes": 100},
      "execution": {"mode": "session", "transport_behavior": "server_stream", "max_items": 10,
                    "idle_timeout_ms": 600000}}'
if [[ "${POLLED:-0}" == 1 ]]; then
    # Sessions over a request/response upstream: crankd polls each (one unary call a second, an
    # empty page each time) on its own thread.
    op='{"name": "feed", "description": "bench polled session", "protocol": "synthetic",
      "config": {"items": 0},
      "execution": {"mode": "session", "transport_behavior": "request_response",
                    "items_path": "items", "cursor_path": "next_cursor", "max_items": 10,
                    "poll_interval_ms": 1000, "idle_timeout_ms": 600000}}'
fi
export CRANK_EXTRA_CONFIG="\"plugins\": {\"directories\": [\"$build/lib/crank/plugins\", \"$build/lib/crank/test-plugins\"]}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_sessions\": $((SESSIONS + 1)), \"max_concurrent_calls\": $((CONCURRENCY * 2))}}]}, \"server\": {\"threads\": $((CONCURRENCY * 2))}, \"operations\": [$op]"
exec "$root/tests/e2e/with-crankd.sh" "$build/bin/crankd" -- "$root/.tools/node/bin/node" "$root/bench/sessions.mjs"
