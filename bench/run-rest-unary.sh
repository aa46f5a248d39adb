#!/usr/bin/env bash
# One REST GET (GET /items/7 of crank-demo-upstream) three ways, one after another in one run, wrk
# with CONNECTIONS connections (default 32) for SECONDS each (default 10, after 2 s of warm-up):
#   direct  wrk -> crank-demo-upstream
#   nginx   wrk -> nginx (reverse proxy, keep-alive to the upstream) -> crank-demo-upstream
#   crank   wrk (MCP tools/call on one session) -> crankd -> rest plugin (unary) -> the upstream
# Prints requests/s, p50 and p99 of each, then the ratios (Crank : nginx, Crank : direct,
# nginx : direct) and the latency each proxy adds over direct. Every answer is checked (status 200
# and the item in the body; for Crank also "isError":false): a bad answer or a socket error makes
# the script exit 1.
#   bench/run-rest-unary.sh [SECONDS] [CONNECTIONS]
# CRANK_BUILD_DIR picks the build (default build/, configured by scripts/build.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=${1:-10}
connections=${2:-32}
build="${CRANK_BUILD_DIR:-$root/build}"
expect='"name":"nut-7"'  # what the upstream's item 7 holds

# measure NAME URL LUA [DURATION]: runs wrk; prints "NAME requests/s p50 p99 bad errors", the
# latencies in microseconds, bad = answers the script refused, errors = wrk's socket errors.
measure() {
    local name=$1 url=$2 lua=$3 duration=${4:-$seconds}
    local out
    out="$(EXPECT="$expect" wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$lua" "$url")"
    awk -v name="$name" '
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
        END { printf "%s %s %d %d %d %d\n", name, rps, p50, p99, bad + 0, errors + non2xx }
    ' <<<"$out"
}

# ---- inner: crankd runs (tests/e2e/with-crankd.sh); the crank phase, into $BENCH_RESULT ---------
if [[ -n "${CRANK_MCP_URL:-}" ]]; then
    # shellcheck source=bench/lib/mcp-session.sh
    source "$root/bench/lib/mcp-session.sh"
    session="$(open_mcp_session "$CRANK_MCP_URL")"
    [[ -n "$session" ]] || { echo "bench: initialize failed" >&2; exit 1; }
    export SESSION="$session"
    lua="$root/bench/rest-tools-call.lua"
    measure warmup "$CRANK_MCP_URL" "$lua" 2 >/dev/null
    measure crank "$CRANK_MCP_URL" "$lua" > "$BENCH_RESULT"
    exit 0
fi

# ---- outer: the upstream and nginx; direct and nginx phases; then crankd for the crank phase ----
"$root/scripts/install-deps.sh" --bench >/dev/null
if ! out="$("$root/scripts/build.sh" --target crankd crank-demo-upstream crank_rest crank_aggregators 2>&1)"; then
    echo "$out" >&2
    exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-bench-rest.XXXXXX")"
upstream_pid=""
nginx_pid=""
# shellcheck source=bench/lib/process.sh
source "$root/bench/lib/process.sh"
# shellcheck disable=SC2317  # called by the trap
cleanup() {
    stop "$nginx_pid"
    stop "$upstream_pid"
    rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=bench/lib/demo-upstream.sh
source "$root/bench/lib/demo-upstream.sh"
start_demo_upstream "$build" "$work"
upstream="http://127.0.0.1:$upstream_port"

# nginx as the floor of a reverse proxy: its own prefix, config, pid and logs in $work, in the
# foreground (daemon off) as our child, stopped by pid. worker_processes 2: one per core, as crankd
# (a thread pool) may use both cores too; see bench/README.md.
mkdir -p "$work/nginx/tmp"
nginx_port=""
for _ in $(seq 1 10); do  # a free loopback port: nginx cannot report the one port 0 would pick
    port=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
    cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/nginx/tmp/body;
    proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fastcgi;
    uwsgi_temp_path $work/nginx/tmp/uwsgi;
    scgi_temp_path $work/nginx/tmp/scgi;
    keepalive_requests 1000000;
    upstream demo {
        server 127.0.0.1:$upstream_port;
        keepalive 64;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://demo;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
CONF
    nginx -p "$work/nginx/" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" &
    nginx_pid=$!
    for _ in $(seq 1 50); do
        if curl -sf -o /dev/null "http://127.0.0.1:$port/health"; then
            nginx_port=$port
            break
        fi
        kill -0 "$nginx_pid" 2>/dev/null || break
        sleep 0.1
    done
    [[ -n "$nginx_port" ]] && break
    stop "$nginx_pid"  # the port was taken in between, most likely: another one
    nginx_pid=""
done
[[ -n "$nginx_port" ]] || { echo "bench: nginx did not start:" >&2; cat "$work/nginx/error.log" >&2; exit 1; }

lua="$root/bench/rest-get.lua"
measure warmup "$upstream/items/7" "$lua" 2 >/dev/null
direct="$(measure direct "$upstream/items/7" "$lua")"
measure warmup "http://127.0.0.1:$nginx_port/items/7" "$lua" 2 >/dev/null
proxied="$(measure nginx "http://127.0.0.1:$nginx_port/items/7" "$lua")"
# nginx's idle keep-alive connections would hold demo upstream threads during the crank phase
stop "$nginx_pid"
nginx_pid=""

# crankd: enough server threads for the connections (keep-alive is refused while fewer than a
# quarter are free), and a connection pool to the upstream at least as large as the load.
op='{"name": "rest_item", "description": "one item of the demo catalogue", "protocol": "rest",
  "input_schema": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}},
                   "required": ["id"]},
  "config": {"url": "'"$upstream"'/items/{{ id | url }}",
             "keep_alive": {"max_idle": '$((connections * 2))'}},
  "execution": {"mode": "unary"}}'
export CRANK_EXTRA_CONFIG="\"server\": {\"threads\": $((connections * 2)), \"queue\": 256}, \"auth\": {\"workspaces\": [{\"id\": \"default\", \"limits\": {\"max_concurrent_calls\": $((connections * 2))}}]}, \"operations\": [$op]"
export BENCH_RESULT="$work/crank.result"
"$root/tests/e2e/with-crankd.sh" "$build/bin/crankd" -- "$0" "$seconds" "$connections"
crank="$(cat "$BENCH_RESULT")"

printf '%-8s %12s %10s %10s %6s %7s   (%s s, %s connections, GET /items/7)\n' \
    what requests/s p50 p99 bad errors "$seconds" "$connections"
for line in "$direct" "$proxied" "$crank"; do
    awk '{ printf "%-8s %12.0f %8.0fus %8.0fus %6d %7d\n", $1, $2, $3, $4, $5, $6 }' <<<"$line"
done
awk -v d="$direct" -v n="$proxied" -v c="$crank" 'BEGIN {
    split(d, D, " "); split(n, N, " "); split(c, C, " ")
    printf "throughput: Crank/nginx = %.2f   Crank/direct = %.2f   nginx/direct = %.2f\n",
        C[2] / N[2], C[2] / D[2], N[2] / D[2]
    printf "added latency over direct: Crank p50 %+.0fus p99 %+.0fus   nginx p50 %+.0fus p99 %+.0fus\n",
        C[3] - D[3], C[4] - D[4], N[3] - D[3], N[4] - D[4]
}'
failed=0
for line in "$direct" "$proxied" "$crank"; do
    read -r name _ _ _ bad errors <<<"$line"
    if ((bad > 0 || errors > 0)); then
        echo "bench: $name: $bad bad answers, $errors socket errors or non-2xx" >&2
        failed=1
    fi
done
exit "$failed"
