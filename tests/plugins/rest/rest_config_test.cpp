#include "rest_config.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace crank::rest {
namespace {

RestConfig ok(std::string_view json, bool rendered = true) {
    std::vector<ConfigProblem> problems;
    auto c = parseRestConfig(json, rendered, problems);
    EXPECT_TRUE(c.has_value()) << json << ": "
                               << (problems.empty()
                                       ? ""
                                       : problems[0].path + ": " + problems[0].message);
    return c.value_or(RestConfig{});
}

std::vector<ConfigProblem> bad(std::string_view json, bool rendered = true) {
    std::vector<ConfigProblem> problems;
    EXPECT_FALSE(parseRestConfig(json, rendered, problems).has_value()) << json;
    return problems;
}

TEST(RestConfig, DefaultsAreTheDocumentedOnes) {
    const RestConfig c = ok(R"({"url": "http://127.0.0.1:1/x"})");
    EXPECT_EQ(c.method, "GET");
    EXPECT_EQ(c.http.connect_ms, 5000);
    EXPECT_EQ(c.http.headers_ms, 10000);
    EXPECT_FALSE(c.http.total_ms.has_value());
    EXPECT_TRUE(c.http.tls.verify);
    EXPECT_EQ(c.http.max_response_bytes, 1048576U);
    EXPECT_EQ(c.http.follow_redirects, 5);
    EXPECT_TRUE(c.http.redirect_origins.empty());
    EXPECT_TRUE(c.http.compression);
    EXPECT_EQ(c.http.max_idle, 16U);
    EXPECT_EQ(c.http.idle_timeout_ms, 30000);
    EXPECT_FALSE(c.body.has_value());
    ASSERT_TRUE(c.url.has_value());
    EXPECT_EQ(c.url->port, 1);
}

TEST(RestConfig, QueryValuesBecomeTextArraysRepeatNullsDrop) {
    const RestConfig c = ok(
        R"({"url": "http://h/", "query": {"a": 1, "b": true, "c": "x", "d": null, "e": [1, "two", null]}})");
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"a", "1"}, {"b", "true"}, {"c", "x"}, {"e", "1"}, {"e", "two"}};
    EXPECT_EQ(c.query, expected);
}

TEST(RestConfig, BodyIsCompactJsonAndContentTypeIsNoticed) {
    const RestConfig c = ok(
        R"({"url": "http://h/", "method": "POST", "body": {"a": [1, 2], "b": "x"}, "headers": {"content-TYPE": "application/x+json"}})");
    ASSERT_TRUE(c.body.has_value());
    EXPECT_EQ(*c.body, R"({"a":[1,2],"b":"x"})");
    EXPECT_TRUE(c.http.has_content_type);
}

TEST(RestConfig, RedirectOriginsAreOriginsNamedByTheirIndex) {
    const RestConfig c = ok(
        R"({"url": "http://h/", "redirect_origins": ["https://Login.example.com", "http://[::1]:81/"]})");
    EXPECT_EQ(c.http.redirect_origins,
              (std::vector<std::string>{"https://login.example.com:443", "http://[::1]:81"}));
    const auto problems = bad(
        R"({"url": "http://h/", "redirect_origins": ["https://a.example", "https://b.example/v1", 7]})");
    ASSERT_EQ(problems.size(), 2U);
    EXPECT_EQ(problems[0].path, "redirect_origins[1]");
    EXPECT_EQ(problems[0].message,
              "expected an origin (scheme://host[:port]), without a path or query");
    EXPECT_EQ(problems[1].path, "redirect_origins[2]");
    EXPECT_EQ(bad(R"({"url": "http://h/", "redirect_origins": "https://a.example"})")[0].path,
              "redirect_origins");
}

TEST(RestConfig, TemplatedUrlsAreCheckedOnlyForTheirSchemeAtLoad) {
    ok(R"({"url": "http://h/items/{{ id | url }}"})", false);
    const auto problems = bad(R"({"url": "{{ base }}/items"})", false);
    EXPECT_EQ(problems[0].path, "url");
}

TEST(RestConfig, EveryProblemIsNamedByItsPath) {
    const auto problems = bad(R"({
        "method": "get", "headers": {"Host": "x", "X-Bad": "a\nb", "bad name": "v"},
        "timeouts": {"connect_ms": 0, "nope": 1}, "accept": ["json"], "follow_redirects": 99,
        "keep_alive": {"max_idle": -1}, "sse": {"data": "xml"}, "extra": 1})");
    std::vector<std::string> paths;
    for (const auto& p : problems) {
        paths.push_back(p.path);
    }
    for (const char* expected :
         {"url", "method", "headers.Host", "headers.X-Bad", "headers.bad name",
          "timeouts.connect_ms", "timeouts.nope", "accept", "follow_redirects",
          "keep_alive.max_idle", "sse.data", "extra"}) {
        EXPECT_NE(std::find(paths.begin(), paths.end(), expected), paths.end()) << expected;
    }
}

TEST(RestConfig, ABodyWithGetIsRefused) {
    const auto problems = bad(R"({"url": "http://h/", "body": {"a": 1}})");
    EXPECT_EQ(problems[0].path, "body");
    EXPECT_NE(problems[0].message.find("GET"), std::string::npos);
}

TEST(RestConfig, MalformedAndHostileJsonIsAnErrorNotACrash) {
    EXPECT_NE(bad(R"({"url": )")[0].message.find("not valid JSON"), std::string::npos);
    EXPECT_NE(bad("[1]")[0].message.find("object"), std::string::npos);
    // Nesting is bounded before anything recurses; a moderate depth is fine.
    const auto nested = [](std::size_t depth) {
        std::string deep = R"({"url": "http://h/", "method": "POST", "body": )";
        deep.append(depth, '[');
        deep.append(R"("]]]{{{")");  // brackets inside a string do not count
        deep.append(depth, ']');
        deep.append("}");
        return deep;
    };
    EXPECT_EQ(ok(nested(200)).body->size(), 400U + 8);
    EXPECT_NE(bad(nested(100000))[0].message.find("deeper than 256"), std::string::npos);
}

TEST(RestConfig, MediaRanges) {
    const std::vector<std::string> ranges = {"application/json", "application/*+json", "text/*"};
    EXPECT_TRUE(mediaTypeAccepted("application/json", ranges));
    EXPECT_TRUE(mediaTypeAccepted("application/problem+json", ranges));
    EXPECT_TRUE(mediaTypeAccepted("text/plain", ranges));
    EXPECT_FALSE(mediaTypeAccepted("image/png", ranges));
    EXPECT_FALSE(mediaTypeAccepted("application/xml", ranges));
    EXPECT_TRUE(mediaTypeAccepted("image/png", {"*/*"}));
    EXPECT_TRUE(isJsonMediaType("application/vnd.api+json"));
    EXPECT_FALSE(isJsonMediaType("text/json5"));
}

}  // namespace
}  // namespace crank::rest
