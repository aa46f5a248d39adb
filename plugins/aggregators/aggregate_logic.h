#pragma once

// Internal to plugins/aggregators: what every aggregation mode implements, free of the SDK so
// that it can be tested and measured alone.

#include <cstddef>
#include <string>
#include <string_view>

#include "json_writer.h"

namespace crank::aggregators {

/// The state of one aggregation (one call). Items come one at a time, never concurrently.
/// Memory stays within the caps of the config whatever the number of items.
class AggregateLogic {
public:
    AggregateLogic() = default;
    AggregateLogic(const AggregateLogic&) = delete;
    AggregateLogic& operator=(const AggregateLogic&) = delete;
    virtual ~AggregateLogic() = default;

    /// Takes one item (JSON text). Throws AggregateError (invalid_item) when it is not JSON.
    virtual void accept(std::string_view item_json) = 0;
    /// Writes the current result, one JSON object, into `out` (after what it holds). Does not
    /// reset anything; may be called any number of times.
    virtual void snapshot(JsonBuffer& out) const = 0;
    /// An estimate of the bytes this aggregate holds (its structures, not the snapshot).
    virtual std::size_t memoryEstimate() const = 0;

    /// snapshot() as a string.
    std::string snapshotText() const {
        JsonBuffer buffer;
        snapshot(buffer);
        return {buffer.GetString(), buffer.GetSize()};
    }
};

}  // namespace crank::aggregators
