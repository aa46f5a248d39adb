#pragma once

// A 2xx response read whole (bounded by max_response_bytes) and how it becomes the call's item.

#include <string>
#include <vector>

#include "http.h"

namespace crank::rest {

/// The item a response becomes: an empty body is null; a JSON type (or none) is checked and
/// passed as is; any other type in `accept` becomes a JSON string. Throws sdk::Error (protocol)
/// for a type not in `accept` and for malformed JSON.
std::string responseItem(const FetchedResponse& response, const std::vector<std::string>& accept);

}  // namespace crank::rest
