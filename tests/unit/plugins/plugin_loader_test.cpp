// The loader against the broken fixture plugins: one scenario directory per way to fail.
#include <stdlib.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fixture_paths.h"
#include "plugins/plugin_registry.h"

namespace crank::plugins {
namespace {

using testing::scenario;

PluginRegistry loadScenario(std::string_view name, std::vector<std::string> enabled = {}) {
    LoadPluginsOptions options;
    options.directories = {scenario(name)};
    options.enabled = std::move(enabled);
    return loadPlugins(options);
}

/// The one library of a single-library scenario.
const PluginInfo& only(const PluginRegistry& registry) {
    EXPECT_EQ(registry.plugins().size(), 1U);
    return registry.plugins().front();
}

std::string fileIn(std::string_view name, std::string_view file) {
    return scenario(name) + "/" + std::string(file);
}

void expectNothingRegistered(const PluginRegistry& registry) {
    EXPECT_TRUE(registry.adapterNames().empty());
    EXPECT_TRUE(registry.aggregatorNames().empty());
}

TEST(PluginLoader, WrongMajorIsRejected) {
    const PluginRegistry registry = loadScenario("wrong_major");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason, "built for ABI 2.x; this crankd speaks 1.x");
    EXPECT_EQ(info.abi_major, 2U);
    EXPECT_EQ(info.name, "libbroken_wrong_major");  // the descriptor of another major is not read
    EXPECT_EQ(info.path, fileIn("wrong_major", "libbroken_wrong_major.so"));
    EXPECT_FALSE(registry.allLoaded());
    expectNothingRegistered(registry);
}

TEST(PluginLoader, NewerMinorIsRejected) {
    const PluginRegistry registry = loadScenario("newer_minor");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.name, "newer_minor");
    const std::string ours = "1." + std::to_string(CRANK_ABI_MINOR);
    EXPECT_EQ(info.reason, "built for ABI 1." + std::to_string(CRANK_ABI_MINOR + 1) +
                               ", newer than this crankd's " + ours +
                               ": upgrade crankd or rebuild the plugin against ABI " + ours);
    EXPECT_FALSE(registry.allLoaded());
}

TEST(PluginLoader, MissingEntrySymbolIsRejected) {
    const PluginRegistry registry = loadScenario("missing_entry");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.name, "libbroken_missing_entry");
    EXPECT_EQ(info.reason.rfind("does not export crank_plugin_entry", 0), 0U) << info.reason;
}

TEST(PluginLoader, NullEntryIsRejected) {
    const PluginRegistry registry = loadScenario("null_entry");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason, "crank_plugin_entry returned NULL instead of a descriptor");
}

TEST(PluginLoader, FileThatIsNotALibraryIsRejectedWithDlerror) {
    const PluginRegistry registry = loadScenario("not_loadable");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason.rfind("cannot be loaded: ", 0), 0U) << info.reason;
    EXPECT_NE(info.reason.find("libgarbage.so"), std::string::npos) << info.reason;
}

TEST(PluginLoader, InitFailureReportsThePluginsReasonAndKeepsNothing) {
    unsetenv("CRANK_FIXTURE_INIT_FAILS_SHUTDOWN");
    {
        const PluginRegistry registry = loadScenario("init_fails");
        const PluginInfo& info = only(registry);
        EXPECT_EQ(info.status, PluginStatus::rejected);
        EXPECT_EQ(info.name, "init_fails");
        EXPECT_EQ(info.reason, "init failed: cannot find libupstream.so.3; install it");
        EXPECT_TRUE(info.adapters.empty());
        // It registered an adapter before failing: nothing of it stays.
        EXPECT_EQ(registry.adapter("init_fails_adapter"), nullptr);
        expectNothingRegistered(registry);
    }
    // plugin.h: a library whose init() failed is unloaded without shutdown().
    EXPECT_EQ(getenv("CRANK_FIXTURE_INIT_FAILS_SHUTDOWN"), nullptr);
}

TEST(PluginLoader, InitFailureWithoutReasonSaysSo) {
    const PluginRegistry registry = loadScenario("init_silent");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason, "init failed: init returned an error without a reason");
    expectNothingRegistered(registry);
}

TEST(PluginLoader, DuplicateLibraryNameRejectsTheSecond) {
    const PluginRegistry registry = loadScenario("duplicate_library");
    ASSERT_EQ(registry.plugins().size(), 2U);
    const PluginInfo& first = registry.plugins()[0];
    const PluginInfo& second = registry.plugins()[1];
    // Sorted by file name: _a before _b.
    EXPECT_EQ(first.path, fileIn("duplicate_library", "libbroken_twin_a.so"));
    EXPECT_EQ(first.status, PluginStatus::loaded);
    EXPECT_EQ(second.path, fileIn("duplicate_library", "libbroken_twin_b.so"));
    EXPECT_EQ(second.status, PluginStatus::rejected);
    EXPECT_EQ(second.name, "twin");
    EXPECT_EQ(second.reason, "another library named 'twin' was found first (" + first.path +
                                 "); remove one of them");
    EXPECT_NE(registry.adapter("twin_a"), nullptr);
    EXPECT_EQ(registry.adapter("twin_b"), nullptr);
    EXPECT_FALSE(registry.allLoaded());
}

TEST(PluginLoader, DuplicateAdapterRejectsTheWholeSecondLibrary) {
    const PluginRegistry registry = loadScenario("duplicate_adapter");
    ASSERT_EQ(registry.plugins().size(), 2U);
    const PluginInfo& first = registry.plugins()[0];
    const PluginInfo& second = registry.plugins()[1];
    EXPECT_EQ(first.name, "first");
    EXPECT_EQ(first.status, PluginStatus::loaded);
    EXPECT_EQ(first.adapters, (std::vector<std::string>{"unique_first", "shared"}));
    EXPECT_EQ(second.name, "second");
    EXPECT_EQ(second.status, PluginStatus::rejected);
    EXPECT_EQ(second.reason,
              "registration failed: adapter 'shared' is already registered by "
              "library 'first' (" +
                  first.path + ")");
    EXPECT_TRUE(second.adapters.empty());
    // "second" registered unique_second before failing: it must not stay behind.
    EXPECT_EQ(registry.adapter("unique_second"), nullptr);
    ASSERT_NE(registry.adapter("shared"), nullptr);
    EXPECT_EQ(registry.adapter("shared")->pluginName(), "first");
    EXPECT_EQ(registry.adapterNames(), (std::vector<std::string>{"shared", "unique_first"}));
}

TEST(PluginLoader, DescriptorTooSmallIsRejected) {
    const PluginRegistry registry = loadScenario("too_small");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason.rfind("the plugin descriptor is too small: struct_size is 64 bytes, "
                                "less than the 72 bytes",
                                0),
              0U)
        << info.reason;
}

TEST(PluginLoader, AdapterStructTooSmallFailsInit) {
    const PluginRegistry registry = loadScenario("small_adapter");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason.rfind("init failed: the crank_adapter is too small: struct_size is 8 "
                                "bytes",
                                0),
              0U)
        << info.reason;
    expectNothingRegistered(registry);
}

TEST(PluginLoader, InvalidNameIsRejected) {
    const PluginRegistry registry = loadScenario("invalid_name");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason,
              "invalid plugin name \"Bad-Name\": it must be 1 to 64 characters among a-z, 0-9 "
              "and _");
}

TEST(PluginLoader, StreamCapabilityWithoutFunctionsIsRejected) {
    const PluginRegistry registry = loadScenario("stream_without_functions");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason,
              "init failed: adapter 'half_stream' declares CRANK_CAP_SERVER_STREAM but has no "
              "stream_resume, stream_cancel, stream_destroy");
    expectNothingRegistered(registry);
}

TEST(PluginLoader, SchemaThatIsNotJsonIsRejected) {
    const PluginRegistry registry = loadScenario("bad_schema");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::rejected);
    EXPECT_EQ(info.reason.rfind("init failed: adapter 'bad_schema': the config_schema_json is not "
                                "valid JSON (",
                                0),
              0U)
        << info.reason;
}

TEST(PluginLoader, GoodPluginLoads) {
    const PluginRegistry registry = loadScenario("good");
    const PluginInfo& info = only(registry);
    EXPECT_EQ(info.status, PluginStatus::loaded);
    EXPECT_EQ(info.name, "good");
    EXPECT_EQ(info.version, "1.2.0");
    EXPECT_EQ(info.description, "a well-behaved fixture plugin");
    EXPECT_EQ(info.abi_major, 1U);
    EXPECT_EQ(info.abi_minor, static_cast<std::uint32_t>(CRANK_ABI_MINOR));
    EXPECT_EQ(info.path, CRANK_GOOD_PLUGIN_PATH);
    EXPECT_TRUE(info.reason.empty());
    EXPECT_EQ(info.adapters, std::vector<std::string>{"echo"});
    EXPECT_EQ(info.aggregators, std::vector<std::string>{"count"});
    EXPECT_TRUE(registry.allLoaded());
}

TEST(PluginLoader, EveryScenarioAtOnceKeepsOnlyTheGoodRegistrations) {
    LoadPluginsOptions options;
    for (const auto& entry : std::filesystem::directory_iterator(CRANK_BROKEN_PLUGIN_DIR)) {
        options.directories.push_back(entry.path().string());
    }
    std::sort(options.directories.begin(), options.directories.end());
    const PluginRegistry registry = loadPlugins(options);
    std::set<std::string> loaded;
    std::size_t rejected = 0;
    for (const PluginInfo& info : registry.plugins()) {
        if (info.status == PluginStatus::loaded) {
            loaded.insert(info.name);
        } else {
            EXPECT_EQ(info.status, PluginStatus::rejected) << info.name;
            EXPECT_FALSE(info.reason.empty()) << info.name;
            EXPECT_TRUE(info.adapters.empty() && info.aggregators.empty()) << info.name;
            ++rejected;
        }
    }
    EXPECT_EQ(loaded, (std::set<std::string>{"first", "good", "old", "twin"}));
    EXPECT_EQ(rejected, 14U);
    EXPECT_EQ(registry.adapterNames(),
              (std::vector<std::string>{"echo", "old_echo", "shared", "twin_a", "unique_first"}));
    EXPECT_EQ(registry.aggregatorNames(), (std::vector<std::string>{"count", "old_noop"}));
    EXPECT_FALSE(registry.allLoaded());
}

TEST(PluginLoader, LibraryNotEnabledIsListedButNeverInitialised) {
    unsetenv("CRANK_FIXTURE_GOOD_SHUTDOWN");
    {
        LoadPluginsOptions options;
        options.directories = {scenario("good"), scenario("old_build")};
        options.enabled = {"old"};
        const PluginRegistry registry = loadPlugins(options);
        ASSERT_EQ(registry.plugins().size(), 2U);
        const PluginInfo& good = registry.plugins()[0];
        EXPECT_EQ(good.name, "good");
        EXPECT_EQ(good.version, "1.2.0");  // read from the descriptor
        EXPECT_EQ(good.status, PluginStatus::disabled);
        EXPECT_EQ(good.reason, "not listed in plugins.enabled");
        EXPECT_TRUE(good.adapters.empty());
        EXPECT_EQ(registry.adapter("echo"), nullptr);
        EXPECT_EQ(registry.plugins()[1].status, PluginStatus::loaded);
        EXPECT_NE(registry.adapter("old_echo"), nullptr);
        EXPECT_TRUE(registry.allLoaded());  // every enabled library loaded
    }
    // Never initialised, so never shut down.
    EXPECT_EQ(getenv("CRANK_FIXTURE_GOOD_SHUTDOWN"), nullptr);
}

TEST(PluginLoader, BrokenLibraryNotEnabledDoesNotHurtReadiness) {
    LoadPluginsOptions options;
    options.directories = {scenario("good"), scenario("init_fails"), scenario("newer_minor")};
    options.enabled = {"good"};
    const PluginRegistry registry = loadPlugins(options);
    ASSERT_EQ(registry.plugins().size(), 3U);
    EXPECT_EQ(registry.plugins()[0].status, PluginStatus::loaded);
    EXPECT_EQ(registry.plugins()[1].status, PluginStatus::disabled);  // init never called
    EXPECT_EQ(registry.plugins()[2].status, PluginStatus::rejected);  // refused before the check
    EXPECT_TRUE(registry.allLoaded());
}

TEST(PluginLoader, EnabledButMissingIsReported) {
    LoadPluginsOptions options;
    options.directories = {scenario("good")};
    options.enabled = {"good", "gold", "grpc"};
    const PluginRegistry registry = loadPlugins(options);
    ASSERT_EQ(registry.plugins().size(), 3U);
    EXPECT_EQ(registry.plugins()[0].status, PluginStatus::loaded);
    const PluginInfo& gold = registry.plugins()[1];
    EXPECT_EQ(gold.name, "gold");
    EXPECT_EQ(gold.status, PluginStatus::missing);
    EXPECT_TRUE(gold.path.empty());
    EXPECT_EQ(gold.reason, "listed in plugins.enabled, but no library in " + scenario("good") +
                               " provides it (did you mean 'good'?)");
    const PluginInfo& grpc = registry.plugins()[2];
    EXPECT_EQ(grpc.status, PluginStatus::missing);
    EXPECT_EQ(grpc.reason.find("did you mean"), std::string::npos);
    EXPECT_FALSE(registry.allLoaded());
}

TEST(PluginLoader, EnabledButRejectedIsNotAlsoMissing) {
    LoadPluginsOptions options;
    options.directories = {scenario("newer_minor"), scenario("wrong_major")};
    options.enabled = {"newer_minor", "rest"};
    const PluginRegistry registry = loadPlugins(options);
    ASSERT_EQ(registry.plugins().size(), 3U);
    EXPECT_EQ(registry.plugins()[0].status, PluginStatus::rejected);
    EXPECT_EQ(registry.plugins()[1].status, PluginStatus::rejected);
    const PluginInfo& rest = registry.plugins()[2];
    EXPECT_EQ(rest.name, "rest");
    EXPECT_EQ(rest.status, PluginStatus::missing);
    EXPECT_EQ(rest.reason, "listed in plugins.enabled, but no library in " +
                               scenario("newer_minor") + ", " + scenario("wrong_major") +
                               " provides it; 1 library was refused before its name could be "
                               "read, see its reason");
    EXPECT_FALSE(registry.allLoaded());
}

TEST(PluginLoader, DefaultDirectoryIsUsedWhenNoneIsConfigured) {
    LoadPluginsOptions options;
    options.default_directory = scenario("good");
    const PluginRegistry registry = loadPlugins(options);
    ASSERT_EQ(registry.plugins().size(), 1U);
    EXPECT_EQ(registry.plugins()[0].status, PluginStatus::loaded);
    EXPECT_NE(registry.adapter("echo"), nullptr);
}

TEST(PluginLoader, ConfiguredDirectoriesReplaceTheDefault) {
    LoadPluginsOptions options;
    options.directories = {scenario("old_build")};
    options.default_directory = scenario("good");
    const PluginRegistry registry = loadPlugins(options);
    ASSERT_EQ(registry.plugins().size(), 1U);
    EXPECT_EQ(registry.plugins()[0].name, "old");
}

TEST(PluginLoader, MissingDirectoryIsNotFatal) {
    LoadPluginsOptions options;
    options.directories = {scenario("no_such_scenario"), scenario("good")};
    const PluginRegistry registry = loadPlugins(options);
    ASSERT_EQ(registry.plugins().size(), 1U);
    EXPECT_TRUE(registry.allLoaded());
    const PluginRegistry none = loadPlugins(LoadPluginsOptions{});
    EXPECT_TRUE(none.plugins().empty());
    EXPECT_TRUE(none.allLoaded());
}

TEST(PluginLoader, DefaultPluginDirectoryIsBesideTheExecutable) {
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
    const std::string expected =
        (exe.parent_path() / ".." / "lib" / "crank" / "plugins").lexically_normal().string();
    EXPECT_EQ(defaultPluginDirectory(), expected);
}

TEST(PluginLoader, DestructorShutsLoadedLibrariesDown) {
    unsetenv("CRANK_FIXTURE_GOOD_SHUTDOWN");
    {
        const PluginRegistry registry = loadScenario("good");
        ASSERT_TRUE(registry.allLoaded());
        EXPECT_EQ(getenv("CRANK_FIXTURE_GOOD_SHUTDOWN"), nullptr);
    }
    ASSERT_NE(getenv("CRANK_FIXTURE_GOOD_SHUTDOWN"), nullptr);
    EXPECT_STREQ(getenv("CRANK_FIXTURE_GOOD_SHUTDOWN"), "1");
}

TEST(PluginLoader, RegistryMovesWithItsHandles) {
    PluginRegistry registry = loadScenario("good");
    const AdapterHandle* echo = registry.adapter("echo");
    ASSERT_NE(echo, nullptr);
    PluginRegistry moved = std::move(registry);
    EXPECT_EQ(moved.adapter("echo"), echo);
    EXPECT_EQ(registry.adapter("echo"), nullptr);  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(registry.plugins().empty());       // NOLINT(bugprone-use-after-move)
    PluginRegistry assigned;
    assigned = std::move(moved);
    EXPECT_EQ(assigned.adapter("echo"), echo);
}

}  // namespace
}  // namespace crank::plugins
