#pragma once

// The project's logging facade. spdlog stays behind log.cpp so that every translation unit that
// logs does not pay for spdlog's headers; messages are formatted with fmt (fmt/core.h only).
//
// Never pass a secret to these functions: config::Secret has a formatter that prints "[redacted]"
// precisely so that a mistake here cannot leak one.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

namespace crank::log {

enum class Level { trace, debug, info, warn, error, critical, off };
enum class Format { text, json };

/// "trace", "debug", "info", "warn", "error", "critical", "off"; nullopt for anything else.
std::optional<Level> parseLevel(std::string_view name);
/// "text" or "json"; nullopt for anything else.
std::optional<Format> parseFormat(std::string_view name);

/// Bounds on what reaches the log (crankd's --log-max-message-bytes and --log-source-rate).
struct LogLimits {
    /// A longer message is cut (at a UTF-8 boundary) and says how many bytes were cut.
    std::size_t max_message_bytes = 8192;
    /// Messages one outside source (a plugin's call, an upstream's stderr) may write per
    /// `source_period`; the rest are dropped and counted (log::Throttle).
    std::size_t source_burst = 100;
    std::chrono::milliseconds source_period{10'000};
};

/// Sets up the process-wide logger: one line per message on stderr, as plain text or as one JSON
/// object per line. Safe to call again (e.g. once the config has been read).
void configure(Format format, Level level, LogLimits limits = {});

/// The limits configure() set.
LogLimits limits();

/// `message` as write() puts it on a line: cut to `max_bytes` (at a UTF-8 boundary, with
/// " [N bytes cut]"), and, when `escape_controls`, every control character (newlines, tabs, ESC,
/// DEL...) written as an escape (\n, \t, \x1b), so that no message can begin a line of its
/// own or drive a terminal. The JSON format escapes controls itself.
std::string sanitize(std::string_view message, std::size_t max_bytes, bool escape_controls);

/// True when a message at `level` would be written; use it to skip costly message building.
bool enabled(Level level);

/// Changes the level while crankd runs (a reload's `log.level`); the format and limits stay.
void setLevel(Level level);
/// The level now.
Level level();

/// Writes one message, sanitized (sanitize()): one line, however it was made. Thread-safe.
void write(Level level, std::string_view message);

template <typename... Args>
void trace(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::trace)) {
        write(Level::trace, fmt::format(format, std::forward<Args>(args)...));
    }
}
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::debug)) {
        write(Level::debug, fmt::format(format, std::forward<Args>(args)...));
    }
}
template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::info)) {
        write(Level::info, fmt::format(format, std::forward<Args>(args)...));
    }
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::warn)) {
        write(Level::warn, fmt::format(format, std::forward<Args>(args)...));
    }
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
    if (enabled(Level::error)) {
        write(Level::error, fmt::format(format, std::forward<Args>(args)...));
    }
}

}  // namespace crank::log
