// The config loader: `upstreams`, one by one, and one upstream for the admin API.

#include <array>

#include <fmt/core.h>

#include "config/config_loader.h"
#include "config/json_reader.h"
#include "config/loader.h"
#include "config/tool_policy.h"

namespace crank::config {
namespace detail {

void Loader::readUpstreams(const Json* v) {
    if (v == nullptr) {
        return;
    }
    if (!v->IsArray()) {
        errors_.add("upstreams", "expected an array of upstreams, got " + describe(*v));
        return;
    }
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
        const std::string path = indexPath("upstreams", i);
        if ((*v)[i].IsObject()) {
            config_.upstreams.push_back(readUpstream((*v)[i], path));
        } else {
            ObjectReader r(&(*v)[i], path, errors_);  // names what it is instead
        }
    }
}

UpstreamConfig Loader::readUpstream(const Json& v, const std::string& path) {
    using Naming = UpstreamConfig::Naming;
    static constexpr std::array<std::pair<std::string_view, Naming>, 2> kNamings{
        {{"prefix", Naming::prefix}, {"keep", Naming::keep}}};
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kSeparators{
        {{"_", "_"}, {"__", "__"}, {".", "."}, {"-", "-"}}};
    ObjectReader r(&v, path, errors_);
    UpstreamConfig u;
    u.name = r.requiredString("name", 64);
    if (!u.name.empty() && !isName(u.name)) {
        errors_.add(r.pathOf("name"),
                    "an upstream name has 1 to 64 letters, digits, '_', '-' or '.', got " +
                        describeString(u.name));
    }
    if (auto protocol = r.optionalString("protocol", 64)) {
        if (!isPluginName(*protocol)) {
            errors_.add(r.pathOf("protocol"),
                        "an adapter name has 1 to 64 lowercase letters, digits or '_', got " +
                            describeString(*protocol));
        } else {
            u.protocol = *protocol;
        }
    }
    u.workspace = r.optionalString("workspace", 64).value_or("default");
    u.naming = r.enumeration<Naming>("naming", Naming::prefix, kNamings);
    u.prefix = r.optionalString("prefix", 64).value_or(u.name);
    if (!u.prefix.empty() && !isToolName(u.prefix)) {
        errors_.add(r.pathOf("prefix"), "a prefix has letters, digits, '_', '-' or '.', got " +
                                            describeString(u.prefix));
    }
    u.separator = std::string(r.enumeration<std::string_view>("separator", "_", kSeparators));
    if (const Json* config = r.get("config")) {
        if (!config->IsObject()) {
            errors_.add(r.pathOf("config"),
                        "expected an object (the adapter's config), got " + describe(*config));
        } else {
            u.config_json = detail::toJsonText(*config);
        }
    }
    u.request_timeout_ms = r.integer("request_timeout_ms", u.request_timeout_ms, 100, 86'400'000);
    u.client_request_timeout_ms =
        r.integer("client_request_timeout_ms", u.client_request_timeout_ms, 100, 86'400'000);
    u.max_list_items = r.integer("max_list_items", u.max_list_items, 1, 1'000'000);
    u.min_list_refresh_ms =
        r.integer("min_list_refresh_ms", u.min_list_refresh_ms, 1'000, 86'400'000);
    u.max_subscriptions_per_client =
        r.integer("max_subscriptions_per_client", u.max_subscriptions_per_client, 1, 100'000);
    u.max_subscriptions_per_agent =
        r.integer("max_subscriptions_per_agent", u.max_subscriptions_per_agent, 1, 1'000'000);
    u.tools = readToolPolicy(r, "tools");
    u.rate = readRateLimit(r, "rate");
    r.finish();
    return u;
}

UpstreamLoadResult Loader::loadUpstream(const Json& value, const Config& base) {
    if (!value.IsObject()) {
        errors_.add("", "expected an upstream object, got " + describe(value));
        return {std::nullopt, errors_.take()};
    }
    UpstreamConfig u = readUpstream(value, "");
    if (errors_.empty()) {
        const bool workspaceKnown =
            std::any_of(base.auth.workspaces.begin(), base.auth.workspaces.end(),
                        [&](const Workspace& ws) { return ws.id == u.workspace; });
        if (!workspaceKnown) {
            errors_.add("workspace",
                        "no workspace \"" + u.workspace + "\" is defined in auth.workspaces");
        }
    }
    if (!errors_.empty()) {
        return {std::nullopt, errors_.take()};
    }
    return {std::move(u), {}};
}

}  // namespace detail

UpstreamLoadResult loadUpstream(const rapidjson::Value& value, const Config& base) {
    const LoadOptions options;
    return detail::Loader(options, "upstream").loadUpstream(value, base);
}

}  // namespace crank::config
