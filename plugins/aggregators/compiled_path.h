#pragma once

// Internal to plugins/aggregators: a path (crank/sdk/path.hpp syntax) prepared once at create
// time and evaluated over RapidJSON items without allocating.

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "crank/sdk/path.hpp"

namespace crank::aggregators {

/// A parsed path with its configured text (the text names it in outputs).
class CompiledPath {
public:
    CompiledPath(std::string text, const sdk::Path& path);

    /// The path as the operator wrote it.
    const std::string& text() const { return text_; }
    bool hasWildcard() const { return has_wildcard_; }

    /// The first value the path matches in `root` (document order), or null.
    const rapidjson::Value* findFirst(const rapidjson::Value& root) const;

    /// Calls `visit(const rapidjson::Value&)` for every value the path matches in `root`.
    template <typename Visit>
    void forEachMatch(const rapidjson::Value& root, Visit&& visit) const {
        if (!has_wildcard_) {
            if (const rapidjson::Value* value = findFirst(root)) {
                visit(*value);
            }
            return;
        }
        walk(root, 0, visit);
    }

private:
    /// One segment, ready for RapidJSON lookups.
    struct Step {
        bool wildcard = false;
        std::string name;  ///< member name (for a wildcard: empty)
        std::size_t index = std::numeric_limits<std::size_t>::max();  ///< array index, if any
    };

    /// The value `step` selects directly under `value` (no wildcard), or null.
    static const rapidjson::Value* child(const rapidjson::Value& value, const Step& step);

    template <typename Visit>
    void walk(const rapidjson::Value& value, std::size_t depth, Visit& visit) const {
        if (depth == steps_.size()) {
            visit(value);
            return;
        }
        const Step& step = steps_[depth];
        if (!step.wildcard) {
            if (const rapidjson::Value* next = child(value, step)) {
                walk(*next, depth + 1, visit);
            }
            return;
        }
        if (value.IsObject()) {
            for (const auto& member : value.GetObject()) {
                walk(member.value, depth + 1, visit);
            }
        } else if (value.IsArray()) {
            for (const auto& element : value.GetArray()) {
                walk(element, depth + 1, visit);
            }
        }
    }

    std::string text_;
    std::vector<Step> steps_;
    bool has_wildcard_ = false;
};

}  // namespace crank::aggregators
