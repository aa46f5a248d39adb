#!/usr/bin/env bash
# Soak (issue 12): a bounded run of mixed traffic against crankd, with crankd's RSS, open fds and
# threads sampled; all three must stay flat. crank-demo-upstream and crankd (bench/soak.json: the
# demo's unary, window, session and async_job operations; a temporary SQLite store) on free
# loopback ports; bench/soak.mjs (the official MCP TypeScript SDK client from tests/e2e) drives
# CLIENTS concurrent clients for DURATION seconds (unary calls, SSE and long-poll windows,
# sessions polled and stopped or abandoned, jobs finished or cancelled, MCP sessions and GET
# streams opened and closed), samples every INTERVAL seconds into samples.csv, and writes
# summary.txt and summary.json into the results directory (build/bench/soak-<timestamp>/).
#   bench/run-soak.sh [--duration S] [--clients N] [--interval S] [--settle S] [--kinds K,...]
#                     [--short] [--results DIR]
# --short: 60 s, samples every second (a check of the machinery; too short to judge slopes).
# Defaults: 600 s, 4 clients, a sample every 5 s, 35 s without traffic after the warm-up (the
# first 10%) and after the rest (crankd idle, every abandoned session expired, at both points).
# --kinds: some of unary, window_sse, window_longpoll, session, session_abandoned, job,
# job_cancelled, mcp_session, mcp_session_abandoned, get_stream (default: all of them).
# Exits 1 when RSS, fds or threads are not flat, or when a kind's error rate is above its limit
# (thresholds: bench/README.md, "Soak"; SOAK_* variables override them, see bench/soak.mjs).
# CRANK_BUILD_DIR: the build to run (default build/); CRANK_BENCH_NO_BUILD=1 runs its crankd and
# plugins as they are.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
node="$root/.tools/node/bin/node"

duration=600
clients=4
interval=5
settle=35
kinds=""
results=""
usage() {
    echo "usage: $0 [--duration S] [--clients N] [--interval S] [--settle S] [--kinds K,...] [--short] [--results DIR]" >&2
    exit 2
}
while (($#)); do
    case "$1" in
        --duration) duration=${2:-}; shift 2 || usage ;;
        --clients) clients=${2:-}; shift 2 || usage ;;
        --interval) interval=${2:-}; shift 2 || usage ;;
        --settle) settle=${2:-}; shift 2 || usage ;;
        --kinds) kinds=${2:-}; shift 2 || usage ;;
        --results) results=${2:-}; shift 2 || usage ;;
        --short) duration=60; interval=1; shift ;;
        -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
        *) usage ;;
    esac
done
[[ "$duration" =~ ^[1-9][0-9]*$ && "$clients" =~ ^[1-9][0-9]*$ && "$interval" =~ ^[0-9]+(\.[0-9]+)?$ &&
    "$settle" =~ ^[0-9]+$ && "$kinds" =~ ^[a-z_,]*$ ]] || usage
((clients <= 64)) || { echo "bench: at most 64 clients" >&2; exit 2; }

if [[ "${CRANK_BENCH_NO_BUILD:-0}" != 1 ]]; then
    if ! out="$("$root/scripts/build.sh" --target crankd crank-demo-upstream crank_rest crank_aggregators 2>&1)"; then
        echo "$out" >&2
        exit 1
    fi
fi
"$root/scripts/e2e-setup.sh"  # the SDK in tests/e2e/node_modules (quiet when present)

results="${results:-$build/bench/soak-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$results"
work="$(mktemp -d "${TMPDIR:-/tmp}/crank-bench-soak.XXXXXX")"
# The logs the waits below read exist before the processes that write them start.
: > "$work/upstream.log"
: > "$work/crankd.log"
upstream_pid=""
crankd_pid=""
driver_pid=""
crankd_status=""
# shellcheck source=bench/lib/process.sh
source "$root/bench/lib/process.sh"
# shellcheck disable=SC2317  # called by the traps
cleanup() {
    stop "$driver_pid" 10
    stop "$crankd_pid" 10
    stop "$upstream_pid" 10
    cp "$work/crankd.log" "$work/upstream.log" "$work/crank.json" "$results/" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck source=bench/lib/demo-upstream.sh
source "$root/bench/lib/demo-upstream.sh"
start_demo_upstream "$build" "$work"

# A connection holds a server thread while open (SSE streams excepted), and keep-alive is refused
# when under a quarter are free: room for each client's connections several times over.
threads=$((clients * 8 > 32 ? clients * 8 : 32))
sed -e "s|@UPSTREAM@|127.0.0.1:$upstream_port|g" -e "s|@STORE@|$work/crank.db|g" \
    -e "s|@THREADS@|$threads|g" "$root/bench/soak.json" > "$work/crank.json"
"$build/bin/crankd" --config "$work/crank.json" --listen 127.0.0.1:0 2> "$work/crankd.log" &
crankd_pid=$!
address=""
for _ in $(seq 1 200); do  # up to 20 s
    address="$(sed -n 's|.*listening on http://\(127\.0\.0\.1:[0-9]*\).*|\1|p' "$work/crankd.log")"
    [[ -n "$address" ]] && break
    kill -0 "$crankd_pid" 2>/dev/null || break
    sleep 0.1
done
[[ -n "$address" ]] || { echo "bench: crankd did not start listening:" >&2; cat "$work/crankd.log" >&2; exit 1; }
ready=""
for _ in $(seq 1 300); do
    ready="$(curl -sf "http://$address/readyz" 2>/dev/null)" && break
    ready=""
    kill -0 "$crankd_pid" 2>/dev/null || break
    sleep 0.1
done
[[ -n "$ready" ]] || { echo "bench: crankd is not ready: $(curl -s "http://$address/readyz")" >&2; exit 1; }

echo "bench: results in $results (crankd pid $crankd_pid on $address, upstream pid $upstream_pid)"
# The driver runs in the background so that a signal to this script is handled at once (bash
# runs a trap only once a foreground child has ended): the trap stops it by its pid.
CRANK_MCP_URL="http://$address/mcp" CRANKD_PID="$crankd_pid" \
    UPSTREAM_PID="$upstream_pid" UPSTREAM_PORT="$upstream_port" \
    SOAK_RESULTS="$results" SOAK_DURATION="$duration" SOAK_CLIENTS="$clients" \
    SOAK_INTERVAL="$interval" SOAK_SETTLE="$settle" SOAK_KINDS="$kinds" \
    "$node" "$root/bench/soak.mjs" &
driver_pid=$!
status=0
wait "$driver_pid" || status=$?
driver_pid=""

# crankd must still drain and exit 0 after all that.
if kill -0 "$crankd_pid" 2>/dev/null; then
    kill -TERM "$crankd_pid"
    crankd_status=0
    wait "$crankd_pid" || crankd_status=$?
else
    wait "$crankd_pid" 2>/dev/null || crankd_status=$?
    crankd_status="${crankd_status:-died}"
    echo "bench: crankd died during the run" >&2
fi
crankd_pid=""
warnings="$(grep -c ' warn ' "$work/crankd.log" || true)"
errors="$(grep -c ' error ' "$work/crankd.log" || true)"
echo "crankd: exit status $crankd_status after SIGTERM; its log: $warnings warnings, $errors errors" |
    tee -a "$results/summary.txt"
if [[ "$crankd_status" != 0 ]]; then
    tail -n 30 "$work/crankd.log" >&2
    status=1
fi
echo "bench: results in $results"
exit "$status"
