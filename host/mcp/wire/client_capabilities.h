#pragma once

#include <cstddef>
#include <memory>
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

/// The extension of MCP Tasks (SEP-2663), as a 2026-07-28 client declares it.
inline constexpr std::string_view kTasksExtension = "io.modelcontextprotocol/tasks";

/// What a client declared it can do, read once where it comes in (a 2026-07-28 request's `_meta`,
/// a 2025 session's initialize, a task's creating request) and then asked as values. The JSON
/// text is kept as it came, for what passes it on (an upstream, a task).
class ClientCapabilities {
public:
    /// None declared.
    ClientCapabilities() = default;
    /// Reads `json`, the compact text of a capabilities object ("" reads as none declared; text
    /// that is not an object declares nothing, and json() keeps it for the caller to refuse).
    explicit ClientCapabilities(std::string json);

    /// True when the object has a member `capability` (whatever its value, as MCP declares one).
    bool declares(std::string_view capability) const;
    /// True when it declares one a server may ask during a call: sampling, elicitation or roots.
    bool declaresClientInput() const { return (known_ & kClientInput) != 0; }
    /// True when `extensions` is an object whose member `id` is an object (SEP-2133).
    bool declaresExtension(std::string_view id) const;

    /// The text read ("" when none was given).
    const std::string& json() const { return json_; }

private:
    static constexpr unsigned kRoots = 1U;
    static constexpr unsigned kSampling = 2U;
    static constexpr unsigned kElicitation = 4U;
    static constexpr unsigned kClientInput = kRoots | kSampling | kElicitation;
    static constexpr unsigned kTasks = 8U;
    static unsigned bitOf(std::string_view capability);

    std::string json_;
    unsigned known_ = 0;  ///< the kRoots... bits of what it declares
};

/// A request's capabilities, shared by the calls that ask them (never null where it is passed).
using SharedClientCapabilities = std::shared_ptr<const ClientCapabilities>;

/// The shared value of none declared.
const SharedClientCapabilities& noClientCapabilities();

}  // namespace crank::mcp
