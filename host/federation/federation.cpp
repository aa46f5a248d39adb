#include "federation/federation.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "federation/federation_impl.h"
#include "federation/workspace_catalog.h"
#include "json/json_members.h"
#include "log/log.h"
#include "util/json_string.h"

namespace crank::federation {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Federation::Federation(std::vector<config::UpstreamConfig> upstreams,
                       const plugins::PluginRegistry& registry,
                       std::map<std::string, mcp::FunctionToolRegistry*> tools,
                       std::size_t page_size, std::shared_ptr<runtime::AuditLog> audit)
    : impl_(std::make_shared<Impl>(std::move(upstreams), registry, std::move(tools),
                                   std::max<std::size_t>(page_size, 1), std::move(audit))) {}

Federation::~Federation() {
    stop();
}

void Federation::limitUpstreams(std::shared_ptr<mcp::UpstreamSlots> slots) {
    impl_->slots = std::move(slots);
}

Result<void> Federation::start() {
    Impl& impl = *impl_;
    // Every workspace's catalog exists before the first upstream opens: an open upstream's
    // notifications reach noticeToWorkspace(), which reads the map without a lock. Every
    // workspace gets one, for it may gain upstreams while crankd runs.
    for (const auto& [workspace, registry] : impl.tools) {
        impl.catalogs[workspace] = std::make_unique<WorkspaceCatalog>(impl, workspace);
    }
    for (const config::UpstreamConfig& c : impl.configs) {
        if (impl.catalogs.count(c.workspace) == 0) {
            impl.catalogs[c.workspace] = std::make_unique<WorkspaceCatalog>(impl, c.workspace);
        }
    }
    for (std::size_t i = 0; i < impl.configs.size(); ++i) {
        const config::UpstreamConfig& c = impl.configs[i];
        const plugins::AdapterHandle* adapter = impl.registry.adapter(c.protocol);
        std::string problem;
        if (adapter == nullptr) {
            problem = "no adapter \"" + c.protocol + "\" is loaded (see `crankd plugins`)";
        } else if (!adapter->hasCapability(CRANK_CAP_FEDERATION)) {
            problem = "adapter \"" + c.protocol + "\" cannot federate upstreams";
        }
        auto link = impl.makeLink(c, adapter);
        if (problem.empty()) {
            problem = link->open();
        }
        if (!problem.empty()) {
            stop();
            return Error{ErrorCode::invalid_argument,
                         fmt::format("upstreams[{}] ({}): {}", i, c.name, problem)};
        }
        log::info("upstream {} ({}) opened for workspace {}", c.name, c.protocol, c.workspace);
        const std::lock_guard lock(impl.mutex);
        impl.links.push_back(std::move(link));
    }
    // Always: upstreams may be added while crankd runs.
    impl.refresher = std::thread([&impl] { impl.runRefresher(); });
    return {};
}

void Federation::cancelRequests() {
    impl_->cancelling = true;
}

void Federation::stop() {
    Impl& impl = *impl_;
    impl.cancelling = true;
    {
        const std::lock_guard lock(impl.mutex);
        if (impl.stopping.exchange(true)) {
            return;
        }
        impl.wake.notify_all();
    }
    // An operator's control under way sees `stopping` (its grace, an open under way) and ends
    // soon; the links are closed once it did.
    const std::lock_guard control(impl.controlMutex);
    if (impl.refresher.joinable()) {
        impl.refresher.join();
    }
    for (auto& link : impl.snapshot()) {
        // Requests still running see `stopping` as a cancellation and end soon; the upstream
        // is closed only after them (closing under a running request would free its state).
        Impl::closeHandle(*link, milliseconds(10'000));
    }
    impl.closeAllDrained();
}

std::vector<Federation::TestResult> Federation::test(
    const std::vector<config::UpstreamConfig>& upstreams, const plugins::PluginRegistry& registry) {
    std::vector<TestResult> results;
    for (const config::UpstreamConfig& c : upstreams) {
        // One upstream per federation, opened and closed alone: nothing is published.
        Federation one({c}, registry, {}, 1);
        Impl& impl = *one.impl_;
        TestResult r;
        r.name = c.name;
        const plugins::AdapterHandle* adapter = registry.adapter(c.protocol);
        if (adapter == nullptr || !adapter->hasCapability(CRANK_CAP_FEDERATION)) {
            r.detail = "no adapter \"" + c.protocol + "\" that federates upstreams is loaded";
            results.push_back(std::move(r));
            continue;
        }
        auto link = impl.makeLink(c, adapter);
        const auto started = std::chrono::steady_clock::now();
        const auto msSince = [](std::chrono::steady_clock::time_point t) {
            return std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - t)
                .count();
        };
        std::string problem = link->open();
        r.open_ms = msSince(started);
        if (!problem.empty()) {
            r.detail = std::move(problem);
            results.push_back(std::move(r));
            continue;
        }
        const auto pinged = std::chrono::steady_clock::now();
        const Answer a = link->request("ping", "{}", nullptr);
        r.ping_ms = msSince(pinged);
        r.ok = a.ok;
        if (!a.ok) {
            json::Document error;
            r.detail =
                json::parseObject(a.json, error) ? json::stringMember(error, "message") : a.json;
        }
        crank_upstream* handle = link->release();
        r.status_json = link->scrubber.scrubJson(adapter->upstreamStatus(handle));
        adapter->upstreamClose(handle);
        results.push_back(std::move(r));
    }
    return results;
}

std::string Federation::TestResult::toJson() const {
    return R"({"name":)" + jsonString(name) + R"(,"ok":)" + (ok ? "true" : "false") +
           R"(,"detail":)" + jsonString(detail) +
           fmt::format(R"(,"open_ms":{},"ping_ms":{})", open_ms, ping_ms) + R"(,"connection":)" +
           (status_json.empty() ? std::string("{}") : status_json) + "}";
}

Federation::TestResult Federation::testOne(config::UpstreamConfig upstream,
                                           const plugins::PluginRegistry& registry,
                                           std::int64_t timeout_ms) {
    upstream.request_timeout_ms = std::min(upstream.request_timeout_ms, timeout_ms);
    std::vector<TestResult> results = test({std::move(upstream)}, registry);
    return std::move(results.front());
}

std::optional<Federation::TestResult> Federation::testConfigured(std::string_view name,
                                                                 std::int64_t timeout_ms) const {
    const std::shared_ptr<UpstreamLink> link = impl_->find(name);
    if (!link) {
        return std::nullopt;
    }
    return testOne(link->config, impl_->registry, timeout_ms);
}

std::map<std::string, mcp::Catalog*> Federation::catalogs() {
    std::map<std::string, mcp::Catalog*> out;
    for (auto& [ws, catalog] : impl_->catalogs) {
        out[ws] = catalog.get();
    }
    return out;
}

bool Federation::settled() const {
    const std::lock_guard lock(impl_->mutex);
    // A link the operator stopped before its first fetch counts: it will not fetch.
    return std::all_of(impl_->links.begin(), impl_->links.end(),
                       [](const auto& l) { return l->settled.load() || l->closing.load(); });
}

namespace {

/// What the operator reads of one link: "stopped" (by the operator), "open" or "closed" (it
/// failed to open, or crankd stops).
std::string stateOf(const UpstreamLink& link) {
    if (link.closing.load()) {
        return "stopped";
    }
    return link.handle() != nullptr ? "open" : "closed";
}

}  // namespace

std::string Federation::statusOf(UpstreamLink& link) const {
    // Copied under the lock, written without it: the lists may be long.
    std::size_t counts[4] = {};
    std::string last_error;
    std::vector<std::string> collisions;
    std::vector<std::string> filtered;
    {
        const std::lock_guard lock(impl_->mutex);
        counts[0] = link.lists.tools.size();
        counts[1] = link.lists.resources.size();
        counts[2] = link.lists.templates.size();
        counts[3] = link.lists.prompts.size();
        last_error = link.last_error;
        collisions = link.collisions;
        filtered = link.filtered;
    }
    std::string entry =
        R"({"name":)" + jsonString(link.config.name) + R"(,"workspace":)" +
        jsonString(link.config.workspace) + R"(,"protocol":)" + jsonString(link.config.protocol) +
        R"(,"state":)" + jsonString(stateOf(link)) +
        // The config file's upstreams change with the file (a reload), not through the API.
        (link.from_config ? R"(,"source":"config","read_only":true)"
                          : R"(,"source":"admin","read_only":false)") +
        fmt::format(R"(,"tools":{},"resources":{},"resource_templates":{},"prompts":{})", counts[0],
                    counts[1], counts[2], counts[3]) +
        // The upstream's words may quote its secrets back: scrubbed like its status.
        R"(,"last_error":)" + jsonString(link.scrubber.scrub(last_error)) + R"(,"collisions":[)";
    for (std::size_t i = 0; i < collisions.size(); ++i) {
        entry += (i == 0 ? "" : ",") + jsonString(collisions[i]);
    }
    entry += R"(],"filtered":[)";
    for (std::size_t i = 0; i < filtered.size(); ++i) {
        entry += (i == 0 ? "" : ",") + jsonString(filtered[i]);
    }
    entry += "]";
    std::string status = "{}";
    link.withOpenHandle([&](crank_upstream* handle) {
        status = link.scrubber.scrubJson(link.adapter->upstreamStatus(handle));
    });
    return entry + R"(,"connection":)" + status + "}";
}

std::string Federation::statusJson() const {
    std::string out = "[";
    for (const auto& link : impl_->snapshot()) {
        out += (out.size() == 1 ? "" : ",") + statusOf(*link);
    }
    return out + "]";
}

std::optional<std::string> Federation::statusJson(std::string_view name) const {
    const std::shared_ptr<UpstreamLink> link = impl_->find(name);
    if (!link) {
        return std::nullopt;
    }
    return statusOf(*link);
}

std::optional<Federation::ListPage> Federation::listOf(std::string_view name,
                                                       std::string_view which, std::size_t offset,
                                                       std::size_t limit) const {
    const std::shared_ptr<UpstreamLink> link = impl_->find(name);
    if (!link) {
        return std::nullopt;
    }
    const config::UpstreamConfig& c = link->config;
    ListPage page;
    page.items_json = "[";
    const std::lock_guard lock(impl_->mutex);
    const std::vector<Item>& items = which == "tools"       ? link->lists.tools
                                     : which == "resources" ? link->lists.resources
                                     : which == "prompts"   ? link->lists.prompts
                                                            : link->lists.templates;
    const char* key = which == "resources"            ? "uri"
                      : which == "resource_templates" ? "uriTemplate"
                                                      : "name";
    page.total = items.size();
    const auto owners = impl_->toolOwners.find(c.workspace);
    for (std::size_t i = offset; i < items.size() && i - offset < limit; ++i) {
        const Item& item = items[i];
        std::string publishedAs = "null";
        std::string whyNot;
        if (which == "tools") {
            const std::string published = c.publishedToolName(item.original);
            const bool owned = owners != impl_->toolOwners.end() &&
                               owners->second.count(published) != 0 &&
                               owners->second.at(published).first == link.get();
            if (owned) {
                publishedAs = jsonString(published);
            } else if (std::string filtered = c.toolFiltered(item.original); !filtered.empty()) {
                whyNot = std::move(filtered);
            } else {
                whyNot =
                    "not published: its name is taken, or is not a tool name (see the "
                    "upstream's collisions)";
            }
        } else if (which == "prompts") {
            publishedAs = jsonString(c.publishedName(item.original));
        } else {
            publishedAs = jsonString(item.original);  // URIs are kept
        }
        page.items_json +=
            (i == offset ? "{\"" : ",{\"") + std::string(key) + "\":" + jsonString(item.original) +
            R"(,"published_as":)" + publishedAs +
            (whyNot.empty() ? std::string() : R"(,"why_not":)" + jsonString(whyNot)) +
            R"(,"definition":)" + item.json + "}";
    }
    page.items_json += "]";
    return page;
}

Result<Federation::CallResult> Federation::callTool(std::string_view name, std::string_view tool,
                                                    std::string_view arguments_json,
                                                    std::int64_t timeout_ms) const {
    const std::shared_ptr<UpstreamLink> link = impl_->find(name);
    if (!link) {
        return Error{ErrorCode::not_found, fmt::format("no upstream is named \"{}\"", name)};
    }
    if (link->closing.load()) {
        return Error{ErrorCode::unavailable, fmt::format("upstream {} is stopped", name)};
    }
    bool listed = false;
    {
        const std::lock_guard lock(impl_->mutex);
        listed = std::any_of(link->lists.tools.begin(), link->lists.tools.end(),
                             [&](const Item& item) { return item.original == tool; });
    }
    if (!listed) {
        return Error{ErrorCode::not_found,
                     fmt::format("upstream {} lists no tool \"{}\"", name, tool.substr(0, 128))};
    }
    const Clock::time_point started = Clock::now();
    Answer a = link->request(
        "tools/call",
        R"({"name":)" + jsonString(tool) + R"(,"arguments":)" + std::string(arguments_json) + "}",
        nullptr, timeout_ms);
    return CallResult{a.ok, std::move(a.json),
                      std::chrono::duration_cast<milliseconds>(Clock::now() - started).count()};
}

}  // namespace crank::federation
