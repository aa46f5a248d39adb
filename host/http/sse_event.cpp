#include "http/sse_event.h"

namespace crank::http {
namespace {

/// Appends "<field>: <value>\n" with CR, LF and NUL dropped from the value; nothing when no
/// character is left.
void appendSanitizedField(std::string& out, std::string_view field, std::string_view value) {
    std::string clean;
    clean.reserve(value.size());
    for (const char c : value) {
        if (c != '\r' && c != '\n' && c != '\0') {
            clean.push_back(c);
        }
    }
    if (clean.empty()) {
        return;
    }
    out.append(field);
    out.append(": ");
    out.append(clean);
    out.push_back('\n');
}

/// Appends one "<prefix>[ <line>]\n" per line of `text`, splitting on CRLF, CR and LF.
void appendLines(std::string& out, std::string_view prefix, std::string_view text) {
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find_first_of("\r\n", start);
        const std::string_view line = text.substr(
            start, end == std::string_view::npos ? std::string_view::npos : end - start);
        out.append(prefix);
        if (!line.empty()) {
            out.push_back(' ');
            out.append(line);
        }
        out.push_back('\n');
        if (end == std::string_view::npos) {
            return;
        }
        start = end + 1;
        if (text[end] == '\r' && start < text.size() && text[start] == '\n') {
            ++start;  // CRLF is one line break
        }
    }
}

bool isBlank(char c) {
    return c == ' ' || c == '\t';
}

}  // namespace

std::string formatSseEvent(std::string_view id, std::string_view eventType, std::string_view data,
                           std::optional<int> retryMs) {
    std::string out;
    out.reserve(id.size() + eventType.size() + data.size() + 32);
    appendSanitizedField(out, "id", id);
    appendSanitizedField(out, "event", eventType);
    if (retryMs && *retryMs >= 0) {
        out.append("retry: ");
        out.append(std::to_string(*retryMs));
        out.push_back('\n');
    }
    appendLines(out, "data:", data);
    out.push_back('\n');
    return out;
}

std::string formatSseComment(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 4);
    appendLines(out, ":", text);
    out.push_back('\n');
    return out;
}

std::optional<std::string> parseLastEventId(std::string_view header) {
    while (!header.empty() && isBlank(header.front())) {
        header.remove_prefix(1);
    }
    while (!header.empty() && isBlank(header.back())) {
        header.remove_suffix(1);
    }
    if (header.empty() || header.size() > kMaxLastEventIdLength) {
        return std::nullopt;
    }
    for (const char c : header) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7F) {
            return std::nullopt;
        }
    }
    return std::string(header);
}

}  // namespace crank::http
