#!/usr/bin/env bash
# Installs what is missing, builds crankd, and runs it with the demo configuration: loopback only
# (127.0.0.1:8080), the embedded SQLite store in ./crank.db. Extra arguments go to crankd, e.g.
#   scripts/run.sh --listen 127.0.0.1:9090 --log-format json
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" --target crankd
cd "$root"
exec "$root/build/bin/crankd" --config "$root/examples/demo.json" "$@"
