#!/usr/bin/env bash
# Window ingest: ITEMS (default 10,000,000) items of ITEM_BYTES (default 200) bytes pushed by the
# synthetic plugin through emit, the safety stage (redaction on) and the stats aggregator, pinned
# to one core. Prints items/s for the window and for the baseline (the same plugin stream into a
# sink that only counts), their ratio, and the RSS sampled every 0.5 s while the window collects.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" --target crank-bench-window-ingest >/dev/null
cpu="${CRANK_BENCH_CPU:-0}"
exec taskset -c "$cpu" "$build/bin/crank-bench-window-ingest" \
    "$build/lib/crank/plugins" "$build/lib/crank/test-plugins" "${1:-10000000}" "${2:-200}"
