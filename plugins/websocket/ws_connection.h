// plugins/websocket: one client WebSocket connection over Poco (ws:// and wss://), with messages
// reassembled from fragments, pings answered, heartbeats sent and a dead peer noticed.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ws_config.h"

namespace Poco::Net {
class HTTPClientSession;
class WebSocket;
}  // namespace Poco::Net

namespace crank::ws {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// A connected WebSocket. One thread uses it at a time (the stream's or the call's).
class WsConnection {
public:
    /// Connects, sends `headers` (the config's and the auth profile's) and the offered
    /// subprotocols, and completes the handshake within connect_timeout_ms. Throws sdk::Error:
    /// unavailable (cannot connect, TLS), timeout (no handshake answer in time), upstream (the
    /// handshake was refused: the HTTP status is named), protocol (the upstream chose a
    /// subprotocol that was not offered, or none of those offered).
    WsConnection(const WsConfig& config, const Headers& headers);
    ~WsConnection();
    WsConnection(const WsConnection&) = delete;
    WsConnection& operator=(const WsConnection&) = delete;
    WsConnection(WsConnection&&) = delete;
    WsConnection& operator=(WsConnection&&) = delete;

    /// One data message.
    struct Message {
        bool binary = false;
        std::string data;
    };
    enum class Event {
        message,  ///< `out` holds a whole message
        idle,     ///< nothing complete within `wait`
        closed,   ///< the peer closed (a close frame, answered, or the TCP connection)
    };

    /// Reads until one whole data message arrives, `wait` passes, or the peer closes. Answers
    /// the peer's pings, sends a ping every heartbeat_interval_ms and throws
    /// sdk::Error(unavailable) when nothing at all came back within heartbeat_timeout_ms of one.
    /// A fragmented message over max_message_bytes is dropped (counted); a single frame over it
    /// cannot be skipped and throws sdk::Error(resource_exhausted).
    Event read(Message& out, std::chrono::milliseconds wait);

    /// Sends one text message.
    void send(std::string_view text);

    /// The close handshake: a close frame (1000, or 1001 with `going_away`), then up to `wait`
    /// for the peer's. Never throws.
    void close(std::chrono::milliseconds wait, bool going_away = false) noexcept;

    /// What the peer said when it closed: its status code (0: none, or a dropped connection)
    /// and reason.
    std::uint16_t closeCode() const { return close_code_; }
    const std::string& closeReason() const { return close_reason_; }
    /// The subprotocol the upstream selected ("" when none was offered).
    const std::string& subprotocol() const { return subprotocol_; }
    /// Messages dropped because their fragments added up to more than max_message_bytes.
    std::uint64_t droppedOversize() const { return dropped_oversize_; }
    std::uint64_t pingsSent() const { return pings_sent_; }
    std::uint64_t pongsReceived() const { return pongs_received_; }

private:
    void sendControl(int opcode, std::string_view payload);

    WsConfig config_;
    std::unique_ptr<Poco::Net::HTTPClientSession> session_;
    std::unique_ptr<Poco::Net::WebSocket> socket_;
    std::string subprotocol_;
    bool closed_ = false;
    bool close_sent_ = false;
    std::uint16_t close_code_ = 0;
    std::string close_reason_;

    // Reassembly of a fragmented message.
    std::string partial_;
    bool partial_binary_ = false;
    bool in_message_ = false;
    bool dropping_ = false;

    std::chrono::steady_clock::time_point last_received_;
    std::chrono::steady_clock::time_point next_ping_;
    std::chrono::steady_clock::time_point ping_sent_at_{};
    bool ping_outstanding_ = false;
    std::uint64_t dropped_oversize_ = 0;
    std::uint64_t pings_sent_ = 0;
    std::uint64_t pongs_received_ = 0;
};

}  // namespace crank::ws
