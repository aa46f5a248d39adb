#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "json/json_scanner.h"

namespace crank::mcp {

/// A JSON-RPC request id as MCP allows it: a string or a 64-bit signed integer, never null and
/// never a fraction. The string "1" and the integer 1 are different ids, as in JSON-RPC.
///
/// Also the type of MCP progress tokens (`params._meta.progressToken`), which are strings or
/// integers in the same way.
///
/// A plain value: copyable, comparable, hashable (std::hash below), so it can key a
/// std::unordered_map or a std::map. Strings hold the decoded UTF-8 text (escapes resolved).
class RequestId {
public:
    /// An integer id.
    explicit RequestId(std::int64_t value) : value_(value) {}
    /// A string id. The text is UTF-8; it may be empty. (No const char* overload: RequestId(0)
    /// must stay the integer 0.)
    explicit RequestId(std::string value) : value_(std::move(value)) {}

    bool isInteger() const { return value_.index() == 0; }
    bool isString() const { return value_.index() == 1; }
    /// The integer. Precondition: isInteger().
    std::int64_t asInteger() const { return std::get<0>(value_); }
    /// The string. Precondition: isString().
    const std::string& asString() const { return std::get<1>(value_); }

    /// The id as JSON text: `42`, `-7` or `"abc"` (quoted and escaped).
    std::string toJson() const;
    /// A short form for logs: integers as they are, strings quoted and escaped like toJson() but
    /// cut at kMaxPrintedBytes bytes of text (on a UTF-8 boundary) with "..." after the quote,
    /// so that a hostile id never fills a log line.
    std::string toString() const;
    static constexpr std::size_t kMaxPrintedBytes = 64;
    /// The longest string id (and progress token) accepted, in bytes of decoded text: ids are
    /// kept while their request runs (a listen repeats its id in every notification), so a
    /// client may not make each one megabytes.
    static constexpr std::size_t kMaxStringBytes = 256;

    std::size_t hash() const {
        return std::hash<std::variant<std::int64_t, std::string>>{}(value_);
    }

    friend bool operator==(const RequestId&, const RequestId&) = default;
    /// An order for sorted containers: every integer before every string.
    friend bool operator<(const RequestId& a, const RequestId& b) { return a.value_ < b.value_; }

private:
    std::variant<std::int64_t, std::string> value_;
};

/// Writes toString(); for test failure messages and stream-based logging.
std::ostream& operator<<(std::ostream& out, const RequestId& id);

/// The id (or progress token) a value holds when it is a valid one: a string of at most
/// RequestId::kMaxStringBytes, or an integer within 64 bits.
std::optional<RequestId> requestIdOf(const json::scan::RawValue& value);

/// Why `value` (in `text`) is not a valid id for `what` (a quoted member name, for messages).
std::string badId(std::string_view what, std::string_view text, const json::scan::RawValue& value);

}  // namespace crank::mcp

template <>
struct std::hash<crank::mcp::RequestId> {
    std::size_t operator()(const crank::mcp::RequestId& id) const noexcept { return id.hash(); }
};
