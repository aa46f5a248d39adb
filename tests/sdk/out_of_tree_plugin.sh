#!/usr/bin/env bash
# Installs the SDK component from a build tree into a temporary prefix, builds
# examples/plugins/minimal against it as a separate CMake project (find_package(CrankSDK)), then
# checks that the plugin exports only crank_plugin_entry and that it loads and answers.
#   out_of_tree_plugin.sh <build dir> <source dir> <sdk_dlopen_check>
set -euo pipefail
build="$1"
source="$2"
checker="$3"

work="$(mktemp -d "${TMPDIR:-/tmp}/crank-sdk-oot.XXXXXX")"
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --component sdk --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/crank/plugin.h"
test -f "$work/prefix/include/crank/sdk.hpp"
test -f "$work/prefix/include/crank/testing/fake_host.hpp"

launcher=()
if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$source/examples/plugins/minimal" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror" "${launcher[@]}" >/dev/null
cmake --build "$work/build" -j 2 >/dev/null

plugin="$(find "$work/build" -maxdepth 1 -name '*minimal*.so' | head -n 1)"
if [[ -z "$plugin" ]]; then
    echo "no plugin library was built" >&2
    exit 1
fi

# Defined dynamic symbols: crank_add_plugin's version script (crank_plugin.map) leaves exactly
# crank_plugin_entry, not even libstdc++'s weak template instantiations.
exported="$(nm -D --defined-only "$plugin" | awk '{ print $3 }' | grep -v '^$' || true)"
if [[ "$exported" != "crank_plugin_entry" ]]; then
    echo "the plugin must export crank_plugin_entry and nothing else; it exports:" >&2
    echo "$exported" | c++filt >&2
    exit 1
fi

"$checker" "$plugin"
