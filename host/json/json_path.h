#pragma once

// Evaluating the SDK path syntax (crank/sdk/path.hpp) over a parsed JSON value.
//
// Rules: a name segment selects the member of that name on an object (the first one when a
// document has duplicate keys), or, when it is a decimal index ("0", "12"), the element at that
// index on an array; a wildcard selects every member value of an object and every element of an
// array, in document order. Anything else (a name on a scalar, an index past the end, a non-index
// name on an array, a wildcard on a scalar) matches nothing. The empty path matches the root.
// Evaluation never recurses deeper than the path is long; it never allocates.

#include <cstddef>
#include <string_view>

#include "json/function_ref.h"
#include "json/json_value.h"
#include "util/error.h"
#include <crank/sdk/path.hpp>

namespace crank::json {

/// The first value that `path` matches under `root` (document order), or nullptr.
const Value* find(const Value& root, const sdk::Path& path);
/// The same, for editing the value in place.
Value* findMutable(Value& root, const sdk::Path& path);

/// Calls `visit` for every value that `path` matches, in document order; returns how many.
std::size_t forEach(const Value& root, const sdk::Path& path,
                    FunctionRef<void(const Value&)> visit);
/// The same, for editing matches in place. `visit` may replace the matched value (SetString,
/// CopyFrom, ...) but must not add or remove members or elements of its ancestors.
std::size_t forEachMutable(Value& root, const sdk::Path& path, FunctionRef<void(Value&)> visit);

/// Parses a path written in a config file. The error names where it was written and what is
/// wrong (ErrorCode::invalid_argument):
/// `operations[0].execution.redacted_paths[2]: "a..b": empty member name (two dots in a row, or
/// a trailing dot) at byte 2`.
Result<sdk::Path> compilePath(std::string_view text, std::string_view where);

}  // namespace crank::json
