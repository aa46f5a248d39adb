// The config loader: `operations`, one by one, and one operation for the admin API.

#include <array>
#include <set>

#include <fmt/core.h>

#include "config/config_loader.h"
#include "config/json_reader.h"
#include "config/loader.h"
#include "config/tool_policy.h"
#include "json/json_text.h"

namespace crank::config {
namespace detail {

namespace {

constexpr std::size_t kMaxDescriptionLength = 8192;

constexpr std::array<std::pair<std::string_view, ExecutionMode>, 4> kModes{{
    {"unary", ExecutionMode::unary},
    {"window", ExecutionMode::window},
    {"session", ExecutionMode::session},
    {"async_job", ExecutionMode::async_job},
}};
constexpr std::array<std::pair<std::string_view, OverflowPolicy>, 2> kOverflowPolicies{{
    {"pause", OverflowPolicy::pause},
    {"drop_oldest", OverflowPolicy::drop_oldest},
}};
constexpr std::array<std::pair<std::string_view, TransportBehavior>, 2> kBehaviors{{
    {"request_response", TransportBehavior::request_response},
    {"server_stream", TransportBehavior::server_stream},
}};

}  // namespace

void Loader::readExecution(const Json* v, const std::string& path, OperationConfig& op) {
    ObjectReader r(v, path, errors_);
    ExecutionConfig& e = op.execution;
    using Modes = std::span<const std::pair<std::string_view, ExecutionMode>>;
    using Behaviors = std::span<const std::pair<std::string_view, TransportBehavior>>;
    const std::size_t errorsBefore = errors_.size();
    e.mode = r.enumeration("mode", ExecutionMode::unary, Modes(kModes));
    // With an unknown mode, the checks that depend on the mode would only add noise.
    const bool modeKnown = errors_.size() == errorsBefore;
    const bool behaviorGiven = r.get("transport_behavior") != nullptr;
    e.transport_behavior_given = behaviorGiven;
    e.transport_behavior = r.enumeration("transport_behavior", TransportBehavior::request_response,
                                         Behaviors(kBehaviors));
    if (modeKnown && behaviorGiven && e.mode == ExecutionMode::unary &&
        e.transport_behavior == TransportBehavior::server_stream) {
        errors_.add(r.pathOf("transport_behavior"),
                    "\"server_stream\" needs mode \"window\", \"session\" or \"async_job\"; "
                    "unary returns one response");
    }
    constexpr std::int64_t kMaxMs = ExecutionCeilings::duration_ms;
    e.window_duration_ms = r.positiveInteger("window_duration_ms", e.window_duration_ms, kMaxMs);
    e.poll_interval_ms = r.positiveInteger("poll_interval_ms", e.poll_interval_ms, kMaxMs);
    e.upstream_timeout_ms = r.positiveInteger("upstream_timeout_ms", e.upstream_timeout_ms, kMaxMs);
    e.idle_timeout_ms = r.positiveInteger("idle_timeout_ms", e.idle_timeout_ms, kMaxMs);
    e.max_session_lifetime_ms =
        r.positiveInteger("max_session_lifetime_ms", e.max_session_lifetime_ms, kMaxMs);
    e.max_items = r.positiveInteger("max_items", e.max_items, ExecutionCeilings::max_items);
    e.max_bytes = r.positiveInteger("max_bytes", e.max_bytes, ExecutionCeilings::max_bytes);
    e.overflow_policy = r.enumeration(
        "overflow_policy", OverflowPolicy::pause,
        std::span<const std::pair<std::string_view, OverflowPolicy>>(kOverflowPolicies));
    if (e.mode == ExecutionMode::session && e.idle_timeout_ms > e.max_session_lifetime_ms) {
        errors_.add(r.pathOf("idle_timeout_ms"),
                    fmt::format("must not exceed max_session_lifetime_ms ({}), got {}",
                                e.max_session_lifetime_ms, e.idle_timeout_ms));
    }

    e.max_result_bytes = r.positiveInteger("max_result_bytes", e.max_result_bytes,
                                           ExecutionCeilings::max_result_bytes);
    if (r.get("result_ttl_ms") != nullptr && modeKnown && e.mode != ExecutionMode::async_job) {
        errors_.add(r.pathOf("result_ttl_ms"), "is only used with mode \"async_job\", not \"" +
                                                   std::string(toString(e.mode)) + "\"");
    }
    e.result_ttl_ms = r.positiveInteger("result_ttl_ms", e.result_ttl_ms, 30LL * 86'400'000);

    // Aggregators are plugins: the name is checked against the loaded ones when the runtime
    // compiles the operations; here only its shape.
    if (auto mode = r.optionalString("aggregation_mode", 64)) {
        if (!isPluginName(*mode)) {
            errors_.add(r.pathOf("aggregation_mode"),
                        "an aggregator name has 1 to 64 lowercase letters, digits or '_', got " +
                            describeString(*mode));
        } else {
            e.aggregation_mode = std::move(*mode);
        }
    }
    if (const Json* aggregation = r.get("aggregation")) {
        if (!aggregation->IsObject()) {
            errors_.add(
                r.pathOf("aggregation"),
                "expected an object (the aggregator's config), got " + describe(*aggregation));
        } else {
            e.aggregation_config_json = detail::toJsonText(*aggregation);
        }
    }
    const auto path_ = [&](std::string_view key) {
        auto s = r.optionalString(key, 1024);
        if (s && s->empty()) {
            errors_.add(r.pathOf(key), "must not be empty (leave it out instead)");
            return std::optional<std::string>();
        }
        return s;
    };
    e.items_path = path_("items_path");
    e.summary_path = path_("summary_path");
    e.cursor_path = path_("cursor_path");
    e.status_path = path_("status_path");
    e.done_path = path_("done_path");

    e.truncate_item_fields = r.boolean("truncate_item_fields", e.truncate_item_fields);
    e.max_field_length = r.positiveInteger("max_field_length", e.max_field_length,
                                           ExecutionCeilings::max_field_length);
    e.redacted_paths = r.stringArray("redacted_paths");
    e.drop_duplicates = r.boolean("drop_duplicates", e.drop_duplicates);
    if (const Json* rate = r.get("sampling_rate")) {
        if (!rate->IsNumber() || rate->GetDouble() <= 0.0 || rate->GetDouble() > 1.0) {
            errors_.add(r.pathOf("sampling_rate"),
                        "expected a number greater than 0 and at most 1, got " + describe(*rate));
        } else {
            e.sampling_rate = rate->GetDouble();
        }
    }

    if (r.get("sampling_seed") != nullptr) {
        e.sampling_seed =
            r.integer("sampling_seed", 0, 0, std::numeric_limits<std::int64_t>::max());
    }

    struct FamilyName {
        std::string_view key;
        std::string* target;
        ExecutionMode mode1;
        ExecutionMode mode2;
    };
    const std::array<FamilyName, 6> family{{
        {"start_tool_name", &e.start_tool_name, ExecutionMode::session, ExecutionMode::async_job},
        {"poll_tool_name", &e.poll_tool_name, ExecutionMode::session, ExecutionMode::session},
        {"stop_tool_name", &e.stop_tool_name, ExecutionMode::session, ExecutionMode::session},
        {"status_tool_name", &e.status_tool_name, ExecutionMode::async_job,
         ExecutionMode::async_job},
        {"result_tool_name", &e.result_tool_name, ExecutionMode::async_job,
         ExecutionMode::async_job},
        {"cancel_tool_name", &e.cancel_tool_name, ExecutionMode::async_job,
         ExecutionMode::async_job},
    }};
    for (const FamilyName& f : family) {
        auto name = r.optionalString(f.key, 256);
        if (!name || !modeKnown) {
            continue;
        }
        if (e.mode != f.mode1 && e.mode != f.mode2) {
            const std::string modes = f.mode1 == f.mode2
                                          ? "\"" + std::string(toString(f.mode1)) + "\""
                                          : "\"session\" or \"async_job\"";
            errors_.add(r.pathOf(f.key), "is only used with mode " + modes + ", not \"" +
                                             std::string(toString(e.mode)) + "\"");
        } else if (!isToolName(*name)) {
            errors_.add(r.pathOf(f.key),
                        "a tool name has 1 to 128 letters, digits, '_', '-' or '.', got " +
                            describeString(*name));
        } else {
            *f.target = *name;
        }
    }
    r.finish();
}

OperationConfig Loader::readOperation(const Json& v, const std::string& path) {
    ObjectReader r(&v, path, errors_);
    OperationConfig op;
    if (!r.present()) {
        return op;
    }
    op.source_json = detail::toJsonText(v);
    op.name = r.requiredString("name", kMaxToolNameLength);
    if (!op.name.empty() && !isToolName(op.name)) {
        errors_.add(r.pathOf("name"),
                    "a tool name has 1 to 128 letters, digits, '_', '-' or '.', got " +
                        describeString(op.name));
    }
    op.workspace = r.optionalString("workspace", 64).value_or("default");
    op.title = r.optionalString("title", 256).value_or("");
    // Required, unless the protocol describes the operation itself (a gRPC method): checked when
    // operations are compiled against the plugins.
    op.description = r.optionalString("description", kMaxDescriptionLength).value_or("");
    op.protocol = r.requiredString("protocol", 64);
    if (!op.protocol.empty() && !isPluginName(op.protocol)) {
        errors_.add(r.pathOf("protocol"),
                    "expected a protocol adapter's name (1 to 64 lowercase letters, digits or "
                    "'_'), got " +
                        describeString(op.protocol));
    }
    op.auth_profile = r.optionalString("auth_profile", 64).value_or("");
    op.upstream = r.optionalString("upstream", 256).value_or("");
    op.rate = readRateLimit(r, "rate");
    if (const Json* config = r.get("config")) {
        if (config->IsObject()) {
            op.config_json = detail::toJsonText(*config);
        } else {
            errors_.add(r.pathOf("config"), "expected an object (the " + op.protocol +
                                                " plugin's settings), got " + describe(*config));
        }
    } else {
        op.config_json = "{}";
    }
    if (const Json* schema = r.get("input_schema")) {
        const auto type = schema->IsObject() ? schema->FindMember("type")
                                             : rapidjson::Value::ConstMemberIterator();
        if (!schema->IsObject()) {
            errors_.add(r.pathOf("input_schema"),
                        "expected a JSON Schema object, got " + describe(*schema));
        } else if (type == schema->MemberEnd() || !type->value.IsString() ||
                   std::string_view(type->value.GetString(), type->value.GetStringLength()) !=
                       "object") {
            errors_.add(detail::memberPath(r.pathOf("input_schema"), "type"),
                        "a tool's input schema must have \"type\": \"object\"");
        } else {
            op.input_schema_json = detail::toJsonText(*schema);
            op.input_schema_given = true;
        }
    } else {
        op.input_schema_json = R"({"type":"object"})";
    }
    readExecution(r.get("execution"), r.pathOf("execution"), op);
    r.finish();
    return op;
}

void Loader::readOperations(const Json* v) {
    if (v == nullptr) {
        return;
    }
    if (!v->IsArray()) {
        errors_.add("operations", "expected an array of operations, got " + describe(*v));
        return;
    }
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
        config_.operations.push_back(readOperation((*v)[i], indexPath("operations", i)));
    }
}

OperationLoadResult Loader::loadOperation(const Json& value, const Config& base) {
    OperationConfig op = readOperation(value, "");
    if (errors_.empty()) {
        const bool workspaceKnown =
            std::any_of(base.auth.workspaces.begin(), base.auth.workspaces.end(),
                        [&](const Workspace& ws) { return ws.id == op.workspace; });
        if (!workspaceKnown) {
            errors_.add("workspace",
                        "no workspace \"" + op.workspace + "\" is defined in auth.workspaces");
        }
        if (!op.auth_profile.empty() && base.auth_profiles.count(op.auth_profile) == 0) {
            errors_.add("auth_profile",
                        "no auth profile \"" + op.auth_profile + "\" is defined in auth_profiles");
        }
        std::set<std::string> tools;
        for (const std::string& tool : op.toolNames()) {
            if (tool.size() > kMaxToolNameLength) {
                errors_.add("name", fmt::format("the tool name \"{}\" is longer than {} characters",
                                                tool, kMaxToolNameLength));
            }
            if (!tools.insert(tool).second) {
                errors_.add("execution", "publishes the tool \"" + tool +
                                             "\" twice; give its tools distinct names");
            }
        }
    }
    if (!errors_.empty()) {
        return {std::nullopt, errors_.take()};
    }
    return {std::move(op), {}};
}

}  // namespace detail

OperationLoadResult loadOperation(const rapidjson::Value& value, const Config& base) {
    const LoadOptions options;
    return detail::Loader(options, "operation").loadOperation(value, base);
}

}  // namespace crank::config
