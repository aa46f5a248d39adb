// Federation::check(): an upstream's protocol and adapter config, checked before it is added
// (by a reload, by the admin API), with paths the operator can follow.
#include <string>
#include <vector>

#include <fmt/core.h>

#include "federation/federation.h"
#include "plugins/adapter_handle.h"

namespace crank::federation {

std::vector<config::ConfigError> Federation::check(const config::UpstreamConfig& upstream,
                                                   const plugins::PluginRegistry& registry,
                                                   const std::string& where) {
    std::vector<config::ConfigError> errors;
    const auto path = [&](const std::string& member) {
        return where.empty() ? member : where + "." + member;
    };
    const plugins::AdapterHandle* adapter = registry.adapter(upstream.protocol);
    if (adapter == nullptr || !adapter->hasCapability(CRANK_CAP_FEDERATION)) {
        errors.push_back(
            {path("protocol"), fmt::format("no loaded adapter \"{}\" federates upstreams (see "
                                           "`crankd plugins`)",
                                           upstream.protocol)});
        return errors;
    }
    for (const plugins::Diagnostic& d : adapter->validate(upstream.config_json)) {
        errors.push_back({path("config") + (d.path.empty() ? "" : ".") + d.path, d.message});
    }
    return errors;
}

}  // namespace crank::federation
