#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "mcp/caller_quotas.h"
#include "mcp/endpoint_access.h"

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::http {
class StreamReactor;
}  // namespace crank::http

namespace crank::mcp {

/// The place of one more SSE stream of `agent` in `workspace`, held until the returned hold is
/// released: null after answering 503 when the node has `max_streams` open (mcp.max_streams) or
/// 429 when the agent's or the workspace's stream quota is used up. Both eras' streams take it.
std::shared_ptr<CallerQuotas::Hold> holdStreamPlace(Poco::Net::HTTPServerResponse& response,
                                                    const http::StreamReactor& reactor,
                                                    std::int64_t max_streams,
                                                    const std::shared_ptr<CallerQuotas>& quotas,
                                                    const std::string& agent,
                                                    const std::string& workspace);

/// One 2026-07-28 request answered as an SSE stream (SEP-2575): the connection goes to the stream
/// reactor, which writes what the request sends (its progress and log notifications, then its
/// response) without a thread of its own, and a heartbeat while the request runs. The response
/// ends the stream. Events carry no ids: the era has no resumption, a lost request is sent again.
/// The client closing the stream cancels the request (closed() turns true).
///
/// THREADING: any thread; send() calls from one thread arrive in their order.
class RequestStream {
public:
    /// Answers 200 text/event-stream and hands the connection to `reactor`, counted against
    /// `max_streams` (the node's mcp.max_streams) and the caller's stream quotas; nullptr after
    /// answering 503 or 429 when a bound refuses it, or when the connection could not be taken
    /// over (then the client is gone or about to be). `on_closed`, when set, runs once the
    /// stream has ended, on the reactor's thread (keep it short): after closed() turned true
    /// when the stream ended before finish().
    static std::shared_ptr<RequestStream> open(Poco::Net::HTTPServerRequest& request,
                                               Poco::Net::HTTPServerResponse& response,
                                               http::StreamReactor& reactor,
                                               std::int64_t max_streams,
                                               const std::shared_ptr<CallerQuotas>& quotas,
                                               const Who& who,
                                               std::function<void()> on_closed = {});
    ~RequestStream();
    RequestStream(const RequestStream&) = delete;
    RequestStream& operator=(const RequestStream&) = delete;

    /// Queues one JSON-RPC message (a notification) as an SSE event; false once the stream has
    /// ended.
    bool send(std::string_view message);
    /// Queues the response, then closes the stream once it is written.
    void finish(std::string_view message);
    /// True once the stream ended before finish(): the client left (or the node is stopping).
    bool closed() const { return gone_->load(); }

private:
    RequestStream(http::StreamReactor& reactor, std::uint64_t id,
                  std::shared_ptr<std::atomic<bool>> gone);

    http::StreamReactor& reactor_;
    std::uint64_t id_;
    std::shared_ptr<std::atomic<bool>> gone_;
    std::atomic<bool> finished_{false};
};

}  // namespace crank::mcp
