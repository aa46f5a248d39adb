#!/usr/bin/env bash
# lint.json_dom: a JSON DOM is built only through host/json (json::parseJson, json::parseObject,
# json::parseValue: strict, bounded in depth) and named with its vocabulary (json::Document), so
# that no folder of the host parses outside text with RapidJSON's unbounded, recursive defaults.
# host/json implements it and host/store keeps its own rows; every other folder of `root` (default:
# host/) is checked. Refused: the DOM's type by its RapidJSON name (or a namespace alias of
# rapidjson), and Parse/ParseInsitu called on anything but a SAX rapidjson::Reader named `reader`
# (a handler of one's own builds no DOM). Prints each offending line and fails when there is one.
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/host}"
pattern='rapidjson::(Generic)?Document\b|\.Parse(Insitu)?\s*[<(]|namespace\s+\w+\s*=\s*rapidjson'
found=$(grep -rnE "$pattern" "$root" --include='*.cpp' --include='*.h' --include='*.hpp' |
    grep -vE "^$root/(json|store)/" | grep -vE ':[0-9]+:.*\breader\.Parse<[^>]*>\(' || true)
if [[ -n "$found" ]]; then
    echo "$found"
    echo "lint.json_dom: build a JSON DOM through host/json (json::parseJson, json::parseObject," \
         "json::parseValue) and name it json::Document; rapidjson::Document and .Parse( are for" \
         "host/json and host/store only" >&2
    exit 1
fi
echo "lint.json_dom: no DOM parsed outside host/json and host/store under $root"
