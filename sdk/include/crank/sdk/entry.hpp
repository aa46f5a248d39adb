// Crank SDK, C++ layer: the registration macro that defines the plugin's entry symbol.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "crank/sdk/boundary.hpp"
#include "crank/sdk/registrar.hpp"
#include <crank/plugin.h>

namespace crank::sdk::detail {

/// The signature of the plugin's register function.
using RegisterFunction = void (*)(Registrar&);

/// descriptor->init() of a plugin defined with CRANK_PLUGIN. `registry` is the library's own
/// static storage (null when not initialised).
inline crank_status initPlugin(Registry*& registry, const crank_host_api* api, crank_host* host,
                               crank_registrar* registrar, RegisterFunction fn) noexcept {
    if (api == nullptr) {
        return CRANK_ERROR;
    }
    auto fail = [&](std::string_view message) noexcept {
        if (api->struct_size >= offsetof(crank_host_api, set_init_error) + sizeof(void*) &&
            api->set_init_error != nullptr) {
            api->set_init_error(registrar, toCStr(message));
        }
        return CRANK_ERROR;
    };
    if (api->struct_size < sizeof(crank_host_api)) {
        return fail("the host's callback table is older than the SDK this plugin was built with");
    }
    if (api->abi_major != CRANK_ABI_MAJOR) {
        return fail("the host's plugin ABI major differs from the plugin's");
    }
    if (registry != nullptr) {
        return fail("the plugin library is already initialised (loaded twice by one process?)");
    }
    crank_status status = CRANK_ERROR;
    try {
        auto owned = std::make_unique<Registry>();
        owned->host = Host(api, host);
        Registrar wrapped(*owned, registrar);
        fn(wrapped);
        registry = owned.release();
        status = CRANK_OK;
    } catch (...) {
        reportCurrentException(
            [&](ErrorCode, std::string_view message, std::string_view) noexcept { fail(message); });
    }
    return status;
}

/// descriptor->shutdown(): destroys every adapter and aggregator (their destructors run here).
inline void shutdownPlugin(Registry*& registry) noexcept {
    delete registry;
    registry = nullptr;
}

}  // namespace crank::sdk::detail

/// Defines an entry function named `entry_symbol` (the plugin's descriptor): use CRANK_PLUGIN,
/// which names it crank_plugin_entry. This form exists for tests that link several plugins
/// into one executable and hand each entry to crank::testing::FakeHost.
///
/// name, version and description must be string literals. The descriptor is static and the
/// entry does no work. init() calls `register_function(crank::sdk::Registrar&)` inside
/// try/catch (an exception fails init with its message through set_init_error); everything it
/// registers lives in the library's static storage until shutdown() destroys it.
// NOLINTBEGIN(bugprone-macro-parentheses): the literals are pasted to "" to accept only literals
#define CRANK_PLUGIN_NAMED(entry_symbol, name_literal, version_literal, description_literal,      \
                           register_function)                                                     \
    extern "C" CRANK_PLUGIN_EXPORT const crank_plugin_descriptor* entry_symbol(void) {            \
        struct CrankPluginLibrary {                                                               \
            static ::crank::sdk::detail::Registry*& registry() noexcept {                         \
                static ::crank::sdk::detail::Registry* instance = nullptr;                        \
                return instance;                                                                  \
            }                                                                                     \
            static crank_status init(const crank_host_api* api, crank_host* host,                 \
                                     crank_registrar* registrar) noexcept {                       \
                return ::crank::sdk::detail::initPlugin(registry(), api, host, registrar,         \
                                                        &register_function);                      \
            }                                                                                     \
            static void shutdown() noexcept { ::crank::sdk::detail::shutdownPlugin(registry()); } \
        };                                                                                        \
        static const crank_plugin_descriptor descriptor = {                                       \
            sizeof(crank_plugin_descriptor),                                                      \
            CRANK_ABI_MAJOR,                                                                      \
            CRANK_ABI_MINOR,                                                                      \
            {"" name_literal, sizeof("" name_literal) - 1},                                       \
            {"" version_literal, sizeof("" version_literal) - 1},                                 \
            {"" description_literal, sizeof("" description_literal) - 1},                         \
            &CrankPluginLibrary::init,                                                            \
            &CrankPluginLibrary::shutdown,                                                        \
        };                                                                                        \
        return &descriptor;                                                                       \
    }                                                                                             \
    static_assert(sizeof("" name_literal) > 1, "CRANK_PLUGIN: the plugin name must not be empty")
// NOLINTEND(bugprone-macro-parentheses)

/// Declares the plugin library: defines the exported `crank_plugin_entry` returning a static
/// descriptor (ABI version of this header, the given name, version and description; string
/// literals). Use once per library, at namespace scope, followed by a semicolon:
///
///     void registerPlugin(crank::sdk::Registrar& registrar);
///     CRANK_PLUGIN("minimal", "1.0.0", "An echo adapter and a count aggregator", registerPlugin);
#define CRANK_PLUGIN(name_literal, version_literal, description_literal, register_function)    \
    CRANK_PLUGIN_NAMED(crank_plugin_entry, name_literal, version_literal, description_literal, \
                       register_function)
