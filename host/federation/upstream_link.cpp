#include "federation/upstream_link.h"

#include <chrono>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "federation/federated_call.h"
#include "federation/input_relay.h"
#include "json/json_members.h"
#include "log/log.h"
#include "mcp/modern/modern_result.h"
#include "plugins/plugin_writer.h"
#include "util/json_string.h"

namespace crank::federation {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string rpcError(std::int64_t code, std::string_view message, std::string_view data) {
    std::string out = fmt::format(R"({{"code":{},"message":{})", code, jsonString(message));
    if (!data.empty()) {
        out += R"(,"data":)" + std::string(data);
    }
    return out + "}";
}

std::string UpstreamLink::open() {
    FederatedCall diagnostics(*this, nullptr, Clock::now() + milliseconds(10'000), openFlags());
    crank_upstream* opened =
        adapter->upstreamOpen(PluginPeer::handle(), config.name, config.config_json, diagnostics);
    if (opened == nullptr) {
        return diagnostics.errorMessage("open");
    }
    const std::lock_guard lock(handle_mutex_);
    upstream_ = opened;
    return {};
}

crank_upstream* UpstreamLink::handle() const {
    const std::lock_guard lock(handle_mutex_);
    return upstream_;
}

crank_upstream* UpstreamLink::release() {
    const std::lock_guard lock(handle_mutex_);
    return std::exchange(upstream_, nullptr);
}

namespace {

/// The `ttlMs` of a list result: a non-negative integer, or nullopt.
std::optional<std::int64_t> listTtl(std::string_view result_json) {
    if (result_json.find("ttlMs") == std::string_view::npos) {
        return std::nullopt;
    }
    json::Document doc;
    if (!json::parseObject(result_json, doc) || !doc.HasMember("ttlMs") ||
        !doc["ttlMs"].IsInt64() || doc["ttlMs"].GetInt64() < 0) {
        return std::nullopt;
    }
    return doc["ttlMs"].GetInt64();
}

}  // namespace

Answer UpstreamLink::request(std::string_view method, std::string_view params_in,
                             mcp::ToolCall* call, std::int64_t timeout_ms, bool tasks_asked) {
    // The client's trace context goes on in the request's _meta (W3C Trace Context in MCP),
    // checked: a forwarded request's own _meta members are replaced, or dropped when the
    // client's were not valid.
    // And the caller's capabilities: what a 2026 upstream may ask it (input_relay.h).
    // The Tasks extension is declared for a caller that declared it (its tools/call may become
    // the upstream's task) and on the task methods, which a 2026 upstream takes only so.
    const bool declareTasks = call != nullptr && (tasks_asked || call->clientDeclaresTasks() ||
                                                  method.rfind("tasks/", 0) == 0);
    const std::string traced =
        call != nullptr
            ? withCallerMeta(mcp::withTraceContext(params_in, call->trace()), *call, declareTasks)
            : mcp::withTraceContext(params_in, mcp::TraceContext{});
    const std::string_view params = traced;
    if (closing.load() && !gates.closed()) {
        Answer refused{false, rpcError(-32603, "upstream " + config.name + " is stopped")};
        refused.not_sent = true;
        return refused;
    }
    if (handle() == nullptr || closed()) {
        Answer refused{false, rpcError(-32603, "upstream " + config.name + " is closed")};
        refused.not_sent = true;
        return refused;
    }
    const std::int64_t bound = timeout_ms > 0 ? std::min(timeout_ms, config.request_timeout_ms)
                                              : config.request_timeout_ms;
    FederatedCall c(*this, call, Clock::now() + milliseconds(bound), requestFlags());
    plugins::PluginWriter writer(kMaxAnswerBytes);
    // Counted from before the check of the handle that the owner's stop makes after raising
    // `stopping`: either the stop sees this request, or this request sees `stopping`.
    ++active;
    crank_status status = CRANK_ERROR;
    crank_upstream* const upstream = handle();
    if (upstream != nullptr && !closed()) {
        status = adapter->upstreamRequest(upstream, c, method, params, writer.handle());
    } else {
        c.setError(CRANK_ERR_UNAVAILABLE, "the upstream is closed", {});
    }
    --active;
    if (status == CRANK_OK && !writer.overflowed() && !writer.text().empty()) {
        std::string result = scrubber.scrubJson(writer.text());
        InputVerdict asked = readInputRequired(result);
        if (asked.need || !asked.fault.empty()) {
            if (method != "tools/call" && method != "prompts/get" && method != "resources/read") {
                asked.fault = "only tools/call, prompts/get and resources/read may ask for input";
            }
            if (!asked.fault.empty()) {
                return {false, rpcError(-32603, fmt::format("upstream {}: {}: its input_required "
                                                            "result cannot be relayed: {}",
                                                            config.name, method, asked.fault))};
            }
            return {true, std::move(result), std::move(asked.need)};
        }
        // resultType, ttlMs and cacheScope are crankd's to set on a 2026-era answer; a list's
        // ttlMs tells crankd when to fetch it again.
        Result<std::string> passed = mcp::upstreamResult(result, method);
        if (!passed) {
            return {false, rpcError(-32603, fmt::format("upstream {}: {}: {}", config.name, method,
                                                        passed.error().message))};
        }
        Answer answer{true, std::move(*passed)};
        if (method.size() > 5 && method.substr(method.size() - 5) == "/list") {
            answer.ttl_ms = listTtl(result);
        }
        return answer;
    }
    if (writer.overflowed()) {
        return {false, rpcError(-32603, fmt::format("upstream {}: {}: the answer is larger "
                                                    "than {} bytes",
                                                    config.name, method, kMaxAnswerBytes))};
    }
    if (cancelling.load() && !gates.closed()) {
        // The operator's stop ran out of grace: named, not a plain cancellation.
        return {false,
                rpcError(-32603, "upstream " + config.name + " was stopped while the request ran")};
    }
    if (status == CRANK_CANCELLED || (call != nullptr && call->cancelled())) {
        return {false, rpcError(-32800, "request cancelled")};
    }
    return {false, c.errorJson(method)};
}

void UpstreamLink::notify(std::string_view method, std::string_view raw_params_json) noexcept {
    try {
        if (method == "notifications/tools/list_changed") {
            events->listsChanged(*this, kTools);
            return;
        }
        if (method == "notifications/resources/list_changed") {
            events->listsChanged(*this, kResources);
            return;
        }
        if (method == "notifications/prompts/list_changed") {
            events->listsChanged(*this, kPrompts);
            return;
        }
        if (method != "notifications/resources/updated" && method != "notifications/tasks/status" &&
            method != "notifications/message") {
            return;
        }
        const std::string params_json = scrubber.scrubJson(raw_params_json);
        json::Document params;
        if (params_json.empty() || !json::parseObject(params_json, params)) {
            return;
        }
        if (method == "notifications/resources/updated") {
            events->resourceUpdated(*this, json::stringMember(params, "uri"), params_json);
        } else if (method == "notifications/tasks/status") {
            events->taskStatus(*this, json::stringMember(params, "taskId"), params_json);
        } else {
            const auto level = mcp::parseLogLevel(json::stringMember(params, "level"));
            events->logMessage(*this, level.value_or(mcp::LogLevel::info), params_json);
        }
    } catch (const std::exception& e) {
        log::warn("upstream {}: a notification was lost: {}", config.name, e.what());
    }
}

}  // namespace crank::federation
