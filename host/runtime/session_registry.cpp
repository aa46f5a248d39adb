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
#include "runtime/polled_stream.h"
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
    FlowMetrics flow;

    std::mutex mutex;                      // everything below, and every adapter call on the stream
    crank_stream* stream = nullptr;        // the plugin's stream (server_stream), or
    std::unique_ptr<PolledStream> poller;  // the host's, polling a request/response upstream
    std::string status = "active";         // active, completed, failed, stopped, expired
    bool closed = false;                   // stopped or expired: the buffer is gone for the client
    Clock::time_point last_poll;
    Clock::time_point lifetime_end;
    Clock::time_point remove_at = Clock::time_point::max();
    std::int64_t lifetime_end_ms = 0;  // wall clock, for expires_at
    Clock::time_point last_store_touch{};
    /// When the tick looks at this session next (max: not scheduled). Under the REGISTRY's
    /// mutex, not this one.
    Clock::time_point scheduled = Clock::time_point::max();

    /// A terminal status the store has not recorded yet (recordTerminal), and the registry's flag
    /// that some session has one.
    std::optional<store::SessionStatus> unrecorded;
    std::atomic<bool>* unrecorded_pending = nullptr;
    /// What the buffer and the safety stage counted up to the last report (flow).
    SessionBuffer::Counters reported{};
    std::uint64_t reported_safety_dropped = 0;

    bool upstreamOpen() const { return stream != nullptr || poller != nullptr; }

    /// Counts what the session collected and dropped since the last report (at every poll and
    /// when it closes or fails), so that the counters follow a live session without a lookup
    /// per item.
    void reportFlowLocked() {
        const SessionBuffer::Counters now = call->buffer().counters();
        const std::uint64_t safetyDropped = call->safetyDropped();
        // Items the safety stage dropped were read too: they count as collected.
        const std::uint64_t safetyDelta = safetyDropped - reported_safety_dropped;
        flow.collected(*op, now.received - reported.received + safetyDelta,
                       now.received_bytes - reported.received_bytes);
        flow.dropped(*op, "safety", safetyDelta);
        flow.dropped(*op, "overflow", now.dropped - reported.dropped);
        reported = now;
        reported_safety_dropped = safetyDropped;
    }

    /// When the session expires unless polled meanwhile.
    Clock::time_point deadline() const {
        return std::min(last_poll + milliseconds(op->config.execution.idle_timeout_ms),
                        lifetime_end);
    }

    /// Moves the row out of `active` (this node's memory is what polls read). When the store
    /// refuses (disk full), the end is kept in `unrecorded` and the registry's tick writes it
    /// again until the store takes it: a closed session's row never stays `active`.
    void recordTerminal(store::SessionStatus to) {
        if (!store) {
            return;
        }
        store::SessionTransition t;
        t.to = to;
        t.closed_at = wallMs();
        t.expires_at = wallMs() + retention_ms;
        const auto r = store->transitionSession(id, store::SessionStatus::active, t);
        if (!r) {
            if (!unrecorded) {
                log::warn("session {}: the store did not record it as {}: {}; retrying", id,
                          store::sessionStatusName(to), r.error().message);
            }
            unrecorded = to;
            if (unrecorded_pending != nullptr) {
                unrecorded_pending->store(true);
            }
        } else {
            unrecorded.reset();
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
        if (!upstreamOpen()) {
            return;
        }
        const std::optional<crank_status> done = call->completion();
        if (!done) {
            return;
        }
        if (stream != nullptr) {
            op->adapter->streamDestroy(stream);
            stream = nullptr;
        }
        if (poller) {
            poller->join();  // it completed the session as its last act: a short wait
            poller.reset();
        }
        if (status == "active") {
            status = *done == CRANK_ERROR ? "failed" : "completed";
            if (status == "failed") {
                recordTerminal(store::SessionStatus::failed);
                const std::optional<UpstreamError> failure = call->error();
                flow.upstreamError(*op, failure ? failure->code : "internal");
            }
            reportFlowLocked();
        }
    }

    /// Asks the upstream to stop (stream_cancel, or the poller's cancel).
    void cancelUpstreamLocked() {
        call->cancel();
        if (stream != nullptr) {
            op->adapter->streamCancel(stream);
        }
        if (poller) {
            poller->cancel();
        }
    }

    /// After a cancel that `until` did not see completed: the upstream is left running, with
    /// everything it uses (its plugin must stay loaded).
    void abandonUpstreamLocked() {
        if (stream != nullptr) {
            new std::shared_ptr<LiveSession>(call);  // NOLINT: deliberate leak, the plugin runs
            stream = nullptr;
        }
        poller.reset();  // detaches its thread, which owns what it uses
    }

    /// True when this call closed it (exactly one call does: its live count is released then).
    bool closeLocked(std::string_view final_status, Clock::time_point wait_until,
                     std::chrono::milliseconds tombstone) {
        const bool closing = !closed;
        if (!closed) {
            closed = true;
            const bool wasFailed = status == "failed";
            status = std::string(final_status);
            if (!wasFailed) {
                recordTerminal(final_status == "expired" ? store::SessionStatus::expired
                                                         : store::SessionStatus::closed);
            }
            remove_at = Clock::now() + tombstone;
            cancelUpstreamLocked();
            reportFlowLocked();
        }
        if (upstreamOpen() && call->waitForComplete(wait_until)) {
            destroyIfCompletedLocked();
        }
        return closing;
    }
};

struct SessionRegistry::Completions {
    std::mutex mutex;
    std::vector<std::weak_ptr<Entry>> done;

    void push(std::weak_ptr<Entry> entry) {
        const std::lock_guard<std::mutex> lock(mutex);
        done.push_back(std::move(entry));
    }
    std::vector<std::weak_ptr<Entry>> take() {
        const std::lock_guard<std::mutex> lock(mutex);
        return std::exchange(done, {});
    }
};

SessionRegistry::SessionRegistry(Options options)
    : options_(std::move(options)), completions_(std::make_shared<Completions>()) {
    if (!options_.audit) {
        options_.audit = std::make_shared<AuditLog>(options_.store);
    }
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
    if (auto r = options_.audit->append(std::move(event)); !r) {
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

Result<std::string> SessionRegistry::onSession(const Operation& op, std::string_view arguments_json,
                                               const mcp::Caller& caller, std::string_view verb,
                                               Impl impl) {
    AuditFacts facts;
    json::Document args;
    Result<std::string> r = Error{ErrorCode::internal, ""};
    if (auto parsed = json::parseJson(arguments_json, args, "input"); !parsed) {
        r = Error{ErrorCode::invalid_argument, "invalid input: " + parsed.error().message};
    } else {
        r = (this->*impl)(op, args, caller, facts);
    }
    audit(caller, op, verb, r, facts);
    return r;
}

Result<std::string> SessionRegistry::poll(const Operation& op, std::string_view arguments_json,
                                          const mcp::Caller& caller) {
    return onSession(op, arguments_json, caller, "poll", &SessionRegistry::pollImpl);
}

Result<std::string> SessionRegistry::stop(const Operation& op, std::string_view arguments_json,
                                          const mcp::Caller& caller) {
    return onSession(op, arguments_json, caller, "stop", &SessionRegistry::stopImpl);
}

Result<std::string> SessionRegistry::stopById(std::string_view session_id) {
    std::shared_ptr<Entry> entry;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto it = entries_.find(session_id);
        if (it != entries_.end()) {
            entry = it->second;
        }
    }
    if (!entry) {
        return Error{ErrorCode::not_found,
                     "this node holds no session " + jsonString(session_id.substr(0, 64))};
    }
    return stop(*entry->op, R"({"session_id":)" + jsonString(session_id) + "}", entry->owner);
}

std::size_t SessionRegistry::stopAllOf(const Operation& op) {
    std::vector<std::string> ids;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [id, entry] : entries_) {
            if (entry->op.get() == &op) {
                ids.push_back(id);
            }
        }
    }
    std::size_t stopped = 0;
    for (const std::string& id : ids) {
        if (stopById(id)) {
            ++stopped;
        }
    }
    return stopped;
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
        if (auto refused = reserveLiveLocked(caller)) {
            return std::move(*refused);
        }
    }
    // The place reserved above is given back on every way out but success.
    const auto giveBack = [&](Error error) -> Result<std::string> {
        releaseLive(caller);
        return error;
    };
    auto safety = SafetyStage::create(e, sampling_seed, op->path + ".execution", safety_limits);
    if (!safety) {
        return giveBack(safety.error());
    }
    auto entry = std::make_shared<Entry>();
    entry->op = op;
    entry->id = newId("ses_");
    facts.session_id = entry->id;
    entry->owner = caller;
    entry->store = options_.store;
    entry->retention_ms = options_.retention_ms;
    entry->flow = options_.flow;
    entry->unrecorded_pending = &unrecorded_pending_;
    entry->call = std::make_shared<LiveSession>(
        op->config.name, op->scrubber, std::move(*safety),
        SessionBuffer::Limits{static_cast<std::uint64_t>(e.max_items),
                              static_cast<std::uint64_t>(e.max_bytes), overflowOf(e)});
    entry->call->onComplete([completions = completions_, weak = std::weak_ptr<Entry>(entry)] {
        completions->push(weak);
    });
    const auto now = Clock::now();
    entry->last_poll = now;
    entry->lifetime_end = now + milliseconds(e.max_session_lifetime_ms);
    entry->lifetime_end_ms = wallMs() + e.max_session_lifetime_ms;

    const std::lock_guard<std::mutex> entryLock(entry->mutex);
    if (e.transport_behavior == config::TransportBehavior::server_stream) {
        const crank_request view = request.view(*op);
        entry->stream = op->adapter->streamOpen(*entry->call, view);
        if (entry->stream == nullptr) {
            const std::optional<UpstreamError> error = entry->call->error();
            return giveBack(Error{ErrorCode::unavailable,
                                  error
                                      ? fmt::format("the upstream stream could not start: {} ({})",
                                                    error->message, error->code)
                                      : std::string("the upstream stream could not start")});
        }
    } else {
        auto poller = PolledStream::start(op, request, entry->call);
        if (!poller) {
            return giveBack(poller.error());
        }
        entry->poller = std::move(*poller);
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
            entry->cancelUpstreamLocked();
            if (entry->call->waitForComplete(now + milliseconds(options_.cancel_grace_ms))) {
                entry->destroyIfCompletedLocked();
            } else {
                entry->abandonUpstreamLocked();
            }
            return giveBack(Error{
                ErrorCode::unavailable,
                "the session could not be recorded in the store: " + created.error().message});
        }
    }
    bool late = false;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        late = stopping_;
        if (!late) {
            entries_.emplace(entry->id, entry);
            scheduleLocked(entry, entry->deadline());
        }
    }
    if (late) {
        // shutdown() took the sessions while this one opened: close it here, as it would have.
        entry->closeLocked("stopped", Clock::now(), milliseconds(0));
        if (entry->upstreamOpen() &&
            entry->call->waitForComplete(Clock::now() + milliseconds(options_.cancel_grace_ms))) {
            entry->destroyIfCompletedLocked();
        }
        if (entry->upstreamOpen()) {
            entry->abandonUpstreamLocked();
        }
        return Error{ErrorCode::unavailable, "crankd is shutting down"};
    }
    wake_.notify_all();
    facts.status = "active";
    return fmt::format(
        R"({{"session_id":{},"status":"active","expires_at":{},"limits":{{"max_items":{},)"
        R"("max_bytes":{},"overflow_policy":"{}","idle_timeout_ms":{},)"
        R"("max_session_lifetime_ms":{}}}}})",
        jsonString(entry->id), jsonString(rfc3339(entry->expiresAtMs(now))), e.max_items,
        e.max_bytes, toString(overflowOf(e)), e.idle_timeout_ms, e.max_session_lifetime_ms);
}

void SessionRegistry::setLimits(std::map<std::string, std::int64_t, std::less<>> agents,
                                std::map<std::string, std::int64_t, std::less<>> workspaces) {
    const std::lock_guard lock(mutex_);  // reserveLiveLocked() reads them under it
    options_.agent_max_sessions = std::move(agents);
    options_.workspace_max_sessions = std::move(workspaces);
}

std::optional<Error> SessionRegistry::reserveLiveLocked(const mcp::Caller& caller) {
    const auto agentKey = std::make_pair(caller.workspace, caller.agent);
    const auto agentIt = agent_live_.find(agentKey);
    const std::int64_t agentLive = agentIt == agent_live_.end() ? 0 : agentIt->second;
    const auto workspaceIt = workspace_live_.find(caller.workspace);
    const std::int64_t workspaceLive =
        workspaceIt == workspace_live_.end() ? 0 : workspaceIt->second;
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
    ++agent_live_[agentKey];
    ++workspace_live_[caller.workspace];
    return std::nullopt;
}

void SessionRegistry::releaseLive(const mcp::Caller& owner) {
    const std::lock_guard<std::mutex> lock(mutex_);
    releaseLiveLocked(owner);
}

void SessionRegistry::releaseLiveLocked(const mcp::Caller& owner) {
    // Entries at zero go, so that the maps hold only agents and workspaces with live sessions.
    if (const auto it = agent_live_.find(std::make_pair(owner.workspace, owner.agent));
        it != agent_live_.end() && --it->second <= 0) {
        agent_live_.erase(it);
    }
    if (const auto it = workspace_live_.find(owner.workspace);
        it != workspace_live_.end() && --it->second <= 0) {
        workspace_live_.erase(it);
    }
}

void SessionRegistry::scheduleLocked(const std::shared_ptr<Entry>& entry, Clock::time_point when) {
    if (when < entry->scheduled) {
        entry->scheduled = when;  // an item at a later time, if any, is now stale
        deadlines_.emplace(when, entry);
    }
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
    if (entry->call->buffer().takeResume()) {
        if (entry->stream != nullptr) {
            entry->op->adapter->streamResume(entry->stream);
        } else if (entry->poller) {
            entry->poller->resume();
        }
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
    entry->reportFlowLocked();
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
                   ",\"message\":" + jsonString(failure->message) +
                   (failure->details_json.empty() ? "" : ",\"details\":" + failure->details_json) +
                   "}";
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
    if (entry->closeLocked(entry->status == "active" ? "stopped" : entry->status,
                           Clock::now() + milliseconds(options_.cancel_grace_ms),
                           milliseconds(options_.tombstone_ms))) {
        const std::lock_guard<std::mutex> registryLock(mutex_);
        releaseLiveLocked(entry->owner);
        scheduleLocked(entry, entry->remove_at);
    }
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
    // At most once a second: while the store refuses, every try fails.
    if (Clock::now() >= next_unrecorded_retry_ && unrecorded_pending_.exchange(false)) {
        next_unrecorded_retry_ = Clock::now() + std::chrono::seconds(1);
        std::vector<std::shared_ptr<Entry>> all;
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            all.reserve(entries_.size());
            for (const auto& [id, entry] : entries_) {
                all.push_back(entry);
            }
        }
        for (const std::shared_ptr<Entry>& entry : all) {
            const std::lock_guard<std::mutex> lock(entry->mutex);
            if (entry->unrecorded) {
                entry->recordTerminal(*entry->unrecorded);  // sets the flag again on failure
            }
        }
    }
    // Streams that completed: destroyed now (their threads joined), their status settled.
    for (const std::weak_ptr<Entry>& weak : completions_->take()) {
        if (const std::shared_ptr<Entry> entry = weak.lock()) {
            const std::lock_guard<std::mutex> lock(entry->mutex);
            entry->destroyIfCompletedLocked();
        }
    }
    // Sessions whose deadline has come (idle, lifetime, end of tombstone), and only those.
    const auto now = Clock::now();
    std::vector<std::shared_ptr<Entry>> due;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
            const auto first = deadlines_.begin();
            const Clock::time_point when = first->first;
            std::shared_ptr<Entry> entry = first->second.lock();
            deadlines_.erase(first);
            if (entry != nullptr && entry->scheduled == when) {
                entry->scheduled = Clock::time_point::max();
                due.push_back(std::move(entry));
            }
        }
    }
    if (due.empty()) {
        if (now >= next_clean_) {
            next_clean_ = now + std::chrono::seconds(30);
            cleanStore();
        }
        return;
    }
    std::vector<std::pair<std::shared_ptr<Entry>, Clock::time_point>> again;
    std::vector<std::shared_ptr<Entry>> expired;
    std::vector<std::string> gone;
    for (const std::shared_ptr<Entry>& entry : due) {
        const std::lock_guard<std::mutex> lock(entry->mutex);
        entry->destroyIfCompletedLocked();
        if (!entry->closed && now >= entry->deadline()) {
            if (entry->closeLocked("expired", now, milliseconds(options_.tombstone_ms))) {
                expired.push_back(entry);
                audit(entry->owner, *entry->op, "expire", Result<std::string>(std::string()),
                      AuditFacts{entry->id, "expired", std::nullopt, {}});
            }
        }
        if (!entry->closed) {
            again.emplace_back(entry, entry->deadline());  // polled meanwhile: not yet
        } else if (now < entry->remove_at) {
            again.emplace_back(entry, entry->remove_at);
        } else if (entry->upstreamOpen()) {
            // Its plugin has not completed since the cancel: look again at the next tick.
            again.emplace_back(entry, now + milliseconds(options_.tick_ms));
        } else {
            gone.push_back(entry->id);
        }
    }
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (const std::shared_ptr<Entry>& entry : expired) {
            releaseLiveLocked(entry->owner);
        }
        for (const auto& [entry, when] : again) {
            scheduleLocked(entry, when);
        }
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
        deadlines_.clear();
        agent_live_.clear();
        workspace_live_.clear();
    }
    const auto until = Clock::now() + grace;
    for (auto& [id, entry] : all) {
        const std::lock_guard<std::mutex> lock(entry->mutex);
        entry->closeLocked("stopped", Clock::now(), milliseconds(0));
        if (entry->unrecorded) {
            // An end the store refused earlier (disk full) gets a last try before the exit; the
            // tick retries at most once a second and may not have come round since space returned.
            entry->recordTerminal(*entry->unrecorded);
        }
    }
    std::size_t abandoned = 0;
    for (auto& [id, entry] : all) {
        const std::lock_guard<std::mutex> lock(entry->mutex);
        if (entry->upstreamOpen() && entry->call->waitForComplete(until)) {
            entry->destroyIfCompletedLocked();
        }
        if (entry->upstreamOpen()) {
            ++abandoned;  // the plugin still runs: keep what it uses alive for ever
            entry->abandonUpstreamLocked();
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
