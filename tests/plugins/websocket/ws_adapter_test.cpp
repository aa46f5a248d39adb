// The WebSocket adapter through the SDK's FakeHost (the C ABI, as crankd drives it) against the
// real crank-ws-fixture: streams (items, subscribe and unsubscribe, text, binary, fragments,
// oversize), heartbeats and a dead peer, reconnect and resubscribe, handshake failures, and jobs
// over a progress channel. Loopback only; the fixture is stopped by pid when the suite ends.
#include "ws_adapter.h"

#include <chrono>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <Poco/Base64Encoder.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/StreamSocket.h>
#include <Poco/SHA1Engine.h>
#include <Poco/StreamCopier.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "test_json.h"
#include <crank/sdk.hpp>
#include <crank/testing/fake_host.hpp>

CRANK_PLUGIN_NAMED(wsAdapterTestEntry, "websocket", "1.0.0", "the WebSocket plugin, for its tests",
                   crank::ws::registerWsPlugin);

namespace crank::ws {
namespace {

using crank::testing::CallResult;
using crank::testing::ChildProcess;
using crank::testing::eventually;
using crank::testing::FakeHost;
using crank::testing::parseJsonOrFail;
using crank::testing::RequestSpec;
using crank::testing::StreamOptions;
using crank::testing::UnaryOptions;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

class WsAdapterTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        fixture_ = std::make_unique<ChildProcess>(
            std::vector<std::string>{CRANK_WS_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
        const std::optional<std::uint16_t> port = fixture_->waitForListeningPort(10s);
        ASSERT_TRUE(port) << fixture_->stderrText();
        port_ = *port;
    }
    static void TearDownTestSuite() { fixture_.reset(); }

    void SetUp() override {
        ASSERT_TRUE(fixture_) << "the fixture did not start";
        host_ = std::make_unique<FakeHost>(&wsAdapterTestEntry);
        ASSERT_TRUE(host_->loaded()) << host_->initError();
    }

    static std::string url(const std::string& path) {
        return "ws://127.0.0.1:" + std::to_string(port_) + path;
    }

    /// The fixture's counter `name` from GET /stats.
    static std::int64_t stat(const char* name) {
        Poco::Net::HTTPClientSession session("127.0.0.1", port_);
        session.setTimeout(Poco::Timespan(5, 0));
        Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_GET, "/stats",
                                       Poco::Net::HTTPMessage::HTTP_1_1);
        session.sendRequest(request);
        Poco::Net::HTTPResponse response;
        std::string body;
        Poco::StreamCopier::copyToString(session.receiveResponse(response), body);
        const rapidjson::Document doc = parseJsonOrFail(body);
        const auto it = doc.FindMember(name);
        return it != doc.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : -1;
    }

    CallResult stream(const std::string& config, StreamOptions options = {}) {
        RequestSpec spec;
        spec.config_json = config;
        spec.request_json = config;
        return host_->runStream("websocket", spec, options);
    }

    static std::unique_ptr<ChildProcess> fixture_;
    static std::uint16_t port_;
    std::unique_ptr<FakeHost> host_;
};

std::unique_ptr<ChildProcess> WsAdapterTest::fixture_;
std::uint16_t WsAdapterTest::port_ = 0;

std::int64_t seqOf(const std::string& item) {
    const rapidjson::Document doc = parseJsonOrFail(item);
    return doc.IsObject() && doc.HasMember("seq") ? doc["seq"].GetInt64() : -1;
}

TEST_F(WsAdapterTest, AStreamEndsCleanlyWithEveryMessageInOrder) {
    const CallResult r = stream(R"({"url":")" + url("/ticks?count=20&rate=0") + R"("})");
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    ASSERT_EQ(r.items.size(), 20U);
    for (std::size_t i = 0; i < r.items.size(); ++i) {
        EXPECT_EQ(seqOf(r.items[i]), static_cast<std::int64_t>(i + 1));
    }
}

TEST_F(WsAdapterTest, TheHostEndingTheStreamUnsubscribesAndClosesCleanly) {
    const auto subscribes = stat("subscribes");
    const auto unsubscribes = stat("unsubscribes");
    const auto clean = stat("clean_closes");
    StreamOptions options;
    options.max_items = 10;
    const CallResult r =
        stream(R"({"url":")" + url("/ticks?count=0&rate=200&subscribe=1") +
                   R"(","subscribe_message_template":{"op":"subscribe","channel":"c7"},
                                    "unsubscribe_message_template":{"op":"unsubscribe"}})",
               options);
    ASSERT_EQ(r.items.size(), 10U);
    EXPECT_THAT(r.items[0], HasSubstr(R"("channel":"c7")"));
    EXPECT_TRUE(eventually(
        [&] {
            return stat("subscribes") == subscribes + 1 &&
                   stat("unsubscribes") == unsubscribes + 1 && stat("clean_closes") == clean + 1;
        },
        5s))
        << "subscribes " << stat("subscribes") - subscribes << ", unsubscribes "
        << stat("unsubscribes") - unsubscribes << ", clean closes " << stat("clean_closes") - clean;
}

TEST_F(WsAdapterTest, TextIsWrappedBinaryIsCountedFragmentsAreJoined) {
    const CallResult r =
        stream(R"({"url":")" + url("/ticks?count=12&rate=0&text_every=3&binary_every=4") + R"("})");
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    std::size_t texts = 0;
    for (const std::string& item : r.items) {
        if (item.find(R"({"text":"plain text)") == 0) {
            ++texts;
        }
    }
    EXPECT_GT(texts, 0U);
    EXPECT_LT(r.items.size(), 12U);  // the binary ones are not items
    const CallResult fragments =
        stream(R"({"url":")" + url("/ticks?count=10&rate=0&fragment=4&fragment_ping=1&size=300") +
               R"("})");
    ASSERT_TRUE(fragments.ok()) << (fragments.error ? fragments.error->message : "");
    ASSERT_EQ(fragments.items.size(), 10U);
    EXPECT_EQ(seqOf(fragments.items[9]), 10);
}

TEST_F(WsAdapterTest, AnOversizedFragmentedMessageIsDroppedAndTheStreamGoesOn) {
    const CallResult r =
        stream(R"({"url":")" +
               url("/ticks?count=10&rate=0&fragment=4&oversize_every=5&oversize_bytes=20000") +
               R"(","max_message_bytes":8000})");
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    EXPECT_EQ(r.items.size(), 8U);  // messages 5 and 10 were over the limit
    // Unfragmented, the frame itself is over the limit: the connection cannot go on.
    const CallResult frame =
        stream(R"({"url":")" + url("/ticks?count=10&rate=0&oversize_every=5&oversize_bytes=20000") +
               R"(","max_message_bytes":8000})");
    EXPECT_EQ(frame.items.size(), 4U);
    ASSERT_TRUE(frame.error);
    EXPECT_EQ(frame.error->code, sdk::ErrorCode::resource_exhausted);
}

TEST_F(WsAdapterTest, ADeadPeerIsNoticedByTheHeartbeat) {
    const auto start = Clock::now();
    StreamOptions options;
    options.timeout = 10s;
    const CallResult r = stream(R"({"url":")" + url("/ticks?count=0&rate=100&silent_after=3") +
                                    R"(","heartbeat_interval_ms":100,"heartbeat_timeout_ms":300})",
                                options);
    EXPECT_LT(Clock::now() - start, 5s);
    EXPECT_EQ(r.items.size(), 3U);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::unavailable);
    EXPECT_THAT(r.error->message, HasSubstr("answered no ping"));
}

TEST_F(WsAdapterTest, PingsAreAnsweredAndSent) {
    const auto pongs = stat("pongs_received");
    const auto pings = stat("pings_received");
    const CallResult r = stream(R"({"url":")" + url("/ticks?count=15&rate=50&ping_ms=30") +
                                R"(","heartbeat_interval_ms":50})");
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    EXPECT_GT(stat("pongs_received"), pongs);
    EXPECT_GT(stat("pings_received"), pings);
}

TEST_F(WsAdapterTest, ADroppedConnectionIsReconnectedAndResubscribed) {
    const auto subscribes = stat("subscribes");
    StreamOptions options;
    options.max_items = 12;
    const CallResult r =
        stream(R"({"url":")" +
                   url("/ticks?count=0&rate=200&subscribe=1&drop_after=5&drop_times=1&key=k1") +
                   R"(","subscribe_message_template":{"op":"subscribe","channel":"r"},
            "reconnect":{"attempts":3,"initial_backoff_ms":20}})",
               options);
    EXPECT_EQ(r.items.size(), 12U);
    EXPECT_EQ(stat("subscribes"), subscribes + 2);
    // Without reconnect the drop ends the stream with what it read.
    const CallResult once = stream(
        R"({"url":")" + url("/ticks?count=0&rate=200&drop_after=5&drop_times=1&key=k2") + R"("})");
    EXPECT_EQ(once.items.size(), 5U);
    ASSERT_TRUE(once.error);
    EXPECT_EQ(once.error->code, sdk::ErrorCode::unavailable);
    EXPECT_THAT(once.error->message, HasSubstr("dropped the connection"));
}

TEST_F(WsAdapterTest, HandshakeFailuresSayWhy) {
    const CallResult refused = stream(R"({"url":")" + url("/refuse") + R"("})");
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, sdk::ErrorCode::upstream);
    EXPECT_THAT(refused.error->message, HasSubstr("HTTP 403"));
    const CallResult wrong = stream(R"({"url":")" + url("/ticks?count=1&subprotocol=crank.v1") +
                                    R"(","subprotocols":["crank.v2"]})");
    ASSERT_TRUE(wrong.error);
    EXPECT_EQ(wrong.error->code, sdk::ErrorCode::protocol);
    EXPECT_THAT(wrong.error->message, HasSubstr("crank.v1"));
    EXPECT_THAT(wrong.error->message, HasSubstr("crank.v2"));
    const auto start = Clock::now();
    const CallResult slow =
        stream(R"({"url":")" + url("/slow-handshake?ms=3000") + R"(","connect_timeout_ms":300})");
    EXPECT_LT(Clock::now() - start, 2500ms);
    ASSERT_TRUE(slow.error);
    EXPECT_EQ(slow.error->code, sdk::ErrorCode::timeout);
    const CallResult closed = stream(R"({"url":"ws://127.0.0.1:1/x"})");
    ASSERT_TRUE(closed.error);
    EXPECT_EQ(closed.error->code, sdk::ErrorCode::unavailable);
}

TEST_F(WsAdapterTest, AJobReportsProgressAndEndsWithItsResult) {
    const std::string job = R"(,"job":{"done_path":"$.done","status_path":"$.status",
        "progress_path":"$.progress","total_path":"$.total","result_path":"$.result",
        "error_path":"$.error"},"subscribe_message_template":{"op":"start","params":{"n":3}}})";
    RequestSpec spec;
    spec.config_json = R"({"url":")" + url("/job?steps=4&interval_ms=10") + "\"" + job;
    spec.request_json = spec.config_json;
    spec.timeout_ms = 5000;
    const CallResult r = host_->callUnary("websocket", spec);
    ASSERT_TRUE(r.ok()) << (r.error ? r.error->message : "");
    ASSERT_EQ(r.items.size(), 1U);
    EXPECT_EQ(r.items[0], R"({"steps":4,"echo":{"n":3}})");
    ASSERT_FALSE(r.progress.empty());
    EXPECT_EQ(r.progress.back().total, 4);
    spec.config_json = R"({"url":")" + url("/job?steps=2&interval_ms=10&fail=1") + "\"" + job;
    spec.request_json = spec.config_json;
    const CallResult failed = host_->callUnary("websocket", spec);
    ASSERT_TRUE(failed.error);
    EXPECT_EQ(failed.error->code, sdk::ErrorCode::upstream);
    EXPECT_THAT(failed.error->message, HasSubstr("job failed"));
}

/// A one-connection WebSocket server on raw sockets: it completes the handshake, then writes
/// `bytes` as they are (hostile frames Poco's own server would never send) and closes.
class RawUpstream {
public:
    explicit RawUpstream(std::string bytes)
        : server_(Poco::Net::SocketAddress("127.0.0.1", 0)), bytes_(std::move(bytes)) {
        thread_ = std::thread([this] { serve(); });
    }
    ~RawUpstream() {
        server_.close();
        thread_.join();
    }
    RawUpstream(const RawUpstream&) = delete;
    RawUpstream& operator=(const RawUpstream&) = delete;
    RawUpstream(RawUpstream&&) = delete;
    RawUpstream& operator=(RawUpstream&&) = delete;

    std::string url() const {
        return "ws://127.0.0.1:" + std::to_string(server_.address().port()) + "/raw";
    }

private:
    void serve() {
        try {
            if (!server_.poll(Poco::Timespan(10, 0), Poco::Net::Socket::SELECT_READ)) {
                return;
            }
            Poco::Net::StreamSocket peer = server_.acceptConnection();
            peer.setReceiveTimeout(Poco::Timespan(5, 0));
            std::string request;
            char buffer[1024];
            while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
                const int n = peer.receiveBytes(buffer, sizeof buffer);
                if (n <= 0) {
                    return;
                }
                request.append(buffer, static_cast<std::size_t>(n));
            }
            const std::string marker = "Sec-WebSocket-Key: ";
            const std::size_t at = request.find(marker);
            if (at == std::string::npos) {
                return;
            }
            const std::string key =
                request.substr(at + marker.size(), request.find("\r\n", at) - at - marker.size());
            Poco::SHA1Engine sha1;
            sha1.update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
            const Poco::DigestEngine::Digest& digest = sha1.digest();
            std::ostringstream accept;
            Poco::Base64Encoder encoder(accept);
            encoder.write(reinterpret_cast<const char*>(digest.data()),
                          static_cast<std::streamsize>(digest.size()));
            encoder.close();
            const std::string answer =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: "
                "Upgrade\r\nSec-WebSocket-Accept: " +
                accept.str() + "\r\n\r\n" + bytes_;
            peer.sendBytes(answer.data(), static_cast<int>(answer.size()));
            std::this_thread::sleep_for(200ms);
            peer.close();
        } catch (...) {  // NOLINT(bugprone-empty-catch): the client went away first
        }
    }

    Poco::Net::ServerSocket server_;
    std::string bytes_;
    std::thread thread_;
};

std::string textFrame(const std::string& payload, bool fin = true, int opcode = 1) {
    std::string out;
    out.push_back(static_cast<char>((fin ? 0x80 : 0) | opcode));
    out.push_back(static_cast<char>(payload.size()));  // payloads under 126 bytes
    return out + payload;
}

/// A final text frame of any length (7-, 16- or 64-bit length encoding), unmasked.
std::string bigTextFrame(const std::string& payload) {
    std::string out(1, static_cast<char>(0x81));
    const std::size_t n = payload.size();
    if (n < 126) {
        out.push_back(static_cast<char>(n));
    } else if (n <= 0xffff) {
        out.push_back(static_cast<char>(126));
        out.push_back(static_cast<char>(n >> 8));
        out.push_back(static_cast<char>(n & 0xff));
    } else {
        out.push_back(static_cast<char>(127));
        for (int shift = 56; shift >= 0; shift -= 8) {
            out.push_back(static_cast<char>((n >> shift) & 0xff));
        }
    }
    return out + payload;
}

TEST_F(WsAdapterTest, AMessageNestedHalfAMillionLevelsDeepIsNoCrash) {
    // 500,000 "[" then as many "]": valid JSON the host refuses to nest into; the plugin must not
    // recurse over it either. It is passed on, and the host counts it malformed (too deep).
    const std::string deep = std::string(500000, '[') + std::string(500000, ']');
    RawUpstream upstream(bigTextFrame(deep) + bigTextFrame(R"({"seq":2})") +
                         std::string("\x88\x02\x03\xe8", 4));
    StreamOptions options;
    options.timeout = 10s;
    const CallResult r =
        stream(R"({"url":")" + upstream.url() + R"(","max_message_bytes":2000000})", options);
    EXPECT_EQ(r.status, sdk::Status::ok) << (r.error ? r.error->message : "");
    EXPECT_EQ(r.malformed_items, 1U);  // the host's own check: too deep
    ASSERT_EQ(r.items.size(), 1U);
    EXPECT_EQ(r.items.back(), R"({"seq":2})");
}

TEST_F(WsAdapterTest, HostileFramesEndTheStreamWithAClearErrorAndKeepWhatCameBefore) {
    struct Case {
        const char* what;
        std::string bytes;
        sdk::ErrorCode code;
        const char* says;
    };
    const std::string good = textFrame(R"({"seq":1})");
    const std::vector<Case> cases = {
        {"a continuation with no message", good + textFrame("x", true, 0), sdk::ErrorCode::protocol,
         "continuation frame outside a message"},
        {"a reserved opcode", good + textFrame("x", true, 3), sdk::ErrorCode::protocol,
         "unknown opcode 3"},
        {"a length of 2^63", good + std::string("\x81\x7f\x7f\xff\xff\xff\xff\xff\xff\xff", 10),
         sdk::ErrorCode::resource_exhausted, "larger than max_message_bytes"},
        {"a truncated frame, then the connection ends", good + std::string("\x81\x10{\"se", 5),
         sdk::ErrorCode::protocol, "Incomplete frame received"},
    };
    for (const Case& c : cases) {
        RawUpstream upstream(c.bytes);
        StreamOptions options;
        options.timeout = 10s;
        const CallResult r = stream(R"({"url":")" + upstream.url() + R"("})", options);
        EXPECT_EQ(r.items.size(), 1U) << c.what;
        ASSERT_TRUE(r.error) << c.what;
        EXPECT_EQ(r.error->code, c.code) << c.what << ": " << r.error->message;
        EXPECT_THAT(r.error->message, HasSubstr(c.says)) << c.what;
    }
}

}  // namespace
}  // namespace crank::ws
