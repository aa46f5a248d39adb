#!/usr/bin/env bash
# The official conformance suite against crankd fronting one MCP server through the mcp plugin
# (issues 7 and 26), published with naming "keep" (the scenarios call its tools, resources and
# prompts by their own names), from a downstream client of either era:
#
#   with-crankd.sh CRANKD -- tests/e2e/run-federated-conformance.sh [2025|2026] [reference|modern]
#
# The upstream (CRANK_EXTRA_CONFIG, set by tests/CMakeLists.txt, over stdio or Streamable HTTP) is
# "reference" (tests/e2e/reference-server.mjs, a 2025-era server on the SDK v1) or "modern"
# (tests/e2e/modern-reference-server.mjs, a 2026-07-28 server on the SDK v2 with the suite's MRTR
# fixtures, which crankd speaks to in the 2026 era).
#   2025 (the default): every active server scenario and the pending ones (json-schema-2020-12,
#     server-sse-polling) at 2025-11-25 and 2025-06-18: a 2025 client (sessions, initialize). From
#     the modern upstream, sampling and elicitation reach it as requests on the call's stream
#     (crankd relays the upstream's input_required rounds), logs by the session's level.
#   2026: the scenarios at 2026-07-28 (stateless, MRTR): against the modern upstream all of
#     them, the input_required ones answered by the upstream and relayed through crankd; against
#     the reference upstream those whose fixtures it has (it has no test_input_required_result_*
#     tools or x-mcp-header tool), its server-to-client requests bridged into input_required.
#
# The lists are in scenario-lists.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${CRANK_MCP_URL:?run me through with-crankd.sh}"
era="${1:-2025}"
upstream="${2:-reference}"

# shellcheck source=tests/e2e/scenario-lists.sh
source "$here/scenario-lists.sh"

status=0
case "$era" in
2025)
    echo "== spec version 2025-11-25 ($upstream upstream): active and pending"
    CONFORMANCE_SPEC_VERSION=2025-11-25 "$here/run-conformance.sh" "$CRANK_MCP_URL" \
        "${classic_common[@]}" "${classic_only_2025_11_25[@]}" "${classic_pending[@]}" || status=1
    echo "== spec version 2025-06-18 ($upstream upstream): active, and pending (forced)"
    CONFORMANCE_SPEC_VERSION=2025-06-18 "$here/run-conformance.sh" "$CRANK_MCP_URL" \
        "${classic_common[@]}" || status=1
    CONFORMANCE_SPEC_VERSION=2025-06-18 CONFORMANCE_FORCE=1 "$here/run-conformance.sh" \
        "$CRANK_MCP_URL" "${classic_pending[@]}" || status=1
    ;;
2026)
    scenarios=("${modern_common[@]}")
    [[ "$upstream" == modern ]] && scenarios+=("${modern_fixtures[@]}")
    echo "== spec version 2026-07-28 ($upstream upstream)"
    CONFORMANCE_SPEC_VERSION=2026-07-28 "$here/run-conformance.sh" "$CRANK_MCP_URL" \
        "${scenarios[@]}" || status=1
    if [[ "$upstream" == modern ]]; then
        # The Tasks extension at the suite's own version (an explicit one makes it skip them):
        # the upstream creates the tasks, crankd follows them under ids of its own.
        echo "== the Tasks extension ($upstream upstream)"
        env -u CONFORMANCE_SPEC_VERSION "$here/run-conformance.sh" "$CRANK_MCP_URL" \
            "${tasks_extension[@]}" || status=1
    fi
    ;;
*)
    echo "usage: $0 [2025|2026] [reference|modern]" >&2
    exit 2
    ;;
esac
exit "$status"
