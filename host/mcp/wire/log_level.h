#pragma once

#include <optional>
#include <string_view>

namespace crank::mcp {

/// MCP logging levels (RFC 5424 severities), from least to most severe.
enum class LogLevel { debug, info, notice, warning, error, critical, alert, emergency };

/// "debug", "info", ... ; nullopt for anything else.
std::optional<LogLevel> parseLogLevel(std::string_view name);
std::string_view toString(LogLevel level);

}  // namespace crank::mcp
