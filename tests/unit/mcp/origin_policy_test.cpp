#include "http/origin_policy.h"

#include <gtest/gtest.h>

namespace crank::http {
namespace {

TEST(OriginPolicyTest, LoopbackHostsOnAnyPortAndListedHosts) {
    const OriginPolicy policy({"crank.example.com", "api.example.com:8443"}, {});
    EXPECT_TRUE(policy.hostAllowed("127.0.0.1:8080"));
    EXPECT_TRUE(policy.hostAllowed("127.3.4.5"));
    EXPECT_TRUE(policy.hostAllowed("localhost:1"));
    EXPECT_TRUE(policy.hostAllowed("LOCALHOST"));
    EXPECT_TRUE(policy.hostAllowed("[::1]:8080"));
    EXPECT_TRUE(policy.hostAllowed("crank.example.com:443"));
    EXPECT_TRUE(policy.hostAllowed("api.example.com:8443"));
    EXPECT_FALSE(policy.hostAllowed("api.example.com:9999"));
    EXPECT_FALSE(policy.hostAllowed("evil.example.com"));
    EXPECT_FALSE(policy.hostAllowed("localhost.evil.com"));
    EXPECT_FALSE(policy.hostAllowed(""));
}

TEST(OriginPolicyTest, LoopbackOriginsAndListedOrigins) {
    const OriginPolicy policy({}, {"https://app.example.com"});
    EXPECT_TRUE(policy.originAllowed(""));  // not a browser
    EXPECT_TRUE(policy.originAllowed("http://localhost:5173"));
    EXPECT_TRUE(policy.originAllowed("https://127.0.0.1"));
    EXPECT_TRUE(policy.originAllowed("http://[::1]:3000"));
    EXPECT_TRUE(policy.originAllowed("https://app.example.com"));
    EXPECT_FALSE(policy.originAllowed("http://app.example.com"));
    EXPECT_FALSE(policy.originAllowed("http://evil.example.com"));
    EXPECT_FALSE(policy.originAllowed("null"));
    EXPECT_FALSE(policy.originAllowed("file://localhost"));
    EXPECT_FALSE(policy.originAllowed("http://localhost:5173/path"));
}

}  // namespace
}  // namespace crank::http
