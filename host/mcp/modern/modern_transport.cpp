#include "mcp/modern/modern_transport.h"

#include <atomic>
#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <rapidjson/document.h>

#include "http/responses.h"
#include "json/json_members.h"
#include "json/json_scanner.h"
#include "mcp/input_rounds.h"
#include "mcp/message_outcome.h"
#include "mcp/modern/held_calls.h"
#include "mcp/modern/listen_hub.h"
#include "mcp/modern/modern_scope.h"
#include "mcp/modern/routing_headers.h"
#include "mcp/request_stream.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/log_level.h"
#include "mcp/wire/method_registry.h"
#include "mcp/wire/tool_call_params.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

using http::sendBody;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

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

/// The level a `_meta` logLevel (JSON text) names; nullopt when it is not a level's name.
std::optional<LogLevel> logLevelOf(std::string_view json) {
    json::Document doc;
    if (!json::parseValue(json, doc) || !doc.IsString()) {
        return std::nullopt;
    }
    return parseLogLevel(std::string_view(doc.GetString(), doc.GetStringLength()));
}

MethodAnswer badLogLevel() {
    return MethodAnswer::error(kInvalidParams,
                               "params._meta[\"" + std::string(kMetaLogLevel) +
                                   "\"] must be one of debug, info, notice, warning, error, "
                                   "critical, alert, emergency");
}

MethodAnswer notFound(std::string_view method, std::string_view why) {
    return MethodAnswer::error(
        kMethodNotFound, "method " + std::string(method.substr(0, 100)) + " " + std::string(why));
}

}  // namespace

ModernTransport::ModernTransport(const ServerIdentity& identity, const config::McpConfig& mcp,
                                 bool private_lists, const MethodTable& methods,
                                 http::StreamReactor& reactor, std::shared_ptr<CallerQuotas> quotas,
                                 std::shared_ptr<ListenHub> listens,
                                 std::shared_ptr<const RequestStateSeal> seal, TaskBackend* tasks,
                                 const EndpointObserver& observer)
    : server_info_json_(R"({"name":)" + jsonString(identity.name) + R"(,"version":)" +
                        jsonString(identity.version) + "}"),
      list_ttl_ms_(mcp.list_ttl_ms),
      read_ttl_ms_(mcp.read_ttl_ms),
      private_lists_(private_lists),
      methods_(methods),
      reactor_(reactor),
      max_streams_(mcp.max_streams),
      quotas_(std::move(quotas)),
      listens_(std::move(listens)),
      seal_(std::move(seal)),
      max_input_rounds_(mcp.max_input_rounds),
      tasks_(tasks),
      observer_(observer),
      held_(std::make_unique<HeldCalls>(mcp.max_held_calls_per_agent, mcp.max_held_calls,
                                        std::chrono::milliseconds(mcp.request_state_ttl_ms))) {}

void ModernTransport::post(HTTPServerRequest& request, HTTPServerResponse& response, const Who& who,
                           const ParsedBody& parsed, const EraVerdict& verdict,
                           const HeaderTrace& headers,
                           std::chrono::steady_clock::time_point since) const {
    // classifyPost() finds the 2026 era only in a body of one message: a request or a
    // notification, or one that is not valid JSON-RPC, refused with its own error.
    if (const auto* rejected = std::get_if<JsonRpcRejection>(&parsed.entries.front())) {
        const EraRefusal refusal =
            verdict.refusal.value_or(EraRefusal{400, rejected->code, rejected->message, {}});
        observer_.counted(methodLabel(""), errorName(refusal.code), since);
        sendBody(response, refusal.status, "application/json",
                 makeError(rejected->id, refusal.code, refusal.message, {}));
        return;
    }
    const auto& message = std::get<JsonRpcMessage>(parsed.entries.front());
    if (verdict.refusal) {
        refuse(response, message, *verdict.refusal, since);
        return;
    }
    // A tools/call's params were read once, by the classifier, for its Mcp-Name and the call.
    const std::optional<Result<ToolCallParams>>& call = verdict.tool_call;
    std::optional<std::string_view> target;
    if (call && *call) {
        target = (*call)->name;
    }
    if (auto refusal = checkStandardHeaders(request, message, target)) {
        refuse(response, message, *refusal, since);
        return;
    }
    if (message.kind != JsonRpcKind::request) {
        // Nothing of the era's notifications needs an answer over HTTP: a request is cancelled
        // by closing its stream.
        observer_.counted(methodLabel(message.method), "accepted", since);
        sendBody(response, 202, "", "");
        return;
    }
    const TraceContext trace =
        requestTraceContext(verdict.meta.traceparent, verdict.meta.tracestate, headers);
    if (call) {
        toolsCall(request, response, message, *call, verdict.meta, who, trace, since);
        return;
    }
    if (const MethodInfo* info = findMethod(message.method);
        info != nullptr && info->handler == MethodHandler::listen) {
        listen(request, response, message, verdict.meta, who, trace, since);
        return;
    }
    if (catalogWithInput(request, response, message, verdict.meta, who, trace, since)) {
        return;
    }
    reply(response, message, answer(message, verdict.meta, who, trace), since);
}

std::string ModernTransport::messageOf(const JsonRpcMessage& message,
                                       const MethodAnswer& answered) const {
    if (answered.isResult()) {
        return modernResultMessage(*message.id, answered.json, server_info_json_,
                                   hintOf(message.method));
    }
    return toMessage(*message.id, answered);
}

void ModernTransport::refuse(HTTPServerResponse& response, const JsonRpcMessage& message,
                             const EraRefusal& refusal,
                             std::chrono::steady_clock::time_point since) const {
    const std::string out =
        makeError(message.kind == JsonRpcKind::request ? message.id : std::nullopt, refusal.code,
                  refusal.message, refusal.data_json);
    observer_.counted(methodLabel(message.method), errorName(refusal.code), since);
    sendBody(response, refusal.status, "application/json", out);
}

void ModernTransport::reply(HTTPServerResponse& response, const JsonRpcMessage& message,
                            const MethodAnswer& answered,
                            std::chrono::steady_clock::time_point since) const {
    if (answered.isNone()) {
        observer_.counted(message.method, "cancelled", since);
        sendBody(response, 200, "application/json", "");
        return;
    }
    const std::string out = messageOf(message, answered);
    observer_.answered(message.method, answered, since);
    sendBody(response, answered.isError() ? statusOf(answered.code) : 200, "application/json", out);
}

MethodAnswer ModernTransport::answer(const JsonRpcMessage& message, const RequestMeta& meta,
                                     const Who& who, const TraceContext& trace) const {
    if (!meta.log_level_json.empty() && !logLevelOf(meta.log_level_json)) {
        return badLogLevel();
    }
    const std::string& method = message.method;
    const MethodInfo* info = findMethod(method);
    if (info != nullptr && !info->modern) {
        // A 2025 method this era removed: 404 + -32601, like an unknown one.
        return notFound(method, info->handler == MethodHandler::tasks
                                    ? "is not part of the tasks extension"
                                    : "is not part of MCP 2026-07-28");
    }
    if (info != nullptr && info->handler == MethodHandler::discover) {
        return discover(who);
    }
    // The extension's methods, and any other of its namespace (which the extension refuses).
    if (info != nullptr ? info->handler == MethodHandler::tasks : method.rfind("tasks/", 0) == 0) {
        if (!meta.capabilities()->declaresExtension(kTasksExtension)) {
            return tasksExtensionRequired(method);
        }
        if (who.catalog != nullptr && who.catalog->ownsTask(taskIdOf(message.params_json))) {
            // An upstream's task (created by a 2026 upstream): the catalog follows it there.
            ModernScope scope(who, meta.capabilities());
            scope.setTrace(trace);
            if (auto answered = methods_.catalogRequest(message, scope)) {
                return std::move(*answered);
            }
        }
        if (!tasks_.offered()) {
            return notFound(method, "is not served: crankd runs no tasks here");
        }
        return tasks_.method(message, who);
    }
    ModernScope scope(who, meta.capabilities());
    scope.setTrace(trace);
    if (auto answered = methods_.answer(message, scope)) {
        if (auto refusal = scope.undeclared()) {
            return std::move(*refusal);
        }
        return std::move(*answered);
    }
    return notFound(method, "is not found");
}

MethodAnswer ModernTransport::discover(const Who& who) const {
    return MethodAnswer::result(R"({"supportedVersions":)" + supportedVersionsJson() +
                                R"(,"capabilities":{)" + methods_.capabilitiesJson(who) +
                                tasks_.capabilityJson() + "}}");
}

void ModernTransport::toolsCall(HTTPServerRequest& request, HTTPServerResponse& response,
                                const JsonRpcMessage& message, const Result<ToolCallParams>& params,
                                const RequestMeta& meta, const Who& who, const TraceContext& trace,
                                std::chrono::steady_clock::time_point since) const {
    std::optional<LogLevel> level;
    if (!meta.log_level_json.empty()) {
        level = logLevelOf(meta.log_level_json);
        if (!level) {
            reply(response, message, badLogLevel(), since);
            return;
        }
    }
    if (!params) {
        reply(response, message,
              MethodAnswer::error(kInvalidParams, "tools/call: " + params.error().message), since);
        return;
    }
    const std::optional<ToolDefinition> definition = who.tools->find(params->name);
    if (definition) {
        if (auto refusal =
                checkParamHeaders(request, definition->param_headers, params->arguments_json)) {
            refuse(response, message, *refusal, since);
            return;
        }
    }
    // A 2025 upstream's tool that runs as a task, called by a client that declared the
    // extension: the upstream creates the task (its CreateTaskResult shown as the extension's),
    // and the catalog follows it.
    if (definition && !definition->task_support.empty() && !definition->task_by_upstream &&
        who.catalog != nullptr && who.catalog->ownsTool(params->name) &&
        meta.capabilities()->declaresExtension(kTasksExtension)) {
        ModernScope scope(who, meta.capabilities());
        scope.setTrace(trace);
        std::optional<MethodAnswer> answered = methods_.catalogRequest(message, scope);
        reply(response, message,
              answered.value_or(
                  MethodAnswer::error(kInternalError, "tools/call: the task was not created")),
              since);
        return;
    }
    Result<ModernRound> round = openRound("tools/call", params->name, params->arguments_json,
                                          params->retry, who, seal_.get());
    if (!round) {
        reply(response, message,
              MethodAnswer::error(kInvalidParams, "tools/call: " + round.error().message), since);
        return;
    }
    if (!round->held_id.empty()) {
        resumeHeld(request, response, message, params->retry, *round,
                   HeldCall::Listener{nullptr, meta.progress_token, level}, who, since);
        return;
    }
    // A tool that may ask the client while it runs, for a client that can be asked: it is held
    // (its progress and logs go on the stream of the request waiting on it, round by round).
    if (definition && definition->requests_client && meta.capabilities()->declaresClientInput()) {
        startHeld(
            request, response, message, std::move(*round), meta.capabilities(),
            HeldCall::Listener{nullptr, meta.progress_token, level}, who, trace,
            [this, id = *message.id, params = *params, token = meta.progress_token](
                ModernScope& scope) { return methods_.toolsCall(id, params, scope, token); },
            since);
        return;
    }
    // The 2025 `task` member is ignored in this era: a task is the server's choice (SEP-2663),
    // made for a request that declared the extension (a round of input comes before it).
    if (auto task = tasks_.call(*params, definition ? &*definition : nullptr,
                                meta.capabilities()->declaresExtension(kTasksExtension), who,
                                meta.capabilities()->json(),
                                round->retry ? &*round->retry : nullptr, trace)) {
        reply(response, message, *task, since);
        return;
    }
    if (!meta.progress_token && !level) {
        ModernScope scope(who, meta.capabilities(), nullptr, std::nullopt, std::move(*round));
        scope.setTrace(trace);
        MethodAnswer answered = methods_.toolsCall(*message.id, *params, scope, std::nullopt);
        reply(response, message, scope.undeclared().value_or(std::move(answered)), since);
        return;
    }
    // Progress or logs asked for: they go on an SSE stream, before the response.
    const std::shared_ptr<RequestStream> stream =
        RequestStream::open(request, response, reactor_, max_streams_, quotas_, who);
    if (!stream) {
        return;
    }
    ModernScope scope(who, meta.capabilities(), stream, level, std::move(*round));
    scope.setTrace(trace);
    MethodAnswer answered = methods_.toolsCall(*message.id, *params, scope, meta.progress_token);
    if (auto refusal = scope.undeclared()) {
        answered = std::move(*refusal);
    }
    if (answered.isNone() || stream->closed()) {
        observer_.counted(message.method, "cancelled", since);
        stream->finish("");
        return;
    }
    const std::string out = messageOf(message, answered);
    observer_.answered(message.method, answered, since);
    stream->finish(out);
}

void ModernTransport::listen(HTTPServerRequest& request, HTTPServerResponse& response,
                             const JsonRpcMessage& message, const RequestMeta& meta, const Who& who,
                             const TraceContext& trace,
                             std::chrono::steady_clock::time_point since) const {
    auto asked = parseListenFilter(message.params_json);
    if (!asked) {
        reply(response, message,
              MethodAnswer::error(kInvalidParams, "subscriptions/listen: " + asked.error().message),
              since);
        return;
    }
    if (!asked->task_ids.empty() && !meta.capabilities()->declaresExtension(kTasksExtension)) {
        reply(response, message,
              tasksExtensionRequired("subscriptions/listen with notifications.taskIds"), since);
        return;
    }
    // Honoured: what was asked that this workspace can change.
    ListenFilter honoured;
    honoured.tools_list_changed = asked->tools_list_changed;
    const CatalogCapabilities catalog =
        who.catalog != nullptr ? who.catalog->capabilities() : CatalogCapabilities{};
    // Only what initialize and server/discover advertise (a flag under an absent capability is
    // not offered).
    honoured.prompts_list_changed =
        asked->prompts_list_changed && catalog.prompts && catalog.prompts_list_changed;
    honoured.resources_list_changed =
        asked->resources_list_changed && catalog.resources && catalog.resources_list_changed;

    // The listen leaves the hub when its stream ends (and the catalog forgets its resources).
    const std::uint64_t key = listens_->reserve();
    std::weak_ptr<ListenHub> weak = listens_;
    const std::shared_ptr<RequestStream> stream =
        RequestStream::open(request, response, reactor_, max_streams_, quotas_, who, [weak, key] {
            if (auto hub = weak.lock()) {
                hub->remove(key);
            }
        });
    if (!stream) {
        return;
    }
    // Once the stream is granted (within the caller's stream quota), not before: the caller's
    // own tasks only; another's, or an unknown id, is silently not followed.
    for (const std::string& task_id : asked->task_ids) {
        if (tasks_.follow(task_id, who.caller())) {
            honoured.task_ids.push_back(task_id);
        }
    }
    Catalog* subscribedOn = nullptr;
    if (!asked->resource_uris.empty() && catalog.resources && catalog.resources_subscribe) {
        subscribedOn = who.catalog;
        honoured.resource_uris = subscribeResources(asked->resource_uris, listenSubscriber(key),
                                                    meta, who, trace, stream);
    }
    const std::string id = message.id->toJson();
    const std::string ack =
        makeNotification("notifications/subscriptions/acknowledged", acknowledgement(honoured, id));
    listens_->add(key, who.workspace, who.agent, honoured, id, stream, ack, subscribedOn);
    if (stream->closed()) {
        listens_->remove(key);  // it ended before it was in
    }
    observer_.counted(message.method, "ok", since);
}

std::vector<std::string> ModernTransport::subscribeResources(
    const std::vector<std::string>& uris, const std::string& subscriber, const RequestMeta& meta,
    const Who& who, const TraceContext& trace, const std::shared_ptr<RequestStream>& stream) const {
    // One call slot while the upstreams are told, like any catalog request that may wait on one.
    std::string refusal;
    const auto slot =
        CallerQuotas::hold(quotas_, CallerQuotas::Kind::call, who.agent, who.workspace, refusal);
    if (!slot) {
        return {};
    }
    ModernToolCall call(who.caller(), stream, std::nullopt, std::nullopt, meta.capabilities(),
                        std::make_shared<ModernToolCall::Outcome>());
    call.setTrace(trace);
    std::vector<std::string> subscribed;
    for (const std::string& uri : uris) {
        if (stream->closed()) {
            break;
        }
        std::optional<CatalogReply> reply;
        try {
            reply = who.catalog->handle("resources/subscribe", R"({"uri":)" + jsonString(uri) + "}",
                                        call, subscriber);
        } catch (const std::exception&) {
            reply.reset();
        }
        if (reply && reply->error_json.empty()) {
            subscribed.push_back(uri);  // unknown resources are not honoured
        }
    }
    return subscribed;
}

void ModernTransport::taskChanged(const TaskInfo& task) const {
    // Rendered once, for the task's owner, and only when one of the owner's listens follows it.
    listens_->taskChanged(task.task_id, task.owner, [this, &task]() -> std::optional<std::string> {
        Result<std::string> detailed = tasks_.detailedTask(task.task_id, task.owner);
        if (!detailed) {
            return std::nullopt;
        }
        return std::move(*detailed);
    });
}

std::optional<CacheHint> ModernTransport::hintOf(std::string_view method) const {
    if (!isCacheableMethod(method)) {
        return std::nullopt;
    }
    const MethodInfo* info = findMethod(method);
    return CacheHint{
        info != nullptr && info->cache == MethodCache::content ? read_ttl_ms_ : list_ttl_ms_,
        private_lists_ ? "private" : "public"};
}

}  // namespace crank::mcp
