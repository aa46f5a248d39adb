#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocketImpl.h>
#include <Poco/Timespan.h>

#include "http/connection_counter.h"

namespace crank::http {

/// How fast a request body must arrive once its head is in (server.request_body_timeout_ms,
/// server.min_request_body_rate).
struct BodyPace {
    std::int64_t timeout_ms = 30'000;     ///< the whole body, from the end of the head
    std::int64_t min_bytes_per_s = 1024;  ///< on average, after the first second; 0: no minimum
};

/// One accepted client connection of HttpServer, as Poco's HTTP server reads and writes it.
///
/// - poll() is one poll(2) call: Poco's own creates, fills, waits on and closes an epoll set each
///   time, four system calls where one does.
/// - It carries the bytes ConnectionGate read ahead (the request head, often the body) and hands
///   them to Poco's session before anything from the kernel.
/// - While a request is on a worker, reads beyond those bytes are bounded by the body's pace: a
///   read that would wait past the body deadline, or a body arriving slower than the minimum
///   rate, fails with Poco::TimeoutException, so a slow body holds a worker for a bounded time.
/// - It holds the connection's place in ConnectionCounter until the socket is destroyed.
///
/// THREADING: used by one thread at a time (the gate's or a worker's); the hand-offs between them
/// go through locked queues.
class ClientSocketImpl final : public Poco::Net::StreamSocketImpl {
public:
    ClientSocketImpl(poco_socket_t fd, std::unique_ptr<ConnectionCounter::Slot> slot,
                     std::string peer);

    /// The client's IP address as text.
    const std::string& peer() const { return peer_; }

    /// Bytes read ahead and not yet handed to Poco (the gate appends to it).
    std::string& readAhead() { return read_ahead_; }
    std::size_t readAheadSize() const { return read_ahead_.size() - read_ahead_offset_; }
    /// The bytes read ahead and not yet handed to Poco.
    std::string_view unreadBytes() const {
        return std::string_view(read_ahead_).substr(read_ahead_offset_);
    }
    /// Puts `bytes` before whatever is still unread (a session's leftover buffer, given back).
    void unread(std::string_view bytes);

    /// From now on, reads from the kernel count against this pace; bytes_so_far were already
    /// read (by the gate) since the head ended.
    void startBody(BodyPace pace, std::chrono::steady_clock::time_point head_end,
                   std::uint64_t bytes_so_far);
    /// Back to an idle connection: no pace.
    void endBody() { pacing_ = false; }

    bool poll(const Poco::Timespan& timeout, int mode) override;
    int receiveBytes(void* buffer, int length, int flags = 0) override;
    int available() override;

    // Poco asks these of every request (a server session per request sets the receive timeout;
    // the request reads both addresses): the socket's own answers, kept, save three system calls
    // a request. An accepted connection's addresses never change; the timeout changes only here.
    void setReceiveTimeout(const Poco::Timespan& timeout) override;
    Poco::Timespan getReceiveTimeout() override;
    Poco::Net::SocketAddress address() override;
    Poco::Net::SocketAddress peerAddress() override;

private:
    /// Throws Poco::TimeoutException when the body is past its deadline or below its rate.
    void checkPace(std::chrono::steady_clock::time_point now) const;
    /// The longest a read may wait now, in ms (within the receive timeout).
    std::int64_t waitBudgetMs(std::chrono::steady_clock::time_point now);

    std::unique_ptr<ConnectionCounter::Slot> slot_;
    std::string peer_;
    std::string read_ahead_;
    std::size_t read_ahead_offset_ = 0;
    bool pacing_ = false;
    BodyPace pace_;
    std::chrono::steady_clock::time_point body_start_;
    std::uint64_t body_bytes_ = 0;
    std::optional<Poco::Timespan> receive_timeout_;
    std::optional<Poco::Net::SocketAddress> address_;
    std::optional<Poco::Net::SocketAddress> peer_address_;
};

}  // namespace crank::http
