#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/stop_reason.h"
#include "util/error.h"

namespace crank::runtime {

/// Why an upstream call failed, as the result's `error` member shows it.
struct UpstreamError {
    std::string code;  ///< "unavailable", "upstream", "timeout", ... (crank_error_code names)
    std::string message;
    /// What the plugin said beyond the message (a JSON object's text, scrubbed, bounded:
    /// clientErrorDetails()), e.g. {"grpc_status": {...}}; "" when nothing.
    std::string details_json = {};
};

/// Everything a window collected, before it is rendered as the tool result (DESIGN.md, "Result
/// contract"). The aggregator's part is its snapshot: a JSON object whose members join the result.
struct WindowResult {
    std::uint64_t item_count = 0;     ///< items that reached the aggregator
    std::uint64_t dropped_count = 0;  ///< items read but dropped (safety stage, malformed)
    std::uint64_t bytes = 0;          ///< bytes of item text read from the upstream
    StopReason stop_reason = StopReason::upstream_end;
    std::optional<std::string> cursor;
    std::int64_t elapsed_ms = 0;
    std::optional<UpstreamError> error;
    std::string aggregate_json = "{}";  ///< the aggregator's snapshot (an object)
};

/// A rendered result: the `structuredContent` object as JSON text.
struct RenderedResult {
    std::string json;
    bool truncated = false;  ///< the value of `truncated` in `json`
};

/// Renders the contract object: item_count, dropped_count, bytes, truncated, window_complete,
/// has_more, cursor, stop_reason, elapsed_ms, error (only after an upstream error), then the
/// aggregator's members. `truncated` is true when a limit cut the window, when the aggregator
/// said so (its snapshot's own `truncated` member, which is consumed here), or when items had
/// to be left out so that the result fits in `max_result_bytes`. A result that cannot be made to
/// fit is an error naming both sizes.
Result<RenderedResult> renderWindowResult(const WindowResult& result, std::size_t max_result_bytes);

/// The tool's outputSchema for a window: the contract's members plus the aggregator's
/// (`aggregator_output_schema_json` is an object schema with `properties`). `where` names the
/// aggregator in errors.
Result<std::string> windowOutputSchema(std::string_view aggregator_output_schema_json,
                                       std::string_view where);

}  // namespace crank::runtime
