// Plugins for the SDK's own tests: every way a plugin can throw, stream, aggregate and register.
#include "test_plugins.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <crank/sdk.hpp>

namespace sdk_tests {
std::atomic<int> live_objects{0};
}  // namespace sdk_tests

namespace {

namespace sdk = crank::sdk;
using sdk_tests::live_objects;

/// Throws the exception `kind` names: "error" (sdk::Error upstream, with details), "std"
/// (std::runtime_error), "unknown" (an int). Anything else: no throw.
void throwKind(std::string_view kind) {
    if (kind == "error") {
        throw sdk::Error(sdk::ErrorCode::upstream, "upstream said no", R"({"http_status":503})");
    }
    if (kind == "std") {
        throw std::runtime_error("std failure");
    }
    if (kind == "unknown") {
        throw 42;
    }
}

/// The value of the integer member `"key":` in flat test JSON, or `fallback`.
std::int64_t intMember(std::string_view json, std::string_view key, std::int64_t fallback) {
    const std::string needle = "\"" + std::string(key) + "\":";
    const auto at = json.find(needle);
    if (at == std::string_view::npos) {
        return fallback;
    }
    std::int64_t value = 0;
    for (std::size_t i = at + needle.size(); i < json.size() && json[i] >= '0' && json[i] <= '9';
         ++i) {
        value = value * 10 + (json[i] - '0');
    }
    return value;
}

/// The value of the string member `"key":"..."` (no escapes) in flat test JSON, or "".
std::string stringMember(std::string_view json, std::string_view key) {
    const std::string needle = "\"" + std::string(key) + "\":\"";
    const auto at = json.find(needle);
    if (at == std::string_view::npos) {
        return {};
    }
    const auto end = json.find('"', at + needle.size());
    return std::string(json.substr(at + needle.size(), end - at - needle.size()));
}

class Counted {
public:
    Counted() { ++live_objects; }
    Counted(const Counted&) = delete;
    Counted& operator=(const Counted&) = delete;
    Counted(Counted&&) = delete;
    Counted& operator=(Counted&&) = delete;
    ~Counted() { --live_objects; }
};

/// A ThreadedStream driven by its request: {"mode": "count"|"forever"|"wait", "count": N,
/// "throw": kind, "throw_at": K, "throw_on_cancel": kind}.
class ScriptedStream : public sdk::ThreadedStream {
public:
    explicit ScriptedStream(std::string_view request)
        : mode_(stringMember(request, "mode")),
          throw_(stringMember(request, "stream_throw")),
          count_(intMember(request, "count", 0)),
          throw_at_(intMember(request, "throw_at", -1)) {}

protected:
    void run(sdk::StreamContext& ctx) override {
        if (mode_ == "wait") {
            ctx.waitFor(std::chrono::hours(1));
            throwKind(throw_);  // after a cancel: must end as cancelled, not error
            return;
        }
        for (std::int64_t i = 0; mode_ == "forever" || i < count_; ++i) {
            if (i == throw_at_) {
                throwKind(throw_);
            }
            ctx.call().progress(static_cast<double>(i), static_cast<double>(count_));
            if (!ctx.emit("{\"i\":" + std::to_string(i) + "}")) {
                return;
            }
        }
        ctx.call().setCursor(std::to_string(count_));
    }

private:
    std::string mode_;
    std::string throw_;
    std::int64_t count_;
    std::int64_t throw_at_;
};

/// A plain Stream that misbehaves on purpose: completes twice and emits after completing, or
/// throws from resume/cancel.
class RawStream : public sdk::Stream {
public:
    explicit RawStream(std::string mode) : mode_(std::move(mode)) {}
    void start(sdk::Call call) override {
        call_ = call;
        if (mode_ == "twice") {
            call.emit("{\"a\":1}");
            call.complete(sdk::Status::ok);
            call.emit("{\"late\":true}");
            call.complete(sdk::Status::ok);
        } else if (mode_ == "throw_in_start") {
            throw sdk::Error(sdk::ErrorCode::unavailable, "cannot connect");
        }
    }
    void cancel() override {
        if (mode_ == "throw_on_cancel") {
            call_.complete(sdk::Status::cancelled);
            throw std::runtime_error("cancel blew up");
        }
        call_.complete(sdk::Status::cancelled);
    }

private:
    std::string mode_;
    sdk::Call call_;
};

/// "boundary": every entry point throws what the request (or config) names.
class BoundaryAdapter : public sdk::Adapter, Counted {
public:
    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override {
        const std::string kind = stringMember(config_json, "throw");
        throwKind(kind);
        if (stringMember(config_json, "diag") == "two") {
            diagnostics.error("a\"b\\c", "first problem");
            diagnostics.error("items.0", "second problem");
        }
    }
    void unaryCall(sdk::Call& call, const sdk::Request& request) override {
        throwKind(stringMember(request.request_json, "throw"));
        call.emit(request.request_json);
    }
    std::unique_ptr<sdk::Stream> openStream(sdk::Call& /*call*/,
                                            const sdk::Request& request) override {
        throwKind(stringMember(request.request_json, "throw"));
        const std::string raw = stringMember(request.request_json, "raw");
        if (raw == "null") {
            return nullptr;
        }
        if (!raw.empty()) {
            return std::make_unique<RawStream>(raw);
        }
        return std::make_unique<ScriptedStream>(request.request_json);
    }
};

/// "request_echo": emits the request's members as one JSON object.
class RequestEchoAdapter : public sdk::Adapter, Counted {
public:
    void unaryCall(sdk::Call& call, const sdk::Request& r) override {
        std::string out = "{\"operation_name\":" + sdk::jsonQuote(r.operation_name) +
                          ",\"config_json\":" + sdk::jsonQuote(r.config_json) +
                          ",\"request_json\":" + sdk::jsonQuote(r.request_json) +
                          ",\"input_json\":" + sdk::jsonQuote(r.input_json) +
                          ",\"auth_json\":" + sdk::jsonQuote(r.auth_json) +
                          ",\"cursor\":" + sdk::jsonQuote(r.cursor) +
                          ",\"timeout_ms\":" + std::to_string(r.timeout_ms) +
                          ",\"max_item_bytes\":" + std::to_string(r.max_item_bytes) + "}";
        call.emit(out);
    }
};

/// "chatty": progress, cursor, logs, a batch, a malformed item, and cancellation checks.
class ChattyAdapter : public sdk::Adapter, Counted {
public:
    explicit ChattyAdapter(sdk::Host host) : host_(host) {}
    void unaryCall(sdk::Call& call, const sdk::Request& request) override {
        if (request.request_json == "\"wait_cancel\"") {
            while (!call.isCancelled()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
            throw sdk::Error(sdk::ErrorCode::timeout, "gave up");
        }
        if (request.request_json == "\"batch\"") {
            std::vector<std::string> storage;
            storage.reserve(150);
            for (int i = 0; i < 150; ++i) {
                storage.push_back(std::to_string(i));
            }
            std::vector<std::string_view> views(storage.begin(), storage.end());
            std::size_t accepted = 0;
            const sdk::EmitResult result = call.emitBatch(views.data(), views.size(), accepted);
            call.setCursor(std::to_string(accepted) + ":" +
                           (result == sdk::EmitResult::accepted ? "accepted" : "other"));
            return;
        }
        call.progress(1, 2, "half");
        call.progress(2);
        call.setCursor("c1");
        call.setCursor("c2");
        call.log(sdk::LogLevel::info, "with call");
        if (host_.logEnabled(sdk::LogLevel::debug)) {
            host_.log(sdk::LogLevel::debug, "debug line");
        }
        host_.log(sdk::LogLevel::warn, "warn line");
        call.emit("{not json");
        call.emit("[1,2,3]");
    }

private:
    sdk::Host host_;
};

/// "hang": a plain stream that never completes.
class HangStream : public sdk::Stream {
public:
    void cancel() override {}
};
class HangAdapter : public sdk::Adapter {
public:
    std::unique_ptr<sdk::Stream> openStream(sdk::Call& /*call*/,
                                            const sdk::Request& /*request*/) override {
        return std::make_unique<HangStream>();
    }
};

/// "sum": sums the "v" members; config {"throw_in": "create"|"accept"|"snapshot", "throw":
/// kind, "big": N (snapshot writes N bytes of padding), "null": true}.
class SumAggregate : public sdk::Aggregate {
public:
    SumAggregate(std::string throw_in, std::string kind, std::int64_t big)
        : throw_in_(std::move(throw_in)), kind_(std::move(kind)), big_(big) {}
    void accept(std::string_view item_json) override {
        if (throw_in_ == "accept") {
            throwKind(kind_);
        }
        sum_ += intMember(item_json, "v", 0);
        ++count_;
    }
    void snapshot(sdk::Writer& writer) override {
        if (throw_in_ == "snapshot") {
            throwKind(kind_);
        }
        if (!writer.append("{\"sum\":" + std::to_string(sum_) +
                           ",\"count\":" + std::to_string(count_))) {
            return;
        }
        if (big_ > 0) {
            if (!writer.append(",\"pad\":\"" + std::string(static_cast<std::size_t>(big_), 'x') +
                               "\"")) {
                if (throw_in_ == "overflow_then_throw") {
                    throw std::runtime_error("after overflow");
                }
                return;
            }
        }
        writer.append("}");
    }

private:
    std::string throw_in_;
    std::string kind_;
    std::int64_t big_;
    std::int64_t sum_ = 0;
    std::int64_t count_ = 0;
};

class SumAggregator : public sdk::Aggregator, Counted {
public:
    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override {
        throwKind(stringMember(config_json, "validate_throw"));
        if (intMember(config_json, "big", 0) > 1000000) {
            diagnostics.error("big", "must be at most 1000000");
        }
    }
    std::unique_ptr<sdk::Aggregate> create(std::string_view config_json,
                                           sdk::Call& /*call*/) override {
        const std::string throw_in = stringMember(config_json, "throw_in");
        if (throw_in == "create") {
            throwKind(stringMember(config_json, "throw"));
        }
        if (stringMember(config_json, "null") == "yes") {
            return nullptr;
        }
        return std::make_unique<SumAggregate>(throw_in, stringMember(config_json, "throw"),
                                              intMember(config_json, "big", 0));
    }
};

void registerTestPlugin(sdk::Registrar& registrar) {
    const std::uint32_t both = CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM;
    registrar.addAdapter(
        {"boundary", "1.0.0", "throws on request", both, CRANK_MODE_UNARY | CRANK_MODE_WINDOW},
        std::make_unique<BoundaryAdapter>());
    registrar.addAdapter(
        {"request_echo", "1.0.0", "echoes the request", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
        std::make_unique<RequestEchoAdapter>());
    registrar.addAdapter({"chatty", "1.0.0", "talks", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
                         std::make_unique<ChattyAdapter>(registrar.host()));
    sdk::AggregatorInfo sum;
    sum.name = "sum";
    sum.version = "1.0.0";
    sum.description = "sums v";
    sum.output_schema_json = R"({"type":"object"})";
    registrar.addAggregator(std::move(sum), std::make_unique<SumAggregator>());
}

void registerDuplicate(sdk::Registrar& registrar) {
    registrar.addAdapter({"echo", "1", "first", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
                         std::make_unique<RequestEchoAdapter>());
    registrar.addAdapter({"echo", "1", "second", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
                         std::make_unique<RequestEchoAdapter>());
}

void registerBadName(sdk::Registrar& registrar) {
    registrar.addAdapter({"Bad-Name", "1", "x", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
                         std::make_unique<RequestEchoAdapter>());
}

void registerStdThrow(sdk::Registrar& /*registrar*/) {
    throw std::runtime_error("registration exploded");
}

void registerIntThrow(sdk::Registrar& /*registrar*/) {
    throw 7;
}

void registerTolerant(sdk::Registrar& registrar) {
    registrar.addAdapter({"echo", "1", "first", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
                         std::make_unique<RequestEchoAdapter>());
    try {
        registrar.addAdapter({"echo", "1", "second", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
                             std::make_unique<RequestEchoAdapter>());
    } catch (const sdk::Error& e) {
        registrar.host().log(sdk::LogLevel::warn, e.what());
    }
}

void registerHang(sdk::Registrar& registrar) {
    registrar.addAdapter(
        {"hang", "1", "never completes", CRANK_CAP_SERVER_STREAM, CRANK_MODE_WINDOW},
        std::make_unique<HangAdapter>());
}

}  // namespace

CRANK_PLUGIN_NAMED(sdk_test_plugin_entry, "sdk_test", "1.2.3", "SDK test plugin",
                   registerTestPlugin);
CRANK_PLUGIN_NAMED(sdk_duplicate_plugin_entry, "sdk_duplicate", "1.0.0", "duplicate",
                   registerDuplicate);
CRANK_PLUGIN_NAMED(sdk_bad_name_plugin_entry, "sdk_bad_name", "1.0.0", "bad name", registerBadName);
CRANK_PLUGIN_NAMED(sdk_std_throw_plugin_entry, "sdk_std_throw", "1.0.0", "throws",
                   registerStdThrow);
CRANK_PLUGIN_NAMED(sdk_int_throw_plugin_entry, "sdk_int_throw", "1.0.0", "throws an int",
                   registerIntThrow);
CRANK_PLUGIN_NAMED(sdk_tolerant_plugin_entry, "sdk_tolerant", "1.0.0", "tolerant",
                   registerTolerant);
CRANK_PLUGIN_NAMED(sdk_hang_plugin_entry, "sdk_hang", "1.0.0", "hangs", registerHang);
