#include "mcp/modern/modern_scope.h"

#include "mcp/call_notifications.h"
#include "mcp/modern/protocol_era.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/method_registry.h"
#include "mcp/wire/request_meta.h"
#include "util/json_string.h"

namespace crank::mcp {

namespace {

/// Where a call's notifications go: its request's stream, or, for a held call, the stream of the
/// request waiting on it now (each round's request has its own token and level).
HeldCall::Listener listenerOf(const std::shared_ptr<RequestStream>& stream,
                              const std::optional<RequestId>& token,
                              const std::optional<LogLevel>& level,
                              const std::shared_ptr<HeldCall>& held) {
    if (held) {
        return held->listener();
    }
    return HeldCall::Listener{stream, token, level};
}

}  // namespace

bool ModernToolCall::progressRequested() const {
    if (held_) {
        // Asked by the request that started the call: the upstream reports progress from the
        // start, and each round's stream carries what comes while it waits.
        return progress_token_.has_value();
    }
    return stream_ && progress_token_.has_value();
}

void ModernToolCall::progress(double progress, std::optional<double> total,
                              std::string_view message) {
    const HeldCall::Listener to = listenerOf(stream_, progress_token_, log_level_, held_);
    if (!to.stream || !to.progress_token) {
        return;
    }
    if (std::string note = progressNotification(*to.progress_token, progress, total, message);
        !note.empty()) {
        to.stream->send(note);
    }
}

void ModernToolCall::log(LogLevel level, std::string_view logger, std::string_view data_json) {
    // Without a logLevel in the request's _meta no log notification is sent at all.
    const HeldCall::Listener to = listenerOf(stream_, progress_token_, log_level_, held_);
    if (to.stream && to.log_level && level >= *to.log_level) {
        to.stream->send(logNotification(level, logger, data_json));
    }
}

ToolCall::ClientAnswer ModernToolCall::requestClient(std::string_view method,
                                                     std::string_view params_json,
                                                     std::chrono::milliseconds timeout) {
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
    if (held_) {
        return held_->ask(method, params_json, timeout);
    }
    return {false,
            R"({"code":-32601,"message":)" +
                jsonString("this call cannot ask the client for " +
                           std::string(method.substr(0, 100)) + ": it was not held for input") +
                "}"};
}

bool ModernToolCall::clientDeclares(std::string_view capability) const {
    return capabilities_->declares(capability);
}

InputStep ModernScope::inputRequired(const InputNeed& need, ToolCall& call, std::string_view tool,
                                     std::chrono::milliseconds /*wait*/) {
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

std::optional<MethodAnswer> ModernScope::undeclared() const {
    const std::string capability = missingCapability();
    if (capability.empty()) {
        return std::nullopt;
    }
    return MethodAnswer::error(kMissingRequiredClientCapability,
                               "this request needs the " + capability +
                                   " client capability: declare it in params._meta[\"" +
                                   std::string(kMetaClientCapabilities) + "\"]",
                               R"({"requiredCapabilities":{)" + jsonString(capability) + ":{}}}");
}

Result<ModernRound> openRound(std::string_view method, std::string_view target,
                              std::string_view arguments_json, const InputRetry& asked,
                              const Who& who, const RequestStateSeal* seal) {
    ModernRound round;
    round.seal = seal;
    // The arguments' digest is computed only when a state is sealed or opened.
    round.binding = StateBinding{who.workspace, who.agent, std::string(method), std::string(target),
                                 std::string(arguments_json)};
    if (!asked.present()) {
        return round;
    }
    InputRound retry;
    retry.responses = asked.responses;
    retry.round = 1;  // the answers to a round that carried no state
    if (asked.state) {
        if (seal == nullptr) {
            return Error{ErrorCode::invalid_argument, "this endpoint issues no requestState"};
        }
        Result<OpenedState> opened = seal->open(*asked.state, round.binding);
        if (!opened) {
            return opened.error();
        }
        if (opened->kind == "held") {
            // RequestStateSeal::open refused a held call's state sealed by another node.
            round.held_id = opened->payload;
        } else {
            retry.state = std::move(opened->payload);
        }
        retry.round = opened->round;
    }
    round.retry = std::move(retry);
    return round;
}

}  // namespace crank::mcp
