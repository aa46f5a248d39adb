#include "raw_socket.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <system_error>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace crank::testing {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error(what + ": " + std::generic_category().message(errno));
}

/// Waits up to `remaining` for `fd` to be readable; false on timeout.
bool waitReadable(int fd, Clock::duration remaining) {
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(remaining).count();
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(ms, 0)));
    return ready > 0;
}

/// One read; appends to `out`. Returns false when the peer closed (EOF or reset).
bool readOnce(int fd, std::string& out, ReadResult* result) {
    char buffer[65536];
    const ssize_t got = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got > 0) {
        out.append(buffer, static_cast<std::size_t>(got));
        return true;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        return true;
    }
    if (result != nullptr) {
        result->reset = got < 0 && errno == ECONNRESET;
    }
    return false;
}

}  // namespace

void Fd::reset(int fd) {
    if (fd_ >= 0) {
        ::close(fd_);
    }
    fd_ = fd;
}

SocketPair unixPair(int buffer) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        fail("socketpair");
    }
    SocketPair pair{Fd(fds[0]), Fd(fds[1])};
    if (buffer > 0) {
        ::setsockopt(pair.server.get(), SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
        ::setsockopt(pair.client.get(), SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    }
    return pair;
}

SocketPair tcpPair(int buffer) {
    Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listener.get() < 0) {
        fail("socket");
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener.get(), 1) != 0 ||
        ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &size) != 0) {
        fail("listen on 127.0.0.1");
    }
    SocketPair pair;
    pair.client = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (buffer > 0) {
        ::setsockopt(pair.client.get(), SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
    }
    if (::connect(pair.client.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) !=
        0) {
        fail("connect");
    }
    pair.server = Fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (pair.server.get() < 0) {
        fail("accept");
    }
    if (buffer > 0) {
        ::setsockopt(pair.server.get(), SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
    }
    return pair;
}

namespace {

/// A connection to 127.0.0.1:`port`, from `source` when it is not null.
Fd connectTo(std::uint16_t port, const char* source) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) {
        fail("socket");
    }
    if (source != nullptr) {
        sockaddr_in from{};
        from.sin_family = AF_INET;
        if (::inet_pton(AF_INET, source, &from.sin_addr) != 1 ||
            ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0) {
            fail(std::string("bind to ") + source);
        }
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
        fail("connect to 127.0.0.1:" + std::to_string(port));
    }
    return fd;
}

}  // namespace

Fd connectLoopbackFrom(const char* source, std::uint16_t port) {
    return connectTo(port, source);
}

Fd connectLoopback(std::uint16_t port) {
    return connectTo(port, nullptr);
}

void writeAll(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) {
            continue;
        }
        if (sent <= 0) {
            fail("send");
        }
        bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
}

bool readUntil(int fd, std::string& buffer, std::string_view needle,
               std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (buffer.find(needle) == std::string::npos) {
        const auto now = Clock::now();
        if (now >= deadline || !waitReadable(fd, deadline - now)) {
            return false;
        }
        if (!readOnce(fd, buffer, nullptr)) {
            return buffer.find(needle) != std::string::npos;
        }
    }
    return true;
}

ReadResult readBytes(int fd, std::size_t count, std::chrono::milliseconds timeout) {
    ReadResult result;
    const auto deadline = Clock::now() + timeout;
    while (result.bytes.size() < count) {
        const auto now = Clock::now();
        if (now >= deadline || !waitReadable(fd, deadline - now)) {
            break;
        }
        if (!readOnce(fd, result.bytes, &result)) {
            result.eof = true;
            break;
        }
    }
    return result;
}

ReadResult readToEof(int fd, std::chrono::milliseconds timeout) {
    ReadResult result;
    const auto deadline = Clock::now() + timeout;
    while (true) {
        const auto now = Clock::now();
        if (now >= deadline || !waitReadable(fd, deadline - now)) {
            return result;
        }
        if (!readOnce(fd, result.bytes, &result)) {
            result.eof = true;
            return result;
        }
    }
}

ReadResult readFor(int fd, std::chrono::milliseconds window) {
    return readToEof(fd, window);
}

}  // namespace crank::testing
