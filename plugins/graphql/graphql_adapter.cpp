#include "graphql_adapter.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

#include <Poco/Net/SSLManager.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "graphql_response.h"
#include "variables_schema.h"
#include <crank/sdk/http/client.hpp>
#include <crank/sdk/http/settings.hpp>
#include <crank/sdk/http/text.hpp>

namespace crank::graphql {
namespace {

using sdk::Error;
using sdk::ErrorCode;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kFallbackTotalMs = 30'000;  // when neither the host nor the config bounds it
constexpr std::size_t kMaxInputDepth = 256;
constexpr const char* kPlugin = "the GraphQL plugin";
constexpr const char* kAccept = "application/graphql-response+json, application/json;q=0.9";

GraphqlConfig configOf(std::string_view json, bool rendered) {
    std::vector<ConfigProblem> problems;
    std::optional<GraphqlConfig> config = parseGraphqlConfig(json, rendered, problems);
    if (!config) {
        const ConfigProblem& p = problems.front();
        const std::string where = p.path.empty() ? "config" : "config." + p.path;
        throw Error(ErrorCode::invalid_argument,
                    where + (rendered ? " (after templates were rendered): " : ": ") + p.message,
                    "{\"path\":" + sdk::jsonQuote(p.path) + "}");
    }
    return std::move(*config);
}

/// The operation of `document` that `name` picks, checked as the plugin runs it. Throws
/// sdk::Error (invalid_argument) naming the member at fault.
OperationDefinition operationOf(const std::string& document, const std::string& name) {
    std::string error;
    const std::optional<ExecutableDocument> parsed = parseExecutable(document, error);
    if (!parsed) {
        throw Error(ErrorCode::invalid_argument, "config.document: " + error,
                    R"({"path":"document"})");
    }
    const OperationDefinition* op = selectOperation(*parsed, name, error);
    if (op == nullptr) {
        const bool named = !name.empty();
        throw Error(ErrorCode::invalid_argument,
                    std::string(named ? "config.operation_name: " : "config.document: ") + error,
                    named ? R"({"path":"operation_name"})" : R"({"path":"document"})");
    }
    if (op->kind == OperationDefinition::Kind::subscription) {
        throw Error(ErrorCode::invalid_argument,
                    "config.document: " +
                        (op->name.empty() ? std::string("the operation")
                                          : "operation \"" + op->name + "\"") +
                        " is a subscription; the GraphQL plugin runs queries and mutations only "
                        "(subscriptions are not supported yet)",
                    R"({"path":"document"})");
    }
    return *op;
}

bool declares(const OperationDefinition& op, std::string_view variable) {
    return std::any_of(op.variables.begin(), op.variables.end(),
                       [&](const VariableDefinition& v) { return v.name == variable; });
}

std::string compact(const rapidjson::Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

/// Parses a JSON object the host handed (input, rendered variables), bounded.
void parseObject(std::string_view json, rapidjson::Document& doc, const char* what) {
    if (json.empty()) {
        doc.SetObject();
        return;
    }
    if (sdk::http::jsonNestingDepth(json) > kMaxInputDepth) {
        throw Error(ErrorCode::invalid_argument, std::string(what) + " is nested deeper than " +
                                                     std::to_string(kMaxInputDepth) + " levels");
    }
    doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        throw Error(ErrorCode::invalid_argument, std::string(what) + " is not a JSON object");
    }
}

/// The request body: {"query", "operationName", "variables"}. Variables are the config's
/// `variables` when given, else the members of the tool's input that the operation declares; the
/// cursor goes into cursor_variable.
std::string requestBody(const PreparedOperation& prepared, const GraphqlConfig& config,
                        const sdk::Request& request) {
    rapidjson::Document source;
    parseObject(config.variables ? std::string_view(*config.variables) : request.input_json, source,
                config.variables ? "config.variables" : "the tool's input");
    rapidjson::Document variables(rapidjson::kObjectType);
    auto& alloc = variables.GetAllocator();
    const rapidjson::Value& from = source;
    for (const auto& m : from.GetObject()) {
        const std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (config.variables || declares(prepared.operation, name)) {
            variables.AddMember(rapidjson::Value(m.name, alloc), rapidjson::Value(m.value, alloc),
                                alloc);
        }
    }
    if (!config.cursor_variable.empty() && !request.cursor.empty()) {
        variables.RemoveMember(config.cursor_variable.c_str());
        variables.AddMember(
            rapidjson::Value(config.cursor_variable.c_str(), alloc),
            rapidjson::Value(request.cursor.data(),
                             static_cast<rapidjson::SizeType>(request.cursor.size()), alloc),
            alloc);
    }
    return prepared.body_prefix + ",\"variables\":" + compact(variables) + "}";
}

sdk::http::RequestPlan planFor(const GraphqlConfig& config) {
    sdk::http::RequestPlan plan;
    plan.plugin = kPlugin;
    plan.method = "POST";
    plan.url = *config.endpoint;
    plan.credential_origin = plan.url.origin();
    plan.accept = kAccept;
    plan.content_type = "application/json";
    sdk::http::applySettings(config.http, plan);
    plan.options.user_agent = "crank-graphql/1.0";
    return plan;
}

/// Sends the plan and reads the response whole, whatever its status (a GraphQL server may answer
/// 4xx with a GraphQL body).
sdk::http::FetchedResponse exchange(sdk::http::ConnectionPool& pool,
                                    const sdk::http::RequestPlan& plan,
                                    const sdk::http::CancelCheck& cancel) {
    sdk::http::FetchedResponse out;
    std::unique_ptr<sdk::http::HttpExchange> exchange =
        sdk::http::send(pool, plan, cancel, nullptr, out.prefix);
    sdk::http::readBody(*exchange, plan, cancel, out);
    return out;
}

bool ok(const sdk::http::FetchedResponse& response) {
    return response.status >= 200 && response.status <= 299;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw Error(ErrorCode::invalid_argument,
                    "config.schema_file: cannot read \"" + sdk::http::excerpt(path, 256) + "\"",
                    R"({"path":"schema_file"})");
    }
    std::string text;
    char buffer[65536];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > GraphqlDefaults::max_schema_bytes) {
            throw Error(ErrorCode::invalid_argument,
                        "config.schema_file: \"" + sdk::http::excerpt(path, 256) +
                            "\" is larger than " +
                            std::to_string(GraphqlDefaults::max_schema_bytes) + " bytes",
                        R"({"path":"schema_file"})");
        }
    }
    return text;
}

/// The endpoint as messages and logs show it: without its query, which may carry a key.
std::string shownEndpoint(const GraphqlConfig& config) {
    return config.endpoint
               ? config.endpoint->describe()
               : sdk::http::excerpt(config.endpoint_text.substr(0, config.endpoint_text.find('?')),
                                    256);
}

std::string schemaKey(const GraphqlConfig& config) {
    if (!config.schema_file.empty()) {
        // An edited file is read again, even within the cache's minute.
        std::error_code ec;
        const auto size = std::filesystem::file_size(config.schema_file, ec);
        const auto stamp = std::filesystem::last_write_time(config.schema_file, ec);
        return "file\n" + config.schema_file + "\n" + std::to_string(ec ? 0 : size) + "\n" +
               std::to_string(ec ? 0 : stamp.time_since_epoch().count());
    }
    std::string key = "endpoint\n" + config.endpoint_text + "\n" +
                      (config.http.tls.verify ? "verify" : "noverify") + "\n" +
                      config.http.tls.ca_file;
    for (const auto& [name, value] : config.http.headers) {
        key.append("\n").append(name).append(": ").append(value);
    }
    return key;
}

}  // namespace

GraphqlAdapter::GraphqlAdapter(sdk::Host host) : host_(host) {
    Poco::Net::initializeSSL();
}

GraphqlAdapter::~GraphqlAdapter() {
    Poco::Net::uninitializeSSL();
}

void GraphqlAdapter::validate(std::string_view config_json, sdk::Diagnostics& diagnostics) {
    std::vector<ConfigProblem> problems;
    const std::optional<GraphqlConfig> config = parseGraphqlConfig(config_json, false, problems);
    for (const ConfigProblem& p : problems) {
        diagnostics.error(p.path, p.message);
    }
    if (!config) {
        return;
    }
    OperationDefinition op;
    try {
        op = operationOf(config->document, config->operation_name);
    } catch (const Error& e) {
        const std::string message = e.what();
        const bool named = message.rfind("config.operation_name", 0) == 0;
        const std::size_t colon = message.find(": ");
        diagnostics.error(named ? "operation_name" : "document", message.substr(colon + 2));
        return;
    }
    if (!config->cursor_variable.empty() && !declares(op, config->cursor_variable)) {
        diagnostics.error("cursor_variable", "the operation declares no variable $" +
                                                 sdk::http::excerpt(config->cursor_variable, 128));
    }
    if (config->variables) {
        rapidjson::Document parsed;
        parsed.Parse<rapidjson::kParseIterativeFlag>(config->variables->data(),
                                                     config->variables->size());
        const rapidjson::Value& variables = parsed;
        for (const auto& m : variables.GetObject()) {
            const std::string name(m.name.GetString(), m.name.GetStringLength());
            if (!declares(op, name)) {
                diagnostics.error("variables." + name, "the operation declares no variable $" +
                                                           sdk::http::excerpt(name, 128));
            }
        }
    }
}

std::string GraphqlAdapter::describe(std::string_view config_json, sdk::Diagnostics& diagnostics) {
    const GraphqlConfig config = configOf(config_json, false);
    const OperationDefinition op = operationOf(config.document, config.operation_name);
    std::string why;
    const std::shared_ptr<const Schema> schema = schemaFor(config, why);
    if (schema) {
        const std::string problem = checkOperation(op, *schema);
        if (!problem.empty()) {
            diagnostics.error("document", problem + " (the schema of " +
                                              (config.schema_file.empty()
                                                   ? shownEndpoint(config) + ", by introspection"
                                                   : config.schema_file) +
                                              ")");
            return {};
        }
    } else if (!why.empty()) {
        host_.log(sdk::LogLevel::warn,
                  "graphql: no schema for \"" + shownEndpoint(config) + "\" (" + why +
                      "): the tool's input schema leaves the document's own input types open");
    }
    std::string out = "{\"transport_behavior\":\"request_response\"";
    // With `variables` in the config, the input feeds templates, not variables: the operator
    // writes the input schema.
    if (!config.variables) {
        std::vector<std::string> warnings;
        std::string error;
        const std::string input = variablesInputSchema(op, schema.get(), warnings, error);
        if (!error.empty()) {
            diagnostics.error("document", error);
            return {};
        }
        for (const std::string& w : warnings) {
            host_.log(sdk::LogLevel::warn, "graphql: " + w);
        }
        out.append(",\"input_schema\":").append(input);
    }
    const std::string description = operationDescription(op, schema.get());
    if (!description.empty()) {
        out.append(",\"description\":");
        sdk::appendJsonString(out, description);
    }
    out.push_back('}');
    return out;
}

std::shared_ptr<const Schema> GraphqlAdapter::schemaFor(const GraphqlConfig& config,
                                                        std::string& why) {
    const std::string key = schemaKey(config);
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto it = schemas_.find(key);
        if (it != schemas_.end() && Clock::now() - it->second.fetched < kSchemaTtl) {
            why = it->second.why;
            return it->second.schema;
        }
    }
    std::shared_ptr<const Schema> schema;
    if (!config.schema_file.empty()) {
        const std::string text = readFile(config.schema_file);
        std::string error;
        std::optional<Schema> parsed = schemaFromText(text, error);
        if (!parsed) {
            throw Error(ErrorCode::invalid_argument,
                        "config.schema_file: \"" + sdk::http::excerpt(config.schema_file, 256) +
                            "\": " + error,
                        R"({"path":"schema_file"})");
        }
        schema = std::make_shared<const Schema>(std::move(*parsed));
    } else if (config.introspection && config.endpoint) {
        schema = introspect(config, why);
    } else {
        return nullptr;  // nothing to fetch: not a failure
    }
    if (why.size() > kMaxWhyBytes) {
        why = sdk::http::excerpt(why, kMaxWhyBytes);
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto now = Clock::now();
    for (auto it = schemas_.begin(); it != schemas_.end();) {
        it = now - it->second.fetched >= kSchemaTtl ? schemas_.erase(it) : std::next(it);
    }
    if (schemas_.size() >= kMaxCachedSchemas) {
        schemas_.clear();
    }
    schemas_[key] = CachedSchema{schema, why, now};
    return schema;
}

std::shared_ptr<const Schema> GraphqlAdapter::introspect(const GraphqlConfig& config,
                                                         std::string& why) {
    sdk::http::RequestPlan plan = planFor(config);
    plan.replayable = true;
    plan.max_response_bytes = GraphqlDefaults::max_schema_bytes;
    plan.setTotal(config.introspection_timeout_ms, "introspection_timeout_ms");
    // First with isOneOf (@oneOf input objects); a server that predates it refuses the field,
    // and is asked again without it, within the same bound.
    for (const bool oneOf : {true, false}) {
        std::string body = "{\"query\":";
        sdk::appendJsonString(body, introspectionQuery(oneOf));
        body.append(",\"operationName\":\"IntrospectionQuery\"}");
        plan.body = std::move(body);
        sdk::http::FetchedResponse response;
        try {
            response = exchange(pool_, plan, [] { return false; });
        } catch (const std::exception& e) {
            why = e.what();
            return nullptr;
        }
        std::string error;
        std::optional<Schema> parsed =
            ok(response) ? schemaFromIntrospection(response.body, error) : std::nullopt;
        if (parsed) {
            return std::make_shared<const Schema>(std::move(*parsed));
        }
        // Refused: a validation error naming the field (200 with errors, or 400).
        const bool refusedOneOf =
            oneOf && (error.find("isOneOf") != std::string::npos ||
                      (!ok(response) && response.body.find("isOneOf") != std::string::npos));
        if (!refusedOneOf) {
            why = response.prefix + "introspection: " +
                  (error.empty() ? "answered " + std::to_string(response.status) + ": " +
                                       sdk::http::excerpt(response.body, 512)
                                 : error);
            return nullptr;
        }
    }
    return nullptr;
}

std::shared_ptr<const PreparedOperation> GraphqlAdapter::prepare(const GraphqlConfig& config) {
    const std::string key = config.operation_name + '\n' + config.document;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto it = operations_.find(key);
        if (it != operations_.end()) {
            return it->second;
        }
    }
    auto prepared = std::make_shared<PreparedOperation>();
    prepared->operation = operationOf(config.document, config.operation_name);
    std::string& body = prepared->body_prefix;
    body = "{\"query\":";
    sdk::appendJsonString(body, config.document);
    if (!prepared->operation.name.empty()) {
        body.append(",\"operationName\":");
        sdk::appendJsonString(body, prepared->operation.name);
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    if (operations_.size() >= kMaxCachedOperations) {
        operations_.clear();
    }
    operations_.emplace(key, prepared);
    return prepared;
}

void GraphqlAdapter::unaryCall(sdk::Call& call, const sdk::Request& request) {
    const GraphqlConfig config = configOf(request.request_json, true);
    const std::shared_ptr<const PreparedOperation> prepared = prepare(config);
    sdk::http::RequestPlan plan = planFor(config);
    plan.auth = sdk::http::parseAuthProfile(request.auth_json, kPlugin);
    request.appendTraceHeaders(plan.extra_headers, &plan.headers);
    plan.body = requestBody(*prepared, config, request);
    // A query changes nothing upstream: it may be sent again after the keep-alive race.
    plan.replayable = prepared->operation.kind == OperationDefinition::Kind::query;
    plan.setCallTotal(config.http.total_ms, request.timeout_ms, kFallbackTotalMs);
    plan.host_deadline_passed = [&call] { return call.cancelReason() == CRANK_CANCEL_DEADLINE; };
    const sdk::http::CancelCheck cancel = [&call] { return call.isCancelled(); };
    const sdk::http::FetchedResponse response = exchange(pool_, plan, cancel);
    std::string item = graphqlItem(response, config);
    call.emit(item);
}

sdk::AdapterInfo graphqlAdapterInfo() {
    sdk::AdapterInfo info;
    info.name = "graphql";
    info.version = "1.0.0";
    info.description =
        "GraphQL upstreams: queries and mutations as tools, input schemas from introspection";
    info.capabilities = CRANK_CAP_UNARY;
    info.modes = CRANK_MODE_UNARY | CRANK_MODE_WINDOW | CRANK_MODE_SESSION | CRANK_MODE_ASYNC_JOB;
    info.config_schema_json = std::string(graphqlConfigSchema());
    return info;
}

void registerGraphqlPlugin(sdk::Registrar& registrar) {
    registrar.addAdapter(graphqlAdapterInfo(), std::make_unique<GraphqlAdapter>(registrar.host()));
}

}  // namespace crank::graphql
