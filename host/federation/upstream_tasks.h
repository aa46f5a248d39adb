#pragma once

// The tasks that upstreams run for crank's clients, under the ids crank gave them: a client never
// sees an upstream's own id, which could collide across upstreams and would tell one task's id
// from another's. In memory and bounded (the oldest go first, and an agent's oldest once it holds
// its share): a task lives on the node whose connection created it.
//
// A task is in the era of the upstream that created it: a 2025-11-25 server's (the `task` member
// of a tools/call, tasks/result) or a 2026-07-28 server's (the Tasks extension: a flat
// `resultType:"task"` answer, tasks/update, its result inlined in tasks/get).
//
// THREADING: every member may be called from any thread; the lock is a leaf (nothing is called
// while it is held).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "json/json_value.h"
#include "util/error.h"

namespace crank::federation {

struct UpstreamLink;

class UpstreamTasks {
public:
    /// What crank knows of one task.
    struct Route {
        std::weak_ptr<UpstreamLink> link;  ///< expired once the upstream is removed
        std::uint64_t serial = 0;          ///< the link's
        std::string upstream_id;
        std::string workspace;
        std::string session;  ///< the MCP session that created it (gets its status notices)
        std::string agent;    ///< only the agent that created it may use it
        bool modern = false;  ///< created by a 2026-07-28 upstream (the Tasks extension)
        /// Set: no upstream task. A 2025 session asked for a task and the 2026 upstream, whose
        /// choice it is, answered at once: this result, kept as a completed task of crankd's.
        std::shared_ptr<const std::string> settled;
        std::int64_t created_ms = 0;  ///< when crankd gave the id (Unix ms)
    };

    static constexpr std::size_t kMaxTasks = 10'000;
    /// Tasks kept per agent: one agent's flood pushes out its own oldest, not everyone's.
    static constexpr std::size_t kMaxTasksPerAgent = 1'000;
    /// Longest upstream task id taken (a longer one is refused, not kept).
    static constexpr std::size_t kMaxUpstreamIdBytes = 512;
    /// Bytes of settled results kept in all, and per agent (past its share an agent's oldest
    /// tasks go first, past the total anyone's).
    static constexpr std::size_t kMaxSettledBytes = std::size_t{64} * 1024 * 1024;
    static constexpr std::size_t kMaxSettledBytesPerAgent = std::size_t{8} * 1024 * 1024;
    /// Every id crank gives starts so: Catalog::ownsTask answers by it.
    static constexpr std::string_view kPrefix = "up-";

    /// Registers the task `upstream_id` of `link` that the upstream just created, and returns
    /// crank's id for it, unguessable on its own. A creation is always a new task: an upstream
    /// that gives an id again (restarted, or numbering its tasks) gets a new crank id, and the
    /// older task of that id is forgotten (never handed to another caller).
    std::string add(UpstreamLink& link, const std::string& upstream_id,
                    const std::string& workspace, const std::string& session,
                    const std::string& agent, bool modern = false);

    /// `result_json` (a tools/call result of `link`) as a client gets it: when it is a task the
    /// upstream created (the Tasks extension's flat answer), the task registered for `agent` of
    /// `workspace` (a modern one) and its id renamed to crank's; any other result unchanged.
    /// internal for a task answer that cannot be taken, or that `declared` (the caller declared
    /// the extension) says nobody asked for.
    Result<std::string> adoptCreated(UpstreamLink& link, std::string result_json,
                                     const std::string& workspace, const std::string& agent,
                                     bool declared);

    /// A completed task of crankd's holding `result_json` (a 2026 upstream's answer to a 2025
    /// session's task-augmented tools/call, given at once), and its id; invalid_argument when
    /// the result is larger than an agent's share of kept results.
    Result<std::string> settle(UpstreamLink& link, std::string result_json,
                               const std::string& workspace, const std::string& session,
                               const std::string& agent);

    /// The task crank calls `id`, if it is still known.
    std::optional<Route> find(const std::string& id) const;

    /// Crank's id of the task `upstream_id` of `link`, and the session that created it.
    std::optional<std::pair<std::string, std::string>> crankId(
        const UpstreamLink& link, const std::string& upstream_id) const;

    /// `params_json` of a request an upstream sends to a client of `agent`, with the upstream's
    /// task id in its related-task `_meta` turned into crank's; the related-task member left out
    /// when the task is unknown or another agent's; nullopt when params that name a task cannot
    /// be read (the request is then not relayed: it could show the upstream's id).
    std::optional<std::string> toClientIds(const UpstreamLink& link, std::string_view params_json,
                                           const std::string& agent) const;

    /// A 2025 session waits on `id` (tasks/result) until the guard goes: false when another
    /// request waits on it already (one waiter per task).
    class Wait {
    public:
        Wait(UpstreamTasks& tasks, std::string id);
        ~Wait();
        Wait(const Wait&) = delete;
        Wait& operator=(const Wait&) = delete;
        bool held() const { return held_; }

    private:
        UpstreamTasks& tasks_;
        std::string id_;
        bool held_ = false;
    };

private:
    /// Drops the task `id` (under mutex_), leaving `order_` and `by_agent_` to skip it later.
    void drop(const std::string& id);
    /// Keeps `route` as `id` within the bounds (under mutex_).
    void keep(const std::string& id, Route route);

    mutable std::mutex mutex_;
    std::map<std::string, Route> routes_;
    /// Each agent's ids, oldest first (ids already dropped are skipped when met).
    std::map<std::string, std::deque<std::string>> by_agent_;
    /// (the link's serial, the upstream's id) -> crank's id.
    std::map<std::pair<std::uint64_t, std::string>, std::string> ids_;
    std::deque<std::string> order_;
    /// Settled ids, oldest first (the byte bound drops these, not the other tasks).
    std::deque<std::string> settled_order_;
    std::set<std::string, std::less<>> waited_;  ///< ids a tasks/result waits on
    std::size_t settled_bytes_ = 0;
    std::map<std::string, std::size_t> settled_by_agent_;
};

/// `json` with every member "taskId" whose value is `from` (in objects at most 16 levels deep)
/// set to `to`; nullopt when `json` cannot be read (never the text unchanged: it would show a
/// client the upstream's own id).
std::optional<std::string> withTaskId(std::string_view json, const std::string& from,
                                      const std::string& to);

/// The same for a document already read: renamed in place, then written.
std::string withTaskId(json::Document& doc, const std::string& from, const std::string& to);

/// The upstream's task id when `result` (a tools/call's result, read) is the Tasks extension's
/// created task (`resultType:"task"`); "" when it is another result. `fault` says why a task
/// answer cannot be taken (no string taskId, or one longer than kMaxUpstreamIdBytes).
std::string createdTaskId(const json::Value& result, std::string& fault);

}  // namespace crank::federation
