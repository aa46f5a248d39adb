#pragma once

// Execution mode `async_job` (issue 6): `{name}_start` records a job in the store and returns its
// id at once; a bounded pool of workers runs it (the operation's unary call, or its window for a
// streaming upstream) while `{name}_status`, `{name}_result` and `{name}_cancel` read and change
// the stored row. The same jobs are MCP Tasks (mcp::TaskBackend): a tools/call of `{name}_start`
// with `params.task` creates one, and tasks/result returns the operation's own CallToolResult.
//
// The store is the truth: status, progress, result, the tool input and the plugin's cursor are
// persisted, so any node answers status and result, and jobs outlive MCP sessions and crankd.
// Every live job names its owner node, which renews a heartbeat. At start-up a node takes back
// its own live jobs: queued ones are queued again; running ones whose plugin set a cursor (the
// upstream action can be followed again, e.g. a REST status URL) are resumed from it; the others
// are marked interrupted. A live job whose owner stopped renewing for `lease_ms` is taken over by
// another node the same way (Store::claimJob decides which).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mcp/task_backend.h"
#include "mcp/tool_registry.h"
#include "runtime/audit_log.h"
#include "runtime/operation.h"
#include "runtime/prepared_request.h"
#include "store/store.h"
#include "util/error.h"

namespace crank::runtime {

class JobRegistry final : public mcp::TaskBackend {
public:
    struct Options {
        std::shared_ptr<store::Store> store;  ///< required
        /// Where the audit events go (sampled); nullptr: an AuditLog over `store` that records
        /// every one.
        std::shared_ptr<AuditLog> audit;
        std::string node_id = "local";
        int workers = 16;
        std::size_t max_queued = 1'000;
        std::int64_t heartbeat_interval_ms = 5'000;
        std::int64_t lease_ms = 60'000;
        std::int64_t poll_interval_ms = 1'000;  ///< suggested to clients
        /// Progress is written to the store at most this often per job.
        std::int64_t progress_write_ms = 1'000;
        std::int64_t clean_interval_ms = 30'000;
        /// Live (queued or running) jobs allowed per agent and per workspace
        /// (auth.agents[].limits.max_jobs, auth.workspaces[].limits.max_jobs).
        std::map<std::string, std::int64_t, std::less<>> agent_max_jobs;
        std::map<std::string, std::int64_t, std::less<>> workspace_max_jobs;
    };

    /// Validates the input and renders the request of `op`; the error result when it cannot.
    using PrepareFunction = std::function<std::optional<mcp::ToolResult>(
        const Operation& op, std::string_view arguments_json, PreparedRequest& request)>;
    /// Runs `op` to its end (blocking), as a tools/call of a unary or window operation would.
    using RunFunction = std::function<mcp::ToolResult(const Operation& op, PreparedRequest& request,
                                                      mcp::ToolCall& call)>;

    JobRegistry(Options options, PrepareFunction prepare, RunFunction run);
    ~JobRegistry() override;
    JobRegistry(const JobRegistry&) = delete;
    JobRegistry& operator=(const JobRegistry&) = delete;
    JobRegistry(JobRegistry&&) = delete;
    JobRegistry& operator=(JobRegistry&&) = delete;

    /// Makes `op` known under its `{name}_start` tool (for Tasks and recovery). Call for every
    /// async_job operation before start().
    /// A reload's (or the admin API's) max_jobs of the agents and workspaces, by id: the next
    /// job is counted against them; those queued and running are kept.
    void setLimits(std::map<std::string, std::int64_t, std::less<>> agents,
                   std::map<std::string, std::int64_t, std::less<>> workspaces);

    void addOperation(const OperationPtr& op);
    /// Forgets `op` when it is the one known under its tool (an operation withdrawn by the admin
    /// API); its jobs already running go on.
    void removeOperation(const OperationPtr& op);
    /// Starts the workers and the heartbeat thread, after taking back this node's live jobs.
    void start();

    /// The four tools; each returns the structured result (JSON text) or the refusal.
    /// `trace`: the starting request's W3C trace context, kept with the job for its runs.
    Result<std::string> startJob(const OperationPtr& op, std::string_view arguments_json,
                                 const mcp::Caller& caller, const mcp::TraceContext& trace = {});
    Result<std::string> status(const Operation& op, std::string_view arguments_json,
                               const mcp::Caller& caller);
    /// `failed` is set when the job ended without a usable result (failed, cancelled,
    /// interrupted): the tool result is then an error.
    Result<std::string> result(const Operation& op, std::string_view arguments_json,
                               const mcp::Caller& caller, bool& failed);
    Result<std::string> cancelJob(const Operation& op, std::string_view arguments_json,
                                  const mcp::Caller& caller);

    /// The admin API's cancel: any agent's job, by id. conflict when it has ended already.
    Result<store::JobRecord> cancelById(std::string_view id);

    // mcp::TaskBackend
    Result<mcp::TaskInfo> create(std::string_view tool, std::string_view arguments_json,
                                 const mcp::Caller& caller, std::optional<std::int64_t> ttl_ms,
                                 std::string_view client_capabilities_json = {},
                                 const mcp::InputRound* answers = nullptr,
                                 const mcp::TraceContext& trace = {}) override;
    Result<mcp::TaskInfo> get(std::string_view task_id, const mcp::Caller& caller) override;
    Result<mcp::TaskPage> list(const mcp::Caller& caller, std::string_view cursor) override;
    Result<mcp::TaskInfo> cancel(std::string_view task_id, const mcp::Caller& caller) override;
    Result<std::optional<mcp::ToolResult>> result(std::string_view task_id,
                                                  const mcp::Caller& caller) override;
    void subscribe(Listener listener) override;
    void watch(std::string_view task_id) override;

    /// crankd is about to stop: from now on a run that ends in an error is taken as stopped by
    /// the shutdown (not as a failure of the job). Call before the runtime cancels its calls.
    void stop() { stop_flag_.store(true); }
    /// crankd is stopping: running jobs are asked to stop. Those whose plugin set a cursor stay
    /// `running` in the store (the next start resumes them); the others become interrupted.
    /// Waits up to `grace` for the workers; returns how many never returned.
    std::size_t shutdown(std::chrono::milliseconds grace);

    /// Jobs queued or running on this node.
    std::size_t liveCount() const;

    /// `{name}_start`'s: the job handle, or (a task's result) the operation's own output
    /// (`operation_output_schema`, empty: any object).
    static std::string startOutputSchema(std::string_view operation_output_schema);
    static std::string jobIdInputSchema();
    static std::string statusOutputSchema();
    static std::string resultOutputSchema();
    static std::string cancelOutputSchema();

private:
    struct Live;
    class JobCall;

    /// Creates the row and queues the job; the stored record.
    Result<store::JobRecord> submit(const OperationPtr& op, std::string_view arguments_json,
                                    const mcp::Caller& caller, const mcp::TraceContext& trace,
                                    std::int64_t ttl_ms, std::string& refusal_text);
    /// Reads `{job_id}`, finds the caller's job of `op`, runs `action` on it (which sets the
    /// status to audit) and audits `job.<verb>` with the outcome.
    using JobAction =
        std::function<Result<std::string>(const store::JobRecord& job, std::string& status)>;
    Result<std::string> withJob(const Operation& op, std::string_view arguments_json,
                                const mcp::Caller& caller, std::string_view verb,
                                const JobAction& action);
    /// The job `id` of `caller` (any of its operations when `op` is null).
    Result<store::JobRecord> findJob(std::string_view id, const Operation* op,
                                     const mcp::Caller& caller) const;
    Result<store::JobRecord> cancelRecord(const store::JobRecord& job);
    std::optional<Error> checkLimits(const mcp::Caller& caller) const;
    mcp::TaskInfo taskOf(const store::JobRecord& job) const;
    std::string statusJson(const store::JobRecord& job) const;
    void notify(const store::JobRecord& job);
    void audit(const mcp::Caller& caller, std::string_view operation, std::string_view verb,
               const Result<std::string>& outcome, std::string_view job_id,
               std::string_view status) const;

    /// Takes over the live jobs of `rows` (this node's own, or stale ones of others).
    void recover(const std::vector<store::JobRecord>& rows, bool own);
    void recoverOwn();
    void claimStale();
    void enqueue(std::shared_ptr<Live> live);
    void work();
    void runOne(const std::shared_ptr<Live>& live);
    void tick();
    void flushProgress();
    /// Reports the end of watched jobs that this node does not run (another node's).
    void checkWatched();
    /// Writes the ends that the store refused when the jobs ended (disk full, store away), at each
    /// heartbeat until it takes them: a job that ended is never left `running`.
    void recordUnrecorded();

    Options options_;
    PrepareFunction prepare_;
    RunFunction run_;
    std::shared_ptr<store::Store> store_;

    mutable std::mutex mutex_;
    std::condition_variable queue_ready_;
    std::condition_variable tick_wake_;
    std::deque<std::shared_ptr<Live>> queue_;
    std::map<std::string, std::shared_ptr<Live>, std::less<>> live_;  // queued and running
    std::map<std::string, OperationPtr, std::less<>> by_tool_;  // workspace \n {name}_start -> op
    std::vector<Listener> listeners_;
    std::set<std::string, std::less<>> watched_;  // tasks/result waiters' tasks (any node's)
    /// Job id -> its end (from running) that the store did not record yet; under mutex_.
    std::map<std::string, store::JobTransition, std::less<>> unrecorded_;
    bool stopping_ = false;
    bool started_ = false;
    std::atomic<bool> stop_flag_{false};
    std::vector<std::thread> workers_;
    std::thread ticker_;
    /// Serialises the count-then-insert of the limits on this node; guards options_'s
    /// agent_max_jobs and workspace_max_jobs (setLimits()).
    mutable std::mutex admit_mutex_;
};

}  // namespace crank::runtime
