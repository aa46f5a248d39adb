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
# The lists are those of @modelcontextprotocol/conformance 0.2.0-alpha.12 (`server --suite
# active|pending`, see tests/e2e/README.md); the pending ones are not applicable at 2025-06-18 by
# the suite's own rule and run there with --force.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${CRANK_MCP_URL:?run me through with-crankd.sh}"
era="${1:-2025}"
upstream="${2:-reference}"

common=(server-initialize server-session-lifecycle logging-set-level ping completion-complete
    tools-list tools-call-simple-text tools-call-image tools-call-audio tools-call-embedded-resource
    tools-call-mixed-content tools-call-with-logging tools-call-error tools-call-with-progress
    tools-call-sampling tools-call-elicitation resources-list resources-read-text
    resources-read-binary resources-templates-read resources-subscribe resources-unsubscribe
    prompts-list prompts-get-simple prompts-get-with-args prompts-get-embedded-resource
    prompts-get-with-image)
only_2025_11_25=(elicitation-sep1034-defaults server-sse-multiple-streams
    elicitation-sep1330-enums dns-rebinding-protection)
pending=(json-schema-2020-12 server-sse-polling)

# At 2026-07-28: what any upstream with the classic fixtures passes through crankd...
modern_common=(completion-complete tools-list tools-call-simple-text tools-call-image
    tools-call-audio tools-call-embedded-resource tools-call-mixed-content tools-call-error
    tools-call-with-progress server-sse-multiple-streams resources-list resources-read-text
    resources-read-binary resources-templates-read sep-2164-resource-not-found prompts-list
    prompts-get-simple prompts-get-with-args prompts-get-embedded-resource prompts-get-with-image
    dns-rebinding-protection caching http-header-validation json-schema-2020-12
    input-required-result-missing-input-response input-required-result-unsupported-methods
    input-required-result-ignore-extra-params input-required-result-validate-input
    input-required-result-non-tool-request)
# ...and what needs the suite's 2026 fixtures (the modern upstream's).
modern_fixtures=(http-custom-header-server-validation server-stateless
    input-required-result-basic-elicitation input-required-result-basic-sampling
    input-required-result-basic-list-roots input-required-result-request-state
    input-required-result-multiple-input-requests input-required-result-multi-round
    input-required-result-result-type input-required-result-tampered-state
    input-required-result-capability-check)

status=0
case "$era" in
2025)
    echo "== spec version 2025-11-25 ($upstream upstream): active and pending"
    CONFORMANCE_SPEC_VERSION=2025-11-25 "$here/run-conformance.sh" "$CRANK_MCP_URL" \
        "${common[@]}" "${only_2025_11_25[@]}" "${pending[@]}" || status=1
    echo "== spec version 2025-06-18 ($upstream upstream): active, and pending (forced)"
    CONFORMANCE_SPEC_VERSION=2025-06-18 "$here/run-conformance.sh" "$CRANK_MCP_URL" \
        "${common[@]}" || status=1
    CONFORMANCE_SPEC_VERSION=2025-06-18 CONFORMANCE_FORCE=1 "$here/run-conformance.sh" \
        "$CRANK_MCP_URL" "${pending[@]}" || status=1
    ;;
2026)
    scenarios=("${modern_common[@]}")
    [[ "$upstream" == modern ]] && scenarios+=("${modern_fixtures[@]}")
    echo "== spec version 2026-07-28 ($upstream upstream)"
    CONFORMANCE_SPEC_VERSION=2026-07-28 "$here/run-conformance.sh" "$CRANK_MCP_URL" \
        "${scenarios[@]}" || status=1
    ;;
*)
    echo "usage: $0 [2025|2026] [reference|modern]" >&2
    exit 2
    ;;
esac
exit "$status"
