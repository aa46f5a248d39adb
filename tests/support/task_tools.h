#pragma once

#include "mcp/tool_registry.h"

namespace crank::test {

/// Adds the Tasks extension fixture tools of the conformance suite (task_tools.cpp) to `tools`.
void addTaskTools(mcp::FunctionToolRegistry& tools);

}  // namespace crank::test
