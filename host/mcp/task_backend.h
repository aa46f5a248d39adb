#pragma once

// MCP Tasks (2025-11-25, experimental): a tools/call with `params.task` becomes a task that the
// client follows with tasks/get, tasks/result, tasks/list and tasks/cancel. The endpoint speaks
// the protocol; a TaskBackend (the async_job runtime) runs and persists the tasks.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/tool_registry.h"
#include "util/error.h"

namespace crank::mcp {

enum class TaskStatus { working, input_required, completed, failed, cancelled };

/// "working", "input_required", "completed", "failed", "cancelled".
std::string_view toString(TaskStatus status);
bool isTerminal(TaskStatus status);

/// The protocol's Task object.
struct TaskInfo {
    std::string task_id;
    TaskStatus status = TaskStatus::working;
    std::string status_message;  ///< empty: none
    std::int64_t created_at_ms = 0;
    std::int64_t last_updated_at_ms = 0;
    std::optional<std::int64_t> ttl_ms;  ///< how long the task is kept from its creation
    std::int64_t poll_interval_ms = 1'000;
    /// Who owns it (tasks are bound to the caller that created them).
    Caller owner;
    /// Status input_required: the outstanding requests to the client, a JSON object of key ->
    /// {method, params} (the Tasks extension's inputRequests); empty otherwise.
    std::string input_requests_json;
    /// Status failed by a JSON-RPC error: that error object; empty when the task failed
    /// otherwise (a job's failure, which the extension shows as a tool error).
    std::string error_json;

    /// The Task as JSON text (timestamps in RFC 3339).
    std::string toJson() const;
};

/// A page of tasks/list.
struct TaskPage {
    std::vector<TaskInfo> tasks;
    std::string next_cursor;  ///< empty: the last page
};

/// Runs tools as tasks. Every method is thread-safe. A task of another caller is not_found, as
/// if it did not exist.
class TaskBackend {
public:
    virtual ~TaskBackend() = default;

    /// Starts `tool` (whose ToolDefinition::task_support is set) with `arguments_json` as a task
    /// of `caller`. `ttl_ms`: what the client asked for (the backend may change it).
    /// invalid_argument for input the tool refuses (the message says why), unavailable
    /// past a limit, not_found for a tool that cannot run as a task.
    /// `client_capabilities_json`: what the creating request's client declared (a tool that asks
    /// the client asks only for those).
    /// `answers`: the input round the tool's first run starts with (the answers of the
    /// tools/call's own MRTR rounds; ToolDefinition::input_before_task), or null.
    /// `trace`: the creating request's W3C trace context, which the task's runs carry upstream.
    virtual Result<TaskInfo> create(std::string_view tool, std::string_view arguments_json,
                                    const Caller& caller, std::optional<std::int64_t> ttl_ms,
                                    std::string_view client_capabilities_json = {},
                                    const InputRound* answers = nullptr,
                                    const TraceContext& trace = {}) = 0;
    virtual Result<TaskInfo> get(std::string_view task_id, const Caller& caller) = 0;
    /// `cursor`: empty for the first page, else a next_cursor given before (invalid_argument
    /// when it is not one).
    virtual Result<TaskPage> list(const Caller& caller, std::string_view cursor) = 0;
    /// Answers to the task's outstanding input requests (key -> the answer's result object, as
    /// InputRound::responses): answered keys stop being outstanding at once; keys that are not
    /// outstanding are ignored. not_found for an unknown task. A backend whose tasks never ask
    /// for input ignores them.
    using Answers = std::map<std::string, std::string, std::less<>>;
    virtual Result<void> update(std::string_view task_id, const Caller& caller,
                                const Answers& /*answers*/) {
        auto task = get(task_id, caller);
        if (!task) {
            return task.error();
        }
        return {};
    }
    /// Moves a live task to cancelled before answering; invalid_argument for a terminal one.
    virtual Result<TaskInfo> cancel(std::string_view task_id, const Caller& caller) = 0;
    /// The CallToolResult of a terminal task; nullopt while it is not terminal yet.
    virtual Result<std::optional<ToolResult>> result(std::string_view task_id,
                                                     const Caller& caller) = 0;

    /// Someone waits for `task_id` to end (tasks/result): the backend reports its end to the
    /// listeners even when another node runs it. Bounded; the watch ends with the task.
    virtual void watch(std::string_view task_id) = 0;

    /// `listener` runs (on the backend's thread, after the store has the change) whenever a task
    /// changes status or reports progress. It must not block.
    using Listener = std::function<void(const TaskInfo&)>;
    virtual void subscribe(Listener listener) = 0;
};

/// `params.taskId` of a tasks/* request (either era); "" when absent or not a string.
std::string taskIdOf(std::string_view params_json);

}  // namespace crank::mcp
