#include "http/raw_header_values.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <Poco/Net/MessageHeader.h>
#include <Poco/String.h>

namespace crank::http {
namespace {

/// The header fields of `head` after its request line: name and raw value (leading whitespace
/// dropped, the line's CR too).
std::vector<std::pair<std::string_view, std::string_view>> fieldsOf(std::string_view head) {
    std::vector<std::pair<std::string_view, std::string_view>> fields;
    while (!head.empty() && (head.front() == '\r' || head.front() == '\n')) {
        head.remove_prefix(1);  // empty lines before the request line (RFC 9112 §2.2)
    }
    bool requestLine = true;
    while (!head.empty()) {
        const std::size_t end = head.find('\n');
        std::string_view line = head.substr(0, end);
        head.remove_prefix(end == std::string_view::npos ? head.size() : end + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (requestLine) {
            requestLine = false;
            continue;
        }
        if (line.empty()) {
            break;  // the blank line that ends the head
        }
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
            continue;
        }
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
            value.remove_prefix(1);
        }
        fields.emplace_back(line.substr(0, colon), value);
    }
    return fields;
}

}  // namespace

std::optional<std::string> headToRestore(std::string_view bytes) {
    const std::size_t crlf = bytes.find("\r\n\r\n");
    const std::size_t lf = bytes.find("\n\n");
    const std::size_t end = std::min(crlf == std::string_view::npos ? crlf : crlf + 4,
                                     lf == std::string_view::npos ? lf : lf + 2);
    if (end == std::string_view::npos) {
        return std::nullopt;
    }
    const std::string_view head = bytes.substr(0, end);
    if (head.find("=?") == std::string_view::npos) {
        return std::nullopt;
    }
    return std::string(head);
}

void restoreRawValues(std::string_view head, Poco::Net::MessageHeader& parsed) {
    const auto fields = fieldsOf(head);
    std::vector<std::string> touched;
    for (const auto& [name, value] : fields) {
        if (value.find("=?") == std::string_view::npos) {
            continue;
        }
        const std::string key(name);
        bool seen = false;
        for (const std::string& t : touched) {
            seen = seen || Poco::icompare(t, key) == 0;
        }
        if (!seen) {
            touched.push_back(key);
        }
    }
    for (const std::string& name : touched) {
        parsed.erase(name);
        for (const auto& [field, value] : fields) {
            if (Poco::icompare(std::string(field), name) == 0) {
                parsed.add(std::string(field), std::string(value));
            }
        }
    }
}

}  // namespace crank::http
