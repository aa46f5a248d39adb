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

}  // namespace crank::mcp
