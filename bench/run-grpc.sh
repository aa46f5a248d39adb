#!/usr/bin/env bash
# The gRPC plugin against crank-grpc-fixture, each figure next to the same gRPC work done directly
# by crank-grpc-direct (bench/grpc_direct: the plugin's own client library, GenericStub, no
# generated code), in one run, one fixture:
#   a. unary direct  crank-grpc-direct: Echo {text: "bench"}, CONNECTIONS calls in flight
#   b. unary crank   wrk, CONNECTIONS connections: MCP tools/call of a unary grpc tool (that Echo)
#                    -> crankd -> grpc plugin -> the fixture
#   c. stream direct crank-grpc-direct: one Ticks stream of MESSAGES messages (100-byte padding,
#                    interval 0: the fixture sends as fast as it can)
#   d. stream crank  one tools/call of a window tool over the same Ticks stream, stats
#                    aggregation, max_items MESSAGES
# The unary phases run 2 s of warm-up then SECONDS (default 10) at CONNECTIONS (default 32) in
# flight; they print requests/s, p50, p99. The stream phases follow a 10,000-message warm-up and
# print messages/s, and the CPU time the fixture and crankd spent per message. Then the ratios
# Crank : direct. Every answer is checked (status OK and the echoed text; for Crank also
# "isError":false, and the window's item_count MESSAGES): a bad one makes the script exit 1.
#   bench/run-grpc.sh [SECONDS] [CONNECTIONS]
# CRANK_BENCH_MESSAGES: MESSAGES (default 200000); CRANK_BENCH_PAYLOAD: padding bytes per message
# (default 100); CRANK_BENCH_ROUNDS: stream rounds, the best of each side kept (default 1).
# CRANK_BUILD_DIR picks the build (default build/, configured by scripts/build.sh);
# CRANK_BENCH_NO_BUILD=1 runs it as it is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=${1:-10}
connections=${2:-32}
messages=${CRANK_BENCH_MESSAGES:-200000}
payload=${CRANK_BENCH_PAYLOAD:-100}
rounds=${CRANK_BENCH_ROUNDS:-1}
build="${CRANK_BUILD_DIR:-$root/build}"
direct_client="$build/bin/crank-grpc-direct"
expect='"text":"bench"'  # the echoed request, in the tool result's structuredContent

now_ns() { date +%s%N; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }  # utime + stime of PID, clock ticks
hz="$(getconf CLK_TCK)"

# ---- inner: crankd runs (tests/e2e/with-crankd.sh); phases b, c, d into $BENCH_WORK/*.result ----
if [[ -n "${CRANK_MCP_URL:-}" ]]; then
    work="$BENCH_WORK"
    # shellcheck source=bench/lib/mcp-session.sh
    source "$root/bench/lib/mcp-session.sh"
    session="$(open_mcp_session "$CRANK_MCP_URL")"
    [[ -n "$session" ]] || { echo "bench: initialize failed" >&2; exit 1; }
    mcp() {  # mcp BODY: one JSON-RPC request on the session, the body of the answer on stdout
        curl -sS --max-time 600 -H 'Content-Type: application/json' \
            -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $session" \
            -H 'MCP-Protocol-Version: 2025-11-25' "$CRANK_MCP_URL" -d "$1"
    }
    member() { grep -o "\"$1\":[^,}]*" | head -n 1 | cut -d: -f2 | tr -d '"'; }  # of structuredContent

    # b. unary crank. The wrk script (written here: bench/rest-tools-call.lua names its tool) posts
    # tools/call of grpc_echo and counts the bad answers: a status other than 200, no
    # "isError":false, or no EXPECT (the echoed text) in the body.
    cat > "$work/grpc-tools-call.lua" <<'LUA'
local expect = os.getenv("EXPECT")
local threads = {}
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grpc_echo","arguments":{"text":"bench"}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = os.getenv("SESSION")
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
function setup(thread) table.insert(threads, thread) end
function init(args) bad = 0 end
function response(status, headers, body)
    if status ~= 200 or not string.find(body, '"isError":false', 1, true) or
        not string.find(body, expect, 1, true) then
        bad = bad + 1
    end
end
function done(summary, latency, requests)
    local total = 0
    for _, thread in ipairs(threads) do total = total + thread:get("bad") end
    io.write(string.format("bad answers: %d\n", total))
end
LUA
    # one call first: a tool that fails would otherwise only show as a count of bad answers
    answer="$(mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grpc_echo","arguments":{"text":"bench"}}}')"
    if [[ "$answer" != *'"isError":false'* || "$answer" != *"$expect"* ]]; then
        echo "bench: grpc_echo does not answer as expected:" >&2
        head -c 2000 <<<"$answer" >&2
        echo >&2
        exit 1
    fi
    export SESSION="$session" EXPECT="$expect"
    wrk_measure() {  # wrk_measure DURATION: "requests/s p50_us p99_us bad errors" on stdout
        wrk -t2 -c"$connections" -d"${1}s" --latency -s "$work/grpc-tools-call.lua" "$CRANK_MCP_URL" |
            awk '
                function us(v) {
                    if (v ~ /us$/) return v + 0
                    if (v ~ /ms$/) return v * 1000
                    if (v ~ /m$/) return v * 60000000
                    if (v ~ /s$/) return v * 1000000
                    return v + 0
                }
                /Requests\/sec/ { rps = $2 }
                $1 == "50%" { p50 = us($2) }
                $1 == "99%" { p99 = us($2) }
                /^bad answers:/ { bad = $3 }
                /Non-2xx or 3xx responses:/ { non2xx = $NF }
                /Socket errors:/ { gsub(",", ""); errors = $4 + $6 + $8 + $10 }
                END { printf "%s %d %d %d %d\n", rps, p50, p99, bad + 0, errors + non2xx }'
    }
    wrk_measure 2 > /dev/null
    c0="$(cpu_ticks "$CRANKD_PID")"
    f0="$(cpu_ticks "$BENCH_FIXTURE_PID")"
    line="$(wrk_measure "$seconds")"
    # the CPU time crankd and the fixture spent in the measured seconds: what a call costs each
    echo "$line $(($(cpu_ticks "$CRANKD_PID") - c0)) $(($(cpu_ticks "$BENCH_FIXTURE_PID") - f0))" \
        > "$work/unary-crank.result"

    # c and d. the stream, ROUNDS rounds of (direct, window); the best of each side is kept.
    # Warm-up: 10,000 messages each way (the window tool with count 10000 ends on upstream_end).
    "$direct_client" stream --target "$BENCH_TARGET" --count 10000 --payload-bytes "$payload" > /dev/null
    mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ticks_window","arguments":{"count":10000,"intervalMs":0,"payloadBytes":'"$payload"'}}}' > /dev/null
    call='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ticks_window","arguments":{"count":'"$messages"',"intervalMs":0,"payloadBytes":'"$payload"'}}}'
    best_direct="" best_window=""
    for _ in $(seq 1 "$rounds"); do
        f0="$(cpu_ticks "$BENCH_FIXTURE_PID")"
        if ! line="$("$direct_client" stream --target "$BENCH_TARGET" --count "$messages" \
            --payload-bytes "$payload")"; then
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
        answer="$(mcp "$call")"
        t1="$(now_ns)"
        crankd_cpu=$(($(cpu_ticks "$CRANKD_PID") - c0))
        fixture_cpu=$(($(cpu_ticks "$BENCH_FIXTURE_PID") - f0))
        count="$(member item_count <<<"$answer")"
        dropped="$(member dropped_count <<<"$answer")"
        stop="$(member stop_reason <<<"$answer")"
        elapsed_ms="$(member elapsed_ms <<<"$answer")"
        window_bytes="$(member bytes <<<"$answer")"
        # count = max_items = MESSAGES: the window stops on max_items or, when the fixture's
        # status came first, on upstream_end; both read every message.
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
    echo "$best_direct" > "$work/stream-direct.result"
    echo "$best_window" > "$work/stream-crank.result"
    exit 0
fi

# ---- outer: the fixture; phase a; then crankd for phases b, c, d; the report -------------------
"$root/scripts/install-deps.sh" --bench >/dev/null  # wrk
if [[ "${CRANK_BENCH_NO_BUILD:-0}" != 1 ]]; then
    if ! out="$("$root/scripts/build.sh" --target crankd crank_grpc crank_aggregators \
        crank-grpc-fixture crank_grpc_fixture_desc crank-grpc-direct 2>&1)"; then
        echo "$out" >&2
        exit 1
    fi
fi
desc="$build/tests/fixtures/upstreams/grpc/fixture.desc"
[[ -f "$desc" ]] || { echo "bench: no descriptor set $desc (target crank_grpc_fixture_desc)" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-bench-grpc.XXXXXX")"
fixture_pid=""
# shellcheck source=bench/lib/process.sh
source "$root/bench/lib/process.sh"
# shellcheck disable=SC2317  # called by the trap
cleanup() {
    stop "$fixture_pid"
    rm -rf "$work"
}
trap cleanup EXIT

# One fixture for every phase: reflection off, as the tools use the descriptor set.
"$build/bin/crank-grpc-fixture" --listen 127.0.0.1:0 --reflection none 2> "$work/fixture.log" &
fixture_pid=$!
target=""
for _ in $(seq 1 100); do  # up to 10 s
    target="$(sed -n 's|.*listening on http://\(127\.0\.0\.1:[0-9]*\).*|\1|p' "$work/fixture.log")"
    [[ -n "$target" ]] && break
    kill -0 "$fixture_pid" 2>/dev/null || break
    sleep 0.1
done
[[ -n "$target" ]] || { echo "bench: the gRPC fixture did not start:" >&2; cat "$work/fixture.log" >&2; exit 1; }

# a. unary direct (its own 2 s of warm-up); a bad answer is counted in the line and fails below
unary_direct="$("$direct_client" unary --target "$target" --seconds "$seconds" \
    --in-flight "$connections")" || true
[[ -n "$unary_direct" ]] || { echo "bench: crank-grpc-direct unary failed" >&2; exit 1; }

# crankd: threads and the workspace's concurrent calls above the connections, as
# run-rest-unary.sh; one channel to the fixture, as the direct client. The window: max_items ends
# it (window_duration_ms, max_bytes and the idle upstream_timeout_ms are far out of the way);
# stats counts the ticks' colors (Tick has no JSON number: seq is an int64, a string).
grpc_config() {  # grpc_config METHOD
    echo '{"target": "'"$target"'", "method": "crank.fixture.v1.Fixture/'"$1"'", "descriptor_set": "'"$desc"'"}'
}
ops='{"name": "grpc_echo", "description": "Echo of the gRPC fixture", "protocol": "grpc",
      "config": '"$(grpc_config Echo)"', "execution": {"mode": "unary"}},
     {"name": "ticks_window", "description": "Ticks of the gRPC fixture, as a window",
      "protocol": "grpc", "config": '"$(grpc_config Ticks)"',
      "execution": {"mode": "window", "max_items": '"$messages"', "max_bytes": 100000000000,
                    "window_duration_ms": 600000, "upstream_timeout_ms": 60000,
                    "max_result_bytes": 1048576, "aggregation_mode": "stats",
                    "aggregation": {"key_paths": ["color"]}}}'
export CRANK_EXTRA_CONFIG="\"server\": {\"threads\": $((connections * 2)), \"queue\": 256}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_concurrent_calls\": $((connections * 2))}}]}, \"operations\": [$ops]"
export BENCH_WORK="$work" BENCH_TARGET="$target" BENCH_FIXTURE_PID="$fixture_pid"
"$root/tests/e2e/with-crankd.sh" "$build/bin/crankd" -- "$0" "$seconds" "$connections"
unary_crank="$(cat "$work/unary-crank.result")"
stream_direct="$(cat "$work/stream-direct.result")"
stream_crank="$(cat "$work/stream-crank.result")"

printf '%-13s %12s %10s %10s %6s   (%s s, %s in flight, Echo {"text": "bench"})\n' \
    unary requests/s p50 p99 bad "$seconds" "$connections"
read -r d_rps d_p50 d_p99 d_bad <<<"$unary_direct"
read -r c_rps c_p50 c_p99 c_bad c_errors _ <<<"$unary_crank"
printf '%-13s %12.0f %8.0fus %8.0fus %6d\n' direct "$d_rps" "$d_p50" "$d_p99" "$d_bad"
printf '%-13s %12.0f %8.0fus %8.0fus %6d   (wrk socket errors and non-2xx: %d)\n' crank \
    "$c_rps" "$c_p50" "$c_p99" "$c_bad" "$c_errors"
awk -v d="$unary_direct" -v c="$unary_crank" -v hz="$hz" -v s="$seconds" 'BEGIN {
    split(d, D, " "); split(c, C, " ")
    printf "unary: Crank/direct requests/s = %.2f   added latency: p50 %+.0fus p99 %+.0fus\n",
        C[1] / D[1], C[2] - D[2], C[3] - D[3]
    calls = C[1] * s
    printf "CPU per call (crank phase): crankd %.0fus (%.0f%% of one core), the fixture %.0fus\n",
        C[6] / hz * 1e6 / calls, 100 * C[6] / hz / s, C[7] / hz * 1e6 / calls
}'
awk -v n="$messages" -v p="$payload" -v d="$stream_direct" -v c="$stream_crank" -v hz="$hz" \
    -v rounds="$rounds" 'BEGIN {
    split(d, D, " "); split(c, C, " ")
    # D: messages/s, protobuf bytes/s, fixture ticks
    # C: elapsed_ms, wall us, item bytes (JSON), crankd ticks, fixture ticks, stop_reason
    win = n / (C[1] / 1e3); wall = n / (C[2] / 1e6)
    printf "\n%-25s %12s %8s %8s   (Ticks, %d messages, %d-byte padding, interval 0, best of %d)\n",
        "stream", "messages/s", "MB/s", "seconds", n, p, rounds
    printf "%-25s %12.0f %8.1f %8.3f   (protobuf bytes)\n", "direct", D[1], D[2] / 1e6, n / D[1]
    printf "%-25s %12.0f %8.1f %8.3f   (the items as JSON; stop_reason %s)\n",
        "crank window (elapsed_ms)", win, C[3] / (C[1] * 1e3), C[1] / 1e3, C[6]
    printf "%-25s %12.0f %8s %8.3f\n", "crank tools/call (wall)", wall, "", C[2] / 1e6
    printf "stream: Crank/direct messages/s = %.2f (wall clock of the call: %.2f)\n", win / D[1], wall / D[1]
    printf "CPU per 1000 messages: fixture %.1f ms (direct), %.1f ms (window); crankd %.1f ms (%.0f%% of one core)\n",
        D[3] / hz * 1e6 / n, C[5] / hz * 1e6 / n, C[4] / hz * 1e6 / n, 100 * (C[4] / hz) / (C[2] / 1e6)
}'
failed=0
if ((d_bad > 0)); then
    echo "bench: unary direct: $d_bad bad answers" >&2
    failed=1
fi
if ((c_bad > 0 || c_errors > 0)); then
    echo "bench: unary crank: $c_bad bad answers, $c_errors socket errors or non-2xx" >&2
    failed=1
fi
exit "$failed"
