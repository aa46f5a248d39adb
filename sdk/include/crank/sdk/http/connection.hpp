#pragma once

// One HTTP/1.1 connection to an upstream (TCP, or TLS over it), with every wait bounded by a
// deadline and interruptible from another thread. Crank's own client (the REST and GraphQL plugins
// use it): it keeps full control of timeouts (connect, headers, total), framing and byte limits.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <crank/sdk/http/url.hpp>

namespace Poco::Net {
class StreamSocket;
}

namespace crank::sdk::http {

using Clock = std::chrono::steady_clock;

/// TLS settings of a connection (part of the pool key).
struct TlsOptions {
    bool verify = true;
    std::string ca_file;  ///< empty: the system's CAs
};

/// Why a transport step failed. The client turns these into the plugin's error messages.
struct TransportError {
    enum class Kind {
        refused,    ///< connection refused
        dns,        ///< host name not found
        tls,        ///< TLS handshake or certificate failure
        timeout,    ///< the deadline passed
        cancelled,  ///< the call was cancelled (or the connection interrupted)
        closed,     ///< the peer closed the connection
        io,         ///< any other socket error
    };
    Kind kind;
    std::string detail;
};

/// Thrown by Connection; carries a TransportError.
class TransportFailure : public std::exception {
public:
    explicit TransportFailure(TransportError error) : error_(std::move(error)) {}
    const TransportError& error() const noexcept { return error_; }
    const char* what() const noexcept override { return error_.detail.c_str(); }

private:
    TransportError error_;
};

/// Returns true when the caller wants the current wait to stop (checked between slices).
using CancelCheck = std::function<bool()>;

/// The addresses `host` (a name, or an IP literal, which is its own) resolves to, as text (IPv6
/// without brackets): the lookup Connection::open() makes, bounded by `deadline`. Throws
/// TransportFailure (dns, timeout, cancelled).
std::vector<std::string> resolveHost(const std::string& host, Clock::time_point deadline,
                                     const CancelCheck& cancel);

/// Whether a connection may go to `address` (text, as resolveHost() gives it): nullopt when it
/// may, else why not. Applied to the very addresses a connect uses, after the lookup, so that a
/// name that resolves one way when it is checked and another way when it is connected to (DNS
/// rebinding) cannot slip past the check (redirect_policy.hpp).
using AddressCheck = std::function<std::optional<std::string>(const std::string& address)>;

class Connection {
public:
    /// Connects to `url`'s host and port (and completes the TLS handshake for https) before
    /// `deadline`. With a `check`, only to the addresses it lets through: when it refuses every
    /// address the host resolves to, fails as `refused`, with the check's reason. Throws
    /// TransportFailure.
    static std::unique_ptr<Connection> open(const Url& url, const TlsOptions& tls,
                                            Clock::time_point deadline, const CancelCheck& cancel,
                                            const AddressCheck& check = {});
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    Connection(Connection&&) = delete;
    Connection& operator=(Connection&&) = delete;

    /// Sends all of `bytes` before `deadline`.
    void sendAll(std::string_view bytes, Clock::time_point deadline, const CancelCheck& cancel);
    /// Reads what is there (at least one byte) into `buffer`; 0 when the peer closed. Throws
    /// TransportFailure on timeout, cancel or error.
    std::size_t readSome(char* buffer, std::size_t size, Clock::time_point deadline,
                         const CancelCheck& cancel);

    /// Wakes a read or write blocked on another thread (it fails as `cancelled`) and makes every
    /// later one fail. Safe from any thread while the connection exists.
    void interrupt() noexcept;

    /// An idle connection that became readable (closed by the peer, or unexpected bytes) cannot
    /// be reused.
    bool usableWhenIdle() const;

    const std::string& poolKey() const { return pool_key_; }
    /// The address connected to (text, as resolveHost() gives it).
    const std::string& peerAddress() const { return peer_address_; }
    Clock::time_point idleSince() const { return idle_since_; }
    void markIdle() { idle_since_ = Clock::now(); }
    /// How many requests this connection has carried (1 for a fresh one).
    std::uint64_t uses() const { return uses_; }
    void countUse() { ++uses_; }

private:
    Connection();
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::string pool_key_;
    std::string peer_address_;
    Clock::time_point idle_since_{};
    std::uint64_t uses_ = 0;
};

/// The pool key of `url` with `tls`: connections are only shared between equal keys.
std::string poolKey(const Url& url, const TlsOptions& tls);

}  // namespace crank::sdk::http
