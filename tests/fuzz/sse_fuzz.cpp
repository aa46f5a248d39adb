// Fuzz target sse: the event stream parsers of the upstream SSE clients, the REST plugin's
// (plugins/rest/sse_parser.h) and the mcp plugin's (plugins/mcp/sse_parser.h).
//
// Input: one byte of settings, then the bytes of the stream as an upstream sends them.
//   settings bits 0-1: the limits (tiny, small, medium, the defaults), so that the limit paths
//   run as often as the others; bits 2-7 seed how the stream is cut into chunks.
// Each parser reads the stream whole, then cut into chunks; the events, the error, the last event
// id and the retry delay must not depend on where the chunks end. Every dispatched event must fit
// the limits. The mcp parser also reads the stream with a restart() (a reconnection) half way.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../plugins/mcp/sse_parser.h"
#include "../../plugins/rest/sse_parser.h"
#include "fuzz_support.h"

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

template <class Event>
void record(const std::vector<Event>& events, Outcome& out) {
    for (const Event& e : events) {
        out.events.push_back(e.type + '\0' + e.data + '\0' + e.id);
    }
}

constexpr std::size_t kRestLines[] = {8, 40, 300, std::size_t{1024} * 1024};
constexpr std::size_t kRestEvents[] = {16, 30, 1000, std::size_t{1024} * 1024};
constexpr std::size_t kMcpEvents[] = {4, 50, 2000, std::size_t{4} * 1024 * 1024};

/// Feeds `stream` to `parser` whole, or in the chunks `chunking` picks; a parser that fails must
/// say so in error() and refuse anything fed after. `who` names the parser in a finding.
template <typename Parser, typename Event>
void feedAll(Parser& parser, std::vector<Event>& events, std::string_view stream,
             std::optional<std::uint32_t> chunking, std::string_view who) {
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
            crank::fuzz::fail(std::string(who) + ": feed() and error() disagree");
        }
        if (!ok) {
            if (parser.feed("data: x\n\n", events)) {
                crank::fuzz::fail(std::string(who) + ": feeds after an error");
            }
            return;
        }
    }
}

Outcome readRest(std::string_view stream, const crank::rest::SseLimits& limits,
                 std::optional<std::uint32_t> chunking) {
    crank::rest::SseParser parser(limits);
    std::vector<crank::rest::SseEvent> events;
    feedAll(parser, events, stream, chunking, "rest");
    parser.finish();
    for (const auto& e : events) {
        check(!e.type.empty(), "rest: an event without a type");
        check(e.data.size() < limits.max_event_bytes, "rest: an event over max_event_bytes");
    }
    Outcome out;
    record(events, out);
    out.error = parser.error();
    out.last_id = parser.lastEventId();
    out.retry = parser.retryMs();
    return out;
}

Outcome readMcp(std::string_view stream, std::size_t max_event_bytes,
                std::optional<std::uint32_t> chunking) {
    crank::mcpc::SseParser parser(max_event_bytes);
    std::vector<crank::mcpc::SseEvent> events;
    feedAll(parser, events, stream, chunking, "mcp");
    check(parser.eventsEnded() >= events.size(), "mcp: more events than ends");
    for (const auto& e : events) {
        check(!e.data.empty(), "mcp: an event without data");
        check(e.data.size() <= max_event_bytes, "mcp: an event over max_event_bytes");
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

    const crank::rest::SseLimits limits{kRestLines[limit], kRestEvents[limit]};
    const Outcome rest_whole = readRest(stream, limits, std::nullopt);
    const Outcome rest_cut = readRest(stream, limits, seed);
    check(rest_whole == rest_cut, "rest: the outcome depends on the chunks");

    const std::size_t max_event = kMcpEvents[limit];
    const Outcome mcp_whole = readMcp(stream, max_event, std::nullopt);
    const Outcome mcp_cut = readMcp(stream, max_event, seed);
    check(mcp_whole == mcp_cut, "mcp: the outcome depends on the chunks");

    // A reconnection half way: the second connection's stream starts afresh (a byte order mark
    // again, a partial line dropped); the last event id survives.
    crank::mcpc::SseParser parser(max_event);
    std::vector<crank::mcpc::SseEvent> events;
    const std::size_t half = stream.size() / 2;
    (void)parser.feed(stream.substr(0, half), events);
    const std::string id_before = parser.lastEventId();
    parser.restart();
    check(parser.error().empty() && parser.lastEventId() == id_before,
          "mcp: restart() lost the last event id or kept the error");
    (void)parser.feed(stream.substr(half), events);
    return 0;
}
