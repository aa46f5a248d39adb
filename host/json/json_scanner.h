#pragma once

// The span scanner: reads a JSON text's top-level members (and, for JSON-RPC envelopes, those of
// "error") without building a DOM, recording each one's type, its
// byte span in the text and the value of a scalar. Nested values are only walked through (to check
// depth, duplicate keys and UTF-8) and are cut out of the text by their span later, exactly as the
// sender wrote them. RapidJSON stays inside json_scanner.cpp.
//
// Beside the DOM reader (json_parse.h): for text that is read for a few members and passed on
// as written (MCP's JSON-RPC layer, mcp/wire/json_rpc.h; upstream answers in host/federation).
//
// THREADING: every function here is pure and may run on any thread.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace crank::json::scan {

enum class ValueType { null, boolean, integer, number, string, object, array };

/// One recorded value: its type, where it is in the text, and the value of a scalar.
struct RawValue {
    ValueType type = ValueType::null;
    std::size_t start = 0;     ///< first byte in the text
    std::size_t end = 0;       ///< one past the last byte
    std::int64_t integer = 0;  ///< when type == integer (a whole number within 64 bits)
    std::string text;          ///< when type == string: the decoded text
};

struct RawMember {
    std::string name;
    RawValue value;
};

/// One message (or one object, for extractMember) as the scanner saw it.
struct RawEntry {
    bool is_object = false;
    RawValue value;                        ///< the entry as a whole
    std::vector<RawMember> members;        ///< when is_object, in text order
    std::vector<RawMember> error_members;  ///< of "error" when it is an object (envelopes)
    /// Envelopes with ScanOptions::params: whether "params" was an object, and its members; and
    /// whether its "_meta" was an object, and that one's members. Spans are in the scanned text.
    bool params_scanned = false;
    std::vector<RawMember> params_members;
    bool meta_scanned = false;
    std::vector<RawMember> meta_members;
    std::string duplicate;      ///< the first duplicate member found, described
    bool duplicate_id = false;  ///< that duplicate is the message's "id"
};

/// What scanJson() reads, and its bounds.
struct ScanOptions {
    std::size_t max_depth = std::numeric_limits<std::size_t>::max();
    std::size_t max_batch_size = 0;
    bool allow_batch = false;  ///< a root array is a batch of entries (else one entry)
    bool envelopes = false;    ///< entries are JSON-RPC messages: read "error" members too
    /// Envelopes: also record the members of "params" and of "params._meta" when they are
    /// objects, so that their readers need not scan them again.
    bool params = false;
};

/// What scanJson() found.
struct Scan {
    bool valid = false;             ///< the text is valid JSON within the bounds
    bool batch = false;             ///< its root is an array read as a batch
    bool too_many_entries = false;  ///< the batch holds more than max_batch_size entries
    std::string error;              ///< why it is not valid: "invalid JSON at byte N: ..."
    std::vector<RawEntry> entries;  ///< the root value, or the batch's entries
};

/// Reads the whole of `text`. Refuses (valid false, `error` set) invalid JSON, a NUL byte, a
/// lone UTF-16 surrogate escape, a number past the range of a double, nesting past max_depth and
/// (too_many_entries) a batch past max_batch_size; stops at the first of them.
Scan scanJson(std::string_view text, const ScanOptions& options);

/// The members of the JSON object `json` (not empty); invalid_argument when it is not valid JSON,
/// not an object, or has a member twice.
Result<RawEntry> readObject(std::string_view json);

/// The value of the member `name`, or null.
const RawValue* findMember(const std::vector<RawMember>& members, std::string_view name);

/// A string of the sender's for a message: quoted, escaped, cut, "..." marking the cut.
std::string describeString(std::string_view text);

/// A recorded value for "got ...": strings quoted, numbers as written, containers by kind.
std::string describe(std::string_view text, const RawValue& value);

/// Compact JSON text of a recorded value.
std::string jsonText(std::string_view text, const RawValue& value);

}  // namespace crank::json::scan
