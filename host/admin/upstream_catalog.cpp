#include "admin/upstream_catalog.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "config/config_loader.h"
#include "config/tool_policy.h"
#include "json/json_parse.h"
#include "log/log.h"

namespace crank::admin {

UpstreamCatalog::UpstreamCatalog(const config::Config& config, std::shared_ptr<store::Store> store,
                                 UpstreamDirectory& directory)
    : config_(config), store_(std::move(store)), directory_(directory) {}

UpstreamCatalog::~UpstreamCatalog() {
    stop();
}

void UpstreamCatalog::start(std::chrono::milliseconds interval) {
    interval_ = interval;
    thread_ = std::thread([this, interval] {
        sync();
        loop(interval);
    });
}

void UpstreamCatalog::requestStop() {
    halt_ = true;
    {
        const std::lock_guard lock(loop_mutex_);
        stopping_ = true;
    }
    loop_wake_.notify_all();
}

void UpstreamCatalog::stop() {
    requestStop();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void UpstreamCatalog::loop(std::chrono::milliseconds interval) {
    std::unique_lock lock(loop_mutex_);
    while (!loop_wake_.wait_for(lock, interval, [this] { return stopping_; })) {
        lock.unlock();
        sync();
        lock.lock();
    }
}

UpstreamCatalog::Checked UpstreamCatalog::check(const rapidjson::Value& upstream,
                                                std::string_view self_id) const {
    Checked out;
    config::UpstreamLoadResult loaded = config::loadUpstream(upstream, config_);
    if (!loaded.upstream) {
        out.errors = std::move(loaded.errors);
        return out;
    }
    out.errors = commandErrors(*loaded.upstream);
    for (config::ConfigError& e : directory_.check(*loaded.upstream)) {
        out.errors.push_back(std::move(e));
    }
    if (!out.errors.empty()) {
        return out;
    }
    const std::string& name = loaded.upstream->name;
    if (directory_.fromConfig(name) == true) {
        out.errors.push_back({"name", "the config file defines an upstream named \"" + name +
                                          "\"; choose another name"});
        out.conflict = true;
        return out;
    }
    store::OperationFilter filter;
    filter.kind = store::OperationKind::upstream;
    filter.name = name;
    filter.limit = 1;
    auto rows = store_->listOperations(filter);
    if (!rows) {
        out.errors.push_back({"name", "cannot check the name: " + rows.error().message});
        out.unavailable = true;
        return out;
    }
    if (!rows->empty() && rows->front().id != self_id) {
        out.errors.push_back({"name", "an upstream named \"" + name + "\" exists already (" +
                                          rows->front().id + ")"});
        out.conflict = true;
        return out;
    }
    out.upstream = std::move(loaded.upstream);
    return out;
}

std::vector<config::ConfigError> UpstreamCatalog::commandErrors(
    const config::UpstreamConfig& upstream) const {
    const auto& allowed = config_.admin.upstream_commands;
    if (!allowed) {
        return {};
    }
    json::Document doc;
    if (!json::parseJson(upstream.config_json, doc, "").ok() || !doc.IsObject() ||
        !doc.HasMember("command") || !doc["command"].IsString()) {
        return {};  // no command to run (an HTTP upstream), or the adapter says what is wrong
    }
    const std::string_view command(doc["command"].GetString(), doc["command"].GetStringLength());
    for (const std::string& pattern : *allowed) {
        if (config::globMatches(pattern, command)) {
            return {};
        }
    }
    return {{"config.command", "\"" + std::string(command.substr(0, 256)) +
                                   "\" is not among the commands admin.upstream_commands allows"}};
}

UpstreamCatalog::Checked UpstreamCatalog::checkText(std::string_view config_json,
                                                    std::string_view self_id) const {
    json::Document doc;
    if (auto parsed = json::parseJson(config_json, doc, ""); !parsed.ok()) {
        return Checked{std::nullopt, {{"", "the stored version is not valid JSON"}}, false};
    }
    return check(doc, self_id);
}

std::optional<ApiError> UpstreamCatalog::find(std::string_view name,
                                              store::OperationRecord& record) const {
    store::OperationFilter filter;
    filter.kind = store::OperationKind::upstream;
    filter.name = std::string(name);
    filter.limit = 1;
    auto rows = store_->listOperations(filter);
    if (!rows) {
        return storeError(rows.error());
    }
    if (rows->empty() && directory_.fromConfig(name) == true) {
        return ApiError{409,
                        "read_only",
                        "upstream " + std::string(name) +
                            " comes from the config file; change it there (and reload)",
                        {},
                        {},
                        {}};
    }
    if (rows->empty()) {
        return ApiError{404,
                        "not_found",
                        "no upstream \"" + std::string(name.substr(0, 64)) +
                            "\" (see GET /admin/api/upstreams)",
                        {},
                        {},
                        {}};
    }
    record = std::move(rows->front());
    return std::nullopt;
}

std::optional<ApiError> UpstreamCatalog::publish(
    const store::OperationRecord& record, std::int64_t version,
    std::optional<std::optional<std::int64_t>> expected_published) {
    const std::lock_guard lock(publish_mutex_);
    auto stored = store_->getOperationVersion(record.id, version);
    if (!stored) {
        return storeError(stored.error());
    }
    Checked checked = checkText(stored->config_json, record.id);
    if (!checked.upstream) {
        return ApiError{checked.conflict ? 409 : 422,
                        checked.conflict ? "conflict" : "invalid",
                        fmt::format("version {} cannot be published: {}", version,
                                    checked.errors.empty() ? std::string("invalid")
                                                           : checked.errors.front().message),
                        std::move(checked.errors),
                        {},
                        {}};
    }
    const std::optional<std::int64_t> expected =
        expected_published ? *expected_published : record.published_version;
    auto published = store_->publishOperationVersion(record.id, version, expected);
    if (!published) {
        return storeError(published.error());
    }
    if (published->outcome == store::PublishOutcome::version_mismatch) {
        ApiError e{409, "conflict", "", {}, {}, published->published_version};
        e.message = published->published_version
                        ? fmt::format("version {} was published since; reload and decide again",
                                      *published->published_version)
                        : std::string(
                              "the published version was withdrawn since; reload and "
                              "decide again");
        return e;
    }
    if (published->outcome == store::PublishOutcome::not_found) {
        return ApiError{
            404, "not_found", fmt::format("upstream {} has no version {}", record.name, version),
            {},  {},          {}};
    }
    apply(record, version, *checked.upstream);
    if (const auto now = applied(record.id); now && !now->error.empty()) {
        // Published (other nodes will run it): this node could not, and says why.
        return ApiError{
            422,
            "invalid",
            fmt::format("version {} is published but does not run: {}", version, now->error),
            {},
            {},
            version};
    }
    return std::nullopt;
}

std::optional<ApiError> UpstreamCatalog::remove(const store::OperationRecord& record,
                                                std::chrono::milliseconds grace) {
    const std::lock_guard lock(publish_mutex_);
    if (auto deleted = store_->deleteOperation(record.id); !deleted) {
        return storeError(deleted.error());
    }
    withdraw(record.id, grace, true);
    return std::nullopt;
}

std::optional<UpstreamCatalog::Applied> UpstreamCatalog::applied(std::string_view id) const {
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find(id);
    if (it == entries_.end()) {
        return std::nullopt;
    }
    const Entry& e = it->second;
    return Applied{e.version, e.error,
                   e.running ? std::optional<std::int64_t>(e.running_version) : std::nullopt};
}

void UpstreamCatalog::apply(const store::OperationRecord& record, std::int64_t version,
                            const config::UpstreamConfig& upstream) {
    std::optional<config::UpstreamConfig> running;
    {
        const std::lock_guard lock(mutex_);
        if (const auto it = entries_.find(record.id); it != entries_.end()) {
            running = it->second.running;
        }
    }
    Result<void> done;
    if (running && running->name == upstream.name) {
        done = *running == upstream
                   ? Result<void>()
                   : directory_.replace(upstream,
                                        std::chrono::milliseconds(running->request_timeout_ms));
    } else {
        done = directory_.add(upstream);
    }
    const std::lock_guard lock(mutex_);
    Entry& entry = entries_[record.id];
    const std::string before = entry.error;
    entry.name = record.name;
    entry.version = version;
    if (done) {
        entry.running = upstream;
        entry.running_version = version;
        entry.error.clear();
        entry.failures = 0;
        log::info("admin: upstream {} runs version {}", record.name, version);
    } else {
        entry.failures = std::min(entry.failures + 1, 16);
        entry.retry_at =
            std::chrono::steady_clock::now() +
            std::min<std::chrono::milliseconds>(interval_ * (1 << std::min(entry.failures, 8)),
                                                std::chrono::minutes(5));
        entry.error = done.error().message;
        if (entry.error != before) {
            log::warn("admin: upstream {} version {} does not run: {}", record.name, version,
                      entry.error);
        }
    }
}

void UpstreamCatalog::withdraw(const std::string& id, std::chrono::milliseconds grace, bool wait) {
    Entry entry;
    {
        const std::lock_guard lock(mutex_);
        const auto it = entries_.find(id);
        if (it == entries_.end()) {
            return;
        }
        entry = std::move(it->second);
        entries_.erase(it);
    }
    if (!entry.running) {
        return;
    }
    if (auto done = directory_.remove(entry.running->name, grace, wait); !done) {
        log::warn("admin: upstream {} could not be removed: {}", entry.name, done.error().message);
    } else {
        log::info("admin: upstream {} removed", entry.name);
    }
}

void UpstreamCatalog::sync() {
    const std::lock_guard lock(publish_mutex_);
    syncLocked();
}

void UpstreamCatalog::syncLocked() {
    store::OperationFilter filter;
    filter.kind = store::OperationKind::upstream;
    filter.published_only = true;
    filter.limit = store::kMaxListLimit;
    auto rows = store_->listOperations(filter);
    if (!rows) {
        log::warn("admin: cannot read the published upstreams: {}", rows.error().message);
        return;
    }
    // A reload that gave the config file an upstream of one of these names runs the file's in
    // its place (config_reload.cpp): this one waits, retried with the back-off, until the name
    // is free again.
    {
        const std::lock_guard lock(mutex_);
        for (auto& [id, entry] : entries_) {
            if (entry.running && directory_.fromConfig(entry.running->name) == true) {
                entry.running.reset();
                entry.error = "the config file defines an upstream named \"" + entry.name +
                              "\", which runs instead";
                entry.failures = 1;
                entry.retry_at = std::chrono::steady_clock::now() + interval_;
                log::warn("admin: upstream {}: {}", entry.name, entry.error);
            }
        }
    }
    // Removals first: a name deleted on another node and created again is free for its new row.
    std::set<std::string, std::less<>> live;
    for (const store::OperationRecord& r : *rows) {
        live.insert(r.id);
    }
    std::vector<std::pair<std::string, std::chrono::milliseconds>> gone;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [id, entry] : entries_) {
            if (live.count(id) == 0) {
                gone.emplace_back(id, std::chrono::milliseconds(
                                          entry.running ? entry.running->request_timeout_ms : 0));
            }
        }
    }
    for (const auto& [id, grace] : gone) {
        withdraw(id, grace, false);  // its calls in flight end in the background
    }
    for (const store::OperationRecord& r : *rows) {
        if (halt_) {
            return;
        }
        bool waiting = false;  // it failed at this version, and its back-off has not passed
        {
            const std::lock_guard lock(mutex_);
            if (const auto it = entries_.find(r.id); it != entries_.end()) {
                const Entry& e = it->second;
                if (e.version == *r.published_version &&
                    (e.error.empty() || std::chrono::steady_clock::now() < e.retry_at)) {
                    waiting = true;
                }
            }
        }
        if (waiting) {
            continue;
        }
        auto stored = store_->getOperationVersion(r.id, *r.published_version);
        if (!stored) {
            log::warn("admin: cannot read upstream {} version {}: {}", r.name, *r.published_version,
                      stored.error().message);
            continue;
        }
        Checked checked = checkText(stored->config_json, r.id);
        if (!checked.upstream) {
            const std::string why = checked.errors.empty() ? std::string("invalid")
                                                           : checked.errors.front().path + ": " +
                                                                 checked.errors.front().message;
            const std::lock_guard lock(mutex_);
            Entry& entry = entries_[r.id];
            if (entry.version != *r.published_version || entry.error != why) {
                log::warn("admin: upstream {} version {} does not run here: {}", r.name,
                          *r.published_version, why);
            }
            entry.name = r.name;
            entry.version = *r.published_version;
            entry.error = why;
            continue;
        }
        apply(r, *r.published_version, *checked.upstream);
    }
}

}  // namespace crank::admin
