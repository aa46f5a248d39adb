#pragma once

// The admin API's own upstreams (docs/admin-api.md, "Upstreams"): kept in the store as rows of
// operations of kind upstream (store/operation_kind.h), so that they take the same versions,
// publish and rollback as operations, and run on every node that shares the store.
//
// A published version is read by the config file's rules (config::loadUpstream), checked by its
// adapter, and run through the UpstreamDirectory: added, or put in place of the version before
// (a hand-over without a gap); a deleted upstream is removed, its calls in flight given a grace.
// The config file's upstreams are read-only here and keep their names: an admin upstream cannot
// take one. sync() (every admin.sync_interval_ms) runs what the store says is published, so
// another node's publish, rollback or delete reaches this node within that interval.
//
// THREADING: every method may be called from any thread; publishing, removing and syncing are
// serialised. Must be stopped before the directory's upstreams are.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <rapidjson/fwd.h>

#include "admin/operation_catalog.h"
#include "admin/upstream_directory.h"
#include "config/config.h"
#include "config/config_error.h"
#include "store/store.h"

namespace crank::admin {

/// Live upstreams the admin API may hold (each is a connection, a process for stdio, on every
/// node); the store's list calls return at most kMaxListLimit rows, which sync() must see whole.
inline constexpr std::size_t kMaxAdminUpstreams = 256;

class UpstreamCatalog {
public:
    UpstreamCatalog(const config::Config& config, std::shared_ptr<store::Store> store,
                    UpstreamDirectory& directory);
    ~UpstreamCatalog();
    UpstreamCatalog(const UpstreamCatalog&) = delete;
    UpstreamCatalog& operator=(const UpstreamCatalog&) = delete;

    /// Runs every published admin upstream, then keeps following the store every `interval`,
    /// on a thread of its own until stop() (crankd serves meanwhile: an upstream that is slow to
    /// open holds nothing else up). One that fails to run is tried again after `interval`,
    /// doubled at each failure up to 5 minutes, or at once when another version is published.
    void start(std::chrono::milliseconds interval);
    /// Asks a sync under way to end after the upstream it is at (crankd stops: then the
    /// federation's stop ends that one's open early). stop() waits for it.
    void requestStop();
    void stop();
    /// Makes what runs match the store once (published versions, deletions).
    void sync();

    /// The upstream object `upstream` checked as an admin upstream: read by the config file's
    /// rules, its workspace known, its adapter's config accepted, and its name free (taken
    /// neither by the config file nor by another live admin upstream than `self_id`). Errors
    /// have paths into the object; `conflict` tells a taken name from an invalid upstream.
    struct Checked {
        std::optional<config::UpstreamConfig> upstream;
        std::vector<config::ConfigError> errors;
        bool conflict = false;
        bool unavailable = false;  ///< the store could not be read: nothing is known to be wrong
    };
    Checked check(const rapidjson::Value& upstream, std::string_view self_id) const;
    /// check() of stored config text.
    Checked checkText(std::string_view config_json, std::string_view self_id) const;

    /// The live admin upstream named `name`: its row, or the error to answer (404; 409
    /// read_only when the config file defines it).
    std::optional<ApiError> find(std::string_view name, store::OperationRecord& record) const;

    /// Publishes `version` of `record` (checked again first), optimistic against
    /// `expected_published` (nullopt: what is published now), then runs it here.
    std::optional<ApiError> publish(const store::OperationRecord& record, std::int64_t version,
                                    std::optional<std::optional<std::int64_t>> expected_published);
    /// Deletes `record` (its versions stay as history) and removes what runs of it here, its
    /// calls in flight given `grace` (returns once they ended).
    std::optional<ApiError> remove(const store::OperationRecord& record,
                                   std::chrono::milliseconds grace);

    /// What this node runs of admin upstream `id`: the version, and why it does not run when
    /// it failed to (empty when it runs). nullopt: nothing of it was applied here.
    struct Applied {
        std::int64_t version = 0;  ///< the version last applied (or tried)
        std::string error;         ///< why `version` does not run here; empty when it does
        /// The version that runs here: `version`, or the one before when a new one failed to
        /// take its place; nullopt when none runs.
        std::optional<std::int64_t> running_version;
    };
    std::optional<Applied> applied(std::string_view id) const;

    store::Store& store() const { return *store_; }
    UpstreamDirectory& directory() const { return directory_; }

private:
    struct Entry {
        std::string name;
        std::int64_t version = 0;
        std::optional<config::UpstreamConfig> running;  ///< what the directory runs of it
        std::int64_t running_version = 0;               ///< the version of `running`
        std::string error;
        int failures = 0;  ///< in a row, for the back-off
        std::chrono::steady_clock::time_point retry_at{};
    };
    /// Runs version `version` (config `upstream`) of `record`. Under publish_mutex_.
    void apply(const store::OperationRecord& record, std::int64_t version,
               const config::UpstreamConfig& upstream);
    /// Removes what runs of `id`. Under publish_mutex_.
    void withdraw(const std::string& id, std::chrono::milliseconds grace, bool wait);
    void syncLocked();
    void loop(std::chrono::milliseconds interval);
    /// A stdio `config.command` that admin.upstream_commands does not allow.
    std::vector<config::ConfigError> commandErrors(const config::UpstreamConfig& upstream) const;

    const config::Config& config_;
    std::shared_ptr<store::Store> store_;
    UpstreamDirectory& directory_;

    mutable std::mutex publish_mutex_;                   // publish, remove, sync: one at a time
    mutable std::mutex mutex_;                           // entries_
    std::map<std::string, Entry, std::less<>> entries_;  // by id

    std::chrono::milliseconds interval_{5000};  // set by start()
    std::atomic<bool> halt_{false};

    std::mutex loop_mutex_;
    std::condition_variable loop_wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace crank::admin
