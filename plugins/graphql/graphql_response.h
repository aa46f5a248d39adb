#pragma once

// What a GraphQL response becomes (README.md, "Results"): the call's item, or its error.
//   - `data` without `errors`: {"data": <data, or its part at data_path>}
//   - `data` and `errors` (partial data): {"data": ..., "errors": [...], "partial": true}
//   - `errors` without `data` (or `data: null`): an upstream error naming the first messages and
//     their paths, details {"http_status": N, "errors": [...]}
//   - neither, a body that is not JSON, or not an object: a protocol error; but a non-2xx status
//     is reported as the HTTP error it is (status and an excerpt), as the REST plugin does.
// With has_next_path, the item also carries "last_page": true|false (for execution.done_path).

#include <string>

#include "graphql_config.h"
#include <crank/sdk/http/client.hpp>

namespace crank::graphql {

/// Documented bounds (README.md).
struct ResponseLimits {
    static constexpr std::size_t max_depth = 256;  ///< JSON nesting of a response
    static constexpr std::size_t max_error_bytes =
        std::size_t{64} * 1024;  ///< `errors` kept in an item
    static constexpr std::size_t max_detail_bytes =
        std::size_t{8} * 1024;                      ///< `errors` in error details
    static constexpr std::size_t max_messages = 3;  ///< messages in an error's text
};

/// The item of `response` (see above), or throws sdk::Error.
std::string graphqlItem(const sdk::http::FetchedResponse& response, const GraphqlConfig& config);

}  // namespace crank::graphql
