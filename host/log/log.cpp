#include "log/log.h"

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "util/json_string.h"

namespace crank::log {
namespace {

constexpr std::array<std::string_view, 7> kLevelNames = {"trace", "debug",    "info", "warn",
                                                         "error", "critical", "off"};

spdlog::level::level_enum toSpd(Level level) {
    switch (level) {
        case Level::trace:
            return spdlog::level::trace;
        case Level::debug:
            return spdlog::level::debug;
        case Level::info:
            return spdlog::level::info;
        case Level::warn:
            return spdlog::level::warn;
        case Level::error:
            return spdlog::level::err;
        case Level::critical:
            return spdlog::level::critical;
        case Level::off:
            return spdlog::level::off;
    }
    return spdlog::level::info;
}

/// One JSON object per line: {"ts":"2026-01-01T00:00:00.000Z","level":"info","msg":"..."}
class JsonFormatter final : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
        using std::chrono::duration_cast;
        using std::chrono::milliseconds;
        const auto ms = duration_cast<milliseconds>(msg.time.time_since_epoch()).count();
        const std::time_t secs = static_cast<std::time_t>(ms / 1000);
        std::tm tm{};
        gmtime_r(&secs, &tm);
        fmt::format_to(std::back_inserter(dest),
                       R"({{"ts":"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z","level":"{}","msg":)",
                       tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                       tm.tm_sec, ms % 1000, spdlog::level::to_string_view(msg.level));
        std::string text;
        appendJsonString(text, std::string_view(msg.payload.data(), msg.payload.size()));
        dest.append(text);
        dest.append(std::string_view("}\n"));
    }
    std::unique_ptr<spdlog::formatter> clone() const override {
        return std::make_unique<JsonFormatter>();
    }
};

std::mutex gConfigureMutex;
std::shared_ptr<spdlog::logger> gLogger;  // guarded by gConfigureMutex for replacement
std::atomic<int> gLevel{static_cast<int>(Level::info)};
std::atomic<bool> gJson{false};
/// Guarded by gConfigureMutex; max_message_bytes is copied into an atomic for write().
LogLimits& configuredLimits() {
    static LogLimits limits;
    return limits;
}
std::atomic<std::size_t> gMaxMessageBytes{LogLimits{}.max_message_bytes};

bool isControl(unsigned char c) {
    return c < 0x20 || c == 0x7f;
}

std::shared_ptr<spdlog::logger> logger() {
    std::lock_guard lock(gConfigureMutex);
    if (!gLogger) {
        gLogger = std::make_shared<spdlog::logger>(
            "crankd", std::make_shared<spdlog::sinks::stderr_sink_mt>());
        gLogger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
        gLogger->set_level(toSpd(static_cast<Level>(gLevel.load())));
        gLogger->flush_on(spdlog::level::trace);
    }
    return gLogger;
}

}  // namespace

std::optional<Level> parseLevel(std::string_view name) {
    for (std::size_t i = 0; i < kLevelNames.size(); ++i) {
        if (kLevelNames[i] == name) {
            return static_cast<Level>(i);
        }
    }
    return std::nullopt;
}

std::optional<Format> parseFormat(std::string_view name) {
    if (name == "text") {
        return Format::text;
    }
    if (name == "json") {
        return Format::json;
    }
    return std::nullopt;
}

void configure(Format format, Level level, LogLimits limits) {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto next = std::make_shared<spdlog::logger>("crankd", sink);
    if (format == Format::json) {
        next->set_formatter(std::make_unique<JsonFormatter>());
    } else {
        next->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
    }
    next->set_level(toSpd(level));
    next->flush_on(spdlog::level::trace);
    std::lock_guard lock(gConfigureMutex);
    gLevel.store(static_cast<int>(level));
    gJson.store(format == Format::json);
    configuredLimits() = limits;
    gMaxMessageBytes.store(limits.max_message_bytes);
    gLogger = std::move(next);
}

LogLimits limits() {
    std::lock_guard lock(gConfigureMutex);
    return configuredLimits();
}

std::string sanitize(std::string_view message, std::size_t max_bytes, bool escape_controls) {
    std::size_t keep = message.size();
    if (keep > max_bytes) {
        keep = max_bytes;
        // Back off to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
        for (int i = 0;
             i < 3 && keep > 0 && (static_cast<unsigned char>(message[keep]) & 0xC0U) == 0x80U;
             ++i) {
            --keep;
        }
    }
    std::string out;
    out.reserve(keep + 32);
    static constexpr char kHex[] = "0123456789abcdef";
    for (std::size_t i = 0; i < keep; ++i) {
        const auto c = static_cast<unsigned char>(message[i]);
        if (!escape_controls || !isControl(c)) {
            out += static_cast<char>(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else {
            out += "\\x";
            out += kHex[c >> 4U];
            out += kHex[c & 0xFU];
        }
    }
    if (keep < message.size()) {
        out += fmt::format(" [{} bytes cut]", message.size() - keep);
    }
    return out;
}

void setLevel(Level level) {
    std::lock_guard lock(gConfigureMutex);
    gLevel.store(static_cast<int>(level));
    if (gLogger) {
        gLogger->set_level(toSpd(level));
    }
}

Level level() {
    return static_cast<Level>(gLevel.load());
}

bool enabled(Level level) {
    return level != Level::off && static_cast<int>(level) >= gLevel.load(std::memory_order_relaxed);
}

void write(Level level, std::string_view message) {
    const bool json = gJson.load(std::memory_order_relaxed);
    const std::size_t max = gMaxMessageBytes.load(std::memory_order_relaxed);
    bool clean = message.size() <= max;
    for (std::size_t i = 0; clean && !json && i < message.size(); ++i) {
        clean = !isControl(static_cast<unsigned char>(message[i]));
    }
    if (clean) {
        logger()->log(toSpd(level), message);
        return;
    }
    logger()->log(toSpd(level), sanitize(message, max, !json));
}

}  // namespace crank::log
