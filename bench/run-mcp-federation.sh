#!/usr/bin/env bash
# MCP federation overhead: tools/call of `echo` (short text) with the official TypeScript SDK
# client, through crankd to a stdio upstream (tests/e2e/reference-server.mjs --stdio, federated
# with "naming": "keep"), against the same fixture served directly over stdio (and over Streamable
# HTTP, the cost of HTTP itself), all in one run, plus JSON-RPC ping through crankd (answered by
# crankd: the floor without the upstream). bench/mcp-federation.mjs drives the calls: for each
# in-flight count, each target gets WARMUP s of calls, then SECONDS measured; it prints calls/s,
# p50, p99 and the ratios through crankd : direct.
#   bench/run-mcp-federation.sh [SECONDS=10] [IN_FLIGHT=1,16]
# CRANK_BENCH_WARMUP: warm-up seconds per target and in-flight count (default 1).
# CRANK_BUILD_DIR: the build to run (default build/); CRANK_BENCH_NO_BUILD=1 runs its crankd and
# plugins as they are (e.g. a copy of an earlier build, to compare).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
node="$root/.tools/node/bin/node"
fixture="$root/tests/e2e/reference-server.mjs"
seconds=${1:-10}
in_flight=${2:-1,16}
[[ "$seconds" =~ ^[0-9]+(\.[0-9]+)?$ && "$in_flight" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
    { echo "usage: $0 [SECONDS] [IN_FLIGHT, e.g. 1,16]" >&2; exit 2; }

if [[ -z "${CRANK_BENCH_FEDERATION_INNER:-}" ]]; then  # start crankd, then come back here
    if [[ "${CRANK_BENCH_NO_BUILD:-0}" != 1 ]]; then
        "$root/scripts/build.sh" --target crankd crank_mcp_plugin >/dev/null
    fi
    "$root/scripts/e2e-setup.sh"  # the SDK in tests/e2e/node_modules (quiet when present)
    max=$(tr ',' '\n' <<<"$in_flight" | sort -n | tail -n 1)
    # A connection holds a server thread while open; keep-alive is refused when under a quarter
    # of them are free: twice the client's connections, as the other benches.
    threads=$((max * 2 > 16 ? max * 2 : 16))
    upstream="{\"name\": \"fixture\", \"naming\": \"keep\",
               \"config\": {\"command\": \"$node\", \"args\": [\"$fixture\", \"--stdio\"]}}"
    export CRANK_EXTRA_CONFIG="\"server\": {\"threads\": $threads}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_concurrent_calls\": $threads}}]}, \"upstreams\": [$upstream]"
    export CRANK_BENCH_FEDERATION_INNER=1
    exec "$root/tests/e2e/with-crankd.sh" "$build/bin/crankd" -- "$0" "$@"
fi

# Here under with-crankd.sh: CRANK_MCP_URL and CRANKD_PID are set; crankd is stopped by it.
work="$(mktemp -d "${TMPDIR:-/tmp}/crank-bench-federation.XXXXXX")"
http_pid=""
# stop_pid PID: SIGTERM, up to 5 s, then SIGKILL; reaps it when it is this shell's child.
stop_pid() {
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 1 50); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
# shellcheck disable=SC2317 # called by the traps
cleanup() {
    [[ -n "$http_pid" ]] && stop_pid "$http_pid"
    # The stdio fixture the Node client spawned (the client stops it; this is for when it died).
    if [[ -s "$work/stdio.pid" ]]; then
        local stdio_pid
        stdio_pid="$(cat "$work/stdio.pid")"
        if grep -q reference-server "/proc/$stdio_pid/cmdline" 2>/dev/null; then
            stop_pid "$stdio_pid"
        fi
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# crankd answers /readyz 200 once the upstream's lists are fetched.
base="${CRANK_MCP_URL%/mcp}"
ready=""
for _ in $(seq 1 300); do
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")" == 200 ]]; then
        ready=1
        break
    fi
    kill -0 "$CRANKD_PID" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$ready" ]]; then
    echo "bench: crankd is not ready after 30 s:" >&2
    curl -s "$base/readyz" >&2 || true
    exit 1
fi

# The same fixture over Streamable HTTP on a free loopback port.
"$node" "$fixture" 0 >"$work/http.out" 2>"$work/http.err" &
http_pid=$!
http_url=""
for _ in $(seq 1 200); do
    http_url="$(sed -n 's|^listening \(http://127\.0\.0\.1:[0-9]*/mcp\)$|\1|p' "$work/http.out")"
    [[ -n "$http_url" ]] && break
    kill -0 "$http_pid" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$http_url" ]]; then
    echo "bench: the HTTP fixture did not start listening:" >&2
    cat "$work/http.err" >&2
    exit 1
fi

BENCH_SECONDS="$seconds" IN_FLIGHT="$in_flight" WARMUP="${CRANK_BENCH_WARMUP:-1}" \
    FIXTURE_HTTP_URL="$http_url" STDIO_PID_FILE="$work/stdio.pid" \
    "$node" "$root/bench/mcp-federation.mjs"
