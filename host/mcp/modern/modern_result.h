#pragma once

// The members every 2026-07-28 result carries (SEP-2322, SEP-2549, SEP-2575): `resultType`
// ("complete" unless the result already says otherwise), the server's identity in
// `_meta["io.modelcontextprotocol/serverInfo"]`, and, on the cacheable methods (server/discover,
// the three lists, resources/templates/list, resources/read), the cache hints `ttlMs` and
// `cacheScope`. The method handlers answer alike in both eras; the modern transport adds these.
//
// THREADING: pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "mcp/wire/request_id.h"
#include "util/error.h"

namespace crank::mcp {

/// How long a client (or a gateway in front of crankd) may reuse a result, and with whom.
struct CacheHint {
    std::int64_t ttl_ms = 0;
    /// "public": any caller may be given it; "private": only the authorization context that got
    /// it (the answer depends on who asked).
    std::string_view scope = "public";
};

/// True for the methods whose complete results carry cache hints.
bool isCacheableMethod(std::string_view method);

/// `result_json` (a result object) with the modern members added where it lacks them:
/// resultType "complete", `_meta[serverInfo]` = `server_info_json` (an object), and `hint` as
/// ttlMs and cacheScope when given (never on a result whose resultType is not "complete": an
/// input_required result is not cached). Members the result already has are kept as they are. A
/// result that is not a JSON object is returned unchanged.
std::string modernResult(std::string_view result_json, std::string_view server_info_json,
                         const std::optional<CacheHint>& hint);

/// The message answering `id` with modernResult(result_json, server_info_json, hint), written
/// once (the common result is not copied on its way).
std::string modernResultMessage(const RequestId& id, std::string_view result_json,
                                std::string_view server_info_json,
                                const std::optional<CacheHint>& hint);

/// An upstream's result (`result_json`, a JSON object) without the top-level members crank sets
/// itself on a 2026-07-28 result: `resultType`, `ttlMs` and `cacheScope` (whatever their
/// spelling: names are compared decoded). An upstream may not ask a client for input crank did
/// not arrange (input_required), nor mark its answer cacheable for anyone. Text that is not an
/// object is returned unchanged. By the `method` it answers, a task keeps what is its own: a
/// tools/call answered with a task (`resultType:"task"`, the Tasks extension) keeps both its
/// resultType and its `ttlMs`, and the answer of a task method (tasks/...) its `ttlMs`.
std::string withoutModernMembers(std::string_view result_json, std::string_view method = {});

/// An upstream's result to `method` as crankd passes it on: withoutModernMembers(), refused
/// (invalid_argument, saying why) when it names one of those members but cannot be read as an
/// object (a duplicate key, say, which a client might read otherwise), or when it is a task
/// (`resultType:"task"`) answering another method than tools/call.
Result<std::string> upstreamResult(std::string_view result_json, std::string_view method);

/// `object_json` (a JSON object) with member `key` = `value_json` in its `_meta`: added to the
/// `_meta` it has (unless it names `key` already), or in a new `_meta`. "" reads as {}; text that
/// is not an object, or whose `_meta` is not one, is returned unchanged.
std::string withMetaMember(std::string_view object_json, std::string_view key,
                           std::string_view value_json);

}  // namespace crank::mcp
