#!/usr/bin/env bash
# Configures and builds Crank into build/ (Ninja, ccache when present). Extra arguments are passed
# to `cmake --build` (e.g. --target crankd).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
source "$root/scripts/ccache-env.sh"
if [[ ! -f "$build/build.ninja" ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" "$@"
