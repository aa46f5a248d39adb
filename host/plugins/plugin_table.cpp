// formatPluginTable() and formatPluginJson(): what `crankd plugins` and the admin API show.

#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "plugins/plugin_registry.h"
#include "util/json_string.h"

namespace crank::plugins {
namespace {

std::string abiText(const PluginInfo& info) {
    if (info.abi_major == 0 && info.abi_minor == 0) {
        return "-";
    }
    return fmt::format("{}.{}", info.abi_major, info.abi_minor);
}

std::string orDash(const std::string& text) {
    return text.empty() ? "-" : text;
}

void appendJsonArray(std::string& out, const std::vector<std::string>& names) {
    out += '[';
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) {
            out += ',';
        }
        appendJsonString(out, names[i]);
    }
    out += ']';
}

}  // namespace

std::string formatPluginTable(const PluginRegistry& registry) {
    const std::vector<PluginInfo>& plugins = registry.plugins();
    if (plugins.empty()) {
        return "no plugins found\n";
    }
    std::vector<std::array<std::string, 5>> rows;
    rows.push_back({"NAME", "VERSION", "ABI", "STATUS", "PATH"});
    for (const PluginInfo& info : plugins) {
        rows.push_back({orDash(info.name), orDash(info.version), abiText(info),
                        std::string(pluginStatusName(info.status)), orDash(info.path)});
    }
    std::array<std::size_t, 5> widths{};
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < row.size(); ++c) {
            widths.at(c) = std::max(widths.at(c), row.at(c).size());
        }
    }
    std::string out;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto& row = rows[r];
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            line += row.at(c);
            if (c + 1 < row.size()) {
                line.append(widths.at(c) - row.at(c).size() + 2, ' ');
            }
        }
        out += line;
        out += '\n';
        if (r == 0) {
            continue;
        }
        const PluginInfo& info = plugins[r - 1];
        if (info.status == PluginStatus::loaded) {
            if (!info.adapters.empty()) {
                out += fmt::format("    adapters: {}\n", fmt::join(info.adapters, ", "));
            }
            if (!info.aggregators.empty()) {
                out += fmt::format("    aggregators: {}\n", fmt::join(info.aggregators, ", "));
            }
        } else if (!info.reason.empty()) {
            out += fmt::format("    reason: {}\n", info.reason);
        }
    }
    return out;
}

std::string formatPluginJson(const PluginRegistry& registry) {
    std::string out = R"({"plugins":[)";
    bool first = true;
    for (const PluginInfo& info : registry.plugins()) {
        if (!first) {
            out += ',';
        }
        first = false;
        out += R"({"name":)";
        appendJsonString(out, info.name);
        out += R"(,"version":)";
        appendJsonString(out, info.version);
        out += R"(,"description":)";
        appendJsonString(out, info.description);
        out += R"(,"abi":)";
        appendJsonString(out, fmt::format("{}.{}", info.abi_major, info.abi_minor));
        out += R"(,"path":)";
        appendJsonString(out, info.path);
        out += R"(,"status":)";
        appendJsonString(out, pluginStatusName(info.status));
        out += R"(,"reason":)";
        appendJsonString(out, info.reason);
        out += R"(,"adapters":)";
        appendJsonArray(out, info.adapters);
        out += R"(,"aggregators":)";
        appendJsonArray(out, info.aggregators);
        out += '}';
    }
    out += R"(],"all_loaded":)";
    out += registry.allLoaded() ? "true" : "false";
    out += '}';
    return out;
}

}  // namespace crank::plugins
