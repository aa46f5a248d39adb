#!/usr/bin/env bash
# Runs clang-tidy (root .clang-tidy) over the project's own sources, using build/compile_commands.json.
# Extra arguments restrict it to those files.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CRANK_BUILD_DIR:-$root/build}"
[[ -f "$build/compile_commands.json" ]] || "$root/scripts/build.sh"
cd "$root"
if (($# > 0)); then
    files=("$@")
else
    mapfile -t files < <(find host sdk plugins -name '*.cpp' 2>/dev/null | sort)
fi
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet
