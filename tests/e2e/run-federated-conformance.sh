#!/usr/bin/env bash
# The whole official conformance suite against crankd fronting an MCP server through the mcp
# plugin (issue 7): every active server scenario and the pending ones (json-schema-2020-12,
# server-sse-polling) for spec versions 2025-06-18 and 2025-11-25, against CRANK_MCP_URL (set by
# with-crankd.sh). The upstream is tests/e2e/reference-server.mjs, published with naming "keep"
# (the scenarios call its tools, resources and prompts by their own names).
#
#   with-crankd.sh CRANKD -- tests/e2e/run-federated-conformance.sh
#
# The lists are those of @modelcontextprotocol/conformance 0.2.0-alpha.12 (`server --suite
# active|pending`, see tests/e2e/README.md); the pending ones are not applicable at 2025-06-18 by
# the suite's own rule and run there with --force.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${CRANK_MCP_URL:?run me through with-crankd.sh}"

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

status=0
echo "== spec version 2025-11-25: active and pending"
CONFORMANCE_SPEC_VERSION=2025-11-25 "$here/run-conformance.sh" "$CRANK_MCP_URL" \
    "${common[@]}" "${only_2025_11_25[@]}" "${pending[@]}" || status=1
echo "== spec version 2025-06-18: active, and pending (forced)"
CONFORMANCE_SPEC_VERSION=2025-06-18 "$here/run-conformance.sh" "$CRANK_MCP_URL" \
    "${common[@]}" || status=1
CONFORMANCE_SPEC_VERSION=2025-06-18 CONFORMANCE_FORCE=1 "$here/run-conformance.sh" \
    "$CRANK_MCP_URL" "${pending[@]}" || status=1
exit "$status"
