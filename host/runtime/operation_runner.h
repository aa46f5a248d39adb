#pragma once

#include <atomic>
#include <optional>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "mcp/tool_registry.h"
#include "runtime/audit_log.h"
#include "runtime/job_registry.h"
#include "runtime/operation.h"
#include "runtime/runtime_options.h"
#include "runtime/session_registry.h"
#include "runtime/stream_reaper.h"

namespace crank::runtime {

/// Runs the tools/call of an operation in its execution mode (DESIGN.md, "Data flow of one
/// tools/call"): input validated against the input schema (a failure is an isError result that
/// names the failing path), the upstream request rendered from the templates, the adapter called
/// (unary) or its stream collected into a bounded window, and the result built.
///
/// THREADING: run() is called concurrently from the HTTP worker threads; each call blocks its
/// thread for at most the window's duration (or the upstream timeout) plus the cancel grace.
/// Must be destroyed before the PluginRegistry its operations point into.
class OperationRunner {
public:
    /// `store`: where session rows go (nullptr: none). `auth`: the agents' and workspaces'
    /// limits (none without it).
    /// `jobs`: the worker pool and node of async jobs (they need `store`).
    explicit OperationRunner(const RuntimeOptions& options = {},
                             std::shared_ptr<store::Store> store = nullptr,
                             const config::AuthConfig* auth = nullptr,
                             const config::JobsConfig& jobs = {}, std::string node_id = "local");
    ~OperationRunner();
    OperationRunner(const OperationRunner&) = delete;
    OperationRunner& operator=(const OperationRunner&) = delete;
    OperationRunner(OperationRunner&&) = delete;
    OperationRunner& operator=(OperationRunner&&) = delete;

    mcp::ToolResult run(const Operation& op, std::string_view arguments_json, mcp::ToolCall& call);
    /// The tools/call of a unary or window operation: run(), then audited as `unary.call` or
    /// `window.call` (tool_call_audit.h). Test runs and jobs call run() and are audited as
    /// theirs.
    mcp::ToolResult call(const Operation& op, std::string_view arguments_json,
                         mcp::ToolCall& tool_call);

    /// The tools of a session operation: `{name}_start` (the operation's input), `{name}_poll`
    /// and `{name}_stop` (see SessionRegistry). `trace`: the client's trace context, carried
    /// by every upstream request of the session.
    mcp::ToolResult startSession(const OperationPtr& op, std::string_view arguments_json,
                                 const mcp::Caller& caller, const mcp::TraceContext& trace = {});
    mcp::ToolResult pollSession(const Operation& op, std::string_view arguments_json,
                                const mcp::Caller& caller);
    mcp::ToolResult stopSession(const Operation& op, std::string_view arguments_json,
                                const mcp::Caller& caller);

    /// The tools of an async_job operation: `{name}_start` (the operation's input, or a task),
    /// `{name}_status`, `{name}_result` and `{name}_cancel` (see JobRegistry).
    mcp::ToolResult startJob(const OperationPtr& op, std::string_view arguments_json,
                             const mcp::Caller& caller, const mcp::TraceContext& trace);
    mcp::ToolResult jobStatus(const Operation& op, std::string_view arguments_json,
                              const mcp::Caller& caller);
    mcp::ToolResult jobResult(const Operation& op, std::string_view arguments_json,
                              const mcp::Caller& caller);
    mcp::ToolResult cancelJob(const Operation& op, std::string_view arguments_json,
                              const mcp::Caller& caller);
    /// Where MCP Tasks run (the async jobs); nullptr without a store.
    mcp::TaskBackend* tasks() { return jobs_.get(); }
    /// Makes an async_job operation known to the job registry (publishOperations does it).
    void addJobOperation(const OperationPtr& op) {
        if (jobs_) {
            jobs_->addOperation(op);
        }
    }
    /// Forgets an async_job operation withdrawn by the admin API (its running jobs go on).
    void removeJobOperation(const OperationPtr& op) {
        if (jobs_) {
            jobs_->removeOperation(op);
        }
    }
    /// A reload's (or the admin API's) max_sessions and max_jobs of `auth`'s agents and
    /// workspaces: the next session and job are counted against them.
    void setCallerLimits(const config::AuthConfig& auth);

    /// The admin API's stop of any agent's session held by this node (SessionRegistry::stopById).
    Result<std::string> stopSessionById(std::string_view id) { return sessions_.stopById(id); }
    /// Stops this node's sessions of an operation whose tools were withdrawn.
    std::size_t stopSessionsOf(const Operation& op) { return sessions_.stopAllOf(op); }
    /// The admin API's cancel of any agent's job (JobRegistry::cancelById).
    Result<store::JobRecord> cancelJobById(std::string_view id) {
        if (!jobs_) {
            return Error{ErrorCode::not_found, "async jobs need a store"};
        }
        return jobs_->cancelById(id);
    }
    /// Starts the job workers, after taking back this node's jobs from before a restart. Call
    /// once every async_job operation is published.
    void startJobs();

    /// Sessions held (live and recently closed).
    std::size_t sessionCount() const { return sessions_.size(); }

    /// Returns once the audit events of the calls made so far are in the store (AuditLog::
    /// flush()): a reader of the trail on this node then sees them.
    void flushAudit() const { audit_->flush(); }

    /// crankd is stopping: every running window stops (stop_reason cancelled) and unary calls
    /// see is_cancelled(), so that draining is bounded by the cancel grace, not by windows.
    void stop();
    /// Stops, then waits (up to the cancel grace) for streams whose plugin has not completed
    /// them yet. Returns how many never completed: their plugin libraries must not be unloaded
    /// (their threads still run plugin code), see crankd.cpp.
    std::size_t shutdown();

    /// Streams still waiting for their plugin to acknowledge a cancel.
    std::size_t pendingStreams() const { return reaper_.pending(); }

private:
    /// Validates the input and renders the request; the error result when either fails.
    std::optional<mcp::ToolResult> prepare(const Operation& op, std::string_view arguments_json,
                                           struct PreparedRequest& request) const;
    mcp::ToolResult runUnary(const Operation& op, const struct PreparedRequest& request,
                             mcp::ToolCall& call);
    mcp::ToolResult runWindow(const Operation& op, struct PreparedRequest& request,
                              mcp::ToolCall& call);

    RuntimeOptions options_;
    FlowMetrics flow_;
    std::atomic<bool> stopping_{false};
    StreamReaper reaper_;
    std::shared_ptr<AuditLog> audit_;  ///< sessions, jobs and tool calls append through it
    SessionRegistry sessions_;
    std::unique_ptr<JobRegistry> jobs_;
};

/// The tools of one operation, in its toolNames() order, calling `runner` (see
/// publishOperations). An async_job operation must also be made known to the runner
/// (addJobOperation) when it is published.
using OperationTools =
    std::vector<std::pair<mcp::ToolDefinition, mcp::FunctionToolRegistry::Function>>;
OperationTools operationTools(const OperationPtr& op, OperationRunner& runner);

/// Publishes each operation as its tool (unary and window: one tool named after the operation;
/// session: the _start, _poll and _stop tools; async_job: _start, _status, _result, _cancel)
/// in `tools`, calling `runner`. The operations must outlive the registry's use of them (the
/// tools hold shared pointers).
void publishOperations(const std::vector<OperationPtr>& operations, OperationRunner& runner,
                       mcp::FunctionToolRegistry& tools);

}  // namespace crank::runtime
