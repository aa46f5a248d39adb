#pragma once

// Pieces shared by the OpenAPI importer's parts (not a public interface): JSON pointers,
// warnings, the size budget and local `$ref` resolution.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_value.h"
#include "util/error.h"

namespace crank::openapi::detail {

/// Longest chain of `$ref`s followed from one place (parameter to parameter, or schema to schema
/// while inlining).
inline constexpr std::size_t kMaxRefChain = 32;

/// `parent/token`, with `~` and `/` escaped as RFC 6901 asks (`/paths/~1items`).
std::string childPointer(std::string_view parent, std::string_view token);
std::string childPointer(std::string_view parent, std::size_t index);

/// `prefix: message` (or message alone when prefix is empty), as an invalid_argument Error.
Error documentError(std::string_view pointer, std::string_view message);

/// Collects warnings, each once, up to a limit.
class Warnings {
public:
    explicit Warnings(std::size_t max) : max_(max) {}
    void add(std::string_view pointer, std::string_view message);
    /// The warnings, with a last "... N more warnings" line when some were not kept.
    std::vector<std::string> take();

private:
    std::size_t max_;
    std::vector<std::string> kept_;
    std::size_t dropped_ = 0;
};

/// How many JSON values the importer may still emit (a string costs one more per
/// bytes_per_value bytes): per operation (then deeper `$ref`s become `{}`) and for the whole
/// document (then the import fails). Inlining `$ref`s can multiply a small document; this bounds
/// the memory and time it may take.
struct Budget {
    static constexpr std::size_t operation_values = 20'000;
    static constexpr std::size_t document_values = 2'000'000;
    static constexpr std::size_t bytes_per_value = 64;
    std::size_t operation_left = operation_values;
    std::size_t document_left = document_values;
    bool operation_warned = false;

    /// Spends `n` values; false when the document budget is exhausted.
    bool spend(std::size_t n) {
        operation_left = operation_left > n ? operation_left - n : 0;
        if (document_left < n) {
            document_left = 0;
            return false;
        }
        document_left -= n;
        return true;
    }
    void startOperation() {
        operation_left = operation_values;
        operation_warned = false;
    }
};

/// The error when the document budget runs out.
Error documentTooLarge();

/// A value found by a local reference, and its pointer (`/components/schemas/Pet`).
struct RefTarget {
    const json::Value* value = nullptr;
    std::string pointer;
};

/// Resolves the `$ref` string `ref` (found at `where`, the pointer of the `$ref` member) against
/// the document root. Only local references (`#`, `#/...`) are followed; a remote one, an
/// anchor, or a pointer to nothing is an error naming `where`.
Result<RefTarget> resolveRef(const json::Value& root, const json::Value& ref,
                             std::string_view where);

/// An object that may be a `{"$ref": ...}` (a parameter, a request body, a path item),
/// followed to what it stands for (at most kMaxRefChain references). `what` names it in errors
/// ("a parameter must be an object, got ...").
Result<RefTarget> resolveObject(const json::Value& root, const json::Value& value,
                                std::string pointer, std::string_view what);

/// The member `key` of `object` (any bytes, NUL included), or nullptr when `object` is not an
/// object or has no such member.
const json::Value* findMember(const json::Value& object, std::string_view key);
json::Value* findMember(json::Value& object, std::string_view key);

/// True for `A-Z a-z 0-9 _ - .`, the characters of a tool name.
bool isToolNameChar(char c);

/// `text` cut to at most `max_bytes` on a UTF-8 boundary, ending with "…" when cut.
std::string truncateUtf8(std::string_view text, std::size_t max_bytes);

}  // namespace crank::openapi::detail
