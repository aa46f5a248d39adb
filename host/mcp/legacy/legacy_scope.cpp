#include "mcp/legacy/legacy_scope.h"

#include <string>
#include <utility>

#include "mcp/call_notifications.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/method_registry.h"
#include "util/json_string.h"

namespace crank::mcp {

LegacyToolCall::LegacyToolCall(std::shared_ptr<McpSession> session,
                               std::optional<std::uint64_t> stream,
                               std::optional<RequestId> progressToken, const RequestId& id,
                               Caller caller)
    : session_(std::move(session)),
      stream_(stream),
      progressToken_(std::move(progressToken)),
      key_(id.toJson()),
      cancelled_(session_->beginRequest(key_)),
      caller_(std::move(caller)) {}

LegacyToolCall::~LegacyToolCall() {
    session_->endRequest(key_);
}

ToolCall::ClientAnswer LegacyToolCall::requestClient(std::string_view method,
                                                     std::string_view paramsJson,
                                                     std::chrono::milliseconds timeout) {
    const char* capability = clientCapabilityFor(method);
    if (capability == nullptr) {
        return {false, notForwardedError(method)};
    }
    if (!session_->clientCapabilities().declares(capability)) {
        return {false, R"({"code":-32601,"message":)" +
                           jsonString(std::string("the client did not declare the ") + capability +
                                      " capability") +
                           "}"};
    }
    if (!stream_) {
        return {false,
                R"({"code":-32603,"message":"this call has no stream to the client to ask on"})"};
    }
    const std::string id = session_->beginClientRequest();
    session_->send(*stream_, makeRequest(RequestId(id), method, paramsJson));
    auto answer = session_->awaitClientAnswer(id, std::chrono::steady_clock::now() + timeout,
                                              [this] { return cancelled_->load(); });
    if (answer) {
        return {answer->first, std::move(answer->second)};
    }
    // No answer: tell the client to stop (MCP cancellation goes both ways).
    const bool wasCancelled = cancelled_->load();
    session_->send(
        *stream_,
        makeNotification(
            "notifications/cancelled",
            R"({"requestId":)" + RequestId(id).toJson() + R"(,"reason":)" +
                jsonString(wasCancelled ? "the call was cancelled" : "no answer in time") + "}"));
    return {false, wasCancelled
                       ? R"({"code":-32800,"message":"the call was cancelled"})"
                       : R"({"code":-32001,"message":"the client did not answer in time"})"};
}

void LegacyToolCall::progress(double progress, std::optional<double> total,
                              std::string_view message) {
    if (!progressToken_ || !stream_) {
        return;
    }
    if (std::string note = progressNotification(*progressToken_, progress, total, message);
        !note.empty()) {
        session_->send(*stream_, note);
    }
}

void LegacyToolCall::log(LogLevel level, std::string_view logger, std::string_view dataJson) {
    if (level < session_->logLevel()) {
        return;
    }
    const std::string message = logNotification(level, logger, dataJson);
    if (stream_) {
        session_->send(*stream_, message);
    } else {
        session_->sendStandalone(message);
    }
}

std::optional<LogLevel> LegacyToolCall::logLevel() const {
    return session_->logLevel();
}

bool LegacyToolCall::clientDeclares(std::string_view capability) const {
    return session_->clientCapabilities().declares(capability);
}

bool clientCanBeAsked(const McpSession& session) {
    return session.clientCapabilities().declaresClientInput();
}

}  // namespace crank::mcp
