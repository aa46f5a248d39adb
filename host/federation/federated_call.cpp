#include "federation/federated_call.h"

#include <algorithm>
#include <optional>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "federation/upstream_link.h"
#include "federation/upstream_tasks.h"
#include "json/json_members.h"
#include "json/json_text.h"

namespace crank::federation {

FederatedCall::FederatedCall(const UpstreamLink& link, mcp::ToolCall* call,
                             Clock::time_point deadline, StopFlags stopping)
    : link_(link),
      call_(call),
      deadline_(deadline),
      stopping_(stopping),
      context_("upstream " + link.config.name) {}

crank_emit_result FederatedCall::emit(std::string_view /*item_json*/) noexcept {
    return CRANK_EMIT_CANCELLED;
}

void FederatedCall::setError(crank_error_code code, std::string_view message,
                             std::string_view details_json) noexcept {
    try {
        const std::lock_guard lock(mutex_);
        code_ = code;
        message_ = link_.scrubber.scrub(message.substr(0, 4096));
        details_ = link_.scrubber.scrubJson(details_json.substr(0, 65536));
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; the status says it failed
    }
}

void FederatedCall::progress(double progress, double total, std::string_view message) noexcept {
    if (call_ == nullptr) {
        return;
    }
    try {
        call_->progress(progress, total < 0 ? std::nullopt : std::optional<double>(total), message);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a lost progress note is no failure
    }
}

bool FederatedCall::isCancelled() const noexcept {
    return stopping_.raised() || Clock::now() >= deadline_ ||
           (call_ != nullptr && call_->cancelled());
}

crank_cancel_reason FederatedCall::cancelReason() const noexcept {
    if (stopping_.raised()) {
        return CRANK_CANCEL_REQUESTED;
    }
    if (Clock::now() >= deadline_) {
        return CRANK_CANCEL_DEADLINE;
    }
    return call_ != nullptr && call_->cancelled() ? CRANK_CANCEL_REQUESTED : CRANK_CANCEL_NONE;
}

void FederatedCall::scrubLogLine(std::string& line) const {
    link_.scrubber.scrubInPlace(line);
}

void FederatedCall::notify(std::string_view method, std::string_view params_json) noexcept {
    if (call_ == nullptr || method != "notifications/message" || params_json.empty()) {
        return;
    }
    try {
        json::Document params;
        if (!json::parseObject(link_.scrubber.scrubJson(params_json), params)) {
            return;
        }
        const auto level = mcp::parseLogLevel(json::stringMember(params, "level"));
        const json::Value& object = params;  // const iterators compare unambiguously
        const auto data = object.FindMember("data");
        call_->log(level.value_or(mcp::LogLevel::info), json::stringMember(params, "logger"),
                   data != object.MemberEnd() ? json::toJsonText(data->value) : "null");
    } catch (...) {  // NOLINT(bugprone-empty-catch): a lost log line is no failure
    }
}

crank_status FederatedCall::request(std::string_view method, std::string_view params_json,
                                    std::int64_t timeout_ms, std::string& answer) noexcept {
    try {
        if (call_ == nullptr) {
            answer = rpcError(-32601, "no client is waiting on this request");
            return CRANK_ERROR;
        }
        const std::int64_t limit =
            std::min(timeout_ms > 0 ? timeout_ms : link_.config.client_request_timeout_ms,
                     link_.config.client_request_timeout_ms);
        const std::optional<std::string> params =
            link_.tasks != nullptr
                ? link_.tasks->toClientIds(link_, params_json, call_->caller().agent)
                : std::optional<std::string>(params_json);
        if (!params) {
            answer = rpcError(-32602, "the request's params cannot be read");
            return CRANK_ERROR;
        }
        auto reply = call_->requestClient(method, *params, std::chrono::milliseconds(limit));
        answer = std::move(reply.json);
        return reply.ok ? CRANK_OK : CRANK_ERROR;
    } catch (...) {
        return CRANK_ERROR;
    }
}

std::string FederatedCall::errorMessage(std::string_view method) const {
    json::Document error;
    const std::string json = errorJson(method);
    return json::parseObject(json, error) ? json::stringMember(error, "message") : json;
}

std::string FederatedCall::errorJson(std::string_view method) const {
    const std::lock_guard lock(mutex_);
    json::Document details;
    if (!details_.empty() && json::parseObject(details_, details) &&
        details.HasMember("jsonrpc_error") && details["jsonrpc_error"].IsObject()) {
        return json::toJsonText(details["jsonrpc_error"]);  // the upstream's, as it is
    }
    const std::int64_t code = code_ == CRANK_ERR_INVALID_ARGUMENT ? -32602 : -32603;
    return rpcError(code, fmt::format("upstream {}: {}: {}", link_.config.name, method,
                                      message_.empty() ? "failed" : message_));
}

}  // namespace crank::federation
