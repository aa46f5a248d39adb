#pragma once

// Multi-round-trip requests (MRTR, MCP 2026-07-28 SEP-2322) as the host serves them for its own
// tools: a tool that cannot answer yet returns ToolResult::input (an InputNeed); the era's scope
// turns that into the request's answer or into the next round.
//   - 2026-07-28: the answer is an input_required result carrying the questions and the tool's
//     state, sealed (request_state_seal.h); the client retries with the answers.
//   - 2025 sessions: the host asks the client itself, on the call's stream, one question after
//     the other, and runs the tool again with the answers (the client never sees a round).
//
// THREADING: pure functions, apart from the ToolCall they are given.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/method_answer.h"
#include "mcp/tool_registry.h"

namespace crank::mcp {

/// What became of a tool's InputNeed.
struct InputStep {
    /// Set: the request is answered with it (a 2026 input_required result, or an error).
    std::optional<MethodAnswer> answer;
    /// Otherwise the tool runs again with these answers.
    InputRound next;
};

/// Why `need` cannot be sent (an empty need, a question of a method MRTR does not carry, two
/// questions with one key): the text of a -32603 error, since it is the tool's fault; "" when
/// it can.
std::string inputNeedFault(const InputNeed& need, std::string_view tool);

/// The client capability of the first question of `need` that `call` says the client did not
/// declare ("elicitation", "sampling", "roots"); "" when every one is declared.
std::string undeclaredCapability(const InputNeed& need, const ToolCall& call);

/// The input_required result (2026-07-28) asking `need`'s questions, with `request_state` (the
/// sealed state) when given.
/// `requests` as the `inputRequests` member's object: key -> {method, params}, in asking order.
std::string inputRequestsObject(const std::vector<InputRequest>& requests);

std::string inputRequiredResult(const InputNeed& need,
                                const std::optional<std::string>& request_state);

/// The 2025-era round: asks the client each of `need`'s questions through call.requestClient
/// (each waits at most `timeout`) and gives the answers for the next run. A question the client
/// does not answer ends the call with an isError result naming it.
InputStep askClient(const InputNeed& need, ToolCall& call, std::chrono::milliseconds timeout);

}  // namespace crank::mcp
