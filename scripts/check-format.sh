#!/usr/bin/env bash
# Fails when a C/C++ source of the project is not formatted by the root .clang-format.
# With --fix, formats them in place instead.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mapfile -t files < <(find host sdk plugins tests bench examples -type f \
    \( -name '*.h' -o -name '*.hpp' -o -name '*.c' -o -name '*.cc' -o -name '*.cpp' \) \
    -not -path '*/node_modules/*' 2>/dev/null | sort)
if ((${#files[@]} == 0)); then
    exit 0
fi
if [[ "${1:-}" == "--fix" ]]; then
    clang-format -i "${files[@]}"
    exit 0
fi
report="$(mktemp "${TMPDIR:-/tmp}/crank-format.XXXXXX")"
trap 'rm -f "$report"' EXIT
if ! clang-format --dry-run --Werror "${files[@]}" 2>"$report"; then
    grep -E '^[^ ].*(warning|error):' "$report" | cut -d: -f1 | sort -u |
        sed 's/^/not formatted: /' >&2
    echo "check-format: run scripts/check-format.sh --fix" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted"
