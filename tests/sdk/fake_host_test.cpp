// The fake host's own checks: the ABI version rules, descriptor reading, its JSON checker.
#include <string>

#include <gtest/gtest.h>

#include <crank/testing/fake_host.hpp>
#include <crank/testing/json_check.hpp>

namespace {

using crank::testing::FakeHost;

crank_status refuseInit(const crank_host_api* api, crank_host* /*host*/,
                        crank_registrar* registrar) {
    const char* message = "no upstream library found";
    api->set_init_error(registrar, crank_str{message, std::char_traits<char>::length(message)});
    return CRANK_ERROR;
}

int shutdowns = 0;
crank_status acceptInit(const crank_host_api* /*api*/, crank_host* /*host*/,
                        crank_registrar* /*registrar*/) {
    return CRANK_OK;
}
void countShutdown() {
    ++shutdowns;
}

crank_plugin_descriptor makeDescriptor() {
    crank_plugin_descriptor d{};
    d.struct_size = sizeof d;
    d.abi_major = CRANK_ABI_MAJOR;
    d.abi_minor = CRANK_ABI_MINOR;
    d.name = crank_str{"raw", 3};
    d.init = &acceptInit;
    d.shutdown = &countShutdown;
    return d;
}

crank_plugin_descriptor g_descriptor{};
const crank_plugin_descriptor* rawEntry() {
    return &g_descriptor;
}
const crank_plugin_descriptor* nullEntry() {
    return nullptr;
}

TEST(FakeHostAbi, AcceptsTheSameVersionAndCallsShutdownOnce) {
    g_descriptor = makeDescriptor();
    shutdowns = 0;
    {
        FakeHost host(&rawEntry);
        EXPECT_TRUE(host.loaded()) << host.initError();
        EXPECT_TRUE(host.adapterNames().empty());
    }
    EXPECT_EQ(shutdowns, 1);
}

TEST(FakeHostAbi, RefusesAnotherMajor) {
    g_descriptor = makeDescriptor();
    g_descriptor.abi_major = CRANK_ABI_MAJOR + 1;
    FakeHost host(&rawEntry);
    EXPECT_FALSE(host.loaded());
    EXPECT_NE(host.initError().find("the major must match"), std::string::npos) << host.initError();
}

TEST(FakeHostAbi, RefusesANewerMinor) {
    g_descriptor = makeDescriptor();
    g_descriptor.abi_minor = CRANK_ABI_MINOR + 1;
    shutdowns = 0;
    {
        FakeHost host(&rawEntry);
        EXPECT_FALSE(host.loaded());
        EXPECT_NE(host.initError().find("newer than this host's"), std::string::npos)
            << host.initError();
    }
    EXPECT_EQ(shutdowns, 0) << "a refused plugin is never shut down";
}

TEST(FakeHostAbi, RefusesNullTruncatedAndNamelessDescriptors) {
    FakeHost null_entry(&nullEntry);
    EXPECT_FALSE(null_entry.loaded());
    EXPECT_EQ(null_entry.initError(), "crank_plugin_entry returned NULL");
    FakeHost no_entry(nullptr);
    EXPECT_FALSE(no_entry.loaded());

    g_descriptor = makeDescriptor();
    g_descriptor.struct_size = sizeof(size_t);
    FakeHost truncated(&rawEntry);
    EXPECT_FALSE(truncated.loaded());
    EXPECT_NE(truncated.initError().find("truncated"), std::string::npos);

    g_descriptor = makeDescriptor();
    g_descriptor.name = crank_str{"Bad Name", 8};
    FakeHost nameless(&rawEntry);
    EXPECT_FALSE(nameless.loaded());
    EXPECT_NE(nameless.initError().find("[a-z0-9_]"), std::string::npos);
}

TEST(FakeHostAbi, ReadsOnlyWhatTheStructSizeHas) {
    g_descriptor = makeDescriptor();
    g_descriptor.struct_size = offsetof(crank_plugin_descriptor, shutdown);  // no shutdown member
    shutdowns = 0;
    {
        FakeHost host(&rawEntry);
        EXPECT_TRUE(host.loaded()) << host.initError();
        EXPECT_EQ(host.descriptor().shutdown, nullptr);
    }
    EXPECT_EQ(shutdowns, 0);
}

TEST(FakeHostAbi, ReportsThePluginsInitError) {
    g_descriptor = makeDescriptor();
    g_descriptor.init = &refuseInit;
    FakeHost host(&rawEntry);
    EXPECT_FALSE(host.loaded());
    EXPECT_EQ(host.initError(), "no upstream library found");
}

TEST(FakeHostJson, Validates) {
    using crank::testing::isValidJson;
    for (const char* good : {"{}", "[]", "0", "-1.5e+10", "\"a\\u00e9\\n\"", "true", "null",
                             " {\"a\":[1,{\"b\":false}]} ", "\"\\ud83d\\ude00\""}) {
        EXPECT_TRUE(isValidJson(good)) << good;
    }
    for (const char* bad : {"", "{", "{\"a\"}", "[1,]", "01", "1.", "\"\x01\"", "tru", "{} {}",
                            "'a'", "\"\\x\"", "NaN", "{\"a\":1,}"}) {
        EXPECT_FALSE(isValidJson(bad)) << bad;
    }
    EXPECT_FALSE(isValidJson(std::string(1000, '[') + std::string(1000, ']')))
        << "nesting is bounded";
    EXPECT_EQ(crank::testing::jsonStringMember(R"({"x":[1,"path"],"path":"a\"b"})", "path"),
              std::optional<std::string>("a\"b"));
    EXPECT_FALSE(crank::testing::jsonStringMember(R"({"path":1})", "path").has_value());
    EXPECT_FALSE(crank::testing::jsonStringMember("[]", "path").has_value());
}

}  // namespace
