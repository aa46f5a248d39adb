#include "mcp/modern/modern_tasks.h"

#include <utility>

#include <fmt/core.h>

#include "json/json_scanner.h"
#include "mcp/modern/protocol_era.h"
#include "mcp/wire/request_meta.h"
#include "util/clock.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

/// The answer to a backend's refusal of task `task_id`: an unknown task (or another caller's)
/// is -32602, as the extension asks; the rest are internal errors that say why.
MethodAnswer refusal(std::string_view method, const Error& error) {
    if (error.code == ErrorCode::not_found) {
        return MethodAnswer::error(kInvalidParams, std::string(method) + ": task not found");
    }
    return MethodAnswer::error(
        error.code == ErrorCode::invalid_argument ? kInvalidParams : kInternalError,
        std::string(method) + ": " + error.message);
}

}  // namespace

std::string flatTaskMembers(const TaskInfo& task) {
    std::string out = R"("taskId":)" + jsonString(task.task_id) + R"(,"status":)" +
                      jsonString(toString(task.status));
    if (!task.status_message.empty()) {
        out += R"(,"statusMessage":)" + jsonString(task.status_message);
    }
    out += R"(,"createdAt":)" + jsonString(formatRfc3339(task.created_at_ms));
    out += R"(,"lastUpdatedAt":)" + jsonString(formatRfc3339(task.last_updated_at_ms));
    out += R"(,"ttlMs":)" + (task.ttl_ms ? std::to_string(*task.ttl_ms) : std::string("null"));
    out += fmt::format(R"(,"pollIntervalMs":{})", task.poll_interval_ms);
    return out;
}

MethodAnswer tasksExtensionRequired(std::string_view what) {
    return MethodAnswer::error(
        kMissingRequiredClientCapability,
        std::string(what) + " needs the " + std::string(kTasksExtension) +
            " extension, declared in params._meta[\"" + std::string(kMetaClientCapabilities) +
            "\"].extensions",
        R"({"requiredCapabilities":{"extensions":{)" + jsonString(kTasksExtension) + ":{}}}}");
}

std::string ModernTasks::capabilityJson() const {
    if (backend_ == nullptr) {
        return {};
    }
    return R"(,"extensions":{)" + jsonString(kTasksExtension) + ":{}}";
}

std::optional<MethodAnswer> ModernTasks::call(const ToolCallParams& params,
                                              const ToolDefinition* definition, bool declared,
                                              const Who& who,
                                              std::string_view client_capabilities_json,
                                              const InputRound* answers,
                                              const TraceContext& trace) const {
    if (backend_ == nullptr || definition == nullptr || definition->task_support.empty()) {
        return std::nullopt;
    }
    if (!declared) {
        if (definition->task_support == "required") {
            return tasksExtensionRequired("tool " + params.name + " runs only as a task: it");
        }
        return std::nullopt;
    }
    if (definition->input_before_task && answers == nullptr) {
        return std::nullopt;  // its questions first, as input_required rounds of this call
    }
    // The legacy `params.task` (and its ttl) is not read: the task is the server's choice, and
    // the backend keeps it as long as the operation says.
    Result<TaskInfo> created =
        backend_->create(params.name, params.arguments_json, who.caller(), std::nullopt,
                         client_capabilities_json, answers, trace);
    if (!created) {
        if (created.error().code == ErrorCode::not_found) {
            return std::nullopt;  // a tool the backend cannot run (e.g. an upstream's): run it
        }
        return refusal("tools/call", created.error());
    }
    return MethodAnswer::result(R"({"resultType":"task",)" + flatTaskMembers(*created) + "}");
}

MethodAnswer ModernTasks::method(const JsonRpcMessage& message, const Who& who) const {
    if (backend_ == nullptr) {
        return MethodAnswer::error(kMethodNotFound,
                                   message.method + " is not served: no task backend");
    }
    const std::string taskId = taskIdOf(message.params_json);
    if (taskId.empty()) {
        return MethodAnswer::error(kInvalidParams,
                                   message.method + ": params.taskId must be a non-empty string");
    }
    if (message.method == "tasks/get") {
        return get(taskId, who);
    }
    if (message.method == "tasks/update") {
        return update(taskId, message.params_json, who);
    }
    if (message.method == "tasks/cancel") {
        return cancel(taskId, who);
    }
    return MethodAnswer::error(kMethodNotFound, "method " + message.method.substr(0, 100) +
                                                    " is not part of the tasks extension");
}

MethodAnswer ModernTasks::get(const std::string& task_id, const Who& who) const {
    Result<std::string> detailed = detailedTask(task_id, who.caller());
    if (!detailed) {
        return refusal("tasks/get", detailed.error());
    }
    return MethodAnswer::result(std::move(*detailed));
}

Result<std::string> ModernTasks::detailedTask(const std::string& task_id,
                                              const Caller& caller) const {
    Result<TaskInfo> task = backend_->get(task_id, caller);
    if (!task) {
        return task.error();
    }
    // The extension keeps `failed` for JSON-RPC errors: a job that failed or was interrupted
    // ran and ended with a tool error (its result says why, isError), which is `completed`.
    if (task->status == TaskStatus::failed && task->error_json.empty()) {
        task->status = TaskStatus::completed;
    }
    std::string out = "{" + flatTaskMembers(*task);
    if (task->status == TaskStatus::failed) {
        out += R"(,"error":)" + task->error_json;
    } else if (task->status == TaskStatus::input_required && !task->input_requests_json.empty()) {
        out += R"(,"inputRequests":)" + task->input_requests_json;
    } else if (task->status == TaskStatus::completed) {
        Result<std::optional<ToolResult>> result = backend_->result(task_id, caller);
        if (!result) {
            return result.error();
        }
        if (*result) {
            out += R"(,"result":)" + (*result)->toJson();
        }
    }
    return out + "}";
}

bool ModernTasks::follow(const std::string& task_id, const Caller& caller) const {
    if (backend_ == nullptr) {
        return false;
    }
    const Result<TaskInfo> task = backend_->get(task_id, caller);
    if (!task) {
        return false;
    }
    // An ended task changes no more: nothing to watch (the backend's watches are bounded, and
    // kept for the tasks that can still end).
    if (!isTerminal(task->status)) {
        backend_->watch(task_id);
    }
    return true;
}

MethodAnswer ModernTasks::update(const std::string& task_id, std::string_view params_json,
                                 const Who& who) const {
    const Result<json::scan::RawEntry> params =
        json::scan::readObject(params_json.empty() ? "{}" : params_json);
    if (!params) {
        return MethodAnswer::error(kInvalidParams, "tasks/update: params must be an object");
    }
    // Read once, here: key -> the answer's text. An answer that is not an object answers
    // nothing; answers to keys the task is not waiting for are ignored by the backend (the
    // extension's rule), and a task that never asks ignores them all.
    TaskBackend::Answers answers;
    if (const json::scan::RawValue* responses =
            json::scan::findMember(params->members, "inputResponses")) {
        if (responses->type != json::scan::ValueType::object) {
            return MethodAnswer::error(kInvalidParams,
                                       "tasks/update: params.inputResponses must be an object");
        }
        const std::string_view text =
            params_json.substr(responses->start, responses->end - responses->start);
        const Result<json::scan::RawEntry> entries = json::scan::readObject(text);
        if (!entries) {
            return MethodAnswer::error(
                kInvalidParams, "tasks/update: params.inputResponses: " + entries.error().message);
        }
        for (const json::scan::RawMember& answer : entries->members) {
            if (answer.value.type == json::scan::ValueType::object) {
                answers.emplace(answer.name, json::scan::jsonText(text, answer.value));
            }
        }
    }
    if (Result<void> updated = backend_->update(task_id, who.caller(), answers); !updated) {
        return refusal("tasks/update", updated.error());
    }
    return MethodAnswer::result("{}");
}

MethodAnswer ModernTasks::cancel(const std::string& task_id, const Who& who) const {
    Result<TaskInfo> cancelled = backend_->cancel(task_id, who.caller());
    if (!cancelled && cancelled.error().code != ErrorCode::invalid_argument) {
        return refusal("tasks/cancel", cancelled.error());
    }
    // Cancellation is cooperative and acknowledged alike whether the task was live or had ended
    // (invalid_argument: a terminal task, which stays as it ended).
    return MethodAnswer::result("{}");
}

}  // namespace crank::mcp
