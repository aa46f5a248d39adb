#include "http/worker_connection.h"

#include <memory>
#include <string>

#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPServerRequestImpl.h>
#include <Poco/Net/HTTPServerResponseImpl.h>
#include <Poco/Net/HTTPServerSession.h>
#include <Poco/Net/NetException.h>
#include <Poco/Timestamp.h>

#include "http/client_socket.h"
#include "http/raw_header_values.h"
#include "log/log.h"

namespace crank::http {

namespace {

/// Most bytes of a request's body a handler left unread that are read and dropped so that the
/// connection can carry the next request; a longer rest closes the connection instead.
constexpr std::size_t kMaxBodyLeftover = std::size_t{64} * 1024;

/// Reads and drops what the handler left of `request`'s body (a handler that answers without
/// reading it: a refusal, an endpoint that takes no body). True when the body's end was reached,
/// so that the next bytes are the next request's; false when more than kMaxBodyLeftover was left
/// (the connection must end: its next bytes would be read as a request).
bool dropBodyLeft(Poco::Net::HTTPServerRequest& request) {
    if (!request.hasContentLength() && !request.getChunkedTransferEncoding()) {
        return true;  // no body
    }
    std::istream& in = request.stream();
    char chunk[4096];
    std::size_t dropped = 0;
    while (dropped <= kMaxBodyLeftover) {
        in.read(chunk, sizeof chunk);
        const std::streamsize n = in.gcount();
        if (n <= 0) {
            return in.eof();
        }
        dropped += static_cast<std::size_t>(n);
    }
    return false;
}

}  // namespace
namespace {

/// Poco's server session, with access to the bytes it has read past the current request.
class WorkerSession final : public Poco::Net::HTTPServerSession {
public:
    using HTTPServerSession::HTTPServerSession;

    std::string takeBuffered() {
        std::string bytes(static_cast<std::size_t>(buffered()), '\0');
        if (!bytes.empty()) {
            bytes.resize(static_cast<std::size_t>(
                read(bytes.data(), static_cast<std::streamsize>(bytes.size()))));
        }
        return bytes;
    }
};

void sendStatusOnly(Poco::Net::HTTPServerSession& session,
                    Poco::Net::HTTPResponse::HTTPStatus status) {
    Poco::Net::HTTPServerResponseImpl response(session);
    response.setVersion(Poco::Net::HTTPMessage::HTTP_1_1);
    response.setStatusAndReason(status);
    response.setKeepAlive(false);
    response.send();
}

}  // namespace

WorkerConnection::WorkerConnection(const Poco::Net::StreamSocket& socket,
                                   Poco::Net::HTTPServerParams::Ptr params,
                                   Poco::Net::HTTPRequestHandlerFactory::Ptr factory,
                                   ConnectionHome& home)
    : TCPServerConnection(socket),
      params_(std::move(params)),
      factory_(std::move(factory)),
      home_(home) {
    home_.opened(this, socket);
}

WorkerConnection::~WorkerConnection() {
    home_.closed(this);
}

void WorkerConnection::run() {
    Poco::Net::StreamSocket connection = socket();
    for (int served = 1;; ++served) {
        std::optional<Poco::Net::StreamSocket> kept = serveOne(connection);
        if (!kept) {
            return;
        }
        connection = *kept;
        auto* client = dynamic_cast<ClientSocketImpl*>(connection.impl());
        if (client == nullptr) {
            return;
        }
        const ConnectionHome::Next next = served >= kMaxRequestsInARow
                                              ? ConnectionHome::Next::to_gate
                                              : home_.takeNextRequest(*client);
        if (next == ConnectionHome::Next::close) {
            return;  // the last reference to the socket goes with this object
        }
        if (next == ConnectionHome::Next::to_gate) {
            home_.keepAlive(connection);
            return;
        }
    }
}

std::optional<Poco::Net::StreamSocket> WorkerConnection::serveOne(
    const Poco::Net::StreamSocket& connection) {
    WorkerSession session(connection, params_);
    // Its first call counts the request against the keep-alive budget (canKeepAlive() is false
    // before it) and returns at once: the head is in the read-ahead bytes.
    if (!session.hasMoreRequests()) {
        return std::nullopt;
    }
    auto* client = dynamic_cast<ClientSocketImpl*>(connection.impl());
    // The head is in the read-ahead bytes: kept when Poco would change a value of it.
    const std::optional<std::string> rawHead =
        client != nullptr ? headToRestore(client->unreadBytes()) : std::nullopt;
    bool keep = false;
    try {
        Poco::Net::HTTPServerResponseImpl response(session);
        Poco::Net::HTTPServerRequestImpl request(response, session, params_);
        if (rawHead) {
            restoreRawValues(*rawHead, request);
        }
        response.setDate(Poco::Timestamp());
        response.setVersion(request.getVersion());
        response.setKeepAlive(params_->getKeepAlive() && request.getKeepAlive() &&
                              session.canKeepAlive() && !home_.stopping());
        if (const std::string& server = params_->getSoftwareVersion(); !server.empty()) {
            response.set("Server", server);
        }
        try {
            const std::unique_ptr<Poco::Net::HTTPRequestHandler> handler(
                factory_->createRequestHandler(request));
            if (!handler) {
                sendStatusOnly(session, Poco::Net::HTTPResponse::HTTP_NOT_IMPLEMENTED);
                return std::nullopt;
            }
            if (request.getExpectContinue() &&
                response.getStatus() == Poco::Net::HTTPResponse::HTTP_OK) {
                response.sendContinue();
            }
            handler->handleRequest(request, response);
            if (response.getStatus() == Poco::Net::HTTPResponse::HTTP_UNAUTHORIZED &&
                client != nullptr) {
                home_.authenticationFailed(client->peer());
            }
            // A read that failed (a body past its pace, a reset) leaves the connection at an
            // unknown point of the request: it cannot carry another one.
            keep = params_->getKeepAlive() && response.getKeepAlive() && response.sent() &&
                   session.networkException() == nullptr && dropBodyLeft(request) &&
                   session.networkException() == nullptr;
        } catch (const Poco::Exception&) {
            if (!response.sent()) {
                try {
                    sendStatusOnly(session, Poco::Net::HTTPResponse::HTTP_INTERNAL_SERVER_ERROR);
                } catch (...) {
                    // The client is gone: nothing to tell it.
                }
            }
            throw;
        }
    } catch (const Poco::Net::NoMessageException&) {
        return std::nullopt;  // the client closed before sending anything
    } catch (const Poco::Net::MessageException&) {
        try {
            sendStatusOnly(session, Poco::Net::HTTPResponse::HTTP_BAD_REQUEST);
        } catch (...) {
            // The client is gone: nothing to tell it.
        }
        return std::nullopt;
    } catch (const Poco::Exception& e) {
        // A read past the body's deadline, a reset, a timeout: the connection ends.
        log::debug("http: connection from {} ended: {}",
                   client != nullptr ? client->peer() : std::string("?"), e.displayText());
        return std::nullopt;
    }
    if (!keep || client == nullptr) {
        return std::nullopt;
    }
    std::string rest = session.takeBuffered();
    Poco::Net::StreamSocket detached = session.detachSocket();
    client->unread(rest);
    return detached;
}

}  // namespace crank::http
