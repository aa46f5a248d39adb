#!/usr/bin/env bash
# No upstream server run by crankd outlives it (issue 7). crankd fronts a stdio MCP server that
# ignores both the end of its stdin and SIGTERM (tests/e2e/mcp-stdio-server.mjs with
# --ignore-stdin-close --ignore-sigterm), so only the last step of the specified shutdown order
# (close stdin, wait, SIGTERM, wait, SIGKILL) stops it. Checked twice:
#   1. crankd gets SIGTERM: it shuts the server down in that order before it exits;
#   2. crankd gets SIGKILL: the server goes anyway (PR_SET_PDEATHSIG, its own process group).
# Each time the server's pid must be gone: no orphan, and no zombie (its parent reaped it, or init
# did). Every process started here is stopped by its pid.
#   tests/e2e/federation-lifecycle.sh CRANKD
set -euo pipefail
crankd=$1
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
node="$root/.tools/node/bin/node"
work="$(mktemp -d "${TMPDIR:-/tmp}/crank-lifecycle.XXXXXX")"
pid=""
server=""
cleanup() {
    for p in "$pid" "$server"; do
        [[ -n "$p" ]] && kill -KILL "$p" 2>/dev/null || true
    done
    [[ -n "$pid" ]] && wait "$pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/crank.json" <<JSON
{"store": {"path": "$work/crank.db"},
 "upstreams": [{"name": "stubborn", "config": {"command": "$node",
   "args": ["$root/tests/e2e/mcp-stdio-server.mjs", "--ignore-stdin-close", "--ignore-sigterm"],
   "close_wait_ms": 300, "term_wait_ms": 300}}]}
JSON

# gone PID SECONDS: true once PID no longer exists (a zombie still counts as existing).
gone() {
    for _ in $(seq 1 $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

run_once() {  # run_once SIGNAL
    local signal=$1
    rm -f "$work"/crank.db*
    : >"$work/crankd.log"  # exists before crankd opens it: the wait below reads it (set -e)
    "$crankd" --config "$work/crank.json" --listen 127.0.0.1:0 2>"$work/crankd.log" &
    pid=$!
    local address="" ready=""
    for _ in $(seq 1 200); do
        address="$(sed -n 's|.*listening on http://\(127\.0\.0\.1:[0-9]*\).*|\1|p' "$work/crankd.log")"
        [[ -n "$address" ]] && ready="$(curl -sf "http://$address/readyz" || true)"
        [[ -n "$ready" ]] && break
        sleep 0.1
    done
    [[ -n "$ready" ]] || { echo "crankd did not get ready:"; cat "$work/crankd.log"; exit 1; }
    server="$(pgrep -P "$pid" -f mcp-stdio-server.mjs || true)"
    [[ -n "$server" ]] || { echo "FAIL: crankd runs no upstream server"; exit 1; }
    kill "-$signal" "$pid"
    gone "$pid" 15 || { echo "FAIL: crankd did not stop after SIG$signal"; exit 1; }
    wait "$pid" 2>/dev/null || true
    pid=""
    if ! gone "$server" 10; then
        echo "FAIL: after SIG$signal to crankd the upstream server $server still exists:"
        ps -o pid,ppid,stat,cmd -p "$server" || true
        exit 1
    fi
    server=""
    echo "ok: SIG$signal to crankd; its upstream server is gone, no orphan, no zombie"
}

run_once TERM
run_once KILL
