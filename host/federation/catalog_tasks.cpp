// The upstreams' tasks as a workspace's catalog serves them (WorkspaceCatalog: taskCall,
// taskRequest), in the era of each caller:
//   - a 2025 session's task of a 2025 upstream, and a 2026 caller's task of a 2026 upstream:
//     the upstream's answers as they are, the task id renamed to crankd's;
//   - a 2025 session's task of a 2026 upstream (the Tasks extension): created with the
//     extension declared, shown as a 2025 Task; its tasks/result follows it with tasks/get
//     until it ends, asking its questions on the session's stream and answering them with
//     tasks/update; a tool the upstream answered at once becomes a completed task of crankd's.
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
#include "util/json_string.h"

namespace crank::federation {
namespace {

/// A 2025 session's tasks/result waits at most this long for an upstream's task to end (then
/// it is told to poll tasks/get); the task itself goes on.
constexpr std::chrono::minutes kMaxResultWait{60};
/// How often a task is polled: its pollIntervalMs, within these.
constexpr std::chrono::milliseconds kMinPoll{100};
constexpr std::chrono::milliseconds kMaxPoll{5'000};
/// Questions one task may ask a 2025 session in all (keys are never reused).
constexpr std::size_t kMaxTaskQuestions = 256;

mcp::CatalogReply failure(std::int64_t code, const std::string& message) {
    return mcp::CatalogReply{{}, rpcError(code, message)};
}

mcp::CatalogReply passed(Answer a) {
    return a.ok ? mcp::CatalogReply{std::move(a.json), {}}
                : mcp::CatalogReply{{}, std::move(a.json)};
}

std::string quotedId(const std::string& id) {
    return jsonString(id.substr(0, 128));
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
    // extension (the mcp plugin passes each what its era reads).
    Answer a =
        request(*link, "tools/call", json::withStringMember(params, "name", original), call, true);
    if (!a.ok) {
        return mcp::CatalogReply{{}, std::move(a.json)};
    }
    const std::string where = "upstream " + link->config.name + ": tools/call: ";
    json::Document result;
    if (!json::parseObject(a.json, result)) {
        return failure(-32603, where + "its answer is not a JSON object");
    }
    const std::string agent = call.caller().agent;
    if (result.HasMember("task") && result["task"].IsObject()) {  // a 2025 upstream's
        const std::string upstreamId = json::stringMember(result["task"], "taskId");
        if (upstreamId.empty() || upstreamId.size() > UpstreamTasks::kMaxUpstreamIdBytes) {
            return failure(-32603, where + "its task has no taskId string of at most " +
                                       std::to_string(UpstreamTasks::kMaxUpstreamIdBytes) +
                                       " bytes");
        }
        const std::string id = impl_.tasks.add(*link, upstreamId, workspace_, session_id, agent);
        return mcp::CatalogReply{withTaskId(result, upstreamId, id), {}};
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
        return mcp::CatalogReply{R"({"task":)" + legacyTaskJson(renamed) + "}", {}};
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
    if (!route->modern && modernCaller) {
        return failure(-32602, std::string(method) + ": task " + quotedId(id) +
                                   " was created in a 2025 session: follow it there");
    }
    const std::shared_ptr<UpstreamLink> link = route->link.lock();
    if (!link) {
        return failure(-32603, std::string(method) + ": the upstream of task " + quotedId(id) +
                                   " was removed");
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
        return mcp::CatalogReply{{}, std::move(a.json)};
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
    const std::string params = R"({"taskId":)" + jsonString(route.upstream_id) + "}";
    if (method == "tasks/cancel") {
        const Federation::Impl::Clock::time_point started = Federation::Impl::Clock::now();
        Answer cancelled = send(link, "tasks/cancel", params, call);
        impl_.auditRequest(link, call, "task_cancel", id, cancelled, started);
        if (!cancelled.ok) {
            return passed(std::move(cancelled));
        }
        // 2025 answers a cancel with the task as it is now; the extension only acknowledges.
    } else if (method != "tasks/get") {
        return failure(-32601, std::string(method).substr(0, 64) + " is not a 2025 task method");
    }
    Answer a = send(link, "tasks/get", params, call);
    json::Document task;
    if (!a.ok || !json::parseObject(a.json, task)) {
        return a.ok ? failure(-32603, "upstream " + link.config.name +
                                          ": tasks/get: the answer is not a JSON object")
                    : passed(std::move(a));
    }
    json::Document renamed;
    json::parseObject(withTaskId(task, route.upstream_id, id), renamed);
    return mcp::CatalogReply{legacyTaskJson(renamed), {}};
}

mcp::CatalogReply WorkspaceCatalog::legacyResult(UpstreamLink& link,
                                                 const UpstreamTasks::Route& route,
                                                 const std::string& id, mcp::ToolCall& call) {
    using Clock = std::chrono::steady_clock;
    const std::string who = "upstream " + link.config.name + ": tasks/result";
    const std::string params = R"({"taskId":)" + jsonString(route.upstream_id) + "}";
    const Clock::time_point deadline = Clock::now() + kMaxResultWait;
    std::set<std::string, std::less<>> asked;  // keys are never reused
    while (true) {
        Answer a = send(link, "tasks/get", params, call);
        if (!a.ok) {
            return passed(std::move(a));
        }
        json::Document task;
        if (!json::parseObject(a.json, task)) {
            return failure(-32603, who + ": a tasks/get answer is not a JSON object");
        }
        const std::string status = json::stringMember(task, "status");
        if (status == "completed") {
            if (!task.HasMember("result") || !task["result"].IsObject()) {
                return failure(-32603, who + ": the completed task carries no result object");
            }
            const std::string result = withTaskId(task, route.upstream_id, id);
            json::Document renamed;
            json::parseObject(result, renamed);
            return mcp::CatalogReply{withRelatedTask(json::toJsonText(renamed["result"]), id), {}};
        }
        if (status == "failed") {
            return task.HasMember("error") && task["error"].IsObject()
                       ? mcp::CatalogReply{{}, json::toJsonText(task["error"])}
                       : failure(-32603, who + ": the task failed and says no error");
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
                    return passed(std::move(updated));
                }
                continue;  // polled again at once: the task goes on with the answers
            }
        }
        std::chrono::milliseconds wait = kMaxPoll / 5;
        if (task.HasMember("pollIntervalMs") && task["pollIntervalMs"].IsInt64()) {
            wait = std::chrono::milliseconds(task["pollIntervalMs"].GetInt64());
        }
        wait = std::clamp(wait, kMinPoll, kMaxPoll);
        for (auto until = Clock::now() + wait; Clock::now() < until;) {
            if (call.cancelled()) {
                return failure(-32800, "request cancelled");
            }
            std::this_thread::sleep_for(std::min<Clock::duration>(kMinPoll, until - Clock::now()));
        }
        if (Clock::now() >= deadline) {
            return failure(-32603, fmt::format("tasks/result: task {} did not end within {} "
                                               "minutes; poll tasks/get",
                                               quotedId(id), kMaxResultWait.count()));
        }
    }
}

}  // namespace crank::federation
