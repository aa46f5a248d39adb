#pragma once

// MRTR relayed (MCP 2026-07-28, SEP-2322): a 2026-era upstream answers a tools/call, prompts/get
// or resources/read with `resultType: "input_required"`, questions for the client
// (`inputRequests`) and its own opaque `requestState`. crankd never hands that on raw:
//   - a federated tool's answer becomes the tool's ToolResult::input, which the endpoint relays
//     its era's way (a 2026 client gets input_required with the upstream's state sealed inside
//     crankd's own, a 2025 session's client is asked on the call's stream), and the tool runs
//     again with the answers in ToolCall::inputRound();
//   - a catalog request (prompts/get, resources/read) asks the client through
//     ToolCall::requestClient, question after question, and is sent again (relayInputRounds).
// Either way the request goes back upstream as a new request with `inputResponses` and the
// upstream's `requestState` byte for byte, and the upstream asks only for what the caller can
// answer: the caller's capabilities travel in the request's `_meta` (withCallerMeta).
//
// THREADING: pure functions, apart from the ToolCall and the request function they are given.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "federation/upstream_link.h"
#include "json/json_value.h"
#include "mcp/tool_registry.h"

namespace crank::federation {

/// Questions one input_required result may carry, and the longest `requestState` relayed (it
/// is sealed into crankd's own state, which a client carries).
inline constexpr std::size_t kMaxRelayedQuestions = 32;
inline constexpr std::size_t kMaxRelayedStateBytes = std::size_t{16} * 1024;
/// Rounds relayInputRounds goes at most (mcp.max_input_rounds' default; a 2026 client's held
/// request is bounded by that setting too).
inline constexpr int kMaxRelayedRounds = 16;

/// What an upstream's result says about input.
struct InputVerdict {
    std::optional<mcp::InputNeed> need;  ///< set: the result is input_required
    std::string fault;                   ///< set: it is, but malformed (why, in words)
};

/// Reads an upstream's `inputRequests` object (an input_required result's, or a task's) into
/// `out`, bounded as readInputRequired says; "" when it could be read, else why not, in words.
std::string readQuestions(const json::Value& requests, std::vector<mcp::InputRequest>& out);

/// Reads `result_json` (an upstream's result object): complete (neither member set), an
/// input_required result with its questions and state, or a malformed one (too many
/// questions, a question that is not {method, params}, a method MRTR does not carry, a
/// requestState that is not a string or is too long).
InputVerdict readInputRequired(std::string_view result_json);

/// `params_json` (an object's text, "" read as {}) with what a 2026 upstream reads of the caller
/// in `_meta`: "io.modelcontextprotocol/clientCapabilities" set to what `call`'s client declared
/// of sampling, elicitation and roots (left out when nothing), and
/// "io.modelcontextprotocol/logLevel" to the level it takes log notifications at (left out when
/// it takes none), replacing whatever the client's own params said there. `tasks`: the
/// capabilities also declare the Tasks extension (`extensions`), so the upstream may answer a
/// tools/call with a task and take the task methods. Text that is not an object is returned
/// unchanged.
std::string withCallerMeta(std::string_view params_json, const mcp::ToolCall& call,
                           bool tasks = false);

/// `params_json` (an object's text, "" read as {}) for the next round: `inputResponses` set to
/// `responses` (key → an answer's result object) and `requestState` to `state` (left out when
/// empty), replacing earlier ones.
std::string withInputRound(std::string_view params_json,
                           const std::map<std::string, std::string, std::less<>>& responses,
                           std::string_view state);

/// `params_json` without `inputResponses` and `requestState` (a client's own, which must not
/// reach an upstream as if crankd had sent them).
std::string withoutInputRound(std::string_view params_json);

/// Sends `client_params_json` (without the client's own inputResponses and requestState) with
/// `send` and, while the answer is input_required (Answer::input), asks `call`'s client each
/// question and sends again with the answers, at most `max_rounds` rounds, all the client's
/// answers together within `question_timeout`. `who` names the request in errors ("upstream X:
/// prompts/get"). A question the client does not answer ends the request with an error naming
/// it.
Answer relayInputRounds(const std::function<Answer(const std::string& params_json)>& send,
                        std::string_view client_params_json, mcp::ToolCall& call,
                        std::string_view who, int max_rounds,
                        std::chrono::milliseconds question_timeout);

}  // namespace crank::federation
