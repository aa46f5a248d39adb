#include "http/client_socket.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <Poco/Exception.h>
#include <Poco/Net/Socket.h>

#include "http/poll_until.h"

namespace crank::http {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t msBetween(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

}  // namespace

ClientSocketImpl::ClientSocketImpl(poco_socket_t fd, std::unique_ptr<ConnectionCounter::Slot> slot,
                                   std::string peer)
    : StreamSocketImpl(fd), slot_(std::move(slot)), peer_(std::move(peer)) {}

void ClientSocketImpl::unread(std::string_view bytes) {
    if (bytes.empty()) {
        return;
    }
    read_ahead_.erase(0, read_ahead_offset_);
    read_ahead_offset_ = 0;
    read_ahead_.insert(0, bytes);
}

void ClientSocketImpl::startBody(BodyPace pace, Clock::time_point head_end,
                                 std::uint64_t bytes_so_far) {
    pacing_ = true;
    pace_ = pace;
    body_start_ = head_end;
    body_bytes_ = bytes_so_far;
}

bool ClientSocketImpl::poll(const Poco::Timespan& timeout, int mode) {
    if ((mode & Poco::Net::Socket::SELECT_READ) != 0 && readAheadSize() > 0) {
        return true;
    }
    short events = 0;
    if ((mode & Poco::Net::Socket::SELECT_READ) != 0) {
        events |= POLLIN;
    }
    if ((mode & Poco::Net::Socket::SELECT_WRITE) != 0) {
        events |= POLLOUT;
    }
    if ((mode & Poco::Net::Socket::SELECT_ERROR) != 0) {
        events |= POLLPRI;
    }
    const int rc = pollUntil(sockfd(), events,
                             Clock::now() + std::chrono::microseconds(timeout.totalMicroseconds()));
    if (rc < 0) {
        error(errno);  // throws, as Poco's poll() does
    }
    return rc > 0;
}

int ClientSocketImpl::available() {
    return static_cast<int>(readAheadSize()) + StreamSocketImpl::available();
}

void ClientSocketImpl::checkPace(Clock::time_point now) const {
    const std::int64_t elapsed = msBetween(body_start_, now);
    if (elapsed >= pace_.timeout_ms) {
        throw Poco::TimeoutException(
            "the request body did not arrive within "
            "server.request_body_timeout_ms (" +
            std::to_string(pace_.timeout_ms) + " ms)");
    }
    // After a first second of grace, the body must have come at the minimum rate on average.
    if (pace_.min_bytes_per_s > 0 && elapsed > 1000 &&
        body_bytes_ * 1000 < static_cast<std::uint64_t>(pace_.min_bytes_per_s) *
                                 static_cast<std::uint64_t>(elapsed - 1000)) {
        throw Poco::TimeoutException(
            "the request body arrives slower than "
            "server.min_request_body_rate (" +
            std::to_string(pace_.min_bytes_per_s) + " bytes/s)");
    }
}

std::int64_t ClientSocketImpl::waitBudgetMs(Clock::time_point now) {
    std::int64_t budget = pace_.timeout_ms - msBetween(body_start_, now);
    if (pace_.min_bytes_per_s > 0) {
        // The moment the bytes so far stop meeting the rate.
        const auto covered = static_cast<std::int64_t>(
            1000 + body_bytes_ * 1000 / static_cast<std::uint64_t>(pace_.min_bytes_per_s));
        budget = std::min(budget, covered - msBetween(body_start_, now) + 1);
    }
    const Poco::Timespan receive = getReceiveTimeout();
    if (receive.totalMilliseconds() > 0) {
        budget = std::min<std::int64_t>(budget, receive.totalMilliseconds());
    }
    return std::max<std::int64_t>(budget, 0);
}

int ClientSocketImpl::receiveBytes(void* buffer, int length, int flags) {
    if (const std::size_t ahead = readAheadSize(); ahead > 0 && length > 0) {
        const std::size_t n = std::min(ahead, static_cast<std::size_t>(length));
        std::memcpy(buffer, read_ahead_.data() + read_ahead_offset_, n);
        if ((flags & MSG_PEEK) == 0) {
            read_ahead_offset_ += n;
            if (read_ahead_offset_ == read_ahead_.size()) {
                read_ahead_.clear();
                read_ahead_offset_ = 0;
            }
        }
        return static_cast<int>(n);
    }
    if (pacing_ && getBlocking()) {
        auto now = Clock::now();
        checkPace(now);
        // An error (rc < 0) is left to the read that follows, which reports it.
        if (pollUntil(sockfd(), POLLIN, now + std::chrono::milliseconds(waitBudgetMs(now))) == 0) {
            now = Clock::now();
            checkPace(now);
            // Within the pace, but the receive timeout ran out: as Poco's own read would.
            throw Poco::TimeoutException("no bytes from the client within the read timeout");
        }
    }
    const int n = StreamSocketImpl::receiveBytes(buffer, length, flags);
    if (pacing_ && n > 0) {
        body_bytes_ += static_cast<std::uint64_t>(n);
    }
    return n;
}

void ClientSocketImpl::setReceiveTimeout(const Poco::Timespan& timeout) {
    if (receive_timeout_ != timeout) {
        StreamSocketImpl::setReceiveTimeout(timeout);
        receive_timeout_ = timeout;
    }
}

Poco::Timespan ClientSocketImpl::getReceiveTimeout() {
    if (!receive_timeout_) {
        receive_timeout_ = StreamSocketImpl::getReceiveTimeout();
    }
    return *receive_timeout_;
}

Poco::Net::SocketAddress ClientSocketImpl::address() {
    if (!address_) {
        address_ = StreamSocketImpl::address();
    }
    return *address_;
}

Poco::Net::SocketAddress ClientSocketImpl::peerAddress() {
    if (!peer_address_) {
        peer_address_ = StreamSocketImpl::peerAddress();
    }
    return *peer_address_;
}

}  // namespace crank::http
