#pragma once

// The host side of one federated upstream: its config, the adapter's handle, the lists it
// publishes, and the one way a request reaches it (request()). What the upstream sends on its own
// (list changes, resource updates, task status, log lines) goes to the LinkEvents of its owner.
//
// THREADING: request() and notify() run on any thread, concurrently. `lists`, `last_error` and
// `collisions` are guarded by the owner's lock (Federation::Impl::mutex); the adapter's handle
// by the link's own, a leaf lock.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "mcp/tool_registry.h"
#include "mcp/wire/log_level.h"
#include "plugins/plugin_peer.h"
#include "plugins/plugin_registry.h"
#include "runtime/secret_scrubber.h"

namespace crank::federation {

class UpstreamTasks;
struct UpstreamLink;

/// The lists an upstream publishes, as dirty bits.
enum ListBits : int { kTools = 1, kResources = 2, kPrompts = 4, kAllLists = 7 };

/// One published entry of a list: the key clients use (a published name or a URI), the
/// upstream's own name for it, and its JSON as clients see it.
struct Item {
    std::string key;
    std::string original;
    std::string json;
};

struct Lists {
    std::vector<Item> tools;
    std::vector<Item> resources;
    std::vector<Item> templates;
    std::vector<Item> prompts;
};

/// What an upstream request answered: the result object, or a JSON-RPC error object.
struct Answer {
    Answer() = default;
    Answer(bool ok_in, std::string json_in, std::optional<mcp::InputNeed> input_in = std::nullopt)
        : ok(ok_in), json(std::move(json_in)), input(std::move(input_in)) {}

    bool ok = false;
    std::string json;
    /// Set when the result is input_required (MCP 2026-07-28): the upstream's questions and its
    /// requestState, to relay (input_relay.h); `json` is then the result as it came.
    std::optional<mcp::InputNeed> input;
    /// A 2026-era list's `ttlMs` (how long it may be kept), which `json` no longer carries.
    std::optional<std::int64_t> ttl_ms;
    /// The link refused the request before sending it (stopped or closed): nothing reached the
    /// upstream, so another link may be asked instead.
    bool not_sent = false;
};

/// A JSON-RPC error object.
std::string rpcError(std::int64_t code, std::string_view message, std::string_view data = {});

/// What an upstream says on its own, as the link's owner hears it (already scrubbed of the
/// upstream's secrets). Called from the adapter's threads; no exception may escape.
class LinkEvents {
public:
    virtual ~LinkEvents() = default;
    /// The lists named by `which` (ListBits) changed.
    virtual void listsChanged(UpstreamLink& link, int which) = 0;
    /// notifications/resources/updated of `uri`.
    virtual void resourceUpdated(UpstreamLink& link, const std::string& uri,
                                 std::string_view params_json) = 0;
    /// notifications/tasks/status of the upstream's task `upstream_id`.
    virtual void taskStatus(UpstreamLink& link, const std::string& upstream_id,
                            std::string_view params_json) = 0;
    /// notifications/message not tied to a call.
    virtual void logMessage(UpstreamLink& link, mcp::LogLevel level,
                            std::string_view params_json) = 0;
};

/// What a link reads of its owner: whether requests may still start.
struct LinkGates {
    const std::atomic<bool>* stopping = nullptr;    ///< the federation stops
    const std::atomic<bool>* cancelling = nullptr;  ///< requests in flight end as cancelled
    bool closed() const { return stopping->load() || cancelling->load(); }
};

/// Two flags read as one: either raised ends what watches them (FederatedCall).
struct StopFlags {
    const std::atomic<bool>* owner = nullptr;  ///< the federation's
    const std::atomic<bool>* link = nullptr;   ///< the link's own (an operator's stop)
    bool raised() const { return owner->load() || link->load(); }
};

struct UpstreamLink final : plugins::PluginPeer, std::enable_shared_from_this<UpstreamLink> {
    /// Largest answer taken from an upstream (a tools/call result, a resource's contents).
    static constexpr std::size_t kMaxAnswerBytes = std::size_t{64} * 1024 * 1024;

    config::UpstreamConfig config;
    /// The secrets of `config` (its {"env": NAME} references, sent upstream by the adapter, such
    /// as the mcp plugin's `headers`): scrubbed from every answer, error, notification and log
    /// line of the upstream, which may echo them.
    runtime::SecretScrubber scrubber;
    const plugins::AdapterHandle* adapter = nullptr;
    LinkEvents* events = nullptr;
    const UpstreamTasks* tasks = nullptr;
    LinkGates gates;
    /// Unique among the links of one federation, never reused: what tasks are keyed by.
    std::uint64_t serial = 0;
    /// From the config file (changed by a reload), or added through the admin API.
    bool from_config = true;

    /// Raised (under the owner's lock) when the operator stops or removes the upstream: no
    /// request starts, no list is taken from it any more. Lowered by a start.
    std::atomic<bool> closing{false};
    /// Raised when the stop's grace ran out: requests in flight end now, as stopped.
    std::atomic<bool> cancelling{false};

    std::atomic<int> dirty{kAllLists};
    std::atomic<bool> settled{false};
    /// Set by a start: once its lists are fetched, the resources clients follow are subscribed
    /// to again (the refresher's work).
    std::atomic<bool> resubscribe{false};
    /// Requests running in the adapter now: the upstream is closed only once none is.
    std::atomic<int> active{0};

    // Guarded by the owner's lock.
    Lists lists;
    /// When each list (tools, resources and templates, prompts: ListBits' order) is to be
    /// fetched again because its ttlMs ran out; nullopt when it is not.
    std::array<std::optional<std::chrono::steady_clock::time_point>, 3> stale_at;
    std::string last_error;
    /// The upstream speaks 2026-07-28 and offers the Tasks extension (its status, read with its
    /// tools): its tools' tasks are its own (mcp::ToolDefinition::task_by_upstream).
    bool tasks_by_upstream = false;
    std::vector<std::string> collisions;
    std::vector<std::string> filtered;  ///< tools its `tools` policy keeps out, and why

    /// No request may start (the owner stops, or the operator stopped this upstream).
    bool closed() const { return gates.closed() || closing.load() || cancelling.load(); }
    /// What ends an open() under way, and what ends a request in flight.
    StopFlags openFlags() const { return {gates.stopping, &closing}; }
    StopFlags requestFlags() const { return {gates.cancelling, &cancelling}; }

    /// Opens the upstream through its adapter; "" when it opened, else what went wrong.
    std::string open();
    /// The adapter's handle, null once closed.
    crank_upstream* handle() const;
    /// Clears the handle and returns what it was (the caller closes it).
    crank_upstream* release();

    /// Runs `use(handle)` while the upstream is open and the owner is not stopping, counted in
    /// `active` like a request, so that the owner's stop() never closes the upstream under it
    /// (stop() raises `stopping`, then waits for `active`). False, without calling, otherwise.
    template <typename Use>
    bool withOpenHandle(Use&& use) {
        ++active;
        crank_upstream* const open = openFlags().raised() ? nullptr : handle();
        if (open != nullptr) {
            std::forward<Use>(use)(open);
        }
        --active;
        return open != nullptr;
    }

    /// One request to the upstream; `call` is the downstream call it serves (or null), which
    /// gets its progress, log lines, cancellation and requests to the client. The client's trace
    /// context goes on in the request's `_meta`. `timeout_ms`: a bound tighter than the
    /// upstream's request_timeout_ms (0: that one). The Tasks extension is declared for a
    /// caller that declared it, on the task methods, and when `tasks` says so (a 2025 session's
    /// task-augmented tools/call).
    Answer request(std::string_view method, std::string_view params, mcp::ToolCall* call,
                   std::int64_t timeout_ms = 0, bool tasks = false);

    /// The name under which the calls and catalog requests of this upstream share the node's
    /// per-upstream bound (server.max_calls_per_upstream).
    std::string slotKey() const { return "mcp:" + config.name; }

    void notify(std::string_view method, std::string_view raw_params_json) noexcept override;

private:
    mutable std::mutex handle_mutex_;
    crank_upstream* upstream_ = nullptr;
};

}  // namespace crank::federation
