#!/usr/bin/env bash
# Installs the end-to-end test dependencies (tests/e2e: the official MCP conformance suite and the
# official TypeScript SDK, pinned by tests/e2e/package-lock.json) with the project's own Node.js
# from .tools/node (scripts/install-deps.sh puts it there). Never uses a system or global node.
#
# Idempotent and quiet: runs `npm ci` only when tests/e2e/node_modules is missing or older than
# package-lock.json (or package.json), and prints nothing when all is well. On failure it prints
# why, with npm's log, and exits non-zero. Safe to run from several test processes at once (flock).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
e2e="$root/tests/e2e"
node_bin="$root/.tools/node/bin"
stamp="$e2e/node_modules/.crank-e2e-installed"

fail() {
    echo "e2e-setup: $*" >&2
    exit 1
}

[[ -x "$node_bin/node" && -x "$node_bin/npm" ]] ||
    fail "no Node.js in $node_bin: run scripts/install-deps.sh first"
export PATH="$node_bin:$PATH"

major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" ||
    fail "$node_bin/node does not run"
((major >= 22)) || fail "Node.js >= 22 required in $node_bin, found $(node --version)"

[[ -f "$e2e/package.json" && -f "$e2e/package-lock.json" ]] ||
    fail "missing $e2e/package.json or package-lock.json"

up_to_date() {
    [[ -f "$stamp" && ! "$e2e/package-lock.json" -nt "$stamp" && ! "$e2e/package.json" -nt "$stamp" ]]
}

up_to_date && exit 0

command -v flock >/dev/null || fail "flock (util-linux) is required"
exec 9>"$e2e/.e2e-setup.lock"
flock -w 600 9 || fail "timed out waiting for another e2e-setup to finish"
up_to_date && exit 0 # another process installed while this one waited

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! (cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
    cat "$log" >&2
    fail "npm ci failed in $e2e (see above); is the npm registry reachable?"
fi
touch "$stamp"
