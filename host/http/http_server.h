#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "config/config.h"
#include "http/router.h"
#include "util/error.h"

namespace crank::http {

/// What a shutdown did: how many connections ended on their own, and how many had to be cut off
/// because they outlived the grace period.
struct ShutdownReport {
    std::size_t drained = 0;
    std::size_t aborted = 0;
    /// Workers still running a request when shutdown() stopped waiting for them.
    std::size_t stuck = 0;
};

/// crankd's HTTP listener: Poco's HTTP request parsing and handlers, with a thread pool of its
/// own, behind a ConnectionGate.
///
/// Binds exactly the configured address, without SO_REUSEPORT (Poco 1.11 turns it on by default,
/// which would let a second crankd share the port silently). Requests are dispatched by path
/// through a Router; unknown paths get a JSON 404.
///
/// A worker (server.threads) serves one request at a time and holds nothing else: the gate holds
/// connections while their heads (and small bodies) arrive and between keep-alive requests, with
/// deadlines and per-address bounds, so slow or idle clients cannot take the workers. Saturation
/// is explicit: a request that is ready while every worker is busy and server.queue requests wait
/// is answered 503 with Retry-After at once. Open SSE streams hold no worker (see
/// StreamReactor).
class HttpServer {
public:
    HttpServer(const config::ServerConfig& config, std::shared_ptr<const Router> router);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    /// Binds and starts serving. Fails with ErrorCode::unavailable when the address is in use or
    /// cannot be bound, with a message that names the address and the reason.
    Result<void> start();

    /// The bound address (with the kernel's port when the configured port was 0).
    config::ListenAddress boundAddress() const;

    /// Connections answered 503 or 429 at once: every worker busy and the queue full, or a
    /// connection bound (server.max_connections, server.max_connections_per_address) reached.
    std::uint64_t refusedConnections() const;
    /// Connections cut for a deadline, a minimum rate, a size or a framing of their request.
    std::uint64_t rejectedConnections() const;
    /// accept() calls that failed for want of descriptors or memory.
    std::uint64_t acceptFailures() const;
    /// Requests a worker served right after the connection's previous one, without the gate
    /// (server.keep_alive_wait_us, http/next_request.h).
    std::uint64_t requestsKeptOnWorker() const;

    /// Stops accepting connections, lets in-flight requests finish within `grace`, then shuts down
    /// whatever is still open. Idle keep-alive connections are closed at once. When requests are
    /// still running at the end of `grace`, `on_grace_over` (when given) is called to tell them
    /// to end (cancel what they wait on), and they get 2 s to answer before their connections
    /// are cut; the workers then get 3 s more to end, and those that do not are left running
    /// (counted in `stuck`; the server is not freed then). Call once.
    ShutdownReport shutdown(std::chrono::milliseconds grace,
                            const std::function<void()>& on_grace_over = {});

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace crank::http
