#include "federation/resource_subscriptions.h"

namespace crank::federation {

Result<bool> ResourceSubscriptions::add(const std::string& workspace, const std::string& uri,
                                        const std::string& upstream, const std::string& subscriber,
                                        const std::string& agent, const Limits& limits) {
    if (uri.size() > kMaxSubscribedUriBytes) {
        return Error{ErrorCode::invalid_argument, "params.uri: a subscribed URI is at most " +
                                                      std::to_string(kMaxSubscribedUriBytes) +
                                                      " bytes, got " + std::to_string(uri.size())};
    }
    const std::lock_guard lock(mutex_);
    const auto key = std::make_pair(workspace, uri);
    const auto found = entries_.find(key);
    if (found != entries_.end() && found->second.subscribers.count(subscriber) != 0) {
        return false;
    }
    std::size_t& client = per_client_[{upstream, subscriber}];
    std::size_t& ofAgent = per_agent_[{upstream, workspace, agent}];
    if (client >= limits.per_client || ofAgent >= limits.per_agent) {
        const bool byClient = client >= limits.per_client;
        if (client == 0) {
            per_client_.erase({upstream, subscriber});
        }
        if (ofAgent == 0) {
            per_agent_.erase({upstream, workspace, agent});
        }
        return Error{ErrorCode::unavailable,
                     byClient ? "this client follows " + std::to_string(limits.per_client) +
                                    " resources of upstream " + upstream +
                                    " already (upstreams[].max_subscriptions_per_client)"
                              : "this agent's clients follow " + std::to_string(limits.per_agent) +
                                    " resources of upstream " + upstream +
                                    " already (upstreams[].max_subscriptions_per_agent)"};
    }
    ++client;
    ++ofAgent;
    Entry& entry = entries_[key];
    entry.upstream = upstream;
    entry.subscribers.emplace(subscriber, agent);
    by_subscriber_[{workspace, subscriber}].insert(uri);
    return entry.subscribers.size() == 1;
}

void ResourceSubscriptions::drop(const std::string& workspace, const std::string& uri, Entry& entry,
                                 const std::string& subscriber) {
    const auto it = entry.subscribers.find(subscriber);
    if (it == entry.subscribers.end()) {
        return;
    }
    const auto client = per_client_.find({entry.upstream, subscriber});
    if (client != per_client_.end() && --client->second == 0) {
        per_client_.erase(client);
    }
    const auto agent = per_agent_.find({entry.upstream, workspace, it->second});
    if (agent != per_agent_.end() && --agent->second == 0) {
        per_agent_.erase(agent);
    }
    entry.subscribers.erase(it);
    const auto followed = by_subscriber_.find({workspace, subscriber});
    if (followed != by_subscriber_.end()) {
        followed->second.erase(uri);
        if (followed->second.empty()) {
            by_subscriber_.erase(followed);
        }
    }
}

bool ResourceSubscriptions::remove(const std::string& workspace, const std::string& uri,
                                   const std::string& subscriber) {
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find({workspace, uri});
    if (it == entries_.end() || it->second.subscribers.count(subscriber) == 0) {
        return false;
    }
    drop(workspace, uri, it->second, subscriber);
    if (!it->second.subscribers.empty()) {
        return false;
    }
    entries_.erase(it);
    return true;
}

std::vector<ResourceSubscriptions::Orphan> ResourceSubscriptions::forget(
    const std::string& workspace, const std::string& subscriber) {
    std::vector<Orphan> orphans;
    const std::lock_guard lock(mutex_);
    const auto followed = by_subscriber_.find({workspace, subscriber});
    if (followed == by_subscriber_.end()) {
        return orphans;
    }
    const std::set<std::string> uris = followed->second;  // drop() edits the original
    for (const std::string& uri : uris) {
        const auto it = entries_.find({workspace, uri});
        if (it == entries_.end()) {
            continue;
        }
        drop(workspace, uri, it->second, subscriber);
        if (it->second.subscribers.empty()) {
            orphans.push_back(Orphan{it->second.upstream, workspace, uri});
            entries_.erase(it);
        }
    }
    return orphans;
}

std::vector<std::string> ResourceSubscriptions::subscribers(const std::string& workspace,
                                                            const std::string& uri) const {
    std::vector<std::string> out;
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find({workspace, uri});
    if (it != entries_.end()) {
        for (const auto& [subscriber, agent] : it->second.subscribers) {
            out.push_back(subscriber);
        }
    }
    return out;
}

std::vector<std::string> ResourceSubscriptions::followedOf(const std::string& workspace,
                                                           const std::string& upstream) const {
    const std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [key, entry] : entries_) {
        if (key.first == workspace && entry.upstream == upstream) {
            out.push_back(key.second);
        }
    }
    return out;
}

std::size_t ResourceSubscriptions::size() const {
    const std::lock_guard lock(mutex_);
    return entries_.size();
}

}  // namespace crank::federation
