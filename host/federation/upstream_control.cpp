// The operator's controls over one upstream while crankd runs (issue 29): stop, start, add,
// remove and replace. Each holds Impl::controlMutex for its whole run, so that two of them never
// interleave on one link; the links' list itself changes under Impl::mutex, in one critical
// section with what it publishes (see federation_impl.h).

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include <fmt/core.h>

#include "federation/federation.h"
#include "federation/federation_impl.h"
#include "log/log.h"

namespace crank::federation {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

/// How long requests still running after a stop's grace get, once cancelled, before the
/// connection is left open (and logged) rather than closed under them.
constexpr milliseconds kCancelledWait{10'000};

Error notFound(std::string_view name) {
    return Error{ErrorCode::not_found, fmt::format("no upstream is named \"{}\"", name)};
}

Error stoppingError() {
    return Error{ErrorCode::unavailable, "crankd is stopping"};
}

/// The link of upstream `name` for a control: unavailable while crankd stops, not_found when
/// there is none.
Result<std::shared_ptr<UpstreamLink>> controlled(const Federation::Impl& impl,
                                                 std::string_view name) {
    if (impl.stopping.load()) {
        return stoppingError();
    }
    std::shared_ptr<UpstreamLink> link = impl.find(name);
    if (!link) {
        return notFound(name);
    }
    return link;
}

/// The adapter that opens `c`, or what is wrong with it.
Result<const plugins::AdapterHandle*> adapterFor(const Federation::Impl& impl,
                                                 const config::UpstreamConfig& c) {
    if (impl.catalogs.count(c.workspace) == 0) {
        return Error{
            ErrorCode::invalid_argument,
            fmt::format("upstream {}: workspace \"{}\" does not exist", c.name, c.workspace)};
    }
    const plugins::AdapterHandle* adapter = impl.registry.adapter(c.protocol);
    if (adapter == nullptr) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("upstream {}: no adapter \"{}\" is loaded (see `crankd plugins`)",
                                 c.name, c.protocol)};
    }
    if (!adapter->hasCapability(CRANK_CAP_FEDERATION)) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("upstream {}: adapter \"{}\" cannot federate upstreams", c.name,
                                 c.protocol)};
    }
    return adapter;
}

/// A new link for `c`, opened; what went wrong when it cannot be (nothing is left open).
/// Links made while crankd runs never hold /readyz back: they count as settled at once.
Result<std::shared_ptr<UpstreamLink>> openLink(Federation::Impl& impl,
                                               const config::UpstreamConfig& c, bool from_config) {
    auto adapter = adapterFor(impl, c);
    if (!adapter) {
        return adapter.error();
    }
    std::shared_ptr<UpstreamLink> link = impl.makeLink(c, *adapter);
    link->from_config = from_config;
    link->settled = true;
    link->resubscribe = true;
    if (std::string problem = link->open(); !problem.empty()) {
        return Error{ErrorCode::invalid_argument, fmt::format("upstream {}: {}", c.name, problem)};
    }
    return link;
}

/// Empties what `link` lists (under impl.mutex): nothing of it is published at the next publish.
void clearLists(UpstreamLink& link) {
    link.lists = {};
    link.collisions.clear();
    link.filtered.clear();
}

/// Hands `link` to the refresher, which closes it once its calls ended, cancels them after
/// `grace`, and gives up (keeping it) kCancelledWait later (under impl.mutex).
void queueDrain(Federation::Impl& impl, const std::shared_ptr<UpstreamLink>& link,
                milliseconds grace) {
    const Clock::time_point now = Clock::now();
    impl.draining.push_back({link, now + grace, now + grace + kCancelledWait});
    impl.wake.notify_all();
}

/// Stops `link` (Federation::stopUpstream). `publish`: what it published leaves its workspace
/// now; else the caller publishes (a replacement, whose names take the place of its).
void stopLink(Federation::Impl& impl, UpstreamLink& link, milliseconds grace, bool publish) {
    {
        const std::lock_guard lock(impl.mutex);
        link.closing = true;  // under the lock: a refresh under way keeps its lists to itself
    }
    const Clock::time_point giveUp = Clock::now() + grace;
    while (link.active.load() > 0 && Clock::now() < giveUp && !impl.stopping.load()) {
        std::this_thread::sleep_for(milliseconds(10));
    }
    if (const int running = link.active.load(); running > 0) {
        log::info(
            "upstream {}: {} request(s) still running after the stop's grace of {} ms are "
            "cancelled",
            link.config.name, running, grace.count());
        link.cancelling = true;
    }
    // Left open (and in the link: a start refuses then) when a request never ended.
    Federation::Impl::closeHandle(link, kCancelledWait);
    {
        const std::lock_guard lock(impl.mutex);
        clearLists(link);
    }
    if (publish) {
        impl.publish(link.config.workspace);
    }
}

/// Takes `link` out of service at once (Drain::background): no call reaches it from now on, its
/// lists are emptied, and the refresher closes it once its calls in flight ended (cancelled after
/// `grace`). `publish`: as stopLink's.
void drainLink(Federation::Impl& impl, const std::shared_ptr<UpstreamLink>& link,
               milliseconds grace, bool publish) {
    {
        const std::lock_guard lock(impl.mutex);
        link->closing = true;
        clearLists(*link);
        queueDrain(impl, link, grace);
    }
    if (publish) {
        impl.publish(link->config.workspace);
    }
}

/// Stops `link` as `drain` says.
void retire(Federation::Impl& impl, const std::shared_ptr<UpstreamLink>& link, milliseconds grace,
            Federation::Drain drain, bool publish) {
    if (link->closing.load()) {
        return;  // stopped already: its connection is closed
    }
    if (drain == Federation::Drain::wait) {
        stopLink(impl, *link, grace, publish);
    } else {
        drainLink(impl, link, grace, publish);
    }
}

/// Puts `fresh` in the place of `old` without a gap (Drain::background): its lists are fetched
/// while `old` serves on, then the names move to it in one publish; `old` keeps the calls it
/// has (and any that looked it up a moment before) and is closed by the refresher once they
/// ended, cancelled after `grace`. Until the publish, `old` is out of `links` but still owns its
/// names in `toolOwners`: it is alive (held here), and the publish recomputes them.
Result<void> handOver(Federation::Impl& impl, const std::shared_ptr<UpstreamLink>& old,
                      const std::shared_ptr<UpstreamLink>& fresh, milliseconds grace) {
    if (std::string failed = impl.refresh(*fresh, kAllLists); !failed.empty()) {
        // Its names would go with its lists: the old connection, which works, serves on.
        fresh->closing = true;
        if (!Federation::Impl::closeHandle(*fresh, kCancelledWait)) {
            impl.abandon(fresh);
        }
        return Error{ErrorCode::unavailable, "its new connection could not list what it serves (" +
                                                 failed + "); the old one serves on"};
    }
    {
        const std::lock_guard lock(impl.mutex);
        std::replace(impl.links.begin(), impl.links.end(), old, fresh);
    }
    impl.publish(fresh->config.workspace);
    if (old->config.workspace != fresh->config.workspace) {
        impl.publish(old->config.workspace);
    }
    const std::lock_guard lock(impl.mutex);
    queueDrain(impl, old, grace);
    return {};
}

}  // namespace

Result<void> Federation::stopUpstream(std::string_view name, milliseconds grace) {
    Impl& impl = *impl_;
    const std::lock_guard control(impl.controlMutex);
    auto found = controlled(impl, name);
    if (!found) {
        return found.error();
    }
    const std::shared_ptr<UpstreamLink> link = std::move(*found);
    if (!link->closing.load()) {
        stopLink(impl, *link, grace, true);
        log::info("upstream {} stopped", link->config.name);
    }
    return {};
}

Result<void> Federation::startUpstream(std::string_view name) {
    Impl& impl = *impl_;
    const std::lock_guard control(impl.controlMutex);
    auto found = controlled(impl, name);
    if (!found) {
        return found.error();
    }
    const std::shared_ptr<UpstreamLink> link = std::move(*found);
    if (!link->closing.load()) {
        return {};
    }
    if (link->handle() != nullptr) {
        return Error{ErrorCode::unavailable,
                     fmt::format("upstream {}: requests of its last run never ended, and its "
                                 "connection is still open; it cannot be started again",
                                 link->config.name)};
    }
    link->cancelling = false;
    link->closing = false;
    if (std::string problem = link->open(); !problem.empty()) {
        link->closing = true;
        return Error{ErrorCode::unavailable,
                     fmt::format("upstream {}: {}", link->config.name, problem)};
    }
    link->resubscribe = true;
    impl.listsChanged(*link, kAllLists);  // fetched and published by the refresher
    log::info("upstream {} started", link->config.name);
    return {};
}

Result<void> Federation::addUpstream(const config::UpstreamConfig& config, bool from_config) {
    Impl& impl = *impl_;
    const std::lock_guard control(impl.controlMutex);
    if (impl.stopping.load()) {
        return stoppingError();
    }
    if (impl.find(config.name)) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("an upstream named \"{}\" exists already", config.name)};
    }
    auto link = openLink(impl, config, from_config);
    if (!link) {
        return link.error();
    }
    {
        const std::lock_guard lock(impl.mutex);
        impl.links.push_back(*link);
    }
    impl.listsChanged(**link, kAllLists);
    log::info("upstream {} ({}) added to workspace {}", config.name, config.protocol,
              config.workspace);
    return {};
}

Result<void> Federation::removeUpstream(std::string_view name, milliseconds grace, Drain drain) {
    Impl& impl = *impl_;
    const std::lock_guard control(impl.controlMutex);
    auto found = controlled(impl, name);
    if (!found) {
        return found.error();
    }
    const std::shared_ptr<UpstreamLink> link = std::move(*found);
    retire(impl, link, grace, drain, true);
    if (link->handle() != nullptr && drain == Drain::wait) {
        impl.abandon(link);  // a request never ended: the adapter still points at it
    }
    {
        const std::lock_guard lock(impl.mutex);
        std::erase(impl.links, link);
        // It published nothing since its stop; no owner entry may outlive it all the same.
        for (auto& [workspace, owners] : impl.toolOwners) {
            std::erase_if(owners,
                          [&](const auto& entry) { return entry.second.first == link.get(); });
        }
    }
    log::info("upstream {} removed", link->config.name);
    return {};
}

Result<void> Federation::replaceUpstream(const config::UpstreamConfig& config, milliseconds grace,
                                         Drain drain) {
    Impl& impl = *impl_;
    const std::lock_guard control(impl.controlMutex);
    auto found = controlled(impl, config.name);
    if (!found) {
        return found.error();
    }
    const std::shared_ptr<UpstreamLink> old = std::move(*found);
    if (old->closing.load()) {
        // The operator stopped it: the new config takes its place stopped, until a start.
        auto adapter = adapterFor(impl, config);
        if (!adapter) {
            return adapter.error();
        }
        std::shared_ptr<UpstreamLink> stopped = impl.makeLink(config, *adapter);
        stopped->from_config = old->from_config;
        stopped->closing = true;
        stopped->settled = true;
        const std::lock_guard lock(impl.mutex);
        std::replace(impl.links.begin(), impl.links.end(), old, stopped);
        if (old->handle() != nullptr) {
            impl.abandoned.push_back(old);  // its last run's request never ended
        }
        return {};
    }
    // The new one first: when it cannot be opened, the old one serves on untouched.
    auto fresh = openLink(impl, config, old->from_config);
    if (!fresh) {
        return fresh.error();
    }
    if (drain == Drain::background) {
        if (auto handed = handOver(impl, old, *fresh, grace); !handed) {
            return Error{handed.error().code,
                         fmt::format("upstream {}: {}", config.name, handed.error().message)};
        }
        log::info("upstream {} handed over to its new config", config.name);
        return {};
    }
    retire(impl, old, grace, drain, old->config.workspace != config.workspace);
    if (old->handle() != nullptr) {
        impl.abandon(old);  // a request never ended: the adapter still points at it
    }
    {
        const std::lock_guard lock(impl.mutex);
        std::replace(impl.links.begin(), impl.links.end(), old, *fresh);
        for (auto& [workspace, owners] : impl.toolOwners) {
            std::erase_if(owners,
                          [&](const auto& entry) { return entry.second.first == old.get(); });
        }
    }
    // Its names move to the new link at its first publish: the name table sees their owner
    // changed and hands the registry the new link's functions.
    impl.listsChanged(**fresh, kAllLists);
    log::info("upstream {} replaced by its new config", config.name);
    return {};
}

std::vector<config::UpstreamConfig> Federation::upstreams() const {
    std::vector<config::UpstreamConfig> out;
    for (const auto& link : impl_->snapshot()) {
        out.push_back(link->config);
    }
    return out;
}

std::vector<config::UpstreamConfig> Federation::configUpstreams() const {
    std::vector<config::UpstreamConfig> out;
    for (const auto& link : impl_->snapshot()) {
        if (link->from_config) {
            out.push_back(link->config);
        }
    }
    return out;
}

std::optional<bool> Federation::fromConfig(std::string_view name) const {
    if (const auto link = impl_->find(name)) {
        return link->from_config;
    }
    return std::nullopt;
}

}  // namespace crank::federation
