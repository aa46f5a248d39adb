#include "mcp/stateless_scope.h"

#include "mcp/call_notifications.h"
#include "mcp/json_rpc.h"
#include "mcp/protocol_era.h"
#include "util/json_string.h"

namespace crank::mcp {

void StatelessToolCall::progress(double progress, std::optional<double> total,
                                 std::string_view message) {
    if (!stream_ || !progress_token_) {
        return;
    }
    if (std::string note = progressNotification(*progress_token_, progress, total, message);
        !note.empty()) {
        stream_->send(note);
    }
}

void StatelessToolCall::log(LogLevel level, std::string_view logger, std::string_view data_json) {
    // Without a logLevel in the request's _meta no log notification is sent at all.
    if (stream_ && log_level_ && level >= *log_level_) {
        stream_->send(logNotification(level, logger, data_json));
    }
}

ToolCall::ClientAnswer StatelessToolCall::requestClient(std::string_view method,
                                                        std::string_view /*params_json*/,
                                                        std::chrono::milliseconds /*timeout*/) {
    const char* capability = clientCapabilityFor(method);
    if (capability == nullptr) {
        return {false, notForwardedError(method)};
    }
    if (!clientDeclares(capability)) {
        outcome_->needs(capability);
        return {false, R"({"code":-32021,"message":)" +
                           jsonString(std::string("the request did not declare the ") + capability +
                                      " capability") +
                           "}"};
    }
    return {false, R"({"code":-32601,"message":)" +
                       jsonString("crankd cannot yet ask a 2026-07-28 client for " +
                                  std::string(method.substr(0, 100)) +
                                  " (input_required results are not served yet)") +
                       "}"};
}

bool StatelessToolCall::clientDeclares(std::string_view capability) const {
    const Result<std::string> declared = extractMember(
        client_capabilities_json_.empty() ? "{}" : client_capabilities_json_, capability);
    return declared && !declared->empty();
}

InputStep StatelessScope::inputRequired(const InputNeed& need, ToolCall& call,
                                        std::string_view tool, std::chrono::milliseconds /*wait*/) {
    InputStep step;
    if (const std::string capability = undeclaredCapability(need, call); !capability.empty()) {
        outcome_->needs(capability);
        step.answer =
            MethodAnswer::error(kMissingRequiredClientCapability,
                                "the request did not declare the " + capability + " capability");
        return step;
    }
    std::optional<std::string> state;
    if (!need.state.empty()) {
        if (round_.seal == nullptr) {
            step.answer = MethodAnswer::error(kInternalError, "tool " + jsonString(tool) +
                                                                  " needs input, but this endpoint "
                                                                  "cannot seal request states");
            return step;
        }
        const InputRound* previous = call.inputRound();
        state = round_.seal->seal(round_.binding, need.state,
                                  (previous != nullptr ? previous->round : 0) + 1);
    }
    step.answer = MethodAnswer::result(inputRequiredResult(need, state));
    return step;
}

}  // namespace crank::mcp
