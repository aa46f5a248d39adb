#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <crank/sdk/http/sse.hpp>

namespace crank::sdk::http {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

/// "type|data|id" per event, for compact expectations.
std::vector<std::string> render(const std::vector<SseEvent>& events) {
    std::vector<std::string> out;
    for (const SseEvent& e : events) {
        out.push_back(e.type + "|" + e.data + "|" + e.id);
    }
    return out;
}

std::vector<std::string> parseAll(std::string_view stream, SseLimits limits = {}) {
    SseParser parser(limits);
    std::vector<SseEvent> events;
    EXPECT_TRUE(parser.feed(stream, events)) << parser.error();
    parser.finish();
    return render(events);
}

/// The same stream fed one byte at a time must give the same events.
std::vector<std::string> parseBytewise(std::string_view stream) {
    SseParser parser;
    std::vector<SseEvent> events;
    for (const char c : stream) {
        EXPECT_TRUE(parser.feed(std::string_view(&c, 1), events)) << parser.error();
    }
    parser.finish();
    return render(events);
}

TEST(SseParser, EventsFieldsAndDefaults) {
    const std::string stream =
        "data: one\n\n"
        "event: log\ndata: two\nid: 7\n\n"
        "data: three\n\n";
    EXPECT_THAT(parseAll(stream), ElementsAre("message|one|", "log|two|7", "message|three|7"));
    EXPECT_EQ(parseAll(stream), parseBytewise(stream));
}

TEST(SseParser, MultiLineDataIsJoinedWithNewlines) {
    EXPECT_THAT(parseAll("data: {\"a\":\ndata: 1}\n\n"), ElementsAre("message|{\"a\":\n1}|"));
    EXPECT_THAT(parseAll("data\ndata:\n\n"), ElementsAre("message|\n|"));
}

TEST(SseParser, OnlyOneSpaceAfterTheColonIsDropped) {
    EXPECT_THAT(parseAll("data:x\n\ndata:  y\n\n"), ElementsAre("message|x|", "message| y|"));
}

TEST(SseParser, EveryLineEndingAndTheirMixes) {
    const std::string crlf = "event: a\r\ndata: 1\r\n\r\n";
    const std::string cr = "event: a\rdata: 1\r\r";
    const std::string mixed = "event: a\r\ndata: 1\r\n";
    EXPECT_THAT(parseAll(crlf), ElementsAre("a|1|"));
    EXPECT_THAT(parseAll(cr), ElementsAre("a|1|"));
    EXPECT_THAT(parseAll(mixed + "\n"), ElementsAre("a|1|"));
    EXPECT_EQ(parseBytewise(crlf), parseAll(crlf));
    EXPECT_EQ(parseBytewise(cr), parseAll(cr));
}

TEST(SseParser, ACrAtTheEndOfAChunkAndAnLfAtTheStartOfTheNextAreOneLineEnd) {
    SseParser parser;
    std::vector<SseEvent> events;
    ASSERT_TRUE(parser.feed("data: a\r", events));
    ASSERT_TRUE(parser.feed("\ndata: b\r", events));
    ASSERT_TRUE(parser.feed("\n\r", events));
    ASSERT_TRUE(parser.feed("\n", events));  // CRLF: one blank line, not two
    EXPECT_THAT(render(events), ElementsAre("message|a\nb|"));
}

TEST(SseParser, ByteOrderMarkAtTheStartOnly) {
    EXPECT_THAT(parseAll("\xEF\xBB\xBF"
                         "data: x\n\n"),
                ElementsAre("message|x|"));
    EXPECT_EQ(parseBytewise("\xEF\xBB\xBF"
                            "data: x\n\n"),
              parseAll("data: x\n\n"));
    // A second one is text: the field name "\xEF\xBB\xBF" "data" is unknown and ignored.
    EXPECT_THAT(parseAll("\xEF\xBB\xBF\xEF\xBB\xBF"
                         "data: x\n\n"),
                IsEmpty());
    // Half a mark is text too.
    EXPECT_THAT(parseAll("\xEF\xBB"
                         "data: x\n\n"),
                IsEmpty());
}

TEST(SseParser, CommentsAndUnknownFieldsAreIgnored) {
    EXPECT_THAT(parseAll(": keep-alive\n\n:\ndata: x\nfoo: bar\n\n"), ElementsAre("message|x|"));
}

TEST(SseParser, ABlankLineWithoutDataDispatchesNothingAndResetsTheType) {
    EXPECT_THAT(parseAll("event: a\n\ndata: x\n\n"), ElementsAre("message|x|"));
}

TEST(SseParser, IdsAreStickyAndAnIdWithNulIsIgnored) {
    SseParser parser;
    std::vector<SseEvent> events;
    const std::string stream =
        std::string("id: 1\ndata: a\n\nid: 2") + '\0' + "x\ndata: b\n\nid\ndata: c\n\n";
    ASSERT_TRUE(parser.feed(stream, events));
    EXPECT_THAT(render(events), ElementsAre("message|a|1", "message|b|1", "message|c|"));
    EXPECT_EQ(parser.lastEventId(), "");
}

TEST(SseParser, RetryTakesOnlyDigits) {
    SseParser parser;
    std::vector<SseEvent> events;
    ASSERT_TRUE(parser.feed("retry: 1500\n\nretry: 1x\n\nretry: -5\n\nretry:\n\n", events));
    EXPECT_EQ(parser.retryMs(), 1500);
    EXPECT_THAT(events, IsEmpty());
}

TEST(SseParser, AnEventWithoutItsBlankLineIsDroppedAtTheEnd) {
    SseParser parser;
    std::vector<SseEvent> events;
    ASSERT_TRUE(parser.feed("data: complete\n\ndata: partial\n", events));
    parser.finish();
    EXPECT_THAT(render(events), ElementsAre("message|complete|"));
}

TEST(SseParser, ALineLongerThanTheLimitStopsTheParser) {
    SseLimits limits;
    limits.max_line_bytes = 16;
    SseParser parser(limits);
    std::vector<SseEvent> events;
    EXPECT_TRUE(parser.feed("data: short\n\n", events));
    EXPECT_FALSE(parser.feed("data: " + std::string(100, 'x'), events));  // no line end yet
    EXPECT_EQ(parser.error(), "a line of the event stream is longer than 16 bytes");
    EXPECT_FALSE(parser.feed("\n\ndata: more\n\n", events));  // refused after the error
    EXPECT_THAT(render(events), ElementsAre("message|short|"));
}

TEST(SseParser, AnEventLargerThanTheLimitStopsTheParser) {
    SseLimits limits;
    limits.max_event_bytes = 32;
    SseParser parser(limits);
    std::vector<SseEvent> events;
    std::string stream;
    for (int i = 0; i < 10; ++i) {
        stream += "data: 0123456789\n";
    }
    EXPECT_FALSE(parser.feed(stream + "\n", events));
    EXPECT_EQ(parser.error(), "an event of the event stream is larger than 32 bytes");
    EXPECT_THAT(events, IsEmpty());
}

TEST(SseParser, HostileBytesNeverCrashAndChunkingNeverChangesTheResult) {
    // Random bytes biased towards the format's own characters, fed whole and in random chunks.
    std::mt19937 random(42);
    const std::string alphabet = "data:event:id:retry: \r\n\n\n:\xEF\xBB\xBFx\0{}\"";
    for (int round = 0; round < 200; ++round) {
        std::string stream;
        const std::size_t size = random() % 2000;
        for (std::size_t i = 0; i < size; ++i) {
            stream.push_back(random() % 4 == 0 ? static_cast<char>(random() % 256)
                                               : alphabet[random() % alphabet.size()]);
        }
        SseParser whole;
        std::vector<SseEvent> a;
        const bool okWhole = whole.feed(stream, a);
        SseParser chunked;
        std::vector<SseEvent> b;
        bool okChunked = true;
        for (std::size_t i = 0; i < stream.size() && okChunked;) {
            const std::size_t n = std::min<std::size_t>(1 + random() % 17, stream.size() - i);
            okChunked = chunked.feed(std::string_view(stream).substr(i, n), b);
            i += n;
        }
        ASSERT_EQ(okWhole, okChunked) << round;
        ASSERT_EQ(render(a), render(b)) << round;
        EXPECT_EQ(whole.lastEventId(), chunked.lastEventId()) << round;
    }
}

TEST(SseParser, LineEndsFieldsIdsRetryAndARestart) {
    SseParser p(SseLimits::forEvents(1024));
    std::vector<SseEvent> events;
    const std::string stream =
        "\xEF\xBB\xBF"
        "event: a\r\ndata: one\r\ndata:two\r\nid: 1\r\n\r\n"
        ": comment\n\ndata\n\n"
        "id: 2\rretry: 1500\rdata: x\r\r"
        "data: y\nid: 3\n";  // not ended: not dispatched, id 3 not taken
    // Byte by byte: every split is handled.
    for (const char c : stream) {
        ASSERT_TRUE(p.feed(std::string_view(&c, 1), events));
    }
    EXPECT_THAT(render(events), ElementsAre("a|one\ntwo|1", "message||1", "message|x|2"));
    EXPECT_EQ(p.lastEventId(), "2");
    EXPECT_EQ(p.retryMs(), 1500);
    EXPECT_EQ(p.eventsEnded(), 3U);
    // A reconnection continues the stream: the partial event is dropped, the id kept.
    p.restart();
    events.clear();
    ASSERT_TRUE(p.feed("data: z\n\n", events));
    EXPECT_THAT(render(events), ElementsAre("message|z|2"));
}

TEST(SseParser, APrimingEventIsDispatchedWithEmptyDataAndSetsTheId) {
    // MCP's resumable streams start with one; the format dispatches it (its data buffer holds
    // a newline), and a reader of messages skips empty data.
    SseParser p;
    std::vector<SseEvent> events;
    ASSERT_TRUE(p.feed("id: prime-1\nretry: 10\ndata: \n\nid: x\n\n", events));
    EXPECT_THAT(render(events), ElementsAre("message||prime-1"));
    EXPECT_EQ(p.lastEventId(), "x");  // an event without data sets the id too
    EXPECT_EQ(p.retryMs(), 10);
    EXPECT_EQ(p.eventsEnded(), 2U);
}

TEST(SseParser, ARestartClearsAnErrorAndTheLimitsCountJoiningNewlines) {
    SseParser p(SseLimits::forEvents(10));
    std::vector<SseEvent> events;
    EXPECT_FALSE(p.feed("data: 0123456789A\n\n", events));
    EXPECT_EQ(p.error(), "an event of the event stream is larger than 10 bytes");
    EXPECT_FALSE(p.feed("data: x\n\n", events));
    p.restart();
    EXPECT_TRUE(p.feed("data: x\n\n", events));
    EXPECT_THAT(render(events), ElementsAre("message|x|"));
    SseParser split(SseLimits::forEvents(10));
    EXPECT_TRUE(split.feed("data: 01234\n", events));
    EXPECT_FALSE(split.feed("data: 56789\n\n", events));  // 11 bytes with the joining newline
    SseParser exact(SseLimits::forEvents(10));
    EXPECT_TRUE(exact.feed("data: 0123456789\n\n", events));
}

TEST(SseParser, AnIdLongerThanTheLimitIsIgnoredLikeOneWithNul) {
    SseParser p;
    std::vector<SseEvent> events;
    const std::string huge(kMaxEventIdBytes + 1, 'i');
    ASSERT_TRUE(p.feed("id: ok\ndata: a\n\nid: " + huge + "\ndata: b\n\n", events));
    EXPECT_THAT(render(events), ElementsAre("message|a|ok", "message|b|ok"));
    EXPECT_EQ(p.lastEventId(), "ok");
}

}  // namespace
}  // namespace crank::sdk::http
