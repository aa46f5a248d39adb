#include "ws_connection.h"

#include <algorithm>
#include <limits>

#include <Poco/Buffer.h>
#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/WebSocket.h>

#include <crank/sdk/error.hpp>

namespace crank::ws {
namespace {

using Clock = std::chrono::steady_clock;
using Poco::Net::WebSocket;
using sdk::ErrorCode;

// Reads wait in slices this long, so that heartbeats and the caller's checks keep their pace.
constexpr auto kSlice = std::chrono::milliseconds(100);
// How long the rest of a frame may take once its first byte came.
constexpr auto kFrameTimeout = std::chrono::milliseconds(30'000);

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts) {
        out += (out.empty() ? "" : ", ") + p;
    }
    return out;
}

Poco::Timespan span(std::chrono::milliseconds ms) {
    return Poco::Timespan(static_cast<Poco::Timespan::TimeDiff>(ms.count()) * 1000);
}

}  // namespace

WsConnection::WsConnection(const WsConfig& config, const Headers& headers) : config_(config) {
    const std::string where = config_.url;
    Poco::Net::HTTPResponse response;
    try {
        if (config_.secure) {
            // verify: the chain against the CAs (the system's or ca_file) and the host name.
            const auto mode = config_.tls_verify ? Poco::Net::Context::VERIFY_RELAXED
                                                 : Poco::Net::Context::VERIFY_NONE;
            Poco::Net::Context::Params params;
            params.verificationMode = mode;
            params.caLocation = config_.tls_ca_file;
            params.loadDefaultCAs = config_.tls_ca_file.empty();
            Poco::Net::Context::Ptr context(
                new Poco::Net::Context(Poco::Net::Context::TLS_CLIENT_USE, params));
            session_ = std::make_unique<Poco::Net::HTTPSClientSession>(config_.host, config_.port,
                                                                       context);
        } else {
            session_ = std::make_unique<Poco::Net::HTTPClientSession>(config_.host, config_.port);
        }
        session_->setTimeout(span(std::chrono::milliseconds(config_.connect_timeout_ms)));
        Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_GET, config_.path_and_query,
                                       Poco::Net::HTTPMessage::HTTP_1_1);
        for (const auto& [name, value] : headers) {
            request.add(name, value);
        }
        if (!config_.subprotocols.empty()) {
            request.set("Sec-WebSocket-Protocol", join(config_.subprotocols));
        }
        socket_ = std::make_unique<WebSocket>(*session_, request, response);
        subprotocol_ = response.get("Sec-WebSocket-Protocol", "");
    } catch (const Poco::Net::WebSocketException& e) {
        if (e.code() == WebSocket::WS_ERR_NO_HANDSHAKE ||
            e.code() == WebSocket::WS_ERR_UNAUTHORIZED) {
            throw sdk::Error(
                ErrorCode::upstream,
                "the upstream refused the WebSocket handshake at " + where + ": HTTP " +
                    std::to_string(static_cast<int>(response.getStatus())) + " " +
                    response.getReason(),
                "{\"http_status\":" + std::to_string(static_cast<int>(response.getStatus())) + "}");
        }
        throw sdk::Error(ErrorCode::protocol,
                         "the WebSocket handshake with " + where + " failed: " + e.displayText());
    } catch (const Poco::TimeoutException&) {
        throw sdk::Error(ErrorCode::timeout,
                         "no WebSocket handshake answer from " + where + " within " +
                             std::to_string(config_.connect_timeout_ms) + " ms");
    } catch (const Poco::Net::SSLException& e) {
        throw sdk::Error(ErrorCode::unavailable,
                         "TLS with " + where + " failed: " + e.displayText());
    } catch (const Poco::Exception& e) {
        throw sdk::Error(ErrorCode::unavailable,
                         "cannot connect to " + where + ": " + e.displayText());
    }
    const bool offered = std::find(config_.subprotocols.begin(), config_.subprotocols.end(),
                                   subprotocol_) != config_.subprotocols.end();
    if (!config_.subprotocols.empty() && !offered) {
        const std::string why =
            subprotocol_.empty()
                ? "accepted none of the offered subprotocols (" + join(config_.subprotocols) + ")"
                : "chose the subprotocol \"" + subprotocol_ +
                      "\", which was not offered (offered: " + join(config_.subprotocols) + ")";
        close(std::chrono::milliseconds(200));
        throw sdk::Error(ErrorCode::protocol, "the upstream at " + where + " " + why);
    }
    if (config_.subprotocols.empty() && !subprotocol_.empty()) {
        close(std::chrono::milliseconds(200));
        throw sdk::Error(ErrorCode::protocol, "the upstream at " + where +
                                                  " chose the subprotocol \"" + subprotocol_ +
                                                  "\" though none was offered");
    }
    // A frame that has begun must complete within this (read() polls for the first byte).
    socket_->setReceiveTimeout(span(kFrameTimeout));
    socket_->setMaxPayloadSize(static_cast<int>(
        std::min<std::int64_t>(config_.max_message_bytes, std::numeric_limits<int>::max())));
    last_received_ = Clock::now();
    next_ping_ = last_received_ + std::chrono::milliseconds(config_.heartbeat_interval_ms);
}

WsConnection::~WsConnection() {
    if (socket_) {
        try {
            socket_->close();
        } catch (...) {  // NOLINT(bugprone-empty-catch): closing a broken socket
        }
    }
}

void WsConnection::send(std::string_view text) {
    try {
        const int sent =
            socket_->sendFrame(text.data(), static_cast<int>(text.size()), WebSocket::FRAME_TEXT);
        if (sent < 0) {
            throw sdk::Error(ErrorCode::unavailable,
                             "the WebSocket to " + config_.url + " is closed");
        }
    } catch (const Poco::Exception& e) {
        throw sdk::Error(ErrorCode::unavailable,
                         "cannot send to " + config_.url + ": " + e.displayText());
    }
}

void WsConnection::sendControl(int opcode, std::string_view payload) {
    try {
        socket_->sendFrame(payload.data(), static_cast<int>(payload.size()),
                           WebSocket::FRAME_FLAG_FIN | opcode);
    } catch (const Poco::Exception& e) {
        throw sdk::Error(ErrorCode::unavailable,
                         "cannot send to " + config_.url + ": " + e.displayText());
    }
}

WsConnection::Event WsConnection::read(Message& out, std::chrono::milliseconds wait) {
    if (closed_) {
        return Event::closed;
    }
    const auto deadline = Clock::now() + wait;
    Poco::Buffer<char> frame(0);
    while (true) {
        const auto now = Clock::now();
        if (config_.heartbeat_interval_ms > 0) {
            // Measured from the first ping nothing has come back after: the later pings must
            // not move the mark, or a silent peer would never be noticed.
            if (ping_outstanding_ &&
                now - ping_sent_at_ >= std::chrono::milliseconds(config_.heartbeat_timeout_ms)) {
                throw sdk::Error(ErrorCode::unavailable,
                                 "the upstream at " + config_.url + " answered no ping within " +
                                     std::to_string(config_.heartbeat_timeout_ms) +
                                     " ms: the connection is dead");
            }
            if (now >= next_ping_) {
                sendControl(WebSocket::FRAME_OP_PING, "crank");
                ++pings_sent_;
                if (!ping_outstanding_) {
                    ping_sent_at_ = now;
                    ping_outstanding_ = true;
                }
                next_ping_ = now + std::chrono::milliseconds(config_.heartbeat_interval_ms);
            }
        }
        if (now >= deadline) {
            return Event::idle;
        }
        auto slice = std::min<std::chrono::steady_clock::duration>(deadline - now, kSlice);
        if (config_.heartbeat_interval_ms > 0) {
            slice = std::min<std::chrono::steady_clock::duration>(slice, next_ping_ - now);
        }
        slice = std::max<std::chrono::steady_clock::duration>(slice, std::chrono::milliseconds(1));
        int flags = 0;
        int n = 0;
        frame.resize(0);
        try {
            // Wait for the first byte of a frame with poll(), never with a receive timeout: a
            // timeout in the middle of a frame would lose the bytes read so far. TLS may hold
            // decrypted bytes the socket no longer shows as readable: available() counts them.
            if (socket_->available() <= 0 &&
                !socket_->poll(span(std::chrono::duration_cast<std::chrono::milliseconds>(slice)),
                               Poco::Net::Socket::SELECT_READ)) {
                continue;
            }
            n = socket_->receiveFrame(frame, flags);
        } catch (const Poco::TimeoutException&) {
            closed_ = true;
            throw sdk::Error(ErrorCode::unavailable, "the upstream at " + config_.url +
                                                         " stalled in the middle of a frame "
                                                         "for " +
                                                         std::to_string(kFrameTimeout.count()) +
                                                         " ms");
        } catch (const Poco::Net::WebSocketException& e) {
            if (e.code() == WebSocket::WS_ERR_PAYLOAD_TOO_BIG) {
                throw sdk::Error(ErrorCode::resource_exhausted,
                                 "the upstream at " + config_.url +
                                     " sent a frame larger than max_message_bytes (" +
                                     std::to_string(config_.max_message_bytes) +
                                     "); the connection cannot go on after it");
            }
            throw sdk::Error(ErrorCode::protocol, "the upstream at " + config_.url +
                                                      " sent a malformed frame: " + e.message());
        } catch (const Poco::Exception& e) {
            closed_ = true;
            throw sdk::Error(ErrorCode::unavailable,
                             "the connection to " + config_.url + " failed: " + e.displayText());
        }
        if (n == 0 && flags == 0) {  // the TCP connection ended
            closed_ = true;
            return Event::closed;
        }
        last_received_ = Clock::now();
        ping_outstanding_ = false;  // anything at all shows the peer is alive
        const int opcode = flags & WebSocket::FRAME_OP_BITMASK;
        const bool fin = (flags & WebSocket::FRAME_FLAG_FIN) != 0;
        const std::string_view payload(frame.begin(), static_cast<std::size_t>(n));
        switch (opcode) {
            case WebSocket::FRAME_OP_PING:
                sendControl(WebSocket::FRAME_OP_PONG, payload);
                continue;
            case WebSocket::FRAME_OP_PONG:
                ++pongs_received_;
                continue;
            case WebSocket::FRAME_OP_CLOSE:
                if (payload.size() >= 2) {
                    close_code_ =
                        static_cast<std::uint16_t>((static_cast<unsigned char>(payload[0]) << 8) |
                                                   static_cast<unsigned char>(payload[1]));
                    close_reason_ = std::string(payload.substr(2));
                }
                if (!close_sent_) {
                    close_sent_ = true;
                    try {
                        socket_->shutdown(
                            close_code_ == 0 ? static_cast<Poco::UInt16>(WebSocket::WS_NORMAL_CLOSE)
                                             : close_code_);
                    } catch (...) {  // NOLINT(bugprone-empty-catch): the peer may be gone
                    }
                }
                closed_ = true;
                return Event::closed;
            case WebSocket::FRAME_OP_TEXT:
            case WebSocket::FRAME_OP_BINARY:
                in_message_ = true;
                dropping_ = false;
                partial_binary_ = opcode == WebSocket::FRAME_OP_BINARY;
                partial_.clear();
                break;
            case WebSocket::FRAME_OP_CONT:
                if (!in_message_) {
                    throw sdk::Error(ErrorCode::protocol,
                                     "the upstream at " + config_.url +
                                         " sent a continuation frame outside a message");
                }
                break;
            default:
                throw sdk::Error(ErrorCode::protocol, "the upstream at " + config_.url +
                                                          " sent a frame with unknown opcode " +
                                                          std::to_string(opcode));
        }
        if (!dropping_) {
            if (partial_.size() + payload.size() >
                static_cast<std::size_t>(config_.max_message_bytes)) {
                dropping_ = true;
                partial_.clear();
                partial_.shrink_to_fit();
            } else {
                partial_.append(payload);
            }
        }
        if (!fin) {
            continue;
        }
        in_message_ = false;
        if (dropping_) {
            dropping_ = false;
            ++dropped_oversize_;
            continue;
        }
        out.binary = partial_binary_;
        out.data.swap(partial_);
        partial_.clear();
        return Event::message;
    }
}

void WsConnection::close(std::chrono::milliseconds wait, bool going_away) noexcept {
    if (!socket_ || closed_) {
        return;
    }
    try {
        if (!close_sent_) {
            close_sent_ = true;
            socket_->shutdown(going_away ? WebSocket::WS_ENDPOINT_GOING_AWAY
                                         : WebSocket::WS_NORMAL_CLOSE);
        }
        const auto deadline = Clock::now() + wait;
        Poco::Buffer<char> frame(0);
        while (Clock::now() < deadline) {
            int flags = 0;
            frame.resize(0);
            socket_->setReceiveTimeout(span(std::chrono::milliseconds(50)));
            int n = 0;
            try {
                n = socket_->receiveFrame(frame, flags);
            } catch (const Poco::TimeoutException&) {
                continue;
            }
            if ((n == 0 && flags == 0) ||
                (flags & WebSocket::FRAME_OP_BITMASK) == WebSocket::FRAME_OP_CLOSE) {
                break;
            }
        }
    } catch (...) {  // NOLINT(bugprone-empty-catch): the peer may be gone already
    }
    closed_ = true;
}

}  // namespace crank::ws
