// The HTTP transports of plugins/mcp (HttpConnection, through UpstreamSession where the lifecycle
// matters) against servers written with the official TypeScript SDK: tests/e2e/reference-server.mjs
// (Streamable HTTP: progress on the POST stream, cancellation, session expiry, resumption with
// Last-Event-ID) and tests/e2e/fixture-legacy-sse-server.mjs (legacy HTTP+SSE, configured and
// detected). Hostile answers come from a raw socket server in this file: data that is not JSON,
// an oversized event or body, a wrong content type, HTTP errors, a stream that never ends, an
// endpoint event that points elsewhere. The SSE parser has tests of its own at the end.

#include "http_connection.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "raw_server.h"
#include "temp_dir.h"
#include "upstream_session.h"
#include <netinet/in.h>
#include <sys/socket.h>

namespace crank::mcpc {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A peer that closes while we write must be an error, not the death of the test (as in crankd).
const bool kSigpipeIgnored = [] {
    std::signal(SIGPIPE, SIG_IGN);
    return true;
}();

constexpr const char* kInitialize =
    R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"crank-test","version":"1"}})";

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

long long msSince(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// --- node servers
// ----------------------------------------------------------------------------------

/// A server of tests/e2e run by the project's Node.js, its stdout sent to stderr (where
/// ChildProcess looks for lines). Stopped by pid (SIGKILL) when destroyed.
class NodeServer {
public:
    NodeServer(const char* script, std::uint16_t port)
        : process_({"/bin/sh", "-c", "exec \"$0\" \"$1\" \"$2\" 1>&2", CRANK_NODE_PATH, script,
                    std::to_string(port)}) {
        const auto line = process_.waitForStderrLine("listening http://", 20s);
        if (line) {
            url_ = line->substr(line->find("http://"));
            const std::size_t colon = url_.rfind(':');
            port_ = static_cast<std::uint16_t>(std::stoi(url_.substr(colon + 1)));
        }
    }
    const std::string& url() const { return url_; }
    std::uint16_t port() const { return port_; }
    bool waitForLog(const std::string& needle, std::chrono::milliseconds timeout) {
        return process_.waitForStderrLine(needle, timeout).has_value();
    }
    void kill() {
        process_.signal(SIGKILL);
        process_.waitForExit(5s);
    }

private:
    testing::ChildProcess process_;
    std::string url_;
    std::uint16_t port_ = 0;
};

HttpOptions httpOptions(const std::string& url, HttpMode mode) {
    HttpOptions o;
    o.url = url;
    o.mode = mode;
    o.connect_timeout = 2s;
    return o;
}

UpstreamOptions upstream(HttpOptions http) {
    UpstreamOptions o;
    o.transport = httpTransport(std::move(http));
    o.request_timeout = 10s;
    o.initialize_timeout = 10s;
    o.backoff_initial = 10ms;
    return o;
}

std::string firstText(const std::string& result_json) {
    rapidjson::Document doc;
    doc.Parse(result_json.data(), result_json.size());
    if (!doc.IsObject() || !doc.HasMember("content") || !doc["content"].IsArray() ||
        doc["content"].Empty() || !doc["content"][0].HasMember("text")) {
        return "(no text in " + result_json + ")";
    }
    return doc["content"][0]["text"].GetString();
}

/// Messages and log lines collected from the handlers (they run on the transport's threads).
struct Collected {
    std::mutex mutex;
    std::vector<std::string> messages;
    std::vector<std::string> logs;

    Connection::MessageHandler onMessage() {
        return [this](std::string_view m) {
            const std::lock_guard lock(mutex);
            messages.emplace_back(m);
        };
    }
    Connection::LogHandler onLog() {
        return [this](std::string_view l) {
            const std::lock_guard lock(mutex);
            logs.emplace_back(l);
        };
    }
    std::string allLogs() {
        const std::lock_guard lock(mutex);
        std::string all;
        for (const std::string& l : logs) {
            all += l + "\n";
        }
        return all;
    }
};

// --- Streamable HTTP against the reference server ------------------------------------------------

TEST(HttpConnection, StreamableHttpInitializesListsAndCalls) {
    NodeServer server(CRANK_REFERENCE_SERVER, 0);
    ASSERT_FALSE(server.url().empty());
    Collected seen;
    UpstreamSession s(upstream(httpOptions(server.url(), HttpMode::streamable_http)),
                      seen.onMessage(), seen.onLog());
    std::vector<std::string> tools;
    const RpcOutcome listed = s.listTools(tools);
    ASSERT_TRUE(listed.ok) << listed.error_message;
    EXPECT_GT(tools.size(), 10U);
    const UpstreamStatus st = s.status();
    EXPECT_EQ(st.transport, "streamable_http");
    EXPECT_EQ(st.protocol_version, "2025-11-25");
    EXPECT_EQ(st.server_name, "crank-e2e-reference");
    const RpcOutcome echoed =
        s.request("tools/call", R"({"name":"echo","arguments":{"text":"héllo \"world\""}})");
    ASSERT_TRUE(echoed.ok) << echoed.error_message;
    EXPECT_EQ(firstText(echoed.result_json), "héllo \"world\"");
    // An unknown tool: the server's JSON-RPC error (or isError result) comes back as it is.
    const RpcOutcome unknown = s.request("nonexistent/method", "{}");
    EXPECT_FALSE(unknown.ok);
    EXPECT_EQ(unknown.error_code, -32601) << unknown.error_message;
}

TEST(HttpConnection, ProgressOnThePostStreamReachesOnRelatedBeforeTheAnswer) {
    NodeServer server(CRANK_REFERENCE_SERVER, 0);
    ASSERT_FALSE(server.url().empty());
    Collected seen;
    UpstreamSession s(upstream(httpOptions(server.url(), HttpMode::streamable_http)),
                      seen.onMessage(), seen.onLog());
    std::vector<std::string> related;
    std::int64_t id = 0;
    RequestHooks hooks;
    hooks.on_id = [&id](std::int64_t i) { id = i; };
    hooks.on_related = [&related](std::string_view m) { related.emplace_back(m); };
    const RpcOutcome r = s.request(
        "tools/call",
        R"({"name":"slow_progress","arguments":{"steps":3,"delay_ms":30},"_meta":{"progressToken":"p-7"}})",
        hooks);
    ASSERT_TRUE(r.ok) << r.error_message;
    EXPECT_EQ(firstText(r.result_json), "completed 3 steps");
    EXPECT_GT(id, 0);
    ASSERT_EQ(related.size(), 3U);
    for (std::size_t i = 0; i < related.size(); ++i) {
        EXPECT_TRUE(contains(related[i], R"("method":"notifications/progress")")) << related[i];
        EXPECT_TRUE(contains(related[i], R"("progressToken":"p-7")")) << related[i];
        EXPECT_TRUE(contains(related[i], R"("progress":)" + std::to_string(i + 1))) << related[i];
    }
    const std::lock_guard lock(seen.mutex);
    for (const std::string& m : seen.messages) {
        EXPECT_FALSE(contains(m, "notifications/progress")) << "went to the handler: " << m;
    }
}

TEST(HttpConnection, ACancelledCallReturnsPromptlyAndTheServerIsTold) {
    NodeServer server(CRANK_REFERENCE_SERVER, 0);
    ASSERT_FALSE(server.url().empty());
    UpstreamSession s(upstream(httpOptions(server.url(), HttpMode::streamable_http)), nullptr,
                      nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    std::atomic<bool> cancel{false};
    RequestHooks hooks;
    hooks.cancelled = [&cancel] { return cancel.load(); };
    std::thread canceller([&cancel] {
        std::this_thread::sleep_for(300ms);
        cancel = true;
    });
    const auto start = Clock::now();
    const RpcOutcome r = s.request(
        "tools/call",
        R"({"name":"slow_progress","arguments":{"steps":100,"delay_ms":100},"_meta":{"progressToken":1}})",
        hooks);
    const long long took = msSince(start);
    canceller.join();
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.cancelled) << r.error_message;
    EXPECT_LT(took, 1'500);
    // The reference server logs the cancellation it received (notifications/cancelled).
    EXPECT_TRUE(server.waitForLog("slow_progress: cancelled after", 3s));
    // The session goes on.
    const RpcOutcome after = s.request("tools/call", R"({"name":"echo","arguments":{"text":"x"}})");
    EXPECT_TRUE(after.ok) << after.error_message;
}

TEST(HttpConnection, ASessionDeletedBehindItsBackIsInitializedAgain) {
    NodeServer server(CRANK_REFERENCE_SERVER, 0);
    ASSERT_FALSE(server.url().empty());
    // The factory keeps the connection it made, to learn the session id.
    std::atomic<HttpConnection*> made{nullptr};
    UpstreamOptions o = upstream(httpOptions(server.url(), HttpMode::streamable_http));
    o.transport = [inner = o.transport, &made](Connection::MessageHandler m,
                                               Connection::LogHandler l, std::string& error) {
        std::unique_ptr<Connection> c = inner(std::move(m), std::move(l), error);
        made = dynamic_cast<HttpConnection*>(c.get());
        return c;
    };
    UpstreamSession s(o, nullptr, nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    const std::string session = made.load()->sessionId();
    ASSERT_FALSE(session.empty());
    const testing::Reply deleted =
        testing::exchange(server.port(), "DELETE", "/mcp",
                          {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}});
    ASSERT_EQ(deleted.status, 200) << deleted.body;
    const RpcOutcome r = s.request("tools/call", R"({"name":"echo","arguments":{"text":"again"}})");
    ASSERT_TRUE(r.ok) << r.error_message;
    EXPECT_EQ(firstText(r.result_json), "again");
    EXPECT_EQ(s.status().reconnects, 1);
    EXPECT_NE(made.load()->sessionId(), session);
}

TEST(HttpConnection, AServerRestartIsASessionExpiryAndIsInitializedAgain) {
    auto server = std::make_unique<NodeServer>(CRANK_REFERENCE_SERVER, 0);
    ASSERT_FALSE(server->url().empty());
    const std::uint16_t port = server->port();
    UpstreamSession s(upstream(httpOptions(server->url(), HttpMode::streamable_http)), nullptr,
                      nullptr);
    ASSERT_TRUE(s.request("ping", "").ok) << s.status().last_error;
    server->kill();
    server = std::make_unique<NodeServer>(CRANK_REFERENCE_SERVER, port);
    ASSERT_EQ(server->port(), port);
    const RpcOutcome r = s.request("tools/call", R"({"name":"echo","arguments":{"text":"back"}})");
    ASSERT_TRUE(r.ok) << r.error_message;
    EXPECT_EQ(s.status().reconnects, 1);
}

TEST(HttpConnection, AStreamClosedMidCallIsResumedWithLastEventId) {
    NodeServer server(CRANK_REFERENCE_SERVER, 0);
    ASSERT_FALSE(server.url().empty());
    UpstreamSession s(upstream(httpOptions(server.url(), HttpMode::streamable_http)), nullptr,
                      nullptr);
    const auto start = Clock::now();
    const RpcOutcome r = s.request("tools/call", R"({"name":"test_reconnection","arguments":{}})");
    ASSERT_TRUE(r.ok) << r.error_message;
    EXPECT_EQ(firstText(r.result_json), "Reconnection test completed");
    // The server asked for retry: 1000 before the client reconnects.
    EXPECT_GE(msSince(start), 1'000);
}

TEST(HttpConnection, CloseDeletesTheSessionAndEndsTheConnection) {
    NodeServer server(CRANK_REFERENCE_SERVER, 0);
    ASSERT_FALSE(server.url().empty());
    std::string error;
    auto c = HttpConnection::create(httpOptions(server.url(), HttpMode::automatic), nullptr,
                                    nullptr, error);
    ASSERT_NE(c, nullptr) << error;
    const RpcOutcome init = c->request("initialize", kInitialize, 10s);
    ASSERT_TRUE(init.ok) << init.error_message;
    EXPECT_EQ(c->transportName(), "streamable_http");
    c->setProtocolVersion("2025-11-25");
    ASSERT_TRUE(c->notify("notifications/initialized", ""));
    const std::string session = c->sessionId();
    ASSERT_FALSE(session.empty());
    const auto start = Clock::now();
    c->close();
    c->close();                        // idempotent
    EXPECT_LT(msSince(start), 1'000);  // the standalone GET stream stopped at once
    EXPECT_FALSE(c->open());
    EXPECT_FALSE(c->request("ping", "", 1s).ok);
    EXPECT_FALSE(c->notify("notifications/initialized", ""));
    const testing::Reply after = testing::exchange(server.port(), "POST", "/mcp",
                                                   {{"Mcp-Session-Id", session},
                                                    {"MCP-Protocol-Version", "2025-11-25"},
                                                    {"Accept", testing::kAccept},
                                                    {"Content-Type", "application/json"}},
                                                   R"({"jsonrpc":"2.0","id":9,"method":"ping"})");
    EXPECT_EQ(after.status, 404);
}

// --- legacy HTTP+SSE against the fixture ---------------------------------------------------------

void legacyRoundTrip(HttpMode mode) {
    NodeServer server(CRANK_LEGACY_SSE_SERVER, 0);
    ASSERT_FALSE(server.url().empty());
    Collected seen;
    UpstreamSession s(upstream(httpOptions(server.url(), mode)), seen.onMessage(), seen.onLog());
    std::vector<std::string> tools;
    const RpcOutcome listed = s.listTools(tools);
    ASSERT_TRUE(listed.ok) << listed.error_message;
    EXPECT_EQ(tools.size(), 3U);
    EXPECT_EQ(s.status().transport, "sse");
    EXPECT_EQ(s.status().server_name, "crank-fixture-legacy-sse");
    const RpcOutcome echoed =
        s.request("tools/call", R"({"name":"echo","arguments":{"text":"over sse"}})");
    ASSERT_TRUE(echoed.ok) << echoed.error_message;
    EXPECT_EQ(firstText(echoed.result_json), "over sse");
    // Progress arrives on the one SSE stream: the connection's handler gets it.
    const RpcOutcome slow = s.request(
        "tools/call",
        R"({"name":"slow_progress","arguments":{"steps":2,"delay_ms":10},"_meta":{"progressToken":"t"}})");
    ASSERT_TRUE(slow.ok) << slow.error_message;
    const std::lock_guard lock(seen.mutex);
    int progress = 0;
    for (const std::string& m : seen.messages) {
        progress += contains(m, "notifications/progress") ? 1 : 0;
    }
    EXPECT_EQ(progress, 2);
}

TEST(HttpConnection, LegacySseInitializesListsAndCalls) {
    legacyRoundTrip(HttpMode::sse);
}

TEST(HttpConnection, AutoDetectionFallsBackToLegacySse) {
    legacyRoundTrip(HttpMode::automatic);
}

TEST(HttpConnection, ALegacyStreamThatBreaksEndsTheConnectionAndTheNextRequestReconnects) {
    NodeServer server(CRANK_LEGACY_SSE_SERVER, 0);
    ASSERT_FALSE(server.url().empty());
    UpstreamSession s(upstream(httpOptions(server.url(), HttpMode::sse)), nullptr, nullptr);
    ASSERT_TRUE(s.connect()) << s.status().last_error;
    const auto start = Clock::now();
    const RpcOutcome broken = s.request("tools/call", R"({"name":"close_stream","arguments":{}})");
    EXPECT_FALSE(broken.ok);
    EXPECT_TRUE(contains(broken.error_message, "SSE stream ended")) << broken.error_message;
    EXPECT_LT(msSince(start), 3'000);
    EXPECT_FALSE(s.status().connected);
    const RpcOutcome again = s.request("tools/call", R"({"name":"echo","arguments":{"text":"x"}})");
    ASSERT_TRUE(again.ok) << again.error_message;
    EXPECT_EQ(s.status().reconnects, 1);
}

// --- hostile answers from a raw socket server (raw_server.h) -------------------------------------

using rawhttp::answer;
using rawhttp::RawReply;
using rawhttp::RawRequest;
using rawhttp::RawServer;
using rawhttp::reply;
using rawhttp::sse;

std::unique_ptr<HttpConnection> connectTo(const std::string& url, Collected* seen = nullptr,
                                          HttpOptions options = {}) {
    options.url = url;
    if (options.mode == HttpMode::automatic) {
        options.mode = HttpMode::streamable_http;
    }
    options.connect_timeout = 2s;
    std::string error;
    auto c = HttpConnection::create(options, seen != nullptr ? seen->onMessage() : nullptr,
                                    seen != nullptr ? seen->onLog() : nullptr, error);
    EXPECT_NE(c, nullptr) << error;
    return c;
}

TEST(HttpConnection, HttpsVerifiesTheServersCertificateAndName) {
    // A self-signed certificate for 127.0.0.1, and a Node.js https server answering every POST.
    testing::TempDir dir;
    {
        testing::ChildProcess openssl({"/usr/bin/openssl", "req", "-x509", "-newkey", "ec",
                                       "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                       "-keyout", dir.file("key.pem"), "-out", dir.file("cert.pem"),
                                       "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                                       "subjectAltName=IP:127.0.0.1"});
        ASSERT_EQ(openssl.waitForExit(20s), 0) << openssl.stderrText();
    }
    const std::string script = R"(
        const fs = require('node:fs');
        const server = require('node:https').createServer(
            { key: fs.readFileSync(process.env.KEY), cert: fs.readFileSync(process.env.CERT) },
            (req, res) => {
                let body = '';
                req.on('data', (d) => (body += d));
                req.on('end', () => {
                    const id = JSON.parse(body).id;
                    res.writeHead(200, { 'content-type': 'application/json' });
                    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { tls: true } }));
                });
            });
        server.listen(0, '127.0.0.1', () => console.error('listening on http://127.0.0.1:' + server.address().port));
    )";
    testing::ChildProcess node({CRANK_NODE_PATH, "-e", script},
                               {{"KEY", dir.file("key.pem")}, {"CERT", dir.file("cert.pem")}});
    const auto port = node.waitForListeningPort(20s);
    ASSERT_TRUE(port.has_value()) << node.stderrText();
    const std::string url = "https://127.0.0.1:" + std::to_string(*port) + "/mcp";
    HttpOptions o;
    o.ca_file = dir.file("cert.pem");
    auto trusted = connectTo(url, nullptr, o);
    const RpcOutcome ok = trusted->request("ping", "", 5s);
    ASSERT_TRUE(ok.ok) << ok.error_message;
    EXPECT_EQ(ok.result_json, R"({"tls":true})");
    // The system's CAs do not know the certificate.
    auto untrusted = connectTo(url);
    const RpcOutcome refused = untrusted->request("ping", "", 5s);
    EXPECT_FALSE(refused.ok);
    EXPECT_TRUE(contains(refused.error_message, "TLS handshake with")) << refused.error_message;
    // Another name than the certificate's (localhost: tried on ::1, then 127.0.0.1).
    auto misnamed = connectTo("https://localhost:" + std::to_string(*port) + "/mcp", nullptr, o);
    const RpcOutcome wrongName = misnamed->request("ping", "", 5s);
    EXPECT_FALSE(wrongName.ok);
    EXPECT_TRUE(contains(wrongName.error_message, R"(not for "localhost")"))
        << wrongName.error_message;
    HttpOptions unchecked;
    unchecked.tls_verify = false;
    auto insecure = connectTo(url, nullptr, unchecked);
    EXPECT_TRUE(insecure->request("ping", "", 5s).ok);
    // TLS to a plain HTTP server fails quickly, saying so.
    RawServer plain([](const RawRequest&) { return RawReply{}; },
                    "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    auto mismatch = connectTo("https://127.0.0.1:" + std::to_string(plain.port()) + "/mcp");
    const auto start = Clock::now();
    const RpcOutcome notTls = mismatch->request("ping", "", 5s);
    EXPECT_FALSE(notTls.ok);
    EXPECT_TRUE(contains(notTls.error_message, "TLS")) << notTls.error_message;
    EXPECT_LT(msSince(start), 3'000);
}

TEST(HttpConnectionHostile, SseDataThatIsNotJsonFailsTheRequestSayingWhat) {
    RawServer server([](const RawRequest&) { return sse("data: hello <html>\n\n", true); });
    auto c = connectTo(server.url());
    const auto start = Clock::now();
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "not JSON")) << r.error_message;
    EXPECT_TRUE(contains(r.error_message, "hello <html>")) << r.error_message;
    EXPECT_LT(msSince(start), 2'000);
}

TEST(HttpConnectionHostile, AnswerNestedAMillionDeepFailsTheRequestAndCrankdStaysUp) {
    // RapidJSON's default reader recurses once per '[': this many would overflow the thread's
    // stack. The message is refused as not JSON, saying the bound, before anything recurses.
    RawServer server([](const RawRequest&) {
        return sse("data: " + std::string(1'000'000, '[') + "\n\n", true);
    });
    HttpOptions o;
    o.max_message_bytes = 2 * 1024 * 1024;
    auto c = connectTo(server.url(), nullptr, o);
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "nested deeper than 256 levels")) << r.error_message;
}

TEST(HttpConnectionHostile, AnOversizedEventFailsTheRequestWithTheLimit) {
    RawServer server(
        [](const RawRequest&) { return sse("data: " + std::string(5000, 'x') + "\n\n", true); });
    HttpOptions o;
    o.max_message_bytes = 1024;
    auto c = connectTo(server.url(), nullptr, o);
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "1024")) << r.error_message;
    EXPECT_TRUE(contains(r.error_message, "max_message_bytes")) << r.error_message;
}

TEST(HttpConnectionHostile, AnOversizedJsonBodyFailsTheRequestWithTheLimit) {
    RawServer server([](const RawRequest& q) {
        return answer(q, R"({"pad":")" + std::string(5000, 'x') + R"("})");
    });
    HttpOptions o;
    o.max_message_bytes = 1024;
    auto c = connectTo(server.url(), nullptr, o);
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "larger than max_message_bytes (1024 bytes)"))
        << r.error_message;
}

TEST(HttpConnectionHostile, AWrongContentTypeIsNamed) {
    RawServer server(
        [](const RawRequest&) { return reply(200, "text/html; charset=utf-8", "<html></html>"); });
    auto c = connectTo(server.url());
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "\"text/html\"")) << r.error_message;
}

TEST(HttpConnectionHostile, AnHttpErrorNamesTheStatusAndAnExcerptOfTheBody) {
    RawServer server([](const RawRequest&) {
        return reply(500, "text/plain", "database down\n" + std::string(10'000, 'z'));
    });
    auto c = connectTo(server.url());
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error_code, 0);
    EXPECT_TRUE(contains(r.error_message, "HTTP 500")) << r.error_message;
    EXPECT_TRUE(contains(r.error_message, "database down")) << r.error_message;
    EXPECT_LT(r.error_message.size(), 600U);
}

TEST(HttpConnectionHostile, RedirectsAndRefusedCredentialsSayWhatToDo) {
    RawServer server([](const RawRequest& q) {
        if (q.id() == "1") {
            return reply(307, "text/plain", "", "Location: /v2/mcp?token=secret\r\n");
        }
        return reply(401, "application/json", R"({"error":"invalid_token"})",
                     "WWW-Authenticate: Bearer realm=\"mcp\"\r\n");
    });
    auto c = connectTo(server.url());
    const RpcOutcome moved = c->request("tools/list", "{}", 5s);
    EXPECT_TRUE(contains(moved.error_message, "HTTP 307")) << moved.error_message;
    EXPECT_TRUE(contains(moved.error_message, "/v2/mcp, which is not followed"))
        << moved.error_message;
    EXPECT_FALSE(contains(moved.error_message, "secret")) << moved.error_message;
    const RpcOutcome denied = c->request("tools/list", "{}", 5s);
    EXPECT_TRUE(contains(denied.error_message, "HTTP 401")) << denied.error_message;
    EXPECT_TRUE(contains(denied.error_message, "check the credentials")) << denied.error_message;
    EXPECT_TRUE(contains(denied.error_message, R"(Bearer realm="mcp")")) << denied.error_message;
}

TEST(HttpConnectionHostile, AJsonRpcErrorIsPassedThroughWithCodeMessageAndData) {
    RawServer server([](const RawRequest& q) {
        if (q.id() == "1") {
            return reply(
                200, "application/json",
                R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params","data":{"field":"x"}}})");
        }
        return reply(
            400, "application/json",
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: nope"}})");
    });
    auto c = connectTo(server.url());
    const RpcOutcome r = c->request("tools/call", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error_code, -32602);
    EXPECT_EQ(r.error_message, "bad params");
    EXPECT_EQ(r.error_data_json, R"({"field":"x"})");
    const RpcOutcome http = c->request("tools/call", "{}", 5s);
    EXPECT_EQ(http.error_code, -32000);
    EXPECT_TRUE(contains(http.error_message, "HTTP 400")) << http.error_message;
    EXPECT_TRUE(contains(http.error_message, "Bad Request: nope")) << http.error_message;
}

TEST(HttpConnectionHostile, AStreamThatNeverAnswersIsBoundedByTheTimeoutAndCancelled) {
    RawServer server([](const RawRequest& q) {
        if (q.body.find("notifications/cancelled") != std::string::npos) {
            return RawReply{"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"};
        }
        return sse(": keep-alive\n\nevent: ping\ndata: {}\n\n", true);
    });
    auto c = connectTo(server.url());
    const auto start = Clock::now();
    const RpcOutcome r = c->request("tools/call", "{}", 300ms);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "did not answer within 300 ms")) << r.error_message;
    EXPECT_LT(msSince(start), 1'000);
    ASSERT_TRUE(server.waitForRequests(2, 2s));
    const RawRequest cancelled = server.requests()[1];
    EXPECT_TRUE(contains(cancelled.body, R"("method":"notifications/cancelled")"));
    EXPECT_TRUE(contains(cancelled.body, R"("requestId":1)")) << cancelled.body;
    EXPECT_TRUE(contains(cancelled.body, "timed out")) << cancelled.body;
}

TEST(HttpConnectionHostile, ACancelWhileTheServerSaysNothingIsHonouredPromptly) {
    RawServer server([](const RawRequest& q) {
        if (q.body.find("notifications/cancelled") != std::string::npos) {
            return RawReply{"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"};
        }
        return RawReply{"", true};  // not even a response head
    });
    auto c = connectTo(server.url());
    const auto start = Clock::now();
    RequestHooks hooks;
    hooks.cancelled = [start] { return Clock::now() - start > 200ms; };
    const RpcOutcome r = c->request("tools/call", "{}", 10s, hooks);
    EXPECT_TRUE(r.cancelled) << r.error_message;
    EXPECT_LT(msSince(start), 700);
    ASSERT_TRUE(server.waitForRequests(2, 2s));
    EXPECT_TRUE(contains(server.requests()[1].body, "cancelled by the client"));
}

TEST(HttpConnectionHostile, GarbageLinesChunksAndOtherEventsAroundTheAnswerAreSkipped) {
    RawServer server([](const RawRequest& q) {
        const std::string events =
            "\xEF\xBB\xBF: a comment\r\nnonsense line without colon\r\nfoo: bar\r\n\r\n"
            "event: custom\rdata: {not json but ignored: not a message event}\r\r"
            "id: 7\nretry: abc\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
            "\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n"
            "data: {\"jsonrpc\":\"2.0\",\"id\":" +
            q.id() + ",\n" + "data: \"result\":{\"ok\":true}}\n\n";
        // Chunked, with chunk boundaries inside lines.
        std::string body;
        for (std::size_t i = 0; i < events.size(); i += 7) {
            const std::string part = events.substr(i, 7);
            char size[16];
            std::snprintf(size, sizeof size, "%zx", part.size());
            body += std::string(size) + ";ext=1\r\n" + part + "\r\n";
        }
        body += "0\r\nX-Trailer: y\r\n\r\n";
        return RawReply{
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            "Transfer-Encoding: chunked\r\n\r\n" +
            body};
    });
    Collected seen;
    auto c = connectTo(server.url(), &seen);
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    ASSERT_TRUE(r.ok) << r.error_message;
    EXPECT_EQ(r.result_json, R"({"ok":true})");
    const std::lock_guard lock(seen.mutex);
    ASSERT_EQ(seen.messages.size(), 1U);
    EXPECT_TRUE(contains(seen.messages[0], "notifications/message"));
}

TEST(HttpConnectionHostile, AMalformedChunkedBodyIsAnError) {
    RawServer server([](const RawRequest&) {
        return RawReply{
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            "\r\nzz\r\n{}\r\n0\r\n\r\n"};
    });
    auto c = connectTo(server.url());
    const RpcOutcome r = c->request("tools/list", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "chunk size of the response is not a hexadecimal number"))
        << r.error_message;
}

TEST(HttpConnectionHostile, AnEndpointEventPointingToAnotherHostIsRefused) {
    RawServer server([](const RawRequest&) {
        return sse("event: endpoint\ndata: http://evil.example.com/messages?sessionId=1\n\n", true);
    });
    HttpOptions o;
    o.mode = HttpMode::sse;
    auto c = connectTo(server.url("/sse"), nullptr, o);
    const auto start = Clock::now();
    const RpcOutcome r = c->request("initialize", kInitialize, 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "another origin")) << r.error_message;
    EXPECT_TRUE(contains(r.error_message, "http://evil.example.com")) << r.error_message;
    EXPECT_LT(msSince(start), 2'000);
    EXPECT_FALSE(c->open());
    EXPECT_EQ(server.requests().size(), 1U);  // nothing was POSTed anywhere
}

TEST(HttpConnectionHostile, AutoDetectionThatFindsNeitherTransportSaysBoth) {
    RawServer server([](const RawRequest& q) {
        return q.method == "POST" ? reply(405, "text/plain", "use GET")
                                  : reply(404, "text/plain", "no such stream");
    });
    std::string error;
    auto c = HttpConnection::create(httpOptions(server.url(), HttpMode::automatic), nullptr,
                                    nullptr, error);
    ASSERT_NE(c, nullptr) << error;
    const RpcOutcome r = c->request("initialize", kInitialize, 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "HTTP 405")) << r.error_message;
    EXPECT_TRUE(contains(r.error_message, "legacy")) << r.error_message;
    EXPECT_TRUE(contains(r.error_message, "HTTP 404")) << r.error_message;
    EXPECT_TRUE(contains(r.error_message, "no such stream")) << r.error_message;
}

TEST(HttpConnectionHostile, HeadersSessionStandaloneStreamExpiryAndDelete) {
    RawServer server([](const RawRequest& q) {
        if (q.method == "GET") {
            return reply(405, "text/plain", "");
        }
        if (q.method == "DELETE") {
            return reply(200, "text/plain", "");
        }
        if (q.body.find(R"("method":"initialize")") != std::string::npos) {
            return reply(200, "application/json",
                         R"({"jsonrpc":"2.0","id":)" + q.id() + R"(,"result":{}})",
                         "Mcp-Session-Id: s-123\r\n");
        }
        if (q.id().empty()) {
            return RawReply{"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"};
        }
        if (q.body.find("tools/call") != std::string::npos) {
            return reply(
                404, "application/json",
                R"({"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}})");
        }
        return answer(q);
    });
    HttpOptions o;
    o.headers = {{"Authorization", "Bearer secret-token"}};
    Collected seen;
    auto c = connectTo(server.url(), &seen, o);
    ASSERT_TRUE(c->request("initialize", kInitialize, 5s).ok);
    c->setProtocolVersion("2025-06-18");
    ASSERT_TRUE(c->notify("notifications/initialized", ""));
    ASSERT_TRUE(c->request("tools/list", "{}", 5s).ok);
    ASSERT_TRUE(server.waitForRequests(4, 2s));  // the standalone GET, answered 405
    const RpcOutcome expired = c->request("tools/call", "{}", 5s);
    EXPECT_TRUE(expired.session_expired) << expired.error_message;
    EXPECT_FALSE(c->open());
    c->close();
    const std::vector<RawRequest> requests = server.requests();
    std::map<std::string, std::vector<RawRequest>> byMethod;
    for (const RawRequest& q : requests) {
        byMethod[q.method].push_back(q);
    }
    ASSERT_EQ(byMethod["POST"].size(), 4U);
    const RawRequest& init = byMethod["POST"][0];
    EXPECT_EQ(init.target, "/mcp");
    EXPECT_EQ(init.header("accept"), "application/json, text/event-stream");
    EXPECT_EQ(init.header("content-type"), "application/json");
    EXPECT_EQ(init.header("authorization"), "Bearer secret-token");
    EXPECT_EQ(init.header("mcp-session-id"), "");
    EXPECT_EQ(init.header("mcp-protocol-version"), "");
    for (std::size_t i = 1; i < 4; ++i) {
        const RawRequest& later = byMethod["POST"][i];
        EXPECT_EQ(later.header("mcp-session-id"), "s-123");
        EXPECT_EQ(later.header("mcp-protocol-version"), "2025-06-18");
        EXPECT_EQ(later.header("authorization"), "Bearer secret-token");
    }
    ASSERT_EQ(byMethod["GET"].size(), 1U);
    EXPECT_EQ(byMethod["GET"][0].header("accept"), "text/event-stream");
    EXPECT_EQ(byMethod["GET"][0].header("mcp-session-id"), "s-123");
    // The session had expired: there is nothing to DELETE.
    EXPECT_EQ(byMethod["DELETE"].size(), 0U);
    EXPECT_FALSE(contains(seen.allLogs(), "secret-token"));
}

TEST(HttpConnectionHostile, CloseDeletesTheSessionWithItsId) {
    RawServer server([](const RawRequest& q) {
        if (q.method == "DELETE") {
            return reply(405, "text/plain", "");
        }
        return reply(200, "application/json",
                     R"({"jsonrpc":"2.0","id":)" + q.id() + R"(,"result":{}})",
                     "Mcp-Session-Id: s-9\r\n");
    });
    auto c = connectTo(server.url());
    ASSERT_TRUE(c->request("initialize", kInitialize, 5s).ok);
    c->close();
    c->close();
    const std::vector<RawRequest> requests = server.requests();
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_EQ(requests[1].method, "DELETE");
    EXPECT_EQ(requests[1].header("mcp-session-id"), "s-9");
    EXPECT_EQ(c->endReason(), "the connection was closed");
}

TEST(HttpConnectionHostile, AServerThatIsDownFailsAtOnceWithTheReason) {
    int port = 0;
    {
        RawServer gone([](const RawRequest&) { return RawReply{}; });
        port = gone.port();
    }
    auto c = connectTo("http://127.0.0.1:" + std::to_string(port) + "/mcp");
    const auto start = Clock::now();
    const RpcOutcome r = c->request("ping", "", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "cannot connect")) << r.error_message;
    EXPECT_LT(msSince(start), 1'000);
}

TEST(HttpConnectionHostile, ABrokenPostStreamWithoutAnEventIdFailsSayingSo) {
    RawServer server([](const RawRequest&) {
        return sse("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n");
    });
    auto c = connectTo(server.url());
    const RpcOutcome r = c->request("tools/call", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "no event id to resume")) << r.error_message;
}

TEST(HttpConnectionHostile, ResumingAStreamIsBoundedInAttempts) {
    RawServer server([](const RawRequest& q) {
        if (q.method == "GET") {
            return reply(503, "text/plain", "busy");
        }
        return sse("id: e1\nretry: 20\ndata:\n\n");
    });
    HttpOptions o;
    o.max_reconnect_attempts = 2;
    auto c = connectTo(server.url(), nullptr, o);
    const RpcOutcome r = c->request("tools/call", "{}", 5s);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(contains(r.error_message, "could not be resumed (2 attempts)")) << r.error_message;
    EXPECT_TRUE(contains(r.error_message, "HTTP 503")) << r.error_message;
    const std::vector<RawRequest> requests = server.requests();
    ASSERT_EQ(requests.size(), 3U);
    EXPECT_EQ(requests[1].header("last-event-id"), "e1");
}

TEST(HttpConnectionHostile, BadOptionsAreRefusedByName) {
    std::string error;
    HttpOptions o;
    o.url = "ftp://example.com/";
    EXPECT_EQ(HttpConnection::create(o, nullptr, nullptr, error), nullptr);
    EXPECT_TRUE(contains(error, "must be http or https")) << error;
    o.url = "http://user:pw@example.com/mcp";
    EXPECT_EQ(HttpConnection::create(o, nullptr, nullptr, error), nullptr);
    EXPECT_TRUE(contains(error, "password")) << error;
    o.url = "http://example.com:99999/mcp";
    EXPECT_EQ(HttpConnection::create(o, nullptr, nullptr, error), nullptr);
    EXPECT_TRUE(contains(error, "port")) << error;
    o.url = "http://example.com/mcp";
    o.headers = {{"Mcp-Session-Id", "x"}};
    EXPECT_EQ(HttpConnection::create(o, nullptr, nullptr, error), nullptr);
    EXPECT_TRUE(contains(error, "set by the transport")) << error;
    o.headers = {{"Mcp-Param-Region", "x"}};  // the routing headers are the transport's too
    EXPECT_EQ(HttpConnection::create(o, nullptr, nullptr, error), nullptr);
    EXPECT_TRUE(contains(error, "set by the transport")) << error;
    o.headers = {{"X-Key", "a\r\nInjected: yes"}};
    EXPECT_EQ(HttpConnection::create(o, nullptr, nullptr, error), nullptr);
    EXPECT_TRUE(contains(error, "line break")) << error;
    EXPECT_FALSE(contains(error, "Injected")) << error;
    HttpMode mode = HttpMode::sse;
    EXPECT_TRUE(parseHttpMode("auto", mode));
    EXPECT_EQ(mode, HttpMode::automatic);
    EXPECT_FALSE(parseHttpMode("websocket", mode));
}

}  // namespace
}  // namespace crank::mcpc
