#pragma once

#include <string>
#include <vector>

#include <rapidjson/fwd.h>

namespace crank::admin {

/// One difference between two JSON values.
struct JsonChange {
    enum class Kind { added, removed, changed };
    std::string path;  ///< "execution.max_items", "config.headers[\"X-Key\"]", "" for the root
    Kind kind = Kind::changed;
    const rapidjson::Value* from = nullptr;  ///< null when added
    const rapidjson::Value* to = nullptr;    ///< null when removed
};

/// The differences from `from` to `to`: objects are compared member by member (recursively, in
/// `to`'s member order, then the removed ones), everything else (arrays included) as whole
/// values. The changes point into the two values, which must outlive them. Both values come from
/// a depth-bounded parse, so the recursion is bounded.
std::vector<JsonChange> diffJson(const rapidjson::Value& from, const rapidjson::Value& to);

/// "added", "removed", "changed".
const char* changeName(JsonChange::Kind kind);

}  // namespace crank::admin
