#pragma once

// Execution mode `session` (issue 6): `{name}_start` opens the operation's upstream stream and
// returns a session id at once; the stream keeps running into the session's bounded buffer
// (SessionBuffer) while `{name}_poll` reads it page by page and `{name}_stop` closes it.
// Sessions expire after idle_timeout_ms without a poll and after max_session_lifetime_ms in all:
// the upstream is closed and polls answer status "expired". An MCP client that disconnects does
// not stop its sessions.
//
// Live upstream streams are held by the node that opened them; each session also has its row in
// the store (stream_sessions: status, cursor, last poll, expiry), written best-effort as it
// changes, so that operators and other nodes see it; terminal rows are deleted once past their
// retention. Rows name their owner node; at start-up a node closes (as failed) the live rows of
// its previous run, whose streams died with it.
//
// The stream is the plugin's (transport_behavior server_stream: stream_open), or, for a
// request/response upstream, one the host runs itself by polling it (PolledStream).
//
// Cost at many sessions: a start checks the agent's and workspace's limits against live
// counters (no scan); the tick touches only the sessions whose deadline (idle, lifetime, end of
// tombstone) has come, from a deadline-ordered map, and those whose stream has completed (the
// stream says so through LiveSession::onComplete).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "json/json_value.h"
#include "mcp/tool_registry.h"
#include "runtime/audit_log.h"
#include "runtime/flow_metrics.h"
#include "runtime/operation.h"
#include "runtime/prepared_request.h"
#include "runtime/safety_stage.h"
#include "store/store.h"
#include "util/error.h"

namespace crank::runtime {

class LiveSession;

class SessionRegistry {
public:
    struct Options {
        std::int64_t cancel_grace_ms = 2'000;  ///< how long _stop waits for the plugin
        std::size_t max_sessions = 10'000;     ///< live and recently closed sessions, in all
        /// How long a closed session still answers polls with its final status.
        std::int64_t tombstone_ms = 60'000;
        std::int64_t tick_ms = 100;  ///< how often expiry and completion are checked
        /// Where the session rows go; nullptr: none (tests of the runtime alone).
        std::shared_ptr<store::Store> store;
        /// Where the audit events go (sampled); nullptr: an AuditLog over `store` that records
        /// every one.
        std::shared_ptr<AuditLog> audit;
        /// This node's id: its live rows name it; at start-up its previous incarnation's live
        /// rows are closed as failed (their streams are gone).
        std::string node_id = "local";
        /// How long a terminal row stays in the store before the cleaner deletes it.
        std::int64_t retention_ms = 3'600'000;
        /// Live sessions (not stopped or expired) allowed per agent and per workspace
        /// (auth.agents[].limits.max_sessions, auth.workspaces[].limits.max_sessions). An agent
        /// or workspace not listed has no limit of its own; the anonymous agent ("") has only
        /// its workspace's.
        std::map<std::string, std::int64_t, std::less<>> agent_max_sessions;
        std::map<std::string, std::int64_t, std::less<>> workspace_max_sessions;
        /// Where the sessions' items, drops and upstream errors are counted.
        FlowMetrics flow;
    };

    explicit SessionRegistry(Options options);
    ~SessionRegistry();
    SessionRegistry(const SessionRegistry&) = delete;
    SessionRegistry& operator=(const SessionRegistry&) = delete;
    SessionRegistry(SessionRegistry&&) = delete;
    SessionRegistry& operator=(SessionRegistry&&) = delete;

    /// Opens the stream of `op` with `request`; the _start result object (JSON text), or the
    /// reason it could not start (the plugin's error, a limit).
    /// The session belongs to `caller`: another agent's polls and stops do not find it.
    Result<std::string> start(const OperationPtr& op, const PreparedRequest& request,
                              std::uint64_t sampling_seed, const SafetyLimits& safety_limits,
                              const mcp::Caller& caller);
    /// `{session_id, cursor?, max_items?}`: the _poll result object.
    Result<std::string> poll(const Operation& op, std::string_view arguments_json,
                             const mcp::Caller& caller);
    /// `{session_id}`: closes the session; the _stop result object.
    Result<std::string> stop(const Operation& op, std::string_view arguments_json,
                             const mcp::Caller& caller);

    /// The admin API's stop: the session `session_id` of any agent, held by this node, closed
    /// as its owner's _stop would (and audited as that). not_found when this node does not hold
    /// it.
    Result<std::string> stopById(std::string_view session_id);
    /// Stops every live session of `op` held by this node (its tools were withdrawn: nobody can
    /// poll or stop them any more). Returns how many.
    std::size_t stopAllOf(const Operation& op);

    /// Closes every session (status "stopped"); waits up to `grace` for their plugins. Returns
    /// how many streams never completed (their plugin libraries must stay loaded).
    std::size_t shutdown(std::chrono::milliseconds grace);

    /// Sessions held (live and closed ones still answering).
    /// A reload's (or the admin API's) max_sessions of the agents and workspaces, by id: the next
    /// session is counted against them; those open now are kept.
    void setLimits(std::map<std::string, std::int64_t, std::less<>> agents,
                   std::map<std::string, std::int64_t, std::less<>> workspaces);
    std::size_t size() const;

    /// The input and output schemas of the three tools (JSON text).
    static std::string pollInputSchema(std::int64_t max_items);
    static std::string stopInputSchema();
    static std::string startOutputSchema();
    static std::string pollOutputSchema();
    static std::string stopOutputSchema();

private:
    struct Entry;
    /// What a call did, for its audit entry (filled as the call goes, so nothing is re-read).
    struct AuditFacts {
        std::string session_id;
        std::string status;
        std::optional<std::size_t> items;  ///< poll: items returned
        std::string cursor;                ///< poll: the cursor returned
    };
    std::shared_ptr<Entry> find(const Operation& op, const json::Value& args,
                                const mcp::Caller& caller, AuditFacts& facts, Error& error);
    Result<std::string> startImpl(const OperationPtr& op, const PreparedRequest& request,
                                  std::uint64_t sampling_seed, const SafetyLimits& safety_limits,
                                  const mcp::Caller& caller, AuditFacts& facts);
    /// Parses the arguments of a poll or stop, runs `impl` and audits `session.<verb>`.
    using Impl = Result<std::string> (SessionRegistry::*)(const Operation&, const json::Value&,
                                                          const mcp::Caller&, AuditFacts&);
    Result<std::string> onSession(const Operation& op, std::string_view arguments_json,
                                  const mcp::Caller& caller, std::string_view verb, Impl impl);
    Result<std::string> pollImpl(const Operation& op, const json::Value& args,
                                 const mcp::Caller& caller, AuditFacts& facts);
    Result<std::string> stopImpl(const Operation& op, const json::Value& args,
                                 const mcp::Caller& caller, AuditFacts& facts);
    /// Appends `session.<verb>` to the store's audit log (best effort). The detail holds no
    /// secret: an error message is scrubbed by the operation's scrubber first.
    void audit(const mcp::Caller& caller, const Operation& op, std::string_view verb,
               const Result<std::string>& outcome, const AuditFacts& facts) const;
    /// The refusal when `caller`'s agent or workspace is at its session limit; else counts one
    /// more live session for them (released by releaseLive, once per session). Under mutex_.
    std::optional<Error> reserveLiveLocked(const mcp::Caller& caller);
    /// A session of `owner` is no longer live (stopped, expired, or it never started).
    void releaseLive(const mcp::Caller& owner);
    void releaseLiveLocked(const mcp::Caller& owner);
    /// Makes the tick look at `entry` at `when` (or earlier, if it is already due earlier).
    /// Under mutex_.
    void scheduleLocked(const std::shared_ptr<Entry>& entry,
                        std::chrono::steady_clock::time_point when);
    void closeOrphans();
    void tick();
    void run();
    void cleanStore();

    Options options_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::map<std::string, std::shared_ptr<Entry>, std::less<>> entries_;
    /// When the tick next looks at a session. An item whose time is not its entry's `scheduled`
    /// is stale (the entry was rescheduled earlier) and is skipped. Deadlines only move later
    /// (a poll pushes the idle deadline back): the tick recomputes and reschedules, so a poll
    /// does not touch this map.
    std::multimap<std::chrono::steady_clock::time_point, std::weak_ptr<Entry>> deadlines_;
    /// Live (not stopped or expired) sessions per (workspace, agent) and per workspace.
    std::map<std::pair<std::string, std::string>, std::int64_t> agent_live_;
    std::map<std::string, std::int64_t, std::less<>> workspace_live_;
    /// Sessions whose stream completed since the last tick (shared: a LiveSession that outlives
    /// this registry, its plugin never completing, may still push into it).
    struct Completions;
    std::shared_ptr<Completions> completions_;
    bool stopping_ = false;
    std::chrono::steady_clock::time_point next_clean_{};
    /// Some closed session's terminal status is not in the store yet (Entry::recordTerminal).
    std::atomic<bool> unrecorded_pending_{false};
    std::chrono::steady_clock::time_point next_unrecorded_retry_{};
    std::thread thread_;
};

}  // namespace crank::runtime
