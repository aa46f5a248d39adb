#!/usr/bin/env bash
# The GraphQL plugin against tests/e2e/graphql-fixture.mjs (graphql-js on node:http, one
# single-threaded node process), each figure next to the same POST sent directly, in one run, one
# fixture, wrk driving every phase with the same script (bench/graphql-post.lua):
#   a. item direct   wrk, CONNECTIONS connections: POST /graphql of
#                    query Item($id: ID!) { item(id: $id) { id name color price } }, id "i7"
#   b. item crank    wrk, CONNECTIONS connections: MCP tools/call of a unary graphql tool (that
#                    query) on one MCP session -> crankd -> graphql plugin -> the fixture
#   c. list direct   wrk, BIG_CONNECTIONS connections: POST of bigList(count: ITEMS) { id name
#                    color price } (ITEMS synthetic items in one response)
#   d. list crank    wrk, BIG_CONNECTIONS connections: tools/call of a window tool over that query
#                    (data_path bigList, items_path data, done_path ends it after the one
#                    response, stats aggregation counting color)
# Each phase runs 2 s of warm-up (the first one FIXTURE_WARMUP s) then SECONDS (default 10); a and
# b at CONNECTIONS (default 32), c and d at BIG_CONNECTIONS. Printed: requests/s, p50, p99 of each
# (items/s for c and d), the CPU time crankd and the fixture spent per 1000 requests (per 1000
# items for c and d) and their share of one core, how busy the machine was, then the ratios
# Crank : direct. Every answer is checked (status 200 and the data; for Crank also
# "isError":false; for the lists the last item, or the window's item_count ITEMS, no drops,
# stop_reason upstream_end): a bad answer or a socket error makes the script exit 1.
#   bench/run-graphql.sh [SECONDS] [CONNECTIONS]
# CRANK_BENCH_ITEMS: ITEMS (default 10000, at most 100000); CRANK_BENCH_BIG_CONNECTIONS:
# BIG_CONNECTIONS (default 4); CRANK_BENCH_NO_LIST=1 skips c and d; CRANK_BENCH_ROUNDS: rounds of
# (direct, crank) pairs, the best of each phase kept (default 1); CRANK_BENCH_FIXTURE_WARMUP:
# FIXTURE_WARMUP (default 5).
# CRANK_BUILD_DIR picks the build (default build/, configured by scripts/build.sh);
# CRANK_BENCH_NO_BUILD=1 runs it as it is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=${1:-10}
connections=${2:-32}
items=${CRANK_BENCH_ITEMS:-10000}
big_connections=${CRANK_BENCH_BIG_CONNECTIONS:-4}
no_list=${CRANK_BENCH_NO_LIST:-0}
rounds=${CRANK_BENCH_ROUNDS:-1}
fixture_warmup=${CRANK_BENCH_FIXTURE_WARMUP:-5}
build="${CRANK_BUILD_DIR:-$root/build}"
node="$root/.tools/node/bin/node"
lua="$root/bench/graphql-post.lua"
# The plugin's Accept; the direct POST sends the same, so that the fixture answers alike.
graphql_accept='application/graphql-response+json, application/json;q=0.9'
mcp_accept='application/json, text/event-stream'

# shellcheck disable=SC2016  # GraphQL variables, not shell ones
item_document='query Item($id: ID!) { item(id: $id) { id name color price } }'
# Seed item i7 of the fixture (SEED in tests/e2e/graphql-fixture.mjs), as graphql-js prints it.
item_data='{"item":{"id":"i7","name":"Blue Jeans","color":"BLUE","price":49.9}}'
# shellcheck disable=SC2016
list_document='query Big($count: Int!) { bigList(count: $count) { id name color price } }'

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }  # utime + stime of PID, clock ticks
machine_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6; exit }' /proc/stat; }  # busy idle
hz="$(getconf CLK_TCK)"

# ---- inner: crankd runs (tests/e2e/with-crankd.sh); every phase, into $BENCH_WORK/*.rounds -----
if [[ -n "${CRANK_MCP_URL:-}" ]]; then
    work="$BENCH_WORK"
    fixture_url="$BENCH_FIXTURE_URL"
    # shellcheck source=bench/lib/mcp-session.sh
    source "$root/bench/lib/mcp-session.sh"
    session="$(open_mcp_session "$CRANK_MCP_URL")"
    [[ -n "$session" ]] || { echo "bench: initialize failed" >&2; exit 1; }

    # check URL BODY ACCEPT SESSION EXPECT...: one POST with curl; exits when the answer is not
    # 200 with every EXPECT (and, with a SESSION, "isError":false). A tool that fails would
    # otherwise only show as a count of bad answers.
    check() {
        local url=$1 body=$2 accept=$3 sid=$4 answer status
        local -a headers=(-H 'Content-Type: application/json' -H "Accept: $accept")
        [[ -n "$sid" ]] && headers+=(-H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25')
        shift 4
        answer="$(curl -sS --max-time 60 -w '\n%{http_code}' "${headers[@]}" "$url" -d "$body")"
        status="${answer##*$'\n'}"
        answer="${answer%$'\n'*}"
        local ok=1 text
        [[ "$status" == 200 ]] || ok=0
        [[ -z "$sid" || "$answer" == *'"isError":false'* ]] || ok=0
        for text in "$@"; do
            [[ "$answer" == *"$text"* ]] || ok=0
        done
        if ((!ok)); then
            echo "bench: POST $url answered $status, not as expected ($*):" >&2
            head -c 2000 <<<"$answer" >&2
            echo >&2
            exit 1
        fi
    }

    # measure NAME URL BODY ACCEPT SID CONNS EXPECT [WARMUP]: WARMUP (default 2) s of wrk, then
    # SECONDS; appends "requests/s p50_us p99_us bad errors crankd_ticks fixture_ticks
    # machine_busy_ticks machine_idle_ticks" to $work/NAME.rounds (a line per round).
    measure() {
        local name=$1 url=$2 body=$3 accept=$4 sid=$5 conns=$6 expect=$7 warmup=${8:-2} out c0 f0 m0
        run() {
            BODY="$body" ACCEPT="$accept" SESSION="$sid" TOOL="${sid:+1}" EXPECT="$expect" \
                wrk -t2 -c"$conns" -d"${1}s" --latency -s "$lua" "$url"
        }
        run "$warmup" > /dev/null
        c0="$(cpu_ticks "$CRANKD_PID")"
        f0="$(cpu_ticks "$BENCH_FIXTURE_PID")"
        m0="$(machine_ticks)"
        out="$(run "$seconds")"
        # the CPU time crankd, the fixture and the whole machine spent in the measured seconds
        read -r mb mi <<<"$(machine_ticks)"
        awk -v c="$(($(cpu_ticks "$CRANKD_PID") - c0))" -v f="$(($(cpu_ticks "$BENCH_FIXTURE_PID") - f0))" \
            -v mb="$((mb - ${m0% *}))" -v mi="$((mi - ${m0#* }))" '
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
            END { printf "%s %d %d %d %d %d %d %d %d\n", rps, p50, p99, bad + 0, errors + non2xx, c, f, mb, mi }
        ' <<<"$out" >> "$work/$name.rounds"
    }

    # a and b: the item query, direct then through crankd
    direct_body='{"query":"'"$item_document"'","operationName":"Item","variables":{"id":"i7"}}'
    tool_body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gql_item","arguments":{"id":"i7"}}}'
    check "$fixture_url" "$direct_body" "$graphql_accept" "" "{\"data\":$item_data}"
    check "$CRANK_MCP_URL" "$tool_body" "$mcp_accept" "$session" "$item_data"
    # The fixture's first seconds are slower (V8 compiles graphql-js as it runs): a longer warm-up
    # before the first phase, so that it does not handicap the direct side.
    for round in $(seq 1 "$rounds"); do
        measure item-direct "$fixture_url" "$direct_body" "$graphql_accept" "" "$connections" \
            "{\"data\":$item_data}" "$((round == 1 ? fixture_warmup : 2))"
        measure item-crank "$CRANK_MCP_URL" "$tool_body" "$mcp_accept" "$session" "$connections" \
            "$item_data"
    done

    # c and d: the list, direct then as a window through crankd
    if [[ "$no_list" != 1 ]]; then
        last="{\"id\":\"b$((items - 1))\",\"name\":\"Big item $((items - 1))\""
        direct_body='{"query":"'"$list_document"'","operationName":"Big","variables":{"count":'"$items"'}}'
        tool_body='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gql_big","arguments":{"count":'"$items"'}}}'
        # the window: every item counted, none dropped, ended by done_path (max_items is one more
        # than the list: reaching it would say max_items and has_more)
        window_expect="\"item_count\":$items,\"dropped_count\":0"$'\n'"\"stop_reason\":\"upstream_end\""
        check "$fixture_url" "$direct_body" "$graphql_accept" "" '{"data":{"bigList":[' "$last"
        check "$CRANK_MCP_URL" "$tool_body" "$mcp_accept" "$session" \
            "\"item_count\":$items,\"dropped_count\":0" '"stop_reason":"upstream_end"'
        for _ in $(seq 1 "$rounds"); do
            measure list-direct "$fixture_url" "$direct_body" "$graphql_accept" "" \
                "$big_connections" '{"data":{"bigList":['$'\n'"$last"
            measure list-crank "$CRANK_MCP_URL" "$tool_body" "$mcp_accept" "$session" \
                "$big_connections" "$window_expect"
        done
    fi
    exit 0
fi

# ---- outer: the fixture, then crankd for every phase; the report ------------------------------
command -v wrk > /dev/null || "$root/scripts/install-deps.sh" --bench > /dev/null
if [[ "${CRANK_BENCH_NO_BUILD:-0}" != 1 ]]; then
    if ! out="$("$root/scripts/build.sh" --target crankd crank_graphql crank_aggregators 2>&1)"; then
        echo "$out" >&2
        exit 1
    fi
    "$root/scripts/e2e-setup.sh"  # graphql-js in tests/e2e/node_modules (quiet when present)
fi
((items >= 1 && items <= 100000)) || { echo "bench: CRANK_BENCH_ITEMS must be 1..100000" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-bench-graphql.XXXXXX")"
fixture_pid=""
# shellcheck source=bench/lib/process.sh
source "$root/bench/lib/process.sh"
# shellcheck disable=SC2317  # called by the trap
cleanup() {
    stop "$fixture_pid"
    rm -rf "$work"
}
trap cleanup EXIT

# One fixture for every phase, started before crankd: crankd introspects it when the config loads.
"$node" "$root/tests/e2e/graphql-fixture.mjs" 0 2> "$work/fixture.log" &
fixture_pid=$!
address=""
for _ in $(seq 1 100); do  # up to 10 s
    address="$(sed -n 's|.*listening on http://\(127\.0\.0\.1:[0-9]*\).*|\1|p' "$work/fixture.log")"
    [[ -n "$address" ]] && break
    kill -0 "$fixture_pid" 2>/dev/null || break
    sleep 0.1
done
[[ -n "$address" ]] || { echo "bench: the GraphQL fixture did not start:" >&2; cat "$work/fixture.log" >&2; exit 1; }
fixture_url="http://$address/graphql"

# crankd: threads, the workspace's concurrent calls and the plugin's idle connections above the
# connections, as run-rest-unary.sh. The window: one POST (done_path on the list: the window ends
# after the first response), max_items ITEMS + 1; max_bytes, window_duration_ms and the response bound
# far out of the way; stats counts the items' colors.
ops='{"name": "gql_item", "description": "one item of the GraphQL fixture", "protocol": "graphql",
      "config": {"endpoint": "'"$fixture_url"'", "document": "'"$item_document"'",
                 "keep_alive": {"max_idle": '$((connections * 2))'}},
      "execution": {"mode": "unary"}},
     {"name": "gql_big", "description": "bigList of the GraphQL fixture, as a window",
      "protocol": "graphql",
      "config": {"endpoint": "'"$fixture_url"'", "document": "'"$list_document"'",
                 "data_path": "bigList", "max_response_bytes": 67108864,
                 "keep_alive": {"max_idle": '$((big_connections * 2))'}},
      "execution": {"mode": "window", "items_path": "data", "done_path": "data",
                    "max_items": '"$((items + 1))"', "max_bytes": 100000000000,
                    "window_duration_ms": 600000, "upstream_timeout_ms": 60000,
                    "max_result_bytes": 1048576, "aggregation_mode": "stats",
                    "aggregation": {"key_paths": ["color"]}}}'
threads=$((connections > big_connections ? connections * 2 : big_connections * 2))
export CRANK_EXTRA_CONFIG="\"server\": {\"threads\": $threads, \"queue\": 256}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_concurrent_calls\": $threads}}]}, \"operations\": [$ops]"
export BENCH_WORK="$work" BENCH_FIXTURE_URL="$fixture_url" BENCH_FIXTURE_PID="$fixture_pid"
"$root/tests/e2e/with-crankd.sh" "$build/bin/crankd" -- "$0" "$seconds" "$connections"

phases=(item-direct item-crank)
[[ "$no_list" != 1 ]] && phases+=(list-direct list-crank)
# the best round of each phase (highest requests/s) into $work/NAME.result; bad answers and
# errors summed over the rounds
for name in "${phases[@]}"; do
    awk '{ bad += $4; errors += $5; if (NR == 1 || $1 > best) { best = $1; line = $0 } }
         END { split(line, L, " "); L[4] = bad; L[5] = errors; out = L[1]
               for (i = 2; i <= 9; i++) out = out " " L[i]; print out }' \
        "$work/$name.rounds" > "$work/$name.result"
done

# row NAME LINE: one line of the table
row() {
    local per=1
    [[ "$1" == list-* ]] && per=$items
    awk -v n="$1" -v line="$2" -v hz="$hz" -v s="$seconds" -v per="$per" 'BEGIN {
        split(line, L, " ")  # rps p50 p99 bad errors crankd fixture machine_busy machine_idle
        units = L[1] * s * per  # requests, or items of the lists
        printf "%-12s %10.0f %9.0f %8.1fms %8.1fms %4d %6d %7.1fms %4.0f%% %8.1fms %4.0f%% %5.0f%%\n",
            n, L[1], L[1] * per, L[2] / 1e3, L[3] / 1e3, L[4], L[5],
            L[6] / hz * 1e6 / units, 100 * L[6] / hz / s, L[7] / hz * 1e6 / units,
            100 * L[7] / hz / s, 100 * L[8] / (L[8] + L[9])
    }'
}
printf '%-12s %10s %9s %10s %10s %4s %6s %15s %15s %6s\n' what requests/s items/s p50 p99 bad \
    errors 'crankd CPU' 'fixture CPU' busy
for name in "${phases[@]}"; do
    if ((rounds > 1)); then
        r=0
        while read -r line; do
            r=$((r + 1))
            row "$name#$r" "$line"
        done < "$work/$name.rounds"
    fi
    row "$name" "$(cat "$work/$name.result")"
done
echo "CPU: time per 1000 requests (per 1000 items for list-*), and the share of one core over the"
echo "phase; busy: both cores, everything on the machine (wrk, other jobs) included"
((rounds > 1)) && echo "the rows without #: the best of $rounds rounds"
echo "item: query Item(\$id: ID!) { item(id: \"i7\") { id name color price } }, $seconds s, $connections connections"
[[ "$no_list" != 1 ]] && echo "list: bigList(count: $items) { id name color price }, a window tool call per request, $seconds s, $big_connections connections"
ratio() {  # ratio LABEL DIRECT CRANK
    awk -v l="$1" -v d="$(cat "$work/$2.result")" -v c="$(cat "$work/$3.result")" 'BEGIN {
        split(d, D, " "); split(c, C, " ")
        printf "%s: Crank/direct = %.2f   added latency: p50 %+.1fms p99 %+.1fms\n",
            l, C[1] / D[1], (C[2] - D[2]) / 1e3, (C[3] - D[3]) / 1e3
    }'
}
ratio item item-direct item-crank
[[ "$no_list" != 1 ]] && ratio "list (items/s)" list-direct list-crank
failed=0
for name in "${phases[@]}"; do
    read -r _ _ _ bad errors _ < "$work/$name.result"
    if ((bad > 0 || errors > 0)); then
        echo "bench: $name: $bad bad answers, $errors socket errors or non-2xx" >&2
        failed=1
    fi
done
exit "$failed"
