#include "http/http_server.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
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
#include <Poco/Net/StreamSocketImpl.h>
#include <Poco/Net/TCPServerConnectionFactory.h>
#include <Poco/Net/TCPServerDispatcher.h>
#include <Poco/ThreadPool.h>
#include <Poco/URI.h>

#include "http/responses.h"
#include "log/log.h"
#include <sys/socket.h>

namespace crank::http {
namespace {

/// An accepted connection whose poll() is one poll(2) call. Poco's own SocketImpl::poll() creates,
/// fills, waits on and closes an epoll instance each time, and its HTTP server polls before every
/// keep-alive request: four system calls per request where one does (the unary REST benchmark
/// showed them among crankd's most frequent).
class PollingSocketImpl final : public Poco::Net::StreamSocketImpl {
public:
    explicit PollingSocketImpl(poco_socket_t fd) : StreamSocketImpl(fd) {}

    bool poll(const Poco::Timespan& timeout, int mode) override {
        pollfd p{sockfd(), 0, 0};
        if ((mode & Poco::Net::Socket::SELECT_READ) != 0) {
            p.events |= POLLIN;
        }
        if ((mode & Poco::Net::Socket::SELECT_WRITE) != 0) {
            p.events |= POLLOUT;
        }
        if ((mode & Poco::Net::Socket::SELECT_ERROR) != 0) {
            p.events |= POLLPRI;
        }
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::microseconds(timeout.totalMicroseconds());
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            const int rc = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
            if (rc >= 0) {
                return rc > 0;
            }
            if (errno != EINTR) {
                error(errno);  // throws, as Poco's poll() does
            }
        }
    }
};

/// Adapts a Router entry to Poco's one-object-per-request handler model.
class RoutedHandler final : public Poco::Net::HTTPRequestHandler {
public:
    RoutedHandler(const Handler* handler, bool crowded) : handler_(handler), crowded_(crowded) {}

    void handleRequest(Poco::Net::HTTPServerRequest& request,
                       Poco::Net::HTTPServerResponse& response) override {
        if (crowded_) {
            // Nearly every worker holds a connection: do not let this one sit idle on a thread
            // after its answer, or idle keep-alive clients would starve new requests.
            response.setKeepAlive(false);
        }
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
    bool crowded_;
};

class RouterFactory final : public Poco::Net::HTTPRequestHandlerFactory {
public:
    RouterFactory(std::shared_ptr<const Router> router, std::function<bool()> crowded)
        : router_(std::move(router)), crowded_(std::move(crowded)) {}

    Poco::Net::HTTPRequestHandler* createRequestHandler(
        const Poco::Net::HTTPServerRequest& request) override {
        return new RoutedHandler(router_->find(RoutedHandler::pathOf(request)), crowded_());
    }

    /// Tells every open connection that the server stopped (Poco's event is protected).
    /// abort=false: each finishes its in-flight request, then closes; idle ones close at once.
    void notifyStopped(const void* sender, bool abort) { serverStopped(sender, abort); }

private:
    std::shared_ptr<const Router> router_;
    std::function<bool()> crowded_;
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

/// Answers a connection that finds every worker busy and the queue full, without a worker: the
/// client learns at once that it should retry, instead of waiting on a connection that Poco would
/// drop.
void refuseBusy(Poco::Net::StreamSocket& socket) {
    static constexpr std::string_view kBody =
        R"({"error":{"code":"busy","message":"every worker is busy and the queue is full )"
        R"((server.threads, server.queue); retry shortly"}})";
    const std::string reply =
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
        "Content-Type: application/json\r\nConnection: close\r\n"
        "Content-Length: " +
        std::to_string(kBody.size()) + "\r\n\r\n" + std::string(kBody);
    try {
        socket.setSendTimeout(Poco::Timespan(0, 200'000));
        socket.sendBytes(reply.data(), static_cast<int>(reply.size()));
        socket.shutdownSend();
        // Closing with the request unread would reset the connection, and the client would see
        // a reset instead of the 503: take what has arrived, briefly, before closing.
        char sink[4096];
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
        while (std::chrono::steady_clock::now() < until &&
               socket.poll(Poco::Timespan(0, 5'000), Poco::Net::Socket::SELECT_READ) &&
               socket.receiveBytes(sink, sizeof sink) > 0) {
        }
    } catch (const Poco::Exception&) {
        // The client is gone or not reading: nothing more to tell it.
    }
}

}  // namespace

struct HttpServer::Impl {
    config::ServerConfig config;
    std::shared_ptr<const Router> router;
    ConnectionRegistry connections;
    Poco::ThreadPool pool;
    Poco::SharedPtr<RouterFactory> handlers;
    Poco::Net::ServerSocket listener;
    // Poco's TCPServer would accept here too, but it silently drops connections beyond its queue;
    // crankd accepts itself so that it can answer those with 503 and Retry-After.
    Poco::Net::TCPServerDispatcher* dispatcher = nullptr;  // reference-counted by Poco
    std::thread acceptor;
    std::atomic<bool> accepting{false};
    std::atomic<std::uint64_t> refused{0};
    config::ListenAddress bound;

    Impl(const config::ServerConfig& c, std::shared_ptr<const Router> r)
        // The pool is sized to the configured worker count: every connection holds a thread for
        // its lifetime in Poco's model, so this is also the bound on concurrent connections.
        : config(c), router(std::move(r)), pool("crank-http", 2, c.threads + 1) {}

    /// The dispatcher's own rule for dropping a connection: its queue is full (whether or not its
    /// workers have started yet).
    bool saturated() const { return dispatcher->queuedConnections() >= config.queue; }

    void acceptLoop() {
        while (accepting.load()) {
            try {
                if (!listener.poll(Poco::Timespan(0, 100'000), Poco::Net::Socket::SELECT_READ)) {
                    continue;
                }
                const int fd = ::accept4(listener.impl()->sockfd(), nullptr, nullptr, SOCK_CLOEXEC);
                if (fd < 0) {
                    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                        errno != ECONNABORTED) {
                        // Out of descriptors, say: the listener stays readable, so pace the
                        // retries.
                        log::warn("http: accept failed: errno {}", errno);
                        std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    }
                    continue;
                }
                Poco::Net::StreamSocket socket(new PollingSocketImpl(fd));
                socket.setNoDelay(true);
                if (saturated()) {
                    ++refused;
                    refuseBusy(socket);
                    continue;
                }
                dispatcher->enqueue(socket);
            } catch (const Poco::Exception& e) {
                log::warn("http: accept failed: {}", e.displayText());
            }
        }
    }

    void stopAccepting() {
        if (accepting.exchange(false) && acceptor.joinable()) {
            acceptor.join();
        }
        if (acceptor.joinable()) {
            acceptor.join();
        }
        try {
            listener.close();
        } catch (const Poco::Exception&) {
            // Already closed.
        }
    }

    ~Impl() {
        stopAccepting();
        if (dispatcher != nullptr) {
            dispatcher->stop();
            connections.shutdownAll();
        }
        pool.joinAll();
        if (dispatcher != nullptr) {
            dispatcher->release();
        }
    }
};

HttpServer::HttpServer(const config::ServerConfig& config, std::shared_ptr<const Router> router)
    : impl_(std::make_unique<Impl>(config, std::move(router))) {}

HttpServer::~HttpServer() = default;

Result<void> HttpServer::start() {
    const config::ServerConfig& c = impl_->config;
    const std::string where = c.listen.toString();
    Poco::Net::ServerSocket& socket = impl_->listener;
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

    // One reference-counted object shared by the dispatcher and the connection factory: each
    // holds its own reference (an AutoPtr made twice from the raw pointer would free it twice).
    Poco::Net::HTTPServerParams::Ptr params(new Poco::Net::HTTPServerParams);
    params->setMaxThreads(c.threads);
    params->setMaxQueued(c.queue);
    params->setKeepAlive(true);
    params->setKeepAliveTimeout(Poco::Timespan(c.idle_connection_timeout_ms * 1000));
    params->setTimeout(Poco::Timespan(c.idle_connection_timeout_ms * 1000));
    params->setServerName("crankd");
    params->setSoftwareVersion("crankd");

    const Poco::Net::SocketAddress local = socket.address();
    impl_->bound = config::ListenAddress{local.host().toString(), local.port()};
    Impl* impl = impl_.get();
    // Keep-alive only while a quarter of the workers are free (at least one).
    const int spare = std::max(1, c.threads / 4);
    impl_->handlers = new RouterFactory(impl_->router, [impl, spare] {
        return impl->dispatcher->currentConnections() > impl->config.threads - spare;
    });
    impl_->dispatcher = new Poco::Net::TCPServerDispatcher(
        new TrackedConnectionFactory(params, impl_->handlers, impl_->connections), impl_->pool,
        params);
    impl_->accepting = true;
    impl_->acceptor = std::thread([impl] { impl->acceptLoop(); });
    return {};
}

config::ListenAddress HttpServer::boundAddress() const {
    return impl_->bound;
}

std::uint64_t HttpServer::refusedConnections() const {
    return impl_->refused.load();
}

ShutdownReport HttpServer::shutdown(std::chrono::milliseconds grace) {
    ShutdownReport report;
    Impl& impl = *impl_;
    if (impl.dispatcher == nullptr) {
        return report;
    }
    impl.stopAccepting();  // no new connections; the open ones go on
    Poco::Net::TCPServerDispatcher* dispatcher = impl.dispatcher;
    const auto open = static_cast<std::size_t>(dispatcher->currentConnections());
    // notifyStopped(false) waits for each connection's in-flight request before closing it, and
    // closes idle keep-alive connections at once. It has no deadline of its own, so it runs beside
    // us while we keep the clock; what outlives the grace period is cut off through the registry.
    std::atomic<bool> graceful{false};
    std::thread closer([&] {
        impl.handlers->notifyStopped(&impl, false);
        graceful = true;
    });
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline &&
           (!graceful.load() || dispatcher->currentConnections() > 0)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!graceful.load() || dispatcher->currentConnections() > 0) {
        report.aborted = impl.connections.shutdownAll();
    }
    closer.join();
    dispatcher->stop();
    impl.pool.joinAll();
    report.drained = open >= report.aborted ? open - report.aborted : 0;
    return report;
}

}  // namespace crank::http
