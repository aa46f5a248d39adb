#pragma once

// Which upstream an operation's calls wait on, as the key of mcp::UpstreamSlots: the
// operation's own `upstream` when it names one; otherwise where its protocol config points,
// reduced to the part that tells one upstream from another:
//   - `url`, `endpoint` or `base_url` with a scheme: "scheme://host:port" (lowercase, the
//     scheme's default port made explicit, userinfo, path and query dropped);
//   - a gRPC `target` ("host:port", "dns:///host:port"): "grpc://" and the target;
//   - a stdio `command`: "stdio:" and the command;
// and, when none of these is there or the part is templated ("{{"), "operation:" and the
// operation's name, so that it is bounded on its own. No secret reaches the key: userinfo and
// query strings are dropped, and the key is shown in refusals.

#include <string>

#include "config/operation_config.h"

namespace crank::runtime {

std::string upstreamKey(const config::OperationConfig& operation);

}  // namespace crank::runtime
