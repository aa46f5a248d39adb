// Which upstream serves a URI nobody lists: RFC 6570 templates matched as the federation reads
// them, in time bounded by the template's length times the URI's, whatever either holds.

#include "federation/uri_match.h"

#include <string>

#include <gtest/gtest.h>

namespace crank::federation {
namespace {

TEST(UriMatchTest, ASimpleExpressionStopsAtSlashQueryAndFragment) {
    EXPECT_TRUE(matchesUriTemplate("file:///{name}", "file:///a.txt"));
    EXPECT_FALSE(matchesUriTemplate("file:///{name}", "file:///dir/a.txt"));
    EXPECT_FALSE(matchesUriTemplate("file:///{name}", "file:///a?x=1"));
    EXPECT_FALSE(matchesUriTemplate("file:///{name}", "file:///a#top"));
    EXPECT_FALSE(matchesUriTemplate("file:///{name}", "file:///"));  // an expression takes >= 1
    EXPECT_TRUE(matchesUriTemplate("users/{id}/posts/{post}", "users/7/posts/42"));
    EXPECT_FALSE(matchesUriTemplate("users/{id}/posts/{post}", "users/7/posts/"));
    EXPECT_FALSE(matchesUriTemplate("users/{id}", "people/7"));
}

TEST(UriMatchTest, ReservedExpressionsTakeAnyCharacter) {
    EXPECT_TRUE(matchesUriTemplate("file:///{+path}", "file:///dir/a.txt"));
    EXPECT_TRUE(matchesUriTemplate("file://{/path}", "file:///dir/a"));
    EXPECT_TRUE(matchesUriTemplate("doc{#section}", "doc#intro"));
    EXPECT_TRUE(matchesUriTemplate("file:///{+path}.md", "file:///a/b.md"));
    EXPECT_FALSE(matchesUriTemplate("file:///{+path}.md", "file:///a/b.txt"));
}

TEST(UriMatchTest, LiteralsMatchExactlyAndTheWholeUriMustBeTaken) {
    EXPECT_TRUE(matchesUriTemplate("mem://fixed", "mem://fixed"));
    EXPECT_FALSE(matchesUriTemplate("mem://fixed", "mem://fixed/more"));
    EXPECT_FALSE(matchesUriTemplate("mem://fixed", "mem://fix"));
    EXPECT_TRUE(matchesUriTemplate("", ""));
    EXPECT_FALSE(matchesUriTemplate("", "x"));
}

TEST(UriMatchTest, AMalformedTemplateMatchesNothing) {
    EXPECT_FALSE(matchesUriTemplate("file:///{name", "file:///{name"));
    EXPECT_FALSE(matchesUriTemplate("file:///{name", "file:///a"));
    std::string many;
    for (int i = 0; i < 33; ++i) {
        many += "{x}-";
    }
    std::string uri;
    for (int i = 0; i < 33; ++i) {
        uri += "a-";
    }
    EXPECT_FALSE(matchesUriTemplate(many, uri));  // past 32 expressions
    EXPECT_TRUE(matchesUriTemplate(many.substr(0, 32 * 4), uri.substr(0, 32 * 2)));
}

TEST(UriMatchTest, AdjacentExpressionsAgainstALongUriEndWithoutBacktracking) {
    // A backtracking matcher tries every split of the URI between the expressions: with 32 of
    // them and 8,000 characters it would not end in the life of the test. This one reads the
    // URI once.
    std::string tmpl;
    for (int i = 0; i < 32; ++i) {
        tmpl += "{+x}";
    }
    tmpl += "!";
    const std::string uri(kMaxMatchedUriBytes - 1, 'a');
    EXPECT_FALSE(matchesUriTemplate(tmpl, uri));
    EXPECT_TRUE(matchesUriTemplate(tmpl, uri + "!"));
}

TEST(UriMatchTest, TemplatesAndUrisPastTheirBoundsMatchNothing) {
    EXPECT_TRUE(matchesUriTemplate("file:///{+path}", "file:///" + std::string(8000, 'a')));
    EXPECT_FALSE(
        matchesUriTemplate("file:///{+path}", "file:///" + std::string(kMaxMatchedUriBytes, 'a')));
    const std::string longTemplate = "file:///" + std::string(kMaxTemplateBytes, 'a') + "{x}";
    EXPECT_FALSE(
        matchesUriTemplate(longTemplate, "file:///" + std::string(kMaxTemplateBytes, 'a') + "b"));
}

}  // namespace
}  // namespace crank::federation
