#include <string>

#include <gtest/gtest.h>

#include <crank/sdk/http/url.hpp>

namespace crank::sdk::http {
namespace {

Url parsed(std::string_view text) {
    std::string error;
    auto url = parseUrl(text, error);
    EXPECT_TRUE(url.has_value()) << text << ": " << error;
    return url.value_or(Url{});
}

std::string parseError(std::string_view text) {
    std::string error;
    EXPECT_FALSE(parseUrl(text, error).has_value()) << text;
    return error;
}

TEST(HttpUrl, ParsesSchemeHostPortPathQuery) {
    const Url u = parsed("HTTP://Example.COM:8080/a/b?x=1&y=2");
    EXPECT_EQ(u.scheme, "http");
    EXPECT_EQ(u.host, "example.com");
    EXPECT_EQ(u.port, 8080);
    EXPECT_EQ(u.path, "/a/b");
    EXPECT_EQ(u.query, "x=1&y=2");
    EXPECT_EQ(u.target(), "/a/b?x=1&y=2");
    EXPECT_EQ(u.describe(), "http://example.com:8080/a/b");
}

TEST(HttpUrl, DefaultsPortsAndPath) {
    EXPECT_EQ(parsed("http://h").port, 80);
    EXPECT_EQ(parsed("https://h").port, 443);
    EXPECT_EQ(parsed("http://h").path, "/");
    EXPECT_EQ(parsed("http://h?q=1").target(), "/?q=1");
}

TEST(HttpUrl, Ipv6HostsKeepTheirBracketsInTheAuthority) {
    const Url u = parsed("http://[::1]:9000/x");
    EXPECT_EQ(u.host, "::1");
    EXPECT_EQ(u.authority(), "[::1]:9000");
    EXPECT_EQ(u.origin(), "http://[::1]:9000");
}

TEST(HttpUrl, EncodesBytesThatCannotAppearInAUrl) {
    const Url u = parsed("http://h/a b/\xC3\xA9?q=a b&r=%41");
    EXPECT_EQ(u.path, "/a%20b/%C3%A9");
    EXPECT_EQ(u.query, "q=a%20b&r=%41");  // an existing escape is kept, not encoded twice
}

TEST(HttpUrl, DescribeNeverShowsTheQuery) {
    EXPECT_EQ(parsed("http://h:1/p?api_key=secret").describe(), "http://h:1/p");
    // A path made from a caller's arguments is cut like a body excerpt in messages.
    const std::string longPath = "/" + std::string(2000, 'a');
    const std::string described = parsed("http://h:1" + longPath).describe();
    EXPECT_EQ(described, "http://h:1/" + std::string(Url::kMaxPathInMessages - 1, 'a') + "...");
}

TEST(HttpUrl, RefusesWhatCannotBeSent) {
    EXPECT_NE(parseError("ftp://h/").find("http or https"), std::string::npos);
    EXPECT_NE(parseError("/relative").find("absolute"), std::string::npos);
    EXPECT_NE(parseError("http://user:pw@h/").find("auth profile"), std::string::npos);
    EXPECT_NE(parseError("http://h/#frag").find("fragment"), std::string::npos);
    EXPECT_NE(parseError("http://h:0/").find("port"), std::string::npos);
    EXPECT_NE(parseError("http://h:65536/").find("port"), std::string::npos);
    EXPECT_NE(parseError("http://h:12x/").find("port"), std::string::npos);
    EXPECT_NE(parseError("http:///path").find("no host"), std::string::npos);
    EXPECT_NE(parseError("http://[::1/").find("']'"), std::string::npos);
    EXPECT_NE(parseError("http://a b/").find("host"), std::string::npos);
}

TEST(HttpUrl, ResolvesRedirectLocations) {
    const Url base = parsed("http://h:1/a/b/c?q=1");
    std::string error;
    EXPECT_EQ(resolveUrl(base, "https://o:2/x", error)->describe(), "https://o:2/x");
    EXPECT_EQ(resolveUrl(base, "//o:3/y", error)->origin(), "http://o:3");
    EXPECT_EQ(resolveUrl(base, "/z?k=v", error)->target(), "/z?k=v");
    EXPECT_EQ(resolveUrl(base, "d", error)->path, "/a/b/d");
    EXPECT_EQ(resolveUrl(base, "../d", error)->path, "/a/d");
    EXPECT_EQ(resolveUrl(base, "../../../../d", error)->path, "/d");
    EXPECT_EQ(resolveUrl(base, "./", error)->path, "/a/b/");
    EXPECT_EQ(resolveUrl(base, "?only=query", error)->target(), "/a/b/c?only=query");
    EXPECT_EQ(resolveUrl(base, "/p/../q", error)->path, "/q");
    EXPECT_FALSE(resolveUrl(base, "ftp://x/", error).has_value());
}

TEST(HttpUrl, QueryParametersArePercentEncoded) {
    std::string q;
    appendQueryParameter(q, "a b", "x&y=z");
    appendQueryParameter(q, "n", "\xC3\xA9~-._");
    EXPECT_EQ(q, "a%20b=x%26y%3Dz&n=%C3%A9~-._");
}

TEST(HttpUrl, MessagesQuoteAtMostAnExcerpt) {
    // A hostile URL (a config value, a redirect's Location) never makes a message its size.
    const std::string huge(std::size_t{1} << 20U, 'x');
    for (const std::string& text :
         {"http://h:" + huge, "http://" + huge + "^/", huge + "://h/", "http://h\x01" + huge}) {
        std::string error;
        EXPECT_FALSE(parseUrl(text, error).has_value());
        EXPECT_FALSE(error.empty());
        EXPECT_LT(error.size(), 512U) << error.substr(0, 200);
    }
}

}  // namespace
}  // namespace crank::sdk::http
