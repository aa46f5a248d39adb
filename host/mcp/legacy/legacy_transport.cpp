#include "mcp/legacy/legacy_transport.h"

#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <fmt/core.h>
#include <rapidjson/document.h>

#include "http/responses.h"
#include "http/sse_event.h"
#include "json/json_members.h"
#include "log/log.h"
#include "mcp/endpoint_http.h"
#include "mcp/legacy/legacy_scope.h"
#include "mcp/message_outcome.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/log_level.h"
#include "mcp/wire/method_registry.h"
#include "mcp/wire/request_meta.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

/// The trace context of a request that is not a tools/call (whose params are read anyway): its
/// `_meta` is read only when the params mention a traceparent at all.
TraceContext traceOf(const JsonRpcMessage& message, const HeaderTrace& headers) {
    if (message.params_json.find("traceparent") != std::string::npos) {
        if (Result<RequestMeta> meta = readRequestMeta(message)) {
            return requestTraceContext(meta->traceparent, meta->tracestate, headers);
        }
    }
    return requestTraceContext({}, {}, headers);
}

using http::sendBody;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

/// The longest client name (clientInfo.name) written to the log.
constexpr std::size_t kMaxClientNameInLog = 128;

}  // namespace

LegacyTransport::LegacyTransport(ServerIdentity identity, SessionManager& sessions,
                                 SessionStreams& streams, LegacyTasks& tasks,
                                 const MethodTable& methods, std::shared_ptr<CallerQuotas> quotas,
                                 const EndpointObserver& observer)
    : identity_(std::move(identity)),
      sessions_(sessions),
      streams_(streams),
      tasks_(tasks),
      methods_(methods),
      quotas_(std::move(quotas)),
      observer_(observer) {}

std::shared_ptr<McpSession> LegacyTransport::sessionOf(HTTPServerRequest& request,
                                                       HTTPServerResponse& response,
                                                       const Who& who) {
    const std::string id = request.get("Mcp-Session-Id", "");
    if (id.empty()) {
        sendHttpError(response, 400, kInvalidRequest,
                      "Mcp-Session-Id header is required (send initialize first)");
        return nullptr;
    }
    auto session = sessions_.find(id);
    // Another agent's session is answered as unknown: ids are not shared, and not confirmed.
    if (!session || session->agent() != who.agent || session->workspace() != who.workspace) {
        sendHttpError(response, 404, kInvalidRequest,
                      "session not found (it expired or was deleted); initialize a new one");
        return nullptr;
    }
    const std::string version = request.get("MCP-Protocol-Version", kDefaultHeaderVersion);
    if (!versionSupported(version)) {
        sendHttpError(response, 400, kInvalidRequest,
                      "unsupported MCP-Protocol-Version \"" + version.substr(0, 64) +
                          "\"; supported: 2025-11-25, 2025-06-18, 2025-03-26");
        return nullptr;
    }
    return session;
}

void LegacyTransport::post(HTTPServerRequest& request, HTTPServerResponse& response, const Who& who,
                           const ParsedBody& parsed, const HeaderTrace& headers,
                           std::chrono::steady_clock::time_point since,
                           const std::optional<Result<ToolCallParams>>& tool_call) {
    if (parsed.fatal) {
        observer_.counted("invalid", errorName(parsed.fatal->code), since);
        sendBody(response, 400, "application/json", makeError(*parsed.fatal));
        return;
    }
    // initialize opens a session; it must come alone.
    if (!parsed.batch && std::holds_alternative<JsonRpcMessage>(parsed.entries.front())) {
        const auto& message = std::get<JsonRpcMessage>(parsed.entries.front());
        if (message.kind == JsonRpcKind::request && message.method == "initialize") {
            std::shared_ptr<McpSession> created;
            Reply reply = initialize(message, created, who);
            if (created) {
                created->setAgent(who.agent);
                created->setWorkspace(who.workspace);
                response.set("Mcp-Session-Id", created->id());
            }
            observer_.answered(message.method, reply.answer, since);
            sendBody(response, reply.status, "application/json",
                     toMessage(*message.id, reply.answer));
            return;
        }
    }
    auto session = sessionOf(request, response, who);
    if (!session) {
        return;
    }
    if (parsed.batch && session->protocolVersion() != "2025-03-26") {
        sendHttpError(response, 400, kInvalidRequest,
                      "batches are only allowed with protocol version 2025-03-26; this session "
                      "uses " +
                          session->protocolVersion());
        return;
    }
    if (!parsed.batch) {
        if (const auto* rejection = std::get_if<JsonRpcRejection>(&parsed.entries.front())) {
            observer_.counted("invalid", errorName(rejection->code), since);
            sendBody(response, 400, "application/json", makeError(*rejection));
            return;
        }
        const auto& message = std::get<JsonRpcMessage>(parsed.entries.front());
        if (message.kind != JsonRpcKind::request) {
            notify(message, *session, who);
            observer_.counted(message.kind == JsonRpcKind::notification
                                  ? methodLabel(message.method)
                                  : "response",
                              "accepted", since);
            sendBody(response, 202, "", "");
            return;
        }
        this->request(request, response, message, session, who, headers, since, tool_call);
        return;
    }
    // A 2025-03-26 batch: every request answered in one JSON array.
    std::string out = "[";
    bool any = false;
    for (const JsonRpcEntry& entry : parsed.entries) {
        std::string reply;
        const auto entrySince = std::chrono::steady_clock::now();
        if (const auto* rejection = std::get_if<JsonRpcRejection>(&entry)) {
            observer_.counted("invalid", errorName(rejection->code), entrySince);
            reply = makeError(*rejection);
        } else {
            const auto& message = std::get<JsonRpcMessage>(entry);
            if (message.kind == JsonRpcKind::request) {
                const MethodAnswer answered = answer(message, session, who, headers);
                reply = toMessage(*message.id, answered);
                observer_.answered(message.method, answered, entrySince);
            } else {
                notify(message, *session, who);
                observer_.counted(message.kind == JsonRpcKind::notification
                                      ? methodLabel(message.method)
                                      : "response",
                                  "accepted", entrySince);
            }
        }
        if (!reply.empty()) {  // empty: a notification, or a request the client cancelled
            out += (any ? "," : "") + reply;
            any = true;
        }
    }
    if (!any) {
        sendBody(response, 202, "", "");
        return;
    }
    sendBody(response, 200, "application/json", out + "]");
}

bool LegacyTransport::streamed(const ToolCallParams& call, const McpSession& session,
                               const Who& who) const {
    if (tasks_.enabled(session) && !call.task_json.empty()) {
        return false;
    }
    if (call.meta.progress_token) {
        return true;  // progress comes before the result
    }
    // A tool that may ask the client something while it runs answers on a stream; only a client
    // that can be asked something needs it (an SSE answer costs clients more than a JSON one).
    const auto definition = who.tools->find(call.name);
    return definition && definition->requests_client && clientCanBeAsked(session);
}

void LegacyTransport::request(HTTPServerRequest& request, HTTPServerResponse& response,
                              const JsonRpcMessage& message,
                              const std::shared_ptr<McpSession>& session, const Who& who,
                              const HeaderTrace& headers,
                              std::chrono::steady_clock::time_point since,
                              const std::optional<Result<ToolCallParams>>& tool_call) {
    if (message.method == "tasks/result" && tasks_.enabled(*session)) {
        tasks_.result(message, session, who, request, response);
        return;
    }
    // A tools/call's params are read once (by the era classifier, or here), for the choice of
    // stream and for the call.
    std::optional<Result<ToolCallParams>> own;
    const Result<ToolCallParams>* call = tool_call ? &*tool_call : nullptr;
    if (call == nullptr && message.method == "tools/call") {
        own = parseToolCallParams(message);
        call = &*own;
    }
    if (call != nullptr && *call && streamed(**call, *session, who)) {
        // In flight from before the stream's priming event: a notifications/cancelled sent as
        // soon as the client sees the stream finds it (the call's ToolCall shares the flag).
        const std::string key = message.id->toJson();
        session->beginRequest(key);
        struct EndRequest {
            McpSession& session;
            const std::string& key;
            ~EndRequest() { session.endRequest(key); }
        } const inFlight{*session, key};
        const std::uint64_t stream = session->openStream(false);
        if (!streams_.open(request, response, session, stream, std::nullopt)) {
            return;
        }
        const MethodAnswer answered = answer(message, session, who, headers, stream, call);
        if (answered.isNone()) {
            observer_.counted(message.method, "cancelled", since);
        } else {
            const std::string reply = toMessage(*message.id, answered);
            observer_.answered(message.method, answered, since);
            session->send(stream, reply);
        }
        session->finish(stream);
        return;
    }
    // A cancelled call is answered with an empty body (the client no longer reads it).
    const MethodAnswer answered = answer(message, session, who, headers, std::nullopt, call);
    const std::string reply = toMessage(*message.id, answered);
    observer_.answered(message.method, answered, since);
    sendBody(response, 200, "application/json", reply);
}

LegacyTransport::Reply LegacyTransport::initialize(const JsonRpcMessage& message,
                                                   std::shared_ptr<McpSession>& created,
                                                   const Who& who) {
    json::Document params;
    if (!json::parseObject(message.params_json, params)) {
        return {MethodAnswer::error(kInvalidParams, "initialize: params must be an object"), 200};
    }
    const std::string requested = json::stringMember(params, "protocolVersion");
    if (requested.empty()) {
        return {MethodAnswer::error(kInvalidParams,
                                    "initialize: params.protocolVersion is required (a string)"),
                200};
    }
    const std::string version = versionSupported(requested) ? requested : kLatestVersion;
    std::string refusal;
    std::shared_ptr<CallerQuotas::Hold> place =
        CallerQuotas::hold(quotas_, CallerQuotas::Kind::session, who.agent, who.workspace, refusal);
    if (!place) {
        return {MethodAnswer::error(kInternalError, "initialize: " + refusal), 429};
    }
    auto session = sessions_.create(version);
    if (!session) {
        return {MethodAnswer::error(kInternalError, session.error().message), 503};
    }
    created = *session;
    created->keepUntilEnd(std::move(place));  // the session's place, given back when it ends
    if (params.HasMember("capabilities") && params["capabilities"].IsObject()) {
        created->setClientCapabilities(keptClientCapabilities(params["capabilities"]));
    }
    const std::string capabilities =
        "{" + methods_.capabilitiesJson(who) + tasks_.capabilityJson(version) + "}";
    const std::string result = R"({"protocolVersion":)" + jsonString(version) +
                               R"(,"capabilities":)" + capabilities + R"(,"serverInfo":{"name":)" +
                               jsonString(identity_.name) + R"(,"version":)" +
                               jsonString(identity_.version) + "}}";
    // The client's name is the client's bytes: cut short (and escaped by the log).
    log::info(
        "mcp: session {} initialized (protocol {}, client {})", created->id().substr(0, 8), version,
        log::sanitize(
            json::stringMember(params.HasMember("clientInfo") && params["clientInfo"].IsObject()
                                   ? params["clientInfo"]
                                   : params,
                               "name"),
            kMaxClientNameInLog, false));
    return {MethodAnswer::result(result), 200};
}

void LegacyTransport::notify(const JsonRpcMessage& message, McpSession& session, const Who& who) {
    if (message.kind == JsonRpcKind::response && message.id) {
        session.deliverClientAnswer(message.id->toJson(), true, message.result_json);
        return;
    }
    if (message.kind == JsonRpcKind::error_response) {
        if (message.id) {
            session.deliverClientAnswer(
                message.id->toJson(), false,
                MethodAnswer::error(message.error.code, message.error.message,
                                    message.error.data_json)
                    .json);
        }
        return;
    }
    if (message.kind != JsonRpcKind::notification) {
        return;
    }
    if (message.method == "notifications/roots/list_changed") {
        if (who.catalog != nullptr) {
            who.catalog->clientNotification(message.method, message.params_json);
        }
        return;
    }
    if (message.method == "notifications/initialized") {
        session.setInitialized();
    } else if (message.method == "notifications/cancelled") {
        auto requestId = extractMember(message.params_json, "requestId");
        if (requestId && !requestId->empty()) {
            session.cancelRequest(*requestId);
        }
    }
}

MethodAnswer LegacyTransport::answer(const JsonRpcMessage& message,
                                     const std::shared_ptr<McpSession>& session, const Who& who,
                                     const HeaderTrace& headers,
                                     std::optional<std::uint64_t> stream,
                                     const Result<ToolCallParams>* call) {
    const MethodInfo* info = findMethod(message.method);
    if (info == nullptr || !info->legacy || info->handler == MethodHandler::notification) {
        return MethodAnswer::error(kMethodNotFound,
                                   "method not found: " + message.method.substr(0, 100));
    }
    switch (info->handler) {
        case MethodHandler::lifecycle:
            return lifecycle(message, *session);
        case MethodHandler::tools_call:
            if (call != nullptr) {
                return toolsCall(message, *call, session, who, headers, stream);
            }
            return toolsCall(message, parseToolCallParams(message), session, who, headers, stream);
        case MethodHandler::tasks:
            // tasks/result streams (request()); a task of an upstream is the catalog's.
            if (tasks_.enabled(*session) && message.method != "tasks/result") {
                return tasks_.method(message, session, who);
            }
            break;
        default:
            break;
    }
    LegacyScope scope(session, who, stream, tasks_.enabled(*session));
    scope.setTrace(traceOf(message, headers));
    if (auto answered = methods_.answer(message, scope)) {
        return std::move(*answered);
    }
    return MethodAnswer::error(kMethodNotFound,
                               "method not found: " + message.method.substr(0, 100));
}

MethodAnswer LegacyTransport::lifecycle(const JsonRpcMessage& message, McpSession& session) {
    if (message.method == "ping") {
        return MethodAnswer::result("{}");
    }
    if (message.method == "logging/setLevel") {
        json::Document params;
        const auto level = json::parseObject(message.params_json, params)
                               ? parseLogLevel(json::stringMember(params, "level"))
                               : std::nullopt;
        if (!level) {
            return MethodAnswer::error(
                kInvalidParams,
                "logging/setLevel: params.level must be one of debug, info, notice, warning, "
                "error, critical, alert, emergency");
        }
        session.setLogLevel(*level);
        return MethodAnswer::result("{}");
    }
    // initialize: a session exists already.
    return MethodAnswer::error(kInvalidRequest, "initialize: this session is already initialized");
}

MethodAnswer LegacyTransport::toolsCall(const JsonRpcMessage& message,
                                        const Result<ToolCallParams>& params,
                                        const std::shared_ptr<McpSession>& session, const Who& who,
                                        const HeaderTrace& headers,
                                        std::optional<std::uint64_t> stream) {
    if (!params) {
        return MethodAnswer::error(kInvalidParams, "tools/call: " + params.error().message);
    }
    if (tasks_.enabled(*session)) {
        if (!params->task_json.empty()) {
            return tasks_.create(
                message, *params, session, who, stream,
                requestTraceContext(params->meta.traceparent, params->meta.tracestate, headers));
        }
        if (auto definition = who.tools->find(params->name);
            definition && definition->task_support == "required") {
            return MethodAnswer::error(
                kMethodNotFound, "tools/call: tool " + params->name + " must be called as a task");
        }
    }
    LegacyScope scope(session, who, stream, tasks_.enabled(*session));
    scope.setTrace(requestTraceContext(params->meta.traceparent, params->meta.tracestate, headers));
    // Progress needs a stream to go on: a call answered as one JSON body gets none.
    return methods_.toolsCall(*message.id, *params, scope,
                              stream ? params->meta.progress_token : std::nullopt);
}

void LegacyTransport::get(HTTPServerRequest& request, HTTPServerResponse& response,
                          const Who& who) {
    if (!accepts(request.get("Accept", ""), "text/event-stream")) {
        sendHttpError(response, 406, kInvalidRequest, "Accept must list text/event-stream");
        return;
    }
    auto session = sessionOf(request, response, who);
    if (!session) {
        return;
    }
    const std::string lastEventHeader = request.get("Last-Event-ID", "");
    if (!lastEventHeader.empty()) {
        auto lastEventId = http::parseLastEventId(lastEventHeader);
        if (!lastEventId || !session->canResume(*lastEventId)) {
            sendHttpError(response, 400, kInvalidRequest,
                          "Last-Event-ID does not name a stream of this session");
            return;
        }
        streams_.open(request, response, session, 0, lastEventId);
        return;
    }
    streams_.open(request, response, session, session->openStream(true), std::nullopt);
}

void LegacyTransport::remove(HTTPServerRequest& request, HTTPServerResponse& response,
                             const Who& who) {
    const std::string id = request.get("Mcp-Session-Id", "");
    if (id.empty()) {
        sendHttpError(response, 400, kInvalidRequest, "Mcp-Session-Id header is required");
        return;
    }
    const auto session = sessions_.find(id);
    if (!session || session->agent() != who.agent || session->workspace() != who.workspace ||
        !sessions_.remove(id)) {
        sendHttpError(response, 404, kInvalidRequest, "session not found");
        return;
    }
    log::info("mcp: session {} deleted by the client", id.substr(0, 8));
    sendBody(response, 200, "", "");
}

void LegacyTransport::toolsChanged(const std::string& workspace) {
    const std::string message = makeNotification("notifications/tools/list_changed");
    sessions_.forEach([&](McpSession& s) {
        if (s.workspace() == workspace) {
            s.sendStandalone(message);
        }
    });
}

void LegacyTransport::deliver(const std::string& workspace, const CatalogNotice& notice) {
    const std::string message = makeNotification(notice.method, notice.params_json);
    if (!notice.sessions.empty()) {
        for (const std::string& id : notice.sessions) {
            if (auto s = sessions_.peek(id); s && s->workspace() == workspace) {
                s->sendStandalone(message);
            }
        }
        return;
    }
    sessions_.forEach([&](McpSession& s) {
        if (s.workspace() == workspace && (!notice.level || *notice.level >= s.logLevel())) {
            s.sendStandalone(message);
        }
    });
}

}  // namespace crank::mcp
