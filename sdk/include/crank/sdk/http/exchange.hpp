#pragma once

// HTTP/1.1 exchanges over pooled keep-alive connections: the request written, the response head
// parsed (bounded), the body unframed (Content-Length, chunked, or until close) and decoded
// (gzip, deflate), every wait bounded by a deadline and interruptible.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <crank/sdk/http/connection.hpp>
#include <crank/sdk/http/url.hpp>

namespace crank::sdk::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
    std::string method = "GET";
    Url url;
    HeaderList headers;  ///< without Host, Content-Length, Connection (the client adds them)
    std::optional<std::string> body;
    /// The request may be sent again when a reused keep-alive connection turns out closed before
    /// any byte of the answer (GET, HEAD, PUT, DELETE and OPTIONS always may; a POST only when
    /// the caller knows it is safe, like a GraphQL query).
    bool replayable = false;
    /// The addresses a connection for this request may go to (a redirect hop to another origin:
    /// redirect_policy.hpp); empty: any. A pooled connection to an address it refuses is not
    /// reused.
    AddressCheck address_check;
};

struct ResponseHead {
    int status = 0;
    std::string reason;
    int minor_version = 1;
    HeaderList headers;  ///< names lowercased, in arrival order

    /// The first value of header `lower_name`, or nullptr.
    const std::string* header(std::string_view lower_name) const;
};

/// Idle keep-alive connections, per pool key, bounded per key and in all.
class ConnectionPool {
public:
    static constexpr std::size_t kMaxIdleTotal = 1024;

    /// An idle connection for `key` that is still usable and younger than `idle_timeout`, or
    /// nullptr. Idle connections of any key older than the idle timeout they were given with are
    /// closed on the way.
    std::unique_ptr<Connection> take(const std::string& key, Clock::duration idle_timeout);
    /// Keeps `connection` for reuse, for at most `idle_timeout`, when fewer than `max_idle` idle
    /// ones for its key (and fewer than kMaxIdleTotal in all) are kept; otherwise it is closed.
    /// Idle connections of any key older than the idle timeout they were given with are closed.
    void give(std::unique_ptr<Connection> connection, std::size_t max_idle,
              Clock::duration idle_timeout = std::chrono::seconds(30));

    std::size_t idleCount() const;
    std::uint64_t opened() const;
    void countOpened();

private:
    struct Idle {
        std::unique_ptr<Connection> connection;
        Clock::time_point expires;  ///< when it went idle plus the idle timeout it was given with
    };
    /// Moves the expired idle connections (of every key) to `out` when one may have expired.
    void sweepLocked(Clock::time_point now, std::vector<std::unique_ptr<Connection>>& out);

    mutable std::mutex mutex_;
    std::map<std::string, std::deque<Idle>> idle_;
    std::size_t total_ = 0;
    Clock::time_point next_expiry_ = Clock::time_point::max();  ///< the earliest `expires`
    std::uint64_t opened_ = 0;
};

/// Deadlines of one exchange.
struct ExchangeDeadlines {
    Clock::time_point connect;  ///< TCP connect and TLS handshake
    Clock::time_point headers;  ///< the end of the response head
    Clock::time_point total;    ///< the end of the body
};

/// What went wrong in an exchange, with the phase it was in (for the message).
class ExchangeFailure : public std::exception {
public:
    enum class Phase { connect, headers, body };
    ExchangeFailure(Phase phase, TransportError error) : phase_(phase), error_(std::move(error)) {}
    Phase phase() const noexcept { return phase_; }
    const TransportError& error() const noexcept { return error_; }
    const char* what() const noexcept override { return error_.detail.c_str(); }

private:
    Phase phase_;
    TransportError error_;
};

struct ExchangeOptions {
    TlsOptions tls;
    bool decompress = true;     ///< decode gzip / deflate bodies
    std::size_t max_idle = 16;  ///< keep-alive: idle connections kept per upstream
    Clock::duration idle_timeout = std::chrono::seconds(30);
    std::size_t max_head_bytes = std::size_t{64} * 1024;  ///< status line plus headers
    std::string user_agent = "crank/1.0";  ///< sent when the request has no User-Agent
};

/// One request and its response. Not thread-safe except interrupt().
class HttpExchange {
public:
    HttpExchange(ConnectionPool& pool, ExchangeOptions options);
    ~HttpExchange();
    HttpExchange(const HttpExchange&) = delete;
    HttpExchange& operator=(const HttpExchange&) = delete;
    HttpExchange(HttpExchange&&) = delete;
    HttpExchange& operator=(HttpExchange&&) = delete;

    /// Sends `request` (on a pooled connection when there is one: a reused connection that turns
    /// out closed is replaced once, for idempotent methods) and reads the response head (1xx
    /// answers are skipped). Throws ExchangeFailure.
    const ResponseHead& start(const HttpRequest& request, const ExchangeDeadlines& deadlines,
                              const CancelCheck& cancel);

    /// The head read by start().
    const ResponseHead& head() const { return head_; }

    /// Reads decoded body bytes; 0 at the end of the body. Throws ExchangeFailure (phase body),
    /// with kind `io` for a malformed body (chunked framing, compressed data).
    std::size_t readBody(char* buffer, std::size_t size, Clock::time_point deadline,
                         const CancelCheck& cancel);

    /// Ends the exchange: a connection whose response was read to its end and may be kept alive
    /// goes back to the pool; any other is closed.
    void finish();

    /// Wakes a blocked read from another thread (it then fails as cancelled). Thread-safe.
    void interrupt() noexcept;

    /// True when the connection had carried an earlier request (for tests and logs).
    bool reusedConnection() const { return reused_; }

private:
    struct Body;
    std::size_t readFramed(char* buffer, std::size_t size, Clock::time_point deadline,
                           const CancelCheck& cancel);
    bool fill(Clock::time_point deadline, const CancelCheck& cancel);
    void readHead(const std::string& method, Clock::time_point deadline, const CancelCheck& cancel);
    void dropConnection();

    ConnectionPool& pool_;
    ExchangeOptions options_;
    std::mutex connection_mutex_;  // guards connection_ against interrupt()
    std::unique_ptr<Connection> connection_;
    bool interrupted_ = false;
    ResponseHead head_;
    std::string buffer_;      // bytes read and not consumed yet
    std::size_t offset_ = 0;  // consumed bytes at the front of buffer_
    std::unique_ptr<Body> body_;
    bool reused_ = false;
};

}  // namespace crank::sdk::http
