#include "runtime/error_names.h"

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

}  // namespace crank::runtime
