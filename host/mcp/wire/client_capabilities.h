#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace crank::mcp {

/// The members of a client's initialize `capabilities` that crankd reads: whether it may be asked
/// for roots, sampling or elicitation during a call (and, forwarded to upstreams, what of them),
/// and what it says of tasks.
inline constexpr const char* kKeptClientCapabilities[] = {"roots", "sampling", "elicitation",
                                                          "tasks"};
/// A kept member whose JSON is longer than this is kept as declared but empty ({}).
inline constexpr std::size_t kMaxClientCapabilityBytes = 1024;

/// The client's capabilities as a session keeps them: only the members crankd reads (the rest,
/// `experimental` included, are dropped), each at most kMaxClientCapabilityBytes; a member that
/// is not an object is dropped. So a session's capabilities cost at most a few KiB, however large
/// the client sends them (a body is bounded only by server.max_request_body_bytes).
std::string keptClientCapabilities(const rapidjson::Value& capabilities);

/// True when `capabilities_json` (a client's capabilities object; "" reads as {}) declares
/// `capability`.
bool declaresCapability(std::string_view capabilities_json, std::string_view capability);

/// True when `capabilities_json` declares one a server may ask during a call: sampling,
/// elicitation or roots.
bool declaresClientInput(std::string_view capabilities_json);

}  // namespace crank::mcp
