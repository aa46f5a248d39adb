#!/usr/bin/env bash
# Two builds of crankd side by side on the unary REST call of run-rest-unary.sh (MCP tools/call of
# GET /items/7): is the candidate slower than the base? Both crankds run at once, each with its own
# crank-demo-upstream (a shared upstream would serve the second one warmer or colder), and wrk
# (-t2 -cCONNECTIONS, the lua script of run-rest-unary.sh) drives them in SLICES alternating slices
# of SECONDS each (A B, B A, A B, ...), so that the machine's noise, which drifts over seconds,
# falls on both alike. For each side: requests/s over its slices, crankd's CPU per request (user +
# system from /proc/PID/stat, over its slices only) and its threads' context switches per request
# (/proc/PID/task/*/status); then candidate : base for throughput and CPU, and the range
# of the per-pair ratios. Every answer is checked as in run-rest-unary.sh: a bad answer or a socket
# error makes the script exit 1.
#   bench/run-rest-unary-ab.sh [--slices N] [--seconds S] [--connections C] BASE_BUILD CANDIDATE_BUILD
# Defaults: 10 slices of 2 s, 32 connections. BASE_BUILD and CANDIDATE_BUILD are build directories
# (each with bin/crankd and its plugins, e.g. a worktree of an older commit built with
# `scripts/build.sh --target crankd crank-demo-upstream crank_rest crank_aggregators`); both
# upstreams are the candidate's crank-demo-upstream. Nothing is built here.
# CRANK_AB_BASE_ENV / CRANK_AB_CANDIDATE_ENV: extra VAR=value words for that side's crankd (env).
# CRANK_AB_BASE_SERVER / CRANK_AB_CANDIDATE_SERVER: extra members of that side's "server" object
# (e.g. '"keep_alive_wait_us": 0'), to compare two settings on one build (give it twice);
# CRANK_AB_BASE_CONFIG / CRANK_AB_CANDIDATE_CONFIG: extra top-level members of that side's config
# (e.g. '"audit": {"write_delay_ms": 20}').
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
slices=10
seconds=2
connections=32
usage() {
    echo "usage: $0 [--slices N] [--seconds S] [--connections C] BASE_BUILD CANDIDATE_BUILD" >&2
    exit 2
}
while (($#)); do
    case "$1" in
        --slices) slices=${2:-}; shift 2 || usage ;;
        --seconds) seconds=${2:-}; shift 2 || usage ;;
        --connections) connections=${2:-}; shift 2 || usage ;;
        -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
        -*) usage ;;
        *) break ;;
    esac
done
(($# == 2)) || usage
[[ "$slices" =~ ^[1-9][0-9]?$ && "$seconds" =~ ^[1-9][0-9]?$ && "$connections" =~ ^[1-9][0-9]{0,2}$ ]] || usage
builds=("$(cd "$1" && pwd)" "$(cd "$2" && pwd)")
for b in "${builds[@]}"; do
    [[ -x "$b/bin/crankd" ]] || { echo "bench: no $b/bin/crankd" >&2; exit 2; }
done
[[ -x "${builds[1]}/bin/crank-demo-upstream" ]] || { echo "bench: no ${builds[1]}/bin/crank-demo-upstream" >&2; exit 2; }
command -v wrk >/dev/null || { echo "bench: wrk is missing (scripts/install-deps.sh --bench)" >&2; exit 2; }
expect='"name":"nut-7"'
ticks_per_second="$(getconf CLK_TCK)"

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-bench-ab.XXXXXX")"
upstream_pids=("" "")
crankd_pids=("" "")
# shellcheck source=bench/lib/process.sh
source "$root/bench/lib/process.sh"
# shellcheck disable=SC2317  # called by the trap
cleanup() {
    local i
    for i in 0 1; do
        stop "${crankd_pids[$i]}" 10
        stop "${upstream_pids[$i]}"
    done
    rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=bench/lib/demo-upstream.sh
source "$root/bench/lib/demo-upstream.sh"
# shellcheck source=bench/lib/mcp-session.sh
source "$root/bench/lib/mcp-session.sh"
urls=("" "")
sessions=("" "")
side_env=("${CRANK_AB_BASE_ENV:-}" "${CRANK_AB_CANDIDATE_ENV:-}")
side_config=("${CRANK_AB_BASE_CONFIG:+, $CRANK_AB_BASE_CONFIG}" "${CRANK_AB_CANDIDATE_CONFIG:+, $CRANK_AB_CANDIDATE_CONFIG}")
side_server=("${CRANK_AB_BASE_SERVER:+, $CRANK_AB_BASE_SERVER}" "${CRANK_AB_CANDIDATE_SERVER:+, $CRANK_AB_CANDIDATE_SERVER}")
for i in 0 1; do
    mkdir -p "$work/$i"
    start_demo_upstream "${builds[1]}" "$work/$i"
    upstream_pids[i]=$upstream_pid
    # As run-rest-unary.sh: threads for every connection, a pool to the upstream as large as the load.
    cat > "$work/$i/crank.json" <<CONF
{"store": {"path": "$work/$i/crank.db"},
 "server": {"threads": $((connections * 2)), "queue": 256${side_server[$i]}},
 "auth": {"workspaces": [{"id": "default", "limits": {"max_concurrent_calls": $((connections * 2))}}]},
 "operations": [{"name": "rest_item", "description": "one item of the demo catalogue", "protocol": "rest",
   "input_schema": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}}, "required": ["id"]},
   "config": {"url": "http://127.0.0.1:$upstream_port/items/{{ id | url }}", "keep_alive": {"max_idle": $((connections * 2))}},
   "execution": {"mode": "unary"}}]${side_config[$i]}}
CONF
    : > "$work/$i/crankd.log"
    # shellcheck disable=SC2086  # the side's VAR=value words, split on purpose
    env ${side_env[$i]} "${builds[$i]}/bin/crankd" --config "$work/$i/crank.json" --listen 127.0.0.1:0 \
        2> "$work/$i/crankd.log" &
    crankd_pids[i]=$!
    address=""
    for _ in $(seq 1 200); do
        address="$(sed -n 's|.*listening on http://\(127\.0\.0\.1:[0-9]*\).*|\1|p' "$work/$i/crankd.log")"
        [[ -n "$address" ]] && curl -sf -o /dev/null "http://$address/readyz" && break
        kill -0 "${crankd_pids[$i]}" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z "$address" ]] || ! curl -sf -o /dev/null "http://$address/readyz"; then
        echo "bench: crankd of ${builds[$i]} did not start:" >&2
        cat "$work/$i/crankd.log" >&2
        exit 1
    fi
    urls[i]="http://$address/mcp"
    sessions[i]="$(open_mcp_session "${urls[$i]}")"
    [[ -n "${sessions[$i]}" ]] || { echo "bench: initialize failed on ${urls[$i]}" >&2; exit 1; }
done

# cpu_ticks PID: user + system time of the process, in clock ticks.
cpu_ticks() {
    # The command name (field 2) is in parentheses and may hold spaces: count from after it.
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# context_switches PID: voluntary and involuntary switches of all the process's live threads.
context_switches() {
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n + 0 }'
}

# slice SIDE DURATION: wrk at that side; prints "requests seconds bad errors cpu_ticks switches".
slice() {
    local side=$1 duration=$2 before after switches_before switches_after out
    switches_before="$(context_switches "${crankd_pids[$side]}")"
    before="$(cpu_ticks "${crankd_pids[$side]}")"
    out="$(SESSION="${sessions[$side]}" EXPECT="$expect" wrk -t2 -c"$connections" -d"${duration}s" \
        -s "$root/bench/rest-tools-call.lua" "${urls[$side]}")"
    after="$(cpu_ticks "${crankd_pids[$side]}")"
    switches_after="$(context_switches "${crankd_pids[$side]}")"
    awk -v cpu=$((after - before)) -v switches=$((switches_after - switches_before)) '
        / requests in / { requests = $1; t = $4; sub(/s,?$/, "", t) }
        /^bad answers:/ { bad = $3 }
        /Non-2xx or 3xx responses:/ { non2xx = $NF }
        /Socket errors:/ { gsub(",", ""); errors = $4 + $6 + $8 + $10 }
        END { printf "%d %s %d %d %d %d\n", requests, t, bad + 0, errors + non2xx, cpu, switches }
    ' <<<"$out"
}

slice 0 1 >/dev/null  # warm-up, both sides
slice 1 1 >/dev/null
: > "$work/slices"
for ((s = 0; s < slices; s++)); do
    if ((s % 2 == 0)); then order="0 1"; else order="1 0"; fi
    for side in $order; do
        echo "$s $side $(slice "$side" "$seconds")" >> "$work/slices"
    done
done

awk -v base="${builds[0]}" -v cand="${builds[1]}" -v hz="$ticks_per_second" -v c="$connections" '
    { req[$2] += $3; secs[$2] += $4; bad[$2] += $5; err[$2] += $6; cpu[$2] += $7
      sw[$2] += $8; rps[$1, $2] = $3 / $4 }
    END {
        printf "%-10s %12s %14s %14s %6s %7s   (%d connections, %d slices each)\n",
            "side", "requests/s", "CPU us/request", "switches/req", "bad", "errors", c, NR / 2
        name[0] = "base"; name[1] = "candidate"
        for (i = 0; i < 2; i++) {
            r[i] = req[i] / secs[i]; u[i] = cpu[i] * 1000000 / hz / req[i]
            printf "%-10s %12.0f %14.1f %14.2f %6d %7d   %s\n", name[i], r[i], u[i], sw[i] / req[i], bad[i], err[i], (i ? cand : base)
        }
        lo = 1e9; hi = 0
        for (s = 0; s < NR / 2; s++) {
            q = rps[s, 1] / rps[s, 0]; if (q < lo) lo = q; if (q > hi) hi = q
        }
        printf "candidate/base: throughput %.3f (pairs %.3f..%.3f)   CPU per request %.3f\n",
            r[1] / r[0], lo, hi, u[1] / u[0]
    }' "$work/slices"
awk '$5 > 0 || $6 > 0 { bad = 1 } END { exit bad }' "$work/slices" ||
    { echo "bench: bad answers or socket errors (see above)" >&2; exit 1; }
