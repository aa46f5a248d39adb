#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/tool_registry.h"
#include "mcp/wire/log_level.h"

namespace crank::mcp {

/// The answer to one catalog request: a result object, or a JSON-RPC error.
struct CatalogReply {
    std::string result_json;  ///< the result object (JSON text) when `error_json` is empty
    /// A JSON-RPC error object ({"code":..,"message":..,"data":..}), passed on as it is.
    std::string error_json;
};

/// A notification the catalog wants sent to clients.
struct CatalogNotice {
    std::string method;       ///< e.g. "notifications/resources/list_changed"
    std::string params_json;  ///< JSON object text, or empty
    /// Only to these MCP sessions (resources/updated goes to its subscribers); empty: every
    /// session of the catalog's workspace.
    std::vector<std::string> sessions;
    /// notifications/message: the line's level; a session gets it only when its level lets it
    /// through. Other notices leave it empty.
    std::optional<LogLevel> level;
};

/// The capabilities a catalog offers, as values (written as JSON by capabilitiesJson()).
struct CatalogCapabilities {
    bool resources = false;
    bool resources_subscribe = false;
    bool resources_list_changed = false;
    bool prompts = false;
    bool prompts_list_changed = false;
    bool completions = false;
};

/// The members of a server's capabilities object for `c`, as JSON text without braces
/// (`"resources":{...},"prompts":{...}`); empty when it offers nothing.
std::string capabilitiesJson(const CatalogCapabilities& c);

/// What a workspace's MCP server publishes besides tools: resources, resource templates,
/// prompts and completions (the federated upstreams' ones). The endpoint answers the MCP
/// methods of these with it.
///
/// THREADING: every member may be called from any thread, concurrently.
class Catalog {
public:
    virtual ~Catalog() = default;

    /// What the catalog offers, added to the server's capabilities (initialize, server/discover)
    /// and read by the 2026 listen (which list changes and subscriptions it can honour).
    virtual CatalogCapabilities capabilities() const = 0;

    /// Answers `method` (resources/list, resources/templates/list, resources/read,
    /// resources/subscribe, resources/unsubscribe, prompts/list, prompts/get,
    /// completion/complete; tools/call with `params.task` for a tool of ownsTool(); tasks/get,
    /// tasks/result and tasks/cancel for a task of ownsTask()) for MCP session `session_id`;
    /// nullopt when `method` is not one of the catalog's. `call` carries cancellation, progress
    /// when asked for, and requests to the client when it has a stream.
    virtual std::optional<CatalogReply> handle(std::string_view method,
                                               std::string_view params_json, ToolCall& call,
                                               const std::string& session_id) = 0;

    /// True when the tool `name` runs in an upstream that runs tasks itself: a tools/call of it
    /// with `params.task` goes to handle() (the upstream creates the task).
    virtual bool ownsTool(std::string_view /*name*/) const { return false; }
    /// True when `task_id` names a task an upstream runs (see ownsTool).
    virtual bool ownsTask(std::string_view /*task_id*/) const { return false; }

    /// Drops every resource subscription of `subscriber` (a session id given to handle(): an MCP
    /// session that ended, or a listen that closed), without waiting on an upstream: a resource
    /// no subscriber is left for is unsubscribed upstream later, off the caller's thread.
    virtual void forget(const std::string& /*subscriber*/) {}

    /// A notification from a client that no request owns (notifications/roots/list_changed).
    virtual void clientNotification(std::string_view /*method*/, std::string_view /*params_json*/) {
    }

    using Listener = std::function<void(const CatalogNotice&)>;
    /// `listener` runs (on the catalog's thread) for every notice.
    virtual void subscribe(Listener listener) = 0;
};

}  // namespace crank::mcp
