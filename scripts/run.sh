#!/usr/bin/env bash
# Installs what is missing, builds crankd, its plugins and the demo upstream, and runs both with
# the demo configuration: the demo upstream (examples/demo-upstream) on 127.0.0.1:8081, crankd on
# 127.0.0.1:8080 with the embedded SQLite store in ./crank.db, publishing the demo upstream's REST
# API, SSE streams and long-poll feed as MCP tools. Extra arguments go to crankd, e.g.
#   scripts/run.sh --log-format json
# Ctrl-C (SIGINT) or SIGTERM stops crankd (it drains) and then the demo upstream.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" --target crankd crank_aggregators crank_rest crank_mcp_plugin crank-demo-upstream
cd "$root"

upstream_pid=""
crankd_pid=""
stop() {
    [[ -n "$crankd_pid" ]] && kill -TERM "$crankd_pid" 2>/dev/null && wait "$crankd_pid" 2>/dev/null
    [[ -n "$upstream_pid" ]] && kill -TERM "$upstream_pid" 2>/dev/null && wait "$upstream_pid" 2>/dev/null
    return 0
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$root/build/bin/crank-demo-upstream" --listen 127.0.0.1:8081 &
upstream_pid=$!
for _ in $(seq 1 50); do  # up to 5 s for the demo upstream to listen
    curl -sf -o /dev/null http://127.0.0.1:8081/health && break
    kill -0 "$upstream_pid" 2>/dev/null || { echo "run: the demo upstream did not start" >&2; exit 1; }
    sleep 0.1
done

# The admin API's token (examples/demo.json reads it from the environment): a random one unless
# the caller set it. The web UI asks for it once.
if [[ -z "${CRANK_ADMIN_TOKEN:-}" ]]; then
    CRANK_ADMIN_TOKEN="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
fi
export CRANK_ADMIN_TOKEN
echo "run: web UI at http://127.0.0.1:8080/ui/ (admin token: $CRANK_ADMIN_TOKEN)" >&2

"$root/build/bin/crankd" --config "$root/examples/demo.json" "$@" &
crankd_pid=$!
wait "$crankd_pid"
