#include <utility>

#include <crank/sdk/http/sse.hpp>

namespace crank::sdk::http {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
/// retry: values are capped here (about 31 years): more digits are not a number worth reading.
constexpr std::size_t kMaxRetryDigits = 12;

/// The first CR or LF at or after `from`, or npos. A plain loop: find_first_of with a two-byte
/// set calls memchr once per byte.
std::size_t lineEnd(std::string_view bytes, std::size_t from) {
    for (std::size_t i = from; i < bytes.size(); ++i) {
        if (bytes[i] == '\n' || bytes[i] == '\r') {
            return i;
        }
    }
    return std::string_view::npos;
}

}  // namespace

SseParser::SseParser(SseLimits limits) : limits_(limits) {}

bool SseParser::fail(std::string message) {
    error_ = std::move(message);
    line_.clear();
    line_.shrink_to_fit();
    data_.clear();
    data_.shrink_to_fit();
    return false;
}

void SseParser::dropPartial() {
    line_.clear();
    data_.clear();
    type_.clear();
    has_fields_ = false;
    id_buffer_ = last_id_;
    after_cr_ = false;
}

void SseParser::finish() {
    dropPartial();
}

void SseParser::restart() {
    dropPartial();
    bom_seen_ = 0;
    started_ = false;
    error_.clear();
}

bool SseParser::feed(std::string_view bytes, std::vector<SseEvent>& events) {
    if (!error_.empty()) {
        return false;
    }
    std::size_t i = 0;
    // The byte order mark may itself arrive split over chunks.
    while (!started_ && i < bytes.size()) {
        if (bytes[i] == kBom[bom_seen_]) {
            ++bom_seen_;
            ++i;
            if (bom_seen_ == kBom.size()) {
                started_ = true;
            }
            continue;
        }
        // Not a byte order mark after all: what was matched of it is text.
        line_.append(kBom.substr(0, bom_seen_));
        started_ = true;
    }
    while (i < bytes.size()) {
        if (after_cr_) {
            after_cr_ = false;
            if (bytes[i] == '\n') {
                ++i;  // the LF of a CRLF whose CR ended the previous line
                continue;
            }
        }
        const std::size_t end = lineEnd(bytes, i);
        const std::size_t stop = end == std::string_view::npos ? bytes.size() : end;
        if (line_.size() + (stop - i) > limits_.max_line_bytes) {
            return fail("a line of the event stream is longer than " +
                        std::to_string(limits_.max_line_bytes) + " bytes");
        }
        if (end == std::string_view::npos) {
            line_.append(bytes.substr(i));
            return true;
        }
        bool ok = true;
        if (line_.empty()) {
            ok = line(bytes.substr(i, end - i), events);
        } else {
            line_.append(bytes.substr(i, end - i));
            const std::string whole = std::move(line_);
            line_.clear();
            ok = line(whole, events);
        }
        if (!ok) {
            return false;
        }
        after_cr_ = bytes[end] == '\r';
        i = end + 1;
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
        if (!data_.empty()) {
            data_.pop_back();  // the '\n' after the last data line
            SseEvent event;
            if (!type_.empty()) {
                event.type = std::move(type_);
            }
            event.data = std::move(data_);
            event.id = last_id_;
            events.push_back(std::move(event));
        }
        data_.clear();
        type_.clear();
        has_fields_ = false;
        return true;
    }
    if (text.front() == ':') {
        return true;  // a comment (often a keep-alive)
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
        if (data_.size() + value.size() > limits_.max_event_bytes) {
            return fail("an event of the event stream is larger than " +
                        std::to_string(limits_.max_event_bytes) + " bytes");
        }
        data_.append(value);
        data_.push_back('\n');
    } else if (field == "event") {
        type_.assign(value);
    } else if (field == "id") {
        // Every event carries the id, and a reconnection sends it back: a longer one is ignored
        // like one with NUL, so that a stream cannot make each of its events that large.
        if (value.find('\0') == std::string_view::npos && value.size() <= kMaxEventIdBytes) {
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

}  // namespace crank::sdk::http
