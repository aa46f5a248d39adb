#include "http/sse_event.h"

#include <string>

#include <gtest/gtest.h>

namespace crank::http {
namespace {

TEST(SseEvent, SingleLineWithIdAndType) {
    EXPECT_EQ(formatSseEvent("7", "message", R"({"jsonrpc":"2.0"})"),
              "id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\"}\n\n");
}

TEST(SseEvent, NoTypeMeansNoEventLine) {
    EXPECT_EQ(formatSseEvent("s1-4", "", "x"), "id: s1-4\ndata: x\n\n");
}

TEST(SseEvent, NoIdMeansNoIdLine) {
    EXPECT_EQ(formatSseEvent("", "", "x"), "data: x\n\n");
}

TEST(SseEvent, EveryKindOfLineBreakStartsADataLine) {
    EXPECT_EQ(formatSseEvent("1", "", "a\nb"), "id: 1\ndata: a\ndata: b\n\n");
    EXPECT_EQ(formatSseEvent("1", "", "a\r\nb"), "id: 1\ndata: a\ndata: b\n\n");
    EXPECT_EQ(formatSseEvent("1", "", "a\rb"), "id: 1\ndata: a\ndata: b\n\n");
    EXPECT_EQ(formatSseEvent("1", "", "a\r\n\r\nb\n\rc"),
              "id: 1\ndata: a\ndata:\ndata: b\ndata:\ndata: c\n\n");
}

TEST(SseEvent, LeadingAndTrailingBreaksKeepTheirEmptyLines) {
    // A client joins data lines with "\n", so "\nx\n" comes back as "\nx\n".
    EXPECT_EQ(formatSseEvent("1", "", "\nx\n"), "id: 1\ndata:\ndata: x\ndata:\n\n");
    EXPECT_EQ(formatSseEvent("1", "", "\r\n"), "id: 1\ndata:\ndata:\n\n");
}

TEST(SseEvent, EmptyDataIsTheMcpPrimingEvent) {
    EXPECT_EQ(formatSseEvent("stream-3:0", "", ""), "id: stream-3:0\ndata:\n\n");
}

TEST(SseEvent, RetryComesBeforeData) {
    EXPECT_EQ(formatSseEvent("9", "", "", 3000), "id: 9\nretry: 3000\ndata:\n\n");
    EXPECT_EQ(formatSseEvent("9", "message", "x", 0),
              "id: 9\nevent: message\nretry: 0\ndata: x\n\n");
}

TEST(SseEvent, NegativeRetryIsLeftOut) {
    EXPECT_EQ(formatSseEvent("9", "", "x", -1), "id: 9\ndata: x\n\n");
}

TEST(SseEvent, ForbiddenCharactersAreRemovedFromIdAndType) {
    const std::string nul("a\0b", 3);
    EXPECT_EQ(formatSseEvent("1\r\nevent: evil", "", "x"), "id: 1event: evil\ndata: x\n\n");
    EXPECT_EQ(formatSseEvent(nul, "", "x"), "id: ab\ndata: x\n\n");
    EXPECT_EQ(formatSseEvent("1", "msg\ndata: injected", "x"),
              "id: 1\nevent: msgdata: injected\ndata: x\n\n");
    // Nothing left: the field is left out (an empty "id:" would reset the client's cursor).
    EXPECT_EQ(formatSseEvent("\r\n", "\n", "x"), "data: x\n\n");
}

TEST(SseEvent, DataIsKeptByteForByteWithinALine) {
    const std::string data = "  spaced: {\"k\": \"v\"}\t";
    EXPECT_EQ(formatSseEvent("1", "", data), "id: 1\ndata: " + data + "\n\n");
}

TEST(SseComment, Format) {
    EXPECT_EQ(formatSseComment("ping"), ": ping\n\n");
    EXPECT_EQ(formatSseComment(""), ":\n\n");
    EXPECT_EQ(formatSseComment("a\nb"), ": a\n: b\n\n");
}

TEST(LastEventId, TrimsSpacesAndTabs) {
    EXPECT_EQ(parseLastEventId("abc"), "abc");
    EXPECT_EQ(parseLastEventId("  s1:42\t "), "s1:42");
    EXPECT_EQ(parseLastEventId("a b"), "a b");
}

TEST(LastEventId, BlankIsNoId) {
    EXPECT_EQ(parseLastEventId(""), std::nullopt);
    EXPECT_EQ(parseLastEventId(" \t "), std::nullopt);
}

TEST(LastEventId, LengthIsBounded) {
    const std::string longest(kMaxLastEventIdLength, 'x');
    EXPECT_EQ(parseLastEventId(longest), longest);
    EXPECT_EQ(parseLastEventId("  " + longest + "  "), longest);
    EXPECT_EQ(parseLastEventId(longest + "x"), std::nullopt);
    EXPECT_EQ(parseLastEventId(std::string(100000, 'y')), std::nullopt);
}

TEST(LastEventId, ControlCharactersAreRejected) {
    EXPECT_EQ(parseLastEventId("a\nb"), std::nullopt);
    EXPECT_EQ(parseLastEventId("a\rb"), std::nullopt);
    EXPECT_EQ(parseLastEventId(std::string("a\0b", 3)), std::nullopt);
    EXPECT_EQ(parseLastEventId("a\x7f"), std::nullopt);
    EXPECT_EQ(parseLastEventId("a\x01"), std::nullopt);
}

TEST(LastEventId, NonAsciiIsKept) {
    EXPECT_EQ(parseLastEventId("caf\xc3\xa9"), "caf\xc3\xa9");
}

}  // namespace
}  // namespace crank::http
