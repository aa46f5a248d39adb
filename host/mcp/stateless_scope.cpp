#include "mcp/stateless_scope.h"

#include "util/json_string.h"

namespace crank::mcp {

ToolCall::ClientAnswer StatelessToolCall::requestClient(std::string_view method,
                                                        std::string_view /*params_json*/,
                                                        std::chrono::milliseconds /*timeout*/) {
    return {false, R"({"code":-32601,"message":)" +
                       jsonString("a 2026-07-28 request cannot be sent " +
                                  std::string(method.substr(0, 100)) +
                                  ": a server of that era asks through input_required results") +
                       "}"};
}

}  // namespace crank::mcp
