#include "mcp/legacy/session_streams.h"

#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <fmt/core.h>

#include "http/stream_handoff.h"
#include "http/stream_reactor.h"
#include "log/log.h"
#include "mcp/endpoint_http.h"
#include "mcp/request_stream.h"
#include "mcp/wire/json_rpc.h"

namespace crank::mcp {

SessionStreams::SessionStreams(const config::McpConfig& mcp, http::StreamReactor& reactor,
                               std::shared_ptr<CallerQuotas> quotas)
    : max_streams_(mcp.max_streams),
      max_streams_per_session_(mcp.max_streams_per_session),
      reactor_(reactor),
      quotas_(std::move(quotas)) {}

bool SessionStreams::open(Poco::Net::HTTPServerRequest& request,
                          Poco::Net::HTTPServerResponse& response,
                          const std::shared_ptr<McpSession>& session, std::uint64_t stream,
                          const std::optional<std::string>& resume_from) {
    // The node's and the caller's bounds first (released on every way out below).
    std::shared_ptr<CallerQuotas::Hold> place = holdStreamPlace(
        response, reactor_, max_streams_, quotas_, session->agent(), session->workspace());
    if (!place) {
        return false;
    }
    if (!session->holdStreamPlace(static_cast<std::size_t>(max_streams_per_session_))) {
        sendHttpError(response, 429, kInvalidRequest,
                      fmt::format("this session already has {} open streams, its limit "
                                  "(mcp.max_streams_per_session); close one first",
                                  max_streams_per_session_));
        return false;
    }
    // The place is the session's until attach() or resume() takes it; every way out before
    // them gives it back.
    struct PlaceGuard {
        McpSession* session;
        ~PlaceGuard() {
            if (session != nullptr) {
                session->releaseStreamPlace();
            }
        }
    } guard{session.get()};
    response.setStatus(Poco::Net::HTTPResponse::HTTP_OK);
    response.setContentType("text/event-stream");
    response.set("Cache-Control", "no-cache");
    response.set("Mcp-Session-Id", session->id());
    auto fd = http::takeOverConnection(request, response);
    if (!fd) {
        log::warn("mcp: cannot hand a stream to the reactor: {}", fd.error().message);
        return false;
    }
    const std::uint64_t token = next_token_++;
    std::weak_ptr<McpSession> weak = session;
    // The stream's place is given back when the reactor lets go of it (or refuses it).
    auto adopted =
        reactor_.adopt(*fd, [weak, stream, token, place](http::StreamId, http::CloseReason) {
            if (auto s = weak.lock()) {
                s->detach(stream, token);
            }
        });
    if (!adopted) {
        log::warn("mcp: stream refused: {}", adopted.error().message);
        return false;
    }
    const http::StreamId sid = *adopted;
    http::StreamReactor* r = &reactor_;
    StreamConnection connection{
        token, [r, sid](std::string bytes) { return r->send(sid, std::move(bytes)); },
        [r, sid] { r->close(sid); }};
    guard.session = nullptr;  // taken by resume() or attach()
    if (resume_from) {
        session->resume(*resume_from, std::move(connection));
    } else {
        session->attach(stream, std::move(connection));
    }
    return true;
}

}  // namespace crank::mcp
