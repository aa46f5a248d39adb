#pragma once

#include <chrono>
#include <condition_variable>
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

#include "config/config.h"
#include "config/config_error.h"
#include "runtime/operation.h"
#include "store/store.h"

namespace crank::mcp {
class FunctionToolRegistry;
}  // namespace crank::mcp
namespace crank::plugins {
class PluginRegistry;
}  // namespace crank::plugins
namespace crank::runtime {
class OperationRunner;
}  // namespace crank::runtime

namespace crank::admin {

/// Why an admin request failed, as the API answers it (docs/admin-api.md, "Conventions").
struct ApiError {
    int status = 500;
    std::string code = "internal";
    std::string message;
    /// Validation problems, with paths into the operation object the request sent.
    std::vector<config::ConfigError> fields;
    std::optional<std::int64_t> latest_version;     ///< 409 on an edit: the current version
    std::optional<std::int64_t> published_version;  ///< 409 on a publish: what is published
};

/// An ApiError for a store failure: 404, 409, 503 or 500 by its code.
ApiError storeError(const Error& error);

/// The operations of the admin API, and which of their versions serve tools on this node.
///
/// Operations from the config file are published at start-up by crankd and are read-only here.
/// Admin operations live in the store; a published version is compiled against the loaded
/// plugins and its tools are put in its workspace's tool registry (which sends list_changed).
/// Other nodes sharing the store publish too: sync() (every admin.sync_interval_ms) serves what
/// the store says is published.
///
/// THREADING: every method may be called from any thread; publishing and syncing are
/// serialised. Must be destroyed before the runner, the registries and the plugins it uses.
class OperationCatalog {
public:
    struct Deps {
        const config::Config* config = nullptr;
        const plugins::PluginRegistry* plugins = nullptr;
        std::shared_ptr<store::Store> store;
        runtime::OperationRunner* runner = nullptr;
        /// Each workspace's tool registry (the same ones the MCP endpoint serves).
        std::map<std::string, mcp::FunctionToolRegistry*> tools;
        /// The operations of the config file, compiled (shown read-only).
        std::vector<runtime::OperationPtr> config_operations;
    };

    explicit OperationCatalog(Deps deps);
    ~OperationCatalog();
    OperationCatalog(const OperationCatalog&) = delete;
    OperationCatalog& operator=(const OperationCatalog&) = delete;

    /// Serves every published admin operation now, then keeps following the store every
    /// `interval` on a thread of its own until stop().
    void start(std::chrono::milliseconds interval);
    void stop();
    /// Makes the served set match the store once (published versions, deletions).
    void sync();

    /// The operation object `operation` checked as an admin operation would be: read by the
    /// config file's rules, compiled against the plugins, and its name and tools free in its
    /// workspace (`self_id`: the admin operation being edited, whose own name and tools do not
    /// count). Errors have paths into the object; `conflict` tells a taken name from an invalid
    /// operation.
    struct Checked {
        runtime::OperationPtr operation;
        std::vector<config::ConfigError> errors;
        bool conflict = false;
    };
    /// Whether check() looks at the name and tools (a test run publishes nothing: it does not).
    enum class NameCheck { unique, ignored };
    Checked check(const rapidjson::Value& operation, std::string_view self_id,
                  NameCheck names = NameCheck::unique) const;
    /// check() of stored config text.
    Checked checkText(std::string_view config_json, std::string_view self_id,
                      NameCheck names = NameCheck::unique) const;

    /// Publishes `version` of admin operation `id` (see docs/admin-api.md): compiled and its tools
    /// free first, then the store's optimistic publish against `expected_published` (nullopt:
    /// what is published now), then served. The tool names.
    std::optional<ApiError> publish(std::string_view id, std::int64_t version,
                                    std::optional<std::optional<std::int64_t>> expected_published,
                                    std::vector<std::string>& tools);
    /// Deletes admin operation `id` and withdraws its tools.
    std::optional<ApiError> remove(std::string_view id);

    /// What this node serves of admin operation `id`.
    struct Served {
        std::int64_t version = 0;
        std::vector<std::string> tools;
    };
    std::optional<Served> served(std::string_view id) const;
    /// Why the published version of `id` is not served (empty when it is, or is not published).
    std::string serveError(std::string_view id) const;

    /// The operations of the config file now (a reload replaces them).
    std::vector<runtime::OperationPtr> configOperations() const;

    /// A reload's operations of the config file, compiled: each new or changed one (its text or
    /// its auth) published in place of the old, each gone one withdrawn, one change of each
    /// workspace's tool set (clients get one list_changed). Refused, with nothing changed, when
    /// a tool name is published already by something else than the file's operations (an admin
    /// operation, an upstream). Sessions and jobs that run are untouched: a job keeps the
    /// operation it started with; a removed session operation's sessions end by their idle
    /// timeout.
    struct ConfigReload {
        std::vector<config::ConfigError> errors;  ///< why it was refused
        std::vector<std::string> changes;         ///< what was applied, one line each
    };
    ConfigReload reloadConfigOperations(std::vector<runtime::OperationPtr> next);
    /// A reload's auth profiles (`next` is the reloaded config): from now on admin operations
    /// are compiled against them, and each one served whose profile changed is compiled again
    /// from its stored version and served in place (its calls in flight keep the old one). One
    /// that no longer compiles (its profile is gone) keeps serving as it was, and is named
    /// under `errors`.
    ConfigReload reloadAuthProfiles(const config::Config& next);
    const config::Config& config() const { return *deps_.config; }
    /// What admin operations are compiled against: the config crankd started with, or the
    /// last reload's (auth profiles, upstreams).
    std::shared_ptr<const config::Config> compileConfig() const;
    const plugins::PluginRegistry& plugins() const { return *deps_.plugins; }
    store::Store& store() const { return *deps_.store; }
    runtime::OperationRunner& runner() const { return *deps_.runner; }

private:
    struct Entry {
        runtime::OperationPtr operation;
        std::int64_t version = 0;
        std::vector<std::string> tools;
    };
    /// Puts `op` (version `version` of `id`) in place of what `id` served. Under publish_mutex_.
    void serve(const std::string& id, const runtime::OperationPtr& op, std::int64_t version);
    /// Withdraws what `id` serves. Under publish_mutex_.
    void withdraw(const std::string& id);
    /// The problems of `op`'s tools in its workspace: tools that something else than `self_id`
    /// publishes, names taken by a config operation or another admin operation.
    std::vector<config::ConfigError> conflicts(const config::OperationConfig& op,
                                               std::string_view self_id) const;
    /// The tools of `op` that another admin operation's published version claims in the store
    /// (served on another node, or not served here because it failed to compile).
    std::vector<config::ConfigError> publishedConflicts(const config::OperationConfig& op,
                                                        std::string_view self_id) const;
    void syncLocked();
    void loop(std::chrono::milliseconds interval);

    Deps deps_;
    mutable std::mutex publish_mutex_;  // publish, remove, sync: one at a time
    mutable std::mutex mutex_;          // served_, errors_, deps_.config_operations
    std::map<std::string, Entry, std::less<>> served_;
    std::map<std::string, std::string, std::less<>> errors_;
    std::shared_ptr<const config::Config> reloaded_;  // a reload's config; null: deps_.config

    std::mutex loop_mutex_;
    std::condition_variable loop_wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace crank::admin
