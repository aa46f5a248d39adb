// A minimal Crank plugin: the "echo" protocol adapter (a unary call answers with its rendered
// request as one item) and the "count" aggregator (counts the items of a call).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <crank/sdk.hpp>

namespace {

namespace sdk = crank::sdk;

/// protocol "echo": answers with the request it was given.
class EchoAdapter : public sdk::Adapter {
public:
    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override {
        if (config_json.find("\"fail\"") != std::string_view::npos) {
            diagnostics.error("fail", "the echo adapter has no option \"fail\"");
        }
    }

    void unaryCall(sdk::Call& call, const sdk::Request& request) override {
        if (request.request_json.empty()) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument, "empty request");
        }
        call.emit(request.request_json);
    }
};

/// aggregation_mode "count": {"count": <items seen>}.
class CountAggregate : public sdk::Aggregate {
public:
    void accept(std::string_view /*item_json*/) override { ++count_; }

    void snapshot(sdk::Writer& writer) override {
        writer.append("{\"count\":" + std::to_string(count_) + "}");
    }

private:
    std::uint64_t count_ = 0;
};

class CountAggregator : public sdk::Aggregator {
public:
    std::unique_ptr<sdk::Aggregate> create(std::string_view /*config_json*/,
                                           sdk::Call& /*call*/) override {
        return std::make_unique<CountAggregate>();
    }
};

void registerPlugin(sdk::Registrar& registrar) {
    registrar.addAdapter(
        {"echo", "1.0.0", "Answers with the rendered request", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
        std::make_unique<EchoAdapter>());
    sdk::AggregatorInfo count;
    count.name = "count";
    count.version = "1.0.0";
    count.description = "Counts the items of a call";
    count.output_schema_json =
        R"({"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]})";
    registrar.addAggregator(std::move(count), std::make_unique<CountAggregator>());
}

}  // namespace

CRANK_PLUGIN("minimal", "1.0.0", "An echo adapter and a count aggregator", registerPlugin);
