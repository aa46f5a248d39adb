// The "mcp" plugin library: one adapter, "mcp", which federates MCP servers (see README.md).
#include "mcp_upstream.h"
#include <crank/sdk.hpp>

CRANK_PLUGIN("mcp", "1.0.0",
             "MCP servers as upstreams: their tools, resources, prompts and completions, federated",
             crank::mcpc::registerMcpPlugin);
