#pragma once

#include <chrono>
#include <functional>
#include <string_view>

#include "mcp/method_answer.h"

namespace crank::mcp {

/// What the MCP endpoint reports as it answers (for /metrics). Set before serving; called on the
/// HTTP worker threads (and, for an answer that comes later, such as a tasks/result, on the
/// thread that sends it).
struct EndpointObserver {
    /// Every JSON-RPC message: its method ("unknown" for a method Crank does not serve,
    /// "invalid" when the message could not be read), the outcome ("ok", "accepted" for a
    /// notification or a client's answer, or the error's name: "invalid_params",
    /// "method_not_found", "internal_error", ...) and the time to its answer.
    std::function<void(std::string_view method, std::string_view outcome,
                       std::chrono::steady_clock::duration elapsed)>
        message;
    /// Every HTTP request to the endpoint: its verb and the response's status.
    std::function<void(std::string_view verb, int status)> http;

    /// Reports request `method` answered with `answer` (its outcome is the answer's).
    void answered(std::string_view method, const MethodAnswer& answer,
                  std::chrono::steady_clock::time_point since) const;
    /// Reports `method` (already a label) with its outcome.
    void counted(std::string_view method, std::string_view outcome,
                 std::chrono::steady_clock::time_point since) const;
};

}  // namespace crank::mcp
