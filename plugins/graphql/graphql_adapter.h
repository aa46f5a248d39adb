#pragma once

// The "graphql" adapter: one POST per call (unary, and the host's polled windows, sessions and
// jobs), the tool's input schema and description derived from the document and the upstream's
// schema at config load (ABI 1.3 describe).

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "graphql_config.h"
#include "graphql_schema.h"
#include "graphql_syntax.h"
#include <crank/sdk.hpp>
#include <crank/sdk/http/exchange.hpp>

namespace crank::graphql {

/// What a call needs of its document, parsed once per (document, operation name).
struct PreparedOperation {
    OperationDefinition operation;
    /// The request body up to its variables: `{"query":"...","operationName":"..."` (the
    /// document escaped once, not per call).
    std::string body_prefix;
};

class GraphqlAdapter : public sdk::Adapter {
public:
    /// Schemas fetched by introspection are kept this long, so that the operations of one config
    /// load share one fetch per endpoint.
    static constexpr std::chrono::seconds kSchemaTtl{60};
    static constexpr std::size_t kMaxCachedOperations = 1024;
    static constexpr std::size_t kMaxCachedSchemas = 64;
    static constexpr std::size_t kMaxWhyBytes = 1024;  ///< why a schema could not be had

    explicit GraphqlAdapter(sdk::Host host = {});
    ~GraphqlAdapter() override;
    GraphqlAdapter(const GraphqlAdapter&) = delete;
    GraphqlAdapter& operator=(const GraphqlAdapter&) = delete;
    GraphqlAdapter(GraphqlAdapter&&) = delete;
    GraphqlAdapter& operator=(GraphqlAdapter&&) = delete;

    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override;
    std::string describe(std::string_view config_json, sdk::Diagnostics& diagnostics) override;
    void unaryCall(sdk::Call& call, const sdk::Request& request) override;

    /// The keep-alive pool shared by every call (tests read its counters).
    sdk::http::ConnectionPool& pool() { return pool_; }

    /// The schema of `config`: its schema_file, else the endpoint's introspection (cached
    /// kSchemaTtl), else nullptr with `why` saying what failed. Throws sdk::Error for a
    /// schema_file that cannot be read or parsed.
    std::shared_ptr<const Schema> schemaFor(const GraphqlConfig& config, std::string& why);

private:
    std::shared_ptr<const PreparedOperation> prepare(const GraphqlConfig& config);
    std::shared_ptr<const Schema> introspect(const GraphqlConfig& config, std::string& why);

    sdk::Host host_;
    sdk::http::ConnectionPool pool_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const PreparedOperation>> operations_;
    struct CachedSchema {
        std::shared_ptr<const Schema> schema;  ///< nullptr: the fetch failed, `why` says how
        std::string why;
        std::chrono::steady_clock::time_point fetched;
    };
    std::map<std::string, CachedSchema> schemas_;
};

/// What the adapter declares to the host.
sdk::AdapterInfo graphqlAdapterInfo();

/// Registers the adapter (the plugin's entry calls it).
void registerGraphqlPlugin(sdk::Registrar& registrar);

}  // namespace crank::graphql
