#include "runtime/session_registry.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "json/json_parse.h"
#include "log/log.h"
#include "plugins/adapter_handle.h"
#include "runtime/live_session.h"
#include "runtime/safety_stage.h"
#include "util/clock.h"
#include "util/json_string.h"
#include "util/random.h"

namespace crank::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::int64_t wallMs() {
    return nowUnixMs();
}

std::string rfc3339(std::int64_t ms) {
    return formatRfc3339(ms);
}

OverflowPolicy overflowOf(const config::ExecutionConfig& e) {
    return e.overflow_policy == config::OverflowPolicy::drop_oldest ? OverflowPolicy::drop_oldest
                                                                    : OverflowPolicy::pause;
}

}  // namespace

struct SessionRegistry::Entry {
    OperationPtr op;
    std::string id;
    std::shared_ptr<LiveSession> call;
    std::shared_ptr<store::Store> store;  // may be null
    std::int64_t retention_ms = 0;
    mcp::Caller owner;

    std::mutex mutex;  // everything below, and every adapter call on the stream
    crank_stream* stream = nullptr;
    std::string status = "active";  // active, completed, failed, stopped, expired
    bool closed = false;            // stopped or expired: the buffer is gone for the client
    Clock::time_point last_poll;
    Clock::time_point lifetime_end;
    Clock::time_point remove_at = Clock::time_point::max();
    std::int64_t lifetime_end_ms = 0;  // wall clock, for expires_at
    Clock::time_point last_store_touch{};

    /// Moves the row out of `active` (best effort: this node's memory is what polls read).
    void recordTerminal(store::SessionStatus to) const {
        if (!store) {
            return;
        }
        store::SessionTransition t;
        t.to = to;
        t.closed_at = wallMs();
        t.expires_at = wallMs() + retention_ms;
        const auto r = store->transitionSession(id, store::SessionStatus::active, t);
        if (!r) {
            log::warn("session {}: the store did not record it as {}: {}", id,
                      store::sessionStatusName(to), r.error().message);
        }
    }

    /// Records a poll, at most once a second per session.
    void recordPoll(Clock::time_point now, const std::string& cursor) {
        if (!store || now - last_store_touch < std::chrono::seconds(1)) {
            return;
        }
        last_store_touch = now;
        store::SessionTouch t;
        t.cursor = cursor;
        t.expires_at = expiresAtMs(now);
        const auto r = store->touchSession(id, store::SessionStatus::active, t);
        if (!r) {
            log::warn("session {}: the store did not record a poll: {}", id, r.error().message);
        }
    }

    std::int64_t expiresAtMs(Clock::time_point now) const {
        const std::int64_t idle = op->config.execution.idle_timeout_ms;
        const auto sinceLastPoll =
            std::chrono::duration_cast<milliseconds>(now - last_poll).count();
        return std::min(wallMs() + idle - sinceLastPoll, lifetime_end_ms);
    }

    /// The plugin completed: the stream is destroyed (its threads joined); the buffer stays
    /// for the polls to come.
    void destroyIfCompletedLocked() {
        if (stream == nullptr) {
            return;
        }
        const std::optional<crank_status> done = call->completion();
        if (!done) {
            return;
        }
        op->adapter->streamDestroy(stream);
        stream = nullptr;
        if (status == "active") {
            status = *done == CRANK_ERROR ? "failed" : "completed";
            if (status == "failed") {
                recordTerminal(store::SessionStatus::failed);
            }
        }
    }

    void closeLocked(std::string_view final_status, Clock::time_point wait_until,
                     std::chrono::milliseconds tombstone) {
        if (!closed) {
            closed = true;
            const bool wasFailed = status == "failed";
            status = std::string(final_status);
            if (!wasFailed) {
                recordTerminal(final_status == "expired" ? store::SessionStatus::expired
                                                         : store::SessionStatus::closed);
            }
            remove_at = Clock::now() + tombstone;
            call->cancel();
            if (stream != nullptr) {
                op->adapter->streamCancel(stream);
            }
        }
        if (stream != nullptr && call->waitForComplete(wait_until)) {
            destroyIfCompletedLocked();
        }
    }
};

SessionRegistry::SessionRegistry(Options options) : options_(std::move(options)) {
    closeOrphans();
    thread_ = std::thread([this] { run(); });
}

void SessionRegistry::closeOrphans() {
    // Live rows of this node are sessions of its previous incarnation: their upstream streams
    // died with it and cannot be taken back (the plugin's stream is in memory only).
    if (!options_.store) {
        return;
    }
    const std::int64_t now = wallMs();
    for (int page = 0; page < 1'000; ++page) {
        store::SessionFilter f;
        f.owner_node = options_.node_id;
        f.statuses = {store::SessionStatus::active, store::SessionStatus::paused};
        f.limit = store::kMaxListLimit;
        auto rows = options_.store->listSessions(f);
        if (!rows || rows->empty()) {
            return;
        }
        std::size_t changed = 0;
        for (const store::SessionRecord& row : *rows) {
            store::SessionTransition t;
            t.to = store::SessionStatus::failed;
            t.closed_at = now;
            t.expires_at = now + options_.retention_ms;
            t.state_json = R"({"reason":"crankd restarted; the upstream stream was lost"})";
            if (auto r = options_.store->transitionSession(row.id, row.status, t);
                r && r->applied()) {
                ++changed;
            }
        }
        log::info("sessions: {} session(s) of this node's previous run closed as failed", changed);
        if (changed == 0) {
            return;
        }
    }
}

SessionRegistry::~SessionRegistry() {
    shutdown(milliseconds(options_.cancel_grace_ms));
}

std::size_t SessionRegistry::size() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
}

void SessionRegistry::audit(const mcp::Caller& caller, const Operation& op, std::string_view verb,
                            const Result<std::string>& outcome, const AuditFacts& facts) const {
    if (!options_.store) {
        return;
    }
    store::AuditEvent event;
    event.workspace_id = caller.workspace;
    event.agent_id = caller.agent.empty() ? "anonymous" : caller.agent;
    event.operation_id = op.config.name;
    event.action = "session." + std::string(verb);
    std::string detail = "{\"session_id\":" + jsonString(facts.session_id);
    if (outcome) {
        event.outcome = "ok";
        if (facts.items) {
            detail +=
                fmt::format(R"(,"items":{},"cursor":{})", *facts.items, jsonString(facts.cursor));
        }
        detail += ",\"status\":" + jsonString(facts.status);
    } else {
        event.outcome = outcome.error().code == ErrorCode::not_found ? "not_found" : "error";
        detail += ",\"error\":" + jsonString(op.scrubber.empty()
                                                 ? outcome.error().message
                                                 : op.scrubber.scrub(outcome.error().message));
    }
    detail += "}";
    event.detail_json = std::move(detail);
    if (auto r = options_.store->appendAudit(std::move(event)); !r) {
        log::warn("sessions: the audit log refused session.{}: {}", verb, r.error().message);
    }
}

Result<std::string> SessionRegistry::start(const OperationPtr& op, const PreparedRequest& request,
                                           std::uint64_t sampling_seed,
                                           const SafetyLimits& safety_limits,
                                           const mcp::Caller& caller) {
    AuditFacts facts;
    Result<std::string> r = startImpl(op, request, sampling_seed, safety_limits, caller, facts);
    audit(caller, *op, "start", r, facts);
    return r;
}

Result<std::string> SessionRegistry::poll(const Operation& op, std::string_view arguments_json,
                                          const mcp::Caller& caller) {
    AuditFacts facts;
    json::Document args;
    Result<std::string> r = Error{ErrorCode::internal, ""};
    if (auto parsed = json::parseJson(arguments_json, args, "input"); !parsed) {
        r = Error{ErrorCode::invalid_argument, "invalid input: " + parsed.error().message};
    } else {
        r = pollImpl(op, args, caller, facts);
    }
    audit(caller, op, "poll", r, facts);
    return r;
}

Result<std::string> SessionRegistry::stop(const Operation& op, std::string_view arguments_json,
                                          const mcp::Caller& caller) {
    AuditFacts facts;
    json::Document args;
    Result<std::string> r = Error{ErrorCode::internal, ""};
    if (auto parsed = json::parseJson(arguments_json, args, "input"); !parsed) {
        r = Error{ErrorCode::invalid_argument, "invalid input: " + parsed.error().message};
    } else {
        r = stopImpl(op, args, caller, facts);
    }
    audit(caller, op, "stop", r, facts);
    return r;
}

Result<std::string> SessionRegistry::startImpl(const OperationPtr& op,
                                               const PreparedRequest& request,
                                               std::uint64_t sampling_seed,
                                               const SafetyLimits& safety_limits,
                                               const mcp::Caller& caller, AuditFacts& facts) {
    const config::ExecutionConfig& e = op->config.execution;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) {
            return Error{ErrorCode::unavailable, "crankd is shutting down"};
        }
        if (entries_.size() >= options_.max_sessions) {
            return Error{ErrorCode::unavailable,
                         fmt::format("this crankd holds {} sessions, its limit; stop sessions "
                                     "that are no longer needed",
                                     entries_.size())};
        }
    }
    if (auto refused = checkLimits(caller)) {
        return std::move(*refused);
    }
    auto safety = SafetyStage::create(e, sampling_seed, op->path + ".execution", safety_limits);
    if (!safety) {
        return safety.error();
    }
    auto entry = std::make_shared<Entry>();
    entry->op = op;
    entry->id = newId("ses_");
    facts.session_id = entry->id;
    entry->owner = caller;
    entry->store = options_.store;
    entry->retention_ms = options_.retention_ms;
    entry->call = std::make_shared<LiveSession>(
        op->config.name, op->scrubber, std::move(*safety),
        SessionBuffer::Limits{static_cast<std::uint64_t>(e.max_items),
                              static_cast<std::uint64_t>(e.max_bytes), overflowOf(e)});
    const auto now = Clock::now();
    entry->last_poll = now;
    entry->lifetime_end = now + milliseconds(e.max_session_lifetime_ms);
    entry->lifetime_end_ms = wallMs() + e.max_session_lifetime_ms;

    const crank_request view = request.view(*op);
    entry->stream = op->adapter->streamOpen(*entry->call, view);
    if (entry->stream == nullptr) {
        const std::optional<UpstreamError> error = entry->call->error();
        return Error{ErrorCode::unavailable,
                     error ? fmt::format("the upstream stream could not start: {} ({})",
                                         error->message, error->code)
                           : std::string("the upstream stream could not start")};
    }
    if (options_.store) {
        store::SessionRecord row;
        row.id = entry->id;
        row.workspace_id = caller.workspace;
        row.agent_id = caller.agent.empty() ? "anonymous" : caller.agent;
        row.operation_id = op->config.name;
        row.protocol = op->config.protocol;
        row.mode = "session";
        row.owner_node = options_.node_id;
        row.expires_at = std::min(wallMs() + e.idle_timeout_ms, entry->lifetime_end_ms);
        if (auto created = options_.store->createSession(std::move(row)); !created) {
            entry->call->cancel();
            op->adapter->streamCancel(entry->stream);
            if (entry->call->waitForComplete(now + milliseconds(options_.cancel_grace_ms))) {
                op->adapter->streamDestroy(entry->stream);
            } else {
                new std::shared_ptr<LiveSession>(entry->call);  // NOLINT: the plugin still runs
            }
            return Error{
                ErrorCode::unavailable,
                "the session could not be recorded in the store: " + created.error().message};
        }
    }
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        entries_.emplace(entry->id, entry);
    }
    wake_.notify_all();
    facts.status = "active";
    const std::lock_guard<std::mutex> lock(entry->mutex);
    return fmt::format(
        R"({{"session_id":{},"status":"active","expires_at":{},"limits":{{"max_items":{},)"
        R"("max_bytes":{},"overflow_policy":"{}","idle_timeout_ms":{},)"
        R"("max_session_lifetime_ms":{}}}}})",
        jsonString(entry->id), jsonString(rfc3339(entry->expiresAtMs(now))), e.max_items,
        e.max_bytes, toString(overflowOf(e)), e.idle_timeout_ms, e.max_session_lifetime_ms);
}

std::optional<Error> SessionRegistry::checkLimits(const mcp::Caller& caller) const {
    std::int64_t agentLive = 0;
    std::int64_t workspaceLive = 0;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [id, entry] : entries_) {
            const std::lock_guard<std::mutex> entryLock(entry->mutex);
            if (entry->closed || entry->owner.workspace != caller.workspace) {
                continue;
            }
            ++workspaceLive;
            if (entry->owner.agent == caller.agent) {
                ++agentLive;
            }
        }
    }
    if (!caller.agent.empty()) {
        const auto limit = options_.agent_max_sessions.find(caller.agent);
        if (limit != options_.agent_max_sessions.end() && agentLive >= limit->second) {
            return Error{ErrorCode::unavailable,
                         fmt::format("agent \"{}\" has {} open sessions, its limit "
                                     "(auth.agents[].limits.max_sessions); stop one first",
                                     caller.agent, agentLive)};
        }
    }
    const auto limit = options_.workspace_max_sessions.find(caller.workspace);
    if (limit != options_.workspace_max_sessions.end() && workspaceLive >= limit->second) {
        return Error{ErrorCode::unavailable,
                     fmt::format("workspace \"{}\" has {} open sessions, its limit "
                                 "(auth.workspaces[].limits.max_sessions); stop one first",
                                 caller.workspace, workspaceLive)};
    }
    return std::nullopt;
}

std::shared_ptr<SessionRegistry::Entry> SessionRegistry::find(const Operation& op,
                                                              const json::Value& a,
                                                              const mcp::Caller& caller,
                                                              AuditFacts& facts, Error& error) {
    if (!a.IsObject() || !a.HasMember("session_id") || !a["session_id"].IsString()) {
        error = Error{ErrorCode::invalid_argument,
                      "invalid input: session_id is required (the id _start returned)"};
        return nullptr;
    }
    const std::string session_id(a["session_id"].GetString(), a["session_id"].GetStringLength());
    facts.session_id = session_id.substr(0, 128);
    std::shared_ptr<Entry> entry;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto it = entries_.find(session_id);
        if (it != entries_.end()) {
            entry = it->second;
        }
    }
    // Another operation's or another agent's session is not found either (not "forbidden": its
    // existence is not theirs to learn).
    if (!entry || entry->op->config.name != op.config.name || entry->owner.agent != caller.agent ||
        entry->owner.workspace != caller.workspace) {
        error = Error{ErrorCode::not_found,
                      fmt::format("no session {} for {} (it may have been stopped or have "
                                  "expired and been cleaned up)",
                                  jsonString(session_id.substr(0, 64)), op.config.name)};
        return nullptr;
    }
    return entry;
}

Result<std::string> SessionRegistry::pollImpl(const Operation& op, const json::Value& a,
                                              const mcp::Caller& caller, AuditFacts& facts) {
    Error error{ErrorCode::internal, ""};
    const std::shared_ptr<Entry> entry = find(op, a, caller, facts, error);
    if (!entry) {
        return error;
    }
    std::optional<std::string> cursor;
    if (a.HasMember("cursor") && !a["cursor"].IsNull()) {
        if (!a["cursor"].IsString()) {
            return Error{ErrorCode::invalid_argument,
                         "invalid input: cursor must be the string a previous poll returned"};
        }
        cursor.emplace(a["cursor"].GetString(), a["cursor"].GetStringLength());
    }
    const config::ExecutionConfig& e = op.config.execution;
    std::size_t maxItems = static_cast<std::size_t>(e.max_items);
    if (a.HasMember("max_items")) {
        if (!a["max_items"].IsInt64() || a["max_items"].GetInt64() < 1) {
            return Error{ErrorCode::invalid_argument,
                         "invalid input: max_items must be a positive integer"};
        }
        maxItems =
            std::min<std::size_t>(maxItems, static_cast<std::size_t>(a["max_items"].GetInt64()));
    }

    const std::lock_guard<std::mutex> lock(entry->mutex);
    entry->destroyIfCompletedLocked();
    const auto now = Clock::now();
    const SessionBuffer::Counters before = entry->call->buffer().counters();
    facts.status = entry->status;
    std::string out =
        "{\"session_id\":" + jsonString(entry->id) + ",\"status\":" + jsonString(entry->status);
    if (entry->closed) {
        facts.items = 0;
        facts.cursor = cursor.value_or("");
        out += fmt::format(R"(,"items":[],"cursor":{},"has_more":false,"item_count":{},)"
                           R"("dropped_count":{}}})",
                           jsonString(cursor.value_or("")), before.received,
                           before.dropped + entry->call->safetyDropped());
        return out;
    }
    entry->last_poll = now;
    auto page = entry->call->buffer().poll(
        cursor ? std::optional<std::string_view>(*cursor) : std::nullopt, maxItems);
    if (!page) {
        return page.error();
    }
    if (entry->call->buffer().takeResume() && entry->stream != nullptr) {
        entry->op->adapter->streamResume(entry->stream);
    }
    // The page is cut to max_result_bytes; the cursor then names the last item that fitted.
    const std::size_t budget = static_cast<std::size_t>(e.max_result_bytes) > 512
                                   ? static_cast<std::size_t>(e.max_result_bytes) - 512
                                   : 0;
    std::string items = "[";
    std::size_t taken = 0;
    for (const std::string& item : page->items) {
        if (items.size() + item.size() + 1 > budget && taken > 0) {
            break;
        }
        items += (taken == 0 ? "" : ",") + item;
        ++taken;
    }
    items += "]";
    const bool cut = taken < page->items.size();
    const std::string nextCursor = cut ? std::to_string(page->first_seq + taken - 1) : page->cursor;
    entry->recordPoll(now, nextCursor);
    facts.items = taken;
    facts.cursor = nextCursor;
    const SessionBuffer::Counters after = entry->call->buffer().counters();
    out += ",\"items\":" + items + ",\"cursor\":" + jsonString(nextCursor) +
           fmt::format(R"(,"has_more":{},"item_count":{},"dropped_count":{},"expires_at":{})",
                       (page->has_more || cut) ? "true" : "false", after.received,
                       after.dropped + entry->call->safetyDropped(),
                       jsonString(rfc3339(entry->expiresAtMs(now))));
    if (entry->status == "failed") {
        const std::optional<UpstreamError> failure = entry->call->error();
        if (failure) {
            out += ",\"error\":{\"code\":" + jsonString(failure->code) +
                   ",\"message\":" + jsonString(failure->message) + "}";
        }
    }
    out += "}";
    return op.scrubber.empty() ? out : op.scrubber.scrubJson(out);
}

Result<std::string> SessionRegistry::stopImpl(const Operation& op, const json::Value& a,
                                              const mcp::Caller& caller, AuditFacts& facts) {
    Error error{ErrorCode::internal, ""};
    const std::shared_ptr<Entry> entry = find(op, a, caller, facts, error);
    if (!entry) {
        return error;
    }
    const std::lock_guard<std::mutex> lock(entry->mutex);
    entry->destroyIfCompletedLocked();
    const bool wasClosed = entry->closed;
    entry->closeLocked(entry->status == "active" ? "stopped" : entry->status,
                       Clock::now() + milliseconds(options_.cancel_grace_ms),
                       milliseconds(options_.tombstone_ms));
    if (!wasClosed && entry->status != "stopped") {
        // The upstream had ended (completed or failed): stopping only discards the buffer.
        entry->status = "stopped";
    }
    facts.status = entry->status;
    const SessionBuffer::Counters c = entry->call->buffer().counters();
    return fmt::format(
        R"({{"session_id":{},"status":{},"item_count":{},"dropped_count":{},"undelivered":{}}})",
        jsonString(entry->id), jsonString(entry->status), c.received,
        c.dropped + entry->call->safetyDropped(), wasClosed ? 0 : c.buffered_items);
}

void SessionRegistry::tick() {
    std::vector<std::shared_ptr<Entry>> all;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        all.reserve(entries_.size());
        for (const auto& [id, entry] : entries_) {
            all.push_back(entry);
        }
    }
    std::vector<std::string> gone;
    const auto now = Clock::now();
    for (const std::shared_ptr<Entry>& entry : all) {
        const std::lock_guard<std::mutex> lock(entry->mutex);
        entry->destroyIfCompletedLocked();
        const milliseconds idle(entry->op->config.execution.idle_timeout_ms);
        if (!entry->closed && (now >= entry->lifetime_end || now - entry->last_poll >= idle)) {
            entry->closeLocked("expired", now, milliseconds(options_.tombstone_ms));
            audit(entry->owner, *entry->op, "expire", Result<std::string>(std::string()),
                  AuditFacts{entry->id, "expired", std::nullopt, {}});
        }
        if (entry->closed && entry->stream == nullptr && now >= entry->remove_at) {
            gone.push_back(entry->id);
        }
    }
    if (!gone.empty()) {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (const std::string& id : gone) {
            entries_.erase(id);
        }
    }
    if (now >= next_clean_) {
        next_clean_ = now + std::chrono::seconds(30);
        cleanStore();
    }
}

void SessionRegistry::cleanStore() {
    if (!options_.store) {
        return;
    }
    for (int batch = 0; batch < 10; ++batch) {  // bounded: at most 10 batches a round
        const auto deleted = options_.store->deleteExpiredSessions(wallMs(), 500);
        if (!deleted) {
            log::warn("sessions: the store cleanup failed: {}", deleted.error().message);
            return;
        }
        if (*deleted < 500) {
            return;
        }
    }
}

void SessionRegistry::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        wake_.wait_for(lock, milliseconds(options_.tick_ms));
        if (stopping_) {
            break;
        }
        lock.unlock();
        tick();
        lock.lock();
    }
}

std::size_t SessionRegistry::shutdown(std::chrono::milliseconds grace) {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_ && !thread_.joinable()) {
            return 0;
        }
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
    std::map<std::string, std::shared_ptr<Entry>, std::less<>> all;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        all.swap(entries_);
    }
    const auto until = Clock::now() + grace;
    for (auto& [id, entry] : all) {
        const std::lock_guard<std::mutex> lock(entry->mutex);
        entry->closeLocked("stopped", Clock::now(), milliseconds(0));
    }
    std::size_t abandoned = 0;
    for (auto& [id, entry] : all) {
        const std::lock_guard<std::mutex> lock(entry->mutex);
        if (entry->stream != nullptr && entry->call->waitForComplete(until)) {
            entry->destroyIfCompletedLocked();
        }
        if (entry->stream != nullptr) {
            ++abandoned;  // the plugin still runs: keep its call alive for ever
            new std::shared_ptr<LiveSession>(entry->call);  // NOLINT: deliberate leak
        }
    }
    return abandoned;
}

std::string SessionRegistry::pollInputSchema(std::int64_t max_items) {
    return fmt::format(
        R"({{"type":"object","properties":{{"session_id":{{"type":"string","description":)"
        R"("the id _start returned"}},"cursor":{{"type":"string","description":)"
        R"("the cursor the previous poll returned; polling again with the same cursor returns )"
        R"(the same items"}},"max_items":{{"type":"integer","minimum":1,"maximum":{}}}}},)"
        R"("required":["session_id"],"additionalProperties":false}})",
        max_items);
}

std::string SessionRegistry::stopInputSchema() {
    return R"({"type":"object","properties":{"session_id":{"type":"string"}},)"
           R"("required":["session_id"],"additionalProperties":false})";
}

std::string SessionRegistry::startOutputSchema() {
    return R"({"type":"object","properties":{"session_id":{"type":"string"},)"
           R"("status":{"type":"string"},"expires_at":{"type":"string"},)"
           R"("limits":{"type":"object"}},"required":["session_id","status","expires_at","limits"]})";
}

std::string SessionRegistry::pollOutputSchema() {
    return R"({"type":"object","properties":{"session_id":{"type":"string"},)"
           R"("status":{"enum":["active","completed","failed","stopped","expired"]},)"
           R"("items":{"type":"array"},"cursor":{"type":"string"},"has_more":{"type":"boolean"},)"
           R"("item_count":{"type":"integer"},"dropped_count":{"type":"integer"},)"
           R"("expires_at":{"type":"string"},"error":{"type":"object"}},)"
           R"("required":["session_id","status","items","cursor","has_more","item_count",)"
           R"("dropped_count"]})";
}

std::string SessionRegistry::stopOutputSchema() {
    return R"({"type":"object","properties":{"session_id":{"type":"string"},)"
           R"("status":{"type":"string"},"item_count":{"type":"integer"},)"
           R"("dropped_count":{"type":"integer"},"undelivered":{"type":"integer"}},)"
           R"("required":["session_id","status","item_count","dropped_count","undelivered"]})";
}

}  // namespace crank::runtime
