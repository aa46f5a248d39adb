// DescriptorCatalog: building from descriptor sets and serialized files (and refusing bad ones
// with clear messages), method lookup, and the proto3 JSON mapping both ways over
// crank.fixture.v1 (tests/fixtures/upstreams/grpc/fixture.proto: every field kind).
#include "descriptor_catalog.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "crank/sdk/error.hpp"
#include "temp_dir.h"

namespace crank::grpc_plugin {
namespace {

namespace pb = google::protobuf;
using sdk::ErrorCode;

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

pb::FileDescriptorSet fixtureSet() {
    pb::FileDescriptorSet set;
    EXPECT_TRUE(set.ParseFromString(readFile(CRANK_GRPC_FIXTURE_DESC)));
    return set;
}

/// The fixture's own file (fixture.proto), without its imports.
pb::FileDescriptorProto fixtureFile() {
    const pb::FileDescriptorSet set = fixtureSet();
    for (const auto& f : set.file()) {
        if (f.name() == "fixture.proto") {
            return f;
        }
    }
    ADD_FAILURE() << "fixture.proto not in " << CRANK_GRPC_FIXTURE_DESC;
    return {};
}

std::shared_ptr<const DescriptorCatalog> fixtureCatalog() {
    static const auto catalog = DescriptorCatalog::fromDescriptorSetFile(CRANK_GRPC_FIXTURE_DESC);
    return catalog;
}

const pb::Descriptor& message(const DescriptorCatalog& catalog, const std::string& name) {
    const pb::Descriptor* d = catalog.pool().FindMessageTypeByName(name);
    EXPECT_NE(d, nullptr) << name;
    return *d;
}

/// The sdk::Error a call throws (fails the test when it throws nothing or something else).
template <class F>
sdk::Error errorOf(F&& f) {
    try {
        f();
    } catch (const sdk::Error& e) {
        return e;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not an sdk::Error: " << e.what();
        return {ErrorCode::internal, e.what()};
    }
    ADD_FAILURE() << "no exception";
    return {ErrorCode::internal, "no exception"};
}

rapidjson::Document parse(const std::string& json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    EXPECT_FALSE(doc.HasParseError()) << json;
    return doc;
}

std::string fileDescriptorSetBytes(const std::vector<pb::FileDescriptorProto>& files) {
    pb::FileDescriptorSet set;
    for (const auto& f : files) {
        *set.add_file() = f;
    }
    return set.SerializeAsString();
}

/// a.proto (service a.S with method M(b.B) returns (b.B)) imports b.proto (message b.B).
std::pair<pb::FileDescriptorProto, pb::FileDescriptorProto> importingPair() {
    pb::FileDescriptorProto b;
    b.set_name("b.proto");
    b.set_package("b");
    b.set_syntax("proto3");
    auto* bm = b.add_message_type();
    bm->set_name("B");
    auto* field = bm->add_field();
    field->set_name("x");
    field->set_number(1);
    field->set_type(pb::FieldDescriptorProto::TYPE_STRING);
    field->set_label(pb::FieldDescriptorProto::LABEL_OPTIONAL);
    field->set_json_name("x");

    pb::FileDescriptorProto a;
    a.set_name("a.proto");
    a.set_package("a");
    a.set_syntax("proto3");
    a.add_dependency("b.proto");
    auto* service = a.add_service();
    service->set_name("S");
    auto* method = service->add_method();
    method->set_name("M");
    method->set_input_type(".b.B");
    method->set_output_type(".b.B");
    return {a, b};
}

// --- building ---------------------------------------------------------------------------------

TEST(DescriptorCatalog, FromSetFileListsEveryMethodSorted) {
    const auto catalog = fixtureCatalog();
    EXPECT_EQ(catalog->methodNames(), (std::vector<std::string>{
                                          "crank.fixture.v1.Fixture/Chat",
                                          "crank.fixture.v1.Fixture/Echo",
                                          "crank.fixture.v1.Fixture/Fail",
                                          "crank.fixture.v1.Fixture/Stats",
                                          "crank.fixture.v1.Fixture/Ticks",
                                          "crank.fixture.v1.Fixture/Upload",
                                      }));
    EXPECT_EQ(catalog->origin(), std::string("descriptor set ") + CRANK_GRPC_FIXTURE_DESC);
}

TEST(DescriptorCatalog, FindMethodWithAndWithoutLeadingSlash) {
    const auto catalog = fixtureCatalog();
    const pb::MethodDescriptor* echo = catalog->findMethod("crank.fixture.v1.Fixture/Echo");
    ASSERT_NE(echo, nullptr);
    EXPECT_EQ(echo->input_type()->full_name(), "crank.fixture.v1.EchoRequest");
    EXPECT_EQ(echo->output_type()->full_name(), "crank.fixture.v1.EchoResponse");
    EXPECT_EQ(catalog->findMethod("/crank.fixture.v1.Fixture/Echo"), echo);
    const pb::MethodDescriptor* ticks = catalog->findMethod("/crank.fixture.v1.Fixture/Ticks");
    ASSERT_NE(ticks, nullptr);
    EXPECT_TRUE(ticks->server_streaming());
    EXPECT_FALSE(ticks->client_streaming());
    EXPECT_TRUE(catalog->findMethod("crank.fixture.v1.Fixture/Upload")->client_streaming());

    EXPECT_EQ(catalog->findMethod("crank.fixture.v1.Fixture/Nope"), nullptr);
    EXPECT_EQ(catalog->findMethod("crank.fixture.v1.Nope/Echo"), nullptr);
    EXPECT_EQ(catalog->findMethod("crank.fixture.v1.Fixture.Echo"), nullptr);
    EXPECT_EQ(catalog->findMethod("crank.fixture.v1.Fixture/Echo/x"), nullptr);
    EXPECT_EQ(catalog->findMethod(""), nullptr);
    // Services of libprotobuf's own pool are not part of the catalog.
    EXPECT_EQ(catalog->findMethod("google.protobuf.Nope/X"), nullptr);
}

TEST(DescriptorCatalog, WhyNoMethodSaysWhatExists) {
    const auto catalog = fixtureCatalog();
    EXPECT_EQ(catalog->whyNoMethod("nope.Service/Echo"),
              std::string("the service nope.Service is not in descriptor set ") +
                  CRANK_GRPC_FIXTURE_DESC + " (it has: crank.fixture.v1.Fixture)");
    EXPECT_EQ(catalog->whyNoMethod("/crank.fixture.v1.Fixture/Nope"),
              "crank.fixture.v1.Fixture has no method Nope (it has: Chat, Echo, Fail, Stats, "
              "Ticks, Upload)");
    for (const char* bad : {"Echo", "crank.fixture.v1.Fixture/", "/Echo", "a/b/c", ""}) {
        EXPECT_EQ(catalog->whyNoMethod(bad),
                  std::string("\"") + bad +
                      "\" is not a method name: expected \"package.Service/Method\"")
            << bad;
    }
}

TEST(DescriptorCatalog, MissingFileIsAClearError) {
    const auto e = errorOf([] { DescriptorCatalog::fromDescriptorSetFile("/nonexistent/x.desc"); });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "descriptor set /nonexistent/x.desc: no such file");
}

TEST(DescriptorCatalog, DirectoryIsRefused) {
    const testing::TempDir dir;
    const auto e = errorOf([&] { DescriptorCatalog::fromDescriptorSetFile(dir.path()); });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
}

TEST(DescriptorCatalog, GarbageAndEmptyFilesAreNotDescriptorSets) {
    const testing::TempDir dir;
    const std::string proto_source = "syntax = \"proto3\";\npackage x;\nmessage M {}\n";
    for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
             {"garbage.desc", std::string("\xff\xfe\x01garbage\x00\x13", 12)},
             {"empty.desc", ""},
             {"text.desc", "hello world, this is not protobuf"},
             {"source.proto", proto_source},
         }) {
        const std::string path = dir.write(name, content);
        const auto e = errorOf([&] { DescriptorCatalog::fromDescriptorSetFile(path); });
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << name;
        EXPECT_EQ(std::string(e.what()),
                  "descriptor set " + path +
                      ": not a FileDescriptorSet (make one with protoc --descriptor_set_out=FILE "
                      "--include_imports x.proto)")
            << name;
    }
}

TEST(DescriptorCatalog, TruncatedSetIsRefused) {
    const testing::TempDir dir;
    const std::string bytes = readFile(CRANK_GRPC_FIXTURE_DESC);
    ASSERT_GT(bytes.size(), 100U);
    // Cut inside the last file: a length-delimited field runs past the end.
    const std::string path = dir.write("cut.desc", bytes.substr(0, bytes.size() - 37));
    const auto e = errorOf([&] { DescriptorCatalog::fromDescriptorSetFile(path); });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("not a FileDescriptorSet"), std::string::npos) << e.what();
}

TEST(DescriptorCatalog, SetWithoutImportsResolvesWellKnownTypesFromLibprotobuf) {
    // protoc without --include_imports: only fixture.proto; Timestamp & co come from libprotobuf.
    const testing::TempDir dir;
    const std::string path = dir.write("alone.desc", fileDescriptorSetBytes({fixtureFile()}));
    const auto catalog = DescriptorCatalog::fromDescriptorSetFile(path);
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const std::string json = catalog->binaryToJson(
        request, catalog->jsonToBinary(request, R"({"at":"2024-01-02T03:04:05Z","wait":"2s"})"));
    const auto doc = parse(json);
    EXPECT_STREQ(doc["at"].GetString(), "2024-01-02T03:04:05Z");
    EXPECT_STREQ(doc["wait"].GetString(), "2s");
}

TEST(DescriptorCatalog, FileWithoutItsWellKnownImportsStillBuilds) {
    // What grpc-node's reflection sends (grpc/grpc-node#3034): the dependency list lacks the
    // google/protobuf imports the fields use.
    pb::FileDescriptorProto file = fixtureFile();
    ASSERT_GT(file.dependency_size(), 0);
    file.clear_dependency();
    const auto catalog =
        DescriptorCatalog::fromFiles({file.SerializeAsString()}, "reflection of test");
    ASSERT_NE(catalog->findMethod("crank.fixture.v1.Fixture/Fail"), nullptr);
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const auto doc = parse(catalog->binaryToJson(
        request, catalog->jsonToBinary(request, R"({"extra":{"a":[1,"x"]},"maybe":4})")));
    EXPECT_EQ(doc["extra"]["a"][0].GetDouble(), 1.0);
    EXPECT_EQ(doc["maybe"].GetInt(), 4);
}

TEST(DescriptorCatalog, SetMissingAnImportNamesIt) {
    const auto [a, b] = importingPair();
    const testing::TempDir dir;
    const std::string path = dir.write("a.desc", fileDescriptorSetBytes({a}));
    const auto e = errorOf([&] { DescriptorCatalog::fromDescriptorSetFile(path); });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("descriptor set " + path + ": cannot build a.proto: ", 0), 0U) << what;
    EXPECT_NE(what.find("b.proto"), std::string::npos) << what;

    // With the import, in any order, it builds.
    const auto catalog =
        DescriptorCatalog::fromFiles({a.SerializeAsString(), b.SerializeAsString()}, "test");
    EXPECT_EQ(catalog->methodNames(), std::vector<std::string>{"a.S/M"});
}

TEST(DescriptorCatalog, UnresolvableTypeNamesTheElement) {
    auto [a, b] = importingPair();
    a.mutable_service(0)->mutable_method(0)->set_input_type(".b.Missing");
    const auto e = errorOf([&, &a = a, &b = b] {
        DescriptorCatalog::fromFiles({a.SerializeAsString(), b.SerializeAsString()}, "test");
    });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    const std::string what = e.what();
    EXPECT_NE(what.find("test: cannot build a.proto: a.proto: a.S.M: "), std::string::npos) << what;
    EXPECT_NE(what.find("b.Missing"), std::string::npos) << what;
}

TEST(DescriptorCatalog, ConflictingFilesOfTheSameNameAreRefused) {
    auto [a, b] = importingPair();
    pb::FileDescriptorProto other_b = b;
    other_b.mutable_message_type(0)->mutable_field(0)->set_name("y");
    const auto e = errorOf([&, &a = a, &b = b] {
        DescriptorCatalog::fromFiles(
            {b.SerializeAsString(), a.SerializeAsString(), other_b.SerializeAsString()}, "test");
    });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "test: two different files are named b.proto");

    // The same file twice is fine (two reflection answers may both carry it).
    const auto catalog = DescriptorCatalog::fromFiles(
        {b.SerializeAsString(), a.SerializeAsString(), b.SerializeAsString()}, "test");
    EXPECT_EQ(catalog->methodNames().size(), 1U);
}

TEST(DescriptorCatalog, SymbolDefinedByTwoFilesIsRefused) {
    auto [a, b] = importingPair();
    pb::FileDescriptorProto c = b;
    c.set_name("c.proto");
    const auto e = errorOf([&, &b = b] {
        DescriptorCatalog::fromFiles({b.SerializeAsString(), c.SerializeAsString()}, "test");
    });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "test: b.B is defined both in b.proto and in c.proto");
}

TEST(DescriptorCatalog, BytesThatAreNotFileDescriptorProtosAreRefused) {
    const auto e = errorOf([] {
        DescriptorCatalog::fromFiles({fixtureFile().SerializeAsString(), "\xff\xff\xff"}, "test");
    });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()), "test: file #2 is not a FileDescriptorProto");

    const auto nameless = errorOf([] { DescriptorCatalog::fromFiles({""}, "test"); });
    EXPECT_EQ(std::string(nameless.what()),
              "test: file #1 has no name: it is not a FileDescriptorProto");
    const auto none = errorOf([] { DescriptorCatalog::fromFiles({}, "test"); });
    EXPECT_EQ(std::string(none.what()), "test: no files");
}

TEST(DescriptorCatalog, TooManyFilesAreRefused) {
    std::vector<std::string> files;
    for (int i = 0; i < 1001; ++i) {
        pb::FileDescriptorProto f;
        f.set_name("f" + std::to_string(i) + ".proto");
        files.push_back(f.SerializeAsString());
    }
    const auto e = errorOf([&] { DescriptorCatalog::fromFiles(files, "test"); });
    EXPECT_EQ(std::string(e.what()), "test: 1001 files, more than the 1000 allowed");
    files.pop_back();
    EXPECT_NO_THROW(DescriptorCatalog::fromFiles(files, "test"));
}

// --- JSON -------------------------------------------------------------------------------------

constexpr const char* full_request = R"({
    "text": "hello", "small": -5, "big": "9007199254740993", "ubig": "18446744073709551615",
    "signedSmall": -7, "fixed": "42", "ratio": 1.5, "ratio32": 0.25, "flag": true,
    "blob": "AAEC/w==", "color": "COLOR_GREEN", "inner": {"label": "in", "values": [1, 2]},
    "tags": ["a", "b"], "inners": [{"label": "x"}, {"values": [3]}],
    "counts": {"k": 3}, "byId": {"5": {"label": "five"}, "-6": {}},
    "word": "w", "maybeCount": 0, "at": "2024-01-02T03:04:05.123Z", "wait": "1.500s",
    "extra": {"s": "v", "n": 1, "l": [true, null], "o": {}}, "anyValue": [1, "two"],
    "maybe": 3, "packed": {"@type": "type.googleapis.com/crank.fixture.v1.Inner",
                           "label": "p", "values": [9]},
    "mask": "text,inner.label", "nothing": {},
    "tree": {"name": "root", "children": [{"name": "kid", "children": [{"name": "grandkid"}]}]},
    "colors": ["COLOR_RED", "COLOR_UNSPECIFIED"], "maybeText": ""
})";

TEST(DescriptorCatalogJson, EveryFieldKindRoundTrips) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const std::string binary = catalog->jsonToBinary(request, full_request);
    const auto doc = parse(catalog->binaryToJson(request, binary));
    EXPECT_STREQ(doc["text"].GetString(), "hello");
    EXPECT_EQ(doc["small"].GetInt(), -5);
    // 64-bit integers print as strings: a JSON number would lose 9007199254740993.
    EXPECT_STREQ(doc["big"].GetString(), "9007199254740993");
    EXPECT_STREQ(doc["ubig"].GetString(), "18446744073709551615");
    EXPECT_EQ(doc["signedSmall"].GetInt(), -7);
    EXPECT_STREQ(doc["fixed"].GetString(), "42");
    EXPECT_EQ(doc["ratio"].GetDouble(), 1.5);
    EXPECT_EQ(doc["ratio32"].GetDouble(), 0.25);
    EXPECT_TRUE(doc["flag"].GetBool());
    EXPECT_STREQ(doc["blob"].GetString(), "AAEC/w==");
    EXPECT_STREQ(doc["color"].GetString(), "COLOR_GREEN");
    EXPECT_STREQ(doc["inner"]["label"].GetString(), "in");
    EXPECT_EQ(doc["inner"]["values"][1].GetInt(), 2);
    EXPECT_EQ(doc["tags"].Size(), 2U);
    EXPECT_STREQ(doc["inners"][0]["label"].GetString(), "x");
    // Zero values inside messages are printed too.
    EXPECT_STREQ(doc["inners"][1]["label"].GetString(), "");
    EXPECT_EQ(doc["counts"]["k"].GetInt(), 3);
    EXPECT_STREQ(doc["byId"]["5"]["label"].GetString(), "five");
    EXPECT_TRUE(doc["byId"]["-6"]["values"].IsArray());
    EXPECT_STREQ(doc["word"].GetString(), "w");
    EXPECT_FALSE(doc.HasMember("number"));
    // proto3 optional set to zero keeps its presence.
    EXPECT_EQ(doc["maybeCount"].GetInt(), 0);
    EXPECT_STREQ(doc["at"].GetString(), "2024-01-02T03:04:05.123Z");
    EXPECT_STREQ(doc["wait"].GetString(), "1.500s");
    EXPECT_STREQ(doc["extra"]["s"].GetString(), "v");
    EXPECT_TRUE(doc["extra"]["l"][1].IsNull());
    EXPECT_TRUE(doc["extra"]["o"].IsObject());
    EXPECT_STREQ(doc["anyValue"][1].GetString(), "two");
    EXPECT_EQ(doc["maybe"].GetInt(), 3);
    EXPECT_STREQ(doc["packed"]["@type"].GetString(), "type.googleapis.com/crank.fixture.v1.Inner");
    EXPECT_STREQ(doc["packed"]["label"].GetString(), "p");
    EXPECT_STREQ(doc["mask"].GetString(), "text,inner.label");
    EXPECT_TRUE(doc["nothing"].IsObject());
    EXPECT_EQ(doc["nothing"].MemberCount(), 0U);
    EXPECT_STREQ(doc["tree"]["children"][0]["children"][0]["name"].GetString(), "grandkid");
    EXPECT_STREQ(doc["colors"][0].GetString(), "COLOR_RED");
    EXPECT_STREQ(doc["colors"][1].GetString(), "COLOR_UNSPECIFIED");
    EXPECT_STREQ(doc["maybeText"].GetString(), "");

    // A second trip gives the same message. Not the same bytes: the JSON converter writes fields
    // in the JSON's key order, zero values it was given explicitly, and repeated scalars
    // unpacked; all valid wire forms of the same message.
    const std::string again =
        catalog->jsonToBinary(request, catalog->binaryToJson(request, binary));
    EXPECT_EQ(parse(catalog->binaryToJson(request, again)), doc);
}

TEST(DescriptorCatalogJson, ZeroValuesArePrintedButUnsetMessagesAndOneofsAreNot) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const auto doc = parse(catalog->binaryToJson(request, ""));
    EXPECT_STREQ(doc["text"].GetString(), "");
    EXPECT_EQ(doc["small"].GetInt(), 0);
    EXPECT_STREQ(doc["big"].GetString(), "0");
    EXPECT_STREQ(doc["ubig"].GetString(), "0");
    EXPECT_EQ(doc["ratio"].GetDouble(), 0.0);
    EXPECT_FALSE(doc["flag"].GetBool());
    EXPECT_STREQ(doc["blob"].GetString(), "");
    EXPECT_STREQ(doc["color"].GetString(), "COLOR_UNSPECIFIED");
    EXPECT_TRUE(doc["tags"].IsArray() && doc["tags"].Empty());
    EXPECT_TRUE(doc["counts"].IsObject() && doc["counts"].ObjectEmpty());
    EXPECT_TRUE(doc["byId"].IsObject());
    EXPECT_TRUE(doc["colors"].IsArray());
    for (const char* absent :
         {"inner", "word", "number", "nested", "maybeCount", "at", "wait", "extra", "anyValue",
          "maybe", "packed", "mask", "nothing", "tree", "maybeText"}) {
        EXPECT_FALSE(doc.HasMember(absent)) << absent;
    }
}

TEST(DescriptorCatalogJson, LenientInputFormsOfProtobuf) {
    // protobuf 3.21's parser takes more than the proto3 JSON spec says; the input schema is
    // stricter (input_schema_test.cpp), so these only pass when nothing checks the schema first.
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const auto doc = parse(catalog->binaryToJson(
        request, catalog->jsonToBinary(request, R"({"flag": "yes", "tags": "single",
                                                    "color": 7, "small": 1e2})")));
    EXPECT_TRUE(doc["flag"].GetBool());
    EXPECT_STREQ(doc["tags"][0].GetString(), "single");
    EXPECT_EQ(doc["color"].GetInt(), 7);  // an unknown number of an open enum prints as a number
    EXPECT_EQ(doc["small"].GetInt(), 100);
}

TEST(DescriptorCatalogJson, AlternativeInputFormsAreAccepted) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    // Original field names, int64 as numbers, enums by number, null for a message.
    const auto doc = parse(catalog->binaryToJson(
        request,
        catalog->jsonToBinary(request, R"({"by_id": {"1": {}}, "signed_small": 2, "big": 12,
                                  "color": 1, "colors": [2], "inner": null, "ratio": "NaN",
                                  "ratio32": "-Infinity", "maybe": null, "small": "17"})")));
    EXPECT_TRUE(doc["byId"].HasMember("1"));
    EXPECT_EQ(doc["signedSmall"].GetInt(), 2);
    EXPECT_STREQ(doc["big"].GetString(), "12");
    EXPECT_STREQ(doc["color"].GetString(), "COLOR_RED");
    EXPECT_STREQ(doc["colors"][0].GetString(), "COLOR_GREEN");
    EXPECT_FALSE(doc.HasMember("inner"));
    EXPECT_STREQ(doc["ratio"].GetString(), "NaN");
    EXPECT_STREQ(doc["ratio32"].GetString(), "-Infinity");
    EXPECT_FALSE(doc.HasMember("maybe"));
    EXPECT_EQ(doc["small"].GetInt(), 17);
}

TEST(DescriptorCatalogJson, BadInputsSayWhatIsWrong) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const std::string prefix = "input does not match crank.fixture.v1.EchoRequest: ";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"big": 1.5})", "(big): invalid value 1.5 for type TYPE_INT64"},
        {R"({"small": "x"})", "(small): invalid value \"x\" for type TYPE_INT32"},
        {R"({"ubig": "-1"})", "(ubig): invalid value \"-1\" for type TYPE_UINT64"},
        {R"({"small": 4294967296})", "(small): invalid value 4294967296 for type TYPE_INT32"},
        {R"({"nope": 1})", "nope: Cannot find field."},
        {R"({"color": "PURPLE"})",
         "(color): invalid value \"PURPLE\" for type type.googleapis.com/crank.fixture.v1.Color"},
        {R"({"flag": 1})", "(flag): invalid value 1 for type TYPE_BOOL"},
        {R"({"flag": "maybe"})", "(flag): invalid value \"maybe\" for type TYPE_BOOL"},
        {R"({"small": [1]})", "small: Proto field is not repeating, cannot start list."},
        {R"({"inner": 5})", ""},
        {R"({"word": "a", "number": 1})", "oneof field 'choice' is already set"},
        {R"({"at": "yesterday"})", "(at): "},
        {R"({"wait": "5 minutes"})", "(wait): "},
        {R"({"packed": {"@type": "type.googleapis.com/nope.Nope"}})", "nope.Nope"},
        {R"({"packed": {"label": "no type"}})", "@type"},
        {R"({"blob": "***"})", "(blob): "},
        {"[1]", "Root element must be a message."},
        {"5", ""},
        {"\"text\"", ""},
        {"null", ""},
        {R"({"text": )", ""},
        {R"({"text": "unterminated)", ""},
        {"{", ""},
        {"", ""},
        {R"({"text": "a"} trailing)", ""},
        {R"({"text": "\ud800"})", ""},
    };
    for (const auto& [input, expected] : cases) {
        const auto e = errorOf([&, &input = input] { catalog->jsonToBinary(request, input); });
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << input;
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(prefix, 0), 0U) << input << " -> " << what;
        EXPECT_GT(what.size(), prefix.size()) << input;
        EXPECT_NE(what.find(expected), std::string::npos) << input << " -> " << what;
        EXPECT_EQ(what.find("INVALID_ARGUMENT"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
}

TEST(DescriptorCatalogJson, AnAnyOfAWellKnownTypeTakesTypeAndValueOnceEach) {
    // protobuf 3.21 fails a CHECK (throws FatalException) on any of these: the fuzzer found the
    // first. They are refused before protobuf sees them, and say where and what.
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const auto& any = message(*catalog, "google.protobuf.Any");
    const std::string wkt = "type.googleapis.com/google.protobuf.";
    const std::string takes = " (it takes \"@type\" and \"value\" once each, and nothing else)";
    struct Case {
        const google::protobuf::Descriptor& type;
        std::string input;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {request,
         R"({"packed": {"@type": ")" + wkt + R"(Duration", "value": "1s", "value": "2s"}})",
         "packed: a google.protobuf.Any of google.protobuf.Duration has \"value\" twice" + takes},
        {request,
         R"({"packed": {"@type": ")" + wkt + R"(Duration", "@type": ")" + wkt +
             R"(Duration", "value": "2s"}})",
         "packed: a google.protobuf.Any of google.protobuf.Duration has \"@type\" twice" + takes},
        // The first "@type" names no known type, the second a well-known one (the fuzzer's).
        {request,
         R"({"packed": {"@type": ")" + wkt + R"(DurmaybeTation", "value": "/x", "@type": ")" + wkt +
             R"(Duration", "value": "2s"}})",
         "packed: a google.protobuf.Any has \"@type\" twice (an Any names its type once)"},
        {request,
         R"({"packed": {"@type": "type.googleapis.com/crank.fixture.v1.EchoRequest", "@type": ")" +
             wkt + R"(Duration"}})",
         "packed: a google.protobuf.Any has \"@type\" twice"},
        {request, R"({"packed": {"@type": ")" + wkt + R"(Timestamp", "x": 1, "value": "2s"}})",
         "packed: a google.protobuf.Any of google.protobuf.Timestamp has the member \"x\"" + takes},
        {request, R"({"packed": {"@type": ")" + wkt + R"(Struct", "value": {}, "value": {}}})",
         "packed: a google.protobuf.Any of google.protobuf.Struct has \"value\" twice"},
        {request,
         R"({"packed": {"@type": ")" + wkt + R"(Int64Value", "value": "1", "value": "2"}})",
         "google.protobuf.Int64Value has \"value\" twice"},
        // Inside the payload of an Any of a message type, and of an Any of an Any.
        {request,
         R"({"packed": {"@type": "type.googleapis.com/crank.fixture.v1.EchoRequest",
                      "packed": {"@type": ")" +
             wkt + R"(FieldMask", "value": "a", "value": "b"}}})",
         "packed.packed: a google.protobuf.Any of google.protobuf.FieldMask has \"value\" twice"},
        {any,
         R"({"@type": ")" + wkt + R"(Any", "value": {"@type": ")" + wkt +
             R"(BoolValue", "value": true, "value": false}})",
         "value: a google.protobuf.Any of google.protobuf.BoolValue has \"value\" twice"},
        {any, R"({"@type": ")" + wkt + R"(Duration", "value": "1s", "value": "2s"})",
         "a google.protobuf.Any of google.protobuf.Duration has \"value\" twice"},
        // protobuf's parser takes single quotes and bare keys; nothing else here does.
        {request, R"({'packed': {'@type': ')" + wkt + R"(Duration', 'value': '1s'}})",
         "not JSON: Missing a name for object member. at byte 1"},
        {request, R"({packed: 1})", "not JSON: "},
    };
    for (const auto& c : cases) {
        const auto e = errorOf([&] { catalog->jsonToBinary(c.type, c.input); });
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << c.input;
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("input does not match " + c.type.full_name() + ": ", 0), 0U) << what;
        EXPECT_NE(what.find(c.expected), std::string::npos) << c.input << " -> " << what;
    }
}

TEST(DescriptorCatalogJson, WellFormedAnysOfWellKnownTypesStillConvert) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const std::string wkt = "type.googleapis.com/google.protobuf.";
    // "value" before "@type"; an Any of an Any; an Any of Empty (no "value" of its own); a
    // Struct whose keys look like an Any's (free JSON, not an Any).
    const auto doc = parse(catalog->binaryToJson(
        request,
        catalog->jsonToBinary(
            request, R"({"packed": {"value": "1.5s", "@type": ")" + wkt +
                         R"(Duration"}, "extra": {"@type": "x", "value": 1, "value2": 2}})")));
    EXPECT_STREQ(doc["packed"]["@type"].GetString(), (wkt + "Duration").c_str());
    EXPECT_STREQ(doc["packed"]["value"].GetString(), "1.500s");
    EXPECT_EQ(doc["extra"]["value2"].GetInt(), 2);
    const auto nested = parse(catalog->binaryToJson(
        request, catalog->jsonToBinary(request, R"({"packed": {"@type": ")" + wkt +
                                                    R"(Any", "value": {"@type": ")" + wkt +
                                                    R"(StringValue", "value": "s"}}})")));
    EXPECT_STREQ(nested["packed"]["value"]["value"].GetString(), "s");
    const auto empty = parse(catalog->binaryToJson(
        request,
        catalog->jsonToBinary(request, R"({"packed": {"@type": ")" + wkt + R"(Empty"}})")));
    EXPECT_STREQ(empty["packed"]["@type"].GetString(), (wkt + "Empty").c_str());
}

TEST(DescriptorCatalogJson, HugeStringIsConverted) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const std::string text(std::size_t{10} * 1024 * 1024, 'x');
    const std::string binary = catalog->jsonToBinary(request, R"({"text":")" + text + "\"}");
    EXPECT_GT(binary.size(), text.size());
    const auto doc = parse(catalog->binaryToJson(request, binary));
    EXPECT_EQ(doc["text"].GetStringLength(), text.size());
}

TEST(DescriptorCatalogJson, AMapKeyRepeatedOnTheWirePrintsOnceWithItsLastValue) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    // The wire may repeat a map entry's key; the last one wins (found by the protobuf_json fuzz
    // target: the printer printed both, JSON with "a" twice that protobuf does not read back).
    const std::string first = catalog->jsonToBinary(request, R"({"counts": {"a": 1, "b": 2}})");
    const std::string second = catalog->jsonToBinary(request, R"({"counts": {"a": 3}})");
    const std::string json = catalog->binaryToJson(request, first + second);
    const auto doc = parse(json);
    ASSERT_TRUE(doc["counts"].IsObject()) << json;
    EXPECT_EQ(doc["counts"].MemberCount(), 2U) << json;
    EXPECT_EQ(doc["counts"]["a"].GetInt(), 3) << json;
    EXPECT_EQ(doc["counts"]["b"].GetInt(), 2) << json;
    EXPECT_NO_THROW((void)catalog->jsonToBinary(request, json)) << json;
}

TEST(DescriptorCatalogJson, AFieldRepeatedOnTheWirePrintsOnceWithItsLastValue) {
    const auto catalog = fixtureCatalog();
    // A singular field twice: the last one wins.
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const std::string json = catalog->binaryToJson(
        request, catalog->jsonToBinary(request, R"({"text": "first", "small": 1})") +
                     catalog->jsonToBinary(request, R"({"text": "second"})"));
    const auto doc = parse(json);
    EXPECT_STREQ(doc["text"].GetString(), "second") << json;
    EXPECT_EQ(doc["small"].GetInt(), 1) << json;
    // A google.protobuf.Value whose bool_value (field 4, varint) came 40 times, as the
    // protobuf_json fuzz target sent it: the printer printed "true,true,...", not JSON.
    const auto& value = message(*catalog, "google.protobuf.Value");
    std::string repeated;
    for (int i = 0; i < 40; ++i) {
        repeated += "\x20\x20";
    }
    EXPECT_EQ(catalog->binaryToJson(value, repeated), "true");
}

TEST(DescriptorCatalogJson, DeeplyNestedInputFailsCleanly) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    for (const int depth : {200, 100000}) {
        std::string json = "{\"tree\":";
        for (int i = 0; i < depth; ++i) {
            json += R"({"children":[)";
        }
        for (int i = 0; i < depth; ++i) {
            json += "]}";
        }
        json += "}";
        const auto e = errorOf([&] { catalog->jsonToBinary(request, json); });
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << depth;
        EXPECT_NE(std::string(e.what()).find("deep"), std::string::npos) << e.what();
    }
    // Deeply nested JSON values (google.protobuf.Value lists take protobuf's converter more than
    // quadratic time, hours at this depth) and unbalanced brackets too, quickly.
    const auto started = std::chrono::steady_clock::now();
    const std::string arrays =
        R"({"anyValue":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
    const auto e = errorOf([&] { catalog->jsonToBinary(request, arrays); });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_EQ(std::string(e.what()),
              "input does not match crank.fixture.v1.EchoRequest: nested deeper than 200 levels");
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
    const std::string open_arrays = R"({"anyValue":)" + std::string(100000, '[');
    EXPECT_EQ(errorOf([&] { catalog->jsonToBinary(request, open_arrays); }).code(),
              ErrorCode::invalid_argument);
    // Brackets inside strings do not count.
    EXPECT_NO_THROW(
        catalog->jsonToBinary(request, R"({"text":")" + std::string(1000, '[') + "\\\"\"}"));
    const std::string objects = std::string(100000, '{');
    EXPECT_EQ(errorOf([&] { catalog->jsonToBinary(request, objects); }).code(),
              ErrorCode::invalid_argument);
    // Reasonable nesting is fine.
    std::string ok = "{\"tree\":";
    for (int i = 0; i < 20; ++i) {
        ok += R"({"children":[)";
    }
    for (int i = 0; i < 20; ++i) {
        ok += "]}";
    }
    ok += "}";
    EXPECT_NO_THROW(catalog->jsonToBinary(request, ok));
}

TEST(DescriptorCatalogJson, GarbageResponseBytesAreAProtocolError) {
    const auto catalog = fixtureCatalog();
    const auto& response = message(*catalog, "crank.fixture.v1.EchoResponse");
    const auto& tick = message(*catalog, "crank.fixture.v1.Tick");
    for (const std::string& garbage : {std::string("\xff\xff\xff", 3), std::string("\x08", 1),
                                       std::string("\x0a\x05hi", 4), std::string("\x0f", 1)}) {
        const auto e = errorOf([&] { catalog->binaryToJson(response, garbage); });
        EXPECT_EQ(e.code(), ErrorCode::protocol);
        EXPECT_EQ(std::string(e.what()),
                  "the upstream sent bytes that are not a valid crank.fixture.v1.EchoResponse");
    }
    // A field with the wrong wire type (seq is a varint, sent as a string) is an unknown field
    // by protobuf's rules, not an error: dropped.
    const auto doc = parse(catalog->binaryToJson(tick, std::string("\x0a\x01x", 3)));
    EXPECT_STREQ(doc["seq"].GetString(), "0");
}

/// One length-delimited field: tag, length, bytes.
std::string lengthDelimited(int field, const std::string& value) {
    std::string out(1, static_cast<char>((field << 3) | 2));
    if (field >= 16) {
        out = std::string{static_cast<char>(((field << 3) | 2) | 0x80),
                          static_cast<char>(field >> 4)};
    }
    out.push_back(static_cast<char>(value.size()));  // short values only
    return out + value;
}

/// EchoRequest bytes whose `packed` (26) holds an Any of `url` and `payload`.
std::string echoWithAny(const std::string& url, const std::string& payload) {
    return lengthDelimited(26, lengthDelimited(1, url) + lengthDelimited(2, payload));
}

TEST(DescriptorCatalogJson, AnyPayloadsAreCheckedToo) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const std::string inner = lengthDelimited(1, "lbl");
    auto doc = parse(catalog->binaryToJson(
        request, echoWithAny("type.googleapis.com/crank.fixture.v1.Inner", inner)));
    EXPECT_STREQ(doc["packed"]["label"].GetString(), "lbl");

    // The printer would print garbage as defaults.
    auto e = errorOf([&] {
        catalog->binaryToJson(request, echoWithAny("type.googleapis.com/crank.fixture.v1.Inner",
                                                   std::string("\xff\xff", 2)));
    });
    EXPECT_EQ(e.code(), ErrorCode::protocol);
    EXPECT_EQ(std::string(e.what()),
              "the upstream sent bytes that are not a valid crank.fixture.v1.EchoRequest: a "
              "google.protobuf.Any holds bytes that are not a valid crank.fixture.v1.Inner");
    // Garbage in an Any inside an Any.
    const std::string nested_any =
        echoWithAny("type.googleapis.com/crank.fixture.v1.Inner", std::string("\x0a\x05x", 3));
    EXPECT_EQ(errorOf([&] {
                  catalog->binaryToJson(
                      request,
                      echoWithAny("type.googleapis.com/crank.fixture.v1.EchoRequest", nested_any));
              }).code(),
              ErrorCode::protocol);
    EXPECT_FALSE(
        catalog->anyToJson("type.googleapis.com/crank.fixture.v1.EchoRequest", nested_any));

    // A type the catalog does not know has no JSON form; nor has a URL of another prefix
    // (protobuf's printer accepts only type.googleapis.com/).
    e = errorOf([&] {
        catalog->binaryToJson(request, echoWithAny("type.googleapis.com/unknown.T", inner));
    });
    EXPECT_EQ(e.code(), ErrorCode::protocol);
    EXPECT_EQ(std::string(e.what()),
              "the upstream sent a crank.fixture.v1.EchoRequest that has no JSON form: Invalid "
              "type URL, unknown type: unknown.T");
    e = errorOf([&] {
        catalog->binaryToJson(request, echoWithAny("example.com/crank.fixture.v1.Inner", inner));
    });
    EXPECT_EQ(e.code(), ErrorCode::protocol);
}

TEST(DescriptorCatalogJson, UnknownFieldsAreIgnored) {
    // What the fixture sends (fixture.proto) read with fixture_trimmed.proto, which lacks
    // EchoResponse.metadata and .served and Tick.padding.
    const auto full = fixtureCatalog();
    const auto trimmed = DescriptorCatalog::fromDescriptorSetFile(CRANK_GRPC_FIXTURE_TRIMMED_DESC);
    const std::string binary =
        full->jsonToBinary(message(*full, "crank.fixture.v1.EchoResponse"),
                           R"({"echo": {"text": "hi", "big": "7"}, "metadata": {"k": "v"},
                               "served": "12", "blob": "AQI="})");
    const auto doc =
        parse(trimmed->binaryToJson(message(*trimmed, "crank.fixture.v1.EchoResponse"), binary));
    EXPECT_STREQ(doc["echo"]["text"].GetString(), "hi");
    EXPECT_STREQ(doc["echo"]["big"].GetString(), "7");
    EXPECT_STREQ(doc["blob"].GetString(), "AQI=");
    EXPECT_FALSE(doc.HasMember("metadata"));
    EXPECT_FALSE(doc.HasMember("served"));

    const std::string tick_bytes = full->jsonToBinary(message(*full, "crank.fixture.v1.Tick"),
                                                      R"({"seq": "3", "padding": "xxxx"})");
    const auto tick =
        parse(trimmed->binaryToJson(message(*trimmed, "crank.fixture.v1.Tick"), tick_bytes));
    EXPECT_STREQ(tick["seq"].GetString(), "3");
    EXPECT_FALSE(tick.HasMember("padding"));
}

TEST(DescriptorCatalogJson, AnyToJson) {
    const auto catalog = fixtureCatalog();
    const std::string inner = catalog->jsonToBinary(message(*catalog, "crank.fixture.v1.Inner"),
                                                    R"({"label": "why", "values": [42]})");
    auto json = catalog->anyToJson("type.googleapis.com/crank.fixture.v1.Inner", inner);
    ASSERT_TRUE(json.has_value());
    auto doc = parse(*json);
    EXPECT_STREQ(doc["@type"].GetString(), "type.googleapis.com/crank.fixture.v1.Inner");
    EXPECT_STREQ(doc["label"].GetString(), "why");
    EXPECT_EQ(doc["values"][0].GetInt(), 42);

    // Another URL prefix is kept as sent.
    json = catalog->anyToJson("example.com/types/crank.fixture.v1.Inner", inner);
    ASSERT_TRUE(json.has_value());
    EXPECT_STREQ(parse(*json)["@type"].GetString(), "example.com/types/crank.fixture.v1.Inner");

    // A well-known type gets its {"@type", "value"} form.
    const std::string timestamp = catalog->jsonToBinary(
        message(*catalog, "google.protobuf.Timestamp"), R"("2024-01-02T03:04:05Z")");
    json = catalog->anyToJson("type.googleapis.com/google.protobuf.Timestamp", timestamp);
    ASSERT_TRUE(json.has_value());
    doc = parse(*json);
    EXPECT_STREQ(doc["value"].GetString(), "2024-01-02T03:04:05Z");

    EXPECT_FALSE(catalog->anyToJson("type.googleapis.com/nope.Nope", inner).has_value());
    EXPECT_FALSE(catalog->anyToJson("", inner).has_value());
    EXPECT_FALSE(catalog->anyToJson("type.googleapis.com/", inner).has_value());
    EXPECT_FALSE(
        catalog->anyToJson("type.googleapis.com/crank.fixture.v1.Inner", std::string("\xff\xff", 2))
            .has_value());
}

TEST(DescriptorCatalogJson, ConcurrentConversions) {
    const auto catalog = fixtureCatalog();
    const auto& request = message(*catalog, "crank.fixture.v1.EchoRequest");
    const std::string expected =
        catalog->binaryToJson(request, catalog->jsonToBinary(request, full_request));
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 50; ++i) {
                if (catalog->binaryToJson(request, catalog->jsonToBinary(request, full_request)) !=
                    expected) {
                    ++mismatches;
                }
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace crank::grpc_plugin
