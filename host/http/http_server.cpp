#include "http/http_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/TCPServerConnectionFactory.h>
#include <Poco/Net/TCPServerDispatcher.h>
#include <Poco/ThreadPool.h>

#include "http/connection_gate.h"
#include "http/next_request.h"
#include "http/parked_workers.h"
#include "http/responses.h"
#include "http/worker_connection.h"
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

class WorkerConnectionFactory final : public Poco::Net::TCPServerConnectionFactory {
public:
    WorkerConnectionFactory(Poco::Net::HTTPServerParams::Ptr params,
                            Poco::Net::HTTPRequestHandlerFactory::Ptr factory, ConnectionHome& home)
        : params_(std::move(params)), factory_(std::move(factory)), home_(home) {}

    Poco::Net::TCPServerConnection* createConnection(
        const Poco::Net::StreamSocket& socket) override {
        return new WorkerConnection(socket, params_, factory_, home_);
    }

private:
    Poco::Net::HTTPServerParams::Ptr params_;
    Poco::Net::HTTPRequestHandlerFactory::Ptr factory_;
    ConnectionHome& home_;
};

ConnectionGateOptions gateOptions(const config::ServerConfig& c) {
    ConnectionGateOptions o;
    o.max_head_bytes = static_cast<std::size_t>(c.max_request_head_bytes);
    o.head_timeout_ms = c.request_head_timeout_ms;
    o.idle_timeout_ms = c.idle_connection_timeout_ms;
    o.body.timeout_ms = c.request_body_timeout_ms;
    o.body.min_bytes_per_s = c.min_request_body_rate;
    o.read_ahead_body_bytes = static_cast<std::size_t>(c.read_ahead_body_bytes);
    o.max_body_bytes = static_cast<std::uint64_t>(c.max_request_body_bytes);
    o.max_connections = static_cast<std::size_t>(c.max_connections);
    o.max_connections_per_address = static_cast<std::size_t>(c.max_connections_per_address);
    if (c.max_auth_failures > 0) {
        o.auth_failures = std::make_shared<AuthFailureThrottle>(
            static_cast<std::size_t>(c.max_auth_failures),
            std::chrono::milliseconds(c.auth_failure_window_ms));
    }
    return o;
}

/// After the grace period, how long cancelled requests get to answer before their connections
/// are cut.
constexpr std::chrono::milliseconds kCancelledAnswerWait{2000};
/// How long the workers get to end after their connections were cut.
constexpr std::chrono::milliseconds kWorkerJoinWait{3000};

}  // namespace

struct HttpServer::Impl final : ConnectionHome {
    config::ServerConfig config;
    std::shared_ptr<const Router> router;
    ConnectionRegistry connections;
    Poco::ThreadPool pool;
    Poco::SharedPtr<RouterFactory> handlers;
    Poco::Net::ServerSocket listener;
    // Poco's TCPServer would accept here too, but it silently drops connections beyond its queue
    // and gives every connection a worker from its first byte; the gate accepts instead, holds
    // each connection until its request is in, and answers the ones beyond the queue with 503.
    Poco::Net::TCPServerDispatcher* dispatcher = nullptr;  // reference-counted by Poco
    std::unique_ptr<ConnectionGate> gate;
    std::atomic<bool> stop_flag{false};
    config::ListenAddress bound;
    /// shutdown() gave up waiting for some worker: the destructor must not free what it uses.
    bool workers_stuck = false;

    Impl(const config::ServerConfig& c, std::shared_ptr<const Router> r)
        // A worker serves one request at a time; the pool is the bound on requests in progress.
        : config(c), router(std::move(r)), pool("crank-http", 2, c.threads + 1) {}

    /// The dispatcher's own rule for dropping a connection: its queue is full (whether or not its
    /// workers have started yet).
    bool saturated() const { return dispatcher->queuedConnections() >= config.queue; }

    void opened(const void* key, const Poco::Net::StreamSocket& socket) override {
        serving.fetch_add(1);
        pending.fetch_sub(1);
        connections.add(key, socket);
    }
    void closed(const void* key) override {
        connections.remove(key);
        serving.fetch_sub(1);
    }
    void keepAlive(const Poco::Net::StreamSocket& socket) override {
        // Also while stopping: a worker may give back a connection whose next request has begun
        // to arrive (its head half read), and a drain serves such a request. The gate closes the
        // idle ones, and every connection once it has stopped.
        if (gate) {
            gate->readmit(socket);
        }
    }
    bool stopping() const override { return stop_flag.load(); }
    Next takeNextRequest(ClientSocketImpl& client) override {
        // A connection waiting for a worker goes first when every worker is taken (the
        // dispatcher starts a thread for it otherwise): this one goes back to the gate.
        const std::chrono::microseconds wait(config.keep_alive_wait_us);
        if (stop_flag.load() || workerWanted() || wait.count() <= 0) {
            return Next::to_gate;
        }
        const auto idle_since = std::chrono::steady_clock::now();
        if (client.readAheadSize() > 0) {
            // Bytes of a next request already read (pipelined behind the last one): served at
            // once when they hold its head, or left to the gate.
            if (awaitNextRequest(client, gate_options, wait)) {
                ++kept_on_worker;
                return Next::serve;
            }
            return Next::to_gate;
        }
        // Nothing yet: park on the connection until it has bytes, another connection needs this
        // worker, or the idle timeout, after which the gate would close it too. Parked, the
        // worker can be taken back the moment another connection needs it; a timed wait before
        // parking would only add a wake-up (its timer) to every request that comes later.
        const ParkedWorkers::Wake wake =
            parked.park(client.sockfd(),
                        idle_since + std::chrono::milliseconds(config.idle_connection_timeout_ms),
                        [this] { return stop_flag.load() || workerWanted(); });
        if (wake == ParkedWorkers::Wake::timeout) {
            return Next::close;
        }
        if (wake == ParkedWorkers::Wake::readable && !stop_flag.load() && !workerWanted() &&
            awaitNextRequest(client, gate_options, wait)) {
            ++kept_on_worker;
            return Next::serve;
        }
        return Next::to_gate;
    }
    void authenticationFailed(const std::string& peer) override {
        if (auth_failures) {
            auth_failures->failed(peer);
        }
    }
    std::shared_ptr<AuthFailureThrottle> auth_failures;
    ConnectionGateOptions gate_options;  ///< the gate's bounds, which the fast path applies too
    std::atomic<std::uint64_t> kept_on_worker{0};
    // Connections being served by a worker, and connections handed to the dispatcher that no
    // worker has taken yet: together above `threads`, some connection waits for a worker.
    std::atomic<int> serving{0};
    std::atomic<int> pending{0};
    bool workerWanted() const { return serving.load() + pending.load() > config.threads; }
    ParkedWorkers parked;  ///< workers waiting on their idle keep-alive connections

    void stopGate() {
        if (gate) {
            gate->stop();
        }
        try {
            listener.close();
        } catch (const Poco::Exception&) {
            // Already closed.
        }
    }

    ~Impl() override {
        stop_flag = true;
        parked.close();
        stopGate();
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

HttpServer::~HttpServer() {
    if (impl_ && impl_->workers_stuck) {
        // A worker still runs a request that ignored its cancellation: it may still touch the
        // server, and Poco's pool would wait for it. The process is about to exit.
        (void)impl_.release();  // NOLINT(bugprone-unused-return-value): deliberate leak
    }
}

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
    impl_->handlers = new RouterFactory(impl_->router);
    impl_->dispatcher = new Poco::Net::TCPServerDispatcher(
        new WorkerConnectionFactory(params, impl_->handlers, *impl_), impl_->pool, params);
    ConnectionGateOptions options = gateOptions(c);
    impl_->auth_failures = options.auth_failures;  // the workers report failures to the gate's
    impl_->gate_options = options;
    impl_->gate = std::make_unique<ConnectionGate>(std::move(options),
                                                   [impl](Poco::Net::StreamSocket& ready) {
                                                       if (impl->saturated()) {
                                                           return false;
                                                       }
                                                       impl->pending.fetch_add(1);
                                                       try {
                                                           impl->dispatcher->enqueue(ready);
                                                       } catch (...) {
                                                           impl->pending.fetch_sub(1);
                                                           throw;
                                                       }
                                                       if (impl->workerWanted()) {
                                                           // every worker is taken: one idle
                                                           // on its connection gives it up
                                                           impl->parked.wakeOne();
                                                       }
                                                       return true;
                                                   });
    return impl_->gate->start(socket.impl()->sockfd());
}

std::uint64_t HttpServer::requestsKeptOnWorker() const {
    return impl_->kept_on_worker.load();
}

config::ListenAddress HttpServer::boundAddress() const {
    return impl_->bound;
}

std::uint64_t HttpServer::refusedConnections() const {
    return impl_->gate ? impl_->gate->refused() : 0;
}

std::uint64_t HttpServer::rejectedConnections() const {
    return impl_->gate ? impl_->gate->rejected() : 0;
}

std::uint64_t HttpServer::acceptFailures() const {
    return impl_->gate ? impl_->gate->acceptFailures() : 0;
}

ShutdownReport HttpServer::shutdown(std::chrono::milliseconds grace,
                                    const std::function<void()>& on_grace_over) {
    ShutdownReport report;
    Impl& impl = *impl_;
    if (impl.dispatcher == nullptr) {
        return report;
    }
    // No new connections, and the idle ones close at once. Requests that have begun to arrive
    // are still read and served within the grace period, and their connections then close
    // instead of going back to the gate.
    impl.stop_flag = true;
    impl.parked.close();  // parked workers hand their idle connections back, which then close
    if (impl.gate) {
        impl.gate->drain();
    }
    try {
        impl.listener.close();
    } catch (const Poco::Exception&) {
        // Already closed.
    }
    Poco::Net::TCPServerDispatcher* dispatcher = impl.dispatcher;
    // The server's own counts, not only the dispatcher's: between a queued connection's dequeue
    // and its start, the dispatcher counts it nowhere, and a drain that ended there would stop
    // the pool under a request the gate has just handed over.
    const auto busy = [&impl, dispatcher] {
        return impl.pending.load() + impl.serving.load() > 0 ||
               dispatcher->currentConnections() + dispatcher->queuedConnections() > 0;
    };
    const std::size_t open = static_cast<std::size_t>(dispatcher->currentConnections()) +
                             (impl.gate ? impl.gate->held() : 0);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    // Quiet twice in a row, 10 ms apart: the two counts are read one after the other, and a
    // connection the gate is handing to a worker right then can be missed by both reads once.
    const auto quiet = [&] { return !busy() && !(impl.gate && impl.gate->held() > 0); };
    for (int quiet_polls = 0; quiet_polls < 2 && std::chrono::steady_clock::now() < deadline;) {
        quiet_polls = quiet() ? quiet_polls + 1 : 0;
        if (quiet_polls < 2) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    if (!quiet() && on_grace_over) {
        // Requests still running are told to end (their upstream calls cancelled), and get a
        // moment to answer before their connections are cut.
        on_grace_over();
        const auto answered = std::chrono::steady_clock::now() + kCancelledAnswerWait;
        while (busy() && std::chrono::steady_clock::now() < answered) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    report.aborted = impl.gate ? impl.gate->stop() : 0;
    if (busy()) {
        report.aborted += impl.connections.shutdownAll();
    }
    dispatcher->stop();
    // The workers end as their requests do: a request that ignores both the cancellation and
    // its cut connection is not waited for beyond kWorkerJoinWait.
    const auto joined = std::chrono::steady_clock::now() + kWorkerJoinWait;
    while (impl.pool.used() > 0 && std::chrono::steady_clock::now() < joined) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    report.drained = open >= report.aborted ? open - report.aborted : 0;
    report.stuck = static_cast<std::size_t>(std::max(impl.pool.used(), 0));
    if (report.stuck > 0) {
        impl.workers_stuck = true;  // the destructor leaves what they use in place
        return report;
    }
    impl.pool.joinAll();
    return report;
}

}  // namespace crank::http
