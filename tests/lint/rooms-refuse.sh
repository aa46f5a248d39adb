#!/usr/bin/env bash
# lint.rooms: cmake/check_rooms.cmake run over tests/fixtures/rooms/includes_private.cpp must fail
# naming each private include, however it is spelt, and none of the public ones.
#   rooms-refuse.sh SOURCE_ROOT BUILD_DIR
set -uo pipefail
root="$1"
build="$2"
printf 'tests/fixtures/rooms/includes_private.cpp\n' > "$build/rooms/lint-sources.txt"
out="$(cmake -DROOT="$root" -DTABLE="$build/rooms/rooms.txt" \
    -DSOURCES="$build/rooms/lint-sources.txt" -DSTAMP="$build/rooms/lint.stamp" \
    -P "$root/cmake/check_rooms.cmake" 2>&1)"
status=$?
echo "$out"
[[ $status -ne 0 ]] || { echo "lint.rooms: the check passed a file it must refuse"; exit 1; }
for private in "includes mcp/modern/held_calls.h (host/mcp/modern/held_calls.h), private to crank_mcp_modern" \
    "includes ../../../host/mcp/modern/modern_scope.h (host/mcp/modern/modern_scope.h), private" \
    "includes mcp//modern/../modern/routing_headers.h (host/mcp/modern/routing_headers.h), private"; do
    grep -qF -- "$private" <<<"$out" || { echo "lint.rooms: not refused: $private"; exit 1; }
done
for public in modern_result.h tool_registry.h log_level.h; do
    if grep -q "$public (host/.*private" <<<"$out"; then
        echo "lint.rooms: a public header was refused: $public"
        exit 1
    fi
done
echo "lint.rooms: every private include refused, every public one left alone"
