#!/usr/bin/env bash
# with-crankd.sh CRANKD -- COMMAND...
# Starts CRANKD (crankd or crankd-test-tools) on a free loopback port with a store in a temporary
# directory, exports CRANK_MCP_URL=http://127.0.0.1:PORT/mcp and CRANKD_PID, runs COMMAND, then
# stops crankd by pid (SIGTERM, then SIGKILL) and exits with COMMAND's status. crankd's log is
# printed when COMMAND fails. CRANK_EXTRA_CONFIG, when set, is added to the config's top-level
# object (e.g. '"server": {"threads": 64}'). With CRANK_REST_FIXTURE set to the crank-rest-fixture
# binary, that upstream is started first on a free loopback port (and stopped by pid at the end);
# every @REST_FIXTURE@ in CRANK_EXTRA_CONFIG becomes its 127.0.0.1:PORT, also exported as
# CRANK_REST_FIXTURE_ADDRESS.
set -euo pipefail

crankd=$1
shift
[[ "${1:-}" == "--" ]] && shift

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-e2e.XXXXXX")"
pid=""
fixture_pid=""
cleanup() {
    if [[ -n "$fixture_pid" ]] && kill -0 "$fixture_pid" 2>/dev/null; then
        kill -TERM "$fixture_pid" 2>/dev/null || true
        wait "$fixture_pid" 2>/dev/null || true
    fi
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
printf '{"store": {"path": "%s/crank.db"}%s}\n' "$work" "${extra:+, $extra}" > "$work/crank.json"
"$crankd" --config "$work/crank.json" --listen 127.0.0.1:0 2> "$work/crankd.log" &
pid=$!
address="$(listening_address "$crankd" "$work/crankd.log" "$pid")"

export CRANK_MCP_URL="http://$address/mcp"
export CRANKD_PID="$pid"
status=0
"$@" || status=$?
if ((status != 0)); then
    echo "--- crankd log ---" >&2
    tail -n 50 "$work/crankd.log" >&2
fi
exit "$status"
