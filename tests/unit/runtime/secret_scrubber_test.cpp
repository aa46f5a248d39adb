// The secret scrubber: raw, JSON-escaped and wire-form (percent-encoded, base64) occurrences,
// overlaps, short secrets, JSON kept valid.

#include "runtime/secret_scrubber.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "runtime/secret_wire_forms.h"

namespace crank::runtime {
namespace {

bool isJson(const std::string& text) {
    rapidjson::Document doc;
    doc.Parse(text.data(), text.size());
    return !doc.HasParseError();
}

TEST(SecretScrubber, WithoutSecretsNothingChanges) {
    const SecretScrubber none;
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(none.scrub("Bearer abcdef"), "Bearer abcdef");
    EXPECT_EQ(none.scrubJson(R"({ "a" : "abcdef" })"), R"({ "a" : "abcdef" })");
    std::string text = "abcdef";
    EXPECT_FALSE(none.scrubInPlace(text));
    EXPECT_TRUE(SecretScrubber(std::vector<std::string>{}).empty());
}

TEST(SecretScrubber, SecretsShorterThanFourAreIgnored) {
    EXPECT_TRUE(SecretScrubber({"", "a", "abc"}).empty());
    const SecretScrubber scrubber({"abc", "wxyz"});
    EXPECT_FALSE(scrubber.empty());
    EXPECT_EQ(scrubber.scrub("abc wxyz abcwxyz"), "abc [redacted] abc[redacted]");
}

TEST(SecretScrubber, EveryRawOccurrenceIsReplaced) {
    const SecretScrubber scrubber({"t0k3n-xyz", "hunter22"});
    EXPECT_EQ(scrubber.scrub("Bearer t0k3n-xyz refused; retry with t0k3n-xyz or hunter22"),
              "Bearer [redacted] refused; retry with [redacted] or [redacted]");
    std::string text = "no secret here";
    EXPECT_FALSE(scrubber.scrubInPlace(text));
    EXPECT_EQ(text, "no secret here");
}

TEST(SecretScrubber, JsonEscapedFormsAreReplaced) {
    const std::string secret = R"(pa"ss\word)";
    const SecretScrubber scrubber({secret});
    // As a plugin embeds the auth JSON in a message: the secret appears escaped.
    EXPECT_EQ(scrubber.scrub(R"(refused {"password":"pa\"ss\\word"})"),
              R"(refused {"password":"[redacted]"})");
    // And raw in plain text.
    EXPECT_EQ(scrubber.scrub("refused " + secret + "!"), "refused [redacted]!");
    // Control characters: the escapes of RapidJSON (\b, upper-case hex), the SDK (\b, lower-case)
    // and crankd's jsonString (\u0008).
    const SecretScrubber control({std::string("ab\bcd\x01z")});
    EXPECT_EQ(control.scrub(R"("ab\bcd\u0001z")"), R"("[redacted]")");
    EXPECT_EQ(control.scrub(R"("ab\u0008cd\u0001z")"), R"("[redacted]")");
    EXPECT_EQ(control.scrub(R"("ab\bcd\U0001z")"), R"("ab\bcd\U0001z")");  // not an escape
}

TEST(SecretScrubber, OverlappingOccurrencesBecomeOneMarker) {
    const SecretScrubber two({"abcdef", "defghi"});
    EXPECT_EQ(two.scrub("xxabcdefghiyy"), "xx[redacted]yy");
    const SecretScrubber repeated({"aaaa"});
    EXPECT_EQ(repeated.scrub("aaaaaa-"), "[redacted]-");
    // Adjacent, not overlapping: one marker each.
    EXPECT_EQ(repeated.scrub("aaaa-aaaa"), "[redacted]-[redacted]");
    // A secret inside another one.
    const SecretScrubber nested({"secret-value", "value"});
    EXPECT_EQ(nested.scrub("a secret-value and a value"), "a [redacted] and a [redacted]");
}

TEST(SecretScrubber, ScrubJsonReturnsTheSameTextWhenNoSecretOccurs) {
    const SecretScrubber scrubber({"t0k3n-xyz"});
    const std::string json = R"({ "a" : 1.50, "b": ["x", null] })";
    EXPECT_EQ(scrubber.scrubJson(json), json);
}

TEST(SecretScrubber, ScrubJsonKeepsTheJsonValid) {
    const std::string secret = R"(to"k\en99)";
    const SecretScrubber scrubber({secret, "123456", "nabc"});
    const std::string json =
        R"({"auth":{"type":"bearer","token":"to\"k\\en99","headers":{"X-A":"b"}},)"
        R"("pin":123456,"n":7,"msg":"Bearer to\"k\\en99!","a":"x\nabcz","b":"nabc"})";
    const std::string out = scrubber.scrubJson(json);
    ASSERT_TRUE(isJson(out)) << out;
    rapidjson::Document doc;
    doc.Parse(out.c_str());
    EXPECT_STREQ(doc["auth"]["token"].GetString(), "[redacted]");
    EXPECT_STREQ(doc["auth"]["type"].GetString(), "bearer");
    EXPECT_STREQ(doc["auth"]["headers"]["X-A"].GetString(), "b");
    EXPECT_STREQ(doc["pin"].GetString(), "[redacted]");  // a number holding a secret
    EXPECT_EQ(doc["n"].GetInt(), 7);
    EXPECT_STREQ(doc["msg"].GetString(), "Bearer [redacted]!");
    // "\nabc" is a newline then "abc", not the secret "nabc": left alone.
    EXPECT_STREQ(doc["a"].GetString(), "x\nabcz");
    EXPECT_STREQ(doc["b"].GetString(), "[redacted]");
    EXPECT_EQ(out.find("en99"), std::string::npos);
}

TEST(SecretScrubber, ScrubJsonScrubsKeysAndNestedEscapedText) {
    const SecretScrubber scrubber({R"(q"uote)"});
    const std::string key = R"({"q\"uote":1})";
    EXPECT_EQ(scrubber.scrubJson(key), R"({"[redacted]":1})");
    // A string holding JSON text that holds the secret (an error message quoting the auth JSON,
    // kept in an item): escaped twice in the outer text.
    const std::string json = R"({"k":"inner {\"k\":\"q\\\"uote\"}"})";
    const std::string out = scrubber.scrubJson(json);
    ASSERT_TRUE(isJson(out)) << out;
    EXPECT_EQ(out, R"({"k":"inner {\"k\":\"[redacted]\"}"})");
}

TEST(SecretScrubber, ScrubJsonOnTextThatIsNotJsonScrubsItAsText) {
    const SecretScrubber scrubber({"t0k3n-xyz"});
    EXPECT_EQ(scrubber.scrubJson("not json: t0k3n-xyz"), "not json: [redacted]");
}

TEST(SecretScrubber, PercentEncodedFormsAreReplacedInEitherHexCase) {
    const SecretScrubber scrubber({"k/y+z 9=&"});
    // As an API key in a query, echoed by an upstream that shows its own URL.
    EXPECT_EQ(scrubber.scrub("GET /x?api_key=k%2Fy%2Bz%209%3D%26&n=1"),
              "GET /x?api_key=[redacted]&n=1");
    EXPECT_EQ(scrubber.scrub("k%2fy%2bz%209%3d%26"), "[redacted]");
    // A space as '+' (forms), and bytes that needed no encoding encoded anyway.
    EXPECT_EQ(scrubber.scrub("k%2Fy%2Bz+9%3D%26"), "[redacted]");
    EXPECT_EQ(scrubber.scrub("%6B%2F%79%2B%7A%20%39%3D%26"), "[redacted]");
    // Within JSON text, the text stays valid.
    const std::string out =
        scrubber.scrubJson(R"({"url":"http://h/x?api_key=k%2Fy%2Bz%209%3D%26"})");
    EXPECT_EQ(out, R"({"url":"http://h/x?api_key=[redacted]"})");
    // Not the secret: a different byte, or a cut.
    EXPECT_EQ(scrubber.scrub("k%2Fy%2Bz%209%3D%27"), "k%2Fy%2Bz%209%3D%27");
    EXPECT_EQ(scrubber.scrub("k%2Fy%2Bz%209%3D"), "k%2Fy%2Bz%209%3D");
    EXPECT_EQ(scrubber.scrub("k%2Fy%2Bz%2"), "k%2Fy%2Bz%2");
}

TEST(SecretScrubber, Base64FormsAreReplacedAlsoPercentEncoded) {
    // base64("s3cr3t?>") is "czNjcjN0Pz4=" (padded); base64("s3c???") is "czNjPz8/", URL-safe
    // "czNjPz8_".
    const SecretScrubber scrubber({"s3cr3t?>", "s3c???"});
    EXPECT_EQ(scrubber.scrub("token czNjcjN0Pz4= and czNjcjN0Pz4"),
              "token [redacted] and [redacted]");
    EXPECT_EQ(scrubber.scrub("a czNjPz8/ b czNjPz8_ c"), "a [redacted] b [redacted] c");
    EXPECT_EQ(scrubber.scrub("q=czNjPz8%2F&r=czNjcjN0Pz4%3d"), "q=[redacted]&r=[redacted]");
}

TEST(SecretWireForms, Base64FormsAreTheFourVariantsWithoutDuplicates) {
    EXPECT_EQ(base64Forms("s3c???"), (std::vector<std::string>{"czNjPz8/", "czNjPz8_"}));
    EXPECT_EQ(base64Forms("ab?"), (std::vector<std::string>{"YWI/", "YWI_"}));
    EXPECT_EQ(base64Forms("a>"), (std::vector<std::string>{"YT4", "YT4="}));
}

TEST(SecretWireForms, FindPercentEncodedNeedsAnEncodedByte) {
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    findPercentEncoded("abcd ab%63d ab+d", "abcd", spans);
    ASSERT_EQ(spans.size(), 1U);
    EXPECT_EQ(spans[0], std::make_pair(std::size_t{5}, std::size_t{11}));
    spans.clear();
    findPercentEncoded("x+y %2", "x y", spans);
    ASSERT_EQ(spans.size(), 1U);
    EXPECT_EQ(spans[0], std::make_pair(std::size_t{0}, std::size_t{3}));
}

TEST(SecretScrubber, CopiesScrubAlike) {
    const SecretScrubber scrubber({"t0k3n-xyz"});
    const SecretScrubber copy = scrubber;  // NOLINT(performance-unnecessary-copy-initialization)
    EXPECT_EQ(copy.scrub("t0k3n-xyz"), "[redacted]");
}

}  // namespace
}  // namespace crank::runtime
