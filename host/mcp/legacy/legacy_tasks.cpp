#include "mcp/legacy/legacy_tasks.h"

#include <optional>
#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <rapidjson/document.h>

#include "http/responses.h"
#include "json/json_members.h"
#include "mcp/legacy/legacy_scope.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

/// Tasks whose tasks/result callers wait on this node, at most.
constexpr std::size_t kMaxTaskWaiters = 10'000;

/// The JSON-RPC error code of a backend's refusal.
std::int64_t taskErrorCode(const Error& error) {
    return error.code == ErrorCode::not_found || error.code == ErrorCode::invalid_argument
               ? kInvalidParams
               : kInternalError;
}

/// `_meta` of a message tied to a task.
std::string relatedTaskMeta(std::string_view task_id) {
    return R"({"io.modelcontextprotocol/related-task":{"taskId":)" + jsonString(task_id) + "}}";
}

}  // namespace

LegacyTasks::LegacyTasks(TaskBackend* backend, bool auth_required, SessionStreams& streams,
                         const MethodTable& methods, const EndpointObserver& observer)
    : backend_(backend),
      auth_required_(auth_required),
      streams_(streams),
      methods_(methods),
      observer_(observer) {}

std::string LegacyTasks::capabilityJson(std::string_view version) const {
    if (backend_ == nullptr || version != kTasksVersion) {
        return {};
    }
    // tasks/list only where tasks are bound to an authenticated agent (MCP: without an auth
    // context a receiver should not offer listing).
    return auth_required_ ? R"(,"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}})"
                          : R"(,"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}})";
}

MethodAnswer LegacyTasks::create(const JsonRpcMessage& message, const ToolCallParams& params,
                                 const std::shared_ptr<McpSession>& session, const Who& who,
                                 std::optional<std::uint64_t> stream, const TraceContext& trace) {
    if (who.catalog != nullptr && who.catalog->ownsTool(params.name)) {
        // An upstream's tool: the upstream creates the task, if the tool may run as one (its
        // 2025 taskSupport, or a 2026 upstream that offers the Tasks extension).
        const auto federated = who.tools->find(params.name);
        if (!federated || (federated->task_support.empty() && !federated->task_by_upstream)) {
            return MethodAnswer::error(
                kMethodNotFound,
                "tools/call: tool " + params.name + " does not support task-augmented calls");
        }
        LegacyScope scope(session, who, stream, true);
        return methods_.catalogRequest(message, scope)
            .value_or(MethodAnswer::error(kInternalError, "tools/call: the task was not created"));
    }
    json::Document task;
    if (params.task_json.empty() || !json::parseObject(params.task_json, task)) {
        return MethodAnswer::error(kInvalidParams, "tools/call: params.task must be an object");
    }
    std::optional<std::int64_t> ttl;
    const rapidjson::Value& members = task;  // const iterators: C++20 compares them unambiguously
    if (const auto it = members.FindMember("ttl");
        it != members.MemberEnd() && !it->value.IsNull()) {
        if (!it->value.IsInt64() || it->value.GetInt64() < 0) {
            return MethodAnswer::error(
                kInvalidParams, "tools/call: params.task.ttl must be a number of milliseconds");
        }
        ttl = it->value.GetInt64();
    }
    const auto definition = who.tools->find(params.name);
    if (!definition) {
        return MethodAnswer::error(kInvalidParams, "tools/call: unknown tool: " + params.name);
    }
    if (definition->task_support.empty()) {
        return MethodAnswer::error(kMethodNotFound, "tools/call: tool " + params.name +
                                                        " does not support task-augmented calls");
    }
    auto created =
        backend_->create(params.name, params.arguments_json, who.caller(), ttl, {}, nullptr, trace);
    if (!created) {
        return MethodAnswer::error(taskErrorCode(created.error()),
                                   "tools/call: " + created.error().message);
    }
    {
        const std::lock_guard lock(mutex_);
        if (creators_.size() < kMaxTaskWaiters) {
            creators_[created->task_id] = session;
        }
    }
    return MethodAnswer::result(R"({"task":)" + created->toJson() + "}");
}

MethodAnswer LegacyTasks::method(const JsonRpcMessage& message,
                                 const std::shared_ptr<McpSession>& session, const Who& who) {
    const std::string taskId = taskIdOf(message.params_json);
    if (who.catalog != nullptr && who.catalog->ownsTask(taskId)) {
        LegacyScope scope(session, who, std::nullopt, true);
        if (auto answered = methods_.catalogRequest(message, scope)) {
            return std::move(*answered);
        }
    }
    if (message.method == "tasks/list") {
        if (!auth_required_) {
            // Not offered without an auth context (see capabilityJson).
            return MethodAnswer::error(kMethodNotFound, "method not found: tasks/list");
        }
        json::Document params;
        if (!json::parseObject(message.params_json, params)) {
            return MethodAnswer::error(kInvalidParams, "tasks/list: params must be an object");
        }
        auto page = backend_->list(who.caller(), json::stringMember(params, "cursor"));
        if (!page) {
            return MethodAnswer::error(taskErrorCode(page.error()), page.error().message);
        }
        std::string result = R"({"tasks":[)";
        for (std::size_t i = 0; i < page->tasks.size(); ++i) {
            result += (i == 0 ? "" : ",") + page->tasks[i].toJson();
        }
        result += "]";
        if (!page->next_cursor.empty()) {
            result += R"(,"nextCursor":)" + jsonString(page->next_cursor);
        }
        return MethodAnswer::result(result + "}");
    }
    if (taskId.empty()) {
        return MethodAnswer::error(kInvalidParams, message.method + ": params.taskId is required");
    }
    auto task = message.method == "tasks/get" ? backend_->get(taskId, who.caller())
                                              : backend_->cancel(taskId, who.caller());
    if (!task) {
        const std::string what = task.error().code == ErrorCode::not_found
                                     ? "Failed to retrieve task: Task not found"
                                     : task.error().message;
        return MethodAnswer::error(taskErrorCode(task.error()), message.method + ": " + what);
    }
    return MethodAnswer::result(task->toJson());
}

std::optional<MethodAnswer> LegacyTasks::resultAnswer(const std::string& task_id,
                                                      const Caller& caller) {
    auto result = backend_->result(task_id, caller);
    if (!result) {
        return MethodAnswer::error(taskErrorCode(result.error()),
                                   "tasks/result: " + (result.error().code == ErrorCode::not_found
                                                           ? std::string("Task not found")
                                                           : result.error().message));
    }
    if (!*result) {
        return std::nullopt;
    }
    return MethodAnswer::result((*result)->toJson(relatedTaskMeta(task_id)));
}

void LegacyTasks::result(const JsonRpcMessage& message, const std::shared_ptr<McpSession>& session,
                         const Who& who, Poco::Net::HTTPServerRequest& request,
                         Poco::Net::HTTPServerResponse& response) {
    const RequestId& id = *message.id;
    const auto since = std::chrono::steady_clock::now();
    const std::string taskId = taskIdOf(message.params_json);
    if (taskId.empty()) {
        observer_.counted(message.method, "invalid_params", since);
        http::sendBody(response, 200, "application/json",
                       makeError(id, kInvalidParams, "tasks/result: params.taskId is required"));
        return;
    }
    if (who.catalog != nullptr && who.catalog->ownsTask(taskId)) {
        // An upstream's task: its tasks/result waits for the upstream, and whatever the task
        // asks the client meanwhile (elicitation) goes on this request's stream.
        const std::uint64_t stream = session->openStream(false);
        if (!streams_.open(request, response, session, stream, std::nullopt)) {
            return;
        }
        LegacyScope scope(session, who, stream, true);
        if (auto reply = methods_.catalogRequest(message, scope)) {
            const std::string sent = toMessage(id, *reply);
            observer_.answered(message.method, *reply, since);
            session->send(stream, sent);
        }
        session->finish(stream);
        return;
    }
    if (const auto now = resultAnswer(taskId, who.caller())) {
        observer_.answered(message.method, *now, since);
        http::sendBody(response, 200, "application/json", toMessage(id, *now));
        return;
    }
    {
        const std::lock_guard lock(mutex_);
        if (waiters_.size() >= kMaxTaskWaiters) {
            observer_.counted(message.method, "internal_error", since);
            http::sendBody(response, 200, "application/json",
                           makeError(id, kInternalError,
                                     "tasks/result: too many waiting requests; poll tasks/get"));
            return;
        }
    }
    // Not finished: the answer comes on an SSE stream once the task ends.
    const std::uint64_t stream = session->openStream(false);
    if (!streams_.open(request, response, session, stream, std::nullopt)) {
        return;
    }
    {
        const std::lock_guard lock(mutex_);
        waiters_.emplace(taskId, Waiter{session, stream, id, who.caller(), since});
    }
    backend_->watch(taskId);  // another node may run it
    // It may have ended between the first look and the registration.
    TaskInfo probe;
    probe.task_id = taskId;
    probe.status = TaskStatus::completed;
    onTask(probe);
}

void LegacyTasks::onTask(const TaskInfo& task) {
    std::shared_ptr<McpSession> creator;
    const bool terminal = isTerminal(task.status);
    {
        const std::lock_guard lock(mutex_);
        if (const auto it = creators_.find(task.task_id); it != creators_.end()) {
            creator = it->second.lock();
            if (terminal || !creator) {
                creators_.erase(it);
            }
        }
    }
    // A probe (created_at 0) only checks the waiters; a real change is announced to the
    // session that created the task (notifications/tasks/status is optional: best effort).
    if (creator && task.created_at_ms != 0) {
        creator->sendStandalone(makeNotification("notifications/tasks/status", task.toJson()));
    }
    if (!terminal) {
        return;
    }
    const std::lock_guard lock(mutex_);
    auto [first, last] = waiters_.equal_range(task.task_id);
    for (auto it = first; it != last;) {
        const auto answered = resultAnswer(task.task_id, it->second.caller);
        if (!answered) {
            ++it;  // a probe of a task that has not ended
            continue;
        }
        const std::string answer = toMessage(it->second.id, *answered);
        observer_.answered("tasks/result", *answered, it->second.since);
        if (auto session = it->second.session.lock()) {
            session->send(it->second.stream, answer);
            session->finish(it->second.stream);
        }
        it = waiters_.erase(it);
    }
}

}  // namespace crank::mcp
