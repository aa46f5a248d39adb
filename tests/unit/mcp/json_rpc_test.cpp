// Messages that parse, messages that are refused one by one, batches, and the writers.

#include "mcp/wire/json_rpc.h"

#include <cstdint>
#include <limits>
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include "json_rpc_test_support.h"

namespace crank::mcp::test {
namespace {

/// A rejection with id `id` and kInvalidRequest.
void expectRejected(std::string_view body, const std::optional<RequestId>& id,
                    std::string_view message) {
    SCOPED_TRACE(std::string(body));
    const JsonRpcRejection r = onlyRejection(body);
    EXPECT_EQ(r.code, kInvalidRequest);
    EXPECT_EQ(r.id, id);
    EXPECT_EQ(r.message, message);
}

// ---------------------------------------------------------------------------------------------
// Valid messages.

TEST(JsonRpcParseTest, Request) {
    const JsonRpcMessage m =
        onlyMessage(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc"}})");
    EXPECT_EQ(m.kind, JsonRpcKind::request);
    EXPECT_EQ(m.id, RequestId(1));
    EXPECT_EQ(m.method, "tools/list");
    EXPECT_EQ(m.params_json, R"({"cursor":"abc"})");
    EXPECT_EQ(m.result_json, "");
    EXPECT_EQ(m.error.code, 0);
    EXPECT_EQ(m.error.message, "");
}

// Issue 45: ids are kept while their request runs (a listen repeats its id in every
// notification): a string id is bounded, and one beyond the bound is refused naming it.
TEST(JsonRpcParseTest, StringIdsAreBounded) {
    const std::string longest(RequestId::kMaxStringBytes, 'i');
    const JsonRpcMessage m =
        onlyMessage(R"({"jsonrpc":"2.0","id":")" + longest + R"(","method":"tools/list"})");
    EXPECT_EQ(m.id, RequestId(longest));
    // Escapes count as the bytes they decode to: 256 \u0041 are 256 bytes.
    std::string escaped;
    for (std::size_t i = 0; i < RequestId::kMaxStringBytes; ++i) {
        escaped += "\\u0041";
    }
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":")" + escaped + R"(","method":"ping"})").id,
              RequestId(std::string(RequestId::kMaxStringBytes, 'A')));
    for (const std::size_t size : {RequestId::kMaxStringBytes + 1, std::size_t{1} << 20}) {
        expectRejected(
            R"({"jsonrpc":"2.0","id":")" + std::string(size, 'i') + R"(","method":"tools/list"})",
            std::nullopt,
            R"("id" must be a string of at most 256 bytes or an integer, got a )"
            "string of " +
                std::to_string(size) + " bytes");
    }
}

TEST(JsonRpcParseTest, RequestWithoutParamsHasEmptyParams) {
    const JsonRpcMessage m = onlyMessage(R"({"jsonrpc":"2.0","id":"p","method":"ping"})");
    EXPECT_EQ(m.kind, JsonRpcKind::request);
    EXPECT_EQ(m.id, RequestId("p"));
    EXPECT_EQ(m.method, "ping");
    EXPECT_EQ(m.params_json, "");
}

TEST(JsonRpcParseTest, MemberOrderDoesNotMatter) {
    const JsonRpcMessage m = onlyMessage(R"({"params":{},"method":"ping","id":3,"jsonrpc":"2.0"})");
    EXPECT_EQ(m.kind, JsonRpcKind::request);
    EXPECT_EQ(m.id, RequestId(3));
    EXPECT_EQ(m.params_json, "{}");
}

TEST(JsonRpcParseTest, Notification) {
    const JsonRpcMessage m =
        onlyMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    EXPECT_EQ(m.kind, JsonRpcKind::notification);
    EXPECT_FALSE(m.id.has_value());
    EXPECT_EQ(m.method, "notifications/initialized");
    EXPECT_EQ(m.params_json, "");
}

TEST(JsonRpcParseTest, NotificationWithParams) {
    const JsonRpcMessage m = onlyMessage(
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"x"}})");
    EXPECT_EQ(m.kind, JsonRpcKind::notification);
    EXPECT_EQ(m.params_json, R"({"requestId":4,"reason":"x"})");
}

TEST(JsonRpcParseTest, Response) {
    const JsonRpcMessage m =
        onlyMessage(R"({"jsonrpc":"2.0","id":"s-1","result":{"content":[],"isError":false}})");
    EXPECT_EQ(m.kind, JsonRpcKind::response);
    EXPECT_EQ(m.id, RequestId("s-1"));
    EXPECT_EQ(m.result_json, R"({"content":[],"isError":false})");
    EXPECT_EQ(m.method, "");
    EXPECT_EQ(m.params_json, "");
}

TEST(JsonRpcParseTest, ResponseWithScalarResults) {
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":1,"result":null})").result_json, "null");
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":1,"result":"ok"})").result_json, R"("ok")");
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":1,"result":-2.5e3})").result_json, "-2.5e3");
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":1,"result":[ 1, 2 ]})").result_json, "[1,2]");
}

TEST(JsonRpcParseTest, ErrorResponse) {
    const JsonRpcMessage m = onlyMessage(
        R"({"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}})");
    EXPECT_EQ(m.kind, JsonRpcKind::error_response);
    EXPECT_EQ(m.id, RequestId(7));
    EXPECT_EQ(m.error.code, kMethodNotFound);
    EXPECT_EQ(m.error.message, "Method not found");
    EXPECT_EQ(m.error.data_json, R"({"method":"x"})");
    EXPECT_EQ(m.result_json, "");
}

TEST(JsonRpcParseTest, ErrorResponseWithoutData) {
    const JsonRpcMessage m =
        onlyMessage(R"({"jsonrpc":"2.0","id":"a","error":{"message":"boom","code":1}})");
    EXPECT_EQ(m.kind, JsonRpcKind::error_response);
    EXPECT_EQ(m.error.code, 1);
    EXPECT_EQ(m.error.message, "boom");
    EXPECT_EQ(m.error.data_json, "");
}

TEST(JsonRpcParseTest, ErrorResponseDataOfEveryType) {
    const auto data = [](std::string_view json) {
        return onlyMessage(R"({"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m","data":)" +
                           std::string(json) + "}}")
            .error.data_json;
    };
    EXPECT_EQ(data("null"), "null");
    EXPECT_EQ(data(R"("text")"), R"("text")");
    EXPECT_EQ(data("[ 1 , { \"a\" : 2 } ]"), R"([1,{"a":2}])");
    EXPECT_EQ(data("12345678901234567890"), "12345678901234567890");
}

TEST(JsonRpcParseTest, ErrorResponseWithNullOrNoIdHasNoId) {
    const JsonRpcMessage withNull = onlyMessage(
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
    EXPECT_EQ(withNull.kind, JsonRpcKind::error_response);
    EXPECT_FALSE(withNull.id.has_value());
    EXPECT_EQ(withNull.error.code, kParseError);

    const JsonRpcMessage withoutId =
        onlyMessage(R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}})");
    EXPECT_EQ(withoutId.kind, JsonRpcKind::error_response);
    EXPECT_FALSE(withoutId.id.has_value());
}

TEST(JsonRpcParseTest, ErrorCodesWithin64Bits) {
    EXPECT_EQ(onlyMessage(
                  R"({"jsonrpc":"2.0","id":1,"error":{"code":-9223372036854775808,"message":""}})")
                  .error.code,
              std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(
        onlyMessage(R"({"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775807,"message":""}})")
            .error.code,
        std::numeric_limits<std::int64_t>::max());
}

TEST(JsonRpcParseTest, ParamsAreCompactedButNumbersAndEscapesKeptAsWritten) {
    const JsonRpcMessage m = onlyMessage(
        "{ \"jsonrpc\" : \"2.0\" ,\n\t\"id\" : 1 , \"method\" : \"x\" ,\r\n \"params\" : "
        "{ \"a\" : [ 1 , 2 ] , \"s\" : \" a  b \\\" c \\\\\" ,"
        " \"big\" : 12345678901234567890123 , \"f\" : 1.50 , \"e\" : 1E2 , \"z\" : -0 ,"
        " \"u\" : \"\\u00e9\\n\" , \"t\" : true , \"n\" : null } } ");
    EXPECT_EQ(m.params_json,
              R"({"a":[1,2],"s":" a  b \" c \\","big":12345678901234567890123,"f":1.50,"e":1E2,)"
              R"("z":-0,"u":"\u00e9\n","t":true,"n":null})");
}

TEST(JsonRpcParseTest, ParamsMayBeAnArray) {
    const JsonRpcMessage m =
        onlyMessage(R"({"jsonrpc":"2.0","id":1,"method":"sum","params":[1, 2]})");
    EXPECT_EQ(m.kind, JsonRpcKind::request);
    EXPECT_EQ(m.params_json, "[1,2]");
}

TEST(JsonRpcParseTest, OtherMembersAreIgnored) {
    const JsonRpcMessage m = onlyMessage(
        R"({"jsonrpc":"2.0","id":1,"method":"ping","extra":{"deep":[1,{"x":2}]},"_x":null})");
    EXPECT_EQ(m.kind, JsonRpcKind::request);
    EXPECT_EQ(m.method, "ping");
    EXPECT_EQ(m.params_json, "");
}

TEST(JsonRpcParseTest, EscapesInMethodNamesAreDecoded) {
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":1,"method":"tools\/c\u0061ll"})").method,
              "tools/call");
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":1,"method":"\u00e9\ud83d\ude00"})").method,
              "\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT_EQ(onlyMessage("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xc3\xa9\"}").method,
              "\xc3\xa9");
}

TEST(JsonRpcParseTest, JsonrpcMemberMayBeEscaped) {
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2\u002e0","id":1,"method":"ping"})").kind,
              JsonRpcKind::request);
}

// ---------------------------------------------------------------------------------------------
// Ids.

TEST(JsonRpcIdTest, StringIds) {
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":"abc","method":"m"})").id, RequestId("abc"));
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":"","method":"m"})").id, RequestId(""));
    EXPECT_EQ(onlyMessage(R"({"jsonrpc":"2.0","id":"\u0041\n","method":"m"})").id,
              RequestId("A\n"));
}

TEST(JsonRpcIdTest, IntegerIds) {
    const auto idOf = [](std::string_view id) {
        return onlyMessage(R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"method":"m"})").id;
    };
    EXPECT_EQ(idOf("0"), RequestId(0));
    EXPECT_EQ(idOf("-1"), RequestId(-1));
    EXPECT_EQ(idOf("2147483648"), RequestId(2147483648LL));
    EXPECT_EQ(idOf("-2147483649"), RequestId(-2147483649LL));
    EXPECT_EQ(idOf("9223372036854775807"), RequestId(std::numeric_limits<std::int64_t>::max()));
    EXPECT_EQ(idOf("-9223372036854775808"), RequestId(std::numeric_limits<std::int64_t>::min()));
}

TEST(JsonRpcIdTest, StringAndIntegerIdsDiffer) {
    const JsonRpcMessage m = onlyMessage(R"({"jsonrpc":"2.0","id":"1","method":"m"})");
    ASSERT_TRUE(m.id.has_value());
    EXPECT_TRUE(m.id->isString());
    EXPECT_NE(*m.id, RequestId(1));
}

TEST(JsonRpcIdTest, NullIdIsRefused) {
    expectRejected(R"({"jsonrpc":"2.0","id":null,"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer, got null)");
    expectRejected(R"({"jsonrpc":"2.0","id":null,"result":{}})", std::nullopt,
                   R"("id" must be a string or an integer, got null)");
}

TEST(JsonRpcIdTest, FractionalIdsAreRefused) {
    expectRejected(R"({"jsonrpc":"2.0","id":1.5,"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer, got 1.5)");
    expectRejected(R"({"jsonrpc":"2.0","id":1.0,"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer, got 1.0)");
    expectRejected(R"({"jsonrpc":"2.0","id":1e3,"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer, got 1e3)");
    expectRejected(R"({"jsonrpc":"2.0","id":2.5,"result":{}})", std::nullopt,
                   R"("id" must be a string or an integer, got 2.5)");
    expectRejected(R"({"jsonrpc":"2.0","id":-0.5,"error":{"code":1,"message":"m"}})", std::nullopt,
                   R"("id" must be a string or an integer, got -0.5)");
}

TEST(JsonRpcIdTest, IdsBeyond64BitsAreRefused) {
    expectRejected(R"({"jsonrpc":"2.0","id":9223372036854775808,"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer between -9223372036854775808 and )"
                   R"(9223372036854775807, got 9223372036854775808)");
    expectRejected(R"({"jsonrpc":"2.0","id":-9223372036854775809,"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer between -9223372036854775808 and )"
                   R"(9223372036854775807, got -9223372036854775809)");
    expectRejected(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"})",
                   std::nullopt,
                   R"("id" must be a string or an integer between -9223372036854775808 and )"
                   R"(9223372036854775807, got 123456789012345678901234567890)");
}

TEST(JsonRpcIdTest, IdsOfOtherTypesAreRefused) {
    expectRejected(R"({"jsonrpc":"2.0","id":true,"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer, got true)");
    expectRejected(R"({"jsonrpc":"2.0","id":{"a":1},"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer, got an object)");
    expectRejected(R"({"jsonrpc":"2.0","id":[1],"method":"m"})", std::nullopt,
                   R"("id" must be a string or an integer, got an array)");
}

// ---------------------------------------------------------------------------------------------
// Invalid messages: -32600 naming the problem, with the id when it could be read.

TEST(JsonRpcValidationTest, JsonrpcMissing) {
    expectRejected(R"({"id":1,"method":"m"})", RequestId(1),
                   R"("jsonrpc" must be "2.0", but it is missing)");
    expectRejected("{}", std::nullopt, R"("jsonrpc" must be "2.0", but it is missing)");
}

TEST(JsonRpcValidationTest, JsonrpcNot20) {
    expectRejected(R"({"jsonrpc":"1.0","id":1,"method":"m"})", RequestId(1),
                   R"("jsonrpc" must be "2.0", got "1.0")");
    expectRejected(R"({"jsonrpc":2.0,"id":"x","method":"m"})", RequestId("x"),
                   R"("jsonrpc" must be "2.0", got 2.0)");
    expectRejected(R"({"jsonrpc":"2.0 ","id":1,"method":"m"})", RequestId(1),
                   R"("jsonrpc" must be "2.0", got "2.0 ")");
    expectRejected(R"({"jsonrpc":null,"method":"m"})", std::nullopt,
                   R"("jsonrpc" must be "2.0", got null)");
}

TEST(JsonRpcValidationTest, MethodNotAString) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":5})", RequestId(1),
                   R"("method" must be a string, got 5)");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":null})", RequestId(1),
                   R"("method" must be a string, got null)");
    expectRejected(R"({"jsonrpc":"2.0","method":["a"]})", std::nullopt,
                   R"("method" must be a string, got an array)");
}

TEST(JsonRpcValidationTest, ParamsNotObjectOrArray) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"m","params":"x"})", RequestId(1),
                   R"("params" must be an object or an array, got "x")");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"m","params":42})", RequestId(1),
                   R"("params" must be an object or an array, got 42)");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"m","params":null})", RequestId(1),
                   R"("params" must be an object or an array, got null)");
    expectRejected(R"({"jsonrpc":"2.0","method":"m","params":false})", std::nullopt,
                   R"("params" must be an object or an array, got false)");
}

TEST(JsonRpcValidationTest, MethodWithResultOrError) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"m","result":{}})", RequestId(1),
                   R"(a message with "method" must not have "result")");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"x"}})",
                   RequestId(1), R"(a message with "method" must not have "error")");
}

TEST(JsonRpcValidationTest, BothResultAndError) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}})",
                   RequestId(1), R"(a response must not have both "result" and "error")");
}

TEST(JsonRpcValidationTest, NeitherMethodNorResultNorError) {
    expectRejected(R"({"jsonrpc":"2.0","id":1})", RequestId(1),
                   R"(a message must have "method" (a request or a notification), or "result" )"
                   R"(or "error" (a response))");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"params":{}})", RequestId(1),
                   R"(a message must have "method" (a request or a notification), or "result" )"
                   R"(or "error" (a response))");
}

TEST(JsonRpcValidationTest, ResponseWithoutId) {
    expectRejected(R"({"jsonrpc":"2.0","result":{}})", std::nullopt,
                   R"(a response must have an "id")");
}

TEST(JsonRpcValidationTest, ResponseWithParams) {
    expectRejected(R"({"jsonrpc":"2.0","id":2,"result":{},"params":{}})", RequestId(2),
                   R"(a response must not have "params")");
}

TEST(JsonRpcValidationTest, ErrorObjectMalformed) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":"boom"})", RequestId(1),
                   R"("error" must be an object, got "boom")");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":null})", RequestId(1),
                   R"("error" must be an object, got null)");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":{"message":"x"}})", RequestId(1),
                   R"("error.code" must be an integer, but it is missing)");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}})", RequestId(1),
                   R"("error.code" must be an integer, got 1.5)");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":{"code":"-32600","message":"x"}})",
                   RequestId(1), R"("error.code" must be an integer, got "-32600")");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775808,"message":"x"}})",
                   RequestId(1), R"("error.code" must be an integer, got 9223372036854775808)");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":{"code":1}})", RequestId(1),
                   R"("error.message" must be a string, but it is missing)");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":5}})", RequestId(1),
                   R"("error.message" must be a string, got 5)");
}

TEST(JsonRpcValidationTest, LongValuesAreCutInMessages) {
    const std::string longText(100, 'x');
    expectRejected(R"({"jsonrpc":")" + longText + R"(","id":1,"method":"m"})", RequestId(1),
                   R"("jsonrpc" must be "2.0", got ")" + std::string(40, 'x') + R"("...)");
    // Cut on a UTF-8 boundary: 13 three-byte characters fill 39 bytes, the 14th would cross 40.
    std::string euros;
    for (int i = 0; i < 20; ++i) {
        euros += "\xe2\x82\xac";
    }
    std::string shown;
    for (int i = 0; i < 13; ++i) {
        shown += "\xe2\x82\xac";
    }
    expectRejected(R"({"jsonrpc":")" + euros + R"(","id":1,"method":"m"})", RequestId(1),
                   R"("jsonrpc" must be "2.0", got ")" + shown + R"("...)");
    expectRejected(
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":)" + std::string(60, '9') + "}",
        RequestId(1),
        R"("params" must be an object or an array, got )" + std::string(40, '9') + "...");
}

TEST(JsonRpcValidationTest, ControlCharactersInMessagesAreEscaped) {
    expectRejected(R"({"jsonrpc":"\u0000\n","id":1,"method":"m"})", RequestId(1),
                   R"("jsonrpc" must be "2.0", got "\u0000\n")");
}

// Duplicate members: refused anywhere in a message (documented in json_rpc.h).

TEST(JsonRpcDuplicateTest, DuplicateIdHasNoId) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"id":2,"method":"m"})", std::nullopt,
                   R"(duplicate member "id")");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"m","id":1})", std::nullopt,
                   R"(duplicate member "id")");
}

TEST(JsonRpcDuplicateTest, OtherDuplicateKeepsTheId) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"a","method":"b"})", RequestId(1),
                   R"(duplicate member "method")");
    expectRejected(R"({"jsonrpc":"2.0","jsonrpc":"2.0","id":"x","method":"a"})", RequestId("x"),
                   R"(duplicate member "jsonrpc")");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"a","params":{},"params":{}})", RequestId(1),
                   R"(duplicate member "params")");
}

TEST(JsonRpcDuplicateTest, SpellingsOfTheSameNameAreDuplicates) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"a","\u006dethod":"b"})", RequestId(1),
                   R"(duplicate member "method")");
}

TEST(JsonRpcDuplicateTest, DuplicatesInsideParams) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":2,"a":3}})",
                   RequestId(1), R"(duplicate member "a" inside "params")");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"x":[{"k":{"q":1,"q":2}}]}})",
                   RequestId(1), R"(duplicate member "q" inside "params")");
    expectRejected(R"({"jsonrpc":"2.0","id":1,"result":{"r":1,"r":1}})", RequestId(1),
                   R"(duplicate member "r" inside "result")");
}

TEST(JsonRpcDuplicateTest, DuplicatesInsideError) {
    expectRejected(R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":"m"}})",
                   RequestId(1), R"(duplicate member "code" in "error")");
    expectRejected(
        R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"d":1,"d":2}}})",
        RequestId(1), R"(duplicate member "d" inside "error")");
}

TEST(JsonRpcDuplicateTest, SameNameInDifferentObjectsIsFine) {
    const JsonRpcMessage m = onlyMessage(
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"id":1,"x":1},"b":{"x":2,"id":2},"x":[{"x":1},{"x":2}]}})");
    EXPECT_EQ(m.params_json, R"({"a":{"id":1,"x":1},"b":{"x":2,"id":2},"x":[{"x":1},{"x":2}]})");
}

// ---------------------------------------------------------------------------------------------
// Batches and root values.

TEST(JsonRpcBatchTest, MixedEntriesAreAnsweredOneByOne) {
    const ParsedBody parsed = parseJsonRpcBody(R"([
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        {"jsonrpc":"1.0","id":2,"method":"ping"},
        5,
        [{"jsonrpc":"2.0","id":3,"method":"ping"}],
        {"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":null,"method":"ping"},
        {"jsonrpc":"2.0","id":"r","result":{"ok":true}},
        "text",
        {"jsonrpc":"2.0","id":4,"method":"a","method":"b"}
    ])");
    ASSERT_FALSE(parsed.fatal.has_value()) << summary(parsed);
    EXPECT_TRUE(parsed.batch);
    ASSERT_EQ(parsed.entries.size(), 9U) << summary(parsed);

    const auto message = [&](std::size_t i) { return std::get<JsonRpcMessage>(parsed.entries[i]); };
    const auto rejection = [&](std::size_t i) {
        return std::get<JsonRpcRejection>(parsed.entries[i]);
    };
    ASSERT_TRUE(std::holds_alternative<JsonRpcMessage>(parsed.entries[0]));
    EXPECT_EQ(message(0).kind, JsonRpcKind::request);
    EXPECT_EQ(message(0).id, RequestId(1));

    ASSERT_TRUE(std::holds_alternative<JsonRpcRejection>(parsed.entries[1]));
    EXPECT_EQ(rejection(1).id, RequestId(2));
    EXPECT_EQ(rejection(1).code, kInvalidRequest);
    EXPECT_EQ(rejection(1).message, R"("jsonrpc" must be "2.0", got "1.0")");

    ASSERT_TRUE(std::holds_alternative<JsonRpcRejection>(parsed.entries[2]));
    EXPECT_FALSE(rejection(2).id.has_value());
    EXPECT_EQ(rejection(2).message, "a batch entry must be an object, got 5");

    ASSERT_TRUE(std::holds_alternative<JsonRpcRejection>(parsed.entries[3]));
    EXPECT_FALSE(rejection(3).id.has_value());
    EXPECT_EQ(rejection(3).message, "a batch entry must be an object, got an array");

    ASSERT_TRUE(std::holds_alternative<JsonRpcMessage>(parsed.entries[4]));
    EXPECT_EQ(message(4).kind, JsonRpcKind::notification);

    ASSERT_TRUE(std::holds_alternative<JsonRpcRejection>(parsed.entries[5]));
    EXPECT_FALSE(rejection(5).id.has_value());
    EXPECT_EQ(rejection(5).message, R"("id" must be a string or an integer, got null)");

    ASSERT_TRUE(std::holds_alternative<JsonRpcMessage>(parsed.entries[6]));
    EXPECT_EQ(message(6).kind, JsonRpcKind::response);
    EXPECT_EQ(message(6).result_json, R"({"ok":true})");

    ASSERT_TRUE(std::holds_alternative<JsonRpcRejection>(parsed.entries[7]));
    EXPECT_EQ(rejection(7).message, R"(a batch entry must be an object, got "text")");

    ASSERT_TRUE(std::holds_alternative<JsonRpcRejection>(parsed.entries[8]));
    EXPECT_EQ(rejection(8).id, RequestId(4));
    EXPECT_EQ(rejection(8).message, R"(duplicate member "method")");
}

TEST(JsonRpcBatchTest, SingleEntryBatchIsStillABatch) {
    const ParsedBody parsed = parseJsonRpcBody(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
    EXPECT_FALSE(parsed.fatal.has_value());
    EXPECT_TRUE(parsed.batch);
    ASSERT_EQ(parsed.entries.size(), 1U);
    EXPECT_TRUE(std::holds_alternative<JsonRpcMessage>(parsed.entries[0]));
}

TEST(JsonRpcBatchTest, ObjectBodyIsNotABatch) {
    const ParsedBody parsed = parseJsonRpcBody(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
    EXPECT_FALSE(parsed.batch);
    EXPECT_EQ(parsed.entries.size(), 1U);
}

TEST(JsonRpcBatchTest, EmptyBatchIsRefused) {
    for (const std::string_view body : {"[]", " [ \n ] "}) {
        const ParsedBody parsed = parseJsonRpcBody(body);
        ASSERT_TRUE(parsed.fatal.has_value()) << summary(parsed);
        EXPECT_TRUE(parsed.batch);
        EXPECT_TRUE(parsed.entries.empty());
        EXPECT_FALSE(parsed.fatal->id.has_value());
        EXPECT_EQ(parsed.fatal->code, kInvalidRequest);
        EXPECT_EQ(parsed.fatal->message, "a batch must hold at least one message");
    }
}

std::string batchOf(std::size_t n) {
    std::string body = "[";
    for (std::size_t i = 0; i < n; ++i) {
        body += (i == 0 ? "" : ",");
        body += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"ping"})";
    }
    return body + "]";
}

TEST(JsonRpcBatchTest, BatchUpToTheLimitIsRead) {
    const ParsedBody parsed = parseJsonRpcBody(batchOf(100));
    EXPECT_FALSE(parsed.fatal.has_value());
    ASSERT_EQ(parsed.entries.size(), 100U);
    EXPECT_EQ(std::get<JsonRpcMessage>(parsed.entries[99]).id, RequestId(99));
}

TEST(JsonRpcBatchTest, BatchOverTheLimitIsRefusedAsAWhole) {
    const ParsedBody parsed = parseJsonRpcBody(batchOf(101));
    ASSERT_TRUE(parsed.fatal.has_value());
    EXPECT_TRUE(parsed.batch);
    EXPECT_TRUE(parsed.entries.empty());
    EXPECT_EQ(parsed.fatal->code, kInvalidRequest);
    EXPECT_EQ(parsed.fatal->message, "a batch may hold at most 100 messages");
}

TEST(JsonRpcBatchTest, BatchLimitIsConfigurableAndStopsReadingEarly) {
    JsonRpcLimits limits;
    limits.max_batch_size = 2;
    EXPECT_EQ(parseJsonRpcBody(batchOf(2), limits).entries.size(), 2U);
    // The third entry is refused before the reader sees the broken text after it.
    const JsonRpcRejection r = fatalError(batchOf(3) + "garbage", limits);
    EXPECT_EQ(r.code, kInvalidRequest);
    EXPECT_EQ(r.message, "a batch may hold at most 2 messages");
}

TEST(JsonRpcBatchTest, RootScalarsAreRefused) {
    const auto expectRoot = [](std::string_view body, std::string_view got) {
        SCOPED_TRACE(std::string(body));
        const JsonRpcRejection r = fatalError(body);
        EXPECT_EQ(r.code, kInvalidRequest);
        EXPECT_EQ(r.message,
                  "a JSON-RPC message must be an object (or a batch: an array of objects), got " +
                      std::string(got));
    };
    expectRoot("5", "5");
    expectRoot(" \"ping\" ", R"("ping")");
    expectRoot("null", "null");
    expectRoot("true", "true");
    expectRoot("-1.5e10", "-1.5e10");
}

// ---------------------------------------------------------------------------------------------
// Writers, and their round trip through the parser.

TEST(JsonRpcWriterTest, MakeResult) {
    EXPECT_EQ(makeResult(RequestId(1), R"({"ok":true})"),
              R"({"jsonrpc":"2.0","id":1,"result":{"ok":true}})");
    EXPECT_EQ(makeResult(RequestId("a\"b"), "{}"), R"({"jsonrpc":"2.0","id":"a\"b","result":{}})");
    EXPECT_EQ(makeResult(RequestId(-5), ""), R"({"jsonrpc":"2.0","id":-5,"result":{}})");
}

TEST(JsonRpcWriterTest, MakeError) {
    EXPECT_EQ(
        makeError(RequestId(3), kMethodNotFound, "Method not found: x"),
        R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: x"}})");
    EXPECT_EQ(makeError(RequestId("q"), kInvalidParams, "Unsupported protocol version",
                        R"({"supported":["2025-06-18"],"requested":"1.0"})"),
              R"({"jsonrpc":"2.0","id":"q","error":{"code":-32602,"message":)"
              R"("Unsupported protocol version","data":{"supported":["2025-06-18"],)"
              R"("requested":"1.0"}}})");
}

TEST(JsonRpcWriterTest, MakeErrorWithoutIdWritesNull) {
    EXPECT_EQ(makeError(std::nullopt, kParseError, "invalid JSON"),
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid JSON"}})");
}

TEST(JsonRpcWriterTest, MakeErrorOfARejection) {
    const JsonRpcRejection r = onlyRejection(R"({"jsonrpc":"1.0","id":9,"method":"m"})");
    EXPECT_EQ(makeError(r), R"({"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":)"
                            R"("\"jsonrpc\" must be \"2.0\", got \"1.0\""}})");
    const JsonRpcRejection f = fatalError("{");
    EXPECT_EQ(makeError(f), R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":)"
                            R"("invalid JSON at byte 1: Missing a name for object member."}})");
}

TEST(JsonRpcWriterTest, MakeNotificationAndRequest) {
    EXPECT_EQ(makeNotification("notifications/tools/list_changed"),
              R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    EXPECT_EQ(makeNotification("notifications/progress", R"({"progressToken":"t","progress":1})"),
              R"({"jsonrpc":"2.0","method":"notifications/progress",)"
              R"("params":{"progressToken":"t","progress":1}})");
    EXPECT_EQ(makeRequest(RequestId(0), "ping"), R"({"jsonrpc":"2.0","id":0,"method":"ping"})");
    EXPECT_EQ(makeRequest(RequestId("s1"), "sampling/createMessage", R"({"messages":[]})"),
              R"({"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage",)"
              R"("params":{"messages":[]}})");
}

TEST(JsonRpcWriterTest, RequestsRoundTrip) {
    const RequestId ids[] = {RequestId(0),
                             RequestId(-1),
                             RequestId(std::numeric_limits<std::int64_t>::min()),
                             RequestId(std::numeric_limits<std::int64_t>::max()),
                             RequestId(""),
                             RequestId("1"),
                             RequestId("quote\" backslash\\ tab\t nul" + std::string(1, '\0')),
                             RequestId("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80")};
    for (const RequestId& id : ids) {
        SCOPED_TRACE(id.toString());
        const JsonRpcMessage m =
            onlyMessage(makeRequest(id, "tools/c\xc3\xa1ll\n", R"({"a":[1,{"b":null}]})"));
        EXPECT_EQ(m.kind, JsonRpcKind::request);
        EXPECT_EQ(m.id, id);
        EXPECT_EQ(m.method, "tools/c\xc3\xa1ll\n");
        EXPECT_EQ(m.params_json, R"({"a":[1,{"b":null}]})");

        const JsonRpcMessage r = onlyMessage(makeResult(id, R"({"content":[]})"));
        EXPECT_EQ(r.kind, JsonRpcKind::response);
        EXPECT_EQ(r.id, id);
        EXPECT_EQ(r.result_json, R"({"content":[]})");

        const JsonRpcMessage e = onlyMessage(makeError(id, -32042, "elicit \"now\"", "[1]"));
        EXPECT_EQ(e.kind, JsonRpcKind::error_response);
        EXPECT_EQ(e.id, id);
        EXPECT_EQ(e.error.code, kUrlElicitationRequired);
        EXPECT_EQ(e.error.message, "elicit \"now\"");
        EXPECT_EQ(e.error.data_json, "[1]");
    }
}

TEST(JsonRpcWriterTest, NotificationsAndIdlessErrorsRoundTrip) {
    const JsonRpcMessage n = onlyMessage(makeNotification("notifications/message", R"({"x":1})"));
    EXPECT_EQ(n.kind, JsonRpcKind::notification);
    EXPECT_FALSE(n.id.has_value());
    EXPECT_EQ(n.method, "notifications/message");
    EXPECT_EQ(n.params_json, R"({"x":1})");

    const JsonRpcMessage e = onlyMessage(makeError(std::nullopt, kParseError, "bad"));
    EXPECT_EQ(e.kind, JsonRpcKind::error_response);
    EXPECT_FALSE(e.id.has_value());
    EXPECT_EQ(e.error.code, kParseError);
    EXPECT_EQ(e.error.message, "bad");
    EXPECT_EQ(e.error.data_json, "");
}

TEST(JsonRpcWriterTest, ErrorCodeConstants) {
    EXPECT_EQ(kParseError, -32700);
    EXPECT_EQ(kInvalidRequest, -32600);
    EXPECT_EQ(kMethodNotFound, -32601);
    EXPECT_EQ(kInvalidParams, -32602);
    EXPECT_EQ(kInternalError, -32603);
    EXPECT_EQ(kResourceNotFound, -32002);
    EXPECT_EQ(kUrlElicitationRequired, -32042);
}

TEST(JsonRpcWriterTest, KindNames) {
    EXPECT_EQ(jsonRpcKindName(JsonRpcKind::request), "request");
    EXPECT_EQ(jsonRpcKindName(JsonRpcKind::notification), "notification");
    EXPECT_EQ(jsonRpcKindName(JsonRpcKind::response), "response");
    EXPECT_EQ(jsonRpcKindName(JsonRpcKind::error_response), "error_response");
}

}  // namespace
}  // namespace crank::mcp::test
