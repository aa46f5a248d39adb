#include "runtime/error_names.h"

#include <rapidjson/document.h>

#include "json/json_parse.h"

namespace crank::runtime {

std::string_view errorCodeName(crank_error_code code) {
    switch (code) {
        case CRANK_ERR_INVALID_ARGUMENT:
            return "invalid_argument";
        case CRANK_ERR_UNAVAILABLE:
            return "unavailable";
        case CRANK_ERR_UPSTREAM:
            return "upstream";
        case CRANK_ERR_PROTOCOL:
            return "protocol";
        case CRANK_ERR_TIMEOUT:
            return "timeout";
        case CRANK_ERR_RESOURCE_EXHAUSTED:
            return "resource_exhausted";
        case CRANK_ERR_UNSUPPORTED:
            return "unsupported";
        case CRANK_ERR_INTERNAL:
            return "internal";
    }
    return "internal";
}

std::string clientErrorDetails(std::string_view details_json, const SecretScrubber& scrubber) {
    if (details_json.empty() || details_json.size() > kMaxErrorDetailsBytes) {
        return {};
    }
    std::string scrubbed = scrubber.scrubJson(details_json);
    // The plugin's text: parsed with crankd's bounded parser (depth, UTF-8), never recursively.
    json::Document doc;
    if (!json::parseJson(scrubbed, doc, "") || !doc.IsObject()) {
        return {};
    }
    return scrubbed;
}

}  // namespace crank::runtime
