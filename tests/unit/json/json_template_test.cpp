#include "json/json_template.h"

#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json_test_support.h"

namespace crank::json {
namespace {

constexpr std::size_t max_bytes = 1U << 20U;

const char* const input = R"({"q": "a b&c/é", "limit": 5, "on": true, "none": null,
    "obj": {"k": [1, "x"]}, "list": [1, 2], "user": {"id": "u-1"}, "odd key": "o"})";

std::string rendered(std::string_view config, std::string_view in = input) {
    Result<CompiledTemplate> t = compileTemplate(config, "config");
    if (!t.ok()) {
        return "<compile: " + t.error().message + ">";
    }
    Result<std::string> out = render(*t, in, max_bytes);
    return out.ok() ? *out : "<render: " + out.error().message + ">";
}

std::string compileError(std::string_view config) {
    Result<CompiledTemplate> t = compileTemplate(config, "operations[0].config");
    return t.ok() ? "<compiled>" : t.error().message;
}

TEST(JsonTemplate, WholeStringKeepsType) {
    EXPECT_EQ(rendered(R"({"n": "{{ limit }}", "b": "{{on}}", "o": "{{ obj }}", "s": "{{q}}",
                          "l": "{{ list }}", "z": "{{ none }}", "all": "{{ $ }}"})"),
              R"({"n":5,"b":true,"o":{"k":[1,"x"]},"s":"a b&c/é","l":[1,2],"z":null,"all":)"
              R"({"q":"a b&c/é","limit":5,"on":true,"none":null,"obj":{"k":[1,"x"]},"list":[1,2],)"
              R"("user":{"id":"u-1"},"odd key":"o"}})");
}

TEST(JsonTemplate, InsideLongerStringRendersText) {
    EXPECT_EQ(
        rendered(
            R"({"url": "/users/{{ user.id }}/items?limit={{limit}}&on={{on}}&o={{obj}}&n={{none}}"})"),
        R"({"url":"/users/u-1/items?limit=5&on=true&o={\"k\":[1,\"x\"]}&n="})");
    EXPECT_EQ(rendered(R"(["{{ list.1 }}{{ list.0 }}", " {{ limit }}"])"), R"(["21"," 5"])");
}

TEST(JsonTemplate, Filters) {
    EXPECT_EQ(rendered(R"({"u": "?q={{ q | url }}", "w": "{{ q | url }}", "n": "{{ limit | url }}",
                          "j": "{{ obj | json }}", "js": "{{ q | json }}", "x": "a{{ q | json }}"})"),
              R"({"u":"?q=a%20b%26c%2F%C3%A9","w":"a%20b%26c%2F%C3%A9","n":"5",)"
              R"("j":"{\"k\":[1,\"x\"]}","js":"\"a b&c/é\"","x":"a\"a b&c/é\""})");
    EXPECT_EQ(rendered(R"({"d": "{{ missing | default: \"x y\" }}", "n": "{{ missing|default:3 }}",
                          "z": "{{ none | default: false }}", "keep": "{{ limit | default: 9 }}",
                          "chain": "{{ missing | default: \"a/b\" | url }}"})"),
              R"({"d":"x y","n":3,"z":false,"keep":5,"chain":"a%2Fb"})");
    EXPECT_EQ(rendered(R"({"p": "{{ missing | default: \"a|b\" }}"})"), R"({"p":"a|b"})");
}

TEST(JsonTemplate, MissingValues) {
    // A whole-string template with no value removes its member or element.
    EXPECT_EQ(
        rendered(
            R"({"a": "{{ missing }}", "b": 1, "c": "{{ user.nope }}", "d": ["{{ missing }}", 2, "{{ x.y }}"]})"),
        R"({"b":1,"d":[2]})");
    EXPECT_EQ(rendered(R"({"a": "{{ missing }}"})"), "{}");
    EXPECT_EQ(rendered(R"("{{ missing }}")"), "null");
    // Inside a longer string it renders as "".
    EXPECT_EQ(rendered(R"({"a": "x{{ missing }}y", "u": "{{ missing | url }}!"})"),
              R"({"a":"xy","u":"!"})");
    EXPECT_EQ(rendered(R"({"a": "{{ missing | url }}"})"), "{}");
}

TEST(JsonTemplate, EscapesAndLiterals) {
    EXPECT_EQ(rendered(R"({"a": "\\{{ not a template }}", "b": "}} {", "c": "\\x", "n": 1.5,
                          "{{ key }}": "k"})"),
              R"({"a":"{{ not a template }}","b":"}} {","c":"\\x","n":1.5,"{{ key }}":"k"})");
    EXPECT_EQ(rendered(R"({"a": "\\{{{{ limit }}"})"), R"({"a":"{{5"})");
}

TEST(JsonTemplate, PathsWithEscapes) {
    EXPECT_EQ(rendered(R"({"a": "{{ odd key }}", "b": "{{list.1}}"})"), R"({"a":"o","b":2})");
}

TEST(JsonTemplate, NoTemplates) {
    Result<CompiledTemplate> t =
        compileTemplate(R"({"url": "http://x", "n": [1, {"a": null}]})", "c");
    ASSERT_TRUE(t.ok());
    EXPECT_FALSE(t->hasTemplates());
    EXPECT_EQ(*render(*t, std::string_view("{}"), max_bytes),
              R"({"url":"http://x","n":[1,{"a":null}]})");
    Result<CompiledTemplate> with = compileTemplate(R"({"u": "{{ a }}"})", "c");
    ASSERT_TRUE(with.ok());
    EXPECT_TRUE(with->hasTemplates());
}

TEST(JsonTemplate, CompileErrorsNameTheConfigPath) {
    EXPECT_EQ(compileError(R"({"url": "/x/{{ id"})"),
              "operations[0].config.url: unclosed \"{{\" at byte 3");
    EXPECT_EQ(compileError(R"({"headers": {"X": "{{ id | urll }}"}})"),
              "operations[0].config.headers.X: unknown filter \"urll\" at byte 8; did you mean "
              "\"url\"?");
    EXPECT_EQ(compileError(R"({"q": ["ok", "{{ a..b }}"]})"),
              "operations[0].config.q[1]: bad path \"a..b\" at byte 5: empty member name (two "
              "dots in a row, or a trailing dot)");
    EXPECT_EQ(compileError(R"({"q": "{{ }}"})"),
              "operations[0].config.q: empty template at byte 0: write {{ path }}");
    EXPECT_EQ(compileError(R"({"q": "{{ a.* }}"})"),
              "operations[0].config.q: bad path \"a.*\" at byte 3: wildcards are not allowed in "
              "templates");
    EXPECT_EQ(compileError(R"({"q": "{{ a | zzzzzz }}"})"),
              "operations[0].config.q: unknown filter \"zzzzzz\" at byte 7 (filters: url, json, "
              "default)");
    EXPECT_EQ(compileError(R"({"q": "{{ a | }}"})"),
              "operations[0].config.q: expected a filter name after \"|\" at byte 7");
    EXPECT_EQ(compileError(R"({"q": "{{ a | default }}"})"),
              "operations[0].config.q: filter \"default\" needs a value at byte 7: write default: "
              "\"text\"");
    EXPECT_EQ(compileError(R"({"q": "{{ a | default: {} }}"})"),
              "operations[0].config.q: filter \"default\" at byte 7: expected a JSON string, "
              "number, true, false or null, got \"{}\"");
    EXPECT_EQ(compileError(R"({"q": "{{ a | url: 1 }}"})"),
              "operations[0].config.q: filter \"url\" at byte 7 takes no value");
    EXPECT_EQ(compileError(R"({"q": "{{ a | url json }}"})"),
              "operations[0].config.q: unexpected \"j\" at byte 11: expected \"|\" or \"}}\"");
    EXPECT_EQ(compileError(R"({"odd key": "{{ a {{ b }}"})"),
              "operations[0].config[\"odd key\"]: unexpected \"{{\" inside a template at byte 5");
    EXPECT_EQ(compileError(R"({"q": "{{"})"), "operations[0].config.q: unclosed \"{{\" at byte 0");
    EXPECT_EQ(compileError(R"({"q": "{{{{}}}}"})"),
              "operations[0].config.q: unexpected \"{{\" inside a template at byte 2");
    EXPECT_EQ(compileError("{"),
              "operations[0].config: malformed JSON at byte 1: missing a name "
              "for object member");
}

TEST(JsonTemplate, UnbalancedBracesHostile) {
    std::string config = "{\"a\": \"" + std::string(100'000, '{') + "\"}";
    EXPECT_EQ(compileError(config), "operations[0].config.a: unclosed \"{{\" at byte 0");
    std::string closing = "{\"a\": \"" + std::string(100'000, '}') + "\"}";
    EXPECT_EQ(compileError(closing), "<compiled>");
}

TEST(JsonTemplate, OutputBound) {
    Result<CompiledTemplate> t =
        compileTemplate(R"({"a": "{{ big }}", "b": "x{{ big }}"})", "config");
    ASSERT_TRUE(t.ok());
    const std::string big_input = "{\"big\": \"" + std::string(10'000, 'z') + "\"}";
    Result<std::string> out = render(*t, std::string_view(big_input), 5'000);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().message, "config: rendered config is larger than 5000 bytes");
    EXPECT_TRUE(render(*t, std::string_view(big_input), 30'000).ok());
    // Many expansions of one large value are cut early.
    std::string many = "[";
    for (int i = 0; i < 1000; ++i) {
        many += (i == 0 ? "" : ",") + std::string("\"{{ big }}\"");
    }
    Result<CompiledTemplate> fan = compileTemplate(many + "]", "config");
    ASSERT_TRUE(fan.ok());
    EXPECT_FALSE(render(*fan, std::string_view(big_input), 1'000'000).ok());
}

TEST(JsonTemplate, MalformedInput) {
    Result<CompiledTemplate> t = compileTemplate(R"({"a": "{{ x }}"})", "config");
    ASSERT_TRUE(t.ok());
    Result<std::string> out = render(*t, std::string_view("{\"x\": "), max_bytes);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().message, "input: malformed JSON at byte 6: invalid value");
    EXPECT_EQ(*render(*t, std::string_view("[1]"), max_bytes), "{}");  // non-object input
}

TEST(JsonTemplate, RenderOverParsedValue) {
    Result<CompiledTemplate> t = compileTemplate(R"({"a": "{{ x }}"})", "config");
    ASSERT_TRUE(t.ok());
    Document in = testing::parse(R"({"x": [true]})");
    EXPECT_EQ(*render(*t, in, max_bytes), R"({"a":[true]})");
}

}  // namespace
}  // namespace crank::json
