#pragma once

// What a 2026-07-28 upstream changes, heard through `subscriptions/listen` (the revision's
// replacement for the GET stream and resources/subscribe). A federated upstream holds two, each
// an UpstreamListen with a thread of its own: one for the list changes the server offers
// (`listChanged` in its discovered capabilities), whose gaps make crankd fetch the lists again,
// and one for the updates of the resources crank follows, whose filter changes with every
// resource followed or given up (so that this churn, or a server refusing a URI, never costs the
// list changes). Notifications reach the upstream's message handler like any other; only those
// that carry an open listen's subscriptionId (the JSON-RPC id of the listen request) are let
// through (owns()).
//
// A listen is opened again: when its filter changes (at most one listen a second), when the
// server ends it, after kListenPeriod, and after a failure (with a backoff). Whenever a listen is
// acknowledged after a gap (the first one included: the lists were read before it was open),
// `on_gap` runs: what changed meanwhile was not heard.
//
// THREADING: every member may be called from any thread; `filter`, `send` and `log` run on the
// listen's thread, `on_gap` on the transport's (from acknowledged()).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "connection.h"

namespace crank::mcpc {

/// What one listen asks to hear.
struct ListenFilter {
    bool tools = false;
    bool prompts = false;
    bool resources = false;
    std::vector<std::string> resource_uris;  ///< resourceSubscriptions

    bool empty() const { return !tools && !prompts && !resources && resource_uris.empty(); }
    /// The listen's params: {"notifications":{...}}.
    std::string paramsJson() const;
};

/// The lists whose changes a 2026 server's capabilities (`capabilities_json`, from
/// server/discover) let crank listen to: each one whose capability says listChanged.
ListenFilter listsFilterFor(std::string_view capabilities_json);
/// True when the capabilities offer resources.subscribe.
bool offersSubscribe(std::string_view capabilities_json);
/// The resources to listen to: `followed` when the capabilities offer resources.subscribe (at
/// most kMaxListenedResources of them), else none.
ListenFilter resourcesFilterFor(std::string_view capabilities_json,
                                const std::vector<std::string>& followed);

/// URIs one listen follows at most, and their bytes together: a resources/subscribe beyond
/// either is refused (McpUpstream), so that the listen's request stays one a server takes.
inline constexpr std::size_t kMaxListenedResources = 1024;
inline constexpr std::size_t kMaxListenedResourceBytes = std::size_t{256} * 1024;

class UpstreamListen {
public:
    struct Hooks {
        /// The filter to listen with now; nullopt when no listen is wanted (the upstream is not
        /// connected, or not in the 2026 era).
        std::function<std::optional<ListenFilter>()> filter;
        /// Sends the listen and waits until it ends (UpstreamSession::request).
        std::function<RpcOutcome(const std::string& params_json, const RequestHooks& hooks,
                                 std::chrono::milliseconds timeout)>
            send;
        /// A listen was acknowledged after a gap: fetch the lists again.
        std::function<void()> on_gap;
        std::function<void(const std::string& line)> log;
    };

    /// How long one listen is held before it is opened again.
    static constexpr std::chrono::milliseconds kListenPeriod{600'000};

    explicit UpstreamListen(Hooks hooks);
    ~UpstreamListen();
    UpstreamListen(const UpstreamListen&) = delete;
    UpstreamListen& operator=(const UpstreamListen&) = delete;
    UpstreamListen(UpstreamListen&&) = delete;
    UpstreamListen& operator=(UpstreamListen&&) = delete;

    /// Starts the listen's thread (idempotent).
    void start();
    /// Ends the listen and joins the thread (idempotent).
    void stop();
    /// The filter may have changed (a resource followed or given up, a new connection): the
    /// listen open now ends and a new one is opened.
    void changed();

    /// True when a notification carrying `subscription_id` (the JSON text of its
    /// _meta["io.modelcontextprotocol/subscriptionId"]) belongs to the listen open now.
    bool owns(std::string_view subscription_id) const;
    /// notifications/subscriptions/acknowledged arrived for the listen open now.
    void acknowledged();

private:
    void run();
    /// Waits up to `d`, or until changed() or stop(); false once stopping.
    bool pause(std::chrono::milliseconds d);
    /// Waits `d`, or until stop(); false once stopping.
    bool sleepFor(std::chrono::milliseconds d);

    Hooks hooks_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::thread thread_;
    bool started_ = false;
    bool stopping_ = false;
    std::uint64_t generation_ = 0;  // changed() counts up; the open listen ends when it moves
    std::atomic<std::int64_t> listen_id_{-1};
    // No listen acknowledged since the last ended (or ever): what changed meanwhile was not heard.
    std::atomic<bool> gap_{true};
};

}  // namespace crank::mcpc
