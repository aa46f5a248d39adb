#include "mcp/request_stream.h"

#include <utility>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>

#include "http/sse_event.h"
#include "http/stream_handoff.h"
#include "http/stream_reactor.h"
#include "log/log.h"
#include "mcp/endpoint_http.h"
#include "mcp/wire/json_rpc.h"

namespace crank::mcp {

std::shared_ptr<CallerQuotas::Hold> holdStreamPlace(Poco::Net::HTTPServerResponse& response,
                                                    const http::StreamReactor& reactor,
                                                    std::int64_t max_streams,
                                                    const std::shared_ptr<CallerQuotas>& quotas,
                                                    const std::string& agent,
                                                    const std::string& workspace) {
    if (reactor.openStreams() >= static_cast<std::size_t>(max_streams)) {
        response.set("Retry-After", "1");
        sendHttpError(response, 503, kInternalError,
                      "too many open streams (mcp.max_streams); retry later");
        return nullptr;
    }
    std::string refusal;
    std::shared_ptr<CallerQuotas::Hold> place =
        CallerQuotas::hold(quotas, CallerQuotas::Kind::stream, agent, workspace, refusal);
    if (!place) {
        sendHttpError(response, 429, kInvalidRequest, refusal);
    }
    return place;
}

std::shared_ptr<RequestStream> RequestStream::open(
    Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
    http::StreamReactor& reactor, std::int64_t max_streams,
    const std::shared_ptr<CallerQuotas>& quotas, const Who& who, std::function<void()> on_closed) {
    std::shared_ptr<CallerQuotas::Hold> place =
        holdStreamPlace(response, reactor, max_streams, quotas, who.agent, who.workspace);
    if (!place) {
        return nullptr;
    }
    response.setStatus(Poco::Net::HTTPResponse::HTTP_OK);
    response.setContentType("text/event-stream");
    response.set("Cache-Control", "no-cache");
    response.set("X-Accel-Buffering", "no");
    auto fd = http::takeOverConnection(request, response);
    if (!fd) {
        log::warn("mcp: cannot hand a request's stream to the reactor: {}", fd.error().message);
        return nullptr;
    }
    auto gone = std::make_shared<std::atomic<bool>>(false);
    // The place is given back when the reactor lets go of the stream.
    auto adopted = reactor.adopt(*fd, [gone, place, on_closed = std::move(on_closed)](
                                          http::StreamId, http::CloseReason reason) {
        if (reason != http::CloseReason::closed_by_server) {
            gone->store(true);
        }
        if (on_closed) {
            on_closed();
        }
    });
    if (!adopted) {
        log::warn("mcp: request stream refused: {}", adopted.error().message);
        return nullptr;
    }
    return std::shared_ptr<RequestStream>(new RequestStream(reactor, *adopted, std::move(gone)));
}

RequestStream::RequestStream(http::StreamReactor& reactor, std::uint64_t id,
                             std::shared_ptr<std::atomic<bool>> gone)
    : reactor_(reactor), id_(id), gone_(std::move(gone)) {}

RequestStream::~RequestStream() {
    if (!finished_.load()) {
        reactor_.close(id_);
    }
}

bool RequestStream::send(std::string_view message) {
    if (finished_.load() || gone_->load()) {
        return false;
    }
    return reactor_.send(id_, http::formatSseEvent("", "", message));
}

void RequestStream::finish(std::string_view message) {
    if (finished_.exchange(true)) {
        return;
    }
    if (!message.empty()) {
        reactor_.send(id_, http::formatSseEvent("", "", message));
    }
    reactor_.close(id_);
}

}  // namespace crank::mcp
