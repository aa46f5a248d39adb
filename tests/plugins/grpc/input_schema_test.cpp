// inputSchemaJson: the JSON Schema of a request message, checked for its concrete parts, compiled
// with the host's own compiler (host/json/json_schema.h) and used to validate inputs, which must
// then agree with what the JSON mapping (DescriptorCatalog::jsonToBinary) accepts.
#include "input_schema.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "crank/sdk/error.hpp"
#include "descriptor_catalog.h"
#include "json/json_schema.h"

namespace crank::grpc_plugin {
namespace {

namespace pb = google::protobuf;

std::shared_ptr<const DescriptorCatalog> fixtureCatalog() {
    static const auto catalog = DescriptorCatalog::fromDescriptorSetFile(CRANK_GRPC_FIXTURE_DESC);
    return catalog;
}

const pb::Descriptor& echoRequest() {
    return *fixtureCatalog()->pool().FindMessageTypeByName("crank.fixture.v1.EchoRequest");
}

rapidjson::Document parse(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

json::CompiledSchema compile(const std::string& schema) {
    auto compiled = json::compileSchema(schema, "input_schema");
    if (!compiled) {
        ADD_FAILURE() << compiled.error().message << "\n" << schema;
        return json::compileSchema(R"({"type":"object"})", "fallback").value();
    }
    return compiled.value();
}

std::string typeOf(const rapidjson::Value& schema) {
    if (!schema.HasMember("type")) {
        return "";
    }
    if (schema["type"].IsString()) {
        return schema["type"].GetString();
    }
    std::string out;
    for (const auto& t : schema["type"].GetArray()) {
        out += (out.empty() ? "" : ",") + std::string(t.GetString());
    }
    return out;
}

class EchoRequestSchema : public ::testing::Test {
protected:
    std::string text_ = inputSchemaJson(echoRequest());
    rapidjson::Document doc_ = parse(text_);
    const rapidjson::Value& prop(const char* name) { return doc_["properties"][name]; }
};

TEST_F(EchoRequestSchema, RootIsAClosedObjectOfJsonNames) {
    EXPECT_STREQ(doc_["type"].GetString(), "object");
    EXPECT_FALSE(doc_["additionalProperties"].GetBool());
    EXPECT_FALSE(doc_.HasMember("required"));
    EXPECT_NE(std::string(doc_["description"].GetString()).find("crank.fixture.v1.EchoRequest"),
              std::string::npos);
    // Every field, under its JSON name, in field order.
    std::vector<std::string> names;
    for (auto it = doc_["properties"].MemberBegin(); it != doc_["properties"].MemberEnd(); ++it) {
        names.emplace_back(it->name.GetString());
        EXPECT_TRUE(it->value.HasMember("description")) << names.back();
    }
    EXPECT_EQ(names,
              (std::vector<std::string>{
                  "text",    "small",  "big",      "ubig",   "signedSmall", "fixed",      "ratio",
                  "ratio32", "flag",   "blob",     "color",  "inner",       "tags",       "inners",
                  "counts",  "byId",   "word",     "number", "nested",      "maybeCount", "at",
                  "wait",    "extra",  "anyValue", "maybe",  "packed",      "mask",       "nothing",
                  "tree",    "colors", "maybeText"}));
    // Deterministic.
    EXPECT_EQ(inputSchemaJson(echoRequest()), text_);
}

TEST_F(EchoRequestSchema, Scalars) {
    EXPECT_EQ(typeOf(prop("text")), "string");
    EXPECT_STREQ(prop("text")["description"].GetString(), "string");
    EXPECT_EQ(typeOf(prop("small")), "integer");
    EXPECT_EQ(prop("small")["minimum"].GetInt64(), -2147483648LL);
    EXPECT_EQ(prop("small")["maximum"].GetInt64(), 2147483647LL);
    EXPECT_EQ(typeOf(prop("signedSmall")), "integer");
    EXPECT_STREQ(prop("signedSmall")["description"].GetString(), "sint32");

    EXPECT_EQ(typeOf(prop("big")), "string,integer");
    EXPECT_STREQ(prop("big")["pattern"].GetString(), "^-?[0-9]{1,19}$");
    EXPECT_STREQ(prop("big")["description"].GetString(), "int64 (as a string or integer)");
    EXPECT_EQ(typeOf(prop("ubig")), "string,integer");
    EXPECT_STREQ(prop("ubig")["pattern"].GetString(), "^[0-9]{1,20}$");
    EXPECT_EQ(prop("ubig")["minimum"].GetInt(), 0);
    EXPECT_EQ(typeOf(prop("fixed")), "string,integer");

    ASSERT_TRUE(prop("ratio").HasMember("anyOf"));
    EXPECT_STREQ(prop("ratio")["anyOf"][0]["type"].GetString(), "number");
    EXPECT_STREQ(prop("ratio")["anyOf"][1]["enum"][0].GetString(), "NaN");
    EXPECT_TRUE(prop("ratio32")["anyOf"][0].HasMember("maximum"));
    EXPECT_EQ(typeOf(prop("flag")), "boolean");
    EXPECT_EQ(typeOf(prop("blob")), "string");
    EXPECT_STREQ(prop("blob")["contentEncoding"].GetString(), "base64");
}

TEST_F(EchoRequestSchema, EnumsByNameOrNumber) {
    const auto& color = prop("color");
    EXPECT_STREQ(color["description"].GetString(), "enum crank.fixture.v1.Color");
    const auto& names = color["anyOf"][0]["enum"];
    ASSERT_EQ(names.Size(), 3U);
    EXPECT_STREQ(names[0].GetString(), "COLOR_UNSPECIFIED");
    EXPECT_STREQ(names[2].GetString(), "COLOR_GREEN");
    EXPECT_EQ(color["anyOf"][1]["enum"][2].GetInt(), 2);
    EXPECT_EQ(typeOf(prop("colors")), "array");
    EXPECT_STREQ(prop("colors")["description"].GetString(), "repeated enum crank.fixture.v1.Color");
    EXPECT_STREQ(prop("colors")["items"]["anyOf"][0]["enum"][1].GetString(), "COLOR_RED");
}

TEST_F(EchoRequestSchema, MessagesRepeatedAndMaps) {
    const auto& inner = prop("inner");
    EXPECT_EQ(typeOf(inner), "object");
    EXPECT_STREQ(inner["description"].GetString(), "message crank.fixture.v1.Inner");
    EXPECT_FALSE(inner["additionalProperties"].GetBool());
    EXPECT_EQ(typeOf(inner["properties"]["values"]), "array");
    EXPECT_EQ(typeOf(inner["properties"]["values"]["items"]), "integer");

    EXPECT_EQ(typeOf(prop("tags")), "array");
    EXPECT_EQ(typeOf(prop("tags")["items"]), "string");
    EXPECT_EQ(typeOf(prop("inners")["items"]), "object");

    const auto& counts = prop("counts");
    EXPECT_EQ(typeOf(counts), "object");
    EXPECT_EQ(typeOf(counts["additionalProperties"]), "integer");
    EXPECT_STREQ(counts["description"].GetString(), "map<string, int32>");

    const auto& by_id = prop("byId");
    EXPECT_EQ(typeOf(by_id), "object");
    EXPECT_FALSE(by_id["additionalProperties"].GetBool());
    ASSERT_TRUE(by_id["patternProperties"].HasMember("^-?[0-9]+$"));
    EXPECT_EQ(typeOf(by_id["patternProperties"]["^-?[0-9]+$"]), "object");
    EXPECT_STREQ(by_id["description"].GetString(),
                 "map<int64, message crank.fixture.v1.Inner> (an object; keys are decimal "
                 "integers)");
}

TEST_F(EchoRequestSchema, OneofMembersSayOnlyOneMayBeSet) {
    for (const char* member : {"word", "number", "nested"}) {
        const std::string description = prop(member)["description"].GetString();
        EXPECT_NE(description.find("Oneof choice: set at most one of word, number, nested"),
                  std::string::npos)
            << description;
    }
    EXPECT_FALSE(doc_.HasMember("oneOf"));
    // proto3 optional is a synthetic oneof: not mentioned.
    EXPECT_STREQ(prop("maybeCount")["description"].GetString(), "int32");
}

TEST_F(EchoRequestSchema, RecursiveMessageGoesToDefs) {
    const auto& tree = prop("tree");
    EXPECT_STREQ(tree["$ref"].GetString(), "#/$defs/crank.fixture.v1.Node");
    EXPECT_STREQ(tree["description"].GetString(), "message crank.fixture.v1.Node");
    ASSERT_TRUE(doc_.HasMember("$defs"));
    ASSERT_EQ(doc_["$defs"].MemberCount(), 1U);
    const auto& node = doc_["$defs"]["crank.fixture.v1.Node"];
    EXPECT_EQ(typeOf(node), "object");
    EXPECT_FALSE(node["additionalProperties"].GetBool());
    EXPECT_EQ(typeOf(node["properties"]["name"]), "string");
    EXPECT_STREQ(node["properties"]["children"]["items"]["$ref"].GetString(),
                 "#/$defs/crank.fixture.v1.Node");
}

TEST_F(EchoRequestSchema, WellKnownTypes) {
    EXPECT_EQ(typeOf(prop("at")), "string");
    EXPECT_STREQ(prop("at")["format"].GetString(), "date-time");
    EXPECT_EQ(typeOf(prop("wait")), "string");
    EXPECT_STREQ(prop("wait")["pattern"].GetString(), "^-?[0-9]+(\\.[0-9]{1,9})?s$");
    EXPECT_EQ(typeOf(prop("extra")), "object");
    EXPECT_FALSE(prop("extra").HasMember("additionalProperties"));
    EXPECT_EQ(typeOf(prop("anyValue")), "");
    EXPECT_EQ(typeOf(prop("maybe")), "integer,null");
    EXPECT_EQ(typeOf(prop("maybeText")), "string,null");
    EXPECT_EQ(typeOf(prop("packed")), "object");
    EXPECT_STREQ(prop("packed")["required"][0].GetString(), "@type");
    EXPECT_EQ(typeOf(prop("packed")["properties"]["@type"]), "string");
    EXPECT_EQ(typeOf(prop("mask")), "string");
    EXPECT_EQ(typeOf(prop("nothing")), "object");
    EXPECT_FALSE(prop("nothing")["additionalProperties"].GetBool());
    for (const char* wkt :
         {"at", "wait", "extra", "anyValue", "maybe", "packed", "mask", "nothing", "maybeText"}) {
        EXPECT_EQ(std::string(prop(wkt)["description"].GetString()).rfind("google.protobuf.", 0),
                  0U)
            << wkt;
    }
}

TEST_F(EchoRequestSchema, HostCompilesItAndItAgreesWithTheJsonMapping) {
    const auto schema = compile(text_);
    const auto catalog = fixtureCatalog();
    const std::vector<std::string> valid = {
        "{}",
        R"({"text": "hello", "small": -5, "big": "9007199254740993", "ubig": 7,
            "signedSmall": -7, "fixed": "42", "ratio": 1.5, "ratio32": "NaN", "flag": true,
            "blob": "AAEC/w==", "color": "COLOR_GREEN", "inner": {"label": "in", "values": [1]},
            "tags": ["a"], "inners": [{"label": "x"}], "counts": {"k": 3},
            "byId": {"5": {"label": "five"}, "-6": {}}, "word": "w", "maybeCount": 0,
            "at": "2024-01-02T03:04:05.123Z", "wait": "1.500s", "extra": {"s": [1, {}]},
            "anyValue": null, "maybe": null,
            "packed": {"@type": "type.googleapis.com/crank.fixture.v1.Inner", "label": "p"},
            "mask": "text,inner.label", "nothing": {},
            "tree": {"name": "r", "children": [{"name": "k", "children": [{"name": "g"}]}]},
            "colors": ["COLOR_RED", 2], "maybeText": "t"})",
        R"({"color": 1})",
        R"({"wait": "-3s"})",
        R"({"anyValue": {"x": [1, "y"]}})",
        R"({"ratio": "-Infinity"})",
    };
    for (const std::string& input : valid) {
        const auto result = schema.validate(input);
        EXPECT_TRUE(result.ok()) << input << " -> " << result.firstMessage();
        EXPECT_NO_THROW(catalog->jsonToBinary(echoRequest(), input)) << input;
    }
    const std::vector<std::string> invalid = {
        R"({"small": "x"})",
        R"({"nope": 1})",
        R"({"small": 1.5})",
        R"({"small": 4294967296})",
        R"({"big": "12a"})",
        R"({"big": 1.5})",
        R"({"ubig": "-1"})",
        R"({"color": "PURPLE"})",
        R"({"inner": {"nope": 1}})",
        R"({"byId": {"x": {}}})",
        R"({"counts": {"k": "v"}})",
        R"({"tree": {"children": [{"nope": 1}]}})",
        R"({"wait": "1.5"})",
        R"({"packed": {"label": "x"}})",
        R"({"nothing": {"a": 1}})",
        R"({"maybe": "x"})",
        R"({"extra": [1]})",
        R"({"ratio": "fast"})",
        "[1]",
    };
    for (const std::string& input : invalid) {
        EXPECT_FALSE(schema.validate(input).ok()) << input;
        EXPECT_THROW(catalog->jsonToBinary(echoRequest(), input), sdk::Error) << input;
    }
    // protobuf's parser is more lenient than the proto3 JSON spec on these; the schema is not.
    for (const std::string input :
         {R"({"color": 7})", R"({"flag": "yes"})", R"({"tags": "a"})", R"({"small": "17"})"}) {
        EXPECT_FALSE(schema.validate(input).ok()) << input;
        EXPECT_NO_THROW(catalog->jsonToBinary(echoRequest(), input)) << input;
    }
}

TEST(InputSchema, EveryMessageOfTheSetCompiles) {
    const auto catalog = fixtureCatalog();
    std::ifstream in(CRANK_GRPC_FIXTURE_DESC, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    pb::FileDescriptorSet set;
    ASSERT_TRUE(set.ParseFromString(bytes.str()));
    int count = 0;
    for (const auto& file_proto : set.file()) {
        const pb::FileDescriptor* file = catalog->pool().FindFileByName(file_proto.name());
        ASSERT_NE(file, nullptr) << file_proto.name();
        std::vector<const pb::Descriptor*> messages;
        for (int i = 0; i < file->message_type_count(); ++i) {
            messages.push_back(file->message_type(i));
        }
        // Nested messages too (map entries included: plain messages with key and value).
        for (std::size_t i = 0; i < messages.size(); ++i) {
            for (int j = 0; j < messages[i]->nested_type_count(); ++j) {
                messages.push_back(messages[i]->nested_type(j));
            }
        }
        for (const pb::Descriptor* m : messages) {
            const std::string schema = inputSchemaJson(*m);
            auto compiled = json::compileSchema(schema, m->full_name());
            EXPECT_TRUE(compiled.ok()) << m->full_name() << ": " << compiled.error().message;
            ++count;
        }
    }
    EXPECT_GT(count, 20);
}

TEST(InputSchema, RootsOfSpecialKinds) {
    const auto catalog = fixtureCatalog();
    const auto& pool = catalog->pool();
    // A recursive root refers to itself as "#".
    const auto node = parse(inputSchemaJson(*pool.FindMessageTypeByName("crank.fixture.v1.Node")));
    EXPECT_STREQ(node["properties"]["children"]["items"]["$ref"].GetString(), "#");
    EXPECT_FALSE(node.HasMember("$defs"));
    compile(inputSchemaJson(*pool.FindMessageTypeByName("crank.fixture.v1.Node")));
    // google.protobuf.Empty (the Fail method's request) is an empty closed object.
    const auto empty = parse(inputSchemaJson(*pool.FindMessageTypeByName("google.protobuf.Empty")));
    EXPECT_STREQ(empty["type"].GetString(), "object");
    EXPECT_FALSE(empty["additionalProperties"].GetBool());
    const auto stats =
        parse(inputSchemaJson(*pool.FindMessageTypeByName("crank.fixture.v1.StatsRequest")));
    EXPECT_STREQ(stats["type"].GetString(), "object");
    EXPECT_EQ(stats["properties"].MemberCount(), 0U);
}

// --- generated message graphs -----------------------------------------------------------------

pb::FieldDescriptorProto* addField(pb::DescriptorProto* m, const std::string& name, int number,
                                   const std::string& type_name, bool repeated = false) {
    auto* f = m->add_field();
    f->set_name(name);
    f->set_number(number);
    f->set_label(repeated ? pb::FieldDescriptorProto::LABEL_REPEATED
                          : pb::FieldDescriptorProto::LABEL_OPTIONAL);
    if (type_name.empty()) {
        f->set_type(pb::FieldDescriptorProto::TYPE_STRING);
    } else {
        f->set_type(pb::FieldDescriptorProto::TYPE_MESSAGE);
        f->set_type_name(type_name);
    }
    return f;
}

std::shared_ptr<const DescriptorCatalog> catalogOf(const pb::FileDescriptorProto& file) {
    return DescriptorCatalog::fromFiles({file.SerializeAsString()}, "test");
}

TEST(InputSchema, LongChainsStayWithinTheHostsDepthLimit) {
    pb::FileDescriptorProto file;
    file.set_name("chain.proto");
    file.set_package("chain");
    file.set_syntax("proto3");
    constexpr int length = 150;
    for (int i = 0; i < length; ++i) {
        auto* m = file.add_message_type();
        m->set_name("M" + std::to_string(i));
        addField(m, "name", 1, "");
        if (i + 1 < length) {
            addField(m, "next", 2, ".chain.M" + std::to_string(i + 1), i % 2 == 0);
        }
    }
    const auto catalog = catalogOf(file);
    const std::string schema = inputSchemaJson(*catalog->pool().FindMessageTypeByName("chain.M0"));
    const auto doc = parse(schema);
    EXPECT_TRUE(doc.HasMember("$defs"));
    const auto compiled = compile(schema);
    // An instance 30 levels deep validates, and a mistake deep down is found.
    std::string deep = "{}";
    for (int i = 29; i >= 0; --i) {
        deep = i % 2 == 0 ? R"({"next":[)" + deep + "]}" : R"({"next":)" + deep + "}";
    }
    EXPECT_TRUE(compiled.validate(deep).ok()) << compiled.validate(deep).firstMessage();
    std::string bad = R"({"nope":1})";
    for (int i = 19; i >= 0; --i) {
        bad = i % 2 == 0 ? R"({"next":[)" + bad + "]}" : R"({"next":)" + bad + "}";
    }
    EXPECT_FALSE(compiled.validate(bad).ok());
}

TEST(InputSchema, FanOutFallsBackToDefinitions) {
    // Each level has 8 fields of the next: inlining would repeat the last level 8^12 times.
    pb::FileDescriptorProto file;
    file.set_name("fan.proto");
    file.set_package("fan");
    file.set_syntax("proto3");
    constexpr int levels = 12;
    for (int i = 0; i < levels; ++i) {
        auto* m = file.add_message_type();
        m->set_name("L" + std::to_string(i));
        addField(m, "label", 1, "");
        if (i + 1 < levels) {
            for (int f = 0; f < 8; ++f) {
                addField(m, "f" + std::to_string(f), f + 2, ".fan.L" + std::to_string(i + 1));
            }
        }
    }
    const auto catalog = catalogOf(file);
    const std::string schema = inputSchemaJson(*catalog->pool().FindMessageTypeByName("fan.L0"));
    EXPECT_LT(schema.size(), std::size_t{64} * 1024);
    const auto doc = parse(schema);
    ASSERT_TRUE(doc.HasMember("$defs"));
    EXPECT_EQ(doc["$defs"].MemberCount(), static_cast<unsigned>(levels - 1));
    EXPECT_STREQ(doc["properties"]["f0"]["$ref"].GetString(), "#/$defs/fan.L1");
    const auto compiled = compile(schema);
    EXPECT_TRUE(compiled.validate(R"({"f3": {"f7": {"label": "x"}}})").ok());
    EXPECT_FALSE(compiled.validate(R"({"f3": {"f7": {"label": 1}}})").ok());
}

TEST(InputSchema, MutualRecursionAndComments) {
    pb::FileDescriptorProto file;
    file.set_name("mutual.proto");
    file.set_package("mu");
    file.set_syntax("proto3");
    auto* root = file.add_message_type();
    root->set_name("Root");
    addField(root, "a", 1, ".mu.A");
    auto* a = file.add_message_type();
    a->set_name("A");
    addField(a, "b", 1, ".mu.B", true);
    auto* b = file.add_message_type();
    b->set_name("B");
    addField(b, "a", 1, ".mu.A");
    addField(b, "label", 2, "");
    // A leading comment on Root.a (message_type 0, field 0), as protoc --include_source_info
    // records it.
    auto* location = file.mutable_source_code_info()->add_location();
    for (int p : {4, 0, 2, 0}) {
        location->add_path(p);
    }
    for (int s : {1, 2, 1, 10}) {
        location->add_span(s);
    }
    location->set_leading_comments(" The A of this root.\n Second line.\n");

    const auto catalog = catalogOf(file);
    const std::string schema = inputSchemaJson(*catalog->pool().FindMessageTypeByName("mu.Root"));
    const auto doc = parse(schema);
    EXPECT_STREQ(doc["properties"]["a"]["$ref"].GetString(), "#/$defs/mu.A");
    EXPECT_STREQ(doc["properties"]["a"]["description"].GetString(),
                 "message mu.A. The A of this root. Second line.");
    ASSERT_EQ(doc["$defs"].MemberCount(), 2U);
    EXPECT_STREQ(doc["$defs"]["mu.A"]["properties"]["b"]["items"]["$ref"].GetString(),
                 "#/$defs/mu.B");
    EXPECT_STREQ(doc["$defs"]["mu.B"]["properties"]["a"]["$ref"].GetString(), "#/$defs/mu.A");
    const auto compiled = compile(schema);
    EXPECT_TRUE(compiled.validate(R"({"a": {"b": [{"a": {"b": []}, "label": "x"}]}})").ok());
    EXPECT_FALSE(compiled.validate(R"({"a": {"b": [{"a": {"b": [{"label": 5}]}}]}})").ok());
}

}  // namespace
}  // namespace crank::grpc_plugin
