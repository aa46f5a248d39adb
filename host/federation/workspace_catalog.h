#pragma once

// The Catalog (mcp/catalog.h) of one workspace that has upstreams: its resources, resource
// templates and prompts as published (paged), and the requests that go to the upstream serving a
// name or URI: resources/read, subscribe and unsubscribe, prompts/get, completion/complete,
// tools/call with a task, tasks/*.
//
// THREADING: handle() runs on any thread, concurrently.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "federation/federation_impl.h"
#include "federation/upstream_tasks.h"
#include "json/json_value.h"
#include "mcp/catalog.h"

namespace crank::federation {

class WorkspaceCatalog final : public mcp::Catalog {
public:
    WorkspaceCatalog(Federation::Impl& impl, std::string workspace)
        : impl_(impl), workspace_(std::move(workspace)) {}

    mcp::CatalogCapabilities capabilities() const override;
    std::optional<mcp::CatalogReply> handle(std::string_view method, std::string_view params_json,
                                            mcp::ToolCall& call,
                                            const std::string& session_id) override;
    void forget(const std::string& subscriber) override;
    bool ownsTool(std::string_view name) const override;
    bool ownsTask(std::string_view task_id) const override;
    void clientNotification(std::string_view method, std::string_view params_json) override;
    void subscribe(Listener listener) override;

    /// Sends `notice` to every listener (the endpoints serving this workspace).
    void emit(const mcp::CatalogNotice& notice);

private:
    static mcp::CatalogReply error(std::int64_t code, const std::string& message);

    mcp::CatalogReply list(std::string_view method, const json::Value& params);
    mcp::CatalogReply getPrompt(const json::Value& params, mcp::ToolCall& call);
    mcp::CatalogReply complete(const json::Value& params, std::string_view params_json,
                               mcp::ToolCall& call);
    mcp::CatalogReply byUri(std::string_view method, const json::Value& params,
                            std::string_view params_json, mcp::ToolCall& call,
                            const std::string& session_id);
    /// resources/subscribe or resources/unsubscribe of `uri` (served by `owner`) for
    /// `subscriber`: the upstream is told only of the first subscriber and the last one gone.
    mcp::CatalogReply subscription(UpstreamLink& owner, bool subscribe, const std::string& uri,
                                   std::string_view params_json, mcp::ToolCall& call,
                                   const std::string& subscriber);
    // The upstreams' tasks (catalog_tasks.cpp).
    /// tools/call with params.task of a federated tool (a 2025 session's): the upstream creates
    /// the task in its era, shown as a 2025 Task; a 2026 upstream that answers at once gets a
    /// completed task of crankd's (UpstreamTasks::settle).
    mcp::CatalogReply taskCall(const json::Value& params, mcp::ToolCall& call,
                               const std::string& session_id);
    /// tasks/get, tasks/result, tasks/update, tasks/cancel of an upstream's task, in the era of
    /// the caller (a 2026 caller is one that declared the Tasks extension).
    mcp::CatalogReply taskRequest(std::string_view method, const json::Value& params,
                                  mcp::ToolCall& call);
    /// A 2025 session's request on a 2026 upstream's task (`id` crankd's, the route's upstream id
    /// the upstream's).
    mcp::CatalogReply legacyOnModern(std::string_view method, UpstreamLink& link,
                                     const UpstreamTasks::Route& route, const std::string& id,
                                     mcp::ToolCall& call);
    /// A 2026 caller's request on a 2025 upstream's task: tasks/get as the extension's task (an
    /// ended one with its result or error, fetched with tasks/result, inlined), tasks/cancel and
    /// tasks/update acknowledged.
    mcp::CatalogReply modernOnLegacy(std::string_view method, UpstreamLink& link,
                                     const UpstreamTasks::Route& route, const std::string& id,
                                     mcp::ToolCall& call);
    /// tasks/result of a 2026 upstream's task for a 2025 session: tasks/get until it ends, its
    /// questions asked on the session's stream and answered with tasks/update.
    mcp::CatalogReply legacyResult(UpstreamLink& link, const UpstreamTasks::Route& route,
                                   const std::string& id, mcp::ToolCall& call);
    /// A request on a task crankd settled itself (Route::settled).
    static mcp::CatalogReply settledRequest(std::string_view method,
                                            const UpstreamTasks::Route& route,
                                            const std::string& id, bool modern);
    mcp::CatalogReply forward(UpstreamLink& link, std::string_view method,
                              const std::string& params, mcp::ToolCall& call);
    /// A request of this catalog to `link`, within the upstream's bound like its tools' calls:
    /// beyond it, refused at once with an error that names the upstream and the limit, so that
    /// reads of a slow upstream cannot take every worker.
    /// `tasks`: the Tasks extension declared upstream (UpstreamLink::request).
    Answer request(UpstreamLink& link, std::string_view method, std::string_view params,
                   mcp::ToolCall& call, bool tasks = false);
    /// One request to `link` within its bound, as it is: no input round relayed (the task
    /// methods, whose answers carry a task's questions, not a request's).
    Answer send(UpstreamLink& link, std::string_view method, const std::string& params,
                mcp::ToolCall& call, bool tasks = false);
    /// The upstream that published prompt `name` here, and its own name for it (under
    /// impl_.mutex).
    std::shared_ptr<UpstreamLink> ownerOfPrompt(const std::string& name, std::string& original);
    /// The upstream that serves `uri` here: the one that lists it, else the first whose
    /// template matches it, else the only upstream of the workspace.
    std::shared_ptr<UpstreamLink> ownerOfUri(const std::string& uri);

    Federation::Impl& impl_;
    std::string workspace_;
    std::mutex listenerMutex_;
    std::vector<Listener> listeners_;
};

}  // namespace crank::federation
