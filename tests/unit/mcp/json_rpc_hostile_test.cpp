// Bodies that are not JSON, or are hostile JSON: always one -32700 (or -32600) error, never a
// crash, never unbounded time, stack or memory.

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "json_rpc_test_support.h"
#include "mcp/wire/json_rpc.h"

namespace crank::mcp::test {
namespace {

using namespace std::string_literals;

/// The -32700 message of a body that is not valid JSON.
std::string parseErrorOf(std::string_view body, const JsonRpcLimits& limits = {}) {
    const JsonRpcRejection r = fatalError(body, limits);
    EXPECT_EQ(r.code, kParseError);
    return r.message;
}

constexpr std::string_view kValid =
    R"({"jsonrpc":"2.0","id":"r-1","method":"tools/call","params":{"name":"echo",)"
    R"("arguments":{"text":"h\u00e9llo \"x\"","n":[1,-2.5e3,true,false,null],"o":{}}}})";

TEST(JsonRpcHostileTest, TheReferenceMessageIsValid) {
    const JsonRpcMessage m = onlyMessage(kValid);
    EXPECT_EQ(m.kind, JsonRpcKind::request);
    EXPECT_EQ(m.params_json,
              R"({"name":"echo","arguments":{"text":"h\u00e9llo \"x\"","n":[1,-2.5e3,true,)"
              R"(false,null],"o":{}}})");
}

TEST(JsonRpcHostileTest, EveryTruncationIsAParseError) {
    for (std::size_t n = 0; n < kValid.size(); ++n) {
        SCOPED_TRACE("first " + std::to_string(n) + " bytes");
        const ParsedBody parsed = parseJsonRpcBody(kValid.substr(0, n));
        ASSERT_TRUE(parsed.fatal.has_value()) << summary(parsed);
        EXPECT_EQ(parsed.fatal->code, kParseError);
        EXPECT_TRUE(parsed.entries.empty());
    }
}

TEST(JsonRpcHostileTest, EveryTruncationInsideAUtf8SequenceIsAParseError) {
    // Raw (unescaped) 2-, 3- and 4-byte characters: cut anywhere, a sequence's missing
    // continuation bytes are never read past the end of the text (the sanitizer builds check).
    const std::string body =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"t\":"
        "\"\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80\"}}";
    ASSERT_FALSE(parseJsonRpcBody(body).fatal) << summary(parseJsonRpcBody(body));
    for (std::size_t n = 0; n < body.size(); ++n) {
        SCOPED_TRACE("first " + std::to_string(n) + " bytes");
        EXPECT_EQ(fatalError(std::string_view(body).substr(0, n)).code, kParseError);
    }
    // Short texts too (a string's inline buffer), a lead byte last.
    for (const char* text : {"\"\xF1", "\"\xE6\x97", "{\"\xF0\x9F\x98", "[\"\xC3"}) {
        EXPECT_EQ(fatalError(text).code, kParseError) << text;
    }
}

TEST(JsonRpcHostileTest, ABodyPastTheScratchSizeIsReadAlike) {
    // Past 1 MiB the text is read where it lies, not from a scratch copy: the same answers.
    const std::string text(3 << 19, 'a');
    const std::string body = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":)"
                             R"({"name":"echo","arguments":{"t":")" +
                             text + "\\u00e9\xC3\xA9\"}}}";
    const JsonRpcMessage m = onlyMessage(body);
    EXPECT_EQ(m.method, "tools/call");
    EXPECT_EQ(m.params_json.size(), body.size() - body.find(R"({"name")") - 1);
    EXPECT_EQ(fatalError(std::string_view(body).substr(0, body.size() - 5)).code, kParseError);
    EXPECT_EQ(fatalError(std::string_view(body).substr(0, body.size() - 4)).code, kParseError);
}

TEST(JsonRpcHostileTest, EveryTruncatedBatchIsAParseError) {
    const std::string batch = "[" + std::string(kValid) + "," + std::string(kValid) + "]";
    for (std::size_t n = 0; n < batch.size(); ++n) {
        SCOPED_TRACE("first " + std::to_string(n) + " bytes");
        EXPECT_EQ(fatalError(std::string_view(batch).substr(0, n)).code, kParseError);
    }
}

TEST(JsonRpcHostileTest, EmptyAndBlankBodies) {
    EXPECT_EQ(parseErrorOf(""), "invalid JSON at byte 0: The document is empty.");
    EXPECT_EQ(parseErrorOf(" \r\n\t"), "invalid JSON at byte 4: The document is empty.");
}

TEST(JsonRpcHostileTest, SyntaxErrorsSayWhere) {
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0" "id":1})"),
              "invalid JSON at byte 17: Missing a comma or '}' after an object member.");
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0","id":1,})"),
              "invalid JSON at byte 24: Missing a name for object member.");
    EXPECT_EQ(parseErrorOf(R"([{"jsonrpc":"2.0","id":1,"method":"m"},])"),
              "invalid JSON at byte 39: Invalid value.");
    EXPECT_EQ(parseErrorOf("{} x"),
              "invalid JSON at byte 3: The document root must not be followed by other values.");
    EXPECT_EQ(parseErrorOf("{}{}"),
              "invalid JSON at byte 2: The document root must not be followed by other values.");
}

TEST(JsonRpcHostileTest, NotStrictJsonIsRefused) {
    EXPECT_EQ(fatalError(R"({"jsonrpc":"2.0", /* c */ "id":1,"method":"m"})").code, kParseError);
    EXPECT_EQ(fatalError("// c\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}").code,
              kParseError);
    EXPECT_EQ(fatalError(R"({'jsonrpc':'2.0'})").code, kParseError);
    EXPECT_EQ(fatalError(R"({"jsonrpc":"2.0","id":NaN,"method":"m"})").code, kParseError);
    EXPECT_EQ(fatalError(R"({"jsonrpc":"2.0","id":Infinity,"method":"m"})").code, kParseError);
    EXPECT_EQ(fatalError(R"({"jsonrpc":"2.0","id":01,"method":"m"})").code, kParseError);
    EXPECT_EQ(fatalError(R"({"jsonrpc":"2.0","id":+1,"method":"m"})").code, kParseError);
    EXPECT_EQ(fatalError("\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}").code,
              kParseError);
    EXPECT_EQ(fatalError("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\tb\"}").code, kParseError);
}

TEST(JsonRpcHostileTest, NumbersTooLargeForADoubleAreAParseError) {
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1e400}})"),
              "invalid JSON at byte 51: Number too big to be stored in double.");
}

TEST(JsonRpcHostileTest, InvalidUtf8IsAParseError) {
    const auto body = [](const std::string& method) {
        return R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"("})";
    };
    // The offset is the bad byte's; the method name starts at byte 34.
    EXPECT_EQ(parseErrorOf(body("\xff")), "invalid JSON at byte 34: Invalid encoding in string.");
    EXPECT_EQ(parseErrorOf(body("a\xc0\xaf")),  // overlong '/'
              "invalid JSON at byte 35: Invalid encoding in string.");
    EXPECT_EQ(fatalError(body("\xe2\x82")).code, kParseError);          // cut sequence
    EXPECT_EQ(fatalError(body("\xed\xa0\x80")).code, kParseError);      // UTF-16 surrogate
    EXPECT_EQ(fatalError(body("\xf4\x90\x80\x80")).code, kParseError);  // beyond U+10FFFF
    EXPECT_EQ(fatalError(body("\x80")).code, kParseError);              // lone continuation
    // In a member name, and deep inside params.
    EXPECT_EQ(fatalError("{\"jsonrpc\":\"2.0\",\"\xff\":1}").code, kParseError);
    EXPECT_EQ(
        fatalError("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":[\"\xfe\"]}}")
            .code,
        kParseError);
    // Valid UTF-8 of every length passes.
    EXPECT_EQ(onlyMessage(body("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80")).method,
              "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}

TEST(JsonRpcHostileTest, LoneSurrogateEscapesAreAParseError) {
    // A lone low surrogate would decode to bytes that are not UTF-8; a lone high one the reader
    // refuses itself.
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"\udc00"})"),
              "invalid JSON at byte 33: a \\u escape encodes a lone UTF-16 surrogate");
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0","id":"a\udfffb","method":"m"})"),
              "invalid JSON at byte 22: a \\u escape encodes a lone UTF-16 surrogate");
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"k":["\udc00"]}})"),
              "invalid JSON at byte 52: a \\u escape encodes a lone UTF-16 surrogate");
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"\udc00":1}})"),
              "invalid JSON at byte 47: a \\u escape encodes a lone UTF-16 surrogate");
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"\ud800"})"),
              "invalid JSON at byte 34: The surrogate pair in string is invalid.");
    // The code points around the surrogates, and a proper pair, pass.
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":1,"method":"\ud7ff\ue000\ud800\udc00"})").method,
              "\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80");
}

TEST(JsonRpcHostileTest, NulBytesAreAParseError) {
    const std::string valid = R"({"jsonrpc":"2.0","id":1,"method":"m"})";
    EXPECT_EQ(parseErrorOf(valid + "\0garbage"s),
              "invalid JSON at byte 37: a NUL byte is not allowed");
    EXPECT_EQ(parseErrorOf(valid + "\0"s), "invalid JSON at byte 37: a NUL byte is not allowed");
    EXPECT_EQ(parseErrorOf("\0"s), "invalid JSON at byte 0: a NUL byte is not allowed");
    EXPECT_EQ(parseErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"m)"s + "\0"s + R"("})"),
              "invalid JSON at byte 35: a NUL byte is not allowed");
    EXPECT_EQ(parseErrorOf("[" + valid + ",\0"s + valid + "]"),
              "invalid JSON at byte 39: a NUL byte is not allowed");
}

TEST(JsonRpcHostileTest, DeepArraysStopAtTheLimit) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(parseErrorOf(std::string(100'000, '[')),
              "invalid JSON at byte 64: nesting deeper than 64 levels");
    EXPECT_EQ(parseErrorOf(std::string(100'000, '[') + std::string(100'000, ']')),
              "invalid JSON at byte 64: nesting deeper than 64 levels");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(JsonRpcHostileTest, DeepObjectsStopAtTheLimit) {
    std::string body;
    for (int i = 0; i < 100'000; ++i) {
        body += R"({"a":)";
    }
    EXPECT_EQ(parseErrorOf(body), "invalid JSON at byte 320: nesting deeper than 64 levels");
}

TEST(JsonRpcHostileTest, DeepParamsInsideAValidMessageStopAtTheLimit) {
    std::string body = R"({"jsonrpc":"2.0","id":1,"method":"m","params":)";
    for (int i = 0; i < 100'000; ++i) {
        body += R"({"a":[)";
    }
    const JsonRpcRejection r = fatalError(body);
    EXPECT_EQ(r.code, kParseError);
    EXPECT_EQ(r.message, "invalid JSON at byte 237: nesting deeper than 64 levels");
}

/// A request whose params nest `depth` levels (params itself is one), so the body is depth + 1.
std::string requestNested(std::size_t depth) {
    std::string params;
    for (std::size_t i = 1; i < depth; ++i) {
        params += (i % 2 == 0) ? "[" : R"({"k":)";
    }
    params += "{}";
    for (std::size_t i = depth - 1; i >= 1; --i) {
        params += (i % 2 == 0) ? "]" : "}";
    }
    return R"({"jsonrpc":"2.0","id":1,"method":"m","params":)" + params + "}";
}

TEST(JsonRpcHostileTest, NestingExactlyAtTheLimitIsFine) {
    const JsonRpcMessage m = onlyMessage(requestNested(63));
    EXPECT_EQ(m.kind, JsonRpcKind::request);
    EXPECT_EQ(m.params_json.size(), requestNested(63).size() - 47);
    EXPECT_EQ(fatalError(requestNested(64)).message,
              "invalid JSON at byte 237: nesting deeper than 64 levels");
}

TEST(JsonRpcHostileTest, NestingLimitIsConfigurableAndCountsTheBatch) {
    JsonRpcLimits limits;
    limits.max_depth = 3;
    const std::string message = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}})";
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{}}})", limits)
                  .params_json,
              R"({"a":{}})");
    EXPECT_EQ(
        parseErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":[]}}})", limits),
        "invalid JSON at byte 56: nesting deeper than 3 levels");
    EXPECT_FALSE(parseJsonRpcBody("[" + message + "]", limits).fatal.has_value());
    EXPECT_EQ(parseErrorOf("[[" + message + "]]", limits),
              "invalid JSON at byte 48: nesting deeper than 3 levels");
}

TEST(JsonRpcHostileTest, HugeStringsParse) {
    const std::string big(std::size_t{10} * 1024 * 1024, 'x');
    const std::string params = R"({"arguments":{"text":")" + big + R"("}})";
    const JsonRpcMessage m =
        onlyMessage(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":)" + params + "}");
    EXPECT_EQ(m.kind, JsonRpcKind::request);
    EXPECT_EQ(m.params_json.size(), params.size());
    EXPECT_TRUE(m.params_json == params);

    // A huge string id is refused (ids are bounded), without reading it into a message.
    const JsonRpcRejection r = onlyRejection(makeResult(RequestId(big), "{}"));
    EXPECT_FALSE(r.id.has_value());
    EXPECT_NE(r.message.find("at most 256 bytes"), std::string::npos) << r.message;
    const std::string longest(RequestId::kMaxStringBytes, 'x');
    const JsonRpcMessage kept = onlyMessage(makeResult(RequestId(longest), "{}"));
    ASSERT_TRUE(kept.id.has_value());
    EXPECT_EQ(kept.id->toString(), "\"" + std::string(64, 'x') + "\"...");
}

TEST(JsonRpcHostileTest, ManyMembersAndLongNames) {
    std::string params = "{";
    for (int i = 0; i < 50'000; ++i) {
        params += (i == 0 ? "\"" : ",\"") + std::to_string(i) + "\":" + std::to_string(i);
    }
    params += ",\"" + std::string(100'000, 'k') + "\":1}";
    const JsonRpcMessage m =
        onlyMessage(R"({"jsonrpc":"2.0","id":1,"method":"m","params":)" + params + "}");
    EXPECT_TRUE(m.params_json == params);

    const JsonRpcRejection r = onlyRejection(R"({"jsonrpc":"2.0","id":1,"method":"m","params":)" +
                                             params.substr(0, params.size() - 1) + ",\"777\":0}}");
    EXPECT_EQ(r.message, R"(duplicate member "777" inside "params")");
}

TEST(JsonRpcHostileTest, LongMemberNamesAreCutInMessages) {
    const std::string name(1000, 'n');
    const JsonRpcRejection r = onlyRejection(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{")" +
                                             name + R"(":1,")" + name + R"(":2}})");
    EXPECT_EQ(r.message,
              R"(duplicate member ")" + std::string(40, 'n') + R"("... inside "params")");
}

}  // namespace
}  // namespace crank::mcp::test
