#!/usr/bin/env bash
# with-crankd.sh CRANKD -- COMMAND...
# Starts CRANKD (crankd or crankd-test-tools) on a free loopback port with a store in a temporary
# directory, exports CRANK_MCP_URL=http://127.0.0.1:PORT/mcp and CRANKD_PID, runs COMMAND, then
# stops crankd by pid (SIGTERM, then SIGKILL) and exits with COMMAND's status. crankd's log is
# printed when COMMAND fails. CRANK_EXTRA_CONFIG, when set, is added to the config's top-level
# object (e.g. '"server": {"threads": 64}').
set -euo pipefail

crankd=$1
shift
[[ "${1:-}" == "--" ]] && shift

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-e2e.XXXXXX")"
pid=""
cleanup() {
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

printf '{"store": {"path": "%s/crank.db"}%s}\n' "$work" "${CRANK_EXTRA_CONFIG:+, $CRANK_EXTRA_CONFIG}" \
    > "$work/crank.json"
"$crankd" --config "$work/crank.json" --listen 127.0.0.1:0 2> "$work/crankd.log" &
pid=$!

port=""
for _ in $(seq 1 200); do
    port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/crankd.log")"
    [[ -n "$port" ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$port" ]]; then
    echo "with-crankd: $crankd did not start listening:" >&2
    cat "$work/crankd.log" >&2
    exit 1
fi

export CRANK_MCP_URL="http://127.0.0.1:$port/mcp"
export CRANKD_PID="$pid"
status=0
"$@" || status=$?
if ((status != 0)); then
    echo "--- crankd log ---" >&2
    tail -n 50 "$work/crankd.log" >&2
fi
exit "$status"
