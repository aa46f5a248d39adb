// crank's HTTP/1.1 client (the SDK's, crank::sdk_http) against a loopback server that answers with
// canned bytes: framing (Content-Length, chunked, until close), gzip, 1xx, hostile heads,
// keep-alive reuse and the keep-alive race, deadlines and interrupts.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <Poco/Net/Context.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/StreamSocket.h>
#include <gtest/gtest.h>

#include <crank/sdk/error.hpp>
#include <crank/sdk/http/client.hpp>
#include <crank/sdk/http/exchange.hpp>
#include <zlib.h>

namespace crank::sdk::http {
namespace {

using namespace std::chrono_literals;

/// One canned answer: pieces written with a pause before each, then the connection is kept for
/// the next request or closed.
struct Answer {
    std::vector<std::pair<std::chrono::milliseconds, std::string>> pieces;
    bool close_after = false;
};

Answer answer(std::string bytes, bool close_after = false) {
    return Answer{{{0ms, std::move(bytes)}}, close_after};
}

/// Serves the answers in order, one per request, on as many connections as clients open.
class CannedServer {
public:
    explicit CannedServer(std::vector<Answer> answers)
        : answers_(std::move(answers)), socket_(Poco::Net::SocketAddress("127.0.0.1", 0)) {
        thread_ = std::thread([this] { acceptLoop(); });
    }
    CannedServer(const CannedServer&) = delete;
    CannedServer& operator=(const CannedServer&) = delete;
    CannedServer(CannedServer&&) = delete;
    CannedServer& operator=(CannedServer&&) = delete;
    ~CannedServer() {
        stop_ = true;
        thread_.join();
        for (std::thread& t : connections_) {
            t.join();
        }
    }

    Url url(const std::string& path = "/x") const {
        std::string error;
        return *parseUrl("http://127.0.0.1:" + std::to_string(socket_.address().port()) + path,
                         error);
    }
    int accepted() const { return accepted_.load(); }
    std::vector<std::string> requests() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }

private:
    void acceptLoop() {
        while (!stop_) {
            if (!socket_.poll(Poco::Timespan(0, 100'000), Poco::Net::Socket::SELECT_READ)) {
                continue;
            }
            Poco::Net::StreamSocket s = socket_.acceptConnection();
            ++accepted_;
            connections_.emplace_back([this, s]() mutable { serve(s); });
        }
    }
    bool takeAnswer(Answer& out) {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (next_ >= answers_.size()) {
            return false;
        }
        out = answers_[next_++];
        return true;
    }
    void serve(Poco::Net::StreamSocket s) {
        s.setReceiveTimeout(Poco::Timespan(0, 100'000));
        std::string in;
        char buffer[4096];
        for (int idle = 0; !stop_ && idle < 100;) {  // at most 10 s without a request
            const std::size_t end = in.find("\r\n\r\n");
            if (end == std::string::npos) {
                try {
                    const int n = s.receiveBytes(buffer, sizeof buffer);
                    if (n <= 0) {
                        return;
                    }
                    in.append(buffer, static_cast<std::size_t>(n));
                } catch (const Poco::TimeoutException&) {
                    ++idle;
                } catch (...) {
                    return;
                }
                continue;
            }
            {
                const std::lock_guard<std::mutex> lock(mutex_);
                requests_.push_back(in.substr(0, end + 4));
            }
            in.erase(0, end + 4);
            Answer a;
            if (!takeAnswer(a)) {
                return;
            }
            try {
                for (const auto& [pause, bytes] : a.pieces) {
                    for (auto waited = 0ms; waited < pause && !stop_; waited += 10ms) {
                        std::this_thread::sleep_for(10ms);
                    }
                    s.sendBytes(bytes.data(), static_cast<int>(bytes.size()));
                }
            } catch (...) {
                return;
            }
            if (a.close_after) {
                s.close();
                return;
            }
        }
    }

    std::vector<Answer> answers_;
    Poco::Net::ServerSocket socket_;
    std::thread thread_;
    std::vector<std::thread> connections_;
    std::atomic<bool> stop_{false};
    std::atomic<int> accepted_{0};
    mutable std::mutex mutex_;
    std::size_t next_ = 0;
    std::vector<std::string> requests_;
};

ExchangeDeadlines within(std::chrono::milliseconds d) {
    const auto t = Clock::now() + d;
    return {t, t, t};
}

struct Fetched {
    ResponseHead head;
    std::string body;
    bool reused = false;
};

Fetched fetch(ConnectionPool& pool, const Url& url, std::chrono::milliseconds bound = 5000ms,
              ExchangeOptions options = {}) {
    HttpExchange exchange(pool, std::move(options));
    HttpRequest request;
    request.url = url;
    const ExchangeDeadlines d = within(bound);
    Fetched f;
    f.head = exchange.start(request, d, nullptr);
    char buffer[1000];
    for (;;) {
        const std::size_t n = exchange.readBody(buffer, sizeof buffer, d.total, nullptr);
        if (n == 0) {
            break;
        }
        f.body.append(buffer, n);
    }
    f.reused = exchange.reusedConnection();
    exchange.finish();
    return f;
}

/// The failure of fetching `url`, as "phase/kind: detail".
std::string failure(ConnectionPool& pool, const Url& url,
                    std::chrono::milliseconds bound = 5000ms) {
    try {
        fetch(pool, url, bound);
    } catch (const ExchangeFailure& e) {
        const char* phases[] = {"connect", "headers", "body"};
        const char* kinds[] = {"refused", "dns", "tls", "timeout", "cancelled", "closed", "io"};
        return std::string(phases[static_cast<int>(e.phase())]) + "/" +
               kinds[static_cast<int>(e.error().kind)] + ": " + e.error().detail;
    }
    return "no failure";
}

std::string gzip(const std::string& text) {
    z_stream zs{};
    deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(compressBound(static_cast<uLong>(text.size())) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    zs.avail_in = static_cast<uInt>(text.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    return out;
}

std::string chunked(const std::string& body, std::size_t piece) {
    std::string out;
    for (std::size_t i = 0; i < body.size(); i += piece) {
        const std::string part = body.substr(i, piece);
        char size[32];
        std::snprintf(size, sizeof size, "%zx", part.size());
        out.append(size).append("\r\n").append(part).append("\r\n");
    }
    return out + "0\r\n\r\n";
}

TEST(HttpClient, KeepAliveReusesOneConnection) {
    CannedServer server({answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"),
                         answer("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyou")});
    ConnectionPool pool;
    const Fetched a = fetch(pool, server.url());
    const Fetched b = fetch(pool, server.url());
    EXPECT_EQ(a.body, "hi");
    EXPECT_EQ(b.body, "you");
    EXPECT_FALSE(a.reused);
    EXPECT_TRUE(b.reused);
    EXPECT_EQ(server.accepted(), 1);
    EXPECT_EQ(pool.opened(), 1U);
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_NE(requests[0].find("GET /x HTTP/1.1\r\n"), std::string::npos);
    EXPECT_NE(requests[0].find("Host: 127.0.0.1:"), std::string::npos);
    EXPECT_NE(requests[0].find("Accept-Encoding: gzip"), std::string::npos);
}

TEST(HttpClient, AnAddressCheckIsAppliedToTheAddressConnectedToAndToPooledConnections) {
    CannedServer server({answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"),
                         answer("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyou")});
    ConnectionPool pool;
    const Fetched first = fetch(pool, server.url());  // opens, then pools, a connection
    EXPECT_EQ(first.body, "hi");
    // A request whose rule refuses the address the pooled connection (and the name) goes to.
    HttpExchange exchange(pool, {});
    HttpRequest request;
    request.url = server.url();
    std::vector<std::string> judged;
    request.address_check = [&judged](const std::string& address) -> std::optional<std::string> {
        judged.push_back(address);
        return "a loopback address, and the configured URL's host is not in that range";
    };
    try {
        exchange.start(request, within(5000ms), nullptr);
        ADD_FAILURE() << "connected to an address the check refused";
    } catch (const ExchangeFailure& e) {
        EXPECT_EQ(e.phase(), ExchangeFailure::Phase::connect);
        EXPECT_EQ(e.error().kind, TransportError::Kind::refused);
        EXPECT_EQ(e.error().detail, "will not connect to " + server.url().authority() +
                                        ": a loopback address, and the configured URL's host is "
                                        "not in that range");
    }
    // Judged twice: the pooled connection's peer, then the address the lookup gave.
    EXPECT_EQ(judged, (std::vector<std::string>{"127.0.0.1", "127.0.0.1"}));
    EXPECT_EQ(server.accepted(), 1);  // no second connection was made
    EXPECT_EQ(server.requests().size(), 1U);
}

TEST(HttpClient, ChunkedBodiesWithExtensionsAndTrailers) {
    CannedServer server({answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-T: 1\r\n\r\n"),
                         answer("HTTP/1.1 204 No Content\r\n\r\n")});
    ConnectionPool pool;
    EXPECT_EQ(fetch(pool, server.url()).body, "hello world");
    const Fetched second = fetch(pool, server.url());  // the connection is reusable after it
    EXPECT_EQ(second.head.status, 204);
    EXPECT_TRUE(second.reused);
}

TEST(HttpClient, GzipIsDecodedWhateverTheFraming) {
    const std::string text(100000, 'z');
    const std::string packed = gzip(text);
    CannedServer server(
        {answer("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " +
                std::to_string(packed.size()) + "\r\n\r\n" + packed),
         answer("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
                chunked(packed, 7))});
    ConnectionPool pool;
    EXPECT_EQ(fetch(pool, server.url()).body, text);
    EXPECT_EQ(fetch(pool, server.url()).body, text);
}

TEST(HttpClient, CorruptOrTruncatedGzipIsAnError) {
    CannedServer server(
        {answer("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 9\r\n\r\nnot gzip!"),
         answer("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n" +
                gzip("abcdefghijklmnop").substr(0, 10)),
         answer("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 1\r\n\r\nx")});
    ConnectionPool pool;
    EXPECT_NE(failure(pool, server.url()).find("body/io: the compressed response is corrupt"),
              std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("ends before its compressed stream"),
              std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("Content-Encoding \"br\""), std::string::npos);
}

TEST(HttpClient, BrokenFramingIsNamed) {
    CannedServer server(
        {answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly-part", true),
         answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", true),
         answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true),
         answer("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", true),
         answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n", true)});
    ConnectionPool pool;
    EXPECT_NE(failure(pool, server.url()).find("middle of a chunk"), std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("not a hexadecimal number"), std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("7 bytes before the end of the body"),
              std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("Content-Length is not a number"),
              std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("longer than its size"), std::string::npos);
}

TEST(HttpClient, HostileHeads) {
    CannedServer server(
        {answer("SSH-2.0-OpenSSH_9\r\n\r\n", true),
         answer("HTTP/1.1 200 OK\r\nX: " + std::string(70000, 'a') + "\r\n\r\n", true),
         answer("HTTP/1.1 200 OK\r\nno-colon-here\r\n\r\n", true),
         answer("HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", true),
         answer("HTTP/1.1 200 OK\r\nContent-Le", true), answer("", true)});
    ConnectionPool pool;
    EXPECT_NE(failure(pool, server.url()).find("did not answer with HTTP/1.x"), std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("headers are larger than 65536"), std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("has no name"), std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("line folding"), std::string::npos);
    EXPECT_NE(failure(pool, server.url()).find("middle of the response headers"),
              std::string::npos);
    EXPECT_NE(
        failure(pool, server.url()).find("headers/closed: the upstream closed the connection"),
        std::string::npos);
}

TEST(HttpClient, InformationalAnswersAreSkipped) {
    CannedServer server(
        {answer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n"
                "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")});
    ConnectionPool pool;
    const Fetched f = fetch(pool, server.url());
    EXPECT_EQ(f.head.status, 201);
    EXPECT_EQ(f.head.reason, "Created");
    EXPECT_EQ(f.body, "ok");
}

TEST(HttpClient, BodyUntilCloseIsReadAndTheConnectionIsNotKept) {
    CannedServer server({answer("HTTP/1.1 200 OK\r\n\r\nall of it", true),
                         answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")});
    ConnectionPool pool;
    EXPECT_EQ(fetch(pool, server.url()).body, "all of it");
    EXPECT_EQ(pool.idleCount(), 0U);
    EXPECT_FALSE(fetch(pool, server.url()).reused);
    EXPECT_EQ(server.accepted(), 2);
}

TEST(HttpClient, AKeepAliveConnectionClosedByTheUpstreamIsReplacedOnce) {
    // The first answer promises keep-alive but the server closes: the next GET finds the pooled
    // connection dead and goes to a fresh one without the caller seeing it.
    CannedServer server({answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na", true),
                         answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb")});
    ConnectionPool pool;
    EXPECT_EQ(fetch(pool, server.url()).body, "a");
    std::this_thread::sleep_for(50ms);  // let the close arrive (either path must work)
    EXPECT_EQ(fetch(pool, server.url()).body, "b");
    EXPECT_EQ(server.accepted(), 2);
}

TEST(HttpClient, TheFinalHeadAfterALongInformationalOneArrivingLaterIsFound) {
    // The 103 is consumed, then the next read moves the unconsumed bytes to the front of the
    // buffer: the search for the end of the 200's head must start from where it really is.
    Answer a;
    a.pieces.emplace_back(0ms, "HTTP/1.1 103 Early Hints\r\nLink: <" + std::string(900, 'l') +
                                   ">; rel=preload\r\n\r\n");
    a.pieces.emplace_back(100ms, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    CannedServer server({a});
    ConnectionPool pool;
    const Fetched f = fetch(pool, server.url(), 2000ms);
    EXPECT_EQ(f.head.status, 200);
    EXPECT_EQ(f.body, "ok");
}

TEST(HttpClient, ExpiredIdleConnectionsOfEveryKeyAreClosed) {
    // Connections of keys that are never asked for again still go once their idle timeout passed.
    CannedServer one({answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na"),
                      answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb")});
    CannedServer two({answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nc"),
                      answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nd")});
    CannedServer three({answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\ne")});
    std::string error;
    const auto viaLocalhost = [&error](const CannedServer& s) {
        return *parseUrl("http://localhost:" + std::to_string(s.url().port) + "/x", error);
    };
    ConnectionPool pool;
    ExchangeOptions shortIdle;
    shortIdle.idle_timeout = 200ms;
    fetch(pool, one.url(), 5000ms, shortIdle);
    fetch(pool, viaLocalhost(one), 5000ms, shortIdle);
    fetch(pool, two.url(), 5000ms, shortIdle);
    fetch(pool, viaLocalhost(two), 5000ms, shortIdle);
    EXPECT_EQ(pool.idleCount(), 4U);
    std::this_thread::sleep_for(400ms);
    fetch(pool, three.url(), 5000ms, shortIdle);  // gives one more: the four expired ones go
    EXPECT_EQ(pool.idleCount(), 1U);
}

TEST(HttpClient, HeadersWithControlCharactersAreRefusedWithoutRepeatingTheValue) {
    CannedServer server({answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na")});
    ConnectionPool pool;
    const auto refusal = [&](const std::string& name, const std::string& value) {
        HttpExchange exchange(pool, {});
        HttpRequest request;
        request.url = server.url();
        request.headers.emplace_back(name, value);
        try {
            exchange.start(request, within(2000ms), nullptr);
        } catch (const ExchangeFailure& e) {
            return std::string(e.what());
        }
        return std::string("no failure");
    };
    const std::string injected = refusal("X-Token", "s3cret\r\nX-Injected: 1");
    EXPECT_NE(injected.find("\"X-Token\""), std::string::npos) << injected;
    EXPECT_NE(injected.find("control character"), std::string::npos) << injected;
    EXPECT_EQ(injected.find("s3cret"), std::string::npos) << injected;
    EXPECT_EQ(injected.find("Injected"), std::string::npos) << injected;
    const std::string nul = refusal("X-Key", std::string("abc\0def", 7));
    EXPECT_NE(nul.find("control character"), std::string::npos) << nul;
    EXPECT_EQ(nul.find("abc"), std::string::npos) << nul;
    const std::string name = refusal("X-A\nX-B", "v");
    EXPECT_NE(name.find("header name \"X-A?X-B\""), std::string::npos) << name;
    EXPECT_EQ(refusal("X-Tabbed", "a\tb"), "no failure");  // a tab is allowed
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1U);  // only the last one was sent
    EXPECT_NE(requests[0].find("X-Tabbed: a\tb\r\n"), std::string::npos);
}

TEST(HttpClient, AuthProfileSecretsWithControlCharactersAreRefusedWithoutRepeatingThem) {
    const auto refusal = [](const std::string& json) {
        try {
            parseAuthProfile(json, "the test plugin");
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
            return std::string(e.what());
        }
        return std::string("no failure");
    };
    const std::string token = refusal(R"({"type":"bearer","token":"s3cret\r\nX-Injected: 1"})");
    EXPECT_NE(token.find("the auth profile's token contains a line break or another control "
                         "character"),
              std::string::npos)
        << token;
    EXPECT_EQ(token.find("s3cret"), std::string::npos) << token;
    const std::string password = refusal(R"({"type":"basic","username":"u","password":"pa\nss"})");
    EXPECT_NE(password.find("the auth profile's password"), std::string::npos) << password;
    EXPECT_EQ(password.find("pa\nss"), std::string::npos) << password;
    const std::string username =
        refusal(R"({"type":"basic","username":"us\u0000er","password":"p"})");
    EXPECT_NE(username.find("the auth profile's username"), std::string::npos) << username;
    const std::string key = refusal(R"({"type":"api_key","name":"X-Key","key":"k3y\r"})");
    EXPECT_NE(key.find("the auth profile's key"), std::string::npos) << key;
    EXPECT_EQ(key.find("k3y"), std::string::npos) << key;
    const std::string keyName = refusal(R"({"type":"api_key","name":"X\nKey","key":"k"})");
    EXPECT_NE(keyName.find("the auth profile's name"), std::string::npos) << keyName;
    const std::string header = refusal(R"({"type":"none","headers":{"X-H":"v4lue\nX-I: 1"}})");
    EXPECT_NE(header.find("the auth profile's header \"X-H\""), std::string::npos) << header;
    EXPECT_EQ(header.find("v4lue"), std::string::npos) << header;
    const std::string headerName = refusal(R"({"type":"none","headers":{"X\r\nI":"v"}})");
    EXPECT_NE(headerName.find("a header name"), std::string::npos) << headerName;

    // Tabs and ordinary text pass; a key sent in the query is percent-encoded, not refused.
    const AuthProfile ok =
        parseAuthProfile(R"({"type":"bearer","token":"a\tb","headers":{"X-H":"v"}})", "p");
    ASSERT_EQ(ok.credential_headers.size(), 1U);
    EXPECT_EQ(ok.credential_headers[0].second, "Bearer a\tb");
    const AuthProfile query =
        parseAuthProfile(R"({"type":"api_key","in":"query","name":"k","key":"a\nb"})", "p");
    ASSERT_TRUE(query.query_key.has_value());
}

TEST(HttpClient, ASwitchingProtocolsAnswerIsNeverPooled) {
    CannedServer server({answer("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\n\r\n"),
                         answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")});
    ConnectionPool pool;
    const Fetched f = fetch(pool, server.url());
    EXPECT_EQ(f.head.status, 101);
    EXPECT_EQ(pool.idleCount(), 0U);
    EXPECT_FALSE(fetch(pool, server.url()).reused);
}

TEST(HttpClient, FinishReadsTheInterruptFlagUnderTheLock) {
    // interrupt() from another thread while finish() runs (a data race before: run under TSan).
    CannedServer server({answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na")});
    ConnectionPool pool;
    HttpExchange exchange(pool, {});
    HttpRequest request;
    request.url = server.url();
    const ExchangeDeadlines d = within(5000ms);
    exchange.start(request, d, nullptr);
    char buffer[8];
    while (exchange.readBody(buffer, sizeof buffer, d.total, nullptr) > 0) {
    }
    std::atomic<bool> go{false};
    std::thread other([&] {
        while (!go) {
        }
        exchange.interrupt();
    });
    go = true;
    exchange.finish();
    other.join();
    EXPECT_LE(pool.idleCount(), 1U);
}

TEST(HttpClient, WhatFollowsAGzipStreamIsDrainedOnlyUpToABound) {
    // A Content-Length far larger than the gzip stream and an upstream that then stalls: the
    // client reads at most 64 KiB past the stream's end, then closes the connection.
    const std::string text = "the body";
    const std::string packed = gzip(text);
    const std::string trailing(100000, 't');
    Answer a;
    a.pieces.emplace_back(0ms, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " +
                                   std::to_string(packed.size() + 10'000'000) + "\r\n\r\n" +
                                   packed + trailing);
    a.pieces.emplace_back(5000ms, "late");
    CannedServer server({a});
    ConnectionPool pool;
    const auto start = Clock::now();
    const Fetched f = fetch(pool, server.url(), 3000ms);
    EXPECT_EQ(f.body, text);
    EXPECT_LT(Clock::now() - start, 2000ms);
    EXPECT_EQ(pool.idleCount(), 0U);
}

TEST(HttpClient, ABoundedDrainAfterAGzipStreamKeepsAShortTail) {
    // A few bytes after the stream (within the bound) are read and the connection is kept.
    const std::string packed = gzip("short");
    CannedServer server({answer("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " +
                                std::to_string(packed.size() + 5) + "\r\n\r\n" + packed + "extra"),
                         answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")});
    ConnectionPool pool;
    EXPECT_EQ(fetch(pool, server.url()).body, "short");
    EXPECT_EQ(pool.idleCount(), 1U);
    EXPECT_TRUE(fetch(pool, server.url()).reused);
}

TEST(HttpClient, HeadersDeadline) {
    CannedServer server({Answer{{{3000ms, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"}}, true}});
    ConnectionPool pool;
    const auto start = Clock::now();
    EXPECT_EQ(failure(pool, server.url(), 300ms), "headers/timeout: read");
    EXPECT_LT(Clock::now() - start, 2000ms);
}

TEST(HttpClient, TricklingBodyHitsTheTotalDeadline) {
    Answer slow;
    slow.pieces.emplace_back(0ms, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
    for (int i = 0; i < 100; ++i) {
        slow.pieces.emplace_back(50ms, "x");
    }
    CannedServer server({slow});
    ConnectionPool pool;
    const auto start = Clock::now();
    EXPECT_EQ(failure(pool, server.url(), 400ms), "body/timeout: read");
    EXPECT_LT(Clock::now() - start, 2000ms);
}

TEST(HttpClient, InterruptWakesABlockedRead) {
    CannedServer server({Answer{
        {{0ms, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab"}, {5000ms, "cde"}}, false}});
    ConnectionPool pool;
    HttpExchange exchange(pool, {});
    HttpRequest request;
    request.url = server.url();
    const ExchangeDeadlines d = within(10000ms);
    exchange.start(request, d, nullptr);
    std::thread stopper([&] {
        std::this_thread::sleep_for(100ms);
        exchange.interrupt();
    });
    const auto start = Clock::now();
    char buffer[16];
    std::string got;
    try {
        for (;;) {
            const std::size_t n = exchange.readBody(buffer, sizeof buffer, d.total, nullptr);
            if (n == 0) {
                break;
            }
            got.append(buffer, n);
        }
        ADD_FAILURE() << "the read was not interrupted";
    } catch (const ExchangeFailure& e) {
        EXPECT_EQ(e.error().kind, TransportError::Kind::cancelled);
    }
    stopper.join();
    EXPECT_EQ(got, "ab");
    EXPECT_LT(Clock::now() - start, 2000ms);
    exchange.finish();
    EXPECT_EQ(pool.idleCount(), 0U);  // an interrupted connection is never reused
}

TEST(HttpClient, HostNamesAreResolvedAndEveryAddressIsTried) {
    // "localhost" comes from /etc/hosts (no network); it may list ::1 first, where nothing
    // listens: the client goes on to 127.0.0.1.
    CannedServer server({answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")});
    std::string error;
    const Url url = *parseUrl("http://localhost:" + std::to_string(server.url().port) + "/", error);
    ConnectionPool pool;
    EXPECT_EQ(fetch(pool, url).body, "ok");
}

TEST(HttpClient, RefusedConnection) {
    Url url;
    {
        Poco::Net::ServerSocket closed(Poco::Net::SocketAddress("127.0.0.1", 0));
        std::string error;
        url = *parseUrl("http://127.0.0.1:" + std::to_string(closed.address().port()) + "/", error);
    }
    ConnectionPool pool;
    EXPECT_NE(failure(pool, url).find("connect/refused: connection refused by 127.0.0.1:"),
              std::string::npos);
}

TEST(HttpClient, TlsToAPlainHttpServerFailsAsTls) {
    // A plain HTTP server that answers garbage to the ClientHello at once.
    Poco::Net::ServerSocket plain(Poco::Net::SocketAddress("127.0.0.1", 0));
    std::thread server([&plain] {
        if (plain.poll(Poco::Timespan(5, 0), Poco::Net::Socket::SELECT_READ)) {
            Poco::Net::StreamSocket s = plain.acceptConnection();
            const std::string reply = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
            s.sendBytes(reply.data(), static_cast<int>(reply.size()));
            std::this_thread::sleep_for(200ms);
        }
    });
    std::string error;
    const Url url =
        *parseUrl("https://127.0.0.1:" + std::to_string(plain.address().port()) + "/", error);
    ConnectionPool pool;
    EXPECT_NE(failure(pool, url).find("connect/tls: TLS handshake with 127.0.0.1:"),
              std::string::npos);
    server.join();
}

TEST(HttpClient, AStalledTlsHandshakeEndsAtTheConnectDeadline) {
    Poco::Net::ServerSocket silent(Poco::Net::SocketAddress("127.0.0.1", 0));  // never accepts
    std::string error;
    const Url url =
        *parseUrl("https://127.0.0.1:" + std::to_string(silent.address().port()) + "/", error);
    ConnectionPool pool;
    const auto start = Clock::now();
    EXPECT_EQ(failure(pool, url, 400ms), "connect/timeout: connect");
    EXPECT_LT(Clock::now() - start, 2500ms);
}

/// A TLS server with a self-signed certificate for 127.0.0.1 (made with the openssl command, as
/// scripts/install-deps.sh installs it), answering each connection once.
class TlsServer {
public:
    /// `name`: what the certificate is for (an IP address or a DNS name).
    explicit TlsServer(const std::string& name = "127.0.0.1") {
        dir_ = std::filesystem::temp_directory_path() /
               ("crank-rest-tls-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
        std::filesystem::create_directories(dir_);
        const std::string command =
            "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=" + name +
            " -addext subjectAltName=" + (name == "127.0.0.1" ? "IP:" : "DNS:") + name +
            " -keyout '" + key() + "' -out '" + cert() + "' >/dev/null 2>&1";
        // NOLINTNEXTLINE(cert-env33-c,concurrency-mt-unsafe): a fixed command
        ok_ = std::system(command.c_str()) == 0;
        if (!ok_) {
            return;
        }
        Poco::Net::Context::Ptr context = new Poco::Net::Context(
            Poco::Net::Context::TLS_SERVER_USE, key(), cert(), "", Poco::Net::Context::VERIFY_NONE);
        socket_ = std::make_unique<Poco::Net::SecureServerSocket>(
            Poco::Net::SocketAddress("127.0.0.1", 0), 64, context);
        thread_ = std::thread([this] { serve(); });
    }
    TlsServer(const TlsServer&) = delete;
    TlsServer& operator=(const TlsServer&) = delete;
    TlsServer(TlsServer&&) = delete;
    TlsServer& operator=(TlsServer&&) = delete;
    ~TlsServer() {
        stop_ = true;
        if (thread_.joinable()) {
            thread_.join();
        }
        std::filesystem::remove_all(dir_);
    }

    bool ok() const { return ok_; }
    std::string cert() const { return (dir_ / "cert.pem").string(); }
    Url url() const {
        std::string error;
        return *parseUrl("https://127.0.0.1:" + std::to_string(socket_->address().port()) + "/t",
                         error);
    }

private:
    std::string key() const { return (dir_ / "key.pem").string(); }
    void serve() {
        while (!stop_) {
            if (!socket_->poll(Poco::Timespan(0, 100'000), Poco::Net::Socket::SELECT_READ)) {
                continue;
            }
            try {
                Poco::Net::StreamSocket s = socket_->acceptConnection();
                s.setReceiveTimeout(Poco::Timespan(5, 0));
                std::string in;
                char buffer[1024];
                while (in.find("\r\n\r\n") == std::string::npos) {
                    const int n = s.receiveBytes(buffer, sizeof buffer);
                    if (n <= 0) {
                        break;
                    }
                    in.append(buffer, static_cast<std::size_t>(n));
                }
                const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecure";
                s.sendBytes(reply.data(), static_cast<int>(reply.size()));
                s.close();
            } catch (const Poco::Exception&) {
                // a client that refused our certificate: next connection
            }
        }
    }

    static inline std::atomic<int> counter_{0};
    std::filesystem::path dir_;
    bool ok_ = false;
    std::unique_ptr<Poco::Net::SecureServerSocket> socket_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
};

TEST(HttpClient, TlsVerifiesTheChainAgainstTheCaFileOrTheSystem) {
    Poco::Net::initializeSSL();
    {
        TlsServer server;
        ASSERT_TRUE(server.ok()) << "openssl could not make a certificate";
        ConnectionPool pool;
        ExchangeOptions trusted;
        trusted.tls.ca_file = server.cert();
        trusted.max_idle = 0;
        EXPECT_EQ(fetch(pool, server.url(), 5000ms, trusted).body, "secure");

        ExchangeOptions unverified;
        unverified.tls.verify = false;
        unverified.max_idle = 0;
        EXPECT_EQ(fetch(pool, server.url(), 5000ms, unverified).body, "secure");

        // The system's CAs do not know a self-signed certificate.
        ExchangeOptions system;
        system.max_idle = 0;
        try {
            fetch(pool, server.url(), 5000ms, system);
            ADD_FAILURE() << "a self-signed certificate was accepted";
        } catch (const ExchangeFailure& e) {
            EXPECT_EQ(e.error().kind, TransportError::Kind::tls) << e.error().detail;
            EXPECT_NE(e.error().detail.find("TLS handshake with 127.0.0.1:"), std::string::npos);
        }
    }
    Poco::Net::uninitializeSSL();
}

TEST(HttpClient, TlsRefusesACertificateForAnotherHost) {
    Poco::Net::initializeSSL();
    {
        TlsServer server("other.invalid");  // trusted through the CA file, but not 127.0.0.1's
        ASSERT_TRUE(server.ok()) << "openssl could not make a certificate";
        ConnectionPool pool;
        ExchangeOptions trusted;
        trusted.tls.ca_file = server.cert();
        trusted.max_idle = 0;
        try {
            fetch(pool, server.url(), 5000ms, trusted);
            ADD_FAILURE() << "a certificate for another host was accepted";
        } catch (const ExchangeFailure& e) {
            EXPECT_EQ(e.error().kind, TransportError::Kind::tls) << e.error().detail;
        }
    }
    Poco::Net::uninitializeSSL();
}

TEST(HttpClientDeathTest, AServerWithoutACertificateFailsAsTlsWithoutEscapingAsSystemError) {
    // An anonymous cipher suite (no certificate at all) when the system's OpenSSL settings allow
    // it: the handshake succeeds, then reading the peer's certificate throws after the handshake
    // guard was already joined. It must end as a TLS failure, not as std::system_error from
    // joining the guard twice. The child process gets its own OpenSSL settings (OPENSSL_CONF is
    // read once, when OpenSSL starts).
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            const std::filesystem::path conf =
                std::filesystem::temp_directory_path() /
                ("crank-anon-tls-" + std::to_string(::getpid()) + ".cnf");
            {
                std::ofstream out(conf);
                out << "openssl_conf = openssl_init\n[openssl_init]\nssl_conf = ssl_sect\n"
                       "[ssl_sect]\nsystem_default = system_default_sect\n"
                       "[system_default_sect]\nCipherString = ALL:@SECLEVEL=0\n";
            }
            // NOLINTNEXTLINE(concurrency-mt-unsafe): before any thread of the child process
            ::setenv("OPENSSL_CONF", conf.c_str(), 1);
            Poco::Net::initializeSSL();
            int code = 3;
            {
                Poco::Net::Context::Params params;
                params.verificationMode = Poco::Net::Context::VERIFY_NONE;
                params.loadDefaultCAs = false;
                params.cipherList = "aNULL:@SECLEVEL=0";
                Poco::Net::Context::Ptr context =
                    new Poco::Net::Context(Poco::Net::Context::TLS_SERVER_USE, params);
                context->disableProtocols(Poco::Net::Context::PROTO_TLSV1_3);
                Poco::Net::SecureServerSocket server(Poco::Net::SocketAddress("127.0.0.1", 0), 64,
                                                     context);
                std::thread serving([&server] {
                    try {
                        if (server.poll(Poco::Timespan(5, 0), Poco::Net::Socket::SELECT_READ)) {
                            Poco::Net::SecureStreamSocket s(server.acceptConnection());
                            s.setReceiveTimeout(Poco::Timespan(2, 0));
                            s.completeHandshake();
                            char buffer[256];
                            s.receiveBytes(buffer, sizeof buffer);
                        }
                    } catch (...) {  // NOLINT(bugprone-empty-catch): the client hangs up
                    }
                });
                std::string error;
                const Url url = *parseUrl(
                    "https://127.0.0.1:" + std::to_string(server.address().port()) + "/", error);
                ConnectionPool pool;
                ExchangeOptions options;
                options.max_idle = 0;
                try {
                    fetch(pool, url, 5000ms, options);
                    code = 2;  // an unauthenticated server was accepted
                } catch (const ExchangeFailure& e) {
                    std::fprintf(stderr, "%s\n", e.error().detail.c_str());
                    code = e.error().kind == TransportError::Kind::tls ? 0 : 1;
                }
                serving.join();
            }
            std::filesystem::remove(conf);
            std::exit(code);  // NOLINT(concurrency-mt-unsafe): its threads are joined
        },
        ::testing::ExitedWithCode(0),
        "TLS handshake with 127\\.0\\.0\\.1:[0-9]+ failed: .*certificate");
}

}  // namespace
}  // namespace crank::sdk::http
