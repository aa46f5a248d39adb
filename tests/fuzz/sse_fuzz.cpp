// Fuzz target sse: the SDK's event stream parser (sdk/include/crank/sdk/http/sse.hpp), which the
// REST plugin's SSE upstreams and the mcp plugin's HTTP transports read with.
//
// Input: one byte of settings, then the bytes of the stream as an upstream sends them.
//   settings bits 0-1: the limits (tiny, small, medium, the defaults), so that the limit paths
//   run as often as the others; bits 2-7 seed how the stream is cut into chunks.
// The parser reads the stream whole, then cut into chunks; the events, the error, the last event
// id and the retry delay must not depend on where the chunks end. Every dispatched event must fit
// the limits. The stream is also read with a restart() (a reconnection) half way.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include <crank/sdk/http/sse.hpp>

namespace {

using crank::fuzz::check;

/// Chunk lengths from a seed: mostly short (1 to 8 bytes), sometimes long.
class Chunker {
public:
    explicit Chunker(std::uint32_t seed) : state_(seed * 2654435761U + 1U) {}
    std::size_t next() {
        state_ ^= state_ << 13U;
        state_ ^= state_ >> 17U;
        state_ ^= state_ << 5U;
        return (state_ % 4U == 0U) ? 1U + state_ % 97U : 1U + state_ % 8U;
    }

private:
    std::uint32_t state_;
};

struct Outcome {
    std::vector<std::string> events;  // type, data and id of each, joined by NUL bytes
    std::string error;
    std::string last_id;
    std::optional<std::int64_t> retry;
    bool operator==(const Outcome&) const = default;
};

using crank::sdk::http::SseEvent;
using crank::sdk::http::SseLimits;
using crank::sdk::http::SseParser;

void record(const std::vector<SseEvent>& events, Outcome& out) {
    for (const SseEvent& e : events) {
        out.events.push_back(e.type + '\0' + e.data + '\0' + e.id);
    }
}

constexpr std::size_t kLines[] = {8, 40, 300, std::size_t{1024} * 1024};
constexpr std::size_t kEvents[] = {16, 30, 1000, std::size_t{1024} * 1024};

/// Feeds `stream` to `parser` whole, or in the chunks `chunking` picks; a parser that fails must
/// say so in error() and refuse anything fed after.
void feedAll(SseParser& parser, std::vector<SseEvent>& events, std::string_view stream,
             std::optional<std::uint32_t> chunking) {
    if (!chunking) {
        (void)parser.feed(stream, events);
        return;
    }
    Chunker chunker(*chunking);
    while (!stream.empty()) {
        const std::size_t n = std::min(chunker.next(), stream.size());
        const bool ok = parser.feed(stream.substr(0, n), events);
        stream.remove_prefix(n);
        if (ok != parser.error().empty()) {
            crank::fuzz::fail("feed() and error() disagree");
        }
        if (!ok) {
            if (parser.feed("data: x\n\n", events)) {
                crank::fuzz::fail("feeds after an error");
            }
            return;
        }
    }
}

Outcome read(std::string_view stream, const SseLimits& limits,
             std::optional<std::uint32_t> chunking) {
    SseParser parser(limits);
    std::vector<SseEvent> events;
    feedAll(parser, events, stream, chunking);
    parser.finish();
    check(parser.eventsEnded() >= events.size(), "more events than ends");
    for (const SseEvent& e : events) {
        check(!e.type.empty(), "an event without a type");
        check(e.data.size() <= limits.max_event_bytes, "an event over max_event_bytes");
    }
    Outcome out;
    record(events, out);
    out.error = parser.error();
    out.last_id = parser.lastEventId();
    out.retry = parser.retryMs();
    return out;
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const unsigned settings = data[0];
    const std::string_view stream = crank::fuzz::asText(data + 1, size - 1);
    const unsigned limit = settings & 3U;
    const std::uint32_t seed = settings >> 2U;

    const SseLimits limits{kLines[limit], kEvents[limit]};
    const Outcome whole = read(stream, limits, std::nullopt);
    const Outcome cut = read(stream, limits, seed);
    check(whole == cut, "the outcome depends on the chunks");

    // A reconnection half way: the second connection's stream starts afresh (a byte order mark
    // again, a partial line dropped); the last event id survives.
    SseParser parser(SseLimits::forEvents(kEvents[limit]));
    std::vector<SseEvent> events;
    const std::size_t half = stream.size() / 2;
    (void)parser.feed(stream.substr(0, half), events);
    const std::string id_before = parser.lastEventId();
    parser.restart();
    check(parser.error().empty() && parser.lastEventId() == id_before,
          "restart() lost the last event id or kept the error");
    (void)parser.feed(stream.substr(half), events);
    return 0;
}
