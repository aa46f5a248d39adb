// ModernTransport: the 2026-07-28 requests that may need input from the client (MRTR) while they
// run on a held call (held_calls.h): a tools/call of a tool that asks the client, and prompts/get
// and resources/read of a workspace's catalog (federated upstreams, which may ask too). Each
// request about a held call waits until the call ends (its answer is the request's) or asks
// something (input_required, the state sealed with the held call's id, kind "held"); a retry
// hands its answers to the questions waiting and waits again.

#include <atomic>
#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>

#include "mcp/input_rounds.h"
#include "mcp/modern/modern_scope.h"
#include "mcp/modern/modern_transport.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/method_registry.h"
#include "util/json_string.h"

namespace crank::mcp {

using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

void ModernTransport::startHeld(HTTPServerRequest& request, HTTPServerResponse& response,
                                const JsonRpcMessage& message, ModernRound round,
                                SharedClientCapabilities capabilities,
                                const HeldCall::Listener& wants, const Who& who,
                                const TraceContext& trace, HeldWork work,
                                std::chrono::steady_clock::time_point since) const {
    const StateBinding binding = round.binding;
    const int previous = round.retry ? round.retry->round : 0;
    auto held = held_->start(
        who.agent, [who, round = std::move(round), capabilities = std::move(capabilities), trace,
                    level = wants.log_level,
                    work = std::move(work)](const std::shared_ptr<HeldCall>& call) mutable {
            // The level is what the call's logs are asked at (a federated upstream gets it); they
            // go to the listener of the request waiting at the time.
            ModernScope scope(who, capabilities, nullptr, level, std::move(round), call);
            scope.setTrace(trace);
            MethodAnswer answered = work(scope);
            if (auto refusal = scope.undeclared()) {
                return std::move(*refusal);
            }
            return answered;
        });
    if (!held) {
        // A limit the model reads, as for the call slots; a catalog request gets an error.
        reply(response, message,
              message.method == "tools/call"
                  ? MethodAnswer::result(ToolResult::refusal(held.error().message).toJson())
                  : MethodAnswer::error(kInternalError, held.error().message),
              since);
        return;
    }
    answerHeld(request, response, message, *held, binding, previous, wants, who, since);
}

void ModernTransport::resumeHeld(HTTPServerRequest& request, HTTPServerResponse& response,
                                 const JsonRpcMessage& message, const InputRetry& retry,
                                 const ModernRound& round, const HeldCall::Listener& wants,
                                 const Who& who,
                                 std::chrono::steady_clock::time_point since) const {
    const std::shared_ptr<HeldCall> held = held_->find(round.held_id, who.agent);
    if (!held) {
        reply(response, message,
              MethodAnswer::error(kInvalidParams,
                                  message.method +
                                      ": the call this requestState belongs to is over (it ended, "
                                      "or waited too long for the answers): call again without it"),
              since);
        return;
    }
    const int previous = round.retry ? round.retry->round : 0;
    if (previous >= max_input_rounds_) {
        held->abandon();
        reply(response, message,
              MethodAnswer::error(kInvalidParams,
                                  message.method + ": " + jsonString(round.binding.target) +
                                      " asked for input more often than mcp.max_input_rounds "
                                      "allows (" +
                                      std::to_string(max_input_rounds_) + ")"),
              since);
        return;
    }
    held->answer(retry.responses);
    answerHeld(request, response, message, held, round.binding, previous, wants, who, since);
}

void ModernTransport::answerHeld(HTTPServerRequest& request, HTTPServerResponse& response,
                                 const JsonRpcMessage& message,
                                 const std::shared_ptr<HeldCall>& held, const StateBinding& binding,
                                 int round, const HeldCall::Listener& wants, const Who& who,
                                 std::chrono::steady_clock::time_point since) const {
    std::shared_ptr<RequestStream> stream;
    if (wants.progress_token || wants.log_level) {
        // The client closing this request's stream before its answer cancels the call.
        auto answered = std::make_shared<std::atomic<bool>>(false);
        std::weak_ptr<HeldCall> weak = held;
        stream = RequestStream::open(request, response, reactor_, max_streams_, quotas_, who,
                                     [weak, answered] {
                                         if (auto call = weak.lock(); call && !answered->load()) {
                                             call->abandon();
                                         }
                                     });
        if (!stream) {
            return;  // answered 503 or 429; the call goes on for a retry to find
        }
        held->attach(HeldCall::Listener{stream, wants.progress_token, wants.log_level});
        HeldEvent event = held->wait();
        held->detach();
        answered->store(true);
        if (stream->closed() || (event.finished && event.finished->isNone())) {
            observer_.counted(message.method, "cancelled", since);
            stream->finish("");
            return;
        }
        const MethodAnswer answer = answerOf(event, held, binding, round);
        const std::string out = messageOf(message, answer);
        observer_.answered(message.method, answer, since);
        stream->finish(out);
        return;
    }
    HeldEvent event = held->wait();
    reply(response, message, answerOf(event, held, binding, round), since);
}

MethodAnswer ModernTransport::answerOf(HeldEvent& event, const std::shared_ptr<HeldCall>& held,
                                       const StateBinding& binding, int round) const {
    if (event.finished) {
        return std::move(*event.finished);
    }
    const std::string state = seal_->seal(binding, held->id(), round + 1, "held");
    return MethodAnswer::result(
        inputRequiredResult(InputNeed{std::move(event.questions), ""}, state));
}

bool ModernTransport::catalogWithInput(HTTPServerRequest& request, HTTPServerResponse& response,
                                       const JsonRpcMessage& message, const RequestMeta& meta,
                                       const Who& who, const TraceContext& trace,
                                       std::chrono::steady_clock::time_point since) const {
    const MethodInfo* info = findMethod(message.method);
    if (info == nullptr || info->handler != MethodHandler::catalog || !info->may_ask) {
        return false;
    }
    Result<CatalogTarget> target = parseCatalogTarget(message.method, message.params_json);
    if (!target) {
        return false;  // the catalog names what is wrong, as in the 2025 era
    }
    const HeldCall::Listener wants{nullptr, meta.progress_token, std::nullopt};
    Result<ModernRound> round = openRound(message.method, target->target, target->arguments_json,
                                          target->retry, who, seal_.get());
    if (!round) {
        reply(response, message,
              MethodAnswer::error(kInvalidParams, message.method + ": " + round.error().message),
              since);
        return true;
    }
    if (!round->held_id.empty()) {
        resumeHeld(request, response, message, target->retry, *round, wants, who, since);
        return true;
    }
    if (who.catalog == nullptr || !meta.capabilities()->declaresClientInput()) {
        return false;
    }
    startHeld(
        request, response, message, std::move(*round), meta.capabilities(), wants, who, trace,
        [this, message](ModernScope& scope) {
            return methods_.catalogRequest(message, scope)
                .value_or(MethodAnswer::error(kMethodNotFound,
                                              "method " + message.method + " is not found"));
        },
        since);
    return true;
}

}  // namespace crank::mcp
