// Input templates in URL members (json/url_template.h): values encoded for where they land, dot
// segments refused, `| url` not encoded twice, URL members found in a plugin's schema.

#include "json/url_template.h"

#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json/json_template.h"

namespace crank::json {
namespace {

constexpr std::size_t kMaxBytes = 1U << 20U;
const std::vector<std::vector<std::string>> kUrl{{"url"}, {"job", "status_url"}};

std::string rendered(std::string_view config, std::string_view input) {
    Result<CompiledTemplate> t = compileTemplate(config, "operations[0].config", kUrl);
    if (!t.ok()) {
        return "<compile: " + t.error().message + ">";
    }
    Result<std::string> out = render(*t, input, kMaxBytes);
    return out.ok() ? *out : "<render: " + out.error().message + ">";
}

TEST(UrlTemplate, WhereAValueLands) {
    EXPECT_EQ(urlPartAfter(""), UrlPart::authority);
    EXPECT_EQ(urlPartAfter("http://"), UrlPart::authority);
    EXPECT_EQ(urlPartAfter("http://h:"), UrlPart::authority);
    EXPECT_EQ(urlPartAfter("http://h/"), UrlPart::path);
    EXPECT_EQ(urlPartAfter("http://h/a/b"), UrlPart::path);
    EXPECT_EQ(urlPartAfter("http://h/a?x="), UrlPart::query);
    EXPECT_EQ(urlPartAfter("http://h?x="), UrlPart::query);
    EXPECT_EQ(urlPartAfter("http://h/a?x=1#"), UrlPart::fragment);
    EXPECT_EQ(urlPartAfter("/jobs/"), UrlPart::path);
    EXPECT_EQ(urlPartAfter("?a="), UrlPart::query);
}

TEST(UrlTemplate, UnfilteredValuesAreEncodedForTheirPart) {
    const std::string in =
        R"({"id": "../a/b?c&d=%2F", "q": "x&y=z #", "host": "127.0.0.1:8080/evil?", "n": 7})";
    EXPECT_EQ(
        rendered(R"({"url": "http://h/items/{{ id }}?q={{ q }}&n={{ n }}#{{ q }}"})", in),
        R"({"url":"http://h/items/..%2Fa%2Fb%3Fc%26d%3D%252F?q=x%26y%3Dz%20%23&n=7#x%26y%3Dz%20%23"})");
    // In the authority a value may give a host and port, nothing more.
    EXPECT_EQ(rendered(R"({"url": "http://{{ host }}/x"})", in),
              R"({"url":"http://127.0.0.1:8080%2Fevil%3F/x"})");
    // A whole-string URL template is a string, encoded as an authority.
    EXPECT_EQ(rendered(R"({"url": "{{ host }}"})", in), R"({"url":"127.0.0.1:8080%2Fevil%3F"})");
    // Nested URL members too; other members as they were.
    EXPECT_EQ(rendered(R"({"job": {"status_url": "/jobs/{{ q }}"}, "other": "/{{ id }}"})", in),
              R"({"job":{"status_url":"/jobs/x%26y%3Dz%20%23"},"other":"/../a/b?c&d=%2F"})");
}

TEST(UrlTemplate, TheUrlFilterIsNotAppliedTwice) {
    EXPECT_EQ(rendered(R"({"url": "http://h/{{ q | url }}/{{ q }}"})", R"({"q": "a b/c"})"),
              R"({"url":"http://h/a%20b%2Fc/a%20b%2Fc"})");
    // After `json`, the JSON text is encoded.
    EXPECT_EQ(rendered(R"({"url": "http://h/?f={{ q | json }}"})", R"({"q": "a"})"),
              R"({"url":"http://h/?f=%22a%22"})");
}

TEST(UrlTemplate, DotSegmentsAreRefused) {
    for (const char* config :
         {R"({"url": "http://h/items/{{ id }}"})", R"({"url": "http://h/items/{{ id | url }}/x"})",
          R"({"url": "http://h/{{ id }}?a=1"})", R"({"url": "http://h/a/{{ id }}{{ other }}"})"}) {
        for (const char* id : {".", ".."}) {
            EXPECT_EQ(
                rendered(config, std::string(R"({"id": ")") + id + R"("})"),
                std::string("<render: operations[0].config.url: the value of {{ ") +
                    (std::string(config).find("| url") != std::string::npos ? "id | url" : "id") +
                    " }} is \"" + id +
                    "\", a dot segment, which a URL path refuses (it would step out of the "
                    "path the operation names)>")
                << config << " " << id;
        }
    }
    // Not a whole segment, or not in the path: fine.
    EXPECT_EQ(rendered(R"({"url": "http://h/items/{{ id }}.json"})", R"({"id": ".."})"),
              R"({"url":"http://h/items/...json"})");
    EXPECT_EQ(rendered(R"({"url": "http://h/x{{ id }}"})", R"({"id": ".."})"),
              R"({"url":"http://h/x.."})");
    EXPECT_EQ(rendered(R"({"url": "http://h/?q={{ id }}"})", R"({"id": ".."})"),
              R"({"url":"http://h/?q=.."})");
    EXPECT_EQ(rendered(R"({"url": "http://h/{{ id }}"})", R"({"id": "..."})"),
              R"({"url":"http://h/..."})");
}

TEST(UrlTemplate, UriMembersComeFromTheSchema) {
    rapidjson::Document schema;
    schema.Parse(R"({"type": "object", "properties": {
        "url": {"type": "string", "format": "uri"},
        "name": {"type": "string"},
        "when": {"type": "string", "format": "date-time"},
        "job": {"type": "object", "properties": {"status_url": {"format": "uri"},
                                                   "id_path": {"type": "string"}}}}})");
    ASSERT_FALSE(schema.HasParseError());
    EXPECT_EQ(uriMembers(schema), kUrl);
}

}  // namespace
}  // namespace crank::json
