#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace crank::json {

// Paths to a place in a JSON value, in the style of Crank's config errors: `input.items[3].name`,
// `input["odd key"]`. A key that is an identifier (letters, digits, "_", "-"; not starting with a
// digit) is written `.key`; any other key `["key"]` (quoted, escaped).

/// Appends member `key` to `path`.
void appendMemberPath(std::string& path, std::string_view key);
/// Appends `[index]` to `path`.
void appendIndexPath(std::string& path, std::size_t index);
/// `parent.key` (or `key` when parent is empty, or `parent["odd key"]`).
std::string memberPath(std::string_view parent, std::string_view key);
/// `parent[index]`.
std::string indexPath(std::string_view parent, std::size_t index);

}  // namespace crank::json
