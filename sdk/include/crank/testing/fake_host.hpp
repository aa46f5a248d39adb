// Crank SDK test kit: a fake host that loads a plugin in-process, without crankd, and drives it
// exactly as the host does (registration, validation, unary calls, streams with backpressure and
// cancellation, aggregates with bounded writers), checking the plugin's side of the ABI contract.
//
// Header-only, C++17, standard library only. For plugin authors' unit tests:
//
//     extern "C" const crank_plugin_descriptor* crank_plugin_entry(void);  // your plugin
//     crank::testing::FakeHost host(&crank_plugin_entry);
//     ASSERT_TRUE(host.loaded()) << host.initError();
//     auto result = host.callUnary("echo", {/*config_json*/ "{}", /*request_json*/ "{\"a\":1}"});
//
// Every result carries `violations`: breaches of the contract the fake host saw (emit after
// complete, two completes, a stream that never completes, complete(error) without set_error,
// overlapping emits, callbacks after stream_destroy...). A healthy plugin has none.
//
// A plugin that hangs never hangs the test: calls and streams are bounded by their options plus
// a grace period; past it the call is abandoned (reported as a violation, its thread left
// running) and the library is then never shut down.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "crank/sdk/types.hpp"
#include "crank/testing/json_check.hpp"
#include <crank/plugin.h>

namespace crank::testing {

/// One line the plugin logged through the host.
struct LogLine {
    sdk::LogLevel level = sdk::LogLevel::info;
    std::string message;
    bool with_call = false;  ///< logged with a call handle (Call::log)
};

/// One set_error() report.
struct ErrorInfo {
    sdk::ErrorCode code = sdk::ErrorCode::internal;
    std::string message;
    std::string details_json;
};

/// One problem validate() reported.
struct Diagnostic {
    std::string path;  ///< the "path" member of the details, or empty
    std::string message;
    sdk::ErrorCode code = sdk::ErrorCode::invalid_argument;
    std::string details_json;
};

struct ValidateResult {
    sdk::Status status = sdk::Status::error;
    std::vector<Diagnostic> diagnostics;
    std::vector<std::string> violations;
    bool ok() const { return status == sdk::Status::ok && diagnostics.empty(); }
};

/// What describe() (ABI 1.3) answered.
struct DescribeResult {
    sdk::Status status = sdk::Status::error;
    std::string json;  ///< what it wrote ("" when nothing, or the adapter has no describe)
    std::vector<Diagnostic> diagnostics;
    std::vector<std::string> violations;
    bool ok() const { return status == sdk::Status::ok && diagnostics.empty(); }
};

/// One progress() report.
struct ProgressEvent {
    double progress = 0;
    double total = -1;
    std::string message;
};

/// What the fake host puts in the crank_request.
struct RequestSpec {
    std::string config_json = "{}";
    std::string request_json = "{}";
    std::string input_json = "{}";
    std::string auth_json;
    std::string cursor;
    std::int64_t timeout_ms = 0;
    std::int64_t max_item_bytes = 0;
    std::string operation_name = "test_operation";
    /// The crank_request's struct_size: smaller values emulate an older host.
    std::size_t struct_size = sizeof(crank_request);
};

struct UnaryOptions {
    /// The host cancels (is_cancelled) after this, then waits `grace` for unary_call to return.
    std::chrono::milliseconds timeout{10000};
    /// Flags the call cancelled after this long (to test is_cancelled handling).
    std::optional<std::chrono::milliseconds> cancel_after;
    /// What cancel_reason() says after cancel_after.
    crank_cancel_reason cancel_reason = CRANK_CANCEL_REQUESTED;
    std::chrono::milliseconds grace{2000};
};

struct StreamOptions {
    /// Items the host takes before it answers accepted_pause (or rejected_full, see
    /// reject_when_full) until it has drained and resumed; 0 = unlimited.
    std::size_t capacity = 0;
    /// After this many items the host answers cancelled and cancels the stream; 0 = unlimited.
    std::size_t max_items = 0;
    /// The host cancels the stream after this long.
    std::chrono::milliseconds timeout{5000};
    /// Drain and resume when the stream is paused; false: stay paused until timeout/cancel.
    bool resume_when_paused = true;
    /// At capacity answer rejected_full to the next item instead of accepted_pause to the last.
    bool reject_when_full = false;
    /// How long a cancelled stream may take to complete, and stream_destroy to return.
    std::chrono::milliseconds grace{2000};
};

struct CallResult {
    sdk::Status status = sdk::Status::error;
    std::vector<std::string> items;  ///< well-formed items, in order
    std::optional<ErrorInfo> error;  ///< the last set_error()
    std::string cursor;              ///< the last set_cursor()
    std::vector<ProgressEvent> progress;
    std::size_t malformed_items = 0;  ///< emitted items that are not valid JSON (dropped)
    std::size_t oversized_items = 0;  ///< items longer than max_item_bytes (dropped)
    std::size_t pauses = 0;           ///< accepted_pause answers
    std::size_t rejections = 0;       ///< rejected_full answers
    std::size_t resumes = 0;          ///< stream_resume calls
    std::size_t cancels = 0;          ///< stream_cancel calls
    std::size_t complete_calls = 0;
    bool opened = false;  ///< stream_open returned a stream
    /// The host ended the call (max_items, timeout): an emit answered cancelled or stream_cancel.
    bool host_cancelled = false;
    std::vector<std::string> violations;
    bool ok() const { return status == sdk::Status::ok && violations.empty(); }
};

struct SnapshotResult {
    sdk::Status status = sdk::Status::error;
    std::string text;
    std::optional<ErrorInfo> error;
    std::vector<std::string> violations;
};

struct AggregateResult {
    sdk::Status status = sdk::Status::error;
    std::string snapshot;
    std::optional<ErrorInfo> error;
    std::size_t accepted = 0;  ///< items accept() took before a failure
    std::vector<std::string> violations;
};

struct FakeHostOptions {
    sdk::LogLevel log_level = sdk::LogLevel::trace;  ///< log_enabled() below it answers 0
    std::uint32_t abi_major = CRANK_ABI_MAJOR;       ///< what the host's table says
    std::uint32_t abi_minor = CRANK_ABI_MINOR;
    /// The host table's struct_size: smaller values emulate an older host.
    std::size_t api_struct_size = sizeof(crank_host_api);
};

class FakeHost;
class AggregateHandle;

namespace detail {

struct Core;

/// What a crank_call* points to.
struct CallState {
    enum class Kind { validation, unary, stream, aggregate };

    CallState(std::shared_ptr<Core> core_in, Kind kind_in)
        : core(std::move(core_in)), kind(kind_in) {}

    std::shared_ptr<Core> core;
    Kind kind;
    std::mutex mutex;
    std::condition_variable cv;
    CallResult result;
    std::vector<Diagnostic> diagnostics;
    std::atomic<bool> cancelled{false};
    std::atomic<int> cancel_reason{CRANK_CANCEL_NONE};
    std::atomic<int> emitting{0};
    // stream flow control
    std::size_t capacity = 0;
    std::size_t max_items = 0;
    bool reject_when_full = false;
    std::int64_t max_item_bytes = 0;
    std::size_t queued = 0;
    bool paused = false;
    bool limit_reached = false;
    bool completed = false;
    bool destroyed = false;
    // unary
    bool returned = false;
    crank_status returned_status = CRANK_ERROR;

    void violation(std::string what) { result.violations.push_back(std::move(what)); }

    crank_call* handle() { return reinterpret_cast<crank_call*>(this); }
    static CallState* from(crank_call* call) { return reinterpret_cast<CallState*>(call); }
    static CallState* from(const crank_call* call) {
        return reinterpret_cast<CallState*>(const_cast<crank_call*>(call));
    }
};

/// What a crank_writer* points to.
struct WriterState {
    std::string text;
    std::size_t limit = 0;
    bool refused = false;
};

/// The host's state shared with every call (a call abandoned past its grace keeps it alive).
struct Core {
    FakeHostOptions options;
    crank_host_api api{};
    std::mutex mutex;
    std::vector<LogLine> logs;
    // registration
    bool registrar_open = false;
    std::string init_error;
    std::vector<std::string> registration_errors;
    std::map<std::string, crank_adapter, std::less<>> adapters;
    std::map<std::string, crank_aggregator, std::less<>> aggregators;
    /// Calls abandoned past their bound: kept alive for good (their plugin threads may still
    /// use them), which also keeps this Core alive (a deliberate cycle).
    std::vector<std::shared_ptr<CallState>> abandoned_calls;

    crank_host* handle() { return reinterpret_cast<crank_host*>(this); }
    static Core* from(crank_host* host) { return reinterpret_cast<Core*>(host); }
    static Core* fromRegistrar(crank_registrar* registrar) {
        return reinterpret_cast<Core*>(registrar);
    }
};

inline std::string view(crank_str s) {
    return std::string(sdk::toView(s));
}

// --- the host table -------------------------------------------------------------------------

inline int logEnabled(crank_host* host, crank_log_level level) {
    Core* core = Core::from(host);
    return static_cast<int>(level) >= static_cast<int>(sdk::toC(core->options.log_level)) ? 1 : 0;
}

inline void log(crank_host* host, crank_call* call, crank_log_level level, crank_str message) {
    Core* core = Core::from(host);
    if (logEnabled(host, level) == 0) {
        return;
    }
    std::lock_guard<std::mutex> lock(core->mutex);
    core->logs.push_back(LogLine{sdk::fromC(level), view(message), call != nullptr});
}

inline bool validName(std::string_view name) {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

/// Copies a plugin struct as the host does: only what its struct_size says, the rest zero.
template <typename T>
T copyStruct(const T* source) {
    T copy{};
    const std::size_t size = std::min(source->struct_size, sizeof(T));
    std::memcpy(static_cast<void*>(&copy), static_cast<const void*>(source), size);
    copy.struct_size = size;
    return copy;
}

inline crank_status registerAdapter(crank_registrar* registrar, const crank_adapter* adapter) {
    Core* core = Core::fromRegistrar(registrar);
    std::lock_guard<std::mutex> lock(core->mutex);
    auto refuse = [&](std::string why) {
        core->registration_errors.push_back(std::move(why));
        return CRANK_ERROR;
    };
    if (!core->registrar_open) {
        return refuse("register_adapter called outside init()");
    }
    if (adapter == nullptr ||
        adapter->struct_size < offsetof(crank_adapter, state) + sizeof(void*)) {
        return refuse("register_adapter: missing or truncated descriptor");
    }
    const crank_adapter copy = copyStruct(adapter);
    const std::string name = view(copy.name);
    if (!validName(name)) {
        return refuse("adapter name \"" + name + "\" is not [a-z0-9_]{1,64}");
    }
    if (core->adapters.count(name) != 0) {
        return refuse("duplicate adapter \"" + name + "\"");
    }
    if ((copy.capabilities & CRANK_CAP_UNARY) != 0 && copy.unary_call == nullptr) {
        return refuse("adapter \"" + name + "\" declares CRANK_CAP_UNARY without unary_call");
    }
    if ((copy.capabilities & CRANK_CAP_SERVER_STREAM) != 0 &&
        (copy.stream_open == nullptr || copy.stream_resume == nullptr ||
         copy.stream_cancel == nullptr || copy.stream_destroy == nullptr)) {
        return refuse("adapter \"" + name +
                      "\" declares CRANK_CAP_SERVER_STREAM without every stream function");
    }
    if (!sdk::toView(copy.config_schema_json).empty() &&
        !isJsonObject(sdk::toView(copy.config_schema_json))) {
        return refuse("adapter \"" + name + "\": config_schema_json is not a JSON object");
    }
    core->adapters.emplace(name, copy);
    return CRANK_OK;
}

inline crank_status registerAggregator(crank_registrar* registrar,
                                       const crank_aggregator* aggregator) {
    Core* core = Core::fromRegistrar(registrar);
    std::lock_guard<std::mutex> lock(core->mutex);
    auto refuse = [&](std::string why) {
        core->registration_errors.push_back(std::move(why));
        return CRANK_ERROR;
    };
    if (!core->registrar_open) {
        return refuse("register_aggregator called outside init()");
    }
    if (aggregator == nullptr ||
        aggregator->struct_size < offsetof(crank_aggregator, state) + sizeof(void*)) {
        return refuse("register_aggregator: missing or truncated descriptor");
    }
    const crank_aggregator copy = copyStruct(aggregator);
    const std::string name = view(copy.name);
    if (!validName(name)) {
        return refuse("aggregator name \"" + name + "\" is not [a-z0-9_]{1,64}");
    }
    if (core->aggregators.count(name) != 0) {
        return refuse("duplicate aggregator \"" + name + "\"");
    }
    if (copy.create == nullptr || copy.accept == nullptr || copy.snapshot == nullptr ||
        copy.destroy == nullptr) {
        return refuse("aggregator \"" + name + "\" lacks create, accept, snapshot or destroy");
    }
    for (crank_str schema : {copy.config_schema_json, copy.output_schema_json}) {
        if (!sdk::toView(schema).empty() && !isJsonObject(sdk::toView(schema))) {
            return refuse("aggregator \"" + name + "\": a schema is not a JSON object");
        }
    }
    core->aggregators.emplace(name, copy);
    return CRANK_OK;
}

inline void setInitError(crank_registrar* registrar, crank_str message) {
    Core* core = Core::fromRegistrar(registrar);
    std::lock_guard<std::mutex> lock(core->mutex);
    if (!core->registrar_open) {
        core->registration_errors.push_back("set_init_error called outside init()");
        return;
    }
    core->init_error = view(message);
}

/// Common checks of every call callback; returns false when the call must be ignored.
inline bool checkAlive(CallState* s, const char* what) {
    if (s->destroyed) {
        s->violation(std::string(what) + " after stream_destroy");
        return false;
    }
    return true;
}

inline void setError(crank_call* call, crank_error_code code, crank_str message,
                     crank_str details_json) {
    CallState* s = CallState::from(call);
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!checkAlive(s, "set_error")) {
        return;
    }
    const std::string details = view(details_json);
    if (!details.empty() && !isJsonObject(details)) {
        s->violation("set_error details_json is not a JSON object: " + details);
    }
    if (s->kind == CallState::Kind::validation) {
        s->diagnostics.push_back(Diagnostic{jsonStringMember(details, "path").value_or(""),
                                            view(message), sdk::fromC(code), details});
        return;
    }
    s->result.error = ErrorInfo{sdk::fromC(code), view(message), details};
}

/// One emitted item, under the call's lock.
inline crank_emit_result emitLocked(CallState* s, crank_str item) {
    if (!checkAlive(s, "emit")) {
        return CRANK_EMIT_CANCELLED;
    }
    if (s->kind == CallState::Kind::validation || s->kind == CallState::Kind::aggregate) {
        s->violation("emit on a validation or aggregate call");
        return CRANK_EMIT_CANCELLED;
    }
    if (s->completed) {
        s->violation("emit after complete()");
        return CRANK_EMIT_CANCELLED;
    }
    if (s->limit_reached || s->cancelled.load()) {
        s->result.host_cancelled = true;
        return CRANK_EMIT_CANCELLED;
    }
    if (s->paused) {
        s->violation("emit while paused (after accepted_pause or rejected_full, before resume)");
    }
    if (s->capacity > 0 && s->queued >= s->capacity) {
        ++s->result.rejections;
        s->paused = true;
        s->cv.notify_all();
        return CRANK_EMIT_REJECTED_FULL;
    }
    const std::string_view text = sdk::toView(item);
    if (!isValidJson(text)) {
        ++s->result.malformed_items;
        return CRANK_EMIT_ACCEPTED;
    }
    if (s->max_item_bytes > 0 && text.size() > static_cast<std::size_t>(s->max_item_bytes)) {
        ++s->result.oversized_items;
        return CRANK_EMIT_ACCEPTED;
    }
    s->result.items.emplace_back(text);
    ++s->queued;
    if (s->max_items > 0 && s->result.items.size() >= s->max_items) {
        s->limit_reached = true;
        s->cv.notify_all();
        return CRANK_EMIT_ACCEPTED;
    }
    if (s->capacity > 0 && s->queued >= s->capacity && !s->reject_when_full) {
        ++s->result.pauses;
        s->paused = true;
        s->cv.notify_all();
        return CRANK_EMIT_ACCEPTED_PAUSE;
    }
    return CRANK_EMIT_ACCEPTED;
}

/// Flags overlapping emits (one producer per call).
class EmitGuard {
public:
    explicit EmitGuard(CallState* s) : s_(s) {
        if (s_->emitting.fetch_add(1) != 0) {
            std::lock_guard<std::mutex> lock(s_->mutex);
            s_->violation("overlapping emit calls for one call");
        }
    }
    EmitGuard(const EmitGuard&) = delete;
    EmitGuard& operator=(const EmitGuard&) = delete;
    EmitGuard(EmitGuard&&) = delete;
    EmitGuard& operator=(EmitGuard&&) = delete;
    ~EmitGuard() { s_->emitting.fetch_sub(1); }

private:
    CallState* s_;
};

inline crank_emit_result emit(crank_call* call, crank_str item_json) {
    CallState* s = CallState::from(call);
    const EmitGuard guard(s);
    std::lock_guard<std::mutex> lock(s->mutex);
    return emitLocked(s, item_json);
}

inline crank_emit_result emitBatch(crank_call* call, const crank_str* items, std::size_t count,
                                   std::size_t* accepted) {
    CallState* s = CallState::from(call);
    const EmitGuard guard(s);
    std::lock_guard<std::mutex> lock(s->mutex);
    crank_emit_result result = CRANK_EMIT_ACCEPTED;
    std::size_t taken = 0;
    for (std::size_t i = 0; i < count; ++i) {
        result = emitLocked(s, items[i]);
        if (result == CRANK_EMIT_ACCEPTED || result == CRANK_EMIT_ACCEPTED_PAUSE) {
            ++taken;
        }
        if (result != CRANK_EMIT_ACCEPTED) {
            break;
        }
    }
    if (accepted != nullptr) {
        *accepted = taken;
    }
    return result;
}

inline void progress(crank_call* call, double value, double total, crank_str message) {
    CallState* s = CallState::from(call);
    std::lock_guard<std::mutex> lock(s->mutex);
    if (checkAlive(s, "progress")) {
        s->result.progress.push_back(ProgressEvent{value, total, view(message)});
    }
}

inline int isCancelled(const crank_call* call) {
    return CallState::from(call)->cancelled.load() ? 1 : 0;
}

inline crank_cancel_reason cancelReason(const crank_call* call) {
    const CallState* s = CallState::from(call);
    if (!s->cancelled.load()) {
        return CRANK_CANCEL_NONE;
    }
    const int reason = s->cancel_reason.load();
    return reason == CRANK_CANCEL_NONE ? CRANK_CANCEL_REQUESTED
                                       : static_cast<crank_cancel_reason>(reason);
}

inline void complete(crank_call* call, crank_status status) {
    CallState* s = CallState::from(call);
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!checkAlive(s, "complete")) {
        return;
    }
    ++s->result.complete_calls;
    if (s->kind != CallState::Kind::stream) {
        s->violation("complete() on a call that is not a stream");
        return;
    }
    if (s->completed) {
        s->violation("complete() called more than once");
        return;
    }
    s->completed = true;
    s->result.status = sdk::fromC(status);
    if (status == CRANK_ERROR && !s->result.error) {
        s->violation("complete(CRANK_ERROR) without set_error()");
    }
    s->cv.notify_all();
}

inline void setCursor(crank_call* call, crank_str cursor) {
    CallState* s = CallState::from(call);
    std::lock_guard<std::mutex> lock(s->mutex);
    if (checkAlive(s, "set_cursor")) {
        s->result.cursor = view(cursor);
    }
}

inline crank_status writerAppend(crank_writer* writer, crank_str text) {
    auto* w = reinterpret_cast<WriterState*>(writer);
    if (w->refused || w->text.size() + text.len > w->limit) {
        w->refused = true;
        return CRANK_ERROR;
    }
    w->text.append(sdk::toView(text));
    return CRANK_OK;
}

/// The request as the fake host hands it over; owns the text the views point to.
class RequestHolder {
public:
    explicit RequestHolder(const RequestSpec& spec) : spec_(spec) {
        request_.struct_size = spec_.struct_size;
        request_.operation_name = sdk::toCStr(spec_.operation_name);
        request_.config_json = sdk::toCStr(spec_.config_json);
        request_.request_json = sdk::toCStr(spec_.request_json);
        request_.input_json = sdk::toCStr(spec_.input_json);
        request_.auth_json = sdk::toCStr(spec_.auth_json);
        request_.cursor = sdk::toCStr(spec_.cursor);
        request_.timeout_ms = spec_.timeout_ms;
        request_.max_item_bytes = spec_.max_item_bytes;
    }
    const crank_request* get() const { return &request_; }
    /// Overwrites the text: a plugin that kept a view past the call reads garbage, not the
    /// request (views are valid only during the call that passes them).
    void scribble() {
        for (std::string* s : {&spec_.operation_name, &spec_.config_json, &spec_.request_json,
                               &spec_.input_json, &spec_.auth_json, &spec_.cursor}) {
            std::fill(s->begin(), s->end(), '#');
        }
    }

private:
    RequestSpec spec_;
    crank_request request_{};
};

/// Runs `fn` on a thread and waits up to `limit`. Returns false (thread detached, left running)
/// when it did not finish.
inline bool runBounded(const std::function<void()>& fn, std::chrono::milliseconds limit) {
    struct Done {
        std::mutex mutex;
        std::condition_variable cv;
        bool done = false;
    };
    auto done = std::make_shared<Done>();
    std::thread thread([fn, done] {
        fn();
        std::lock_guard<std::mutex> lock(done->mutex);
        done->done = true;
        done->cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(done->mutex);
    if (done->cv.wait_for(lock, limit, [&] { return done->done; })) {
        lock.unlock();
        thread.join();
        return true;
    }
    thread.detach();
    return false;
}

}  // namespace detail

/// An aggregate created through FakeHost::createAggregate: feed items one by one and snapshot as
/// often as wanted. Destroying the handle destroys the aggregate. Move-only; must not outlive
/// its FakeHost.
class AggregateHandle {
public:
    AggregateHandle(AggregateHandle&& other) noexcept
        : call_(std::move(other.call_)),
          aggregator_(other.aggregator_),
          aggregate_(std::exchange(other.aggregate_, nullptr)) {}
    AggregateHandle& operator=(AggregateHandle&&) = delete;
    AggregateHandle(const AggregateHandle&) = delete;
    AggregateHandle& operator=(const AggregateHandle&) = delete;
    ~AggregateHandle() {
        if (aggregate_ != nullptr) {
            aggregator_.destroy(aggregate_);
        }
    }

    /// True when create() returned an aggregate.
    bool created() const { return aggregate_ != nullptr; }

    /// The last set_error() on the aggregate's call (create, accept or snapshot).
    std::optional<ErrorInfo> error() const {
        std::lock_guard<std::mutex> lock(call_->mutex);
        return call_->result.error;
    }

    /// Violations seen on the aggregate's call so far.
    std::vector<std::string> violations() const {
        std::lock_guard<std::mutex> lock(call_->mutex);
        return call_->result.violations;
    }

    /// Hands one item to accept().
    sdk::Status accept(std::string_view item_json) {
        if (aggregate_ == nullptr) {
            throw std::logic_error("AggregateHandle::accept: the aggregate was not created");
        }
        const std::string copy(item_json);
        const crank_status status = aggregator_.accept(aggregate_, sdk::toCStr(copy));
        if (status == CRANK_ERROR && !error()) {
            std::lock_guard<std::mutex> lock(call_->mutex);
            call_->violation("accept returned CRANK_ERROR without set_error()");
        }
        return sdk::fromC(status);
    }

    /// Calls snapshot() with a writer bounded to `writer_limit` bytes.
    SnapshotResult snapshot(std::size_t writer_limit = std::size_t{1} << 20) {
        if (aggregate_ == nullptr) {
            throw std::logic_error("AggregateHandle::snapshot: the aggregate was not created");
        }
        {
            std::lock_guard<std::mutex> lock(call_->mutex);
            call_->result.error.reset();
        }
        detail::WriterState writer;
        writer.limit = writer_limit;
        const crank_status status =
            aggregator_.snapshot(aggregate_, reinterpret_cast<crank_writer*>(&writer));
        SnapshotResult result;
        result.status = sdk::fromC(status);
        result.text = std::move(writer.text);
        result.error = error();
        if (status == CRANK_OK && !isJsonObject(result.text)) {
            result.violations.push_back("snapshot wrote something that is not a JSON object: " +
                                        result.text);
        }
        if (status == CRANK_ERROR && !result.error) {
            result.violations.push_back("snapshot returned CRANK_ERROR without set_error()");
        }
        return result;
    }

private:
    friend class FakeHost;
    AggregateHandle(std::shared_ptr<detail::CallState> call, const crank_aggregator& aggregator,
                    crank_aggregate* aggregate)
        : call_(std::move(call)), aggregator_(aggregator), aggregate_(aggregate) {}

    std::shared_ptr<detail::CallState> call_;
    crank_aggregator aggregator_;
    crank_aggregate* aggregate_;
};

/// The fake host. Loading happens in the constructor: check loaded() / initError().
/// Not copyable or movable (the plugin keeps pointers to its table). Its methods may be called
/// from several test threads at once, except the constructor and destructor.
///
/// Unknown adapter or aggregator names throw std::invalid_argument.
/// One plugin library can be loaded by one FakeHost at a time (the SDK keeps its registrations in
/// the library's static storage; a second concurrent init is refused).
class FakeHost {
public:
    explicit FakeHost(crank_plugin_entry_fn entry, FakeHostOptions options = {})
        : core_(std::make_shared<detail::Core>()) {
        core_->options = options;
        crank_host_api& api = core_->api;
        api.struct_size = options.api_struct_size;
        api.abi_major = options.abi_major;
        api.abi_minor = options.abi_minor;
        api.log_enabled = &detail::logEnabled;
        api.log = &detail::log;
        api.register_adapter = &detail::registerAdapter;
        api.register_aggregator = &detail::registerAggregator;
        api.set_init_error = &detail::setInitError;
        api.set_error = &detail::setError;
        api.emit = &detail::emit;
        api.emit_batch = &detail::emitBatch;
        api.progress = &detail::progress;
        api.is_cancelled = &detail::isCancelled;
        api.complete = &detail::complete;
        api.set_cursor = &detail::setCursor;
        api.writer_append = &detail::writerAppend;
        api.cancel_reason = &detail::cancelReason;
        load(entry);
    }

    FakeHost(const FakeHost&) = delete;
    FakeHost& operator=(const FakeHost&) = delete;
    FakeHost(FakeHost&&) = delete;
    FakeHost& operator=(FakeHost&&) = delete;

    /// Calls shutdown() (unless a call was abandoned: the library is then left as it is).
    ~FakeHost() { shutdown(); }

    /// Calls the plugin's shutdown() now (once). Later calls into the plugin are refused.
    void shutdown() {
        if (!loaded_) {
            return;
        }
        loaded_ = false;
        if (abandoned_) {
            return;
        }
        if (descriptor_.shutdown != nullptr) {
            descriptor_.shutdown();
        }
        std::lock_guard<std::mutex> lock(core_->mutex);
        core_->adapters.clear();
        core_->aggregators.clear();
    }

    /// True when the plugin passed the ABI checks and init() succeeded.
    bool loaded() const { return loaded_; }
    /// Why loading failed: the host's own reason (ABI...) or the plugin's set_init_error().
    const std::string& initError() const { return init_error_; }
    /// The plugin's descriptor as read (zeros beyond its struct_size); zero when there was none.
    const crank_plugin_descriptor& descriptor() const { return descriptor_; }
    std::string pluginName() const { return detail::view(descriptor_.name); }

    std::vector<std::string> adapterNames() const {
        std::lock_guard<std::mutex> lock(core_->mutex);
        std::vector<std::string> names;
        for (const auto& entry : core_->adapters) {
            names.push_back(entry.first);
        }
        return names;
    }
    std::vector<std::string> aggregatorNames() const {
        std::lock_guard<std::mutex> lock(core_->mutex);
        std::vector<std::string> names;
        for (const auto& entry : core_->aggregators) {
            names.push_back(entry.first);
        }
        return names;
    }
    /// The registered descriptor (as copied by the host); throws for an unknown name.
    crank_adapter adapter(std::string_view name) const {
        std::lock_guard<std::mutex> lock(core_->mutex);
        auto it = core_->adapters.find(name);
        if (it == core_->adapters.end()) {
            throw std::invalid_argument("FakeHost: no adapter \"" + std::string(name) + "\"");
        }
        return it->second;
    }
    crank_aggregator aggregator(std::string_view name) const {
        std::lock_guard<std::mutex> lock(core_->mutex);
        auto it = core_->aggregators.find(name);
        if (it == core_->aggregators.end()) {
            throw std::invalid_argument("FakeHost: no aggregator \"" + std::string(name) + "\"");
        }
        return it->second;
    }

    /// Registrations the host refused during init, and misuse of the registrar, with reasons.
    std::vector<std::string> registrationErrors() const {
        std::lock_guard<std::mutex> lock(core_->mutex);
        return core_->registration_errors;
    }

    std::vector<LogLine> logs() const {
        std::lock_guard<std::mutex> lock(core_->mutex);
        return core_->logs;
    }
    void setLogLevel(sdk::LogLevel level) {
        std::lock_guard<std::mutex> lock(core_->mutex);
        core_->options.log_level = level;
    }

    /// True once a call or stream was abandoned (it did not end within its bound).
    bool abandoned() const { return abandoned_; }

    /// Runs the validate() of the adapter or (when there is no adapter of that name) aggregator.
    ValidateResult validate(std::string_view adapter_or_aggregator_name,
                            std::string_view config_json) {
        crank_status (*fn)(void*, crank_str, crank_call*) = nullptr;
        void* state = nullptr;
        {
            std::lock_guard<std::mutex> lock(core_->mutex);
            if (auto it = core_->adapters.find(adapter_or_aggregator_name);
                it != core_->adapters.end()) {
                fn = it->second.validate;
                state = it->second.state;
            } else if (auto jt = core_->aggregators.find(adapter_or_aggregator_name);
                       jt != core_->aggregators.end()) {
                fn = jt->second.validate;
                state = jt->second.state;
            } else {
                throw std::invalid_argument("FakeHost: no adapter or aggregator \"" +
                                            std::string(adapter_or_aggregator_name) + "\"");
            }
        }
        ValidateResult result;
        if (fn == nullptr) {
            result.status = sdk::Status::ok;
            return result;
        }
        auto call = newCall(detail::CallState::Kind::validation);
        const std::string config(config_json);
        const crank_status status = fn(state, sdk::toCStr(config), call->handle());
        std::lock_guard<std::mutex> lock(call->mutex);
        result.status = sdk::fromC(status);
        result.diagnostics = call->diagnostics;
        result.violations = call->result.violations;
        if (status == CRANK_ERROR && result.diagnostics.empty()) {
            result.violations.emplace_back("validate returned CRANK_ERROR without set_error()");
        }
        if (status == CRANK_OK && !result.diagnostics.empty()) {
            result.violations.emplace_back("validate reported problems but returned CRANK_OK");
        }
        return result;
    }

    /// Runs the adapter's describe() (ABI 1.3) on `config_json`, with a writer of `writer_limit`
    /// bytes.
    DescribeResult describe(std::string_view adapter_name, std::string_view config_json,
                            std::size_t writer_limit = std::size_t{4} << 20) {
        const crank_adapter a = requireLoaded().adapter(adapter_name);
        DescribeResult result;
        if (a.struct_size < offsetof(crank_adapter, describe) + sizeof(a.describe) ||
            a.describe == nullptr) {
            result.status = sdk::Status::ok;
            return result;
        }
        auto call = newCall(detail::CallState::Kind::validation);
        detail::WriterState writer;
        writer.limit = writer_limit;
        const std::string config(config_json);
        const crank_status status = a.describe(
            a.state, sdk::toCStr(config), reinterpret_cast<crank_writer*>(&writer), call->handle());
        std::lock_guard<std::mutex> lock(call->mutex);
        result.status = sdk::fromC(status);
        result.json = writer.text;
        result.diagnostics = call->diagnostics;
        result.violations = call->result.violations;
        if (status == CRANK_ERROR && result.diagnostics.empty()) {
            result.violations.emplace_back("describe returned CRANK_ERROR without set_error()");
        }
        return result;
    }

    /// Runs unary_call on a thread of its own, bounded by options.timeout (+ grace).
    CallResult callUnary(std::string_view adapter_name, const RequestSpec& spec,
                         UnaryOptions options = {}) {
        const crank_adapter a = requireLoaded().adapter(adapter_name);
        CallResult result;
        if (a.unary_call == nullptr) {
            result.violations.emplace_back("the adapter has no unary_call");
            return result;
        }
        auto call = newCall(detail::CallState::Kind::unary);
        call->max_item_bytes = spec.max_item_bytes;
        auto request = std::make_shared<detail::RequestHolder>(spec);
        std::thread worker([call, request, a] {
            const crank_status status = a.unary_call(a.state, call->handle(), request->get());
            std::lock_guard<std::mutex> lock(call->mutex);
            call->returned = true;
            call->returned_status = status;
            call->cv.notify_all();
        });
        const auto start = std::chrono::steady_clock::now();
        std::unique_lock<std::mutex> lock(call->mutex);
        if (options.cancel_after && *options.cancel_after < options.timeout) {
            if (!call->cv.wait_until(lock, start + *options.cancel_after,
                                     [&] { return call->returned; })) {
                call->cancel_reason = options.cancel_reason;
                call->cancelled = true;
            }
        }
        bool returned =
            call->cv.wait_until(lock, start + options.timeout, [&] { return call->returned; });
        if (!returned) {
            call->cancel_reason = CRANK_CANCEL_DEADLINE;
            call->cancelled = true;
            returned = call->cv.wait_for(lock, options.grace, [&] { return call->returned; });
        }
        if (!returned) {
            call->violation("unary_call did not return within its timeout and grace");
            result = call->result;
            result.status = sdk::Status::error;
            lock.unlock();
            worker.detach();
            abandon(call);
            return result;
        }
        lock.unlock();
        worker.join();
        lock.lock();
        result = call->result;
        result.status = sdk::fromC(call->returned_status);
        if (call->returned_status == CRANK_ERROR && !result.error) {
            result.violations.emplace_back("unary_call returned CRANK_ERROR without set_error()");
        }
        return result;
    }

    /// Opens a stream, drains and resumes it as options say, cancels it at max_items or timeout,
    /// waits for complete() (bounded by grace), then destroys it.
    CallResult runStream(std::string_view adapter_name, const RequestSpec& spec,
                         StreamOptions options = {}) {
        const crank_adapter a = requireLoaded().adapter(adapter_name);
        CallResult result;
        if (a.stream_open == nullptr) {
            result.violations.emplace_back("the adapter has no stream_open");
            return result;
        }
        auto call = newCall(detail::CallState::Kind::stream);
        call->capacity = options.capacity;
        call->max_items = options.max_items;
        call->reject_when_full = options.reject_when_full;
        call->max_item_bytes = spec.max_item_bytes;
        detail::RequestHolder request(spec);
        crank_stream* stream = a.stream_open(a.state, call->handle(), request.get());
        request.scribble();
        std::unique_lock<std::mutex> lock(call->mutex);
        if (stream == nullptr) {
            result = call->result;
            result.status = sdk::Status::error;
            if (!result.error) {
                result.violations.emplace_back("stream_open returned NULL without set_error()");
            }
            if (result.complete_calls > 0) {
                result.violations.emplace_back("complete() after stream_open returned NULL");
            }
            return result;
        }
        call->result.opened = true;
        const auto deadline = std::chrono::steady_clock::now() + options.timeout;
        std::chrono::steady_clock::time_point cancel_deadline{};
        bool cancel_sent = false;
        bool abandoned = false;
        for (;;) {
            if (call->completed) {
                break;
            }
            const auto now = std::chrono::steady_clock::now();
            if (call->paused && options.resume_when_paused && !cancel_sent) {
                call->queued = 0;
                call->paused = false;
                ++call->result.resumes;
                lock.unlock();
                a.stream_resume(stream);
                lock.lock();
                continue;
            }
            if (!cancel_sent && (call->limit_reached || now >= deadline)) {
                cancel_sent = true;
                call->result.host_cancelled = true;
                call->cancelled = true;
                ++call->result.cancels;
                cancel_deadline = now + options.grace;
                lock.unlock();
                a.stream_cancel(stream);
                lock.lock();
                continue;
            }
            if (cancel_sent && now >= cancel_deadline) {
                abandoned = true;
                break;
            }
            call->cv.wait_until(lock, cancel_sent ? cancel_deadline : deadline);
        }
        if (abandoned) {
            call->violation("the stream did not complete within the grace period after cancel");
            result = call->result;
            result.status = sdk::Status::error;
            lock.unlock();
            abandon(call);
            return result;  // never destroyed: its threads may still use it
        }
        lock.unlock();
        const bool destroyed = detail::runBounded(
            [a, stream, call] {
                a.stream_destroy(stream);
                std::lock_guard<std::mutex> guard(call->mutex);
                call->destroyed = true;
            },
            options.grace);
        lock.lock();
        if (!destroyed) {
            call->violation("stream_destroy did not return within the grace period");
        }
        result = call->result;
        lock.unlock();
        if (!destroyed) {
            abandon(call);
        }
        return result;
    }

    /// Creates an aggregate of `aggregator_name` (check created() and error()).
    AggregateHandle createAggregate(std::string_view aggregator_name,
                                    std::string_view config_json) {
        const crank_aggregator g = requireLoaded().aggregator(aggregator_name);
        auto call = newCall(detail::CallState::Kind::aggregate);
        const std::string config(config_json);
        crank_aggregate* aggregate = g.create(g.state, sdk::toCStr(config), call->handle());
        AggregateHandle handle(call, g, aggregate);
        if (aggregate == nullptr && !handle.error()) {
            std::lock_guard<std::mutex> lock(call->mutex);
            call->violation("create returned NULL without set_error()");
        }
        return handle;
    }

    /// create + accept every item (stopping at the first failure) + one snapshot + destroy.
    AggregateResult aggregate(std::string_view aggregator_name, std::string_view config_json,
                              const std::vector<std::string>& items,
                              std::size_t writer_limit = std::size_t{1} << 20) {
        AggregateResult result;
        AggregateHandle handle = createAggregate(aggregator_name, config_json);
        if (!handle.created()) {
            result.error = handle.error();
            result.violations = handle.violations();
            return result;
        }
        for (const std::string& item : items) {
            if (handle.accept(item) != sdk::Status::ok) {
                result.status = sdk::Status::error;
                result.error = handle.error();
                result.violations = handle.violations();
                return result;
            }
            ++result.accepted;
        }
        SnapshotResult snapshot = handle.snapshot(writer_limit);
        result.status = snapshot.status;
        result.snapshot = std::move(snapshot.text);
        result.error = std::move(snapshot.error);
        result.violations = handle.violations();
        result.violations.insert(result.violations.end(), snapshot.violations.begin(),
                                 snapshot.violations.end());
        return result;
    }

private:
    void load(crank_plugin_entry_fn entry) {
        if (entry == nullptr) {
            init_error_ = "no entry function";
            return;
        }
        const crank_plugin_descriptor* d = entry();
        if (d == nullptr) {
            init_error_ = "crank_plugin_entry returned NULL";
            return;
        }
        if (d->struct_size < offsetof(crank_plugin_descriptor, abi_minor) + sizeof(std::uint32_t)) {
            init_error_ = "the plugin descriptor is truncated (struct_size " +
                          std::to_string(d->struct_size) + ")";
            return;
        }
        descriptor_ = detail::copyStruct(d);
        const std::string version =
            std::to_string(descriptor_.abi_major) + "." + std::to_string(descriptor_.abi_minor);
        const std::string host_version =
            std::to_string(CRANK_ABI_MAJOR) + "." + std::to_string(CRANK_ABI_MINOR);
        if (descriptor_.abi_major != CRANK_ABI_MAJOR) {
            init_error_ = "the plugin was built against plugin ABI " + version +
                          "; this host speaks " + host_version + " (the major must match)";
            return;
        }
        if (descriptor_.abi_minor > CRANK_ABI_MINOR) {
            init_error_ = "the plugin was built against plugin ABI " + version +
                          ", newer than this host's " + host_version;
            return;
        }
        if (!detail::validName(detail::view(descriptor_.name))) {
            init_error_ =
                "the plugin name \"" + detail::view(descriptor_.name) + "\" is not [a-z0-9_]{1,64}";
            return;
        }
        if (descriptor_.init == nullptr) {
            init_error_ = "the plugin descriptor has no init()";
            return;
        }
        {
            std::lock_guard<std::mutex> lock(core_->mutex);
            core_->registrar_open = true;
        }
        const crank_status status = descriptor_.init(
            &core_->api, core_->handle(), reinterpret_cast<crank_registrar*>(core_.get()));
        std::lock_guard<std::mutex> lock(core_->mutex);
        core_->registrar_open = false;
        if (status != CRANK_OK) {
            init_error_ =
                core_->init_error.empty() ? "init() failed without saying why" : core_->init_error;
            core_->adapters.clear();
            core_->aggregators.clear();
            return;
        }
        loaded_ = true;
    }

    const FakeHost& requireLoaded() const {
        if (!loaded_) {
            throw std::logic_error("FakeHost: the plugin is not loaded: " + init_error_);
        }
        return *this;
    }

    void abandon(const std::shared_ptr<detail::CallState>& call) {
        abandoned_ = true;
        std::lock_guard<std::mutex> lock(core_->mutex);
        core_->abandoned_calls.push_back(call);
    }

    std::shared_ptr<detail::CallState> newCall(detail::CallState::Kind kind) {
        return std::make_shared<detail::CallState>(core_, kind);
    }

    std::shared_ptr<detail::Core> core_;
    crank_plugin_descriptor descriptor_{};
    bool loaded_ = false;
    std::atomic<bool> abandoned_{false};
    std::string init_error_;
};

}  // namespace crank::testing
