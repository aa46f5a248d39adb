// The GraphQL plugin's operation config (plugins/graphql/README.md, "Operation config"): every
// member with its default, every refusal with the path of the member at fault, and hostile input
// (malformed, truncated, deeply nested, huge) that must be refused without a crash.
#include "graphql_config.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace crank::graphql {
namespace {

using ::testing::HasSubstr;

constexpr const char* kDocument = "query Item($id: ID!) { item(id: $id) { id name } }";

struct Parsed {
    std::optional<GraphqlConfig> config;
    std::vector<ConfigProblem> problems;

    /// The message of the problem at `path`, or "<none at PATH: ...>" listing the others.
    std::string at(const std::string& path) const {
        for (const ConfigProblem& p : problems) {
            if (p.path == path) {
                return p.message;
            }
        }
        std::string all = "<none at " + path + ":";
        for (const ConfigProblem& p : problems) {
            all.append(" [").append(p.path).append("] ").append(p.message);
        }
        return all + ">";
    }
    bool has(const std::string& path) const {
        return std::any_of(problems.begin(), problems.end(),
                           [&](const ConfigProblem& p) { return p.path == path; });
    }
};

Parsed parse(std::string_view json, bool rendered = false) {
    Parsed out;
    out.config = parseGraphqlConfig(json, rendered, out.problems);
    return out;
}

/// A config with the endpoint and document set, plus `extra` members (",\"x\":1").
std::string config(const std::string& extra = "",
                   const std::string& endpoint = "http://127.0.0.1:4000/graphql") {
    return R"({"endpoint":")" + endpoint + R"(","document":")" + kDocument + "\"" + extra + "}";
}

TEST(GraphqlConfig, TheSmallestConfigTakesEveryDefault) {
    const Parsed p = parse(config());
    ASSERT_TRUE(p.config) << p.at("");
    EXPECT_TRUE(p.problems.empty());
    const GraphqlConfig& c = *p.config;
    EXPECT_EQ(c.endpoint_text, "http://127.0.0.1:4000/graphql");
    ASSERT_TRUE(c.endpoint);
    EXPECT_EQ(c.endpoint->origin(), "http://127.0.0.1:4000");
    EXPECT_EQ(c.document, kDocument);
    EXPECT_EQ(c.operation_name, "");
    EXPECT_FALSE(c.variables);
    EXPECT_EQ(c.cursor_variable, "");
    EXPECT_FALSE(c.data_path.set());
    EXPECT_FALSE(c.has_next_path.set());
    EXPECT_EQ(c.schema_file, "");
    EXPECT_TRUE(c.introspection);
    EXPECT_EQ(c.introspection_timeout_ms, 5000);
    // The HTTP settings' documented defaults.
    EXPECT_TRUE(c.http.headers.empty());
    EXPECT_EQ(c.http.connect_ms, 5000);
    EXPECT_EQ(c.http.headers_ms, 10000);
    EXPECT_FALSE(c.http.total_ms);
    EXPECT_TRUE(c.http.tls.verify);
    EXPECT_EQ(c.http.tls.ca_file, "");
    EXPECT_EQ(c.http.max_response_bytes, 1048576U);
    EXPECT_EQ(c.http.follow_redirects, 5);
    EXPECT_TRUE(c.http.compression);
    EXPECT_EQ(c.http.max_idle, 16U);
    EXPECT_EQ(c.http.idle_timeout_ms, 30000);
}

TEST(GraphqlConfig, EveryMemberIsRead) {
    const Parsed p = parse(config(
        R"(,"operation_name":"Item","variables":{"id":"{{input.id}}","n":[1, 2]},
           "cursor_variable":"after","data_path":"item.owner","has_next_path":"page.hasNext",
           "schema_file":"/tmp/schema.graphql","introspection":false,
           "introspection_timeout_ms":60000,"headers":{"X-Tenant":"t1","X-Num":7},
           "timeouts":{"connect_ms":100,"headers_ms":200,"total_ms":300},
           "tls":{"verify":false,"ca_file":"/etc/ca.pem"},"max_response_bytes":4096,
           "follow_redirects":0,"compression":false,
           "keep_alive":{"max_idle":2,"idle_timeout_ms":1500})",
        "https://api.example.test/graphql"));
    ASSERT_TRUE(p.config) << p.at("");
    const GraphqlConfig& c = *p.config;
    EXPECT_EQ(c.endpoint->origin(), "https://api.example.test:443");
    EXPECT_EQ(c.operation_name, "Item");
    ASSERT_TRUE(c.variables);
    EXPECT_EQ(*c.variables, R"({"id":"{{input.id}}","n":[1,2]})");  // compact
    EXPECT_EQ(c.cursor_variable, "after");
    EXPECT_EQ(c.data_path.text, "item.owner");
    ASSERT_EQ(c.data_path.path.segments.size(), 2U);
    EXPECT_EQ(c.data_path.path.segments[1].name, "owner");
    EXPECT_EQ(c.has_next_path.text, "page.hasNext");
    EXPECT_EQ(c.schema_file, "/tmp/schema.graphql");
    EXPECT_FALSE(c.introspection);
    EXPECT_EQ(c.introspection_timeout_ms, 60000);
    ASSERT_EQ(c.http.headers.size(), 2U);
    EXPECT_EQ(c.http.headers[0], (std::pair<std::string, std::string>{"X-Tenant", "t1"}));
    EXPECT_EQ(c.http.headers[1], (std::pair<std::string, std::string>{"X-Num", "7"}));
    EXPECT_EQ(c.http.connect_ms, 100);
    EXPECT_EQ(c.http.headers_ms, 200);
    EXPECT_EQ(c.http.total_ms, 300);
    EXPECT_FALSE(c.http.tls.verify);
    EXPECT_EQ(c.http.tls.ca_file, "/etc/ca.pem");
    EXPECT_EQ(c.http.max_response_bytes, 4096U);
    EXPECT_EQ(c.http.follow_redirects, 0);
    EXPECT_FALSE(c.http.compression);
    EXPECT_EQ(c.http.max_idle, 2U);
    EXPECT_EQ(c.http.idle_timeout_ms, 1500);
}

TEST(GraphqlConfig, UnknownMembersAreNamed) {
    const Parsed p = parse(config(R"(,"url":"x","datapath":"a")"));
    EXPECT_FALSE(p.config);
    EXPECT_THAT(p.at("url"), HasSubstr("unknown member of the GraphQL config"));
    EXPECT_THAT(p.at("datapath"), HasSubstr("unknown member"));
    // Nested HTTP settings name their own unknown members.
    const Parsed nested = parse(config(R"(,"timeouts":{"read_ms":5})"));
    EXPECT_FALSE(nested.config);
    EXPECT_TRUE(nested.has("timeouts.read_ms")) << nested.at("timeouts.read_ms");
}

TEST(GraphqlConfig, TheEndpointIsRequiredAndAbsoluteHttp) {
    const Parsed missing = parse(R"({"document":"{ now }"})");
    EXPECT_FALSE(missing.config);
    EXPECT_THAT(missing.at("endpoint"), HasSubstr("is required"));
    EXPECT_THAT(parse(R"({"endpoint":5,"document":"{ now }"})").at("endpoint"),
                HasSubstr("expected a string"));
    for (const char* bad : {"ftp://h/graphql", "/graphql", "127.0.0.1:4000/graphql", "http://",
                            "ws://h/graphql", ""}) {
        const Parsed p = parse(config("", bad));
        EXPECT_FALSE(p.config) << bad;
        EXPECT_TRUE(p.has("endpoint")) << bad << ": " << p.at("endpoint");
    }
}

TEST(GraphqlConfig, ATemplatedEndpointIsCheckedForItsSchemeAtLoadAndWholeWhenRendered) {
    // At load, a template may stand for the host or path, after an explicit scheme.
    for (const char* ok :
         {"http://{{env.HOST}}/graphql", "https://{{input.tenant}}.example.test/gql",
          "http://127.0.0.1:4000/{{input.path}}"}) {
        const Parsed p = parse(config("", ok));
        ASSERT_TRUE(p.config) << ok << ": " << p.at("endpoint");
        EXPECT_FALSE(p.config->endpoint) << ok << ": not parsed before rendering";
        EXPECT_EQ(p.config->endpoint_text, ok);
    }
    // The scheme itself may not be templated (credentials could go anywhere).
    for (const char* bad :
         {"{{env.URL}}", "{{input.scheme}}://h/graphql", "htt{{x}}p://h/", "ftp://{{input.h}}/"}) {
        const Parsed p = parse(config("", bad));
        EXPECT_FALSE(p.config) << bad;
        EXPECT_THAT(p.at("endpoint"), HasSubstr("must start with http:// or https://")) << bad;
    }
    // Rendered (a call), what is left must parse whole: leftover braces are no URL.
    const Parsed rendered = parse(config("", "http://{{env.HOST}}/graphql"), true);
    EXPECT_FALSE(rendered.config);
    EXPECT_TRUE(rendered.has("endpoint"));
    const Parsed good = parse(config("", "http://127.0.0.1:9/graphql"), true);
    ASSERT_TRUE(good.config) << good.at("endpoint");
    EXPECT_TRUE(good.config->endpoint);
}

TEST(GraphqlConfig, TheDocumentIsRequiredBoundedAndNeverTemplated) {
    EXPECT_THAT(parse(R"({"endpoint":"http://h/graphql"})").at("document"),
                HasSubstr("is required"));
    EXPECT_THAT(parse(R"({"endpoint":"http://h/graphql","document":""})").at("document"),
                HasSubstr("non-empty string"));
    EXPECT_THAT(parse(R"({"endpoint":"http://h/graphql","document":{"q":1}})").at("document"),
                HasSubstr("non-empty string"));
    const std::string big = "{ now }" + std::string(std::size_t{1024} * 1024, ' ');
    const Parsed large = parse(R"({"endpoint":"http://h/graphql","document":")" + big + "\"}");
    EXPECT_FALSE(large.config);
    EXPECT_THAT(large.at("document"), HasSubstr("larger than 1048576 bytes"));
    // Exactly at the bound is accepted.
    const std::string edge = "{ now }" + std::string((std::size_t{1024} * 1024) - 7, ' ');
    ASSERT_EQ(edge.size(), 1024U * 1024U);
    EXPECT_TRUE(parse(R"({"endpoint":"http://h/graphql","document":")" + edge + "\"}").config);
    const Parsed templ = parse(
        R"({"endpoint":"http://h/graphql","document":"{ item(id: \"{{input.id}}\") { id } }"})");
    EXPECT_FALSE(templ.config);
    EXPECT_THAT(templ.at("document"), HasSubstr("must not hold input templates"));
}

TEST(GraphqlConfig, StringMembersMustBeNonEmptyStrings) {
    for (const char* member :
         {"operation_name", "cursor_variable", "schema_file", "data_path", "has_next_path"}) {
        for (const char* value : {R"("")", "1", "null", "[]"}) {
            const Parsed p = parse(config(",\"" + std::string(member) + "\":" + value));
            EXPECT_FALSE(p.config) << member << "=" << value;
            EXPECT_THAT(p.at(member), HasSubstr("expected a non-empty string"))
                << member << "=" << value;
        }
    }
}

TEST(GraphqlConfig, VariablesMustBeAnObject) {
    for (const char* value : {"[]", R"("x")", "1", "null", "true"}) {
        const Parsed p = parse(config(",\"variables\":" + std::string(value)));
        EXPECT_FALSE(p.config) << value;
        EXPECT_THAT(p.at("variables"), HasSubstr("expected an object")) << value;
    }
    const Parsed empty = parse(config(R"(,"variables":{})"));
    ASSERT_TRUE(empty.config);
    EXPECT_EQ(empty.config->variables, "{}");
}

TEST(GraphqlConfig, DataPathsNameOneValue) {
    for (const char* member : {"data_path", "has_next_path"}) {
        const Parsed wildcard = parse(config(",\"" + std::string(member) + "\":\"items.*.id\""));
        EXPECT_FALSE(wildcard.config) << member;
        EXPECT_THAT(wildcard.at(member), HasSubstr("wildcard")) << member;
        for (const char* bad : {"a..b", "items.", "a.\\\\q."}) {
            const Parsed p = parse(config(",\"" + std::string(member) + "\":\"" + bad + "\""));
            EXPECT_FALSE(p.config) << member << "=" << bad;
            EXPECT_THAT(p.at(member), HasSubstr("at byte")) << member << "=" << bad;
        }
    }
    const Parsed index = parse(config(R"(,"data_path":"items.0.name")"));
    ASSERT_TRUE(index.config) << index.at("data_path");
    EXPECT_EQ(index.config->data_path.path.segments.size(), 3U);
}

TEST(GraphqlConfig, IntrospectionSettingsAreBounded) {
    for (const char* value :
         {"0", "-1", "60001", "1.5", R"("5000")", "null", "9223372036854775808"}) {
        const Parsed p = parse(config(",\"introspection_timeout_ms\":" + std::string(value)));
        EXPECT_FALSE(p.config) << value;
        EXPECT_THAT(p.at("introspection_timeout_ms"), HasSubstr("from 1 to 60000")) << value;
    }
    for (const char* value : {"1", "60000"}) {
        const Parsed p = parse(config(",\"introspection_timeout_ms\":" + std::string(value)));
        ASSERT_TRUE(p.config) << value;
        EXPECT_EQ(p.config->introspection_timeout_ms, std::stoll(value));
    }
    const Parsed flag = parse(config(R"(,"introspection":"no")"));
    EXPECT_FALSE(flag.config);
    EXPECT_THAT(flag.at("introspection"), HasSubstr("true or false"));
}

TEST(GraphqlConfig, HttpSettingProblemsCarryTheirPaths) {
    const Parsed p = parse(config(
        R"(,"timeouts":{"connect_ms":0,"headers_ms":86400001},"headers":{"Bad Name":"x",
           "Host":"evil.test","content-length":"3","X-Ok":"line\nbreak","X-Obj":{}},
           "tls":{"verify":"yes"},"max_response_bytes":0,"follow_redirects":21,
           "compression":1,"keep_alive":{"max_idle":-1})"));
    EXPECT_FALSE(p.config);
    EXPECT_THAT(p.at("timeouts.connect_ms"), HasSubstr("from 1 to 86400000"));
    EXPECT_THAT(p.at("timeouts.headers_ms"), HasSubstr("from 1 to 86400000"));
    EXPECT_THAT(p.at("headers.Bad Name"), HasSubstr("not a valid HTTP header name"));
    EXPECT_EQ(p.at("headers.Host"), "the GraphQL plugin sets this header itself");
    EXPECT_EQ(p.at("headers.content-length"), "the GraphQL plugin sets this header itself");
    EXPECT_THAT(p.at("headers.X-Ok"), HasSubstr("control characters"));
    EXPECT_THAT(p.at("headers.X-Obj"), HasSubstr("expected a string"));
    EXPECT_THAT(p.at("tls.verify"), HasSubstr("true or false"));
    EXPECT_TRUE(p.has("max_response_bytes"));
    EXPECT_TRUE(p.has("follow_redirects"));
    EXPECT_TRUE(p.has("compression"));
    EXPECT_TRUE(p.has("keep_alive.max_idle"));
    for (const char* own : {"Transfer-Encoding", "Connection", "TE"}) {
        const Parsed h = parse(config(",\"headers\":{\"" + std::string(own) + "\":\"x\"}"));
        EXPECT_EQ(h.at("headers." + std::string(own)),
                  "the GraphQL plugin sets this header itself");
    }
}

TEST(GraphqlConfig, EveryProblemIsReportedAtOnce) {
    const Parsed p = parse(
        R"({"endpoint":"ftp://x","variables":[],"introspection":1,"timeouts":{"total_ms":0}})");
    EXPECT_FALSE(p.config);
    EXPECT_TRUE(p.has("endpoint"));
    EXPECT_TRUE(p.has("document"));
    EXPECT_TRUE(p.has("variables"));
    EXPECT_TRUE(p.has("introspection"));
    EXPECT_TRUE(p.has("timeouts.total_ms"));
}

TEST(GraphqlConfig, MalformedConfigsAreRefusedAsAWhole) {
    for (const char* bad : {"", "   ", "{", "[]", "null", "\"x\"", "{\"endpoint\":}", "{} {}",
                            "{\"a\":1,}", "\xff\xfe"}) {
        const Parsed p = parse(bad);
        EXPECT_FALSE(p.config) << bad;
        ASSERT_FALSE(p.problems.empty()) << bad;
        EXPECT_EQ(p.problems[0].path, "") << bad;
    }
    EXPECT_THAT(parse("[]").at(""), HasSubstr("must be an object"));
    EXPECT_THAT(parse("{").at(""), HasSubstr("not valid JSON"));
}

TEST(GraphqlConfig, EveryPrefixOfAConfigIsRefusedWithoutACrash) {
    const std::string full = config(
        R"(,"operation_name":"Item","variables":{"id":"{{input.id}}"},"data_path":"item",
           "headers":{"X-A":"b"},"timeouts":{"connect_ms":100},"keep_alive":{"max_idle":1})");
    ASSERT_TRUE(parse(full).config);
    for (std::size_t n = 0; n < full.size(); ++n) {
        const Parsed p = parse(std::string_view(full).substr(0, n));
        EXPECT_FALSE(p.config) << n;
        EXPECT_FALSE(p.problems.empty()) << n;
    }
}

TEST(GraphqlConfig, DeepNestingIsRefusedNotRecursed) {
    for (const std::string& inner : {std::string("[]"), std::string("{\"a\":1}")}) {
        std::string deep;
        for (int i = 0; i < 100000; ++i) {
            deep.append(inner == "[]" ? "[" : "{\"a\":");
        }
        deep.append("1");
        for (int i = 0; i < 100000; ++i) {
            deep.push_back(inner == "[]" ? ']' : '}');
        }
        const Parsed p = parse(config(",\"variables\":{\"v\":" + deep + "}"));
        EXPECT_FALSE(p.config);
        EXPECT_THAT(p.at(""), HasSubstr("nested deeper than 256 levels"));
        // Unclosed, too.
        const Parsed open = parse("{\"variables\":" + std::string(100000, '['));
        EXPECT_FALSE(open.config);
        EXPECT_FALSE(open.problems.empty());
    }
    // Just within the bound is fine.
    const Parsed ok = parse(
        config(",\"variables\":{\"v\":" + std::string(250, '[') + std::string(250, ']') + "}"));
    EXPECT_TRUE(ok.config) << ok.at("");
}

TEST(GraphqlConfig, HugeStringsAreBoundedInMessages) {
    const std::string huge(std::size_t{4} * 1024 * 1024, 'x');
    const Parsed name = parse(config(",\"" + huge + "\":1"));
    EXPECT_FALSE(name.config);
    ASSERT_FALSE(name.problems.empty());
    const Parsed path = parse(config(",\"data_path\":\"" + huge + "..\""));
    EXPECT_FALSE(path.config);
    EXPECT_LT(path.at("data_path").size(), 1024U) << "the path is quoted as an excerpt";
    const Parsed endpoint = parse(config("", "http://h:" + huge));
    EXPECT_FALSE(endpoint.config);
    EXPECT_LT(endpoint.at("endpoint").size(), 4096U);
    // A huge variable value is just data.
    const Parsed value = parse(config(",\"variables\":{\"v\":\"" + huge + "\"}"));
    ASSERT_TRUE(value.config);
    EXPECT_GT(value.config->variables->size(), huge.size());
}

TEST(GraphqlConfig, TheDeclaredSchemaIsAJsonObjectNamingEveryMember) {
    const std::string schema(graphqlConfigSchema());
    for (const char* member :
         {"endpoint", "document", "operation_name", "variables", "cursor_variable", "data_path",
          "has_next_path", "schema_file", "introspection", "introspection_timeout_ms", "headers",
          "timeouts", "tls", "max_response_bytes", "follow_redirects", "compression",
          "keep_alive"}) {
        EXPECT_THAT(schema, HasSubstr("\"" + std::string(member) + "\":")) << member;
    }
}

}  // namespace
}  // namespace crank::graphql
