// parseListenAddress and ListenAddress.

#include "config/listen_address.h"

#include <string>

#include <gtest/gtest.h>

namespace crank::config {
namespace {

/// The message of a parse that must fail.
std::string failure(std::string_view text) {
    const auto parsed = parseListenAddress(text);
    EXPECT_FALSE(parsed.ok()) << text;
    if (parsed.ok()) {
        return {};
    }
    EXPECT_EQ(parsed.error().code, ErrorCode::invalid_argument);
    return parsed.error().message;
}

std::string expectedFailure(std::string_view text, std::string_view why) {
    return "expected HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:8080), got \"" + std::string(text) +
           "\": " + std::string(why);
}

TEST(ConfigListenAddressTest, Ipv4) {
    const auto a = parseListenAddress("127.0.0.1:8080");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->host, "127.0.0.1");
    EXPECT_EQ(a->port, 8080);
    EXPECT_EQ(a->toString(), "127.0.0.1:8080");
}

TEST(ConfigListenAddressTest, Ipv6InBrackets) {
    const auto a = parseListenAddress("[::1]:9000");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->host, "::1");
    EXPECT_EQ(a->port, 9000);
    EXPECT_EQ(a->toString(), "[::1]:9000");
    const auto any = parseListenAddress("[::]:443");
    ASSERT_TRUE(any.ok());
    EXPECT_EQ(any->host, "::");
    EXPECT_EQ(any->toString(), "[::]:443");
}

TEST(ConfigListenAddressTest, Localhost) {
    const auto a = parseListenAddress("localhost:3000");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->host, "localhost");
    EXPECT_EQ(a->port, 3000);
    EXPECT_TRUE(a->isLoopback());
}

TEST(ConfigListenAddressTest, PortZeroAndPortBounds) {
    const auto zero = parseListenAddress("127.0.0.1:0");
    ASSERT_TRUE(zero.ok());
    EXPECT_EQ(zero->port, 0);
    const auto max = parseListenAddress("0.0.0.0:65535");
    ASSERT_TRUE(max.ok());
    EXPECT_EQ(max->port, 65535);
}

TEST(ConfigListenAddressTest, BadPorts) {
    const std::string_view why = "the port must be a number from 0 to 65535";
    for (const std::string_view text :
         {"127.0.0.1:65536", "127.0.0.1:99999999999", "127.0.0.1:-1", "127.0.0.1:+80",
          "127.0.0.1:80a", "127.0.0.1: 80", "127.0.0.1:", "[::1]:", "[::1]:http"}) {
        EXPECT_EQ(failure(text), expectedFailure(text, why)) << text;
    }
}

TEST(ConfigListenAddressTest, MissingPort) {
    EXPECT_EQ(failure("127.0.0.1"), expectedFailure("127.0.0.1", "the port is missing"));
    EXPECT_EQ(failure("localhost"), expectedFailure("localhost", "the port is missing"));
    EXPECT_EQ(failure(""), expectedFailure("", "the port is missing"));
    EXPECT_EQ(failure("[::1]"),
              expectedFailure("[::1]", "an IPv6 address is written [ADDRESS]:PORT"));
}

TEST(ConfigListenAddressTest, HostnamesAreRefused) {
    const std::string_view why = "the host must be an IP address or localhost";
    for (const std::string_view text : {"example.com:80", "crank:8080", "LOCALHOST:80", ":8080",
                                        "1.2.3:80", "256.0.0.1:80", " 127.0.0.1:80"}) {
        EXPECT_EQ(failure(text), expectedFailure(text, why)) << text;
    }
}

TEST(ConfigListenAddressTest, MalformedIpv6) {
    EXPECT_EQ(failure("::1:8080"),
              expectedFailure("::1:8080", "an IPv6 address is written [ADDRESS]:PORT"));
    EXPECT_EQ(failure("[::1]8080"),
              expectedFailure("[::1]8080", "an IPv6 address is written [ADDRESS]:PORT"));
    EXPECT_EQ(failure("[::1:8080"),
              expectedFailure("[::1:8080", "an IPv6 address is written [ADDRESS]:PORT"));
    EXPECT_EQ(failure("[]:80"), expectedFailure("[]:80", "not an IPv6 address"));
    EXPECT_EQ(failure("[127.0.0.1]:80"), expectedFailure("[127.0.0.1]:80", "not an IPv6 address"));
    EXPECT_EQ(failure("[fe80::1%eth0]:80"),
              expectedFailure("[fe80::1%eth0]:80", "not an IPv6 address"));
}

TEST(ConfigListenAddressTest, IsLoopback) {
    const auto loopback = [](const std::string& host) {
        return ListenAddress{host, 80}.isLoopback();
    };
    EXPECT_TRUE(loopback("127.0.0.1"));
    EXPECT_TRUE(loopback("127.1.2.3"));
    EXPECT_TRUE(loopback("127.255.255.254"));
    EXPECT_TRUE(loopback("::1"));
    EXPECT_TRUE(loopback("localhost"));
    EXPECT_FALSE(loopback("0.0.0.0"));
    EXPECT_FALSE(loopback("10.0.0.1"));
    EXPECT_FALSE(loopback("128.0.0.1"));
    EXPECT_FALSE(loopback("126.255.255.255"));
    EXPECT_FALSE(loopback("192.168.1.10"));
    EXPECT_FALSE(loopback("::"));
    EXPECT_FALSE(loopback("fe80::1"));
    EXPECT_FALSE(loopback(""));
}

TEST(ConfigListenAddressTest, ParsedAddressesKnowWhetherTheyAreLoopback) {
    EXPECT_TRUE(parseListenAddress("127.9.8.7:1")->isLoopback());
    EXPECT_TRUE(parseListenAddress("[::1]:1")->isLoopback());
    EXPECT_FALSE(parseListenAddress("0.0.0.0:1")->isLoopback());
    EXPECT_FALSE(parseListenAddress("[::]:1")->isLoopback());
}

}  // namespace
}  // namespace crank::config
