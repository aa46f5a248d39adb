#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/rate_limit.h"

namespace crank::config {

/// How an operation is run and published (DESIGN.md, "execution modes").
enum class ExecutionMode { unary, window, session, async_job };
/// What a session does when its buffer is full: make the upstream wait, or drop the oldest items.
enum class OverflowPolicy { pause, drop_oldest };

/// How the upstream answers: one response per request, or a stream of items.
enum class TransportBehavior { request_response, server_stream };

std::string_view toString(ExecutionMode mode);
std::string_view toString(TransportBehavior behavior);

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
    static constexpr std::int64_t max_result_bytes = 256LL * 1024;
    static constexpr std::int64_t result_ttl_ms = 86'400'000;
    static constexpr std::string_view aggregation_mode = "raw_items";
};

/// Ceilings that no operation may exceed, whatever its author writes.
struct ExecutionCeilings {
    static constexpr std::int64_t duration_ms = 24LL * 3'600'000;  ///< any *_ms value
    /// max_items and max_bytes bound what a window reads from the upstream; the result is bounded
    /// apart (max_result_bytes and the aggregator's own caps), so a stats window may read a lot.
    static constexpr std::int64_t max_items = 1'000'000'000;
    static constexpr std::int64_t max_bytes = 1LL << 40;
    static constexpr std::int64_t max_result_bytes = 16LL * 1024 * 1024;
    static constexpr std::int64_t max_field_length = 1024LL * 1024;
};

/// The `execution` block of an operation: mode, limits, aggregation, safety, tool family names.
struct ExecutionConfig {
    ExecutionMode mode = ExecutionMode::unary;
    TransportBehavior transport_behavior = TransportBehavior::request_response;
    /// False when the operation left transport_behavior out: the adapter may then say what the
    /// upstream does (crank_adapter.describe, e.g. a gRPC method that streams).
    bool transport_behavior_given = false;

    std::int64_t window_duration_ms = ExecutionDefaults::window_duration_ms;
    std::int64_t poll_interval_ms = ExecutionDefaults::poll_interval_ms;
    std::int64_t upstream_timeout_ms = ExecutionDefaults::upstream_timeout_ms;
    std::int64_t idle_timeout_ms = ExecutionDefaults::idle_timeout_ms;
    std::int64_t max_session_lifetime_ms = ExecutionDefaults::max_session_lifetime_ms;
    std::int64_t max_items = ExecutionDefaults::max_items;
    std::int64_t max_bytes = ExecutionDefaults::max_bytes;

    std::int64_t max_result_bytes = ExecutionDefaults::max_result_bytes;
    /// session: when the buffer (max_items, max_bytes) is full.
    OverflowPolicy overflow_policy = OverflowPolicy::pause;
    /// async_job: how long a finished job (its status and result) is kept, from its end.
    std::int64_t result_ttl_ms = ExecutionDefaults::result_ttl_ms;

    /// The aggregator plugin's name ("raw_items", "stats", ...; checked against the loaded
    /// plugins when operations are compiled) and its config (`execution.aggregation`, JSON text).
    std::string aggregation_mode{ExecutionDefaults::aggregation_mode};
    std::string aggregation_config_json = "{}";
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
    /// Seeds the sampling decisions so that a run can be repeated (tests); unset: random per call.
    std::optional<std::int64_t> sampling_seed;

    // Tool family names; empty means the default `{name}_start`, ... (see toolNames()).
    std::string start_tool_name;
    std::string poll_tool_name;
    std::string stop_tool_name;
    std::string status_tool_name;
    std::string result_tool_name;
    std::string cancel_tool_name;
};

/// The longest tool name a config may give.
inline constexpr std::size_t kMaxToolNameLength = 128;

/// True for a tool name a config may give: 1 to kMaxToolNameLength letters, digits, '_', '-' or
/// '.' (what MCP clients accept everywhere).
bool isToolName(std::string_view name);

/// One operation: an upstream call published as one MCP tool or a family of tools.
struct OperationConfig {
    std::string name;
    /// The workspace that publishes it (auth.workspaces[].id): its tools appear on that
    /// workspace's MCP endpoint only.
    std::string workspace = "default";
    std::string title;
    std::string description;
    std::string protocol;      ///< the protocol plugin that runs it ("rest", "grpc", ...)
    std::string config_json;   ///< the protocol plugin's own config, as JSON text ("{}" if none)
    std::string auth_profile;  ///< empty: none
    /// Calls a second of its tools, each tool its own bucket, every caller of the workspace
    /// together (per node); nullopt: no bound.
    std::optional<RateLimit> rate;
    /// The upstream its calls wait on, as a name operations share: their calls in progress
    /// together are bounded by server.max_calls_per_upstream. Empty: derived from `config`
    /// (runtime/upstream_key.h).
    std::string upstream;
    std::string input_schema_json;  ///< JSON Schema of the tool input, as JSON text
    /// False when the operation left input_schema out ({"type":"object"} then, unless the
    /// adapter derives one: crank_adapter.describe).
    bool input_schema_given = false;
    ExecutionConfig execution;
    /// The operation's object as it was written (compact JSON text), shown by the admin API.
    std::string source_json;

    /// The MCP tool names this operation publishes, in a fixed order: one for unary and window,
    /// start/poll/stop for session, start/status/result/cancel for async_job.
    std::vector<std::string> toolNames() const;
};

}  // namespace crank::config
