#pragma once

#include "mcp/tool_registry.h"

namespace crank::test {

/// Adds the MRTR fixture tools (input_required_tools.cpp) to `tools`.
void addInputRequiredTools(mcp::FunctionToolRegistry& tools);

}  // namespace crank::test
