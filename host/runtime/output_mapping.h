#pragma once

// Output mapping: what the runtime takes out of one upstream RESPONSE (a unary or long-poll
// response) through an operation's items_path, summary_path, cursor_path, status_path and
// done_path (SDK path syntax).
//
// - items_path absent: the whole response is one item.
//   items_path without a wildcard: it must match an array (or null: no items); its elements are
//   the items. With a wildcard: every match is one item (`data.*` = every member of data;
//   `pages.*.items.*` flattens). Items beyond `max_items` are left out (items_truncated).
// - summary_path: the matched value as compact JSON text; no match -> nullopt.
// - cursor_path: a string as it is, a number as its JSON text; no match or null -> nullopt;
//   anything else is an error.
// - status_path: same rule as cursor_path.
// - done_path: the value's truthiness as in JavaScript (false, null, 0 and "" are false,
//   everything else, including "false", [] and {}, is true); no match -> nullopt.
// With a wildcard, summary/cursor/status/done take the first match in document order.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/operation_config.h"
#include "json/json_parse.h"
#include "json/json_value.h"
#include "util/error.h"
#include <crank/sdk/path.hpp>

namespace crank::runtime {

/// The parts of one upstream response.
struct MappedResponse {
    std::vector<std::string> items;  ///< compact JSON text of each item, at most max_items
    std::size_t items_total = 0;     ///< items found before the max_items cut
    bool items_truncated = false;    ///< items_total > max_items
    std::optional<std::string> summary_json;
    std::optional<std::string> cursor;
    std::optional<std::string> status;
    std::optional<bool> done;
};

class OutputMapping {
public:
    /// Compiles the paths of an execution block. `where` is the block's path
    /// (`operations[0].execution`): errors read
    /// `operations[0].execution.items_path: "a..b": empty member name ... at byte 2`.
    static Result<OutputMapping> create(const config::ExecutionConfig& config,
                                        std::string_view where);

    /// Maps a response given as JSON text (parsed with `limits`). Errors
    /// (ErrorCode::invalid_argument) name the response and the path:
    /// `response: malformed JSON at byte 7: ...`,
    /// `response: items_path "data.items" matched nothing`,
    /// `response: items_path "data.items" must be an array, got an object`,
    /// `response: cursor_path "next" must be a string or a number, got true`.
    Result<MappedResponse> map(std::string_view response_json, std::size_t max_items,
                               const json::ParseLimits& limits = {}) const;
    /// The same for a parsed response.
    Result<MappedResponse> map(const json::Value& response, std::size_t max_items) const;

private:
    struct CompiledPath {
        std::string text;
        sdk::Path path;
    };
    std::optional<CompiledPath> items_;
    std::optional<CompiledPath> summary_;
    std::optional<CompiledPath> cursor_;
    std::optional<CompiledPath> status_;
    std::optional<CompiledPath> done_;
};

}  // namespace crank::runtime
