// The WebSocket plugin's config: every member checked with its path, templates left for the call,
// hostile values refused; and describe() saying what the operation's transport is.
#include "ws_config.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ws_adapter.h"
#include <crank/sdk.hpp>
#include <crank/testing/fake_host.hpp>

CRANK_PLUGIN_NAMED(wsConfigTestEntry, "websocket", "1.0.0", "the WebSocket plugin, for its tests",
                   crank::ws::registerWsPlugin);

namespace crank::ws {
namespace {

using ::testing::HasSubstr;

struct Problem {
    std::string path;
    std::string message;
};

std::vector<Problem> problems(const std::string& json, bool rendered = true) {
    std::vector<Problem> out;
    parseWsConfig(json, rendered, [&](std::string_view path, std::string_view message) {
        out.push_back({std::string(path), std::string(message)});
    });
    return out;
}

std::string firstPath(const std::string& json, bool rendered = true) {
    const auto p = problems(json, rendered);
    return p.empty() ? "<none>" : p[0].path;
}

TEST(WsConfig, AUrlIsParsedIntoHostPortAndPath) {
    auto c = parseWsConfig(R"({"url":"ws://127.0.0.1:9001/ticks?rate=5"})", true,
                           [](std::string_view, std::string_view) { FAIL(); });
    ASSERT_TRUE(c);
    EXPECT_FALSE(c->secure);
    EXPECT_EQ(c->host, "127.0.0.1");
    EXPECT_EQ(c->port, 9001);
    EXPECT_EQ(c->path_and_query, "/ticks?rate=5");
    auto s = parseWsConfig(R"({"url":"wss://[::1]?x=1"})", true,
                           [](std::string_view, std::string_view) { FAIL(); });
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->secure);
    EXPECT_EQ(s->host, "::1");
    EXPECT_EQ(s->port, 443);
    EXPECT_EQ(s->path_and_query, "/?x=1");
}

TEST(WsConfig, BadUrlsAreNamed) {
    EXPECT_EQ(firstPath(R"({})"), "url");
    EXPECT_EQ(firstPath(R"({"url":"http://127.0.0.1/x"})"), "url");
    EXPECT_EQ(firstPath(R"({"url":"ws://user:pw@127.0.0.1/x"})"), "url");
    EXPECT_EQ(firstPath(R"({"url":"ws://127.0.0.1:99999/x"})"), "url");
    EXPECT_EQ(firstPath(R"({"url":"ws://127.0.0.1/a b"})"), "url");
    EXPECT_EQ(firstPath(R"({"url":"ws://:80/"})"), "url");
    // A template is checked when the call renders it, but the scheme must be there at load.
    EXPECT_TRUE(problems(R"({"url":"ws://{{host}}/x"})", false).empty());
    EXPECT_EQ(firstPath(R"({"url":"{{url}}"})", false), "url");
}

TEST(WsConfig, HeadersTheHandshakeOwnsAreRefused) {
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","headers":{"Sec-WebSocket-Key":"x"}})"),
              "headers.Sec-WebSocket-Key");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","headers":{"Upgrade":"x"}})"), "headers.Upgrade");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","headers":{"X-A":"a\r\nInjected: 1"}})"),
              "headers.X-A");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","headers":{"bad name":"x"}})"), "headers.bad name");
    EXPECT_TRUE(problems(R"({"url":"ws://h/","headers":{"X-Tenant":"{{t}}"}})", false).empty());
}

TEST(WsConfig, NumbersAndMembersAreBounded) {
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","connect_timeout_ms":0})"), "connect_timeout_ms");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","max_message_bytes":100000000})"), "max_message_bytes");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","reconnect":{"attempts":-1}})"), "reconnect.attempts");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","reconnect":{"atempts":1}})"), "reconnect.atempts");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","subprotocols":["a b"]})"), "subprotocols[0]");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","subscribe_message_template":5})"),
              "subscribe_message_template");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","nope":1})"), "nope");
    EXPECT_THAT(problems(R"({"url":"ws://h/","nope":1})")[0].message, HasSubstr("known: url"));
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","job":{}})"), "job.done_path");
    EXPECT_EQ(firstPath(R"({"url":"ws://h/","job":{"done_path":"a..b"}})"), "job.done_path");
    EXPECT_EQ(firstPath("[1]"), "");
    EXPECT_EQ(firstPath(R"({"url":)"), "");
}

TEST(WsConfig, MessagesAreSentAsJsonTextOrAsTheyAre) {
    auto c = parseWsConfig(
        R"({"url":"ws://h/","subscribe_message_template":{"op":"subscribe","ch":"a"},
            "unsubscribe_message_template":"UNSUB a"})",
        true, [](std::string_view, std::string_view) { FAIL(); });
    ASSERT_TRUE(c);
    EXPECT_EQ(*c->subscribe_message, R"({"op":"subscribe","ch":"a"})");
    EXPECT_EQ(*c->unsubscribe_message, "UNSUB a");
}

TEST(WsConfig, DescribeSaysSubscriptionsStreamAndJobsAnswerOnce) {
    testing::FakeHost host(&wsConfigTestEntry);
    ASSERT_TRUE(host.loaded()) << host.initError();
    const auto stream = host.describe("websocket", R"({"url":"ws://h/"})");
    ASSERT_TRUE(stream.ok());
    EXPECT_EQ(stream.json, R"({"transport_behavior":"server_stream"})");
    const auto job = host.describe("websocket", R"({"url":"ws://h/","job":{"done_path":"done"}})");
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job.json, R"({"transport_behavior":"request_response"})");
    const auto bad = host.validate("websocket", R"({"url":"ftp://h/"})");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.diagnostics[0].path, "url");
}

}  // namespace
}  // namespace crank::ws
