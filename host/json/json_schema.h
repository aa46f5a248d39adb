#pragma once

// JSON Schema validation for tool inputs and plugin configs: compile once, validate many times
// from any number of threads.
//
// Supported (draft 2020-12 vocabulary, the subset operators and plugins use):
//   type (a name or an array of names; "integer" is any number with no fraction), enum, const,
//   properties, required, additionalProperties (boolean or schema), patternProperties, items
//   (a schema), prefixItems, minItems, maxItems, uniqueItems, minLength and maxLength (counted in
//   Unicode code points), pattern, minimum, maximum, exclusiveMinimum, exclusiveMaximum
//   (numbers), multipleOf, minProperties, maxProperties, allOf, anyOf, oneOf, not, boolean
//   schemas (true / false), $defs and $ref to "#/$defs/NAME" or "#" (local only).
//   Ignored annotations: $schema, $id, $comment, title, description, default, examples, format,
//   deprecated, readOnly, writeOnly; and every key beginning with "x-".
//   Any other keyword is a compile error with a "did you mean" hint, so that a typo in an
//   operator's schema is caught rather than silently ignored.
// Regular expressions (pattern, patternProperties) are ECMAScript syntax as std::regex reads it,
// unanchored (search semantics) and matched on bytes (`.` is one byte of UTF-8). They are
// compiled once; a pattern that does not compile, is longer than max_pattern_bytes, or is
// refused by the regex engine as too complex is a compile error. With libstdc++ they run on the
// polynomial (non-backtracking) engine, so `(a+)+$` cannot take exponential time; strings longer
// than max_pattern_subject_bytes fail `pattern` instead of being matched.
// Bounds: schema nesting, instance depth and $ref chains are limited to max_depth; every
// validation has an evaluation budget (max_evaluations schema-node visits), so no schema, however
// its $refs fan out, makes validation take more than linear-times-budget time; anyOf / oneOf /
// not evaluate each branch once per instance node.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_value.h"
#include "util/error.h"

namespace crank::json {

/// Bounds of compilation and validation (defaults documented here are the ones used).
struct SchemaLimits {
    std::size_t max_schema_bytes = std::size_t{1024} * 1024;  ///< schema text
    std::size_t max_depth = 64;                      ///< schema nesting, instance depth, $ref chain
    std::size_t max_failures = 20;                   ///< failures kept per validation
    std::size_t max_evaluations = 200'000;           ///< schema-node visits per validation
    std::size_t max_pattern_bytes = 1'000;           ///< one regular expression
    std::size_t max_pattern_subject_bytes = 65'536;  ///< a string matched against a pattern
    std::size_t max_instance_bytes =
        std::size_t{16} * 1024 * 1024;  ///< validate(text): instance text
};

/// One reason why an instance does not match: where (`input.items[3].name`) and what
/// (`must be an integer ≤ 100, got 500`).
struct ValidationFailure {
    std::string path;
    std::string message;
    /// "input.items[3].name: must be a string, got 5"
    std::string toString() const { return path.empty() ? message : path + ": " + message; }
};

/// The outcome of one validation: no failures means valid.
struct ValidationResult {
    std::vector<ValidationFailure> failures;  ///< in instance order; at most max_failures
    bool truncated = false;                   ///< more failures were found than are kept
    bool ok() const { return failures.empty(); }
    /// The first failure as text (enough for an isError tool result), "" when valid.
    std::string firstMessage() const { return failures.empty() ? "" : failures[0].toString(); }
};

/// A compiled schema. Immutable; cheap to copy (shares the compiled form); validate() may be
/// called concurrently from any number of threads.
class CompiledSchema {
public:
    /// Validates a parsed instance. `root` names the instance in failure paths ("input").
    ValidationResult validate(const Value& instance, std::string_view root = "input") const;
    /// Parses and validates JSON text. Text that does not parse (or is nested deeper than
    /// max_depth) yields one failure at `root`: `input: malformed JSON at byte 3: ...`.
    ValidationResult validate(std::string_view instance_json,
                              std::string_view root = "input") const;

    struct Impl;

private:
    friend Result<CompiledSchema> compileSchema(const Value& schema, std::string_view where,
                                                const SchemaLimits& limits);
    explicit CompiledSchema(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<const Impl> impl_;
};

/// Compiles a schema. `where` names the schema in errors (`operations[0].input_schema`); every
/// problem found is reported, joined by "; ", e.g.
/// `operations[0].input_schema.propertes: unknown keyword; did you mean "properties"?`.
/// ErrorCode::invalid_argument.
Result<CompiledSchema> compileSchema(std::string_view schema_json, std::string_view where,
                                     const SchemaLimits& limits = {});
/// The same, from a parsed schema (copied: `schema` need not outlive the result).
Result<CompiledSchema> compileSchema(const Value& schema, std::string_view where,
                                     const SchemaLimits& limits = {});

}  // namespace crank::json
