#include "http_wire.h"

#include <algorithm>
#include <thread>
#include <vector>

#include <crank/sdk/http/client.hpp>
#include <crank/sdk/http/text.hpp>

namespace crank::mcpc {
namespace {

/// Waits are cut into slices this long, so that a halt or the deadline is noticed promptly.
constexpr std::chrono::milliseconds kSlice{50};
constexpr std::size_t kReadChunk = 16384;

std::string_view trim(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

std::string asciiLower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return out;
}

bool isHttpToken(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

std::string excerpt(std::string_view text, std::size_t max) {
    std::string shown = sdk::http::validUtf8(text.substr(0, max + 4));
    for (char& c : shown) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20 || b == 0x7F) {
            c = c == '\n' || c == '\r' || c == '\t' ? ' ' : '?';
        }
    }
    std::string out = sdk::http::excerpt(shown, max);
    if (text.size() > max + 4 && out.size() == shown.size()) {
        out += "...";
    }
    return out;
}

void checkHalt(const HaltCheck& halt, Clock::time_point deadline) {
    const HttpHalt h = halt ? halt() : HttpHalt::none;
    if (h != HttpHalt::none) {
        throw HttpWireFailure(HttpWireFailure::Kind::halted, h, "halted");
    }
    if (Clock::now() >= deadline) {
        throw HttpWireFailure(HttpWireFailure::Kind::timeout, HttpHalt::none, "timed out");
    }
}

void pause(Clock::duration wait, Clock::time_point deadline, const HaltCheck& halt) {
    const Clock::time_point until = std::min(deadline, Clock::now() + wait);
    while (true) {
        checkHalt(halt, deadline);
        const Clock::time_point now = Clock::now();
        if (now >= until) {
            return;
        }
        std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kSlice));
    }
}

HttpWire::HttpWire(const WireSettings& settings, const sdk::http::HttpRequest& request,
                   Clock::time_point deadline, const HaltCheck& halt)
    : settings_(settings),
      what_(request.method + " " + request.url.describe()),
      exchange_(std::make_unique<sdk::http::HttpExchange>(*settings.pool, settings.options)) {
    checkHalt(halt, deadline);
    HttpHalt seen = HttpHalt::none;
    const sdk::http::CancelCheck cancel = [&] {
        seen = halt ? halt() : HttpHalt::none;
        return seen != HttpHalt::none;
    };
    const Clock::time_point connectBy = deadline - Clock::now() > settings.connect_timeout
                                            ? Clock::now() + settings.connect_timeout
                                            : deadline;
    try {
        exchange_->start(request, sdk::http::ExchangeDeadlines{connectBy, deadline, deadline},
                         cancel);
    } catch (const sdk::http::ExchangeFailure& f) {
        fail(f, seen, deadline, connectBy);
    }
    if (head().status == 101) {
        throw HttpWireFailure(HttpWireFailure::Kind::failed, HttpHalt::none,
                              what_ + ": the server switched protocols (HTTP 101)");
    }
}

HttpWire::~HttpWire() {
    exchange_->finish();
}

void HttpWire::fail(const sdk::http::ExchangeFailure& failure, HttpHalt halt,
                    Clock::time_point deadline, Clock::time_point connect_deadline) const {
    using Kind = sdk::http::TransportError::Kind;
    const sdk::http::TransportError& e = failure.error();
    if (e.kind == Kind::cancelled) {
        throw HttpWireFailure(HttpWireFailure::Kind::halted,
                              halt == HttpHalt::none ? HttpHalt::closed : halt, "halted");
    }
    if (e.kind == Kind::timeout) {
        if (failure.phase() == sdk::http::ExchangeFailure::Phase::connect &&
            connect_deadline < deadline) {
            throw HttpWireFailure(HttpWireFailure::Kind::failed, HttpHalt::none,
                                  what_ + ": cannot connect within " +
                                      std::to_string(settings_.connect_timeout.count()) +
                                      " ms (connect_timeout)");
        }
        throw HttpWireFailure(HttpWireFailure::Kind::timeout, HttpHalt::none, "timed out");
    }
    std::string detail = e.detail;
    if (e.kind == Kind::refused) {
        detail = "cannot connect: " + detail;
    } else if (e.kind == Kind::closed &&
               failure.phase() == sdk::http::ExchangeFailure::Phase::headers) {
        detail = "the server closed the connection without answering (" + detail + ")";
    }
    throw HttpWireFailure(HttpWireFailure::Kind::failed, HttpHalt::none, what_ + ": " + detail);
}

std::string HttpWire::mediaType() const {
    return sdk::http::mediaType(head().header("content-type"));
}

std::optional<std::uint64_t> HttpWire::contentLength() const {
    const std::string* length = head().header("content-length");
    if (length == nullptr || head().header("content-encoding") != nullptr) {
        return std::nullopt;
    }
    const std::string_view digits = trim(*length);
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::nullopt;
    }
    return std::stoull(std::string(digits));
}

std::string HttpWire::statusText() const {
    std::string s = "HTTP " + std::to_string(head().status);
    if (!head().reason.empty()) {
        s += " " + excerpt(head().reason, 60);
    }
    return s;
}

bool HttpWire::readBody(std::string& out, Clock::time_point deadline, const HaltCheck& halt) {
    checkHalt(halt, deadline);
    HttpHalt seen = HttpHalt::none;
    const sdk::http::CancelCheck cancel = [&] {
        seen = halt ? halt() : HttpHalt::none;
        return seen != HttpHalt::none;
    };
    char buffer[kReadChunk];
    try {
        const std::size_t n = exchange_->readBody(buffer, sizeof buffer, deadline, cancel);
        out.append(buffer, n);
        return n > 0;
    } catch (const sdk::http::ExchangeFailure& f) {
        fail(f, seen, deadline, deadline);
    }
}

void HttpWire::drainAfterAnswer(std::size_t max, Clock::time_point until) {
    std::string rest;
    try {
        while (rest.size() <= max && readBody(rest, until, nullptr)) {
        }
    } catch (const HttpWireFailure&) {
        // Still open, or broken: the connection is closed rather than reused.
    }
}

EventsEnd readEvents(HttpWire& wire, sdk::http::SseParser& parser, Clock::time_point deadline,
                     const HaltCheck& halt,
                     const std::function<bool(const sdk::http::SseEvent&)>& on_event) {
    std::string chunk;
    std::vector<sdk::http::SseEvent> events;
    while (wire.readBody(chunk, deadline, halt)) {
        const bool fed = parser.feed(chunk, events);
        chunk.clear();
        for (const sdk::http::SseEvent& event : events) {
            if (!on_event(event)) {
                return EventsEnd::stopped;
            }
        }
        events.clear();
        if (!fed) {
            return EventsEnd::refused;
        }
    }
    return EventsEnd::body_ended;
}

std::string HttpWire::readAtMost(std::size_t max, Clock::time_point until) {
    std::string body;
    try {
        while (body.size() < max && readBody(body, until, nullptr)) {
        }
    } catch (const HttpWireFailure&) {
        // What could be read is enough to explain an error.
    }
    if (body.size() > max) {
        body.resize(max);
    }
    return body;
}

}  // namespace crank::mcpc
