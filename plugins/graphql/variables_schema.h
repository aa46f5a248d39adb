#pragma once

// The JSON Schema of a tool's input, derived from a GraphQL operation's variable definitions and
// the schema's input types (README.md, "Input schema"):
//   - the root is an object with one property per variable, `required` for non-null variables
//     without a default, `additionalProperties: false`;
//   - Int: integer in the 32-bit range; Float: number; String: string; Boolean: boolean;
//     ID: string or integer; custom scalars: string (their description says the scalar);
//   - enums: string with `enum` (every value, deprecated ones included, since they are valid);
//   - input objects: `$defs` entries (so that recursive inputs work) with their fields, the same
//     `required` rule and `additionalProperties: false`; @oneOf: exactly one property;
//   - lists: arrays; nullable means "may be left out" (explicit null is not offered);
//   - defaults as `default`, descriptions from the schema (a variable passed straight to a root
//     field's argument takes that argument's description).

#include <string>
#include <vector>

#include "graphql_schema.h"
#include "graphql_syntax.h"

namespace crank::graphql {

/// The input schema's JSON text. `schema` may be nullptr (not available): named types other than
/// the built-in scalars are then left unconstrained, with a note in `warnings`. Errors (a type
/// that is not in the schema, an output type used as a variable's type) go to `error`, and the
/// result is "".
std::string variablesInputSchema(const OperationDefinition& operation, const Schema* schema,
                                 std::vector<std::string>& warnings, std::string& error);

/// A description for the tool: the root field's description (one root field), else the
/// operation's kind and fields ("GraphQL query: item, items"). "" when `schema` is nullptr and
/// nothing better can be said.
std::string operationDescription(const OperationDefinition& operation, const Schema* schema);

}  // namespace crank::graphql
