// crankd as a real process: start it on a free loopback port, talk HTTP to it, stop it with
// signals, feed it bad configurations. Every process is stopped by pid (ChildProcess).

#include <signal.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>

#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>
#include <Poco/StreamCopier.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "temp_dir.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::TempDir;
using namespace std::chrono_literals;

constexpr auto kStartTimeout = 20s;
constexpr auto kExitTimeout = 20s;

struct HttpReply {
    int status = 0;
    std::string body;
    std::string contentType;
    std::string allow;
};

HttpReply httpRequest(std::uint16_t port, const std::string& method, const std::string& path) {
    Poco::Net::HTTPClientSession session("127.0.0.1", port);
    session.setTimeout(Poco::Timespan(10, 0));
    Poco::Net::HTTPRequest request(method, path, Poco::Net::HTTPMessage::HTTP_1_1);
    session.sendRequest(request);
    Poco::Net::HTTPResponse response;
    std::istream& in = session.receiveResponse(response);
    HttpReply reply;
    reply.status = response.getStatus();
    reply.contentType = response.getContentType();
    reply.allow = response.get("Allow", "");
    std::ostringstream body;
    Poco::StreamCopier::copyStream(in, body);
    reply.body = body.str();
    return reply;
}

/// A crankd started with a config written to a temporary directory, listening on a free port.
class Crankd {
public:
    explicit Crankd(const std::string& configText, std::vector<std::string> extraArgs = {})
        : config_(dir_.write("crank.json", configText)) {
        std::vector<std::string> argv{CRANKD_PATH, "--config", config_, "--listen", "127.0.0.1:0"};
        argv.insert(argv.end(), extraArgs.begin(), extraArgs.end());
        process_.emplace(argv);
    }

    /// Waits for "listening on http://127.0.0.1:PORT" and returns the port.
    std::uint16_t waitListening() {
        const auto port = process_->waitForListeningPort(kStartTimeout);
        if (!port) {
            ADD_FAILURE() << "crankd did not start listening; stderr:\n" << process_->stderrText();
            return 0;
        }
        return *port;
    }

    ChildProcess& process() { return *process_; }
    const TempDir& dir() const { return dir_; }

private:
    TempDir dir_;
    std::string config_;
    std::optional<ChildProcess> process_;
};

std::string storeConfig(const TempDir& dir, const std::string& extraServer = "") {
    return R"({"server": {)" + extraServer + R"(}, "store": {"path": ")" + dir.path() +
           R"(/crank.db"}})";
}

TEST(CrankdProcess, ServesHealthAndReadinessThenExitsCleanlyOnSigterm) {
    TempDir storeDir;
    Crankd crankd(storeConfig(storeDir));
    const std::uint16_t port = crankd.waitListening();
    ASSERT_NE(port, 0);

    const HttpReply health = httpRequest(port, "GET", "/healthz");
    EXPECT_EQ(health.status, 200);
    EXPECT_EQ(health.contentType, "application/json");
    EXPECT_NE(health.body.find(R"("status":"ok")"), std::string::npos) << health.body;

    const HttpReply ready = httpRequest(port, "GET", "/readyz");
    EXPECT_EQ(ready.status, 200);
    rapidjson::Document doc;
    doc.Parse(ready.body.c_str());
    ASSERT_FALSE(doc.HasParseError()) << ready.body;
    EXPECT_STREQ(doc["status"].GetString(), "ready");
    EXPECT_STREQ(doc["checks"]["store"].GetString(), "ok");

    const HttpReply missing = httpRequest(port, "GET", "/no-such-path");
    EXPECT_EQ(missing.status, 404);
    EXPECT_NE(missing.body.find("no such path: /no-such-path"), std::string::npos);

    const HttpReply wrongMethod = httpRequest(port, "POST", "/healthz");
    EXPECT_EQ(wrongMethod.status, 405);
    EXPECT_EQ(wrongMethod.allow, "GET,HEAD");

    crankd.process().signal(SIGTERM);
    EXPECT_EQ(crankd.process().waitForExit(kExitTimeout), 0);
    const std::string err = crankd.process().stderrText();
    EXPECT_NE(err.find("received SIGTERM"), std::string::npos) << err;
    EXPECT_NE(err.find("stopped"), std::string::npos) << err;
}

TEST(CrankdProcess, ExitsCleanlyOnSigint) {
    TempDir storeDir;
    Crankd crankd(storeConfig(storeDir));
    ASSERT_NE(crankd.waitListening(), 0);
    crankd.process().signal(SIGINT);
    EXPECT_EQ(crankd.process().waitForExit(kExitTimeout), 0);
    EXPECT_NE(crankd.process().stderrText().find("received SIGINT"), std::string::npos);
}

/// Reads one response's status line and headers (and whatever of the body came with them).
std::string readResponseHead(Poco::Net::StreamSocket& socket) {
    std::string data;
    char buffer[1024];
    while (data.find("\r\n\r\n") == std::string::npos) {
        const int n = socket.receiveBytes(buffer, sizeof buffer);
        if (n <= 0) {
            break;
        }
        data.append(buffer, static_cast<std::size_t>(n));
    }
    return data;
}

/// A keep-alive connection to `path` on which a worker thread is reading a second request that is
/// only partly sent: `partialHead` is the beginning of its head. A first complete request proves
/// that a worker owns the connection; the pause lets it start reading the second.
Poco::Net::StreamSocket busyConnection(std::uint16_t port, const std::string& path,
                                       const std::string& partialHead) {
    Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", port));
    socket.setReceiveTimeout(Poco::Timespan(10, 0));
    const std::string first = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    socket.sendBytes(first.data(), static_cast<int>(first.size()));
    EXPECT_NE(readResponseHead(socket).find("200 OK"), std::string::npos);
    const std::string second = "GET " + path + " HTTP/1.1\r\n" + partialHead;
    socket.sendBytes(second.data(), static_cast<int>(second.size()));
    std::this_thread::sleep_for(300ms);
    return socket;
}

TEST(CrankdProcess, DrainLetsAnInFlightRequestFinish) {
    TempDir storeDir;
    Crankd crankd(storeConfig(storeDir, R"("shutdown_grace_ms": 10000)"));
    const std::uint16_t port = crankd.waitListening();
    ASSERT_NE(port, 0);
    Poco::Net::StreamSocket socket = busyConnection(port, "/healthz", "Host: 127.0.0.1\r\n");

    crankd.process().signal(SIGTERM);
    ASSERT_TRUE(crankd.process().waitForStderrLine("draining", kExitTimeout));
    socket.sendBytes("\r\n", 2);  // the request completes during the drain and is answered
    const std::string second = readResponseHead(socket);
    EXPECT_NE(second.find("200 OK"), std::string::npos) << second;
    EXPECT_EQ(crankd.process().waitForExit(kExitTimeout), 0);
}

// The race behind a flaky DrainLetsAnInFlightRequestFinish, made certain: the worker that served
// the first request is still reading the second one's head (keep_alive_wait_us) when the drain
// begins. The head it gives back is a request that has begun, so the gate keeps it and serves it.
TEST(CrankdProcess, DrainKeepsAHeadAWorkerWasStillReading) {
    TempDir storeDir;
    Crankd crankd(
        storeConfig(storeDir, R"("shutdown_grace_ms": 10000, "keep_alive_wait_us": 100000)"));
    const std::uint16_t port = crankd.waitListening();
    ASSERT_NE(port, 0);
    Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", port));
    socket.setReceiveTimeout(Poco::Timespan(10, 0));
    const std::string first = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    socket.sendBytes(first.data(), static_cast<int>(first.size()));
    ASSERT_NE(readResponseHead(socket).find("200 OK"), std::string::npos);
    const std::string second = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    socket.sendBytes(second.data(), static_cast<int>(second.size()));
    std::this_thread::sleep_for(10ms);  // the worker waits up to 100 ms for the head's end

    crankd.process().signal(SIGTERM);
    ASSERT_TRUE(crankd.process().waitForStderrLine("draining", kExitTimeout));
    std::this_thread::sleep_for(300ms);  // the worker's wait is over: the head went to the gate
    socket.sendBytes("\r\n", 2);
    const std::string answer = readResponseHead(socket);
    EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
    EXPECT_EQ(crankd.process().waitForExit(kExitTimeout), 0);
}

TEST(CrankdProcess, GracePeriodCutsOffAStuckClientAndStillExitsZero) {
    TempDir storeDir;
    Crankd crankd(storeConfig(storeDir, R"("shutdown_grace_ms": 300)"));
    const std::uint16_t port = crankd.waitListening();
    ASSERT_NE(port, 0);
    // Never finished.
    Poco::Net::StreamSocket socket =
        busyConnection(port, "/healthz", "Host: 127.0.0.1\r\nX-Slow: ");

    crankd.process().signal(SIGTERM);
    EXPECT_EQ(crankd.process().waitForExit(kExitTimeout), 0);
    EXPECT_NE(crankd.process().stderrText().find("closed 1 connection(s) still in flight"),
              std::string::npos)
        << crankd.process().stderrText();
}

TEST(CrankdProcess, ReadinessSaysDrainingOnceShutdownBegins) {
    TempDir storeDir;
    Crankd crankd(storeConfig(storeDir, R"("shutdown_grace_ms": 5000)"));
    const std::uint16_t port = crankd.waitListening();
    ASSERT_NE(port, 0);
    Poco::Net::StreamSocket socket = busyConnection(port, "/readyz", "Host: 127.0.0.1\r\n");

    crankd.process().signal(SIGTERM);
    ASSERT_TRUE(crankd.process().waitForStderrLine("draining", kExitTimeout));
    socket.sendBytes("\r\n", 2);
    std::string reply = readResponseHead(socket);
    char buffer[512];
    int n = 0;
    while (reply.find("}}") == std::string::npos &&
           (n = socket.receiveBytes(buffer, sizeof buffer)) > 0) {
        reply.append(buffer, static_cast<std::size_t>(n));
    }
    EXPECT_NE(reply.find("503"), std::string::npos) << reply;
    EXPECT_NE(reply.find(R"("status":"draining")"), std::string::npos) << reply;
    EXPECT_EQ(crankd.process().waitForExit(kExitTimeout), 0);
}

TEST(CrankdProcess, BadConfigListsEveryErrorAndDoesNotServe) {
    TempDir dir;
    const std::string config = dir.write("bad.json", R"({
        "server": {"listen": "127.0.0.1:0", "thread": 4},
        "operations": [
            {"name": "a", "description": "d", "protocol": "rest"},
            {"name": "b", "description": "d", "protocol": "rest"},
            {"name": "c", "description": "d", "protocol": "rest", "execution": {"max_items": -5}}
        ]
    })");
    ChildProcess crankd({CRANKD_PATH, "--config", config});
    EXPECT_EQ(crankd.waitForExit(kExitTimeout), 3);
    const std::string err = crankd.stderrText();
    EXPECT_NE(err.find("2 configuration errors"), std::string::npos) << err;
    EXPECT_NE(err.find("server.thread: unknown key (did you mean \"threads\"?)"), std::string::npos)
        << err;
    EXPECT_NE(err.find("operations[2].execution.max_items: expected a positive integer, got -5"),
              std::string::npos)
        << err;
    EXPECT_EQ(err.find("listening"), std::string::npos) << err;
}

TEST(CrankdProcess, CheckValidatesWithoutServing) {
    TempDir dir;
    const std::string good = dir.write("good.json", R"({
        // comments and trailing commas are fine
        "plugins": {"directories": [")" CRANK_TEST_PLUGIN_DIR R"(",],},
        "operations": [{"name": "a", "description": "d", "protocol": "synthetic",},],
    })");
    ChildProcess ok({CRANKD_PATH, "--check", "--config", good});
    EXPECT_EQ(ok.waitForExit(kExitTimeout), 0);
    EXPECT_NE(ok.stdoutText().find("configuration is valid (1 operation"), std::string::npos)
        << ok.stdoutText() << ok.stderrText();

    // --check also checks operations against the plugins that load.
    const std::string unknown = dir.write("unknown.json", R"({
        "plugins": {"directories": [")" CRANK_TEST_PLUGIN_DIR R"("]},
        "operations": [{"name": "a", "description": "d", "protocol": "synthetik"}]})");
    ChildProcess missing({CRANKD_PATH, "--check", "--config", unknown});
    EXPECT_EQ(missing.waitForExit(kExitTimeout), 3);
    EXPECT_NE(
        missing.stderrText().find(
            R"(operations[0].protocol: no loaded plugin provides the protocol "synthetik" (did you mean "synthetic"?))"),
        std::string::npos)
        << missing.stderrText();

    const std::string bad = dir.write("bad.json", R"({"store": {"pool_size": 0}})");
    ChildProcess failing({CRANKD_PATH, "--check", "--config", bad});
    EXPECT_EQ(failing.waitForExit(kExitTimeout), 3);
    EXPECT_NE(failing.stderrText().find("store.pool_size: expected an integer from 1 to 64, got 0"),
              std::string::npos)
        << failing.stderrText();

    // ... and upstreams against their adapter: a typo in an upstream's config is named.
    const std::string typo = dir.write("typo.json", R"({
        "plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]},
        "upstreams": [{"name": "u", "config": {"comand": "node"}},
                      {"name": "v", "protocol": "rest", "config": {}}]})");
    ChildProcess upstreams({CRANKD_PATH, "--check", "--config", typo});
    EXPECT_EQ(upstreams.waitForExit(kExitTimeout), 3);
    EXPECT_NE(upstreams.stderrText().find("upstreams[0].config.comand: unknown member (known: "),
              std::string::npos)
        << upstreams.stderrText();
    EXPECT_NE(upstreams.stderrText().find(
                  R"(upstreams[1].protocol: no loaded adapter "rest" federates upstreams)"),
              std::string::npos)
        << upstreams.stderrText();

    const std::string broken = dir.write("broken.json", "{\n  \"server\": {\n    \"listen\": \n}");
    ChildProcess syntax({CRANKD_PATH, "--check", "--config", broken});
    EXPECT_EQ(syntax.waitForExit(kExitTimeout), 3);
    EXPECT_NE(syntax.stderrText().find(dir.path() + "/broken.json:4:1: invalid JSON"),
              std::string::npos)
        << syntax.stderrText();
}

TEST(CrankdProcess, PluginsCommandListsEveryLibraryWithItsStatus) {
    TempDir dir;
    const std::string good = dir.write("good.json", R"({"plugins": {"directories": [
        ")" CRANK_PLUGIN_DIR R"(", ")" CRANK_TEST_PLUGIN_DIR R"("]}})");
    ChildProcess table({CRANKD_PATH, "plugins", "--config", good});
    EXPECT_EQ(table.waitForExit(kExitTimeout), 0) << table.stderrText();
    const std::string out = table.stdoutText();
    EXPECT_NE(out.find("NAME"), std::string::npos) << out;
    EXPECT_NE(out.find("aggregators"), std::string::npos) << out;
    EXPECT_NE(out.find("synthetic"), std::string::npos) << out;
    EXPECT_NE(out.find("raw_items, summary_only, summary_plus_samples, stats, latest_state"),
              std::string::npos)
        << out;

    ChildProcess json({CRANKD_PATH, "plugins", "--json", "--config", good});
    EXPECT_EQ(json.waitForExit(kExitTimeout), 0);
    EXPECT_NE(json.stdoutText().find(R"("all_loaded":true)"), std::string::npos)
        << json.stdoutText();

    // An enabled library that does not exist: listed as missing, exit status 1.
    const std::string missing = dir.write("missing.json", R"({"plugins": {
        "directories": [")" CRANK_TEST_PLUGIN_DIR R"("], "enabled": ["synthetic", "rest"]}})");
    ChildProcess absent({CRANKD_PATH, "plugins", "--config", missing});
    EXPECT_EQ(absent.waitForExit(kExitTimeout), 1);
    EXPECT_NE(absent.stdoutText().find("missing"), std::string::npos) << absent.stdoutText();
}

TEST(CrankdProcess, ARefusedPluginDoesNotStopCrankdButReadinessSaysSo) {
    TempDir dir;
    Crankd crankd(R"({"store": {"path": ")" + dir.file("crank.db") +
                  R"("}, "plugins": {"directories": [")" CRANK_BROKEN_PLUGIN_DIR
                  R"(/wrong_major", ")" CRANK_TEST_PLUGIN_DIR R"("]}})");
    const std::uint16_t port = crankd.waitListening();
    const HttpReply ready = httpRequest(port, "GET", "/readyz");
    EXPECT_EQ(ready.status, 503) << ready.body;
    EXPECT_NE(ready.body.find("plugins"), std::string::npos) << ready.body;
    EXPECT_EQ(httpRequest(port, "GET", "/healthz").status, 200);
}

TEST(CrankdProcess, SecondInstanceOnABusyPortFailsClearly) {
    TempDir storeDir;
    Crankd first(storeConfig(storeDir));
    const std::uint16_t port = first.waitListening();
    ASSERT_NE(port, 0);

    TempDir otherDir;
    const std::string config = otherDir.write("crank.json", storeConfig(otherDir));
    ChildProcess second(
        {CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:" + std::to_string(port)});
    EXPECT_EQ(second.waitForExit(kExitTimeout), 1);
    EXPECT_NE(second.stderrText().find("cannot listen on 127.0.0.1:" + std::to_string(port) +
                                       ": the address is already in use"),
              std::string::npos)
        << second.stderrText();

    // The first instance is untouched and still the one answering.
    EXPECT_EQ(httpRequest(port, "GET", "/healthz").status, 200);
    first.process().signal(SIGTERM);
    EXPECT_EQ(first.process().waitForExit(kExitTimeout), 0);
}

TEST(CrankdProcess, UnopenableStoreFailsWithThePathInTheMessage) {
    TempDir dir;
    const std::string missing = dir.path() + "/no/such/dir/crank.db";
    const std::string config =
        dir.write("crank.json", R"({"store": {"path": ")" + missing + R"("}})");
    ChildProcess crankd({CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"});
    EXPECT_EQ(crankd.waitForExit(kExitTimeout), 1);
    const std::string err = crankd.stderrText();
    EXPECT_NE(err.find("cannot open the store"), std::string::npos) << err;
    EXPECT_NE(err.find(missing), std::string::npos) << err;
}

TEST(CrankdProcess, RestartReopensTheSameStoreFile) {
    TempDir storeDir;
    for (int run = 0; run < 2; ++run) {
        Crankd crankd(storeConfig(storeDir));
        const std::uint16_t port = crankd.waitListening();
        ASSERT_NE(port, 0) << "run " << run;
        EXPECT_EQ(httpRequest(port, "GET", "/readyz").status, 200) << "run " << run;
        crankd.process().signal(SIGTERM);
        EXPECT_EQ(crankd.process().waitForExit(kExitTimeout), 0) << "run " << run;
    }
}

TEST(CrankdProcess, JsonLogFormatWritesOneObjectPerLine) {
    TempDir storeDir;
    Crankd crankd(storeConfig(storeDir), {"--log-format", "json"});
    ASSERT_NE(crankd.waitListening(), 0);
    crankd.process().signal(SIGTERM);
    ASSERT_EQ(crankd.process().waitForExit(kExitTimeout), 0);
    std::istringstream lines(crankd.process().stderrText());
    std::string line;
    int count = 0;
    while (std::getline(lines, line)) {
        rapidjson::Document doc;
        doc.Parse(line.c_str());
        ASSERT_FALSE(doc.HasParseError()) << line;
        EXPECT_TRUE(doc.HasMember("ts") && doc.HasMember("level") && doc.HasMember("msg")) << line;
        ++count;
    }
    EXPECT_GE(count, 3);
}

TEST(CrankdProcess, CommandLineErrorsAndVersion) {
    ChildProcess version({CRANKD_PATH, "--version"});
    EXPECT_EQ(version.waitForExit(kExitTimeout), 0);
    EXPECT_EQ(version.stdoutText(), std::string("crankd ") + CRANK_VERSION + "\n");

    ChildProcess typo({CRANKD_PATH, "--confg", "x.json"});
    EXPECT_EQ(typo.waitForExit(kExitTimeout), 2);
    EXPECT_NE(typo.stderrText().find("unknown option \"--confg\" (did you mean \"--config\"?)"),
              std::string::npos)
        << typo.stderrText();

    ChildProcess badListen({CRANKD_PATH, "--listen", "example.com:80"});
    EXPECT_EQ(badListen.waitForExit(kExitTimeout), 2);
    EXPECT_NE(badListen.stderrText().find("the host must be an IP address or localhost"),
              std::string::npos);

    ChildProcess missingFile({CRANKD_PATH, "--config", "/nonexistent/crank.json"});
    EXPECT_EQ(missingFile.waitForExit(kExitTimeout), 3);
    EXPECT_NE(missingFile.stderrText().find("/nonexistent/crank.json: cannot open the config file"),
              std::string::npos)
        << missingFile.stderrText();
}

}  // namespace

namespace {

TEST(CrankdProcess, SaturationIsAnswered503WithRetryAfterNeverAHang) {
    TempDir storeDir;
    // Bodies with no minimum rate, so that a request whose body is still coming keeps its worker.
    Crankd crankd(storeConfig(storeDir, R"("threads": 2, "queue": 1, "min_request_body_rate": 0)"));
    const std::uint16_t port = crankd.waitListening();
    ASSERT_NE(port, 0);
    // Two requests whose bodies (larger than what is read before a worker is given) never finish
    // hold both workers; a third waits in the queue.
    constexpr std::size_t kBody = 100'000;
    std::vector<Poco::Net::StreamSocket> holders;
    for (int i = 0; i < 3; ++i) {
        holders.emplace_back(Poco::Net::SocketAddress("127.0.0.1", port));
        const std::string partial =
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: " +
            std::to_string(kBody) + "\r\n\r\n{";
        holders.back().sendBytes(partial.data(), static_cast<int>(partial.size()));
        std::this_thread::sleep_for(200ms);  // let the server take it up before the next one
    }
    Poco::Net::StreamSocket extra(Poco::Net::SocketAddress("127.0.0.1", port));
    extra.setReceiveTimeout(Poco::Timespan(10, 0));
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    extra.sendBytes(request.data(), static_cast<int>(request.size()));
    const std::string refused = readResponseHead(extra);
    EXPECT_NE(refused.find("503 Service Unavailable"), std::string::npos) << refused;
    EXPECT_NE(refused.find("Retry-After: 1"), std::string::npos) << refused;

    // Once the holders finish their bodies, each is answered, and the queued one is served too.
    const std::string rest(kBody - 1, ' ');
    for (auto& s : holders) {
        s.setReceiveTimeout(Poco::Timespan(10, 0));
        s.sendBytes(rest.data(), static_cast<int>(rest.size()));
    }
    for (auto& s : holders) {
        EXPECT_NE(readResponseHead(s).find("HTTP/1.1 400"), std::string::npos);  // "{" + spaces
    }
    EXPECT_EQ(httpRequest(port, "GET", "/healthz").status, 200);
}

}  // namespace
