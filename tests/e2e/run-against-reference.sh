#!/usr/bin/env bash
# Self-test of the e2e harness: starts reference-server.mjs (official TypeScript SDK server) on a
# free 127.0.0.1 port, runs conformance scenarios and the SDK client tests against it, stops it.
#
#   tests/e2e/run-against-reference.sh              the seven scenarios crankd targets first
#   tests/e2e/run-against-reference.sh --all        every stateful (2025-xx) server scenario
#   tests/e2e/run-against-reference.sh SCENARIO...  the named scenarios
#
# Exits 0 only when every scenario and every SDK client test passed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
"$root/scripts/e2e-setup.sh"
export PATH="$root/.tools/node/bin:$PATH"
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"

if [[ "${1:-}" == --all ]]; then
    # Scenario lines look like "  - NAME [2025-06-18,2025-11-25]"; keep those of a 2025 revision.
    mapfile -t scenarios < <(node "$cli" list --server |
        sed -nE 's/^  - ([a-z0-9-]+) \[(.*2025-.*)\]$/\1/p')
elif (($# > 0)); then
    scenarios=("$@")
else
    scenarios=(server-initialize ping logging-set-level tools-list server-sse-multiple-streams
        dns-rebinding-protection server-session-lifecycle)
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/crank-e2e-ref.XXXXXX")"
pid=""
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

: >"$tmp/server.out"  # exists before the server opens it: the wait below reads it (set -e)
node "$here/reference-server.mjs" 0 >"$tmp/server.out" 2>"$tmp/server.err" &
pid=$!
url=""
for _ in $(seq 1 100); do
    url="$(sed -n 's/^listening //p' "$tmp/server.out")"
    [[ -n "$url" ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$url" ]]; then
    echo "run-against-reference: the reference server did not start" >&2
    cat "$tmp/server.err" >&2
    exit 1
fi
echo "reference server: $url (pid $pid)"

rc=0
"$here/run-conformance.sh" "$url" "${scenarios[@]}" || rc=1
CRANK_MCP_URL="$url" timeout --kill-after=5 300 \
    node --test --test-timeout=60000 "$here/sdk-client.test.mjs" || rc=1
exit "$rc"
