// upstreamKey(): which upstream an operation's calls wait on, from its `upstream` or its
// protocol config, with no secret and no template in the key.
#include "runtime/upstream_key.h"

#include <string>

#include <gtest/gtest.h>

namespace crank::runtime {
namespace {

std::string keyOf(const std::string& config_json, const std::string& upstream = "") {
    config::OperationConfig op;
    op.name = "op_name";
    op.config_json = config_json;
    op.upstream = upstream;
    return upstreamKey(op);
}

TEST(UpstreamKey, AUrlIsReducedToItsOrigin) {
    EXPECT_EQ(keyOf(R"({"url": "http://127.0.0.1:8081/items/{{ id | url }}"})"),
              "http://127.0.0.1:8081");
    EXPECT_EQ(keyOf(R"({"url": "HTTPS://API.Example.COM/v1?key=s3cret"})"),
              "https://api.example.com:443");
    EXPECT_EQ(keyOf(R"({"url": "http://user:pa55@host/x"})"), "http://host:80");
    EXPECT_EQ(keyOf(R"({"url": "ws://[::1]/socket"})"), "ws://[::1]:80");
    EXPECT_EQ(keyOf(R"({"url": "wss://[::1]:9443/socket"})"), "wss://[::1]:9443");
    EXPECT_EQ(keyOf(R"({"endpoint": "http://graph:4000/graphql"})"), "http://graph:4000");
    // One upstream whatever the path: two operations of one origin share a key.
    EXPECT_EQ(keyOf(R"({"url": "http://a:1/x"})"), keyOf(R"({"url": "http://a:1/y#z"})"));
}

TEST(UpstreamKey, ATargetACommandOrANameTheOperationGivesIsTheKey) {
    EXPECT_EQ(keyOf(R"({"target": "127.0.0.1:50051", "method": "a.B/C"})"),
              "grpc://127.0.0.1:50051");
    EXPECT_EQ(keyOf(R"({"command": "/usr/bin/server", "args": ["--x"]})"), "stdio:/usr/bin/server");
    EXPECT_EQ(keyOf(R"({"url": "http://a:1/x"})", "billing"), "billing");
}

TEST(UpstreamKey, WithoutAnUpstreamToNameTheOperationIsBoundedOnItsOwn) {
    EXPECT_EQ(keyOf(R"({"items": 3})"), "operation:op_name");
    EXPECT_EQ(keyOf("{}"), "operation:op_name");
    EXPECT_EQ(keyOf("not json"), "operation:op_name");
    EXPECT_EQ(keyOf(R"({"url": "{{ base }}/items"})"), "operation:op_name");
    EXPECT_EQ(keyOf(R"({"url": "http://{{ host }}/items"})"), "operation:op_name");
    EXPECT_EQ(keyOf(R"({"url": "/relative"})"), "operation:op_name");
    EXPECT_EQ(keyOf(R"({"url": 42})"), "operation:op_name");
    EXPECT_EQ(keyOf(R"({"target": "{{ t }}"})"), "operation:op_name");
    EXPECT_EQ(keyOf(R"({"url": "http://)" + std::string(300, 'h') + R"(/x"})"),
              "operation:op_name");
}

}  // namespace
}  // namespace crank::runtime
