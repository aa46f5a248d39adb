#pragma once

// W3C Trace Context (https://www.w3.org/TR/trace-context/) as crankd passes it on: a client's
// `traceparent` and `tracestate`, from the request's `_meta` (MCP, SEP-414) or else its HTTP
// headers, checked once here and handed to every upstream request the call makes (an HTTP header
// for REST and GraphQL, gRPC metadata, WebSocket handshake headers, `_meta` for MCP upstreams).
// A malformed traceparent is dropped with its tracestate, as the recommendation asks of a
// participant; crankd adds no span of its own.
//
// THREADING: pure functions and a value type.

#include <cstddef>
#include <string>
#include <string_view>

namespace crank::mcp {

struct TraceContext {
    std::string traceparent;  ///< "" when the request carried none (or none that was valid)
    std::string tracestate;   ///< "" without a traceparent, or when it had none worth passing

    bool empty() const { return traceparent.empty(); }
};

/// The `traceparent` and `tracestate` headers of an HTTP request, as they came (unchecked).
struct HeaderTrace {
    std::string traceparent;
    std::string tracestate;
};

/// The most a tracestate passed on may hold (the recommendation's propagation floor); longer
/// ones lose whole list members from the end until they fit.
inline constexpr std::size_t kMaxTracestateBytes = 512;

/// `traceparent` and `tracestate` as they may be passed on: version 00 exactly (55 characters), a
/// later version by its first 55 characters when a '-' or the end follows them; lowercase hex;
/// neither id all zeros; not version ff. The tracestate keeps its members of printable ASCII
/// without their surrounding blanks (at most 32, within kMaxTracestateBytes); empty members are
/// dropped. Both empty when the traceparent is not valid.
TraceContext checkedTraceContext(std::string_view traceparent, std::string_view tracestate);

/// A request's trace context: its `_meta` members when `_meta` has a traceparent, its HTTP
/// headers' otherwise (never a mix of the two), checked.
TraceContext requestTraceContext(std::string_view meta_traceparent,
                                 std::string_view meta_tracestate, const HeaderTrace& headers);

/// `params_json` (a request's params object, "" read as {}) with `trace` as the only trace context
/// of its `_meta`: whatever `traceparent` and `tracestate` it had are replaced (or removed when
/// `trace` is empty). Text that is not an object, or whose `_meta` is not one, is returned
/// unchanged; params without any trace context and an empty `trace` are returned as they are.
std::string withTraceContext(std::string_view params_json, const TraceContext& trace);

}  // namespace crank::mcp
