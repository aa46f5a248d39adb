#include "http/http_server.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServerConnection.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/TCPServer.h>
#include <Poco/Net/TCPServerConnectionFactory.h>
#include <Poco/ThreadPool.h>
#include <Poco/URI.h>

#include "http/responses.h"
#include "log/log.h"

namespace crank::http {
namespace {

/// Adapts a Router entry to Poco's one-object-per-request handler model.
class RoutedHandler final : public Poco::Net::HTTPRequestHandler {
public:
    explicit RoutedHandler(const Handler* handler) : handler_(handler) {}

    void handleRequest(Poco::Net::HTTPServerRequest& request,
                       Poco::Net::HTTPServerResponse& response) override {
        if (handler_ == nullptr) {
            sendError(response, 404, "not_found", "no such path: " + pathOf(request));
            return;
        }
        try {
            (*handler_)(request, response);
        } catch (const std::exception& e) {
            log::error("{} {}: handler failed: {}", request.getMethod(), pathOf(request), e.what());
            if (!response.sent()) {
                sendError(response, 500, "internal", "internal error");
            }
        }
    }

    static std::string pathOf(const Poco::Net::HTTPServerRequest& request) {
        const std::string& uri = request.getURI();
        return uri.substr(0, uri.find('?'));
    }

private:
    const Handler* handler_;
};

class RouterFactory final : public Poco::Net::HTTPRequestHandlerFactory {
public:
    explicit RouterFactory(std::shared_ptr<const Router> router) : router_(std::move(router)) {}

    Poco::Net::HTTPRequestHandler* createRequestHandler(
        const Poco::Net::HTTPServerRequest& request) override {
        return new RoutedHandler(router_->find(RoutedHandler::pathOf(request)));
    }

    /// Tells every open connection that the server stopped (Poco's event is protected).
    /// abort=false: each finishes its in-flight request, then closes; idle ones close at once.
    void notifyStopped(const void* sender, bool abort) { serverStopped(sender, abort); }

private:
    std::shared_ptr<const Router> router_;
};

/// The sockets of every open connection, so that a shutdown past its grace period can cut them
/// off. Poco's own abort path (HTTPServer::stopAll(true)) cannot be used for that while a graceful
/// stop is waiting on a connection: both go through the same delegate, whose lock the waiting
/// graceful stop holds.
class ConnectionRegistry {
public:
    void add(const void* key, const Poco::Net::StreamSocket& socket) {
        std::lock_guard lock(mutex_);
        sockets_.emplace(key, socket);
    }
    void remove(const void* key) {
        std::lock_guard lock(mutex_);
        sockets_.erase(key);
    }
    /// Shuts every registered socket down; blocked reads and writes on them fail at once.
    std::size_t shutdownAll() {
        std::lock_guard lock(mutex_);
        for (auto& [key, socket] : sockets_) {
            try {
                socket.shutdown();
            } catch (const Poco::Exception&) {
                // Already closed by the peer: nothing left to cut off.
            }
        }
        return sockets_.size();
    }

private:
    std::mutex mutex_;
    // Holding a copy keeps the descriptor open until the connection object itself is gone.
    std::unordered_map<const void*, Poco::Net::StreamSocket> sockets_;
};

class TrackedConnection final : public Poco::Net::HTTPServerConnection {
public:
    TrackedConnection(const Poco::Net::StreamSocket& socket,
                      Poco::Net::HTTPServerParams::Ptr params,
                      Poco::Net::HTTPRequestHandlerFactory::Ptr factory,
                      ConnectionRegistry& registry)
        : HTTPServerConnection(socket, std::move(params), std::move(factory)), registry_(registry) {
        registry_.add(this, socket);
    }
    ~TrackedConnection() override { registry_.remove(this); }
    TrackedConnection(const TrackedConnection&) = delete;
    TrackedConnection& operator=(const TrackedConnection&) = delete;

private:
    ConnectionRegistry& registry_;
};

class TrackedConnectionFactory final : public Poco::Net::TCPServerConnectionFactory {
public:
    TrackedConnectionFactory(Poco::Net::HTTPServerParams::Ptr params,
                             Poco::Net::HTTPRequestHandlerFactory::Ptr factory,
                             ConnectionRegistry& registry)
        : params_(std::move(params)), factory_(std::move(factory)), registry_(registry) {}

    Poco::Net::TCPServerConnection* createConnection(
        const Poco::Net::StreamSocket& socket) override {
        return new TrackedConnection(socket, params_, factory_, registry_);
    }

private:
    Poco::Net::HTTPServerParams::Ptr params_;
    Poco::Net::HTTPRequestHandlerFactory::Ptr factory_;
    ConnectionRegistry& registry_;
};

}  // namespace

struct HttpServer::Impl {
    config::ServerConfig config;
    std::shared_ptr<const Router> router;
    ConnectionRegistry connections;
    Poco::ThreadPool pool;
    Poco::SharedPtr<RouterFactory> handlers;
    std::unique_ptr<Poco::Net::TCPServer> server;
    config::ListenAddress bound;

    Impl(const config::ServerConfig& c, std::shared_ptr<const Router> r)
        // The pool is sized to the configured worker count: every connection holds a thread for
        // its lifetime in Poco's model, so this is also the bound on concurrent connections.
        : config(c), router(std::move(r)), pool("crank-http", 2, c.threads) {}
};

HttpServer::HttpServer(const config::ServerConfig& config, std::shared_ptr<const Router> router)
    : impl_(std::make_unique<Impl>(config, std::move(router))) {}

HttpServer::~HttpServer() {
    if (impl_->server) {
        impl_->server->stop();
        impl_->connections.shutdownAll();
    }
    impl_->pool.joinAll();
}

Result<void> HttpServer::start() {
    const config::ServerConfig& c = impl_->config;
    const std::string where = c.listen.toString();
    Poco::Net::ServerSocket socket;
    try {
        const Poco::Net::SocketAddress address(
            c.listen.host == "localhost" ? "127.0.0.1" : c.listen.host, c.listen.port);
        if (address.family() == Poco::Net::SocketAddress::IPv6) {
            socket.bind6(address, /*reuseAddress=*/true, /*reusePort=*/false, /*ipV6Only=*/true);
        } else {
            socket.bind(address, /*reuseAddress=*/true, /*reusePort=*/false);
        }
        socket.listen(c.backlog);
    } catch (const Poco::Net::NetException& e) {
        std::string reason = e.message().empty() ? e.displayText() : e.message();
        if (e.code() == EADDRINUSE || reason.find("in use") != std::string::npos) {
            reason =
                "the address is already in use (is another crankd or another server running "
                "on it?)";
        }
        return Error{ErrorCode::unavailable, "cannot listen on " + where + ": " + reason};
    } catch (const Poco::Exception& e) {
        return Error{ErrorCode::unavailable, "cannot listen on " + where + ": " + e.displayText()};
    }

    auto* params = new Poco::Net::HTTPServerParams;  // reference-counted by Poco
    params->setMaxThreads(c.threads);
    params->setMaxQueued(c.queue);
    params->setKeepAlive(true);
    params->setKeepAliveTimeout(Poco::Timespan(c.idle_connection_timeout_ms * 1000));
    params->setTimeout(Poco::Timespan(c.idle_connection_timeout_ms * 1000));
    params->setServerName("crankd");
    params->setSoftwareVersion("crankd");

    const Poco::Net::SocketAddress local = socket.address();
    impl_->bound = config::ListenAddress{local.host().toString(), local.port()};
    impl_->handlers = new RouterFactory(impl_->router);
    impl_->server = std::make_unique<Poco::Net::TCPServer>(
        new TrackedConnectionFactory(params, impl_->handlers, impl_->connections), impl_->pool,
        socket, params);
    impl_->server->start();
    return {};
}

config::ListenAddress HttpServer::boundAddress() const {
    return impl_->bound;
}

ShutdownReport HttpServer::shutdown(std::chrono::milliseconds grace) {
    ShutdownReport report;
    Poco::Net::TCPServer* server = impl_->server.get();
    if (server == nullptr) {
        return report;
    }
    server->stop();  // no new connections; the open ones go on
    const auto open = static_cast<std::size_t>(server->currentConnections());
    // serverStopped(false) waits for each connection's in-flight request before closing it, and
    // closes idle keep-alive connections at once. It has no deadline of its own, so it runs beside
    // us while we keep the clock; what outlives the grace period is cut off through the registry.
    std::atomic<bool> graceful{false};
    std::thread closer([&] {
        impl_->handlers->notifyStopped(server, false);
        graceful = true;
    });
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline &&
           (!graceful.load() || server->currentConnections() > 0)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!graceful.load() || server->currentConnections() > 0) {
        report.aborted = impl_->connections.shutdownAll();
    }
    closer.join();
    impl_->pool.joinAll();
    report.drained = open >= report.aborted ? open - report.aborted : 0;
    return report;
}

}  // namespace crank::http
