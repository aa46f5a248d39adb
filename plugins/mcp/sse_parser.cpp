#include "sse_parser.h"

namespace crank::mcpc {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
/// A line may hold a whole event's data plus its field name.
constexpr std::size_t kLineSlack = 64;
/// retry: values are capped here (about 31 years): more digits are not a number worth reading.
constexpr std::size_t kMaxRetryDigits = 12;

}  // namespace

SseParser::SseParser(std::size_t max_event_bytes)
    : max_event_bytes_(max_event_bytes), max_line_bytes_(max_event_bytes + kLineSlack) {}

bool SseParser::fail(std::string message) {
    error_ = std::move(message);
    line_.clear();
    line_.shrink_to_fit();
    data_.clear();
    data_.shrink_to_fit();
    return false;
}

void SseParser::restart() {
    line_.clear();
    data_.clear();
    type_.clear();
    has_fields_ = false;
    id_buffer_ = last_id_;
    after_cr_ = false;
    bom_seen_ = 0;
    started_ = false;
    error_.clear();
}

bool SseParser::feed(std::string_view bytes, std::vector<SseEvent>& events) {
    if (!error_.empty()) {
        return false;
    }
    if (!started_) {
        while (!bytes.empty() && bom_seen_ < kBom.size() && bytes.front() == kBom[bom_seen_]) {
            ++bom_seen_;
            bytes.remove_prefix(1);
        }
        if (bom_seen_ == kBom.size()) {
            started_ = true;
        } else if (bytes.empty()) {
            return true;  // maybe still the start of a byte order mark
        } else {
            started_ = true;
            line_.assign(kBom.substr(0, bom_seen_));  // not a byte order mark: content
        }
    }
    while (!bytes.empty()) {
        if (after_cr_) {
            after_cr_ = false;
            if (bytes.front() == '\n') {
                bytes.remove_prefix(1);
                continue;
            }
        }
        const std::size_t end = bytes.find_first_of("\r\n");
        const std::string_view part = bytes.substr(0, end);
        if (line_.size() + part.size() > max_line_bytes_) {
            return fail("the server sent an SSE line longer than the " +
                        std::to_string(max_event_bytes_) + " bytes an event may have");
        }
        if (end == std::string_view::npos) {
            line_.append(part);
            return true;
        }
        bool ok = false;
        if (line_.empty()) {
            ok = line(part, events);
        } else {
            line_.append(part);
            const std::string whole = std::move(line_);
            line_.clear();
            ok = line(whole, events);
        }
        if (!ok) {
            return false;
        }
        after_cr_ = bytes[end] == '\r';
        bytes.remove_prefix(end + 1);
    }
    return true;
}

bool SseParser::line(std::string_view text, std::vector<SseEvent>& events) {
    if (text.empty()) {
        if (!has_fields_) {
            return true;
        }
        ++events_ended_;
        last_id_ = id_buffer_;
        if (data_.size() > 1) {
            data_.pop_back();  // the '\n' after the last data line
            events.push_back(SseEvent{std::move(type_), std::move(data_), last_id_});
        }
        data_.clear();
        type_.clear();
        has_fields_ = false;
        return true;
    }
    if (text.front() == ':') {
        return true;  // a comment
    }
    const std::size_t colon = text.find(':');
    const std::string_view field = text.substr(0, colon);
    std::string_view value =
        colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') {
        value.remove_prefix(1);
    }
    has_fields_ = true;
    if (field == "data") {
        if (data_.size() + value.size() > max_event_bytes_) {
            return fail("the server sent an SSE event larger than " +
                        std::to_string(max_event_bytes_) + " bytes");
        }
        data_.append(value);
        data_ += '\n';
    } else if (field == "event") {
        type_.assign(value);
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos) {
            id_buffer_.assign(value);
        }
    } else if (field == "retry") {
        if (!value.empty() && value.size() <= kMaxRetryDigits &&
            value.find_first_not_of("0123456789") == std::string_view::npos) {
            std::int64_t ms = 0;
            for (const char c : value) {
                ms = ms * 10 + (c - '0');
            }
            retry_ms_ = ms;
        }
    }
    // Any other field is ignored, as the format says.
    return true;
}

}  // namespace crank::mcpc
