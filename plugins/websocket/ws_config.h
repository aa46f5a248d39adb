// plugins/websocket: an operation's `config` (README.md, "Operation config"), parsed at config load
// (templates still in it) and again per call (rendered over the tool input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <crank/sdk/path.hpp>

namespace crank::ws {

/// Documented defaults and bounds (README.md).
struct WsDefaults {
    static constexpr std::int64_t connect_timeout_ms = 5'000;
    static constexpr std::int64_t heartbeat_interval_ms = 15'000;
    static constexpr std::int64_t heartbeat_timeout_ms = 10'000;
    static constexpr std::int64_t max_message_bytes = std::int64_t{1} * 1024 * 1024;
    static constexpr std::int64_t max_message_bytes_ceiling = std::int64_t{64} * 1024 * 1024;
    static constexpr std::int64_t max_ms = 3'600'000;
    static constexpr int reconnect_attempts = 0;
    static constexpr std::int64_t reconnect_initial_backoff_ms = 500;
    static constexpr std::int64_t reconnect_max_backoff_ms = 10'000;
};

/// A path into a JSON message, with its text (which names it in messages).
struct MessagePath {
    std::string text;
    sdk::Path path;
};

/// `job`: the operation is an async job over a progress channel: every message is a status, the
/// one where done_path is true ends it and is the result.
struct JobOptions {
    MessagePath done_path;                     ///< required: true on the final message
    std::optional<MessagePath> status_path;    ///< a status word for progress messages
    std::optional<MessagePath> progress_path;  ///< a number
    std::optional<MessagePath> total_path;     ///< a number
    std::optional<MessagePath> result_path;    ///< the result in the final message (else all of it)
    std::optional<MessagePath> error_path;     ///< in the final message: the job failed, and why
};

struct ReconnectOptions {
    int attempts = WsDefaults::reconnect_attempts;  ///< in a row, after a drop; 0: never
    std::int64_t initial_backoff_ms = WsDefaults::reconnect_initial_backoff_ms;
    std::int64_t max_backoff_ms = WsDefaults::reconnect_max_backoff_ms;
};

struct WsConfig {
    std::string url;  ///< ws:// or wss://
    bool secure = false;
    std::string host;
    std::uint16_t port = 0;
    std::string path_and_query;
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<std::string> subprotocols;
    std::int64_t connect_timeout_ms = WsDefaults::connect_timeout_ms;
    std::int64_t heartbeat_interval_ms = WsDefaults::heartbeat_interval_ms;
    std::int64_t heartbeat_timeout_ms = WsDefaults::heartbeat_timeout_ms;
    /// What to send after the handshake, and before a requested close (text; JSON when the
    /// template was JSON other than a string).
    std::optional<std::string> subscribe_message;
    std::optional<std::string> unsubscribe_message;
    std::int64_t max_message_bytes = WsDefaults::max_message_bytes;
    ReconnectOptions reconnect;
    bool tls_verify = true;
    std::string tls_ca_file;
    std::optional<JobOptions> job;
};

/// Receives each problem: `path` into the config, what to fix.
using ProblemSink = std::function<void(std::string_view path, std::string_view message)>;

/// Parses `json`. With `rendered` false (config load) values that hold templates are checked
/// only for their type. Reports every problem and returns nullopt if there was any.
std::optional<WsConfig> parseWsConfig(std::string_view json, bool rendered,
                                      const ProblemSink& problem);

std::string_view wsConfigSchema();

}  // namespace crank::ws
