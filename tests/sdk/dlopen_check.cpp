// Loads a plugin library with dlopen, as crankd does, and drives its "echo" adapter and
// "count" aggregator through the fake host. Used by tests/sdk/out_of_tree_plugin.sh.
//   sdk_dlopen_check <plugin.so>
#include <cstdio>
#include <string>

#include <crank/testing/fake_host.hpp>
#include <dlfcn.h>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <plugin.so>\n", argv[0]);
        return 2;
    }
    void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): a single-threaded program
        std::fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    auto entry = reinterpret_cast<crank_plugin_entry_fn>(dlsym(library, CRANK_PLUGIN_ENTRY_SYMBOL));
    if (entry == nullptr) {
        std::fprintf(stderr, "no %s\n", CRANK_PLUGIN_ENTRY_SYMBOL);
        return 1;
    }
    int failures = 0;
    auto check = [&](bool ok, const std::string& what) {
        if (!ok) {
            std::fprintf(stderr, "FAILED: %s\n", what.c_str());
            ++failures;
        }
    };
    {
        crank::testing::FakeHost host(entry);
        if (!host.loaded()) {
            std::fprintf(stderr, "not loaded: %s\n", host.initError().c_str());
            return 1;
        }
        check(host.pluginName() == "minimal", "plugin name minimal");
        crank::testing::RequestSpec spec;
        spec.request_json = R"({"hello":"world"})";
        auto result = host.callUnary("echo", spec);
        check(result.ok(), "echo call ok");
        check(result.items.size() == 1 && result.items[0] == spec.request_json,
              "echo answers with its request");
        spec.request_json.clear();
        auto failed = host.callUnary("echo", spec);
        check(failed.status == crank::sdk::Status::error && failed.error &&
                  failed.error->code == crank::sdk::ErrorCode::invalid_argument,
              "echo of an empty request fails with invalid_argument");
        check(!host.validate("echo", R"({"fail":1})").ok(), "echo validate reports \"fail\"");
        auto count = host.aggregate("count", "{}", {"1", "2", "3"});
        check(count.status == crank::sdk::Status::ok && count.snapshot == R"({"count":3})",
              "count aggregates three items: " + count.snapshot);
    }
    dlclose(library);
    if (failures == 0) {
        std::printf("ok: %s\n", argv[1]);
    }
    return failures == 0 ? 0 : 1;
}
