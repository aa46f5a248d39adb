# shellcheck shell=bash
# The conformance suite's server scenarios as the e2e scripts run them, in one place (sourced by
# run-federated-conformance.sh and run-modern-reference.sh). The lists are those of
# @modelcontextprotocol/conformance 0.2.0-alpha.12 (`server --suite active|pending`, see
# tests/e2e/README.md).
# shellcheck disable=SC2034 # the arrays are for the scripts that source this file

# 2025 revisions: every active scenario, those only 2025-11-25 has, and the pending ones (not
# applicable at 2025-06-18 by the suite's own rule: run there with --force).
classic_common=(server-initialize server-session-lifecycle logging-set-level ping
    completion-complete tools-list tools-call-simple-text tools-call-image tools-call-audio
    tools-call-embedded-resource tools-call-mixed-content tools-call-with-logging tools-call-error
    tools-call-with-progress tools-call-sampling tools-call-elicitation resources-list
    resources-read-text resources-read-binary resources-templates-read resources-subscribe
    resources-unsubscribe prompts-list prompts-get-simple prompts-get-with-args
    prompts-get-embedded-resource prompts-get-with-image)
classic_only_2025_11_25=(elicitation-sep1034-defaults server-sse-multiple-streams
    elicitation-sep1330-enums dns-rebinding-protection)
classic_pending=(json-schema-2020-12 server-sse-polling)

# 2026-07-28: what any server with the classic fixtures passes (through crankd, a 2025 one
# too)...
modern_common=(completion-complete tools-list tools-call-simple-text tools-call-image
    tools-call-audio tools-call-embedded-resource tools-call-mixed-content tools-call-error
    tools-call-with-progress server-sse-multiple-streams resources-list resources-read-text
    resources-read-binary resources-templates-read sep-2164-resource-not-found prompts-list
    prompts-get-simple prompts-get-with-args prompts-get-embedded-resource prompts-get-with-image
    dns-rebinding-protection caching http-header-validation json-schema-2020-12
    input-required-result-missing-input-response input-required-result-unsupported-methods
    input-required-result-ignore-extra-params input-required-result-validate-input
    input-required-result-non-tool-request)
# ...and what needs the suite's 2026 fixtures (multi round trip tools, x-mcp-header, listen).
modern_fixtures=(http-custom-header-server-validation server-stateless
    input-required-result-basic-elicitation input-required-result-basic-sampling
    input-required-result-basic-list-roots input-required-result-request-state
    input-required-result-multiple-input-requests input-required-result-multi-round
    input-required-result-result-type input-required-result-tampered-state
    input-required-result-capability-check)

# The Tasks extension (io.modelcontextprotocol/tasks), run at the suite's own version.
tasks_extension=(tasks-lifecycle tasks-capability-negotiation tasks-wire-fields
    tasks-request-state-removal tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope
    tasks-required-task-error tasks-mrtr-composition tasks-status-notifications)
