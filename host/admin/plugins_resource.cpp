#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/resources.h"
#include "plugins/adapter_handle.h"
#include "plugins/aggregator_handle.h"
#include "plugins/plugin_registry.h"
#include <crank/plugin.h>

namespace crank::admin {
namespace {

using api::key;
using api::modeNames;
using api::raw;
using api::str;
using api::text;
using api::writeList;
using api::Writer;

/// What this crankd can run: its plugins with their adapters and aggregators, the execution
/// defaults and workspaces (meta), and the auth profiles without their secrets
/// (docs/admin-api.md, "Plugins and meta").
class PluginsResource final : public AdminResource {
public:
    using AdminResource::AdminResource;

    void addRoutes(ApiRouter& router) {
        router.add("GET", {"plugins"}, [this](ApiCall& c) {
            c.out = plugins();
            return std::nullopt;
        });
        router.add("GET", {"meta"}, [this](ApiCall& c) {
            c.out = meta();
            return std::nullopt;
        });
        router.add("GET", {"auth-profiles"}, [this](ApiCall& c) {
            c.out = authProfiles();
            return std::nullopt;
        });
    }

private:
    std::string plugins() const {
        const plugins::PluginRegistry& registry = catalog.plugins();
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "plugins");
        w.StartArray();
        for (const plugins::PluginInfo& info : registry.plugins()) {
            w.StartObject();
            key(w, "name");
            str(w, info.name);
            key(w, "version");
            str(w, info.version);
            key(w, "description");
            str(w, info.description);
            key(w, "abi");
            str(w, fmt::format("{}.{}", info.abi_major, info.abi_minor));
            key(w, "path");
            str(w, info.path);
            key(w, "status");
            str(w, plugins::pluginStatusName(info.status));
            key(w, "reason");
            str(w, info.reason);
            key(w, "adapters");
            w.StartArray();
            for (const std::string& name : info.adapters) {
                if (const plugins::AdapterHandle* a = registry.adapter(name)) {
                    writeAdapter(w, *a);
                }
            }
            w.EndArray();
            key(w, "aggregators");
            w.StartArray();
            for (const std::string& name : info.aggregators) {
                const plugins::AggregatorHandle* a = registry.aggregator(name);
                if (a == nullptr) {
                    continue;
                }
                w.StartObject();
                key(w, "name");
                str(w, a->name());
                key(w, "version");
                str(w, a->version());
                key(w, "description");
                str(w, a->description());
                key(w, "config_schema");
                raw(w, a->configSchemaJson());
                key(w, "output_schema");
                raw(w, a->outputSchemaJson());
                w.EndObject();
            }
            w.EndArray();
            w.EndObject();
        }
        w.EndArray();
        key(w, "all_loaded");
        w.Bool(registry.allLoaded());
        w.EndObject();
        return text(b);
    }

    static void writeAdapter(Writer& w, const plugins::AdapterHandle& a) {
        w.StartObject();
        key(w, "name");
        str(w, a.name());
        key(w, "version");
        str(w, a.version());
        key(w, "description");
        str(w, a.description());
        key(w, "modes");
        writeList(w, modeNames(a.modes()));
        key(w, "capabilities");
        std::string caps;
        for (const auto& [bit, name] : {std::pair{CRANK_CAP_UNARY, "unary"},
                                        std::pair{CRANK_CAP_SERVER_STREAM, "server_stream"},
                                        std::pair{CRANK_CAP_FEDERATION, "federation"}}) {
            if (a.hasCapability(bit)) {
                caps += caps.empty() ? "" : ",";
                caps += name;
            }
        }
        writeList(w, caps);
        key(w, "config_schema");
        raw(w, a.configSchemaJson());
        w.EndObject();
    }

    std::string meta() const {
        using D = config::ExecutionDefaults;
        const plugins::PluginRegistry& registry = catalog.plugins();
        rapidjson::StringBuffer b;
        Writer w(b);
        w.StartObject();
        key(w, "version");
        str(w, context().crank_version);
        key(w, "execution_defaults");
        w.StartObject();
        for (const auto& [name, value] :
             {std::pair<const char*, std::int64_t>{"window_duration_ms", D::window_duration_ms},
              {"poll_interval_ms", D::poll_interval_ms},
              {"upstream_timeout_ms", D::upstream_timeout_ms},
              {"idle_timeout_ms", D::idle_timeout_ms},
              {"max_session_lifetime_ms", D::max_session_lifetime_ms},
              {"max_items", D::max_items},
              {"max_bytes", D::max_bytes},
              {"max_field_length", D::max_field_length},
              {"max_result_bytes", D::max_result_bytes},
              {"result_ttl_ms", D::result_ttl_ms}}) {
            key(w, name);
            w.Int64(value);
        }
        key(w, "aggregation_mode");
        str(w, D::aggregation_mode);
        key(w, "transport_behavior");
        str(w, "request_response");
        key(w, "overflow_policy");
        str(w, "pause");
        key(w, "sampling_rate");
        w.Double(1.0);
        key(w, "truncate_item_fields");
        w.Bool(false);
        key(w, "drop_duplicates");
        w.Bool(false);
        w.EndObject();
        key(w, "modes");
        writeList(w, "unary,window,session,async_job");
        key(w, "aggregation_modes");
        w.StartArray();
        for (const std::string& name : registry.aggregatorNames()) {
            str(w, name);
        }
        w.EndArray();
        key(w, "protocols");
        w.StartArray();
        for (const std::string& name : registry.adapterNames()) {
            if (const plugins::AdapterHandle* a = registry.adapter(name)) {
                writeAdapter(w, *a);
            }
        }
        w.EndArray();
        key(w, "workspaces");
        w.StartArray();
        for (const config::Workspace& ws : config.auth.workspaces) {
            w.StartObject();
            key(w, "id");
            str(w, ws.id);
            key(w, "description");
            str(w, ws.description);
            key(w, "limits");
            w.StartObject();
            key(w, "max_concurrent_calls");
            w.Int64(ws.limits.max_concurrent_calls);
            key(w, "max_sessions");
            w.Int64(ws.limits.max_sessions);
            key(w, "max_jobs");
            w.Int64(ws.limits.max_jobs);
            w.EndObject();
            w.EndObject();
        }
        w.EndArray();
        key(w, "auth_profiles");
        w.StartArray();
        for (const auto& [name, profile] : catalog.compileConfig()->auth_profiles) {
            str(w, name);
        }
        w.EndArray();
        w.EndObject();
        return text(b);
    }

    std::string authProfiles() const {
        rapidjson::StringBuffer b;
        Writer w(b);
        const auto secret = [&](const char* name, const std::optional<config::Secret>& s) {
            key(w, name);
            w.StartObject();
            key(w, "set");
            w.Bool(s.has_value() && !s->empty());
            if (s) {
                key(w, "source");
                str(w, s->source());  // where it comes from; never its value
            }
            w.EndObject();
        };
        w.StartObject();
        key(w, "auth_profiles");
        w.StartArray();
        const std::shared_ptr<const config::Config> now = catalog.compileConfig();
        for (const auto& [name, p] : now->auth_profiles) {
            using Type = config::AuthProfile::Type;
            w.StartObject();
            key(w, "name");
            str(w, name);
            key(w, "type");
            str(w, p.type == Type::bearer    ? "bearer"
                   : p.type == Type::basic   ? "basic"
                   : p.type == Type::api_key ? "api_key"
                                             : "none");
            key(w, "username");
            str(w, p.username);
            key(w, "placement");
            str(w, p.placement == config::AuthProfile::Placement::query ? "query" : "header");
            key(w, "key_name");
            str(w, p.key_name);
            key(w, "headers");
            w.StartObject();
            for (const auto& [h, v] : p.headers) {
                key(w, h);
                str(w, v);
            }
            w.EndObject();
            key(w, "secrets");
            w.StartObject();
            if (p.type == Type::bearer) {
                secret("token", p.token);
            } else if (p.type == Type::basic) {
                secret("password", p.password);
            } else if (p.type == Type::api_key) {
                secret("key", p.key);
            }
            w.EndObject();
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
        return text(b);
    }
};

}  // namespace

std::unique_ptr<AdminResource> addPluginsRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<PluginsResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
