#!/usr/bin/env bash
# N MCP sessions (default 10000), each with an idle GET stream, held open against crankd: memory
# per session, and ping latency with all of them open against the same server before they opened.
#   bench/run-idle-streams.sh [N]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n=${1:-10000}
"$root/scripts/build.sh" --target crankd >/dev/null
work="$(mktemp -d /tmp/crank-bench.XXXXXX)"
pid=""
trap '[[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
printf '{"store": {"path": "%s/crank.db"}, "mcp": {"max_sessions": %d, "max_streams": %d}}\n' \
    "$work" $((n + 10)) $((n + 10)) > "$work/crank.json"
"$root/build/bin/crankd" --config "$work/crank.json" --listen 127.0.0.1:0 2> "$work/log" &
pid=$!
port=""
for _ in $(seq 1 100); do
    port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/log")"
    [[ -n "$port" ]] && break
    sleep 0.1
done
[[ -n "$port" ]] || { echo "bench: crankd did not start" >&2; cat "$work/log" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)"
"$root/.tools/node/bin/node" "$root/bench/idle-streams.mjs" "http://127.0.0.1:$port/mcp" "$pid" "$n"
