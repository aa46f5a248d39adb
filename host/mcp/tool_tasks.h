#pragma once

// Host tools run as tasks (MCP Tasks, both eras): a tool whose ToolDefinition::task_support is set
// and that is not an async_job operation (those are the JobRegistry's) runs on a thread of its own
// while the client follows it with tasks/get. When the tool answers ToolResult::input, the task
// waits in `input_required` with those requests outstanding; tasks/update answers them (partially
// or all at once), and once none is left the tool runs again with the answers, as an MRTR retry
// would. It ends `completed` (with the tool's result, isError included), `failed` (a JSON-RPC
// error of the tool) or `cancelled`.
//
// Such a task lives on the node that runs it, like a held call (docs/mcp.md): its id names no
// node, and another node answers it as not found; a restart ends it. Operations that must outlive
// a node are async_job operations.
//
// Bounded: tasks kept per node and per agent, tasks running at once (a thread each), how long a
// question waits, rounds per task, how long an ended task is kept.
//
// THREADING: any thread; the listeners run on the task's thread and must not block.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mcp/task_backend.h"
#include "mcp/tool_registry.h"

namespace crank::mcp {

class ToolTasks final : public TaskBackend {
public:
    struct Options {
        std::size_t max_tasks = 1'000;          ///< kept on the node, ended ones included
        std::size_t max_tasks_per_agent = 100;  ///< kept per agent
        std::size_t max_running = 64;           ///< running or waiting for input (a thread each)
        std::int64_t ttl_ms = 3'600'000;        ///< kept from creation
        std::int64_t input_wait_ms = 300'000;   ///< a round's questions wait at most this
        int max_rounds = 8;                     ///< input rounds per task
        std::int64_t poll_interval_ms = 500;    ///< suggested to clients
    };

    /// `tools`: each workspace's tools.
    ToolTasks(Options options, std::map<std::string, ToolRegistry*> tools);
    /// Cancels the running tasks and waits for their threads.
    ~ToolTasks() override;
    ToolTasks(const ToolTasks&) = delete;
    ToolTasks& operator=(const ToolTasks&) = delete;

    Result<TaskInfo> create(std::string_view tool, std::string_view arguments_json,
                            const Caller& caller, std::optional<std::int64_t> ttl_ms,
                            std::string_view client_capabilities_json = {},
                            const InputRound* answers = nullptr,
                            const TraceContext& trace = {}) override;
    Result<TaskInfo> get(std::string_view task_id, const Caller& caller) override;
    Result<TaskPage> list(const Caller& caller, std::string_view cursor) override;
    Result<TaskInfo> cancel(std::string_view task_id, const Caller& caller) override;
    Result<std::optional<ToolResult>> result(std::string_view task_id,
                                             const Caller& caller) override;
    Result<void> update(std::string_view task_id, const Caller& caller,
                        const Answers& answers) override;
    void watch(std::string_view /*task_id*/) override {}  // every change is this node's
    void subscribe(Listener listener) override;

private:
    struct Task;
    class TaskCall;

    /// The task `task_id` of `caller`; null when there is none (or it is another caller's).
    std::shared_ptr<Task> find(std::string_view task_id, const Caller& caller);
    void run(const std::shared_ptr<Task>& task);
    /// Changes `task` (under its lock) and tells the listeners.
    void changed(const std::shared_ptr<Task>& task);
    /// Drops the ended tasks past their ttl (under mutex_).
    void sweep(std::int64_t now_ms);

    Options options_;
    std::map<std::string, ToolRegistry*> tools_;

    /// Joins the threads of the tasks that have ended (under mutex_).
    void reap();

    /// A task's thread, and whether its run has returned.
    struct Runner {
        std::shared_ptr<std::atomic<bool>> done;
        std::thread thread;
    };

    std::mutex mutex_;  // before any Task::mutex when both are held
    std::map<std::string, std::shared_ptr<Task>, std::less<>> tasks_;
    std::vector<Listener> listeners_;
    std::list<Runner> runners_;
    std::size_t running_ = 0;
    std::atomic<bool> stopping_{false};
};

/// Several task backends as one: a task is created by the first that can run the tool, and
/// found by id in whichever holds it.
class TaskBackends final : public TaskBackend {
public:
    /// Null backends are left out; the first listed is asked first.
    explicit TaskBackends(const std::vector<TaskBackend*>& backends);

    Result<TaskInfo> create(std::string_view tool, std::string_view arguments_json,
                            const Caller& caller, std::optional<std::int64_t> ttl_ms,
                            std::string_view client_capabilities_json = {},
                            const InputRound* answers = nullptr,
                            const TraceContext& trace = {}) override;
    Result<TaskInfo> get(std::string_view task_id, const Caller& caller) override;
    /// The first backend's list (the durable jobs'): pages of one backend only.
    Result<TaskPage> list(const Caller& caller, std::string_view cursor) override;
    Result<TaskInfo> cancel(std::string_view task_id, const Caller& caller) override;
    Result<std::optional<ToolResult>> result(std::string_view task_id,
                                             const Caller& caller) override;
    Result<void> update(std::string_view task_id, const Caller& caller,
                        const Answers& answers) override;
    void watch(std::string_view task_id) override;
    void subscribe(Listener listener) override;

private:
    /// `action` on each backend in turn until one knows the task (answers other than not_found).
    template <typename T, typename Action>
    Result<T> first(const Action& action);

    std::vector<TaskBackend*> backends_;
};

}  // namespace crank::mcp
