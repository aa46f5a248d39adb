// Where a redirect may lead (sdk/include/crank/sdk/http/redirect_policy.hpp): the address ranges,
// the rule, and the redirect_origins entries. Only IP literals: nothing is looked up or contacted.

#include <gtest/gtest.h>

#include <crank/sdk/http/redirect_policy.hpp>

namespace crank::sdk::http {
namespace {

Url url(const std::string& text) {
    std::string error;
    std::optional<Url> parsed = parseUrl(text, error);
    EXPECT_TRUE(parsed) << text << ": " << error;
    return parsed.value_or(Url{});
}

std::optional<std::string> refuse(const std::string& configured, const std::string& next,
                                  const std::vector<std::string>& allowed = {}) {
    return refuseRedirect(configured, url(next), allowed, Clock::now() + std::chrono::seconds(5),
                          nullptr);
}

TEST(RedirectPolicy, AddressScopes) {
    EXPECT_EQ(addressScope("127.0.0.1"), AddressScope::loopback);
    EXPECT_EQ(addressScope("127.255.0.9"), AddressScope::loopback);
    EXPECT_EQ(addressScope("0.0.0.0"), AddressScope::loopback);
    EXPECT_EQ(addressScope("::1"), AddressScope::loopback);
    EXPECT_EQ(addressScope("::"), AddressScope::loopback);
    EXPECT_EQ(addressScope("::ffff:127.0.0.1"), AddressScope::loopback);
    EXPECT_EQ(addressScope("169.254.169.254"), AddressScope::link_local);
    EXPECT_EQ(addressScope("fe80::1"), AddressScope::link_local);
    EXPECT_EQ(addressScope("fe80::1%eth0"), AddressScope::link_local);
    EXPECT_EQ(addressScope("10.1.2.3"), AddressScope::private_use);
    EXPECT_EQ(addressScope("172.16.0.1"), AddressScope::private_use);
    EXPECT_EQ(addressScope("172.31.255.255"), AddressScope::private_use);
    EXPECT_EQ(addressScope("192.168.1.1"), AddressScope::private_use);
    EXPECT_EQ(addressScope("100.64.0.1"), AddressScope::private_use);
    EXPECT_EQ(addressScope("fd00::5"), AddressScope::private_use);
    EXPECT_EQ(addressScope("::ffff:10.0.0.1"), AddressScope::private_use);
    EXPECT_EQ(addressScope("172.32.0.1"), AddressScope::global);
    EXPECT_EQ(addressScope("93.184.216.34"), AddressScope::global);
    EXPECT_EQ(addressScope("2001:db8::1"), AddressScope::global);
    EXPECT_EQ(addressScope("example.com"), std::nullopt);
}

TEST(RedirectPolicy, TheSameOriginIsAlwaysFollowed) {
    EXPECT_EQ(refuse("http://127.0.0.1:8080", "http://127.0.0.1:8080/other?x=1"), std::nullopt);
    EXPECT_EQ(refuse("https://10.0.0.1:443", "https://10.0.0.1/x"), std::nullopt);
}

TEST(RedirectPolicy, AnotherOriginNeedsRedirectOrigins) {
    const auto refused = refuse("http://127.0.0.1:8080", "http://127.0.0.1:9090/");
    ASSERT_TRUE(refused);
    EXPECT_EQ(*refused,
              "it leads to another origin, http://127.0.0.1:9090, which is not listed in "
              "redirect_origins");
    // Another scheme or port is another origin.
    EXPECT_TRUE(refuse("http://93.184.216.34:80", "https://93.184.216.34/"));
    EXPECT_EQ(refuse("http://127.0.0.1:8080", "http://127.0.0.1:9090/x", {"http://127.0.0.1:9090"}),
              std::nullopt);
}

TEST(RedirectPolicy, ALocalRangeOnlyFromTheSameRange) {
    // From a public upstream, never into loopback, link-local or private, even when listed.
    const std::vector<std::string> listed{"http://127.0.0.1:80", "http://169.254.169.254:80",
                                          "http://10.0.0.7:80", "http://[::1]:80"};
    for (const char* target : {"http://127.0.0.1/", "http://169.254.169.254/latest/meta-data",
                               "http://10.0.0.7/", "http://[::1]/"}) {
        const auto refused = refuse("http://93.184.216.34:80", target, listed);
        ASSERT_TRUE(refused) << target;
        EXPECT_NE(refused->find("the configured URL's host is not in that range"),
                  std::string::npos)
            << *refused;
    }
    const auto metadata =
        refuse("http://127.0.0.1:80", "http://169.254.169.254/latest/meta-data", listed);
    ASSERT_TRUE(metadata);
    EXPECT_EQ(*metadata,
              "http://169.254.169.254:80 resolves to 169.254.169.254, a link-local address, and "
              "the configured URL's host is not in that range");
    // Loopback to loopback, private to private: the configured URL is there itself.
    EXPECT_EQ(refuse("http://127.0.0.1:8080", "http://127.0.0.1/", listed), std::nullopt);
    EXPECT_EQ(refuse("http://10.9.9.9:80", "http://10.0.0.7/", listed), std::nullopt);
    // A public target is fine once listed.
    EXPECT_EQ(
        refuse("http://127.0.0.1:8080", "https://93.184.216.34/", {"https://93.184.216.34:443"}),
        std::nullopt);
}

TEST(RedirectPolicy, AFollowedHopPinsItsRuleForTheAddressesItConnectsTo) {
    // The name was checked when the redirect came; the rule goes with the hop's connection, so
    // that a name answering a public address first and a private one at connect time is caught.
    AddressCheck pin;
    EXPECT_EQ(refuseRedirect("http://93.184.216.34:80", url("http://93.184.216.35/x"),
                             {"http://93.184.216.35:80"}, Clock::now() + std::chrono::seconds(5),
                             nullptr, &pin),
              std::nullopt);
    ASSERT_TRUE(pin);
    EXPECT_EQ(pin("93.184.216.36"), std::nullopt);
    EXPECT_EQ(pin("10.0.0.7"),
              "http://93.184.216.35:80 resolves to 10.0.0.7, a private address, and the "
              "configured URL's host is not in that range");
    EXPECT_TRUE(pin("169.254.169.254"));
    EXPECT_TRUE(pin("::1"));
    // From a loopback upstream, loopback stays allowed, private does not.
    EXPECT_EQ(
        refuseRedirect("http://127.0.0.1:8080", url("http://127.0.0.2:9/"), {"http://127.0.0.2:9"},
                       Clock::now() + std::chrono::seconds(5), nullptr, &pin),
        std::nullopt);
    ASSERT_TRUE(pin);
    EXPECT_EQ(pin("127.0.0.9"), std::nullopt);
    EXPECT_TRUE(pin("192.168.0.1"));
    // Back to the configured origin: no rule (the operator chose that host).
    EXPECT_EQ(refuseRedirect("http://127.0.0.1:8080", url("http://127.0.0.1:8080/y"), {},
                             Clock::now() + std::chrono::seconds(5), nullptr, &pin),
              std::nullopt);
    EXPECT_FALSE(pin);
}

TEST(RedirectPolicy, RedirectOriginsEntriesAreOrigins) {
    std::string error;
    EXPECT_EQ(parseOrigin("https://API.example.com", error), "https://api.example.com:443");
    EXPECT_EQ(parseOrigin("http://127.0.0.1:9000/", error), "http://127.0.0.1:9000");
    EXPECT_EQ(parseOrigin("http://[::1]:9000", error), "http://[::1]:9000");
    EXPECT_EQ(parseOrigin("https://api.example.com/v1", error), std::nullopt);
    EXPECT_EQ(error, "expected an origin (scheme://host[:port]), without a path or query");
    EXPECT_EQ(parseOrigin("https://api.example.com/?a=1", error), std::nullopt);
    EXPECT_EQ(parseOrigin("api.example.com", error), std::nullopt);
    EXPECT_EQ(error, "expected an absolute http:// or https:// URL");
}

}  // namespace
}  // namespace crank::sdk::http
