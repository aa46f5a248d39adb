#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
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
};

/// crankd's HTTP listener, on Poco's HTTPServer with a thread pool of its own.
///
/// Binds exactly the configured address, without SO_REUSEPORT (Poco 1.11 turns it on by default,
/// which would let a second crankd share the port silently). Requests are dispatched by path
/// through a Router; unknown paths get a JSON 404.
///
/// Saturation is explicit: a connection that arrives while every worker (server.threads) holds a
/// connection and server.queue connections wait is answered 503 with Retry-After at once, and
/// keep-alive is refused while fewer than a quarter of the workers are free, so that idle
/// keep-alive clients cannot starve new requests. Open SSE streams hold no worker (see
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

    /// Connections answered 503 because every worker was busy and the queue was full.
    std::uint64_t refusedConnections() const;

    /// Stops accepting connections, lets in-flight requests finish within `grace`, then shuts down
    /// whatever is still open. Idle keep-alive connections are closed at once. Call once.
    ShutdownReport shutdown(std::chrono::milliseconds grace);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace crank::http
