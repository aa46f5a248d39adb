#pragma once

// Private to host/federation: the state behind Federation (federation.h) that its parts share:
// the links, what each workspace publishes, the refresher, the tasks and subscriptions.
//
// THREADING: `mutex` guards `links`, the links' lists, `publishedTools`, `published`,
// `toolOwners` and `unsubscribes`; a link's handle lock, the tasks' and the subscriptions' locks
// are leaves taken under it or alone. `controlMutex` (the operator's controls, stop()) is taken
// before any of them. A raw UpstreamLink* read under `mutex` (toolOwners, the name table) is
// valid while it is held: a link leaves `links` and `toolOwners` in one critical section; past
// it, pin the link with shared_from_this().

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "federation/federation.h"
#include "federation/name_table.h"
#include "federation/resource_subscriptions.h"
#include "federation/upstream_link.h"
#include "federation/upstream_tasks.h"
#include "runtime/audit_log.h"

namespace crank::federation {

class WorkspaceCatalog;

struct Federation::Impl final : std::enable_shared_from_this<Federation::Impl>, LinkEvents {
    using Clock = std::chrono::steady_clock;

    /// Unsubscribes waiting for the refresher, at most; beyond, the oldest is dropped (its
    /// upstream stays subscribed, and its updates reach nobody).
    static constexpr std::size_t kMaxUnsubscribes = 10'000;

    Impl(std::vector<config::UpstreamConfig> c, const plugins::PluginRegistry& r,
         std::map<std::string, mcp::FunctionToolRegistry*> t, std::size_t p,
         std::shared_ptr<runtime::AuditLog> a);
    ~Impl() override;
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    Impl(Impl&&) = delete;
    Impl& operator=(Impl&&) = delete;

    std::vector<config::UpstreamConfig> configs;
    const plugins::PluginRegistry& registry;
    std::map<std::string, mcp::FunctionToolRegistry*> tools;
    std::size_t pageSize;
    std::shared_ptr<runtime::AuditLog> audit;  ///< null: no audit
    /// The node's per-upstream bound, shared with the tools' calls (limitUpstreams); null: none.
    std::shared_ptr<mcp::UpstreamSlots> slots;

    /// In config order, then those added at run time. Guarded by `mutex`: a loop that calls
    /// upstreams iterates a snapshot().
    std::vector<std::shared_ptr<UpstreamLink>> links;
    /// One per workspace of `tools`, made by start() and fixed from then on (read without a
    /// lock): a workspace may gain upstreams at run time.
    std::map<std::string, std::unique_ptr<WorkspaceCatalog>> catalogs;
    std::uint64_t nextSerial = 1;  ///< guarded by `mutex`

    mutable std::mutex mutex;
    /// Serializes the operator's controls (upstream_control.cpp) and stop().
    std::mutex controlMutex;
    /// Serializes publish(): its changes reach the tool registry in the order computed.
    std::mutex publishMutex;
    std::condition_variable wake;
    std::atomic<bool> stopping{false};
    /// Raised by cancelRequests() and stop(): requests in flight end as cancelled (their
    /// upstreams told), and no new request starts.
    std::atomic<bool> cancelling{false};
    std::thread refresher;
    /// Per workspace: the tools the federation published there.
    std::map<std::string, std::map<std::string, PublishedEntry>> publishedTools;
    /// Per workspace: published resources, templates, prompts (what the catalog lists).
    std::map<std::string, Lists> published;
    /// Per workspace: published tool name -> the upstream and its own name for it.
    std::map<std::string, std::map<std::string, std::pair<UpstreamLink*, std::string>>> toolOwners;
    /// What clients follow here (resources/subscribe, listens' resourceSubscriptions).
    ResourceSubscriptions subscriptions;
    /// A link taken out of service whose calls in flight run on (Drain::background): closed by
    /// the refresher once they ended; cancelled at `cancel_at`; left open, and logged, at
    /// `give_up`.
    struct Draining {
        std::shared_ptr<UpstreamLink> link;
        Clock::time_point cancel_at;
        Clock::time_point give_up;
    };
    std::vector<Draining> draining;  ///< guarded by `mutex`
    /// Links whose handle is still open because a request never ended (guarded by `mutex`):
    /// kept until the federation goes, never freed under the adapter.
    std::vector<std::shared_ptr<UpstreamLink>> abandoned;
    /// Resources whose last subscriber went away, to unsubscribe upstream (the refresher's work,
    /// so that Catalog::forget never waits on an upstream).
    std::vector<ResourceSubscriptions::Orphan> unsubscribes;
    UpstreamTasks tasks;

    /// A link for `config` (not opened), wired to this federation.
    std::shared_ptr<UpstreamLink> makeLink(const config::UpstreamConfig& config,
                                           const plugins::AdapterHandle* adapter);
    /// The links now (copied under the lock).
    std::vector<std::shared_ptr<UpstreamLink>> snapshot() const;
    /// The link of the upstream `name`; null when there is none.
    std::shared_ptr<UpstreamLink> find(std::string_view name) const;
    /// Waits up to `wait` for the requests `link` runs to end, then closes its handle; true once
    /// closed. While one still runs the handle is left open, in the link, and logged (closing
    /// under it would free its state): the caller must then keep the link alive (abandon()),
    /// for the adapter may still call it. Call with `closing` or `stopping` raised.
    static bool closeHandle(UpstreamLink& link, std::chrono::milliseconds wait);
    /// Keeps `link`, whose handle could not be closed, until the federation is destroyed: the
    /// adapter's upstream still points at it.
    void abandon(std::shared_ptr<UpstreamLink> link);

    /// One audit event `upstream.<verb>` for `call`'s agent: which upstream, which of its names
    /// (a tool, a task), how it ended and how long it took.
    void auditRequest(const UpstreamLink& link, const mcp::ToolCall& call, std::string_view verb,
                      std::string_view name, const Answer& answer, Clock::time_point started) const;

    /// Fetches the lists named by `which` of `link` and keeps them; the first failure ("" when
    /// none).
    std::string refresh(UpstreamLink& link, int which);
    /// Recomputes what `workspace` publishes from its upstreams' lists, in config order.
    void publish(const std::string& workspace);
    /// Queues resources nobody follows any more, for the refresher to unsubscribe upstream.
    void queueUnsubscribes(std::vector<ResourceSubscriptions::Orphan> orphans);
    void runRefresher();
    /// Closes the draining links whose calls ended, cancels those past their grace (the
    /// refresher's work).
    void closeDrained();
    /// At the federation's stop: every draining link's calls cancelled, its connection closed.
    void closeAllDrained();
    /// Subscribes `link` again to every resource of it that clients follow (after its start).
    void resubscribe(UpstreamLink& link);
    void noticeToWorkspace(const std::string& workspace, const mcp::CatalogNotice& notice);

    // LinkEvents
    void listsChanged(UpstreamLink& link, int which) override;
    void resourceUpdated(UpstreamLink& link, const std::string& uri,
                         std::string_view params_json) override;
    void taskStatus(UpstreamLink& link, const std::string& upstream_id,
                    std::string_view params_json) override;
    void logMessage(UpstreamLink& link, mcp::LogLevel level, std::string_view params_json) override;

private:
    /// Tells upstreams of the resources nobody here follows any more (unless somebody
    /// subscribed again meanwhile).
    void unsubscribeUnused();
};

}  // namespace crank::federation
