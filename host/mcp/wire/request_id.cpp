#include "mcp/wire/request_id.h"

#include <ostream>

#include "util/json_string.h"

namespace crank::mcp {

std::string RequestId::toJson() const {
    if (isInteger()) {
        return std::to_string(asInteger());
    }
    return jsonString(asString());
}

std::string RequestId::toString() const {
    if (isInteger()) {
        return std::to_string(asInteger());
    }
    const std::string& text = asString();
    if (text.size() <= kMaxPrintedBytes) {
        return jsonString(text);
    }
    std::size_t cut = kMaxPrintedBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) {
        --cut;  // do not split a UTF-8 sequence
    }
    return jsonString(std::string_view(text).substr(0, cut)) + "...";
}

std::ostream& operator<<(std::ostream& out, const RequestId& id) {
    return out << id.toString();
}

/// The id a value holds, when it is a valid one.
std::optional<RequestId> requestIdOf(const json::scan::RawValue& value) {
    if (value.type == json::scan::ValueType::integer) {
        return RequestId(value.integer);
    }
    if (value.type == json::scan::ValueType::string &&
        value.text.size() <= RequestId::kMaxStringBytes) {
        return RequestId(value.text);
    }
    return std::nullopt;
}

/// Why `value` is not a valid id (or progress token) for `what`.
std::string badId(std::string_view what, std::string_view text, const json::scan::RawValue& value) {
    if (value.type == json::scan::ValueType::string) {
        return std::string(what) + " must be a string of at most " +
               std::to_string(RequestId::kMaxStringBytes) +
               " bytes or an integer, got a string of " + std::to_string(value.text.size()) +
               " bytes";
    }
    const std::string got = json::scan::describe(text, value);
    if (value.type == json::scan::ValueType::number &&
        got.find_first_of(".eE") == std::string::npos) {
        return std::string(what) +
               " must be a string or an integer between -9223372036854775808 and "
               "9223372036854775807, got " +
               got;
    }
    return std::string(what) + " must be a string or an integer, got " + got;
}

}  // namespace crank::mcp
