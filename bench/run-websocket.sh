#!/usr/bin/env bash
# The WebSocket plugin against crank-ws-fixture, in one run, one fixture:
#   a. stream direct  crank-ws-direct (bench/ws_direct: Poco's WebSocket, the plugin's client):
#                     /ticks?count=MESSAGES&rate=0&size=PAYLOAD read as fast as it comes
#   b. stream crank   one tools/call of a window tool over the same /ticks, stats aggregation,
#                     max_items MESSAGES
#   c. sessions       SESSIONS sessions of a session tool over /ticks?rate=1 opened on one MCP
#                     session (bench/websocket-sessions.mjs): crankd's RSS per open WebSocket
#                     session, the fixture's count of open connections checked, then all stopped
# The stream phases follow a 10,000-message warm-up and print messages/s, Crank : direct, and the
# CPU time crankd and the fixture spent per 1000 messages. Every answer is checked (the direct
# client: MESSAGES consecutive ticks, then a close 1000; the window: item_count MESSAGES, no
# drops; the sessions: each start, poll and stop, and the fixture's open count): a bad one makes
# the script exit 1.
#   bench/run-websocket.sh [SESSIONS]
# CRANK_BENCH_MESSAGES: MESSAGES (default 200000); CRANK_BENCH_PAYLOAD: pad bytes per tick
# (default 100); CRANK_BENCH_ROUNDS: stream rounds, the best of each side kept (default 1).
# CRANK_BUILD_DIR picks the build (default build/, configured by scripts/build.sh);
# CRANK_BENCH_NO_BUILD=1 runs it as it is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sessions=${1:-1000}
messages=${CRANK_BENCH_MESSAGES:-200000}
payload=${CRANK_BENCH_PAYLOAD:-100}
rounds=${CRANK_BENCH_ROUNDS:-1}
build="${CRANK_BUILD_DIR:-$root/build}"
direct_client="$build/bin/crank-ws-direct"
concurrency=16  # session starts and stops in flight

now_ns() { date +%s%N; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }  # utime + stime of PID, clock ticks
hz="$(getconf CLK_TCK)"

# ---- inner: crankd runs (tests/e2e/with-crankd.sh); phases a, b, c ------------------------------
if [[ -n "${CRANK_MCP_URL:-}" ]]; then
    session="$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' "$CRANK_MCP_URL" \
        -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' |
        sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p')"
    [[ -n "$session" ]] || { echo "bench: initialize failed" >&2; exit 1; }
    mcp() {  # mcp BODY: one JSON-RPC request on the session, the body of the answer on stdout
        curl -sS --max-time 600 -H 'Content-Type: application/json' \
            -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $session" \
            -H 'MCP-Protocol-Version: 2025-11-25' "$CRANK_MCP_URL" -d "$1"
    }
    member() { grep -o "\"$1\":[^,}]*" | head -n 1 | cut -d: -f2 | tr -d '"'; }  # of structuredContent
    tool() { echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'"$1"'","arguments":{}}}'; }

    # a and b, ROUNDS rounds of (direct, window); the best of each side is kept. Warm-up: 10,000
    # messages each way.
    "$direct_client" --target "$BENCH_TARGET" --count 10000 --size "$payload" > /dev/null
    mcp "$(tool ticks_window_warmup)" > /dev/null
    best_direct="" best_window=""
    for _ in $(seq 1 "$rounds"); do
        f0="$(cpu_ticks "$BENCH_FIXTURE_PID")"
        if ! line="$("$direct_client" --target "$BENCH_TARGET" --count "$messages" --size "$payload")"; then
            echo "bench: the direct stream failed" >&2
            exit 1
        fi
        fixture_cpu=$(($(cpu_ticks "$BENCH_FIXTURE_PID") - f0))
        read -r rate bytes_rate <<<"$line"
        if [[ -z "$best_direct" ]] || awk -v a="$rate" -v b="${best_direct%% *}" 'BEGIN { exit !(a > b) }'; then
            best_direct="$rate $bytes_rate $fixture_cpu"
        fi

        c0="$(cpu_ticks "$CRANKD_PID")"
        f0="$(cpu_ticks "$BENCH_FIXTURE_PID")"
        t0="$(now_ns)"
        answer="$(mcp "$(tool ticks_window)")"
        t1="$(now_ns)"
        crankd_cpu=$(($(cpu_ticks "$CRANKD_PID") - c0))
        fixture_cpu=$(($(cpu_ticks "$BENCH_FIXTURE_PID") - f0))
        count="$(member item_count <<<"$answer")"
        dropped="$(member dropped_count <<<"$answer")"
        stop="$(member stop_reason <<<"$answer")"
        elapsed_ms="$(member elapsed_ms <<<"$answer")"
        window_bytes="$(member bytes <<<"$answer")"
        # count = max_items = MESSAGES: the window stops on max_items or, when the fixture's
        # close 1000 came first, on upstream_end; both read every message.
        if [[ "$answer" != *'"isError":false'* || "$count" != "$messages" || "$dropped" != 0 ||
            ("$stop" != max_items && "$stop" != upstream_end) ]]; then
            echo "bench: the window did not collect $messages messages (item_count ${count:-?}, dropped ${dropped:-?}, stop_reason ${stop:-?}):" >&2
            head -c 2000 <<<"$answer" >&2
            echo >&2
            exit 1
        fi
        if [[ -z "$best_window" ]] || ((elapsed_ms < ${best_window%% *})); then
            best_window="$elapsed_ms $(((t1 - t0) / 1000)) $window_bytes $crankd_cpu $fixture_cpu $stop"
        fi
    done
    awk -v n="$messages" -v p="$payload" -v d="$best_direct" -v c="$best_window" -v hz="$hz" \
        -v rounds="$rounds" 'BEGIN {
        split(d, D, " "); split(c, C, " ")
        # D: messages/s, payload bytes/s, fixture ticks
        # C: elapsed_ms, wall us, item bytes, crankd ticks, fixture ticks, stop_reason
        win = n / (C[1] / 1e3); wall = n / (C[2] / 1e6)
        printf "%-25s %12s %8s %8s   (/ticks, %d messages, %d-byte pad, rate 0, best of %d)\n",
            "stream", "messages/s", "MB/s", "seconds", n, p, rounds
        printf "%-25s %12.0f %8.1f %8.3f   (message payloads)\n", "direct", D[1], D[2] / 1e6, n / D[1]
        printf "%-25s %12.0f %8.1f %8.3f   (the items; stop_reason %s)\n",
            "crank window (elapsed_ms)", win, C[3] / (C[1] * 1e3), C[1] / 1e3, C[6]
        printf "%-25s %12.0f %8s %8.3f\n", "crank tools/call (wall)", wall, "", C[2] / 1e6
        printf "stream: Crank/direct messages/s = %.2f (wall clock of the call: %.2f)\n", win / D[1], wall / D[1]
        printf "CPU per 1000 messages: fixture %.1f ms (direct), %.1f ms (window); crankd %.1f ms (%.0f%% of one core)\n\n",
            D[3] / hz * 1e6 / n, C[5] / hz * 1e6 / n, C[4] / hz * 1e6 / n, 100 * (C[4] / hz) / (C[2] / 1e6)
    }'

    # c. the sessions, on their own MCP session
    SESSIONS="$sessions" CONCURRENCY="$concurrency" "$root/.tools/node/bin/node" \
        "$root/bench/websocket-sessions.mjs"
    exit 0
fi

# ---- outer: the fixture, then crankd for every phase --------------------------------------------
if [[ "${CRANK_BENCH_NO_BUILD:-0}" != 1 ]]; then
    if ! out="$("$root/scripts/build.sh" --target crankd crank_websocket crank_aggregators \
        crank-ws-fixture crank-ws-direct 2>&1)"; then
        echo "$out" >&2
        exit 1
    fi
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-bench-ws.XXXXXX")"
fixture_pid=""
# shellcheck source=bench/lib/process.sh
source "$root/bench/lib/process.sh"
# shellcheck disable=SC2317  # called by the trap
cleanup() {
    stop "$fixture_pid"
    rm -rf "$work"
}
trap cleanup EXIT

"$build/bin/crank-ws-fixture" --listen 127.0.0.1:0 2> "$work/fixture.log" &
fixture_pid=$!
target=""
for _ in $(seq 1 100); do  # up to 10 s
    target="$(sed -n 's|.*listening on http://\(127\.0\.0\.1:[0-9]*\).*|\1|p' "$work/fixture.log")"
    [[ -n "$target" ]] && break
    kill -0 "$fixture_pid" 2>/dev/null || break
    sleep 0.1
done
[[ -n "$target" ]] || { echo "bench: the WebSocket fixture did not start:" >&2; cat "$work/fixture.log" >&2; exit 1; }

# The window: max_items ends it (window_duration_ms, max_bytes and the idle upstream_timeout_ms
# are far out of the way); stats describes seq and counts channel. The session: one tick a second
# into a 10-item buffer, so that a session's memory is the connection and its reader, not items.
window_op() {  # window_op NAME COUNT
    echo '{"name": "'"$1"'", "description": "ticks of the WebSocket fixture, as a window",
      "protocol": "websocket",
      "config": {"url": "ws://'"$target"'/ticks?count='"$2"'&rate=0&size='"$payload"'"},
      "execution": {"mode": "window", "max_items": '"$2"', "max_bytes": 100000000000,
                    "window_duration_ms": 600000, "upstream_timeout_ms": 60000,
                    "max_result_bytes": 1048576, "aggregation_mode": "stats",
                    "aggregation": {"numeric_paths": ["seq"], "key_paths": ["channel"]}}}'
}
ops="$(window_op ticks_window "$messages"), $(window_op ticks_window_warmup 10000),
     {\"name\": \"ticks_session\", \"description\": \"ticks of the WebSocket fixture, as a session\",
      \"protocol\": \"websocket\",
      \"config\": {\"url\": \"ws://$target/ticks?count=0&rate=1&size=$payload\"},
      \"execution\": {\"mode\": \"session\", \"max_items\": 10, \"idle_timeout_ms\": 600000}}"
# The workspace's max_sessions fits SESSIONS (the anonymous agent has only its workspace's
# limits); threads and concurrent calls above the starts in flight, as run-sessions.sh.
export CRANK_EXTRA_CONFIG="\"server\": {\"threads\": $((concurrency * 2))}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_sessions\": $((sessions + 1)), \"max_concurrent_calls\": $((concurrency * 2))}}]}, \"operations\": [$ops]"
export BENCH_TARGET="$target" BENCH_FIXTURE="http://$target" BENCH_FIXTURE_PID="$fixture_pid"
"$root/tests/e2e/with-crankd.sh" "$build/bin/crankd" -- "$0" "$sessions"
