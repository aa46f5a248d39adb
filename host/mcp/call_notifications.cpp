#include "mcp/call_notifications.h"

#include <cmath>

#include <fmt/core.h>

#include "mcp/wire/json_rpc.h"
#include "mcp/wire/method_registry.h"
#include "util/json_string.h"

namespace crank::mcp {

std::string progressNotification(const RequestId& token, double progress,
                                 std::optional<double> total, std::string_view message) {
    if (!std::isfinite(progress)) {
        return {};
    }
    std::string params =
        R"({"progressToken":)" + token.toJson() + fmt::format(R"(,"progress":{})", progress);
    if (total && std::isfinite(*total)) {
        params += fmt::format(R"(,"total":{})", *total);
    }
    if (!message.empty()) {
        params += R"(,"message":)" + jsonString(message);
    }
    params += '}';
    return makeNotification("notifications/progress", params);
}

std::string logNotification(LogLevel level, std::string_view logger, std::string_view data_json) {
    std::string params = R"({"level":)" + jsonString(toString(level));
    if (!logger.empty()) {
        params += R"(,"logger":)" + jsonString(logger);
    }
    params += R"(,"data":)" + std::string(data_json.empty() ? "null" : data_json) + "}";
    return makeNotification("notifications/message", params);
}

std::string notForwardedError(std::string_view method) {
    return R"({"code":-32601,"message":)" +
           jsonString("crank does not forward " + std::string(method.substr(0, 100)) +
                      " to clients") +
           "}";
}

}  // namespace crank::mcp
