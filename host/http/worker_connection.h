#pragma once

#include <optional>
#include <string>

#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/StreamSocket.h>
#include <Poco/Net/TCPServerConnection.h>

namespace crank::http {

class ClientSocketImpl;

/// Where a WorkerConnection comes from and goes back to: HttpServer's registry of the connections
/// on workers, and its ConnectionGate.
class ConnectionHome {
public:
    virtual ~ConnectionHome() = default;
    /// A worker took `socket` (key: the connection object, until closed()).
    virtual void opened(const void* key, const Poco::Net::StreamSocket& socket) = 0;
    virtual void closed(const void* key) = 0;
    /// The request was answered and the connection stays open: back to the gate, or closed when
    /// the server is stopping.
    virtual void keepAlive(const Poco::Net::StreamSocket& socket) = 0;
    /// True once the server is shutting down: answers then close their connections.
    virtual bool stopping() const = 0;
    /// A request from `peer` was answered 401 (a failed authentication).
    virtual void authenticationFailed(const std::string& peer) = 0;
    /// What a worker does after a response on a kept connection.
    enum class Next {
        serve,    ///< its next request has arrived: this worker serves it too
        to_gate,  ///< the connection goes to keepAlive()
        close,    ///< it stayed idle for the idle timeout: it closes
    };
    /// After a response on a kept connection: `serve` when its next request arrived while this
    /// worker waited (next_request.h, parked_workers.h). Never `serve` while other connections
    /// wait for a worker or the server is stopping.
    virtual Next takeNextRequest(ClientSocketImpl& client) = 0;
};

/// Serves the request of a connection whose head (and often body) ConnectionGate has already
/// read, on a worker thread. Then, when the exchange allows keep-alive, the connection goes back
/// to the gate with whatever bytes of the next request were read, so that a worker never waits
/// for a slow client (Poco's HTTPServerConnection loops over the requests of a connection on its
/// worker, waiting out each keep-alive pause and each slow head). The exception is
/// ConnectionHome::takeNextRequest(): the worker parks on the idle connection (until another
/// connection needs it), and a next request that then arrives whole within
/// `server.keep_alive_wait_us` of its first bytes is served here too, up to kMaxRequestsInARow.
///
/// Per request it does what Poco's HTTPServerConnection does: Date and Server headers, keep-alive
/// from the parameters and the request, 100 Continue when asked, 400 for a head Poco cannot
/// parse, 500 when the handler throws before answering.
class WorkerConnection final : public Poco::Net::TCPServerConnection {
public:
    WorkerConnection(const Poco::Net::StreamSocket& socket, Poco::Net::HTTPServerParams::Ptr params,
                     Poco::Net::HTTPRequestHandlerFactory::Ptr factory, ConnectionHome& home);
    ~WorkerConnection() override;
    WorkerConnection(const WorkerConnection&) = delete;
    WorkerConnection& operator=(const WorkerConnection&) = delete;

    void run() override;

    /// Most requests of one connection a worker serves before the connection goes back to the
    /// gate whatever happens (a bound on the loop; fairness is takeNextRequest()'s).
    static constexpr int kMaxRequestsInARow = 1000;

private:
    /// Serves one request on `connection`; the connection when it stays open (its leftover bytes
    /// unread() into its ClientSocketImpl), nullopt when it ends.
    std::optional<Poco::Net::StreamSocket> serveOne(const Poco::Net::StreamSocket& connection);

    Poco::Net::HTTPServerParams::Ptr params_;
    Poco::Net::HTTPRequestHandlerFactory::Ptr factory_;
    ConnectionHome& home_;
};

}  // namespace crank::http
