#pragma once

// The `requestState` of an input_required result (MRTR, MCP 2026-07-28 SEP-2322), sealed so that
// a client carries it without being able to read, forge or reuse it. A sealed state is
//
//     "v1." base64url( nonce[12] | AES-256-GCM ciphertext | tag[16] )
//
// whose plaintext names what it is bound to (workspace, agent, method, target, a digest of the
// params), when it expires, the node that issued it, the round, and the tool's own state. It opens
// only for the same binding, before it expires, and once: the nonce is its id in a UsedStates
// register. The key is derived from a configured secret (mcp.request_state_key), so that every
// node of one deployment opens the states of the others; without one, a random key of this
// process (states do not survive a restart).
//
// THREADING: seal() and open() may be called from any thread, concurrently.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "config/config.h"
#include "mcp/modern/used_states.h"
#include "util/error.h"

namespace crank::mcp {

/// What a sealed state belongs to: it opens only for a request with the same binding.
struct StateBinding {
    std::string workspace;
    std::string agent;
    std::string method;          ///< tools/call, prompts/get, resources/read
    std::string target;          ///< the tool's or prompt's name, the resource's URI
    std::string arguments_json;  ///< the request's arguments as sent ("" for none)
};

/// What an opened state gives back besides its binding.
struct OpenedState {
    std::string payload;  ///< the state the tool gave, byte for byte
    std::string node;     ///< the node that sealed it
    int round = 0;        ///< 1 for the state of a call's first input_required result
    std::string kind;     ///< what the payload is: "tool" (a tool's own state), "held" (a call id)
};

class RequestStateSeal {
public:
    /// `key_material`: the configured secret ("" for a random key of this process). `node`: this
    /// node's name, written into every state. `ttl`: how long a state opens after it was sealed.
    /// `used`: where opened states are recorded, so each opens once.
    RequestStateSeal(std::string_view key_material, std::string node, std::chrono::milliseconds ttl,
                     std::shared_ptr<UsedStates> used);

    /// The sealed form of `payload` (of `kind`, see OpenedState) for `binding`, round `round`.
    std::string seal(const StateBinding& binding, std::string_view payload, int round,
                     std::string_view kind = "tool") const;

    /// The state `sealed` carries when it was sealed by this deployment for `binding`, has not
    /// expired and was not opened before; otherwise ErrorCode::invalid_argument naming why
    /// (malformed, tampered or sealed with another key, another caller's, another tool's, other
    /// arguments, expired, already used; a held call's state sealed by another node, refused before
    /// it is used) without telling anything of what it holds.
    Result<OpenedState> open(std::string_view sealed, const StateBinding& binding) const;

    std::chrono::milliseconds ttl() const { return ttl_; }
    /// The node written into the states this seal makes.
    const std::string& node() const { return node_; }

private:
    std::string key_;  ///< 32 bytes
    std::string node_;
    std::chrono::milliseconds ttl_;
    std::shared_ptr<UsedStates> used_;
};

/// The seal `mcp` describes: its key (mcp.request_state_key, else a random one), its states'
/// lifetime (mcp.request_state_ttl_ms), sealed as `node`, opened once in `used` (the store's
/// register in crankd, memory elsewhere) at each agent's pace (mcp.max_input_rounds_per_minute).
std::shared_ptr<const RequestStateSeal> configuredSeal(const config::McpConfig& mcp,
                                                       std::string node,
                                                       std::shared_ptr<UsedStates> used);

/// A digest (hex SHA-256) of a request's `target` and `arguments_json` (a JSON value) that does
/// not change with the order of object members, with whitespace, string escapes or the spelling
/// of a number (json::canonicalNumber: 1, 1.0 and 1e0 agree, 1.0 and 1.00000000000000001 do not,
/// nor do 2^64 and 2^64+1): a retry that re-serialises the same arguments matches. Strings and
/// numbers never match each other. Text that is not JSON is digested as it is. Computed only when
/// a state is sealed or opened (RequestStateSeal), never for a request without one.
std::string paramsDigest(std::string_view target, std::string_view arguments_json);

}  // namespace crank::mcp
