// Fuzz target websocket: what a WebSocket upstream sends after the handshake, as the websocket
// plugin's connection (plugins/websocket/ws_connection.h) reads it through Poco::Net::WebSocket.
//
// Input: one byte of settings, then the bytes the server sends right after its handshake answer
// (frames as the server writes them: any opcode, fragmentation, masking, lengths, close codes).
//   settings bits 0-1: max_message_bytes (16, 125, 4096, or the plugin's default 1 MiB);
//   bit 2: the connection offers the subprotocol "v1" and the server selects it.
// Per input, a server thread on a loopback socket (bound once) accepts the connection, answers
// the handshake, writes the bytes, ends its side (FIN) and reads whatever the client sends until
// the client closes. The client side reads until the peer closes, the connection throws, or a
// bounded number of reads. Checks: every message fits max_message_bytes; nothing is read after
// "closed"; errors are sdk::Error with a message.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include <Poco/Base64Encoder.h>
#include <Poco/SHA1Engine.h>

#include "fuzz_support.h"
#include "ws_config.h"
#include "ws_connection.h"
#include <crank/sdk/error.hpp>
#include <netinet/in.h>
#include <sys/socket.h>

namespace {

using crank::fuzz::check;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kMaxMessageBytes[] = {16, 125, 4096,
                                             crank::ws::WsDefaults::max_message_bytes};
constexpr auto kServerTimeout = std::chrono::seconds(5);
constexpr int kMaxReads = 10'000;

/// A loopback listening socket, bound once for the whole run.
class Listener {
public:
    Listener() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        check(fd_ >= 0, "socket() failed");
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;
        check(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0,
              "bind() to 127.0.0.1 failed");
        check(::listen(fd_, 16) == 0, "listen() failed");
        socklen_t length = sizeof address;
        check(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0,
              "getsockname() failed");
        port_ = ntohs(address.sin_port);
    }
    ~Listener() { ::close(fd_); }
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    Listener(Listener&&) = delete;
    Listener& operator=(Listener&&) = delete;

    int fd() const { return fd_; }
    std::uint16_t port() const { return port_; }

private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
};

/// Waits for `events` on `fd` until `deadline`; false on timeout.
bool waitFor(int fd, short events, Clock::time_point deadline) {
    while (true) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            return false;
        }
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(left.count()));
        if (n > 0) {
            return true;
        }
        if (n < 0 && errno != EINTR) {
            return false;
        }
    }
}

/// The value of the Sec-WebSocket-Key header of a request, or "".
std::string keyOf(const std::string& request) {
    std::string lower = request;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    constexpr std::string_view kName = "\r\nsec-websocket-key:";
    const std::size_t at = lower.find(kName);
    if (at == std::string::npos) {
        return {};
    }
    std::size_t begin = at + kName.size();
    const std::size_t end = request.find("\r\n", begin);
    while (begin < end && request[begin] == ' ') {
        ++begin;
    }
    return request.substr(begin, end - begin);
}

/// RFC 6455: base64(SHA-1(key + GUID)).
std::string acceptOf(const std::string& key) {
    Poco::SHA1Engine sha1;
    sha1.update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    const Poco::DigestEngine::Digest& digest = sha1.digest();
    std::ostringstream out;
    Poco::Base64Encoder encoder(out);
    encoder.write(reinterpret_cast<const char*>(digest.data()),
                  static_cast<std::streamsize>(digest.size()));
    encoder.close();
    return out.str();
}

bool sendAll(int fd, std::string_view bytes, Clock::time_point deadline) {
    while (!bytes.empty()) {
        if (!waitFor(fd, POLLOUT, deadline)) {
            return false;
        }
        const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;  // the client closed: it refused what it read
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

/// One connection of the server thread: handshake, `frames`, FIN, then read until the client
/// closes. Gives up on anything unexpected: the client side decides the outcome.
void serve(int listener, std::string_view frames, bool subprotocol) {
    const auto deadline = Clock::now() + kServerTimeout;
    if (!waitFor(listener, POLLIN, deadline)) {
        return;
    }
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
        return;
    }
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65'536) {
        if (!waitFor(fd, POLLIN, deadline)) {
            break;
        }
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) {
            break;
        }
        request.append(buffer, static_cast<std::size_t>(n));
    }
    const std::string key = keyOf(request);
    if (!key.empty()) {
        std::string answer =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: " +
            acceptOf(key) + "\r\n";
        if (subprotocol) {
            answer += "Sec-WebSocket-Protocol: v1\r\n";
        }
        answer += "\r\n";
        answer.append(frames);
        (void)sendAll(fd, answer, deadline);
    }
    ::shutdown(fd, SHUT_WR);
    while (waitFor(fd, POLLIN, deadline)) {
        if (::recv(fd, buffer, sizeof buffer, 0) <= 0) {
            break;
        }
    }
    ::close(fd);
}

void runClient(std::uint16_t port, std::int64_t max_message_bytes, bool subprotocol) {
    crank::ws::WsConfig config;
    config.url = "ws://127.0.0.1:" + std::to_string(port) + "/";
    config.host = "127.0.0.1";
    config.port = port;
    config.path_and_query = "/";
    config.connect_timeout_ms = 5'000;
    config.heartbeat_interval_ms = 0;  // no pings: the reads depend on the input alone
    config.max_message_bytes = max_message_bytes;
    if (subprotocol) {
        config.subprotocols = {"v1"};
    }
    try {
        crank::ws::WsConnection connection(config, {});
        check(connection.subprotocol() == (subprotocol ? "v1" : ""), "the wrong subprotocol");
        crank::ws::WsConnection::Message message;
        bool closed = false;
        for (int i = 0; i < kMaxReads && !closed; ++i) {
            switch (connection.read(message, std::chrono::milliseconds(1'000))) {
                case crank::ws::WsConnection::Event::message:
                    check(message.data.size() <= static_cast<std::size_t>(max_message_bytes),
                          "a message larger than max_message_bytes");
                    break;
                case crank::ws::WsConnection::Event::idle:
                    break;  // the server is slow (a loaded machine): read on
                case crank::ws::WsConnection::Event::closed:
                    closed = true;
                    check(connection.read(message, std::chrono::milliseconds(1)) ==
                              crank::ws::WsConnection::Event::closed,
                          "a read after the peer closed did not say closed");
                    break;
            }
        }
        connection.close(std::chrono::milliseconds(100));
    } catch (const crank::sdk::Error& e) {
        check(std::strlen(e.what()) > 0, "an error without a message");
    }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const Listener listener;
    if (size == 0) {
        return 0;
    }
    const unsigned settings = data[0];
    const std::string_view frames = crank::fuzz::asText(data + 1, size - 1);
    const std::int64_t max_message_bytes = kMaxMessageBytes[settings & 3U];
    const bool subprotocol = (settings & 4U) != 0;
    std::thread server(serve, listener.fd(), frames, subprotocol);
    runClient(listener.port(), max_message_bytes, subprotocol);
    server.join();
    return 0;
}
