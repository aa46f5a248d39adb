#!/usr/bin/env bash
# Self-test of modern-reference-server.mjs: starts it over HTTP on a free loopback port, runs the
# official conformance suite against it directly (run-conformance.sh), then stops it by pid.
#
#   tests/e2e/run-modern-reference.sh [2026|tasks|2025|all] [--modern-only]
#   tests/e2e/run-modern-reference.sh -- SCENARIO...     (at CONFORMANCE_SPEC_VERSION, default 2026-07-28)
#
# 2026: the MRTR list of tests/CMakeLists.txt (CRANK_CONFORMANCE_2026_SCENARIOS) at 2026-07-28.
# tasks: the Tasks extension scenarios (e2e.conformance_2026_tasks), at the suite's own version
#   (2026-07-28 for extension scenarios; an explicit --spec-version makes the suite skip them).
# 2025: the lists of run-federated-conformance.sh at 2025-11-25 (active, 2025-11-25-only, pending).
# all (the default): the three. Exits 0 only when every scenario passed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
node="$root/.tools/node/bin/node"

# shellcheck source=tests/e2e/scenario-lists.sh
source "$here/scenario-lists.sh"
mrtr=("${modern_common[@]}" "${modern_fixtures[@]}")
tasks=("${tasks_extension[@]}")
classic=("${classic_common[@]}" "${classic_only_2025_11_25[@]}" "${classic_pending[@]}")

which="${1:-all}"
(($# > 0)) && shift
flags=()
scenarios=()
if [[ "$which" == -- ]]; then
    scenarios=("$@")
else
    [[ "${1:-}" == --modern-only ]] && flags+=(--modern-only)
fi
case "$which" in
--) ;;
2026 | tasks | 2025 | all) ;;
*)
    echo "usage: $0 [2026|tasks|2025|all] [--modern-only] | $0 -- SCENARIO..." >&2
    exit 2
    ;;
esac

"$root/scripts/e2e-setup.sh"
out="$(mktemp)"
"$node" "$here/modern-reference-server.mjs" http 0 "${flags[@]}" >"$out" 2>"$out.err" &
pid=$!
cleanup() {
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -f "$out" "$out.err"
}
trap cleanup EXIT
url=""
for _ in $(seq 1 100); do
    url="$(sed -n 's/^listening //p' "$out")"
    [[ -n "$url" ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
[[ -n "$url" ]] || {
    echo "run-modern-reference: the server did not start" >&2
    cat "$out.err" >&2
    exit 1
}

status=0
run() { # VERSION SCENARIO... (VERSION "": the suite's own choice, as e2e.conformance_2026_tasks)
    local version="$1"
    shift
    echo "== spec version ${version:-chosen by the suite}"
    if [[ -n "$version" ]]; then
        CONFORMANCE_SPEC_VERSION="$version" "$here/run-conformance.sh" "$url" "$@" || status=1
    else
        env -u CONFORMANCE_SPEC_VERSION "$here/run-conformance.sh" "$url" "$@" || status=1
    fi
}
case "$which" in
--) run "${CONFORMANCE_SPEC_VERSION:-2026-07-28}" "${scenarios[@]}" ;;
2026) run 2026-07-28 "${mrtr[@]}" ;;
tasks) run "" "${tasks[@]}" ;;
2025) run 2025-11-25 "${classic[@]}" ;;
all)
    run 2026-07-28 "${mrtr[@]}"
    run "" "${tasks[@]}"
    run 2025-11-25 "${classic[@]}"
    ;;
esac
if ((status != 0)) && [[ -s "$out.err" ]]; then
    echo "-- the server's stderr (last 40 lines):"
    tail -n 40 "$out.err"
fi
exit "$status"
