#pragma once

// Internal to plugins/aggregators: the one exception the aggregation logic throws. The plugin
// layer (aggregators_plugin.cpp) turns it into an SDK error; it never crosses the C ABI.

#include <stdexcept>
#include <string>
#include <utility>

namespace crank::aggregators {

/// A failure of the aggregation logic, with what kind of failure it is.
class AggregateError : public std::runtime_error {
public:
    enum class Kind {
        invalid_item,    ///< an item is not valid JSON (the host normally never sends one)
        invalid_config,  ///< the config does not validate (`path` names the member)
    };

    AggregateError(Kind kind, const std::string& message, std::string path = {})
        : std::runtime_error(message), kind_(kind), path_(std::move(path)) {}

    Kind kind() const { return kind_; }
    /// For invalid_config: where in the config, e.g. `numeric_paths.1` (path syntax); empty
    /// otherwise.
    const std::string& path() const { return path_; }

private:
    Kind kind_;
    std::string path_;
};

}  // namespace crank::aggregators
