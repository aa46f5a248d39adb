// Crank SDK, C++ layer: the request the host hands to an adapter.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "crank/sdk/types.hpp"
#include <crank/plugin.h>

namespace crank::sdk {

/// A crank_request as views. Built honouring the C struct's struct_size: members the host's
/// struct does not have read as empty / 0.
///
/// Lifetime: the views point into the host's memory and are valid only until the entry point
/// that received the request returns (unaryCall, openStream). A stream that reads them later (on
/// its own thread) copies them first, e.g. into std::string members of the Stream.
struct Request {
    std::string_view operation_name;
    std::string_view config_json;   ///< the operation's protocol config, as written
    std::string_view request_json;  ///< the config with templates rendered: what to send
    std::string_view input_json;    ///< the tool's input, a JSON object
    std::string_view auth_json;     ///< the resolved auth profile (secrets: never log it), or empty
    std::string_view cursor;        ///< where to resume from, or empty
    std::int64_t timeout_ms = 0;    ///< the upstream must answer within this (0: no limit)
    std::int64_t max_item_bytes = 0;  ///< no single item may be longer (0: no limit)
    /// ABI 1.4: the client's W3C trace context, to pass on to the upstream as is (empty: none).
    std::string_view traceparent;
    std::string_view tracestate;

    Request() = default;

    /// Appends the trace context to `out` (HTTP headers, WebSocket handshake headers, gRPC
    /// metadata: pairs of strings), leaving out a name that `out` or `configured` has already
    /// (compared without case): what the operator configured is sent as it is, never doubled.
    template <typename Pairs>
    void appendTraceHeaders(Pairs& out, const Pairs* configured = nullptr) const {
        const auto has = [](const Pairs& pairs, std::string_view name) {
            for (const auto& pair : pairs) {
                const std::string_view n = pair.first;
                if (n.size() == name.size() &&
                    std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
                        return std::tolower(static_cast<unsigned char>(a)) == b;
                    })) {
                    return true;
                }
            }
            return false;
        };
        for (const auto& [name, value] : traceHeaders()) {
            if (!has(out, name) && (configured == nullptr || !has(*configured, name))) {
                out.emplace_back(std::string(name), std::string(value));
            }
        }
    }

    /// The trace context as the header (or gRPC metadata) pairs to send upstream: none,
    /// `traceparent`, or both.
    std::vector<std::pair<std::string_view, std::string_view>> traceHeaders() const {
        std::vector<std::pair<std::string_view, std::string_view>> out;
        if (!traceparent.empty()) {
            out.emplace_back("traceparent", traceparent);
            if (!tracestate.empty()) {
                out.emplace_back("tracestate", tracestate);
            }
        }
        return out;
    }

    /// Reads `request` (may be NULL: everything empty).
    explicit Request(const crank_request* request) noexcept {
        if (request == nullptr) {
            return;
        }
        const std::size_t size = request->struct_size;
        auto has = [size](std::size_t offset, std::size_t member_size) {
            return size >= offset + member_size;
        };
        if (has(offsetof(crank_request, operation_name), sizeof(crank_str))) {
            operation_name = toView(request->operation_name);
        }
        if (has(offsetof(crank_request, config_json), sizeof(crank_str))) {
            config_json = toView(request->config_json);
        }
        if (has(offsetof(crank_request, request_json), sizeof(crank_str))) {
            request_json = toView(request->request_json);
        }
        if (has(offsetof(crank_request, input_json), sizeof(crank_str))) {
            input_json = toView(request->input_json);
        }
        if (has(offsetof(crank_request, auth_json), sizeof(crank_str))) {
            auth_json = toView(request->auth_json);
        }
        if (has(offsetof(crank_request, cursor), sizeof(crank_str))) {
            cursor = toView(request->cursor);
        }
        if (has(offsetof(crank_request, timeout_ms), sizeof(std::int64_t))) {
            timeout_ms = request->timeout_ms;
        }
        if (has(offsetof(crank_request, max_item_bytes), sizeof(std::int64_t))) {
            max_item_bytes = request->max_item_bytes;
        }
        if (has(offsetof(crank_request, traceparent), sizeof(crank_str))) {
            traceparent = toView(request->traceparent);
        }
        if (has(offsetof(crank_request, tracestate), sizeof(crank_str))) {
            tracestate = toView(request->tracestate);
        }
    }
};

}  // namespace crank::sdk
