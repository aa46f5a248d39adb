#include "federation/federation_impl.h"

#include <algorithm>
#include <set>
#include <thread>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "config/plugin_secrets.h"
#include "federation/input_relay.h"
#include "federation/list_refresh.h"
#include "federation/name_table.h"
#include "federation/workspace_catalog.h"
#include "json/json_members.h"
#include "json/json_scanner.h"
#include "json/json_text.h"
#include "log/log.h"
#include "util/json_string.h"

namespace crank::federation {

namespace {

/// Lines a refresh logs of the tools a policy newly keeps out (the rest are counted).
constexpr std::size_t kMaxFilteredLogLines = 20;

}  // namespace

using std::chrono::milliseconds;

Federation::Impl::Impl(std::vector<config::UpstreamConfig> c, const plugins::PluginRegistry& r,
                       std::map<std::string, mcp::FunctionToolRegistry*> t, std::size_t p,
                       std::shared_ptr<runtime::AuditLog> a)
    : configs(std::move(c)), registry(r), tools(std::move(t)), pageSize(p), audit(std::move(a)) {}

Federation::Impl::~Impl() = default;

std::shared_ptr<UpstreamLink> Federation::Impl::makeLink(const config::UpstreamConfig& config,
                                                         const plugins::AdapterHandle* adapter) {
    auto link = std::make_shared<UpstreamLink>();
    {
        const std::lock_guard lock(mutex);
        link->serial = nextSerial++;
    }
    link->config = config;
    link->scrubber = runtime::SecretScrubber(config::pluginConfigSecretValues(config.config_json));
    link->adapter = adapter;
    link->events = this;
    link->tasks = &tasks;
    link->gates = LinkGates{&stopping, &cancelling};
    return link;
}

std::vector<std::shared_ptr<UpstreamLink>> Federation::Impl::snapshot() const {
    const std::lock_guard lock(mutex);
    return links;
}

std::shared_ptr<UpstreamLink> Federation::Impl::find(std::string_view name) const {
    const std::lock_guard lock(mutex);
    for (const auto& link : links) {
        if (link->config.name == name) {
            return link;
        }
    }
    return nullptr;
}

bool Federation::Impl::closeHandle(UpstreamLink& link, milliseconds wait) {
    const Clock::time_point giveUp = Clock::now() + wait;
    while (link.active.load() > 0 && Clock::now() < giveUp) {
        std::this_thread::sleep_for(milliseconds(10));
    }
    if (link.active.load() > 0) {
        log::error(
            "upstream {}: {} request(s) did not end within {} ms of the stop; the upstream is "
            "left open until exit",
            link.config.name, link.active.load(), wait.count());
        return false;
    }
    // A request counted from now on sees `closing` or `stopping` (raised before this call) and
    // never reaches the adapter: closing the handle cannot pull it from under one.
    crank_upstream* handle = link.release();
    if (handle != nullptr) {
        link.adapter->upstreamClose(handle);
    }
    return true;
}

void Federation::Impl::abandon(std::shared_ptr<UpstreamLink> link) {
    const std::lock_guard lock(mutex);
    abandoned.push_back(std::move(link));
}

void Federation::Impl::auditRequest(const UpstreamLink& link, const mcp::ToolCall& call,
                                    std::string_view verb, std::string_view name,
                                    const Answer& answer, Clock::time_point started) const {
    if (!audit) {
        return;
    }
    const mcp::Caller caller = call.caller();
    store::AuditEvent event;
    event.workspace_id = caller.workspace;
    event.agent_id = caller.agent.empty() ? "anonymous" : caller.agent;
    event.operation_id = link.config.name;
    event.action = "upstream." + std::string(verb);
    std::string detail =
        R"({"upstream":)" + jsonString(link.config.name) + R"(,"name":)" +
        jsonString(name.substr(0, 256)) +
        fmt::format(R"(,"elapsed_ms":{})",
                    std::chrono::duration_cast<milliseconds>(Clock::now() - started).count());
    if (answer.ok) {
        // A tool that ran and failed is a result, not an error of crank's. Read from the
        // result's own isError, however the upstream spelt its JSON.
        const auto result = json::scan::readObject(answer.json);
        const json::scan::RawValue* isError =
            result ? json::scan::findMember(result->members, "isError") : nullptr;
        const bool failed = isError != nullptr && isError->type == json::scan::ValueType::boolean &&
                            std::string_view(answer.json).substr(isError->start, 4) == "true";
        event.outcome = failed ? "tool_error" : "ok";
    } else {
        json::Document error;
        json::parseObject(answer.json, error);
        const std::string message = json::stringMember(error, "message");
        event.outcome = call.cancelled() ? "cancelled" : "error";
        detail += R"(,"error":)" + jsonString(message.substr(0, 512));
    }
    event.detail_json = detail + "}";
    if (auto r = audit->append(std::move(event)); !r) {
        log::warn("upstream {}: the audit log refused upstream.{}: {}", link.config.name, verb,
                  r.error().message);
    }
}

std::string Federation::Impl::refresh(UpstreamLink& link, int which) {
    FetchedLists fetched = fetchLists(link, which);
    {
        const std::lock_guard lock(mutex);
        if (link.closing.load()) {
            return {};  // stopped meanwhile: its lists stay empty (the stop cleared them)
        }
        fetched.apply(link);
    }
    if (!fetched.error.empty()) {
        log::warn("{}", fetched.error);
    }
    return fetched.error;
}

void Federation::Impl::publish(const std::string& workspace) {
    const std::lock_guard serial(publishMutex);
    mcp::FunctionToolRegistry* toolRegistry =
        tools.count(workspace) != 0 ? tools.at(workspace) : nullptr;
    std::vector<std::pair<mcp::ToolDefinition, mcp::FunctionToolRegistry::Function>> add;
    std::vector<std::string> remove;
    bool resourcesChanged = false;
    bool promptsChanged = false;
    std::weak_ptr<Impl> weak = weak_from_this();
    {
        const std::lock_guard lock(mutex);
        std::map<std::string, PublishedEntry>& before = publishedTools[workspace];
        // Names taken by the workspace's own tools (operations), which always win.
        std::set<std::string> taken;
        if (toolRegistry != nullptr) {
            for (const mcp::ToolDefinition& t : toolRegistry->list()) {
                if (before.count(t.name) == 0) {
                    taken.insert(t.name);
                }
            }
        }
        std::vector<UpstreamLink*> members;
        for (auto& link : links) {
            if (link->config.workspace == workspace) {
                members.push_back(link.get());
            }
        }
        WorkspacePlan plan = planWorkspace(members, before, taken);
        for (std::size_t i = 0; i < members.size(); ++i) {
            members[i]->collisions = std::move(plan.collisions[i]);
            for (const std::string& what : members[i]->collisions) {
                log::warn("upstream {}: {}", members[i]->config.name, what);
            }
            // Told once: only what was not filtered before, at most kMaxFilteredLogLines a refresh.
            const std::set<std::string> before_filtered(members[i]->filtered.begin(),
                                                        members[i]->filtered.end());
            std::size_t told = 0;
            std::size_t untold = 0;
            for (const std::string& what : plan.filtered[i]) {
                if (before_filtered.count(what) != 0) {
                    continue;
                }
                if (told < kMaxFilteredLogLines) {
                    log::info("upstream {}: {}", members[i]->config.name, what);
                    ++told;
                } else {
                    ++untold;
                }
            }
            if (untold > 0) {
                log::info(
                    "upstream {}: {} more tools are not published by its tools policy "
                    "(GET /admin/api/upstreams/{} lists them)",
                    members[i]->config.name, untold, members[i]->config.name);
            }
            members[i]->filtered = std::move(plan.filtered[i]);
        }
        for (PublishedTool& tool : plan.added) {
            mcp::ToolDefinition d;
            d.name = tool.name;
            d.title = std::move(tool.title);
            d.description = std::move(tool.description);
            d.raw_json = std::move(tool.json);
            if (d.raw_json.find("x-mcp-header") != std::string::npos) {
                // Its Mcp-Param-* headers, which a 2026 client's call must carry and crankd
                // checks (the upstream's own are built again by its adapter).
                json::Document parsed;
                if (json::parseObject(d.raw_json, parsed) && parsed.HasMember("inputSchema") &&
                    parsed["inputSchema"].IsObject()) {
                    d.input_schema_json = json::toJsonText(parsed["inputSchema"]);
                }
            }
            d.requests_client = true;
            d.upstream = tool.link->slotKey();  // its calls share one bound
            d.task_support = std::move(tool.task_support);
            d.task_by_upstream = tool.task_by_upstream;
            d.rate = tool.link->config.rate;  // each tool its own bucket
            std::weak_ptr<UpstreamLink> weakTarget = tool.link->weak_from_this();
            const std::string name = tool.link->config.name;
            const std::string original = tool.original;
            const std::string tool_name = d.name;
            add.emplace_back(
                std::move(d),
                [weak, weakTarget, name, original, tool_name, workspace](
                    std::string_view arguments, mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                    auto self = weak.lock();
                    if (!self) {
                        return Error{ErrorCode::unavailable, "crankd is stopping"};
                    }
                    const std::shared_ptr<UpstreamLink> target = weakTarget.lock();
                    if (!target) {
                        return Error{ErrorCode::unavailable, "upstream " + name + " was removed"};
                    }
                    std::string params = R"({"name":)" + jsonString(original) + R"(,"arguments":)" +
                                         std::string(arguments);
                    if (call.progressRequested()) {
                        params += R"(,"_meta":{"progressToken":"crank"})";
                    }
                    params += "}";
                    if (const mcp::InputRound* round = call.inputRound()) {
                        // The answers to the upstream's questions, with its state as it gave it.
                        params = withInputRound(params, round->responses, round->state);
                    }
                    const Clock::time_point started = Clock::now();
                    Answer a = target->request("tools/call", params, &call);
                    UpstreamLink* served = target.get();  // the link that answered
                    std::shared_ptr<UpstreamLink> now;    // kept while its task is adopted
                    if (a.not_sent && !call.cancelled()) {
                        // A reload handed the name over to a new connection a moment after
                        // this call looked it up, and the old one closed: nothing was sent to
                        // it, so the link that owns the name now answers.
                        {
                            const std::lock_guard owners_lock(self->mutex);
                            const auto& owners = self->toolOwners[workspace];
                            if (const auto it = owners.find(tool_name);
                                it != owners.end() && it->second.first != target.get() &&
                                it->second.second == original) {
                                now = it->second.first->shared_from_this();
                            }
                        }
                        if (now) {
                            a = now->request("tools/call", params, &call);
                            served = now.get();
                        }
                    }
                    self->auditRequest(*served, call, "call", original, a, started);
                    if (a.input) {
                        // Relayed by the endpoint its era's way; the tool runs again with the
                        // answers (input_relay.h).
                        return mcp::ToolResult::inputRequired(std::move(*a.input));
                    }
                    mcp::ToolResult r;
                    if (!a.ok) {
                        r.rpc_error_json = std::move(a.json);
                        return r;
                    }
                    // A 2026 upstream may answer a caller that declared the Tasks extension
                    // with a task: the client follows it under crankd's id (tasks/get...).
                    Result<std::string> adopted =
                        self->tasks.adoptCreated(*served, std::move(a.json), workspace,
                                                 call.caller().agent, call.clientDeclaresTasks());
                    if (!adopted) {
                        r.rpc_error_json = rpcError(-32603, adopted.error().message);
                        return r;
                    }
                    r.raw_json = std::move(*adopted);
                    return r;
                });
        }
        remove = std::move(plan.removed);
        before = std::move(plan.tools);
        toolOwners[workspace] = std::move(plan.owners);
        Lists& old = published[workspace];
        const auto same = [](const std::vector<Item>& a, const std::vector<Item>& b) {
            return a.size() == b.size() &&
                   std::equal(a.begin(), a.end(), b.begin(),
                              [](const Item& x, const Item& y) { return x.json == y.json; });
        };
        resourcesChanged = !same(old.resources, plan.lists.resources) ||
                           !same(old.templates, plan.lists.templates);
        promptsChanged = !same(old.prompts, plan.lists.prompts);
        old = std::move(plan.lists);
    }
    if (toolRegistry != nullptr && (!add.empty() || !remove.empty())) {
        toolRegistry->replace(remove, std::move(add));
    }
    if (resourcesChanged) {
        noticeToWorkspace(workspace,
                          mcp::CatalogNotice{"notifications/resources/list_changed", {}, {}, {}});
    }
    if (promptsChanged) {
        noticeToWorkspace(workspace,
                          mcp::CatalogNotice{"notifications/prompts/list_changed", {}, {}, {}});
    }
}

void Federation::Impl::queueUnsubscribes(std::vector<ResourceSubscriptions::Orphan> orphans) {
    if (orphans.empty()) {
        return;
    }
    const std::lock_guard lock(mutex);
    for (auto& orphan : orphans) {
        unsubscribes.push_back(std::move(orphan));
    }
    if (unsubscribes.size() > kMaxUnsubscribes) {
        unsubscribes.erase(unsubscribes.begin(), unsubscribes.end() - kMaxUnsubscribes);
    }
    wake.notify_all();
}

void Federation::Impl::runRefresher() {
    while (true) {
        std::vector<std::shared_ptr<UpstreamLink>> now;
        {
            std::unique_lock lock(mutex);
            const auto ready = [&] {
                return stopping.load() || !unsubscribes.empty() ||
                       std::any_of(links.begin(), links.end(),
                                   [](const auto& l) { return l->dirty.load() != 0; });
            };
            // Lists whose ttlMs ran out are due again; the earliest still to come bounds the wait.
            const auto due = [&] {
                std::optional<Clock::time_point> next;
                const Clock::time_point at = Clock::now();
                for (const auto& l : links) {
                    if (const int which = staleLists(*l, at, next); which != 0) {
                        l->dirty.fetch_or(which);
                    }
                }
                return next;
            };
            const std::optional<Clock::time_point> next = due();
            if (draining.empty() && next) {
                wake.wait_until(lock, *next, [&] { return ready() || !draining.empty(); });
                due();
            } else if (draining.empty()) {
                // A link handed to the drainer wakes it too.
                wake.wait(lock, [&] { return ready() || !draining.empty(); });
            } else {
                // Draining links are looked at every 20 ms until they close.
                wake.wait_for(lock, milliseconds(20), ready);
            }
            if (stopping.load()) {
                return;
            }
            now = links;
        }
        closeDrained();
        unsubscribeUnused();
        std::set<std::string> touched;
        std::vector<UpstreamLink*> refreshed;
        for (auto& link : now) {
            const int which = link->dirty.exchange(0);
            if (which != 0 && !stopping.load() && !link->closing.load()) {
                refresh(*link, which);
                touched.insert(link->config.workspace);
                refreshed.push_back(link.get());
            }
        }
        for (const std::string& ws : touched) {
            publish(ws);
        }
        // Settled once what was fetched is published: /readyz waits for it, and a client
        // that saw it ready must find the upstream's tools listed.
        for (UpstreamLink* link : refreshed) {
            link->settled = true;
        }
        for (UpstreamLink* link : refreshed) {
            if (link->resubscribe.exchange(false)) {
                resubscribe(*link);
            }
        }
    }
}

void Federation::Impl::closeDrained() {
    std::vector<std::shared_ptr<UpstreamLink>> ended;
    {
        const std::lock_guard lock(mutex);
        const Clock::time_point now = Clock::now();
        std::erase_if(draining, [&](const Draining& d) {
            // No request starts on it from now on (a task route or a registry function taken
            // before the hand-over would): raised before `active` is read, so that a request
            // counted after the read sees it and never reaches the adapter.
            d.link->closing = true;
            if (d.link->active.load() == 0) {
                ended.push_back(d.link);
                return true;
            }
            if (now >= d.give_up) {
                log::error(
                    "upstream {}: {} request(s) did not end after their cancellation; its old "
                    "connection is left open until exit",
                    d.link->config.name, d.link->active.load());
                abandoned.push_back(d.link);  // the adapter still points at it
                return true;
            }
            if (now >= d.cancel_at && !d.link->cancelling.exchange(true)) {
                log::info("upstream {}: requests still running on its old connection are cancelled",
                          d.link->config.name);
            }
            return false;
        });
    }
    for (const auto& link : ended) {
        if (closeHandle(*link, milliseconds(1'000))) {
            log::info("upstream {}: its old connection is closed", link->config.name);
        } else {
            abandon(link);
        }
    }
}

void Federation::Impl::closeAllDrained() {
    std::vector<Draining> pending;
    {
        const std::lock_guard lock(mutex);
        pending.swap(draining);
    }
    for (const Draining& d : pending) {
        d.link->closing = true;
        d.link->cancelling = true;
        if (!closeHandle(*d.link, milliseconds(10'000))) {
            abandon(d.link);
        }
    }
}

void Federation::Impl::unsubscribeUnused() {
    std::vector<ResourceSubscriptions::Orphan> pending;
    {
        const std::lock_guard lock(mutex);
        pending.swap(unsubscribes);
    }
    for (const auto& orphan : pending) {
        if (stopping.load() || !subscriptions.subscribers(orphan.workspace, orphan.uri).empty()) {
            continue;  // followed again meanwhile: the upstream stays subscribed
        }
        for (auto& link : snapshot()) {
            if (link->config.name == orphan.upstream &&
                link->config.workspace == orphan.workspace) {
                link->request("resources/unsubscribe", R"({"uri":)" + jsonString(orphan.uri) + "}",
                              nullptr);
            }
        }
    }
}

void Federation::Impl::resubscribe(UpstreamLink& link) {
    // A started upstream is a new connection: it knows none of the subscriptions that clients
    // kept while it was stopped.
    for (const std::string& uri :
         subscriptions.followedOf(link.config.workspace, link.config.name)) {
        if (stopping.load() || link.closed()) {
            return;
        }
        const Answer a =
            link.request("resources/subscribe", R"({"uri":)" + jsonString(uri) + "}", nullptr);
        if (!a.ok) {
            log::warn("upstream {}: resources/subscribe {} after its start failed: {}",
                      link.config.name, uri.substr(0, 256), a.json.substr(0, 512));
        }
    }
}

void Federation::Impl::noticeToWorkspace(const std::string& workspace,
                                         const mcp::CatalogNotice& notice) {
    const auto it = catalogs.find(workspace);
    if (it != catalogs.end()) {
        it->second->emit(notice);
    }
}

void Federation::Impl::listsChanged(UpstreamLink& link, int which) {
    link.dirty |= which;
    const std::lock_guard lock(mutex);
    wake.notify_all();
}

void Federation::Impl::resourceUpdated(UpstreamLink& link, const std::string& uri,
                                       std::string_view params_json) {
    mcp::CatalogNotice notice{"notifications/resources/updated", std::string(params_json), {}, {}};
    notice.sessions = subscriptions.subscribers(link.config.workspace, uri);
    if (!notice.sessions.empty()) {
        noticeToWorkspace(link.config.workspace, notice);
    }
}

void Federation::Impl::taskStatus(UpstreamLink& link, const std::string& upstream_id,
                                  std::string_view params_json) {
    const auto id = tasks.crankId(link, upstream_id);
    if (!id) {
        return;  // a task no client of crank created
    }
    std::optional<std::string> renamed = withTaskId(params_json, upstream_id, id->first);
    if (!renamed) {
        return;  // unreadable: never shown with the upstream's own id
    }
    noticeToWorkspace(
        link.config.workspace,
        mcp::CatalogNotice{"notifications/tasks/status", std::move(*renamed), {id->second}, {}});
}

void Federation::Impl::logMessage(UpstreamLink& link, mcp::LogLevel level,
                                  std::string_view params_json) {
    noticeToWorkspace(
        link.config.workspace,
        mcp::CatalogNotice{"notifications/message", std::string(params_json), {}, level});
}

}  // namespace crank::federation
