#include "fetched_response.h"

#include "rest_config.h"
#include "text_util.h"
#include <crank/sdk.hpp>

namespace crank::rest {

std::string responseItem(const FetchedResponse& response, const std::vector<std::string>& accept) {
    if (response.body.empty()) {
        return "null";
    }
    // No Content-Type: taken as JSON when JSON is accepted.
    const std::string effective = response.type.empty() ? "application/json" : response.type;
    if (!mediaTypeAccepted(effective, accept)) {
        throw sdk::Error(sdk::ErrorCode::protocol, response.prefix + "the response type \"" +
                                                       excerpt(effective, 128) +
                                                       "\" is not in accept");
    }
    if (isJsonMediaType(effective)) {
        if (const std::string why = jsonError(response.body); !why.empty()) {
            throw sdk::Error(sdk::ErrorCode::protocol,
                             response.prefix + "the response is not valid JSON: " + why);
        }
        return response.body;
    }
    return sdk::jsonQuote(validUtf8(response.body));
}

}  // namespace crank::rest
