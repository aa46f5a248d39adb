#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crank::config {

/// How an operation is run and published (DESIGN.md, "execution modes").
enum class ExecutionMode { unary, window, session, async_job };
/// How the upstream answers: one response per request, or a stream of items.
enum class TransportBehavior { request_response, server_stream };
/// How collected items become the result.
enum class AggregationMode { raw_items, summary_only, summary_plus_samples, stats, latest_state };

std::string_view toString(ExecutionMode mode);
std::string_view toString(TransportBehavior behavior);
std::string_view toString(AggregationMode mode);

/// Documented defaults of the execution block (docs/configuration.md lists the same values).
struct ExecutionDefaults {
    static constexpr std::int64_t window_duration_ms = 10'000;
    static constexpr std::int64_t poll_interval_ms = 1'000;
    static constexpr std::int64_t upstream_timeout_ms = 30'000;
    static constexpr std::int64_t idle_timeout_ms = 300'000;
    static constexpr std::int64_t max_session_lifetime_ms = 3'600'000;
    static constexpr std::int64_t max_items = 100;
    static constexpr std::int64_t max_bytes = 256LL * 1024;
    static constexpr std::int64_t max_field_length = 2'048;
};

/// Ceilings that no operation may exceed, whatever its author writes.
struct ExecutionCeilings {
    static constexpr std::int64_t duration_ms = 24LL * 3'600'000;  ///< any *_ms value
    static constexpr std::int64_t max_items = 100'000;
    static constexpr std::int64_t max_bytes = 64LL * 1024 * 1024;
    static constexpr std::int64_t max_field_length = 1024LL * 1024;
};

/// The `execution` block of an operation: mode, limits, aggregation, safety, tool family names.
struct ExecutionConfig {
    ExecutionMode mode = ExecutionMode::unary;
    TransportBehavior transport_behavior = TransportBehavior::request_response;

    std::int64_t window_duration_ms = ExecutionDefaults::window_duration_ms;
    std::int64_t poll_interval_ms = ExecutionDefaults::poll_interval_ms;
    std::int64_t upstream_timeout_ms = ExecutionDefaults::upstream_timeout_ms;
    std::int64_t idle_timeout_ms = ExecutionDefaults::idle_timeout_ms;
    std::int64_t max_session_lifetime_ms = ExecutionDefaults::max_session_lifetime_ms;
    std::int64_t max_items = ExecutionDefaults::max_items;
    std::int64_t max_bytes = ExecutionDefaults::max_bytes;

    AggregationMode aggregation_mode = AggregationMode::raw_items;
    std::optional<std::string> items_path;
    std::optional<std::string> summary_path;
    std::optional<std::string> cursor_path;
    std::optional<std::string> status_path;
    std::optional<std::string> done_path;

    bool truncate_item_fields = false;
    std::int64_t max_field_length = ExecutionDefaults::max_field_length;
    std::vector<std::string> redacted_paths;
    bool drop_duplicates = false;
    double sampling_rate = 1.0;

    // Tool family names; empty means the default `{name}_start`, ... (see toolNames()).
    std::string start_tool_name;
    std::string poll_tool_name;
    std::string stop_tool_name;
    std::string status_tool_name;
    std::string result_tool_name;
    std::string cancel_tool_name;
};

/// One operation: an upstream call published as one MCP tool or a family of tools.
struct OperationConfig {
    std::string name;
    std::string title;
    std::string description;
    std::string protocol;      ///< the protocol plugin that runs it ("rest", "grpc", ...)
    std::string config_json;   ///< the protocol plugin's own config, as JSON text ("{}" if none)
    std::string auth_profile;  ///< empty: none
    std::string input_schema_json;  ///< JSON Schema of the tool input, as JSON text
    ExecutionConfig execution;

    /// The MCP tool names this operation publishes, in a fixed order: one for unary and window,
    /// start/poll/stop for session, start/status/result/cancel for async_job.
    std::vector<std::string> toolNames() const;
};

}  // namespace crank::config
