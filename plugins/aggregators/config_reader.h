#pragma once

// Internal to plugins/aggregators: typed reading of an aggregator's config object that records
// every problem with the config path it concerns (`top_k`, `numeric_paths.2`, in the path syntax
// the host expects).

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "compiled_path.h"

namespace crank::aggregators {

/// One thing wrong with a config: where (a member path inside the config) and what.
struct ConfigProblem {
    std::string path;
    std::string message;
};

/// Reads one config object. Each getter marks its key as known and returns the default when the
/// member is absent or wrong (recording a problem); finish() reports members nobody asked for.
class ConfigReader {
public:
    /// `config_json` empty means `{}`.
    explicit ConfigReader(std::string_view config_json);

    std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t min,
                         std::int64_t max);
    std::optional<std::int64_t> optionalInteger(std::string_view key);
    double number(std::string_view key, double fallback, double min, double max);
    bool boolean(std::string_view key, bool fallback);
    /// One of `allowed`.
    std::string enumeration(std::string_view key, std::string_view fallback,
                            std::initializer_list<std::string_view> allowed);
    std::optional<CompiledPath> optionalPath(std::string_view key);
    /// An array of at most `max_count` path strings.
    std::vector<CompiledPath> paths(std::string_view key, std::size_t max_count);
    /// Records a problem found by the caller (e.g. between two members).
    void problem(std::string path, std::string message);

    /// Reports unknown members; returns every problem found.
    const std::vector<ConfigProblem>& finish();
    /// finish(), then throws AggregateError (invalid_config) naming the first problem, if any.
    void throwIfInvalid();

private:
    const rapidjson::Value* get(std::string_view key);
    std::optional<CompiledPath> pathAt(const rapidjson::Value& value, const std::string& where);

    rapidjson::Document document_;
    bool is_object_ = false;
    std::vector<std::string> known_;
    std::vector<ConfigProblem> problems_;
};

}  // namespace crank::aggregators
