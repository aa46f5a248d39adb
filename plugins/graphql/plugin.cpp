// The "graphql" plugin library: one adapter, "graphql" (see graphql_adapter.h, README.md).
#include "graphql_adapter.h"
#include <crank/sdk.hpp>

CRANK_PLUGIN("graphql", "1.0.0",
             "GraphQL upstreams: queries and mutations as tools, input schemas from introspection",
             crank::graphql::registerGraphqlPlugin);
