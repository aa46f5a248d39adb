#pragma once

// OpenAPI Schema Objects (3.0 and 3.1) to the JSON Schema subset crankd's validator accepts
// (host/json/json_schema.h). Part of the importer, not a public interface.
//
// - Local `$ref`s are inlined. A reference to a schema that is being inlined already (a cycle),
//   a chain of more than kMaxRefChain references, a schema nested deeper than
//   SchemaConverter::max_depth, or a reference once the operation's budget is spent becomes `{}`
//   (any value) with a warning.
// - `nullable: true` becomes a type union with "null" (and `null` joins an `enum`); on a schema
//   that combines others (`$ref`, `allOf`, ...) it becomes `{"anyOf": [schema, {"type": "null"}]}`.
// - `exclusiveMinimum: true` (3.0) becomes `exclusiveMinimum: <minimum>`; `example` becomes
//   `examples: [example]`; `discriminator`, `xml`, `externalDocs`, `$id`, `$defs`, `x-...` are
//   dropped silently.
// - Keywords the validator does not support (`if`, `contains`, `propertyNames`, ...), unknown
//   keywords, keyword values of the wrong type and patterns the validator would refuse are
//   dropped with a warning: the input is then validated less strictly, never refused wrongly.
// - A schema that is neither an object nor a boolean, or a structural keyword of the wrong type
//   (`properties` that is not an object, `allOf` that is not an array), is an error.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "json/json_value.h"
#include "openapi/openapi_support.h"
#include "util/error.h"

namespace crank::openapi::detail {

class SchemaConverter {
public:
    /// Depth (in JSON nesting, the input schema's root being 1) below which no schema is
    /// emitted, so that an operation stays within the config file's 64 levels.
    static constexpr std::size_t max_depth = 48;
    /// Depth no literal (`enum`, `default`, ...) may reach.
    static constexpr std::size_t max_literal_depth = 54;

    SchemaConverter(const json::Value& root, json::Allocator& allocator, Warnings& warnings,
                    Budget& budget)
        : root_(root), allocator_(allocator), warnings_(warnings), budget_(budget) {}

    /// Converts the schema `in`, found at `pointer`, into `out` (which sits at `depth`).
    Result<void> convert(const json::Value& in, const std::string& pointer, json::Value& out,
                         std::size_t depth);

private:
    Result<void> convertObject(const json::Value& in, const std::string& pointer, json::Value& out,
                               std::size_t depth);
    Result<void> convertRef(const json::Value& in, const std::string& pointer, json::Value& out,
                            std::size_t depth);
    Result<void> convertKeywords(const json::Value& in, const std::string& pointer,
                                 json::Value& out, std::size_t depth, bool skip_ref);
    Result<void> convertKeyword(const json::Value& in, std::string_view keyword,
                                const json::Value& value, const std::string& pointer,
                                json::Value& out, std::size_t depth);
    Result<void> convertSchemaMap(const json::Value& value, const std::string& pointer,
                                  json::Value& out, std::size_t depth, bool patterns);
    Result<void> convertSchemaArray(std::string_view keyword, const json::Value& value,
                                    const std::string& pointer, json::Value& out,
                                    std::size_t depth);
    void convertType(const json::Value& value, const std::string& pointer, json::Value& out);
    void convertRequired(const json::Value& value, const std::string& pointer, json::Value& out);
    void convertExclusive(const json::Value& in, std::string_view keyword, const json::Value& value,
                          const std::string& pointer, json::Value& out);
    bool patternAccepted(const json::Value& pattern, const std::string& pointer);
    /// Copies a literal value (enum, default, ...) as member `key` of `out`, within the depth
    /// and budget; false (with a warning) when it does not fit.
    /// `as_array`: wrapped in a one-element array (`example` to `examples`).
    Result<bool> copyLiteral(std::string_view key, const json::Value& value,
                             const std::string& pointer, json::Value& out, std::size_t depth,
                             bool as_array);
    void addMember(json::Value& out, std::string_view key, json::Value& value);
    Result<void> spend(std::size_t n);

    const json::Value& root_;
    json::Allocator& allocator_;
    Warnings& warnings_;
    Budget& budget_;
    std::vector<std::string> active_refs_;  ///< targets being inlined, outermost first
    /// Patterns checked already: "" when the validator accepts one, else why not.
    std::unordered_map<std::string, std::string> pattern_errors_;
};

/// Applies nullable to a converted schema that does not combine others: adds "null" to its
/// `type` and `enum`.
void addNullToType(json::Value& schema, json::Allocator& allocator);

}  // namespace crank::openapi::detail
