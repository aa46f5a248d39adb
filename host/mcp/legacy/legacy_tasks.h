#pragma once

// MCP Tasks as the 2025-11-25 revision has them, for the sessions of that version: a tools/call
// with `params.task` becomes a task of the TaskBackend, followed with tasks/get, tasks/result
// (which waits on an SSE stream until the task ends), tasks/list and tasks/cancel; its status
// changes go to the session that created it.

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "mcp/endpoint_access.h"
#include "mcp/endpoint_observer.h"
#include "mcp/legacy/mcp_session.h"
#include "mcp/legacy/session_streams.h"
#include "mcp/method_answer.h"
#include "mcp/method_table.h"
#include "mcp/task_backend.h"
#include "mcp/wire/json_rpc.h"

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::mcp {

/// The protocol version whose sessions may use Tasks (experimental in it; reshaped later).
inline constexpr std::string_view kTasksVersion = "2025-11-25";

class LegacyTasks {
public:
    /// `backend` null: no Tasks. `observer` is read when an answer goes out (it may be set later).
    LegacyTasks(TaskBackend* backend, bool auth_required, SessionStreams& streams,
                const MethodTable& methods, const EndpointObserver& observer);

    /// True when `session` may use Tasks: a backend, and protocol version 2025-11-25.
    bool enabled(const McpSession& session) const {
        return backend_ != nullptr && session.protocolVersion() == kTasksVersion;
    }
    /// The `tasks` member of initialize's capabilities, with its leading comma; "" without Tasks.
    std::string capabilityJson(std::string_view version) const;

    /// tools/call with `params.task`: creates the task (or has the upstream that runs the tool
    /// create it) and answers CreateTaskResult.
    MethodAnswer create(const JsonRpcMessage& message, const ToolCallParams& params,
                        const std::shared_ptr<McpSession>& session, const Who& who,
                        std::optional<std::uint64_t> stream, const TraceContext& trace = {});
    /// tasks/get, tasks/list, tasks/cancel.
    MethodAnswer method(const JsonRpcMessage& message, const std::shared_ptr<McpSession>& session,
                        const Who& who);
    /// tasks/result: the answer at once when the task has ended; otherwise an SSE stream that
    /// carries it once the task ends. Answers the HTTP request itself.
    void result(const JsonRpcMessage& message, const std::shared_ptr<McpSession>& session,
                const Who& who, Poco::Net::HTTPServerRequest& request,
                Poco::Net::HTTPServerResponse& response);

    /// The backend's listener: status notifications to the creator, answers to waiters.
    void onTask(const TaskInfo& task);

private:
    /// A tasks/result waiting for its task to end: answered on `stream` of `session`.
    struct Waiter {
        std::weak_ptr<McpSession> session;
        std::uint64_t stream = 0;
        RequestId id;
        Caller caller;
        std::chrono::steady_clock::time_point since;  // when its tasks/result came
    };

    /// The answer to tasks/result of `task_id` for `caller`; nullopt while the task runs.
    std::optional<MethodAnswer> resultAnswer(const std::string& task_id, const Caller& caller);

    TaskBackend* backend_;
    bool auth_required_;
    SessionStreams& streams_;
    const MethodTable& methods_;
    const EndpointObserver& observer_;

    std::mutex mutex_;
    std::map<std::string, std::weak_ptr<McpSession>> creators_;  // live task -> its session
    std::multimap<std::string, Waiter> waiters_;                 // task -> tasks/result
};

}  // namespace crank::mcp
