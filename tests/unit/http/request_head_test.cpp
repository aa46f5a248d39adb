// scanRequestHead: where a head ends, and the framings refused before Poco parses the head.

#include "http/request_head.h"

#include <string>

#include <gtest/gtest.h>

namespace crank::http {
namespace {

constexpr std::size_t kMax = 4096;

RequestHead scan(const std::string& bytes, std::size_t max = kMax) {
    return scanRequestHead(bytes, max);
}

TEST(RequestHead, AHeadEndsAtItsBlankLineAndTheBodyIsNotPartOfIt) {
    const std::string head = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n";
    const RequestHead h = scan(head + "hello");
    ASSERT_EQ(h.state, HeadState::complete);
    EXPECT_EQ(h.head_bytes, head.size());
    ASSERT_TRUE(h.content_length);
    EXPECT_EQ(*h.content_length, 5u);
    EXPECT_FALSE(h.chunked);
    EXPECT_FALSE(h.expects_continue);
}

TEST(RequestHead, EveryPrefixOfAHeadIsIncomplete) {
    const std::string head = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    std::size_t hint = 0;
    for (std::size_t n = 0; n < head.size(); ++n) {
        const RequestHead h = scanRequestHead(head.substr(0, n), kMax, hint);
        ASSERT_EQ(h.state, HeadState::incomplete) << n;
        hint = n;
    }
    const RequestHead h = scanRequestHead(head, kMax, hint);
    ASSERT_EQ(h.state, HeadState::complete);
    EXPECT_EQ(h.head_bytes, head.size());
}

TEST(RequestHead, BareLineFeedsEndAHeadAsPocoAccepts) {
    const RequestHead h = scan("GET / HTTP/1.1\nHost: x\n\nrest");
    ASSERT_EQ(h.state, HeadState::complete);
    EXPECT_EQ(h.head_bytes, std::string("GET / HTTP/1.1\nHost: x\n\n").size());
}

TEST(RequestHead, EmptyLinesBeforeTheRequestLineAreSkippedButCounted) {
    const RequestHead waiting = scan("\r\n\r\n\r\n");
    EXPECT_EQ(waiting.state, HeadState::incomplete);
    const std::string bytes = "\r\n\r\nGET / HTTP/1.1\r\n\r\n";
    const RequestHead h = scan(bytes);
    ASSERT_EQ(h.state, HeadState::complete);
    EXPECT_EQ(h.head_bytes, bytes.size());
    EXPECT_EQ(scan(std::string(kMax, '\n')).state, HeadState::too_large);
}

TEST(RequestHead, AHeadBeyondTheBoundIsTooLargeWithStatus431) {
    const std::string big = "GET / HTTP/1.1\r\nX: " + std::string(kMax, 'a');
    const RequestHead h = scan(big);
    EXPECT_EQ(h.state, HeadState::too_large);
    EXPECT_EQ(h.status, 431);
    EXPECT_NE(h.error.find("server.max_request_head_bytes"), std::string::npos) << h.error;
    // Complete, but past the bound: still too large.
    EXPECT_EQ(scan(big + "\r\n\r\n").state, HeadState::too_large);
    // Exactly at the bound is fine.
    const std::string exact = "GET / HTTP/1.1\r\n\r\n";
    EXPECT_EQ(scan(exact, exact.size()).state, HeadState::complete);
}

TEST(RequestHead, ContentLengthWithTransferEncodingIsRefused) {
    for (const std::string fields : {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                                     "transfer-encoding: chunked\r\ncontent-length: 0\r\n"}) {
        const RequestHead h = scan("POST / HTTP/1.1\r\n" + fields + "\r\n");
        EXPECT_EQ(h.state, HeadState::invalid) << fields;
        EXPECT_EQ(h.status, 400);
        EXPECT_NE(h.error.find("both Content-Length and Transfer-Encoding"), std::string::npos);
    }
}

TEST(RequestHead, OnlyAChunkedTransferEncodingAloneIsAccepted) {
    const RequestHead chunked = scan("POST / HTTP/1.1\r\nTransfer-Encoding:  Chunked \r\n\r\n");
    ASSERT_EQ(chunked.state, HeadState::complete);
    EXPECT_TRUE(chunked.chunked);
    for (const std::string value : {"gzip", "chunked, gzip", "gzip, chunked", "chunked, chunked"}) {
        const RequestHead h = scan("POST / HTTP/1.1\r\nTransfer-Encoding: " + value + "\r\n\r\n");
        EXPECT_EQ(h.state, HeadState::invalid) << value;
        EXPECT_EQ(h.status, 501) << value;
    }
    const RequestHead twoFields =
        scan("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n");
    EXPECT_EQ(twoFields.state, HeadState::invalid);
}

TEST(RequestHead, ContentLengthMustBeOneDecimalNumber) {
    for (const std::string value :
         {"-1", "abc", "1 2", "0x10", "", "99999999999999999999999", "5, 6", "+5"}) {
        const RequestHead h = scan("POST / HTTP/1.1\r\nContent-Length: " + value + "\r\n\r\n");
        EXPECT_EQ(h.state, HeadState::invalid) << value;
        EXPECT_EQ(h.status, 400) << value;
    }
    const RequestHead differing =
        scan("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n");
    EXPECT_EQ(differing.state, HeadState::invalid);
    const RequestHead same = scan("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n");
    ASSERT_EQ(same.state, HeadState::complete);
    EXPECT_EQ(*same.content_length, 5u);
}

TEST(RequestHead, AFoldedHeaderLineIsRefused) {
    const RequestHead h = scan("GET / HTTP/1.1\r\nX-A: 1\r\n  continued\r\n\r\n");
    EXPECT_EQ(h.state, HeadState::invalid);
    EXPECT_EQ(h.status, 400);
}

TEST(RequestHead, ExpectContinueIsNoticed) {
    const RequestHead h =
        scan("POST / HTTP/1.1\r\nExpect: 100-Continue\r\nContent-Length: 9\r\n\r\n");
    ASSERT_EQ(h.state, HeadState::complete);
    EXPECT_TRUE(h.expects_continue);
}

TEST(RequestHead, HostileBytesNeverCrashAndNeverCompleteBeyondTheBound) {
    std::string bytes;
    for (int i = 0; i < 20000; ++i) {
        bytes += static_cast<char>((i * 131 + 7) % 256);
    }
    for (std::size_t n = 0; n < bytes.size(); n += 97) {
        const RequestHead h = scanRequestHead(std::string_view(bytes).substr(0, n), kMax);
        if (h.state == HeadState::complete) {
            EXPECT_LE(h.head_bytes, kMax);
            EXPECT_LE(h.head_bytes, n);
        }
    }
    const std::string nuls(100, '\0');
    EXPECT_EQ(scan(nuls + "\r\n\r\n").state, HeadState::complete);  // Poco refuses it later
}

}  // namespace
}  // namespace crank::http
