#include "runtime/tool_call_audit.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_members.h"
#include "log/log.h"
#include "util/json_string.h"

namespace crank::runtime {
namespace {

/// Longest error text kept in an audit detail, bytes (as the job and session entries keep).
constexpr std::size_t kMaxAuditedErrorBytes = 512;

/// The first text of an isError result's content, cut at kMaxAuditedErrorBytes on a UTF-8
/// character boundary.
std::string errorText(const mcp::ToolResult& result) {
    json::Document content;
    std::string text;
    if (json::parseValue(result.content_json, content) && content.IsArray()) {
        for (const auto& part : content.GetArray()) {
            if (part.IsObject() && part.HasMember("text") && part["text"].IsString()) {
                text.assign(part["text"].GetString(), part["text"].GetStringLength());
                break;
            }
        }
    }
    if (text.size() > kMaxAuditedErrorBytes) {
        std::size_t cut = kMaxAuditedErrorBytes;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) {
            --cut;  // text[cut] continues a character: cut before that character
        }
        text.resize(cut);
    }
    return text;
}

}  // namespace

void auditToolCall(AuditLog& log, const mcp::Caller& caller, const Operation& op,
                   const mcp::ToolResult& result, std::int64_t elapsed_ms) {
    const bool window = op.config.execution.mode == config::ExecutionMode::window;
    store::AuditEvent event;
    event.workspace_id = caller.workspace;
    event.agent_id = caller.agent.empty() ? "anonymous" : caller.agent;
    event.operation_id = op.config.name;
    event.action = window ? "window.call" : "unary.call";
    event.outcome = result.is_error ? "error" : "ok";
    std::string detail =
        fmt::format(R"({{"tool":{},"elapsed_ms":{})", jsonString(op.config.name), elapsed_ms);
    if (result.is_error) {
        detail += R"(,"error":)" + jsonString(errorText(result));
    }
    event.detail_json = detail + "}";
    if (auto r = log.append(std::move(event)); !r) {
        log::warn("tools: the audit log refused {}: {}", window ? "window.call" : "unary.call",
                  r.error().message);
    }
}

}  // namespace crank::runtime
