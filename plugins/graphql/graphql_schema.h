#pragma once

// A GraphQL schema as the plugin and `crankd import-graphql` need it: named types with their
// fields, arguments, input fields and enum values, and the root types. Read from an introspection
// result (JSON) or from SDL (graphql_syntax.h's limits apply).

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graphql_syntax.h"

namespace crank::graphql {

struct InputValue {
    std::string name;
    std::string description;
    TypeRef type;
    std::optional<std::string> default_json;  ///< the default as JSON text (enums as strings)
    bool deprecated = false;
};

struct Field {
    std::string name;
    std::string description;
    std::vector<InputValue> args;
    TypeRef type;
    bool deprecated = false;
};

struct EnumValue {
    std::string name;
    std::string description;
    bool deprecated = false;
};

struct NamedType {
    enum class Kind { scalar, object, interface, union_type, enum_type, input_object };
    Kind kind = Kind::scalar;
    std::string name;
    std::string description;
    std::vector<Field> fields;                ///< object, interface
    std::vector<InputValue> input_fields;     ///< input_object
    std::vector<EnumValue> enum_values;       ///< enum_type
    std::vector<std::string> possible_types;  ///< union, interface (objects implementing it)
    std::vector<std::string> interfaces;      ///< object, interface
    bool one_of = false;                      ///< input_object with @oneOf

    const Field* field(std::string_view name) const;
    bool isInputType() const {
        return kind == Kind::scalar || kind == Kind::enum_type || kind == Kind::input_object;
    }
    bool isLeaf() const { return kind == Kind::scalar || kind == Kind::enum_type; }
};

struct Schema {
    std::string query_type;         ///< "" when the schema has none (an error for import)
    std::string mutation_type;      ///< "" when none
    std::string subscription_type;  ///< "" when none
    std::map<std::string, NamedType, std::less<>> types;  ///< built-in scalars always present

    const NamedType* type(std::string_view name) const;
    /// The root type of an operation kind, or nullptr.
    const NamedType* rootType(OperationDefinition::Kind kind) const;
};

/// Bounds of a schema read. Documented defaults (README.md). max_bytes is the plugin's own bound
/// on a schema (GraphqlDefaults::max_schema_bytes) and sdlLimits().max_bytes.
struct SchemaLimits {
    std::size_t max_bytes = std::size_t{32} * 1024 * 1024;
    std::size_t max_types = 50'000;
    std::size_t max_json_depth = 128;  ///< introspection JSON nesting (ofType chains included)
};

/// The introspection query the plugin and import-graphql send (descriptions, arguments with
/// defaults, input fields, enum values including deprecated ones, ofType 8 wrappers deep).
extern const std::string_view kIntrospectionQuery;

/// kIntrospectionQuery, with `isOneOf` on types when `with_one_of` (@oneOf input objects; servers
/// that predate it refuse the field, so a caller falls back to the query without it).
std::string introspectionQuery(bool with_one_of);

/// Reads an introspection result: a GraphQL response `{"data": {"__schema": ...}}` (its
/// `errors`, if any and without data, become the error) or the bare `{"__schema": ...}`.
/// Default values (GraphQL literals in introspection) are turned into JSON text (one that does
/// not parse, invalid UTF-8 included, is dropped). Every name must be a GraphQL name (at most
/// kMaxNameBytes); invalid UTF-8 in descriptions is replaced by U+FFFD. nullopt with `error` set
/// ("__schema.types[12].fields[3].type: ofType is missing"); errors quote input in excerpts.
std::optional<Schema> schemaFromIntrospection(std::string_view json, std::string& error,
                                              const SchemaLimits& limits = {});

/// Reads SDL: schema, scalar, type, interface, union, enum, input, directive definitions and
/// their `extend` forms, descriptions; `@deprecated` and `@oneOf` are honoured, other directives
/// skipped. Every type referenced must be defined (or built in). nullopt with `error` set.
std::optional<Schema> schemaFromSdl(std::string_view sdl, std::string& error,
                                    const SchemaLimits& limits = {});

/// A schema file: introspection JSON when the first non-space byte is '{', SDL otherwise.
std::optional<Schema> schemaFromText(std::string_view text, std::string& error,
                                     const SchemaLimits& limits = {});

/// Checks `operation` against `schema` as far as the plugin relies on it: the root type exists,
/// every root field exists on it, every variable's type exists and is an input type. "" when
/// fine, else the first problem ("variable $filter: type ItemFilter is not in the schema").
std::string checkOperation(const OperationDefinition& operation, const Schema& schema);

}  // namespace crank::graphql
