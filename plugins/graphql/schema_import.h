#pragma once

// `crankd import-graphql`: one operation per root query and mutation field, each with a GraphQL
// document whose selection set is chosen by default (bounded depth), ready for the config's
// `operations` (README.md, "Importing a schema").

#include <cstddef>
#include <string>
#include <vector>

#include "graphql_schema.h"

namespace crank::graphql {

struct ImportOptions {
    std::string endpoint;         ///< the operations' config.endpoint
    std::string prefix;           ///< tool names are prefix + snake_case(field)
    std::size_t max_depth = 2;    ///< object levels below the root field in a selection set (1..8)
    std::size_t max_fields = 64;  ///< fields selected per object (the first ones, in order)
    bool mutations = true;
};

/// A default selection set for a field of type `type` (empty for leaf types): leaf fields of the
/// type, object fields recursed into while depth remains, fields with required arguments left
/// out, `__typename` for unions (with `... on Member { leaves }`) and for objects that would
/// otherwise select nothing. The text is one line: "{ id name owner { id } }".
std::string defaultSelection(const Schema& schema, const TypeRef& type,
                             const ImportOptions& options);

/// The operations as a JSON array text (pretty, two-space indent), each
/// {name, description, protocol: "graphql", config: {endpoint, document, operation_name}}.
/// Root fields whose operation would be invalid (an argument of a type that is not an input
/// type) are skipped with a note in `warnings`; subscriptions are not imported (a note says so
/// when the schema has them).
std::string importOperations(const Schema& schema, const ImportOptions& options,
                             std::vector<std::string>& warnings);

}  // namespace crank::graphql
