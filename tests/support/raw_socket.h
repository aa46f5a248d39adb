#pragma once

// Raw loopback sockets for tests: an owned descriptor, connected pairs, connections to a port
// (from any 127.0.0.0/8 source address), and reads that are always bounded in time.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace crank::testing {

using namespace std::chrono_literals;

/// Bound for anything a test waits on; generous, because a loaded CI machine is slow, and only
/// reached when something is broken.
inline constexpr std::chrono::milliseconds kWait = 10s;

/// Owns a descriptor; closes it on destruction unless released.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(Fd&& other) noexcept : fd_(other.release()) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset(other.release());
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    int get() const { return fd_; }
    int release() { return std::exchange(fd_, -1); }
    void reset(int fd = -1);

private:
    int fd_ = -1;
};

/// Two connected stream sockets: `server` goes to the reactor, the test reads `client`.
struct SocketPair {
    Fd server;
    Fd client;
};

/// An AF_UNIX pair. `buffer` > 0 shrinks the server end's send buffer and the client end's
/// receive buffer, so that the kernel takes little and bytes pile up in the reactor.
SocketPair unixPair(int buffer = 0);

/// A TCP connection over 127.0.0.1, both ends in this process; `buffer` as for unixPair().
SocketPair tcpPair(int buffer = 0);

/// A TCP connection to 127.0.0.1:`port` (blocking). Throws std::runtime_error on failure.
Fd connectLoopback(std::uint16_t port);

/// The same from the source address `source` (e.g. "127.0.0.2"), as another client host would.
Fd connectLoopbackFrom(const char* source, std::uint16_t port);

/// Writes all of `bytes`, blocking. Throws std::runtime_error on failure.
void writeAll(int fd, std::string_view bytes);

/// What a bounded read saw.
struct ReadResult {
    std::string bytes;
    bool eof = false;    ///< the peer closed (EOF or reset)
    bool reset = false;  ///< ECONNRESET in particular
};

/// Reads until `buffer` contains `needle` (returning true), EOF or the timeout. Bytes read are
/// appended to `buffer`.
bool readUntil(int fd, std::string& buffer, std::string_view needle,
               std::chrono::milliseconds timeout = kWait);

/// Reads until `count` bytes have been read, EOF, or the timeout.
ReadResult readBytes(int fd, std::size_t count, std::chrono::milliseconds timeout = kWait);

/// Reads everything until EOF or the timeout (eof false on timeout).
ReadResult readToEof(int fd, std::chrono::milliseconds timeout = kWait);

/// Reads what arrives within `window`, without waiting for more; eof if the peer closed.
ReadResult readFor(int fd, std::chrono::milliseconds window);

}  // namespace crank::testing
