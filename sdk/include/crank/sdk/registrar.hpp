// Crank SDK, C++ layer: registration of adapters and aggregators during init(), and the C
// trampolines that lead the host's calls back to the C++ objects.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crank/sdk/adapter.hpp"
#include "crank/sdk/aggregator.hpp"
#include "crank/sdk/boundary.hpp"
#include "crank/sdk/error.hpp"
#include "crank/sdk/host.hpp"
#include "crank/sdk/upstream.hpp"
#include "crank/sdk/writer.hpp"
#include <crank/plugin.h>

namespace crank::sdk {

namespace detail {

/// One registered adapter: its info (the C descriptor's views point into it), the object, and
/// the C descriptor whose `state` points back here.
struct AdapterSlot {
    AdapterInfo info;
    std::unique_ptr<Adapter> adapter;
    Host host;
    crank_adapter descriptor{};
};

struct AggregatorSlot {
    AggregatorInfo info;
    std::unique_ptr<Aggregator> aggregator;
    Host host;
    crank_aggregator descriptor{};
};

/// What a crank_stream* points to.
struct StreamBox {
    std::unique_ptr<Stream> stream;
    Call call;
};

/// What a crank_aggregate* points to: the aggregate and the call it was created for (accept and
/// snapshot report their errors on it).
struct AggregateBox {
    std::unique_ptr<Aggregate> aggregate;
    Call call;
};

/// Everything one plugin library registered, alive from a successful init() to shutdown().
struct Registry {
    Host host;
    std::vector<std::unique_ptr<AdapterSlot>> adapters;
    std::vector<std::unique_ptr<AggregatorSlot>> aggregators;
};

/// [a-z0-9_]{1,64}: the names the host accepts for libraries, adapters and aggregators.
inline bool isValidName(std::string_view name) noexcept {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    for (char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
            return false;
        }
    }
    return true;
}

/// Logs the exception being handled on `call` (for resume/cancel, which have nowhere else to
/// report).
inline void logCurrentException(Call& call, std::string_view what) noexcept {
    reportCurrentException([&](ErrorCode, std::string_view message, std::string_view) noexcept {
        if (call.api() != nullptr && call.api()->log != nullptr) {
            std::string line;
            try {
                line.append(what).append(" threw: ").append(message);
            } catch (...) {  // NOLINT(bugprone-empty-catch): log what fits
            }
            call.api()->log(call.host(), call.handle(), CRANK_LOG_ERROR, toCStr(line));
        }
    });
}

// --- adapter trampolines -------------------------------------------------------------------

inline crank_status adapterValidate(void* state, crank_str config_json,
                                    crank_call* diagnostics) noexcept {
    auto* slot = static_cast<AdapterSlot*>(state);
    try {
        Diagnostics sink(slot->host.api(), diagnostics);
        slot->adapter->validate(toView(config_json), sink);
        return sink.failed() ? CRANK_ERROR : CRANK_OK;
    } catch (...) {
        setErrorFromCurrentException(slot->host.api(), diagnostics);
        return CRANK_ERROR;
    }
}

inline crank_status adapterDescribe(void* state, crank_str config_json, crank_writer* out,
                                    crank_call* diagnostics) noexcept {
    auto* slot = static_cast<AdapterSlot*>(state);
    try {
        Diagnostics sink(slot->host.api(), diagnostics);
        const std::string description = slot->adapter->describe(toView(config_json), sink);
        if (sink.failed()) {
            return CRANK_ERROR;
        }
        Writer writer(slot->host.api(), out);
        if (!description.empty() && !writer.append(description)) {
            throw Error(ErrorCode::resource_exhausted,
                        "the description of the operation is larger than the host accepts");
        }
        return CRANK_OK;
    } catch (...) {
        setErrorFromCurrentException(slot->host.api(), diagnostics);
        return CRANK_ERROR;
    }
}

inline crank_status adapterUnaryCall(void* state, crank_call* call,
                                     const crank_request* request) noexcept {
    auto* slot = static_cast<AdapterSlot*>(state);
    try {
        Call wrapped(slot->host.api(), slot->host.handle(), call);
        const Request view(request);
        slot->adapter->unaryCall(wrapped, view);
        return CRANK_OK;
    } catch (...) {
        setErrorFromCurrentException(slot->host.api(), call);
        return CRANK_ERROR;
    }
}

inline crank_stream* adapterStreamOpen(void* state, crank_call* call,
                                       const crank_request* request) noexcept {
    auto* slot = static_cast<AdapterSlot*>(state);
    try {
        Call wrapped(slot->host.api(), slot->host.handle(), call);
        const Request view(request);
        auto box = std::make_unique<StreamBox>();
        box->call = wrapped;
        box->stream = slot->adapter->openStream(wrapped, view);
        if (!box->stream) {
            throw Error(ErrorCode::internal, "openStream returned no stream");
        }
        box->stream->start(wrapped);
        return reinterpret_cast<crank_stream*>(box.release());
    } catch (...) {
        setErrorFromCurrentException(slot->host.api(), call);
        return nullptr;
    }
}

inline void adapterStreamResume(crank_stream* stream) noexcept {
    auto* box = reinterpret_cast<StreamBox*>(stream);
    try {
        box->stream->resume();
    } catch (...) {
        logCurrentException(box->call, "Stream::resume");
    }
}

inline void adapterStreamCancel(crank_stream* stream) noexcept {
    auto* box = reinterpret_cast<StreamBox*>(stream);
    try {
        box->stream->cancel();
    } catch (...) {
        logCurrentException(box->call, "Stream::cancel");
    }
}

inline void adapterStreamDestroy(crank_stream* stream) noexcept {
    delete reinterpret_cast<StreamBox*>(stream);
}

// --- federation trampolines (ABI 1.2) ------------------------------------------------------

/// What a crank_upstream* points to.
struct UpstreamBox {
    std::unique_ptr<Upstream> upstream;
    Host host;
};

inline crank_upstream* adapterUpstreamOpen(void* state, crank_peer* peer, crank_str name,
                                           crank_str config_json,
                                           crank_call* diagnostics) noexcept {
    auto* slot = static_cast<AdapterSlot*>(state);
    try {
        auto box = std::make_unique<UpstreamBox>();
        box->host = slot->host;
        box->upstream = slot->adapter->openUpstream(Peer(slot->host.api(), peer), toView(name),
                                                    toView(config_json));
        if (!box->upstream) {
            throw Error(ErrorCode::internal, "openUpstream returned no upstream");
        }
        return reinterpret_cast<crank_upstream*>(box.release());
    } catch (...) {
        setErrorFromCurrentException(slot->host.api(), diagnostics);
        return nullptr;
    }
}

inline crank_status adapterUpstreamRequest(crank_upstream* upstream, crank_call* call,
                                           crank_str method, crank_str params_json,
                                           crank_writer* result) noexcept {
    auto* box = reinterpret_cast<UpstreamBox*>(upstream);
    try {
        Call wrapped(box->host.api(), box->host.handle(), call);
        const std::string answer =
            box->upstream->request(wrapped, toView(method), toView(params_json));
        Writer writer(box->host.api(), result);
        if (!writer.append(answer)) {
            wrapped.setError(ErrorCode::resource_exhausted,
                             "the upstream's answer is larger than the host allows");
            return CRANK_ERROR;
        }
        return CRANK_OK;
    } catch (...) {
        setErrorFromCurrentException(box->host.api(), call);
        return CRANK_ERROR;
    }
}

inline void adapterUpstreamNotify(crank_upstream* upstream, crank_str method,
                                  crank_str params_json) noexcept {
    auto* box = reinterpret_cast<UpstreamBox*>(upstream);
    try {
        box->upstream->notify(toView(method), toView(params_json));
    } catch (...) {
        reportCurrentException([&](ErrorCode, std::string_view message, std::string_view) noexcept {
            box->host.log(LogLevel::warn, message);
        });
    }
}

inline crank_status adapterUpstreamStatus(crank_upstream* upstream, crank_writer* out) noexcept {
    auto* box = reinterpret_cast<UpstreamBox*>(upstream);
    try {
        Writer writer(box->host.api(), out);
        return writer.append(box->upstream->status()) ? CRANK_OK : CRANK_ERROR;
    } catch (...) {
        return CRANK_ERROR;
    }
}

inline void adapterUpstreamClose(crank_upstream* upstream) noexcept {
    delete reinterpret_cast<UpstreamBox*>(upstream);
}

// --- aggregator trampolines ----------------------------------------------------------------

inline crank_status aggregatorValidate(void* state, crank_str config_json,
                                       crank_call* diagnostics) noexcept {
    auto* slot = static_cast<AggregatorSlot*>(state);
    try {
        Diagnostics sink(slot->host.api(), diagnostics);
        slot->aggregator->validate(toView(config_json), sink);
        return sink.failed() ? CRANK_ERROR : CRANK_OK;
    } catch (...) {
        setErrorFromCurrentException(slot->host.api(), diagnostics);
        return CRANK_ERROR;
    }
}

inline crank_aggregate* aggregatorCreate(void* state, crank_str config_json,
                                         crank_call* call) noexcept {
    auto* slot = static_cast<AggregatorSlot*>(state);
    try {
        auto box = std::make_unique<AggregateBox>();
        box->call = Call(slot->host.api(), slot->host.handle(), call);
        box->aggregate = slot->aggregator->create(toView(config_json), box->call);
        if (!box->aggregate) {
            throw Error(ErrorCode::internal, "Aggregator::create returned no aggregate");
        }
        return reinterpret_cast<crank_aggregate*>(box.release());
    } catch (...) {
        setErrorFromCurrentException(slot->host.api(), call);
        return nullptr;
    }
}

inline crank_status aggregateAccept(crank_aggregate* aggregate, crank_str item_json) noexcept {
    auto* box = reinterpret_cast<AggregateBox*>(aggregate);
    try {
        box->aggregate->accept(toView(item_json));
        return CRANK_OK;
    } catch (...) {
        setErrorFromCurrentException(box->call.api(), box->call.handle());
        return CRANK_ERROR;
    }
}

inline crank_status aggregateSnapshot(crank_aggregate* aggregate, crank_writer* writer) noexcept {
    auto* box = reinterpret_cast<AggregateBox*>(aggregate);
    Writer wrapped(box->call.api(), writer);
    try {
        box->aggregate->snapshot(wrapped);
    } catch (...) {
        if (!wrapped.failed()) {
            setErrorFromCurrentException(box->call.api(), box->call.handle());
            return CRANK_ERROR;
        }
    }
    if (wrapped.failed()) {
        box->call.setError(ErrorCode::resource_exhausted,
                           "the result is larger than the host allows");
        return CRANK_ERROR;
    }
    return CRANK_OK;
}

inline void aggregateDestroy(crank_aggregate* aggregate) noexcept {
    delete reinterpret_cast<AggregateBox*>(aggregate);
}

}  // namespace detail

/// Handed to the plugin's register function during init(). Valid only during that call.
/// Every add*() throws Error when the name is invalid or the host refuses the registration
/// (duplicate name, missing function for the declared capabilities): let it propagate and init
/// fails with its message (set_init_error), or catch it to go on without that entry.
class Registrar {
public:
    Registrar(detail::Registry& registry, crank_registrar* registrar) noexcept
        : registry_(&registry), registrar_(registrar) {}

    /// Registers a protocol adapter. Function pointers are filled from info.capabilities
    /// (CRANK_CAP_UNARY: unary_call; CRANK_CAP_SERVER_STREAM: the stream functions;
    /// CRANK_CAP_FEDERATION: the upstream functions).
    void addAdapter(AdapterInfo info, std::unique_ptr<Adapter> adapter) {
        if (!adapter) {
            throw Error(ErrorCode::invalid_argument,
                        "adapter \"" + info.name + "\": no Adapter object given");
        }
        if (!detail::isValidName(info.name)) {
            throw Error(ErrorCode::invalid_argument,
                        "adapter name \"" + info.name + "\" is invalid: use 1 to 64 of [a-z0-9_]");
        }
        auto slot = std::make_unique<detail::AdapterSlot>();
        slot->info = std::move(info);
        slot->adapter = std::move(adapter);
        slot->host = registry_->host;
        crank_adapter& d = slot->descriptor;
        d.struct_size = sizeof(crank_adapter);
        d.name = toCStr(slot->info.name);
        d.version = toCStr(slot->info.version);
        d.description = toCStr(slot->info.description);
        d.capabilities = slot->info.capabilities;
        d.modes = slot->info.modes;
        d.config_schema_json = toCStr(slot->info.config_schema_json);
        d.state = slot.get();
        d.validate = &detail::adapterValidate;
        d.describe = &detail::adapterDescribe;
        if ((slot->info.capabilities & CRANK_CAP_UNARY) != 0) {
            d.unary_call = &detail::adapterUnaryCall;
        }
        if ((slot->info.capabilities & CRANK_CAP_SERVER_STREAM) != 0) {
            d.stream_open = &detail::adapterStreamOpen;
            d.stream_resume = &detail::adapterStreamResume;
            d.stream_cancel = &detail::adapterStreamCancel;
            d.stream_destroy = &detail::adapterStreamDestroy;
        }
        if ((slot->info.capabilities & CRANK_CAP_FEDERATION) != 0) {
            d.upstream_open = &detail::adapterUpstreamOpen;
            d.upstream_request = &detail::adapterUpstreamRequest;
            d.upstream_notify = &detail::adapterUpstreamNotify;
            d.upstream_status = &detail::adapterUpstreamStatus;
            d.upstream_close = &detail::adapterUpstreamClose;
        }
        // Kept before registering: the host keeps the views from the call on.
        registry_->adapters.push_back(std::move(slot));
        const crank_host_api* api = registry_->host.api();
        if (api->register_adapter(registrar_, &registry_->adapters.back()->descriptor) !=
            CRANK_OK) {
            std::string name = registry_->adapters.back()->info.name;
            registry_->adapters.pop_back();
            throw Error(ErrorCode::invalid_argument,
                        "the host refused adapter \"" + name +
                            "\" (a duplicate name, or a function its capabilities need is "
                            "missing; see the host's log)");
        }
    }

    /// Registers an aggregator.
    void addAggregator(AggregatorInfo info, std::unique_ptr<Aggregator> aggregator) {
        if (!aggregator) {
            throw Error(ErrorCode::invalid_argument,
                        "aggregator \"" + info.name + "\": no Aggregator object given");
        }
        if (!detail::isValidName(info.name)) {
            throw Error(ErrorCode::invalid_argument, "aggregator name \"" + info.name +
                                                         "\" is invalid: use 1 to 64 of [a-z0-9_]");
        }
        auto slot = std::make_unique<detail::AggregatorSlot>();
        slot->info = std::move(info);
        slot->aggregator = std::move(aggregator);
        slot->host = registry_->host;
        crank_aggregator& d = slot->descriptor;
        d.struct_size = sizeof(crank_aggregator);
        d.name = toCStr(slot->info.name);
        d.version = toCStr(slot->info.version);
        d.description = toCStr(slot->info.description);
        d.config_schema_json = toCStr(slot->info.config_schema_json);
        d.output_schema_json = toCStr(slot->info.output_schema_json);
        d.state = slot.get();
        d.validate = &detail::aggregatorValidate;
        d.create = &detail::aggregatorCreate;
        d.accept = &detail::aggregateAccept;
        d.snapshot = &detail::aggregateSnapshot;
        d.destroy = &detail::aggregateDestroy;
        registry_->aggregators.push_back(std::move(slot));
        const crank_host_api* api = registry_->host.api();
        if (api->register_aggregator(registrar_, &registry_->aggregators.back()->descriptor) !=
            CRANK_OK) {
            std::string name = registry_->aggregators.back()->info.name;
            registry_->aggregators.pop_back();
            throw Error(ErrorCode::invalid_argument,
                        "the host refused aggregator \"" + name +
                            "\" (a duplicate name, or a missing function; see the host's log)");
        }
    }

    /// The host: copy it into adapters/aggregators that log outside calls. Valid until shutdown.
    const Host& host() const noexcept { return registry_->host; }

    /// The raw handle, for what the C++ layer does not wrap.
    crank_registrar* handle() const noexcept { return registrar_; }

private:
    detail::Registry* registry_;
    crank_registrar* registrar_;
};

}  // namespace crank::sdk
