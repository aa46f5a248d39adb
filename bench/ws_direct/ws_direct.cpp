// crank-ws-direct: the direct baseline of bench/run-websocket.sh, a WebSocket reader for
// crank-ws-fixture on Poco's WebSocket, the client the websocket plugin uses, so that the ratio
// crankd : direct isolates what Crank adds around the same reads.
//
//   crank-ws-direct --target 127.0.0.1:PORT [--count N] [--size P]
//       Connects to ws://TARGET/ticks?count=N&rate=0&size=P (rate 0: the fixture sends as fast
//       as it can) and reads the N ticks as fast as they come, then the fixture's close. Prints
//       "MESSAGES_PER_S BYTES_PER_S" (the messages' payload bytes, without framing) over the wall
//       time from the connect to the close. Every message is checked: a text frame holding
//       "seq":K with K one more than the previous tick's; exactly N of them, then a close 1000.
//
// Loopback targets only. Every read has a timeout (30 s), and at most N + 1 messages are read.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include <Poco/Buffer.h>
#include <Poco/Exception.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/WebSocket.h>
#include <Poco/Timespan.h>

namespace {

using Clock = std::chrono::steady_clock;
using Poco::Net::WebSocket;

constexpr long kReadTimeoutSeconds = 30;  // a fixture that stalls this long is an error
constexpr std::string_view kSeq = "\"seq\":";

struct Options {
    std::string host;
    Poco::UInt16 port = 0;
    long count = 200000;
    long size = 100;
};

long parseNumber(std::string_view name, const char* text, long min, long max) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < min || value > max) {
        throw std::runtime_error(std::string(name) + ": expected an integer in [" +
                                 std::to_string(min) + ", " + std::to_string(max) + "], got \"" +
                                 text + "\"");
    }
    return value;
}

Options parseOptions(int argc, char** argv) {
    Options options;
    std::string target;
    for (int i = 1; i < argc; i += 2) {
        const std::string_view flag = argv[i];
        if (i + 1 >= argc) {
            throw std::runtime_error(std::string(flag) + " needs a value");
        }
        const char* value = argv[i + 1];
        if (flag == "--target") {
            target = value;
        } else if (flag == "--count") {
            options.count = parseNumber(flag, value, 1, 100'000'000);
        } else if (flag == "--size") {
            options.size = parseNumber(flag, value, 0, 1 << 20);
        } else {
            throw std::runtime_error("unknown option " + std::string(flag));
        }
    }
    const auto colon = target.rfind(':');
    if (target.rfind("127.", 0) != 0 || colon == std::string::npos) {
        throw std::runtime_error("--target must be a loopback address 127.x.x.x:PORT, got \"" +
                                 target + "\"");
    }
    options.host = target.substr(0, colon);
    options.port = static_cast<Poco::UInt16>(
        parseNumber("--target port", target.c_str() + colon + 1, 1, 65535));
    return options;
}

/// The K of "seq":K in a tick, or -1 when there is none.
long long seqOf(std::string_view message) {
    const auto at = message.find(kSeq);
    if (at == std::string_view::npos) {
        return -1;
    }
    long long value = 0;
    bool digits = false;
    for (std::size_t i = at + kSeq.size(); i < message.size(); ++i) {
        const char c = message[i];
        if (c < '0' || c > '9') {
            break;
        }
        value = value * 10 + (c - '0');
        digits = true;
    }
    return digits ? value : -1;
}

int run(const Options& options) {
    const std::string path = "/ticks?count=" + std::to_string(options.count) +
                             "&rate=0&size=" + std::to_string(options.size);
    const auto started = Clock::now();
    Poco::Net::HTTPClientSession session(options.host, options.port);
    session.setTimeout(Poco::Timespan(kReadTimeoutSeconds, 0));
    Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_GET, path,
                                   Poco::Net::HTTPMessage::HTTP_1_1);
    Poco::Net::HTTPResponse response;
    WebSocket socket(session, request, response);
    socket.setReceiveTimeout(Poco::Timespan(kReadTimeoutSeconds, 0));

    long messages = 0;
    std::uint64_t bytes = 0;
    long long previous = -1;
    int closeCode = -1;
    Poco::Buffer<char> frame(0);
    while (messages <= options.count) {  // one message past N is an error
        int flags = 0;
        frame.resize(0);  // receiveFrame appends to the buffer
        const int n = socket.receiveFrame(frame, flags);
        const int opcode = flags & WebSocket::FRAME_OP_BITMASK;
        if (n == 0 && flags == 0) {
            break;  // the TCP connection ended without a close frame
        }
        if (opcode == WebSocket::FRAME_OP_PING) {
            socket.sendFrame(
                frame.begin(), n,
                WebSocket::FRAME_FLAG_FIN | static_cast<int>(WebSocket::FRAME_OP_PONG));
            continue;
        }
        if (opcode == WebSocket::FRAME_OP_CLOSE) {
            closeCode = n >= 2 ? (static_cast<unsigned char>(frame[0]) << 8) |
                                     static_cast<unsigned char>(frame[1])
                               : 0;
            socket.shutdown();
            break;
        }
        const std::string_view message(frame.begin(), static_cast<std::size_t>(n));
        const long long seq = seqOf(message);
        if (opcode != WebSocket::FRAME_OP_TEXT || (flags & WebSocket::FRAME_FLAG_FIN) == 0 ||
            seq < 0 || (previous >= 0 && seq != previous + 1)) {
            std::fprintf(stderr,
                         "crank-ws-direct: message %ld is not the next tick (flags 0x%x, seq %lld "
                         "after %lld): %.*s\n",
                         messages + 1, static_cast<unsigned>(flags), seq, previous,
                         static_cast<int>(std::min<std::size_t>(message.size(), 200)),
                         message.data());
            return 1;
        }
        previous = seq;
        ++messages;
        bytes += static_cast<std::uint64_t>(n);
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    if (messages != options.count || closeCode != WebSocket::WS_NORMAL_CLOSE) {
        std::fprintf(stderr, "crank-ws-direct: %ld messages of %ld, close code %d\n", messages,
                     options.count, closeCode);
        return 1;
    }
    std::printf("%.1f %.1f\n", static_cast<double>(messages) / elapsed,
                static_cast<double>(bytes) / elapsed);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parseOptions(argc, argv));
    } catch (const Poco::Exception& e) {
        std::fprintf(stderr, "crank-ws-direct: %s\n", e.displayText().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "crank-ws-direct: %s\n", e.what());
    }
    return 1;
}
