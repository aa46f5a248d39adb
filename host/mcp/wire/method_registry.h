#pragma once

// Every MCP method crankd knows, one row each: which era serves it, which layer answers it, and
// the facts the transports, the routing headers, the cache hints and /metrics need about it.
// Adding a method is one row here plus its handler; nothing else compares method names.
// (After SQLite's aBuiltinFunc table and the Go SDK's serverMethodInfos.)

#include <string_view>

namespace crank::mcp {

/// Who answers a method.
enum class MethodHandler {
    lifecycle,     ///< the 2025 session transport (initialize, ping, logging/setLevel)
    discover,      ///< the 2026 transport (server/discover)
    listen,        ///< the 2026 transport (subscriptions/listen)
    tools_list,    ///< MethodTable, both eras
    tools_call,    ///< MethodTable, both eras
    catalog,       ///< MethodTable, through the workspace's Catalog
    tasks,         ///< the era's Tasks (2025-11-25 tasks, the 2026 extension)
    notification,  ///< a client's notification (no answer)
};

/// Which 2026-07-28 cache hint a result carries (ttlMs and cacheScope).
enum class MethodCache {
    none,     ///< none: never cached
    list,     ///< a list's (mcp.list_ttl_ms)
    content,  ///< a resource's content (mcp.read_ttl_ms)
};

struct MethodInfo {
    std::string_view name;
    MethodHandler handler;
    bool legacy;  ///< served in the 2025 era
    bool modern;  ///< served in the 2026-07-28 era (a legacy method that is not was removed)
    /// 2026-07-28: the cache hint its result carries.
    MethodCache cache;
    /// 2026-07-28: the params member the Mcp-Name header mirrors; "" for none.
    std::string_view name_member;
    /// It may need the client while it runs (a tool's or an upstream's questions): in the
    /// 2026 era it may answer input_required, or run as a held call.
    bool may_ask;
    /// A catalog method answered from crankd's own lists: it waits on no upstream and takes no
    /// call slot.
    bool from_memory;
};

/// The row of `method`; null for a method crankd does not know.
const MethodInfo* findMethod(std::string_view method);

/// The client capability a request crankd sends to a client needs (sampling/createMessage:
/// "sampling", elicitation/create: "elicitation", roots/list: "roots"); null for another method.
const char* clientCapabilityFor(std::string_view client_method);

}  // namespace crank::mcp
