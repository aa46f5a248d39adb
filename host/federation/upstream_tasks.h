#pragma once

// The tasks that upstreams run for crank's clients, under the ids crank gave them: a client never
// sees an upstream's own id, which could collide across upstreams and would tell one task's id
// from another's. In memory and bounded (the oldest go first): a task lives on the node whose
// connection created it.
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
#include <string>
#include <string_view>
#include <utility>

#include "json/json_value.h"

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
    };

    static constexpr std::size_t kMaxTasks = 10'000;
    /// Every id crank gives starts so: Catalog::ownsTask answers by it.
    static constexpr std::string_view kPrefix = "up-";

    /// Registers the task `upstream_id` of `link` (once: a second call returns the same id) and
    /// returns crank's id for it, unguessable on its own.
    std::string add(UpstreamLink& link, const std::string& upstream_id,
                    const std::string& workspace, const std::string& session,
                    const std::string& agent);

    /// The task crank calls `id`, if it is still known.
    std::optional<Route> find(const std::string& id) const;

    /// Crank's id of the task `upstream_id` of `link`, and the session that created it.
    std::optional<std::pair<std::string, std::string>> crankId(
        const UpstreamLink& link, const std::string& upstream_id) const;

    /// `params_json` of a request an upstream sends to a client, with the upstream's task id in
    /// its related-task `_meta` turned into crank's (unchanged when there is none, or unknown).
    std::string toClientIds(const UpstreamLink& link, std::string_view params_json) const;

private:
    mutable std::mutex mutex_;
    std::map<std::string, Route> routes_;
    /// (the link's serial, the upstream's id) -> crank's id.
    std::map<std::pair<std::uint64_t, std::string>, std::string> ids_;
    std::deque<std::string> order_;
};

/// `json` with every member "taskId" whose value is `from` (in objects at most 16 levels deep)
/// set to `to`; nullopt when `json` cannot be read (never the text unchanged: it would show a
/// client the upstream's own id).
std::optional<std::string> withTaskId(std::string_view json, const std::string& from,
                                      const std::string& to);

/// The same for a document already read: renamed in place, then written.
std::string withTaskId(json::Document& doc, const std::string& from, const std::string& to);

}  // namespace crank::federation
