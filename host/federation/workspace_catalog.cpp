#include "federation/workspace_catalog.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "federation/input_relay.h"
#include "federation/uri_match.h"
#include "json/json_members.h"
#include "json/json_text.h"
#include "util/json_string.h"

namespace crank::federation {
namespace {

/// A page of `items` from params.cursor ("c<hex index>"), as `{"<member>":[...],"nextCursor":..}`;
/// nullopt for a cursor crank did not give.
std::optional<std::string> page(const std::vector<Item>& items, const char* member,
                                const json::Value& params, std::size_t page_size) {
    std::size_t start = 0;
    if (params.IsObject() && params.HasMember("cursor")) {
        const std::string cursor = json::stringMember(params, "cursor");
        std::size_t value = 0;
        bool ok = cursor.size() > 1 && cursor[0] == 'c';
        if (ok) {
            const auto [end, ec] =
                std::from_chars(cursor.data() + 1, cursor.data() + cursor.size(), value, 16);
            ok = ec == std::errc() && end == cursor.data() + cursor.size() && value <= items.size();
        }
        if (!ok) {
            return std::nullopt;
        }
        start = value;
    }
    const std::size_t end = std::min(items.size(), start + page_size);
    std::string out = R"({")" + std::string(member) + R"(":[)";
    for (std::size_t i = start; i < end; ++i) {
        out += (i == start ? "" : ",") + items[i].json;
    }
    out += ']';
    if (end < items.size()) {
        out += R"(,"nextCursor":)" + jsonString(fmt::format("c{:x}", end));
    }
    return out + "}";
}

}  // namespace

mcp::CatalogCapabilities WorkspaceCatalog::capabilities() const {
    // Every workspace has a catalog (it may gain upstreams while crankd runs), but offers what
    // one serves only while it has one.
    const std::lock_guard lock(impl_.mutex);
    const bool any = std::any_of(impl_.links.begin(), impl_.links.end(), [&](const auto& link) {
        return link->config.workspace == workspace_;
    });
    return any ? mcp::CatalogCapabilities{true, true, true, true, true, true}
               : mcp::CatalogCapabilities{};
}

std::optional<mcp::CatalogReply> WorkspaceCatalog::handle(std::string_view method,
                                                          std::string_view params_json,
                                                          mcp::ToolCall& call,
                                                          const std::string& session_id) {
    static const std::set<std::string_view> kMethods = {"resources/list",
                                                        "resources/templates/list",
                                                        "resources/read",
                                                        "resources/subscribe",
                                                        "resources/unsubscribe",
                                                        "prompts/list",
                                                        "prompts/get",
                                                        "completion/complete",
                                                        "tools/call",
                                                        "tasks/get",
                                                        "tasks/result",
                                                        "tasks/update",
                                                        "tasks/cancel"};
    if (kMethods.count(method) == 0) {
        return std::nullopt;
    }
    json::Document params;
    if (!json::parseObject(params_json, params)) {
        return error(-32602, std::string(method) + ": params must be an object");
    }
    if (method == "resources/list" || method == "resources/templates/list" ||
        method == "prompts/list") {
        return list(method, params);
    }
    if (method == "tools/call") {
        return taskCall(params, call, session_id);
    }
    if (method == "tasks/get" || method == "tasks/result" || method == "tasks/update" ||
        method == "tasks/cancel") {
        return taskRequest(method, params, call);
    }
    if (method == "prompts/get") {
        return getPrompt(params, call);
    }
    if (method == "completion/complete") {
        return complete(params, params_json, call);
    }
    return byUri(method, params, params_json, call, session_id);
}

mcp::CatalogReply WorkspaceCatalog::list(std::string_view method, const json::Value& params) {
    std::optional<std::string> answer;
    {
        const std::lock_guard lock(impl_.mutex);
        const Lists& lists = impl_.published[workspace_];
        answer = method == "resources/list"
                     ? page(lists.resources, "resources", params, impl_.pageSize)
                 : method == "prompts/list"
                     ? page(lists.prompts, "prompts", params, impl_.pageSize)
                     : page(lists.templates, "resourceTemplates", params, impl_.pageSize);
    }
    if (!answer) {
        return error(-32602, std::string(method) + ": invalid cursor");
    }
    return mcp::CatalogReply{*answer, {}};
}

mcp::CatalogReply WorkspaceCatalog::getPrompt(const json::Value& params, mcp::ToolCall& call) {
    const std::string name = json::stringMember(params, "name");
    std::string original;
    std::shared_ptr<UpstreamLink> owner;
    {
        const std::lock_guard lock(impl_.mutex);
        owner = ownerOfPrompt(name, original);
    }
    if (owner == nullptr) {
        return error(-32602, "prompts/get: unknown prompt: " + name.substr(0, 128));
    }
    return forward(*owner, "prompts/get", json::withStringMember(params, "name", original), call);
}

mcp::CatalogReply WorkspaceCatalog::complete(const json::Value& params,
                                             std::string_view params_json, mcp::ToolCall& call) {
    if (!params.HasMember("ref") || !params["ref"].IsObject()) {
        return error(-32602, "completion/complete: params.ref must be an object");
    }
    const json::Value& ref = params["ref"];
    const std::string type = json::stringMember(ref, "type");
    std::shared_ptr<UpstreamLink> owner;
    std::string rewritten;
    if (type == "ref/prompt") {
        const std::string name = json::stringMember(ref, "name");
        std::string original;
        {
            const std::lock_guard lock(impl_.mutex);
            owner = ownerOfPrompt(name, original);
        }
        if (owner == nullptr) {
            return error(-32602, "completion/complete: unknown prompt: " + name.substr(0, 128));
        }
        json::Document copy;
        copy.CopyFrom(params, copy.GetAllocator());
        copy["ref"]["name"].SetString(original.c_str(),
                                      static_cast<rapidjson::SizeType>(original.size()),
                                      copy.GetAllocator());
        rewritten = json::toJsonText(copy);
    } else if (type == "ref/resource") {
        owner = ownerOfUri(json::stringMember(ref, "uri"));
        rewritten = std::string(params_json);
        if (owner == nullptr) {
            return error(-32602, "completion/complete: no upstream serves " +
                                     json::stringMember(ref, "uri").substr(0, 256));
        }
    } else {
        return error(-32602,
                     "completion/complete: unknown ref.type " + jsonString(type.substr(0, 64)));
    }
    return forward(*owner, "completion/complete", rewritten, call);
}

mcp::CatalogReply WorkspaceCatalog::byUri(std::string_view method, const json::Value& params,
                                          std::string_view params_json, mcp::ToolCall& call,
                                          const std::string& session_id) {
    // resources/read, resources/subscribe, resources/unsubscribe.
    const std::string uri = json::stringMember(params, "uri");
    if (uri.empty()) {
        return error(-32602, std::string(method) + ": params.uri is required (a string)");
    }
    std::shared_ptr<UpstreamLink> owner = ownerOfUri(uri);
    const bool subscribing = method == "resources/subscribe" || method == "resources/unsubscribe";
    if (owner == nullptr && !subscribing) {
        // Perhaps created a moment ago (a tool's resource_link) and not listed yet here: fetch
        // the workspace's resource lists once, now, before saying it does not exist. Not for a
        // subscription: a listen subscribes to up to 64 URIs in one request, and each unknown
        // one would fetch every upstream's lists again.
        for (auto& link : impl_.snapshot()) {
            if (link->config.workspace == workspace_ && !impl_.stopping.load() &&
                !link->closing.load()) {
                impl_.refresh(*link, kResources);
            }
        }
        impl_.publish(workspace_);
        owner = ownerOfUri(uri);
    }
    if (owner == nullptr) {
        return mcp::CatalogReply{
            {}, rpcError(-32002, "Resource not found", R"({"uri":)" + jsonString(uri) + "}")};
    }
    if (subscribing) {
        return subscription(*owner, method == "resources/subscribe", uri, params_json, call,
                            session_id);
    }
    return forward(*owner, method, std::string(params_json.empty() ? "{}" : params_json), call);
}

mcp::CatalogReply WorkspaceCatalog::subscription(UpstreamLink& owner, bool subscribe,
                                                 const std::string& uri,
                                                 std::string_view params_json, mcp::ToolCall& call,
                                                 const std::string& subscriber) {
    const std::string method = subscribe ? "resources/subscribe" : "resources/unsubscribe";
    const std::string params(params_json.empty() ? "{}" : params_json);
    if (!subscribe) {
        if (!impl_.subscriptions.remove(workspace_, uri, subscriber)) {
            return mcp::CatalogReply{"{}", {}};
        }
        return forward(owner, method, params, call);
    }
    const Result<bool> first = impl_.subscriptions.add(
        workspace_, uri, owner.config.name, subscriber, call.caller().agent,
        {static_cast<std::size_t>(owner.config.max_subscriptions_per_client),
         static_cast<std::size_t>(owner.config.max_subscriptions_per_agent)});
    if (!first) {
        return error(first.error().code == ErrorCode::invalid_argument ? -32602 : -32603,
                     method + ": " + first.error().message);
    }
    if (!*first) {
        return mcp::CatalogReply{"{}", {}};
    }
    mcp::CatalogReply reply = forward(owner, method, params, call);
    if (!reply.error_json.empty()) {
        // Not subscribed upstream: neither is the subscriber.
        impl_.subscriptions.remove(workspace_, uri, subscriber);
    }
    return reply;
}

void WorkspaceCatalog::forget(const std::string& subscriber) {
    impl_.queueUnsubscribes(impl_.subscriptions.forget(workspace_, subscriber));
}

bool WorkspaceCatalog::ownsTool(std::string_view name) const {
    const std::lock_guard lock(impl_.mutex);
    const auto ws = impl_.toolOwners.find(workspace_);
    return ws != impl_.toolOwners.end() && ws->second.count(std::string(name)) != 0;
}

bool WorkspaceCatalog::ownsTask(std::string_view task_id) const {
    // Every id of this form is the federation's (an unknown one is answered as unknown).
    return task_id.substr(0, UpstreamTasks::kPrefix.size()) == UpstreamTasks::kPrefix;
}

void WorkspaceCatalog::clientNotification(std::string_view method, std::string_view params_json) {
    for (auto& link : impl_.snapshot()) {
        if (link->config.workspace == workspace_) {
            link->withOpenHandle([&](crank_upstream* handle) {
                link->adapter->upstreamNotify(handle, method, params_json);
            });
        }
    }
}

void WorkspaceCatalog::subscribe(Listener listener) {
    const std::lock_guard lock(listenerMutex_);
    listeners_.push_back(std::move(listener));
}

void WorkspaceCatalog::emit(const mcp::CatalogNotice& notice) {
    std::vector<Listener> listeners;
    {
        const std::lock_guard lock(listenerMutex_);
        listeners = listeners_;
    }
    for (const Listener& l : listeners) {
        l(notice);
    }
}

mcp::CatalogReply WorkspaceCatalog::error(std::int64_t code, const std::string& message) {
    return mcp::CatalogReply{{}, rpcError(code, message)};
}

mcp::CatalogReply WorkspaceCatalog::forward(UpstreamLink& link, std::string_view method,
                                            const std::string& params, mcp::ToolCall& call) {
    Answer a = request(link, method, params, call);
    return a.ok ? mcp::CatalogReply{std::move(a.json), {}}
                : mcp::CatalogReply{{}, std::move(a.json)};
}

Answer WorkspaceCatalog::request(UpstreamLink& link, std::string_view method,
                                 std::string_view params, mcp::ToolCall& call, bool tasks) {
    // Each round holds a slot of the upstream only while it is sent: not while the client
    // thinks about a question (input_relay.h).
    return relayInputRounds(
        [&](const std::string& round_params) {
            return send(link, method, round_params, call, tasks);
        },
        params, call, "upstream " + link.config.name + ": " + std::string(method),
        kMaxRelayedRounds, std::chrono::milliseconds(link.config.client_request_timeout_ms));
}

Answer WorkspaceCatalog::send(UpstreamLink& link, std::string_view method,
                              const std::string& params, mcp::ToolCall& call, bool tasks) {
    std::unique_ptr<mcp::UpstreamSlots::Hold> slot;  // released however the request ends
    if (impl_.slots) {
        std::string refusal;
        slot = impl_.slots->hold(link.slotKey(), refusal);
        if (!slot) {
            return {false, rpcError(-32603, std::string(method) + ": " + refusal)};
        }
    }
    return link.request(method, params, &call, 0, tasks);
}

std::shared_ptr<UpstreamLink> WorkspaceCatalog::ownerOfPrompt(const std::string& name,
                                                              std::string& original) {
    bool published = false;
    for (const Item& item : impl_.published[workspace_].prompts) {
        if (item.key == name) {
            original = item.original;
            published = true;
        }
    }
    if (!published) {
        return nullptr;
    }
    for (auto& link : impl_.links) {
        if (link->config.workspace != workspace_) {
            continue;
        }
        for (const Item& item : link->lists.prompts) {
            if (link->config.publishedName(item.original) == name) {
                return link;
            }
        }
    }
    return nullptr;
}

std::shared_ptr<UpstreamLink> WorkspaceCatalog::ownerOfUri(const std::string& uri) {
    const std::lock_guard lock(impl_.mutex);
    std::shared_ptr<UpstreamLink> only;
    int count = 0;
    for (auto& link : impl_.links) {
        if (link->config.workspace != workspace_) {
            continue;
        }
        ++count;
        only = link;
        for (const Item& item : link->lists.resources) {
            if (item.original == uri) {
                return link;
            }
        }
    }
    for (auto& link : impl_.links) {
        if (link->config.workspace != workspace_) {
            continue;
        }
        for (const Item& item : link->lists.templates) {
            if (matchesUriTemplate(item.original, uri)) {
                return link;
            }
        }
    }
    return count == 1 ? only : nullptr;
}

}  // namespace crank::federation
