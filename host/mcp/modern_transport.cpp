#include "mcp/modern_transport.h"

#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <rapidjson/document.h>

#include "http/responses.h"
#include "mcp/log_level.h"
#include "mcp/message_outcome.h"
#include "mcp/routing_headers.h"
#include "mcp/stateless_scope.h"
#include "mcp/tool_call_params.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

using http::sendBody;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

/// The Tasks extension of MCP 2026-07-28 (SEP-2663).
constexpr std::string_view kTasksExtension = "io.modelcontextprotocol/tasks";

/// Methods of the 2025 era that 2026-07-28 removed: a request for one of them that claims the
/// new era is answered 404 + -32601, like an unknown method.
bool isRemovedMethod(std::string_view method) {
    return method == "initialize" || method == "ping" || method == "logging/setLevel" ||
           method == "resources/subscribe" || method == "resources/unsubscribe";
}

/// The HTTP status of a JSON-RPC error answered to a 2026-era request: 404 for a method that is
/// not there, 400 for the era's envelope errors, 200 for the errors of a method that ran.
int statusOf(std::int64_t code) {
    if (code == kMethodNotFound) {
        return 404;
    }
    if (code == kHeaderMismatch || code == kMissingRequiredClientCapability ||
        code == kUnsupportedProtocolVersion) {
        return 400;
    }
    return 200;
}

/// The code of an error object written by this endpoint or passed on from an upstream; 0 when
/// it has none.
std::int64_t codeOf(std::string_view error_json) {
    const Result<std::string> code = extractMember(error_json, "code");
    if (!code || code->empty()) {
        return 0;
    }
    try {
        return std::stoll(*code);
    } catch (const std::exception&) {
        return 0;
    }
}

/// The level a `_meta` logLevel (JSON text) names; nullopt when it is not a level's name.
std::optional<LogLevel> logLevelOf(std::string_view json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    if (doc.HasParseError() || !doc.IsString()) {
        return std::nullopt;
    }
    return parseLogLevel(std::string_view(doc.GetString(), doc.GetStringLength()));
}

/// True when client capabilities (JSON text) declare extension `id` under `extensions`.
bool declaresExtension(std::string_view capabilities_json, std::string_view id) {
    const Result<std::string> extensions = extractMember(capabilities_json, "extensions");
    if (!extensions || extensions->empty() || extensions->front() != '{') {
        return false;
    }
    const Result<std::string> extension = extractMember(*extensions, id);
    return extension && !extension->empty();
}

MethodAnswer notFound(std::string_view method, std::string_view why) {
    return MethodAnswer::error(
        kMethodNotFound, "method " + std::string(method.substr(0, 100)) + " " + std::string(why));
}

}  // namespace

ModernTransport::ModernTransport(ServerIdentity identity, const config::McpConfig& mcp,
                                 bool private_lists, const MethodTable& methods,
                                 const EndpointObserver& observer)
    : identity_(std::move(identity)),
      server_info_json_(R"({"name":)" + jsonString(identity_.name) + R"(,"version":)" +
                        jsonString(identity_.version) + "}"),
      list_ttl_ms_(mcp.list_ttl_ms),
      read_ttl_ms_(mcp.read_ttl_ms),
      private_lists_(private_lists),
      methods_(methods),
      observer_(observer) {}

void ModernTransport::post(HTTPServerRequest& request, HTTPServerResponse& response, const Who& who,
                           const ParsedBody& parsed, const EraVerdict& verdict,
                           std::chrono::steady_clock::time_point since) const {
    // classifyPost() finds the 2026 era only in a body of one message, a request or a
    // notification.
    const auto& message = std::get<JsonRpcMessage>(parsed.entries.front());
    const bool isRequest = message.kind == JsonRpcKind::request;
    const auto refuse = [&](const EraRefusal& refusal) {
        const std::string reply = makeError(isRequest ? message.id : std::nullopt, refusal.code,
                                            refusal.message, refusal.data_json);
        observer_.counted(methodLabel(message.method), errorName(refusal.code), since);
        sendBody(response, refusal.status, "application/json", reply);
    };
    if (verdict.refusal) {
        refuse(*verdict.refusal);
        return;
    }
    if (auto refusal = checkStandardHeaders(request, message)) {
        refuse(*refusal);
        return;
    }
    if (!isRequest) {
        // Nothing of the era's notifications needs an answer over HTTP: a request is cancelled
        // by closing its stream.
        observer_.counted(methodLabel(message.method), "accepted", since);
        sendBody(response, 202, "", "");
        return;
    }
    const MethodAnswer answered = answer(request, message, verdict.meta, who);
    if (answered.isNone()) {
        observer_.counted(message.method, "cancelled", since);
        sendBody(response, 200, "application/json", "");
        return;
    }
    std::string reply;
    int status = 200;
    if (answered.isError()) {
        status = statusOf(codeOf(answered.json));
        reply = toMessage(*message.id, answered);
    } else {
        reply = makeResult(*message.id,
                           modernResult(answered.json, server_info_json_, hintOf(message.method)));
    }
    observer_.answered(message.method, reply, since);
    sendBody(response, status, "application/json", reply);
}

MethodAnswer ModernTransport::answer(const HTTPServerRequest& request,
                                     const JsonRpcMessage& message, const RequestMeta& meta,
                                     const Who& who) const {
    if (!meta.log_level_json.empty() && !logLevelOf(meta.log_level_json)) {
        return MethodAnswer::error(kInvalidParams,
                                   "params._meta[\"" + std::string(kMetaLogLevel) +
                                       "\"] must be one of debug, info, notice, warning, error, "
                                       "critical, alert, emergency");
    }
    const std::string& method = message.method;
    if (method == "server/discover") {
        return discover(who);
    }
    if (isRemovedMethod(method)) {
        return notFound(method, "is not part of MCP 2026-07-28");
    }
    if (method == "tasks/result" || method == "tasks/list") {
        return notFound(method, "is not part of the tasks extension");
    }
    if (method.rfind("tasks/", 0) == 0) {
        if (!declaresExtension(meta.client_capabilities_json, kTasksExtension)) {
            return MethodAnswer::error(kMissingRequiredClientCapability,
                                       method + " needs the " + std::string(kTasksExtension) +
                                           " extension, declared in params._meta[\"" +
                                           std::string(kMetaClientCapabilities) + "\"].extensions",
                                       R"({"requiredCapabilities":{"extensions":{)" +
                                           jsonString(kTasksExtension) + ":{}}}}");
        }
        return notFound(method, "is not served: crankd does not offer the tasks extension");
    }
    if (method == "subscriptions/listen") {
        return notFound(method, "is not served yet");
    }
    if (method == "tools/call") {
        return toolsCall(request, message, who);
    }
    StatelessScope scope(who);
    if (auto answered = methods_.answer(message, scope)) {
        return std::move(*answered);
    }
    return notFound(method, "is not found");
}

MethodAnswer ModernTransport::discover(const Who& who) const {
    std::string versions = "[";
    for (const char* version : kModernVersions) {
        versions += (versions.size() > 1 ? "," : "") + jsonString(version);
    }
    versions += ']';
    return MethodAnswer::result(R"({"supportedVersions":)" + versions + R"(,"capabilities":{)" +
                                methods_.capabilitiesJson(who) + "}}");
}

MethodAnswer ModernTransport::toolsCall(const HTTPServerRequest& request,
                                        const JsonRpcMessage& message, const Who& who) const {
    auto params = parseToolCallParams(message.params_json);
    if (!params) {
        return MethodAnswer::error(kInvalidParams, "tools/call: " + params.error().message);
    }
    if (auto definition = who.tools->find(params->name)) {
        if (auto refusal =
                checkParamHeaders(request, definition->input_schema_json, params->arguments_json)) {
            return MethodAnswer::error(refusal->code, refusal->message);
        }
    }
    // The 2025 `task` member is ignored in this era: a task is the server's choice (SEP-2663).
    StatelessScope scope(who);
    return methods_.toolsCall(*message.id, *params, scope, std::nullopt);
}

std::optional<CacheHint> ModernTransport::hintOf(std::string_view method) const {
    if (!isCacheableMethod(method)) {
        return std::nullopt;
    }
    return CacheHint{method == "resources/read" ? read_ttl_ms_ : list_ttl_ms_,
                     private_lists_ ? "private" : "public"};
}

}  // namespace crank::mcp
