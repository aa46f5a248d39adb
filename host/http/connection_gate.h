#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include <Poco/Net/StreamSocket.h>

#include "http/auth_failure_throttle.h"
#include "http/client_socket.h"
#include "util/error.h"

namespace crank::http {

/// Limits of a ConnectionGate (the `server` keys of the same names, docs/configuration.md).
struct ConnectionGateOptions {
    std::size_t max_head_bytes = std::size_t{32} * 1024;  ///< larger heads: 431
    std::int64_t head_timeout_ms = 10'000;      ///< from a request's first byte to its head's end
    std::int64_t idle_timeout_ms = 30'000;      ///< a connection that sends nothing this long
    BodyPace body;                              ///< the body's deadline and minimum rate
    std::size_t read_ahead_body_bytes = 65536;  ///< bodies read before a worker is given
    std::uint64_t max_body_bytes = std::uint64_t{1}
                                   << 20;  ///< larger bodies are left to the worker (413)
    std::size_t max_connections = 4096;    ///< open connections in all
    std::size_t max_connections_per_address = 256;
    /// Addresses past their failed authentications get 429 once their head is in; null: none.
    std::shared_ptr<AuthFailureThrottle> auth_failures;
};

/// Holds every client connection of HttpServer that is not being served by a worker: from
/// accept() until its request's head (and its body, when it is small and has a Content-Length)
/// has arrived, and again between the requests of a keep-alive connection. One thread, one epoll
/// set, non-blocking sockets: a client that sends its request a byte at a time costs a few hundred
/// bytes here and no worker thread.
///
/// - Accepts from the listener, counting connections per client address and in all
///   (ConnectionCounter): beyond either bound the client gets 503 (or 429 for its own address's
///   bound) at once. When accept() fails for want of descriptors or memory, the listener is left
///   alone for a back-off that doubles up to a second, and the failure is logged once per period
///   with a count.
/// - Bounds each phase: nothing sent for idle_timeout_ms: closed; a head not complete within
///   head_timeout_ms of its first byte: 408; a head beyond max_head_bytes: 431; framing refused by
///   scanRequestHead (Content-Length with Transfer-Encoding, ...): 400 or 501; a body read ahead
///   past its deadline or below its rate: 408. Each answer is a JSON error naming the limit.
/// - Hands a ready request to `on_ready` (on the gate thread, the socket blocking again, its bytes
///   read ahead inside the ClientSocketImpl); `on_ready` returns false when no worker can take it
///   and the client gets 503 with Retry-After.
///
/// THREADING: readmit() and the counters may be called from any thread; start() and stop() from
/// one owning thread.
class ConnectionGate {
public:
    using Options = ConnectionGateOptions;
    using OnReady = std::function<bool(Poco::Net::StreamSocket&)>;

    ConnectionGate(const Options& options, OnReady on_ready);
    ~ConnectionGate();
    ConnectionGate(const ConnectionGate&) = delete;
    ConnectionGate& operator=(const ConnectionGate&) = delete;

    /// Starts accepting from `listen_fd` (a listening socket the caller keeps open until stop()
    /// returns; made non-blocking here). Fails with io when the kernel refuses the epoll set, the
    /// eventfd or the thread.
    Result<void> start(int listen_fd);

    /// Gives back a keep-alive connection whose response has been sent; bytes the worker read
    /// past that request are already back in its ClientSocketImpl (unread()). After stop(), the
    /// connection is closed.
    void readmit(const Poco::Net::StreamSocket& socket);

    /// The start of a graceful shutdown: stops accepting (the caller may close the listener once
    /// this returns) and closes the connections that wait between requests; the ones whose
    /// request has begun to arrive go on and are handed to `on_ready` when it is in.
    void drain();

    /// Stops accepting and closes every connection the gate holds; returns once its thread has
    /// ended, with the number of connections whose request had begun to arrive (cut off). Later
    /// calls do nothing and return 0.
    std::size_t stop();

    /// Connections refused: busy workers, or a connection bound.
    std::uint64_t refused() const;
    /// Connections cut for a deadline, a rate, a size or a framing.
    std::uint64_t rejected() const;
    /// Connections held by the gate now, with the ones given back (readmit()) it has yet to take.
    std::size_t held() const;
    /// accept() calls that failed for want of descriptors or memory (each followed by a pause).
    std::uint64_t acceptFailures() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace crank::http
