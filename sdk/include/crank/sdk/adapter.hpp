// Crank SDK, C++ layer: a protocol adapter and what it declares about itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "crank/sdk/call.hpp"
#include "crank/sdk/diagnostics.hpp"
#include "crank/sdk/error.hpp"
#include "crank/sdk/request.hpp"
#include "crank/sdk/stream.hpp"
#include "crank/sdk/upstream.hpp"

namespace crank::sdk {

/// What an adapter declares (crank_adapter's descriptive members). The layer keeps a copy until
/// shutdown; the C descriptor's views point into it.
struct AdapterInfo {
    std::string name;         ///< the operations' `protocol`, [a-z0-9_]{1,64}, e.g. "rest"
    std::string version;      ///< the adapter's own version, e.g. "1.2.0"
    std::string description;  ///< one line for `crankd plugins` and the admin UI
    /// CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM | CRANK_CAP_FEDERATION
    std::uint32_t capabilities = 0;
    std::uint32_t modes = 0;  ///< CRANK_MODE_* the adapter supports
    /// JSON Schema (draft 2020-12 subset) of the operation config; the host validates first.
    std::string config_schema_json = "{\"type\":\"object\"}";
};

/// A protocol adapter. One object serves every operation and call of its protocol, so every
/// member is called concurrently from host threads: keep it free of per-call mutable state (or
/// lock it). Exceptions thrown by members become errors (see Error); nothing escapes.
class Adapter {
public:
    Adapter() = default;
    Adapter(const Adapter&) = delete;
    Adapter& operator=(const Adapter&) = delete;
    Adapter(Adapter&&) = delete;
    Adapter& operator=(Adapter&&) = delete;
    /// Destroyed at the library's shutdown, after every call and stream has ended.
    virtual ~Adapter() = default;

    /// Semantic checks of an operation config beyond its schema, at config load: report each
    /// problem with diagnostics.error(path, message). Throwing reports the exception as one
    /// problem.
    virtual void validate(std::string_view /*config_json*/, Diagnostics& /*diagnostics*/) {}

    /// ABI 1.3: what the operation config tells about the tool, known only to the adapter, as
    /// one JSON object's text (crank_adapter.describe): "input_schema", "transport_behavior",
    /// "description", each optional. Empty: nothing to add. Called at config load after
    /// validate() passed. Report a problem with diagnostics.error(path, message) (or throw).
    virtual std::string describe(std::string_view /*config_json*/, Diagnostics& /*diagnostics*/) {
        return {};
    }

    /// CRANK_CAP_UNARY: runs one request on a host worker thread, may block up to
    /// request.timeout_ms (check call.isCancelled() when you can), emits the response as one
    /// item (several for a paged upstream). Returning normally is CRANK_OK; throwing is
    /// set_error + CRANK_ERROR.
    virtual void unaryCall(Call& /*call*/, const Request& /*request*/) {
        throw Error(ErrorCode::unsupported, "this adapter does not implement unary calls");
    }

    /// CRANK_CAP_SERVER_STREAM: opens the upstream stream and returns at once with the object
    /// that will read it (usually a ThreadedStream). Throwing is set_error + stream_open NULL
    /// (no complete() then). `call` and `request` views die when this returns: copy them.
    virtual std::unique_ptr<Stream> openStream(Call& /*call*/, const Request& /*request*/) {
        throw Error(ErrorCode::unsupported, "this adapter does not implement server streams");
    }

    /// CRANK_CAP_FEDERATION: opens the upstream `name` with `config_json` (an upstream's
    /// `config`, already valid against the schema) and returns at once; connect in the
    /// background or on first use, and tell `peer` about the upstream's lists once known
    /// (peer.notify("notifications/tools/list_changed", "") and the others).
    virtual std::unique_ptr<Upstream> openUpstream(Peer /*peer*/, std::string_view /*name*/,
                                                   std::string_view /*config_json*/) {
        throw Error(ErrorCode::unsupported, "this adapter does not federate upstreams");
    }
};

}  // namespace crank::sdk
