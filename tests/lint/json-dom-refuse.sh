#!/usr/bin/env bash
# lint.json_dom_refuses: scripts/check-json-dom.sh over tests/fixtures/json_dom must fail naming
# every way the fixture builds a DOM outside host/json, and neither the SAX reader's Parse nor
# anything under the fixture's json/ folder.
#   json-dom-refuse.sh SOURCE_ROOT
set -uo pipefail
root="$1"
out="$("$root/scripts/check-json-dom.sh" "$root/tests/fixtures/json_dom" 2>&1)"
status=$?
echo "$out"
[[ $status -ne 0 ]] || { echo "lint.json_dom_refuses: the check passed the fixture"; exit 1; }
for line in 4 5 8 10 11; do
    grep -q "runtime/parses_itself.cpp:$line:" <<<"$out" ||
        { echo "lint.json_dom_refuses: line $line was not refused"; exit 1; }
done
if grep -q "parses_itself.cpp:14:\|json/allowed.cpp" <<<"$out"; then
    echo "lint.json_dom_refuses: an allowed line was refused"
    exit 1
fi
echo "lint.json_dom_refuses: every DOM built outside host/json refused, the rest left alone"
