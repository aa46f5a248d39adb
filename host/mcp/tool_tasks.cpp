#include "mcp/tool_tasks.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "mcp/input_rounds.h"
#include "mcp/method_answer.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/json_rpc.h"
#include "util/clock.h"
#include "util/json_string.h"
#include "util/random.h"

namespace crank::mcp {

/// One task: what it runs, where it stands, and (while it waits) the questions outstanding.
struct ToolTasks::Task {
    std::string tool;
    std::string arguments_json;
    ClientCapabilities capabilities;
    TraceContext trace;  ///< the creating request's, carried by every run
    ToolRegistry* registry = nullptr;
    std::optional<InputRound> first_round;  ///< the answers the first run starts with
    std::int64_t expires_at_ms = 0;

    std::mutex mutex;  // guards everything below
    std::condition_variable wake;
    TaskInfo info;
    std::optional<ToolResult> result;
    /// Read without the lock (the tool polls it).
    std::atomic<bool> cancel_requested{false};
    /// The questions not answered yet, in asking order.
    std::vector<InputRequest> outstanding;
    /// key -> the answer, for the round that follows.
    Answers answers;
};

/// The running side of a task's tool: cancelled by tasks/cancel or the node's stop; progress and
/// logs go nowhere (the extension sends neither for a task).
class ToolTasks::TaskCall final : public ToolCall {
public:
    TaskCall(std::shared_ptr<Task> task, const std::atomic<bool>& stopping)
        : task_(std::move(task)), stopping_(stopping) {
        setTrace(task_->trace);
    }

    bool cancelled() const override { return task_->cancel_requested.load() || stopping_.load(); }
    void progress(double, std::optional<double>, std::string_view) override {}
    void log(LogLevel, std::string_view, std::string_view) override {}
    Caller caller() const override { return task_->info.owner; }
    bool clientDeclares(std::string_view capability) const override {
        return task_->capabilities.declares(capability);
    }

private:
    std::shared_ptr<Task> task_;
    const std::atomic<bool>& stopping_;
};

namespace {

std::string errorObject(std::int64_t code, std::string_view message) {
    return MethodAnswer::error(code, message).json;
}

}  // namespace

ToolTasks::ToolTasks(Options options, std::map<std::string, ToolRegistry*> tools)
    : options_(options), tools_(std::move(tools)) {}

ToolTasks::~ToolTasks() {
    std::list<Runner> runners;
    std::vector<std::shared_ptr<Task>> tasks;
    {
        const std::lock_guard lock(mutex_);
        stopping_.store(true);
        runners.swap(runners_);
        for (const auto& [id, task] : tasks_) {
            tasks.push_back(task);
        }
    }
    for (const auto& task : tasks) {
        const std::lock_guard lock(task->mutex);
        task->wake.notify_all();  // a task waiting for input ends now
    }
    for (Runner& r : runners) {
        if (r.thread.joinable()) {
            r.thread.join();
        }
    }
}

void ToolTasks::reap() {
    for (auto it = runners_.begin(); it != runners_.end();) {
        if (it->done->load()) {
            it->thread.join();  // its run has returned: at once
            it = runners_.erase(it);
        } else {
            ++it;
        }
    }
}

void ToolTasks::sweep(std::int64_t now_ms) {
    for (auto it = tasks_.begin(); it != tasks_.end();) {
        bool ended = false;
        {
            const std::lock_guard lock(it->second->mutex);
            ended = isTerminal(it->second->info.status);
        }
        it = ended && it->second->expires_at_ms <= now_ms ? tasks_.erase(it) : std::next(it);
    }
}

Result<TaskInfo> ToolTasks::create(std::string_view tool, std::string_view arguments_json,
                                   const Caller& caller, std::optional<std::int64_t> /*ttl_ms*/,
                                   std::string_view client_capabilities_json,
                                   const InputRound* answers, const TraceContext& trace) {
    const auto registry = tools_.find(caller.workspace);
    if (registry == tools_.end() || registry->second == nullptr) {
        return Error{ErrorCode::not_found, "tool " + std::string(tool) + " cannot run as a task"};
    }
    const std::optional<ToolDefinition> definition = registry->second->find(tool);
    if (!definition || definition->task_support.empty()) {
        return Error{ErrorCode::not_found, "tool " + std::string(tool) + " cannot run as a task"};
    }
    auto task = std::make_shared<Task>();
    task->tool = std::string(tool);
    task->arguments_json = std::string(arguments_json.empty() ? "{}" : arguments_json);
    task->capabilities = ClientCapabilities(std::string(client_capabilities_json));
    task->trace = trace;
    task->registry = registry->second;
    if (answers != nullptr) {
        task->first_round = *answers;
    }
    const std::int64_t now = nowUnixMs();
    task->expires_at_ms = now + options_.ttl_ms;
    task->info.task_id = newId("task_");
    task->info.status = TaskStatus::working;
    task->info.created_at_ms = now;
    task->info.last_updated_at_ms = now;
    task->info.ttl_ms = options_.ttl_ms;
    task->info.poll_interval_ms = options_.poll_interval_ms;
    task->info.owner = caller;

    const std::lock_guard lock(mutex_);
    if (stopping_.load()) {
        return Error{ErrorCode::unavailable, "crankd is stopping"};
    }
    reap();
    sweep(now);
    const auto mine = static_cast<std::size_t>(
        std::count_if(tasks_.begin(), tasks_.end(), [&caller](const auto& entry) {
            const Caller& owner = entry.second->info.owner;  // set once, before it is shared
            return owner.workspace == caller.workspace && owner.agent == caller.agent;
        }));
    if (tasks_.size() >= options_.max_tasks || mine >= options_.max_tasks_per_agent ||
        running_ >= options_.max_running) {
        return Error{ErrorCode::unavailable,
                     "too many tasks: at most " + std::to_string(options_.max_tasks_per_agent) +
                         " per agent, " + std::to_string(options_.max_tasks) + " kept and " +
                         std::to_string(options_.max_running) +
                         " running on this node; try again when some have ended"};
    }
    tasks_.emplace(task->info.task_id, task);
    ++running_;
    TaskInfo created = task->info;  // not shared with the thread yet
    auto done = std::make_shared<std::atomic<bool>>(false);
    runners_.push_back(Runner{done, std::thread([this, task, done] {
                                  run(task);
                                  done->store(true);
                              })});
    return created;
}

void ToolTasks::run(const std::shared_ptr<Task>& task) {
    TaskCall call(task, stopping_);
    int round = 0;
    if (task->first_round) {
        round = task->first_round->round;
        call.setInputRound(task->first_round);
    }
    for (;; ++round) {
        Result<ToolResult> outcome = Error{ErrorCode::internal, "not run"};
        try {
            outcome = task->registry->call(task->tool, task->arguments_json, call);
        } catch (const std::exception& e) {
            outcome = Error{ErrorCode::internal, std::string("the tool failed: ") + e.what()};
        }
        std::unique_lock lock(task->mutex);
        TaskInfo& info = task->info;
        if (call.cancelled()) {
            task->cancel_requested.store(true);  // asked for, or the node is stopping
        }
        if (task->cancel_requested.load()) {
            info.status = TaskStatus::cancelled;
        } else if (!outcome) {
            info.status = TaskStatus::failed;
            info.error_json =
                errorObject(outcome.error().code == ErrorCode::invalid_argument ? kInvalidParams
                                                                                : kInternalError,
                            outcome.error().message);
            info.status_message = outcome.error().message;
        } else if (outcome->input) {
            if (round + 1 > options_.max_rounds) {
                info.status = TaskStatus::failed;
                info.error_json =
                    errorObject(kInternalError, "the tool asked for input more than " +
                                                    std::to_string(options_.max_rounds) + " times");
            } else {
                task->outstanding = outcome->input->requests;
                task->answers.clear();
                info.status = TaskStatus::input_required;
                info.input_requests_json = inputRequestsObject(task->outstanding);
                info.last_updated_at_ms = nowUnixMs();
                lock.unlock();
                changed(task);
                lock.lock();
                const bool answered = task->wake.wait_for(
                    lock, std::chrono::milliseconds(options_.input_wait_ms),
                    [&] { return task->outstanding.empty() || call.cancelled(); });
                if (call.cancelled()) {
                    info.status = TaskStatus::cancelled;
                } else if (!answered) {
                    info.status = TaskStatus::failed;
                    info.error_json = errorObject(
                        kInternalError, "the task's questions were not answered within " +
                                            std::to_string(options_.input_wait_ms) + " ms");
                } else {
                    InputRound next;
                    next.responses = std::move(task->answers);
                    next.state = outcome->input->state;
                    next.round = round + 1;
                    call.setInputRound(std::move(next));
                    info.status = TaskStatus::working;
                    info.input_requests_json.clear();
                    info.last_updated_at_ms = nowUnixMs();
                    lock.unlock();
                    changed(task);
                    continue;
                }
            }
        } else if (!outcome->rpc_error_json.empty()) {
            info.status = TaskStatus::failed;
            info.error_json = outcome->rpc_error_json;
        } else {
            info.status = TaskStatus::completed;
            task->result = std::move(*outcome);
        }
        info.input_requests_json.clear();
        info.last_updated_at_ms = nowUnixMs();
        task->expires_at_ms = info.created_at_ms + options_.ttl_ms;
        lock.unlock();
        changed(task);
        break;
    }
    const std::lock_guard lock(mutex_);
    --running_;
}

void ToolTasks::changed(const std::shared_ptr<Task>& task) {
    TaskInfo snapshot;
    {
        const std::lock_guard lock(task->mutex);
        snapshot = task->info;
    }
    std::vector<Listener> listeners;
    {
        const std::lock_guard lock(mutex_);
        listeners = listeners_;
    }
    for (const Listener& listener : listeners) {
        listener(snapshot);
    }
}

std::shared_ptr<ToolTasks::Task> ToolTasks::find(std::string_view task_id, const Caller& caller) {
    const std::lock_guard lock(mutex_);
    const auto it = tasks_.find(task_id);
    if (it == tasks_.end()) {
        return nullptr;
    }
    const Caller& owner = it->second->info.owner;
    return owner.workspace == caller.workspace && owner.agent == caller.agent ? it->second
                                                                              : nullptr;
}

Result<TaskInfo> ToolTasks::get(std::string_view task_id, const Caller& caller) {
    const auto task = find(task_id, caller);
    if (!task) {
        return Error{ErrorCode::not_found, "task not found"};
    }
    const std::lock_guard lock(task->mutex);
    return task->info;
}

Result<TaskPage> ToolTasks::list(const Caller& caller, std::string_view cursor) {
    if (!cursor.empty()) {
        return Error{ErrorCode::invalid_argument, "invalid cursor"};
    }
    TaskPage page;
    const std::lock_guard lock(mutex_);
    for (const auto& [id, task] : tasks_) {
        if (task->info.owner.workspace == caller.workspace &&
            task->info.owner.agent == caller.agent) {
            const std::lock_guard taskLock(task->mutex);
            page.tasks.push_back(task->info);
        }
    }
    return page;
}

Result<TaskInfo> ToolTasks::cancel(std::string_view task_id, const Caller& caller) {
    const auto task = find(task_id, caller);
    if (!task) {
        return Error{ErrorCode::not_found, "task not found"};
    }
    std::unique_lock lock(task->mutex);
    if (isTerminal(task->info.status)) {
        return Error{ErrorCode::invalid_argument, "cannot cancel task in terminal status: " +
                                                      std::string(toString(task->info.status))};
    }
    task->cancel_requested.store(true);
    task->wake.notify_all();
    // The tool notices at its next check; a task waiting for input ends now.
    return task->info;
}

Result<std::optional<ToolResult>> ToolTasks::result(std::string_view task_id,
                                                    const Caller& caller) {
    const auto task = find(task_id, caller);
    if (!task) {
        return Error{ErrorCode::not_found, "task not found"};
    }
    const std::lock_guard lock(task->mutex);
    if (!isTerminal(task->info.status)) {
        return std::optional<ToolResult>();
    }
    if (task->result) {
        return std::optional<ToolResult>(*task->result);
    }
    ToolResult r;
    r.is_error = true;
    r.content_json = R"([{"type":"text","text":)" +
                     jsonString(task->info.status == TaskStatus::cancelled
                                    ? std::string("the task was cancelled")
                                    : "the task failed: " + task->info.status_message) +
                     "}]";
    return std::optional<ToolResult>(std::move(r));
}

Result<void> ToolTasks::update(std::string_view task_id, const Caller& caller,
                               const Answers& answers) {
    const auto task = find(task_id, caller);
    if (!task) {
        return Error{ErrorCode::not_found, "task not found"};
    }
    const std::lock_guard lock(task->mutex);
    auto& outstanding = task->outstanding;
    const auto answered =
        std::remove_if(outstanding.begin(), outstanding.end(), [&](const InputRequest& request) {
            const auto it = answers.find(request.key);
            if (it == answers.end()) {
                return false;
            }
            task->answers[request.key] = it->second;
            return true;
        });
    if (answered == outstanding.end()) {
        return {};  // nothing it waits for: ignored
    }
    outstanding.erase(answered, outstanding.end());
    task->info.input_requests_json =
        outstanding.empty() ? std::string() : inputRequestsObject(outstanding);
    if (outstanding.empty() && task->info.status == TaskStatus::input_required) {
        task->info.status = TaskStatus::working;  // a tasks/get right after sees it resume
        task->wake.notify_all();
    }
    return {};
}

void ToolTasks::subscribe(Listener listener) {
    const std::lock_guard lock(mutex_);
    listeners_.push_back(std::move(listener));
}

// ----- TaskBackends ----------------------------------------------------------------------------

TaskBackends::TaskBackends(const std::vector<TaskBackend*>& backends) {
    for (TaskBackend* b : backends) {
        if (b != nullptr) {
            backends_.push_back(b);
        }
    }
}

Result<TaskInfo> TaskBackends::create(std::string_view tool, std::string_view arguments_json,
                                      const Caller& caller, std::optional<std::int64_t> ttl_ms,
                                      std::string_view client_capabilities_json,
                                      const InputRound* answers, const TraceContext& trace) {
    Result<TaskInfo> last = Error{ErrorCode::not_found, "no task backend"};
    for (TaskBackend* b : backends_) {
        last = b->create(tool, arguments_json, caller, ttl_ms, client_capabilities_json, answers,
                         trace);
        if (last || last.error().code != ErrorCode::not_found) {
            return last;
        }
    }
    return last;
}

template <typename T, typename Action>
Result<T> TaskBackends::first(const Action& action) {
    for (TaskBackend* b : backends_) {
        Result<T> answer = action(*b);
        if (answer || answer.error().code != ErrorCode::not_found) {
            return answer;
        }
    }
    return Error{ErrorCode::not_found, "task not found"};
}

Result<TaskInfo> TaskBackends::get(std::string_view task_id, const Caller& caller) {
    return first<TaskInfo>([&](TaskBackend& b) { return b.get(task_id, caller); });
}

Result<TaskPage> TaskBackends::list(const Caller& caller, std::string_view cursor) {
    if (backends_.empty()) {
        return TaskPage{};
    }
    return backends_.front()->list(caller, cursor);
}

Result<TaskInfo> TaskBackends::cancel(std::string_view task_id, const Caller& caller) {
    return first<TaskInfo>([&](TaskBackend& b) { return b.cancel(task_id, caller); });
}

Result<std::optional<ToolResult>> TaskBackends::result(std::string_view task_id,
                                                       const Caller& caller) {
    return first<std::optional<ToolResult>>(
        [&](TaskBackend& b) { return b.result(task_id, caller); });
}

Result<void> TaskBackends::update(std::string_view task_id, const Caller& caller,
                                  const Answers& answers) {
    return first<void>([&](TaskBackend& b) { return b.update(task_id, caller, answers); });
}

void TaskBackends::watch(std::string_view task_id) {
    for (TaskBackend* b : backends_) {
        b->watch(task_id);
    }
}

void TaskBackends::subscribe(Listener listener) {
    for (TaskBackend* b : backends_) {
        b->subscribe(listener);
    }
}

}  // namespace crank::mcp
