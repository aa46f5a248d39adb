#pragma once

#include <optional>
#include <string_view>

namespace crank::runtime {

/// Why a window stopped collecting (the result contract's `stop_reason`, DESIGN.md).
enum class StopReason {
    duration,          ///< window_duration_ms passed
    max_items,         ///< max_items items were read from the upstream
    max_bytes,         ///< the next item would have passed max_bytes
    upstream_end,      ///< the upstream ended the stream (or a poll said done)
    upstream_timeout,  ///< the upstream stayed silent for upstream_timeout_ms
    upstream_error,    ///< the upstream (or the plugin talking to it) failed
    cancelled,         ///< the client cancelled the call, or crankd is shutting down
};

/// "duration", "max_items", ...
std::string_view toString(StopReason reason);
std::optional<StopReason> parseStopReason(std::string_view text);

/// The window ran its whole course: its duration passed or the upstream ended it.
inline bool windowComplete(StopReason reason) {
    return reason == StopReason::duration || reason == StopReason::upstream_end;
}

/// A limit cut the window short: items the upstream had were not read.
inline bool cutByLimit(StopReason reason) {
    return reason == StopReason::max_items || reason == StopReason::max_bytes;
}

}  // namespace crank::runtime
