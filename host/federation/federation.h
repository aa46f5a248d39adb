#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/config_error.h"
#include "mcp/catalog.h"
#include "mcp/tool_registry.h"
#include "mcp/upstream_slots.h"
#include "plugins/plugin_registry.h"
#include "util/error.h"

namespace crank::runtime {
class AuditLog;
}  // namespace crank::runtime

namespace crank::federation {

struct UpstreamLink;

/// The federated upstreams of config `upstreams` (issue 7): each is opened through its adapter
/// (CRANK_CAP_FEDERATION, the mcp plugin for MCP servers); its lists (tools, resources,
/// resource templates, prompts) are fetched at start and again after every list_changed, and
/// published in its workspace: tools in the workspace's tool registry, the rest through the
/// workspace's Catalog. Names are published as the operator asked (prefixed, or kept); a name
/// that another upstream or an operation already publishes is not published again, and the
/// collision is logged and shown in status() — never silently shadowed. Calls go to the upstream
/// that published the name, with everything they carry (progress, log lines, cancellation,
/// requests to the client) routed back to the client that made them.
///
/// THREADING: thread-safe. A background thread fetches the lists.
class Federation {
public:
    /// `tools`: each workspace's registry (operations already in it). `page_size`: of the
    /// resources/list, resources/templates/list and prompts/list answers. `audit`: where every
    /// tools/call and task cancel that reaches an upstream is recorded, with its agent, as every
    /// other call's (runtime::AuditLog); null: nowhere.
    Federation(std::vector<config::UpstreamConfig> upstreams,
               const plugins::PluginRegistry& registry,
               std::map<std::string, mcp::FunctionToolRegistry*> tools, std::size_t page_size,
               std::shared_ptr<runtime::AuditLog> audit = nullptr);
    ~Federation();
    Federation(const Federation&) = delete;
    Federation& operator=(const Federation&) = delete;
    Federation(Federation&&) = delete;
    Federation& operator=(Federation&&) = delete;

    /// The catalog's requests that reach an upstream (resources/read, subscribe and
    /// unsubscribe, prompts/get, completion/complete, tools/call with a task, tasks/*) take a
    /// slot of the upstream's bound in `slots`, the one its tools' calls take, and are refused
    /// with an error naming the upstream and the limit when none is left. Set it before start();
    /// null: no bound.
    void limitUpstreams(std::shared_ptr<mcp::UpstreamSlots> slots);

    /// Cancels every request to an upstream in flight (tools/call, held calls, catalog
    /// requests): each ends at once as cancelled and its upstream is told, and none starts from
    /// now on; the upstreams stay open until stop(). For the end of the shutdown grace period.
    void cancelRequests();

    /// Opens every upstream (each connects in the background) and starts fetching their lists.
    /// Fails, naming the upstream, when its adapter is missing, cannot federate, or refuses its
    /// config; nothing is left open then.
    Result<void> start();
    /// Closes every upstream (their tools stay listed but fail). Idempotent.
    void stop();

    /// The catalogs of the workspaces that have upstreams.
    std::map<std::string, mcp::Catalog*> catalogs();
    /// True once every upstream's lists were fetched once (and published), or failed to be.
    bool settled() const;
    /// One JSON array: per upstream its name, workspace, counts, collisions, last error and the
    /// adapter's own status (connected since, last used...).
    std::string statusJson() const;
    /// The same of the upstream `name`; nullopt when there is none of that name.
    std::optional<std::string> statusJson(std::string_view name) const;

    /// The operator's test connection: opens each upstream of `upstreams` on its own (not
    /// published anywhere), pings it (which connects and initializes it first), reads its
    /// status and closes it; nothing is kept.
    struct TestResult {
        std::string name;
        bool ok = false;
        std::string detail;        ///< the error when !ok
        std::string status_json;   ///< the adapter's status object after the ping
        std::int64_t open_ms = 0;  ///< opening it (for MCP: connecting, initialize or discover)
        std::int64_t ping_ms = 0;  ///< its ping, once open

        /// `{"name", "ok", "detail", "open_ms", "ping_ms", "connection"}`.
        std::string toJson() const;
    };
    static std::vector<TestResult> test(const std::vector<config::UpstreamConfig>& upstreams,
                                        const plugins::PluginRegistry& registry);

    /// test() of `upstream` alone, its requests bounded by `timeout_ms` as well.
    static TestResult testOne(config::UpstreamConfig upstream,
                              const plugins::PluginRegistry& registry, std::int64_t timeout_ms);

    /// test() of the configured upstream `name` on a connection of its own (the live one is not
    /// touched), its requests bounded by `timeout_ms` as well; nullopt when there is none of
    /// that name.
    std::optional<TestResult> testConfigured(std::string_view name, std::int64_t timeout_ms) const;

    // The operator's controls over one upstream while crankd runs (upstream_control.cpp),
    // serialized with each other and with stop(). Each fails naming what is wrong: not_found (no
    // upstream of that name), invalid_argument (the name is taken, the workspace does not exist,
    // no adapter federates that protocol, the adapter refused the config), unavailable (crankd
    // stops).

    /// Stops the upstream `name`: no request to it starts from now on; those in flight get
    /// `grace` to end, then are cancelled (their callers get an error that says the upstream
    /// was stopped); its connection is closed (for stdio: its process ends), and what it
    /// published leaves its workspace (clients get list_changed). It stays in the status, as
    /// stopped. Stopping a stopped upstream does nothing.
    Result<void> stopUpstream(std::string_view name, std::chrono::milliseconds grace);
    /// Opens the stopped upstream `name` again: its lists are fetched and published, and the
    /// resources clients follow are subscribed to again. Starting an open one does nothing.
    Result<void> startUpstream(std::string_view name);
    /// Adds and opens the upstream `config`; its names come after those of the upstreams before
    /// it in its workspace. `from_config`: shown in the status as the config file's (read-only
    /// through the API), else as the API's.
    Result<void> addUpstream(const config::UpstreamConfig& config, bool from_config);
    /// How a removed or replaced upstream's calls in flight end. `wait`: as stopUpstream(), the
    /// control returns once its connection is closed. `background`: the control returns at once
    /// (no new call reaches it); the calls run on, for `grace` at most, and the connection is
    /// closed after them by the federation's own thread (a reload: calls are not touched).
    enum class Drain { wait, background };
    /// Stops `name` as stopUpstream() does, then forgets it.
    Result<void> removeUpstream(std::string_view name, std::chrono::milliseconds grace,
                                Drain drain = Drain::wait);
    /// Puts `config` in the place of the upstream of its name: the new one is opened first (when
    /// it cannot be, the old one is left as it was), then the old one stopped as by
    /// stopUpstream() and the new one published in its place.
    Result<void> replaceUpstream(const config::UpstreamConfig& config,
                                 std::chrono::milliseconds grace, Drain drain = Drain::wait);
    /// A page of one of the upstream `name`'s lists as it lists them: `which` is "tools",
    /// "resources", "resource_templates" or "prompts"; entries [offset, offset + limit). Each
    /// entry: `{"name"|"uri"|"uriTemplate": its own key, "published_as": the name clients see (for
    /// tools: null when it is not published, and "why_not" says why), "definition": the entry
    /// as the upstream sent it (secrets scrubbed)}`. nullopt: no upstream of that name.
    struct ListPage {
        std::string items_json;  ///< a JSON array
        std::size_t total = 0;   ///< entries in the whole list
    };
    std::optional<ListPage> listOf(std::string_view name, std::string_view which,
                                   std::size_t offset, std::size_t limit) const;

    /// The operator's ad-hoc call of the upstream `name`'s tool `tool` (its own name; one it
    /// lists, published or not) with `arguments_json` (an object), on the live connection,
    /// bounded by `timeout_ms` as well: the result object, or a JSON-RPC error object, and how
    /// long it took. not_found: no such upstream, or it lists no such tool; unavailable: it is
    /// stopped.
    struct CallResult {
        bool ok = false;
        std::string json;
        std::int64_t elapsed_ms = 0;
    };
    Result<CallResult> callTool(std::string_view name, std::string_view tool,
                                std::string_view arguments_json, std::int64_t timeout_ms) const;

    /// The configs of the upstreams now, in publishing order.
    std::vector<config::UpstreamConfig> upstreams() const;
    /// The same of those that came from the config file (a reload's to change).
    std::vector<config::UpstreamConfig> configUpstreams() const;
    /// Whether the upstream `name` came from the config file; nullopt: there is none of that
    /// name.
    std::optional<bool> fromConfig(std::string_view name) const;

    /// What would refuse `upstream` when it is added (upstream_check.cpp): no loaded adapter of
    /// its protocol federates, or its adapter refuses its `config`. Paths start with `where`
    /// ("upstreams[2]", or "" for an upstream object on its own).
    static std::vector<config::ConfigError> check(const config::UpstreamConfig& upstream,
                                                  const plugins::PluginRegistry& registry,
                                                  const std::string& where);

    struct Impl;

private:
    std::string statusOf(UpstreamLink& link) const;

    std::shared_ptr<Impl> impl_;
};

}  // namespace crank::federation
