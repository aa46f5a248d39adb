// Crank SDK, C++ layer: an aggregator (aggregation_mode) and its per-call state.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "crank/sdk/call.hpp"
#include "crank/sdk/diagnostics.hpp"
#include "crank/sdk/writer.hpp"

namespace crank::sdk {

/// What an aggregator declares (crank_aggregator's descriptive members). The layer keeps a copy
/// until shutdown; the C descriptor's views point into it.
struct AggregatorInfo {
    std::string name;  ///< the operations' `aggregation_mode`, [a-z0-9_]{1,64}, e.g. "stats"
    std::string version;
    std::string description;
    /// JSON Schema of the aggregator's config (`execution.aggregation` of an operation).
    std::string config_schema_json = "{\"type\":\"object\"}";
    /// JSON Schema of what snapshot() writes: an object whose members join the tool result.
    std::string output_schema_json;
};

/// The aggregation state of one call. The host never calls one aggregate concurrently (but
/// successive calls may come from different threads). Memory must stay bounded whatever the
/// item count. Exceptions become errors of the call (see Error).
class Aggregate {
public:
    Aggregate() = default;
    Aggregate(const Aggregate&) = delete;
    Aggregate& operator=(const Aggregate&) = delete;
    Aggregate(Aggregate&&) = delete;
    Aggregate& operator=(Aggregate&&) = delete;
    virtual ~Aggregate() = default;

    /// One item (a JSON value as text; the view dies when this returns). Throwing fails the call.
    virtual void accept(std::string_view item_json) = 0;

    /// Writes the current result, one JSON object, with writer.append(). May be called several
    /// times; must not reset the aggregate. When append() returns false, stop: the layer reports
    /// ErrorCode::resource_exhausted ("the result is larger than the host allows").
    virtual void snapshot(Writer& writer) = 0;
};

/// An aggregator: a factory of aggregates, shared by every call, called concurrently.
class Aggregator {
public:
    Aggregator() = default;
    Aggregator(const Aggregator&) = delete;
    Aggregator& operator=(const Aggregator&) = delete;
    Aggregator(Aggregator&&) = delete;
    Aggregator& operator=(Aggregator&&) = delete;
    virtual ~Aggregator() = default;

    /// Semantic checks of the config beyond its schema, as Adapter::validate.
    virtual void validate(std::string_view /*config_json*/, Diagnostics& /*diagnostics*/) {}

    /// A fresh aggregate for one call (`config_json` has been validated; copy what you keep).
    /// `call` stays valid until the aggregate is destroyed: keep a copy to log or report
    /// progress. Throwing (or returning null) fails the call.
    virtual std::unique_ptr<Aggregate> create(std::string_view config_json, Call& call) = 0;
};

}  // namespace crank::sdk
