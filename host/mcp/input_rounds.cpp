#include "mcp/input_rounds.h"

#include <set>

#include <rapidjson/document.h>

#include "json/json_members.h"
#include "mcp/call_notifications.h"
#include "mcp/wire/method_registry.h"
#include "util/json_string.h"

namespace crank::mcp {

std::string inputNeedFault(const InputNeed& need, std::string_view tool) {
    const std::string who = "tool " + jsonString(tool);
    if (need.requests.empty() && need.state.empty()) {
        return who + " asked for input but gave neither a question nor a state";
    }
    std::set<std::string_view> keys;
    for (const InputRequest& request : need.requests) {
        if (clientCapabilityFor(request.method) == nullptr) {
            return who + " asked the client for " + jsonString(request.method) +
                   ", which an input_required result cannot carry";
        }
        if (request.key.empty() || !keys.insert(request.key).second) {
            return who + " asked two questions under the key " + jsonString(request.key);
        }
        if (request.params_json.empty() || request.params_json.front() != '{') {
            return who + " asked " + jsonString(request.key) +
                   " with params that are not an object";
        }
    }
    return {};
}

std::string undeclaredCapability(const InputNeed& need, const ToolCall& call) {
    for (const InputRequest& request : need.requests) {
        const char* capability = clientCapabilityFor(request.method);
        if (capability != nullptr && !call.clientDeclares(capability)) {
            return capability;
        }
    }
    return {};
}

std::string inputRequestsObject(const std::vector<InputRequest>& requests) {
    std::string out = "{";
    for (const InputRequest& request : requests) {
        if (out.size() > 1) {
            out += ',';
        }
        out += jsonString(request.key) + R"(:{"method":)" + jsonString(request.method) +
               R"(,"params":)" + request.params_json + "}";
    }
    return out + '}';
}

std::string inputRequiredResult(const InputNeed& need,
                                const std::optional<std::string>& request_state) {
    std::string out = R"({"resultType":"input_required")";
    if (!need.requests.empty()) {
        out += R"(,"inputRequests":)" + inputRequestsObject(need.requests);
    }
    if (request_state) {
        out += R"(,"requestState":)" + jsonString(*request_state);
    }
    out += '}';
    return out;
}

InputStep askClient(const InputNeed& need, ToolCall& call, std::chrono::milliseconds timeout) {
    InputStep step;
    const InputRound* previous = call.inputRound();
    step.next.round = (previous != nullptr ? previous->round : 0) + 1;
    step.next.state = need.state;
    for (const InputRequest& request : need.requests) {
        ToolCall::ClientAnswer answer =
            call.requestClient(request.method, request.params_json, timeout);
        if (call.cancelled()) {
            step.answer = MethodAnswer::none();
            return step;
        }
        if (!answer.ok) {
            json::Document error;
            std::string why = json::parseObject(answer.json, error)
                                  ? json::stringMember(error, "message")
                                  : std::string();
            if (why.empty()) {
                why = answer.json.substr(0, 200);
            }
            step.answer = MethodAnswer::result(ToolResult::refusal("the client did not answer " +
                                                                   jsonString(request.key) + " (" +
                                                                   request.method + "): " + why)
                                                   .toJson());
            return step;
        }
        step.next.responses.emplace(request.key, std::move(answer.json));
    }
    return step;
}

}  // namespace crank::mcp
