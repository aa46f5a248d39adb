#pragma once

// How a connection to an MCP server starts, in either era: the 2025 `initialize` (version
// negotiation, then notifications/initialized) or the 2026-07-28 `server/discover` (no session:
// every later request carries its own `_meta`), and the choice between them. With
// `protocol_version: "auto"` the 2026 era is tried first, on every transport that speaks it
// (Streamable HTTP and stdio; not the legacy HTTP+SSE one), with server/discover bounded by the
// smaller of initialize_timeout and 5 s; `initialize` follows when the answer means the server
// does not speak it (any error: a 2025 server refuses the sessionless POST or knows no such
// method; no answer in time; a legacy HTTP+SSE server). A stdio server that exits on the
// unknown method is started again for initialize. A server down fails both, and the message is
// initialize's.

#include <functional>
#include <memory>
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

/// A fresh connection to the same server; null after setting the error.
using Reopen = std::function<std::shared_ptr<Connection>(std::string& error)>;

/// The era handshake `options.protocol_version` asks for on `c`; "" when it succeeded, else why
/// not. On success `c` (replaced by one from `reopen` when the server exited on the 2026 probe)
/// is in the era found (Connection::modernVersion()).
std::string handshake(std::shared_ptr<Connection>& c, const UpstreamOptions& options,
                      Handshake& out, const Reopen& reopen);

}  // namespace crank::mcpc
