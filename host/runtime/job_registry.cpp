#include "runtime/job_registry.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_parse.h"
#include "json/json_text.h"
#include "log/log.h"
#include "util/clock.h"
#include "util/json_string.h"

namespace crank::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using store::JobRecord;
using store::JobStatus;

/// Pages of recovery and takeover scans; the loops stop after this many pages.
constexpr int kMaxRecoveryPages = 1'000;
/// tasks/list page size.
constexpr int kTaskPageSize = 100;
/// Shortest and longest retention a task may ask for (`params.task.ttl`).
constexpr std::int64_t kMinTaskTtlMs = 60'000;

const std::vector<JobStatus>& liveStatuses() {
    static const std::vector<JobStatus> statuses = {JobStatus::queued, JobStatus::running};
    return statuses;
}

mcp::TaskStatus taskStatusOf(JobStatus status) {
    switch (status) {
        case JobStatus::queued:
        case JobStatus::running:
            return mcp::TaskStatus::working;
        case JobStatus::succeeded:
            return mcp::TaskStatus::completed;
        case JobStatus::cancelled:
            return mcp::TaskStatus::cancelled;
        case JobStatus::failed:
        case JobStatus::interrupted:
            return mcp::TaskStatus::failed;
    }
    return mcp::TaskStatus::failed;
}

/// The text of the first text block of a result's content (for error messages).
std::string firstText(std::string_view content_json) {
    json::Document doc;
    if (!json::parseJson(content_json, doc, "content") || !doc.IsArray()) {
        return {};
    }
    for (const json::Value& block : doc.GetArray()) {
        if (block.IsObject() && block.HasMember("text") && block["text"].IsString()) {
            return {block["text"].GetString(), block["text"].GetStringLength()};
        }
    }
    return {};
}

std::optional<mcp::ToolResult> parseCallToolResult(std::string_view json_text) {
    json::Document doc;
    if (!json::parseJson(json_text, doc, "result") || !doc.IsObject() ||
        !doc.HasMember("content")) {
        return std::nullopt;
    }
    mcp::ToolResult r;
    r.content_json = json::toJsonText(doc["content"]);
    if (doc.HasMember("structuredContent")) {
        r.structured_json = json::toJsonText(doc["structuredContent"]);
    }
    r.is_error = doc.HasMember("isError") && doc["isError"].IsBool() && doc["isError"].GetBool();
    return r;
}

mcp::ToolResult textToolResult(std::string_view text, bool is_error) {
    mcp::ToolResult r;
    r.content_json = R"([{"type":"text","text":)" + jsonString(text) + "}]";
    r.is_error = is_error;
    return r;
}

/// The message of a stored error_json (`{"message": ...}`), or the text itself.
std::string errorMessage(const std::optional<std::string>& error_json) {
    if (!error_json) {
        return {};
    }
    json::Document doc;
    if (json::parseJson(*error_json, doc, "error") && doc.IsObject() && doc.HasMember("message") &&
        doc["message"].IsString()) {
        return {doc["message"].GetString(), doc["message"].GetStringLength()};
    }
    return *error_json;
}

/// `{"job_id": "..."}` of a status, result or cancel call; the id, or the refusal.
Result<std::string> jobIdOf(std::string_view arguments_json) {
    json::Document doc;
    if (auto parsed = json::parseJson(arguments_json, doc, "input"); !parsed) {
        return Error{ErrorCode::invalid_argument, "invalid input: " + parsed.error().message};
    }
    if (!doc.IsObject() || !doc.HasMember("job_id") || !doc["job_id"].IsString() ||
        doc["job_id"].GetStringLength() == 0) {
        return Error{ErrorCode::invalid_argument,
                     "invalid input: job_id is required (the id the _start tool returned)"};
    }
    return std::string(doc["job_id"].GetString(), doc["job_id"].GetStringLength());
}

/// The agent as rows name it: the anonymous agent ("", auth.mode "none") is "anonymous", as in
/// the session rows and the audit log.
std::string storedAgent(const mcp::Caller& caller) {
    return caller.agent.empty() ? "anonymous" : caller.agent;
}

/// The caller a row belongs to.
mcp::Caller ownerOf(const JobRecord& job) {
    mcp::Caller c;
    c.workspace = job.workspace_id;
    c.agent = job.agent_id == "anonymous" ? "" : job.agent_id;
    return c;
}

std::string optionalTime(const std::optional<std::int64_t>& ms) {
    return ms ? jsonString(formatRfc3339(*ms)) : std::string("null");
}

}  // namespace

/// A job queued or running on this node.
struct JobRegistry::Live {
    std::string id;
    OperationPtr op;
    mcp::Caller caller;
    PreparedRequest request;
    std::int64_t ttl_ms = 0;
    bool resume = false;  ///< its row is running already (recovered from a cursor)
    std::atomic<bool> cancelled{false};
    std::atomic<bool> cursor_set{false};

    std::mutex mutex;
    std::optional<std::string> pending_progress;  // not written to the store yet
    Clock::time_point last_progress_write{};
    double last_progress = -1;
};

/// The ToolCall a job runs under: cancelled by _cancel, tasks/cancel or shutdown; its progress
/// is persisted (at most every progress_write_ms) and announced to task listeners.
class JobRegistry::JobCall final : public mcp::ToolCall {
public:
    JobCall(JobRegistry& registry, std::shared_ptr<Live> live)
        : registry_(registry), live_(std::move(live)) {}

    bool cancelled() const override {
        return live_->cancelled.load() || registry_.stop_flag_.load();
    }

    void progress(double progress, std::optional<double> total, std::string_view message) override {
        std::string json = fmt::format(R"({{"progress":{})", progress);
        json += total ? fmt::format(R"(,"total":{})", *total) : std::string(R"(,"total":null)");
        json += R"(,"message":)" +
                jsonString(live_->op->scrubber.empty() ? std::string(message)
                                                       : live_->op->scrubber.scrub(message)) +
                "}";
        bool write = false;
        {
            const std::lock_guard lock(live_->mutex);
            if (progress <= live_->last_progress) {
                return;
            }
            live_->last_progress = progress;
            const Clock::time_point now = Clock::now();
            if (now - live_->last_progress_write >=
                milliseconds(registry_.options_.progress_write_ms)) {
                live_->last_progress_write = now;
                live_->pending_progress.reset();
                write = true;
            } else {
                live_->pending_progress = json;
            }
        }
        if (write) {
            if (auto r = registry_.store_->updateJobProgress(live_->id, json); !r) {
                log::warn("jobs: cannot record the progress of job {}: {}", live_->id,
                          r.error().message);
            }
            if (auto job = registry_.store_->getJob(live_->id)) {
                registry_.notify(*job);
            }
        }
    }

    void log(mcp::LogLevel /*level*/, std::string_view /*logger*/,
             std::string_view /*data_json*/) override {}

    mcp::Caller caller() const override { return live_->caller; }

    bool stoppingForRestart() const override {
        return registry_.stop_flag_.load() && !live_->cancelled.load() && live_->cursor_set.load();
    }

private:
    JobRegistry& registry_;
    std::shared_ptr<Live> live_;
};

JobRegistry::JobRegistry(Options options, PrepareFunction prepare, RunFunction run)
    : options_(std::move(options)),
      prepare_(std::move(prepare)),
      run_(std::move(run)),
      store_(options_.store) {
    if (!options_.audit) {
        options_.audit = std::make_shared<AuditLog>(store_);
    }
}

JobRegistry::~JobRegistry() {
    shutdown(milliseconds(0));
}

namespace {
/// by_tool_'s key: tool names are unique per workspace only.
std::string toolKey(std::string_view workspace, std::string_view tool) {
    std::string key(workspace);
    key += '\n';
    key += tool;
    return key;
}
}  // namespace

void JobRegistry::addOperation(const OperationPtr& op) {
    const std::lock_guard lock(mutex_);
    by_tool_[toolKey(op->config.workspace, op->config.toolNames().front())] = op;
}

void JobRegistry::removeOperation(const OperationPtr& op) {
    const std::lock_guard lock(mutex_);
    const auto it = by_tool_.find(toolKey(op->config.workspace, op->config.toolNames().front()));
    if (it != by_tool_.end() && it->second == op) {
        by_tool_.erase(it);
    }
}

void JobRegistry::start() {
    {
        const std::lock_guard lock(mutex_);
        if (started_ || !store_) {
            return;
        }
        started_ = true;
    }
    recoverOwn();
    claimStale();
    for (int i = 0; i < options_.workers; ++i) {
        workers_.emplace_back([this] { work(); });
    }
    ticker_ = std::thread([this] { tick(); });
}

std::size_t JobRegistry::liveCount() const {
    const std::lock_guard lock(mutex_);
    return live_.size();
}

// ----- tools ----------------------------------------------------------------------------------

void JobRegistry::setLimits(std::map<std::string, std::int64_t, std::less<>> agents,
                            std::map<std::string, std::int64_t, std::less<>> workspaces) {
    const std::lock_guard admit(admit_mutex_);  // checkLimits() reads them under it
    options_.agent_max_jobs = std::move(agents);
    options_.workspace_max_jobs = std::move(workspaces);
}

std::optional<Error> JobRegistry::checkLimits(const mcp::Caller& caller) const {
    const auto over = [&](std::int64_t limit, const store::JobFilter& filter) {
        auto count = store_->countJobs(filter);
        return count && *count >= limit;
    };
    if (const auto it = options_.agent_max_jobs.find(caller.agent);
        !caller.agent.empty() && it != options_.agent_max_jobs.end()) {
        store::JobFilter f;
        f.workspace_id = caller.workspace;
        f.agent_id = storedAgent(caller);
        f.statuses = liveStatuses();
        if (over(it->second, f)) {
            return Error{ErrorCode::unavailable,
                         fmt::format("agent \"{}\" already has {} queued or running jobs, its "
                                     "limit (auth.agents[].limits.max_jobs); wait for one to "
                                     "finish or cancel one",
                                     caller.agent, it->second)};
        }
    }
    if (const auto it = options_.workspace_max_jobs.find(caller.workspace);
        it != options_.workspace_max_jobs.end()) {
        store::JobFilter f;
        f.workspace_id = caller.workspace;
        f.statuses = liveStatuses();
        if (over(it->second, f)) {
            return Error{ErrorCode::unavailable,
                         fmt::format("workspace \"{}\" already has {} queued or running jobs, its "
                                     "limit (auth.workspaces[].limits.max_jobs)",
                                     caller.workspace, it->second)};
        }
    }
    return std::nullopt;
}

Result<JobRecord> JobRegistry::submit(const OperationPtr& op, std::string_view arguments_json,
                                      const mcp::Caller& caller, const mcp::TraceContext& trace,
                                      std::int64_t ttl_ms, std::string& refusal_text) {
    if (!store_) {
        return Error{ErrorCode::unavailable, "jobs need a store (store.path)"};
    }
    auto live = std::make_shared<Live>();
    if (auto refused = prepare_(*op, arguments_json, live->request)) {
        refusal_text = firstText(refused->content_json);
        return Error{ErrorCode::invalid_argument, refusal_text};
    }
    {
        const std::lock_guard lock(mutex_);
        if (stopping_ || !started_) {
            return Error{ErrorCode::unavailable, "crankd is shutting down"};
        }
        if (queue_.size() >= options_.max_queued) {
            return Error{ErrorCode::unavailable,
                         fmt::format("{} jobs are waiting for a worker already, the limit "
                                     "(jobs.max_queued); retry later",
                                     queue_.size())};
        }
    }
    const std::lock_guard admit(admit_mutex_);
    if (auto limited = checkLimits(caller)) {
        return *limited;
    }
    const std::int64_t now = nowUnixMs();
    JobRecord row;
    row.workspace_id = caller.workspace;
    row.agent_id = storedAgent(caller);
    row.operation_id = op->config.name;
    row.status = JobStatus::queued;
    row.expires_at = now + ttl_ms;
    row.created_at = now;
    row.owner_node = options_.node_id;
    row.heartbeat_at = now;
    row.input_json = std::string(arguments_json);
    row.traceparent = trace.traceparent;
    row.tracestate = trace.tracestate;
    live->request.traceparent = trace.traceparent;
    live->request.tracestate = trace.tracestate;
    auto created = store_->createJob(std::move(row));
    if (!created) {
        return Error{ErrorCode::unavailable, "cannot record the job: " + created.error().message};
    }
    live->id = created->id;
    live->op = op;
    live->caller = caller;
    live->ttl_ms = ttl_ms;
    enqueue(live);
    return created;
}

Result<std::string> JobRegistry::startJob(const OperationPtr& op, std::string_view arguments_json,
                                          const mcp::Caller& caller,
                                          const mcp::TraceContext& trace) {
    std::string refusal;
    auto job =
        submit(op, arguments_json, caller, trace, op->config.execution.result_ttl_ms, refusal);
    Result<std::string> out = Error{ErrorCode::internal, ""};
    if (!job) {
        out = job.error();
    } else {
        const auto& names = op->config.toolNames();
        out = fmt::format(
            R"({{"job_id":{},"status":"queued","created_at":{},"expires_at":{},)"
            R"("poll_interval_ms":{},"status_tool":{},"result_tool":{},"cancel_tool":{}}})",
            jsonString(job->id), jsonString(formatRfc3339(job->created_at)),
            jsonString(formatRfc3339(job->expires_at)), options_.poll_interval_ms,
            jsonString(names[1]), jsonString(names[2]), jsonString(names[3]));
    }
    audit(caller, op->config.name, "start", out, job ? std::string_view(job->id) : "",
          job ? "queued" : "");
    return out;
}

Result<JobRecord> JobRegistry::findJob(std::string_view id, const Operation* op,
                                       const mcp::Caller& caller) const {
    const auto notFound = [&] {
        return Error{ErrorCode::not_found,
                     fmt::format("no job {}{} (it may have expired and been cleaned up)",
                                 jsonString(id.substr(0, 64)),
                                 op != nullptr ? " for " + op->config.name : std::string())};
    };
    if (!store_ || id.size() > 128) {
        return notFound();
    }
    // Read only when it is the caller's: another agent's (or operation's) job is not found
    // either, at the cost of an unknown one (its existence, or its result's size, is not theirs
    // to learn).
    store::JobFilter mine;
    mine.id = std::string(id);
    mine.workspace_id = caller.workspace;
    mine.agent_id = storedAgent(caller);
    if (op != nullptr) {
        mine.operation_id = op->config.name;
    }
    mine.limit = 1;
    auto jobs = store_->listJobs(mine);
    if (!jobs) {
        return Error{ErrorCode::unavailable, "cannot read the job: " + jobs.error().message};
    }
    if (jobs->empty()) {
        return notFound();
    }
    return std::move(jobs->front());
}

std::string JobRegistry::statusJson(const JobRecord& job) const {
    const bool ready = job.result_json.has_value() && job.status == JobStatus::succeeded;
    std::string out = R"({"job_id":)" + jsonString(job.id) + R"(,"status":)" +
                      jsonString(store::jobStatusName(job.status));
    out += R"(,"progress":)" + job.progress_json.value_or("null");
    out += R"(,"created_at":)" + jsonString(formatRfc3339(job.created_at));
    out += R"(,"updated_at":)" + jsonString(formatRfc3339(job.updated_at));
    out += R"(,"finished_at":)" + optionalTime(job.finished_at);
    out += R"(,"expires_at":)" + jsonString(formatRfc3339(job.expires_at));
    const std::string error = errorMessage(job.error_json);
    out += R"(,"error":)" + (error.empty() ? std::string("null") : jsonString(error));
    out += std::string(R"(,"result_ready":)") + (ready ? "true" : "false");
    out += fmt::format(R"(,"poll_interval_ms":{}}})", options_.poll_interval_ms);
    return out;
}

Result<std::string> JobRegistry::withJob(const Operation& op, std::string_view arguments_json,
                                         const mcp::Caller& caller, std::string_view verb,
                                         const JobAction& action) {
    auto id = jobIdOf(arguments_json);
    Result<std::string> out = Error{ErrorCode::internal, ""};
    std::string status;
    if (!id) {
        out = id.error();
    } else if (auto job = findJob(*id, &op, caller); !job) {
        out = job.error();
    } else {
        out = action(*job, status);
    }
    audit(caller, op.config.name, verb, out, id ? std::string_view(*id) : "", status);
    return out;
}

Result<std::string> JobRegistry::status(const Operation& op, std::string_view arguments_json,
                                        const mcp::Caller& caller) {
    return withJob(op, arguments_json, caller, "status",
                   [this](const JobRecord& job, std::string& status) -> Result<std::string> {
                       status = store::jobStatusName(job.status);
                       return statusJson(job);
                   });
}

Result<std::string> JobRegistry::result(const Operation& op, std::string_view arguments_json,
                                        const mcp::Caller& caller, bool& failed) {
    failed = false;
    return withJob(
        op, arguments_json, caller, "result",
        [&failed](const JobRecord& job, std::string& status) -> Result<std::string> {
            status = store::jobStatusName(job.status);
            std::string json =
                R"({"job_id":)" + jsonString(job.id) + R"(,"status":)" + jsonString(status);
            const std::optional<mcp::ToolResult> stored =
                job.result_json ? parseCallToolResult(*job.result_json) : std::nullopt;
            if (!store::isTerminal(job.status)) {
                json +=
                    R"(,"ready":false,"message":"the job has not finished yet; ask again later")";
                json += R"(,"progress":)" + job.progress_json.value_or("null");
            } else if (stored && !stored->is_error) {
                json +=
                    R"(,"ready":true,"result":)" +
                    (stored->structured_json.empty() ? jsonString(firstText(stored->content_json))
                                                     : stored->structured_json);
            } else {
                failed = true;
                std::string why = errorMessage(job.error_json);
                if (why.empty() && stored) {
                    why = firstText(stored->content_json);
                }
                json += R"(,"ready":false,"error":)" + jsonString(why.empty() ? status : why);
            }
            return json + R"(,"finished_at":)" + optionalTime(job.finished_at) + "}";
        });
}

Result<JobRecord> JobRegistry::cancelRecord(const JobRecord& job) {
    JobRecord current = job;
    // Queued -> cancelled, or running -> cancelled; a completion racing with us makes the
    // compare-and-set fail, and we answer with whatever won (nothing is lost either way).
    for (int attempt = 0; attempt < 4 && !store::isTerminal(current.status); ++attempt) {
        const std::int64_t now = nowUnixMs();
        store::JobTransition t;
        t.to = JobStatus::cancelled;
        t.finished_at = now;
        t.error_json = R"({"message":"cancelled on request"})";
        std::int64_t ttl = 0;
        {
            const std::lock_guard lock(mutex_);
            if (const auto it = live_.find(job.id); it != live_.end()) {
                it->second->cancelled.store(true);
                ttl = it->second->ttl_ms;
            }
        }
        if (ttl == 0) {
            ttl = std::max<std::int64_t>(current.expires_at - current.created_at, kMinTaskTtlMs);
        }
        t.expires_at = now + ttl;
        auto r = store_->transitionJob(job.id, current.status, t);
        if (!r) {
            return r.error();
        }
        auto reread = store_->getJob(job.id);
        if (!reread) {
            return reread.error();
        }
        current = std::move(*reread);
        if (r->applied()) {
            notify(current);
            break;
        }
    }
    return current;
}

Result<std::string> JobRegistry::cancelJob(const Operation& op, std::string_view arguments_json,
                                           const mcp::Caller& caller) {
    return withJob(op, arguments_json, caller, "cancel",
                   [this](const JobRecord& job, std::string& status) -> Result<std::string> {
                       auto after = cancelRecord(job);
                       if (!after) {
                           return Error{ErrorCode::unavailable,
                                        "cannot cancel the job: " + after.error().message};
                       }
                       status = store::jobStatusName(after->status);
                       const bool cancelled = after->status == JobStatus::cancelled;
                       return R"({"job_id":)" + jsonString(after->id) + R"(,"status":)" +
                              jsonString(status) + std::string(R"(,"cancelled":)") +
                              (cancelled ? "true" : "false") + R"(,"message":)" +
                              jsonString(cancelled
                                             ? "the job is cancelled"
                                             : "the job had already finished; nothing to cancel") +
                              "}";
                   });
}

// ----- Tasks ----------------------------------------------------------------------------------

mcp::TaskInfo JobRegistry::taskOf(const JobRecord& job) const {
    mcp::TaskInfo t;
    t.task_id = job.id;
    t.status = taskStatusOf(job.status);
    if (job.status == JobStatus::queued) {
        t.status_message = "queued, waiting for a worker";
    } else if (job.status == JobStatus::running && job.progress_json) {
        json::Document doc;
        if (json::parseJson(*job.progress_json, doc, "progress") && doc.IsObject() &&
            doc.HasMember("message") && doc["message"].IsString()) {
            t.status_message.assign(doc["message"].GetString(), doc["message"].GetStringLength());
        }
    } else if (store::isTerminal(job.status)) {
        t.status_message = errorMessage(job.error_json);
        if (job.status == JobStatus::interrupted) {
            t.status_message = "interrupted: " + t.status_message;
        }
    }
    t.created_at_ms = job.created_at;
    t.last_updated_at_ms = job.updated_at;
    t.ttl_ms =
        job.finished_at ? job.expires_at - *job.finished_at : job.expires_at - job.created_at;
    t.poll_interval_ms = options_.poll_interval_ms;
    t.owner = ownerOf(job);
    return t;
}

Result<mcp::TaskInfo> JobRegistry::create(std::string_view tool, std::string_view arguments_json,
                                          const mcp::Caller& caller,
                                          std::optional<std::int64_t> ttl_ms,
                                          std::string_view /*client_capabilities_json*/,
                                          const mcp::InputRound* /*answers*/,
                                          const mcp::TraceContext& trace) {
    OperationPtr op;
    {
        const std::lock_guard lock(mutex_);
        if (const auto it = by_tool_.find(toolKey(caller.workspace, tool)); it != by_tool_.end()) {
            op = it->second;
        }
    }
    if (!op || op->config.workspace != caller.workspace) {
        return Error{ErrorCode::not_found, "tool " + std::string(tool) + " cannot run as a task"};
    }
    const std::int64_t retention = op->config.execution.result_ttl_ms;
    const std::int64_t ttl =
        ttl_ms ? std::clamp(*ttl_ms, std::min(kMinTaskTtlMs, retention), retention) : retention;
    std::string refusal;
    auto job = submit(op, arguments_json, caller, trace, ttl, refusal);
    const Result<std::string> outcome =
        job ? Result<std::string>(std::string()) : Result<std::string>(job.error());
    audit(caller, op->config.name, "start", outcome, job ? std::string_view(job->id) : "",
          job ? "queued" : "");
    if (!job) {
        return job.error();
    }
    return taskOf(*job);
}

Result<mcp::TaskInfo> JobRegistry::get(std::string_view task_id, const mcp::Caller& caller) {
    auto job = findJob(task_id, nullptr, caller);
    audit(caller, job ? job->operation_id : "", "status",
          job ? Result<std::string>(std::string()) : Result<std::string>(job.error()), task_id,
          job ? store::jobStatusName(job->status) : "");
    if (!job) {
        return job.error();
    }
    return taskOf(*job);
}

Result<mcp::TaskPage> JobRegistry::list(const mcp::Caller& caller, std::string_view cursor) {
    // The cursor is the offset of the page in the caller's jobs, newest first, as "o<hex>".
    std::size_t offset = 0;
    if (!cursor.empty()) {
        const auto [end, ec] =
            cursor.size() > 1 && cursor[0] == 'o'
                ? std::from_chars(cursor.data() + 1, cursor.data() + cursor.size(), offset, 16)
                : std::from_chars_result{cursor.data(), std::errc::invalid_argument};
        if (ec != std::errc() || end != cursor.data() + cursor.size()) {
            return Error{ErrorCode::invalid_argument, "tasks/list: invalid cursor"};
        }
    }
    if (!store_ || offset >= static_cast<std::size_t>(store::kMaxListLimit)) {
        return mcp::TaskPage{};
    }
    store::JobFilter f;
    f.workspace_id = caller.workspace;
    f.agent_id = caller.agent;
    f.limit =
        static_cast<int>(std::min<std::size_t>(offset + kTaskPageSize + 1, store::kMaxListLimit));
    auto rows = store_->listJobs(f);
    if (!rows) {
        return Error{ErrorCode::unavailable, "cannot list the jobs: " + rows.error().message};
    }
    mcp::TaskPage page;
    for (std::size_t i = offset; i < rows->size() && page.tasks.size() < kTaskPageSize; ++i) {
        page.tasks.push_back(taskOf((*rows)[i]));
    }
    if (rows->size() > offset + kTaskPageSize) {
        page.next_cursor = fmt::format("o{:x}", offset + kTaskPageSize);
    }
    return page;
}

Result<mcp::TaskInfo> JobRegistry::cancel(std::string_view task_id, const mcp::Caller& caller) {
    auto job = findJob(task_id, nullptr, caller);
    if (!job) {
        return job.error();
    }
    if (store::isTerminal(job->status)) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("cannot cancel task in terminal status: {}",
                                 mcp::toString(taskStatusOf(job->status)))};
    }
    auto after = cancelRecord(*job);
    audit(caller, job->operation_id, "cancel",
          after ? Result<std::string>(std::string()) : Result<std::string>(after.error()), task_id,
          after ? store::jobStatusName(after->status) : "");
    if (!after) {
        return Error{ErrorCode::unavailable, "cannot cancel the task: " + after.error().message};
    }
    return taskOf(*after);
}

Result<JobRecord> JobRegistry::cancelById(std::string_view id) {
    if (!store_) {
        return Error{ErrorCode::not_found, "no job store"};
    }
    auto job = store_->getJob(id);
    if (!job) {
        return job.error();
    }
    if (store::isTerminal(job->status)) {
        return Error{ErrorCode::conflict, fmt::format("the job has ended already ({})",
                                                      store::jobStatusName(job->status))};
    }
    auto after = cancelRecord(*job);
    const mcp::Caller admin{job->workspace_id, "admin"};
    audit(admin, job->operation_id, "cancel",
          after ? Result<std::string>(std::string()) : Result<std::string>(after.error()), id,
          after ? store::jobStatusName(after->status) : "");
    return after;
}

Result<std::optional<mcp::ToolResult>> JobRegistry::result(std::string_view task_id,
                                                           const mcp::Caller& caller) {
    auto job = findJob(task_id, nullptr, caller);
    if (!job) {
        return job.error();
    }
    if (!store::isTerminal(job->status)) {
        return std::optional<mcp::ToolResult>();
    }
    audit(caller, job->operation_id, "result", Result<std::string>(std::string()), task_id,
          store::jobStatusName(job->status));
    if (job->result_json) {
        if (auto stored = parseCallToolResult(*job->result_json)) {
            return std::optional<mcp::ToolResult>(std::move(*stored));
        }
    }
    const std::string why = errorMessage(job->error_json);
    return std::optional<mcp::ToolResult>(textToolResult(
        fmt::format("the job {}: {}", store::jobStatusName(job->status), why), true));
}

void JobRegistry::watch(std::string_view task_id) {
    constexpr std::size_t kMaxWatched = 10'000;
    const std::lock_guard lock(mutex_);
    if (watched_.size() < kMaxWatched) {
        watched_.emplace(task_id);
    }
}

void JobRegistry::checkWatched() {
    std::vector<std::string> ids;
    {
        const std::lock_guard lock(mutex_);
        for (const std::string& id : watched_) {
            if (live_.count(id) == 0) {  // this node's own jobs notify as they end
                ids.push_back(id);
            }
        }
    }
    for (const std::string& id : ids) {
        auto job = store_->getJob(id);
        const bool over = !job || store::isTerminal(job->status);
        if (job && store::isTerminal(job->status)) {
            notify(*job);
        }
        if (over) {
            const std::lock_guard lock(mutex_);
            watched_.erase(id);
        }
    }
}

void JobRegistry::subscribe(Listener listener) {
    const std::lock_guard lock(mutex_);
    listeners_.push_back(std::move(listener));
}

void JobRegistry::notify(const JobRecord& job) {
    std::vector<Listener> listeners;
    {
        const std::lock_guard lock(mutex_);
        if (store::isTerminal(job.status)) {
            watched_.erase(job.id);  // told now: the watch tick must not tell it again
        }
        listeners = listeners_;
    }
    if (listeners.empty()) {
        return;
    }
    const mcp::TaskInfo info = taskOf(job);
    for (const Listener& l : listeners) {
        try {
            l(info);
        } catch (...) {
            // A listener's failure must not stop the job's bookkeeping.
        }
    }
}

void JobRegistry::audit(const mcp::Caller& caller, std::string_view operation,
                        std::string_view verb, const Result<std::string>& outcome,
                        std::string_view job_id, std::string_view status) const {
    if (!store_) {
        return;
    }
    store::AuditEvent event;
    event.workspace_id = caller.workspace;
    event.agent_id = caller.agent.empty() ? "anonymous" : caller.agent;
    event.operation_id = std::string(operation);
    event.action = "job." + std::string(verb);
    std::string detail = R"({"job_id":)" + jsonString(job_id.substr(0, 128));
    if (outcome) {
        event.outcome = "ok";
        detail += R"(,"status":)" + jsonString(status);
    } else {
        event.outcome = outcome.error().code == ErrorCode::not_found ? "not_found" : "error";
        // The message may quote the input (never a secret of a profile: those are scrubbed from
        // everything a plugin says, and the input is the caller's own).
        detail += R"(,"error":)" + jsonString(outcome.error().message.substr(0, 512));
    }
    event.detail_json = detail + "}";
    if (auto r = options_.audit->append(std::move(event)); !r) {
        log::warn("jobs: the audit log refused job.{}: {}", verb, r.error().message);
    }
}

// ----- workers --------------------------------------------------------------------------------

void JobRegistry::enqueue(std::shared_ptr<Live> live) {
    {
        const std::lock_guard lock(mutex_);
        live_[live->id] = live;
        queue_.push_back(std::move(live));
    }
    queue_ready_.notify_one();
}

void JobRegistry::work() {
    while (true) {
        std::shared_ptr<Live> live;
        {
            std::unique_lock lock(mutex_);
            queue_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (stopping_) {
                return;
            }
            live = std::move(queue_.front());
            queue_.pop_front();
        }
        try {
            runOne(live);
        } catch (const std::exception& e) {
            log::error("jobs: job {} failed in the runtime: {}", live->id, e.what());
        }
        const std::lock_guard lock(mutex_);
        live_.erase(live->id);
    }
}

void JobRegistry::runOne(const std::shared_ptr<Live>& live) {
    const std::int64_t started = nowUnixMs();
    if (!live->resume) {
        store::JobTransition t;
        t.to = JobStatus::running;
        t.owner_node = options_.node_id;
        t.heartbeat_at = started;
        auto r = store_->transitionJob(live->id, JobStatus::queued, t);
        if (!r || !r->applied()) {
            return;  // cancelled while queued (or the store is gone): nothing to run
        }
        if (auto job = store_->getJob(live->id)) {
            notify(*job);
        }
    }
    std::shared_ptr<store::Store> store = store_;
    const std::string id = live->id;
    Live* raw = live.get();
    live->request.on_cursor = [store, id, raw](std::string_view cursor) {
        raw->cursor_set.store(true);
        if (auto r = store->setJobCursor(id, cursor); !r) {
            log::warn("jobs: cannot record the cursor of job {}: {}", id, r.error().message);
        }
    };
    if (live->resume) {
        live->cursor_set.store(true);
    }
    log::info("jobs: job {} of \"{}\" {}", id, live->op->config.name,
              live->resume ? "resumed from its cursor" : "started");
    JobCall call(*this, live);
    const mcp::ToolResult result = run_(*live->op, live->request, call);

    const std::int64_t now = nowUnixMs();
    if (live->cancelled.load()) {
        log::info("jobs: job {} cancelled", id);
        return;  // cancelRecord() wrote the terminal state before the cancel reached the run
    }
    if (stop_flag_.load() && result.is_error) {
        // crankd is stopping: a job the plugin can follow again stays running for the next
        // start; the others are interrupted now.
        if (live->cursor_set.load()) {
            log::info("jobs: job {} left running for the next start (it has a cursor)", id);
            return;
        }
        store::JobTransition t;
        t.to = JobStatus::interrupted;
        t.finished_at = now;
        t.expires_at = now + live->ttl_ms;
        t.error_json = R"({"message":"crankd stopped while the job was running"})";
        if (auto r = store_->transitionJob(id, JobStatus::running, t); !r) {
            log::error("jobs: cannot mark job {} interrupted: {}", id, r.error().message);
        }
        return;
    }
    {
        // The last progress that was not written yet goes with the final state.
        const std::lock_guard lock(live->mutex);
        live->pending_progress.reset();
    }
    store::JobTransition t;
    t.to = result.is_error ? JobStatus::failed : JobStatus::succeeded;
    t.result_json = result.toJson();  // stored as the CallToolResult
    if (result.is_error) {
        t.error_json = R"({"message":)" + jsonString(firstText(result.content_json)) + "}";
    }
    t.finished_at = now;
    t.expires_at = now + live->ttl_ms;
    auto r = store_->transitionJob(id, JobStatus::running, t);
    if (!r) {
        log::error("jobs: cannot record the end of job {}: {}; retrying at each heartbeat", id,
                   r.error().message);
        const std::lock_guard lock(mutex_);
        unrecorded_.insert_or_assign(id, std::move(t));
        return;
    }
    if (!r->applied()) {
        return;  // cancelled (by another node) while it ran: the cancel stands
    }
    log::info("jobs: job {} {} in {} ms", id, store::jobStatusName(t.to), now - started);
    if (auto job = store_->getJob(id)) {
        notify(*job);
    }
}

// ----- recovery -------------------------------------------------------------------------------

void JobRegistry::recover(const std::vector<JobRecord>& rows, bool own) {
    for (const JobRecord& row : rows) {
        const std::int64_t now = nowUnixMs();
        const std::optional<std::string_view> expected =
            row.owner_node ? std::optional<std::string_view>(*row.owner_node) : std::nullopt;
        auto claimed = store_->claimJob(row.id, expected, options_.node_id, now);
        if (!claimed || !*claimed) {
            continue;  // another node took it, or it ended meanwhile
        }
        OperationPtr op;
        {
            const std::lock_guard lock(mutex_);
            for (const auto& [tool, candidate] : by_tool_) {
                if (candidate->config.name == row.operation_id &&
                    candidate->config.workspace == row.workspace_id) {
                    op = candidate;
                }
            }
        }
        const auto interrupt = [&](const std::string& why) {
            store::JobTransition t;
            t.to = row.status == JobStatus::queued ? JobStatus::failed : JobStatus::interrupted;
            t.finished_at = now;
            t.expires_at =
                now + std::max<std::int64_t>(row.expires_at - row.created_at, kMinTaskTtlMs);
            t.error_json = R"({"message":)" + jsonString(why) + "}";
            if (auto r = store_->transitionJob(row.id, row.status, t); !r) {
                log::error("jobs: cannot end job {}: {}", row.id, r.error().message);
            }
            log::warn("jobs: job {} of \"{}\" {}: {}", row.id, row.operation_id,
                      store::jobStatusName(t.to), why);
            if (auto job = store_->getJob(row.id)) {
                notify(*job);
            }
        };
        if (!op) {
            interrupt("its operation \"" + row.operation_id + "\" no longer exists");
            continue;
        }
        if (row.status == JobStatus::running && !row.cursor) {
            interrupt(own ? "crankd restarted while the job was running, and its upstream action "
                            "cannot be followed again (the plugin gave no cursor)"
                          : "the node " + row.owner_node.value_or("?") +
                                " that ran the job stopped, and its upstream action cannot be "
                                "followed again (the plugin gave no cursor)");
            continue;
        }
        auto live = std::make_shared<Live>();
        if (auto refused = prepare_(*op, row.input_json, live->request)) {
            interrupt("its input is no longer valid: " + firstText(refused->content_json));
            continue;
        }
        live->id = row.id;
        live->op = op;
        live->caller = ownerOf(row);
        live->request.traceparent = row.traceparent;  // the starting request's, kept with it
        live->request.tracestate = row.tracestate;
        live->ttl_ms = std::max<std::int64_t>(row.expires_at - row.created_at, kMinTaskTtlMs);
        if (row.status == JobStatus::running) {
            live->request.cursor = *row.cursor;
            live->resume = true;
        }
        log::info("jobs: job {} of \"{}\" taken over ({})", row.id, row.operation_id,
                  live->resume ? "resumed from its cursor" : "queued again");
        enqueue(std::move(live));
    }
}

void JobRegistry::recoverOwn() {
    // Rows of this node that it does not hold in memory: its previous incarnation's. Claiming
    // renews their heartbeat past `before`, so each page brings new rows. `before` takes in the
    // current millisecond, which the previous incarnation's last heartbeat (or a job it created
    // just before it stopped) may share: left out, such a row was never run, since this node's
    // heartbeats then kept it from ever looking stale. Waiting for the next millisecond keeps the
    // claims below past `before`.
    const std::int64_t before = nowUnixMs() + 1;
    for (int i = 0; i < 100 && nowUnixMs() < before; ++i) {  // about 1 ms
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    for (int page = 0; page < kMaxRecoveryPages; ++page) {
        store::JobFilter f;
        f.owner_node = options_.node_id;
        f.statuses = liveStatuses();
        f.heartbeat_before = before;
        f.order = store::SortOrder::oldest_first;
        f.limit = store::kMaxListLimit;
        auto rows = store_->listJobs(f);
        if (!rows || rows->empty()) {
            if (!rows) {
                log::error("jobs: cannot list this node's jobs: {}", rows.error().message);
            }
            return;
        }
        recover(*rows, true);
        if (rows->size() < static_cast<std::size_t>(store::kMaxListLimit)) {
            return;
        }
    }
}

void JobRegistry::claimStale() {
    for (int page = 0; page < kMaxRecoveryPages; ++page) {
        store::JobFilter f;
        f.statuses = liveStatuses();
        f.heartbeat_before = nowUnixMs() - options_.lease_ms;
        f.order = store::SortOrder::oldest_first;
        f.limit = store::kMaxListLimit;
        auto rows = store_->listJobs(f);
        if (!rows || rows->empty()) {
            return;
        }
        std::vector<JobRecord> others;
        {
            const std::lock_guard lock(mutex_);
            for (JobRecord& row : *rows) {
                if (live_.count(row.id) == 0) {
                    others.push_back(std::move(row));
                }
            }
        }
        if (others.empty()) {
            return;
        }
        recover(others, false);
        if (rows->size() < static_cast<std::size_t>(store::kMaxListLimit)) {
            return;
        }
    }
}

// ----- housekeeping ---------------------------------------------------------------------------

void JobRegistry::flushProgress() {
    std::vector<std::shared_ptr<Live>> live;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [id, entry] : live_) {
            live.push_back(entry);
        }
    }
    for (const std::shared_ptr<Live>& entry : live) {
        std::optional<std::string> progress;
        {
            const std::lock_guard lock(entry->mutex);
            progress.swap(entry->pending_progress);
            if (progress) {
                entry->last_progress_write = Clock::now();
            }
        }
        if (progress) {
            if (auto r = store_->updateJobProgress(entry->id, *progress); !r) {
                log::warn("jobs: cannot record the progress of job {}: {}", entry->id,
                          r.error().message);
            }
            if (auto job = store_->getJob(entry->id)) {
                notify(*job);
            }
        } else if (!entry->cancelled.load()) {
            // A cancel recorded by another node reaches the run here.
            if (auto job = store_->getJob(entry->id); job && job->status == JobStatus::cancelled) {
                entry->cancelled.store(true);
            }
        }
    }
}

void JobRegistry::recordUnrecorded() {
    std::map<std::string, store::JobTransition, std::less<>> pending;
    {
        const std::lock_guard lock(mutex_);
        pending.swap(unrecorded_);
    }
    for (auto it = pending.begin(); it != pending.end();) {
        auto r = store_->transitionJob(it->first, JobStatus::running, it->second);
        if (!r) {
            ++it;  // still refused: the next heartbeat tries again
            continue;
        }
        if (r->applied()) {
            log::info("jobs: job {} {} (recorded late)", it->first,
                      store::jobStatusName(it->second.to));
            if (auto job = store_->getJob(it->first)) {
                notify(*job);
            }
        }
        it = pending.erase(it);  // recorded, or the row moved on (a cancel stands)
    }
    if (!pending.empty()) {
        const std::lock_guard lock(mutex_);
        unrecorded_.merge(pending);
    }
}

void JobRegistry::tick() {
    Clock::time_point nextHeartbeat = Clock::now();
    Clock::time_point nextClean = Clock::now() + milliseconds(options_.clean_interval_ms);
    const milliseconds step(
        std::min<std::int64_t>(options_.progress_write_ms, options_.heartbeat_interval_ms));
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        tick_wake_.wait_for(lock, step, [&] { return stopping_; });
        if (stopping_) {
            return;
        }
        lock.unlock();
        try {
            flushProgress();
            checkWatched();
            const Clock::time_point now = Clock::now();
            if (now >= nextHeartbeat) {
                nextHeartbeat = now + milliseconds(options_.heartbeat_interval_ms);
                if (auto r = store_->heartbeatJobs(options_.node_id, nowUnixMs()); !r) {
                    log::warn("jobs: heartbeat failed: {}", r.error().message);
                }
                recordUnrecorded();
            }
            if (now >= nextClean) {
                nextClean = now + milliseconds(options_.clean_interval_ms);
                if (auto r = store_->deleteExpiredJobs(nowUnixMs(), store::kMaxCleanupBatch);
                    r && *r > 0) {
                    log::info("jobs: {} expired jobs deleted", *r);
                }
                claimStale();
            }
        } catch (const std::exception& e) {
            log::error("jobs: housekeeping failed: {}", e.what());
        }
        lock.lock();
    }
}

std::size_t JobRegistry::shutdown(milliseconds /*grace*/) {
    {
        const std::lock_guard lock(mutex_);
        if (stopping_) {
            return 0;
        }
        stopping_ = true;
    }
    stop();
    queue_ready_.notify_all();
    tick_wake_.notify_all();
    // Running jobs see cancelled() and return within their plugin's cancel latency (the unary
    // deadline bounds a plugin that ignores it).
    for (std::thread& t : workers_) {
        if (t.joinable()) {
            t.join();
        }
    }
    if (ticker_.joinable()) {
        ticker_.join();
    }
    // Ends the store refused (disk full) get a last try; those still refused are taken for
    // interrupted jobs at the next start, as after a crash.
    recordUnrecorded();
    // Queued jobs stay queued in the store: the next start runs them.
    return 0;
}

// ----- schemas --------------------------------------------------------------------------------

std::string JobRegistry::jobIdInputSchema() {
    return R"({"type":"object","properties":{"job_id":{"type":"string",)"
           R"("description":"The id the _start tool returned."}},)"
           R"("required":["job_id"],"additionalProperties":false})";
}

std::string JobRegistry::startOutputSchema(std::string_view operation_output_schema) {
    // Called plainly, _start answers the job handle; called as an MCP task, the task's result is
    // the operation's own output (tasks/result returns what the request would have returned).
    const std::string handle =
        R"({"type":"object","properties":{"job_id":{"type":"string"},)"
        R"("status":{"type":"string"},"created_at":{"type":"string"},)"
        R"("expires_at":{"type":"string"},"poll_interval_ms":{"type":"integer"},)"
        R"("status_tool":{"type":"string"},"result_tool":{"type":"string"},)"
        R"("cancel_tool":{"type":"string"}},"required":["job_id","status"]})";
    return R"({"type":"object","anyOf":[)" + handle + "," +
           (operation_output_schema.empty() ? std::string(R"({"type":"object"})")
                                            : std::string(operation_output_schema)) +
           "]}";
}

std::string JobRegistry::statusOutputSchema() {
    return R"({"type":"object","properties":{"job_id":{"type":"string"},)"
           R"("status":{"type":"string","enum":["queued","running","succeeded","failed",)"
           R"("cancelled","interrupted"]},"progress":{"type":["object","null"]},)"
           R"("created_at":{"type":"string"},"updated_at":{"type":"string"},)"
           R"("finished_at":{"type":["string","null"]},"expires_at":{"type":"string"},)"
           R"("error":{"type":["string","null"]},"result_ready":{"type":"boolean"},)"
           R"("poll_interval_ms":{"type":"integer"}},"required":["job_id","status"]})";
}

std::string JobRegistry::resultOutputSchema() {
    return R"({"type":"object","properties":{"job_id":{"type":"string"},)"
           R"("status":{"type":"string"},"ready":{"type":"boolean"},"result":{},)"
           R"("error":{"type":"string"},"message":{"type":"string"},)"
           R"("finished_at":{"type":["string","null"]}},"required":["job_id","status","ready"]})";
}

std::string JobRegistry::cancelOutputSchema() {
    return R"({"type":"object","properties":{"job_id":{"type":"string"},)"
           R"("status":{"type":"string"},"cancelled":{"type":"boolean"},)"
           R"("message":{"type":"string"}},"required":["job_id","status","cancelled"]})";
}

}  // namespace crank::runtime
