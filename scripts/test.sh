#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs every test: formatting of the project's
# sources, then all ctest suites (unit, integration, clang-tidy) side by side on every core.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/e2e-setup.sh"
"$root/scripts/check-format.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@"
