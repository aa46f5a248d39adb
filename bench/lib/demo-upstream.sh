# Sourced by the REST benches: starts crank-demo-upstream on a free loopback port.
#   start_demo_upstream BUILD_DIR WORK_DIR
# sets upstream_pid and upstream_port, or prints the upstream's log and exits 1. The caller stops
# it by its pid (its trap).
start_demo_upstream() {
    local build=$1 work=$2
    "$build/bin/crank-demo-upstream" --listen 127.0.0.1:0 2> "$work/upstream.log" &
    upstream_pid=$!
    upstream_port=""
    for _ in $(seq 1 100); do  # up to 10 s
        upstream_port="$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/upstream.log")"
        [[ -n "$upstream_port" ]] && break
        kill -0 "$upstream_pid" 2>/dev/null || break
        sleep 0.1
    done
    [[ -n "$upstream_port" ]] || { echo "bench: the demo upstream did not start:" >&2; cat "$work/upstream.log" >&2; exit 1; }
}
