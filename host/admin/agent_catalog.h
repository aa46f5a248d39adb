#pragma once

// The admin API's agents (docs/admin-api.md, "Agents"): kept in the store with their keys as
// SHA-256 digests (store/agent_record.h), so every node that shares the store admits them.
// A key is made here from the kernel's CSPRNG and shown once, in the answer that created it.
//
// An API agent calls as `api:ID` (its jobs, sessions, tasks, rates and audit entries name it so):
// ':' is in no agent id of a config file, so no API agent can take the identity, or reach the
// jobs, of a file's agent, on this node or on another whose file differs.
//
// What the endpoint admits is pushed through `apply` (app::AccessUpdates joins it with the
// config file's agents): at once after a change on this node, and by sync() every
// admin.sync_interval_ms for changes made on other nodes. A revoked key is refused at once on
// the node that revoked it, and on the others within that interval.
//
// THREADING: every method may be called from any thread; changes and syncs are serialised.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <rapidjson/fwd.h>

#include "admin/operation_catalog.h"
#include "config/config.h"
#include "store/store.h"

namespace crank::admin {

/// What an API agent's id is prefixed with when it calls.
inline constexpr std::string_view kApiAgentPrefix = "api:";

/// Live keys one agent may hold at once (a rotation needs two).
inline constexpr std::size_t kMaxKeysPerAgent = 8;

class AgentCatalog {
public:
    /// The API's agents as the endpoint must admit them.
    using Apply = std::function<void(std::vector<config::Agent>)>;
    /// The config file's agents now (a reload changes them).
    using FileAgents = std::function<std::vector<config::Agent>()>;

    AgentCatalog(const config::Config& config, std::shared_ptr<store::Store> store, Apply apply,
                 FileAgents file_agents);
    ~AgentCatalog();
    AgentCatalog(const AgentCatalog&) = delete;
    AgentCatalog& operator=(const AgentCatalog&) = delete;

    /// Applies the store's agents now, then follows it every `interval` until stop().
    void start(std::chrono::milliseconds interval);
    void stop();
    void sync();

    /// A new key: its row (digest and prefix) and the key itself, to show once.
    struct NewKey {
        store::AgentKeyRecord record;
        std::string secret;
    };

    /// Creates agent `id` in `workspace` with `limits` (an agent's `limits` object; null:
    /// the defaults) and its first key. Errors name the field (422), a taken id (409).
    std::optional<ApiError> create(const std::string& id, const std::string& workspace,
                                   const rapidjson::Value* limits, store::AgentRecord& agent,
                                   NewKey& key);
    /// Adds a key to agent `id` (at most kMaxKeysPerAgent live ones).
    std::optional<ApiError> addKey(const std::string& id, NewKey& key);
    /// Revokes key `key_id` of agent `id`.
    std::optional<ApiError> revokeKey(const std::string& id, const std::string& key_id,
                                      store::AgentKeyRecord& key);
    /// Replaces agent `id`'s limits.
    std::optional<ApiError> setLimits(const std::string& id, const rapidjson::Value& limits);
    /// Deletes agent `id` and revokes its keys.
    std::optional<ApiError> remove(const std::string& id);

    /// The API's agent `id` (deleted ones too); 404 when there is none, 409 read_only when only
    /// the config file defines it.
    std::optional<ApiError> find(const std::string& id, store::AgentRecord& agent) const;

    store::Store& store() const { return *store_; }
    const config::Config& config() const { return config_; }
    std::vector<config::Agent> fileAgents() const { return file_agents_(); }
    bool fileDefines(std::string_view id) const;

private:
    std::optional<ApiError> newKey(const std::string& id, NewKey& key);
    void syncLocked();
    void loop(std::chrono::milliseconds interval);

    const config::Config& config_;
    std::shared_ptr<store::Store> store_;
    Apply apply_;
    FileAgents file_agents_;

    std::mutex change_mutex_;  // changes and syncs, one at a time
    std::string applied_;      // what was applied last, as a fingerprint; under change_mutex_

    std::mutex loop_mutex_;
    std::condition_variable loop_wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace crank::admin
