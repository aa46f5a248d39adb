// Header values as the client sent them, where Poco's RFC 2047 decoding would change them.

#include "http/raw_header_values.h"

#include <sstream>
#include <string>
#include <vector>

#include <Poco/Net/MessageHeader.h>
#include <gtest/gtest.h>

namespace crank::http {
namespace {

/// What Poco reads of `head` (the request line skipped), then put back as it was.
Poco::Net::MessageHeader parsedAndRestored(const std::string& head, bool restore = true) {
    std::istringstream in(head.substr(head.find('\n') + 1));
    Poco::Net::MessageHeader parsed;
    parsed.read(in);
    if (restore) {
        const auto kept = headToRestore(head);
        if (kept) {
            restoreRawValues(*kept, parsed);
        }
    }
    return parsed;
}

TEST(RawHeaderValuesTest, PocoChangesEncodedWordsAndTheyAreRestored) {
    const std::string head =
        "POST /mcp HTTP/1.1\r\n"
        "Host: 127.0.0.1\r\n"
        "Mcp-Param-Region: =?base64?ZXU=?=\r\n"
        "Mcp-Name: =?utf-8?B?SGk=?=\r\n"
        "X-Plain: a=?b\r\n"
        "Content-Length: 2\r\n"
        "\r\n";
    // Without the fix Poco's values are not the client's.
    const auto poco = parsedAndRestored(head, false);
    EXPECT_NE(poco.get("Mcp-Param-Region"), "=?base64?ZXU=?=");
    EXPECT_EQ(poco.get("Mcp-Name"), "Hi");
    EXPECT_NE(poco.get("X-Plain"), "a=?b");

    const auto restored = parsedAndRestored(head);
    EXPECT_EQ(restored.get("Mcp-Param-Region"), "=?base64?ZXU=?=");
    EXPECT_EQ(restored.get("mcp-name"), "=?utf-8?B?SGk=?=");
    EXPECT_EQ(restored.get("X-Plain"), "a=?b");
    EXPECT_EQ(restored.get("Host"), "127.0.0.1");
    EXPECT_EQ(restored.get("Content-Length"), "2");
}

TEST(RawHeaderValuesTest, RepeatedFieldsKeepTheirOrderAndCount) {
    const std::string head =
        "POST /mcp HTTP/1.1\n"
        "Mcp-Method: =?a?b?c?=\n"
        "Other: x\n"
        "mcp-method: \t second\n"
        "\n";
    const auto restored = parsedAndRestored(head);
    std::vector<std::string> values;
    for (const auto& [name, value] : restored) {
        if (name == "Mcp-Method" || name == "mcp-method") {
            values.push_back(value);
        }
    }
    EXPECT_EQ(values, (std::vector<std::string>{"=?a?b?c?=", "second"}));
    EXPECT_EQ(restored.get("Other"), "x");
}

TEST(RawHeaderValuesTest, OnlyCompleteHeadsWithEncodedWordsAreKept) {
    EXPECT_FALSE(headToRestore("POST / HTTP/1.1\r\nHost: a\r\n\r\n{\"x\":\"=?\"}"));
    EXPECT_FALSE(headToRestore("POST / HTTP/1.1\r\nX: =?a?b?c?=\r\n"));  // not ended yet
    const auto kept = headToRestore("POST / HTTP/1.1\r\nX: =?a?b?c?=\r\n\r\nbody");
    ASSERT_TRUE(kept);
    EXPECT_EQ(*kept, "POST / HTTP/1.1\r\nX: =?a?b?c?=\r\n\r\n");
    // A colon in the request line is not a field; leading empty lines are skipped.
    Poco::Net::MessageHeader parsed;
    parsed.add("X", "mangled");
    restoreRawValues("\r\nGET http://h:1/=?x HTTP/1.1\r\nX: =?q\r\n\r\n", parsed);
    EXPECT_EQ(parsed.get("X"), "=?q");
    EXPECT_FALSE(parsed.has("GET http"));
}

}  // namespace
}  // namespace crank::http
