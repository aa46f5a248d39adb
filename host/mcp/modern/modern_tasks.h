#pragma once

// The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) over a
// TaskBackend. A request declares the extension in its own `_meta` client capabilities; for such a
// request the server decides which tools/call becomes a task (here: every tool that can run as
// one, i.e. the `_start` tools of async_job operations) and answers it with a flat task object
// (`resultType:"task"`, durable before it is returned). The task is then followed with tasks/get
// (its result or error inlined once it ends), answered with tasks/update and stopped with
// tasks/cancel, both acknowledged with an empty result. tasks/result and tasks/list are not part
// of the extension. A task is its creator's: another agent's, or another workspace's, is not found.
//
// THREADING: const after construction; any number of requests at once (the backend is).

#include <optional>
#include <string>
#include <string_view>

#include "mcp/endpoint_access.h"
#include "mcp/method_answer.h"
#include "mcp/task_backend.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/tool_call_params.h"

namespace crank::mcp {

/// A task as the extension writes it: `taskId`, `status`, `statusMessage` (when there is one),
/// `createdAt`, `lastUpdatedAt` (RFC 3339), `ttlMs` (integer or null), `pollIntervalMs`; the
/// members of an object, without braces.
std::string flatTaskMembers(const TaskInfo& task);

class ModernTasks {
public:
    /// `backend` null: the extension is not offered (task methods are refused as not served).
    explicit ModernTasks(TaskBackend* backend) : backend_(backend) {}

    bool offered() const { return backend_ != nullptr; }

    /// The `extensions` member of server/discover's capabilities, with its leading comma; ""
    /// when the extension is not offered.
    std::string capabilityJson() const;

    /// A tools/call of `definition` (nullptr: not a tool of the caller's workspace): the created
    /// task's answer when this call becomes a task (`declared`: the request declared the
    /// extension), -32021 for a tool that runs only as a task called without the extension, and
    /// nullopt when the call runs as an ordinary one.
    /// `client_capabilities_json`: the request's declared capabilities (what the task's tool
    /// may ask for).
    /// `answers`: the request's own MRTR answers (a retry), or null; a tool that asks before its
    /// task (ToolDefinition::input_before_task) becomes a task only with them.
    std::optional<MethodAnswer> call(const ToolCallParams& params, const ToolDefinition* definition,
                                     bool declared, const Who& who,
                                     std::string_view client_capabilities_json = {},
                                     const InputRound* answers = nullptr,
                                     const TraceContext& trace = {}) const;

    /// tasks/get, tasks/update or tasks/cancel from a request that declared the extension (the
    /// caller checks the declaration and refuses tasks/result and tasks/list).
    MethodAnswer method(const JsonRpcMessage& message, const Who& who) const;

    /// The task `task_id` of `caller` as tasks/get and notifications/tasks show it (a
    /// DetailedTask: the flat task with its result once it completed), as a JSON object's text;
    /// not_found for an unknown task or another caller's.
    Result<std::string> detailedTask(const std::string& task_id, const Caller& caller) const;

    /// True when `task_id` is a task of `caller` that a listen may follow; the backend then
    /// reports its changes even when another node runs it.
    bool follow(const std::string& task_id, const Caller& caller) const;

private:
    MethodAnswer get(const std::string& task_id, const Who& who) const;
    MethodAnswer update(const std::string& task_id, std::string_view params_json,
                        const Who& who) const;
    MethodAnswer cancel(const std::string& task_id, const Who& who) const;

    TaskBackend* backend_;
};

/// -32021 for a request that needs the extension without declaring it, naming `what` needs it.
MethodAnswer tasksExtensionRequired(std::string_view what);

}  // namespace crank::mcp
