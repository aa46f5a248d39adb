#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace crank::mcp {

/// What callers hold on this node at once, counted per agent, per workspace and in all, against
/// their bounds: tools/call in progress, 2025-era MCP sessions, open SSE streams. The bounds come
/// from auth.workspaces[].limits, auth.agents[].limits and server.max_concurrent_calls.
///
/// The anonymous agent ("", auth.mode "none") has no agent bound; its workspace's still applies.
/// THREADING: every function may be called from any thread.
class CallerQuotas {
public:
    enum class Kind { call, session, stream };

    /// The most of each kind one holder may have; a negative bound is no bound.
    struct Bounds {
        std::int64_t calls = -1;
        std::int64_t sessions = -1;
        std::int64_t streams = -1;
    };

    /// `reserved_calls`: call slots of the node's bound that only that workspace may take
    /// (config::reservedCalls()); while a workspace uses fewer than its reservation, the rest of
    /// it is kept free for it.
    CallerQuotas(std::map<std::string, Bounds> workspaces, std::map<std::string, Bounds> agents,
                 Bounds node, std::map<std::string, std::int64_t> reserved_calls = {});

    /// A reload's bounds of the workspaces and agents, and the workspaces' reservations (the
    /// node's stays): what is held now is kept and counted against them; a holder over its new
    /// bound takes nothing more until it is under it.
    void setBounds(std::map<std::string, Bounds> workspaces, std::map<std::string, Bounds> agents,
                   std::map<std::string, std::int64_t> reserved_calls);

    /// Takes one `kind` for the agent in the workspace: "" when taken, else why not, in words
    /// that name the limit (nothing is taken then).
    std::string acquire(Kind kind, const std::string& agent, const std::string& workspace);
    /// Gives back what acquire() took.
    void release(Kind kind, const std::string& agent, const std::string& workspace);

    /// How many of `kind` the agent holds (tests, metrics).
    std::int64_t heldByAgent(Kind kind, const std::string& agent) const;

    /// One unit taken by acquire(), given back when the Hold is destroyed (on any thread).
    class Hold {
    public:
        Hold(std::shared_ptr<CallerQuotas> quotas, Kind kind, std::string agent,
             std::string workspace);
        ~Hold();
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;

    private:
        std::shared_ptr<CallerQuotas> quotas_;
        Kind kind_;
        std::string agent_;
        std::string workspace_;
    };

    /// acquire() as a Hold: null with `refusal` set when refused.
    static std::unique_ptr<Hold> hold(const std::shared_ptr<CallerQuotas>& quotas, Kind kind,
                                      const std::string& agent, const std::string& workspace,
                                      std::string& refusal);

private:
    struct Held {
        std::int64_t calls = 0;
        std::int64_t sessions = 0;
        std::int64_t streams = 0;
    };
    static std::int64_t& of(Held& held, Kind kind);
    static std::int64_t of(const Bounds& bounds, Kind kind);
    /// Call slots other workspaces reserve and do not use now (under mutex_).
    std::int64_t reservedByOthers(const std::string& workspace) const;

    // Guarded by mutex_ (setBounds).
    std::map<std::string, Bounds> workspace_bounds_;
    std::map<std::string, Bounds> agent_bounds_;
    const Bounds node_bounds_;
    std::map<std::string, std::int64_t> reserved_calls_;
    mutable std::mutex mutex_;
    std::map<std::string, Held> by_agent_;
    std::map<std::string, Held> by_workspace_;
    Held node_;
};

}  // namespace crank::mcp
