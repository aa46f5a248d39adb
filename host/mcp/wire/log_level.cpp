#include "mcp/wire/log_level.h"

#include <array>

namespace crank::mcp {
namespace {

constexpr std::array<std::string_view, 8> kNames = {"debug", "info",     "notice", "warning",
                                                    "error", "critical", "alert",  "emergency"};

}  // namespace

std::optional<LogLevel> parseLogLevel(std::string_view name) {
    for (std::size_t i = 0; i < kNames.size(); ++i) {
        if (kNames[i] == name) {
            return static_cast<LogLevel>(i);
        }
    }
    return std::nullopt;
}

std::string_view toString(LogLevel level) {
    return kNames[static_cast<std::size_t>(level)];
}

}  // namespace crank::mcp
