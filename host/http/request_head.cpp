#include "http/request_head.h"

#include <algorithm>
#include <limits>

namespace crank::http {
namespace {

constexpr std::string_view kOws = " \t";

std::string_view trim(std::string_view s) {
    const auto begin = s.find_first_not_of(kOws);
    if (begin == std::string_view::npos) {
        return {};
    }
    return s.substr(begin, s.find_last_not_of(kOws) - begin + 1);
}

/// Calls `each` with every comma-separated member of a field value, trimmed (empty members
/// included: the callers decide what they mean).
template <typename Each>
void forEachMember(std::string_view value, Each&& each) {
    for (;;) {
        const auto comma = value.find(',');
        each(trim(value.substr(0, comma)));
        if (comma == std::string_view::npos) {
            return;
        }
        value.remove_prefix(comma + 1);
    }
}

/// The end of the head (one past its blank line), searching from `from`; npos when not there yet.
std::size_t findHeadEnd(std::string_view bytes, std::size_t from) {
    for (std::size_t i = bytes.find('\n', from); i != std::string_view::npos;
         i = bytes.find('\n', i + 1)) {
        if (i + 1 < bytes.size() && bytes[i + 1] == '\n') {
            return i + 2;
        }
        if (i + 2 < bytes.size() && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') {
            return i + 3;
        }
    }
    return std::string_view::npos;
}

RequestHead invalid(int status, std::string error) {
    RequestHead head;
    head.state = HeadState::invalid;
    head.status = status;
    head.error = std::move(error);
    return head;
}

/// Reads the framing fields of a complete head (`lines`: the request line and the field lines,
/// without the blank line that ends them).
RequestHead readFraming(std::string_view lines) {
    RequestHead head;
    head.state = HeadState::complete;
    bool first = true;
    bool has_transfer_encoding = false;
    int codings = 0;
    while (!lines.empty()) {
        const auto newline = lines.find('\n');
        std::string_view line = lines.substr(0, newline);
        lines.remove_prefix(newline == std::string_view::npos ? lines.size() : newline + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (first) {
            first = false;  // the request line: Poco reads and checks it
            continue;
        }
        if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
            return invalid(400, "a header line is folded onto the next (obs-fold, RFC 9112 §5.2)");
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            continue;  // not a field: Poco refuses it with its own message
        }
        const std::string_view name = line.substr(0, colon);
        const std::string_view value = line.substr(colon + 1);
        if (equalsIgnoreCase(name, "content-length")) {
            std::string_view problem;
            forEachMember(value, [&](std::string_view member) {
                if (!problem.empty()) {
                    return;
                }
                if (member.empty() || member.find_first_not_of("0123456789") != member.npos) {
                    problem = "Content-Length is not a decimal number";
                    return;
                }
                std::uint64_t n = 0;
                for (const char c : member) {
                    const auto digit = static_cast<std::uint64_t>(c - '0');
                    if (n > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
                        problem = "Content-Length is too large";
                        return;
                    }
                    n = n * 10 + digit;
                }
                if (head.content_length && *head.content_length != n) {
                    problem = "Content-Length is given twice with different values";
                    return;
                }
                head.content_length = n;
            });
            if (!problem.empty()) {
                return invalid(400, std::string(problem));
            }
        } else if (equalsIgnoreCase(name, "transfer-encoding")) {
            has_transfer_encoding = true;
            // Only `chunked`, alone, is acceptable: a coding after it leaves the body without a
            // framing (RFC 9112 §6.3), and crankd decodes no other.
            forEachMember(value, [&](std::string_view member) {
                if (!member.empty()) {
                    ++codings;
                    head.chunked = codings == 1 && equalsIgnoreCase(member, "chunked");
                }
            });
        } else if (equalsIgnoreCase(name, "expect")) {
            head.expects_continue = equalsIgnoreCase(trim(value), "100-continue");
        }
    }
    if (has_transfer_encoding && head.content_length) {
        return invalid(400,
                       "the request has both Content-Length and Transfer-Encoding "
                       "(RFC 9112 §6.1: refused, as a request smuggling vector)");
    }
    if (has_transfer_encoding && !head.chunked) {
        return invalid(501,
                       "Transfer-Encoding other than a single final \"chunked\" is not "
                       "supported");
    }
    return head;
}

}  // namespace

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               const auto lower = [](char c) {
                   return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
               };
               return lower(x) == lower(y);
           });
}

RequestHead scanRequestHead(std::string_view bytes, std::size_t max_head_bytes,
                            std::size_t scanned_hint) {
    // Empty lines before the request line are skipped (RFC 9112 §2.2); they still count toward
    // the size bound, so a client cannot send them for ever.
    const std::size_t lead = std::min(bytes.find_first_not_of("\r\n"), bytes.size());
    const std::size_t from = std::max(lead, scanned_hint >= 2 ? scanned_hint - 2 : 0);
    const std::size_t end =
        lead == bytes.size() ? std::string_view::npos : findHeadEnd(bytes, from);
    if (end == std::string_view::npos || end > max_head_bytes) {
        RequestHead head;
        if (bytes.size() >= max_head_bytes || end != std::string_view::npos) {
            head.state = HeadState::too_large;
            head.status = 431;
            head.error = "the request head is larger than server.max_request_head_bytes (" +
                         std::to_string(max_head_bytes) + " bytes)";
        }
        return head;
    }
    RequestHead head = readFraming(bytes.substr(lead, end - lead));
    if (head.state == HeadState::complete) {
        head.head_bytes = end;
    }
    return head;
}

std::size_t readAheadBodyBytes(const RequestHead& head, std::size_t read_ahead_body_bytes,
                               std::uint64_t max_body_bytes) {
    const bool small = head.state == HeadState::complete && !head.chunked &&
                       !head.expects_continue && head.content_length && *head.content_length > 0 &&
                       *head.content_length <= read_ahead_body_bytes &&
                       *head.content_length <= max_body_bytes;
    return small ? static_cast<std::size_t>(*head.content_length) : 0;
}

}  // namespace crank::http
