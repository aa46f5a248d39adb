// Reading plugin structs honouring struct_size, and the checks of names, views and schemas.
#include "plugins/plugin_struct_reader.h"

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "plugins/plugin_registrar.h"

namespace crank::plugins {
namespace {

#define STR(literal) (crank_str{literal, sizeof(literal) - 1})

crank_status unary(void* /*state*/, crank_call* /*call*/, const crank_request* /*request*/) {
    return CRANK_OK;
}
crank_stream* open(void* /*state*/, crank_call* /*call*/, const crank_request* /*request*/) {
    return nullptr;
}
void streamFn(crank_stream* /*stream*/) {}

crank_adapter fullAdapter() {
    crank_adapter adapter{};
    adapter.struct_size = sizeof adapter;
    adapter.name = STR("rest");
    adapter.version = STR("1.0.0");
    adapter.capabilities = CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM;
    adapter.modes = CRANK_MODE_UNARY;
    adapter.config_schema_json = STR("{}");
    adapter.unary_call = unary;
    adapter.stream_open = open;
    adapter.stream_resume = streamFn;
    adapter.stream_cancel = streamFn;
    adapter.stream_destroy = streamFn;
    return adapter;
}

TEST(PluginStructReader, SmallerStructSizeReadsTheRestAsZero) {
    crank_adapter adapter = fullAdapter();
    adapter.struct_size = offsetof(crank_adapter, stream_open);
    const auto read = readAdapter(&adapter);
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(read->struct_size, sizeof(crank_adapter));
    EXPECT_EQ(read->unary_call, &unary);
    EXPECT_EQ(read->stream_open, nullptr);
    EXPECT_EQ(read->stream_destroy, nullptr);
}

TEST(PluginStructReader, LargerStructSizeReadsOnlyKnownMembers) {
    struct Newer {
        crank_adapter adapter;
        char appended[64];
    } newer{};
    newer.adapter = fullAdapter();
    newer.adapter.struct_size = sizeof newer;
    std::memset(newer.appended, 0xff, sizeof newer.appended);
    const auto read = readAdapter(&newer.adapter);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->stream_destroy, &streamFn);
}

TEST(PluginStructReader, StructBelowItsFixedPartIsRefused) {
    crank_adapter adapter = fullAdapter();
    adapter.struct_size = offsetof(crank_adapter, validate);
    const auto read = readAdapter(&adapter);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "the crank_adapter is too small: struct_size is " +
                                        std::to_string(offsetof(crank_adapter, validate)) +
                                        " bytes, less than the " + std::to_string(kAdapterPrefix) +
                                        " bytes of its fixed part in ABI 1.x");
    EXPECT_FALSE(readAdapter(nullptr).ok());
    crank_aggregator aggregator{};
    aggregator.struct_size = 4;
    EXPECT_FALSE(readAggregator(&aggregator).ok());
}

TEST(PluginStructReader, DescriptorChecks) {
    crank_plugin_descriptor descriptor{};
    descriptor.struct_size = sizeof descriptor;
    descriptor.abi_major = 3;
    auto read = readDescriptor(&descriptor);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message, "built for ABI 3.x; this crankd speaks 1.x");
    descriptor.abi_major = CRANK_ABI_MAJOR;
    descriptor.struct_size = 12;
    read = readDescriptor(&descriptor);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().message.find("too few to hold even the ABI version"), std::string::npos);
    descriptor.struct_size = kDescriptorPrefix;  // no shutdown member: fine
    descriptor.shutdown = [] {};
    read = readDescriptor(&descriptor);
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->shutdown, nullptr);
    EXPECT_EQ(readDescriptor(nullptr).error().message,
              "crank_plugin_entry returned NULL instead of a descriptor");
}

TEST(PluginStructReader, Names) {
    EXPECT_TRUE(isValidPluginName("rest"));
    EXPECT_TRUE(isValidPluginName("grpc_2"));
    EXPECT_TRUE(isValidPluginName(std::string(64, 'a')));
    EXPECT_FALSE(isValidPluginName(std::string(65, 'a')));
    EXPECT_FALSE(isValidPluginName(""));
    EXPECT_FALSE(isValidPluginName("Rest"));
    EXPECT_FALSE(isValidPluginName("my-plugin"));
    EXPECT_FALSE(isValidPluginName("a b"));
    EXPECT_EQ(readName(STR("rest"), "adapter name").value(), "rest");
    EXPECT_EQ(readName(STR(""), "adapter name").error().message,
              "invalid adapter name \"\": it must be 1 to 64 characters among a-z, 0-9 and _");
}

TEST(PluginStructReader, Views) {
    EXPECT_EQ(readText(crank_str{nullptr, 0}, "version").value(), "");
    EXPECT_EQ(readText(crank_str{nullptr, 3}, "version").error().message,
              "the version is an invalid view (NULL pointer, length 3)");
    EXPECT_FALSE(readText(crank_str{"x", kMaxPluginTextBytes + 1}, "version").ok());
}

TEST(PluginStructReader, Schemas) {
    EXPECT_TRUE(readSchema(STR("{\"type\":\"object\"}"), "schema").ok());
    EXPECT_EQ(readSchema(STR("[]"), "schema").error().message, "the schema is not a JSON object");
    EXPECT_EQ(readSchema(STR(""), "schema").error().message,
              "the schema is empty; it must be a JSON Schema object");
    EXPECT_NE(readSchema(STR("{nope"), "schema").error().message.find("is not valid JSON"),
              std::string::npos);
}

PluginRegistrar registrarWithTaken(std::string taken) {
    return PluginRegistrar(
        "lib", [taken](std::string_view name) { return name == taken ? "library 'x'" : ""; },
        nullptr);
}

TEST(PluginRegistrar, AcceptsValidAdaptersAndKeepsThemPending) {
    PluginRegistrar registrar = registrarWithTaken("other");
    const crank_adapter adapter = fullAdapter();
    EXPECT_EQ(registrar.registerAdapter(&adapter), CRANK_OK);
    EXPECT_TRUE(registrar.errors().empty());
    auto adapters = registrar.takeAdapters();
    ASSERT_EQ(adapters.size(), 1U);
    EXPECT_EQ(adapters[0]->name(), "rest");
    EXPECT_EQ(adapters[0]->pluginName(), "lib");
}

TEST(PluginRegistrar, RefusesWithReasons) {
    PluginRegistrar registrar = registrarWithTaken("rest");
    crank_adapter adapter = fullAdapter();
    EXPECT_EQ(registrar.registerAdapter(&adapter), CRANK_ERROR);  // taken by library 'x'
    adapter.name = STR("mine");
    EXPECT_EQ(registrar.registerAdapter(&adapter), CRANK_OK);
    EXPECT_EQ(registrar.registerAdapter(&adapter), CRANK_ERROR);  // twice by this library
    adapter.name = STR("nocap");
    adapter.capabilities = 0;
    EXPECT_EQ(registrar.registerAdapter(&adapter), CRANK_ERROR);
    adapter.name = STR("nounary");
    adapter.capabilities = CRANK_CAP_UNARY;
    adapter.unary_call = nullptr;
    EXPECT_EQ(registrar.registerAdapter(&adapter), CRANK_ERROR);
    crank_aggregator aggregator{};
    aggregator.struct_size = sizeof aggregator;
    aggregator.name = STR("agg");
    aggregator.config_schema_json = STR("{}");
    aggregator.output_schema_json = STR("{}");
    EXPECT_EQ(registrar.registerAggregator(&aggregator), CRANK_ERROR);  // no functions
    registrar.close();
    adapter = fullAdapter();
    adapter.name = STR("late");
    EXPECT_EQ(registrar.registerAdapter(&adapter), CRANK_ERROR);
    EXPECT_EQ(registrar.errors(),
              (std::vector<std::string>{
                  "adapter 'rest' is already registered by library 'x'",
                  "adapter 'mine' is registered twice by this library",
                  "adapter 'nocap' declares no capability (CRANK_CAP_UNARY, "
                  "CRANK_CAP_SERVER_STREAM or CRANK_CAP_FEDERATION)",
                  "adapter 'nounary' declares CRANK_CAP_UNARY but has no unary_call",
                  "aggregator 'agg' has no create, accept, snapshot, destroy (every aggregator "
                  "needs create, accept, snapshot and destroy)",
                  "register_adapter was called outside init(); ignored",
              }));
    EXPECT_EQ(registrar.takeAdapters().size(), 1U);
}

}  // namespace
}  // namespace crank::plugins
