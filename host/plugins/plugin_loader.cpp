// loadPlugins(): scanning the plugin directories and loading each library through Boost.DLL.
// Boost.DLL is only the portable dlopen; the contract is crank/plugin.h, checked here field by
// field before anything in the library is called.

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include <boost/dll/runtime_symbol_info.hpp>
#include <fmt/format.h>

#include "log/log.h"
#include "plugins/host_api.h"
#include "plugins/plugin_registry.h"
#include "plugins/plugin_registry_state.h"
#include "plugins/plugin_struct_reader.h"
#include "util/suggest.h"
#include <dlfcn.h>

namespace crank::plugins {
namespace {

namespace fs = std::filesystem;

/// The `*.so` files directly in `directory`, sorted by file name.
std::vector<fs::path> listLibraries(const std::string& directory, bool is_default) {
    std::vector<fs::path> files;
    std::error_code ec;
    if (!fs::is_directory(directory, ec)) {
        if (is_default) {
            log::info("plugin directory {} does not exist; no plugins loaded from it", directory);
        } else {
            log::warn("plugin directory {} does not exist or is not a directory", directory);
        }
        return files;
    }
    fs::directory_iterator it(directory, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const fs::path& path = it->path();
        std::error_code file_ec;
        if (path.extension() == ".so" && fs::is_regular_file(path, file_ec)) {
            files.push_back(path);
        }
    }
    if (ec) {
        log::warn("cannot list plugin directory {}: {}", directory, ec.message());
    }
    std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
        return a.filename().native() < b.filename().native();
    });
    return files;
}

class Loader {
public:
    Loader(const LoadPluginsOptions& options, PluginRegistry::State& state)
        : enabled_(options.enabled.begin(), options.enabled.end()), state_(state) {}

    void loadFile(const fs::path& path);
    void reportMissing(const std::vector<std::string>& enabled,
                       const std::vector<std::string>& directories);

private:
    void loadFileOrThrow(const fs::path& path, PluginInfo& info);
    bool isEnabled(std::string_view name) const {
        return enabled_.empty() || enabled_.count(std::string(name)) > 0;
    }
    void reject(PluginInfo& info, std::string reason) {
        info.status = PluginStatus::rejected;
        info.reason = std::move(reason);
    }
    std::string adapterOwner(std::string_view name) const {
        const auto it = state_.adapters.find(name);
        return it == state_.adapters.end() ? std::string() : ownerText(it->second->pluginName());
    }
    std::string aggregatorOwner(std::string_view name) const {
        const auto it = state_.aggregators.find(name);
        return it == state_.aggregators.end() ? std::string() : ownerText(it->second->pluginName());
    }
    std::string ownerText(const std::string& plugin_name) const {
        const auto it = first_path_.find(plugin_name);
        return it == first_path_.end() ? fmt::format("library '{}'", plugin_name)
                                       : fmt::format("library '{}' ({})", plugin_name, it->second);
    }

    std::set<std::string, std::less<>> enabled_;
    /// Every library name read from a descriptor, with the path where it was first found.
    std::map<std::string, std::string, std::less<>> first_path_;
    /// Libraries refused before their descriptor's name was read.
    std::size_t unnamed_ = 0;
    /// Every library name read from a descriptor, whatever became of the library.
    std::set<std::string, std::less<>> seen_names_;
    /// Whether the name of the library being loaded was read.
    bool name_read_ = false;
    PluginRegistry::State& state_;
};

void Loader::loadFile(const fs::path& path) {
    PluginInfo info;
    info.path = path.string();
    info.name = path.stem().string();
    name_read_ = false;
    try {
        loadFileOrThrow(path, info);
    } catch (const std::exception& e) {
        reject(info, fmt::format("unexpected error while loading: {}", e.what()));
    } catch (...) {
        reject(info, "unexpected error while loading");
    }
    if (info.status == PluginStatus::rejected) {
        if (!name_read_) {
            ++unnamed_;
        }
        log::warn("plugin {} ({}) rejected: {}", info.name, info.path, info.reason);
        // A library whose name could not be read counts against readiness unless an enabled
        // list says which names matter (the missing name is then reported on its own).
        if (isEnabled(info.name)) {
            state_.all_loaded = false;
        }
    } else if (info.status == PluginStatus::disabled) {
        log::info("plugin {} ({}) is not in plugins.enabled; not loaded", info.name, info.path);
    }
    state_.plugins.push_back(std::move(info));
}

void Loader::loadFileOrThrow(const fs::path& path, PluginInfo& info) {
    auto loaded = std::make_unique<LoadedLibrary>();
    loaded->path = info.path;
    std::error_code ec;
    // dlerror() keeps its message per thread (glibc), which is all the loader needs.
    dlerror();  // NOLINT(concurrency-mt-unsafe): clears a stale message
    loaded->library.load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local,
                         ec);
    if (ec || !loaded->library.is_loaded()) {
        const char* why = dlerror();  // NOLINT(concurrency-mt-unsafe): see above
        reject(info, fmt::format("cannot be loaded: {}", why != nullptr ? why : ec.message()));
        return;
    }
    if (!loaded->library.has(CRANK_PLUGIN_ENTRY_SYMBOL)) {
        reject(info, fmt::format("does not export {}: not a Crank plugin, or built without "
                                 "CRANK_PLUGIN_EXPORT on its entry function",
                                 CRANK_PLUGIN_ENTRY_SYMBOL));
        return;
    }
    auto& entry = loaded->library.get<const crank_plugin_descriptor*()>(CRANK_PLUGIN_ENTRY_SYMBOL);
    const crank_plugin_descriptor* raw = entry();
    if (raw != nullptr && raw->struct_size >= kDescriptorVersionPrefix) {
        info.abi_major = raw->abi_major;
        info.abi_minor = raw->abi_minor;
    }
    auto read = readDescriptor(raw);
    if (!read) {
        reject(info, read.error().message);
        return;
    }
    const crank_plugin_descriptor descriptor = *read;
    // Minors only append, so a newer descriptor's name is still where we look for it.
    auto name = readName(descriptor.name, "plugin name");
    if (!name) {
        reject(info, name.error().message);
        return;
    }
    info.name = *name;
    name_read_ = true;
    seen_names_.insert(info.name);
    auto version = readText(descriptor.version, "plugin version");
    auto description = readText(descriptor.description, "plugin description");
    if (!version || !description) {
        reject(info, !version ? version.error().message : description.error().message);
        return;
    }
    info.version = *version;
    info.description = *description;
    if (descriptor.abi_minor > CRANK_ABI_MINOR) {
        reject(info, fmt::format("built for ABI {}.{}, newer than this crankd's {}.{}: upgrade "
                                 "crankd or rebuild the plugin against ABI {}.{}",
                                 descriptor.abi_major, descriptor.abi_minor, CRANK_ABI_MAJOR,
                                 CRANK_ABI_MINOR, CRANK_ABI_MAJOR, CRANK_ABI_MINOR));
        return;
    }
    if (const auto first = first_path_.find(info.name); first != first_path_.end()) {
        reject(info, fmt::format("another library named '{}' was found first ({}); remove one "
                                 "of them",
                                 info.name, first->second));
        return;
    }
    first_path_.emplace(info.name, info.path);
    if (!isEnabled(info.name)) {
        info.status = PluginStatus::disabled;
        info.reason = "not listed in plugins.enabled";
        return;
    }

    loaded->descriptor = descriptor;
    loaded->host = std::make_unique<PluginHost>(info.name);
    loaded->registrar = std::make_unique<PluginRegistrar>(
        info.name, [this](std::string_view n) { return adapterOwner(n); },
        [this](std::string_view n) { return aggregatorOwner(n); });
    const crank_status status =
        descriptor.init(hostApi(), loaded->host->handle(), loaded->registrar->handle());
    loaded->registrar->close();
    const PluginRegistrar& registrar = *loaded->registrar;
    if (status != CRANK_OK) {
        std::string why = registrar.initError();
        if (why.empty()) {
            why = registrar.errors().empty() ? "init returned an error without a reason"
                                             : registrar.errors().front();
        }
        reject(info, fmt::format("init failed: {}", why));
        return;  // unloaded without shutdown(), as plugin.h promises
    }
    if (!registrar.errors().empty()) {
        reject(info, fmt::format("registration failed: {}", registrar.errors().front()));
        // init() succeeded, so the library may hold resources: let it release them.
        if (descriptor.shutdown != nullptr) {
            descriptor.shutdown();
        }
        return;
    }
    auto adapters = loaded->registrar->takeAdapters();
    auto aggregators = loaded->registrar->takeAggregators();
    for (auto& adapter : adapters) {
        info.adapters.push_back(adapter->name());
        std::string key = adapter->name();
        state_.adapters.emplace(std::move(key), std::move(adapter));
    }
    for (auto& aggregator : aggregators) {
        info.aggregators.push_back(aggregator->name());
        std::string key = aggregator->name();
        state_.aggregators.emplace(std::move(key), std::move(aggregator));
    }
    info.status = PluginStatus::loaded;
    state_.libraries.push_back(std::move(loaded));
    log::info(
        "plugin {} {} loaded from {} (adapters: {}; aggregators: {})", info.name, info.version,
        info.path, info.adapters.empty() ? "-" : fmt::format("{}", fmt::join(info.adapters, ", ")),
        info.aggregators.empty() ? "-" : fmt::format("{}", fmt::join(info.aggregators, ", ")));
}

void Loader::reportMissing(const std::vector<std::string>& enabled,
                           const std::vector<std::string>& directories) {
    std::vector<std::string_view> found;
    found.reserve(seen_names_.size());
    for (const std::string& seen : seen_names_) {
        found.emplace_back(seen);
    }
    std::set<std::string, std::less<>> reported;
    for (const std::string& name : enabled) {
        if (seen_names_.count(name) > 0 || !reported.insert(name).second) {
            continue;
        }
        PluginInfo info;
        info.name = name;
        info.status = PluginStatus::missing;
        info.reason = fmt::format("listed in plugins.enabled, but no library in {} provides it",
                                  fmt::join(directories, ", "));
        if (auto hint = closestMatch(name, found)) {
            info.reason += fmt::format(" (did you mean '{}'?)", *hint);
        }
        if (unnamed_ > 0) {
            info.reason += fmt::format("; {} {} refused before {} name could be read, see {}",
                                       unnamed_, unnamed_ == 1 ? "library was" : "libraries were",
                                       unnamed_ == 1 ? "its" : "their",
                                       unnamed_ == 1 ? "its reason" : "their reasons");
        }
        log::warn("plugin {}: {}", name, info.reason);
        state_.all_loaded = false;
        state_.plugins.push_back(std::move(info));
    }
}

}  // namespace

std::string defaultPluginDirectory() {
    try {
        std::error_code ec;
        const fs::path program = boost::dll::program_location(ec);
        if (ec || program.empty()) {
            return {};
        }
        return (program.parent_path() / ".." / "lib" / "crank" / "plugins")
            .lexically_normal()
            .string();
    } catch (...) {
        return {};
    }
}

PluginRegistry loadPlugins(const LoadPluginsOptions& options) {
    auto state = std::make_unique<PluginRegistry::State>();
    const bool use_default = options.directories.empty();
    std::vector<std::string> directories = options.directories;
    if (use_default) {
        directories.clear();
        if (!options.default_directory.empty()) {
            directories.push_back(options.default_directory);
        }
    }
    Loader loader(options, *state);
    for (const std::string& directory : directories) {
        std::vector<fs::path> files;
        try {
            files = listLibraries(directory, use_default);
        } catch (const std::exception& e) {
            log::warn("cannot list plugin directory {}: {}", directory, e.what());
        }
        for (const fs::path& file : files) {
            loader.loadFile(file);
        }
    }
    try {
        loader.reportMissing(options.enabled, directories);
    } catch (...) {  // NOLINT(bugprone-empty-catch): only out of memory can get here
    }
    return PluginRegistry(std::move(state));
}

}  // namespace crank::plugins
