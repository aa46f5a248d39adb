# shellcheck shell=bash
# Sourced by the benches: stops a process they started, by its pid.
#   stop PID [SECONDS]
# SIGTERM, then up to SECONDS (default 5) for it to exit, then SIGKILL; reaps it. An empty PID or
# a process already gone is not an error.
# shellcheck disable=SC2317  # called by the benches' traps
stop() {
    local pid=$1 tenths=$((${2:-5} * 10))
    [[ -n "$pid" ]] || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 "$tenths"); do
            kill -0 "$pid" 2>/dev/null || break
            [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" == Z* ]] && break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}
