// What a GraphQL response becomes (plugins/graphql/README.md, "Results"), from hand-made
// responses: data, data_path, has_next_path, partial data, errors (bounded in the message and the
// details), HTTP errors with and without a GraphQL body, protocol errors, and hostile bodies
// (deep nesting, every truncation, invalid UTF-8, huge error lists).
#include "graphql_response.h"

#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <crank/sdk/error.hpp>

namespace crank::graphql {
namespace {

using sdk::ErrorCode;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr const char* kPrefix = "POST http://127.0.0.1:4000/graphql: ";

sdk::http::FetchedResponse response(std::string body, int status = 200,
                                    std::string type = "application/graphql-response+json") {
    sdk::http::FetchedResponse r;
    r.prefix = kPrefix;
    r.status = status;
    r.type = std::move(type);
    r.body = std::move(body);
    return r;
}

GraphqlConfig configWith(const std::string& data_path = "", const std::string& has_next = "") {
    GraphqlConfig c;
    if (!data_path.empty()) {
        c.data_path.text = data_path;
        c.data_path.path = *sdk::parsePath(data_path);
    }
    if (!has_next.empty()) {
        c.has_next_path.text = has_next;
        c.has_next_path.path = *sdk::parsePath(has_next);
    }
    return c;
}

/// The item, or "<error CODE: message>".
struct Outcome {
    std::optional<std::string> item;
    std::optional<sdk::Error> error;
};

Outcome run(const sdk::http::FetchedResponse& r, const GraphqlConfig& c = {}) {
    Outcome out;
    try {
        out.item = graphqlItem(r, c);
    } catch (const sdk::Error& e) {
        out.error = e;
    }
    return out;
}

std::string itemOf(const sdk::http::FetchedResponse& r, const GraphqlConfig& c = {}) {
    const Outcome o = run(r, c);
    EXPECT_TRUE(o.item) << (o.error ? o.error->what() : "");
    return o.item.value_or("");
}

sdk::Error errorOf(const sdk::http::FetchedResponse& r, const GraphqlConfig& c = {}) {
    const Outcome o = run(r, c);
    EXPECT_TRUE(o.error) << o.item.value_or("");
    return o.error.value_or(sdk::Error(ErrorCode::internal, "<no error>"));
}

rapidjson::Document json(const std::string& text) {
    rapidjson::Document doc;
    doc.Parse(text.data(), text.size());
    EXPECT_FALSE(doc.HasParseError()) << text.substr(0, 300);
    return doc;
}

/// True when `text` is valid UTF-8 (no overlongs, surrogates or code points over U+10FFFF).
bool validUtf8(std::string_view text) {
    rapidjson::Document doc;
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
            quoted.push_back(' ');
        } else {
            quoted.push_back(c);
        }
    }
    quoted.push_back('"');
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(quoted.data(), quoted.size());
    return !doc.HasParseError();
}

/// A valid JSON object with valid UTF-8 throughout.
bool validUtf8Json(const std::string& text) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
    return !doc.HasParseError() && doc.IsObject();
}

TEST(GraphqlResponse, DataAloneIsTheItem) {
    EXPECT_EQ(itemOf(response(R"({"data":{"item":{"id":"i1","name":"Red Apple"}}})")),
              R"({"data":{"item":{"id":"i1","name":"Red Apple"}}})");
    // Legacy application/json, +json types, and no type at all are JSON too.
    for (const char* type : {"application/json", "application/vnd.x+json", ""}) {
        EXPECT_EQ(itemOf(response(R"({"data":{"now":"t"}})", 200, type)), R"({"data":{"now":"t"}})")
            << type;
    }
    // Extensions are dropped; whitespace is compacted.
    EXPECT_EQ(itemOf(response("{ \"extensions\": {\"cost\": 3},\n \"data\": { \"a\" : [1, 2] } }")),
              R"({"data":{"a":[1,2]}})");
    // An empty errors list is no error.
    EXPECT_EQ(itemOf(response(R"({"data":{"a":1},"errors":[]})")), R"({"data":{"a":1}})");
}

TEST(GraphqlResponse, DataPathSelectsAPartOfData) {
    const auto r =
        response(R"({"data":{"items":[{"id":"i1","owner":{"name":"Ada"}},{"id":"i2"}],"n":0}})");
    EXPECT_EQ(itemOf(r, configWith("items")),
              R"({"data":[{"id":"i1","owner":{"name":"Ada"}},{"id":"i2"}]})");
    EXPECT_EQ(itemOf(r, configWith("items.1")), R"({"data":{"id":"i2"}})");
    EXPECT_EQ(itemOf(r, configWith("items.0.owner.name")), R"({"data":"Ada"})");
    EXPECT_EQ(itemOf(r, configWith("n")), R"({"data":0})");
    for (const char* missing : {"nothing", "items.2", "items.id", "n.x", "items.01"}) {
        EXPECT_EQ(itemOf(r, configWith(missing)), R"({"data":null})") << missing;
    }
    EXPECT_EQ(itemOf(r, configWith("$")),
              R"({"data":{"items":[{"id":"i1","owner":{"name":"Ada"}},{"id":"i2"}],"n":0}})");
}

TEST(GraphqlResponse, HasNextPathSaysWhetherThisIsTheLastPage) {
    const auto more = response(R"({"data":{"items":{"page":{"hasNext":true},"list":[1]}}})");
    EXPECT_EQ(itemOf(more, configWith("items.list", "items.page.hasNext")),
              R"({"data":[1],"last_page":false})");
    const auto done = response(R"({"data":{"items":{"page":{"hasNext":false},"list":[]}}})");
    EXPECT_EQ(itemOf(done, configWith("items.list", "items.page.hasNext")),
              R"({"data":[],"last_page":true})");
    // Missing, null or not a boolean: the last page (a window never loops on it).
    for (const char* body :
         {R"({"data":{"items":{"list":[]}}})", R"({"data":{"items":{"page":{"hasNext":null}}}})",
          R"({"data":{"items":{"page":{"hasNext":"true"}}}})",
          R"({"data":{"items":{"page":{"hasNext":1}}}})"}) {
        EXPECT_THAT(itemOf(response(body), configWith("", "items.page.hasNext")),
                    HasSubstr(R"("last_page":true)"))
            << body;
    }
    // has_next_path reads `data`, not the selected part.
    EXPECT_EQ(itemOf(more, configWith("items.list", "page.hasNext")),
              R"({"data":[1],"last_page":true})");
    // Without has_next_path, no last_page member.
    EXPECT_THAT(itemOf(more), Not(HasSubstr("last_page")));
}

TEST(GraphqlResponse, PartialDataCarriesItsErrors) {
    const std::string item = itemOf(response(
        R"({"errors":[{"message":"cannot load item bad1","path":["partial",1],"locations":[{"line":1,"column":3}]}],
            "data":{"partial":[{"id":"i1"},null]}})"));
    const rapidjson::Document doc = json(item);
    ASSERT_TRUE(doc.IsObject());
    EXPECT_TRUE(doc["partial"].GetBool());
    ASSERT_TRUE(doc["errors"].IsArray());
    ASSERT_EQ(doc["errors"].Size(), 1U);
    EXPECT_STREQ(doc["errors"][0]["message"].GetString(), "cannot load item bad1");
    EXPECT_EQ(doc["errors"][0]["path"][1].GetInt(), 1);
    EXPECT_FALSE(doc.HasMember("errors_omitted"));
    EXPECT_TRUE(doc["data"]["partial"][1].IsNull());
}

TEST(GraphqlResponse, PartialErrorsAreBoundedTo64KiBOfWholeErrors) {
    // 200 errors of about 1 KiB each: some fit in 64 KiB, the rest are counted.
    std::string body = R"({"data":{"a":1},"errors":[)";
    const std::string filler(1000, 'e');
    for (int i = 0; i < 200; ++i) {
        body.append(i == 0 ? "" : ",")
            .append(R"({"message":"m)" + std::to_string(i) + " " + filler + R"(","path":["a"]})");
    }
    body.append("]}");
    const std::string item = itemOf(response(body));
    const rapidjson::Document doc = json(item);
    ASSERT_TRUE(doc.IsObject());
    ASSERT_TRUE(doc["errors"].IsArray());
    const rapidjson::SizeType kept = doc["errors"].Size();
    EXPECT_GT(kept, 50U);
    EXPECT_LT(kept, 70U);
    ASSERT_TRUE(doc.HasMember("errors_omitted"));
    EXPECT_EQ(doc["errors_omitted"].GetUint(), 200U - kept);
    EXPECT_LE(item.size(), 64U * 1024U + 200U);
    // The errors kept are whole and the first ones.
    EXPECT_THAT(std::string(doc["errors"][0]["message"].GetString()), StartsWith("m0 "));
    EXPECT_EQ(std::string(doc["errors"][kept - 1]["message"].GetString()).size(),
              filler.size() + 4);
}

TEST(GraphqlResponse, ErrorsAloneAreAnUpstreamErrorNamingTheFirstMessages) {
    const sdk::Error e = errorOf(response(
        R"({"errors":[{"message":"boom","path":["fail"]},{"message":"two","path":["a",0,"b"]},
           {"message":"three"},{"message":"four"},{"message":"five"}]})"));
    EXPECT_EQ(e.code(), ErrorCode::upstream);
    EXPECT_EQ(std::string(e.what()),
              std::string(kPrefix) +
                  "GraphQL errors: boom (at fail); two (at a.0.b); three (and 2 more)");
    const rapidjson::Document details = json(e.details());
    ASSERT_TRUE(details.IsObject());
    EXPECT_EQ(details["http_status"].GetInt(), 200);
    ASSERT_TRUE(details["errors"].IsArray());
    EXPECT_EQ(details["errors"].Size(), 5U);
    // Exactly three: no "(and 0 more)".
    const sdk::Error three =
        errorOf(response(R"({"errors":[{"message":"a"},{"message":"b"},{"message":"c"}]})"));
    EXPECT_THAT(three.what(), Not(HasSubstr("more")));
    // An error without a message, one that is not an object.
    const sdk::Error odd = errorOf(response(R"({"errors":[{"msg":"x"},7]})"));
    EXPECT_THAT(odd.what(),
                HasSubstr("(an error without a message); (an error without a message)"));
}

TEST(GraphqlResponse, DataNullWithErrorsIsAnError) {
    const sdk::Error e = errorOf(response(
        R"({"errors":[{"message":"kaput","path":["fail"],"extensions":{"code":"FIXTURE_FAILURE"}}],"data":null})"));
    EXPECT_EQ(e.code(), ErrorCode::upstream);
    EXPECT_THAT(e.what(), HasSubstr("GraphQL errors: kaput (at fail)"));
    EXPECT_THAT(e.details(), HasSubstr("FIXTURE_FAILURE"));
}

TEST(GraphqlResponse, ErrorDetailsAreBoundedTo8KiB) {
    std::string body = R"({"errors":[)";
    for (int i = 0; i < 100; ++i) {
        body.append(i == 0 ? "" : ",").append(R"({"message":")" + std::string(500, 'x') + R"("})");
    }
    body.append("]}");
    const sdk::Error e = errorOf(response(body));
    EXPECT_LE(e.details().size(), 8U * 1024U + 64U);
    const rapidjson::Document details = json(e.details());
    ASSERT_TRUE(details.IsObject());
    EXPECT_GT(details["errors"].Size(), 10U);
    EXPECT_LT(details["errors"].Size(), 100U);
    EXPECT_THAT(e.what(), HasSubstr("(and 97 more)"));
    // Each message in the text is an excerpt.
    EXPECT_LT(std::string(e.what()).size(), 3U * 400U + 200U);
}

TEST(GraphqlResponse, ANon2xxStatusWithAGraphqlBodyNamesTheStatus) {
    const sdk::Error e = errorOf(response(
        R"({"errors":[{"message":"Cannot query field \"itme\" on type \"Query\".","locations":[{"line":1,"column":3}]}]})",
        400));
    EXPECT_EQ(e.code(), ErrorCode::upstream);
    EXPECT_EQ(
        std::string(e.what()),
        std::string(kPrefix) +
            "answered 400 with GraphQL errors: Cannot query field \"itme\" on type \"Query\".");
    EXPECT_EQ(json(e.details())["http_status"].GetInt(), 400);
    const sdk::Error unauthorized =
        errorOf(response(R"({"errors":[{"message":"unauthorized"}]})", 401, "application/json"));
    EXPECT_THAT(unauthorized.what(), HasSubstr("answered 401 with GraphQL errors: unauthorized"));
}

TEST(GraphqlResponse, ANon2xxStatusWithoutAGraphqlBodyIsAnHttpError) {
    const sdk::Error text = errorOf(response("fixture status 502", 502, "text/plain"));
    EXPECT_EQ(text.code(), ErrorCode::upstream);
    EXPECT_EQ(std::string(text.what()), std::string(kPrefix) + "answered 502: fixture status 502");
    EXPECT_EQ(text.details(), R"({"http_status":502})");
    // JSON that is not a GraphQL response, broken JSON, an empty body, deep JSON: all HTTP errors.
    for (const char* body : {R"({"message":"gateway"})", "[1]", "{\"data\":", ""}) {
        const sdk::Error e = errorOf(response(body, 503, "application/json"));
        EXPECT_EQ(e.code(), ErrorCode::upstream) << body;
        EXPECT_THAT(e.what(), HasSubstr("answered 503")) << body;
        EXPECT_EQ(e.details(), R"({"http_status":503})") << body;
    }
    const sdk::Error deep =
        errorOf(response(std::string(1000, '[') + std::string(1000, ']'), 500, "application/json"));
    EXPECT_THAT(deep.what(), HasSubstr("answered 500"));
    // The excerpt is bounded.
    const sdk::Error big = errorOf(response(std::string(100000, 'z'), 500, "text/html"));
    EXPECT_LT(std::string(big.what()).size(), 1000U);
}

TEST(GraphqlResponse, DataAtANon2xxStatusIsNotTrustedAsAResult) {
    // GraphQL over HTTP: data comes with a 2xx status. A 500 carrying data and errors is the
    // error it says, a 401 or 502 carrying data alone an HTTP error.
    const sdk::Error both = errorOf(response(
        R"({"data":{"item":{"id":"1"}},"errors":[{"message":"db down","path":["item"]}]})", 500));
    EXPECT_EQ(both.code(), ErrorCode::upstream);
    EXPECT_EQ(std::string(both.what()),
              std::string(kPrefix) + "answered 500 with GraphQL errors: db down (at item)");
    EXPECT_EQ(json(both.details())["http_status"].GetInt(), 500);
    for (const int status : {401, 502}) {
        const sdk::Error data =
            errorOf(response(R"({"data":{"item":{"id":"1"}}})", status, "application/json"));
        EXPECT_EQ(data.code(), ErrorCode::upstream);
        EXPECT_THAT(data.what(), HasSubstr("answered " + std::to_string(status) + ": "));
        EXPECT_EQ(data.details(), "{\"http_status\":" + std::to_string(status) + "}");
    }
}

TEST(GraphqlResponse, A2xxResponseThatIsNotJsonIsAProtocolErrorNamingTheType) {
    const sdk::Error html = errorOf(response("<html>login</html>", 200, "text/html"));
    EXPECT_EQ(html.code(), ErrorCode::protocol);
    EXPECT_THAT(html.what(), HasSubstr("the response type \"text/html\" is not JSON"));
    EXPECT_THAT(html.what(), StartsWith(kPrefix));
    const sdk::Error huge = errorOf(response("{}", 200, "x/" + std::string(10000, 'y')));
    EXPECT_LT(std::string(huge.what()).size(), 600U);
}

TEST(GraphqlResponse, BodiesThatAreNoGraphqlResponseAreProtocolErrors) {
    EXPECT_THAT(errorOf(response("not json")).what(), HasSubstr("the response is not JSON"));
    EXPECT_THAT(errorOf(response("{\"data\":{}} trailing")).what(),
                HasSubstr("the response is not JSON"));
    EXPECT_THAT(errorOf(response("")).what(), HasSubstr("the response is not JSON"));
    for (const char* body : {"[]", "\"data\"", "null", "42"}) {
        const sdk::Error e = errorOf(response(body));
        EXPECT_EQ(e.code(), ErrorCode::protocol) << body;
        EXPECT_THAT(e.what(), HasSubstr("not a JSON object")) << body;
    }
    for (const char* body : {"{}", R"({"data":null})", R"({"errors":[]})", R"({"errors":"boom"})",
                             R"({"errors":{"message":"x"}})", R"({"extensions":{}})"}) {
        const sdk::Error e = errorOf(response(body));
        EXPECT_EQ(e.code(), ErrorCode::protocol) << body;
        EXPECT_THAT(e.what(), HasSubstr("neither data nor errors")) << body;
    }
    for (const char* body : {R"({"data":[1]})", R"({"data":"x"})", R"({"data":true})"}) {
        const sdk::Error e = errorOf(response(body));
        EXPECT_EQ(e.code(), ErrorCode::protocol) << body;
        EXPECT_THAT(e.what(), HasSubstr("its data is not an object")) << body;
    }
}

TEST(GraphqlResponse, DeepNestingIsRefusedWithoutRecursion) {
    std::string deep = R"({"data":{"a":)";
    deep.append(100000, '[');
    deep.append(100000, ']');
    deep.append("}}");
    const sdk::Error e = errorOf(response(deep));
    EXPECT_EQ(e.code(), ErrorCode::protocol);
    EXPECT_THAT(e.what(), HasSubstr("nested deeper than 256 levels"));
    std::string errors = R"({"errors":[{"message":"x","extensions":)";
    for (int i = 0; i < 100000; ++i) {
        errors.append(R"({"a":)");
    }
    const sdk::Error unclosed = errorOf(response(errors));
    EXPECT_EQ(unclosed.code(), ErrorCode::protocol);
    // Just within the bound: an item, written back whole.
    std::string ok = R"({"data":{"a":)";
    ok.append(250, '[');
    ok.append(250, ']');
    ok.append("}}");
    EXPECT_THAT(itemOf(response(ok)), StartsWith(R"({"data":{"a":[[[)"));
}

TEST(GraphqlResponse, EveryPrefixOfAResponseIsAnErrorOrAnItem) {
    const std::string full =
        R"({"data":{"items":[{"id":"i1","name":"Red \u00e9 Apple","tags":["a","b"],"price":1.25},null],
            "page":{"hasNext":true}},"errors":[{"message":"cannot load item bad1","path":["items",1],
            "locations":[{"line":2,"column":5}],"extensions":{"code":"X"}}]})";
    const GraphqlConfig c = configWith("items", "page.hasNext");
    ASSERT_TRUE(run(response(full), c).item);
    for (const int status : {200, 400, 500}) {
        for (std::size_t n = 0; n <= full.size(); ++n) {
            const Outcome o = run(response(full.substr(0, n), status), c);
            ASSERT_TRUE(o.item || o.error) << n;
            if (o.item) {
                EXPECT_TRUE(validUtf8Json(*o.item)) << n << ": " << *o.item;
            } else {
                EXPECT_TRUE(o.error->code() == ErrorCode::protocol ||
                            o.error->code() == ErrorCode::upstream)
                    << n;
                EXPECT_TRUE(o.error->details().empty() || validUtf8Json(o.error->details())) << n;
                if (n < full.size() && status == 200) {
                    EXPECT_EQ(o.error->code(), ErrorCode::protocol) << n;
                }
            }
        }
    }
}

TEST(GraphqlResponse, InvalidUtf8NeverReachesTheItemOrTheError) {
    // A Latin-1 byte, a lone continuation byte, an overlong encoding, a truncated sequence.
    for (const std::string& bad : {std::string("caf\xe9"), std::string("a\x80z"),
                                   std::string("\xc0\xaf"), std::string("end\xe2\x82")}) {
        const Outcome data = run(response(R"({"data":{"name":")" + bad + R"("}})"));
        if (data.item) {
            EXPECT_TRUE(validUtf8Json(*data.item)) << *data.item;
        } else {
            EXPECT_TRUE(validUtf8(data.error->what()));
        }
        std::string errorsBody = R"({"errors":[{"message":")";
        errorsBody.append(bad).append(R"(","path":[")").append(bad).append(R"("]}]})");
        const Outcome errors = run(response(errorsBody));
        ASSERT_TRUE(errors.error);
        EXPECT_TRUE(validUtf8(errors.error->what())) << errors.error->what();
        EXPECT_TRUE(errors.error->details().empty() || validUtf8Json(errors.error->details()))
            << errors.error->details();
        const Outcome partial =
            run(response(R"({"data":{"a":1},"errors":[{"message":")" + bad + R"("}]})"));
        if (partial.item) {
            EXPECT_TRUE(validUtf8Json(*partial.item)) << *partial.item;
        }
        const Outcome http = run(response("oops " + bad, 502, "text/plain"));
        ASSERT_TRUE(http.error);
        EXPECT_TRUE(validUtf8(http.error->what())) << http.error->what();
    }
}

TEST(GraphqlResponse, AHundredThousandErrorsAreBounded) {
    std::string body = R"({"errors":[)";
    for (int i = 0; i < 100000; ++i) {
        body.append(i == 0 ? "" : ",")
            .append(R"({"message":"e)" + std::to_string(i) + R"(","path":["a",)" +
                    std::to_string(i) + "]}");
    }
    body.append("]");
    const std::string errorsOnly = body + "}";
    const sdk::Error e = errorOf(response(errorsOnly));
    EXPECT_EQ(std::string(e.what()),
              std::string(kPrefix) +
                  "GraphQL errors: e0 (at a.0); e1 (at a.1); e2 (at a.2) (and "
                  "99997 more)");
    EXPECT_LE(e.details().size(), 8U * 1024U + 64U);
    EXPECT_TRUE(validUtf8Json(e.details()));
    const std::string item = itemOf(response(body + R"(,"data":{"a":[]}})"));
    EXPECT_LE(item.size(), 64U * 1024U + 200U);
    const rapidjson::Document doc = json(item);
    ASSERT_TRUE(doc.IsObject());
    EXPECT_EQ(doc["errors"].Size() + doc["errors_omitted"].GetUint(), 100000U);
}

}  // namespace
}  // namespace crank::graphql
