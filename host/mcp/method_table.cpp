#include "mcp/method_table.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_members.h"
#include "json/json_scanner.h"
#include "mcp/wire/method_registry.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

/// The cursor of tools/list pages is opaque to clients: "c" and the index of the page's first
/// tool in hex. nullopt when `cursor_json` (a JSON value) is not one, or points past `size`.
std::optional<std::size_t> pageStart(const std::string& cursor_json, std::size_t size) {
    json::Document doc;
    if (!json::parseValue(cursor_json, doc) || !doc.IsString() || doc.GetStringLength() < 2 ||
        doc.GetString()[0] != 'c') {
        return std::nullopt;
    }
    const std::string_view digits(doc.GetString() + 1, doc.GetStringLength() - 1);
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
    if (ec != std::errc() || end != digits.data() + digits.size() || value > size) {
        return std::nullopt;
    }
    return value;
}

/// One tool as tools/list shows it.
void appendTool(std::string& out, const ToolDefinition& t, bool show_task_support) {
    if (!t.raw_json.empty()) {
        const std::size_t close = t.raw_json.rfind('}');
        const auto top = show_task_support && t.task_by_upstream
                             ? json::scan::readObject(t.raw_json)
                             : Result<json::scan::RawEntry>(Error{ErrorCode::not_found, ""});
        if (top && close != std::string::npos &&
            json::scan::findMember(top->members, "execution") == nullptr) {
            // A 2026 upstream's tool (its era has no execution member), as a 2025 session
            // learns that it may ask for a task.
            const bool empty = t.raw_json.find_first_not_of(" \t\r\n{") >= close;
            out.append(t.raw_json, 0, close);
            out += empty ? "" : ",";
            out += R"("execution":{"taskSupport":"optional"}})";
            return;
        }
        out += t.raw_json;
        return;
    }
    out += R"({"name":)" + jsonString(t.name);
    if (!t.title.empty()) {
        out += R"(,"title":)" + jsonString(t.title);
    }
    out += R"(,"description":)" + jsonString(t.description);
    out += R"(,"inputSchema":)" + t.input_schema_json;
    if (!t.output_schema_json.empty()) {
        out += R"(,"outputSchema":)" + t.output_schema_json;
    }
    if (show_task_support && !t.task_support.empty()) {
        out += R"(,"execution":{"taskSupport":)" + jsonString(t.task_support) + "}";
    }
    out += '}';
}

}  // namespace

MethodTable::MethodTable(const config::McpConfig& mcp, std::shared_ptr<CallerQuotas> quotas)
    : tools_page_size_(std::max<std::int64_t>(1, mcp.tools_page_size)),
      max_input_rounds_(std::max<std::int64_t>(1, mcp.max_input_rounds)),
      input_wait_(std::max<std::int64_t>(1, mcp.input_wait_ms)),
      quotas_(std::move(quotas)) {}

std::optional<MethodAnswer> MethodTable::answer(const JsonRpcMessage& message,
                                                RequestScope& scope) const {
    const MethodInfo* info = findMethod(message.method);
    if (info == nullptr) {
        return std::nullopt;
    }
    switch (info->handler) {
        case MethodHandler::tools_list:
            return toolsList(message, scope);
        case MethodHandler::tools_call: {
            auto params = parseToolCallParams(message);
            if (!params) {
                return MethodAnswer::error(kInvalidParams, "tools/call: " + params.error().message);
            }
            return toolsCall(*message.id, *params, scope, std::nullopt);
        }
        case MethodHandler::catalog:
        case MethodHandler::tasks:  // an upstream's tasks are the catalog's (Catalog::ownsTask)
            return catalogRequest(message, scope);
        case MethodHandler::lifecycle:
        case MethodHandler::discover:
        case MethodHandler::listen:
        case MethodHandler::notification:
            break;
    }
    return std::nullopt;
}

std::string MethodTable::capabilitiesJson(const Who& who) const {
    std::string capabilities = R"("tools":{"listChanged":true},"logging":{})";
    if (who.catalog != nullptr) {
        const std::string extra = mcp::capabilitiesJson(who.catalog->capabilities());
        if (!extra.empty()) {
            capabilities += "," + extra;
        }
    }
    return capabilities;
}

MethodAnswer MethodTable::toolsList(const JsonRpcMessage& message,
                                    const RequestScope& scope) const {
    auto cursorJson = extractMember(message.params_json, "cursor");
    if (!cursorJson) {
        return MethodAnswer::error(kInvalidParams, "tools/list: " + cursorJson.error().message);
    }
    const std::vector<ToolDefinition> all = scope.who().tools->list();
    std::size_t start = 0;
    if (!cursorJson->empty()) {
        const auto from = pageStart(*cursorJson, all.size());
        if (!from) {
            return MethodAnswer::error(kInvalidParams, "tools/list: invalid cursor");
        }
        start = *from;
    }
    const std::size_t end =
        std::min(all.size(), start + static_cast<std::size_t>(tools_page_size_));
    const bool showTasks = scope.showsTaskSupport();
    std::string result = R"({"tools":[)";
    for (std::size_t i = start; i < end; ++i) {
        if (i != start) {
            result += ',';
        }
        appendTool(result, all[i], showTasks);
    }
    result += ']';
    if (end < all.size()) {
        result += R"(,"nextCursor":)" + jsonString(fmt::format("c{:x}", end));
    }
    result += '}';
    return MethodAnswer::result(std::move(result));
}

MethodAnswer MethodTable::toolsCall(const RequestId& id, const ToolCallParams& params,
                                    RequestScope& scope,
                                    std::optional<RequestId> progress_token) const {
    const Who& who = scope.who();
    std::string refusal;
    // Released however the call ends.
    const auto slot =
        CallerQuotas::hold(quotas_, CallerQuotas::Kind::call, who.agent, who.workspace, refusal);
    if (!slot) {
        // A limit, not a failure of the tool: the model reads it and may retry later.
        return MethodAnswer::result(ToolResult::refusal(refusal).toJson());
    }
    Result<ToolResult> result = Error{ErrorCode::internal, "not run"};
    std::optional<MethodAnswer> answered;
    bool cancelled = false;
    {
        const std::unique_ptr<ToolCall> call = scope.beginCall(id, std::move(progress_token));
        call->setTrace(scope.trace());
        const auto run = [&] {
            try {
                result = who.tools->call(params.name, params.arguments_json, *call);
            } catch (const std::exception& e) {
                result = Error{ErrorCode::internal, std::string("the tool failed: ") + e.what()};
            }
        };
        run();
        // MRTR: each round of input the tool asks for, until it answers.
        while (result && result->input && !call->cancelled()) {
            answered = inputRound(*result->input, *call, params.name, scope);
            if (answered) {
                break;
            }
            run();
        }
        cancelled = call->cancelled();
    }
    if (cancelled || (answered && answered->isNone())) {
        return MethodAnswer::none();  // the client gave up on it: no response (MCP cancellation)
    }
    if (answered) {
        return std::move(*answered);
    }
    if (!result) {
        const std::int64_t code = result.error().code == ErrorCode::not_found ||
                                          result.error().code == ErrorCode::invalid_argument
                                      ? kInvalidParams
                                      : kInternalError;
        return MethodAnswer::error(code, "tools/call: " + result.error().message);
    }
    if (!result->rpc_error_json.empty()) {
        return MethodAnswer::rawError(std::move(result->rpc_error_json));
    }
    return MethodAnswer::result(result->toJson());
}

std::optional<MethodAnswer> MethodTable::inputRound(const InputNeed& need, ToolCall& call,
                                                    const std::string& tool,
                                                    RequestScope& scope) const {
    if (const std::string fault = inputNeedFault(need, tool); !fault.empty()) {
        return MethodAnswer::error(kInternalError, "tools/call: " + fault);
    }
    const InputRound* previous = call.inputRound();
    if (previous != nullptr && previous->round >= max_input_rounds_) {
        return MethodAnswer::result(ToolResult::refusal("tool " + jsonString(tool) +
                                                        " asked for input " +
                                                        std::to_string(previous->round + 1) +
                                                        " times; mcp.max_input_rounds allows " +
                                                        std::to_string(max_input_rounds_))
                                        .toJson());
    }
    InputStep step = scope.inputRequired(need, call, tool, input_wait_);
    if (step.answer) {
        return std::move(step.answer);
    }
    call.setInputRound(std::move(step.next));
    return std::nullopt;
}

std::optional<MethodAnswer> MethodTable::catalogRequest(const JsonRpcMessage& message,
                                                        RequestScope& scope) const {
    const Who& who = scope.who();
    Catalog* catalog = who.catalog;
    if (catalog == nullptr) {
        return std::nullopt;
    }
    // A catalog that offers nothing now (a workspace without upstreams) answers nothing of its
    // own methods: they are unknown, as without one. A task of an upstream (tasks/*) is still
    // the catalog's to answer, as unknown or as its upstream's gone.
    const MethodInfo* row = findMethod(message.method);
    if (const CatalogCapabilities offered = catalog->capabilities();
        row != nullptr && row->handler == MethodHandler::catalog && !offered.resources &&
        !offered.prompts && !offered.completions) {
        return std::nullopt;
    }
    // Every catalog request but the lists (answered from memory) may wait on an upstream: it
    // takes a call slot like a tools/call (per agent, per workspace, node), released however it
    // ends, so that reads of a slow upstream cannot hold every worker.
    std::unique_ptr<CallerQuotas::Hold> slot;
    if (row == nullptr || !row->from_memory) {
        std::string refusal;
        slot = CallerQuotas::hold(quotas_, CallerQuotas::Kind::call, who.agent, who.workspace,
                                  refusal);
        if (!slot) {
            return MethodAnswer::error(kInternalError, message.method + ": " + refusal);
        }
    }
    std::optional<CatalogReply> reply;
    {
        const std::unique_ptr<ToolCall> call = scope.beginCall(*message.id, std::nullopt);
        call->setTrace(scope.trace());
        try {
            reply = catalog->handle(message.method, message.params_json, *call, scope.sessionId());
        } catch (const std::exception& e) {
            reply = CatalogReply{{},
                                 R"({"code":-32603,"message":)" +
                                     jsonString(message.method + " failed: " + e.what()) + "}"};
        }
    }
    if (scope.sessionEnded()) {
        // Ended while this ran: what it subscribed to after the session's own clean-up goes too.
        catalog->forget(scope.sessionId());
    }
    if (!reply) {
        return std::nullopt;
    }
    if (!reply->error_json.empty()) {
        return MethodAnswer::rawError(std::move(reply->error_json));
    }
    return MethodAnswer::result(std::move(reply->result_json));
}

}  // namespace crank::mcp
