#!/usr/bin/env bash
# Configures and builds Crank into build/ (Ninja, ccache when present). Extra arguments are passed
# to `cmake --build` (e.g. --target crankd).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
# Hash paths relative to the checkout so that clean clones elsewhere still hit the ccache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
# The main tree, the sanitizer trees and the fuzzing tree together need more than ccache's default
# 5 GB, or a clean clone would rebuild what the previous tree evicted.
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-25G}"
if [[ ! -f "$build/build.ninja" ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" "$@"
