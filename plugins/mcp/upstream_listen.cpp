#include "upstream_listen.h"

#include <algorithm>
#include <utility>

#include <rapidjson/document.h>

#include "json_text.h"
#include <crank/sdk/json.hpp>

namespace crank::mcpc {
namespace {

/// True when capability `name` of `caps` is an object whose `member` is true.
bool offers(const rapidjson::Value& caps, const char* name, const char* member) {
    if (!caps.IsObject() || !caps.HasMember(name) || !caps[name].IsObject()) {
        return false;
    }
    const rapidjson::Value& c = caps[name];
    return c.HasMember(member) && c[member].IsBool() && c[member].GetBool();
}

constexpr std::chrono::milliseconds kBackoffFirst{1'000};
constexpr std::chrono::milliseconds kBackoffMax{30'000};
/// How often the thread looks again while no listen is wanted (not connected, not modern).
constexpr std::chrono::milliseconds kIdleLook{2'000};
/// A listen held this long before it ended is opened again at once (each such end costs a
/// refetch of the lists, so a server that ends listens often is not followed more often).
constexpr std::chrono::milliseconds kHeldLongEnough{30'000};
/// Listens opened one after the other are at least this far apart.
constexpr std::chrono::milliseconds kMinReopen{1'000};

}  // namespace

std::string ListenFilter::paramsJson() const {
    std::string out = R"({"notifications":{)";
    bool first = true;
    const auto flag = [&](const char* name, bool on) {
        if (on) {
            out += (first ? "\"" : ",\"") + std::string(name) + "\":true";
            first = false;
        }
    };
    flag("toolsListChanged", tools);
    flag("promptsListChanged", prompts);
    flag("resourcesListChanged", resources);
    if (!resource_uris.empty()) {
        out += first ? "" : ",";
        out += R"("resourceSubscriptions":[)";
        for (std::size_t i = 0; i < resource_uris.size(); ++i) {
            out += (i == 0 ? "" : ",") + sdk::jsonQuote(resource_uris[i]);
        }
        out += "]";
    }
    return out + "}}";
}

ListenFilter listsFilterFor(std::string_view capabilities_json) {
    ListenFilter f;
    rapidjson::Document caps;
    if (!parseServerMessage(capabilities_json, caps).empty() || !caps.IsObject()) {
        return f;
    }
    f.tools = offers(caps, "tools", "listChanged");
    f.prompts = offers(caps, "prompts", "listChanged");
    f.resources = offers(caps, "resources", "listChanged");
    return f;
}

bool offersSubscribe(std::string_view capabilities_json) {
    rapidjson::Document caps;
    return parseServerMessage(capabilities_json, caps).empty() &&
           offers(caps, "resources", "subscribe");
}

ListenFilter resourcesFilterFor(std::string_view capabilities_json,
                                const std::vector<std::string>& followed) {
    ListenFilter f;
    if (offersSubscribe(capabilities_json)) {
        f.resource_uris.assign(followed.begin(),
                               followed.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                      followed.size(), kMaxListenedResources)));
    }
    return f;
}

UpstreamListen::UpstreamListen(Hooks hooks) : hooks_(std::move(hooks)) {}

UpstreamListen::~UpstreamListen() {
    stop();
}

void UpstreamListen::start() {
    const std::lock_guard lock(mutex_);
    if (started_ || stopping_) {
        return;
    }
    started_ = true;
    thread_ = std::thread([this] { run(); });
}

void UpstreamListen::stop() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
        ++generation_;
    }
    wake_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) {
        thread_.join();
    }
}

void UpstreamListen::changed() {
    {
        const std::lock_guard lock(mutex_);
        ++generation_;
    }
    wake_.notify_all();
}

bool UpstreamListen::owns(std::string_view subscription_id) const {
    const std::int64_t id = listen_id_.load();
    return id >= 0 && subscription_id == std::to_string(id);
}

void UpstreamListen::acknowledged() {
    if (gap_.exchange(false) && hooks_.on_gap) {
        hooks_.on_gap();
    }
}

bool UpstreamListen::pause(std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    const std::uint64_t seen = generation_;
    wake_.wait_for(lock, d, [&] { return stopping_ || generation_ != seen; });
    return !stopping_;
}

bool UpstreamListen::sleepFor(std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, d, [&] { return stopping_; });
    return !stopping_;
}

void UpstreamListen::run() {
    std::chrono::milliseconds backoff = kBackoffFirst;
    std::string last_error;
    std::optional<std::chrono::steady_clock::time_point> last_open;
    for (;;) {
        std::uint64_t generation = 0;
        {
            const std::lock_guard lock(mutex_);
            if (stopping_) {
                return;
            }
            generation = generation_;
        }
        const std::optional<ListenFilter> filter = hooks_.filter();
        if (!filter || filter->empty()) {
            if (!pause(kIdleLook)) {
                return;
            }
            continue;
        }
        // At most one listen a kMinReopen: a client following and leaving resources in a loop
        // does not make crankd reopen the upstream's listen of resources in a loop.
        if (last_open) {
            const auto since = std::chrono::steady_clock::now() - *last_open;
            if (since < kMinReopen &&
                !sleepFor(
                    std::chrono::duration_cast<std::chrono::milliseconds>(kMinReopen - since))) {
                return;
            }
            const std::lock_guard lock(mutex_);
            if (generation_ != generation) {
                continue;  // changed again meanwhile: read the filter again
            }
        }
        RequestHooks hooks;
        hooks.on_id = [this](std::int64_t id) { listen_id_.store(id); };
        hooks.cancelled = [this, generation] {
            const std::lock_guard lock(mutex_);
            return stopping_ || generation_ != generation;
        };
        const auto opened = std::chrono::steady_clock::now();
        last_open = opened;
        const RpcOutcome r = hooks_.send(filter->paramsJson(), hooks, kListenPeriod);
        listen_id_.store(-1);
        gap_.store(true);
        if (hooks.cancelled()) {
            backoff = kBackoffFirst;
            continue;  // a new filter (or the end)
        }
        if (std::chrono::steady_clock::now() - opened >= kHeldLongEnough) {
            // Held a while, then ended (by the server, its period, or a lost connection, which
            // the session reconnects with its own backoff): again at once.
            backoff = kBackoffFirst;
            last_error.clear();
            continue;
        }
        // Refused, or ended at once: again after a backoff, so that a server that ends every
        // listen is not asked in a loop. Said once per reason.
        const std::string why = r.ok ? std::string("the server ended it at once") : r.error_message;
        if (why != last_error) {
            hooks_.log("subscriptions/listen: " + why + "; it is opened again after a backoff (" +
                       std::to_string(backoff.count()) + " ms, doubling up to " +
                       std::to_string(kBackoffMax.count()) + " ms)");
            last_error = why;
        }
        if (!pause(backoff)) {
            return;
        }
        backoff = std::min(backoff * 2, kBackoffMax);
    }
}

}  // namespace crank::mcpc
