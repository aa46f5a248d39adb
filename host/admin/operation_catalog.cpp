#include "admin/operation_catalog.h"

#include <algorithm>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "config/config_loader.h"
#include "json/json_parse.h"
#include "log/log.h"
#include "mcp/tool_registry.h"
#include "plugins/plugin_registry.h"
#include "runtime/operation_compiler.h"
#include "runtime/operation_runner.h"

namespace crank::admin {

using config::ConfigError;
using runtime::OperationPtr;

ApiError storeError(const Error& error) {
    ApiError e;
    e.message = error.message;
    switch (error.code) {
        case ErrorCode::not_found:
            e.status = 404;
            e.code = "not_found";
            break;
        case ErrorCode::conflict:
            e.status = 409;
            e.code = "conflict";
            break;
        case ErrorCode::invalid_argument:
            e.status = 422;
            e.code = "invalid";
            break;
        case ErrorCode::unavailable:
        case ErrorCode::io:
            e.status = 503;
            e.code = "unavailable";
            break;
        case ErrorCode::internal:
            break;
    }
    return e;
}

OperationCatalog::OperationCatalog(Deps deps) : deps_(std::move(deps)) {}

OperationCatalog::~OperationCatalog() {
    stop();
}

void OperationCatalog::start(std::chrono::milliseconds interval) {
    sync();
    thread_ = std::thread([this, interval] { loop(interval); });
}

void OperationCatalog::stop() {
    {
        const std::lock_guard lock(loop_mutex_);
        stopping_ = true;
    }
    loop_wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void OperationCatalog::loop(std::chrono::milliseconds interval) {
    std::unique_lock lock(loop_mutex_);
    while (!loop_wake_.wait_for(lock, interval, [this] { return stopping_; })) {
        lock.unlock();
        sync();
        lock.lock();
    }
}

void OperationCatalog::sync() {
    const std::lock_guard lock(publish_mutex_);
    syncLocked();
}

void OperationCatalog::syncLocked() {
    // What the store says is published (live operations only), and then what this node serves
    // that is no longer in that list (deleted, or published elsewhere... since).
    store::OperationFilter filter;
    filter.published_only = true;
    filter.limit = store::kMaxListLimit;
    auto rows = deps_.store->listOperations(filter);
    if (!rows) {
        log::warn("admin: cannot read the operations from the store: {}", rows.error().message);
        return;
    }
    if (rows->size() >= static_cast<std::size_t>(store::kMaxListLimit)) {
        log::warn(
            "admin: {} or more published operations: only the first {} (by workspace and "
            "name) are served",
            store::kMaxListLimit, store::kMaxListLimit);
    }
    std::vector<std::string> gone;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& served : served_) {
            const std::string& servedId = served.first;
            const bool listed =
                std::any_of(rows->begin(), rows->end(),
                            [&](const store::OperationRecord& r) { return r.id == servedId; });
            if (!listed) {
                gone.push_back(servedId);
            }
        }
    }
    for (const std::string& id : gone) {
        auto row = deps_.store->getOperation(id);
        if (!row && row.error().code != ErrorCode::not_found) {
            continue;  // cannot tell now: the next sync looks again
        }
        if (!row || row->deleted() || !row->published_version) {
            withdraw(id);
        }
    }
    for (const store::OperationRecord& row : *rows) {
        std::optional<std::int64_t> servedVersion;
        {
            const std::lock_guard lock(mutex_);
            if (const auto it = served_.find(row.id); it != served_.end()) {
                servedVersion = it->second.version;
            }
        }
        if (row.deleted() || !row.published_version) {
            if (servedVersion) {
                withdraw(row.id);
            }
            continue;
        }
        if (servedVersion == row.published_version) {
            continue;
        }
        {
            const std::lock_guard lock(mutex_);
            if (const auto it = errors_.find(row.id);
                it != errors_.end() &&
                it->second.rfind(fmt::format("version {}:", *row.published_version), 0) == 0) {
                continue;  // already tried and refused; the message stays until it changes
            }
        }
        auto version = deps_.store->getOperationVersion(row.id, *row.published_version);
        std::string problem;
        if (!version) {
            // Perhaps a passing lock: what is served stays, and the next sync tries again.
            log::warn("admin: cannot read version {} of operation \"{}\": {}",
                      *row.published_version, row.name, version.error().message);
            continue;
        }
        {
            Checked checked = checkText(version->config_json, row.id);
            if (checked.operation) {
                serve(row.id, checked.operation, version->version);
                log::info("admin: serving version {} of operation \"{}\" ({})", version->version,
                          row.name, row.workspace_id);
                continue;
            }
            for (const ConfigError& e : checked.errors) {
                problem += (problem.empty() ? "" : "; ") + e.toString();
            }
        }
        if (servedVersion) {
            withdraw(row.id);
        }
        log::warn("admin: version {} of operation \"{}\" ({}) is published but not served: {}",
                  *row.published_version, row.name, row.workspace_id, problem);
        const std::lock_guard lock(mutex_);
        errors_[row.id] = fmt::format("version {}: {}", *row.published_version, problem);
    }
}

OperationCatalog::Checked OperationCatalog::checkText(std::string_view config_json,
                                                      std::string_view self_id,
                                                      NameCheck names) const {
    json::Document doc;
    if (auto parsed = json::parseJson(config_json, doc, "config"); !parsed) {
        Checked out;
        out.errors.push_back({"", parsed.error().message});
        return out;
    }
    return check(doc, self_id, names);
}

OperationCatalog::Checked OperationCatalog::check(const rapidjson::Value& operation,
                                                  std::string_view self_id, NameCheck names) const {
    Checked out;
    config::OperationLoadResult loaded = config::loadOperation(operation, *deps_.config);
    if (!loaded.operation) {
        out.errors = std::move(loaded.errors);
        return out;
    }
    const std::shared_ptr<const config::Config> against = compileConfig();
    runtime::CompiledOperation compiled =
        runtime::compileOperation(*loaded.operation, *against, *deps_.plugins);
    std::vector<ConfigError> taken = names == NameCheck::unique
                                         ? conflicts(*loaded.operation, self_id)
                                         : std::vector<ConfigError>();
    if (!taken.empty() && compiled.errors.empty()) {
        out.conflict = true;
    }
    out.errors = std::move(compiled.errors);
    out.errors.insert(out.errors.end(), taken.begin(), taken.end());
    if (out.errors.empty()) {
        out.operation = std::move(compiled.operation);
    }
    return out;
}

std::vector<ConfigError> OperationCatalog::conflicts(const config::OperationConfig& op,
                                                     std::string_view self_id) const {
    std::vector<ConfigError> out;
    const std::vector<OperationPtr> fileOperations = configOperations();
    for (const OperationPtr& c : fileOperations) {
        if (c->config.workspace == op.workspace && c->config.name == op.name) {
            out.push_back({"name", fmt::format("the config file defines an operation \"{}\" in "
                                               "workspace \"{}\" already",
                                               op.name, op.workspace)});
            return out;
        }
    }
    store::OperationFilter filter;
    filter.workspace_id = op.workspace;
    filter.name = op.name;
    if (auto same = deps_.store->listOperations(filter)) {
        for (const store::OperationRecord& r : *same) {
            if (r.id != self_id) {
                out.push_back({"name", fmt::format("operation \"{}\" exists already in workspace "
                                                   "\"{}\" (id {})",
                                                   op.name, op.workspace, r.id)});
                return out;
            }
        }
    }
    const auto registry = deps_.tools.find(op.workspace);
    if (registry == deps_.tools.end()) {
        return out;
    }
    std::vector<std::string> own;
    std::map<std::string, std::string> servedBy;  // tool -> operation name, other admin ops
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [id, entry] : served_) {
            for (const std::string& tool : entry.tools) {
                if (id == self_id) {
                    own.push_back(tool);
                } else if (entry.operation->config.workspace == op.workspace) {
                    servedBy[tool] = entry.operation->config.name;
                }
            }
        }
    }
    for (const std::string& tool : op.toolNames()) {
        if (std::find(own.begin(), own.end(), tool) != own.end() || !registry->second->find(tool)) {
            continue;
        }
        std::string owner = "an upstream server (upstreams)";
        for (const OperationPtr& c : fileOperations) {
            const auto names = c->config.toolNames();
            if (c->config.workspace == op.workspace &&
                std::find(names.begin(), names.end(), tool) != names.end()) {
                owner = "the config file's operation \"" + c->config.name + "\"";
            }
        }
        if (const auto it = servedBy.find(tool); it != servedBy.end()) {
            owner = "operation \"" + it->second + "\"";
        }
        out.push_back({"name", fmt::format("the tool \"{}\" is published in workspace \"{}\" by "
                                           "{} already",
                                           tool, op.workspace, owner)});
    }
    return out;
}

std::vector<ConfigError> OperationCatalog::publishedConflicts(const config::OperationConfig& op,
                                                              std::string_view self_id) const {
    std::vector<ConfigError> out;
    store::OperationFilter filter;
    filter.workspace_id = op.workspace;
    filter.published_only = true;
    filter.limit = store::kMaxListLimit;
    auto rows = deps_.store->listOperations(filter);
    if (!rows) {
        return out;  // the registry check (conflicts()) still ran
    }
    const std::vector<std::string> mine = op.toolNames();
    for (const store::OperationRecord& row : *rows) {
        if (row.id == self_id) {
            continue;
        }
        std::vector<std::string> theirs;
        if (auto s = served(row.id); s && s->version == row.published_version) {
            theirs = s->tools;
        } else if (auto v = deps_.store->getOperationVersion(row.id, *row.published_version)) {
            json::Document doc;
            if (json::parseJson(v->config_json, doc, "").ok()) {
                if (auto loaded = config::loadOperation(doc, *deps_.config); loaded.operation) {
                    theirs = loaded.operation->toolNames();
                }
            }
        }
        for (const std::string& tool : mine) {
            if (std::find(theirs.begin(), theirs.end(), tool) != theirs.end()) {
                out.push_back({"name", fmt::format("the tool \"{}\" is published in workspace "
                                                   "\"{}\" by operation \"{}\" already",
                                                   tool, op.workspace, row.name)});
            }
        }
    }
    return out;
}

std::optional<ApiError> OperationCatalog::publish(
    std::string_view id, std::int64_t version,
    std::optional<std::optional<std::int64_t>> expected_published,
    std::vector<std::string>& tools) {
    const std::lock_guard lock(publish_mutex_);
    auto record = deps_.store->getOperation(id);
    if (!record) {
        return storeError(record.error());
    }
    if (record->deleted()) {
        return ApiError{404, "not_found", "operation " + std::string(id) + " is deleted",
                        {},  {},          {}};
    }
    auto stored = deps_.store->getOperationVersion(id, version);
    if (!stored) {
        return storeError(stored.error());
    }
    Checked checked = checkText(stored->config_json, id);
    if (!checked.operation) {
        ApiError e{422,
                   "invalid",
                   fmt::format("version {} cannot be published: fix the fields below and save a "
                               "new version",
                               version),
                   std::move(checked.errors),
                   {},
                   {}};
        return e;
    }
    if (std::vector<ConfigError> taken = publishedConflicts(checked.operation->config, id);
        !taken.empty()) {
        return ApiError{
            422,
            "invalid",
            fmt::format("version {} cannot be published: {}", version, taken.front().message),
            std::move(taken),
            {},
            {}};
    }
    const std::optional<std::int64_t> expected =
        expected_published ? *expected_published : record->published_version;
    auto published = deps_.store->publishOperationVersion(id, version, expected);
    if (!published) {
        return storeError(published.error());
    }
    if (published->outcome == store::PublishOutcome::version_mismatch) {
        ApiError e;
        e.status = 409;
        e.code = "conflict";
        e.message = published->published_version
                        ? fmt::format("version {} was published since; reload and decide again",
                                      *published->published_version)
                        : std::string(
                              "the published version was withdrawn since; reload and "
                              "decide again");
        e.published_version = published->published_version;
        return e;
    }
    if (published->outcome == store::PublishOutcome::not_found) {
        return ApiError{
            404, "not_found", fmt::format("operation {} has no version {}", id, version),
            {},  {},          {}};
    }
    serve(std::string(id), checked.operation, version);
    tools = checked.operation->config.toolNames();
    return std::nullopt;
}

std::optional<ApiError> OperationCatalog::remove(std::string_view id) {
    const std::lock_guard lock(publish_mutex_);
    if (auto deleted = deps_.store->deleteOperation(id); !deleted) {
        return storeError(deleted.error());
    }
    withdraw(std::string(id));
    return std::nullopt;
}

void OperationCatalog::serve(const std::string& id, const OperationPtr& op, std::int64_t version) {
    std::vector<std::string> previous;
    OperationPtr previousOp;
    {
        const std::lock_guard lock(mutex_);
        if (const auto it = served_.find(id); it != served_.end()) {
            previous = it->second.tools;
            previousOp = it->second.operation;
        }
    }
    mcp::FunctionToolRegistry* registry = deps_.tools.at(op->config.workspace);
    runtime::OperationTools tools = runtime::operationTools(op, *deps_.runner);
    // One change of the tool set: clients get one list_changed.
    registry->replace(previous, std::move(tools));
    // Sessions of a session operation that is no longer one: their _poll and _stop are gone.
    if (previousOp && previousOp->config.execution.mode == config::ExecutionMode::session &&
        op->config.execution.mode != config::ExecutionMode::session) {
        if (const std::size_t n = deps_.runner->stopSessionsOf(*previousOp); n > 0) {
            log::info("admin: stopped {} session(s) of \"{}\", no longer a session operation", n,
                      previousOp->config.name);
        }
    }
    // addJobOperation() replaces the entry of the same tool at once; removing first would
    // leave a moment in which tasks of that tool are refused.
    if (op->config.execution.mode == config::ExecutionMode::async_job) {
        deps_.runner->addJobOperation(op);
    } else if (previousOp &&
               previousOp->config.execution.mode == config::ExecutionMode::async_job) {
        deps_.runner->removeJobOperation(previousOp);
    }
    const std::lock_guard lock(mutex_);
    served_[id] = Entry{op, version, op->config.toolNames()};
    errors_.erase(id);
}

void OperationCatalog::withdraw(const std::string& id) {
    Entry entry;
    {
        const std::lock_guard lock(mutex_);
        errors_.erase(id);
        const auto it = served_.find(id);
        if (it == served_.end()) {
            return;
        }
        entry = std::move(it->second);
        served_.erase(it);
    }
    deps_.tools.at(entry.operation->config.workspace)->replace(entry.tools, {});
    if (entry.operation->config.execution.mode == config::ExecutionMode::session) {
        if (const std::size_t n = deps_.runner->stopSessionsOf(*entry.operation); n > 0) {
            log::info("admin: stopped {} session(s) of withdrawn operation \"{}\"", n,
                      entry.operation->config.name);
        }
    }
    if (entry.operation->config.execution.mode == config::ExecutionMode::async_job) {
        deps_.runner->removeJobOperation(entry.operation);
    }
}

std::optional<OperationCatalog::Served> OperationCatalog::served(std::string_view id) const {
    const std::lock_guard lock(mutex_);
    const auto it = served_.find(id);
    if (it == served_.end()) {
        return std::nullopt;
    }
    return Served{it->second.version, it->second.tools};
}

std::string OperationCatalog::serveError(std::string_view id) const {
    const std::lock_guard lock(mutex_);
    const auto it = errors_.find(id);
    return it == errors_.end() ? std::string() : it->second;
}

}  // namespace crank::admin
