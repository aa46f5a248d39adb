#pragma once

// The resources clients subscribed to through the federation (resources/subscribe of a 2025
// session, resourceSubscriptions of a 2026 listen): per workspace and URI, who follows it and
// which upstream serves it. An upstream is subscribed once per resource, for its first
// subscriber on the node, and unsubscribed when the last one is gone. Bounded per client (a
// session or a listen) and per agent, for each upstream, so that one agent cannot grow the
// table, or the upstream's subscriptions, without end.
//
// THREADING: every member may be called from any thread.

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "util/error.h"

namespace crank::federation {

/// The longest URI a client may subscribe to.
inline constexpr std::size_t kMaxSubscribedUriBytes = 2048;

class ResourceSubscriptions {
public:
    struct Limits {
        std::size_t per_client = 256;   ///< resources of one upstream one client follows
        std::size_t per_agent = 1'024;  ///< resources of one upstream one agent's clients follow
    };
    /// A resource of `upstream` nobody follows any more.
    struct Orphan {
        std::string upstream;
        std::string workspace;
        std::string uri;
    };

    /// `subscriber` (of `agent`) follows `uri` of `workspace`, served by `upstream`. True when it
    /// is the resource's first subscriber (the upstream is to be told), false when the upstream
    /// already is (or the subscriber already followed it). unavailable naming the limit
    /// (the upstream's `max_subscriptions_per_client` or `_per_agent`); invalid_argument for a
    /// URI over kMaxSubscribedUriBytes.
    Result<bool> add(const std::string& workspace, const std::string& uri,
                     const std::string& upstream, const std::string& subscriber,
                     const std::string& agent, const Limits& limits);
    /// `subscriber` no longer follows `uri`. True when it was the last (the upstream is to be
    /// told).
    bool remove(const std::string& workspace, const std::string& uri,
                const std::string& subscriber);
    /// `subscriber` of `workspace` has ended: it follows nothing any more. The resources left
    /// without a subscriber.
    std::vector<Orphan> forget(const std::string& workspace, const std::string& subscriber);

    /// Who follows `uri` of `workspace` (empty: nobody).
    std::vector<std::string> subscribers(const std::string& workspace,
                                         const std::string& uri) const;
    /// The URIs of `workspace` that `upstream` serves and somebody follows.
    std::vector<std::string> followedOf(const std::string& workspace,
                                        const std::string& upstream) const;
    /// Resources followed now, all workspaces together.
    std::size_t size() const;

private:
    struct Entry {
        std::string upstream;
        std::map<std::string, std::string> subscribers;  ///< subscriber -> its agent
    };
    /// Removes `subscriber` of `entry` (`uri`'s) and its counts (under mutex_).
    void drop(const std::string& workspace, const std::string& uri, Entry& entry,
              const std::string& subscriber);

    mutable std::mutex mutex_;
    std::map<std::pair<std::string, std::string>, Entry> entries_;  ///< (workspace, uri)
    /// (upstream, subscriber) and (upstream, workspace, agent) -> resources followed.
    std::map<std::pair<std::string, std::string>, std::size_t> per_client_;
    std::map<std::tuple<std::string, std::string, std::string>, std::size_t> per_agent_;
    /// (workspace, subscriber) -> the URIs it follows.
    std::map<std::pair<std::string, std::string>, std::set<std::string>> by_subscriber_;
};

}  // namespace crank::federation
