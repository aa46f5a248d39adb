#!/usr/bin/env bash
# with-crankd.sh CRANKD -- COMMAND...
# Starts CRANKD (crankd or crankd-test-tools) on a free loopback port with a store in a temporary
# directory, exports CRANK_MCP_URL=http://127.0.0.1:PORT/mcp and CRANKD_PID, runs COMMAND, then
# stops crankd by pid (SIGTERM, then SIGKILL) and exits with COMMAND's status. crankd's log is
# printed when COMMAND fails. CRANK_EXTRA_CONFIG, when set, is added to the config's top-level
# object (e.g. '"server": {"threads": 64}'). With CRANK_REST_FIXTURE set to the crank-rest-fixture
# binary, that upstream is started first on a free loopback port (and stopped by pid at the end);
# every @REST_FIXTURE@ in CRANK_EXTRA_CONFIG becomes its 127.0.0.1:PORT, also exported as
# CRANK_REST_FIXTURE_ADDRESS. With CRANK_MCP_FIXTURE set to a command line (run by sh) that starts
# an MCP server printing "listening http://127.0.0.1:PORT/PATH" on its stdout, that server is
# started too (and stopped by pid); every @MCP_FIXTURE_URL@ in CRANK_EXTRA_CONFIG becomes its URL,
# also exported as CRANK_MCP_FIXTURE_URL.
# COMMAND starts once crankd answers GET /readyz with 200 (at most 30 s; then it starts anyway,
# with a warning, and the readiness answer is printed).
set -euo pipefail

crankd=$1
shift
[[ "${1:-}" == "--" ]] && shift

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-e2e.XXXXXX")"
# The logs the waits below read exist before the processes that write them start: a background
# process opens its redirections only once it runs, and reading a log it has not created yet
# would end this script (set -e) on a loaded machine.
: > "$work/fixture.log"
: > "$work/mcp-fixture.out"
: > "$work/mcp-fixture.log"
: > "$work/crankd.log"
pid=""
fixture_pid=""
mcp_fixture_pid=""
cleanup() {
    local p
    for p in "$fixture_pid" "$mcp_fixture_pid"; do
        if [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; then
            kill -TERM "$p" 2>/dev/null || true
            wait "$p" 2>/dev/null || true
        fi
    done
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

# listening_address NAME LOG PID: the 127.0.0.1:PORT the process PID announced in LOG
# ("listening on http://..."), waiting up to 20 s; exits with its log when it never does.
listening_address() {
    local address=""
    for _ in $(seq 1 200); do
        address="$(sed -n 's|.*listening on http://\(127\.0\.0\.1:[0-9]*\).*|\1|p' "$2")"
        [[ -n "$address" ]] && break
        kill -0 "$3" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z "$address" ]]; then
        echo "with-crankd: $1 did not start listening:" >&2
        cat "$2" >&2
        exit 1
    fi
    echo "$address"
}

extra="${CRANK_EXTRA_CONFIG:-}"
if [[ -n "${CRANK_REST_FIXTURE:-}" ]]; then
    "$CRANK_REST_FIXTURE" --listen 127.0.0.1:0 2> "$work/fixture.log" &
    fixture_pid=$!
    fixture="$(listening_address "$CRANK_REST_FIXTURE" "$work/fixture.log" "$fixture_pid")"
    extra="${extra//@REST_FIXTURE@/$fixture}"
    export CRANK_REST_FIXTURE_ADDRESS="$fixture"
fi
if [[ -n "${CRANK_MCP_FIXTURE:-}" ]]; then
    # exec: the pid is the server's own, so that stopping it by pid stops the server.
    sh -c "exec $CRANK_MCP_FIXTURE" > "$work/mcp-fixture.out" 2> "$work/mcp-fixture.log" &
    mcp_fixture_pid=$!
    mcp_url=""
    for _ in $(seq 1 200); do
        mcp_url="$(sed -n 's|^listening \(http://127\.0\.0\.1:[0-9]*/[^ ]*\).*|\1|p' "$work/mcp-fixture.out")"
        [[ -n "$mcp_url" ]] && break
        kill -0 "$mcp_fixture_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z "$mcp_url" ]]; then
        echo "with-crankd: the MCP fixture did not start listening:" >&2
        cat "$work/mcp-fixture.out" "$work/mcp-fixture.log" >&2
        exit 1
    fi
    extra="${extra//@MCP_FIXTURE_URL@/$mcp_url}"
    export CRANK_MCP_FIXTURE_URL="$mcp_url"
fi
printf '{"store": {"path": "%s/crank.db"}%s}\n' "$work" "${extra:+, $extra}" > "$work/crank.json"
"$crankd" --config "$work/crank.json" --listen 127.0.0.1:0 2> "$work/crankd.log" &
pid=$!
address="$(listening_address "$crankd" "$work/crankd.log" "$pid")"

ready=""
for _ in $(seq 1 300); do
    if ready="$(curl -sf "http://$address/readyz" 2>/dev/null)"; then
        break
    fi
    ready=""
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$ready" ]]; then
    echo "with-crankd: crankd is not ready after 30 s: $(curl -s "http://$address/readyz")" >&2
fi
export CRANK_MCP_URL="http://$address/mcp"
export CRANKD_PID="$pid"
status=0
"$@" || status=$?
if ((status != 0)); then
    echo "--- crankd log ---" >&2
    tail -n 50 "$work/crankd.log" >&2
fi
exit "$status"
