#pragma once

// How a connection to an MCP server starts, in either era: the 2025 `initialize` (version
// negotiation, then notifications/initialized) or the 2026-07-28 `server/discover` (no session:
// every later request carries its own `_meta`), and the choice between them: with
// `protocol_version: "auto"`, the 2026 era first where the transport speaks it (the Streamable
// HTTP transport), and `initialize` when the server's answer means it does not (any error:
// a 2025 server refuses the sessionless POST, knows no such method, or is a legacy HTTP+SSE
// server; a server down fails both, and the message is initialize's).

#include <string>

#include "connection.h"

namespace crank::mcpc {

struct UpstreamOptions;

/// What a handshake learnt of the server.
struct Handshake {
    std::string version;  ///< the negotiated protocol version ("2026-07-28" in the 2026 era)
    std::string server_name;
    std::string server_version;
    std::string capabilities_json = "{}";
    std::string instructions;  ///< at most 16 KiB, cut at a character
};

/// The era handshake `options.protocol_version` asks for on `c`; "" when it succeeded, else why
/// not. On success `c` is in the era found (Connection::modernVersion()).
std::string handshake(Connection& c, const UpstreamOptions& options, Handshake& out);

}  // namespace crank::mcpc
