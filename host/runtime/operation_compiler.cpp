#include "runtime/operation_compiler.h"

#include <map>
#include <string_view>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "config/plugin_secrets.h"
#include "json/json_parse.h"
#include "json/json_text.h"
#include "json/url_template.h"
#include "plugins/adapter_handle.h"
#include "plugins/aggregator_handle.h"
#include "plugins/plugin_registry.h"
#include "runtime/auth_json.h"
#include "runtime/safety_stage.h"
#include "runtime/window_result.h"
#include "util/suggest.h"
#include <crank/plugin.h>

namespace crank::runtime {
namespace {

using config::ConfigErrors;
using config::ExecutionMode;
using config::OperationConfig;
using config::TransportBehavior;

std::uint32_t modeBit(ExecutionMode mode) {
    switch (mode) {
        case ExecutionMode::unary:
            return CRANK_MODE_UNARY;
        case ExecutionMode::window:
            return CRANK_MODE_WINDOW;
        case ExecutionMode::session:
            return CRANK_MODE_SESSION;
        case ExecutionMode::async_job:
            return CRANK_MODE_ASYNC_JOB;
    }
    return 0;
}

/// "plugin "rest" is disabled (add it to plugins.enabled)", or a "did you mean", or nothing.
std::string whyMissing(std::string_view name, const plugins::PluginRegistry& registry,
                       const std::vector<std::string>& registered, std::string_view kind) {
    for (const plugins::PluginInfo& info : registry.plugins()) {
        if (info.name != name) {
            continue;
        }
        switch (info.status) {
            case plugins::PluginStatus::disabled:
                return fmt::format(
                    "; the plugin \"{}\" at {} is disabled: add it to "
                    "plugins.enabled",
                    info.name, info.path);
            case plugins::PluginStatus::rejected:
                return fmt::format("; the plugin \"{}\" at {} was refused: {}", info.name,
                                   info.path, info.reason);
            case plugins::PluginStatus::missing:
                return fmt::format(
                    "; the plugin \"{}\" is enabled but no library in "
                    "plugins.directories provides it",
                    info.name);
            case plugins::PluginStatus::loaded:
                break;
        }
    }
    std::vector<std::string_view> candidates(registered.begin(), registered.end());
    if (auto close = closestMatch(name, candidates)) {
        return fmt::format(" (did you mean \"{}\"?)", *close);
    }
    if (registered.empty()) {
        return fmt::format("; no {} is loaded at all (see `crankd plugins`)", kind);
    }
    std::string list;
    for (const std::string& n : registered) {
        list += (list.empty() ? "\"" : ", \"") + n + "\"";
    }
    return fmt::format("; loaded {}s: {}", kind, list);
}

/// Validates `config_json` against a plugin's schema (compiled once per plugin) and its own
/// validate(); errors are reported under `where`.
class PluginConfigChecker {
public:
    /// Returns false when the config did not match the schema (the plugin's validate() is then
    /// not called: it may rely on the schema).
    bool checkSchema(const std::string& plugin_key, const std::string& schema_json,
                     std::string_view config_json, const std::string& where, ConfigErrors& errors) {
        auto it = schemas_.find(plugin_key);
        if (it == schemas_.end()) {
            auto compiled = json::compileSchema(schema_json, plugin_key + " config schema");
            it = schemas_.emplace(plugin_key, std::move(compiled)).first;
        }
        if (!it->second.ok()) {
            errors.add(where, "cannot be checked: " + it->second.error().message);
            return false;
        }
        const json::ValidationResult result = it->second->validate(config_json, where);
        for (const json::ValidationFailure& f : result.failures) {
            errors.add(f.path, f.message);
        }
        return result.ok();
    }

    /// The config members that the plugin's schema marks as URLs (json::uriMembers()).
    const std::vector<std::vector<std::string>>& urlMembers(const std::string& plugin_key,
                                                            const std::string& schema_json) {
        auto it = url_members_.find(plugin_key);
        if (it == url_members_.end()) {
            json::Document schema;
            std::vector<std::vector<std::string>> members;
            if (json::parseJson(schema_json, schema, plugin_key + " config schema")) {
                members = json::uriMembers(schema);
            }
            it = url_members_.emplace(plugin_key, std::move(members)).first;
        }
        return it->second;
    }

private:
    std::map<std::string, Result<json::CompiledSchema>> schemas_;
    std::map<std::string, std::vector<std::vector<std::string>>> url_members_;
};

void addDiagnostics(const std::vector<plugins::Diagnostic>& diagnostics, const std::string& where,
                    ConfigErrors& errors) {
    for (const plugins::Diagnostic& d : diagnostics) {
        errors.add(d.path.empty() ? where : where + "." + d.path, d.message);
    }
}

bool mapsOutput(const config::ExecutionConfig& e) {
    return e.items_path || e.summary_path || e.cursor_path || e.status_path || e.done_path;
}

/// The operation's auth profile as its plugin receives it, and its secrets (appended to
/// `secrets`); the config loader has checked that the profile exists (a config built otherwise
/// gets an error).
void resolveAuth(const OperationConfig& op, const std::string& path,
                 const std::map<std::string, config::AuthProfile>& profiles, Operation& out,
                 std::vector<std::string>& secrets, ConfigErrors& errors) {
    if (op.auth_profile.empty()) {
        return;
    }
    const auto it = profiles.find(op.auth_profile);
    if (it == profiles.end()) {
        errors.add(
            path + ".auth_profile",
            fmt::format("no auth profile \"{}\" is defined in auth_profiles", op.auth_profile));
        return;
    }
    out.auth_json = authJson(it->second);
    for (std::string& secret : authSecrets(it->second)) {
        secrets.push_back(std::move(secret));
    }
}

/// Every secret the operation's plugin may send and so find echoed: the auth profile's, the
/// {"env": NAME} references of its own config (config/plugin_secrets.h), and for an adapter that
/// federates (its operations call its upstreams' tools) those of its upstreams' configs.
SecretScrubber scrubberOf(const OperationConfig& op, const Operation& out,
                          const std::vector<config::UpstreamConfig>& upstreams,
                          std::vector<std::string> secrets) {
    for (std::string& secret : config::pluginConfigSecretValues(op.config_json)) {
        secrets.push_back(std::move(secret));
    }
    if (out.adapter != nullptr && out.adapter->hasCapability(CRANK_CAP_FEDERATION)) {
        for (const config::UpstreamConfig& u : upstreams) {
            if (u.protocol == out.adapter->name()) {
                for (std::string& secret : config::pluginConfigSecretValues(u.config_json)) {
                    secrets.push_back(std::move(secret));
                }
            }
        }
    }
    return SecretScrubber(std::move(secrets));
}

/// Applies what the adapter says about the operation's tool (crank_adapter.describe): its input
/// schema and transport behaviour when the operation gives none, its description when the
/// operation has none. A behaviour the operation gives that contradicts the adapter is an error.
void applyDescription(const plugins::AdapterHandle& adapter, const std::string& path,
                      OperationConfig& op, ConfigErrors& errors) {
    plugins::AdapterHandle::Description d = adapter.describe(op.config_json);
    if (!d.diagnostics.empty()) {
        addDiagnostics(d.diagnostics, path + ".config", errors);
        return;
    }
    const std::string where = "the protocol \"" + adapter.name() + "\"'s description";
    json::Document doc;
    // Derived schemas of nested messages nest deeper than a config would.
    json::ParseLimits limits;
    limits.max_depth = 512;
    if (auto parsed = json::parseJson(d.json, doc, where, limits); !parsed) {
        errors.add(path + ".config", parsed.error().message);
        return;
    }
    if (!doc.IsObject()) {
        errors.add(path + ".config", where + " is not a JSON object");
        return;
    }
    const json::Value& root = doc;
    if (const auto schema = root.FindMember("input_schema");
        schema != root.MemberEnd() && !op.input_schema_given) {
        const auto type =
            schema->value.IsObject() ? schema->value.FindMember("type") : schema->value.MemberEnd();
        if (!schema->value.IsObject() || type == schema->value.MemberEnd() ||
            !type->value.IsString() || std::string_view(type->value.GetString()) != "object") {
            errors.add(path + ".config", where + ": input_schema is not an object's schema");
        } else {
            op.input_schema_json = json::toJsonText(schema->value);
        }
    }
    if (const auto behavior = root.FindMember("transport_behavior"); behavior != root.MemberEnd()) {
        const std::string_view said =
            behavior->value.IsString()
                ? std::string_view(behavior->value.GetString(), behavior->value.GetStringLength())
                : std::string_view();
        std::optional<TransportBehavior> parsed;
        if (said == config::toString(TransportBehavior::request_response)) {
            parsed = TransportBehavior::request_response;
        } else if (said == config::toString(TransportBehavior::server_stream)) {
            parsed = TransportBehavior::server_stream;
        }
        config::ExecutionConfig& e = op.execution;
        if (!parsed) {
            errors.add(path + ".config", where +
                                             ": transport_behavior is neither "
                                             "\"request_response\" nor \"server_stream\"");
        } else if (!e.transport_behavior_given) {
            e.transport_behavior = *parsed;
        } else if (e.transport_behavior != *parsed) {
            errors.add(
                path + ".execution.transport_behavior",
                fmt::format("is \"{}\", but the upstream's method is \"{}\" (the "
                            "protocol \"{}\" says so): leave it out or write \"{}\"",
                            config::toString(e.transport_behavior), said, adapter.name(), said));
        }
    }
    if (const auto text = root.FindMember("description");
        text != root.MemberEnd() && text->value.IsString() && op.description.empty()) {
        op.description.assign(text->value.GetString(), text->value.GetStringLength());
    }
}

std::optional<Operation> compileOne(const OperationConfig& op, const std::string& path,
                                    const config::Config& config,
                                    const plugins::PluginRegistry& registry,
                                    PluginConfigChecker& checker, ConfigErrors& errors) {
    const std::size_t errorsBefore = errors.size();
    Operation out;
    out.config = op;
    out.path = path;
    const config::ExecutionConfig& e = out.config.execution;
    const std::string execution = path + ".execution";

    out.adapter = registry.adapter(op.protocol);
    if (out.adapter == nullptr) {
        errors.add(path + ".protocol",
                   fmt::format("no loaded plugin provides the protocol \"{}\"{}", op.protocol,
                               whyMissing(op.protocol, registry, registry.adapterNames(),
                                          "protocol adapter")));
    } else {
        const plugins::AdapterHandle& a = *out.adapter;
        if (!a.supportsMode(modeBit(e.mode))) {
            errors.add(execution + ".mode",
                       fmt::format("the protocol \"{}\" does not support mode \"{}\"", a.name(),
                                   config::toString(e.mode)));
        }
        if (checker.checkSchema("adapter " + a.name(), a.configSchemaJson(), op.config_json,
                                path + ".config", errors)) {
            const std::size_t before = errors.size();
            addDiagnostics(a.validate(op.config_json), path + ".config", errors);
            if (errors.size() == before) {
                applyDescription(a, path, out.config, errors);
            }
        }
        const bool streams = e.transport_behavior == TransportBehavior::server_stream;
        if (streams && e.mode == ExecutionMode::unary && !e.transport_behavior_given) {
            errors.add(execution + ".mode",
                       fmt::format("the protocol \"{}\" says this operation's upstream streams: "
                                   "use mode \"window\", \"session\" or \"async_job\"",
                                   a.name()));
        }
        if (streams && !a.hasCapability(CRANK_CAP_SERVER_STREAM)) {
            errors.add(execution + ".transport_behavior",
                       fmt::format("the protocol \"{}\" cannot stream; use \"request_response\"",
                                   a.name()));
        }
        if (!streams && !a.hasCapability(CRANK_CAP_UNARY)) {
            errors.add(
                execution + ".transport_behavior",
                fmt::format("the protocol \"{}\" only streams; use \"server_stream\"", a.name()));
        }
    }

    // A streaming async_job collects a window in the background: it aggregates like one.
    const bool aggregates = e.mode == ExecutionMode::window ||
                            (e.mode == ExecutionMode::async_job &&
                             e.transport_behavior == TransportBehavior::server_stream);
    if (aggregates) {
        out.aggregator = registry.aggregator(e.aggregation_mode);
        if (out.aggregator == nullptr) {
            errors.add(
                execution + ".aggregation_mode",
                fmt::format("no loaded plugin provides the aggregator \"{}\"{}", e.aggregation_mode,
                            whyMissing(e.aggregation_mode, registry, registry.aggregatorNames(),
                                       "aggregator")));
        } else {
            const plugins::AggregatorHandle& g = *out.aggregator;
            if (checker.checkSchema("aggregator " + g.name(), g.configSchemaJson(),
                                    e.aggregation_config_json, execution + ".aggregation",
                                    errors)) {
                addDiagnostics(g.validate(e.aggregation_config_json), execution + ".aggregation",
                               errors);
            }
            auto schema = windowOutputSchema(g.outputSchemaJson(), "aggregator " + g.name());
            if (schema) {
                out.output_schema_json = std::move(*schema);
            } else {
                errors.add(execution + ".aggregation_mode", schema.error().message);
            }
        }
    } else if (e.aggregation_mode != config::ExecutionDefaults::aggregation_mode ||
               e.aggregation_config_json != "{}") {
        errors.add(execution + ".aggregation_mode",
                   "aggregation applies to windows (and streaming async jobs) only; a "
                   "request/response call returns its response");
    }

    if (out.config.description.empty() && out.adapter != nullptr) {
        errors.add(path + ".description",
                   fmt::format("is required (a non-empty string): the protocol \"{}\" does not "
                               "describe this operation itself",
                               op.protocol));
    }
    if (auto schema = json::compileSchema(out.config.input_schema_json, path + ".input_schema")) {
        out.input_schema = std::move(*schema);
    } else {
        errors.add("", schema.error().message);
    }
    static const std::vector<std::vector<std::string>> kNoUrls;
    const std::vector<std::vector<std::string>>& urls =
        out.adapter == nullptr
            ? kNoUrls
            : checker.urlMembers("adapter " + out.adapter->name(), out.adapter->configSchemaJson());
    if (auto compiled = json::compileTemplate(op.config_json, path + ".config", urls)) {
        out.request_template = std::move(*compiled);
    } else {
        errors.add("", compiled.error().message);
    }
    if (auto mapping = OutputMapping::create(e, execution)) {
        out.output_mapping = std::move(*mapping);
    } else {
        errors.add("", mapping.error().message);
    }
    out.maps_output = mapsOutput(e);
    if (auto safety = SafetyStage::create(e, 0, execution); !safety) {
        errors.add("", safety.error().message);
    }
    std::vector<std::string> secrets;
    resolveAuth(op, path, config.auth_profiles, out, secrets, errors);
    out.scrubber = scrubberOf(op, out, config.upstreams, std::move(secrets));
    if (errors.size() != errorsBefore) {
        return std::nullopt;
    }
    return out;
}

}  // namespace

CompiledOperations compileOperations(const config::Config& config,
                                     const plugins::PluginRegistry& registry) {
    CompiledOperations result;
    ConfigErrors errors;
    PluginConfigChecker checker;
    for (std::size_t i = 0; i < config.operations.size(); ++i) {
        const std::string path = fmt::format("operations[{}]", i);
        if (auto op = compileOne(config.operations[i], path, config, registry, checker, errors)) {
            result.operations.push_back(std::make_shared<const Operation>(std::move(*op)));
        }
    }
    result.errors = errors.take();
    return result;
}

namespace {

/// "operation.execution.max_items" -> "execution.max_items", "operation" -> "".
std::string relativePath(std::string_view path, std::string_view root) {
    if (path == root) {
        return {};
    }
    if (path.size() > root.size() && path.substr(0, root.size()) == root &&
        (path[root.size()] == '.' || path[root.size()] == '[')) {
        path.remove_prefix(root.size() + (path[root.size()] == '.' ? 1 : 0));
    }
    return std::string(path);
}

}  // namespace

CompiledOperation compileOperation(const config::OperationConfig& op, const config::Config& config,
                                   const plugins::PluginRegistry& registry) {
    constexpr std::string_view kRoot = "operation";
    CompiledOperation result;
    ConfigErrors errors;
    PluginConfigChecker checker;
    if (auto compiled = compileOne(op, std::string(kRoot), config, registry, checker, errors)) {
        result.operation = std::make_shared<const Operation>(std::move(*compiled));
    }
    for (config::ConfigError& e : errors.take()) {
        // Some messages carry their own path ("operation.input_schema.x: ..."): split it out.
        if (e.path.empty() && e.message.rfind(kRoot, 0) == 0) {
            const auto colon = e.message.find(": ");
            if (colon != std::string::npos) {
                e.path = e.message.substr(0, colon);
                e.message.erase(0, colon + 2);
            }
        }
        e.path = relativePath(e.path, kRoot);
        result.errors.push_back(std::move(e));
    }
    if (!result.errors.empty()) {
        result.operation = nullptr;
    }
    return result;
}

}  // namespace crank::runtime
