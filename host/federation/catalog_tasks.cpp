// The upstreams' tasks as a workspace's catalog serves them (WorkspaceCatalog: taskCall,
// taskRequest), in the era of each caller:
//   - a 2025 session's task of a 2025 upstream, and a 2026 caller's task of a 2026 upstream:
//     the upstream's answers as they are, the task id renamed to crankd's;
//   - a 2025 session's task of a 2026 upstream (the Tasks extension): created with the
//     extension declared, shown as a 2025 Task; its tasks/result follows it with tasks/get
//     until it ends, asking its questions on the session's stream and answering them with
//     tasks/update; a tool the upstream answered at once becomes a completed task of crankd's;
//   - a 2026 caller's task of a 2025 upstream's tool (taskSupport set): created with `task`,
//     shown as the extension's flat task; tasks/get inlines the ended task's tasks/result.
// (A 2026 caller's tools/call reaches the upstream as it is, and the upstream decides whether it
// becomes a task: federation_impl.cpp adopts it, UpstreamTasks::adoptCreated.)

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "federation/input_relay.h"
#include "federation/task_shapes.h"
#include "federation/workspace_catalog.h"
#include "json/json_members.h"
#include "json/json_text.h"
#include "util/clock.h"
#include "util/json_string.h"

namespace crank::federation {
namespace {

/// How often a task is polled: its pollIntervalMs, within these.
constexpr std::chrono::milliseconds kMinPoll{250};
constexpr std::chrono::milliseconds kMaxPoll{5'000};
/// Questions one task may ask a 2025 session in all (keys are never reused).
constexpr std::size_t kMaxTaskQuestions = 256;

mcp::CatalogReply failure(std::int64_t code, const std::string& message) {
    return mcp::CatalogReply{{}, rpcError(code, message)};
}

std::string quotedId(const std::string& id) {
    return jsonString(id.substr(0, 128));
}

/// An upstream's error about task `id` (the upstream's `upstream_id`) as the client gets it:
/// its code and words, with the upstream's id replaced by crankd's wherever it stands (in the
/// message too, when the id is long enough to be told from other text; a short one in the message
/// makes it crankd's own words); a plain error when it cannot be read. Never the upstream's id.
mcp::CatalogReply taskError(std::string_view method, const std::string& error_json,
                            const std::string& upstream_id, const std::string& id) {
    json::Document error;
    if (!json::parseObject(error_json, error) || !error.HasMember("code") ||
        !error["code"].IsInt64()) {
        return failure(-32603, std::string(method) + ": the upstream's error cannot be read");
    }
    const std::int64_t code = error["code"].GetInt64();
    std::string message = json::stringMember(error, "message");
    constexpr std::size_t kDistinct = 8;  // shorter ids ("1") are not replaced inside words
    if (upstream_id.size() >= kDistinct) {
        for (std::size_t at = message.find(upstream_id); at != std::string::npos;
             at = message.find(upstream_id, at + id.size())) {
            message.replace(at, upstream_id.size(), id);
        }
    } else if (message.find(upstream_id) != std::string::npos) {
        message = std::string(method) + ": the upstream refused task " + quotedId(id);
    }
    std::string data;
    if (error.HasMember("data")) {
        json::Document renamed;
        renamed.CopyFrom(error["data"], renamed.GetAllocator());
        data = withTaskId(renamed, upstream_id, id);
        if (data.find(upstream_id) != std::string::npos) {
            data.clear();  // the id elsewhere than a taskId member: not passed on
        }
    }
    return mcp::CatalogReply{{}, rpcError(code, message.substr(0, 4096), data)};
}

/// A JSON-RPC error object as a failed task carries it, when it is one (an integer code, a
/// string message): else nullopt.
std::optional<std::string> validError(const json::Value& error) {
    if (!error.IsObject() || !error.HasMember("code") || !error["code"].IsInt64() ||
        !error.HasMember("message") || !error["message"].IsString()) {
        return std::nullopt;
    }
    return json::toJsonText(error);
}

bool terminal(std::string_view status) {
    return status == "completed" || status == "failed" || status == "cancelled";
}

}  // namespace

mcp::CatalogReply WorkspaceCatalog::taskCall(const json::Value& params, mcp::ToolCall& call,
                                             const std::string& session_id) {
    const std::string name = json::stringMember(params, "name");
    std::shared_ptr<UpstreamLink> link;
    std::string original;
    {
        const std::lock_guard lock(impl_.mutex);
        const auto& owners = impl_.toolOwners[workspace_];
        if (const auto it = owners.find(name); it != owners.end()) {
            link = it->second.first->shared_from_this();  // pinned: it may be removed meanwhile
            original = it->second.second;
        }
    }
    if (link == nullptr) {
        return failure(-32602, "tools/call: unknown tool: " + name.substr(0, 128));
    }
    // The extension is declared too: a 2026 upstream reads no `task` member, a 2025 one no
    // extension (the mcp plugin passes each what its era reads). A 2026 caller's call comes
    // without `task` (its era has none): a 2025 upstream gets one.
    json::Document upstreamParams;
    upstreamParams.CopyFrom(params, upstreamParams.GetAllocator());
    if (!upstreamParams.HasMember("task") || !upstreamParams["task"].IsObject()) {
        upstreamParams.RemoveMember("task");
        upstreamParams.AddMember("task", rapidjson::Value(rapidjson::kObjectType),
                                 upstreamParams.GetAllocator());
    }
    Answer a = request(*link, "tools/call",
                       json::withStringMember(upstreamParams, "name", original), call, true);
    if (!a.ok) {
        return mcp::CatalogReply{{}, std::move(a.json)};
    }
    const std::string where = "upstream " + link->config.name + ": tools/call: ";
    json::Document result;
    if (!json::parseObject(a.json, result)) {
        return failure(-32603, where + "its answer is not a JSON object");
    }
    const std::string agent = call.caller().agent;
    const bool modernCaller = call.clientDeclaresTasks();
    if (result.HasMember("task") && result["task"].IsObject()) {  // a 2025 upstream's
        const std::string upstreamId = json::stringMember(result["task"], "taskId");
        if (upstreamId.empty() || upstreamId.size() > UpstreamTasks::kMaxUpstreamIdBytes) {
            return failure(-32603, where + "its task has no taskId string of at most " +
                                       std::to_string(UpstreamTasks::kMaxUpstreamIdBytes) +
                                       " bytes");
        }
        const std::string id = impl_.tasks.add(*link, upstreamId, workspace_, session_id, agent);
        json::Document renamed;
        json::parseObject(withTaskId(result, upstreamId, id), renamed);
        if (modernCaller) {  // its CreateTaskResult as the extension's flat task
            return mcp::CatalogReply{
                R"({"resultType":"task",)" + modernTaskMembers(renamed["task"], nowUnixMs()) + "}",
                {}};
        }
        return mcp::CatalogReply{json::toJsonText(renamed), {}};
    }
    std::string fault;
    const std::string upstreamId = createdTaskId(result, fault);
    if (!fault.empty()) {
        return failure(-32603, where + fault);
    }
    if (!upstreamId.empty()) {  // a 2026 upstream's task
        const std::string id =
            impl_.tasks.add(*link, upstreamId, workspace_, session_id, agent, true);
        json::Document renamed;
        json::parseObject(withTaskId(result, upstreamId, id), renamed);
        if (modernCaller) {
            return mcp::CatalogReply{json::toJsonText(renamed), {}};
        }
        return mcp::CatalogReply{R"({"task":)" + legacyTaskJson(renamed, nowUnixMs()) + "}", {}};
    }
    if (modernCaller) {
        return mcp::CatalogReply{std::move(a.json), {}};  // the upstream's choice: no task
    }
    // A 2026 upstream answered at once (a task is its choice): a task of crankd's, completed.
    Result<std::string> id =
        impl_.tasks.settle(*link, std::move(a.json), workspace_, session_id, agent);
    if (!id) {
        return failure(-32603, where + id.error().message);
    }
    const std::optional<UpstreamTasks::Route> route = impl_.tasks.find(*id);
    return mcp::CatalogReply{
        R"({"task":)" + settledTaskJson(*id, route ? route->created_ms : 0, false) + "}", {}};
}

mcp::CatalogReply WorkspaceCatalog::taskRequest(std::string_view method, const json::Value& params,
                                                mcp::ToolCall& call) {
    const std::string id = json::stringMember(params, "taskId");
    const std::optional<UpstreamTasks::Route> route = impl_.tasks.find(id);
    // Another agent's task is answered as unknown: ids are not shared, and not confirmed.
    if (!route || route->workspace != workspace_ || route->agent != call.caller().agent) {
        return failure(-32602, std::string(method) + ": unknown task " + quotedId(id));
    }
    const bool modernCaller = call.clientDeclaresTasks();
    if (route->settled) {
        return settledRequest(method, *route, id, modernCaller);
    }
    const std::shared_ptr<UpstreamLink> link = route->link.lock();
    if (!link) {
        return failure(-32603, std::string(method) + ": the upstream of task " + quotedId(id) +
                                   " was removed");
    }
    if (!route->modern && modernCaller) {
        return modernOnLegacy(method, *link, *route, id, call);
    }
    if (route->modern && !modernCaller) {
        return legacyOnModern(method, *link, *route, id, call);
    }
    const Federation::Impl::Clock::time_point started = Federation::Impl::Clock::now();
    Answer a =
        send(*link, method, json::withStringMember(params, "taskId", route->upstream_id), call);
    if (method == "tasks/cancel") {
        impl_.auditRequest(*link, call, "task_cancel", id, a, started);
    }
    if (!a.ok) {
        return taskError(method, a.json, route->upstream_id, id);
    }
    std::optional<std::string> renamed = withTaskId(a.json, route->upstream_id, id);
    if (!renamed) {
        // Never passed on as it is: it would show the client the upstream's own task id.
        return failure(-32603, "upstream " + link->config.name + ": " + std::string(method) +
                                   ": the answer cannot be read");
    }
    return mcp::CatalogReply{std::move(*renamed), {}};
}

mcp::CatalogReply WorkspaceCatalog::settledRequest(std::string_view method,
                                                   const UpstreamTasks::Route& route,
                                                   const std::string& id, bool modern) {
    if (method == "tasks/get") {
        return mcp::CatalogReply{
            settledTaskJson(id, route.created_ms, modern, modern ? *route.settled : ""), {}};
    }
    if (method == "tasks/result") {
        return mcp::CatalogReply{withRelatedTask(*route.settled, id), {}};
    }
    if (method == "tasks/cancel" && !modern) {
        return failure(-32602, "tasks/cancel: task " + quotedId(id) +
                                   " is completed: a task that ended cannot be cancelled");
    }
    return mcp::CatalogReply{"{}", {}};  // the extension's acknowledgements (update, cancel)
}

mcp::CatalogReply WorkspaceCatalog::legacyOnModern(std::string_view method, UpstreamLink& link,
                                                   const UpstreamTasks::Route& route,
                                                   const std::string& id, mcp::ToolCall& call) {
    if (method == "tasks/result") {
        return legacyResult(link, route, id, call);
    }
    if (method != "tasks/get" && method != "tasks/cancel") {
        return failure(-32601, std::string(method).substr(0, 64) + " is not a 2025 task method");
    }
    const std::string params = R"({"taskId":)" + jsonString(route.upstream_id) + "}";
    // The task as it is now, read once and renamed to crankd's id.
    const auto current = [&](json::Document& task) -> std::optional<mcp::CatalogReply> {
        Answer a = send(link, "tasks/get", params, call);
        if (!a.ok) {
            return taskError(method, a.json, route.upstream_id, id);
        }
        json::Document read;
        if (!json::parseObject(a.json, read)) {
            return failure(-32603, "upstream " + link.config.name +
                                       ": tasks/get: the answer is not a JSON object");
        }
        json::parseObject(withTaskId(read, route.upstream_id, id), task);
        return std::nullopt;
    };
    json::Document task;
    if (auto refused = current(task)) {
        return std::move(*refused);
    }
    if (method == "tasks/get") {
        return mcp::CatalogReply{legacyTaskJson(task, nowUnixMs()), {}};
    }
    // 2025: a task that ended cannot be cancelled; a live one is answered as cancelled (the
    // extension's cancel only acknowledges, and the upstream stops cooperatively).
    if (terminal(json::stringMember(task, "status"))) {
        return failure(-32602, "tasks/cancel: task " + quotedId(id) + " is " +
                                   json::stringMember(task, "status").substr(0, 16) +
                                   ": a task that ended cannot be cancelled");
    }
    const Federation::Impl::Clock::time_point started = Federation::Impl::Clock::now();
    Answer cancelled = send(link, "tasks/cancel", params, call);
    impl_.auditRequest(link, call, "task_cancel", id, cancelled, started);
    if (!cancelled.ok) {
        return taskError(method, cancelled.json, route.upstream_id, id);
    }
    if (auto refused = current(task)) {
        return std::move(*refused);
    }
    if (!terminal(json::stringMember(task, "status"))) {
        task.RemoveMember("status");
        task.AddMember("status", "cancelled", task.GetAllocator());
    }
    return mcp::CatalogReply{legacyTaskJson(task, nowUnixMs()), {}};
}

mcp::CatalogReply WorkspaceCatalog::modernOnLegacy(std::string_view method, UpstreamLink& link,
                                                   const UpstreamTasks::Route& route,
                                                   const std::string& id, mcp::ToolCall& call) {
    const std::string params = R"({"taskId":)" + jsonString(route.upstream_id) + "}";
    if (method == "tasks/update") {
        // A 2025 task asks its questions on its tasks/result stream, which no 2026 client
        // holds: there is nothing outstanding to answer.
        return mcp::CatalogReply{"{}", {}};
    }
    if (method == "tasks/cancel") {
        const Federation::Impl::Clock::time_point started = Federation::Impl::Clock::now();
        Answer cancelled = send(link, "tasks/cancel", params, call);
        impl_.auditRequest(link, call, "task_cancel", id, cancelled, started);
        json::Document error;
        // The extension acknowledges a cancel of an ended task too (2025 refuses it: -32602).
        if (!cancelled.ok &&
            !(json::parseObject(cancelled.json, error) && error.HasMember("code") &&
              error["code"].IsInt64() && error["code"].GetInt64() == -32602)) {
            return taskError(method, cancelled.json, route.upstream_id, id);
        }
        return mcp::CatalogReply{"{}", {}};
    }
    if (method != "tasks/get") {
        return failure(-32601, std::string(method).substr(0, 64) + " is not a task method");
    }
    Answer got = send(link, "tasks/get", params, call);
    if (!got.ok) {
        return taskError(method, got.json, route.upstream_id, id);
    }
    json::Document read;
    if (!json::parseObject(got.json, read)) {
        return failure(-32603,
                       "upstream " + link.config.name + ": tasks/get: the answer is not an object");
    }
    json::Document task;
    json::parseObject(withTaskId(read, route.upstream_id, id), task);
    std::string status = json::stringMember(task, "status");
    std::string inlined;
    if (status == "completed" || status == "failed") {
        // Ended: its result (or error) is there at once, and the extension inlines it.
        Answer result = send(link, "tasks/result", params, call);
        json::Document answer;
        if (result.ok &&
            json::parseObject(
                withTaskId(result.json, route.upstream_id, id).value_or(std::string("x")),
                answer)) {
            status = "completed";  // a result, isError included: the tool ran
            inlined = R"(,"result":)" + withoutRelatedTask(answer);
        } else if (!result.ok) {
            const mcp::CatalogReply error = taskError(method, result.json, route.upstream_id, id);
            status = "failed";
            inlined = R"(,"error":)" + error.error_json;
        } else {
            return failure(-32603, "upstream " + link.config.name +
                                       ": tasks/result: the answer is not an object");
        }
        task.RemoveMember("status");
        task.AddMember(
            "status",
            rapidjson::Value(status.c_str(), static_cast<rapidjson::SizeType>(status.size()),
                             task.GetAllocator()),
            task.GetAllocator());
    }
    return mcp::CatalogReply{"{" + modernTaskMembers(task, nowUnixMs()) + inlined + "}", {}};
}

mcp::CatalogReply WorkspaceCatalog::legacyResult(UpstreamLink& link,
                                                 const UpstreamTasks::Route& route,
                                                 const std::string& id, mcp::ToolCall& call) {
    using Clock = std::chrono::steady_clock;
    const std::string who = "upstream " + link.config.name + ": tasks/result";
    // One request waits on a task at a time, no longer than any request to its upstream (then
    // it is told to poll tasks/get): a waiter holds a call slot meanwhile.
    const UpstreamTasks::Wait wait(impl_.tasks, id);
    if (!wait.held()) {
        return failure(-32603, "tasks/result: another request waits on task " + quotedId(id) +
                                   " already; poll tasks/get");
    }
    const std::string params = R"({"taskId":)" + jsonString(route.upstream_id) + "}";
    const Clock::time_point deadline =
        Clock::now() + std::chrono::milliseconds(link.config.request_timeout_ms);
    std::set<std::string, std::less<>> asked;  // keys are never reused
    while (true) {
        if (Clock::now() >= deadline) {
            return failure(-32603, fmt::format("tasks/result: task {} did not end within {} ms "
                                               "(the upstream's request_timeout_ms); poll "
                                               "tasks/get, or ask again",
                                               quotedId(id), link.config.request_timeout_ms));
        }
        Answer a = send(link, "tasks/get", params, call);
        if (!a.ok) {
            return taskError("tasks/result", a.json, route.upstream_id, id);
        }
        json::Document read;
        if (!json::parseObject(a.json, read)) {
            return failure(-32603, who + ": a tasks/get answer is not a JSON object");
        }
        json::Document task;  // renamed: nothing of it shows the upstream's id
        json::parseObject(withTaskId(read, route.upstream_id, id), task);
        const std::string status = json::stringMember(task, "status");
        if (status == "completed") {
            if (!task.HasMember("result") || !task["result"].IsObject()) {
                return failure(-32603, who + ": the completed task carries no result object");
            }
            return mcp::CatalogReply{withRelatedTask(json::toJsonText(task["result"]), id), {}};
        }
        if (status == "failed") {
            std::optional<std::string> error =
                task.HasMember("error") ? validError(task["error"]) : std::nullopt;
            return error ? mcp::CatalogReply{{}, std::move(*error)}
                         : failure(-32603, who + ": the task failed and gives no JSON-RPC error");
        }
        if (status == "cancelled") {
            return failure(-32603, "tasks/result: task " + quotedId(id) + " was cancelled");
        }
        if (status == "input_required" && task.HasMember("inputRequests")) {
            std::vector<mcp::InputRequest> questions;
            if (const std::string fault = readQuestions(task["inputRequests"], questions);
                !fault.empty()) {
                return failure(-32603, fmt::format("{}: the task's questions: {}", who, fault));
            }
            std::string answers;
            for (const mcp::InputRequest& q : questions) {
                if (asked.count(q.key) != 0) {
                    continue;  // asked already: its answer is on its way upstream
                }
                if (asked.size() >= kMaxTaskQuestions) {
                    return failure(-32603, fmt::format("{}: the task asked more than {} questions",
                                                       who, kMaxTaskQuestions));
                }
                asked.insert(q.key);
                mcp::ToolCall::ClientAnswer reply = call.requestClient(
                    q.method, withRelatedTask(q.params_json, id),
                    std::chrono::milliseconds(link.config.client_request_timeout_ms));
                if (call.cancelled()) {
                    return failure(-32800, "request cancelled");
                }
                if (!reply.ok) {
                    return mcp::CatalogReply{{}, std::move(reply.json)};
                }
                answers += (answers.empty() ? "" : ",") + jsonString(q.key) + ":" + reply.json;
            }
            if (!answers.empty()) {
                Answer updated = send(link, "tasks/update",
                                      R"({"taskId":)" + jsonString(route.upstream_id) +
                                          R"(,"inputResponses":{)" + answers + "}}",
                                      call);
                if (!updated.ok) {
                    return taskError("tasks/result", updated.json, route.upstream_id, id);
                }
                continue;  // polled again at once: the task goes on with the answers
            }
        }
        std::chrono::milliseconds pause = kMaxPoll / 5;
        if (task.HasMember("pollIntervalMs") && task["pollIntervalMs"].IsInt64()) {
            pause = std::chrono::milliseconds(task["pollIntervalMs"].GetInt64());
        }
        pause = std::clamp(pause, kMinPoll, kMaxPoll);
        for (auto until = std::min(Clock::now() + pause, deadline); Clock::now() < until;) {
            if (call.cancelled()) {
                return failure(-32800, "request cancelled");
            }
            std::this_thread::sleep_for(std::min<Clock::duration>(kMinPoll, until - Clock::now()));
        }
    }
}

}  // namespace crank::federation
