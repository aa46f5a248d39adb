#include "util/error.h"

namespace crank {

std::string_view errorCodeName(ErrorCode code) {
    switch (code) {
        case ErrorCode::invalid_argument:
            return "invalid_argument";
        case ErrorCode::not_found:
            return "not_found";
        case ErrorCode::conflict:
            return "conflict";
        case ErrorCode::unavailable:
            return "unavailable";
        case ErrorCode::io:
            return "io";
        case ErrorCode::internal:
            return "internal";
    }
    return "internal";
}

}  // namespace crank
